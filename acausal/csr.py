"""A small compressed-sparse-row matrix on numpy arrays, for the structural passes.

The incidence of equations and unknowns and the cutset matrix of a graph are stored here
instead of in ``scipy.sparse``, so that building a small model never imports scipy (0.3 to
0.6 s on a cold start, more than the whole build and simulation of a small circuit). The
large-system paths convert with :meth:`CSR.to_scipy` at the point where they call a scipy
routine.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["CSR", "as_csr", "offsets", "spread", "unique"]


class CSR:
    """Rows ``i`` hold ``indices[indptr[i]:indptr[i+1]]`` with values ``data[...]``.

    Column indices are sorted within each row and unique (the constructors guarantee it).
    (A plain class: a dataclass costs a fraction of a millisecond more at import.)
    """

    __slots__ = ("indptr", "indices", "data", "shape")

    def __init__(self, indptr: np.ndarray, indices: np.ndarray, data: np.ndarray,
                 shape: tuple[int, int]) -> None:
        self.indptr, self.indices, self.data, self.shape = indptr, indices, data, shape

    @classmethod
    def from_coo(cls, rows: Sequence[int] | np.ndarray, cols: Sequence[int] | np.ndarray,
                 vals: Sequence[float] | np.ndarray | None, shape: tuple[int, int]) -> CSR:
        """From triplets without duplicates (``vals`` None: all ones)."""
        r = np.asarray(rows, dtype=np.int64)
        c = np.asarray(cols, dtype=np.int64)
        v = np.ones(len(r)) if vals is None else np.asarray(vals, dtype=float)
        key = r * max(int(shape[1]), 1) + c
        if key.size > 1 and not bool(np.all(key[1:] > key[:-1])):  # not yet in row order
            order = np.argsort(key, kind="stable")
            r, c, v = r[order], c[order], v[order]
        counts = np.bincount(r, minlength=shape[0]) if r.size else np.zeros(shape[0], np.int64)
        indptr = np.zeros(shape[0] + 1, dtype=np.int64)
        np.cumsum(counts, out=indptr[1:])
        return cls(indptr, c, v, (int(shape[0]), int(shape[1])))

    @classmethod
    def from_dense(cls, a: Any) -> CSR:
        a = np.atleast_2d(np.asarray(a, dtype=float))
        r, c = np.nonzero(a)
        return cls.from_coo(r, c, a[r, c], (a.shape[0], a.shape[1]))

    @property
    def nnz(self) -> int:
        return int(self.indptr[-1])

    def row(self, i: int) -> np.ndarray:
        return self.indices[self.indptr[i]:self.indptr[i + 1]]

    def rows_of_entries(self) -> np.ndarray:
        """The row index of every stored entry (the COO row array)."""
        return np.repeat(np.arange(self.shape[0], dtype=np.int64), np.diff(self.indptr))

    @property
    def T(self) -> CSR:  # noqa: N802 - as numpy and scipy spell it
        return CSR.from_coo(self.indices, self.rows_of_entries(), self.data,
                            (self.shape[1], self.shape[0]))

    def toarray(self) -> np.ndarray:
        out = np.zeros(self.shape)
        out[self.rows_of_entries(), self.indices] = self.data
        return out

    def dot(self, W: np.ndarray) -> np.ndarray:
        """``self @ W`` for a dense ``W`` (a temporary of ``nnz x W.shape[1]``: meant for
        small matrices; large ones multiply faster as :meth:`to_scipy`)."""
        out = np.zeros((self.shape[0], W.shape[1]))
        if self.nnz:
            rows = np.flatnonzero(np.diff(self.indptr))
            out[rows] = np.add.reduceat(self.data[:, None] * W[self.indices],
                                        self.indptr[rows], axis=0)
        return out

    def to_scipy(self) -> Any:
        """The same matrix as a ``scipy.sparse.csr_matrix`` (imports scipy)."""
        import scipy.sparse as sp

        return sp.csr_matrix((self.data, self.indices, self.indptr), shape=self.shape)


def as_csr(a: Any) -> CSR:
    """A :class:`CSR` from a :class:`CSR`, a scipy sparse matrix or a dense array."""
    if isinstance(a, CSR):
        return a
    if hasattr(a, "tocsr"):  # scipy.sparse, without importing scipy here
        m = a.tocsr(copy=True)
        m.sum_duplicates()  # sorted, unique column indices
        return CSR(np.asarray(m.indptr, dtype=np.int64), np.asarray(m.indices, dtype=np.int64),
                   np.asarray(m.data, dtype=float), (int(m.shape[0]), int(m.shape[1])))
    return CSR.from_dense(a)


def unique(a: np.ndarray) -> np.ndarray:
    """The sorted distinct values of a 1-D array: ``np.unique`` without its check for masked
    arrays, which imports ``numpy.ma`` (about 10 ms of a cold start) on first use."""
    a = np.sort(np.asarray(a).ravel())
    if len(a) < 2:
        return a
    keep = np.empty(len(a), dtype=bool)
    keep[0] = True
    np.not_equal(a[1:], a[:-1], out=keep[1:])
    return a[keep]



def offsets(sizes: Sequence[int] | np.ndarray) -> np.ndarray:
    """Start of each item of ``sizes`` entries laid end to end (one more entry: the
    total)."""
    off = np.zeros(len(sizes) + 1, dtype=np.int64)
    np.cumsum(sizes, out=off[1:])
    return off


def spread(starts: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """The positions ``starts[k] .. starts[k] + sizes[k] - 1`` of every item, in item
    order (the entries of some rows of a compressed row storage, say)."""
    if not len(sizes) or (sizes == 1).all():
        return np.asarray(starts, dtype=np.int64)
    reps = np.repeat(starts - offsets(sizes)[:-1], sizes)
    return reps + np.arange(int(sizes.sum()))
