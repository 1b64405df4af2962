"""Simulation: what is common to every integration backend.

:func:`simulate` builds the output grid, finds consistent initial values, splits the run
into smooth segments at time events (steps of inputs), re-selects the states along the
trajectory when the choice of dummy derivatives is dynamic, hands each piece to the chosen
:class:`~acausal.solvers.base.Integrator` (IDAS by default) and assembles the
:class:`~acausal.results.Result`. A failed integration returns, or attaches to the
:class:`~acausal.errors.SimulationError`, everything computed up to the failure.
"""

from __future__ import annotations

import gc
import time as _time
import warnings
import weakref
from collections.abc import Sequence
from dataclasses import field
from typing import TYPE_CHECKING, Any

import casadi as cs
import numpy as np

from . import grid_outputs
from .checks import (
    check_signal_ranges,
    check_simulate_arguments,
    check_solver_options,
    check_start,
)
from .compiler import CompiledModel, UnitLookup, build
from .component import Component
from .dae import SemiExplicitDAE
from .errors import AcausalError, SimulationError, SolverWarning, user_stacklevel
from .initialize import consistent_algebraic, initialize
from .pointcall import euler_gap
from .progress import reporter
from .records import record
from .regularity import check_regularity
from .results import Result
from .solvers.base import (
    IntegrationFailure,
    Integrator,
    IntegratorOptions,
    Segment,
    SegmentStats,
    integrator_class,
)
from .solvers.choice import choose_solver
from .solvers.interrupt import start_worker
from .solvers.ode import depends_on_time
from .structure.dummy import StateSelection, select_states

if TYPE_CHECKING:
    from .hybrid import Event, EventLoop
    from .resolution import Unresolved

__all__ = ["simulate", "SimulationStats", "RunCache"]


@record
class RunCache:
    """What the simulate stage keeps on a compiled model between runs."""

    integrators: dict[tuple[Any, ...], Integrator] = field(default_factory=dict)
    time_events: dict[tuple[Any, ...], list[float]] = field(default_factory=dict)
    pivots: Any = None  # the blocks solved by division, as a function of the parameters


@record
class SimulationStats:
    """How a run went (``res.stats``).

    Attributes
    ----------
    solver : str
        The backend (``"idas"``, ...).
    integration_mode : str
        The backend's mode that ran last (see :mod:`acausal.solvers.idas`).
    initial_conditions : list of str
        The fixed start values and initial equations used.
    defaulted_starts : list of str
        States whose start value was used although not fixed (to complete the conditions).
    time_events : list of float
        Instants where the run stopped and restarted (input switches) [s].
    reselections : int
        Changes of the state choice along the trajectory (dynamic state selection).
    events : list of Event
        The state and time events of a hybrid model (also ``res.events``).
    segments : list of SegmentStats
        The backend's counts per integrated piece (for a hybrid model, per stretch
        between two events, location included).
    unresolved : list of Unresolved
        States whose motion the output points do not resolve (an
        :class:`~acausal.errors.UnresolvedWarning` was given; :mod:`acausal.resolution`).
    wall_time : float
        Seconds spent in :func:`simulate`.
    """

    solver: str = "idas"
    integration_mode: str = ""
    initial_conditions: list[str] = field(default_factory=list)
    defaulted_starts: list[str] = field(default_factory=list)
    time_events: list[float] = field(default_factory=list)
    reselections: int = 0
    segments: list[SegmentStats] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    unresolved: list[Unresolved] = field(default_factory=list)
    wall_time: float = 0.0

    @property
    def steps(self) -> int:
        """Integrator steps over the whole run."""
        return sum(s.steps for s in self.segments)

    @property
    def rhs_evaluations(self) -> int:
        """Residual (right-hand side) evaluations over the whole run."""
        return sum(s.rhs_evaluations for s in self.segments)

    @property
    def jacobian_evaluations(self) -> int:
        """Jacobian (iteration matrix) evaluations over the whole run."""
        return sum(s.jacobian_evaluations for s in self.segments)

    @property
    def error_test_failures(self) -> int:
        """Local error test failures over the whole run."""
        return sum(s.error_test_failures for s in self.segments)

    @property
    def newton_failures(self) -> int:
        """Nonlinear (Newton) convergence failures over the whole run."""
        return sum(s.newton_failures for s in self.segments)

    def summary(self) -> str:
        """A table of the counts per integrator call and in total."""
        from .progress import format_stats

        return format_stats(self)


def _grid(t_start: float, t_end: float, n_points: int | None, dt: float | None,
          t_eval: Sequence[float] | None) -> np.ndarray:
    if t_eval is not None:
        g = np.asarray(t_eval, dtype=float)
        if g[0] != t_start:
            g = np.concatenate([[t_start], g])
        if g[-1] < t_end - 1e-12 * max(1.0, abs(t_end)):  # the run goes to t_end, and the
            g = np.concatenate([g, [t_end]])  # result ends there (as it starts at t_start)
        else:
            g = g.copy()
            g[-1] = t_end
        if np.any(np.diff(g) <= 0):
            raise AcausalError("t_eval must be strictly increasing and after t_start")
        return g
    if t_end <= t_start:
        raise AcausalError(f"t_end ({t_end}) must be after t_start ({t_start})")
    if dt is not None:
        n = int(np.ceil((t_end - t_start) / dt - 1e-9))
        g = t_start + dt * np.arange(n + 1)
        g[-1] = t_end
        return g
    return np.linspace(t_start, t_end, n_points or 501)


def _integrator(cm: CompiledModel, solver: str, options: IntegratorOptions) -> Integrator:
    """The backend instance kept on the compiled model for these settings."""
    if cm.run_cache is None:
        cm.run_cache = RunCache()
    key = (solver, options)
    integ = cm.run_cache.integrators.get(key)
    if integ is None:
        integ = cm.run_cache.integrators[key] = integrator_class(solver)(cm, options)
    return integ


