"""Solve the BLT blocks symbolically where possible; the rest become algebraic equations.

Level by level (:class:`~acausal.structure.causalize.Causalization`), the solutions found
so far are substituted into the block equations with one vectorised call, then

* a scalar block whose equation is linear in its unknown with a coefficient free of
  unknowns and time (``C der(v) = i``, ``R i = v``) is solved explicitly, all such blocks of
  a level in one division;
* a small block linear in its unknowns with a constant matrix (two capacitors in parallel,
  rigidly coupled inertias) is solved by a symbolic linear solve;
* every other block stays implicit: its unknowns become algebraic variables ``z`` of the
  DAE and its equations the algebraic residuals ``0 = alg(x, z, p, t)``.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Iterator, Sequence
from dataclasses import field
from itertools import repeat
from operator import attrgetter, is_
from typing import TYPE_CHECKING, Any, NamedTuple, overload

import casadi as cs
import numpy as np

from ..csr import spread, unique
from ..errors import SingularityError
from ..fastsx import even_step, interleave, put, stack, take
from ..records import record
from ..state import need
from ..templates import leads_of
from .blt import Block
from .causalize import Causalization
from .system import EquationSystem

if TYPE_CHECKING:
    from ..state import CompileState

__all__ = ["SolvedBlocks", "solve_blocks", "solve_pass", "MAX_LINEAR_BLOCK"]

#: (the C function behind SX.is_constant: one call per coefficient of a large model)
_IS_CONSTANT: Callable[[Any], bool] = getattr(getattr(cs, "_casadi", None), "SX_is_constant",
                                              cs.SX.is_constant)

#: largest implicit block solved by a symbolic linear solve (the expression of a dense
#: solve grows like n^3)
MAX_LINEAR_BLOCK = 24


@record
class SolvedBlocks:
    """Unknowns solved explicitly and the implicit rest (``z``, ``alg``).

    The explicit solutions are kept as one column, ``expr`` (row ``k`` solves variable
    ``idx[k]``, named ``names[k]``), not as one scalar expression per unknown: splitting
    and stacking again costs a call (and a Python object) per unknown."""

    idx: list[int] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    expr: cs.SX = field(default_factory=lambda: cs.SX(0, 1))
    z: list[cs.SX] = field(default_factory=list)
    z_names: list[str] = field(default_factory=list)
    alg: list[cs.SX] = field(default_factory=list)
    alg_equations: list[int] = field(default_factory=list)  # system equation of each row
    n_explicit: int = 0
    #: blocks solved by dividing by parameters: (coefficient or matrix of the block, its
    #: equations, its unknowns); singular for some parameter values (a coefficient alpha
    #: that is zero), checked with the values of each run (acausal.regularity)
    pivots: Pivots = field(default_factory=lambda: Pivots())

    @property
    def solved(self) -> dict[str, cs.SX]:
        """The explicit solutions by variable name (one scalar expression each)."""
        return dict(zip(self.names, cs.vertsplit(self.expr), strict=True))


class Pivots(Sequence[tuple[cs.SX, list[int], list[int]]]):
    """:attr:`SolvedBlocks.pivots`, in order: the scalar blocks' coefficients of a level
    kept as one column with their equations and unknowns (arrays), each split into
    ``(coefficient, [equation], [unknown])`` when first read, and the other blocks'
    ``(matrix, equations, unknowns)`` as they are (no build reads them: a chain of 10^5
    masses has 10^5 coefficients, three Python objects and a CasADi one each)."""

    def __init__(self) -> None:
        self._parts: list[Any] = []  # a (matrix, ...) triplet, or a _Column
        self._items: list[tuple[cs.SX, list[int], list[int]]] | None = None

    def append(self, item: tuple[cs.SX, list[int], list[int]]) -> None:
        self._parts.append(item)
        self._items = None

    def add_column(self, col: cs.SX, equations: np.ndarray, unknowns: np.ndarray) -> None:
        """Scalar pivots: row ``k`` of ``col`` is the coefficient of ``unknowns[k]`` in
        ``equations[k]``."""
        if len(equations):
            self._parts.append(_Column(col, equations, unknowns))
            self._items = None

    def _all(self) -> list[tuple[cs.SX, list[int], list[int]]]:
        items = self._items
        if items is None:
            items = []
            for part in self._parts:
                if type(part) is _Column:
                    items += zip(cs.vertsplit(part.col), map(_one, part.equations.tolist()),
                                 map(_one, part.unknowns.tolist()), strict=True)
                else:
                    items.append(part)
            self._items = items
        return items

    def __len__(self) -> int:
        return sum(len(p.equations) if type(p) is _Column else 1 for p in self._parts)

    @overload
    def __getitem__(self, k: int) -> tuple[cs.SX, list[int], list[int]]: ...

    @overload
    def __getitem__(self, k: slice) -> list[tuple[cs.SX, list[int], list[int]]]: ...

    def __getitem__(self, k: int | slice) -> Any:
        return self._all()[k]

    def __iter__(self) -> Iterator[tuple[cs.SX, list[int], list[int]]]:
        return iter(self._all())

    def __repr__(self) -> str:
        return repr(self._all())

    def __reduce__(self) -> tuple[Any, ...]:
        return (_pivots_of, (self._all(),))


class _Column(NamedTuple):
    col: cs.SX
    equations: np.ndarray
    unknowns: np.ndarray


def _linear_solve(A: cs.SX, b: cs.SX) -> cs.SX:
    """x with A x = b for a block's matrix A (symbolic: parameters, relations).

    ``casadi.solve`` on a symbolic matrix forms a Gram-Schmidt QR, whose error grows like
    eps cond(A)^2: an ideal diode bridge whose four diodes block (off conductance 1e-9
    against an on resistance of 1e-5, cond ~ 1e11) got node voltages wrong by up to 218 V.
    A block that is not triangular after its block-triangular permutation and larger than
    3x3 is solved by a Householder QR instead (error ~ eps cond(A)); the small and the
    triangular ones keep the shorter expressions of ``casadi.solve``, where the two agree."""
    n = A.size2()
    if n <= 3:
        return cs.solve(A, b)
    _, rows, cols, *_ = A.sparsity().btf()
    if A[rows, cols].is_triu():
        return cs.solve(A, b)
    return cs.qr_solve(b, *cs.qr_sparse(A))


def _one(k: int) -> list[int]:
    return [k]


def _pivots_of(items: list[tuple[cs.SX, list[int], list[int]]]) -> Pivots:
    """The :class:`Pivots` of these items (unpickled)."""
    out = Pivots()
    for it in items:
        out.append(it)
    return out


def _unknown_not_determined(sys: EquationSystem, bl: Block, why: str) -> SingularityError:
    return SingularityError(
        f"equation {sys.equations[bl.equations[0]].describe()} does not determine "
        f"{sys.variables[bl.unknowns[0]].name}{why}"
    )


def _coefficients(F: cs.SX, us: cs.SX) -> cs.SX:
    """``d F_k / d u_k`` of rows each linear in their own unknown (one forward directional
    derivative: the rows' unknowns are distinct)."""
    return cs.jtimes(F, us, cs.DM.ones(us.shape))


_SOURCE, _ROW = attrgetter("_source"), attrgetter("_row")
_NAME, _SYM, _RES = attrgetter("name"), attrgetter("_sym"), attrgetter("_res")
_DERIVED_FROM, _DER_OF = attrgetter("derived_from"), attrgetter("der_of")

#: :func:`_unit_signs`' mark of a row whose coefficient is a parameter (``m * a == f``)
_SCALED = 2


class _Scaled(NamedTuple):
    """Rows whose coefficient is a parameter: row ``rows[k]``'s is row ``members[k]``
    of ``col`` (a group's column of its members' parameter)."""

    rows: np.ndarray
    col: cs.SX
    members: np.ndarray


def _known_coefficients(F: cs.SX, us: cs.SX, signs: np.ndarray,
                        scaled: Sequence[_Scaled] = ()) -> cs.SX:
    """:func:`_coefficients`, where ``signs`` (per row: 1, -1, ``_SCALED`` for a row of
    ``scaled``, or 0 for not known) gives some: those as the constants or the parameters
    (the nodes the derivative would make), the others differentiated (at 10^5 masses, a
    derivative of 200 000 rows costs 0.4 s)."""
    rest = np.flatnonzero(signs == 0)
    if len(rest) == len(signs):
        return _coefficients(F, us)
    # (a DM of a list on a dense pattern: half the time of one of an array)
    coef = cs.SX(cs.DM(cs.Sparsity.dense(len(signs), 1),
                       np.where(signs == _SCALED, 0, signs).astype(float).tolist()))
    for part in scaled:
        put(coef, part.rows, _take(part.col, part.members))
    put(coef, rest, _coefficients(take(F, rest), take(us, rest)))
    return coef


def _lead_rows(eqs: list[Any], unknowns: list[Any], variables: Sequence[Any] | None
               ) -> tuple[list[Any], list[Any], list[Any], np.ndarray]:
    """Per row, the equation and the unknown a group's lead is tested on (see
    :func:`_unit_signs`): its own, or, for a row made by differentiating a group's
    equation (index reduction) whose unknown is a derivative, its parent and the
    variable its unknown is the derivative of (that of the parent's residual is the
    coefficient of its derivative in the row's, where the lead is steady). Also the
    equations' sources and the rows of the second kind (an index array)."""
    n = len(eqs)
    srcs = list(map(_SOURCE, eqs))
    at = np.flatnonzero(np.fromiter(map(is_, srcs, repeat(None)), dtype=bool, count=n))
    none = np.zeros(0, dtype=np.int64)
    if not len(at) or variables is None:
        return eqs, unknowns, srcs, none
    # (those whose parent is a group's and whose unknown a derivative; read in C)
    at_l = at.tolist()
    parents = list(map(_DERIVED_FROM, map(eqs.__getitem__, at_l)))
    psrcs = [None if p is None else p._source for p in parents]
    of = list(map(_DER_OF, map(unknowns.__getitem__, at_l)))
    ok = ~(np.fromiter(map(is_, psrcs, repeat(None)), dtype=bool, count=len(at))
           | np.fromiter(map(is_, of, repeat(None)), dtype=bool, count=len(at)))
    if not ok.any():
        return eqs, unknowns, srcs, none
    test_eq, test_var = list(eqs), list(unknowns)
    for q in np.flatnonzero(ok).tolist():
        k = at_l[q]
        test_eq[k], test_var[k], srcs[k] = parents[q], variables[of[q]], psrcs[q]
    return test_eq, test_var, srcs, at[ok]


def _unit_signs(eqs: list[Any], unknowns: list[Any], reps: Container[str] | None,
                variables: Sequence[Any] | None = None,
                scaled: list[_Scaled] | None = None) -> np.ndarray:
    """Per row, the coefficient of its unknown (``unknowns[k]``, a variable) in the
    residual of equation ``eqs[k]`` where its template says it (:attr:`acausal.templates.
    Template.leads`: ``u == rhs``, 1, ``lhs == u``, -1, or ``p * u == rhs``,
    ``_SCALED``: the parameter, appended to ``scaled``; None: such rows 0), else 0.
    ``reps``: the names of the unknowns the alias elimination put into equations in
    place of others (None: not known); an equation it rewrote may hold such an unknown
    on the other side too.
    ``variables``: the system's (to test the rows made by differentiation: see
    :func:`_lead_rows`). (Told by integers and identities, in C: a string per row cost
    more than the derivative saved.)"""
    out = np.zeros(len(eqs), dtype=np.int8)
    if reps is None or not eqs:
        return out
    n = len(eqs)
    eqs, lead_vars, srcs, derived = _lead_rows(eqs, unknowns, variables)
    is_derived = np.zeros(n, dtype=bool)
    is_derived[derived] = True
    # the rows by their group (the column of their sources, an object per group)
    ids = np.fromiter(map(id, srcs), dtype=np.int64, count=n)
    keys, first, inv = np.unique(ids, return_index=True, return_inverse=True)
    got = [leads_of(srcs[k]) for k in first.tolist()]
    if not any(got):
        return out
    rows = np.fromiter(map(_ROW, eqs), dtype=np.int64, count=n)
    for g, lr in enumerate(got):
        if lr is None:
            continue
        leads, n_eq, res = lr
        at = np.flatnonzero(inv == g) if len(keys) > 1 else np.arange(n)
        member, j = np.divmod(rows[at], n_eq)
        # (the rows of a template equation with a lead: their unknowns looked at)
        has = np.asarray([lead is not None for lead in leads], dtype=bool)[j]
        if not has.all():
            at, member, j = at[has], member[has], j[has]
        if not len(at):
            continue
        # the unknowns' columns of symbols and rows in them: a group's member's lead is
        # row ``member`` of the lead's column
        these = list(map(lead_vars.__getitem__, at.tolist()))
        cols = np.fromiter(map(id, map(_SYM, these)), dtype=np.int64, count=len(at))
        mine = np.fromiter(map(_ROW, these), dtype=np.int64, count=len(at)) == member
        for jj, lead in enumerate(leads):
            if lead is None:
                continue
            for col, sign, steady in ((lead.lhs, 1, lead.steady[0]),
                                      (lead.rhs, -1, lead.steady[1])):
                if col is None:
                    continue
                hit = mine & (j == jj) & (cols == id(col))
                if not steady:  # (a derivative's coefficient not told)
                    hit &= ~is_derived[at]
                kept = _kept(np.flatnonzero(hit), at, eqs, unknowns, lead_vars, res, reps,
                             is_derived)
                if lead.scale is None:
                    out[at[kept]] = sign
                elif len(kept) and scaled is not None:
                    out[at[kept]] = _SCALED
                    scaled.append(_Scaled(at[kept], lead.scale, member[kept]))
    return out


def _kept(hit: np.ndarray, at: np.ndarray, eqs: list[Any], unknowns: list[Any],
          lead_vars: list[Any], res: Any, reps: Container[str], derived: np.ndarray
          ) -> np.ndarray:
    """The positions ``hit`` (in ``at``, of rows) whose equation was not rewritten since
    its group made it (its residual still a row of ``res``) or whose lead's unknown
    (and, in a derivative, the row's own unknown: see :func:`_lead_rows`) is not named
    in ``reps``."""
    rows = at[hit]
    same = np.fromiter(map(is_, map(_RES, map(eqs.__getitem__, rows.tolist())), repeat(res)),
                       dtype=bool, count=len(hit))
    if same.all():
        return hit
    other = rows[~same]
    rep = np.fromiter(map(reps.__contains__, map(_NAME, map(lead_vars.__getitem__,
                                                            other.tolist()))),
                      dtype=bool, count=len(other))
    d = derived[other]
    if d.any():  # (the rewritten rhs must hold neither the lead nor its derivative)
        rep[d] |= np.fromiter(map(reps.__contains__, map(_NAME, map(
            unknowns.__getitem__, other[d].tolist()))), dtype=bool, count=int(d.sum()))
    return np.concatenate([hit[same], hit[~same][~rep]])


def _take(col: cs.SX, idx: np.ndarray) -> cs.SX:
    """Rows ``idx`` of ``col`` (:func:`~acausal.fastsx.take`), also where ``idx``
    interleaves a few evenly stepped runs (row ``k`` of run ``k % m``: the equations of
    two kinds of a level of a chain, member after member), each run a slice."""
    n = len(idx)
    if n >= _MIN_INTERLEAVED and not even_step(idx):
        for m in (2, 3, 4):
            if n % m == 0 and all(even_step(idx[j::m]) for j in range(m)):
                out = interleave([take(col, idx[j::m]) for j in range(m)], n // m)
                if out is not None:
                    return out
    return take(col, idx)


#: fewer rows are taken by a list (a slice and an assignment per run cost ~20 us each)
_MIN_INTERLEAVED = 256


def _substituted(F: cs.SX, used: list[cs.SX], parts: list[cs.SX]) -> cs.SX:
    """``F`` with the unknowns ``used`` (columns of symbols) replaced by their solutions
    (``parts``, column for column), if any."""
    return cs.substitute([F], used, parts)[0] if used else F


def _dependent_rows(coef: cs.SX, unknowns: cs.SX, t: cs.SX, told: np.ndarray | None = None,
                    on: Callable[[np.ndarray], cs.SX] | None = None) -> set[int]:
    """Rows of ``coef`` that depend on an unknown or time. (Coefficients of constants or
    parameters only, the common case, are told by one dependency test, without the
    sparsity pattern; the unknowns and time asked apart, not stacked into one more copy
    of the unknowns' column.) ``told``: per row, whether the templates told its
    coefficient (a constant or a parameter: free of both); ``on``: the unknowns the
    residuals of some rows hold (their incidence), to test the other rows on instead of
    every unknown (a dependency test costs the size of its argument: 10 ms on the 10^5
    unknowns of 10 000 masses, for a level of a few rows not told)."""
    if coef.is_constant():
        return set()
    rows = None
    if told is not None and told.any():
        rows = np.flatnonzero(~told)
        if not len(rows):
            return set()
        coef = take(coef, rows)
        if coef.is_constant():
            return set()
        if on is not None:
            unknowns = on(rows)
    if not _depends(coef, unknowns, t):
        return set()
    got = {r for arg in (unknowns, t) for r in cs.jacobian_sparsity(coef, arg).get_triplet()[0]}
    return got if rows is None else set(rows[sorted(got)].tolist())


def _depends(expr: cs.SX, unknowns: cs.SX, t: cs.SX) -> bool:
    """Whether ``expr`` depends on an unknown or time."""
    return bool(cs.depends_on(expr, unknowns) or cs.depends_on(expr, t))


def _moving(coef: cs.SX) -> np.ndarray:
    """The rows of the dense column ``coef`` that are not constants. (A column of symbols,
    a parameter each, a mass say, has none, told by one test in C: read row by row, the
    100 000 coefficients of a chain cost 0.17 s.)"""
    if coef.is_symbolic():
        return np.arange(coef.numel())
    coefs = cs.vertsplit(coef)  # (one call, not one per entry)
    return np.flatnonzero(~np.fromiter(map(_IS_CONSTANT, coefs), dtype=bool,
                                       count=len(coefs)))


def solve_blocks(sys: EquationSystem, causal: Causalization,
                 max_linear_block: int = MAX_LINEAR_BLOCK,
                 alias_reps: Container[str] | None = None) -> SolvedBlocks:
    """Explicit solutions where the blocks allow them, algebraic equations elsewhere.

    ``alias_reps``: the names of the unknowns the alias elimination substituted for
    others (:func:`_unit_signs`; None, not known: every coefficient is differentiated)."""
    # the incidence decides which solutions a level substitutes: it must list the tree
    # coordinates the dummy derivatives made unknowns (implicit in the equations of motion)
    sys = sys.for_states(causal.states)
    out = SolvedBlocks()
    # the solutions so far, one column per level (not stacked again as levels are added):
    # variable j is row sol_row[j] of column sol_col[j]
    cols: list[cs.SX] = []
    sol_col = np.full(sys.n_vars, -1, dtype=np.int64)
    sol_row = np.zeros(sys.n_vars, dtype=np.int64)
    new_expr: list[cs.SX] = []  # columns of solutions found in the current level
    # the unknowns and the residuals stacked once: a level takes its rows by index instead
    # of stacking thousands of scalar expressions again
    syms = sys.symbols()
    all_res = sys.residuals()
    variables = sys.variables
    # the unknowns' indices as the build's shared integer objects (EquationSystem.ints),
    # taken by index level after level (one array: a chain has thousands of levels)
    ints = np.empty(sys.n_vars, dtype=object)
    ints[:] = sys.ints(sys.n_vars)[:sys.n_vars]
    # the incidence as arrays (a level takes the rows of its equations)
    full = causal.incidence_of(sys)
    row_len = np.diff(full.indptr)
    def record(js: list[int], exprs: cs.SX, names: list[str] | None = None) -> None:
        out.idx.extend(js)
        out.names.extend(map(_NAME, map(variables.__getitem__, js)) if names is None
                         else names)
        new_expr.append(exprs)

    first = 0  # the first solution of the level before
    blocks = causal.blocks
    sizes = blocks.sizes()
    for ks in blocks.level_indices():
        if new_expr:
            new = np.asarray(out.idx[first:], dtype=np.int64)
            first = len(out.idx)
            sol_col[new] = len(cols)
            sol_row[new] = np.arange(len(new))
            cols.append(new_expr[0] if len(new_expr) == 1 else stack(*new_expr))
            new_expr.clear()
        # the scalar blocks as their equations and unknowns (most blocks: no object each)
        single = ks[sizes[ks] == 1]
        s_at = blocks.equations[blocks.ptr[single]]
        u_at = blocks.unknowns[blocks.ptr[single]]
        s_eqs = s_at.tolist()
        u_idx = ints[u_at].tolist()
        rest = blocks.take(ks[sizes[ks] > 1])
        # the solutions of the unknowns these equations contain (their incidence), not
        # every solution so far: a level costs its own size
        lv_eqs = blocks.equations[spread(blocks.ptr[ks], sizes[ks])]
        used = unique(full.indices[spread(full.indptr[lv_eqs], row_len[lv_eqs])])
        used = used[sol_col[used] >= 0]
        used = used[np.lexsort((sol_row[used], sol_col[used]))]  # (by column: one take each)
        # (their solutions as the rows of each column, and their symbols the same way:
        # the substitution takes them as pairs, none stacked)
        used_c = unique(sol_col[used]).tolist()
        used_at = [used[sol_col[used] == c] for c in used_c]
        used_s = [_take(cols[c], sol_row[at]) for c, at in zip(used_c, used_at, strict=True)]
        used_v = [_take(syms, at) for at in used_at]
        if s_eqs:  # explicit when linear with a coefficient free of unknowns and time
            F_s = _take(all_res, s_at)
            us = _take(syms, u_at)
            # (blocks of one level are independent of each other: the diagonal of the
            # Jacobian is one forward directional derivative, without its sparsity pattern)
            # The coefficients are taken of the residuals as written: substituting the
            # solutions first would make CasADi traverse every solution below this level.
            # Where a coefficient has unknowns, the substituted residual decides (a
            # coefficient in unknowns solved by parameters only is still explicit).
            u_vars = list(map(variables.__getitem__, u_idx))
            u_names = list(map(_NAME, u_vars))
            scaled: list[_Scaled] = []
            signs = _unit_signs(list(map(sys.equations.__getitem__, s_eqs)), u_vars,
                                alias_reps, variables, scaled)
            coef = _known_coefficients(F_s, us, signs, scaled)
            # (the rows not told tested on the unknowns their residuals hold, when the
            # incidence lists them all: no coordinates left out of it)
            def held(rows: np.ndarray, at: np.ndarray = s_at) -> cs.SX:
                eqs = at[rows]
                return _take(syms, unique(full.indices[spread(full.indptr[eqs],
                                                              row_len[eqs])]))

            dep_rows = _dependent_rows(coef, syms, sys.t, signs != 0,
                                       None if sys.implicit else held)
            if dep_rows and used_v:
                dep = sorted(dep_rows)
                coef_sub = _coefficients(_substituted(F_s[dep], used_v, used_s), us[dep])
                still = {dep[q] for q in _dependent_rows(coef_sub, syms, sys.t)}
                if len(still) < len(dep):  # their coefficients from the substituted rows
                    parts = cs.vertsplit(coef)
                    for q, c in zip(dep, cs.vertsplit(coef_sub), strict=True):
                        parts[q] = c
                    coef = cs.vertcat(*parts)
                dep_rows = still
            ok = (list(range(len(s_eqs))) if not dep_rows else
                  [q for q in range(len(s_eqs)) if q not in dep_rows])
            rest += blocks.take(single[sorted(dep_rows)])
            if ok:
                every = len(ok) == len(s_eqs)  # (no rows to take)
                a_ok = coef if every else coef[ok]
                # a vanishing coefficient (constant zero) is the first row sparsify drops
                # (counted; the rows listed only then: a Python int per row otherwise)
                nonzero = cs.sparsify(a_ok)
                if nonzero.nnz() < len(ok):
                    kept = nonzero.sparsity().row()
                    q = next(q for q, r in enumerate([*kept, -1]) if q != r)
                    raise _unknown_not_determined(
                        sys, blocks[int(single[ok[q]])], ": its coefficient vanishes. Check for an "
                        "unconnected port of that component: an unconnected port carries "
                        "zero through variable (zero current, force, heat flow)")
                if not a_ok.is_constant():  # parameter-dependent divisors, checked per run
                    moving = _moving(a_ok)
                    at = np.asarray(ok, dtype=np.int64)[moving]
                    out.pivots.add_column(a_ok if len(moving) == len(ok) else
                                          a_ok[moving.tolist()],
                                          np.asarray(s_eqs, dtype=np.int64)[at],
                                          np.asarray(u_idx, dtype=np.int64)[at])
                u_ok = u_idx if every else [u_idx[k] for k in ok]
                # the residual at zero unknown, with the solutions so far: one substitution
                # (of the symbols and solutions column by column, not stacked)
                r0 = cs.substitute([F_s if every else F_s[ok]],
                                   [*used_v, us if every else us[ok]],
                                   [*used_s, cs.SX.zeros(len(u_ok))])[0]
                # (a division by coefficients that are all one gives the negated residuals
                # themselves, the same elements: not formed, at 10^5 rows a call of 50 ms)
                record(u_ok, -r0 if a_ok.is_one() else -r0 / a_ok,
                       u_names if every else [u_names[k] for k in ok])
                out.n_explicit += len(ok)
        # the other blocks: their residuals with the solutions so far
        rest_eqs = [i for bl in rest for i in bl.equations]
        F = _substituted(all_res[rest_eqs], used_v, used_s) if rest else cs.SX(0, 1)
        rest_row = {i: k for k, i in enumerate(rest_eqs)}
        for bl in rest:
            res = F[[rest_row[i] for i in bl.equations]]
            u = syms[list(bl.unknowns)]
            if len(bl.unknowns) <= max_linear_block:
                A = cs.jacobian(res, u)
                if not _depends(A, syms, sys.t):
                    if len(bl.unknowns) == 1 and A.is_zero():
                        raise _unknown_not_determined(sys, bl, "")
                    if not A.is_constant():
                        out.pivots.append((A, bl.equations, bl.unknowns))
                    r0 = cs.substitute(res, u, cs.SX.zeros(u.shape))
                    record(list(bl.unknowns), -_linear_solve(A, r0))
                    out.n_explicit += len(bl.unknowns)
                    continue
            for j in bl.unknowns:
                out.z.append(sys.variables[j].sym)
                out.z_names.append(sys.variables[j].name)
            out.alg.extend(cs.vertsplit(res))
            out.alg_equations.extend(bl.equations)
    out.expr = stack(*cols, *new_expr) if cols or new_expr else cs.SX(0, 1)
    return out


def _alias_reps(state: CompileState) -> set[str] | None:
    """The names of the unknowns the alias elimination substituted for others (the
    representatives its substitution's rows are, up to sign), or None if not known."""
    al, fs = state.aliases, state.flat
    if al is None or fs is None:
        return None
    sub = al.substitution
    if not len(sub):
        return set()
    signed = getattr(sub, "signed", None)
    if signed is None:
        return None
    at = signed[0]
    return set(map(_NAME, map(fs.variables.__getitem__, at[at >= 0].tolist())))


def solve_pass(state: CompileState) -> CompileState:
    """Pass: explicit solutions of the BLT blocks, implicit rest as algebraic equations."""
    sys = need(state.system, "the index-reduced system (index reduction pass)")
    causal = need(state.causal, "the BLT blocks (causalisation pass)")
    solved = solve_blocks(sys, causal, alias_reps=_alias_reps(state))
    # the incidence the causalisation handed on (Causalization.incidence_of) has no
    # other reader: not kept with the model (its arrays, 36 MB at 10^5 masses, alive
    # through the DAE pass, where a build's memory peaks)
    causal.incidence = None
    return state.update(solved=solved)
