"""Meshes, assembly, boundary conditions, damping, free-interface and Craig-Bampton reduction,
the FlexibleBodyData preprocessor and its cache."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

from components.flexible import (
    BeamMesh,
    FEError,
    FEModel,
    FlexibleBodyData,
    Material,
    Section,
    ShellMesh,
    assemble_matrix,
    craig_bampton,
    eigenmodes,
    element_dofs,
    free_interface_modes,
    kelvin_voigt_damping,
    modal_damping_ratios,
    rayleigh_damping,
    solve_static,
)

STEEL = Material(E=2.1e11, nu=0.3, rho=7800.0)


# ---------------------------------------------------------------------------- meshes
@pytest.mark.parametrize("pattern,per_cell", [("union_jack", 2), ("right", 2), ("left", 2),
                                              ("crossed", 4)])
def test_rectangle_patterns_cover_the_plate(pattern: str, per_cell: int) -> None:
    mesh = ShellMesh.rectangle(2.0, 1.0, 4, 2, pattern)
    assert mesh.n_elements == 8 * per_cell
    X = mesh.nodes[mesh.elements]
    area = 0.5 * np.linalg.norm(np.cross(X[:, 1] - X[:, 0], X[:, 2] - X[:, 0]), axis=1)
    assert area.sum() == pytest.approx(2.0, rel=1e-14)  # no gap, no overlap
    assert mesh.node_set("x0").size == 3 and mesh.node_set("y1").size == 5
    assert mesh.node_set("corners").size == 4


def test_union_jack_panel_mesh_is_symmetric() -> None:
    """The chapter's 32-triangle panel: 4 x 4 cells, alternating diagonals meeting at the centre."""
    mesh = ShellMesh.rectangle(2.0, 2.0, 4, 4, "union_jack", plane="xz")
    assert mesh.n_elements == 32 and mesh.n_nodes == 25
    c = mesh.node_set("centre")[0]
    assert np.allclose(mesh.nodes[c], [1.0, 0.0, 1.0])
    assert np.sum(np.any(mesh.elements == c, axis=1)) == 8  # all diagonals meet at the centre
    # mirror symmetry about both mid-lines: the reflected element set is the same
    for axis in (0, 2):
        Y = mesh.nodes.copy()
        Y[:, axis] = 2.0 - Y[:, axis]
        key = {tuple(sorted(map(tuple, np.round(mesh.nodes[t], 9)))) for t in mesh.elements}
        ref = {tuple(sorted(map(tuple, np.round(Y[t], 9)))) for t in mesh.elements}
        assert key == ref


def test_general_arrays_node_sets_and_errors() -> None:
    nodes = [[0, 0], [1, 0], [1, 1], [0, 1]]
    mesh = ShellMesh(nodes, [[0, 1, 2], [0, 2, 3]], {"hinge": [0, 3]})
    assert mesh.nodes.shape == (4, 3) and list(mesh.node_set("hinge")) == [0, 3]
    assert mesh.find_node((1, 1)) == 2
    with pytest.raises(FEError, match="unknown node set 'tip'"):
        mesh.node_set("tip")
    with pytest.raises(FEError, match="element 1 refers to node"):
        ShellMesh(nodes, [[0, 1, 2], [0, 2, 7]])
    with pytest.raises(FEError, match="element 0 repeats a node"):
        ShellMesh(nodes, [[0, 0, 2]])
    with pytest.raises(FEError, match="no node within"):
        mesh.find_node((0.5, 0.5))
    bm = BeamMesh.line((0, 0, 0), (1, 0, 0), 4)
    assert bm.node_set("centre")[0] == 2 and bm.node_set("end")[0] == 4


# ---------------------------------------------------------------------------- assembly
def test_assembly_matches_dense_reference_and_is_symmetric() -> None:
    mesh = ShellMesh.rectangle(1.0, 1.0, 2, 2, "union_jack")
    mod = FEModel(mesh, STEEL, thickness=0.01)
    ke = mod.element_stiffness()
    dense = np.zeros((mod.n_dofs, mod.n_dofs))
    for e, d in enumerate(element_dofs(mesh.elements)):
        dense[np.ix_(d, d)] += ke[e]
    K = mod.K
    assert np.array_equal(assemble_matrix(mesh.elements, ke, mod.n_dofs).toarray(), K.toarray())
    # same sums in a different order: round-off of the largest entries only
    assert np.allclose(K.toarray(), dense, rtol=0, atol=1e-9 * np.abs(dense).max())
    assert abs(K - K.T).max() < 1e-9 * abs(K).max()  # symmetric to round-off
    # total translational mass of the consistent and lumped matrices = rho V in each direction
    for M in (mod.M, mod.M_lumped):
        R = mod.rigid_body_modes()[:, :3]
        assert np.allclose(R.T @ M @ R, STEEL.rho * 0.01 * np.eye(3), rtol=1e-12)  # exact


