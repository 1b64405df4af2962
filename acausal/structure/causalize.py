"""Causalisation: which equation determines which unknown, in which order.

With the states chosen, every other unknown of the index-reduced system (state
derivatives, algebraic variables, dummy derivatives) must be determined by exactly one
equation: a maximum matching assigns them; Tarjan's algorithm on the matched dependency
graph gives the block-lower-triangular (BLT) order (:mod:`~acausal.structure.blt`); each
block gets a *level* so that the blocks of one level can be solved together.
"""

from __future__ import annotations

from dataclasses import field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..csr import CSR, offsets, spread
from ..records import record
from ..state import need
from .blt import Block, Blocks, strong_components
from .diagnostics import StructureDiagnostics, structural_error
from .incidence import column_positions, int_array
from .matching import match
from .system import EquationSystem

if TYPE_CHECKING:
    from ..state import CompileState

__all__ = ["Causalization", "causalize", "causalize_pass"]

_SWEEPS = 32  # array relaxations of the levels before the pass in block order


@record
class Causalization:
    """The BLT blocks of the system for one choice of states, dependencies first."""

    states: list[int]
    blocks: Blocks
    #: (the system causalised and its incidence on every unknown, for the block solution
    #: of the same system: read once, not twice; not saved with the model)
    incidence: tuple[EquationSystem, CSR] | None = field(default=None, repr=False,
                                                        compare=False)

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "incidence": None}

    def incidence_of(self, sys: EquationSystem) -> CSR:
        """``sys.incidence_matrix()``, the one read by :func:`causalize` if it was read
        of this system (the same object, of the same size)."""
        got = self.incidence
        if (got is not None and got[0] is sys and got[1].shape == (sys.n_eqs, sys.n_vars)
                and len(sys.incidence) == sys.n_eqs):
            return got[1]
        return sys.incidence_matrix()

    @property
    def n_levels(self) -> int:
        return 1 + int(self.blocks.levels.max()) if len(self.blocks) else 0

    def by_level(self) -> list[list[Block]]:
        """Blocks grouped by level, lowest first."""
        return [self.blocks.take(ks) for ks in self.blocks.level_indices()]


def causalize(sys: EquationSystem, states: list[int],
              diag: StructureDiagnostics | None = None) -> Causalization:
    """Match equations to the non-state unknowns and sort them into levelled BLT blocks."""
    sys = sys.for_states(states)  # implicit coordinates that are not states, listed
    is_state = np.zeros(sys.n_vars, dtype=bool)
    is_state[int_array(states)] = True
    unknowns = np.flatnonzero(~is_state)
    n_eqs = sys.n_eqs
    if len(unknowns) != n_eqs:
        raise structural_error(sys, list(range(n_eqs)), unknowns.tolist(), diag)
    # (the incidence on every unknown read once, kept for the block solution; the
    # unknowns' columns taken from it as incidence_matrix(cols=unknowns) takes them)
    full = sys.incidence_matrix()
    c = column_positions(unknowns, sys.n_vars)[full.indices]
    keep = c >= 0
    inc = CSR.from_coo(full.rows_of_entries()[keep], c[keep], None, (n_eqs, len(unknowns)))
    _, eq_of_var = match(inc)
    if (eq_of_var < 0).any():
        raise structural_error(sys, list(range(n_eqs)), unknowns.tolist(), diag)
    # unknown k depends on the other unknowns of the equation matched to it: the rows of
    # the incidence taken in matching order, without the diagonal (columns ascending,
    # as the neighbours' order decides the order of Tarjan's blocks)
    n = len(unknowns)
    starts = inc.indptr[eq_of_var]
    counts = inc.indptr[eq_of_var + 1] - starts
    row_ptr = offsets(counts)
    cols = inc.indices[spread(starts, counts)]  # (a CSR's rows are sorted)
    other = cols != np.repeat(np.arange(n), counts)
    ptr = np.concatenate(([0], np.cumsum(_row_sums(other, row_ptr))))
    dep = cols[other]
    ks, sizes = strong_components(n, ptr, dep)  # (each block's unknowns ascending)
    n_b = len(sizes)
    block_of = np.empty(n, dtype=np.int64)
    block_of[ks] = np.repeat(np.arange(n_b), sizes)
    # the dependencies between blocks (a block comes after the blocks it needs)
    b_from = block_of[np.repeat(np.arange(n), np.diff(ptr))]
    b_to = block_of[dep]
    between = b_from != b_to
    level = _levels(n_b, b_from[between], b_to[between])
    # the blocks as arrays (:class:`Blocks`), each block's unknowns in ascending order
    blocks = Blocks(offsets(sizes), eq_of_var[ks].astype(np.int64), unknowns[ks], level)
    return Causalization(list(states), blocks, (sys, full))


def _levels(n_b: int, b_from: np.ndarray, b_to: np.ndarray) -> np.ndarray:
    """Level of each block: 1 + the highest level of the blocks it needs (0: none), for
    blocks in an order where each comes after those it needs (``b_to < b_from``); an
    array (the blocks keep one: no list of a large model's hundreds of thousands of
    levels made and read back).

    Relaxed on arrays, one sweep per level (a few for most models); a chain of dependencies
    deeper than that is finished in one pass in block order."""
    order = np.argsort(b_from, kind="stable")
    b_from, b_to = b_from[order], b_to[order]
    heads = np.flatnonzero(np.r_[True, b_from[1:] != b_from[:-1]]) if len(b_from) else b_from
    level = np.zeros(n_b, dtype=np.int64)
    for _ in range(_SWEEPS):
        if not len(b_from):
            break
        new = np.zeros(n_b, dtype=np.int64)
        new[b_from[heads]] = np.maximum.reduceat(level[b_to] + 1, heads)
        if np.array_equal(new, level):
            break
        level = new
    else:  # deep: one pass in block order
        lv = [0] * n_b
        starts = np.searchsorted(b_from, np.arange(n_b + 1)).tolist()
        to = b_to.tolist()
        for b in range(n_b):
            for m in to[starts[b]:starts[b + 1]]:
                if lv[m] >= lv[b]:
                    lv[b] = lv[m] + 1
        return np.asarray(lv, dtype=np.int64)
    return level


def _row_sums(flags: np.ndarray, indptr: np.ndarray) -> np.ndarray:
    """How many entries of each row of a compressed row storage are flagged."""
    c = np.concatenate(([0], np.cumsum(flags, dtype=np.int64)))
    return c[indptr[1:]] - c[indptr[:-1]]


def causalize_pass(state: CompileState) -> CompileState:
    """Pass: BLT blocks for the selected states."""
    sys = need(state.system, "the index-reduced system (index reduction pass)")
    sel = need(state.selection, "the chosen states (state selection pass)")
    return state.update(causal=causalize(sys, sel.states, state.diagnostics))
