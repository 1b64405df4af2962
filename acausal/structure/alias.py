"""Alias elimination: remove trivial equations ``a = b``, ``a = -b``, ``a = constant``.

Variables are grouped in signed sets (``a = s * rep``); one representative per set stays an
unknown, the others become outputs ``s * rep`` (or the constant). Derivatives of aliased
variables are merged too (``der(a) = s * der(rep)``). Start values and ``fixed`` flags move to
the representative; conflicting fixed starts are an error naming both variables.
Every eliminated variable stays addressable in results.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Iterator, Mapping
from dataclasses import field
from functools import partial
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
from ..symbols import FlatVariable, LazyColumn, grow_ints, shared_ints
from .diagnostics import StructureDiagnostics
from .system import (
    EquationSystem,
    coordinate_groups,
    flat_columns,
    hidden_coordinates,
    rows_of,
)
from .template_incidence import SUPERSET, UNKNOWN

if TYPE_CHECKING:
    from ..state import CompileState

__all__ = ["AliasResult", "eliminate_aliases", "alias_pass"]

_ZERO = cs.SX(0)


@record
class AliasResult:
    """Outcome of alias elimination."""

    equations: list[FlatEquation]
    substitution: Mapping[int, cs.SX]  # eliminated variable index -> expression
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
    roots: Mapping[int, int] = field(default_factory=dict, repr=False)

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


def _leaf(e: cs.SX, index: dict[str, int], params: Container[str]
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


def _classify(res: cs.SX, index: dict[str, int], params: Container[str]
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


class _Names(Container[str]):
    """The names of the flat system's parameters, read on the first test: only an
    equation that :func:`_shapes` does not recognise and that holds a symbol other than
    an unknown asks (a large model has 400 000 parameters, and asks a few times). Looked
    up in their list for the first :data:`ALONE` tests (a scan in C, a few ms), in a set
    formed past them (the set costs as much as some twenty scans)."""

    ALONE = 16

    def __init__(self, fs: FlatSystem) -> None:
        self._fs = fs
        self._list: list[str] | None = None
        self._set: set[str] | None = None
        self._asked = 0

    def __contains__(self, name: object) -> bool:
        if self._set is not None:
            return name in self._set
        if self._list is None:
            self._list = list(map(attrgetter("name"), self._fs.parameters))
        self._asked += 1
        if self._asked > self.ALONE:
            self._set = set(self._list)
            return name in self._set
        return name in self._list


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


class _Found(NamedTuple):
    """Candidate rows recognised as trivial, in row order: row ``rows[i]`` says
    ``v_a[i] = s[i] * v_b[i]`` (an alias), or, where ``b[i]`` is -1, ``v_a[i] =
    values[rows[i]]`` (a constant)."""

    rows: list[int]
    a: list[int]
    b: list[int]
    s: list[float]
    values: dict[int, cs.SX]
    #: the unknowns of the aliases (those whose rank a merge may compare)
    unknowns: np.ndarray


def _shapes(rows: np.ndarray, ptr: np.ndarray, col: np.ndarray, R: cs.SX, X: cs.SX
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The candidate rows whose residual is, as a tree, ``a - b``, ``-(a + b)``, ``a + b``
    or ``a`` of unknowns (the forms flattening writes ``a == b``, ``-a == b`` and a lone
    port quantity in), classified for the whole column at once: ``(rows, a, b, s)``
    arrays (``b`` -1 for ``a = 0``; rows not in row order); :func:`_classify` looks at
    the others one by one."""
    out_r, out_a, out_b, out_s = [], [], [], []
    lens = ptr[rows + 1] - ptr[rows]
    two, one = rows[lens == 2], rows[lens == 1]
    if two.size:
        j0, j1 = col[ptr[two]], col[ptr[two] + 1]
        left = np.arange(len(two))  # positions in ``two`` not recognised yet
        # (CasADi's test of ``f - g`` knows that a sum commutes: one form per sum; a row
        # has one form at most, so the order only saves work: a component's variable minus
        # a port quantity, the common ``a == b``, is declared after it, so first; on many
        # rows, the forms in the order of their hits on a sample)
        forms = _FORMS if len(two) < 8 * _SAMPLE else _by_sample(two, j0, j1, R, X)
        for form, swap, s in forms:
            if not left.size:
                break
            a, b = (j1[left], j0[left]) if swap else (j0[left], j1[left])
            hit = same_nodes(R[two[left].tolist()], form(X[a.tolist()], X[b.tolist()]))
            out_r.append(two[left[hit]])
            out_a.append(a[hit])
            out_b.append(b[hit])
            out_s.append(np.full(int(hit.sum()), s))
            left = left[~hit]
    if one.size:
        j = col[ptr[one]]
        hit = same_nodes(R[one.tolist()], X[j.tolist()])
        out_r.append(one[hit])
        out_a.append(j[hit])
        out_b.append(np.full(int(hit.sum()), -1, dtype=np.int64))
        out_s.append(np.zeros(int(hit.sum())))
    if not out_r:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty, np.zeros(0)
    return (np.concatenate(out_r), np.concatenate(out_a), np.concatenate(out_b),
            np.concatenate(out_s))


