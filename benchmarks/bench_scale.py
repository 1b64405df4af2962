"""Build, simulate and output scaling of the mass-spring-damper chain (issue 14).

Run: ``python benchmarks/bench_scale.py [--quick] [--sizes 1000 10000 100000] [--cold]
[--long]`` (``--cold``: section 4 only; ``--long``: section 5 only).

Each size runs in a fresh process (so that the peak memory is that size's own) and prints

1. the time and memory of making the model (its components), the build time with the
   per-pass split (``cm.report.timings``) and the peak resident memory of the process
   after the build (the model included); up to N = 10 000 the build is the best of three
   fresh processes (all three printed), with the processor time of that build (on a
   busy shared machine the wall time stretches more; the load average is printed first);
2. the simulation time against the hand-written CasADi + IDAS floor (the same ODE written
   by hand, same tolerances and output grid; each side creates its own integrator, best of
   3), and the ratio (goal <= 1.2 at N = 1 000 and 10 000);
3. the time of reading every named output once (goal: < 0.1 s at N = 1 000, < 1 s at
   N = 10 000; best of 3 results, and the first read after the build, which also makes
   the model's function of all outputs, :mod:`acausal.grid_outputs`) and again;
4. the cold import time of ``acausal`` and a cold RC script (fresh interpreter: import,
   build, simulate) against the same RC written by hand in CasADi (goal <= 1.5x). The
   interpreters read and write the bytecode cache (``PYTHONDONTWRITEBYTECODE`` removed),
   as an installed package does, and one unmeasured run of each fills it first.

5. (``--long``) part of a long result read, 1 000 masses on 20 001 points, the first
   120, 2 000 and all names in alphabetical order, each in a fresh process: the time of the
   reads, the peak memory before and after them, and the blocks of outputs they formed
   (:class:`acausal.results.Result`: what a result holds is the names read and the blocks
   their reads paid for, the whole table of 3.7 GB only when everything is read).

Goals of issue 14: build at N = 10 000 < 2 s, at N = 100 000 < 20 s and < 2 GB; outputs
cost nothing, memory proportional to what is read.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
T_END, RTOL, ATOL, N_POINTS = 1.0, 1e-6, 1e-8, 101


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _rss_mb() -> float:
    """The resident memory of the process now (Linux; NaN elsewhere)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError):
        return float("nan")


def one_size(N: int, simulate: bool, solver: str = "auto") -> dict:
    """Everything measured at one size, in this process."""
    sys.path.insert(0, ROOT)
    sys.path.insert(0, HERE)
    import casadi as cs
    import numpy as np
    from _models import MassSpringChain

    import acausal as ac

    out: dict = {"N": N}
    MassSpringChain(10)  # (the classes' one-off work: declarations, checks)
    rss0 = _rss_mb()
    t0 = time.perf_counter()
    model = MassSpringChain(N)
    t1 = time.perf_counter()
    out["model_mb"] = _rss_mb() - rss0
    c1 = time.process_time()
    cm = ac.build(model)
    t2, c2 = time.perf_counter(), time.process_time()
    out.update(construct=t1 - t0, build=t2 - t1, build_cpu=c2 - c1,
               passes=dict(cm.report.timings), peak_build_mb=_peak_mb())
    if not simulate:
        return out

    def floor() -> float:
        s, v = cs.SX.sym("s", N), cs.SX.sym("v", N)
        ext, extv = cs.vertcat(cs.SX(0), s), cs.vertcat(cs.SX(0), v)
        tension = 1e3 * (s - ext[:-1]) + 1.0 * (v - extv[:-1])
        nxt = cs.vertcat(tension[1:], cs.SX(0))
        force = cs.vertcat(cs.SX.zeros(N - 1), cs.SX(1.0))
        grid = np.linspace(0.0, T_END, N_POINTS)
        tic = time.perf_counter()
        integ = cs.integrator("floor", "idas", {"x": cs.vertcat(s, v),
                                                 "ode": cs.vertcat(v, nxt - tension + force)},
                              0.0, grid[1:], {"abstol": ATOL, "reltol": RTOL})
        integ(x0=np.zeros(2 * N))
        return time.perf_counter() - tic

    floor()  # load the plugin
    sims, floors, outs, again = [], [], [], []
    for _ in range(3):
        cm.run_cache = None  # each run creates its integrator, as the floor does
        tic = time.perf_counter()
        res = ac.simulate(cm, T_END, rtol=RTOL, atol=ATOL, n_points=N_POINTS, solver=solver)
        sims.append(time.perf_counter() - tic)
        floors.append(floor())
        names = res.names()
        tic = time.perf_counter()
        for name in names:
            res[name]
        outs.append(time.perf_counter() - tic)
        tic = time.perf_counter()
        for name in names:
            res[name]
        again.append(time.perf_counter() - tic)
    # (the first read after the build also makes the model's function of all outputs, once
    # per model: outputs_first; a later result's first read reuses it: outputs, best of 3)
    out.update(simulate=min(sims), floor=min(floors), outputs=min(outs), outputs_first=outs[0],
               outputs_again=min(again), n_outputs=len(names), solver=res.stats.solver,
               peak_mb=_peak_mb())
    return out


