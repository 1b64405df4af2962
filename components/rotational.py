"""1D rotational mechanics (MSL ``Modelica.Mechanics.Rotational`` conventions).

Flanges carry the absolute angle ``phi`` [rad] and the cut torque ``tau`` [N.m] acting *on*
the component at that flange. Components with a reaction (sources, gears, EMF) react on the
inertial frame (the datum).
"""

from __future__ import annotations

import acausal as ac
from acausal import DATUM, Edge, Parameter, Port, TreePriority, Variable, der
from acausal.domains import Rotational, Translational

__all__ = [
    "Flange",
    "Fixed",
    "Inertia",
    "PartialCompliant",
    "Spring",
    "Damper",
    "SpringDamper",
    "IdealGear",
    "Torque",
    "ConstantTorque",
    "Position",
    "Speed",
    "AngleSensor",
    "SpeedSensor",
    "TorqueSensor",
    "RelativeAngleSensor",
    "RelativeSpeedSensor",
    "IdealRollingWheel",
    "IdealPlanetary",
]


def Flange(doc: str = "") -> Port:
    """A rotational port declaration."""
    return Port(Rotational, doc)


class Fixed(ac.Component):
    """Flange fixed in the inertial frame at angle ``phi0``.

    Parameters
    ----------
    phi0 : fixed angle [rad]
    """

    phi0 = Parameter(0.0, unit="rad", doc="fixed angle")
    flange = Flange("fixed flange")
    edges = [Edge(DATUM, "flange", TreePriority.ACROSS_SOURCE)]

    def equations(self):
        return [self.flange.phi == self.phi0]


class Inertia(ac.Component):
    """Rigid rotating body ``J dw/dt = flange_a.tau + flange_b.tau``.

    In the graph: a d'Alembert edge from the datum to ``flange_a`` and a rigid edge joining
    ``flange_a`` and ``flange_b``. Give ``phi=...``, ``w=...`` for initial values.

    Parameters
    ----------
    J : moment of inertia [kg.m2]

    Variables
    ---------
    phi : angle [rad]; w : angular velocity [rad/s]; a : angular acceleration [rad/s2]
    """

    J = Parameter(1.0, unit="kg.m2", doc="moment of inertia", min=0.0, min_inclusive=False)
    flange_a = Flange("left flange")
    flange_b = Flange("right flange")
    phi = Variable(unit="rad", doc="absolute rotation angle", state_priority=1)
    w = Variable(unit="rad/s", doc="absolute angular velocity", state_priority=1)
    a = Variable(unit="rad/s2", doc="absolute angular acceleration")
    edges = [
        Edge("flange_a", "flange_b", TreePriority.ACROSS_SOURCE),
        Edge(DATUM, "flange_a", TreePriority.ACROSS_STORE),
    ]

    def equations(self):
        return [
            self.phi == self.flange_a.phi,
            self.flange_b.phi == self.flange_a.phi,
            self.w == der(self.phi),
            self.a == der(self.w),
            self.J * self.a == self.flange_a.tau + self.flange_b.tau,
        ]


class PartialCompliant(ac.Component):
    """Partial element between two flanges: ``phi_rel = flange_b.phi - flange_a.phi``,
    ``flange_b.tau = tau``, ``flange_a.tau = -tau`` (one edge ``flange_a -> flange_b``).

    Variables
    ---------
    phi_rel : relative angle [rad]; tau : torque transmitted [N.m]
    """

    flange_a = Flange("left flange")
    flange_b = Flange("right flange")
    phi_rel = Variable(unit="rad", doc="relative rotation angle flange_b - flange_a")
    tau = Variable(unit="N.m", doc="torque from flange_a to flange_b")
    edges = [Edge("flange_a", "flange_b", TreePriority.NEUTRAL)]

    def equations(self):
        return [
            self.phi_rel == self.flange_b.phi - self.flange_a.phi,
            self.flange_b.tau == self.tau,
        ]


class Spring(PartialCompliant):
    """Linear torsion spring ``tau = c (phi_rel - phi_rel0)``.

    Parameters
    ----------
    c : spring constant [N.m/rad]
    phi_rel0 : unstretched relative angle [rad]
    """

    c = Parameter(1.0, unit="N.m/rad", doc="spring constant", min=0.0)
    phi_rel0 = Parameter(0.0, unit="rad", doc="unstretched relative angle")
    edges = [Edge("flange_a", "flange_b", TreePriority.THROUGH_STORE)]

    def equations(self):
        return [self.tau == self.c * (self.phi_rel - self.phi_rel0)]