def _negsum(a: cs.SX, b: cs.SX) -> cs.SX:
    return -(a + b)


#: the forms :func:`_shapes` tries on a row of two unknowns ``j0 < j1``: ``(operation
#: on the symbols, whether ``j1`` comes first, the sign s of ``a = s * b``)``
_FORMS: tuple[tuple[Callable[[cs.SX, cs.SX], cs.SX], bool, float], ...] = (
    (sub, True, 1.0), (sub, False, 1.0), (_negsum, False, -1.0), (add, False, -1.0))
#: the rows of :func:`_by_sample`'s sample
_SAMPLE = 64


def _by_sample(two: np.ndarray, j0: np.ndarray, j1: np.ndarray, R: cs.SX, X: cs.SX
               ) -> tuple[tuple[Callable[[cs.SX, cs.SX], cs.SX], bool, float], ...]:
    """:data:`_FORMS` in the order of their hits (the most first; ties in their order) on
    :data:`_SAMPLE` of the rows ``two`` spread evenly: :func:`_shapes` tries a form on
    the rows the ones before it left, so the common one first spares a pass over the
    rest (the mass-spring chain's ``-(a + b)``, a third of its rows, came after a form
    that none has: a pass over them for nothing, 10 ms at 10 000 masses)."""
    at = np.linspace(0, len(two) - 1, _SAMPLE).astype(np.int64)
    rs = R[two[at].tolist()]
    hits = []
    for form, swap, _ in _FORMS:
        a, b = (j1[at], j0[at]) if swap else (j0[at], j1[at])
        hits.append(int(same_nodes(rs, form(X[a.tolist()], X[b.tolist()])).sum()))
    return tuple(_FORMS[k] for k in sorted(range(len(_FORMS)), key=lambda k: -hits[k]))


def _recognise(rows: np.ndarray, ptr: np.ndarray, col: np.ndarray, R: cs.SX, X: cs.SX,
               res: Callable[[int], cs.SX], index: dict[str, int], params: Container[str],
               is_der: np.ndarray) -> _Found:
    """The trivial equations among the candidate rows ``rows`` (sorted): the common forms
    for the whole column at once (:func:`_shapes`), the others one by one
    (:func:`_classify` of ``res(row)``); the ones with a derivative left out (kept)."""
    r, a, b, s = _shapes(rows, ptr, col, R, X)
    values: dict[int, cs.SX] = dict.fromkeys(r[b < 0].tolist(), _ZERO)
    if len(r) < len(rows):
        seen = np.zeros(len(rows), dtype=bool)
        seen[np.searchsorted(rows, r)] = True
        more_r, more_a, more_b, more_s = [], [], [], []
        for k in rows[~seen].tolist():
            c = _classify(res(k), index, params)
            if c is None:
                continue
            more_r.append(k)
            more_a.append(c[0])
            if isinstance(c, _Alias):
                more_b.append(c.b)
                more_s.append(c.sign)
            else:
                more_b.append(-1)
                more_s.append(0.0)
                values[k] = c.value
        if more_r:
            r = np.concatenate((r, np.asarray(more_r, dtype=np.int64)))
            a = np.concatenate((a, np.asarray(more_a, dtype=np.int64)))
            b = np.concatenate((b, np.asarray(more_b, dtype=np.int64)))
            s = np.concatenate((s, np.asarray(more_s, dtype=float)))
    order = np.argsort(r, kind="stable")
    r, a, b, s = r[order], a[order], b[order], s[order]
    if is_der.any():  # (an alias or a constant of a derivative is kept)
        keep = ~(is_der[a] | ((b >= 0) & is_der[np.maximum(b, 0)]))
        r, a, b, s = r[keep], a[keep], b[keep], s[keep]
    two = b >= 0
    return _Found(r.tolist(), a.tolist(), b.tolist(), s.tolist(), values,
                  np.concatenate((a[two], b[two])))


