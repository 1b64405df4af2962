"""3D multibody reference models shared by the tests (and the benchmark)."""

import numpy as np

import acausal as ac
from components import multibody as mb
from components import rotational as rot


class Pendulum(ac.Model):
    """Point mass on a massless rod of length L about a revolute z-axis; phi from -y."""

    def __init__(self, theta0_deg=170.0, L=1.0, m=1.0, dynamics="auto"):
        super().__init__()
        self.world = mb.World(g=[0, -9.81, 0], dynamics=dynamics)
        self.joint = mb.Revolute(n=[0, 0, 1], phi=-np.pi / 2 + np.radians(theta0_deg), w=0.0)
        self.rod = mb.FixedTranslation(r=[L, 0, 0])
        self.body = mb.Body(m=m, I_11=0.0, I_22=0.0, I_33=0.0)
        self.connect(self.world.frame_b, self.joint.frame_a)
        self.connect(self.joint.frame_b, self.rod.frame_a)
        self.connect(self.rod.frame_b, self.body.frame_a)


FOURBAR = dict(a=0.3, b=1.0, c=0.8, d=0.9)  # crank, coupler, rocker, ground [m]


def fourbar_closed_form(theta, a=0.3, b=1.0, c=0.8, d=0.9):
    """Crank tip A and coupler-rocker pivot B (upper assembly branch) for crank angle theta."""
    A = np.array([a * np.cos(theta), a * np.sin(theta)])
    C = np.array([d, 0.0])
    dv = C - A
    L = np.linalg.norm(dv)
    x = (b**2 - c**2 + L**2) / (2 * L)
    h = np.sqrt(max(b**2 - x**2, 0.0))  # (0 up to roundoff: links on one line)
    e = dv / L
    return A, A + x * e + h * np.array([-e[1], e[0]])


class FourBar(ac.Model):
    """Planar four-bar with four revolute joints in 3D, crank driven at constant speed by a
    1D Speed source on the crank joint's axis flange; one revolute (j4) closes the loop.

    Variants: ``tilt`` turns the axis of j4 about x by that angle [rad] (a spatial loop of
    four revolutes that cannot move); ``w2`` [rad/s] adds a second Speed source,
    ``drive2``, on the axis of j2 (two drivers on a one-degree-of-freedom loop);
    ``plane_tilt`` [rad] mounts the whole loop on a ``FixedRotation`` (``mount``) about
    the world's x axis (a planar loop whose plane is no plane of the world's axes). With
    ``a + b == c + d`` and ``b == d`` (a parallelogram) the start ``theta = 0`` has all
    links on the x axis, a singular configuration."""

    def __init__(self, w=2 * np.pi, a=0.3, b=1.0, c=0.8, d=0.9, tilt=0.0, w2=None,
                 plane_tilt=0.0):
        super().__init__()
        A0, B0 = fourbar_closed_form(0.0, a, b, c, d)
        phi2 = np.arctan2(B0[1] - A0[1], B0[0] - A0[0])
        phi3 = np.arctan2(B0[1], B0[0] - d)
        self.world = mb.World(g=[0, -9.81, 0])
        self.crank_joint = mb.Revolute(use_axis_flange=True, phi=0.0)
        self.speed = rot.Speed(w_ref=w)
        self.crank = mb.FixedTranslation(r=[a, 0, 0])
        self.crank_body = mb.Body(m=1.0, r_CM=[a / 2, 0, 0], I_33=0.01)
        self.j2 = mb.Revolute(use_axis_flange=w2 is not None, phi=ac.guess(phi2))
        self.coupler = mb.FixedTranslation(r=[b, 0, 0])
        self.coupler_body = mb.Body(m=2.0, r_CM=[b / 2, 0, 0], I_33=0.1)
        self.j3 = mb.Revolute(phi=ac.guess(phi3 - phi2))
        self.rocker = mb.FixedTranslation(r=[-c, 0, 0])
        self.rocker_body = mb.Body(m=1.5, r_CM=[-c / 2, 0, 0], I_33=0.05)
        self.ground_arm = mb.FixedTranslation(r=[d, 0, 0])
        self.j4 = mb.Revolute(n=[0.0, np.sin(tilt), np.cos(tilt)])
        if w2 is not None:
            self.drive2 = rot.Speed(w_ref=w2)
            self.connect(self.drive2.flange, self.j2.axis)
        base = self.world.frame_b
        if plane_tilt:
            self.mount = mb.FixedRotation(n=[1, 0, 0], angle=plane_tilt)
            self.connect(base, self.mount.frame_a)
            base = self.mount.frame_b
        self.connect(base, self.crank_joint.frame_a, self.ground_arm.frame_a)
        self.connect(self.speed.flange, self.crank_joint.axis)
        self.connect(self.crank_joint.frame_b, self.crank.frame_a, self.crank_body.frame_a)
        self.connect(self.crank.frame_b, self.j2.frame_a)
        self.connect(self.j2.frame_b, self.coupler.frame_a, self.coupler_body.frame_a)
        self.connect(self.coupler.frame_b, self.j3.frame_a)
        self.connect(self.j3.frame_b, self.rocker.frame_a, self.rocker_body.frame_a)
        self.connect(self.rocker.frame_b, self.j4.frame_b)
        self.connect(self.ground_arm.frame_b, self.j4.frame_a)


