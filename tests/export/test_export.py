"""Exported CasADi functions: DAE, differentiable simulator, linearisation."""

import warnings

import casadi as cs
import numpy as np
import pytest
from models import RC, MassSpringDamper

import acausal as ac


def test_dae_function_matches_rc_ode():
    cm = ac.build(RC(R=1000.0, C=1e-3, V=10.0))
    f = ac.export.dae_function(cm)
    assert cm.dae.x_names == ["capacitor.v"]
    ode, _ = f([2.0], [], cm.dae.p_values, 0.0)
    assert abs(float(ode) - (10.0 - 2.0) / 1.0) < 1e-12  # (V - v) / (R C)


def test_linearize_mass_spring_damper():
    m, c, d = 2.0, 50.0, 3.0
    cm = ac.build(MassSpringDamper(m=m, c=c, d=d))
    lin = ac.export.linearize(cm, inputs=["spring.c"], outputs=["spring.f"])
    order = [lin.states.index("mass.s"), lin.states.index("mass.v")]
    A = lin.A[np.ix_(order, order)]
    np.testing.assert_allclose(A, [[0, 1], [-c / m, -d / m]], atol=1e-12)
    # output spring.f = c s: C = [c, 0]; input c acts through f = c s: D = s0
    np.testing.assert_allclose(lin.C[0, order], [c, 0.0], atol=1e-12)
    np.testing.assert_allclose(lin.D, [[0.1]], atol=1e-12)


def test_simulator_is_differentiable_wrt_parameters():
    cm = ac.build(RC(R=1000.0, C=1e-3, V=10.0))
    grid = np.linspace(0.0, 1.0, 11)
    sim = ac.export.simulator(cm, grid, outputs=["capacitor.v"], rtol=1e-10, atol=1e-12)
    p = cs.MX.sym("p", cm.dae.p.numel())
    X, Y = sim(cs.DM([0.0]), cs.DM.zeros(0, 1), p)
    k = cm.dae.p_names.index("resistor.R")
    dvdR = cs.Function("g", [p], [cs.jacobian(Y[-1], p)[k]])(cm.dae.p_values)
    # v(t) = V (1 - exp(-t/(RC)))  ->  dv/dR = -V t/(R^2 C) exp(-t/(RC)) at t = 1
    R, C, V, t = 1000.0, 1e-3, 10.0, 1.0
    ref = -V * t / (R**2 * C) * np.exp(-t / (R * C))
    assert abs(float(dvdR) - ref) < 1e-6 * abs(ref)  # IDAS sensitivity at rtol 1e-10


def test_dae_function_generates_c_code(tmp_path, monkeypatch):
    cm = ac.build(MassSpringDamper())
    f = ac.export.dae_function(cm, name="msd_dae")
    monkeypatch.chdir(tmp_path)  # CasADi writes the C file into the working directory
    f.generate("msd_dae.c")
    code = (tmp_path / "msd_dae.c").read_text()
    assert "msd_dae" in code and "casadi_real" in code


# ----- argument checks of the exports -----


def test_linearize_point_needs_one_value_per_state():
    """A short x was broadcast (x=[0.3] set both states); a long one was CasADi's shape
    error. Both name the states; a full x is the point used."""
    m, c, d = 2.0, 50.0, 3.0
    cm = ac.build(MassSpringDamper(m=m, c=c, d=d))
    states = ", ".join(cm.dae.x_names)
    for x, n in (([0.3], 1), ([0.3, 0.0, 5.0], 3)):
        with pytest.raises(ac.ArgumentError, match=rf"x has {n} values?, but MassSpringDamper "
                           rf"has 2 states \(cm.dae.x_names\): {states}; give one value"):
            ac.export.linearize(cm, ["spring.c"], ["spring.f"], x=x)
    with pytest.raises(ac.ArgumentError, match=r"z has 1 value, but MassSpringDamper has 0 "
                       "algebraic variables"):
        ac.export.linearize(cm, ["spring.c"], x=[0.3, 0.0], z=[1.0])
    with pytest.raises(ac.ArgumentError, match=r"x\[1\] \(.*\) must be finite"):
        ac.export.linearize(cm, ["spring.c"], x=[0.3, np.nan])
    x = np.where(np.array(cm.dae.x_names) == "mass.s", 0.3, 0.0)  # s = 0.3, v = 0
    lin = ac.export.linearize(cm, "spring.c", "spring.f", x=x)  # (one string, one name)
    assert lin.inputs == ["spring.c"] and lin.outputs == ["spring.f"]
    # m v' = -c s - d v: dv'/dc = -s/m; spring.f = c s: df/dc = s (exact: no rounding)
    assert lin.B[lin.states.index("mass.v"), 0] == -0.3 / m
    assert lin.D[0, 0] == 0.3


