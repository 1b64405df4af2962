"""Pin-jointed structures in nodal Cartesian coordinates (Xiang, Wu & Zhou 2015).

Rigid bars and k-node rigid bodies joined by ideal pins, with the Cartesian coordinates of
the nodes as the only unknowns. Every nodal point is a :class:`Node` (its pin ``pin``);
elements connect to nodes by their own pins (``pin_a``/``pin_b`` for two-pin elements,
``pin_1`` ... ``pin_k`` for rigid bodies)::

    self.connect(self.bar.pin_a, self.node1.pin)

Results are addressed by the node: ``res["node5.x"]``, ``.y``, ``.z`` (coordinates),
``.vx``, ``.vy``, ``.vz`` (velocities) and ``.ax``, ``.ay``, ``.az`` (accelerations); a
constraint's multiplier is ``res["<element>.lambda[k]"]`` (see :mod:`acausal.nodal`).

Lengths, the support points and the geometry of rigid bodies are measured in the **start
configuration** given by the nodes' start values, unless given explicitly.
"""

from __future__ import annotations

import warnings
from typing import Any

import casadi as cs
import numpy as np

from acausal import Parameter, Variable
from acausal.component import Guess, Port, PortInstance
from acausal.errors import ModelDefinitionError, ModelWarning
from acausal.multibody.base import inertia_implausible, inertia_problem
from acausal.nodal.base import MassBlock, NodalComponent, Pin, PinDomain, PinState

__all__ = [
    "Node", "Bar", "RigidBody", "Plate", "Support", "PlanarGuide", "ParallelGuide", "Gear",
    "CableForce", "Winch", "Load", "Gravity", "Spring", "Damper", "TwoPin",
]


def _unit(d: cs.SX) -> tuple[cs.SX, cs.SX]:
    length = cs.sqrt(cs.dot(d, d))
    return d / length, length


def _skew(r: Any) -> cs.SX:
    return cs.vertcat(cs.horzcat(0, -r[2], r[1]), cs.horzcat(r[2], 0, -r[0]),
                      cs.horzcat(-r[1], r[0], 0))


# --------------------------------------------------------------------------------------
# Nodes
# --------------------------------------------------------------------------------------


class Node(NodalComponent):
    """A nodal point: three Cartesian coordinates, their rates, and an optional point mass.

    The coordinates given are the **start configuration**; they are always starting
    guesses (the initial configuration is the nearest one that satisfies the constraints,
    and only ``p`` of the ``3 N`` coordinates are independent), so ``Node(x=1.0)`` means
    "starts at x = 1 m" whichever solver runs.

    Ports
    -----
    pin : the nodal point

    Parameters
    ----------
    m : point mass at the node [kg] (>= 0)

    Variables
    ---------
    x, y, z : coordinates [m]; vx, vy, vz : velocities [m/s]
    """

    is_node = True
    m = Parameter(0.0, unit="kg", doc="point mass at the node", min=0.0)
    pin = Pin("the nodal point")
    x = Variable(unit="m", doc="x coordinate")
    y = Variable(unit="m", doc="y coordinate")
    z = Variable(unit="m", doc="z coordinate")
    vx = Variable(unit="m/s", doc="x velocity")
    vy = Variable(unit="m/s", doc="y velocity")
    vz = Variable(unit="m/s", doc="z velocity")

    def __init__(self, **kwargs: Any) -> None:
        # positions and velocities are the start configuration, never over-specified
        # conditions: plain numbers become guesses
        kw = {k: (v if isinstance(v, Guess) or k not in ("x", "y", "z", "vx", "vy", "vz")
                  else Guess(v)) for k, v in kwargs.items()}
        super().__init__(**kw)

    def nodal_mass(self, pins: dict[str, PinState]) -> list[MassBlock]:
        return [MassBlock(["pin"], self.m * cs.SX.eye(3), label="point mass")]


# --------------------------------------------------------------------------------------
# Two-pin elements
# --------------------------------------------------------------------------------------


