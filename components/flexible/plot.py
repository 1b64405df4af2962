"""PNG pictures of meshes and mode shapes (matplotlib, Agg backend, imported lazily)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import numpy as np
from numpy.typing import NDArray

from .errors import FEError
from .mesh import Mesh

__all__ = ["plot_deformed_mechanism", "plot_mesh", "plot_mode", "plot_modes"]


def _plt() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _is_surface(mesh: Mesh) -> bool:
    """Surface elements (closed polygons, 3+ nodes) rather than line elements (2 nodes)."""
    return mesh.nodes_per_element >= 3


def _equal_3d(ax: Any, X: NDArray[np.float64]) -> None:
    c = 0.5 * (X.max(axis=0) + X.min(axis=0))
    r = 0.5 * float(np.max(X.max(axis=0) - X.min(axis=0))) or 1.0
    ax.set_xlim(c[0] - r, c[0] + r)
    ax.set_ylim(c[1] - r, c[1] + r)
    ax.set_zlim(c[2] - r, c[2] + r)


def _plane_axes(X: NDArray[np.float64]) -> tuple[int, int] | None:
    """Two body axes spanning a mesh that is flat in an axis plane, else None."""
    ext = np.ptp(X, axis=0)
    size = float(ext.max()) or 1.0
    flat = np.flatnonzero(ext <= 1e-9 * size)
    if flat.size == 0:
        return None
    axes = [i for i in range(3) if i != flat[0]]
    return axes[0], axes[1]


def _straight_axis(X: NDArray[np.float64]) -> NDArray[np.float64] | None:
    """Unit direction of a straight (collinear) node set, else None."""
    d = X - X[0]
    L = float(np.linalg.norm(d, axis=1).max())
    if L == 0.0:
        return None
    e = d[np.argmax(np.linalg.norm(d, axis=1))] / L
    off = d - np.outer(d @ e, e)
    return e if float(np.abs(off).max()) <= 1e-9 * L else None


def plot_mesh(mesh: Mesh, path: str | Path, node_sets: Sequence[str] | None = None,
              title: str | None = None, label_nodes: bool = False) -> Path:
    """Draw a mesh with its named node sets and save it as PNG.

    Parameters
    ----------
    mesh : BeamMesh or ShellMesh
        Mesh to draw (coordinates in metres).
    path : str or Path
        Output PNG file.
    node_sets : sequence of str, optional
        Node sets to highlight (default: all except 'all' and 'boundary').
    title : str, optional
        Figure title.
    label_nodes : bool
        Write node numbers.

    Returns
    -------
    Path
        The written file.
    """
    plt = _plt()
    X = mesh.nodes
    names = [n for n in (node_sets if node_sets is not None else mesh.node_sets)
             if node_sets is not None or n not in ("all", "boundary")]
    markers = "osD^v<>ph*"
    axes2 = _plane_axes(X)
    fig = plt.figure(figsize=(6.5, 5.5))
    ax: Any
    if axes2 is not None:  # flat mesh in an axis plane: true-shape 2D view
        i, j = axes2
        ax = fig.add_subplot()
        for el in mesh.elements:
            p = X[np.append(el, el[0])] if _is_surface(mesh) else X[el]
            ax.plot(p[:, i], p[:, j], color="0.35", lw=0.8)
        for k, name in enumerate(names):
            ids = mesh.node_set(name)
            ax.scatter(X[ids, i], X[ids, j], s=40, marker=markers[k % len(markers)], zorder=3,
                       label=f"{name} ({ids.size})")
        if label_nodes:
            for n, p in enumerate(X):
                ax.annotate(str(n), (p[i], p[j]), fontsize=7, xytext=(2, 2),
                            textcoords="offset points")
        ax.set_aspect("equal")
        ax.set_xlabel("xyz"[i] + " [m]")
        ax.set_ylabel("xyz"[j] + " [m]")
    else:
        ax = fig.add_subplot(projection="3d")
        for el in mesh.elements:
            p = X[np.append(el, el[0])] if _is_surface(mesh) else X[el]
            ax.plot(p[:, 0], p[:, 1], p[:, 2], color="0.35", lw=0.8)
        for k, name in enumerate(names):
            ids = mesh.node_set(name)
            ax.scatter(X[ids, 0], X[ids, 1], X[ids, 2], s=28, marker=markers[k % len(markers)],
                       label=f"{name} ({ids.size})")
        if label_nodes:
            for n, p in enumerate(X):
                ax.text(p[0], p[1], p[2], str(n), fontsize=6)
        _equal_3d(ax, X)
        ax.set_xlabel("x [m]")
        ax.set_ylabel("y [m]")
        ax.set_zlabel("z [m]")
    if names:
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.set_title(title or f"{type(mesh).__name__}: {mesh.n_nodes} nodes, "
                 f"{mesh.n_elements} elements")
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def _draw_beam_components(ax: Any, mesh: Mesh, shape: NDArray[np.float64],
                          e: NDArray[np.float64]) -> None:
    """Displacement components of a straight beam along its axis (2D axes)."""
    X = mesh.nodes
    s = (X - X[0]) @ e
    o = np.argsort(s)
    U = np.asarray(shape, float).reshape(-1, 6)
    # two transverse directions: the body axes most normal to the beam
    cand = [np.eye(3)[k] for k in np.argsort(np.abs(e))[:2]]
    t1 = cand[0] - (cand[0] @ e) * e
    t1 /= np.linalg.norm(t1)
    t2 = np.cross(e, t1)
    for vec, lab in ((e, "axial"), (t1, "transverse 1"), (t2, "transverse 2")):
        comp = U[:, :3] @ vec
        if np.abs(comp).max() > 1e-3 * np.abs(U[:, :3]).max():
            ax.plot(s[o], comp[o], marker=".", label=lab)
    tw = U[:, 3:] @ e
    if np.abs(tw).max() > 0 and np.abs(U[:, :3]).max() < 1e-9 * np.abs(tw).max() * max(s.max(), 1):
        ax.plot(s[o], tw[o], marker=".", label="twist [rad]")
    ax.axhline(0.0, color="0.7", lw=0.8)
    ax.set_xlabel("s [m]")
    ax.legend(fontsize=7)


def _draw_mode(ax: Any, mesh: Mesh, shape: NDArray[np.float64], scale: float | None
               ) -> None:
    X = mesh.nodes
    U = np.asarray(shape, float).reshape(-1, 6)[:, :3]
    size = float(np.max(np.ptp(X, axis=0))) or 1.0
    umax = float(np.max(np.linalg.norm(U, axis=1))) or 1.0
    s = 0.15 * size / umax if scale is None else scale
    Y = X + s * U
    mag = np.linalg.norm(U, axis=1) / umax
    if _is_surface(mesh):
        from matplotlib import cm

        for tri in mesh.elements:
            p = X[np.append(tri, tri[0])]
            ax.plot(p[:, 0], p[:, 1], p[:, 2], color="0.8", lw=0.4)
        col = cm.viridis(mag[mesh.elements].mean(axis=1))
        ax.plot_trisurf(Y[:, 0], Y[:, 1], Y[:, 2], triangles=mesh.elements, color=None,
                        shade=False, linewidth=0.2, edgecolor="k", alpha=0.9).set_facecolor(col)
    else:
        for e in mesh.elements:
            ax.plot(X[e, 0], X[e, 1], X[e, 2], color="0.75", lw=1.0)
            ax.plot(Y[e, 0], Y[e, 1], Y[e, 2], color="C0", lw=2.0)
        ax.scatter(Y[:, 0], Y[:, 1], Y[:, 2], s=6, color="C0")
    _equal_3d(ax, np.vstack([X, Y]))


def plot_mode(mesh: Mesh, shape: NDArray[np.float64], path: str | Path,
              frequency: float | None = None, scale: float | None = None,
              title: str | None = None) -> Path:
    """Draw one mode shape and save it as PNG.

    Shells: deformed surface over the grey undeformed mesh (3D). Straight beams:
    axial and transverse displacement components along the axis (2D); other
    beam meshes: deformed line over the undeformed one (3D).

    Parameters
    ----------
    mesh : BeamMesh or ShellMesh
        The mesh.
    shape : ndarray, shape (6 * n_nodes,)
        Nodal DOF vector of the mode (body frame).
    path : str or Path
        Output PNG file.
    frequency : float, optional
        Natural frequency [Hz] shown in the title.
    scale : float, optional
        Displacement magnification; default: largest displacement = 15 % of the mesh size.
    title : str, optional
        Figure title.
    """
    if np.size(shape) != 6 * mesh.n_nodes:
        raise FEError(f"mode shape has {np.size(shape)} entries, expected 6 x {mesh.n_nodes}")
    plt = _plt()
    fig = plt.figure(figsize=(6.5, 5.5))
    e = _straight_axis(mesh.nodes) if not _is_surface(mesh) else None
    ax: Any
    if e is not None:
        ax = fig.add_subplot()
        _draw_beam_components(ax, mesh, shape, e)
    else:
        ax = fig.add_subplot(projection="3d")
        _draw_mode(ax, mesh, shape, scale)
    t = title or "mode shape"
    if frequency is not None:
        t += f"  f = {frequency:.4g} Hz"
    ax.set_title(t)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def plot_modes(mesh: Mesh, shapes: NDArray[np.float64], frequencies: Sequence[float],
               path: str | Path, n: int | None = None, title: str | None = None,
               reference: Sequence[float] | None = None) -> Path:
    """Grid of the first ``n`` mode shapes in one PNG.

    Parameters
    ----------
    mesh : BeamMesh or ShellMesh
        The mesh.
    shapes : ndarray, shape (6 * n_nodes, k)
        Mode shapes as columns.
    frequencies : sequence of float
        Frequencies [Hz].
    path : str or Path
        Output PNG file.
    n : int, optional
        Number of modes drawn (default all, at most 9).
    title : str, optional
        Figure title.
    reference : sequence of float, optional
        Reference frequencies [Hz] printed beside the computed ones.
    """
    plt = _plt()
    k = shapes.shape[1] if n is None else min(n, shapes.shape[1])
    k = min(k, 9)
    cols = min(k, 3)
    rows = int(np.ceil(k / cols))
    fig = plt.figure(figsize=(4.4 * cols, 3.8 * rows))
    e = _straight_axis(mesh.nodes) if not _is_surface(mesh) else None
    ax: Any
    for i in range(k):
        if e is not None:
            ax = fig.add_subplot(rows, cols, i + 1)
            _draw_beam_components(ax, mesh, shapes[:, i], e)
        else:
            ax = fig.add_subplot(rows, cols, i + 1, projection="3d")
            _draw_mode(ax, mesh, shapes[:, i], None)
            ax.set_axis_off()
        t = f"mode {i + 1}: {frequencies[i]:.4g} Hz"
        if reference is not None and i < len(reference):
            t += f" (ref. {reference[i]:.4g})"
        ax.set_title(t, fontsize=9)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path



def plot_deformed_mechanism(res: Any, bodies: dict[str, Any], times: Sequence[float],
                            scale: float = 1.0, lines: Sequence[tuple[str, str]] = (),
                            ax: Any = None, view: str = "xy") -> Any:
    """Draw flexible bodies of a simulation result, deformed and magnified, at instants.

    Parameters
    ----------
    res : Result
        Simulation result with the bodies' ``frame_a`` kinematics and node displacements
        (``"<body>.node[i].u"``, the default outputs of a :class:`FlexibleBody` with up to
        200 nodes).
    bodies : dict
        ``{result path of a FlexibleBody: its FlexibleBodyData}``.
    times : sequence of float
        Instants [s] (the nearest output points are drawn), one colour each.
    scale : float
        Magnification of the elastic displacements (rigid motion unscaled).
    lines : sequence of (str, str)
        Rigid links drawn as segments between two frames (result paths, e.g.
        ``("crank_joint.frame_a", "crank.frame_b")``).
    ax : matplotlib axes, optional
        2D axes for ``view`` 'xy', 'xz', 'yz'; 3D axes (created if ``None``) for '3d'.
    view : {'xy', 'xz', 'yz', '3d'}
        Projection.

    Returns
    -------
    The axes.
    """
    plt = _plt()
    three = view == "3d"
    if ax is None:
        fig = plt.figure(figsize=(7, 6))
        ax = fig.add_subplot(111, projection="3d" if three else None)
    idx = {"x": 0, "y": 1, "z": 2}
    ij = (0, 1, 2) if three else tuple(idx[c] for c in view)
    allX = []
    for n, t in enumerate(times):
        k = int(np.argmin(np.abs(res.t - t)))
        col = f"C{n}"
        for name, data in bodies.items():
            mesh = data.model.mesh
            R = res[f"{name}.frame_a.R"][k].reshape(3, 3).T  # stored column-major
            r = res[f"{name}.frame_a.r"][k]
            U = np.array([res[f"{name}.node[{i}].u"][k] for i in range(mesh.n_nodes)])
            X = r + (mesh.nodes + scale * U) @ R.T
            allX.append(X)
            for el in mesh.elements:
                cyc = list(el) + ([el[0]] if len(el) > 2 else [])
                P = X[cyc]
                ax.plot(*(P[:, c] for c in ij), "-", color=col, lw=1.0)
        for a, b in lines:
            P = np.array([res[f"{a}.r"][k], res[f"{b}.r"][k]])
            allX.append(P)
            ax.plot(*(P[:, c] for c in ij), "-", color=col, lw=2.5)
        ax.plot([], [], "-", color=col, label=f"t = {res.t[k]:.4g} s")
    if three:
        _equal_3d(ax, np.vstack(allX))
        ax.set_xlabel("x [m]")
        ax.set_ylabel("y [m]")
        ax.set_zlabel("z [m]")
    else:
        ax.set_aspect("equal")
        ax.set_xlabel(f"{view[0]} [m]")
        ax.set_ylabel(f"{view[1]} [m]")
        ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    return ax
