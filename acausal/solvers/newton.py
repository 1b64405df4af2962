"""The one algebraic solver: damped Newton on ``F(w) = 0`` with CasADi derivatives.

Used for consistent initial values (states and algebraic variables from the start
values, the fixed conditions and the initial equations), and for the algebraic variables
given the states (a restart after an event, a change of state choice). The Jacobian is
exact (CasADi, sparse) or, for large dense blocks where forming it symbolically costs
O(n^3), a forward difference evaluated for all columns in one vectorised call.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import casadi as cs
import numpy as np

from ..errors import InitializationError
from ..records import record

__all__ = ["AlgebraicSystem", "NewtonResult", "NewtonFailure", "DIFFERENCE_JACOBIAN_MIN",
           "DENSE_STEP_MAX"]

#: unknowns above which an exact symbolic Jacobian is replaced by a difference Jacobian when
#: the caller allows it (``jacobian="auto"``)
DIFFERENCE_JACOBIAN_MIN = 50
#: unknowns up to which the Newton step is numpy's dense LAPACK solve (:func:`_small_step`,
#: so that small models need no scipy), above which it is scipy's dense or sparse LU
DENSE_STEP_MAX = 30
#: relative step of the forward differences (square root of the double precision epsilon)
_FD_STEP = 1.5e-8
#: smallest |pivot| / largest |pivot| of an LU step before the minimum-norm step is taken
#: instead (a Jacobian this close to singular is treated as singular)
_PIVOT_RATIO = 1e-12


def _small_step(J: np.ndarray, f: np.ndarray) -> np.ndarray | None:
    """``-J^-1 f`` by numpy's LAPACK (no scipy), or None when ``J`` is not square, is
    singular or nearly so (smallest singular value below :data:`_PIVOT_RATIO` times the
    largest: the rank test of the minimum-norm step) or the step is not finite."""
    n = f.size
    if J.shape != (n, n) or not np.all(np.isfinite(J)):
        return None
    s = np.linalg.svd(J, compute_uv=False)
    if not s[-1] > _PIVOT_RATIO * s[0]:
        return None
    x = np.linalg.solve(J, -f)
    return x if np.all(np.isfinite(x)) else None


def _pow2_inverse(m: np.ndarray) -> np.ndarray:
    """``1 / m`` rounded to a power of two (scaling by it is exact in floating point), 1
    where ``m`` is zero or not finite (an empty row or column, a NaN: left as it is)."""
    ok = np.isfinite(m) & (m > 0)
    return np.where(ok, np.exp2(-np.round(np.log2(np.where(ok, m, 1.0)))), 1.0)


def _abs_max(J: Any, axis: int) -> np.ndarray:
    """Largest |entry| of each row (``axis=1``) or column (``axis=0``) of a dense or scipy
    sparse matrix, over its finite entries."""
    if isinstance(J, np.ndarray):
        A = np.abs(J)
        return np.max(np.where(np.isfinite(A), A, 0.0), axis=axis, initial=0.0)
    A = abs(J).tocsr()
    A.data[~np.isfinite(A.data)] = 0.0
    return np.asarray(A.max(axis=axis).todense()).ravel()


def _equilibrate(J: Any) -> tuple[np.ndarray, np.ndarray]:
    """Row scales ``r`` then column scales ``c`` (powers of two) that bring the largest
    entry of every row, then of every column, of ``diag(r) J diag(c)`` to about 1, so that
    the rank test compares directions, not units: stiffness rows of 1e9 N/m next to length
    rows make a well-posed Jacobian look singular to 1e-19. A zero row or column keeps
    the scale 1 (it is a genuine singularity for the rank test to see)."""
    r = _pow2_inverse(_abs_max(J, 1))
    Jr = J * r[:, None] if isinstance(J, np.ndarray) else J.multiply(r[:, None]).tocsr()
    c = _pow2_inverse(_abs_max(Jr, 0))
    return r, c


def _dense_step(J: np.ndarray, f: np.ndarray) -> np.ndarray | None:
    """``-J^-1 f`` by scipy's dense LU, or None when a pivot is below :data:`_PIVOT_RATIO`
    times the largest, LAPACK fails or the step is not finite."""
    import scipy.linalg as sla

    try:
        lu, piv = sla.lu_factor(J, check_finite=False)
    except (ValueError, np.linalg.LinAlgError):
        return None
    d = np.abs(np.diag(lu))
    if not (d.size and d.min() > _PIVOT_RATIO * d.max()):
        return None
    step = sla.lu_solve((lu, piv), -f, check_finite=False)
    return step if np.all(np.isfinite(step)) else None


def _sparse_step(J: Any, f: np.ndarray) -> np.ndarray | None:
    """``-J^-1 f`` by scipy's sparse LU (``J`` in CSC), or None as :func:`_dense_step`."""
    import scipy.sparse.linalg as spla

    try:
        slu = spla.splu(J)
    except (RuntimeError, ValueError):  # exactly singular, or not square
        return None
    d = np.abs(slu.U.diagonal())
    if not (d.size and d.min() > _PIVOT_RATIO * d.max()):
        return None
    step = np.atleast_1d(slu.solve(-f))
    return step if np.all(np.isfinite(step)) else None


