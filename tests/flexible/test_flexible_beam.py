"""Timoshenko beam element: closed-form element matrices, statics, frequencies, rates."""

from __future__ import annotations

import math

import numpy as np
import pytest

from components.flexible import (
    BeamMesh,
    FEError,
    FEModel,
    Material,
    Section,
    TimoshenkoBeam3D,
    beam_frames,
    eigenmodes,
    solve_static,
)

STEEL = Material(E=2.1e11, nu=0.3, rho=7800.0)


def _przemieniecki(EI: float, phi: float, L: float, sign: float) -> np.ndarray:
    """Przemieniecki's shear-deformable bending stiffness (sign=-1 for the x-z plane)."""
    s = sign
    return EI / ((1 + phi) * L**3) * np.array([
        [12, s * 6 * L, -12, s * 6 * L],
        [s * 6 * L, (4 + phi) * L**2, -s * 6 * L, (2 - phi) * L**2],
        [-12, -s * 6 * L, 12, -s * 6 * L],
        [s * 6 * L, (2 - phi) * L**2, -s * 6 * L, (4 + phi) * L**2]])


def test_stiffness_equals_przemieniecki_closed_form() -> None:
    sec = Section.rectangle(0.05, 0.12)
    el = TimoshenkoBeam3D(STEEL, sec)
    L = 0.37
    K = el.local_stiffness(np.array([L]))[0]
    for idx, EI, k, sign in (([1, 5, 7, 11], STEEL.E * sec.Iz, sec.ky, 1.0),   # x-y plane
                             ([2, 4, 8, 10], STEEL.E * sec.Iy, sec.kz, -1.0)):  # x-z plane
        phi = 12 * EI / (k * STEEL.G * sec.A * L**2)
        ref = _przemieniecki(EI, phi, L, sign)
        # 1e-12: both are exact rational expressions, only round-off separates them
        assert np.allclose(K[np.ix_(idx, idx)], ref, rtol=1e-12, atol=1e-12 * np.abs(ref).max())
    assert K[0, 0] == pytest.approx(STEEL.E * sec.A / L, rel=1e-13)
    assert K[3, 3] == pytest.approx(STEEL.G * sec.J / L, rel=1e-13)


def test_mass_reduces_to_euler_bernoulli_consistent_mass() -> None:
    """Shear-rigid section without rotary inertia -> classical (mL/420) Hermite matrix."""
    sec = Section(A=1e-2, Iy=1e-20, Iz=1e-20, J=1e-20, ky=math.inf, kz=math.inf)
    el = TimoshenkoBeam3D(STEEL, sec)
    L = 0.8
    X = np.array([[[0.0, 0.0, 0.0], [L, 0.0, 0.0]]])  # one element, nodes (E, 2, 3)
    M = el.mass(X, el.frames(X))[0]
    mL = STEEL.rho * sec.A * L
    ref = mL / 420 * np.array([[156, 22 * L, 54, -13 * L], [22 * L, 4 * L**2, 13 * L, -3 * L**2],
                               [54, 13 * L, 156, -22 * L], [-13 * L, -3 * L**2, -22 * L, 4 * L**2]])
    # 1e-12: exact 4-point Gauss integration of cubic x cubic; rotary terms are 1e-18 relative
    assert np.allclose(M[np.ix_([1, 5, 7, 11], [1, 5, 7, 11])], ref, rtol=1e-12, atol=1e-12 * mL)
    assert np.allclose(M[np.ix_([0, 6], [0, 6])], mL / 6 * np.array([[2, 1], [1, 2]]), rtol=1e-12)


def test_lumped_mass_is_hrz() -> None:
    sec = Section(A=1e-2, Iy=1e-20, Iz=1e-20, J=1e-20, ky=math.inf, kz=math.inf)
    el = TimoshenkoBeam3D(STEEL, sec)
    L = 0.8
    X = np.array([[[0.0, 0.0, 0.0], [L, 0.0, 0.0]]])
    M = el.mass(X, el.frames(X), lumped=True)[0]
    mL = STEEL.rho * sec.A * L
    assert np.allclose(M, np.diag(np.diag(M)), atol=1e-14 * mL)
    # HRZ of the Hermite matrix: m/2 per node and m L^2 / 78 on the bending rotations
    assert np.diag(M)[[0, 1, 2, 6, 7, 8]] == pytest.approx([mL / 2] * 6, rel=1e-12)
    assert np.diag(M)[[4, 5, 10, 11]] == pytest.approx([mL * L**2 / 78] * 4, rel=1e-12)


