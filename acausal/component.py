"""Declaring components and models: parameters, variables, ports, terminal graphs, equations.

A component is a Python class. Its class body declares

* ``Parameter`` s (numeric constants with unit; ``signal=True`` also accepts a function of
  time),
* ``Variable`` s (unknowns with start value, ``fixed`` flag, unit),
* ``Port`` s of a :class:`~acausal.domains.Domain`,
* ``edges``: its terminal graph, a list of :class:`Edge` between its ports or the datum,

and a method ``equations(self)`` returning a list of CasADi equations
(``self.v == self.R * self.i``) or residuals (expressions equal to zero).

Inside ``equations`` every declared name is a CasADi symbol: ``self.R`` the parameter,
``self.v`` the variable, ``self.p.v`` and ``self.p.i`` the port's across and through
variables, ``der(x)`` the time derivative, ``self.time`` the time. Outside ``equations``
the same attributes give the declarations of this instance (``comp.v.start = 1.0``).

Equations are inherited like Modelica's ``extends``: the ``equations`` method of every
class in the hierarchy contributes, base classes first. Do not call ``super().equations()``.

A model is a component whose sub-components are attributes and whose ``__init__`` calls
``self.connect(port, port, ...)``.
"""

from __future__ import annotations

import collections
import functools
import itertools
import math
import warnings
import weakref
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import casadi as cs
import numpy as np

from . import symbols
from .domains import Domain
from .errors import ConnectionError_, ModelDefinitionError, ModelWarning, user_stacklevel
from .gcpause import collector_paused
from .records import record

__all__ = [
    "DATUM",
    "TreePriority",
    "Edge",
    "Parameter",
    "Variable",
    "Port",
    "RealInput",
    "RealOutput",
    "PortInstance",
    "bind_port",
    "bind_ports",
    "VariableInstance",
    "Component",
    "Model",
    "der",
    "guess",
    "Guess",
]


class _Datum:
    def __repr__(self) -> str:
        return "DATUM"


DATUM: Any = _Datum()
"""Stands for the datum vertex of the edge's domain (ground, inertial frame, absolute zero)."""


class TreePriority:
    """Normal-tree preferences: lower numbers go into the spanning tree first.

    Across sources must be in the tree, through sources in the cotree; across-type storage
    (capacitors, masses) is preferred in the tree, through-type storage (inductors, springs)
    in the cotree (DESIGN.md section 3).
    """

    ACROSS_SOURCE = 0
    ACROSS_STORE = 10
    NEUTRAL = 20
    THROUGH_STORE = 30
    THROUGH_SOURCE = 40


@record(frozen=True)
class Edge:
    """One edge of a component's terminal graph.

    Parameters
    ----------
    initial, final : str or DATUM
        Port names of the component (or ``DATUM``). The edge's across variable is
        ``x_final - x_initial``; its through variable flows from initial to final
        (it enters the component at ``initial`` and leaves at ``final``).
    priority : int
        Tree preference (see :class:`TreePriority`).
    """

    initial: Any
    final: Any
    priority: int = TreePriority.NEUTRAL


def der(expr: Any) -> cs.SX:
    """Time derivative of a variable or of an expression of variables (chain rule).

    Only valid inside ``equations()`` / ``initial_equations()``.
    """
    table = symbols.current()
    if table is None:
        raise ModelDefinitionError(
            "der() can only be used inside a component's equations() or initial_equations()"
        )
    return table.der(expr)


# --------------------------------------------------------------------------------------
# Declarations
# --------------------------------------------------------------------------------------


class _Declaration:
    name: str = "?"

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name


def _bound_text(lo: float | None, lo_incl: bool, hi: float | None, hi_incl: bool,
                unit: str) -> str:
    """``"> 0 H"``, ``">= 0 and <= 1"``: the declared range, for messages."""
    u = f" {unit}" if unit and unit != "1" else ""
    parts = []
    if lo is not None:
        parts.append(f"{'>=' if lo_incl else '>'} {lo:g}{u}")
    if hi is not None:
        parts.append(f"{'<=' if hi_incl else '<'} {hi:g}{u}")
    return " and ".join(parts)


def bounds_problem(value: float, lo: float | None, lo_incl: bool, hi: float | None,
                   hi_incl: bool, unit: str = "") -> str | None:
    """What is wrong with a number given for a bounded declaration, or None."""
    if not math.isfinite(value):
        return f"is {value}; it must be a finite number"
    if (lo is not None and (value < lo or (value == lo and not lo_incl))) or (
            hi is not None and (value > hi or (value == hi and not hi_incl))):
        why = ""
        if lo == 0 and not lo_incl and value == 0:
            why = " (zero is excluded: the component divides by it or it is meaningless)"
        u = f" {unit}" if unit and unit != "1" else ""
        return (f"= {value:g}{u} is out of its range: it must be "
                f"{_bound_text(lo, lo_incl, hi, hi_incl, unit)}{why}")
    return None


def _with_unit(value: str, unit: str, what: str) -> float:
    """A value written with a unit (``"1 kOhm"``) in the declared unit; ``what`` names the
    declaration for the message."""
    from .errors import UnitError
    from .units import convert

    try:
        return convert(value, unit)
    except UnitError as exc:
        raise UnitError(f"{what}: {exc}") from None


class ParameterList(list):  # type: ignore[type-arg]
    """The value of an array parameter (``FixedTranslation.r``): a list that refuses to be
    changed in place. A change in place would pass by the parameter's checks and, after a
    build, by the compiled model's look for changed parameters: its runs would go on with
    the old value, silently. Assign the whole value instead (``rod.r = [2, 0, 0]``); a
    copy (``list(rod.r)``, ``copy.copy``, a pickle) is a plain list."""

    __slots__ = ("_owner", "_name")
    _owner: weakref.ref[Component]
    _name: str

    @classmethod
    def of(cls, items: list[Any], owner: Component, name: str) -> ParameterList:
        out = cls(cls.of(x, owner, name) if isinstance(x, list) else x for x in items)
        out._owner, out._name = weakref.ref(owner), name
        return out

    def _refuse(self, *args: Any, **kwargs: Any) -> Any:
        owner = self._owner()
        path = owner.path() if owner is not None else ""
        where = owner._describe() if owner is not None else "a component"
        raise ModelDefinitionError(
            f"{where}: parameter {self._name!r} cannot be changed in place; assign its whole "
            f"value, {path or 'component'}.{self._name} = [...] (a model already built "
            "would otherwise run with the old value)")

    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse
    append = extend = insert = pop = remove = sort = reverse = clear = _refuse

    def __reduce__(self) -> tuple[Any, ...]:
        return (list, (list(self),))


#: how many parameter values or start values were set on any component
#: (``Parameter.__set__``, ``VariableInstance.set``): a compiled model looks for values
#: changed after its build only when this moved since
#: (:func:`acausal.checks.check_simulate_arguments`; 40 000 parameters took 20-30 ms)
PARAMETER_WRITES = [0]


