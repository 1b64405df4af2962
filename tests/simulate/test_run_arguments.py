"""Arguments of a run and what a failed or odd run reports: the output grid against
t_end, solver_options, max_step in a failure message, the partial result of a failure
after events (absolute times), no false resolution warning at a step on the run's edge,
and the arguments of Result.plot.

References are closed forms of piecewise-polynomial motions (exact to round-off).
"""

from __future__ import annotations

import re
import warnings

import casadi as cs
import numpy as np
import pytest

import acausal as ac


class Ramp(ac.Model):
    """x' = 1, and n counts x > 1 (at t = 1)."""

    x = ac.Variable(start=0.0, fixed=True)
    n = ac.Variable(start=0.0, unit="1", discrete=True)

    def equations(self):
        return [ac.der(self.x) == 1.0,
                ac.when(self.x > 1.0, ac.assign(self.n, ac.pre(self.n) + 1))]


# ----- 9. t_eval short of t_end ------------------------------------------------------------

def test_t_eval_short_of_t_end_is_completed_with_t_end():
    """simulate's docstring: the result ends at t_end. t_eval = [0, 0.5] with t_end = 2 ran
    to 0.5 only (silently without the event at t = 1)."""
    res = ac.simulate(Ramp(), 2.0, t_eval=[0.0, 0.5])
    assert res.t[0] == 0.0 and res.t[-1] == 2.0
    assert 0.5 in res.t
    assert res.final("x") == pytest.approx(2.0, abs=1e-12)
    assert res.final("n") == 1.0


def test_t_eval_ending_at_t_end_is_kept():
    res = ac.simulate(Ramp(), 2.0, t_eval=[0.5, 1.5, 2.0])
    assert res.t[0] == 0.0 and res.t[-1] == 2.0
    assert len(res.t) == 4 + 2  # t_start added; the event at t = 1 in the result twice


# ----- 10, 14. solver_options ---------------------------------------------------------------

@pytest.mark.parametrize("solver", ["idas", "cvodes-bdf", "cvodes-adams", "dopri5"])
def test_an_unknown_solver_option_is_refused_with_the_known_ones(solver):
    with pytest.raises(ac.ArgumentError, match=rf"the {solver} solver has no option "
                                               r"'max_ordr'") as info:
        ac.simulate(Ramp(), 1.0, solver=solver, solver_options={"max_ordr": 2})
    msg = str(info.value)
    assert ("its options are 'compile'" in msg if solver == "dopri5"
            else "it takes none" in msg)


def test_an_unknown_solver_option_is_refused_for_the_solver_auto_chose():
    with pytest.raises(ac.ArgumentError, match=r"has no option 'max_ordr'"):
        ac.simulate(Ramp(), 1.0, solver_options={"max_ordr": 2})


@pytest.mark.parametrize("options, said", [
    ([("a", 1)], r"solver_options must be a dict \{'name': value\}, got \[\('a', 1\)\] "
                 r"\(list\)"),
    ({"compile": [1]}, r"solver_options\['compile'\] = \[1\] \(list\): an option's value is"),
    ({1: 2}, r"solver_options keys are option names"),
])
def test_solver_options_of_the_wrong_type_are_refused_before_the_run(options, said):
    with pytest.raises(ac.ArgumentError, match=said):
        ac.simulate(Ramp(), 1.0, solver="dopri5", solver_options=options)


def test_a_known_solver_option_still_works():
    res = ac.simulate(Ramp(), 1.5, solver="dopri5", solver_options={"compile": "auto"})
    assert res.final("x") == pytest.approx(1.5, abs=1e-9)


# ----- 18. a failure caused by max_step -----------------------------------------------------

class Oscillator(ac.Model):
    x = ac.Variable(start=1.0, fixed=True)
    v = ac.Variable(start=0.0, fixed=True)

    def equations(self):
        return [ac.der(self.x) == self.v, ac.der(self.v) == -self.x]


def test_a_failure_at_the_step_limit_names_max_step():
    with pytest.raises(ac.SimulationError) as info:
        ac.simulate(Oscillator(), 1.0, max_step=1e-9)
    msg = str(info.value)
    assert "max_step = 1e-09 s" in msg and "step limit" in msg
    assert "Typical causes" not in msg  # (a singularity, tolerances: not the reason here)


