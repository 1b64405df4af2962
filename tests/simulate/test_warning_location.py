"""Where the warnings of a run point: at the user's line that called the library (as
Python's own warnings do), whichever path inside the library raised them. A counted
``stacklevel`` pointed into acausal/simulate.py for the backends' fallbacks (their call
depth differs between a static and a dynamic state choice), and for the Zeno stop; and a
backend that switched its method said so in the first run of a compiled model only."""

from __future__ import annotations

import warnings

import casadi as cs
import numpy as np
import pytest
from _models import RCLadder

import acausal as ac
from components import blocks


def _caught(run) -> list[warnings.WarningMessage]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run()
    return [w for w in caught if issubclass(w.category, ac.AcausalWarning)]


def _here(caught: list[warnings.WarningMessage], category: type[Warning]) -> None:
    mine = [w for w in caught if issubclass(w.category, category)]
    assert mine, [str(w.message) for w in caught]
    assert all(w.filename == __file__ for w in mine), [(w.filename, w.lineno) for w in mine]


class Ball(ac.Model):
    h = ac.Variable(start=1.0, fixed=True)
    v = ac.Variable(start=0.0, fixed=True)

    def equations(self):
        return [ac.der(self.h) == self.v, ac.der(self.v) == -9.81,
                ac.when(self.h < 0, ac.reinit(self.v, -0.8 * ac.pre(self.v)))]


def test_a_zeno_stop_points_at_the_call():
    caught = _caught(lambda: ac.simulate(Ball(), 5.0))
    _here(caught, ac.SolverWarning)


def test_an_explicit_method_switching_points_at_the_call_and_says_so_at_every_run():
    """dop853 meets the ladder's stiffness and continues with CVODES BDF: the result is
    from another method than asked for, in every run of the compiled model (the backend
    is kept on the model between runs, and its note that it had warned was too)."""
    cm = ac.build(RCLadder())
    for _ in range(2):
        caught = _caught(lambda: ac.simulate(cm, 1.0, n_points=11, rtol=1e-8, atol=1e-10,
                                             solver="dop853"))
        _here(caught, ac.SolverWarning)
        assert any("stiffness detected" in str(w.message) for w in caught)


class Hold(ac.Model):
    def __init__(self):
        super().__init__()
        self.integ = blocks.Integrator(k=1.0, y_start=2.0)
        self.src = blocks.Constant(k=1.0)
        self.connect(self.src.y, self.integ.u)


@pytest.mark.parametrize("form", ["model", "built"])
def test_a_start_value_an_initial_equation_overrides_points_at_the_call(form):
    m = Hold()
    caught = _caught(lambda: ac.simulate(m if form == "model" else ac.build(m), 0.1,
                                         start={"integ.y": 5.0}))
    _here(caught, ac.ModelWarning)
    assert "integ.y_start" in str(caught[0].message)


def test_the_unresolved_warning_points_at_the_call():
    class Fast(ac.Model):
        x = ac.Variable(start=1.0, fixed=True)
        v = ac.Variable(start=0.0, fixed=True)

        def equations(self):
            return [ac.der(self.x) == self.v, ac.der(self.v) == -(2 * np.pi * 10) ** 2 * self.x]

    caught = _caught(lambda: ac.simulate(Fast(), 1.0, n_points=5))
    _here(caught, ac.UnresolvedWarning)


def test_build_warnings_point_at_the_call_in_both_forms():
    """The build's warnings (here the redundant closure rows of a planar four-bar and a
    floor of a variable) had counted stacklevels: from simulate(model, ...) they pointed
    at acausal/simulate.py."""
    from mb_models import FourBar

    class Floored(ac.Model):
        x = ac.Variable(start=0.0, fixed=True)

        def equations(self):
            return [ac.der(self.x) == 1 + cs.floor(4 * self.x)]

    for run in (lambda: ac.simulate(FourBar(), 0.01), lambda: ac.build(FourBar())):
        _here(_caught(run), ac.RedundantConstraintWarning)
    _here(_caught(lambda: ac.simulate(Floored(), 0.1)), ac.ModelWarning)
