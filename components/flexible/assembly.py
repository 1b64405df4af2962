"""Sparse assembly, boundary conditions, loads, static solution and damping.

``FEModel`` binds a mesh to its element type (looked up once in the element registry,
:func:`~components.flexible.element.element_for_mesh`), a material and the element's
properties (a section for beams, a thickness for shells); it evaluates element matrices
in one vectorised batch through the :class:`~components.flexible.element.Element`
interface and assembles them with a cached CSR pattern. It never asks which element it
holds. Global DOF numbering: node ``n`` owns DOFs ``6 n .. 6 n + 5`` =
``(ux, uy, uz, rx, ry, rz)`` in the body frame.
"""

from __future__ import annotations

from functools import cached_property
from typing import Iterable, Sequence

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from numpy.typing import ArrayLike, NDArray

from .element import Element, element_for_mesh
from .errors import FEError
from .fields import MassPoints
from .linalg import LEVI_CIVITA
from .materials import Material, Section
from .mesh import Mesh

__all__ = [
    "COMPONENTS",
    "CSRPattern",
    "FEModel",
    "assemble_matrix",
    "assemble_vector",
    "element_dofs",
    "kelvin_voigt_damping",
    "rayleigh_damping",
    "solve_static",
]

COMPONENTS: dict[str, tuple[int, ...]] = {
    "ux": (0,), "uy": (1,), "uz": (2,), "rx": (3,), "ry": (4,), "rz": (5,),
    "u": (0, 1, 2), "r": (3, 4, 5), "all": (0, 1, 2, 3, 4, 5),
}


def element_dofs(conn: NDArray[np.int64], dofs_per_node: int = 6) -> NDArray[np.int64]:
    """Global DOF indices of each element, shape (E, k * dofs_per_node).

    Parameters
    ----------
    conn : ndarray of int, shape (E, k)
        Element connectivity.
    dofs_per_node : int
        DOFs per node.
    """
    c = np.asarray(conn, np.int64)
    return (c[:, :, None] * dofs_per_node + np.arange(dofs_per_node)).reshape(c.shape[0], -1)


class CSRPattern:
    """Sparsity pattern of an assembled matrix and the scatter map of element entries.

    Parameters
    ----------
    conn : ndarray of int, shape (E, k)
        Connectivity.
    n_dofs : int
        Size of the global matrix.
    dofs_per_node : int
        DOFs per node.

    Notes
    -----
    Built once per mesh (one sort of the COO keys); every later assembly of
    element matrices with the same connectivity is a single ``bincount``.
    """

    def __init__(self, conn: NDArray[np.int64], n_dofs: int, dofs_per_node: int = 6) -> None:
        c = np.asarray(conn, np.int64)
        E, k = c.shape
        d = int(dofs_per_node)
        n_nodes = n_dofs // d
        # node-level pattern: unique (row node, column node) pairs, row-major sorted
        keys = (c[:, :, None] * np.int64(n_nodes) + c[:, None, :]).ravel()
        uniq, inv = np.unique(keys, return_inverse=True)
        rn, cn = uniq // n_nodes, uniq % n_nodes
        deg = np.bincount(rn, minlength=n_nodes)
        first = np.concatenate([[0], np.cumsum(deg)])  # first pair of each row node
        rank = np.arange(uniq.size) - first[rn]  # position of the column node in its row
        # DOF-level CSR: every DOF row of node i holds d * deg(i) entries
        row_len = np.repeat(d * deg, d)
        self.indptr = np.concatenate([[0], np.cumsum(row_len)])
        cols = (cn[:, None] * d + np.arange(d)).reshape(-1)  # per pair, d columns
        # indices row by row: for row node i, DOF a: columns of all pairs of i
        idx = np.empty(self.indptr[-1], dtype=np.int64)
        starts = self.indptr[:-1].reshape(n_nodes, d)
        for a in range(d):
            # entries of (row node i, dof a) occupy [starts[i, a], starts[i, a] + d deg(i))
            pos = (starts[rn, a][:, None] + rank[:, None] * d + np.arange(d)).reshape(-1)
            idx[pos] = cols
        self.indices = idx.astype(np.int32) if n_dofs < 2**31 else idx
        p = inv.reshape(E, k, k)
        base = starts[rn[p], :]  # (E, k, k, d) start of row (node i, dof a)
        off = rank[p] * d  # (E, k, k)
        sc = base[:, :, :, :, None] + off[:, :, :, None, None] + np.arange(d)  # (E,k,k,a,b)
        self.scatter = np.transpose(sc, (0, 1, 3, 2, 4)).reshape(-1)  # (E, k, a, k, b)
        self.n_dofs = int(n_dofs)
        self.shape = (E, k * d, k * d)

    def assemble(self, ke: NDArray[np.float64]) -> sp.csr_matrix:
        """Assemble element matrices (E, n, n) into a CSR matrix with this pattern."""
        ke = np.asarray(ke, float)
        if ke.shape != self.shape:
            raise FEError(f"element matrices have shape {ke.shape}, pattern expects {self.shape}")
        data = np.bincount(self.scatter, weights=ke.ravel(), minlength=self.indices.size)
        return sp.csr_matrix((data, self.indices, self.indptr), shape=(self.n_dofs, self.n_dofs))


