"""The fast paths of the build (issue 14): same results as the plain ones."""

import pickle

import casadi as cs
import numpy as np
import pytest
from models import ForcedChain

from acausal.fastsx import fast_operators

_OPS = ["__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__",
        "__rtruediv__", "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__"]


def _operands():
    x, y = cs.SX.sym("x"), cs.SX.sym("y")
    v = cs.SX.sym("v", 3)
    return [x, y, -x, x + y, v, cs.SX(0), cs.SX(1.0), 0, 1, 2.5, -1.0, np.float64(2.0),
            cs.DM(3.0), np.array([1.0, 2.0, 3.0])]


def test_fast_operators_give_the_same_expressions():
    ops = _operands()
    plain = {}
    for i, a in enumerate(ops):
        if not isinstance(a, cs.SX):
            continue
        for j, b in enumerate(ops):
            for name in _OPS:
                try:
                    plain[i, j, name] = str(getattr(a, name)(b))
                except Exception as exc:  # noqa: BLE001
                    plain[i, j, name] = type(exc).__name__
    with fast_operators():
        for (i, j, name), want in plain.items():
            try:
                got = str(getattr(ops[i], name)(ops[j]))
            except Exception as exc:  # noqa: BLE001
                got = type(exc).__name__
            assert got == want, (i, j, name)


def test_fast_operators_are_restored_and_reentrant():
    before = {n: cs.SX.__dict__.get(n) for n in _OPS}
    with fast_operators():
        with fast_operators():
            assert cs.SX.__dict__.get("__add__") is not None
        assert cs.SX.__dict__.get("__add__") is not None
    assert {n: cs.SX.__dict__.get(n) for n in _OPS} == before
    with pytest.raises(RuntimeError), fast_operators():
        raise RuntimeError("boom")
    assert {n: cs.SX.__dict__.get(n) for n in _OPS} == before


def _chain_result(n: int = 30):
    import acausal as ac

    cm = ac.build(ForcedChain(n))
    return lambda: ac.simulate(cm, 0.5, n_points=21)


def test_outputs_read_by_name_agree_with_the_whole_table():
    """One name costs its own expression (only the inputs it depends on are passed); after
    many names the rest come from the table of everything; the values agree."""
    from acausal import results

    run = _chain_result()
    one_by_one, table = run(), run()
    names = [n for n in one_by_one.names() if n in one_by_one._index]
    got = {n: one_by_one[n] for n in names[:results._MIN_PER_NAME]}
    assert not isinstance(one_by_one._data_or_fn, np.ndarray)  # (the first few: per name)
    got.update({n: one_by_one[n] for n in names})  # then from the table
    assert isinstance(one_by_one._data_or_fn, np.ndarray)  # the table, taken once
    whole = table._data  # everything at once first
    for n in names:
        k = table._index[n]
        want = whole[:, table._offsets[k]:table._offsets[k + 1]]
        np.testing.assert_allclose(got[n].reshape(want.shape), want, rtol=1e-12, atol=1e-12)
    assert np.ptp(got["force.f"]) > 0  # a function of time read per name


