"""1D translational mechanics (MSL ``Modelica.Mechanics.Translational`` conventions).

Flanges carry the absolute position ``s`` [m] and the cut force ``f`` [N] acting *on* the
component at that flange. Sources react on the inertial frame (the datum).
"""

from __future__ import annotations

import acausal as ac
from acausal import DATUM, Edge, Parameter, Port, TreePriority, Variable, der
from acausal.domains import Translational

__all__ = [
    "Flange",
    "Fixed",
    "Mass",
    "PartialCompliant",
    "Spring",
    "Damper",
    "SpringDamper",
    "Force",
    "ConstantForce",
    "Position",
    "Speed",
    "PositionSensor",
    "SpeedSensor",
    "ForceSensor",
    "RelativePositionSensor",
    "RelativeSpeedSensor",
]


def Flange(doc: str = "") -> Port:
    """A translational port declaration."""
    return Port(Translational, doc)


class Fixed(ac.Component):
    """Flange fixed in the inertial frame at position ``s0``.

    Parameters
    ----------
    s0 : fixed position [m]
    """

    s0 = Parameter(0.0, unit="m", doc="fixed position")
    flange = Flange("fixed flange")
    edges = [Edge(DATUM, "flange", TreePriority.ACROSS_SOURCE)]

    def equations(self):
        return [self.flange.s == self.s0]


class Mass(ac.Component):
    """Sliding mass ``m dv/dt = flange_a.f + flange_b.f`` (rigid, zero length).

    In the graph: a d'Alembert edge from the datum to ``flange_a`` and a rigid edge joining
    the flanges. Give ``s=...``, ``v=...`` for initial values.

    Parameters
    ----------
    m : mass [kg]

    Variables
    ---------
    s : position [m]; v : velocity [m/s]; a : acceleration [m/s2]
    """

    m = Parameter(1.0, unit="kg", doc="mass", min=0.0, min_inclusive=False)
    flange_a = Flange("left flange")
    flange_b = Flange("right flange")
    s = Variable(unit="m", doc="absolute position", state_priority=1)
    v = Variable(unit="m/s", doc="absolute velocity", state_priority=1)
    a = Variable(unit="m/s2", doc="absolute acceleration")
    edges = [
        Edge("flange_a", "flange_b", TreePriority.ACROSS_SOURCE),
        Edge(DATUM, "flange_a", TreePriority.ACROSS_STORE),
    ]

    def equations(self):
        return [
            self.s == self.flange_a.s,
            self.flange_b.s == self.flange_a.s,
            self.v == der(self.s),
            self.a == der(self.v),
            self.m * self.a == self.flange_a.f + self.flange_b.f,
        ]


class PartialCompliant(ac.Component):
    """Partial element between two flanges: ``s_rel = flange_b.s - flange_a.s``,
    ``flange_b.f = f``, ``flange_a.f = -f`` (one edge ``flange_a -> flange_b``).

    Variables
    ---------
    s_rel : relative position [m]; f : force from flange_a to flange_b [N]
    """

    flange_a = Flange("left flange")
    flange_b = Flange("right flange")
    s_rel = Variable(unit="m", doc="relative position flange_b - flange_a")
    f = Variable(unit="N", doc="force from flange_a to flange_b (tension positive)")
    edges = [Edge("flange_a", "flange_b", TreePriority.NEUTRAL)]

    def equations(self):
        return [self.s_rel == self.flange_b.s - self.flange_a.s, self.flange_b.f == self.f]


class Spring(PartialCompliant):
    """Linear spring ``f = c (s_rel - s_rel0)``.

    Parameters
    ----------
    c : spring constant [N/m]
    s_rel0 : unstretched length [m]
    """

    c = Parameter(1.0, unit="N/m", doc="spring constant", min=0.0)
    s_rel0 = Parameter(0.0, unit="m", doc="unstretched spring length")
    edges = [Edge("flange_a", "flange_b", TreePriority.THROUGH_STORE)]

    def equations(self):
        return [self.f == self.c * (self.s_rel - self.s_rel0)]


class Damper(PartialCompliant):
    """Linear damper ``f = d v_rel``.

    Parameters
    ----------
    d : damping constant [N.s/m]
    """

    d = Parameter(0.0, unit="N.s/m", doc="damping constant", min=0.0)
    v_rel = Variable(unit="m/s", doc="relative velocity")

    def equations(self):
        return [self.v_rel == der(self.s_rel), self.f == self.d * self.v_rel]


