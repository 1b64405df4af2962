"""Build and simulation scaling of the core pipeline (issues 2 and 3).

Run: ``python benchmarks/bench_core.py [--quick]``. Prints

1. build time (connect -> graph -> flatten -> structure -> CasADi DAE) and simulate time of
   an RC ladder and a mass-spring-damper chain for growing N, with the per-pass split and
   the ratio time(10 N) / time(N);
2. simulation overhead: the framework's chain versus the same minimal ODE written by hand in
   CasADi and integrated by IDAS with the same tolerances and output grid, in one run.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import casadi as cs
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _models import MassSpringChain, RCLadder  # noqa: E402

import acausal as ac  # noqa: E402

T_END, RTOL, ATOL, N_POINTS = 1.0, 1e-6, 1e-8, 101


def build_and_sim(cls, N, simulate=True):
    t0 = time.perf_counter()
    model = cls(N)
    t1 = time.perf_counter()
    cm = ac.build(model)
    t2 = time.perf_counter()
    sim = None
    if simulate:
        ac.simulate(cm, T_END, rtol=RTOL, atol=ATOL, n_points=N_POINTS)
        sim = time.perf_counter() - t2
    return t1 - t0, t2 - t1, sim, cm


def hand_written_chain(N, m=1.0, c=1e3, d=1.0, f=1.0):
    """The same chain as MassSpringChain, as a minimal ODE in CasADi SX, and its IDAS
    integrator (created here: the timing includes it, as simulate() creates its own)."""
    s = cs.SX.sym("s", N)
    v = cs.SX.sym("v", N)
    ext = cs.vertcat(cs.SX(0), s)  # position of the left end of spring k
    extv = cs.vertcat(cs.SX(0), v)
    tension = c * (s - ext[:-1]) + d * (v - extv[:-1])  # spring k between k-1 and k
    nxt = cs.vertcat(tension[1:], cs.SX(0))
    force = cs.vertcat(cs.SX.zeros(N - 1), cs.SX(f))
    acc = (nxt - tension + force) / m
    grid = np.linspace(0.0, T_END, N_POINTS)
    integ = cs.integrator("hand", "idas", {"x": cs.vertcat(s, v), "ode": cs.vertcat(v, acc)},
                          0.0, grid[1:], {"abstol": ATOL, "reltol": RTOL})
    return integ


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="smaller sizes (CI smoke run)")
    args = ap.parse_args()
    sizes = [10, 100, 1000] if args.quick else [10, 100, 1000, 10000]

    print("== Build and simulate time (T_END=1 s, rtol=1e-6, 101 output points) ==")
    print(f"{'model':16s} {'N':>6s} {'construct':>10s} {'build':>8s} {'simulate':>9s}  "
          "passes")
    builds: dict[tuple[str, int], float] = {}
    for cls in (RCLadder, MassSpringChain):
        for N in sizes:
            sim = N <= 1000
            tc, tb, ts, cm = build_and_sim(cls, N, simulate=sim)
            builds[(cls.__name__, N)] = tb
            passes = " ".join(f"{k}={v:.2f}" for k, v in cm.report.timings.items())
            sims = f"{ts:9.2f}" if ts is not None else f"{'-':>9s}"
            print(f"{cls.__name__:16s} {N:6d} {tc:10.2f} {tb:8.2f} {sims}  {passes}")
    print()
    print("build-time ratios time(10 N) / time(N) (linear = 10, target <= 15):")
    for name in ("RCLadder", "MassSpringChain"):
        row = []
        for a, b in zip(sizes[:-1], sizes[1:], strict=True):
            row.append(f"{b}/{a}: {builds[(name, b)] / builds[(name, a)]:.1f}")
        print(f"  {name:16s} " + "  ".join(row))

    print()
    print("== Simulation overhead: framework vs hand-written CasADi ODE, same IDAS settings ==")
    print("  cold: each side creates its IDAS integrator (a fresh compiled model per run);")
    print("  warm: repeated runs (simulate() reuses its cached integrator, the hand-written")
    print("        integrator object is reused). Best of 5 runs each.")
    hand_written_chain(10)(x0=np.zeros(20))  # load the IDAS plugin before timing
    for N in (100, 1000):
        x0 = np.zeros(2 * N)
        reps = 5
        cold_fw, cold_hand, warm_fw, warm_hand, t_out = [], [], [], [], []
        for _ in range(reps):
            t0 = time.perf_counter()
            integ = hand_written_chain(N)
            out = integ(x0=x0)
            cold_hand.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            integ(x0=x0)
            warm_hand.append(time.perf_counter() - t0)
            cm = ac.build(MassSpringChain(N))
            t0 = time.perf_counter()
            res = ac.simulate(cm, T_END, rtol=RTOL, atol=ATOL, n_points=N_POINTS)
            cold_fw.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            res = ac.simulate(cm, T_END, rtol=RTOL, atol=ATOL, n_points=N_POINTS)
            warm_fw.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            s_fw = res[f"masses[{N - 1}].s"][-1]  # first access evaluates every output
            t_out.append(time.perf_counter() - t0)
        s_hand = np.asarray(out["xf"])[N - 1, -1]
        print(f"  N={N:5d}: cold {min(cold_fw):.3f} s vs {min(cold_hand):.3f} s, ratio "
              f"{min(cold_fw) / min(cold_hand):.2f}; warm {min(warm_fw):.3f} s vs "
              f"{min(warm_hand):.3f} s, ratio {min(warm_fw) / min(warm_hand):.2f} "
              f"(target <= 1.5 at N=1000)")
        print(f"           then evaluating all {len(res.names())} named outputs: "
              f"{min(t_out):.3f} s; |s_N difference| = {abs(s_fw - s_hand):.1e} m")


if __name__ == "__main__":
    main()
