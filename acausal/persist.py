"""Saving and loading compiled models and results (pickle, ``cm.save`` / ``ac.load``).

A :class:`~acausal.compiler.CompiledModel` pickles with the standard :mod:`pickle` (and so
travels to Dask workers, ``multiprocessing`` pools and files); :meth:`CompiledModel.save`
and :func:`load` write and read such a pickle with a format header. CasADi expressions
(``SX``) are written through CasADi's own serialisation, all of a model's in one: their
nonzeros stacked in one column, serialised once, split again when read. So every symbol
keeps its identity across the compile products (the DAE, the equation system, the
initial problem all refer to the same ``x``, ``z``, ``p``), and the tens of thousands of
expressions of a large model cost one serialisation, not one each (10 000 masses: 37 s
to save and 24 s to load when each was serialised alone).

The **model tree** (the user's component objects) is not saved: component classes may
live in scripts that the loading process cannot import, and may hold functions (signal
parameters) that do not pickle. Every reference to a component is replaced by a
:class:`DetachedComponent` that keeps its path, its class name and its plain parameter
values. A loaded model therefore

* simulates (``ac.simulate(cm, ...)`` with ``params=`` and ``start=``), re-initialises,
  re-selects states, handles events, linearises and exports CasADi functions, reads
  ``cm.report``, ``cm.states``, ``cm.graph.listing()``, ``cm.equations()``, and sweeps;
* cannot be rebuilt (no ``cm.model`` component objects: ``ac.build(cm.model)`` and
  anything that walks the component tree, such as FMU export, raise
  :class:`DetachedModelError` with the remedy: rebuild from the model class).

The functions of time given for parameters (``tr.Force(f=lambda t: np.sin(2 * t))``)
are not saved either: the build evaluated them on the symbol of time, so their values are
part of the compiled expressions and a loaded model never calls them (each is kept as an
:class:`UnsavedFunction` that says so). A model with a lambda signal therefore saves,
pickles and sweeps on Dask workers like any other.

A :class:`~acausal.results.Result` pickles with its outputs evaluated (the lazily
evaluated table is computed before writing), its statistics and its events.

:func:`save` writes a header, the SHA-256 of the pickle and the pickle, into a temporary
file of the same folder renamed over ``path`` only once complete (a failed save leaves an
earlier file intact); :func:`load` checks the digest before reading anything, so a damaged
file is an :class:`~acausal.errors.AcausalError` naming it (files without the digest,
written before it, still load).
"""

from __future__ import annotations

import hashlib
import io
import os
import pickle
import sys
import threading
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import casadi as cs
import casadi.casadi as _cs_internal

from .component import DATUM, Component, PortInstance, has_parameter_check
from .csr import offsets
from .errors import AcausalError
from .fastsx import stack
from .gcpause import collector_paused

if TYPE_CHECKING:
    from .compiler import CompiledModel
    from .results import Result

__all__ = ["DetachedComponent", "DetachedPort", "DetachedModelError", "UnsavedFunction",
           "save", "load", "dumps", "loads", "class_name", "FORMAT_VERSION"]

#: version of the saved layout (a file of another version is refused with a message).
#: 2: the flat records are slotted classes, the BLT blocks a table (structure.blt.Blocks)
#: and the output plan one sparse product: a file of format 1 no longer loads into them.
#: 3: the expressions of a model serialised together (:func:`dumps`); format 2 still loads
FORMAT_VERSION = 3
_MAGIC = b"ACAUSAL-MODEL\n"
#: after the magic line: ``SHA256:<64 hex digits>\n``, the digest of the pickle after it
#: (files written before the digest have the pickle right after the magic line)
_DIGEST = b"SHA256:"


class DetachedModelError(AcausalError):
    """An operation needs the component objects of a model loaded from a file or received
    from another process (they are not saved)."""


