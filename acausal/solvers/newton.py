"""The one algebraic solver: damped Newton on ``F(w) = 0`` with CasADi derivatives.

Used for consistent initial values (states and algebraic variables from the start
values, the fixed conditions and the initial equations), and for the algebraic variables
given the states (a restart after an event, a change of state choice). The Jacobian is
exact (CasADi, sparse) or, for large dense blocks where forming it symbolically costs
O(n^3), a forward difference evaluated for all columns in one vectorised call.
"""

from __future__ import annotations

from collections.abc import Sequence

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

        Up to :data:`DENSE_STEP_MAX` unknowns numpy's dense solve (:func:`_small_step`);
        larger systems use scipy's dense or sparse LU."""
        n = f.size
        if n <= DENSE_STEP_MAX:
            Jd = np.asarray(J.full() if hasattr(J, "full") else J, dtype=float)
            step = _small_step(Jd, f)
            if step is not None:
                return step
            return np.linalg.lstsq(Jd, -f, rcond=_PIVOT_RATIO)[0]
        if isinstance(J, np.ndarray):
            import scipy.linalg as sla

            try:
                lu, piv = sla.lu_factor(J, check_finite=False)
                d = np.abs(np.diag(lu))
                if d.size and d.min() > _PIVOT_RATIO * d.max():
                    step = sla.lu_solve((lu, piv), -f, check_finite=False)
                    if np.all(np.isfinite(step)):
                        return step
            except (ValueError, np.linalg.LinAlgError):
                pass
            return np.linalg.lstsq(J, -f, rcond=_PIVOT_RATIO)[0]
        import scipy.sparse as sp
        import scipy.sparse.linalg as spla

        Js = sp.csc_matrix(J.sparse()) if hasattr(J, "sparse") else sp.csc_matrix(J)
        try:
            slu = spla.splu(Js)
            d = np.abs(slu.U.diagonal())
            if d.size and d.min() > _PIVOT_RATIO * d.max():
                step = slu.solve(-f)
                if np.all(np.isfinite(step)):
                    return np.atleast_1d(step)
        except RuntimeError:  # exactly singular
            pass
        return np.linalg.lstsq(Js.toarray(), -f, rcond=_PIVOT_RATIO)[0]

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
