"""Exception hierarchy: one root, one subclass per pipeline stage.

Every message names the user's objects (component path, port, variable, equation)
and, where possible, suggests the fix.
"""

from __future__ import annotations

__all__ = [
    "AcausalError",
    "ModelDefinitionError",
    "ConnectionError_",
    "TopologyError",
    "StructureError",
    "BalanceError",
    "SingularityError",
    "InitializationError",
    "SimulationError",
    "AcausalWarning",
    "RedundantConstraintWarning",
]


class AcausalError(Exception):
    """Root of every error raised by acausal."""


class ModelDefinitionError(AcausalError):
    """A component or model is declared wrongly (unknown parameter, bad value, ...)."""


class ConnectionError_(ModelDefinitionError):
    """Ports that cannot be connected (different domains, not a port, ...)."""


class TopologyError(AcausalError):
    """The linear graph cannot be built: missing ground/datum, bad tree override, ..."""


class StructureError(AcausalError):
    """The flat equation system is not well posed."""


class BalanceError(StructureError):
    """More or fewer equations than unknowns, globally or in a part of the model."""


class SingularityError(StructureError):
    """Equal counts but structurally singular: some equations cannot be matched."""


class InitializationError(AcausalError):
    """Consistent initial values could not be found, or the initial problem is ill posed."""


class SimulationError(AcausalError):
    """The integrator failed. ``partial`` holds the result computed up to the failure."""

    def __init__(self, message: str, partial: object | None = None, t_fail: float | None = None):
        super().__init__(message)
        self.partial = partial
        self.t_fail = t_fail


class AcausalWarning(UserWarning):
    """Root of the warnings of acausal (things done automatically that a user should know)."""


class RedundantConstraintWarning(AcausalWarning):
    """Constraint equations of cut joints removed as linearly dependent on the others."""
