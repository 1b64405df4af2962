"""Recursive O(N) forward dynamics of a tree of frames (the articulated-body algorithm).

The mechanism graph's spanning tree gives every frame (vertex) its position ``r``,
orientation ``R``, velocity ``v`` and angular velocity ``w`` in world coordinates
(:mod:`acausal.multibody.mechanism`). This module turns the same tree into the joint
accelerations ``u' = f(q, u, t, forces)`` as CasADi expressions, with the articulated-body
algorithm (Featherstone 2008, ch. 7) written in world coordinates with *classical*
accelerations ``A = [a; z]`` (acceleration of the frame origin, angular acceleration):

* across a tree edge from the parent frame ``p`` to the child frame ``c``::

      V_c = X V_p + S u_k,     A_c = X A_p + S u_k' + c_k,
      X = [[1, -skew(d)], [0, 1]],   d = r_c - r_p,

  where ``S`` (6 x n_k) is the edge's motion subspace in world coordinates at the child's
  origin and ``c_k`` the velocity-product acceleration (both from the edge's
  :class:`~acausal.multibody.base.TreeMotion`, by local differentiation);
* every frame carries the wrench of the components attached to it (force at the origin,
  moment about it, world coordinates), affine in its acceleration:
  ``W_v = -M_v A_v + b_v`` (``M_v`` the spatial inertia at the origin, ``b_v`` gravity,
  gyroscopic, spring and drive forces);
* the backward sweep accumulates the articulated inertias ``I_v`` and bias wrenches
  ``p_v`` (the wrench the parent must apply to the subtree of ``v`` is ``I_v A_v + p_v``),
  the forward sweep gives the accelerations from the root.

Both sweeps are linear in the number of edges; the n_k x n_k joint-space inertia of each
edge (n_k <= 6) is the only matrix that is solved. The result is mathematically identical
to the virtual-power equations ``M(q) u' = Q`` of the mechanism pass (``tests/
test_mb_recursive.py`` checks it to 1e-12 on random mechanisms): it is their solution
written as a recursion instead of a dense solve.
"""

from __future__ import annotations

from dataclasses import dataclass

import casadi as cs

from .rotations import skew

__all__ = ["TreeEdgeDynamics", "ArticulatedResult", "articulated_accelerations",
           "edge_motion_world", "spd_solve"]


@dataclass
class TreeEdgeDynamics:
    """One tree edge for the recursion (all expressions in world coordinates).

    Attributes
    ----------
    parent, child : int
        Vertices (frames) of the edge, the parent nearer the datum.
    d : casadi.SX
        ``r_child - r_parent`` (3).
    S : casadi.SX
        Motion subspace (6 x n), the child's ``[v; w]`` per unit speed.
    c : casadi.SX
        Velocity-product acceleration of the child (6) at zero ``u'`` of this edge and
        zero parent acceleration.
    tau : casadi.SX
        Generalised forces on the edge's speeds (n) besides the frame wrenches (constraint
        reactions of cut joints, generalised forces of components).
    prescribed : casadi.SX or None
        For an edge whose motion is prescribed (a joint moved by a kinematic driver), the
        symbols of its speeds' derivatives: the recursion then treats them as known and
        gives the edge's equation of motion as a residual that determines the driving
        force instead (Featherstone's hybrid dynamics).
    """

    parent: int
    child: int
    d: cs.SX
    S: cs.SX
    c: cs.SX
    tau: cs.SX
    prescribed: cs.SX | None = None

    @property
    def n(self) -> int:
        return int(self.S.size2())


def spd_solve(D: cs.SX, B: cs.SX) -> cs.SX:
    """``D^-1 B`` for a small symmetric positive definite ``D`` (LDL^T without pivoting:
    a joint-space inertia has no zero pivot)."""
    n = int(D.size1())
    if n == 1:
        return B / D
    L = [[cs.SX(0)] * n for _ in range(n)]
    dg = [cs.SX(0)] * n
    for j in range(n):
        s = D[j, j]
        for k in range(j):
            s = s - L[j][k] * L[j][k] * dg[k]
        dg[j] = s
        for i in range(j + 1, n):
            s = D[i, j]
            for k in range(j):
                s = s - L[i][k] * L[j][k] * dg[k]
            L[i][j] = s / dg[j]
    rows = [B[i, :] for i in range(n)]
    for i in range(n):  # L y = B
        for k in range(i):
            rows[i] = rows[i] - L[i][k] * rows[k]
    for i in range(n):
        rows[i] = rows[i] / dg[i]
    for i in reversed(range(n)):  # L^T x = y
        for k in range(i + 1, n):
            rows[i] = rows[i] - L[k][i] * rows[k]
    return cs.vertcat(*rows)


