"""Reference conditions: what "rigid motion" means for a flexible body.

In the floating frame of reference the elastic displacement ``u`` of a body is measured
in its body frame; six conditions on ``u`` fix where that frame sits in the deforming
body, and the elastic coordinates (modes, nodal DOFs) must satisfy them. Three choices:

``clamped`` (nodes C)
    All six DOFs of every node of C are zero: the frame is welded to the clamp. A
    cantilevered appendage, a panel on its hinge line, a link driven through a rigid
    hub.
``pinned`` (nodes A, B)
    Chord frame of a link between two joints: ``u_A = 0`` (3), the two components of
    ``u_B`` transverse to the chord ``d = (x_B - x_A)/|x_B - x_A|`` are zero (2), and
    the rotation of A about the chord is zero (1). Six statically determinate
    conditions that remove exactly the rigid motions; the body frame keeps A on its
    origin path and B on its chord axis. A straight link gets simply supported bending
    modes, an axial (stretch) mode at B and torsion modes fixed at A.
``free``
    No support: the elastic motion is M-orthogonal to the six rigid-body motions
    (``int rho u dV = 0`` and ``int rho x~ u dV = 0``, the linearised Tisserand /
    mean-axis conditions). A free-floating body, a satellite.

The conditions are linear, ``C u = 0``; :meth:`ReferenceCondition.transform` gives a
sparse basis ``T`` of their solutions (``u = T v``), so clamped and pinned problems
are solved on ``T^T K T``. Static problems of a free body use inertia relief.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Literal, Sequence

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from numpy.typing import ArrayLike, NDArray

from .assembly import FEModel
from .errors import FEError
from .linalg import GEOMETRY_RTOL
from .mesh import Mesh
from .modal import _determinate_support

__all__ = ["REFERENCE_KINDS", "ReferenceCondition", "StaticSolver", "resolve_nodes"]

ReferenceKind = Literal["clamped", "pinned", "free"]
REFERENCE_KINDS: tuple[str, ...] = ("clamped", "pinned", "free")

NodeSpec = str | int | Iterable[int]


def resolve_nodes(mesh: Mesh, spec: NodeSpec | Sequence[NodeSpec] | None,
                  what: str) -> NDArray[np.int64]:
    """Node indices of a node spec: a set name, an index, or a sequence of names/indices.

    Parameters
    ----------
    mesh : Mesh
        The mesh.
    spec : str, int, or sequence of str/int, optional
        Node set names and node indices (mixed), in order; duplicates are dropped.
    what : str
        Name of the argument (for error messages).

    Returns
    -------
    ndarray of int
        Node indices in the order given.
    """
    if spec is None:
        return np.zeros(0, np.int64)
    items: list[NodeSpec]
    if isinstance(spec, (str, int, np.integer)):
        items = [spec]
    else:
        items = list(spec)  # type: ignore[arg-type]
    out: list[int] = []
    for it in items:
        try:
            ids = mesh.nodes_of(it)
        except (TypeError, ValueError) as exc:
            if isinstance(exc, FEError):
                raise FEError(f"{what}: {exc}") from None
            raise FEError(f"{what}: {it!r} is neither a node set name nor node indices") \
                from None
        out.extend(int(i) for i in ids if int(i) not in out)
    return np.asarray(out, np.int64)


def _single(mesh: Mesh, spec: NodeSpec, what: str) -> int:
    ids = resolve_nodes(mesh, spec, what)
    if ids.size != 1:
        raise FEError(f"{what} must be a single node (an index or a one-node set), got "
                      f"{spec!r} = nodes {ids.tolist()[:6]}")
    return int(ids[0])


def _perpendicular_pair(d: NDArray[np.float64]) -> NDArray[np.float64]:
    """Two unit vectors (2, 3) completing the unit vector ``d`` to a right-handed frame.

    Built from the body axis least aligned with ``d``, so that for ``d`` along a body
    axis the pair is exactly the two other axes (the transform stays a DOF selection).
    """
    a = np.zeros(3)
    a[int(np.argmin(np.abs(d)))] = 1.0
    e1 = a - np.dot(a, d) * d
    e1 /= np.linalg.norm(e1)
    e2 = np.cross(d, e1)
    return np.vstack([e1, e2])


@dataclass(frozen=True, eq=False)
class ReferenceCondition:
    """A reference condition of a flexible body (see the module docstring).

    Attributes
    ----------
    kind : {'clamped', 'pinned', 'free'}
        The condition.
    nodes : tuple of int
        Clamped nodes; ``(A, B)`` for 'pinned'; empty for 'free'.
    chord : ndarray, shape (3,) or None
        Unit vector from A to B in the body frame ('pinned').
    """

    kind: str
    nodes: tuple[int, ...] = ()
    chord: NDArray[np.float64] | None = None

    @classmethod
    def clamped(cls, mesh: Mesh, nodes: NodeSpec | Sequence[NodeSpec]) -> "ReferenceCondition":
        """Clamp every DOF of ``nodes`` to the body frame.

        Parameters
        ----------
        mesh : Mesh
            The mesh.
        nodes : node spec
            A node index, a node set name (e.g. the hinge edge ``'x0'``) or several.
        """
        ids = resolve_nodes(mesh, nodes, "reference_nodes")
        if ids.size == 0:
            raise FEError("reference='clamped' needs reference_nodes: the node(s) clamped to "
                          "the body frame (e.g. 'start' or the hinge edge 'x0')")
        return cls("clamped", tuple(int(i) for i in ids))

    @classmethod
    def pinned(cls, mesh: Mesh, a: NodeSpec, b: NodeSpec) -> "ReferenceCondition":
        """Chord frame through nodes ``a`` and ``b``.

        Parameters
        ----------
        mesh : Mesh
            The mesh.
        a : int or str
            Node A (one node): all translations and the rotation about the chord held.
        b : int or str
            Node B (one node): the translations normal to the chord held.
        """
        ia = _single(mesh, a, "reference_nodes[0] (node A of 'pinned')")
        ib = _single(mesh, b, "reference_nodes[1] (node B of 'pinned')")
        d = mesh.nodes[ib] - mesh.nodes[ia]
        L = float(np.linalg.norm(d))
        size = float(np.max(np.ptp(mesh.nodes, axis=0)))
        if L <= GEOMETRY_RTOL * size:
            raise FEError(f"reference='pinned': nodes A={ia} and B={ib} coincide; the chord "
                          f"needs two distinct attachment nodes")
        return cls("pinned", (ia, ib), d / L)

    @classmethod
    def free(cls) -> "ReferenceCondition":
        """No support: elastic motion M-orthogonal to the rigid-body motions (mean axes)."""
        return cls("free")

    @classmethod
    def from_spec(cls, mesh: Mesh, kind: str, nodes: NodeSpec | Sequence[NodeSpec] | None
                  ) -> "ReferenceCondition":
        """Build from ``reference=kind, reference_nodes=nodes`` (``FlexibleBodyData.from_mesh``)."""
        if kind == "clamped":
            return cls.clamped(mesh, nodes)  # type: ignore[arg-type]
        if kind == "pinned":
            if nodes is None or isinstance(nodes, (str, int, np.integer)) or \
                    len(list(nodes)) != 2:  # type: ignore[arg-type]
                raise FEError("reference='pinned' needs reference_nodes=(A, B): the two "
                              "attachment nodes of the chord (e.g. ('start', 'end'))")
            a, b = list(nodes)  # type: ignore[arg-type]
            return cls.pinned(mesh, a, b)
        if kind == "free":
            if nodes is not None:
                raise FEError("reference='free' takes no reference_nodes (the mean-axis frame "
                              "is not attached to nodes); use 'clamped' or 'pinned' to attach "
                              "the body frame to nodes")
            return cls.free()
        raise FEError(f"unknown reference {kind!r}; use 'clamped' (cantilevered appendage), "
                      f"'pinned' (link between two joints) or 'free' (free-floating body)")

    # ------------------------------------------------------------------ constraints
    def _blocks(self) -> dict[tuple[int, int], NDArray[np.float64]]:
        """(node, 0 = translation | 1 = rotation) -> constrained unit directions (c, 3)."""
        eye = np.eye(3)
        if self.kind == "clamped":
            return {(n, b): eye for n in self.nodes for b in (0, 1)}
        if self.kind == "pinned":
            assert self.chord is not None
            a, b = self.nodes
            return {(a, 0): eye, (a, 1): self.chord[None, :],
                    (b, 0): _perpendicular_pair(self.chord)}
        return {}

    def transform(self, n_nodes: int) -> sp.csr_matrix:
        """Sparse basis ``T`` (6N, m) of the displacements allowed by the condition.

        Parameters
        ----------
        n_nodes : int
            Number of mesh nodes ``N``.

        ``u = T v`` satisfies every constraint; unconstrained DOFs map one to one, a
        partly constrained 3-DOF block maps to its free directions (for 'pinned': the
        chord direction at B, the two rotations normal to the chord at A). Columns are
        in node order. For 'free' ``T`` is the identity (the mean-axis condition is not
        a support; see :func:`free_nodal_basis`).
        """
        blocks = self._blocks()
        rows: list[int] = []
        cols: list[int] = []
        vals: list[float] = []
        col = 0
        for node in range(n_nodes):
            for blk in (0, 1):
                base = 6 * node + 3 * blk
                C = blocks.get((node, blk))
                if C is None:
                    for a in range(3):
                        rows.append(base + a)
                        cols.append(col)
                        vals.append(1.0)
                        col += 1
                    continue
                if C.shape[0] == 3:
                    continue
                comp = (self.chord[None, :] if C.shape[0] == 2 and self.chord is not None
                        else _perpendicular_pair(C[0]))
                for v in comp:
                    for a in range(3):
                        if v[a] != 0.0:
                            rows.append(base + a)
                            cols.append(col)
                            vals.append(float(v[a]))
                    col += 1
        return sp.csr_matrix((vals, (rows, cols)), shape=(6 * n_nodes, col))

    def held_dofs(self, n_nodes: int) -> NDArray[np.int64]:
        """DOFs that are zero in every allowed displacement (the DOF-aligned constraints).

        Parameters
        ----------
        n_nodes : int
            Number of mesh nodes.
        """
        if self.kind == "free":
            return np.zeros(0, np.int64)
        T = self.transform(n_nodes)
        return np.flatnonzero(np.diff(T.indptr) == 0).astype(np.int64)

    def describe(self) -> str:
        """One line for reports."""
        if self.kind == "clamped":
            return f"clamped at node(s) {list(self.nodes)[:8]}"
        if self.kind == "pinned":
            return f"pinned: chord from node {self.nodes[0]} to node {self.nodes[1]}"
        return "free (mean axes)"


def free_nodal_basis(model: FEModel) -> sp.csr_matrix:
    """Nodal coordinates of a free body: all DOFs but six, which follow from the mean axes.

    The six DOFs best suited to carry the rigid motion (pivoted QR of ``(M R)^T``) are
    eliminated with the linearised Tisserand conditions ``R^T M u = 0``; every other
    nodal DOF stays a coordinate. The basis is sparse except for those six rows.

    Parameters
    ----------
    model : FEModel
        The finite-element model (its consistent mass defines the mean axes).

    Returns
    -------
    scipy.sparse.csr_matrix, shape (n_dofs, n_dofs - 6)
    """
    R = model.rigid_body_modes()
    A = np.asarray((model.M @ R).T)  # (6, n): R^T M
    s = _determinate_support(A.T)
    o = np.setdiff1d(np.arange(model.n_dofs), s)
    X = -np.linalg.solve(A[:, s], A[:, o])  # u_s = X u_o
    n, m = model.n_dofs, o.size
    dense = sp.coo_matrix(X)
    rows = np.concatenate([o, s[dense.row]])
    cols = np.concatenate([np.arange(m), dense.col])
    vals = np.concatenate([np.ones(m), dense.data])
    return sp.csr_matrix((vals, (rows, cols)), shape=(n, m))


class StaticSolver:
    """Static solutions ``K u = f`` supported by a reference condition (factorised once).

    Parameters
    ----------
    model : FEModel
        The finite-element model.
    reference : ReferenceCondition
        'clamped' and 'pinned': the six (or more) reference constraints are the
        supports. 'free': inertia relief; the load is made self-equilibrated by
        subtracting the rigid-body inertia forces ``M R (R^T M R)^-1 R^T f`` (the
        d'Alembert forces of the rigid acceleration the load would cause), the body is
        held on a statically determinate set of six DOFs (no reaction then) and the
        result is made M-orthogonal to the rigid modes (mean axes).
    """

    def __init__(self, model: FEModel, reference: ReferenceCondition) -> None:
        self.model = model
        self.reference = reference
        K = model.K
        if reference.kind == "free":
            self.R = model.rigid_body_modes()
            self.MR = np.asarray(model.M @ self.R)
            self.RMR = self.R.T @ self.MR
            sup = _determinate_support(self.R)
            self.free = np.setdiff1d(np.arange(model.n_dofs), sup)
            Kr = sp.csc_matrix(K[self.free][:, self.free])
            self.T: sp.csr_matrix | None = None
        else:
            self.T = reference.transform(model.n_nodes)
            Kr = sp.csc_matrix(self.T.T @ K @ self.T)
        try:
            self._lu = spla.splu(Kr, permc_spec="COLAMD")
        except RuntimeError:
            raise FEError(f"reference condition {reference.describe()} does not remove every "
                          f"rigid-body motion of the body (singular stiffness); for a body "
                          f"that is a mechanism by itself clamp more nodes") from None
        piv = np.abs(self._lu.U.diagonal())
        if piv.min() <= 1e-14 * piv.max():  # round-off level: a singular stiffness
            raise FEError(f"reference condition {reference.describe()} leaves the body "
                          f"(nearly) free to move rigidly: the stiffness is singular on the "
                          f"allowed displacements; choose attachment nodes that fix all six "
                          f"rigid motions")

    def equilibrated(self, f: ArrayLike) -> NDArray[np.float64]:
        """The part of the load(s) ``f`` (n,) or (n, c) that deforms the body [N, N m].

        'free': ``f - M R (R^T M R)^-1 R^T f`` (inertia relief); otherwise ``f``.
        """
        F = np.asarray(f, float)
        if self.reference.kind != "free":
            return F
        return F - self.MR @ np.linalg.solve(self.RMR, self.R.T @ F)

    def solve(self, f: ArrayLike) -> NDArray[np.float64]:
        """Displacements (n,) or (n, c) [m, rad] for load(s) ``f`` [N, N m] in the body frame."""
        F = np.asarray(f, float)
        one = F.ndim == 1
        F2 = F[:, None] if one else F
        if self.reference.kind == "free":
            Fe = self.equilibrated(F2)
            U = np.zeros_like(Fe)
            U[self.free] = self._lu.solve(np.ascontiguousarray(Fe[self.free]))
            U -= self.R @ np.linalg.solve(self.RMR, self.MR.T @ U)  # mean axes
        else:
            assert self.T is not None
            V = self._lu.solve(np.ascontiguousarray(np.asarray(self.T.T @ F2)))
            U = np.asarray(self.T @ V)
        return U[:, 0] if one else U
