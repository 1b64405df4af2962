"""3D rigid multibody components: world, bodies, arms, joints, force elements.

Frames ``frame_a``/``frame_b`` carry the position ``r`` [m] of their origin and the
orientation ``R`` (frame to world rotation matrix) in the world frame, with velocity ``v``,
angular velocity ``w``, acceleration ``a`` and angular acceleration ``z`` (world
coordinates): ``res["body.frame_a.r"]`` is an ``(nt, 3)`` array, ``res["body.frame_a.R"]``
an ``(nt, 9)`` array (column-major 3x3). See :mod:`acausal.multibody.mechanism` for the
formulation (branch coordinates, cotree joints as constraints, virtual power).

Joints take their axis ``n`` in ``frame_a`` coordinates; their coordinates (``phi``, ``w``,
``a`` for a revolute; ``s``, ``v``, ``a`` for a prismatic) accept ``start``/``fixed`` like any
variable. Revolute and Prismatic with ``use_axis_flange=True`` expose a 1D flange ``axis``
(rotational / translational) whose cut torque/force drives the joint, so 1D components
(motors, gears, springs, position sources as drivers) act on it.
"""

from __future__ import annotations

import casadi as cs
import numpy as np

import acausal as ac
from acausal import DATUM, Edge, Parameter, Port, TreePriority, Variable, der
from acausal.domains import Rotational, Translational
from acausal.multibody.base import (
    CutEquations,
    EdgeRole,
    Frame,
    Kinematics,
    MBEdge,
    MBPriority,
    MultibodyComponent,
    TreeMotion,
    inertia_problem,
)
from acausal.multibody.constraints import orientation_constraints, position_constraints
from acausal.multibody.rotations import (
    axis_motion,
    axis_quat,
    axis_rotation,
    matrix_to_quat,
    perpendicular_basis,
    quat_normalized,
    quat_product,
    quat_rate,
    quat_to_matrix,
    unit,
)

__all__ = [
    "World", "FreeFlyingBody", "Body", "FixedTranslation", "FixedRotation", "Revolute", "Prismatic",
    "Spherical", "Universal", "Cylindrical", "Planar", "Weld", "FreeMotion", "Spring",
    "Damper", "SpringDamper", "WorldForce", "WorldTorque",
]

_X, _Y, _Z = np.eye(3)
_Q_ID = cs.SX(cs.DM([1.0, 0.0, 0.0, 0.0]))  # the identity rotation's quaternion


def _vec(value) -> np.ndarray:
    return np.asarray(value, dtype=float).reshape(3)


def _const(value) -> cs.SX:
    """A constant 3-vector as a (dense) SX column (from a list: one CasADi call)."""
    return cs.SX(_vec(value).tolist())


def _rel_angle(ka: Kinematics, kb: Kinematics, n: np.ndarray) -> cs.SX:
    e1, e2 = perpendicular_basis(n)
    Rr = ka.R.T @ kb.R
    return cs.atan2(cs.dot(e2, Rr @ e1), cs.dot(e1, Rr @ e1))


class World(MultibodyComponent):
    """The inertial frame (datum of the mechanism graph) and the gravity field.

    Parameters
    ----------
    g : gravity acceleration vector in the world frame [m/s2] (default 9.81 along -y)
    dynamics : how the mechanism's equations of motion are written (constructor option):
        ``"auto"`` (default) the recursive articulated-body form where the mechanism
        allows it, the virtual-power form otherwise; ``"recursive"`` (an error where it
        cannot be used) or ``"virtual_power"`` to force one (see docs/multibody.md)
    """

    g = Parameter([0.0, -9.81, 0.0], unit="m/s2", doc="gravity vector", structural=True, shape=(3,))
    frame_b = Frame("the world frame")
    mb_edges = [MBEdge(DATUM, "frame_b", MBPriority.WORLD, EdgeRole.WORLD)]
    is_world = True
    DYNAMICS = ("auto", "recursive", "virtual_power")

    def __init__(self, dynamics: str = "auto", **kwargs):
        if dynamics not in self.DYNAMICS:
            raise ac.ModelDefinitionError(
                f"World(dynamics={dynamics!r}): use one of {', '.join(self.DYNAMICS)}")
        self.__dict__["dynamics"] = dynamics
        super().__init__(**kwargs)

    def tree_motion(self) -> TreeMotion:
        z = cs.SX.zeros(3)
        return TreeMotion([], [], cs.SX(0, 1), z, cs.SX.eye(3), z, z, _Q_ID)

    def cut(self, ka, kb) -> CutEquations:
        c1, l1 = position_constraints(ka, kb)
        c2, l2 = orientation_constraints(ka, kb)
        return CutEquations([], c1 + c2, l1 + l2)


