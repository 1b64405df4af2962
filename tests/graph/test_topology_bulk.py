"""The spanning forest of large graphs without scipy (Boruvka, a search a level at a
time, Euler tours, ruling sets): the same forest, parents, signs, depths and orders as
scipy's routines (the code that used them, kept here as the reference) and as the edge by
edge construction of small graphs, on random graphs and on deep ones (paths, stars, random
trees)."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.sparse.csgraph import breadth_first_order, minimum_spanning_tree

import acausal.sparsegraph as sparsegraph
import acausal.topology as topology
from acausal.symbols import as_shared
from acausal.topology import Topology

ARRAYS = ("in_tree", "parent", "parent_edge", "parent_sign", "depth", "root_of")
LISTS = ("tree", "cotree", "order", "floating", "forced_loop")


def scipy_forest(n, ends, prio, in_tree, skip):
    """The forest by scipy's minimum_spanning_tree (weights 1, 2, ... in Kruskal's order;
    of parallel edges the first, no self-loops). The order is the library's; the edge by
    edge loop of small graphs checks it in the same tests."""
    seq = topology._kruskal_order(prio, in_tree, skip)
    a, b = ends[seq, 0], ends[seq, 1]
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    key = lo * n + hi
    by = np.argsort(key, kind="stable")
    first = by[np.concatenate([[True], key[by][1:] != key[by][:-1]])] if len(by) else by
    first = first[lo[first] != hi[first]]
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(lo[first], minlength=n), out=indptr[1:])
    g = sp.csr_matrix(((first + 1).astype(float), hi[first], indptr), shape=(n, n))
    taken = minimum_spanning_tree(g).tocoo().data
    in_tree[seq[np.rint(taken).astype(np.int64) - 1]] = True


def scipy_root_forest(self, tree):
    """Parents, depths and order by scipy's breadth_first_order from an extra vertex joined
    to the roots (each component's smallest datum, else its smallest vertex)."""
    n, ends = self.n_vertices, self._ends
    ta, tb = ends[tree, 0], ends[tree, 1]
    # (the components and their roots as the library finds them; the edge by edge loop of
    # small graphs checks them in the same tests)
    label, comp_label, comp_root, _ = self._component_roots(ta, tb)
    k = len(comp_root)
    src = np.concatenate([ta, tb, np.full(k, n, dtype=np.int64)])
    dst = np.concatenate([tb, ta, comp_root])
    key = np.concatenate([tree, tree, np.arange(k, dtype=np.int64)])
    by = np.lexsort((key, src))
    indptr = np.zeros(n + 2, dtype=np.int64)
    np.cumsum(np.bincount(src, minlength=n + 1), out=indptr[1:])
    adj = sp.csr_matrix((np.ones(len(src)), dst[by], indptr), shape=(n + 1, n + 1))
    visit, pred = breadth_first_order(adj, n, directed=True, return_predecessors=True)
    pred = pred[:n].astype(np.int64)
    pred[(pred < 0) | (pred == n)] = -1
    parent_edge = np.full(n, -1, dtype=np.int64)
    parent_sign = np.zeros(n, dtype=np.int64)
    down = pred[tb] == ta
    parent_edge[tb[down]], parent_sign[tb[down]] = tree[down], 1
    parent_edge[ta[~down]], parent_sign[ta[~down]] = tree[~down], -1
    has = pred >= 0
    depth = has.astype(np.int64)
    up = np.where(has, pred, np.arange(n))
    while not np.array_equal(up[up], up):
        depth += depth[up]
        up = up[up]
    visited = np.zeros(n, dtype=bool)
    visit = visit[1:].astype(np.int64)
    visited[visit] = True
    comp_rank = np.zeros(n, dtype=np.int64)
    comp_rank[comp_label] = np.arange(k)
    visit = visit[np.argsort(comp_rank[label[visit]], kind="stable")]
    self.order = as_shared(self.__dict__["_ints"], visit)
    self.parent, self.parent_edge, self.parent_sign = pred, parent_edge, parent_sign
    self.depth, self.root_of = depth, np.where(visited, up, -1)


def made_every_way(monkeypatch, n, edges, roots, prio=None, forced=(), ends=None):
    """The topology by the edge by edge loops, by scipy, and by the array paths: the
    search a level at a time, the tours with and without ruling sets, and as chosen."""
    def make():
        return Topology(n, edges, set(roots), priorities=prio, forced=list(forced), ends=ends)

    made = {}
    with monkeypatch.context() as mp:
        mp.setattr(topology, "ARRAY_GRAPH_MIN", 10**9)
        made["loops"] = make()
    with monkeypatch.context() as mp:
        mp.setattr(topology, "ARRAY_GRAPH_MIN", 0)
        mp.setattr(topology, "_forest_in_bulk", scipy_forest)
        mp.setattr(Topology, "_root_forest_in_bulk", scipy_root_forest)
        made["scipy"] = make()
    for name, levels, ruled in (("levels", 10**9, None), ("tours", 0, 10**9),
                                ("tours, ruling sets", 0, 0), ("default", None, None)):
        with monkeypatch.context() as mp:
            mp.setattr(topology, "ARRAY_GRAPH_MIN", 0)
            if levels is not None:
                mp.setattr(sparsegraph, "_LEVELS_MAX", levels)
                mp.setattr(sparsegraph, "_RULED_MIN", ruled)
            made[name] = make()
    return made


def assert_same(made):
    ref = made["scipy"]
    for way, topo in made.items():
        for name in LISTS:
            assert getattr(topo, name) == getattr(ref, name), (way, name)
        for name in ARRAYS:
            x, y = getattr(topo, name), getattr(ref, name)
            assert x.dtype == y.dtype and np.array_equal(x, y), (way, name)


@st.composite
def random_graph(draw):
    """Any oriented graph: several components (some without a datum), parallel edges,
    self-loops, priorities and forced edges (some closing loops), trees and sparse
    graphs (deep) as well as dense ones."""
    n = draw(st.integers(1, 60))
    m = draw(st.integers(0, 3 * n))
    pairs = st.tuples(st.integers(0, n - 1), st.integers(0, n - 1))
    edges = draw(st.lists(pairs, min_size=m, max_size=m))
    if draw(st.booleans()):  # (a path through some vertices in random order: deep)
        path = draw(st.permutations(range(n)))[:draw(st.integers(1, n))]
        edges += list(zip(path[:-1], path[1:], strict=True))
        edges = [edges[k] for k in draw(st.permutations(range(len(edges))))]
    m = len(edges)
    roots = draw(st.sets(st.integers(0, n - 1), max_size=4))
    prio = draw(st.none() | st.lists(st.integers(0, 3), min_size=m, max_size=m))
    forced = draw(st.lists(st.integers(0, m - 1), max_size=6)) if m else []
    return n, edges, roots, prio, forced


@settings(max_examples=400, deadline=None)
@given(random_graph())
def test_random_graphs(graph):
    n, edges, roots, prio, forced = graph
    with pytest.MonkeyPatch.context() as monkeypatch:
        assert_same(made_every_way(monkeypatch, n, edges, roots, prio, forced))


def _tree_cases():
    rng = np.random.default_rng(14)
    n = 3000
    p = rng.permutation(n)
    path = np.stack([p[:-1], p[1:]], 1)
    yield "path in order", n, [(k, k + 1) for k in range(n - 1)], {0}
    yield "path, random vertices and edge order", n, path[rng.permutation(n - 1)], {int(p[0])}
    yield "path rooted in the middle", n, path, {int(p[n // 2])}
    yield "path, edges turned", n, path[:, ::-1], {int(p[-1])}
    yield "path without a datum", n, path, set()
    star = np.stack([np.full(n - 1, 7), np.delete(np.arange(n), 7)], 1)
    yield "star", n, star[rng.permutation(n - 1)], {7}
    yield "star from a leaf", n, star, {3}
    parents = rng.integers(0, np.arange(1, n))  # (a random tree: a parent before each)
    tree = np.stack([parents, np.arange(1, n)], 1)
    relabel = rng.permutation(n)
    yield "random tree", n, relabel[tree][rng.permutation(n - 1)], {int(relabel[0])}
    deep = np.stack([np.maximum(np.arange(1, n) - 1 - rng.integers(0, 3, n - 1), 0),
                     np.arange(1, n)], 1)  # (a random caterpillar, ~1000 levels)
    yield "caterpillar", n, relabel[deep][rng.permutation(n - 1)], {int(relabel[5])}
    both = np.concatenate([path, n + tree, 2 * n + star])
    yield "three trees, two data", 3 * n, both, {2 * n + 7, int(p[9])}
    loops = np.concatenate([path, rng.integers(0, n, (n, 2)), path[:50]])
    yield "path with chords, loops and parallel edges", n, loops, {int(p[0])}


@pytest.mark.parametrize("case", list(_tree_cases()), ids=lambda c: c[0])
def test_deep_and_wide_graphs(case, monkeypatch):
    _, n, edges, roots = case
    ends = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    pairs = [tuple(e) for e in ends.tolist()]
    rng = np.random.default_rng(len(pairs))
    prio = rng.integers(0, 3, len(pairs)).tolist()
    for p, forced in ((None, ()), (prio, (5, 1, 5, 40))):
        made = made_every_way(monkeypatch, n, pairs, roots, p, forced, ends=ends)
        assert_same(made)
        assert made["default"].depth.max() == made["scipy"].depth.max()