def _splice(ptr: np.ndarray, col: np.ndarray, rows: np.ndarray, ptr2: np.ndarray,
            col2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The compressed rows ``(ptr, col)`` with the rows ``rows`` replaced by the rows of
    ``(ptr2, col2)`` (in order). (By masks: the entries kept fill, in order, the places
    the new rows leave; half the time of placing every entry by its row, 40 ms for a
    fifth of a million rows of two million entries.)"""
    lens, lens2 = np.diff(ptr), np.diff(ptr2)
    new_lens = lens.copy()
    new_lens[rows] = lens2
    new_ptr = offsets(new_lens)
    new_col = np.empty(int(new_ptr[-1]), dtype=np.int64)
    at = spread(new_ptr[rows], lens2)
    new_col[at] = col2
    free = np.ones(len(new_col), dtype=bool)
    free[at] = False
    kept = np.ones(len(col), dtype=bool)
    kept[spread(ptr[rows], lens[rows])] = False
    new_col[free] = col[kept]
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


def _marked(fs: FlatSystem) -> bool | None:
    """Whether some equation of ``fs`` is marked with state coordinates, if
    :func:`_hidden` looked (None otherwise)."""
    got = fs.__dict__.get("_marked")
    return got[1] if got is not None and got[0] is fs.equations else None


def _hidden(fs: FlatSystem) -> list[_Hidden]:
    V = fs.variables
    out = []
    groups = coordinate_groups(fs.equations)[1]
    fs.__dict__["_marked"] = (fs.equations, bool(groups))  # (see _marked)
    for coords, rows in groups:
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


#: the rows of one structural Jacobian of :func:`_first_incidence`'s bad rows (CasADi's
#: cost per row grows with the rows and columns of one call: 3.5 us a row for 200 000
#: rows on 400 000 columns, about 2 in chunks of this size)
_CHUNK = 32768


def _first_incidence(fs: FlatSystem, F: cs.SX, X: cs.SX, hidden: list[_Hidden]
                     ) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_incidence` of every equation of ``fs`` (``F``: their residuals), composed
    per template class where the flatten pass did so
    (:class:`~acausal.structure.template_incidence.TemplateIncidence`): its exact rows
    taken as they are, its bad rows formed from their expressions on the unknowns of
    their composed superset only, the marked rows as :func:`_incidence` forms them, the
    other rows on the unknowns they hold (``symvar``: a few loose rows on all the
    unknowns cost a Jacobian as wide as the model)."""
    m = int(F.numel())
    ti = fs.template_incidence
    if ti is None or not ti.holds_for(fs.equations, int(X.numel())):
        return _incidence(F, X, np.arange(m), hidden)
    kind = ti.kind
    ptr, col = ti.ptr, ti.col
    other = kind == UNKNOWN
    marked = np.zeros(m, dtype=bool)
    for h in hidden:
        marked[h.rows] = True
    if marked.any():
        at = np.flatnonzero(marked)
        ptr2, col2 = _incidence(F[at.tolist()], X, at, hidden)
        ptr, col = _splice(ptr, col, at, ptr2, col2)
    at = np.flatnonzero(other & ~marked)
    if at.size:
        G = F[at.tolist()]
        index = fs.index
        on = unique(np.fromiter((index.get(_name(s), -1) for s in cs.symvar(G)),
                                dtype=np.int64))
        on = on[on >= 0]
        ptr2, col2 = _crs(G, _take(X, on))
        ptr, col = _splice(ptr, col, at, ptr2, on[col2])
    bad = np.flatnonzero((kind == SUPERSET) & ~marked)
    if bad.size:
        ptr, col, bad = _lone(F, X, ptr, col, bad)
    if bad.size:
        lens = ptr[bad + 1] - ptr[bad]
        ptr3, col3 = _within(F[bad.tolist()], X, offsets(lens), col[spread(ptr[bad], lens)])
        ptr, col = _splice(ptr, col, bad, ptr3, col3)
    return ptr, col


def _lone(F: cs.SX, X: cs.SX, ptr: np.ndarray, col: np.ndarray, bad: np.ndarray
          ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The bad rows ``bad`` of two unknowns (a superset) whose residual is one of them
    alone, node for node (a port's quantity that the template's difference of two
    potentials leaves alone, ``(x + e) - x``: half the bad rows of a mass-spring
    chain), given their exact incidence, that unknown (a symbol depends on itself
    only); returns ``(ptr, col)`` and the bad rows left."""
    two = bad[ptr[bad + 1] - ptr[bad] == 2]
    if not two.size:
        return ptr, col, bad
    Fb = F[two.tolist()]
    hit = np.zeros(len(two), dtype=bool)
    which = np.zeros(len(two), dtype=np.int64)
    for p in (0, 1):
        left = np.flatnonzero(~hit)
        if not left.size:
            break
        j = col[ptr[two[left]] + p]
        got = same_nodes(Fb[left.tolist()] if p else Fb, X[j.tolist()])
        hit[left[got]] = True
        which[left[got]] = j[got]
    if not hit.any():
        return ptr, col, bad
    done = two[hit]
    ptr, col = _splice(ptr, col, done, np.arange(len(done) + 1, dtype=np.int64), which[hit])
    return ptr, col, np.setdiff1d(bad, done, assume_unique=True)


def _within(F: cs.SX, X: cs.SX, ptr: np.ndarray, col: np.ndarray
            ) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_crs` of ``F`` on ``X``, knowing that row ``i`` holds none of the unknowns
    but ``col[ptr[i]:ptr[i + 1]]``: Jacobians of :data:`_CHUNK` rows on the unknowns
    their rows may hold."""
    m = int(F.numel())
    lens = np.zeros(m, dtype=np.int64)
    cols = []
    for a in range(0, m, _CHUNK):
        b = min(a + _CHUNK, m)
        on = unique(col[ptr[a]:ptr[b]])
        ptr2, col2 = _crs(F[a:b] if a or b < m else F, _take(X, on))
        lens[a:b] = np.diff(ptr2)
        cols.append(on[col2])
    return offsets(lens), np.concatenate(cols) if cols else np.zeros(0, dtype=np.int64)


def _find(parent: list[int], sign: list[float], k: int) -> tuple[int, float]:
    """The representative of ``k`` and ``s`` with ``value(k) = s * value(rep)`` (signed
    union-find on the lists ``parent`` and ``sign``, paths compressed)."""
    s = 1.0
    path = []
    while parent[k] != k:
        path.append(k)
        s *= sign[k]
        k = parent[k]
    acc = s
    for j in path:
        sj = sign[j]
        parent[j] = k
        sign[j] = acc
        acc *= sj
    return k, s


#: a rank's first three criteria weigh more than any name's length (see :func:`_ranks`)
_LONG = 1 << 32


def _ranks(V: list[FlatVariable], ks: list[int], rank: list[int]) -> None:
    """Set ``rank[k]`` for the variables ``ks``: the representative of a set is its
    best-ranked member, by (has a derivative, fixed, declared by a component rather than
    a port or an edge quantity, shorter name), one integer ordered as that tuple."""
    for k in ks:
        v = V[k]
        name = v.name
        user = "[" not in name[name.rfind(".") + 1:] and "->" not in name
        # (v._spec.fixed: FlatVariable.fixed without its property, for every member)
        rank[k] = ((((v.der is not None) << 1) | bool(v._spec.fixed)) << 1 | user) * _LONG \
            - len(name)


def _merge(found: _Found, parent: list[int], sign: list[float], const: dict[int, cs.SX],
           rank: list[int]) -> list[int]:
    """Merge the trivial equations ``found`` into the signed union-find (``parent``,
    ``sign``; ``const``: representative -> its constant expression), in row order;
    returns the rows merged (the others are redundant: left for the balance check)."""
    dead = []
    values = found.values
    for r, a, b, s in zip(found.rows, found.a, found.b, found.s, strict=True):
        ra, sa = (a, 1.0) if parent[a] == a else _find(parent, sign, a)
        if b >= 0:
            rb, sb = (b, 1.0) if parent[b] == b else _find(parent, sign, b)
            if ra == rb:
                continue  # redundant: left for the balance check to report
            # value(a) = s value(b):  sa*ra = s*sb*rb  ->  rb = (sa/(s*sb)) ra
            rel = sa / (s * sb)
            if rank[rb] > rank[ra]:
                ra, rb, rel = rb, ra, 1.0 / rel
            if rb in const:
                if ra in const:
                    continue
                const[ra] = _signed(const.pop(rb), rel)
            parent[rb] = ra
            sign[rb] = rel
        else:
            if ra in const:
                continue
            const[ra] = _signed(values[r], sa)
        dead.append(r)
    return dead


def _resolved(parent: list[int], sign: list[float]) -> tuple[np.ndarray, np.ndarray]:
    """Every variable's representative and sign (``value(k) = S[k] * value(P[k])``), by
    pointer jumping on arrays."""
    P = np.fromiter(parent, dtype=np.int64, count=len(parent))  # (asarray: 60 % more)
    S = np.fromiter(sign, dtype=float, count=len(sign))
    while True:
        PP = P[P]
        if np.array_equal(PP, P):
            return P, S
        S = S * S[P]
        P = PP


def _structural(ptr: np.ndarray, col: np.ndarray, rows: np.ndarray, target: np.ndarray,
                n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The incidence of the rows ``rows`` after the substitution, from their incidence
    before it: each unknown replaced by ``target`` (itself, its representative or the
    representative's derivative; -1 for a constant). Exact where the unknowns a row
    holds go to distinct unknowns: CasADi rebuilds a substituted expression node for node
    and simplifies only operands that are constants or the same node, so every unknown
    stays in the row. Returns ``(ptr, col)`` of the rows and a mask of those where this
    does not hold (two unknowns made one, or one made a constant: a term may cancel),
    whose incidence the caller forms from their expressions."""
    lens = ptr[rows + 1] - ptr[rows]
    t = target[col[spread(ptr[rows], lens)]]
    rowid = np.repeat(np.arange(len(rows), dtype=np.int64), lens)
    bad = np.zeros(len(rows), dtype=bool)
    bad[rowid[t < 0]] = True
    key = np.sort(rowid * n + np.maximum(t, 0))  # (sorted: each row's columns in order)
    bad[key[np.flatnonzero(key[1:] == key[:-1])] // n] = True
    return offsets(lens), key % n, bad


def eliminate_aliases(fs: FlatSystem, residuals: cs.SX | None = None,
                      symbols: cs.SX | None = None) -> AliasResult:
    """Eliminate trivial equations of ``fs`` (iterated until none is left).

    ``residuals`` and ``symbols``, if given, are the equations' residuals and the
    unknowns' symbols stacked in columns (:func:`~acausal.structure.system.flat_columns`
    forms them otherwise). The incidence of the whole column on the unknowns (one sparse
    structural Jacobian) selects the few rows that may be trivial; the common forms are
    recognised for the whole column at once, the merges made on integer lists, and only
    the rows an elimination touches are substituted again (their incidence derived from
    the one before where that is exact).
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
    stale = False
    const: dict[int, cs.SX] = {}  # representative -> constant expression
    is_der = np.array([v.der_of is not None for v in V], dtype=bool)
    rank = [0] * n  # (set for the variables of alias equations: see _ranks)
    ranked = np.zeros(n, dtype=bool)

    eqs = fs.equations
    m = len(eqs)
    current = list(eqs)  # the equation of each row (a new one where substituted)
    alive = np.ones(m, dtype=bool)
    dirty = np.zeros(m, dtype=bool)  # rows substituted: their equation is a row of R
    params = _Names(fs)
    index = fs.index
    removed: list[FlatEquation] = []
    hidden = _hidden(fs)
    ptr, col = (_first_incidence(fs, R, X, hidden) if m else
                (np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int64)))

    def equation(r: int) -> FlatEquation:
        if dirty[r]:
            current[r] = current[r].rewritten(R[r])
            dirty[r] = False
        return current[r]

    def res(r: int) -> cs.SX:
        return R[r] if dirty[r] else current[r].res

    todo = np.arange(m)  # rows to classify
    subst = Substitution()
    roots = _Roots()  # eliminated -> representative (see AliasResult.roots)
    elim = np.zeros(0, dtype=np.int64)
    P = np.arange(n, dtype=np.int64)
    S = np.ones(n)
    while todo.size:
        found = _recognise(_candidates(ptr, col, todo, is_der), ptr, col, R, X, res,
                           index, params, is_der)
        new = found.unknowns[~ranked[found.unknowns]]
        if new.size:
            new = unique(new)
            ranked[new] = True
            _ranks(V, new.tolist(), rank)
        if stale and found.rows:
            parent, sign, stale = P.tolist(), S.tolist(), False
        dead = _merge(found, parent, sign, const, rank) if found.rows else []
        if not dead:
            break
        # (the rows of the first round are the flat equations as they are)
        removed += map(equation if dirty[dead].any() else current.__getitem__, dead)
        alive[dead] = False
        P, S = _resolved(parent, sign)
        stale = True  # (parent and sign made again from P and S for a merge only)
        roots = _Roots()
        subst, elim, target = _substitution(V, X, P, S, const, is_der, roots)
        # the rows left that hold an eliminated unknown: substituted, classified again
        gone = target != np.arange(n)
        lens = np.diff(ptr)
        hits = np.bincount(np.repeat(np.arange(m), lens), weights=gone[col], minlength=m)
        for h in hidden:  # (a hidden coordinate eliminated: every row of its group)
            if gone[h.cols].any():
                hits[h.rows] += 1
        todo = np.flatnonzero((hits > 0) & alive)
        if not todo.size:
            break
        rows = todo.tolist()
        new_res = cs.substitute(R[rows], _take(X, subst.keys_array()), subst.column)
        if R is residuals:
            R = cs.SX(R)  # (a copy: the column given may be shared)
        R[rows] = new_res
        dirty[todo] = True
        ptr2, col2, bad = _structural(ptr, col, todo, target, n)
        marked = np.zeros(len(todo), dtype=bool)
        for h in hidden:
            marked |= np.isin(todo, h.rows)
        bad &= ~marked
        if bad.any():  # (formed from the expressions: see _structural)
            at = np.flatnonzero(bad)
            # on the unknowns these rows held, as substituted (a substitution brings no
            # new unknown, it may only take one out): smaller Jacobians
            lens = ptr[todo[at] + 1] - ptr[todo[at]]
            was = target[col[spread(ptr[todo[at]], lens)]]
            held = was >= 0
            lens = np.bincount(np.repeat(np.arange(len(at)), lens)[held], minlength=len(at))
            ptr3, col3 = _within(new_res[at.tolist()], X, offsets(lens), was[held])
            ptr2, col2 = _splice(ptr2, col2, at, ptr3, col3)
        if marked.any():
            at = np.flatnonzero(marked)
            ptr3, col3 = _incidence(new_res[at.tolist()], X, todo[at], hidden)
            ptr2, col2 = _splice(ptr2, col2, at, ptr3, col3)
        ptr, col = _splice(ptr, col, todo, ptr2, col2)
    starts = _merge_starts(fs, P, S, const, elim)
    kept = np.flatnonzero(alive)
    redo = np.flatnonzero(dirty[kept])
    if redo.size:  # (the substituted rows kept: their residuals are rows of R)
        _rewrite(current, kept[redo].tolist(), R)
    out = AliasResult([current[r] for r in kept.tolist()], subst, m, removed, starts,
                      R if len(kept) == m else R[kept.tolist()])
    # the incidence of the kept rows (on the flat unknowns) and the unknowns' column
    lens = np.diff(ptr)[kept]
    sel = np.repeat(alive, np.diff(ptr))
    out.incidence = (np.concatenate(([0], np.cumsum(lens))).astype(np.int64), col[sel])
    out.symbols = X
    out.roots = roots
    return out


def _rewrite(current: list[FlatEquation], rows: list[int], R: cs.SX) -> None:
    """``current[r] = current[r].rewritten(R[r])`` for the rows ``rows``, the residuals
    of a template group's equations made when read: a row whose source is row ``_row``
    of its group's column gets its residual as row ``_row`` of a column per group
    (:class:`~acausal.symbols.LazyColumn`) formed from ``R`` when read (no pass reads
    them one by one: 200 000 scalar expressions at 10^5 masses, never read)."""
    Rd = R[rows]
    eqs = list(map(current.__getitem__, rows))
    groups: dict[int, tuple[LazyColumn, list[int], list[int]]] = {}
    loose: list[int] = []
    for q, e in enumerate(eqs):
        src = e._source
        if type(src) is LazyColumn and e._row >= 0:
            got = groups.get(id(src))
            if got is None:
                got = groups[id(src)] = (src, [], [])
            got[1].append(e._row)
            got[2].append(q)
        else:
            loose.append(q)
    for src, ks, qs in groups.values():
        col = LazyColumn(None, partial(_group_rows, Rd, len(src), ks, qs), len(src))
        for q in qs:
            e = eqs[q]
            current[rows[q]] = e.rewritten(col)
    if loose:
        for q, res in zip(loose, Rd[loose].nonzeros(), strict=True):
            current[rows[q]] = eqs[q].rewritten(res)


def _group_rows(Rd: cs.SX, n: int, ks: list[int], qs: list[int], k: int | None) -> cs.SX:
    """The ``LazyColumn`` maker of :func:`_rewrite`: row ``k`` of a group's residuals
    (rows ``qs`` of ``Rd`` at the group's rows ``ks``), or all ``n`` of them as a column
    (``k`` None; zero at the rows not rewritten, which no equation reads)."""
    if k is not None:
        return Rd[qs[ks.index(k)]]
    col = cs.SX.zeros(n, 1)
    col[ks] = Rd[qs]
    return cs.densify(col)


class Substitution(Mapping[int, cs.SX]):
    """``{eliminated variable index: its expression in the kept unknowns}``: the keys
    (in order) and the expressions stacked in one column in key order (``column``). A
    mapping read as a dictionary; the expressions are split from the column, and the
    dictionary formed, on the first read of a value (the passes read the keys and the
    column only: 300 000 scalar expressions at 10^5 masses, never read)."""

    def __init__(self, keys: np.ndarray | list[int] | None = None,
                 column: cs.SX | None = None) -> None:
        self._keys = np.asarray([] if keys is None else keys, dtype=np.int64)
        self.column: cs.SX = cs.SX(0, 1) if column is None else column
        self._dict: dict[int, cs.SX] | None = None
        #: per row of ``column``, the unknown it is up to sign (a flat variable index;
        #: -1 where the row is an expression in parameters, or zero) and whether it is
        #: that unknown's negation; None if not known (an unpickled substitution). The
        #: DAE pass substitutes the solutions into these rows by indexing (see
        #: :func:`acausal.dae.signed_rows`).
        self.signed: tuple[np.ndarray, np.ndarray] | None = None

    def _get(self) -> dict[int, cs.SX]:
        got = self._dict
        if got is None:
            keys = self._keys.tolist()
            exprs: list[cs.SX] = self.column.nonzeros() if keys else []  # type: ignore[assignment]
            got = self._dict = dict(zip(keys, exprs, strict=True))
        return got

    def __getitem__(self, k: int) -> cs.SX:
        return self._get()[k]

    def __iter__(self) -> Iterator[int]:
        return iter(self._keys.tolist())

    def __len__(self) -> int:
        return len(self._keys)

    def __contains__(self, k: object) -> bool:
        return k in self._get()

    def keys_array(self) -> np.ndarray:
        """The keys as an array (in order)."""
        return self._keys

    def __repr__(self) -> str:
        return repr(self._get())

    def __reduce__(self) -> tuple[Any, ...]:
        # (the keys and the column: the expressions are its rows, split again when read,
        # not tens of thousands of expressions pickled one by one)
        return (_substitution_of, (self._keys.tolist(), self.column))


def _substitution_of(keys: list[int], column: cs.SX) -> Substitution:
    """The :class:`Substitution` of ``keys`` whose expressions are the rows of ``column``
    (pickled as such)."""
    return Substitution(keys, column)


def _substitution(V: list[FlatVariable], X: cs.SX, P: np.ndarray, S: np.ndarray,
                  const: dict[int, cs.SX], is_der: np.ndarray, roots: _Roots
                  ) -> tuple[Substitution, np.ndarray, np.ndarray]:
    """Expressions of the eliminated variables (and their derivatives) in the kept ones
    (``P``, ``S``: every variable's representative and sign, :func:`_resolved`;
    ``const``: representative -> constant; ``X``: the unknowns' symbols in one column).

    The representative of a set is its best-ranked member, so it has a derivative symbol
    whenever any member has one. ``roots`` receives each eliminated variable's
    representative where that is an unknown. The expressions are formed as one column
    (a representative's negation once), then split. Returns the substitution, the
    eliminated variables that are not derivatives (sorted) and, for every variable, the
    unknown it becomes (itself if kept, its representative or the representative's
    derivative, up to sign; -1 for a constant).
    """
    n = len(V)
    has = np.zeros(n, dtype=bool)
    if const:
        has[np.fromiter(const, dtype=np.int64, count=len(const))] = True
    elim = np.flatnonzero(((P != np.arange(n)) | has[P]) & ~is_der)
    target = np.arange(n, dtype=np.int64)
    if not elim.size:
        return Substitution(), elim, target
    ks = elim.tolist()
    rs = P[elim]
    ss = S[elim]
    isc = has[rs]
    ders = _ders(V, ks)
    # the slots of the substitution, in key order: each variable, then its derivative
    sizes = 1 + (ders >= 0)
    first = offsets(sizes)[:-1]
    n_keys = int(sizes.sum())
    keys = np.empty(n_keys, dtype=np.int64)
    keys[first] = elim
    second = first[ders >= 0] + 1
    keys[second] = ders[ders >= 0]
    # per slot: 0 symbol, 1 negated symbol, 2 expression, 3 zero; the symbol's unknown
    # (0, 1) or the expression's position (2)
    kind = np.full(n_keys, 3, dtype=np.int64)
    spec = np.zeros(n_keys, dtype=np.int64)
    neg = (ss != 1.0).astype(np.int64)
    sig = ~isc
    kind[first[sig]] = neg[sig]
    spec[first[sig]] = rs[sig]
    target[elim[sig]] = rs[sig]
    target[elim[isc]] = -1
    roots.set(elim[sig], rs[sig])
    dsig = sig & (ders >= 0)
    if dsig.any():
        rd = _ders(V, rs[dsig].tolist())
        assert (rd >= 0).all(), "alias representative lost its derivative"
        at = first[dsig] + 1
        kind[at] = neg[dsig]
        spec[at] = rd
        target[ders[dsig]] = rd
    target[ders[isc & (ders >= 0)]] = -1
    exprs: list[cs.SX] = []
    for i in np.flatnonzero(isc).tolist():  # (a constant's derivative: zero, as set)
        c = const[int(rs[i])]
        if c is _ZERO:
            continue
        e = _signed(c, float(ss[i]))  # (s is +1 or -1: CasADi forms -1 * e as -e)
        if e.is_zero():  # (a constant zero: taken from one column of zeros)
            continue
        kind[first[i]] = 2
        spec[first[i]] = len(exprs)
        exprs.append(cs.densify(e))
    plus = np.flatnonzero(kind == 0)
    minus = np.flatnonzero(kind == 1)
    negs = unique(spec[minus])  # (np.unique imports numpy.ma: ~10 ms of a cold start)
    perm = np.empty(n_keys, dtype=np.int64)
    perm[plus] = np.arange(len(plus))
    perm[minus] = len(plus) + np.searchsorted(negs, spec[minus])
    rest = np.flatnonzero(kind == 2)
    perm[rest] = len(plus) + len(negs) + spec[rest]
    zeros = np.flatnonzero(kind == 3)
    perm[zeros] = len(plus) + len(negs) + len(exprs)
    pool = stack(_take(X, spec[plus]), -_take(X, negs), *exprs,
                 cs.SX.zeros(1 if len(zeros) else 0, 1))
    out = Substitution(keys, rows_of(pool, perm.tolist()))
    out.signed = (np.where(kind <= 1, spec, -1), kind == 1)
    return out, elim, target


def _ders(V: list[FlatVariable], ks: list[int]) -> np.ndarray:
    """The index of each variable's derivative (-1: none)."""
    return np.asarray([-1 if v.der is None else v.der for v in map(V.__getitem__, ks)],
                      dtype=np.int64)


def _take(col: cs.SX, rows: np.ndarray) -> cs.SX:
    """Rows ``rows`` of a column (none: an empty column)."""
    return rows_of(col, rows.tolist()) if len(rows) else cs.SX(0, 1)


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


def _merge_starts(fs: FlatSystem, P: np.ndarray, S: np.ndarray, const: dict[int, cs.SX],
                  elim: np.ndarray) -> dict[int, tuple[float, bool]]:
    """Start values and fixed flags moved to the representatives: ``{index: (start,
    fixed)}`` for every variable whose pair changes (the flat system is left as it is;
    ``P``, ``S``, ``const`` and ``elim`` as in :func:`_substitution`)."""
    V = fs.variables
    out: dict[int, tuple[float, bool]] = {}

    def current(k: int) -> tuple[float, bool]:
        return out.get(k, (V[k].start, V[k].fixed))

    for k in elim.tolist():
        v = V[k]
        if not v._spec.fixed:  # (v.fixed, without its property: every eliminated one)
            continue
        r, s = int(P[k]), float(S[k])
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
        sub = al.substitution
        gone[sub.keys_array() if isinstance(sub, Substitution) else
             np.fromiter(sub, dtype=np.int64, count=len(sub))] = True
    keep_a = np.flatnonzero(~gone)
    keep = keep_a.tolist()
    renumber = np.full(len(V), -1, dtype=np.int64)
    renumber[keep_a] = np.arange(len(keep), dtype=np.int64)
    # (the new indices as the build's shared integer objects, the flat system's: see
    # symbols.shared_ints)
    shared = fs.__dict__.get("_ints")
    if shared is None:
        shared = shared_ints(0)
    pool = grow_ints(shared, len(keep))[:len(keep)]
    new_index_a = np.full(len(V), -1, dtype=object)
    new_index_a[keep_a] = pool
    new_index = new_index_a.tolist()
    variables = list(map(V.__getitem__, keep))
    starts = al.starts
    # a copy where something changes (a derivative link renumbered, a start moved); the
    # others are shared with the flat system (no pass changes a variable in place: see
    # EquationSystem.copy)
    FlatVariable.relink(variables, new_index)
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
                                     pool=shared, parameter_symbols=fs.par_column,
                                     marked=_marked(fs))


def alias_pass(state: CompileState) -> CompileState:
    """Pass: flat system -> aliases removed, the equation system of the structure stage and
    what structural error messages need to name the user's objects."""
    fs = need(state.flat, "the flat system (flatten pass)")
    al = eliminate_aliases(fs)
    system = equation_system(fs, al)
    # the tables handed on stay with the system only (a saved model carries no copies)
    al.incidence = al.symbols = None
    fs.__dict__.pop("_columns", None)
    fs.__dict__.pop("_ints", None)  # (the system keeps them)
    fs.__dict__.pop("_marked", None)
    fs.template_incidence = None
    return state.update(aliases=al, system=system, diagnostics=diagnostics(fs, al))


class _Table(Mapping[Any, Any]):
    """A dictionary formed on first use: the structure diagnostics' tables serve error
    messages only, and a large model builds without one. Pickles as the dictionary."""

    def __init__(self, make: Callable[[], dict[Any, Any]]) -> None:
        self._make: Callable[[], dict[Any, Any]] | None = make
        self._data: dict[Any, Any] | None = None

    def _get(self) -> dict[Any, Any]:
        if self._data is None:
            assert self._make is not None
            self._data, self._make = self._make(), None
        return self._data

    def __getitem__(self, key: Any) -> Any:
        return self._get()[key]

    def __iter__(self) -> Iterator[Any]:
        return iter(self._get())

    def __len__(self) -> int:
        return len(self._get())

    def __repr__(self) -> str:
        return repr(self._get())

    def __reduce__(self) -> tuple[type, tuple[dict[Any, Any]]]:
        return (dict, (self._get(),))


class _Roots(_Table):
    """:attr:`AliasResult.roots`: the eliminated variables and their representatives as
    two arrays, read as a dictionary formed on first use (only the structure
    diagnostics' alias table reads it: 300 000 entries at 10^5 masses)."""

    def __init__(self) -> None:
        super().__init__(dict)

    def set(self, keys: np.ndarray, values: np.ndarray) -> None:
        """The pairs ``keys[i] -> values[i]`` (replacing any before)."""
        self._make, self._data = partial(_pairs, keys, values), None


def _pairs(keys: np.ndarray, values: np.ndarray) -> dict[int, int]:
    return dict(zip(keys.tolist(), values.tolist(), strict=True))


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
