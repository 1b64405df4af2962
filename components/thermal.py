"""Lumped heat transfer (MSL ``Modelica.Thermal.HeatTransfer`` conventions).

Heat ports ``port``/``port_a``/``port_b`` carry the temperature ``T`` [K] and the heat flow
rate ``Q_flow`` [W] *into* the component. The datum is absolute zero.
"""

from __future__ import annotations

from typing import Any

import acausal as ac
from acausal import DATUM, Edge, Parameter, Port, TreePriority, Variable, der
from acausal.domains import Thermal

__all__ = ["HeatPort", "HeatCapacitor", "Element1D", "ThermalConductor", "ThermalResistor",
           "Convection", "BodyRadiation", "SIGMA", "FixedTemperature", "HeatFlow",
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


class Element1D(ac.Component):
    """Partial two-port element (MSL ``Interfaces.Element1D``): heat ``Q_flow`` flows
    from ``port_a`` to ``port_b`` through it (none is stored), driven by
    ``dT = port_a.T - port_b.T``. A subclass adds the law relating the two.

    Variables
    ---------
    dT : port_a.T - port_b.T [K]; Q_flow : heat flow from port_a to port_b [W]
    """

    port_a = HeatPort("heat port a")
    port_b = HeatPort("heat port b")
    dT = Variable(unit="K", doc="temperature difference port_a.T - port_b.T")
    Q_flow = Variable(unit="W", doc="heat flow rate from port_a to port_b")
    edges = [Edge("port_a", "port_b", TreePriority.NEUTRAL)]

    def equations(self):
        return [self.dT == self.port_a.T - self.port_b.T, self.Q_flow == self.port_a.Q_flow,
                *self.law()]

    def law(self) -> list[Any]:
        """The equations relating ``Q_flow`` and the port temperatures."""
        raise NotImplementedError(
            f"{type(self).__name__} is partial (it has no law relating Q_flow and dT): use "
            "ThermalConductor, ThermalResistor, Convection or BodyRadiation, or a subclass "
            "of Element1D whose law() returns that equation")


class ThermalConductor(Element1D):
    """Lumped thermal conduction ``Q_flow = G (port_a.T - port_b.T)``.

    Parameters
    ----------
    G : thermal conductance [W/K]
    """

    G = Parameter(1.0, unit="W/K", doc="thermal conductance", min=0.0)

    def law(self):
        return [self.Q_flow == self.G * self.dT]


class ThermalResistor(Element1D):
    """Lumped thermal resistance ``dT = R Q_flow`` (MSL ``ThermalResistor``).

    Parameters
    ----------
    R : thermal resistance [K/W], > 0
    """

    R = Parameter(1.0, unit="K/W", doc="thermal resistance", min=0.0, min_inclusive=False)

    def law(self):
        return [self.dT == self.R * self.Q_flow]


class Convection(Element1D):
    """Heat convection between a solid surface (``port_a``) and a fluid (``port_b``),
    ``Q_flow = Gc dT`` (MSL ``Convection``, whose ports are ``solid`` and ``fluid``).

    Parameters
    ----------
    Gc : convective thermal conductance [W/K], the heat transfer coefficient times the
        area, ``h A``; constant or ``f(t)`` (MSL takes it as a signal input:
        :class:`SignalConvection`); a function is checked against the range over the
        run, as a constant is (a negative Gc pumps heat from the colder port to the
        warmer)
    """

    Gc = Parameter(1.0, unit="W/K", doc="convective thermal conductance h A", signal=True,
                   min=0.0)

    def law(self):
        return [self.Q_flow == self.Gc * self.dT]


#: Stefan-Boltzmann constant [W/(m2.K4)] (CODATA 2018, exact in the SI since 2019)
SIGMA = 5.670374419e-8


class BodyRadiation(Element1D):
    """Radiation between two surfaces, ``Q_flow = Gr sigma (port_a.T^4 - port_b.T^4)``
    (MSL ``BodyRadiation``; ``sigma`` the Stefan-Boltzmann constant).

    Parameters
    ----------
    Gr : net radiation conductance [m2]: for a small body of area ``A`` and emissivity
        ``eps`` in a large enclosure, ``eps A``
    """

    Gr = Parameter(1.0, unit="m2", doc="net radiation conductance", min=0.0)

    def law(self):
        return [self.Q_flow == self.Gr * SIGMA * (self.port_a.T**4 - self.port_b.T**4)]


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


__all__ += ["SignalConvection"]


class SignalConvection(Element1D):
    """Heat convection whose conductance is a signal (MSL ``Convection``, whose ``Gc`` is a
    signal input): ``Q_flow = Gc dT`` between the solid surface (``port_a``) and the
    fluid (``port_b``). For a conductance that a block computes (from a flow speed, a fan
    command); a constant or a function of time is :class:`Convection`'s parameter.

    Ports
    -----
    port_a, port_b : solid and fluid; Gc : signal input, the conductance ``h A`` [W/K]
    (keep it >= 0)
    """

    Gc = ac.RealInput("convective thermal conductance h A [W/K]")

    def law(self):
        return [self.Q_flow == self.Gc * self.dT]
