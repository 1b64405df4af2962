"""The compile chain: an ordered list of passes over one compile state.

:data:`PASSES` is the chain; each pass is a module of its own, ``run(state) -> state``
(:mod:`acausal.state`). :func:`build` runs it and keeps everything on the returned
:class:`CompiledModel` for inspection; ``build(model, passes=...)`` runs a custom list (a
pass added for a check or a transformation: one new function and one list entry).
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import field
from functools import cached_property, partial
from operator import attrgetter
from typing import Any

import numpy as np

from .component import PARAMETER_WRITES, Component
from .dae import SemiExplicitDAE, dae_pass
from .domain_passes import DomainPass
from .errors import ArgumentError
from .fastsx import fast_operators
from .flatten import FlatSystem, flatten_pass
from .gcpause import collector_paused
from .graph import LinearGraph, graph_pass
from .progress import reporter
from .records import ListView, record
from .relations import relations_pass
from .state import CompileState, Pass, need
from .structure.alias import AliasResult, alias_pass
from .structure.causalize import causalize_pass
from .structure.diagnostics import balance_pass
from .structure.dummy import StateSelection, state_selection_pass
from .structure.pantelides import PantelidesResult, pantelides_pass
from .structure.solve import solve_pass
from .structure.system import EquationSystem
from .unit_check import units_pass

__all__ = ["CompiledModel", "StructureReport", "build", "PASSES", "Pass", "CompileState"]

#: The compile chain, in order. The passes after "state selection" are re-run by
#: :meth:`CompiledModel.dae_for` when the states are chosen anew along a trajectory.
PASSES: tuple[Pass, ...] = (
    Pass("graph", graph_pass),                      # vertices, edges, normal tree, D
    Pass("flatten", flatten_pass),                  # graph + component + domain equations
    Pass("units", units_pass),                      # dimensions of the equations (a check)
    Pass("relations", relations_pass),              # relations of unknowns -> discrete
    Pass("alias", alias_pass),                      # a = b, a = -b, a = const removed
    Pass("balance", balance_pass),                  # equations vs unknowns, by part
    Pass("index reduction", pantelides_pass),       # Pantelides, CasADi derivatives
    Pass("state selection", state_selection_pass),  # dummy derivatives
    Pass("causalisation", causalize_pass),          # matching + BLT + levels
    Pass("block solution", solve_pass),             # explicit where linear, z elsewhere
    Pass("dae", dae_pass),                          # x' = f, 0 = g, named outputs
)
_RESELECT_AFTER = "state selection"


def _n_unknowns(variables: list[Any], var_int: list[int] | None = None) -> int:
    """How many of ``variables`` are not derivatives (``var_int``, if given, the equation
    system's links to the variable each is the derivative of, -1 for none: counted in
    C, not read from every variable)."""
    if var_int is not None and len(var_int) == len(variables):
        return var_int.count(-1)
    return list(map(attrgetter("der_of"), variables)).count(None)


class _Rendered(ListView[str]):
    """The descriptions of some equations, each rendered when it is read (a report of a
    large model lists ten of them; rendering every one costs a build a tenth of a second
    at 10 000 components). Equal to, and saved as, the list of the descriptions."""

    def __init__(self, render: Callable[[int], str], keys: Sequence[int]) -> None:
        self._render = render
        self._keys = list(keys)
        self._done: dict[int, str] = {}

    def __len__(self) -> int:
        return len(self._keys)

    def _one(self, i: int) -> str:
        got = self._done.get(i)
        if got is None:
            got = self._done[i] = self._render(self._keys[i])
        return got

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self._one(j) for j in range(*i.indices(len(self)))]
        return self._one(range(len(self))[i])

    def __iter__(self) -> Iterator[str]:
        return (self._one(j) for j in range(len(self)))

    def __reduce__(self) -> tuple[type, tuple[list[str]]]:
        return (list, (list(self),))


@record
class StructureReport:
    """What the structure stage did (printable; every field is data)."""

    n_equations_flat: int
    n_unknowns_flat: int
    n_aliases_removed: int
    n_equations: int
    n_unknowns: int
    differentiated: Sequence[str]  # (rendered when read: see _Rendered)
    index: int
    states: list[str]
    dummy_derivatives: list[str]
    dynamic_state_selection: bool
    block_sizes: list[int]
    n_explicit: int
    n_algebraic: int
    timings: dict[str, float] = field(default_factory=dict)

    @classmethod
    def from_state(cls, state: CompileState, timings: dict[str, float]) -> StructureReport:
        flat = need(state.flat, "the flat system")
        al = need(state.aliases, "the alias elimination")
        sys = need(state.system, "the equation system")
        pr = need(state.pantelides, "the index reduction")
        sel = need(state.selection, "the state selection")
        dae = need(state.dae, "the DAE")
        return cls(
            n_equations_flat=len(flat.equations),
            n_unknowns_flat=_n_unknowns(flat.variables),
            n_aliases_removed=len(al.removed),
            n_equations=len(al.equations),
            n_unknowns=_n_unknowns(sys.variables, sys.var_int),
            differentiated=_Rendered(lambda k: sys.equations[k].describe(90),
                                     pr.differentiated),
            index=pr.max_level,
            states=[sys.variables[j].name for j in sel.states],
            dummy_derivatives=[sys.variables[j].name for j in sorted(sel.dummies)],
            dynamic_state_selection=sel.dynamic,
            block_sizes=dae.blocks.sizes().tolist(),
            n_explicit=dae.explicit,
            n_algebraic=int(dae.z.numel()),
            timings=timings,
        )

    def __str__(self) -> str:
        sizes = self.block_sizes
        big = sorted([s for s in sizes if s > 1], reverse=True)
        lines = [
            "Structure report",
            f"  flat system:         {self.n_equations_flat} equations, "
            f"{self.n_unknowns_flat} unknowns",
            f"  alias elimination:   {self.n_aliases_removed} trivial equations removed",
            f"  after aliases:       {self.n_equations} equations, {self.n_unknowns} unknowns",
            f"  differential index:  {self.index + 1 if self.index else '<= 1'}"
            f" ({len(self.differentiated)} equations differentiated)",
        ]
        for d in self.differentiated[:10]:
            lines.append(f"      {d}")
        if len(self.differentiated) > 10:
            lines.append(f"      ... and {len(self.differentiated) - 10} more")
        lines.append(f"  states ({len(self.states)}): " + (", ".join(self.states[:12]) or "none")
                     + (", ..." if len(self.states) > 12 else ""))
        if self.dummy_derivatives:
            lines.append(f"  dummy derivatives ({len(self.dummy_derivatives)}): "
                         + ", ".join(self.dummy_derivatives[:12])
                         + (", ..." if len(self.dummy_derivatives) > 12 else ""))
            lines.append("  state selection:     "
                         + ("dynamic (re-selected along the trajectory)"
                            if self.dynamic_state_selection else "static"))
        lines.append(
            f"  BLT: {len(sizes)} blocks, {self.n_explicit} solved explicitly, "
            f"{self.n_algebraic} algebraic unknowns left to IDAS"
            + (f"; implicit blocks of size {big[:10]}" if big else "")
        )
        return "\n".join(lines)


@record(eq=False)
class CompiledModel:
    """Everything :func:`build` produced, for inspection, simulation and export.

    ``state`` is the final compile state (every pass's product); the attributes below are
    views of it. ``run_cache`` belongs to the simulate stage (integrators, time events kept
    between runs of this model); no other stage touches it.
    """

    state: CompileState
    passes: tuple[Pass, ...]
    report: StructureReport
    run_cache: Any = None
    #: ``component.PARAMETER_WRITES`` when the parameter values were read (the build), or
    #: when a run last found none changed since; -1: unknown (a loaded model)
    parameters_written: int = -1
    _dae_by_states: dict[tuple[int, ...], SemiExplicitDAE] = field(default_factory=dict)

    # ----- views of the compile state -----
    @property
    def model(self) -> Component:
        return self.state.model

    @property
    def graph(self) -> LinearGraph:
        return need(self.state.graph, "the linear graph")

    @property
    def flat(self) -> FlatSystem:
        return need(self.state.flat, "the flat system")

    @property
    def aliases(self) -> AliasResult:
        return need(self.state.aliases, "the alias elimination")

    @property
    def system(self) -> EquationSystem:
        return need(self.state.system, "the equation system")

    @property
    def pantelides(self) -> PantelidesResult:
        return need(self.state.pantelides, "the index reduction")

    @property
    def selection(self) -> StateSelection:
        return need(self.state.selection, "the state selection")

    @property
    def dae(self) -> SemiExplicitDAE:
        return need(self.state.dae, "the DAE")

    @property
    def mechanism(self) -> Any:
        """The mechanism report (3D multibody models), or None."""
        mech = self.flat.mechanism
        return mech.report if mech is not None else None

    def domain_pass(self, name: str) -> DomainPass | None:
        """The pass object of a non-graph domain (``"frame"``, ...) used by the model."""
        return self.flat.domain_passes.get(name)

    @property
    def states(self) -> list[str]:
        return list(self.dae.x_names)

    # ----- derived data -----
    def dae_for(self, states: list[int]) -> SemiExplicitDAE:
        """The DAE for another state choice (dynamic state selection), cached: the passes
        after state selection run again on the compile state with the new choice."""
        key = tuple(states)
        if key not in self._dae_by_states:
            names = [p.name for p in self.passes]
            tail = self.passes[names.index(_RESELECT_AFTER) + 1:]
            st = self.state.update(selection=StateSelection(list(states), set()))
            with fast_operators():
                for p in tail:
                    st = p.run(st)
            self._dae_by_states[key] = need(st.dae, "the DAE")
        return self._dae_by_states[key]

    @cached_property
    def start_values(self) -> dict[str, float]:
        """Start value of every variable of the equation system, by name."""
        return {v.name: v.start for v in self.system.variables}

    def parameter_values(self, overrides: dict[str, Any] | None = None) -> np.ndarray:
        """Parameter vector with ``{"path.name": value}`` overrides applied (values may be
        strings with units; names, values and bounds are checked, see
        :func:`acausal.checks.parameter_overrides`)."""
        from .checks import _bound, parameter_overrides

        params = self.system.parameters
        values = np.array([p.value for p in params], dtype=float)
        if overrides:
            checked = parameter_overrides(overrides, params, self.model, _bound(self))
            index = self._parameter_index
            for k, v in checked.items():
                values[index[k]] = v
        return values

    @cached_property
    def _parameter_index(self) -> dict[str, int]:
        return {p.name: k for k, p in enumerate(self.system.parameters)}

    def unit(self, name: str) -> str | None:
        """The unit of a result's name (``"capacitor.v"`` -> ``"V"``): a variable's or a
        parameter's declared unit, a port's or an edge's quantity's from its domain
        (``"r.p.i"``, ``"r[p->n].v"``) or its further outputs (a 3D frame's ``v``:
        ``Domain.outputs``), ``""`` for a dimensionless one, None where the model does not
        say."""
        return unit_of(name, self._units, self._port_units)

    @cached_property
    def _units(self) -> dict[str, str]:
        return _unit_table(self.state, self._structural)

    @cached_property
    def _structural(self) -> dict[str, tuple[np.ndarray, str]]:
        """:func:`_structural_table` (a loaded model's is saved with it: its components
        are detached)."""
        return _structural_table(self.state)

    @cached_property
    def _port_units(self) -> dict[str, dict[tuple[str, str], str]]:
        """Per component path, the units of its ports' quantities: ``(port, quantity) ->
        unit``, one table per class (a loaded model's are saved with it: its components
        are detached, :func:`acausal.persist.loads`)."""
        return _port_table(self.state.model)

    def equations(self) -> str:
        """Readable listing of the index-reduced equations and their origins."""
        return "\n".join(e.describe() for e in self.system.equations)

    def __str__(self) -> str:
        return str(self.report)

    def __repr__(self) -> str:
        r = self.report
        states = ", ".join(r.states[:4]) + (", ..." if len(r.states) > 4 else "")
        from .persist import class_name

        return (f"<CompiledModel {class_name(self.model)}: {r.n_equations} equations, "
                f"{len(r.states)} states ({states or 'none'}), "
                f"{len(self.system.parameters)} parameters, index "
                f"{r.index + 1 if r.index else '<= 1'}>")

    def summary(self, max_rows: int = 60) -> str:
        """The model's components with their parameters (current values, units; values
        changed since the build are listed), the states with their start values, and the
        sizes of the compiled system."""
        r = self.report
        lines = [self._components_summary(max_rows)]
        from .checks import current_value

        now = {p.name: current_value(p) for p in self.system.parameters}
        changed = [f"  {p.name} = {now[p.name]!r} "
                   f"(built with {p.value:g}; pass it with params= or build again)"
                   for p in self.system.parameters
                   if now[p.name] is not None and now[p.name] != p.value]
        if changed:
            lines.append("Changed since the build:")
            lines += changed[:max_rows]
        start = self.start_values
        units = {v.name: v.unit for v in self.system.variables}
        fixed_names = {v.name for v in self.system.variables if v.fixed}
        lines.append(f"States ({len(r.states)}):")
        for name in r.states[:max_rows]:
            unit = units.get(name, "")
            fixed = name in fixed_names
            lines.append(f"  {name} = {start.get(name, 0.0):g}"
                         + (f" {unit}" if unit and unit != "1" else "")
                         + (" (fixed start)" if fixed else " (start value)"))
        if len(r.states) > max_rows:
            lines.append(f"  ... and {len(r.states) - max_rows} more")
        lines.append(
            f"Compiled: {r.n_equations} equations after alias elimination "
            f"({r.n_equations_flat} flat), differential index "
            f"{r.index + 1 if r.index else '<= 1'}, {r.n_algebraic} algebraic unknowns left "
            "to the integrator; print(cm.report) for the structure")
        return "\n".join(lines)

    def _components_summary(self, max_rows: int) -> str:
        """The model tree's summary (:meth:`Component.summary`); for a loaded model, whose
        component objects were not saved, the components as its parameters name them
        (path, class, the values the build used)."""
        from .persist import DetachedComponent

        if not isinstance(self.model, DetachedComponent):
            return str(self.model.summary(max_rows))
        rows: dict[str, tuple[str, list[str]]] = {}
        for p in self.system.parameters:
            if p.kind != "parameter" or p.owner is None:
                continue
            path = p.owner.path()
            unit = f" {p.unit}" if p.unit and p.unit != "1" else ""
            rows.setdefault(path, (str(p.owner.class_name).split("components.")[-1], []))[1]\
                .append(f"{p.name[len(path) + 1:] if path else p.name} = {p.value:g}{unit}")
        from .component import summary_table

        head = (f"{self.model.class_name.rpartition('.')[2]} (loaded: its components as its "
                "parameters name them)")
        table = [(k, c, ", ".join(items)) for k, (c, items) in rows.items()]
        return "\n".join([head, *summary_table(table, max_rows, "parameters")])

    # ----- saving (acausal.persist) -----
    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle support: the compile products without the component objects (see
        :mod:`acausal.persist` for what a loaded model can and cannot do)."""
        from .persist import reduce_model

        return reduce_model(self)

    def save(self, path: Any) -> Any:
        """Write the compiled model to ``path``; read it back with :func:`acausal.load`."""
        from .persist import save

        return save(self, path)


