"""Alias elimination on hand-built flat systems: which equations are trivial, what the
eliminated unknowns become, and that the tables the pass hands on (the stacked residuals,
the incidence, the unknowns' column) are the ones the equation system would form itself.

The classification is by the shape of the expression tree (``a``, ``a - b``, ``a + b`` of
possibly negated unknowns, parameters and constants, or the negation of one of these);
the incidence of the stacked
residuals only preselects the rows with one or two unknowns and no derivative.
"""

from __future__ import annotations

import pickle

import casadi as cs
import pytest

import acausal as ac
from acausal.flatten import FlatEquation, FlatSystem
from acausal.structure.alias import diagnostics, eliminate_aliases, equation_system
from acausal.structure.diagnostics import StructureDiagnostics
from acausal.structure.system import EquationSystem, flat_columns
from acausal.symbols import SymbolTable


def flat(build) -> FlatSystem:
    """A flat system of ``build(table) -> [residual, ...]`` (one equation per residual)."""
    tab = SymbolTable()
    eqs = [FlatEquation(r, f"e{i}") for i, r in enumerate(build(tab))]
    return FlatSystem(tab.t, list(tab.variables), eqs, list(tab.parameters), {}, None)


def outcome(fs: FlatSystem) -> tuple[list[str], dict[str, str]]:
    """(origins of the equations removed, eliminated name -> its expression as text)."""
    al = eliminate_aliases(fs)
    return ([e.origin for e in al.removed],
            {fs.variables[k].name: str(v) for k, v in al.substitution.items()})


def two_vars(tab: SymbolTable):
    return tab.new_var("x"), tab.new_var("y"), tab.new_parameter("p", 2.0)


@pytest.mark.parametrize("form, expected", [
    (lambda x, y, p: x - y, {"y": "x"}),          # x = y (the first named stays)
    (lambda x, y, p: x + y, {"y": "(-x)"}),       # x = -y
    (lambda x, y, p: -x + y, {"y": "x"}),         # (CasADi writes it y - x)
    (lambda x, y, p: x - p, {"x": "p"}),          # a parameter
    (lambda x, y, p: p + x, {"x": "(-p)"}),
    (lambda x, y, p: -x, {"x": "0"}),             # a negated unknown alone
    (lambda x, y, p: x - 2.5, {"x": "2.5"}),      # a constant
    (lambda x, y, p: 3 + x, {"x": "-3"}),
    (lambda x, y, p: -x - y, {"y": "(-x)"}),      # CasADi's -(x + y): x = -y
    (lambda x, y, p: -x - p, {"x": "(-p)"}),      # -(x + p)
    (lambda x, y, p: -(x - y), {"y": "x"}),       # a negated difference
])
def test_each_alias_form_is_eliminated(form, expected):
    fs = flat(lambda tab: [form(*two_vars(tab)), tab.der(tab.variables[0].sym)
                           - tab.variables[1].sym * tab.variables[0].sym])
    removed, sub = outcome(fs)
    assert removed == ["e0"]
    assert {k: v for k, v in sub.items() if not k.startswith("der(")} == expected


@pytest.mark.parametrize("form, expected", [
    (lambda x, y: x - y, {"y": "x"}), (lambda x, y: y - x, {"x": "y"}),
    (lambda x, y: x + y, {"y": "(-x)"}), (lambda x, y: y + x, {"y": "(-x)"}),
    (lambda x, y: -y - x, {"y": "(-x)"})])
def test_on_a_tie_the_first_unknown_of_the_equation_stays(form, expected):
    # x and y rank alike (no derivative, not fixed, names as long): the order written
    # decides a difference; a sum, which CasADi compares in either order, keeps the
    # unknown declared first
    removed, sub = outcome(flat(lambda tab: [form(tab.new_var("x"), tab.new_var("y"))]))
    assert sub == expected and removed == (["e0"] if expected else [])


@pytest.mark.parametrize("form", [
    lambda x, y, p: x - 2 * y,        # a coefficient other than +-1
    lambda x, y, p: x - (y + p),      # an alias plus an offset
    lambda x, y, p: x - y * y,        # nonlinear
    lambda x, y, p: -(x + 2 * y),     # a negated look-alike
    lambda x, y, p: x - (p + 1),      # an expression of parameters, not a leaf
    lambda x, y, p: x - cs.sin(p),
    lambda x, y, p: x * p,
])
def test_look_alikes_are_not_aliases(form):
    fs = flat(lambda tab: [form(*two_vars(tab))])
    assert outcome(fs) == ([], {})


def test_time_and_derivatives_are_never_eliminated():
    def build(tab):
        x, y = tab.new_var("x"), tab.new_var("y")
        return [x - tab.t, tab.der(x) - y, tab.der(y) - 1.0]
    assert outcome(flat(build)) == ([], {})


