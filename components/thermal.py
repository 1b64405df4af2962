"""Lumped heat transfer (MSL ``Modelica.Thermal.HeatTransfer`` conventions).

Heat ports ``port``/``port_a``/``port_b`` carry the temperature ``T`` [K] and the heat flow
rate ``Q_flow`` [W] *into* the component. The datum is absolute zero.
"""

from __future__ import annotations

import acausal as ac
from acausal import DATUM, Edge, Parameter, Port, TreePriority, Variable, der
from acausal.domains import Thermal

__all__ = ["HeatPort", "HeatCapacitor", "ThermalConductor", "FixedTemperature", "HeatFlow",
           "TemperatureSensor"]


def HeatPort(doc: str = "") -> Port:
    """A thermal port declaration."""
    return Port(Thermal, doc)


class HeatCapacitor(ac.Component):
    """Lumped thermal capacity ``C dT/dt = port.Q_flow``. Give ``T=...`` to start hot.

    Parameters
    ----------
    C : heat capacity [J/K]

    Variables
    ---------
    T : temperature [K]; der_T : its time derivative [K/s]
    """

    C = Parameter(1.0, unit="J/K", doc="heat capacity", min=0.0, min_inclusive=False)
    port = HeatPort("heat port")
    T = Variable(unit="K", doc="temperature", start=293.15, state_priority=1, min=0.0)
    der_T = Variable(unit="K/s", doc="time derivative of temperature")
    edges = [Edge(DATUM, "port", TreePriority.ACROSS_STORE)]

    def equations(self):
        return [
            self.T == self.port.T,
            self.der_T == der(self.T),
            self.C * self.der_T == self.port.Q_flow,
        ]


class ThermalConductor(ac.Component):
    """Lumped thermal conduction ``Q_flow = G (port_a.T - port_b.T)``.

    Parameters
    ----------
    G : thermal conductance [W/K]

    Variables
    ---------
    dT : port_a.T - port_b.T [K]; Q_flow : heat flow from port_a to port_b [W]
    """

    G = Parameter(1.0, unit="W/K", doc="thermal conductance", min=0.0)
    port_a = HeatPort("heat port a")
    port_b = HeatPort("heat port b")
    dT = Variable(unit="K", doc="temperature difference port_a.T - port_b.T")
    Q_flow = Variable(unit="W", doc="heat flow rate from port_a to port_b")
    edges = [Edge("port_a", "port_b", TreePriority.NEUTRAL)]

    def equations(self):
        return [
            self.dT == self.port_a.T - self.port_b.T,
            self.Q_flow == self.port_a.Q_flow,
            self.Q_flow == self.G * self.dT,
        ]


class FixedTemperature(ac.Component):
    """Prescribed temperature at the port (``T`` may be a function of time).

    Parameters
    ----------
    T : temperature [K], constant or ``f(t)``
    """

    T = Parameter(293.15, unit="K", doc="fixed temperature", signal=True, min=0.0,
                  min_inclusive=False)
    port = HeatPort("heat port")
    edges = [Edge(DATUM, "port", TreePriority.ACROSS_SOURCE)]

    def equations(self):
        return [self.port.T == self.T]


class HeatFlow(ac.Component):
    """Prescribed heat flow ``Q_flow`` into the connected component (``port.Q_flow = -Q_flow``).

    Parameters
    ----------
    Q_flow : heat flow rate [W], constant or ``f(t)``
    """

    Q_flow = Parameter(0.0, unit="W", doc="heat flow rate delivered", signal=True)
    port = HeatPort("heat port")
    edges = [Edge(DATUM, "port", TreePriority.THROUGH_SOURCE)]

    def equations(self):
        return [self.port.Q_flow == -self.Q_flow]


class TemperatureSensor(ac.Component):
    """Ideal thermometer: absolute temperature ``T`` [K] (no heat flow)."""

    port = HeatPort("measured port")
    T = Variable(unit="K", doc="measured temperature", min=0.0)
    edges = [Edge(DATUM, "port", TreePriority.THROUGH_SOURCE)]

    def equations(self):
        return [self.T == self.port.T, self.port.Q_flow == 0]


# --------------------------------------------------------------------------------------
# Bridges to signal blocks (components.blocks). Naming: ``Signal`` + the physical
# component; the signal port has the name of the quantity, so results keep their paths.
# --------------------------------------------------------------------------------------

__all__ += ["SignalTemperature", "SignalHeatFlow", "SignalTemperatureSensor"]


class SignalTemperature(ac.Component):
    """Temperature at the port prescribed by a signal (MSL ``PrescribedTemperature``).

    Ports
    -----
    port : heat port; T : signal input, the temperature [K]
    """

    T = ac.RealInput("prescribed temperature [K]")
    port = HeatPort("heat port")
    edges = [Edge(DATUM, "port", TreePriority.ACROSS_SOURCE)]

    def equations(self):
        return [self.port.T == self.T]


class SignalHeatFlow(ac.Component):
    """Heat flow into the connected component prescribed by a signal (MSL
    ``PrescribedHeatFlow``): ``port.Q_flow = -Q_flow``.

    Ports
    -----
    port : heat port; Q_flow : signal input, the heat flow rate delivered [W]
    """

    Q_flow = ac.RealInput("heat flow rate delivered to the port [W]")
    port = HeatPort("heat port")
    edges = [Edge(DATUM, "port", TreePriority.THROUGH_SOURCE)]

    def equations(self):
        return [self.port.Q_flow == -self.Q_flow]


class SignalTemperatureSensor(ac.Component):
    """Ideal thermometer with a signal output ``T`` [K] (no heat flow)."""

    port = HeatPort("measured port")
    T = ac.RealOutput("measured temperature [K]")
    edges = [Edge(DATUM, "port", TreePriority.THROUGH_SOURCE)]

    def equations(self):
        return [self.T == self.port.T, self.port.Q_flow == 0]
