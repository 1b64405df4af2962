"""Base classes of 3D multibody components (frames, edges of the mechanism graph).

A multibody component declares ``Frame`` ports and ``mb_edges``: its edges in the
*mechanism graph*, whose vertices are frame connection sets and whose datum is the world
frame. The edge roles follow the chapter (Richard 2012, section 2): rigid arms, joints
(with coordinates), bodies (inertial edge from the datum), force elements. The spanning tree
is chosen in the chapter's order; the coordinates of tree edges are the *branch
coordinates*; every cotree joint contributes constraint equations.

A component with coordinates implements :meth:`MultibodyComponent.tree_motion` (its
relative motion as a function of its own coordinates, used when it is a tree branch) and
:meth:`MultibodyComponent.cut` (its definitions and constraints when it is a chord).
Forces enter through :meth:`MultibodyComponent.wrenches` (world-frame force and moment at
a frame), and the equations of motion follow from the principle of virtual power.
"""

from __future__ import annotations

import enum
import functools
from dataclasses import dataclass, field
from typing import Any

import casadi as cs

from ..component import Component
from ..domain_passes import register_domain_pass
from ..domains import Domain, Quantity

__all__ = ["inertia_problem", "inertia_implausible", "FrameDomain", "Frame", "EdgeRole",
           "MBEdge", "MBPriority", "Kinematics", "TreeMotion", "Coordinates", "CutEquations",
           "MultibodyComponent"]

FrameDomain = Domain(
    "frame",
    Quantity("r", "m", 3, doc="position of the frame origin in the world frame"),
    Quantity("f", "N", 3, doc="cut force (world coordinates)"),
    datum="world frame",
    datum_component="components.multibody.World",
    graph=False,
    # (what the mechanism pass binds on every frame port, Mechanism.assemble)
    outputs=(Quantity("R", "1", 9, doc="orientation: frame axes in world coordinates, "
                      "column-major"),
             Quantity("v", "m/s", 3, doc="velocity of the origin (world coordinates)"),
             Quantity("w", "rad/s", 3, doc="angular velocity (world coordinates)"),
             Quantity("a", "m/s2", 3, doc="acceleration of the origin (world coordinates)"),
             Quantity("z", "rad/s2", 3, doc="angular acceleration (world coordinates)")),
)
register_domain_pass(FrameDomain, "acausal.multibody.mechanism", "Mechanism")

#: Relative tolerance of :func:`inertia_problem` and :func:`inertia_implausible`, of the
#: trace: values rounded to 6 or 7
#: significant digits (a CAD listing, a handbook) can break an equality case (a thin rod or
#: a flat plate, ``I_33 = I_11 + I_22``) by ~1e-7 of the trace; beyond 1e-6 of it an entry
#: is wrong, not rounded.
INERTIA_RTOL = 1e-6


def _principal_moments(J: Any) -> tuple[Any, float, str]:
    import numpy as np

    lam = np.linalg.eigvalsh(np.asarray(J, dtype=float))
    return lam, INERTIA_RTOL * float(np.sum(np.abs(lam))), ", ".join(f"{x:.6g}" for x in lam)


def inertia_problem(J: Any) -> str | None:
    """What makes a 3x3 inertia tensor about the centre of mass impossible, or None: not
    symmetric, or a negative principal moment (a negative kinetic energy for some
    rotation; to :data:`INERTIA_RTOL` of the trace)."""
    import numpy as np

    return _inertia_problem(tuple(np.asarray(J, dtype=float).ravel().tolist()))


@functools.lru_cache(maxsize=4096)
def _inertia_problem(entries: tuple[float, ...]) -> str | None:
    """:func:`inertia_problem` of the tensor of these 9 entries, row after row (once per
    tensor: the bodies of a chain share theirs, and each body is checked when it is made
    and when its model is built, 0.1 ms a time)."""
    import numpy as np

    J = np.reshape(entries, (3, 3))
    if not np.allclose(J, J.T, rtol=0.0, atol=1e-12 * max(1.0, float(np.abs(J).max()))):
        return "the inertia tensor is not symmetric"
    lam, tol, moments = _principal_moments(J)
    if lam[0] < -tol:
        return (f"the inertia tensor has the principal moments ({moments}) kg.m2, one "
                "negative: no mass distribution has it (an inertia tensor is positive "
                "semi-definite). Check the products of inertia, which are the tensor's "
                "off-diagonal entries (-integral of x y dm, ...), and their signs")
    return None


def inertia_implausible(J: Any) -> str | None:
    """Why a positive semi-definite inertia tensor belongs to no mass distribution, or
    None: its principal moments ``A <= B <= C`` break the triangle inequality ``C <= A +
    B`` (``A + B - C = 2 int z^2 dm`` along the principal axes), to :data:`INERTIA_RTOL`
    of the trace, so that a thin rod or a flat plate given with rounded values passes.
    The motion it gives is well defined (and right for a planar motion about the axis of
    ``C``, which only sees ``C``), so this is a warning, not an error."""
    lam, tol, moments = _principal_moments(J)
    if lam[2] > lam[0] + lam[1] + tol:
        return (f"the inertia tensor has the principal moments ({moments}) kg.m2: the "
                f"largest exceeds the sum of the other two ({lam[0] + lam[1]:.6g}), which no "
                "mass distribution allows (the triangle inequality: I_33 <= I_11 + I_22 "
                "along principal axes, equal for a flat plate). Only a planar motion about "
                "the axis of the largest moment is right with it; give all three moments "
                "(a slender rod along x: I_11 = 0, I_22 = I_33)")
    return None


