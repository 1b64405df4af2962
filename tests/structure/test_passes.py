"""Unit tests of each compile pass on small hand-built systems (no components involved).

As ModelingToolkit tests its structural passes: the pendulum in Cartesian coordinates is
built directly as equations and unknowns, and each pass is checked on what it must do.
Then the pass list itself: a custom pass added to ``build(passes=...)``, a pass order that
cannot work.
"""

from __future__ import annotations

import casadi as cs
import numpy as np
import pytest

import acausal as ac
from acausal.flatten import FlatEquation
from acausal.state import CompileState, Pass
from acausal.structure import matching
from acausal.structure.blt import Blocks, strong_components
from acausal.structure.causalize import causalize
from acausal.structure.diagnostics import StructureDiagnostics, structural_error
from acausal.structure.dummy import select_states
from acausal.structure.matching import dulmage_mendelsohn, match
from acausal.structure.pantelides import pantelides, pantelides_pass
from acausal.structure.solve import solve_blocks
from acausal.structure.system import EquationSystem
from acausal.symbols import FlatParameter, SymbolTable
from components import electrical as el


def system(build) -> tuple[EquationSystem, SymbolTable]:
    """An EquationSystem from ``build(table) -> [(residual, origin), ...]``."""
    tab = SymbolTable()
    eqs = [FlatEquation(res, origin) for res, origin in build(tab)]
    return EquationSystem.from_lists(tab.t, list(tab.variables), eqs,
                                     list(tab.parameters)), tab


def cartesian_pendulum(tab: SymbolTable):
    """x' = u, y' = v, u' = lam x, v' = lam y - g, x^2 + y^2 = L^2 (index 3)."""
    x, y = tab.new_var("x", start=1.0), tab.new_var("y", start=0.0)
    u, v = tab.new_var("u"), tab.new_var("v")
    lam = tab.new_var("lam")
    g, L = tab.new_parameter("g", 9.81), tab.new_parameter("L", 1.0)
    d = tab.der
    return [(d(x) - u, "kin x"), (d(y) - v, "kin y"), (d(u) - lam * x, "dyn x"),
            (d(v) - (lam * y - g), "dyn y"), (x**2 + y**2 - L**2, "rod")]


def names(sys: EquationSystem, idx) -> set[str]:
    return {sys.variables[j].name for j in idx}


# ----------------------------------------------------------------------------------------
# alias elimination
def test_alias_pass_merges_signed_aliases_and_constants_without_touching_the_flat_system():
    from acausal.flatten import FlatSystem
    from acausal.structure.alias import eliminate_aliases

    tab = SymbolTable()
    a, b = tab.new_var("a"), tab.new_var("b", start=2.0, fixed=True)
    c, d = tab.new_var("c"), tab.new_var("d")
    k = tab.new_parameter("k", 3.0)
    eqs = [FlatEquation(r, o) for r, o in [(a - b, "ab"), (b + c, "bc"), (d - k, "dk"),
                                          (tab.der(c) + c * d, "ode")]]
    fs = FlatSystem(tab.t, list(tab.variables), eqs, list(tab.parameters), {}, None)
    al = eliminate_aliases(fs)
    assert len(al.removed) == 3 and len(al.equations) == 1
    sub = {fs.variables[i].name: v for i, v in al.substitution.items()}
    rep = ({"a", "b", "c"} - {n for n in sub if n in "abc"}).pop()  # one representative
    vals = {"a": 1.0, "b": 1.0, "c": -1.0}  # a = b = -c
    for n, e in sub.items():
        if n in "abc":
            f = cs.Function("f", [fs.variables[fs.index[rep]].sym], [e])
            assert float(f(vals[rep])) == pytest.approx(vals[n])
    assert float(cs.evalf(cs.substitute(sub["d"], k, 3.0))) == 3.0
    # the fixed start of b moved onto the representative, the flat system is unchanged
    assert fs.variables[fs.index["b"]].fixed and not fs.variables[fs.index[rep]].fixed \
        or rep == "b"
    assert al.starts[fs.index[rep]] == (2.0 * (1 if rep in "ab" else -1), True) or rep == "b"


