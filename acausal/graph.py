"""The linear graph of a model: vertices are connection sets, edges are component branches.

Each set of connected ports is one vertex; each domain has a datum vertex. Every component
contributes its terminal graph (``Component.edges``). The spanning tree follows the
normal-tree preferences (:class:`~acausal.component.TreePriority`), overridable by the user.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import chain, compress, repeat
from operator import attrgetter, contains, itemgetter
from typing import TYPE_CHECKING, Any

import numpy as np

from .component import DATUM, Component, Edge, Port, PortInstance
from .domains import Domain
from .errors import ConnectionError_, TopologyError
from .names import did_you_mean
from .sparsegraph import components
from .topology import ARRAY_GRAPH_MIN, EdgePairs, Topology, _UnionFind

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

    The graph is held in arrays (``edge_initial``, ``edge_final``, ``port_vertices``, ...);
    the :class:`Vertex` and :class:`GraphEdge` objects and ``port_vertex`` are made when
    first read (a build reads the arrays).
    """

    def __init__(self, model: Component, tree: Iterable[Any] | None = None) -> None:
        comps = list(model.walk())
        #: the model and its components in :meth:`Component.walk` order (the flatten pass
        #: reuses the list instead of walking the model tree again)
        self.model, self.components = model, comps
        # ----- the graph-domain ports, in model order, and their domains -----
        # (C-level maps over the components and ports: this runs per port)
        pdicts = list(map(attrgetter("_ports"), comps))
        every = list(chain.from_iterable(map(dict.values, pdicts)))
        # a port's declaration (of its component's class: few) gives its domain
        decls, decl_of = _codes(list(map(attrgetter("decl"), every)))
        graph_decl = np.array([d.domain.graph for d in decls], dtype=bool)
        n_own = np.fromiter(map(len, pdicts), dtype=np.int64, count=len(comps))
        #: per port, its component (a position in ``components``)
        self.port_owner = np.repeat(np.arange(len(comps), dtype=np.int64), n_own)
        # ----- every component's terminal graph, its ends as positions in ``every`` -----
        e_decl, self.edge_owner, ends, found = _terminal_graphs(comps, pdicts, n_own,
                                                                decl_of)
        everyone = every  # (all the ports, for the positions in ``ends``)
        graph_at = None
        #: the ports of no graph domain (3D frames...), in model order, with their
        #: components' positions in ``components`` (the flatten pass hands them to their
        #: domains' passes)
        self.other_ports: list[PortInstance] = []
        self.other_owner = np.zeros(0, dtype=np.int64)
        if not graph_decl.all():
            graph = graph_decl[decl_of]
            graph_at = np.where(graph, np.cumsum(graph) - 1, -1)
            self.other_ports = list(compress(every, (~graph).tolist()))
            self.other_owner = self.port_owner[~graph]
            every = list(compress(every, graph.tolist()))
            decl_of, self.port_owner = decl_of[graph], self.port_owner[graph]
        #: the graph-domain ports of the model, in model order (a port's position there
        #: is its number in the arrays below: :meth:`port_positions`)
        self.ports: list[PortInstance] = every
        n_ports = len(every)
        ids = np.fromiter(map(id, every), dtype=np.int64, count=n_ports)
        self._id_order = np.argsort(ids)
        self._ids = ids[self._id_order]
        #: the distinct domains of the ports, and every port's (positions in ``domains``)
        self.domains, domain_of = _codes([d.domain for d in decls])
        self.port_domain = domain_of[decl_of]
        owner = self.edge_owner.tolist()
        e_comp: list[Component] = list(map(comps.__getitem__, owner))
        root = self._connection_sets(list(compress(comps, map(attrgetter("_connections"),
                                                              comps))))
        m = len(e_decl)
        # the ends as graph ports (-1: the datum, or a port of no graph domain: a stray)
        at_port = ends >= 0
        end_ids = np.full((2, m), id(None), dtype=np.int64)
        if graph_at is not None:
            stray = np.zeros((2, m), dtype=bool)
            stray[at_port] = graph_at[ends[at_port]] < 0
            if bool(np.any(stray)):
                for k in np.flatnonzero(stray.ravel()).tolist():
                    end_ids.ravel()[k] = id(everyone[int(ends.ravel()[k])])
            ends[at_port] = graph_at[ends[at_port]]
        for j, k, port in found:  # (ends found by identity: instances of their own)
            end_ids[k, j] = id(port)
            ends[k, j] = self._positions(np.array([id(port)], dtype=np.int64))[0]
        stray = (ends < 0) & (end_ids != id(None))
        if bool(np.any(stray)):  # (an edge at a port of no graph domain)
            raise KeyError(int(end_ids.ravel()[np.flatnonzero(stray.ravel())[0]]))
        # ----- vertices: the connection sets with an edge, in the order of their first
        # port, then a datum vertex per domain in the order of the edges that reach it -----
        on_edge = np.zeros(n_ports + 1, dtype=bool)  # (by set; the last: no port)
        on_edge[root[ends[ends >= 0]]] = True
        kept = np.flatnonzero(on_edge[root[:n_ports]])
        by_set = np.argsort(root[kept], kind="stable")
        sets = root[kept][by_set]
        starts = np.flatnonzero(np.diff(sets, prepend=-1))
        firsts = kept[by_set[starts]]  # each set's first port
        rank = np.argsort(firsts, kind="stable")
        vertex_of_set = np.full(n_ports + 1, -1, dtype=np.int64)
        vertex_of_set[sets[starts][rank]] = np.arange(len(rank))
        #: per port, its vertex (-1: a port at no edge's vertex)
        self.port_vertices = vertex_of_set[root[:n_ports]]
        # the ports of every vertex, in model order (positions in ``ports``)
        pv_kept = self.port_vertices[kept]
        self._vertex_ports = kept[np.argsort(pv_kept, kind="stable")]
        self._vertex_ptr = np.zeros(len(rank) + 1, dtype=np.int64)
        np.cumsum(np.bincount(pv_kept, minlength=len(rank)), out=self._vertex_ptr[1:])
        self._check_signals(every, root, decls, decl_of)
        # each edge's domain: its initial port's, else its final port's
        end = np.where(ends[0] >= 0, ends[0], ends[1])
        if bool(np.any(end < 0)):  # (an edge from the datum to the datum)
            raise AttributeError("'NoneType' object has no attribute '__dict__'")
        e_dom = self.port_domain[end] if m else np.zeros(0, dtype=np.int64)
        v_dom = [self.port_domain[firsts[rank]]]
        ini, fin = self.port_vertices[ends[0]], self.port_vertices[ends[1]]
        self.datum: dict[str, int] = {}
        at_datum = np.flatnonzero((ends < 0).any(axis=0))
        if len(at_datum):
            codes = e_dom[at_datum]
            first_at = {}  # (the few domains in the order of their first edge at a datum)
            for k in range(len(self.domains)):
                hits = np.flatnonzero(codes == k)
                if len(hits):
                    first_at[k] = int(hits[0])
            datum_of = np.full(len(self.domains), -1, dtype=np.int64)
            nv = len(rank)
            for k in sorted(first_at, key=first_at.__getitem__):
                name = self.domains[k].name
                if name not in self.datum:
                    self.datum[name] = nv + len(v_dom) - 1
                    v_dom.append(np.array([k]))
                datum_of[k] = self.datum[name]
            ini[at_datum] = np.where(ends[0, at_datum] < 0, datum_of[codes], ini[at_datum])
            fin[at_datum] = np.where(ends[1, at_datum] < 0, datum_of[codes], fin[at_datum])
        #: per vertex, its domain (positions in ``domains``); the datum vertices last
        self.vertex_domain = np.concatenate(v_dom)
        self.n_vertices = len(self.vertex_domain)
        #: per edge: its component, its declaration, its domain (a position in
        #: ``domains``), its ends' ports (positions in ``ports``, -1 at a datum) and its
        #: initial and final vertices
        self.edge_components, self.edge_decls, self.edge_domain = e_comp, e_decl, e_dom
        self.edge_ports = ends.T
        self.edge_initial, self.edge_final = ini, fin
        self._vertices: list[Vertex] | None = None
        self._edges: list[GraphEdge] | None = None
        self._port_vertex: dict[int, int] | None = None

        self._check_self_loops()
        forced = self._resolve_tree(tree) if tree is not None else []
        pairs = np.stack([ini, fin], axis=1)
        self.topology = Topology(
            self.n_vertices,
            (list(zip(ini.tolist(), fin.tolist(), strict=True)) if m < ARRAY_GRAPH_MIN
             else EdgePairs(pairs)),
            set(self.datum.values()),
            priorities=list(map(attrgetter("priority"), e_decl)),
            forced=forced,
            ends=pairs,
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

    def _connection_sets(self, owners: list[Component]) -> np.ndarray:
        """The connection set of every graph port (a label per port, one more entry for
        no port: ``len(ports)``), from the connections of ``owners``."""
        conns = list(chain.from_iterable(map(attrgetter("_connections"), owners)))
        n = len(self.ports)
        at = self.port_positions(chain.from_iterable(conns))
        sizes = np.fromiter(map(len, conns), dtype=np.int64, count=len(conns))
        heads = np.cumsum(sizes) - sizes
        if bool(np.any(at < 0)):  # connections of other domains, or errors
            graph = [conn[0].domain.graph for conn in conns]
            for c in owners:
                for conn in c.__dict__["_connections"]:
                    if conn[0].domain.graph:
                        for p in conn:
                            if self.port_positions([p])[0] < 0:
                                raise ConnectionError_(_not_in_model(c, p))
            conns = list(compress(conns, graph))  # (frames: the mechanism pass)
            at = at[np.repeat(np.asarray(graph, dtype=bool), sizes)]
            sizes = sizes[np.asarray(graph, dtype=bool)]
            heads = np.cumsum(sizes) - sizes
        # every port of a connection is joined to its first
        first = np.repeat(at[heads], sizes - 1)
        rest = np.ones(len(at), dtype=bool)
        rest[heads] = False
        other = at[rest]
        if n < ARRAY_GRAPH_MIN:
            uf = _UnionFind(n)
            for a, b in zip(first.tolist(), other.tolist(), strict=True):
                uf.union(a, b)
            labels = [uf.find(k) for k in range(n)]
            return np.array(labels + [n], dtype=np.int64)
        return np.append(components(n, first, other)[1], n)

    def port_positions(self, ports: Iterable[Any]) -> np.ndarray:
        """The positions of ``ports`` in :attr:`ports` (-1 for a port that is not there:
        of no graph domain, or of no component of the model)."""
        return self._positions(np.fromiter(map(id, ports), dtype=np.int64))

    def _positions(self, q: np.ndarray) -> np.ndarray:
        """:meth:`port_positions` of the ports of ids ``q``."""
        if not len(self._ids):
            return np.full(len(q), -1, dtype=np.int64)
        at = np.searchsorted(self._ids, q)
        at[at == len(self._ids)] = 0
        return np.where(self._ids[at] == q, self._id_order[at], -1)

    @property
    def vertex_domains(self) -> list[Domain]:
        """Every vertex's domain."""
        return [self.domains[k] for k in self.vertex_domain.tolist()]

    @property
    def edge_domains(self) -> list[Domain]:
        """Every edge's domain."""
        return [self.domains[k] for k in self.edge_domain.tolist()]

    @property
    def vertices(self) -> list[Vertex]:
        if self._vertices is None:
            ports, at, ptr = self.ports, self._vertex_ports.tolist(), self._vertex_ptr.tolist()
            n, doms = len(ptr) - 1, self.vertex_domains
            self._vertices = [Vertex(v, doms[v], [ports[k] for k in at[ptr[v]:ptr[v + 1]]])
                              for v in range(n)]
            self._vertices += [Vertex(v, doms[v], [], is_datum=True)
                               for v in range(n, len(doms))]
        return self._vertices

    @property
    def edges(self) -> list[GraphEdge]:
        if self._edges is None:
            self._edges = list(map(GraphEdge, range(len(self.edge_decls)),
                                   self.edge_components, self.edge_decls,
                                   self.edge_initial.tolist(), self.edge_final.tolist(),
                                   self.edge_domains))
        return self._edges

    @property
    def port_vertex(self) -> dict[int, int]:
        if self._port_vertex is None:
            self._port_vertex = dict(zip(map(id, self.ports), self.port_vertices.tolist(),
                                         strict=True))
        return self._port_vertex

    def _check_self_loops(self) -> None:
        """An edge whose two ports are joined (a short circuit) is a self-loop of the graph:
        its across quantity is zero whatever the component says, which either makes the
        component do nothing or contradicts its equations. Name every such edge."""
        if not bool(np.any(self.edge_initial == self.edge_final)):
            return
        loops = [e for e in self.edges if e.initial == e.final]
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

    def _check_signals(self, ports: list[PortInstance], root: np.ndarray, decls: list[Any],
                       at: np.ndarray) -> None:
        """Every signal input is connected to exactly one output (``root``: each port's
        connection set; ``decls``: the ports' distinct declarations, ``at``: each
        port's)."""
        outputs: dict[int, list[PortInstance]] = {}
        inputs: list[tuple[int, int]] = []
        passing: dict[int, list[PortInstance]] = {}  # composites' inputs in each set
        directed = np.array([d.direction is not None for d in decls], dtype=bool)
        signals = np.flatnonzero(directed[at]).tolist() if len(decls) else []
        sets = root[signals].tolist() if signals else []
        for k, r in zip(signals, sets, strict=True):
            p = ports[k]  # (a composite's own signal ports pass through)
            if p.owner.__dict__["_children"]:
                if p.decl.direction == "input":
                    passing.setdefault(r, []).append(p)
                continue
            direction = p.decl.direction
            if direction == "output":
                outputs.setdefault(r, []).append(p)
            elif direction == "input":
                inputs.append((k, r))
        for k, r in inputs:
            p = ports[k]
            outs = outputs.get(r, [])
            if not outs:
                outer = min(passing.get(r, []), key=lambda q: len(q.owner.path()),
                            default=None)
                if outer is not None:  # (the model's own input, or a subsystem's)
                    sub = outer.owner.path()
                    attr = f"{sub}.{outer.name}" if sub else outer.name
                    whose = (f"the input {attr} of {sub}" if sub else
                             f"the model's own input {attr}")
                    raise ConnectionError_(
                        f"signal input {p.path()} is fed by {whose}, which nothing drives "
                        "(an input is driven by what the model connects to it; a model's "
                        "own inputs have no outside in a simulation, and an FMU has no "
                        "inputs): drive it inside the model with a source block, "
                        f"self.connect(source.y, self.{attr}) (components.blocks.Constant, "
                        "Step, TimeTable, ...: a Constant's k is a parameter that runs and "
                        "FMU importers can set)")
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


def _codes(items: Sequence[Any]) -> tuple[list[Any], np.ndarray]:
    """The distinct objects of ``items`` (by identity, in order of first appearance) and
    every item's position among them."""
    ids = np.fromiter(map(id, items), dtype=np.int64, count=len(items))
    by = np.argsort(ids, kind="stable")
    new = np.diff(ids[by], prepend=-1) != 0  # (ids are positive)
    group = np.cumsum(new) - 1
    firsts = by[new]
    rank = np.argsort(firsts)
    code_of_group = np.empty(len(rank), dtype=np.int64)
    code_of_group[rank] = np.arange(len(rank))
    codes = np.empty(len(items), dtype=np.int64)
    codes[by] = code_of_group[group]
    return [items[k] for k in firsts[rank].tolist()], codes


def _terminal_graphs(comps: list[Component], pdicts: list[dict[str, PortInstance]],
                     n_own: np.ndarray, decl_of: np.ndarray
                     ) -> tuple[list[Edge], np.ndarray, np.ndarray,
                                list[tuple[int, int, PortInstance]]]:
    """Every component's terminal graph (:meth:`Component.graph_edges`) in model order:
    the edges' declarations, their components (positions in ``comps``), their ends as
    positions among the ports of ``pdicts`` in order (a ``2 x edges`` array; -1: the
    datum) and the ends found by identity, ``(edge, end, port)`` (their position is left
    -1 here).

    An instance without sub-components and edges of its own, whose ports have the
    declarations of its class's first such instance, in that order (``decl_of``: a code
    per port), has that instance's terminal graph: it is read once per class (the ends by
    their position in the ports, the same for every such instance). Any other component
    (a composite, one with edges or ports of its own) is read as it is, its ends found
    by identity as :meth:`LinearGraph.port_positions` finds them."""
    n = len(comps)
    kinds, kind_of = _codes(list(map(type, comps)))
    dicts = list(map(attrgetter("__dict__"), comps))
    plain = ~np.fromiter(map(contains, dicts, repeat("edges")), dtype=bool, count=n)
    plain &= ~np.fromiter(map(bool, map(itemgetter("_children"), dicts)), dtype=bool,
                          count=n)
    declared = np.array([len(k._declarations(Port)) for k in kinds], dtype=np.int64)
    plain &= n_own == declared[kind_of]
    start = np.cumsum(n_own) - n_own
    # each class's first plain instance (-1: none)
    rep = np.full(len(kinds), -1, dtype=np.int64)
    cand = np.flatnonzero(plain)
    uk, first = np.unique(kind_of[cand], return_index=True)
    rep[uk] = cand[first]
    # a plain instance's ports have its class's first one's declarations
    port_of = np.repeat(np.arange(n, dtype=np.int64), n_own)
    mine = plain[port_of]
    owners = port_of[mine]
    ref = start[rep[kind_of[owners]]] + np.flatnonzero(mine) - start[owners]
    other = owners[decl_of[mine] != decl_of[ref]]
    plain[other] = False
    # the class templates: edges and their ends' positions among the instance's ports
    tmpl: list[list[Edge]] = [[] for _ in kinds]
    t_a: list[list[int]] = [[] for _ in kinds]
    t_b: list[list[int]] = [[] for _ in kinds]
    for k, c in enumerate(rep.tolist()):
        if c < 0:
            continue
        tmpl[k] = edges = comps[c].graph_edges()
        local = {name: j for j, name in enumerate(pdicts[c])}
        t_a[k] = [-1 if e.initial is DATUM else local[e.initial] for e in edges]
        t_b[k] = [-1 if e.final is DATUM else local[e.final] for e in edges]
    codes = kind_of.tolist()
    terminal = list(map(tmpl.__getitem__, codes))
    loc_a = list(map(t_a.__getitem__, codes))
    loc_b = list(map(t_b.__getitem__, codes))
    own: list[tuple[int, list[Any], list[Any]]] = []
    for c in np.flatnonzero(~plain).tolist():
        terminal[c] = edges = comps[c].graph_edges()
        cp = pdicts[c]
        own.append((c, [None if e.initial is DATUM else cp[e.initial] for e in edges],
                    [None if e.final is DATUM else cp[e.final] for e in edges]))
        loc_a[c] = loc_b[c] = [-1] * len(edges)
    sizes = np.fromiter(map(len, terminal), dtype=np.int64, count=n)
    owner = np.repeat(np.arange(n, dtype=np.int64), sizes)
    m = len(owner)
    ends = np.empty((2, m), dtype=np.int64)
    ends[0] = np.fromiter(chain.from_iterable(loc_a), dtype=np.int64, count=m)
    ends[1] = np.fromiter(chain.from_iterable(loc_b), dtype=np.int64, count=m)
    np.add(ends, start[owner], out=ends, where=ends >= 0)
    found: list[tuple[int, int, PortInstance]] = []
    if own:
        first_edge = np.cumsum(sizes) - sizes
        for c, a, b in own:
            j0 = int(first_edge[c])
            for k, side in ((0, a), (1, b)):
                found += [(j0 + j, k, p) for j, p in enumerate(side) if p is not None]
    return list(chain.from_iterable(terminal)), owner, ends, found


def _not_in_model(c: Component, p: PortInstance) -> str:
    """The message for a connection of ``c`` to the port ``p`` of a component that is not
    in the model tree, with the likely reason: a component kept in a dict (not adopted),
    or one replaced by another under its name after the connection."""
    owner = p.owner
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
