"""When clauses: the actions at an event (reinit onto a threshold, conflicting actions,
values that are not finite or not scalars, pre of a parameter), clocks with parameters
and at the end time, and what a wrong when() says.

The motions are piecewise linear or free fall, so the references are closed forms; the
tolerances are those of located events (Illinois' method to 1e-13 s) and of IDAS at the
tolerances given (rtol 1e-10 for free fall: 1e-9 on the impact speed).
"""

from __future__ import annotations

import warnings

import casadi as cs
import numpy as np
import pytest
from models import StopBall

import acausal as ac
from components import translational as tr

G = 9.81
T1 = np.sqrt(2.0 / G)  # impact of a ball dropped from 1 m


class Fall(ac.Model):
    """A ball dropped from 1 m; ``actions(self)`` gives the impact's when clauses."""

    h = ac.Variable(start=1.0, fixed=True, unit="m")
    v = ac.Variable(start=0.0, fixed=True, unit="m/s")
    n = ac.Variable(start=0.0, unit="1", discrete=True)
    e = ac.Parameter(0.8, unit="1")

    def actions(self):
        return [ac.when(self.h < 0, ac.reinit(self.v, -self.e * ac.pre(self.v)))]

    def equations(self):
        return [ac.der(self.h) == self.v, ac.der(self.v) == -G, *self.actions()]


def ball(actions):
    return type("Ball", (Fall,), {"actions": actions})()


# ----- 5. reinit exactly onto the threshold of the clause's own condition ----------------

class Drain(ac.Model):
    """x' = -1 from 1; when x < 0, x is set back to ``to``."""

    x = ac.Variable(start=1.0, fixed=True)
    n = ac.Variable(start=0.0, unit="1", discrete=True)

    def __init__(self, to):
        super().__init__()
        self.to = to

    def equations(self):
        return [ac.der(self.x) == -1.0,
                ac.when(self.x < 0, ac.reinit(self.x, self.to),
                        ac.assign(self.n, ac.pre(self.n) + 1))]


def test_reinit_onto_the_threshold_stops_the_run_and_says_why():
    """x set to exactly 0 at x < 0: the condition becomes true again at once, without end
    (the run went on with x drifting to -1, status ok)."""
    with pytest.warns(ac.SolverWarning, match=r"(?s)when x < 0 \[Drain\].*exactly onto the "
                                              r"threshold"):
        res = ac.simulate(Drain(0.0), 2.0, n_points=5)
    assert res.status == "stopped" and "threshold" in res.message
    assert res.t[-1] == pytest.approx(1.0, abs=1e-9)  # x reaches 0 at t = 1
    assert res["x"].min() > -1e-9  # never drifted below


def test_reinit_clear_of_the_threshold_repeats_regularly():
    res = ac.simulate(Drain(0.25), 1.9, n_points=5)
    assert res.status == "ok"
    assert res.final("n") == 4.0  # at 1, 1.25, 1.5, 1.75


# ----- 7, 11, 12, 17, 20: actions and conditions that cannot be run -----------------------

@pytest.mark.parametrize("value, said", [
    (np.array([3.0, 7.0]), r"Ball: when\(self\.h < 0\): reinit\(v, \.\.\.\): the value has "
                           r"2 elements"),
    ("x", r"reinit\(v, \.\.\.\): the value is 'x' \(str\)"),
    (None, r"reinit\(v, \.\.\.\): the value is None"),
])
def test_a_reinit_value_that_is_not_one_number_is_refused(value, said):
    def actions(self):
        return [ac.when(self.h < 0, ac.reinit(self.v, value))]

    with pytest.raises(ac.ModelDefinitionError, match=said) as info:
        ac.build(ball(actions))
    assert "Possible prototypes" not in str(info.value)


def test_a_one_element_array_is_a_number():
    def actions(self):
        return [ac.when(self.h < 0, ac.reinit(self.v, np.array([3.0])))]

    res = ac.simulate(ball(actions), 0.6, n_points=7, rtol=1e-10, atol=1e-12)
    at = np.flatnonzero(np.abs(res.t - T1) < 1e-9)
    assert res["v"][at[-1]] == pytest.approx(3.0, abs=1e-12)