# ----- 21. a failure after events keeps the points before it, at absolute times -------------

class BlowUp(ac.Model):
    """x bounces between 0 and 1 (x' = -1, reset to 1 at 0); from the first bounce on,
    y' = n y^2 from y = 1: y = 1 / (1 - (t - 1)), infinite at t = 2."""

    x = ac.Variable(start=1.0, fixed=True)
    y = ac.Variable(start=0.0, fixed=True)
    n = ac.Variable(start=0.0, discrete=True)

    def equations(self):
        return [ac.der(self.x) == -1.0, ac.der(self.y) == self.n * self.y ** 2,
                ac.when(self.x < 0, ac.reinit(self.x, 1.0), ac.reinit(self.y, 1.0),
                        ac.assign(self.n, ac.pre(self.n) + 1))]


@pytest.mark.parametrize("solver", ["idas", "cvodes-bdf"])
def test_a_failure_after_an_event_keeps_every_output_point_before_it(solver):
    with pytest.raises(ac.SimulationError) as info:
        ac.simulate(BlowUp(), 5.0, n_points=51, solver=solver)
    exc = info.value
    assert 1.99 < exc.t_fail < 2.0
    part = exc.partial
    assert part.t[-1] == pytest.approx(1.9, abs=1e-12)  # the last output point before 2
    # y = 1 / (2 - t) after the bounce at t = 1 (at rtol 1e-6; an error of y grows like
    # y^2 towards the blow-up: 1e-6 at t = 1 is some 4e-4 of y at t = 1.9)
    assert part.final("y") == pytest.approx(10.0, rel=1e-3)
    # the integrator's report in absolute time (it counted from its restart at t = 1.7)
    msg = str(exc)
    assert "At t = 0.29" not in msg and "Internal t = 0.29" not in msg
    assert "t = 1.99" in msg.split("reported")[-1]


# ----- 22. no false resolution warning at a step on the edge of the run --------------------

class Step(ac.Model):
    x = ac.Variable(start=0.0, fixed=True)
    T = ac.Parameter(1.0, unit="s")

    def equations(self):
        return [ac.der(self.x) == cs.if_else(self.time >= self.T, 1.0, 0.0)]


@pytest.mark.parametrize("T, x_end", [(1.0, 0.0), (1e-13, 1.0)])
def test_a_step_at_the_end_or_just_after_the_start_is_no_resolution_problem(T, x_end):
    with warnings.catch_warnings():
        warnings.simplefilter("error", ac.UnresolvedWarning)
        res = ac.simulate(Step(), 1.0, n_points=3, params={"T": T})
    # x = max(0, t - T): exact up to the 1e-12 s restart offset and T itself
    assert res.final("x") == pytest.approx(x_end, abs=1e-11)
    assert res.stats.unresolved == []


# ----- 15. plot arguments -------------------------------------------------------------------

def test_plot_refuses_what_is_not_a_name():
    pytest.importorskip("matplotlib")
    res = ac.simulate(Ramp(), 1.0, n_points=3)
    with pytest.raises(ac.ArgumentError, match=r"plot\(\) takes variable names .* got 3 "
                                               r"\(int\)"):
        res.plot(3)
    with pytest.raises(ac.ArgumentError, match=r"got \['x', 2\] \(list\)"):
        res.plot(["x", 2])


def test_plot_into_given_axes_draws_every_argument_or_refuses():
    plt = pytest.importorskip("matplotlib.pyplot")
    res = ac.simulate(Ramp(), 1.0, n_points=3)
    fig, axes = plt.subplots(2, 1)
    res.plot("x", ["x", "n"], ax=axes)
    assert [line.get_label() for line in axes[0].lines] == ["x"]
    assert [line.get_label() for line in axes[1].lines] == ["x", "n [1]"]
    # one Axes for two subplots drew the first and silently dropped the second
    fig, ax = plt.subplots()
    with pytest.raises(ac.ArgumentError, match=r"2 subplot\(s\) were asked for and 1 axes "
                                               "given"):
        res.plot("x", "x", ax=ax)
    assert len(ax.lines) == 0
    plt.close("all")