class Damper(PartialCompliant):
    """Linear rotational damper ``tau = d w_rel``.

    Parameters
    ----------
    d : damping constant [N.m.s/rad]
    """

    d = Parameter(0.0, unit="N.m.s/rad", doc="damping constant", min=0.0)
    w_rel = Variable(unit="rad/s", doc="relative angular velocity")

    def equations(self):
        return [self.w_rel == der(self.phi_rel), self.tau == self.d * self.w_rel]


class SpringDamper(PartialCompliant):
    """Spring and damper in parallel ``tau = c (phi_rel - phi_rel0) + d w_rel``.

    Parameters
    ----------
    c : spring constant [N.m/rad]
    d : damping constant [N.m.s/rad]
    phi_rel0 : unstretched relative angle [rad]
    """

    c = Parameter(1.0, unit="N.m/rad", doc="spring constant", min=0.0)
    d = Parameter(0.0, unit="N.m.s/rad", doc="damping constant", min=0.0)
    phi_rel0 = Parameter(0.0, unit="rad", doc="unstretched relative angle")
    w_rel = Variable(unit="rad/s", doc="relative angular velocity")
    edges = [Edge("flange_a", "flange_b", TreePriority.THROUGH_STORE)]

    def equations(self):
        return [
            self.w_rel == der(self.phi_rel),
            self.tau == self.c * (self.phi_rel - self.phi_rel0) + self.d * self.w_rel,
        ]


class IdealGear(ac.Component):
    """Ideal gearbox ``phi_a = ratio phi_b``, ``0 = ratio flange_a.tau + flange_b.tau``;
    the housing is the inertial frame.

    Parameters
    ----------
    ratio : transmission ratio ``phi_a / phi_b`` [1]
    """

    ratio = Parameter(1.0, unit="1", doc="transmission ratio flange_a.phi / flange_b.phi",
                      nonzero=True)
    flange_a = Flange("input flange")
    flange_b = Flange("output flange")
    phi_a = Variable(unit="rad", doc="angle of flange_a")
    phi_b = Variable(unit="rad", doc="angle of flange_b")
    edges = [Edge(DATUM, "flange_a"), Edge(DATUM, "flange_b")]

    def equations(self):
        return [
            self.phi_a == self.flange_a.phi,
            self.phi_b == self.flange_b.phi,
            self.phi_a == self.ratio * self.phi_b,
            0 == self.ratio * self.flange_a.tau + self.flange_b.tau,
        ]


class Torque(ac.Component):
    """Torque source: ``tau`` accelerates the flange (``flange.tau = -tau``); reaction on
    the inertial frame.

    Parameters
    ----------
    tau : driving torque [N.m], constant or ``f(t)``
    """

    tau = Parameter(0.0, unit="N.m", doc="driving torque", signal=True)
    flange = Flange("driven flange")
    edges = [Edge(DATUM, "flange", TreePriority.THROUGH_SOURCE)]

    def equations(self):
        return [self.flange.tau == -self.tau]


class ConstantTorque(Torque):
    """Constant torque source (same as :class:`Torque` with a number)."""


class Position(ac.Component):
    """Prescribed angle ``flange.phi = phi_ref(t)`` (exact: its derivatives are used).

    Parameters
    ----------
    phi_ref : reference angle [rad], constant or ``f(t)``
    """

    phi_ref = Parameter(0.0, unit="rad", doc="reference angle", signal=True)
    flange = Flange("driven flange")
    edges = [Edge(DATUM, "flange", TreePriority.ACROSS_SOURCE)]

    def equations(self):
        return [self.flange.phi == self.phi_ref]


class Speed(ac.Component):
    """Prescribed angular velocity ``der(flange.phi) = w_ref(t)``.

    Parameters
    ----------
    w_ref : reference angular velocity [rad/s], constant or ``f(t)``

    Variables
    ---------
    phi : flange angle [rad]; w : flange angular velocity [rad/s]
    """

    w_ref = Parameter(0.0, unit="rad/s", doc="reference angular velocity", signal=True)
    flange = Flange("driven flange")
    phi = Variable(unit="rad", doc="flange angle", start=0.0)
    w = Variable(unit="rad/s", doc="flange angular velocity")
    edges = [Edge(DATUM, "flange", TreePriority.ACROSS_SOURCE)]

    def equations(self):
        return [self.phi == self.flange.phi, self.w == der(self.phi), self.w == self.w_ref]


