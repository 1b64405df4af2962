"""Checks of the arguments of :func:`acausal.simulate`, before any work is done.

Every argument that would otherwise crash the integrator (``n_points=1``), raise from deep
inside (``dt=-0.1``), be ignored (``n_points=0``) or run with nonsense (``params`` with NaN,
a zero inductance) is reported here by an :class:`~acausal.errors.ArgumentError` that names
the argument, the parameter or the variable, and says what is accepted. Parameter
overrides and start values may be strings with units (``"1 kOhm"``); they are converted.

A compiled model is a snapshot: parameters changed on the model *after* :func:`acausal.build`
(``model.resistor.R = 5``) are not in it. Running it then is an error that names the
parameter and points to ``params=`` (for a numeric parameter) or to a new build (for a
structural one or a function of time).
"""

from __future__ import annotations

import itertools
import math
import numbers
import weakref
from collections.abc import Mapping, Sequence
from typing import Any

import casadi as cs
import numpy as np

from .compiler import CompiledModel
from .component import Component, Parameter
from .errors import ArgumentError, StartValueError, UnitError
from .names import did_you_mean, suggest
from .symbols import FlatParameter

__all__ = ["check_simulate_arguments", "parameter_overrides", "MAX_OUTPUT_POINTS"]

#: The largest output grid :func:`acausal.simulate` accepts (a mistyped ``dt`` would
#: otherwise exhaust the memory).
MAX_OUTPUT_POINTS = 10_000_000


def _number(value: Any, what: str, *, positive: bool = False, allow_zero: bool = True,
            allow_none: bool = False) -> float | None:
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, np.floating,
                                                         np.integer)):
        raise ArgumentError(f"{what} must be a number, got {value!r}")
    v = float(value)
    if not math.isfinite(v):
        raise ArgumentError(f"{what} must be finite, got {v}")
    if positive and (v < 0 or (v == 0 and not allow_zero)):
        raise ArgumentError(f"{what} must be {'> 0' if not allow_zero else '>= 0'}, got {v:g}")
    return v


def _check_grid(t_end: Any, t_start: Any, n_points: Any, dt: Any, t_eval: Any) -> None:
    t1 = _number(t_end, "t_end")
    t0 = _number(t_start, "t_start")
    assert t0 is not None and t1 is not None
    if n_points is not None and (dt is not None or t_eval is not None):
        raise ArgumentError(
            "give the output grid one way: n_points=, dt= or t_eval= (got n_points and "
            + ("dt" if dt is not None else "t_eval") + ")")
    if t_eval is not None:
        try:
            g = np.asarray(t_eval, dtype=float)
        except (TypeError, ValueError):
            raise ArgumentError(f"t_eval must be a sequence of times, got {t_eval!r}") from None
        if g.ndim != 1 or g.size == 0:
            raise ArgumentError(f"t_eval must be a non-empty 1-D sequence of times, got shape "
                                f"{g.shape}")
        if not np.all(np.isfinite(g)):
            raise ArgumentError("t_eval contains NaN or inf")
        if np.any(np.diff(g) <= 0):
            k = int(np.argmax(np.diff(g) <= 0))
            raise ArgumentError(f"t_eval must be strictly increasing: t_eval[{k}] = {g[k]:g} "
                                f"is followed by {g[k + 1]:g}")
        if g[0] < t0:
            raise ArgumentError(f"t_eval starts at {g[0]:g}, before t_start = {t0:g}")
        if g[-1] > t1 * (1 + 1e-12) + 1e-300:
            raise ArgumentError(f"t_eval ends at {g[-1]:g}, after t_end = {t1:g}")
        if g[-1] <= t0:
            raise ArgumentError(f"t_eval needs a time after t_start = {t0:g}")
        return
    if not t1 > t0:
        raise ArgumentError(f"t_end ({t1:g}) must be after t_start ({t0:g})")
    if dt is not None:
        h = _number(dt, "dt")
        assert h is not None
        if h <= 0:
            raise ArgumentError(f"dt must be > 0, got {h:g} (the output step; or give "
                                "n_points= or t_eval=)")
        n = (t1 - t0) / h
        if n > MAX_OUTPUT_POINTS:
            raise ArgumentError(f"dt = {h:g} s gives {n:.3g} output points over "
                                f"[{t0:g}, {t1:g}] s, more than {MAX_OUTPUT_POINTS:.0e}; "
                                "choose a larger dt")
    if n_points is not None:
        if isinstance(n_points, bool) or not isinstance(n_points, (numbers.Integral,
                                                                   np.integer)):
            raise ArgumentError(f"n_points must be an integer, got {n_points!r}")
        if int(n_points) < 2:
            raise ArgumentError(f"n_points must be at least 2 (the start and the end time), "
                                f"got {n_points}")
        if int(n_points) > MAX_OUTPUT_POINTS:
            raise ArgumentError(f"n_points = {n_points} is more than {MAX_OUTPUT_POINTS:.0e}")


