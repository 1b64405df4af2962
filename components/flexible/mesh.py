"""Beam and shell meshes with named node sets.

Coordinates are in metres, in the body (floating) frame of the flexible body.
"""

from __future__ import annotations

import hashlib
from typing import Callable, Iterable, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .errors import FEError
from .linalg import GEOMETRY_RTOL

__all__ = ["Mesh", "BeamMesh", "ShellMesh"]


def _count(value: object, name: str, what: str) -> int:
    """A whole number >= 1 of ``what`` (``name``: the argument), refusing a fraction, a
    bool or a non-number rather than truncating it."""
    x = float("nan")
    if isinstance(value, (int, np.integer, float, np.floating)) and \
            not isinstance(value, (bool, np.bool_)):
        x = float(value)
    if not (np.isfinite(x) and x.is_integer() and x >= 1):
        raise FEError(f"{name} must be a whole number >= 1 (the number of {what}), got "
                      f"{value!r}")
    return int(x)


class Mesh:
    """Nodes, elements and named node sets.

    Parameters
    ----------
    nodes : array_like, shape (N, 3) or (N, 2)
        Node coordinates [m] (2-column input is placed in the plane z = 0).
    elements : array_like of int, shape (E, k)
        Node indices of each element (k = 2 for beams, 3 for triangles).
    node_sets : dict of str to array_like of int, optional
        Named node sets (e.g. ``'clamped'``, ``'tip'``).
    """

    kind: str = "generic"
    nodes_per_element: int = 0

    def __init__(self, nodes: ArrayLike, elements: ArrayLike,
                 node_sets: dict[str, Iterable[int]] | None = None) -> None:
        X = np.asarray(nodes, dtype=float)
        if X.ndim != 2 or X.shape[1] not in (2, 3):
            raise FEError(f"nodes must be an (N, 3) or (N, 2) array of coordinates in metres, "
                          f"got shape {X.shape}")
        if X.shape[1] == 2:
            X = np.column_stack([X, np.zeros(len(X))])
        bad = np.flatnonzero(~np.isfinite(X).all(axis=1))
        if bad.size:
            raise FEError(f"node {int(bad[0])} has a non-finite coordinate {X[bad[0]]}")
        C = np.asarray(elements)
        k = self.nodes_per_element
        if C.ndim != 2 or (k and C.shape[1] != k):
            raise FEError(f"{self.kind} elements must be an (E, {k}) integer array of node "
                          f"indices, got shape {C.shape}")
        if C.size and not np.issubdtype(C.dtype, np.integer):
            if not np.all(np.equal(np.mod(C, 1), 0)):
                raise FEError("element connectivity must contain integer node indices")
        C = C.astype(np.int64)
        if C.size:
            out = np.flatnonzero((C < 0).any(axis=1) | (C >= len(X)).any(axis=1))
            if out.size:
                raise FEError(f"element {int(out[0])} refers to node(s) {C[out[0]].tolist()} "
                              f"outside 0..{len(X) - 1}")
            srt = np.sort(C, axis=1)
            rep = np.flatnonzero((np.diff(srt, axis=1) == 0).any(axis=1))
            if rep.size:
                raise FEError(f"element {int(rep[0])} repeats a node: {C[rep[0]].tolist()}")
        if len(C) == 0:
            raise FEError("a mesh needs at least one element")
        self.nodes: NDArray[np.float64] = X
        self.elements: NDArray[np.int64] = C
        self.node_sets: dict[str, NDArray[np.int64]] = {}
        self.add_node_set("all", np.arange(len(X)))
        for name, ids in (node_sets or {}).items():
            self.add_node_set(name, ids)

    # ------------------------------------------------------------------ sets
    @property
    def n_nodes(self) -> int:
        """Number of nodes."""
        return int(self.nodes.shape[0])

    @property
    def n_elements(self) -> int:
        """Number of elements."""
        return int(self.elements.shape[0])

    def add_node_set(self, name: str, nodes: Iterable[int]) -> None:
        """Register (or replace) a named node set.

        Parameters
        ----------
        name : str
            Set name.
        nodes : iterable of int
            Node indices.
        """
        ids = np.unique(np.asarray(list(nodes) if not isinstance(nodes, np.ndarray) else nodes,
                                   dtype=np.int64).ravel())
        if ids.size and (ids.min() < 0 or ids.max() >= self.n_nodes):
            raise FEError(f"node set {name!r} refers to nodes outside 0..{self.n_nodes - 1}")
        self.node_sets[str(name)] = ids

    def node_set(self, name: str) -> NDArray[np.int64]:
        """Node indices of a named set.

        Parameters
        ----------
        name : str
            Set name (see :attr:`node_sets`).
        """
        try:
            return self.node_sets[name]
        except KeyError:
            raise FEError(f"unknown node set {name!r}; available: "
                          f"{sorted(self.node_sets)}") from None

    def nodes_of(self, spec: str | int | Iterable[int]) -> NDArray[np.int64]:
        """Resolve a node set name, a node index or a list of indices to an index array."""
        if isinstance(spec, str):
            return self.node_set(spec)
        ids = np.atleast_1d(np.asarray(spec, dtype=np.int64)).ravel()
        if ids.size and (ids.min() < 0 or ids.max() >= self.n_nodes):
            raise FEError(f"node index out of range 0..{self.n_nodes - 1}: {ids.tolist()[:5]}")
        return ids

    def find_node(self, point: ArrayLike, tol: float = 1e-9) -> int:
        """Index of the node at ``point`` [m] (within ``tol`` [m])."""
        p = np.asarray(point, float).ravel()
        if p.size == 2:
            p = np.append(p, 0.0)
        d = np.linalg.norm(self.nodes - p, axis=1)
        i = int(np.argmin(d))
        if d[i] > tol:
            raise FEError(f"no node within {tol} m of {p.tolist()} (nearest is node {i} at "
                          f"{d[i]:.3g} m)")
        return i

    def nodes_where(self, mask_fn: Callable[[NDArray[np.float64], NDArray[np.float64],
                                             NDArray[np.float64]], ArrayLike]
                    ) -> NDArray[np.int64]:
        """Indices of nodes whose coordinates satisfy ``mask_fn(x, y, z)`` (vectorised)."""
        m = np.asarray(mask_fn(self.nodes[:, 0], self.nodes[:, 1], self.nodes[:, 2]), bool)
        return np.flatnonzero(m)

    def key(self) -> str:
        """Content hash of the geometry and connectivity (used for caching)."""
        h = hashlib.sha1()
        h.update(self.kind.encode())
        h.update(np.ascontiguousarray(self.nodes).tobytes())
        h.update(np.ascontiguousarray(self.elements).tobytes())
        extra = getattr(self, "zref", None)
        if extra is not None:
            h.update(np.ascontiguousarray(extra).tobytes())
        return h.hexdigest()

    def __repr__(self) -> str:
        def count(n: int, word: str) -> str:
            return f"{n} {word}{'' if n == 1 else 's'}"

        return (f"{type(self).__name__}({count(self.n_nodes, 'node')}, "
                f"{count(self.n_elements, 'element')}, sets={sorted(self.node_sets)})")


