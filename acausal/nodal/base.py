"""Base classes of the nodal (pin-jointed) formulation: the pin domain and component hooks.

A *nodal* component has ``Pin`` ports. Pins connected together are one **nodal point**, and
every nodal point holds exactly one :class:`~components.nodal.Node`, whose variables
``x``, ``y``, ``z`` (and ``vx``, ``vy``, ``vz``) are the unknowns of the formulation: the
Cartesian coordinates of the point and their rates (Xiang, Wu & Zhou 2015). Elements
(bars, rigid bodies, gears, supports, cables, springs, loads) contribute through four hooks,
each given the pins' symbolic :class:`PinState` (position ``r``, velocity ``v``, start
position ``r0``):

* :meth:`NodalComponent.nodal_mass` -- mass blocks ``M(r)`` on some of its pins, with the
  velocity-dependent inertial forces ``q(r, v)`` when ``M`` depends on the configuration;
* :meth:`NodalComponent.nodal_constraints` -- holonomic (possibly rheonomic) residuals
  ``Phi(r, t) = 0`` with labels;
* :meth:`NodalComponent.nodal_forces` -- applied forces ``(pin, f(r, v, t))``;
* :attr:`NodalComponent.gravity` -- a component that sets the gravity vector (it acts on
  every mass block as ``M (1 x g)``, the exact nodal load of a uniform field).

The pin domain is not a linear graph (``graph=False``): the nodal pass
(:mod:`acausal.nodal.assemble`) unites connected pins and binds their symbols.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import casadi as cs
import numpy as np

from ..component import Component, Port
from ..domain_passes import register_domain_pass
from ..domains import Domain, Quantity

__all__ = ["PinDomain", "Pin", "PinState", "MassBlock", "NodalComponent"]

#: names of a Node's coordinate and velocity variables
COORDINATES = ("x", "y", "z")
VELOCITIES = ("vx", "vy", "vz")

PinDomain = Domain(
    "pin",
    Quantity("r", "m", 3, doc="position of the nodal point (world coordinates)"),
    Quantity("f", "N", 3, doc="force on the nodal point"),
    datum="fixed space",
    datum_component="components.nodal.Support",
    graph=False,
)
register_domain_pass(PinDomain, "acausal.nodal.domain_pass", "NodalPass")


def Pin(doc: str = "") -> Any:
    """A pin port declaration (a nodal point of a pin-jointed structure)."""
    return Port(PinDomain, doc)


@dataclass
class PinState:
    """Symbolic state of one pin: position ``r``, velocity ``v`` (3-vectors, world) and the
    numeric start position ``r0`` (for geometry measured in the start configuration)."""

    r: cs.SX
    v: cs.SX
    r0: np.ndarray
    node: str = ""  # path of the Node component of the nodal point


@dataclass
class MassBlock:
    """Mass matrix ``M`` (3k x 3k, symmetric) on the pins ``pins`` (k names of the
    component's ports), and the velocity-dependent inertial force ``q`` (3k) that belongs
    with a configuration-dependent ``M`` (zero for bars and point masses)."""

    pins: list[str]
    M: cs.SX
    q: cs.SX | None = None
    label: str = ""


class NodalComponent(Component):
    """Base of components with pin ports (see the module documentation)."""

    #: True for the Node component: it owns the coordinates of its nodal point
    is_node: bool = False

    def nodal_mass(self, pins: dict[str, PinState]) -> list[MassBlock]:
        """Mass blocks of the component."""
        return []

    def nodal_constraints(self, pins: dict[str, PinState], t: cs.SX) -> list[tuple[cs.SX,
                                                                                    str]]:
        """``(residual, label)`` of each scalar constraint ``residual(r, t) = 0``."""
        return []

    def nodal_forces(self, pins: dict[str, PinState], t: cs.SX) -> list[tuple[str, cs.SX]]:
        """Applied forces ``(pin name, 3-vector)`` in world coordinates."""
        return []

    def gravity_vector(self) -> np.ndarray | None:
        """The gravity vector [m/s2] if this component sets it."""
        return None