def _check_tolerances(rtol: Any, atol: Any, max_step: Any) -> None:
    r = _number(rtol, "rtol")
    a = _number(atol, "atol")
    assert r is not None and a is not None
    if not 0 < r < 1:
        raise ArgumentError(f"rtol must be > 0 and < 1, got {r:g} (typical: 1e-6 to 1e-10)")
    if a <= 0:
        raise ArgumentError(f"atol must be > 0, got {a:g} (typical: 1e-8 to 1e-12)")
    h = _number(max_step, "max_step", allow_none=True)
    if h is not None and h <= 0:
        raise ArgumentError(f"max_step must be > 0, got {h:g}")


# --------------------------------------------------------------------------------------
# parameters
# --------------------------------------------------------------------------------------


def _other_parameters(model: Component) -> dict[str, str]:
    """Parameters of the model tree that are not numeric symbols: name -> why."""
    out: dict[str, str] = {}
    for c in model.walk():
        path = c.path()
        prefix = f"{path}." if path else ""
        cls = type(c)
        for name, value in c.__dict__["_params"].items():
            decl = getattr(cls, name, None)
            if isinstance(decl, Parameter) and decl.structural:
                out[prefix + name] = "structural"
            elif callable(value):
                out[prefix + name] = "signal"
    return out


def _value(value: Any, p: FlatParameter) -> float:
    """An override for ``p``: a number or a string with a unit, within the bounds."""
    if isinstance(value, str):
        try:
            value = _convert(value, p.unit)
        except UnitError as exc:
            raise ArgumentError(f"params[{p.name!r}]: {exc}") from None
    if callable(value):
        raise ArgumentError(
            f"params[{p.name!r}] is a function; a parameter that is a constant in the "
            "compiled model takes a number here. To make it a function of time, give the "
            "function when creating the component (if it accepts one) and build again")
    v = _number(value, f"params[{p.name!r}]")
    assert v is not None
    decl = p.decl
    if isinstance(decl, Parameter):
        bad = decl.problem(v)
        if bad is not None:
            owner = p.owner._describe() if p.owner is not None else ""
            raise ArgumentError(f"params[{p.name!r}] {bad}"
                                + (f" (parameter {decl.name!r} of {owner})" if owner else ""))
    return v


def _convert(text: str, unit: str) -> float:
    from .units import convert

    return convert(text, unit)


def parameter_overrides(params: Mapping[str, Any] | None, parameters: Sequence[FlatParameter],
                        model: Component | None) -> dict[str, float]:
    """Check ``params`` (names, values, bounds) against the numeric parameters of a model
    and return them as numbers in the declared units."""
    if params is None:
        return {}
    if not isinstance(params, Mapping):
        raise ArgumentError(f"params must be a dict {{'path.name': value}}, got {params!r}")
    by_name = {p.name: p for p in parameters}
    out: dict[str, float] = {}
    other: dict[str, str] | None = None
    for key, value in params.items():
        p = by_name.get(key) if isinstance(key, str) else None
        if p is None:
            if not isinstance(key, str):
                raise ArgumentError(f"params keys are dotted names ('resistor.R'), got {key!r}")
            if other is None:
                other = _other_parameters(model) if model is not None else {}
            kind = other.get(key)
            if kind == "structural":
                raise ArgumentError(
                    f"{key!r} is a structural parameter: its value shapes the equations when "
                    "the model is built, so it cannot be changed by params=; set it on the "
                    f"model (or create the component with it) and build again")
            if kind == "signal":
                raise ArgumentError(
                    f"{key!r} is given as a function of time, which is part of the "
                    "equations and cannot be overridden by params=; create the component "
                    "with another function and build again")
            raise ArgumentError(f"unknown parameter {key!r}" + did_you_mean(key, by_name))
        out[key] = _value(value, p)
    _check_together(out, parameters)
    return out


def _check_together(out: dict[str, float], parameters: Sequence[FlatParameter]) -> None:
    """The overridden components' own check of their parameters together
    (:meth:`~acausal.component.Component.check_values`: an inertia tensor no body has).
    (A loaded model's components are detached from their classes: not checked.)"""
    owners: dict[int, Component] = {}
    touched: dict[int, list[str]] = {}
    for p in parameters:
        if p.name in out and isinstance(p.owner, Component) and \
                type(p.owner).check_values is not Component.check_values:
            owners[id(p.owner)] = p.owner
            touched.setdefault(id(p.owner), []).append(p.name)
    if not owners:
        return
    values: dict[int, dict[str, Any]] = {
        k: dict(c.__dict__.get("_params") or {}) for k, c in owners.items()}
    for p in parameters:  # the values of the run (compiled, then overridden)
        if id(p.owner) in values and isinstance(p.decl, Parameter):
            values[id(p.owner)][p.decl.name] = out.get(p.name, p.value)
    for k, c in owners.items():
        bad = c.check_values(values[k])
        if bad is not None:
            given = ", ".join(f"params[{n!r}] = {out[n]:g}" for n in touched[k])
            raise ArgumentError(f"{given}: {c._describe()}: {bad}")


