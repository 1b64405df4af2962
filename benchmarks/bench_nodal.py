"""Speed of the null-space Newmark integrator on the paper's two deployable structures,
against the paper's Tables 1 and 2 and against our own IDAS path on the same models.

Run: ``python benchmarks/bench_nodal.py [--quick]``. For the reflector
(``examples/nodal_reflector.py``) and the ring truss (``examples/nodal_truss.py``):

1. **Fold** at the paper's step dt = 1e-2: wall time of ``ac.simulate(...,
   solver="nullspace")`` from the deployed state to the end of the fold (the stowed
   configuration, measured), warm (the model's CasADi functions built by a first run) --
   the goal is under 1 s.
2. **Paper's step table**: every step of Tables 1 and 2 (1e-4 ... 1e-1 s), with the
   default projection and with the paper's second-order correction (``mode="taylor"``):
   wall time, steps, status (the paper's runs at dt = 0.1 failed) and accuracy.
3. **Against IDAS** on the Lagrange-multiplier DAE of the same components, rtol = atol
   from 1e-4 to 1e-10; the cheapest IDAS run at least as accurate as the null-space run at
   dt = 1e-2.

**Accuracy measure**: the largest error of the monitored node's position (node 1 of the
truss, node 5 of the reflector, as the paper's Figs. 12 and 9) over the output grid up to
``T_MEASURE`` (just before the fold ends: past it the structure is at a singular, stowed
configuration), at every 0.1 s, against a converged reference: Richardson extrapolation of
the null-space runs at dt = 1e-3 and 5e-4 (fourth order), checked against IDAS at
rtol = 1e-10.

The paper's times are CPU seconds on its 2015 machine (its program and ADAMS); ours are
wall seconds on whatever runs this, with BLAS on one thread (set below, before numpy is
imported: the matrices of a step are small, and threads only add overhead).
"""

from __future__ import annotations

import argparse
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "examples"))

import nodal_reflector  # noqa: E402
import nodal_truss  # noqa: E402

import acausal as ac  # noqa: E402

warnings.simplefilter("ignore", ac.RedundantConstraintWarning)
warnings.simplefilter("ignore", ac.SolverWarning)

# the paper's Tables 1 (reflector) and 2 (truss): dt -> (ours [s], ADAMS [s]); None: failed
PAPER = {
    "reflector": {1e-3: (76.14, 252.0), 1e-2: (7.84, 15.0), 2e-2: (3.86, 7.0), 1e-1: (None, 2.0)},
    "truss": {1e-4: (321.50, None), 1e-3: (32.27, 238.0), 1e-2: (3.25, 18.0),
              1e-1: (None, None)},
}
#: the accuracy is measured at multiples of this output step: every step of the tables
#: divides it, so no run is forced to shorter steps by the output grid
OUT_DT = 0.1
CASES = {
    # example, monitored node, end of the accuracy window
    "reflector": (nodal_reflector, "node5", 1.40),
    "truss": (nodal_truss, "node1", 7.50),
}


def _timed(f, repeat: int = 3):
    best, out = np.inf, None
    for _ in range(repeat):
        tic = time.perf_counter()
        out = f()
        best = min(best, time.perf_counter() - tic)
    return best, out


def _error(res: ac.Result, ref: dict[str, np.ndarray], node: str) -> float:
    n = min(len(res.t), len(ref["t"]))
    return max(float(np.max(np.abs(res[f"{node}.{c}"][:n] - ref[c][:n]))) for c in "xyz")


def _fold_end(name: str, res: ac.Result) -> float:
    ex = CASES[name][0]
    return ex.stow_time(res) if name == "reflector" else ex.fold_time(res)


