"""Analog electrical components (MSL ``Modelica.Electrical.Analog`` conventions).

Pins ``p``/``n`` carry the potential ``v`` [V] and the current ``i`` [A] flowing *into*
the component. A two-pin element has one edge ``p -> n`` in the linear graph; its voltage
``v = p.v - n.v`` and current ``i = p.i`` (from ``p`` through the element to ``n``).
"""

from __future__ import annotations

import casadi as cs

import acausal as ac
from acausal import Edge, Parameter, Port, TreePriority, Variable, der
from acausal.domains import Electrical, Rotational, Thermal

__all__ = [
    "Pin",
    "OnePort",
    "Ground",
    "Resistor",
    "Capacitor",
    "Inductor",
    "ConstantVoltage",
    "StepVoltage",
    "SineVoltage",
    "ConstantCurrent",
    "Diode",
    "VoltageSensor",
    "CurrentSensor",
    "EMF",
    "HeatingResistor",
]


def Pin(doc: str = "") -> Port:
    """An electrical port declaration."""
    return Port(Electrical, doc)


class OnePort(ac.Component):
    """Partial two-pin element: one edge ``p -> n``, voltage drop ``v`` and current ``i``.

    Ports
    -----
    p, n : electrical pins (``v`` [V], ``i`` [A] into the pin).

    Variables
    ---------
    v : voltage drop ``p.v - n.v`` [V]
    i : current from ``p`` through the element to ``n`` [A]
    """

    p = Pin("positive pin")
    n = Pin("negative pin")
    v = Variable(unit="V", doc="voltage drop p.v - n.v")
    i = Variable(unit="A", doc="current from p to n through the element")
    edges = [Edge("p", "n", TreePriority.NEUTRAL)]

    def equations(self):
        return [self.v == self.p.v - self.n.v, self.i == self.p.i]


class Ground(ac.Component):
    """Electrical ground: the pin's potential is zero (connects it to the datum).

    Every electrical circuit needs one.
    """

    p = Pin("ground pin")
    edges = [Edge(ac.DATUM, "p", TreePriority.ACROSS_SOURCE)]

    def equations(self):
        return [self.p.v == 0]


class Resistor(OnePort):
    """Ideal linear resistor ``v = R i``.

    Parameters
    ----------
    R : resistance [Ohm]
    """

    R = Parameter(1.0, unit="Ohm", doc="resistance", min=0.0)

    def equations(self):
        return [self.v == self.R * self.i]


class Capacitor(OnePort):
    """Ideal capacitor ``i = C dv/dt``. Give ``v=...`` for an initial voltage.

    Parameters
    ----------
    C : capacitance [F]
    """

    C = Parameter(1.0, unit="F", doc="capacitance", min=0.0, min_inclusive=False)
    edges = [Edge("p", "n", TreePriority.ACROSS_STORE)]

    def equations(self):
        return [self.i == self.C * der(self.v)]


class Inductor(OnePort):
    """Ideal inductor ``v = L di/dt``. Give ``i=...`` for an initial current.

    Parameters
    ----------
    L : inductance [H]
    """

    L = Parameter(1.0, unit="H", doc="inductance", min=0.0, min_inclusive=False)
    edges = [Edge("p", "n", TreePriority.THROUGH_STORE)]

    def equations(self):
        return [self.v == self.L * der(self.i)]


class ConstantVoltage(OnePort):
    """Ideal voltage source ``v = V`` (``V`` may be a function of time).

    Parameters
    ----------
    V : source voltage [V], constant or ``f(t)``
    """

    V = Parameter(1.0, unit="V", doc="source voltage", signal=True)
    edges = [Edge("p", "n", TreePriority.ACROSS_SOURCE)]

    def equations(self):
        return [self.v == self.V]


