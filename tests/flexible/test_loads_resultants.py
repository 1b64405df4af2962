"""Distributed loads (beam line loads, shell pressure; consistent and lumped), load vectors
in the elastic coordinates, and stress resultants from the elastic coordinates, against
closed forms."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse.linalg as spla

from components.flexible import (
    BeamMesh,
    FEError,
    FEModel,
    FlexibleBodyData,
    Material,
    Section,
    ShellMesh,
    solve_static,
)

STEEL = Material(E=2.1e11, nu=0.3, rho=7800.0)
L = 1.0
Q_LINE = 2.0e3  # N/m


def _ss_midspan(n_el: int, lumped: bool) -> tuple[float, float]:
    """Midspan deflection of a pinned-pinned link under a uniform line load along y."""
    sec = Section.rectangle(0.04, 0.06)  # L/h = 25: shear adds 1.3 % (Timoshenko)
    mesh = BeamMesh.line((0, 0, 0), (L, 0, 0), n_el)
    body = FlexibleBodyData.from_mesh(mesh, STEEL, sec, modes=2, reference="pinned",
                                      reference_nodes=("start", "end"), cache=False)
    f = body.model.distributed_load((0.0, Q_LINE, 0.0), lumped=lumped)
    u = body.static_solver().solve(f)
    EI, kGA = STEEL.E * sec.Iz, sec.ky * STEEL.G * sec.A
    exact = 5 * Q_LINE * L**4 / (384 * EI) + Q_LINE * L**2 / (8 * kGA)
    return u[6 * (n_el // 2) + 1], exact


def test_line_load_consistent_is_nodally_exact_and_lumped_converges() -> None:
    w, exact = _ss_midspan(4, lumped=False)
    # interdependent Timoshenko element + consistent load: exact nodal values (round-off)
    assert w == pytest.approx(exact, rel=1e-10)
    e = [abs(_ss_midspan(n, lumped=True)[0] / exact - 1) for n in (4, 8, 16)]
    # lumped: O(h^2) from below (measured -5.0e-2, -1.2e-2, -3.1e-3; rate 2.00)
    assert e[-1] < 4e-3
    assert np.all(np.log2(np.array(e[:-1]) / np.array(e[1:])) > 1.9)


def test_distributed_load_resultants_and_element_selection() -> None:
    mesh = BeamMesh.line((0, 0, 0), (L, 0, 0), 8)
    body = FlexibleBodyData.from_mesh(mesh, STEEL, Section.circle(0.01), modes=3,
                                      reference="free", cache=False)
    t = np.array([0.0, 0.0, -Q_LINE])
    for lumped in (False, True):
        F, Mo = body.load_resultant(body.model.distributed_load(t, lumped=lumped))
        # total force q L and moment about the origin (x = L/2) x (q L): exact
        assert np.allclose(F, t * L, rtol=1e-13)
        assert np.allclose(Mo, np.cross([L / 2, 0, 0], t * L), rtol=1e-13, atol=1e-10)
        half = body.model.distributed_load(t, elements=np.arange(4), lumped=lumped)
        assert np.allclose(body.load_resultant(half)[0], t * L / 2, rtol=1e-13)
    with pytest.raises(FEError, match="distributed_load"):
        body.model.pressure_load(1.0)  # beams take line loads; the message says which


def _ss_plate_lumped(n: int) -> float:
    a, h, p = 1.0, 0.01, 1.0e3
    D = STEEL.E * h**3 / (12 * (1 - STEEL.nu**2))
    mod = FEModel(ShellMesh.rectangle(a, a, n, n, "union_jack"), STEEL, thickness=h)
    fixed = np.concatenate([
        mod.dofs("boundary", "uz"), mod.dofs("all", ["ux", "uy", "rz"]),
        mod.dofs("x0", "rx"), mod.dofs("x1", "rx"), mod.dofs("y0", "ry"), mod.dofs("y1", "ry")])
    f = mod.pressure_load(p, lumped=True)
    # resultant p * area whatever the variant
    assert f[2::6].sum() == pytest.approx(p * a * a, rel=1e-13)
    u = solve_static(mod.K, f, fixed)
    return u[6 * mod.mesh.node_set("centre")[0] + 2] / (p * a**4 / D)


def test_pressure_lumped_converges_to_navier() -> None:
    navier = 0.00406235
    e = np.array([abs(_ss_plate_lumped(n) / navier - 1) for n in (4, 8, 16)])
    # lumped pressure on DKT: O(h^2) from below like the consistent load (measured -4.3,
    # -1.3, -0.34 %; rates 1.72, 1.93)
    assert e[-1] < 5e-3
    assert np.all(np.log2(e[:-1] / e[1:]) > 1.6)


def test_modal_load_vector_of_a_pinned_link_is_the_sine_series() -> None:
    """Pinned modes of a straight link are sines; the modal static deflection under a
    uniform load is the truncated series sum 4 q L^4 / (EI pi^5 n^5) sin(n pi x / L)."""
    sec = Section(A=1e-4, Iy=4e-12, Iz=1e-12, J=3e-12, ky=math.inf, kz=math.inf)
    EI = STEEL.E * sec.Iz
    n_el = 32
    mesh = BeamMesh.line((0, 0, 0), (L, 0, 0), n_el)
    body = FlexibleBodyData.from_mesh(mesh, STEEL, sec, modes=10, reference="pinned",
                                      reference_nodes=("start", "end"), cache=False)
    fq = body.distributed_load((0.0, Q_LINE, 0.0))  # basis^T f, (k,)
    S = body.basis
    in_plane = np.abs(S[1::6]).max(0) > np.maximum(np.abs(S[2::6]).max(0),
                                                  np.abs(S[0::6]).max(0))
    # the load works only on the x-y bending modes
    assert np.abs(fq[~in_plane]).max() < 1e-12 * np.abs(fq).max()
    q = np.linalg.solve(body.K_ff, fq)
    n_modes = int(in_plane.sum())  # modes n = 1 .. n_modes
    odd = np.arange(1, n_modes + 1, 2)
    w_mid = body.phi_t(n_el // 2)[1] @ q
    series = sum(4 * Q_LINE * L**4 / (EI * math.pi**5 * n**5) * math.sin(n * math.pi / 2)
                 for n in odd)
    # FE modes = sines up to O(h^4) (measured 2e-10 with 32 elements and 6 modes)
    assert w_mid == pytest.approx(series, rel=1e-8)
    # bending moments at the element centres from the resultant map: Mz = EI v''
    xm = (np.arange(n_el) + 0.5) * L / n_el
    Mz = body.element_resultants(q)[:, 5]
    ref = -sum(4 * Q_LINE * L**2 / (math.pi**3 * n**3) * np.sin(n * math.pi * xm / L)
               for n in odd)
    # moment of the cubic element sampled at its centre: O(h^2), measured 3.9e-4
    assert np.allclose(Mz, ref, rtol=0, atol=1e-3 * np.abs(ref).max())
    R = body.resultant_matrix()
    assert R.shape == (n_el * 6, body.n_coordinates)
    s = body.element_resultants(q)
    assert np.allclose((R @ q).reshape(n_el, 6), s, rtol=0, atol=1e-10 * np.abs(s).max())


def test_beam_resultants_of_a_cantilever_are_exact() -> None:
    sec = Section.rectangle(0.03, 0.05)
    n_el = 5
    mesh = BeamMesh.line((0, 0, 0), (L, 0, 0), n_el)
    body = FlexibleBodyData.from_mesh(mesh, STEEL, sec, reference="clamped",
                                      reference_nodes="start", reduction="nodal", cache=False)
    Fx, Py, Pz, T = 1.0e3, 200.0, -300.0, 40.0
    fq = body.point_load("end", force=(Fx, Py, Pz), moment=(T, 0.0, 0.0))
    q = spla.spsolve(body.K_ff.tocsc(), fq)
    s = np.asarray(body.resultant_matrix() @ q).reshape(n_el, 6)
    xm = (np.arange(n_el) + 0.5) * L / n_el
    ref = np.column_stack([np.full(n_el, Fx), np.full(n_el, Py), np.full(n_el, Pz),
                           np.full(n_el, T), -Pz * (L - xm), Py * (L - xm)])
    # the element interpolation is exact for tip loads: round-off only
    assert np.allclose(s, ref, rtol=0, atol=1e-9 * np.abs(ref).max())
    assert body.model.element.resultant_names == ("N", "Vy", "Vz", "T", "My", "Mz")


def test_shell_resultants_of_constant_strain_and_curvature_are_exact() -> None:
    h = 0.01
    mesh = ShellMesh.rectangle(0.3, 0.2, 3, 2, "crossed")  # plate in the x-y plane
    mod = FEModel(mesh, STEEL, thickness=h)
    x, y = mesh.nodes[:, 0], mesh.nodes[:, 1]
    ex, ey, gxy = 1e-4, -2e-4, 3e-4
    kx, ky, kxy = 1e-2, -0.5e-2, 0.3e-2
    u = np.zeros(mod.n_dofs)
    u[0::6] = ex * x + 0.5 * gxy * y
    u[1::6] = ey * y + 0.5 * gxy * x
    u[2::6] = 0.5 * (kx * x**2 + ky * y**2) + kxy * x * y
    u[3::6] = ky * y + kxy * x  # theta_x = w,y
    u[4::6] = -(kx * x + kxy * y)  # theta_y = -w,x
    s = mod.element_resultants(u)
    C = STEEL.E / (1 - STEEL.nu**2) * np.array([[1, STEEL.nu, 0], [STEEL.nu, 1, 0],
                                                [0, 0, (1 - STEEL.nu) / 2]])
    N = h * C @ [ex, ey, gxy]
    M = h**3 / 12 * C @ [-kx, -ky, -2 * kxy]  # curvatures (beta_x,x, beta_y,y, ...)
    # constant strain and curvature are represented exactly (patch tests): round-off
    assert np.allclose(s[:, :3], N, rtol=0, atol=1e-9 * np.abs(N).max())
    assert np.allclose(s[:, 3:], M, rtol=0, atol=1e-9 * np.abs(M).max())
