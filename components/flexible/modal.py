"""Eigenmodes and modal reduction (free-interface and Craig-Bampton).

All eigenproblems ``K phi = omega^2 M phi`` are solved with ARPACK in
shift-invert mode around a negative shift (so that a free structure, whose
stiffness is singular, is handled without special cases); the factorisation is a
SuperLU decomposition of ``K - sigma M`` (COLAMD ordering).
Mode shapes are mass-normalised: ``Phi^T M Phi = I``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from numpy.typing import ArrayLike, NDArray

from .errors import FEError

__all__ = ["Modes", "CraigBampton", "craig_bampton", "dense_eig", "eigenmodes",
           "free_interface_modes", "modal_damping_ratios"]


@dataclass(frozen=True)
class Modes:
    """Result of a modal analysis.

    Attributes
    ----------
    omega : ndarray, shape (k,)
        Circular frequencies [rad/s].
    shapes : ndarray, shape (n_dofs, k)
        Mass-normalised mode shapes over all DOFs (zero at fixed DOFs) [m/sqrt(kg)].
    fixed_dofs : ndarray of int
        DOFs that were constrained.
    """

    omega: NDArray[np.float64]
    shapes: NDArray[np.float64]
    fixed_dofs: NDArray[np.int64]

    @property
    def frequencies(self) -> NDArray[np.float64]:
        """Natural frequencies [Hz]."""
        return self.omega / (2.0 * np.pi)


def _free_index(n: int, fixed: ArrayLike) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    fx = np.unique(np.asarray(fixed, np.int64).ravel())
    if fx.size and (fx.min() < 0 or fx.max() >= n):
        raise FEError(f"fixed DOF index outside 0..{n - 1}")
    return np.setdiff1d(np.arange(n), fx), fx


def _default_shift(K: sp.spmatrix, M: sp.spmatrix) -> float:
    dk = np.abs(K.diagonal())
    dm = np.abs(M.diagonal())
    ratio = np.median(dk[dm > 0] / dm[dm > 0]) if np.any(dm > 0) else 1.0
    return -1e-6 * float(ratio)


def dense_eig(K: NDArray[np.float64], M: NDArray[np.float64], sigma: float | None = None
              ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """All finite eigenpairs of a dense symmetric pencil, robust to a singular M.

    Solves ``M x = mu (K - sigma M) x`` (right-hand side positive definite for a
    negative shift) and returns ``lambda = sigma + 1/mu`` in ascending order;
    directions without mass (``mu = 0``, infinite frequency, e.g. the drilling
    rotations of a shell) are dropped. Vectors are mass-normalised.
    """
    K = np.asarray(K, float)
    M = np.asarray(M, float)
    if sigma is None:
        dk, dm = np.abs(np.diag(K)), np.abs(np.diag(M))
        ratio = np.median(dk[dm > 0] / dm[dm > 0]) if np.any(dm > 0) else 1.0
        sigma = -1e-6 * float(ratio)
    mu, X = sla.eigh(0.5 * (M + M.T), 0.5 * (K + K.T) - sigma * M)
    keep = mu > 1e-12 * np.max(np.abs(mu))
    mu, X = mu[keep], X[:, keep]
    lam = sigma + 1.0 / mu
    o = np.argsort(lam)
    lam, X = lam[o], X[:, o]
    X = X / np.sqrt(np.einsum("ij,ij->j", X, M @ X))
    return lam, X


def _arpack(K: sp.spmatrix, M: sp.spmatrix, k: int, sigma: float,
            opinv: spla.LinearOperator) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    lam, V = spla.eigsh(sp.csr_matrix(K), k=k, M=sp.csr_matrix(M), sigma=sigma, which="LM",
                        OPinv=opinv)
    o = np.argsort(lam)
    lam, V = lam[o], V[:, o]
    mn = np.sqrt(np.einsum("ij,ij->j", V, M @ V))
    return lam, V / mn


def _solve_sym(K: sp.spmatrix, M: sp.spmatrix, k: int, sigma: float | None
               ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Lowest ``k`` eigenpairs of the symmetric pencil (K, M).

    Default shift: 0 (best convergence) if ``K`` factorises, else a small
    negative shift scaled on ``diag K / diag M`` (singular, unconstrained K).
    """
    n = K.shape[0]
    if k <= 0:
        raise FEError(f"number of modes must be >= 1, got {k}")
    if k >= n - 1 or n <= 200:
        lam, V = dense_eig(K.toarray(), M.toarray(), sigma)
        if lam.size < k:
            raise FEError(f"only {lam.size} modes with non-zero mass exist, asked for {k}")
        return lam[:k], V[:, :k]
    shifts = [0.0, _default_shift(K, M)] if sigma is None else [float(sigma)]
    last: Exception | None = None
    for s in shifts:
        try:
            lu = spla.splu(sp.csc_matrix(K - s * M), permc_spec="COLAMD")
        except RuntimeError as exc:  # exactly singular: K not constrained
            last = exc
            continue
        # reject near-singular factors (tiny pivots of an unconstrained K)
        u = np.abs(lu.U.diagonal())
        if s == 0.0 and sigma is None and u.min() < 1e-10 * u.max():
            continue
        op = spla.LinearOperator((n, n), matvec=lu.solve, dtype=float)
        return _arpack(K, M, k, s, op)
    raise FEError(f"could not factorise K - sigma M ({last}); give an explicit sigma")


