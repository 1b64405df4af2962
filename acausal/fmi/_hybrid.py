"""The events of a hybrid model, as the CasADi functions the FMU's C wrapper calls.

FMI 2.0 Model Exchange leaves the integration to the importer and asks the FMU for

* event indicators (``fmi2GetEventIndicators``): functions whose sign change the importer
  locates (state events);
* the event update (``fmi2NewDiscreteStates``): new discrete values, jumps of the states,
  and the next time event.

The library's hybrid core (:mod:`acausal.relations`, :mod:`acausal.hybrid`) has the same
parts: relations of the unknowns are frozen between events and watched through their
indicators ``g`` (the relation is ``g < 0`` or ``g <= 0``), ``when`` clauses run their
``reinit`` and ``assign`` actions in the event iteration, and sample clocks tick at time
events. This module turns them into functions of the FMU's parameter vector
``P = [p; time discretes]`` (``p``: the DAE's parameters, which hold the relations' values
and the discrete variables):

``ind(x, z, P, t) -> g``
    the indicators of the frozen relations;
``tdisc(P, t) -> (values, next)``
    the *time discretes*: relations of time and parameters only (a step's ``time >=
    startTime``) and ``floor``/``ceil`` of an affine function of time (a pulse train).
    ``acausal.simulate`` finds their instants in advance and restarts there; the FMU
    freezes them too (as Modelica tools do), so the importer's integrator only ever sees
    one smooth mode. ``values`` are their values at ``t`` (the wrapper passes the right
    limit ``t + eps``), ``next`` the next instant of each (a time event);
``whencond(P, t) -> c``
    the conditions of the ``when`` clauses (0 for sample clocks, which the wrapper ticks);
``whenact(x, z, P, t, x_pre, z_pre, P_pre, fire) -> (x, P)``
    the actions of the clauses marked in ``fire``, in order, each value computed as
    :meth:`acausal.hybrid.EventLoop.iterate` does (named quantities at the current point,
    ``pre(v)`` at the point where the event began, parameters as assigned so far);
``whenvals(x, z, P, t, x_pre, z_pre, P_pre, fire) -> v``
    each action's value, one per :class:`Action`: the wrapper refuses a value that is not
    finite and two clauses firing together that set one variable to different values,
    and re-reads the relations of a reinitialised state as they are (a state set exactly
    onto a threshold is on it), as the event iteration of :mod:`acausal.hybrid` does.

Relations of time that are not affine in time (``sin(w t) > 0.5``) cannot be scheduled:
they become indicators like the relations of the unknowns.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import casadi as cs

from ..discrete import Sample
from ..errors import AcausalError
from ..hybrid import _condition_text, action_levels, choosing

__all__ = ["HybridParts", "hybrid_parts", "TimeDiscrete", "Indicator", "Clock", "Action"]

_COMPARE = {cs.OP_LT: "<", cs.OP_LE: "<="}
_STEPS = {cs.OP_FLOOR: "floor", cs.OP_CEIL: "ceil"}


@dataclass
class TimeDiscrete:
    """A function of time frozen between time events: a relation ``g < 0`` / ``g <= 0``
    (``kind`` ``"lt"``, ``"le"``) or ``floor(g)`` / ``ceil(g)``, ``g`` affine in time."""

    sym: cs.SX
    kind: str
    arg: cs.SX
    text: str


@dataclass
class Indicator:
    """One event indicator of the FMU: the relation ``g < 0`` (``strict``) or ``g <= 0``
    whose value is ``P[pos]``."""

    pos: int
    strict: bool
    text: str


@dataclass
class Clock:
    """A ``when`` clause's sample clock: ticks at ``start + k interval``."""

    when: int
    start: float
    interval: float


@dataclass
class Action:
    """One ``reinit`` / ``assign`` of when clause ``when``, on the state ``x[pos]`` or the
    parameter ``P[pos]`` named ``target``; ``rels``: the indicators that depend on that
    state (re-read as they are after the reinit, as
    :meth:`acausal.hybrid.EventLoop.iterate` does)."""

    when: int
    kind: str
    target: str
    pos: int
    rels: list[int] = field(default_factory=list)
    level: int = 0  # its order of evaluation at an event (acausal.hybrid.action_levels)


