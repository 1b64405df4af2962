"""Pantelides' bulk rule (:func:`acausal.structure.pantelides._settle_in_bulk`) against the
equation-by-equation search on random structures: the same equations differentiated, in
the same order, with the same derivatives, and a complete matching in both."""

from __future__ import annotations

import random

import numpy as np
import pytest

from acausal.errors import StructureError
from acausal.flatten import FlatEquation
from acausal.structure import pantelides as P
from acausal.structure.system import EquationSystem
from acausal.symbols import SymbolTable


def random_system(seed: int) -> EquationSystem:
    """States with derivatives, algebraic unknowns, and equations of random incidence:
    some in the derivatives, some algebraic, some constraints among the states only."""
    rng = random.Random(seed)
    tab = SymbolTable()
    nx, ny = rng.randint(1, 6), rng.randint(0, 4)
    xs = [tab.new_var(f"x{k}") for k in range(nx)]
    ys = [tab.new_var(f"y{k}") for k in range(ny)]
    dxs = [tab.der(x) for x in xs]

    def term(pool):
        a, b = rng.sample(pool, 2) if len(pool) > 1 else (pool[0], pool[0])
        # (linear: a structurally singular draw is differentiated up to its limit, and
        # products would grow with every derivative)
        return rng.choice([a + 2 * b, a - 3 * b, 0.5 * a - b])

    res = []
    n_con = rng.randint(0, min(2, nx))
    for _ in range(nx + ny - n_con):
        pool = rng.sample(dxs + ys, rng.randint(1, min(3, len(dxs + ys))))
        res.append(term(pool + rng.sample(xs, rng.randint(0, nx))))
    for _ in range(n_con):
        res.append(term(rng.sample(xs, rng.randint(1, nx))))
    rng.shuffle(res)
    eqs = [FlatEquation(r, f"e{k}") for k, r in enumerate(res)]
    return EquationSystem.from_lists(tab.t, list(tab.variables), eqs, list(tab.parameters))


def run(sys: EquationSystem):
    try:
        r = P.pantelides(sys)
    except StructureError as e:
        return ("singular", str(e))
    top = sorted(i for i in range(sys.n_eqs) if sys.eq_der[i] < 0 and sys.incidence[i])
    matched = sorted(i for i in r.assign if i >= 0)
    return (r.differentiated, r.max_level, sys.n_vars, [v.name for v in sys.variables],
            [list(map(int, row)) for row in sys.incidence], list(sys.eq_der),
            [str(e.res) for e in sys.equations], matched == top)


def test_bulk_rule_gives_the_searches_result_on_random_structures(monkeypatch):
    bulk_taken = 0
    real = P._settle_in_bulk
    for seed in range(300):
        sys = random_system(seed)
        got = real(sys, *_bulk_arguments(sys))
        bulk_taken += got is not None
        a = run(random_system(seed))
        monkeypatch.setattr(P, "_settle_in_bulk", lambda *args: None)
        b = run(random_system(seed))
        monkeypatch.setattr(P, "_settle_in_bulk", real)
        assert a == b, f"seed {seed}"
    # (the rule must have been exercised, and the search must have been needed elsewhere)
    assert 20 < bulk_taken < 280, bulk_taken


def _bulk_arguments(sys: EquationSystem):
    """The arguments of ``_settle_in_bulk`` after ``sys``: the incidence on every unknown
    and on the highest derivatives, their indices and the derivative links."""
    var_der = np.asarray(sys.var_der, dtype=np.int64)
    highest = np.flatnonzero(var_der < 0)
    full = sys.incidence_matrix()
    return full, P._columns(full, highest), highest, var_der


@pytest.mark.parametrize("n", [3, 40])
def test_chain_of_constraints_is_settled_in_bulk(n):
    """x_k' = -x_k + w_k (k < n), x_n' = -x_n, x_k = x_{k+1}: every constraint
    differentiated once (index 2), as the search does, without it."""
    def build():
        tab = SymbolTable()
        x = [tab.new_var(f"x{k}") for k in range(n + 1)]
        w = [tab.new_var(f"w{k}") for k in range(n)]
        res = [tab.der(x[k]) + x[k] - (w[k] if k < n else 0) for k in range(n + 1)]
        res += [x[k] - x[k + 1] for k in range(n)]
        eqs = [FlatEquation(r, f"e{k}") for k, r in enumerate(res)]
        return EquationSystem.from_lists(tab.t, list(tab.variables), eqs,
                                         list(tab.parameters))

    sys = build()
    assert P._settle_in_bulk(sys, *_bulk_arguments(sys)) is not None
    a = run(build())
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(P, "_settle_in_bulk", lambda *args: None)
        b = run(build())
    assert a == b and len(a[0]) == n and a[1] == 1 and a[-1]
