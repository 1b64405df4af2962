"""The planetary gear and the relative sensors of the 1D mechanics, against closed forms:
the planetary's reflected inertia and Willis's equation, and the relative motion of two
bodies on a spring (an oscillator of the reduced inertia)."""

from __future__ import annotations

import numpy as np
import pytest

import acausal as ac
from components import rotational as rot
from components import translational as tr

TAU, JS, JC, JR, RATIO = 2.0, 0.01, 0.5, 0.2, 3.0


class Planetary(ac.Model):
    """A torque on the sun; the carrier's inertia as the load; the ring fixed or free."""

    def __init__(self, ring_fixed=True, **kwargs):
        super().__init__(**kwargs)
        self.drive = rot.Torque(tau=TAU)
        self.sun = rot.Inertia(J=JS, phi=0.0, w=0.0)
        self.gear = rot.IdealPlanetary(ratio=RATIO)
        self.carrier = rot.Inertia(J=JC)
        self.connect(self.drive.flange, self.sun.flange_a)
        self.connect(self.sun.flange_b, self.gear.sun)
        self.connect(self.gear.carrier, self.carrier.flange_a)
        if ring_fixed:
            self.housing = rot.Fixed()
            self.connect(self.gear.ring, self.housing.flange)
        else:
            self.ring = rot.Inertia(J=JR, phi=0.0, w=0.0)
            self.connect(self.gear.ring, self.ring.flange_a)


def test_planetary_with_its_ring_held_reduces_by_one_plus_ratio():
    res = ac.simulate(Planetary(), 1.0, rtol=1e-10, atol=1e-12, n_points=11)
    # w_sun = (1 + r) w_carrier; power balance: tau w_s = d/dt (Js w_s^2 + Jc w_c^2) / 2
    n = 1 + RATIO
    a_c = n * TAU / (JC + n**2 * JS)
    # constant accelerations: IDAS integrates them to rounding
    np.testing.assert_allclose(res["carrier.w"], a_c * res.t, rtol=0, atol=1e-10)
    np.testing.assert_allclose(res["sun.w"], n * a_c * res.t, rtol=0, atol=1e-10)
    # the ring holds r times the sun's torque: the sun wheel passes tau - Js a_s
    sun_tau = TAU - JS * n * a_c
    np.testing.assert_allclose(res["gear.ring.tau"], RATIO * sun_tau, rtol=1e-10)


def test_planetary_with_its_ring_free_keeps_willis_and_the_torque_ratios():
    res = ac.simulate(Planetary(ring_fixed=False), 1.0, rtol=1e-10, atol=1e-12, n_points=11)
    ws, wc, wr = res["sun.w"], res["carrier.w"], res["ring.w"]
    np.testing.assert_allclose((1 + RATIO) * wc, ws + RATIO * wr, rtol=0, atol=1e-10)
    # ring and carrier are driven by the torques r tau_s and (1 + r) tau_s (signs as
    # MSL's: both flanges' cut torques oppose the sun's), with the sun's
    # tau_s = tau - Js a_s; the accelerations are constant, so at t = 1 the speeds are them
    ts = res["gear.sun.tau"]
    np.testing.assert_allclose(res["gear.ring.tau"], RATIO * ts, rtol=1e-12)
    np.testing.assert_allclose(res["gear.carrier.tau"], -(1 + RATIO) * ts, rtol=1e-12)
    # the three accelerations solve Js a_s = tau - tau_s, JR a_r = -r tau_s,
    # JC a_c = (1 + r) tau_s and Willis: four linear equations
    A = np.array([[JS, 0, 0, 1], [0, JR, 0, RATIO], [0, 0, JC, -(1 + RATIO)],
                  [1, RATIO, -(1 + RATIO), 0]])
    a_s, a_r, a_c, tau_s = np.linalg.solve(A, [TAU, 0, 0, 0])
    assert ws[-1] == pytest.approx(a_s, abs=1e-9)
    assert wr[-1] == pytest.approx(a_r, abs=1e-9)
    assert wc[-1] == pytest.approx(a_c, abs=1e-9)
    assert ts[-1] == pytest.approx(tau_s, rel=1e-9)


def test_planetary_refuses_a_ratio_that_is_not_positive():
    with pytest.raises(ac.ModelDefinitionError, match=r"ratio.*must be > 0"):
        rot.IdealPlanetary(ratio=-1.0)


class TwoInertias(ac.Model):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.a = rot.Inertia(J=1.0, phi=0.0, w=0.0)
        self.b = rot.Inertia(J=3.0, phi=0.1, w=0.0)
        self.spring = rot.Spring(c=75.0)
        self.angle = rot.RelativeAngleSensor()
        self.speed = rot.RelativeSpeedSensor()
        self.connect(self.a.flange_b, self.spring.flange_a, self.angle.flange_a,
                     self.speed.flange_a)
        self.connect(self.b.flange_a, self.spring.flange_b, self.angle.flange_b,
                     self.speed.flange_b)


class TwoMasses(ac.Model):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.a = tr.Mass(m=1.0, s=0.0, v=0.0)
        self.b = tr.Mass(m=3.0, s=0.1, v=0.0)
        self.spring = tr.Spring(c=75.0)
        self.position = tr.RelativePositionSensor()
        self.speed = tr.RelativeSpeedSensor()
        self.connect(self.a.flange_b, self.spring.flange_a, self.position.flange_a,
                     self.speed.flange_a)
        self.connect(self.b.flange_a, self.spring.flange_b, self.position.flange_b,
                     self.speed.flange_b)


@pytest.mark.parametrize("model, rel, rate", [(TwoInertias, "angle.phi_rel", "speed.w_rel"),
                                              (TwoMasses, "position.s_rel", "speed.v_rel")])
def test_relative_sensors_see_the_oscillation_of_the_reduced_inertia(model, rel, rate):
    # x = b - a from 0.1 at rest: x'' = -c (1/Ja + 1/Jb) x, w^2 = 75 (1 + 1/3) = 100
    res = ac.simulate(model(), 1.0, rtol=1e-10, atol=1e-12, n_points=101)
    w = 10.0
    # IDAS at rtol 1e-10 over 1.6 periods of an amplitude of 0.1: 1e-9
    np.testing.assert_allclose(res[rel], 0.1 * np.cos(w * res.t), rtol=0, atol=1e-9)
    np.testing.assert_allclose(res[rate], -0.1 * w * np.sin(w * res.t), rtol=0, atol=1e-8)
