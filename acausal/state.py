"""The compile state: the one object that flows through the passes of :func:`acausal.build`.

Each pass is a function ``run(state) -> state`` that reads the fields earlier passes
filled and returns a new state with its own field(s) set (:meth:`CompileState.update`);
no pass mutates what another pass produced. A pass that finds a field it needs still
empty reports the pass order as the problem (:func:`need`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import field
from typing import TYPE_CHECKING, Any, TypeVar

from .component import Component
from .errors import AcausalError
from .records import record, replace

if TYPE_CHECKING:
    from .dae import SemiExplicitDAE
    from .flatten import FlatSystem
    from .graph import LinearGraph
    from .structure.alias import AliasResult
    from .structure.causalize import Causalization
    from .structure.diagnostics import StructureDiagnostics
    from .structure.dummy import StateSelection
    from .structure.pantelides import PantelidesResult
    from .structure.solve import SolvedBlocks
    from .structure.system import EquationSystem
    from .unit_check import UnitCheck

__all__ = ["CompileState", "Pass", "PassOrderError", "need"]

T = TypeVar("T")


class PassOrderError(AcausalError):
    """A pass ran before the pass that produces what it needs (a custom pass list)."""


@record
class CompileState:
    """Everything the compile chain has produced so far (fields fill in pass order)."""

    model: Component
    tree: tuple[Any, ...] | None = None  # the user's tree override
    graph: LinearGraph | None = None
    domain_tree: dict[str, list[Any]] = field(default_factory=dict)
    flat: FlatSystem | None = None
    units: UnitCheck | None = None
    aliases: AliasResult | None = None
    system: EquationSystem | None = None
    diagnostics: StructureDiagnostics | None = None
    pantelides: PantelidesResult | None = None
    selection: StateSelection | None = None
    causal: Causalization | None = None
    solved: SolvedBlocks | None = None
    dae: SemiExplicitDAE | None = None

    def update(self, **changes: Any) -> CompileState:
        """A copy with the given fields replaced."""
        return replace(self, **changes)


@record(frozen=True)
class Pass:
    """A named compile pass ``run(state) -> state``."""

    name: str
    run: Callable[[CompileState], CompileState]

    def __call__(self, state: CompileState) -> CompileState:
        return self.run(state)


def need(value: T | None, what: str) -> T:
    """``value``, or a :class:`PassOrderError` saying which earlier pass is missing."""
    if value is None:
        raise PassOrderError(
            f"this pass needs {what}, which no earlier pass produced; check the order of "
            "the passes given to acausal.build(passes=...)"
        )
    return value
