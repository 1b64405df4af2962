"""The linear graph's quantities as rows of CasADi columns (part of the flatten pass).

The primary unknowns are the across variables of tree branches and the through variables
of cotree chords. Every other graph quantity is a signed sum of them:

* vertex potentials ``x`` (datum = 0): the signed sum of tree across variables along the
  tree path from the datum;
* across variables of chords ``AV_c = x_final - x_initial`` (the circuit equations);
* through variables of branches ``TV_t = -D TV_c`` (the cutset equations);
* a port's through variable: the signed sum of the through variables of its component's
  edges at that port (+ at an edge's initial end, - at its final end); a model's own port
  carries the sum of the inner ports joined to it.

They are formed as whole columns (one sparse product for the cutsets, one for the ports,
one indexing for the chords) and kept as rows of one pooled column: an output or a
template group's input is a row index, not a Python object per scalar. Only the ports of
components whose equations are written one instance at a time get their symbols as
objects (:meth:`GraphColumns.bind_ports`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from itertools import compress, repeat
from operator import itemgetter
from typing import TYPE_CHECKING, Any

import casadi as cs
import numpy as np

from .component import DATUM, Component, bind_port, bind_ports
from .csr import offsets, spread
from .errors import ModelDefinitionError
from .fastsx import blank, put, stack, take
from .results import LazyNames, Sizes
from .symbols import FlatVariable, LazyColumn, shared_ints
from .topology import _UnionFind

if TYPE_CHECKING:
    from .graph import LinearGraph
    from .symbols import SymbolTable

__all__ = ["GraphColumns", "OutputTable", "unknown_names"]

#: the vertex potentials are formed a tree level at a time (a few CasADi calls per level)
#: unless the tree has more than ``2 + vertices / VERTICES_PER_LEVEL`` levels (then
#: vertex by vertex, as many calls per vertex)
VERTICES_PER_LEVEL = 16

_UNARY = getattr(getattr(cs, "_casadi", None), "SX_unary", cs.SX.unary)
_OP_NEG = cs.OP_NEG


def unknown_names(g: LinearGraph, paths: list[str]
                  ) -> tuple[list[tuple[str, int]], list[bool], Sequence[str]]:
    """Name and size of every edge's primary unknown (tree across, cotree through), the
    edges' tree membership and the edges' names (``GraphEdge.name``, made when read).
    ``paths``: :func:`component_paths` of the graph's components."""
    topo_in = g.topology.in_tree
    in_tree = topo_in.tolist() if hasattr(topo_in, "tolist") else list(topo_in)
    comps, decls = g.edge_components, g.edge_decls
    # "path[a->b]": the path of each edge's component, the "[a->b]" of each declaration
    # (the declarations are few: a component class's)
    heads = list(map(_heads(g.components, paths).__getitem__, g.edge_owner.tolist()))
    kinds, decl_of = _distinct(decls)
    tails = [f"[{'datum' if d.initial is DATUM else d.initial}->"
             f"{'datum' if d.final is DATUM else d.final}]" for d in kinds]
    # ".v" of a tree branch, ".i" of a chord (the domain's quantities)
    doms = g.domains
    quantity = [d.across for d in doms] + [d.through for d in doms]
    which = g.edge_domain + np.where(np.asarray(in_tree, dtype=bool), 0, len(doms))
    dotted = ["." + q.name for q in quantity]
    # (each "[a->b].q" made once: one string per edge, its component's path and that)
    ends = [t + q for t in tails for q in dotted]
    unknowns = [h + e for h, e in zip(heads, map(ends.__getitem__, (
        decl_of * len(dotted) + which).tolist()), strict=True)]
    sizes = list(map([q.size for q in quantity].__getitem__, which.tolist()))
    for k, d in enumerate(doms):  # a block output: "pi.y"
        if d.causal:
            for j in np.flatnonzero((g.edge_domain == k)
                                    & np.asarray(in_tree, dtype=bool)).tolist():
                if decls[j].initial is DATUM:
                    unknowns[j] = comps[j].ports()[decls[j].final].path()
    return list(zip(unknowns, sizes, strict=True)), in_tree, EdgeNames(heads, tails, decl_of)


class EdgeNames(Sequence[str]):
    """The edges' names, ``path[a->b]`` (its component's path, its declaration's ends),
    each made when read: the build reads those of a few edges."""

    __slots__ = ("heads", "tails", "kind")

    def __init__(self, heads: list[str], tails: list[str], kind: np.ndarray) -> None:
        self.heads, self.tails, self.kind = heads, tails, kind

    def __len__(self) -> int:
        return len(self.heads)

    def __getitem__(self, k: Any) -> Any:
        if isinstance(k, slice):
            return [self[j] for j in range(*k.indices(len(self)))]
        return self.heads[k] + self.tails[int(self.kind[k])]