class DetachedComponent:
    """Stand-in for a component object of a saved compiled model.

    Keeps what can be shown: the dotted ``path``, the class (``class_name``,
    ``class_names`` of its bases, for geometry and reports) and the plain parameter values
    (``params``: numbers, lists, arrays, strings). Anything else raises
    :class:`DetachedModelError`.
    """

    def __init__(self, path: str, class_name: str, class_names: tuple[str, ...],
                 params: dict[str, Any], following: tuple[str, ...] = (),
                 checks: bool = False) -> None:
        # (following: the parameters not given, computed from others, as a live
        # component's that the model's runs cannot set apart; checks: whether its class
        # checks its parameters together, Component.check_parameters)
        self.__dict__.update(_path=path, class_name=class_name, class_names=class_names,
                             params=params, _following=following, _checks=checks)

    def path(self) -> str:
        """Dotted path from the root model ('' for the root)."""
        return str(self.__dict__["_path"])

    def _path_or_class(self) -> str:
        return self.path() or self.class_name.rsplit(".", 1)[-1]

    def _describe(self) -> str:
        cls = self.class_name.rsplit(".", 1)[-1]
        p = self.path()
        return f"{cls} {p!r}" if p else cls

    def is_a(self, name: str) -> bool:
        """Whether the original class or one of its bases is called ``name``."""
        return name in self.class_names

    def parameters(self) -> dict[str, Any]:
        """The plain parameter values that were saved."""
        return dict(self.params)

    def following(self) -> tuple[str, ...]:
        """The parameters that were not given: computed from others of the component."""
        return tuple(self.__dict__.get("_following", ()))

    def checks_parameters(self) -> bool:
        """Whether its class checks its parameters together (``check_parameters``)."""
        return bool(self.__dict__.get("_checks", False))

    def original_class(self) -> type | None:
        """The component's class where it can be found here (its module imported, or the
        library's; not a class defined inside a function), else None: what the checks of
        a run's parameters need (:meth:`Component.check_parameters`)."""
        return _importable(str(self.__dict__["class_name"]))

    def __getattr__(self, item: str) -> Any:
        if item.startswith("__"):
            raise AttributeError(item)
        raise DetachedModelError(
            f"{self._describe()} is a detached component: this compiled model was loaded "
            f"from a file (or received from another process), and the component objects of "
            f"the model tree are not saved, so .{item} is not available. Simulation, "
            "parameter changes, linearisation and CasADi export work on the loaded model; to "
            "rebuild it or walk its components (FMU export), build the model class again: "
            "cm = ac.build(MyModel())")

    def __setattr__(self, key: str, value: Any) -> None:
        raise DetachedModelError(f"{self._describe()} is detached (loaded from a file) and "
                                 "cannot be changed; rebuild from the model class")

    def __reduce__(self) -> Any:
        d = self.__dict__
        return (DetachedComponent, (d["_path"], d["class_name"], d["class_names"],
                                    d["params"], d.get("_following", ()),
                                    d.get("_checks", False)))

    def __repr__(self) -> str:
        return f"<detached {self._describe()}>"


class DetachedPort:
    """Stand-in for a port of a detached component: its name, owner and domain."""

    def __init__(self, owner: DetachedComponent, name: str, domain: Any) -> None:
        self.__dict__.update(owner=owner, name=name, domain=domain)

    def path(self) -> str:
        return f"{self.owner._path_or_class()}.{self.name}"

    def __getattr__(self, item: str) -> Any:
        if item.startswith("__"):
            raise AttributeError(item)
        raise DetachedModelError(f"port {self.path()} belongs to a detached component "
                                 "(a model loaded from a file): .{item} is not available")

    def __reduce__(self) -> Any:
        d = self.__dict__
        return (DetachedPort, (d["owner"], d["name"], d["domain"]))

    def __repr__(self) -> str:
        return f"<detached port {self.path()} ({self.domain.name})>"