@pytest.mark.parametrize("slenderness", [3.0, 1000.0])
def test_single_element_tip_deflection_is_exact_incl_shear(slenderness: float) -> None:
    """One element reproduces P L^3/3EI + P L/kGA: no shear locking at any slenderness."""
    L = 1.0
    sec = Section.rectangle(0.5 * L / slenderness, L / slenderness)
    mesh = BeamMesh.line((0, 0, 0), (L, 0, 0), 1)
    mod = FEModel(mesh, STEEL, section=sec)
    P = 1.0e3
    u = solve_static(mod.K, mod.point_load("end", force=(0, P, P)), mod.dofs("start"))
    e = 6 * mesh.node_set("end")[0]
    vy = P * L**3 / (3 * STEEL.E * sec.Iz) + P * L / (sec.ky * STEEL.G * sec.A)
    wz = P * L**3 / (3 * STEEL.E * sec.Iy) + P * L / (sec.kz * STEEL.G * sec.A)
    # 1e-10: the interpolation is exact for this load case; only round-off remains
    assert u[e + 1] == pytest.approx(vy, rel=1e-10)
    assert u[e + 2] == pytest.approx(wz, rel=1e-10)
    assert u[e + 5] == pytest.approx(P * L**2 / (2 * STEEL.E * sec.Iz), rel=1e-10)
    assert u[e + 4] == pytest.approx(-P * L**2 / (2 * STEEL.E * sec.Iy), rel=1e-10)


def test_torsion_and_axial_statics_exact() -> None:
    sec = Section.tube(0.03, 0.025)
    mesh = BeamMesh.line((0, 0, 0), (1.5, 1.0, -0.5), 3)  # skew beam: checks rotations
    mod = FEModel(mesh, STEEL, section=sec)
    ex = mod.frames[0, 0]
    L = float(np.linalg.norm([1.5, 1.0, -0.5]))
    u = solve_static(mod.K, mod.point_load("end", force=1e4 * ex, moment=50.0 * ex),
                     mod.dofs("start"))
    e = 6 * mesh.node_set("end")[0]
    # 1e-10: linear elements are exact for constant axial force / torque
    assert u[e:e + 3] @ ex == pytest.approx(1e4 * L / (STEEL.E * sec.A), rel=1e-10)
    assert u[e + 3:e + 6] @ ex == pytest.approx(50.0 * L / (STEEL.G * sec.J), rel=1e-10)


def _cantilever_beta_l_squared(n_el: int) -> np.ndarray:
    L = 1.0
    sec = Section.rectangle(1e-3, 1e-3)  # L/h = 1000: shear/rotary effects ~1e-7
    mesh = BeamMesh.line((0, 0, 0), (L, 0, 0), n_el)
    mod = FEModel(mesh, STEEL, section=sec)
    fixed = np.concatenate([mod.dofs("start"), mod.dofs("all", ["ux", "uz", "rx", "ry"])])
    md = eigenmodes(mod.K, mod.M, 3, fixed)
    return md.omega * np.sqrt(STEEL.rho * sec.A / (STEEL.E * sec.Iz)) * L**2


EB_CANTILEVER = np.array([3.5160, 22.034, 61.697])  # (beta L)^2, Euler-Bernoulli tables


def test_slender_cantilever_frequencies_20_elements() -> None:
    bl2 = _cantilever_beta_l_squared(20)
    # issue target: first three within 0.5 %; the tabulated values carry 5 digits, so
    # agreement can only be checked to ~1e-4 relative -> assert 2e-4 (far inside 0.5 %)
    assert np.all(np.abs(bl2 / EB_CANTILEVER - 1) < 2e-4)


def test_slender_cantilever_convergence_rate_is_fourth_order() -> None:
    exact = np.array([1.875104069, 4.694091133, 7.854757438]) ** 2  # roots of cos cosh = -1
    e4 = np.abs(_cantilever_beta_l_squared(4) / exact - 1)
    e8 = np.abs(_cantilever_beta_l_squared(8) / exact - 1)
    rates = np.log2(e4 / e8)
    # cubic Hermite limit: frequency error O(h^4); measured 4.6, 4.0, 3.7
    assert np.all(rates > 3.5)


def _timoshenko_ss(n: int, L: float, EI: float, kGA: float, rhoA: float, rhoI: float) -> float:
    """Exact lowest-branch frequency [rad/s] of a simply supported Timoshenko beam."""
    al = n * math.pi / L
    a = rhoI * rhoA / kGA
    b = -(rhoA + rhoI * al**2 + EI * al**2 * rhoA / kGA)
    c = EI * al**4
    return math.sqrt((-b - math.sqrt(b * b - 4 * a * c)) / (2 * a))


