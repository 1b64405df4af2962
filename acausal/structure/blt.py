"""Block-lower-triangular ordering: strongly connected components of the matched system.

With every equation matched to the unknown it determines, unknown ``j`` depends on unknown
``k`` when the equation matched to ``j`` contains ``k``. Tarjan's algorithm (iterative:
deep chains hit no recursion limit; in Python for a small system; for a large one,
CasADi's compiled search, which completes the components in his order, and for a very
large one scipy's: a million nodes take a fraction of a second) returns the strongly
connected components in an order where
every block only needs blocks before it: scalar blocks can then be solved explicitly and
algebraic loops stay as small implicit blocks.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import overload

import numpy as np

from ..csr import offsets, spread
from ..sparsegraph import tarjan_components
from . import matching

__all__ = ["Block", "Blocks", "strong_components"]


class Block:
    """Equations and the unknowns they determine (same length).

    ``level`` is 1 + the highest level of the blocks it needs (0: needs only states,
    parameters and time): blocks of one level are independent of each other.

    (A slotted class, not a dataclass: one per block, hundreds of thousands in a large
    model, and a dataclass costs ~1 ms of ``import acausal``.)
    """

    __slots__ = ("equations", "unknowns", "level")

    def __init__(self, equations: list[int], unknowns: list[int], level: int = 0) -> None:
        self.equations = equations
        self.unknowns = unknowns
        self.level = level

    def __repr__(self) -> str:
        return f"Block(equations={self.equations}, unknowns={self.unknowns}, level={self.level})"


class Blocks(Sequence[Block]):
    """The BLT blocks of a system as arrays, dependencies first: block ``k`` determines
    the unknowns ``unknowns[ptr[k]:ptr[k + 1]]`` from the equations at the same
    positions of ``equations``, at level ``levels[k]``. A :class:`Block` is made when
    one is read (a large model has hundreds of thousands of blocks, nearly all scalar:
    as objects, about 250 bytes each; here 32)."""

    __slots__ = ("ptr", "equations", "unknowns", "levels")

    def __init__(self, ptr: np.ndarray, equations: np.ndarray, unknowns: np.ndarray,
                 levels: np.ndarray) -> None:
        self.ptr, self.equations, self.unknowns, self.levels = ptr, equations, unknowns, levels

    @classmethod
    def of(cls, blocks: Sequence[Block]) -> Blocks:
        """The table of a list of blocks."""
        ptr = offsets([len(b.equations) for b in blocks])
        eqs = [i for b in blocks for i in b.equations]
        unks = [j for b in blocks for j in b.unknowns]
        return cls(ptr, np.asarray(eqs, dtype=np.int64), np.asarray(unks, dtype=np.int64),
                   np.asarray([b.level for b in blocks], dtype=np.int64))

    def __len__(self) -> int:
        return len(self.levels)

    @overload
    def __getitem__(self, k: int) -> Block: ...

    @overload
    def __getitem__(self, k: slice) -> list[Block]: ...

    def __getitem__(self, k: int | slice) -> Block | list[Block]:
        if isinstance(k, slice):
            return [self[i] for i in range(*k.indices(len(self)))]
        n = len(self)
        if not -n <= k < n:
            raise IndexError(f"block {k} of {n}")
        k %= n  # (from the end, as a list)
        a, b = int(self.ptr[k]), int(self.ptr[k + 1])
        return Block(self.equations[a:b].tolist(), self.unknowns[a:b].tolist(),
                     int(self.levels[k]))

    def __iter__(self) -> Iterator[Block]:
        return iter(self.take(np.arange(len(self))))

    def __repr__(self) -> str:
        return f"Blocks({len(self)} blocks, {len(self.equations)} equations)"

    def sizes(self) -> np.ndarray:
        """The number of equations (and unknowns) of every block."""
        return np.diff(self.ptr)

    def take(self, ks: np.ndarray) -> list[Block]:
        """The blocks ``ks`` as objects (one conversion of their rows of the arrays)."""
        starts, sizes = self.ptr[ks], self.ptr[ks + 1] - self.ptr[ks]
        pos = spread(starts, sizes)
        eqs, unks = self.equations[pos].tolist(), self.unknowns[pos].tolist()
        b = offsets(sizes).tolist()
        return [Block(eqs[b[q]:b[q + 1]], unks[b[q]:b[q + 1]], lv)
                for q, lv in enumerate(self.levels[ks].tolist())]

    def level_indices(self) -> list[np.ndarray]:
        """The blocks of every level (their indices, in block order), lowest level first."""
        if not len(self):
            return []
        order = np.argsort(self.levels, kind="stable")
        counts = np.bincount(self.levels)
        return np.split(order, np.cumsum(counts)[:-1])


def strong_components(n: int, ptr: np.ndarray, dep: np.ndarray
                      ) -> tuple[np.ndarray, np.ndarray]:
    """Strongly connected components of a digraph, dependencies first: ``(order,
    sizes)``, the nodes component after component (each component's nodes ascending)
    and the size of each.

    Node ``j`` depends on the nodes ``dep[ptr[j]:ptr[j + 1]]``. The components are those
    of Tarjan's algorithm, in the order it completes them (every component after the
    ones it needs). Below :data:`~acausal.structure.matching.ARRAY_GRAPH_MIN` nodes his
    search runs here, visiting each node's dependencies in the order given; from that size
    on, CasADi's compiled search (:func:`acausal.sparsegraph.tarjan_components`) visits
    them in ascending order, which is the order :func:`~acausal.structure.causalize.causalize`
    gives, and from :data:`~acausal.structure.matching.SCIPY_GRAPH_MIN` nodes scipy's
    (:func:`_pearce`): the same blocks in the same order at every size.
    """
    if n == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    ptr = np.asarray(ptr, dtype=np.int64)
    if n < matching.ARRAY_GRAPH_MIN:  # (no array overhead for a small model: see matching)
        dep_l, ptr_l = np.asarray(dep).tolist(), ptr.tolist()
        comps = _tarjan(n, [dep_l[ptr_l[k]:ptr_l[k + 1]] for k in range(n)])
        return (np.fromiter((j for c in comps for j in sorted(c)), dtype=np.int64, count=n),
                np.fromiter(map(len, comps), dtype=np.int64, count=len(comps)))
    if n < matching.SCIPY_GRAPH_MIN:
        return tarjan_components(n, ptr, np.asarray(dep, dtype=np.int64))
    return _pearce(n, ptr, np.asarray(dep, dtype=np.int64))


def _pearce(n: int, ptr: np.ndarray, dep: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`strong_components` by scipy's iterative Tarjan (Pearce's), for very large
    graphs: its depth-first search visits a node's neighbours last first, so each row is
    given reversed, and its labels count the components in the order they complete."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components

    counts = np.diff(ptr)
    # (each row read from its end: position p of row r takes ptr[r] + ptr[r + 1] - 1 - p)
    rev = dep[np.repeat(ptr[:-1] + ptr[1:] - 1, counts) - np.arange(len(dep))]
    graph = csr_matrix((np.ones(len(rev)), rev.astype(np.int32), ptr.astype(np.int32)),
                       shape=(n, n))
    k, label = connected_components(graph, directed=True, connection="strong")
    return np.argsort(label, kind="stable"), np.bincount(label, minlength=k)


def _tarjan(n: int, succ: list[list[int]]) -> list[list[int]]:
    """Tarjan's algorithm in Python (iterative): the components in the order it
    completes them (``succ[j]``: the nodes node ``j`` depends on, in the order visited)."""
    index = [-1] * n
    low = [0] * n
    on_stack = [False] * n
    stack: list[int] = []
    out: list[list[int]] = []
    counter = 0
    for root in range(n):
        if index[root] >= 0:
            continue
        work = [(root, 0)]
        while work:
            v, pos = work[-1]
            if pos == 0:
                index[v] = low[v] = counter
                counter += 1
                stack.append(v)
                on_stack[v] = True
            recurse = False
            nbrs = succ[v]
            while pos < len(nbrs):
                w = nbrs[pos]
                pos += 1
                if index[w] < 0:
                    work[-1] = (v, pos)
                    work.append((w, 0))
                    recurse = True
                    break
                if on_stack[w]:
                    low[v] = min(low[v], index[w])
            if recurse:
                continue
            work.pop()
            if work:
                u = work[-1][0]
                low[u] = min(low[u], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack[w] = False
                    comp.append(w)
                    if w == v:
                        break
                out.append(comp)
    return out
