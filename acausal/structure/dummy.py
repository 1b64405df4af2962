"""Dummy derivatives: choose the states of the index-reduced system.

Mattsson & Söderlind (1993), "Index reduction in differential-algebraic equations using
dummy derivatives". Level by level, from the most differentiated equations down, the
Jacobian of the differentiated equations with respect to the candidate highest derivatives
is evaluated numerically and a non-singular square sub-matrix is chosen by column-pivoted
QR; the chosen derivatives become *dummy* (algebraic) and their variables lose state status.
Columns are scaled by the user's ``state_priority`` so preferred states are kept.

Where the Jacobian depends on the solution (a pendulum in Cartesian coordinates) the choice
is *dynamic*: :meth:`StateSelection.worst_quality` tells the simulator when the chosen
sub-matrix has become ill-conditioned, and :func:`select_states` is run again there.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import field
from operator import attrgetter
from typing import TYPE_CHECKING, Any

import casadi as cs
import numpy as np

from ..csr import unique
from ..records import record
from ..sparsegraph import components, pattern, transversal
from ..state import need
from . import matching
from .diagnostics import dependent_constraints_error
from .incidence import int_array
from .system import EquationSystem

if TYPE_CHECKING:
    from ..state import CompileState

__all__ = ["DummyBlock", "StateSelection", "select_states", "state_selection_pass"]


@record
class DummyBlock:
    """One independent pivoting problem: equations x candidate derivatives."""

    level: int
    equations: list[int]
    candidates: list[int]
    chosen: list[int]
    jacobian: cs.Function | None  # (all variables, p, t) -> d res / d candidates
    constant: bool  # Jacobian independent of the unknowns and time
    weights: np.ndarray | None = None  # column weights of the pivoting (state priorities)

    def quality(self, H: np.ndarray) -> float:
        """Conditioning of the chosen columns relative to the best available choice (<= ~1).

        The smallest singular value of the chosen square sub-matrix divided by that of the
        sub-matrix the pivoting would choose now, with the same priority weights as the
        selection (otherwise a choice that the priorities dictate, e.g. joint angles as
        dummies so that the elastic coordinates of a flexible link stay states, would look
        permanently poor next to an unweighted optimum that :func:`select_states` never
        picks, and the simulator would re-check it at every output point).
        """
        n = len(self.equations)
        pos = [self.candidates.index(c) for c in self.chosen]
        w = self.weights if self.weights is not None else np.ones(H.shape[1])
        best = _pivot(H, w, n)
        if set(best) == set(pos):  # the pivoting would keep this choice
            return 1.0
        s_cur = np.linalg.svd(H[:, pos], compute_uv=False)[-1]
        s_best = np.linalg.svd(H[:, best], compute_uv=False)[-1]
        if s_best == 0.0:
            return 0.0
        return float(s_cur / s_best)


@record
class StateSelection:
    """Chosen states and dummy derivatives."""

    states: list[int]
    dummies: set[int]
    blocks: list[DummyBlock] = field(default_factory=list)

    @property
    def dynamic(self) -> bool:
        return any(not b.constant for b in self.blocks)

    def worst_quality(self, values: np.ndarray, p: np.ndarray, t: float) -> float:
        """Smallest :meth:`DummyBlock.quality` over the state-dependent blocks."""
        q = 1.0
        for b in self.blocks:
            if b.constant or b.jacobian is None:
                continue
            q = min(q, b.quality(np.asarray(b.jacobian(values, p, t))))
        return q


_DENSE_LIMIT = 60  # blocks with more candidates use the sparse selection
_DENSE_FALLBACK = 2000  # ... and the dense pivoting when the sparse selection fails


def _sparse_pick(H: cs.DM, prio: np.ndarray, n: int) -> list[int] | None:
    """Columns for a large block (``H``: its Jacobian, sparse): a structural matching of
    the equations to the candidates whose variables least want to be states, widened class
    by class, checked by a sparse QR of the picked columns.

    (CasADi's C++ routines: :func:`acausal.sparsegraph.transversal` and ``qr_sparse``,
    loaded by every build; scipy's matching and LU, used before, cost a large model's
    build their import.)"""
    sp = H.sparsity()
    n_cols = sp.size2()
    val = np.asarray(H.nonzeros(), dtype=float)
    nz = val != 0.0  # (entries that evaluate to zero do not count)
    rows = np.asarray(sp.row(), dtype=np.int64)[nz]
    cols_of = _entry_columns(sp)[nz]
    allowed = np.zeros(n_cols, dtype=bool)
    for level in unique(prio):
        allowed |= prio == level
        cols = np.flatnonzero(allowed)
        keep = allowed[cols_of]
        at = np.cumsum(allowed) - 1  # (the position of an allowed column in cols)
        # (the equations as the pattern's columns: the candidate matched to each)
        m = transversal(pattern(len(cols), n, at[cols_of[keep]], rows[keep]))
        if (m < 0).any():
            continue
        picks = cols[m].tolist()
        if _nonsingular(H[:, picks]):
            return picks
    return None


def _nonsingular(A: cs.DM) -> bool:
    """Whether a square sparse matrix is numerically nonsingular: the diagonal of the R of
    its sparse QR (Householder, columns in approximate minimum degree order) has no entry
    below 1e-10 of its largest. (The threshold scipy's LU test had on U's diagonal, well
    above rounding; both diagonals scale with the columns alike, and the tests find the
    same verdicts away from the threshold.)"""
    _, R, _, _, _ = cs.qr_sparse(A, True)
    sp = R.sparsity()
    row = np.asarray(sp.row(), dtype=np.int64)
    col = _entry_columns(sp)
    on = row == col
    d = np.zeros(A.size2())  # (a diagonal entry R does not store is a zero)
    d[col[on]] = np.abs(np.asarray(R.nonzeros(), dtype=float)[on])
    return bool(len(d) and d.min() > 1e-10 * max(d.max(), 1e-300))


def _entry_columns(sp: cs.Sparsity) -> np.ndarray:
    """The column of every stored entry of a pattern (in storage order)."""
    colind: np.ndarray = np.asarray(sp.colind(), dtype=np.int64)
    return np.repeat(np.arange(sp.size2(), dtype=np.int64), np.diff(colind))


def _pivot(H: np.ndarray, weights: np.ndarray, n_pick: int) -> list[int]:
    import scipy.linalg as sla  # (here: a model without dummy derivatives needs no scipy)

    Hs = H * weights[None, :]
    _, _, piv = sla.qr(Hs, pivoting=True, mode="economic")
    return [int(k) for k in piv[:n_pick]]


class _Lazy:
    """``(values, p_values)``, each made on the first call where given as a function."""

    def __init__(self, values: np.ndarray | Callable[[], np.ndarray],
                 p_values: np.ndarray | Callable[[], np.ndarray]) -> None:
        self._given = (values, p_values)
        self._made: tuple[np.ndarray, np.ndarray] | None = None

    def __call__(self) -> tuple[np.ndarray, np.ndarray]:
        if self._made is None:
            v, p = self._given
            self._made = (v() if callable(v) else v, p() if callable(p) else p)
        return self._made


def _components(n: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Connected-component labels of an undirected graph of the edges ``(a[k], b[k])``,
    numbered in the order of each component's smallest vertex (as
    ``scipy.sparse.csgraph.connected_components``): union-find in Python up to
    ``ARRAY_GRAPH_MIN`` vertices, :func:`acausal.sparsegraph.components` above."""
    if n >= matching.ARRAY_GRAPH_MIN:
        return components(n, a, b)[1]
    parent = list(range(n))

    def find(a: int) -> int:
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    for u, v in zip(a.tolist(), b.tolist(), strict=True):
        ru, rv = find(u), find(v)
        if ru != rv:
            parent[max(ru, rv)] = min(ru, rv)
    label = np.empty(n, dtype=int)
    number: dict[int, int] = {}
    for v in range(n):
        label[v] = number.setdefault(find(v), len(number))
    return label


