"""Flatten: from the model tree and its linear graph to one flat equation system.

Unknowns are the component variables plus the graph's primary unknowns (across variables of
tree branches, through variables of cotree chords). Every port variable is substituted
exactly by the topological relations: a port's across variable is its vertex potential (a
signed sum of tree across variables along the tree path from the datum); a port's through
variable is the signed sum of the through variables of the component's edges at that port,
where tree through variables come from the cutset equations ``TV_t = -D TV_c``. The circuit
equations are satisfied by construction (``AV_c = D^T AV_t``).

Ports of non-graph domains (3D frames, ...) are bound by their registered domain pass
(:mod:`acausal.domain_passes`), which adds its own unknowns and equations to the same
:class:`~acausal.symbols.SymbolTable`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import field
from itertools import chain, compress, repeat
from operator import attrgetter, is_not
from typing import TYPE_CHECKING, Any, NamedTuple

import casadi as cs
import numpy as np

from . import symbols, templates
from .component import Component, Model, bind_ports, collect_equations, has_parameter_check
from .discrete import Assign, Reinit, Sample, When
from .domain_passes import DomainPass, domain_pass_class
from .errors import AcausalError, ModelDefinitionError
from .fastsx import blank, even_step, named_columns, put, stack, take
from .graph import LinearGraph
from .graph_columns import GraphColumns, OutputTable, component_paths, unknown_names
from .records import record
from .state import need
from .structure.template_incidence import template_incidence
from .symbols import (
    FlatParameter,
    FlatVariable,
    LazyColumn,
    LazyRow,
    SymbolTable,
    grow_ints,
    shared_ints,
)
from .templates import Group, NotTemplate, Template, group_keys

if TYPE_CHECKING:
    from .state import CompileState

__all__ = ["FlatVariable", "FlatEquation", "FlatParameter", "FlatSystem", "flatten",
           "flatten_pass"]


class _EqMore(NamedTuple):
    """The fields of a :class:`FlatEquation` that are almost always their default, in
    one slot (an equation of 5 slots is 80 bytes, one of 7 96; a large model has over a
    million): the default shared by all that have it."""

    label: str
    derived_from: FlatEquation | None
    coordinates: Any


_NO_MORE = _EqMore("", None, None)


def _more_field(name: str) -> Any:
    """The attribute ``name`` of an equation's :class:`_EqMore` (read in C); set, a new
    one."""
    def put(eq: FlatEquation, value: Any) -> None:
        eq._more = eq._more._replace(**{name: value})

    return property(attrgetter(f"_more.{name}"), put)


class FlatEquation:
    """A scalar residual equation ``res == 0`` and where it comes from.

    ``label`` is the equation as written (rendered lazily from ``source``, the original
    ``lhs == rhs`` expression, because printing CasADi expressions is costly).
    ``derived_from`` is the equation this one is the time derivative of (index reduction;
    its label ``d/dt[...]`` is rendered from it on first use); ``coordinates`` the state
    coordinates of a domain pass the equation may depend on densely, left out of its
    structural incidence while they are states
    (:class:`~acausal.domain_passes.StateCoordinates`).

    The residual and the source of an equation of a template group are row ``row`` of
    the group's columns (:class:`~acausal.symbols.LazyColumn`), made when first read.
    """

    __slots__ = ("_res", "origin", "_source", "_row", "_more")

    def __init__(self, res: Any, origin: str, label: str = "", source: Any = None,
                 derived_from: FlatEquation | None = None, coordinates: Any = None,
                 row: int = -1) -> None:
        self._res = res  # cs.SX (None until the flatten pass forms lhs - rhs) or a LazyColumn
        self.origin = origin
        self._source = source
        self._row = row
        self._more = (_NO_MORE if not label and derived_from is None and coordinates is None
                      else _EqMore(label, derived_from, coordinates))

    res = LazyRow()
    source = LazyRow()
    label = _more_field("label")
    derived_from = _more_field("derived_from")
    coordinates = _more_field("coordinates")

    def __reduce__(self) -> tuple[Any, ...]:  # (as FlatVariable's)
        label, derived_from, coordinates = self._more
        return (FlatEquation, (self._res, self.origin, label, self._source, derived_from,
                               coordinates, self._row))

    def rewritten(self, res: Any) -> FlatEquation:
        """This equation with the residual ``res`` (substituted, relations frozen): the
        same origin, label, source and coordinates."""
        eq = FlatEquation(res, self.origin, "", self._source, None, None, self._row)
        more = self._more  # (shared as it is, unless it names an equation derived from)
        eq._more = more if more.derived_from is None else more._replace(derived_from=None)
        return eq

    def __repr__(self) -> str:
        return f"FlatEquation({self.text()!r}, origin={self.origin!r})"

    def text(self) -> str:
        """The equation as written, ``lhs == rhs``."""
        if not self.label and self.derived_from is not None:
            self.label = f"d/dt[{self.derived_from.text()}]"
        if not self.label and self.source is not None:
            e = self.source
            self.label = f"{e.dep(0)} == {e.dep(1)}" if e.is_op(cs.OP_EQ) else f"0 == {e}"
        return self.label or f"0 == {self.res}"

    def describe(self, width: int = 110) -> str:
        s = self.text()
        if len(s) > width:
            s = s[: width - 3] + "..."
        return f"{s}   [{self.origin}]"



@record
class FlatSystem:
    """The flat equation system of a model (output of the flatten pass)."""

    t: cs.SX
    variables: list[FlatVariable]
    equations: list[FlatEquation]
    parameters: list[FlatParameter]
    #: named outputs: every variable, port and edge quantity by dotted name (the graph's
    #: as rows of one column, :class:`~acausal.graph_columns.OutputTable`; a dict after
    #: the relations pass rewrote them)
    outputs: Mapping[str, Any]
    graph: LinearGraph
    initial_equations: list[FlatEquation] = field(default_factory=list)
    domain_passes: dict[str, DomainPass] = field(default_factory=dict)
    relations: list[Any] = field(default_factory=list)  # frozen relations (relations pass)
    whens: list[WhenClause] = field(default_factory=list)  # when clauses (discrete actions)
    index: dict[str, int] = field(default_factory=dict)
    #: ``id(component) -> (first, stop)``: the slice of ``equations`` (and of
    #: ``initial_equations``) its ``equations()`` (``initial_equations()``) gave
    equation_ranges: dict[int, tuple[int, int]] = field(default_factory=dict)
    initial_ranges: dict[int, tuple[int, int]] = field(default_factory=dict)
    #: the units of the outputs that are no variable (a domain pass's), by name
    output_units: dict[str, str] = field(default_factory=dict)
    #: the expressions of time given for signal parameters: ``element_hash -> (name, unit)``
    signals: dict[int, tuple[str, str]] = field(default_factory=dict)
    #: structural and time-function parameter values the build used:
    #: ``(component, parameter name, value)``
    bound_values: list[tuple[Component, str, Any]] = field(default_factory=list)
    #: per equation, whether it is known to hold no relation and no kink of the unknowns
    #: (written by a template proven free of them, :attr:`templates.Template.relation_free`),
    #: or None: the relations pass proves the others only
    relation_free: np.ndarray | None = None
    #: the residuals of ``equations`` and the symbols of ``variables``, each stacked in one
    #: column as the flatten pass made them (the template groups' columns, gathered), or
    #: None: :func:`~acausal.structure.system.flat_columns` takes them
    res_column: cs.SX | None = None
    var_column: cs.SX | None = None
    #: the symbols of ``parameters`` in one column (as ``var_column``), or None
    par_column: cs.SX | None = None
    #: the template groups' rows' incidence on ``variables``, composed per class
    #: (:class:`~acausal.structure.template_incidence.TemplateIncidence`), or None
    template_incidence: Any = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        # (the symbol table's index where given: it names every unknown once)
        if len(self.index) != len(self.variables):
            self.index = {v.name: k for k, v in enumerate(self.variables)}

    @property
    def mechanism(self) -> Any:
        """The 3D mechanism pass (:class:`acausal.multibody.mechanism.Mechanism`), or None."""
        return self.domain_passes.get("frame")

    def listing(self) -> str:
        # (counted as the structure report counts them: a derivative is no unknown of its
        # own, a differentiated variable is integrated and its derivative solved for)
        n_der = len(self.variables) - list(map(_DER_OF, self.variables)).count(None)
        lines = [f"{len(self.equations)} equations, {len(self.variables) - n_der} unknowns"
                 + (f" (and the derivatives of {n_der} of them)" if n_der else "")]
        lines += ["  " + e.describe() for e in self.equations]
        return "\n".join(lines)


class _Flattener:
    def __init__(self, model: Component, graph: LinearGraph,
                 domain_tree: dict[str, list[Any]]) -> None:
        self.model = model
        self.graph = graph
        self.domain_tree = domain_tree
        self.table = SymbolTable()
        self.signals: dict[int, tuple[str, str]] = {}
        self.bound_values: list[tuple[Component, str, Any]] = []
        self._scalar_at: list[int] = []
        self.ints = shared_ints(0)  # the integers as shared objects (symbols.grow_ints)
        self._scalars_column = cs.SX(0, 1)

    # ----- the pass -----
    def run(self) -> FlatSystem:
        g = self.graph
        comps_of_graph = getattr(g, "model", None) is self.model
        comps = list(g.components) if comps_of_graph else list(self.model.walk())
        path = _paths(comps)
        groups = self._groups(comps)
        unique = list({id(g): g for g in groups.values()}.values())
        # every scalar symbol made in one CasADi call: the graph's unknowns, the template
        # groups' variables, parameters and derivatives
        # (the components' paths in the graph's order, read by three steps)
        comp_paths = component_paths(g.components, path)
        unknowns, in_tree, edge_names = unknown_names(self.graph, comp_paths)
        requests = [[n for n, size in unknowns if size == 1]]
        spans = []
        for grp in unique:
            paths = [path[id(c)] for c in grp.members]
            grp.origins = [p or type(c).__name__ for p, c in zip(paths, grp.members,
                                                                strict=True)]
            grp.prefixes = [f"{p}." if p else "" for p in paths]
            lists = grp.names(grp.prefixes)
            spans.append((len(requests), len(requests) + len(lists)))
            requests += lists
        made = named_columns(requests, lazy=True)
        for grp, (a, b) in zip(unique, spans, strict=True):
            grp.take(made[a:b])
        self._scalars_column = made[0][0]
        cols = GraphColumns(self.graph, comps, path, self.table, unknowns, in_tree,
                            edge_names, made[0], comp_paths)
        self._scalar_at = cols.scalar_at
        self._lazy_scalars(made[0], cols.scalar_at)
        block = cols.outputs(comps, comp_paths, edge_names, self.table.outputs, unknowns)
        shared = cols.unknown_positions()
        cols.bind_ports(comps, set(groups))
        for grp in unique:
            grp.ports = cols
        runs = _runs(comps, groups)
        self._bind_declarations(runs, path, groups)
        tab = self.table
        equations: list[FlatEquation] = []
        loose: list[FlatEquation] = []  # the equations not of a template group
        initial: list[FlatEquation] = []
        passes: dict[str, DomainPass] = {}
        whens: list[WhenClause] = []
        try:
            with symbols.active(tab):
                other = ((g.other_ports, [comps[k] for k in g.other_owner.tolist()])
                         if comps_of_graph else None)
                for name, (domain, members) in _non_graph_domains(comps, other).items():
                    cls = domain_pass_class(domain)
                    passes[name] = cls(tab, members, self.domain_tree.get(name))
                    for de in passes[name].assemble():
                        origin = de.component._path_or_class()
                        for fe in self._normalise(de.equation, origin, de.component):
                            fe.label = de.label or fe.label
                            fe.coordinates = de.coordinates
                            equations.append(fe)
                            loose.append(fe)
                # every component's equations in model order (the derivatives they take
                # are created in that order), a template group's after all its members
                # took theirs
                pending: list[list[FlatEquation]] = []  # per run (a group's: empty)
                for c in runs:
                    if isinstance(c, tuple):  # members of a group, one after the other
                        grp, i, r = c
                        grp.replay_run(i, r, tab)
                        pending.append([])
                        continue
                    origin = path[id(c)] or type(c).__name__
                    own: list[FlatEquation] = []
                    for eq in self._collect(c, "equations"):
                        if isinstance(eq, When):
                            whens.append(_when_clause(eq, origin, c, tab))
                            continue
                        own.extend(self._normalise(eq, origin, c))
                    pending.append(own)
                    loose += own
                for grp in unique:
                    grp.evaluate()
                    n_eq = grp.tpl.n_eq
                    # (each member's origin n_eq times, member after member)
                    origins = list(chain.from_iterable(zip(*[grp.origins] * n_eq, strict=True)))
                    grp.flat = _group_equations(grp.res, grp.src, origins,
                                                grow_ints(self.ints, len(origins)))
                ranges: dict[int, tuple[int, int]] = {}
                free: list[tuple[int, int]] = []  # equations of relation-free templates
                firsts: dict[int, list[int]] = {id(g): [] for g in unique}  # by member
                # the residual column's pieces in equation order: (group, first row, stop)
                # of a group's column, or (None, first, stop) of the equations' own
                order: list[tuple[Group | None, int, int]] = [(None, 0, len(equations))]
                for c, item in zip(runs, pending, strict=True):
                    first = len(equations)
                    if isinstance(c, tuple):  # (a group's members i to i + r - 1, at once)
                        grp, i, r = c
                        n_eq = grp.tpl.n_eq
                        equations += grp.flat[i * n_eq:(i + r) * n_eq]
                        order.append((grp, i * n_eq, (i + r) * n_eq))
                        # (a member's stop is the next one's first: one int object)
                        bounds = grow_ints(self.ints, len(equations) + 1)[
                            first:len(equations) + 1:n_eq]
                        firsts[id(grp)] += bounds[:-1]
                        if grp.tpl.relation_free:
                            free.append((first, len(equations)))
                        ranges.update(zip(map(id, grp.members[i:i + r]),
                                          zip(bounds[:-1], bounds[1:], strict=True),
                                          strict=True))
                        continue
                    equations += item
                    if len(equations) > first:
                        ranges[id(c)] = (first, len(equations))
                        if order[-1][0] is None and order[-1][2] == first:
                            order[-1] = (None, order[-1][1], len(equations))
                        else:
                            order.append((None, first, len(equations)))
                n_before = len(tab.variables)
                init_ranges: dict[int, tuple[int, int]] = {}
                # class -> whether it has initial equations
                writes = {kind: any("initial_equations" in k.__dict__ for k in kind.__mro__
                                    if k not in (Component, Model))
                          for kind in set(map(type, comps))}
                for c in (comps if any(writes.values()) else ()):
                    if not writes[type(c)]:
                        continue
                    origin = path[id(c)] or type(c).__name__
                    first = len(initial)
                    for eq in self._collect(c, "initial_equations"):
                        initial.extend(self._normalise(eq, origin, c, "initial_equations"))
                    if len(initial) > first:
                        init_ranges[id(c)] = (first, len(initial))
            _residuals(loose)  # (a group's equations have theirs: its column's rows)
            _residuals(initial)
            if len(order) <= _SLICES_MAX:  # (few runs: their columns stacked in order)
                res_column = _slices(order, equations)
            else:
                res_column = _gather(len(equations), lambda k: equations[k].res,
                                     [piece for g in unique for piece in
                                      _member_rows(g.res_col, firsts[id(g)], g.tpl.n_eq)])
            if len(tab.variables) > n_before:
                names = [tab.variables[v.der_of].name for v in tab.variables[n_before:]
                         if v.der_of is not None]
                raise ModelDefinitionError(
                    "initial equations use der() of " + ", ".join(names) + ", which the "
                    "model's equations never differentiate; write the initial condition on "
                    "a variable the model computes (e.g. a component's velocity or "
                    "acceleration variable)"
                )
        finally:
            _unbind(comps, g if comps_of_graph else None)
        # (an unknown stands for its symbol until read; the derivatives found at once and
        # added where no output has their name, by a loop in C)
        V = tab.variables
        ders = list(compress(V, map(is_not, map(_DER_OF, V), repeat(None))))
        deque(map(tab.outputs.setdefault, map(_NAME, ders), ders), maxlen=0)
        variables = tab.variables
        var_column = _gather(len(variables), lambda k: variables[k].sym, self._var_pieces(unique))
        params = tab.parameters
        par_column = _gather(len(params), lambda k: params[k].sym, _par_pieces(unique))
        incidence = template_incidence([(g, firsts[id(g)]) for g in unique], runs, cols,
                                       tab.variables, equations)
        fs = FlatSystem(
            t=tab.t,
            variables=tab.variables,
            equations=equations,
            parameters=tab.parameters,
            outputs=OutputTable(block, tab.outputs, shared),
            output_units=tab.output_units,
            graph=self.graph,
            initial_equations=initial,
            index=tab.index,
            domain_passes=passes,
            whens=whens,
            equation_ranges=ranges,
            initial_ranges=init_ranges,
            signals=self.signals,
            bound_values=self.bound_values,
            relation_free=_mask(free, len(equations)) if free else None,
            res_column=res_column,
            var_column=var_column,
            par_column=par_column,
            template_incidence=incidence,
        )
        # (the shared integers, kept until the alias pass hands them to the equation
        # system: see shared_ints)
        fs.__dict__["_ints"] = self.ints
        return fs

    def _lazy_scalars(self, made: tuple[cs.SX, Any], at: list[int]) -> None:
        """The graph's scalar unknowns ``at`` take their symbols as rows of their column
        ``made`` (the column and its elements, a list or a :class:`LazyColumn`), made
        when read (as a template group's): no Python object of about 200 bytes each."""
        col = made[0]
        if not at or col.numel() != len(at):
            return
        lazy = made[1] if type(made[1]) is LazyColumn else LazyColumn(col)
        V = self.table.variables
        rows = grow_ints(self.ints, len(at))[:len(at)]
        for row, v in zip(rows, map(V.__getitem__, at), strict=True):
            v._sym = lazy
            v._row = row

    def _var_pieces(self, groups: list[Group]) -> list[tuple[cs.SX, np.ndarray, np.ndarray]]:
        """The columns of symbols made in one call (the graph's scalar unknowns, the
        groups' variables and derivatives) and the unknowns they are: ``(column,
        variable indices, rows of the column)``."""
        out = []
        at = np.asarray(self._scalar_at, dtype=np.int64)
        if len(at) and self._scalars_column.numel() == len(at):
            out.append((self._scalars_column, at, np.arange(len(at))))
        for g in groups:
            n, nv = len(g.members), len(g.var_cols)
            if nv:  # (a column per scalar offset, the members' unknowns at that offset)
                base = np.asarray(g.var_base, dtype=np.int64)
                rows = np.arange(n)
                out += [(col, base + o, rows) for o, col in enumerate(g.var_cols)]
            for made, (idx, members) in zip(g.der_made, g.der_at, strict=True):
                if made is not None and idx:
                    out.append((made[1], np.asarray(idx, dtype=np.int64),
                                np.asarray(members, dtype=np.int64)))
        return out

    def _groups(self, comps: list[Component]) -> dict[int, Group]:
        """The template group of every component whose class writes its equations once
        for all alike instances (:mod:`acausal.templates`)."""
        by_key: dict[tuple[Any, ...], list[Component]] = {}
        for c, key in zip(comps, group_keys(comps), strict=True):
            if key is not None:
                by_key.setdefault(key, []).append(c)
        out: dict[int, Group] = {}
        for members in by_key.values():
            if len(members) < templates.MIN_GROUP:
                continue
            try:
                tpl = Template(members[0], self.table.t)
            except NotTemplate:
                continue
            g = Group(tpl, members)
            g.ints = self.ints
            out.update(zip(map(id, members), repeat(g)))
        return out

    def _bind_declarations(self, runs: list[Component | tuple[Group, int, int]],
                           path: dict[int, str], groups: dict[int, Group]) -> None:
        """Symbols of every component's variables and parameters (bound for equations),
        ``runs``: the components in model order, a group's members one after the other
        as one item (:func:`_runs`)."""
        tab = self.table
        unique = list({id(g): g for g in groups.values()}.values())
        rows = {id(g): g.declarations(g.origins, g.prefixes) for g in unique}
        for c in runs:
            if isinstance(c, tuple):
                self._declare_members(*c, rows[id(c[0])])
                continue
            cpath = path[id(c)]
            b: dict[str, Any] = {}
            prefix = f"{cpath}." if cpath else ""
            for name, vi in c.__dict__["_vars"].items():
                if vi.discrete:
                    if vi.size != 1:
                        raise ModelDefinitionError(
                            f"{c._describe()}: discrete variable {name!r} must be a scalar")
                    b[name] = tab.new_discrete(prefix + name,
                                               symbols.start_values(vi.start, 1, prefix + name)[0],
                                               vi.unit,
                                               vi.doc)
                    tab.add_output(prefix + name, b[name])
                    continue
                sym = tab.new_var(prefix + name, vi.size, start=vi._start, fixed=vi.fixed,
                                  unit=vi.unit, nominal=vi.nominal,
                                  state_priority=vi.state_priority,
                                  origin=cpath or type(c).__name__, hint=vi.hint,
                                  decl=vi.decl)
                b[name] = sym
                tab.add_output(prefix + name, sym)
            follow = []
            for name, value in c.__dict__["_params"].items():
                decl = getattr(type(c), name)
                if value is None and decl.follows is not None:
                    follow.append((name, decl))  # (an expression of the others, below)
                elif decl.structural:
                    b[name] = value
                    self.bound_values.append((c, name, value))
                elif callable(value):
                    b[name] = _signal(c, name, value, tab.t)
                    if decl.min is not None or decl.max is not None:
                        _check_signal_start(c, decl, b[name], tab.t)
                    tab.add_output(prefix + name, b[name])
                    self.bound_values.append((c, name, value))
                    for k in range(b[name].numel()):
                        el = b[name][k]
                        # (a constant, sin(0 t) = 0, is a node CasADi shares with every
                        # other 0 of the model: no unit of its own)
                        if not el.is_constant():
                            self.signals[el.element_hash()] = (prefix + name, decl.unit)
                else:
                    b[name] = tab.new_parameter(prefix + name, float(value), decl.unit,
                                                decl.doc, decl, c)
            if has_parameter_check(type(c)):
                c._raise_parameter_problem(c)  # (the values as built)
            c.__dict__["_binding"] = b
            for name, decl in follow:  # (a calculated parameter: the others' expression)
                b[name] = cs.SX(decl.follows(c))
                tab.add_output(prefix + name, b[name])
        self._index_groups(unique, len(tab.index))

    def _declare_members(self, g: Group, i: int, r: int, rows: templates.Rows) -> None:
        """The unknowns, parameters and outputs of the members ``i`` to ``i + r - 1`` of
        a template group, which come one after the other in the model, made for all
        members by :meth:`Group.declarations`, in the per-instance order (the names of
        its unknowns and parameters are indexed by :meth:`_index_groups`)."""
        tab, n = self.table, len(g.members)
        nv, no, npar, nb = (len(rows.variables) // n, len(rows.out_names) // n,
                            len(rows.parameters) // n, len(rows.bound) // n)
        g.var_base[i:i + r] = _steps(len(tab.variables), r, nv)
        tab.variables += rows.variables[i * nv:(i + r) * nv]
        tab.outputs.update(zip(rows.out_names[i * no:(i + r) * no],
                               rows.out_syms[i * no:(i + r) * no], strict=True))
        g.param_base[i:i + r] = _steps(len(tab.parameters), r, npar)
        tab.parameters += rows.parameters[i * npar:(i + r) * npar]
        self.bound_values += rows.bound[i * nb:(i + r) * nb]

    def _index_groups(self, groups: list[Group], n_index: int) -> None:
        """The names of the groups' unknowns and parameters in the table's indices
        (``n_index``: the number of names indexed before, the others')."""
        tab = self.table
        index, pindex = tab.index, tab._param_index
        pool = grow_ints(self.ints, max(len(tab.variables), len(tab.parameters)))
        added = 0
        for g in groups:
            at = _shifted(pool, g.var_base)
            for o, names in enumerate(g.var_names):
                index.update(zip(names, at(o), strict=True))
                added += len(names)
            at = _shifted(pool, g.param_base)
            for o, names in enumerate(g.param_names.values()):
                pindex.update(zip(names, at(o), strict=True))
        if len(index) != n_index + added:  # a name twice
            seen: set[str] = set()
            for v in tab.variables:
                if v.name in seen:
                    raise ModelDefinitionError(f"two unknowns are named {v.name!r}")
                seen.add(v.name)

    # ----- equations -----
    @staticmethod
    def _collect(c: Component, method: str) -> list[Any]:
        try:
            return collect_equations(c, method)
        except ModelDefinitionError as exc:
            if getattr(exc, "add_component", False):  # (when, reinit, pre, sample)
                raise ModelDefinitionError(f"{c._describe()}: {exc}") from None
            raise
        except AcausalError:
            raise
        except Exception as exc:  # noqa: BLE001 - the user's code: say whose it is
            raise ModelDefinitionError(_equations_failure(c, method, exc)) from exc

    @staticmethod
    def _normalise(eq: Any, origin: str, c: Component,
                   method: str = "equations") -> list[FlatEquation]:
        if isinstance(eq, When):
            raise ModelDefinitionError(
                f"{c._describe()}: a when() clause in {method}(); a when clause acts at "
                "events during the run: return it from equations(). (Initial equations are "
                "conditions on the start values, such as der(self.v) == 0)")
        if isinstance(eq, (bool, np.bool_)):
            raise ModelDefinitionError(
                f"{c._describe()}: an equation evaluated to the Python bool {eq}; it compares "
                "plain numbers, not model variables. Write equations with the component's "
                "symbols, e.g. self.v == self.R * self.i"
            )
        try:
            sx = eq if isinstance(eq, cs.SX) else cs.SX(eq)
        except Exception as exc:  # noqa: BLE001
            raise ModelDefinitionError(_not_an_equation(c, method, eq)) from exc
        n = sx.numel()
        if n == 1:  # (the common case)
            op = _OP(sx)
            if op == _OP_EQ:
                return [FlatEquation(None, origin, "", sx)]
            if op in _NOT_EQUATIONS:  # a relation, or a constant: no equation
                return [_no_information(c, method, sx, op, origin)]
            return [FlatEquation(sx, origin, "", sx)]
        out = []
        for k in range(n):
            e = sx[k]
            # lhs - rhs is formed for all equations at once in _residuals (one CasADi call
            # instead of one per equation)
            if e.is_op(cs.OP_EQ):
                out.append(FlatEquation(None, origin, "", e))
                continue
            if _OP(e) in _NOT_EQUATIONS:
                out.append(_no_information(c, method, e, _OP(e), origin))
                continue
            out.append(FlatEquation(e, origin, "", e))
        return out


@record
class WhenClause:
    """A ``when`` of a component: its condition (an expression, or a
    :class:`~acausal.discrete.Sample` clock) and its actions ``(target, kind, value)``
    with ``kind`` ``"reinit"`` (a state) or ``"assign"`` (a discrete variable)."""

    condition: Any
    actions: list[tuple[str, str, cs.SX]]
    origin: str
    initial: bool = False  # also runs at initialisation if the condition holds there
    source: str | None = None  # the condition as written (for event logs and messages)


def _when_clause(w: When, origin: str, c: Component, tab: SymbolTable) -> WhenClause:
    head = f"{c._describe()}: when({w.source or '...'})"
    if not w.actions:
        raise ModelDefinitionError(f"{head} has no action: give it reinit(...) or assign(...)")
    discrete = {p.name for p in tab.parameters if p.kind == "discrete"}
    actions: list[tuple[str, str, cs.SX]] = []
    for a in w.actions:
        if not isinstance(a, (Reinit, Assign)):
            raise ModelDefinitionError(
                f"{head}: its actions are reinit(...) and assign(...), got {_short(a)} "
                f"({type(a).__name__})")
        name = a.target.name()
        kind = "reinit" if isinstance(a, Reinit) else "assign"
        if kind == "assign" and name not in discrete:
            raise ModelDefinitionError(
                f"{c._describe()}: assign() of {name!r}, which is not a discrete variable; "
                "declare it Variable(discrete=True), or use reinit() for a state")
        if kind == "reinit" and name not in tab.index:
            raise ModelDefinitionError(
                f"{c._describe()}: reinit() of {name!r}, which is not a continuous variable")
        if any(t == name for t, _, _ in actions):
            raise ModelDefinitionError(
                f"{head} sets {name} twice: a variable takes one value at an event (Modelica "
                "allows one reinit or assignment of a variable); keep one action")
        actions.append((name, kind, _action_value(a.value, f"{head}: {kind}({name}, ...)")))
    cond = w.condition
    if isinstance(cond, Sample):
        params = {p.name for p in tab.parameters if p.kind != "discrete"}
        for what, v in (("start", cond.start), ("interval", cond.interval)):
            other = [s.name() for s in cs.symvar(v) if s.name() not in params] \
                if isinstance(v, cs.SX) else []
            if other:
                raise ModelDefinitionError(
                    f"{c._describe()}: the {what} of sample({cond.start}, {cond.interval}) "
                    f"depends on {', '.join(other)}; a clock's instants are known before the "
                    "run: give numbers or parameters")
        return WhenClause(cond, actions, origin, w.initial, w.source)
    if isinstance(cond, (list, tuple)):
        raise ModelDefinitionError(
            f"{head}: the condition is a {type(cond).__name__} of {len(cond)}; when() takes one "
            "condition. For Modelica's when {c1, c2} (either becoming true) write one when() "
            "per condition with the same actions, or one condition cs.logic_or(c1, c2)")
    if isinstance(cond, (bool, np.bool_)):
        raise ModelDefinitionError(
            f"{head}: the condition evaluated to the Python bool {bool(cond)}; write it with "
            "the component's variables (self.h < 0) or ac.sample(start, interval)")
    if isinstance(cond, (str, bytes)) or not isinstance(
            cond, (cs.SX, cs.DM, int, float, np.number, np.ndarray)):
        raise ModelDefinitionError(
            f"{head}: the condition is {_short(cond)} ({type(cond).__name__}); write it as a "
            "comparison of the component's variables or of time (self.h < 0, "
            "self.time > 0.3), or give ac.sample(start, interval)")
    try:
        cond = cs.SX(cond)  # type: ignore[arg-type]
    except Exception:  # noqa: BLE001 - (an array CasADi cannot take)
        cond = None
    if cond is None or not cond.is_scalar():
        raise ModelDefinitionError(
            f"{head}: the condition is not one scalar expression; write it as a comparison "
            "of the component's variables or of time (self.h < 0)")
    params = {p.name for p in tab.parameters if p.kind != "discrete"}
    if not any(s.name() not in params for s in cs.symvar(cond)):
        what = "a constant" if cond.is_constant() else "a function of parameters only"
        raise ModelDefinitionError(
            f"{head}: the condition is {what}, which never becomes true during a run (a "
            "when clause runs where its condition becomes true); write it with the "
            "component's variables or time (self.h < 0, self.time > 0.3), or use "
            "ac.sample(start, interval) for instants known in advance")
    return WhenClause(cond, actions, origin, w.initial, w.source)


def _short(value: Any, width: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= width else text[: width - 3] + "..."


def _action_value(value: Any, where: str) -> cs.SX:
    """The value of a reinit or assign as one scalar expression, or an error saying what
    it is instead (never CasADi's list of constructors)."""
    if isinstance(value, np.ndarray) and value.size == 1:
        value = value.reshape(())[()]
    if isinstance(value, (cs.DM, cs.SX)) and value.numel() == 1:
        return cs.SX(value)
    if isinstance(value, (bool, int, float, np.number)):
        return cs.SX(float(value))
    if isinstance(value, (np.ndarray, list, tuple, cs.DM, cs.SX)):
        n = (value.numel() if isinstance(value, (cs.DM, cs.SX)) else np.size(value))
        raise ModelDefinitionError(
            f"{where}: the value has {n} elements; a reinit or an assignment sets one scalar "
            "variable: give one number or scalar expression (one action per element)")
    raise ModelDefinitionError(
        f"{where}: the value is {_short(value)} ({type(value).__name__}); give a number or an "
        "expression of the component's variables and parameters (e.g. -self.e * "
        "ac.pre(self.v))")
_OP_EQ = cs.OP_EQ
_DER_OF = attrgetter("der_of")
_NAME = attrgetter("name")
#: operations an equation cannot have at its top: relations and logic (``!=``, ``<``,
#: ``<=``; ``>`` and ``>=`` are ``<`` and ``<=`` swapped), and constants (an equation that
#: CasADi folded: ``x == x`` is 1)
_RELATIONS = {cs.OP_NE: "!=", cs.OP_LT: "<", cs.OP_LE: "<=", cs.OP_AND: "and",
              cs.OP_OR: "or", cs.OP_NOT: "not"}
_NOT_EQUATIONS = frozenset([*_RELATIONS, cs.OP_CONST])
_OP = getattr(getattr(cs, "_casadi", None), "SX_op", cs.SX.op)
_DEP = getattr(getattr(cs, "_casadi", None), "SX_dep", cs.SX.dep)
_BINARY = getattr(getattr(cs, "_casadi", None), "SX_binary", cs.SX.binary)


def _group_equations(res: LazyColumn, src: LazyColumn, origins: list[str],
                     rows: list[int]) -> list[FlatEquation]:
    """The equations of a template group, one per row of its columns ``res`` and ``src``
    (``origins``: each one's; ``rows``: ``0, 1, ...``): the slots set here, with the
    shared default of the seldom-set fields, instead of the constructor's call and tests
    per equation (about a sixth less time for the million equations of a large model)."""
    out: list[FlatEquation] = []
    append, new, cls, more = out.append, object.__new__, FlatEquation, _NO_MORE
    for origin, row in zip(origins, rows, strict=False):  # (rows: the longer: a pool)
        e = new(cls)
        e._res = res
        e.origin = origin
        e._source = src
        e._row = row
        e._more = more
        append(e)
    return out


def _shifted(pool: list[int], base: list[int]) -> Any:
    """A function of ``o``: the integers ``b + o`` of every ``b`` of ``base``, as objects
    of ``pool``; a slice of it where ``base`` steps evenly (a group's members one after
    the other: the common case), else taken one by one."""
    b = np.asarray(base, dtype=np.int64)
    step = even_step(b)
    if step:
        first, last = base[0], base[-1]
        return lambda o: pool[first + o:last + o + 1:step]
    return lambda o: list(map(pool.__getitem__, (b + o).tolist()))


def _runs(comps: list[Component],
          groups: dict[int, Group]) -> list[Component | tuple[Group, int, int]]:
    """The components in model order, with the members ``i`` to ``i + r - 1`` of a
    template group that come one after the other in the model as one ``(group, i, r)``."""
    out: list[Component | tuple[Group, int, int]] = []
    k, n = 0, len(comps)
    while k < n:
        c = comps[k]
        g = groups.get(id(c))
        if g is None:
            out.append(c)
            k += 1
            continue
        members, i = g.members, g.pos[id(c)]
        r, m = 1, len(members)
        while k + r < n and i + r < m and comps[k + r] is members[i + r]:
            r += 1
        out.append((g, i, r))
        k += r
    return out


def _steps(first: int, r: int, step: int) -> list[int]:
    """``first, first + step, ...``: ``r`` numbers."""
    return list(range(first, first + r * step, step)) if step else [first] * r


def _par_pieces(groups: list[Group]) -> list[tuple[cs.SX, np.ndarray, np.ndarray]]:
    """The groups' columns of parameter symbols and the parameters they are (as
    :meth:`_Flattener._var_pieces`): a member's parameters follow one another from its
    ``param_base`` in the order of ``param_names``."""
    out = []
    for g in groups:
        base = np.asarray(g.param_base, dtype=np.int64)
        rows = np.arange(len(g.members))
        out += [(col, base + o, rows) for o, col in enumerate(g.param_cols.values())]
    return out


def _member_rows(col: cs.SX, firsts: list[int], n_eq: int
                 ) -> list[tuple[cs.SX, np.ndarray, np.ndarray]]:
    """The pieces of :func:`_gather` of a group's residual column ``col`` (member after
    member), one per equation of the template: member ``i``'s ``n_eq`` equations are from
    ``firsts[i]`` on."""
    f = np.asarray(firsts, dtype=np.int64)
    rows = np.arange(len(f)) * n_eq
    return [(col, f + k, rows + k) for k in range(n_eq)]


def _gather(n: int, item: Any, pieces: list[tuple[cs.SX, np.ndarray, np.ndarray]]) -> cs.SX:
    """A column of ``n`` scalars: entry ``targets[j]`` is row ``rows[j]`` of a piece's
    column, any other entry ``k`` is ``item(k)``. Each piece is put in place by one
    assignment (a strided slice where its targets step evenly, the common case: a
    group's members one after the other); stacking the scalars from Python costs a call
    each."""
    if not n:
        return cs.SX(0, 1)
    out = blank(n)  # (every row is assigned below: a piece's, or the rest's)
    covered = np.zeros(n, dtype=bool)
    for col, targets, rows in pieces:
        if not len(targets):
            continue
        if not col.is_dense() or col.size2() != 1:
            return _gather_stacked(n, item, pieces)  # (as stacked: its sparsity kept)
        whole = len(rows) == col.numel() and bool((rows == np.arange(len(rows))).all())
        put(out, targets, col if whole else take(col, rows))
        covered[targets] = True
    rest = np.flatnonzero(~covered)
    if len(rest):
        col = cs.vertcat(*[item(k) for k in rest.tolist()])
        if not col.is_dense():
            return _gather_stacked(n, item, pieces)
        put(out, rest, col)
    return out


def _gather_stacked(n: int, item: Any, pieces: list[tuple[cs.SX, np.ndarray, np.ndarray]]
                    ) -> cs.SX:
    """:func:`_gather` by one stacking of the columns and one indexing (any sparsity)."""
    perm = np.full(n, -1, dtype=np.int64)
    cols: list[cs.SX] = []
    offset = 0
    for col, targets, rows in pieces:
        perm[targets] = offset + rows
        cols.append(col)
        offset += int(col.numel())
    rest = np.flatnonzero(perm < 0)
    if len(rest):
        cols.append(cs.vertcat(*[item(k) for k in rest.tolist()]))
        perm[rest] = offset + np.arange(len(rest))
    pool = stack(*cols)
    return pool if not pieces else pool[perm.tolist()]


#: up to this many runs of equations, the residual column is their pieces stacked
#: (:func:`_slices`); past them, gathered by one indexing (:func:`_gather`)
_SLICES_MAX = 64


def _slices(order: list[tuple[Group | None, int, int]], equations: list[FlatEquation]
            ) -> cs.SX:
    """The residuals of ``equations`` in one column, from the runs ``order`` in equation
    order: rows ``a`` to ``b`` of a group's column, or the residuals of the equations
    ``a`` to ``b`` (stacked from Python)."""
    pieces: list[cs.SX] = []
    for grp, a, b in order:
        if b <= a:
            continue
        if grp is None:
            pieces.append(cs.vertcat(*[e.res for e in equations[a:b]]))
        else:
            col = grp.res_col
            pieces.append(col if a == 0 and b == col.numel() else col[a:b])
    return stack(*pieces) if pieces else cs.SX(0, 1)


def _mask(spans: list[tuple[int, int]], n: int) -> np.ndarray:
    """A boolean mask of length ``n``, true over the ``(first, stop)`` spans."""
    d = np.zeros(n + 1, dtype=np.int64)
    a = np.array(spans, dtype=np.int64)
    np.add.at(d, a[:, 0], 1)
    np.add.at(d, a[:, 1], -1)
    return np.cumsum(d[:n]) > 0


def _unbind(comps: list[Component], graph: LinearGraph | None) -> None:
    """Unbind the components and their ports (``graph``: the graph of ``comps``, whose
    two lists of ports hold every port of them, or None)."""
    for d in map(attrgetter("__dict__"), comps):
        d["_binding"] = None
    if graph is None:
        bind_ports(chain.from_iterable(map(dict.values, map(attrgetter("_ports"), comps))),
                   None)
        return
    bind_ports(graph.ports, None)
    bind_ports(graph.other_ports, None)


def _paths(comps: list[Component]) -> dict[int, str]:
    """``id(c) -> c.path()`` of components in walk order (a parent before its children)."""
    out: dict[int, str] = {}
    for c in comps:
        d = c.__dict__
        parent = d["_parent"]
        head = out.get(id(parent)) if parent is not None else None
        if parent is None:
            out[id(c)] = ""
        elif head is None:
            out[id(c)] = c.path()
        else:
            out[id(c)] = f"{head}.{d['_name']}" if head else str(d["_name"])
    return out


def _equations_failure(c: Component, method: str, exc: Exception) -> str:
    """The message for an exception raised inside a component's ``equations()``."""
    text = str(exc)
    head = f"{c._describe()}: {method}() of {type(c).__name__} failed"
    if "truth value" in text:
        return (f"{head}: it uses Python control flow (if/while, and/or/not, min/max, "
                "bool()) on a symbolic expression, whose value is not known when the "
                "equations are built. Write the condition into the equation with "
                "ac.if_else(condition, value_if_true, value_if_false), e.g. self.i == "
                "ac.if_else(self.v > 0, self.v / self.R_on, self.v / self.R_off); for min, "
                "max, abs and sign use ac.fmin, ac.fmax, ac.fabs, ac.sign")
    if isinstance(exc, TypeError) and ("SX" in text or "real number" in text):
        return (f"{head}: {type(exc).__name__}: {text}. A function of the math module (or "
                "another function for plain numbers) was given a symbol; use numpy "
                "(np.sin, np.exp) or casadi functions, which accept symbols")
    return f"{head} with {type(exc).__name__}: {text}"


def _non_graph_domains(comps: list[Component],
                       other: tuple[list[Any], list[Component]] | None = None
                       ) -> dict[str, tuple[Any, list[Component]]]:
    """Non-graph domains used by the model: name -> (domain, components with such ports).
    ``other``: those ports and their components in model order, as the graph found them
    (:attr:`~acausal.graph.LinearGraph.other_ports`: no loop over every port, 0.01 s at
    10 000 masses), else found here."""
    pairs: Any = (zip(*other, strict=True) if other is not None else
                  ((p, c) for c in comps for p in c.__dict__["_ports"].values()
                   if not p.domain.graph))
    out: dict[str, tuple[Any, list[Component]]] = {}
    for p, c in pairs:
        entry = out.setdefault(p.domain.name, (p.domain, []))
        if not entry[1] or entry[1][-1] is not c:
            entry[1].append(c)
    return out


def _not_an_equation(c: Component, method: str, eq: Any) -> str:
    """The message for an object given as an equation that is none (a string, a list)."""
    text = repr(eq)
    text = text if len(text) <= 60 else text[:57] + "..."
    if isinstance(eq, (list, tuple)):
        what = (f"a {type(eq).__name__} inside the list it returns ({text}); return one flat "
                "list of equations (join lists with +)")
    else:
        what = (f"a {type(eq).__name__} ({text}), which is not an equation; return a list of "
                "equations written with the component's symbols")
    return (f"{c._describe()}: {method}() of {type(c).__name__} gave {what}, e.g. "
            "return [self.v == self.R * self.i]")


def _no_information(c: Component, method: str, e: cs.SX, op: int,
                    origin: str) -> FlatEquation:
    """A relation given as an equation: a ModelDefinitionError. A constant (an equation
    CasADi folded: ``x == x`` is 1): kept, as it is an equation that determines nothing
    (the structure stage reports it with the model's counts), labelled with what it is
    instead of ``0 == 1``."""
    if op in _RELATIONS:
        raise ModelDefinitionError(
            f"{c._describe()}: an equation of its {method}() is the relation {e} "
            f"({_RELATIONS[op]}), not an equation: a relation (!=, <, <=, >, >=) holds or not "
            "and determines nothing; write lhs == rhs, or put the condition into one with "
            "ac.if_else(condition, a, b)")
    loose = _unconnected_ports(c)
    if loose:
        q = sorted({p.domain.through.name for p in loose})[0]
        label = (f"(always true: {loose[0].path()} is connected to nothing, so its {q} is 0; "
                 "connect it)")
    else:
        value = float(cs.evalf(e))
        label = ("(always true: CasADi folded it to 1, as x == x or der(parameter) == 0)"
                 if value == 1.0 else
                 f"(a constant, {value:g} == 0: always {'true' if value == 0 else 'false'})")
    return FlatEquation(e, origin, label, e)


def _unconnected_ports(c: Component) -> list[Any]:
    """``c``'s graph ports connected to nothing (whose through variable the graph makes
    zero, so an equation on it can fold to a constant)."""
    root = c
    while root.__dict__["_parent"] is not None:
        root = root.__dict__["_parent"]
    connected = {id(p) for comp in root.walk() for conn in comp.__dict__["_connections"]
                 for p in conn}
    return [p for p in c.__dict__["_ports"].values()
            if p.domain.graph and id(p) not in connected]


def _signal(c: Component, name: str, f: Any, t: cs.SX) -> cs.SX:
    try:
        val = f(t)
    except Exception as exc:  # noqa: BLE001 - reported with the user's object
        raise ModelDefinitionError(
            f"{c._describe()}: the function given for {name!r} cannot be evaluated "
            f"symbolically ({type(exc).__name__}: {exc}). Write it with numpy-style math "
            "(np.sin, np.exp, ...) and no Python if/else on t; use casadi.if_else for "
            "switches"
        ) from exc
    try:
        return cs.SX(val)
    except Exception as exc:  # noqa: BLE001
        raise ModelDefinitionError(
            f"{c._describe()}: the function given for {name!r} returned {val!r}, not a "
            "number or expression of t"
        ) from exc


def _check_signal_start(c: Component, decl: Any, value: cs.SX, t: cs.SX) -> None:
    """A function of time given for a parameter with a declared range, at ``t = 0``: as a
    number given for it is checked (a temperature source below 0 K)."""
    try:
        at0 = np.ravel(cs.evalf(cs.substitute(value, t, cs.SX(0.0))).full())
    except Exception:  # noqa: BLE001 - not a number at t = 0 (another symbol): not checked
        return
    for v in at0.tolist():
        bad = decl.problem(v)
        if bad is not None:
            raise ModelDefinitionError(
                f"{c._describe()}: parameter {decl.name!r}, the function of time given for "
                f"it, at t = 0 s {bad}")


def _residuals(eqs: list[FlatEquation]) -> None:
    """Fill ``res = lhs - rhs`` of the equations written as ``lhs == rhs``."""
    # one subtraction per equation through the C functions behind SX.dep and SX.binary:
    # three calls, where stacking and splitting cost a call per element for each of lhs,
    # rhs and the difference
    dep, binary, sub = _DEP, _BINARY, cs.OP_SUB
    for e in eqs:
        if e._res is None:
            src: Any = e.source
            e.res = binary(sub, dep(src, 0), dep(src, 1))


def flatten(model: Component, graph: LinearGraph,
            domain_tree: dict[str, list[Any]] | None = None) -> FlatSystem:
    """The flat equation system of ``model`` on its linear graph."""
    return _Flattener(model, graph, domain_tree or {}).run()


def flatten_pass(state: CompileState) -> CompileState:
    """Pass: linear graph -> flat system (graph equations, component equations, domain
    passes)."""
    graph = need(state.graph, "the linear graph (graph pass)")
    return state.update(flat=flatten(state.model, graph, state.domain_tree))