def current_value(p: Any) -> Any:
    """The value the parameter's component holds now (None for a detached component of a
    loaded model, whose values cannot change)."""
    held = p.owner.__dict__.get("_params") if p.owner is not None else None
    return None if held is None or p.decl is None else held.get(p.decl.name)


def _watched(cm: CompiledModel) -> tuple[list[dict[str, Any]], list[str],
                                         list[FlatParameter]]:
    """The values dictionaries of the components holding the model's parameters, the
    keys there and the parameters (found once per model: the components keep their
    dictionaries, whose entries change)."""
    got = _WATCHED.get(cm)
    if got is None:
        got = ([], [], [])
        for p in cm.system.parameters:
            held = p.owner.__dict__.get("_params") if p.owner is not None else None
            if held is not None and isinstance(p.decl, Parameter):
                got[0].append(held)
                got[1].append(p.decl.name)
                got[2].append(p)
        _WATCHED[cm] = got
    return got


_WATCHED: weakref.WeakKeyDictionary[CompiledModel, tuple[list[dict[str, Any]], list[str],
                                                         list[FlatParameter]]] = (
    weakref.WeakKeyDictionary())


def _stale_parameters(cm: CompiledModel, overridden: Mapping[str, Any]) -> None:
    """Parameters changed on the model after the build (and not overridden by params=)."""
    helds, keys, params = _watched(cm)
    now = list(map(dict.get, helds, keys))  # (in C: 40 000 parameters in a few ms)
    built = [p.value for p in params]
    differs = [v.__class__ is not float or v != b for v, b in zip(now, built, strict=True)]
    for k in itertools.compress(range(len(now)), differs):
        p, value = params[k], now[k]
        if value is None or p.name in overridden or (
                isinstance(value, (int, float)) and float(value) == p.value):
            continue
        unit = f" {p.unit}" if p.unit and p.unit != "1" else ""
        if callable(value):
            raise ArgumentError(
                f"{p.name} was made a function of time after the model was built (it was "
                f"built as the constant {p.value:g}{unit}); build the model again")
        raise ArgumentError(
            f"{p.name} was changed to {value!r}{unit} after the model was built, and the "
            f"compiled model still uses {p.value:g}{unit}: give the new value for the run, "
            f"simulate(cm, ..., params={{{p.name!r}: {value!r}}}), or build the model again")
    flat = cm.state.flat
    for comp, name, value in (flat.bound_values if flat is not None else []):
        held = comp.__dict__.get("_params")
        if held is None:  # (a detached component of a loaded model: nothing can change)
            continue
        now = held.get(name)
        if now is value or _equal(now, value):
            continue
        path = comp.path()
        full = f"{path}.{name}" if path else name
        kind = "structural parameter" if not callable(value) else "function of time"
        raise ArgumentError(
            f"{full} was changed after the model was built; it is a {kind}, part of the "
            "compiled equations, so the change needs a new build: cm = ac.build(model)")


def _equal(a: Any, b: Any) -> bool:
    try:
        return bool(np.array_equal(np.asarray(a), np.asarray(b)))
    except Exception:  # noqa: BLE001 - objects without a value comparison differ
        return False


# --------------------------------------------------------------------------------------
# start values
# --------------------------------------------------------------------------------------


def _vector_starts(cm: CompiledModel, start: Mapping[str, Any], variables: Mapping[str, Any]
                   ) -> dict[str, Any]:
    """``start`` with a vector unknown given by its name (``{"fm.v_rel": [1, 0, 0]}``, or
    one number for every element) as its elements' starts (``fm.v_rel_0``, ...)."""
    flat = cm.flat.index
    out: dict[str, Any] = {}
    for key, value in start.items():
        if key in variables or f"{key}_0" not in flat:
            out[key] = value
            continue
        names = list(itertools.takewhile(flat.__contains__,
                                         (f"{key}_{k}" for k in itertools.count())))
        values = ([value] * len(names) if isinstance(value, str) or np.ndim(value) == 0
                  else value)
        if np.ndim(values) != 1 or len(values) != len(names):
            raise StartValueError(
                f"start[{key!r}]: {key} is a vector of {len(names)} elements "
                f"({names[0]} to {names[-1]}); give one number for all of them or "
                f"{len(names)}, got {value!r}")
        out.update(zip(names, values, strict=True))
    return out


