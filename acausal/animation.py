"""Pictures of 3D mechanisms: an animation (GIF, MP4) or a single-frame snapshot (PNG).

``res.animate(cm, "arm.gif")`` (or :func:`animate`) draws every frame-connected component of
the compiled model ``cm`` from the frame kinematics of the result (``res["body.frame_a.r"]``
and the column-major ``res["body.frame_a.R"]``):

==========================  ===============================================================
component                   drawn as
==========================  ===============================================================
``World``                   the inertial axes (x red, y green, z blue)
``Body``                    a sphere at the centre of mass, joined to ``frame_a`` by a rod
``FixedTranslation`` (arm)  a cylinder (a thick segment) from ``frame_a`` to ``frame_b``
``Revolute``, ``Prismatic``  a short cylinder / a box along the joint axis
``Spherical``, ``Universal``  a small sphere
spring, damper, line force  a zig-zag line between the two frames
``FlexibleBody``            its finite-element mesh, deformed, the elastic displacements
                            magnified by ``scale`` (as :func:`components.flexible.plot.
                            plot_deformed_mechanism`)
==========================  ===============================================================

``shapes={"path": "sphere" | "box" | "cylinder" | "none"}`` overrides the choice.
Output by extension: ``.gif`` (pillow, installed with matplotlib), ``.mp4`` (needs the
``ffmpeg`` program), ``.png`` (:func:`snapshot`: one frame). matplotlib is needed
(``pip install 'acausal[anim]'``).

A model loaded from a file (:mod:`acausal.persist`) keeps its components' classes and plain
parameters, so rigid mechanisms animate; its flexible bodies, whose finite-element data is
not saved, are drawn as their reference frames only.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .errors import AcausalError, ArgumentError

__all__ = ["animate", "snapshot", "draw_frame"]


def _plt() -> Any:
    try:
        import matplotlib

        if matplotlib.get_backend().lower() not in ("agg", "pdf", "svg") and \
                not _interactive_backend_requested():
            matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise AcausalError("animations need matplotlib: pip install 'acausal[anim]'") from exc
    return plt


def _interactive_backend_requested() -> bool:
    import os

    return bool(os.environ.get("MPLBACKEND"))


def _info(c: Any) -> tuple[str, set[str], dict[str, Any]]:
    """(path, class names along the MRO, parameters) of a live or detached component."""
    from .persist import DetachedComponent

    if isinstance(c, DetachedComponent):
        return c.path(), set(c.class_names), dict(c.params)
    return c.path(), {k.__name__ for k in type(c).__mro__}, dict(c.parameters())


def _components(cm: Any) -> list[Any]:
    dp = cm.domain_pass("frame")
    if dp is None:
        raise AcausalError("animate() draws 3D mechanisms: this model has no frame-connected "
                           "(components.multibody) components; plot its variables with "
                           "res.plot(...)")
    return list(dp.comps)


def _frame(res: Any, name: str, k: int) -> tuple[np.ndarray, np.ndarray] | None:
    if f"{name}.r" not in res:
        return None
    r = res[f"{name}.r"][k]
    R = res[f"{name}.R"][k].reshape(3, 3).T if f"{name}.R" in res else np.eye(3)
    return np.asarray(r, float), np.asarray(R, float)


def _sphere(ax: Any, c: np.ndarray, rad: float, color: str) -> None:
    u, v = np.mgrid[0:2 * np.pi:10j, 0:np.pi:7j]
    ax.plot_surface(c[0] + rad * np.cos(u) * np.sin(v), c[1] + rad * np.sin(u) * np.sin(v),
                    c[2] + rad * np.cos(v), color=color, linewidth=0, shade=True, alpha=0.9)


def _box(ax: Any, c: np.ndarray, R: np.ndarray, half: np.ndarray, color: str) -> None:
    corners = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)])
    P = c + (corners * half) @ R.T
    for a, b in [(0, 1), (0, 2), (1, 3), (2, 3), (4, 5), (4, 6), (5, 7), (6, 7), (0, 4),
                 (1, 5), (2, 6), (3, 7)]:
        ax.plot(*P[[a, b]].T, color=color, lw=1.5)


def _zigzag(a: np.ndarray, b: np.ndarray, width: float, n: int = 8) -> np.ndarray:
    d = b - a
    L = float(np.linalg.norm(d))
    if L < 1e-12:
        return np.array([a, b])
    e = d / L
    side = np.cross(e, [0, 0, 1.0])
    if np.linalg.norm(side) < 1e-6:
        side = np.cross(e, [1.0, 0, 0])
    side /= np.linalg.norm(side)
    s = np.linspace(0, 1, 2 * n + 1)
    off = np.zeros_like(s)
    off[1:-1:2], off[2:-1:2] = width, -width
    off[[0, -1]] = 0.0
    return a + np.outer(s, d) + np.outer(off, side)


_SHAPES = ("sphere", "box", "cylinder", "none")


def _check_shapes(shapes: dict[str, str], paths: Sequence[str]) -> None:
    """Every key of ``shapes`` a drawn component, every value a shape (a misspelt path or
    shape was ignored without a word, and the default drawn)."""
    from .names import did_you_mean

    for path, kind in shapes.items():
        if path not in paths:
            raise ArgumentError(
                f"shapes: {path!r} is not a frame-connected component of the model"
                + did_you_mean(str(path), list(paths)))
        if kind not in _SHAPES:
            raise ArgumentError(f"shapes[{path!r}] = {kind!r} is not one of "
                                + ", ".join(map(repr, _SHAPES)))


def _check_output(file: str | Path) -> None:
    """The folder of an animation file, made if missing (checked before the frames are
    drawn)."""
    folder = Path(str(file)).expanduser().parent
    if folder.exists() and not folder.is_dir():
        raise AcausalError(f"cannot write {str(file)!r}: {str(folder)!r} is a file, not a "
                           "folder")
    folder.mkdir(parents=True, exist_ok=True)


class _Scene:
    """What to draw for each component, prepared once."""

    def __init__(self, res: Any, cm: Any, scale: float, shapes: dict[str, str]) -> None:
        self.res, self.scale, self.shapes = res, scale, shapes
        self.items = [_info(c) + (c,) for c in _components(cm)]
        _check_shapes(shapes, [path for path, _, _, _ in self.items])
        pts = []
        for path, _, _, _ in self.items:
            for port in ("frame_a", "frame_b"):
                name = f"{path}.{port}.r"
                if name in res:
                    pts.append(np.asarray(res[name]).reshape(len(res.t), 3))
        if not pts:
            raise AcausalError("the result holds no frame positions (frame_a.r) to draw")
        P = np.concatenate(pts)
        self.lo, self.hi = P.min(axis=0), P.max(axis=0)
        self.size = float(max(np.max(self.hi - self.lo), 1e-3))
        self.flex = {}
        for path, classes, params, _ in self.items:
            if "FlexibleBody" in classes:
                data = params.get("data")
                mesh = getattr(getattr(data, "model", None), "mesh", None)
                if mesh is not None:
                    self.flex[path] = mesh
        for path, mesh in self.flex.items():
            k_all = range(len(res.t))
            for k in k_all[:: max(1, len(res.t) // 20)]:
                X = self._flex_nodes(path, mesh, k)
                self.lo, self.hi = np.minimum(self.lo, X.min(0)), np.maximum(self.hi, X.max(0))
        self.size = float(max(np.max(self.hi - self.lo), 1e-3))

    def _flex_nodes(self, path: str, mesh: Any, k: int) -> np.ndarray:
        fr = _frame(self.res, f"{path}.frame_a", k)
        assert fr is not None
        r, R = fr
        U = np.array([self.res[f"{path}.node[{i}].u"][k] for i in range(mesh.n_nodes)])
        return r + (mesh.nodes + self.scale * U) @ R.T

    def draw(self, ax: Any, k: int) -> None:
        res, s = self.res, self.size
        for path, classes, params, _ in self.items:
            kind = self.shapes.get(path, "")
            if kind == "none":
                continue
            a = _frame(res, f"{path}.frame_a", k)
            b = _frame(res, f"{path}.frame_b", k)
            if "World" in classes:
                o, R = b if b is not None else (np.zeros(3), np.eye(3))
                for j, col in enumerate(("r", "g", "b")):
                    ax.plot(*np.array([o, o + 0.15 * s * R[:, j]]).T, color=col, lw=1.5)
            elif path in self.flex:
                mesh = self.flex[path]
                X = self._flex_nodes(path, mesh, k)
                for el in mesh.elements:
                    cyc = list(el) + ([el[0]] if len(el) > 2 else [])
                    ax.plot(*X[cyc].T, color="C0", lw=2.0)
            elif "FlexibleBody" in classes and a is not None:  # no mesh data: its frames
                ax.plot(*np.array([a[0]] + ([b[0]] if b else [])).T, "o-", color="C0")
            elif "Body" in classes or "FreeFlyingBody" in classes or kind == "sphere":
                if a is None:
                    continue
                r, R = a
                cm_pos = r + R @ np.asarray(params.get("r_CM", [0.0, 0.0, 0.0]), float)
                ax.plot(*np.array([r, cm_pos]).T, color="0.4", lw=3)
                if kind == "box":
                    _box(ax, cm_pos, R, np.full(3, 0.04 * s), "C1")
                elif kind == "cylinder":  # (was drawn as the sphere: the choice ignored)
                    ex = 0.04 * s * R[:, 0]  # a short thick segment along frame_a's x axis
                    ax.plot(*np.array([cm_pos - ex, cm_pos + ex]).T, color="C1", lw=8,
                            solid_capstyle="butt")
                else:
                    _sphere(ax, cm_pos, 0.04 * s, "C1")
            elif any(n in classes for n in ("Revolute", "Prismatic", "Cylindrical")):
                if a is None:
                    continue
                r, R = a
                n = np.asarray(params.get("n", [0.0, 0.0, 1.0]), float)
                n = R @ (n / max(np.linalg.norm(n), 1e-12))
                if "Prismatic" in classes or kind == "box":
                    end = b[0] if b is not None else r
                    ax.plot(*np.array([r, end]).T, color="C2", lw=6, alpha=0.6)
                    _box(ax, r, R, np.full(3, 0.025 * s), "C2")
                else:
                    h = 0.05 * s
                    ax.plot(*np.array([r - h * n, r + h * n]).T, color="C3", lw=7,
                            solid_capstyle="butt")
            elif any(n in classes for n in ("Spherical", "Universal")):
                if a is not None:
                    _sphere(ax, a[0], 0.02 * s, "C3")
            elif any(n in classes for n in ("Spring", "Damper", "SpringDamper",
                                            "_LineForce")):
                if a is not None and b is not None:
                    ax.plot(*_zigzag(a[0], b[0], 0.02 * s).T, color="C4", lw=1.2)
            elif a is not None and b is not None:  # arms and other two-frame parts
                ax.plot(*np.array([a[0], b[0]]).T, color="0.3", lw=4,
                        solid_capstyle="round")

    def setup(self, ax: Any, k: int, view: tuple[float, float] | None, title: str) -> None:
        c = 0.5 * (self.lo + self.hi)
        h = 0.6 * self.size
        ax.set_xlim(c[0] - h, c[0] + h)
        ax.set_ylim(c[1] - h, c[1] + h)
        ax.set_zlim(c[2] - h, c[2] + h)
        ax.set_box_aspect((1, 1, 1))
        ax.set_xlabel("x [m]")
        ax.set_ylabel("y [m]")
        ax.set_zlabel("z [m]")
        from matplotlib.ticker import MaxNLocator

        for axis in (ax.xaxis, ax.yaxis, ax.zaxis):  # (nine ticks ran into each other)
            axis.set_major_locator(MaxNLocator(nbins=5))
        if view is None:  # a planar mechanism seen from the normal of its plane
            flat = int(np.argmin(self.hi - self.lo))
            planar = (self.hi - self.lo)[flat] < 1e-6 * self.size
            view = {2: (90.0, -90.0), 1: (0.0, -90.0), 0: (0.0, 0.0)}[flat] if planar \
                else (25.0, -60.0)
            if planar:  # (its ticks and label, seen end-on, were printed over each other)
                axis = (ax.xaxis, ax.yaxis, ax.zaxis)[flat]
                axis.set_ticks([])
                axis.set_label_text("")
        ax.view_init(elev=view[0], azim=view[1])
        ax.set_title(f"{title}t = {self.res.t[k]:.3f} s", fontsize=10)


def _index(res: Any, t: Any, what: str = "t") -> int:
    """The output point nearest to the time ``t``, which must lie in the run's interval (a
    time outside it would silently draw the nearest end)."""
    t0, t1 = float(res.t[0]), float(res.t[-1])
    try:
        tt = float(t)
    except (TypeError, ValueError):
        raise ArgumentError(f"{what} must be a time in seconds, got {t!r}") from None
    slack = 1e-9 * max(t1 - t0, abs(t1), 1e-300)  # (round-off of a time written as t_end)
    if not (t0 - slack <= tt <= t1 + slack):
        raise ArgumentError(f"{what} = {tt:g} s is outside the run, which covers "
                            f"[{t0:g}, {t1:g}] s; give a time in that interval")
    return int(np.argmin(np.abs(res.t - tt)))


def draw_frame(res: Any, cm: Any, t: float, ax: Any = None, *, scale: float = 1.0,
               shapes: dict[str, str] | None = None,
               view: tuple[float, float] | None = None, title: str = "") -> Any:
    """Draw the mechanism at the output point nearest to ``t`` on 3D axes (returns them)."""
    k = _index(res, t)
    plt = _plt()
    scene = _Scene(res, cm, scale, dict(shapes or {}))
    if ax is None:
        ax = plt.figure(figsize=(6, 6)).add_subplot(111, projection="3d")
    scene.draw(ax, k)
    scene.setup(ax, k, view, title)
    return ax


def snapshot(res: Any, cm: Any, t: float, file: str | Path, *, scale: float = 1.0,
             shapes: dict[str, str] | None = None,
             view: tuple[float, float] | None = None, dpi: int = 100) -> Path:
    """A PNG (or any matplotlib format) of the mechanism at time ``t``."""
    _check_output(file)
    plt = _plt()
    ax = draw_frame(res, cm, t, scale=scale, shapes=shapes, view=view,
                    title=f"x{scale:g} elastic, " if scale != 1.0 else "")
    ax.figure.savefig(file, dpi=dpi)
    plt.close(ax.figure)
    return Path(file)


def animate(res: Any, cm: Any, file: str | Path | None = None, *, fps: int = 20,
            frames: int | Sequence[float] | None = None, scale: float = 1.0,
            shapes: dict[str, str] | None = None,
            view: tuple[float, float] | None = None, dpi: int = 80,
            t: float | None = None) -> Any:
    """Animate the mechanism of ``cm`` along ``res``.

    Parameters
    ----------
    res : Result
        A simulation of ``cm``.
    cm : CompiledModel
        The model (its frame-connected components give the geometry).
    file : str or Path, optional
        ``.gif`` or ``.mp4`` (an animation), ``.png`` (a snapshot at ``t``, default the
        end). Without a file the ``matplotlib.animation.FuncAnimation`` is returned.
    fps : int
        Frames per second of the file (real time when ``frames`` spans ``t_end * fps``).
    frames : int or sequence of float, optional
        Number of frames evenly spread over the run (default ``min(len(res.t), 100)``),
        or the instants to draw.
    scale : float
        Magnification of the elastic displacements of flexible bodies.
    shapes : dict, optional
        ``{component path: "sphere" | "box" | "cylinder" | "none"}``.
    view : (elevation, azimuth) in degrees, optional
        Default: normal to the plane of a planar mechanism, else (25, -60).
    dpi : int
    t : float, optional
        Time of a ``.png`` snapshot, within the run (an ``ArgumentError`` otherwise, as for
        ``frames`` given as instants).
    """
    if file is not None and Path(file).suffix.lower() in (".png", ".jpg", ".svg", ".pdf"):
        return snapshot(res, cm, res.t[-1] if t is None else t, file, scale=scale,
                        shapes=shapes, view=view, dpi=dpi)
    # (fps = 0 was a ZeroDivisionError, frames = 0 an IndexError, frames < 0 numpy's
    # "Number of samples, -3, must be non-negative")
    if isinstance(fps, bool) or not isinstance(fps, (int, float, np.integer, np.floating)) \
            or not np.isfinite(fps) or fps <= 0:
        raise ArgumentError(f"fps (frames per second) must be a number > 0, got {fps!r}")
    if isinstance(frames, bool) or (isinstance(frames, (int, float, np.integer, np.floating))
                                    and not (np.isfinite(frames) and frames >= 1)):
        raise ArgumentError(f"frames must be a number of frames >= 1 or a sequence of "
                            f"instants, got {frames!r}")
    if frames is not None and not isinstance(frames, (int, float, np.integer, np.floating)) \
            and len(np.atleast_1d(np.asarray(frames, dtype=object))) == 0:
        raise ArgumentError("frames is an empty sequence: give the instants to draw")
    if file is not None:
        _check_output(file)
    plt = _plt()
    from matplotlib import animation

    suffix = Path(file).suffix.lower() if file is not None else ""
    if file is not None and suffix not in (".gif", ".mp4", ".m4v", ".mov"):
        raise AcausalError(f"unknown animation format {suffix!r}: use .gif, .mp4 or .png")
    if suffix in (".mp4", ".m4v", ".mov") and not animation.FFMpegWriter.isAvailable():
        raise AcausalError("MP4 output needs the ffmpeg program (apt install ffmpeg, "
                           "conda install ffmpeg); write a .gif instead")
    scene = _Scene(res, cm, scale, dict(shapes or {}))
    if frames is None:
        frames = min(len(res.t), 100)
    times = (np.linspace(res.t[0], res.t[-1], int(frames))
             if isinstance(frames, (int, float, np.integer, np.floating))
             else np.atleast_1d(np.asarray(frames, dtype=float)))
    ks = [_index(res, tt, f"frames[{i}]") for i, tt in enumerate(times)]
    fig = plt.figure(figsize=(6, 6))
    ax = fig.add_subplot(111, projection="3d")
    title = f"x{scale:g} elastic, " if scale != 1.0 else ""

    def update(i: int) -> list[Any]:
        ax.cla()
        scene.draw(ax, ks[i])
        scene.setup(ax, ks[i], view, title)
        return []

    anim = animation.FuncAnimation(fig, update, frames=len(ks), interval=1000 / fps,
                                   blit=False)
    if file is None:
        return anim
    writer: Any = (animation.PillowWriter(fps=fps) if suffix == ".gif"
                   else animation.FFMpegWriter(fps=fps))
    anim.save(str(file), writer=writer, dpi=dpi)
    plt.close(fig)
    return Path(file)
