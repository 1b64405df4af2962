"""The largest eigenvalues behind the automatic integrator choice
(:mod:`acausal.solvers.arnoldi`), against numpy's dense eigenvalues of the same matrices:
random, stiff and diagonal, skew (every eigenvalue on the imaginary axis) and the
mass-spring chain's Jacobian, whose fastest modes are clustered."""

from __future__ import annotations

import numpy as np
import pytest

from acausal.solvers.arnoldi import largest_eigenvalues


def _chain(m: int, k: float = 1e3, d: float = 1.0) -> np.ndarray:
    """The Jacobian of ``m`` masses of 1 kg joined by springs ``k`` and dampers ``d``."""
    K = 2 * np.eye(m) - np.eye(m, k=1) - np.eye(m, k=-1)
    return np.block([[np.zeros((m, m)), np.eye(m)], [-k * K, -d * K]])


def _matrices(seed: int) -> list[tuple[str, np.ndarray]]:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(70, 260))
    skew = rng.normal(size=(n, n))
    return [
        ("random", rng.normal(size=(n, n))),
        ("stiff", np.diag(rng.normal(size=n) * np.geomspace(1.0, 1e4, n))
         + 0.01 * rng.normal(size=(n, n))),
        ("skew", skew - skew.T),
        ("chain", _chain(n // 2)),
    ]


@pytest.mark.parametrize("seed", range(6))
def test_largest_eigenvalues_are_numpys(seed):
    for kind, A in _matrices(seed):
        ref = np.linalg.eigvals(A)
        ref = ref[np.argsort(-np.abs(ref))]
        lam, converged = largest_eigenvalues(lambda v, A=A: A @ v, A.shape[0], k=8, tol=1e-3)
        assert converged and len(lam) in (8, 9), (kind, len(lam))
        # closed under conjugation (a real matrix), largest first
        np.testing.assert_allclose(np.sort_complex(lam), np.sort_complex(lam.conj()))
        assert np.all(np.diff(np.abs(lam)) <= 1e-12 * np.abs(lam[0])), kind
        # each value is an eigenvalue: the test of convergence bounds the residual by
        # 1e-3 |theta|; the eigenvalue's error is that times its condition number (the
        # damped chain is not normal): 2e-3 (1.9e-3 the worst of 120 matrices when
        # written, ARPACK's at the same tolerance 5.6e-3)
        gap = np.array([np.min(np.abs(ref - x)) for x in lam]) / np.abs(lam)
        assert gap.max() < 5e-3, (kind, gap.max())
        # and among the largest: the spectral radius to 1e-2 (the largest values of a
        # random matrix crowd its disc's edge, 4.8e-3 the worst when written; the rule
        # they serve compares rates by factors of 10 and 500)
        assert abs(np.abs(lam[0]) / np.abs(ref[0]) - 1) < 1e-2, kind


def test_same_matrix_same_values_and_an_invariant_subspace_is_exact():
    """A fixed start vector: two runs agree to the last bit (ARPACK's random start does
    not). A matrix of rank 3 closes its Krylov space after 4 products: the values are
    exact."""
    A = _chain(100)
    a, _ = largest_eigenvalues(lambda v: A @ v, 200)
    b, _ = largest_eigenvalues(lambda v: A @ v, 200)
    assert np.array_equal(a, b)
    rng = np.random.default_rng(1)
    U, W = rng.normal(size=(300, 3)), rng.normal(size=(3, 300))
    B = U @ W
    count = [0]

    def matvec(v):
        count[0] += 1
        return B @ v

    lam, converged = largest_eigenvalues(matvec, 300, k=8)
    ref = np.linalg.eigvals(W @ U)  # (the nonzero eigenvalues of U W)
    assert converged and count[0] <= 4
    # (rounding of a 300 x 300 product: 1e-12 of the largest)
    np.testing.assert_allclose(np.sort_complex(lam[:3]), np.sort_complex(ref),
                               atol=1e-12 * np.abs(ref).max())
    assert np.all(np.abs(lam[3:]) < 1e-12 * np.abs(ref).max())


def test_no_convergence_gives_the_converged_values_only():
    """Out of restarts, the values that met the tolerance and the flag (the choice then
    has fewer modes, or none: IDAS)."""
    A = np.random.default_rng(2).normal(size=(400, 400))
    lam, converged = largest_eigenvalues(lambda v: A @ v, 400, k=8, max_restarts=1)
    assert not converged and len(lam) < 8


def test_a_product_that_is_not_finite_gives_no_values():
    """A right-hand side that is NaN or infinite at the start point (a square root of a
    negative start value): no spectrum, and the choice keeps IDAS."""
    A = np.random.default_rng(4).normal(size=(100, 100))
    A[3, 7] = np.nan
    lam, converged = largest_eigenvalues(lambda v: A @ v, 100)
    assert not converged and lam.size == 0
