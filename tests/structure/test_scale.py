"""The fast paths of the build (issue 14): same results as the plain ones."""

import casadi as cs
import numpy as np
import pytest

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
    from components import translational as tr

    class Chain(ac.Model):
        def __init__(self):
            super().__init__()
            self.fixed = tr.Fixed()
            self.masses = [tr.Mass(m=1.0, s=0.0, v=0.0) for _ in range(n)]
            self.springs = [tr.SpringDamper(c=100.0, d=1.0) for _ in range(n)]
            self.force = tr.Force(f=lambda t: 1.0 + t)
            prev = self.fixed.flange
            for m, s in zip(self.masses, self.springs, strict=True):
                self.connect(prev, s.flange_a)
                self.connect(s.flange_b, m.flange_a)
                prev = m.flange_b
            self.connect(prev, self.force.flange)

    cm = ac.build(Chain())
    return lambda: ac.simulate(cm, 0.5, n_points=21)


def test_outputs_read_by_name_agree_with_the_whole_table():
    """One name costs its own expression (only the inputs it depends on are passed); after
    many names the rest come from the table of everything; the values agree."""
    from acausal import results

    run = _chain_result()
    one_by_one, table = run(), run()
    names = [n for n in one_by_one.names() if n in one_by_one._index]
    assert len(names) > one_by_one._per_name_reads() >= results._MIN_PER_NAME
    got = {n: one_by_one[n] for n in names}  # per name, then from the table
    assert isinstance(one_by_one._data_or_fn, np.ndarray)  # the table, taken once
    whole = table._data  # everything at once first
    for n in names:
        k = table._index[n]
        want = whole[:, table._offsets[k]:table._offsets[k + 1]]
        np.testing.assert_allclose(got[n].reshape(want.shape), want, rtol=1e-12, atol=1e-12)
    assert np.ptp(got["force.f"]) > 0  # a function of time read per name
