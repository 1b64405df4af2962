"""Records: the library's internal result types, declared as dataclasses are.

``dataclasses.dataclass`` compiles an ``__init__``, a ``__repr__`` and an ``__eq__`` from
source text for every class when its module is imported: about 1 ms a class (Python 3.11),
which was half of ``import acausal`` (46 classes; issue 14, the cold script). A
:func:`record` is declared the same way (annotated fields, defaults,
``dataclasses.field(default_factory=..., repr=False, compare=False)``, ``__post_init__``)
and type-checks as a dataclass (``typing.dataclass_transform``), but its methods are the
generic ones below, which read the class's field list made once: nothing is compiled at
import. An instance costs a few microseconds more to make than a dataclass's: records are
one per pass or per run, never one per equation.

A record is a dataclass to the outside: it carries the ``Field`` table ``dataclasses``
reads, so ``dataclasses.fields``, ``asdict``, ``astuple``, ``replace`` and
``is_dataclass`` take it (users give the public result types,
:class:`~acausal.compiler.StructureReport`, :class:`~acausal.simulate.SimulationStats`,
..., to ``asdict``). ``record(frozen=True)`` is ``dataclass(frozen=True)``: assigning a
field raises ``dataclasses.FrozenInstanceError``, and with ``eq`` it hashes by the compared
fields. :func:`replace` is ``dataclasses.replace`` for records. The classes of the modules
``import acausal`` does not load (events, exports, multibody, ...) stay dataclasses.
"""

from __future__ import annotations

import dataclasses
import reprlib
from collections.abc import Callable, Sequence
from typing import Any, TypeVar, dataclass_transform, overload

__all__ = ["ListView", "record", "replace"]

T = TypeVar("T", bound=type)
R = TypeVar("R")

_MISSING: Any = dataclasses.MISSING


class _Field:
    __slots__ = ("name", "default", "factory", "repr", "compare", "type")

    def __init__(self, name: str, value: Any, type_: Any) -> None:
        self.name, self.type = name, type_
        self.default, self.factory, self.repr, self.compare = value, None, True, True
        if isinstance(value, dataclasses.Field):
            self.default = value.default
            self.factory = (None if value.default_factory is _MISSING
                            else value.default_factory)
            self.repr, self.compare = value.repr, value.compare

    def as_dataclass_field(self) -> dataclasses.Field[Any]:
        """The ``dataclasses.Field`` a dataclass would hold for it (read by
        ``dataclasses.fields``, ``asdict``, ``replace``)."""
        f: dataclasses.Field[Any] = dataclasses.field(
            default=self.default,
            default_factory=_MISSING if self.factory is None else self.factory,
            repr=self.repr, compare=self.compare)
        f.name, f.type = self.name, self.type
        f._field_type = dataclasses._FIELD  # type: ignore[attr-defined]  # (a plain field)
        return f


class _DataclassFields:
    """A record class's ``__dataclass_fields__``, made when first read (by
    ``dataclasses.fields``, ``asdict``, ``is_dataclass``, ...) and then kept on the class:
    the ``Field`` objects of every record at import were 270 objects made, and scanned by
    each collection of the oldest generation (the last ones as the interpreter exits)."""

    def __get__(self, obj: Any, owner: type) -> dict[str, dataclasses.Field[Any]]:
        fields = {f.name: f.as_dataclass_field()
                  for f in owner._record_fields}  # type: ignore[attr-defined]
        owner.__dataclass_fields__ = fields  # type: ignore[attr-defined]  # (replaces this)
        return fields


_DATACLASS_FIELDS = _DataclassFields()


def _fields(cls: type) -> tuple[_Field, ...]:
    """The fields of ``cls`` in declaration order, a base record's first."""
    out: dict[str, _Field] = {}
    for klass in reversed(cls.__mro__):
        if klass is not cls and "_record_fields" in klass.__dict__:  # a base record
            out.update((f.name, f) for f in klass.__dict__["_record_fields"])
            continue
        for name, ann in klass.__dict__.get("__annotations__", {}).items():
            if isinstance(ann, str) and ann.startswith(("ClassVar", "typing.ClassVar")):
                continue
            out[name] = _Field(name, klass.__dict__.get(name, _MISSING), ann)
            if out[name].factory is not None or out[name].default is _MISSING:
                if name in klass.__dict__ and klass is cls:
                    delattr(cls, name)  # (no Field object left as a class attribute)
            elif klass is cls:
                setattr(cls, name, out[name].default)
    return tuple(out.values())


