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
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import field
from functools import cached_property

import numpy as np

from .csr import CSR
from .records import record

__all__ = ["Topology", "incidence_matrix", "cutset_matrix_by_row_operations"]


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
    roots : set of int
        Datum vertices; each connected component containing one is rooted there.
    priorities : list of int
        Tree preference per edge (lower enters the tree first); ties keep edge order.
    forced : list of int
        Edges that must be in the tree (user override); checked for loops.
    """

    n_vertices: int
    edges: list[tuple[int, int]]
    roots: set[int]
    priorities: list[int] | None = None
    forced: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        n, m = self.n_vertices, len(self.edges)
        prio = self.priorities if self.priorities is not None else [0] * m
        uf = _UnionFind(n)
        in_tree = np.zeros(m, dtype=bool)
        self.forced_loop: list[int] = []
        for j in self.forced:
            a, b = self.edges[j]
            if uf.union(a, b):
                in_tree[j] = True
            else:
                self.forced_loop.append(j)
        skip = set(self.forced_loop)
        # (a stable sort: ties keep the edge order)
        for j in sorted(range(m), key=prio.__getitem__):
            if in_tree[j] or j in skip:
                continue
            a, b = self.edges[j]
            if uf.union(a, b):
                in_tree[j] = True
        self.in_tree = in_tree
        self.tree = np.flatnonzero(in_tree).tolist()
        self.cotree = np.flatnonzero(~in_tree).tolist()
        self._root_forest(uf)

    # ----- forest -----
    def _root_forest(self, uf: _UnionFind) -> None:
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

    @cached_property
    def D(self) -> CSR:
        """The chord part ``D`` of the fundamental cutset matrix (tree edges x chords),
        computed on first use: a mechanism's tree walk needs only the parents, and the
        body chords of a long chain have long paths (quadratic cost in the chain length)."""
        row_of = {j: k for k, j in enumerate(self.tree)}
        rows: list[int] = []
        cols: list[int] = []
        vals: list[float] = []
        # (plain lists: indexing numpy arrays element by element costs more than the walk)
        depth, parent = self.depth.tolist(), self.parent.tolist()
        parent_edge, parent_sign = self.parent_edge.tolist(), self.parent_sign.tolist()
        root_of, edges = self.root_of.tolist(), self.edges
        for c, j in enumerate(self.cotree):
            a, b = edges[j]
            if root_of[a] != root_of[b]:
                raise ValueError(f"edge {j} joins two different trees")  # cannot happen
            coef: dict[int, int] = {}
            # x_b - x_a, walking both ends up to their common ancestor
            u, w = a, b
            while u != w:
                if depth[w] >= depth[u]:
                    e = parent_edge[w]
                    coef[e] = coef.get(e, 0) + parent_sign[w]
                    w = parent[w]
                else:
                    e = parent_edge[u]
                    coef[e] = coef.get(e, 0) - parent_sign[u]
                    u = parent[u]
            for e, s in coef.items():
                if s:
                    rows.append(row_of[e])
                    cols.append(c)
                    vals.append(float(s))
        return CSR.from_coo(rows, cols, vals, (len(self.tree), len(self.cotree)))

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