def build(model: Component, *, tree: Sequence[Any] | None = None,
          passes: Sequence[Pass] | None = None, progress: Any = None) -> CompiledModel:
    """Run the compile chain on ``model`` and return the compiled system.

    Parameters
    ----------
    model : Component
        The root model.
    tree : list, optional
        Components or edge names forced into the spanning tree (user override of the
        normal-tree preferences; for 3D mechanisms, the joints to keep in the tree).
    passes : list of Pass, optional
        The compile chain (default :data:`PASSES`); a custom list adds, replaces or
        inspects passes. It must produce what :class:`CompiledModel` shows (a DAE).
    progress : None, bool or callable
        Progress per pass: a bar in a terminal for long builds, or
        ``progress(fraction, pass name)`` (:mod:`acausal.progress`).
    """
    if isinstance(model, CompiledModel):
        return model
    if isinstance(model, type) and issubclass(model, Component):
        raise ArgumentError(f"build() needs a model instance, got the class "
                            f"{model.__name__}: write {model.__name__}()")
    if not isinstance(model, Component):
        from .persist import DetachedComponent, DetachedModelError

        if isinstance(model, DetachedComponent):
            raise DetachedModelError(
                f"{model!r} belongs to a loaded model and cannot be built again: build the "
                "model class again, cm = ac.build(MyModel())")
        raise ArgumentError(f"build() needs a model (an acausal Component), got {model!r}")
    chain = tuple(PASSES if passes is None else passes)
    for p in chain:
        if not isinstance(p, Pass):
            raise ArgumentError(f"passes must be acausal Pass objects (ac.PASSES), got {p!r}")
    # (the passes make many small CasADi objects and no reference cycles)
    with collector_paused():
        state = CompileState(model, tuple(tree) if tree is not None else None)
        timings: dict[str, float] = {}
        report = reporter(progress, what="build")
        written = PARAMETER_WRITES[0]
        with fast_operators():  # SX arithmetic without CasADi's overload dispatch
            for k, p in enumerate(chain):
                report(k / len(chain), p.name)
                tic = time.perf_counter()
                state = p.run(state)
                timings[p.name] = time.perf_counter() - tic
        report.close()
        cm = CompiledModel(state, chain, StructureReport.from_state(state, timings))
        cm.parameters_written = written
        cm._dae_by_states[tuple(cm.selection.states)] = cm.dae
        return cm


