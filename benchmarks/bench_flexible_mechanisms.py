"""Build and simulation times of the chapters' flexible mechanisms.

    python benchmarks/bench_flexible_mechanisms.py [--quick] [--repeat N]

* flexible four-bar (chapter 5.1): crank at 210 rad/s, one crank revolution, 2 modes per
  link, the example's tolerances (rtol 1e-6, atol 1e-8), 181 output points;
* deployment of two DKT panels (chapter 5.2): 20 s of motion, 4 modes per panel, the
  example's settings (rtol 1e-6, atol 1e-9, 401 output points).

The accuracy of each is stated against a run of the same model at rtol 1e-9 (largest
difference of the link mid-point / panel-centre deflections, relative to their peak).
Times are wall-clock on the machine that runs it (2 cores shared with other jobs here):
each model is built and simulated ``--repeat`` times (default 3) and the minimum is shown.
"""

from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import acausal as ac  # noqa: E402


def _timed(build, sim, repeat: int) -> tuple[float, float, ac.Result]:
    """Best build and simulate times of ``repeat`` fresh builds, and the last result."""
    tb, ts = [], []
    res = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        cm = build()
        t1 = time.perf_counter()
        res = sim(cm)
        ts.append(time.perf_counter() - t1)
        tb.append(t1 - t0)
    assert res is not None
    return min(tb), min(ts), res


def _error(res: ac.Result, ref: ac.Result, names: tuple[str, ...]) -> tuple[float, float]:
    err = max(np.abs(res[f"{n}.centre.u"][:, 1] - ref[f"{n}.centre.u"][:, 1]).max()
              for n in names)
    peak = max(np.abs(ref[f"{n}.centre.u"][:, 1]).max() for n in names)
    return err, peak


def bench_fourbar(turns: float = 1.0, repeat: int = 3, check: bool = True) -> dict[str, float]:
    import flexible_fourbar as ex

    t_end = turns * 2 * np.pi / ex.OMEGA
    n = int(180 * turns) + 1

    def build():
        with warnings.catch_warnings():  # the planar loop in 3D: 3 redundant equations of
            # the cut joint, removed and listed in the mechanism report (cm.mechanism)
            warnings.simplefilter("ignore", ac.RedundantConstraintWarning)
            return ac.build(ex.build_model())

    tb, ts, res = _timed(build, lambda cm: ac.simulate(cm, t_end, rtol=ex.RTOL, atol=ex.ATOL,
                                                       n_points=n), repeat)
    out = {"build": tb, "simulate": ts, "steps": sum(s.steps for s in res.stats.segments),
           "segments": len(res.stats.segments)}
    if check:
        ref = ac.simulate(build(), t_end, rtol=1e-9, atol=1e-11, n_points=n)
        out["error"], out["peak"] = _error(res, ref, ("coupler", "rocker"))
    return out


def bench_panels(check: bool = True, repeat: int = 3) -> dict[str, float]:
    import flexible_panels as ex

    def build():
        return ac.build(ex.build_model())

    tb, ts, res = _timed(build, lambda cm: ac.simulate(
        cm, ex.T_END, rtol=ex.RTOL, atol=ex.ATOL, n_points=ex.N_POINTS), repeat)
    out = {"build": tb, "simulate": ts, "steps": sum(s.steps for s in res.stats.segments)}
    if check:
        # at rtol 1e-9 IDAS fails the error test of the algebraic variables at t = 0 and
        # falls back (with a warning) to the states-only test: asked for directly here (this
        # reference is within 0.13 nm of an rtol 1e-10 run)
        ref = ac.simulate(build(), ex.T_END, rtol=1e-9, atol=1e-12, n_points=ex.N_POINTS,
                          mode="states_error_only")
        out["error"], out["peak"] = _error(res, ref, ("panel1", "panel2"))
    return out


def main() -> None:
    quick = "--quick" in sys.argv
    repeat = int(sys.argv[sys.argv.index("--repeat") + 1]) if "--repeat" in sys.argv else 3
    fb = bench_fourbar(0.25 if quick else 1.0, 1 if quick else repeat, check=not quick)
    line = (f"flexible four-bar, {'1/4' if quick else 'one'} revolution at 210 rad/s: build "
            f"{fb['build']:.2f} s, simulate {fb['simulate']:.2f} s ({fb['steps']} IDAS "
            f"steps, {fb['segments']} integrator calls)")
    if "error" in fb:
        line += (f"; mid-point deflections within {1e9 * fb['error']:.0f} nm of an rtol 1e-9 "
                 f"run ({fb['error'] / fb['peak']:.1e} of the {1e3 * fb['peak']:.2f} mm peak)")
    print(line)
    pn = bench_panels(check=not quick, repeat=1 if quick else repeat)
    line = (f"panel deployment, 20 s: build {pn['build']:.2f} s, simulate {pn['simulate']:.2f} s"
            f" ({pn['steps']} steps; {20 / pn['simulate']:.0f}x faster than real time)")
    if "error" in pn:
        line += (f"; centre deflections within {1e9 * pn['error']:.0f} nm of an rtol 1e-9 run "
                 f"({pn['error'] / pn['peak']:.1e} of the {1e3 * pn['peak']:.2f} mm peak)")
    print(line)


if __name__ == "__main__":
    main()
