"""Closed-form checks of the 3D multibody components that no other test touches:
``Cylindrical``, ``Planar``, ``FreeMotion``, ``Weld``, ``FixedRotation``, ``WorldForce`` and
``WorldTorque``.

Every test simulates a small model and compares it with an independent closed form:
uniformly accelerated or uniform motion, the bead on a rotating rod (cosh/sinh), the
torque-free symmetric top, the exact large-amplitude pendulum (Jacobi elliptic functions)
with the inertia from the parallel-axis theorem, and reactions from Newton's second law.
The reference rotations come from ``scipy.spatial.transform``, not from the library.

A joint or an arm can be a tree branch or a cut chord (a constraint with multipliers). Each
test of such a component runs both: ``cut=True`` forces the neighbouring edges into the tree
with ``ac.build(model, tree=[...])``, so that the component closes the loop, and asserts
that it did. ``WorldForce`` and ``WorldTorque`` are force elements, always chords.

Every run uses rtol 1e-10, atol 1e-12 (the cut cases too: these small loops integrate well
at that setting), and every tolerance says why it has its size.
"""

from __future__ import annotations

import casadi as cs
import numpy as np
import pytest
from scipy.spatial.transform import Rotation
from scipy.special import ellipj, ellipk

import acausal as ac
from components import multibody as mb
from components import rotational

G = 9.81
GRAVITY = np.array([0.0, -G, 0.0])
RTOL, ATOL = 1e-10, 1e-12
CUT = pytest.mark.parametrize("cut", [False, True], ids=["tree", "chord"])


# ----------------------------------------------------------------------------------------
# references (numpy and scipy only)
def rot(axis, angle) -> np.ndarray:
    """Rotation matrices about a fixed axis, ``(3, 3)`` or ``(nt, 3, 3)`` for an array of
    angles."""
    u = np.asarray(axis, float) / np.linalg.norm(axis)
    a = np.asarray(angle, float)
    return Rotation.from_rotvec(np.multiply.outer(a, u)).as_matrix()


def quat_wxyz(R: np.ndarray) -> list[float]:
    x, y, z, w = Rotation.from_matrix(R).as_quat()
    return [w, x, y, z]


def frames_R(res, path: str) -> np.ndarray:
    """``(nt, 3, 3)`` orientation of a frame (the results store R column-major)."""
    return res[f"{path}.R"].reshape(-1, 3, 3).transpose(0, 2, 1)


def wrap(angle) -> np.ndarray:
    """Angle difference folded into (-pi, pi] (a cut joint's angle comes from atan2)."""
    return np.angle(np.exp(1j * np.asarray(angle)))


def pendulum(t, theta0: float, w0: float):
    """Exact pendulum ``theta'' = -w0^2 sin(theta)`` released from rest at ``theta0``:
    ``theta = 2 asin(k sn(K - w0 t | k^2))``, ``k = sin(theta0 / 2)``; returns theta, its
    rate and its acceleration."""
    k = np.sin(theta0 / 2)
    sn, cn, _, _ = ellipj(ellipk(k**2) - w0 * np.asarray(t), k**2)
    theta = 2 * np.arcsin(k * sn)
    return theta, -2 * k * w0 * cn, -w0**2 * np.sin(theta)


def period(theta0: float, w0: float) -> float:
    return 4 * ellipk(np.sin(theta0 / 2) ** 2) / w0


def free_guess() -> dict:
    """Start values of a Body whose own edge is a tree branch when its joint is cut: only
    guesses, the joint's fixed coordinates determine them."""
    return dict(r_0=ac.guess([0.0, 0.0, 0.0]), v_0=ac.guess([0.0, 0.0, 0.0]),
                Q=ac.guess([1.0, 0.0, 0.0, 0.0]), w_a=ac.guess([0.0, 0.0, 0.0]))


def inertia_kwargs(I: np.ndarray) -> dict:
    return dict(I_11=I[0, 0], I_22=I[1, 1], I_33=I[2, 2], I_21=I[1, 0], I_31=I[2, 0],
                I_32=I[2, 1])


I_BODY = np.array([[0.04, 0.005, 0.002], [0.005, 0.03, -0.004], [0.002, -0.004, 0.05]])


# ----------------------------------------------------------------------------------------
# a turntable turning at a constant speed about the world y axis (a kinematic driver)
OMEGA = 2.0  # [rad/s]
Y = np.array([0.0, 1.0, 0.0])


class Turntable(ac.Model):
    """World, gravity -y, and a revolute about y driven at OMEGA from phi = 0: the table
    frame ``table.frame_b`` coincides with the world at t = 0."""

    def __init__(self):
        super().__init__()
        self.world = mb.World(g=list(GRAVITY))
        self.table = mb.Revolute(n=[0, 1, 0], use_axis_flange=True, phi=0.0)
        self.drive = rotational.Speed(w_ref=OMEGA)
        self.connect(self.world.frame_b, self.table.frame_a)
        self.connect(self.drive.flange, self.table.axis)


def simulate(model, cut_tree, t_end, n_points):
    cm = ac.build(model, tree=cut_tree)
    return cm, ac.simulate(cm, t_end, rtol=RTOL, atol=ATOL, n_points=n_points)