def _init(self: Any, *args: Any, **kwargs: Any) -> None:
    fields = self._record_fields
    if len(args) > len(fields):
        raise TypeError(f"{type(self).__name__}() takes {len(fields)} positional "
                        f"arguments but {len(args)} were given")
    d = self.__dict__
    for f, value in zip(fields, args, strict=False):  # (the rest by keyword or default)
        if f.name in kwargs:
            raise TypeError(f"{type(self).__name__}() got multiple values for argument "
                            f"{f.name!r}")
        d[f.name] = value
    for f in fields[len(args):]:
        if f.name in kwargs:
            d[f.name] = kwargs.pop(f.name)
        elif f.factory is not None:
            d[f.name] = f.factory()
        elif f.default is not _MISSING:
            d[f.name] = f.default
        else:
            raise TypeError(f"{type(self).__name__}() missing required argument: "
                            f"{f.name!r}")
    if kwargs:
        raise TypeError(f"{type(self).__name__}() got an unexpected keyword argument "
                        f"{next(iter(kwargs))!r}")
    post = getattr(self, "__post_init__", None)
    if post is not None:
        post()


@reprlib.recursive_repr()  # (a record that holds itself, through others: "...")
def _repr(self: Any) -> str:
    inner = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in self._record_fields
                      if f.repr)
    return f"{type(self).__qualname__}({inner})"


def _compared(self: Any) -> tuple[Any, ...]:
    return tuple(getattr(self, f.name) for f in self._record_fields if f.compare)


def _eq(self: Any, other: Any) -> Any:
    if other.__class__ is not self.__class__:
        return NotImplemented
    return _compared(self) == _compared(other)  # (as a dataclass: tuples, identity first)


def _hash(self: Any) -> int:
    return hash(_compared(self))


def _frozen_setattr(self: Any, name: str, value: Any) -> None:
    raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")


def _frozen_delattr(self: Any, name: str) -> None:
    raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")


@overload
def record(cls: T, /) -> T: ...


@overload
def record(*, eq: bool = True, frozen: bool = False) -> Callable[[T], T]: ...


@dataclass_transform(field_specifiers=(dataclasses.field, dataclasses.Field))
def record(cls: Any = None, /, *, eq: bool = True, frozen: bool = False) -> Any:
    """Make ``cls`` a record: ``__init__`` from its annotated fields (positional in their
    order, or by keyword), ``__repr__``, and, with ``eq`` (the default), field-wise
    ``==``, as ``@dataclass`` would. With ``frozen``, assigning a field raises, and the
    record hashes by its compared fields; a mutable record with ``eq`` has no hash, and
    one without ``eq`` hashes by identity (as dataclasses do)."""

    def wrap(klass: Any) -> Any:
        klass._record_fields = _fields(klass)
        klass.__dataclass_fields__ = _DATACLASS_FIELDS
        klass.__init__ = _init
        if "__repr__" not in klass.__dict__:
            klass.__repr__ = _repr
        if eq and "__eq__" not in klass.__dict__:
            klass.__eq__ = _eq
            if "__hash__" not in klass.__dict__:
                klass.__hash__ = _hash if frozen else None
        if frozen:
            klass.__setattr__ = _frozen_setattr
            klass.__delattr__ = _frozen_delattr
        return klass

    return wrap if cls is None else wrap(cls)


def replace(obj: R, /, **changes: Any) -> R:
    """A new record of ``obj``'s class with its fields, ``changes`` replacing some (as
    ``dataclasses.replace``: the class's ``__init__`` and ``__post_init__`` run)."""
    fields = type(obj)._record_fields  # type: ignore[attr-defined]
    return type(obj)(**{f.name: changes.pop(f.name) if f.name in changes else
                        getattr(obj, f.name) for f in fields}, **changes)


E = TypeVar("E")


class ListView(Sequence[E]):
    """A sequence whose items are made when read, that compares equal to, prints as and
    is as unhashable as the list it stands for (a subclass gives ``__len__`` and
    ``__getitem__``)."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(list(self))
