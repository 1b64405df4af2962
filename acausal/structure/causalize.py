"""Causalisation: which equation determines which unknown, in which order.

With the states chosen, every other unknown of the index-reduced system (state
derivatives, algebraic variables, dummy derivatives) must be determined by exactly one
equation: a maximum matching assigns them; Tarjan's algorithm on the matched dependency
graph gives the block-lower-triangular (BLT) order (:mod:`~acausal.structure.blt`); each
block gets a *level* so that the blocks of one level can be solved together.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..state import need
from .blt import Block, tarjan_blocks
from .diagnostics import StructureDiagnostics, structural_error
from .matching import match
from .system import EquationSystem

if TYPE_CHECKING:
    from ..state import CompileState

__all__ = ["Causalization", "causalize", "causalize_pass"]


@dataclass
class Causalization:
    """The BLT blocks of the system for one choice of states, dependencies first."""

    states: list[int]
    blocks: list[Block]

    @property
    def n_levels(self) -> int:
        return 1 + max((b.level for b in self.blocks), default=-1)

    def by_level(self) -> list[list[Block]]:
        """Blocks grouped by level, lowest first."""
        out: list[list[Block]] = []
        for b in self.blocks:
            while len(out) <= b.level:
                out.append([])
            out[b.level].append(b)
        return out


def causalize(sys: EquationSystem, states: list[int],
              diag: StructureDiagnostics | None = None) -> Causalization:
    """Match equations to the non-state unknowns and sort them into levelled BLT blocks."""
    sys = sys.for_states(states)  # implicit coordinates that are not states, listed
    state_set = set(states)
    unknowns = [j for j in range(sys.n_vars) if j not in state_set]
    eqs = list(range(sys.n_eqs))
    if len(unknowns) != len(eqs):
        raise structural_error(sys, eqs, unknowns, diag)
    inc = sys.incidence_matrix(eqs, unknowns)
    _, eq_of_var = match(inc)
    if (eq_of_var < 0).any():
        raise structural_error(sys, eqs, unknowns, diag)
    # unknown k depends on the other unknowns of the equation matched to it: the rows of
    # the incidence taken in matching order, without the diagonal (columns ascending,
    # as the neighbours' order decides the order of Tarjan's blocks)
    n = len(unknowns)
    starts = inc.indptr[eq_of_var]
    counts = inc.indptr[eq_of_var + 1] - starts
    row_ptr = np.concatenate(([0], np.cumsum(counts)))
    cols = inc.indices[np.repeat(starts - row_ptr[:-1], counts)
                       + np.arange(int(row_ptr[-1]))]  # (a CSR's rows are sorted)
    other = cols != np.repeat(np.arange(n), counts)
    ptr = np.concatenate(([0], np.cumsum(_row_sums(other, row_ptr))))
    idx = cols[other].tolist()
    ptr_l = ptr.tolist()
    succ = [idx[ptr_l[k]:ptr_l[k + 1]] for k in range(n)]
    comps = tarjan_blocks(n, succ)
    block_of = [0] * n
    for b_i, comp in enumerate(comps):
        for k in comp:
            block_of[k] = b_i
    level = [0] * len(comps)
    blocks: list[Block] = []
    eq_of = eq_of_var.tolist()
    for b_i, comp in enumerate(comps):
        lv = 0
        for k in comp:
            for m in succ[k]:
                bm = block_of[m]
                if bm != b_i and level[bm] >= lv:
                    lv = level[bm] + 1
        level[b_i] = lv
        ks = sorted(comp)
        blocks.append(Block([eqs[eq_of[k]] for k in ks], [unknowns[k] for k in ks], lv))
    return Causalization(list(states), blocks)


def _row_sums(flags: np.ndarray, indptr: np.ndarray) -> np.ndarray:
    """How many entries of each row of a compressed row storage are flagged."""
    c = np.concatenate(([0], np.cumsum(flags, dtype=np.int64)))
    return c[indptr[1:]] - c[indptr[:-1]]


def causalize_pass(state: CompileState) -> CompileState:
    """Pass: BLT blocks for the selected states."""
    sys = need(state.system, "the index-reduced system (index reduction pass)")
    sel = need(state.selection, "the chosen states (state selection pass)")
    return state.update(causal=causalize(sys, sel.states, state.diagnostics))
