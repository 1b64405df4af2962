"""The compile chain: model -> graph -> flat system -> aliases -> index reduction -> DAE.

:func:`build` is the whole pipeline in one readable function; each pass is its own module
and every intermediate result is kept on the returned :class:`CompiledModel` for
inspection.
"""

from __future__ import annotations

import copy
import gc
import time
from dataclasses import dataclass, field
from typing import Any

import casadi as cs
import numpy as np

from .component import Component
from .dae import SemiExplicitDAE, build_dae, structural_error
from .errors import AcausalError
from .flatten import FlatSystem, FlatVariable, flatten
from .graph import LinearGraph
from .structure.alias import AliasResult, eliminate_aliases
from .structure.dummy import StateSelection, select_states
from .structure.matching import match
from .structure.pantelides import PantelidesResult, pantelides
from .structure.system import EquationSystem

__all__ = ["CompiledModel", "StructureReport", "build"]


@dataclass
class StructureReport:
    """What the structure stage did (printable; every field is data)."""

    n_equations_flat: int
    n_unknowns_flat: int
    n_aliases_removed: int
    n_equations: int
    n_unknowns: int
    differentiated: list[str]
    index: int
    states: list[str]
    dummy_derivatives: list[str]
    dynamic_state_selection: bool
    block_sizes: list[int]
    n_explicit: int
    n_algebraic: int
    timings: dict[str, float] = field(default_factory=dict)

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


@dataclass
class CompiledModel:
    """Everything :func:`build` produced, for inspection, simulation and export."""

    model: Component
    graph: LinearGraph
    flat: FlatSystem
    aliases: AliasResult
    system: EquationSystem
    pantelides: PantelidesResult
    selection: StateSelection
    dae: SemiExplicitDAE
    report: StructureReport
    alias_pairs: tuple[list[cs.SX], list[cs.SX]]
    _dae_cache: dict[tuple[int, ...], SemiExplicitDAE] = field(default_factory=dict)
    # IDAS integrators by (DAE, relative grid, settings, parameter values), reused by
    # repeated simulations of the same compiled model
    _integrators: dict[tuple, Any] = field(default_factory=dict)
    _misc: dict[Any, Any] = field(default_factory=dict)

    def dae_for(self, states: list[int]) -> SemiExplicitDAE:
        """The DAE for another state choice (dynamic state selection), cached."""
        key = tuple(states)
        if key not in self._dae_cache:
            self._dae_cache[key] = build_dae(self.system, states, self.alias_pairs,
                                             self.flat.outputs)
        return self._dae_cache[key]

    def parameter_values(self, overrides: dict[str, float] | None = None) -> np.ndarray:
        """Parameter vector with ``{"path.name": value}`` overrides applied."""
        names = [p.name for p in self.system.parameters]
        values = np.array([p.value for p in self.system.parameters], dtype=float)
        for k, v in (overrides or {}).items():
            if k not in names:
                close = [n for n in names if n.split(".")[-1] == k.split(".")[-1]][:5]
                raise AcausalError(
                    f"unknown parameter {k!r}" + (f"; did you mean {close}?" if close else "")
                )
            values[names.index(k)] = float(v)
        return values

    def _start_values(self) -> dict[str, float]:
        """Start value of every variable of the equation system (cached)."""
        if "start" not in self._misc:
            self._misc["start"] = {v.name: v.start for v in self.system.variables}
        return self._misc["start"]

    @property
    def mechanism(self) -> Any:
        """The mechanism report (3D multibody models), or None."""
        mech = self.flat.mechanism
        return mech.report if mech is not None else None

    @property
    def states(self) -> list[str]:
        return list(self.dae.x_names)

    def equations(self) -> str:
        """Readable listing of the index-reduced equations and their origins."""
        return "\n".join(e.describe() for e in self.system.equations)

    def __str__(self) -> str:
        return str(self.report)


def build(model: Component, *, tree: Any = None) -> CompiledModel:
    """Run the whole pipeline on ``model`` and return the compiled system.

    Parameters
    ----------
    model : Component
        The root model.
    tree : list, optional
        Components or edge names forced into the spanning tree (user override of the
        normal-tree preferences).
    """
    if isinstance(model, CompiledModel):
        return model
    # the passes allocate many small CasADi objects and no reference cycles: pausing the
    # cyclic garbage collector avoids its repeated full scans of a growing heap
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _build(model, tree)
    finally:
        if gc_was_enabled:
            gc.enable()