class Parameter(_Declaration):
    """A constant of the model (value fixed during a simulation, changeable between runs).

    Parameters
    ----------
    default : float or callable or None
        Default value in SI units. ``None`` means the user must give it.
    unit : str
        SI unit, e.g. ``"Ohm"`` (see :mod:`acausal.units`). A value may be given as a
        string with a unit, ``Resistor(R="1 kOhm")``, and is converted to this unit.
    doc : str
        One-line description.
    min, max : float, optional
        Physical bounds, checked at construction and for overrides (``simulate(params=)``).
    min_inclusive, max_inclusive : bool
        Whether the bound itself is allowed (default True). Declare
        ``min=0.0, min_inclusive=False`` where the component divides by the parameter or
        zero is meaningless (a mass, an inductance, an absolute temperature).
    nonzero : bool
        Zero is excluded, either sign is allowed (a gear ratio).
    signal : bool
        If True, the value may also be a function of time ``f(t)`` written with numpy-style
        math (``lambda t: 10 * np.sin(3 * t)``); it is evaluated symbolically once at build.
    structural : bool
        If True, the value is a plain Python value used when the model is built (a size,
        a flag, a vector) and never becomes a symbol.
    shape : tuple of int, optional
        For a structural array of numbers (a 3-vector in a frame, a gravity vector): its
        shape. The value is checked when it is set: numbers (or strings with a unit,
        ``["10 mm", 0, 0]``), finite, of this shape; it is kept as a list of floats. With
        ``signal=True`` it may also be a function of time; with the default ``None``, also
        ``None``.
    direction : bool
        With ``shape=(3,)``: the vector only gives a direction (the component normalises
        it), so the zero vector is rejected.
    follows : callable, optional
        A default that is an expression of the component's other parameters (Modelica's
        binding ``uMin = -uMax``): ``Parameter(follows=lambda p: -p.uMax)``. While the
        parameter is not given (or given as ``None``), it is that expression: it follows
        the others when they are changed, on the component or by ``simulate(params=)``,
        and is not a parameter of its own in the compiled model.
    """

    # (class defaults: declarations pickled before these existed have no attribute)
    shape: tuple[int, ...] | None = None
    direction: bool = False
    follows: Callable[[Any], Any] | None = None
    nonzero: bool = False

    def __init__(
        self,
        default: Any = None,
        *,
        unit: str = "",
        doc: str = "",
        min: float | None = None,
        max: float | None = None,
        min_inclusive: bool = True,
        max_inclusive: bool = True,
        signal: bool = False,
        structural: bool = False,
        shape: tuple[int, ...] | None = None,
        direction: bool = False,
        follows: Callable[[Any], Any] | None = None,
        nonzero: bool = False,
    ) -> None:
        self.default = default
        self.unit = unit
        self.doc = doc
        self.min = min
        self.max = max
        self.min_inclusive = min_inclusive
        self.max_inclusive = max_inclusive
        self.signal = signal
        self.structural = structural
        if shape is not None:
            self.shape = tuple(shape)
        if direction:
            if self.shape != (3,):
                raise ValueError("Parameter(direction=True) needs shape=(3,)")
            self.direction = True
        if follows is not None:
            self.follows = follows
        if nonzero:
            self.nonzero = True

    def __getstate__(self) -> dict[str, Any]:
        # (a saved model keeps the declaration without the function ``follows``, often a
        # lambda: its parameters are numbers there, as they were built)
        return {k: v for k, v in self.__dict__.items() if k != "follows"}

    def problem(self, value: float) -> str | None:
        """What is wrong with the number ``value`` for this parameter, or None."""
        bad = bounds_problem(value, self.min, self.min_inclusive, self.max,
                             self.max_inclusive, self.unit)
        if bad is None and value == 0 and self.nonzero:
            return ("= 0 is excluded: it must be nonzero, of either sign (the component "
                    "divides by it or it is meaningless)")
        return bad

    def check(self, owner: Component, value: Any) -> Any:
        if self.structural:
            if self.shape is not None:
                return self._array(owner, value)
            if (self.min is not None or self.max is not None) and isinstance(value, str):
                # (a bounded structural number, a length: "50 cm" as for other parameters)
                value = _with_unit(value, self.unit,
                                   f"{owner._describe()}: parameter {self.name!r} [{self.unit}]")
            if (self.min is not None or self.max is not None) and not isinstance(value, bool) \
                    and isinstance(value, (int, float, np.integer, np.floating)):
                bad = self.problem(float(value))  # (a declared range holds here too)
                if bad is not None:
                    raise ModelDefinitionError(
                        f"{owner._describe()}: parameter {self.name!r} {bad}")
            return value
        given = ""
        if isinstance(value, str):
            given = f" (given as {value!r})"
            value = _with_unit(value, self.unit,
                               f"{owner._describe()}: parameter {self.name!r} [{self.unit}]")
        if callable(value):
            if not self.signal:
                raise ModelDefinitionError(
                    f"{owner._describe()}: parameter {self.name!r} is a constant and cannot be "
                    "a function of time; use a signal source component instead"
                )
            return value
        if value is None:
            if self.follows is not None:
                return None  # (not given: it follows the others)
            raise ModelDefinitionError(
                f"{owner._describe()}: parameter {self.name!r} [{self.unit}] has no default; "
                f"give it as a keyword, e.g. {type(owner).__name__}({self.name}=...)"
            )
        if isinstance(value, bool):
            raise ModelDefinitionError(
                f"{owner._describe()}: parameter {self.name!r} must be a number, got {value!r}")
        try:
            v = float(value)
        except (TypeError, ValueError):
            raise ModelDefinitionError(
                f"{owner._describe()}: parameter {self.name!r} must be a number"
                + (" or a function of time" if self.signal else "")
                + f" (or a string with a unit, '1 kOhm'), got {value!r}"
            ) from None
        bad = self.problem(v)
        if bad is not None:
            raise ModelDefinitionError(
                f"{owner._describe()}: parameter {self.name!r} {bad}{given}")
        return v

    def _array(self, owner: Component, value: Any) -> Any:
        """A structural array of numbers (``shape``) checked, as a list of floats."""
        what = f"{owner._describe()}: parameter {self.name!r}"
        if value is None and self.default is None:
            return None  # (a declared "none given": the component works it out)
        if callable(value):
            if self.signal:
                return value
            raise ModelDefinitionError(f"{what} is a constant and cannot be a function of time")
        shape = self.shape or ()
        unit = f" [{self.unit}]" if self.unit and self.unit != "1" else ""
        want = (f"{shape[0]} numbers{unit}" if len(shape) == 1
                else f"a {' x '.join(map(str, shape))} array of numbers{unit}")
        try:
            items = np.asarray(value, dtype=object)
        except ValueError:  # (a ragged nesting)
            items = np.empty(0, dtype=object)
        if len(shape) == 1 and items.ndim == 2 and 1 in items.shape:
            items = items.ravel()  # (a numpy column or row vector)
        if items.shape != shape:
            raise ModelDefinitionError(f"{what} must be {want}, got {value!r}")
        out = []
        for x in items.ravel().tolist():
            if isinstance(x, str):
                x = _with_unit(x, self.unit, f"{what} [{self.unit}]")
            try:
                if isinstance(x, bool):
                    raise TypeError
                x = float(x)
            except (TypeError, ValueError):
                raise ModelDefinitionError(f"{what} must be {want}, got {value!r}") from None
            if not math.isfinite(x):
                raise ModelDefinitionError(
                    f"{what} must be finite, got {value!r}")
            out.append(x)
        if self.direction and not any(out):
            raise ModelDefinitionError(
                f"{what} is a direction and must not be the zero vector, got {value!r}")
        return ParameterList.of(np.reshape(out, shape).tolist(), owner, self.name)

    def __get__(self, inst: Component | None, owner: type) -> Any:
        if inst is None:
            return self
        b = inst.__dict__.get("_binding")
        if b is not None and self.name in b:
            return b[self.name]
        value = inst.__dict__["_params"][self.name]
        if value is None and self.follows is not None:
            return self.follows(inst)
        return value

    def __set__(self, inst: Component, value: Any) -> None:
        inst.__dict__["_params"][self.name] = self.check(inst, value)
        PARAMETER_WRITES[0] += 1