def _cold_env() -> dict[str, str]:
    """The environment of the fresh interpreters (run in this checkout's root, which
    ``python -c`` puts first on the path): this checkout on the path, and the bytecode cache
    in use (without it every run compiles acausal's sources, ~0.3 s)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = ROOT
    return env


def cold_import() -> float:
    code = "import time; t = time.perf_counter(); import acausal; print(time.perf_counter() - t)"
    best = float("inf")
    for k in range(4):
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True, env=_cold_env(), cwd=ROOT)
        if k:  # the first run fills the bytecode cache
            best = min(best, float(r.stdout.strip().splitlines()[-1]))
    return best


RC_ACAUSAL = """
import acausal as ac
from components import electrical as el
class RC(ac.Model):
    def __init__(self):
        super().__init__()
        self.source = el.ConstantVoltage(V=10.0)
        self.resistor = el.Resistor(R=1e3)
        self.capacitor = el.Capacitor(C=1e-3, v=0.0)
        self.ground = el.Ground()
        self.connect(self.source.p, self.resistor.p)
        self.connect(self.resistor.n, self.capacitor.p)
        self.connect(self.capacitor.n, self.source.n, self.ground.p)
res = ac.simulate(RC(), 5.0, n_points=101)
print(res["capacitor.v"][-1])
"""
RC_CASADI = """
import casadi as cs
import numpy as np
v = cs.SX.sym("v")
f = cs.integrator("rc", "idas", {"x": v, "ode": (10.0 - v) / (1e3 * 1e-3)}, 0.0,
                  np.linspace(0.0, 5.0, 101)[1:], {"abstol": 1e-8, "reltol": 1e-6})
