"""The extension point for flexible bodies: components with coordinates of their own.

A flexible body is a component whose attachment frames move with its elastic coordinates
and which contributes generalized forces conjugate to them. This test writes the simplest
such component, a mass sliding on a spring inside a part, and checks it against closed
forms: the same mechanism machinery carries elastic coordinates.
"""

import casadi as cs
import numpy as np

import acausal as ac
from acausal import Parameter, Variable, der
from acausal.multibody.base import Coordinates, Frame, MultibodyComponent
from components import multibody as mb


class SlidingMass(MultibodyComponent):
    """A point mass m sliding along x of frame_a, held by a spring k (coordinate s)."""

    m = Parameter(1.0, unit="kg", doc="sliding mass", min=0.0)
    k = Parameter(100.0, unit="N/m", doc="spring stiffness", min=0.0)
    frame_a = Frame("host frame")
    s = Variable(unit="m", doc="displacement along x of frame_a")
    v = Variable(unit="m/s", doc="sliding velocity")

    def internal_motion(self):
        return Coordinates([self.s], [self.v], cs.SX(self.v))

    def _force(self, kin, gravity):
        k = kin["frame_a"]
        n = k.R @ cs.DM([1.0, 0.0, 0.0])
        rho = n * self.s
        a = (k.a + cs.cross(k.z, rho) + cs.cross(k.w, cs.cross(k.w, rho))
             + 2 * cs.cross(k.w, n * self.v) + n * der(self.v))
        return self.m * (gravity - a), rho, n

    def wrenches(self, kin, gravity):
        F, rho, _ = self._force(kin, gravity)
        return [("frame_a", F, cs.cross(rho, F))]

    def generalized_forces(self, kin, gravity):
        F, _, n = self._force(kin, gravity)
        return [(self.v, cs.dot(F, n) - self.k * self.s)]


class Fixed(ac.Model):
    def __init__(self):
        super().__init__()
        self.world = mb.World(g=[0, -9.81, 0])
        self.slider = SlidingMass(m=2.0, k=50.0, s=0.1, v=0.0)
        self.connect(self.world.frame_b, self.slider.frame_a)


class OnCart(ac.Model):
    """The slider inside a cart of mass M moving freely along x (prismatic joint)."""

    def __init__(self, M=3.0):
        super().__init__()
        self.world = mb.World(g=[0, 0, 0])
        self.rail = mb.Prismatic(n=[1, 0, 0], s=0.0, v=0.0)
        self.cart = mb.Body(m=M)
        self.slider = SlidingMass(m=2.0, k=50.0, s=0.1, v=0.0)
        self.connect(self.world.frame_b, self.rail.frame_a)
        self.connect(self.rail.frame_b, self.cart.frame_a, self.slider.frame_a)


def test_internal_coordinate_in_a_fixed_part():
    res = ac.simulate(Fixed(), 2.0, n_points=201, rtol=1e-10, atol=1e-12)
    w = np.sqrt(50.0 / 2.0)  # gravity is across the slide: no effect
    np.testing.assert_allclose(res["slider.s"], 0.1 * np.cos(w * res.t), atol=1e-8)


def test_internal_coordinate_couples_to_the_host():
    M, m, k = 3.0, 2.0, 50.0
    res = ac.simulate(OnCart(M), 2.0, n_points=201, rtol=1e-10, atol=1e-12)
    # two-body oscillator: relative coordinate at sqrt(k (M+m)/(M m)); momentum conserved
    w = np.sqrt(k * (M + m) / (M * m))
    np.testing.assert_allclose(res["slider.s"], 0.1 * np.cos(w * res.t), atol=1e-8)
    momentum = M * res["rail.v"] + m * (res["rail.v"] + res["slider.v"])
    np.testing.assert_allclose(momentum, 0.0, atol=1e-9)
