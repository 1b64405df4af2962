"""The columns the passes keep instead of per-scalar CasADi objects (issue 14, item 3).

A scalar read from Python is a CasADi object of about 250 bytes; the passes keep the
residuals, symbols and substitutions of a large model as columns and make scalars only
where they read one. Each column must hold, row by row, the very expressions the scalars
would be (the same CasADi nodes, compared by ``element_hash``), and ``fastsx.stack``
must give what ``vertcat`` gives.
"""

from __future__ import annotations

import casadi as cs
import numpy as np
import pytest
from models import ForcedChain

import acausal as ac
from acausal import fastsx, templates
from acausal.symbols import LazyColumn


def _hashes(col: cs.SX) -> list[int]:
    return [e.element_hash() for e in cs.vertsplit(col)]


def _chain(n: int = 8) -> ForcedChain:
    """Masses of 1 + k kg (template groups), a force sin(t) (per instance)."""
    return ForcedChain(n, mass=lambda k: 1.0 + k, force=lambda t: np.sin(t))


@pytest.mark.parametrize("pieces", [
    lambda a, b: (a, b, 2 * a),                       # long dense columns
    lambda a, b: (cs.SX(0, 1), a, cs.SX(0, 1), b),    # empty pieces
    lambda a, b: (a, cs.SX(3, 1), b),                 # a sparse piece: vertcat's way
    lambda a, b: (a[:3], b[:2]),                      # few rows: vertcat's way
    lambda a, b: (a, cs.SX(2.5), b[0]),               # scalars among columns
    lambda a, b: (a, *[b[k % 40] * k for k in range(300)]),  # many pieces: vertcat's way
])
def test_stack_is_vertcat(pieces):
    a, b = cs.SX.sym("a", 300), cs.SX.sym("b", 40)
    ps = pieces(a, b)
    got, want = fastsx.stack(*ps), cs.vertcat(*ps)
    assert got.shape == want.shape
    assert got.sparsity() == want.sparsity()
    assert _hashes(cs.densify(got)) == _hashes(cs.densify(want))


def test_stack_refuses_what_vertcat_refuses():
    with pytest.raises(RuntimeError, match="columns"):
        fastsx.stack(cs.SX.sym("a", 300), cs.SX.sym("m", 2, 2))


def _template(body):
    """A template of the scalar inputs x, y, z (per member) and the time t (shared)."""
    x, y, z, t = (cs.SX.sym(s) for s in "xyzt")
    out = cs.vertcat(*body(x, y, z, t))
    return cs.Function("f", [x, y, z, t], [out]), out


@pytest.mark.parametrize("body", [
    lambda x, y, z, t: [x - y, 3.7 * x + z, -y],                    # constants, unary
    lambda x, y, z, t: [cs.sin(x) * t - z, x * x - 2 * y, x / 3.7],  # shared input
    lambda x, y, z, t: [x, cs.if_else(x < y, z, 1.5 * y) - t],     # an input as output
    lambda x, y, z, t: [x - x + y, (x + y) - y, z * 1],            # CasADi's simplifications
])
def test_column_evaluation_makes_the_mapped_nodes(body):
    f, out = _template(body)
    program = fastsx.column_program(f, out, [False, False, False, True])
    assert program is not None
    n = 50
    x, y, z = cs.SX.sym("X", n), cs.SX.sym("Y", n), cs.SX.sym("Z", n)
    y = cs.vertcat(y[:10], x[10:20], cs.SX.zeros(10), y[30:])  # shared nodes, zeros
    t = cs.SX.sym("time")
    got = fastsx.run_columns(program, [x, y, z, t], n, out.numel())
    want = cs.vec(cs.densify(f.map(n)(x, y, z, cs.repmat(t, 1, n))))
    assert str(got) == str(want)
    inputs = cs.symvar(cs.vertcat(want, got))
    assert (cs.Function("a", inputs, [got]).serialize()
            == cs.Function("a", inputs, [want]).serialize())
    # (the template's constants are its own nodes in both)
    consts = {e.element_hash() for e in cs.vertsplit(want) if e.is_constant()}
    assert consts == {e.element_hash() for e in cs.vertsplit(got) if e.is_constant()}


@pytest.mark.parametrize("body", [
    lambda x, y, z, t: [x - 2 * t],             # an operation on shared nodes alone
    lambda x, y, z, t: [t, x],                  # a shared output
])
def test_column_evaluation_leaves_to_the_map_what_it_cannot_repeat(body):
    f, out = _template(body)
    assert fastsx.column_program(f, out, [False, False, False, True]) is None


def test_a_lazy_column_reads_alone_then_all_at_once():
    col = cs.SX.sym("x", 3 * LazyColumn.ALONE)
    rows = LazyColumn(col)
    want = _hashes(col)
    got = [rows[k].element_hash() for k in range(LazyColumn.ALONE)]
    assert rows.items is None  # (the first reads took their row alone)
    got += [rows[k].element_hash() for k in range(LazyColumn.ALONE, len(want))]
    assert rows.items is not None and got == want