class FreeFlyingBody(MultibodyComponent):
    """Partial body: the inertial edge datum -> ``frame_a`` and its free flight.

    When the body edge is a tree branch (no joint holds the body), ``frame_a`` flies free
    with coordinates ``r_0``, ``Q`` (unit quaternion, no gimbal lock) and speeds ``v_0``,
    ``w_a``; when it is a chord, these variables are defined from the frame's motion.
    Rigid and flexible bodies extend it with their mass properties and wrenches.

    Variables
    ---------
    r_0 : position of frame_a [m]; v_0 : its velocity [m/s] (world); Q : orientation
    quaternion (w, x, y, z); w_a : angular velocity in frame_a coordinates [rad/s]
    """

    frame_a = Frame("body frame")
    r_0 = Variable(size=3, unit="m", doc="position of frame_a in the world")
    v_0 = Variable(size=3, unit="m/s", doc="velocity of frame_a in the world")
    Q = Variable(size=4, start=[1.0, 0.0, 0.0, 0.0], unit="1",
                 doc="orientation quaternion of frame_a (w, x, y, z)")
    w_a = Variable(size=3, unit="rad/s", doc="angular velocity, frame_a coordinates")
    mb_edges = [MBEdge(DATUM, "frame_a", MBPriority.BODY, EdgeRole.BODY)]

    def tree_motion(self) -> TreeMotion:
        R = quat_to_matrix(self.Q)
        q = cs.vertsplit(self.r_0) + cs.vertsplit(self.Q)
        u = cs.vertsplit(self.v_0) + cs.vertsplit(self.w_a)
        qdot = cs.vertcat(self.v_0, quat_rate(self.Q, self.w_a))
        return TreeMotion(q, u, qdot, self.r_0, R, self.v_0, R @ self.w_a,
                          quat_normalized(self.Q))

    def cut(self, ka, kb) -> CutEquations:
        Q = kb.Q if kb.Q is not None else matrix_to_quat(kb.R)  # smooth where the tree
        return CutEquations([self.r_0 == kb.r, self.v_0 == kb.v,  # gives it
                             self.Q == Q, self.w_a == kb.R.T @ kb.w])


class Body(FreeFlyingBody):
    """Rigid body with mass, centre of mass and inertia tensor, attached at ``frame_a``.

    In the graph: an inertial (d'Alembert) edge from the datum to ``frame_a``. When that edge
    is a tree branch (no joint holds the body) the body flies free with coordinates ``r_0``,
    ``Q`` (unit quaternion, no gimbal lock) and speeds ``v_0``, ``w_a``.

    Parameters
    ----------
    m : mass [kg]
    r_CM : centre of mass in frame_a [m]
    I_11, I_22, I_33, I_21, I_31, I_32 : inertia tensor about the centre of mass, in frame_a
        axes [kg.m2]

    Variables
    ---------
    r_0 : position of frame_a [m]; v_0 : its velocity [m/s] (world); Q : orientation
    quaternion (w, x, y, z); w_a : angular velocity in frame_a coordinates [rad/s]
    """

    m = Parameter(1.0, unit="kg", doc="mass", min=0.0, min_inclusive=False)
    r_CM = Parameter([0.0, 0.0, 0.0], unit="m", doc="centre of mass in frame_a",
                     structural=True, shape=(3,))
    I_11 = Parameter(0.001, unit="kg.m2", doc="inertia about x through the centre of mass",
                     min=0.0)
    I_22 = Parameter(0.001, unit="kg.m2", doc="inertia about y through the centre of mass",
                     min=0.0)
    I_33 = Parameter(0.001, unit="kg.m2", doc="inertia about z through the centre of mass",
                     min=0.0)
    I_21 = Parameter(0.0, unit="kg.m2", doc="product of inertia xy")
    I_31 = Parameter(0.0, unit="kg.m2", doc="product of inertia xz")
    I_32 = Parameter(0.0, unit="kg.m2", doc="product of inertia yz")

    def check_parameters(self, p):
        """The inertia tensor must be positive semi-definite. (A tensor that breaks the
        triangle inequality is accepted without a word: giving only ``I_33`` for a link of
        a planar mechanism, with the small defaults of the other two, is common and right
        for that motion; :func:`acausal.multibody.base.inertia_implausible` says why.)"""
        I = [getattr(p, k) for k in ("I_11", "I_22", "I_33", "I_21", "I_31", "I_32")]
        if not all(isinstance(v, (int, float)) for v in I):
            return None
        I11, I22, I33, I21, I31, I32 = (float(v) for v in I)
        bad = inertia_problem([[I11, I21, I31], [I21, I22, I32], [I31, I32, I33]])
        if bad is None:
            return None
        return bad + (f" (I_11, I_22, I_33 = {I11:g}, {I22:g}, {I33:g}; I_21, I_31, I_32 = "
                      f"{I21:g}, {I31:g}, {I32:g})")

    def inertia(self) -> cs.SX:
        return cs.vertcat(
            cs.horzcat(self.I_11, self.I_21, self.I_31),
            cs.horzcat(self.I_21, self.I_22, self.I_32),
            cs.horzcat(self.I_31, self.I_32, self.I_33),
        )

    def wrenches(self, kin, gravity):
        k = kin["frame_a"]
        # (a CasADi function projects its arguments on their dense shapes itself)
        F, M = _BODY_WRENCH(k.R, k.w, k.a, k.z, gravity, self.m, _vec(self.r_CM), self.I_11,
                            self.I_22, self.I_33, self.I_21, self.I_31, self.I_32)
        return [("frame_a", F, M)]

    def wrench_parts(self, kin, gravity):
        k = kin["frame_a"]
        Mv, b = _BODY_WRENCH_PARTS(k.R, k.w, gravity, self.m, _vec(self.r_CM), self.I_11,
                                   self.I_22, self.I_33, self.I_21, self.I_31, self.I_32)
        return [("frame_a", Mv, b)]


