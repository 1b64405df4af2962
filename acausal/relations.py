"""Discrete relations: the conditions that make a model hybrid, frozen between events.

A relation of the model's unknowns (``x < 0`` in an ``if_else``, the kink of ``fabs``,
``sign``, ``fmin``, ``fmax``) would make the equations switch inside an integrator step,
where no error control can see it. As in Modelica, every such relation is replaced by a
*discrete* value ``relation[k]`` (true or false), constant between events, and its
*indicator* ``g_k = a - b`` (the relation is ``g_k < 0`` or ``g_k <= 0``) is watched during
integration: where ``g_k`` crosses zero the simulation stops (a state event), the relation
takes its new value, the algebraic variables are solved again and the integration restarts
(:mod:`acausal.hybrid`).

Relations of time and parameters only (a step input, a pulse) are left as they are: their
instants are known in advance and handled as time events (:mod:`acausal.events`). A
relation of an unknown that turns out to be a function of time only (a pulse through
signal ports) is frozen, and its instants are found as time events in its indicator.

The pass rewrites the flat equations (CasADi expression graphs are rebuilt node by node
from their instruction list, with each relation node replaced by its discrete symbol);
the discrete values enter the rest of the chain as parameters.
"""

from __future__ import annotations

from dataclasses import field
from typing import TYPE_CHECKING, Any

import casadi as cs
import numpy as np

from .functions import no_relation_of
from .records import record, replace
from .state import need
from .structure.system import flat_columns
from .symbols import FlatParameter

if TYPE_CHECKING:
    from .state import CompileState

__all__ = ["Relation", "freeze_relations", "relations_pass", "RELATION_PREFIX", "no_event"]

RELATION_PREFIX = "relation"

#: marks the operands of relations that must not generate events (see :func:`no_event`);
#: added to an operand, it stands for zero
NO_EVENT = cs.SX.sym("__no_event__")


def no_event(expr: Any) -> cs.SX:
    """``expr`` with its relations evaluated as they are, without events (Modelica's
    ``noEvent``): for conditions that are continuous where they switch or whose branches
    are equivalent (a C1 junction of two formulas, the branch choice of a quaternion
    extraction). The integrator then steps across them under its error control only.
    """
    e = cs.SX(expr)
    inputs = cs.symvar(e)
    f = cs.Function("no_event", [cs.vertcat(*inputs) if inputs else cs.SX(0, 1)], [e])
    work: dict[int, cs.SX] = {}
    out = [cs.SX(0)] * int(f.sparsity_out(0).nnz())
    for k in range(f.n_instructions()):
        op, ins, outs = f.instruction_id(k), f.instruction_input(k), f.instruction_output(k)
        if op == _CONST:
            work[outs[0]] = cs.SX(f.instruction_constant(k))
        elif op == _INPUT:
            work[outs[0]] = inputs[ins[1]]
        elif op == _OUTPUT:
            out[outs[1]] = work[ins[0]]
        elif len(ins) == 1:
            a = work[ins[0]]
            work[outs[0]] = cs.SX.unary(op, a + NO_EVENT if op in _KINKS else a)
        else:
            a, b = work[ins[0]], work[ins[1]]
            marked = op in _COMPARE or op in _KINKS
            work[outs[0]] = cs.SX.binary(op, a + NO_EVENT if marked else a, b)
    full = cs.SX(f.sparsity_out(0), cs.vertcat(*out)) if out else cs.SX(e.shape)
    return cs.reshape(cs.densify(full), e.shape)


def _is_mark(a: cs.SX) -> bool:
    return bool(a.is_symbolic() and a.name() == NO_EVENT.name())


def _unmark(a: cs.SX) -> cs.SX | None:
    """The operand without its no-event mark (``operand + mark``, the mark standing for
    zero), or None if it carries none."""
    if _is_mark(a):
        return cs.SX(0)
    if a.is_op(cs.OP_ADD):
        for i, j in ((1, 0), (0, 1)):
            if _is_mark(a.dep(i)):
                return a.dep(j)
    if a.is_op(cs.OP_SUB):  # CasADi writes (-c) + mark as mark - c
        if _is_mark(a.dep(0)):
            return -a.dep(1)
        if _is_mark(a.dep(1)):
            return a.dep(0)
    return None

