"""Alias elimination: remove trivial equations ``a = b``, ``a = -b``, ``a = constant``.

Variables are grouped in signed sets (``a = s * rep``); one representative per set stays an
unknown, the others become outputs ``s * rep`` (or the constant). Derivatives of aliased
variables are merged too (``der(a) = s * der(rep)``). Start values and ``fixed`` flags move to
the representative; conflicting fixed starts are an error naming both variables.
Every eliminated variable stays addressable in results.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import field
from operator import add, attrgetter, sub
from typing import TYPE_CHECKING, Any, NamedTuple

import casadi as cs
import numpy as np

from ..csr import offsets, spread, unique
from ..errors import StartValueConflict
from ..fastsx import same_nodes, stack
from ..flatten import FlatEquation, FlatSystem
from ..records import record
from ..state import need
from .diagnostics import StructureDiagnostics
from .system import (
    EquationSystem,
    coordinate_groups,
    flat_columns,
    hidden_coordinates,
    int_pool,
)

if TYPE_CHECKING:
    from ..state import CompileState

__all__ = ["AliasResult", "eliminate_aliases", "alias_pass"]

_ZERO = cs.SX(0)


@record
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
    #: the incidence of ``equations`` on the flat unknowns (compressed rows ``(ptr,
    #: col)``, flat variable indices) and the flat unknowns' symbols stacked, when the
    #: elimination formed them (:func:`equation_system` reuses them)
    incidence: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False)
    symbols: cs.SX | None = field(default=None, repr=False)
    #: eliminated variable index -> its representative, where that is an unknown (not a
    #: constant)
    roots: dict[int, int] = field(default_factory=dict, repr=False)

    def pairs(self, fs: FlatSystem) -> tuple[list[cs.SX], list[cs.SX]]:
        """(eliminated symbols, their expressions in the kept unknowns)."""
        return ([fs.variables[k].sym for k in self.substitution],
                list(self.substitution.values()))


class _Alias(NamedTuple):
    """``v_a = sign * v_b``."""

    a: int
    b: int
    sign: float


class _Const(NamedTuple):
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


def _leaf(e: cs.SX, index: dict[str, int], params: set[str]
          ) -> tuple[float, str, object] | None:
    """``(sign, kind, payload)`` for a variable, parameter or constant leaf (or its negation)."""
    sign = 1.0
    op = _op(e)  # one query per node: the operation code says symbol, constant or else
    while op == _NEG:
        sign = -sign
        e = _dep(e, 0)
        op = _op(e)
    if op == _SYMBOL:
        name = _name(e)
        k = index.get(name)
        if k is not None:
            return sign, "var", k
        if name in params:
            return sign, "par", e
        return None  # time
    if op == _CONSTANT:
        return sign, "const", e
    return None


def _classify(res: cs.SX, index: dict[str, int], params: set[str]
              ) -> _Alias | _Const | None:
    """Classify a trivial equation ``res == 0``: ``a = sign * b``, ``a = const``, or None.

    Recognised by the shape of the expression tree: ``a``, ``a - b``, ``a + b`` with leaves
    that are variables, parameters or constants (possibly negated), or the negation of
    one of these (``-r == 0`` is ``r == 0``: CasADi writes ``-a - b`` as ``-(a + b)``).
    Anything else is not an alias equation (``a - 2*b``, ``a - (b + p)`` included).
    """
    terms: list[tuple[float, str, object]] = []
    op = _op(res)
    while op == _NEG:
        res = _dep(res, 0)
        op = _op(res)
    if op == _SUB or op == _ADD:
        d0, d1 = _dep(res, 0), _dep(res, 1)
        if _op(d0) == _SYMBOL and _op(d1) == _SYMBOL:  # the common case, a -+ b, first
            k0, k1 = index.get(_name(d0)), index.get(_name(d1))
            if k0 is not None and k1 is not None:
                return None if k0 == k1 else _Alias(k0, k1, 1.0 if op == _SUB else -1.0)
        l0 = _leaf(d0, index, params)
        if l0 is None:
            return None
        l1 = _leaf(d1, index, params)
        if l1 is None:
            return None
        if op == _SUB:
            l1 = (-l1[0], l1[1], l1[2])
        terms = [l0, l1]
    else:
        leaf = _leaf(res, index, params)
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


def _signed(e: cs.SX, s: float) -> cs.SX:
    """``e / s`` for a sign ``s`` (every alias's factor is +1 or -1): no division formed."""
    return e if s == 1.0 else -e


def _candidates(ptr: np.ndarray, col: np.ndarray, rows: np.ndarray, is_der: np.ndarray
                ) -> np.ndarray:
    """The rows among ``rows`` that may be alias equations: one or two unknowns, none of
    them a derivative (exact, from the incidence: an alias or constant equation has its
    one or two leaves as unknowns, and one with a derivative is kept anyway)."""
    lens = ptr[rows + 1] - ptr[rows]
    rows = rows[(lens == 1) | (lens == 2)]
    if not rows.size or not is_der.any():
        return rows
    first = is_der[col[ptr[rows]]]
    second = np.where(ptr[rows + 1] - ptr[rows] == 2, is_der[col[ptr[rows + 1] - 1]], False)
    return rows[~(first | second)]


def _shapes(rows: np.ndarray, ptr: np.ndarray, col: np.ndarray, R: cs.SX, X: cs.SX
            ) -> dict[int, _Alias | _Const]:
    """The candidate rows whose residual is, as a tree, ``a - b``, ``-(a + b)``, ``a + b``
    or ``a`` of unknowns (the forms flattening writes ``a == b``, ``-a == b`` and a lone
    port quantity in), classified for the whole column at once; :func:`_classify` looks
    at the others one by one."""
    out: dict[int, _Alias | _Const] = {}
    lens = ptr[rows + 1] - ptr[rows]
    two, one = rows[lens == 2], rows[lens == 1]
    if two.size:
        j0, j1 = col[ptr[two]], col[ptr[two] + 1]
        left = np.arange(len(two))  # positions in ``two`` not recognised yet
        # (CasADi's test of ``f - g`` knows that a sum commutes: one form per sum; a row
        # has one form at most, so the order only saves work: a component's variable minus
        # a port quantity, the common ``a == b``, is declared after it, so first)
        for form, swap, s in ((sub, True, 1.0), (sub, False, 1.0),
                              (_negsum, False, -1.0), (add, False, -1.0)):
            if not left.size:
                break
            a, b = (j1[left], j0[left]) if swap else (j0[left], j1[left])
            hit = same_nodes(R[two[left].tolist()], form(X[a.tolist()], X[b.tolist()]))
            for r, ja, jb in zip(two[left[hit]].tolist(), a[hit].tolist(), b[hit].tolist(),
                                 strict=True):
                out[r] = _Alias(ja, jb, s)
            left = left[~hit]
    if one.size:
        j = col[ptr[one]].tolist()
        for k in np.flatnonzero(same_nodes(R[one.tolist()], X[j])).tolist():
            out[int(one[k])] = _Const(j[k], _ZERO)
    return out


def _negsum(a: cs.SX, b: cs.SX) -> cs.SX:
    return -(a + b)


def _splice(ptr: np.ndarray, col: np.ndarray, rows: np.ndarray, ptr2: np.ndarray,
            col2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The compressed rows ``(ptr, col)`` with the rows ``rows`` replaced by the rows of
    ``(ptr2, col2)`` (in order)."""
    m = len(ptr) - 1
    lens = np.diff(ptr)
    new_lens = lens.copy()
    new_lens[rows] = np.diff(ptr2)
    new_ptr = np.zeros(m + 1, dtype=np.int64)
    np.cumsum(new_lens, out=new_ptr[1:])
    new_col = np.empty(int(new_ptr[-1]), dtype=np.int64)
    replaced = np.zeros(m, dtype=bool)
    replaced[rows] = True
    rowid = np.repeat(np.arange(m), lens)
    kept = ~replaced[rowid]
    offset = np.arange(len(col)) - ptr[rowid]
    new_col[new_ptr[rowid[kept]] + offset[kept]] = col[kept]
    lens2 = np.diff(ptr2)
    rowid2 = np.repeat(rows, lens2)
    offset2 = np.arange(len(col2)) - np.repeat(ptr2[:-1], lens2)
    new_col[new_ptr[rowid2] + offset2] = col2
    return new_ptr, new_col


def _crs(F: cs.SX, X: cs.SX) -> tuple[np.ndarray, np.ndarray]:
    """The structural incidence of ``F`` on ``X`` as compressed rows (sorted columns)."""
    ptr, col = cs.jacobian_sparsity(F, X).get_crs()
    return np.asarray(ptr, dtype=np.int64), np.asarray(col, dtype=np.int64)


class _Hidden(NamedTuple):
    """Equations marked with a domain pass's state coordinates
    (:class:`~acausal.domain_passes.StateCoordinates`) and the coordinates that have a
    derivative: left out of these rows' incidence here, as the structure stage leaves them
    out (the recursive equations of motion of an N-link chain depend on all N: their
    incidence would have N^2 entries, most of the pass's time at N = 1 000)."""

    rows: np.ndarray
    cols: np.ndarray


def _hidden(fs: FlatSystem) -> list[_Hidden]:
    V = fs.variables
    out = []
    for coords, rows in coordinate_groups(fs.equations)[1]:
        cols = hidden_coordinates(coords, fs.index, lambda j: V[j].der is not None)
        if cols:
            out.append(_Hidden(np.asarray(rows, dtype=np.int64),
                               np.asarray(cols, dtype=np.int64)))
    return out


def _incidence(F: cs.SX, X: cs.SX, rows: np.ndarray, hidden: list[_Hidden]
               ) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_crs` of ``F``, the residuals of the equations ``rows``, on ``X``, with a
    marked equation's hidden coordinates left out (:class:`_Hidden`).

    The incidence only picks the rows to look at: a row is classified by its expression
    (:func:`_shapes`, :func:`_classify`), which holds every unknown, so a marked row
    that looks short here is looked at and kept; and a row is substituted again when an
    unknown of its incidence, or a hidden coordinate of its group, is eliminated."""
    parts = []
    rest = np.ones(len(rows), dtype=bool)
    n = int(X.numel())
    for h in hidden:
        at = np.flatnonzero(np.isin(rows, h.rows))
        if not len(at):
            continue
        rest[at] = False
        shown = np.setdiff1d(np.arange(n, dtype=np.int64), h.cols, assume_unique=True)
        ptr, col = _crs(F[at.tolist()], X[shown.tolist()])
        parts.append((at, ptr, shown[col]))
    if rest.all():
        return _crs(F, X)
    at = np.flatnonzero(rest)
    if len(at):
        parts.append((at, *_crs(F[at.tolist()], X)))
    lens = np.zeros(len(rows), dtype=np.int64)
    for at, ptr, _ in parts:
        lens[at] = np.diff(ptr)
    ptr_all = offsets(lens)
    col_all = np.empty(int(ptr_all[-1]), dtype=np.int64)
    for at, ptr, col in parts:
        col_all[spread(ptr_all[at], np.diff(ptr))] = col
    return ptr_all, col_all


def eliminate_aliases(fs: FlatSystem, residuals: cs.SX | None = None,
                      symbols: cs.SX | None = None) -> AliasResult:
    """Eliminate trivial equations of ``fs`` (iterated until none is left).

    ``residuals`` and ``symbols``, if given, are the equations' residuals and the
    unknowns' symbols stacked in columns (:func:`~acausal.structure.system.flat_columns`
    forms them otherwise). The incidence of the whole column on the unknowns (one sparse
    structural Jacobian) selects the few rows that may be trivial; only those are looked
    at one by one, and only the rows an elimination touches are substituted again.
    """
    V = fs.variables
    n = len(V)
    if residuals is None or symbols is None:
        R0, X0 = flat_columns(fs)
        residuals = R0 if residuals is None else residuals
        symbols = X0 if symbols is None else symbols
    R, X = residuals, symbols
    # signed union-find: value(k) = sign[k] * value(parent[k])
    parent = list(range(n))
    sign = [1.0] * n
    const: dict[int, cs.SX] = {}  # root -> constant expression
    involved: set[int] = set()  # every variable a merge or a constant touched

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

    is_der_list = [v.der_of is not None for v in V]
    is_der = np.array(is_der_list, dtype=bool)

    ranks: dict[int, tuple] = {}

    def rank(k: int) -> tuple:
        got = ranks.get(k)
        if got is None:
            v = V[k]
            name = v.name
            user_var = "[" not in name[name.rfind(".") + 1:] and "->" not in name
            got = ranks[k] = (v.der is not None, v.fixed, user_var, -len(name))
        return got

    eqs = fs.equations
    m = len(eqs)
    current = list(eqs)  # the equation of each row (a new one where substituted)
    alive = np.ones(m, dtype=bool)
    params = {p.name for p in fs.parameters}
    index = fs.index
    removed: list[FlatEquation] = []
    hidden = _hidden(fs)
    ptr, col = (_incidence(R, X, np.arange(m), hidden) if m else
                (np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int64)))
    todo = np.arange(m)  # rows to classify
    subst = Substitution()
    roots: dict[int, int] = {}  # eliminated -> representative (see AliasResult.roots)
    fresh = True  # whether ``subst`` holds every merge made so far
    while todo.size:
        changed = False
        cand = _candidates(ptr, col, todo, is_der)
        known = _shapes(cand, ptr, col, R, X)
        for r in cand.tolist():
            c = known.get(r)
            if c is None:
                c = _classify(current[r].res, index, params)
                if c is None:
                    continue
            if isinstance(c, _Alias):
                a, b, s = c
                if is_der_list[a] or is_der_list[b]:
                    continue
                ra, sa = (a, 1.0) if parent[a] == a else find(a)
                rb, sb = (b, 1.0) if parent[b] == b else find(b)
                if ra == rb:
                    continue  # redundant: left for the balance check to report
                # value(a) = s value(b):  sa*ra = s*sb*rb  ->  rb = (sa/(s*sb)) ra
                rel = sa / (s * sb)
                if rank(rb) > rank(ra):
                    ra, rb, rel = rb, ra, 1.0 / rel
                if rb in const and ra in const:
                    continue
                parent[rb] = ra
                sign[rb] = rel
                if rb in const:
                    const[ra] = _signed(const.pop(rb), rel)
                involved.update((a, b, ra, rb))
            else:
                a, expr = c
                if is_der_list[a]:
                    continue
                ra, sa = find(a)
                if ra in const:
                    continue
                const[ra] = _signed(expr, sa)
                involved.update((a, ra))
            alive[r] = False
            removed.append(current[r])
            changed = True
            fresh = False
        if not changed:
            break
        roots = {}
        subst = _substitution(fs, X, find, const, sorted(involved), roots)
        fresh = True
        # the rows left that hold an eliminated unknown: substituted, classified again
        gone = np.zeros(n, dtype=bool)
        gone[list(subst)] = True
        lens = np.diff(ptr)
        hits = np.bincount(np.repeat(np.arange(m), lens), weights=gone[col], minlength=m)
        for h in hidden:  # (a hidden coordinate eliminated: every row of its group)
            if gone[h.cols].any():
                hits[h.rows] += 1
        todo = np.flatnonzero((hits > 0) & alive)
        if not todo.size:
            break
        rows = todo.tolist()
        olds = X[list(subst)]
        news = subst.column
        new = cs.substitute(R[rows], olds, news)
        if R is residuals:
            R = cs.SX(R)  # (a copy: the column given may be shared)
        R[rows] = new
        for r, e in zip(rows, cs.vertsplit(new) if len(rows) > 1 else [new], strict=True):
            current[r] = current[r].rewritten(e)
        ptr2, col2 = _incidence(new, X, todo, hidden)
        ptr, col = _splice(ptr, col, todo, ptr2, col2)
    if not fresh:
        roots = {}
        subst = _substitution(fs, X, find, const, sorted(involved), roots)
    starts = _merge_starts(fs, find, const, sorted(involved))
    kept = np.flatnonzero(alive)
    out = AliasResult([current[r] for r in kept.tolist()], subst, m, removed, starts,
                      R if len(kept) == m else R[kept.tolist()])
    # the incidence of the kept rows (on the flat unknowns) and the unknowns' column
    lens = np.diff(ptr)[kept]
    sel = np.repeat(alive, np.diff(ptr))
    out.incidence = (np.concatenate(([0], np.cumsum(lens))).astype(np.int64), col[sel])
    out.symbols = X
    out.roots = roots
    return out


class Substitution(dict):  # type: ignore[type-arg]
    """``{eliminated variable index: its expression in the kept unknowns}``, with the
    expressions stacked in one column in key order (``column``)."""

    column: cs.SX = cs.SX(0, 1)

    def __reduce__(self) -> tuple[Any, ...]:
        # (the keys and the column: the expressions are its rows, split again when read,
        # not tens of thousands of expressions pickled one by one)
        return (_substitution_of, (list(self), self.column))


def _substitution_of(keys: list[int], column: cs.SX) -> Substitution:
    """The :class:`Substitution` of ``keys`` whose expressions are the rows of ``column``
    (pickled as such)."""
    out = Substitution()
    out.column = column
    if keys:
        out.update(zip(keys, column.nonzeros(), strict=True))
    return out


def _substitution(fs: FlatSystem, X: cs.SX, find, const, involved: list[int],
                  roots: dict[int, int] | None = None) -> Substitution:
    """Expressions of the eliminated variables (and their derivatives) in the kept ones
    (``involved``: the sorted variables any merge touched, the others stay; ``X``: the
    unknowns' symbols in one column).

    The representative of a set is its best-ranked member, so it has a derivative symbol
    whenever any member has one. ``roots``, if given, receives each eliminated variable's
    representative where that is an unknown. The expressions are formed as one column
    (a representative's negation once), then split.
    """
    V = fs.variables
    keys: list[int] = []
    kind: list[int] = []  # per key: 0 symbol, 1 negated symbol, 2 expression, 3 zero
    spec: list[int] = []  # per key: the symbol's unknown (0, 1) or the expression's (2)
    exprs: list[cs.SX] = []

    def signed(k: int, j: int, s: float) -> None:
        keys.append(k)
        kind.append(0 if s == 1.0 else 1)
        spec.append(j)

    def expr(k: int, e: cs.SX) -> None:
        keys.append(k)
        if e.is_zero():  # (a constant zero: taken from one column of zeros)
            kind.append(3)
            spec.append(0)
            return
        kind.append(2)
        spec.append(len(exprs))
        exprs.append(cs.densify(e))

    for k in involved:
        v = V[k]
        if v.der_of is not None:
            continue
        r, s = find(k)
        # (s is +1 or -1; CasADi forms -1 * e as -e, 1 * e as e)
        if r in const:
            expr(k, _signed(const[r], s))
        elif r != k:
            signed(k, r, s)
            if roots is not None:
                roots[k] = r
        else:
            continue
        dk = v.der
        if dk is not None:
            if r in const:
                expr(dk, cs.SX(0))
            else:
                rd = V[r].der
                assert rd is not None, "alias representative lost its derivative"
                signed(dk, rd, s)
    out = Substitution()
    if not keys:
        out.column = cs.SX(0, 1)
        return out
    kinds = np.asarray(kind, dtype=np.int64)
    at = np.asarray(spec, dtype=np.int64)
    plus = np.flatnonzero(kinds == 0)
    minus = np.flatnonzero(kinds == 1)
    negs = unique(at[minus])  # (np.unique imports numpy.ma: ~10 ms of a cold start)
    inverse = np.searchsorted(negs, at[minus])
    perm = np.empty(len(keys), dtype=np.int64)
    perm[plus] = np.arange(len(plus))
    perm[minus] = len(plus) + inverse
    rest = np.flatnonzero(kinds == 2)
    perm[rest] = len(plus) + len(negs) + at[rest]
    zeros = np.flatnonzero(kinds == 3)
    perm[zeros] = len(plus) + len(negs) + len(exprs)
    pool = stack(_take(X, at[plus]), -_take(X, negs), *exprs,
                 cs.SX.zeros(1 if len(zeros) else 0, 1))
    out.column = pool[perm.tolist(), 0]  # (a 1 x 1 pool indexed by a list: a row)
    out.update(zip(keys, out.column.nonzeros(), strict=True))
    return out


def _take(col: cs.SX, rows: np.ndarray) -> cs.SX:
    """Rows ``rows`` of a column (none: an empty column)."""
    return col[rows.tolist(), 0] if len(rows) else cs.SX(0, 1)


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


def _merge_starts(fs: FlatSystem, find, const, involved: list[int]
                  ) -> dict[int, tuple[float, bool]]:
    """Start values and fixed flags moved to the representatives: ``{index: (start,
    fixed)}`` for every variable whose pair changes (the flat system is left as it is;
    ``involved`` as in :func:`_substitution`)."""
    V = fs.variables
    out: dict[int, tuple[float, bool]] = {}

    def current(k: int) -> tuple[float, bool]:
        return out.get(k, (V[k].start, V[k].fixed))

    for k in involved:
        v = V[k]
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
        rep_start, rep_fixed = current(r)
        value = v.start / s
        if rep_fixed and abs(rep_start - value) > 1e-12 * max(1.0, abs(value)):
            # (named in the model's order, whichever the elimination kept)
            (n1, s1), (n2, s2) = sorted([(k, v.start), (r, rep_start)])
            raise StartValueConflict(
                f"conflicting initial values: {V[n1].name} (start={s1}, fixed) and "
                f"{V[n2].name} (start={s2}, fixed) are the same quantity"
                + (" up to sign" if s < 0 else "")
                + " by the model's equations; remove fixed=True on one of them"
            )
        out[r] = (value, True)
    return out


def equation_system(fs: FlatSystem, al: AliasResult) -> EquationSystem:
    """The kept variables (re-indexed, derivative links remapped) and equations."""
    V = fs.variables
    gone = np.zeros(len(V), dtype=bool)
    if al.substitution:
        gone[np.fromiter(al.substitution, dtype=np.int64, count=len(al.substitution))] = True
    keep_a = np.flatnonzero(~gone)
    keep = keep_a.tolist()
    renumber = np.full(len(V), -1, dtype=np.int64)
    renumber[keep_a] = np.arange(len(keep), dtype=np.int64)
    # (the new indices as the system's shared integer objects: see int_pool)
    pool = int_pool(len(keep))
    new_index_a = np.full(len(V), -1, dtype=object)
    new_index_a[keep_a] = pool
    new_index = new_index_a.tolist()
    variables = [V[k] for k in keep]
    starts = al.starts
    # a copy where something changes (a derivative link renumbered, a start moved); the
    # others are shared with the flat system (no pass changes a variable in place: see
    # EquationSystem.copy)
    for i, v in enumerate(variables):
        if v.der is None and v.der_of is None:
            continue
        v = variables[i] = v.copy()
        if v.der is not None:
            v.der = None if new_index[v.der] < 0 else new_index[v.der]
        if v.der_of is not None:
            v.der_of = None if new_index[v.der_of] < 0 else new_index[v.der_of]
    for k, (start, fixed) in starts.items():
        i = new_index[k]
        if i >= 0:
            v = variables[i]
            if v is V[k]:
                v = variables[i] = v.copy()
            v.start, v.fixed = start, fixed
    incidence: tuple[np.ndarray, np.ndarray] | None = None
    symbols = None
    if al.incidence is not None and al.symbols is not None:
        # the kept rows' incidence on the kept unknowns, renumbered (the eliminated ones
        # are substituted out of every kept row)
        ptr, col = al.incidence
        renumbered = renumber[col]
        if not (renumbered < 0).any():
            incidence = (ptr, renumbered)
        symbols = al.symbols[keep] if len(keep) < len(V) else al.symbols
    return EquationSystem.from_lists(fs.t, variables, list(al.equations), fs.parameters,
                                     al.residuals, incidence=incidence, symbols=symbols,
                                     pool=pool, parameter_symbols=fs.par_column)


def alias_pass(state: CompileState) -> CompileState:
    """Pass: flat system -> aliases removed, the equation system of the structure stage and
    what structural error messages need to name the user's objects."""
    fs = need(state.flat, "the flat system (flatten pass)")
    al = eliminate_aliases(fs)
    system = equation_system(fs, al)
    # the tables handed on stay with the system only (a saved model carries no copies)
    al.incidence = al.symbols = None
    fs.__dict__.pop("_columns", None)
    return state.update(aliases=al, system=system, diagnostics=diagnostics(fs, al))


class _Table(Mapping[str, Any]):
    """A dictionary formed on first use: the structure diagnostics' tables serve error
    messages only, and a large model builds without one. Pickles as the dictionary."""

    def __init__(self, make: Callable[[], dict[str, Any]]) -> None:
        self._make: Callable[[], dict[str, Any]] | None = make
        self._data: dict[str, Any] | None = None

    def _get(self) -> dict[str, Any]:
        if self._data is None:
            assert self._make is not None
            self._data, self._make = self._make(), None
        return self._data

    def __getitem__(self, key: str) -> Any:
        return self._get()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._get())

    def __len__(self) -> int:
        return len(self._get())

    def __repr__(self) -> str:
        return repr(self._get())

    def __reduce__(self) -> tuple[type, tuple[dict[str, Any]]]:
        return (dict, (self._get(),))


def diagnostics(fs: FlatSystem, al: AliasResult) -> StructureDiagnostics:
    """:meth:`StructureDiagnostics.from_aliases`, with the representatives the elimination
    knows (``s * rep`` is the symbol ``rep`` or its negation) instead of a look at each
    expression (a constant's expression is looked at as there: a parameter, or its
    negation, names the set); the two tables are formed on first use."""
    V = fs.variables

    def aliases() -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        rep_names: dict[int, str] = {}
        for k, expr in al.substitution.items():
            v = V[k]
            if v.der_of is not None:
                continue
            r = al.roots.get(k)
            if r is not None:
                name = rep_names.get(r)
                if name is None:
                    name = rep_names[r] = _name(V[r].sym)
            else:
                e = expr if isinstance(expr, cs.SX) else cs.SX(expr)
                op = _op(e)
                if op == _NEG:
                    e = _dep(e, 0)
                    op = _op(e)
                if op != _SYMBOL:
                    continue
                name = _name(e)
            out.setdefault(name, []).append(v.name)
        return out

    n_unknowns = list(map(attrgetter("der_of"), V)).count(None)
    return StructureDiagnostics(_Table(lambda: {v.name: v.origin for v in V}),
                                _Table(aliases), (len(fs.equations), n_unknowns))
