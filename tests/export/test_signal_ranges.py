"""Functions of time given for parameters with a declared range (``Parameter(signal=True,
min=...)``) are checked over the run, as a constant out of range is refused."""

import numpy as np
import pytest

import acausal as ac
from components import thermal as th


class Cooling(ac.Model):
    """A 1000 J/K body at 100 degC losing heat to a 20 degC fluid through ``link``."""

    def __init__(self, element, **kw):
        super().__init__(**kw)
        self.body = th.HeatCapacitor(C=1000.0, T=373.15)
        self.link = element
        self.env = th.FixedTemperature(T=293.15)
        self.connect(self.body.port, self.link.port_a)
        self.connect(self.link.port_b, self.env.port)


def test_a_function_of_time_leaving_its_range_is_refused(tmp_path):
    """Gc = 5 - t W/K is negative after 5 s: a run to 10 s made heat flow from the 20
    degC fluid into the 100 degC body (Q_flow = -400 W at the end) without a word, where
    Gc = -1 is refused. The first sample out of range is named: the output grid (every
    0.02 s) and 1000 samples of the run (every 0.01 s) put it at 5.01 s."""
    from acausal.persist import load, save

    cm = ac.build(Cooling(th.Convection(Gc=lambda t: 5.0 - t)))
    said = (r"Convection 'link': parameter 'Gc', the function of time given for it, at "
            r"t = 5\.01 s: Gc = -0\.01 W/K is out of its range: it must be >= 0 W/K \(the "
            r"run goes from 0 to 10 s\)")
    with pytest.raises(ac.ModelDefinitionError, match=said):
        ac.simulate(cm, 10.0)
    # a loaded model (its component detached; the class is the library's) likewise
    with pytest.raises(ac.ModelDefinitionError, match=said):
        ac.simulate(load(save(cm, tmp_path / "cooling.acm")), 10.0)
    # a linearisation reads it at its t
    with pytest.raises(ac.ModelDefinitionError, match=r"'Gc'.* at t = 6 s: Gc = -1 W/K"):
        ac.export.linearize(cm, [], ["body.T"], t=6.0)
    # a differentiable simulator over its grid, in both of its forms (it ran silently)
    grid = np.linspace(0.0, 10.0, 11)
    for kwargs in ({}, {"params": ["body.C"]}):
        with pytest.raises(ac.ModelDefinitionError, match=r"'Gc'.* at t = 5\.01 s"):
            ac.export.simulator(cm, grid, ["body.T"], **kwargs)
    ac.export.simulator(cm, grid[:6], ["body.T"])  # (to 5 s it stays in the range)


def test_a_function_of_time_inside_its_range_runs():
    """Up to 5 s Gc = 5 - t stays >= 0 (0 at the end, the bound itself): the run goes,
    and matches C T' = -Gc(t) (T - Ta), T - Ta = 80 K exp(-(5 t - t^2/2)/C)."""
    res = ac.simulate(Cooling(th.Convection(Gc=lambda t: 5.0 - t)), 5.0, rtol=1e-10,
                      atol=1e-10)
    t = res.t
    exact = 293.15 + 80.0 * np.exp(-(5.0 * t - t**2 / 2) / 1000.0)
    # rtol 1e-10 of a 373 K state is 3.7e-8 K per step (measured: 2.8e-8 K at most)
    np.testing.assert_allclose(res["body.T"], exact, rtol=0.0, atol=1e-7)


def test_round_off_beyond_an_inclusive_bound_is_accepted():
    """Gc = 0.3 - 0.1 t at t = 3 s is -5.6e-17 W/K in floating point (0.1 * 3 is
    0.30000000000000004): the bound reached, not left."""
    assert 0.3 - 0.1 * 3.0 < 0.0  # (the round-off the check must accept)
    res = ac.simulate(Cooling(th.Convection(Gc=lambda t: 0.3 - 0.1 * t)), 3.0, n_points=4)
    assert res["link.Gc"][-1] == pytest.approx(0.0, abs=1e-15)


def test_an_exclusive_bound_reached_by_a_function_is_refused():
    """FixedTemperature's T > 0 K (exclusive): a ramp that reaches 0 K at 2 s."""
    class Ramp(ac.Model):
        def __init__(self):
            super().__init__()
            self.body = th.HeatCapacitor(C=1000.0, T=293.15)
            self.link = th.ThermalConductor(G=10.0)
            self.env = th.FixedTemperature(T=lambda t: 293.15 * (1.0 - t / 2.0))
            self.connect(self.body.port, self.link.port_a)
            self.connect(self.link.port_b, self.env.port)

    with pytest.raises(ac.ModelDefinitionError,
                       match=r"FixedTemperature 'env': parameter 'T'.* at t = 2 s: T = 0 K "
                             r"is out of its range: it must be > 0 K"):
        ac.simulate(Ramp(), 4.0, n_points=3)  # (2 s: a point of the grid, T = 0 exactly)
    ac.simulate(Ramp(), 1.9)  # (above 0 K up to there)