def rssr_rocker_angle(theta, a=0.15, b=0.6, c=0.3, d=0.5, h=0.2, branch=+1):
    """Closed-form rocker angle psi(theta) of :class:`RSSR` from the coupler length
    ``|B - A| = b``: crank tip ``A = a (cos theta, sin theta, 0)``, rocker tip ``B = (d +
    c cos psi, 0, h - c sin psi)`` (a rotation by psi about +y)."""
    Dx, Dy, Dz = d - a * np.cos(theta), -a * np.sin(theta), h
    K = (b * b - c * c - (Dx**2 + Dy**2 + Dz**2)) / (2 * c)
    return -np.arctan2(Dz, Dx) + branch * np.arccos(K / np.hypot(Dx, Dz))


class RSSR(ac.Model):
    """Spatial RSSR linkage: a crank about z at the origin (driven at 2 pi rad/s), a
    coupler with ball joints at both ends, a rocker about y at ``(d, 0, h)``. The first
    ball joint's orientation is guessed consistently, the second's left at its default
    start; the rocker joint's angle is guessed on the ``branch=+1`` assembly."""

    def __init__(self, a=0.15, b=0.6, c=0.3, d=0.5, h=0.2):
        super().__init__()
        A0 = np.array([a, 0.0, 0.0])
        psi0 = rssr_rocker_angle(0.0, a, b, c, d, h)
        ex = (np.array([d + c * np.cos(psi0), 0.0, h - c * np.sin(psi0)]) - A0) / b
        ey = np.cross([0.0, 0.0, 1.0], ex)
        ey /= np.linalg.norm(ey)
        Q1 = _matrix_quaternion(np.column_stack([ex, ey, np.cross(ex, ey)]))
        self.world = mb.World()
        self.crank_joint = mb.Revolute(n=[0, 0, 1], use_axis_flange=True, phi=0.0)
        self.drive = rot.Speed(w_ref=2 * np.pi)
        self.crank = mb.FixedTranslation(r=[a, 0, 0])
        self.crank_body = mb.Body(m=0.5, r_CM=[a / 2, 0, 0], I_11=1e-4, I_22=1e-3, I_33=1e-3)
        self.s1 = mb.Spherical(Q=ac.guess(Q1), w_rel=ac.guess([0.0, 0.0, 0.0]))
        self.coupler = mb.FixedTranslation(r=[b, 0, 0])
        self.coupler_body = mb.Body(m=1.0, r_CM=[b / 2, 0, 0], I_11=1e-3, I_22=0.03,
                                    I_33=0.03)
        self.s2 = mb.Spherical()
        self.pivot = mb.FixedTranslation(r=[d, 0, h])
        self.rocker_joint = mb.Revolute(n=[0, 1, 0], phi=ac.guess(psi0))
        self.rocker = mb.FixedTranslation(r=[c, 0, 0])
        self.rocker_body = mb.Body(m=0.8, r_CM=[c / 2, 0, 0], I_11=1e-4, I_22=6e-3,
                                   I_33=6e-3)
        self.connect(self.world.frame_b, self.crank_joint.frame_a, self.pivot.frame_a)
        self.connect(self.drive.flange, self.crank_joint.axis)
        self.connect(self.crank_joint.frame_b, self.crank.frame_a, self.crank_body.frame_a)
        self.connect(self.crank.frame_b, self.s1.frame_a)
        self.connect(self.s1.frame_b, self.coupler.frame_a, self.coupler_body.frame_a)
        self.connect(self.coupler.frame_b, self.s2.frame_a)
        self.connect(self.pivot.frame_b, self.rocker_joint.frame_a)
        self.connect(self.rocker_joint.frame_b, self.rocker.frame_a, self.rocker_body.frame_a)
        self.connect(self.rocker.frame_b, self.s2.frame_b)