class SpringDamper(PartialCompliant):
    """Spring and damper in parallel ``f = c (s_rel - s_rel0) + d v_rel``.

    Parameters
    ----------
    c : spring constant [N/m]
    d : damping constant [N.s/m]
    s_rel0 : unstretched length [m]
    """

    c = Parameter(1.0, unit="N/m", doc="spring constant", min=0.0)
    d = Parameter(0.0, unit="N.s/m", doc="damping constant", min=0.0)
    s_rel0 = Parameter(0.0, unit="m", doc="unstretched spring length")
    v_rel = Variable(unit="m/s", doc="relative velocity")
    edges = [Edge("flange_a", "flange_b", TreePriority.THROUGH_STORE)]

    def equations(self):
        return [
            self.v_rel == der(self.s_rel),
            self.f == self.c * (self.s_rel - self.s_rel0) + self.d * self.v_rel,
        ]


class Force(ac.Component):
    """Force source: ``f`` pushes the flange in +s (``flange.f = -f``); reaction on the
    inertial frame.

    Parameters
    ----------
    f : driving force [N], constant or ``f(t)``
    """

    f = Parameter(0.0, unit="N", doc="driving force", signal=True)
    flange = Flange("driven flange")
    edges = [Edge(DATUM, "flange", TreePriority.THROUGH_SOURCE)]

    def equations(self):
        return [self.flange.f == -self.f]


class ConstantForce(Force):
    """Constant force source (same as :class:`Force` with a number)."""


class Position(ac.Component):
    """Prescribed position ``flange.s = s_ref(t)`` (exact: its derivatives are used).

    Parameters
    ----------
    s_ref : reference position [m], constant or ``f(t)``
    """

    s_ref = Parameter(0.0, unit="m", doc="reference position", signal=True)
    flange = Flange("driven flange")
    edges = [Edge(DATUM, "flange", TreePriority.ACROSS_SOURCE)]

    def equations(self):
        return [self.flange.s == self.s_ref]


class Speed(ac.Component):
    """Prescribed velocity ``der(flange.s) = v_ref(t)``.

    Parameters
    ----------
    v_ref : reference velocity [m/s], constant or ``f(t)``

    Variables
    ---------
    s : flange position [m]; v : flange velocity [m/s]
    """

    v_ref = Parameter(0.0, unit="m/s", doc="reference velocity", signal=True)
    flange = Flange("driven flange")
    s = Variable(unit="m", doc="flange position", start=0.0)
    v = Variable(unit="m/s", doc="flange velocity")
    edges = [Edge(DATUM, "flange", TreePriority.ACROSS_SOURCE)]

    def equations(self):
        return [self.s == self.flange.s, self.v == der(self.s), self.v == self.v_ref]


class PositionSensor(ac.Component):
    """Ideal sensor of the absolute position ``s`` [m] (no force)."""

    flange = Flange("measured flange")
    s = Variable(unit="m", doc="measured position")
    edges = [Edge(DATUM, "flange", TreePriority.THROUGH_SOURCE)]

    def equations(self):
        return [self.s == self.flange.s, self.flange.f == 0]


class SpeedSensor(ac.Component):
    """Ideal sensor of the absolute velocity ``v`` [m/s] (no force)."""

    flange = Flange("measured flange")
    v = Variable(unit="m/s", doc="measured velocity")
    edges = [Edge(DATUM, "flange", TreePriority.THROUGH_SOURCE)]

    def equations(self):
        return [self.v == der(self.flange.s), self.flange.f == 0]


class ForceSensor(ac.Component):
    """Ideal sensor of the force ``f`` [N] transmitted from flange_a to flange_b."""

    flange_a = Flange("left flange")
    flange_b = Flange("right flange")
    f = Variable(unit="N", doc="measured force")
    edges = [Edge("flange_a", "flange_b", TreePriority.ACROSS_SOURCE)]

    def equations(self):
        return [self.flange_a.s == self.flange_b.s, self.flange_a.f == self.f]


class RelativePositionSensor(ac.Component):
    """Ideal sensor of the relative position ``s_rel = flange_b.s - flange_a.s`` [m]
    (no force; MSL ``Sensors.RelPositionSensor``)."""

    flange_a = Flange("left flange")
    flange_b = Flange("right flange")
    s_rel = Variable(unit="m", doc="relative position flange_b.s - flange_a.s")
    edges = [Edge("flange_a", "flange_b", TreePriority.THROUGH_SOURCE)]

    def equations(self):
        return [self.s_rel == self.flange_b.s - self.flange_a.s, self.flange_a.f == 0]