def _body_wrench() -> cs.Function:
    """``(R, w, a, z, g, m, r_CM, I_11, I_22, I_33, I_21, I_31, I_32) -> (F, M)``: gravity
    and d'Alembert wrench of a rigid body at its frame (world axes; a CasADi function
    inlined for every body: one call, the inertia tensor assembled inside)."""
    R = cs.SX.sym("R", 3, 3)
    w, a, z, g, r_CM = (cs.SX.sym(n, 3) for n in ("w", "a", "z", "g", "r_CM"))
    m = cs.SX.sym("m")
    Ik = [cs.SX.sym(n) for n in ("I_11", "I_22", "I_33", "I_21", "I_31", "I_32")]
    I11, I22, I33, I21, I31, I32 = Ik
    I = cs.vertcat(cs.horzcat(I11, I21, I31), cs.horzcat(I21, I22, I32),
                   cs.horzcat(I31, I32, I33))
    rc = R @ r_CM
    a_cm = a + cs.cross(z, rc) + cs.cross(w, cs.cross(w, rc))
    F = m * (g - a_cm)
    Iw = R @ I @ R.T
    M = -(Iw @ z + cs.cross(w, Iw @ w)) + cs.cross(rc, F)
    return cs.Function("body_wrench", [R, w, a, z, g, m, r_CM, *Ik], [F, M])


_BODY_WRENCH = _body_wrench()


def _body_wrench_parts() -> cs.Function:
    """``(R, w, g, m, r_CM, I_11, ..., I_32) -> (M, b)``: the body wrench
    ``[F; M] = -M [a; z] + b`` (:func:`_body_wrench`, which is affine in ``a`` and ``z``):
    ``M`` its derivative with respect to ``[a; z]``, negated, ``b`` its value at zero
    acceleration; derived from the same function once."""
    syms = [cs.SX.sym(f"x{i}", _BODY_WRENCH.size_in(i)) for i in range(_BODY_WRENCH.n_in())]
    W = cs.vertcat(*_BODY_WRENCH(*syms))
    A = cs.vertcat(syms[2], syms[3])  # (a, z)
    rest = [x for i, x in enumerate(syms) if i not in (2, 3)]
    return cs.Function("body_wrench_parts", rest,
                       [-cs.jacobian(W, A), cs.substitute(W, A, cs.SX.zeros(6))])


_BODY_WRENCH_PARTS = _body_wrench_parts()


class _TwoFrames(MultibodyComponent):
    frame_a = Frame("frame a")
    frame_b = Frame("frame b")


class FixedTranslation(_TwoFrames):
    """Rigid arm: ``frame_b`` is ``frame_a`` shifted by ``r`` (frame_a coordinates).

    Parameters
    ----------
    r : vector from frame_a to frame_b in frame_a [m]
    """

    r = Parameter([0.0, 0.0, 0.0], unit="m", doc="arm vector in frame_a",
                  structural=True, shape=(3,))
    mb_edges = [MBEdge("frame_a", "frame_b", MBPriority.ARM, EdgeRole.ARM)]

    def tree_motion(self) -> TreeMotion:
        z = cs.SX.zeros(3)
        return TreeMotion([], [], cs.SX(0, 1), _const(self.r), cs.SX.eye(3), z, z,
                          _Q_ID)

    def cut(self, ka, kb) -> CutEquations:
        c1, l1 = position_constraints(ka, kb, _vec(self.r))
        c2, l2 = orientation_constraints(ka, kb)
        return CutEquations([], c1 + c2, l1 + l2)


class FixedRotation(_TwoFrames):
    """Rigid arm with a rotation: shift ``r``, then rotation by ``angle`` about ``n``.

    Parameters
    ----------
    r : shift in frame_a [m]; n : rotation axis in frame_a [1]; angle : rotation angle [rad]
    """

    r = Parameter([0.0, 0.0, 0.0], unit="m", doc="shift in frame_a", structural=True, shape=(3,))
    n = Parameter([0.0, 0.0, 1.0], unit="1", doc="rotation axis in frame_a",
                  structural=True, shape=(3,), direction=True)
    angle = Parameter(0.0, unit="rad", doc="rotation angle", structural=True)
    mb_edges = [MBEdge("frame_a", "frame_b", MBPriority.ARM, EdgeRole.ARM)]

    def _R(self) -> cs.DM:
        return cs.DM(cs.evalf(axis_rotation(unit(self.n), float(self.angle))))

    def tree_motion(self) -> TreeMotion:
        z = cs.SX.zeros(3)
        return TreeMotion([], [], cs.SX(0, 1), _const(self.r), cs.SX(self._R()), z, z,
                          axis_quat(unit(self.n), float(self.angle)))

    def cut(self, ka, kb) -> CutEquations:
        c1, l1 = position_constraints(ka, kb, _vec(self.r))
        c2, l2 = orientation_constraints(ka, kb, self._R())
        return CutEquations([], c1 + c2, l1 + l2)


