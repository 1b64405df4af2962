"""Linear-graph topology: the chapter's Fig. 1 matrices and property tests on random graphs."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import acausal as ac
from acausal.topology import Topology, cutset_matrix_by_row_operations, incidence_matrix
from components import translational as tr

# Fig. 1(b) of Richard (2012), seeds/000: vertices 1..5 and the datum (row 6), edges e1..e8.
K_FIG1 = np.array(
    [
        [1, -1, -1, 0, 0, 0, 0, 0],
        [0, 1, 0, 0, 0, 0, 1, 0],
        [0, 0, 1, 0, 0, 1, 0, 1],
        [0, 0, 0, 1, 0, -1, 0, 0],
        [0, 0, 0, 0, 1, 0, -1, -1],
        [-1, 0, 0, -1, -1, 0, 0, 0],
    ]
)
# eq. (2) (from the other text extraction, seeds/001): [U_t D], tree e1..e5
UD_FIG1 = np.array(
    [
        [1, 0, 0, 0, 0, 1, 1, 1],
        [0, 1, 0, 0, 0, 0, 1, 0],
        [0, 0, 1, 0, 0, 1, 0, 1],
        [0, 0, 0, 1, 0, -1, 0, 0],
        [0, 0, 0, 0, 1, 0, -1, -1],
    ]
)
# eq. (4): [E U_c]
EU_FIG1 = np.array(
    [
        [-1, 0, -1, 1, 0, 1, 0, 0],
        [-1, -1, 0, 0, 1, 0, 1, 0],
        [-1, 0, -1, 0, 1, 0, 0, 1],
    ]
)


def _edges_from_incidence(K):
    return [(int(np.flatnonzero(K[:, j] == -1)[0]), int(np.flatnonzero(K[:, j] == 1)[0]))
            for j in range(K.shape[1])]


def test_fig1_matrices_from_topology():
    edges = _edges_from_incidence(K_FIG1)
    topo = Topology(6, edges, {5}, forced=[0, 1, 2, 3, 4])
    assert topo.tree == [0, 1, 2, 3, 4]
    np.testing.assert_array_equal(topo.incidence(), K_FIG1)
    np.testing.assert_array_equal(topo.cutset_matrix(), UD_FIG1)
    np.testing.assert_array_equal(topo.circuit_matrix(), EU_FIG1)
    # E = -D^T (the negative transpose principle, eq. 3)
    D = UD_FIG1[:, 5:]
    np.testing.assert_array_equal(EU_FIG1[:, :5], -D.T)


class Fig1(ac.Model):
    """The spring-dashpot body of Fig. 1 built from 1D translational components: the body
    (e1), two rigid arms (e2, e3), two displacement drivers (e4, e5), two springs (e6, e7)
    and a dashpot (e8)."""

    def __init__(self):
        super().__init__()
        self.body = tr.Mass(m=2.0)  # e1: datum -> body vertex (plus its rigid flange edge)
        self.arm2 = tr.ForceSensor()  # rigid arm e2 (zero-length rigid edge)
        self.arm3 = tr.ForceSensor()  # rigid arm e3
        self.driver4 = tr.Position(s_ref=lambda t: 0.1 * np.sin(t))  # e4
        self.driver5 = tr.Position(s_ref=0.0)  # e5
        self.spring6 = tr.Spring(c=100.0)  # e6: vertex 4 -> vertex 3
        self.spring7 = tr.Spring(c=50.0)  # e7: vertex 5 -> vertex 2
        self.damper8 = tr.Damper(d=3.0)  # e8: vertex 5 -> vertex 3
        self.connect(self.body.flange_a, self.arm2.flange_a, self.arm3.flange_a)
        self.connect(self.arm2.flange_b, self.spring7.flange_b)
        self.connect(self.arm3.flange_b, self.spring6.flange_b, self.damper8.flange_b)
        self.connect(self.driver4.flange, self.spring6.flange_a)
        self.connect(self.driver5.flange, self.spring7.flange_a, self.damper8.flange_a)


def test_fig1_model_graph_is_the_chapters():
    cm = ac.build(Fig1())
    g = cm.graph
    # the Mass adds its rigid flange_a->flange_b edge and its own free vertex (flange_b)
    names = [e.name for e in g.edges]
    assert "body[datum->flange_a]" in names
    assert len([v for v in g.vertices if v.is_datum]) == 1
    # springs and the dashpot are chords, drivers, arms and the body are branches
    cot = {e.component.path() for e in g.cotree}
    assert {"spring6", "spring7", "damper8"} <= cot
    assert not {"driver4", "driver5", "arm2", "arm3"} & cot
    # D from tree paths equals A_T^-1 A_C from row operations
    topo = g.topology
    datum = g.datum["translational"]
    D_rows = cutset_matrix_by_row_operations(len(g.vertices), topo.edges, topo.tree, datum)
    np.testing.assert_allclose(topo.D.toarray(), D_rows, atol=1e-12)
    # and the model simulates: cutset of the body is the d'Alembert force balance
    res = ac.simulate(cm, 2.0, rtol=1e-9, atol=1e-11)
    f_in = res["body.flange_a.f"] + res["body.flange_b.f"]
    np.testing.assert_allclose(2.0 * res["body.a"], f_in, atol=1e-9)


@st.composite
def random_connected_graph(draw):
    n = draw(st.integers(2, 9))
    edges = []
    for v in range(1, n):  # random spanning tree
        u = draw(st.integers(0, v - 1))
        edges.append((u, v) if draw(st.booleans()) else (v, u))
    extra = draw(st.integers(0, 2 * n))
    for _ in range(extra):
        a = draw(st.integers(0, n - 1))
        b = draw(st.integers(0, n - 1))
        if a != b:
            edges.append((a, b))
    order = draw(st.permutations(range(len(edges))))
    edges = [edges[k] for k in order]
    prio = draw(st.lists(st.integers(0, 4), min_size=len(edges), max_size=len(edges)))
    return n, edges, prio


@settings(max_examples=150, deadline=None)
@given(random_connected_graph())
def test_cutset_and_circuit_properties(graph):
    n, edges, prio = graph
    topo = Topology(n, edges, {0}, priorities=prio)
    assert len(topo.tree) == n - 1
    assert len(topo.cotree) == len(edges) - n + 1
    D_rows = cutset_matrix_by_row_operations(n, edges, topo.tree, 0)
    np.testing.assert_allclose(topo.D.toarray(), D_rows, atol=1e-12)  # exact integers
    UD = topo.cutset_matrix()
    EU = topo.circuit_matrix()
    np.testing.assert_array_equal(UD @ EU.T, np.zeros((n - 1, len(topo.cotree))))
    # cutsets are row combinations of the incidence matrix
    K = incidence_matrix(n, edges)
    perm = topo.tree + topo.cotree
    A = np.delete(K, 0, axis=0)[:, perm]
    coeff, *_ = np.linalg.lstsq(A.T, UD.T, rcond=None)
    np.testing.assert_allclose(A.T @ coeff, UD.T, atol=1e-9)


def test_tree_override_and_loop_error():
    edges = [(0, 1), (1, 2), (2, 0)]
    topo = Topology(3, edges, {0}, forced=[2])
    assert 2 in topo.tree
    with pytest.raises(ac.TopologyError, match="closed loop"):
        cm_model = Fig1()
        ac.build(cm_model, tree=["spring6", "spring7", "damper8", "driver5", "driver4"])


@st.composite
def random_graph(draw):
    """Any oriented graph: several components (some without a datum), parallel edges,
    self-loops, priorities and forced edges (some closing loops)."""
    n = draw(st.integers(1, 14))
    m = draw(st.integers(0, 3 * n))
    edges = [(draw(st.integers(0, n - 1)), draw(st.integers(0, n - 1))) for _ in range(m)]
    roots = draw(st.sets(st.integers(0, n - 1), max_size=3))
    prio = draw(st.none() | st.lists(st.integers(0, 3), min_size=m, max_size=m))
    forced = draw(st.lists(st.integers(0, m - 1), max_size=4)) if m else []
    return n, edges, roots, prio, forced


@settings(max_examples=300, deadline=None)
@given(random_graph())
def test_the_forest_in_bulk_is_the_forest_edge_by_edge(graph):
    """Large graphs take their spanning forest, parents and breadth-first order from
    array routines: the same tree, signs, depths and orders as the edge by edge
    construction of small graphs (the tree choice is part of the model's result)."""
    import acausal.topology as topology

    n, edges, roots, prio, forced = graph
    made = []
    saved = topology.ARRAY_GRAPH_MIN
    try:
        for limit in (10**9, 0):
            topology.ARRAY_GRAPH_MIN = limit
            made.append(Topology(n, edges, roots, priorities=prio, forced=forced))
    finally:
        topology.ARRAY_GRAPH_MIN = saved
    a, b = made
    for name in ("tree", "cotree", "order", "floating", "forced_loop"):
        assert getattr(a, name) == getattr(b, name), name
    for name in ("in_tree", "parent", "parent_edge", "parent_sign", "depth", "root_of"):
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype and np.array_equal(x, y), name
    if not a.floating:
        for name in ("indptr", "indices", "data"):
            np.testing.assert_array_equal(getattr(a.D, name), getattr(b.D, name))
        if a.tree and len(roots) == 1:  # D from tree paths: A_T^-1 A_C
            K = incidence_matrix(n, edges)
            used = sorted({v for e in edges for v in e} - roots)
            if len(used) == len(a.tree) and all(a != b for a, b in edges):
                A = K[used]
                np.testing.assert_allclose(
                    a.D.toarray(), np.linalg.solve(A[:, a.tree], A[:, a.cotree]), atol=1e-9)


def test_a_long_chain_walks_its_chords_in_bulk():
    """A ring of 3000 vertices: long tree paths (the chords' paths walked a step at a
    time for all chords, the last ones one by one) give the textbook D."""
    n = 3000
    edges = [(k, k + 1) for k in range(n - 1)] + [(0, n - 1), (n // 2, n - 1), (7, n // 3)]
    topo = Topology(n, edges, {0}, priorities=[0] * (n - 1) + [1, 1, 1])
    assert topo.tree == list(range(n - 1))
    D = topo.D.toarray()
    np.testing.assert_array_equal(D[:, 0], np.ones(n - 1))  # x_{n-1} - x_0: the whole path
    np.testing.assert_array_equal(D[:, 1], (np.arange(n - 1) >= n // 2).astype(float))
    np.testing.assert_array_equal(D[:, 2], ((np.arange(n - 1) >= 7)
                                            & (np.arange(n - 1) < n // 3)).astype(float))


@pytest.mark.parametrize("name", ["MassSpringChain", "RCLadder", "DCMotor",
                                  "CommonEmitterAmplifier", "Fig1"])
def test_large_graphs_are_the_same_graphs(name, monkeypatch):
    """The connection sets and the forest of a large model come from array routines:
    the same vertices, edges, tree and orders as a small model's."""
    import _models
    import models

    import acausal.graph as graph
    import acausal.topology as topology

    make = {"MassSpringChain": lambda: _models.MassSpringChain(40),
            "RCLadder": lambda: _models.RCLadder(30), "Fig1": Fig1,
            "DCMotor": models.DCMotor,
            "CommonEmitterAmplifier": _models.CommonEmitterAmplifier}[name]
    model = make()
    made = []
    for limit in (10**9, 0):
        monkeypatch.setattr(topology, "ARRAY_GRAPH_MIN", limit)
        monkeypatch.setattr(graph, "ARRAY_GRAPH_MIN", limit)
        made.append(graph.LinearGraph(model))
    a, b = made
    assert a.listing() == b.listing()
    assert a.port_vertex == b.port_vertex and a.datum == b.datum
    assert [[id(p) for p in v.ports] for v in a.vertices] == \
        [[id(p) for p in v.ports] for v in b.vertices]
    for name in ("tree", "cotree", "order", "floating"):
        assert getattr(a.topology, name) == getattr(b.topology, name)
    for name in ("parent", "parent_edge", "parent_sign", "depth", "root_of"):
        np.testing.assert_array_equal(getattr(a.topology, name), getattr(b.topology, name))