def test_the_table_is_formed_when_the_names_read_have_cost_a_share_of_it(monkeypatch):
    """A result evaluates names one by one until they have cost a quarter of the whole
    table (by the estimates of acausal.grid_outputs, not by timing), and never before
    the eighth; a table that would take more than half the machine's memory is never
    formed by reads of names. Every route gives the same values (rounding: 1e-12)."""
    from acausal import grid_outputs, results

    run = _chain_result()
    want = run()._data  # (the table, taken at once)
    first = run()
    names = [n for n in first.names() if n in first._index]

    def read(res, names):
        """The number of names read one by one before the table was formed (None: never)."""
        for i, n in enumerate(names):
            k = res._index[n]
            np.testing.assert_allclose(res[n].reshape(len(res.t), -1),
                                       want[:, res._offsets[k]:res._offsets[k + 1]],
                                       rtol=1e-12, atol=1e-12)
            if isinstance(res._data_or_fn, np.ndarray):
                return i
        return None

    entries = int(first._offsets[-1]) * len(first.t)
    lazy = first._data_or_fn
    at = read(first, names)
    assert at is not None and at >= results._MIN_PER_NAME
    # (the names read before it cost at least a quarter of the table, by the estimates,
    # and one fewer did not)
    per_name = [lazy.read_seconds(first._index[n]) for n in names[:at]]
    bar = results._TABLE_SHARE * entries * grid_outputs.TABLE_SECONDS_PER_ENTRY
    assert sum(per_name) >= bar and (at == results._MIN_PER_NAME or sum(per_name[:-1]) < bar)
    # a dearer table is formed later: a quarter of it what 20 names cost, at the 21st
    # read; one that does not fit in memory never
    for n in names[:20]:
        lazy.column(first._index[n])  # (each name's plan made: what its read costs is known)
    twenty = sum(lazy.read_seconds(first._index[n]) for n in names[:20])
    assert len(names) > 40 and twenty > bar
    monkeypatch.setattr(grid_outputs, "TABLE_SECONDS_PER_ENTRY",
                        twenty * (1 - 1e-9) / (results._TABLE_SHARE * entries))
    assert read(run(), names) == 20
    monkeypatch.setattr(results, "_table_max_bytes", lambda: 8 * entries - 1)
    never = run()
    assert read(never, names) is None and not isinstance(never._data_or_fn, np.ndarray)


def test_the_plan_evaluates_rows_of_many_inputs_as_they_are(monkeypatch):
    """Rows that depend on more than PLAN_MAX_DEGREE entries of w skip the plan's
    Jacobian test and are evaluated by CasADi point by point: the same table (to
    rounding, 1e-14 relative: the product sums in another order)."""
    from acausal import dae as dae_module

    dae, f = _every_kind_of_row()
    monkeypatch.setattr(dae_module, "PLAN_MAX_DEGREE", 1)
    rng = np.random.default_rng(4)
    T = np.linspace(0.0, 1.0, 9)
    X, Z, P = rng.normal(size=(2, 9)), rng.normal(size=(1, 9)), np.array([0.7])
    plan = dae.bulk_outputs
    # (3 z - x1 + sin t depends on 2 entries: evaluated as it is; p x0 + 1 + p on one: in
    # the product)
    assert 4 in plan.other_rows and 3 not in plan.other_rows and 5 in plan.other_rows
    want = np.asarray(f(X, Z, P, T.reshape(1, -1))).T
    np.testing.assert_allclose(plan.evaluate(X, Z, P, T), want, rtol=1e-14, atol=1e-14)


def test_outputs_that_are_a_state_or_its_negation_are_read_off_bit_for_bit():
    """A scalar output that is a state or an algebraic variable, or its negation, is
    read off the integrated values with no function (and is cheap to the table's cost
    rule); every output read one by one is what CasADi's function of it gives, bit for
    bit, and a read-off value is a copy (writing to it leaves the states alone)."""
    from models import DCMotor

    import acausal as ac
    from acausal import grid_outputs

    cm = ac.build(DCMotor())
    res = ac.simulate(cm, 0.2, n_points=31)
    dae, lazy = cm.dae, res._data_or_fn
    (_, X, Z, T, p), = lazy._join()
    signs = []
    for k in range(len(dae.out_names)):
        got = dae.output_column(k, X, Z, p, T)
        f = dae.output_column_function(k)
        want = np.asarray(f(X, Z, p.reshape(-1, 1), T.reshape(1, -1))).T
        assert got.shape == want.shape and np.array_equal(got, want), dae.out_names[k]
        if dae.output_column_is_read_off(k):
            signs.append(dae._column_plans[k][0])
            assert lazy.read_seconds(k) < grid_outputs.NAME_SECONDS
            got[:] = np.nan
            assert np.isfinite(dae.output_column(k, X, Z, p, T)).all()
    assert signs.count(1.0) > 10 and signs.count(-1.0) > 0  # (33 and 6 of 96 outputs)


