"""Simulation results addressed by dotted path: ``res["motor.inertia.w"]``."""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import repeat
from typing import Any, cast, overload

import numpy as np

from . import grid_outputs
from .errors import AcausalError, ArgumentError, SolverWarning, user_stacklevel
from .names import did_you_mean, name_list

__all__ = ["LazyNames", "Result", "Sizes"]

#: names a result evaluates one by one before it considers blocks of them; then it
#: evaluates a block of consecutive outputs (:data:`_BLOCK_VALUES`) when the names of the
#: block read so far cost :data:`_TABLE_SHARE` of what the block costs (the estimates of
#: :mod:`acausal.grid_outputs`: a reader of every name pays at most a quarter more than
#: the table, a reader who stops just after a block at most five times his names' cost; a
#: fixed count, 64 names before, ignored that a name read on 20 001 points costs 20 ms, one
#: on 101 points 1.5 ms and one read off the states 0.1 ms), and a block takes at most
#: half the machine's memory (:func:`_table_max_bytes`)
_MIN_PER_NAME = 8
_TABLE_SHARE = 0.25
#: the most values (columns x points) of a block: what a result holds is the names read
#: one by one and the blocks their reads paid for, not the whole table (1 000 masses on
#: 20 001 points: a table of 3.7 GB, blocks of 1 677 names and 256 MB)
_BLOCK_VALUES = 1 << 25