def test_plot_labels_carry_the_units_of_the_names():
    """The legend gives each name's unit (a variable's declared one, a port's or an edge's
    quantity's from its domain, a parameter's) and the y axis the unit its curves share."""
    plt = pytest.importorskip("matplotlib.pyplot")
    from components import electrical as el

    class RC(ac.Model):
        def __init__(self):
            super().__init__()
            self.src = el.ConstantVoltage(V=1.0)
            self.r = el.Resistor(R=1.0)
            self.c = el.Capacitor(C=1.0, v=0.0)
            self.g = el.Ground()
            self.connect(self.src.p, self.r.p)
            self.connect(self.r.n, self.c.p)
            self.connect(self.c.n, self.src.n, self.g.p)

    cm = ac.build(RC())
    res = ac.simulate(cm, 1.0, n_points=3)
    assert [res.unit(n) for n in ("c.v", "r.p.i", "r.R", "der(c.v)")] == ["V", "A", "Ohm",
                                                                          "V/s"]
    with pytest.raises(KeyError, match="did you mean"):
        res.unit("c.vv")
    fig, axes = plt.subplots(2, 1)
    res.plot(["c.v", "r.p.v"], ["c.v", "r.p.i"], ax=axes)
    assert [line.get_label() for line in axes[0].lines] == ["c.v [V]", "r.p.v [V]"]
    assert axes[0].get_ylabel() == "[V]"
    assert axes[1].get_ylabel() == ""  # (two units: each in the legend only)
    plt.close("all")
    import pickle
    # the model is not saved with a result: the units of its names are
    loaded = pickle.loads(pickle.dumps(res))
    names = ("c.v", "r.p.i", "r.R", "der(c.v)", "r[p->n].v", "g[datum->p].i")
    assert [loaded.unit(n) for n in names] == ["V", "A", "Ohm", "V/s", "V", "A"]
    fig, ax = plt.subplots()
    loaded.plot("c.v", ax=ax)
    assert ax.get_ylabel() == "[V]"
    plt.close("all")
    assert pickle.loads(pickle.dumps(ac.simulate(Ramp(), 1.0, n_points=3))).unit("x") == ""
    # a loaded model's results too (its components are not saved: their ports' units are)
    res2 = ac.simulate(pickle.loads(pickle.dumps(cm)), 1.0, n_points=3)
    assert [res2.unit(n) for n in names] == ["V", "A", "Ohm", "V/s", "V", "A"]
    # the units outlive the compiled model, which a result does not keep alive (the model
    # simulate(Model()) builds is collected on return; a user deletes theirs)
    import gc
    import weakref

    res3 = ac.simulate(RC(), 1.0, n_points=3)
    gone = weakref.ref(cm)
    del cm
    gc.collect()
    assert gone() is None
    for r in (res, res2, res3):
        assert [r.unit(n) for n in names] == ["V", "A", "Ohm", "V/s", "V", "A"]
    assert pickle.loads(pickle.dumps(res3)).unit("r.p.i") == "A"


def test_plot_makes_a_missing_folder_and_refuses_a_file_as_one(tmp_path):
    """As save(), the FMU export and the CLI do (it refused a missing folder)."""
    pytest.importorskip("matplotlib")
    res = ac.simulate(Ramp(), 1.0, n_points=3)
    res.plot("x", file=str(tmp_path / "new" / "sub" / "p.png"))
    assert (tmp_path / "new" / "sub" / "p.png").stat().st_size > 0
    (tmp_path / "plain").write_text("")
    with pytest.raises(ac.AcausalError, match=r"'.*plain' is a file, not a folder"):
        res.plot("x", file=str(tmp_path / "plain" / "p.png"))


def test_structural_arrays_read_as_constant_series():
    """The structural arrays of numbers (a gravity vector, an arm's vector: fixed at the
    build, never symbols) are read from a result as the other parameters, a row per time
    point as a frame's vectors, with their units; from a saved model's result too."""
    import pickle

    from _models import LinkChain

    cm = ac.build(LinkChain(3))
    for res in (ac.simulate(cm, 0.1, n_points=4),
                ac.simulate(pickle.loads(pickle.dumps(cm)), 0.1, n_points=4)):
        assert "world.g" in res.names() and "arms[2].r" in res
        np.testing.assert_array_equal(res["world.g"], np.tile([0.0, -9.81, 0.0], (4, 1)))
        np.testing.assert_array_equal(res["arms[2].r"], np.tile([1 / 3, 0.0, 0.0], (4, 1)))
        assert (res.unit("world.g"), res.unit("arms[2].r")) == ("m/s2", "m")
        res["world.g"][0, 1] = 0.0  # (a copy: the next read is unchanged)
        assert res.final("world.g")[1] == -9.81 and res["world.g"][0, 1] == -9.81
        assert pickle.loads(pickle.dumps(res))["arms[2].r"].shape == (4, 3)


