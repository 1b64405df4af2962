"""Pantelides' algorithm: which equations to differentiate, and how often.

Pantelides (1988), "The consistent initialization of differential-algebraic systems".
Every equation must be matched to a *highest-derivative* unknown; when an augmenting path
cannot be found, the equations and variables coloured by the failed search are
differentiated (equations structurally, variables get derivative symbols) and the search is
repeated on the differentiated equation. The symbolic derivatives are then formed by CasADi
automatic differentiation. A maximum matching from Hopcroft–Karp seeds the search, so an
index-1 model costs one matching and no augmenting-path search.
"""

from __future__ import annotations

from itertools import repeat
from operator import attrgetter
from typing import TYPE_CHECKING

import casadi as cs
import numpy as np

from ..csr import CSR, spread, unique
from ..errors import StructureError
from ..flatten import FlatEquation
from ..records import record
from ..state import need
from .diagnostics import (
    Explain,
    StructureDiagnostics,
    check_matching,
    check_nonsingular,
    domain_explanations,
)
from .incidence import column_positions, int_array
from .matching import match
from .system import EquationSystem, Rows

if TYPE_CHECKING:
    from ..state import CompileState

__all__ = ["PantelidesResult", "pantelides", "pantelides_pass"]

_ZERO = cs.SX(0)


@record
class PantelidesResult:
    """What index reduction did: the matching of highest derivatives, the derived
    equations and the highest differentiation level."""

    assign: list[int]  # equation matched to each variable (-1: not a highest derivative)
    differentiated: list[int]  # indices of equations created by differentiation
    max_level: int


def _augment(sys: EquationSystem, i0: int, assign: list[int], col_e: set[int],
             col_v: set[int]) -> bool:
    """Iterative augmenting-path search from equation ``i0`` (highest derivatives only).

    Same as the recursive AUGMENTPATH of Pantelides: colour the equation; take a free
    highest-derivative variable if there is one; otherwise try to re-route the equation
    matched to each uncoloured candidate variable. (The path is kept in parallel lists
    and the equations are entered inline: this search runs once per unmatched equation.)
    """
    A = sys.var_der
    inc = sys.incidence
    path_e: list[int] = []  # the equations on the path
    path_c: list[list[int]] = []  # their candidate variables
    path_p: list[int] = []  # the next candidate of each
    path_v: list[int] = []  # the variable each is being re-routed through
    i = i0
    while True:
        col_e.add(i)
        cands = [j for j in inc[i] if A[j] < 0]
        for j in cands:
            if assign[j] < 0:
                assign[j] = i
                for eq, jj in zip(path_e, path_v, strict=True):
                    assign[jj] = eq
                return True
        path_e.append(i)
        path_c.append(cands)
        path_p.append(0)
        path_v.append(-1)
        while path_e:
            cands = path_c[-1]
            pos, n = path_p[-1], len(cands)
            while pos < n and cands[pos] in col_v:
                pos += 1
            if pos < n:
                j = cands[pos]
                path_p[-1] = pos + 1
                path_v[-1] = j
                col_v.add(j)
                i = assign[j]
                break
            path_e.pop()
            path_c.pop()
            path_p.pop()
            path_v.pop()
        else:
            return False