class TwoPin(NodalComponent):
    """Partial element between two nodal points ``pin_a`` and ``pin_b``."""

    pin_a = Pin("first end")
    pin_b = Pin("second end")

    @staticmethod
    def start_length(pins: dict[str, PinState]) -> float:
        return float(np.linalg.norm(pins["pin_b"].r0 - pins["pin_a"].r0))


class Bar(TwoPin):
    """Rigid bar (pins at both ends): ``|r_b - r_a| = L``.

    The constraint is written ``(|d|^2 - L^2) / (2 L) = 0`` (``d = r_b - r_a``), whose
    gradient on the constraint manifold is the paper's row ``[-lambda^T, lambda^T]`` with the
    unit vector ``lambda`` along the bar (eq. 3).

    Parameters
    ----------
    m : mass [kg] (>= 0)
    L : length [m] (> 0; structural; ``None``: the distance of the pins in the start
        configuration)
    mass : ``"consistent"`` (``m/6 [[2I, I], [I, 2I]]``, linear shape functions, eq. 7) or
        ``"lumped"`` (``m/2`` at each end) (structural)
    """

    m = Parameter(1.0, unit="kg", doc="mass of the bar", min=0.0)
    L = Parameter(None, unit="m", doc="length (None: from the start configuration)",
                  structural=True, min=0.0, min_inclusive=False)
    mass = Parameter("consistent", doc="mass matrix: 'consistent' or 'lumped'", structural=True)

    def length(self, pins: dict[str, PinState]) -> float:
        L = self.start_length(pins) if self.L is None else float(self.L)
        if L <= 0:
            raise ModelDefinitionError(f"{self._describe()}: the bar has zero length; its pins "
                                       "start at the same point")
        return L

    def nodal_mass(self, pins):
        I3 = cs.SX.eye(3)
        if self.mass == "consistent":
            M = self.m / 6 * cs.vertcat(cs.horzcat(2 * I3, I3), cs.horzcat(I3, 2 * I3))
        elif self.mass == "lumped":
            M = self.m / 2 * cs.SX.eye(6)
        else:
            raise ModelDefinitionError(f"{self._describe()}: mass must be 'consistent' or "
                                       f"'lumped', not {self.mass!r}")
        return [MassBlock(["pin_a", "pin_b"], M, label=f"{self.mass} bar mass")]

    def nodal_constraints(self, pins, t):
        L = self.length(pins)
        d = pins["pin_b"].r - pins["pin_a"].r
        return [((cs.dot(d, d) - L * L) / (2 * L), "length")]


class Winch(TwoPin):
    """A cable hauled in (or paid out) by a motor: prescribed length
    ``L(t) = L0 + rate * t`` between its pins (a rheonomic constraint; its multiplier is
    the cable tension).

    The constraint is written ``(|d|^2 - L(t)^2) / (2 L(t)) = 0`` (``d = r_b - r_a``),
    normalised by the commanded length as a :class:`Bar`'s row by its length: its gradient
    on the constraint manifold is the unit vector along the cable, so the multiplier
    ``lambda[0]`` is the tension [N] (positive pulling the pins together) at every instant.
    ``L(t)`` is a known smooth function of time, so the row stays polynomial in the
    coordinates. The model holds while ``L(t) > 0``: hauling the cable in to zero length
    (``t = -L0 / rate``) is a singular configuration, as for a bar of zero length.

    Parameters
    ----------
    rate : length rate [m/s] (negative hauls in)
    L0 : length at t = 0 [m] (> 0; structural; ``None``: from the start configuration)
    """

    rate = Parameter(0.0, unit="m/s", doc="rate of change of the cable length")
    L0 = Parameter(None, unit="m", doc="length at t = 0 (None: start configuration)",
                   structural=True, min=0.0, min_inclusive=False)

    def nodal_constraints(self, pins, t):
        L0 = self.start_length(pins) if self.L0 is None else float(self.L0)
        if L0 <= 0:  # (a given L0 is checked by its declaration)
            raise ModelDefinitionError(
                f"{self._describe()}: the cable has zero length at the start (its pins start "
                "at the same point); give L0 > 0 or start the nodes apart")
        L = L0 + self.rate * t
        d = pins["pin_b"].r - pins["pin_a"].r
        # normalised by L(t), not L0: the gradient is then the unit vector along the cable
        # and the multiplier the tension (with L0 it was the tension times L0 / L(t))
        return [((cs.dot(d, d) - L * L) / (2 * L), "prescribed length")]


