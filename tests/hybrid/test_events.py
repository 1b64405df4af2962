"""Time events: inputs that switch at known instants (steps) restart the integration."""

import casadi as cs
import numpy as np

import acausal as ac
from acausal.events import time_events
from components import multibody as mb
from components import rotational as rot


def test_time_events_found_in_affine_conditions():
    t = cs.SX.sym("t")
    x = cs.SX.sym("x")
    e = (cs.if_else(t > 0.1, 1.0, 0.0) + cs.if_else(2 * (t - 0.5) >= 0, x, 2 * x)
         + cs.if_else(x > t, 1.0, 0.0) + cs.if_else(t / 4 >= 2, 1.0, 0.0))
    # x > t depends on the state: not a time event
    assert time_events(cs.Function("f", [x, t], [e]), 1, 0.0, 10.0) == [0.1, 0.5, 8.0]


class SteppedRotor(ac.Model):
    """A rotor on a revolute joint (no gravity), driven by a torque step at t0."""

    def __init__(self, t0=0.3, tau=2.0, J=0.5):
        super().__init__()
        self.world = mb.World(g=[0, 0, 0])
        self.joint = mb.Revolute(use_axis_flange=True, phi=0.0, w=0.0)
        self.rotor = mb.Body(m=1.0, I_33=J)
        self.torque = rot.Torque(tau=lambda t: cs.if_else(t >= t0, tau, 0.0))
        self.connect(self.world.frame_b, self.joint.frame_a)
        self.connect(self.joint.frame_b, self.rotor.frame_a)
        self.connect(self.torque.flange, self.joint.axis)


def test_step_torque_on_a_joint():
    t0, tau, J = 0.3, 2.0, 0.5
    res = ac.simulate(SteppedRotor(t0, tau, J), 1.0, n_points=11, rtol=1e-10, atol=1e-10)
    assert res.stats.time_events == [t0]
    assert np.any(np.isclose(res.t, t0))  # the event instant is an output point
    ref = 0.5 * tau / J * np.maximum(res.t - t0, 0.0) ** 2
    # the restart after the event is offset by 1e-12 s: error ~ (tau/J) * 1e-12 * t
    np.testing.assert_allclose(res["joint.phi"], ref, atol=1e-9)
    np.testing.assert_allclose(res["joint.a"][res.t > t0 + 1e-9], tau / J, rtol=1e-9)