def assemble_matrix(conn: NDArray[np.int64], ke: NDArray[np.float64], n_dofs: int,
                    dofs_per_node: int = 6, pattern: CSRPattern | None = None) -> sp.csr_matrix:
    """Assemble element matrices (E, n, n) into a sparse CSR matrix (vectorised).

    Parameters
    ----------
    conn : ndarray of int, shape (E, k)
        Connectivity.
    ke : ndarray, shape (E, n, n)
        Element matrices in global orientation.
    n_dofs : int
        Size of the global matrix.
    dofs_per_node : int
        DOFs per node.
    pattern : CSRPattern, optional
        Precomputed pattern of ``conn`` (reused across K, M, K_G ...).
    """
    if pattern is None:
        pattern = CSRPattern(conn, n_dofs, dofs_per_node)
    return pattern.assemble(ke)


def assemble_vector(conn: NDArray[np.int64], fe: NDArray[np.float64], n_dofs: int,
                    dofs_per_node: int = 6) -> NDArray[np.float64]:
    """Assemble element vectors (E, n) into a global vector (n_dofs,)."""
    ed = element_dofs(conn, dofs_per_node)
    out = np.bincount(ed.ravel(), weights=np.asarray(fe, dtype=float).ravel(), minlength=n_dofs)
    return np.asarray(out, dtype=np.float64)


def solve_static(K: sp.spmatrix, f: NDArray[np.float64], fixed_dofs: ArrayLike = (),
                 prescribed: ArrayLike | None = None) -> NDArray[np.float64]:
    """Solve ``K u = f`` with Dirichlet conditions.

    Parameters
    ----------
    K : sparse matrix, shape (n, n)
        Stiffness [N/m, ...].
    f : ndarray, shape (n,)
        Load vector [N, N m].
    fixed_dofs : array_like of int
        Constrained DOFs.
    prescribed : array_like, optional
        Values of the constrained DOFs [m, rad] (default zero).

    Returns
    -------
    ndarray, shape (n,)
        Displacements [m, rad].
    """
    K = sp.csr_matrix(K)
    n = K.shape[0]
    fixed = np.unique(np.asarray(fixed_dofs, np.int64).ravel())
    u = np.zeros(n)
    if prescribed is not None:
        pv = np.broadcast_to(np.asarray(prescribed, float), fixed.shape)
        u[fixed] = pv
    free = np.setdiff1d(np.arange(n), fixed)
    rhs = np.asarray(f, float)[free] - K[free][:, fixed] @ u[fixed]
    Kff = K[free][:, free].tocsc()
    try:
        lu = spla.splu(Kff, permc_spec="COLAMD")
    except RuntimeError:
        raise FEError("stiffness matrix is exactly singular on the free DOFs: the structure "
                      "is under-constrained (fix DOFs that remove every rigid-body motion)"
                      ) from None
    x = lu.solve(rhs)
    if not np.all(np.isfinite(x)):
        raise FEError("static solution is not finite: the structure is under-constrained "
                      "(add boundary conditions that remove the rigid-body motions)")
    r = Kff @ x - rhs
    if float(np.linalg.norm(r)) > 1e-6 * max(float(np.linalg.norm(rhs)), 1e-300):
        raise FEError("stiffness matrix is singular on the free DOFs: the structure is a "
                      "mechanism or is not constrained against rigid-body motion; fix more DOFs")
    u[free] = x
    return u