def component_paths(comps: list[Component], path: dict[int, str]) -> list[str]:
    """``path[id(c)]`` of every component of ``comps`` (taken once by the flatten pass for
    the three functions here that read them: 0.04 s each at 100 000 masses)."""
    return list(map(path.__getitem__, map(id, comps)))


def _heads(comps: list[Component], paths: list[str]) -> list[str]:
    """The path of every component of ``comps`` (``paths``: :func:`component_paths`; the
    model's own: its class name)."""
    heads = list(paths)
    k = -1
    while "" in heads:  # (usually the model alone)
        k = heads.index("", k + 1)
        heads[k] = type(comps[k]).__name__
    return heads


def _distinct(items: list[Any]) -> tuple[list[Any], np.ndarray]:
    """The distinct objects of ``items`` (by identity) and every item's position among
    them (see ``graph._codes``)."""
    from .graph import _codes

    return _codes(items)


def _sparse(rows: np.ndarray, cols: np.ndarray, vals: np.ndarray, shape: tuple[int, int]
            ) -> cs.DM:
    """A CasADi sparse matrix from triplets (no duplicates)."""
    order = np.lexsort((rows, cols))  # column-major, rows sorted within a column
    r, c = rows[order], cols[order]
    colptr = np.zeros(shape[1] + 1, dtype=np.int64)
    np.add.at(colptr, c + 1, 1)
    np.cumsum(colptr, out=colptr)
    sp = cs.Sparsity(shape[0], shape[1], colptr.tolist(), r.tolist())
    return cs.DM(sp, vals[order].tolist())


