"""The symbol table of a model being flattened: unknowns, derivatives, parameters, outputs.

Every pass that creates unknowns (the generic linear-graph flattener, the 3D mechanism pass,
any registered domain pass) creates them here, so names are unique, derivative symbols
are shared, and every named quantity ends up addressable in results.

``der(x)`` and ``self.time`` inside a component's ``equations()`` resolve through the
*active* table (a :class:`contextvars.ContextVar` set by :func:`active` while equations
are collected), so component code needs no reference to the pass that calls it.
"""

from __future__ import annotations

import contextvars
import threading
import weakref
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from operator import attrgetter
from typing import Any, NamedTuple

import casadi as cs
import numpy as np

from .errors import ModelDefinitionError

__all__ = ["FlatVariable", "FlatParameter", "LazyColumn", "SymbolTable", "active", "current",
           "shared_ints", "grow_ints", "as_shared"]


class _Ints(list):  # type: ignore[type-arg]
    """A list a weak reference can follow (:func:`shared_ints`)."""

    __slots__ = ("__weakref__",)


_shared: Any = None  # (a weak reference to the pool of shared_ints)
_shared_lock = threading.Lock()


def shared_ints(n: int) -> list[int]:
    """The integers ``0, 1, ...`` (at least ``n``) as one pool of shared objects for
    every pass: the flatten pass's, the equation system's (which keeps it) and the
    structure passes' index lists then refer to the same integer objects instead of
    each its own (a hundred thousand components: several million integers, 32 bytes
    each). The pool lives while anything holds it (a build in progress), then goes."""
    global _shared
    with _shared_lock:  # (two builds in threads extend it one after the other)
        pool = _shared() if _shared is not None else None
        if pool is None:
            pool = _Ints()
            _shared = weakref.ref(pool)
        if len(pool) < n:
            pool.extend(range(len(pool), n))
    return pool  # type: ignore[no-any-return]


def grow_ints(pool: list[int], n: int) -> list[int]:
    """``pool``, the integers ``0, 1, ...`` in order (the build's :func:`shared_ints`,
    which its holder keeps alive, or a list of a pass's own), extended to at least ``n``
    of them: the indices and rows the passes store are these objects, not a new integer
    object of 32 bytes each."""
    if len(pool) < n:
        with _shared_lock:
            if len(pool) < n:
                pool.extend(range(len(pool), n))
    return pool


def as_shared(pool: list[int], a: np.ndarray) -> list[int]:
    """The integer array ``a`` (indices, or -1 for none) as a list of the objects of
    ``pool`` (:func:`shared_ints`; extended as needed): ``a.tolist()``, which would make
    a new object per entry, in about the same time."""
    if not len(a):
        return []
    m = int(a.max()) + 1
    obj = np.empty(m + 1, dtype=object)
    obj[:m] = grow_ints(pool, m)[:m]
    obj[m] = -1
    return obj[np.where(a < 0, m, a)].tolist()  # type: ignore[no-any-return]


class LazyColumn:
    """The scalars of a column, made when read: the residuals and sources of a template
    group's equations are read one by one only where a pass looks at an equation alone
    (a message, a unit check, a candidate alias). The first few reads take their element
    alone; past them, all are made in one CasADi call.

    ``make`` (with ``col`` None): the column is itself made when first needed,
    ``make(None)``, and an element read alone before is ``make(k)`` (a group's sources:
    most builds read only a few).
    """

    __slots__ = ("col", "items", "reads", "make", "n")

    #: reads of single elements before all are made at once
    ALONE = 32

    def __init__(self, col: cs.SX | None, make: Any = None, n: int = 0) -> None:
        self.col = col
        self.items: list[cs.SX] | None = None
        self.reads = 0
        self.make = make
        self.n = n  # (the length, while col is not made)

    def column(self) -> cs.SX:
        """The column (made now if not yet)."""
        col = self.col
        if col is None:
            col = self.col = self.make(None)
            self.make = None
        return col

    def __len__(self) -> int:
        return self.n if self.col is None else int(self.col.numel())

    def __reduce__(self) -> tuple[Any, ...]:
        # (the column alone: its elements are made again when read)
        return (LazyColumn, (self.column(),))

    def __iter__(self) -> Iterator[cs.SX]:
        return iter(self.all())

    def all(self) -> list[cs.SX]:
        """Every element (made now if not yet)."""
        if self.items is None:
            self.items = self.column().nonzeros()  # type: ignore[assignment]
        return self.items  # type: ignore[return-value]

    def __getitem__(self, k: int) -> cs.SX:
        items = self.items
        if items is None:
            self.reads += 1
            if self.reads <= self.ALONE:
                return self.col[k] if self.col is not None else self.make(k)
            items = self.items = self.column().nonzeros()  # type: ignore[assignment]
        return items[k]  # type: ignore[index]