# ----------------------------------------------------------------------------------------
# matching and Dulmage-Mendelsohn
def test_matching_and_dm_parts_of_an_over_and_under_determined_system():
    # equations: e0(a), e1(a), e2(b, c): e0/e1 over-determine a; c or b is free
    inc = np.array([[1, 0, 0], [1, 0, 0], [0, 1, 1]])
    var_of_eq, eq_of_var = match(inc)
    assert (var_of_eq >= 0).sum() == 2  # a maximum matching has two pairs
    dm = dulmage_mendelsohn(inc, var_of_eq, eq_of_var)
    assert dm.over_equations == [0, 1] and dm.over_variables == [0]
    assert dm.under_variables == [1, 2] and dm.under_equations == [2]


def test_pendulum_is_not_matchable_to_highest_derivatives_before_index_reduction():
    sys, _ = system(cartesian_pendulum)
    highest = [j for j in range(sys.n_vars) if sys.var_der[j] < 0]
    var_of_eq, _ = match(sys.incidence_matrix(cols=highest))
    # the rod equation contains no highest derivative (only x, y): unmatched
    assert var_of_eq[4] < 0 and (var_of_eq[:4] >= 0).all()


# ----------------------------------------------------------------------------------------
# Pantelides
def test_pantelides_differentiates_the_rod_twice_and_adds_second_derivatives():
    sys, _ = system(cartesian_pendulum)
    n_eq, n_var = sys.n_eqs, sys.n_vars
    res = pantelides(sys)
    assert res.max_level == 2  # index 3: the constraint is differentiated twice
    # d/dt rod, d2/dt2 rod, and d/dt of the two kinematic equations
    assert len(res.differentiated) == 4 and sys.n_eqs == n_eq + 4
    added = names(sys, range(n_var, sys.n_vars))
    assert added == {"der(der(x))", "der(der(y))"}
    # every most-differentiated equation is matched to a highest derivative now
    assigned = [j for j, i in enumerate(res.assign) if i >= 0]
    top = [i for i in range(sys.n_eqs) if sys.eq_der[i] < 0]
    assert len(top) == 5 and sorted(res.assign[j] for j in assigned) == top
    # the twice differentiated rod equation: 2(x x'' + x'^2 + y y'' + y'^2) = 0
    rod2 = [i for i in res.differentiated if sys.level(i) == 2]
    assert len(rod2) == 1
    f = cs.Function("f", [cs.vertcat(*[v.sym for v in sys.variables])],
                    [sys.equations[rod2[0]].res])
    vals = {v.name: k + 1.0 for k, v in enumerate(sys.variables)}
    x, y = vals["x"], vals["y"]
    xd, yd = vals["der(x)"], vals["der(y)"]
    xdd, ydd = vals["der(der(x))"], vals["der(der(y))"]
    expect = 2 * (x * xdd + xd**2 + y * ydd + yd**2)
    assert float(f(list(vals.values()))) == pytest.approx(expect, rel=1e-14)


def test_pantelides_pass_does_not_touch_its_input():
    sys, _ = system(cartesian_pendulum)
    before = (sys.n_eqs, sys.n_vars, list(sys.var_der), [v.der for v in sys.variables])
    state = CompileState(model=ac.Model()).update(system=sys)
    out = pantelides_pass(state)
    assert out.system is not sys and out.system.n_eqs == sys.n_eqs + 4
    assert (sys.n_eqs, sys.n_vars, list(sys.var_der),
            [v.der for v in sys.variables]) == before


# ----------------------------------------------------------------------------------------
# dummy derivatives
def test_dummy_derivatives_choose_two_states_of_the_pendulum_dynamically():
    sys, tab = system(cartesian_pendulum)
    pantelides(sys)
    start = np.array([v.start for v in sys.variables])
    sel = select_states(sys, start, np.array([p.value for p in sys.parameters]))
    # 2 degrees of freedom: one position and one velocity stay states
    assert len(sel.states) == 2 and sel.dynamic
    chosen = names(sys, sel.states)
    # at x = 1, y = 0 the rod is horizontal: the vertical position and its velocity must
    # be the states, not x (whose derivative the rod equation fixes at 0)
    assert chosen in ({"y", "v"}, {"y", "der(y)"})