class Implicit(ac.Model):
    """x' = -z with z^3 + k z = x: z is an algebraic variable (the cubic is not solved
    symbolically)."""

    x = ac.Variable(start=0.0, fixed=True)
    z = ac.Variable(start=0.0)
    k = ac.Parameter(1.0)

    def equations(self):
        return [ac.der(self.x) == -self.z, self.z**3 + self.k * self.z == self.x]


def test_linearize_at_a_given_x_solves_for_the_algebraic_variables():
    """With x alone, z solves g(x, z) = 0 there (it was the initial point's z = 0, an
    inconsistent point: A = -1 instead of -1/4)."""
    cm = ac.build(Implicit())
    assert cm.dae.z_names == ["z"]
    lin = ac.export.linearize(cm, ["k"], ["z"], x=[2.0])
    # at x = 2, k = 1: z = 1 (1 + 1 = 2); dz/dx = 1 / (3 z^2 + k) = 1/4, dz/dk =
    # -z / (3 z^2 + k) = -1/4; x' = -z. Newton's tolerance 1e-12 on the residual bounds
    # z's error by 1e-12 / g_z = 2.5e-13: 1e-12 covers it and the products
    assert lin.z == pytest.approx([1.0], abs=1e-12)
    np.testing.assert_allclose(lin.A, [[-0.25]], atol=1e-12)
    np.testing.assert_allclose(lin.B, [[0.25]], atol=1e-12)
    np.testing.assert_allclose(lin.C, [[0.25]], atol=1e-12)
    np.testing.assert_allclose(lin.D, [[-0.25]], atol=1e-12)
    # z given with x is the point used, as it is
    given = ac.export.linearize(cm, ["k"], ["z"], x=[2.0], z=[1.0])
    assert given.z.tolist() == [1.0] and given.A.tolist() == [[-0.25]]


def test_linearize_at_an_x_without_algebraic_solution_names_the_equation():
    class NoRoot(ac.Model):
        x = ac.Variable(start=2.0, fixed=True)
        z = ac.Variable(start=1.0)

        def equations(self):
            return [ac.der(self.x) == -self.z, self.z**2 + 1.0 == self.x]

    cm = ac.build(NoRoot())
    with pytest.raises(ac.ArgumentError, match=r"linearize: no algebraic variables .* of "
                       r"NoRoot at the given x .*residuals 1 in \(sq\(z\)\+1\) == x +"
                       r"\[NoRoot\]\): give z as well"):
        ac.export.linearize(cm, x=[0.0])  # z^2 + 1 = 0 has no real root


def test_export_names_one_string_parameters_and_suggestions():
    cm = ac.build(MassSpringDamper(m=2.0, c=50.0, d=3.0))
    d = cm.dae
    x = [0.3 if n == "mass.s" else 0.0 for n in d.x_names]
    # a parameter is an output as in res["spring.c"]; one string is one name
    f = ac.export.output_function(cm, ["spring.c", "spring.f"])
    assert np.asarray(f(x, [], d.p_values, 0.0)).ravel().tolist() == [50.0, 50.0 * 0.3]
    assert ac.export.output_function(cm, "mass.s")(x, [], d.p_values, 0.0) == 0.3
    lin = ac.export.linearize(cm, ["spring.c"], ["spring.c"])  # y = u: D = 1, C = 0
    assert lin.D.tolist() == [[1.0]] and not lin.C.any()
    with pytest.raises(ac.ArgumentError, match=r"outputs: 'mass.ss' is not a quantity of "
                       r"MassSpringDamper .*did you mean 'mass.s'"):
        ac.export.output_function(cm, ["mass.ss"])
    with pytest.raises(ac.ArgumentError, match=r"outputs: 'mass.ss' .*did you mean 'mass.s'"):
        ac.export.simulator(cm, [0.0, 1.0], ["mass.ss"])
    with pytest.raises(ac.ArgumentError, match=r"inputs: 'spring.cc' is not a parameter of "
                       r"MassSpringDamper.*did you mean 'spring.c'"):
        ac.export.linearize(cm, "spring.cc")
    with pytest.raises(ac.ArgumentError, match=r"outputs must be dotted names .*got 3"):
        ac.export.output_function(cm, ["mass.s", 3])


