"""Graph routines of large systems without scipy.

``scipy.sparse.csgraph`` costs a fresh process 0.2-0.3 s to import (most of it numpy
submodules that scipy's array API layer pulls in), more than these routines take on a
100 000-vertex graph. Small systems keep the Python loops of their passes (no array
overhead); these serve from ``ARRAY_GRAPH_MIN`` vertices on:

- on numpy arrays: connected components (:func:`components`), the minimum spanning
  forest of distinct weights (:func:`min_forest`) and the rooting of a forest, with its
  breadth-first order (:func:`root_by_levels`, :func:`root_by_tours`);
- on CasADi's C++ ports of Tim Davis's CSparse, which every build has loaded already
  (patterns made by :func:`pattern`): a maximum matching from the Dulmage-Mendelsohn
  permutation (:func:`transversal`) and the strongly connected components in the order
  of Tarjan's algorithm (:func:`tarjan_components`). These take about ten times as long
  as scipy's (most of it converting to and from Python lists); the matching takes most of
  its pairs by Karp and Sipser's rule on arrays first (``structure.matching``), and very
  large systems use scipy's routines (``SCIPY_GRAPH_MIN``), whose import they pay for.
"""

from __future__ import annotations

import casadi as cs
import numpy as np

__all__ = ["pattern", "components", "transversal", "tarjan_components", "min_forest",
           "root_by_levels", "root_by_tours", "Rooted"]


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


