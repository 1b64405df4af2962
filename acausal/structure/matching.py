"""Maximum bipartite matching of equations and unknowns, and Dulmage–Mendelsohn diagnostics.

The incidence is a sparse 0/1 matrix (equations x unknowns). Hopcroft–Karp comes from
``scipy.sparse.csgraph.maximum_bipartite_matching``. When the matching is not perfect, the
over-determined part (equations reachable by alternating paths from unmatched equations) and
the under-determined part (unknowns reachable from unmatched unknowns) are reported with the
equations, their components and the variables.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import maximum_bipartite_matching

__all__ = ["match", "DMParts", "dulmage_mendelsohn"]


def match(inc: sp.csr_matrix) -> tuple[np.ndarray, np.ndarray]:
    """Maximum matching: ``(var_of_eq, eq_of_var)``, ``-1`` where unmatched."""
    inc = sp.csr_matrix(inc)
    n_eq, n_var = inc.shape
    if n_eq == 0 or n_var == 0:
        return np.full(n_eq, -1), np.full(n_var, -1)
    var_of_eq = maximum_bipartite_matching(inc, perm_type="column")
    eq_of_var = np.full(n_var, -1, dtype=int)
    for i, j in enumerate(var_of_eq):
        if j >= 0:
            eq_of_var[j] = i
    return np.asarray(var_of_eq, dtype=int), eq_of_var


@dataclass
class DMParts:
    """Over- and under-determined parts of a structurally singular system."""

    over_equations: list[int]
    over_variables: list[int]
    under_equations: list[int]
    under_variables: list[int]


def dulmage_mendelsohn(
    inc: sp.csr_matrix, var_of_eq: Sequence[int] | np.ndarray,
    eq_of_var: Sequence[int] | np.ndarray,
) -> DMParts:
    """Coarse Dulmage–Mendelsohn decomposition from a maximum matching."""
    inc = sp.csr_matrix(inc)
    inc_t = sp.csr_matrix(inc.T)
    n_eq, n_var = inc.shape
    # over-determined: from unmatched equations, eq -> var (any) -> matched eq
    over_e = {i for i in range(n_eq) if var_of_eq[i] < 0}
    over_v: set[int] = set()
    q = deque(over_e)
    while q:
        i = q.popleft()
        for j in inc.indices[inc.indptr[i] : inc.indptr[i + 1]]:
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
        for i in inc_t.indices[inc_t.indptr[j] : inc_t.indptr[j + 1]]:
            if i in under_e:
                continue
            under_e.add(int(i))
            k = var_of_eq[i]
            if k >= 0 and k not in under_v:
                under_v.add(int(k))
                q.append(int(k))
    return DMParts(sorted(over_e), sorted(over_v), sorted(under_e), sorted(under_v))
