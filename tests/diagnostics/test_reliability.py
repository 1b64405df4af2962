"""Issue 12: units (algebra, values with units, the dimensional check as a pass), the
conditional functions for equations, and model summaries."""

import sys

import numpy as np
import pytest
from models import RC

import acausal as ac
from acausal.units import DIMENSIONLESS, convert, dimension, format_dimension, parse_unit
from components import electrical as el
from components import thermal as th

sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[2] / "benchmarks"))


# ---------------------------------------------------------------------------------------
# the units algebra
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("unit, same_as", [
    ("V", "W/A"), ("Ohm", "V/A"), ("N.m", "J"), ("m/s2", "N/kg"), ("kg.m2", "J.s2"),
    ("1/s", "Hz"), ("N.m.s/rad", "J.s"), ("W/(m2.K)", "kg/(s3.K)"), ("s-1", "Hz"),
    ("N.m/A", "V.s"), ("F", "C/V"), ("H", "Wb/A"), ("S", "1/Ohm"), ("m/s/s", "m/s2"),
    ("J/K", "W.s/K"), ("rad/s", "1/s"), ("kOhm", "Ohm"), ("1", ""),
])
def test_library_unit_strings_have_the_expected_dimensions(unit, same_as):
    assert dimension(unit) == dimension(same_as)


def test_scales_and_offsets():
    assert parse_unit("kOhm").scale == 1e3 and parse_unit("mm").scale == 1e-3
    assert parse_unit("km/h").scale == pytest.approx(1 / 3.6)
    assert convert("1 kOhm", "Ohm") == 1000.0
    assert convert("10 uF", "F") == 1e-5
    assert convert("20 degC", "K") == pytest.approx(293.15)
    assert convert("68 degF", "K") == pytest.approx(293.15)
    assert convert("3000 rpm", "rad/s") == pytest.approx(100 * np.pi)
    assert convert("2.5", "Ohm") == 2.5  # no unit: already in the declared unit
    assert convert("5 mm", "") == 0.005  # undeclared: SI
    assert format_dimension(dimension("N")) == "kg.m/s2 (N)"
    assert format_dimension(DIMENSIONLESS) == "1 (dimensionless)"


def test_values_with_units_at_construction_and_per_run():
    m = RC()
    m.resistor.R = "2 kOhm"
    assert m.resistor.R == 2000.0
    hc = th.HeatCapacitor(C=1.0, T="20 degC")
    assert hc.T.start == pytest.approx(293.15) and hc.T.fixed
    cm = ac.build(m)
    res = ac.simulate(cm, 1.0, n_points=3, params={"resistor.R": "500 Ohm"},
                      start={"capacitor.v": "2 V"})
    assert res.parameters["resistor.R"] == 500.0 and res["capacitor.v"][0] == 2.0


# ---------------------------------------------------------------------------------------
# the units pass
# ---------------------------------------------------------------------------------------


class MixedUp(el.OnePort):
    R = ac.Parameter(1.0, unit="Ohm")

    def equations(self):
        return [self.v == self.R + self.i]


class Chain(ac.Model):
    def __init__(self):
        super().__init__()
        self.source = el.ConstantVoltage(V=1.0)
        self.ground = el.Ground()
        self.parts = [MixedUp() for _ in range(3)]
        prev = self.source.p
        for p in self.parts:
            self.connect(prev, p.p)
            prev = p.n
        self.connect(prev, self.source.n, self.ground.p)


def test_the_units_pass_is_in_the_chain_and_checks_one_instance_per_class():
    names = [p.name for p in ac.PASSES]
    assert names.index("units") == names.index("flatten") + 1
    cm = ac.build(RC())
    assert cm.state.units is not None and cm.state.units.classes == 4
    with pytest.raises(ac.UnitError, match=r"parts\[0\].*checked once for the 3 instances"):
        ac.build(Chain())


def test_the_units_pass_can_be_left_out():
    passes = [p for p in ac.PASSES if p.name != "units"]
    cm = ac.build(Chain(), passes=passes)
    assert cm.state.units is None
    assert ac.simulate(cm, 0.1, n_points=3).status == "ok"


