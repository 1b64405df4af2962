"""State events: integrating a model with frozen relations (Modelica's event semantics).

Between events every relation of the model keeps its value (:mod:`acausal.relations`), so
the DAE the integrator sees is smooth. The run advances one output interval at a time,
watching the relations' indicators at a few points inside it; where a relation's live
value differs from its frozen one, the crossing is located (Illinois' method on the
indicator, each trial point integrated from the last point before the crossing), the
integration stops there and the *event iteration* runs:

1. the relations that crossed take their new value;
2. the algebraic variables are solved again (the states are continuous);
3. every relation is evaluated again at the new point; where one disagrees (beyond a small
   band around zero) it changes too, and 2-3 repeat until nothing changes.

A relation that keeps changing at the same instant is *chattering* (an error naming it);
events that accumulate (a ball bouncing to rest) are *Zeno* behaviour: the run stops at the
accumulation point with a warning. Every event is logged (:class:`Event`, ``res.events``),
and the result has the instant twice, with the values before and after.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import casadi as cs
import numpy as np

from .discrete import Sample
from .errors import SimulationError, SolverWarning, user_stacklevel
from .exprtext import expression_text, readable
from .initialize import InitialValues, consistent_algebraic, initialize
from .pointcall import PointCall, euler_gap, point_call
from .solvers.base import IntegrationFailure, Segment, SegmentStats

if TYPE_CHECKING:
    from .dae import SemiExplicitDAE
    from .flatten import WhenClause
    from .solvers.base import Integrator

__all__ = ["Event", "HybridState", "Reached", "EventLoop", "SAMPLES", "warn_zeno",
           "initial_mode"]

#: indicator checks per output interval (besides its ends)
SAMPLES = 4
_MAX_ITERATIONS = 50  # event iterations at one instant before calling it chattering
_ZENO_EVENTS = 10  # shrinking intervals between events of one relation: Zeno
#: a steady accumulation stops the run once its point is this near (relative to the run)...
ZENO_LEFT = 1e-3
#: ...or, for the events of a clause that chooses a mode from the state (a mass that rests
#: on its stop when the impact is slow enough, see :func:`choosing`), this near: the
#: chosen mode usually ends them long before, and below about 1e-8 the events are lost in
#: the integrator's tolerances (measured: a ball bouncing on a stop without rest, default
#: tolerances, ran on for minutes at 1e-8 and stopped cleanly at 1e-7, above the floor)
ZENO_LEFT_CHOOSING = 1e-6
_BAND = 1e-10  # |g| below BAND * (1 + scale) does not flip a relation during iteration
_MIN_STEP = 1e-8  # s (relative to max(1, |t|)): shorter advances are explicit Euler steps


@dataclass
class Event:
    """One event of a run.

    Attributes
    ----------
    t : float
        Its time [s].
    kind : str
        ``"state"`` (a relation's indicator crossed zero), ``"time"`` (a known instant)
        or ``"initial"``.
    changes : list of str
        The relations that changed, as written, with their new values.
    components : list of str
        The components they belong to.
    iterations : int
        Event iterations until nothing changed.
    """

    t: float
    kind: str
    changes: list[str] = field(default_factory=list)
    components: list[str] = field(default_factory=list)
    iterations: int = 0

    def __str__(self) -> str:
        what = "; ".join(self.changes) or "no relation changed"
        # (a when clause's change already ends with its component, "... [ctrl]")
        rest = [c for c in self.components if not any(ch.endswith(f"[{c}]")
                                                      for ch in self.changes)]
        comps = f" [{', '.join(rest)}]" if rest else ""
        return f"t = {self.t:.9g} s, {self.kind} event: {what}{comps}"


@dataclass
class Reached:
    """Output points reached in one call: times and the states there (columns)."""

    t: np.ndarray
    x: Any
    z: Any
    p: np.ndarray


@dataclass
class HybridState:
    """Where a hybrid run is: time, states, algebraic variables, parameters with the
    relations' values."""

    t: float
    x: np.ndarray
    z: np.ndarray
    p: np.ndarray


@dataclass
class _Action:
    """One action of a when clause, on a state (reinit) or a discrete parameter."""

    kind: str  # "reinit" (index in x) or "assign" (index in p)
    index: int
    target: str
    value: cs.Function  # (values of `names`, values of `pre_names` before, p, t) -> value
    names: list[str]
    pre_names: list[str]
    level: int = 0  # the order of evaluation at an event (see action_levels)


@dataclass
class _When:
    """A when clause compiled for one DAE."""

    origin: str
    text: str
    condition: cs.Function | None  # (p, t) -> value (true when > 0.5); None: a clock
    clock: Sample | None
    actions: list[_Action]
    expr: cs.SX | None = None  # the condition in (p, t) (its time events are searched)
    initial: bool = False  # runs at initialisation too, where its condition holds
    clock_of_p: cs.Function | None = None  # p -> (start, interval) of a clock of parameters
    symbolic_clock: Sample | None = None  # that clock as written


def compile_whens(dae: SemiExplicitDAE, whens: list[WhenClause]) -> list[_When]:
    """The when clauses as functions of the DAE's parameters (relation and discrete
    values), named outputs and ``pre`` values."""
    out: list[_When] = []
    values: list[cs.SX] = []  # every action's value as written, in order
    p_sym = {dae.p_names[k]: dae.p[k] for k in range(len(dae.p_names))}
    x_pos = {n: k for k, n in enumerate(dae.x_names)}
    for w in whens:
        cond_f, clock = None, None
        if isinstance(w.condition, Sample):
            clock, text = w.condition, f"sample({w.condition.start}, {w.condition.interval})"
        else:
            text = _condition_text(w.condition, dae.relations, getattr(w, "source", None))
            extra = [s for s in cs.symvar(w.condition)
                     if s.name() not in p_sym and s.name() != dae.t.name()]
            if extra:
                raise SimulationError(
                    f"{w.origin}: the condition of a when() depends on "
                    f"{', '.join(s.name() for s in extra)} without a relation the library can "
                    "watch; write it as a comparison of the model's variables (h < 0)")
            cond_f = cs.Function("when_condition", [dae.p, dae.t], [w.condition])
        actions = []
        for target, kind, value in w.actions:
            if kind == "reinit":
                if target in x_pos:
                    index = x_pos[target]
                else:  # an alias of a state: the state takes what makes the alias `value`
                    index, value = _reinit_through_alias(dae, w.origin, target, value)
            else:
                index = dae.p_names.index(target)
            values.append(cs.SX(value))
            syms = cs.symvar(value)
            pres = [s for s in syms if s.name().startswith("pre(")]
            vals = [s for s in syms if s.name() in dae.out_index]
            fn = cs.Function("action", [cs.vertcat(*vals) if vals else cs.SX(0, 1),
                                        cs.vertcat(*pres) if pres else cs.SX(0, 1),
                                        dae.p, dae.t], [value])
            actions.append(_Action(kind, index, target, fn, [s.name() for s in vals],
                                   [s.name()[4:-1] for s in pres]))
        clock_of_p = None
        if clock is not None and clock.symbolic:
            clock_of_p = cs.Function("clock", [dae.p], [cs.SX(clock.start),
                                                         cs.SX(clock.interval)])
        out.append(_When(w.origin, text, cond_f, clock, actions,
                         None if clock is not None else cs.SX(w.condition),
                         bool(getattr(w, "initial", False)), clock_of_p,
                         clock if clock_of_p is not None else None))
    acts = [a for w in out for a in w.actions]
    for a, level in zip(acts, action_levels(dae, [(a.kind, a.index) for a in acts], values),
                        strict=True):
        a.level = level
    return out


def action_levels(dae: SemiExplicitDAE, targets: list[tuple[str, int]],
                  values: list[cs.SX]) -> list[int]:
    """The order in which the actions of the when clauses that fire at one instant are
    evaluated: level by level, each action after those whose targets its value reads.

    The clauses of one event are synchronous (Modelica's semantics): a ZeroOrderHold and
    the UnitDelay it feeds tick together, and the delay stores the hold's *new* output,
    so that it gives u(t_(k-1)) at tick k, not u(t_(k-2)). An action's value reads a
    target ``("assign", k)`` (``p[k]``) or ``("reinit", k)`` (``x[k]``) directly, or
    through a named quantity whose expression holds it (or holds an algebraic variable of
    equations that do). Its own target it reads before its assignment (``n := n + 1``
    counts); ``pre()`` reads the value before the event. Actions that read each other's
    targets in a cycle share a level (evaluated with the values at its start)."""
    n = len(targets)
    if n < 2:
        return [0] * n
    import networkx as nx

    unique = list(dict.fromkeys(targets))
    T = cs.vertcat(*[dae.p[k] if kind == "assign" else dae.x[k] for kind, k in unique])
    named: dict[str, int] = {}
    rows: list[cs.SX] = []
    for v in values:
        for s in cs.symvar(v):
            if s.name() in dae.out_index and s.name() not in named:
                named[s.name()] = len(rows)
                rows.append(cs.SX(dae.out_expr[dae.out_index[s.name()]]))

    def reads(exprs: list[cs.SX]) -> list[set[int]]:
        if not exprs:
            return []
        col = cs.vertcat(*[cs.vec(e) for e in exprs])
        r, c = cs.jacobian_sparsity(col, T).get_triplet()
        size = np.cumsum([0] + [int(e.numel()) for e in exprs])
        owner = np.searchsorted(size, np.asarray(r), side="right") - 1
        out: list[set[int]] = [set() for _ in exprs]
        for o, j in zip(owner.tolist(), c, strict=True):
            out[o].add(int(j))
        return out

    direct = reads(values)
    of_name = reads(rows)
    # (an algebraic variable depends on what its equations read: any of them, coarsely)
    through_z: set[int] = set()
    if dae.z.numel():
        through_z = set().union(*reads([dae.alg]))
        for k, e in enumerate(rows):
            if cs.depends_on(e, dae.z):
                of_name[k] |= through_z
    graph = nx.DiGraph()
    graph.add_nodes_from(range(n))
    by_target: dict[int, list[int]] = {}  # a target's index in T: the actions setting it
    at = {t: j for j, t in enumerate(unique)}
    for i, t in enumerate(targets):
        by_target.setdefault(at[t], []).append(i)
    for i, v in enumerate(values):
        seen = set(direct[i])
        for s in cs.symvar(v):
            if s.name() in named:
                seen |= of_name[named[s.name()]]
        for j in seen:
            for a in by_target[j]:
                if a != i:
                    graph.add_edge(a, i)
    dag = nx.condensation(graph)
    level = dict.fromkeys(dag.nodes, 0)
    for c in nx.topological_sort(dag):
        for d in dag.successors(c):
            level[d] = max(level[d], level[c] + 1)
    return [level[dag.graph["mapping"][i]] for i in range(n)]


def choosing(whens: list[WhenClause], relations: list[Any],
             fixed: set[str]) -> dict[int, list[int]]:
    """The when clauses that choose a discrete mode from the state, each with the
    relations of its condition (indices into ``whens`` and ``relations``).

    A clause chooses a mode when one of its ``assign`` values reads a continuous variable
    (or its ``pre`` value), not only parameters, discrete variables and time (``fixed``):
    a mass whose impact sets ``mode := if |pre(v)| e <= v_rest then -1 else 0`` rests on
    its stop after finitely many impacts (a counter ``n := pre(n) + 1`` chooses nothing).
    The events of such a clause accumulate geometrically until then, so the Zeno check
    waits for them (:data:`ZENO_LEFT_CHOOSING`), and does not judge them at a firing that
    changed the mode."""
    by_name = {r.name: k for k, r in enumerate(relations)}
    out: dict[int, list[int]] = {}

    def continuous(name: str) -> bool:
        return (name[4:-1] if name.startswith("pre(") else name) not in fixed

    for k, w in enumerate(whens):
        if isinstance(w.condition, Sample):
            continue
        if any(kind == "assign" and any(continuous(s.name()) for s in cs.symvar(value))
               for _, kind, value in w.actions):
            out[k] = sorted({by_name[s.name()] for s in cs.symvar(cs.SX(w.condition))
                             if s.name() in by_name})
    return out


def _condition_text(cond: cs.SX, relations: list[Any], source: str | None = None) -> str:
    """A when condition as written: its relation symbols replaced by their text, or,
    where that is long, the condition as its author wrote it (``source``)."""
    by_name = {r.name: r.text for r in relations}
    if cond.is_symbolic() and cond.name() in by_name:
        text = by_name[cond.name()]
    else:
        text = expression_text(cond, 200)
        for name in sorted(by_name, key=len, reverse=True):
            if name in text:
                text = text.replace(name, f"({by_name[name]})")
    if source and not readable(text):
        return source
    return text if len(text) <= 100 else text[:97] + "..."


def _reinit_through_alias(dae: SemiExplicitDAE, origin: str, target: str,
                          value: cs.SX) -> tuple[int, cs.SX]:
    """``reinit(target, value)`` for a target that is not a state: the state ``x_k`` and
    its new value, where the target is ``c x_k + b`` with ``c`` and ``b`` functions of the
    parameters and time only (an alias, possibly negated or offset, or a variable the
    causalisation solved as such): ``x_k := (value - b) / c``. Anything else is an error
    that says what the target is."""
    chosen = ", ".join(dae.x_names) or "no state"
    head = f"{origin}: reinit({target}) needs a state or an alias of one, but {target}"
    k_out = dae.out_index.get(target)
    if k_out is None:
        raise SimulationError(f"{head} is not a variable of the model's equations")
    e = cs.SX(dae.out_expr[k_out])
    text = str(e) if len(str(e)) <= 80 else str(e)[:77] + "..."
    if dae.z.numel() and cs.depends_on(e, dae.z):
        raise SimulationError(
            f"{head} is an algebraic variable ("
            + ("" if e.is_symbolic() else f"{target} = {text}, ")
            + "solved from the equations at every instant): it cannot jump by itself. "
            "Reinit the state it "
            f"follows from (the index reduction chose {chosen}), or declare {target} with "
            "state_priority=1 to make it a state")
    deps = [k for k in range(int(dae.x.numel())) if cs.depends_on(e, dae.x[k])]
    if not deps:
        raise SimulationError(
            f"{head} = {text} depends on no state (parameters and time only): there is "
            "nothing to reinitialise")
    if len(deps) > 1:
        raise SimulationError(
            f"{head} = {text} combines the states {', '.join(dae.x_names[k] for k in deps)}:"
            " reinit cannot tell which of them jumps. Reinit one of them instead")
    k = deps[0]
    c = cs.jacobian(e, dae.x[k])
    if cs.depends_on(c, dae.x):
        raise SimulationError(
            f"{head} = {text} is a nonlinear function of the state {dae.x_names[k]}: "
            f"reinit {dae.x_names[k]} instead")
    b = cs.substitute(e, dae.x[k], cs.SX(0))
    return k, (value - b) / c


class EventLoop:
    """The event handling of one run of a DAE with frozen relations and when clauses."""

    def __init__(self, dae: SemiExplicitDAE, integ: Integrator,
                 whens: list[WhenClause] | None = None) -> None:
        self.dae = dae
        self.integ = integ
        self.pos = np.array([dae.p_names.index(r.name) for r in dae.relations], dtype=int)
        self.whens = compile_whens(dae, whens or [])
        # the events the Zeno check waits for (see `choosing`)
        self._choosers = choosing(whens or [], dae.relations,
                                  set(dae.p_names) | {dae.t.name()})
        self._choosing = ({("when", k) for k in self._choosers}
                          | {("relation", r) for rs in self._choosers.values() for r in rs})
        self._mode_changed: set[tuple[str, int]] = set()  # (see _new_modes)
        self.events: list[Event] = []
        # instants of each relation's changes (per direction) and each when clause's firings
        self._recent: dict[tuple[str, int, bool], list[float]] = {}
        sizes = np.asarray(dae.out_sizes, dtype=int)
        offsets = np.concatenate([[0], np.cumsum(sizes)])
        self._offset = {n: int(offsets[k]) for k, n in enumerate(dae.out_names)}
        # relations of time only: at a time event (their crossings are time events when
        # known in advance) they take their value just after the instant, however near zero
        # their indicator still is there (a function of time cannot chatter)
        g = dae.indicators
        self._of_time = np.array(
            [g is not None and bool(cs.depends_on(g[k], dae.t))
             and not (dae.x.numel() and cs.depends_on(g[k], dae.x))
             and not (dae.z.numel() and cs.depends_on(g[k], dae.z))
             for k in range(len(dae.relations))], dtype=bool)
        self._x_deps: np.ndarray | None = None  # relations x states (made when needed)
        # when clauses whose reinit left one of the relations of its states on its threshold
        self._on_threshold: set[int] = set()
        self.work = SegmentStats()  # the integrator's counts since the last take_work()
        self._calls: dict[int, tuple[cs.Function, PointCall]] = {}  # one-point evaluators

    def _rate_at(self, x: np.ndarray, z: np.ndarray, p: np.ndarray, t: float) -> np.ndarray:
        """The states' rates at one point."""
        return point_call(self._calls, self.dae.default_function)(x, z, p, t)[0]

    def _count(self, seg: Segment) -> Segment:
        self.work.add(seg.stats)
        return seg

    def _relations_of_states(self, states: list[int]) -> np.ndarray:
        """Which relations' indicators depend on the states ``states`` (directly)."""
        if self._x_deps is None:
            g = self.dae.indicators
            n = len(self.dae.relations)
            self._x_deps = np.zeros((n, int(self.dae.x.numel())), dtype=bool)
            if g is not None and n and self.dae.x.numel():
                rows, cols = cs.jacobian_sparsity(g, self.dae.x).get_triplet()
                self._x_deps[rows, cols] = True
        return np.asarray(self._x_deps[:, sorted(set(states))].any(axis=1), dtype=bool)

    def set_parameters(self, p: np.ndarray) -> None:
        """The clocks whose start or interval are parameters, with a run's values."""
        for w in self.whens:
            if w.clock_of_p is not None and w.symbolic_clock is not None:
                start, interval = (float(v) for v in w.clock_of_p(p))
                w.clock = w.symbolic_clock.resolved(start, interval, w.origin)

    def forget_events(self) -> None:
        """Clear the log (before the initialisation's last round)."""
        self.events.clear()
        self._recent.clear()

    def take_work(self) -> SegmentStats:
        """The integrator's counts since the last call (every call of the stretch between
        two events, event location included), and a fresh count."""
        work, self.work = self.work, SegmentStats()
        return work

    def timed_conditions(self) -> list[cs.SX]:
        """The when conditions that depend on time (``time > 0.3``): where one of them
        switches is a time event (it is searched with the equations')."""
        return [w.expr for w in self.whens
                if w.expr is not None and cs.depends_on(w.expr, self.dae.t)]

    def clock_instants(self, t0: float, t1: float) -> list[float]:
        """The instants of the when clauses' sample clocks in ``(t0, t1]``."""
        out: set[float] = set()
        for w in self.whens:
            if w.clock is not None:
                out.update(w.clock.instants(t0, t1))
        return sorted(out)

    def _named(self, x: np.ndarray, z: np.ndarray, p: np.ndarray, t: float,
               names: list[str]) -> np.ndarray:
        if not names:
            return np.zeros(0)
        y = np.asarray(self.dae.output_function()(x, z, p, t)).ravel()
        return np.array([y[self._offset[n]] for n in names])

    # ----- relations -----
    def indicators(self, x: Any, z: Any, p: np.ndarray, t: Any) -> np.ndarray:
        """Indicators ``g`` at one or several points: ``(n_relations, nt)``."""
        T = np.atleast_1d(np.asarray(t, dtype=float)).reshape(1, -1)
        if T.shape[1] == 1 and isinstance(x, np.ndarray) and isinstance(z, np.ndarray):
            return point_call(self._calls, self.dae.indicator_function)(
                x, z, p, T[0, 0])[0].reshape(-1, 1)
        X = x if not isinstance(x, np.ndarray) or x.ndim == 2 else x.reshape(-1, 1)
        Z = z if not isinstance(z, np.ndarray) or z.ndim == 2 else z.reshape(-1, 1)
        return np.asarray(self.dae.indicator_function(X, Z, p.reshape(-1, 1), T))

    def live(self, g: np.ndarray) -> np.ndarray:
        """The relations' live values for indicator values ``g`` (one column)."""
        return np.array([r.value(float(gk)) for r, gk in zip(self.dae.relations, g,
                                                               strict=True)])

    def frozen(self, p: np.ndarray) -> np.ndarray:
        return p[self.pos] > 0.5

    def set_relations(self, p: np.ndarray, d: np.ndarray) -> np.ndarray:
        q = p.copy()
        q[self.pos] = d.astype(float)
        return q

    # ----- event iteration -----
    def iterate(self, s: HybridState, kind: str, forced: dict[int, bool] | None = None,
                t_before: float | None = None, instant: float | None = None,
                gap: float = 0.0) -> HybridState:
        """The event iteration at ``s.t`` (see the module documentation). ``t_before``:
        the time of the left limit (a time event's, 1e-12 s before the instant), where
        the when conditions had their values before the event: a condition of time
        (``time > 0.3``) is already true at ``s.t``, just after its instant. ``instant``:
        the event's time when ``s.t`` is just after it (a time event's restart): the log
        and the errors give it (``res.events`` shows the instant, as the time events of
        ``res.stats`` do). ``gap``: at a time event, the relations ``forced`` crossed in
        its gap and take their values ``gap`` after ``s.t`` (a fast indicator is beyond
        the band at the instant, on its old side: it flipped back, and crossed again as
        an event of its own)."""
        t_at = s.t if instant is None else instant
        d0 = self.frozen(s.p)
        d = d0.copy()
        for k, v in (forced or {}).items():
            d[k] = v
        ahead = np.zeros(len(d), dtype=bool)  # (those taken `gap` after s.t)
        if gap > 0:
            ahead[list(forced or {})] = True
        x, z, p0 = s.x.copy(), s.z, s.p.copy()
        t_pre = s.t if t_before is None else t_before
        before = [bool(w.condition(p0, t_pre) > 0.5) if w.condition is not None else False
                  for w in self.whens]
        pre_cache: dict[str, float] = {}
        fired: list[str] = []
        done: set[int] = set()
        fell: set[int] = set()  # clauses whose condition became false after they fired
        p = p0
        # relations of states that a reinit just set: their value is read as it is, even
        # within the band (a state set exactly onto a threshold is on it, not round-off)
        reset = np.zeros(len(d), dtype=bool)
        reset_by: list[int] = []
        for it in range(1, _MAX_ITERATIONS + 1):
            p = self.set_relations(p, d)
            z = consistent_algebraic(self.dae, x, z, p, s.t)
            g = self.indicators(x, z, p, s.t)[:, 0] if len(d) else np.zeros(0)
            live = self.live(g)
            scale = 1.0 + np.abs(g)
            near = np.abs(g) <= _BAND * scale
            if ahead.any():
                live[ahead] = self._live_after(HybridState(s.t, x, z, p), gap)[ahead]
                near &= ~ahead
            if reset.any() and (reset & near).any():
                self._on_threshold.update(reset_by)
            flip = (live != d) & (~near | reset
                                  | (self._of_time if kind == "time" else False))
            reset[:] = False
            if flip.any():
                d[flip] = live[flip]
                continue
            fell |= {k for k in done - fell if not self._holds(self.whens[k], p, s.t)}
            fire = [k for k, w in enumerate(self.whens)
                    if k not in done and self._fires(w, before[k], p, s.t, kind)]
            if not fire:
                self._settled(fell, x, z, p, s.t, t_at, pre_cache, fired)
                changed = np.flatnonzero(d != d0)
                self._new_modes(done, p0, p)
                if len(changed) or fired or kind == "time":
                    self._log(t_at, kind, d, changed, it, fired, sorted(done))
                return HybridState(s.t, x, z, p)
            names = sorted({n for k in fire for a in self.whens[k].actions for n in a.names})
            now = dict(zip(names, self._named(x, z, p, s.t, names), strict=True))
            pres = sorted({n for k in fire for a in self.whens[k].actions
                           for n in a.pre_names} - set(pre_cache))
            pre_cache.update(zip(pres, self._named(s.x, s.z, p0, s.t, pres), strict=True))
            x, p = x.copy(), p.copy()
            setters: dict[tuple[str, int], tuple[int, str, float]] = {}
            reinit: list[int] = []
            for k in fire:
                done.add(k)
                w = self.whens[k]
                fired.append(f"when {w.text} [{w.origin}]")
            # level by level (action_levels): an action reads the targets of the lower
            # levels as they were just set, the algebraic variables solved again with them
            level = 0
            for k, a in sorted(((j, a) for j in fire for a in self.whens[j].actions),
                               key=lambda ja: ja[1].level):
                w = self.whens[k]
                if a.level != level:
                    level = a.level
                    later = sorted({n for k2 in fire for b in self.whens[k2].actions
                                    if b.level >= level for n in b.names})
                    if later:
                        z = consistent_algebraic(self.dae, x, z, p, s.t)
                        now.update(zip(later, self._named(x, z, p, s.t, later), strict=True))
                val = float(a.value([now[n] for n in a.names],
                                    [pre_cache[n] for n in a.pre_names], p, s.t))
                what = "reinit" if a.kind == "reinit" else "assign"
                if not np.isfinite(val):
                    raise SimulationError(
                        f"at t = {t_at:.9g} s, {what}({a.target}, ...) of when {w.text} "
                        f"[{w.origin}] gives {a.target} the value {val}: the value "
                        "of the action is not finite (a division by zero, a NaN of a "
                        "pre() value or a parameter); check the expression of the "
                        f"{what}")
                key = (a.kind, a.index)
                if key in setters and setters[key][2] != val:
                    other = self.whens[setters[key][0]]
                    raise SimulationError(
                        f"at t = {t_at:.9g} s, when {other.text} [{other.origin}] and "
                        f"when {w.text} [{w.origin}] both fire and set {a.target}, to "
                        f"{setters[key][2]:.9g} and {val:.9g}: a variable takes one value"
                        " at an event (Modelica allows one when clause per variable). "
                        "Set it in one clause (whose value may depend on which condition "
                        "holds), or make the conditions exclusive")
                setters[key] = (k, a.target, val)
                if a.kind == "reinit":
                    x[a.index] = val
                    reinit.append(a.index)
                else:
                    p[a.index] = val
            if reinit:
                reset = self._relations_of_states(reinit)
                reset_by = [k for k in fire
                            if any(a.kind == "reinit" for a in self.whens[k].actions)]
        rels = [self.dae.relations[k] for k in np.flatnonzero(d != d0)]
        raise SimulationError(
            f"chattering at t = {t_at:.9g} s: the relations "
            + "; ".join(f"{r.text} [{', '.join(r.components)}]" for r in rels)
            + f" keep changing after {_MAX_ITERATIONS} event iterations (each new value "
            "makes another one wrong): the model has no consistent mode at this instant "
            "(check the switching conditions of these components)")

    @staticmethod
    def _holds(w: _When, p: np.ndarray, t: float) -> bool:
        """Whether the condition of ``w`` is true (a clock's never is, between ticks)."""
        return w.condition is not None and bool(w.condition(p, t) > 0.5)

    def _settled(self, fell: set[int], x: np.ndarray, z: np.ndarray, p: np.ndarray,
                 t: float, t_at: float, pre_cache: dict[str, float],
                 fired: list[str]) -> None:
        """Raise :class:`SimulationError` if the event iteration ends unsettled: a clause
        that fired here, whose condition then became false and is true again (Modelica
        would fire it again), and whose actions would change their variables now. A
        clause fires once per event here, so the iteration would end with values that
        contradict the model's equations (a relay whose output feeds its own input: on,
        then off, and its input above the threshold again); Modelica tools report such
        an event iteration as not converging. A clause that would set the same values
        again (a counter ``n := pre(n) + 1``, a reinit from ``pre()``) is settled."""
        again: list[tuple[_When, list[str]]] = []
        for k in sorted(fell):
            w = self.whens[k]
            if not self._holds(w, p, t):
                continue
            moves = []
            for a in w.actions:
                val = float(a.value(list(self._named(x, z, p, t, a.names)),
                                    [pre_cache[n] for n in a.pre_names], p, t))
                cur = float(x[a.index] if a.kind == "reinit" else p[a.index])
                if val != cur:
                    moves.append(f"{a.target} from {cur:.6g} to {val:.6g}")
            if moves:
                again.append((w, moves))
        if not again:
            return
        which = "; ".join(f"when {w.text} [{w.origin}] would set {', '.join(m)} again"
                          for w, m in again)
        one = len(again) == 1
        raise SimulationError(
            f"at t = {t_at:.9g} s, the event iteration does not settle: {which}. "
            + ("This clause" if one else "Each of these clauses") + " fired at this "
            "event, then the actions of " + "; ".join(dict.fromkeys(fired))
            + " made " + ("its" if one else "their") + " condition false and true again, "
            "and a clause fires once per event: the run would go on with values that "
            "contradict the model's equations (Modelica tools report an event iteration "
            "that does not converge). The discrete variables have no consistent value "
            "here: an algebraic loop runs through a discrete variable, whose action "
            "changes its own condition with no state in between (a relay whose output "
            "feeds its input). Put a state (a first-order lag, an integrator), a delay "
            "(pre() of the variable, a UnitDelay) or a wider hysteresis margin in the loop")

    def time_event(self, left: HybridState, t_event: float, t_right: float) -> HybridState:
        """Across a time event at ``t_event``: from the left limit ``left`` (integrated to
        just before it, where the functions of time still have their old values) to
        ``t_right`` just after it, with the event iteration in between.

        The states cross the two short gaps by explicit Euler steps, with the rates of
        their own side (error ``gap^2 |x''| / 2``, some 1e-24 for gaps of 1e-12 s: without
        them a fast state would lag by the gaps times its rate, 1e-7 A per event for an
        inductor current ramping at 1e5 A/s); the iteration reads the values at the
        instant and sees the functions of time on the right side (the event is logged at
        ``t_event``; the values after it are in the result at ``t_right``).

        A state event in the gap the time event steps across (from the left limit to
        ``t_right``, or as far after the instant as the left limit is before it) is at
        its instant: one event, whose clauses are synchronous (a time and a state
        condition that set one variable to different values are refused, as two state
        conditions are). Apart, the time event ran first, its relation's indicator within
        round-off of zero was left as it was, and the next stretch ran the state event
        1e-12 s later: the last clause won without a word."""
        x_event = euler_gap(self._calls, self.dae, left.x, left.z, left.p, left.t,
                            t_event - left.t)
        # (from the left limit, at the left side's rates; the relations of time only
        # change in the iteration itself)
        gap = max(t_right - t_event, t_event - left.t)
        crossed = {k: v for k, v in self._crossed(left, t_event + gap - left.t).items()
                   if not self._of_time[k]} if len(self.dae.relations) and gap > 0 else {}
        post = self.iterate(HybridState(t_right, x_event, left.z, left.p), "time", crossed,
                            t_before=left.t, instant=t_event, gap=gap)
        x_right = euler_gap(self._calls, self.dae, post.x, post.z, post.p, t_right,
                            t_right - t_event)
        z_right = consistent_algebraic(self.dae, x_right, post.z, post.p, t_right)
        return HybridState(t_right, x_right, z_right, post.p)

    def _live_after(self, s: HybridState, gap: float) -> np.ndarray:
        """The relations' live values ``gap`` after ``s``, reached by one explicit Euler
        step (error ``gap^2 |x''| / 2``: some 1e-23 for the 4e-12 s of an event at the end
        time)."""
        t1 = s.t + gap
        x1 = euler_gap(self._calls, self.dae, s.x, s.z, s.p, s.t, gap)
        z1 = consistent_algebraic(self.dae, x1, s.z, s.p, t1)
        return self.live(self.indicators(x1, z1, s.p, t1)[:, 0])

    def _crossed(self, s: HybridState, gap: float) -> dict[int, bool]:
        """The relations whose live values differ from their frozen ones ``gap`` after
        ``s`` (:meth:`_live_after`)."""
        live = self._live_after(s, gap)
        return {int(k): bool(live[k]) for k in np.flatnonzero(live != self.frozen(s.p))}

    def end_event(self, s: HybridState, gap: float) -> HybridState | None:
        """The state event at the run's end time ``s.t``: where a relation's indicator
        crosses zero within ``gap`` after it, the crossing is at the end time up to
        round-off (``x' = 1`` integrated to ``t = 1`` gives ``x = 1 - 2.2e-16``, and
        ``x >= 1`` becomes true at ``1 + 2.2e-16``). It is run there, as a time event that
        near the end is (Modelica tools and FMI's master algorithm handle an event at the
        stop time); an earlier crossing has been located already. The crossing is probed
        by one explicit Euler step of ``gap`` (error ``gap^2 |x''| / 2``, some 1e-23 for
        4e-12 s). Returns the state after the event iteration, None without a crossing."""
        if not len(self.dae.relations):
            return None
        crossed = self._crossed(s, gap)
        return self.iterate(s, "state", crossed) if crossed else None

    @staticmethod
    def _fires(w: _When, before: bool, p: np.ndarray, t: float, kind: str) -> bool:
        """Whether ``w`` fires at this event. A clock fires at its instants, the one at
        the initial time included (Modelica: ``sample(start, interval)`` is true at
        initialisation when ``start`` is the start time); a condition fires where it
        becomes true, never at initialisation (it was not false before), unless the
        clause was declared ``when(..., initial=True)``: then it runs at initialisation
        where its condition holds."""
        if w.clock is not None:
            # the instant is a time event at t (or the start time): within 1e-9 relative,
            # far above the round-off of start + k interval, far below any sample period
            return kind in ("time", "initial") and any(
                abs(t - ti) <= 1e-9 * max(1.0, abs(t))
                for ti in w.clock.instants(t - 1e-6 * max(1.0, abs(t)), t + 1e-6))
        assert w.condition is not None
        if kind == "initial":
            return w.initial and bool(w.condition(p, t) > 0.5)
        return not before and bool(w.condition(p, t) > 0.5)

    def _log(self, t: float, kind: str, d: np.ndarray, changed: np.ndarray,
             iterations: int, fired: list[str] | None = None,
             fired_whens: list[int] | None = None) -> None:
        rels = self.dae.relations
        comps = {c for k in changed for c in rels[k].components}
        comps |= {f.rsplit("[", 1)[-1].rstrip("]") for f in fired or []}
        texts = [f"{rels[k].text} -> {bool(d[k])}" for k in changed] + list(fired or [])
        self.events.append(Event(float(t), kind, texts, sorted(comps), iterations))
        for k in changed:
            self._recent.setdefault(("relation", int(k), bool(d[k])), []).append(t)
        # a when clause counts by itself: its relation may flip back within the iteration
        # (an impact whose reinit reverses the motion), leaving no net change to count
        # (a clock's ticks are regular by construction: not counted)
        for k in fired_whens or []:
            if self.whens[k].clock is None:
                self._recent.setdefault(("when", int(k), True), []).append(t)

    def _new_modes(self, done: set[int], p0: np.ndarray, p: np.ndarray) -> None:
        """The events the Zeno check does not judge at this instant: those of a clause
        that chose another mode here (and of its condition's relations), which may end
        the accumulation (a mass that now rests on its stop). They are judged at their
        next event, if one comes."""
        self._mode_changed = set()
        for k in done & self._choosers.keys():
            if any(a.kind == "assign" and p[a.index] != p0[a.index]
                   for a in self.whens[k].actions):
                self._mode_changed.add(("when", k))
                self._mode_changed.update(("relation", r) for r in self._choosers[k])

    def zeno(self, t: float, span: float) -> str | None:
        """A description if the events of one relation or one when clause accumulate
        (Zeno), else None.

        Accumulating means: the last :data:`_ZENO_EVENTS` intervals between a relation's
        changes in one direction, or between a when clause's firings, shrink by a steady
        ratio below 1 (a geometric series), and the time left to the accumulation point,
        ``gap r / (1 - r)``, is below :data:`ZENO_LEFT` of the run (the events would then
        crowd into the last thousandth), or :data:`ZENO_LEFT_CHOOSING` for the events of
        a clause that chooses a mode from the state; or one interval is below 1e-9 of the
        run, whatever the ratio.
        """
        scale = max(span, abs(t))
        for (what, k, _), times in self._recent.items():
            if len(times) < _ZENO_EVENTS + 1 or (what, k) in self._mode_changed:
                continue
            gaps = np.diff(np.array(times[-(_ZENO_EVENTS + 1):]))
            ratios = gaps[1:] / np.maximum(gaps[:-1], 1e-300)
            ratio = float(np.median(ratios))
            steady = ratio < 0.99 and float(np.max(ratios)) < 1.0
            left = gaps[-1] * ratio / max(1.0 - ratio, 1e-12)
            chooses = (what, k) in self._choosing
            name = self._describe(what, k)
            if what == "when" and k in self._on_threshold and gaps[-1] < 1e-9 * scale:
                w = self.whens[k]
                return (f"when {w.text} [{w.origin}] fires again and again at t = {t:.9g} s "
                        f"(every {gaps[-1]:.3g} s): its reinit puts the state exactly onto "
                        "the threshold of a relation of its condition, from where the "
                        "condition becomes true again at once, without end; the run stops "
                        "here. Reinitialise to a value clear of the threshold, or model "
                        "what happens there (a state that can rest on it)")
            if gaps[-1] < 1e-9 * scale and not steady and what == "when":
                return (f"chattering: {name} fires again and again at t = {t:.9g} s (every "
                        f"{gaps[-1]:.3g} s) without settling: just after each firing its "
                        "condition becomes true again. Either its action changes its own "
                        "condition through an algebraic loop (a discrete variable that "
                        "feeds the condition with no state in between, a relay whose output "
                        "feeds its input: put a state, a delay (pre(), a UnitDelay) or a "
                        "wider hysteresis margin in the loop), or the model slides along "
                        "the switching surface (give the component a mode that can stay on "
                        "it, a stuck friction state, a dead zone); the run stops here.")
            if gaps[-1] < 1e-9 * scale and not steady:
                return (f"chattering: {name} keeps changing "
                        f"every {gaps[-1]:.3g} s without settling (the model slides along "
                        "the switching surface, e.g. a discontinuous force that reverses on "
                        "both sides of zero); the run stops here. Give the component a mode "
                        "that can stay on the surface (a stuck friction state, a dead zone).")
            near = ZENO_LEFT_CHOOSING if chooses else ZENO_LEFT
            if gaps[-1] < 1e-9 * scale or (steady and left < near * scale):
                return (f"Zeno behaviour: the events of {name} "
                        f"accumulate (intervals shrinking by {ratio:.3g} each, the last "
                        f"{gaps[-1]:.3g} s) towards t = {t + left:.9g} s, where the motion "
                        "comes to rest; the run stops here. " + (
                            "The mode its when clause chooses from the state (a resting "
                            "phase) did not end them: check the rest threshold (a rest "
                            "speed of zero is never reached)." if chooses else
                            "Model the resting phase (e.g. a contact that can stay closed) "
                            "to go on."))
        return None

    def _describe(self, what: str, k: int) -> str:
        """A relation or a when clause as written, with its components."""
        if what == "when":
            w = self.whens[k]
            return f"when {w.text} [{w.origin}]"
        r = self.dae.relations[k]
        return f"{r.text} [{', '.join(r.components)}]"

    # ----- integration -----
    def _advance(self, p: np.ndarray, s: HybridState, t1: float,
                 n: int) -> tuple[np.ndarray, Any, Any]:
        """States at ``n`` equally spaced points of ``(s.t, t1]``.

        An interval below :data:`_MIN_STEP` is taken by one explicit Euler step (IDAS
        through CasADi returns the start value unchanged for such intervals; the error of
        the Euler step, ``dt^2 |x''| / 2``, is far below any tolerance there)."""
        if t1 - s.t < _MIN_STEP * max(1.0, abs(s.t)):
            x1 = euler_gap(self._calls, self.dae, s.x, s.z, p, s.t, t1 - s.t)
            z1 = consistent_algebraic(self.dae, x1, s.z, p, t1)
            return np.array([t1]), x1.reshape(-1, 1), z1.reshape(-1, 1)
        if n == 1:
            seg = self._count(self.integ.advance(self.dae, p, s.x, s.z, s.t, t1))
            return np.array([t1]), _dense(seg.x), _dense(seg.z)
        T = np.linspace(s.t, t1, n + 1)
        seg = self._count(self.integ.integrate(self.dae, p, s.x, s.z, T))
        return T[1:], _dense(seg.x), _dense(seg.z)

    def advance(self, s: HybridState, outputs: np.ndarray
                ) -> tuple[Reached, HybridState | None, HybridState]:
        """Integrate from ``s`` through the output times ``outputs`` in one call; stop at
        the first crossing.

        Besides a sign change of an indicator at the sample points, a sign change *between*
        two of them (an excursion there and back, such as a short bounce) is looked for
        on the cubic Hermite interpolant of the indicator built from its values and rates
        at the two points; where it predicts one, the predicted extremum is integrated to
        and checked.

        Returns the output points reached before any event (``Reached``), and either
        ``(None, state at the last of them)`` or, at a located crossing, ``(state just
        before the event, state after the event iteration)`` at the same time.
        """
        knots = np.concatenate([[s.t], outputs])
        T = _samples(knots)
        try:
            if T[-1] - s.t < _MIN_STEP * max(1.0, abs(s.t)):
                seg = self._euler(s, T)
            else:
                seg = self._count(self.integ.integrate(self.dae, s.p, s.x, s.z,
                                                       np.concatenate([[s.t], T])))
        except IntegrationFailure as exc:  # the output points reached before the failure
            part = exc.partial
            if part is not None and len(part.t):
                keep = np.flatnonzero(np.isin(np.asarray(part.t), outputs))
                exc.reached = Reached(np.asarray(part.t)[keep],  # type: ignore[attr-defined]
                                      _dense(part.x)[:, keep], _dense(part.z)[:, keep], s.p)
            raise
        X, Z = seg.x, seg.z
        Xn, Zn = _dense(X), _dense(Z)  # numpy, for the columns read below
        d = self.frozen(s.p)
        Tall = np.concatenate([[s.t], T])
        n_all = len(Tall)
        # the start and the samples in one evaluation of the indicators and of their rates
        Xall = np.hstack([s.x.reshape(-1, 1), Xn])
        Zall = np.hstack([s.z.reshape(-1, 1), Zn])
        Gall = self.indicators(Xall, Zall, s.p, Tall)
        G = Gall[:, 1:]
        changed = self.live_matrix(G) != d[:, None]
        first = int(np.argmax(changed.any(axis=0))) if changed.any() else len(T)
        # excursions between samples, on the intervals before the first sign change
        R = self.rates(Xall, Zall, s.p, Tall) if len(d) else np.zeros((0, n_all))
        peak = _hermite_crossings(Tall[:first + 1], Gall[:, :first + 1], R[:, :first + 1], d,
                                  self.integ.options.rtol,
                                  self.dae.relations)
        for j, t_peak in peak:  # earliest first
            prev = s if j == 0 else HybridState(float(T[j - 1]), _col(Xn, j - 1),
                                                _col(Zn, j - 1), s.p)
            Tp, Xp, Zp = self._advance(s.p, prev, t_peak, 1)
            gp = self.indicators(Xp, Zp, s.p, Tp)[:, 0]
            if (self.live(gp) != d).any():
                first = j  # the reached outputs end before this interval
                reached = self._reached(T, X, Z, first, s.p)
                return (reached, *self._keep(reached, self._locate, prev, t_peak,
                                             _col(Xp, 0), _col(Zp, 0), gp))
        if first < len(T):
            prev = s if first == 0 else HybridState(float(T[first - 1]), _col(Xn, first - 1),
                                                    _col(Zn, first - 1), s.p)
            reached = self._reached(T, X, Z, first, s.p)
            return (reached, *self._keep(reached, self._locate, prev, float(T[first]),
                                         _col(Xn, first), _col(Zn, first), G[:, first],
                                         Gall[:, first]))
        reached = self._reached(T, X, Z, len(T), s.p)
        last = HybridState(float(T[-1]), _col(Xn, -1), _col(Zn, -1), s.p)
        return reached, None, last

    def _euler(self, s: HybridState, T: np.ndarray) -> Segment:
        """The samples ``T`` of a span below :data:`_MIN_STEP` by explicit Euler steps from
        ``s`` (as :meth:`_advance` takes such a span: IDAS returns the start unchanged, and
        a state event 1e-9 s before the end time left the states at their values at the
        event, 5.5e-9 m off for a ball rising at 5.5 m/s)."""
        rate = self._rate_at(s.x, s.z, s.p, s.t)
        X = s.x[:, None] + (T - s.t)[None, :] * rate[:, None]
        Z = np.zeros((len(s.z), len(T)))
        for j, t in enumerate(T):
            Z[:, j] = consistent_algebraic(self.dae, X[:, j], s.z, s.p, float(t))
        return Segment(T, X, Z)

    @staticmethod
    def _reached(T: np.ndarray, X: Any, Z: Any, upto: int, p: np.ndarray) -> Reached:
        """The output points (every SAMPLES-th sample) among the first ``upto`` samples."""
        idx = [j for j in range(SAMPLES - 1, upto, SAMPLES)]
        return Reached(T[idx], X[:, idx], Z[:, idx], p)

    def live_matrix(self, G: np.ndarray) -> np.ndarray:
        """Live values for indicator columns: ``(n_relations, nt)``."""
        strict = np.array([r.strict for r in self.dae.relations], dtype=bool)[:, None]
        return np.where(strict, G < 0.0, G <= 0.0)

    def rates(self, X: Any, Z: Any, p: np.ndarray, T: Any) -> np.ndarray:
        """Time derivatives of the indicators along the solution, ``(n_relations, nt)``
        (zeros where the model is too large for the symbolic rate, see
        :meth:`SemiExplicitDAE.indicator_rate_function`)."""
        f = self.dae.indicator_rate_function
        Tm = np.atleast_1d(np.asarray(T, dtype=float)).reshape(1, -1)
        if f is None:
            return np.zeros((len(self.pos), Tm.shape[1]))
        return np.asarray(f(X, Z, p.reshape(-1, 1), Tm))

    def _locate(self, a: HybridState, tb: float, xb: np.ndarray, zb: np.ndarray,
                gb: np.ndarray, ga: np.ndarray | None = None
                ) -> tuple[HybridState, HybridState]:
        """The first crossing in ``(a.t, tb]`` by Illinois' method, then the iteration
        (``ga``: the indicators at ``a``, when the caller has them).

        Illinois starts from the secant: a first trial point from the cubic Hermite
        interpolant of the indicator and its rates lands, for a stiff indicator (a diode's
        current through Ron = 1e-5 Ohm), where the integration error makes it cross zero
        early, and adds a pair of events there."""
        d = self.frozen(a.p)
        ga = ga if ga is not None else self.indicators(a.x, a.z, a.p, a.t)[:, 0]
        changed = np.flatnonzero(self.live(gb) != d)
        target = self._earliest(changed, a.t, tb, ga, gb)
        fa, fb = ga[target], gb[target]
        tol = 1e-13 * max(1.0, abs(tb)) + 1e-15
        side = 0
        if abs(fa) <= _BAND * (1.0 + abs(fb)):
            # the indicator starts at zero (a relation held at an event it just passed):
            # the crossing is within round-off of the start, one short step shows it
            t = min(a.t + 1e3 * tol, 0.5 * (a.t + tb))
            T, X, Z = self._advance(a.p, a, t, 1)
            gt = self.indicators(X, Z, a.p, T)[:, 0]
            if (self.live(gt) != d).any():
                tb, xb, zb, gb = t, _col(X, 0), _col(Z, 0), gt
                fb = gb[target]
        for _ in range(100):
            if tb - a.t <= tol:
                break
            t = (a.t * fb - tb * fa) / (fb - fa) if fb != fa else 0.5 * (a.t + tb)
            if not a.t < t < tb:  # round-off at the bracket's ends: bisect
                t = 0.5 * (a.t + tb)
            T, X, Z = self._advance(a.p, a, t, 1)
            gt = self.indicators(X, Z, a.p, T)[:, 0]
            now = np.flatnonzero(self.live(gt) != d)
            if len(now):
                tb, xb, zb, gb = t, _col(X, 0), _col(Z, 0), gt
                if target not in now:
                    target = self._earliest(now, a.t, tb, ga, gb)
                    fa = ga[target]
                fb = gb[target]
                if side == 1:
                    fa *= 0.5
                side = 1
            else:
                a, ga = HybridState(t, _col(X, 0), _col(Z, 0), a.p), gt
                fa = ga[target]
                if side == -1:
                    fb *= 0.5
                side = -1
        crossed = {int(k): bool(v) for k, v in
                   zip(np.flatnonzero(self.live(gb) != d),
                       self.live(gb)[self.live(gb) != d], strict=True)}
        pre = HybridState(tb, xb, zb, a.p)
        try:
            return pre, self.iterate(pre, "state", crossed)
        except SimulationError as exc:  # (the result keeps the left limit of the event)
            exc.pre = pre  # type: ignore[attr-defined]
            raise

    @staticmethod
    def _keep(reached: Reached, locate: Any, *args: Any) -> tuple[HybridState, HybridState]:
        """``locate(*args)``, with the output points reached before it attached to a
        failure at the event (its action's value, chattering): the partial result keeps
        them."""
        try:
            return locate(*args)  # type: ignore[no-any-return]
        except SimulationError as exc:
            exc.reached = reached  # type: ignore[attr-defined]
            raise

    @staticmethod
    def _earliest(changed: np.ndarray, ta: float, tb: float, ga: np.ndarray,
                  gb: np.ndarray) -> int:
        """The changed relation whose linear-interpolation root is earliest."""
        best, t_best = int(changed[0]), np.inf
        for k in changed:
            den = gb[k] - ga[k]
            t = ta - ga[k] * (tb - ta) / den if den != 0 else tb
            if t < t_best:
                best, t_best = int(k), t
        return best


def _samples(knots: np.ndarray) -> np.ndarray:
    """:data:`SAMPLES` equally spaced points in each interval of ``knots`` (its end
    included, its start not), as ``np.linspace`` computes them, for all intervals at once."""
    a, b = knots[:-1, None], knots[1:, None]
    T = a + np.arange(1, SAMPLES + 1)[None, :] * ((b - a) / SAMPLES)
    T[:, -1] = b[:, 0]
    return T.ravel()


def _dense(M: Any) -> np.ndarray:
    """A CasADi or numpy matrix as a numpy array of its shape."""
    return M.full() if hasattr(M, "full") else np.asarray(M, dtype=float)


def _col(M: Any, j: int) -> np.ndarray:
    return np.asarray(M[:, j]).ravel() if M.shape[0] else np.zeros(0)


def initial_mode(cm: Any, loop: EventLoop, p: np.ndarray, t0: float,
                 start: dict[str, float] | None = None) -> tuple[HybridState, InitialValues]:
    """A hybrid model's consistent initial point with its relations evaluated live:
    guessed at the start values, then iterated with the initial problem until they agree
    with its solution. Returns the state after the initial event (the relations and
    discrete variables in its ``p``; ``loop.events`` holds that event) and the initial
    problem's solution. Raises :class:`SimulationError` if the relations do not
    settle."""
    dae = cm.dae
    values = cm.start_values if not start else {**cm.start_values, **start}
    x = np.array([values.get(n, 0.0) for n in dae.x_names])
    z = np.array([values.get(n, 0.0) for n in dae.z_names])
    d = loop.live(loop.indicators(x, z, p, t0)[:, 0])
    for _ in range(10):
        p = loop.set_relations(p, d)
        init = initialize(cm, p, t0, start=start)
        loop.forget_events()  # (the initial event once: the one of the last round)
        post = loop.iterate(HybridState(t0, init.x0, init.z0, p), "initial")
        if np.array_equal(loop.frozen(post.p), d):
            return post, init
        d = loop.frozen(post.p)
    raise SimulationError("the relations do not settle during initialisation: "
                          + "; ".join(str(e) for e in loop.events[-3:]))


def warn_zeno(message: str) -> None:
    """Announce that a run stopped at a Zeno accumulation point."""
    warnings.warn(message, SolverWarning, stacklevel=user_stacklevel())


def _hermite_crossings(T: np.ndarray, G: np.ndarray, R: np.ndarray, d: np.ndarray,
                       rtol: float, relations: list[Any]) -> list[tuple[int, float]]:
    """Intervals ``(T[j], T[j+1])`` where an indicator keeps its sign at both ends but the
    cubic Hermite interpolant from its values ``G`` and rates ``R`` crosses zero in
    between: ``(j, time of the interpolant's extremum)``, earliest first (vectorised over
    relations and intervals). An excursion counts beyond ``min(1e-6, 100 rtol)`` of the
    end values: below, it is the interpolant's or the integration's error."""
    if G.shape[1] < 2 or not len(relations):
        return []
    h = np.diff(T)[None, :]
    g0, g1 = G[:, :-1], G[:, 1:]
    m0, m1 = h * R[:, :-1], h * R[:, 1:]
    strict = np.array([r.strict for r in relations], dtype=bool)[:, None]

    def live(v: np.ndarray) -> np.ndarray:
        return np.where(strict, v < 0.0, v <= 0.0)

    same = (live(g0) == d[:, None]) & (live(g1) == d[:, None])
    # an excursion to the other side and back leaves towards zero and ends moving away
    # from it: rates that say otherwise make any predicted crossing the interpolant's
    # artefact (rates of a stiff indicator carry the integration error magnified)
    same &= (np.sign(m0) * np.sign(g0) < 0) & (np.sign(m1) * np.sign(g1) > 0)
    # p'(u) = a u^2 + b u + c on u in [0, 1]
    a = 6 * g0 + 3 * m0 - 6 * g1 + 3 * m1
    b = -6 * g0 - 4 * m0 + 6 * g1 - 2 * m1
    c = m0
    out: dict[int, float] = {}
    disc = b * b - 4 * a * c
    with np.errstate(invalid="ignore", divide="ignore"):
        sq = np.sqrt(np.where(disc >= 0, disc, np.nan))
        quad = np.abs(a) > 1e-14 * (np.abs(b) + np.abs(c) + 1e-300)
        roots = [np.where(quad, (-b + sq) / (2 * a), -c / b),
                 np.where(quad, (-b - sq) / (2 * a), np.nan)]
    for u in roots:
        ok = same & np.isfinite(u) & (u > 0.0) & (u < 1.0)
        if not ok.any():
            continue
        val = ((2 * u**3 - 3 * u**2 + 1) * g0 + (u**3 - 2 * u**2 + u) * m0
               + (-2 * u**3 + 3 * u**2) * g1 + (u**3 - u**2) * m1)
        # an excursion worth locating: beyond the error of the end values (a prediction
        # within 1e-6 of them, or 100 rtol at tighter tolerances, is the interpolant's or
        # the integration's error, not a crossing; at rtol 1e-10 a projectile's apex 1e-7
        # above a threshold at 1 m, 1000 atol, was dropped)
        big = np.abs(val) > min(1e-6, 100 * rtol) * np.maximum(np.abs(g0), np.abs(g1)) + 1e-300
        hit = ok & big & (live(val) != d[:, None])
        for k, j in zip(*np.nonzero(hit), strict=True):
            t = float(T[j] + u[k, j] * h[0, j])
            out[int(j)] = min(out.get(int(j), np.inf), t)
    return sorted(out.items())