class StepVoltage(OnePort):
    """Voltage step: ``v = offset`` before ``startTime``, ``offset + V`` after.

    Parameters
    ----------
    V : height of the step [V]
    offset : voltage before the step [V]
    startTime : time of the step [s]
    """

    V = Parameter(1.0, unit="V", doc="height of the step")
    offset = Parameter(0.0, unit="V", doc="voltage offset")
    startTime = Parameter(0.0, unit="s", doc="time of the step")
    edges = [Edge("p", "n", TreePriority.ACROSS_SOURCE)]

    def equations(self):
        return [self.v == self.offset + cs.if_else(self.time >= self.startTime, self.V, 0.0)]


class SineVoltage(OnePort):
    """Sine voltage ``v = offset + V sin(2 pi f (t - startTime) + phase)`` after startTime.

    Parameters
    ----------
    V : amplitude [V]
    f : frequency [Hz]
    phase : phase [rad]
    offset : offset [V]
    startTime : start time [s]
    """

    V = Parameter(1.0, unit="V", doc="amplitude")
    f = Parameter(1.0, unit="Hz", doc="frequency", min=0.0)
    phase = Parameter(0.0, unit="rad", doc="phase")
    offset = Parameter(0.0, unit="V", doc="offset")
    startTime = Parameter(0.0, unit="s", doc="start time")
    edges = [Edge("p", "n", TreePriority.ACROSS_SOURCE)]

    def equations(self):
        t = self.time
        wave = self.V * cs.sin(2 * cs.pi * self.f * (t - self.startTime) + self.phase)
        return [self.v == self.offset + cs.if_else(t >= self.startTime, wave, 0.0)]


class ConstantCurrent(OnePort):
    """Ideal current source ``i = I`` from ``p`` to ``n`` (``I`` may be ``f(t)``).

    Parameters
    ----------
    I : source current [A], constant or ``f(t)``
    """

    I = Parameter(1.0, unit="A", doc="source current", signal=True)  # noqa: E741
    edges = [Edge("p", "n", TreePriority.THROUGH_SOURCE)]

    def equations(self):
        return [self.i == self.I]


class Diode(OnePort):
    """Exponential diode with parallel leakage conductance (MSL ``Analog.Basic.Diode``).

    ``i = Ids (exp(v/Vt) - 1) + v/R``, linearly continued above ``v/Vt > Maxexp`` to avoid
    overflow.

    Parameters
    ----------
    Ids : saturation current [A]
    Vt : thermal voltage [V]
    Maxexp : maximum exponent before linear continuation [1]
    R : parallel ohmic resistance [Ohm]
    """

    Ids = Parameter(1e-6, unit="A", doc="saturation current", min=0.0)
    Vt = Parameter(0.04, unit="V", doc="thermal voltage", min=0.0, min_inclusive=False)
    Maxexp = Parameter(15.0, unit="1", doc="max exponent", min=0.0)
    R = Parameter(1e8, unit="Ohm", doc="parallel leakage resistance", min=0.0,
                  min_inclusive=False)

    def equations(self):
        x = self.v / self.Vt
        # the linear continuation joins the exponential with its slope (C1, MSL's
        # smooth(1, ...)): no event is needed where it takes over
        expo = ac.no_event(cs.if_else(
            x > self.Maxexp,
            cs.exp(self.Maxexp) * (1 + x - self.Maxexp),
            cs.exp(x),
        ))
        return [self.i == self.Ids * (expo - 1) + self.v / self.R]


class VoltageSensor(OnePort):
    """Ideal voltmeter: draws no current; its output is ``v = p.v - n.v`` [V]."""

    edges = [Edge("p", "n", TreePriority.THROUGH_SOURCE)]

    def equations(self):
        return [self.i == 0]


class CurrentSensor(OnePort):
    """Ideal ammeter: no voltage drop; its output is ``i`` from ``p`` to ``n`` [A]."""

    edges = [Edge("p", "n", TreePriority.ACROSS_SOURCE)]

    def equations(self):
        return [self.v == 0]


