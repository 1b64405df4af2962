"""The linear graph of a model: vertices are connection sets, edges are component branches.

Each set of connected ports is one vertex; each domain has a datum vertex. Every component
contributes its terminal graph (``Component.edges``). The spanning tree follows the
normal-tree preferences (:class:`~acausal.component.TreePriority`), overridable by the user.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import numpy as np

from .component import DATUM, Component, Edge, PortInstance
from .domains import Domain
from .errors import ConnectionError_, TopologyError
from .names import did_you_mean
from .topology import Topology, _UnionFind

if TYPE_CHECKING:
    from .state import CompileState

__all__ = ["GraphEdge", "Vertex", "LinearGraph", "graph_pass", "split_tree"]


class Vertex:
    """A connection vertex: the ports joined there (empty for a datum)."""

    __slots__ = ("index", "domain", "ports", "is_datum")

    def __init__(self, index: int, domain: Domain, ports: list[PortInstance],
                 is_datum: bool = False) -> None:
        self.index, self.domain, self.ports, self.is_datum = index, domain, ports, is_datum

    @property
    def name(self) -> str:
        if self.is_datum:
            return f"{self.domain.name} {self.domain.datum}"
        return "{" + ", ".join(p.path() for p in self.ports) + "}"

    def __repr__(self) -> str:
        return f"Vertex({self.index}, {self.name})"


class GraphEdge:
    """An edge of the system graph: one branch of one component's terminal graph.

    (Vertices and edges are slotted classes, one per port set and per branch: a
    dataclass would cost ~1 ms of ``import acausal`` each.)
    """

    __slots__ = ("index", "component", "decl", "initial", "final", "domain")

    def __init__(self, index: int, component: Component, decl: Edge, initial: int,
                 final: int, domain: Domain) -> None:
        self.index, self.component, self.decl = index, component, decl
        self.initial, self.final, self.domain = initial, final, domain

    @property
    def name(self) -> str:
        a = "datum" if self.decl.initial is DATUM else self.decl.initial
        b = "datum" if self.decl.final is DATUM else self.decl.final
        return f"{self.component._path_or_class()}[{a}->{b}]"

    def __repr__(self) -> str:
        return f"GraphEdge({self.index}, {self.name}, {self.initial} -> {self.final})"


class LinearGraph:
    """System graph of a model (all domains; one datum vertex per domain).

    Attributes
    ----------
    vertices : list of Vertex
    edges : list of GraphEdge
    topology : Topology
        Tree, cotree, cutset and circuit matrices.
    port_vertex : dict
        ``id(port) -> vertex index`` (``-1`` for ports at an isolated vertex).
    """

    def __init__(self, model: Component, tree: Iterable[Any] | None = None) -> None:
        comps = list(model.walk())
        #: the model and its components in :meth:`Component.walk` order (the flatten pass
        #: reuses the list instead of walking the model tree again)
        self.model, self.components = model, comps
        # graph-domain ports, and every component's terminal graph with its ends as port
        # objects (read from the instance dicts once: this loop runs per component)
        ports: list[PortInstance] = []
        raw: list[tuple[Component, Edge, Any, Any]] = []
        for c in comps:
            cp = c.__dict__["_ports"]
            for p in cp.values():
                if p.__dict__["domain"].graph:
                    ports.append(p)
            for e in c.graph_edges():
                ini, fin = e.initial, e.final
                raw.append((c, e, None if ini is DATUM else cp[ini],
                            None if fin is DATUM else cp[fin]))
        pid = {id(p): k for k, p in enumerate(ports)}
        uf = _UnionFind(len(ports))
        for c in comps:
            for conn in c.__dict__["_connections"]:
                if not conn[0].__dict__["domain"].graph:
                    continue  # frames: the mechanism pass
                for p in conn:
                    if id(p) not in pid:
                        raise ConnectionError_(_not_in_model(c, p))
                k0 = pid[id(conn[0])]
                for p in conn[1:]:
                    uf.union(k0, pid[id(p)])
        find = uf.find
        root = [find(k) for k in range(len(ports))]
        sets_with_edges = {root[pid[id(q)]] for _, _, a, b in raw for q in (a, b)
                           if q is not None}

        self.vertices: list[Vertex] = []
        set_vertex: dict[int, int] = {}
        for k, p in enumerate(ports):
            rep = root[k]
            if rep not in sets_with_edges:
                continue
            v = set_vertex.get(rep)
            if v is None:
                v = set_vertex[rep] = len(self.vertices)
                self.vertices.append(Vertex(v, p.__dict__["domain"], []))
            self.vertices[v].ports.append(p)
        self.port_vertex: dict[int, int] = {
            id(p): set_vertex.get(root[k], -1) for k, p in enumerate(ports)
        }
        self.datum: dict[str, int] = {}
        self._check_signals(ports, root)

        def datum_of(dom: Domain) -> int:
            if dom.name not in self.datum:
                self.datum[dom.name] = len(self.vertices)
                self.vertices.append(Vertex(len(self.vertices), dom, [], is_datum=True))
            return self.datum[dom.name]

        self.edges: list[GraphEdge] = []
        port_vertex = self.port_vertex
        for c, e, a, b in raw:
            dom = (a if a is not None else b).__dict__["domain"]
            ini = datum_of(dom) if a is None else port_vertex[id(a)]
            fin = datum_of(dom) if b is None else port_vertex[id(b)]
            self.edges.append(GraphEdge(len(self.edges), c, e, ini, fin, dom))

        self._check_self_loops()
        forced = self._resolve_tree(tree) if tree is not None else []
        self.topology = Topology(
            len(self.vertices),
            [(e.initial, e.final) for e in self.edges],
            set(self.datum.values()),
            priorities=[e.decl.priority for e in self.edges],
            forced=forced,
        )
        if self.topology.forced_loop:
            names = [self.edges[j].name for j in self.topology.forced_loop]
            raise TopologyError(
                f"the requested tree contains a closed loop; these edges cannot all be tree "
                f"branches: {', '.join(names)}"
            )
        if self.topology.floating:
            parts = []
            for verts in self.topology.floating:
                dom = self.vertices[verts[0]].domain
                pnames = [p.path() for v in verts for p in self.vertices[v].ports]
                shown = ", ".join(pnames[:8]) + (", ..." if len(pnames) > 8 else "")
                parts.append(
                    f"the {dom.name} ports {shown} have no path to the {dom.datum}, so their "
                    f"{dom.across.name} is undetermined: connect one of them to "
                    f"{dom.datum_component}"
                )
            raise TopologyError("; ".join(parts))

    def _check_self_loops(self) -> None:
        """An edge whose two ports are joined (a short circuit) is a self-loop of the graph:
        its across quantity is zero whatever the component says, which either makes the
        component do nothing or contradicts its equations. Name every such edge."""
        loops = [e for e in self.edges if e.initial == e.final]
        if not loops:
            return
        parts = []
        for e in loops[:5]:
            a, b = e.decl.initial, e.decl.final
            comp = e.component._path_or_class()
            v = self.vertices[e.initial]
            others = [p.path() for p in v.ports if p.owner is not e.component]
            via = (f" (in one node with {', '.join(others[:6])}"
                   + (", ..." if len(others) > 6 else "") + ")") if others else ""
            parts.append(
                f"{comp}.{a} and {comp}.{b} are connected to each other{via}: {comp} is "
                f"short-circuited, its edge {e.name} is a self-loop of the linear graph and "
                f"the {e.domain.across.name} across it is zero whatever {comp} does")
        more = f"; and {len(loops) - 5} more" if len(loops) > 5 else ""
        raise TopologyError(
            "; ".join(parts) + more + ". Connect the ports to different nodes, or remove "
            "the component if the short circuit is intended")

    def _check_signals(self, ports: list[PortInstance], root: list[int]) -> None:
        """Every signal input is connected to exactly one output (``root``: each port's
        connection set)."""
        outputs: dict[int, list[PortInstance]] = {}
        inputs: list[int] = []
        for k, p in enumerate(ports):  # a composite's own signal ports pass through
            direction = p.__dict__["decl"].direction
            if direction is None or p.owner.__dict__["_children"]:
                continue
            if direction == "output":
                outputs.setdefault(root[k], []).append(p)
            elif direction == "input":
                inputs.append(k)
        for k in inputs:
            p = ports[k]
            outs = outputs.get(root[k], [])
            if not outs:
                raise ConnectionError_(
                    f"signal input {p.path()} is not connected to an output: connect it to "
                    "a source block (components.blocks.Constant, Step, ...) or to a sensor "
                    "or block output"
                )
        for outs in outputs.values():
            if len(outs) > 1:
                raise ConnectionError_(
                    "signal outputs " + ", ".join(o.path() for o in outs) + " are connected "
                    "to each other; a connection set of signals has exactly one output"
                )

    def _resolve_tree(self, tree: Iterable[Any]) -> list[int]:
        out: list[int] = []
        for item in tree:
            hits = [
                e.index
                for e in self.edges
                if e.component is item or e.name == item or e.component.path() == item
            ]
            if not hits:
                names = [e.name for e in self.edges] + list(
                    dict.fromkeys(e.component.path() for e in self.edges))
                hint = did_you_mean(item, names) if isinstance(item, str) else ""
                raise TopologyError(
                    f"tree override: {item!r} is no edge or component of the model"
                    + (hint or f"; edges are named like {self.edges[0].name!r}")
                    if self.edges
                    else f"tree override: {item!r} matches nothing (the model has no edges)"
                )
            out.extend(hits)
        return out

    # ----- inspection -----
    @property
    def tree(self) -> list[GraphEdge]:
        return [self.edges[j] for j in self.topology.tree]

    @property
    def cotree(self) -> list[GraphEdge]:
        return [self.edges[j] for j in self.topology.cotree]

    def incidence_matrix(self) -> np.ndarray:
        """Incidence matrix (vertices x edges, original edge order)."""
        return self.topology.incidence()

    def cutset_matrix(self) -> np.ndarray:
        """``[U_t D]``, columns ordered as ``tree + cotree``."""
        return self.topology.cutset_matrix()

    def circuit_matrix(self) -> np.ndarray:
        """``[E U_c]`` with ``E = -D^T``, columns ordered as ``tree + cotree``."""
        return self.topology.circuit_matrix()

    def listing(self) -> str:
        """Readable listing of vertices and edges, tree edges marked."""
        lines = [f"Linear graph: {len(self.vertices)} vertices, {len(self.edges)} edges"]
        for v in self.vertices:
            lines.append(f"  v{v.index}: {v.name}")
        for e in self.edges:
            mark = "tree  " if self.topology.in_tree[e.index] else "cotree"
            lines.append(
                f"  e{e.index} [{mark}] v{e.initial} -> v{e.final}  {e.name} ({e.domain.name})"
            )
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.listing()

    def draw(self, ax: Any = None, **kwargs: Any) -> Any:
        """Draw the graph with networkx/matplotlib: tree edges bold, cotree chords dashed,
        edges labelled (see :func:`acausal.graph_drawing.draw_graph`)."""
        from .graph_drawing import draw_graph

        return draw_graph(self, ax, **kwargs)


def _not_in_model(c: Component, p: PortInstance) -> str:
    """The message for a connection of ``c`` to the port ``p`` of a component that is not
    in the model tree, with the likely reason: a component kept in a dict (not adopted),
    or one replaced by another under its name after the connection."""
    owner = p.__dict__["owner"]
    head = f"{c._describe()} connects {p.path()}, which is not part of the model"
    parent = owner.__dict__["_parent"]
    if parent is not None and parent.__dict__["_children"].get(owner.__dict__["_name"]) \
            is not owner:
        name = owner.__dict__["_name"]
        return (f"{head}: after this connection, another component was assigned to "
                f"{parent._path_or_class()}.{name}, which replaced it (the connection stays "
                "with the first one, now in no model); give the second component a name of "
                "its own")
    for holder in [c, *c.__dict__["_children"].values()]:
        for attr, value in holder.__dict__.items():
            if isinstance(value, dict) and any(v is owner for v in value.values()):
                key = next(k for k, v in value.items() if v is owner)
                return (f"{head}: it is kept in the dict {attr!r} ({attr}[{key!r}]), and "
                        "components inside a dict are not made part of the model; assign "
                        f"it as an attribute (self.{attr}_{key} = ...) or keep such "
                        f"components in a list (self.{attr} = [...], named {attr}[0], "
                        f"{attr}[1], ...)")
    return f"{head}: add its component as an attribute of the model first"


def split_tree(model: Component, tree: Iterable[Any] | None
               ) -> tuple[list[Any] | None, dict[str, list[Any]]]:
    """Split the user's tree override into linear-graph items and per-domain items.

    A string naming a component path stands for the component. A component with ports of a
    non-graph domain (a joint, a body) belongs to that domain's pass; anything else (edge
    names, 1D components) to the linear graph, which reports items it cannot find.
    """
    if tree is None:
        return None, {}
    by_path = {c.path(): c for c in model.walk()}
    graph_items: list[Any] = []
    domain_items: dict[str, list[Any]] = {}
    for item in tree:
        obj = by_path.get(item, item) if isinstance(item, str) else item
        doms = ({p.domain.name for p in obj.ports().values() if not p.domain.graph}
                if isinstance(obj, Component) else set())
        if doms:
            for d in sorted(doms):
                domain_items.setdefault(d, []).append(obj)
        else:
            graph_items.append(obj)
    return graph_items, domain_items


def graph_pass(state: CompileState) -> CompileState:
    """Pass: model tree -> linear graph (vertices, edges, normal tree, cutset matrix)."""
    graph_items, domain_items = split_tree(state.model, state.tree)
    return state.update(graph=LinearGraph(state.model, graph_items), domain_tree=domain_items)