def _build(model: Component, tree: Any) -> CompiledModel:
    timings: dict[str, float] = {}
    tic = time.perf_counter()
    flat = flatten(model, tree)  # graph + topology + flat equations
    timings["graph+flatten"] = time.perf_counter() - tic

    tic = time.perf_counter()
    al = eliminate_aliases(flat)
    sys = _equation_system(flat, al)
    timings["alias"] = time.perf_counter() - tic

    tic = time.perf_counter()
    diag = _diagnostics(flat, al)
    _check_balance(sys, diag)
    pr = pantelides(sys)
    _check_matching(sys, diag)
    timings["pantelides"] = time.perf_counter() - tic

    tic = time.perf_counter()
    start = np.array([v.start for v in sys.variables], dtype=float)
    pvals = np.array([p.value for p in sys.parameters], dtype=float)
    sel = select_states(sys, start, pvals)
    timings["dummy derivatives"] = time.perf_counter() - tic

    tic = time.perf_counter()
    olds = [flat.variables[k].sym for k in al.substitution]
    news = list(al.substitution.values())
    dae = build_dae(sys, sel.states, (olds, news), flat.outputs)
    timings["BLT+DAE"] = time.perf_counter() - tic

    report = StructureReport(
        n_equations_flat=len(flat.equations),
        n_unknowns_flat=sum(1 for v in flat.variables if v.der_of is None),
        n_aliases_removed=len(al.removed),
        n_equations=len(al.equations),
        n_unknowns=sum(1 for v in sys.variables[: len(sys.variables)] if v.der_of is None),
        differentiated=[sys.equations[k].describe(90) for k in pr.differentiated],
        index=pr.max_level,
        states=[sys.variables[j].name for j in sel.states],
        dummy_derivatives=[sys.variables[j].name for j in sorted(sel.dummies)],
        dynamic_state_selection=sel.dynamic,
        block_sizes=[len(b.equations) for b in dae.blocks],
        n_explicit=dae.explicit,
        n_algebraic=int(dae.z.numel()),
        timings=timings,
    )
    cm = CompiledModel(model, flat.graph, flat, al, sys, pr, sel, dae, report, (olds, news))
    cm._dae_cache[tuple(sel.states)] = dae
    return cm


def _equation_system(flat: FlatSystem, al: AliasResult) -> EquationSystem:
    """The kept variables (re-indexed, derivative links remapped) and equations."""
    keep = [k for k in range(len(flat.variables)) if k not in al.substitution]
    new_index = {k: n for n, k in enumerate(keep)}
    variables: list[FlatVariable] = []
    for k in keep:
        v = copy.copy(flat.variables[k])
        if v.der is not None:
            v.der = new_index.get(v.der)
        if v.der_of is not None:
            v.der_of = new_index.get(v.der_of)
        variables.append(v)
    return EquationSystem.from_lists(flat.t, variables, list(al.equations), flat.parameters)


def _diagnostics(flat: FlatSystem, al: AliasResult) -> dict[str, Any]:
    """What structural error messages need to name the user's objects."""
    aliases: dict[str, list[str]] = {}
    for k, expr in al.substitution.items():
        v = flat.variables[k]
        if v.der_of is not None:
            continue
        e = cs.SX(expr)
        if e.is_op(cs.OP_NEG):
            e = e.dep(0)
        if e.is_symbolic():
            aliases.setdefault(e.name(), []).append(v.name)
    n_unknowns = sum(1 for v in flat.variables if v.der_of is None)
    return {"origins": {v.name: v.origin for v in flat.variables}, "aliases": aliases,
            "flat_counts": (len(flat.equations), n_unknowns)}


def _check_balance(sys: EquationSystem, diag: dict[str, Any]) -> None:
    n_states = sum(1 for j in range(sys.n_vars) if sys.var_der[j] >= 0)
    unknowns = [j for j in range(sys.n_vars) if sys.var_der[j] < 0]
    if sys.n_eqs != sys.n_vars - n_states:
        raise structural_error(sys, list(range(sys.n_eqs)), unknowns, **diag)


def _check_matching(sys: EquationSystem, diag: dict[str, Any]) -> None:
    """After Pantelides every most-differentiated equation has a highest derivative."""
    highest = [j for j in range(sys.n_vars) if sys.var_der[j] < 0]
    top = [i for i in range(sys.n_eqs) if sys.eq_der[i] < 0]
    inc = sys.incidence_matrix(rows=top, cols=highest)
    var_of_eq, _ = match(inc)
    if (var_of_eq < 0).any():
        raise structural_error(sys, top, highest, origins=diag["origins"],
                               aliases=diag["aliases"])