class UnsavedFunction:
    """Stand-in for a function of time given for a parameter (a signal) of a saved or
    pickled model. The build evaluated the function on the symbol of time, so its values
    are part of the compiled expressions and the model never calls it again; it is not
    saved (a lambda or a local function cannot be pickled, and a module-level one would
    make the file need its module)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise DetachedModelError(
            f"the function given for {self.name} was not saved with the compiled model (its "
            "values are part of the compiled equations); build the model class again to "
            "use the function itself")

    def __reduce__(self) -> Any:
        return (UnsavedFunction, (self.name,))

    def __repr__(self) -> str:
        return f"<function given for {self.name}, not saved>"


#: the packages whose modules may be imported to find a detached component's class (the
#: library's; a user's module is only looked up if already imported: importing a script
#: could run it)
_IMPORTABLE = frozenset({"acausal", "components"})


def _importable(dotted: str) -> type | None:
    """The class ``module.qualname`` names where its module is imported already (or is
    the library's), else None."""
    import importlib

    found: Any = None
    parts = dotted.split(".")
    for k in range(len(parts) - 1, 0, -1):  # (the longest module name first)
        module = ".".join(parts[:k])
        found = sys.modules.get(module)
        if found is None and parts[0] in _IMPORTABLE:
            try:
                found = importlib.import_module(module)
            except ImportError:
                found = None
        if found is None:
            continue
        for name in parts[k:]:
            found = getattr(found, name, None)
        break
    return found if isinstance(found, type) and issubclass(found, Component) else None


def class_name(model: Any) -> str:
    """The class name of a model, also of a detached one (``"MSD"``)."""
    if isinstance(model, DetachedComponent):
        return str(model.__dict__["class_name"]).rsplit(".", 1)[-1]
    return type(model).__name__


def _plain(value: Any) -> bool:
    """Whether a parameter value is kept on a detached component (small plain data)."""
    import numpy as np

    if isinstance(value, bool | int | float | str | complex) or value is None:
        return True
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "biufc" and value.size <= 10_000
    if isinstance(value, list | tuple):
        return len(value) <= 10_000 and all(_plain(v) for v in value)
    return False


def _describe_component(c: Any) -> tuple[str, str, tuple[str, ...], dict[str, Any],
                                         tuple[str, ...], bool]:
    if isinstance(c, DetachedComponent):
        d = c.__dict__
        return (d["_path"], d["class_name"], d["class_names"], d["params"],
                d.get("_following", ()), d.get("_checks", False))
    cls = type(c)
    params = {k: v for k, v in c.parameters().items() if _plain(v)}
    following = tuple(k for k, v in c.__dict__["_params"].items()
                      if v is None and getattr(getattr(cls, k, None), "follows", None))
    return (c.path(), f"{cls.__module__}.{cls.__qualname__}",
            tuple(k.__name__ for k in cls.__mro__), params, following,
            has_parameter_check(cls))


class _Pickler(pickle.Pickler):
    """Component objects become detached stand-ins, ``SX`` expressions references to the
    column :func:`dumps` writes after the model (``sx``: the expressions met).

    (``reducer_override``, not ``persistent_id``: pickle asks the first about objects of
    other types than ``int``, ``float``, ``str``, lists, tuples and dicts only, and the
    second about every object, 14 million for the model of 10 000 masses.)"""

    def __init__(self, file: io.BytesIO) -> None:
        from .flatten import FlatSystem

        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self.sx: list[cs.SX] = []
        self._sx_at: dict[int, int] = {}
        self._flat_type = FlatSystem

    def reducer_override(self, obj: Any) -> Any:
        if type(obj) is cs.SX:
            at = self._sx_at.get(id(obj))
            if at is None:
                at = self._sx_at[id(obj)] = len(self.sx)
                self.sx.append(obj)  # (kept: its id stays its own while pickling)
            return (_expression, (at,))
        if obj is DATUM:  # a singleton compared by identity
            return (_datum, ())
        if isinstance(obj, Component):  # (written once: pickle's memo keeps it)
            return (DetachedComponent, _describe_component(obj))
        if isinstance(obj, PortInstance):
            return (DetachedPort, (obj.owner, obj.name, obj.domain))
        if type(obj) is self._flat_type:
            return _reduce_flat(obj)
        return NotImplemented


def _reduce_flat(flat: Any) -> Any:
    """A flat system with the functions of its ``bound_values`` (signals) replaced by
    :class:`UnsavedFunction`: compiled into the expressions, and not needed by a model
    whose components are detached (:func:`acausal.checks._stale_parameters` compares the
    bound values with the live components' only)."""
    bound = flat.bound_values
    if not any(callable(v) for _, _, v in bound):
        return NotImplemented
    state = dict(flat.__dict__)
    state["bound_values"] = [
        (c, n, UnsavedFunction(_parameter_path(c, n)) if callable(v) else v)
        for c, n, v in bound]
    # (the state after the object: references back to it inside resolve to it)
    return (_new_flat, (type(flat),), state)


def _new_flat(cls: type) -> Any:
    return object.__new__(cls)


def _parameter_path(c: Any, name: str) -> str:
    path = c.path() if hasattr(c, "path") else ""
    return f"{path}.{name}" if path else name


#: the expressions of the model being loaded (:func:`loads`), per thread
_LOADING = threading.local()


def _expression(at: int) -> cs.SX:
    return _LOADING.sx[at]  # type: ignore[no-any-return]


def _datum() -> Any:
    return DATUM


class _Unpickler(pickle.Unpickler):
    """Reads format 2, whose components are persistent references."""

    def __init__(self, file: io.BytesIO) -> None:
        super().__init__(file)
        self._made: dict[str, DetachedComponent] = {}
        self._ports: dict[str, DetachedPort] = {}

    def persistent_load(self, pid: Any) -> Any:
        if pid == ("datum",):
            return DATUM
        if isinstance(pid, tuple) and pid and pid[0] == "port":
            _, owner, name, domain = pid
            key = f"{owner[1]}:{owner[2]}:{name}"
            port = self._ports.get(key)
            if port is None:
                port = self._ports[key] = DetachedPort(self.persistent_load(owner), name,
                                                       domain)
            return port
        if not (isinstance(pid, tuple) and pid and pid[0] == "component"):
            raise pickle.UnpicklingError(f"unknown persistent reference {pid!r}")
        _, path, class_name, class_names, params = pid
        key = f"{class_name}:{path}"
        c = self._made.get(key)
        if c is None:
            c = self._made[key] = DetachedComponent(path, class_name, class_names, params)
        return c


class _CasadiContext:
    """CasADi's (thread-local) pickling context for ``SX``, set and restored (it may be
    nested in a user's own ``casadi.global_pickle_context``)."""

    def __init__(self, writing: bool) -> None:
        self.attr = "casadi_pickle_ctx" if writing else "casadi_unpickle_ctx"
        self.ctx = cs.StringSerializer() if writing else cs.StringDeserializer("")

    def __enter__(self) -> Any:
        tl = _cs_internal._thread_local  # type: ignore[attr-defined]
        self.old = getattr(tl, self.attr, None)
        setattr(tl, self.attr, self.ctx)
        return self.ctx

    def __exit__(self, *args: Any) -> None:
        setattr(_cs_internal._thread_local, self.attr, self.old)  # type: ignore[attr-defined]


def _model_payload(cm: CompiledModel) -> dict[str, Any]:
    return {"state": cm.state, "passes": cm.passes, "report": cm.report,
            "dae_by_states": dict(cm._dae_by_states),
            # (the units of the ports' quantities and the structural arrays of numbers:
            # the components are not saved)
            "port_units": cm._port_units, "structural": cm._structural}


def dumps(cm: CompiledModel) -> bytes:
    """The compiled model as bytes (without the component objects, see the module doc):
    the pickle of the model with its expressions as references, then the expressions
    (:func:`_pack_expressions`)."""
    buf = io.BytesIO()
    # (CasADi's context: for its objects other than SX, functions)
    with _CasadiContext(writing=True), collector_paused():
        pickler = _Pickler(buf)
        try:
            pickler.dump(_model_payload(cm))
        except (pickle.PicklingError, TypeError, AttributeError) as exc:
            raise _not_picklable(cm, exc) from exc
        expressions = _pack_expressions(pickler.sx)
    return pickle.dumps((expressions, buf.getvalue()), protocol=pickle.HIGHEST_PROTOCOL)


def _not_picklable(cm: CompiledModel, exc: BaseException) -> AcausalError:
    """The error of a model that cannot be pickled, naming the parameter whose value is
    the cause when one is (a value the build used, such as a structural parameter's)."""
    flat = cm.state.flat
    culprit = ""
    for c, name, value in (flat.bound_values if flat is not None else []):
        if callable(value):
            continue  # (not written: UnsavedFunction)
        try:
            with _CasadiContext(writing=True):
                _Pickler(io.BytesIO()).dump(value)
        except Exception:  # noqa: BLE001 - any failure names this value
            culprit = (f": the value of parameter {_parameter_path(c, name)!r} "
                       f"({type(value).__name__}) cannot be pickled")
            break
    return AcausalError(
        f"the compiled model of {class_name(cm.model)} cannot be saved or sent to another "
        f"process{culprit} ({type(exc).__name__}: {exc}). Values held by components must "
        "be picklable: module-level classes and functions, not lambdas or local ones; or "
        "simulate in this process (ac.sweep(..., client='serial'))")


def loads(data: bytes, version: int = FORMAT_VERSION) -> CompiledModel:
    """A compiled model from :func:`dumps` (or from the ``dumps`` of format 2, which
    serialised every expression alone)."""
    from .compiler import CompiledModel

    with _CasadiContext(writing=False):
        if version == 2:
            payload = _Unpickler(io.BytesIO(data)).load()
        else:
            expressions, body = pickle.loads(data)
            before = getattr(_LOADING, "sx", None)
            _LOADING.sx = _unpack_expressions(*expressions)
            try:
                with collector_paused():  # (millions of objects, as a build makes)
                    payload = pickle.loads(body)
            finally:
                _LOADING.sx = before
    cm = CompiledModel(payload["state"], payload["passes"], payload["report"])
    cm._dae_by_states.update(payload["dae_by_states"])
    for key in ("port_units", "structural"):  # (absent from files written before them)
        if key in payload:
            cm.__dict__["_" + key] = payload[key]
    return cm


def _pack_expressions(items: list[cs.SX]) -> tuple[str, list[tuple[Any, ...]]]:
    """``SX`` matrices as one serialised column of their nonzeros (column-major), and
    each one's layout: ``(rows, columns)`` if dense, else ``(rows, columns, column
    starts, row indices)``."""
    cols: list[cs.SX] = []
    layout: list[tuple[Any, ...]] = []
    for x in items:
        n, m = x.size1(), x.size2()
        if x.is_dense():
            layout.append((n, m))
            cols.append(x if m == 1 else cs.vec(x))
        else:
            sp = x.sparsity()
            layout.append((n, m, sp.colind(), sp.row()))
            cols.append(x.nz[:] if x.nnz() else cs.SX(0, 1))
    column = stack(*cols) if cols else cs.SX(0, 1)
    return column.serialize(), layout


def _unpack_expressions(text: str, layout: list[tuple[Any, ...]]) -> list[cs.SX]:
    """The matrices :func:`_pack_expressions` wrote."""
    if not layout:
        return []
    column = cs.SX.deserialize(text)
    sizes = [lay[0] * lay[1] if len(lay) == 2 else len(lay[3]) for lay in layout]
    parts = cs.vertsplit(column, offsets(sizes).tolist())
    out = []
    for lay, part in zip(layout, parts, strict=True):
        if len(lay) == 2:
            out.append(part if lay[1] == 1 else cs.reshape(part, lay[0], lay[1]))
        else:
            n, m, colind, row = lay
            out.append(cs.SX(cs.Sparsity(n, m, colind, row), part))
    return out


def _restore_model(version: int, data: bytes) -> CompiledModel:
    if version not in (2, FORMAT_VERSION):
        raise AcausalError(f"this compiled model was saved in format {version}; this "
                           f"version of acausal reads format {FORMAT_VERSION}: rebuild it")
    return loads(data, version)


def reduce_model(cm: CompiledModel) -> tuple[Any, ...]:
    """``CompiledModel.__reduce__``: rebuilt by :func:`_restore_model` from :func:`dumps`."""
    return (_restore_model, (FORMAT_VERSION, dumps(cm)))


def result_state(res: Result) -> dict[str, Any]:
    """``Result.__getstate__``: the instance dictionary with the outputs evaluated (the
    table may be a function computing it on first use; functions do not pickle)."""
    state = dict(res.__dict__)
    state["_data_or_fn"] = res._data
    state["_index_cache"] = None
    state.pop("_index_source", None)  # (the model's, which is not saved)
    state.pop("_rows", None)  # (a view of the table, which would be written twice)
    state.pop("_warned", None)  # (a reader of the loaded result is warned again)
    # (the model's unit lookup, which holds the model: its unit tables are saved in its
    # place, so a loaded result's plots keep their units)
    of = state.pop("_unit_of", None)
    tables = of.tables() if of is not None else None
    if tables is not None:
        state["_unit_of"] = SavedUnits(*tables)
    return state


class SavedUnits:
    """The unit tables of the model a saved result was made from, in place of the model:
    called as the weak reference it stands for (``Result._unit_of``), it gives the lookup
    (:func:`acausal.compiler.unit_of`). The port tables are one per class, which the
    pickle writes once."""

    __slots__ = ("units", "port_units")

    def __init__(self, units: dict[str, str],
                 port_units: dict[str, dict[tuple[str, str], str]]) -> None:
        self.units = units
        self.port_units = port_units

    def __call__(self) -> Any:
        from .compiler import unit_of

        return partial(unit_of, units=self.units, port_units=self.port_units)

    def tables(self) -> tuple[dict[str, str], dict[str, dict[tuple[str, str], str]]]:
        """As :meth:`acausal.compiler.UnitLookup.tables` (a loaded result saved again)."""
        return self.units, self.port_units

    def __reduce__(self) -> Any:
        return (SavedUnits, (self.units, self.port_units))


def save(obj: CompiledModel | Result, path: str | Path) -> Path:
    """Write a compiled model or a result to ``path`` (read it back with :func:`load`).

    The file is complete or not there: it is written under a temporary name in the same
    folder (created if missing) and renamed over ``path`` once complete, so a failure
    leaves an earlier file of that name as it was."""
    path = Path(path)
    if path.is_dir():
        raise AcausalError(f"cannot save to {path}: it is a directory; give a file name")
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)  # (before touching the disk)
    head = _MAGIC + _DIGEST + hashlib.sha256(data).hexdigest().encode() + b"\n"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        try:
            with open(tmp, "wb") as f:
                f.write(head)
                f.write(data)
            os.replace(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)
    except OSError as exc:
        raise AcausalError(f"cannot write {path}: {exc.strerror or exc}") from None
    return path