# ----------------------------------------------------------------------------------------
# Cylindrical
class CylindricalFall(ac.Model):
    """A body on a vertical cylindrical joint, centre of mass off the axis."""

    S0, V0, PHI0, W0 = 0.5, 1.5, 0.2, 3.0

    def __init__(self, cut=False):
        super().__init__()
        self.world = mb.World(g=list(GRAVITY))
        self.joint = mb.Cylindrical(n=[0, 1, 0], s=self.S0, v=self.V0, phi=self.PHI0, w=self.W0)
        self.body = mb.Body(m=2.0, r_CM=[0.3, 0.0, 0.1], **inertia_kwargs(I_BODY),
                            **(free_guess() if cut else {}))
        self.connect(self.world.frame_b, self.joint.frame_a)
        self.connect(self.joint.frame_b, self.body.frame_a)


@CUT
def test_cylindrical_vertical_axis_free_fall_and_constant_spin(cut):
    m = CylindricalFall(cut)
    cm, res = simulate(m, [m.body] if cut else None, 1.0, 21)
    assert ("joint" in cm.mechanism.cotree) == cut and cm.mechanism.dof == 2
    t, M = res.t, CylindricalFall
    s = M.S0 + M.V0 * t - G * t**2 / 2  # gravity along the axis; no torque about it
    phi = M.PHI0 + M.W0 * t
    # IDAS rtol 1e-10 over 1 s on s ~ 1 m: measured 6e-11 (tree), 3.3e-10 (chord)
    assert np.max(np.abs(res["joint.s"] - s)) < 3e-9
    # the frame moves along the vertical axis only: same error as s
    assert np.max(np.abs(res["body.frame_a.r"] - np.outer(s, Y))) < 3e-9
    # no torque about the axis: exact in the tree (4e-16); integrated when cut (2.2e-10)
    assert np.max(np.abs(wrap(res["joint.phi"] - phi))) < 3e-9
    # w' = 0 holds to round-off in both (0 and 3e-15)
    assert np.max(np.abs(res["joint.w"] - M.W0)) < 1e-12
    # frame_b turns about the axis by phi (scipy's rotation): as phi (4e-16, 2.2e-10)
    assert np.max(np.abs(frames_R(res, "body.frame_a") - rot(Y, phi))) < 3e-9


class Bead(Turntable):
    """A spinning bead on a cylindrical rod along the table's x axis (the bead on a rotating
    rod): centrifugal force on the centre of mass, gravity across the rod."""

    S0, V0, PHI0, W0, XC = 0.2, 0.3, 0.4, 5.0, 0.05

    def __init__(self, cut=False):
        super().__init__()
        self.rod = mb.Cylindrical(n=[1, 0, 0], s=self.S0, v=self.V0, phi=self.PHI0, w=self.W0)
        # centre of mass on the rod axis, inertia symmetric about it
        self.bead = mb.Body(m=0.5, r_CM=[self.XC, 0, 0], I_11=0.01, I_22=0.02, I_33=0.02,
                            **(free_guess() if cut else {}))
        self.connect(self.table.frame_b, self.rod.frame_a)
        self.connect(self.rod.frame_b, self.bead.frame_a)


@CUT
def test_cylindrical_bead_on_rotating_rod(cut):
    m = Bead(cut)
    # 101 output points: the dynamic state selection of the cut case is checked there, and
    # the choice made at t = 0 (world x of the bead) degrades as the table turns
    cm, res = simulate(m, [m.table, m.bead] if cut else None, 1.0, 101)
    assert ("rod" in cm.mechanism.cotree) == cut
    t, B = res.t, Bead
    # s'' = OMEGA^2 (s + XC): the centre of mass is XC further out than the frame
    s = (B.S0 + B.XC) * np.cosh(OMEGA * t) + B.V0 / OMEGA * np.sinh(OMEGA * t) - B.XC
    # IDAS rtol 1e-10 on s growing to 1 m (cosh): measured 2.4e-9 (tree), 6.5e-10 (chord)
    assert np.max(np.abs(res["rod.s"] - s)) < 3e-8
    # the spin about a symmetric body's axis is not coupled to the table's rotation:
    # w' = 0 exact in the tree (0), integrated when cut (8e-13)
    assert np.max(np.abs(res["rod.w"] - B.W0)) < 1e-10
    # phi: round-off in the tree (5e-15), integrated when cut (2.7e-10)
    assert np.max(np.abs(wrap(res["rod.phi"] - B.PHI0 - B.W0 * t))) < 3e-9
    # the bead's frame is on the rod's x axis at s, turned with the table: as s (2e-9)
    x_rod = rot(Y, OMEGA * t)[:, :, 0]
    assert np.max(np.abs(res["bead.frame_a.r"] - s[:, None] * x_rod)) < 3e-8


# ----------------------------------------------------------------------------------------
# Planar
N_TILT = np.array([0.0, 1.0, 1.0]) / np.sqrt(2.0)  # plane normal, 45 degrees from vertical
NX_TILT = np.array([1.0, 1.0, 0.0])  # not in the plane: its in-plane part is x


def plane_basis(n, n_x):
    ex = n_x - np.dot(n_x, n) * n
    ex /= np.linalg.norm(ex)
    return ex, np.cross(n, ex)


