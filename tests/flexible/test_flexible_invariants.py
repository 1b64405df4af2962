"""FFRF inertia invariants: rigid-body closed forms, consistency with the FE mass, and the
state-dependent mass matrix / quadratic velocity vector against direct integration."""

from __future__ import annotations

import numpy as np
import pytest

from components.flexible import (
    BeamMesh,
    FEModel,
    FlexibleBodyData,
    Material,
    Section,
    ShellMesh,
    compute_invariants,
    skew,
)

STEEL = Material(E=2.1e11, nu=0.3, rho=7800.0)


def _box_inertia(m: float, lx: float, ly: float, lz: float) -> np.ndarray:
    return m / 12 * np.diag([ly**2 + lz**2, lx**2 + lz**2, lx**2 + ly**2])


def _about(J_c: np.ndarray, m: float, c: np.ndarray) -> np.ndarray:
    """Parallel-axis theorem: inertia about the origin from the one about the centroid."""
    return J_c + m * (np.dot(c, c) * np.eye(3) - np.outer(c, c))


def test_beam_rigid_body_invariants_equal_closed_form() -> None:
    b, h, L = 0.04, 0.09, 1.3
    sec = Section.rectangle(b, h)
    start = np.array([0.2, -0.4, 0.7])
    d = np.array([1.0, 2.0, -0.5]) / np.linalg.norm([1.0, 2.0, -0.5])
    mesh = BeamMesh.line(start, start + L * d, 7, zref=[0.0, 0.0, 1.0])
    mod = FEModel(mesh, STEEL, section=sec)
    inv = compute_invariants(mod.mass_points, mod.element_dofs, mod.n_dofs)
    m = STEEL.rho * b * h * L
    F = mod.frames[0]  # rows: axis, local y (width b), local z (height h)
    J_c = F.T @ _box_inertia(m, L, b, h) @ F
    c = start + 0.5 * L * d
    # 1e-12: Gauss quadrature is exact for the quadratic integrands; round-off only
    assert inv.mass == pytest.approx(m, rel=1e-12)
    assert np.allclose(inv.center_of_mass, c, rtol=0, atol=1e-12 * L)
    J = _about(J_c, m, c)
    assert np.allclose(inv.I7, J, rtol=0, atol=1e-12 * np.abs(J).max())


@pytest.mark.parametrize("plane", ["xy", "xz"])
def test_plate_rigid_body_invariants_equal_closed_form(plane: str) -> None:
    a, b, h = 2.0, 1.2, 0.01
    origin = np.array([-0.3, 0.5, 0.1])
    mesh = ShellMesh.rectangle(a, b, 5, 3, "union_jack", origin=origin, plane=plane)
    mod = FEModel(mesh, STEEL, thickness=h)
    inv = compute_invariants(mod.mass_points, mod.element_dofs, mod.n_dofs)
    m = STEEL.rho * a * b * h
    dims = {"xy": (a, b, h), "xz": (a, h, b)}[plane]
    c = origin + {"xy": np.array([a / 2, b / 2, 0]), "xz": np.array([a / 2, 0, b / 2])}[plane]
    J = _about(_box_inertia(m, *dims), m, c)
    # 1e-12: the degree-6 triangle rule integrates x^2 exactly; thickness term rho h^3/12 exact
    assert inv.mass == pytest.approx(m, rel=1e-12)
    assert np.allclose(inv.center_of_mass, c, rtol=0, atol=1e-12 * a)
    assert np.allclose(inv.I7, J, rtol=0, atol=1e-12 * np.abs(J).max())


def test_nodal_invariants_consistent_with_mass_matrix_and_rigid_motion() -> None:
    mesh = ShellMesh.rectangle(1.0, 0.6, 3, 2, "crossed", plane="yz")
    mod = FEModel(mesh, STEEL, thickness=0.02)
    inv = compute_invariants(mod.mass_points, mod.element_dofs, mod.n_dofs)
    M = mod.M.toarray()
    scale = np.abs(M).max()
    # I6 = int rho S^T S is the consistent mass matrix (same fields, same quadrature)
    assert np.allclose(inv.I6.toarray(), M, rtol=0, atol=1e-12 * scale)
    R = mod.rigid_body_modes()
    # a rigid translation a carries the whole mass: I3 R_t = m I
    assert np.allclose(inv.I3 @ R[:, :3], inv.mass * np.eye(3), atol=1e-12 * inv.mass)
    # a rigid rotation theta about the origin: I4 R_r = I7 (angular momentum) and
    # I3 R_r = -I2~ (linear momentum of theta x u0)
    assert np.allclose(inv.I4 @ R[:, 3:], inv.I7, atol=1e-12 * np.abs(inv.I7).max())
    assert np.allclose(inv.I3 @ R[:, 3:], -skew(inv.I2), atol=1e-12 * np.abs(inv.I2).max())