def test_pre_of_a_parameter_is_the_parameter():
    def actions(self):
        return [ac.when(self.h < 0, ac.reinit(self.v, -ac.pre(self.e) * ac.pre(self.v)))]

    res = ac.simulate(ball(actions), 0.6, n_points=7, rtol=1e-10, atol=1e-12)
    at = np.flatnonzero(np.abs(res.t - T1) < 1e-9)
    assert res["v"][at[-1]] == pytest.approx(0.8 * G * T1, rel=1e-9)  # IDAS at rtol 1e-10


def test_a_reinit_to_nan_fails_naming_the_when_and_the_variable():
    def actions(self):
        return [ac.when(self.h < 0, ac.reinit(self.v, self.e * np.nan))]

    with pytest.raises(ac.SimulationError) as info:
        ac.simulate(ball(actions), 1.0, n_points=11)
    msg = str(info.value)
    assert "reinit(v, ...) of when h < 0 [Ball]" in msg and "nan" in msg
    assert "far out of scale" not in msg
    # the partial result goes up to the impact (its left limit), located to 1e-13 s
    assert info.value.partial.t[-1] == pytest.approx(T1, abs=1e-9)
    assert info.value.t_fail == pytest.approx(T1, abs=1e-9)


def test_two_whens_setting_one_variable_differently_at_one_instant_is_an_error():
    def actions(self):
        return [ac.when(self.h < 0, ac.assign(self.n, 1.0)),
                ac.when(self.h < 0, ac.assign(self.n, 2.0))]

    with pytest.raises(ac.SimulationError, match=r"both fire and set n, to 1 and 2"):
        ac.simulate(ball(actions), 1.0, n_points=11)


def test_two_whens_setting_one_variable_alike_are_fine():
    def actions(self):
        return [ac.when(self.h < 0, ac.assign(self.n, ac.pre(self.n) + 1)),
                ac.when(self.h < 0, ac.assign(self.n, ac.pre(self.n) + 1),
                        ac.reinit(self.v, -ac.pre(self.v)))]

    res = ac.simulate(ball(actions), 0.6, n_points=7)
    assert res.final("n") == 1.0


class TimeAndState(ac.Model):
    """x = r (1 - t) reaches r (0.5 - o) at t = 0.5 + o, the instant of the time condition
    when o is within the gap the run steps across there (1e-12 s either side): one clause
    of each kind at the same instant. (At r = 1e3 and o = 5e-13, x is 5e-10 off its
    threshold at the instant, beyond the iteration's band of 1e-10.)"""

    x = ac.Variable(start=1.0, fixed=True)
    n = ac.Variable(start=0.0, discrete=True)
    m = ac.Variable(start=0.0, discrete=True)
    second = ac.Parameter(2.0)
    r = ac.Parameter(1.0)
    o = ac.Parameter(0.0)

    def equations(self):
        return [ac.der(self.x) == -self.r,
                ac.when(self.x < self.r * (0.5 - self.o), ac.assign(self.n, 1.0),
                        ac.assign(self.m, ac.pre(self.m) + 1)),
                ac.when(self.time > 0.5, ac.assign(self.n, self.second),
                        ac.assign(self.m, ac.pre(self.m) + 1))]


SAME_INSTANT = pytest.mark.parametrize("r, o", [(1.0, 0.0), (1e3, 5e-13)])


def _time_and_state(r, o, **params):
    m = TimeAndState()
    m.x.start = r
    return ac.simulate(m, 1.0, n_points=11, params={"r": r, "o": o, **params})


@SAME_INSTANT
def test_a_time_and_a_state_when_setting_one_variable_differently_at_one_instant(r, o):
    """docs/hybrid.md: two clauses that fire at the same instant and set a variable to
    different values stop the run naming both. A time and a state condition at t = 0.5
    ran as two events 1e-12 s apart, and the later one won (n = 1)."""
    with pytest.raises(ac.SimulationError, match=r"at t = 0\.5 s, when .* and when .* both "
                                                 r"fire and set n, to (1 and 2|2 and 1)"
                       ) as info:
        _time_and_state(r, o)
    msg = str(info.value)
    assert "when x < (r*(0.5-o)) [TimeAndState]" in msg
    assert "when (0.5<time) [TimeAndState]" in msg
    assert info.value.t_fail == pytest.approx(0.5, abs=1e-12)


