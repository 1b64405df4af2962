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

import inspect
import itertools
import math
import numbers
import types
import warnings
import weakref
from collections.abc import Iterable, Mapping, Sequence
from types import SimpleNamespace
from typing import Any

import casadi as cs
import numpy as np

from .compiler import CompiledModel
from .component import PARAMETER_WRITES, Component, Parameter, has_parameter_check
from .errors import (
    ArgumentError,
    ModelDefinitionError,
    ModelWarning,
    StartValueError,
    UnitError,
    user_stacklevel,
)
from .names import did_you_mean, suggest
from .symbols import FlatParameter, start_values

__all__ = ["check_simulate_arguments", "parameter_overrides", "time_grid", "MAX_OUTPUT_POINTS"]

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


def time_grid(values: Any, what: str, min_points: int = 1) -> np.ndarray:
    """``values`` as a grid of times: a 1-D sequence of at least ``min_points`` finite,
    strictly increasing numbers (the output grid of :func:`acausal.simulate`, ``t_eval``,
    and of the exported simulators, ``grid``); ``what`` names the argument."""
    try:
        g = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise ArgumentError(f"{what} must be a sequence of times, got {values!r}") from None
    if g.ndim != 1 or g.size == 0:
        raise ArgumentError(f"{what} must be a non-empty 1-D sequence of times, got shape "
                            f"{g.shape}")
    if g.size < min_points:
        raise ArgumentError(f"{what} needs at least {min_points} times (the start and the "
                            f"output times after it), got {g.size}")
    if not np.all(np.isfinite(g)):
        k = int(np.argmax(~np.isfinite(g)))
        raise ArgumentError(f"{what} contains NaN or inf ({what}[{k}] = {g[k]})")
    if np.any(np.diff(g) <= 0):
        k = int(np.argmax(np.diff(g) <= 0))
        raise ArgumentError(f"{what} must be strictly increasing: {what}[{k}] = {g[k]:g} "
                            f"is followed by {g[k + 1]:g}")
    return g


def _check_grid(t_end: Any, t_start: Any, n_points: Any, dt: Any, t_eval: Any) -> None:
    t1 = _number(t_end, "t_end")
    t0 = _number(t_start, "t_start")
    assert t0 is not None and t1 is not None
    if n_points is not None and (dt is not None or t_eval is not None):
        raise ArgumentError(
            "give the output grid one way: n_points=, dt= or t_eval= (got n_points and "
            + ("dt" if dt is not None else "t_eval") + ")")
    if t_eval is not None:
        g = time_grid(t_eval, "t_eval")
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


def _other_parameters(model: Any, bound: Sequence[tuple[Any, str, Any]] = (),
                      owners: Iterable[Any] = ()) -> dict[str, str]:
    """Parameters of the model tree that are not numeric symbols: name -> why. For a
    model loaded from a file (detached components, no tree to walk) they are read off the
    values the build bound, ``bound`` (``FlatSystem.bound_values``), and off ``owners``
    (the numeric parameters' components: those that follow others)."""
    out: dict[str, str] = {}
    if not isinstance(model, Component):
        for c, name, value in bound:
            path = c.path()
            out[f"{path}.{name}" if path else name] = "signal" if callable(value) \
                else "structural"
        for c in {id(c): c for c in owners if c is not None}.values():
            path = c.path()
            for name in getattr(c, "following", tuple)():
                out[f"{path}.{name}" if path else name] = "follows"
        return out
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
            elif value is None and isinstance(decl, Parameter) and decl.follows is not None:
                out[prefix + name] = "follows"
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
                        model: Any, bound: Sequence[tuple[Any, str, Any]] = ()
                        ) -> dict[str, float]:
    """Check ``params`` (names, values, bounds) against the numeric parameters of a model
    and return them as numbers in the declared units (``model``: the model tree, or the
    detached root of a loaded model with ``bound``, the values its build bound)."""
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
                other = (_other_parameters(model, bound, (q.owner for q in parameters))
                         if model is not None else {})
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
            if kind == "follows":
                raise ArgumentError(
                    f"{key!r} was not given, so it is calculated from other parameters of "
                    "its component (as a Modelica binding, or an FMU's calculated "
                    "parameter) and changes with them; to set it apart from them, give it "
                    "when creating the component and build again")
            raise ArgumentError(f"unknown parameter {key!r}" + did_you_mean(key, by_name))
        if p.kind == "relation":  # (the library's own: a frozen relation's truth value)
            raise ArgumentError(
                f"{key!r} is the value of a relation of the model (a comparison the event "
                "handling keeps), not a parameter: it follows the model's variables, and "
                "params= cannot set it")
        out[key] = _value(value, p)
    _check_together(out, by_name)
    return out


