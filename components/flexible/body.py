"""Flexible-body data for the floating-frame-of-reference multibody stage.

:meth:`FlexibleBodyData.from_mesh` is the preprocessor of the chapter (section
5): from a mesh, a material and a section/thickness it produces the reduced
matrices ``M_ff``, ``K_ff``, ``C_ff``, the inertia invariants, the centrifugal
stiffening tables and the mode shapes at every node. Results are cached per
mesh, material, section and reduction options.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Iterable, Literal

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from .assembly import FEModel, kelvin_voigt_damping, rayleigh_damping, solve_static
from .errors import FEError
from .invariants import Invariants, compute_invariants
from .materials import Material, Section
from .mesh import Mesh
from .modal import craig_bampton, eigenmodes, free_interface_modes

__all__ = ["FlexibleBodyData", "clear_cache"]

Reduction = Literal["free", "fixed", "craig_bampton", "nodal"]

_CACHE: "OrderedDict[tuple[Any, ...], FlexibleBodyData]" = OrderedDict()
_CACHE_SIZE = 16


def clear_cache() -> None:
    """Empty the preprocessor cache."""
    _CACHE.clear()


@dataclass(frozen=True)
class FlexibleBodyData:
    """Constant data of one flexible body in the floating frame of reference.

    Attributes
    ----------
    model : FEModel
        The finite-element model (mesh, element, material, full K and M).
    reduction : str
        'free' (free-interface modes, rigid modes removed), 'fixed' (modes with
        ``fixed_dofs`` clamped), 'craig_bampton' or 'nodal' (no reduction).
    basis : ndarray or sparse, shape (n_dofs, k)
        Map from elastic coordinates to nodal DOFs (body frame).
    M_ff, K_ff, C_ff : ndarray or sparse, shape (k, k)
        Reduced mass [kg], stiffness [N/m] and damping [N s/m] in the elastic coordinates.
    frequencies : ndarray
        Natural frequencies of the retained modes [Hz] (empty for 'nodal').
    invariants : Invariants
        Inertia shape integrals of the elastic coordinates.
    fixed_dofs : ndarray of int
        DOFs clamped to the body frame.
    stiffening : dict
        ``(a, b) -> (k, k)`` geometric stiffness of the centrifugal pre-stress for
        ``omega_a omega_b = 1`` (see :meth:`centrifugal_stiffness`); empty if not requested.
    """

    model: FEModel
    reduction: str
    basis: NDArray[np.float64] | sp.spmatrix
    M_ff: NDArray[np.float64] | sp.spmatrix
    K_ff: NDArray[np.float64] | sp.spmatrix
    C_ff: NDArray[np.float64] | sp.spmatrix
    frequencies: NDArray[np.float64]
    invariants: Invariants
    fixed_dofs: NDArray[np.int64]
    stiffening: dict[tuple[int, int], Any] = field(default_factory=dict)

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_mesh(cls, mesh: Mesh, material: Material, section: Section | None = None,
                  thickness: float | None = None, *, modes: int = 6,
                  reduction: Reduction = "free", fixed_nodes: str | Iterable[int] | None = None,
                  interface_nodes: str | Iterable[int] | None = None,
                  kelvin_voigt: float = 0.0, rayleigh: tuple[float, float] = (0.0, 0.0),
                  stiffening: bool = False, drilling_factor: float | None = None,
                  cache: bool = True) -> "FlexibleBodyData":
        """Run the preprocessor.

        Parameters
        ----------
        mesh : BeamMesh or ShellMesh
            Geometry in the body frame [m].
        material : Material
            Elastic material.
        section : Section, optional
            Beam section (beam meshes).
        thickness : float, optional
            Shell thickness [m] (shell meshes).
        modes : int
            Number of (elastic or fixed-interface) modes kept.
        reduction : {'free', 'fixed', 'craig_bampton', 'nodal'}
            Type of elastic coordinates (see class docstring).
        fixed_nodes : str or iterable of int, optional
            Nodes whose 6 DOFs are attached to the body frame ('fixed',
            'craig_bampton', 'nodal'); e.g. the clamped hinge edge of a panel.
        interface_nodes : str or iterable of int, optional
            Craig-Bampton interface nodes (joints, attachments).
        kelvin_voigt : float
            Kelvin-Voigt retardation time eta [s]: ``C = eta K``.
        rayleigh : (float, float)
            Rayleigh coefficients (alpha [1/s], beta [s]): ``C += alpha M + beta K``.
        stiffening : bool
            Also tabulate the centrifugal geometric stiffness (requires ``fixed_nodes``
            to support the static pre-stress problem).
        drilling_factor : float, optional
            Shell drilling penalty factor [-] (default 1e-3).
        cache : bool
            Reuse a previous result for identical inputs.

        Returns
        -------
        FlexibleBodyData
        """
        def _key_nodes(spec: str | Iterable[int] | None) -> tuple[int, ...]:
            if spec is None:
                return ()
            return tuple(mesh.nodes_of(spec).tolist())

        key = (mesh.key(), material, section, thickness, modes, reduction,
               _key_nodes(fixed_nodes), _key_nodes(interface_nodes), float(kelvin_voigt),
               tuple(map(float, rayleigh)), bool(stiffening), drilling_factor)
        if cache and key in _CACHE:
            _CACHE.move_to_end(key)
            return _CACHE[key]

        model = FEModel(mesh, material, section=section, thickness=thickness,
                        drilling_factor=drilling_factor)
        K, M = model.K, model.M
        fixed = (model.dofs(fixed_nodes) if fixed_nodes is not None
                 else np.zeros(0, np.int64))
        if reduction == "free":
            if fixed.size:
                raise FEError("reduction='free' takes no fixed_nodes; use reduction='fixed' "
                              "to clamp nodes to the body frame")
            md = free_interface_modes(K, M, modes, model.rigid_body_modes())
            basis: NDArray[np.float64] | sp.spmatrix = md.shapes
            freqs = md.frequencies
        elif reduction == "fixed":
            if not fixed.size:
                raise FEError("reduction='fixed' needs fixed_nodes (e.g. the clamped edge)")
            md = eigenmodes(K, M, modes, fixed_dofs=fixed)
            basis, freqs = md.shapes, md.frequencies
        elif reduction == "craig_bampton":
            if interface_nodes is None:
                raise FEError("reduction='craig_bampton' needs interface_nodes")
            idofs = np.setdiff1d(model.dofs(interface_nodes), fixed)
            cb = craig_bampton(K, M, idofs, modes, fixed_dofs=fixed)
            basis, freqs = cb.basis, cb.frequencies()
        elif reduction == "nodal":
            free = np.setdiff1d(np.arange(model.n_dofs), fixed)
            basis = sp.csr_matrix((np.ones(free.size), (free, np.arange(free.size))),
                                  shape=(model.n_dofs, free.size))
            freqs = np.zeros(0)
        else:
            raise FEError(f"unknown reduction {reduction!r}; use 'free', 'fixed', "
                          f"'craig_bampton' or 'nodal'")

        C = kelvin_voigt_damping(K, kelvin_voigt) + rayleigh_damping(M, K, *rayleigh)
        if sp.issparse(basis):
            B = sp.csr_matrix(basis)
            Mff, Kff, Cff = (sp.csr_matrix(B.T @ A @ B) for A in (M, K, C))
            inv_full = compute_invariants(model.mass_points, model.element_dofs, model.n_dofs)
            inv = _restrict(inv_full, free)
        else:
            Mff, Kff, Cff = (basis.T @ (A @ basis) for A in (M, K, C))
            Mff, Kff, Cff = (0.5 * (A + A.T) for A in (Mff, Kff, Cff))
            inv = compute_invariants(model.mass_points, model.element_dofs, model.n_dofs,
                                     basis=basis)
        tables: dict[tuple[int, int], Any] = {}
        if stiffening:
            if not fixed.size:
                raise FEError("stiffening=True needs fixed_nodes to support the centrifugal "
                              "pre-stress problem")
            tables = _stiffening_tables(model, fixed, basis)
        out = cls(model=model, reduction=reduction, basis=basis, M_ff=Mff, K_ff=Kff, C_ff=Cff,
                  frequencies=np.asarray(freqs), invariants=inv, fixed_dofs=fixed,
                  stiffening=tables)
        if cache:
            _CACHE[key] = out
            while len(_CACHE) > _CACHE_SIZE:
                _CACHE.popitem(last=False)
        return out

    # ------------------------------------------------------------------ accessors
    @property
    def n_coordinates(self) -> int:
        """Number of elastic coordinates."""
        return int(self.basis.shape[1])

    def _rows(self, node: int | str, comps: slice) -> NDArray[np.float64]:
        ids = self.model.mesh.nodes_of(node)
        if ids.size != 1:
            raise FEError(f"expected a single node, got {ids.size} from {node!r}")
        n = int(ids[0])
        rows = np.arange(6 * n, 6 * n + 6)[comps]
        B: Any = self.basis[rows]
        return np.asarray(B.toarray() if sp.issparse(B) else B, dtype=np.float64)

    def phi_t(self, node: int | str) -> NDArray[np.float64]:
        """Translation shape matrix (3, k) of a node: ``u_node = phi_t(node) @ q`` [m]."""
        return self._rows(node, slice(0, 3))

    def phi_r(self, node: int | str) -> NDArray[np.float64]:
        """Rotation shape matrix (3, k) of a node: ``theta_node = phi_r(node) @ q`` [rad]."""
        return self._rows(node, slice(3, 6))

    def node_position(self, node: int | str) -> NDArray[np.float64]:
        """Undeformed position of a node in the body frame [m]."""
        ids = self.model.mesh.nodes_of(node)
        return self.model.mesh.nodes[int(ids[0])].copy()

    def nodal_displacements(self, q: ArrayLike) -> NDArray[np.float64]:
        """Nodal DOFs (n_nodes, 6) for elastic coordinates ``q``."""
        return np.asarray(self.basis @ np.asarray(q, float)).reshape(-1, 6)

    def centrifugal_stiffness(self, omega: ArrayLike) -> NDArray[np.float64] | sp.spmatrix:
        """Geometric stiffness of the centrifugal pre-stress for angular velocity ``omega``.

        ``K_G(omega) = sum_ab omega_a omega_b G_ab`` (exact for the linear pre-stress).
        Add it and :meth:`Invariants.spin_softening` to ``K_ff`` for a spinning body.

        Parameters
        ----------
        omega : array_like, shape (3,)
            Angular velocity of the body frame [rad/s].
        """
        if not self.stiffening:
            raise FEError("no stiffening tables: build with from_mesh(..., stiffening=True)")
        w = np.asarray(omega, float).ravel()
        out: Any = 0.0
        for (a, b), G in self.stiffening.items():
            out = out + w[a] * w[b] * (1.0 if a == b else 2.0) * G
        return out


def _restrict(inv: Invariants, free: NDArray[np.int64]) -> Invariants:
    """Nodal invariants restricted to the free DOFs."""
    Sb = [[inv.Sbar[a][b][free][:, free] for b in range(3)] for a in range(3)]
    return Invariants(mass=inv.mass, first_moment=inv.first_moment,
                      second_moment=inv.second_moment, I3=inv.I3[:, free],
                      Shat=inv.Shat[:, :, free], Sbar=Sb)


def _stiffening_tables(model: FEModel, fixed: NDArray[np.int64],
                       basis: NDArray[np.float64] | sp.spmatrix) -> dict[tuple[int, int], Any]:
    """Projected geometric stiffness for each symmetric product ``omega_a omega_b``."""
    tables = {}
    for a in range(3):
        for b in range(a, 3):
            E = np.zeros((3, 3))
            E[a, b] = E[b, a] = 1.0 if a == b else 0.5
            W = E - np.trace(E) * np.eye(3)  # omega~ omega~ for omega omega^T = E
            f = model.centrifugal_load_tensor(W)
            u = solve_static(model.K, f, fixed)
            G = model.geometric_stiffness(u=u)
            tables[(a, b)] = (sp.csr_matrix(basis.T @ G @ basis) if sp.issparse(basis)
                              else basis.T @ (G @ basis))
    return tables
