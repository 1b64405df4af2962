"""Domain passes: the equations of domains the generic linear-graph flattener does not handle.

A :class:`~acausal.domains.Domain` with ``graph=True`` (electrical, 1D mechanics, thermal)
is handled by the generic pass: across variables add along tree paths, through variables
balance at vertices. A domain whose ports need their own formulation (3D frames, whose
orientations compose by products; nodal coordinates of deployable structures) declares
``graph=False`` and is handled by a *domain pass* registered here.

A domain pass is constructed with the model's :class:`~acausal.symbols.SymbolTable`, the
components that have ports of its domain, and the user's tree override; its
:meth:`DomainPass.assemble` binds the ports of the domain (:func:`acausal.component.bind_port`),
adds named outputs and returns the pass's equations. The object stays on the compiled
model (``cm.domain_pass(name)``) for inspection and for solvers that need it.

Registration is lazy (module path and class name), so a domain's pass is imported only
when a model uses the domain.

A pass whose equations depend densely on its own coordinates (a mechanism's recursive
equations of motion: every joint acceleration depends on every joint angle and speed)
marks them with its :class:`StateCoordinates`: the structure stage then leaves those
coordinates out of the equations' incidence while they are states (a state is known to the
matching and to the BLT ordering), so it neither computes nor stores the dense part.
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from typing import Any

from .component import Component
from .domains import Domain
from .errors import TopologyError
from .records import record
from .symbols import SymbolTable

__all__ = ["DomainEquation", "DomainPass", "StateCoordinates", "register_domain_pass",
           "domain_pass_class"]


@record(frozen=True, eq=False)
class StateCoordinates:
    """Unknowns of a domain pass that its own equations give derivatives of (a mechanism's
    branch coordinates and speeds: ``der(q) = qdot(q, u)``, ``der(u) = ...``), by name.

    An equation marked with them may depend on any of them. The structure stage keeps its
    incidence on those that have a derivative implicit: they are not highest derivatives
    (Pantelides' matching never looks at them) and, once chosen as states, known to the
    causalisation. The incidence on a coordinate is formed where it matters: for an
    equation that index reduction differentiates, and for a coordinate that the state
    selection makes a dummy (:meth:`acausal.structure.system.EquationSystem.for_states`).
    """

    names: frozenset[str]


@record
class DomainEquation:
    """An equation of a domain pass, the component it belongs to and a readable label;
    ``coordinates``: the pass's state coordinates it may depend on densely (see
    :class:`StateCoordinates`)."""

    equation: Any
    component: Component
    label: str | None = None
    coordinates: StateCoordinates | None = None


class DomainPass(ABC):
    """Formulation of one non-graph domain (see the module documentation).

    Parameters
    ----------
    symbols : SymbolTable
        Where the pass creates its unknowns and outputs.
    components : list of Component
        Every component of the model with a port of the domain, in model order.
    tree : list, optional
        The user's tree override items that belong to this domain (components).
    """

    #: name of the domain handled (``Domain.name``)
    domain_name: str = ""

    def __init__(self, symbols: SymbolTable, components: list[Component],
                 tree: list[Any] | None = None) -> None:
        self.symbols = symbols
        self.components = components
        self.tree = tree

    @abstractmethod
    def assemble(self) -> list[DomainEquation]:
        """Bind the domain's ports, add outputs, return the equations."""

    @property
    def report(self) -> Any:
        """Printable summary of what the pass did (None if it has nothing to say)."""
        return None

    def diagnose_initial_failure(self, start: dict[str, float], fixed: set[str],
                                 params: dict[str, float]) -> str | None:
        """Explain, in the domain's terms, why no consistent initial values were found
        (called when initialisation fails; None: nothing to add)."""
        return None


_REGISTRY: dict[str, tuple[str, str]] = {}


def register_domain_pass(domain: Domain, module: str, cls: str) -> None:
    """Handle ``domain`` with the class ``cls`` of ``module`` (imported on first use)."""
    if domain.graph:
        raise ValueError(f"domain {domain.name!r} is handled by the linear-graph pass")
    _REGISTRY[domain.name] = (module, cls)


def domain_pass_class(domain: Domain) -> type[DomainPass]:
    """The registered pass of a non-graph domain."""
    entry = _REGISTRY.get(domain.name)
    if entry is None:
        raise TopologyError(
            f"no pass is registered for the {domain.name!r} domain (ports with "
            "Domain(graph=False) need one: acausal.domain_passes.register_domain_pass)"
        )
    cls = getattr(importlib.import_module(entry[0]), entry[1])
    if not (isinstance(cls, type) and issubclass(cls, DomainPass)):
        raise TypeError(f"{entry[0]}.{entry[1]} is not a DomainPass")
    return cls