_COMPARE = {cs.OP_LT: "<", cs.OP_LE: "<="}
_KINKS = {cs.OP_FABS: "fabs", cs.OP_SIGN: "sign", cs.OP_FMIN: "fmin", cs.OP_FMAX: "fmax"}
_STEPS = {cs.OP_FLOOR: "floor", cs.OP_CEIL: "ceil"}  # (of the unknowns: no event, a warning)
_INPUT, _OUTPUT, _CONST = cs.OP_INPUT, cs.OP_OUTPUT, cs.OP_CONST


@record
class Relation:
    """One frozen relation.

    Attributes
    ----------
    name : str
        Its discrete parameter, ``relation[k]``.
    sym : casadi.SX
        That symbol.
    indicator : casadi.SX
        ``g = a - b`` in the flat unknowns; the relation is true when ``g < 0``
        (``strict``) or ``g <= 0``.
    strict : bool
        ``<`` (True) or ``<=``.
    text : str
        The relation as written (``a < b``, ``fabs(a)``...).
    components : list of str
        The components whose unknowns it involves.
    """

    name: str
    sym: cs.SX
    indicator: cs.SX
    strict: bool
    text: str
    components: list[str] = field(default_factory=list)

    def value(self, g: float) -> bool:
        """The relation's value for the indicator value ``g`` (evaluated live)."""
        return g < 0.0 if self.strict else g <= 0.0


def _scan(f: cs.Function) -> bool:
    """Whether the function contains a relation, a kink or a step at all (cheap
    pre-check)."""
    ops = set(_COMPARE) | set(_KINKS) | set(_STEPS)
    return any(f.instruction_id(k) in ops for k in range(f.n_instructions()))


_LINEAR = (cs.OP_ADD, cs.OP_SUB, cs.OP_NEG, cs.OP_TWICE)


def affine_in_time(e: cs.SX, t: cs.SX) -> bool:
    """Whether ``e`` is ``a t + b`` with ``a`` and ``b`` free of time (functions of the
    parameters): its switching instants are then known in advance (time events,
    :mod:`acausal.events`). ``floor``, ``if_else``, ``sin`` ... of time are not."""
    e = cs.SX(e)
    syms = cs.symvar(e)
    if t.name() not in {s.name() for s in syms}:
        return True
    f = cs.Function("affine", [cs.vertcat(*syms)], [e])
    kind: dict[int, int] = {}  # work register -> 0 free of time, 1 affine, 2 other
    for k in range(f.n_instructions()):
        op, ins, outs = f.instruction_id(k), f.instruction_input(k), f.instruction_output(k)
        if op == _CONST:
            kind[outs[0]] = 0
        elif op == _INPUT:
            kind[outs[0]] = int(syms[ins[1]].name() == t.name())
        elif op == _OUTPUT:
            if kind[ins[0]] > 1:
                return False
        else:
            args = [kind[i] for i in ins if i >= 0]
            top = max(args) if args else 0
            if top == 0 or (op in _LINEAR and top == 1):
                kind[outs[0]] = top
            elif op == cs.OP_MUL and sorted(args) == [0, 1]:
                kind[outs[0]] = 1
            elif op == cs.OP_DIV and args == [1, 0]:
                kind[outs[0]] = 1
            else:
                kind[outs[0]] = 2
    return True


def _rebuild(op: int, args: list[cs.SX]) -> cs.SX:
    return cs.SX.unary(op, args[0]) if len(args) == 1 else cs.SX.binary(op, args[0], args[1])