def _stocky_ss(n_el: int) -> tuple[np.ndarray, np.ndarray]:
    L = 1.0
    sec = Section.rectangle(0.1, 0.2)  # L/h = 5 in the x-z plane
    mesh = BeamMesh.line((0, 0, 0), (L, 0, 0), n_el)
    mod = FEModel(mesh, STEEL, section=sec)
    fixed = np.concatenate([mod.dofs("start", ["uz"]), mod.dofs("end", ["uz"]),
                            mod.dofs("all", ["ux", "uy", "rx", "rz"])])
    md = eigenmodes(mod.K, mod.M, 3, fixed)
    ref = np.array([_timoshenko_ss(n, L, STEEL.E * sec.Iy, sec.kz * STEEL.G * sec.A,
                                   STEEL.rho * sec.A, STEEL.rho * sec.Iy) for n in (1, 2, 3)])
    return md.omega, ref


def test_stocky_beam_matches_timoshenko_theory() -> None:
    om16, ref = _stocky_ss(16)
    # Euler-Bernoulli would be 6 %, 22 %, 44 % too high here; Timoshenko closed form
    # matched to 0.6 % (mode 3, measured 0.60 %) with 16 elements
    assert np.all(np.abs(om16 / ref - 1) < [2e-4, 2e-3, 7e-3])
    om32, _ = _stocky_ss(32)
    rates = np.log2(np.abs(om16 / ref - 1) / np.abs(om32 / ref - 1))
    # elements shorter than the depth (Phi = 12EI/kGAl^2 >> 1) are shear dominated:
    # the deflection interpolation degenerates to linear -> O(h^2) (measured 2.02, 2.0, 2.0)
    assert np.all(rates > 1.8)


def test_axial_and_torsion_modes_and_rate() -> None:
    L = 2.0
    sec = Section.circle(0.02)

    def freqs(n_el: int) -> tuple[np.ndarray, np.ndarray]:
        mesh = BeamMesh.line((0, 0, 0), (L, 0, 0), n_el)
        mod = FEModel(mesh, STEEL, section=sec)
        axial = eigenmodes(mod.K, mod.M, 2, np.concatenate(
            [mod.dofs("start"), mod.dofs("all", ["uy", "uz", "rx", "ry", "rz"])]))
        tors = eigenmodes(mod.K, mod.M, 2, np.concatenate(
            [mod.dofs("start"), mod.dofs("all", ["ux", "uy", "uz", "ry", "rz"])]))
        return axial.frequencies, tors.frequencies

    ra = np.array([1, 3]) / (4 * L) * math.sqrt(STEEL.E / STEEL.rho)
    rt = np.array([1, 3]) / (4 * L) * math.sqrt(STEEL.G * sec.J / (STEEL.rho * sec.Ip))
    a20, t20 = freqs(20)
    a40, t40 = freqs(40)
    # linear elements + consistent mass: error ~ (k h)^2 / 24 -> 2.6e-4 for mode 1 at 20 el.
    assert np.all(np.abs(a20 / ra - 1) < [5e-4, 3e-3])
    assert np.all(np.abs(t20 / rt - 1) < [5e-4, 3e-3])
    rate = np.log2(np.abs(a20 / ra - 1) / np.abs(a40 / ra - 1))
    assert np.all(np.abs(rate - 2.0) < 0.1)  # second order (measured 2.000, 2.003)


def test_euler_buckling_with_shear_correction() -> None:
    import scipy.linalg as sla

    L = 1.0
    sec = Section.rectangle(1e-2, 1e-2)
    mesh = BeamMesh.line((0, 0, 0), (L, 0, 0), 8)
    mod = FEModel(mesh, STEEL, section=sec)
    KG = mod.geometric_stiffness(forces=-1.0)  # unit compression
    free = np.setdiff1d(np.arange(mod.n_dofs), mod.dofs("start"))
    ev = sla.eig(mod.K.toarray()[np.ix_(free, free)], -KG.toarray()[np.ix_(free, free)],
                 right=False)
    ev = np.sort(np.real(ev[np.isfinite(ev) & (np.real(ev) > 0)]))
    pe = math.pi**2 * STEEL.E * sec.Iz / (4 * L**2)
    pcr = pe / (1 + pe / (sec.ky * STEEL.G * sec.A))  # Engesser shear correction
    # cubic interpolation of the buckled shape: error O(h^4) -> ~1e-6 with 8 elements
    assert ev[0] == pytest.approx(pcr, rel=1e-5)


# Flapwise frequency parameter of a rotating cantilever (hub radius 0), omega L^2 sqrt(rhoA/EI),
# Wright, Smith, Thompson & Worley (1982) / Hodges & Rutkowski (1981); we re-derived the
# values to 5 digits with an independent Chebyshev collocation of the rotating-beam ODE.
ROTATING = {0: (3.5160, 22.0345), 1: (3.6816, 22.1810), 2: (4.1373, 22.6149),
            5: (6.4495, 25.4461), 10: (11.2023, 33.6404)}


