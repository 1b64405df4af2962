"""The scipy-free graph routines of large systems (``acausal.sparsegraph``) against
scipy's, which serve here as the independent reference. (Its strongly connected
components are checked against the textbook Tarjan search in
``tests/structure/test_passes.py``.)"""

from __future__ import annotations

import casadi as cs
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components, maximum_bipartite_matching

from acausal.sparsegraph import components, pattern, transversal


def _sprand(rng: np.random.Generator, r: int, c: int, density: float) -> sp.csr_matrix:
    """A random sparse matrix, values uniform in [0, 1), drawn by numpy (scipy's
    ``sparse.random`` takes ``rng=`` only from scipy 1.15; the project needs 1.11)."""
    return sp.csr_matrix(np.where(rng.random((r, c)) < density, rng.random((r, c)), 0.0))


def _graphs() -> list[tuple[str, int, np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(7)
    n = 3000
    perm = rng.permutation(n)
    out = [
        ("no vertex", 0, np.zeros(0, int), np.zeros(0, int)),
        ("isolated vertices", 5, np.zeros(0, int), np.zeros(0, int)),
        ("self-loops and parallel edges", 4, np.array([1, 1, 2, 2, 3]),
         np.array([1, 2, 1, 2, 3])),
        ("path in order", n, np.arange(n - 1), np.arange(1, n)),
        ("path reversed", n, np.arange(1, n)[::-1].copy(), np.arange(n - 1)[::-1].copy()),
        # (the slowest case for hooking: neighbours far apart in numbering)
        ("path in random order", n, perm[:-1], perm[1:]),
        ("star on the last vertex", n, np.full(n - 1, n - 1), np.arange(n - 1)),
    ]
    for k, (nv, m) in enumerate([(10, 4), (100, 60), (2000, 1000), (2000, 1990),
                                  (5000, 20000)]):
        out.append((f"random {k}", nv, rng.integers(0, nv, m), rng.integers(0, nv, m)))
    return out


@pytest.mark.parametrize("name, n, a, b", _graphs(), ids=[g[0] for g in _graphs()])
def test_components_are_scipys(name, n, a, b):
    count, label = components(n, a, b)
    if n == 0:
        assert count == 0 and len(label) == 0
        return
    ref_count, ref = connected_components(
        sp.csr_matrix((np.ones(len(a)), (a, b)), shape=(n, n)), directed=False)
    assert count == ref_count
    # the same numbering: components in the order of their smallest vertex
    np.testing.assert_array_equal(label, ref)


def _bipartite() -> list[tuple[str, sp.csr_matrix]]:
    """Rectangular and structurally singular systems (rows x columns, 0/1)."""
    rng = np.random.default_rng(11)
    out = [("empty", sp.csr_matrix((0, 0))), ("no entry", sp.csr_matrix((3, 4))),
           ("one column", sp.csr_matrix(np.ones((4, 1)))),
           ("one row", sp.csr_matrix(np.ones((1, 4)))),
           ("over- and under-determined", sp.csr_matrix(np.array([[1, 0, 0], [1, 0, 0],
                                                                   [0, 1, 1]])))]
    # (a long augmenting path: greedy would take column i + 1 for row i)
    n = 2000
    shifted = (sp.eye(n, k=1) + sp.eye(n)).tolil()
    shifted[n - 1, :] = 0
    shifted[n - 1, 0] = 1
    out.append(("long augmenting path", sp.csr_matrix(shifted)))
    for k in range(400):
        r, c = (int(x) for x in rng.integers(1, 40, 2))
        density = float(rng.uniform(0.0, 0.3))
        out.append((f"random {k}", _sprand(rng, r, c, density)))
    for k, (r, c, per) in enumerate([(3000, 3000, 2), (3000, 2500, 3), (2500, 3000, 1)]):
        rows = np.repeat(np.arange(r), per)
        out.append((f"large {k}", sp.csr_matrix((np.ones(r * per),
                                                 (rows, rng.integers(0, c, r * per))),
                                                shape=(r, c))))
    return out


def test_transversal_is_maximum_as_scipy_hopcroft_karp():
    """A maximum matching (the same size as scipy's Hopcroft-Karp; the matching itself
    need not be the same: many are maximum) whose pairs are entries, each row and column
    at most once, on rectangular and structurally singular systems."""
    for name, a in _bipartite():
        a = sp.csr_matrix(a)
        a.sum_duplicates()
        a.data[:] = 1.0
        n_rows, n_cols = a.shape
        size = int((maximum_bipartite_matching(a, perm_type="column") >= 0).sum()) \
            if a.nnz else 0
        # the rows as the columns of a pattern: the row matched to each of those columns
        col_of_row = transversal(cs.Sparsity(n_cols, n_rows, a.indptr.tolist(),
                                             a.indices.tolist()))
        assert len(col_of_row) == n_rows, name
        matched = np.flatnonzero(col_of_row >= 0)
        assert len(matched) == size, name
        assert all(a[i, col_of_row[i]] != 0 for i in matched), name
        assert len(set(col_of_row[matched].tolist())) == len(matched), name
        # the same from triplets (pattern) in any order
        r, c = a.nonzero()
        perm = np.random.default_rng(0).permutation(len(r))
        again = transversal(pattern(n_cols, n_rows, c[perm], r[perm]))
        assert (again >= 0).sum() == size, name