class GraphColumns:
    """Every graph quantity of one model as rows of one column ``pool``.

    ``pool`` stacks: the edges' across quantities, their through quantities, the vertex
    potentials, the ports' through quantities and a few zeros (for a port with no vertex
    or no edge). :meth:`across_row` / :meth:`through_row` give a port quantity's first row.
    """

    def __init__(self, g: LinearGraph, comps: list[Component], path: dict[int, str],
                 table: SymbolTable, unknowns: list[tuple[str, int]], in_tree: list[bool],
                 edge_names: Sequence[str], scalars: tuple[cs.SX, Any],
                 paths: list[str]) -> None:
        self.graph = g
        topo = g.topology
        m = len(g.edge_decls)
        doms = g.domains
        a_size = np.array([d.across.size for d in doms], dtype=np.int64)
        t_size = np.array([d.through.size for d in doms], dtype=np.int64)
        self._a_size, self._t_size = a_size, t_size
        ka, kt = a_size[g.edge_domain], t_size[g.edge_domain]
        # ----- the primary unknowns: one column U (the scalar ones made in one call) -----
        scalar_col, scalar_elems = scalars
        if int(scalar_col.numel()) != len(scalar_elems):  # (made without their column)
            scalar_col = cs.vertcat(cs.SX(0, 1), *scalar_elems)
        self.scalar_at: list[int] = []  # the unknown each scalar symbol becomes
        if len(scalar_elems) == m and self._scalars_in_bulk(g, paths, table, unknowns, in_tree,
                                                             scalar_elems):
            u_start = np.arange(m, dtype=np.int64)
            U = scalar_col
            prim: list[Any] | None = None
        else:
            u_start, U, prim = self._unknowns(g, path, table, unknowns, in_tree, scalars,
                                              scalar_col)
        # ----- vertex potentials, along the tree from each root -----
        kv = a_size[g.vertex_domain]
        v_off = offsets(kv)
        X = self._potentials(g, kv, v_off, ka, u_start, U, prim)
        # ----- edges' across quantities: tree = unknowns, chords = x_final - x_initial -----
        ea_off = offsets(ka)
        tree = np.asarray(_list(topo.tree), dtype=np.int64)  # (the rows of D)
        cot = np.asarray(_list(topo.cotree), dtype=np.int64)  # (the columns of D)
        ini, fin = g.edge_initial, g.edge_final
        t_rows = spread(u_start[tree], ka[tree])
        c_fin = spread(v_off[fin[cot]], ka[cot])
        c_ini = spread(v_off[ini[cot]], ka[cot])
        chord_av = take(X, c_fin) - take(X, c_ini) if len(c_fin) else cs.SX(0, 1)
        AV = _placed(int(ea_off[-1]), [(spread(ea_off[tree], ka[tree]), take(U, t_rows)),
                                       (spread(ea_off[cot], ka[cot]), chord_av)])
        # ----- edges' through quantities: chords = unknowns, tree = -D TV_c -----
        et_off = offsets(kt)
        c_rows = spread(u_start[cot], kt[cot])
        TVc = take(U, c_rows)
        tv_tree = self._cutsets(topo, kt, tree, cot, TVc)
        TV = _placed(int(et_off[-1]), [(spread(et_off[tree], kt[tree]), tv_tree),
                                       (spread(et_off[cot], kt[cot]), TVc)])
        # ----- ports: every graph port of the model, in model order -----
        self.ports = g.ports
        kp = t_size[g.port_domain]
        f_off = offsets(kp)
        ends = g.edge_ports  # port position at each end (-1: the datum)
        n_f = int(f_off[-1])
        at = ends.T.ravel()  # initial ends (+1), then final ends (-1)
        on = at >= 0
        if on.any() and n_f:
            F = self._port_flows(at[on], np.concatenate([np.arange(m)] * 2)[on],
                                 np.where(np.arange(2 * m) < m, 1.0, -1.0)[on], TV, kt,
                                 et_off, kp, f_off)
        else:
            F = cs.SX.zeros(n_f, 1)
        # ----- the pool, and every port's rows in it -----
        kmax = int(max([1, *a_size.tolist(), *t_size.tolist()]))
        parts = [AV, TV, X, F]
        starts = offsets([int(p.numel()) for p in parts])
        self._zero = int(starts[-1])
        self.pool = stack(*parts, cs.SX.zeros(kmax, 1))
        self._av, self._tv, self._x, self._f = (int(s) for s in starts[:4])
        self._ea_off, self._et_off, self._v_off, self._f_off = ea_off, et_off, v_off, f_off
        pv = g.port_vertices
        #: per port (its position in ``ports``), the first row of its across and of its
        #: through quantity in ``pool``
        self._across = np.where(pv >= 0, v_off[pv] + self._x, self._zero)
        self._through = f_off[:-1] + self._f
        self._composite(comps)
        self._elems: dict[int, Any] = {}

    def _scalars_in_bulk(self, g: LinearGraph, paths: list[str], table: SymbolTable,
                         unknowns: list[tuple[str, int]], in_tree: list[bool],
                         elems: Any) -> bool:
        """Register every edge's unknown, all of them scalars (``elems``: their symbols, a
        list or a :class:`~acausal.symbols.LazyColumn`), in a few calls; False (nothing
        registered) if a name is taken or repeated, which the edge-by-edge
        :meth:`_unknowns` reports."""
        variables, names_at = table.variables, table.index
        names = list(map(itemgetter(0), unknowns))
        first, n = len(variables), len(names)
        # (the indices and rows as the build's shared int objects, not 600 000 new ones
        # at 100 000 masses)
        pool = shared_ints(first + n)
        if names_at:
            at = dict(zip(names, pool[first:first + n], strict=True))
            if len(at) != n or not names_at.keys().isdisjoint(at):
                return False
            names_at.update(at)
        else:  # (the common case: the first names, indexed at once)
            names_at.update(zip(names, pool[first:first + n], strict=True))
            if len(names_at) != n:  # (a name twice)
                names_at.clear()
                return False
        doms = g.domains
        unit = [d.across.unit for d in doms] + [d.through.unit for d in doms]
        which = (g.edge_domain + np.where(np.asarray(in_tree, dtype=bool), 0,
                                          len(doms))).tolist()
        origins = list(map(paths.__getitem__, g.edge_owner.tolist()))
        # (FlatVariable(name, sym, 0.0, False, unit, None, 0, origin, None, None, "", None)
        # or, the symbols a LazyColumn, its row k as the symbol of the k-th; one spec per
        # unit)
        lazy = type(elems) is LazyColumn
        spec = [FlatVariable.spec(u, False, None, 0, "", None) for u in unit]
        variables += FlatVariable.many(names, repeat(elems) if lazy else elems, repeat(0.0),
                                       origins, repeat(None),
                                       pool if lazy else repeat(-1),
                                       map(spec.__getitem__, which))
        self.scalar_at = pool[first:first + n]
        return True

    def _unknowns(self, g: LinearGraph, path: dict[int, str], table: SymbolTable,
                  unknowns: list[tuple[str, int]], in_tree: list[bool],
                  scalars: tuple[cs.SX, Any], scalar_col: cs.SX
                  ) -> tuple[np.ndarray, cs.SX, list[Any]]:
        """Register every edge's unknown, edge after edge (vector unknowns made here):
        their first rows in ``U``, ``U`` and every edge's symbol."""
        scalar_elems = scalars[1]
        u_pieces = [scalar_col]
        u_first: list[int] = []  # per edge, its unknown's first row in U
        at_scalar, at_vec = 0, len(scalar_elems)
        prim: list[Any] = []  # per edge, its unknown (an element, or a vector symbol)
        variables, names_at = table.variables, table.index
        doms = g.domains
        for j, (name, size) in enumerate(unknowns):
            dom = doms[int(g.edge_domain[j])]
            q = dom.across if in_tree[j] else dom.through
            origin = path[id(g.edge_components[j])]
            if size == 1:  # (SymbolTable.add_var, inline: the common case)
                sym = scalar_elems[at_scalar]
                u_first.append(at_scalar)
                at_scalar += 1
                if name in names_at:
                    raise ModelDefinitionError(f"two unknowns are named {name!r}")
                names_at[name] = len(variables)
                self.scalar_at.append(len(variables))
                variables.append(FlatVariable(name, sym, 0.0, False, q.unit, None, 0, origin,
                                              None, None, "", None))
            else:
                sym = table.new_var(name, q.size, unit=q.unit, origin=origin)
                u_pieces.append(sym)
                u_first.append(at_vec)
                at_vec += size
            prim.append(sym)
        U = stack(*u_pieces) if len(u_pieces) > 1 else scalar_col
        return np.asarray(u_first, dtype=np.int64), U, prim

    @staticmethod
    def _potentials(g: LinearGraph, kv: np.ndarray, v_off: np.ndarray, ka: np.ndarray,
                    u_start: np.ndarray, U: cs.SX, prim: list[Any] | None) -> cs.SX:
        """The vertex potentials ``X`` (datum = 0): ``x_v = x_parent +- AV`` of the tree
        edge to the parent (``AV`` alone, or negated, below a root), a tree level at a
        time: the same expressions as vertex by vertex."""
        topo = g.topology
        order = np.asarray(_list(topo.order), dtype=np.int64)
        parent, parent_edge = np.asarray(topo.parent), np.asarray(topo.parent_edge)
        parent_sign = np.asarray(topo.parent_sign)
        depth = np.asarray(topo.depth)[order]
        levels = int(depth.max()) if len(order) else 0
        n_v = len(kv)
        if levels > 2 + n_v // VERTICES_PER_LEVEL:  # (a deep, narrow tree: vertex by vertex)
            if prim is None:
                prim = [U[int(r)] if int(k) == 1 else U[int(r):int(r + k)]
                        for r, k in zip(u_start, ka, strict=True)]
            return _potentials_one_by_one(g, kv, prim)
        pieces: list[cs.SX] = []
        placed: list[np.ndarray] = []  # the X rows of each piece
        at = np.full(int(v_off[-1]), -1, dtype=np.int64)  # a row's position in its level
        prev: cs.SX | None = None
        for d in range(1, levels + 1):
            V = order[depth == d]
            rows = spread(v_off[V], kv[V])
            e = parent_edge[V]
            av = spread(u_start[e], ka[e])
            plus = np.repeat(parent_sign[V] > 0, kv[V])
            if d == 1:  # the parent is a root (zero)
                up = [_take(U, av[plus]), -_take(U, av[~plus])]
            else:
                xp = _take(prev, at[spread(v_off[parent[V]], kv[V])])  # type: ignore[arg-type]
                up = [_take(xp, np.flatnonzero(plus)) + _take(U, av[plus]),
                      _take(xp, np.flatnonzero(~plus)) - _take(U, av[~plus])]
            prev = stack(*[u for u in up if u.numel()]) if len(rows) else cs.SX(0, 1)
            done = np.concatenate([rows[plus], rows[~plus]])
            at[done] = np.arange(len(done))
            pieces.append(prev)
            placed.append(done)
        if not int(v_off[-1]):
            return cs.SX(0, 1)
        # (each level's rows put in place; the others, roots and vertices on no edge, are
        # the zeros the column starts as)
        return _placed(int(v_off[-1]), list(zip(placed, pieces, strict=True)))

    @staticmethod
    def _port_flows(port: np.ndarray, edge: np.ndarray, sign: np.ndarray, TV: cs.SX,
                    kt: np.ndarray, et_off: np.ndarray, kp: np.ndarray, f_off: np.ndarray
                    ) -> cs.SX:
        """The ports' through quantities, ``P TV`` of the signed incidence ``P`` of the
        edge ends (``port``, ``edge``, ``sign`` per end; a port at no end: 0). A port at
        one end, the common case, takes its edge's quantity as it is or negated, as the
        product makes it (``1 * x`` is ``x``, ``-1 * x`` is ``-x``), by indexing; only
        the ports at several ends go through the product."""
        count = np.bincount(port, minlength=len(kp))
        single = count[port] == 1
        pieces = []
        for plus in (True, False):
            sel = single & ((sign > 0) == plus)
            if sel.any():
                k = kt[edge[sel]]
                col = take(TV, spread(et_off[edge[sel]], k))
                pieces.append((spread(f_off[port[sel]], k), col if plus else -col))
        many = ~single
        if many.any():
            k = kt[edge[many]]
            P = _sparse(spread(f_off[port[many]], k), spread(et_off[edge[many]], k),
                        np.repeat(sign[many], k), (int(f_off[-1]), int(et_off[-1])))
            at = np.flatnonzero(count > 1)
            rows = spread(f_off[at], kp[at])
            pieces.append((rows, take(cs.densify(cs.mtimes(P, TV)), rows)))
        return _placed(int(f_off[-1]), pieces)

    @staticmethod
    def _cutsets(topo: Any, kt: np.ndarray, tree: np.ndarray, cot: np.ndarray,
                 TVc: cs.SX) -> cs.SX:
        """``TV_t = -D TV_c``, the tree's through quantities (rows: tree edges, each
        ``kt`` rows, in tree order)."""
        D = topo.D
        t_sizes, c_sizes = kt[tree], kt[cot]
        n_t = int(t_sizes.sum())
        if not n_t or not len(D.data):
            return cs.SX.zeros(n_t, 1)
        indptr, indices, data = (np.asarray(D.indptr), np.asarray(D.indices),
                                 np.asarray(D.data, dtype=float))
        r = np.repeat(np.arange(len(indptr) - 1), np.diff(indptr))
        t_off, c_off = offsets(t_sizes.tolist()), offsets(c_sizes.tolist())
        k = t_sizes[r]  # a cutset joins edges of one domain: equal sizes
        rows = spread(t_off[r], k)
        cols = spread(c_off[indices], k)
        vals = np.repeat(-data, k)
        return cs.densify(cs.mtimes(_sparse(rows, cols, vals, (n_t, int(c_off[-1]))), TVc))

    def _composite(self, comps: list[Component]) -> None:
        """The flow of a model's own port: the sum of the flows of the inner ports joined
        to it (children before parents)."""
        values: dict[int, Any] = {}
        own_rows: list[tuple[int, Any]] = []
        for c in reversed([c for c in comps if c.__dict__["_connections"]]):
            own = c.__dict__["_ports"]
            if not own:
                continue
            plist = [p for conn in c._connections for p in conn]
            local = {id(p): k for k, p in enumerate(plist)}
            uf = _UnionFind(len(plist))
            for conn in c._connections:
                for j in range(1, len(conn)):
                    uf.union(local[id(conn[0])], local[id(conn[j])])
            for p in own.values():
                if id(p) not in local or not p.domain.graph:
                    continue
                rep = uf.find(local[id(p)])
                seen: set[int] = set()
                acc = values.get(id(p), self._edge_flow(p))
                for q in plist:
                    if id(q) in seen or q is p or q.owner is c:
                        continue
                    if uf.find(local[id(q)]) == rep:
                        seen.add(id(q))
                        acc = acc + values.get(id(q), self._edge_flow(q))
                values[id(p)] = acc
                own_rows.append((self._position(p), acc))
        if not own_rows:
            return
        # the composite flows go at the end of the pool, and their ports' rows there
        at = int(self.pool.numel())
        extra = []
        for k, acc in own_rows:
            v = cs.SX(acc)
            self._through[k] = at
            at += int(v.numel())
            extra.append(v)
        self.pool = stack(self.pool, *extra)

    def _edge_flow(self, p: Any) -> Any:
        """The signed sum of the flows of the edges at port ``p`` (0 if none)."""
        k = self._position(p, None)
        if k is None:
            return 0
        row, n = int(self._through[k]), p.domain.through.size
        val = self.pool[row] if n == 1 else self.pool[row:row + n]
        return 0 if val.nnz() == 0 or (val.is_zero() and val.is_constant()) else val

    # ----- rows -----
    def _position(self, p: Any, missing: Any = KeyError) -> Any:
        """The position of port ``p`` in :attr:`ports` (``missing`` if not there; by
        default a KeyError)."""
        k = int(self.graph.port_positions([p])[0])
        if k < 0:
            if missing is KeyError:
                raise KeyError(id(p))
            return missing
        return k

    def positions(self, ports: list[Any]) -> np.ndarray:
        """:meth:`_position` of every port of ``ports``."""
        ks = self.graph.port_positions(ports)
        if bool(np.any(ks < 0)):
            raise KeyError(id(ports[int(np.flatnonzero(ks < 0)[0])]))
        return ks

    def across_row(self, p: Any) -> int:
        return int(self._across[self._position(p)])

    def through_row(self, p: Any) -> int:
        return int(self._through[self._position(p)])

    def column(self, ports: list[Any], quantity: str, k: int,
               positions: np.ndarray | None = None) -> cs.SX:
        """Quantity ``quantity`` (element ``k``, or the scalar when ``k < 0``) of every
        port of ``ports``, as one column (``positions``: :meth:`_positions` of the ports,
        if known)."""
        if not ports:
            return cs.SX(0, 1)
        dom = ports[0].domain
        table = self._across if quantity == dom.across.name else self._through
        at = self.positions(ports) if positions is None else positions
        return take(self.pool, table[at] + max(k, 0))

    def value(self, p: Any, quantity: str) -> cs.SX:
        """Quantity ``quantity`` of port ``p`` (its element, or column when a vector)."""
        dom = p.domain
        across = quantity == dom.across.name
        row = int((self._across if across else self._through)[self._position(p)])
        n = (dom.across if across else dom.through).size
        return self.pool[row] if n == 1 else self.pool[row:row + n]

    def bind_ports(self, comps: list[Component], deferred: set[int]) -> None:
        """Bind the graph ports of ``comps`` for their equations: ``{across: ..., through:
        ...}``, taken from the pool in one indexing; the ports of components in
        ``deferred`` (ids; written by templates) get :class:`Deferred` bindings, resolved
        one port at a time if an equation ever reads them."""
        late = Deferred(self)
        want: list[Any] = []
        g = self.graph
        if comps is g.components or comps == g.components:
            # (the model's components: their graph ports are the graph's, in order)
            written = np.fromiter(map(deferred.__contains__, map(id, comps)), dtype=bool,
                                  count=len(comps))
            late_ones = written[g.port_owner]
            bind_ports(compress(self.ports, late_ones.tolist()), late)
            want = list(compress(self.ports, (~late_ones).tolist()))
        else:
            for c in comps:
                if id(c) in deferred:
                    for p in c.__dict__["_ports"].values():
                        if p.domain.graph:
                            bind_port(p, late)
                    continue
                for p in c.__dict__["_ports"].values():
                    if p.domain.graph:
                        want.append(p)
        if not want:
            return
        rows: list[int] = []
        spans = []
        ks = self.positions(want)
        for p, a, t in zip(want, self._across[ks].tolist(), self._through[ks].tolist(),
                           strict=True):
            dom = p.domain
            na, nt = dom.across.size, dom.through.size
            spans.append((len(rows), na, nt))
            rows.extend(range(a, a + na))
            rows.extend(range(t, t + nt))
        elems = cs.vertsplit(self.pool[rows]) if rows else []
        for p, (at, na, nt) in zip(want, spans, strict=True):
            dom = p.domain
            across = elems[at] if na == 1 else cs.vertcat(*elems[at:at + na])
            through = (elems[at + na] if nt == 1
                       else cs.vertcat(*elems[at + na:at + na + nt]))
            bind_port(p, {dom.across.name: across, dom.through.name: through})

    # ----- outputs -----
    def outputs(self, comps: list[Component], paths: list[str], edge_names: Sequence[str],
                named: dict[str, Any], unknowns: list[tuple[str, int]] | None = None
                ) -> tuple[BlockNames, Sizes, cs.SX]:
        """The graph's outputs: every edge's across and through quantity (by edge name)
        and every port's (``path.port.q``), as ``(names, sizes, column)``; a signal port,
        addressed by its port's path (``res["pi.y"]``), goes into ``named``. An edge's
        output named as its primary unknown is that name's string (``unknowns``: every
        edge's, :func:`unknown_names`), not a second string equal to it. ``paths``:
        :func:`component_paths` of the graph's components."""
        g = self.graph
        doms = g.domains
        # per edge: "name.v", "name.i" (its domain's quantities)
        across = ["." + d.across.name for d in doms]
        through = ["." + d.through.name for d in doms]
        codes = g.edge_domain.tolist()
        in_tree = np.asarray(self.graph.topology.in_tree, dtype=bool)
        # (each edge's name of its primary unknown: the unknown's own string, which
        # unknown_names made as this name but for a block output's, named as its port)
        if unknowns is not None and len(unknowns) == len(codes):
            own = list(map(itemgetter(0), unknowns))
            causal = np.array([d.causal for d in doms], dtype=bool)[g.edge_domain]
            for k in np.flatnonzero(causal & in_tree).tolist():
                name = edge_names[k] + across[codes[k]]
                if name != own[k]:
                    own[k] = name
        else:
            own = [e + q for e, q in zip(edge_names, map(
                (across + through).__getitem__,
                (g.edge_domain + np.where(in_tree, 0, len(doms))).tolist()), strict=True)]
        starts = [self._av + self._ea_off[:-1], self._tv + self._et_off[:-1]]
        sizes = [np.diff(self._ea_off), np.diff(self._et_off)]
        # per port: "path.port" (a model's own port: its class name), then as the edges
        ports = self.ports
        heads = _heads(g.components, paths)
        causal = np.array([d.causal for d in doms], dtype=bool)[g.port_domain]
        for k in np.flatnonzero(causal).tolist():  # a signal: named[path.port]
            p = ports[k]
            named[f"{heads[g.port_owner[k]]}.{p.name}"] = self.value(p, p.domain.across.name)
        kept = np.flatnonzero(~causal)
        names = BlockNames(g, own, heads, None if len(kept) == len(ports) else kept)
        starts += [self._across[kept], self._through[kept]]
        sizes += [self._a_size[g.port_domain[kept]], self._t_size[g.port_domain[kept]]]
        # (edge after edge, then port after port: across, through each)
        size = np.concatenate([np.stack(sizes[:2], 1).ravel(), np.stack(sizes[2:], 1).ravel()])
        # the four kinds (edges' across and through, ports' across and through) taken
        # apart, each where it goes: its rows of the pool and its places evenly stepped
        # where the quantities are scalars (slices, not lists of a million indices)
        at = offsets(size)[:-1]
        m2 = 2 * len(sizes[0])
        places = [at[0:m2:2], at[1:m2:2], at[m2::2], at[m2 + 1::2]]
        column = _placed(int(size.sum()), [(spread(p, k), take(self.pool, spread(r, k)))
                                           for p, r, k in zip(places, starts, sizes,
                                                              strict=True)])
        return names, Sizes.of(size), column

    def unknown_positions(self) -> np.ndarray:
        """The positions in :meth:`outputs`' names of the names that are unknowns' too
        (an edge's primary unknown: a tree branch's across, a chord's through)."""
        in_tree = np.asarray(self.graph.topology.in_tree, dtype=bool)
        return 2 * np.arange(len(in_tree)) + np.where(in_tree, 0, 1)


