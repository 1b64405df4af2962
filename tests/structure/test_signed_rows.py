"""The DAE pass's alias outputs made by indexing (:func:`acausal.dae.signed_rows`) are
CasADi's substitution of the solutions into them, node for node."""

from __future__ import annotations

import casadi as cs
import numpy as np

from acausal.dae import signed_rows


def _serialised(args: list[cs.SX], e: cs.SX) -> str:
    return cs.Function("f", args, [e]).serialize()


def test_signed_rows_is_the_substitution() -> None:
    x = cs.SX.sym("x", 4)
    p = cs.SX.sym("p")
    negs = -x  # (one negation node per symbol, as the alias pass makes them)
    col = cs.vertcat(x[0], negs[1], negs[1], x[2], -p, cs.SX(0), negs[3], x[3], negs[0])
    rep = np.array([0, 1, 1, 2, -1, -1, 3, 3, 0])
    neg = np.array([0, 1, 1, 0, 0, 0, 1, 0, 1], dtype=bool)
    values = cs.SX(x)
    values[1] = p * x[0]
    values[3] = -x[2]  # (a negated solution: its negation is x[2] itself)
    solved = np.array([False, True, False, True])
    got = signed_rows(col, rep, neg, values, solved)
    want = cs.substitute(col, x, values)
    assert _serialised([x, p], got) == _serialised([x, p], want)
    # the rows whose symbol is not solved keep their nodes
    for k in (0, 3, 4, 5, 8):
        assert cs.is_equal(got[k], col[k], 0)
    assert cs.is_equal(got[6], x[2], 0)


def test_rows_of_a_column_of_one_row() -> None:
    from acausal.structure.system import rows_of

    x = cs.SX.sym("x", 3)
    assert rows_of(x, [2, 0]).shape == (2, 1)
    assert cs.is_equal(rows_of(x, [2, 0]), cs.vertcat(x[2], x[0]), 0)
    one = cs.SX.sym("y")
    assert rows_of(one, [0, 0]).shape == (2, 1)
    # signed_rows of a column of one row
    got = signed_rows(-one, np.array([0]), np.array([True]), cs.SX(2) * one,
                      np.array([True]))
    assert got.shape == (1, 1)
    assert _serialised([one], got) == _serialised([one], cs.substitute(-one, one, 2 * one))
