"""The scipy-free graph routines of large systems (``acausal.sparsegraph``) against
scipy's, which serve here as the independent reference."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from acausal.sparsegraph import components


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
