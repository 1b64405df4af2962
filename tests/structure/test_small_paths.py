"""The scipy-free paths of small systems against scipy's routines (the reference; the
large systems' paths used them before CasADi's C++ ones, issue 14).

A small model is built and simulated without importing scipy (its first import costs more
than the whole run): the incidence and cutset matrices are :class:`acausal.csr.CSR`, the
matching is Python augmenting paths below ``ARRAY_GRAPH_MIN``, the Newton step a numpy
LU up to ``DENSE_STEP_MAX`` unknowns, the affine outputs a numpy product below
``SCIPY_PRODUCT_MIN`` nonzeros, the dummy-derivative pivoting a numpy QR with column
pivoting and its blocks Python union-find, the BLT's strongly connected components Python
Tarjan (against the textbook recursive one in ``tests/structure/test_passes.py``). Each is
checked here against scipy on the same systems, and whole builds are compared with the
size thresholds forced either way.
"""

from __future__ import annotations

import casadi as cs
import numpy as np
import pytest
import scipy.linalg as sla
import scipy.sparse as sp
from models import RC, DCMotor, SeriesRLC, pendulum
from scipy.sparse.csgraph import maximum_bipartite_matching

import acausal as ac
from acausal import dae
from acausal.csr import CSR, as_csr
from acausal.solvers import newton
from acausal.structure import dummy, matching


def _random_sparse(rng: np.random.Generator, n_eq: int, n_var: int, per_row: int) -> np.ndarray:
    a = np.zeros((n_eq, n_var))
    for i in range(n_eq):
        a[i, rng.integers(0, n_var, per_row)] = rng.standard_normal(per_row)
    return a


def _systems() -> list[tuple[str, np.ndarray]]:
    rng = np.random.default_rng(3)
    chain = np.eye(60) + np.eye(60, k=1) + np.eye(60, k=-1)
    # greedy start takes variable i + 1 for equation i, so equation 59 needs a path of 59
    shifted = np.eye(60, k=1) + np.eye(60)
    shifted[59] = 0.0
    shifted[59, 0] = 1.0
    out = [("chain", chain), ("long augmenting path", shifted),
           ("empty row", np.array([[1.0, 1.0], [0.0, 0.0]])),
           ("over- and under-determined", np.array([[1, 0, 0], [1, 0, 0], [0, 1, 1]]))]
    for k, (n_eq, n_var, per) in enumerate([(8, 8, 2), (40, 40, 2), (40, 50, 3), (50, 40, 3),
                                            (300, 300, 3), (300, 300, 1)]):
        out.append((f"random {k}", _random_sparse(rng, n_eq, n_var, per)))
    return out


@pytest.mark.parametrize("name, a", _systems(), ids=[n for n, _ in _systems()])
def test_csr_agrees_with_scipy_sparse(name, a):
    ref = sp.csr_matrix(a)
    ref.sum_duplicates()
    for m in (CSR.from_dense(a), as_csr(ref), as_csr(sp.coo_matrix(a))):
        np.testing.assert_array_equal(m.indptr, ref.indptr)
        np.testing.assert_array_equal(m.indices, ref.indices)
        np.testing.assert_array_equal(m.toarray(), a)
        np.testing.assert_array_equal(m.T.toarray(), a.T)
        assert (m.to_scipy() != ref).nnz == 0
    W = np.random.default_rng(1).standard_normal((a.shape[1], 5))
    # the same products up to the order of the sums of a row (a few entries)
    np.testing.assert_allclose(CSR.from_dense(a).dot(W), ref @ W, rtol=1e-13, atol=1e-13)
    # triplets in any order give the same rows
    r, c = np.nonzero(a)
    perm = np.random.default_rng(0).permutation(len(r))
    m = CSR.from_coo(r[perm], c[perm], a[r, c][perm], a.shape)
    np.testing.assert_array_equal(m.toarray(), a)


@pytest.mark.parametrize("name, a", _systems(), ids=[n for n, _ in _systems()])
def test_python_matching_is_maximum_as_scipy_hopcroft_karp(name, a, monkeypatch):
    # the reference: scipy's Hopcroft-Karp, independent of the code under test
    size = int((maximum_bipartite_matching(sp.csr_matrix(a), perm_type="column") >= 0).sum())
    # every system in Python, then every one in CasADi's C++, then in scipy's
    for arrays, scipy in ((10**9, 10**9), (0, 10**9), (0, 0)):
        monkeypatch.setattr(matching, "ARRAY_GRAPH_MIN", arrays)
        monkeypatch.setattr(matching, "SCIPY_GRAPH_MIN", scipy)
        var_of_eq, eq_of_var = matching.match(a)
        matched = np.flatnonzero(var_of_eq >= 0)
        assert len(matched) == size
        assert all(a[i, var_of_eq[i]] != 0 for i in matched)  # pairs are incidences
        assert len(set(var_of_eq[matched])) == len(matched)  # each variable at most once
        np.testing.assert_array_equal(eq_of_var[var_of_eq[matched]], matched)
        assert (eq_of_var >= 0).sum() == size