class LazyRow:
    """An attribute whose slot ``_<name>`` holds a value or a :class:`LazyColumn`: read,
    the column's row ``_row`` of the object, made then and kept in the slot."""

    __slots__ = ("store",)

    def __set_name__(self, owner: type, name: str) -> None:
        self.store = owner.__dict__["_" + name]  # (the slot's member descriptor)

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            return self
        v = self.store.__get__(obj)
        if type(v) is LazyColumn:
            v = v[obj._row]
            self.store.__set__(obj, v)
        return v

    def __set__(self, obj: Any, value: Any) -> None:
        self.store.__set__(obj, value)


class _VarSpec(NamedTuple):
    """What a variable shares with the others of its declaration (kept in one slot:
    a variable of 8 slots is 96 bytes, one of 13 144; a large model has millions)."""

    unit: str
    fixed: bool
    nominal: float | None
    state_priority: int
    hint: str
    decl: Any


#: the specs made so far, by value (``decl`` by identity: declarations do not hash), so
#: that the variables of one declaration share one; cleared when it grows past ``_MANY``
_SPECS: dict[tuple[Any, ...], Any] = {}  # (a variable's key has 8 items, a parameter's 4)
_MANY = 4096
_NEW = object.__new__


def _var_spec(unit: str, fixed: bool, nominal: float | None, state_priority: int,
              hint: str, decl: Any) -> _VarSpec:
    # (a spec kept here holds its decl: no other object takes its id meanwhile; the types
    # of fixed and nominal: 1 == True == 1.0 would share a spec)
    key = (unit, fixed, type(fixed), nominal, type(nominal), state_priority, hint, id(decl))
    try:
        spec = _SPECS.get(key)
    except TypeError:  # (an unhashable value, e.g. an array as nominal: a spec of its own)
        return _VarSpec(unit, fixed, nominal, state_priority, hint, decl)
    if spec is None:
        if len(_SPECS) >= _MANY:
            _SPECS.clear()
        spec = _SPECS[key] = _VarSpec(unit, fixed, nominal, state_priority, hint, decl)
    return spec


def _spec_field(cls: Any, make: Any, name: str) -> Any:
    """The attribute ``name`` of a spec (read in C, by ``attrgetter``); set, a new spec."""
    i = cls._fields.index(name)

    def put(obj: Any, value: Any) -> None:
        spec = obj._spec
        obj._spec = make(*spec[:i], value, *spec[i + 1:])

    return property(attrgetter(f"_spec.{name}"), put)


