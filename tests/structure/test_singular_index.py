"""Index reduction of a structurally singular system: refused before anything is
differentiated, not differentiated without end.

Pantelides' algorithm terminates if and only if the equations can be matched one to one
with the unknowns where a variable and its derivatives count as one (Pryce 2001). Without
that matching, every differentiation of the over-determined part asks for another: a
locked kinematic loop with a driver filled gigabytes with ever larger derivatives
(``tests/multibody/test_mb_overconstrained.py``)."""

from __future__ import annotations

import casadi as cs
import pytest

import acausal as ac
from acausal.domain_passes import StateCoordinates
from acausal.flatten import FlatEquation
from acausal.structure.diagnostics import check_nonsingular
from acausal.structure.pantelides import pantelides
from acausal.structure.system import EquationSystem
from acausal.symbols import SymbolTable


def system(rows) -> EquationSystem:
    tab = SymbolTable()
    eqs = [FlatEquation(*row) for row in rows(tab)]
    return EquationSystem.from_lists(tab.t, list(tab.variables), eqs, list(tab.parameters))


def driven_twice(tab: SymbolTable):
    """A point on a rod of length L whose x and y are both prescribed: the rod and the
    two drivers fix two coordinates three times, and the multiplier appears nowhere
    (5 equations, 5 unknowns, structurally singular)."""
    x, y = tab.new_var("x", start=1.0), tab.new_var("y")
    u, v = tab.new_var("u"), tab.new_var("v")
    tab.new_var("lam")  # (in no equation)
    d, t = tab.der, tab.t
    return [(d(x) - u, "kin x"), (d(y) - v, "kin y"), (x**2 + y**2 - 1.0, "rod"),
            (x - cs.cos(t), "drive x"), (y - cs.sin(t), "drive y")]


def test_pantelides_refuses_a_singular_system_before_differentiating_anything():
    sys = system(driven_twice)
    n_eq, n_var = sys.n_eqs, sys.n_vars
    with pytest.raises(ac.SingularityError) as exc:
        pantelides(sys)
    # (it used to differentiate the part up to its level limit, n_var + 1 times, and
    # name those derivatives: d/dt[d/dt[...[x - cos(t)]...]])
    assert (sys.n_eqs, sys.n_vars) == (n_eq, n_var)
    over = exc.value.part("over-determined")
    assert over is not None
    assert sorted(e.rsplit("[", 1)[1].rstrip("]") for e in over.equations) == [
        "drive x", "drive y", "rod"]
    assert not any("d/dt" in e for e in over.equations)
    under = exc.value.part("under-determined")
    assert under is not None and under.unknowns == ["lam"]


def implicit_coordinates(tab: SymbolTable):
    """der(x) = y, x + z = 1, z = 2, the second marked with the state coordinate x (its
    incidence then leaves x out, as the mechanism's equations of motion do): regular,
    but only with x in that equation (z is needed by the third)."""
    x, y, z = tab.new_var("x"), tab.new_var("y"), tab.new_var("z")
    coords = StateCoordinates(frozenset({"x"}))
    return [(tab.der(x) - y, "kin"), (x + z - 1.0, "marked", "", None, None, coords),
            (z - 2.0, "fix z")]


def test_implicit_incidence_is_formed_before_a_system_is_called_singular():
    sys = system(implicit_coordinates)
    assert sys.implicit  # (the marked row lists z only)
    check_nonsingular(sys)  # no error: with x, the marked row has its own unknown
    res = pantelides(sys)  # index 2: the marked row and z = 2 are differentiated
    assert res.max_level == 1 and len(res.differentiated) == 2