def _shift_inertia(M: cs.SX, d: cs.SX) -> cs.SX:
    """``X^T M X`` with ``X = [[1, -skew(d)], [0, 1]]``: the inertia of a frame at ``c``
    seen from a frame at ``c - d`` (parallel-axis theorem for spatial inertias)."""
    A, B, C, D = M[:3, :3], M[:3, 3:], M[3:, :3], M[3:, 3:]
    K = skew(d)
    C2 = K @ A + C
    return cs.vertcat(cs.horzcat(A, B - A @ K),
                      cs.horzcat(C2, D + K @ B - C2 @ K))


def _shift_wrench(f: cs.SX, d: cs.SX) -> cs.SX:
    """``X^T f``: the wrench ``[F; M]`` at ``c`` moved to ``c - d`` (moment about it)."""
    return cs.vertcat(f[:3], f[3:] + cs.cross(d, f[:3]))


def _shift_motion(A: cs.SX, d: cs.SX) -> cs.SX:
    """``X A``: the rigid-body acceleration field ``[a; z]`` at ``p`` evaluated at
    ``p + d`` (classical accelerations: the centripetal part is in the edge's ``c``)."""
    return cs.vertcat(A[:3] + cs.cross(A[3:], d), A[3:])


@dataclass
class ArticulatedResult:
    """What the recursion gives: ``accelerations`` (child vertex -> ``u'`` of the edge
    leading to it), ``residuals`` (child vertex -> the equation of motion of a prescribed
    edge, ``S^T f - tau = 0`` with ``f`` the wrench transmitted to its subtree) and the
    joint-space inertias ``D`` of the other edges (child vertex -> n x n)."""

    accelerations: dict[int, cs.SX]
    residuals: dict[int, cs.SX]
    inertias: dict[int, cs.SX]


def articulated_accelerations(order: list[int], edge_of: dict[int, TreeEdgeDynamics],
                              inertia: dict[int, cs.SX], bias: dict[int, cs.SX],
                              ) -> ArticulatedResult:
    """Joint accelerations of every tree edge by the articulated-body algorithm.

    Parameters
    ----------
    order : list of int
        Vertices, parents before children (the root vertex, fixed in space, first).
    edge_of : dict
        Child vertex -> the tree edge that leads to it.
    inertia, bias : dict
        Vertex -> ``M_v`` (6 x 6) and ``b_v`` (6) of the wrench ``W_v = -M_v A_v + b_v``
        acting on it (vertices without an entry carry none).

    Returns
    -------
    ArticulatedResult
        Accelerations of the edges with speeds (n x 1; edges without speeds are left out),
        residuals of the prescribed ones.
    """
    zero6 = cs.SX.zeros(6, 1)
    IA: dict[int, cs.SX] = {}
    pA: dict[int, cs.SX] = {}
    biased = [v for v in order if v in bias]
    minus_bias = (dict(zip(biased, cs.vertsplit(-cs.vertcat(*[bias[v] for v in biased]), 6),
                           strict=True)) if biased else {})  # one negation for all frames
    for v in order:
        IA[v] = inertia[v] if v in inertia else cs.SX.zeros(6, 6)
        pA[v] = minus_bias.get(v, zero6)
    # backward sweep: articulated inertias and bias wrenches, leaves first (each step adds
    # the child's share to its parent's accumulators inside the template)
    solved: dict[int, tuple[cs.SX, cs.SX]] = {}  # child -> (D^-1 U^T, D^-1 u)
    inertias: dict[int, cs.SX] = {}
    for v in reversed(order):
        e = edge_of.get(v)
        if e is None:
            continue
        acc_in = (IA[e.parent], pA[e.parent])
        if e.prescribed is not None:  # rigid with a known acceleration
            IA[e.parent], pA[e.parent] = _template("backward_prescribed", e.n)(
                IA[v], pA[v], e.S, e.c, e.d, e.prescribed, *acc_in)
        elif e.n:
            IA[e.parent], pA[e.parent], DU, Du, D = _template("backward", e.n)(
                IA[v], pA[v], e.S, e.c, e.d, e.tau, *acc_in)
            solved[v] = (DU, Du)
            inertias[v] = D
        else:
            IA[e.parent], pA[e.parent] = _template("backward_rigid", 0)(IA[v], pA[v], e.c,
                                                                       e.d, *acc_in)
    # forward sweep: accelerations from the root
    acc: dict[int, cs.SX] = {}
    out: dict[int, cs.SX] = {}
    residuals: dict[int, cs.SX] = {}
    for v in order:
        e = edge_of.get(v)
        if e is None:
            acc[v] = zero6
            continue
        if e.prescribed is not None:
            acc[v], residuals[v] = _template("forward_prescribed", e.n)(
                acc[e.parent], e.d, e.c, e.S, e.prescribed, IA[v], pA[v], e.tau)
        elif e.n:
            DU, Du = solved[v]
            out[v], acc[v] = _template("forward", e.n)(acc[e.parent], e.d, e.c, e.S, DU, Du)
        else:
            acc[v] = _template("forward_rigid", 0)(acc[e.parent], e.d, e.c)
    return ArticulatedResult(out, residuals, inertias)


_TEMPLATES: dict[tuple[str, int], cs.Function] = {}