class EMF(OnePort):
    """Electromotive force: ideal electro-mechanical converter (DC machine air gap).

    ``v = k w`` and the torque ``k i`` acts on the flange (``flange.tau = -k i`` is the cut
    torque into the component). The reaction acts on the inertial frame.

    Ports
    -----
    p, n : electrical pins; flange : rotational flange.

    Parameters
    ----------
    k : transformation coefficient [N.m/A] (= [V.s/rad])

    Variables
    ---------
    phi : rotor angle [rad]; w : angular velocity [rad/s]; tau : torque on the flange [N.m]
    """

    k = Parameter(1.0, unit="N.m/A", doc="transformation coefficient")
    flange = Port(Rotational, "shaft flange")
    phi = Variable(unit="rad", doc="rotor angle")
    w = Variable(unit="rad/s", doc="rotor angular velocity")
    tau = Variable(unit="N.m", doc="electrical torque acting on the flange")
    edges = [
        Edge("p", "n", TreePriority.NEUTRAL),
        Edge(ac.DATUM, "flange", TreePriority.NEUTRAL),
    ]

    def equations(self):
        return [
            self.phi == self.flange.phi,
            self.w == der(self.phi),
            self.v == self.k * self.w,
            self.tau == self.k * self.i,
            self.flange.tau == -self.tau,
        ]


class HeatingResistor(OnePort):
    """Temperature-dependent resistor whose losses heat its thermal port.

    ``R = R_ref (1 + alpha (T_heatPort - T_ref))``, ``v = R i``, and the loss power
    ``v i`` leaves through ``heatPort`` (``heatPort.Q_flow = -v i``).

    Parameters
    ----------
    R_ref : resistance at T_ref [Ohm]
    T_ref : reference temperature [K]
    alpha : temperature coefficient [1/K]
    """

    R_ref = Parameter(1.0, unit="Ohm", doc="resistance at T_ref", min=0.0)
    T_ref = Parameter(300.15, unit="K", doc="reference temperature", min=0.0,
                      min_inclusive=False)
    alpha = Parameter(0.0, unit="1/K", doc="temperature coefficient of resistance")
    heatPort = Port(Thermal, "thermal port receiving the losses")
    R = Variable(unit="Ohm", doc="actual resistance")
    LossPower = Variable(unit="W", doc="dissipated power")
    edges = [
        Edge("p", "n", TreePriority.NEUTRAL),
        Edge(ac.DATUM, "heatPort", TreePriority.THROUGH_SOURCE),
    ]

    def equations(self):
        return [
            self.R == self.R_ref * (1 + self.alpha * (self.heatPort.T - self.T_ref)),
            self.v == self.R * self.i,
            self.LossPower == self.v * self.i,
            self.heatPort.Q_flow == -self.LossPower,
        ]


# --------------------------------------------------------------------------------------
# Bridges to signal blocks (components.blocks). Naming: ``Signal`` + the physical
# component; the signal port has the name of the quantity, so results keep their paths.
# --------------------------------------------------------------------------------------

__all__ += ["SignalVoltage", "SignalCurrent", "SignalVoltageSensor", "SignalCurrentSensor"]


class SignalVoltage(OnePort):
    """Voltage source driven by a signal: ``p.v - n.v = v`` (the input ``v`` [V]).

    Ports
    -----
    p, n : electrical pins; v : signal input, the source voltage [V]

    Variables
    ---------
    i : current from ``p`` through the source to ``n`` [A]
    """

    v = ac.RealInput("voltage between p and n [V]")
    edges = [Edge("p", "n", TreePriority.ACROSS_SOURCE)]


class SignalCurrent(OnePort):
    """Current source driven by a signal: the input ``i`` [A] flows from ``p`` through the
    source to ``n``.

    Ports
    -----
    p, n : electrical pins; i : signal input, the source current [A]

    Variables
    ---------
    v : voltage drop ``p.v - n.v`` [V]
    """

    i = ac.RealInput("current from p through the source to n [A]")
    edges = [Edge("p", "n", TreePriority.THROUGH_SOURCE)]