def simulate(model: Component | CompiledModel, t_end: float, *, t_start: float = 0.0,
             n_points: int | None = None, dt: float | None = None,
             t_eval: Sequence[float] | None = None, rtol: float = 1e-6, atol: float = 1e-8,
             params: dict[str, float] | None = None,
             start: dict[str, float] | None = None, max_step: float | None = None,
             solver: str = "auto", mode: str | None = None,
             solver_options: dict[str, Any] | None = None,
             raise_on_failure: bool = True, progress: Any = None) -> Result:
    """Simulate a model and return the :class:`~acausal.results.Result`.

    Parameters
    ----------
    model : Component or CompiledModel
        The model (built on the fly) or the output of :func:`acausal.build`.
    t_end : float
        Final time [s]; ``res.t`` ends exactly there.
    t_start : float
        Initial time [s].
    n_points, dt, t_eval
        Output grid: number of points (default 501), step, or explicit times. ``dt`` is
        also the step of fixed-step solvers. The run always goes from ``t_start`` to
        ``t_end``: times ``t_eval`` that do not start at ``t_start`` or end at ``t_end``
        are completed with them (``res.t`` starts and ends there).
    rtol, atol : float
        Relative and absolute tolerances.
    params : dict
        Parameter overrides by dotted path, ``{"r.R": 10.0}`` (no rebuild needed).
    start : dict
        Start-value overrides for this run by dotted path, ``{"capacitor.v": 3.0}`` (a fixed
        start stays a condition with the new value; another start is the new guess). A
        vector unknown takes its name and one number per element or one for all,
        ``{"free.v_rel": [1.0, 0.0, 0.0]}``. A discrete variable takes its first value
        this way too (``{"counter.n": 5}``).
    max_step : float, optional
        Largest integrator step [s].
    solver : str
        The integration backend: ``"auto"`` (default: chosen from the compiled structure
        and the stiffness at the start, :mod:`acausal.solvers.choice`), ``"idas"``,
        ``"cvodes-adams"``, ``"cvodes-bdf"``, ``"cvodes-krylov"``, ``"dopri5"``,
        ``"dop853"`` (see :mod:`acausal.solvers`).
    mode : str, optional
        A backend-specific mode (IDAS: ``"exact_xdot"``, ``"states_error_only"``,
        ``"idas_ic"``; default: chosen from the model and remembered; ``"nullspace"``: the
        scheme, ``"newmark"``, ``"hht"``, ``"generalized-alpha"``, ``"taylor"``).
    solver_options : dict, optional
        Further backend-specific settings (``"nullspace"``: ``{"alpha": 0.1}``,
        ``{"rho_inf": 0.6}``, ...; ``"dopri5"``/``"dop853"``: ``{"compile": ...}``; IDAS and
        CVODES take none). A key the backend does not know is an error that lists the
        ones it does.
    raise_on_failure : bool
        If True (default) an integration failure raises :class:`SimulationError` whose
        ``partial`` holds the result up to the failure; if False that partial result is
        returned with ``status == "failed"``.
    progress : None, bool or callable
        Progress: a bar in a terminal for long runs, or ``progress(fraction, message)``
        once per integrator call (:mod:`acausal.progress`).
    """
    params, start = check_simulate_arguments(
        model, t_end, t_start=t_start, n_points=n_points, dt=dt, t_eval=t_eval, rtol=rtol,
        atol=atol, params=params, start=start, max_step=max_step, solver=solver,
        raise_on_failure=raise_on_failure, solver_options=solver_options)
    start_worker()  # (the native calls' thread: it starts while the model is built)
    if isinstance(model, CompiledModel):
        cm = model
    else:  # the start values' names, vectors and units, now that they are known
        cm = build(model)
        start = check_start(cm, start)
    params, start = _discrete_starts(cm, params, start)
    gc_was_enabled = gc.isenabled()
    gc.disable()  # no reference cycles are made here; avoid full scans of a large heap
    try:
        options = IntegratorOptions(
            rtol=rtol, atol=atol, max_step=max_step, mode=mode, dt=dt,
            extra=tuple(sorted((solver_options or {}).items())),
            # a chunk of a dynamic-selection run is short: a singular choice fails fast
            max_num_steps=5_000 if cm.selection.dynamic else 100_000)
        grid = _grid(t_start, t_end, n_points, dt, t_eval)
        p = cm.parameter_values(params)
        check_signal_ranges(cm, p, grid)  # (functions of time given for parameters)
        solver = choose_solver(cm, solver, p, grid, mode, rtol)
        check_solver_options(solver, solver_options)
        run = _Run(cm, _integrator(cm, solver, options), p, start)
        run.atol = atol
        run.progress = reporter(progress, what="simulate", span=(grid[0], grid[-1]))
        try:
            return run.run(grid, raise_on_failure)
        finally:
            run.progress.close()
    finally:
        if gc_was_enabled:
            gc.enable()


def _discrete_starts(cm: CompiledModel, params: dict[str, Any] | None,
                     start: dict[str, Any] | None
                     ) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """``start`` values of discrete variables moved to ``params``: the first value of a
    discrete variable is its value as a parameter of the continuous problem."""
    if not start:
        return params, start
    discrete = {q.name for q in cm.system.parameters if q.kind == "discrete"}
    given = {k: v for k, v in start.items() if k in discrete}
    if not given:
        return params, start
    both = [k for k in given if params and k in params]
    if both:
        from .errors import ArgumentError

        raise ArgumentError(
            f"{', '.join(both)} given both in start= and in params=: give the first value of "
            "a discrete variable once")
    rest = {k: v for k, v in start.items() if k not in discrete}
    return {**(params or {}), **given}, (rest or None)


_EVENT_EPS = 1e-12  # restart offset after a time event, relative to max(1, |t|)
_MAX_CHUNK = 64  # output intervals integrated in one call by the hybrid loop
# output intervals of the first call after a state event (then doubling): a new event
# may come soon (its integration beyond the crossing is discarded), and a short first
# call keeps the restart's small steps near the event (larger first chunks move event
# instants of stick-slip by 1e-9 s at rtol 1e-10, within the integration error but
# beyond what the examples' tests measure)
_AFTER_EVENT = 1
_SWITCH = 0.7  # re-select when another choice is better conditioned by 1/0.7
_NEAR_SWITCH = 0.9  # below this, integrate one check interval at a time
# the checks of a dynamic state choice (_Run._chunked): at most this many of the
# integrator's steps apart (the cartesian pendulum at rtol 1e-8 takes about 1 000 steps a
# second, 5 a check on 2 001 output points over 10 s), the first chunk's a fraction of the
# stretch apart, and this many check intervals integrated in one call
_CHECK_STEPS = 10
_FIRST_CHECKS = 500
_CHUNK_CHECKS = 20