# ----------------------------------------------------------------------------------------
# causalisation and block solution
def scalar_chain(tab: SymbolTable):
    """a' = -b; b = 2 a (explicit); c^3 + c = a (implicit, nonlinear); d = c + b"""
    a, b = tab.new_var("a", start=1.0, fixed=True), tab.new_var("b")
    c, d = tab.new_var("c"), tab.new_var("d")
    return [(tab.der(a) + b, "e0"), (b - 2 * a, "e1"), (c**3 + c - a, "e2"), (d - c - b, "e3")]


def test_causalize_orders_blocks_by_dependency_levels():
    sys, _ = system(scalar_chain)
    a = sys.name_index["a"]
    causal = causalize(sys, [a])
    level = {sys.variables[bl.unknowns[0]].name: bl.level for bl in causal.blocks}
    assert level["b"] == 0 and level["c"] == 0  # need only the state a
    assert level["der(a)"] == 1 and level["d"] == 1  # need b (and c)
    assert [len(bl.unknowns) for bl in causal.blocks] == [1, 1, 1, 1]


def test_block_solution_is_explicit_where_linear_and_implicit_elsewhere():
    sys, _ = system(scalar_chain)
    solved = solve_blocks(sys, causalize(sys, [sys.name_index["a"]]))
    # b, der(a) explicit; c from the cubic stays implicit; d = c + b explicit in z = c
    assert set(solved.solved) == {"b", "der(a)", "d"}
    assert solved.z_names == ["c"] and len(solved.alg) == 1
    f = cs.Function("f", [sys.variables[0].sym], [solved.solved["der(a)"]])
    assert float(f(3.0)) == -6.0


# ----------------------------------------------------------------------------------------
# diagnostics
def test_structural_error_carries_the_parts_as_data():
    def build(tab: SymbolTable):
        a, b = tab.new_var("a", origin="src1"), tab.new_var("b", origin="r",
                                                              hint="connect r.n")
        return [(a - 1, "src1"), (a - 2, "src2")] + [(b * 0 + a - a, "r")]

    sys, _ = system(build)
    err = structural_error(sys, [0, 1, 2], [0, 1], StructureDiagnostics())
    over = err.part("over-determined")
    assert over is not None and set(over.components) >= {"src1", "src2"}
    assert "a" in over.unknowns
    text = str(err)
    assert "over-determined" in text and "src2" in text


def test_variable_hint_appears_when_it_is_left_undetermined():
    class Leaky(el.OnePort):
        i_leak = ac.Variable(unit="A", hint="give the leakage current an equation")

        def equations(self):
            return [self.i == 0]

    class M(ac.Model):
        def __init__(self):
            super().__init__()
            self.src = el.ConstantVoltage(V=1.0)
            self.x = Leaky()
            self.gnd = el.Ground()
            self.connect(self.src.p, self.x.p)
            self.connect(self.src.n, self.x.n, self.gnd.p)

    with pytest.raises(ac.BalanceError) as exc:
        ac.build(M())
    under = exc.value.part("under-determined")
    assert under is not None and any("x.i_leak" in u for u in under.unknowns)
    assert "give the leakage current an equation" in str(exc.value)


# ----------------------------------------------------------------------------------------
# the pass list
def rc():
    class RC(ac.Model):
        def __init__(self):
            super().__init__()
            self.src = el.ConstantVoltage(V=10.0)
            self.r = el.Resistor(R=2.0)
            self.c = el.Capacitor(C=0.5, v=0.0)
            self.gnd = el.Ground()
            self.connect(self.src.p, self.r.p)
            self.connect(self.r.n, self.c.p)
            self.connect(self.c.n, self.src.n, self.gnd.p)

    return RC()