def _unit_table(state: CompileState, structural: dict[str, tuple[np.ndarray, str]]
                ) -> dict[str, str]:
    """Every flat variable's, parameter's and structural array's unit, by name."""
    flat = state.flat
    if flat is None:
        return {}
    out = dict(flat.output_units)
    out.update((p.name, p.unit) for p in flat.parameters)
    out.update((v.name, v.unit) for v in flat.variables)
    out.update((n, u) for n, (_, u) in structural.items())
    return out


def _structural_table(state: CompileState) -> dict[str, tuple[np.ndarray, str]]:
    """The structural arrays of numbers of the components (``Parameter(structural=True,
    shape=...)``: ``world.g``, ``arm.r``; fixed at the build, never symbols) and their
    units, by name: a result gives them as the other parameters."""
    out: dict[str, tuple[np.ndarray, str]] = {}
    for c, name, value in (state.flat.bound_values if state.flat is not None else []):
        decl = getattr(type(c), name, None)
        if getattr(decl, "shape", None) is None or value is None or callable(value):
            continue  # (a size, a flag, a function of time: not such an array)
        try:
            a = np.array(value, dtype=float)
        except (TypeError, ValueError):
            continue
        a.setflags(write=False)
        out[f"{c.path()}.{name}"] = (a, str(getattr(decl, "unit", "") or ""))
    return out