def kelvin_voigt_damping(K: sp.spmatrix, eta: float) -> sp.csr_matrix:
    """Kelvin-Voigt (stiffness-proportional) damping ``C = eta K``.

    Parameters
    ----------
    K : sparse matrix
        Stiffness.
    eta : float
        Retardation time [s] (``G = eta H`` in the constitutive law of the chapter, eq. 62).
    """
    if eta < 0:
        raise FEError(f"Kelvin-Voigt eta must be >= 0 s, got {eta}")
    return sp.csr_matrix(K) * float(eta)


def rayleigh_damping(M: sp.spmatrix, K: sp.spmatrix, alpha: float, beta: float) -> sp.csr_matrix:
    """Rayleigh damping ``C = alpha M + beta K``.

    Parameters
    ----------
    M, K : sparse matrix
        Mass and stiffness.
    alpha : float
        Mass coefficient [1/s].
    beta : float
        Stiffness coefficient [s].

    Notes
    -----
    The modal damping ratio is ``zeta_i = alpha / (2 omega_i) + beta omega_i / 2``.
    """
    if alpha < 0 or beta < 0:
        raise FEError(f"Rayleigh coefficients must be >= 0, got alpha={alpha}, beta={beta}")
    return sp.csr_matrix(alpha * sp.csr_matrix(M) + beta * sp.csr_matrix(K))


