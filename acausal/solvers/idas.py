"""SUNDIALS IDAS through ``casadi.integrator``: the default backend.

The integrator is built once per (DAE, relative output grid, tolerances, parameter values)
and kept, so repeated simulations of a model cost only the integration. Parameters are
folded into the expressions as constants (as in a hand-written model).

Integration modes, tried in order until one succeeds (the one that worked is remembered
for the rest of the run, and learnt again by the next run, so that identical runs give
identical results; ``simulate(..., mode=...)`` forces one):

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

IDAS's first step predicts the algebraic variables with a zero rate (it takes no
derivatives for them): where they change fast at the start (a resistive circuit whose
resistance is a ramp, at rtol 1e-10), the error test fails at every step size it tries
first. A mode that fails so at its start is tried once more, before the next mode, with a
first step of a tenth of the tolerance over the algebraic variables' rates
(``_first_step``); the method is the same, so no warning is given.

A model without states does not fall back to ``states_error_only``: nothing would control
its steps, and its variables would be interpolated over a few long ones.

A pure ODE (no algebraic variables) has no algebraic error test to decide on: it runs
``idas_ic`` (for an ODE, ``IDACalcIC`` is one linear solve), or ``exact_xdot`` where that
fails (it can at very tight tolerances). Where ``IDACalcIC`` failed at a start point,
``idas_ic`` is tried first again at the next new start (a restart after an event, a chunk of
dynamic state selection) for as long as it has failed at no more than one start point more
than it has succeeded at: its integrator is kept, where ``exact_xdot`` builds one per start
(its derivatives are an option of the CasADi integrator, 20-60 ms each). A closed-loop
mechanism whose ``IDACalcIC`` fails only at its start position so builds 6 integrators in
its first run instead of 22. A mode not yet proven in the run gets
:data:`PROBE_STEPS` steps per output interval, so a failing attempt is cheap; only when every
mode runs out of steps does the first one get the full budget. What IDAS prints while a mode
fails is collected, not shown: it is dropped when another mode succeeds and becomes part of
the error when none does.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Sequence
from typing import Any

import casadi as cs
import numpy as np

from ..dae import SemiExplicitDAE
from ..errors import SolverWarning, user_stacklevel
from ..pointcall import PointCall, point_call
from ..records import record
from ..regularity import singular_for_values
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
from .ode import depends_on_time

__all__ = ["IDASIntegrator", "IDASKrylovIntegrator", "make_integrator", "MODES"]

MODES = ("exact_xdot", "states_error_only", "idas_ic")
_LADDER = ("idas_ic", "exact_xdot", "states_error_only")
#: steps per output interval allowed to a mode not yet proven in the run: a mode that
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


#: magnitude of a state or algebraic variable beyond which the run stops as a blow-up
OVERFLOW = 1e150


def _algebraic_guard(alg: cs.SX, z: cs.SX) -> cs.SX:
    """Per algebraic equation, ``inf`` once an algebraic variable it contains (the first
    equation of each variable's column) passes :data:`OVERFLOW`, else 0."""
    sp = cs.jacobian_sparsity(alg, z)
    colind, row = sp.colind(), sp.row()
    guard = [cs.SX(0.0)] * int(alg.numel())
    for j in range(int(z.numel())):
        if colind[j + 1] > colind[j]:
            r = row[colind[j]]
            guard[r] = guard[r] + cs.if_else(cs.fabs(z[j]) > OVERFLOW, np.inf, 0.0)
    return cs.vertcat(*guard)


def make_integrator(dae: SemiExplicitDAE, grid: Sequence[float] | np.ndarray, *,
                    rtol: float = 1e-6, atol: float = 1e-8, max_step: float | None = None,
                    max_num_steps: int = 100_000, name: str = "idas",
                    p_values: np.ndarray | None = None,
                    init_xdot: np.ndarray | None = None,
                    suppress_algebraic: bool = False,
                    regularity_check: bool = True, normalized: bool = False,
                    newton_scheme: str | None = None,
                    live: Sequence[int] | np.ndarray = ()) -> cs.Function:
    """IDAS integrator of ``dae`` on ``grid`` (relative to the start time).

    The returned function takes ``x0``, ``z0`` and ``p = [parameters; t_start]`` and gives
    ``xf``, ``zf`` at the grid points (grid[0] must be 0). With ``p_values`` the parameters
    are substituted by these numbers and the ``p`` input is ``[t_start]`` only. With
    ``init_xdot`` IDAS skips ``IDACalcIC``; with ``suppress_algebraic`` the error test
    covers the states only. With ``regularity_check`` (default) the first NaN or Inf in
    the DAE's residual stops the integration (instead of IDAS retrying ever smaller steps
    into a blow-up). With ``normalized`` the time is ``t_start + span tau`` and ``grid`` is
    in ``tau`` (``p = [..., t_start, span]``): one integrator serves every interval. With
    ``newton_scheme="gmres"`` Newton's linear systems are solved by GMRES on
    Jacobian-vector products (matrix-free) instead of a factorisation. With ``p_values``,
    the parameters at the positions ``live`` (relations and discrete variables, which
    change at events) stay inputs: ``p = [p[live]; t_start; ...]``, so one integrator
    serves every mode of a hybrid model.
    """
    problem, lin = dae_problem(dae, p_values=p_values, normalized=normalized, live=live)
    return integrator_from_problem(
        problem, lin, grid, rtol=rtol, atol=atol, max_step=max_step,
        max_num_steps=max_num_steps, name=name, init_xdot=init_xdot,
        suppress_algebraic=suppress_algebraic, regularity_check=regularity_check,
        newton_scheme=newton_scheme)


def dae_problem(dae: SemiExplicitDAE, *, p_values: np.ndarray | None = None,
                normalized: bool = False,
                live: Sequence[int] | np.ndarray = ()) -> tuple[dict[str, Any], str]:
    """The symbolic IDAS problem of :func:`make_integrator` and its direct linear solver
    (the part that does not depend on the grid, the tolerances or the start: built once
    and reused for every integrator of a run)."""
    toff = cs.SX.sym("t_start")
    tau = cs.SX.sym("tau")
    span = cs.SX.sym("span")
    x, z = dae.x, dae.z
    ode, alg = dae.ode, dae.alg
    p_in = dae.p
    if p_values is not None and dae.p.numel():
        keep = sorted(set(int(k) for k in live))
        fixed = np.delete(np.arange(int(dae.p.numel())), keep).tolist()
        if fixed:  # (one indexing of the vector: 4 000 element reads cost 50 ms)
            syms = dae.p if not keep else dae.p[fixed]
            vals = cs.DM(np.asarray(p_values, dtype=float)[fixed])
            ode = cs.substitute(ode, syms, vals)
            alg = cs.substitute(alg, syms, vals)
        p_in = dae.p[keep] if keep else cs.SX(0, 1)
    if x.numel() == 0:  # IDAS needs a state: a dummy one that stays zero
        x = cs.SX.sym("_dummy_state")
        ode = cs.SX(0)
    # IDAS does not return once the solution or its rates pass ~1e150 (the squares in its
    # norms overflow): an infinite residual there stops it through the regularity check,
    # reported as a blow-up. Element by element, where the structure already has the
    # entry (a state and its rate in the state's own equation, whose x' entry is there
    # anyway; an algebraic variable in an algebraic equation that contains it): a guard
    # on the largest of them all would make the Jacobian dense, and a new entry could
    # hide a structural singularity that CasADi reports
    ode = ode + cs.if_else(cs.fmax(cs.fabs(x), cs.fabs(ode)) > OVERFLOW, np.inf, 0.0)
    if z.numel():
        alg = alg + _algebraic_guard(alg, z)
    t_of_tau = toff + span * tau if normalized else toff + tau
    if depends_on_time(dae):
        ode = cs.substitute(ode, dae.t, t_of_tau)
        alg = cs.substitute(alg, dae.t, t_of_tau)
    if normalized:
        ode = span * ode
    p_all = cs.vertcat(p_in, toff, span) if normalized else cs.vertcat(p_in, toff)
    problem: dict[str, Any] = {"x": x, "p": p_all, "t": tau, "ode": ode}
    if z.numel():
        problem["z"] = z
        problem["alg"] = alg
    return problem, _linear_solver(cs.vertcat(ode, alg), cs.vertcat(x, z))


def integrator_from_problem(problem: dict[str, Any], linear_solver: str,
                            grid: Sequence[float] | np.ndarray, *, rtol: float = 1e-6,
                            atol: float = 1e-8, max_step: float | None = None,
                            max_num_steps: int = 100_000, name: str = "idas",
                            init_xdot: np.ndarray | None = None,
                            suppress_algebraic: bool = False, regularity_check: bool = True,
                            newton_scheme: str | None = None,
                            first_step: float | None = None) -> cs.Function:
    """The CasADi IDAS integrator of a :func:`dae_problem` on ``grid`` (see
    :func:`make_integrator`); ``first_step``: the size of IDAS's first step."""
    opts: dict[str, Any] = {"abstol": atol, "reltol": rtol, "max_num_steps": max_num_steps,
                            "verbose": False, "regularity_check": regularity_check}
    if init_xdot is not None:
        opts.update(calc_ic=False, init_xdot=[float(v) for v in np.ravel(init_xdot)] or [0.0])
    if suppress_algebraic:
        opts["suppress_algebraic"] = True
    if max_step is not None:
        opts["max_step_size"] = max_step
    if first_step is not None:
        opts["step0"] = first_step
    if newton_scheme is not None:
        opts["newton_scheme"] = newton_scheme
    else:
        opts["linear_solver"] = linear_solver
    return cs.integrator(name, "idas", problem, 0.0, [float(g) for g in grid[1:]], opts)


def _stats(s: dict[str, Any], mode: str, attempts: list[str]) -> SegmentStats:
    return SegmentStats(
        steps=int(s.get("nsteps", 0)), rhs_evaluations=int(s.get("nfevals", 0)),
        jacobian_evaluations=int(s.get("nlinsetups", 0)),
        error_test_failures=int(s.get("netfails", 0)),
        newton_failures=int(s.get("nncfails", 0)), mode=mode, attempts=list(attempts))


# (patterns of failures' texts, compiled when first used by re's cache, not at import)
_AT_T = r"At t = ([-+0-9.eE]+)"
_NONFINITE = r"(NaN|Inf) detected for output (ode|alg), at \(row (\d+), col"


@record
class _Attempt:
    """What one failed IDAS call says about itself."""

    mode: str
    flag: str  # IDAS return flag, e.g. IDA_TOO_MUCH_WORK
    output: str  # what it printed (captured)
    t_rel: float | None  # where it stopped, relative to the call's start time
    nonfinite: list[tuple[str, str, int]]  # (NaN|Inf, ode|alg, row)

    @classmethod
    def read(cls, mode: str, exc: BaseException, output: str, max_steps: int,
             t0: float = 0.0, scale: float = 1.0) -> _Attempt:
        """The failure of one call, with what IDAS printed (``output``) in the model's
        times and the step limit written out (:func:`rephrase_solver_output`)."""
        text = str(exc)
        flag = next((m for m in re.findall(r'returned "(\w+)"', text)), "")
        if not flag:
            lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
            flag = lines[-1] if lines else type(exc).__name__
        times = re.findall(_AT_T, output)
        t_rel = float(times[-1]) if times else None
        hits = [(a, b, int(c)) for a, b, c in re.findall(_NONFINITE, output + text)]
        return cls(mode, flag, rephrase_solver_output(output, t0, scale, max_steps), t_rel,
                   hits)

    @property
    def at_start_error_test(self) -> bool:
        """The error test failed at the call's start time (its first step)."""
        return self.flag == "IDA_ERR_FAIL" and self.t_rel == 0.0

    @property
    def cheap(self) -> bool:
        """Failures another mode may cure, found within a few steps (error test or
        corrector failures at the start, IDACalcIC); running out of steps and non-finite
        residuals are not the method's fault."""
        return not (self.nonfinite or "TOO_MUCH_WORK" in self.flag)

    def line(self) -> str:
        said = [ln.strip() for ln in self.output.splitlines()
                if ln.strip().startswith("At t")]
        return f"{self.mode}: IDAS returned {self.flag}" + (f" ({said[-1]})" if said else "")


class IDASIntegrator(Integrator):
    """IDAS with the mode ladder of the module documentation."""

    name = "idas"
    newton_scheme: str | None = None  # None: direct (dense or sparse LU)

    def __init__(self, cm: Any, options: IntegratorOptions) -> None:
        super().__init__(cm, options)
        if options.mode is not None and options.mode not in MODES:
            from ..errors import AcausalError

            raise AcausalError(f"unknown IDAS mode {options.mode!r}; use one of {MODES}")
        self._functions: dict[tuple, cs.Function] = {}
        # the symbolic problem per (DAE, fixed parameter values, normalised): building it
        # (substitution, sparsity) costs more than the integrator made from it
        self._problems: dict[tuple, tuple[dict[str, Any], str]] = {}
        self._live: dict[int, np.ndarray] = {}
        self._calls: dict[int, tuple[cs.Function, PointCall]] = {}  # one-point evaluators
        self._rates: dict[int, cs.Function] = {}  # (x, z, p, t, x') -> (dalg/dz, rest)
        self.start_run()

    def start_run(self) -> None:
        """What the modes' ladder learns, learnt again by each run: a run that found a
        mode proven by an earlier one gave its segments the full budget of steps where the
        earlier run gave them the probe's, and CasADi's IDAS, made with another step
        limit, rounds differently (2e-17 after 33 steps): identical calls of simulate
        gave results that differed (the event times of stick-slip by 2.3e-13 s). The
        integrators made stay: a run builds none that an earlier one made."""
        self._mode_start = 0  # position in the ladder that worked last in this run
        self._proven: set[str] = set()  # modes that completed a segment in this run
        # start times where idas_ic completed a segment in this run, and where IDACalcIC
        # failed (a set: a start is tried again with the fallback allowed)
        self._ic_ok: set[float] = set()
        self._ic_failed: set[float] = set()
        self._tolerant = False  # NaN/Inf at trial points must be retried, not fatal
        # the fallbacks announced (each run that changes the method says so: the second
        # run of a compiled model ran with the error test on the states only silently)
        self._warned: set[str] = set()

    # ----- building -----
    def _function(self, dae: SemiExplicitDAE, p: np.ndarray, rel: np.ndarray, mode: str,
                  xdot: np.ndarray, max_num_steps: int,
                  normalized: bool = False, first_step: float | None = None) -> cs.Function:
        """The CasADi integrator for this mode, grid and start (kept for repeated runs).

        The parameters are folded in as constants, except the relations' values and the
        discrete variables (:meth:`live`), which are inputs: a hybrid model's change of
        mode at an event reuses the integrator. The exact initial derivatives are an
        option of the CasADi integrator, so they are part of the key: a repeated
        simulation from the same start reuses the integrator, a new start point (a
        restart after an event) builds one from the kept symbolic problem.
        """
        o = self.options
        live = self.live(dae)
        fixed = np.delete(p, live).tobytes()
        key = (id(dae), tuple(np.round(rel, 12)), mode, fixed,
               b"" if mode == "idas_ic" else xdot.tobytes(), max_num_steps, self._tolerant,
               normalized, first_step)
        f = self._functions.get(key)
        if f is None:
            try:
                pkey = (id(dae), fixed, normalized)
                problem = self._problems.get(pkey)
                if problem is None:
                    problem = self._problems[pkey] = dae_problem(
                        dae, p_values=p, normalized=normalized, live=live)
                f = integrator_from_problem(
                    *problem, rel, rtol=o.rtol, atol=o.atol, max_step=o.max_step,
                    max_num_steps=max_num_steps,
                    init_xdot=None if mode == "idas_ic" else (xdot if xdot.size
                                                              else np.zeros(1)),
                    suppress_algebraic=mode == "states_error_only",
                    regularity_check=not self._tolerant, newton_scheme=self.newton_scheme,
                    first_step=first_step)
            except RuntimeError as exc:  # CasADi refuses a structurally singular DAE
                if "is_singular" not in str(exc):
                    raise
                raise singular_for_values(dae, p) from None
            self._functions[key] = f
        return f

    def live(self, dae: SemiExplicitDAE) -> np.ndarray:
        """Positions in ``dae.p`` of the values that change at events (the relations and
        the discrete variables): inputs of the integrators, not constants."""
        out = self._live.get(id(dae))
        if out is None:
            changing = {r.name for r in dae.relations} | {
                q.name for q in getattr(getattr(self.cm, "system", None), "parameters", ())
                if q.discrete}
            out = self._live[id(dae)] = np.array(
                [k for k, n in enumerate(dae.p_names) if n in changing], dtype=int)
        return out

    def _ladder(self, dae: SemiExplicitDAE) -> tuple[str, ...]:
        if self.options.mode is not None:
            return (self.options.mode,)
        if dae.z.numel() == 0:  # an ODE: no algebraic error test to decide on
            ladder = _LADDER[min(self._mode_start, 1):2]
        elif dae.x.numel() == 0:  # no states: without the algebraic error test nothing
            # would control the steps (the variables interpolated over a few huge ones)
            ladder = _LADDER[min(self._mode_start, 1):2]
        else:
            ladder = _LADDER[self._mode_start:]
        if self._mode_start == 1 and len(self._ic_ok) + 1 >= len(self._ic_failed):
            # IDACalcIC failed at some start, but works at most (see the module docs)
            ladder = ("idas_ic", *ladder)
        return ladder

    # ----- integration -----
    def _call(self, f: cs.Function, args: dict[str, Any]) -> tuple[Any, str]:
        """One IDAS call: interruptible, its printing captured."""
        return call_native(f, args)

    def _attempt(self, dae: SemiExplicitDAE, p: np.ndarray, x0: np.ndarray, z0: np.ndarray,
                 grid: np.ndarray, allow_fallback: bool = True,
                 normalized: bool = False, xdot: np.ndarray | None = None) -> Segment:
        """The whole grid in one IDAS call, trying the modes of the ladder in turn (with
        ``normalized``, ``grid`` is ``[t0, t1]`` and a time-normalised integrator that
        serves every interval is used)."""
        span = float(grid[-1] - grid[0])
        tp = [grid[0], span] if normalized else [grid[0]]
        args = dict(x0=x0 if x0.size else 0.0, z0=z0,
                    p=np.concatenate([p[self.live(dae)], tp]))
        if xdot is None:
            xdot = point_call(self._calls, dae.default_function)(x0, z0, p, grid[0])[0]
        if normalized:
            xdot = span * xdot
        rel = np.array([0.0, 1.0]) if normalized else grid - grid[0]
        ladder = self._ladder(dae)
        if not allow_fallback:  # no change of method: the error test keeps the algebraic
            # variables (how the start's derivatives are found is not the method)
            ladder = tuple(m for m in ladder if m != "states_error_only") or ladder[:1]
        full = self.options.max_num_steps
        failed: list[_Attempt] = []
        out_of_steps: list[str] = []  # modes that only ran out of their probe budget
        plan: list[tuple[str, int, float | None]] = [
            (m, full if (m in self._proven or len(ladder) == 1) else min(full, PROBE_STEPS),
             None) for m in ladder]
        while plan:
            mode, budget, first = plan.pop(0)
            f = self._function(dae, p, rel, mode, xdot, budget, normalized, first)
            try:
                r, _ = self._call(f, args)
            except NativeCallFailed as cf:
                att = _Attempt.read(mode, cf.exc, cf.output, budget, float(grid[0]),
                                    span if normalized else 1.0)
                failed.append(att)
                if mode == "idas_ic" and "IDACalcIC" in str(cf.exc):
                    self._ic_failed.add(float(grid[0]))
                if att.nonfinite and not self._tolerant:
                    # NaN/Inf at a trial point may be recoverable (a square root of a
                    # negative trial value): retry once letting IDAS cut the step; a
                    # blow-up fails again within the probe budget
                    self._tolerant = True
                    plan.insert(0, (mode, min(full, PROBE_STEPS), first))
                    continue
                if first is None and att.at_start_error_test:
                    # IDAS's first step predicts the algebraic variables with a zero
                    # rate: where they change faster than the tolerance allows over that
                    # step, the error test fails until the step limit. Again, with a
                    # first step small enough for their rates (the method is the same)
                    h0 = self._first_step(dae, p, x0, z0, float(grid[0]), xdot, span
                                          if normalized else 1.0)
                    if h0 is not None:
                        plan.insert(0, (mode, budget, h0))
                        continue
                if (budget < full and "TOO_MUCH_WORK" in att.flag
                        and not any(a.nonfinite for a in failed)):
                    out_of_steps.append(mode)
                if not att.cheap and not (mode == "idas_ic" and self._mode_start == 1):
                    plan = []  # the model, not the method: no other mode (but idas_ic
                    # tried again ahead of the model's mode leaves that mode its turn)
                if not plan and out_of_steps:  # every mode ran out: full budget
                    plan = [(out_of_steps[0], full, None)]
                    out_of_steps = []
                continue
            self._proven.add(mode)
            if mode == "idas_ic":
                self._ic_ok.add(float(grid[0]))
            if self.options.mode is None and mode in _LADDER:
                pos = _LADDER.index(mode)
                if pos > self._mode_start:
                    self._mode_start = pos
                if mode == "states_error_only":
                    self._warn_fallback(dae, [a.line() for a in failed])
            n = len(grid) - 1
            X = r["xf"] if dae.x.numel() else np.zeros((0, n))
            Z = r["zf"] if dae.z.numel() else np.zeros((0, n))
            return Segment(grid[1:], X, Z, _stats(r["_stats"], mode, [a.mode for a in failed]))
        raise _AttemptsFailed(failed)

    def _first_step(self, dae: SemiExplicitDAE, p: np.ndarray, x0: np.ndarray,
                    z0: np.ndarray, t0: float, xdot: np.ndarray, span: float) -> float | None:
        """A first step over which the algebraic variables, predicted with a zero rate,
        stay within a tenth of their tolerance: ``0.1 (rtol |z| + atol) / |z'|`` at the
        start (in the integrator's time, divided by ``span`` when it is normalised), with
        ``z'`` from the differentiated algebraic equations. None if no algebraic
        variable moves (the failure has another cause)."""
        if not dae.z.numel():
            return None
        from scipy.sparse.linalg import MatrixRankWarning, spsolve

        f = self._rates.get(id(dae))
        if f is None:
            alg, v = dae.alg, cs.SX.sym("x_rate", dae.x.sparsity())
            f = self._rates[id(dae)] = cs.Function(
                "algebraic_rates", [dae.x, dae.z, dae.p, dae.t, v],
                [cs.jacobian(alg, dae.z), cs.jtimes(alg, dae.x, v) + cs.jacobian(alg, dae.t)])
        x_rate = np.asarray(xdot, dtype=float).ravel() / span if x0.size else np.zeros(0)
        Jz, rhs = f(x0, z0, p, t0, x_rate)
        with warnings.catch_warnings():
            warnings.simplefilter("error", MatrixRankWarning)
            try:
                zdot = -np.atleast_1d(spsolve(Jz.sparse().tocsc(), np.asarray(rhs).ravel()))
            except (MatrixRankWarning, RuntimeError):
                return None
        o = self.options
        moving = np.abs(zdot) > 0
        if not moving.any() or not np.all(np.isfinite(zdot)):
            return None
        allowed = 0.1 * (o.rtol * np.abs(z0[moving]) + o.atol) / np.abs(zdot[moving])
        return float(allowed.min()) / span

    def _warn_fallback(self, dae: SemiExplicitDAE, reasons: list[str]) -> None:
        if "states_error_only" in self._warned:
            return
        self._warned.add("states_error_only")
        shown = _shown(self._origins(dae.z_names))
        warnings.warn(
            "IDAS could not integrate with the algebraic variables in the local error test "
            f"({'; '.join(reasons) or 'failed'}); it continued with the error test on the "
            f"states only. The algebraic variables (of {shown}) are then exact to the "
            "Newton tolerance at the integrator's steps and interpolated between them. "
            "Pass mode='states_error_only' to simulate() to choose this mode from the start.",
            SolverWarning, stacklevel=user_stacklevel())

    def _origins(self, names: list[str]) -> list[str]:
        idx = self.cm.system.name_index
        return sorted({self.cm.system.variables[idx[n]].origin for n in names if n in idx})

    def advance(self, dae: SemiExplicitDAE, p: np.ndarray, x0: np.ndarray, z0: np.ndarray,
                t0: float, t1: float) -> Segment:
        """One interval with the time-normalised integrator (no new integrator per
        interval: event location calls this many times with different lengths)."""
        try:
            return self._attempt(dae, p, x0, z0, np.array([t0, t1]), normalized=True)
        except _AttemptsFailed as af:
            raise IntegrationFailure(self._explain(dae, p, np.array([t0, t1]), af.attempts,
                                                   _join([], [], [], dae, SegmentStats()),
                                                   x0, t0), t0, None,
                                     "".join(a.output for a in af.attempts)) from None

    def _check_range(self, dae: SemiExplicitDAE, p: np.ndarray, x0: np.ndarray,
                     z0: np.ndarray, t0: float) -> np.ndarray:
        """A start whose values or rates are beyond :data:`OVERFLOW` would hang IDAS (its
        norms overflow): a failure that names the variable instead. Returns the rates."""
        xdot = point_call(self._calls, dae.default_function)(x0, z0, p, t0)[0]
        for names, vals, fmt in ((dae.x_names, x0, "{}"), (dae.z_names, z0, "{}"),
                                 (dae.x_names, xdot, "der({})")):
            bad = np.flatnonzero(~(np.abs(vals) <= OVERFLOW))
            if len(bad):
                k = int(bad[0])
                name = fmt.format(names[k])
                origin = _shown(self._origins([names[k]]))
                why = (" is not a number: an expression of the model is undefined at the "
                       "start (a 0/0, such as the direction between two points that "
                       "coincide, or the root or logarithm of a negative number); check "
                       "the start values and parameters there" if np.isnan(vals[k]) else
                       f" is beyond what the integrator can work with (|value| > "
                       f"{OVERFLOW:g}): a parameter or a source far out of scale (a huge "
                       "source, a tiny coefficient that something is divided by)")
                raise IntegrationFailure(
                    f"{name} = {vals[k]:.3g} at t = {t0:.6g} s"
                    + (f" (in {origin})" if origin else "") + why, t0,
                    _join([], [], [], dae, SegmentStats()))
        return xdot

    def integrate(self, dae: SemiExplicitDAE, p: np.ndarray, x0: np.ndarray, z0: np.ndarray,
                  grid: np.ndarray, allow_fallback: bool = True) -> Segment:
        parts = in_parts(self, dae, p, x0, z0, grid,
                         lambda x, z, g: self.integrate(dae, p, x, z, g, allow_fallback))
        if parts is not None:
            return parts
        xdot = self._check_range(dae, p, x0, z0, float(grid[0]))
        try:
            return self._attempt(dae, p, x0, z0, grid, allow_fallback, xdot=xdot)
        except _AttemptsFailed as af:
            last = af.attempts[-1]
            partial = self._partial(dae, p, x0, z0, grid, last, allow_fallback)
            t_fail = (float(grid[0]) + last.t_rel if last.t_rel is not None
                      else float(partial.t[-1]) if len(partial.t) else float(grid[0]))
            reason = self._explain(dae, p, grid, af.attempts, partial, x0, t_fail)
            raise IntegrationFailure(reason, t_fail, partial,
                                     "".join(a.output for a in af.attempts)) from None

    def _partial(self, dae: SemiExplicitDAE, p: np.ndarray, x0: np.ndarray, z0: np.ndarray,
                 grid: np.ndarray, last: _Attempt, allow_fallback: bool) -> Segment:
        """What can be computed before the failure: the output points before the time
        IDAS stopped at, in one call with the mode that failed last (or chunk by chunk
        when that time is unknown)."""
        empty = Segment(np.zeros(0), cs.DM(int(dae.x.numel()), 0),
                        cs.DM(int(dae.z.numel()), 0))
        if not allow_fallback or len(grid) <= 2:
            return empty
        if last.t_rel is not None:
            good = grid[grid < grid[0] + last.t_rel * (1 - 1e-12)]
            if len(good) < 2:
                return empty
            try:
                return self._attempt(dae, p, x0, z0, good, allow_fallback=False)
            except _AttemptsFailed:
                pass
        return self._localise(dae, p, x0, z0, grid)

    def _localise(self, dae: SemiExplicitDAE, p: np.ndarray, x0: np.ndarray, z0: np.ndarray,
                  grid: np.ndarray) -> Segment:
        """Integrate chunk by chunk to return what can be computed before the failure."""
        xs: list[Any] = []
        zs: list[Any] = []
        ts: list[np.ndarray] = []
        k, m = 0, max(1, (len(grid) - 1) // 20)
        stats = SegmentStats()
        while k < len(grid) - 1:
            chunk = grid[k: min(k + m, len(grid) - 1) + 1]
            try:
                seg = self._attempt(dae, p, x0, z0, chunk, allow_fallback=False)
            except _AttemptsFailed:
                if len(chunk) > 2:
                    m = max(1, m // 4)
                    continue
                break
            ts.append(seg.t)
            xs.append(seg.x)
            zs.append(seg.z)
            stats.steps += seg.stats.steps
            stats.mode = seg.stats.mode
            x0 = np.asarray(seg.x[:, -1]).ravel() if seg.x.shape[0] else np.zeros(0)
            z0 = np.asarray(seg.z[:, -1]).ravel() if seg.z.shape[0] else np.zeros(0)
            k += len(chunk) - 1
        return _join(ts, xs, zs, dae, stats)

    def _explain(self, dae: SemiExplicitDAE, p: np.ndarray, grid: np.ndarray,
                 attempts: list[_Attempt], partial: Segment, x0: np.ndarray,
                 t_fail: float) -> str:
        """The reason in the model's terms: which equation, which variables, blow-up."""
        last = attempts[-1]
        hits = next((a.nonfinite for a in reversed(attempts) if a.nonfinite), [])
        tried = "; ".join(a.line() for a in attempts)
        if not hits:
            return tried
        what, out, row = hits[-1]
        if out == "ode" and row < len(dae.x_names):
            var = dae.x_names[row]
            eq = f"the equation for der({var})"
        elif out == "alg" and row < len(dae.z_names):
            var = dae.z_names[row]
            eq = f"algebraic equation {row} (solved for {var})"
        else:
            var, eq = "", f"{out} row {row}"
        origin = _shown(self._origins([var])) if var else ""
        text = (f"{'NaN' if what == 'NaN' else 'an infinite value'} in {eq}"
                + (f" of {origin}" if origin else "") + f" at t = {t_fail:.6g} s")
        grown = _growth(dae, x0, partial)
        if what == "Inf" and grown:
            text = ("blow-up: " + text + "; the states grew without bound ("
                    + "; ".join(grown) + f"; the run stops where a value passes {OVERFLOW:g})")
        elif grown:
            text += " after the states grew fast (" + "; ".join(grown) + ")"
        return text + f" [{last.flag}]"


class _AttemptsFailed(Exception):
    def __init__(self, attempts: list[_Attempt]) -> None:
        super().__init__("; ".join(a.line() for a in attempts))
        self.attempts = attempts


def _growth(dae: SemiExplicitDAE, x0: np.ndarray, partial: Segment) -> list[str]:
    """States whose magnitude grew by more than 100x over the computed part."""
    if not len(partial.t):
        return []
    last = np.asarray(partial.x)[:, -1]  # (no states: an empty column, nothing grew)
    return [f"{text} at t = {partial.t[-1]:.6g} s"
            for _, text in grown_states(dae.x_names, np.asarray(x0, float), last)]


def _shown(names: list[str]) -> str:
    return ", ".join(names[:5]) + (", ..." if len(names) > 5 else "")


def _join(ts: list[np.ndarray], xs: list[Any], zs: list[Any], dae: SemiExplicitDAE,
          stats: SegmentStats) -> Segment:
    if not ts:
        return Segment(np.zeros(0), np.zeros((int(dae.x.numel()), 0)),
                       np.zeros((int(dae.z.numel()), 0)), stats)
    return Segment(np.concatenate(ts), np.hstack([_dense(m) for m in xs]),
                   np.hstack([_dense(m) for m in zs]), stats)


def _dense(m: Any) -> np.ndarray:
    return m.full() if hasattr(m, "full") else np.asarray(m, dtype=float)


class IDASKrylovIntegrator(IDASIntegrator):
    """IDAS with Newton-GMRES (``solver="idas-krylov"``): no Jacobian factorisation, only
    Jacobian-vector products; for large stiff DAEs whose Newton matrix is dense."""

    name = "idas-krylov"
    newton_scheme = "gmres"