@pytest.mark.parametrize("grid, message", [
    (np.linspace(1.0, 0.0, 11), r"grid must be strictly increasing: grid\[0\] = 1 is "
     "followed by 0.9"),  # (was integrated backward, silently)
    ([0.0, 0.5, 0.2, 1.0], r"grid must be strictly increasing: grid\[1\] = 0.5"),  # IDAS
    ([0.0], r"grid needs at least 2 times"),  # (was a segmentation fault)
    ([0.0, np.nan, 1.0], r"grid contains NaN or inf \(grid\[1\] = nan\)"),  # (a hang)
    ([], r"grid must be a non-empty 1-D sequence"),  # (an IndexError)
])
def test_simulator_checks_its_grid_at_export(grid, message):
    cm = ac.build(MassSpringDamper())
    with pytest.raises(ac.ArgumentError, match=message):
        ac.export.simulator(cm, grid, ["mass.s"])
    with pytest.raises(ac.ArgumentError, match=message):  # the parametric one too
        ac.export.simulator(cm, grid, ["mass.s"], params=["spring.c"])


def test_simulator_takes_one_output_name_as_a_string():
    cm = ac.build(RC(R=1000.0, C=1e-3, V=10.0))
    sim = ac.export.simulator(cm, [0.0, 1.0], "capacitor.v", rtol=1e-10, atol=1e-12)
    Y = float(sim([0.0], cs.DM.zeros(0, 1), cm.dae.p_values)[1])
    # v = V (1 - e^{-t/RC}); 1e-7: IDAS's global error at rtol 1e-10 over one time constant
    assert abs(Y - 10.0 * (1 - np.exp(-1.0))) < 1e-7
    for kwargs in ({}, {"params": ["resistor.R"]}):  # tolerances checked as simulate's
        with pytest.raises(ac.ArgumentError, match=r"rtol must be > 0 and < 1, got -1"):
            ac.export.simulator(cm, [0.0, 1.0], "capacitor.v", rtol=-1, **kwargs)


# ----- models with relations: the mode at the point -----------------------------------------
class LimitedPush(ac.Model):
    """A constant command through a Limiter (|y| <= 2) pushing a 1 kg mass."""

    def __init__(self):
        super().__init__()
        from components import blocks as bl
        from components import translational as tr

        self.cmd = bl.Constant(k=0.0)
        self.lim = bl.Limiter(uMax=2.0)
        self.force = tr.SignalForce()
        self.mass = tr.Mass(m=1.0, s=0.0, v=0.0)
        self.connect(self.cmd.y, self.lim.u)
        self.connect(self.lim.y, self.force.f)
        self.connect(self.force.flange, self.mass.flange_a)


@pytest.mark.parametrize("k, slope", [(0.0, 1.0), (0.1, 1.0), (3.0, 0.0), (-3.0, 0.0)])
def test_linearize_reads_the_relations_at_the_point(k, slope):
    """The limiter passes its input inside the limits (dy/du = 1) and holds it outside
    (0): the linearisation is that of the mode at the point (it read every relation as
    false, the saturated mode, for every point before)."""
    lin = ac.export.linearize(ac.build(LimitedPush()), ["cmd.k"], ["lim.y", "mass.a"],
                              params={"cmd.k": k})
    np.testing.assert_array_equal(lin.D.ravel(), [slope, slope])  # exact: 1 and 0
    np.testing.assert_array_equal(lin.B.ravel(), [0.0, slope])