def edge_motion_world(n: int) -> cs.Function:
    """``(Rp, wp, d_loc, S_loc, Jd_loc, u) -> (d, S, c)``: a tree edge's offset, motion
    subspace and velocity-product acceleration in world axes, from the same quantities in
    the parent frame's axes (``J_loc = S_loc u``, ``Jd_loc`` its rate at constant speeds).

    With ``J = blkdiag(Rp, Rp) J_loc`` and ``dRp/dt = skew(wp) Rp``, the child's
    acceleration at zero joint acceleration and zero parent acceleration is
    ``c = [wp x (wp x d + J_v) + wp x J_v; wp x J_w] + blkdiag(Rp, Rp) Jd_loc``.
    """
    key = ("edge", n)
    f = _TEMPLATES.get(key)
    if f is None:
        Rp = cs.SX.sym("Rp", 3, 3)
        wp = cs.SX.sym("wp", 3)
        dl = cs.SX.sym("d", 3)
        Sl = cs.SX.sym("S", 6, n)
        Jdl = cs.SX.sym("Jd", 6)
        u = cs.SX.sym("u", n)
        d = Rp @ dl
        S = cs.vertcat(Rp @ Sl[:3, :], Rp @ Sl[3:, :])
        J = S @ u
        Jv, Jw = J[:3], J[3:]
        c = cs.vertcat(cs.cross(wp, cs.cross(wp, d) + Jv) + cs.cross(wp, Jv) + Rp @ Jdl[:3],
                       cs.cross(wp, Jw) + Rp @ Jdl[3:])
        f = _TEMPLATES[key] = cs.Function("edge_motion", [Rp, wp, dl, Sl, Jdl, u], [d, S, c])
    return f


def _symmetric(M: cs.SX) -> cs.SX:
    """``M`` rebuilt from its upper triangle (a symmetric result computed once per pair)."""
    n = int(M.size1())
    return cs.vertcat(*[cs.horzcat(*[M[min(i, j), max(i, j)] for j in range(n)])
                        for i in range(n)])


def _template(kind: str, n: int) -> cs.Function:
    """One step of the recursion as a CasADi function of symbolic arguments, built once
    per kind and number of speeds; calling it on expressions inlines it (one call instead
    of hundreds of Python-level matrix operations per edge)."""
    key = (kind, n)
    f = _TEMPLATES.get(key)
    if f is not None:
        return f
    I6 = cs.SX.sym("I", 6, 6)
    p = cs.SX.sym("p", 6)
    S = cs.SX.sym("S", 6, n)
    c = cs.SX.sym("c", 6)
    d = cs.SX.sym("d", 3)
    tau = cs.SX.sym("tau", n)
    ud = cs.SX.sym("ud", n)
    Ap = cs.SX.sym("Ap", 6)
    DU = cs.SX.sym("DU", n, 6)
    Du = cs.SX.sym("Du", n)
    I6s = _symmetric(I6)
    Ic = I6s @ c
    # the parent's accumulated articulated inertia and bias wrench (backward sweep)
    I_par, p_par = cs.SX.sym("I_parent", 6, 6), cs.SX.sym("p_parent", 6)
    if kind == "backward":
        U = I6s @ S
        D = _symmetric(S.T @ U)
        u = tau - S.T @ (p + Ic)
        sol = spd_solve(D, cs.horzcat(U.T, u))
        DUx, Dux = sol[:, :6], sol[:, 6]
        Ia = I6s - U @ DUx
        pa = p + Ic + U @ Dux  # = p + Ia c + U D^-1 (tau - S^T p)
        f = cs.Function(kind, [I6, p, S, c, d, tau, I_par, p_par],
                        [I_par + _symmetric(_shift_inertia(Ia, d)),
                         p_par + _shift_wrench(pa, d), DUx, Dux, D])
    elif kind == "backward_prescribed":
        f = cs.Function(kind, [I6, p, S, c, d, ud, I_par, p_par],
                        [I_par + _symmetric(_shift_inertia(I6s, d)),
                         p_par + _shift_wrench(p + Ic + I6s @ (S @ ud), d)])
    elif kind == "backward_rigid":
        f = cs.Function(kind, [I6, p, c, d, I_par, p_par],
                        [I_par + _symmetric(_shift_inertia(I6s, d)),
                         p_par + _shift_wrench(p + Ic, d)])
    elif kind == "forward":
        XA = _shift_motion(Ap, d)
        udx = Du - DU @ XA
        f = cs.Function(kind, [Ap, d, c, S, DU, Du], [udx, XA + c + S @ udx])
    elif kind == "forward_prescribed":
        A = _shift_motion(Ap, d) + c + S @ ud
        f = cs.Function(kind, [Ap, d, c, S, ud, I6, p, tau],
                        [A, S.T @ (I6s @ A + p) - tau])
    elif kind == "forward_rigid":
        f = cs.Function(kind, [Ap, d, c], [_shift_motion(Ap, d) + c])
    else:
        raise ValueError(kind)
    _TEMPLATES[key] = f
    return f
