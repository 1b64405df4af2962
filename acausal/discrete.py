"""Discrete-event constructs of the component API: ``when``, ``reinit``, ``pre``, ``sample``.

Written inside ``equations()`` as in Modelica::

    def equations(self):
        return [der(self.h) == self.v, der(self.v) == -self.g,
                ac.when(self.h < 0, ac.reinit(self.v, -self.e * ac.pre(self.v)))]

* ``when(condition, *actions)`` — the actions run at the instant the condition becomes
  true (a state event located by root finding, or a time event for ``sample``);
* ``reinit(state, value)`` — a state jumps to ``value`` at that instant;
* ``assign(discrete, value)`` — a discrete variable (``Variable(discrete=True)``, constant
  between events) takes ``value``;
* ``pre(v)`` — the value of ``v`` just before the event;
* ``sample(start, interval)`` — true at ``start + k interval`` (a clock for sampled
  controllers: time events).

The semantics are those of :mod:`acausal.hybrid`: actions are evaluated with the values
at the event (``pre`` for the left limit), then the algebraic variables are solved again
and the relations and conditions re-evaluated until nothing changes.
"""

from __future__ import annotations

import math
import sys
from dataclasses import field
from typing import Any

import casadi as cs
import numpy as np

from . import symbols
from .errors import ModelDefinitionError
from .records import record

__all__ = ["When", "Reinit", "Assign", "Sample", "when", "reinit", "assign", "pre",
           "sample"]


@record(frozen=True, eq=False)
class Sample:
    """A clock condition: true at ``start + k * interval`` (k = 0, 1, ...). ``start`` and
    ``interval`` are numbers, or expressions of parameters (evaluated for each run with
    its parameter values, :meth:`resolved`)."""

    start: Any
    interval: Any

    @property
    def symbolic(self) -> bool:
        """Whether ``start`` or ``interval`` is an expression of parameters."""
        return isinstance(self.start, cs.SX) or isinstance(self.interval, cs.SX)

    def resolved(self, start: float, interval: float, where: str) -> Sample:
        """The clock with the values of ``start`` and ``interval`` for a run (checked)."""
        from .errors import ArgumentError

        if not (math.isfinite(start) and math.isfinite(interval) and interval > 0):
            raise ArgumentError(
                f"{where}: sample({self.start}, {self.interval}) is sample({start:g}, "
                f"{interval:g}) with this run's parameters; the start must be finite and the "
                "interval finite and > 0 s")
        return Sample(float(start), float(interval))

    def instants(self, t0: float, t1: float) -> list[float]:
        """The instants in ``(t0, t1]``."""
        if self.symbolic:
            raise TypeError("the clock's parameters have no values yet (Sample.resolved)")
        k0 = max(0, math.floor((t0 - self.start) / self.interval) + 1)
        out = []
        k = k0
        while True:
            t = self.start + k * self.interval
            if t > t1 * (1 + 1e-15) + 1e-300:
                break
            if t > t0:
                out.append(t)
            k += 1
        return out


@record
class Reinit:
    """``state := value`` at the event."""

    target: cs.SX
    value: Any


@record
class Assign:
    """``discrete := value`` at the event."""

    target: cs.SX
    value: Any


@record
class When:
    """Actions run at the instant ``condition`` becomes true (``initial``: also at
    initialisation, if it holds there)."""

    condition: Any
    actions: list[Reinit | Assign] = field(default_factory=list)
    initial: bool = False
    source: str | None = None  # the condition as written in the call, if it can be read


def _target(var: Any, what: str) -> cs.SX:
    sx = var if isinstance(var, cs.SX) else None
    if sx is None or not sx.is_scalar() or not sx.is_symbolic():
        raise _needs_component(
            f"{what}() needs a scalar variable of the component (self.v), got "
            f"{var!r:.60} ({type(var).__name__})")
    return sx