class RelativeSpeedSensor(ac.Component):
    """Ideal sensor of the relative velocity ``v_rel = d(flange_b.s - flange_a.s)/dt``
    [m/s] (no force; MSL ``Sensors.RelSpeedSensor``)."""

    flange_a = Flange("left flange")
    flange_b = Flange("right flange")
    v_rel = Variable(unit="m/s", doc="relative velocity")
    edges = [Edge("flange_a", "flange_b", TreePriority.THROUGH_SOURCE)]

    def equations(self):
        return [self.v_rel == der(self.flange_b.s - self.flange_a.s), self.flange_a.f == 0]


# --------------------------------------------------------------------------------------
# Bridges to signal blocks (components.blocks). Naming: ``Signal`` + the physical
# component; the signal port has the name of the quantity, so results keep their paths.
# --------------------------------------------------------------------------------------

__all__ += ["SignalForce", "SignalSpeed", "SignalPosition", "SignalPositionSensor",
            "SignalSpeedSensor", "SignalForceSensor"]

from ._following import follow_position, follow_speed  # noqa: E402 - appended section


class SignalForce(ac.Component):
    """Force source driven by a signal: the input ``f`` pushes the flange in +s
    (``flange.f = -f``); reaction on the inertial frame (MSL ``Sources.Force``).

    Ports
    -----
    flange : driven flange; f : signal input, the driving force [N]
    """

    f = ac.RealInput("driving force [N]")
    flange = Flange("driven flange")
    edges = [Edge(DATUM, "flange", TreePriority.THROUGH_SOURCE)]

    def equations(self):
        return [self.flange.f == -self.f]


class _PrescribedMotion(ac.Component):
    """What the signal-driven motion sources share: the driven flange, its position and
    velocity, and how the reference is followed (``exact`` or through a filter of
    cut-off ``f_crit``; see :mod:`components._following`)."""

    exact = Parameter(False, structural=True, unit="1",
                      doc="follow the reference exactly (no filter)")
    f_crit = Parameter(50.0, unit="Hz", doc="cut-off frequency of the filter (exact=False)",
                       min=0.0)
    flange = Flange("driven flange")
    s = Variable(unit="m", doc="flange position", start=0.0)
    v = Variable(unit="m/s", doc="flange velocity")
    edges = [Edge(DATUM, "flange", TreePriority.ACROSS_SOURCE)]

    def equations(self):
        return [self.s == self.flange.s, self.v == der(self.s)]


class SignalSpeed(_PrescribedMotion):
    """Velocity prescribed by a signal ``v_ref`` (MSL ``Sources.Speed``).

    With ``exact=False`` (default) the velocity follows the reference through a
    first-order filter, ``dv/dt = (v_ref - v) 2 pi f_crit``, so the reference need not be
    differentiable; with ``exact=True``, ``v = v_ref`` and the structure stage
    differentiates the reference's equations when the acceleration is needed.

    Ports
    -----
    flange : driven flange; v_ref : signal input, the reference velocity [m/s]

    Parameters
    ----------
    exact : follow the reference exactly (structural)
    f_crit : filter cut-off frequency when not exact [Hz]

    Variables
    ---------
    s : flange position [m]; v : flange velocity [m/s]
    """

    v_ref = ac.RealInput("reference velocity [m/s]")
    def equations(self):
        return follow_speed(self.v, self.v_ref, self.exact, self.f_crit)


class SignalPosition(_PrescribedMotion):
    """Position prescribed by a signal ``s_ref`` (MSL ``Sources.Position``).

    With ``exact=False`` (default) the position follows the reference through a critically
    damped second-order filter of cut-off ``f_crit`` (``w_c = 2 pi f_crit``)::

        d2s/dt2 = ((s_ref - s) w_c - af ds/dt) w_c / bf,   af = 1.3617, bf = 0.6180

    so the reference need not be differentiable; with ``exact=True``,
    ``flange.s = s_ref`` and the structure stage differentiates the reference's equations
    when velocity and acceleration are needed.

    Ports
    -----
    flange : driven flange; s_ref : signal input, the reference position [m]

    Parameters
    ----------
    exact : follow the reference exactly (structural)
    f_crit : filter cut-off frequency when not exact [Hz]

    Variables
    ---------
    s : flange position [m]; v : flange velocity [m/s]
    """

    s_ref = ac.RealInput("reference position [m]")
    def equations(self):
        return follow_position(self.s, self.v, self.s_ref, self.exact, self.f_crit)