def freeze_relations(exprs: list[cs.SX], unknowns: cs.SX, t: cs.SX,
                     origin_of: dict[str, str], start: int = 0,
                     steps: list[tuple[str, list[str]]] | None = None
                     ) -> tuple[list[cs.SX], list[Relation]]:
    """``exprs`` with every relation of ``unknowns`` replaced by a discrete symbol.

    Relations whose operands do not depend on ``unknowns`` (time and parameters only) are
    kept where they compare affine functions of time (their instants are time events);
    a comparison or ``sign`` of a function of time that is not affine (``sin(w t) > 0.99``)
    is frozen too: its crossings are located like those of the unknowns' relations (the
    kinks ``fabs``, ``fmin``, ``fmax`` of time are continuous and left to the integrator).
    Returns the new expressions and the relations, numbered from ``start``. ``floor`` and
    ``ceil`` of the unknowns are left as they are (their jumps are not events): each is
    added to ``steps`` as its text and the components of its operand.
    """
    if not exprs:
        return exprs, []
    inputs = cs.symvar(cs.vertcat(*exprs))
    f = cs.Function("scan", [cs.vertcat(*inputs) if inputs else cs.SX(0, 1)],
                    [cs.vertcat(*exprs)])
    if not _scan(f):
        return exprs, []  # (no relation, hence no no_event mark either)
    from .exprtext import expression_text  # (loaded by the models that have relations)

    unknown_names = {s.name() for s in cs.symvar(unknowns)} if unknowns.numel() else set()
    work: dict[int, cs.SX] = {}
    out = [cs.SX(0)] * int(f.sparsity_out(0).nnz())
    relations: list[Relation] = []
    seen: dict[tuple[int, str, str], cs.SX] = {}

    def live(*args: cs.SX) -> bool:
        names = {s.name() for a in args for s in cs.symvar(a)}
        return bool(names & unknown_names)

    t_name = t.name()

    def timed(*args: cs.SX) -> bool:
        """A function of time (and parameters) that is not affine in it: no time event
        can find its crossings, which must be watched."""
        if t_name not in {s.name() for a in args for s in cs.symvar(a)}:
            return False
        return not all(affine_in_time(a, t) for a in args)

    # a frozen kink as text, and as its author wrote it: a later relation on it reads
    # fmin(fmax(u, lo), hi), not fmin(if_else(relation[0], lo, u), hi)
    written: dict[str, str] = {}

    def shown(e: cs.SX) -> str:
        text = expression_text(e)
        if RELATION_PREFIX in text:
            for frozen in sorted(written, key=len, reverse=True):
                text = text.replace(frozen, written[frozen])
        return text

    def new_relation(op_text: str, strict: bool, g: cs.SX, key: tuple) -> cs.SX:
        if key in seen:
            return seen[key]
        name = f"{RELATION_PREFIX}[{start + len(relations)}]"
        sym = cs.SX.sym(name)
        comps = sorted({origin_of[s.name()] for s in cs.symvar(g) if s.name() in origin_of})
        if len(op_text) > 100:
            op_text = op_text[:97] + "..."
        relations.append(Relation(name, sym, g, strict, op_text, comps))
        seen[key] = sym
        return sym

    for k in range(f.n_instructions()):
        op = f.instruction_id(k)
        ins = f.instruction_input(k)
        outs = f.instruction_output(k)
        if op == _CONST:
            work[outs[0]] = cs.SX(f.instruction_constant(k))
        elif op == _INPUT:
            work[outs[0]] = inputs[ins[1]] if len(inputs) else cs.SX(0)
        elif op == _OUTPUT:
            out[outs[1]] = work[ins[0]]
        elif (op in _COMPARE or op in _KINKS) and _unmark(work[ins[0]]) is not None:
            args = [work[i] for i in ins]  # no_event: the relation stays as it is
            work[outs[0]] = _rebuild(op, [_unmark(args[0]), *args[1:]])  # type: ignore[list-item]
        elif op in _COMPARE and (live(work[ins[0]], work[ins[1]])
                                 or timed(work[ins[0]], work[ins[1]])):
            a, b = work[ins[0]], work[ins[1]]
            text = f"{shown(a)} {_COMPARE[op]} {shown(b)}"
            work[outs[0]] = new_relation(text, op == cs.OP_LT, a - b, (op, str(a), str(b)))
        elif op in _KINKS and (live(*[work[i] for i in ins])
                               or (op == cs.OP_SIGN and timed(work[ins[0]]))):
            a = work[ins[0]]
            if op in (cs.OP_FABS, cs.OP_SIGN):
                at = shown(a)
                d = new_relation(f"{_KINKS[op]}({at}): {at} < 0", True, a,
                                 (cs.OP_LT, str(a), "0"))
                work[outs[0]] = (cs.if_else(d, -a, a) if op == cs.OP_FABS
                                 else cs.if_else(d, -1.0, 1.0))
                written[expression_text(work[outs[0]])] = f"{_KINKS[op]}({at})"
            else:
                b = work[ins[1]]
                at, bt = shown(a), shown(b)
                d = new_relation(f"{_KINKS[op]}({at}, {bt}): {at} <= {bt}", False, a - b,
                                 (cs.OP_LE, str(a), str(b)))
                work[outs[0]] = (cs.if_else(d, a, b) if op == cs.OP_FMIN
                                 else cs.if_else(d, b, a))
                written[expression_text(work[outs[0]])] = f"{_KINKS[op]}({at}, {bt})"
        else:
            if op in _STEPS and steps is not None and live(work[ins[0]]):
                a = work[ins[0]]
                steps.append((f"{_STEPS[op]}({shown(a)})", sorted(
                    {origin_of[s.name()] for s in cs.symvar(a) if s.name() in origin_of})))
            work[outs[0]] = _rebuild(op, [work[i] for i in ins])
    full = cs.SX(f.sparsity_out(0), cs.vertcat(*out)) if out else cs.SX(0, 1)
    dense = cs.densify(full)
    return cs.vertsplit(dense) if len(exprs) > 1 else [dense], relations