class _AxisJoint(_TwoFrames):
    """Partial joint with optional 1D flanges ``axis`` (its cut torque or force drives the
    joint; its reaction acts on ``frame_a``) and ``support`` (the drive housing, fixed in the
    world as in the Modelica library: 1D components between ``axis`` and ``support`` act on
    the joint's relative coordinate)."""

    def __init__(self, use_axis_flange: bool = False, **kwargs):
        self.__dict__["use_axis_flange"] = use_axis_flange
        self.__dict__["edges"] = (
            [Edge(DATUM, "axis"), Edge(DATUM, "support", TreePriority.ACROSS_SOURCE)]
            if use_axis_flange else [])
        super().__init__(**kwargs)

    def _check_not_cut(self) -> None:
        if self.use_axis_flange:
            raise ac.TopologyError(
                f"{self._describe()} has an axis flange but closes a kinematic loop; make it "
                "a tree joint with build(model, tree=[...]) and cut another joint"
            )


class Revolute(_AxisJoint):
    """Revolute joint: rotation ``phi`` about ``n`` (frame_a coordinates).

    Parameters
    ----------
    n : axis of rotation in frame_a [1]
    use_axis_flange : expose the 1D rotational flange ``axis`` (driving torque)

    Variables
    ---------
    phi : joint angle [rad]; w : joint speed [rad/s]; a : joint acceleration [rad/s2]
    """

    n = Parameter([0.0, 0.0, 1.0], unit="1", doc="axis of rotation in frame_a",
                  structural=True, shape=(3,), direction=True)
    phi = Variable(unit="rad", doc="relative rotation angle")
    w = Variable(unit="rad/s", doc="relative angular velocity")
    a = Variable(unit="rad/s2", doc="relative angular acceleration")
    axis = Port(Rotational, "1D flange driving the joint (use_axis_flange=True)")
    support = Port(Rotational, "1D drive housing, fixed in the world (use_axis_flange=True)")
    mb_edges = [MBEdge("frame_a", "frame_b", MBPriority.REVOLUTE, EdgeRole.JOINT)]
    n_dof = 1

    def equations(self):
        eqs = [self.a == der(self.w)]
        if self.use_axis_flange:
            eqs += [self.axis.phi == self.phi, self.support.phi == 0]
        return eqs

    def tree_motion(self) -> TreeMotion:
        R, w_rel, Q = axis_motion(self.n)(self.phi, self.w)
        z = cs.SX.zeros(3)
        return TreeMotion([self.phi], [self.w], self.w, z, R, z, w_rel, Q)

    def cut(self, ka, kb) -> CutEquations:
        self._check_not_cut()
        n = unit(self.n)
        e1, e2 = perpendicular_basis(n)
        nw = ka.R @ n
        c1, l1 = position_constraints(ka, kb)
        c2 = [cs.dot(nw, kb.R @ e1), cs.dot(nw, kb.R @ e2)]
        defs = [self.phi == _rel_angle(ka, kb, n), self.w == cs.dot(nw, kb.w - ka.w)]
        return CutEquations(defs, c1 + c2, l1 + ["axis alignment 1", "axis alignment 2"])

    def wrenches(self, kin, gravity):
        if not self.use_axis_flange:
            return []
        nw = kin["frame_a"].R @ unit(self.n)
        tau = self.axis.tau
        return [("frame_b", cs.SX.zeros(3), tau * nw), ("frame_a", cs.SX.zeros(3), -tau * nw)]


class Prismatic(_AxisJoint):
    """Prismatic joint: translation ``s`` along ``n`` (frame_a coordinates).

    Parameters
    ----------
    n : direction of translation in frame_a [1]
    use_axis_flange : expose the 1D translational flange ``axis`` (driving force)

    Variables
    ---------
    s : joint displacement [m]; v : joint velocity [m/s]; a : joint acceleration [m/s2]
    """

    n = Parameter([1.0, 0.0, 0.0], unit="1", doc="direction of translation in frame_a",
                  structural=True, shape=(3,), direction=True)
    s = Variable(unit="m", doc="relative displacement")
    v = Variable(unit="m/s", doc="relative velocity")
    a = Variable(unit="m/s2", doc="relative acceleration")
    axis = Port(Translational, "1D flange driving the joint (use_axis_flange=True)")
    support = Port(Translational, "1D drive housing, fixed in the world "
                   "(use_axis_flange=True)")
    mb_edges = [MBEdge("frame_a", "frame_b", MBPriority.PRISMATIC, EdgeRole.JOINT)]
    n_dof = 1

    def equations(self):
        eqs = [self.a == der(self.v)]
        if self.use_axis_flange:
            eqs += [self.axis.s == self.s, self.support.s == 0]
        return eqs

    def tree_motion(self) -> TreeMotion:
        n = cs.DM(unit(self.n))
        z = cs.SX.zeros(3)
        return TreeMotion([self.s], [self.v], cs.SX(self.v), n * self.s, cs.SX.eye(3),
                          n * self.v, z, _Q_ID)

    def cut(self, ka, kb) -> CutEquations:
        self._check_not_cut()
        n = unit(self.n)
        e1, e2 = perpendicular_basis(n)
        d = kb.r - ka.r
        c1 = [cs.dot(d, ka.R @ e1), cs.dot(d, ka.R @ e2)]
        c2, l2 = orientation_constraints(ka, kb)
        nw = ka.R @ n
        defs = [self.s == cs.dot(d, nw),
                self.v == cs.dot(nw, kb.v - ka.v - cs.cross(ka.w, d))]
        return CutEquations(defs, c1 + c2, ["position 1", "position 2"] + l2)

    def wrenches(self, kin, gravity):
        if not self.use_axis_flange:
            return []
        nw = kin["frame_a"].R @ unit(self.n)
        f = self.axis.f
        ka, kb = kin["frame_a"], kin["frame_b"]
        d = kb.r - ka.r
        return [("frame_b", f * nw, cs.SX.zeros(3)),
                ("frame_a", -f * nw, -cs.cross(d, f * nw))]