def min_forest(n: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The edges (indices ``k``) of the minimum spanning forest of the graph on ``n``
    vertices whose edge ``k`` joins ``a[k]`` and ``b[k]`` with weight ``k``.

    Boruvka on arrays: each round every component takes its cheapest edge to another
    component (all of them belong to the forest), the components hook along those edges
    and are renumbered, and the edges inside a component are dropped. The number of
    components at least halves, so there are at most ``log2(n)`` rounds (a few: 3 for a
    20 000-vertex chain of masses).
    """
    idx = np.arange(len(a), dtype=np.int64)
    taken: list[np.ndarray] = []
    k = n
    while True:
        live = a != b  # (an edge inside a component can never join two)
        a, b, idx = a[live], b[live], idx[live]
        if not len(idx):
            break
        # each component's cheapest edge: its first (the edges stay in weight order)
        pos = np.arange(len(idx), dtype=np.int64)
        best = np.full(k, len(idx), dtype=np.int64)
        np.minimum.at(best, a, pos)
        np.minimum.at(best, b, pos)
        comp = np.flatnonzero(best < len(idx))
        e = best[comp]
        other = np.where(a[e] == comp, b[e], a[e])
        # each component hooks to the other end of its edge; two components that took
        # the same edge (the only cycles, as the weights are distinct) hook to the smaller
        hook = np.arange(k, dtype=np.int64)
        hook[comp] = other
        mutual = (best[other] == e) & (comp < other)
        hook[comp[mutual]] = comp[mutual]
        taken.append(idx[e[~mutual]])  # (each edge once)
        while True:  # (pointer jumping to the roots)
            up = hook[hook]
            if np.array_equal(up, hook):
                break
            hook = up
        root = hook == np.arange(k)
        new = np.cumsum(root) - 1
        k = int(new[-1]) + 1
        a, b = new[hook[a]], new[hook[b]]
    return np.concatenate(taken) if taken else idx


#: a search one level at a time gives up after this many levels, for Euler tours (a
#: level costs some 12 us, the tours of 1000 vertices 0.6 ms, of 20 000 vertices 8.5 ms)
_LEVELS_MAX = 32
#: lists from this many elements on are ranked through a ruling set (:func:`_to_end`)
_RULED_MIN = 100_000

Rooted = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def root_by_levels(n: int, tree: np.ndarray, src: np.ndarray, arcs: np.ndarray,
            roots: np.ndarray) -> Rooted | None:
    """``(order, parent, parent_edge, parent_sign, depth)`` of the forest of the edges
    ``tree`` (ascending) from ``roots`` (one per tree, in order), by a breadth-first search
    of all the trees at once, one level at a time; ``None`` if there are more than
    :data:`_LEVELS_MAX` levels. The arcs are ``src[k] -> src[k + t]`` and back for the
    ``t`` edges, ``arcs`` lists them by initial vertex, each vertex's in the order of their
    edges. In a tree every vertex is reached from its parent only, so each level is the
    children of the one before, in order."""
    t = len(tree)
    dst = np.concatenate([src[t:], src[:t]])
    first = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(src, minlength=n), out=first[1:])
    parent = np.full(n, -1, dtype=np.int64)
    parent_edge = np.full(n, -1, dtype=np.int64)
    parent_sign = np.zeros(n, dtype=np.int64)
    depth = np.zeros(n, dtype=np.int64)
    seen = np.zeros(n, dtype=bool)
    seen[roots] = True
    level, levels = roots, [roots]
    while True:
        lo, count = first[level], first[level + 1] - first[level]
        total = int(count.sum())
        if not total:
            break
        if len(levels) > _LEVELS_MAX:
            return None
        out = arcs[np.repeat(lo - (np.cumsum(count) - count), count)
                   + np.arange(total, dtype=np.int64)]
        out = out[~seen[dst[out]]]  # (the arc back to the parent)
        level = dst[out]
        seen[level] = True
        parent[level] = src[out]
        parent_edge[level] = tree[out % t]
        parent_sign[level] = np.where(out < t, 1, -1)  # x_child = x_parent + sign * AV
        depth[level] = len(levels)
        levels.append(level)
    return np.concatenate(levels), parent, parent_edge, parent_sign, depth


def root_by_tours(n: int, tree: np.ndarray, src: np.ndarray, arcs: np.ndarray, roots: np.ndarray,
           label: np.ndarray) -> Rooted:
    """:func:`root_by_levels` by Euler tours (``label``: each vertex's tree, any numbering).

    A tour goes on from the arc ``u -> v`` with the arc after ``v -> u`` among ``v``'s
    (cyclically), so it runs round the tree once, depth first, each vertex's arcs in
    their order from the one it came in by; it starts with the root's first arc. With
    the roots fixed, every vertex's parent is its neighbour on the tree path to the root,
    whatever the search: the first tour tells which arc of each edge leads away from the
    root (it comes first). The breadth-first order of a tree is by depth, then within a
    level by the children's ranks (the order of their tree edges) along the path from
    the root, compared from the root down: the order of a depth-first search visiting the
    children in that order, which the second tour is (each vertex's arcs from its parent
    first).
    """
    t, m = len(tree), len(src)
    twin = np.concatenate([np.arange(t, m), np.arange(t)])
    deg = np.bincount(src, minlength=n)
    first = np.cumsum(deg) - deg  # (each vertex's first place in ``arcs``)
    has = np.flatnonzero(deg)
    after = np.empty(m, dtype=np.int64)  # the arc after each one among its vertex's
    after[arcs[:-1]] = arcs[1:]
    after[arcs[first[has] + deg[has] - 1]] = arcs[first[has]]
    r = roots[deg[roots] > 0]
    ends = twin[arcs[first[r] + deg[r] - 1]]  # (the tours' last arcs, into the roots)
    dist = _tour(after, twin, ends)
    down = np.concatenate([dist[:t] > dist[t:], dist[t:] > dist[:t]])
    # second tour: each vertex's arc up taken out of its list and put first
    up = np.flatnonzero(~down)
    v = src[up]
    up, v = up[deg[v] > 1], v[deg[v] > 1]
    before = np.empty(m, dtype=np.int64)
    before[after] = np.arange(m)
    nxt, prv = after[up], before[up]
    after[prv] = nxt
    head, tail = arcs[first[v]], arcs[first[v] + deg[v] - 1]
    after[np.where(tail == up, prv, tail)] = up
    after[up] = np.where(head == up, nxt, head)
    dist = _tour(after, twin, ends)
    vs = np.concatenate([src[t:], src[:t]])[down]  # (the vertices below the arcs down)
    parent = np.full(n, -1, dtype=np.int64)
    parent[vs] = src[down]
    parent_edge = np.full(n, -1, dtype=np.int64)
    parent_edge[vs] = np.concatenate([tree, tree])[down]
    parent_sign = np.zeros(n, dtype=np.int64)  # x_vs = x_src + sign * AV
    parent_sign[vs] = np.where(np.flatnonzero(down) < t, 1, -1)
    # the tours one after the other (the arcs nearer a tour's end later): depths are
    # the running sums of +1 down, -1 up
    tree_of = label[src]
    size = np.bincount(tree_of)
    at = (np.cumsum(size) - size)[tree_of] + size[tree_of] - 1 - dist
    step = np.zeros(m, dtype=np.int64)
    step[at] = np.where(down, 1, -1)
    depth = np.zeros(n, dtype=np.int64)
    depth[vs] = np.cumsum(step)[at[down]]
    # the vertices as the tours reach them, then by depth (a stable sort: in order for
    # a path): a search of all the trees at once, a level at a time, would order them so
    reach = np.full(m, -1, dtype=np.int64)
    reach[at[down]] = vs
    vs = np.concatenate([roots, reach[reach >= 0]])
    vs = vs[np.argsort(depth[vs], kind="stable")]
    return vs, parent, parent_edge, parent_sign, depth


def _tour(after: np.ndarray, twin: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """For each arc, the number of arcs after it on its Euler tour (the arc ``u -> v``
    followed by ``after[v -> u]``; each tour ending with an arc of ``ends``)."""
    succ = after[twin]
    succ[ends] = ends
    return _to_end(succ)


def _to_end(succ: np.ndarray) -> np.ndarray:
    """The number of elements after each one on its list, for lists given by ``succ``
    (the next element; the last one's is itself).

    By pointer jumping, ``log2`` of the longest list's length rounds on whole arrays.
    Long lists (from :data:`_RULED_MIN` elements) first by walks of about 32 steps, from
    rulers (the lists' heads and ends and about one element in 32, spread
    pseudo-randomly) to the next ruler, all walks a step at a time, then by pointer
    jumping on the rulers only: 15 ms instead of 55 ms for a list of 400 000 elements in
    random order (each round of pointer jumping reads the whole array in random order).
    """
    m = len(succ)
    idx = np.arange(m, dtype=np.int64)
    end = succ == idx
    if m < _RULED_MIN:
        return _jump(succ, (~end).astype(np.int64))
    head = np.ones(m, dtype=bool)
    head[succ[~end]] = False
    ruler = end | head | ((idx * 2654435761) % 2**32 < 2**32 // 32)
    rulers = np.flatnonzero(ruler)
    owner = np.empty(m, dtype=np.int64)  # each element's ruler and steps from it
    owner[rulers] = np.arange(len(rulers))
    steps = np.zeros(m, dtype=np.int64)
    after = np.arange(len(rulers))  # each ruler's next one, and how far
    gap = np.zeros(len(rulers), dtype=np.int64)
    walk = np.flatnonzero(~end[rulers])
    at = rulers[walk]
    step = 0
    while len(at):
        step += 1
        at = succ[at]
        hit = ruler[at]
        after[walk[hit]] = owner[at[hit]]
        gap[walk[hit]] = step
        at, walk = at[~hit], walk[~hit]
        owner[at] = walk
        steps[at] = step
    return _jump(after, gap)[owner] - steps


def _jump(succ: np.ndarray, dist: np.ndarray) -> np.ndarray:
    """The distances to the lists' ends (``dist``: to the next element, 0 at an end), by
    pointer jumping."""
    while True:
        step = succ[succ]
        if np.array_equal(step, succ):
            return dist
        dist += dist[succ]
        succ = step