def _bound(cm: CompiledModel) -> list[tuple[Any, str, Any]]:
    flat = cm.state.flat
    return flat.bound_values if flat is not None else []


def _check_together(values: Mapping[str, float], by_name: Mapping[str, FlatParameter]
                    ) -> None:
    """Check the components whose parameters ``values`` overrides and that check their
    parameters together (:meth:`~acausal.component.Component.check_parameters`) with the
    values of the run (a parameter that follows others computed from them)."""
    owners: dict[int, tuple[Any, type[Component]]] = {}
    for owner in {id(o): o for o in (by_name[k].owner for k in values)}.values():
        cls = _class_of(owner)
        if cls is not None and has_parameter_check(cls):
            owners[id(owner)] = (owner, cls)
        elif cls is None and getattr(owner, "checks_parameters", bool)():
            warnings.warn(
                f"{owner._describe()}: its parameters could not be checked together "
                f"(check_parameters) with params="
                f"{ {k: v for k, v in values.items() if by_name[k].owner is owner} }: this "
                f"model was loaded without its class {owner.class_name!r}; import that "
                "module first to check them", ModelWarning, stacklevel=user_stacklevel())
    for c, cls in owners.values():
        path = c.path()
        prefix = f"{path}." if path else ""
        # (a detached component of a loaded model: the plain values saved with it)
        held = c.__dict__["_params"] if isinstance(c, Component) else c.parameters()
        ns = SimpleNamespace()
        follow: list[Parameter] = []
        for decl in cls._declarations(Parameter):  # type: ignore[attr-defined]
            p = by_name.get(prefix + decl.name)
            value = held.get(decl.name) if p is None else values.get(p.name, p.value)
            if value is None and decl.follows is not None:
                follow.append(decl)
            setattr(ns, decl.name, value)
        for decl in follow:
            setattr(ns, decl.name, decl.follows(ns))  # type: ignore[misc]
        mine = {k: v for k, v in values.items() if k.startswith(prefix)}
        if isinstance(c, Component):
            bad = c.check_parameters(ns)
        else:  # (detached: the class's method, on a stand-in that reads the class)
            try:
                bad = cls.check_parameters(_ClassView(c, cls), ns)  # type: ignore[arg-type]
            except Exception as exc:  # noqa: BLE001 - what a check reads is the user's
                warnings.warn(
                    f"{c._describe()}: its parameters could not be checked together "
                    f"with params={mine} ({type(exc).__name__}: "
                    f"{str(exc).splitlines()[0][:160] if str(exc) else ''}): its "
                    "check_parameters() reads the component object, which a loaded model "
                    "does not have; build the model class again to check them",
                    ModelWarning, stacklevel=user_stacklevel())
                continue
        if bad:
            raise ArgumentError(f"{c._describe()}: {bad} (with params={mine})")


class _ClassView:
    """A detached component (of a loaded model) seen by its class's
    ``check_parameters``: the class's attributes (constants, methods) and the detached
    component's own (its path, description)."""

    def __init__(self, detached: Any, cls: type) -> None:
        self._detached, self._cls = detached, cls

    def __getattr__(self, name: str) -> Any:
        raw = inspect.getattr_static(self._cls, name, _MISSING)
        if raw is _MISSING or isinstance(raw, Parameter):
            return getattr(self._detached, name)
        if isinstance(raw, types.FunctionType):  # (a method: bound to the view)
            return raw.__get__(self)
        if isinstance(raw, property) and raw.fget is not None:
            return raw.fget(self)
        return getattr(self._cls, name)


_MISSING = object()


def _class_of(owner: Any) -> type[Component] | None:
    """The class of a parameter's component: a live one's, or a detached one's (a loaded
    model's) where it can be imported; None otherwise."""
    if isinstance(owner, Component):
        return type(owner)
    find = getattr(owner, "original_class", None)
    return find() if find is not None else None


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