class FlatVariable:
    """A scalar unknown of the flat system.

    ``der_of``: the index of the variable this is the derivative of; ``der``: the index of
    this variable's derivative symbol, if any; ``hint``: shown when the variable is left
    undetermined; ``decl``: the component's Variable declaration (bounds), if any. The
    symbol of a template group's unknown is row ``row`` of the group's column
    (:class:`LazyColumn`), made when first read. ``unit``, ``fixed``, ``nominal``,
    ``state_priority``, ``hint`` and ``decl`` are kept in one tuple shared with the other
    variables that have the same (:class:`_VarSpec`).
    """

    __slots__ = ("name", "_sym", "start", "origin", "der_of", "der", "_row", "_spec")

    def __init__(self, name: str, sym: Any, start: float = 0.0, fixed: bool = False,
                 unit: str = "", nominal: float | None = None, state_priority: int = 0,
                 origin: str = "", der_of: int | None = None, der: int | None = None,
                 hint: str = "", decl: Any = None, row: int = -1) -> None:
        self.name = name
        self._sym = sym
        self.start = start
        self.origin = origin
        self.der_of = der_of
        self.der = der
        self._row = row
        self._spec = _var_spec(unit, fixed, nominal, state_priority, hint, decl)

    sym = LazyRow()
    unit = _spec_field(_VarSpec, _var_spec, "unit")
    fixed = _spec_field(_VarSpec, _var_spec, "fixed")
    nominal = _spec_field(_VarSpec, _var_spec, "nominal")
    state_priority = _spec_field(_VarSpec, _var_spec, "state_priority")
    hint = _spec_field(_VarSpec, _var_spec, "hint")
    decl = _spec_field(_VarSpec, _var_spec, "decl")

    #: the spec of the given ``unit, fixed, nominal, state_priority, hint, decl``
    spec = staticmethod(_var_spec)

    @staticmethod
    def many(names: Iterable[str], syms: Iterable[Any], starts: Iterable[float],
             origins: Iterable[str], der_ofs: Iterable[int | None], rows: Iterable[int],
             specs: Iterable[_VarSpec]) -> list[FlatVariable]:
        """The variables of the items of the iterables and their :meth:`spec`, one after
        the other (``der`` None), until ``names`` ends (the others may be longer:
        :func:`itertools.repeat`, a pool of rows): the slots set in one loop, without
        the constructor's search for the spec and a call per variable (about half its
        time, for the million variables of a large model made by the thousand with one
        spec)."""
        out: list[FlatVariable] = []
        append, new, cls = out.append, _NEW, FlatVariable
        for name, sym, start, origin, der_of, row, spec in zip(
                names, syms, starts, origins, der_ofs, rows, specs, strict=False):
            v = new(cls)
            v.name = name
            v._sym = sym
            v.start = start
            v.origin = origin
            v.der_of = der_of
            v.der = None
            v._row = row
            v._spec = spec
            append(v)
        return out

    def _fields(self) -> tuple[Any, ...]:
        """The constructor's arguments that make this variable again."""
        u, fixed, nominal, priority, hint, decl = self._spec
        return (self.name, self._sym, self.start, fixed, u, nominal, priority, self.origin,
                self.der_of, self.der, hint, decl, self._row)

    def __reduce__(self) -> tuple[Any, ...]:
        # (the fields in a tuple: the default of a slotted class pickles a dictionary of
        # slot names per object, a hundred thousand of them in a large model)
        return (FlatVariable, self._fields())

    def copy(self) -> FlatVariable:
        """A shallow copy (``copy.copy`` without its generic protocol, which costs more
        than the copy itself for a hundred thousand variables; the spec shared)."""
        new = _NEW(FlatVariable)
        (new.name, new._sym, new.start, new.origin, new.der_of, new.der, new._row,
         new._spec) = _VARIABLE_SLOTS(self)
        return new

    @staticmethod
    def relink(variables: list[FlatVariable], new_index: list[Any]) -> None:
        """In place, each variable of ``variables`` that has a derivative link (``der``,
        ``der_of``) replaced by a copy whose links are renumbered by ``new_index`` (a
        link to -1 becomes None); the others kept as they are. (The copies made in one
        loop, slot by slot: :meth:`copy` per variable, its call and its tuple of slots,
        cost twice as much for the tens of thousands the alias pass renumbers.)"""
        new, cls = _NEW, FlatVariable
        for i, v in enumerate(variables):
            d, o = v.der, v.der_of
            if d is None and o is None:
                continue
            c = new(cls)
            c.name, c._sym, c.start, c.origin = v.name, v._sym, v.start, v.origin
            c._row, c._spec = v._row, v._spec
            if d is not None:
                d = new_index[d]
                if d < 0:
                    d = None
            if o is not None:
                o = new_index[o]
                if o < 0:
                    o = None
            c.der, c.der_of = d, o
            variables[i] = c

    def __repr__(self) -> str:
        return (f"FlatVariable({self.name!r}, start={self.start!r}, fixed={self.fixed!r}, "
                f"unit={self.unit!r}, origin={self.origin!r}, der_of={self.der_of!r}, "
                f"der={self.der!r})")