class TiltedPlane(ac.Model):
    """A body sliding and spinning on a frictionless plane tilted 45 degrees."""

    SX, SY, VX, VY, PHI0, W0 = 0.1, -0.2, 1.0, 2.0, 0.3, -4.0
    M, RC = 1.5, np.array([0.2, 0.1, 0.05])

    def __init__(self, cut=False):
        super().__init__()
        self.world = mb.World(g=list(GRAVITY))
        self.joint = mb.Planar(n=list(N_TILT), n_x=list(NX_TILT), s_x=self.SX, s_y=self.SY,
                               v_x=self.VX, v_y=self.VY, phi=self.PHI0, w=self.W0)
        self.body = mb.Body(m=self.M, r_CM=list(self.RC), **inertia_kwargs(I_BODY),
                            **(free_guess() if cut else {}))
        self.connect(self.world.frame_b, self.joint.frame_a)
        self.connect(self.joint.frame_b, self.body.frame_a)


@CUT
def test_planar_tilted_plane_parabola_and_uniform_spin(cut):
    m = TiltedPlane(cut)
    cm, res = simulate(m, [m.body] if cut else None, 1.0, 21)
    assert ("joint" in cm.mechanism.cotree) == cut and cm.mechanism.dof == 3
    t, P = res.t, TiltedPlane
    ex, ey = plane_basis(N_TILT, NX_TILT)
    phi = P.PHI0 + P.W0 * t
    R = rot(N_TILT, phi)
    # no torque about the normal: uniform spin, the frame turns about n; round-off in the
    # tree (1.5e-13), integrated when cut (1.7e-10)
    assert np.max(np.abs(wrap(res["joint.phi"] - phi))) < 3e-9
    assert np.max(np.abs(frames_R(res, "body.frame_a") - R)) < 3e-9
    # the centre of mass moves on a parabola under the in-plane part of gravity
    g_in = GRAVITY - np.dot(GRAVITY, N_TILT) * N_TILT
    r0 = P.SX * ex + P.SY * ey
    c0 = r0 + R[0] @ P.RC
    vc0 = P.VX * ex + P.VY * ey + np.cross(P.W0 * N_TILT, R[0] @ P.RC)
    c_ref = c0 + np.outer(t, vc0) + 0.5 * np.outer(t**2, g_in)
    c = res["body.frame_a.r"] + np.einsum("tij,j->ti", frames_R(res, "body.frame_a"), P.RC)
    # IDAS rtol 1e-10 over 1 s, positions ~4 m: measured 2.9e-10 (tree), 1.8e-9 (chord)
    assert np.max(np.abs(c - c_ref)) < 3e-8
    r = res["body.frame_a.r"]
    # the frame origin stays in the plane: round-off in both (3e-16; the out-of-plane
    # constraint is solved exactly for one coordinate when cut)
    assert np.max(np.abs(r @ N_TILT)) < 1e-12
    # s_x, s_y are the in-plane coordinates along n_x's in-plane part: round-off (9e-16)
    assert np.max(np.abs(res["joint.s_x"] - r @ ex)) < 1e-12
    assert np.max(np.abs(res["joint.s_y"] - r @ ey)) < 1e-12
    if cut:
        # the out-of-plane multiplier is the normal force on frame_b: it holds the normal
        # part of the weight, -m g.n (no acceleration along n); measured 1e-14 N of 10 N
        lam = res["joint.lambda[0]"]
        assert np.max(np.abs(lam + P.M * np.dot(GRAVITY, N_TILT))) < 1e-9


class Puck(Turntable):
    """A puck on a frictionless turntable (planar joint, plane normal = table axis)."""

    SX, SY, VX, VY, PHI0, W0 = 0.3, 0.1, 0.5, -0.2, 0.2, 1.0
    RC = np.array([0.1, 0.0, 0.05])

    def __init__(self, cut=False):
        super().__init__()
        self.slide = mb.Planar(n=[0, 1, 0], n_x=[1, 0, 0], s_x=self.SX, s_y=self.SY,
                               v_x=self.VX, v_y=self.VY, phi=self.PHI0, w=self.W0)
        self.puck = mb.Body(m=0.7, r_CM=list(self.RC), I_11=0.01, I_22=0.03, I_33=0.02,
                            I_31=0.004, **(free_guess() if cut else {}))
        self.connect(self.table.frame_b, self.slide.frame_a)
        self.connect(self.slide.frame_b, self.puck.frame_a)


@CUT
def test_planar_on_turntable_moves_uniformly_in_the_world(cut):
    m = Puck(cut)
    cm, res = simulate(m, [m.table, m.puck] if cut else None, 1.0, 51)
    assert ("slide" in cm.mechanism.cotree) == cut
    t, P = res.t, Puck
    ex, ey = plane_basis(Y, np.array([1.0, 0, 0]))
    # gravity is normal to the plane and the joint transmits no in-plane force and no
    # torque about y: in the world the centre of mass moves uniformly and the puck spins
    # at the table's speed plus its own
    w_abs = OMEGA + P.W0
    R = rot(Y, P.PHI0 + w_abs * t)
    r0 = P.SX * ex + P.SY * ey
    vc0 = (P.VX * ex + P.VY * ey + np.cross(OMEGA * Y, r0)
           + np.cross(w_abs * Y, R[0] @ P.RC))
    c_ref = r0 + R[0] @ P.RC + np.outer(t, vc0)
    c = res["puck.frame_a.r"] + np.einsum("tij,j->ti", frames_R(res, "puck.frame_a"), P.RC)
    # IDAS rtol 1e-10 over 1 s: measured 1.9e-10 (tree), 1.5e-10 (chord)
    assert np.max(np.abs(c - c_ref)) < 3e-9
    # round-off in the tree (7e-15), integrated when cut (1.3e-10)
    assert np.max(np.abs(frames_R(res, "puck.frame_a") - R)) < 3e-9
    # seen from the table: the joint coordinates are the table-frame coordinates of that
    # uniform motion (Coriolis and centrifugal terms come from the rotating frame_a)
    r_table = np.einsum("tji,tj->ti", rot(Y, OMEGA * t), c_ref - np.einsum("tij,j->ti", R,
                                                                             P.RC))
    # as the positions: measured 1.9e-10 (tree), 1.5e-10 (chord)
    assert np.max(np.abs(res["slide.s_x"] - r_table @ ex)) < 3e-9
    assert np.max(np.abs(res["slide.s_y"] - r_table @ ey)) < 3e-9
    # relative spin constant to round-off: 2e-14 (tree), 8e-14 (chord)
    assert np.max(np.abs(res["slide.w"] - P.W0)) < 1e-11