@SAME_INSTANT
def test_a_time_and_a_state_when_at_one_instant_are_one_event(r, o):
    """Set alike, they run as one synchronous event: m counts each clause once (both read
    pre(m) = 0), and the result has the instant twice, not four times."""
    res = _time_and_state(r, o, second=1.0)
    assert res.final("n") == 1.0 and res.final("m") == 1.0
    at = [e for e in res.events if abs(e.t - 0.5) < 1e-9]
    assert len(at) == 1 and at[0].t == 0.5
    assert any("x < (r*(0.5-o))" in c for c in at[0].changes)
    assert any("time" in c for c in at[0].changes)
    assert np.count_nonzero(np.abs(res.t - 0.5) < 1e-9) == 2


def test_a_state_event_beyond_the_gap_of_a_time_event_is_an_event_of_its_own():
    """2e-12 s after the time event (twice its gap): two events, the time event first."""
    res = _time_and_state(1.0, 2e-12)
    assert res.final("n") == 1.0 and res.final("m") == 2.0
    at = [e.t for e in res.events if abs(e.t - 0.5) < 1e-9]
    assert len(at) == 2 and at[0] == 0.5 and at[1] == pytest.approx(0.5 + 2e-12, abs=2e-13)


def test_one_when_setting_a_variable_twice_is_refused_at_build():
    def actions(self):
        return [ac.when(self.h < 0, ac.reinit(self.v, 1.0), ac.reinit(self.v, 2.0))]

    with pytest.raises(ac.ModelDefinitionError, match=r"sets v twice"):
        ac.build(ball(actions))


@pytest.mark.parametrize("condition, said", [
    (lambda s: 1.0, r"the condition is a constant, which never becomes true"),
    (lambda s: s.e > 0.5, r"the condition is a function of parameters only"),
    (lambda s: [s.h < 0, s.v < -5], r"is a list of 2; when\(\) takes one condition"),
    (lambda s: "h < 0", r"the condition is 'h < 0' \(str\)"),
    (lambda s: True, r"the Python bool True"),
])
def test_a_when_condition_that_cannot_become_true_is_refused(condition, said):
    def actions(self):
        return [ac.when(condition(self), ac.reinit(self.v, 0.0))]

    with pytest.raises(ac.ModelDefinitionError, match=said) as info:
        ac.build(ball(actions))
    assert str(info.value).startswith("Ball")  # names the component
    assert "Possible prototypes" not in str(info.value)


def test_a_when_in_initial_equations_is_refused_clearly():
    class B(Fall):
        h = ac.Variable(start=1.0, unit="m")

        def initial_equations(self):
            return [ac.when(self.h < 0, ac.reinit(self.v, 0.0))]

    with pytest.raises(ac.ModelDefinitionError, match=r"a when\(\) clause in "
                                                      r"initial_equations\(\)") as info:
        ac.build(B())
    assert "Possible prototypes" not in str(info.value)


# ----- 6, 13: clocks at the end time and with parameters -----------------------------------

class Clocked(ac.Model):
    """x' = 1 and a counter; ``clause(self)`` gives its when clause."""

    x = ac.Variable(start=0.0, fixed=True)
    n = ac.Variable(start=0.0, unit="1", discrete=True)
    T0 = ac.Parameter(0.0, unit="s")
    Ts = ac.Parameter(0.25, unit="s")

    def clause(self):
        return ac.when(ac.sample(self.T0, self.Ts), ac.assign(self.n, ac.pre(self.n) + 1))

    def equations(self):
        return [ac.der(self.x) == 1.0, self.clause()]


class Counter(Clocked):
    pass


def test_a_clock_ticks_at_the_end_time():
    """sample(0, 0.25) on [0, 1]: ticks at 0, 0.25, 0.5, 0.75 and 1 (Modelica runs the
    event at the stop time); the result ends with the values after the last tick."""

    class Fixed(Clocked):
        def clause(self):
            return ac.when(ac.sample(0.0, 0.25), ac.assign(self.n, ac.pre(self.n) + 1))

    res = ac.simulate(Fixed(), 1.0, n_points=5)
    assert res.final("n") == 5.0
    assert res.t[-1] == 1.0 and res["n"][-2] == 4.0  # the left limit, 1e-12 s before
    assert res.stats.time_events[-1] == 1.0