#: the slots of a :class:`FlatVariable` in one C call (the alias pass copies every kept
#: variable)
_VARIABLE_SLOTS = attrgetter(*FlatVariable.__slots__)


class _ParSpec(NamedTuple):
    """What a parameter shares with the others of its declaration (as :class:`_VarSpec`:
    6 slots, 80 bytes, instead of 9, 112)."""

    unit: str
    doc: str
    decl: Any
    kind: str


def _par_spec(unit: str, doc: str, decl: Any, kind: str) -> _ParSpec:
    key = (unit, doc, id(decl), kind)
    try:
        spec = _SPECS.get(key)
    except TypeError:  # (an unhashable value: a spec of its own)
        return _ParSpec(unit, doc, decl, kind)
    if spec is None:
        if len(_SPECS) >= _MANY:
            _SPECS.clear()
        spec = _SPECS[key] = _ParSpec(unit, doc, decl, kind)
    return spec  # type: ignore[no-any-return]


class FlatParameter:
    """A numeric parameter of the flat system (a CasADi symbol with a default value).

    ``decl``: the component's Parameter declaration (bounds), if any; ``owner``: the
    component instance whose parameter this is; ``kind``: ``"parameter"``,
    ``"relation"`` (a frozen relation) or ``"discrete"``. The symbol of a template
    group's parameter is row ``row`` of the group's column, made when first read.
    ``unit``, ``doc``, ``decl`` and ``kind`` are kept in one tuple shared with the other
    parameters that have the same (:class:`_ParSpec`).
    """

    __slots__ = ("name", "_sym", "value", "owner", "_row", "_spec")

    def __init__(self, name: str, sym: Any, value: float, unit: str = "", doc: str = "",
                 decl: Any = None, owner: Any = None, kind: str = "parameter",
                 row: int = -1) -> None:
        self.name = name
        self._sym = sym
        self.value = value
        self.owner = owner
        self._row = row
        self._spec = _par_spec(unit, doc, decl, kind)

    sym = LazyRow()
    unit = _spec_field(_ParSpec, _par_spec, "unit")
    doc = _spec_field(_ParSpec, _par_spec, "doc")
    decl = _spec_field(_ParSpec, _par_spec, "decl")
    kind = _spec_field(_ParSpec, _par_spec, "kind")

    #: the spec of the given ``unit, doc, decl, kind``
    spec = staticmethod(_par_spec)

    @staticmethod
    def many(names: Iterable[str], syms: Iterable[Any], values: Iterable[float],
             owners: Iterable[Any], rows: Iterable[int], specs: Iterable[_ParSpec]
             ) -> list[FlatParameter]:
        """The parameters of the items of the iterables and their :meth:`spec` (as
        :meth:`FlatVariable.many`: until ``names`` ends)."""
        out: list[FlatParameter] = []
        append, new, cls = out.append, _NEW, FlatParameter
        for name, sym, value, owner, row, spec in zip(names, syms, values, owners, rows,
                                                      specs, strict=False):
            p = new(cls)
            p.name = name
            p._sym = sym
            p.value = value
            p.owner = owner
            p._row = row
            p._spec = spec
            append(p)
        return out

    def __reduce__(self) -> tuple[Any, ...]:  # (as FlatVariable's)
        unit, doc, decl, kind = self._spec
        return (FlatParameter, (self.name, self._sym, self.value, unit, doc, decl,
                                self.owner, kind, self._row))

    @property
    def discrete(self) -> bool:
        """Changes at events only (a frozen relation or a discrete variable), not a
        parameter the user sets."""
        return self.kind != "parameter"

    def __repr__(self) -> str:
        return (f"FlatParameter({self.name!r}, value={self.value!r}, unit={self.unit!r}, "
                f"kind={self.kind!r})")


