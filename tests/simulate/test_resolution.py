"""A result whose output points do not resolve the motion warns, naming the component
(acausal.resolution); a resolved one does not."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import acausal as ac
from acausal.resolution import DEFECT
from components import translational as tr

F_HZ = 10.0  # the oscillator's frequency


class Oscillator(ac.Model):
    """An undamped mass on a spring, released from 1 m: x = cos(2 pi f t)."""

    def __init__(self):
        super().__init__()
        self.fixed = tr.Fixed()
        self.spring = tr.Spring(c=(2 * np.pi * F_HZ) ** 2)
        self.mass = tr.Mass(m=1.0, s=1.0, v=0.0)
        self.connect(self.fixed.flange, self.spring.flange_a)
        self.connect(self.spring.flange_b, self.mass.flange_a)


@pytest.fixture(scope="module")
def cm():
    return ac.build(Oscillator())


def _run(cm, n_points):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = ac.simulate(cm, 1.0, n_points=n_points, rtol=1e-9, atol=1e-10)
    return res, [w for w in caught if issubclass(w.category, ac.UnresolvedWarning)]


def test_trapezoid_defect_of_a_sampled_sine_matches_the_threshold_reasoning():
    # the figures the threshold is chosen from (docstring of acausal.resolution): the
    # largest defect of the trapezoidal rule over the phases, for n points per period
    phase = np.linspace(0.0, 2 * np.pi, 20001)
    worst = {}
    for n in (4, 5, 6, 10, 20):
        h = 2 * np.pi / n
        d = np.sin(phase + h) - np.sin(phase) - h / 2 * (np.cos(phase) + np.cos(phase + h))
        worst[n] = np.abs(d).max() / 2.0  # range of a unit sine is 2
    assert worst[4] > DEFECT > worst[5]
    assert worst[10] == pytest.approx((2 * np.pi / 10) ** 3 / 24, rel=0.02)  # h^3 x''' / 12


@pytest.mark.parametrize("per_period", [5, 10, 100])
def test_resolved_oscillation_gives_no_warning(cm, per_period):
    res, caught = _run(cm, int(per_period * F_HZ) + 1)
    assert not caught and res.stats.unresolved == []
    # and the points are the closed form (the check does not touch the numbers)
    np.testing.assert_allclose(res["mass.s"], np.cos(2 * np.pi * F_HZ * res.t), atol=1e-6)


@pytest.mark.parametrize("per_period", [1, 2, 4])
def test_aliased_oscillation_warns_with_the_component(cm, per_period):
    res, caught = _run(cm, int(per_period * F_HZ) + 1)
    assert len(caught) == 1
    text = str(caught[0].message)
    assert "the output points do not resolve the motion of mass" in text
    assert "n_points=" in text  # what to do
    assert {u.state for u in res.stats.unresolved} <= {"mass.s", "mass.v"}
    assert res.stats.unresolved and res.status == "ok"
    # one point per period: every point shows x = 1, the rates say otherwise
    if per_period == 1:
        np.testing.assert_allclose(res["mass.s"], 1.0, atol=1e-6)


def test_a_time_event_inside_the_grid_is_not_taken_for_an_unresolved_curve():
    from components import electrical as el

    class StepRC(ac.Model):
        def __init__(self):
            super().__init__()
            self.src = el.StepVoltage(V=1.0, startTime=0.5)
            self.r = el.Resistor(R=1.0)
            self.c = el.Capacitor(C=0.05, v=0.0)  # tau = 0.05 s, 4 points per tau
            self.g = el.Ground()
            self.connect(self.src.p, self.r.p)
            self.connect(self.r.n, self.c.p)
            self.connect(self.c.n, self.g.p)
            self.connect(self.src.n, self.g.p)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = ac.simulate(StepRC(), 1.0, n_points=81)
    assert not [w for w in caught if issubclass(w.category, ac.UnresolvedWarning)]
    # the rate jumps at t = 0.5 from 0 to 20 V/s: without the break the interval before
    # it would show a defect of h/2 * 20 V/s = 0.125 of the 1 V range
    assert 0.5 in res.stats.time_events


def test_hybrid_run_counts_the_integrator_work_per_stretch_between_events():
    from models import BouncingBall, impacts

    res = ac.simulate(BouncingBall(), 2.0, rtol=1e-9)
    bounces = impacts(res)
    assert len(bounces) >= 3
    # one stretch before each event (an impact is two: h < 0 becomes true, and false
    # again after the reinit) and one after the last; location is counted in its stretch
    assert len(res.events) == 2 * len(bounces)
    assert len(res.stats.segments) == len(res.events) + 1
    assert all(s.steps > 0 for s in res.stats.segments[::2])
    assert res.stats.steps == sum(s.steps for s in res.stats.segments)
