"""Alias elimination: remove trivial equations ``a = b``, ``a = -b``, ``a = constant``.

Variables are grouped in signed sets (``a = s * rep``); one representative per set stays an
unknown, the others become outputs ``s * rep`` (or the constant). Derivatives of aliased
variables are merged too (``der(a) = s * der(rep)``). Start values and ``fixed`` flags move to
the representative; conflicting fixed starts are an error naming both variables.
Every eliminated variable stays addressable in results.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import casadi as cs

from ..errors import StartValueConflict
from ..flatten import FlatEquation, FlatSystem
from ..state import need
from .diagnostics import StructureDiagnostics
from .system import EquationSystem

if TYPE_CHECKING:
    from ..state import CompileState

__all__ = ["AliasResult", "eliminate_aliases", "alias_pass"]

_ZERO = cs.SX(0)


@dataclass
class AliasResult:
    """Outcome of alias elimination."""

    equations: list[FlatEquation]
    substitution: dict[int, cs.SX]  # eliminated variable index -> expression
    n_before: int = 0
    removed: list[FlatEquation] = field(default_factory=list)
    # start values and fixed flags moved onto representatives: index -> (start, fixed)
    starts: dict[int, tuple[float, bool]] = field(default_factory=dict)
    #: the residuals of ``equations`` stacked in one column, when the elimination formed
    #: it (saves stacking them again)
    residuals: cs.SX | None = field(default=None, repr=False)

    def pairs(self, fs: FlatSystem) -> tuple[list[cs.SX], list[cs.SX]]:
        """(eliminated symbols, their expressions in the kept unknowns)."""
        return ([fs.variables[k].sym for k in self.substitution],
                list(self.substitution.values()))


@dataclass(frozen=True)
class _Alias:
    """``v_a = sign * v_b``."""

    a: int
    b: int
    sign: float


@dataclass(frozen=True)
class _Const:
    """``v_a = value`` (an expression in parameters and constants)."""

    a: int
    value: cs.SX


_NEG, _SUB, _ADD = cs.OP_NEG, cs.OP_SUB, cs.OP_ADD
_SYMBOL, _CONSTANT = cs.OP_PARAMETER, cs.OP_CONST
# the C functions behind ``SX.op``, ``SX.dep`` and ``SX.name`` (one Python call less per
# node: the classification visits a few nodes of every equation)
_raw = getattr(cs, "_casadi", None)
_op = getattr(_raw, "SX_op", cs.SX.op)
_dep = getattr(_raw, "SX_dep", cs.SX.dep)
_name = getattr(_raw, "SX_name", cs.SX.name)


def _leaf(e: cs.SX, fs: FlatSystem, params: set[str]) -> tuple[float, str, object] | None:
    """``(sign, kind, payload)`` for a variable, parameter or constant leaf (or its negation)."""
    sign = 1.0
    op = _op(e)  # one query per node: the operation code says symbol, constant or else
    while op == _NEG:
        sign = -sign
        e = _dep(e, 0)
        op = _op(e)
    if op == _SYMBOL:
        name = _name(e)
        k = fs.index.get(name)
        if k is not None:
            return sign, "var", k
        if name in params:
            return sign, "par", e
        return None  # time
    if op == _CONSTANT:
        return sign, "const", e
    return None


def _classify(fs: FlatSystem, eq: FlatEquation, params: set[str]) -> _Alias | _Const | None:
    """Classify a trivial equation: ``a = sign * b``, ``a = const``, or None.

    Recognised by the shape of the expression tree: ``a``, ``a - b``, ``a + b`` with leaves
    that are variables, parameters or constants (possibly negated). Anything else is not
    an alias equation.
    """
    res = eq.res
    terms: list[tuple[float, str, object]] = []
    op = _op(res)
    if op == _SUB or op == _ADD:
        l0 = _leaf(_dep(res, 0), fs, params)
        if l0 is None:
            return None
        l1 = _leaf(_dep(res, 1), fs, params)
        if l1 is None:
            return None
        if op == _SUB:
            l1 = (-l1[0], l1[1], l1[2])
        terms = [l0, l1]
    else:
        leaf = _leaf(res, fs, params)
        if leaf is None:
            return None
        terms = [leaf]
    vars_ = [t for t in terms if t[1] == "var"]
    others = [t for t in terms if t[1] != "var"]
    if len(vars_) == 2:
        (sa, _, a), (sb, _, b) = vars_
        if a == b:
            return None
        return _Alias(int(a), int(b), -sb / sa)  # type: ignore[call-overload]
    if len(vars_) == 1:
        sa, _, a = vars_[0]
        if not others:
            return _Const(int(a), _ZERO)  # type: ignore[call-overload]
        (so, _, payload), *more = others
        first: cs.SX = payload  # type: ignore[assignment]
        value = first if so * sa < 0 else -first  # a = -(so/sa) * payload
        for s, _, p in more:
            value = value - p if s * sa > 0 else value + p  # type: ignore[operator]
        return _Const(int(a), value)  # type: ignore[call-overload]
    return None


def eliminate_aliases(fs: FlatSystem) -> AliasResult:
    """Eliminate trivial equations of ``fs`` (iterated until none is left)."""
    V = fs.variables
    n = len(V)
    # signed union-find: value(k) = sign[k] * value(parent[k])
    parent = list(range(n))
    sign = [1.0] * n
    const: dict[int, cs.SX] = {}  # root -> constant expression

    def find(k: int) -> tuple[int, float]:
        s = 1.0
        path = []
        while parent[k] != k:
            path.append(k)
            s *= sign[k]
            k = parent[k]
        root = k
        # path compression
        acc = s
        for j in path:
            sj = sign[j]
            parent[j] = root
            sign[j] = acc
            acc *= sj
        return root, s

    is_der = [v.der_of is not None for v in V]

    def rank(k: int) -> tuple:
        v = V[k]
        user_var = "[" not in v.name.split(".")[-1] and "->" not in v.name
        return (v.der is not None, v.fixed, user_var, -len(v.name))

    equations = list(fs.equations)
    params = {p.name for p in fs.parameters}
    removed: list[FlatEquation] = []
    changed = True
    todo: set[int] | None = None  # equations to classify (None: all)
    column: cs.SX | None = None  # the residuals of ``equations`` stacked, once formed
    while changed:
        changed = False
        keep: list[FlatEquation] = []
        for k_eq, eq in enumerate(equations):
            c = None if (todo is not None and k_eq not in todo) else _classify(fs, eq, params)
            if c is None:
                keep.append(eq)
                continue
            if isinstance(c, _Alias):
                a, b, s = c.a, c.b, c.sign
                if is_der[a] or is_der[b]:
                    keep.append(eq)
                    continue
                ra, sa = find(a)
                rb, sb = find(b)
                if ra == rb:
                    keep.append(eq)  # redundant: left for the balance check to report
                    continue
                # value(a) = s value(b):  sa*ra = s*sb*rb  ->  rb = (sa/(s*sb)) ra
                rel = sa / (s * sb)
                if rank(rb) > rank(ra):
                    ra, rb, rel = rb, ra, 1.0 / rel
                if rb in const and ra in const:
                    keep.append(eq)
                    continue
                parent[rb] = ra
                sign[rb] = rel
                if rb in const:
                    const[ra] = const.pop(rb) / rel
                removed.append(eq)
                changed = True
            else:
                a, expr = c.a, c.value
                if is_der[a]:
                    keep.append(eq)
                    continue
                ra, sa = find(a)
                if ra in const:
                    keep.append(eq)
                    continue
                const[ra] = expr / sa
                removed.append(eq)
                changed = True
        if changed:
            column = None
        equations = keep
        if changed and keep:
            subst = _substitution(fs, find, const)
            if subst:
                olds = cs.vertcat(*[V[k].sym for k in subst])
                news = cs.vertcat(*subst.values())
                F = cs.vertcat(*[e.res for e in keep])
                touched = cs.jacobian_sparsity(F, olds).get_crs()[0]
                todo = {r for r in range(len(keep)) if touched[r + 1] > touched[r]}
                column = cs.substitute(F, olds, news)
                resid = cs.vertsplit(column)
                equations = [
                    FlatEquation(r, e.origin, e.label, e.source, coordinates=e.coordinates)
                    for r, e in zip(resid, keep, strict=True)
                ]
    subst = _substitution(fs, find, const)
    starts = _merge_starts(fs, find, const)
    return AliasResult(equations, subst, len(fs.equations), removed, starts, column)


def _substitution(fs: FlatSystem, find, const) -> dict[int, cs.SX]:
    """Expressions of the eliminated variables (and their derivatives) in the kept ones.

    The representative of a set is its best-ranked member, so it has a derivative symbol
    whenever any member has one.
    """
    V = fs.variables
    out: dict[int, cs.SX] = {}
    for k in range(len(V)):
        if V[k].der_of is not None:
            continue
        r, s = find(k)
        if r in const:
            out[k] = const[r] if s == 1.0 else s * const[r]  # (1 * e is e in CasADi)
        elif r != k:
            out[k] = V[r].sym if s == 1.0 else s * V[r].sym
        else:
            continue
        dk = V[k].der
        if dk is not None:
            if r in const:
                out[dk] = cs.SX(0)
            else:
                rd = V[r].der
                assert rd is not None, "alias representative lost its derivative"
                out[dk] = V[rd].sym if s == 1.0 else s * V[rd].sym
    return out


def _param_values(fs: FlatSystem, expr: cs.SX) -> float | None:
    if fs.parameters:
        expr = cs.substitute(
            expr,
            cs.vertcat(*[p.sym for p in fs.parameters]),
            cs.DM([p.value for p in fs.parameters]),
        )
    if cs.depends_on(expr, fs.t) or not cs.SX(expr).is_constant():
        return None
    return float(cs.evalf(expr))


def _merge_starts(fs: FlatSystem, find, const) -> dict[int, tuple[float, bool]]:
    """Start values and fixed flags moved to the representatives: ``{index: (start,
    fixed)}`` for every variable whose pair changes (the flat system is left as it is)."""
    V = fs.variables
    out: dict[int, tuple[float, bool]] = {}

    def current(k: int) -> tuple[float, bool]:
        return out.get(k, (V[k].start, V[k].fixed))

    for k, v in enumerate(V):
        if v.der_of is not None or not v.fixed:
            continue
        r, s = find(k)
        if r in const:
            value = _param_values(fs, s * const[r])
            if value is not None and abs(value - v.start) > 1e-9 * max(1.0, abs(value)):
                raise StartValueConflict(
                    f"{v.name} has fixed start value {v.start}, but the model's equations "
                    f"make it the constant {value}; remove fixed=True (or the start value) "
                    f"on {v.name}"
                )
            out[k] = (v.start, False)
            continue
        if r == k:
            continue
        rep = V[r]
        rep_start, rep_fixed = current(r)
        value = v.start / s
        if rep_fixed and abs(rep_start - value) > 1e-12 * max(1.0, abs(value)):
            raise StartValueConflict(
                f"conflicting initial values: {v.name} (start={v.start}, fixed) and "
                f"{rep.name} (start={rep_start}, fixed) are the same quantity"
                + (" up to sign" if s < 0 else "")
                + " by the model's equations; remove fixed=True on one of them"
            )
        out[r] = (value, True)
    return out


def equation_system(fs: FlatSystem, al: AliasResult) -> EquationSystem:
    """The kept variables (re-indexed, derivative links remapped) and equations."""
    keep = [k for k in range(len(fs.variables)) if k not in al.substitution]
    new_index = {k: n for n, k in enumerate(keep)}
    variables = []
    starts = al.starts
    for k in keep:
        v = fs.variables[k]
        if k in starts or v.der is not None or v.der_of is not None:
            # a copy where something changes; the others are shared with the flat system
            # (no pass changes a variable in place: see EquationSystem.copy)
            v = v.copy()
            if k in starts:
                v.start, v.fixed = starts[k]
            if v.der is not None:
                v.der = new_index.get(v.der)
            if v.der_of is not None:
                v.der_of = new_index.get(v.der_of)
        variables.append(v)
    return EquationSystem.from_lists(fs.t, variables, list(al.equations), fs.parameters,
                                     al.residuals)


def alias_pass(state: CompileState) -> CompileState:
    """Pass: flat system -> aliases removed, the equation system of the structure stage and
    what structural error messages need to name the user's objects."""
    fs = need(state.flat, "the flat system (flatten pass)")
    al = eliminate_aliases(fs)
    return state.update(aliases=al, system=equation_system(fs, al),
                        diagnostics=StructureDiagnostics.from_aliases(fs, al.substitution))
