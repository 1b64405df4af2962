"""Exact 3D rotation algebra on CasADi expressions (no small-angle shortcuts).

Conventions: a rotation matrix ``R`` maps frame coordinates to world coordinates
(``v_world = R v_frame``); quaternions are ``(w, x, y, z)`` with ``R(q)`` built from the
normalised quaternion, so that a slowly drifting norm never makes ``R`` non-orthogonal.
"""

from __future__ import annotations

import casadi as cs
import numpy as np

__all__ = ["skew", "vee", "axis_rotation", "axis_quat", "axis_motion", "quat_to_matrix",
           "quat_rate", "quat_product", "quat_normalized", "matrix_to_quat", "unit",
           "perpendicular_basis"]


def skew(v: cs.SX) -> cs.SX:
    """``skew(v) @ w == cross(v, w)``."""
    return cs.vertcat(
        cs.horzcat(0, -v[2], v[1]),
        cs.horzcat(v[2], 0, -v[0]),
        cs.horzcat(-v[1], v[0], 0),
    )


def vee(S: cs.SX) -> cs.SX:
    """Inverse of :func:`skew` for the skew part of ``S``."""
    return 0.5 * cs.vertcat(S[2, 1] - S[1, 2], S[0, 2] - S[2, 0], S[1, 0] - S[0, 1])


def unit(n) -> np.ndarray:
    """A numeric unit vector (raises on a zero vector)."""
    a = np.asarray(n, dtype=float).reshape(3)
    norm = np.linalg.norm(a)
    if norm == 0.0:
        raise ValueError("axis vector must not be zero")
    return a / norm