class Spherical(_TwoFrames):
    """Spherical (ball) joint: relative rotation by the unit quaternion ``Q``.

    Variables
    ---------
    Q : relative orientation quaternion (w, x, y, z); w_rel : relative angular velocity in
    frame_b coordinates [rad/s]
    """

    Q = Variable(size=4, start=[1.0, 0.0, 0.0, 0.0], unit="1",
                 doc="relative orientation quaternion (w, x, y, z)")
    w_rel = Variable(size=3, unit="rad/s", doc="relative angular velocity, frame_b coordinates")
    mb_edges = [MBEdge("frame_a", "frame_b", MBPriority.SPHERICAL, EdgeRole.JOINT)]
    n_dof = 3

    def tree_motion(self) -> TreeMotion:
        R = quat_to_matrix(self.Q)
        z = cs.SX.zeros(3)
        return TreeMotion(cs.vertsplit(self.Q), cs.vertsplit(self.w_rel),
                          quat_rate(self.Q, self.w_rel), z, R, z, R @ self.w_rel,
                          quat_normalized(self.Q))

    def cut(self, ka, kb) -> CutEquations:
        c, lab = position_constraints(ka, kb)
        defs = [self.Q == matrix_to_quat(ka.R.T @ kb.R), self.w_rel == kb.R.T @ (kb.w - ka.w)]
        return CutEquations(defs, c, lab)


class Universal(_TwoFrames):
    """Universal (Cardan) joint: rotation ``phi_a`` about ``n_a`` then ``phi_b`` about ``n_b``.

    Parameters
    ----------
    n_a : first axis in frame_a [1]; n_b : second axis in frame_b [1] (perpendicular)

    Variables
    ---------
    phi_a, phi_b : joint angles [rad]; w_a, w_b : joint speeds [rad/s]
    """

    n_a = Parameter([1.0, 0.0, 0.0], unit="1", doc="first axis in frame_a",
                    structural=True, shape=(3,), direction=True)
    n_b = Parameter([0.0, 1.0, 0.0], unit="1", doc="second axis in frame_b",
                    structural=True, shape=(3,), direction=True)
    phi_a = Variable(unit="rad", doc="angle about n_a")
    phi_b = Variable(unit="rad", doc="angle about n_b")
    w_a = Variable(unit="rad/s", doc="speed about n_a")
    w_b = Variable(unit="rad/s", doc="speed about n_b")
    mb_edges = [MBEdge("frame_a", "frame_b", MBPriority.OTHER_JOINT, EdgeRole.JOINT)]
    n_dof = 2

    #: |cos| of the angle between the axes accepted as perpendicular: 1e-6 (unit
    #: vectors written with 6 or more digits; a loop closed by a cut universal joint misses
    #: by about this much, the loop-closure tolerance of the mechanism pass)
    PERPENDICULAR_TOL = 1e-6

    def check_parameters(self, p):
        na, nb = p.n_a, p.n_b
        if na is None or nb is None or callable(na) or callable(nb):
            return None
        ua = np.asarray(na, float) / np.linalg.norm(na)
        ub = np.asarray(nb, float) / np.linalg.norm(nb)
        c = float(np.dot(ua, ub))
        if abs(c) <= self.PERPENDICULAR_TOL:
            return None
        angle = np.degrees(np.arccos(np.clip(c, -1.0, 1.0)))
        why = ("parallel: the joint would turn twice about one axis and have no second "
               "freedom" if abs(c) > 1 - 1e-12 else f"at {angle:.4g} deg")
        return (f"the axes n_a = {list(na)} (frame_a) and n_b = {list(nb)} (frame_b, the "
                f"same directions at zero angles) must be perpendicular; they are {why}. "
                "Give n_b perpendicular to n_a (e.g. n_a = [1, 0, 0], n_b = [0, 1, 0])")

    def tree_motion(self) -> TreeMotion:
        na, nb = unit(self.n_a), unit(self.n_b)
        Ra = axis_rotation(na, self.phi_a)
        z = cs.SX.zeros(3)
        w_rel = cs.DM(na) * self.w_a + Ra @ nb * self.w_b
        return TreeMotion([self.phi_a, self.phi_b], [self.w_a, self.w_b],
                          cs.vertcat(self.w_a, self.w_b), z, Ra @ axis_rotation(nb, self.phi_b),
                          z, w_rel, quat_product(axis_quat(na, self.phi_a),
                                                 axis_quat(nb, self.phi_b)))

    def cut(self, ka, kb) -> CutEquations:
        na, nb = unit(self.n_a), unit(self.n_b)
        c, lab = position_constraints(ka, kb)
        naw, nbw = ka.R @ na, kb.R @ nb
        Rr = ka.R.T @ kb.R
        f = np.cross(na, nb)
        defs = [
            self.phi_a == cs.atan2(cs.dot(f, Rr @ nb), cs.dot(nb, Rr @ nb)),
            self.phi_b == cs.atan2(-cs.dot(np.cross(nb, na), Rr.T @ na), cs.dot(na, Rr.T @ na)),
            self.w_a == cs.dot(naw, kb.w - ka.w),
            self.w_b == cs.dot(nbw, kb.w - ka.w),
        ]
        return CutEquations(defs, c + [cs.dot(naw, nbw)], lab + ["axes perpendicular"])