@dataclass
class HybridParts:
    """What the FMU needs for events (see the module documentation)."""

    P: cs.SX
    P_values: list[float]
    frozen: list[cs.SX]  # the given expressions with the time discretes frozen
    indicators: list[Indicator] = field(default_factory=list)
    time_discretes: list[TimeDiscrete] = field(default_factory=list)
    time_positions: list[int] = field(default_factory=list)  # their values' places in P
    functions: dict[str, cs.Function] = field(default_factory=dict)
    clocks: list[Clock] = field(default_factory=list)
    when_texts: list[str] = field(default_factory=list)
    when_initial: list[bool] = field(default_factory=list)  # when(..., initial=True)
    actions: list[Action] = field(default_factory=list)  # in order (as whenvals gives them)
    # the clauses that choose a mode from the state, with their conditions' relations
    # (acausal.hybrid.choosing; relation k is indicator k)
    choosers: dict[int, list[int]] = field(default_factory=dict)

    @property
    def has_events(self) -> bool:
        return bool(self.indicators or self.time_discretes or self.when_texts)


class HybridExportError(AcausalError):
    """What cannot be exported; :func:`acausal.fmi.export` raises it as an
    ``FMUExportError`` with the model's name."""


def freeze_time(exprs: list[cs.SX], t: cs.SX, unknowns: set[str]
                ) -> tuple[list[cs.SX], list[TimeDiscrete]]:
    """``exprs`` with every relation of time and parameters only, and every ``floor`` /
    ``ceil`` of such an argument, replaced by a symbol (the same one wherever the same
    relation occurs)."""
    if not exprs:
        return exprs, []
    sizes = [int(e.numel()) for e in exprs]
    shapes = [e.shape for e in exprs]
    F = cs.vertcat(*[cs.vec(e) for e in exprs])
    inputs = cs.symvar(F)
    f = cs.Function("scan", [cs.vertcat(*inputs) if inputs else cs.SX(0, 1)], [F])
    ops = set(_COMPARE) | set(_STEPS)
    if not any(f.instruction_id(k) in ops for k in range(f.n_instructions())):
        return exprs, []
    tname = t.name()
    work: dict[int, cs.SX] = {}
    out = [cs.SX(0)] * int(f.sparsity_out(0).nnz())
    found: list[TimeDiscrete] = []
    seen: dict[tuple[int, str], cs.SX] = {}

    def of_time(*args: cs.SX) -> bool:
        names = {s.name() for a in args for s in cs.symvar(a)}
        return tname in names and not names & unknowns

    def new(kind: str, arg: cs.SX, text: str, op: int) -> cs.SX:
        key = (op, str(arg))
        if key not in seen:
            sym = cs.SX.sym(f"time_event[{len(found)}]")
            found.append(TimeDiscrete(sym, kind, arg, text if len(text) <= 100
                                      else text[:97] + "..."))
            seen[key] = sym
        return seen[key]

    for k in range(f.n_instructions()):
        op = f.instruction_id(k)
        ins, outs = f.instruction_input(k), f.instruction_output(k)
        if op == cs.OP_CONST:
            work[outs[0]] = cs.SX(f.instruction_constant(k))
        elif op == cs.OP_INPUT:
            work[outs[0]] = inputs[ins[1]]
        elif op == cs.OP_OUTPUT:
            out[outs[1]] = work[ins[0]]
        elif op in _COMPARE and of_time(work[ins[0]], work[ins[1]]):
            a, b = work[ins[0]], work[ins[1]]
            work[outs[0]] = new("lt" if op == cs.OP_LT else "le", a - b,
                                f"{a} {_COMPARE[op]} {b}", op)
        elif op in _STEPS and of_time(work[ins[0]]):
            a = work[ins[0]]
            work[outs[0]] = new(_STEPS[op], a, f"{_STEPS[op]}({a})", op)
        elif len(ins) == 1:
            work[outs[0]] = cs.SX.unary(op, work[ins[0]])
        else:
            work[outs[0]] = cs.SX.binary(op, work[ins[0]], work[ins[1]])
    full = cs.densify(cs.SX(f.sparsity_out(0), cs.vertcat(*out)) if out
                      else cs.SX(F.shape))
    parts, pos = [], 0
    for n, shp in zip(sizes, shapes, strict=True):
        parts.append(cs.reshape(full[pos:pos + n], shp[0], shp[1]) if n else cs.SX(*shp))
        pos += n
    return parts, found