def test_static_gravity_cantilever_and_errors() -> None:
    L = 2.0
    sec = Section.rectangle(0.02, 0.02)
    mesh = BeamMesh.line((0, 0, 0), (L, 0, 0), 4)
    mod = FEModel(mesh, STEEL, section=sec)
    u = solve_static(mod.K, mod.body_force_load((0, 0, -9.81)), mod.dofs("start"))
    qz = STEEL.rho * sec.A * 9.81
    ref = qz * L**4 / (8 * STEEL.E * sec.Iy) + qz * L**2 / (2 * sec.kz * STEEL.G * sec.A)
    # consistent load + exact element: nodal values exact for a uniform load (round-off)
    assert -u[6 * 4 + 2] == pytest.approx(ref, rel=1e-9)
    with pytest.raises(FEError, match="under-constrained|singular"):
        solve_static(mod.K, mod.body_force_load((0, 0, -9.81)), mod.dofs("start", "u"))
    with pytest.raises(FEError, match="unknown DOF component"):
        mod.dofs("start", "uw")


# ---------------------------------------------------------------------------- damping
def test_kelvin_voigt_and_rayleigh_modal_damping_ratios() -> None:
    mesh = BeamMesh.line((0, 0, 0), (1, 0, 0), 10)
    mod = FEModel(mesh, STEEL, section=Section.circle(0.01))
    md = eigenmodes(mod.K, mod.M, 5, mod.dofs("start"))
    Phi, om = md.shapes, md.omega
    eta = 1e-4
    C = Phi.T @ kelvin_voigt_damping(mod.K, eta) @ Phi
    # stiffness-proportional damping is diagonal in the modes, zeta = eta omega / 2
    # (1e-9: eigenvector accuracy of ARPACK, ~1e-10 relative)
    assert np.allclose(modal_damping_ratios(C, om), eta * om / 2, rtol=1e-9)
    assert np.abs(C - np.diag(np.diag(C))).max() < 1e-9 * np.abs(C).max()
    a, b = 0.5, 2e-5
    C = Phi.T @ rayleigh_damping(mod.M, mod.K, a, b) @ Phi
    assert np.allclose(modal_damping_ratios(C, om), a / (2 * om) + b * om / 2, rtol=1e-9)


# ---------------------------------------------------------------------------- reduction
def test_free_interface_modes_of_free_free_beam() -> None:
    """Free-free beam: rigid modes removed exactly, elastic modes = (beta L)^2 4.7300, 7.8532."""
    L = 1.0
    sec = Section.rectangle(2e-3, 2e-3)
    mesh = BeamMesh.line((0, 0, 0), (L, 0, 0), 30)
    mod = FEModel(mesh, STEEL, section=sec)
    md = free_interface_modes(mod.K, mod.M, 4, mod.rigid_body_modes())
    p = md.omega * L**2 * math.sqrt(STEEL.rho * sec.A / (STEEL.E * sec.Iz))
    # bending in the two planes is degenerate (square section): pairs of equal frequencies
    ref = np.array([4.730041, 4.730041, 7.853205, 7.853205]) ** 2
    # 1e-4: L/h = 500 (Timoshenko correction ~1e-5) and 30 elements (~1e-7)
    assert np.allclose(p, ref, rtol=1e-4)
    R = mod.rigid_body_modes()
    assert np.abs(R.T @ mod.M @ md.shapes).max() < 1e-10 * np.abs(R.T @ mod.M @ R).max()