class Cylindrical(_TwoFrames):
    """Cylindrical joint: rotation ``phi`` about and translation ``s`` along ``n``.

    Variables
    ---------
    phi [rad], w [rad/s]; s [m], v [m/s]
    """

    n = Parameter([1.0, 0.0, 0.0], unit="1", doc="axis in frame_a",
                  structural=True, shape=(3,), direction=True)
    phi = Variable(unit="rad", doc="rotation angle")
    w = Variable(unit="rad/s", doc="rotation speed")
    s = Variable(unit="m", doc="displacement")
    v = Variable(unit="m/s", doc="velocity")
    mb_edges = [MBEdge("frame_a", "frame_b", MBPriority.CYLINDRICAL, EdgeRole.JOINT)]
    n_dof = 2

    def tree_motion(self) -> TreeMotion:
        n = unit(self.n)
        nd = cs.DM(n)
        return TreeMotion([self.phi, self.s], [self.w, self.v], cs.vertcat(self.w, self.v),
                          nd * self.s, axis_rotation(n, self.phi), nd * self.v, nd * self.w,
                          axis_quat(n, self.phi))

    def cut(self, ka, kb) -> CutEquations:
        n = unit(self.n)
        e1, e2 = perpendicular_basis(n)
        d = kb.r - ka.r
        nw = ka.R @ n
        cons = [cs.dot(d, ka.R @ e1), cs.dot(d, ka.R @ e2), cs.dot(nw, kb.R @ e1),
                cs.dot(nw, kb.R @ e2)]
        defs = [self.phi == _rel_angle(ka, kb, n), self.w == cs.dot(nw, kb.w - ka.w),
                self.s == cs.dot(d, nw), self.v == cs.dot(nw, kb.v - ka.v - cs.cross(ka.w, d))]
        return CutEquations(defs, cons, ["position 1", "position 2", "axis 1", "axis 2"])