@record
class Guess:
    """A start value used only as a guess (``fixed=False``); see :func:`guess`."""

    value: Any


def guess(value: Any) -> Guess:
    """Mark a start value as a guess: ``Inertia(J=1, w=ac.guess(10.0))``."""
    return Guess(value)


class Variable(_Declaration):
    """An unknown of the model.

    Parameters
    ----------
    start : float or sequence
        Start value: the initial value if ``fixed``, otherwise a guess (default 0).
    fixed : bool
        Whether the start value is an initial condition.
    unit, doc : str
        SI unit and one-line description.
    size : int
        Number of components (1 = scalar).
    nominal : float, optional
        Typical magnitude (scaling hint).
    state_priority : int
        Preference for becoming a state in dummy-derivative selection (higher = preferred;
        like Modelica's ``stateSelect``: -1 avoid, 0 default, 1 prefer).
    hint : str
        Shown in the error message when the model leaves this variable undetermined (as the
        MSL's ``unassignedMessage``): say what the user most likely forgot.
    discrete : bool
        Constant between events, changed only by ``ac.when(..., ac.assign(v, ...))``
        (Modelica's discrete variables); its start value is its first value.
    min, max : float, optional
        Physical bounds of the quantity (an absolute temperature: ``min=0``), checked for
        the start values a user gives (keywords, ``simulate(start=)``).
    """

    #: whether the declaration gives its start value (checked against min and max when the
    #: class is created; the default 0 is only a guess)
    start_given: bool = False

    def __init__(
        self,
        *,
        start: Any = None,
        fixed: bool = False,
        unit: str = "",
        doc: str = "",
        size: int = 1,
        nominal: float | None = None,
        state_priority: int = 0,
        hint: str = "",
        discrete: bool = False,
        min: float | None = None,
        max: float | None = None,
    ) -> None:
        self.start = 0.0 if start is None else start
        if start is not None:
            self.start_given = True
        self.fixed = fixed
        self.unit = unit
        self.doc = doc
        self.size = size
        self.nominal = nominal
        self.state_priority = state_priority
        self.hint = hint
        self.discrete = discrete
        self.min = min
        self.max = max

    def problem(self, value: Any) -> str | None:
        """What is wrong with a start value for this variable, or None."""
        if type(value) is float or type(value) is int:  # (the common case: no array)
            return bounds_problem(float(value), self.min, True, self.max, True, self.unit)
        for v in np.ravel(np.asarray(value, dtype=float)):
            bad = bounds_problem(float(v), self.min, True, self.max, True, self.unit)
            if bad is not None:
                return bad
        return None

    def __get__(self, inst: Component | None, owner: type) -> Any:
        if inst is None:
            return self
        b = inst.__dict__.get("_binding")
        if b is not None and self.name in b:
            return b[self.name]
        return inst.__dict__["_vars"][self.name]

    def __set__(self, inst: Component, value: Any) -> None:
        inst.__dict__["_vars"][self.name].set(value)


def _declared(field: str) -> property:
    """A field of a :class:`VariableInstance` that is its declaration's unless the instance
    was given its own (``comp.variables()["x"].state_priority = 3``)."""

    def get(self: VariableInstance) -> Any:
        own = self._own
        if own is not None and field in own:
            return own[field]
        return getattr(self.decl, field)

    def put(self: VariableInstance, value: Any) -> None:
        if self._own is None:
            self._own = {}
        self._own[field] = value

    return property(get, put, doc=f"The declaration's {field}, unless this instance's own.")


class VariableInstance:
    """The declaration of one variable of one component instance (editable start/fixed)."""

    # (slots: a model of 100 000 components holds over half a million of these; the
    # fields an instance seldom changes are its declaration's, read through it, and kept in
    # ``_own`` once changed: 6 slots, 80 bytes, instead of 12, 128)
    __slots__ = ("decl", "owner", "_start", "_fixed", "_written", "_own")

    def __init__(self, decl: Variable, owner: Component) -> None:
        self.decl = decl
        self.owner = owner
        self._start = decl.start
        self._fixed = decl.fixed
        #: ``PARAMETER_WRITES`` at this start value's last change (0: as declared): a run of
        #: a model built before it finds the change (acausal.checks)
        self._written = 0
        #: the fields this instance changed (``unit``, ``size``, ``nominal``, ...), or None
        self._own: dict[str, Any] | None = None

    name = _declared("name")
    unit = _declared("unit")
    size = _declared("size")
    nominal = _declared("nominal")
    state_priority = _declared("state_priority")
    hint = _declared("hint")
    discrete = _declared("discrete")

    def __setstate__(self, state: Any) -> None:
        # (a copy or a pickle: the slots by name, ``_own`` None unless given; a state of
        # the 12-slot layout puts its declaration fields in ``_own`` through the setters)
        self._own = None
        d, slots = state if isinstance(state, tuple) else (state, None)
        for key, value in {**(d or {}), **(slots or {})}.items():
            setattr(self, key, value)

    def set(self, value: Any) -> None:
        """Set from a keyword: a number fixes the start value, ``guess(x)`` only guesses.

        A string with a unit (``"20 degC"``) is converted to the declared unit."""
        if isinstance(value, VariableInstance):
            raise ModelDefinitionError(f"{self.owner._describe()}: cannot assign a variable")
        fixed = not isinstance(value, Guess)
        v = value.value if isinstance(value, Guess) else value
        given = ""
        if isinstance(v, str):
            given = f" (given as {v!r})"
            v = _with_unit(v, self.unit, f"{self._what()} [{self.unit}]")
        try:
            if v is None or type(v) is bool:
                raise TypeError
            bad = self.decl.problem(v)
        except (TypeError, ValueError):
            raise ModelDefinitionError(
                f"{self._what()} must be a number (or a string with a unit, '20 degC'), "
                f"got {v!r}"
                + (f"; the declared start value is {self.decl.start!r}, and fixed=False makes "
                   "it only a guess" if v is None else "")
            ) from None
        if bad is not None:
            raise ModelDefinitionError(f"{self._what()} {bad}{given}")
        self._start, self.fixed = v, fixed

    @property
    def doc(self) -> str:
        """The declaration's description."""
        return self.decl.doc

    @property
    def fixed(self) -> bool:
        """Whether the start value is a condition of the initialisation (else a guess)."""
        return self._fixed

    @fixed.setter
    def fixed(self, value: bool) -> None:
        self._fixed = value
        PARAMETER_WRITES[0] += 1
        self._written = PARAMETER_WRITES[0]

    def _what(self) -> str:
        """The start value named for a message: ``"Mass 'm': start value of 's'"``."""
        return f"{self.owner._describe()}: start value of {self.name!r}"

    @property
    def start(self) -> Any:
        """The start value (``comp.v.start = 2.0`` sets it, checked and converted as a
        keyword's: a string with a unit, the declared range; ``fixed`` is not changed,
        except by ``ac.guess(x)``, which makes it a guess)."""
        return self._start

    @start.setter
    def start(self, value: Any) -> None:
        fixed = self.fixed
        self.set(value)
        if not isinstance(value, Guess):
            self.fixed = fixed

    def __repr__(self) -> str:
        return (
            f"Variable({self.owner._path_or_class()}.{self.name}, start={self.start}, "
            f"fixed={self.fixed}, unit={self.unit!r})"
        )


