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