def _settle_in_bulk(sys: EquationSystem, full: CSR, inc: CSR, highest: np.ndarray,
                    var_der: np.ndarray) -> PantelidesResult | None:
    """The result of :func:`pantelides` without a search, when it is provably that of the
    searches; ``None`` (nothing done) otherwise. (``full``: the incidence on every unknown,
    ``inc`` on the highest derivatives, ``highest`` their indices, ``var_der`` the
    derivative links as an array.)

    An equation without a highest derivative among its unknowns (``s_rel = s_b - s_a`` of
    every spring of a chain) is unmatched by any matching, and its search fails at once,
    colouring that equation alone: it is differentiated, and its derivative needs no new
    variable (each of its unknowns has a derivative already). When one matching of the
    equations together with those derivatives leaves no other equation unmatched, the
    search from each derivative, in the order the loop makes them, finds an augmenting
    path (the matching restricted to the equations so far is one larger than the loop's,
    and the derivative is the only equation the loop's leaves unmatched): so the loop
    would differentiate exactly these equations, once each, in this order, and its final
    matching may differ only by alternating paths (any complete matching serves).
    """
    n_eq = sys.n_eqs
    lens = np.diff(inc.indptr)
    full_lens = np.diff(full.indptr)
    todo = np.flatnonzero((lens == 0) & (full_lens > 0))
    if todo.size == 0:
        return None  # nothing to settle: the ordinary path costs one matching
    if sys.implicit:  # (their derivatives may list unknowns without a derivative yet)
        marked = {i for r, _ in sys.implicit for i in r}
        if not marked.isdisjoint(todo.tolist()):
            return None
    dlens = full_lens[todo]
    flat = full.indices[spread(full.indptr[todo], dlens)]
    cpos = column_positions(highest, sys.n_vars)
    c = cpos[var_der[flat]]  # (every unknown here has a derivative)
    r = np.repeat(np.arange(todo.size, dtype=np.int64), dlens) + n_eq
    keep = c >= 0
    ext = CSR.from_coo(np.concatenate([inc.rows_of_entries(), r[keep]]),
                       np.concatenate([inc.indices, c[keep]]), None,
                       (n_eq + todo.size, len(highest)))
    var_of_eq, _ = match(ext)
    matched = var_of_eq >= 0
    left = ~matched
    left[todo] = False
    left[:n_eq][full_lens == 0] = False
    if left.any():
        return None
    differentiated = _differentiated_in_bulk(sys, todo, flat, var_der)
    assign = np.full(sys.n_vars, -1, dtype=np.int64)
    assign[highest[var_of_eq[matched]]] = np.flatnonzero(matched)
    return PantelidesResult(sys.as_ints(assign), differentiated, 1)


def _differentiated_in_bulk(sys: EquationSystem, todo: np.ndarray, flat: np.ndarray,
                            var_der: np.ndarray) -> list[int]:
    """:meth:`EquationSystem.add_differentiated_equation` of the equations ``todo`` (none
    marked implicit, none derived; every unknown of theirs, ``flat`` (their incidence
    rows laid end to end), has a derivative) followed by
    :meth:`EquationSystem.differentiate_symbolically` of the new ones, all at once: the
    derivatives formed as that method forms them (one generation), and the new equations'
    entries of the tables appended in one call each, each with its residual and its
    incidence, the sparsity of its residual (the structural incidence the one-by-one path
    gives a new equation first, its equation's unknowns and their derivatives, is replaced
    by that). The sparsity is taken on the columns a derivative can depend on, the
    unknowns ``flat`` and their derivatives, not on every unknown of the system (at 10^5
    equations, a third of its cost). Returns their indices."""
    n_eq = sys.n_eqs
    der = var_der[flat]
    if (der < 0).any():  # (cannot happen: see _settle_in_bulk)
        raise AssertionError("index reduction: a derivative needed a new variable")
    m = len(todo)
    # (the indices as the build's shared integer objects: EquationSystem.ints)
    todo_l = sys.as_ints(todo)
    eqs = sys.equations
    new = sys.ints(n_eq + m)[n_eq:n_eq + m]
    # the derivatives (EquationSystem.differentiate_symbolically's one generation), their
    # sparsity on the unknowns they can depend on: those of ``flat`` and their derivatives
    vs = unique(flat)
    cols = unique(np.concatenate([vs, var_der[vs]]))
    rows, bounds, col = sys.derivatives(todo_l, vs.tolist(), cols.tolist())
    at = cols[np.asarray(col, dtype=np.int64)]
    # (the label is rendered lazily)
    parents = list(map(eqs.__getitem__, todo_l))
    eqs.extend(list(map(FlatEquation, repeat(rows, m), map(attrgetter("origin"), parents),
                        repeat("", m), repeat(None, m), parents, repeat(None, m),
                        sys.ints(m))))  # (map stops at the m-th)
    if isinstance(sys.incidence, Rows):  # (kept as arrays)
        sys.incidence.extend_compressed(np.asarray(bounds, dtype=np.int64), at)
    else:  # (the rows as tuples: see EquationSystem.incidence)
        inc = tuple(sys.as_ints(at)) if len(at) else ()
        sys.incidence.extend(map(inc.__getitem__, map(slice, bounds[:-1], bounds[1:])))
    eq_der = sys.eq_der
    for i, k in zip(todo_l, new, strict=True):
        eq_der[i] = k
    eq_der.extend([-1] * m)
    sys.eq_int.extend(todo_l)
    sys.extend_stacked(new, rows.column())
    return new


