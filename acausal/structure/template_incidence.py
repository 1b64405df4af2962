"""The structural incidence of the template groups' equations, composed per class.

A template group's member writes its class's equations on its own symbols
(:class:`~acausal.templates.Group`): row ``j`` of member ``i`` is the template's row ``j``
(:attr:`~acausal.templates.Template.sparsity`: the slots it holds, once for the class)
with every slot replaced by what it is for the member: a variable slot, the member's
unknown; a ``der`` slot, that unknown's derivative; a port slot, the port quantity (a
signed sum of the graph's unknowns, :mod:`acausal.graph_columns`, whose unknowns are
derived here from the graph's integer arrays); a parameter or shared slot, no unknown.
The composition is done with integer arrays for all members at once.

It is exact where the member's expression is the template's node for node: CasADi
rebuilds the template's operations on the member's inputs and simplifies only operands
that are constants or the same node (``x - x``, ``(x + y) - y``...), which needs two slots
that share an unknown or a slot that is a constant (a grounded across: 0). Such rows are
*bad*: their composed incidence is a superset of the true one (a simplification only
removes dependencies), and the alias pass forms it from their expressions on those
columns only. A port's through quantity whose terms cancel numerically (two edges at the
port sharing a chord) is a bad slot likewise: CasADi may or may not have cancelled it.
Rows not of a group (and groups or slots not handled here) are left to the caller.
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import attrgetter, itemgetter
from typing import Any

import numpy as np

from ..csr import offsets, spread

__all__ = ["EXACT", "SUPERSET", "UNKNOWN", "TemplateIncidence", "template_incidence"]

#: a row's incidence is exact / a superset of its structural incidence / not given
EXACT, SUPERSET, UNKNOWN = 0, 1, 2

#: potentials are composed along tree paths: past this many entries per vertex (a deep
#: tree), the graph's quantities are left to the caller
_MAX_PATH = 64

_MISSING = object()


class TemplateIncidence:
    """The incidence of the flat equations ``equations`` on the flat unknowns (``n_vars``
    of them) where the template groups give it: compressed rows ``(ptr, col)`` over all
    rows (sorted columns) and each row's ``kind`` (:data:`EXACT`, :data:`SUPERSET`,
    :data:`UNKNOWN`: empty)."""

    __slots__ = ("equations", "n_vars", "kind", "ptr", "col")

    def __init__(self, equations: list[Any], n_vars: int, kind: np.ndarray, ptr: np.ndarray,
                 col: np.ndarray) -> None:
        self.equations = equations
        self.n_vars = n_vars
        self.kind = kind
        self.ptr = ptr
        self.col = col

    def holds_for(self, equations: list[Any], n_vars: int) -> bool:
        """Whether this is the incidence of these equations (the same list, unchanged in
        length) on ``n_vars`` unknowns: a pass that rewrites equations makes a new list."""
        return (equations is self.equations and len(equations) == len(self.kind)
                and n_vars == self.n_vars)


class _Sets:
    """Per member, the unknowns of one slot: compressed rows ``(ptr, col)`` and the
    members for which the slot makes its rows bad (``bad``: a constant, or a sum that
    may have cancelled)."""

    __slots__ = ("ptr", "col", "bad")

    def __init__(self, ptr: np.ndarray, col: np.ndarray, bad: np.ndarray | None) -> None:
        self.ptr, self.col, self.bad = ptr, col, bad


def _gather(ptr: np.ndarray, col: np.ndarray, bad: np.ndarray, at: np.ndarray) -> _Sets:
    """Rows ``at`` of ``(ptr, col)``, with their ``bad`` flags."""
    lens = ptr[at + 1] - ptr[at]
    flags = bad[at]
    return _Sets(offsets(lens), col[spread(ptr[at], lens)], flags if flags.any() else None)


class _Graph:
    """The unknowns of every vertex potential and every port's through quantity (scalar
    domains), as :class:`~acausal.graph_columns.GraphColumns` forms them."""

    def __init__(self, cols: Any) -> None:
        g = cols.graph
        topo = g.topology
        at = np.asarray(cols.scalar_at, dtype=np.int64)  # edge -> its flat unknown
        m = len(at)
        # vertex potentials: the tree edges on the path from the root (a sum of distinct
        # unknowns: nothing cancels); a root, or a vertex on no edge, is zero (bad)
        depth = np.asarray(topo.depth, dtype=np.int64)
        parent = np.asarray(topo.parent, dtype=np.int64)
        pedge = np.asarray(topo.parent_edge, dtype=np.int64)
        self.vptr = offsets(depth)
        vcol = np.empty(int(self.vptr[-1]), dtype=np.int64)
        node = np.flatnonzero(depth > 0)
        pos, base = depth[node] - 1, self.vptr[node]
        while node.size:
            vcol[base + pos] = at[pedge[node]]
            node, pos = parent[node], pos - 1
            keep = pos >= 0
            node, pos, base = node[keep], pos[keep], base[keep]
        self.vcol = vcol
        self.vbad = depth == 0
        # edges' through quantities on the chords: a chord its own unknown, a tree edge
        # -D (its cutset's chords)
        in_tree = np.asarray(topo.in_tree, dtype=bool)
        tree, cot = np.flatnonzero(in_tree), np.flatnonzero(~in_tree)
        D = topo.D
        dptr = np.asarray(D.indptr, dtype=np.int64)
        dind = np.asarray(D.indices, dtype=np.int64)
        dval = -np.asarray(D.data, dtype=float)
        drow = np.repeat(np.arange(len(dptr) - 1, dtype=np.int64), np.diff(dptr))
        nz = dval != 0  # (CasADi's 0 * x is 0)
        e_edge = np.concatenate((cot, tree[drow[nz]]))
        e_chord = np.concatenate((np.arange(len(cot), dtype=np.int64), dind[nz]))
        e_val = np.concatenate((np.ones(len(cot)), dval[nz]))
        order = np.argsort(e_edge, kind="stable")
        eptr = offsets(np.bincount(e_edge, minlength=m))
        e_chord, e_val = e_chord[order], e_val[order]
        # ports' through quantities: + the edges with an initial end there, - a final end
        ends = np.asarray(g.edge_ports, dtype=np.int64)
        n_p = len(g.ports)
        port = ends.T.ravel()
        on = port >= 0
        edge = np.concatenate((np.arange(m, dtype=np.int64),) * 2)[on]
        sign = np.repeat([1.0, -1.0], m)[on]
        port = port[on]
        lens = eptr[edge + 1] - eptr[edge]
        take = spread(eptr[edge], lens)
        p_port = np.repeat(port, lens)
        p_chord = e_chord[take]
        p_val = np.repeat(sign, lens) * e_val[take]
        n_c = max(len(cot), 1)
        key = p_port * n_c + p_chord
        order = np.argsort(key, kind="stable")
        key, p_val = key[order], p_val[order]
        first = np.ones(len(key), dtype=bool)
        first[1:] = key[1:] != key[:-1]
        starts = np.flatnonzero(first)
        ukey = key[starts]
        total = np.add.reduceat(p_val, starts) if len(starts) else np.zeros(0)
        uport = ukey // n_c
        self.fptr = offsets(np.bincount(uport, minlength=n_p))
        self.fcol = at[cot[ukey % n_c]] if len(ukey) else np.zeros(0, dtype=np.int64)
        # (a chord whose terms cancel: CasADi may have dropped it, or not)
        cancelled = np.bincount(uport[total == 0], minlength=n_p) > 0
        self.fbad = cancelled | (np.diff(self.fptr) == 0)
        self.graph = g
        # the first port of each component (a template's class has graph ports only,
        # which follow in their declaration order)
        self._first_port = offsets(np.bincount(g.port_owner, minlength=len(g.components)))
        # whether the pool holds the joined flows of models' own ports (rows past the
        # edges' across and through, the potentials, the ports' throughs and a zero)
        self._joins = int(cols.pool.numel()) != 2 * m + len(depth) + n_p + 1

    def first_ports(self, members: list[Any], at: np.ndarray) -> np.ndarray | None:
        """The first port of each member (``at``: its position among the graph's
        components) in the graph's ports, or None where a member has another number of
        ports, or joins ports itself (a port of its own then carries joined flows)."""
        n_ports = len(members[0].__dict__["_ports"])
        first = self._first_port
        if not (first[at + 1] - first[at] == n_ports).all():
            return None
        if self._joins and any(map(itemgetter("_connections"),
                                   map(attrgetter("__dict__"), members))):
            return None
        return first[at]


def _positions(runs: Sequence[Any], components: list[Any]) -> dict[int, np.ndarray] | None:
    """Per template group (by id), each member's position among ``components`` (the
    graph's), from the flatten pass's runs (``(group, i, r)``: the members ``i`` to
    ``i + r - 1``, one after the other in the model; else a component), or None if the
    runs are not of these components."""
    out: dict[int, np.ndarray] = {}
    k = 0
    for item in runs:
        if type(item) is not tuple:
            k += 1
            continue
        grp, i, r = item
        members = grp.members
        if k + r > len(components) or components[k] is not members[i] \
                or components[k + r - 1] is not members[i + r - 1]:
            return None
        at = out.get(id(grp))
        if at is None:
            at = out[id(grp)] = np.full(len(members), -1, dtype=np.int64)
        at[i:i + r] = np.arange(k, k + r)
        k += r
    return out if k == len(components) else None


def _graph(cols: Any) -> _Graph | None:
    """:class:`_Graph` of the graph's columns, or None where they are not the common
    kind: vector quantities, an unknown per edge not in edge order, a deep tree."""
    g = cols.graph
    if any(d.across.size != 1 or d.through.size != 1 for d in g.domains):
        return None
    if len(cols.scalar_at) != len(g.edge_decls):
        return None
    depth = np.asarray(g.topology.depth, dtype=np.int64)
    if int(depth.sum()) > _MAX_PATH * max(len(depth), 1):
        return None
    return _Graph(cols)


def _slot_sets(grp: Any, s: int, n: int, base: np.ndarray, graph: _Graph,
               variables: list[Any], first: np.ndarray | None) -> _Sets | None | bool:
    """The unknowns of slot ``s`` for every member of ``grp``: :class:`_Sets`, None (no
    unknown: a parameter, a shared symbol) or False (not derived here; ``first``: each
    member's first port, :meth:`_Graph.positions`)."""
    slots = grp.tpl.slots
    slot = slots[s]
    kind = slot[0]
    one = np.arange(n + 1, dtype=np.int64)
    if kind == "var":
        return _Sets(one, base + slot[1], None)
    if kind in ("param", "shared"):
        return None
    if kind == "der":
        arg = slots[slot[1]]
        if arg[0] != "var":
            return False  # (der of a port quantity: the chain rule's unknowns)
        j = s - grp.tpl.n_in
        made, members = grp.der_at[j]
        if len(made) == n:
            ders = np.empty(n, dtype=np.int64)
            ders[np.asarray(members, dtype=np.int64)] = made
        else:
            got = [variables[k].der for k in (base + arg[1]).tolist()]
            if None in got:
                return False
            ders = np.asarray(got, dtype=np.int64)
        return _Sets(one, ders, None)
    _, pname, q, k = slot
    if k >= 0 or first is None:
        return False
    own = grp.members[0].__dict__["_ports"]
    at = first + list(own).index(pname)
    dom = own[pname].domain
    if q == dom.across.name:
        pv = graph.graph.port_vertices[at]
        if (pv < 0).any():  # (a port on no vertex: zero; rare, left to the caller)
            return False
        return _gather(graph.vptr, graph.vcol, graph.vbad, pv)
    return _gather(graph.fptr, graph.fcol, graph.fbad, at)


def template_incidence(groups: Sequence[tuple[Any, Sequence[int]]], runs: Sequence[Any],
                       cols: Any, variables: list[Any], equations: list[Any]
                       ) -> TemplateIncidence | None:
    """The incidence of the groups' rows of ``equations`` on ``variables`` (``groups``:
    each group with its members' first rows; ``runs``: the components in model order,
    with a group's members one after the other as ``(group, i, r)``; ``cols``: the
    graph's :class:`~acausal.graph_columns.GraphColumns`), or None where the graph's
    quantities are not derived here (:func:`_graph`)."""
    m, nv = len(equations), len(variables)
    kind = np.full(m, UNKNOWN, dtype=np.int8)
    graph = _graph(cols) if groups else None
    where = _positions(runs, cols.graph.components) if graph is not None else None
    if graph is None or where is None:
        return None
    rows_parts: list[np.ndarray] = []
    cols_parts: list[np.ndarray] = []
    bad_parts: list[np.ndarray] = []
    unknown_parts: list[np.ndarray] = []
    for grp, member_firsts in groups:
        n = len(grp.members)
        firsts = np.asarray(member_firsts, dtype=np.int64)
        if len(firsts) != n:
            continue
        tptr, tcol = grp.tpl.sparsity
        base = np.asarray(grp.var_base, dtype=np.int64)
        at = where.get(id(grp))
        first = (graph.first_ports(grp.members, at)
                 if at is not None and grp.members[0].__dict__["_ports"] else None)
        sets: dict[int, Any] = {}
        for j in range(grp.tpl.n_eq):
            rows = firsts + j
            kind[rows] = EXACT
            for s in tcol[tptr[j]:tptr[j + 1]].tolist():
                got = sets.get(s, _MISSING)
                if got is _MISSING:
                    got = sets[s] = _slot_sets(grp, s, n, base, graph, variables, first)
                if got is None:
                    continue
                if got is False:
                    unknown_parts.append(rows)
                    continue
                rows_parts.append(np.repeat(rows, np.diff(got.ptr)))
                cols_parts.append(got.col)
                if got.bad is not None:
                    bad_parts.append(rows[got.bad])
    r = np.concatenate(rows_parts) if rows_parts else np.zeros(0, dtype=np.int64)
    c = np.concatenate(cols_parts) if cols_parts else np.zeros(0, dtype=np.int64)
    key = np.sort(r * max(nv, 1) + c, kind="stable")
    dup = np.zeros(len(key), dtype=bool)
    dup[1:] = key[1:] == key[:-1]
    # (two slots sharing an unknown: CasADi may have simplified their terms)
    bad_parts.append(key[dup] // max(nv, 1))
    key = key[~dup]
    for rows in bad_parts:
        kind[rows] = SUPERSET
    for rows in unknown_parts:
        kind[rows] = UNKNOWN
    row = key // max(nv, 1)
    keep = kind[row] != UNKNOWN
    row, key = row[keep], key[keep]
    ptr = offsets(np.bincount(row, minlength=m))
    return TemplateIncidence(equations, nv, kind, ptr, key % max(nv, 1))