class AngleSensor(ac.Component):
    """Ideal sensor of the absolute angle ``phi`` [rad] (no torque)."""

    flange = Flange("measured flange")
    phi = Variable(unit="rad", doc="measured angle")
    edges = [Edge(DATUM, "flange", TreePriority.THROUGH_SOURCE)]

    def equations(self):
        return [self.phi == self.flange.phi, self.flange.tau == 0]


class SpeedSensor(ac.Component):
    """Ideal sensor of the absolute angular velocity ``w`` [rad/s] (no torque)."""

    flange = Flange("measured flange")
    w = Variable(unit="rad/s", doc="measured angular velocity")
    edges = [Edge(DATUM, "flange", TreePriority.THROUGH_SOURCE)]

    def equations(self):
        return [self.w == der(self.flange.phi), self.flange.tau == 0]


class TorqueSensor(ac.Component):
    """Ideal sensor of the torque ``tau`` [N.m] transmitted from flange_a to flange_b."""

    flange_a = Flange("left flange")
    flange_b = Flange("right flange")
    tau = Variable(unit="N.m", doc="measured torque")
    edges = [Edge("flange_a", "flange_b", TreePriority.ACROSS_SOURCE)]

    def equations(self):
        return [self.flange_a.phi == self.flange_b.phi, self.flange_a.tau == self.tau]


class RelativeAngleSensor(ac.Component):
    """Ideal sensor of the relative angle ``phi_rel = flange_b.phi - flange_a.phi`` [rad]
    (no torque; MSL ``Sensors.RelAngleSensor``)."""

    flange_a = Flange("left flange")
    flange_b = Flange("right flange")
    phi_rel = Variable(unit="rad", doc="relative angle flange_b.phi - flange_a.phi")
    edges = [Edge("flange_a", "flange_b", TreePriority.THROUGH_SOURCE)]

    def equations(self):
        return [self.phi_rel == self.flange_b.phi - self.flange_a.phi, self.flange_a.tau == 0]


class RelativeSpeedSensor(ac.Component):
    """Ideal sensor of the relative angular velocity ``w_rel = d(flange_b.phi -
    flange_a.phi)/dt`` [rad/s] (no torque; MSL ``Sensors.RelSpeedSensor``)."""

    flange_a = Flange("left flange")
    flange_b = Flange("right flange")
    w_rel = Variable(unit="rad/s", doc="relative angular velocity")
    edges = [Edge("flange_a", "flange_b", TreePriority.THROUGH_SOURCE)]

    def equations(self):
        return [self.w_rel == der(self.flange_b.phi - self.flange_a.phi),
                self.flange_a.tau == 0]


class IdealRollingWheel(ac.Component):
    """Wheel rolling without slip: ``radius phi = s`` and ``radius f + tau = 0``
    (rotational ``flangeR`` to translational ``flangeT``; also a rack and pinion).

    Parameters
    ----------
    radius : wheel (pinion) radius [m]
    """

    radius = Parameter(0.3, unit="m", doc="wheel radius", min=0.0, min_inclusive=False)
    flangeR = Port(Rotational, "rotational flange (wheel axle)")
    flangeT = Port(Translational, "translational flange (contact / rack)")
    edges = [Edge(DATUM, "flangeR"), Edge(DATUM, "flangeT")]

    def equations(self):
        return [
            self.radius * self.flangeR.phi == self.flangeT.s,
            0 == self.radius * self.flangeT.f + self.flangeR.tau,
        ]


class IdealPlanetary(ac.Component):
    """Ideal planetary gear (MSL ``IdealPlanetary``): sun, carrier and ring wheel, the
    planets without inertia, the housing the inertial frame::

        (1 + ratio) carrier.phi = sun.phi + ratio ring.phi       (Willis)
        ring.tau = ratio sun.tau,   carrier.tau = -(1 + ratio) sun.tau

    Parameters
    ----------
    ratio : number of ring teeth / number of sun teeth [1], > 0 (e.g. 100/50)
    """

    ratio = Parameter(2.0, unit="1", doc="number of ring teeth / number of sun teeth",
                      min=0.0, min_inclusive=False)
    sun = Flange("sun wheel")
    carrier = Flange("carrier")
    ring = Flange("ring wheel")
    edges = [Edge(DATUM, "sun"), Edge(DATUM, "carrier"), Edge(DATUM, "ring")]

    def equations(self):
        r = self.ratio
        return [(1 + r) * self.carrier.phi == self.sun.phi + r * self.ring.phi,
                self.ring.tau == r * self.sun.tau,
                self.carrier.tau == -(1 + r) * self.sun.tau]