def _rotating(spin: float, n_el: int) -> tuple[np.ndarray, np.ndarray]:
    from components.flexible import compute_invariants

    L = 1.0
    sec = Section.rectangle(1e-3, 1e-3)
    EI, rA = STEEL.E * sec.Iz, STEEL.rho * sec.A
    mesh = BeamMesh.line((0, 0, 0), (L, 0, 0), n_el)
    mod = FEModel(mesh, STEEL, section=sec)
    inv = compute_invariants(mod.mass_points, mod.element_dofs, mod.n_dofs)
    omega = np.array([0.0, 0.0, spin * math.sqrt(EI / rA) / L**2])
    fixed = mod.dofs("start")
    K = mod.K + mod.centrifugal_stiffness(omega, fixed) + inv.spin_softening(omega)
    md = eigenmodes(K, mod.M, 8, fixed)
    S = md.shapes
    p = md.omega * L**2 * math.sqrt(rA / EI)
    flap = np.abs(S[2::6]).max(0) > np.abs(S[1::6]).max(0)
    lag = ~flap & (np.abs(S[1::6]).max(0) > np.abs(S[0::6]).max(0))
    return p[flap][:2], p[lag][:2]


@pytest.mark.parametrize("spin", [1, 5, 10])
def test_rotating_cantilever_centrifugal_stiffening(spin: int) -> None:
    flap, lag = _rotating(spin, 40)
    ref = np.array(ROTATING[spin])
    # 2.5e-4: published values have 5 significant digits (<= 1.5e-5 rel.); the FE error
    # with 40 elements (element-constant axial force, O(h^2)) is measured <= 1.7e-4
    assert np.all(np.abs(flap / ref - 1) < 2.5e-4)
    # lead-lag: same operator shifted by the spin softening, p_lag^2 = p_flap^2 - spin^2
    assert np.all(np.abs(lag / np.sqrt(ref**2 - spin**2) - 1) < 2.5e-4)


def test_rotating_cantilever_stiffening_converges_second_order() -> None:
    p10, _ = _rotating(10, 10)
    p20, _ = _rotating(10, 20)
    p40, _ = _rotating(10, 40)
    rate = np.log2(np.abs(p10 - p20) / np.abs(p20 - p40))
    # element-constant axial force -> O(h^2) (self-convergence, measured 1.98, 2.03)
    assert np.all(rate > 1.8)


def test_section_helpers() -> None:
    c = Section.circle(0.1)
    assert c.Iy == pytest.approx(math.pi * 0.1**4 / 4, rel=1e-15)
    assert c.J == pytest.approx(math.pi * 0.1**4 / 2, rel=1e-15)
    assert c.ky == pytest.approx(6 * 1.3 / 8.8, rel=1e-15)  # Cowper, nu = 0.3
    t = Section.tube(0.1, 0.0)
    assert t.A == pytest.approx(c.A) and t.ky == pytest.approx(c.ky)
    sq = Section.rectangle(1.0, 1.0)
    # Saint-Venant torsion constant of a square: 0.140577 a^4 (Timoshenko & Goodier)
    assert sq.J == pytest.approx(0.140577, rel=5e-6)
    r = Section.rectangle(0.02, 0.2)
    # strip a/b = 10: J / (a b^3) = 0.312 (Timoshenko & Goodier table, 3 digits -> +-1.6e-3)
    assert r.J / (0.2 * 0.02**3) == pytest.approx(0.312, rel=1.7e-3)


def test_errors_name_the_culprit() -> None:
    with pytest.raises(FEError, match="Section.A"):
        Section(A=0.0, Iy=1, Iz=1, J=1)
    with pytest.raises(FEError, match="nu"):
        Material(E=1e9, nu=0.6, rho=1000)
    with pytest.raises(FEError, match="element 1 has zero length"):
        FEModel(BeamMesh([[0, 0, 0], [1, 0, 0], [1, 0, 0]], [[0, 1], [1, 2]]), STEEL,
                section=Section.circle(0.01))
    with pytest.raises(FEError, match="parallel"):
        beam_frames(np.zeros((1, 3)), np.array([[0, 0, 1.0]]), zref=[0, 0, 1])
    with pytest.raises(FEError, match="section"):
        FEModel(BeamMesh.line((0, 0, 0), (1, 0, 0), 2), STEEL)
    # (a line of coincident ends was a mesh of zero-length elements, found by the element)
    with pytest.raises(FEError, match="a beam needs two distinct, finite end points"):
        BeamMesh.line((1, 0, 0), (1, 0, 0), 4)
    with pytest.raises(FEError, match="a beam needs two distinct, finite end points"):
        BeamMesh.line((0, 0, 0), (math.nan, 0, 0), 4)
