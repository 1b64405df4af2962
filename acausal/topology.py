"""Linear-graph topology: spanning tree, incidence, fundamental cutset and circuit matrices.

Pure graph algorithms on integer vertices and oriented edges (source: Richard 2012, section
2; McPhee 1998). Conventions, as in the chapter:

* incidence ``K[v, e] = -1`` at the initial vertex of edge ``e``, ``+1`` at its final vertex;
* across variable of an edge = ``x_final - x_initial`` (so ``AV = K^T x``);
* vertex postulate ``K TV = 0``; with a tree, fundamental cutsets ``[U_t D] TV = 0`` and
  fundamental circuits ``[E U_c] AV = 0`` with ``E = -D^T``;
* hence ``TV_tree = -D TV_cotree`` and ``AV_cotree = D^T AV_tree``.

``D`` is computed from tree paths, one column per chord (cost = path length), so it stays
sparse for large networks; :func:`cutset_matrix_by_row_operations` computes it the
textbook way (``A_T^{-1} A_C``) for checks.

Large graphs (from :data:`ARRAY_GRAPH_MIN` edges) find the same forest on numpy arrays,
without scipy (0.2-0.3 s to import on a cold start), by the routines of
:mod:`acausal.sparsegraph`: Boruvka for the spanning forest, and for the parents, depths
and breadth-first order a search a level at a time, or Euler tours for deep trees
(chains).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import field
from functools import cached_property
from typing import Any, overload

import numpy as np

from .csr import CSR
from .records import ListView, record
from .sparsegraph import components, min_forest, root_by_levels, root_by_tours
from .symbols import as_shared, shared_ints

__all__ = ["Topology", "EdgePairs", "incidence_matrix", "cutset_matrix_by_row_operations"]

#: from this many edges on, the spanning forest is found and rooted on arrays (the same
#: forest, parents and order; below, Python loops cost less than the arrays' overhead).
#: The name is historical (scipy's graph routines did it) and shared with
#: :data:`acausal.structure.matching.ARRAY_GRAPH_MIN`
ARRAY_GRAPH_MIN = 1000
#: the chords' tree paths are walked a step at a time for all chords at once while more
#: than this many paths are unfinished, then one chord at a time
_WALK_ONE_BY_ONE = 16


class _UnionFind:
    def __init__(self, n: int) -> None:
        self.parent = list(range(n))

    def find(self, a: int) -> int:
        p = self.parent
        while p[a] != a:
            p[a] = p[p[a]]
            a = p[a]
        return a

    def union(self, a: int, b: int) -> bool:
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return False
        self.parent[rb] = ra
        return True


def _forest_in_bulk(n: int, ends: np.ndarray, prio: np.ndarray, in_tree: np.ndarray,
                    skip: set[int]) -> None:
    """Complete the spanning forest ``in_tree`` (which holds the forced edges) as
    Kruskal's loop does: the other edges by priority, ties in edge order, each one taken
    if it joins two components. That forest is the minimum spanning forest for the
    weights ``1, 2, ...`` in that order (the forced edges first: all of them are taken);
    with distinct weights it is unique, so :func:`~acausal.sparsegraph.min_forest` finds
    the same one (a self-loop is never taken, of parallel edges only the first in that
    order can be)."""
    seq = _kruskal_order(prio, in_tree, skip)
    in_tree[seq[min_forest(n, ends[seq, 0], ends[seq, 1])]] = True


def _kruskal_order(prio: np.ndarray, in_tree: np.ndarray, skip: set[int]) -> np.ndarray:
    """The edges in the order Kruskal's loop tries them: the forced ones (``in_tree``)
    first, then the others by priority, ties in edge order, without those of ``skip``."""
    order = np.argsort(prio, kind="stable")
    keep = ~in_tree[order]
    if skip:
        keep &= ~np.isin(order, np.fromiter(skip, dtype=np.int64))
    return np.concatenate([np.flatnonzero(in_tree), order[keep]])


class EdgePairs(ListView[tuple[int, int]]):
    """The edges of a graph as ``(initial, final)`` pairs, read from an ``m x 2`` integer
    array when asked (a list of the pairs of 200 000 edges costs a graph pass 0.1 s)."""

    __slots__ = ("ends",)

    def __init__(self, ends: np.ndarray) -> None:
        self.ends = ends

    def __len__(self) -> int:
        return len(self.ends)

    @overload
    def __getitem__(self, j: int) -> tuple[int, int]: ...

    @overload
    def __getitem__(self, j: slice) -> list[tuple[int, int]]: ...

    def __getitem__(self, j: Any) -> Any:
        if isinstance(j, slice):
            return list(map(tuple, self.ends[j].tolist()))
        a, b = self.ends[j].tolist()
        return (a, b)

    def __iter__(self) -> Iterator[tuple[int, int]]:
        return map(tuple, self.ends.tolist())  # type: ignore[arg-type]


def incidence_matrix(n_vertices: int, edges: Sequence[tuple[int, int]]) -> np.ndarray:
    """Dense incidence matrix ``K`` (vertices x edges): -1 initial, +1 final."""
    K = np.zeros((n_vertices, len(edges)))
    for j, (a, b) in enumerate(edges):
        K[a, j] -= 1.0
        K[b, j] += 1.0
    return K


@record
class Topology:
    """Spanning forest and fundamental matrices of an oriented graph.

    Parameters
    ----------
    n_vertices : int
    edges : list of (initial, final)
        (or :class:`EdgePairs`, read from an array)
    roots : set of int
        Datum vertices; each connected component containing one is rooted there.
    priorities : list of int
        Tree preference per edge (lower enters the tree first); ties keep edge order.
    forced : list of int
        Edges that must be in the tree (user override); checked for loops.
    """

    n_vertices: int
    edges: Sequence[tuple[int, int]]
    roots: set[int]
    priorities: list[int] | None = None
    forced: list[int] = field(default_factory=list)
    #: the edges' ends as an ``m x 2`` integer array (initial, final); made from
    #: ``edges`` unless given
    ends: np.ndarray | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        n, m = self.n_vertices, len(self.edges)
        prio = self.priorities if self.priorities is not None else [0] * m
        # (the union-find of every vertex: for the loop below and for the forced edges)
        uf = _UnionFind(n if m < ARRAY_GRAPH_MIN or self.forced else 0)
        in_tree = np.zeros(m, dtype=bool)
        self.forced_loop: list[int] = []
        for j in self.forced:
            a, b = self.edges[j]
            if uf.union(a, b):
                in_tree[j] = True
            else:
                self.forced_loop.append(j)
        skip = set(self.forced_loop)
        if self.ends is None:
            self.ends = (np.array(self.edges, dtype=np.int64).reshape(m, 2) if m
                         else np.zeros((0, 2), dtype=np.int64))
        self._ends: np.ndarray = self.ends
        if m < ARRAY_GRAPH_MIN:
            # (a stable sort: ties keep the edge order)
            for j in sorted(range(m), key=prio.__getitem__):
                if in_tree[j] or j in skip:
                    continue
                a, b = self.edges[j]
                if uf.union(a, b):
                    in_tree[j] = True
        else:
            _forest_in_bulk(n, self._ends, np.asarray(prio), in_tree, skip)
        self.in_tree = in_tree
        tree = np.flatnonzero(in_tree)
        # (the indices as the build's shared integer objects, kept here until the flatten
        # pass takes the same pool: see symbols.shared_ints)
        ints = self.__dict__["_ints"] = shared_ints(0)
        self.tree = as_shared(ints, tree)
        self.cotree = as_shared(ints, np.flatnonzero(~in_tree))
        if m < ARRAY_GRAPH_MIN:
            self._root_forest(uf)
        else:
            self._root_forest_in_bulk(tree)

    def __getstate__(self) -> dict[str, Any]:
        # (saved without the pool of shared integers: see __post_init__)
        state = dict(self.__dict__)
        state.pop("_ints", None)
        return state

    # ----- forest -----
    def _root_forest(self, uf: _UnionFind) -> None:
        """Parents, depths and the breadth-first order of the tree from each connected
        component's root (its datum, else its first vertex: a floating component)."""
        n = self.n_vertices
        adj: list[list[tuple[int, int]]] = [[] for _ in range(n)]
        for j in self.tree:
            a, b = self.edges[j]
            adj[a].append((b, j))
            adj[b].append((a, j))
        # (built in lists, stored as arrays: numpy element access costs more)
        parent, parent_edge, parent_sign = [-1] * n, [-1] * n, [0] * n
        depth, root_of = [0] * n, [-1] * n
        self.order: list[int] = []  # BFS order, parents before children
        order, edges = self.order, self.edges
        used = sorted({v for e in edges for v in e} | set(self.roots))
        datum_reps = {uf.find(r): r for r in sorted(self.roots, reverse=True)}
        comp_roots: dict[int, int] = {}
        self.floating: list[list[int]] = []  # connected components without a datum
        members: dict[int, list[int]] = {}
        for v in used:
            members.setdefault(uf.find(v), []).append(v)
        for rep, verts in members.items():
            if rep in datum_reps:
                comp_roots[rep] = datum_reps[rep]
            else:
                comp_roots[rep] = verts[0]
                self.floating.append(verts)
        for r in comp_roots.values():
            root_of[r] = r
            q = deque([r])
            while q:
                v = q.popleft()
                order.append(v)
                for w, j in adj[v]:
                    if w == r or parent[w] >= 0:
                        continue
                    parent[w] = v
                    parent_edge[w] = j
                    # x_v = x_parent + sign * AV[parent_edge]
                    parent_sign[w] = 1 if edges[j][1] == w else -1
                    depth[w] = depth[v] + 1
                    root_of[w] = r
                    q.append(w)
        self.parent = np.array(parent, dtype=int)
        self.parent_edge = np.array(parent_edge, dtype=int)
        self.parent_sign = np.array(parent_sign, dtype=int)
        self.depth = np.array(depth, dtype=int)
        self.root_of = np.array(root_of, dtype=int)

    def _component_roots(self, ta: np.ndarray, tb: np.ndarray
                         ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The forest's components (of the tree edges ``ta[k] -> tb[k]``) for
        :meth:`_root_forest_in_bulk`: ``(label, comp_label, comp_root, used)``, each
        vertex's component, the components of the used vertices (on an edge or a datum,
        ``used`` ascending) in the order of their smallest vertex, and the root of each
        (its smallest datum, else its smallest vertex); sets :attr:`floating`, the
        components without a datum."""
        n, ends = self.n_vertices, self._ends
        n_comp, label = components(n, ta, tb)
        used = np.zeros(n, dtype=bool)
        used[ends.ravel()] = True
        roots = np.array(sorted(self.roots), dtype=np.int64)
        used[roots] = True
        uv = np.flatnonzero(used)  # (ascending)
        # the components of the used vertices, each one's vertices ascending
        by_comp = np.argsort(label[uv], kind="stable")
        lab = label[uv][by_comp]
        starts = np.flatnonzero(np.diff(lab, prepend=-1))
        comp_first = uv[by_comp[starts]]  # each component's smallest vertex
        rank = np.argsort(comp_first, kind="stable")  # components by their first vertex
        comp_label = lab[starts][rank]
        comp_root = comp_first[rank].copy()
        root_at = np.full(n_comp, -1, dtype=np.int64)
        for r in roots[::-1].tolist():  # (the smallest datum of a component wins)
            root_at[label[r]] = r
        has_root = root_at[comp_label] >= 0
        comp_root[has_root] = root_at[comp_label][has_root]
        groups = np.split(uv[by_comp], starts[1:])
        self.floating = [groups[k].tolist() for k in rank[~has_root].tolist()]
        return label, comp_label, comp_root, uv

    def _root_forest_in_bulk(self, tree: np.ndarray) -> None:
        """:meth:`_root_forest` on arrays, for large graphs: the same roots, parents,
        signs, depths and order.

        The components are the tree's; each is rooted at its smallest datum vertex, else
        at its smallest vertex, and the components come in the order of their smallest
        vertex (of those on an edge or a datum). A search of all of them at once, a level
        at a time (:func:`~acausal.sparsegraph.root_by_levels`), visits each component in
        its own breadth-first order, so a stable sort by component gives the component
        after component order of :meth:`_root_forest`; the trees of chains are too deep
        for a level at a time, Euler tours (:func:`~acausal.sparsegraph.root_by_tours`)
        find the same without a search.
        """
        n, ends = self.n_vertices, self._ends  # (``tree``: the tree edges, ascending)
        ta, tb = ends[tree, 0], ends[tree, 1]
        label, comp_label, comp_root, uv = self._component_roots(ta, tb)
        root_of = np.full(n, -1, dtype=np.int64)
        root_by_label = np.zeros(n, dtype=np.int64)  # (labels are below n)
        root_by_label[comp_label] = comp_root
        root_of[uv] = root_by_label[label[uv]]
        comp_rank = np.zeros(n, dtype=np.int64)
        comp_rank[comp_label] = np.arange(len(comp_label))
        # arcs: k = ta[k] -> tb[k] and t + k = tb[k] -> ta[k] for the t tree edges
        t = len(tree)
        src = np.concatenate([ta, tb])
        # (each vertex's arcs in the order of their edges)
        arcs = np.argsort(src * max(t, 1) + np.tile(np.arange(t), 2))
        found = root_by_levels(n, tree, src, arcs, comp_root)
        if found is None:  # (a deep tree)
            found = root_by_tours(n, tree, src, arcs, comp_root, label)
        vs, parent, parent_edge, parent_sign, depth = found
        # (components one after the other: a stable sort keeps each one's order)
        rank_of = comp_rank[label[vs]]
        if len(comp_label) > 1 and bool(np.any(rank_of[1:] < rank_of[:-1])):
            vs = vs[np.argsort(rank_of, kind="stable")]
        self.order = as_shared(self.__dict__["_ints"], vs)
        self.parent = parent
        self.parent_edge = parent_edge
        self.parent_sign = parent_sign
        self.depth = depth
        self.root_of = root_of

    @cached_property
    def D(self) -> CSR:
        """The chord part ``D`` of the fundamental cutset matrix (tree edges x chords),
        computed on first use: a mechanism's tree walk needs only the parents, and the
        body chords of a long chain have long paths (quadratic cost in the chain length).

        Column ``c`` is ``x_b - x_a`` of chord ``c`` (ends ``a``, ``b``) as the signed sum
        of the tree edges on the path from ``a`` to ``b``: both ends walk up to their
        common ancestor, the deeper one first, all chords a step at a time (the last few
        long paths one chord at a time)."""
        tree, cot = self.tree, self.cotree
        m = len(self.edges)
        row_of = np.full(m, -1, dtype=np.int64)
        row_of[np.asarray(tree, dtype=np.int64)] = np.arange(len(tree))
        depth, parent, parent_edge, parent_sign = (self.depth, self.parent,
                                                   self.parent_edge, self.parent_sign)
        chords = np.asarray(cot, dtype=np.int64)
        u, w = self._ends[chords, 0], self._ends[chords, 1]
        if bool(np.any(self.root_of[u] != self.root_of[w])):
            j = int(chords[np.flatnonzero(self.root_of[u] != self.root_of[w])[0]])
            raise ValueError(f"edge {j} joins two different trees")  # cannot happen
        col = np.arange(len(chords), dtype=np.int64)
        cols: list[np.ndarray] = []
        edges: list[np.ndarray] = []
        signs: list[np.ndarray] = []
        live = u != w
        u, w, col = u[live], w[live], col[live]
        while len(col) > _WALK_ONE_BY_ONE:
            at_w = depth[w] >= depth[u]  # x_b - x_a: + the edges above b, - above a
            wv, uv = w[at_w], u[~at_w]
            cols += (col[at_w], col[~at_w])
            edges += (parent_edge[wv], parent_edge[uv])
            signs += (parent_sign[wv], -parent_sign[uv])
            w[at_w], u[~at_w] = parent[wv], parent[uv]
            live = u != w
            u, w, col = u[live], w[live], col[live]
        # (the few long paths left: element access on lists costs less than numpy's)
        rest_c, rest_e, rest_s = [], [], []
        if len(col):
            dl, pl = depth.tolist(), parent.tolist()
            pel, psl = parent_edge.tolist(), parent_sign.tolist()
            for c, a, b in zip(col.tolist(), u.tolist(), w.tolist(), strict=True):
                while a != b:
                    if dl[b] >= dl[a]:
                        rest_c.append(c)
                        rest_e.append(pel[b])
                        rest_s.append(psl[b])
                        b = pl[b]
                    else:
                        rest_c.append(c)
                        rest_e.append(pel[a])
                        rest_s.append(-psl[a])
                        a = pl[a]
        cols.append(np.asarray(rest_c, dtype=np.int64))
        edges.append(np.asarray(rest_e, dtype=np.int64))
        signs.append(np.asarray(rest_s, dtype=np.int64))
        # (a path never takes an edge twice: every entry is one edge of one chord, +-1)
        return CSR.from_coo(row_of[np.concatenate(edges)], np.concatenate(cols),
                            np.concatenate(signs).astype(float), (len(tree), len(cot)))

    # ----- matrices for inspection -----
    def incidence(self) -> np.ndarray:
        """Full incidence matrix, edges in their original order."""
        return incidence_matrix(self.n_vertices, self.edges)

    def cutset_matrix(self) -> np.ndarray:
        """``[U_t D]``, columns ordered tree edges then cotree edges."""
        nt = len(self.tree)
        return np.hstack([np.eye(nt), self.D.toarray()]) + 0.0

    def circuit_matrix(self) -> np.ndarray:
        """``[E U_c]`` with ``E = -D^T``, columns ordered tree edges then cotree edges."""
        nc = len(self.cotree)
        return np.hstack([-self.D.T.toarray(), np.eye(nc)]) + 0.0  # no -0. entries


def cutset_matrix_by_row_operations(
    n_vertices: int, edges: Sequence[tuple[int, int]], tree: Sequence[int], datum: int
) -> np.ndarray:
    """``D = A_T^{-1} A_C`` from the reduced incidence matrix (textbook construction)."""
    K = incidence_matrix(n_vertices, edges)
    A = np.delete(K, datum, axis=0)
    cotree = [j for j in range(len(edges)) if j not in set(tree)]
    return np.linalg.solve(A[:, list(tree)], A[:, cotree])
