"""The incidence of an equation system as integer arrays, for the passes after index
reduction.

:meth:`EquationSystem.incidence_matrix` reads each row's length with a Python generator
(a call per equation: 30 ms at 70 000 equations, and the passes after index reduction ask
for it four times). Here the rows are read in C (``map(len, ...)``,
``itertools.chain.from_iterable``), and a restriction to some columns is one gather.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from ..csr import CSR

if TYPE_CHECKING:
    from .system import EquationSystem

__all__ = ["incidence_csr", "int_array", "column_positions"]


def int_array(a: Sequence[int] | np.ndarray) -> np.ndarray:
    """``a`` as a 1-D int64 array."""
    return np.asarray(a, dtype=np.int64)


def column_positions(cols: np.ndarray, n: int) -> np.ndarray:
    """``pos[j]``: the position of ``j`` in ``cols``, ``-1`` for the others of ``0..n-1``."""
    pos = np.full(n, -1, dtype=np.int64)
    pos[cols] = np.arange(len(cols), dtype=np.int64)
    return pos


def incidence_csr(sys: EquationSystem, rows: Sequence[int] | np.ndarray | None = None,
                  cols: Sequence[int] | np.ndarray | None = None) -> CSR:
    """``sys.incidence_matrix(rows, cols)`` (the 0/1 incidence of the equations ``rows``
    on the unknowns ``cols``, all of either when ``None``), the same matrix."""
    inc = sys.incidence
    if rows is None:
        lists: Sequence[list[int]] = inc
        n_rows = len(inc)
    else:
        rows_l = rows.tolist() if isinstance(rows, np.ndarray) else list(rows)
        lists = list(map(inc.__getitem__, rows_l))
        n_rows = len(rows_l)
    lens = np.fromiter(map(len, lists), dtype=np.int64, count=n_rows)
    indptr = np.zeros(n_rows + 1, dtype=np.int64)
    np.cumsum(lens, out=indptr[1:])
    flat = np.fromiter(itertools.chain.from_iterable(lists), dtype=np.int64,
                       count=int(indptr[-1]))
    n_var = sys.n_vars
    r = np.repeat(np.arange(n_rows, dtype=np.int64), lens)
    if cols is None:
        return CSR.from_coo(r, flat, None, (n_rows, n_var))
    cols_a = int_array(cols)
    c = column_positions(cols_a, n_var)[flat]
    keep = c >= 0
    return CSR.from_coo(r[keep], c[keep], None, (n_rows, len(cols_a)))
