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


# --------------------------------------------------------------------------------------
# Bridges to signal blocks (components.blocks). Naming: ``Signal`` + the physical
# component; the signal port has the name of the quantity, so results keep their paths.
# --------------------------------------------------------------------------------------

__all__ += ["SignalForce", "SignalSpeed", "SignalPosition", "SignalPositionSensor",
            "SignalSpeedSensor", "SignalForceSensor"]

from math import pi  # noqa: E402 - this section is appended to the module

# s and s^2 coefficients of the critically damped (Bessel) filter of MSL Position
_BESSEL_AF = 1.3617
_BESSEL_BF = 0.6180


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


class SignalSpeed(ac.Component):
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
    exact = Parameter(False, structural=True, unit="1",
                      doc="follow the reference exactly (no filter)")
    f_crit = Parameter(50.0, unit="Hz", doc="cut-off frequency of the filter (exact=False)",
                       min=0.0)
    flange = Flange("driven flange")
    s = Variable(unit="m", doc="flange position", start=0.0)
    v = Variable(unit="m/s", doc="flange velocity")
    edges = [Edge(DATUM, "flange", TreePriority.ACROSS_SOURCE)]

    def equations(self):
        eqs = [self.s == self.flange.s, self.v == der(self.s)]
        if self.exact:
            return eqs + [self.v == self.v_ref]
        return eqs + [der(self.v) == (self.v_ref - self.v) * 2 * pi * self.f_crit]


class SignalPosition(ac.Component):
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
    exact = Parameter(False, structural=True, unit="1",
                      doc="follow the reference exactly (no filter)")
    f_crit = Parameter(50.0, unit="Hz", doc="cut-off frequency of the filter (exact=False)",
                       min=0.0)
    flange = Flange("driven flange")
    s = Variable(unit="m", doc="flange position", start=0.0)
    v = Variable(unit="m/s", doc="flange velocity")
    edges = [Edge(DATUM, "flange", TreePriority.ACROSS_SOURCE)]

    def equations(self):
        eqs = [self.s == self.flange.s, self.v == der(self.s)]
        if self.exact:
            return eqs + [self.s == self.s_ref]
        wc = 2 * pi * self.f_crit
        return eqs + [der(self.v) == ((self.s_ref - self.s) * wc - _BESSEL_AF * self.v)
                      * (wc / _BESSEL_BF)]


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