# --------------------------------------------------------------------------------------
# Bridges to signal blocks (components.blocks). Naming: ``Signal`` + the physical
# component; the signal port has the name of the quantity, so results keep their paths.
# --------------------------------------------------------------------------------------

__all__ += ["SignalTorque", "SignalSpeed", "SignalPosition", "SignalAngleSensor",
            "SignalSpeedSensor", "SignalTorqueSensor"]

from ._following import follow_position, follow_speed  # noqa: E402 - appended section


class SignalTorque(ac.Component):
    """Torque source driven by a signal: the input ``tau`` accelerates the flange
    (``flange.tau = -tau``); reaction on the inertial frame (MSL ``Sources.Torque``).

    Ports
    -----
    flange : driven flange; tau : signal input, the driving torque [N.m]
    """

    tau = ac.RealInput("driving torque [N.m]")
    flange = Flange("driven flange")
    edges = [Edge(DATUM, "flange", TreePriority.THROUGH_SOURCE)]

    def equations(self):
        return [self.flange.tau == -self.tau]


class _PrescribedMotion(ac.Component):
    """What the signal-driven motion sources share: the driven flange, its angle and
    angular velocity, and how the reference is followed (``exact`` or through a filter of
    cut-off ``f_crit``; see :mod:`components._following`)."""

    exact = Parameter(False, structural=True, unit="1",
                      doc="follow the reference exactly (no filter)")
    f_crit = Parameter(50.0, unit="Hz", doc="cut-off frequency of the filter (exact=False)",
                       min=0.0)
    flange = Flange("driven flange")
    phi = Variable(unit="rad", doc="flange angle", start=0.0)
    w = Variable(unit="rad/s", doc="flange angular velocity")
    edges = [Edge(DATUM, "flange", TreePriority.ACROSS_SOURCE)]

    def equations(self):
        return [self.phi == self.flange.phi, self.w == der(self.phi)]


class SignalSpeed(_PrescribedMotion):
    """Angular velocity prescribed by a signal ``w_ref`` (MSL ``Sources.Speed``).

    With ``exact=False`` (default) the speed follows the reference through a first-order
    filter, ``dw/dt = (w_ref - w) 2 pi f_crit``, so the reference need not be
    differentiable; with ``exact=True``, ``w = w_ref`` and the structure stage
    differentiates the reference's equations when the acceleration is needed (the
    reference must then be differentiable).

    Ports
    -----
    flange : driven flange; w_ref : signal input, the reference angular velocity [rad/s]

    Parameters
    ----------
    exact : follow the reference exactly (structural)
    f_crit : filter cut-off frequency when not exact [Hz]

    Variables
    ---------
    phi : flange angle [rad]; w : flange angular velocity [rad/s]
    """

    w_ref = ac.RealInput("reference angular velocity [rad/s]")
    def equations(self):
        return follow_speed(self.w, self.w_ref, self.exact, self.f_crit)


class SignalPosition(_PrescribedMotion):
    """Angle prescribed by a signal ``phi_ref`` (MSL ``Sources.Position``).

    With ``exact=False`` (default) the angle follows the reference through a critically
    damped second-order filter of cut-off ``f_crit`` (``w_c = 2 pi f_crit``)::

        d2phi/dt2 = ((phi_ref - phi) w_c - af dphi/dt) w_c / bf,   af = 1.3617, bf = 0.6180

    so the reference need not be differentiable; with ``exact=True``,
    ``flange.phi = phi_ref`` and the structure stage differentiates the reference's
    equations when speed and acceleration are needed (the reference must then be twice
    differentiable).

    Ports
    -----
    flange : driven flange; phi_ref : signal input, the reference angle [rad]

    Parameters
    ----------
    exact : follow the reference exactly (structural)
    f_crit : filter cut-off frequency when not exact [Hz]

    Variables
    ---------
    phi : flange angle [rad]; w : flange angular velocity [rad/s]
    """

    phi_ref = ac.RealInput("reference angle [rad]")
    def equations(self):
        return follow_position(self.phi, self.w, self.phi_ref, self.exact, self.f_crit)


