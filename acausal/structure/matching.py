"""Maximum bipartite matching of equations and unknowns, and Dulmage–Mendelsohn diagnostics.

The incidence is a sparse 0/1 matrix (equations x unknowns: an :class:`~acausal.csr.CSR`, a
scipy sparse matrix or a dense array). Systems with up to :data:`ARRAY_GRAPH_MIN`
equations plus unknowns are matched here by augmenting paths (Kuhn's algorithm after a
greedy start), in pure Python: a small model then never imports scipy, whose first import
costs more than building and simulating it. Larger systems are matched by Karp and
Sipser's degree-one rule on arrays, and what it leaves by the maximum transversal of
CasADi's Dulmage–Mendelsohn permutation (:func:`acausal.sparsegraph.transversal`, C++,
loaded by every build), and very large ones (from :data:`SCIPY_GRAPH_MIN`) scipy's
Hopcroft–Karp (``scipy.sparse.csgraph.maximum_bipartite_matching``), several times faster,
which there pays for its import. When the matching is not perfect, the
over-determined part (equations reachable by alternating paths from unmatched equations) and
the under-determined part (unknowns reachable from unmatched unknowns) are reported with the
equations, their components and the variables.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..csr import CSR, as_csr, unique
from ..records import record
from ..sparsegraph import pattern, transversal

__all__ = ["match", "DMParts", "dulmage_mendelsohn", "ARRAY_GRAPH_MIN", "SCIPY_GRAPH_MIN"]

#: vertices (equations + unknowns) from which the graph routines are compiled ones
#: (:mod:`acausal.sparsegraph`: this matching, the BLT's strongly connected components,
#: the connected components of the dummy-derivative blocks). Below it they run in
#: Python; the matching costs O(n * nnz) in the worst case: just below this size about
#: 0.3 ms on a chain and 4 ms on a random sparse system of four entries per row (the
#: array routines have a fixed cost of their own; scipy's, used before, 0.02 and 0.1 ms,
#: but its first import costs 0.3 to 0.6 s)
ARRAY_GRAPH_MIN = 1000
#: vertices from which this matching and the BLT's strongly connected components are
#: scipy's, several times faster: a chain of 10 000 masses, 11 and 13 ms for its two
#: matchings (scipy's 3.6 and 3.9) and 26 ms for the components (2.6); 100 000 masses,
#: 0.11, 0.16 and 0.21 s (0.02, 0.03 and 0.02). The difference passes scipy's first
#: import (0.25 s) between these sizes
SCIPY_GRAPH_MIN = 300_000
#: rounds of the degree-one rule before CasADi's transversal takes the rest (each a few
#: array passes over the incidences; most models finish in a handful)
_PEEL_ROUNDS = 32


def match(inc: Any) -> tuple[np.ndarray, np.ndarray]:
    """Maximum matching: ``(var_of_eq, eq_of_var)``, ``-1`` where unmatched."""
    m = as_csr(inc)
    n_eq, n_var = m.shape
    if n_eq == 0 or n_var == 0:
        return np.full(n_eq, -1), np.full(n_var, -1)
    if n_eq + n_var < ARRAY_GRAPH_MIN:
        var_of_eq = np.array(_augmenting_paths(m.indptr.tolist(), m.indices.tolist(), n_eq,
                                               n_var), dtype=int)
    elif n_eq + n_var < SCIPY_GRAPH_MIN:
        var_of_eq = _peeled(m).astype(int)
    else:
        from scipy.sparse.csgraph import maximum_bipartite_matching

        var_of_eq = np.asarray(maximum_bipartite_matching(m.to_scipy(), perm_type="column"),
                               dtype=int)
    eq_of_var = np.full(n_var, -1, dtype=int)
    matched = var_of_eq >= 0
    eq_of_var[var_of_eq[matched]] = np.flatnonzero(matched)
    return var_of_eq, eq_of_var


def _peeled(m: CSR) -> np.ndarray:
    """A maximum matching (``var_of_eq``) of a large system: Karp and Sipser's degree-one
    rule on arrays, then CasADi's maximum transversal of what is left.

    An equation or unknown with one incidence left is matched to it: some maximum matching
    has that pair, so the pairs taken plus a maximum matching of the rest are one. Each
    round takes every unknown of degree one (one per equation), or if there is none every
    equation of degree one (one per unknown). Most of a model's structure goes this way (a
    chain of 10 000 masses: all of it, in 6 rounds, 10 ms against 37 and 45 ms for
    CasADi's transversal of its two systems, most of it converting to and from Python
    lists); a core where every vertex has two incidences or more (algebraic loops), and
    whatever is left after :data:`_PEEL_ROUNDS` rounds, goes to
    :func:`acausal.sparsegraph.transversal`.
    """
    n_eq, n_var = m.shape
    rows, cols = m.rows_of_entries(), m.indices
    var_of_eq = np.full(n_eq, -1, dtype=np.int64)
    eq_of_var = np.full(n_var, -1, dtype=np.int64)
    live = np.ones(len(cols), dtype=bool)
    for _ in range(_PEEL_ROUNDS):
        r, c = rows[live], cols[live]
        if not len(r):
            break
        pc, pr = _degree_one(c, r, n_var)
        if not len(pc):
            pr, pc = _degree_one(r, c, n_eq)
            if not len(pr):
                break
        var_of_eq[pr], eq_of_var[pc] = pc, pr
        live &= (var_of_eq[rows] < 0) & (eq_of_var[cols] < 0)
    if live.any():
        r, c = rows[live], cols[live]
        eqs, unks = unique(r), unique(c)
        # (the pattern's columns are the equations: the unknown matched to each)
        sub = transversal(pattern(len(unks), len(eqs), np.searchsorted(unks, c),
                                  np.searchsorted(eqs, r)))
        ok = sub >= 0
        var_of_eq[eqs[ok]] = unks[sub[ok]]
    return var_of_eq


def _degree_one(a: np.ndarray, b: np.ndarray, n_a: int) -> tuple[np.ndarray, np.ndarray]:
    """Of the incidences ``(a[k], b[k])``, those whose ``a`` has no other, one for each
    ``b`` (its smallest ``a``): ``(a's, b's)``."""
    one = np.bincount(a, minlength=n_a)[a] == 1
    pa, pb = a[one], b[one]
    by = np.lexsort((pa, pb))
    pa, pb = pa[by], pb[by]
    first = np.ones(len(pb), dtype=bool)
    first[1:] = pb[1:] != pb[:-1]
    return pa[first], pb[first]


def _augmenting_paths(indptr: list[int], indices: list[int], n_eq: int,
                      n_var: int) -> list[int]:
    """Kuhn's maximum matching: a greedy start, then one depth-first search for an
    augmenting path from each unmatched equation (iterative, so long chains do not reach
    the recursion limit)."""
    adj = [indices[indptr[i]:indptr[i + 1]] for i in range(n_eq)]
    var_of_eq = [-1] * n_eq
    eq_of_var = [-1] * n_var
    for i, row in enumerate(adj):
        for j in row:
            if eq_of_var[j] < 0:
                eq_of_var[j], var_of_eq[i] = i, j
                break
    for root in range(n_eq):
        if var_of_eq[root] >= 0:
            continue
        seen = bytearray(n_var)
        stack, pos = [root], [0]  # the equations on the path, the next edge of each
        via: list[int] = []  # the variables between them
        free = -1
        while stack:
            e, k = stack[-1], pos[-1]
            row = adj[e]
            if k == len(row):
                stack.pop()
                pos.pop()
                if via:
                    via.pop()
                continue
            pos[-1] = k + 1
            j = row[k]
            if seen[j]:
                continue
            seen[j] = 1
            if eq_of_var[j] < 0:
                free = j
                break
            via.append(j)
            stack.append(eq_of_var[j])
            pos.append(0)
        if free >= 0:
            for e, j in zip(stack, [*via, free], strict=True):
                var_of_eq[e], eq_of_var[j] = j, e
    return var_of_eq


@record
class DMParts:
    """Over- and under-determined parts of a structurally singular system."""

    over_equations: list[int]
    over_variables: list[int]
    under_equations: list[int]
    under_variables: list[int]


def dulmage_mendelsohn(
    inc: Any, var_of_eq: Sequence[int] | np.ndarray,
    eq_of_var: Sequence[int] | np.ndarray,
) -> DMParts:
    """Coarse Dulmage–Mendelsohn decomposition from a maximum matching."""
    inc = as_csr(inc)
    inc_t = inc.T
    n_eq, n_var = inc.shape
    # over-determined: from unmatched equations, eq -> var (any) -> matched eq
    over_e = {i for i in range(n_eq) if var_of_eq[i] < 0}
    over_v: set[int] = set()
    q = deque(over_e)
    while q:
        i = q.popleft()
        for j in inc.row(i):
            if j in over_v:
                continue
            over_v.add(int(j))
            k = eq_of_var[j]
            if k >= 0 and k not in over_e:
                over_e.add(int(k))
                q.append(int(k))
    # under-determined: from unmatched variables, var -> eq (any) -> matched var
    under_v = {j for j in range(n_var) if eq_of_var[j] < 0}
    under_e: set[int] = set()
    q = deque(under_v)
    while q:
        j = q.popleft()
        for i in inc_t.row(j):
            if i in under_e:
                continue
            under_e.add(int(i))
            k = var_of_eq[i]
            if k >= 0 and k not in under_v:
                under_v.add(int(k))
                q.append(int(k))
    return DMParts(sorted(over_e), sorted(over_v), sorted(under_e), sorted(under_v))