def _start_values(cm: CompiledModel | None, start: Mapping[str, Any] | None
                  ) -> dict[str, Any] | None:
    if start is None:
        return None
    if not isinstance(start, Mapping):
        raise ArgumentError(f"start must be a dict {{'path.name': value}}, got {start!r}")
    out: dict[str, Any] = {}
    variables = {v.name: v for v in cm.system.variables} if cm is not None else {}
    for key in start:
        if not isinstance(key, str):
            raise StartValueError(f"start keys are dotted names ('capacitor.v'), got {key!r}")
    if cm is not None:
        start = _vector_starts(cm, start, variables)
    unknown = [k for k in start if k not in variables] if cm is not None else []
    if unknown:
        hints = []
        for k in unknown:
            close = suggest(k, variables, 3)
            hints.append(f"{k!r}" + (f" (did you mean {', '.join(close)}?)" if close else ""))
        raise StartValueError(
            "start values given for " + "; ".join(hints) + ", which are not variables of "
            "the compiled model (aliases of another variable and quantities the model "
            "computes explicitly take no start value)")
    for key, value in start.items():
        v = variables.get(key)
        unit = v.unit if v is not None else ""
        if isinstance(value, str):
            try:
                value = _convert(value, unit)
            except UnitError as exc:
                raise StartValueError(f"start[{key!r}]: {exc}") from None
        try:
            x = _number(value, f"start[{key!r}]")
        except ArgumentError as exc:
            raise StartValueError(str(exc)) from None
        decl = getattr(v, "decl", None)
        if decl is not None:
            bad = decl.problem(x)
            if bad is not None:
                raise StartValueError(f"start[{key!r}] {bad}")
        out[key] = x
    return out


# --------------------------------------------------------------------------------------
# the entry point
# --------------------------------------------------------------------------------------


def check_simulate_arguments(
        model: Any, t_end: Any, *, t_start: Any = 0.0, n_points: Any = None, dt: Any = None,
        t_eval: Any = None, rtol: Any = 1e-6, atol: Any = 1e-8,
        params: Mapping[str, Any] | None = None, start: Mapping[str, Any] | None = None,
        max_step: Any = None, solver: Any = "idas", raise_on_failure: Any = True
) -> tuple[dict[str, float] | None, dict[str, Any] | None]:
    """Check the arguments of :func:`acausal.simulate`; return ``params`` and ``start``
    with values as numbers (strings with units converted).

    Raises
    ------
    ArgumentError
        For the first invalid argument, naming it and what is accepted.
    """
    if isinstance(model, type) and issubclass(model, Component):
        raise ArgumentError(f"simulate() needs a model instance, got the class "
                            f"{model.__name__}: write {model.__name__}()")
    if not isinstance(model, (Component, CompiledModel)):
        raise ArgumentError(f"simulate() needs a model (a Component) or the result of "
                            f"ac.build(), got {model!r}")
    _check_grid(t_end, t_start, n_points, dt, t_eval)
    _check_tolerances(rtol, atol, max_step)
    from .solvers.base import INTEGRATORS

    if not isinstance(solver, str) or (solver not in INTEGRATORS and solver != "auto"):
        raise ArgumentError(f"unknown solver {solver!r}; available: "
                            f"auto, {', '.join(sorted(INTEGRATORS))}"
                            + (did_you_mean(solver, INTEGRATORS) if isinstance(solver, str)
                               else ""))
    if not isinstance(raise_on_failure, bool):
        raise ArgumentError(f"raise_on_failure must be True or False, got {raise_on_failure!r}")
    if isinstance(model, CompiledModel):
        checked = parameter_overrides(params, model.system.parameters, model.model)
        _stale_parameters(model, checked)
        return (checked if params is not None else None), _start_values(model, start)
    if params is None:
        return None, _start_values(None, start)
    declared = [FlatParameter(name, cs.SX(), float(value), decl.unit, decl.doc, decl, owner)
                for name, decl, owner, value in _numeric_parameters(model)]
    return parameter_overrides(params, declared, model), _start_values(None, start)


def _numeric_parameters(model: Component) -> list[tuple[str, Parameter, Component, Any]]:
    """The parameters a build of ``model`` makes symbols (before building it)."""
    out = []
    for c in model.walk():
        path = c.path()
        prefix = f"{path}." if path else ""
        cls = type(c)
        for name, value in c.__dict__["_params"].items():
            decl = getattr(cls, name, None)
            if isinstance(decl, Parameter) and not decl.structural and not callable(value):
                out.append((prefix + name, decl, c, value))
    return out