class Deferred:
    """The binding of a port whose component's equations are written by a template: its
    quantities are taken from the pool only if an equation reads them."""

    __slots__ = ("cols",)

    def __init__(self, cols: GraphColumns) -> None:
        self.cols = cols

    def resolve(self, p: Any) -> dict[str, Any]:
        dom = p.domain
        return {dom.across.name: self.cols.value(p, dom.across.name),
                dom.through.name: self.cols.value(p, dom.through.name)}


class BlockNames(LazyNames):
    """The names of the graph's outputs (:meth:`GraphColumns.outputs`), made when first
    read: edge after edge its across and its through quantity ("e.v", "e.i"), then port
    after port ("path.port.v", "path.port.i"; the ports ``kept``, all if None). Of an
    edge's two names one is its primary unknown's (the unknown's own string, kept in
    ``own``), the other that name with the other quantity's suffix: 1.1 million new
    strings at 100 000 masses (90 MB with their list) that the build never reads."""

    def __init__(self, g: LinearGraph, own: list[str], heads: list[str],
                 kept: np.ndarray | None) -> None:
        self.graph, self.own, self.heads, self.kept = g, own, heads, kept
        n_ports = len(g.ports) if kept is None else len(kept)
        self._n = 2 * (len(own) + n_ports)

    def _suffixes(self) -> tuple[list[str], list[str]]:
        doms = self.graph.domains
        return ["." + d.across.name for d in doms], ["." + d.through.name for d in doms]

    def _make(self) -> list[str]:
        g = self.graph
        across, through = self._suffixes()
        codes = g.edge_domain.tolist()
        tree = np.asarray(g.topology.in_tree, dtype=bool)
        # (an edge's name less its unknown's quantity, then both quantities)
        cut = list(map([len(q) for q in across + through].__getitem__,
                       (g.edge_domain + np.where(tree, 0, len(across))).tolist()))
        heads = [o[:len(o) - n] for o, n in zip(self.own, cut, strict=True)]
        out = _pairs(heads, [across[k] for k in codes], [through[k] for k in codes])
        pos = (2 * np.arange(len(tree)) + np.where(tree, 0, 1)).tolist()
        for k, name in zip(pos, self.own, strict=True):
            out[k] = name
        at = np.arange(len(g.ports)) if self.kept is None else self.kept
        comp = list(map(self.heads.__getitem__, g.port_owner[at].tolist()))
        ports = list(map(g.ports.__getitem__, at.tolist()))
        pp = [f"{h}.{p.name}" for h, p in zip(comp, ports, strict=True)]
        codes = g.port_domain[at].tolist()
        return out + _pairs(pp, [across[k] for k in codes], [through[k] for k in codes])

    def _one(self, k: int) -> str:
        g, m = self.graph, len(self.own)
        across, through = self._suffixes()
        if k < 2 * m:  # an edge's: its unknown's name, or that with the other suffix
            e, q = divmod(k, 2)
            tree = bool(g.topology.in_tree[e])
            name = self.own[e]
            if q == (0 if tree else 1):
                return name
            c = int(g.edge_domain[e])
            cut = len(across[c] if tree else through[c])
            return name[:len(name) - cut] + (across, through)[q][c]
        j, q = divmod(k - 2 * m, 2)
        j = j if self.kept is None else int(self.kept[j])
        return (f"{self.heads[int(g.port_owner[j])]}.{g.ports[j].name}"
                + (across, through)[q][int(g.port_domain[j])])

    def __len__(self) -> int:
        return self._n

    def take(self, at: np.ndarray) -> list[str]:
        """The names at the positions ``at`` (those of the edges' unknowns, as
        :meth:`GraphColumns.unknown_positions`, without making the others)."""
        tree = np.asarray(self.graph.topology.in_tree, dtype=bool)
        if self._list is None and np.array_equal(at, 2 * np.arange(len(tree))
                                                 + np.where(tree, 0, 1)):
            return list(self.own)
        return list(map(self.__getitem__, at.tolist()))