def _stale_values(cm: CompiledModel, params: Mapping[str, Any],
                  starts: Mapping[str, Any], call: str | None = "simulate") -> None:
    """Parameters and start values changed on the model after the build, and not given
    for this run (``params=``, ``start=``), are an error that names them: the compiled
    model would run with its old values. Looked for only when a value was set anywhere
    since the build, or since the last run that found none changed and overrode none.
    ``call``: the function whose ``params=``/``start=`` the message suggests (None: it
    has none; the message says to build again)."""
    written = PARAMETER_WRITES[0]
    if cm.parameters_written == written:
        return
    passed_over = _stale_parameters(cm, params, call)
    passed_over = _stale_starts(cm, starts, cm.parameters_written, call) or passed_over
    if not passed_over:
        cm.parameters_written = written


def check_current(cm: CompiledModel, call: str | None,
                  params: Mapping[str, Any] | None = None) -> None:
    """For the functions that take a compiled model besides :func:`acausal.simulate`
    (``linearize``, ``fmu``, the exported simulators, collocation): a parameter or start
    value changed on the model's components after the build is an error that names it,
    as in ``simulate`` (they would use the old value)."""
    _stale_values(cm, params or {}, {}, call)


#: what to do with a model that has events, for the functions of one smooth DAE
USE_SIMULATE = ("Simulate it with acausal.simulate (which locates the events), or replace "
                "the switching components by smooth ones")


def check_smooth(cm: CompiledModel, what: str, instead: str) -> None:
    """``what`` transcribes or integrates one smooth DAE: a model with events (relations,
    when clauses) is an error that names them and says what to do ``instead``."""
    d = cm.dae
    whens = list(cm.flat.whens)
    if not (d.relations or whens):
        return
    from .persist import class_name

    found = [f"{r.text} [{', '.join(r.components)}]" for r in d.relations[:3]]
    found += [f"a when clause [{w.origin}]" for w in whens[:max(0, 3 - len(found))]]
    more = len(d.relations) + len(whens) - len(found)
    raise ArgumentError(
        f"{what} needs one smooth DAE, but {class_name(cm.model)} has events (relations or "
        f"when clauses, whose modes switch): " + "; ".join(found)
        + (f"; and {more} more" if more > 0 else "") + f". {instead}")


def _redo(call: str | None, what: str, name: str, value: Any) -> str:
    """How to get a changed value into the run: pass it (``call``'s ``what=``), or build
    again."""
    if call is None:
        return "build the model again (cm = ac.build(model))"
    return f"give it for the run, {call}(cm, ..., {what}={{{name!r}: {value!r}}}), or build " \
           "the model again"


def _stale_starts(cm: CompiledModel, overridden: Mapping[str, Any], since: int,
                  call: str | None = "simulate") -> bool:
    """Start values or fixed flags set on the model's components since ``since`` that
    differ from the compiled model's; True if one is given for this run (``start=``)."""
    flat = cm.state.flat
    if flat is None or cm.parameters_written < 0:  # (a loaded model: nothing can change)
        return False
    index, variables = flat.index, flat.variables
    passed_over = False
    for c in cm.model.walk():
        for vi in (c.__dict__.get("_vars") or {}).values():
            if getattr(vi, "_written", 0) <= since:
                continue
            path = c.path()
            name = f"{path}.{vi.name}" if path else vi.name
            names = [name] if vi.size == 1 else [f"{name}_{k}" for k in range(vi.size)]
            try:
                now: list[float] | None = start_values(vi._start, vi.size, name)
            except ModelDefinitionError:
                now = None
            built = [variables[index[n]] for n in names if n in index]
            known = now is not None and len(built) == len(names)
            start_same = known and all(b.start == x for b, x in zip(built, now or [],
                                                                    strict=True))
            fixed_same = known and all(b.fixed == vi.fixed for b in built)
            if start_same and fixed_same:
                continue
            unit = f" {vi.unit}" if vi.unit and vi.unit != "1" else ""
            kind = "fixed" if vi.fixed else "a guess"
            if not fixed_same and known:  # (start= keeps the built kind: a new build)
                raise ArgumentError(
                    f"the start value of {name} was made {kind} after the model was built, "
                    f"and the compiled model still takes it as "
                    f"{'a guess' if vi.fixed else 'fixed'}: build the model again")
            if any(n in overridden for n in names):
                passed_over = True
                continue
            was = (f"; the compiled model still starts it at {built[0].start:g}{unit}"
                   if known and vi.size == 1 else "")
            raise ArgumentError(
                f"the start value of {name} was changed to {vi._start!r}{unit} ({kind}) "
                f"after the model was built{was}: "
                + _redo(call, "start", name, vi._start))
    return passed_over