class SignalAngleSensor(ac.Component):
    """Ideal sensor of the absolute angle with a signal output ``phi`` [rad] (no torque)."""

    flange = Flange("measured flange")
    phi = ac.RealOutput("measured angle [rad]")
    edges = [Edge(DATUM, "flange", TreePriority.THROUGH_SOURCE)]

    def equations(self):
        return [self.phi == self.flange.phi, self.flange.tau == 0]


class SignalSpeedSensor(ac.Component):
    """Ideal sensor of the absolute angular velocity with a signal output ``w`` [rad/s]
    (no torque)."""

    flange = Flange("measured flange")
    w = ac.RealOutput("measured angular velocity [rad/s]")
    edges = [Edge(DATUM, "flange", TreePriority.THROUGH_SOURCE)]

    def equations(self):
        return [self.w == der(self.flange.phi), self.flange.tau == 0]


class SignalTorqueSensor(ac.Component):
    """Ideal sensor of the torque transmitted from flange_a to flange_b, with a signal
    output ``tau`` [N.m]."""

    flange_a = Flange("left flange")
    flange_b = Flange("right flange")
    tau = ac.RealOutput("measured torque [N.m]")
    edges = [Edge("flange_a", "flange_b", TreePriority.ACROSS_SOURCE)]

    def equations(self):
        return [self.flange_a.phi == self.flange_b.phi, self.flange_a.tau == self.tau]


# --------------------------------------------------------------------------------------
# Discontinuous elements: Coulomb friction with stick-slip (friction, brake, clutch) and
# a spring-damper contact that can lift off. Their modes change at events
# (docs/hybrid.md; the switching laws are shared with the translational elements).
# --------------------------------------------------------------------------------------

__all__ += ["Friction", "Brake", "Clutch", "ElastoGap"]

import casadi as cs  # noqa: E402 - this section is appended to the module

from ._switching import UNKNOWN, friction_law, gap_law  # noqa: E402

_MODE_DOC = "1 forward, 0 stuck, -1 backward, +-3 starting, 2 before the first event"


class Friction(PartialCompliant):
    """Coulomb friction between two flanges, with stick-slip (rotational counterpart of
    :class:`components.translational.Friction`).

    ``tau`` (from ``flange_a`` to ``flange_b``, ``tau > 0`` while ``w_rel > 0``)::

        stuck    (w_rel = 0, |tau| <= peak tau_coulomb):  tau = sa,              a_rel = 0
        sliding  (w_rel > 0 / w_rel < 0):                 tau = +/- tau_coulomb, a_rel = sa

    Mode changes (breakaway, sticking, reversal) are state events; see
    :class:`components.translational.Friction` and docs/hybrid.md.

    Ports
    -----
    flange_a, flange_b : the two surfaces (``flange_a`` is the support)

    Parameters
    ----------
    tau_coulomb : kinetic (Coulomb) friction torque [N.m], >= 0
    peak : breakaway torque over the kinetic torque [1], >= 1
    w_small : a start speed up to this counts as stuck [rad/s], >= 0

    Variables
    ---------
    phi_rel [rad], w_rel [rad/s], a_rel [rad/s2] : relative motion; tau : friction torque
    [N.m]; sa : path parameter; mode : 1 forward, 0 stuck, -1 backward, +-3 starting to
    slide, 2 before the first event
    """

    tau_coulomb = Parameter(1.0, unit="N.m", doc="kinetic (Coulomb) friction torque",
                            min=0.0)
    peak = Parameter(1.0, unit="1", doc="breakaway torque / kinetic friction torque", min=1.0)
    w_small = Parameter(1e-9, unit="rad/s", doc="start speed that counts as stuck", min=0.0)
    w_rel = Variable(unit="rad/s", doc="relative angular velocity der(phi_rel)")
    a_rel = Variable(unit="rad/s2", doc="relative angular acceleration der(w_rel)")
    sa = Variable(doc="path parameter: stuck torque [N.m] or acceleration [rad/s2] "
                      "(no single unit)")
    mode = Variable(start=UNKNOWN, discrete=True, unit="1", doc=_MODE_DOC)

    def equations(self):
        tau, a, whens = friction_law(self.mode, self.w_rel, self.sa, self.tau_coulomb,
                                     self.peak * self.tau_coulomb, self.w_small)
        return [self.w_rel == der(self.phi_rel), self.a_rel == der(self.w_rel),
                self.tau == tau, self.a_rel == a, *whens]