def test_a_custom_pass_is_one_function_and_one_list_entry():
    seen: list[int] = []

    def count_equations(state: CompileState) -> CompileState:
        seen.append(len(state.system.equations))
        return state

    def double_resistance(state: CompileState) -> CompileState:
        # a transformation: a pass may return a changed product (here a parameter value)
        params = [FlatParameter(p.name, p.sym, 2 * p.value if p.name == "r.R" else p.value,
                                p.unit) for p in state.system.parameters]
        sys = EquationSystem.from_lists(state.system.t, state.system.variables,
                                        state.system.equations, params)
        return state.update(system=sys)

    names_ = [p.name for p in ac.PASSES]
    k = names_.index("alias") + 1
    passes = (*ac.PASSES[:k], Pass("count", count_equations), Pass("double R",
              double_resistance), *ac.PASSES[k:])
    cm = ac.build(rc(), passes=passes)
    assert seen and seen[0] == cm.report.n_equations
    assert list(cm.report.timings) == [p.name for p in passes]
    res = ac.simulate(cm, 2.0, rtol=1e-10, atol=1e-12)
    tau = 4.0 * 0.5  # R doubled by the custom pass
    np.testing.assert_allclose(res["c.v"], 10 * (1 - np.exp(-res.t / tau)), atol=1e-8)


def test_a_pass_before_its_inputs_reports_the_order():
    passes = [p for p in ac.PASSES if p.name != "flatten"]
    with pytest.raises(ac.PassOrderError, match="flat system"):
        ac.build(rc(), passes=passes)


def test_pass_list_is_the_documented_chain():
    assert [p.name for p in ac.PASSES] == [
        "graph", "flatten", "units", "relations", "alias", "balance", "index reduction",
        "state selection",
        "causalisation", "block solution", "dae"]


def test_start_values_are_overridden_per_run_without_rebuilding():
    cm = ac.build(rc())
    res = ac.simulate(cm, 2.0, start={"c.v": 4.0}, rtol=1e-10, atol=1e-12)
    # v(t) = 10 + (4 - 10) exp(-t / RC), RC = 1 s
    np.testing.assert_allclose(res["c.v"], 10 - 6 * np.exp(-res.t), atol=1e-8)
    assert res.stats.initial_conditions == ["c.v = 4.0 (fixed start)"]
    res0 = ac.simulate(cm, 2.0)  # the model's own start value is untouched
    assert res0["c.v"][0] == 0.0
    with pytest.raises(ac.InitializationError, match=r"'c\.vv' \(did you mean c\.v"):
        ac.simulate(cm, 1.0, start={"c.vv": 1.0})


def loop_chain(tab: SymbolTable):
    """a' = -b; (b, c) an algebraic loop: b + c = a, b - c^3 = 0; d = b + c; e' = d"""
    a = tab.new_var("a", start=1.0, fixed=True)
    e = tab.new_var("e", start=0.0, fixed=True)
    b, c, d = tab.new_var("b"), tab.new_var("c"), tab.new_var("d")
    return [(tab.der(a) + b, "e0"), (b + c - a, "e1"), (b - c**3, "e2"), (d - b - c, "e3"),
            (tab.der(e) - d, "e4")]


def _tarjan(n: int, succ: list[list[int]]) -> list[list[int]]:
    """Tarjan's algorithm as the textbook writes it (recursive; neighbours in order):
    the components in the order it completes them."""
    index: dict[int, int] = {}
    low: dict[int, int] = {}
    stack: list[int] = []
    out: list[list[int]] = []

    def visit(v: int) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in succ[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))

    for v in range(n):
        if v not in index:
            visit(v)
    return out