def test_a_groups_equations_are_rows_of_its_columns_until_read(monkeypatch):
    """A build leaves the templated equations as rows (no scalar made for them), and a row
    read gives the residual of the stacked column and the equation as written."""
    monkeypatch.setattr(templates, "MIN_GROUP", 2)
    cm = ac.build(_chain())
    eqs = cm.flat.equations
    lazy = [e for e in eqs if type(e._res) is LazyColumn]
    origins = {e.origin.split("[")[0] for e in lazy}
    assert origins == {"masses", "springs"}  # the force f(t) is written per instance
    assert all(e._res.items is None for e in lazy)  # no scalar made for all
    res = _hashes(cm.flat.res_column)
    assert [e.res.element_hash() for e in eqs] == res
    # the equations as written, as the per-instance path labels them
    monkeypatch.setattr(templates, "MIN_GROUP", 10**9)
    reference = ac.build(_chain()).flat.equations
    assert [e.text() for e in eqs] == [e.text() for e in reference]
    assert [e.origin for e in eqs] == [e.origin for e in reference]


def test_the_columns_handed_on_hold_the_scalars(monkeypatch):
    """The parameters' column, the residuals extended by index reduction's derived
    equations and the alias substitution's column are, row by row, the scalars they stand
    for."""
    monkeypatch.setattr(templates, "MIN_GROUP", 2)
    cm = ac.build(_chain())
    fs, sys, al = cm.flat, cm.system, cm.state.aliases
    assert fs.par_column is not None
    assert _hashes(fs.par_column) == [p.sym.element_hash() for p in fs.parameters]
    assert _hashes(sys.parameter_symbols()) == [p.sym.element_hash() for p in sys.parameters]
    derived = [k for k, i in enumerate(sys.eq_int) if i >= 0]
    assert derived  # (the masses' accelerations: one derived equation each)
    assert _hashes(sys.residuals()) == [e.res.element_hash() for e in sys.equations]
    assert len(al.substitution) > 0
    assert _hashes(al.substitution.column) == [
        e.element_hash() for e in al.substitution.values()]


def test_a_groups_unknowns_and_parameters_are_rows_until_read(monkeypatch):
    """The symbols of a group's unknowns and parameters are rows of the group's columns,
    made when read; read, they are the flat columns' rows and the outputs' symbols."""
    monkeypatch.setattr(templates, "MIN_GROUP", 2)
    cm = ac.build(_chain())
    fs = cm.flat
    lazy = [v for v in fs.variables if type(v._sym) is LazyColumn]
    # (the groups' unknowns and the graph's scalar unknowns, of every component)
    assert {v.origin.split("[")[0] for v in lazy} == {"masses", "springs", "fixed", "force"}
    assert all(type(v._sym) is LazyColumn for v in fs.variables
               if v.origin.startswith(("masses", "springs")))
    assert any(type(p._sym) is LazyColumn for p in fs.parameters)
    assert _hashes(fs.var_column) == [v.sym.element_hash() for v in fs.variables]
    assert _hashes(fs.par_column) == [p.sym.element_hash() for p in fs.parameters]
    for name in ("masses[3].v", "der(masses[3].v)", "springs[0].f"):
        out = fs.outputs[name]
        assert out.name() == name and out.element_hash() == fs.variables[
            fs.index[name]].sym.element_hash()


def test_a_groups_sources_are_made_when_read(monkeypatch):
    """The sources (lhs == rhs) of a group's equations are made when read: the build
    reads those of one member per class (the unit check); read alone or all at once,
    they are the equations as written."""
    monkeypatch.setattr(templates, "MIN_GROUP", 2)
    fs = ac.build(_chain()).flat
    group = [e for e in fs.equations if e.origin.startswith("masses[")]
    unread = [e for e in group if type(e._source) is LazyColumn]
    assert unread and unread[0]._source.col is None  # (the column not made)
    alone = [e.text() for e in group]
    fs2 = ac.build(_chain()).flat
    group2 = [e for e in fs2.equations if e.origin.startswith("masses[")]
    lazy = next(e._source for e in group2 if type(e._source) is LazyColumn)
    lazy.all()  # (all of them at once)
    assert [e.text() for e in group2] == alone
    assert alone[2] == "masses[0].v == der(masses[0].s)"


def test_outputs_read_alone_are_the_split_outputs():
    """A compiled model keeps its outputs' expressions as one column: an output read alone
    is its rows (no split of every output), and the same expression the split gives,
    for scalar, vector and matrix outputs."""
    from acausal.dae import _Split

    col = cs.vertcat(cs.SX.sym("a"), cs.SX.sym("v", 3), cs.vec(cs.SX.sym("M", 2, 2)),
                     cs.SX(1, 1))  # (the last: a structural zero)
    sizes, shapes = [1, 3, 4, 1], {2: (2, 2)}
    alone, split = _Split(col, sizes, shapes), _Split(col, sizes, shapes)
    parts = split._split()
    for k in [0, 1, 2, 3, -1, -3]:
        got, want = alone[k], parts[k]
        assert got.shape == want.shape and got.sparsity() == want.sparsity()
        assert str(got) == str(want)
        assert _hashes(cs.vec(cs.densify(got))) == _hashes(cs.vec(cs.densify(want)))
    assert alone._parts is None  # (read alone, nothing split)
    with pytest.raises(IndexError):
        alone[4]