def _direct_mass_and_h(mod: FEModel, basis: np.ndarray, q: np.ndarray, qd: np.ndarray,
                       w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Brute-force FFRF mass matrix and quadratic velocity vector by integrating the
    velocity/acceleration of every section particle (u(d) = x + d + T q + (R q) x d)."""
    mp = mod.mass_points
    ed = mod.element_dofs
    k = basis.shape[1]
    Pe = basis[ed]  # (E, nd, k)
    T = np.einsum("eqaj,ejk->eqak", mp.T, Pe)
    Rr = np.einsum("eqaj,ejk->eqak", mp.R, Pe)
    Wt, X, P = mp.weight, mp.position, mp.second_moment
    nz = 6 + k
    u0 = X + np.einsum("eqak,k->eqa", T, q)
    B = np.eye(3) + np.einsum("abc,eqbk,k->eqac", _eps(), Rr, q)  # I + (Rq)~
    # directions: f0 (E, q, 3, nz), F (E, q, 3, 3, nz) such that du = f0 + F d
    f0 = np.zeros(T.shape[:2] + (3, nz))
    Fd = np.zeros(T.shape[:2] + (3, 3, nz))
    for i in range(3):
        f0[:, :, i, i] = 1.0
        e = np.zeros(3)
        e[i] = 1.0
        f0[:, :, :, 3 + i] = np.cross(e, u0)
        Fd[:, :, :, :, 3 + i] = np.einsum("ab,eqbc->eqac", skew(e), B)
    f0[:, :, :, 6:] = T
    Fd[:, :, :, :, 6:] = np.einsum("abc,eqbk->eqack", _eps(), Rr)  # (R_k) x d = R_k~ d
    Mm = np.einsum("eq,eqai,eqaj->ij", Wt, f0, f0) + \
        np.einsum("eqabi,eqbc,eqacj->ij", Fd, P, Fd)
    # acceleration without second derivatives: w x (w x u) + 2 w x u'
    W = skew(w)
    v0 = np.einsum("eqak,k->eqa", T, qd)
    V = np.einsum("abc,eqbk,k->eqac", _eps(), Rr, qd)
    a0 = np.einsum("ab,eqb->eqa", W @ W, u0) + 2 * np.einsum("ab,eqb->eqa", W, v0)
    A = np.einsum("ab,eqbc->eqac", W @ W, B) + 2 * np.einsum("ab,eqbc->eqac", W, V)
    h = -(np.einsum("eq,eqai,eqa->i", Wt, f0, a0) + np.einsum("eqabi,eqbc,eqac->i", Fd, P, A))
    return Mm, h


def _eps() -> np.ndarray:
    e = np.zeros((3, 3, 3))
    e[0, 1, 2] = e[1, 2, 0] = e[2, 0, 1] = 1.0
    e[0, 2, 1] = e[2, 1, 0] = e[1, 0, 2] = -1.0
    return e


@pytest.mark.parametrize("kind", ["beam", "shell"])
def test_mass_matrix_and_quadratic_velocity_match_direct_integration(kind: str) -> None:
    if kind == "beam":
        mesh = BeamMesh.line((0.1, 0.2, 0.0), (1.0, 0.5, 0.3), 6)
        body = FlexibleBodyData.from_mesh(mesh, STEEL, section=Section.rectangle(0.05, 0.08),
                                          modes=4, reduction="fixed", fixed_nodes="start",
                                          cache=False)
    else:
        mesh = ShellMesh.rectangle(1.0, 0.8, 4, 4, "union_jack", plane="xz")
        body = FlexibleBodyData.from_mesh(mesh, STEEL, thickness=0.05, modes=4,
                                          reduction="free", cache=False)
    rng = np.random.default_rng(11)
    scale = 0.05 / np.abs(body.basis).max()  # displacements of a few cm
    q = scale * rng.standard_normal(4)
    qd = 10 * scale * rng.standard_normal(4)
    w = rng.standard_normal(3)
    M_ref, h_ref = _direct_mass_and_h(body.model, body.basis, q, qd, w)
    M = body.invariants.mass_matrix(q)
    h = body.invariants.quadratic_velocity(q, qd, w)
    # same integrals evaluated by two different algebraic routes: round-off only
    assert np.allclose(M, M_ref, rtol=0, atol=1e-10 * np.abs(M_ref).max())
    assert np.allclose(h, h_ref, rtol=0, atol=1e-10 * np.abs(h_ref).max())
    # the nine named invariants assemble the same mass matrix
    inv = body.invariants
    Mw = inv.I7 + np.einsum("j,jab->ab", q, inv.I8 + np.transpose(inv.I8, (0, 2, 1))) \
        + np.einsum("j,k,jkab->ab", q, q, inv.I9)
    assert np.allclose(M[3:6, 3:6], Mw, atol=1e-10 * np.abs(Mw).max())
    Mwf = inv.I4 + np.einsum("j,jak->ak", q, inv.I5)
    assert np.allclose(M[3:6, 6:], Mwf, atol=1e-10 * np.abs(Mwf).max())
    assert np.allclose(M[6:, 6:], body.M_ff, atol=1e-12 * np.abs(body.M_ff).max())


def test_rigid_body_limit_is_euler_equation() -> None:
    mesh = ShellMesh.rectangle(1.0, 0.5, 2, 2, "right")
    body = FlexibleBodyData.from_mesh(mesh, STEEL, thickness=0.01, modes=3, reduction="free",
                                      cache=False)
    w = np.array([0.3, -1.2, 2.0])
    h = body.invariants.quadratic_velocity(None, None, w)
    inv = body.invariants
    assert np.allclose(h[3:6], -np.cross(w, inv.I7 @ w), atol=1e-12 * np.abs(h).max())
    assert np.allclose(h[:3], -np.cross(w, np.cross(w, inv.I2)), atol=1e-12 * np.abs(h).max())


def test_free_modes_satisfy_mean_axis_conditions() -> None:
    mesh = ShellMesh.rectangle(2.0, 2.0, 6, 6, "union_jack", plane="xz")
    body = FlexibleBodyData.from_mesh(mesh, STEEL, thickness=0.003, modes=6, reduction="free",
                                      cache=False)
    inv = body.invariants
    # linear and angular momentum of every elastic mode vanish (Tisserand frame)
    assert np.abs(inv.I3).max() < 1e-10 * inv.mass
    assert np.abs(inv.I4).max() < 1e-10 * np.abs(inv.I7).max()
    assert np.allclose(body.M_ff, np.eye(6), atol=1e-10)


def test_projected_nodal_invariants_equal_modal_ones() -> None:
    mesh = BeamMesh.line((0, 0, 0), (1.0, 0.0, 0.2), 5)
    body = FlexibleBodyData.from_mesh(mesh, STEEL, section=Section.tube(0.03, 0.02), modes=3,
                                      reduction="fixed", fixed_nodes="start", cache=False)
    mod = body.model
    nodal = compute_invariants(mod.mass_points, mod.element_dofs, mod.n_dofs)
    proj = nodal.project(body.basis)
    modal = body.invariants
    for name in ("I3", "I4", "I6", "I7", "I8", "I9", "I5"):
        a, b = np.asarray(getattr(proj, name)), np.asarray(getattr(modal, name))
        assert np.allclose(a, b, rtol=0, atol=1e-12 * max(np.abs(b).max(), 1e-300)), name


def test_spin_softening_is_negative_semidefinite_and_gravity_load() -> None:
    mesh = BeamMesh.line((0, 0, 0), (2.0, 0, 0), 10)
    mod = FEModel(mesh, STEEL, section=Section.circle(0.02))
    inv = compute_invariants(mod.mass_points, mod.element_dofs, mod.n_dofs)
    Ks = inv.spin_softening([0.0, 0.0, 3.0]).toarray()
    ev = np.linalg.eigvalsh(Ks)
    assert ev.max() < 1e-12 * np.abs(ev).max()
    # uniform gravity: total load equals weight; consistent load = I3^T g
    g = np.array([0.0, 0.0, -9.81])
    f = mod.body_force_load(g)
    assert np.allclose(f, inv.rigid_body_load(g), atol=1e-12 * np.abs(f).max())
    assert f[2::6].sum() == pytest.approx(-9.81 * inv.mass, rel=1e-12)
