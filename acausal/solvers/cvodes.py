"""SUNDIALS CVODES through ``casadi.integrator`` for models that are explicit ODEs.

Three variants, one class each (the name is the ``simulate(..., solver=...)`` value):

``cvodes-adams``
    Adams-Moulton, orders 1-12, functional (fixed-point) iteration: no Jacobian, no
    linear algebra; one or two right-hand side evaluations per step. For non-stiff ODEs.
``cvodes-bdf``
    BDF, orders 1-5, Newton iteration with a direct linear solver (dense LAPACK LU for a
    dense Jacobian, sparse LU otherwise; the Jacobian by automatic differentiation). For
    stiff ODEs of moderate size.
``cvodes-krylov``
    BDF with Newton-GMRES: the Jacobian is never formed, only its products with vectors
    (forward-mode automatic differentiation). For large stiff ODEs whose Jacobian is
    dense or expensive.

The ODE comes from :mod:`acausal.solvers.ode` (algebraic variables eliminated where they
are a small linear block). As for IDAS, one integrator is built per grid, tolerances and
parameter values and kept; a time-normalised one serves :meth:`advance`. The call runs
interruptibly with its printing captured; a failure returns the output points computed
before it.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

import casadi as cs
import numpy as np

from ..dae import SemiExplicitDAE
from ..errors import AcausalError
from .base import (
    IntegrationFailure,
    Integrator,
    IntegratorOptions,
    NativeCallFailed,
    Segment,
    SegmentStats,
    call_native,
    grown_states,
    in_parts,
    rephrase_solver_output,
)
from .ode import NotAnODE, ODEForm, ode_form

__all__ = ["CVODESIntegrator", "CVODESAdamsIntegrator", "CVODESBDFIntegrator",
           "CVODESKrylovIntegrator"]

_AT_T = r"At t = ([-+0-9.eE]+)"  # (compiled when first used, by re's cache)
_DENSE_FRACTION = 0.1
_DENSE_MAX = 3000


class CVODESIntegrator(Integrator):
    """CVODES on the model's explicit ODE (the subclasses fix the method)."""

    method: ClassVar[dict[str, Any]] = {}

    def __init__(self, cm: Any, options: IntegratorOptions) -> None:
        super().__init__(cm, options)
        if options.mode is not None:
            raise AcausalError(f"the {self.name} solver has no modes (got {options.mode!r})")
        self._forms: dict[tuple[int, bytes], ODEForm] = {}
        self._functions: dict[tuple, cs.Function] = {}

    def _form(self, dae: SemiExplicitDAE, p: np.ndarray) -> ODEForm:
        key = (id(dae), p.tobytes())
        form = self._forms.get(key)
        if form is None:
            try:
                form = self._forms[key] = ode_form(dae, p)
            except NotAnODE as exc:
                raise AcausalError(f"the {self.name} solver needs an explicit ODE: {exc}; "
                                   "use solver='idas'") from None
        return form

    def _method_options(self, form: ODEForm) -> dict[str, Any]:
        return dict(self.method)

    def _function(self, form: ODEForm, rel: np.ndarray, normalized: bool,
                  max_num_steps: int) -> cs.Function:
        o = self.options
        key = (id(form), tuple(np.round(rel, 12)), normalized, max_num_steps)
        f = self._functions.get(key)
        if f is not None:
            return f
        toff, tau, span = cs.SX.sym("t_start"), cs.SX.sym("tau"), cs.SX.sym("span")
        x = form.x
        rhs = form.rhs
        n = form.n
        if n == 0:  # CVODES needs a state: a dummy one that stays zero
            x, rhs = cs.SX.sym("_dummy_state"), cs.SX(0)
        t_of_tau = toff + span * tau if normalized else toff + tau
        if form.timed:
            rhs = cs.substitute(rhs, form.t, t_of_tau)
        if normalized:
            rhs = span * rhs
        p = cs.vertcat(toff, span) if normalized else toff
        opts: dict[str, Any] = {"abstol": o.atol, "reltol": o.rtol,
                                "max_num_steps": max_num_steps, "verbose": False}
        if o.max_step is not None:
            opts["max_step_size"] = o.max_step / (1.0 if not normalized else 1.0)
        opts.update(self._method_options(form))
        f = self._functions[key] = cs.integrator(
            self.name.replace("-", "_"), "cvodes", {"x": x, "p": p, "t": tau, "ode": rhs},
            0.0, [float(g) for g in rel[1:]], opts)
        return f

    def _call(self, f: cs.Function, args: dict[str, Any]) -> tuple[Any, str]:
        return call_native(f, args)

    def _segment(self, form: ODEForm, f: cs.Function, r: Any, t: np.ndarray) -> Segment:
        X = np.asarray(r["xf"]) if form.n else np.zeros((0, len(t)))
        Z = np.asarray(form.z(X, t.reshape(1, -1))) if form.z.size1_out(0) \
            else np.zeros((0, len(t)))
        s = r["_stats"]
        stats = SegmentStats(steps=int(s.get("nsteps", 0)),
                             rhs_evaluations=int(s.get("nfevals", 0)),
                             jacobian_evaluations=int(s.get("nlinsetups", 0)),
                             error_test_failures=int(s.get("netfails", 0)),
                             newton_failures=int(s.get("nncfails", 0)), mode=self.name)
        return Segment(t, X, Z, stats)

    def integrate(self, dae: SemiExplicitDAE, p: np.ndarray, x0: np.ndarray, z0: np.ndarray,
                  grid: np.ndarray, allow_fallback: bool = True) -> Segment:
        parts = in_parts(self, dae, p, x0, z0, grid,
                         lambda x, z, g: self.integrate(dae, p, x, z, g, allow_fallback))
        if parts is not None:
            return parts
        form = self._form(dae, p)
        rel = grid - grid[0]
        f = self._function(form, rel, False, self.options.max_num_steps)
        try:
            r, _ = self._call(f, dict(x0=x0 if form.n else 0.0, p=[grid[0]]))
        except NativeCallFailed as fl:
            times = re.findall(_AT_T, fl.output)
            t_fail = float(grid[0]) + float(times[-1]) if times else float(grid[0])
            partial = self._partial(form, grid, x0, t_fail)
            said = rephrase_solver_output(fl.output, float(grid[0]), 1.0,
                                          self.options.max_num_steps)
            reason = _reason(fl, said)
            last = np.asarray(partial.x)[:, -1] if len(partial.t) else None
            grown = grown_states(dae.x_names, np.asarray(x0, float), last)
            if grown:  # (IDAS's and the Runge-Kutta methods' criterion)
                reason = ("blow-up: the states grew without bound ("
                          + "; ".join(g[1] for g in grown)
                          + f" at t = {partial.t[-1]:.6g} s), and then " + reason)
            raise IntegrationFailure(f"{self.name}: {reason}", t_fail, partial,
                                     said) from None
        return self._segment(form, f, r, grid[1:])

    def _partial(self, form: ODEForm, grid: np.ndarray, x0: np.ndarray,
                 t_fail: float) -> Segment:
        good = grid[grid < t_fail * (1 - 1e-12)] if t_fail > 0 else grid[grid < t_fail]
        empty = Segment(np.zeros(0), np.zeros((form.n, 0)),
                        np.zeros((form.z.size1_out(0), 0)))
        if len(good) < 2:
            return empty
        f = self._function(form, good - good[0], False, self.options.max_num_steps)
        try:
            r, _ = self._call(f, dict(x0=x0 if form.n else 0.0, p=[good[0]]))
        except NativeCallFailed:
            return empty
        return self._segment(form, f, r, good[1:])

    def advance(self, dae: SemiExplicitDAE, p: np.ndarray, x0: np.ndarray, z0: np.ndarray,
                t0: float, t1: float) -> Segment:
        """One interval with the time-normalised integrator (shared by every interval)."""
        form = self._form(dae, p)
        f = self._function(form, np.array([0.0, 1.0]), True, self.options.max_num_steps)
        try:
            r, _ = self._call(f, dict(x0=x0 if form.n else 0.0, p=[t0, t1 - t0]))
        except NativeCallFailed as fl:
            said = rephrase_solver_output(fl.output, t0, t1 - t0, self.options.max_num_steps)
            raise IntegrationFailure(f"{self.name}: {_reason(fl, said)}", t0, None,
                                     said) from None
        return self._segment(form, f, r, np.array([t1]))