def perpendicular_basis(n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two unit vectors ``e1, e2`` with ``(e1, e2, n)`` right-handed orthonormal."""
    n = unit(n)
    helper = np.array([1.0, 0.0, 0.0]) if abs(n[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    e1 = np.cross(helper, n)
    e1 /= np.linalg.norm(e1)
    e2 = np.cross(n, e1)
    return e1, e2


def axis_rotation(n: np.ndarray, phi: cs.SX) -> cs.SX:
    """Rotation by ``phi`` about the unit axis ``n`` (Rodrigues' formula, exact)."""
    return _axis_templates(n)[0](phi)


def _axis_rotation(n: cs.SX, phi: cs.SX) -> cs.SX:
    N = n @ n.T
    return cs.cos(phi) * (cs.SX.eye(3) - N) + cs.sin(phi) * skew(n) + N


def axis_quat(n: np.ndarray, phi: cs.SX) -> cs.SX:
    """Unit quaternion ``(w, x, y, z)`` of the rotation by ``phi`` about the unit axis ``n``
    (the one :func:`axis_rotation` gives, continuous in ``phi``)."""
    return _axis_templates(n)[1](phi)


def axis_motion(n: np.ndarray) -> cs.Function:
    """``(phi, w) -> (R, n w, Q)``: the rotation matrix and quaternion of the rotation by
    ``phi`` about the unit axis ``n`` and the angular velocity of the speed ``w`` about it
    (a revolute joint's relative motion in one call)."""
    return _axis_templates(n)[2]


def _axis_templates(n: np.ndarray) -> tuple[cs.Function, cs.Function, cs.Function]:
    """The axis templates with the numeric axis ``n`` folded in, built once per axis (a
    call costs one Python->CasADi crossing instead of the axis' conversions)."""
    key = tuple(np.asarray(n, dtype=float).reshape(3).tolist())
    f = _AXIS_CACHE.get(key)
    if f is None:
        nd = cs.DM(unit(n))
        phi, w = cs.SX.sym("phi"), cs.SX.sym("w")
        R, Q = _AXIS_ROTATION(nd, phi), _AXIS_QUAT(nd, phi)
        f = _AXIS_CACHE[key] = (cs.Function("axis_rotation", [phi], [R]),
                                cs.Function("axis_quat", [phi], [Q]),
                                cs.Function("axis_motion", [phi, w], [R, cs.SX(nd) * w, Q]))
    return f


_AXIS_CACHE: dict[tuple[float, ...], tuple[cs.Function, cs.Function, cs.Function]] = {}


def quat_product(p: cs.SX, q: cs.SX) -> cs.SX:
    """Hamilton product ``p q``: the rotation ``q`` followed by ``p`` (``R(p q) = R(p)
    R(q)``)."""
    pw, px, py, pz = p[0], p[1], p[2], p[3]
    qw, qx, qy, qz = q[0], q[1], q[2], q[3]
    return cs.vertcat(pw * qw - px * qx - py * qy - pz * qz,
                      pw * qx + px * qw + py * qz - pz * qy,
                      pw * qy - px * qz + py * qw + pz * qx,
                      pw * qz + px * qy - py * qx + pz * qw)


def quat_normalized(q: cs.SX) -> cs.SX:
    """``q / |q|`` (the quaternion coordinates of joints are normalised only in use)."""
    return q / cs.sqrt(cs.sumsqr(q))


def quat_to_matrix(q: cs.SX) -> cs.SX:
    """Rotation matrix of the (normalised) quaternion ``q = (w, x, y, z)``."""
    s = 1.0 / cs.sumsqr(q)
    w, x, y, z = q[0], q[1], q[2], q[3]
    return cs.vertcat(
        cs.horzcat(1 - 2 * s * (y * y + z * z), 2 * s * (x * y - z * w), 2 * s * (x * z + y * w)),
        cs.horzcat(2 * s * (x * y + z * w), 1 - 2 * s * (x * x + z * z), 2 * s * (y * z - x * w)),
        cs.horzcat(2 * s * (x * z - y * w), 2 * s * (y * z + x * w), 1 - 2 * s * (x * x + y * y)),
    )


def quat_rate(q: cs.SX, w_body: cs.SX) -> cs.SX:
    """``dq/dt`` for the angular velocity ``w_body`` expressed in the rotated frame."""
    w, x, y, z = q[0], q[1], q[2], q[3]
    p, r, s = w_body[0], w_body[1], w_body[2]
    return 0.5 * cs.vertcat(
        -x * p - y * r - z * s,
        w * p + y * s - z * r,
        w * r - x * s + z * p,
        w * s + x * r - y * p,
    )


def matrix_to_quat(R: cs.SX) -> cs.SX:
    """Quaternion of a rotation matrix (Shepperd's method, branch on the largest term).

    The branch choice is numerical only (each branch is exact where it is chosen), so it
    makes no events (:func:`acausal.relations.no_event`). The expression is built once on
    a symbolic matrix and inlined for ``R`` (its size does not grow with ``R``'s)."""
    from ..relations import NO_EVENT  # the mark of no_event, an input of the template

    global _MATRIX_TO_QUAT
    if _MATRIX_TO_QUAT is None:
        Rs = cs.SX.sym("R", 3, 3)
        _MATRIX_TO_QUAT = cs.Function("matrix_to_quat", [Rs, NO_EVENT],
                                      [_matrix_to_quat(Rs)])
    return _MATRIX_TO_QUAT(cs.densify(cs.SX(R)), NO_EVENT)


_MATRIX_TO_QUAT: cs.Function | None = None


def _matrix_to_quat(R: cs.SX) -> cs.SX:
    tr = R[0, 0] + R[1, 1] + R[2, 2]
    cands = [
        cs.vertcat(1 + tr, R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]),
        cs.vertcat(R[2, 1] - R[1, 2], 1 + 2 * R[0, 0] - tr, R[0, 1] + R[1, 0], R[0, 2] + R[2, 0]),
        cs.vertcat(R[0, 2] - R[2, 0], R[0, 1] + R[1, 0], 1 + 2 * R[1, 1] - tr, R[1, 2] + R[2, 1]),
        cs.vertcat(R[1, 0] - R[0, 1], R[0, 2] + R[2, 0], R[1, 2] + R[2, 1], 1 + 2 * R[2, 2] - tr),
    ]
    keys = [tr, R[0, 0], R[1, 1], R[2, 2]]
    out = cands[3] / (2 * cs.sqrt(cs.fmax(cands[3][3], 1e-300)))
    for k in (2, 1, 0):
        others = cs.fmax(cs.fmax(keys[(k + 1) % 4], keys[(k + 2) % 4]), keys[(k + 3) % 4])
        better = keys[k] >= others
        val = cands[k] / (2 * cs.sqrt(cs.fmax(cands[k][k if k else 0], 1e-300)))
        out = cs.if_else(better, val, out)
    from ..relations import no_event

    return no_event(out)


def _templates() -> tuple[cs.Function, cs.Function]:
    """The axis rotation and quaternion as CasADi functions (inlined at every joint: the
    numeric axis folds into the expressions, zeros included)."""
    n, phi = cs.SX.sym("n", 3), cs.SX.sym("phi")
    h = phi / 2
    return (cs.Function("axis_rotation", [n, phi], [_axis_rotation(n, phi)]),
            cs.Function("axis_quat", [n, phi], [cs.vertcat(cs.cos(h), n * cs.sin(h))]))


_AXIS_ROTATION, _AXIS_QUAT = _templates()