class Port(_Declaration):
    """A connector of a domain (declared in a class body).

    ``direction`` is ``"input"`` or ``"output"`` for signal (causal) connectors, else None.
    """

    def __init__(self, domain: Domain, doc: str = "", direction: str | None = None) -> None:
        self.domain = domain
        self.doc = doc
        self.direction = direction

    def __get__(self, inst: Component | None, owner: type) -> Any:
        if inst is None:
            return self
        port = inst.__dict__["_ports"][self.name]
        if self.domain.causal and inst.__dict__.get("_binding") is not None:
            # inside equations() a signal port is its value: y == k * u
            return port._binding_of(self.domain.across.name)
        return port


def RealInput(doc: str = "", size: int = 1) -> Port:
    """A signal input (its value comes from the output it is connected to)."""
    from .domains import signal_domain

    return Port(signal_domain(size), doc, direction="input")


def RealOutput(doc: str = "", size: int = 1) -> Port:
    """A signal output (the block's equations determine its value)."""
    from .domains import signal_domain

    return Port(signal_domain(size), doc, direction="output")


class PortInstance:
    """A port of one component instance.

    Inside ``equations()`` its across and through quantities (``p.v``, ``p.i``) are symbols.
    The compiler binds them with :func:`bind_port`.
    """

    # (slots: a model of 100 000 components holds 400 000 ports; with a dictionary each
    # was 328 bytes, slotted 72)
    __slots__ = ("decl", "owner", "name", "domain", "_binding")

    def __init__(self, decl: Port, owner: Component) -> None:
        _SET_DECL(self, decl)
        _SET_OWNER(self, owner)
        _SET_NAME(self, decl.name)
        _SET_DOMAIN(self, decl.domain)
        _SET_BINDING(self, None)

    def __getstate__(self) -> tuple[Any, ...]:
        return (self.decl, self.owner, self.name, self.domain, self._binding)

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        for setter, value in zip(_SETTERS, state, strict=True):
            setter(self, value)

    def __getattr__(self, item: str) -> Any:
        try:
            b = _GET_BINDING(self)
        except AttributeError:  # (a copy or a pickle being made: no slot set yet)
            raise AttributeError(item) from None
        if item.startswith("__"):
            raise AttributeError(item)
        if b is not None and type(b) is not dict:  # deferred (graph_columns.Deferred)
            b = b.resolve(self)
            _SET_BINDING(self, b)
        d = self.domain
        if item in (d.across.name, d.through.name) or (b is not None and item in b):
            if b is None:
                raise ModelDefinitionError(
                    f"{self.path()}.{item} is a symbol only inside equations(); "
                    "outside, read it from a simulation result: res['"
                    + f"{self.path()}.{item}']"
                )
            if item not in b:
                raise ModelDefinitionError(
                    f"{self.path()}.{item} is not available in equations (the {d.name} "
                    f"port provides {', '.join(sorted(b))})"
                )
            return b[item]
        raise AttributeError(
            f"port {self.path()} of domain {d.name} has no {item!r}; it carries "
            f"{d.across.name!r} (across) and {d.through.name!r} (through)"
        )

    def __setattr__(self, key: str, value: Any) -> None:
        raise ModelDefinitionError(f"port {self.path()}: port variables cannot be assigned")

    def _binding_of(self, item: str) -> Any:
        b = self._binding
        if b is not None and type(b) is not dict:  # deferred (graph_columns.Deferred)
            b = b.resolve(self)
            _SET_BINDING(self, b)
        if b is None or item not in b:
            raise ModelDefinitionError(f"{self.path()} is not bound in this build")
        return b[item]

    @property
    def direction(self) -> str | None:
        """``"input"``/``"output"`` for a signal port, else None."""
        return self.decl.direction

    def path(self) -> str:
        return f"{self.owner._path_or_class()}.{self.name}"

    def __repr__(self) -> str:
        return f"<Port {self.path()} ({self.domain.name})>"


_SETTERS = tuple(PortInstance.__dict__[k].__set__ for k in PortInstance.__slots__)
_SET_DECL, _SET_OWNER, _SET_NAME, _SET_DOMAIN, _SET_BINDING = _SETTERS
_GET_BINDING = PortInstance.__dict__["_binding"].__get__


def bind_port(port: PortInstance, binding: Any) -> None:
    """Bind ``port``'s quantities for the equations: a dictionary ``name -> symbol``, a
    deferred binding (resolved when first read), or None (unbound). (A port refuses
    assignments from users: ``port.v = ...`` is a mistake in a model.)"""
    _SET_BINDING(port, binding)


def bind_ports(ports: Iterable[PortInstance], binding: Any) -> None:
    """:func:`bind_port` of every port of ``ports`` to the one ``binding``, in a loop in
    C (a model of 100 000 masses has 400 000 ports, bound and unbound by every build)."""
    collections.deque(map(_SET_BINDING, ports, itertools.repeat(binding)), maxlen=0)


# --------------------------------------------------------------------------------------
# Component and Model
# --------------------------------------------------------------------------------------

_ids = itertools.count()
_LOW = (1 << 64) - 1


def _pair_key(a: Any, b: Any) -> int:
    """One int for an unordered pair of objects (a set of them per model: a frozenset per
    pair cost ~0.3 kB per connection)."""
    i, j = id(a), id(b)
    return (i << 64) | j if i < j else (j << 64) | i


def _check_declaration(cls: type, name: str, decl: Parameter | Variable) -> None:
    """A declaration's own consistency, when its class is created: ``min`` not above
    ``max``, and a start value given within them."""
    kind = "parameter" if isinstance(decl, Parameter) else "variable"
    lo, hi = decl.min, decl.max
    where = f"{cls.__name__}: {kind} {name!r}"
    if lo is not None and hi is not None:
        try:
            wrong = lo > hi or (lo == hi and isinstance(decl, Parameter)
                                and not (decl.min_inclusive and decl.max_inclusive))
        except TypeError:
            wrong = False
        if wrong:
            raise ModelDefinitionError(
                f"{where} declares min = {lo!r} and max = {hi!r}, an empty range: no value "
                "can satisfy both; check the bounds")
    if isinstance(decl, Variable) and decl.start_given and (lo is not None or hi is not None):
        try:
            bad = decl.problem(decl.start)
        except (TypeError, ValueError):
            return  # (not a number: the build says so, naming the variable)
        if bad is not None:
            raise ModelDefinitionError(
                f"{cls.__name__}: the declared start value of variable {name!r} {bad}; "
                "declare a start value within its range")


