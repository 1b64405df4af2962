"""The cost model of the automatic choice between dop853 and CVODES Adams (issue 14).

Run: ``python benchmarks/bench_choice.py [--quick]``. Prints

1. the model's constants (:mod:`acausal.solvers.choice`) next to their values measured
   here: seconds per operation of a right-hand side, dop853's set-up and Python step
   loop, CVODES Adams's set-up per operation and colour of the Jacobian it forms, and
   its work per step (all best of 5, in processor time: the machine is shared, and
   processor time is what a quiet machine's wall time would be);
2. for the mass-spring chain (N = 30 ... 1 000) and the released link chain (N = 50):
   the automatic choice with both estimates, and both methods' measured simulate time
   (fresh integrators, best of 3 interleaved) and error of the last body against a
   tight reference, at rtol 1e-6 with 101 output points.
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
sys.path.insert(0, HERE)

from _models import LinkChain, MassSpringChain  # noqa: E402

import acausal as ac  # noqa: E402
from acausal.pointcall import PointCall  # noqa: E402
from acausal.solvers import choice as ch  # noqa: E402
from acausal.solvers.base import IntegratorOptions  # noqa: E402
from acausal.solvers.cvodes import CVODESAdamsIntegrator  # noqa: E402
from acausal.solvers.ode import ode_form  # noqa: E402
from acausal.solvers.rk import DOP853Integrator, _point_call, _Stepper  # noqa: E402


def best(fn, reps: int = 5) -> float:
    """Least processor time of ``reps`` calls (every thread of the process counted)."""
    out = np.inf
    for _ in range(reps):
        tic = time.process_time()
        fn()
        out = min(out, time.process_time() - tic)
    return out


def constants() -> None:
    print("== 1. Constants of the cost model: assumed (choice.py) and measured here ==")
    for label, model in (("mass-spring N=30", MassSpringChain(30)),
                         ("mass-spring N=1000", MassSpringChain(1000)),
                         ("link chain N=50", LinkChain(50))):
        measure(label, ac.build(model))
    print()


def measure(label: str, cm: ac.CompiledModel) -> None:
    grid = np.linspace(0.0, 1.0, 101)
    p = cm.parameter_values()
    form = ode_form(cm.dae, p)
    ops, n = form.f.n_instructions(), form.n
    x0 = np.array([cm.start_values.get(k, 0.0) for k in cm.dae.x_names])
    z0 = np.zeros(0)
    f = PointCall(form.f)
    c_f = best(lambda: [f(x0, 0.0) for _ in range(20)]) / 20
    rk = DOP853Integrator(cm, IntegratorOptions())
    setup_rk = best(lambda: (_Stepper(rk._step_function(form, form.f)),
                             _point_call(rk._dense_function(form, form.f))))
    ad = CVODESAdamsIntegrator(cm, IntegratorOptions())
    setup_ad = best(lambda: (ad._functions.clear(), ad._function(form, grid, False,
                                                                  100_000)), reps=3)
    colours = form.sparsity.uni_coloring().size2()
    # runs with the set-up made: the per-step costs
    rk_run = best(lambda: rk.integrate(cm.dae, p, x0, z0, grid), reps=3)
    ad_run = best(lambda: ad.integrate(cm.dae, p, x0, z0, grid), reps=3)
    seg_rk, seg_ad = rk.integrate(cm.dae, p, x0, z0, grid), ad.integrate(cm.dae, p, x0, z0,
                                                                         grid)
    s_rk, s_ad = seg_rk.stats.steps, seg_ad.stats.steps
    rk_loop = (rk_run - s_rk * (ch._RK_STAGES + ch._RK_DENSE) * c_f) / s_rk
    ad_step = (ad_run - seg_ad.stats.rhs_evaluations * c_f) / s_ad
    print(f"{label} ({n} states, {ops} operations, {colours} colours)")
    print(f"   seconds per operation   {c_f / ops:9.2e}  (assumed "
          f"{ch._SECONDS_PER_OPERATION:.2e}; one call {c_f * 1e6:.1f} us)")
    print(f"   dop853 set-up           {setup_rk * 1e3:9.2f} ms (assumed "
          f"{(ch._RK_SETUP + ch._RK_SETUP_PER_STATE * n) * 1e3:.2f} ms)")
    print(f"   dop853 step loop        {rk_loop * 1e6:9.1f} us (assumed "
          f"{ch._RK_STEP * 1e6:.0f} us; {s_rk} steps)")
    print(f"   adams set-up            {setup_ad * 1e3:9.2f} ms (assumed "
          f"{(ch._AD_SETUP + ch._AD_JACOBIAN * ops * colours) * 1e3:.2f} ms)")
    print(f"   adams step work         {ad_step * 1e6:9.1f} us (assumed "
          f"{(ch._AD_STEP + ch._AD_STEP_PER_STATE * n) * 1e6:.1f} us; {s_ad} steps, "
          f"{s_ad / s_rk:.1f} per dop853 step, "
          f"{seg_ad.stats.rhs_evaluations / s_ad:.2f} evaluations each)")


def choices(sizes: list[int]) -> None:
    print("== 2. The choice against both methods (rtol 1e-6, 101 points, best of 3) ==")
    head = (f"{'model':22s} {'choice':13s} {'est. dop853':>11s} {'est. adams':>11s} "
            f"{'dop853':>9s} {'adams':>9s} {'err dop853':>10s} {'err adams':>10s}")
    print(head)
    print("-" * len(head))
    models = [(f"mass-spring N={N}", MassSpringChain(N), f"masses[{N - 1}].s", 1e-8)
              for N in sizes] + [("link chain N=50", LinkChain(50), "arms[49].frame_b.r",
                                  1e-6)]
    grid = np.linspace(0.0, 1.0, 101)
    for label, model, tip, atol in models:
        cm = ac.build(model)
        p = cm.parameter_values()
        c = ch.analyse(cm, p, grid, 1e-6)
        form = ode_form(cm.dae, p)
        rk, ad = ch.estimate_costs(form, c.rho_resolve * 1.0, 100, 1e-6)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref = ac.simulate(cm, 1.0, n_points=101, rtol=1e-12, atol=1e-12,
                              solver="dop853")[tip]
            times = {s: np.inf for s in ("dop853", "cvodes-adams")}
            err = {}
            for _ in range(3):
                for s in times:
                    cm.run_cache = None
                    tic = time.process_time()
                    res = ac.simulate(cm, 1.0, n_points=101, rtol=1e-6, atol=atol, solver=s)
                    times[s] = min(times[s], time.process_time() - tic)
                    err[s] = float(np.abs(res[tip] - ref).max())
        print(f"{label:22s} {c.solver:13s} {rk * 1e3:9.1f}ms {ad * ch.ACCURACY * 1e3:9.1f}ms "
              f"{times['dop853']:9.4f} {times['cvodes-adams']:9.4f} {err['dop853']:10.1e} "
              f"{err['cvodes-adams']:10.1e}", flush=True)
    print("   (est. adams includes the accuracy factor ACCURACY = "
          f"{ch.ACCURACY:g}; processor seconds; errors against dop853 at rtol 1e-12)")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="N = 30 and 300 only")
    args = ap.parse_args()
    constants()
    choices([30, 300] if args.quick else [30, 100, 300, 1000])


if __name__ == "__main__":
    main()
