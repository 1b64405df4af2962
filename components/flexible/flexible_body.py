"""Modal flexible body (floating frame of reference) for the 3D multibody components.

Kinematics (chapter ``000_1c8de8b11d72a21e.txt`` section 4, eq. 47): a material point of the
body is at

    r_p = r_A + R_A (u0 + S q),

with ``r_A``, ``R_A`` the position and orientation of the body reference frame ``frame_a``
(the frame to which the "fixed" modes are clamped), ``u0`` the undeformed position and
``S`` the shape matrix of the modal coordinates ``q`` (beam/shell mass-point fields of
:mod:`components.flexible`: ``u = x_g + T_g D + (R_g D) x d``, ``D = basis q``). The
elastic part is linear in ``q`` (small deformation); the rigid motion is exact.

Virtual power
-------------
The d'Alembert force density ``rho (g - a_p)`` integrated over the body with the inertia
invariants of :class:`components.flexible.Invariants` gives, *exactly for that kinematic
model* (all terms quadratic in ``q`` kept: deformed first moment ``I2 + I3 q``, deformed
inertia ``J(q)``, rotation coupling ``I4 + sum_j q_j I5_j``), with body-frame vectors
``a = R^T a_A``, ``alpha = R^T z_A``, ``omega = R^T w_A``, ``g' = R^T g``:

    F  = m g' - (m a + alpha x c + omega x (omega x c) + 2 omega x I3 q' + I3 q'')
    M  = c x (g' - a) - J alpha - omega x J omega - 2 (omega tr W - W^T omega) - M_tf q''
    Qf = I3^T (g' - a) - M_tf^T alpha - sum_ab (omega~^2)_ab U_ab
         - 2 sum_ab omega~_ab int (S_b q') S_a - M_ff q'' - K_ff q - C_ff q'

(``c = I2 + I3 q``, ``W_ab = int u_a (S q')_b``, ``U_ab = int S_a u_b``); ``F`` and the
moment ``M`` about the origin of ``frame_a`` are returned in world components (times
``R_A``) as the wrench on ``frame_a``, ``Qf`` as the generalized force on ``q'``. These are
the chapter's ``M_RR ... M_ff`` blocks and quadratic-velocity vector (eqs. 58-67) in
body-frame accelerations.

Attachment frame ``frame_b`` at node ``node_b``: an "arm" edge with
``r_rel = s_b + Phi_t(b) q``, ``v_rel = Phi_t(b) q'`` (exact), and a **linearised** relative
rotation ``R_rel = I + skew(Phi_r(b) q)``, ``w_rel = Phi_r(b) q'`` (first order in the node
rotation; ``R_rel`` is orthogonal only to first order). Loads applied at ``frame_b`` are
therefore exact in translation and first-order in rotation.

Not modelled: geometric (centrifugal / gravity) stiffening — add ``FlexibleBodyData``'s
``centrifugal_stiffness`` yourself for fast spinning bodies; large elastic rotations.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import casadi as cs
import numpy as np
import scipy.sparse as sp

from acausal import Parameter, Variable, der
from acausal.errors import ModelDefinitionError
from acausal.multibody.base import (
    Coordinates,
    CutEquations,
    EdgeRole,
    Frame,
    Kinematics,
    MBEdge,
    MBPriority,
    MultibodyComponent,
    TreeMotion,
)
from acausal.multibody.constraints import orientation_constraints, position_constraints
from acausal.multibody.rotations import skew
from components.multibody import FreeFlyingBody

__all__ = ["FlexibleBody"]

_EPS = np.zeros((3, 3, 3))
_EPS[0, 1, 2] = _EPS[1, 2, 0] = _EPS[2, 0, 1] = 1.0
_EPS[0, 2, 1] = _EPS[2, 1, 0] = _EPS[1, 0, 2] = -1.0


@dataclass(frozen=True)
class _ModalConstants:
    """The body's constant shape integrals and matrices (numpy, computed once per body)."""

    k: int  # number of elastic coordinates
    m: float  # mass [kg]
    I2: np.ndarray  # first moment of the undeformed body, int rho u0 [kg m]
    Q0: np.ndarray  # second moment, int rho u0 u0^T [kg m2]
    I3: np.ndarray  # int rho S (3 x k)
    Shat: np.ndarray  # int rho u0_a S_b (3 x 3 x k)
    I4: np.ndarray  # int rho u0~ S (3 x k)
    Sbar: list[list[np.ndarray]]  # int rho S_a^T S_b (k x k each)
    Mff: np.ndarray
    Kff: np.ndarray
    Cff: np.ndarray
    s_b: np.ndarray  # position of the attachment node in frame_a [m]
    Pt_b: np.ndarray  # its translation shapes (3 x k)
    Pr_b: np.ndarray  # its rotation shapes (3 x k)
    node_b: int | str  # node index or single-node set name