class SignalPositionSensor(ac.Component):
    """Ideal sensor of the absolute position with a signal output ``s`` [m] (no force)."""

    flange = Flange("measured flange")
    s = ac.RealOutput("measured position [m]")
    edges = [Edge(DATUM, "flange", TreePriority.THROUGH_SOURCE)]

    def equations(self):
        return [self.s == self.flange.s, self.flange.f == 0]


class SignalSpeedSensor(ac.Component):
    """Ideal sensor of the absolute velocity with a signal output ``v`` [m/s] (no force)."""

    flange = Flange("measured flange")
    v = ac.RealOutput("measured velocity [m/s]")
    edges = [Edge(DATUM, "flange", TreePriority.THROUGH_SOURCE)]

    def equations(self):
        return [self.v == der(self.flange.s), self.flange.f == 0]


class SignalForceSensor(ac.Component):
    """Ideal sensor of the force transmitted from flange_a to flange_b, with a signal
    output ``f`` [N]."""

    flange_a = Flange("left flange")
    flange_b = Flange("right flange")
    f = ac.RealOutput("measured force [N]")
    edges = [Edge("flange_a", "flange_b", TreePriority.ACROSS_SOURCE)]

    def equations(self):
        return [self.flange_a.s == self.flange_b.s, self.flange_a.f == self.f]


# --------------------------------------------------------------------------------------
# Discontinuous elements: Coulomb friction with stick-slip, a gap that can lift off, a
# mass between hard end stops. Their modes change at events (docs/hybrid.md).
# --------------------------------------------------------------------------------------

__all__ += ["Friction", "ElastoGap", "MassWithStop"]

import casadi as cs  # noqa: E402 - this section is appended to the module
import numpy as np  # noqa: E402

from ._switching import UNKNOWN, friction_law, gap_law  # noqa: E402


class Friction(PartialCompliant):
    """Coulomb friction between two flanges, with stick-slip (MSL ``SupportFriction``'s
    behaviour between two moving flanges, e.g. a block on a moving belt).

    The friction force ``f`` (from ``flange_a`` to ``flange_b``, opposing the relative
    motion: ``f > 0`` while ``v_rel > 0``) is::

        stuck    (v_rel = 0, |f| <= peak f_coulomb):  f = sa,            a_rel = 0
        sliding  (v_rel > 0 / v_rel < 0):             f = +/- f_coulomb, a_rel = sa

    with the path parameter ``sa`` of the MSL's ``PartialFriction``: one structure in
    every mode, so a mode change needs no index reduction. The surfaces break away when the
    force needed to stick exceeds the breakaway force ``peak f_coulomb`` and stick again
    when ``v_rel`` crosses zero, unless the force needed then exceeds the breakaway force
    (the sliding reverses). Each change is a state event; ``mode`` tells which mode holds.
    Viscous friction is a :class:`Damper` in parallel (it carries no force while stuck).

    Ports
    -----
    flange_a, flange_b : the two sliding surfaces (``flange_a`` is the support)

    Parameters
    ----------
    f_coulomb : kinetic (Coulomb) friction force while sliding [N], >= 0
    peak : breakaway (static) force over the kinetic force [1], >= 1
    v_small : a start speed up to this counts as stuck [m/s], >= 0

    Variables
    ---------
    s_rel : relative position [m]; v_rel : relative velocity [m/s]; a_rel : relative
    acceleration [m/s2]; f : friction force [N]; sa : path parameter (stuck force [N] or
    relative acceleration [m/s2]); mode : 1 sliding forward, 0 stuck, -1 sliding backward,
    3 / -3 starting to slide forward / backward, 2 before the first event (the sign of the
    start speed decides)

    References
    ----------
    M. Otter, H. Elmqvist, S. E. Mattsson, "Hybrid modeling in Modelica based on the
    synchronous data flow principle", CACSD'99, Hawaii, 1999.
    """

    f_coulomb = Parameter(1.0, unit="N", doc="kinetic (Coulomb) friction force", min=0.0)
    peak = Parameter(1.0, unit="1", doc="breakaway force / kinetic friction force", min=1.0)
    v_small = Parameter(1e-9, unit="m/s", doc="start speed that counts as stuck", min=0.0)
    v_rel = Variable(unit="m/s", doc="relative velocity der(s_rel)")
    a_rel = Variable(unit="m/s2", doc="relative acceleration der(v_rel)")
    sa = Variable(doc="path parameter: stuck force [N] or acceleration [m/s2] (no single unit)")
    mode = Variable(start=UNKNOWN, discrete=True, unit="1",
                    doc="1 forward, 0 stuck, -1 backward, +-3 starting, 2 before the "
                    "first event")

    def equations(self):
        f, a, whens = friction_law(self.mode, self.v_rel, self.sa, self.f_coulomb,
                                   self.peak * self.f_coulomb, self.v_small)
        return [self.v_rel == der(self.s_rel), self.a_rel == der(self.v_rel),
                self.f == f, self.a_rel == a, *whens]