def _columns(m: CSR, cols: np.ndarray) -> CSR:
    """The columns ``cols`` (ascending) of ``m``, renumbered ``0 .. len(cols) - 1``."""
    c = column_positions(cols, m.shape[1])[m.indices]
    keep = c >= 0
    counts = np.bincount(m.rows_of_entries()[keep], minlength=m.shape[0])
    indptr = np.zeros(m.shape[0] + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    return CSR(indptr, c[keep], np.ones(int(keep.sum())), (m.shape[0], len(cols)))


def pantelides(sys: EquationSystem, max_steps: int | None = None,
               diagnostics: StructureDiagnostics | None = None,
               explain: Explain | None = None) -> PantelidesResult:
    """Run Pantelides' algorithm on ``sys``, extending it in place (differentiated
    equations and derivative variables appended); return the final assignment.

    A structurally singular system, on which the algorithm would not terminate (it would
    differentiate the over-determined part again and again, each derivative larger than
    the last: a locked kinematic loop with a driver filled gigabytes), is refused at the
    first failed search, before anything is differentiated
    (:func:`~acausal.structure.diagnostics.check_nonsingular`: a
    :class:`~acausal.errors.SingularityError` naming the parts, with ``diagnostics`` and
    a domain's ``explain``, if given).

    The pass (:func:`pantelides_pass`) runs it on a copy of the alias pass's system.
    """
    n_var = sys.n_vars
    if max_steps is None:
        max_steps = 8 * (sys.n_eqs + n_var) + 100
    max_level = n_var + 1  # the index cannot exceed the number of unknowns
    var_der = int_array(sys.var_der)
    highest = np.flatnonzero(var_der < 0)
    full = sys.incidence_matrix()
    inc = _columns(full, highest)
    settled = _settle_in_bulk(sys, full, inc, highest, var_der)
    if settled is not None:
        return settled
    if isinstance(sys.incidence, Rows):  # (the searches read it row by row)
        sys.incidence = list(sys.incidence)
    var_of_eq, _ = match(inc)
    matched = var_of_eq >= 0
    assign_a = np.full(n_var, -1, dtype=np.int64)
    assign_a[highest[var_of_eq[matched]]] = np.flatnonzero(matched)
    assign: list[int] = assign_a.tolist()
    unmatched: list[int] = np.flatnonzero(~matched).tolist()
    differentiated: list[int] = []
    steps = 0
    checked = False  # (whether the system is known to be structurally nonsingular)
    for i0 in unmatched:
        i = i0
        while True:
            steps += 1
            if steps > max_steps:
                raise StructureError(
                    f"index reduction did not finish after {max_steps} steps (equation "
                    f"{sys.equations[i].describe()}); the model is probably structurally "
                    "singular"
                )
            col_e: set[int] = set()
            col_v: set[int] = set()
            if _augment(sys, i, assign, col_e, col_v):
                break
            # an equation without unknowns (0 == 0, or in parameters only) is structurally
            # singular and cannot be cured by differentiation: left for the diagnostics
            if not sys.incidence[i] or sys.level(i) > max_level:
                break
            if not checked:  # (the first differentiation: nothing is differentiated yet)
                check_nonsingular(sys, diagnostics, explain)
                checked = True
            for j in sorted(col_v):
                sys.add_derivative_variable(j)
            for e in sorted(col_e):
                differentiated.append(sys.add_differentiated_equation(e))
            assign.extend([-1] * (sys.n_vars - len(assign)))
            for j in sorted(col_v):
                if assign[j] >= 0:
                    assign[sys.var_der[j]] = sys.eq_der[assign[j]]
            i = sys.eq_der[i]
    if differentiated:
        sys.differentiate_symbolically(differentiated)
    # (only derived equations have a level above zero)
    derived = np.flatnonzero(int_array(sys.eq_int) >= 0).tolist()
    level = max(map(sys.level, derived), default=0)
    # assignments refer to highest derivatives only
    final = (sys.as_ints(np.where(np.asarray(sys.var_der, dtype=np.int64) < 0, assign, -1))
             if assign else [])
    return PantelidesResult(final, differentiated, int(level))


def pantelides_pass(state: CompileState) -> CompileState:
    """Pass: differentiate the equations Pantelides' algorithm asks for (CasADi AD), on a
    copy of the equation system; then check every equation has a highest derivative."""
    sys = need(state.system, "the equation system (alias pass)").copy()
    result = pantelides(sys, diagnostics=state.diagnostics,
                        explain=domain_explanations(state))
    check_matching(sys, state.diagnostics, result.assign)
    return state.update(system=sys, pantelides=result)
