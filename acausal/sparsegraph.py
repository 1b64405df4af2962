"""Graph routines of large systems without scipy.

``scipy.sparse.csgraph`` costs a fresh process 0.2-0.3 s to import (most of it numpy
submodules that scipy's array API layer pulls in), more than these routines take on a
100 000-vertex graph: connected components on numpy arrays, and sparsity patterns for
CasADi's C++ ports of CSparse (strongly connected components, maximum transversal),
which every build has loaded already: a maximum matching from the Dulmage-Mendelsohn
permutation (:func:`transversal`) and the strongly connected components in the order of
Tarjan's algorithm (:func:`tarjan_components`). Small systems keep the Python loops of
their passes (no array overhead); these serve from ``ARRAY_GRAPH_MIN`` vertices on.
"""

from __future__ import annotations

import casadi as cs
import numpy as np

__all__ = ["pattern", "components", "transversal", "tarjan_components"]


def pattern(n_rows: int, n_cols: int, rows: np.ndarray, cols: np.ndarray) -> cs.Sparsity:
    """The sparsity pattern with an entry at each ``(rows[k], cols[k])`` (duplicates
    allowed, any order)."""
    r = np.asarray(rows, dtype=np.int64)
    c = np.asarray(cols, dtype=np.int64)
    key = c * max(n_rows, 1) + r
    key.sort()
    if len(key) > 1:
        key = key[np.concatenate(([True], key[1:] != key[:-1]))]
    colind = np.zeros(n_cols + 1, dtype=np.int64)
    np.cumsum(np.bincount(key // max(n_rows, 1), minlength=n_cols), out=colind[1:])
    # (lists: SWIG converts a numpy array element by element, 30 times slower)
    return cs.Sparsity(n_rows, n_cols, colind.tolist(), (key % max(n_rows, 1)).tolist())


def components(n: int, a: np.ndarray, b: np.ndarray) -> tuple[int, np.ndarray]:
    """``(count, label)``: the connected components of the undirected graph on ``n``
    vertices with the edges ``(a[k], b[k])``, numbered in the order of each component's
    smallest vertex (as ``scipy.sparse.csgraph.connected_components`` numbers them).

    Shiloach-Vishkin on arrays: every vertex points at a vertex of its component, each
    round hooks the pointers of both ends of every edge to the smaller of the two ends'
    pointers and then halves the paths until every vertex points at a root. Pointers only
    decrease, so a component ends pointing at its smallest vertex. A few rounds suffice
    (12 for a path of 60 000 vertices in random order, 2 in order): a few milliseconds,
    like scipy's search.
    """
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    f = np.arange(n, dtype=np.int64)
    while True:
        fa, fb = f[a], f[b]
        g = f.copy()
        np.minimum.at(g, fa, fb)
        np.minimum.at(g, fb, fa)
        np.minimum.at(g, a, fb)
        np.minimum.at(g, b, fa)
        while True:
            gg = g[g]
            if np.array_equal(gg, g):
                break
            g = gg
        if np.array_equal(g, f):  # (then both ends of every edge point at the same root)
            break
        f = g
    root = f == np.arange(n)
    rank = np.cumsum(root) - 1
    return int(root.sum()), rank[f]


def transversal(sp: cs.Sparsity) -> np.ndarray:
    """A maximum matching of the pattern's columns to its rows: the row matched to each
    column, ``-1`` where none (any shape, structurally singular or not).

    From CasADi's port of CSparse's ``cs_dmperm`` (``Sparsity.btf``, a maximum transversal
    by ``cs_maxtrans``'s augmenting paths, then the coarse and fine decompositions). Its
    coarse blocks ``crb``, ``ccb`` (laid out as CSparse's for the transposed pattern)
    put the unmatched rows first (``rowperm[:crb[1]]``) and the unmatched columns last
    (``colperm[ccb[3]:]``); in between, the ``ccb[3]`` (the structural rank) matched rows
    and columns come in pairs: ``rowperm[crb[1] + k]`` with ``colperm[k]``. (The tests
    check the size against scipy's Hopcroft-Karp.)"""
    _, rowperm, colperm, _, _, crb, ccb = sp.btf()
    rank = ccb[3]
    row_of_col = np.full(sp.size2(), -1, dtype=np.int64)
    row_of_col[np.asarray(colperm[:rank], dtype=np.int64)] = np.asarray(
        rowperm[crb[1]:crb[1] + rank], dtype=np.int64)
    return row_of_col


def tarjan_components(n: int, ptr: np.ndarray,
                      dep: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(order, sizes)``: the strongly connected components of the digraph where node
    ``j`` has the edges to ``dep[ptr[j]:ptr[j + 1]]``, in the order Tarjan's algorithm
    completes them when it visits each node's neighbours in ascending order (every
    component after those it reaches), each component's nodes ascending.

    CasADi's port of CSparse's ``cs_scc`` (``Sparsity.scc``, column ``j`` holding node
    ``j``'s neighbours) is Kosaraju's algorithm: a depth-first search from the nodes in
    order, neighbours ascending (Tarjan's search), then a search of the reversed graph
    from the nodes in decreasing finishing time, which takes the components in decreasing
    order of their latest finishing node; it stores them from the end. A component's
    latest finishing node is its first visited one, where Tarjan completes it: the
    stored order is his (``tests/structure/test_passes.py`` checks it)."""
    ptr = np.asarray(ptr, dtype=np.int64)
    _, perm, offset = pattern(n, n, np.asarray(dep, dtype=np.int64),
                              np.repeat(np.arange(n), np.diff(ptr))).scc()
    return np.asarray(perm, dtype=np.int64), np.diff(np.asarray(offset, dtype=np.int64))