@pytest.mark.parametrize("params, count", [(None, 5), ({"T0": 0.1}, 4),
                                           ({"Ts": 0.1}, 11), ({"T0": 0.5, "Ts": 0.5}, 2)])
def test_a_clock_of_parameters_takes_the_values_of_the_run(params, count):
    """Ticks at T0 + k Ts in [0, 1] (those at the start and at the end included)."""
    cm = ac.build(Counter())
    res = ac.simulate(cm, 1.0, n_points=5, params=params)
    assert res.final("n") == count


def test_a_clock_interval_that_is_not_positive_for_a_run_is_refused():
    with pytest.raises(ac.ArgumentError, match=r"Counter: sample\(T0, Ts\) is sample\(0, "
                                               r"-0\.1\) with this run's parameters"):
        ac.simulate(Counter(), 1.0, params={"Ts": -0.1})


@pytest.mark.parametrize("interval, said", [
    (-1.0, r"Ball: sample\(\): the interval must be finite and > 0 s, got -1.0"),
    ("0.1", r"Ball: sample\(\): the interval must be a number of seconds or a parameter, "
            r"got '0.1' \(str\)"),
    (float("inf"), r"the interval must be finite"),
])
def test_a_clock_with_a_wrong_interval_names_the_component(interval, said):
    def actions(self):
        return [ac.when(ac.sample(0.0, interval), ac.assign(self.n, ac.pre(self.n) + 1))]

    with pytest.raises(ac.ModelDefinitionError, match=said):
        ac.build(ball(actions))


def test_a_clock_of_variables_is_refused():
    def actions(self):
        return [ac.when(ac.sample(self.h, 0.1), ac.assign(self.n, ac.pre(self.n) + 1))]

    with pytest.raises(ac.ModelDefinitionError, match=r"start of sample\(h, 0.1\) depends "
                                                      r"on h"):
        ac.build(ball(actions))


def test_a_when_on_time_at_the_end_time_fires_there():
    class EndFlag(Clocked):
        def clause(self):
            return ac.when(self.time >= 1.0, ac.assign(self.n, 7.0))

    res = ac.simulate(EndFlag(), 1.0, n_points=3)
    assert res.final("n") == 7.0 and res["n"][-2] == 0.0


# ----- a state event at the end time is run there, as a time event is --------------------

class RampCount(Clocked):
    """x = t: ``x >= c`` becomes true at t = c, exactly (x' = 1 is integrated exactly)."""

    c = ac.Parameter(1.0, unit="1")

    def clause(self):
        return ac.when(self.x >= self.c, ac.assign(self.n, ac.pre(self.n) + 1))


@pytest.mark.parametrize("solver", ["idas", "dopri5", "cvodes-bdf"])
def test_a_state_event_at_the_end_time_is_run_there(solver):
    cm = ac.build(RampCount())
    res = ac.simulate(cm, 1.0, n_points=3, solver=solver)
    # (x(1) = 1 - 2.2e-16 with IDAS: the crossing is after the end by round-off; it is
    # run at the end, as a time event within 4e-12 s of it is)
    assert [(ev.t, ev.kind) for ev in res.events] == [(1.0, "state")]
    assert res.t[-2] == res.t[-1] == 1.0  # the instant twice: before and after the event
    assert res["n"][-2] == 0.0 and res.final("n") == 1.0
    # a crossing 1e-9 s after the end (beyond round-off) is not at the end time
    late = ac.simulate(cm, 1.0, n_points=3, solver=solver, params={"c": 1.0 + 1e-9})
    assert late.events == [] and late.final("n") == 0.0 and late.t[-2] < 1.0


@pytest.mark.parametrize("solver", ["idas", "dopri5", "dop853", "cvodes-bdf"])
def test_an_impact_at_the_end_time_is_run_there(solver):
    """The ball dropped from 1 m hits at T1 = sqrt(2 / g) and leaves at e g T1: a run
    that ends at T1 ends with that speed (IDAS and dopri5 ended with -g T1, the impact
    not run: the computed h(T1) was +1e-16, the crossing after the end by round-off)."""
    res = ac.simulate(Fall(), T1, n_points=11, solver=solver, rtol=1e-10, atol=1e-12)
    impact = [ev.t for ev in res.events if "when h < 0 [Fall]" in ev.changes]
    # the impact is located on the computed h, whose error at rtol 1e-10 (up to 7.5e-10 m
    # with cvodes-bdf) over the speed 4.4 m/s moves it by up to 1.7e-10 s (measured)
    assert len(impact) == 1 and abs(impact[0] - T1) < 1e-9
    assert res.t[-1] == T1
    # the speeds are g t exactly (a constant acceleration): 1e-9 relative is the
    # impact time's error times g over the speed
    assert res.final("v") == pytest.approx(0.8 * G * T1, rel=1e-9)