class SignalVoltageSensor(OnePort):
    """Ideal voltmeter with a signal output ``v = p.v - n.v`` [V] (draws no current)."""

    v = ac.RealOutput("measured voltage p.v - n.v [V]")
    edges = [Edge("p", "n", TreePriority.THROUGH_SOURCE)]

    def equations(self):
        return [self.i == 0]


class SignalCurrentSensor(OnePort):
    """Ideal ammeter with a signal output ``i`` [A] from ``p`` to ``n`` (no voltage drop)."""

    i = ac.RealOutput("measured current from p to n [A]")
    edges = [Edge("p", "n", TreePriority.ACROSS_SOURCE)]

    def equations(self):
        return [self.v == 0]


# --------------------------------------------------------------------------------------
# Ideal switching elements (MSL Modelica.Electrical.Analog.Ideal): a piecewise-linear
# characteristic parametrised by s, whose sign decides the mode; the relation s < 0 is a
# state event, so the switching instants are located and the result does not depend on
# the output grid.
# --------------------------------------------------------------------------------------
class IdealDiode(OnePort):
    """Ideal diode: conducting (``v = Ron i``) or blocking (``i = Goff v``), switched at the
    instant its current would reverse or its voltage would become positive.

    ``v = s (off ? 1 : Ron) + Vknee``, ``i = s (off ? Goff : 1) + Goff Vknee``,
    ``off = s < 0`` (MSL ``Ideal.IdealDiode``).

    Parameters
    ----------
    Ron : forward state-on differential resistance [Ohm]
    Goff : backward state-off conductance [S]
    Vknee : forward threshold voltage [V]

    Variables
    ---------
    s : auxiliary variable of the characteristic (current [A] when on, voltage [V] when off)
    """

    Ron = Parameter(1e-5, unit="Ohm", doc="forward state-on differential resistance", min=0.0)
    Goff = Parameter(1e-5, unit="S", doc="backward state-off conductance", min=0.0)
    Vknee = Parameter(0.0, unit="V", doc="forward threshold voltage", min=0.0)
    s = Variable(doc="auxiliary variable of the characteristic: the current [A] while "
                     "conducting, the voltage [V] while blocking (no single unit)")

    def equations(self):
        off = self.s < 0
        return [self.v == self.s * cs.if_else(off, 1.0, self.Ron) + self.Vknee,
                self.i == self.s * cs.if_else(off, self.Goff, 1.0) + self.Goff * self.Vknee]


class ControlledIdealSwitch(OnePort):
    """Ideal switch closed while its control signal exceeds ``level`` (MSL
    ``Ideal.ControlledIdealTwoWaySwitch``' one-way form): ``v = Ron i`` when closed,
    ``i = Goff v`` when open. A control that is a function of time (a pulse) switches at
    time events; one computed by the model, at state events.

    Ports
    -----
    p, n : electrical pins; control : signal input

    Parameters
    ----------
    level : switching threshold of the control signal [1]
    Ron : closed-switch resistance [Ohm]
    Goff : opened-switch conductance [S]
    """

    control = ac.RealInput("closed while control > level")
    level = Parameter(0.5, unit="1", doc="switching threshold of the control signal")
    Ron = Parameter(1e-5, unit="Ohm", doc="closed-switch resistance", min=0.0)
    Goff = Parameter(1e-5, unit="S", doc="opened-switch conductance", min=0.0)
    s = Variable(doc="auxiliary variable of the characteristic: the current [A] while "
                     "closed, the voltage [V] while open (no single unit)")

    def equations(self):
        closed = self.control > self.level
        return [self.v == self.s * cs.if_else(closed, self.Ron, 1.0),
                self.i == self.s * cs.if_else(closed, 1.0, self.Goff)]


__all__ += ["IdealDiode", "ControlledIdealSwitch"]