def test_a_relation_is_not_a_parameter():
    """The model's relations (the truth values the event handling freezes) sit among its
    parameters but follow its variables: params= took them and changed nothing."""
    import bouncing_ball

    cm = ac.build(bouncing_ball.build_model())
    rel = [p.name for p in cm.system.parameters if p.kind == "relation"]
    assert rel
    with pytest.raises(ac.ArgumentError, match=rf"'{re.escape(rel[0])}' is the value of a "
                                               "relation of the model"):
        ac.simulate(cm, 0.1, params={rel[0]: 5.0})


# ----- start values in the one-call form (simulate(model, ...)) ---------------------------

class SpinningBody(ac.Model):
    """A free body without gravity; principal axes along its frame's (no products of
    inertia)."""

    def __init__(self):
        super().__init__()
        from components import multibody as mb

        self.world = mb.World(g=[0, 0, 0])
        self.body = mb.Body(m=1.0, I_11=0.1, I_22=0.2, I_33=0.3)


@pytest.mark.parametrize("form", ["model", "built"])
def test_a_vector_start_value_in_both_forms_of_simulate(form):
    """docs/tutorial.md: a vector unknown takes its name and one number per element. The
    one-call form refused it ('must be a number') before the model was built."""
    m = SpinningBody()
    res = ac.simulate(m if form == "model" else ac.build(m), 0.5, n_points=6,
                      start={"body.w_a": [0.0, 0.0, 3.0]})
    # torque-free spin about a principal axis is steady (Euler's equations: the other
    # rates stay 0): the start rates to round-off, at every point
    np.testing.assert_allclose(res["body.w_a"], np.tile([0.0, 0.0, 3.0], (6, 1)), atol=1e-12)


def test_start_values_of_a_model_are_checked_against_the_built_model():
    """A name or a unit that does not fit is named alike in both forms (the one-call form
    converted '3 mA' for a voltage to 0.003, and an unknown name was an
    InitializationError from the start solve)."""
    from components import electrical as el

    class RC(ac.Model):
        def __init__(self):
            super().__init__()
            self.src, self.r = el.ConstantVoltage(V=1.0), el.Resistor(R=1.0)
            self.c, self.g = el.Capacitor(C=1.0, v=0.0), el.Ground()
            self.connect(self.src.p, self.r.p)
            self.connect(self.r.n, self.c.p)
            self.connect(self.c.n, self.src.n, self.g.p)

    for m in (RC(), ac.build(RC())):
        assert ac.simulate(m, 0.1, start={"c.v": "3 mV"})["c.v"][0] == pytest.approx(3e-3)
        with pytest.raises(ac.StartValueError, match=r"'c\.vv' \(did you mean c\.v\?\)"):
            ac.simulate(m, 0.1, start={"c.vv": 1.0})
        with pytest.raises(ac.StartValueError, match=r"start\['c\.v'\]: .*mA"):
            ac.simulate(m, 0.1, start={"c.v": "3 mA"})


def test_a_convergence_failure_names_the_runs_tolerances_and_the_atol_cause():
    """A flexible slider-crank held by 100 N failed at t = 0 only at atol 1e-10 (its joint
    forces round above that); the message advised rtol=1e-8, which does not help."""
    from acausal.simulate import _failure_message
    from acausal.solvers.base import IntegrationFailure, IntegratorOptions

    exc = IntegrationFailure("IDA_CONV_FAIL", 0.0)
    text = _failure_message("idas", exc, IntegratorOptions(rtol=1e-6, atol=1e-10))
    assert "this run: rtol=1e-06, atol=1e-10" in text and "try a larger atol" in text
    assert "rtol=1e-8" not in text