class BeamMesh(Mesh):
    """Mesh of 2-node beam elements.

    Parameters
    ----------
    nodes : array_like, shape (N, 3)
        Node coordinates [m].
    elements : array_like of int, shape (E, 2)
        Node pairs.
    node_sets : dict, optional
        Named node sets.
    zref : array_like, shape (3,) or (E, 3), optional
        Orientation vector of the local z axis of each element (see
        :func:`~components.flexible.beam.beam_frames`).
    """

    kind = "beam"
    nodes_per_element = 2

    def __init__(self, nodes: ArrayLike, elements: ArrayLike,
                 node_sets: dict[str, Iterable[int]] | None = None,
                 zref: ArrayLike | None = None) -> None:
        super().__init__(nodes, elements, node_sets)
        if zref is not None:
            z = np.broadcast_to(np.asarray(zref, float), (self.n_elements, 3)).copy()
            self.zref: NDArray[np.float64] | None = z
        else:
            self.zref = None

    @classmethod
    def line(cls, start: ArrayLike, end: ArrayLike, n_elements: int,
             zref: ArrayLike | None = None) -> "BeamMesh":
        """Straight beam of ``n_elements`` equal elements.

        Parameters
        ----------
        start, end : array_like, shape (3,)
            End points [m].
        n_elements : int
            Number of elements (>= 1).
        zref : array_like, shape (3,), optional
            Local z orientation vector.

        Returns
        -------
        BeamMesh
            Node sets ``'start'``, ``'end'``, ``'all'`` and ``'centre'`` (if
            ``n_elements`` is even).
        """
        n = _count(n_elements, "n_elements", "beam elements")
        a = np.asarray(start, float).ravel()
        b = np.asarray(end, float).ravel()
        if a.size != 3 or b.size != 3:
            raise FEError("start and end must be 3-vectors in metres")
        if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))) or np.all(a == b):
            raise FEError(f"a beam needs two distinct, finite end points; got start "
                          f"{a.tolist()} and end {b.tolist()} [m]")
        t = np.linspace(0.0, 1.0, n + 1)
        X = a[None, :] + t[:, None] * (b - a)[None, :]
        C = np.column_stack([np.arange(n), np.arange(1, n + 1)])
        sets: dict[str, Iterable[int]] = {"start": [0], "end": [n]}
        if n % 2 == 0:
            sets["centre"] = [n // 2]
        return cls(X, C, sets, zref)


Pattern = Literal["union_jack", "right", "left", "crossed"]


class ShellMesh(Mesh):
    """Mesh of 3-node flat triangles.

    Parameters
    ----------
    nodes : array_like, shape (N, 3) or (N, 2)
        Node coordinates [m].
    elements : array_like of int, shape (E, 3)
        Triangles.
    node_sets : dict, optional
        Named node sets.
    """

    kind = "shell"
    nodes_per_element = 3

    def __init__(self, nodes: ArrayLike, elements: ArrayLike,
                 node_sets: dict[str, Iterable[int]] | None = None) -> None:
        super().__init__(nodes, elements, node_sets)
        X = self.nodes[self.elements]
        a2 = np.linalg.norm(np.cross(X[:, 1] - X[:, 0], X[:, 2] - X[:, 0]), axis=1)
        size = np.max(np.linalg.norm(X - X[:, :1], axis=2), axis=1)
        bad = np.flatnonzero(a2 <= GEOMETRY_RTOL * size**2)
        if bad.size:
            raise FEError(f"triangle {int(bad[0])} (nodes {self.elements[bad[0]].tolist()}) has "
                          f"zero area; fix its nodes")

    @classmethod
    def rectangle(cls, a: float, b: float, nx: int, ny: int, pattern: Pattern = "union_jack",
                  origin: ArrayLike = (0.0, 0.0, 0.0), plane: str = "xy") -> "ShellMesh":
        """Rectangular plate ``a x b`` meshed with ``nx x ny`` cells split into triangles.

        Parameters
        ----------
        a, b : float
            Side lengths along the first and second in-plane axes [m].
        nx, ny : int
            Number of cells along each side.
        pattern : {'union_jack', 'right', 'left', 'crossed'}
            'right'/'left': every cell cut by the same diagonal (2 triangles);
            'union_jack': diagonals alternate so that the mesh is symmetric about
            both mid-lines (2 per cell; with even nx, ny all centre diagonals meet
            at the centre node); 'crossed': 4 triangles per cell around an added
            cell-centre node.
        origin : array_like, shape (3,)
            Position of the corner (0, 0) [m].
        plane : {'xy', 'xz', 'yz'}
            Plane of the plate in the body frame (first letter = side ``a``).

        Returns
        -------
        ShellMesh
            Node sets: ``'all'``, edges ``'s0'``, ``'s1'`` (first coordinate 0 or
            ``a``), ``'t0'``, ``'t1'`` (second coordinate 0 or ``b``), the same edges
            under body-axis names (``'x0'``, ``'x1'``, ``'y0'``, ``'y1'`` for the 'xy'
            plane), ``'boundary'``,
            ``'corners'``, ``'corner_00'``, ``'corner_10'``, ``'corner_01'``,
            ``'corner_11'`` and ``'centre'`` when a node sits at the centre.
        """
        nx = _count(nx, "nx", "cells along the first side")
        ny = _count(ny, "ny", "cells along the second side")
        if not (a > 0 and b > 0):
            raise FEError(f"plate sides a, b must be positive lengths in metres, got {a}, {b}")
        if pattern not in ("union_jack", "right", "left", "crossed"):
            raise FEError(f"unknown pattern {pattern!r}; use 'union_jack', 'right', 'left' "
                          f"or 'crossed'")
        if plane not in ("xy", "xz", "yz"):
            raise FEError(f"plane must be 'xy', 'xz' or 'yz', got {plane!r}")
        s = np.linspace(0.0, a, nx + 1)
        t = np.linspace(0.0, b, ny + 1)
        S, T = np.meshgrid(s, t, indexing="xy")
        st = [np.column_stack([S.ravel(), T.ravel()])]

        def nid(i: NDArray[np.int64], j: NDArray[np.int64]) -> NDArray[np.int64]:
            """Grid node index of column i, row j."""
            return j * (nx + 1) + i

        I2, J2 = np.meshgrid(np.arange(nx), np.arange(ny), indexing="xy")
        I, Jc = I2.ravel(), J2.ravel()
        n00, n10, n01, n11 = nid(I, Jc), nid(I + 1, Jc), nid(I, Jc + 1), nid(I + 1, Jc + 1)
        if pattern == "crossed":
            c = (nx + 1) * (ny + 1) + np.arange(nx * ny)
            st.append(np.column_stack([(I + 0.5) * a / nx, (Jc + 0.5) * b / ny]))
            tris = np.concatenate([np.column_stack([n00, n10, c]), np.column_stack([n10, n11, c]),
                                   np.column_stack([n11, n01, c]), np.column_stack([n01, n00, c])])
        else:
            if pattern == "right":
                slash = np.ones(I.size, bool)
            elif pattern == "left":
                slash = np.zeros(I.size, bool)
            else:
                slash = (I + Jc) % 2 == 0
            ta = np.where(slash[:, None], np.column_stack([n00, n10, n11]),
                          np.column_stack([n00, n10, n01]))
            tb = np.where(slash[:, None], np.column_stack([n00, n11, n01]),
                          np.column_stack([n10, n11, n01]))
            tris = np.concatenate([ta, tb])
        P = np.vstack(st)
        X = np.zeros((len(P), 3))
        ax = {"xy": (0, 1), "xz": (0, 2), "yz": (1, 2)}[plane]
        X[:, ax[0]] = P[:, 0]
        X[:, ax[1]] = P[:, 1]
        X += np.asarray(origin, float)
        tol = 1e-9 * max(a, b)
        sets: dict[str, Iterable[int]] = {
            "s0": np.flatnonzero(np.abs(P[:, 0]) < tol),
            "s1": np.flatnonzero(np.abs(P[:, 0] - a) < tol),
            "t0": np.flatnonzero(np.abs(P[:, 1]) < tol),
            "t1": np.flatnonzero(np.abs(P[:, 1] - b) < tol),
        }
        sets["boundary"] = np.unique(np.concatenate([np.asarray(v) for v in sets.values()]))
        for gen, alias in (("s", plane[0]), ("t", plane[1])):  # body-axis aliases, e.g. 'x0'
            sets[f"{alias}0"] = sets[f"{gen}0"]
            sets[f"{alias}1"] = sets[f"{gen}1"]
        corners = {"corner_00": (0, 0), "corner_10": (a, 0), "corner_01": (0, b),
                   "corner_11": (a, b)}
        for name, (p, q) in corners.items():
            sets[name] = np.flatnonzero((np.abs(P[:, 0] - p) < tol) & (np.abs(P[:, 1] - q) < tol))
        sets["corners"] = np.concatenate([np.asarray(sets[n]) for n in corners])
        ctr = np.flatnonzero((np.abs(P[:, 0] - a / 2) < tol) & (np.abs(P[:, 1] - b / 2) < tol))
        if ctr.size:
            sets["centre"] = ctr
        return cls(X, tris, sets)