class IdealThyristor(OnePort):
    """Ideal thyristor (MSL ``Ideal.IdealThyristor``): blocking until fired, conducting
    until its current falls to zero.

    The characteristic is the :class:`IdealDiode`'s, ``v = s (off ? 1 : Ron) + Vknee``,
    ``i = s (off ? Goff : 1) + Goff Vknee``, but ``off`` is a discrete state (MSL:
    ``off = s < 0 or pre(off) and not fire``):

    * it turns **on** when the gate fires (``fire > level``) while it is forward biased
      (``s > 0``, i.e. ``v > Vknee``): at the gate's rising edge if biased then, or when
      the bias becomes positive while the gate is high;
    * it turns **off** when its current ``s`` crosses zero, and stays off, whatever the
      gate, until it is fired again.

    Both are events: state events where the bias or the current crosses zero, time
    events at the edges of a gate driven by a function of time (such as a
    :class:`components.blocks.Pulse`).

    Ports
    -----
    p, n : anode and cathode; fire : signal input, the gate (fired while > level)

    Parameters
    ----------
    Ron : forward state-on differential resistance [Ohm], >= 0
    Goff : backward state-off conductance [S], >= 0
    Vknee : forward threshold voltage [V], >= 0
    level : firing threshold of the gate signal [1]

    Variables
    ---------
    s : auxiliary variable of the characteristic (current when on, voltage when off) [1];
    off : 1 blocking, 0 conducting (discrete, starts blocking)
    """

    fire = ac.RealInput("gate signal: fires while fire > level")
    Ron = Parameter(1e-5, unit="Ohm", doc="forward state-on differential resistance", min=0.0)
    Goff = Parameter(1e-5, unit="S", doc="backward state-off conductance", min=0.0)
    Vknee = Parameter(0.0, unit="V", doc="forward threshold voltage", min=0.0)
    level = Parameter(0.5, unit="1", doc="firing threshold of the gate signal")
    s = Variable(doc="auxiliary variable of the characteristic: the current [A] while "
                     "conducting, the voltage [V] while blocking (no single unit)")
    off = Variable(start=1.0, discrete=True, unit="1", doc="1 blocking, 0 conducting")

    def equations(self):
        off = self.off > 0.5
        gate = self.fire > self.level
        # each relation is watched only where it can switch the thyristor (elsewhere its
        # indicator is a constant): the current while on, the bias while off and fired
        current_reversed = cs.if_else(off, 1.0, self.s) < 0
        forward_biased = cs.if_else(cs.logic_and(off, gate), self.s, -1.0) > 0
        return [self.v == self.s * cs.if_else(off, 1.0, self.Ron) + self.Vknee,
                self.i == self.s * cs.if_else(off, self.Goff, 1.0) + self.Goff * self.Vknee,
                ac.when(current_reversed, ac.assign(self.off, 1.0)),
                ac.when(cs.logic_and(gate, forward_biased), ac.assign(self.off, 0.0))]


__all__ += ["IdealThyristor"]


# --------------------------------------------------------------------------------------
# Conductor, variable resistor, two-ports (MSL Modelica.Electrical.Analog.Basic) and the
# ideal operational amplifier (Ideal.IdealOpAmp3Pin)
# --------------------------------------------------------------------------------------

__all__ += ["Conductor", "VariableResistor", "TwoPort", "Transformer", "IdealTransformer",
            "Gyrator", "VCV", "VCC", "CCV", "CCC", "IdealOpAmp3Pin"]


class Conductor(OnePort):
    """Ideal linear conductor ``i = G v``.

    Parameters
    ----------
    G : conductance [S], >= 0
    """

    G = Parameter(1.0, unit="S", doc="conductance", min=0.0)

    def equations(self):
        return [self.i == self.G * self.v]


class VariableResistor(OnePort):
    """Resistor whose resistance is a signal: ``v = R i`` (MSL ``VariableResistor``).

    Ports
    -----
    p, n : electrical pins; R : signal input, the resistance [Ohm] (keep it >= 0)
    """

    R = ac.RealInput("resistance [Ohm]")

    def equations(self):
        return [self.v == self.R * self.i]