def _origins(cm: Any, op: str, t: cs.SX) -> list[str]:
    """The components whose equations use ``op`` (floor, ceil) of time (for messages)."""
    out = []
    for eq in cm.flat.equations:
        if eq.res is not None and cs.depends_on(eq.res, t) and f"{op}(" in str(eq.res):
            out.append(eq.origin or type(cm.model).__name__)
    return sorted(set(out))


def hybrid_parts(cm: Any, exprs: list[cs.SX], prefix: str) -> HybridParts:
    """The event functions of ``cm`` (named ``<prefix>_ind`` etc.) and ``exprs`` (the
    FMU's other expressions in ``(x, z, p, t)``) with the time discretes frozen.

    Raises :class:`HybridExportError` for what cannot be exported (its message names the
    component and the construct)."""
    d = cm.dae
    x, z, p, t = d.x, d.z, d.p, d.t
    unknowns = {s.name() for s in cs.symvar(cs.vertcat(x, z))} if (x.numel() or z.numel()) \
        else set()
    p_index = {n: k for k, n in enumerate(d.p_names)}
    x_index = {n: k for k, n in enumerate(d.x_names)}
    whens = list(cm.flat.whens)

    # the when clauses' conditions and action values, and the named quantities they read
    conds: list[cs.SX] = []
    values: list[cs.SX] = []
    reads: list[str] = []
    texts: list[str] = []
    clocks: list[Clock] = []
    for k, w in enumerate(whens):
        if isinstance(w.condition, Sample):
            if w.condition.symbolic:
                raise HybridExportError(
                    f"{w.origin}: sample({w.condition.start}, {w.condition.interval}) has a "
                    "parameter for its start or interval, which the FMU's clocks cannot take "
                    "(their instants are numbers); give numbers to export it")
            clocks.append(Clock(k, w.condition.start, w.condition.interval))
            texts.append(f"when sample({w.condition.start}, {w.condition.interval}) "
                         f"[{w.origin}]")
            conds.append(cs.SX(0))
        else:
            cond = cs.SX(w.condition)
            extra = [s.name() for s in cs.symvar(cond)
                     if s.name() not in p_index and s.name() != t.name()]
            if extra:
                raise HybridExportError(
                    f"{w.origin}: the condition of a when() depends on {', '.join(extra)} "
                    "without a relation the FMU can watch; write it as a comparison of the "
                    "model's variables (h < 0)")
            # the relations as written, not their symbols (as res.events says it)
            text = _condition_text(cond, d.relations, getattr(w, "source", None))
            texts.append(f"when {text} [{w.origin}]")
            conds.append(cond)
        for target, kind, value in w.actions:
            if kind == "reinit" and target not in x_index:
                raise HybridExportError(
                    f"{w.origin}: reinit({target}) needs {target} to be a state, but the "
                    f"index reduction chose {', '.join(d.x_names) or 'no state'}; declare "
                    "it with state_priority=1 to make it one")
            for s in cs.symvar(value):
                name = s.name()[4:-1] if s.name().startswith("pre(") else s.name()
                if name in p_index or name == t.name():
                    continue
                if name not in d.out_index:
                    raise HybridExportError(
                        f"{w.origin}: the value of {kind}({target}) reads {s.name()}, which "
                        "is not a quantity of the model")
                reads.append(name)
            values.append(cs.SX(value))
    reads = list(dict.fromkeys(reads))
    read_exprs = [cs.SX(d.out_expr[d.out_index[n]]) for n in reads]
    for n, e in zip(reads, read_exprs, strict=True):
        if not e.is_scalar():
            raise HybridExportError(f"a when() action reads {n}, which is not a scalar")

    levels = action_levels(d, [("reinit", x_index[tg]) if kind == "reinit"
                               else ("assign", p_index[tg])
                               for w in whens for tg, kind, _ in w.actions], values)
    g_state = d.indicators if d.indicators is not None else cs.SX(0, 1)
    everything = list(exprs) + [g_state] + conds + values + read_exprs
    frozen, tds = freeze_time(everything, t, unknowns)
    n_e = len(exprs)
    out_exprs = frozen[:n_e]
    g_state = frozen[n_e]
    conds = frozen[n_e + 1: n_e + 1 + len(conds)]
    values = frozen[n_e + 1 + len(conds): n_e + 1 + len(conds) + len(values)]
    read_exprs = frozen[n_e + 1 + len(conds) + len(values):]

    # time discretes: scheduled when affine in time; relations that are not become
    # indicators, like the relations of the unknowns
    scheduled: list[TimeDiscrete] = []
    extra_ind: list[tuple[TimeDiscrete, cs.SX]] = []
    for td in tds:
        rate = cs.jacobian(td.arg, t)
        if not cs.depends_on(rate, t):
            scheduled.append(td)
        elif td.kind in ("lt", "le"):
            extra_ind.append((td, td.arg))
        else:
            where = _origins(cm, td.kind, t)
            raise HybridExportError(
                f"{td.text}" + (f" in {', '.join(where)}" if where else "") + f": {td.kind} "
                "of a function of time that is not affine in time; the FMU can schedule its "
                "jumps only for an affine argument (a t + b); acausal.simulate evaluates it "
                "as it is")
    P = cs.vertcat(p, *[td.sym for td in tds]) if tds else p
    n_p = int(p.numel())
    td_pos = {id(td): n_p + k for k, td in enumerate(tds)}

    indicators = [Indicator(p_index[r.name], bool(r.strict),
                            f"{r.text} [{', '.join(r.components)}]") for r in d.relations]
    for td, _ in extra_ind:
        indicators.append(Indicator(td_pos[id(td)], td.kind == "lt", td.text + " [time]"))
    g_all = cs.vertcat(g_state, *[g for _, g in extra_ind]) if extra_ind else g_state

    # values and next instants of the scheduled time discretes
    vals, nexts = [], []
    for td in scheduled:
        a = cs.jacobian(td.arg, t)
        b = cs.substitute(td.arg, t, cs.SX(0))
        never = cs.SX(cs.inf)
        if td.kind in ("lt", "le"):
            vals.append(cs.if_else(td.arg < 0, 1, 0) if td.kind == "lt"
                        else cs.if_else(td.arg <= 0, 1, 0))
            nexts.append(cs.if_else(a != 0, -b / a, never))
        else:
            v = cs.floor(td.arg) if td.kind == "floor" else cs.ceil(td.arg)
            vals.append(v)
            if td.kind == "floor":  # jumps where the argument leaves [F, F + 1)
                level = cs.if_else(a > 0, v + 1, v)
            else:  # ceil: leaves (C - 1, C]
                level = cs.if_else(a > 0, v, v - 1)
            nexts.append(cs.if_else(a != 0, (level - b) / a, never))
    sched_pos = [td_pos[id(td)] for td in scheduled]

    # the when actions, in order, for the clauses marked in `fire`
    nx, nz, nP = int(x.numel()), int(z.numel()), int(P.numel())
    x_pre, z_pre = cs.SX.sym("x_pre", nx), cs.SX.sym("z_pre", nz)
    P_pre = cs.SX.sym("P_pre", nP)
    P_now = cs.SX.sym("P_now", nP)  # the parameters when this round of actions began
    apply = cs.SX.sym("apply", len(levels))  # the actions run now (of one level)
    read_now = {n: cs.substitute(e, P, P_now) for n, e in zip(reads, read_exprs, strict=True)}
    read_pre = {n: cs.substitute(e, cs.vertcat(x, z, P), cs.vertcat(x_pre, z_pre, P_pre))
                for n, e in zip(reads, read_exprs, strict=True)}
    x_cur = [x[k] for k in range(nx)]
    P_cur = [P_now[k] for k in range(nP)]
    it = iter(values)
    actions: list[Action] = []
    each: list[cs.SX] = []  # each action's value, as whenact computes it
    x_rows = _rows_of_columns(g_all, x)
    for k, w in enumerate(whens):
        for target, kind, _ in w.actions:
            value = next(it)
            syms = cs.symvar(value)
            old, new = [], []
            for s in syms:
                name = s.name()
                if name.startswith("pre("):
                    old.append(s)
                    new.append(read_pre[name[4:-1]] if name[4:-1] in read_pre
                               else P_pre[p_index[name[4:-1]]])
                elif name in d.out_index and name not in p_index:
                    old.append(s)
                    new.append(read_now[name])
            if old:
                value = cs.substitute(value, cs.vertcat(*old), cs.vertcat(*new))
            value = cs.substitute(value, P, cs.vertcat(*P_cur))
            each.append(value)
            if kind == "reinit":
                j = x_index[target]
                x_cur[j] = cs.if_else(apply[len(actions)] > 0.5, value, x_cur[j])
                actions.append(Action(k, kind, target, j, x_rows[j], levels[len(actions)]))
            else:
                j = p_index[target]
                P_cur[j] = cs.if_else(apply[len(actions)] > 0.5, value, P_cur[j])
                actions.append(Action(k, kind, target, j, level=levels[len(actions)]))
    functions = {
        "ind": cs.Function(f"{prefix}_ind", [x, z, P, t], [cs.densify(g_all)]),
        "tdisc": cs.Function(f"{prefix}_tdisc", [P, t],
                             [cs.densify(cs.vertcat(*vals)) if vals else cs.SX(0, 1),
                              cs.densify(cs.vertcat(*nexts)) if nexts else cs.SX(0, 1)]),
        "whencond": cs.Function(f"{prefix}_whencond", [P_now, t],
                                [cs.densify(cs.substitute(cs.vertcat(*conds), P, P_now))
                                 if conds else cs.SX(0, 1)]),
        "whenact": cs.Function(f"{prefix}_whenact",
                               [x, z, P_now, t, x_pre, z_pre, P_pre, apply],
                               [cs.densify(cs.vertcat(*x_cur)) if nx else cs.SX(0, 1),
                                cs.densify(cs.vertcat(*P_cur))]),
        # each action's value (the wrapper checks them: finite, one value per variable)
        "whenvals": cs.Function(f"{prefix}_whenvals",
                                [x, z, P_now, t, x_pre, z_pre, P_pre, apply],
                                [cs.densify(cs.vertcat(*each)) if each else cs.SX(0, 1)]),
    }
    P_values = [float(v) for v in d.p_values] + [0.0] * len(tds)
    return HybridParts(P, P_values, out_exprs, indicators, scheduled, sched_pos, functions,
                       clocks, texts, [bool(getattr(w, "initial", False)) for w in whens],
                       actions, choosing(whens, d.relations, set(d.p_names) | {t.name()}))


def _rows_of_columns(g: cs.SX, x: cs.SX) -> list[list[int]]:
    """For each entry of ``x``, the rows of ``g`` that depend on it (directly)."""
    out: list[list[int]] = [[] for _ in range(int(x.numel()))]
    if g.numel() and x.numel():
        rows, cols = cs.jacobian_sparsity(g, x).get_triplet()
        for r, c in zip(rows, cols, strict=True):
            out[c].append(int(r))
    return out