# ----------------------------------------------------------------------------------------
# FreeMotion
class Flyer(Turntable):
    """A symmetric top thrown from a turntable, its six coordinates measured by a FreeMotion
    joint whose frame_a turns with the table."""

    I1, I3 = 0.1, 0.25
    R0 = Rotation.from_rotvec([0.3, -0.4, 0.5]).as_matrix()
    r0, v0, w0 = np.array([0.3, 0.5, -0.2]), np.array([0.4, 1.0, 0.3]), np.array([0.5, -1, 4])

    def __init__(self, cut=False):
        super().__init__()
        self.free = mb.FreeMotion(r_rel=list(self.r0), v_rel=list(self.v0),
                                  Q=quat_wxyz(self.R0), w_rel=list(self.w0))
        self.body = mb.Body(m=0.7, I_11=self.I1, I_22=self.I1, I_33=self.I3,
                            **(free_guess() if cut else {}))
        self.connect(self.table.frame_b, self.free.frame_a)
        self.connect(self.free.frame_b, self.body.frame_a)


@CUT
def test_free_motion_projectile_and_symmetric_top_seen_from_turntable(cut):
    m = Flyer(cut)
    cm, res = simulate(m, [m.table, m.body] if cut else None, 1.0, 51)
    assert ("free" in cm.mechanism.cotree) == cut and cm.mechanism.dof == 6 + 1
    t, F = res.t, Flyer
    # world motion: the table is the world frame at t = 0 and turns at OMEGA
    vw0 = F.v0 + np.cross(OMEGA * Y, F.r0)
    rw = F.r0 + np.outer(t, vw0) + 0.5 * np.outer(t**2, GRAVITY)
    vw = vw0 + np.outer(t, GRAVITY)
    # torque-free symmetric top: body angular velocity (wb0 at t = 0) has w3 constant and
    # (w1, w2) turning at Om = (I3 - I1) / I1 w3; R(t) = Rot(L, |L| t / I1) R0 Rot(e3, -Om t)
    wb0 = F.w0 + F.R0.T @ (OMEGA * Y)
    Om = (F.I3 - F.I1) / F.I1 * wb0[2]
    L = F.R0 @ (np.array([F.I1, F.I1, F.I3]) * wb0)
    Rb = rot(L, np.linalg.norm(L) * t / F.I1) @ F.R0 @ rot([0, 0, 1], -Om * t)
    w12 = (wb0[0] + 1j * wb0[1]) * np.exp(1j * Om * t)
    wb = np.c_[w12.real, w12.imag, np.full_like(t, wb0[2])]
    Ra = rot(Y, OMEGA * t)
    # IDAS rtol 1e-10 over 1 s: measured 6e-12 (tree), 9e-11 (chord)
    assert np.max(np.abs(res["body.frame_a.r"] - rw)) < 1e-9
    # orientation of the top: measured 1.6e-10 (tree), 8.7e-10 (chord)
    assert np.max(np.abs(frames_R(res, "body.frame_a") - Rb)) < 1e-8
    # the joint's coordinates: relative to the turning table, in its coordinates
    # (frame_b coordinates for w_rel)
    r_rel = np.einsum("tji,tj->ti", Ra, rw)
    v_rel = np.einsum("tji,tj->ti", Ra, vw - np.cross(OMEGA * Y, rw))
    w_rel = wb - np.einsum("tji,j->ti", Rb, OMEGA * Y)
    # as the world position (6e-12, 9e-11)
    assert np.max(np.abs(res["free.r_rel"] - r_rel)) < 1e-9
    # measured 3e-12 (tree), 7e-14 (chord)
    assert np.max(np.abs(res["free.v_rel"] - v_rel)) < 1e-10
    # the top's nutation rates: measured 6.3e-10 (tree), 3.5e-9 (chord)
    assert np.max(np.abs(res["free.w_rel"] - w_rel)) < 3e-8
    Qr = res["free.Q"]
    R_rel = Rotation.from_quat(np.c_[Qr[:, 1:], Qr[:, :1]]).as_matrix()
    # as the orientation: measured 1.8e-10 (tree), 8.3e-10 (chord)
    assert np.max(np.abs(R_rel - np.einsum("tji,tjk->tik", Ra, Rb))) < 1e-8


