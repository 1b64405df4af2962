"""Exception hierarchy: one root, one subclass per pipeline stage.

Every message names the user's objects (component path, port, variable, equation)
and, where possible, suggests the fix. Structural errors also carry the offending parts as
data (:class:`StructurePart`), so tools can show them without parsing the text.

    AcausalError
    ├── ModelDefinitionError        declarations, parameters, finite-element data
    │   ├── ConnectionError_        ports that cannot be connected
    │   └── UnitError               unit strings, dimensionally inconsistent equations
    ├── TopologyError               linear graph / mechanism graph (missing ground, loops)
    ├── StructureError              the flat equation system is not well posed
    │   ├── BalanceError            more or fewer equations than unknowns (in a part)
    │   ├── SingularityError        equal counts, structurally or numerically singular
    │   └── StartValueConflict      fixed start values that the equations contradict
    ├── InitializationError         no consistent initial values
    │   └── StartValueConflict
    ├── SimulationError             the integrator failed (``partial`` result attached)
    └── ArgumentError               an argument of build/simulate/... is invalid (also a
        │                           ValueError)
        └── StartValueError         simulate(start=...) names no variable (also an
                                    InitializationError)

Warnings derive from :class:`AcausalWarning`; :class:`ModelWarning` flags what is probably a
mistake in a model but well defined (a connection made twice, an implausible value).
"""

from __future__ import annotations

import os
import sys
from dataclasses import field

from .records import record

__all__ = [
    "AcausalError",
    "ModelDefinitionError",
    "ConnectionError_",
    "UnitError",
    "TopologyError",
    "StructureError",
    "StructurePart",
    "BalanceError",
    "SingularityError",
    "StartValueConflict",
    "InitializationError",
    "SimulationError",
    "ArgumentError",
    "StartValueError",
    "AcausalWarning",
    "RedundantConstraintWarning",
    "SolverWarning",
    "ModelWarning",
]


class AcausalError(Exception):
    """Root of every error raised by acausal."""


class ModelDefinitionError(AcausalError):
    """A component or model is declared wrongly (unknown parameter, bad value, ...)."""


class ConnectionError_(ModelDefinitionError):
    """Ports that cannot be connected (different domains, not a port, ...)."""


class UnitError(ModelDefinitionError):
    """A unit string that cannot be read or converted, or an equation whose two sides (or
    two terms of a sum) have different physical dimensions."""


class TopologyError(AcausalError):
    """The linear graph cannot be built: missing ground/datum, bad tree override, ..."""


@record
class StructurePart:
    """One over- or under-determined part of a structurally singular system.

    Attributes
    ----------
    kind : str
        ``"over-determined"`` or ``"under-determined"``.
    equations : list of str
        The equations of the part, as written, each with its component in brackets.
    unknowns : list of str
        The unknowns of the part (dotted names; aliases merged into one are listed after it).
    components : list of str
        The components the equations and unknowns belong to.
    hints : list of str
        Hints given by component authors for unknowns of the part (``Variable(hint=...)``).
    """

    kind: str
    equations: list[str]
    unknowns: list[str]
    components: list[str]
    hints: list[str] = field(default_factory=list)


class StructureError(AcausalError):
    """The flat equation system is not well posed.

    ``parts`` lists the over- and under-determined parts (may be empty when the error is
    not about a matching, e.g. index reduction that does not terminate).
    """

    def __init__(self, message: str, parts: list[StructurePart] | None = None) -> None:
        super().__init__(message)
        self.parts: list[StructurePart] = list(parts or [])

    def part(self, kind: str) -> StructurePart | None:
        """The part of that kind (``"over-determined"``/``"under-determined"``), if any."""
        return next((p for p in self.parts if p.kind == kind), None)


class BalanceError(StructureError):
    """More or fewer equations than unknowns, globally or in a part of the model."""


class SingularityError(StructureError):
    """Equal counts but structurally singular: some equations cannot be matched."""


class InitializationError(AcausalError):
    """Consistent initial values could not be found, or the initial problem is ill posed."""


class StartValueConflict(StructureError, InitializationError):
    """Fixed start values that the model's equations contradict (found by alias
    elimination, before any numerics): two fixed starts on one quantity, or a fixed start
    on a quantity the equations make constant."""


class SimulationError(AcausalError):
    """The integrator failed. ``partial`` holds the result computed up to the failure."""

    def __init__(self, message: str, partial: object | None = None, t_fail: float | None = None):
        super().__init__(message)
        self.partial = partial
        self.t_fail = t_fail


class ArgumentError(AcausalError, ValueError):
    """An argument of a library function is invalid (a time grid, a tolerance, a parameter
    override, a start value, a name); raised before any work is done."""


class StartValueError(ArgumentError, InitializationError):
    """A start value given for a run (``simulate(start=...)``) names no variable of the
    compiled model, or is not a valid value for it."""


class AcausalWarning(UserWarning):
    """Root of the warnings of acausal (things done automatically that a user should know)."""


class RedundantConstraintWarning(AcausalWarning):
    """Constraint equations of cut joints removed as linearly dependent on the others."""


class SolverWarning(AcausalWarning):
    """A result the library had to obtain by a fallback the user should know about, or a
    value of a result it cannot stand behind (read from a result: a NaN or an infinity, a
    variable outside the range its declaration gives)."""


class UnresolvedWarning(SolverWarning):
    """The output points do not resolve the motion of some states (see
    :mod:`acausal.resolution`): the numbers are accurate, the curves between them are not
    what the points show."""


class ModelWarning(AcausalWarning):
    """Probably a mistake in the model, but well defined: a connection made twice, an
    implausible parameter or start value (a temperature below 1 K)."""


#: the library's source folders: a warning points at the first caller outside them
_LIBRARY = tuple(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d)
                 + os.sep for d in ("acausal", "components"))


def user_stacklevel() -> int:
    """The ``stacklevel`` that points a :func:`warnings.warn` called where this is called
    at the user's line: the first caller outside the library (``acausal``,
    ``components``), however deep the call (the backends of :func:`acausal.simulate` warn
    from three to eight calls down, by paths that differ; a warning with a counted
    ``stacklevel`` pointed into ``simulate.py``). Add one for each call between here and
    the ``warnings.warn``."""
    level, frame = 1, sys._getframe(1)
    while frame.f_back is not None and os.path.abspath(
            frame.f_code.co_filename).startswith(_LIBRARY):
        frame = frame.f_back
        level += 1
    return level