def test_reads_from_the_table_are_copies_and_a_read_result_pickles_the_table_once():
    """Once the table is there, a read is a row of its transpose: a copy (writing to it
    leaves the result alone), ``(nt,)`` for a scalar and ``(nt, n)`` for a vector, the
    same values as the table's columns; a parameter is a constant series. A result read
    to the end pickles its table once (the transpose is a view, not written again)."""
    import pickle

    from acausal.results import Result

    t = np.linspace(0.0, 1.0, 5)
    table = np.arange(5 * 4, dtype=float).reshape(5, 4)  # columns: a, b[0..1], c
    res = Result(t, ["a", "b", "c"], [1, 2, 1], table.copy(), {"k": 2.5})
    a = res["a"]
    assert res._rows is not None  # (the route is open)
    np.testing.assert_array_equal(a, table[:, 0])
    np.testing.assert_array_equal(res["b"], table[:, 1:3])
    assert res["b"].shape == (5, 2) and res["b"].flags.c_contiguous
    np.testing.assert_array_equal(res["c"], table[:, 3])
    a[:] = -1.0
    res["b"][:] = -1.0
    np.testing.assert_array_equal(res["a"], table[:, 0])
    np.testing.assert_array_equal(res["b"], table[:, 1:3])
    k = res["k"]
    np.testing.assert_array_equal(k, np.full(5, 2.5))
    k[:] = 0.0
    np.testing.assert_array_equal(res["k"], np.full(5, 2.5))
    with pytest.raises(KeyError, match="'d' is not a variable"):
        res["d"]
    with pytest.raises(TypeError, match="dotted name"):
        res[0]  # type: ignore[index]

    big = _chain_result(40)()
    names = big.names()
    got = {n: big[n] for n in names}
    blob = pickle.dumps(big)
    assert len(blob) < 1.2 * big._data.nbytes + 200_000  # (table + names and metadata)
    back = pickle.loads(blob)
    for n in names:
        np.testing.assert_array_equal(back[n], got[n])


def _every_kind_of_row():
    """A DAE whose outputs are every kind of row of the output plan (read off, a
    structural zero, affine with a parameter and in time, nonlinear), and CasADi's
    function of them."""
    from acausal.dae import SemiExplicitDAE

    x, z, t, p = cs.SX.sym("x", 2), cs.SX.sym("z"), cs.SX.sym("t"), cs.SX.sym("p")
    Y = cs.vertcat(x[1], cs.SX(1, 1), -z, p * x[0] + 1 + p, 3 * z - x[1] + cs.sin(t),
                   cs.sin(x[0]) * z)
    n = Y.numel()
    dae = SemiExplicitDAE(t, x, z, p, ode=-x, alg=z - x[0], x_names=["x0", "x1"],
                          z_names=["z"], p_names=["p"], p_values=np.ones(1),
                          out_names=[f"y{k}" for k in range(n)],
                          out_expr=[Y[k] for k in range(n)], out_sizes=[1] * n,
                          out_stacked=Y)
    return dae, cs.Function("Y", [x, z, p, t], [cs.densify(Y)])