def _reason(fl: NativeCallFailed, output: str) -> str:
    flag = next(iter(re.findall(r'returned "(\w+)"', fl.text)), "")
    said = [ln.strip() for ln in output.splitlines() if ln.strip().startswith("At t")]
    return (f"CVODES returned {flag or fl.text.strip().splitlines()[-1]}"
            + (f" ({said[-1]})" if said else ""))


class CVODESAdamsIntegrator(CVODESIntegrator):
    """Adams-Moulton with functional iteration (non-stiff)."""

    name = "cvodes-adams"
    method: ClassVar[dict[str, Any]] = {"linear_multistep_method": "adams",
                                        "nonlinear_solver_iteration": "functional"}


class CVODESBDFIntegrator(CVODESIntegrator):
    """BDF with Newton's method and a direct linear solver (stiff)."""

    name = "cvodes-bdf"
    method: ClassVar[dict[str, Any]] = {"linear_multistep_method": "bdf",
                                        "nonlinear_solver_iteration": "newton"}

    def _method_options(self, form: ODEForm) -> dict[str, Any]:
        n = form.n
        dense = False
        if 0 < n <= _DENSE_MAX:
            nnz = form.sparsity.nnz() + n
            dense = nnz > _DENSE_FRACTION * n * n
        return {**self.method, "linear_solver": "lapacklu" if dense else "csparse"}


class CVODESKrylovIntegrator(CVODESIntegrator):
    """BDF with Newton-GMRES (matrix-free: Jacobian-vector products only)."""

    name = "cvodes-krylov"
    method: ClassVar[dict[str, Any]] = {"linear_multistep_method": "bdf",
                                        "nonlinear_solver_iteration": "newton",
                                        "newton_scheme": "gmres"}
