"""Flexible-body data for the floating-frame-of-reference multibody stage.

:meth:`FlexibleBodyData.from_mesh` is the preprocessor of the chapter (section 5):
from a mesh, a material and a section/thickness it produces, for one body,

* the elastic basis for a chosen **reference condition** (``clamped``, ``pinned``,
  ``free``; :mod:`~components.flexible.reference`) and **reduction** (``modal``,
  ``craig_bampton``, ``nodal``),
* the reduced matrices ``M_ff``, ``K_ff``, ``C_ff`` and the inertia invariants,
* per attachment node its position and translation/rotation shape matrices,
* geometric stiffening data (unit-load matrices, :mod:`~components.flexible.stiffening`),
* load vectors and stress-resultant maps in the elastic coordinates.

Results are cached per mesh, material, section and options.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Iterable, Literal, Sequence

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from .assembly import FEModel, kelvin_voigt_damping, rayleigh_damping
from .errors import FEError
from .invariants import Invariants, compute_invariants
from .materials import Material, Section
from .mesh import Mesh
from .modal import craig_bampton, dense_eig, eigenmodes, free_interface_modes
from .reference import (
    REFERENCE_KINDS,
    ReferenceCondition,
    StaticSolver,
    free_nodal_basis,
    resolve_nodes,
)
from .stiffening import CENTRIFUGAL_PAIRS, GeometricStiffening, geometric_stiffening

__all__ = ["Attachment", "FlexibleBodyData", "clear_cache"]

Reduction = Literal["modal", "craig_bampton", "nodal", "free", "fixed"]
Reference = Literal["clamped", "pinned", "free"]
NodeSpec = str | int | Iterable[int]

_CACHE: "OrderedDict[tuple[Any, ...], FlexibleBodyData]" = OrderedDict()
_CACHE_SIZE = 16
#: Largest free body (DOFs) for nodal coordinates: the mean-axis elimination makes the
#: reduced matrices dense, (n - 6)^2 entries (2000 DOFs: 32 MB per matrix).
_FREE_NODAL_LIMIT = 2000


def clear_cache() -> None:
    """Empty the preprocessor cache."""
    _CACHE.clear()


@dataclass(frozen=True)
class Attachment:
    """What a joint or a load needs from an attachment node.

    The displacement and small rotation of the node in the body frame are
    ``u = phi_t @ q`` and ``theta = phi_r @ q`` for elastic coordinates ``q``.

    Attributes
    ----------
    node : int
        Node index.
    position : ndarray, shape (3,)
        Undeformed position ``s`` in the body frame [m].
    phi_t : ndarray, shape (3, k)
        Translation shape matrix [m per unit coordinate].
    phi_r : ndarray, shape (3, k)
        Rotation shape matrix [rad per unit coordinate].
    """

    node: int
    position: NDArray[np.float64]
    phi_t: NDArray[np.float64]
    phi_r: NDArray[np.float64]


def _legacy(reduction: str, reference: str | None, reference_nodes: Any, fixed_nodes: Any
            ) -> tuple[str, str, Any]:
    """Map the legacy spellings (reduction='free'/'fixed', fixed_nodes=) to the new ones."""
    if fixed_nodes is not None:
        if reference_nodes is not None:
            raise FEError("give the clamped nodes once: reference_nodes=... (fixed_nodes is its "
                          "legacy name)")
        if reference not in (None, "clamped"):
            raise FEError(f"fixed_nodes clamps nodes to the body frame; it cannot be combined "
                          f"with reference={reference!r} (use reference_nodes)")
        reference, reference_nodes = "clamped", fixed_nodes
    if reduction == "free":
        if reference not in (None, "free"):
            raise FEError("reduction='free' (legacy) means reference='free', reduction='modal'; "
                          "it takes no fixed_nodes: use reference='clamped' to clamp nodes")
        return "modal", "free", reference_nodes
    if reduction == "fixed":
        if reference not in (None, "clamped") or reference_nodes is None:
            raise FEError("reduction='fixed' needs fixed_nodes (e.g. the clamped edge); new "
                          "spelling: reference='clamped', reference_nodes=...")
        return "modal", "clamped", reference_nodes
    if reduction not in ("modal", "craig_bampton", "nodal"):
        raise FEError(f"unknown reduction {reduction!r}; use 'modal' (normal modes of the "
                      f"reference condition), 'craig_bampton' (constraint modes at the "
                      f"attachment nodes + fixed-interface modes) or 'nodal' (all nodal DOFs)")
    if reference is None:
        reference = "free" if reference_nodes is None else "clamped"
    return reduction, reference, reference_nodes


def _column_nodes(T: sp.csr_matrix) -> NDArray[np.int64]:
    """Node of each column of a reference transform (each column lives on one node)."""
    Tc = sp.csc_matrix(T)
    first = Tc.indices[Tc.indptr[:-1]]
    return np.asarray(first // 6, dtype=np.int64)


def _mean_axis_craig_bampton(model: FEModel, interface: NDArray[np.int64], n_modes: int
                             ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Craig-Bampton basis of a free body with the rigid-body motions removed.

    The constraint modes of a free body contain its rigid motions; they are projected
    off M-orthogonally, the six directions that vanish are dropped, and the remaining
    space is diagonalised (mass-normalised, ascending frequencies).
    """
    K, M = model.K, model.M
    cb = craig_bampton(K, M, interface, n_modes)
    R = model.rigid_body_modes()
    MR = np.asarray(M @ R)
    Z = cb.basis - R @ np.linalg.solve(R.T @ MR, MR.T @ cb.basis)
    G = Z.T @ (M @ Z)
    lam, V = sla.eigh(0.5 * (G + G.T))
    keep = lam > 1e-10 * lam.max()
    if int(np.sum(~keep)) != 6:
        raise FEError(f"craig_bampton with reference='free': the attachment nodes must fix "
                      f"all six rigid motions (found {int(np.sum(~keep))} dependent directions "
                      f"instead of 6); attach the body at more nodes")
    Z = Z @ (V[:, keep] / np.sqrt(lam[keep]))
    lam2, Q = dense_eig(Z.T @ (K @ Z), Z.T @ (M @ Z), 0.0)
    return Z @ Q, np.sqrt(np.clip(lam2, 0.0, None)) / (2 * np.pi)


