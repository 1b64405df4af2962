"""Mistakes in writing components and reading their results (a user trial): each is an
error that names the component and says what to do, or a warning where the library
cannot stand behind a result, never a silently wrong model.

Sections: equations() and initial_equations(), declarations, values and results.
"""

import warnings

import numpy as np
import pytest
from models import Limited

import acausal as ac
from acausal import Edge, Parameter, Variable, der
from components import blocks as bl
from components import electrical as el
from components import rotational as rot
from components import thermal as th


def one_port_model(element):
    """A 1 V source across ``element`` (named ``x``), grounded."""

    class Circuit(ac.Model):
        def __init__(self):
            super().__init__()
            self.src = el.ConstantVoltage(V=1.0)
            self.x = element
            self.g = el.Ground()
            self.connect(self.src.p, self.x.p)
            self.connect(self.x.n, self.src.n, self.g.p)

    return Circuit()


# ---------------------------------------------------------------------------------------
# equations() and initial_equations()
# ---------------------------------------------------------------------------------------


class _GenResistor(el.OnePort):
    R = Parameter(2.0, unit="Ohm")

    def equations(self):
        yield self.v == self.R * self.i


class _GenCapacitor(el.Capacitor):
    def initial_equations(self):
        yield self.v == 0.5


def test_equations_written_as_a_generator_are_used():
    res = ac.simulate(one_port_model(_GenResistor()), 1.0, n_points=3)
    assert res.final("x.i") == pytest.approx(0.5)


def test_initial_equations_written_as_a_generator_are_used():
    class RC(ac.Model):
        def __init__(self):
            super().__init__()
            self.src = el.ConstantVoltage(V=1.0)
            self.r = el.Resistor(R=1.0)
            self.c = _GenCapacitor(C=1.0)
            self.g = el.Ground()
            self.connect(self.src.p, self.r.p)
            self.connect(self.r.n, self.c.p)
            self.connect(self.c.n, self.src.n, self.g.p)

    res = ac.simulate(RC(), 1.0, n_points=3)
    assert res["c.v"][0] == pytest.approx(0.5)
    assert res.stats.defaulted_starts == []


def test_equations_without_return_name_the_component():
    class NoReturn(el.OnePort):
        R = Parameter(1.0, unit="Ohm")

        def equations(self):
            [self.v == self.R * self.i]  # noqa: B018 - the mistake under test

    with pytest.raises(ac.ModelDefinitionError,
                       match=r"NoReturn 'x': equations\(\) of NoReturn returned None.*return"):
        ac.build(one_port_model(NoReturn()))


def test_initial_equations_without_return_name_the_component():
    class NoReturn(el.Capacitor):
        def initial_equations(self):
            self.v == 0.5  # noqa: B015 - the mistake under test

    with pytest.raises(ac.ModelDefinitionError,
                       match=r"initial_equations\(\) of NoReturn returned None"):
        ac.build(one_port_model(NoReturn()))


def test_an_empty_equations_method_adds_nothing():
    """A partial class whose equations() only documents what subclasses add is fine."""

    class Partial(el.OnePort):
        def equations(self):
            """Subclasses give the constitutive law."""

    class Law(Partial):
        R = Parameter(4.0, unit="Ohm")

        def equations(self):
            return [self.v == self.R * self.i]

    assert ac.simulate(one_port_model(Law()), 1.0, n_points=3).final("x.i") == \
        pytest.approx(0.25)


# ---------------------------------------------------------------------------------------
# values and results
# ---------------------------------------------------------------------------------------


class _SqrtOfConstant(ac.Model):
    def __init__(self, k=-1.0):
        super().__init__()
        self.s = bl.Constant(k=k)
        self.b = bl.Sqrt()
        self.connect(self.s.y, self.b.u)


def test_an_output_that_is_not_finite_warns_once_naming_it(tmp_path):
    res = ac.simulate(_SqrtOfConstant(), 1.0, n_points=3)
    assert res.status == "ok"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert res["s.y"][0] == -1.0  # (a finite output: no warning)
    with pytest.warns(ac.SolverWarning, match=r"b\.y is not a finite number at 3 of the 3 "
                      r"output points, first at t = 0 s \(nan\)"):
        assert np.isnan(res["b.y"]).all()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res["b.y"]  # (once per name)
        res.final("b.y")
    # the table route (a saved result holds the whole table): warned again after loading
    loaded = ac.load(res.save(tmp_path / "r.pkl"))
    with pytest.warns(ac.SolverWarning, match=r"b\.y is not a finite number"):
        loaded["b.y"]


