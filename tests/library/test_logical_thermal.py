"""Switching blocks (relays, comparisons, a switch, a slew-rate limiter, min/max) and the
thermal elements beyond the conductor (resistor, convection, radiation), each against a
closed form. The on-off controller is checked in a thermostat, examples/thermostat.py
(tests/test_examples.py)."""

from __future__ import annotations

import numpy as np
import pytest

import acausal as ac
from components import blocks as bl
from components import thermal as th

C, TA = 1000.0, 293.15


def _switches(res, component):
    """The instants where a when clause of ``component`` fired after the start."""
    return np.array([e.t for e in res.events if e.t > 0 and any(
        c.startswith("when") and c.endswith(f"[{component}]") for c in e.changes)])


class Relay(ac.Model):
    def __init__(self, u, pre_y_start=0.0, **kwargs):
        super().__init__(**kwargs)
        self.src = u
        self.relay = bl.Hysteresis(uLow=-0.5, uHigh=0.5, pre_y_start=pre_y_start)
        self.connect(self.src.y, self.relay.u)


@pytest.mark.parametrize("pre", [0.0, 1.0])
def test_hysteresis_switches_on_above_uHigh_and_off_below_uLow(pre):
    # u = sin(2 pi t): rises through 0.5 at t = 1/12 (+k), falls through -0.5 at 7/12 (+k)
    res = ac.simulate(Relay(bl.Sine(amplitude=1.0, f=1.0), pre), 2.0, rtol=1e-10,
                      atol=1e-12, n_points=201)
    ref = np.array([1 / 12, 7 / 12, 13 / 12, 19 / 12])
    got = _switches(res, "relay")
    # with pre = 1 the relay is on at the start, so the first rising edge changes nothing
    # but fires all the same (Modelica's when fires on the edge of its condition)
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-9)  # event location at rtol 1e-10
    y = res["relay.y"]
    assert y[0] == pre   # inside the band at the start: pre_y_start
    t = res.t
    inside = (t > 1 / 12 + 1e-6) & (t < 7 / 12 - 1e-6)
    assert np.all(y[inside] == 1.0) and np.all(y[(t > 7 / 12 + 1e-6) & (t < 13 / 12 - 1e-6)]
                                               == 0.0)


def test_hysteresis_outside_its_band_at_the_start_takes_that_side_and_refuses_a_bad_band():
    high = ac.simulate(Relay(bl.Constant(k=2.0)), 0.1)
    low = ac.simulate(Relay(bl.Constant(k=-2.0), pre_y_start=1.0), 0.1)
    assert np.all(high["relay.y"] == 1.0) and np.all(low["relay.y"] == 0.0)
    with pytest.raises(ac.ArgumentError, match=r"relay.*uLow = 1.0 must be below "
                                               r"uHigh = 0.5"):
        ac.simulate(Relay(bl.Constant(k=0.0)), 0.1, params={"relay.uLow": 1.0})


