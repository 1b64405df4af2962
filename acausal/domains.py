"""Physical domains: one across and one through quantity each (vector-capable, with units).

A domain is the connector convention of Modelica: ports of the same domain connect; the
across variable is equal at a connection vertex and the through variables sum to zero there
(vertex postulate). Each domain has its own datum vertex (ground, inertial frame, absolute
zero), whose across value is zero.
"""

from __future__ import annotations

import functools

from .records import record

__all__ = [
    "Quantity",
    "Domain",
    "Electrical",
    "Translational",
    "Rotational",
    "Thermal",
    "Signal",
    "signal_domain",
    "GRAPH_DOMAINS",
]


@record(frozen=True)
class Quantity:
    """One port quantity: its name on the port, its size (1 = scalar) and its SI unit.

    ``plausible`` is the range ``(low, high)`` (either may be None) outside which an
    absolute value of the quantity is most likely a mistake: the units pass warns about
    parameters and fixed start values of that dimension declared with ``min >= 0``
    (absolute quantities) that fall outside it (a temperature below 1 K).
    """

    name: str
    unit: str
    size: int = 1
    doc: str = ""
    plausible: tuple[float | None, float | None] | None = None


@record(frozen=True)
class Domain:
    """A physical domain: the across/through pair carried by its ports.

    Parameters
    ----------
    name : str
        Human-readable name, used in error messages ("electrical").
    across : Quantity
        Potential-like quantity, equal at a connection (voltage, position, temperature).
    through : Quantity
        Flow-like quantity, summing to zero at a connection (current, force, heat flow).
        Sign convention (Modelica): positive when flowing *into* the component at the port.
    datum : str
        What the datum vertex is, for messages ("ground", "fixed frame").
    datum_component : str
        Library component that connects a port to the datum (named in hints).
    graph : bool
        Whether the generic linear-graph pass handles the domain (the 3D frame domain has
        its own mechanism pass, since orientations compose by products, not sums).
    causal : bool
        Signal connectors (Modelica's ``RealInput``/``RealOutput``): an output port
        determines the value of its connection set, inputs read it; the through quantity
        is unused.
    outputs : tuple of Quantity
        Further quantities its ports give in results (a domain pass's outputs
        ``<port>.<name>``: a 3D frame's orientation, velocities, accelerations), for
        their units.
    """

    name: str
    across: Quantity
    through: Quantity
    datum: str = "datum"
    datum_component: str = "a fixed reference"
    graph: bool = True  # False: handled by its own pass (3D frames), not the generic graph
    causal: bool = False
    outputs: tuple[Quantity, ...] = ()

    def __str__(self) -> str:
        return (
            f"{self.name} (across {self.across.name} [{self.across.unit}], "
            f"through {self.through.name} [{self.through.unit}])"
        )


Electrical = Domain(
    "electrical",
    Quantity("v", "V", doc="electric potential"),
    Quantity("i", "A", doc="current into the component"),
    datum="ground",
    datum_component="components.electrical.Ground",
)
Translational = Domain(
    "translational",
    Quantity("s", "m", doc="absolute position"),
    Quantity("f", "N", doc="cut force into the component"),
    datum="inertial frame",
    datum_component="components.translational.Fixed",
)
Rotational = Domain(
    "rotational",
    Quantity("phi", "rad", doc="absolute rotation angle"),
    Quantity("tau", "N.m", doc="cut torque into the component"),
    datum="inertial frame",
    datum_component="components.rotational.Fixed",
)
Thermal = Domain(
    "thermal",
    Quantity("T", "K", doc="temperature", plausible=(1.0, None)),
    Quantity("Q_flow", "W", doc="heat flow rate into the component"),
    datum="absolute zero",
    datum_component="components.thermal.FixedTemperature",
)


@functools.cache
def signal_domain(size: int = 1) -> Domain:
    """The signal domain of ``size``-vectors (one domain object per size)."""
    return Domain(
        "signal" if size == 1 else f"signal[{size}]",
        Quantity("value", "", size, doc="signal value"),
        Quantity("unused", "", size, doc="(signals carry no through quantity)"),
        datum="zero signal",
        datum_component="an output port (a source or another block)",
        causal=True,
    )


Signal = signal_domain(1)


#: The physical domains of the generic linear graph (the 3D frame domain registers itself).
GRAPH_DOMAINS: tuple[Domain, ...] = (Electrical, Translational, Rotational, Thermal)