class Planar(_TwoFrames):
    """Planar joint: translations ``s_x``, ``s_y`` in the plane normal to ``n`` and rotation
    ``phi`` about ``n``; ``n_x`` fixes the in-plane x direction (frame_a coordinates).

    Variables
    ---------
    s_x, s_y [m], v_x, v_y [m/s], phi [rad], w [rad/s]
    """

    n = Parameter([0.0, 0.0, 1.0], unit="1", doc="plane normal in frame_a",
                  structural=True, shape=(3,), direction=True)
    n_x = Parameter([1.0, 0.0, 0.0], unit="1", doc="in-plane x direction",
                    structural=True, shape=(3,), direction=True)
    s_x = Variable(unit="m", doc="displacement along n_x")
    s_y = Variable(unit="m", doc="displacement along n x n_x")
    v_x = Variable(unit="m/s", doc="velocity along n_x")
    v_y = Variable(unit="m/s", doc="velocity along n x n_x")
    phi = Variable(unit="rad", doc="rotation about n")
    w = Variable(unit="rad/s", doc="rotation speed")
    mb_edges = [MBEdge("frame_a", "frame_b", MBPriority.OTHER_JOINT, EdgeRole.JOINT)]
    n_dof = 3

    def check_parameters(self, p):
        n, nx = p.n, p.n_x
        if n is None or nx is None:
            return None
        un, ux = (np.asarray(v, float) / np.linalg.norm(v) for v in (n, nx))
        # the in-plane part of n_x gives the x direction: |sin| below 1e-6 leaves it to
        # round-off (and exactly parallel, to nothing)
        if np.linalg.norm(ux - np.dot(ux, un) * un) > 1e-6:
            return None
        return (f"parameter 'n_x' = {list(nx)} is parallel to the plane normal n = {list(n)}; "
                "n_x gives the x direction in the plane, so it must not be parallel to n "
                "(e.g. n = [0, 0, 1], n_x = [1, 0, 0])")

    def _basis(self):
        n = unit(self.n)
        ex = unit(np.asarray(self.n_x, float) - np.dot(self.n_x, n) * n)
        return n, ex, np.cross(n, ex)

    def tree_motion(self) -> TreeMotion:
        n, ex, ey = self._basis()
        r = cs.DM(ex) * self.s_x + cs.DM(ey) * self.s_y
        v = cs.DM(ex) * self.v_x + cs.DM(ey) * self.v_y
        return TreeMotion([self.s_x, self.s_y, self.phi], [self.v_x, self.v_y, self.w],
                          cs.vertcat(self.v_x, self.v_y, self.w), r,
                          axis_rotation(n, self.phi), v, cs.DM(n) * self.w,
                          axis_quat(n, self.phi))

    def cut(self, ka, kb) -> CutEquations:
        n, ex, ey = self._basis()
        d = kb.r - ka.r
        nw = ka.R @ n
        cons = [cs.dot(d, nw), cs.dot(nw, kb.R @ ex), cs.dot(nw, kb.R @ ey)]
        vrel = kb.v - ka.v - cs.cross(ka.w, d)
        defs = [self.s_x == cs.dot(d, ka.R @ ex), self.s_y == cs.dot(d, ka.R @ ey),
                self.v_x == cs.dot(vrel, ka.R @ ex), self.v_y == cs.dot(vrel, ka.R @ ey),
                self.phi == _rel_angle(ka, kb, n), self.w == cs.dot(nw, kb.w - ka.w)]
        return CutEquations(defs, cons, ["out of plane", "normal 1", "normal 2"])


class Weld(FixedTranslation):
    """Rigid connection of two frames (a fixed translation of zero)."""


class FreeMotion(_TwoFrames):
    """Six-DOF joint: ``frame_b`` moves freely relative to ``frame_a`` (quaternion
    orientation, no gimbal lock).

    Variables
    ---------
    r_rel [m], v_rel [m/s] (frame_a coordinates); Q (w, x, y, z); w_rel [rad/s] (frame_b)
    """

    r_rel = Variable(size=3, unit="m", doc="position of frame_b in frame_a")
    v_rel = Variable(size=3, unit="m/s", doc="velocity of frame_b in frame_a")
    Q = Variable(size=4, start=[1.0, 0.0, 0.0, 0.0], unit="1", doc="relative quaternion")
    w_rel = Variable(size=3, unit="rad/s", doc="relative angular velocity in frame_b")
    mb_edges = [MBEdge("frame_a", "frame_b", MBPriority.OTHER_JOINT, EdgeRole.JOINT)]
    n_dof = 6

    def tree_motion(self) -> TreeMotion:
        R = quat_to_matrix(self.Q)
        return TreeMotion(cs.vertsplit(self.r_rel) + cs.vertsplit(self.Q),
                          cs.vertsplit(self.v_rel) + cs.vertsplit(self.w_rel),
                          cs.vertcat(self.v_rel, quat_rate(self.Q, self.w_rel)),
                          self.r_rel, R, self.v_rel, R @ self.w_rel, quat_normalized(self.Q))

    def cut(self, ka, kb) -> CutEquations:
        d = kb.r - ka.r
        return CutEquations([
            self.r_rel == ka.R.T @ d,
            self.v_rel == ka.R.T @ (kb.v - ka.v - cs.cross(ka.w, d)),
            self.Q == matrix_to_quat(ka.R.T @ kb.R),
            self.w_rel == kb.R.T @ (kb.w - ka.w),
        ])


class _LineForce(_TwoFrames):
    """Partial: a force ``f`` along the line from frame_a to frame_b (tension positive).

    The force on the frames is given as a vector, ``F = f e`` written without the unit
    vector ``e = d / |d|`` where the law does not need it (``c (s - s_unstretched) e = c
    (d - s_unstretched e)``): a zero-length spring is defined where its ends coincide (a
    0/0 otherwise). Where the direction is needed and the ends coincide, ``F`` is not a
    number and the mechanism pass names the element (:meth:`Mechanism._check_forces`)."""

    s = Variable(unit="m", doc="distance between the frame origins", start=1.0)
    f = Variable(unit="N", doc="force, positive when pulling the frames together")
    mb_edges = [MBEdge("frame_a", "frame_b", MBPriority.FORCE, EdgeRole.FORCE)]

    def _length(self):
        d = self.frame_b.r - self.frame_a.r
        return cs.sqrt(cs.sumsqr(d))

    def _pull(self, d, dv):
        """The force ``f e`` on frame_a (toward frame_b when ``f > 0``) for the
        separation ``d = r_b - r_a`` and its rate ``dv``."""
        raise NotImplementedError

    def wrenches(self, kin, gravity):
        F = self._pull(kin["frame_b"].r - kin["frame_a"].r, kin["frame_b"].v - kin["frame_a"].v)
        z = cs.SX.zeros(3)
        return [("frame_a", F, z), ("frame_b", -F, z)]