@dataclass(frozen=True)
class FlexibleBodyData:
    """Constant data of one flexible body in the floating frame of reference.

    Attributes
    ----------
    model : FEModel
        The finite-element model (mesh, element, material, full K and M).
    reduction : {'modal', 'craig_bampton', 'nodal'}
        Type of elastic coordinates.
    basis : ndarray or sparse, shape (n_dofs, k)
        Map from elastic coordinates to nodal DOFs (body frame): ``u = basis @ q``.
    M_ff, K_ff, C_ff : ndarray or sparse, shape (k, k)
        Reduced mass [kg], stiffness [N/m] and damping [N s/m] in the elastic
        coordinates (generalized units for modal coordinates).
    frequencies : ndarray
        Natural frequencies of the retained modes [Hz] (empty for 'nodal').
    invariants : Invariants
        Inertia shape integrals of the elastic coordinates.
    fixed_dofs : ndarray of int
        DOFs that are zero in every basis vector (the DOF-aligned reference constraints:
        the clamp; for 'pinned' node A's translations, and the chord constraints when the
        chord lies along a body axis).
    stiffening : dict
        Legacy view of the centrifugal part of :attr:`geometric_stiffening`:
        ``(a, b) -> (k, k)`` with ``K_G(omega) = sum_{a<=b} omega_a omega_b (1 or 2) G_ab``.
    reference : ReferenceCondition
        The reference condition (what the body frame is attached to).
    attachment_nodes : tuple of int
        Nodes where joints and loads attach (Craig-Bampton interface, unit-load cases).
    geometric_stiffening : GeometricStiffening or None
        Unit-load geometric stiffness matrices (``stiffening=True``).
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
    reference: ReferenceCondition = field(default_factory=ReferenceCondition.free)
    attachment_nodes: tuple[int, ...] = ()
    geometric_stiffening: GeometricStiffening | None = None

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_mesh(cls, mesh: Mesh, material: Material, section: Section | None = None,
                  thickness: float | None = None, *, modes: int = 6,
                  reference: Reference | None = None,
                  reference_nodes: NodeSpec | Sequence[NodeSpec] | None = None,
                  reduction: Reduction = "modal",
                  attachment_nodes: NodeSpec | Sequence[NodeSpec] | None = None,
                  kelvin_voigt: float = 0.0, rayleigh: tuple[float, float] = (0.0, 0.0),
                  stiffening: bool = False, drilling_factor: float | None = None,
                  cache: bool = True,
                  fixed_nodes: NodeSpec | None = None,
                  interface_nodes: NodeSpec | Sequence[NodeSpec] | None = None,
                  ) -> "FlexibleBodyData":
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
            Number of normal modes ('modal') or fixed-interface modes ('craig_bampton').
        reference : {'clamped', 'pinned', 'free'}, optional
            Reference condition (default 'clamped' if ``reference_nodes`` is given,
            else 'free'):
            'clamped' -- all DOFs of ``reference_nodes`` fixed to the body frame (a
            cantilevered appendage, a panel on its hinge);
            'pinned' -- chord frame through ``reference_nodes=(A, B)`` (a link between
            two joints; simply supported modes);
            'free' -- mean axes (a free-floating body).
        reference_nodes : node spec, optional
            'clamped': a node, a set name or several; 'pinned': ``(A, B)``.
        reduction : {'modal', 'craig_bampton', 'nodal'}
            'modal': the first ``modes`` normal modes under the reference condition
            ('free': rigid modes removed exactly, mean axes). 'craig_bampton': static
            constraint modes of the attachment-node DOFs not held by the reference
            plus ``modes`` fixed-interface modes ('free': rigid motions projected out,
            basis diagonalised). 'nodal': every nodal DOF the reference leaves free
            ('free': six DOFs eliminated by the mean-axis conditions).
            Legacy: 'fixed' = reference 'clamped' + 'modal'; 'free' = reference 'free' +
            'modal'.
        attachment_nodes : node spec, optional
            Nodes where joints and loads attach: the Craig-Bampton interface and the
            nodes of the unit force/moment stiffening cases. Default: A and B for
            'pinned', none otherwise.
        kelvin_voigt : float
            Kelvin-Voigt retardation time eta [s]: ``C = eta K``.
        rayleigh : (float, float)
            Rayleigh coefficients (alpha [1/s], beta [s]): ``C += alpha M + beta K``.
        stiffening : bool
            Also tabulate the geometric stiffening data (:attr:`geometric_stiffening`).
        drilling_factor : float, optional
            Shell drilling penalty factor [-] (default 1e-3).
        cache : bool
            Reuse a previous result for identical inputs.
        fixed_nodes : node spec, optional
            Legacy name of ``reference_nodes`` with ``reference='clamped'``.
        interface_nodes : node spec, optional
            Legacy name of ``attachment_nodes``.

        Returns
        -------
        FlexibleBodyData

        Raises
        ------
        FEError
            Inconsistent options (e.g. 'pinned' without two nodes, 'craig_bampton'
            without attachment nodes), or a reference condition that does not hold
            the body: a node in no element, a mesh in separate pieces with 'free' or
            'pinned', a piece without a clamped node with 'clamped' (each named).

        Notes
        -----
        Legacy calls ``reduction='craig_bampton'`` or ``'nodal'`` without
        ``fixed_nodes`` used to keep the rigid-body motions in the basis (a singular
        FFRF mass matrix); they now mean ``reference='free'``.
        """
        if isinstance(modes, bool) or not isinstance(modes, (int, np.integer, float)) or \
                not float(modes).is_integer():
            raise FEError(f"modes must be a whole number (the number of modes kept), got "
                          f"{modes!r}")
        if not isinstance(stiffening, (bool, np.bool_)):
            raise FEError(f"stiffening={stiffening!r}; give True (also tabulate the geometric "
                          f"stiffening data) or False")
        if interface_nodes is not None:
            if attachment_nodes is not None:
                raise FEError("give attachment_nodes once (interface_nodes is its legacy name)")
            attachment_nodes = interface_nodes
        red, ref_kind, ref_nodes = _legacy(reduction, reference, reference_nodes, fixed_nodes)
        if ref_kind not in REFERENCE_KINDS:
            raise FEError(f"unknown reference {ref_kind!r}; use 'clamped' (cantilevered "
                          f"appendage), 'pinned' (link between two joints) or 'free' "
                          f"(free-floating body)")
        ref = ReferenceCondition.from_spec(mesh, ref_kind, ref_nodes)
        _check_pieces(mesh, ref)
        att = resolve_nodes(mesh, attachment_nodes, "attachment_nodes")
        if attachment_nodes is None and ref.kind == "pinned":
            att = np.asarray(ref.nodes, np.int64)
        attach = tuple(int(n) for n in att)

        key = (mesh.key(), material, section, thickness, int(modes), red, ref.kind, ref.nodes,
               attach, float(kelvin_voigt), tuple(map(float, rayleigh)), bool(stiffening),
               drilling_factor)
        if cache and key in _CACHE:
            _CACHE.move_to_end(key)
            return _CACHE[key]

        model = FEModel(mesh, material, section=section, thickness=thickness,
                        drilling_factor=drilling_factor)
        K, M = model.K, model.M
        basis, freqs = _basis(model, ref, red, int(modes), attach)

        C = kelvin_voigt_damping(K, kelvin_voigt) + rayleigh_damping(M, K, *rayleigh)
        if sp.issparse(basis):
            B = sp.csr_matrix(basis)
            Mff, Kff, Cff = (sp.csr_matrix(B.T @ A @ B) for A in (M, K, C))
            inv_full = compute_invariants(model.mass_points, model.element_dofs, model.n_dofs)
            inv = inv_full.project(B)
        else:
            Mff, Kff, Cff = (basis.T @ (A @ basis) for A in (M, K, C))
            Mff, Kff, Cff = (0.5 * (A + A.T) for A in (Mff, Kff, Cff))
            inv = compute_invariants(model.mass_points, model.element_dofs, model.n_dofs,
                                     basis=basis)
        gs: GeometricStiffening | None = None
        legacy: dict[tuple[int, int], Any] = {}
        if stiffening:
            gs = geometric_stiffening(model, ref, basis, attach)
            legacy = _legacy_tables(gs)
        out = cls(model=model, reduction=red, basis=basis, M_ff=Mff, K_ff=Kff, C_ff=Cff,
                  frequencies=np.asarray(freqs), invariants=inv,
                  fixed_dofs=ref.held_dofs(model.n_nodes), stiffening=legacy, reference=ref,
                  attachment_nodes=attach, geometric_stiffening=gs)
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

    def _node(self, node: int | str) -> int:
        ids = self.model.mesh.nodes_of(node)
        if ids.size != 1:
            raise FEError(f"expected a single node (an index or a one-node set), got "
                          f"{ids.size} nodes from {node!r}")
        return int(ids[0])

    def _rows(self, node: int | str, comps: slice) -> NDArray[np.float64]:
        n = self._node(node)
        rows = np.arange(6 * n, 6 * n + 6)[comps]
        B: Any = self.basis[rows]
        return np.asarray(B.toarray() if sp.issparse(B) else B, dtype=np.float64)

    def phi_t(self, node: int | str) -> NDArray[np.float64]:
        """Translation shape matrix (3, k) of a node: ``u_node = phi_t(node) @ q`` [m].

        Parameters
        ----------
        node : int or str
            Node index or the name of a one-node set (any node, any reduction).
        """
        return self._rows(node, slice(0, 3))

    def phi_r(self, node: int | str) -> NDArray[np.float64]:
        """Rotation shape matrix (3, k) of a node: ``theta_node = phi_r(node) @ q`` [rad].

        Parameters
        ----------
        node : int or str
            Node index or the name of a one-node set.
        """
        return self._rows(node, slice(3, 6))

    def node_position(self, node: int | str) -> NDArray[np.float64]:
        """Undeformed position ``s`` (3,) of a node in the body frame [m]."""
        return self.model.mesh.nodes[self._node(node)].copy()

    def attachment(self, node: int | str) -> Attachment:
        """Position and shape matrices of an attachment node (:class:`Attachment`)."""
        n = self._node(node)
        return Attachment(node=n, position=self.node_position(n), phi_t=self.phi_t(n),
                          phi_r=self.phi_r(n))

    def nodal_displacements(self, q: ArrayLike) -> NDArray[np.float64]:
        """Nodal DOFs (n_nodes, 6) for elastic coordinates ``q`` [m, rad]."""
        return np.asarray(self.basis @ np.asarray(q, float)).reshape(-1, 6)

    # ------------------------------------------------------------------ loads
    def elastic_load(self, f: ArrayLike) -> NDArray[np.float64]:
        """Generalized elastic force ``basis^T f`` (k,) of a nodal load ``f`` (n_dofs,) [N, N m].

        This is the part of the virtual work of ``f`` on the elastic coordinates; the
        rigid-body part is :meth:`load_resultant`.
        """
        f = np.asarray(f, float).ravel()
        if f.size != self.model.n_dofs:
            raise FEError(f"nodal load must have {self.model.n_dofs} entries (6 per node), "
                          f"got {f.size}")
        return np.asarray(self.basis.T @ f, dtype=np.float64).ravel()

    def load_resultant(self, f: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Resultant force [N] and moment about the body-frame origin [N m] of a nodal load.

        Evaluated on the undeformed positions (the generalized forces on the body
        frame translation and rotation at ``q = 0``).
        """
        F = np.asarray(f, float).reshape(-1, 6)
        force = F[:, :3].sum(axis=0)
        moment = np.cross(self.model.mesh.nodes, F[:, :3]).sum(axis=0) + F[:, 3:].sum(axis=0)
        return force, moment

    def point_load(self, node: int | str, force: ArrayLike = (0, 0, 0),
                   moment: ArrayLike = (0, 0, 0)) -> NDArray[np.float64]:
        """Elastic load (k,) of a force [N] and a moment [N m] at a node (body frame)."""
        return self.elastic_load(self.model.point_load(node, force, moment))

    def distributed_load(self, traction: ArrayLike, elements: ArrayLike | None = None,
                         lumped: bool = False) -> NDArray[np.float64]:
        """Elastic load (k,) of a distributed force (beam line load or shell traction).

        Parameters
        ----------
        traction : array_like, shape (3,) or (E, 3)
            [N/m] on beams, [N/m^2] on shells, body components, uniform per element.
        elements : array_like of int or bool, optional
            Loaded elements (default all).
        lumped : bool
            Consistent (default) or lumped nodal forces, see
            :meth:`FEModel.distributed_load`.
        """
        return self.elastic_load(self.model.distributed_load(traction, elements, lumped))

    def pressure_load(self, pressure: float | ArrayLike, elements: ArrayLike | None = None,
                      lumped: bool = False) -> NDArray[np.float64]:
        """Elastic load (k,) of a pressure [Pa] along the shell normals ``e3``."""
        return self.elastic_load(self.model.pressure_load(pressure, elements, lumped))

    def body_force_load(self, acceleration: ArrayLike) -> NDArray[np.float64]:
        """Elastic load (k,) of the uniform body force ``rho a`` [m/s^2] (= ``I3^T a``)."""
        return self.elastic_load(self.model.body_force_load(acceleration))

    # ------------------------------------------------------------------ resultants
    def resultant_matrix(self) -> NDArray[np.float64] | sp.spmatrix:
        """Map from ``q`` to the element stress resultants, shape (E * r, k).

        Row ``e * r + i`` is resultant ``i`` (``model.element.resultant_names``) of
        element ``e`` (beam: ``N, Vy, Vz, T, My, Mz`` [N, N m] at mid-length; shell:
        ``Nx, Ny, Nxy`` [N/m], ``Mx, My, Mxy`` [N m/m] at the centroid; element frames).
        Dense for modal bases, sparse for nodal ones.
        """
        model = self.model
        Be = model.resultant_matrices  # (E, r, nd)
        E, r, nd = Be.shape
        ed = model.element_dofs
        rows = np.broadcast_to(np.arange(E * r).reshape(E, r, 1), (E, r, nd)).ravel()
        cols = np.broadcast_to(ed[:, None, :], (E, r, nd)).ravel()
        S = sp.csr_matrix((Be.ravel(), (rows, cols)), shape=(E * r, model.n_dofs))
        out: Any = S @ self.basis
        if sp.issparse(self.basis):
            return sp.csr_matrix(out)
        return np.asarray(out, dtype=np.float64)

    def element_resultants(self, q: ArrayLike) -> NDArray[np.float64]:
        """Stress resultants (E, r) for elastic coordinates ``q`` (see :meth:`resultant_matrix`)."""
        u = np.asarray(self.basis @ np.asarray(q, float)).ravel()
        return self.model.element_resultants(u)

    # ------------------------------------------------------------------ stiffening
    def static_solver(self) -> StaticSolver:
        """Static solver with the supports of the reference condition (inertia relief if free)."""
        return StaticSolver(self.model, self.reference)

    def centrifugal_stiffness(self, omega: ArrayLike) -> NDArray[np.float64] | sp.spmatrix:
        """Geometric stiffness of the centrifugal pre-stress for angular velocity ``omega``.

        ``K_G(omega) = sum_ab W_ab K_G,ab`` with ``W = w w^T - |w|^2 I`` (exact for the
        linear pre-stress). Add it and :meth:`Invariants.spin_softening` to ``K_ff`` for a
        spinning body; the general combination is :attr:`geometric_stiffening`.

        Parameters
        ----------
        omega : array_like, shape (3,)
            Angular velocity of the body frame [rad/s].
        """
        gs = self.geometric_stiffening
        if gs is None:
            raise FEError("no stiffening tables: build with from_mesh(..., stiffening=True)")
        c = gs.coefficients(omega=np.asarray(omega, float).ravel())
        return gs.stiffness([ci if i < 6 else 0.0 for i, ci in enumerate(c)])


def _nodes_text(mesh: Mesh, nodes: NDArray[np.int64], limit: int = 6) -> str:
    """``node 2 at (5, 5, 5)`` / ``nodes [2, 3, ...]``: for messages."""
    if nodes.size == 1:
        x = ", ".join(f"{c:.6g}" for c in mesh.nodes[int(nodes[0])])
        return f"node {int(nodes[0])} at ({x})"
    shown = [int(n) for n in nodes[:limit]]
    return f"nodes {shown}" + (f" and {nodes.size - limit} more" if nodes.size > limit else "")


def _check_pieces(mesh: Mesh, ref: ReferenceCondition) -> None:
    """Every node in an element, and every piece of the mesh held by the reference
    condition: a node without element, or a piece the reference does not hold, has motions
    without stiffness (rigid-body motions that a clamped body would return as modes of
    frequency 0, or a singular mass matrix)."""
    from scipy.sparse.csgraph import connected_components

    n = mesh.n_nodes
    used = np.zeros(n, dtype=bool)
    used[mesh.elements.ravel()] = True
    if not used.all():
        unused = np.flatnonzero(~used)
        one = unused.size == 1
        raise FEError(f"{_nodes_text(mesh, unused)} of the mesh "
                      f"{'belongs' if one else 'belong'} to no element: a node without an "
                      "element has no stiffness and no mass; remove "
                      f"{'it' if one else 'them'} from the mesh or connect "
                      f"{'it' if one else 'them'} by elements")
    E = mesh.elements
    k = E.shape[1]
    rows = np.repeat(E[:, 0], k - 1)
    cols = E[:, 1:].ravel()
    graph = sp.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(n, n))
    n_pieces, label = connected_components(graph, directed=False)
    if n_pieces == 1:
        return
    pieces = [np.flatnonzero(label == c) for c in range(n_pieces)]
    held = set(ref.nodes)
    if ref.kind == "clamped":
        loose = [p for p in pieces if not held & set(p.tolist())]
    else:
        loose = pieces[1:] if ref.kind == "free" else [
            p for p in pieces if not set(p.tolist()) >= held]
    if not loose:
        return
    p = loose[0]
    elems = np.flatnonzero(np.isin(E[:, 0], p))
    others = np.flatnonzero(label != label[p[0]])
    near = ""
    if others.size:
        from scipy.spatial import cKDTree

        size = float(np.max(np.ptp(mesh.nodes, axis=0))) or 1.0
        d, j = cKDTree(mesh.nodes[others]).query(mesh.nodes[p])
        i = int(np.argmin(d))
        if d[i] <= 1e-9 * size:
            near = (f"; its node {int(p[i])} and node {int(others[j[i]])} of another piece "
                    "are at the same point but are two nodes: merge them")
    what = (f"is in {n_pieces} separate pieces; reference={ref.kind!r} needs one piece "
            "(its frame is that of the whole body)" if ref.kind != "clamped" else
            f"is in {n_pieces} separate pieces, and the piece of "
            f"{_nodes_text(mesh, p)} (element(s) {[int(e) for e in elems[:6]]}"
            + (" ..." if elems.size > 6 else "") + ") holds none of the clamped "
            f"reference_nodes {sorted(held)[:6]}")
    fix = ("connect the pieces by elements" if ref.kind != "clamped" else
           "connect it to the rest by elements, or clamp one of its nodes too")
    raise FEError(f"the mesh {what}: that piece would move as a rigid body with no "
                  f"stiffness{near}; {fix}")


def _check_interior(model: FEModel, ref: ReferenceCondition, attach: tuple[int, ...],
                    n_interior: int, modes: int) -> None:
    """Craig-Bampton keeps ``modes`` fixed-interface modes, the modes of the interior DOFs
    (neither at an attachment node nor held by the reference) with the attachments held:
    there are at most ``n_interior`` of them. Asking for more is named, with what to do."""
    if modes <= n_interior:
        return
    mesh = model.mesh
    where = (f"{mesh!r} ({ref.describe()}; attachment nodes {list(attach)[:8]})")
    if n_interior == 0:
        raise FEError(
            f"reduction='craig_bampton' with modes={modes}: every DOF of {where} that the "
            f"reference leaves free is at an attachment node, so there is no interior DOF "
            f"and no fixed-interface mode to keep; give modes=0 (the basis is then the "
            f"attachment DOFs' static modes alone, which for this mesh is exact: the same "
            f"as reduction='nodal'), or mesh the body with more elements")
    raise FEError(
        f"reduction='craig_bampton' with modes={modes}: {where} has only {n_interior} "
        f"interior DOFs (not at an attachment node nor held by the reference), so at most "
        f"{n_interior} fixed-interface modes exist; give modes <= {n_interior}, or mesh the "
        f"body with more elements")


def _basis(model: FEModel, ref: ReferenceCondition, reduction: str, modes: int,
           attach: tuple[int, ...]) -> tuple[Any, NDArray[np.float64]]:
    """Elastic basis and frequencies [Hz] of a reference condition and reduction."""
    K, M = model.K, model.M
    if reduction == "nodal":
        if ref.kind == "free":
            if model.n_dofs > _FREE_NODAL_LIMIT:
                raise FEError(f"reduction='nodal' with reference='free' couples every DOF to "
                              f"the six mean-axis DOFs (dense matrices); {model.n_dofs} DOFs "
                              f"is above {_FREE_NODAL_LIMIT}: use reduction='modal', or a "
                              f"'clamped'/'pinned' reference for nodal coordinates")
            return free_nodal_basis(model), np.zeros(0)
        return ref.transform(model.n_nodes), np.zeros(0)
    if reduction == "craig_bampton":
        if not attach:
            raise FEError("reduction='craig_bampton' needs attachment_nodes (legacy name "
                          "interface_nodes): the interface nodes where joints and loads act, "
                          "e.g. attachment_nodes=['start', 'end']")
        if ref.kind == "free":
            idofs = model.dofs(list(attach))
            _check_interior(model, ref, attach, model.n_dofs - np.unique(idofs).size, modes)
            return _mean_axis_craig_bampton(model, idofs, modes)
        T = ref.transform(model.n_nodes)
        Kr, Mr = sp.csr_matrix(T.T @ K @ T), sp.csr_matrix(T.T @ M @ T)
        iv = np.flatnonzero(np.isin(_column_nodes(T), attach))
        if iv.size == 0:
            raise FEError(f"craig_bampton: the attachment nodes {list(attach)} are held "
                          f"completely by the reference condition ({ref.describe()}); add "
                          f"nodes where joints or loads act")
        _check_interior(model, ref, attach, Kr.shape[0] - iv.size, modes)
        cb = craig_bampton(Kr, Mr, iv, modes)
        return np.asarray(T @ cb.basis), cb.frequencies()
    # modal
    if ref.kind == "free":
        md = free_interface_modes(K, M, modes, model.rigid_body_modes())
        return md.shapes, md.frequencies
    T = ref.transform(model.n_nodes)
    md = eigenmodes(sp.csr_matrix(T.T @ K @ T), sp.csr_matrix(T.T @ M @ T), modes)
    return np.asarray(T @ md.shapes), md.frequencies


def _legacy_tables(gs: GeometricStiffening) -> dict[tuple[int, int], Any]:
    """Old centrifugal tables ``G_ab`` (``omega omega^T = E_ab``) from the W-basis matrices."""
    Kc = {pair: gs.matrices[i] for i, pair in enumerate(CENTRIFUGAL_PAIRS)}
    trace = Kc[(0, 0)] + Kc[(1, 1)] + Kc[(2, 2)]
    out: dict[tuple[int, int], Any] = {}
    for a in range(3):
        for b in range(a, 3):
            if a == b:
                out[(a, b)] = Kc[(a, a)] - trace
            else:
                out[(a, b)] = 0.5 * Kc[(a, b) if (a, b) in Kc else (b, a)]
    return out