class CutFree(ac.Model):
    """A free body whose FreeMotion joint to the world is cut: the body's six coordinates
    are branch coordinates with guessed starts, the joint's fixed starts determine them."""

    Q0 = quat_wxyz(Rotation.from_rotvec([-0.31, -0.99, 0.1]).as_matrix())
    R0, V0, W0 = [-0.07, -0.94, -0.1], [0.1, 0.04, -0.51], [0.33, -3.68, -2.05]

    def __init__(self):
        super().__init__()
        self.world = mb.World(g=list(GRAVITY))
        self.joint = mb.FreeMotion(r_rel=self.R0, v_rel=self.V0, Q=self.Q0, w_rel=self.W0)
        self.body = mb.Body(m=1.0, I_11=0.1, I_22=0.1, I_33=0.25, **free_guess())
        self.connect(self.world.frame_b, self.joint.frame_a)
        self.connect(self.joint.frame_b, self.body.frame_a)


def test_guessed_quaternion_keeps_the_fixed_starts():
    """Regression (acausal/initialize.py): the body's quaternion enters only normalised, so
    its scale is a null direction of the initialization Jacobian. An LU Newton step threw
    it to 1e21, the Newton stalled, and its test relative to the largest unknown accepted
    w_rel 0.04 rad/s off its fixed start without an error."""
    m = CutFree()
    res = ac.simulate(ac.build(m, tree=[m.body]), 0.01, rtol=RTOL, atol=ATOL, n_points=2)
    # the fixed starts hold to the initial Newton tolerance (residual < 1e-12)
    np.testing.assert_allclose(res["joint.w_rel"][0], CutFree.W0, rtol=0, atol=1e-10)
    np.testing.assert_allclose(res["joint.Q"][0], CutFree.Q0, rtol=0, atol=1e-10)
    np.testing.assert_allclose(res["joint.r_rel"][0], CutFree.R0, rtol=0, atol=1e-10)
    # and the body's quaternion keeps its scale near the guess's (minimum-norm steps; it
    # was 8e21 before the fix)
    assert 0.5 < np.linalg.norm(res["body.Q"][0]) < 10.0


# ----------------------------------------------------------------------------------------
# Weld
class Welded(ac.Model):
    """Two bodies welded together swing as one compound pendulum about z."""

    L1 = 0.6
    M1, C1, M2, C2 = 1.2, np.array([0.1, 0.0, 0.05]), 0.8, np.array([0.05, -0.1, -0.3])
    ARM2 = np.array([0.3, 0.2, 0.0])
    I1 = np.array([[0.01, 0, 0.002], [0, 0.015, 0], [0.002, 0, 0.02]])
    I2 = np.array([[0.02, 0, 0], [0, 0.01, -0.003], [0, -0.003, 0.03]])
    THETA0 = np.radians(60.0)

    @classmethod
    def reference(cls):
        """CM of each body in the joint frame, total mass, CM distance d, J_zz about the
        pivot (parallel-axis theorem: only the distance normal to z counts), equilibrium."""
        c1 = np.array([cls.L1, 0, 0]) + cls.C1
        c2 = np.array([cls.L1, 0, 0]) + cls.ARM2 + cls.C2
        M = cls.M1 + cls.M2
        c = (cls.M1 * c1 + cls.M2 * c2) / M
        J = (cls.I1[2, 2] + cls.M1 * (c1[0] ** 2 + c1[1] ** 2)
             + cls.I2[2, 2] + cls.M2 * (c2[0] ** 2 + c2[1] ** 2))
        d = np.hypot(c[0], c[1])
        phi_eq = -np.pi / 2 - np.arctan2(c[1], c[0])  # the CM straight below the pivot
        return c1, c2, M, d, J, phi_eq

    def __init__(self, cut=False):
        super().__init__()
        *_, phi_eq = self.reference()
        self.world = mb.World(g=list(GRAVITY))
        self.joint = mb.Revolute(n=[0, 0, 1], phi=phi_eq + self.THETA0, w=0.0)
        self.arm1 = mb.FixedTranslation(r=[self.L1, 0, 0])
        self.body1 = mb.Body(m=self.M1, r_CM=list(self.C1), **inertia_kwargs(self.I1))
        self.weld = mb.Weld()
        self.arm2 = mb.FixedTranslation(r=list(self.ARM2))
        self.body2 = mb.Body(m=self.M2, r_CM=list(self.C2), **inertia_kwargs(self.I2),
                             **(free_guess() if cut else {}))
        self.connect(self.world.frame_b, self.joint.frame_a)
        self.connect(self.joint.frame_b, self.arm1.frame_a)
        self.connect(self.arm1.frame_b, self.body1.frame_a, self.weld.frame_a)
        self.connect(self.weld.frame_b, self.arm2.frame_a)
        self.connect(self.arm2.frame_b, self.body2.frame_a)