class ElastoGap(PartialCompliant):
    """Spring and damper that act only in contact and never pull (MSL ``ElastoGap``).

    In contact (``s_rel < s_rel0``, the flanges closer than ``s_rel0``)::

        f_c = -c (s_rel0 - s_rel)^n                      (spring, pushing: f < 0)
        f_d = d v_rel, limited to [f_c, -f_c]             (|f_d| <= |f_c|)
        f   = f_c + f_d                                    (so -2|f_c| <= f <= 0)

    and ``f = 0`` out of contact. The limit keeps the force continuous where the contact
    opens and closes and stops the damper from pulling the flanges together: at the
    start of an impact the force rises from zero (``f = 2 f_c`` while ``d |v_rel| >
    |f_c|``), and the bodies separate, with ``f = 0``, where ``f_c + d v_rel`` would
    become a pull. The contact and both limits are relations, hence state events.

    Ports
    -----
    flange_a, flange_b : the two contacting surfaces

    Parameters
    ----------
    c : contact stiffness [N/m^n], >= 0
    d : contact damping [N.s/m], >= 0
    s_rel0 : relative position where the contact closes [m]
    n : exponent of the spring force [1], >= 1 (1: linear, 1.5: Hertz)

    Variables
    ---------
    s_rel : relative position [m]; v_rel : relative velocity [m/s]; f : contact force
    [N] (<= 0); f_c, f_d : its spring and damper parts [N]; contact : 1 in contact [1]
    """

    c = Parameter(1.0, unit="N/m", doc="contact stiffness (N/m^n)", min=0.0)
    d = Parameter(1.0, unit="N.s/m", doc="contact damping", min=0.0)
    s_rel0 = Parameter(0.0, unit="m", doc="relative position where the contact closes")
    n = Parameter(1.0, unit="1", doc="exponent of the spring force", min=1.0)
    v_rel = Variable(unit="m/s", doc="relative velocity der(s_rel)")
    f_c = Variable(unit="N", doc="spring part of the contact force")
    f_d = Variable(unit="N", doc="damper part of the contact force (|f_d| <= |f_c|)")
    contact = Variable(unit="1", doc="1 in contact, 0 apart")

    def equations(self):
        f_c, f_d, contact = gap_law(self.s_rel, self.v_rel, self.f_c, self.c, self.d,
                                    self.s_rel0, self.n)
        return [self.v_rel == der(self.s_rel), self.f_c == f_c, self.f_d == f_d,
                self.f == self.f_c + self.f_d, self.contact == contact]