def test_an_alias_appearing_after_substitution_is_found_and_the_flat_system_kept():
    def build(tab):
        a, b, c, d = (tab.new_var(n) for n in "abcd")
        # after a = b, the second row is c - (d + 0) = c - d: an alias found next round
        return [a - b, c - (d + (a - b)), tab.der(c) + c * d + a]
    fs = flat(build)
    before = [str(e.res) for e in fs.equations]
    al = eliminate_aliases(fs)
    assert [e.origin for e in al.removed] == ["e0", "e1"]
    assert {fs.variables[k].name for k in al.substitution} == {"b", "d"}
    assert [str(e.res) for e in al.equations] == ["((der(c)+sq(c))+a)"]
    assert [str(e.res) for e in fs.equations] == before  # the flat system is left as it is
    assert str(al.residuals) == "((der(c)+sq(c))+a)"


def test_a_redundant_alias_is_kept_for_the_balance_check():
    def build(tab):
        a, b = tab.new_var("a"), tab.new_var("b")
        return [a - b, b - a, tab.der(a) + a]
    al = eliminate_aliases(flat(build))
    assert [e.origin for e in al.removed] == ["e0"]
    assert [str(e.res) for e in al.equations] == ["0", "(der(a)+a)"]


def test_conflicting_fixed_starts_name_both_variables():
    def build(tab):
        a = tab.new_var("a", start=1.0, fixed=True)
        b = tab.new_var("b", start=2.0, fixed=True)
        return [a + b, tab.der(a) + a]
    with pytest.raises(ac.StartValueConflict, match=r"a \(start=1.0, fixed\) and "
                       r"b \(start=2.0, fixed\) are the same quantity up to sign"):
        eliminate_aliases(flat(build))


def incidence_alone(sys: EquationSystem) -> EquationSystem:
    """The same lists, the incidence and columns formed by the system itself."""
    return EquationSystem.from_lists(sys.t, sys.variables, sys.equations, sys.parameters)


@pytest.mark.parametrize("model", ["msd", "rc", "amp", "bridge", "links", "pendulum"])
def test_the_tables_handed_on_are_those_the_system_forms(model):
    import _models as bm
    from models import pendulum

    m = {"msd": lambda: bm.MassSpringChain(6), "rc": lambda: bm.RCLadder(5),
         "amp": bm.CommonEmitterAmplifier, "bridge": bm.DiodeBridge,
         "links": lambda: bm.LinkChain(3), "pendulum": lambda: pendulum(30.0)}[model]()
    fs = ac.build(m).state.flat
    al = eliminate_aliases(fs)
    assert al.incidence is not None and al.symbols is not None
    sys = equation_system(fs, al)
    alone = incidence_alone(sys)
    assert sys.incidence == alone.incidence and sys.implicit == alone.implicit
    assert str(sys.symbols()) == str(alone.symbols())
    assert str(sys.residuals()) == str(alone.residuals())
    for e, r in zip(sys.equations, cs.vertsplit(sys.residuals()), strict=True):
        assert cs.is_equal(e.res, r)  # the same nodes, not copies
    # the diagnostics from the representatives are those read off the expressions
    ref = StructureDiagnostics.from_aliases(fs, al.substitution)
    diag = diagnostics(fs, al)
    assert diag == ref
    saved = pickle.loads(pickle.dumps(diag))  # (formed on first use, saved as dicts)
    assert type(saved.aliases) is dict and saved == ref
    # the columns kept with the flat system are its lists stacked
    R, X = flat_columns(fs)
    assert R.numel() == len(fs.equations) and X.numel() == len(fs.variables)


@pytest.mark.parametrize("given", [True, False])
def test_the_flat_columns_are_taken_from_flatten_when_it_formed_them(given):
    def build(tab):
        a, b, c = (tab.new_var(n) for n in "abc")
        return [a - b, -b - c, tab.der(a) + a * c]
    fs = flat(build)
    fs.__dict__.pop("_columns", None)
    R0 = cs.vertcat(*[e.res for e in fs.equations])
    X0 = cs.vertcat(*[v.sym for v in fs.variables])
    if given:  # what the flatten pass hands on (attributes it may or may not set)
        fs.res_column, fs.var_column = R0, X0
    R, X = flat_columns(fs)
    assert (R is R0 and X is X0) == given  # taken as they are, not stacked again
    assert str(R) == str(R0) and str(X) == str(X0)
    al = eliminate_aliases(fs)
    assert [e.origin for e in al.removed] == ["e0", "e1"]
    assert {fs.variables[k].name: str(v) for k, v in al.substitution.items()
            if k < 3} == {"b": "a", "c": "(-a)"}


def _full_incidence(monkeypatch):
    """Alias elimination with every equation's full incidence (no coordinate left out)."""
    from acausal.structure import alias

    monkeypatch.setattr(alias, "_hidden", lambda fs: [])