def select_states(
    sys: EquationSystem,
    values: np.ndarray | Callable[[], np.ndarray],
    p_values: np.ndarray | Callable[[], np.ndarray],
    t0: float = 0.0,
    rng_seed: int = 0,
) -> StateSelection:
    """Mattsson–Söderlind selection at the point ``values`` (one value per variable).

    ``values`` and ``p_values`` may be given as functions that make them, called only
    where a Jacobian is evaluated (those of constants, the common case, are not: the
    start values of every unknown of a large model cost a read of each)."""
    point_at = _Lazy(values, p_values)
    allv = sys.symbols()
    pv = sys.parameter_symbols()
    dummies: set[int] = set()
    blocks: list[DummyBlock] = []
    # level 1: the most differentiated equations that are derivatives of other equations
    eq_der, eq_int, var_der, var_int = map(int_array, (sys.eq_der, sys.eq_int,
                                                       sys.var_der, sys.var_int))
    G = np.flatnonzero((eq_der < 0) & (eq_int >= 0))
    Z = np.flatnonzero((var_der < 0) & (var_int >= 0))
    level = 1
    rng = None  # created when first needed (importing numpy.random costs ~10 ms)
    variables = sys.variables
    while len(G):
        # independent blocks of the G x Z incidence
        inc = sys.incidence_matrix(rows=G, cols=Z)
        label = _components(len(G) + len(Z), inc.rows_of_entries(), len(G) + inc.indices)
        chosen_all: list[int] = []
        # the equations and candidates of each component, in their order in G and Z
        lab_g, lab_z = label[: len(G)], label[len(G):]
        by_g = np.argsort(lab_g, kind="stable")
        by_z = np.argsort(lab_z, kind="stable")
        labs = unique(lab_g)
        cut_g = np.searchsorted(lab_g[by_g], labs, side="right").tolist()
        at_z = np.searchsorted(lab_z[by_z], labs, side="left").tolist()
        cut_z = np.searchsorted(lab_z[by_z], labs, side="right").tolist()
        # (the blocks keep these: the build's shared integer objects, EquationSystem.ints)
        G_sorted = sys.as_ints(G[by_g])
        Z_sorted = sys.as_ints(Z[by_z])
        for q in range(len(labs)):
            eqs = G_sorted[cut_g[q - 1] if q else 0: cut_g[q]]
            cands = Z_sorted[at_z[q]: cut_z[q]]
            if len(cands) < len(eqs):
                raise dependent_constraints_error(sys, eqs, cands)
            res = sys.residuals()[eqs]  # (stacked once, kept for the later passes)
            zs = allv[cands]
            J = cs.jacobian(res, zs)
            # (a Jacobian of constants, the common case, is its own value: no function of
            # every unknown to form and call)
            value: Any = cs.DM(J) if J.is_constant() else None
            constant = value is not None or not (cs.depends_on(J, allv)
                                                 or cs.depends_on(J, sys.t))
            f = None if value is not None else cs.Function("dummy_jac", [allv, pv, sys.t], [J])
            prio = np.array(list(map(attrgetter("_spec.state_priority"), map(
                variables.__getitem__, var_int[cands].tolist()))))
            if len(cands) <= _DENSE_LIMIT:
                H = np.asarray(value if f is None else f(*point_at(), t0))
                weights = 10.0 ** (-3.0 * prio)
                if np.linalg.matrix_rank(H) < len(eqs):
                    # degenerate at the start values (e.g. all zero): use a generic point
                    # (drawn for a constant Jacobian too: the later blocks' points stay)
                    if rng is None:
                        rng = np.random.default_rng(rng_seed)
                    start = point_at()[0]
                    point = start + rng.standard_normal(start.shape)
                    if f is not None:
                        H = np.asarray(f(point, point_at()[1], t0))
                picks = _pivot(H, weights, len(eqs))
            else:
                Hs = cs.DM(value if f is None else f(*point_at(), t0))
                sparse_picks = _sparse_pick(Hs, prio, len(eqs))
                if sparse_picks is None and len(cands) <= _DENSE_FALLBACK:
                    # the structural matchings were numerically singular here (a symmetric
                    # configuration): pivot on the values instead
                    Hd = np.asarray(Hs.full())
                    sparse_picks = _pivot(Hd, 10.0 ** (-3.0 * prio), len(eqs))
                    if np.linalg.matrix_rank(Hd[:, sparse_picks]) < len(eqs):
                        sparse_picks = None
                if sparse_picks is None:
                    raise dependent_constraints_error(sys, eqs, cands)
                picks = sparse_picks
            chosen = [cands[k] for k in picks]
            blocks.append(DummyBlock(level, eqs, cands, chosen, None if constant else f,
                                     constant, 10.0 ** (-3.0 * prio)))
            chosen_all.extend(chosen)
        dummies.update(chosen_all)
        G = eq_int[G]
        G = G[eq_int[G] >= 0]
        Z = var_int[int_array(chosen_all)]
        Z = Z[var_int[Z] >= 0]
        level += 1
    is_dummy = np.zeros(sys.n_vars, dtype=bool)
    is_dummy[int_array(list(dummies))] = True
    states = sys.as_ints(np.flatnonzero((var_der >= 0) & ~is_dummy[np.maximum(var_der, 0)]))
    return StateSelection(states, dummies, blocks)


def state_selection_pass(state: CompileState) -> CompileState:
    """Pass: choose states and dummy derivatives at the start values."""
    sys = need(state.system, "the index-reduced system (index reduction pass)")
    # (made only if a Jacobian is evaluated: see select_states)
    def start() -> np.ndarray:
        return np.array(list(map(attrgetter("start"), sys.variables)), dtype=float)

    def pvals() -> np.ndarray:
        return np.array(list(map(attrgetter("value"), sys.parameters)), dtype=float)

    return state.update(selection=select_states(sys, start, pvals))