@pytest.mark.parametrize("solver", ["idas", "dopri5", "cvodes-bdf"])
def test_a_stretch_shorter_than_the_minimum_step_after_an_event_moves_the_states(solver):
    """A run ending 1e-9 s after the impact: the last stretch is an Euler step (IDAS and
    CVODES returned the start values unchanged over it: h stayed at -6e-17 m instead of
    the 3.5e-9 m the ball rises in 1e-9 s)."""
    t_end = T1 + 1e-9
    res = ac.simulate(Fall(), t_end, n_points=11, solver=solver, rtol=1e-10, atol=1e-12)
    t_hit = [ev.t for ev in res.events if "when h < 0 [Fall]" in ev.changes][0]
    v_up = 0.8 * G * T1
    h_ref = v_up * (t_end - t_hit) - G / 2 * (t_end - t_hit) ** 2
    # the located impact's h is 0 to atol-level; Euler's error on the stretch is
    # g dt^2 / 2 ~ 5e-18 m: atol (1e-12 m) is the bound
    assert res.final("h") == pytest.approx(h_ref, abs=1e-12)
    assert res.final("h") > 3e-10  # moved (at least 1e-10 s of rising at 3.5 m/s)


# ----- 16: the start of a discrete variable ------------------------------------------------

def test_the_start_of_a_discrete_variable_is_given_like_any_start():
    def actions(self):
        return [ac.when(self.h < 0, ac.reinit(self.v, -self.e * ac.pre(self.v)),
                        ac.assign(self.n, ac.pre(self.n) + 1))]

    cm = ac.build(ball(actions))
    res = ac.simulate(cm, 1.0, n_points=5, start={"n": 5})
    assert res["n"][0] == 5.0 and res.final("n") == 6.0  # one impact
    same = ac.simulate(cm, 1.0, n_points=5, params={"n": 5})
    np.testing.assert_array_equal(res["n"], same["n"])
    with pytest.raises(ac.ArgumentError, match="both in start= and in params="):
        ac.simulate(cm, 1.0, start={"n": 5}, params={"n": 4})


# ----- 8: a mass between stops -------------------------------------------------------------

@pytest.mark.parametrize("kw, said", [
    ({"s": -1.0, "s_min": 0.0, "s_max": 100.0},
     r"start position s = -1 m is outside the stops \[s_min, s_max\] = \[0, 100\] m"),
    ({"s": 0.5, "s_min": 1.0, "s_max": 0.0},
     r"the lower stop s_min = 1 m is not below the upper stop s_max = 0 m"),
])
def test_a_mass_with_stop_started_outside_its_stops_is_refused(kw, said):
    with pytest.raises(ac.ModelDefinitionError, match=said):
        tr.MassWithStop(m=0.1, v=0.0, **kw)


def test_a_mass_with_stop_changed_after_construction_is_checked_at_build():
    class B(ac.Model):
        def __init__(self):
            super().__init__()
            self.ball = tr.MassWithStop(m=0.1, s=0.5, v=0.0, s_min=0.0, s_max=1.0)
            self.weight = tr.Force(f=-0.981)
            self.connect(self.weight.flange, self.ball.flange_a)

    m = B()
    m.ball.s_min = 0.75
    with pytest.raises(ac.ModelDefinitionError, match=r"MassWithStop 'ball': the start "
                                                      r"position s = 0.5 m is outside"):
        ac.build(m)