def _stale_parameters(cm: CompiledModel, overridden: Mapping[str, Any],
                      call: str | None = "simulate") -> bool:
    """Parameters changed on the model after the build (and not overridden by params=);
    True if one is overridden by this run."""
    helds, keys, params = _watched(cm)
    now = list(map(dict.get, helds, keys))  # (in C: 40 000 parameters in a few ms)
    built = [p.value for p in params]
    differs = [v.__class__ is not float or v != b for v, b in zip(now, built, strict=True)]
    passed_over = False  # (a change overridden by this run: the next one looks again)
    for k in itertools.compress(range(len(now)), differs):
        p, value = params[k], now[k]
        if value is None or (isinstance(value, (int, float)) and float(value) == p.value):
            continue
        if p.name in overridden:
            passed_over = True
            continue
        unit = f" {p.unit}" if p.unit and p.unit != "1" else ""
        if callable(value):
            raise ArgumentError(
                f"{p.name} was made a function of time after the model was built (it was "
                f"built as the constant {p.value:g}{unit}); build the model again")
        raise ArgumentError(
            f"{p.name} was changed to {value!r}{unit} after the model was built, and the "
            f"compiled model still uses {p.value:g}{unit}: "
            + _redo(call, "params", p.name, value))
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
    return passed_over


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