def load(path: str | Path) -> Any:
    """A compiled model or result written by :func:`save` (``cm.save(path)``).

    Only load files you trust: like any pickle, the file can run code when read.
    """
    try:
        with open(path, "rb") as f:
            head = f.read(len(_MAGIC))
            if head != _MAGIC:
                raise AcausalError(f"{path} is not a file written by acausal's save()")
            mark = f.read(len(_DIGEST))
            if mark == _DIGEST:
                digest = f.readline().strip()
                data = f.read()
            else:  # (written before the digest: the pickle follows the magic line)
                digest, data = b"", mark + f.read()
    except OSError as exc:
        raise AcausalError(f"cannot read {path}: {exc.strerror or exc}") from None
    if digest and hashlib.sha256(data).hexdigest().encode() != digest:
        raise AcausalError(
            f"{path} is damaged or incomplete (its content does not match the checksum "
            "written with it): save the model or result again")
    try:
        return pickle.loads(data)
    except AcausalError:
        raise  # (a file of another format version says so itself)
    except Exception as exc:  # noqa: BLE001 - whatever the damage makes the readers raise
        what = (f"{type(exc).__name__}: {exc}".splitlines() or [""])[0][:200]
        if digest:  # intact, but not readable here
            raise AcausalError(
                f"{path} cannot be read by this version of acausal ({what}); it was "
                "written intact by another version: save the model or result again with "
                "this one") from exc
        raise AcausalError(
            f"{path} is damaged or incomplete ({what}): it starts as a file of acausal's "
            "save() but cannot be read to its end; save the model or result again"
        ) from exc
