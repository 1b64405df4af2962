"""Block-lower-triangular ordering: strongly connected components of the matched system.

With every equation matched to the unknown it determines, unknown ``j`` depends on unknown
``k`` when the equation matched to ``j`` contains ``k``. Tarjan's algorithm (iterative, so
deep chains do not hit Python's recursion limit) returns the strongly connected components
in an order where every block only needs blocks before it: scalar blocks can then be solved
explicitly and algebraic loops stay as small implicit blocks.
"""

from __future__ import annotations

__all__ = ["Block", "tarjan_blocks"]


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


def tarjan_blocks(n: int, succ: list[list[int]]) -> list[list[int]]:
    """Strongly connected components of a digraph, dependencies first.

    ``succ[j]`` lists the nodes node ``j`` depends on.
    """
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