#: a block class's terminal graph: ``type -> (number of ports, edges)``
_SOURCE_EDGES: dict[type, tuple[int, list[Edge]]] = {}
_DECL_CACHE: dict[tuple[type, type], list[Any]] = {}
#: a class's parameter, variable and port declarations, for Component.__init__
_INIT_DECLS: dict[type, tuple[tuple[Any, ...], tuple[Any, ...], tuple[Any, ...]]] = {}
#: a number parameter's default and what its declaration's check returns for it
_CHECKED_DEFAULTS: dict[Parameter, tuple[Any, Any]] = {}
#: classes whose declared edges have been checked against their ports (once per class)
_EDGES_CHECKED: set[type] = set()
#: Component.__init__ (set below): a class without a constructor of its own has it
_BASE_INIT: Any = None
#: the classes that check their parameters together (override check_parameters; noted
#: when the class is made)
_PARAMETER_CHECK: set[type] = set()


def has_parameter_check(cls: type) -> bool:
    """Whether the component class overrides :meth:`Component.check_parameters`."""
    return cls in _PARAMETER_CHECK


def followers(cls: type) -> list[Parameter]:
    """The parameters of a component class that may follow others (``follows``)."""
    return [p for p in cls._declarations(Parameter)  # type: ignore[attr-defined]
            if p.follows is not None]


