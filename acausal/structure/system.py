"""The equation system the structural passes work on.

Variables and equations are kept with their derivative links, as Pantelides' algorithm
needs them: ``var_der[j]`` is the index of the derivative of variable ``j`` (``-1`` if it has
none), ``var_int[j]`` the variable it is the derivative of; ``eq_der[i]`` the equation
obtained by differentiating equation ``i``, ``eq_int[i]`` the equation it was obtained from.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping, MutableSequence, Sequence
from dataclasses import field
from operator import attrgetter
from typing import Any

import casadi as cs
import numpy as np

from ..csr import CSR, offsets, spread, unique
from ..fastsx import stack
from ..flatten import FlatEquation, FlatSystem
from ..records import record
from ..symbols import (
    FlatParameter,
    FlatVariable,
    LazyColumn,
    as_shared,
    grow_ints,
    shared_ints,
)

__all__ = ["EquationSystem", "Rows", "coordinate_groups", "flat_columns", "hidden_coordinates",
           "rows_of"]

_ZERO = cs.SX(0)


class Rows(MutableSequence[Sequence[int]]):
    """:attr:`EquationSystem.incidence` kept as compressed rows: ``col[ptr[i]:ptr[i +
    1]]`` is row ``i`` (sorted unknowns) for the first ``len(ptr) - 1`` rows, rows
    appended or replaced since kept apart. A row read is a tuple. The passes read the
    whole incidence as arrays (:meth:`arrays`, :meth:`EquationSystem.incidence_matrix`):
    a large model's rows are never made one by one (a million rows of a hundred thousand
    masses: half a second to make as tuples, and again to read back, and 60 MB).
    Copies share the arrays; saved (pickled) as the list of its rows."""

    __slots__ = ("_ptr", "_col", "_set", "_more", "_whole")

    def __init__(self, ptr: np.ndarray, col: np.ndarray) -> None:
        self._ptr, self._col = ptr, col
        self._set: dict[int, Sequence[int]] = {}  # rows of the arrays replaced
        self._more: list[Sequence[int]] = []  # rows appended
        self._whole: tuple[np.ndarray, np.ndarray] | None = None  # arrays() made

    def _n(self) -> int:
        return len(self._ptr) - 1

    def __len__(self) -> int:
        return self._n() + len(self._more)

    def _row(self, i: int) -> Sequence[int]:
        got = self._set.get(i)
        if got is not None:
            return got
        return tuple(self._col[self._ptr[i]:self._ptr[i + 1]].tolist())

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        n = self._n()
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError("incidence row out of range")
        return self._row(i) if i < n else self._more[i - n]

    def __setitem__(self, i: Any, row: Any) -> None:
        if isinstance(i, slice):
            raise TypeError("the rows of an incidence are set one by one")
        n = self._n()
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError("incidence row out of range")
        if i < n:
            self._set[i] = row
        else:
            self._more[i - n] = row
        self._whole = None

    def __delitem__(self, i: Any) -> None:
        raise TypeError("the rows of an incidence are not deleted")

    def insert(self, i: int, row: Sequence[int]) -> None:
        if i < len(self):
            raise TypeError("rows are appended to an incidence, not inserted")
        self.append(row)

    def append(self, row: Sequence[int]) -> None:
        self._more.append(row)
        self._whole = None

    def extend(self, rows: Any) -> None:
        self._more.extend(rows)
        self._whole = None

    def extend_compressed(self, ptr: np.ndarray, col: np.ndarray) -> None:
        """Append the rows ``col[ptr[i]:ptr[i + 1]]`` (sorted unknowns)."""
        if self._more:  # (after rows appended one by one: appended as tuples)
            cols = tuple(np.asarray(col).tolist())
            self.extend(map(cols.__getitem__, map(slice, ptr[:-1].tolist(),
                                                  ptr[1:].tolist())))
            return
        ptr = np.asarray(ptr, dtype=np.int64)
        self._ptr = np.concatenate((self._ptr[:-1], self._ptr[-1] + ptr))
        self._col = np.concatenate((self._col, np.asarray(col, dtype=np.int64)))
        self._whole = None

    def __iter__(self) -> Iterator[Sequence[int]]:
        cols = tuple(self._col.tolist())
        rows: list[Sequence[int]] = list(map(cols.__getitem__, map(
            slice, self._ptr[:-1].tolist(), self._ptr[1:].tolist())))
        for i, row in self._set.items():
            rows[i] = row
        return itertools.chain(rows, self._more)

    def copy(self) -> Rows:
        """A copy (the arrays shared: never changed in place)."""
        out = Rows(self._ptr, self._col)
        out._set = dict(self._set)
        out._more = list(self._more)
        out._whole = self._whole
        return out

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """Every row as compressed rows ``(ptr, col)`` (made once until a row changes)."""
        got = self._whole
        if got is not None:
            return got
        if not self._set and not self._more:
            got = (self._ptr, self._col)
        else:
            lens = np.diff(self._ptr)
            cols = self._col
            if self._set:
                at = np.fromiter(self._set, dtype=np.int64, count=len(self._set))
                keep = np.ones(len(cols), dtype=bool)
                keep[spread(self._ptr[at], lens[at])] = False
                lens = lens.copy()
                extra = [self._set[i] for i in at.tolist()]
                lens[at] = list(map(len, extra))
                # (a replaced row's entries go where its row is: ordered by row)
                rowid = np.concatenate((np.repeat(np.arange(len(lens)), np.diff(self._ptr))[keep],
                                        np.repeat(at, lens[at])))
                vals = np.concatenate((cols[keep], np.fromiter(
                    itertools.chain.from_iterable(extra), dtype=np.int64,
                    count=int(lens[at].sum()))))
                cols = vals[np.argsort(rowid, kind="stable")]
            more = self._more
            lens = np.concatenate((lens, np.fromiter(map(len, more), dtype=np.int64,
                                                      count=len(more))))
            cols = np.concatenate((cols, np.fromiter(itertools.chain.from_iterable(more),
                                                     dtype=np.int64)))
            got = (offsets(lens), cols)
        self._whole = got
        return got

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (Rows, list)):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(list(self))

    def __reduce__(self) -> tuple[Any, ...]:
        return (list, (list(self),))


@record
class EquationSystem:
    """Equations and unknowns with derivative links (mutable during index reduction)."""

    t: cs.SX
    variables: list[FlatVariable]
    equations: list[FlatEquation]
    parameters: list[FlatParameter]
    var_der: list[int] = field(default_factory=list)
    var_int: list[int] = field(default_factory=list)
    eq_der: list[int] = field(default_factory=list)
    eq_int: list[int] = field(default_factory=list)
    #: per equation, its unknowns (sorted indices; a tuple where formed in bulk: 40 bytes
    #: less than a list of two or three, for each of a large model's million rows); kept
    #: as arrays where formed in bulk (:class:`Rows`)
    incidence: MutableSequence[Sequence[int]] = field(default_factory=list)
    name_index: dict[str, int] = field(default_factory=dict)
    #: equations whose incidence leaves out state coordinates of a domain pass
    #: (:class:`~acausal.domain_passes.StateCoordinates`): ``(rows, coordinate columns)``
    #: per group; each row may depend on any of its group's columns (see :meth:`for_states`)
    implicit: list[tuple[list[int], list[int]]] = field(default_factory=list)
    #: the symbols of ``variables`` / ``parameters`` stacked in one column, with the count
    #: they hold (both lists only ever grow at the end: index reduction appends
    #: derivatives); shared by copies. See :meth:`symbols`.
    _stacked: dict[str, tuple[int, cs.SX]] = field(default_factory=dict, repr=False,
                                                   compare=False)
    #: the last :meth:`for_states` result, by its states and the system's size
    #: (causalisation and the block solution both ask for it)
    _for_states: tuple[Any, EquationSystem] | None = field(default=None, repr=False,
                                                           compare=False)

    @classmethod
    def from_lists(
        cls,
        t: cs.SX,
        variables: list[FlatVariable],
        equations: list[FlatEquation],
        parameters: list[FlatParameter],
        residuals: cs.SX | None = None,
        incidence: list[Sequence[int]] | tuple[np.ndarray, np.ndarray] | None = None,
        symbols: cs.SX | None = None,
        pool: list[int] | None = None,
        parameter_symbols: cs.SX | None = None,
        marked: bool | None = None,
    ) -> EquationSystem:
        """The system of these lists; ``residuals``, if given, is the column of the
        equations' residuals already stacked, ``incidence`` each equation's unknowns
        (sorted indices into ``variables``; or compressed rows ``(ptr, col)``) and
        ``symbols`` the column of the unknowns' symbols (the alias pass has them).
        ``pool``, if given, is the build's shared integers
        (:func:`~acausal.symbols.shared_ints`), kept with the system;
        ``parameter_symbols`` the column of the parameters' symbols (the flatten pass
        forms it), taken where it holds every parameter; ``marked``, if known, whether
        some equation is marked with state coordinates (the caller looked: a large
        model's equations are not looked at twice)."""
        incidence_in = incidence
        n = len(variables)
        shared = shared_ints(n) if pool is None else pool
        pool = shared[:n] if len(shared) != n else shared
        idx = dict(zip(map(attrgetter("name"), variables), pool, strict=True))
        var_der = [-1] * n
        var_int = [-1] * n
        for k, d in zip(pool, map(attrgetter("der_of"), variables), strict=True):
            if d is not None:
                var_int[k] = d
                var_der[d] = k
        rows: MutableSequence[Sequence[int]] | None
        if isinstance(incidence, tuple):
            bounds, at = incidence
            rows = Rows(np.asarray(bounds, dtype=np.int64), np.asarray(at, dtype=np.int64))
        else:
            rows = incidence
        sys = cls(t, variables, equations, parameters, var_der, var_int,
                  [-1] * len(equations), [-1] * len(equations), [], idx)
        sys.__dict__["_ints"] = shared
        if symbols is not None:
            sys._stacked["variables"] = (len(variables), symbols)
        if parameter_symbols is not None and parameter_symbols.numel() == len(parameters):
            sys._stacked["parameters"] = (len(parameters), parameter_symbols)
        if (equations and variables and rows is not None
                and not (coordinate_groups(equations)[1] if marked is None else marked)):
            # (the common case: every row's incidence given, none marked)
            sys.incidence = rows if rows is not incidence_in else list(rows)
            if residuals is not None:
                sys._stacked["equations"] = (len(equations), residuals)
            return sys
        if isinstance(rows, Rows):
            rows = list(rows)
        sys.incidence = [() for _ in equations]
        if equations and variables:
            if residuals is not None:
                sys._stacked["equations"] = (len(equations), residuals)
            explicit = _implicit_groups(sys)
            if rows is not None and len(explicit) == len(equations):
                sys.incidence = list(rows)
            elif explicit and rows is not None:
                for i in explicit:
                    sys.incidence[i] = rows[i]
            elif explicit:
                F = (residuals if residuals is not None and len(explicit) == len(equations)
                     else cs.vertcat(*[equations[i].res for i in explicit]))
                ptr, col = cs.jacobian_sparsity(F, sys.symbols()).get_crs()
                at_col = tuple(col)
                # (the column indices of a row of a compressed row storage are sorted)
                for r, i in enumerate(explicit):
                    sys.incidence[i] = at_col[ptr[r]: ptr[r + 1]]
        return sys

    def copy(self) -> EquationSystem:
        """A copy that index reduction can extend without touching this one (a variable
        is copied when its derivative link changes, :meth:`add_derivative_variable`;
        equations and incidence rows are only ever appended, never modified)."""
        out = EquationSystem(
            self.t, list(self.variables), list(self.equations),
            list(self.parameters), list(self.var_der), list(self.var_int),
            list(self.eq_der), list(self.eq_int),
            inc.copy() if isinstance(inc := self.incidence, Rows) else list(inc),
            self.name_index,
            list(self.implicit), dict(self._stacked))
        # (the name index shared until a derivative variable is added: most index
        # reductions add none, and a large model's index has a million names; the flag
        # is saved with either, which may share the index in a saved model too)
        self.__dict__["_names_shared"] = out.__dict__["_names_shared"] = True
        if "_ints" in self.__dict__:
            out.__dict__["_ints"] = self.__dict__["_ints"]
        return out

    def __getstate__(self) -> dict[str, Any]:
        # (a saved system without the pool of shared integers: its objects are saved
        # where used, and one pool is made again when needed)
        state = dict(self.__dict__)
        state.pop("_ints", None)
        return state

    def ints(self, n: int) -> list[int]:
        """The integers ``0, 1, ...`` (at least ``n``) as the build's shared objects
        (:func:`~acausal.symbols.shared_ints`), kept with this system: the index lists
        of the structure passes refer to these instead of a fresh object per entry."""
        pool = self.__dict__.get("_ints")
        if pool is None:
            pool = self.__dict__["_ints"] = shared_ints(n)
        return grow_ints(pool, n)

    def as_ints(self, a: np.ndarray) -> list[int]:
        """The integer array ``a`` (indices, or -1 for none) as a list of :meth:`ints`
        objects (``a.tolist()``, which would make a new object per entry, in about the
        same time)."""
        return as_shared(self.ints(0), a)

    def symbols(self) -> cs.SX:
        """The unknowns' symbols stacked in one column (``vertcat`` of every
        ``variables[j].sym``), formed once and extended when variables are appended:
        stacking tens of thousands of scalar symbols from Python costs a call per
        symbol."""
        return self._stack("variables", self.variables)

    def parameter_symbols(self) -> cs.SX:
        """The parameters' symbols stacked in one column (see :meth:`symbols`)."""
        return self._stack("parameters", self.parameters)

    def residuals(self) -> cs.SX:
        """The equations' residuals stacked in one column (see :meth:`symbols`). Index
        reduction appends derived equations whose residuals are set at its end
        (:meth:`differentiate_symbolically`): ask after it, not during it."""
        return self._stack("equations", self.equations, "res")

    def _stack(self, key: str, items: list[FlatVariable] | list[FlatParameter]
               | list[FlatEquation], attr: str = "sym") -> cs.SX:
        n = len(items)
        got = self._stacked.get(key)
        if got is not None and got[0] == n:
            return got[1]
        if got is not None and got[0] < n:
            col = stack(got[1], cs.vertcat(*[getattr(it, attr) for it in items[got[0]:]]))
        else:
            col = cs.vertcat(*[getattr(it, attr) for it in items]) if items else cs.SX(0, 1)
        self._stacked[key] = (n, col)
        return col

    @property
    def n_vars(self) -> int:
        return len(self.variables)

    @property
    def n_eqs(self) -> int:
        return len(self.equations)

    def incidence_matrix(self, rows: Sequence[int] | np.ndarray | None = None,
                         cols: Sequence[int] | np.ndarray | None = None,
                         chains: bool = False) -> CSR:
        """0/1 incidence restricted to the given equations and variables (vectorised:
        the recursive equations of motion of a long chain have dense rows; the rows are
        read in C, ``map(len, ...)``, as the passes after index reduction ask for the
        incidence of some 70 000 equations several times).

        ``chains``: a variable and its derivatives count as one, its highest derivative
        (``x``, ``der(x)`` and ``der(der(x))`` are one unknown of the equations that
        contain any of them: the graph whose perfect matching a DAE needs before index
        reduction can make it solvable)."""
        inc = self.incidence
        if isinstance(inc, Rows):  # (arrays: no row made)
            ptr, flat = inc.arrays()
            if rows is None:
                lens = np.diff(ptr)
            else:
                at = np.asarray(rows, dtype=np.int64)
                lens = ptr[at + 1] - ptr[at]
                flat = flat[spread(ptr[at], lens)]
            n_rows = len(lens)
        else:
            if rows is None:
                lists: Sequence[Sequence[int]] = inc
            else:
                lists = list(map(inc.__getitem__, rows.tolist()
                                 if isinstance(rows, np.ndarray) else rows))
            n_rows = len(lists)
            lens = np.fromiter(map(len, lists), dtype=np.int64, count=n_rows)
            flat = np.fromiter(itertools.chain.from_iterable(lists), dtype=np.int64,
                               count=int(lens.sum()))
        r = np.repeat(np.arange(n_rows, dtype=np.int64), lens)
        if chains and flat.size:
            top = np.arange(self.n_vars, dtype=np.int64)
            der = np.asarray(self.var_der, dtype=np.int64)
            while True:  # (one step per derivative order)
                up = der[top]
                if not (up >= 0).any():
                    break
                top = np.where(up >= 0, up, top)
            pairs = unique(r * self.n_vars + top[flat])
            r, flat = pairs // self.n_vars, pairs % self.n_vars
        if cols is None:
            c, ncol = flat, self.n_vars
        else:
            cpos = np.full(self.n_vars, -1, dtype=np.int64)
            cpos[np.asarray(cols, dtype=np.int64)] = np.arange(len(cols), dtype=np.int64)
            c = cpos[flat] if flat.size else flat
            keep = c >= 0
            r, c, ncol = r[keep], c[keep], len(cols)
        return CSR.from_coo(r, c, None, (n_rows, ncol))

    def for_states(self, states: list[int]) -> EquationSystem:
        """This system, or, when some implicit coordinates (:attr:`implicit`) are not
        among ``states`` (dummy derivatives made them algebraic), a copy whose incidence
        lists them where the equations depend on them."""
        if not self.implicit:
            return self
        key = (tuple(states), self.n_eqs, self.n_vars)
        if self._for_states is not None and self._for_states[0] == key:
            return self._for_states[1]
        state_set = set(states)
        missing = [(rows, [j for j in cols if j not in state_set])
                   for rows, cols in self.implicit]
        missing = [(rows, cols) for rows, cols in missing if cols]
        if not missing:
            return self
        out = self.copy()
        for rows, cols in missing:
            for i, extra in zip(rows, self._dependence(rows, cols), strict=True):
                out.incidence[i] = sorted(set(out.incidence[i]).union(extra))
        self._for_states = (key, out)
        return out

    def _dependence(self, rows: list[int], cols: list[int]) -> list[list[int]]:
        """The columns among ``cols`` each equation of ``rows`` depends on (CasADi)."""
        F = cs.vertcat(*[self.equations[i].res for i in rows])
        ptr, col = cs.jacobian_sparsity(F, self.symbols()[cols]).get_crs()
        return [[cols[c] for c in col[ptr[r]: ptr[r + 1]]] for r in range(len(rows))]

    def add_derivative_variable(self, j: int) -> int:
        """Create the symbol ``der(v_j)`` and return its index."""
        # copied before its link changes: the variable may be shared with the system this
        # one was copied from
        v = self.variables[j] = self.variables[j].copy()
        sym = cs.SX.sym(f"der({v.name})")
        k = len(self.variables)
        self.variables.append(
            FlatVariable(sym.name(), sym, unit=f"{v.unit}/s" if v.unit else "", origin=v.origin,
                         der_of=j)
        )
        v.der = k
        self.var_der[j] = k
        self.var_der.append(-1)
        self.var_int.append(j)
        if self.__dict__.pop("_names_shared", False):  # (see copy)
            self.name_index = dict(self.name_index)
        self.name_index[sym.name()] = k
        return k

    def add_differentiated_equation(self, i: int) -> int:
        """Append ``d/dt`` of equation ``i`` (structure only; symbolic form set later)."""
        for rows, cols in self.implicit:  # a differentiated equation lists all it has
            if i in rows:
                self.incidence[i] = sorted(set(self.incidence[i]).union(
                    self._dependence([i], cols)[0]))
        inc = set(self.incidence[i])
        for j in list(inc):
            d = self.var_der[j]
            if d < 0:
                d = self.add_derivative_variable(j)
            inc.add(d)
        k = len(self.equations)
        e = self.equations[i]
        # (the residual is set by differentiate_symbolically; the label is rendered lazily)
        self.equations.append(FlatEquation(_ZERO, e.origin, derived_from=e))
        self.incidence.append(sorted(inc))
        self.eq_der[i] = k
        self.eq_der.append(-1)
        self.eq_int.append(i)
        return k

    def differentiate_symbolically(self, ks: list[int]) -> None:
        """Set the residuals of derived equations ``ks`` by the chain rule (CasADi AD).

        Done generation by generation (a second derivative needs the first), each
        generation with one vectorised directional derivative (:meth:`derivatives`).
        """
        pending = set(ks)
        while pending:
            ready = sorted(k for k in pending if self.eq_int[k] not in pending)
            pending.difference_update(ready)
            parents = [self.eq_int[k] for k in ready]
            vs = sorted({j for i in parents for j in self.incidence[i]})
            rows, ptr, col = self.derivatives(parents, vs)
            for r, k in enumerate(ready):
                e = self.equations[k]
                e._res, e._row = rows, r
                self.incidence[k] = col[ptr[r]: ptr[r + 1]]  # (sorted: see from_lists)
            self.extend_stacked(ready, rows.column())

    def derivatives(self, parents: list[int], vs: list[int], cols: list[int] | None = None
                    ) -> tuple[LazyColumn, list[int], list[int]]:
        """The time derivatives of the residuals of equations ``parents`` (one
        generation: every unknown they hold, ``vs`` among them, has a derivative), as rows
        of one dense column (each residual made when read, see FlatEquation), and their
        sparsity as compressed rows ``(ptr, col)`` on the unknowns ``cols`` (positions in
        ``cols``; all unknowns if None)."""
        got = self._stacked.get("equations")  # (rows of the stacked residuals)
        F = (got[1][parents] if got is not None and max(parents) < got[0]
             else cs.vertcat(*[self.equations[i].res for i in parents]))
        timed = cs.depends_on(F, self.t)
        syms = self.symbols()
        if vs:
            d = cs.jtimes(F, syms[vs], syms[[self.var_der[j] for j in vs]])
            if timed:
                d = cs.jacobian(F, self.t) + d
            # (else zeros + d would be d itself, each 0 + d_k being d_k: not formed)
        else:
            d = cs.jacobian(F, self.t) if timed else cs.SX.zeros(F.shape)
        ptr, col = cs.jacobian_sparsity(d, syms if cols is None else syms[cols]).get_crs()
        return LazyColumn(cs.densify(d)), ptr, col

    def extend_stacked(self, ks: list[int], rows: cs.SX) -> None:
        """The stacked residuals extended by ``rows``, the residuals of equations ``ks``,
        when these are the next equations in order (derived equations come last)."""
        got = self._stacked.get("equations")
        if got is not None and ks == list(range(got[0], got[0] + len(ks))):
            self._stacked["equations"] = (got[0] + len(ks), stack(got[1], rows))

    def level(self, i: int) -> int:
        """How many times equation ``i`` was differentiated."""
        n = 0
        while self.eq_int[i] >= 0:
            i = self.eq_int[i]
            n += 1
        return n


def _implicit_groups(sys: EquationSystem) -> list[int]:
    """Fill ``sys.implicit`` and the incidence of the equations marked with state
    coordinates (:class:`~acausal.domain_passes.StateCoordinates`): their incidence on the
    other unknowns only, formed per group by one sparsity computation with the coordinates
    left out (the recursive equations of motion of an N-link chain would have N^2 entries
    on them). A coordinate without a derivative is a highest derivative and stays
    explicit; an equation with no other unknown gets its full incidence. Returns the rows
    left to the caller (not marked)."""
    explicit, groups = coordinate_groups(sys.equations)
    if not groups:
        return explicit
    idx, var_der = sys.name_index, sys.var_der
    for coords, rows in groups:
        hidden = hidden_coordinates(coords, idx, lambda j: var_der[j] >= 0)
        hidden_set = set(hidden)
        shown = [j for j in range(sys.n_vars) if j not in hidden_set]
        kept = []
        for i, inc in zip(rows, sys._dependence(rows, shown), strict=True):
            if inc:
                sys.incidence[i] = sorted(inc)
                kept.append(i)
            else:
                explicit.append(i)
        if kept and hidden:
            sys.implicit.append((kept, hidden))
        else:
            explicit += kept
    return sorted(explicit)


def coordinate_groups(equations: list[FlatEquation]
                      ) -> tuple[list[int], list[tuple[Any, list[int]]]]:
    """The rows of ``equations`` marked with no state coordinates, and the marked ones
    grouped by their :class:`~acausal.domain_passes.StateCoordinates` (in the order of
    each group's first row)."""
    # (FlatEquation.coordinates, without its property)
    coordinates = list(map(attrgetter("_more.coordinates"), equations))
    if coordinates.count(None) == len(coordinates):  # (the common case: none marked)
        return list(range(len(coordinates))), []
    plain: list[int] = []
    groups: dict[int, tuple[Any, list[int]]] = {}
    for i, c in enumerate(coordinates):
        if c is None:
            plain.append(i)
        else:
            groups.setdefault(id(c), (c, []))[1].append(i)
    return plain, list(groups.values())


def hidden_coordinates(coords: Any, index: Mapping[str, int],
                       has_derivative: Callable[[int], bool]) -> list[int]:
    """The unknowns among a group's state coordinates that have a derivative (sorted
    indices): those left out of the group's incidence."""
    return sorted(index[n] for n in coords.names
                  if n in index and has_derivative(index[n]))


def rows_of(col: cs.SX, rows: list[int]) -> cs.SX:
    """Rows ``rows`` of a column, as a column: ``col[rows]``, but ``col[rows, 0]`` for a
    column of one row (which a list alone would index as a row). (The list alone: CasADi
    takes rows by one index in half the time of two, 30 ms less for 300 000 rows.)"""
    return col[rows] if col.size1() != 1 else col[rows, 0]


def flat_columns(fs: FlatSystem) -> tuple[cs.SX, cs.SX]:
    """The residuals of ``fs.equations`` and the symbols of ``fs.variables``, each stacked
    in one column, formed once per flat system: the relations and the alias passes both
    need them, and stacking a hundred thousand scalars from Python costs a call each.
    The flat system's own columns (``res_column``, ``var_column``: the flatten pass forms
    them with the symbols) are taken where present and of the right length.
    (Kept with the flat system while its two lists are the same objects of the same
    length: a pass that changes equations makes a new flat system.)"""
    eqs, vs = fs.equations, fs.variables
    got = fs.__dict__.get("_columns")
    if got is not None and got[0] is eqs and got[1] is vs and got[2] == (len(eqs), len(vs)):
        return got[3], got[4]
    # the flatten pass may have stacked them already (in equation / variable order)
    R = getattr(fs, "res_column", None)
    X = getattr(fs, "var_column", None)
    if R is None or R.numel() != len(eqs):
        R = cs.vertcat(*[e.res for e in eqs]) if eqs else cs.SX(0, 1)
    if X is None or X.numel() != len(vs):
        X = cs.vertcat(*[v.sym for v in vs]) if vs else cs.SX(0, 1)
    fs.__dict__["_columns"] = (eqs, vs, (len(eqs), len(vs)), R, X)
    return R, X