_Piece = tuple[SemiExplicitDAE, Any, Any, np.ndarray, np.ndarray]  # DAE, X, Z, times, p


class _Checks:
    """The check points of a dynamic state choice (:meth:`_Run._chunked`): their spacing
    ``h`` and number per integrator call ``m``, and how a failed chunk is tried again."""

    def __init__(self, h: float, h_min: float) -> None:
        self.h, self.h_min, self.m = h, h_min, _CHUNK_CHECKS
        self.reselected = False  # since the last chunk that went through
        self.fallback = False  # the backend may change its method (IDAS: the error test)
        self.t = 0.0  # the last check reached, and the quality of the choice there
        self.quality = 1.0
        self.failed: tuple[float, float] | None = None  # (start, time) of the last failure

    def reached(self, t: float, quality: float) -> None:
        self.t, self.quality = t, quality

    def retry(self, chunk: np.ndarray, t_fail: float) -> bool:
        """The next try of a chunk that failed with the best choice of states at its
        start: up to the last check before the failure (a choice degrades before it turns
        singular, and the checks see it there), closer checks, and only then the
        backend's fallback (IDAS's error test on the states only would integrate through
        a singular choice: a four-bar's loop opened by 2e-4 m). False: nothing left.

        A failure again at the same time, one check after a check where the choice was
        still good, is not the choice's (a mechanism's dead point, where every choice is
        singular): the checks are not refined towards it (each refinement a failed call of
        up to the step limit, 5 s before a four-bar's toggle position)."""
        if self.fallback:  # (the last resort)
            return False
        again = (self.failed is not None and self.t > self.failed[0]
                 and abs(t_fail - self.failed[1]) <= self.h and t_fail - self.t <= self.h
                 and self.quality >= _NEAR_SWITCH)
        self.failed = (float(chunk[0]), t_fail)
        if not again:
            if len(chunk) > 2:
                before = int(np.count_nonzero(chunk[1:] < t_fail))
                self.m = max(1, before if before < len(chunk) - 1 else self.m // 4)
                return True
            if self.h > self.h_min:
                self.h = max(self.h_min, (chunk[1] - chunk[0]) / 4)
                return True
        self.fallback = True
        return True


class _Run:
    """One simulation: segments between time events, chunks for state re-selection."""

    def __init__(self, cm: CompiledModel, integ: Integrator, p: np.ndarray,
                 start: dict[str, float] | None) -> None:
        self.cm = cm
        self.integ = integ
        integ.start_run()
        self.p = p.copy()
        self.start = start
        self.stats = SimulationStats(solver=integ.name)
        self.t_fail: float | None = None
        self._calls: dict[int, Any] = {}  # one-point evaluators (pointcall.euler_gap)
        self.progress = reporter(False)
        self.atol = 1e-8

    def run(self, grid: np.ndarray, raise_on_failure: bool) -> Result:
        tic = _time.perf_counter()
        cm, stats = self.cm, self.stats
        dae, sel = cm.dae, cm.selection
        whens = cm.flat.whens
        check_regularity(cm, self.p)
        loop = None
        if dae.relations or whens:  # (the event loop is loaded by models that have events)
            from .hybrid import EventLoop

            loop = EventLoop(dae, self.integ, whens)
            loop.set_parameters(self.p)
        if loop is not None:
            init = self._initialize_hybrid(loop, grid[0])
        else:
            init = initialize(cm, self.p, grid[0], start=self.start)
        stats.initial_conditions, stats.defaulted_starts = init.conditions, init.defaulted
        x, z = init.x0, init.z0
        if sel.dynamic and self.integ.follows_state_selection:
            dae, x, z, sel = self._reselect(self._values(dae, x, z, grid[0]), grid[0], dae,
                                            x, z, sel)
        pieces: list[_Piece] = [(dae, x.reshape(-1, 1), z.reshape(-1, 1), grid[:1],
                                 self.p.copy())]
        t_end = float(grid[-1])
        end_gap = 4 * _EVENT_EPS * max(1.0, abs(t_end))
        # (searched a little beyond the end, so that an instant at the end is seen)
        events = self._time_events(dae, grid[0], t_end + 2 * end_gap,
                                   loop.timed_conditions() if loop is not None else [])
        if loop is not None:  # the clocks of sampled when clauses
            events = sorted(set(events) | set(loop.clock_instants(grid[0], t_end)))
        # an event at the end time is run there (as Modelica tools do) when it can change
        # a discrete state; every instant, those at the ends included, is a break of the
        # resolution check (the rates jump there)
        breaks = [e for e in events if e <= t_end + end_gap]
        at_end = loop is not None and any(abs(e - t_end) <= end_gap for e in events)
        events = [e for e in events if e < t_end - end_gap]
        events, grid = _with_events(grid, events)
        if events or at_end:
            stats.time_events = events + ([t_end] if at_end else [])
        bounds = [grid[0], *events, grid[-1]]
        status, message = "ok", ""
        t_left = float(grid[0])  # the time of x, z
        for s, (ta, tb) in enumerate(zip(bounds[:-1], bounds[1:], strict=True)):
            seg = grid[(grid >= ta) & (grid <= tb)]
            if s > 0:  # restart just after the event, algebraic variables on the new side
                seg = np.concatenate([[ta + _EVENT_EPS * max(1.0, abs(ta))], seg[1:]])
                if loop is not None:
                    from .hybrid import HybridState

                    try:
                        post = loop.time_event(HybridState(t_left, x, z, self.p), float(ta),
                                               float(seg[0]))
                    except SimulationError as exc:  # an action's value, chattering
                        status, message, self.t_fail = "failed", str(exc), float(ta)
                        break
                    x, z, self.p = post.x, post.z, post.p
                    # the instant is in the result twice, as at a state event: its left
                    # limit ends the last segment, the values after the event start this one
                    pieces.append((dae, x.reshape(-1, 1), z.reshape(-1, 1), seg[:1].copy(),
                                   self.p.copy()))
                else:  # (the last stretch ended at the event's left limit: see below)
                    x, z = _across(self._calls, dae, x, z, self.p, float(ta), float(seg[0]))
            if loop is not None:
                if s < len(bounds) - 2 or at_end:  # ends at a time event: stop at its left
                    # limit, where the time functions still have their old values
                    seg = seg.copy()
                    seg[-1] = tb - _EVENT_EPS * max(1.0, abs(tb))
                # the last stretch, when no time event ends it, runs a state event whose
                # crossing is at the end time (up to end_gap, as a time event's)
                status, message, new = self._hybrid(
                    loop, dae, x, z, seg, _MAX_CHUNK if s > 0 else 1,
                    end_gap if s == len(bounds) - 2 and not at_end else None)
            else:
                early = s < len(bounds) - 2  # ends at a time event: at its left limit, as
                # above (the time functions switched at tb: an explicit method's last stage
                # there failed its error test at every step length, and IDAS stepping to tb
                # lost a pulse of 1 ns); the point is kept as the instant itself (the
                # states move by 1e-12 s of their rates)
                if early:
                    seg = seg.copy()
                    seg[-1] = tb - _EVENT_EPS * max(1.0, abs(tb))
                status, message, new, dae, sel = self._segment(dae, x, z, seg, sel)
                if early and status == "ok" and new and new[-1][3][-1] == seg[-1]:
                    d, X, Z, T, pv = new[-1]
                    new[-1] = (d, X, Z, np.concatenate([T[:-1], [tb]]), pv)
            pieces += [b for b in new if len(b[3])]
            if status != "ok" or not new:
                break
            x, z, t_left = _last(new[-1][1]), _last(new[-1][2]), float(new[-1][3][-1])
        else:
            if at_end and loop is not None:  # the event at the end time: the result ends
                # with its values after it (the left limit 1e-12 s before)
                from .hybrid import HybridState

                try:
                    post = loop.time_event(HybridState(t_left, x, z, self.p), t_end, t_end)
                    self.p = post.p
                    pieces.append((dae, post.x.reshape(-1, 1), post.z.reshape(-1, 1),
                                   np.array([t_end]), self.p.copy()))
                except SimulationError as exc:
                    status, message, self.t_fail = "failed", str(exc), t_end
        t_all = np.concatenate([b[3] for b in pieces])
        p = self.p
        evaluate = _LazyOutputs(pieces)

        if stats.segments:
            stats.integration_mode = stats.segments[-1].mode
        # the output points can miss motion only where the integrator took more steps
        # than there are output intervals; with fewer, the grid is finer than its steps,
        # whose interpolants meet the tolerances (and the check, one evaluation of the
        # model per point, would cost more than the integration)
        steps = sum(s.steps for s in stats.segments)
        coarse = steps == 0 or steps >= len(t_all) - 1
        if status == "ok" and self.integ.follows_state_selection and coarse:
            # (the check's module loads here: a cold script's run often skips it)
            from .resolution import unresolved_states, warn_unresolved

            stats.unresolved = unresolved_states(pieces, self.atol, breaks)
            warn_unresolved(stats.unresolved, len(t_all) - 1, stacklevel=user_stacklevel() + 1)
        stats.wall_time = _time.perf_counter() - tic
        if loop is not None:
            stats.events = loop.events
        params = dict(zip(cm.dae.p_names, p.tolist(), strict=True))
        for q in _discrete_parameters(cm):
            del params[q]
        declared = _declared_ranges(cm)
        if declared:
            index = dae.out_index
            ranges = {index[n]: r for n, r in declared.items() if n in index}
        # (the model's index, shared by its results, formed when a result first needs it)
        res = Result(t_all, dae.out_names, dae.out_sizes, evaluate, params, status=status,
                     message=message, stats=stats, index=_OutIndex(dae),
                     ranges=ranges if declared else None)
        res._unit_of = UnitLookup.of(cm)  # (for the plots' axes)
        if cm._structural:
            res._structural = {n: a for n, (a, _) in cm._structural.items()}
        if cm.domain_pass("frame") is not None:  # (loops whose removed rows did not hold)
            cm.domain_pass("frame").check_closure(res, stacklevel=4)  # type: ignore[union-attr]
        if status == "failed" and raise_on_failure:
            raise SimulationError(message, partial=res, t_fail=self.t_fail
                                  if self.t_fail is not None else float(t_all[-1]))
        return res

    # ----- pieces -----
    def _segment(self, dae: SemiExplicitDAE, x0: np.ndarray, z0: np.ndarray, grid: np.ndarray,
                 sel: StateSelection) -> tuple[str, str, list[_Piece], SemiExplicitDAE,
                                               StateSelection]:
        """One smooth segment: a single backend call when the state choice is static,
        chunks checked for re-selection otherwise."""
        if not sel.dynamic or not self.integ.follows_state_selection:
            try:
                seg = self.integ.integrate(dae, self.p, x0, z0, grid)
            except IntegrationFailure as exc:
                pieces = [self._piece(dae, exc.partial)] if exc.partial is not None else []
                self.t_fail = exc.t_fail
                return "failed", self._failure(exc), pieces, dae, sel
            return "ok", "", [self._piece(dae, seg)], dae, sel
        return self._chunked(dae, x0, z0, grid, sel)

    def _piece(self, dae: SemiExplicitDAE, seg: Segment) -> _Piece:
        self.stats.segments.append(seg.stats)
        if len(seg.t):
            self.progress.at_time(float(seg.t[-1]))
        return (dae, seg.x, seg.z, seg.t, self.p.copy())

    # ----- hybrid models -----
    def _initialize_hybrid(self, loop: EventLoop, t0: float) -> Any:
        """Initial values with the relations evaluated live (:func:`hybrid.initial_mode`);
        the states after the initial event (a tick's reinit)."""
        from .hybrid import initial_mode

        post, init = initial_mode(self.cm, loop, self.p, t0, self.start)
        init.x0, init.z0, self.p = post.x, post.z, post.p
        return init

    def _hybrid(self, loop: EventLoop, dae: SemiExplicitDAE, x: np.ndarray, z: np.ndarray,
                grid: np.ndarray, first: int = 1,
                end_gap: float | None = None) -> tuple[str, str, list[_Piece]]:
        """A segment between time events, stopping at every state event (see
        :mod:`acausal.hybrid`). Output intervals go to the integrator in chunks that double
        while no event happens (:data:`_AFTER_EVENT` output intervals right after a state
        event). A stretch that starts at a time event starts with ``first`` output
        intervals, the largest chunk: a PWM's stretch between two edges is then one
        integrator call instead of one per doubling. (The run's start keeps one output
        interval: it saves a few calls only, and IDAS's larger steps would change which
        spurious zero crossings a stiff indicator shows at a loose tolerance, such as the
        rectifier's diode current through Ron = 1e-5 Ohm at rtol 1e-6.)"""
        from .hybrid import HybridState, warn_zeno

        pieces: list[_Piece] = []
        s = HybridState(float(grid[0]), x, z, self.p)
        span = float(grid[-1] - grid[0])
        k, m = 1, first  # next output point, chunk size in output intervals
        while k < len(grid):
            outs = grid[k: k + m]
            if s.t > outs[0] - 1e-14 * max(1.0, abs(outs[0])):  # an event at an output point
                outs = outs[1:] if len(outs) > 1 else outs
                if s.t >= outs[0]:
                    k += 1
                    continue
            try:
                reached, pre, s = loop.advance(s, outs)
            except IntegrationFailure as exc:
                self.t_fail = exc.t_fail
                self.p = s.p
                self.stats.segments.append(loop.take_work())
                got = getattr(exc, "reached", None)  # the output points before the failure
                if got is not None and len(got.t):
                    pieces.append((dae, got.x, got.z, got.t, got.p.copy()))
                return "failed", self._failure(exc), pieces
            except SimulationError as exc:  # chattering, an action's value at an event
                self.t_fail = s.t
                self.p = s.p
                self.stats.segments.append(loop.take_work())
                got, pre = getattr(exc, "reached", None), getattr(exc, "pre", None)
                if got is not None and len(got.t):
                    pieces.append((dae, got.x, got.z, got.t, got.p.copy()))
                if pre is not None:  # the failure is at this event: its left limit
                    self.t_fail = pre.t
                    pieces.append((dae, pre.x.reshape(-1, 1), pre.z.reshape(-1, 1),
                                   np.array([pre.t]), pre.p.copy()))
                return "failed", str(exc), pieces
            if len(reached.t):
                pieces.append((dae, reached.x, reached.z, reached.t, reached.p.copy()))
                self.progress.at_time(float(reached.t[-1]))
            k += len(reached.t)
            if pre is None:
                m = min(2 * m, _MAX_CHUNK)
                continue
            m = _AFTER_EVENT
            self.stats.segments.append(loop.take_work())  # one stretch per event
            for st in (pre, s):  # the event instant twice: before and after
                pieces.append((dae, st.x.reshape(-1, 1), st.z.reshape(-1, 1),
                               np.array([st.t]), st.p.copy()))
            zeno = loop.zeno(s.t, span)
            if zeno is not None:
                warn_zeno(zeno)
                self.p = s.p
                return "stopped", zeno, pieces
        if end_gap is not None:  # a state event at the end time (see EventLoop.end_event)
            try:
                post = loop.end_event(s, end_gap)
            except SimulationError as exc:  # chattering, an action's value at the event
                self.t_fail, self.p = s.t, s.p
                self.stats.segments.append(loop.take_work())
                return "failed", str(exc), pieces
            if post is not None:  # the end time twice: before the event (the last output
                # point, in the result already) and after it
                pieces.append((dae, post.x.reshape(-1, 1), post.z.reshape(-1, 1),
                               np.array([post.t]), post.p.copy()))
                s = post
        self.p = s.p
        self.stats.segments.append(loop.take_work())
        return "ok", "", pieces

    def _chunked(self, dae: SemiExplicitDAE, x0: np.ndarray, z0: np.ndarray,
                 grid: np.ndarray, sel: StateSelection):
        """Integrate in chunks, checking the state choice at check points: the output
        points, and points between them where these are farther apart than about
        :data:`_CHECK_STEPS` of the integrator's steps (so the checks do not depend on the
        output grid: a choice that turns singular between two coarse output points took
        the integrator thousands of steps, or its limit of steps per output interval).
        The result holds the output points only.

        A chunk that fails (the choice became singular between two checks) is retried
        from its start with the best choice there, then (:meth:`_Checks.retry`) up to the
        check before the failure, with check points closer together, and only then with
        the backend's fallback method.
        """
        pieces: list[_Piece] = []
        span = float(grid[-1] - grid[0])
        c = _Checks(h=span / _FIRST_CHECKS, h_min=span * 1e-9)
        t, k = float(grid[0]), 1  # the time of x0, z0; the next output point
        while k < len(grid):
            chunk, out = _check_points(t, grid, k, c.h, c.m)
            try:
                seg = self.integ.integrate(dae, self.p, x0, z0, chunk,
                                           allow_fallback=c.fallback)
            except IntegrationFailure as exc:
                if not c.reselected:  # first answered by choosing the states again
                    c.reselected = True
                    states = sel.states
                    dae, x0, z0, sel = self._reselect(self._values(dae, x0, z0, t), t, dae,
                                                      x0, z0, sel)
                    if sel.states != states:
                        continue
                if c.retry(chunk, exc.t_fail):
                    continue
                if exc.partial is not None and len(exc.partial.t):
                    n = len(exc.partial.t)
                    pieces.append(self._piece(dae, _only(exc.partial, out[:n])))
                self.t_fail = exc.t_fail
                return "failed", self._failure(exc), pieces, dae, sel
            c.reselected = c.fallback = False
            X, Z, T = seg.x, seg.z, seg.t
            if len(T) >= 4 and seg.stats.steps:
                # the spacing from the steps a chunk of several checks took (a chunk's
                # first steps, the integrator's restart, make it low by a few percent:
                # only a change by more than twice is followed, or the spacing would
                # shrink chunk after chunk)
                est = _CHECK_STEPS * float(T[-1] - chunk[0]) / seg.stats.steps
                if not c.h / 2 <= est <= 2 * c.h:
                    c.h = max(c.h_min, est)
            vals = _outputs(dae, X, Z, T, self.p, only_variables=True)
            keep, degraded, quality = len(T), False, 1.0
            for q in range(len(T)):
                quality = sel.worst_quality(vals[q], self.p, float(T[q]))
                if quality < _SWITCH:
                    keep, degraded = q + 1, True
                    break
            seg.x, seg.z, seg.t = X[:, :keep], Z[:, :keep], T[:keep]
            # approaching a switch: one check interval at a time
            c.m = 1 if (not degraded and quality < _NEAR_SWITCH) else _CHUNK_CHECKS
            x0, z0, t = _last(seg.x), _last(seg.z), float(seg.t[-1])
            c.reached(t, 1.0 if degraded else quality)
            pieces.append(self._piece(dae, _only(seg, out[:keep])))
            if degraded:
                dae, x0, z0, sel = self._reselect(vals[keep - 1], t, dae, x0, z0, sel)
            k += int(np.count_nonzero(out[:keep]))
        return "ok", "", [b for b in pieces if len(b[3])], dae, sel

    def _failure(self, exc: IntegrationFailure) -> str:
        return _failure_message(self.integ.name.upper(), exc, self.integ.options)

    def _values(self, dae: SemiExplicitDAE, x: np.ndarray, z: np.ndarray,
                t: float) -> np.ndarray:
        """Every equation-system variable at one consistent point."""
        return _outputs(dae, x.reshape(-1, 1), z.reshape(-1, 1), np.array([t]), self.p,
                        only_variables=True)[0]

    def _reselect(self, values: np.ndarray, t: float, dae: SemiExplicitDAE, x0: np.ndarray,
                  z0: np.ndarray, sel: StateSelection):
        """Choose the dummy derivatives again at a consistent point; switch DAE if needed."""
        new = select_states(self.cm.system, values, self.p, t)
        if new.states == sel.states:
            return dae, x0, z0, new
        self.stats.reselections += 1
        d2 = self.cm.dae_for(new.states)
        name_val = {v.name: values[k] for k, v in enumerate(self.cm.system.variables)}
        x1 = np.array([name_val[n] for n in d2.x_names])
        z1 = np.array([name_val[n] for n in d2.z_names])
        return d2, x1, z1, new

    def _time_events(self, dae: SemiExplicitDAE, t0: float, t1: float,
                     conditions: list[cs.SX] | None = None) -> list[float]:
        """Time events of the model with these parameter values (cached on the model).

        Searched in the equations and in the indicators of the frozen relations, as the
        alias elimination and causalisation wrote them in ``(x, z, p, t)``: a function of
        time that reaches a relation through signal ports (a pulse driving a switch's
        control) leaves no trace of time in the equations, whose relation is frozen, but
        its indicator is that function, and where it jumps or crosses zero (``g < 0``
        changes) is a known instant. The ``conditions`` of when clauses that depend on
        time are searched too (``when(time > 0.3, ...)`` fires at a time event)."""
        cache = self.cm.run_cache
        key = (id(dae), self.p.tobytes(), t0, t1)
        if key not in cache.time_events:
            if not depends_on_time(dae) and not conditions:
                cache.time_events[key] = []
            else:
                exprs = cs.vertcat(dae.ode, dae.alg)
                if dae.indicators is not None and dae.indicators.numel():
                    exprs = cs.vertcat(exprs, dae.indicators < 0)
                pv = cs.DM(self.p) if dae.p.numel() else cs.DM(0, 1)
                f = cs.Function("rhs", [dae.x, dae.z, dae.t], [
                    cs.substitute(exprs, dae.p, pv)])
                from .events import time_events  # (loaded by models with time functions)

                found = set(time_events(f, 2, t0, t1))
                found.update(self._crossings_of_time(dae, t0, t1))
                if conditions:
                    # the relations' and discrete variables' values stay symbols: a
                    # condition such as `relation[0] && 0.7 < time` would fold to 0 with
                    # the values at the start
                    mask = np.ones(len(dae.p_names), dtype=bool)
                    mask[[dae.p_names.index(n) for n in _discrete_parameters(self.cm)
                          if n in dae.p_names]] = False
                    keep = np.flatnonzero(mask).tolist()
                    user = cs.vertcat(*[dae.p[k] for k in keep]) if keep else cs.SX(0, 1)
                    held = cs.vertcat(*[dae.p[k] for k in np.flatnonzero(~mask).tolist()]) \
                        if (~mask).any() else cs.SX(0, 1)
                    g = cs.Function("conditions", [held, dae.t], [cs.substitute(
                        cs.vertcat(*conditions), user, cs.DM(self.p[keep]))])
                    found.update(time_events(g, 1, t0, t1))
                cache.time_events[key] = sorted(found)
        return list(cache.time_events[key])


    def _crossings_of_time(self, dae: SemiExplicitDAE, t0: float, t1: float) -> list[float]:
        """The crossings of the indicators that are functions of time (and the user's
        parameters) only but not affine in it (``sin(w t) > 0.99``, or a sine reaching a
        relation through ports): known in advance, searched along time
        (:func:`~acausal.events.crossings`), so that the integration stops at each, however
        coarse the output grid (watched at a few points per output interval, a fast
        oscillation would be missed)."""
        from .relations import affine_in_time

        g_all = dae.indicators
        if g_all is None or not g_all.numel():
            return []
        held = set(_discrete_parameters(self.cm))
        pv = cs.DM(self.p) if dae.p.numel() else cs.DM(0, 1)
        out: list[float] = []
        for k, rel in enumerate(dae.relations):
            g = g_all[k]
            if (not cs.depends_on(g, dae.t) or (dae.x.numel() and cs.depends_on(g, dae.x))
                    or (dae.z.numel() and cs.depends_on(g, dae.z))
                    or {s.name() for s in cs.symvar(g)} & held or affine_in_time(g, dae.t)):
                continue
            g = cs.substitute(g, dae.p, pv) if dae.p.numel() else g
            d1 = cs.jacobian(g, dae.t)
            fun = cs.Function("g", [dae.t], [cs.vertcat(g, d1, cs.jacobian(d1, dae.t))])
            from .events import crossings

            found, complete = crossings(fun, t0, t1)
            out += found
            if not complete:
                warnings.warn(
                    f"the relation {rel.text} [{', '.join(rel.components)}] is a function "
                    f"of time that changes sign too often to be located in advance from "
                    f"t = {t0:g} s to {t1:g} s (the search stopped after "
                    f"{len(found)} crossings, at the step limit); its later crossings are "
                    "watched at the output points only and may be missed: ask for more "
                    "output points, or make it a function of a state", SolverWarning,
                    stacklevel=user_stacklevel())
        return out


def _discrete_parameters(cm: CompiledModel) -> list[str]:
    """The names of the parameters that are not the user's (frozen relations, discrete
    variables: they change at events), kept per model."""
    got = _DISCRETE.get(cm)
    if got is None:
        got = _DISCRETE[cm] = [q.name for q in cm.system.parameters if q.discrete]
    return got


_DISCRETE: weakref.WeakKeyDictionary[CompiledModel, list[str]] = weakref.WeakKeyDictionary()


def _with_events(grid: np.ndarray, events: list[float]) -> tuple[list[float], np.ndarray]:
    """The time events and the output grid with them as points. Instants closer than a
    few restart offsets (:data:`_EVENT_EPS`) are one: an event that near the start or the
    end of the run is dropped, an output point or another event that near an event is
    that event (round-off makes ``k * dt`` and ``start + k * interval`` differ by 1e-17;
    the run would otherwise stop just before an instant it has passed)."""
    def near(a: np.ndarray, b: float) -> np.ndarray:
        return np.abs(a - b) <= 4 * _EVENT_EPS * np.maximum(1.0, np.abs(b))

    kept: list[float] = []
    for e in sorted(events):
        if near(grid[[0, -1]], e).any() or (kept and near(np.array(kept[-1:]), e).any()):
            continue
        kept.append(float(e))
    if not kept:
        return [], grid
    inner = grid[1:-1]
    ev = np.array(kept)
    j = np.clip(np.searchsorted(ev, inner), 1, len(ev)) - 1  # the events either side
    close = np.zeros(len(inner), dtype=bool)
    for k in (j, np.minimum(j + 1, len(ev) - 1)):
        close |= np.abs(inner - ev[k]) <= 4 * _EVENT_EPS * np.maximum(1.0, np.abs(ev[k]))
    grid = np.union1d(np.concatenate([grid[:1], inner[~close], grid[-1:]]), ev)
    return kept, grid


def _outputs(dae: SemiExplicitDAE, X: Any, Z: Any, T: np.ndarray, p: np.ndarray,
             only_variables: bool = False) -> np.ndarray:
    """Outputs at the given times, ``(nt, n_out)`` (CasADi evaluates all columns)."""
    f = dae.variables_function() if only_variables else dae.output_function()
    return f(X, Z, p.reshape(-1, 1), T.reshape(1, -1)).full().T


#: the most pieces a result reads a name from piece by piece (more: joined first)
_APART = 4


class _LazyOutputs:
    """A result's outputs, computed from the integrated pieces when read: one name at a
    time (its own function of the inputs it depends on, over all time points at once: by
    CasADi, or as numpy calls over the grid), a block of consecutive outputs together
    (:meth:`rows`), or all together when a table of everything is asked for."""

    def __init__(self, pieces: list[_Piece]) -> None:
        self.pieces = pieces
        self._joined = False

    def _join(self) -> list[_Piece]:
        """The pieces with consecutive ones of the same system and parameter values
        joined (the start point and the segment after it, chunks of one stretch): one
        evaluation of a name per stretch (it builds a function of the name's inputs)."""
        if not self._joined:
            runs: list[tuple[SemiExplicitDAE, list[Any], list[Any], list[np.ndarray],
                             np.ndarray]] = []
            for dae, X, Z, T, p in self.pieces:
                if runs and runs[-1][0] is dae and np.array_equal(runs[-1][4], p):
                    runs[-1][1].append(X)
                    runs[-1][2].append(Z)
                    runs[-1][3].append(T)
                else:
                    runs.append((dae, [X], [Z], [T], p))
            self.pieces = [(dae, _hstack(Xs), _hstack(Zs), np.concatenate(Ts), p)
                           for dae, Xs, Zs, Ts, p in runs]
            self._joined = True
        return self.pieces

    def _runs(self) -> list[tuple[SemiExplicitDAE, int]]:
        """``(system, points)`` of the stretches :meth:`_join` makes (without joining)."""
        runs: list[tuple[SemiExplicitDAE, int]] = []
        last = np.zeros(0)
        for dae, _, _, T, p in self.pieces:
            if runs and runs[-1][0] is dae and np.array_equal(last, p):
                runs[-1] = (dae, runs[-1][1] + len(T))
            else:
                runs.append((dae, len(T)))
            last = p
        return runs

    def column(self, k: int) -> np.ndarray:
        # (a result of a few pieces, the start point and its segment most often, is read
        # piece by piece: joining them copies every state, 0.3 s and 260 MB for 1 000
        # masses on 20 001 points, which one name does not need)
        pieces = self.pieces if len(self.pieces) <= _APART else self._join()
        parts = [b[0].output_column(k, b[1], b[2], b[4], b[3]) for b in pieces]
        return parts[0] if len(parts) == 1 else np.vstack(parts)

    def rows(self, start: int, stop: int) -> np.ndarray:
        """Output columns ``start:stop`` over the grid, ``(nt, stop - start)``: those of
        :meth:`matrix`, bit for bit, without the others."""
        pieces = self._join()
        if len(getattr(self, "_prepared", ())) != len(pieces):
            # (what the blocks of a piece read of its states, made by the first: a copy)
            self._prepared: list[dict[str, Any]] = [{} for _ in pieces]
        parts = [b[0].grid_outputs.evaluate_rows(start, stop, b[1], b[2], b[4], b[3], ready)
                 for b, ready in zip(pieces, self._prepared, strict=True)]
        for i, ready in enumerate(self._prepared):
            W = ready.get("stacked")  # (the states stacked: the piece's become views of it)
            dae, X, _, T, p = pieces[i]
            if W is not None and getattr(X, "base", None) is not W:
                nx = np.size(X) // max(len(T), 1)
                pieces[i] = (dae, W[:nx], W[nx:], T, p)
        return parts[0] if len(parts) == 1 else np.vstack(parts)

    def read_seconds(self, k: int) -> float:
        """What a read of output ``k`` alone cost, by the estimate of
        :mod:`acausal.grid_outputs` (deterministic: no timing), per stretch of one system."""
        return sum(grid_outputs.read_seconds(dae, k, nt) for dae, nt in self._runs())

    def matrix(self) -> np.ndarray:
        # one (n_out, nt) table filled piece by piece, returned transposed (a view: no
        # copy of what can be hundreds of megabytes)
        pieces = self._join()  # (the start point and its segment: one table, no copy)
        plans = [b[0].grid_outputs for b in pieces]
        if len(plans) == 1:  # (the product's table itself: no copy)
            b = pieces[0]
            return plans[0].evaluate(b[1], b[2], b[4], b[3])
        nts = [len(b[3]) for b in pieces]
        table = np.empty((plans[0].n_out if plans else 0, sum(nts)))
        k = 0
        for plan, b, nt in zip(plans, pieces, nts, strict=True):
            plan.evaluate(b[1], b[2], b[4], b[3], out=table[:, k:k + nt])
            k += nt
        return table.T


class _OutIndex:
    """``dae.out_index``, formed when called: a result's index, shared by the model's
    results (a saved result leaves it out, :func:`acausal.persist.result_state`)."""

    __slots__ = ("dae",)

    def __init__(self, dae: SemiExplicitDAE) -> None:
        self.dae = dae

    def __call__(self) -> dict[str, int]:
        return self.dae.out_index


def _declared_ranges(cm: CompiledModel) -> dict[str, tuple[Any, Any, str]]:
    """``name -> (min, max, unit)`` of the unknowns whose declaration bounds them
    (``Variable(min=0)``), found once per model."""
    got = _RANGES.get(cm)
    if got is None:
        got = _RANGES[cm] = {
            v.name: (d.min, d.max, d.unit) for v in cm.flat.variables
            if (d := v.decl) is not None and (d.min is not None or d.max is not None)}
    return got


_RANGES: weakref.WeakKeyDictionary[CompiledModel, dict[str, tuple[Any, Any, str]]] = (
    weakref.WeakKeyDictionary())


def _hstack(Ms: list[Any]) -> Any:
    """Matrices (CasADi or numpy) side by side, as one numpy matrix."""
    if len(Ms) == 1:
        return Ms[0]
    return np.hstack([M.full() if hasattr(M, "full") else np.asarray(M, dtype=float)
                      for M in Ms])


def _last(M: Any) -> np.ndarray:
    """Last column of a CasADi or numpy matrix, as a flat numpy array."""
    return np.asarray(M[:, -1]).ravel() if M.shape[0] else np.zeros(0)


def _across(calls: dict[int, Any], dae: SemiExplicitDAE, x: np.ndarray, z: np.ndarray,
            p: np.ndarray, t: float, t1: float) -> tuple[np.ndarray, np.ndarray]:
    """The states carried across the time event at ``t``, from its left limit (as far
    before ``t`` as ``t1`` is after it) to ``t1``, with consistent algebraic variables
    there: each gap by an Euler step at the rates of its own side, as
    :meth:`acausal.hybrid.EventLoop.time_event` crosses them (left out, the gaps dropped
    2e-12 s of every input's level, 0.2 % of a pulse of 1 ns)."""
    x_event = euler_gap(calls, dae, x, z, p, 2 * t - t1, t1 - t)
    z1 = consistent_algebraic(dae, x_event, z, p, t1)
    x1 = euler_gap(calls, dae, x_event, z1, p, t1, t1 - t)
    return x1, consistent_algebraic(dae, x1, z1, p, t1)


def _check_points(t: float, grid: np.ndarray, k: int, h: float, m: int
                  ) -> tuple[np.ndarray, np.ndarray]:
    """The next ``m`` check points after ``t`` (with ``t`` first): the output points from
    ``grid[k]`` on, and points evenly between two of them (``t`` and ``grid[k]`` the first
    two) that are more than ``h`` apart; and which of the points after ``t`` are output
    points."""
    points, out = [t], []
    a = t
    for b in grid[k:].tolist():
        n = int(np.ceil((b - a) / h)) if b - a > h else 1
        for i in range(1, n):
            points.append(a + (b - a) * i / n)
            out.append(False)
            if len(out) == m:
                return np.array(points), np.array(out, dtype=bool)
        points.append(b)
        out.append(True)
        if len(out) == m:
            break
        a = b
    return np.array(points), np.array(out, dtype=bool)


def _only(seg: Segment, out: np.ndarray) -> Segment:
    """``seg`` at the points ``out`` marks (its output points: not the checks between)."""
    if out.all():
        return seg
    at = np.flatnonzero(out)
    return Segment(seg.t[at], _columns(seg.x, at), _columns(seg.z, at), seg.stats)


def _columns(M: Any, at: np.ndarray) -> Any:
    return M[:, at.tolist()] if hasattr(M, "full") else np.asarray(M)[:, at]


#: where a failed run's result is (the command line says where it put it instead)
PARTIAL_NOTE = " The result up to the last output point before the failure is in .partial."


def _failure_message(solver: str, exc: IntegrationFailure,
                     options: IntegratorOptions | None = None) -> str:
    # (each line once: the attempts of the integration modes may print the same one)
    said = "\n".join(dict.fromkeys(ln for ln in exc.solver_output.splitlines() if ln.strip()))
    lines = said.splitlines()
    if len(lines) > 12:
        said = "\n".join(lines[:6] + [f"... ({len(lines) - 12} lines)"] + lines[-6:])
    explained = any(w in exc.reason for w in ("blow-up", "NaN", "infinite", "beyond what"))
    h = options.max_step if options is not None else None
    step_limit = ""
    if h is not None and any(w in exc.reason + exc.solver_output for w in (
            "TOO_MUCH_WORK", "mxstep", "too much work", "steps taken")):
        assert options is not None
        n = options.max_num_steps
        step_limit = (
            f" With max_step = {h:g} s the integrator gets at most {n * h:.3g} s from one "
            f"output point to the next (it stops after {n} steps): the step limit, not the "
            "model, is the likely cause. Give a larger max_step (about the duration of the "
            "sharpest transition), or more output points (the limit is per output interval).")
        explained = True
    return (f"{solver} failed at t = {exc.t_fail:.6g} s: {exc.reason}.{PARTIAL_NOTE}"
            + step_limit
            + ("" if explained else
               " Typical causes: a singularity of the model (a mechanism reaching a dead "
               "point, a division by zero), an inconsistent input, tolerances too loose, or "
               "tolerances too tight for the conditioning of the algebraic equations"
               + (f" (this run: rtol={options.rtol:g}, atol={options.atol:g}; an atol "
                  "below the rounding of large algebraic variables, such as joint forces "
                  "of 100 N at atol 1e-10, fails so: try a larger atol)"
                  if options is not None else "") + ".")
            + (f"\nWhat the integrator reported:\n{said}" if said else ""))
