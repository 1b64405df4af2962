"""Over-determined initial conditions: the error says how many of the fixed start values
the model's equations already determine and names a set whose release leaves the rest
solvable. It used to say 'Remove fixed=True from one of them' whatever their number: a
flexible four-bar whose loop holds the torsion of both links over-determines four starts,
and releasing one still failed."""

from __future__ import annotations

import re
import sys
import warnings
from pathlib import Path

import pytest

import acausal as ac
from components import translational as tr

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


class TwoMassChain(ac.Model):
    """Wall - spring - mass - spring - mass, every spring's elongation and every mass's
    position fixed at the start: each position is the wall's plus the elongations, so
    ``n_springs`` conditions are too many."""

    def __init__(self, n: int, s_rel: float = 0.1, length: float = 1.0):
        super().__init__()
        self.wall = tr.Fixed(s0=0.0)
        port = self.wall.flange
        for k in range(n):
            spring = tr.Spring(c=100.0, s_rel0=length, s_rel=length + s_rel)
            mass = tr.Mass(m=1.0, s=(k + 1) * (length + s_rel), v=0.0)
            setattr(self, f"sp{k}", spring)
            setattr(self, f"m{k}", mass)
            self.connect(port, spring.flange_a)
            self.connect(spring.flange_b, mass.flange_a)
            port = mass.flange_b


def test_one_condition_too_many_names_one_to_release():
    with pytest.raises(ac.InitializationError,
                       match=r"sp0\.s_rel = .*m0\.s = .*which already determine one of "
                             r"them\. Remove fixed=True from one of them \(its start value "
                             r"is then a guess\), e\.g\. from m0\.s \(or remove"):
        ac.simulate(TwoMassChain(1), 0.1)


def test_two_conditions_too_many_are_counted_and_the_advice_works():
    with pytest.raises(ac.InitializationError,
                       match=r"already determine 2 of them: releasing one is not enough\. "
                             r"Make 2 of them guesses \(fixed=False\), e\.g\. (\w+\.\w+), "
                             r"(\w+\.\w+) \(or remove") as err:
        ac.simulate(TwoMassChain(2), 0.1)
    named = re.search(r"e\.g\. (\w+)\.(\w+), (\w+)\.(\w+) \(", str(err.value)).groups()
    model = TwoMassChain(2)
    for comp, var in (named[:2], named[2:]):  # the advice taken
        getattr(getattr(model, comp), var).fixed = False
    res = ac.simulate(model, 1.0)
    # started consistent (every spring stretched 0.1 m at rest): the kept conditions hold
    assert res["m1.s"][0] == pytest.approx(2.2, abs=1e-12)
    assert res["sp0.s_rel"][0] == pytest.approx(1.1, abs=1e-12)


def test_a_loop_that_holds_elastic_modes_names_the_vectors():
    """The flexible four-bar with 3 modes per link: the planar loop holds the torsion
    (q_2, qd_2) of both links, four conditions; fixed holds for a whole vector, which the
    message says with the statements to write."""
    if str(EXAMPLES) not in sys.path:
        sys.path.insert(0, str(EXAMPLES))
    import flexible_fourbar as fb

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ac.RedundantConstraintWarning)
        with pytest.raises(ac.InitializationError) as err:
            ac.simulate(fb.build_model(modes=3), fb.T_END / 8)
    msg = str(err.value)
    assert "already determine 4 of them: releasing one is not enough" in msg
    assert "fixed=True/False holds for a whole variable: rocker.q.fixed = False, " \
           "rocker.qd.fixed = False" in msg
