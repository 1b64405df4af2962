"""Maximum bipartite matching of equations and unknowns, and Dulmage–Mendelsohn diagnostics.

The incidence is a sparse 0/1 matrix (equations x unknowns: an :class:`~acausal.csr.CSR`, a
scipy sparse matrix or a dense array). Systems with up to :data:`ARRAY_GRAPH_MIN`
equations plus unknowns are matched here by augmenting paths (Kuhn's algorithm after a
greedy start), in pure Python: a small model then never imports scipy, whose first import
costs more than building and simulating it. Larger systems use the maximum transversal of
CasADi's Dulmage–Mendelsohn permutation (:func:`acausal.sparsegraph.transversal`, C++,
loaded by every build), and very large ones (from :data:`SCIPY_GRAPH_MIN`) scipy's
Hopcroft–Karp (``scipy.sparse.csgraph.maximum_bipartite_matching``), ten times faster,
which there pays for its import. When the matching is not perfect, the
over-determined part (equations reachable by alternating paths from unmatched equations) and
the under-determined part (unknowns reachable from unmatched unknowns) are reported with the
equations, their components and the variables.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from typing import Any

import casadi as cs
import numpy as np

from ..csr import as_csr
from ..records import record
from ..sparsegraph import transversal

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
#: scipy's: CasADi's take ten times as long (a 10 000-mass chain: 37 and 45 ms against 3
#: and 2.5 for the two matchings, 26 ms against 2.6 for the components; 100 000 masses:
#: 0.42, 0.48 and 0.21 s against 0.03, 0.03 and 0.02), which passes scipy's first import
#: (0.25 s) at about this size
SCIPY_GRAPH_MIN = 300_000


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
        # (the CSR's rows are the columns of the transposed pattern, sorted and unique)
        var_of_eq = transversal(cs.Sparsity(n_var, n_eq, m.indptr.tolist(),
                                            m.indices.tolist())).astype(int)
    else:
        from scipy.sparse.csgraph import maximum_bipartite_matching

        var_of_eq = np.asarray(maximum_bipartite_matching(m.to_scipy(), perm_type="column"),
                               dtype=int)
    eq_of_var = np.full(n_var, -1, dtype=int)
    matched = var_of_eq >= 0
    eq_of_var[var_of_eq[matched]] = np.flatnonzero(matched)
    return var_of_eq, eq_of_var


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
