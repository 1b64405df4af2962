"""SUNDIALS IDAS through ``casadi.integrator``: the default backend.

The integrator is built once per (DAE, relative output grid, tolerances, parameter values)
and kept, so repeated simulations of a model cost only the integration. Parameters are
folded into the expressions as constants (as in a hand-written model).

Integration modes, tried in order on a model until one succeeds (the one that worked is
remembered for the model; ``simulate(..., mode=...)`` forces one):

``idas_ic``
    IDAS computes the consistent initial derivatives itself (``IDACalcIC``) from the
    consistent point found by :mod:`acausal.initialize`; its integrator object is reused
    by every run and chunk of the model.
``exact_xdot``
    IDAS starts with the exact derivatives ``x' = ode(x0, z0)`` computed here, without
    ``IDACalcIC`` (which fails on ill-scaled algebraic blocks such as a closed loop's
    multipliers).
``states_error_only``
    As above, with the local error test on the states only: the algebraic variables
    follow them through the algebraic equations at every step (the remedy for badly
    conditioned algebraic blocks). Announced by a :class:`~acausal.errors.SolverWarning`,
    since it changes the method.

A pure ODE (no algebraic variables) has nothing to decide: it always runs ``idas_ic``
(for an ODE, ``IDACalcIC`` is one linear solve). A mode not yet proven on the model gets
:data:`PROBE_STEPS` steps per output interval, so a failing attempt is cheap; only when every
mode runs out of steps does the first one get the full budget. What IDAS prints while a mode
fails is collected, not shown: it is dropped when another mode succeeds and becomes part of
the error when none does.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import casadi as cs
import numpy as np

from ..dae import SemiExplicitDAE
from ..errors import SolverWarning
from .base import (
    IntegrationFailure,
    Integrator,
    IntegratorOptions,
    Segment,
    SegmentStats,
    captured_output,
)

__all__ = ["IDASIntegrator", "make_integrator", "MODES"]

MODES = ("exact_xdot", "states_error_only", "idas_ic")
_LADDER = ("idas_ic", "exact_xdot", "states_error_only")
#: steps per output interval allowed to a mode not yet proven on the model: a mode that
#: fails by running out of steps costs at most this much before the next one is tried
#: (the full budget is given back to the first mode if every mode runs out)
PROBE_STEPS = 5_000

_DENSE_MAX = 3000  # unknowns: a dense matrix of this size is 72 MB and factors in ~1 s
_DENSE_FRACTION = 0.1


def _linear_solver(F: cs.SX, y: cs.SX) -> str:
    """Dense LAPACK LU for a moderately sized, dense Newton matrix (a mass-matrix block of a
    long chain: sparse LU is far slower there), sparse LU (CSparse) otherwise."""
    n = int(y.numel())
    if n == 0 or n > _DENSE_MAX:
        return "csparse"
    nnz = cs.jacobian_sparsity(F, y).nnz() + n  # + the identity of the x' terms
    return "lapacklu" if nnz > _DENSE_FRACTION * n * n else "csparse"


def make_integrator(dae: SemiExplicitDAE, grid: Sequence[float] | np.ndarray, *,
                    rtol: float = 1e-6, atol: float = 1e-8, max_step: float | None = None,
                    max_num_steps: int = 100_000, name: str = "idas",
                    p_values: np.ndarray | None = None,
                    init_xdot: np.ndarray | None = None,
                    suppress_algebraic: bool = False) -> cs.Function:
    """IDAS integrator of ``dae`` on ``grid`` (relative to the start time).

    The returned function takes ``x0``, ``z0`` and ``p = [parameters; t_start]`` and gives
    ``xf``, ``zf`` at the grid points (grid[0] must be 0). With ``p_values`` the parameters
    are substituted by these numbers and the ``p`` input is ``[t_start]`` only. With
    ``init_xdot`` IDAS skips ``IDACalcIC``; with ``suppress_algebraic`` the error test
    covers the states only.
    """
    toff = cs.SX.sym("t_start")
    tau = cs.SX.sym("tau")
    x, z = dae.x, dae.z
    ode, alg = dae.ode, dae.alg
    p_in = dae.p
    if p_values is not None and dae.p.numel():
        ode = cs.substitute(ode, dae.p, cs.DM(p_values))
        alg = cs.substitute(alg, dae.p, cs.DM(p_values))
        p_in = cs.SX(0, 1)
    if x.numel() == 0:  # IDAS needs a state: a dummy one that stays zero
        x = cs.SX.sym("_dummy_state")
        ode = cs.SX(0)
    if cs.depends_on(cs.vertcat(ode, alg), dae.t):
        ode = cs.substitute(ode, dae.t, tau + toff)
        alg = cs.substitute(alg, dae.t, tau + toff)
    problem: dict[str, Any] = {"x": x, "p": cs.vertcat(p_in, toff), "t": tau, "ode": ode}
    if z.numel():
        problem["z"] = z
        problem["alg"] = alg
    opts: dict[str, Any] = {"abstol": atol, "reltol": rtol, "max_num_steps": max_num_steps,
                            "verbose": False}
    if init_xdot is not None:
        opts.update(calc_ic=False, init_xdot=[float(v) for v in np.ravel(init_xdot)] or [0.0])
    if suppress_algebraic:
        opts["suppress_algebraic"] = True
    if max_step is not None:
        opts["max_step_size"] = max_step
    opts["linear_solver"] = _linear_solver(cs.vertcat(ode, alg), cs.vertcat(x, z))
    return cs.integrator(name, "idas", problem, 0.0, [float(g) for g in grid[1:]], opts)


def _stats(f: cs.Function, mode: str, attempts: list[str]) -> SegmentStats:
    s = f.stats()
    return SegmentStats(
        steps=int(s.get("nsteps", 0)), rhs_evaluations=int(s.get("nfevals", 0)),
        jacobian_evaluations=int(s.get("nlinsetups", 0)),
        error_test_failures=int(s.get("netfails", 0)),
        newton_failures=int(s.get("nncfails", 0)), mode=mode, attempts=list(attempts))


def _reason(exc: BaseException, output: str) -> str:
    """The useful line of a CasADi/IDAS failure (its return flag, what IDAS printed)."""
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    flag = next((ln.split(":", 2)[-1].strip() for ln in reversed(lines)
                 if "returned" in ln), lines[-1] if lines else type(exc).__name__)
    said = [ln.strip() for ln in output.splitlines() if ln.strip().startswith("At t")]
    if said:
        flag += " (" + said[-1].replace(", ,", ",") + ")"
    return flag


class IDASIntegrator(Integrator):
    """IDAS with the mode ladder of the module documentation."""

    name = "idas"

    def __init__(self, cm: Any, options: IntegratorOptions) -> None:
        super().__init__(cm, options)
        if options.mode is not None and options.mode not in MODES:
            from ..errors import AcausalError

            raise AcausalError(f"unknown IDAS mode {options.mode!r}; use one of {MODES}")
        self._functions: dict[tuple, cs.Function] = {}
        self._mode_start = 0  # position in the ladder that worked last on this model
        self._proven: set[str] = set()  # modes that completed a segment on this model
        self._warned: set[str] = set()

    # ----- building -----
    def _function(self, dae: SemiExplicitDAE, p: np.ndarray, rel: np.ndarray, mode: str,
                  xdot: np.ndarray, max_num_steps: int) -> cs.Function:
        """The CasADi integrator for this mode, grid and start (kept for repeated runs).

        The exact initial derivatives are an option of the CasADi integrator, so they are
        part of the key: a repeated simulation from the same start reuses the integrator,
        a new start point (a restart after an event) builds one.
        """
        o = self.options
        key = (id(dae), tuple(np.round(rel, 12)), mode, p.tobytes(),
               b"" if mode == "idas_ic" else xdot.tobytes(), max_num_steps)
        f = self._functions.get(key)
        if f is None:
            f = self._functions[key] = make_integrator(
                dae, rel, rtol=o.rtol, atol=o.atol, max_step=o.max_step,
                max_num_steps=max_num_steps, p_values=p,
                init_xdot=None if mode == "idas_ic" else (xdot if xdot.size else np.zeros(1)),
                suppress_algebraic=mode == "states_error_only")
        return f

    def _ladder(self, dae: SemiExplicitDAE) -> tuple[str, ...]:
        if self.options.mode is not None:
            return (self.options.mode,)
        if dae.z.numel() == 0:  # an ODE: no algebraic error test to decide on
            return ("idas_ic",)
        return _LADDER[self._mode_start:]

    # ----- integration -----
    def _attempt(self, dae: SemiExplicitDAE, p: np.ndarray, x0: np.ndarray, z0: np.ndarray,
                 grid: np.ndarray, allow_fallback: bool = True) -> Segment:
        """The whole grid in one IDAS call, trying the modes of the ladder in turn."""
        args = dict(x0=x0 if x0.size else 0.0, z0=z0, p=[grid[0]])
        xdot = np.asarray(dae.default_function(x0, z0, p, grid[0])[0]).ravel()
        ladder = self._ladder(dae)
        if not allow_fallback:
            ladder = ladder[:1]
        full = self.options.max_num_steps
        attempts: list[str] = []
        reasons: list[str] = []
        outputs: list[str] = []
        out_of_steps: list[str] = []  # modes that only ran out of their probe budget
        plan = [(m, full if (m in self._proven or len(ladder) == 1) else min(full, PROBE_STEPS))
                for m in ladder]
        while plan:
            mode, budget = plan.pop(0)
            f = self._function(dae, p, grid - grid[0], mode, xdot, budget)
            with captured_output() as out:
                try:
                    r = f(**args)
                except RuntimeError as exc:
                    attempts.append(mode)
                    reasons.append(f"{mode}: {_reason(exc, out.getvalue())}")
                    outputs.append(out.getvalue())
                    if budget < full and "TOO_MUCH_WORK" in str(exc):
                        out_of_steps.append(mode)
                    if not plan and out_of_steps:  # every mode ran out: full budget
                        plan = [(out_of_steps[0], full)]
                        out_of_steps = []
                    continue
            self._proven.add(mode)
            if self.options.mode is None and mode in _LADDER:
                pos = _LADDER.index(mode)
                if pos > self._mode_start:
                    self._mode_start = pos
                if mode == "states_error_only":
                    self._warn_fallback(dae, reasons)
            n = len(grid) - 1
            X = r["xf"] if dae.x.numel() else cs.DM(0, n)
            Z = r["zf"] if dae.z.numel() else cs.DM(0, n)
            return Segment(grid[1:], X, Z, _stats(f, mode, attempts))
        raise IntegrationFailure("; ".join(reasons), float(grid[0]), None, "".join(outputs))

    def _warn_fallback(self, dae: SemiExplicitDAE, reasons: list[str]) -> None:
        if "states_error_only" in self._warned:
            return
        self._warned.add("states_error_only")
        origins = sorted({self.cm.system.variables[self.cm.system.name_index[n]].origin
                          for n in dae.z_names if n in self.cm.system.name_index})
        shown = ", ".join(origins[:5]) + (", ..." if len(origins) > 5 else "")
        warnings.warn(
            "IDAS could not integrate with the algebraic variables in the local error test "
            f"({'; '.join(reasons) or 'failed'}); it continued with the error test on the "
            f"states only. The algebraic variables (of {shown}) are then exact to the "
            "Newton tolerance at the integrator's steps and interpolated between them. "
            "Pass mode='states_error_only' to simulate() to choose this mode from the start.",
            SolverWarning, stacklevel=5)

    def integrate(self, dae: SemiExplicitDAE, p: np.ndarray, x0: np.ndarray, z0: np.ndarray,
                  grid: np.ndarray, allow_fallback: bool = True) -> Segment:
        try:
            return self._attempt(dae, p, x0, z0, grid, allow_fallback)
        except IntegrationFailure as first:
            if len(grid) <= 2 or not allow_fallback:
                raise
            return self._localise(dae, p, x0, z0, grid, first)

    def _localise(self, dae: SemiExplicitDAE, p: np.ndarray, x0: np.ndarray, z0: np.ndarray,
                  grid: np.ndarray, first: IntegrationFailure) -> Segment:
        """Integrate chunk by chunk (equal chunks share their integrator) to return what
        can be computed before the failure."""
        xs: list[Any] = []
        zs: list[Any] = []
        ts: list[np.ndarray] = []
        k, m = 0, max(1, (len(grid) - 1) // 20)
        stats = SegmentStats()
        while k < len(grid) - 1:
            chunk = grid[k: min(k + m, len(grid) - 1) + 1]
            try:
                seg = self._attempt(dae, p, x0, z0, chunk)
            except IntegrationFailure as exc:
                if len(chunk) > 2:
                    m = max(1, m // 4)
                    continue
                partial = _join(ts, xs, zs, dae, stats)
                raise IntegrationFailure(exc.reason, float(chunk[0]), partial,
                                         first.solver_output + exc.solver_output) from None
            ts.append(seg.t)
            xs.append(seg.x)
            zs.append(seg.z)
            stats.steps += seg.stats.steps
            stats.mode = seg.stats.mode
            x0 = np.asarray(seg.x[:, -1]).ravel() if seg.x.shape[0] else np.zeros(0)
            z0 = np.asarray(seg.z[:, -1]).ravel() if seg.z.shape[0] else np.zeros(0)
            k += len(chunk) - 1
        return _join(ts, xs, zs, dae, stats)


def _join(ts: list[np.ndarray], xs: list[Any], zs: list[Any], dae: SemiExplicitDAE,
          stats: SegmentStats) -> Segment:
    if not ts:
        return Segment(np.zeros(0), cs.DM(int(dae.x.numel()), 0),
                       cs.DM(int(dae.z.numel()), 0), stats)
    return Segment(np.concatenate(ts), cs.horzcat(*xs), cs.horzcat(*zs), stats)
