"""The eigenvalues of largest magnitude of a large real matrix, known by its products with
vectors: Arnoldi's iteration restarted in Stewart's Krylov-Schur manner, on numpy.

The automatic integrator choice (:mod:`acausal.solvers.choice`) needs the 8 fastest modes
of an explicit ODE's Jacobian to about 1e-3. ARPACK (``scipy.sparse.linalg.eigs``) gives
them in a few dozen products, but importing scipy costs 0.25-0.35 s, several times the
whole analysis of a 10 000-mass chain; this routine needs nothing beyond numpy.

The method (G. W. Stewart, *A Krylov-Schur algorithm for large eigenproblems*, SIAM J.
Matrix Anal. Appl. 23, 2001):

* **Arnoldi**: ``A V_m = V_m H_m + v_{m+1} b^T`` with ``V`` orthonormal (classical
  Gram-Schmidt applied twice, which keeps ``V`` orthonormal to rounding).
* **Ritz values**: the eigenvalues ``theta`` of the small matrix ``H_m``; the residual of
  the pair ``(theta, V_m y)`` with ``|y| = 1`` is ``|b^T y|``. A value has converged when
  that is at most ``tol |theta|`` (ARPACK's test).
* **Restart**: the Ritz vectors of the wanted values span an invariant subspace of
  ``H_m``; an orthonormal real basis ``Q`` of it (the real and imaginary parts of a
  complex pair's vectors span the pair's plane) keeps the relation, with ``T = Q^T H_m Q``
  and ``b^T Q``, for ``V_m Q``; the iteration goes on from ``v_{m+1}``. Working on the
  real invariant subspace instead of the real Schur form that Stewart reorders keeps the
  arithmetic real and needs only ``numpy.linalg.eig``.

The start vector is fixed (a golden-ratio sequence), so the same matrix gives the same
values in every run (ARPACK starts from a random vector).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = ["largest_eigenvalues"]

_PHI = (np.sqrt(5.0) - 1.0) / 2.0


def largest_eigenvalues(matvec: Callable[[np.ndarray], np.ndarray], n: int, k: int = 8,
                        tol: float = 1e-3, basis: int = 20, max_restarts: int = 500
                        ) -> tuple[np.ndarray, bool]:
    """The ``k`` eigenvalues of largest magnitude of the real ``n x n`` matrix ``A`` whose
    product with a real vector is ``matvec`` (``k + 1`` when the last one's conjugate
    pair straddles the cut), and whether all of them converged to ``tol``; if not, the
    converged ones (none if a product is not finite).

    ``basis`` vectors at most are kept (ARPACK's default, ``max(2 k + 1, 20)``); an
    invariant subspace found on the way gives its eigenvalues exactly."""
    if n <= 0:
        return np.zeros(0, complex), True
    m = min(n, max(basis, 2 * k + 1))
    V = np.zeros((m + 1, n))  # (the basis vectors as rows: contiguous products)
    H = np.zeros((m + 1, m))
    v = 1.0 + ((np.arange(1, n + 1) * _PHI) % 1.0)  # (no sign pattern, all of one sign)
    v -= v.mean() * (np.arange(n) % 2)  # (and not a constant vector either)
    V[0] = v / np.linalg.norm(v)
    j0 = 0
    theta = np.zeros(0, complex)
    done = np.zeros(0, bool)
    for _ in range(max_restarts):
        j = _expand(matvec, V, H, j0, m)
        if not np.isfinite(H[:j + 1, :j]).all():  # (a product not finite: no spectrum)
            return np.zeros(0, complex), False
        theta, Y = np.linalg.eig(H[:j, :j])
        order = np.argsort(-np.abs(theta), kind="stable")
        theta, Y = theta[order], Y[:, order]
        resid = np.abs(H[j, :j] @ Y)  # (|y| = 1 from eig)
        done = resid <= tol * np.abs(theta)
        want = _wanted(theta, k)
        if j < m or done[:want].all():  # (an invariant subspace: every value exact)
            return theta[:want], True
        keep = _wanted(theta, min(m - 2, max(k + (m - k) // 2, want)))
        Q = _real_basis(theta[:keep], Y[:, :keep])
        p = Q.shape[1]
        T, b = Q.T @ H[:m, :m] @ Q, H[m, :m] @ Q
        V[:p] = Q.T @ V[:m]
        V[p] = V[m]
        H[:] = 0.0
        H[:p, :p], H[p, :p] = T, b
        j0 = p
    want = _wanted(theta, k)
    return theta[:want][done[:want]], False


def _expand(matvec: Callable[[np.ndarray], np.ndarray], V: np.ndarray, H: np.ndarray,
            j0: int, m: int) -> int:
    """Arnoldi's steps from column ``j0`` to ``m`` (fewer if the space closes: an
    invariant subspace); the number of columns of ``V`` made."""
    for j in range(j0, m):
        B = V[:j + 1]
        w = np.asarray(matvec(V[j]), dtype=float).ravel()
        h = B @ w
        w = w - h @ B
        h2 = B @ w  # (the second pass: orthonormal to rounding)
        w -= h2 @ B
        H[:j + 1, j] = h + h2
        beta = float(np.linalg.norm(w))
        H[j + 1, j] = beta
        scale = max(float(np.abs(H[:j + 2, :j + 1]).max()), np.finfo(float).tiny)
        if beta <= 1e-13 * scale:  # (A maps the space into itself)
            return j + 1
        V[j + 1] = w / beta
    return m


def _wanted(theta: np.ndarray, count: int) -> int:
    """How many of ``theta`` (sorted by decreasing magnitude, conjugate pairs adjacent)
    to take for ``count``: one more where the cut would split a pair."""
    count = min(count, len(theta))
    if 0 < count < len(theta) and theta[count - 1].imag != 0.0 and (
            theta[count] == np.conj(theta[count - 1])):
        count += 1
    return count


def _real_basis(theta: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """An orthonormal real basis of the span of the Ritz vectors ``Y`` of ``theta``
    (closed under conjugation: a pair's vectors give their real and imaginary parts)."""
    cols = [Y[:, i].real if t.imag == 0.0 else (Y[:, i].real if t.imag > 0 else Y[:, i].imag)
            for i, t in enumerate(theta)]
    return np.linalg.qr(np.column_stack(cols))[0]