def _spring_pull(c, s0, d):
    """``c (|d| - s0) d / |d|`` as ``c d - c s0 d / |d|`` (the second term 0 for ``s0 =
    0``, not 0/0 where ``d = 0``)."""
    k = c * s0
    return c * d - cs.if_else(k == 0, cs.SX.zeros(3), k * d / cs.sqrt(cs.sumsqr(d)))


def _damper_pull(damping, d, dv):
    """``damping (d/dt |d|) d / |d| = damping (d . dv) d / |d|^2`` (0 without damping)."""
    return cs.if_else(damping == 0, cs.SX.zeros(3),
                      damping * cs.dot(d, dv) * d / cs.sumsqr(d))


class Spring(_LineForce):
    """Linear spring between two frame origins ``f = c (s - s_unstretched)``.

    Parameters
    ----------
    c : stiffness [N/m]; s_unstretched : free length [m]
    """

    c = Parameter(1.0, unit="N/m", doc="stiffness", min=0.0)
    s_unstretched = Parameter(0.0, unit="m", doc="unstretched length", min=0.0)

    def equations(self):
        return [self.s == self._length(), self.f == self.c * (self.s - self.s_unstretched)]

    def _pull(self, d, dv):
        return _spring_pull(self.c, self.s_unstretched, d)


class Damper(_LineForce):
    """Linear damper between two frame origins ``f = d ds/dt``.

    Parameters
    ----------
    d : damping [N.s/m]
    """

    d = Parameter(0.0, unit="N.s/m", doc="damping", min=0.0)

    def equations(self):
        return [self.s == self._length(), self.f == self.d * der(self._length())]

    def _pull(self, d, dv):
        return _damper_pull(self.d, d, dv)


class SpringDamper(_LineForce):
    """Spring and damper in parallel between two frame origins.

    Parameters
    ----------
    c : stiffness [N/m]; d : damping [N.s/m]; s_unstretched : free length [m]
    """

    c = Parameter(1.0, unit="N/m", doc="stiffness", min=0.0)
    d = Parameter(0.0, unit="N.s/m", doc="damping", min=0.0)
    s_unstretched = Parameter(0.0, unit="m", doc="unstretched length", min=0.0)

    def equations(self):
        L = self._length()
        return [self.s == L, self.f == self.c * (self.s - self.s_unstretched)
                + self.d * der(L)]

    def _pull(self, d, dv):
        return _spring_pull(self.c, self.s_unstretched, d) + _damper_pull(self.d, d, dv)


class WorldForce(MultibodyComponent):
    """Force applied at the origin of ``frame_b``, given in world coordinates.

    Parameters
    ----------
    force : function of time returning a 3-vector, or a constant 3-vector [N]
    """

    force = Parameter([0.0, 0.0, 0.0], unit="N", doc="force vector (world) or f(t)",
                      structural=True, signal=True, shape=(3,))
    frame_b = Frame("frame the force acts on")
    mb_edges = [MBEdge(DATUM, "frame_b", MBPriority.FORCE, EdgeRole.FORCE)]

    def wrenches(self, kin, gravity):
        F = _signal3(self, "force", "N")
        return [("frame_b", F, cs.SX.zeros(3))]


class WorldTorque(MultibodyComponent):
    """Torque applied to ``frame_b``, given in world coordinates.

    Parameters
    ----------
    torque : function of time returning a 3-vector, or a constant 3-vector [N.m]
    """

    torque = Parameter([0.0, 0.0, 0.0], unit="N.m", doc="torque vector (world) or f(t)",
                       structural=True, signal=True, shape=(3,))
    frame_b = Frame("frame the torque acts on")
    mb_edges = [MBEdge(DATUM, "frame_b", MBPriority.FORCE, EdgeRole.FORCE)]

    def wrenches(self, kin, gravity):
        T = _signal3(self, "torque", "N.m")
        return [("frame_b", cs.SX.zeros(3), T)]


def _signal3(comp: MultibodyComponent, name: str, unit: str) -> cs.SX:
    """A 3-vector parameter given as numbers or as a function of time, evaluated (once, at
    build) as a column; a function whose value is not 3 numbers is named."""
    value = getattr(comp, name)
    if not callable(value):
        return cs.SX(cs.DM(_vec(value)))
    out = value(comp.time)
    try:
        items = (cs.vertsplit(cs.vec(out)) if isinstance(out, (cs.SX, cs.MX, cs.DM))
                 else [cs.SX(x) for x in np.ravel(np.asarray(out, dtype=object))])
        n = len(items)
    except (TypeError, ValueError, NotImplementedError):
        n = -1
    if n != 3:
        count = "" if n < 0 else f" ({n} value)" if n == 1 else f" ({n} values)"
        raise ac.ModelDefinitionError(
            f"{comp._describe()}: parameter {name!r} is a function of time that returned "
            f"{out!r}{count}; it must return 3 numbers [{unit}], the x, y, z components in "
            "world axes (e.g. lambda t: [0, 0, 10 * t])")
    return cs.vertcat(*items)