@CUT
def test_weld_two_bodies_swing_as_one_compound_pendulum(cut):
    m = Welded(cut)
    c1, c2, M, d, J, phi_eq = Welded.reference()
    w0 = np.sqrt(M * G * d / J)
    # cut: every other edge of the loop world - body2 - arm2 - weld - arm1 - joint is forced
    # into the tree, so the weld is the chord (6 constraints)
    tree = [m.joint, m.arm1, m.arm2, m.body2] if cut else None
    cm, res = simulate(m, tree, period(Welded.THETA0, w0), 51)
    assert ("weld" in cm.mechanism.cotree) == cut and cm.mechanism.dof == 1
    theta, theta_d, theta_dd = pendulum(res.t, Welded.THETA0, w0)
    # exact 60-degree pendulum over one period, IDAS rtol 1e-10: measured 9e-10 (tree),
    # 1.8e-10 (chord)
    assert np.max(np.abs(res["joint.phi"] - phi_eq - theta)) < 2e-8
    # its rate: measured 2.3e-9 (tree), 2.8e-10 (chord)
    assert np.max(np.abs(res["joint.w"] - theta_d)) < 3e-8
    if cut:
        # the weld holds its frames together: the loop closure, solved exactly (0)
        gap = res["weld.frame_b.r"] - res["weld.frame_a.r"]
        assert np.max(np.abs(gap)) < 1e-12
        # its position multipliers are the force on its frame_b, the only support of body
        # 2: m2 (a_cm2 - g) with a_cm2 of the closed form; measured 1.7e-9 N of ~20 N
        phi = phi_eq + theta
        Rz = rot([0, 0, 1], phi)
        ez = np.array([0.0, 0.0, 1.0])
        rc2 = np.einsum("tij,j->ti", Rz, c2)
        a2 = (theta_dd[:, None] * np.cross(ez, rc2)
              - theta_d[:, None] ** 2 * np.c_[rc2[:, :2], 0 * rc2[:, 2]])
        F = np.c_[[res[f"weld.lambda[{k}]"] for k in range(3)]].T
        assert np.max(np.abs(F - Welded.M2 * (a2 - GRAVITY))) < 3e-8


# ----------------------------------------------------------------------------------------
# FixedRotation
class Bent(ac.Model):
    """A pendulum whose body hangs on an arm shifted by R_ARM and turned by ANGLE about a
    skew axis (not normalised on purpose) in the joint frame."""

    R_ARM = np.array([0.4, 0.1, 0.2])
    AXIS, ANGLE = np.array([1.0, 2.0, 2.0]), 0.9
    M, RC = 1.3, np.array([0.3, 0.1, -0.2])
    THETA0 = np.radians(100.0)

    @classmethod
    def reference(cls):
        Rf = rot(cls.AXIS, cls.ANGLE)
        c = cls.R_ARM + Rf @ cls.RC  # CM in the joint frame
        I = Rf @ I_BODY @ Rf.T  # inertia about the CM in the joint frame
        J = I[2, 2] + cls.M * (c[0] ** 2 + c[1] ** 2)
        d = np.hypot(c[0], c[1])
        return Rf, c, d, J, -np.pi / 2 - np.arctan2(c[1], c[0])

    def __init__(self, cut=False):
        super().__init__()
        *_, phi_eq = self.reference()
        self.world = mb.World(g=list(GRAVITY))
        self.joint = mb.Revolute(n=[0, 0, 1], phi=phi_eq + self.THETA0, w=0.0)
        self.arm = mb.FixedRotation(r=list(self.R_ARM), n=list(self.AXIS), angle=self.ANGLE)
        self.body = mb.Body(m=self.M, r_CM=list(self.RC), **inertia_kwargs(I_BODY),
                            **(free_guess() if cut else {}))
        self.connect(self.world.frame_b, self.joint.frame_a)
        self.connect(self.joint.frame_b, self.arm.frame_a)
        self.connect(self.arm.frame_b, self.body.frame_a)


@CUT
def test_fixed_rotation_bent_pendulum_geometry_and_period(cut):
    m = Bent(cut)
    Rf, c, d, J, phi_eq = Bent.reference()
    w0 = np.sqrt(Bent.M * G * d / J)
    cm, res = simulate(m, [m.joint, m.body] if cut else None, period(Bent.THETA0, w0), 51)
    assert ("arm" in cm.mechanism.cotree) == cut and cm.mechanism.dof == 1
    phi = res["joint.phi"]
    # frame_b = frame_a shifted by r, then turned by angle about n (frame_a coordinates):
    # r_b = Rz(phi) r, R_b = Rz(phi) Rot(n, angle) with the simulated phi: round-off in
    # the tree (3e-16), the loop closure when cut (2.2e-13)
    Rz = rot([0, 0, 1], phi)
    assert np.max(np.abs(res["body.frame_a.r"] - Rz @ Bent.R_ARM)) < 1e-11
    assert np.max(np.abs(frames_R(res, "body.frame_a") - Rz @ Rf)) < 1e-11
    # exact 100-degree pendulum with the rotated inertia, IDAS rtol 1e-10 over one
    # period: measured 3.5e-9 (tree), 1.5e-10 (chord)
    theta, theta_d, theta_dd = pendulum(res.t, Bent.THETA0, w0)
    assert np.max(np.abs(phi - phi_eq - theta)) < 5e-8
    if cut:
        # its position multipliers are the force holding the body: m (a_cm - g)
        ez = np.array([0.0, 0.0, 1.0])
        rc = np.einsum("tij,j->ti", rot([0, 0, 1], phi_eq + theta), c)
        a = (theta_dd[:, None] * np.cross(ez, rc)
             - theta_d[:, None] ** 2 * np.c_[rc[:, :2], 0 * rc[:, 2]])
        F = np.c_[[res[f"arm.lambda[{k}]"] for k in range(3)]].T
        # measured 2e-9 N of ~30 N
        assert np.max(np.abs(F - Bent.M * (a - GRAVITY))) < 3e-8


