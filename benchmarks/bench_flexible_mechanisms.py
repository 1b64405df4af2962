"""Build and simulation times of the chapters' flexible mechanisms.

    python benchmarks/bench_flexible_mechanisms.py [--quick]

* flexible four-bar (chapter 5.1): crank at 210 rad/s, one crank revolution, 2 modes per
  link, the example's tolerances (rtol 1e-6, atol 1e-8), 181 output points;
* deployment of two DKT panels (chapter 5.2): 20 s of motion, 4 modes per panel, rtol
  1e-6, atol 1e-9, 401 output points; the accuracy is stated against a run at rtol 1e-9
  (largest difference of the panel-centre deflections).

Times are wall-clock on the machine that runs it (2 shared cores here; +-30 %).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import acausal as ac  # noqa: E402


def bench_fourbar(turns: float = 1.0) -> dict[str, float]:
    import flexible_fourbar as ex

    t0 = time.perf_counter()
    cm = ac.build(ex.build_model())
    t1 = time.perf_counter()
    t_end = turns * 2 * np.pi / ex.OMEGA
    res = ac.simulate(cm, t_end, rtol=ex.RTOL, atol=ex.ATOL, n_points=int(180 * turns) + 1)
    t2 = time.perf_counter()
    steps = sum(s.steps for s in res.stats.segments)
    return {"build": t1 - t0, "simulate": t2 - t1, "steps": steps,
            "segments": len(res.stats.segments)}


def bench_panels(check: bool = True) -> dict[str, float]:
    import flexible_panels as ex

    t0 = time.perf_counter()
    cm = ac.build(ex.build_model())
    t1 = time.perf_counter()
    res = ac.simulate(cm, ex.T_END, rtol=ex.RTOL, atol=ex.ATOL, n_points=ex.N_POINTS)
    t2 = time.perf_counter()
    out = {"build": t1 - t0, "simulate": t2 - t1,
           "steps": sum(s.steps for s in res.stats.segments)}
    if check:
        ref = ac.simulate(ac.build(ex.build_model()), ex.T_END, rtol=1e-9, atol=1e-12,
                          n_points=ex.N_POINTS)
        err = max(np.abs(res[f"{n}.centre.u"][:, 1] - ref[f"{n}.centre.u"][:, 1]).max()
                  for n in ("panel1", "panel2"))
        peak = max(np.abs(ref[f"{n}.centre.u"][:, 1]).max() for n in ("panel1", "panel2"))
        out["error"] = err
        out["peak"] = peak
    return out


def main() -> None:
    quick = "--quick" in sys.argv
    fb = bench_fourbar(0.25 if quick else 1.0)
    print(f"flexible four-bar, {'1/4' if quick else 'one'} revolution at 210 rad/s: build "
          f"{fb['build']:.2f} s, simulate {fb['simulate']:.2f} s ({fb['steps']} IDAS steps, "
          f"{fb['segments']} segments)")
    pn = bench_panels(check=not quick)
    line = (f"panel deployment, 20 s: build {pn['build']:.2f} s, simulate {pn['simulate']:.2f} s"
            f" ({pn['steps']} steps; {20 / pn['simulate']:.1f}x faster than real time)")
    if "error" in pn:
        line += (f"; centre deflections within {1e9 * pn['error']:.1f} nm of an rtol 1e-9 run "
                 f"(peak {1e3 * pn['peak']:.2f} mm)")
    print(line)


if __name__ == "__main__":
    main()