@pytest.mark.parametrize("search", ["python", "casadi", "scipy"])
def test_strong_components_are_tarjans_in_his_order(monkeypatch, search):
    """The BLT's strongly connected components (the Python search for a small system,
    CasADi's compiled one for a large system, scipy's for a very large one, issue 14; here
    each at every size) are the components of the textbook Tarjan algorithm in the order
    it completes them (so the DAE's block order does not depend on the size), on random
    digraphs; every dependency points to the same or an earlier block; a chain of 200 000
    nodes (deeper than Python's recursion) comes out node by node, dependencies first.
    The Python and scipy searches visit the neighbours in the order given (here random:
    the order matters), CasADi's ascending (its patterns are sorted; causalize gives
    them so): each is compared with Tarjan's search visiting them in that order."""
    monkeypatch.setattr(matching, "ARRAY_GRAPH_MIN", 10**9 if search == "python" else 0)
    monkeypatch.setattr(matching, "SCIPY_GRAPH_MIN", 0 if search == "scipy" else 10**9)
    rng = np.random.default_rng(7)
    for _ in range(400):
        n = int(rng.integers(0, 30))
        succ: list[list[int]] = [[] for _ in range(n)]
        for _ in range(int(rng.integers(0, 3 * n + 1))):
            a, b = (int(x) for x in rng.integers(0, n, 2))
            if b not in succ[a]:
                succ[a].append(b)  # (neighbours in random order: the order matters)
        ptr = np.concatenate(([0], np.cumsum([len(s) for s in succ]))).astype(np.int64)
        dep = np.array([w for s in succ for w in s], dtype=np.int64)
        order, sizes = strong_components(n, ptr, dep)
        comps = [c.tolist() for c in np.split(order, np.cumsum(sizes)[:-1])] if n else []
        visited = [sorted(s) for s in succ] if search == "casadi" else succ
        assert comps == _tarjan(n, visited)
        block = {v: k for k, c in enumerate(comps) for v in c}
        assert all(block[w] <= block[v] for v in range(n) for w in succ[v])
    n = 200_000
    ptr = np.concatenate(([0, 0], np.arange(1, n))).astype(np.int64)  # j needs j - 1
    order, sizes = strong_components(n, ptr, np.arange(n - 1, dtype=np.int64))
    assert order.tolist() == list(range(n)) and (sizes == 1).all()


def test_blocks_table_reads_as_the_blocks_it_holds():
    """The BLT blocks are kept as arrays (acausal.structure.blt.Blocks, issue 14: a large
    model has hundreds of thousands of them): reading them gives each block's equations
    and unknowns (ascending), its level, and by level in block order."""
    sys, _ = system(loop_chain)
    states = [sys.name_index["a"], sys.name_index["e"]]
    causal = causalize(sys, states)
    blocks = causal.blocks
    names = [sorted(sys.variables[j].name for j in bl.unknowns) for bl in blocks]
    assert sorted(names) == [["b", "c"], ["d"], ["der(a)"], ["der(e)"]]
    loop = next(bl for bl in blocks if len(bl.unknowns) == 2)
    assert loop.unknowns == sorted(loop.unknowns) and len(loop.equations) == 2
    assert {sys.equations[i].origin for i in loop.equations} == {"e1", "e2"}
    level = {sys.variables[bl.unknowns[0]].name: bl.level for bl in blocks}
    assert level == {"b": 0, "der(a)": 1, "d": 1, "der(e)": 2}
    assert causal.n_levels == 3
    # the table of the objects is the same table; by level keeps block order
    again = Blocks.of(list(blocks))
    for arr in ("ptr", "equations", "unknowns", "levels"):
        assert getattr(again, arr).tolist() == getattr(blocks, arr).tolist()
    assert [[(b.equations, b.unknowns) for b in lv] for lv in causal.by_level()] == [
        [(b.equations, b.unknowns) for b in blocks if b.level == k] for k in range(3)]
    assert [b.unknowns for b in blocks[1:3]] == [blocks[1].unknowns, blocks[2].unknowns]
    assert blocks[-1].unknowns == blocks[len(blocks) - 1].unknowns  # (as a list reads)
    with pytest.raises(IndexError):
        blocks[len(blocks)]
    assert blocks.sizes().tolist() == [len(b.unknowns) for b in blocks]
    # and the block solution solves the loop implicitly, the rest explicitly
    solved = solve_blocks(sys, causal)
    assert set(solved.solved) == {"der(a)", "d", "der(e)"} and sorted(solved.z_names) == [
        "b", "c"]