class CableForce(TwoPin):
    """A cable replaced by its force pair: tension ``F`` along the current direction of the
    cable, pulling ``pin_a`` and ``pin_b`` towards each other (the paper's model of the
    folding cables).

    Parameters
    ----------
    F : tension [N] (a number or a function of time)
    """

    F = Parameter(1.0, unit="N", doc="cable tension", signal=True)

    def nodal_forces(self, pins, t):
        u, _ = _unit(pins["pin_b"].r - pins["pin_a"].r)
        return [("pin_a", self.F * u), ("pin_b", -self.F * u)]


class Spring(TwoPin):
    """Linear spring between two nodal points, tension ``c (|d| - L0)``.

    Parameters
    ----------
    c : stiffness [N/m] (>= 0)
    L0 : unstretched length [m] (structural; ``None``: the start distance)
    """

    c = Parameter(1.0, unit="N/m", doc="stiffness", min=0.0)
    L0 = Parameter(None, unit="m", doc="unstretched length (None: start distance)",
                   structural=True)

    def nodal_forces(self, pins, t):
        L0 = self.start_length(pins) if self.L0 is None else float(self.L0)
        u, length = _unit(pins["pin_b"].r - pins["pin_a"].r)
        f = self.c * (length - L0) * u
        return [("pin_a", f), ("pin_b", -f)]


class Damper(TwoPin):
    """Linear damper between two nodal points, tension ``d * d|r_b - r_a|/dt``.

    Parameters
    ----------
    d : damping coefficient [N.s/m] (>= 0)
    """

    d = Parameter(0.0, unit="N.s/m", doc="damping coefficient", min=0.0)

    def nodal_forces(self, pins, t):
        u, _ = _unit(pins["pin_b"].r - pins["pin_a"].r)
        f = self.d * cs.dot(u, pins["pin_b"].v - pins["pin_a"].v) * u
        return [("pin_a", f), ("pin_b", -f)]


# --------------------------------------------------------------------------------------
# Rigid bodies
# --------------------------------------------------------------------------------------