def test_finite_outputs_read_without_warning():
    res = ac.simulate(_SqrtOfConstant(k=4.0), 1.0, n_points=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert res.final("b.y") == pytest.approx(2.0)
        res.to_pandas()


# ---------------------------------------------------------------------------------------
# parameters that depend on each other (Limiter, DeadZone, LimPID)
# ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def limited():
    return ac.build(Limited(uMax=1.0))


def test_lower_limit_follows_the_upper_one(limited):
    assert bl.Limiter(uMax=2.0).uMin == -2.0
    lim = bl.Limiter()
    lim.uMax = 3.0
    assert lim.uMin == -3.0
    res = ac.simulate(limited, 1.0, n_points=51, params={"lim.uMax": 0.5})
    assert res["lim.y"].min() == pytest.approx(-0.5)
    assert res["lim.y"].max() == pytest.approx(0.5)
    assert res.final("lim.uMin") == pytest.approx(-0.5)


def test_a_lower_limit_given_stays(tmp_path):
    cm = ac.load(ac.build(Limited(uMax=1.0, uMin=-0.2)).save(tmp_path / "m.pkl"))
    res = ac.simulate(cm, 1.0, n_points=51, params={"lim.uMax": 0.5, "lim.uMin": 0.1})
    assert res["lim.y"].min() == pytest.approx(0.1)
    res = ac.simulate(cm, 1.0, n_points=51, params={"lim.uMax": 0.5})
    assert res["lim.y"].min() == pytest.approx(-0.2)


def test_a_calculated_lower_limit_is_not_a_run_parameter(limited):
    with pytest.raises(ac.ArgumentError, match=r"'lim\.uMin' was not given, so it is "
                       r"calculated from other parameters.*give it when creating"):
        ac.simulate(limited, 1.0, params={"lim.uMin": 0.2})


@pytest.mark.parametrize("params, shown", [
    ({"lim.uMax": -0.5}, r"uMin = 0\.5 is above uMax = -0\.5.*uMin is -uMax while not given"),
])
def test_limits_out_of_order_for_a_run_are_refused(limited, params, shown):
    with pytest.raises(ac.ArgumentError, match=r"Limiter 'lim': " + shown):
        ac.simulate(limited, 1.0, params=params)


def test_limits_out_of_order_are_refused_when_given_or_built():
    cm = ac.build(Limited(uMax=1.0, uMin=-1.0))
    with pytest.raises(ac.ArgumentError, match=r"Limiter 'lim': uMin = 1\.5 is above "
                       r"uMax = 1\.0.*params=\{'lim\.uMin': 1\.5\}"):
        ac.simulate(cm, 1.0, params={"lim.uMin": 1.5})
    with pytest.raises(ac.ModelDefinitionError, match=r"DeadZone: uMin = 2\.0 is above uMax"):
        bl.DeadZone(uMax=1.0, uMin=2.0)
    with pytest.raises(ac.ModelDefinitionError, match=r"LimPID: yMin = 1\.0 is above yMax"):
        bl.LimPID(yMax=-1.0)
    model = Limited()
    model.lim.uMin = 1.5  # (set after the block was created: checked by the build)
    with pytest.raises(ac.ModelDefinitionError, match=r"Limiter 'lim': uMin = 1\.5 is above"):
        ac.build(model)


def test_a_model_with_a_calculated_parameter_is_saved_and_loaded(limited, tmp_path):
    loaded = ac.load(limited.save(tmp_path / "m.pkl"))
    res = ac.simulate(loaded, 1.0, n_points=51, params={"lim.uMax": 0.5})
    assert res["lim.y"].min() == pytest.approx(-0.5)


# ---------------------------------------------------------------------------------------
# start values an initial equation overrides
# ---------------------------------------------------------------------------------------


def test_a_start_value_an_initial_equation_sets_warns_with_the_parameter():
    class Ramp(ac.Model):
        def __init__(self):
            super().__init__()
            self.c = bl.Constant(k=1.0)
            self.i = bl.Integrator()
            self.connect(self.c.y, self.i.u)

    cm = ac.build(Ramp())
    with pytest.warns(ac.ModelWarning, match=r"start\['i\.y'\] is not used: the initial "
                      r"equation i\.y == i\.y_start of i sets i\.y.*params=\{'i\.y_start': 5\}"):
        res = ac.simulate(cm, 1.0, n_points=3, start={"i.y": 5.0})
    assert res["i.y"][0] == 0.0
    res = ac.simulate(cm, 1.0, n_points=3, params={"i.y_start": 5.0})
    assert res["i.y"][0] == pytest.approx(5.0)


# ---------------------------------------------------------------------------------------
# declared ranges: functions of time, values after a run
# ---------------------------------------------------------------------------------------


def test_a_function_of_time_out_of_the_declared_range_at_the_start_is_refused():
    class Cold(ac.Model):
        def __init__(self):
            super().__init__()
            self.a = th.FixedTemperature(T=lambda t: -5.0 + 0 * t)
            self.c = th.HeatCapacitor(C=1.0, T=300.0)
            self.k = th.ThermalConductor(G=1.0)
            self.connect(self.a.port, self.k.port_a)
            self.connect(self.k.port_b, self.c.port)

    with pytest.raises(ac.ModelDefinitionError, match=r"FixedTemperature 'a': parameter 'T'.*"
                       r"function of time.*t = 0 s = -5 K is out of its range: it must be > 0 K"):
        ac.build(Cold())


def test_a_variable_leaving_its_declared_range_warns_when_read():
    class Drained(ac.Model):
        def __init__(self, q):
            super().__init__()
            self.c = th.HeatCapacitor(C=1.0, T=10.0)
            self.q = th.HeatFlow(Q_flow=q)
            self.connect(self.c.port, self.q.port)

    res = ac.simulate(Drained(-100.0), 1.0, n_points=3)
    with pytest.warns(ac.SolverWarning, match=r"c\.T leaves its declared range \(>= 0 K\) at "
                      r"t = 0\.5 s \(-40 K\) and reaches -90 K"):
        assert res.final("c.T") == pytest.approx(-90.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res["c.T"]  # (once per name)
        ac.simulate(Drained(-5.0), 1.0, n_points=3)["c.T"]  # (within the range)


# ---------------------------------------------------------------------------------------
# declarations: edges
# ---------------------------------------------------------------------------------------


def _two_pin(edges):
    return type("Y", (ac.Component,), {
        "p": el.Pin(), "n": el.Pin(), "R": Parameter(1.0, unit="Ohm"),
        "v": Variable(unit="V"), "i": Variable(unit="A"), "edges": edges,
        "equations": lambda s: [s.v == s.p.v - s.n.v, s.i == s.p.i, s.v == s.R * s.i]})


@pytest.mark.parametrize("edges, shown", [
    ([("p", "n")], r"edges is a list of Edge\(initial, final\[, TreePriority\.X\]\).*got "
                   r"tuple \('p', 'n'\) in it"),
    (Edge("p", "n"), r"edges is a list of Edge.*got a single edge: write edges = \[Edge\("),
    ([Edge("p", "n", "neutral")], r"edge .* has the priority 'neutral'; a priority is a "
                                  r"number, one of TreePriority\.ACROSS_SOURCE"),
    ([Edge("p", "n"), Edge("p", "n")], r"edges declares the edge 'p' -> 'n' twice"),
])
def test_edge_declaration_mistakes_name_the_class(edges, shown):
    with pytest.raises(ac.ModelDefinitionError, match=r"^Y: " + shown):
        one_port_model(_two_pin(edges)())


# ---------------------------------------------------------------------------------------
# equations that are none: objects, relations, constants
# ---------------------------------------------------------------------------------------


def _resistor_writing(make):
    class Odd(el.OnePort):
        R = Parameter(1.0, unit="Ohm")

        def equations(self):
            return make(self)

    return Odd()


@pytest.mark.parametrize("make, shown", [
    (lambda s: ["v == R*i"], r"equations\(\) of Odd gave a str \('v == R\*i'\), which is not "
                             r"an equation"),
    (lambda s: [[s.v == s.R * s.i]], r"equations\(\) of Odd gave a list inside the list it "
                                     r"returns .*one flat list"),
    (lambda s: [{"v": s.R * s.i}], r"equations\(\) of Odd gave a dict"),
    (lambda s: [s.v != s.R * s.i], r"the relation .* \(!=\), not an equation"),
    (lambda s: [s.v <= s.R * s.i], r"the relation .* \(<=\), not an equation"),
])
def test_what_is_not_an_equation_is_named(make, shown):
    with pytest.raises(ac.ModelDefinitionError, match=r"^Odd 'x': .*" + shown):
        ac.build(one_port_model(_resistor_writing(make)))


@pytest.mark.parametrize("make, shown", [
    (lambda s: [s.v == s.R * s.i, s.i == s.i], r"\(always true: CasADi folded it to 1, as "
                                               r"x == x or der\(parameter\) == 0\)   \[x\]"),
    (lambda s: [s.v == s.R * s.i, der(s.R) == 0], r"\(always true: CasADi folded it to 1"),
    (lambda s: [s.v == s.R * s.i, s.i - s.i], r"\(a constant, 0 == 0: always true\)   \[x\]"),
])
def test_an_equation_folded_to_a_constant_is_shown_as_what_it_is(make, shown):
    with pytest.raises(ac.StructureError, match=shown) as exc:
        ac.build(one_port_model(_resistor_writing(make)))
    assert "0 == 1" not in str(exc.value)


def test_a_constant_equation_in_a_class_of_many_instances_is_shown():
    """(a class with many instances writes its equations once, as a template)"""

    class Chain(ac.Model):
        def __init__(self):
            super().__init__()
            self.src = el.ConstantVoltage(V=1.0)
            self.g = el.Ground()
            self.rs = [_resistor_writing(lambda s: [s.v == s.R * s.i, s.i == s.i])
                       for _ in range(12)]
            self.connect(self.src.p, self.rs[0].p)
            for a, b in zip(self.rs[:-1], self.rs[1:], strict=True):
                self.connect(a.n, b.p)
            self.connect(self.rs[-1].n, self.src.n, self.g.p)

    with pytest.raises(ac.StructureError, match=r"\(always true: CasADi folded it to 1"):
        ac.build(Chain())


def test_an_unconnected_sensor_says_to_connect_its_port():
    class Lone(ac.Model):
        def __init__(self):
            super().__init__()
            self.t = th.TemperatureSensor()

    with pytest.raises(ac.StructureError, match=r"\(always true: t\.port is connected to "
                       r"nothing, so its Q_flow is 0; connect it\)   \[t\]"):
        ac.build(Lone())


# ---------------------------------------------------------------------------------------
# declarations: ranges and start values
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("decl, shown", [
    (lambda: Variable(start=-5.0, min=0.0, unit="V"),
     r"X: the declared start value of variable 'q' = -5 V is out of its range: it must be "
     r">= 0 V"),
    (lambda: Variable(start=0.5, min=1.0, max=0.0), r"X: variable 'q' declares min = 1\.0 and "
                                                     r"max = 0\.0, an empty range"),
    (lambda: Parameter(1.0, min=2.0, max=0.0), r"X: parameter 'q' declares min = 2\.0 and "
                                                r"max = 0\.0, an empty range"),
])
def test_inconsistent_declarations_are_refused_when_the_class_is_made(decl, shown):
    with pytest.raises(ac.ModelDefinitionError, match=shown):
        type("X", (ac.Component,), {"q": decl()})


def test_a_variable_with_a_range_and_no_start_given_is_accepted():
    type("X", (ac.Component,), {"q": Variable(min=1.0)})  # (the default 0 is a guess)


@pytest.mark.parametrize("value, shown", [
    (None, r"HeatCapacitor: start value of 'T' must be a number .*got None; the declared "
           r"start value is 293\.15"),
    (-5.0, r"HeatCapacitor: start value of 'T' = -5 K is out of its range: it must be >= 0 K"),
    ("-300 degC", r"start value of 'T' = -26\.85 K is out of its range.*given as '-300 degC'"),
    ("20 m", r"HeatCapacitor: start value of 'T' \[K\]"),
])
def test_a_start_value_set_as_an_attribute_is_checked(value, shown):
    c = th.HeatCapacitor(C=1.0)
    with pytest.raises(ac.ModelDefinitionError, match=shown):
        c.T.start = value


def test_a_start_value_set_as_an_attribute_is_converted():
    c = th.HeatCapacitor(C=1.0)
    c.T.start = "20 degC"
    assert c.T.start == pytest.approx(293.15) and not c.T.fixed
    c.T.fixed = True
    c.T.start = ac.guess(300.0)
    assert c.T.start == 300.0 and not c.T.fixed


def test_a_zero_gear_ratio_is_refused():
    with pytest.raises(ac.ModelDefinitionError, match=r"IdealGear: parameter 'ratio' = 0 is "
                       r"excluded: it must be nonzero, of either sign"):
        rot.IdealGear(ratio=0.0)
    assert rot.IdealGear(ratio=-2.0).ratio == -2.0  # (a reversing gear)

    class Geared(ac.Model):
        def __init__(self):
            super().__init__()
            self.j1 = rot.Inertia(J=1.0, phi=0.0, w=1.0)
            self.g = rot.IdealGear(ratio=2.0)
            self.j2 = rot.Inertia(J=1.0)
            self.connect(self.j1.flange_b, self.g.flange_a)
            self.connect(self.g.flange_b, self.j2.flange_a)

    with pytest.raises(ac.ArgumentError, match=r"params\['g\.ratio'\] = 0 is excluded"):
        ac.simulate(Geared(), 1.0, params={"g.ratio": 0.0})


@pytest.mark.parametrize("f, final", [(lambda t: t, 1.0), (lambda t: 2 * t, 2.0)])
def test_a_function_of_time_is_in_the_parameter_unit(f, final):
    """(lambda t: t is the time symbol itself, in seconds elsewhere: not a unit error)"""

    class Ramp(ac.Model):
        def __init__(self):
            super().__init__()
            self.src = el.ConstantVoltage(V=f)
            self.r = el.Resistor(R=1.0)
            self.g = el.Ground()
            self.connect(self.src.p, self.r.p)
            self.connect(self.r.n, self.src.n, self.g.p)

    assert ac.simulate(Ramp(), 1.0, n_points=3).final("r.i") == pytest.approx(final)


# ---------------------------------------------------------------------------------------
# model composition: a class for an instance, typos, dicts, names reused
# ---------------------------------------------------------------------------------------


def test_a_class_assigned_for_a_component_is_named_at_connect():
    class Forgot(ac.Model):
        def __init__(self):
            super().__init__()
            self.src = el.ConstantVoltage(V=1.0)
            self.r = el.Resistor  # (no parentheses)
            self.connect(self.src.p, self.r.p)

    with pytest.raises(ac.ConnectionError_, match=r"Forgot: connect\(\) got r\.p, the port "
                       r"declared by the class Resistor: self\.r holds the class itself.*"
                       r"self\.r = Resistor\(\.\.\.\)"):
        Forgot()


def test_a_typo_of_a_parameter_set_on_a_component_warns():
    r = el.Resistor(R=1.0)
    with pytest.warns(ac.ModelWarning, match=r"Resistor: 'Rr' is not a parameter or variable "
                      r"of Resistor.*did you mean 'R'\?"):
        r.Rr = 5.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r.label = "R1"  # (nothing close: a plain attribute of the user's)
        r.R = 2.0


def test_a_component_in_a_dict_is_said_not_to_be_adopted():
    class InDict(ac.Model):
        def __init__(self):
            super().__init__()
            self.src = el.ConstantVoltage(V=2.0)
            self.g = el.Ground()
            self.rs = {"a": el.Resistor(R=1.0)}
            self.connect(self.src.p, self.rs["a"].p)
            self.connect(self.rs["a"].n, self.src.n, self.g.p)

    with pytest.raises(ac.ConnectionError_, match=r"it is kept in the dict 'rs' \(rs\['a'\]\), "
                       r"and components inside a dict are not made part of the model"):
        ac.build(InDict())


def test_a_component_replaced_after_its_connection_is_named():
    class Reused(ac.Model):
        def __init__(self):
            super().__init__()
            self.src = el.ConstantVoltage(V=2.0)
            self.g = el.Ground()
            self.r = el.Resistor(R=1.0)
            self.connect(self.src.p, self.r.p)
            self.connect(self.r.n, self.src.n, self.g.p)
            self.r = el.Resistor(R=2.0)  # (the same name again)
            self.connect(self.r.p, self.src.p)
            self.connect(self.r.n, self.g.p)

    with pytest.raises(ac.ConnectionError_, match=r"connects r\.p, which is not part of the "
                       r"model: after this connection, another component was assigned to "
                       r"Reused\.r, which replaced it"):
        ac.build(Reused())