@pytest.mark.parametrize("model", ["links", "rope", "fourbar", "slider"])
def test_marked_equations_leave_their_coordinates_out_and_eliminate_the_same(model,
                                                                              monkeypatch):
    """A mechanism's equations of motion are marked with its state coordinates
    (:class:`acausal.domain_passes.StateCoordinates`): the alias pass leaves those with a
    derivative out of their incidence, as the structure stage does (a chain of N links
    would have N^2 entries: 8 of the 15 s of building 1 000 links). It eliminates exactly
    what the full incidence eliminates, into the same residuals."""
    import _models as bm
    import mb_slider_crank
    from bench_multibody import PendulumChain
    from mb_models import FourBar

    m = {"links": lambda: bm.LinkChain(40), "rope": lambda: PendulumChain(10),
         "fourbar": FourBar, "slider": mb_slider_crank.build_model}[model]()
    fs = ac.build(m).state.flat
    assert any(e.coordinates is not None for e in fs.equations)
    al = eliminate_aliases(fs)
    with monkeypatch.context() as mp:
        _full_incidence(mp)
        full = eliminate_aliases(fs)
    assert [e.origin for e in al.removed] == [e.origin for e in full.removed]
    assert {k: str(v) for k, v in al.substitution.items()} == \
        {k: str(v) for k, v in full.substitution.items()}
    assert str(al.residuals) == str(full.residuals) and al.starts == full.starts
    assert len(al.incidence[1]) < len(full.incidence[1])
    if model == "links":  # (N = 40: the full incidence has the N^2 entries, this one ~N)
        assert len(full.incidence[1]) > 40 * 40 * 3 and len(al.incidence[1]) < 40 * 15


def test_a_hidden_coordinate_eliminated_is_substituted_in_its_marked_equations(monkeypatch):
    """Two coordinates the same by an alias equation, one of them hidden in a marked
    equation's incidence: eliminating it rewrites that equation too (its incidence does
    not show the coordinate; its group is substituted again as a whole)."""
    from acausal.domain_passes import StateCoordinates

    coords = StateCoordinates(frozenset({"q2"}))

    def build(tab):
        q1, q2, u = tab.new_var("q1"), tab.new_var("q2"), tab.new_var("u")
        return [tab.der(q1) - u * q1, q1 - q2, tab.der(q2) - q2 * q2 - u, u - 2 * q1 * q2]

    outcomes = []
    for hide in (True, False):
        fs = flat(build)
        fs.equations[2].coordinates = coords
        fs.equations[3].coordinates = coords
        with monkeypatch.context() as mp:
            if not hide:
                _full_incidence(mp)
            al = eliminate_aliases(fs)
        X = cs.vertcat(*[fs.variables[k].sym for k in al.substitution])
        assert not any(cs.depends_on(e.res, X) for e in al.equations)  # nothing left over
        outcomes.append(({fs.variables[k].name: str(v) for k, v in al.substitution.items()},
                         str(al.residuals)))
    assert outcomes[0] == outcomes[1]
    assert "q2" in outcomes[0][0] or "q1" in outcomes[0][0]


def _own_incidence(al) -> list[list[int]]:
    """Each kept row's unknowns, from its residual (CasADi's structural Jacobian)."""
    ptr, col = cs.jacobian_sparsity(al.residuals, al.symbols).get_crs()
    return [list(col[ptr[i]:ptr[i + 1]]) for i in range(len(ptr) - 1)]


def test_the_incidence_after_a_substitution_is_that_of_the_substituted_rows():
    """A substituted row's incidence is derived from the one before (each unknown replaced
    by what it became) where that is exact, and formed from the expression where a term
    may cancel: two unknowns of the row made one, an unknown made a constant."""
    def build(tab):
        a, b, c, d, e, f, g, h = (tab.new_var(n) for n in "abcdefgh")
        p = tab.new_parameter("p", 2.0)
        return [a - b,                  # b = a
                g,                      # g = 0
                h - p,                  # h = p
                c - d * (a - b) - e,    # (a - b) is 0: c = e found next round
                tab.der(d) - d * e + a * f,           # a plain renaming: b's row
                tab.der(e) - e * f * g - c,           # f * 0 goes
                tab.der(f) - f * (h - p) - a * d,     # (p - p) is 0: f goes
                tab.der(a) - b * (f + 1) - e,         # b renamed, kept
                ]
    fs = flat(build)
    al = eliminate_aliases(fs)
    assert [e.origin for e in al.removed] == ["e0", "e1", "e2", "e3"]
    ptr, col = al.incidence
    inc = [list(col[ptr[i]:ptr[i + 1]]) for i in range(len(ptr) - 1)]
    assert inc == _own_incidence(al)
    names = [[fs.variables[j].name for j in row] for row in inc]
    assert names == [["a", "d", "e", "f", "der(d)"], ["e", "der(e)"],
                     ["a", "d", "der(f)"], ["a", "e", "f", "der(a)"]]
    assert [str(e.res) for e in al.equations] == [
        "((der(d)-(d*e))+(a*f))", "(der(e)-e)", "(der(f)-(a*d))", "((der(a)-(a*(f+1)))-e)"]