print(float(f(x0=0.0)["xf"][-1]))
"""


def cold_scripts(reps: int = 5) -> tuple[float, float]:
    """Best wall time of a fresh interpreter running the RC script: acausal, hand-written
    CasADi (interleaved)."""
    best = [float("inf"), float("inf")]
    env = _cold_env()
    for rep in range(reps + 1):
        for k, code in enumerate((RC_ACAUSAL, RC_CASADI)):
            tic = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], capture_output=True, check=True,
                           env=env, cwd=ROOT)
            if rep:  # the first round fills the bytecode cache
                best[k] = min(best[k], time.perf_counter() - tic)
    return best[0], best[1]


LONG_N, LONG_POINTS, LONG_READS = 1000, 20001, (120, 2000, None)


def long_reads(N: int, points: int, count: int | None) -> dict:
    """Section 5 in this process: the first ``count`` names (all: None) of a result of
    ``N`` masses on ``points`` points read once."""
    sys.path.insert(0, ROOT)
    sys.path.insert(0, HERE)
    import numpy as np
    from _models import MassSpringChain

    import acausal as ac

    cm = ac.build(MassSpringChain(N))
    res = ac.simulate(cm, T_END, rtol=RTOL, atol=ATOL, n_points=points)
    names = res.names()[:count]
    before = _peak_mb()
    tic = time.perf_counter()
    for name in names:
        res[name]
    took = time.perf_counter() - tic
    table = isinstance(res._data_or_fn, np.ndarray)
    return {"names": len(names), "seconds": took, "peak_before_mb": before,
            "peak_mb": _peak_mb(), "blocks": len(res._blocks or {}), "table": table,
            "per_block": res._names_per_block(), "columns": int(res._offsets[-1])}


def _long() -> None:
    print(f"== Part of a long result: {LONG_N} masses on {LONG_POINTS} points, names read in "
          "alphabetical order (a fresh process each) ==")
    for count in LONG_READS:
        r = subprocess.run([sys.executable, __file__, "--long-one", str(count or 0)],
                           capture_output=True, text=True, env=_cold_env())
        if r.returncode != 0:
            print(f"{count}: failed\n{r.stderr[-2000:]}")
            continue
        d = json.loads(r.stdout.strip().splitlines()[-1])
        held = "the whole table" if d["table"] else f"{d['blocks']} blocks"
        print(f"   {d['names']:6d} names: {d['seconds']:.2f} s, peak {d['peak_before_mb']:.0f} -> "
              f"{d['peak_mb']:.0f} MB, holding {held} of {d['per_block']} names "
              f"({d['columns']} columns in all)")


def _fresh(N: int, simulate_up_to: int, solver: str) -> dict | None:
    """:func:`one_size` in a fresh interpreter (None, with its error printed, if it
    fails)."""
    r = subprocess.run([sys.executable, __file__, "--one", str(N), "--simulate-up-to",
                        str(simulate_up_to), "--solver", solver],
                       capture_output=True, text=True, env=_cold_env())
    if r.returncode != 0:
        print(f"N={N}: failed\n{r.stderr[-2000:]}")
        return None
    return json.loads(r.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="N = 1 000 and 10 000 only")
    ap.add_argument("--sizes", type=int, nargs="*", default=None)
    ap.add_argument("--simulate-up-to", type=int, default=10000,
                    help="largest N that is simulated (larger ones are built only)")
    ap.add_argument("--solver", default="auto", help="simulate(..., solver=) (default auto)")
    ap.add_argument("--cold", action="store_true",
                    help="only the cold import and the cold RC script (section 4)")
    ap.add_argument("--long", action="store_true",
                    help="only part of a long result read (section 5)")
    ap.add_argument("--one", type=int, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--long-one", type=int, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one is not None:
        print(json.dumps(one_size(args.one, args.one <= args.simulate_up_to, args.solver)))
        return
    if args.long_one is not None:
        print(json.dumps(long_reads(LONG_N, LONG_POINTS, args.long_one or None)))
        return
    if args.long:
        _long()
        return
    sizes = args.sizes or ([1000, 10000] if args.quick else [1000, 10000, 100000])
    # (how busy the shared machine was: a loaded minute stretches every wall time, and the
    # processor time of a build less so)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"== machine: {os.cpu_count()} cores, load average {load:.2f} over the last minute")
    print(f"== cold `import acausal`: {cold_import():.3f} s")
    ours, floor = cold_scripts()
    print(f"== cold RC script (import, build, simulate): {ours:.3f} s vs the same in CasADi "
          f"{floor:.3f} s: ratio {ours / floor:.2f} (goal <= 1.5)")
    if args.cold:
        return
    print("== Mass-spring-damper chain (benchmarks/_models.py): build, simulate, outputs ==")
    rows = []
    for N in sizes:
        d = _fresh(N, args.simulate_up_to, args.solver)
        if d is None:
            continue
        # (the build of a fresh process, up to 10 000 also in two more that only build: the
        # best of the three, as the simulation's best of 3, and all of them, as this
        # shared machine's load makes one run 1.3 times another)
        builds, cpus = [d["build"]], [d["build_cpu"]]
        for _ in range(2 if N <= 10000 else 0):
            more = _fresh(N, 0, args.solver)
            if more is not None:
                builds.append(more["build"])
                cpus.append(more["build_cpu"])
        best = builds.index(min(builds))
        d["build"], d["build_cpu"] = builds[best], cpus[best]
        rows.append(d)
        passes = " ".join(f"{k}={v:.2f}" for k, v in d["passes"].items())
        runs = f" (fresh processes: {', '.join(f'{b:.2f}' for b in builds)})" \
            if len(builds) > 1 else ""
        print(f"N={N:7d}  construct {d['construct']:.2f} s ({d['model_mb']:.0f} MB)  "
              f"build {d['build']:.2f} s{runs}, processor {d['build_cpu']:.2f} s  peak after "
              f"build {d['peak_build_mb']:.0f} MB")
        print(f"           passes (the first process): {passes}")
        if "simulate" in d:
            print(f"           simulate ({d['solver']}) {d['simulate']:.3f} s vs hand-written "
                  f"CasADi+IDAS {d['floor']:.3f} s: ratio {d['simulate'] / d['floor']:.2f} "
                  "(goal <= 1.2)")
            print(f"           all {d['n_outputs']} outputs: first read "
                  f"{d['outputs']:.3f} s ({d.get('outputs_first', float('nan')):.3f} s the "
                  f"first time after the build), again {d['outputs_again']:.3f} s; "
                  f"peak {d['peak_mb']:.0f} MB")
    if len(rows) > 1:
        print("build-time ratios time(b)/time(a) (linear = b/a):")
        for a, b in zip(rows[:-1], rows[1:], strict=True):
            print(f"   {b['N']}/{a['N']}: {b['build'] / a['build']:.1f}")


if __name__ == "__main__":
    main()
