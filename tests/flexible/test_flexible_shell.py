"""DKT + Allman flat shell: patch tests, plate bending, plate frequencies, membrane modes."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from components.flexible import (
    DKTShell,
    FEError,
    FEModel,
    Material,
    ShellMesh,
    eigenmodes,
    shell_frames,
    solve_static,
)

STEEL = Material(E=2.1e11, nu=0.3, rho=7800.0)


def _rotation(ax: float, ay: float, az: float) -> np.ndarray:
    cx, sx, cy, sy, cz, sz = (math.cos(ax), math.sin(ax), math.cos(ay), math.sin(ay),
                              math.cos(az), math.sin(az))
    Rx = np.array([[1, 0, 0], [0, cx, -sx], [0, sx, cx]])
    Ry = np.array([[cy, 0, sy], [0, 1, 0], [-sy, 0, cy]])
    Rz = np.array([[cz, -sz, 0], [sz, cz, 0], [0, 0, 1]])
    return Rz @ Ry @ Rx


def _patch(Q: np.ndarray) -> tuple[ShellMesh, np.ndarray]:
    """MacNeal-Harder style irregular patch (0.24 x 0.12), 10 triangles, rotated by Q."""
    P = np.array([[0, 0], [0.24, 0], [0.24, 0.12], [0, 0.12],
                  [0.04, 0.02], [0.18, 0.03], [0.16, 0.08], [0.08, 0.08]])
    quads = [(0, 1, 5, 4), (1, 2, 6, 5), (2, 3, 7, 6), (3, 0, 4, 7), (4, 5, 6, 7)]
    tris = []
    for a, b, c, d in quads:
        tris += [(a, b, c), (a, c, d)]
    X = np.column_stack([P, np.zeros(len(P))]) @ Q.T + np.array([0.3, -0.2, 0.5])
    return ShellMesh(X, tris, {"outer": [0, 1, 2, 3], "inner": [4, 5, 6, 7]}), P


def _patch_solution(field, Q: np.ndarray, thickness: float) -> tuple[np.ndarray, np.ndarray]:
    mesh, P = _patch(Q)
    mod = FEModel(mesh, STEEL, thickness=thickness)
    exact = np.zeros(mod.n_dofs)
    for i, (x, y) in enumerate(P):
        u_loc, r_loc = field(x, y)
        exact[6 * i:6 * i + 3] = Q @ u_loc
        exact[6 * i + 3:6 * i + 6] = Q @ r_loc
    fixed = mod.dofs("outer")
    u = solve_static(mod.K, np.zeros(mod.n_dofs), fixed, exact[fixed])
    return u, exact


@pytest.mark.parametrize("angles", [(0.0, 0.0, 0.0), (0.4, -0.7, 1.1)])
def test_membrane_patch_constant_strain(angles: tuple[float, float, float]) -> None:
    Q = _rotation(*angles)
    A = np.array([[1.0e-3, 2.0e-3], [-0.5e-3, 3.0e-3]])  # grad u: exx, eyy, gxy and rotation
    c0 = np.array([1e-4, -2e-4])

    def field(x: float, y: float):  # noqa: ANN202
        uv = c0 + A @ np.array([x, y])
        omega = 0.5 * (A[1, 0] - A[0, 1])
        return np.array([uv[0], uv[1], 0.0]), np.array([0.0, 0.0, omega])

    u, exact = _patch_solution(field, Q, 0.01)
    # patch test passes exactly: only round-off (1e-10 of the displacement scale)
    assert np.max(np.abs(u - exact)) < 1e-10 * np.max(np.abs(exact))


@pytest.mark.parametrize("curv", [(1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0),
                                  (0.7, -0.4, 0.3)])
def test_bending_patch_constant_curvature_and_twist(curv: tuple[float, float, float]) -> None:
    kx, ky, kxy = (1e-2 * c for c in curv)
    Q = _rotation(0.3, 0.5, -0.2)

    def field(x: float, y: float):  # noqa: ANN202
        w = 0.5 * (kx * x * x + ky * y * y) + kxy * x * y + 1e-4 + 2e-4 * x - 1e-4 * y
        wx = kx * x + kxy * y + 2e-4
        wy = ky * y + kxy * x - 1e-4
        return np.array([0.0, 0.0, w]), np.array([wy, -wx, 0.0])  # theta_x = w,y, theta_y = -w,x

    u, exact = _patch_solution(field, Q, 0.01)
    assert np.max(np.abs(u - exact)) < 1e-10 * np.max(np.abs(exact))  # exact up to round-off
    # element curvatures are the constant imposed ones (beta_x,x = -w,xx ...)
    mesh, P = _patch(np.eye(3))
    el = DKTShell(STEEL, 0.01)
    X = mesh.nodes[mesh.elements]
    F = shell_frames(X)
    xl = el.local_coordinates(X, F)
    dofs = np.zeros((mesh.n_elements, 9))
    for e, tri in enumerate(mesh.elements):
        for a, n in enumerate(tri):
            uw, r = field(*P[n])
            dofs[e, 3 * a:3 * a + 3] = (uw[2], r[0], r[1])
    B = el.dkt_curvature(xl, np.array([[0.2, 0.3], [0.6, 0.1]]))
    kappa = np.einsum("eqaj,ej->eqa", B, dofs)
    assert np.allclose(kappa, [-kx, -ky, -2 * kxy], rtol=0, atol=1e-12)


def test_rigid_body_modes_of_free_element_and_mesh() -> None:
    rng = np.random.default_rng(1)
    X = rng.random((3, 3, 3))
    el = DKTShell(STEEL, 0.02)
    K = el.stiffness(X, shell_frames(X))
    for k in K:
        ev = np.linalg.eigvalsh(k)
        # exactly six zero-energy modes (3 translations, 3 rotations incl. drilling)
        assert np.sum(np.abs(ev) < 1e-10 * ev.max()) == 6
    mesh = ShellMesh.rectangle(1.0, 0.5, 3, 2, "crossed", plane="yz")
    mod = FEModel(mesh, STEEL, thickness=0.01)
    R = mod.rigid_body_modes(about=(0.2, 0.1, -0.3))
    # rigid motions are strain free: K R ~ round-off
    assert np.linalg.norm(mod.K @ R) < 1e-9 * abs(mod.K).max() * np.linalg.norm(R)


def test_element_frame_and_matrices_independent_of_node_numbering() -> None:
    rng = np.random.default_rng(7)
    X = rng.random((1, 3, 3))
    el = DKTShell(STEEL, 0.01)
    K0 = el.stiffness(X, shell_frames(X))[0]
    M0 = el.mass(X, shell_frames(X))[0]
    F0 = shell_frames(X)[0]
    for perm in [(1, 2, 0), (2, 0, 1), (0, 2, 1), (2, 1, 0)]:
        Xp = X[:, list(perm)]
        assert np.allclose(shell_frames(Xp)[0], F0, atol=1e-14)
        idx = np.concatenate([np.arange(6 * p, 6 * p + 6) for p in perm])
        Kp = el.stiffness(Xp, shell_frames(Xp))[0]
        Mp = el.mass(Xp, shell_frames(Xp))[0]
        assert np.allclose(Kp, K0[np.ix_(idx, idx)], rtol=1e-12, atol=1e-12 * np.abs(K0).max())
        assert np.allclose(Mp, M0[np.ix_(idx, idx)], rtol=1e-12, atol=1e-12 * np.abs(M0).max())


def _ss_plate(n: int, a: float = 1.0, h: float = 0.01) -> tuple[FEModel, np.ndarray]:
    mesh = ShellMesh.rectangle(a, a, n, n, "union_jack")
    mod = FEModel(mesh, STEEL, thickness=h)
    fixed = np.concatenate([
        mod.dofs("boundary", "uz"), mod.dofs("all", ["ux", "uy", "rz"]),  # membrane decoupled
        mod.dofs("x0", "rx"), mod.dofs("x1", "rx"), mod.dofs("y0", "ry"), mod.dofs("y1", "ry")])
    return mod, fixed


def _ss_deflection(n: int) -> float:
    a, h, q = 1.0, 0.01, 1.0e3
    D = STEEL.E * h**3 / (12 * (1 - STEEL.nu**2))
    mod, fixed = _ss_plate(n, a, h)
    u = solve_static(mod.K, mod.pressure_load(q), fixed)
    c = mod.mesh.node_set("centre")[0]
    return u[6 * c + 2] / (q * a**4 / D)


NAVIER = 0.00406235  # centre deflection coefficient of the SS square plate (Timoshenko)


def test_simply_supported_plate_deflection_converges_quadratically() -> None:
    w = np.array([_ss_deflection(n) for n in (4, 8, 16)])
    err = np.abs(w / NAVIER - 1)
    # measured 4.1 %, 0.98 %, 0.24 %; 0.3 % bounds the 16 x 16 result
    assert err[-1] < 3e-3
    rates = np.log2(err[:-1] / err[1:])
    assert np.all(rates > 1.9)  # DKT: O(h^2), measured 2.07, 2.02


def test_simply_supported_plate_frequencies() -> None:
    a, h = 1.0, 0.01
    D = STEEL.E * h**3 / (12 * (1 - STEEL.nu**2))
    ref = math.pi**2 * np.array([2.0, 5.0, 5.0, 8.0])  # 19.739, 49.348, 49.348, 78.957
    errs = []
    for n in (8, 16):
        mod, fixed = _ss_plate(n, a, h)
        md = eigenmodes(mod.K, mod.M, 4, fixed)
        lam = md.omega * a**2 * math.sqrt(STEEL.rho * h / D)
        errs.append(np.abs(lam / ref - 1))
    # issue target: within 1 % on a fine mesh; 16 x 16 union jack measured 0.13-0.52 %
    assert np.all(errs[1] < 1e-2)
    rates = np.log2(errs[0] / errs[1])
    assert np.all(rates > 1.6)  # measured 1.89, 1.77, 1.77, 1.74 (O(h^2) asymptotically)


def test_plate_buckling_uniaxial_compression() -> None:
    a, h = 1.0, 0.01
    D = STEEL.E * h**3 / (12 * (1 - STEEL.nu**2))
    mod, fixed = _ss_plate(16, a, h)
    KG = mod.geometric_stiffness(forces=(-1.0, 0.0, 0.0))  # unit compression Nx
    md = eigenmodes(mod.K, -KG, 1, fixed)  # K x = N (-K_G) x
    # N_cr = k pi^2 D / b^2 with k = 4 (square, one half wave); O(h^2), measured -0.25 %
    assert md.omega[0] ** 2 == pytest.approx(4 * math.pi**2 * D / a**2, rel=4e-3)


def test_free_plate_membrane_lame_mode() -> None:
    """In-plane modes of a free square: the Lame mode is exact, f = sqrt(G/rho)/(sqrt(2) a)."""
    a = 1.0
    f_exact = math.sqrt(STEEL.G / STEEL.rho) / (math.sqrt(2) * a)
    errs = []
    for n in (8, 16):
        mesh = ShellMesh.rectangle(a, a, n, n, "union_jack")
        mod = FEModel(mesh, STEEL, thickness=0.01)
        md = eigenmodes(mod.K, mod.M, 10, mod.dofs("all", ["uz", "rx", "ry"]))
        # three in-plane rigid-body modes (2 translations, drilling rotation) come first
        assert np.all(md.frequencies[:3] < 1e-3 * md.frequencies[3])
        X = mesh.nodes
        k = math.pi / a
        ex = np.zeros(mod.n_dofs)
        ex[0::6] = -np.cos(k * X[:, 0]) * np.sin(k * X[:, 1])
        ex[1::6] = np.sin(k * X[:, 0]) * np.cos(k * X[:, 1])
        ex[5::6] = k * np.cos(k * X[:, 0]) * np.cos(k * X[:, 1])
        Mex = mod.M @ ex
        mac = (md.shapes.T @ Mex) ** 2 / (ex @ Mex)  # shapes are mass-normalised
        i = int(np.argmax(mac))
        assert mac[i] > 0.99  # the computed mode is the Lame shape (measured 0.997, 0.9998)
        errs.append(abs(md.frequencies[i] / f_exact - 1))
    assert errs[1] < 3e-3  # measured 0.21 % on 16 x 16
    assert math.log2(errs[0] / errs[1]) > 1.7  # measured 1.93


def test_drilling_penalty_is_consistent_and_in_plane_bending_converges() -> None:
    """In-plane bending of a cantilever strip (L/b = 4): the influence of the drilling
    penalty factor vanishes with refinement, and the tip deflection tends to beam theory."""
    L, b, h, P = 1.0, 0.25, 0.01, 1.0e3
    beam = P * L**3 / (3 * STEEL.E * h * b**3 / 12) + P * L / (5 / 6 * STEEL.G * b * h)
    spread, tip = [], []
    for n in (1, 2, 4):
        vals = []
        for alpha in (1e-3, 1e-1):
            mesh = ShellMesh.rectangle(L, b, 8 * n, 2 * n, "union_jack")
            mod = FEModel(mesh, STEEL, thickness=h, drilling_factor=alpha)
            fixed = np.concatenate([mod.dofs("x0", ["ux", "uy"]),
                                    mod.dofs("all", ["uz", "rx", "ry"])])
            end = mod.dofs("x1", "uy")
            f = np.zeros(mod.n_dofs)
            f[end] = P / end.size
            vals.append(solve_static(mod.K, f, fixed)[end].mean())
        spread.append(abs(vals[0] / vals[1] - 1))
        tip.append(vals[0] / beam)
    assert spread[0] > spread[1] > spread[2]  # measured 3.3 %, 1.2 %, 0.35 %
    # 2 %: beam theory ignores the 2D clamp (warping restrained at x = 0, about 1 % here);
    # measured 0.991 with 32 x 8 cells
    assert abs(tip[-1] - 1) < 2e-2
    assert tip[0] < tip[1] < tip[2]  # monotone convergence from the stiff side


def test_shell_errors() -> None:
    with pytest.raises(FEError, match="triangle 0"):
        ShellMesh([[0, 0], [1, 0], [2, 0]], [[0, 1, 2]])
    with pytest.raises(FEError, match="thickness"):
        FEModel(ShellMesh.rectangle(1, 1, 1, 1), STEEL)
    with pytest.raises(FEError, match="thickness"):
        DKTShell(STEEL, -1.0)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.floats(-1.0, 1.0), min_size=9, max_size=9),
       st.tuples(*(st.floats(-3.2, 3.2),) * 3))
def test_element_is_objective_for_any_triangle(xs: list[float],
                                               angles: tuple[float, float, float]) -> None:
    """Any reasonable triangle: six rigid modes, frame-covariant K and M, exact mass."""
    X = np.array(xs).reshape(1, 3, 3)
    e1, e2 = X[0, 1] - X[0, 0], X[0, 2] - X[0, 0]
    area = 0.5 * np.linalg.norm(np.cross(e1, e2))
    sides = [np.linalg.norm(e1), np.linalg.norm(e2), np.linalg.norm(X[0, 2] - X[0, 1])]
    assume(area > 0.05 * max(sides) ** 2)  # no sliver (angles above ~6 degrees)
    el = DKTShell(STEEL, 0.02)
    K = el.stiffness(X, shell_frames(X))[0]
    M = el.mass(X, shell_frames(X))[0]
    ev = np.linalg.eigvalsh(K)
    assert np.sum(np.abs(ev) < 1e-9 * ev.max()) == 6
    Q = _rotation(*angles)
    XQ = X @ Q.T
    T = np.kron(np.eye(6), Q)
    KQ = el.stiffness(XQ, shell_frames(XQ))[0]
    MQ = el.mass(XQ, shell_frames(XQ))[0]
    # rotating the element rotates its matrices (frames are built from geometry only)
    assert np.allclose(KQ, T @ K @ T.T, rtol=0, atol=1e-9 * np.abs(K).max())
    assert np.allclose(MQ, T @ M @ T.T, rtol=0, atol=1e-12 * np.abs(M).max())
    Rt = np.kron(np.ones((3, 1)), np.vstack([np.eye(3), np.zeros((3, 3))]))
    assert np.allclose(Rt.T @ M @ Rt, STEEL.rho * 0.02 * area * np.eye(3), rtol=1e-12)
