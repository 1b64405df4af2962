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
    "IdealRollingWheel",
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

    ratio = Parameter(1.0, unit="1", doc="transmission ratio flange_a.phi / flange_b.phi")
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


# --------------------------------------------------------------------------------------
# Bridges to signal blocks (components.blocks). Naming: ``Signal`` + the physical
# component; the signal port has the name of the quantity, so results keep their paths.
# --------------------------------------------------------------------------------------

__all__ += ["SignalTorque", "SignalSpeed", "SignalPosition", "SignalAngleSensor",
            "SignalSpeedSensor", "SignalTorqueSensor"]

from math import pi  # noqa: E402 - this section is appended to the module

# s and s^2 coefficients of the critically damped (Bessel) filter of MSL Position
_BESSEL_AF = 1.3617
_BESSEL_BF = 0.6180


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


class SignalSpeed(ac.Component):
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
    exact = Parameter(False, structural=True, unit="1",
                      doc="follow the reference exactly (no filter)")
    f_crit = Parameter(50.0, unit="Hz", doc="cut-off frequency of the filter (exact=False)",
                       min=0.0)
    flange = Flange("driven flange")
    phi = Variable(unit="rad", doc="flange angle", start=0.0)
    w = Variable(unit="rad/s", doc="flange angular velocity")
    edges = [Edge(DATUM, "flange", TreePriority.ACROSS_SOURCE)]

    def equations(self):
        eqs = [self.phi == self.flange.phi, self.w == der(self.phi)]
        if self.exact:
            return eqs + [self.w == self.w_ref]
        return eqs + [der(self.w) == (self.w_ref - self.w) * 2 * pi * self.f_crit]


class SignalPosition(ac.Component):
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
    exact = Parameter(False, structural=True, unit="1",
                      doc="follow the reference exactly (no filter)")
    f_crit = Parameter(50.0, unit="Hz", doc="cut-off frequency of the filter (exact=False)",
                       min=0.0)
    flange = Flange("driven flange")
    phi = Variable(unit="rad", doc="flange angle", start=0.0)
    w = Variable(unit="rad/s", doc="flange angular velocity")
    edges = [Edge(DATUM, "flange", TreePriority.ACROSS_SOURCE)]

    def equations(self):
        eqs = [self.phi == self.flange.phi, self.w == der(self.phi)]
        if self.exact:
            return eqs + [self.phi == self.phi_ref]
        wc = 2 * pi * self.f_crit
        return eqs + [der(self.w) == ((self.phi_ref - self.phi) * wc - _BESSEL_AF * self.w)
                      * (wc / _BESSEL_BF)]


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