def _port_table(model: Any) -> dict[str, dict[tuple[str, str], str]]:
    """:attr:`CompiledModel._port_units` of the components of ``model``."""
    if not isinstance(model, Component):
        return {}
    per_class: dict[type, dict[tuple[str, str], str]] = {}
    out = {}
    for c in model.walk():
        table = per_class.get(type(c))
        if table is None:
            table = per_class[type(c)] = {
                (pname, q.name): str(q.unit)
                for pname, p in c.__dict__.get("_ports", {}).items()
                for q in (getattr(p.domain, "across", None),
                          getattr(p.domain, "through", None),
                          *getattr(p.domain, "outputs", ()))
                if q is not None and getattr(q, "name", None) is not None}
        out[c.path()] = table
    return out


class UnitLookup:
    """The units of a compiled model's results (``Result._unit_of``): called, the lookup
    ``name -> unit`` (:func:`unit_of`), or None. While the model lives they are its own
    tables; when it is collected they are formed from what it leaves, if a result still
    holds this lookup. A result does not keep its compiled model alive (its flat system
    and components are most of a large model's memory), yet its units outlive it: the
    model that ``ac.simulate(Model(), ...)`` builds is collected on return. One lookup per
    model (:meth:`of`), shared by its results."""

    __slots__ = ("_cm", "_tables", "__weakref__")
    _of: Any = None  # (model -> its lookup, weakly keyed; formed on first use)

    def __init__(self, cm: CompiledModel) -> None:
        self._cm = weakref.ref(cm)
        self._tables: tuple[dict[str, str], dict[str, Any]] | None = None
        # (the finalizer holds the model's state and the tables it has, not the model,
        # which nothing there refers back to: not its dictionary, whose run cache does,
        # through the integrators; nothing at the interpreter's exit, when no result is
        # read any more)
        d = cm.__dict__
        weakref.finalize(cm, UnitLookup._keep, weakref.ref(self), cm.state, d.get("_units"),
                         d.get("_port_units"), d.get("_structural")).atexit = False

    @classmethod
    def of(cls, cm: CompiledModel) -> UnitLookup:
        if cls._of is None:
            cls._of = weakref.WeakKeyDictionary()
        lookup = cls._of.get(cm)
        if lookup is None:
            lookup = cls._of[cm] = cls(cm)
        return lookup  # type: ignore[no-any-return]

    @staticmethod
    def _keep(ref: Any, state: CompileState, units: dict[str, str] | None,
              ports: dict[str, Any] | None, structural: dict[str, Any] | None) -> None:
        lookup = ref()
        if lookup is not None:  # (a result still holds it)
            if units is None:
                units = _unit_table(state, _structural_table(state) if structural is None
                                    else structural)
            lookup._tables = (units, _port_table(state.model) if ports is None else ports)

    def tables(self) -> tuple[dict[str, str], dict[str, Any]] | None:
        """The unit tables ``(variables' and parameters', ports')`` (None: not known)."""
        cm = self._cm()
        return (cm._units, cm._port_units) if cm is not None else self._tables

    def __call__(self) -> Callable[[str], str | None] | None:
        t = self.tables()
        return None if t is None else partial(unit_of, units=t[0], port_units=t[1])


def unit_of(name: str, units: Mapping[str, str],
            port_units: Mapping[str, Mapping[tuple[str, str], str]]) -> str | None:
    """The unit of a result's name from ``units`` (variables' and parameters') and
    ``port_units`` (per component path, ``(port, quantity) -> unit``); None if neither
    says (:meth:`CompiledModel.unit`, and a saved result's :class:`acausal.persist.SavedUnits`)."""
    u = units.get(name)
    if u is None:  # a vector variable: its elements' (CasADi names them <name>_<k>)
        u = units.get(f"{name}_0")
    if u is not None:
        return u
    head, _, q = name.rpartition(".")
    if head.endswith("]") and "->" in head:  # an edge, comp[a->b]: a port at one end
        owner, _, ends = head[:-1].rpartition("[")
        a, _, b = ends.partition("->")
        port = b if a == "datum" else a
    else:  # a port's quantity, comp.port.q
        owner, _, port = head.rpartition(".")
    table = port_units.get(owner)
    return table.get((port, q)) if table is not None else None
