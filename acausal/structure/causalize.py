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
        out: list[list[Block]] = [[] for _ in range(self.n_levels)]
        for b in self.blocks:
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
    upos = {j: k for k, j in enumerate(unknowns)}
    succ: list[list[int]] = []
    for k, j in enumerate(unknowns):
        i = eq_of_var[k]
        succ.append([upos[m] for m in sys.incidence[eqs[i]] if m in upos and m != j])
    comps = tarjan_blocks(len(unknowns), succ)
    block_of = np.empty(len(unknowns), dtype=int)
    for b_i, comp in enumerate(comps):
        block_of[comp] = b_i
    level = np.zeros(len(comps), dtype=int)
    blocks: list[Block] = []
    for b_i, comp in enumerate(comps):
        lv = 0
        for k in comp:
            for m in succ[k]:
                if block_of[m] != b_i:
                    lv = max(lv, level[block_of[m]] + 1)
        level[b_i] = lv
        ks = sorted(comp)
        blocks.append(Block([eqs[eq_of_var[k]] for k in ks], [unknowns[k] for k in ks],
                            int(lv)))
    return Causalization(list(states), blocks)


def causalize_pass(state: CompileState) -> CompileState:
    """Pass: BLT blocks for the selected states."""
    sys = need(state.system, "the index-reduced system (index reduction pass)")
    sel = need(state.selection, "the chosen states (state selection pass)")
    return state.update(causal=causalize(sys, sel.states, state.diagnostics))