def test_the_table_of_outputs_is_every_kind_of_row_evaluated_by_casadi():
    """The whole table is one sparse product plus offsets (acausal.dae._BulkOutputs):
    rows read off +-w, affine rows with parameter coefficients and offsets (one in time),
    a nonlinear row, and a structural zero (a sparse row, which the table once left
    unwritten) agree with CasADi's evaluation of the outputs, the read-off rows bit for
    bit (a +-1 times an entry), the others to rounding (tolerance: 1e-14 relative, the
    order of a few additions)."""
    dae, f = _every_kind_of_row()
    rng = np.random.default_rng(3)
    T = np.linspace(0.0, 1.0, 7)
    X, Z, P = rng.normal(size=(2, 7)), rng.normal(size=(1, 7)), np.array([0.7])
    X[1, 2] = 0.0  # (-0.0 is not written for a zero entry)
    # (M(p) is kept for the last p: a second p, then the first again, must not reuse it;
    # at p = -1 the offset 1 + p is 0, a row the table skips)
    for P in (np.array([0.7]), np.array([-0.3]), np.array([0.7]), np.array([-1.0])):
        got = dae.bulk_outputs.evaluate(X, Z, P, T)
        want = np.asarray(f(X, Z, P, T.reshape(1, -1))).T
        assert got.shape == (7, len(dae.out_names))
        assert np.array_equal(got[:, [0, 2]], want[:, [0, 2]])
        assert np.array_equal(got[:, 1], np.zeros(7)) and not np.signbit(got).any(axis=0)[1]
        np.testing.assert_allclose(got, want, rtol=1e-14, atol=1e-14)


def test_a_table_of_few_points_is_casadis_evaluation_bit_for_bit(monkeypatch):
    """Up to MACHINE_MAX_POINTS points, the table is the function of all outputs
    evaluated point by point through its buffer: the same bits as calling it, in chunks
    that do not divide the grid, into a slice of a larger table too; the output plan is
    not made. Past it, the plan is made and used, and agrees to rounding (1e-14
    relative: the product sums in another order)."""
    from acausal import grid_outputs

    dae, f = _every_kind_of_row()
    monkeypatch.setattr(grid_outputs, "CHUNK_VALUES", 2 * 6)  # (chunks of 2 points)
    rng = np.random.default_rng(5)
    T = np.linspace(0.0, 1.0, 7)
    X, Z, P = rng.normal(size=(2, 7)), rng.normal(size=(1, 7)), np.array([0.7])
    want = np.asarray(f(X, Z, P, T.reshape(1, -1))).T
    got = dae.grid_outputs.evaluate(cs.DM(X), Z, P, T)
    assert got.shape == (7, 6) and np.array_equal(got, want)
    big = np.full((6, 10), np.nan)
    dae.grid_outputs.evaluate(X, Z, P, T, out=big[:, 2:9])
    assert np.array_equal(big[:, 2:9].T, want) and np.isnan(big[:, [0, 1, 9]]).all()
    assert "bulk_outputs" not in dae.__dict__
    monkeypatch.setattr(grid_outputs, "MACHINE_MAX_POINTS", 6)
    by_plan = dae.grid_outputs.evaluate(X, Z, P, T)
    assert "bulk_outputs" in dae.__dict__
    np.testing.assert_allclose(by_plan, want, rtol=1e-14, atol=1e-14)
    # (a DAE with its table's function made pickles; the function is made again)
    with cs.global_pickle_context():
        blob = pickle.dumps(dae.grid_outputs)
    with cs.global_unpickle_context():
        back = pickle.loads(blob)
    monkeypatch.setattr(grid_outputs, "MACHINE_MAX_POINTS", 640)
    assert np.array_equal(back.evaluate(X, Z, P, T), want)


def test_rows_of_the_table_are_its_columns_bit_for_bit(monkeypatch):
    """Any run of output rows is evaluated alone (GridOutputs.evaluate_rows: CasADi's
    function of those rows point by point up to MACHINE_MAX_POINTS, the plan's rows of
    every kind past it, with the instructions of its nonlinear rows those rows need), and
    gives those columns of the whole table bit for bit: the same operations on the same
    values. The states stacked once serve the next rows."""
    from acausal import grid_outputs

    dae, _ = _every_kind_of_row()
    rng = np.random.default_rng(11)
    T = np.linspace(0.0, 1.0, 7)
    X, Z, P = rng.normal(size=(2, 7)), rng.normal(size=(1, 7)), np.array([0.7])
    n = len(dae.out_names)
    for max_points in (640, 6):  # (the machine, then the plan)
        monkeypatch.setattr(grid_outputs, "MACHINE_MAX_POINTS", max_points)
        whole = dae.grid_outputs.evaluate(X, Z, P, T)
        ready: dict = {}
        for a in range(n + 1):
            for b in range(a, n + 1):
                got = dae.grid_outputs.evaluate_rows(a, b, X, Z, P, T, ready)
                assert got.shape == (7, b - a) and np.array_equal(got, whole[:, a:b]), (a, b)
        assert ready  # (what the rows read of the states, made once)