def _table_max_bytes() -> float:
    """Half the machine's physical memory (infinite where it is not known)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2
    except (AttributeError, ValueError, OSError):
        return float("inf")


class Sizes(Sequence[int]):
    """The sizes of ``n`` named outputs, all 1 but those of ``other`` (position -> size):
    a model's outputs are scalars but for a few, and a list of 2.3 million ones (100 000
    masses) costs 18 MB. Reads like a list of ints; ``numpy.asarray`` gives the array."""

    __slots__ = ("n", "other")

    def __init__(self, n: int, other: dict[int, int] | None = None) -> None:
        self.n = n
        self.other = other or {}

    @classmethod
    def of(cls, sizes: Iterable[int] | np.ndarray) -> Sizes:
        """The sizes of a list or an array of ints."""
        a = np.asarray(sizes if isinstance(sizes, (Sequence, np.ndarray)) else list(sizes),
                       dtype=np.int64)
        at = np.flatnonzero(a != 1)
        return cls(len(a), dict(zip(at.tolist(), a[at].tolist(), strict=True)))

    @classmethod
    def join(cls, parts: Iterable[Sequence[int] | np.ndarray]) -> Sizes:
        """The sizes of ``parts`` one after the other."""
        n, other = 0, dict[int, int]()
        for part in parts:
            s = part if isinstance(part, Sizes) else cls.of(part)
            other.update((n + k, v) for k, v in s.other.items())
            n += s.n
        return cls(n, other)

    def __len__(self) -> int:
        return self.n

    @overload
    def __getitem__(self, k: int) -> int: ...

    @overload
    def __getitem__(self, k: slice) -> list[int]: ...

    def __getitem__(self, k: int | slice) -> int | list[int]:
        if isinstance(k, slice):
            return self.__array__()[k].tolist()
        return self.other.get(range(self.n)[k], 1)  # (a negative k, or IndexError)

    def __iter__(self) -> Iterator[int]:
        return repeat(1, self.n) if not self.other else iter(self.__array__().tolist())

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        a = np.ones(self.n, dtype=np.int64 if dtype is None else dtype)
        if self.other:
            a[list(self.other)] = list(self.other.values())
        return a

    def total(self) -> int:
        """The sum of the sizes."""
        return self.n + sum(self.other.values()) - len(self.other)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sizes):
            return self.n == other.n and self.other == other.other
        return isinstance(other, Sequence) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Sizes({self.n}, {self.other})"


class LazyNames(Sequence[str]):
    """Names read like a list but made as one only when read as a whole (an iteration, a
    search, a comparison, a pickle: then kept); a single read before that makes its name
    alone. A subclass gives ``__len__``, ``_make()`` (the list) and ``_one(k)`` (name
    ``k``, ``0 <= k < len``). A large model has millions of output names that a build
    never reads (:class:`~acausal.dae.OutNames`, :class:`~acausal.graph_columns.BlockNames`)."""

    _list: list[str] | None = None

    def _make(self) -> list[str]:
        raise NotImplementedError

    def _one(self, k: int) -> str:
        raise NotImplementedError

    def names(self) -> list[str]:
        """Every name (the list made once, then kept)."""
        if self._list is None:
            self._list = self._make()
        return self._list

    @overload
    def __getitem__(self, k: int) -> str: ...

    @overload
    def __getitem__(self, k: slice) -> list[str]: ...

    def __getitem__(self, k: int | slice) -> str | list[str]:
        if self._list is not None or type(k) is not int:
            return self.names()[k]
        return self._one(range(len(self))[k])  # (a negative k, or IndexError)

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __contains__(self, value: object) -> bool:
        return value in self.names()

    def index(self, value: Any, start: int = 0, stop: int | None = None) -> int:
        return self.names().index(value, start, len(self) if stop is None else stop)

    def __add__(self, other: Sequence[str]) -> list[str]:  # (a list's: names + [...])
        return self.names() + list(other)

    def __radd__(self, other: Sequence[str]) -> list[str]:
        return list(other) + self.names()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and self.names() == list(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({len(self)} names)"

    def __reduce__(self) -> Any:
        return list, (self.names(),)  # (saved as the list of its names)


class Result:
    """Time series of every variable of a model.

    ``res.t`` is the time grid; ``res["path.to.var"]`` a numpy array (``(nt,)`` for a scalar,
    ``(nt, n)`` for a vector quantity). Parameters are also addressable (constant series).
    """

    def __init__(self, t: np.ndarray, names: Sequence[str], sizes: Sequence[int],
                 data: np.ndarray | Callable[[], np.ndarray] | Any,
                 parameters: dict[str, float],
                 status: str = "ok", message: str = "", stats: Any = None,
                 index: dict[str, int] | Callable[[], dict[str, int]] | None = None,
                 ranges: dict[int, tuple[Any, Any, str]] | None = None):
        """``data`` is the (time x output) matrix, a function computing it on first use,
        or a lazy evaluator with ``column(k) -> (nt, size_k)`` and ``matrix()`` (outputs
        evaluated from the integrated states only when, and only those, read). ``index``,
        if given, is ``name -> position`` of ``names``, shared with the model's other
        results and never changed, or a function giving it (formed when first needed).
        The first few reads find their names by a scan instead (:data:`_SCANS`): forming
        the index takes 65-90 ms for the 230 000 names of 10 000 masses, a scan under
        1 ms. ``ranges``: ``position -> (min, max, unit)`` of
        the names whose declarations bound them (an absolute temperature), checked when
        first read."""
        self.t = np.asarray(t, dtype=float)
        self._names = list(names)
        self._index_cache: dict[str, int] | None = index if isinstance(index, dict) else None
        self._index_source = index if callable(index) else None
        self._offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(int)
        self._bounds: list[int] | None = None  # self._offsets as a list (first columns)
        self._data_or_fn = data
        self._columns: dict[int, np.ndarray] = {}
        self.parameters = dict(parameters)
        self.status = status
        self.message = message
        self.stats = stats  # SimulationStats of the run (acausal.simulate)
        if ranges:
            self._ranges = dict(ranges)

    #: the model's structural arrays of numbers (``world.g``, ``arm.r``: fixed at the
    #: build, never symbols), by name (:meth:`__getitem__` gives them as constant series)
    _structural: dict[str, np.ndarray] = {}

    @property
    def _index(self) -> dict[str, int]:
        if self._index_cache is None:
            source = getattr(self, "_index_source", None)  # (absent: a loaded result)
            self._index_cache = source() if source is not None else dict(
                zip(self._names, range(len(self._names)), strict=True))
        return self._index_cache

    #: reads that find their name by a scan of the names while the index is not formed
    _SCANS = 8
    _scans = 0

    def _position(self, name: str) -> int | None:
        """The position of ``name`` in the names (None if absent)."""
        if self._index_cache is None and self._scans < self._SCANS:
            self._scans += 1
            try:
                return self._names.index(name)
            except ValueError:
                return None
        return self._index.get(name)

    #: the table's transpose, ``(columns, nt)``, once the table is there, with the names'
    #: index and first columns (:meth:`_data`): the route of a read of every name
    _rows: np.ndarray | None = None
    #: the names (positions) whose values were found not finite (NaN or infinite), and
    #: those a read has warned about (class defaults: results saved before these existed)
    _nonfinite: frozenset[int] | set[int] = frozenset()
    _warned: frozenset[int] | set[int] = frozenset()
    #: the declared ranges of names not read yet (:meth:`_check_range`; never changed here)
    _ranges: dict[int, tuple[Any, Any, str]] = {}

    @property
    def _data(self) -> np.ndarray:
        if hasattr(self._data_or_fn, "matrix"):
            data = self._data_or_fn.matrix() if not self._blocks else self._by_blocks()
            # a value once read keeps its bits: the table's route (on a long grid, one
            # sparse product) agrees with the per-name route to rounding only
            for k, col in self._columns.items():
                data[:, self._offsets[k]:self._offsets[k + 1]] = col
            self._data_or_fn = data
            self._columns.clear()
            if self._blocks:
                self._blocks.clear()
        elif callable(self._data_or_fn):
            self._data_or_fn = self._data_or_fn()
        if self._rows is None and self._data_or_fn.__class__ is np.ndarray:
            self._index_cache = self._index  # (both formed before the route is open)
            self._find_nonfinite(self._data_or_fn)
            self._column_bounds()
            self._rows = self._data_or_fn.T
        return self._data_or_fn

    def _find_nonfinite(self, data: np.ndarray, first: int = 0) -> None:
        """Note the names with a value that is not finite (a NaN or an infinity the
        model's equations gave an output: ``sqrt`` of a negative number, a division by
        zero), once for the whole table (or a block of it, whose first column is
        ``first``): a column holding one has a sum that is not finite (one pass over the
        table, no array of its size)."""
        if not data.size:
            return
        suspects = np.flatnonzero(~np.isfinite(data.sum(axis=0)))
        if not len(suspects):
            return
        cols = [c for c in suspects.tolist() if not np.isfinite(data[:, c]).all()]  # (overflow)
        if cols:
            names = np.searchsorted(self._offsets, np.add(cols, first), side="right") - 1
            self._nonfinite = set(self._nonfinite) | set(names.tolist())

    #: blocks of consecutive names evaluated together (block -> its ``(columns, nt)``
    #: values), what the names of each read one by one cost, estimated, and how many names
    #: were read one by one (:meth:`_block_pays`; None: none yet)
    _blocks: dict[int, np.ndarray] | None = None
    _spent: dict[int, float] | None = None
    _alone = 0
    _per = 0  # (names per block, once known)

    def _names_per_block(self) -> int:
        if not self._per:
            self._per = max(16, _BLOCK_VALUES // max(len(self.t), 1))
        return self._per

    def _block_names(self, j: int) -> tuple[int, int]:
        """The names ``k0:k1`` of block ``j``."""
        per = self._names_per_block()
        return j * per, min((j + 1) * per, len(self._column_bounds()) - 1)

    def _block_pays(self, j: int) -> bool:
        """Whether the next read of a name of block ``j`` evaluates the block: after
        :data:`_MIN_PER_NAME` names read one by one (in any block), once the block's own
        cost :data:`_TABLE_SHARE` of it, if it fits in memory with the blocks held."""
        if self._alone < _MIN_PER_NAME:
            return False
        bounds = self._column_bounds()
        k0, k1 = self._block_names(j)
        entries = (bounds[k1] - bounds[k0]) * len(self.t)
        spent = self._spent.get(j, 0.0) if self._spent else 0.0
        held = sum(b.nbytes for b in self._blocks.values()) if self._blocks else 0
        return (spent >= _TABLE_SHARE * entries * grid_outputs.TABLE_SECONDS_PER_ENTRY
                and 8 * entries + held <= _table_max_bytes())

    def _by_blocks(self) -> np.ndarray:
        """The table, ``(nt, columns)`` (the transpose of a ``(columns, nt)`` array), from
        the blocks held and the others evaluated (the same values as the whole table's)."""
        bounds = self._column_bounds()
        table = np.empty((bounds[-1], len(self.t)))
        blocks = self._blocks or {}
        for j in range(-(-(len(bounds) - 1) // self._names_per_block())):
            k0, k1 = self._block_names(j)
            c0, c1 = bounds[k0], bounds[k1]
            block = blocks.pop(j, None)
            table[c0:c1] = block if block is not None else cast(Any, self._data_or_fn).rows(
                c0, c1).T
        return table.T

    def _block(self, j: int) -> np.ndarray:
        """Evaluate block ``j``, ``(columns, nt)`` (its names read one by one keep their
        bits, and are then held by the block alone)."""
        bounds = self._column_bounds()
        k0, k1 = self._block_names(j)
        c0 = bounds[k0]
        values = cast(Any, self._data_or_fn).rows(c0, bounds[k1])
        for k in [k for k in self._columns if k0 <= k < k1]:
            values[:, bounds[k] - c0:bounds[k + 1] - c0] = self._columns.pop(k)
        if k0 == 0 and k1 == len(bounds) - 1:  # (one block: the table, read as such)
            self._data_or_fn = values
            return self._data.T
        self._find_nonfinite(values, c0)
        if self._blocks is None:
            self._blocks = {}
        # (the evaluated array itself: a copy only for a result of several pieces)
        block = self._blocks[j] = np.ascontiguousarray(values.T)
        return block

    def _column_bounds(self) -> list[int]:
        """The first column of every name and the end (``_offsets`` as a list of ints:
        no tuple per name, which would wake the cyclic collector over the whole heap)."""
        bounds = getattr(self, "_bounds", None)  # (absent from results saved before it)
        if bounds is None or (bounds and type(bounds[0]) is not int):
            bounds = self._bounds = self._offsets.tolist()
        return bounds

    def _column(self, k: int) -> np.ndarray:
        """Output ``k`` over the grid, ``(nt, size)``: from the lazy evaluator (once per
        name) while the whole matrix has not been needed, else a slice of it."""
        lazy = self._data_or_fn
        if hasattr(lazy, "column"):
            col = self._columns.get(k)
            if col is None:
                j = k // self._names_per_block()
                block = self._blocks.get(j) if self._blocks else None
                if block is not None or self._block_pays(j):  # many: their block
                    if block is None:
                        block = self._block(j)
                    bounds = self._column_bounds()
                    c0 = bounds[self._block_names(j)[0]]
                    return block[bounds[k] - c0:bounds[k + 1] - c0].T
                col = self._columns[k] = lazy.column(k)
                if self._spent is None:
                    self._spent = {}
                self._spent[j] = self._spent.get(j, 0.0) + cast(Any, lazy).read_seconds(k)
                self._alone += 1
                if not np.isfinite(col).all():
                    self._nonfinite = set(self._nonfinite) | {k}
            return col
        return self._data[:, self._offsets[k]:self._offsets[k + 1]]

    @property
    def events(self) -> list[Any]:
        """The events of the run (:class:`acausal.hybrid.Event`: time, kind, the relations
        that changed, their components), in order."""
        return list(getattr(self.stats, "events", []) or [])

    def names(self) -> list[str]:
        """Every addressable name (variables, port quantities, parameters, the structural
        arrays of numbers)."""
        return sorted(set(self._names) | set(self.parameters) | set(self._structural))

    def __contains__(self, name: str) -> bool:
        return (self._position(name) is not None or name in self.parameters
                or name in self._structural)

    def __getitem__(self, name: str) -> np.ndarray:
        if not isinstance(name, str):
            raise TypeError(
                f"a result is indexed by the dotted name of a quantity, res['capacitor.v'], "
                f"not by {type(name).__name__} {name!r}; res.t is the time grid, "
                "res.names() lists the names, res.final(name) the last value and "
                "res.to_pandas() gives a table")
        rows = self._rows
        if rows is not None:
            # the table is there: a row of its transpose (reading every name of a large
            # model is hundreds of thousands of reads: this route is the least work)
            k = self._index_cache.get(name)  # type: ignore[union-attr]
            if k is not None:
                off = self._bounds
                a, b = off[k], off[k + 1]  # type: ignore[index]
                out = rows[a].copy() if b - a == 1 else rows[a:b].T.copy()
                if self._nonfinite or self._ranges:
                    self._check_read(k, name, out)
                return out
        blocks = self._blocks
        if blocks:
            # names in blocks: a row of one (reading every name of a large model, this
            # route is most of the reads)
            index = self._index_cache
            k = index.get(name) if index is not None else self._position(name)
            if k is not None:
                per = self._per
                block = blocks.get(k // per)
                if block is not None:
                    off = self._bounds
                    base = off[k - k % per]  # type: ignore[index]
                    a, b = off[k] - base, off[k + 1] - base  # type: ignore[index]
                    out = block[a].copy() if b - a == 1 else block[a:b].T.copy()
                    if self._nonfinite or self._ranges:
                        self._check_read(k, name, out)
                    return out
        else:
            k = self._position(name)
        if k is not None:
            col = self._column(k)
            out = col[:, 0].copy() if col.shape[1] == 1 else col.copy()
            if self._nonfinite or self._ranges:
                self._check_read(k, name, out)
            return out
        v = self.parameters.get(name)
        if v is not None:
            out = np.empty(self.t.shape)
            out.fill(v)
            return out
        a = self._structural.get(name)
        if a is not None:  # (a vector as a frame's: a row per time point)
            return np.array(np.broadcast_to(a.ravel(), (len(self.t), a.size)))
        raise KeyError(f"{name!r} is not a variable of the model"
                       + did_you_mean(name, self.names()))

    def _check_read(self, k: int, name: str, values: np.ndarray) -> None:
        """The warnings a read of ``name`` (its ``values``) may owe: values that are not
        finite, a declared range left."""
        if k in self._nonfinite:
            self._warn_nonfinite(k, name, values)
        if k in self._ranges:
            self._check_range(k, name, values)

    def _warn_nonfinite(self, k: int, name: str, values: np.ndarray) -> None:
        """Warn, once per name, that ``name`` has values that are not finite, and where
        the first is: the run's status covers the integration, not the outputs computed
        from its states afterwards."""
        if k in self._warned:
            return
        self._warned = set(self._warned) | {k}
        v = values.reshape(len(self.t), -1)
        bad = ~np.isfinite(v).all(axis=1)
        first = int(np.argmax(bad))
        value = v[first]
        shown = value[0] if value.size == 1 else value
        warnings.warn(
            f"{name} is not a finite number at {int(bad.sum())} of the {len(self.t)} output "
            f"points, first at t = {self.t[first]:g} s ({shown}): the model's equations give "
            "it no value there (the square root or logarithm of a negative number, a "
            "division by zero, an overflow) and the run's status does not cover it; check "
            "the inputs of the component that computes it", SolverWarning,
            stacklevel=user_stacklevel())

    def _check_range(self, k: int, name: str, values: np.ndarray) -> None:
        """Warn, on the first read of ``name``, if it leaves the range its declaration
        gives (``Variable(min=0)`` of an absolute temperature) by more than rounding."""
        lo, hi, unit = self._ranges.pop(k)
        v = values.reshape(len(self.t), -1)
        with np.errstate(invalid="ignore"):
            scale = max(1.0, abs(lo or 0.0), abs(hi or 0.0), float(np.nanmax(np.abs(v),
                                                                            initial=0.0)))
            slack = 1e-6 * scale
            out = np.zeros(len(self.t), dtype=bool)
            if lo is not None:
                out |= (v < lo - slack).any(axis=1)
            if hi is not None:
                out |= (v > hi + slack).any(axis=1)
        if not out.any():
            return
        first = int(np.argmax(out))
        u = f" {unit}" if unit and unit != "1" else ""
        rng = " and ".join(x for x in (f">= {lo:g}{u}" if lo is not None else "",
                                       f"<= {hi:g}{u}" if hi is not None else "") if x)
        worst = np.nanmin(v) if lo is not None and np.nanmin(v) < lo else np.nanmax(v)
        shown = f"{v[first][0]:g}" if v.shape[1] == 1 else str(v[first])
        warnings.warn(
            f"{name} leaves its declared range ({rng}) at t = {self.t[first]:g} s "
            f"({shown}{u}) and reaches {worst:g}{u}: the model drives it where its "
            "declaration says it cannot be (a heat flow draining a heat capacity below 0 K, "
            "a source out of range), and the result cannot stand behind it; check the "
            "sources and parameters that drive it", SolverWarning,
            stacklevel=user_stacklevel())

    def final(self, name: str) -> float | np.ndarray:
        """Value at the last time point."""
        v = self[name]
        return v[-1]

    def _names_of(self, names: Sequence[str] | str | None) -> list[str]:
        """The names a table holds: all (``None``), one (a string is one name) or those
        listed (an empty list: none, a table of the time only)."""
        return list(self._names) if names is None else name_list(names, "names")

    def to_pandas(self, names: Sequence[str] | str | None = None) -> Any:
        """A pandas DataFrame indexed by time (pandas is an optional dependency): every
        quantity (``names=None``), or those named (one string is one name; an empty list
        gives no columns)."""
        try:
            import pandas as pd
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise AcausalError("to_pandas() needs pandas: pip install pandas") from exc
        cols: dict[str, np.ndarray] = {}
        for n in self._names_of(names):
            v = self[n]
            if v.ndim == 1:
                cols[n] = v
            else:
                for k in range(v.shape[1]):
                    cols[f"{n}[{k}]"] = v[:, k]
        return pd.DataFrame(cols, index=pd.Index(self.t, name="time"))

    def to_csv(self, path: str, names: Sequence[str] | str | None = None) -> None:
        """Write a CSV table (time first) without needing pandas: every quantity
        (``names=None``), or those named (as :meth:`to_pandas`)."""
        cols = [self.t]
        header = ["time"]
        for n in self._names_of(names):
            v = self[n]
            if v.ndim == 1:
                cols.append(v)
                header.append(n)
            else:
                for k in range(v.shape[1]):
                    cols.append(v[:, k])
                    header.append(f"{n}[{k}]")
        np.savetxt(path, np.column_stack(cols), delimiter=",", header=",".join(header),
                   comments="")

    def plot(self, *names: str, file: str | None = None, title: str | None = None,
             ax: Any = None) -> Any:
        """Plot variables against time (matplotlib, optional dependency).

        Each argument is a name or a list of names sharing one subplot.
        With ``file`` the figure is saved (PNG, SVG, PDF by extension). ``ax``: draw into
        existing matplotlib axes instead of a new figure, one per argument (an ``Axes``
        for one argument, a sequence of them for several).
        """
        try:
            import matplotlib

            if file is not None:
                matplotlib.use("Agg", force=False)
            import matplotlib.pyplot as plt
        except ImportError as exc:  # pragma: no cover
            raise AcausalError("plot() needs matplotlib: pip install matplotlib") from exc
        if file is not None:
            check_figure_file(file)
        for n in names:
            if not (isinstance(n, str) or (isinstance(n, (list, tuple)) and n
                                           and all(isinstance(m, str) for m in n))):
                raise ArgumentError(
                    f"plot() takes variable names ('mass.v') or lists of names for one "
                    f"subplot (['mass.v', 'spring.f']), got {n!r:.60} ({type(n).__name__}); "
                    "res.names() lists the names")
        groups = [[n] if isinstance(n, str) else list(n) for n in names]
        if not groups:
            raise AcausalError("plot() needs at least one variable name")
        axes: Any
        if ax is None:
            fig, grid = plt.subplots(len(groups), 1, sharex=True,
                                     figsize=(8, 2.4 * len(groups) + 0.6), squeeze=False)
            axes = list(grid[:, 0])
        else:
            # (one Axes for several arguments drew the first alone and dropped the others)
            axes = list(np.ravel(np.asarray(ax, dtype=object))) \
                if isinstance(ax, (list, tuple, np.ndarray)) else [ax]
            if len(axes) != len(groups) or not all(hasattr(a, "plot") and
                                                   hasattr(a, "figure") for a in axes):
                raise ArgumentError(
                    f"plot(ax=...) takes one matplotlib Axes per subplot: {len(groups)} "
                    f"subplot(s) were asked for and {len(axes)} axes given; put the names "
                    "of one Axes in a list (res.plot(['a.v', 'b.v'], ax=ax)), or give a "
                    "list of axes")
            fig = axes[0].figure
        for a, group in zip(axes, groups, strict=False):
            units = [self.unit(n) for n in group]
            for n, u in zip(group, units, strict=True):
                v = self[n]
                tag = f" [{u}]" if u else ""
                if v.ndim == 1:
                    a.plot(self.t, v, label=n + tag)
                else:  # a vector quantity (a frame position): one line per component
                    for k in range(v.shape[1]):
                        a.plot(self.t, v[:, k], label=f"{n}[{k}]{tag}")
            if units[0] and len(set(units)) == 1:  # one unit: the axis's
                a.set_ylabel(f"[{units[0]}]")
            a.grid(True, alpha=0.3)
            a.legend(loc="best", fontsize=8)
        axes[-1].set_xlabel("time [s]")
        if title:
            fig.suptitle(title)
        fig.tight_layout()
        if file is not None:
            fig.savefig(file, dpi=110)
            plt.close(fig)
        return fig

    def animate(self, cm: Any, file: str | None = None, **kwargs: Any) -> Any:
        """Animate the 3D mechanism of the compiled model ``cm`` along this result (GIF,
        MP4, or a PNG snapshot; see :func:`acausal.animation.animate`)."""
        from .animation import animate

        return animate(self, cm, file, **kwargs)

    #: the unit of a name (:meth:`acausal.compiler.CompiledModel.unit`, weakly held; in a
    #: loaded result, the units saved with it: :class:`acausal.persist.SavedUnits`), or
    #: None (a result made otherwise: its names' units are not known)
    _unit_of: Any = None

    def unit(self, name: str) -> str | None:
        """The unit of ``name`` (``"V"``; ``""`` for a dimensionless quantity), or None
        where it is not known (a result not made by ``simulate``)."""
        if name not in self:
            raise KeyError(f"{name!r} is not a variable of the model"
                           + did_you_mean(name, self.names()))
        of = self._unit_of() if self._unit_of is not None else None
        return of(name) if of is not None else None

    def __getstate__(self) -> dict[str, Any]:
        """Pickle support: outputs evaluated first (:mod:`acausal.persist`)."""
        from .persist import result_state

        return result_state(self)

    def save(self, path: str) -> Any:
        """Write the result to ``path``; read it back with :func:`acausal.load`."""
        from .persist import save

        return save(self, path)

    def __repr__(self) -> str:
        return (f"<Result {self.status}: t = {self.t[0]:g}..{self.t[-1]:g} s, "
                f"{len(self.t)} points, {len(self._names)} variables>")


def check_figure_file(file: Any, make_folder: bool = True) -> None:
    """A figure file's type is its extension: one matplotlib writes (png, svg, pdf, ...),
    or none (matplotlib's default, PNG); its folder is made if missing (as ``save`` and
    the FMU export do; ``make_folder=False``: the caller makes it), and must not be a
    file. Checked before the work that makes the figure."""
    from pathlib import Path

    try:
        from matplotlib.backend_bases import FigureCanvasBase
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise AcausalError("plot() needs matplotlib: pip install matplotlib") from exc

    ext = Path(str(file)).suffix.lower().lstrip(".")
    kinds = FigureCanvasBase.get_supported_filetypes()
    if ext and ext not in kinds:
        raise AcausalError(
            f"cannot write a figure to {str(file)!r}: {ext!r} is not a figure format; "
            f"the extension chooses one of {', '.join(sorted(kinds))}")
    folder = Path(str(file)).expanduser().parent
    if folder.exists() and not folder.is_dir():
        raise AcausalError(f"cannot write a figure to {str(file)!r}: {str(folder)!r} is a "
                           "file, not a folder")
    if make_folder:
        folder.mkdir(parents=True, exist_ok=True)
