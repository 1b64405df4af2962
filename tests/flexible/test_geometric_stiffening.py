"""Geometric stiffening data (SID-style unit-load matrices) for every reference condition:
rotating cantilever vs published tables and the Southwell coefficient, pinned-pinned
column under axial load, inertia-relief pre-stress of a free body, symbolic use."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.linalg as sla

from components.flexible import (
    BeamMesh,
    FlexibleBodyData,
    Material,
    Section,
    ShellMesh,
    solve_static,
)

STEEL = Material(E=2.1e11, nu=0.3, rho=7800.0)
L = 1.0

# Flapwise frequency parameter p = omega L^2 sqrt(rho A / EI) of a uniform rotating
# cantilever, hub radius 0, spin parameter s = Omega L^2 sqrt(rho A / EI): Wright, Smith,
# Thompson & Worley (1982) and Hodges & Rutkowski (1981). We verified every value to 6
# digits with an independent Chebyshev collocation (60 points) of
# (EI w'')'' - (N w')' = rho A omega^2 w, N = rho A Omega^2 (L^2 - x^2)/2:
# 3.516018, 3.681647, 4.137317, 6.449546, 11.202329.
ROTATING = {0: 3.5160, 1: 3.6816, 2: 4.1373, 5: 6.4495, 10: 11.2023}
# Southwell coefficient of the first flap mode, omega^2 = omega_0^2 + K_S Omega^2 for small
# Omega (first-order perturbation, the Rayleigh quotient of the cantilever mode,
# int (1 - xi^2)/2 phi'^2 / int phi^2 = 1.19334 by quadrature; tabulated as 1.193).
SOUTHWELL = 1.19334


def _flap(reduction: str, n_el: int, spin: float, modes: int = 24) -> float:
    sec = Section.rectangle(1e-3, 1e-3)  # L/h = 1000
    EI, rA = STEEL.E * sec.Iz, STEEL.rho * sec.A
    mesh = BeamMesh.line((0, 0, 0), (L, 0, 0), n_el)
    body = FlexibleBodyData.from_mesh(mesh, STEEL, sec, modes=modes, reference="clamped",
                                      reference_nodes="start", reduction=reduction,
                                      stiffening=True)
    gs = body.geometric_stiffening
    assert gs is not None
    w = np.array([0.0, 0.0, spin * math.sqrt(EI / rA) / L**2])  # spin about z, flap along z
    K = body.K_ff + gs.stiffness(gs.coefficients(omega=w)) + body.invariants.spin_softening(w)
    K = K.toarray() if hasattr(K, "toarray") else K
    M = body.M_ff.toarray() if hasattr(body.M_ff, "toarray") else body.M_ff
    lam, V = sla.eigh(K, M)
    S = body.basis @ V
    flap = np.abs(S[2::6]).max(0) > np.abs(S[1::6]).max(0)
    return float(np.sqrt(lam[flap][0]) * L**2 * math.sqrt(rA / EI))


@pytest.mark.parametrize("spin", [1, 2, 5, 10])
def test_rotating_cantilever_matches_published_flap_frequencies(spin: int) -> None:
    p = _flap("modal", 40, spin)
    # 1e-4: the tables carry 5 digits (<= 1.4e-5); FE error (element-constant axial force,
    # O(h^2)) and 24-mode truncation measured <= 3.3e-5 at 40 elements
    assert p == pytest.approx(ROTATING[spin], rel=1e-4)


def test_rotating_cantilever_stiffening_converges_second_order() -> None:
    exact = 11.202329  # spin 10, independent collocation (see ROTATING)
    err = [abs(_flap("nodal", n, 10) / exact - 1) for n in (10, 20, 40)]
    rates = np.log2(np.array(err[:-1]) / np.array(err[1:]))
    # axial force constant per element -> O(h^2); measured 2.0, 2.05
    assert np.all(rates > 1.8)


def _southwell(n_el: int) -> float:
    sec = Section.rectangle(1e-3, 1e-3)
    mesh = BeamMesh.line((0, 0, 0), (L, 0, 0), n_el)
    body = FlexibleBodyData.from_mesh(mesh, STEEL, sec, modes=6, reference="clamped",
                                      reference_nodes="start", stiffening=True)
    gs = body.geometric_stiffening
    assert gs is not None
    KG = gs.stiffness(gs.coefficients(omega=(0.0, 0.0, 1.0)))  # per Omega^2 = 1
    S = body.basis
    j = int(np.flatnonzero(np.abs(S[2::6]).max(0) > np.abs(S[1::6]).max(0))[0])  # 1st flap
    # mass-normalised modes: d(omega^2)/d(Omega^2) = K_G,jj (first-order perturbation)
    return float(KG[j, j])


def test_southwell_coefficient_from_the_unit_load_matrices() -> None:
    """The unit centrifugal matrices in modal coordinates give K_S directly."""
    e20, e40 = (abs(_southwell(n) / SOUTHWELL - 1) for n in (20, 40))
    # O(h^2) (element-constant axial force): measured 1.3e-4 at 40 elements, rate 2.0
    assert e40 < 2e-4
    assert math.log2(e20 / e40) > 1.8


def _column(n_el: int) -> tuple[FlexibleBodyData, float]:
    # shear-rigid slender link between two pins, weak axis z
    sec = Section(A=1e-4, Iy=4e-12, Iz=1e-12, J=3e-12, ky=math.inf, kz=math.inf)
    mesh = BeamMesh.line((0, 0, 0), (L, 0, 0), n_el)
    body = FlexibleBodyData.from_mesh(mesh, STEEL, sec, modes=6, reference="pinned",
                                      reference_nodes=("start", "end"), stiffening=True,
                                      cache=False)
    return body, math.pi**2 * STEEL.E * sec.Iz / L**2


@pytest.mark.parametrize("load_ratio", [-1.0, 0.5, 0.9])
def test_pinned_column_frequency_under_axial_load(load_ratio: float) -> None:
    """omega^2 = omega_0^2 (1 - P / P_cr) for a simply supported column (P > 0 compression)."""
    errs = []
    for n_el in (8, 16):
        body, pcr = _column(n_el)
        gs = body.geometric_stiffening
        assert gs is not None and gs.attachment_nodes == (0, n_el)
        P = load_ratio * pcr
        # force on the body at B along the chord: -P (pushes B towards A)
        loads = [np.zeros(6), np.array([-P, 0.0, 0.0, 0.0, 0.0, 0.0])]
        K = body.K_ff + gs.stiffness(gs.coefficients(attachment_loads=loads))
        lam = sla.eigh(K, body.M_ff, eigvals_only=True)
        om0 = 2 * np.pi * body.frequencies[0]
        errs.append(abs(lam[0] / (om0**2 * (1 - load_ratio)) - 1))
    # mode and buckling shape are the same sine: only the FE error of P_cr remains, O(h^4)
    # (measured 1.0e-6 and 1.9e-5 for 16 elements at P/P_cr = 0.5 and 0.9)
    assert errs[1] < 5e-5
    assert math.log2(errs[0] / errs[1]) > 3.8


def test_free_body_inertia_relief_prestress() -> None:
    """A free bar pushed at one end: N(x) = -F (1 - x/L); spinning about its middle
    (axis z): N(x) = rho A Omega^2 (L^2/4 - (x - L/2)^2) / 2."""
    sec = Section.rectangle(0.02, 0.01)
    n = 10
    mesh = BeamMesh.line((0, 0, 0), (L, 0, 0), n)
    body = FlexibleBodyData.from_mesh(mesh, STEEL, sec, modes=4, reference="free",
                                      attachment_nodes=["start"], stiffening=True,
                                      cache=False)
    gs = body.geometric_stiffening
    assert gs is not None
    U = gs.displacements
    push = U[:, gs.names.index("node 0 force x")]
    N = body.model.element_resultants(push)[:, 0]
    xm = (np.arange(n) + 0.5) * L / n
    # linear bar elements with consistent loads: element N = exact element average,
    # and N is linear here, so exact at mid-element (round-off)
    assert np.allclose(N, -(1 - xm), rtol=0, atol=1e-10)
    # unit spin about z through the body origin (node 0): it differs from the spin about
    # the centre by a uniform (rigid) acceleration field, which inertia relief removes
    c = gs.coefficients(omega=(0.0, 0.0, 1.0))
    u = U[:, :6] @ np.asarray(c[:6])
    N = body.model.element_resultants(u)[:, 0]
    rA = STEEL.rho * sec.A
    a, b = xm - L / (2 * n), xm + L / (2 * n)
    F = lambda x: rA / 2 * (L**2 / 4 * x - (x - L / 2) ** 3 / 3)  # noqa: E731
    avg = (F(b) - F(a)) / (b - a)  # exact element average of the quadratic N(x)
    assert np.allclose(N, avg, rtol=0, atol=1e-10 * np.abs(avg).max())
    # the mean-axis pre-stress displacement has no rigid content
    R = body.model.rigid_body_modes()
    assert np.abs(R.T @ body.model.M @ U).max() < 1e-10 * np.abs(R.T @ body.model.M @ R).max()


def test_shell_clamped_tables_match_direct_prestress_solve() -> None:
    """Every unit case equals a direct solve: panel clamped at its hinge, attachment corner."""
    mesh = ShellMesh.rectangle(1.0, 1.0, 4, 4, "union_jack", plane="xz")
    body = FlexibleBodyData.from_mesh(mesh, STEEL, thickness=0.005, modes=5, reference="clamped",
                                      reference_nodes="x0", attachment_nodes=["corner_11"],
                                      stiffening=True, cache=False)
    gs = body.geometric_stiffening
    assert gs is not None and gs.n_cases == 18
    mod = body.model
    rng = np.random.default_rng(5)
    w, al, a = rng.normal(size=3), rng.normal(size=3), rng.normal(size=3)
    fm = rng.normal(size=6) * 10
    c = gs.coefficients(omega=w, angular_acceleration=al, acceleration=a,
                        gravity=(0, 0, -9.81), attachment_loads=[fm])
    # the same pre-stress from one direct static solve with all loads at once
    W = np.outer(w, w) - w @ w * np.eye(3)
    from components.flexible.linalg import skew
    f = (mod.acceleration_field_load(W + skew(al)) + mod.body_force_load(-(a - [0, 0, -9.81]))
         + mod.point_load("corner_11", fm[:3], fm[3:]))
    u = solve_static(mod.K, f, body.fixed_dofs)
    KG = body.basis.T @ (mod.geometric_stiffness(u=u) @ body.basis)
    # linear superposition of 18 tables vs one solve: round-off
    assert np.allclose(gs.stiffness(c), KG, rtol=0, atol=1e-9 * np.abs(KG).max())
    # legacy centrifugal view agrees
    assert np.allclose(body.centrifugal_stiffness(w), gs.stiffness(c[:6] + [0.0] * 12),
                       rtol=0, atol=1e-12 * np.abs(KG).max())


def test_coefficients_and_stiffness_are_symbolic_with_casadi() -> None:
    ca = pytest.importorskip("casadi")
    body, _ = _column(6)
    gs = body.geometric_stiffening
    assert gs is not None
    w, al = ca.SX.sym("w", 3), ca.SX.sym("alpha", 3)
    a, F = ca.SX.sym("a", 3), ca.SX.sym("F", 12)
    c = gs.coefficients(omega=w, angular_acceleration=al, acceleration=a,
                        attachment_loads=[F[0:6], F[6:12]])
    fun = ca.Function("KG", [w, al, a, F], [gs.stiffness(c)])
    vals = [np.array([0.3, -1.0, 2.0]), np.array([0.1, 0.2, -0.3]), np.array([1.0, 0.0, -2.0]),
            np.arange(12.0)]
    num = gs.stiffness(gs.coefficients(*vals[:3], attachment_loads=[vals[3][:6],
                                                                    vals[3][6:]]))
    assert np.allclose(np.asarray(fun(*vals)), num, rtol=1e-12, atol=1e-12 * np.abs(num).max())