def test_rows_of_a_multibody_table_are_its_columns_bit_for_bit():
    """The same on a long grid of a multibody model, whose nonlinear rows share most of
    their instructions (the bodies' rotations): blocks of 40 rows, each with its part of
    the program, are the table's columns bit for bit."""
    from mb_models import SphericalDoublePendulum

    import acausal as ac

    cm = ac.build(SphericalDoublePendulum())
    res = ac.simulate(cm, 0.5, n_points=801)  # (past MACHINE_MAX_POINTS: the plan)
    (dae, X, Z, T, p), = res._data_or_fn._join()
    whole = dae.grid_outputs.evaluate(X, Z, p, T)
    n = whole.shape[1]
    assert len(dae.bulk_outputs.other_rows) > 40  # (rows of the program, in every block)
    ready: dict = {}
    for a in range(0, n, 40):
        got = dae.grid_outputs.evaluate_rows(a, min(a + 40, n), X, Z, p, T, ready)
        assert np.array_equal(got, whole[:, a:a + 40]), a


def test_a_result_holds_the_names_read_and_the_blocks_they_paid_for(monkeypatch):
    """Past the first few names read one by one, a result evaluates the block of
    consecutive outputs a name belongs to when the names of that block read so far cost a
    quarter of it (by the estimates), and holds that block only: not the table. A block's
    values are the table's bit for bit, but for names read one by one before it, which
    keep their bits and are then held by the block alone; the table asked for later has
    every value, blocks and names; a pickled result has them too."""
    from acausal import results

    run = _chain_result()
    want = run()._data  # (the table at once: 699 columns on 21 points)
    monkeypatch.setattr(results, "_BLOCK_VALUES", 21 * 50)  # (blocks of 50 names)
    res = run()
    per = res._names_per_block()
    assert per == 50 and len(res._names) > 8 * per
    bounds = res._column_bounds()

    def column(k):
        return want[:, bounds[k]:bounds[k + 1]]

    alone = {}
    for k in range(results._MIN_PER_NAME):  # (block 0: one by one)
        alone[k] = res[res._names[k]]
        np.testing.assert_allclose(alone[k].reshape(21, -1), column(k), rtol=1e-12, atol=1e-12)
    assert not res._blocks and res._alone == results._MIN_PER_NAME
    # a block costs far less than a name read alone: the next read of block 0 takes it
    assert res._block_pays(0) and not res._block_pays(3)
    for k in range(results._MIN_PER_NAME, per):
        assert np.array_equal(res[res._names[k]].reshape(21, -1), column(k))
    assert set(res._blocks) == {0} and not res._columns  # (the names now in the block)
    for k, v in alone.items():  # (read again: the bits of their first read)
        assert np.array_equal(res[res._names[k]], v)
    # a name of another block is read alone first, then its block
    k = 3 * per + 7
    first = res[res._names[k]]
    assert set(res._blocks) == {0} and k in res._columns
    second = res[res._names[k + 1]]
    assert set(res._blocks) == {0, 3} and not res._columns
    assert np.array_equal(res[res._names[k]], first)
    assert np.array_equal(second.reshape(21, -1), column(k + 1))
    held = sum(b.nbytes for b in res._blocks.values())
    assert held == 8 * 21 * (bounds[per] + bounds[4 * per] - bounds[3 * per])
    # the table asked for now, and a pickled result
    again = pickle.loads(pickle.dumps(res))
    table = res._data
    for k, v in alone.items():
        assert np.array_equal(table[:, bounds[k]:bounds[k + 1]].reshape(v.shape), v)
        assert np.array_equal(again[res._names[k]], v)
    assert np.array_equal(table[:, bounds[3 * per + 7]:bounds[3 * per + 8]].ravel(), first)
    np.testing.assert_allclose(table, want, rtol=1e-12, atol=1e-12)
    assert np.array_equal(again._data, table)
    assert not res._blocks  # (the table holds them now)