class FEModel:
    """A mesh with its element type, material and properties: matrices, loads and DOF maps.

    Parameters
    ----------
    mesh : BeamMesh or ShellMesh
        Geometry [m]; its class selects the element (:func:`element_for_mesh`).
    material : Material
        Elastic material.
    section : Section, optional
        Beam cross-section (required for a :class:`BeamMesh`).
    thickness : float, optional
        Shell thickness [m] (required for a :class:`ShellMesh`).
    drilling_factor : float, optional
        Shell drilling penalty factor [-] (default 1e-3, see :class:`DKTShell`).

    Attributes
    ----------
    element : Element
        The element of every mesh element (vectorised routines).
    frames : ndarray, shape (E, 3, 3)
        Element frames (rows = element axes in the body frame).
    """

    dofs_per_node = 6

    def __init__(self, mesh: Mesh, material: Material, section: Section | None = None,
                 thickness: float | None = None, drilling_factor: float | None = None) -> None:
        self.mesh = mesh
        self.material = material
        element_class = element_for_mesh(mesh)
        self.element: Element = element_class.from_mesh(
            mesh, material, section=section, thickness=thickness,
            drilling_factor=drilling_factor)
        self.X: NDArray[np.float64] = mesh.nodes[mesh.elements]
        self.frames: NDArray[np.float64] = self.element.frames(self.X)
        self.property: Section | float | None = (section if section is not None
                                                 else thickness)

    # ------------------------------------------------------------------ DOFs
    @property
    def n_nodes(self) -> int:
        """Number of nodes."""
        return self.mesh.n_nodes

    @property
    def n_dofs(self) -> int:
        """Number of global DOFs (6 per node)."""
        return 6 * self.mesh.n_nodes

    @cached_property
    def pattern(self) -> CSRPattern:
        """Sparsity pattern shared by all assembled matrices (cached)."""
        return CSRPattern(self.mesh.elements, self.n_dofs)

    @cached_property
    def element_dofs(self) -> NDArray[np.int64]:
        """Global DOFs of each element (E, 6k)."""
        return element_dofs(self.mesh.elements)

    def dofs(self, nodes: str | int | Iterable[int], components: str | Sequence[str] = "all"
             ) -> NDArray[np.int64]:
        """Global DOF indices of nodes and components.

        Parameters
        ----------
        nodes : str, int or iterable of int
            Node set name, node index or indices.
        components : str or sequence of str
            Any of 'ux', 'uy', 'uz', 'rx', 'ry', 'rz', 'u' (translations),
            'r' (rotations), 'all'.
        """
        ids = self.mesh.nodes_of(nodes)
        comps: list[int] = []
        for c in ([components] if isinstance(components, str) else components):
            if c not in COMPONENTS:
                raise FEError(f"unknown DOF component {c!r}; use one of {sorted(COMPONENTS)}")
            comps.extend(COMPONENTS[c])
        comps = sorted(set(comps))
        return np.sort((ids[:, None] * 6 + np.array(comps)[None, :]).ravel())

    # ------------------------------------------------------------------ element batches
    def _geom(self) -> NDArray[np.float64]:
        return self.X

    def element_stiffness(self) -> NDArray[np.float64]:
        """Element stiffness matrices in the body frame (E, 6k, 6k)."""
        return self.element.stiffness(self.X, self.frames)

    def element_mass(self, lumped: bool = False) -> NDArray[np.float64]:
        """Element mass matrices in the body frame (E, 6k, 6k)."""
        return self.element.mass(self.X, self.frames, lumped)

    @cached_property
    def mass_points(self) -> MassPoints:
        """Mass quadrature points of all elements (consistent mass distribution)."""
        return self.element.mass_points(self.X, self.frames)

    # ------------------------------------------------------------------ global matrices
    @cached_property
    def K(self) -> sp.csr_matrix:
        """Global stiffness matrix [N/m, N, N m] (cached)."""
        return self.pattern.assemble(self.element_stiffness())

    @cached_property
    def M(self) -> sp.csr_matrix:
        """Global consistent mass matrix [kg, kg m, kg m^2] (cached)."""
        return self.pattern.assemble(self.element_mass(False))

    @cached_property
    def M_lumped(self) -> sp.csr_matrix:
        """Global HRZ-lumped mass matrix (block-diagonal per node) (cached)."""
        return self.pattern.assemble(self.element_mass(True))

    def stiffness(self) -> sp.csr_matrix:
        """Global stiffness matrix (same as :attr:`K`)."""
        return self.K

    def mass(self, lumped: bool = False) -> sp.csr_matrix:
        """Global mass matrix, consistent or HRZ-lumped."""
        return self.M_lumped if lumped else self.M

    # ------------------------------------------------------------------ loads
    def point_load(self, node: int | str, force: ArrayLike = (0, 0, 0),
                   moment: ArrayLike = (0, 0, 0)) -> NDArray[np.float64]:
        """Load vector of a force [N] and moment [N m] at one node (or each node of a set)."""
        f = np.zeros(self.n_dofs)
        for n in self.mesh.nodes_of(node):
            f[6 * n:6 * n + 3] += np.asarray(force, float)
            f[6 * n + 3:6 * n + 6] += np.asarray(moment, float)
        return f

    def _element_selection(self, elements: ArrayLike | None) -> NDArray[np.bool_]:
        E = self.mesh.n_elements
        if elements is None:
            return np.ones(E, bool)
        sel = np.asarray(elements)
        if sel.dtype == bool:
            if sel.shape != (E,):
                raise FEError(f"element mask must have shape ({E},), got {sel.shape}")
            return sel
        ids = np.atleast_1d(sel.astype(np.int64)).ravel()
        if ids.size and (ids.min() < 0 or ids.max() >= E):
            raise FEError(f"element index out of range 0..{E - 1}: {ids.tolist()[:5]}")
        mask = np.zeros(E, bool)
        mask[ids] = True
        return mask

    def distributed_load(self, traction: ArrayLike, elements: ArrayLike | None = None,
                         lumped: bool = False) -> NDArray[np.float64]:
        """Load vector of a distributed force, uniform over each element.

        Parameters
        ----------
        traction : array_like, shape (3,) or (E, 3)
            Force per unit length [N/m] on beams (a line load) or per unit area [N/m^2]
            on shells, body-frame components.
        elements : array_like of int or bool, optional
            Loaded elements (indices or a mask); default all.
        lumped : bool
            False (default): consistent load ``int N^T t`` from the element's
            displacement interpolation (nodal forces and moments; a uniform load on a
            beam gives the exact nodal deflections). True: each element's resultant
            ``t * length`` (``t * area``) split equally over its nodes as forces.

        Returns
        -------
        ndarray, shape (n_dofs,)
            [N, N m].
        """
        E = self.mesh.n_elements
        t = np.array(np.broadcast_to(np.asarray(traction, float), (E, 3)))
        t[~self._element_selection(elements)] = 0.0
        fe = self.element.distributed_load(self.X, self.frames, t, lumped)
        return assemble_vector(self.mesh.elements, fe, self.n_dofs)

    def pressure_load(self, pressure: float | ArrayLike, elements: ArrayLike | None = None,
                      lumped: bool = False) -> NDArray[np.float64]:
        """Load of a pressure [Pa] along each surface element's normal ``e3``.

        Parameters
        ----------
        pressure : float or array_like, shape (E,)
            Pressure [Pa], positive along ``frames[:, 2]`` (``e3`` has its largest
            component positive, see :func:`shell_frames`).
        elements : array_like of int or bool, optional
            Loaded elements; default all.
        lumped : bool
            Consistent (default) or lumped, as in :meth:`distributed_load`.
        """
        if self.element.dimension != 2:
            raise FEError("pressure_load needs surface (shell) elements; for a beam use "
                          "FEModel.distributed_load(traction) with a line load in N/m")
        p = np.broadcast_to(np.asarray(pressure, float), (self.mesh.n_elements,))
        return self.distributed_load(p[:, None] * self.frames[:, 2, :], elements, lumped)

    def body_force_load(self, acceleration: ArrayLike) -> NDArray[np.float64]:
        """Consistent load of a uniform body-force field ``rho * a`` (e.g. gravity).

        Parameters
        ----------
        acceleration : array_like, shape (3,)
            Acceleration field in the body frame [m/s^2], e.g. ``(0, 0, -9.81)``.
        """
        mp = self.mass_points
        g = np.asarray(acceleration, float)
        fe = np.einsum("eq,eqaj,a->ej", mp.weight, mp.T, g)
        return assemble_vector(self.mesh.elements, fe, self.n_dofs)

    def centrifugal_load(self, omega: ArrayLike, center: ArrayLike = (0, 0, 0)
                         ) -> NDArray[np.float64]:
        """Consistent centrifugal load ``-int rho S^T w~ w~ (x - c) dV`` [N, N m].

        Parameters
        ----------
        omega : array_like, shape (3,)
            Angular velocity of the body frame [rad/s].
        center : array_like, shape (3,)
            A point on the spin axis [m].
        """
        w = np.asarray(omega, float).ravel()
        W = np.outer(w, w) - np.dot(w, w) * np.eye(3)  # w~ w~
        return self.centrifugal_load_tensor(W, center)

    def centrifugal_load_tensor(self, W: ArrayLike, center: ArrayLike = (0, 0, 0)
                                ) -> NDArray[np.float64]:
        """Consistent load of the body-force field ``-rho W (x - c)`` [N, N m].

        Parameters
        ----------
        W : array_like, shape (3, 3)
            Symmetric tensor ``w~ w~ = w w^T - |w|^2 I`` [1/s^2] (or any
            combination of such tensors).
        center : array_like, shape (3,)
            Point on the spin axis [m].
        """
        return self.acceleration_field_load(W, center)

    def acceleration_field_load(self, A: ArrayLike, center: ArrayLike = (0, 0, 0)
                                ) -> NDArray[np.float64]:
        """Consistent d'Alembert load of a linear acceleration field ``a(x) = A (x - c)``.

        The body force is ``-rho A (x - c)``; particles off the beam axis or shell
        mid-surface (offset ``d``) add the moment ``-int rho d x (A d)`` (section or
        thickness rotary inertia), so the load is exact for the element fields.

        Parameters
        ----------
        A : array_like, shape (3, 3)
            Field gradient [1/s^2]: ``w~ w~`` (centrifugal), ``alpha~`` (Euler,
            angular acceleration ``alpha``), or any sum.
        center : array_like, shape (3,)
            Point where the field vanishes [m].

        Returns
        -------
        ndarray, shape (n_dofs,)
            [N, N m].
        """
        A = np.asarray(A, float)
        mp = self.mass_points
        x = mp.position - np.asarray(center, float)
        acc = -np.einsum("ab,eqb->eqa", A, x)
        fe = np.einsum("eq,eqaj,eqa->ej", mp.weight, mp.T, acc)
        # section/thickness part: moment -int rho d x (A d) = -eps_abc (A P)_cb per point
        AP = np.einsum("cd,eqdb->eqcb", A, mp.second_moment)  # int rho (A d)_c d_b
        mom = -np.einsum("abc,eqcb->eqa", LEVI_CIVITA, AP)
        fe += np.einsum("eqaj,eqa->ej", mp.R, mom)
        return assemble_vector(self.mesh.elements, fe, self.n_dofs)

    # ------------------------------------------------------------------ resultants
    @cached_property
    def resultant_matrices(self) -> NDArray[np.float64]:
        """Element DOFs -> stress resultants, (E, r, 6k) (:meth:`Element.resultant_matrix`)."""
        return self.element.resultant_matrix(self.X, self.frames)

    def element_resultants(self, u: ArrayLike) -> NDArray[np.float64]:
        """Stress resultants (E, r) of nodal displacements ``u`` (n_dofs,) [m, rad].

        Names and units: ``model.element.resultant_names`` / ``resultant_units`` (beam
        ``N, Vy, Vz, T, My, Mz`` at mid-length; shell ``Nx, Ny, Nxy, Mx, My, Mxy`` at the
        centroid; element frames).
        """
        ue = np.asarray(u, float)[self.element_dofs]
        return np.asarray(np.einsum("erj,ej->er", self.resultant_matrices, ue),
                          dtype=np.float64)

    def element_axial_forces(self, u: NDArray[np.float64]) -> NDArray[np.float64]:
        """Pre-stress resultants of ``u``: beam axial forces [N] (E,), shell membrane
        resultants (Nx, Ny, Nxy) [N/m] (E, 3)."""
        p = self.element.prestress_components
        r = self.element_resultants(u)[:, :p]
        return r[:, 0] if p == 1 else r

    # ------------------------------------------------------------------ stress stiffness
    def geometric_stiffness(self, u: NDArray[np.float64] | None = None,
                            forces: ArrayLike | None = None) -> sp.csr_matrix:
        """Geometric (stress) stiffness matrix.

        Parameters
        ----------
        u : ndarray, shape (n_dofs,), optional
            Static displacement [m, rad] producing the pre-stress.
        forces : array_like, optional
            Instead of ``u``: beam axial force(s) [N] (scalar or (E,)), tension
            positive, or shell membrane resultants (Nx, Ny, Nxy) [N/m] ((3,) or (E, 3))
            in each element frame.

        Returns
        -------
        scipy.sparse.csr_matrix
        """
        if (u is None) == (forces is None):
            raise FEError("give exactly one of u (pre-stress displacement) or forces")
        E, p = self.mesh.n_elements, self.element.prestress_components
        if forces is None:
            s = self.element_resultants(np.asarray(u))
        else:
            f = np.asarray(forces, float)
            if p == 1 and (f.ndim == 0 or f.shape[-1] != 1):
                f = f[..., None]
            try:
                s = np.broadcast_to(f, (E, p))
            except ValueError:
                raise FEError(f"forces must have shape ({p},) or ({E}, {p}) for this mesh "
                              f"({', '.join(self.element.resultant_names[:p])}), got "
                              f"{f.shape}") from None
        ke = self.element.geometric_stiffness(self.X, self.frames, s)
        return self.pattern.assemble(ke)

    def centrifugal_stiffness(self, omega: ArrayLike, fixed_dofs: ArrayLike,
                              center: ArrayLike = (0, 0, 0)) -> sp.csr_matrix:
        """Geometric stiffness of the steady centrifugal pre-stress.

        Solves ``K u = f_centrifugal(omega)`` with the given supports and returns
        ``K_G(u)``. Spin softening (``int rho S^T w~ w~ S``) is separate: see
        :meth:`~components.flexible.invariants.Invariants.spin_softening`.

        Parameters
        ----------
        omega : array_like, shape (3,)
            Angular velocity [rad/s].
        fixed_dofs : array_like of int
            Supports of the static pre-stress problem (e.g. the clamped hub).
        center : array_like, shape (3,)
            Point on the spin axis [m].
        """
        u = solve_static(self.K, self.centrifugal_load(omega, center), fixed_dofs)
        return self.geometric_stiffness(u=u)

    # ------------------------------------------------------------------ rigid body
    def rigid_body_modes(self, about: ArrayLike = (0, 0, 0)) -> NDArray[np.float64]:
        """Six rigid-body DOF vectors (n_dofs, 6): translations x, y, z then rotations.

        Parameters
        ----------
        about : array_like, shape (3,)
            Centre of the rotations [m].
        """
        X = self.mesh.nodes - np.asarray(about, float)
        Rm = np.zeros((self.n_nodes, 6, 6))
        Rm[:, 0:3, 0:3] = np.eye(3)
        Rm[:, 3:6, 3:6] = np.eye(3)
        # u = theta x r = -r~ theta
        Rm[:, 0, 4] = X[:, 2]
        Rm[:, 0, 5] = -X[:, 1]
        Rm[:, 1, 3] = -X[:, 2]
        Rm[:, 1, 5] = X[:, 0]
        Rm[:, 2, 3] = X[:, 1]
        Rm[:, 2, 4] = -X[:, 0]
        return Rm.reshape(self.n_dofs, 6)

    def total_mass(self) -> float:
        """Total mass [kg] (sum of quadrature-point masses)."""
        return float(self.mass_points.weight.sum())
