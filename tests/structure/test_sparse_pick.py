"""The dummy-derivative selection of large blocks (``dummy._sparse_pick``, issue 14: CasADi's
C++ matching and sparse QR instead of scipy's matching and LU) against scipy's routines as
the reference: the numerical check gives splu's verdict, the picks widen class by class of
state priority as far as scipy's matching says they must, and singular picks are refused."""

from __future__ import annotations

import casadi as cs
import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import maximum_bipartite_matching
from scipy.sparse.linalg import splu

from acausal.structure import dummy


def _sprand(rng: np.random.Generator, r: int, c: int, density: float) -> sp.csr_matrix:
    """A random sparse matrix, values uniform in [0, 1), drawn by numpy (scipy's
    ``sparse.random`` takes ``rng=`` only from scipy 1.15; the project needs 1.11)."""
    return sp.csr_matrix(np.where(rng.random((r, c)) < density, rng.random((r, c)), 0.0))


def _splu_nonsingular(a: np.ndarray) -> bool:
    """The check the selection made before (splu: min |U_ii| > 1e-10 max |U_ii|)."""
    try:
        d = np.abs(splu(sp.csc_matrix(a)).U.diagonal())
    except RuntimeError:  # (exactly singular)
        return False
    return bool(d.min() > 1e-10 * max(d.max(), 1e-300))


def _dm(a: np.ndarray) -> cs.DM:
    return cs.DM(sp.csc_matrix(a))


def _square(rng: np.random.Generator, n: int) -> np.ndarray:
    """A random sparse matrix with a nonzero diagonal (nonsingular for random values)."""
    a = _sprand(rng, n, n, min(1.0, 3.0 / n)).toarray()
    return a + np.diag(rng.uniform(0.5, 2.0, n) * rng.choice([-1.0, 1.0], n))


def test_nonsingular_gives_splus_verdict():
    """Nonsingular, badly scaled, and singular (a column a multiple of another, a row a
    combination of two others, an empty row) random sparse matrices: the QR check says
    what splu's did. (Both diagonals scale with the columns, so both tests depend on the
    scaling alike; matrices near the 1e-10 threshold are avoided, as there the two
    factorisations' diagonals may fall either side of it: columns scaled over 1e10, not
    tested here, gave ratios 5.7e-11 for splu and 1.1e-10 for the QR; over 1e6 here.)"""
    rng = np.random.default_rng(5)
    verdicts = []
    for k in range(600):
        n = int(rng.integers(2, 80))
        a = _square(rng, n)
        kind = k % 5
        if kind == 1:  # badly scaled columns, still nonsingular
            a = a * 10.0 ** rng.uniform(-3, 3, n)[None, :]
        elif kind == 2:
            i, j = rng.choice(n, 2, replace=False)
            a[:, i] = -2.5 * a[:, j]
        elif kind == 3 and n >= 3:
            i, j, m = rng.choice(n, 3, replace=False)
            a[i] = a[j] - 0.5 * a[m]
        elif kind == 4:
            a[int(rng.integers(n))] = 0.0
        ref = _splu_nonsingular(a)
        assert dummy._nonsingular(_dm(a)) == ref, (k, n, kind)
        verdicts.append(ref)
    assert 200 < sum(verdicts) < 400  # (both verdicts tested often)


def test_sparse_pick_widens_by_priority_and_refuses_singular_picks():
    """Three equations. The preferred dummies (priority 0) are two columns, too few: the
    selection widens to priority 1 and picks a nonsingular set. Three preferred columns
    whose matching is perfect but numerically singular (column 2 = column 0 + column 1)
    and no others: no pick (splu refused it too)."""
    h = np.array([[1.0, 0.0, 1.0, 0.0],
                  [0.0, 1.0, 1.0, 0.0],
                  [1.0, 1.0, 0.0, 1.0]])
    prio = np.array([0, 0, 1, 1])
    picks = dummy._sparse_pick(_dm(h), prio, 3)
    assert picks is not None and len(set(picks)) == 3
    assert _splu_nonsingular(h[:, picks]) and any(prio[picks] == 1)
    h = np.array([[1.0, 0.0, 1.0],
                  [0.0, 1.0, 1.0],
                  [1.0, 1.0, 2.0]])
    assert not _splu_nonsingular(h)
    assert dummy._sparse_pick(_dm(h), np.zeros(3, dtype=int), 3) is None


def test_sparse_pick_on_random_blocks_as_scipy():
    """Random blocks (equations x candidates in three priority classes, random values):
    the picks are distinct candidates whose square matrix splu finds nonsingular, taken
    from the first classes where scipy's matching of the equations to the allowed
    candidates is perfect (for random values any perfect matching is nonsingular), and
    entries stored as zeros count as absent."""
    rng = np.random.default_rng(9)
    for _ in range(40):
        n = int(rng.integers(20, 200))
        m = n + int(rng.integers(0, n))
        a = _sprand(rng, n, m, 2.0 / m).toarray()
        a[np.arange(n), rng.choice(m, n, replace=False)] = rng.uniform(1.0, 2.0, n)
        prio = rng.integers(0, 3, m)
        first = None
        for level in np.unique(prio):
            allowed = np.flatnonzero(prio <= level)
            sub = sp.csr_matrix(a[:, allowed])
            if (maximum_bipartite_matching(sub, perm_type="column") >= 0).all():
                first = level
                break
        # an extra column of stored zeros among the preferred ones changes nothing
        h_dm = cs.horzcat(_dm(a), cs.DM(cs.Sparsity.dense(n, 1), 0.0))
        assert h_dm.nnz() == np.count_nonzero(a) + n
        picks = dummy._sparse_pick(h_dm, np.append(prio, -1), n)
        assert picks is not None and len(set(picks)) == n and m not in picks
        assert _splu_nonsingular(a[:, picks])
        assert first is not None and prio[picks].max() == first