#: the keys Component.__init__ puts into an instance's __dict__
class _NoChildren(dict):  # type: ignore[type-arg]
    """The sub-components of every component that has none: one shared empty dictionary
    that refuses to be written (the writers make the component its own first), and that
    copies and pickles stay."""

    def _refuse(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("the shared empty sub-components of a leaf component are read-only")

    __setitem__ = __delitem__ = update = setdefault = pop = popitem = clear = _refuse  # type: ignore[assignment]

    def __reduce__(self) -> str:
        return "_NO_CHILDREN"  # (the module's own, by name)


#: the sub-components and connections of a component that has none (shared: most
#: components have neither, and an empty dictionary and list cost 120 bytes)
_NO_CHILDREN: dict[str, Any] = _NoChildren()
_NO_CONNECTIONS: tuple[Any, ...] = ()
_INSTANCE_KEYS = frozenset({"_id", "_name", "_parent", "_binding", "_children",
                            "_connections", "_params", "_vars", "_ports"})
_N_INSTANCE_KEYS = len(_INSTANCE_KEYS)


class Component:
    """Base class of every component and model.

    Sub-classes declare ``Parameter``, ``Variable`` and ``Port`` attributes, an ``edges``
    list (their terminal graph) and an ``equations`` method. Parameters and variable start
    values are given as keywords: ``Resistor(R=100.0)``, ``Capacitor(C=1e-3, v=1.0)``
    (a number fixes the start value; ``ac.guess(1.0)`` only guesses it).
    """

    edges: list[Edge] = []
    # per-instance state (set in __init__ through __dict__)
    _id: int
    _name: str | None
    _parent: Component | None
    _binding: dict[str, Any] | None
    _children: dict[str, Component]
    _connections: list[tuple[PortInstance, ...]]
    _params: dict[str, Any]
    _vars: dict[str, VariableInstance]
    _ports: dict[str, PortInstance]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """A class's own ``__init__`` runs with Python's cyclic collector paused (see
        :mod:`acausal.gcpause`): a model's constructor makes its components, hundreds of
        thousands of small objects without cycles, which the collector would otherwise
        scan again and again (a third of the time of making 10 000 masses)."""
        super().__init_subclass__(**kwargs)
        for name, decl in list(cls.__dict__.items()):
            if isinstance(decl, (Parameter, Variable)):
                _check_declaration(cls, name, decl)
        if getattr(cls, "check_parameters", None) is not Component.check_parameters:
            _PARAMETER_CHECK.add(cls)
        init = cls.__dict__.get("__init__")
        if init is None or getattr(init, "_collector_paused", False):
            return

        @functools.wraps(init)
        def __init__(self: Any, *args: Any, **kw: Any) -> None:
            with collector_paused():
                init(self, *args, **kw)

        __init__._collector_paused = True  # type: ignore[attr-defined]
        cls.__init__ = __init__  # type: ignore[method-assign]

    def __init__(self, **kwargs: Any) -> None:
        d = self.__dict__
        kind = type(self)
        decls = _INIT_DECLS.get(kind)
        if decls is None:
            decls = _INIT_DECLS[kind] = (tuple(self._declarations(Parameter)),
                                         tuple(self._declarations(Variable)),
                                         tuple(self._declarations(Port)))
        p_decls, v_decls, port_decls = decls
        d["_id"] = next(_ids)
        d["_name"] = None
        d["_parent"] = None
        d["_binding"] = None
        d["_children"] = _NO_CHILDREN  # (each made on the first child, connection)
        d["_connections"] = _NO_CONNECTIONS
        params = d["_params"] = {decl.name: decl.default for decl in p_decls}
        variables = d["_vars"] = {decl.name: VariableInstance(decl, self) for decl in v_decls}
        d["_ports"] = {decl.name: PortInstance(decl, self) for decl in port_decls}
        if kwargs:
            # (a class's own __setattr__, if any, sees its parameters set)
            direct = kind.__setattr__ is Component.__setattr__
            for key, value in kwargs.items():
                if key in params:
                    if direct and isinstance(getattr(kind, key, None), Parameter):
                        getattr(kind, key).__set__(self, value)  # (as __setattr__ does)
                    else:
                        setattr(self, key, value)  # (checked by Parameter.__set__)
                elif key in variables:
                    variables[key].set(value)
                else:
                    valid = sorted(list(params) + list(variables))
                    raise ModelDefinitionError(
                        f"{type(self).__name__}() got an unexpected keyword {key!r}; "
                        f"its parameters and variables are: {', '.join(valid) or '(none)'}"
                    )
        for decl in p_decls:
            name = decl.name
            if name in kwargs:
                continue
            if decl.structural:  # (a fresh value per instance where check makes one)
                params[name] = decl.check(self, params[name])
                continue
            # a number's default checked once per declaration and default (a missing one
            # raises each time)
            hit = _CHECKED_DEFAULTS.get(decl)
            if hit is None or hit[0] is not decl.default:
                hit = _CHECKED_DEFAULTS[decl] = (decl.default,
                                                 decl.check(self, decl.default))
            params[name] = hit[1]
        if kind not in _EDGES_CHECKED or "edges" in d:
            self._check_edges()
            if "edges" not in d and isinstance(kind.__dict__.get("edges", []), (list, tuple)):
                _EDGES_CHECKED.add(kind)
        if kind in _PARAMETER_CHECK:
            self._raise_parameter_problem(self)

    def check_parameters(self, p: Any) -> str | None:
        """Override to check how parameters constrain each other (``uMin <= uMax``):
        return what is wrong, or None. ``p`` gives the values to be used by name
        (``p.uMin``, numbers; a parameter that ``follows`` others computed). Called when
        the component is created, when the model is built, and for every run that
        overrides one of its parameters (``simulate(params=)``)."""
        return None

    def _raise_parameter_problem(self, p: Any, error: type[Exception] | None = None,
                                 after: str = "") -> None:
        """Raise ``error`` (a ModelDefinitionError) if :meth:`check_parameters` finds a
        problem with the values ``p``."""
        bad = self.check_parameters(p)
        if bad:
            raise (error or ModelDefinitionError)(f"{self._describe()}: {bad}{after}")

    # ----- declarations -----
    @classmethod
    def _declarations(cls, kind: type) -> list[Any]:
        key = (cls, kind)
        hit = _DECL_CACHE.get(key)
        if hit is not None:
            return hit
        seen: dict[str, Any] = {}
        for klass in reversed(cls.__mro__):
            for name, value in vars(klass).items():
                if isinstance(value, kind):
                    seen[name] = value
                elif name in seen and not isinstance(value, kind):
                    del seen[name]
        _DECL_CACHE[key] = list(seen.values())
        return _DECL_CACHE[key]

    def graph_edges(self) -> list[Edge]:
        """The terminal graph: the declared ``edges`` plus, for every signal output of a
        block (a component without sub-components), an edge from the datum that makes the
        output the source of its connection's value. A composite's own signal ports pass
        through to the blocks inside."""
        if self.__dict__["_children"]:  # a composite's signal ports pass through
            return self.edges
        d = self.__dict__
        ports, kind = d["_ports"], type(self)
        # (kept per class unless the instance has edges or ports of its own)
        cached = _SOURCE_EDGES.get(kind)
        if cached is None or cached[0] != len(ports) or "edges" in d:
            outs = [Edge(DATUM, name, TreePriority.ACROSS_SOURCE)
                    for name, p in ports.items() if p.decl.direction == "output"]
            cached = (len(ports), list(self.edges) + outs if outs else self.edges)
            if "edges" not in d and len(ports) == len(self._declarations(Port)):
                _SOURCE_EDGES[kind] = cached
        return cached[1]

    def _check_edges(self) -> None:
        ports = self.__dict__["_ports"]
        edges = self.edges
        form = ("edges is a list of Edge(initial, final[, TreePriority.X]) between port "
                "names (or ac.DATUM), e.g. edges = [Edge('p', 'n', TreePriority.NEUTRAL)]")
        if not isinstance(edges, (list, tuple)):
            got = (f"a single edge: write edges = [{edges!r}]" if isinstance(edges, Edge)
                   else f"{type(edges).__name__} {edges!r}")
            raise ModelDefinitionError(f"{type(self).__name__}: {form}; got {got}")
        seen: set[tuple[Any, Any]] = set()
        for e in edges:
            if not isinstance(e, Edge):
                raise ModelDefinitionError(
                    f"{type(self).__name__}: {form}; got {type(e).__name__} {e!r} in it")
            prio = e.priority
            if isinstance(prio, bool) or not isinstance(prio, (int, float, np.integer,
                                                               np.floating)):
                raise ModelDefinitionError(
                    f"{type(self).__name__}: edge {e} has the priority {prio!r}; a priority "
                    "is a number, one of TreePriority.ACROSS_SOURCE, ACROSS_STORE, NEUTRAL, "
                    "THROUGH_STORE, THROUGH_SOURCE")
            if (e.initial, e.final) in seen:
                raise ModelDefinitionError(
                    f"{type(self).__name__}: edges declares the edge {e.initial!r} -> "
                    f"{e.final!r} twice; each edge names one branch of the component (its "
                    "through and across variables), so declare it once")
            seen.add((e.initial, e.final))
            doms = []
            for end in (e.initial, e.final):
                if end is DATUM:
                    continue
                if end not in ports:
                    raise ModelDefinitionError(
                        f"{type(self).__name__}: edge {e} refers to unknown port {end!r}; "
                        f"ports are {sorted(ports)}"
                    )
                doms.append(ports[end].domain)
            if len(doms) == 2 and doms[0] is not doms[1]:
                raise ModelDefinitionError(
                    f"{type(self).__name__}: edge {e} joins ports of different domains"
                )
            if not doms:
                raise ModelDefinitionError(f"{type(self).__name__}: edge {e} has no port")

    # ----- hierarchy -----
    def __setattr__(self, name: str, value: Any) -> None:
        d = self.__dict__
        if "_children" not in d:
            raise ModelDefinitionError(
                f"{type(self).__name__}.__init__ must call super().__init__(**kwargs) before "
                f"setting attribute {name!r}"
            )
        cls_attr = getattr(type(self), name, None)
        if isinstance(cls_attr, (Parameter, Variable)):
            cls_attr.__set__(self, value)
            return
        if isinstance(cls_attr, Port):
            raise ModelDefinitionError(f"{self._describe()}: port {name!r} cannot be assigned")
        if cls_attr is None and type(self).__init__ is _BASE_INIT and name[:1] != "_" \
                and not isinstance(value, (Component, list, tuple)):
            self._note_unknown(name)
        if self._adopt(name, value) > 1:
            # (a list of components: noted as adopted, so that the first walk of the model
            # does not adopt its components again, 0.4 s for 200 000 of them)
            adopted = d.get("_adopted_lists")
            if adopted is None:
                adopted = d["_adopted_lists"] = {}
            adopted[name] = tuple(value)
        object.__setattr__(self, name, value)

    def _note_unknown(self, name: str) -> None:
        """Warn when a name set on a component whose class has no constructor of its own
        (a library element: it is set after its creation) is close to one it declares
        (``r.Rr = 5.0`` for ``r.R``): a typo would otherwise be kept as a plain attribute
        the model never reads."""
        d = self.__dict__
        from .names import suggest

        close = suggest(name, [*d["_params"], *d["_vars"], *d["_ports"]], n=1)
        if close:
            warnings.warn(
                f"{self._describe()}: {name!r} is not a parameter or variable of "
                f"{type(self).__name__}, so the value is kept as a plain attribute that the "
                f"model does not use; did you mean {close[0]!r}?",
                ModelWarning, stacklevel=user_stacklevel())

    def _adopt(self, name: str, value: Any) -> int:
        """Make ``value`` (a component, or a list or tuple of components) a child of this
        component under ``name``; 0 if it is neither, 1 for a component, 2 for a list."""
        items: list[tuple[str, Component]] = []
        kind = 0
        if isinstance(value, Component):
            items, kind = [(name, value)], 1
        elif isinstance(value, (list, tuple)) and value and all(
            isinstance(v, Component) for v in value
        ):
            items, kind = [(f"{name}[{k}]", v) for k, v in enumerate(value)], 2
        for cname, child in items:
            if child._parent is not None and child._parent is not self:
                raise ModelDefinitionError(
                    f"component {child._path_or_class()} is already part of "
                    f"{child._parent._path_or_class()}; create a new instance for {cname!r}"
                )
            if child is self:
                raise ModelDefinitionError(f"{self._describe()} cannot contain itself")
            old = child.__dict__["_name"]
            if child._parent is self and old != cname and \
                    self.__dict__["_children"].get(old) is child:
                raise ModelDefinitionError(
                    f"component {child._path_or_class()} is already part of "
                    f"{self._path_or_class()} as {old!r}; create a new instance for {cname!r}")
            child.__dict__["_parent"] = self
            child.__dict__["_name"] = cname
            kids = self.__dict__["_children"]
            if kids is _NO_CHILDREN:
                kids = self.__dict__["_children"] = {}
            kids[cname] = child
        return kind

    def add(self, name: str, component: Component) -> Component:
        """Add a sub-component under a computed name (same as ``setattr``)."""
        setattr(self, name, component)
        return component

    def children(self) -> dict[str, Component]:
        """Direct sub-components by local name."""
        return dict(self.__dict__["_children"])

    def walk(self) -> Iterator[Component]:
        """This component and all sub-components, depth first, in declaration order.

        Lists of components given as attributes are re-read, so components appended to such
        a list after the assignment are part of the model too.
        """
        stack: list[Component] = [self]
        pop, extend = stack.pop, stack.extend
        keys, n_keys = _INSTANCE_KEYS, _N_INSTANCE_KEYS
        while stack:  # (iterative: nested generators cost a frame per level and element)
            c = pop()
            d = c.__dict__
            # (a component with nothing but what __init__ sets has no lists to adopt)
            if len(d) != n_keys or d["_connections"] or not keys.issuperset(d):
                c._adopt_lists()
            yield c
            kids = d["_children"]
            if kids:
                extend(reversed(kids.values()))

    def _adopt_lists(self) -> None:
        """Adopt the components of lists given as attributes (also ones appended since)."""
        # (only a component with lists of components gets the record: the flatten pass's
        # class templates take an instance with keys of its own for one with own state)
        d = self.__dict__
        if len(d) == _N_INSTANCE_KEYS and not d.get("_connections") and \
                _INSTANCE_KEYS.issuperset(d):
            return  # (nothing but what __init__ sets, of which only _connections is a list)
        lists = [(name, value) for name, value in d.items()
                 if isinstance(value, (list, tuple)) and value]
        if not lists:  # (a leaf component: one pass over its attributes)
            return
        adopted = d.get("_adopted_lists")
        for name, value in lists:
            now = tuple(value)
            if adopted is not None and adopted.get(name) == now:  # unchanged (identity)
                continue
            if all(isinstance(v, Component) for v in now):
                self._adopt(name, now)
                if adopted is None:
                    adopted = d["_adopted_lists"] = {}
                adopted[name] = now

    def path(self) -> str:
        """Dotted path from the root model ('' for the root)."""
        parts: list[str] = []
        c: Component | None = self
        while c is not None and c._parent is not None:
            parts.append(str(c._name))
            c = c._parent
        return ".".join(reversed(parts))

    def _path_or_class(self) -> str:
        p = self.path()
        return p if p else type(self).__name__

    def _describe(self) -> str:
        p = self.path()
        return f"{type(self).__name__} {p!r}" if p else type(self).__name__

    def __getattr__(self, name: str) -> Any:
        """Only reached for a name the component does not have: say what it has (a wrong
        port name in ``connect(world.frame, ...)`` would otherwise be a bare
        AttributeError). The message is written when shown: ``getattr(c, name, default)``
        probes cost nothing."""
        if name.startswith("__") or "_ports" not in self.__dict__:  # copy/pickle, __init__
            raise AttributeError(name)
        raise _NoAttribute(self, name)

    # ----- connections -----
    def connect(self, *ports: PortInstance) -> None:
        """Connect two or more ports of the same domain (one connection vertex)."""
        if len(ports) == 2:  # (the common case: two ports of one domain, a new pair)
            a, b = ports
            if type(a) is PortInstance and type(b) is PortInstance and a is not b and \
                    a.domain is b.domain:
                d = self.__dict__
                pairs = d.get("_pairs")
                if pairs is None:
                    pairs = d["_pairs"] = set()
                i, j = id(a), id(b)
                key = (i << 64) | j if i < j else (j << 64) | i  # (as _pair_key)
                if key not in pairs:
                    pairs.add(key)
                    conns = d["_connections"]
                    if conns is _NO_CONNECTIONS:
                        conns = d["_connections"] = []
                    conns.append(ports)
                    return
        if len(ports) < 2:
            raise ConnectionError_(f"{self._describe()}: connect() needs at least two ports")
        for p in ports:
            if not isinstance(p, PortInstance):
                if isinstance(p, Port):
                    raise ConnectionError_(self._class_port(p))
                raise ConnectionError_(
                    f"{self._describe()}: connect() takes ports, got {p!r}"
                    + (
                        " (a component: name one of its ports, e.g. .p or .flange_a)"
                        if isinstance(p, Component)
                        else ""
                    )
                )
        first = ports[0]
        for p in ports[1:]:
            if p.domain is not first.domain and first.domain.causal and p.domain.causal:
                na, nb = first.domain.across.size, p.domain.across.size
                raise ConnectionError_(
                    f"cannot connect {first.path()} ({na} signal{'s' * (na > 1)}) to "
                    f"{p.path()} ({nb} signal{'s' * (nb > 1)}): a signal connection joins "
                    "ports of one size (a Multiplex or DeMultiplex changes it)")
            if p.domain is not first.domain:
                raise ConnectionError_(
                    f"cannot connect {first.path()} ({first.domain}) to {p.path()} "
                    f"({p.domain}): ports of different domains; use a multi-domain component "
                    "(EMF, IdealRollingWheel, HeatingResistor, ...) between them"
                )
        seen: set[int] = set()
        for p in ports:
            if id(p) in seen:
                raise ConnectionError_(
                    f"{self._describe()}: connect() joins port {p.path()} to itself; each "
                    "port may appear once in a connect() call")
            seen.add(id(p))
        self._note_pairs(ports)
        conns = self.__dict__["_connections"]
        if conns is _NO_CONNECTIONS:
            conns = self.__dict__["_connections"] = []
        conns.append(tuple(ports))

    def _class_port(self, decl: Port) -> str:
        """The message for a port declaration given to connect(): the port of a class
        assigned where an instance was meant (``self.r = el.Resistor``)."""
        held = [(k, v) for k, v in self.__dict__.items() if not k.startswith("_")]
        held += [(f"{k}[{i}]", x) for k, v in held if isinstance(v, (list, tuple))
                 for i, x in enumerate(v)]
        for attr, value in held:
            if isinstance(value, type) and issubclass(value, Component) and \
                    getattr(value, decl.name, None) is decl:
                return (f"{self._describe()}: connect() got {attr}.{decl.name}, the port "
                        f"declared by the class {value.__name__}: self.{attr} holds the class "
                        f"itself, not a component; create one with parentheses, self.{attr} "
                        f"= {value.__name__}(...)")
        return (f"{self._describe()}: connect() got the port declaration {decl.name!r} of a "
                "component class, not the port of a component: create the component with "
                "parentheses (el.Resistor(), not el.Resistor) and connect its port")

    def _note_pairs(self, ports: tuple[PortInstance, ...]) -> None:
        """Warn when a pair of ports written in this call was already connected directly
        (``connect(a, b)`` twice, or ``connect(b, a)`` after it): the second call changes
        nothing and is most likely meant for another port."""
        pairs = self.__dict__.setdefault("_pairs", set())
        # (the first port with each other, and the others with their neighbours: a pair
        # written in the call; one pair for the common connect(a, b))
        keys = {_pair_key(ports[0], q) for q in ports[1:]}
        if len(ports) > 2:
            keys |= {_pair_key(a, b) for a, b in zip(ports[1:-1], ports[2:], strict=True)}
        twice = [k for k in keys if k in pairs]
        if twice:
            names = {id(p): p.path() for p in ports}
            shown = ", ".join(" and ".join(sorted((names[k >> 64], names[k & _LOW])))
                              for k in twice)
            warnings.warn(
                f"{self._describe()}: {shown} are connected twice; the second connect() changes "
                "nothing (was another port meant?)", ModelWarning, stacklevel=user_stacklevel())
        pairs |= keys

    # ----- parameters and variables of this instance -----
    def parameters(self) -> dict[str, Any]:
        """Current parameter values: a component's own (``{"R": 1000.0}`` for a resistor);
        for a :class:`Model`, also those of its sub-components by dotted path
        (``{"resistor.R": 1000.0, ...}``). A parameter that follows others (not given)
        has their expression's value."""
        out = self._parameter_values()
        if isinstance(self, Model):
            for name, child in self.__dict__["_children"].items():
                out.update({f"{name}.{k}": v for k, v in child.parameters().items()})
        return out

    def _parameter_values(self) -> dict[str, Any]:
        """This component's parameter values, those that follow others computed."""
        out = dict(self.__dict__["_params"])
        for name, value in out.items():
            if value is None:
                out[name] = getattr(self, name)
        return out

    def variables(self) -> dict[str, VariableInstance]:
        """Variable declarations of this instance."""
        return dict(self.__dict__["_vars"])

    def ports(self) -> dict[str, PortInstance]:
        """Ports of this instance."""
        return dict(self.__dict__["_ports"])

    @property
    def time(self) -> cs.SX:
        """The time symbol (inside equations only)."""
        table = symbols.current()
        if table is None:
            raise ModelDefinitionError("self.time is only available inside equations()")
        return table.t

    def initial_equations(self) -> list[Any]:
        """Extra equations that hold at the start only (e.g. steady state ``der(w) == 0``)."""
        return []

    def __repr__(self) -> str:
        kids = self.__dict__["_children"]
        if kids:
            n_conn = len(self.__dict__["_connections"])
            names = list(kids)
            shown = ", ".join(names[:6]) + (", ..." if len(names) > 6 else "")
            return (f"<{self._describe()}: {len(kids)} components ({shown}), {n_conn} "
                    f"connections>")
        vals = [f"{k}={_fmt_value(v)}{_unit_suffix(type(self), k)}"
                for k, v in self._parameter_values().items()]
        shown = ", ".join(vals[:4]) + (", ..." if len(vals) > 4 else "")
        return f"<{self._describe()}" + (f" {shown}>" if shown else ">")

    def summary(self, max_rows: int = 60) -> str:
        """Components of the model tree with their parameters (value and unit) and the
        start values given (fixed starts are initial conditions), one line each."""
        return _summary(self, max_rows)


def _fmt_value(v: Any) -> str:
    if callable(v):
        return "f(t)"
    if isinstance(v, float):
        return f"{v:g}"
    text = repr(v)
    return text if len(text) <= 30 else text[:27] + "..."


def _unit_suffix(cls: type, name: str) -> str:
    decl = getattr(cls, name, None)
    unit = getattr(decl, "unit", "")
    return f" {unit}" if unit and unit != "1" else ""


def _summary(root: Component, max_rows: int) -> str:
    comps = list(root.walk())
    n_conn = sum(len(c.__dict__["_connections"]) for c in comps)
    lines = [f"{type(root).__name__}: {len(comps) - 1} components, {n_conn} connections"]
    rows: list[tuple[str, str, str]] = []
    for c in comps[1:] if len(comps) > 1 else comps:
        cls = type(c)
        items = [f"{k} = {_fmt_value(v)}{_unit_suffix(cls, k)}"
                 for k, v in c._parameter_values().items()]
        for name, vi in c.__dict__["_vars"].items():
            if vi.fixed or vi.start is not vi.decl.start:
                unit = f" {vi.unit}" if vi.unit and vi.unit != "1" else ""
                items.append(f"{name}(start) = {_fmt_value(vi.start)}{unit}"
                             + (" fixed" if vi.fixed else " guess"))
        rows.append((c._path_or_class(), f"{cls.__module__.split('.')[-1]}.{cls.__name__}",
                     ", ".join(items)))
    lines += summary_table(rows, max_rows, "parameters and start values")
    return "\n".join(lines)


def summary_table(rows: list[tuple[str, str, str]], max_rows: int, last: str) -> list[str]:
    """The lines of a summary's table of components: path, class and ``last`` (its
    column's title), in aligned columns, at most ``max_rows`` rows."""
    shown = rows[:max_rows]
    w0 = max([len(r[0]) for r in shown] + [9])
    w1 = max([len(r[1]) for r in shown] + [5])
    lines = [f"  {'component':<{w0}}  {'class':<{w1}}  {last}"]
    lines += [f"  {a:<{w0}}  {b:<{w1}}  {c}".rstrip() for a, b, c in shown]
    if len(rows) > max_rows:
        lines.append(f"  ... and {len(rows) - max_rows} more components")
    return lines


class Model(Component):
    """A component made of sub-components and connections (no terminal graph of its own)."""


_BASE_INIT = Component.__init__


def collect_equations(comp: Component, method: str = "equations") -> list[Any]:
    """Equations of every class in the hierarchy, base classes first (Modelica extends)."""
    out: list[Any] = []
    for klass in reversed(type(comp).__mro__):
        f: Callable[..., Any] | None = klass.__dict__.get(method)
        if f is None or klass in (Component, Model):
            continue
        eqs = f(comp)
        if isinstance(eqs, (list, tuple)):  # (the common case)
            out.extend(eqs)
        elif isinstance(eqs, Iterator):  # a generator (``yield``), map(), iter(): its items
            out.extend(list(eqs))
        elif eqs is None:
            if getattr(getattr(f, "__code__", None), "co_names", ()):
                # (a body that reads names but gives nothing: a forgotten return; an empty
                # body, pass or a docstring, is a class that adds no equations)
                raise ModelDefinitionError(
                    f"{comp._describe()}: {method}() of {klass.__name__} returned None; it "
                    f"must return its equations as a list (a forgotten 'return'?), e.g. "
                    f"return [self.v == self.R * self.i]")
        else:
            out.append(eqs)
    return out


class _NoAttribute(AttributeError):
    """A component has no attribute of this name: the message (what it has, the names
    close to the one asked for) is written when it is shown."""

    def __init__(self, comp: Component, name: str) -> None:
        # (not name= and obj=: the interpreter would add a suggestion of its own)
        super().__init__(name)
        self.component, self.attribute = comp, name

    def __str__(self) -> str:
        comp, name = self.component, self.attribute
        d = comp.__dict__
        groups = [("ports", d["_ports"]), ("parameters", d["_params"]),
                  ("variables", d["_vars"]), ("sub-components", d["_children"])]
        known = [k for _, g in groups for k in g]
        from .names import suggest

        # (and the short names it starts with: 'neg' -> 'n', 'pos' -> 'p')
        close = suggest(name, known, n=3) + [k for k in known if len(k) <= 2 and len(name) > 1
                                             and name.lower().startswith(k.lower())]
        close = list(dict.fromkeys(close))[:3]
        msg = f"{comp._describe()} has no attribute {name!r}"
        if close:
            msg += "; did you mean " + " or ".join(repr(c) for c in close) + "?"
        listed = [f"{label}: {', '.join(g)}" for label, g in groups if g]
        if listed:
            msg += " (" + "; ".join(listed) + ")"
        return msg


# (shown in a traceback as the AttributeError it is, not by this module's private name)
_NoAttribute.__module__ = "builtins"
_NoAttribute.__name__ = _NoAttribute.__qualname__ = "AttributeError"