class TwoPort(ac.Component):
    """Partial element with two pin pairs (MSL ``Interfaces.TwoPort``): port 1
    (``p1``, ``n1``) and port 2 (``p2``, ``n2``), one edge each.

    Variables
    ---------
    v1, v2 : voltage drops ``p1.v - n1.v``, ``p2.v - n2.v`` [V]
    i1, i2 : currents into ``p1`` and ``p2`` (out of ``n1``, ``n2``) [A]
    """

    p1 = Pin("positive pin of port 1")
    n1 = Pin("negative pin of port 1")
    p2 = Pin("positive pin of port 2")
    n2 = Pin("negative pin of port 2")
    v1 = Variable(unit="V", doc="voltage drop of port 1")
    v2 = Variable(unit="V", doc="voltage drop of port 2")
    i1 = Variable(unit="A", doc="current into p1")
    i2 = Variable(unit="A", doc="current into p2")
    edges = [Edge("p1", "n1", TreePriority.NEUTRAL), Edge("p2", "n2", TreePriority.NEUTRAL)]

    def equations(self):
        return [self.v1 == self.p1.v - self.n1.v, self.v2 == self.p2.v - self.n2.v,
                self.i1 == self.p1.i, self.i2 == self.p2.i]


class Transformer(TwoPort):
    """Two coupled inductors (MSL ``Basic.Transformer``)::

        v1 = L1 di1/dt + M di2/dt,     v2 = M di1/dt + L2 di2/dt

    Parameters
    ----------
    L1, L2 : primary and secondary inductance [H], > 0
    M : mutual inductance [H], ``M^2 < L1 L2`` (a perfectly coupled pair has no
        magnetising current of its own: use :class:`IdealTransformer`); default 0.5, a
        coupling factor of 0.5 with the default inductances (MSL has start values only,
        1 for all three: a perfect coupling, whose currents its equations leave open)
    """

    L1 = Parameter(1.0, unit="H", doc="primary inductance", min=0.0, min_inclusive=False)
    L2 = Parameter(1.0, unit="H", doc="secondary inductance", min=0.0, min_inclusive=False)
    M = Parameter(0.5, unit="H", doc="mutual inductance")
    edges = [Edge("p1", "n1", TreePriority.THROUGH_STORE),
             Edge("p2", "n2", TreePriority.THROUGH_STORE)]

    def check_parameters(self, p):
        if p.M**2 >= p.L1 * p.L2:
            return (f"M = {p.M} H is not below sqrt(L1 L2) = {(p.L1 * p.L2) ** 0.5:g} H: "
                    "the coupling factor M/sqrt(L1 L2) must be below 1 (use "
                    "IdealTransformer for a perfect coupling)")
        return None

    def equations(self):
        di1, di2 = der(self.i1), der(self.i2)
        return [self.v1 == self.L1 * di1 + self.M * di2,
                self.v2 == self.M * di1 + self.L2 * di2]


class IdealTransformer(TwoPort):
    """Ideal transformer with turns ratio ``n`` (MSL ``Ideal.IdealTransformer`` without
    magnetisation): ``v1 = n v2``, ``i2 = -n i1`` (no power is stored or lost).

    Parameters
    ----------
    n : turns ratio primary : secondary [1], nonzero
    """

    n = Parameter(1.0, unit="1", doc="turns ratio", nonzero=True)

    def equations(self):
        return [self.v1 == self.n * self.v2, self.i2 == -self.n * self.i1]


class Gyrator(TwoPort):
    """Gyrator (MSL ``Basic.Gyrator``): ``i1 = G2 v2``, ``i2 = -G1 v1``. Terminated by a
    capacitor ``C`` at port 2, port 1 behaves as an inductor ``L = C / (G1 G2)``.

    Parameters
    ----------
    G1, G2 : gyration conductances [S]
    """

    G1 = Parameter(1.0, unit="S", doc="gyration conductance of port 1")
    G2 = Parameter(1.0, unit="S", doc="gyration conductance of port 2")

    def equations(self):
        return [self.i1 == self.G2 * self.v2, self.i2 == -self.G1 * self.v1]