def test_linearize_a_limited_pi_loop_gives_the_pi_poles():
    """A LimPID (limits +-10) in a PI loop around T y' = u - y, at rest: unsaturated, the
    poles are those of s^2 + (1 + k)/T s + k/(T Ti) (closed form)."""
    from components import blocks as bl

    class Loop(ac.Model):
        def __init__(self):
            super().__init__()
            self.sp = bl.Constant(k=0.0)
            self.pid = bl.LimPID(controllerType="PI", k=2.0, Ti=0.5, yMax=10.0)
            self.plant = bl.FirstOrder(k=1.0, T=0.2)
            self.connect(self.sp.y, self.pid.u_s)
            self.connect(self.plant.y, self.pid.u_m)
            self.connect(self.pid.y, self.plant.u)

    lin = ac.export.linearize(ac.build(Loop()), ["sp.k"], ["plant.y"])
    k, ti, tp = 2.0, 0.5, 0.2
    poles = np.sort(np.roots([1.0, (1 + k) / tp, k / (tp * ti)]))
    # eigenvalues of a 2x2 matrix of exact entries: round-off only
    np.testing.assert_allclose(np.sort(np.linalg.eigvals(lin.A).real), poles, rtol=1e-12)


def test_linearize_on_a_switching_threshold_says_so():
    with pytest.warns(ac.AcausalWarning, match=r"switching threshold of .*\[lim\]"):
        ac.export.linearize(ac.build(LimitedPush()), ["cmd.k"], ["lim.y"],
                            params={"cmd.k": 2.0})


def test_functions_of_one_smooth_dae_refuse_models_with_events():
    """The (x0, z0, p) simulator integrated a bouncing ball through its floor (h(1) =
    -3.9 m, simulate: 0.47 m) and collocation optimised a limiter frozen at its bound:
    both now name the events."""
    from models import BouncingBall

    cm = ac.build(BouncingBall())
    with pytest.raises(ac.ArgumentError, match=r"export.simulator needs one smooth DAE.*"
                                               r"h < 0 \[BouncingBall\].*acausal.simulate"):
        ac.export.simulator(cm, [0.0, 1.0], ["h"])
    with pytest.raises(ac.ArgumentError, match=r"direct collocation needs one smooth DAE, "
                                               r"but LimitedPush .*\[lim\]"):
        ac.ocp.Collocation(ac.build(LimitedPush()), 10, controls=["cmd.k"])


def test_functions_of_a_compiled_model_refuse_values_changed_after_the_build(tmp_path):
    """As simulate does: fmu, linearize, the exported simulators and collocation would
    use the value the model was built with."""
    model = RC()
    cm = ac.build(model)
    model.resistor.R = 2000.0
    changed = r"resistor.R was changed to 2000.0 Ohm after the model was built"
    from acausal.fmi import fmu

    with pytest.raises(ac.ArgumentError, match=changed + r".*build the model again"):
        fmu(cm, tmp_path / "rc.fmu")
    with pytest.raises(ac.ArgumentError, match=changed + r".*linearize\(cm, \.\.\., params="):
        ac.export.linearize(cm, [], ["capacitor.v"])
    with pytest.raises(ac.ArgumentError, match=changed):
        ac.export.simulator(cm, [0.0, 1.0], ["capacitor.v"], params=["capacitor.C"])
    with pytest.raises(ac.ArgumentError, match=changed + r".*Collocation\(cm, \.\.\., params="):
        ac.ocp.Collocation(cm, 10)
    # given for the call, the new value is used
    lin = ac.export.linearize(cm, [], ["capacitor.v"], params={"resistor.R": 2000.0})
    C = cm.parameter_values()[cm.dae.p_names.index("capacitor.C")]
    assert lin.A[0, 0] == pytest.approx(-1.0 / (2000.0 * C), rel=1e-12)  # -1/(RC), exact


class SpeedRelay(ac.Model):
    """A 0.5 kg m2 inertia with a 0.1 N m s damper, driven by 2 N m while a Hysteresis
    relay (band -0.5..0.5 on the speed error 10 - w) is on: J w' = tau - d w."""

    def __init__(self):
        super().__init__()
        from components import blocks as bl
        from components import rotational as rot

        self.j = rot.Inertia(J=0.5, phi=0.0, w=0.0)
        self.d = rot.Damper(d=0.1)
        self.fix = rot.Fixed()
        self.sens = rot.SignalSpeedSensor()
        self.mot = rot.SignalTorque()
        self.ref = bl.Constant(k=10.0)
        self.err = bl.Feedback()
        self.relay = bl.Hysteresis(uLow=-0.5, uHigh=0.5)
        self.on = bl.Constant(k=2.0)
        self.off = bl.Constant(k=0.0)
        self.sw = bl.Switch()
        self.connect(self.j.flange_b, self.d.flange_a, self.sens.flange, self.mot.flange)
        self.connect(self.d.flange_b, self.fix.flange)
        self.connect(self.ref.y, self.err.u1)
        self.connect(self.sens.w, self.err.u2)
        self.connect(self.err.y, self.relay.u)
        self.connect(self.relay.y, self.sw.u2)
        self.connect(self.on.y, self.sw.u1)
        self.connect(self.off.y, self.sw.u3)
        self.connect(self.sw.y, self.mot.tau)