def _dense(A: Any) -> np.ndarray:
    return np.asarray(A.toarray() if sp.issparse(A) else A, dtype=float)


class FlexibleBody(FreeFlyingBody):
    """Flexible body in modal coordinates (FFRF), attached at ``frame_a`` and ``frame_b``.

    Parameters
    ----------
    data : FlexibleBodyData
        Preprocessor output (``FlexibleBodyData.from_mesh(..., reduction="fixed",
        fixed_nodes=...)``); its body frame is ``frame_a``.
    node_b : int or str, optional
        Node (index or single-node set name) of ``frame_b``; default: the node farthest
        from the origin of ``frame_a`` (the tip of a cantilever).

    Variables
    ---------
    q : modal coordinates (size k) [modal amplitude]; qd : their rates [1/s]
    r_0, v_0, Q, w_a : free-flight coordinates of ``frame_a`` (used only when no joint holds
        the body, as for :class:`components.multibody.Body`)
    """

    data = Parameter(None, doc="FlexibleBodyData of the body", structural=True)
    node_b = Parameter(None, doc="node of frame_b (default: farthest node)", structural=True)
    frame_a = Frame("body reference frame (clamp of the fixed-interface modes)")
    frame_b = Frame("attachment frame at node node_b (linearised rotation)")
    q = Variable(start=0.0, fixed=True, doc="modal coordinates (size k)")
    qd = Variable(start=0.0, fixed=True, unit="1/s", doc="modal rates (size k)")

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        data = self.parameters()["data"]
        if data is None or not hasattr(data, "invariants"):
            raise ModelDefinitionError("FlexibleBody needs data=FlexibleBodyData.from_mesh(...)")
        k = int(data.n_coordinates)
        if k > 200:
            raise ModelDefinitionError(
                f"FlexibleBody: {k} elastic coordinates; use a modal reduction (dense "
                "invariants are built per body)")
        for name in ("q", "qd"):
            vi = self.__dict__["_vars"][name]
            vi.size = k
            s = np.atleast_1d(np.asarray(vi.start, dtype=float)).ravel()
            if s.size == 1:
                s = np.full(k, s[0])
            if s.size != k:
                raise ModelDefinitionError(
                    f"FlexibleBody: start value of {name!r} has {s.size} entries, expected {k}")
            vi.start = s.tolist()
        # constant shape integrals (numpy, computed once)
        inv = data.invariants
        nb = self.parameters()["node_b"]
        if nb is None:
            nodes = data.model.mesh.nodes
            nb = int(np.argmax(np.linalg.norm(nodes, axis=1)))
        c = _ModalConstants(
            k=k, m=float(inv.mass), I2=np.asarray(inv.first_moment, float),
            Q0=np.asarray(inv.second_moment, float), I3=np.asarray(inv.I3, float),
            Shat=np.asarray(inv.Shat, float), I4=np.asarray(inv.I4, float),
            Sbar=[[_dense(inv.Sbar[a][b]) for b in range(3)] for a in range(3)],
            Mff=_dense(data.M_ff), Kff=_dense(data.K_ff), Cff=_dense(data.C_ff),
            s_b=np.asarray(data.node_position(nb), float),
            Pt_b=np.asarray(data.phi_t(nb), float), Pr_b=np.asarray(data.phi_r(nb), float),
            node_b=nb)
        object.__setattr__(self, "_ffrf", c)
        # the frame_a -> frame_b arm edge lives in a child component (the mechanism asks a
        # component for one tree motion / cut, so each edge needs its own component)
        self.attachment = _Attachment()
        self.attachment.__dict__["_body"] = self
        self.connect(self.frame_a, self.attachment.frame_a)
        self.connect(self.frame_b, self.attachment.frame_b)

    # ------------------------------------------------------------------ graph edges
    def arm_motion(self) -> TreeMotion:
        """frame_a -> frame_b: ``r_rel = s_b + Phi_t q``, ``R_rel = I + skew(Phi_r q)``
        (linearised), ``v_rel = Phi_t q'``, ``w_rel = Phi_r q'`` (frame_a components)."""
        c = self._ffrf
        q, qd = self.q, self.qd
        Pt, Pr = cs.DM(c.Pt_b), cs.DM(c.Pr_b)
        r_rel = cs.DM(c.s_b) + cs.mtimes(Pt, q)
        R_rel = cs.SX.eye(3) + skew(cs.mtimes(Pr, q))
        return TreeMotion([], [], cs.SX(0, 1), r_rel, R_rel, cs.mtimes(Pt, qd),
                          cs.mtimes(Pr, qd))

    def internal_motion(self) -> Coordinates:
        return Coordinates(cs.vertsplit(self.q), cs.vertsplit(self.qd), cs.SX(self.qd))

    # ------------------------------------------------------------------ dynamics
    def _inertial(self, kin, gravity):
        """Body-frame d'Alembert + gravity resultant (F, M about frame_a) and Q_f."""
        c = self._ffrf
        k = kin["frame_a"]
        R = k.R
        q, qd, qdd = self.q, self.qd, der(self.qd)
        a = R.T @ k.a
        al = R.T @ k.z
        om = R.T @ k.w
        g = R.T @ gravity
        m = c.m
        I3 = cs.DM(c.I3)
        Sb = c.Sbar
        Sq = [[cs.mtimes(cs.DM(Sb[i][j].T), q) for j in range(3)] for i in range(3)]
        Sqd = [[cs.mtimes(cs.DM(Sb[i][j].T), qd) for j in range(3)] for i in range(3)]
        Shat = c.Shat
        sh = [[cs.DM(Shat[i, j, :]) for j in range(3)] for i in range(3)]
        cm = cs.DM(c.I2) + cs.mtimes(I3, q)  # int rho u
        Qm = cs.SX(3, 3)  # int rho u u^T
        Wm = cs.SX(3, 3)  # int rho u_a (S q')_b
        for i in range(3):
            for j in range(3):
                Qm[i, j] = (c.Q0[i, j] + cs.dot(sh[i][j], q) + cs.dot(sh[j][i], q)
                            + cs.dot(Sq[i][j], q))
                Wm[i, j] = cs.dot(sh[i][j], qd) + cs.dot(Sq[i][j], qd)
        J = cs.trace(Qm) * cs.SX.eye(3) - Qm
        # M_tf = int rho u~ S = I4 + eps_abc int (S_b q) S_c
        Mtf = cs.SX(cs.DM(c.I4))
        rows = []
        for i in range(3):
            row = cs.SX(c.k, 1)
            for j in range(3):
                for l in range(3):
                    if _EPS[i, j, l] != 0.0:
                        row = row + _EPS[i, j, l] * Sq[j][l]
            rows.append(row.T)
        Mtf = Mtf + cs.vertcat(*rows)
        Iqd = cs.mtimes(I3, qd)
        F = m * g - (m * a + cs.cross(al, cm) + cs.cross(om, cs.cross(om, cm))
                     + 2 * cs.cross(om, Iqd) + cs.mtimes(I3, qdd))
        M = (cs.cross(cm, g - a) - cs.mtimes(J, al) - cs.cross(om, cs.mtimes(J, om))
             - 2 * (om * cs.trace(Wm) - cs.mtimes(Wm.T, om)) - cs.mtimes(Mtf, qdd))
        W = skew(om)
        W2 = cs.mtimes(W, W)
        Qf = cs.mtimes(I3.T, g - a) - cs.mtimes(Mtf.T, al)
        for i in range(3):
            for j in range(3):
                U_ij = cs.DM(Shat[j, i, :]) + Sq[j][i]  # int rho S_i u_j
                Qf = Qf - W2[i, j] * U_ij - 2 * W[i, j] * Sqd[j][i]
        Qf = (Qf - cs.mtimes(cs.DM(c.Mff), qdd) - cs.mtimes(cs.DM(c.Kff), q)
              - cs.mtimes(cs.DM(c.Cff), qd))
        return F, M, Qf

    def wrenches(self, kin, gravity):
        F, M, _ = self._inertial(kin, gravity)
        R = kin["frame_a"].R
        return [("frame_a", R @ F, R @ M)]

    def generalized_forces(self, kin, gravity):
        _, _, Qf = self._inertial(kin, gravity)
        return [(self.qd, Qf)]

    # ------------------------------------------------------------------ helpers
    def elastic_energy(self, q: Any) -> float:
        """Strain energy ``0.5 q^T K_ff q`` [J] (numeric ``q``)."""
        qv = np.asarray(q, float)
        return 0.5 * float(qv @ self._ffrf.Kff @ qv)


class _Attachment(MultibodyComponent):
    """The arm edge frame_a -> frame_b of a :class:`FlexibleBody` (motion depends on q)."""

    frame_a = Frame("body reference frame")
    frame_b = Frame("attachment frame")
    mb_edges = [MBEdge("frame_a", "frame_b", MBPriority.ARM, EdgeRole.ARM)]

    def tree_motion(self) -> TreeMotion:
        return self.__dict__["_body"].arm_motion()

    def cut(self, ka, kb) -> CutEquations:
        """As a chord (a loop closed through frame_b): frame_b on the deformed node, with
        the linearised orientation ``R_b = R_a (I + skew(Phi_r q))`` (3 + 3 constraints)."""
        m = self.__dict__["_body"].arm_motion()
        shifted = Kinematics(ka.r + ka.R @ m.r_rel, ka.R, ka.v, ka.w)
        c1, l1 = position_constraints(shifted, kb)
        c2, l2 = orientation_constraints(ka, kb, m.R_rel)
        return CutEquations([], c1 + c2, l1 + l2)