def eigenmodes(K: sp.spmatrix, M: sp.spmatrix, n_modes: int, fixed_dofs: ArrayLike = (),
               sigma: float | None = None) -> Modes:
    """Lowest natural modes of ``(K, M)`` with DOFs ``fixed_dofs`` clamped.

    Parameters
    ----------
    K, M : sparse matrix, shape (n, n)
        Stiffness [N/m...] and mass [kg...].
    n_modes : int
        Number of modes.
    fixed_dofs : array_like of int
        Constrained DOFs.
    sigma : float, optional
        Shift [rad^2/s^2]; default a small negative value scaled on ``diag K / diag M``.

    Returns
    -------
    Modes
        Rigid-body modes of an unconstrained structure appear with ``omega ~ 0``.
    """
    K = sp.csr_matrix(K)
    M = sp.csr_matrix(M)
    free, fx = _free_index(K.shape[0], fixed_dofs)
    lam, V = _solve_sym(K[free][:, free], M[free][:, free], n_modes, sigma)
    shapes = np.zeros((K.shape[0], V.shape[1]))
    shapes[free] = V
    return Modes(omega=np.sqrt(np.clip(lam, 0.0, None)), shapes=shapes, fixed_dofs=fx)


def free_interface_modes(K: sp.spmatrix, M: sp.spmatrix, n_modes: int,
                         rigid_modes: NDArray[np.float64]) -> Modes:
    """Elastic modes of a free structure, rigid-body modes removed.

    Parameters
    ----------
    K, M : sparse matrix
        Stiffness and mass of the unconstrained structure.
    n_modes : int
        Number of elastic modes kept.
    rigid_modes : ndarray, shape (n, r)
        Geometric rigid-body vectors (e.g. :meth:`FEModel.rigid_body_modes`).

    Returns
    -------
    Modes
        Elastic modes, M-orthogonal to every rigid-body motion (so the body
        frame is a linearised Tisserand/mean-axis frame: ``int rho S dV Phi = 0``
        and ``int rho u0~ S dV Phi = 0``).

    Notes
    -----
    The rigid modes are removed exactly, not detected by a frequency threshold:
    the eigenproblem is solved on the M-orthogonal complement of ``rigid_modes``
    (dense for small models, with the elastic flexibility operator otherwise).
    """
    K = sp.csr_matrix(K)
    M = sp.csr_matrix(M)
    n = K.shape[0]
    Rg = np.asarray(rigid_modes, float)
    if Rg.ndim != 2 or Rg.shape[0] != n:
        raise FEError(f"rigid_modes must have shape ({n}, r), got {Rg.shape}")
    resid = float(np.linalg.norm(K @ Rg)) / max(
        float(np.linalg.norm(K.diagonal()) * np.linalg.norm(Rg)), 1e-300)
    if resid > 1e-8:
        raise FEError("free_interface_modes: the stiffness resists a rigid-body motion "
                      f"(relative residual {resid:.2e}); the model is constrained, use "
                      "eigenmodes(..., fixed_dofs=...) or check the elements")
    MR = M @ Rg
    RMR = Rg.T @ MR
    r = Rg.shape[1]
    if n_modes < 1 or n_modes > n - r:
        raise FEError(f"n_modes must be in 1..{n - r}, got {n_modes}")
    if n <= 600:
        Z = sla.null_space(MR.T)  # M-orthogonal complement of the rigid modes
        lam, Y = dense_eig(Z.T @ (K @ Z), Z.T @ (M @ Z), 0.0)  # K > 0 on the complement
        V = Z @ Y[:, :n_modes]
    else:
        # elastic flexibility: G_e = P K_c^-1 P^T with K_c the stiffness supported on a
        # statically determinate set (the DOFs that best resolve the rigid modes) and P the
        # M-orthogonal projector off the rigid modes. Shift-invert at 0 on G_e converges like
        # a constrained problem and never returns rigid-body modes.
        sup = _determinate_support(Rg)
        free = np.setdiff1d(np.arange(n), sup)
        lu = spla.splu(sp.csc_matrix(K[free][:, free]), permc_spec="COLAMD")

        def proj(x: NDArray[np.float64]) -> NDArray[np.float64]:
            """P x: remove the rigid-body content (M-orthogonal projection)."""
            return x - Rg @ np.linalg.solve(RMR, MR.T @ x)

        def projT(x: NDArray[np.float64]) -> NDArray[np.float64]:
            """P^T x: make a load self-equilibrated (no resultant on rigid modes)."""
            return x - MR @ np.linalg.solve(RMR, Rg.T @ x)

        def ge(b: NDArray[np.float64]) -> NDArray[np.float64]:
            """Elastic flexibility G_e b = P K_c^-1 P^T b."""
            y = np.zeros(n)
            y[free] = lu.solve(projT(b)[free])
            return proj(y)

        op = spla.LinearOperator((n, n), matvec=ge, dtype=float)
        _, V = _arpack(K, M, n_modes, 0.0, op)
    # remove any numerical rigid-body content, then re-orthonormalise in the pencil
    V = V - Rg @ np.linalg.solve(RMR, MR.T @ V)
    lam2, Q = dense_eig(V.T @ (K @ V), V.T @ (M @ V), 0.0)
    V = V @ Q
    return Modes(omega=np.sqrt(np.clip(lam2, 0.0, None)), shapes=V,
                 fixed_dofs=np.zeros(0, np.int64))


