r"""Inertia shape integrals (invariants) of the floating frame of reference.

A material point of the flexible body has, in the body frame, the position
``u = u0 + S q`` where ``u0`` is its undeformed position and ``S`` the
(3 x n) shape matrix of the elastic coordinates ``q`` (nodal DOFs or modal
amplitudes). With ``rho`` the density, the constant integrals are

=====  ==========================================  ===========  ======================
name   definition                                  shape        meaning
=====  ==========================================  ===========  ======================
I1     ``int rho dV``                              scalar       mass
I2     ``int rho u0 dV``                           (3,)         first moment (m c)
I3     ``int rho S dV``                            (3, n)       translation coupling
I4     ``int rho u0~ S dV``                        (3, n)       rotation coupling
I5_j   ``int rho S_j~ S dV``                       (n, 3, n)    rotation coupling (q)
I6     ``int rho S^T S dV``                        (n, n)       M_ff
I7     ``int rho u0~^T u0~ dV``                    (3, 3)       inertia tensor (undef.)
I8_j   ``int rho u0~^T S_j~ dV``                   (n, 3, 3)    inertia, linear in q
I9_jk  ``int rho S_j~^T S_k~ dV``                  (n, n, 3, 3) inertia, quadratic in q
=====  ==========================================  ===========  ======================

(``a~`` is the skew matrix of ``a``, ``S_j`` the j-th column of ``S``.) This is
the nine-invariant set of Shabana's FFRF as used by ADAMS/Flex, evaluated
here with the *consistent* mass distribution of the elements (including the
rotary inertia of beam sections and shell thickness) instead of lumped nodal
masses. All nine derive from five primitive integrals stored by
:class:`Invariants`: ``m``, ``I2``, ``Q0 = int rho u0 u0^T``, ``I3``,
``Shat[a, b, k] = int rho u0_a S_bk`` and ``Sbar[a][b] = int rho S_a^T S_b``
(``S_a`` = row ``a`` of ``S``).

With body-frame generalized accelerations ``(a, alpha, q'')`` -- ``a`` the
acceleration of the frame origin and ``alpha`` the angular acceleration, both in
body components -- the equations of a free flexible body read

    M(q) [a; alpha; q''] = h(q, q', omega) + f_ext - [0; 0; K q + C q'],

    M = [[m I,        -(I2 + I3 q)~,                I3        ],
         [ .,  I7 + sum q_j (I8_j + I8_j^T) + sum q_j q_k I9_jk, I4 + sum q_j I5_j],
         [ .,          .,                            I6        ]]

which is the chapter's eq. (58)/(67) with ``Pi`` and ``Lambda`` taken out
(``a = Pi^T R''``, ``omega = Lambda theta'``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TypeAlias

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from .errors import FEError
from .fields import MassPoints, rotary_inertia
from .linalg import LEVI_CIVITA as _EPS
from .linalg import skew

__all__ = ["Invariants", "compute_invariants", "skew"]


Matrix: TypeAlias = "NDArray[np.float64] | sp.spmatrix"


@dataclass(frozen=True)
class Invariants:
    """Primitive inertia integrals of a flexible body (see module docstring).

    Attributes
    ----------
    mass : float
        ``int rho dV`` [kg].
    first_moment : ndarray, shape (3,)
        ``I2 = int rho u0 dV`` [kg m].
    second_moment : ndarray, shape (3, 3)
        ``Q0 = int rho u0 u0^T dV`` [kg m^2].
    I3 : ndarray, shape (3, n)
        ``int rho S dV``.
    Shat : ndarray, shape (3, 3, n)
        ``int rho u0_a S_bk dV``.
    Sbar : list of list of matrices, 3 x 3 of (n, n)
        ``int rho S_a^T S_b dV`` (dense for modal coordinates, sparse for nodal).
    """

    mass: float
    first_moment: NDArray[np.float64]
    second_moment: NDArray[np.float64]
    I3: NDArray[np.float64]
    Shat: NDArray[np.float64]
    Sbar: list[list[Any]] = field(repr=False)

    # ------------------------------------------------------------------ basics
    @property
    def n(self) -> int:
        """Number of elastic coordinates."""
        return int(self.I3.shape[1])

    @property
    def I1(self) -> float:
        """Mass [kg]."""
        return self.mass

    @property
    def I2(self) -> NDArray[np.float64]:
        """First moment ``int rho u0`` [kg m]."""
        return self.first_moment

    @property
    def center_of_mass(self) -> NDArray[np.float64]:
        """Centre of mass of the undeformed body [m]."""
        return self.first_moment / self.mass

    @property
    def I7(self) -> NDArray[np.float64]:
        """Inertia tensor of the undeformed body about the frame origin [kg m^2]."""
        return rotary_inertia(self.second_moment)

    @property
    def inertia_tensor(self) -> NDArray[np.float64]:
        """Alias of :attr:`I7`."""
        return self.I7

    @property
    def I4(self) -> NDArray[np.float64]:
        """``int rho u0~ S dV`` (3, n)."""
        return np.einsum("abc,bck->ak", _EPS, self.Shat)

    @property
    def I6(self) -> Matrix:
        """``int rho S^T S dV`` = M_ff (n, n)."""
        return self.Sbar[0][0] + self.Sbar[1][1] + self.Sbar[2][2]

    def _dense_guard(self, what: str) -> None:
        if self.n > 2000:
            raise FEError(f"{what} is dense in the number of coordinates (n = {self.n}); project "
                          f"the invariants on a modal basis first (Invariants.project) or use "
                          f"mass_matrix(q)")

    @property
    def I5(self) -> NDArray[np.float64]:
        """``I5[j] = int rho S_j~ S dV``, shape (n, 3, n)."""
        self._dense_guard("I5")
        Sb = [[np.asarray(sp.csr_matrix(x).toarray() if sp.issparse(x) else x)
               for x in row] for row in self.Sbar]
        out = np.zeros((self.n, 3, self.n))
        for a in range(3):
            for b in range(3):
                for c in range(3):
                    if _EPS[a, b, c] != 0.0:
                        out[:, a, :] += _EPS[a, b, c] * Sb[b][c]
        return out

    @property
    def I8(self) -> NDArray[np.float64]:
        """``I8[j] = int rho u0~^T S_j~ dV``, shape (n, 3, 3)."""
        Sh = np.transpose(self.Shat, (2, 0, 1))  # (n, a, b)
        tr = np.trace(Sh, axis1=1, axis2=2)
        return tr[:, None, None] * np.eye(3) - np.transpose(Sh, (0, 2, 1))

    @property
    def I9(self) -> NDArray[np.float64]:
        """``I9[j, k] = int rho S_j~^T S_k~ dV``, shape (n, n, 3, 3)."""
        self._dense_guard("I9")
        Sb = [[np.asarray(x.toarray() if sp.issparse(x) else x) for x in row] for row in self.Sbar]
        tr = Sb[0][0] + Sb[1][1] + Sb[2][2]
        out = tr[:, :, None, None] * np.eye(3)
        for a in range(3):
            for b in range(3):
                out[:, :, a, b] -= Sb[a][b].T  # S_k,a S_j,b -> Sbar_ab[k, j]
        return out

    # ------------------------------------------------------------------ state-dependent
    def _check_q(self, q: ArrayLike | None) -> NDArray[np.float64]:
        if q is None:
            return np.zeros(self.n)
        q = np.asarray(q, float).ravel()
        if q.size != self.n:
            raise FEError(f"elastic coordinate vector has {q.size} entries, expected {self.n}")
        return q

    def _Sbar_q(self, q: NDArray[np.float64]) -> NDArray[np.float64]:
        """(3, 3, n) array ``Sbar_ab^T q`` (i.e. ``int rho (S_a q) S_b``)."""
        out = np.empty((3, 3, self.n))
        for a in range(3):
            for b in range(3):
                out[a, b] = self.Sbar[a][b].T @ q
        return out

    def mass_matrix(self, q: ArrayLike | None = None) -> NDArray[np.float64]:
        """Full FFRF mass matrix (6 + n, 6 + n) in body-frame generalized accelerations.

        Parameters
        ----------
        q : array_like, shape (n,), optional
            Elastic coordinates [m, rad or modal amplitude]; default zero.
        """
        q = self._check_q(q)
        n = self.n
        Sq = self._Sbar_q(q)  # (a, b, k) = int (S_a q) S_bk
        uint = self.first_moment + self.I3 @ q
        Shq = self.Shat @ q  # (3,3): int u0_a (S q)_b
        qSq = np.einsum("abk,k->ab", Sq, q)  # int (S_a q)(S_b q)
        Q = self.second_moment + Shq + Shq.T + qSq  # int u u^T
        M = np.zeros((6 + n, 6 + n))
        M[:3, :3] = self.mass * np.eye(3)
        M[:3, 3:6] = -skew(uint)
        M[:3, 6:] = self.I3
        M[3:6, 3:6] = rotary_inertia(Q)
        # int rho u~ S = I4 + eps_abc int (S_b q) S_c
        M[3:6, 6:] = self.I4 + np.einsum("abc,bck->ak", _EPS, Sq)
        I6: Any = self.I6
        M[6:, 6:] = I6.toarray() if sp.issparse(I6) else I6
        M = np.triu(M) + np.triu(M, 1).T
        return M

    def quadratic_velocity(self, q: ArrayLike | None, qdot: ArrayLike | None,
                           omega: ArrayLike) -> NDArray[np.float64]:
        """Quadratic velocity vector ``h`` (6 + n) (centrifugal, gyroscopic, Coriolis).

        ``h = -int rho [I; u~; S^T] (omega~ omega~ u + 2 omega~ S q') dV`` (chapter eq. 59,
        body components).

        Parameters
        ----------
        q, qdot : array_like, shape (n,)
            Elastic coordinates and rates.
        omega : array_like, shape (3,)
            Angular velocity of the body frame, body components [rad/s].
        """
        q = self._check_q(q)
        qd = self._check_q(qdot)
        w = np.asarray(omega, float).ravel()
        W = skew(w)
        W2 = W @ W
        Sq = self._Sbar_q(q)
        Sqd = self._Sbar_q(qd)
        uint = self.first_moment + self.I3 @ q
        vint = self.I3 @ qd
        Shq = self.Shat @ q
        Q = self.second_moment + Shq + Shq.T + np.einsum("abk,k->ab", Sq, q)
        J = rotary_inertia(Q)
        Wm = self.Shat @ qd + np.einsum("abk,k->ab", Sq, qd)  # int u_a (S q')_b
        hv = -(W2 @ uint + 2.0 * W @ vint)
        hw = -(np.cross(w, J @ w) + 2.0 * (w * np.trace(Wm) - Wm.T @ w))
        # int S_a,k u_b = Shat[b, a, k] + Sbar_ab q -> (Sbar_ab @ q)[k] = Sq[b, a, k]
        U = np.transpose(self.Shat, (1, 0, 2)) + np.transpose(Sq, (1, 0, 2))
        hf = -(np.einsum("ab,abk->k", W2, U) + 2.0 * np.einsum("ab,bak->k", W, Sqd))
        return np.concatenate([hv, hw, hf])

    def spin_softening(self, omega: ArrayLike) -> Matrix:
        """``int rho S^T omega~ omega~ S dV`` (n, n): add to K in a frame spinning at ``omega``.

        Parameters
        ----------
        omega : array_like, shape (3,)
            Angular velocity [rad/s].

        Notes
        -----
        Negative semi-definite: the centrifugal force on a displaced particle grows
        with its distance to the axis, so the effective stiffness decreases.
        """
        W2 = skew(omega) @ skew(omega)
        out = None
        for a in range(3):
            for b in range(3):
                if W2[a, b] != 0.0:
                    t = W2[a, b] * self.Sbar[a][b]
                    out = t if out is None else out + t
        if out is None:
            return 0.0 * self.Sbar[0][0]
        return out

    def rigid_body_load(self, acceleration: ArrayLike) -> NDArray[np.float64]:
        """Elastic generalized force ``I3^T a`` of a uniform body-force field ``a`` [m/s^2]."""
        return self.I3.T @ np.asarray(acceleration, float)

    # ------------------------------------------------------------------ modal projection
    def project(self, basis: NDArray[np.float64] | sp.spmatrix) -> "Invariants":
        """Invariants of the coordinates ``q = basis @ eta`` (basis shape (n, k)).

        Parameters
        ----------
        basis : ndarray or sparse matrix, shape (n, k)
            Dense (modal) or sparse (nodal, constraint-eliminated) basis; a sparse basis
            keeps the ``Sbar`` blocks sparse.
        """
        if sp.issparse(basis):
            Phi: Any = sp.csr_matrix(basis)
        else:
            Phi = np.asarray(basis, float)
        if Phi.shape[0] != self.n:
            raise FEError(f"basis has {Phi.shape[0]} rows, the invariants have {self.n} "
                          f"coordinates")
        if sp.issparse(Phi):
            PhiT = Phi.T.tocsr()
            Sb: list[list[Any]] = [[sp.csr_matrix(PhiT @ sp.csr_matrix(self.Sbar[a][b]) @ Phi)
                                    for b in range(3)] for a in range(3)]
            I3 = np.asarray((sp.csr_matrix(self.I3) @ Phi).toarray())
            Sh = np.asarray((sp.csr_matrix(self.Shat.reshape(9, -1)) @ Phi).toarray())
            Shat = Sh.reshape(3, 3, -1)
        else:
            Sb = [[np.asarray(Phi.T @ (self.Sbar[a][b] @ Phi)) for b in range(3)]
                  for a in range(3)]
            I3, Shat = self.I3 @ Phi, self.Shat @ Phi
        return Invariants(mass=self.mass, first_moment=self.first_moment,
                          second_moment=self.second_moment, I3=I3, Shat=Shat, Sbar=Sb)


def _skew_fields(R: NDArray[np.float64]) -> NDArray[np.float64]:
    """(..., 3, n) rotation fields -> (..., 3, 3, n) skew matrices ``r_j~``."""
    return np.einsum("amc,...mj->...acj", _EPS, R)


def compute_invariants(mp: MassPoints, element_dofs: NDArray[np.int64], n_dofs: int,
                       basis: NDArray[np.float64] | None = None,
                       chunk: int = 4096) -> Invariants:
    """Integrate the primitive invariants over all elements.

    Parameters
    ----------
    mp : MassPoints
        Mass quadrature points of all elements (body frame).
    element_dofs : ndarray of int, shape (E, nd)
        Global DOFs of each element.
    n_dofs : int
        Number of global DOFs.
    basis : ndarray, shape (n_dofs, k), optional
        Modal basis; if given the invariants are those of the modal amplitudes
        (computed without forming nodal n x n matrices). Otherwise nodal (sparse).
    chunk : int
        Elements processed per batch (memory control).

    Returns
    -------
    Invariants
    """
    w, x, P = mp.weight, mp.position, mp.second_moment
    mass = float(w.sum())
    first = np.einsum("eq,eqa->a", w, x)
    second = np.einsum("eq,eqa,eqb->ab", w, x, x) + P.sum(axis=(0, 1))
    E = w.shape[0]
    if basis is not None:
        Phi = np.asarray(basis, float)
        if Phi.shape[0] != n_dofs:
            raise FEError(f"basis must have {n_dofs} rows (one per DOF), got {Phi.shape[0]}")
        k = Phi.shape[1]
        I3 = np.zeros((3, k))
        Shat = np.zeros((3, 3, k))
        Sbr = np.zeros((3, 3, k, k))
        for s in range(0, E, chunk):
            sl = slice(s, s + chunk)
            Pe = Phi[element_dofs[sl]]  # (e, nd, k)
            e_, q_, _, nd = mp.T[sl].shape
            T = np.matmul(mp.T[sl].reshape(e_, q_ * 3, nd), Pe).reshape(e_, q_, 3, k)
            R = np.matmul(mp.R[sl].reshape(e_, q_ * 3, nd), Pe).reshape(e_, q_, 3, k)
            RX = _skew_fields(R)  # (e, q, 3, 3, k): [a, c, j] = (R_j~)_ac
            ws = w[sl]
            I3 += np.einsum("eq,eqak->ak", ws, T)
            Shat += np.einsum("eq,eqa,eqbk->abk", ws, x[sl], T, optimize=True)
            Shat += np.einsum("eqac,eqbck->abk", P[sl], RX, optimize=True)
            # Gram matrices as single GEMMs over all points of the chunk
            Tw = (T * np.sqrt(ws)[:, :, None, None]).reshape(-1, 3 * k)
            Sbr += (Tw.T @ Tw).reshape(3, k, 3, k).transpose(0, 2, 1, 3)
            PRX = np.einsum("eqcd,eqbdk->eqcbk", P[sl], RX, optimize=True)  # [c, b, k]
            A_ = np.ascontiguousarray(np.transpose(RX, (0, 1, 3, 2, 4))).reshape(-1, 3 * k)
            B_ = PRX.reshape(-1, 3 * k)
            Sbr += (A_.T @ B_).reshape(3, k, 3, k).transpose(0, 2, 1, 3)
        Sb = [[0.5 * (Sbr[a, b] + Sbr[b, a].T) for b in range(3)] for a in range(3)]
        return Invariants(mass=mass, first_moment=first, second_moment=second, I3=I3,
                          Shat=Shat, Sbar=Sb)
    ed = element_dofs
    nd = ed.shape[1]
    I3 = np.zeros((3, n_dofs))
    Shat = np.zeros((3, 3, n_dofs))
    blocks: dict[tuple[int, int], list[NDArray[np.float64]]] = {
        (a, b): [] for a in range(3) for b in range(a, 3)}
    for s in range(0, E, chunk):
        sl = slice(s, s + chunk)
        T = mp.T[sl]
        RX = _skew_fields(mp.R[sl])  # (e, q, 3, 3, nd)
        ws = w[sl]
        e_I3 = np.einsum("eq,eqaj->eaj", ws, T)
        e_Sh = np.einsum("eq,eqa,eqbj->eabj", ws, x[sl], T, optimize=True) \
            + np.einsum("eqac,eqbcj->eabj", P[sl], RX, optimize=True)
        for a in range(3):
            I3[a] += np.bincount(ed[sl].ravel(), e_I3[:, a].ravel(), minlength=n_dofs)
            for b in range(3):
                Shat[a, b] += np.bincount(ed[sl].ravel(), e_Sh[:, a, b].ravel(),
                                          minlength=n_dofs)
        PRX = np.einsum("eqcd,eqbdk->eqcbk", P[sl], RX, optimize=True)
        for (a, b) in blocks:
            blk = np.einsum("eq,eqj,eqk->ejk", ws, T[:, :, a], T[:, :, b], optimize=True)
            blk += np.einsum("eqcj,eqck->ejk", RX[:, :, a], PRX[:, :, :, b], optimize=True)
            blocks[(a, b)].append(blk)
    rows = np.broadcast_to(ed[:, :, None], (E, nd, nd)).ravel()
    cols = np.broadcast_to(ed[:, None, :], (E, nd, nd)).ravel()
    Sbar: list[list[Any]] = [[None] * 3 for _ in range(3)]
    for (a, b), lst in blocks.items():
        data = np.concatenate(lst).ravel()
        Mab = sp.coo_matrix((data, (rows, cols)), shape=(n_dofs, n_dofs)).tocsr()
        Sbar[a][b] = Mab
        if a != b:
            Sbar[b][a] = Mab.T.tocsr()
    return Invariants(mass=mass, first_moment=first, second_moment=second, I3=I3, Shat=Shat,
                      Sbar=Sbar)
