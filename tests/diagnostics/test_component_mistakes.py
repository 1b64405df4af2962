"""Mistakes in writing components and reading their results (a user trial): each is an
error that names the component and says what to do, or a warning where the library
cannot stand behind a result, never a silently wrong model.

Sections: equations() and initial_equations(), declarations, values and results.
"""

import pytest

import acausal as ac
from acausal import Parameter
from components import electrical as el


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

