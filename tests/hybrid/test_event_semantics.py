"""When clauses on time, relations of time that are not affine, and the start mode of
friction, against closed forms (the instants are known exactly: ``t = 0.3``, the roots of
``sin(w t) = c``; the motions are piecewise polynomial).

Tolerances: a time event is exact (the instant is computed, not located), and logged at
the instant itself (the run restarts 1e-12 s later, ``_EVENT_EPS``, relative to
max(1, |t|)); a crossing of a function of time is located to round-off (1e-15 s) and then
handled as a time event; rates that are constant between events are integrated exactly by
IDAS, so what is left is the round-off of the sums (1e-12) and the restart offsets of the
time events (1e-12 s either side, crossed by Euler steps with the rates of each side:
exact for constant rates).
"""

from __future__ import annotations

import casadi as cs
import numpy as np
import pytest

import acausal as ac
from components import rotational as rot
from components import translational as tr


def fired(res, text=""):
    """The instants where a when clause (whose text contains ``text``) fired."""
    return [ev.t for ev in res.events
            if any(c.startswith("when") and text in c for c in ev.changes)]


# ----- 1. a when on time fires at the instant its condition becomes true -----------------

class TimedReinit(ac.Model):
    """x' = 1 from 0; at t = 0.3 (a condition of time only) x jumps to 10 and n counts."""

    x = ac.Variable(start=0.0, fixed=True, unit="m")
    n = ac.Variable(start=0.0, unit="1", discrete=True)

    def equations(self):
        return [ac.der(self.x) == 1.0,
                ac.when(self.time > 0.3, ac.reinit(self.x, 10.0),
                        ac.assign(self.n, ac.pre(self.n) + 1))]


def test_a_when_on_time_fires_at_its_instant():
    res = ac.simulate(TimedReinit(), 1.0, n_points=11)
    assert res.status == "ok"
    # a time event: logged at the instant itself (it was at the restart, 0.3 + 1e-12)
    assert fired(res) == [0.3] == res.stats.time_events
    assert [ev.kind for ev in res.events] == ["time"]
    assert res.final("x") == pytest.approx(10.7, abs=1e-12)  # 10 + (1 - 0.3)
    assert res.final("n") == 1.0
    # the instant twice, 1e-12 s either side: x = 0.3 before, 10 after
    at = np.flatnonzero(np.abs(res.t - 0.3) < 1e-11)
    assert len(at) == 2
    np.testing.assert_allclose(res["x"][at], [0.3, 10.0], rtol=0, atol=1e-11)


class Mixed(ac.Model):
    """x' = 1; n counts when x > 0.5 and t > t_on hold together."""

    x = ac.Variable(start=0.0, fixed=True, unit="m")
    n = ac.Variable(start=0.0, unit="1", discrete=True)

    def __init__(self, t_on):
        super().__init__()
        self.t_on = t_on

    def equations(self):
        return [ac.der(self.x) == 1.0,
                ac.when(cs.logic_and(self.x > 0.5, self.time > self.t_on),
                        ac.assign(self.n, ac.pre(self.n) + 1))]


@pytest.mark.parametrize("t_on, t_fire", [(0.7, 0.7), (0.3, 0.5)])
def test_a_when_on_a_state_and_time_fires_when_the_later_one_becomes_true(t_on, t_fire):
    """The time part becomes true last (a time event at 0.7) or first (then the state
    event x = 0.5 makes the whole condition true)."""
    res = ac.simulate(Mixed(t_on), 1.0, n_points=11)
    assert fired(res) == pytest.approx([t_fire], abs=1e-12)  # (state event: located)
    assert res.final("n") == 1.0


class SineClock(ac.Model):
    """n counts the upward crossings of sin(2 pi t) through 0.5: at 1/12 + k."""

    n = ac.Variable(start=0.0, unit="1", discrete=True)
    x = ac.Variable(start=0.0, fixed=True)

    def equations(self):
        return [ac.der(self.x) == 1.0,
                ac.when(cs.sin(2 * np.pi * self.time) > 0.5,
                        ac.assign(self.n, ac.pre(self.n) + 1))]


def test_a_when_on_a_non_affine_function_of_time_fires_at_each_crossing():
    res = ac.simulate(SineClock(), 3.0, n_points=4)  # output points 1 s apart: no matter
    # located in advance (to round-off), then time events logged at their instants
    assert fired(res) == res.stats.time_events[::2]  # (the crossings down between)
    # (the root of sin(2 pi t) = 0.5 found to 1.4e-15 s, measured: 1e-14 bounds it)
    np.testing.assert_allclose(fired(res), 1 / 12 + np.arange(3), rtol=0, atol=1e-14)
    assert res.final("n") == 3.0


def test_a_when_on_time_that_holds_at_the_start_does_not_fire():
    """Modelica: a condition true at initialisation did not become true."""

    class Late(TimedReinit):
        pass

    res = ac.simulate(Late(), 1.0, t_start=0.5, n_points=6)
    assert fired(res) == [] and res.final("n") == 0.0
    assert res.final("x") == pytest.approx(0.5, abs=1e-12)


# ----- 2. a relation of a function of time that is not affine ------------------------------

class Gate(ac.Model):
    """x' = 1 while sin(2 pi 100 t) > 0.99: on during a 4.5 % window of each 10 ms period."""

    x = ac.Variable(start=0.0, fixed=True)

    def equations(self):
        return [ac.der(self.x) == cs.if_else(cs.sin(2 * np.pi * 100 * self.time) > 0.99,
                                             1.0, 0.0)]