def test_names_are_read_from_a_few_pieces_without_joining_them():
    """A result of a few pieces (the start point and the segment after it) reads a name
    piece by piece: the states are not copied into one matrix for it (0.3 s and 260 MB
    for 1 000 masses on 20 001 points), and the values are those of the joined pieces
    (rounding: 1e-14, the start point may take the other route). The table joins them."""
    run = _chain_result()
    res, joined = run(), run()
    lazy = res._data_or_fn
    assert len(lazy.pieces) == 2 and len(lazy.pieces[0][3]) == 1  # (start point, segment)
    want = joined._data
    bounds = joined._column_bounds()
    for k in range(5):
        name = res._names[k]
        got = res[name].reshape(len(res.t), -1)
        np.testing.assert_allclose(got, want[:, bounds[k]:bounds[k + 1]], rtol=1e-14,
                                   atol=1e-14)
    assert not lazy._joined  # (nothing copied)
    np.testing.assert_allclose(res._data, want, rtol=1e-14, atol=1e-14)
    assert lazy._joined


def test_blocks_held_stay_within_half_the_memory(monkeypatch):
    """A block is not formed if it and the blocks held would take more than half the
    machine's memory: its names are read one by one instead (here a memory that holds one
    block)."""
    from acausal import results

    monkeypatch.setattr(results, "_BLOCK_VALUES", 21 * 50)
    res = _chain_result()()
    per = res._names_per_block()
    bounds = res._column_bounds()
    one = 8 * 21 * max(bounds[(j + 1) * per] - bounds[j * per] for j in range(4))
    monkeypatch.setattr(results, "_table_max_bytes", lambda: one)
    for k in list(range(per)) + list(range(2 * per, 3 * per)):
        res[res._names[k]]
    assert set(res._blocks) == {0} and len(res._columns) == per


def test_what_a_build_made_is_not_left_to_the_young_generations():
    """The build pauses the cyclic garbage collector; what it made goes to the oldest
    generation when it resumes (not left in the youngest, where the next collections
    would each scan all of it: 0.3 to 0.4 s at 10 000 elements, in a result's first
    reads)."""
    import gc

    import acausal as ac

    assert gc.isenabled()
    gc.collect()
    cm = ac.build(ForcedChain(60))
    young = len(gc.get_objects(generation=0)) + len(gc.get_objects(generation=1))
    assert young < 200, young  # (the build makes tens of thousands of tracked objects)
    assert gc.isenabled() and cm.dae is not None


@pytest.mark.parametrize("make", ["ForcedChain(4)", "SeriesRLC()", "HeatedMass()"])
def test_output_names_and_sizes_read_as_the_lists_they_stand_for(make):
    """A build keeps no list of its outputs' names or sizes (views: dae.OutNames over the
    variables' names and the graph's names made when read, results.Sizes); each reads,
    compares, concatenates and pickles as the list of the same names and sizes, which
    the outputs' expressions and a run's result agree with."""
    import models

    import acausal as ac

    cm = ac.build(eval(make, vars(models)))
    d = cm.dae
    n = len(d.out_names)
    read_alone = [d.out_names[k] for k in range(-n, n)]  # (before the list is made)
    names, sizes = list(d.out_names), list(d.out_sizes)
    assert read_alone == names + names
    assert len(names) == len(sizes) == len(d.out_expr) == len(set(names))
    assert sizes == [int(e.numel()) for e in d.out_expr]
    assert d.out_names == names and d.out_sizes == sizes
    assert d.out_names + ["x"] == names + ["x"] and ["x"] + d.out_names == ["x"] + names
    assert all(n in d.out_names and d.out_names.index(n) == k for k, n in enumerate(names))
    assert pickle.loads(pickle.dumps(d.out_names)) == names
    assert list(pickle.loads(pickle.dumps(d.out_sizes))) == sizes
    assert np.array_equal(np.asarray(d.out_sizes), sizes)
    res = ac.simulate(cm, 0.1)
    for n in names:  # (every name reads)
        assert np.isfinite(res[n]).all()