def _warn_steps(steps: list[tuple[str, list[str]]]) -> None:
    """``floor``/``ceil`` of the unknowns: their jumps are not located (the integrator
    steps across them, its error test absorbing the jump), so the result near them is only
    as good as its tolerance."""
    if not steps:
        return
    import warnings

    from .errors import ModelWarning, user_stacklevel

    seen = list(dict.fromkeys(f"{text} [{', '.join(c)}]" for text, c in steps))
    warnings.warn(
        "the jumps of " + "; ".join(seen[:3]) + (f" and {len(seen) - 3} more" if len(seen) > 3
                                                 else "")
        + " are not events: floor and ceil of the model's variables change value without "
        "the integrator locating where (only those of an affine function of time are time "
        "events), so the result near each jump is only as accurate as the tolerance "
        "(1e-3 at rtol 1e-6 in a typical case). Write the switching with a relation the "
        "library watches: a discrete counter, when(x > n + 1, assign(n, pre(n) + 1)), or "
        "compare the variable directly (if_else(x > 1, ...))",
        ModelWarning, stacklevel=user_stacklevel())


def _owned(rels: list[Relation], equations: list[Any], whens: list[Any]) -> list[Relation]:
    """The relations with the components whose equations or when clauses use them (a
    limiter's relation is the limiter's, though its operands may be the variables of the
    block that feeds it); a relation that none uses (an output's) keeps the components of
    its operands."""
    users = [(e.origin, e.res) for e in equations if e.res is not None] + [
        (w.origin, c) for w in whens for c in
        ([w.condition] if isinstance(w.condition, cs.SX) else [])
        + [v for _, _, v in w.actions]]
    if not users or not rels:
        return rels
    column = cs.vertcat(*[cs.vec(cs.SX(e)) for _, e in users])
    rows, cols = cs.jacobian_sparsity(column, cs.vertcat(*[r.sym for r in rels])).get_triplet()
    owner = np.repeat(np.arange(len(users)), [int(cs.SX(e).numel()) for _, e in users])
    by_rel: dict[int, set[str]] = {}
    for row, col in zip(rows, cols, strict=True):
        origin = users[int(owner[row])][0]
        if origin:
            by_rel.setdefault(int(col), set()).add(origin)
    return [replace(r, components=sorted(by_rel[k])) if k in by_rel else r
            for k, r in enumerate(rels)]


def _unknowns_in(column: cs.SX, unknowns: cs.SX, fs: Any) -> cs.SX:
    """The unknowns among the symbols of ``column`` (a few rows left to prove free of
    relations), or ``unknowns`` as given where the column is not small or the flat
    system's index does not name every unknown: the proof's directional derivative
    along a symbolic seed per unknown (:func:`~acausal.functions.no_relation_of`) is
    the same on the unknowns the rows hold, and a hundred thousand seed symbols cost more
    than the proof of a few rows."""
    index = fs.index
    if 8 * column.numel() > unknowns.numel() or len(index) != len(fs.variables):
        return unknowns
    held = [s for s in cs.symvar(column) if s.name() in index]
    return cs.vertcat(cs.SX(0, 1), *held)