def _determinate_support(Rg: NDArray[np.float64]) -> NDArray[np.int64]:
    """DOFs whose rows of the rigid-mode matrix are best conditioned (pivoted QR)."""
    r = Rg.shape[1]
    _, _, piv = sla.qr(Rg.T, mode="economic", pivoting=True)
    return np.sort(piv[:r])


@dataclass(frozen=True)
class CraigBampton:
    """Craig-Bampton reduction basis and reduced matrices.

    Attributes
    ----------
    basis : ndarray, shape (n_dofs, n_b + k)
        ``[Psi | Phi]``: static constraint modes (unit displacement of each
        interface DOF, others free) followed by fixed-interface normal modes.
    interface_dofs : ndarray of int
        Boundary DOFs (retained physically, first ``n_b`` coordinates).
    fixed_dofs : ndarray of int
        DOFs clamped to zero (excluded from the basis).
    K_r, M_r : ndarray
        Reduced stiffness and mass.
    fixed_interface_omega : ndarray, shape (k,)
        Circular frequencies of the fixed-interface modes [rad/s].
    """

    basis: NDArray[np.float64]
    interface_dofs: NDArray[np.int64]
    fixed_dofs: NDArray[np.int64]
    K_r: NDArray[np.float64]
    M_r: NDArray[np.float64]
    fixed_interface_omega: NDArray[np.float64]

    def frequencies(self, n: int | None = None) -> NDArray[np.float64]:
        """Natural frequencies of the reduced model [Hz] (rigid modes included)."""
        lam, _ = dense_eig(self.K_r, self.M_r)
        f = np.sqrt(np.clip(lam, 0, None)) / (2 * np.pi)
        return f if n is None else f[:n]