def start_values(start: Any, size: int, name: str) -> list[float]:
    """The start value ``start`` of the variable ``name`` (``size`` scalars) as one float
    per element: one number stands for every element; otherwise it must give one per
    element. Any other shape is a :class:`ModelDefinitionError` that names the variable
    (where a component's variable has its final size: some components size a vector after
    their keywords are set)."""
    if type(start) is float:  # (the common case, first)
        return [start] * size
    try:
        st = np.asarray(start, dtype=float)
    except (TypeError, ValueError):
        raise ModelDefinitionError(
            f"the start value of {name!r} must be a number or {size} numbers; "
            f"got {start!r}") from None
    if st.size == 1:
        return [float(st.reshape(()))] * size
    if st.shape == (size,):
        return st.tolist()  # type: ignore[no-any-return]
    want = "one number" if size == 1 else f"one number or {size} (one per element)"
    raise ModelDefinitionError(
        f"the start value of {name!r} has shape {st.shape}; it takes {want}")


class SymbolTable:
    """Unknowns, derivative symbols, parameters and named outputs of one model."""

    def __init__(self) -> None:
        self.t = cs.SX.sym("time")
        self.variables: list[FlatVariable] = []
        self.parameters: list[FlatParameter] = []
        self.outputs: dict[str, Any] = {}  # (an unknown: its FlatVariable)
        self.output_units: dict[str, str] = {}  # (of the outputs added with their unit)
        self.index: dict[str, int] = {}
        self._param_index: dict[str, int] = {}
        self.pre_symbols: dict[str, cs.SX] = {}  # variable name -> pre(variable)

    # ----- creation -----
    def new_var(self, name: str, size: int = 1, *, start: Any = 0.0, fixed: bool = False,
                unit: str = "", nominal: float | None = None, state_priority: int = 0,
                origin: str = "", hint: str = "", decl: Any = None) -> cs.SX:
        """Create ``size`` scalar unknowns named ``name`` (``name_k`` elements if a vector)."""
        if size == 1:  # (a scalar symbol is named exactly ``name``; the common case)
            sym = cs.SX.sym(name)
            self.add_var(name, sym, start_values(start, 1, name)[0], fixed, unit, nominal,
                         state_priority, origin, hint, decl)
            return sym
        starts = start_values(start, size, name)
        sym = cs.SX.sym(name, size)
        elems: list[cs.SX] = sym.nonzeros()  # type: ignore[assignment]  # (SX: one call)
        for e, s0 in zip(elems, starts, strict=True):
            self.add_var(e.name(), e, s0, fixed, unit, nominal, state_priority, origin, hint,
                         decl)
        return sym

    def add_var(self, name: str, sym: cs.SX, start: Any, fixed: bool, unit: str,
                nominal: float | None, state_priority: int, origin: str, hint: str,
                decl: Any) -> None:
        """Register the scalar symbol ``sym`` (named ``name``, made by the caller) as an
        unknown."""
        if name in self.index:
            raise ModelDefinitionError(f"two unknowns are named {name!r}")
        self.index[name] = len(self.variables)
        self.variables.append(FlatVariable(
            name, sym, float(start), fixed, unit, nominal, state_priority, origin, None,
            None, hint, decl))

    def new_parameter(self, name: str, value: float, unit: str = "", doc: str = "",
                      decl: Any = None, owner: Any = None) -> cs.SX:
        """Create a numeric parameter (a symbol; its value can change between runs).
        ``decl`` and ``owner`` (the declaration and the component) let run-time checks
        report bounds and changes made after the build."""
        sym = cs.SX.sym(name)
        self.add_parameter(name, sym, value, unit, doc, decl, owner)
        return sym

    def add_parameter(self, name: str, sym: cs.SX, value: float, unit: str = "",
                      doc: str = "", decl: Any = None, owner: Any = None) -> None:
        """Register the symbol ``sym`` (named ``name``) as a numeric parameter."""
        self._param_index[name] = len(self.parameters)
        self.parameters.append(FlatParameter(name, sym, float(value), unit, doc, decl, owner))

    def new_discrete(self, name: str, start: float, unit: str = "", doc: str = "") -> cs.SX:
        """A discrete variable: constant between events, changed by ``when`` actions (a
        parameter of the continuous problem, with its start value as first value)."""
        sym = self.new_parameter(name, start, unit, doc)
        self.parameters[-1].kind = "discrete"
        return sym

    def pre(self, sym: cs.SX) -> cs.SX:
        """The symbol ``pre(v)``: the value of ``v`` just before an event."""
        name = sym.name()
        if name not in self.index and name not in self._param_index:
            raise ModelDefinitionError(f"pre() of {name!r}, which is not a variable")
        k = self._param_index.get(name)
        if name not in self.index and k is not None and (
                k >= len(self.parameters) or self.parameters[k].kind != "discrete"):
            return sym  # a parameter does not change at events: pre(p) is p
        if name not in self.pre_symbols:
            self.pre_symbols[name] = cs.SX.sym(f"pre({name})")
        return self.pre_symbols[name]

    def add_output(self, name: str, expr: Any, unit: str | None = None) -> None:
        """Make ``expr`` addressable in results as ``name`` (``unit``: for ``res.unit``)."""
        self.outputs[name] = expr
        if unit is not None:
            self.output_units[name] = unit

    # ----- derivatives -----
    def der(self, expr: Any) -> cs.SX:
        """Time derivative of a variable or of an expression (chain rule through CasADi)."""
        if isinstance(expr, cs.SX) and expr.is_scalar() and expr.is_symbolic():
            k = self.index.get(expr.name())
            if k is not None:  # the common case: der of a variable
                return self.derivative_of(k)
        expr = cs.SX(expr)
        if expr.is_constant():
            return cs.SX.zeros(expr.shape)
        out = []
        for k in range(expr.numel()):
            e = expr[k]
            if e.is_symbolic() and e.name() in self.index:
                out.append(self.derivative_of(self.index[e.name()]))
                continue
            syms = [s for s in cs.symvar(e) if s.name() in self.index]
            d = cs.jacobian(e, self.t) if cs.depends_on(e, self.t) else cs.SX(0)
            if syms:
                v = cs.vertcat(*syms)
                dv = cs.vertcat(*[self.derivative_of(self.index[s.name()]) for s in syms])
                d = d + cs.jtimes(e, v, dv)
            out.append(d)
        return cs.reshape(cs.vertcat(*out), expr.shape) if out else cs.SX.zeros(expr.shape)

    def derivative_of(self, k: int) -> cs.SX:
        """The symbol ``der(v_k)`` (created on first use)."""
        v = self.variables[k]
        if v.der is None:
            name = f"der({v.name})"  # (the symbol's name)
            self.add_derivative(k, name, cs.SX.sym(name))
        return self.variables[v.der].sym  # type: ignore[index]

    def add_derivative(self, k: int, name: str, sym: cs.SX) -> None:
        """Register ``sym`` (named ``name``, ``der(v_k)``) as the derivative of ``v_k``."""
        v = self.variables[k]
        idx = len(self.variables)
        self.index[name] = idx
        self.variables.append(
            FlatVariable(name, sym, 0.0, False, f"{v.unit}/s" if v.unit else "1/s",
                         None, 0, v.origin, k)
        )
        v.der = idx

    # ----- numeric values known at build time -----
    def value(self, sym: cs.SX) -> float:
        """Start value of a variable or value of a parameter (0 for anything else)."""
        name = sym.name()
        k = self.index.get(name)
        if k is not None:
            return self.variables[k].start
        k = self._param_index.get(name)
        if k is not None:
            return self.parameters[k].value
        return 0.0


_ACTIVE: contextvars.ContextVar[SymbolTable | None] = contextvars.ContextVar(
    "acausal_symbols", default=None)


def current() -> SymbolTable | None:
    """The table equations are being collected into, or None outside a build."""
    return _ACTIVE.get()


@contextmanager
def active(table: SymbolTable) -> Iterator[SymbolTable]:
    """Make ``table`` the one ``der()`` and ``self.time`` resolve to."""
    token = _ACTIVE.set(table)
    try:
        yield table
    finally:
        _ACTIVE.reset(token)
