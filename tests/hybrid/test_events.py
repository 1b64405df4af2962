"""Time events: inputs that switch at known instants (steps) restart the integration."""

import casadi as cs
import numpy as np
import pytest

import acausal as ac
from acausal.events import time_events
from components import blocks as bl
from components import electrical as el
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


# ----------------------------------------------------------------------------------------
# a function of time reaching a frozen relation through signal ports
class PulsedRC(ac.Model):
    """A capacitor charged through a switch closed by one pulse of 1 ms at 0.2 s, which
    reaches the switch's control through a gain (signal ports)."""

    def __init__(self, R=1.0, C=1e-3, Ron=1e-9, Goff=1e-9):
        super().__init__()
        self.src = el.ConstantVoltage(V=1.0)
        self.pulse = bl.Pulse(amplitude=1.0, width=1.0, period=0.1, nperiod=1, startTime=0.2)
        self.gain = bl.Gain(k=2.0)
        self.switch = el.ControlledIdealSwitch(Ron=Ron, Goff=Goff)
        self.r = el.Resistor(R=R)
        self.c = el.Capacitor(C=C, v=0.0)
        self.gnd = el.Ground()
        self.connect(self.src.p, self.switch.p)
        self.connect(self.switch.n, self.r.p)
        self.connect(self.r.n, self.c.p)
        self.connect(self.src.n, self.c.n, self.gnd.p)
        self.connect(self.pulse.y, self.gain.u)
        self.connect(self.gain.y, self.switch.control)


def test_a_pulse_through_signal_ports_is_a_time_event_however_coarse_the_output():
    R, C, Ron, Goff = 1.0, 1e-3, 1e-9, 1e-9
    # 3 output points 0.5 s apart for a 1 ms pulse: only time events can see it
    res = ac.simulate(PulsedRC(R, C, Ron, Goff), 1.0, n_points=3, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(res.stats.time_events, [0.2, 0.201], rtol=0, atol=1e-15)
    # piecewise RC charging towards 1 V: open (series 1/Goff), closed (series Ron)
    v = 0.0
    for dt, r_series in ((0.2, 1 / Goff), (1e-3, Ron), (0.799, 1 / Goff)):
        v = 1.0 + (v - 1.0) * np.exp(-dt / ((R + r_series) * C))
    # IDAS at rtol 1e-10 over three exponential pieces (and 2e-12 s restart offsets at the
    # edges, 2e-9 of the charge)
    assert res["c.v"][-1] == pytest.approx(v, rel=1e-8)
    assert v > 0.6  # (the pulse charges it: 1 - exp(-1))