def test_signals_literals_and_undeclared_units_are_not_rejected():
    class Loose(el.OnePort):
        g = ac.Parameter(2.0)  # no unit: unknown, agrees with anything

        def equations(self):
            return [self.i == self.g * self.v + 0.5]  # a literal: unknown too

    m = RC()
    m.source.V = lambda t: 10.0 * np.sin(3 * t)  # sin(3 t): the function has V's unit
    m.add("extra", Loose())
    m.connect(m.extra.p, m.source.p)
    m.connect(m.extra.n, m.ground.p)
    ac.build(m)


def test_units_pass_cost_is_small():
    from _models import MassSpringChain

    cm = ac.build(MassSpringChain(300))
    t = cm.report.timings
    assert t["units"] < 0.1 * sum(t.values())


# ---------------------------------------------------------------------------------------
# conditional functions
# ---------------------------------------------------------------------------------------


class IdealSwitchDiode(el.OnePort):
    """Piecewise-linear diode: R_on when forward biased, R_off otherwise."""

    R_on = ac.Parameter(1.0, unit="Ohm", min=0.0, min_inclusive=False)
    R_off = ac.Parameter(1e6, unit="Ohm", min=0.0, min_inclusive=False)

    def equations(self):
        return [self.i == ac.if_else(self.v > 0, self.v / self.R_on, self.v / self.R_off)]


def test_if_else_in_equations():
    class HalfWave(ac.Model):
        def __init__(self):
            super().__init__()
            self.source = el.SineVoltage(V=1.0, f=1.0)
            self.d = IdealSwitchDiode(R_on=1.0)
            self.load = el.Resistor(R=1.0)
            self.ground = el.Ground()
            self.connect(self.source.p, self.d.p)
            self.connect(self.d.n, self.load.p)
            self.connect(self.load.n, self.source.n, self.ground.p)

    res = ac.simulate(HalfWave(), 1.0, n_points=101, rtol=1e-8)
    s = np.sin(2 * np.pi * res.t)
    expected = np.where(s > 0, s / 2, s / (1e6 + 1))  # divider R_on or R_off with the load
    np.testing.assert_allclose(res["load.i"], expected, atol=1e-6)


def test_functions_accept_numbers_and_symbols():
    assert ac.if_else(True, 1.0, 2.0) == 1.0 and ac.fmin(1, 2) == 1 and ac.fmax(1, 2) == 2
    assert ac.fabs(-3.0) == 3.0 and ac.sign(-2.0) == -1 and ac.sign(0.0) == 0
    import casadi as cs

    x = cs.SX.sym("x")
    f = cs.Function("f", [x], [cs.vertcat(ac.if_else(x > 0, x, -x), ac.fmin(x, 1),
                                          ac.fmax(x, 1), ac.fabs(x), ac.sign(x))])
    np.testing.assert_allclose(np.ravel(f(-2.0)), [2.0, -2.0, 1.0, 2.0, -1.0])


# ---------------------------------------------------------------------------------------
# summaries
# ---------------------------------------------------------------------------------------


def test_concise_repr_of_models_components_and_compiled_models():
    m = RC()
    assert repr(m) == ("<RC: 4 components (source, resistor, capacitor, ground), "
                       "3 connections>")
    assert str(m) == repr(m)
    assert repr(m.resistor) == "<Resistor 'resistor' R=1000 Ohm>"
    cm = ac.build(m)
    text = repr(cm)
    assert len(text) < 200 and "capacitor.v" in text and text.startswith("<CompiledModel RC")


def test_parameters_of_a_model_by_dotted_path():
    m = RC()
    assert m.parameters() == {"source.V": 10.0, "resistor.R": 1000.0, "capacitor.C": 1e-3}
    assert m.resistor.parameters() == {"R": 1000.0}


def test_summary_lists_components_parameters_and_states():
    m = RC()
    text = m.summary()
    assert "RC: 4 components, 3 connections" in text
    assert "resistor" in text and "electrical.Resistor" in text and "R = 1000 Ohm" in text
    assert "v(start) = 0 V fixed" in text
    cm = ac.build(m)
    text = cm.summary()
    assert "States (1):" in text and "capacitor.v = 0 V (fixed start)" in text
    assert "C = 0.001 F" in text and "differential index" in text