def _matrix_quaternion(R):
    """The unit quaternion (w, x, y, z) of a rotation matrix (trace form: the rotations
    used here are far from a half turn)."""
    w = 0.5 * np.sqrt(1.0 + np.trace(R))
    return [w, (R[2, 1] - R[1, 2]) / (4 * w), (R[0, 2] - R[2, 0]) / (4 * w),
            (R[1, 0] - R[0, 1]) / (4 * w)]


class Spinner(ac.Model):
    """Free rigid body (no gravity) spinning near its intermediate principal axis."""

    I = (1.0, 2.0, 3.0)

    def __init__(self, w0=(0.01, 5.0, 0.0)):
        super().__init__()
        self.world = mb.World(g=[0, 0, 0])
        self.body = mb.Body(m=1.0, I_11=self.I[0], I_22=self.I[1], I_33=self.I[2],
                            r_0=[0, 0, 0], v_0=[0, 0, 0], Q=[1.0, 0, 0, 0], w_a=list(w0))


class SphericalDoublePendulum(ac.Model):
    """Two bodies on rigid arms hanging from spherical joints, with a spatial initial motion."""

    def __init__(self):
        super().__init__()
        self.world = mb.World(g=[0, -9.81, 0])
        q1 = np.array([np.cos(0.4), 0, 0, np.sin(0.4)])
        q2 = np.array([np.cos(0.3), 0.6 * np.sin(0.3), 0, 0.8 * np.sin(0.3)])
        self.s1 = mb.Spherical(Q=q1, w_rel=[0.5, 0.0, 1.0])
        self.arm1 = mb.FixedTranslation(r=[0, -1.0, 0])
        self.b1 = mb.Body(m=1.0, r_CM=[0, -0.5, 0], I_11=0.1, I_22=0.01, I_33=0.1)
        self.s2 = mb.Spherical(Q=q2, w_rel=[0.0, 2.0, -1.0])
        self.arm2 = mb.FixedTranslation(r=[0, -0.8, 0])
        self.b2 = mb.Body(m=0.7, r_CM=[0, -0.4, 0], I_11=0.05, I_22=0.005, I_33=0.05)
        self.connect(self.world.frame_b, self.s1.frame_a)
        self.connect(self.s1.frame_b, self.arm1.frame_a, self.b1.frame_a)
        self.connect(self.arm1.frame_b, self.s2.frame_a)
        self.connect(self.s2.frame_b, self.arm2.frame_a, self.b2.frame_a)


def body_energy(res, name, m, r_CM, I, g=(0, -9.81, 0)):
    """Kinetic + potential energy of a Body from its frame_a kinematics in a result."""
    R = res[f"{name}.frame_a.R"].reshape(-1, 3, 3).transpose(0, 2, 1)  # column-major
    r, v, w = res[f"{name}.frame_a.r"], res[f"{name}.frame_a.v"], res[f"{name}.frame_a.w"]
    rc = np.einsum("tij,j->ti", R, r_CM)
    vc = v + np.cross(w, rc)
    Iw = np.einsum("tij,jk,tlk->til", R, np.asarray(I), R)
    kin = 0.5 * m * np.sum(vc**2, 1) + 0.5 * np.einsum("ti,tij,tj->t", w, Iw, w)
    return kin - m * ((r + rc) @ np.asarray(g))