def craig_bampton(K: sp.spmatrix, M: sp.spmatrix, interface_dofs: ArrayLike, n_modes: int,
                  fixed_dofs: ArrayLike = (), sigma: float | None = None) -> CraigBampton:
    """Craig-Bampton reduction with chosen interface DOFs.

    Parameters
    ----------
    K, M : sparse matrix, shape (n, n)
        Stiffness and mass.
    interface_dofs : array_like of int
        Boundary DOFs kept as physical coordinates (joints, attachments).
    n_modes : int
        Number of fixed-interface modes (>= 0).
    fixed_dofs : array_like of int
        DOFs clamped to zero (e.g. the 6 DOFs of the node carrying the body frame).
    sigma : float, optional
        Eigen-solver shift.

    Returns
    -------
    CraigBampton
    """
    K = sp.csr_matrix(K)
    M = sp.csr_matrix(M)
    n = K.shape[0]
    _, fx = _free_index(n, fixed_dofs)
    B = np.unique(np.asarray(interface_dofs, np.int64).ravel())
    if B.size == 0:
        raise FEError("craig_bampton needs at least one interface DOF; use "
                      "free_interface_modes or eigenmodes instead")
    if np.intersect1d(B, fx).size:
        raise FEError("interface DOFs and fixed DOFs overlap: "
                      f"{np.intersect1d(B, fx)[:6].tolist()}")
    I = np.setdiff1d(np.setdiff1d(np.arange(n), fx), B)
    Kii = K[I][:, I].tocsc()
    lu = spla.splu(Kii, permc_spec="COLAMD")
    Psi_i = -lu.solve(K[I][:, B].toarray())
    if not np.all(np.isfinite(Psi_i)):
        raise FEError("interior stiffness is singular: the interface DOFs (plus fixed DOFs) do "
                      "not restrain all rigid-body motions of the interior")
    basis = np.zeros((n, B.size + n_modes))
    basis[B, np.arange(B.size)] = 1.0
    basis[I, :B.size] = Psi_i
    om = np.zeros(0)
    if n_modes > I.size:
        raise FEError(f"craig_bampton: {n_modes} fixed-interface modes asked for, but only "
                      f"{I.size} interior DOFs (neither interface nor fixed) exist; ask for "
                      f"at most {I.size} (0: the static constraint modes alone)")
    if n_modes > 0:
        fixed_all = np.concatenate([fx, B])
        md = eigenmodes(K, M, n_modes, fixed_dofs=fixed_all, sigma=sigma)
        basis[:, B.size:] = md.shapes
        om = md.omega
    Kr = basis.T @ (K @ basis)
    Mr = basis.T @ (M @ basis)
    return CraigBampton(basis=basis, interface_dofs=B, fixed_dofs=fx, K_r=0.5 * (Kr + Kr.T),
                        M_r=0.5 * (Mr + Mr.T), fixed_interface_omega=om)


def modal_damping_ratios(C_modal: NDArray[np.float64], omega: NDArray[np.float64]
                         ) -> NDArray[np.float64]:
    """Damping ratios ``zeta_i = c_ii / (2 omega_i)`` of mass-normalised modal damping [-]."""
    return np.diag(C_modal) / (2.0 * np.asarray(omega))
