"""Constraint rows removed as redundant: are they really redundant?

A domain pass with holonomic constraints ``Phi(x) = 0`` (the cut joints of a mechanism,
the bars and supports of a pin-jointed structure) removes the rows of the constraint
Jacobian ``A = dPhi/dx`` that are linearly dependent on the others at the start
configuration: kept, they would make the multiplier block singular. Such a row is
*redundant* only if the equations then still hold it, which two checks make sure of
(:func:`check_dropped_rows`, shared by the passes):

* **gaps.** The kept rows are satisfied near the start (Gauss-Newton with minimum-norm
  steps) and the dropped ones evaluated there. A dropped row with a residual contradicts
  the others (a loop that cannot close out of its plane, a bar of the wrong length): no
  run could hold it, and without it the run would silently leave it open.
* **singular.** The start is moved by a small random step (seeded: the same model gives
  the same answer) and brought back onto the kept rows' manifold, and the dropped rows
  are tested for independence there. A row that depends on the others near the start
  too is redundant (a planar loop modelled in 3D, a bar that duplicates another); a row
  that depends on them only *at* the start marks a singular configuration (bars on one
  line, a linkage at a dead point), where removing it lets the motion violate it (to
  second order in the displacement). When all rows together leave no motion at all at
  the moved point (``locked``), every mode the kept rows allow is spurious: the
  structure is rigid and the run would move it anyway. Otherwise some motions keep the
  row (a symmetric fold of a ring truss does) and others do not; the passes say so.

Near a regular point of the constraint manifold the kept rows alone define the same
manifold (both have the dimension ``n - rank``), so a truly redundant row holds, and stays
dependent, at every point of the kept rows' manifold near the start; the tolerances below
only have to separate roundoff from a first-order change.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

__all__ = ["DroppedRows", "check_dropped_rows", "satisfy_rows"]

#: The random step of the singularity test, relative to the coordinates' scale. A row
#: dependent only at the start gains an independent part of the order of this step (first
#: order in it); small enough to stay in the neighbourhood of the start configuration.
STEP = 1e-3

#: A dropped row whose part normal to the kept rows exceeds this, relative to the largest
#: row norm, is independent at the moved point: 1e3 below the ~``STEP`` part that a
#: singular start gives, 1e4 above what roundoff and the 1e-12 projection leave to a
#: redundant row.
INDEPENDENT_RTOL = 1e-6

Residuals = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]


@dataclass
class DroppedRows:
    """What :func:`check_dropped_rows` found.

    ``gaps``: dropped row -> its residual where the kept rows hold (only rows beyond the
    tolerance); ``singular``: dropped rows that are independent of the kept ones at a
    nearby point of their manifold; ``locked``: whether all rows together allow no
    motion at that point; ``converged``: whether the kept rows could be satisfied near
    the start (when not, neither check was made)."""

    gaps: dict[int, float] = field(default_factory=dict)
    singular: list[int] = field(default_factory=list)
    locked: bool = False
    converged: bool = True


def satisfy_rows(fun: Residuals, x: np.ndarray, rows: list[int], tol: float,
                 max_iter: int = 30, movable: np.ndarray | None = None
                 ) -> tuple[np.ndarray, bool]:
    """A point near ``x`` where the rows ``rows`` of ``Phi`` hold to ``tol`` (Gauss-Newton,
    minimum-norm steps over the coordinates ``movable``, default all), and whether it was
    reached. ``fun(x)`` returns ``(Phi, A)``."""
    x = np.array(x, dtype=float)
    cols = np.arange(x.size) if movable is None else np.asarray(movable, dtype=int)
    for _ in range(max_iter):
        Phi, A = fun(x)
        r = Phi[rows]
        if r.size == 0 or np.max(np.abs(r)) <= tol:
            return x, True
        if not np.all(np.isfinite(r)) or not np.all(np.isfinite(A[rows])):
            return x, False
        x[cols] -= np.linalg.lstsq(A[np.ix_(np.asarray(rows, dtype=int), cols)], r,
                                   rcond=None)[0]
    Phi, _ = fun(x)
    return x, bool(np.max(np.abs(Phi[rows])) <= tol)


def check_dropped_rows(fun: Residuals, x0: np.ndarray, keep: list[int], dropped: list[int],
                       *, tol: float, gap_tol: float, scale: float | np.ndarray = 1.0,
                       movable: np.ndarray | None = None, seed: int = 7,
                       speeds: Callable[[np.ndarray], np.ndarray] | None = None
                       ) -> DroppedRows:
    """Check the rows ``dropped`` (linearly dependent on ``keep`` at ``x0``): residuals
    beyond ``gap_tol`` where the kept rows hold to ``tol``, and rows independent at a
    point of the kept rows' manifold a random step ``STEP * scale`` away (see the module
    documentation). ``movable``: the coordinates that may move (default all);
    ``speeds(x)``: the matrix ``dx/du`` of the coordinates' rates by the speeds (default
    the identity; a unit quaternion has four coordinates and three speeds), for
    ``locked``."""
    out = DroppedRows()
    if not dropped:
        return out
    x_c, ok = satisfy_rows(fun, x0, keep, tol, movable=movable)
    if not ok:
        out.converged = False
        return out
    Phi, _ = fun(x_c)
    out.gaps = {i: float(Phi[i]) for i in dropped if not abs(Phi[i]) <= gap_tol}
    if out.gaps:
        return out
    cols = np.arange(x_c.size) if movable is None else np.asarray(movable, dtype=int)
    rng = np.random.default_rng(seed)
    x1 = x_c.copy()
    x1[cols] += STEP * np.broadcast_to(scale, x_c.shape)[cols] * rng.standard_normal(cols.size)
    x1, ok = satisfy_rows(fun, x1, keep, tol, movable=movable)
    if not ok:
        return out
    _, A = fun(x1)
    A = A[:, cols]
    norm = float(np.max(np.linalg.norm(A, axis=1))) if A.size else 0.0
    if norm == 0.0:
        return out
    Q = np.linalg.qr(A[keep].T)[0] if keep else np.zeros((A.shape[1], 0))
    for i in dropped:
        a = A[i]
        if np.linalg.norm(a - Q @ (Q.T @ a)) > INDEPENDENT_RTOL * norm:
            out.singular.append(i)
    if out.singular:
        Au = A if speeds is None else A @ np.asarray(speeds(x1))[cols]
        sv = np.linalg.svd(Au, compute_uv=False)
        out.locked = int(np.sum(sv > INDEPENDENT_RTOL * sv[0])) >= Au.shape[1]
    return out