class VCV(TwoPort):
    """Voltage-controlled voltage source: ``v2 = gain v1``; port 1 draws no current.

    Parameters
    ----------
    gain : voltage gain [1]
    """

    gain = Parameter(1.0, unit="1", doc="voltage gain")
    edges = [Edge("p1", "n1", TreePriority.THROUGH_SOURCE),
             Edge("p2", "n2", TreePriority.ACROSS_SOURCE)]

    def equations(self):
        return [self.i1 == 0, self.v2 == self.gain * self.v1]


class VCC(TwoPort):
    """Voltage-controlled current source: ``i2 = transConductance v1`` (into ``p2``);
    port 1 draws no current.

    Parameters
    ----------
    transConductance : [S]
    """

    transConductance = Parameter(1.0, unit="S", doc="transconductance")
    edges = [Edge("p1", "n1", TreePriority.THROUGH_SOURCE),
             Edge("p2", "n2", TreePriority.THROUGH_SOURCE)]

    def equations(self):
        return [self.i1 == 0, self.i2 == self.transConductance * self.v1]


class CCV(TwoPort):
    """Current-controlled voltage source: ``v2 = transResistance i1``; port 1 has no
    voltage drop.

    Parameters
    ----------
    transResistance : [Ohm]
    """

    transResistance = Parameter(1.0, unit="Ohm", doc="transresistance")
    edges = [Edge("p1", "n1", TreePriority.ACROSS_SOURCE),
             Edge("p2", "n2", TreePriority.ACROSS_SOURCE)]

    def equations(self):
        return [self.v1 == 0, self.v2 == self.transResistance * self.i1]


class CCC(TwoPort):
    """Current-controlled current source: ``i2 = gain i1`` (into ``p2``); port 1 has no
    voltage drop.

    Parameters
    ----------
    gain : current gain [1]
    """

    gain = Parameter(1.0, unit="1", doc="current gain")
    edges = [Edge("p1", "n1", TreePriority.ACROSS_SOURCE),
             Edge("p2", "n2", TreePriority.THROUGH_SOURCE)]

    def equations(self):
        return [self.v1 == 0, self.i2 == self.gain * self.i1]


class IdealOpAmp3Pin(ac.Component):
    """Ideal operational amplifier with three pins (MSL ``Ideal.IdealOpAmp3Pin``): a
    nullator between the inputs (no voltage between them, no current into them) and a
    norator from ground to the output (whatever voltage and current the circuit needs).
    It works only in a circuit that feeds the output back to the inputs (an inverting or
    non-inverting amplifier, an integrator); without feedback the circuit is singular.
    The nullator cannot tell negative feedback from positive: fed back to ``in_p`` (a
    Schmitt trigger's wiring), it gives the circuit's unstable equilibrium, not the
    saturated output of a real amplifier (as MSL's).

    Ports
    -----
    in_p, in_n : non-inverting and inverting inputs; out : output

    Variables
    ---------
    v_in : in_p.v - in_n.v (zero) [V]; v_out, i_out : the output's potential and the
    current it delivers [V], [A]
    """

    in_p = Pin("non-inverting input")
    in_n = Pin("inverting input")
    out = Pin("output")
    v_in = Variable(unit="V", doc="input voltage in_p.v - in_n.v (zero)")
    v_out = Variable(unit="V", doc="output potential")
    i_out = Variable(unit="A", doc="current delivered at the output")
    edges = [Edge("in_p", "in_n", TreePriority.ACROSS_SOURCE),
             Edge(ac.DATUM, "out", TreePriority.NEUTRAL)]

    def equations(self):
        return [self.v_in == self.in_p.v - self.in_n.v, self.v_in == 0, self.in_p.i == 0,
                self.v_out == self.out.v, self.i_out == -self.out.i]