def test_a_mass_with_stop_is_checked_for_every_run_that_moves_its_stops():
    class B(ac.Model):
        def __init__(self):
            super().__init__()
            self.ball = tr.MassWithStop(m=0.1, s=0.5, v=0.0, s_min=0.0, s_max=1.0)
            self.weight = tr.Force(f=-0.981)
            self.connect(self.weight.flange, self.ball.flange_a)

    cm = ac.build(B())
    with pytest.raises(ac.ArgumentError, match=r"MassWithStop 'ball': the start position "
                                               r"s = 0.5 m is outside .*ball.s_min"):
        ac.simulate(cm, 0.5, params={"ball.s_min": 0.75})
    with pytest.raises(ac.ArgumentError, match=r"s_min = 0 m is not below the upper stop "
                                               r"s_max = -1 m"):
        ac.simulate(cm, 0.5, params={"ball.s_max": -1.0})


def test_a_mass_with_stop_on_its_stop_is_fine():
    tr.MassWithStop(m=0.1, s=0.0, v=0.0, s_min=0.0, s_max=1.0)


def stop_ball_impacts(v_rest=1e-3, e=0.8, g=9.81):
    """Closed form: impacts at t_1 (1 + 2 (e + ... + e^(k-1))) until the first whose
    rebound e^k v_1 is at most v_rest (examples/bouncing_ball.py)."""
    t1 = np.sqrt(2.0 / g)
    n = int(np.ceil(np.log(v_rest / (g * t1)) / np.log(e)))
    return t1 + np.concatenate([[0.0], np.cumsum(2 * t1 * e ** np.arange(1, n))])


@pytest.mark.parametrize("t_end", [10.0, 1000.0])
def test_the_default_mass_with_stop_comes_to_rest(t_end):
    """With its default rest speed the ball rests after its 38th impact (the closed form),
    whatever the run's length: the Zeno check waits for a clause that chooses its mode
    from the state, where it stopped the run at the 28th impact before."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", ac.SolverWarning)
        res = ac.simulate(StopBall(), t_end, n_points=201)
    exact = stop_ball_impacts()
    hits = np.array([ev.t for ev in res.events if any("s_min" in c for c in ev.changes)
                     and any(c.startswith("when") for c in ev.changes)])
    assert res.status == "ok" and len(exact) == 38 and len(hits) == len(exact)
    # default rtol 1e-6: each impact instant carries the flight's integration error, and
    # the late impacts (1 mm/s) are slow to cross the floor; 1e-5 s is about 1e-3 of the
    # last flight (2e-4 s)
    np.testing.assert_allclose(hits, exact, rtol=0, atol=1e-5)
    assert res["ball.mode"][-1] == -1 and res["ball.v"][-1] == 0.0
    assert res["ball.s"].min() > -1e-9  # never through the floor


def test_a_mass_with_stop_that_never_rests_stops_at_its_zeno_point():
    """v_rest = 0: the impacts accumulate at t_1 (1 + 2 e / (1 - e)) = 4.0637 s; the run
    stops just before, above the floor, and the warning points at the rest threshold."""
    with pytest.warns(ac.SolverWarning, match="Zeno.*check the rest threshold"):
        res = ac.simulate(StopBall(v_rest=0.0), 10.0, n_points=201)
    t_zeno = np.sqrt(2 / 9.81) * (1 + 2 * 0.8 / 0.2)
    assert res.status == "stopped" and t_zeno - 1e-3 < res.t[-1] < t_zeno
    assert res["ball.s"].min() > -1e-9


# ----- the event log reads ------------------------------------------------------------------

def test_no_casadi_dump_in_event_texts_of_a_mass_with_stop():
    class B(ac.Model):
        def __init__(self):
            super().__init__()
            self.ball = tr.MassWithStop(m=0.1, s=1.0, v=0.0, s_min=0.0, s_max=2.0,
                                        v_rest=0.05)
            self.weight = tr.Force(f=-0.981)
            self.connect(self.weight.flange, self.ball.flange_a)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ac.UnresolvedWarning)
        res = ac.simulate(B(), 2.0, n_points=5)
    texts = [c for ev in res.events for c in ev.changes]
    assert texts and not any("@" in c for c in texts)
    assert any("self.s - self.s_min" in c for c in texts)  # the condition as written


def test_condition_texts_of_time_read_plainly():
    class Timed(Clocked):
        def clause(self):
            return ac.when(cs.logic_and(self.x > 0.5, self.time > 0.7),
                           ac.assign(self.n, 1.0))

    res = ac.simulate(Timed(), 1.0, n_points=3)
    assert [c for ev in res.events for c in ev.changes if c.startswith("when")] == [
        "when ((0.5 < x)&&(0.7<time)) [Timed]"]