def Frame(doc: str = "") -> Any:
    """A 3D frame port declaration (position ``r`` and orientation ``R`` in the world)."""
    from ..component import Port

    return Port(FrameDomain, doc)


class MBPriority:
    """Tree order of the chapter: arms, (drivers), spherical/revolute,
    cylindrical/prismatic, bodies, force actuators (lower enters the tree first). Drivers
    are 1D position/speed sources on a joint's axis flange, so the joint's own priority
    places them."""

    WORLD = 0
    ARM = 1
    REVOLUTE = 3
    SPHERICAL = 3
    PRISMATIC = 4
    CYLINDRICAL = 4
    OTHER_JOINT = 5
    BODY = 6
    FORCE = 7


class EdgeRole(enum.Enum):
    """What an edge of the mechanism graph is (the chapter's edge types)."""

    WORLD = "world"  # datum -> world frame
    ARM = "arm"  # rigid (or elastic attachment) offset between two frames of one body
    JOINT = "joint"  # relative motion with joint coordinates
    BODY = "body"  # inertial edge from the datum (d'Alembert forces)
    FORCE = "force"  # applied forces only: never a tree branch


@dataclass(frozen=True)
class MBEdge:
    """An edge of the mechanism graph: ``initial``/``final`` are frame ports or ``DATUM``."""

    initial: Any
    final: Any
    priority: int
    role: EdgeRole


@dataclass
class Kinematics:
    """Pose and motion of one frame in world coordinates."""

    r: cs.SX
    R: cs.SX
    v: cs.SX
    w: cs.SX
    a: cs.SX | None = None
    z: cs.SX | None = None  # angular acceleration
    Q: cs.SX | None = None  # orientation quaternion (w, x, y, z) where the tree gives one


@dataclass
class TreeMotion:
    """Motion of the final frame relative to the initial frame, in initial-frame coordinates,
    as functions of the edge's coordinates ``q`` and speeds ``u``."""

    q: list[cs.SX]
    u: list[cs.SX]
    qdot: cs.SX  # dq/dt = N(q) u
    r_rel: cs.SX
    R_rel: cs.SX
    v_rel: cs.SX  # d(r_rel)/dt expressed in the initial frame
    w_rel: cs.SX  # relative angular velocity expressed in the initial frame
    Q_rel: cs.SX | None = None  # unit quaternion of R_rel (optional; smooth in q)


@dataclass
class Coordinates:
    """Coordinates owned by a component itself (not by one of its edges): the elastic
    coordinates of a flexible body, a mass sliding inside a part. ``qdot = N(q) u``."""

    q: list[cs.SX]
    u: list[cs.SX]
    qdot: cs.SX


@dataclass
class CutEquations:
    """What a chord contributes: equations defining its own variables from the frames'
    kinematics, and constraint residuals (projected circuit equations) with labels."""

    definitions: list[Any] = field(default_factory=list)
    constraints: list[cs.SX] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)


class MultibodyComponent(Component):
    """Base of components with frame ports (see the module documentation)."""

    mb_edges: list[MBEdge] = []

    def tree_motion(self) -> TreeMotion:
        """Relative motion when this component's edge is a tree branch."""
        raise NotImplementedError(f"{type(self).__name__} cannot be a tree branch")

    def cut(self, ka: Kinematics, kb: Kinematics) -> CutEquations:
        """Definitions and constraints when this component's edge is a chord."""
        return CutEquations()

    def wrenches(self, kin: dict[str, Kinematics], gravity: cs.SX) -> list[tuple[str, cs.SX,
                                                                              cs.SX]]:
        """Applied ``(frame port, force, moment)`` in world coordinates (d'Alembert forces
        of bodies included)."""
        return []

    def wrench_parts(self, kin: dict[str, Kinematics], gravity: cs.SX
                     ) -> list[tuple[str, cs.SX, cs.SX]] | None:
        """Optional: the wrenches of :meth:`wrenches` written ``[F; M] = -M_v A + b_v``
        with ``A = [a; z]`` the frame's acceleration, as ``(frame port, M_v (6 x 6), b_v
        (6))``, both free of accelerations. The recursive (articulated-body) dynamics
        then takes them as they are; without them (None, the default) it derives them
        from :meth:`wrenches` (a directional derivative over every frame). They must
        agree with :meth:`wrenches`, which the virtual-power form uses."""
        return None

    def internal_motion(self) -> Coordinates | None:
        """Coordinates of the component itself (the extension point for flexible bodies:
        their elastic coordinates; the relative motion of their attachment-frame edges may
        depend on them)."""
        return None

    def generalized_forces(self, kin: dict[str, Kinematics],
                           gravity: cs.SX) -> list[tuple[cs.SX, cs.SX]]:
        """``(speeds, forces)`` conjugate to the speeds of :meth:`internal_motion`
        (elastic, inertial and applied), added to the virtual power as ``Q . du``."""
        return []

    def result_outputs(self, kin: dict[str, Kinematics]) -> dict[str, cs.SX]:
        """Extra results of the component, ``{local name: expression}`` of its frames'
        kinematics and its own variables; addressed as ``res["<component path>.<name>"]``
        (a flexible body's node displacements and stress resultants). Optional."""
        return {}

    def result_unit(self, name: str) -> str | None:
        """The unit of the extra result ``name`` of :meth:`result_outputs` (for
        ``res.unit``), or None where not known."""
        return None