class NewtonFailure(InitializationError):
    """Newton did not converge: ``w`` where it stopped, ``residual`` there, ``labels``."""

    def __init__(self, message: str, w: np.ndarray, residual: np.ndarray,
                 labels: list[str]) -> None:
        super().__init__(message)
        self.w = w
        self.residual = residual
        self.labels = labels

    def worst(self, n: int = 5) -> list[tuple[str, float]]:
        """The ``n`` largest residuals with their labels."""
        order = np.argsort(-np.abs(np.nan_to_num(self.residual, nan=np.inf)))[:n]
        return [(self.labels[k] if k < len(self.labels) else f"row {k}",
                 float(self.residual[k])) for k in order]


@record
class NewtonResult:
    """Solution, the largest residual at it, and the number of iterations."""

    w: np.ndarray
    residual: float
    iterations: int


class AlgebraicSystem:
    """``F(w, a) = 0`` for the unknowns ``w`` given the arguments ``a``.

    Parameters
    ----------
    F : casadi.SX
        Residuals (column).
    w : casadi.SX
        Unknowns.
    a : casadi.SX
        Arguments (parameters, time, known states).
    labels : list of str
        One readable label per residual (named in failure messages).
    jacobian : {"exact", "difference", "auto"}
        How the Newton matrix is formed ("auto": difference above
        :data:`DIFFERENCE_JACOBIAN_MIN` unknowns).
    """

    def __init__(self, F: cs.SX, w: cs.SX, a: cs.SX, labels: Sequence[str],
                 jacobian: str = "auto") -> None:
        self.n = int(w.numel())
        self.labels = list(labels)
        if jacobian == "auto":
            jacobian = "difference" if self.n > DIFFERENCE_JACOBIAN_MIN else "exact"
        self.exact = jacobian == "exact"
        if self.exact:
            self._fJ = cs.Function("newton_fJ", [w, a], [F, cs.jacobian(F, w)])
        self._f = cs.Function("newton_f", [w, a], [F])

    def residual(self, w: np.ndarray, a: np.ndarray) -> np.ndarray:
        return np.asarray(self._f(w, a)).ravel()

    def _eval(self, w: np.ndarray, a: np.ndarray) -> tuple[np.ndarray, object]:
        if self.exact:
            f, J = self._fJ(w, a)
            return np.asarray(f).ravel(), J
        f = self.residual(w, a)
        h = _FD_STEP * np.maximum(1.0, np.abs(w))
        cols = w[:, None] + np.diag(h)
        Jd = (np.asarray(self._f(cols, a)) - f[:, None]) / h[None, :]  # all columns at once
        return f, Jd

    @staticmethod
    def _step(J: object, f: np.ndarray) -> np.ndarray:
        """The Newton step ``-J^-1 f``; the minimum-norm least-squares step when ``J`` is
        singular or nearly so (the free scale of a quaternion that only enters normalised,
        a fixed start that repeats another): an LU solve would throw the unknowns far along
        the null direction, where the problem is scaled so badly that Newton stalls.

        The rank test and the solve see ``J`` equilibrated (:func:`_equilibrate`, the
        minimum norm is then that of the scaled unknowns): the rows of a flexible link in a
        loop, stiffnesses of 1e9 N/m next to lengths of 1 m, make singular values 1e-19
        apart in a regular matrix, and the minimum-norm step dropped genuine directions
        (Newton stalled at residuals of 0.3 m where a plain step converges). Up to
        :data:`DENSE_STEP_MAX` unknowns numpy's dense solve (:func:`_small_step`); larger
        systems use scipy's dense or sparse LU."""
        n = f.size
        if n <= DENSE_STEP_MAX or isinstance(J, np.ndarray):
            Jd = np.asarray(J.full() if hasattr(J, "full") else J, dtype=float)
            r, c = _equilibrate(Jd)
            Js = (Jd * r[:, None]) * c[None, :]
            solve = _small_step if n <= DENSE_STEP_MAX else _dense_step
        else:
            import scipy.sparse as sp

            Jsp = sp.csr_matrix(J.sparse()) if hasattr(J, "sparse") else sp.csr_matrix(J)
            r, c = _equilibrate(Jsp)
            Js = sp.csc_matrix(sp.diags(r) @ Jsp @ sp.diags(c))
            solve = _sparse_step
        step = solve(Js, r * f)
        if step is None:
            dense = Js.toarray() if hasattr(Js, "toarray") else Js
            step = np.linalg.lstsq(dense, -r * f, rcond=_PIVOT_RATIO)[0]
        return c * step

    def solve(self, w0: np.ndarray, a: np.ndarray, *, tol: float = 1e-12,
              accept: float = 1e-8, max_iter: int = 100,
              what: str = "consistent values") -> NewtonResult:
        """Damped Newton from ``w0``; raises :class:`InitializationError` naming the
        largest residuals when it does not converge.

        Iterates until ``max |F| <= tol * max(1, max |w|)`` (or no further progress) and
        accepts the result if ``max |F| <= accept * max(1, max |w|)``.
        """
        w = np.array(w0, dtype=float).ravel()
        a = np.asarray(a, dtype=float).ravel()
        if self.n == 0:
            return NewtonResult(w, 0.0, 0)
        f, J = self._eval(w, a)
        norm = float(np.max(np.abs(f))) if f.size else 0.0
        it = 0
        for it in range(1, max_iter + 1):  # noqa: B007 - iterations reported
            if norm <= tol * max(1.0, float(np.max(np.abs(w)))):
                return NewtonResult(w, norm, it - 1)
            step = self._step(J, f)
            lam = 1.0
            while True:
                wn = w + lam * step
                fn, Jn = self._eval(wn, a)
                nn = float(np.max(np.abs(fn)))
                if (np.isfinite(nn) and nn < norm * (1 - 1e-4 * lam)) or lam < 1e-6:
                    break
                lam *= 0.5
            if not np.isfinite(nn) or lam < 1e-6 and nn >= norm:
                break
            w, f, J, norm = wn, fn, Jn, nn
        if norm <= accept * max(1.0, float(np.max(np.abs(w)))):
            return NewtonResult(w, norm, it)
        worst = np.argsort(-np.abs(np.nan_to_num(f, nan=np.inf)))[:5]
        raise NewtonFailure(
            f"no {what} found (Newton stopped with largest residual {norm:.3g}); largest "
            "residuals: "
            + "; ".join(f"{self.labels[k]}: {f[k]:.3g}" for k in worst if k < len(self.labels))
            + ". Check the fixed start values for consistency, or give better guesses "
            "(start values with fixed=False).", w, f, self.labels)