@pytest.mark.parametrize("rounds", [0, 1, 2, 32])
def test_peeled_matching_is_maximum_after_any_number_of_rounds(rounds, monkeypatch):
    """The large systems' matching takes pairs by Karp and Sipser's degree-one rule for up
    to ``_PEEL_ROUNDS`` rounds and gives the rest to CasADi's transversal: a maximum
    matching (scipy's Hopcroft-Karp's size) whenever it stops, on the systems above, a
    cycle (no vertex of degree one: all of it CasADi's) and a path hanging from a cycle."""
    monkeypatch.setattr(matching, "ARRAY_GRAPH_MIN", 0)
    monkeypatch.setattr(matching, "SCIPY_GRAPH_MIN", 10**9)
    monkeypatch.setattr(matching, "_PEEL_ROUNDS", rounds)
    cycle = np.eye(50) + np.roll(np.eye(50), 1, axis=1)
    tail = np.zeros((80, 80))
    tail[:50, :50] = cycle
    tail[50:, 49:79] += np.eye(30)
    tail[50:, 50:80] += np.eye(30)
    for name, a in [*_systems(), ("cycle", cycle), ("path from a cycle", tail)]:
        size = int((maximum_bipartite_matching(sp.csr_matrix(a), perm_type="column")
                    >= 0).sum())
        var_of_eq, eq_of_var = matching.match(a)
        matched = np.flatnonzero(var_of_eq >= 0)
        assert len(matched) == size, name
        assert all(a[i, var_of_eq[i]] != 0 for i in matched), name
        assert len(set(var_of_eq[matched])) == len(matched), name
        np.testing.assert_array_equal(eq_of_var[var_of_eq[matched]], matched)


@pytest.mark.parametrize("model", [RC, SeriesRLC, DCMotor, lambda: pendulum(30.0)],
                         ids=["RC", "SeriesRLC", "DCMotor", "pendulum"])
def test_builds_agree_with_small_and_scipy_routines(model, monkeypatch):
    def run():
        res = ac.simulate(model(), 0.5, rtol=1e-9, atol=1e-11, n_points=401)
        return {n: np.asarray(res[n]) for n in res.names()}

    runs = []
    # every routine the small one, then every one the large one (the graph routines
    # CasADi's, then scipy's)
    for big, scipy in ((10**9, 10**9), (0, 10**9), (0, 0)):
        monkeypatch.setattr(matching, "ARRAY_GRAPH_MIN", big)
        monkeypatch.setattr(matching, "SCIPY_GRAPH_MIN", scipy)
        monkeypatch.setattr(newton, "DENSE_STEP_MAX", big)
        monkeypatch.setattr(dae, "SCIPY_PRODUCT_MIN", big)
        runs.append(run())
    small = runs[0]
    for large in runs[1:]:
        assert small.keys() == large.keys()
        for n in small:
            # the runs may pair the equations of a block differently: the same solution to
            # the integrator's tolerance (rtol 1e-9), with margin for the trajectory's growth
            np.testing.assert_allclose(small[n], large[n], rtol=1e-6, atol=1e-8, err_msg=n)


def _scipy_step(J: np.ndarray, f: np.ndarray) -> np.ndarray | None:
    """The large-system test on scipy's LU (as ``AlgebraicSystem._step``)."""
    lu, piv = sla.lu_factor(J, check_finite=False)
    d = np.abs(np.diag(lu))
    if not d.min() > newton._PIVOT_RATIO * d.max():
        return None
    return sla.lu_solve((lu, piv), -f, check_finite=False)


def test_small_step_agrees_with_scipy_lu():
    rng = np.random.default_rng(5)
    for n in (1, 2, 7, 30):
        J = rng.standard_normal((n, n))
        f = rng.standard_normal(n)
        ref = _scipy_step(J, f)
        got = newton._small_step(J, f)
        assert ref is not None and got is not None
        # both are LAPACK's LU with partial pivoting: equal to rounding, scaled by the
        # condition number of a random matrix (below 1e4 here)
        np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-12 * np.abs(ref).max())
    # singular and nearly singular matrices: both rank tests refuse the LU step
    J = rng.standard_normal((6, 6))
    J[:, 3] = J[:, 1] * 2.0
    f = rng.standard_normal(6)
    assert newton._small_step(J, f) is None
    J[0, 3] += 1e-15
    assert _scipy_step(J, f) is None and newton._small_step(J, f) is None
    assert newton._small_step(np.zeros((3, 3)), np.ones(3)) is None
    assert newton._small_step(np.ones((2, 3)), np.ones(2)) is None  # not square


@pytest.mark.parametrize("singular", [False, True])
def test_newton_step_is_the_same_on_either_side_of_the_threshold(singular, monkeypatch):
    rng = np.random.default_rng(8)
    J = rng.standard_normal((5, 5))
    if singular:  # the minimum-norm least-squares step on both sides
        J[4] = J[0] + J[1]
    f = rng.standard_normal(5)
    steps = []
    for threshold in (10**9, 0):
        monkeypatch.setattr(newton, "DENSE_STEP_MAX", threshold)
        steps.append(newton.AlgebraicSystem._step(J, f))
        steps.append(newton.AlgebraicSystem._step(cs.DM(J), f))  # an exact Jacobian: sparse
    for s in steps[1:]:
        # the same step from LU solves of a random matrix (condition number < 1e4)
        np.testing.assert_allclose(s, steps[0], rtol=1e-9, atol=1e-12)


def test_connected_components_agree_with_scipy(monkeypatch):
    rng = np.random.default_rng(2)
    for n, n_edges in ((1, 0), (7, 0), (30, 12), (200, 150), (200, 400)):
        a, b = rng.integers(0, n, (2, n_edges)) if n_edges else np.zeros((2, 0), np.int64)
        monkeypatch.setattr(matching, "ARRAY_GRAPH_MIN", 10**9)
        ours = dummy._components(n, a, b)
        monkeypatch.setattr(matching, "ARRAY_GRAPH_MIN", 0)
        np.testing.assert_array_equal(ours, dummy._components(n, a, b))