class _NormalForceFriction(ac.Component):
    """Partial friction element pressed by a normal force ``fn = fn_max f_normalized``
    (MSL ``Brake``/``Clutch``): sliding torque ``tau_k = cgeo mu fn``, breakaway torque
    ``peak tau_k``, free (no torque) while ``fn <= 0``."""

    f_normalized = ac.RealInput("normalized normal force fn / fn_max (0..1)")
    mu = Parameter(0.5, unit="1", doc="kinetic friction coefficient", min=0.0)
    peak = Parameter(1.0, unit="1", doc="static friction coefficient / mu", min=1.0)
    cgeo = Parameter(1.0, unit="m", doc="geometry constant (effective radius x surfaces)",
                     min=0.0)
    fn_max = Parameter(1.0, unit="N", doc="maximum normal force", min=0.0)
    w_small = Parameter(1e-9, unit="rad/s", doc="start speed that counts as stuck", min=0.0)
    fn = Variable(unit="N", doc="normal force")
    sa = Variable(doc="path parameter: stuck torque [N.m] or acceleration [rad/s2] "
                      "(no single unit)")
    mode = Variable(start=UNKNOWN, discrete=True, unit="1", doc=_MODE_DOC)

    def _friction(self, w: cs.SX) -> tuple[cs.SX, cs.SX, list[ac.When]]:
        tau_k = self.cgeo * self.mu * self.fn
        return friction_law(self.mode, w, self.sa, tau_k, self.peak * tau_k, self.w_small,
                            free=self.fn <= 0, engage=True)


class Brake(_NormalForceFriction):
    """Brake: a shaft (``flange_a`` rigidly joined to ``flange_b``) pressed against the
    housing, fixed in the inertial frame, by ``fn = fn_max f_normalized`` (MSL
    ``Rotational.Components.Brake`` with a constant friction coefficient).

    The friction torque on the shaft is ``-tau``, with ``tau = flange_a.tau +
    flange_b.tau``::

        free     (fn <= 0):                        tau = 0,            a = sa
        stuck    (w = 0, |tau| <= peak tau_k):     tau = sa,           a = 0
        sliding  (w > 0 / w < 0):                  tau = +/- tau_k,    a = sa
        tau_k = cgeo mu fn

    Breakaway, stopping, reversal and the engagement (``fn`` rising above 0, the mode is
    then the sign of ``w``) are events.

    Ports
    -----
    flange_a, flange_b : the shaft; f_normalized : signal input, normal force / fn_max

    Parameters
    ----------
    mu : kinetic friction coefficient [1], >= 0
    peak : static over kinetic friction coefficient [1], >= 1
    cgeo : geometry constant, friction torque over friction force [m], >= 0
    fn_max : normal force at f_normalized = 1 [N], >= 0
    w_small : a start speed up to this counts as stuck [rad/s], >= 0

    Variables
    ---------
    phi [rad], w [rad/s], a [rad/s2] : shaft motion; tau : friction torque [N.m]; fn :
    normal force [N]; sa : path parameter; mode : 1 forward, 0 stuck, -1 backward, +-3
    starting to slide, 2 before the first event
    """

    flange_a = Flange("left end of the shaft")
    flange_b = Flange("right end of the shaft")
    phi = Variable(unit="rad", doc="shaft angle")
    w = Variable(unit="rad/s", doc="shaft angular velocity")
    a = Variable(unit="rad/s2", doc="shaft angular acceleration")
    tau = Variable(unit="N.m", doc="friction torque (flange_a.tau + flange_b.tau)")
    edges = [
        Edge("flange_a", "flange_b", TreePriority.ACROSS_SOURCE),
        Edge(DATUM, "flange_a", TreePriority.NEUTRAL),
    ]

    def equations(self):
        tau, a, whens = self._friction(self.w)
        return [self.phi == self.flange_a.phi, self.flange_b.phi == self.flange_a.phi,
                self.w == der(self.phi), self.a == der(self.w),
                self.tau == self.flange_a.tau + self.flange_b.tau,
                self.fn == self.fn_max * self.f_normalized,
                self.tau == tau, self.a == a, *whens]