def bench(name: str, quick: bool) -> None:
    ex, node, t_meas = CASES[name]
    print(f"\n=== {name} ===")
    tic = time.perf_counter()
    cm = ac.build(ex.build_model())
    print(f"build: {time.perf_counter() - tic:.2f} s; {cm.domain_pass('pin').report.n_modes} "
          "independent modes")
    grid = np.round(np.arange(0.0, t_meas + 1e-9, OUT_DT), 12)

    def ns(dt: float, mode: str | None = None, t_end: float = t_meas,
           t_eval: np.ndarray | None = grid) -> ac.Result:
        return ac.simulate(cm, t_end, solver="nullspace", dt=dt, mode=mode, t_eval=t_eval,
                           raise_on_failure=False)

    # reference
    r1, r2 = ns(1e-3), ns(5e-4)
    ref = {"t": grid}
    for c in "xyz":
        ref[c] = (4 * r2[f"{node}.{c}"] - r1[f"{node}.{c}"]) / 3
    ida_ref = ac.simulate(cm, t_meas, t_eval=grid, rtol=1e-10, atol=1e-10)
    print(f"reference: Richardson (dt = 1e-3, 5e-4) vs IDAS at 1e-10: "
          f"{_error(ida_ref, ref, node):.1e} m apart")

    # 1. the fold at dt = 1e-2
    ns(1e-2, t_end=0.5, t_eval=None)  # warm: CasADi functions of the model built
    full = ns(1e-2, t_end=ex.T_END, t_eval=None)
    t_fold = _fold_end(name, full)
    wall, res = _timed(lambda: ns(1e-2, t_end=float(np.ceil(t_fold * 100) / 100),
                                  t_eval=None))
    print(f"fold at dt = 1e-2: ends at t = {t_fold:.3f} s; {res.stats.steps} steps in "
          f"{wall:.3f} s wall ({1e3 * wall / res.stats.steps:.2f} ms/step; the paper's "
          f"program: {1e3 * PAPER[name][1e-2][0] / (907 if name == 'reflector' else 889):.1f}"
          " ms/step) -> goal < 1 s: " + ("met" if wall < 1.0 else "NOT met"))

    # 2. the paper's step table
    print(f"\n{'dt [s]':>8} | {'correction':>10} | {'status':>6} | {'steps':>6} | "
          f"{'wall [s]':>8} | {'error [m]':>9} | paper: ours / ADAMS [s]")
    steps = sorted(PAPER[name], reverse=True)
    if quick:
        steps = [s for s in steps if s >= 1e-3]
    for dt in steps + ([2e-2] if 2e-2 not in steps else []):
        for corr in ("projection", "taylor"):
            rep = 1 if dt < 1e-2 else 3
            wall, res = _timed(lambda dt=dt, corr=corr: ns(dt, None if corr == "projection"
                                                           else "taylor"), rep)
            err = _error(res, ref, node) if res.status == "ok" else float("nan")
            paper = PAPER[name].get(dt)
            ptxt = ("-" if paper is None else
                    f"{paper[0] if paper[0] is not None else 'failed'} / "
                    f"{paper[1] if paper[1] is not None else 'failed'}")
            print(f"{dt:8.0e} | {corr:>10} | {res.status:>6} | {res.stats.steps:6d} | "
                  f"{wall:8.3f} | {err:9.1e} | {ptxt if corr == 'projection' else ''}")
            if res.status != "ok":
                print(f"{'':>8}   ({res.message.split(': ', 1)[-1][:110]})")

    # 3. against IDAS
    target = _error(ns(1e-2), ref, node)
    print(f"\nnull space at dt = 1e-2: error {target:.1e} m")
    print(f"{'IDAS rtol':>10} | {'wall [s]':>8} | {'steps':>6} | {'error [m]':>9}")
    best = None
    for rtol in (1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10):
        try:
            wall, res = _timed(lambda rtol=rtol: ac.simulate(cm, t_meas, t_eval=grid,
                                                             rtol=rtol, atol=rtol), 2)
        except ac.SimulationError as exc:
            print(f"{rtol:10.0e} | failed: {str(exc)[:80]}")
            continue
        err = _error(res, ref, node)
        print(f"{rtol:10.0e} | {wall:8.3f} | {res.stats.steps:6d} | {err:9.1e}")
        if best is None and err <= target:
            best = (rtol, wall, err)
    wall_ns, _ = _timed(lambda: ns(1e-2))
    if best is None:
        print(f"no IDAS run reached {target:.1e} m")
    else:
        print(f"same accuracy ({target:.1e} m): null space {wall_ns:.3f} s, IDAS (rtol "
              f"{best[0]:.0e}, error {best[2]:.1e} m) {best[1]:.3f} s -> null space "
              f"{best[1] / wall_ns:.1f}x " + ("faster" if best[1] > wall_ns else "SLOWER"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="skip dt = 1e-4")
    args = parser.parse_args()
    for name in CASES:
        bench(name, args.quick)


if __name__ == "__main__":
    main()