# ----------------------------------------------------------------------------------------
# WorldForce
class Pushed(ac.Model):
    """A free spinning body under gravity, a constant world force and f(t)."""

    M, F0, A, OM, B = 2.0, np.array([3.0, -1.0, 0.5]), 4.0, 5.0, 1.5
    r0, v0, w0 = np.array([0.1, 0.2, 0.3]), np.array([1.0, 2.0, -1.0]), [0.3, -0.2, 2.0]

    def __init__(self):
        super().__init__()
        self.world = mb.World(g=list(GRAVITY))
        self.body = mb.Body(m=self.M, I_11=0.1, I_22=0.1, I_33=0.1, r_0=list(self.r0),
                            v_0=list(self.v0), Q=[1.0, 0, 0, 0], w_a=self.w0)
        self.const = mb.WorldForce(force=list(self.F0))
        self.varying = mb.WorldForce(force=lambda t: [self.A * cs.sin(self.OM * t),
                                                      self.B * t, 0.0])
        self.connect(self.body.frame_a, self.const.frame_b, self.varying.frame_b)


def test_world_force_constant_and_time_varying_on_free_body():
    cm = ac.build(Pushed())
    assert cm.mechanism.cotree == ["const", "varying"]
    res = ac.simulate(cm, 1.0, rtol=RTOL, atol=ATOL, n_points=21)
    t, P = res.t, Pushed
    # m r'' = m g + F0 + [A sin(OM t), B t, 0]
    r = P.r0 + np.outer(t, P.v0) + 0.5 * np.outer(t**2, GRAVITY + P.F0 / P.M)
    r[:, 0] += P.A / (P.M * P.OM) * (t - np.sin(P.OM * t) / P.OM)
    r[:, 1] += P.B * t**3 / (6 * P.M)
    # IDAS rtol 1e-10 over 1 s on ~3 m: measured 3.4e-9
    assert np.max(np.abs(res["body.frame_a.r"] - r)) < 3e-8
    # the forces act at the centre of mass: no torque, the spin stays (exact: 0)
    assert np.max(np.abs(res["body.w_a"] - P.w0)) < 1e-12


class TiltedPendulum(ac.Model):
    """A pendulum pushed sideways by a constant world force at its bob."""

    L, M, JC, FX = 0.8, 1.5, 0.01, 6.0
    THETA0 = np.radians(120.0)
    PHI_EQ = np.arctan2(-G, FX / M)  # along m g + F: tan(deflection) = F / (m g)

    def __init__(self):
        super().__init__()
        self.world = mb.World(g=list(GRAVITY))
        self.joint = mb.Revolute(n=[0, 0, 1], phi=self.PHI_EQ + self.THETA0, w=0.0)
        self.rod = mb.FixedTranslation(r=[self.L, 0, 0])
        self.bob = mb.Body(m=self.M, I_11=0.02, I_22=0.03, I_33=self.JC)
        self.push = mb.WorldForce(force=[self.FX, 0, 0])
        self.connect(self.world.frame_b, self.joint.frame_a)
        self.connect(self.joint.frame_b, self.rod.frame_a)
        self.connect(self.rod.frame_b, self.bob.frame_a, self.push.frame_b)


def test_world_force_tilts_the_pendulum():
    P = TiltedPendulum
    # a pendulum in the effective field g + F/m about its tilted equilibrium
    g_eff = np.hypot(G, P.FX / P.M)
    w0 = np.sqrt(P.M * g_eff * P.L / (P.JC + P.M * P.L**2))
    assert np.degrees(P.PHI_EQ + np.pi / 2) == pytest.approx(np.degrees(np.arctan(
        P.FX / (P.M * G))))
    res = ac.simulate(P(), period(P.THETA0, w0), rtol=RTOL, atol=ATOL, n_points=51)
    theta, *_ = pendulum(res.t, P.THETA0, w0)
    # exact 120-degree pendulum over one period, IDAS rtol 1e-10: measured 1.2e-9
    assert np.max(np.abs(res["joint.phi"] - P.PHI_EQ - theta)) < 2e-8


# ----------------------------------------------------------------------------------------
# WorldTorque
class Spun(ac.Model):
    """A body on a vertical revolute (gravity along the axis), a world torque applied at
    the end of a lever fixed to it."""

    ARM, M, RC = np.array([0.5, 0.0, 0.1]), 1.2, np.array([0.3, 0.4, -0.2])
    T, PHI0 = np.array([0.7, -2.0, 0.4]), 0.3

    def __init__(self):
        super().__init__()
        self.world = mb.World(g=list(GRAVITY))
        self.joint = mb.Revolute(n=[0, 1, 0], phi=self.PHI0, w=0.0)
        self.arm = mb.FixedTranslation(r=list(self.ARM))
        self.body = mb.Body(m=self.M, r_CM=list(self.RC), **inertia_kwargs(I_BODY))
        self.lever = mb.FixedTranslation(r=[0.0, 0.7, 0.3])
        self.torque = mb.WorldTorque(torque=list(self.T))
        self.connect(self.world.frame_b, self.joint.frame_a)
        self.connect(self.joint.frame_b, self.arm.frame_a)
        self.connect(self.arm.frame_b, self.body.frame_a, self.lever.frame_a)
        self.connect(self.lever.frame_b, self.torque.frame_b)