class OutputTable(Mapping[str, Any]):
    """The flat system's named outputs: a block of names over the rows of one column (the
    graph's port and edge quantities) and a dict of the others (variables, derivatives,
    domain passes, signals; an unknown's output is its :class:`FlatVariable`, whose
    symbol is made when read). Reads like a dict; the block's names come first."""

    def __init__(self, block: tuple[Sequence[str], Sequence[int], cs.SX] | None,
                 named: dict[str, Any], unknowns: np.ndarray | None = None) -> None:
        self.block = block if block and block[0] else None
        self.named = named
        #: the positions of the block's names that may also name an unknown (the others
        #: never do: no lookup needed to tell an output from a variable of the same name)
        self.unknowns = (np.arange(len(block[0])) if unknowns is None and block
                         else unknowns)
        self._index: dict[str, tuple[int, int]] | None = None
        self._elems: list[cs.SX] | None = None

    def _block_index(self) -> dict[str, tuple[int, int]]:
        if self._index is None:
            out: dict[str, tuple[int, int]] = {}
            if self.block is not None:
                at = 0
                for name, size in zip(self.block[0], self.block[1], strict=True):
                    out[name] = (at, size)
                    at += size
            self._index = out
        return self._index

    def _elements(self) -> list[cs.SX]:
        if self._elems is None:
            self._elems = cs.vertsplit(self.block[2]) if self.block is not None else []
        return self._elems

    def __getitem__(self, name: str) -> Any:
        v = self.named.get(name)
        if v is not None:
            return v.sym if type(v) is FlatVariable else v
        at, size = self._block_index()[name]
        el = self._elements()
        return el[at] if size == 1 else cs.vertcat(*el[at:at + size])

    def __contains__(self, name: object) -> bool:
        return name in self.named or name in self._block_index()

    def __iter__(self) -> Iterator[str]:
        if self.block is not None:
            yield from self.block[0]
        yield from self.named

    def __len__(self) -> int:
        return (len(self.block[0]) if self.block is not None else 0) + len(self.named)