class Clutch(_NormalForceFriction, PartialCompliant):
    """Clutch: friction between two flanges pressed together by ``fn = fn_max
    f_normalized`` (MSL ``Rotational.Components.Clutch`` with a constant friction
    coefficient).

    ``tau`` (from ``flange_a`` to ``flange_b``), ``w_rel = der(phi_rel)``::

        free     (fn <= 0):                         tau = 0,          a_rel = sa
        stuck    (w_rel = 0, |tau| <= peak tau_k):  tau = sa,         a_rel = 0
        sliding  (w_rel > 0 / w_rel < 0):           tau = +/- tau_k,  a_rel = sa
        tau_k = cgeo mu fn

    Ports
    -----
    flange_a, flange_b : the two clutch plates; f_normalized : signal input, normal force
    / fn_max

    Parameters
    ----------
    mu, peak, cgeo, fn_max, w_small : as :class:`Brake`

    Variables
    ---------
    phi_rel [rad], w_rel [rad/s], a_rel [rad/s2] : relative motion; tau : transmitted
    torque [N.m]; fn : normal force [N]; sa : path parameter; mode : 1 forward, 0 stuck,
    -1 backward, +-3 starting to slide, 2 before the first event
    """

    w_rel = Variable(unit="rad/s", doc="relative angular velocity der(phi_rel)")
    a_rel = Variable(unit="rad/s2", doc="relative angular acceleration der(w_rel)")

    def equations(self):
        tau, a, whens = self._friction(self.w_rel)
        return [self.w_rel == der(self.phi_rel), self.a_rel == der(self.w_rel),
                self.fn == self.fn_max * self.f_normalized,
                self.tau == tau, self.a_rel == a, *whens]


class ElastoGap(PartialCompliant):
    """Torsional spring and damper that act only in contact and never pull (MSL
    ``Rotational.Components.ElastoGap``); an end stop of a joint when connected between
    its ``axis`` and ``support`` flanges.

    In contact (``phi_rel < phi_rel0``)::

        tau_c = -c (phi_rel0 - phi_rel)^n,  tau_d = d w_rel limited to [tau_c, -tau_c],
        tau   = tau_c + tau_d   (<= 0),     and tau = 0 apart.

    See :class:`components.translational.ElastoGap`. An upper stop (contact for
    ``phi > phi_max``) is an ElastoGap with its flanges swapped: ``flange_a`` on the
    moving side, ``flange_b`` on the support, ``phi_rel0 = -phi_max``.

    Ports
    -----
    flange_a, flange_b : the two contacting sides

    Parameters
    ----------
    c : contact stiffness [N.m/rad^n], >= 0
    d : contact damping [N.m.s/rad], >= 0
    phi_rel0 : relative angle where the contact closes [rad]
    n : exponent of the spring torque [1], >= 1

    Variables
    ---------
    phi_rel [rad], w_rel [rad/s] : relative motion; tau : contact torque [N.m] (<= 0);
    tau_c, tau_d : its spring and damper parts [N.m]; contact : 1 in contact [1]
    """

    c = Parameter(1.0, unit="N.m/rad", doc="contact stiffness (N.m/rad^n)", min=0.0)
    d = Parameter(1.0, unit="N.m.s/rad", doc="contact damping", min=0.0)
    phi_rel0 = Parameter(0.0, unit="rad", doc="relative angle where the contact closes")
    n = Parameter(1.0, unit="1", doc="exponent of the spring torque", min=1.0)
    w_rel = Variable(unit="rad/s", doc="relative angular velocity der(phi_rel)")
    tau_c = Variable(unit="N.m", doc="spring part of the contact torque")
    tau_d = Variable(unit="N.m", doc="damper part of the contact torque (|tau_d| <= |tau_c|)")
    contact = Variable(unit="1", doc="1 in contact, 0 apart")

    def equations(self):
        tau_c, tau_d, contact = gap_law(self.phi_rel, self.w_rel, self.tau_c, self.c,
                                        self.d, self.phi_rel0, self.n)
        return [self.w_rel == der(self.phi_rel), self.tau_c == tau_c, self.tau_d == tau_d,
                self.tau == self.tau_c + self.tau_d, self.contact == contact]