def test_world_torque_spins_up_a_revolute():
    cm = ac.build(Spun())
    assert "torque" in cm.mechanism.cotree
    res = ac.simulate(cm, 1.0, rtol=RTOL, atol=ATOL, n_points=21)
    S = Spun
    # only the component along the axis drives it; J about the axis by the parallel-axis
    # theorem (distance of the CM from the y axis)
    c = S.ARM + S.RC
    J = I_BODY[1, 1] + S.M * (c[0] ** 2 + c[2] ** 2)
    phi = S.PHI0 + S.T[1] * res.t**2 / (2 * J)
    # IDAS rtol 1e-10 over 1 s, phi ~ 3 rad: measured 4e-11
    assert np.max(np.abs(res["joint.phi"] - phi)) < 1e-9


class Twisted(ac.Model):
    """A free body with a spherical inertia under a time-varying torque about a fixed axis
    U, applied at the end of an arm fixed to it, no gravity."""

    I, C, OM, W0 = 0.2, 1.5, 4.0, 0.7
    U = np.array([2.0, -1.0, 2.0]) / 3.0
    R0 = Rotation.from_rotvec([0.3, -0.5, 0.2]).as_matrix()

    def __init__(self):
        super().__init__()
        self.world = mb.World(g=[0, 0, 0])
        self.body = mb.Body(m=1.0, I_11=self.I, I_22=self.I, I_33=self.I, r_0=[0, 0, 0],
                            v_0=[0, 0, 0], Q=quat_wxyz(self.R0),
                            w_a=list(self.R0.T @ (self.W0 * self.U)))
        self.arm = mb.FixedTranslation(r=[0.2, 0.3, 0.1])
        self.torque = mb.WorldTorque(torque=lambda t: [self.C * cs.cos(self.OM * t) * u
                                                       for u in self.U])
        self.connect(self.body.frame_a, self.arm.frame_a)
        self.connect(self.arm.frame_b, self.torque.frame_b)


def test_world_torque_time_varying_on_free_body():
    res = ac.simulate(Twisted(), 2.0, rtol=RTOL, atol=ATOL, n_points=21)
    t, T = res.t, Twisted
    # I w' = C cos(OM t) U with w(0) = W0 U: rotation about the fixed axis U by
    # W0 t + C (1 - cos(OM t)) / (I OM^2); no force, the body stays where it is
    angle = T.W0 * t + T.C * (1 - np.cos(T.OM * t)) / (T.I * T.OM**2)
    w = T.W0 + T.C * np.sin(T.OM * t) / (T.I * T.OM)
    # IDAS rtol 1e-10 over 2 s: measured 5.1e-10
    assert np.max(np.abs(frames_R(res, "body.frame_a") - rot(T.U, angle) @ T.R0)) < 1e-8
    # measured 3.6e-10
    assert np.max(np.abs(res["body.frame_a.w"] - np.outer(w, T.U))) < 5e-9
    # a pure torque moves no point: r stays exactly 0
    assert np.max(np.abs(res["body.frame_a.r"])) < 1e-12


# ----------------------------------------------------------------------------------------
# line force elements whose frames coincide
class ThroughTheAnchor(ac.Model):
    """A body on a slide along x through the world origin, a spring from the origin to
    it: the spring's ends coincide at the start."""

    def __init__(self, s_unstretched: float = 0.0, d: float = 0.0):
        super().__init__()
        self.world = mb.World(g=[0, 0, 0])
        self.slide = mb.Prismatic(n=[1, 0, 0], s=0.0, v=1.0)
        self.body = mb.Body(m=2.0)
        self.spring = mb.SpringDamper(c=50.0, d=d, s_unstretched=s_unstretched)
        self.connect(self.world.frame_b, self.slide.frame_a, self.spring.frame_a)
        self.connect(self.slide.frame_b, self.body.frame_a, self.spring.frame_b)


def test_zero_length_spring_through_its_anchor_is_a_harmonic_oscillator():
    """The force of a zero-length spring is c (r_b - r_a), defined where its ends
    coincide; it was formed as f e with the unit vector e = d / |d|, a 0/0 there, and the
    run failed at t = 0 blaming the slide. Reference: s = (v0 / w) sin(w t), w =
    sqrt(c / m) = 5 rad/s."""
    res = ac.simulate(ThroughTheAnchor(), 1.0, rtol=RTOL, atol=ATOL)
    # (rtol 1e-10 over 0.8 periods of a 0.2 m oscillation: observed 6e-10 m)
    assert np.abs(res["slide.s"] - 0.2 * np.sin(5.0 * res.t)).max() < 1e-8
    # the spring's own force, f = c s, from its variables
    assert np.allclose(res["spring.f"], 50.0 * np.abs(res["slide.s"]), rtol=0, atol=1e-9)


@pytest.mark.parametrize("kw", [{"s_unstretched": 0.1}, {"d": 1.0}])
def test_line_force_without_direction_at_the_start_is_named(kw):
    """With a free length or damping the force needs the direction between the frames,
    undefined where they coincide: the build names the spring (the run's NaN at t = 0
    named the joint whose equation of motion the force enters)."""
    with pytest.raises(ac.ModelDefinitionError, match=(
            r"SpringDamper 'spring': its force on frame_a is not a number at the start "
            r"values \(an expression of it is undefined there: its frames' origins "
            r"coincide")):
        ac.build(ThroughTheAnchor(**kw))