@pytest.mark.parametrize("w, on", [(0.0, True), (20.0, False), (10.6, False), (9.4, True)])
def test_linearize_evaluates_a_relay_at_the_point(w, on):
    """At w = 20 rad/s (error -10 < uLow) the relay is off by its own condition: the
    torque does not depend on on.k (B = [0, 0]); linearize kept the relay's y_held of the
    initial point (w = 0: on) and gave B = [0, 2] without a word. Now the relay's when
    clauses (declared initial=True) run at the point as at a start there."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # outside the band: no warning
        lin = ac.export.linearize(ac.build(SpeedRelay()), ["on.k"], ["j.w"],
                                  x=np.array([0.0, w]))
    # exact: B = [0, 1/J] while on (J = 0.5 kg m2), A = [[0, 1], [0, -d/J]]
    np.testing.assert_array_equal(lin.B.ravel(), [0.0, 2.0 if on else 0.0])
    np.testing.assert_array_equal(lin.A, [[0.0, 1.0], [0.0, -0.2]])
    assert lin.p[ac.build(SpeedRelay()).dae.p_names.index("relay.y_held")] == float(on)


def test_linearize_inside_a_relay_band_says_which_held_value_it_uses():
    """Inside the band (w = 10: error 0) the output is history: the start value
    (pre_y_start = 0, off) is used and named; params= chooses the other branch."""
    cm = ac.build(SpeedRelay())
    with pytest.warns(ac.AcausalWarning, match=r"relay\.y_held \[relay\] holds.*keeps its "
                                               r"start value relay\.y_held = 0; choose "
                                               r"with params=\{'relay\.y_held': \.\.\.\}"):
        off = ac.export.linearize(cm, ["on.k"], ["j.w"], x=np.array([0.0, 10.0]))
    np.testing.assert_array_equal(off.B.ravel(), [0.0, 0.0])
    with warnings.catch_warnings(record=True) as caught:  # (it points at this call)
        warnings.simplefilter("always")
        ac.export.linearize(cm, ["on.k"], ["j.w"], x=np.array([0.0, 10.0]))
    assert [w.filename for w in caught] == [__file__]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # chosen by the user: no warning
        on = ac.export.linearize(cm, ["on.k"], ["j.w"], x=np.array([0.0, 10.0]),
                                 params={"relay.y_held": 1.0})
    np.testing.assert_array_equal(on.B.ravel(), [0.0, 2.0])  # 1/J, exact
    # outside the band the relay's own condition wins over a value given for the band
    lin = ac.export.linearize(cm, ["on.k"], ["j.w"], x=np.array([0.0, 20.0]),
                              params={"relay.y_held": 1.0})
    np.testing.assert_array_equal(lin.B.ravel(), [0.0, 0.0])


def test_linearize_refuses_a_point_a_start_clause_jumps_away_from():
    """A clause declared initial=True that reinitialises a state where its condition
    holds: such a point is left at once (a start there jumps), so it has no
    linearisation; below the threshold the clause does not run."""

    class Saw(ac.Model):
        x = ac.Variable(start=0.0)
        k = ac.Parameter(1.0)

        def equations(self):
            return [ac.der(self.x) == self.k,
                    ac.when(self.x > 1.0, ac.reinit(self.x, 0.0), initial=True)]

    cm = ac.build(Saw())
    lin = ac.export.linearize(cm, ["k"], ["x"], x=[0.5])
    np.testing.assert_array_equal(lin.B, [[1.0]])  # x' = k, exact
    with pytest.raises(ac.ArgumentError, match=r"initial=True reinitialises x \(when 1 < x "
                                               r"\[Saw\]\): the model jumps away"):
        ac.export.linearize(cm, ["k"], ["x"], x=[1.5])


class SampledDamping(ac.Model):
    """A 1 kg m2 inertia braked by tau = k y, y a ZeroOrderHold (0.1 s) of its speed."""

    def __init__(self, w=0.0):
        super().__init__()
        from components import blocks as bl
        from components import rotational as rot

        self.j = rot.Inertia(J=1.0, phi=0.0, w=w)
        self.sens = rot.SignalSpeedSensor()
        self.mot = rot.SignalTorque()
        self.zoh = bl.ZeroOrderHold(samplePeriod=0.1)
        self.g = bl.Gain(k=-2.0)
        self.connect(self.j.flange_b, self.sens.flange, self.mot.flange)
        self.connect(self.sens.w, self.zoh.u)
        self.connect(self.zoh.y, self.g.u)
        self.connect(self.g.y, self.mot.tau)


def test_linearize_runs_a_sample_clock_at_its_instant():
    """At t = 0, a tick of the hold's clock, the hold reads the speed as ac.simulate's
    start does (y = 3 rad/s): dw'/dk = y / J = 3. A model with when clauses and no
    relation was linearised with its discrete variables at their start values (y = 0,
    B = [0, 0]), at the initial point as at a given x."""
    for model, x in ((SampledDamping(w=3.0), None), (SampledDamping(), np.array([0.0, 3.0]))):
        cm = ac.build(model)
        lin = ac.export.linearize(cm, ["g.k"], ["j.w"], x=x)
        assert lin.p[cm.dae.p_names.index("zoh.y_held")] == 3.0
        np.testing.assert_array_equal(lin.B.ravel(), [0.0, 3.0])  # y / J, exact


def test_linearize_between_the_ticks_of_a_clock_says_the_sample_is_its_start_value():
    """At t = 0.05 s, between the hold's ticks (every 0.1 s from 0), the held value is the
    last sample, history a point cannot know: the start value was used without a word
    (B = [0, 0] for a speed of 3 rad/s). It is named now, and params= chooses it."""
    cm = ac.build(SampledDamping())
    with pytest.warns(ac.AcausalWarning, match=r"t = 0\.05 s is between the ticks of the "
                      r"clock of zoh: the sampled values zoh\.y_held = 0 .*params="
                      r"\{'zoh\.y_held': \.\.\.\}"):
        lin = ac.export.linearize(cm, ["g.k"], ["j.w"], x=np.array([0.0, 3.0]), t=0.05)
    np.testing.assert_array_equal(lin.B.ravel(), [0.0, 0.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # chosen by the user, or at a tick: no warning
        lin = ac.export.linearize(cm, ["g.k"], ["j.w"], x=np.array([0.0, 3.0]), t=0.05,
                                  params={"zoh.y_held": 3.0})
        np.testing.assert_array_equal(lin.B.ravel(), [0.0, 3.0])
        ac.export.linearize(cm, ["g.k"], ["j.w"], x=np.array([0.0, 3.0]), t=0.2)


def test_linearize_of_friction_at_a_given_x_does_not_call_its_start_mode_history():
    """A friction element's start mode ("not yet decided", read from the speed) is no
    value its start clauses give: no warning about held values. Sliding at 1 m/s with a
    1 N push on 1 kg: dv'/dcmd = 1/m = 1, dv'/dv = 0 (Coulomb force constant)."""
    from components import blocks as bl
    from components import translational as tr

    class Block(ac.Model):
        def __init__(self):
            super().__init__()
            self.m = tr.Mass(m=1.0, s=0.0, v=0.0)
            self.fr = tr.Friction(f_coulomb=2.0, peak=1.5)
            self.fix = tr.Fixed()
            self.F = tr.SignalForce()
            self.cmd = bl.Constant(k=1.0)
            self.connect(self.fix.flange, self.fr.flange_a)
            self.connect(self.fr.flange_b, self.m.flange_a, self.F.flange)
            self.connect(self.cmd.y, self.F.f)

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lin = ac.export.linearize(ac.build(Block()), ["cmd.k"], ["m.v"],
                                  x=np.array([0.0, 1.0]))
    # round-off of the elimination of the algebraic variables (solve with g_z): 4e-16
    np.testing.assert_allclose(lin.B.ravel(), [0.0, 1.0], rtol=0.0, atol=1e-14)
    np.testing.assert_allclose(lin.A, [[0.0, 1.0], [0.0, 0.0]], rtol=0.0, atol=1e-14)
