"""Flatten: from the model tree and its linear graph to one flat equation system.

Unknowns are the component variables plus the graph's primary unknowns (across variables of
tree branches, through variables of cotree chords). Every port variable is substituted
exactly by the topological relations: a port's across variable is its vertex potential (a
signed sum of tree across variables along the tree path from the datum); a port's through
variable is the signed sum of the through variables of the component's edges at that port,
where tree through variables come from the cutset equations ``TV_t = -D TV_c``. The circuit
equations are satisfied by construction (``AV_c = D^T AV_t``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import casadi as cs
import numpy as np

from .component import (
    _CONTEXT,
    DATUM,
    Component,
    collect_equations,
)
from .errors import ModelDefinitionError
from .graph import LinearGraph
from .topology import _UnionFind

__all__ = ["FlatVariable", "FlatEquation", "FlatParameter", "FlatSystem", "flatten"]


@dataclass
class FlatVariable:
    """A scalar unknown of the flat system."""

    name: str
    sym: cs.SX
    start: float = 0.0
    fixed: bool = False
    unit: str = ""
    nominal: float | None = None
    state_priority: int = 0
    origin: str = ""
    der_of: int | None = None  # index of the variable this is the derivative of
    der: int | None = None  # index of this variable's derivative symbol, if any


@dataclass
class FlatEquation:
    """A scalar residual equation ``res == 0`` and where it comes from.

    ``label`` is the equation as written (rendered lazily from ``source``, the original
    ``lhs == rhs`` expression, because printing CasADi expressions is costly).
    """

    res: Any  # cs.SX; None until the flatten pass forms lhs - rhs
    origin: str
    label: str = ""
    source: cs.SX | None = None

    def text(self) -> str:
        """The equation as written, ``lhs == rhs``."""
        if not self.label and self.source is not None:
            e = self.source
            self.label = f"{e.dep(0)} == {e.dep(1)}" if e.is_op(cs.OP_EQ) else f"0 == {e}"
        return self.label or f"0 == {self.res}"

    def describe(self, width: int = 110) -> str:
        s = self.text()
        if len(s) > width:
            s = s[: width - 3] + "..."
        return f"{s}   [{self.origin}]"


@dataclass
class FlatParameter:
    name: str
    sym: cs.SX
    value: float
    unit: str = ""


@dataclass
class FlatSystem:
    """The flat equation system of a model (output of the flatten pass)."""

    t: cs.SX
    variables: list[FlatVariable]
    equations: list[FlatEquation]
    parameters: list[FlatParameter]
    outputs: dict[str, cs.SX]
    constants: dict[str, Any]
    graph: LinearGraph
    initial_equations: list[FlatEquation] = field(default_factory=list)
    index: dict[str, int] = field(default_factory=dict)
    mechanism: Any = None

    def __post_init__(self) -> None:
        self.index = {v.name: k for k, v in enumerate(self.variables)}

    def var_of(self, sym: cs.SX) -> int:
        return self.index[sym.name()]

    def listing(self) -> str:
        lines = [f"{len(self.equations)} equations, {len(self.variables)} unknowns"]
        lines += ["  " + e.describe() for e in self.equations]
        return "\n".join(lines)


class _Flattener:
    def __init__(self, model: Component, tree: Any = None) -> None:
        self.model = model
        self.tree = tree
        self.mechanism: Any = None
        mb_items = None
        if tree is not None:
            from .multibody.base import MultibodyComponent

            by_path = {c.path(): c for c in model.walk()}
            items = [by_path.get(t, t) if isinstance(t, str) else t for t in tree]
            mb_items = [t for t in items if isinstance(t, MultibodyComponent)]
            tree = [t for t in items if not isinstance(t, MultibodyComponent)]
            self.tree = mb_items
        self.graph = LinearGraph(model, tree)
        self.t = cs.SX.sym("time")
        self.variables: list[FlatVariable] = []
        self.params: list[FlatParameter] = []
        self.outputs: dict[str, cs.SX] = {}
        self.constants: dict[str, Any] = {}
        self.by_name: dict[str, int] = {}

    # ----- symbols -----
    def new_var(self, name: str, size: int, **info: Any) -> cs.SX:
        sym = cs.SX.sym(name, size)
        start = info.pop("start", 0.0)
        if size == 1:
            elems, starts = [sym], [float(start)]
        else:
            elems = [sym[k] for k in range(size)]
            starts = list(np.broadcast_to(np.asarray(start, dtype=float), (size,)))
        for e, s0 in zip(elems, starts, strict=True):
            sname = e.name()
            if sname in self.by_name:
                raise ModelDefinitionError(f"two unknowns are named {sname!r}")
            self.by_name[sname] = len(self.variables)
            self.variables.append(FlatVariable(sname, e, start=float(s0), **info))
        return sym

    def der(self, expr: Any) -> cs.SX:
        if isinstance(expr, cs.SX) and expr.is_scalar() and expr.is_symbolic():
            k = self.by_name.get(expr.name())
            if k is not None:  # the common case: der of a variable
                return self._der_symbol(k)
        expr = cs.SX(expr)
        if expr.is_constant():
            return cs.SX.zeros(expr.shape)
        out = []
        for k in range(expr.numel()):
            e = expr[k]
            if e.is_symbolic() and e.name() in self.by_name:
                out.append(self._der_symbol(self.by_name[e.name()]))
                continue
            syms = [s for s in cs.symvar(e) if s.name() in self.by_name]
            d = cs.jacobian(e, self.t) if cs.depends_on(e, self.t) else cs.SX(0)
            if syms:
                v = cs.vertcat(*syms)
                dv = cs.vertcat(*[self._der_symbol(self.by_name[s.name()]) for s in syms])
                d = d + cs.jtimes(e, v, dv)
            out.append(d)
        return cs.reshape(cs.vertcat(*out), expr.shape) if out else cs.SX.zeros(expr.shape)

    def _der_symbol(self, k: int) -> cs.SX:
        v = self.variables[k]
        if v.der is None:
            sym = cs.SX.sym(f"der({v.name})")
            idx = len(self.variables)
            self.by_name[sym.name()] = idx
            self.variables.append(
                FlatVariable(sym.name(), sym, unit=f"{v.unit}/s" if v.unit else "1/s",
                             origin=v.origin, der_of=k)
            )
            v.der = idx
        return self.variables[v.der].sym

    # ----- the pass -----
    def run(self) -> FlatSystem:
        g = self.graph
        topo = g.topology
        comps = list(self.model.walk())
        path = {id(c): c.path() for c in comps}

        # primary unknowns of the graph
        AV: dict[int, cs.SX] = {}
        TV: dict[int, cs.SX] = {}
        for e in g.edges:
            base = f"{e.name}"
            q = e.domain.across if topo.in_tree[e.index] else e.domain.through
            sym = self.new_var(
                f"{base}.{q.name}", q.size, unit=q.unit, origin=path[id(e.component)]
            )
            (AV if topo.in_tree[e.index] else TV)[e.index] = sym
        # vertex potentials along the tree (datum = 0)
        x: dict[int, cs.SX] = {}
        for vtx in topo.order:
            size = g.vertices[vtx].domain.across.size
            if topo.parent[vtx] < 0:
                x[vtx] = cs.SX.zeros(size)
            else:
                xp, a = x[int(topo.parent[vtx])], AV[int(topo.parent_edge[vtx])]
                if topo.parent[int(topo.parent[vtx])] < 0:  # parent is the root (zero)
                    x[vtx] = a if topo.parent_sign[vtx] > 0 else -a
                else:
                    x[vtx] = xp + a if topo.parent_sign[vtx] > 0 else xp - a
        for j in topo.cotree:
            e = g.edges[j]
            AV[j] = x[e.final] - x[e.initial]
        D = topo.D
        for r, j in enumerate(topo.tree):
            size = g.edges[j].domain.through.size
            acc = None
            for ptr in range(D.indptr[r], D.indptr[r + 1]):
                term = TV[topo.cotree[D.indices[ptr]]]
                d = D.data[ptr]
                if acc is None:
                    acc = -term if d == 1.0 else (term if d == -1.0 else -d * term)
                else:
                    acc = acc - term if d == 1.0 else (acc + term if d == -1.0 else acc - d * term)
            TV[j] = acc if acc is not None else cs.SX.zeros(size)

        for e in g.edges:  # every edge's across and through quantity, by edge name
            self.outputs[f"{e.name}.{e.domain.across.name}"] = AV[e.index]
            self.outputs[f"{e.name}.{e.domain.through.name}"] = TV[e.index]

        # port bindings
        flows: dict[int, Any] = {}
        for e in g.edges:
            cp = e.component.ports()
            for end, sign in ((e.decl.initial, 1.0), (e.decl.final, -1.0)):
                if end is DATUM:
                    continue
                p = cp[end]
                tv = TV[e.index]
                if id(p) not in flows:
                    flows[id(p)] = tv if sign > 0 else -tv
                else:
                    flows[id(p)] = flows[id(p)] + tv if sign > 0 else flows[id(p)] - tv
        self._composite_flows(comps, flows)
        for c in comps:
            for p in c.ports().values():
                dom = p.domain
                if not dom.graph:
                    continue  # frames: bound by the mechanism pass
                v = g.port_vertex[id(p)]
                across = x[v] if v >= 0 else cs.SX.zeros(dom.across.size)
                through = flows.get(id(p), cs.SX.zeros(dom.through.size))
                p.__dict__["_binding"] = {dom.across.name: across, dom.through.name: through}
                pp = p.path()
                self.outputs[f"{pp}.{dom.across.name}"] = across
                self.outputs[f"{pp}.{dom.through.name}"] = through

        # component variables and parameters
        for c in comps:
            b: dict[str, Any] = {}
            cpath = path[id(c)]
            prefix = f"{cpath}." if cpath else ""
            for name, vi in c.variables().items():
                sym = self.new_var(
                    prefix + name,
                    vi.size,
                    start=vi.start,
                    fixed=vi.fixed,
                    unit=vi.unit,
                    nominal=vi.nominal,
                    state_priority=vi.state_priority,
                    origin=cpath or type(c).__name__,
                )
                b[name] = sym
                self.outputs[prefix + name] = sym
            for name, value in c.parameters().items():
                decl = getattr(type(c), name)
                if decl.structural:
                    b[name] = value
                elif callable(value):
                    b[name] = self._signal(c, name, value)
                    self.outputs[prefix + name] = b[name]
                else:
                    sym = cs.SX.sym(prefix + name)
                    self.params.append(FlatParameter(prefix + name, sym, float(value), decl.unit))
                    b[name] = sym
                    self.constants[prefix + name] = float(value)
            c.__dict__["_binding"] = b

        # equations
        equations: list = []
        initial: list = []
        _CONTEXT.current = self
        try:
            if any(not p.domain.graph for c in comps for p in c.ports().values()):
                from .multibody.mechanism import Mechanism

                self.mechanism = Mechanism(self, comps, self.tree)
                for eq, origin, c, label in self.mechanism.assemble():
                    for fe in self._normalise(eq, origin, c):
                        fe.label = label or fe.label
                        equations.append(fe)
            for c in comps:
                origin = path[id(c)] or type(c).__name__
                for eq in collect_equations(c):
                    equations.extend(self._normalise(eq, origin, c))
            n_before = len(self.variables)
            for c in comps:
                origin = path[id(c)] or type(c).__name__
                for eq in collect_equations(c, "initial_equations"):
                    initial.extend(self._normalise(eq, origin, c))
            self._residuals(equations)
            self._residuals(initial)
            if len(self.variables) > n_before:
                names = [self.variables[v.der_of].name for v in self.variables[n_before:]
                         if v.der_of is not None]
                raise ModelDefinitionError(
                    "initial equations use der() of " + ", ".join(names) + ", which the "
                    "model's equations never differentiate; write the initial condition on "
                    "a variable the model computes (e.g. a component's velocity or "
                    "acceleration variable)"
                )
        finally:
            _CONTEXT.current = None
            for c in comps:
                c.__dict__["_binding"] = None
                for p in c.ports().values():
                    p.__dict__["_binding"] = None
        for fv in self.variables:
            if fv.der_of is not None:
                self.outputs.setdefault(fv.name, fv.sym)
        return FlatSystem(
            mechanism=self.mechanism,
            t=self.t,
            variables=self.variables,
            equations=equations,
            parameters=self.params,
            outputs=self.outputs,
            constants=self.constants,
            graph=g,
            initial_equations=initial,
        )

    def _composite_flows(self, comps: list[Component], flows: dict[int, Any]) -> None:
        """Flow of a model's own port = sum of the flows of the inner ports joined to it."""
        for c in reversed(comps):  # children before parents
            own = c.ports()
            if not own or not c._connections:
                continue
            plist = [p for conn in c._connections for p in conn]
            local = {id(p): k for k, p in enumerate(plist)}
            uf = _UnionFind(len(plist))
            for conn in c._connections:
                for j in range(1, len(conn)):
                    uf.union(local[id(conn[0])], local[id(conn[j])])
            for p in own.values():
                if id(p) not in local:
                    continue
                rep = uf.find(local[id(p)])
                seen: set[int] = set()
                acc = flows.get(id(p), 0)
                for q in plist:
                    if id(q) in seen or q is p or q.owner is c:
                        continue
                    if uf.find(local[id(q)]) == rep:
                        seen.add(id(q))
                        acc = acc + flows.get(id(q), 0)
                flows[id(p)] = acc

    def _signal(self, c: Component, name: str, f: Any) -> cs.SX:
        try:
            val = f(self.t)
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

    def _normalise(self, eq: Any, origin: str, c: Component) -> list:
        if isinstance(eq, (bool, np.bool_)):
            raise ModelDefinitionError(
                f"{c._describe()}: an equation evaluated to the Python bool {eq}; it compares "
                "plain numbers, not model variables. Write equations with the component's "
                "symbols, e.g. self.v == self.R * self.i"
            )
        try:
            sx = eq if isinstance(eq, cs.SX) else cs.SX(eq)
        except Exception as exc:  # noqa: BLE001
            raise ModelDefinitionError(
                f"{c._describe()}: cannot read equation {eq!r} ({exc})"
            ) from exc
        out = []
        for k in range(sx.numel()):
            e = sx if sx.numel() == 1 else sx[k]
            # lhs - rhs is formed for all equations at once in _residuals (one CasADi call
            # instead of one per equation)
            out.append(FlatEquation(None if e.is_op(cs.OP_EQ) else e, origin, "", e))
        return out

    @staticmethod
    def _residuals(eqs: list[FlatEquation]) -> None:
        """Fill ``res = lhs - rhs`` of the equations written as ``lhs == rhs``."""
        todo: list[Any] = [e for e in eqs if e.res is None]
        if not todo:
            return
        lhs: Any = cs.vertcat(*[e.source.dep(0) for e in todo])
        rhs: Any = cs.vertcat(*[e.source.dep(1) for e in todo])
        for e, r in zip(todo, cs.vertsplit(lhs - rhs), strict=True):
            e.res = r


def flatten(model: Component, tree: Any = None) -> FlatSystem:
    """Build the linear graph of ``model`` and its flat equation system."""
    return _Flattener(model, tree).run()