def test_rows_taken_and_put_by_slices_are_those_of_a_list_index():
    """fastsx.take / put / interleave (slices where the rows step evenly, issue 14) give
    the column a list index gives, for even and uneven steps, one row, no row and a 1 x 1
    column."""
    from acausal.fastsx import interleave, put, take

    rng = np.random.default_rng(3)
    col = cs.SX.sym("c", 40)
    cases = [np.arange(0, 40, 3), np.arange(5, 6), np.arange(0), np.arange(7, 40),
             np.array([2, 4, 7, 9]), np.array([9, 4, 2]), np.array([3, 3, 3]),
             np.sort(rng.choice(40, 12, replace=False))]
    for idx in cases:
        want = col[idx.tolist()] if len(idx) else cs.SX(0, 1)
        assert cs.is_equal(take(col, idx), want), idx
        out, ref = cs.SX.zeros(40), cs.SX.zeros(40)
        new = cs.SX.sym("n", len(idx))
        if len(set(idx.tolist())) == len(idx):  # (a row put twice: the list's last wins)
            put(out, idx, new)
            if len(idx):
                ref[idx.tolist()] = new
            assert cs.is_equal(out, ref), idx
    one = cs.SX.sym("o")
    assert cs.is_equal(take(one, np.array([0, 0])), cs.vertcat(one, one))
    a, b, c = (cs.SX.sym(s, 4) for s in "abc")
    assert cs.is_equal(interleave([a, b, c], 4),
                       cs.vec(cs.horzcat(a, b, c).T))
    assert interleave([a, cs.SX.sym("d", 3)], 4) is None  # (not all n rows)


def test_incidence_rows_behave_as_the_list_of_their_rows():
    """structure.system.Rows (the incidence kept as compressed rows, issue 14) against a
    plain list under random reads, replacements, appends (one by one and compressed),
    copies and pickles: the same rows, and arrays() the same compressed rows."""
    from acausal.structure.system import Rows

    rng = np.random.default_rng(11)
    for _trial in range(60):
        n = int(rng.integers(0, 12))
        rows = [tuple(sorted(rng.choice(20, int(rng.integers(0, 4)), replace=False).tolist()))
                for _ in range(n)]
        ptr = np.concatenate(([0], np.cumsum([len(r) for r in rows]))).astype(np.int64)
        col = np.array([j for r in rows for j in r], dtype=np.int64)
        got, ref = Rows(ptr, col), list(rows)
        for _ in range(int(rng.integers(0, 8))):
            op = int(rng.integers(0, 4))
            new = tuple(sorted(rng.choice(20, int(rng.integers(0, 4)), replace=False).tolist()))
            if op == 0 and ref:
                k = int(rng.integers(-len(ref), len(ref)))
                got[k] = ref[k] = new
            elif op == 1:
                got.append(new)
                ref.append(new)
            elif op == 2:
                more = [new, new[:1]]
                p = np.array([0, len(new), len(new) + len(new[:1])], dtype=np.int64)
                got.extend_compressed(p, np.array(new + new[:1], dtype=np.int64))
                ref.extend(more)
            else:
                copy = got.copy()
                assert copy == ref and copy is not got
        assert len(got) == len(ref) and list(got) == ref and got == ref
        assert [got[k] for k in range(-len(ref), len(ref))] == ref + ref
        assert got[1:4] == ref[1:4]
        p, c = got.arrays()
        assert [tuple(c[p[i]:p[i + 1]].tolist()) for i in range(len(ref))] == ref
        assert pickle.loads(pickle.dumps(got)) == ref
        with pytest.raises(IndexError):
            got[len(ref)]