def _potentials_one_by_one(g: LinearGraph, kv: np.ndarray, prim: list[Any]) -> cs.SX:
    """:meth:`GraphColumns._potentials` vertex by vertex (``prim``: every edge's unknown),
    for a deep tree."""
    topo = g.topology
    x: list[Any] = [None] * len(kv)
    parent, parent_edge, parent_sign = (_list(topo.parent), _list(topo.parent_edge),
                                        _list(topo.parent_sign))
    for vtx in _list(topo.order):
        p = parent[vtx]
        if p < 0:
            x[vtx] = cs.SX.zeros(int(kv[vtx]))
            continue
        a = prim[parent_edge[vtx]]
        if parent[p] < 0:  # the parent is a root (zero)
            x[vtx] = a if parent_sign[vtx] > 0 else _UNARY(_OP_NEG, a)
        else:
            x[vtx] = x[p] + a if parent_sign[vtx] > 0 else x[p] - a
    return (cs.vertcat(*[cs.SX.zeros(int(kv[k])) if v is None else v
                         for k, v in enumerate(x)]) if x else cs.SX(0, 1))


def _pairs(heads: list[str], a: list[str], b: list[str]) -> list[str]:
    """``heads[0] + a[0], heads[0] + b[0], heads[1] + a[1], ...``"""
    out: list[str] = [""] * (2 * len(heads))
    out[0::2] = [h + x for h, x in zip(heads, a, strict=True)]
    out[1::2] = [h + x for h, x in zip(heads, b, strict=True)]
    return out


