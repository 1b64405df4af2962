"""Build and simulation cost of the 3D multibody formulation (branch coordinates).

Run: ``python benchmarks/bench_multibody.py [--quick]``. Prints, for the four-bar of
``tests/mb_models.py`` (one closed loop, crank driven at constant speed) and for planar
chains of N pendulum links (``Revolute`` + ``FixedTranslation`` + ``Body`` per link, a tree:
no loop constraint), N = 10, 50, 200:

* wall time to build (graph, mechanism pass, structure stage, CasADi DAE) and to simulate
  1 s at rtol = atol = 1e-8 (101 output points), with the automatically chosen integrator
  (``solver="auto"``; its name in brackets) and with IDAS;
* the size of the formulation: branch coordinates and independent constraints, against a
  Cartesian formulation of the same model (6 coordinates per body, 6 - dof constraints per
  joint), both from ``cm.mechanism``.

Then, for the chain released horizontal of ``bench_peers.py`` (``_models.LinkChain``) at
N = 50, 200, 1 000: the build time (wall and CPU, the least of three interleaved rounds)
and the cost of one evaluation of the right-hand side ``x' = f(x, p, t)`` (a CasADi call
on numpy arrays, the least of three rounds, and its instruction count), each with the
exponent of a power law fitted over the sizes. (The simulation's cost is the product of
the right-hand side's and of the number of steps, which grows like N for any explicit
method on this chain: its stiffest mode speeds up as the links shorten.)

``--quick`` skips N = 200 (and N = 1 000 in the growth table); ``--growth`` prints the
growth table only. ``benchmarks/bench_peers.py`` compares with other tools.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests"))
sys.path.insert(0, HERE)

from _models import LinkChain  # noqa: E402
from mb_models import FourBar  # noqa: E402

import acausal as ac  # noqa: E402

T_END, RTOL, ATOL, N_POINTS = 1.0, 1e-8, 1e-8, 101


def PendulumChain(N: int, length: float = 1.0, mass: float = 1.0) -> LinkChain:
    """The chain of :class:`_models.LinkChain` hanging straight and released with the
    first link deflected by 0.3 rad, so it swings as a heavy rope. (Released from a
    horizontal shape instead, the chain's free end whips: the step size, not the
    formulation, then dominates the cost.)"""
    return LinkChain(N, length, mass, phi0=-np.pi / 2 + 0.3)


def measure(make):
    t0 = time.perf_counter()
    model = make()
    cm = ac.build(model)
    t_build = time.perf_counter() - t0
    with warnings.catch_warnings():  # 101 points are the benchmark's setting, not a view
        warnings.simplefilter("ignore", ac.UnresolvedWarning)  # of the rope's fast modes
        t0 = time.perf_counter()
        res = ac.simulate(cm, T_END, rtol=RTOL, atol=ATOL, n_points=N_POINTS)
        t_sim = time.perf_counter() - t0
        t0 = time.perf_counter()
        ac.simulate(cm, T_END, rtol=RTOL, atol=ATOL, n_points=N_POINTS, solver="idas")
        t_idas = time.perf_counter() - t0
    return cm, res, t_build, t_sim, t_idas


def _exponent(Ns: list[int], ts: list[float]) -> float:
    """Least-squares exponent ``b`` of ``t = a N^b``."""
    return float(np.polyfit(np.log(Ns), np.log(ts), 1)[0])


def growth(Ns: tuple[int, ...], rounds: int = 3) -> None:
    """Build and right-hand-side cost of the horizontal chain against N (module doc)."""
    import casadi as cs

    build_wall = {N: np.inf for N in Ns}
    build_cpu = {N: np.inf for N in Ns}
    rhs = {N: np.inf for N in Ns}
    instructions = {}
    for _ in range(rounds):  # interleaved: every size once per round
        for N in Ns:
            model = LinkChain(N)
            w0, c0 = time.perf_counter(), time.process_time()
            cm = ac.build(model)
            build_wall[N] = min(build_wall[N], time.perf_counter() - w0)
            build_cpu[N] = min(build_cpu[N], time.process_time() - c0)
            d = cm.dae
            f = cs.Function("rhs", [d.x, d.p, d.t], [d.ode])
            instructions[N] = f.n_instructions()
            x = np.random.default_rng(0).uniform(-1.0, 1.0, int(d.x.numel()))
            calls = max(20, 20000 // N)
            t0 = time.perf_counter()
            for _ in range(calls):
                f(x, d.p_values, 0.0)
            rhs[N] = min(rhs[N], (time.perf_counter() - t0) / calls)
    Nl = list(Ns)
    print(f"== Horizontal chain (_models.LinkChain): build and one right-hand side, the least "
          f"of {rounds} interleaved rounds ==")
    head = (f"{'N':>5s} {'build wall [s]':>15s} {'build CPU [s]':>14s} {'RHS [us]':>9s} "
            f"{'RHS/link [us]':>14s} {'instructions':>13s}")
    print(head)
    print("-" * len(head))
    for N in Ns:
        print(f"{N:5d} {build_wall[N]:15.3f} {build_cpu[N]:14.3f} {rhs[N] * 1e6:9.1f} "
              f"{rhs[N] * 1e6 / N:14.2f} {instructions[N]:13d}")
    if len(Ns) > 1:
        nlogn = _exponent(Nl, [N * np.log(N) for N in Nl])
        print(f"fitted exponent b of t ~ N^b over N = {Ns[0]}..{Ns[-1]}: build wall "
              f"{_exponent(Nl, [build_wall[N] for N in Nl]):.2f}, build CPU "
              f"{_exponent(Nl, [build_cpu[N] for N in Nl]):.2f}, RHS "
              f"{_exponent(Nl, [rhs[N] for N in Nl]):.2f}, RHS instructions "
              f"{_exponent(Nl, [instructions[N] for N in Nl]):.2f} (N log N fits "
              f"{nlogn:.2f} over these sizes)")
    print()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="skip the 200-link chain")
    ap.add_argument("--growth", action="store_true", help="the growth table only")
    args = ap.parse_args()
    if args.growth:
        growth((50, 200) if args.quick else (50, 200, 1000))
        return
    cases = [("four-bar", lambda: FourBar())]
    for N in (10, 50) if args.quick else (10, 50, 200):
        cases.append((f"chain N={N}", lambda N=N: PendulumChain(N)))

    print(f"== 3D multibody: build and simulate {T_END:g} s (rtol={RTOL:g}, "
          f"atol={ATOL:g}, {N_POINTS} output points) ==")
    head = (f"{'model':14s} {'bodies':>6s} {'build [s]':>10s} {'sim auto [s]':>22s} "
            f"{'sim IDAS [s]':>12s} {'equations':>10s} "
            f"{'branch q':>9s} {'constr.':>8s} {'removed':>8s} {'dof':>4s} "
            f"{'Cart. q':>8s} {'Cart. c':>8s} {'states':>7s}")
    print(head)
    print("-" * len(head))
    for name, make in cases:
        cm, res, tb, ts, ti = measure(make)
        r = cm.mechanism
        auto = f"{ts:.2f} ({res.stats.solver})"
        print(f"{name:14s} {r.n_bodies:6d} {tb:10.2f} {auto:>22s} {ti:12.2f} "
              f"{r.dynamics.split()[0]:>10s} {r.n_branch_coordinates:9d} "
              f"{r.n_constraints:8d} {r.n_removed:8d} {r.dof:4d} "
              f"{r.cartesian_coordinates:8d} {r.cartesian_constraints:8d} "
              f"{len(cm.states):7d}", flush=True)
        if res.status != "ok":
            print(f"   ({name}: {res.status}: {res.message})")
    print()
    print("branch q / constr.: coordinates of tree edges and independent loop constraints")
    print("(after removing the redundant ones); Cart. q / Cart. c: 6 coordinates per body")
    print("and 6 - dof constraints per joint, the size of a Cartesian (body coordinate)")
    print("formulation of the same model. dof = branch speeds - constraints (1D drives not")
    print("counted); states: differential states after index reduction. equations: the")
    print("equations of motion, recursive (articulated body) or virtual power.")
    print()
    growth((50, 200) if args.quick else (50, 200, 1000))


if __name__ == "__main__":
    main()