def test_craig_bampton_converges_to_full_model() -> None:
    mesh = ShellMesh.rectangle(2.0, 2.0, 8, 8, "union_jack", plane="xz")
    mod = FEModel(mesh, STEEL, thickness=0.003)
    clamp = mod.dofs("x0")
    full = eigenmodes(mod.K, mod.M, 6, clamp).frequencies
    interface = mod.dofs(np.concatenate([mesh.node_set("corner_11"), mesh.node_set("corner_10")]))
    errs = []
    for k in (2, 5, 10, 20, 40):
        cb = craig_bampton(mod.K, mod.M, interface, k, fixed_dofs=clamp)
        f = cb.frequencies(6)
        assert np.all(f >= full * (1 - 1e-9))  # Rayleigh-Ritz: upper bounds
        errs.append(np.max(f / full - 1))
    assert all(e1 >= e2 for e1, e2 in zip(errs, errs[1:], strict=False))  # monotone with more modes
    # worst of the first 6 frequencies, measured 1.2, 7.7e-2, 2.9e-3, 7.2e-4, 6.1e-5:
    # the Ritz error falls by ~10x per doubling of the retained modes
    assert errs[-1] < 1e-4
    assert errs[2] / errs[4] > 30  # 10 -> 40 modes, measured 48


def test_flexible_body_data_api_and_cache() -> None:
    mesh = ShellMesh.rectangle(2.0, 2.0, 4, 4, "union_jack", plane="xz")
    kw = dict(thickness=0.003, modes=4, reduction="fixed", fixed_nodes="x0", kelvin_voigt=1e-3)
    b1 = FlexibleBodyData.from_mesh(mesh, STEEL, **kw)
    b2 = FlexibleBodyData.from_mesh(mesh, STEEL, **kw)
    assert b1 is b2  # cached per mesh, material and options
    # mass-normalised eigenvectors: orthonormality to solver accuracy (~1e-12)
    assert np.allclose(b1.M_ff, np.eye(4), atol=1e-10)
    assert np.allclose(b1.K_ff, np.diag((2 * np.pi * b1.frequencies) ** 2), rtol=1e-9,
                       atol=1e-9 * np.abs(b1.K_ff).max())
    assert np.allclose(b1.C_ff, 1e-3 * b1.K_ff, rtol=1e-12, atol=1e-15)
    c = mesh.node_set("centre")[0]
    assert b1.phi_t("centre").shape == (3, 4) and b1.phi_r(c).shape == (3, 4)
    assert np.allclose(b1.phi_t(c), b1.basis[6 * c:6 * c + 3])
    assert np.allclose(b1.node_position("centre"), [1.0, 0.0, 1.0])
    assert np.abs(b1.phi_t(mesh.node_set("x0")[0])).max() == 0.0  # clamped to the frame
    nodal = FlexibleBodyData.from_mesh(mesh, STEEL, thickness=0.003, reduction="nodal",
                                       fixed_nodes="x0")
    assert sp.issparse(nodal.M_ff) and nodal.n_coordinates == 6 * (25 - 5)
    assert nodal.invariants.mass == pytest.approx(b1.invariants.mass, rel=1e-14)
    cb = FlexibleBodyData.from_mesh(mesh, STEEL, thickness=0.003, reduction="craig_bampton",
                                    modes=3, fixed_nodes="x0", interface_nodes="corner_11")
    assert cb.n_coordinates == 6 + 3
    with pytest.raises(FEError, match="interface_nodes"):
        FlexibleBodyData.from_mesh(mesh, STEEL, thickness=0.003, reduction="craig_bampton")
    with pytest.raises(FEError, match="unknown reduction"):
        FlexibleBodyData.from_mesh(mesh, STEEL, thickness=0.003, reduction="guyan")


def test_modal_centrifugal_stiffening_tables() -> None:
    """The tabulated K_G(omega) = sum omega_a omega_b G_ab equals the direct pre-stress solve."""
    L = 1.0
    sec = Section.rectangle(1e-2, 1e-2)
    mesh = BeamMesh.line((0, 0, 0), (L, 0, 0), 10)
    body = FlexibleBodyData.from_mesh(mesh, STEEL, section=sec, modes=4, reduction="fixed",
                                      fixed_nodes="start", stiffening=True, cache=False)
    w = np.array([0.7, -1.1, 2.5])
    mod = body.model
    KG = body.basis.T @ (mod.centrifugal_stiffness(w, body.fixed_dofs) @ body.basis)
    # linear superposition of six tables vs one direct solve: round-off only
    assert np.allclose(body.centrifugal_stiffness(w), KG, rtol=1e-9,
                       atol=1e-9 * np.abs(KG).max())