def _placed(n: int, pieces: list[tuple[np.ndarray, cs.SX]]) -> cs.SX:
    """A column of ``n`` rows, the rows ``at`` of each piece ``(at, col)`` its column
    (placed by assignment: no stacking of the pieces and indexing of the stack), the
    others 0; as stacked and indexed if a piece is not a dense column (its sparsity
    kept)."""
    if any(not col.is_dense() or col.size2() != 1 for at, col in pieces if len(at)):
        perm = np.full(n, -1, dtype=np.int64)
        first = 0
        for rows, _col in pieces:
            perm[rows] = first + np.arange(len(rows))
            first += len(rows)
        rest = np.flatnonzero(perm < 0)
        perm[rest] = first + np.arange(len(rest))
        return stack(*[col for _, col in pieces], cs.SX.zeros(len(rest), 1))[perm.tolist()]
    # (the rows of no piece are zeros; the others are assigned: no column of zeros of
    # every row made first)
    covered = np.zeros(n, dtype=bool)
    for at, _col in pieces:
        covered[at] = True
    out = blank(n)
    put(out, np.flatnonzero(~covered), cs.SX.zeros(n - int(covered.sum()), 1))
    for at, col in pieces:
        put(out, at, col)
    return out


def _take(col: cs.SX, rows: np.ndarray) -> cs.SX:
    """Rows ``rows`` of the column ``col`` (a 0 x 1 column for none)."""
    return take(col, rows)


def _list(a: Any) -> list[Any]:
    return a.tolist() if hasattr(a, "tolist") else list(a)
