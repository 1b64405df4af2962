"""One contract over every registered finite element (scikit-fem ``test_elements.py`` style).

Each element is exercised only through the :class:`~components.flexible.element.Element`
interface on a few single elements of random shape: symmetric K, M and K_G, six exact
rigid-body modes (zero strain energy, zero stress resultants), positive semi-definite K
with exactly six zero eigenvalues, mass ``rho V`` for consistent and lumped mass, mass
points that reproduce the consistent mass, loads whose resultant is ``t x measure``,
and matrices that follow the element when it is renumbered or rotated.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
import pytest

from components.flexible import (
    BeamMesh,
    DKTShell,
    Element,
    Material,
    Section,
    ShellMesh,
    TimoshenkoBeam3D,
    mass_from_points,
    registered_elements,
)

STEEL = Material(E=2.1e11, nu=0.3, rho=7800.0)
RNG_SEEDS = (0, 1, 2)


@dataclass
class Case:
    """How to build one element of a type, in any orientation, and its exact volume."""

    name: str
    make: Callable[[np.ndarray], Element]  # rotation Q -> element (orientation data rotated)
    nodes: Callable[[np.random.Generator], np.ndarray]  # (k, 3) random reasonable geometry
    volume: Callable[[np.ndarray], float]  # exact volume of the element of nodes X [m^3]
    permutations: tuple[tuple[int, ...], ...]  # node renumberings giving the same element
    frame_axes: tuple[int, ...]  # frame axes that must follow a rotation of the element
    invariants: Callable[[np.ndarray], np.ndarray]  # frame-independent functions of resultants


def _tensor_invariants(s: np.ndarray) -> np.ndarray:
    """Trace and determinant of the membrane and moment tensors (in-plane axes are free)."""
    out = []
    for i in (0, 3):
        a, b, c = s[:, i], s[:, i + 1], s[:, i + 2]
        out += [a + b, a * b - c * c]
    return np.stack(out, axis=1)


def _beam_nodes(rng: np.random.Generator) -> np.ndarray:
    a = rng.uniform(-1, 1, 3)
    d = rng.normal(size=3)
    return np.vstack([a, a + rng.uniform(0.2, 2.0) * d / np.linalg.norm(d)])


def _tri_nodes(rng: np.random.Generator) -> np.ndarray:
    while True:
        X = rng.uniform(-1, 1, (3, 3))
        e1, e2 = X[1] - X[0], X[2] - X[0]
        area = 0.5 * np.linalg.norm(np.cross(e1, e2))
        if area > 0.1 * max(np.linalg.norm(e1), np.linalg.norm(e2)) ** 2:  # no sliver
            return X


SECTION = Section.rectangle(0.03, 0.05)
THICKNESS = 0.02
ZREF = np.array([0.3, -0.2, 1.0])

CASES = {
    TimoshenkoBeam3D: [
        Case("beam rectangle", lambda Q: TimoshenkoBeam3D(STEEL, SECTION, zref=Q @ ZREF),
             _beam_nodes, lambda X: SECTION.A * float(np.linalg.norm(X[1] - X[0])),
             ((1, 0),), (0, 1, 2), lambda s: s),
        Case("beam shear-rigid tube",
             lambda Q: TimoshenkoBeam3D(STEEL, Section(A=2e-4, Iy=3e-8, Iz=3e-8, J=6e-8,
                                                       ky=math.inf, kz=math.inf),
                                        zref=Q @ ZREF),
             _beam_nodes, lambda X: 2e-4 * float(np.linalg.norm(X[1] - X[0])), ((1, 0),),
             (0, 1, 2), lambda s: s),
    ],
    DKTShell: [
        Case("DKT + Allman shell", lambda Q: DKTShell(STEEL, THICKNESS), _tri_nodes,
             lambda X: THICKNESS * 0.5 * float(np.linalg.norm(np.cross(X[1] - X[0],
                                                                         X[2] - X[0]))),
             ((1, 2, 0), (2, 0, 1), (0, 2, 1), (2, 1, 0)),
             # the in-plane axes come from the body X axis (isotropic element: any in-plane
             # orientation gives the same matrices); the normal follows the element
             (2,), _tensor_invariants),
    ],
}
ALL = [pytest.param(c, seed, id=f"{c.name}-{seed}") for cs in CASES.values() for c in cs
       for seed in RNG_SEEDS]


def _rigid_modes(X: np.ndarray) -> np.ndarray:
    """(6k, 6): three translations and three small rotations about the origin."""
    k = X.shape[0]
    R = np.zeros((k, 6, 6))
    R[:, 0:3, 0:3] = np.eye(3)
    R[:, 3:6, 3:6] = np.eye(3)
    for i in range(3):
        e = np.eye(3)[i]
        R[:, 0:3, 3 + i] = np.cross(e, X)
    return R.reshape(6 * k, 6)


def _rotation(rng: np.random.Generator) -> np.ndarray:
    Q, r = np.linalg.qr(rng.normal(size=(3, 3)))
    Q = Q * np.sign(np.diag(r))
    return Q if np.linalg.det(Q) > 0 else -Q


def _setup(case: Case, seed: int) -> tuple[Element, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    el = case.make(np.eye(3))
    X = case.nodes(rng)[None]
    return el, X, el.frames(X)


def test_every_registered_element_has_a_contract_case() -> None:
    """A new element class must add its case here: the contract is not optional."""
    for mesh_cls, el_cls in registered_elements().items():
        assert el_cls in CASES, f"{el_cls.__name__} (for {mesh_cls.__name__}) has no case"
        assert el_cls.nodes_per_element == mesh_cls.nodes_per_element
        assert len(el_cls.resultant_names) == len(el_cls.resultant_units)
        assert 0 < el_cls.prestress_components <= len(el_cls.resultant_names)


def test_mesh_selects_the_element_without_isinstance() -> None:
    from components.flexible import FEModel

    beam = FEModel(BeamMesh.line((0, 0, 0), (1, 0, 0), 2), STEEL, section=SECTION)
    shell = FEModel(ShellMesh.rectangle(1, 1, 1, 1), STEEL, thickness=THICKNESS)
    assert type(beam.element) is TimoshenkoBeam3D and type(shell.element) is DKTShell


@pytest.mark.parametrize("case,seed", ALL)
def test_symmetric_matrices(case: Case, seed: int) -> None:
    el, X, F = _setup(case, seed)
    s = np.zeros((1, len(el.resultant_names)))
    s[0, :el.prestress_components] = np.linspace(1.0, 2.0, el.prestress_components) * 1e3
    for A in (el.stiffness(X, F)[0], el.mass(X, F)[0], el.mass(X, F, lumped=True)[0],
              el.geometric_stiffness(X, F, s)[0]):
        # assembled from symmetric products B^T D B: symmetric to round-off (1e-12 relative)
        assert np.abs(A - A.T).max() <= 1e-12 * np.abs(A).max()


@pytest.mark.parametrize("case,seed", ALL)
def test_geometric_stiffness_is_linear_in_the_prestress(case: Case, seed: int) -> None:
    el, X, F = _setup(case, seed)
    p = el.prestress_components
    s = np.random.default_rng(seed).normal(size=(1, len(el.resultant_names))) * 1e3
    G = el.geometric_stiffness_basis(X, F)
    assert G.shape == (1, p, el.n_dofs, el.n_dofs)
    KG = el.geometric_stiffness(X, F, s)[0]
    # the unit-resultant matrices recombine to the direct K_G (round-off)
    assert np.allclose(np.einsum("i,ijk->jk", s[0, :p], G[0]), KG, rtol=0,
                       atol=1e-12 * np.abs(KG).max())


@pytest.mark.parametrize("case,seed", ALL)
def test_six_rigid_modes_and_positive_semidefinite(case: Case, seed: int) -> None:
    el, X, F = _setup(case, seed)
    K = el.stiffness(X, F)[0]
    R = _rigid_modes(X[0])
    # rigid motions are strain free: zero energy and zero stress resultants (round-off)
    assert np.linalg.norm(K @ R) <= 1e-10 * np.abs(K).max() * np.linalg.norm(R)
    B = el.resultant_matrix(X, F)[0]
    assert np.abs(B @ R).max() <= 1e-10 * np.abs(B).max() * np.abs(R).max()
    ev = np.linalg.eigvalsh(K)
    assert ev.min() >= -1e-10 * ev.max()  # positive semi-definite
    assert int(np.sum(ev < 1e-10 * ev.max())) == 6  # exactly six zero-energy modes
    # translations carry no geometric stiffness (slopes unchanged)
    s = np.ones((1, len(el.resultant_names)))
    KG = el.geometric_stiffness(X, F, s)[0]
    assert np.abs(KG @ R[:, :3]).max() <= 1e-12 * np.abs(KG).max()


@pytest.mark.parametrize("case,seed", ALL)
def test_mass_is_rho_volume(case: Case, seed: int) -> None:
    el, X, F = _setup(case, seed)
    m = STEEL.rho * case.volume(X[0])
    Rt = _rigid_modes(X[0])[:, :3]
    for lumped in (False, True):
        M = el.mass(X, F, lumped)[0]
        # the rigid translation carries the element mass exactly in every direction
        assert np.allclose(Rt.T @ M @ Rt, m * np.eye(3), rtol=1e-12, atol=1e-12 * m)
    assert el.mass_per_measure * el.measure(X)[0] == pytest.approx(m, rel=1e-13)
    mp = el.mass_points(X, F)
    assert mp.weight.sum() == pytest.approx(m, rel=1e-13)
    # the quadrature description reproduces the consistent mass (exact integration)
    M = el.mass(X, F)[0]
    assert np.allclose(mass_from_points(mp)[0], M, rtol=0, atol=1e-13 * np.abs(M).max())


@pytest.mark.parametrize("case,seed", ALL)
def test_loads_have_the_right_resultant(case: Case, seed: int) -> None:
    el, X, F = _setup(case, seed)
    t = np.array([3.0, -2.0, 5.0])
    meas = el.measure(X)[0]
    R = _rigid_modes(X[0])
    for lumped in (False, True):
        f = el.distributed_load(X, F, t, lumped)[0]
        # virtual work on a rigid translation = resultant force t * measure
        assert np.allclose(R[:, :3].T @ f, t * meas, rtol=1e-12)
    # a cheaper load rule (load_points) must equal the exact mass-point integral
    mp = el.mass_points(X, F)
    ref = np.einsum("eq,eqaj,a->ej", mp.weight / el.mass_per_measure, mp.T, t)[0]
    assert np.allclose(el.distributed_load(X, F, t)[0], ref, rtol=0,
                       atol=1e-13 * np.abs(ref).max())
    a = np.array([0.0, -9.81, 2.0])
    fb = el.body_force(X, F, a)[0]
    assert np.allclose(R[:, :3].T @ fb, STEEL.rho * case.volume(X[0]) * a, rtol=1e-12)


@pytest.mark.parametrize("case,seed", ALL)
def test_independent_of_node_numbering(case: Case, seed: int) -> None:
    el, X, F = _setup(case, seed)
    K0, M0 = el.stiffness(X, F)[0], el.mass(X, F)[0]
    for perm in case.permutations:
        Xp = X[:, list(perm)]
        idx = np.concatenate([np.arange(6 * p, 6 * p + 6) for p in perm])
        Fp = el.frames(Xp)
        Kp, Mp = el.stiffness(Xp, Fp)[0], el.mass(Xp, Fp)[0]
        assert np.allclose(Kp, K0[np.ix_(idx, idx)], rtol=0, atol=1e-11 * np.abs(K0).max())
        assert np.allclose(Mp, M0[np.ix_(idx, idx)], rtol=0, atol=1e-12 * np.abs(M0).max())


@pytest.mark.parametrize("case,seed", ALL)
def test_rotating_the_element_rotates_its_matrices(case: Case, seed: int) -> None:
    el, X, F = _setup(case, seed)
    Q = _rotation(np.random.default_rng(100 + seed))
    elQ = case.make(Q)
    XQ = X @ Q.T
    FQ = elQ.frames(XQ)
    # element frames follow the element (built from its geometry and orientation data only)
    for i in case.frame_axes:
        assert abs(FQ[0, i] @ (Q @ F[0, i])) == pytest.approx(1.0, abs=1e-12)
    T = np.kron(np.eye(2 * X.shape[1]), Q)
    for A, AQ in ((el.stiffness(X, F)[0], elQ.stiffness(XQ, FQ)[0]),
                  (el.mass(X, F)[0], elQ.mass(XQ, FQ)[0])):
        assert np.allclose(AQ, T @ A @ T.T, rtol=0, atol=1e-11 * np.abs(A).max())
    # resultants are in the element frame: their frame-independent parts do not change
    rng = np.random.default_rng(seed)
    ue = rng.normal(size=(1, el.n_dofs)) * 1e-3
    s = case.invariants(el.stress_resultants(X, F, ue))
    sQ = case.invariants(elQ.stress_resultants(XQ, FQ, ue @ T.T))
    assert np.allclose(sQ, s, rtol=1e-9, atol=1e-10 * np.abs(s).max())