def when(condition: Any, *actions: Reinit | Assign, initial: bool = False) -> When:
    """Run ``actions`` at the instant ``condition`` becomes true (see the module docs).

    A condition does not become true at initialisation, so a clause whose condition
    already holds at the start does not run there (Modelica's semantics). With
    ``initial=True`` it does (Modelica: ``when {initial() and condition, condition}``):
    for a mode that the start values may already contradict (friction that must break
    away at once), the clause then chooses the mode at the start."""
    # (the condition and the actions are checked when the model is built, where the
    # component they belong to is known: flatten._when_clause)
    return When(condition, list(actions), bool(initial), _argument_source(sys._getframe(1)))


_SOURCES: dict[tuple[Any, int], str | None] = {}


def _argument_source(frame: Any) -> str | None:
    """The text of the first argument of the call being made in ``frame`` (the condition
    of a ``when(...)`` as its author wrote it, for event logs and messages), or None where
    the source cannot be read. Found once per call site (from the positions of the call
    instruction, Python 3.11+) and kept."""
    code = frame.f_code
    key = (code, frame.f_lasti)
    if key in _SOURCES:
        return _SOURCES[key]
    text = None
    try:
        import ast
        import linecache

        positions = list(code.co_positions())[frame.f_lasti // 2]
        l0, l1, c0, c1 = positions
        if None not in positions:
            lines = [ln.encode() for ln in linecache.getlines(code.co_filename)[l0 - 1:l1]]
            if lines:
                if len(lines) == 1:
                    lines[0] = lines[0][c0:c1]
                else:
                    lines[0], lines[-1] = lines[0][c0:], lines[-1][:c1]
                segment = b"".join(lines).decode()
                call = ast.parse(segment.strip(), mode="eval").body
                if isinstance(call, ast.Call) and call.args:
                    arg = ast.get_source_segment(segment.strip(), call.args[0])
                    text = " ".join(arg.split()) if arg else None
    except Exception:  # noqa: BLE001 - no source (an interactive session, a frozen module)
        text = None
    _SOURCES[key] = text
    return text


def reinit(state: Any, value: Any) -> Reinit:
    """At the event, set the state ``state`` to ``value``."""
    return Reinit(_target(state, "reinit"), value)


def assign(discrete: Any, value: Any) -> Assign:
    """At the event, set the discrete variable ``discrete`` to ``value``."""
    return Assign(_target(discrete, "assign"), value)


def pre(var: Any) -> cs.SX:
    """The value of ``var`` just before the event (inside ``when`` actions)."""
    table = symbols.current()
    if table is None:
        raise ModelDefinitionError("pre() can only be used inside a component's equations()")
    return table.pre(_target(var, "pre"))


def sample(start: Any, interval: Any) -> Sample:
    """A clock: true at ``start + k interval`` [s], k = 0, 1, ... (time events).

    ``start`` and ``interval`` are numbers or parameters of the component (expressions of
    parameters: evaluated with each run's values, so ``params=`` can change them)."""
    values: list[Any] = []
    for what, v in (("start", start), ("interval", interval)):
        if isinstance(v, (bool, np.bool_)) or not isinstance(
                v, (int, float, np.integer, np.floating, cs.SX, cs.DM)):
            raise _needs_component(
                f"sample(): the {what} must be a number of seconds or a parameter, got "
                f"{v!r} ({type(v).__name__})")
        if isinstance(v, (cs.SX, cs.DM)):
            if v.numel() != 1:
                raise _needs_component(
                    f"sample(): the {what} must be one number or parameter, got {v.numel()} "
                    "elements")
            if isinstance(v, cs.DM) or cs.SX(v).is_constant():
                v = float(cs.DM(v))
            else:
                values.append(cs.SX(v))
                continue
        v = float(v)
        if not math.isfinite(v) or (what == "interval" and not v > 0):
            raise _needs_component(
                f"sample(): the {what} must be "
                + ("finite and > 0 s" if what == "interval" else "finite") + f", got {v}")
        values.append(v)
    return Sample(values[0], values[1])


def _needs_component(message: str) -> ModelDefinitionError:
    """An error of a construct used inside ``equations()``, which the build names the
    component of (``flatten``)."""
    exc = ModelDefinitionError(message)
    exc.add_component = True  # type: ignore[attr-defined]
    return exc