class Routed(ac.Model):
    """A ramp compared with a threshold, which switches between two sines; their min,
    max and quotient."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.ramp = bl.Ramp(height=1.0, duration=1.0)
        self.a = bl.Sine(amplitude=1.0, f=1.0)
        self.b = bl.Sine(amplitude=1.0, f=1.0, phase=np.pi / 2, offset=2.0)
        self.gt = bl.GreaterThreshold(threshold=0.3)
        self.lt = bl.LessThreshold(threshold=0.3)
        self.greater = bl.Greater()
        self.less = bl.Less()
        self.switch = bl.Switch()
        self.lo = bl.Min()
        self.hi = bl.Max()
        self.ratio = bl.Division()
        self.sin, self.cos, self.exp, self.log = bl.Sin(), bl.Cos(), bl.Exp(), bl.Log()
        self.angle = bl.Atan2()
        self.connect(self.a.y, self.sin.u, self.cos.u, self.exp.u, self.angle.u1)
        self.connect(self.b.y, self.log.u, self.angle.u2)
        self.both = bl.And()
        self.either = bl.Or()
        self.neither = bl.Not()
        self.connect(self.ramp.y, self.gt.u, self.lt.u, self.greater.u1, self.less.u1)
        self.connect(self.gt.y, self.both.u1, self.either.u1)
        self.connect(self.greater.y, self.both.u2, self.either.u2)
        self.connect(self.either.y, self.neither.u)
        self.connect(self.a.y, self.greater.u2, self.less.u2, self.switch.u1, self.lo.u1,
                     self.hi.u1, self.ratio.u1)
        self.connect(self.gt.y, self.switch.u2)
        self.connect(self.b.y, self.switch.u3, self.lo.u2, self.hi.u2, self.ratio.u2)


def test_comparisons_switch_min_max_and_division_against_numpy_on_their_inputs():
    res = ac.simulate(Routed(), 1.0, rtol=1e-10, atol=1e-12, n_points=1001)
    t, r, a, b = res.t, res["ramp.y"], res["a.y"], res["b.y"]
    np.testing.assert_allclose(a, np.sin(2 * np.pi * t), atol=1e-12)  # (inputs as written)
    # away from the switching instants (where the result holds both sides), exactly
    away = np.abs(r - 0.3) > 1e-9
    np.testing.assert_array_equal(res["gt.y"][away], (r > 0.3)[away])
    np.testing.assert_array_equal(res["lt.y"][away], (r < 0.3)[away])
    apart = np.abs(r - a) > 1e-9
    np.testing.assert_array_equal(res["greater.y"][apart], (r > a)[apart])
    np.testing.assert_array_equal(res["less.y"][apart], (r < a)[apart])
    np.testing.assert_array_equal(res["switch.y"][away], np.where(r > 0.3, a, b)[away])
    np.testing.assert_array_equal(res["lo.y"], np.minimum(a, b))
    np.testing.assert_array_equal(res["hi.y"], np.maximum(a, b))
    np.testing.assert_allclose(res["ratio.y"], a / b, rtol=1e-15)
    # the math functions of the same sampled signals: CasADi's and numpy's libm (1e-15)
    for name, f in (("sin", np.sin(a)), ("cos", np.cos(a)), ("exp", np.exp(a)),
                    ("log", np.log(b)), ("angle", np.arctan2(a, b))):
        np.testing.assert_allclose(res[name + ".y"], f, rtol=1e-15, atol=1e-15)
    ok = away & apart
    gt, greater = r > 0.3, r > a
    np.testing.assert_array_equal(res["both.y"][ok], (gt & greater)[ok])
    np.testing.assert_array_equal(res["either.y"][ok], (gt | greater)[ok])
    np.testing.assert_array_equal(res["neither.y"][ok], ~(gt | greater)[ok])
    for name in ("both", "either", "neither"):  # (each output is 1 somewhere, 0 elsewhere)
        assert set(np.unique(res[name + ".y"][ok])) == {0.0, 1.0}
    # the threshold's crossing is an event at t = 0.3 (a time event: the ramp is affine)
    crossing = [e.t for e in res.events if any("gt" in c for c in e.changes)]
    assert crossing == [pytest.approx(0.3, abs=1e-12)]


class Slew(ac.Model):
    def __init__(self, height, **kwargs):
        super().__init__(**kwargs)
        self.src = bl.Step(height=height, startTime=0.1)
        self.lim = bl.SlewRateLimiter(Rising=2.0, Td=0.01)
        self.connect(self.src.y, self.lim.u)


@pytest.mark.parametrize("height", [1.0, -1.0])
def test_slew_rate_limiter_ramps_at_its_limit_then_follows_with_Td(height):
    # a step of +-1 at 0.1 s: the rate limit 2 (Falling = -Rising) until y is within
    # 2 Td of the input, at t1 = 0.1 + (1 - 2 Td)/2, then 1 - y = 2 Td exp(-(t - t1)/Td)
    res = ac.simulate(Slew(height), 1.0, rtol=1e-10, atol=1e-12, n_points=1001)
    Td, rate, t = 0.01, 2.0, res.t
    t1 = 0.1 + (1 - rate * Td) / rate
    ref = np.where(t < 0.1, 0.0, np.where(t < t1, rate * (t - 0.1),
                                          1 - rate * Td * np.exp(-(t - t1) / Td)))
    # IDAS at rtol 1e-10 on a unit signal: measured 2.6e-10
    np.testing.assert_allclose(res["lim.y"], height * ref, rtol=0, atol=2e-9)


def test_slew_rate_limiter_refuses_a_falling_limit_that_is_not_negative():
    with pytest.raises(ac.ModelDefinitionError, match=r"Falling = 1.0 must be < 0"):
        bl.SlewRateLimiter(Rising=2.0, Falling=1.0)


class Cooling(ac.Model):
    """A body cooled towards a fixed temperature through one element."""

    def __init__(self, element, T0, T_env, **kwargs):
        super().__init__(**kwargs)
        self.body = th.HeatCapacitor(C=C, T=T0)
        self.link = element
        self.env = th.FixedTemperature(T=T_env)
        self.connect(self.body.port, self.link.port_a)
        self.connect(self.link.port_b, self.env.port)


def test_thermal_resistor_and_convection_give_the_exponential_and_its_time_varying_form():
    res = ac.simulate(Cooling(th.ThermalResistor(R=0.05), 373.15, TA), 300.0, rtol=1e-12,
                      atol=1e-12, n_points=61)
    tau = C * 0.05
    exact = TA + (373.15 - TA) * np.exp(-res.t / tau)
    # the global error of IDAS at rtol 1e-12 on a 373 K state over 300 s: measured
    # 2.4e-9 K here and 5.0e-9 K below (1.1e-7 and 3.1e-7 at rtol 1e-10: it converges)
    np.testing.assert_allclose(res["body.T"], exact, rtol=0, atol=2e-8)
    np.testing.assert_allclose(res["link.Q_flow"], (exact - TA) / 0.05, rtol=0,
                               atol=2e-8 / 0.05)
    # Gc = a + b t: T - Ta = (T0 - Ta) exp(-(a t + b t^2 / 2) / C)
    a, b = 5.0, 0.1
    res = ac.simulate(Cooling(th.Convection(Gc=lambda t: a + b * t), 373.15, TA), 300.0,
                      rtol=1e-12, atol=1e-12, n_points=61)
    exact = TA + (373.15 - TA) * np.exp(-(a * res.t + b * res.t**2 / 2) / C)
    np.testing.assert_allclose(res["body.T"], exact, rtol=0, atol=2e-8)
    # the same conductance from a block (a ramp) into SignalConvection
    model = Cooling(th.SignalConvection(), 373.15, TA)
    model.gc = bl.Ramp(height=b * 300.0, duration=300.0, offset=a)
    model.connect(model.gc.y, model.link.Gc)
    res = ac.simulate(model, 300.0, rtol=1e-12, atol=1e-12, n_points=61)
    np.testing.assert_allclose(res["body.T"], exact, rtol=0, atol=2e-8)


def test_body_radiation_cools_a_body_as_the_closed_form():
    # cooling into an enclosure at 0 K: C T' = -Gr sigma T^4, so
    # T = (T0^-3 + 3 Gr sigma t / C)^(-1/3). The enclosure here is at 1 K: its emission
    # warms the body by at most Gr sigma t / C = 1.1e-7 K in the 1000 s (T falls to 143 K)
    Gr, T0 = 2.0, 1200.0
    res = ac.simulate(Cooling(th.BodyRadiation(Gr=Gr), T0, 1.0), 1000.0, rtol=1e-12,
                      atol=1e-12, n_points=401)
    exact = (T0**-3 + 3 * Gr * th.SIGMA * res.t / C) ** (-1 / 3)
    # the enclosure's 1.1e-7 K and IDAS at rtol 1e-12 (measured 5.2e-8 K in all)
    np.testing.assert_allclose(res["body.T"], exact, rtol=0, atol=2e-7)
    # the heat flow leaving the body is its emission (less the enclosure's, 1e-13 of it)
    np.testing.assert_allclose(res["link.Q_flow"], Gr * th.SIGMA * exact**4, rtol=1e-8)


class OnOff(ac.Model):
    def __init__(self, u, pre_y_start=0.0, **kwargs):
        super().__init__(**kwargs)
        self.src = u
        self.ref = bl.Constant(k=1.0)
        self.ctrl = bl.OnOffController(bandwidth=1.0, pre_y_start=pre_y_start)
        self.connect(self.src.y, self.ctrl.u)
        self.connect(self.ref.y, self.ctrl.reference)


def test_on_off_controller_switches_off_where_u_reaches_the_upper_edge():
    # MSL: y = pre(y) and u < reference + bandwidth/2 or u < reference - bandwidth/2, so
    # an output that is on goes off where u reaches reference + bandwidth/2 = 1.5 (the
    # upper edge belongs to "off"); the lower edge 0.5 itself does not switch it on
    at_edge = ac.simulate(OnOff(bl.Constant(k=1.5), pre_y_start=1.0), 1.0, n_points=11)
    assert np.all(at_edge["ctrl.y"] == 0.0)
    low_edge = ac.simulate(OnOff(bl.Constant(k=0.5)), 1.0, n_points=11)
    assert np.all(low_edge["ctrl.y"] == 0.0)
    # a ramp from 0 that stops on the upper edge at t = 1 s: on from the start (below
    # 0.5), off at t = 1 s exactly (the ramp's end, a time event), off after
    res = ac.simulate(OnOff(bl.Ramp(height=1.5, duration=1.0)), 2.0, n_points=21)
    np.testing.assert_array_equal(res["ctrl.y"], np.where(res.t < 1.0, 1.0, 0.0))
    assert _switches(res, "ctrl") == pytest.approx([1.0], abs=1e-12)


@pytest.mark.parametrize("block", [bl.Hysteresis, bl.OnOffController])
def test_relays_refuse_a_first_output_that_is_neither_false_nor_true(block):
    # pre_y_start is MSL's Boolean: 0.5 would hold a logical output that is neither
    with pytest.raises(ac.ModelDefinitionError, match=r"pre_y_start must be 0 or 1 "
                                                      r"\(false or true\), got 0.5"):
        block(pre_y_start=0.5)
    relay = block(pre_y_start=True)   # (a Python bool is 1)
    assert relay.pre_y_start == 1
    with pytest.raises(ac.ModelDefinitionError, match=r"got 2"):
        relay.pre_y_start = 2


class SpeedRelay(ac.Model):
    """Bang-bang speed control: a relay on the speed error switches a motor's torque
    (Switch between two constants) on an inertia with viscous drag."""

    def __init__(self, **kwargs):
        from components import rotational as rot

        super().__init__(**kwargs)
        self.j = rot.Inertia(J=0.5, phi=0.0, w=0.0)
        self.drag = rot.Damper(d=0.1)
        self.fix = rot.Fixed()
        self.sensor = rot.SignalSpeedSensor()
        self.motor = rot.SignalTorque()
        self.ref = bl.Constant(k=10.0)
        self.err = bl.Feedback()
        self.relay = bl.Hysteresis(uLow=-0.5, uHigh=0.5)
        self.on = bl.Constant(k=2.0)
        self.off = bl.Constant(k=0.0)
        self.switch = bl.Switch()
        self.connect(self.j.flange_b, self.drag.flange_a, self.sensor.flange,
                     self.motor.flange)
        self.connect(self.drag.flange_b, self.fix.flange)
        self.connect(self.ref.y, self.err.u1)
        self.connect(self.sensor.w, self.err.u2)
        self.connect(self.err.y, self.relay.u)
        self.connect(self.relay.y, self.switch.u2)
        self.connect(self.on.y, self.switch.u1)
        self.connect(self.off.y, self.switch.u3)
        self.connect(self.switch.y, self.motor.tau)


def test_relay_in_a_speed_loop_switches_at_the_closed_form_instants():
    # J w' = tau y - d w: exponentials of tau_m = J/d = 5 s towards 20 rad/s (on) and 0
    # (off); on from the start (error 10 > 0.5), off where w reaches 10.5, on at 9.5
    res = ac.simulate(SpeedRelay(), 12.0, rtol=1e-10, atol=1e-10, n_points=121)
    tm, w_on, lo, hi = 5.0, 20.0, 9.5, 10.5
    first = tm * np.log(w_on / (w_on - hi))
    cool, heat = tm * np.log(hi / lo), tm * np.log((w_on - lo) / (w_on - hi))
    ref = np.cumsum([first] + [cool, heat] * 10)
    got = _switches(res, "relay")
    ref = ref[ref < 12.0]
    assert len(got) == len(ref) == 17
    # the event instants carry IDAS's error at rtol 1e-10, which accumulates over the
    # cycles: measured 3e-9 s at the first, 2.9e-8 s at the 17th (over 30 s: 2.1e-7 s
    # at the 53rd, and 2.7e-9 s at rtol 1e-12: it converges)
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-7)
    assert np.all(res["motor.tau"][res.t < first - 1e-6] == 2.0)


def test_the_partial_thermal_element_says_it_is_partial():
    # (the message was "equations() of Element1D failed with NotImplementedError: ")
    with pytest.raises(ac.ModelDefinitionError, match=r"Element1D 'link': .*Element1D is "
                       r"partial \(it has no law relating Q_flow and dT\): use "
                       r"ThermalConductor"):
        ac.simulate(Cooling(th.Element1D(), 300.0, TA), 1.0)
