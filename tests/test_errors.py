"""Broken models give errors that name the user's objects (issue 2, issue 3)."""

import pytest
from models import RC

import acausal as ac
from components import electrical as el
from components import rotational as rot
from components import translational as tr


def test_connecting_different_domains_names_both_ports():
    class Bad(ac.Model):
        def __init__(self):
            super().__init__()
            self.r = el.Resistor()
            self.j = rot.Inertia()
            self.connect(self.r.p, self.j.flange_a)

    with pytest.raises(ac.ConnectionError_) as exc:
        Bad()
    msg = str(exc.value)
    assert "r.p" in msg and "j.flange_a" in msg and "electrical" in msg and "rotational" in msg


def test_missing_ground_is_named():
    class Floating(ac.Model):
        def __init__(self):
            super().__init__()
            self.src = el.ConstantVoltage(V=1.0)
            self.r = el.Resistor()
            self.connect(self.src.p, self.r.p)
            self.connect(self.src.n, self.r.n)

    with pytest.raises(ac.TopologyError) as exc:
        ac.build(Floating())
    msg = str(exc.value)
    assert "ground" in msg and "src.p" in msg and "Ground" in msg


def test_too_many_equations_gives_counts_and_components():
    class TwoSources(ac.Model):
        def __init__(self):
            super().__init__()
            self.s1 = el.ConstantVoltage(V=1.0)
            self.s2 = el.ConstantVoltage(V=2.0)
            self.g = el.Ground()
            self.connect(self.s1.p, self.s2.p)
            self.connect(self.s1.n, self.s2.n, self.g.p)

    with pytest.raises(ac.StructureError) as exc:
        ac.build(TwoSources())
    msg = str(exc.value)
    assert "over-determined" in msg
    assert "s1" in msg and "s2" in msg


def test_too_few_equations_gives_counts_and_components():
    class Loose(ac.Component):
        p = el.Pin()
        x = ac.Variable(unit="1")
        y = ac.Variable(unit="1")
        edges = [ac.Edge(ac.DATUM, "p")]

        def equations(self):
            return [self.p.i == 0, self.x == 1.0]  # nothing determines y

    class M(ac.Model):
        def __init__(self):
            super().__init__()
            self.loose = Loose()

    with pytest.raises(ac.BalanceError) as exc:
        ac.build(M())
    msg = str(exc.value)
    assert "equations and" in msg and "unknowns" in msg
    assert "under-determined" in msg and "loose.y" in msg


def test_unconnected_port_has_zero_through_variable():
    class OpenEnd(ac.Model):
        def __init__(self):
            super().__init__()
            self.fixed = tr.Fixed()
            self.spring = tr.Spring(c=10.0)
            self.mass = tr.Mass(m=1.0, s=0.2, v=0.0)
            self.connect(self.fixed.flange, self.spring.flange_a)
            self.connect(self.spring.flange_b, self.mass.flange_a)
            # mass.flange_b is left unconnected: Modelica convention, its force is zero

    res = ac.simulate(OpenEnd(), 1.0)
    assert abs(res["mass.flange_b.f"]).max() == 0.0


def test_unknown_keyword_lists_valid_names():
    with pytest.raises(ac.ModelDefinitionError) as exc:
        el.Resistor(Rx=5.0)
    assert "Rx" in str(exc.value) and "R" in str(exc.value)


def test_parameter_bounds_checked():
    with pytest.raises(ac.ModelDefinitionError, match="minimum"):
        tr.Mass(m=-1.0)


def test_constant_parameter_rejects_function():
    with pytest.raises(ac.ModelDefinitionError, match="function of time"):
        el.Resistor(R=lambda t: t)


def test_unknown_result_name_suggests():
    res = ac.simulate(RC(), 0.1, n_points=3)
    with pytest.raises(KeyError, match="capacitor.v"):
        res["capacitor.vv"]


def test_unknown_parameter_override():
    with pytest.raises(ac.AcausalError, match="unknown parameter"):
        ac.simulate(RC(), 0.1, params={"resistor.Rx": 1.0})


def test_connect_non_port_is_explained():
    class Bad(ac.Model):
        def __init__(self):
            super().__init__()
            self.r = el.Resistor()
            self.g = el.Ground()
            self.connect(self.r, self.g.p)

    with pytest.raises(ac.ConnectionError_, match="name one of its ports"):
        Bad()


def test_python_bool_equation_is_explained():
    class Bad(ac.Component):
        p = el.Pin()
        k = ac.Parameter(1.0, structural=True)
        edges = [ac.Edge(ac.DATUM, "p")]

        def equations(self):
            return [self.k == 1.0]

    class M(ac.Model):
        def __init__(self):
            super().__init__()
            self.b = Bad()

    with pytest.raises(ac.ModelDefinitionError, match="Python bool"):
        ac.build(M())


def test_simulation_failure_returns_partial_result():
    class Blowup(ac.Component):
        """x' = x^2 from x(0) = 1 escapes to infinity at t = 1."""

        p = el.Pin()
        x = ac.Variable(start=1.0, fixed=True)
        edges = [ac.Edge(ac.DATUM, "p")]

        def equations(self):
            return [ac.der(self.x) == self.x**2, self.p.v == 0]

    class M(ac.Model):
        def __init__(self):
            super().__init__()
            self.b = Blowup()

    with pytest.raises(ac.SimulationError) as exc:
        ac.simulate(M(), 2.0, n_points=201)
    err = exc.value
    assert err.partial is not None and 0.99 < err.t_fail <= 1.0
    assert err.partial.t[-1] <= err.t_fail and err.partial.t[-1] >= 0.98
    assert "IDAS failed" in str(err) and "finite-time blow-up" in str(err)
    assert "der(b.x)" in str(err)
    res = ac.simulate(M(), 2.0, n_points=201, raise_on_failure=False)
    assert res.status == "failed" and res.t[-1] < 1.0