class MassWithStop(ac.Component):
    """Sliding mass between hard end stops at ``s_min`` and ``s_max``, with restitution
    (MSL ``MassWithStopAndFriction`` without its friction, and with a coefficient of
    restitution instead of a fully plastic impact).

    Between the stops it is a :class:`Mass`. When ``s`` reaches a stop, the velocity
    jumps (``reinit``) to ``-e`` times its value before the impact. An impact slower than
    ``v_rest / e`` ends at rest on the stop instead: ``v = 0``, and the stop's reaction
    ``f_stop`` (path parameter ``sa``) holds the mass there as long as it pushes; the mass
    leaves the stop when the reaction would have to pull. So a mass pressed against a
    stop comes to rest after finitely many impacts (no Zeno accumulation)::

        free:     m a = flange_a.f + flange_b.f,           f_stop = 0,  a = sa
        resting:  m a = flange_a.f + flange_b.f + f_stop,  f_stop = sa, a = 0

    Ports
    -----
    flange_a, flange_b : left and right flanges (rigidly connected, at ``s``)

    Parameters
    ----------
    m : mass [kg], > 0
    s_min, s_max : positions of the lower and upper stops [m] (s_min < s_max)
    e : coefficient of restitution [1], 0 <= e <= 1
    v_rest : rebound speed below which the mass stays on the stop [m/s], >= 0

    Variables
    ---------
    s : position [m]; v : velocity [m/s]; a : acceleration [m/s2]; f_stop : force of the
    stops on the mass [N]; sa : path parameter; mode : 0 free, 1 resting on the upper
    stop, -1 resting on the lower stop
    """

    m = Parameter(1.0, unit="kg", doc="mass", min=0.0, min_inclusive=False)
    s_min = Parameter(-1.0, unit="m", doc="position of the lower stop")
    s_max = Parameter(1.0, unit="m", doc="position of the upper stop")
    e = Parameter(0.8, unit="1", doc="coefficient of restitution", min=0.0, max=1.0)
    v_rest = Parameter(1e-3, unit="m/s", doc="rebound speed below which the mass rests",
                       min=0.0)
    flange_a = Flange("left flange")
    flange_b = Flange("right flange")
    s = Variable(unit="m", doc="absolute position", state_priority=1)
    v = Variable(unit="m/s", doc="absolute velocity", state_priority=1)
    a = Variable(unit="m/s2", doc="absolute acceleration")
    f_stop = Variable(unit="N", doc="force of the stops on the mass")
    sa = Variable(doc="path parameter: stop force [N] or acceleration [m/s2] (no single unit)")
    mode = Variable(start=0.0, discrete=True, unit="1",
                    doc="0 free, 1 resting on the upper stop, -1 on the lower stop")
    edges = [
        Edge("flange_a", "flange_b", TreePriority.ACROSS_SOURCE),
        Edge(DATUM, "flange_a", TreePriority.ACROSS_STORE),
    ]

    def check_parameters(self, p):
        """The stops in order, and the start position between them (or on one): a mass
        started beyond a stop would rest there inside the stop, or fall through it. (Run
        for the component, the build and every run that overrides a parameter.)"""
        lo, hi = p.s_min, p.s_max
        if not lo < hi:
            return (f"the lower stop s_min = {lo:g} m is not below the upper stop s_max = "
                    f"{hi:g} m; give s_min < s_max")
        start = self.__dict__["_vars"]["s"].start
        if isinstance(start, (int, float, np.integer, np.floating)) and not lo <= start <= hi:
            return (f"the start position s = {start:g} m is outside the stops [s_min, s_max]"
                    f" = [{lo:g}, {hi:g}] m; start the mass between them (on a stop at the "
                    "most)")
        return None

    def equations(self):
        free = self.mode == 0
        rest_max, rest_min = self.mode > 0.5, self.mode < -0.5
        resting = cs.logic_not(free)
        v0 = ac.pre(self.v)
        stays = self.e * cs.fabs(v0) <= self.v_rest  # (of pre values: no event)
        return [
            self.s == self.flange_a.s,
            self.flange_b.s == self.flange_a.s,
            self.v == der(self.s),
            self.a == der(self.v),
            self.m * self.a == self.flange_a.f + self.flange_b.f + self.f_stop,
            self.f_stop == cs.if_else(resting, self.sa, 0.0),
            self.a == cs.if_else(resting, 0.0, self.sa),
            # impacts: watched while free and moving towards the stop (the direction is
            # read without an event), so the rebound does not cross back as an event
            ac.when(cs.if_else(cs.logic_and(free, ac.no_event(self.v > 0)),
                               self.s - self.s_max, -1.0) > 0,
                    ac.reinit(self.v, cs.if_else(stays, 0.0, -self.e * v0)),
                    ac.assign(self.mode, cs.if_else(stays, 1.0, 0.0))),
            ac.when(cs.if_else(cs.logic_and(free, ac.no_event(self.v < 0)),
                               self.s - self.s_min, 1.0) < 0,
                    ac.reinit(self.v, cs.if_else(stays, 0.0, -self.e * v0)),
                    ac.assign(self.mode, cs.if_else(stays, -1.0, 0.0))),
            # lift-off: the stop would have to pull
            ac.when(cs.if_else(rest_max, self.sa, -1.0) > 0, ac.assign(self.mode, 0.0)),
            ac.when(cs.if_else(rest_min, self.sa, 1.0) < 0, ac.assign(self.mode, 0.0)),
        ]
