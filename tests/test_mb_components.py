"""Closed-form checks of the 3D multibody components that no other test touches
(``Cylindrical``, ``Planar``, ``FreeMotion``, ``Weld``, ``FixedRotation``, ``WorldForce``,
``WorldTorque``): shared references and a regression test of the initialization of a cut
FreeMotion joint."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation
from scipy.special import ellipj, ellipk

import acausal as ac
from components import multibody as mb

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