GATE_FRACTION = (np.pi - 2 * np.arcsin(0.99)) / (2 * np.pi)


@pytest.mark.parametrize("n_points", [3, 1001])
def test_a_switch_on_a_sine_of_time_is_located_however_coarse_the_grid(n_points):
    res = ac.simulate(Gate(), 1.0, n_points=n_points)
    # 100 windows of width GATE_FRACTION / 100 s each; the edges located to 1e-15 s
    assert res.final("x") == pytest.approx(GATE_FRACTION, abs=1e-11)
    assert len(res.events) == 200 and len(res.stats.time_events) == 200
    assert res.events[0].components == ["Gate"]
    on = np.arcsin(0.99) / (2 * np.pi * 100)
    assert [ev.t for ev in res.events] == res.stats.time_events  # logged at the instants
    assert res.events[0].t == pytest.approx(on, abs=1e-14)  # (a root located to round-off)
    assert "sin(" in res.events[0].changes[0]


def test_a_switch_on_a_sine_through_a_source_component():
    class Push(ac.Model):
        def __init__(self):
            super().__init__()
            self.force = tr.Force(f=lambda t: cs.if_else(
                cs.sin(2 * np.pi * 100 * t) > 0.99, 1.0, 0.0))
            self.mass = tr.Mass(m=1.0, s=0.0, v=0.0)
            self.connect(self.force.flange, self.mass.flange_a)

    res = ac.simulate(Push(), 1.0, n_points=3)
    assert res.final("mass.v") == pytest.approx(GATE_FRACTION, abs=1e-11)


def test_affine_relations_of_time_stay_time_events():
    """A step stays a relation of time (no frozen relation): its instant is computed."""

    class Step(ac.Model):
        x = ac.Variable(start=0.0, fixed=True)

        def equations(self):
            return [ac.der(self.x) == cs.if_else(2 * (self.time - 0.25) > 0, 1.0, 0.0)]

    cm = ac.build(Step())
    assert cm.dae.relations == []
    res = ac.simulate(cm, 1.0, n_points=3)
    assert res.stats.time_events == [0.25]
    # (a model without relations restarts 1e-12 s after the step with the states as they
    # were at the instant: x lags by 1e-12 s times its rate)
    assert res.final("x") == pytest.approx(0.75, abs=2e-12)


# ----- 3. friction whose start force exceeds the breakaway force ---------------------------

class PushedBlock(ac.Model):
    """A 1 kg block on tr.Friction (kinetic 1 N, breakaway 2 N) pushed by F from t = 0."""

    def __init__(self, F):
        super().__init__()
        self.fixed = tr.Fixed()
        self.fr = tr.Friction(f_coulomb=1.0, peak=2.0)
        self.mass = tr.Mass(m=1.0, s=0.0, v=0.0)
        self.push = tr.Force(f=F)
        self.connect(self.fixed.flange, self.fr.flange_a)
        self.connect(self.fr.flange_b, self.mass.flange_a)
        self.connect(self.push.flange, self.mass.flange_b)


@pytest.mark.parametrize("F", [2.5, -2.5])
def test_friction_breaks_away_at_the_start_when_the_push_exceeds_the_breakaway_force(F):
    res = ac.simulate(PushedBlock(F), 1.0, n_points=11, rtol=1e-10, atol=1e-12)
    a = F - np.sign(F) * 1.0  # the kinetic force opposes the slip from the start
    # constant acceleration from t = 0 (the start slip within v_small = 1e-9 m/s aside)
    assert res.final("mass.v") == pytest.approx(a, abs=1e-9)
    assert res.final("mass.s") == pytest.approx(a / 2, abs=1e-9)
    assert res.events[0].kind == "initial" and res.events[0].t == 0.0
    assert res["fr.mode"][0] == np.sign(F) * 3  # starting to slip, from the start
    assert res.final("fr.mode") == np.sign(F)  # sliding


def test_friction_below_the_breakaway_force_sticks_from_the_start():
    res = ac.simulate(PushedBlock(1.5), 1.0, n_points=11, rtol=1e-10, atol=1e-12)
    assert res.events == []
    assert abs(res.final("mass.v")) < 1e-12
    assert res.final("fr.f") == pytest.approx(1.5, abs=1e-12)  # holds the push


def test_a_brake_pressed_from_the_start_slips_under_a_larger_torque():
    class Wheel(ac.Model):
        def __init__(self):
            super().__init__()
            from components import blocks as bl

            self.wheel = rot.Inertia(J=1.0, phi=0.0, w=0.0)
            self.brake = rot.Brake(mu=0.4, cgeo=0.5, fn_max=10.0, peak=1.0)  # 2 N.m
            self.press = bl.Constant(k=1.0)
            self.drive = rot.Torque(tau=3.0)
            self.connect(self.wheel.flange_b, self.brake.flange_a)
            self.connect(self.press.y, self.brake.f_normalized)
            self.connect(self.drive.flange, self.wheel.flange_a)

    res = ac.simulate(Wheel(), 1.0, n_points=11, rtol=1e-10, atol=1e-12)
    assert res.final("wheel.w") == pytest.approx(1.0, abs=1e-9)  # (3 - 2) N.m / 1 kg.m2


def test_event_texts_read_as_written():
    """A gated condition reads as its author wrote it, not as a CasADi dump."""
    res = ac.simulate(PushedBlock(2.5), 1.0, n_points=11)
    texts = [c for ev in res.events for c in ev.changes]
    assert texts and not any("@" in c for c in texts)
    assert "when cs.if_else(stuck_fwd, sa - f_max, -1.0) > 0 [fr]" in texts