class RigidBody(NodalComponent):
    """A rigid body pinned at ``k >= 3`` nodal points (``pin_1`` ... ``pin_k``), not all
    on one line.

    **Mass.** The paper's generalized mass matrix ``(H+)^T M_b H+`` (eq. 34): ``H`` maps the
    motion of the centre of mass C and the rotation to the nodal motion (eq. 11),
    ``M_b = diag(m I, J)`` with the inertia tensor ``J`` about C in world axes, rotated with
    the body. Unlike the paper (which freezes ``H`` and ``J`` over a step) the
    velocity-dependent inertial force is kept exactly: ``q = M c - (H+)^T [0; w x J w]``,
    ``c`` the centripetal accelerations ``w x (w x (r_k - C))`` of the nodes.

    **Constraints.** ``3 k - 6`` holonomic equations: the three distances of a reference
    triangle of pins ``a, b, c`` and, for every other pin, ``r_k = r_a + E s_k`` with the
    orthonormal frame ``E`` of the triangle and the pin's constant coordinates ``s_k`` in
    it. Their Jacobian has the null space of the paper's ``I - H H+`` (eq. 15), with no
    row that is redundant by construction.

    Parameters
    ----------
    n_pins : number of pins k (constructor argument)
    m : mass [kg] (> 0)
    r_cm : centre of mass in the start configuration [m] (structural; ``None``: the mean
        of the pins)
    inertia : inertia tensor about the centre of mass, world axes, start configuration
        [kg.m2], a 3x3 array (structural; ``None``: the mass shared equally among the pins
        as point masses)
    """

    m = Parameter(1.0, unit="kg", doc="mass", min=0.0)
    r_cm = Parameter(None, unit="m", doc="centre of mass (start configuration)",
                     structural=True, shape=(3,))
    inertia = Parameter(None, unit="kg.m2", doc="inertia about the centre of mass (world, start)",
                        structural=True, shape=(3, 3))

    def __init__(self, n_pins: int = 3, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if int(n_pins) < 3:
            raise ModelDefinitionError(
                f"{type(self).__name__}: a rigid body needs at least 3 pins (got {n_pins}); "
                "a body on 2 pins is a Bar")
        ports = self.__dict__["_ports"]
        for k in range(1, int(n_pins) + 1):
            decl = Port(PinDomain, f"pin {k}")
            decl.name = f"pin_{k}"
            ports[decl.name] = PortInstance(decl, self)

    def __getattr__(self, name: str) -> Any:
        ports = self.__dict__.get("_ports", {})
        if name in ports:
            return ports[name]
        return super().__getattr__(name)  # names the body, suggests and lists its ports

    @property
    def pins(self) -> list[Any]:
        """The pin ports in order (``pin_1`` ... ``pin_k``)."""
        return [p for name, p in self.__dict__["_ports"].items() if name.startswith("pin_")]

    # ----- geometry of the start configuration -----
    def _pin_names(self) -> list[str]:
        return [p.name for p in self.pins]

    def _reference(self, R0: np.ndarray) -> tuple[int, int, int]:
        """The first triangle of pins (in order) that is not degenerate."""
        k = len(R0)
        scale = max(np.ptp(R0, axis=0).max(), 1e-300)
        for a in range(k):
            for b in range(a + 1, k):
                for c in range(b + 1, k):
                    n = np.cross(R0[b] - R0[a], R0[c] - R0[a])
                    if np.linalg.norm(n) > 1e-6 * scale**2:
                        return a, b, c
        raise ModelDefinitionError(f"{self._describe()}: all pins of the rigid body start on "
                                   "one line; a rigid body needs three pins not on a line")

    def default_cm_inertia(self, R0: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Centre of mass and inertia *per unit mass* when not given (equal point masses at
        the pins)."""
        c = R0.mean(axis=0)
        J = np.zeros((3, 3))
        for r in R0 - c:
            J += (r @ r * np.eye(3) - np.outer(r, r)) / len(R0)
        return c, J

    def _cm_inertia(self, R0: np.ndarray) -> tuple[np.ndarray, Any]:
        """Centre of mass and inertia tensor (a symbol times a matrix when defaulted)."""
        c_def, J_unit = self.default_cm_inertia(R0)
        c = c_def if self.r_cm is None else np.asarray(self.r_cm, dtype=float).reshape(3)
        if self.inertia is None:
            if self.r_cm is not None and not np.allclose(c, c_def):
                raise ModelDefinitionError(f"{self._describe()}: give the inertia tensor "
                                           "about the centre of mass r_cm you gave")
            return c, J_unit  # scaled by m in nodal_mass
        J = np.asarray(self.inertia, dtype=float).reshape(3, 3)
        bad = inertia_problem(J)
        if bad is not None:
            raise ModelDefinitionError(f"{self._describe()}: {bad} (parameter 'inertia')")
        odd = inertia_implausible(J)
        if odd is not None:
            warnings.warn(f"{self._describe()}: {odd} (parameter 'inertia')", ModelWarning,
                          stacklevel=2)
        return c, J

    @staticmethod
    def _frame(ra: Any, rb: Any, rc: Any) -> Any:
        """Orthonormal frame ``[e1 e2 e3]`` of a triangle (e1 along ab, e3 normal)."""
        e1 = (rb - ra) / cs.sqrt(cs.dot(rb - ra, rb - ra))
        n = cs.cross(e1, rc - ra)
        e3 = n / cs.sqrt(cs.dot(n, n))
        e2 = cs.cross(e3, e1)
        return cs.horzcat(e1, e2, e3)

    def _geometry(self, pins: dict[str, PinState]):
        names = self._pin_names()
        R0 = np.array([pins[n].r0 for n in names])
        a, b, c = self._reference(R0)
        E0 = np.array(cs.evalf(self._frame(cs.DM(R0[a]), cs.DM(R0[b]), cs.DM(R0[c]))))
        r = [pins[n].r for n in names]
        E = self._frame(r[a], r[b], r[c])
        return names, R0, (a, b, c), E0, r, E

    def nodal_constraints(self, pins, t):
        names, R0, (a, b, c), E0, r, E = self._geometry(pins)
        out = []
        for i, j in ((a, b), (a, c), (b, c)):
            L = float(np.linalg.norm(R0[j] - R0[i]))
            d = r[j] - r[i]
            out.append(((cs.dot(d, d) - L * L) / (2 * L),
                        f"distance {names[i]}-{names[j]}"))
        for k in range(len(names)):
            if k in (a, b, c):
                continue
            s = E0.T @ (R0[k] - R0[a])
            res = r[k] - r[a] - E @ cs.DM(s)
            for i, ax in enumerate("xyz"):
                out.append((res[i], f"{names[k]} rigid with {names[a]}, {names[b]}, "
                                    f"{names[c]} ({ax})"))
        return out

    def nodal_mass(self, pins):
        names, R0, (a, b, c), E0, r, E = self._geometry(pins)
        c0, J0 = self._cm_inertia(R0)
        s_c = E0.T @ (c0 - R0[a])
        J_loc = E0.T @ J0 @ E0
        C = r[a] + E @ cs.DM(s_c)
        J = E @ cs.DM(J_loc) @ E.T
        if self.inertia is None:
            J = self.m * J
        rel = [rk - C for rk in r]
        H = cs.vertcat(*[cs.horzcat(cs.SX.eye(3), -_skew(q)) for q in rel])  # (3k, 6)
        Hp = cs.solve(H.T @ H, H.T)  # Moore-Penrose inverse, H of full column rank
        Mb = cs.diagcat(self.m * cs.SX.eye(3), J)
        M = Hp.T @ Mb @ Hp
        vb = cs.vertcat(*[pins[n].v for n in names])
        w = (Hp @ vb)[3:6]
        cen = cs.vertcat(*[cs.cross(w, cs.cross(w, q)) for q in rel])
        q = M @ cen - Hp.T @ cs.vertcat(cs.SX.zeros(3), cs.cross(w, J @ w))
        return [MassBlock(names, M, q, label="rigid body (H+)^T M_b H+")]


class Plate(RigidBody):
    """A rigid flat panel on its four corner pins ``pin_1`` ... ``pin_4`` (in order round
    the edge), of uniform areal density: centre of mass at the area centroid, inertia of a
    thin plate (in the start configuration), unless given.

    Parameters
    ----------
    m : mass [kg] (> 0); r_cm, inertia : as :class:`RigidBody`
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(4, **kwargs)

    def default_cm_inertia(self, R0: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Area centroid and thin-plate inertia per unit mass of the quadrilateral (two
        triangles)."""
        m = 1.0
        tris = [(R0[0], R0[1], R0[2]), (R0[0], R0[2], R0[3])]
        areas = np.array([0.5 * np.linalg.norm(np.cross(q - p, s - p)) for p, q, s in tris])
        if areas.sum() <= 0:
            raise ModelDefinitionError(f"{self._describe()}: the plate has zero area")
        cents = np.array([(p + q + s) / 3 for p, q, s in tris])
        c = (areas[:, None] * cents).sum(axis=0) / areas.sum()
        J = np.zeros((3, 3))
        for (p, q, s), area in zip(tris, areas, strict=True):
            mt = m * area / areas.sum()
            # second moment of a triangle: (m/12) (sum r_i r_i^T + 9 g g^T), g centroid
            verts = [p - c, q - c, s - c]
            g = sum(verts) / 3
            S = mt / 12 * (sum(np.outer(v, v) for v in verts) + 9 * np.outer(g, g))
            J += np.trace(S) * np.eye(3) - S
        return c, J


# --------------------------------------------------------------------------------------
# Supports, gears, loads
# --------------------------------------------------------------------------------------


class Support(NodalComponent):
    """Holds its pin at the start position in some or all directions.

    Ports
    -----
    pin : the supported nodal point

    Parameters
    ----------
    directions : the fixed directions, a subset of ``"xyz"`` (structural)
    """

    directions = Parameter("xyz", doc="fixed directions, e.g. 'xyz' or 'z'", structural=True)
    pin = Pin("supported nodal point")

    def nodal_constraints(self, pins, t):
        dirs = str(self.directions)
        if not dirs or set(dirs) - set("xyz"):
            raise ModelDefinitionError(f"{self._describe()}: directions must be letters of "
                                       f"'xyz', not {dirs!r}")
        twice = sorted({ax for ax in dirs if dirs.count(ax) > 1})
        if twice:
            raise ModelDefinitionError(
                f"{self._describe()}: directions={dirs!r} names {', '.join(twice)} more than "
                "once; give each held direction once, e.g. "
                f"{''.join(ax for ax in 'xyz' if ax in dirs)!r}")
        p = pins["pin"]
        return [(p.r[i] - float(p.r0[i]), f"{ax} fixed") for i, ax in enumerate("xyz")
                if ax in dirs]


class PlanarGuide(NodalComponent):
    """Holds its pin on a plane through its start position (a planar joint for a nodal
    point): ``n . (r - r0) = 0``.

    Ports
    -----
    pin : the guided nodal point

    Parameters
    ----------
    normal : normal of the plane, world (structural)
    """

    normal = Parameter([0.0, 0.0, 1.0], unit="1", doc="normal of the guiding plane",
                       structural=True, shape=(3,), direction=True)
    pin = Pin("guided nodal point")

    def nodal_constraints(self, pins, t):
        n = np.asarray(self.normal, dtype=float).reshape(3)
        if np.linalg.norm(n) == 0:
            raise ModelDefinitionError(f"{self._describe()}: the normal is zero")
        n = n / np.linalg.norm(n)
        p = pins["pin"]
        return [(cs.dot(cs.DM(n), p.r) - float(n @ p.r0), "on its plane")]


class ParallelGuide(TwoPin):
    """Keeps the segment ``pin_a -> pin_b`` parallel to a fixed direction (two equations:
    its components across ``direction`` stay zero), e.g. the verticals of a ring truss
    that folds into a bundle of parallel members.

    Parameters
    ----------
    direction : the direction, world (structural; ``None``: the segment's start direction)
    """

    direction = Parameter(None, unit="1", doc="direction of the segment (None: at start)",
                          structural=True, shape=(3,), direction=True)

    def nodal_constraints(self, pins, t):
        d0 = pins["pin_b"].r0 - pins["pin_a"].r0
        n = d0 if self.direction is None else np.asarray(self.direction, dtype=float)
        if np.linalg.norm(n) == 0:
            raise ModelDefinitionError(f"{self._describe()}: no direction (the pins start "
                                       "at one point); give direction=[...]")
        n = n / np.linalg.norm(n)
        e1 = np.cross(n, np.eye(3)[int(np.argmin(np.abs(n)))])
        e1 /= np.linalg.norm(e1)
        e2 = np.cross(n, e1)
        if abs(e1 @ d0) + abs(e2 @ d0) > 1e-9 * max(1.0, float(np.linalg.norm(d0))):
            raise ModelDefinitionError(f"{self._describe()}: the pins do not start along "
                                       f"the direction {n.round(6).tolist()}")
        d = pins["pin_b"].r - pins["pin_a"].r
        return [(cs.dot(cs.DM(e1), d), "parallel (1)"), (cs.dot(cs.DM(e2), d), "parallel (2)")]


class Gear(NodalComponent):
    """Synchronous gear at a common node: the arms ``hub -> pin_a`` and ``hub -> pin_b``
    (two bars meeting at the hub) turn about ``axis`` by equal angles, in opposite senses
    (``sense = -1``: meshing gears on a carrier that does not turn, as in a synchronised
    fold) or the same sense (``sense = +1``).

    The constraint is ``sin(phi_a + sense' phi_b) = 0`` written without angles (products of
    the arms' projections, as complex numbers), ``phi`` the rotations of the arms from the
    start configuration (``sense' = -sense``); it holds for rotations up to 180 degrees.

    Ports
    -----
    hub : the common node; pin_a, pin_b : the other ends of the two arms

    Parameters
    ----------
    axis : gear axis, world (structural; ``None``: normal of the two arms at the start)
    sense : -1 (opposite rotations) or +1 (equal rotations) (structural)
    """

    axis = Parameter(None, unit="1", doc="gear axis (None: normal of the arms at start)",
                     structural=True, shape=(3,), direction=True)
    sense = Parameter(-1, doc="-1: opposite rotations, +1: equal rotations", structural=True)
    hub = Pin("common node of the two arms")
    pin_a = Pin("far end of arm a")
    pin_b = Pin("far end of arm b")

    def nodal_constraints(self, pins, t):
        h = pins["hub"]
        ua0 = pins["pin_a"].r0 - h.r0
        ub0 = pins["pin_b"].r0 - h.r0
        if self.axis is None:
            n = np.cross(ua0, ub0)
            if np.linalg.norm(n) < 1e-9 * np.linalg.norm(ua0) * np.linalg.norm(ub0):
                raise ModelDefinitionError(
                    f"{self._describe()}: the two arms start on one line; give the gear "
                    "axis, e.g. Gear(axis=[0, 0, 1])")
        else:
            n = np.asarray(self.axis, dtype=float).reshape(3)
        n = n / np.linalg.norm(n)
        tmp = np.eye(3)[int(np.argmin(np.abs(n)))]
        e1 = np.cross(n, tmp)
        e1 /= np.linalg.norm(e1)
        e2 = np.cross(n, e1)

        def cplx(u: Any) -> tuple[Any, Any]:
            if isinstance(u, np.ndarray):
                return float(e1 @ u), float(e2 @ u)
            return cs.dot(cs.DM(e1), u), cs.dot(cs.DM(e2), u)

        def mul(p: Any, q: Any) -> tuple[Any, Any]:
            return p[0] * q[0] - p[1] * q[1], p[0] * q[1] + p[1] * q[0]

        def conj(p: Any) -> tuple[Any, Any]:
            return p[0], -p[1]

        za, zb = cplx(pins["pin_a"].r - h.r), cplx(pins["pin_b"].r - h.r)
        za0, zb0 = cplx(ua0), cplx(ub0)
        na0, nb0 = np.hypot(*za0), np.hypot(*zb0)
        if min(na0, nb0) < 1e-12:
            raise ModelDefinitionError(f"{self._describe()}: an arm is parallel to the gear "
                                       "axis")
        rot_a = mul(za, conj(za0))  # |za||za0| e^{i phi_a}
        rot_b = mul(zb, conj(zb0))
        if int(self.sense) == -1:
            w = mul(rot_a, rot_b)  # e^{i (phi_a + phi_b)}
        elif int(self.sense) == 1:
            w = mul(rot_a, conj(rot_b))  # e^{i (phi_a - phi_b)}
        else:
            raise ModelDefinitionError(f"{self._describe()}: sense must be -1 or +1")
        # |za| = |za0| on the constraint manifold of rigid arms in the gear plane
        return [(w[1] / (na0 * na0 * nb0 * nb0), "equal rotations"
                 if int(self.sense) == 1 else "equal and opposite rotations")]


class Load(NodalComponent):
    """A force on a nodal point, world components.

    Parameters
    ----------
    f : force [N], a 3-vector or a function of time returning one (structural)
    """

    f = Parameter([0.0, 0.0, 0.0], unit="N", doc="force (vector or f(t))",
                  structural=True, signal=True, shape=(3,))
    pin = Pin("loaded nodal point")

    def nodal_forces(self, pins, t):
        f: Any = self.f
        value = f(t) if callable(f) else f
        vec = cs.vertcat(*[cs.SX(v) for v in (value if not isinstance(value, cs.SX)
                                               else cs.vertsplit(value))])
        if vec.numel() != 3:
            raise ModelDefinitionError(f"{self._describe()}: f must have 3 components")
        return [("pin", vec)]


class Gravity(NodalComponent):
    """A uniform gravity field acting on every mass of the structure (no port).

    Parameters
    ----------
    g : gravity vector [m/s2] (structural)
    """

    g = Parameter([0.0, -9.81, 0.0], unit="m/s2", doc="gravity vector", structural=True, shape=(3,))

    def gravity_vector(self) -> np.ndarray:
        return np.asarray(self.g, dtype=float).reshape(3)