def _start_shapes(start: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """``start`` checked before the model is built: a dict of dotted names to numbers,
    strings with units, or vectors of them (what the names are and their units are
    known once it is built: :func:`check_start`)."""
    if start is None:
        return None
    if not isinstance(start, Mapping):
        raise ArgumentError(f"start must be a dict {{'path.name': value}}, got {start!r}")
    for key, value in start.items():
        if not isinstance(key, str):
            raise StartValueError(f"start keys are dotted names ('capacitor.v'), got {key!r}")
        elements = [value] if isinstance(value, str) else np.ravel(np.asarray(value, object))
        for x in elements:
            if not isinstance(x, str):
                try:
                    _number(x, f"start[{key!r}]")
                except ArgumentError as exc:
                    raise StartValueError(str(exc)) from None
    return dict(start)


def check_start(cm: CompiledModel, start: Mapping[str, Any] | None
                ) -> dict[str, Any] | None:
    """``start`` of :func:`acausal.simulate` for the compiled model: each name a variable
    (a vector's by its name), each value a number in SI units within the declared
    range."""
    start = _start_shapes(start)
    if start is None:
        return None
    out: dict[str, Any] = {}
    variables = {v.name: v for v in cm.system.variables}
    start = _vector_starts(cm, start, variables)
    discrete = {q.name: q for q in cm.system.parameters if q.kind == "discrete"}
    unknown = [k for k in start if k not in variables and k not in discrete]
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
        unit = v.unit if v is not None else (discrete[key].unit if key in discrete else "")
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
    if cm.flat.initial_equations:
        _set_by_initial_equations(cm, out)
    return out


def _set_by_initial_equations(cm: CompiledModel, start: Mapping[str, float]) -> None:
    """Warn about start values given for variables that an initial equation sets from
    parameters alone (``y == y_start`` of an integrator): the start value is not used,
    the parameter is what to change."""
    params = {p.name for p in cm.system.parameters}
    for eq in cm.flat.initial_equations:
        names = [s.name() for s in cs.symvar(eq.res)]
        unknowns = [n for n in names if n not in params and n != "time"]
        if len(unknowns) != 1 or unknowns[0] not in start:
            continue
        key = unknowns[0]
        given = [n for n in names if n in params]
        hint = (f"; to start it at {start[key]:g}, give the parameter instead: "
                f"params={{{given[0]!r}: {start[key]:g}}}" if len(given) == 1
                else f"; change {', '.join(given)} (params=) instead" if given
                else "; to change it, create the component with other start parameters")
        warnings.warn(
            f"start[{key!r}] is not used: the initial equation {eq.text()} of {eq.origin} "
            f"sets {key} at the start{hint}", ModelWarning, stacklevel=user_stacklevel())


# --------------------------------------------------------------------------------------
# the entry point
# --------------------------------------------------------------------------------------


def check_simulate_arguments(
        model: Any, t_end: Any, *, t_start: Any = 0.0, n_points: Any = None, dt: Any = None,
        t_eval: Any = None, rtol: Any = 1e-6, atol: Any = 1e-8,
        params: Mapping[str, Any] | None = None, start: Mapping[str, Any] | None = None,
        max_step: Any = None, solver: Any = "idas", raise_on_failure: Any = True,
        solver_options: Any = None
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
    _check_solver_options_type(solver_options)
    if solver != "auto":
        check_solver_options(solver, solver_options)
    if isinstance(model, CompiledModel):
        checked = parameter_overrides(params, model.system.parameters, model.model,
                                      _bound(model))
        starts = check_start(model, start)
        _stale_values(model, checked, starts or {})
        return (checked if params is not None else None), starts
    # (a model's start values: checked again once it is built: check_start)
    if params is None:
        return None, _start_shapes(start)
    declared = [FlatParameter(name, cs.SX(), float(value), decl.unit, decl.doc, decl, owner)
                for name, decl, owner, value in _numeric_parameters(model)]
    return parameter_overrides(params, declared, model), _start_shapes(start)


_OPTION_VALUE = (bool, int, float, str, np.integer, np.floating, type(None))


def _check_solver_options_type(options: Any) -> None:
    """``solver_options`` is a dict of names to plain values (numbers, strings, booleans)."""
    if options is None:
        return
    if not isinstance(options, Mapping):
        raise ArgumentError(
            f"solver_options must be a dict {{'name': value}}, got {_short(options)} "
            f"({type(options).__name__})")
    for key, value in options.items():
        if not isinstance(key, str):
            raise ArgumentError(f"solver_options keys are option names (str), got {key!r}")
        if not isinstance(value, _OPTION_VALUE):
            raise ArgumentError(
                f"solver_options[{key!r}] = {_short(value)} ({type(value).__name__}): an "
                "option's value is a number, a string or a boolean")


def check_solver_options(solver: str, options: Mapping[str, Any] | None) -> None:
    """Every key of ``options`` is one the backend ``solver`` knows; an unknown one is an
    :class:`ArgumentError` that lists the known ones."""
    if not options:
        return
    from .solvers.base import integrator_class

    known = tuple(getattr(integrator_class(solver), "known_options", ()))
    unknown = sorted(k for k in options if k not in known)
    if unknown:
        raise ArgumentError(
            f"the {solver} solver has no option {', '.join(map(repr, unknown))} "
            f"(solver_options); "
            + (f"its options are {', '.join(map(repr, known))}" if known else
               "it takes none (its settings are simulate's rtol, atol, max_step and mode)")
            + (did_you_mean(unknown[0], known) if known else ""))


def _short(value: Any, width: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= width else text[: width - 3] + "..."


def _numeric_parameters(model: Component) -> list[tuple[str, Parameter, Component, Any]]:
    """The parameters a build of ``model`` makes symbols (before building it)."""
    out = []
    for c in model.walk():
        path = c.path()
        prefix = f"{path}." if path else ""
        cls = type(c)
        for name, value in c.__dict__["_params"].items():
            decl = getattr(cls, name, None)
            if isinstance(decl, Parameter) and not decl.structural and not callable(value) \
                    and value is not None:  # (None: calculated from others, no parameter)
                out.append((prefix + name, decl, c, value))
    return out


# --------------------------------------------------------------------------------------
# functions of time given for parameters with a declared range
#: samples of a run's span at which the functions of time are checked, besides its grid
#: (each costs some 0.3 us per function: 1000 and 501 output points, 0.5 ms in all)
SIGNAL_SAMPLES = 1_000


def _ranged_signals(cm: CompiledModel) -> list[tuple[Parameter, Any, cs.Function]]:
    """The functions of time given for parameters whose declaration bounds them
    (``Convection(Gc=lambda t: ...)``, ``Gc >= 0``): each as its declaration, its
    component and ``(p, t) -> value`` (found once per model). A loaded model's are found
    where its component's class can be imported (:func:`_class_of`)."""
    got = _SIGNALS.get(cm)
    if got is not None:
        return got
    got = []
    d = cm.dae
    for c, name, value in _bound(cm):
        cls = _class_of(c) if callable(value) else None
        decl = inspect.getattr_static(cls, name, None) if cls is not None else None
        if not isinstance(decl, Parameter) or (decl.min is None and decl.max is None):
            continue
        path = c.path()
        k = d.out_index.get(f"{path}.{name}" if path else name)
        if k is None:
            continue
        try:  # (a function of time and parameters: of nothing the run integrates)
            got.append((decl, c, cs.Function("signal", [d.p, d.t], [cs.vec(d.out_expr[k])])))
        except RuntimeError:
            continue
    _SIGNALS[cm] = got
    return got


_SIGNALS: weakref.WeakKeyDictionary[CompiledModel, list[tuple[Parameter, Any, cs.Function]]] = (
    weakref.WeakKeyDictionary())


def check_signal_ranges(cm: CompiledModel, p: np.ndarray, times: Any) -> None:
    """Refuse a function of time given for a parameter that leaves the parameter's
    declared range at ``times`` (a run's output grid) or at :data:`SIGNAL_SAMPLES` even
    samples of their span, as a constant out of range is refused: a convection
    ``Gc = 5 - t`` run to 10 s made heat flow from the cold fluid into the hot body
    after 5 s, silently. An excursion narrower than the samples' spacing (the span over
    :data:`SIGNAL_SAMPLES`) that falls between two output points is not seen. Round-off
    beyond an inclusive bound (1e-12 of the values' scale) is accepted."""
    signals = _ranged_signals(cm)
    if not signals:
        return
    t = np.asarray(times, dtype=float).ravel()
    if len(t) > 1:
        t = np.concatenate([t, np.linspace(t[0], t[-1], SIGNAL_SAMPLES + 1)])
    for decl, c, f in signals:
        v = np.asarray(_mapped(f, len(t))(p, t.reshape(1, -1)))  # (elements, times)
        k = _first_out_of_range(decl, v, t)
        if k is None:
            continue
        at = v[:, k]
        bad = next(b for b in (decl.problem(float(x)) for x in at) if b is not None)
        span = f" (the run goes from {t[0]:g} to {t[-1]:g} s)" if len(t) > 1 else ""
        raise ModelDefinitionError(
            f"{c._describe()}: parameter {decl.name!r}, the function of time given for it, "
            f"at t = {t[k]:.9g} s: {decl.name} {bad}{span}. A value out of range is "
            "refused as a constant is: give a function that stays in the range over the "
            "run, or end the run before it leaves it")


def _mapped(f: cs.Function, n: int) -> cs.Function:
    """``f`` mapped over ``n`` times (made once per length: 2 ms each)."""
    key = (f.name(), id(f), n)
    got = _MAPS.get(key)
    if got is None:
        if len(_MAPS) > 64:
            _MAPS.clear()
        got = _MAPS[key] = (f, f.map(n))
    return got[1]


_MAPS: dict[tuple[str, int, int], tuple[cs.Function, cs.Function]] = {}  # (f kept: its id)


def _first_out_of_range(decl: Parameter, v: np.ndarray, t: np.ndarray) -> int | None:
    """The column of ``v`` with a value out of ``decl``'s range (round-off beyond an
    inclusive bound aside) at the earliest of the times ``t``, or None."""
    finite = np.isfinite(v)
    scale = 1e-12 * max(float(np.max(np.abs(v[finite]), initial=0.0)), abs(decl.min or 0.0),
                        abs(decl.max or 0.0))
    out = ~finite.all(axis=0)
    with np.errstate(invalid="ignore"):
        if decl.min is not None:
            lo = decl.min - (scale if decl.min_inclusive else 0.0)
            out |= (v < lo if decl.min_inclusive else v <= lo).any(axis=0)
        if decl.max is not None:
            hi = decl.max + (scale if decl.max_inclusive else 0.0)
            out |= (v > hi if decl.max_inclusive else v >= hi).any(axis=0)
    return int(np.flatnonzero(out)[np.argmin(t[out])]) if out.any() else None