def relations_pass(state: CompileState) -> CompileState:
    """Pass: freeze the relations of the unknowns into discrete parameters (in the
    equations, the outputs and the conditions and values of ``when`` clauses)."""
    fs = need(state.flat, "the flat system (flatten pass)")
    eqs = fs.equations + fs.initial_equations
    when_exprs: list[cs.SX] = []
    for w in fs.whens:
        if isinstance(w.condition, cs.SX):
            when_exprs.append(w.condition)
        when_exprs.extend(v for _, _, v in w.actions)
    # the common case first, cheaply: no relation in the equations at all (outputs are
    # port quantities and variables, which have none unless the equations do); the
    # equations of templates proven free of them once for their class need no proof
    # (the columns are kept with the flat system: the alias pass takes them over)
    column, unknowns = flat_columns(fs)
    proof_unknowns = unknowns
    free = fs.relation_free
    if free is not None and len(free) == len(fs.equations):
        column = cs.SX(cs.vertcat(
            cs.SX(0, 1), *[fs.equations[i].res for i in np.flatnonzero(~free).tolist()],
            *[e.res for e in fs.initial_equations]))
        proof_unknowns = _unknowns_in(column, unknowns, fs)
    elif fs.initial_equations:
        column = cs.vertcat(column, *[e.res for e in fs.initial_equations])
    if not when_exprs and eqs and no_relation_of(column, proof_unknowns):
        return state
    origin_of = {v.name: v.origin for v in fs.variables}
    out_names = list(fs.outputs)
    exprs = ([e.res for e in eqs] + [cs.vec(cs.SX(fs.outputs[n])) for n in out_names]
             + when_exprs)
    sizes = ([1] * len(eqs) + [int(cs.SX(fs.outputs[n]).numel()) for n in out_names]
             + [1] * len(when_exprs))
    flat_exprs: list[cs.SX] = []
    for e in exprs:
        flat_exprs.extend(cs.vertsplit(e) if e.numel() > 1 else [e])
    steps: list[tuple[str, list[str]]] = []
    new, rels = freeze_relations(flat_exprs, unknowns, fs.t, origin_of, steps=steps)
    _warn_steps(steps)
    if new is flat_exprs:
        return state
    from .exprtext import readable

    pos = 0
    rebuilt: list[Any] = []
    for size in sizes:
        rebuilt.append(cs.vertcat(*new[pos:pos + size]) if size != 1 else new[pos])
        pos += size
    n, n_all = len(fs.equations), len(eqs)
    equations = [e.rewritten(r) for r, e in zip(rebuilt[:n], fs.equations, strict=True)]
    initial = [e.rewritten(r)
               for r, e in zip(rebuilt[n:n_all], fs.initial_equations, strict=True)]
    outputs = {}
    for name, r in zip(out_names, rebuilt[n_all:n_all + len(out_names)], strict=True):
        old = cs.SX(fs.outputs[name])
        outputs[name] = cs.reshape(r, old.shape) if old.numel() > 1 else r
    it = iter(rebuilt[n_all + len(out_names):])
    whens = []
    for w in fs.whens:
        cond = next(it) if isinstance(w.condition, cs.SX) else w.condition
        whens.append(replace(w, condition=cond,
                             actions=[(t, k, next(it)) for t, k, _ in w.actions]))
    # a relation that is a when's whole condition reads best as its author wrote it
    written: dict[str, str] = {}
    for w in whens:
        if isinstance(w.condition, cs.SX) and w.condition.is_symbolic() and w.source:
            written.setdefault(w.condition.name(), w.source)
    rels = [replace(r, text=written[r.name]) if r.name in written and not readable(r.text)
            else r for r in rels]
    rels = _owned(rels, equations + initial, whens)
    params = list(fs.parameters) + [FlatParameter(r.name, r.sym, 0.0, "", r.text,
                                                  kind="relation")
                                    for r in rels]
    flat = replace(fs, equations=equations, initial_equations=initial, outputs=outputs,
                   parameters=params, relations=rels, whens=whens, relation_free=None,
                   res_column=None, var_column=None, par_column=None)
    return state.update(flat=flat)
