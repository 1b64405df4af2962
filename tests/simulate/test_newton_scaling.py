"""The algebraic Newton on badly scaled systems (acausal.solvers.newton).

A flexible link in a closed loop mixes stiffness rows of 1e9 N/m with length rows of 1 m:
the Jacobian's singular values lie 1e-19 apart although it is regular, and the rank test
(``_PIVOT_RATIO``) took the minimum-norm step, which drops genuine directions (Newton
stalled with residuals of 0.3 m in a four-bar whose plain Newton converges in 3 steps).
The rank test and the step are on the equilibrated matrix (rows, then columns, scaled to a
largest entry of 1). Checked here against closed forms on a hanging chain of stiff springs,
on every path of the step (numpy's dense solve, scipy's dense LU for a difference Jacobian,
scipy's sparse LU for an exact one), and that singular systems still take the minimum-norm
step."""

from __future__ import annotations

import casadi as cs
import numpy as np
import pytest

from acausal.solvers import newton

K1, E, A, M, G, L1, L2 = 1e9, 2.1e11, 1e-4, 2.0, 9.81, 0.4, 0.6  # SI units


def hanging_chain(n: int, jacobian: str) -> tuple[newton.AlgebraicSystem, np.ndarray,
                                                  np.ndarray]:
    """``n`` masses ``M`` hanging from a ceiling at y = 0, each on a link of a spring
    (stiffness ``K1``, free length ``L1``) in series with a steel bar (modulus ``E``,
    section ``A``, length ``L2``). Unknowns: the depths ``y_i`` of the masses and ``u_i``
    of the joints between spring and bar [m], the bars' axial stresses ``s_i`` [Pa]; rows
    the spring's force ``s_i A - K1 (u_i - y_{i-1} - L1)`` (entries 1e9 and 1e-4), the
    bar's elongation ``y_i - u_i - L2 (1 + s_i / E)`` (1 and 3e-12) and the balance of mass
    ``i``, ``(s_i - s_{i+1}) A - M G``: a regular Jacobian whose singular values lie 1e-13
    (one link) to 3e-15 (40 links) apart. Closed form: link ``i`` carries the ``n - i``
    masses below it, ``s_i = (n - i) M G / A``, and stretches by ``s_i A / K1 + s_i L2 /
    E``."""
    y, u, s = cs.SX.sym("y", n), cs.SX.sym("u", n), cs.SX.sym("s", n)
    rows = []
    for i in range(n):
        above = y[i - 1] if i else 0.0
        rows.append(s[i] * A - K1 * (u[i] - above - L1))
        rows.append(y[i] - u[i] - L2 * (1 + s[i] / E))
        rows.append((s[i] - (s[i + 1] if i + 1 < n else 0.0)) * A - M * G)
    system = newton.AlgebraicSystem(cs.vertcat(*rows), cs.vertcat(y, u, s),
                                    cs.SX.sym("a", 0), [f"row {k}" for k in range(3 * n)],
                                    jacobian=jacobian)
    stresses = (n - np.arange(n)) * M * G / A
    depths = np.cumsum(L1 + L2 + stresses * (A / K1 + L2 / E))
    return system, depths, stresses


def _start(n: int) -> np.ndarray:
    """The links at their free length and no stress: the guess a user gives."""
    y = (L1 + L2) * np.arange(1, n + 1)
    return np.concatenate([y, y - L2, np.zeros(n)])


def test_the_chain_is_too_badly_scaled_for_the_unscaled_rank_test():
    """The premise: unscaled, the regular Jacobian looks singular (ratio of singular
    values below _PIVOT_RATIO); equilibrated, it is well conditioned."""
    system, _, _ = hanging_chain(3, "exact")
    _, J = system._eval(_start(3), np.zeros(0))
    Jd = np.asarray(J.full())
    s = np.linalg.svd(Jd, compute_uv=False)
    assert s[-1] / s[0] < newton._PIVOT_RATIO  # measured 3e-14
    r, c = newton._equilibrate(Jd)
    s = np.linalg.svd(Jd * r[:, None] * c[None, :], compute_uv=False)
    assert s[-1] / s[0] > 1e-3  # measured 0.12 (0.01 at 40 links)


@pytest.mark.parametrize("n,jacobian", [(3, "exact"),           # numpy's dense solve
                                        (40, "difference"),     # scipy's dense LU
                                        (40, "exact")])         # scipy's sparse LU
def test_newton_converges_on_a_stiff_chain_to_the_closed_form(n, jacobian):
    system, depths, stresses = hanging_chain(n, jacobian)
    sol = system.solve(_start(n), np.zeros(0))
    # the stresses to the rounding of the spring rows (K1 * 1e-16 * 40 m ~ 4e-6 N, or
    # 0.04 Pa, against stresses of 2e5 to 8e6 Pa), the depths to the rounding of 40 m
    np.testing.assert_allclose(sol.w[2 * n:], stresses, rtol=1e-9)
    np.testing.assert_allclose(sol.w[:n], depths, rtol=0, atol=1e-13 * n)
    # linear rows: one step with the exact Jacobian (and a second to see the residual);
    # the difference Jacobian's relative error (~1e-8) converges linearly, one more
    assert sol.iterations <= (2 if jacobian == "exact" else 3)


@pytest.mark.parametrize("n,jacobian", [(3, "exact"), (40, "difference"), (40, "exact")])
def test_the_old_unscaled_step_fails_on_the_chain(n, jacobian, monkeypatch):
    """Without the equilibration (scales of 1, the code before it) the same solves stop
    with the balance rows unsolved (the minimum-norm step dropped the stresses'
    direction: residual M G = 19.6 N)."""
    monkeypatch.setattr(newton, "_equilibrate",
                        lambda J: (np.ones(J.shape[0]), np.ones(J.shape[1])))
    system, _, _ = hanging_chain(n, jacobian)
    with pytest.raises(newton.NewtonFailure, match="largest residual 19.6"):
        system.solve(_start(n), np.zeros(0))


@pytest.mark.parametrize("n", [5, 40])
def test_a_singular_system_still_takes_a_bounded_minimum_norm_step(n):
    """A free direction (an unknown in no row, a row repeated) stays a minimum-norm step
    after scaling: the free unknown is not moved and the consistent rows are solved."""
    x = cs.SX.sym("x", n)
    rows = [1e9 * (x[k] - k) for k in range(n - 2)]
    rows += [rows[0] / 1e9, 0 * x[n - 1]]  # a repeated row; x[n-1] in no row
    system = newton.AlgebraicSystem(cs.vertcat(*rows), x, cs.SX.sym("a", 0),
                                    [f"r{k}" for k in range(n)], jacobian="exact")
    w0 = np.full(n, 0.5)
    sol = system.solve(w0, np.zeros(0))
    np.testing.assert_allclose(sol.w[:n - 2], np.arange(n - 2), atol=1e-12)
    assert sol.w[n - 1] == 0.5  # the free unknown keeps its guess


def test_equilibration_leaves_zero_and_non_finite_lines_alone():
    """A zero row or column keeps scale 1 (the rank test must still see it singular),
    and the scales are powers of two (exact)."""
    J = np.array([[1e9, 0.0, 3.0], [0.0, 0.0, 0.0], [2e-6, 0.0, np.nan]])
    r, c = newton._equilibrate(J)
    assert r[1] == 1.0 and c[1] == 1.0
    assert np.all(np.isfinite(r)) and np.all(np.isfinite(c))
    assert np.all(np.log2(np.concatenate([r, c])) % 1 == 0)
