"""The flatten pass's graph quantities (acausal.graph_columns) obey the graph's own laws.

At random values of every unknown, on random resistor networks (enough resistors to be
written by a template, so most ports are bound lazily) with a two-port sub-model whose own
ports carry the sum of the inner flows:

* every edge's across quantity is ``x_final - x_initial`` of its end ports' potentials;
* Kirchhoff's current law holds at every vertex (``K TV = 0``);
* a port's through quantity is the signed sum of its component's edges at that port
  (+ at an edge's initial end, - at its final end);
* a sub-model's own port carries the sum of the flows of the inner ports joined to it.

These are the textbook relations (Richard 2012 section 2), checked numerically instead of
against the implementation's own path sums.
"""

import casadi as cs
import numpy as np
import pytest

import acausal as ac
from acausal.compiler import PASSES
from acausal.state import CompileState
from components import electrical as el


class Divider(ac.Model):
    """Two resistors in series between its own pins a and b (mid node inside)."""

    a = el.Pin()
    b = el.Pin()

    def __init__(self):
        super().__init__()
        self.r1 = el.Resistor(R=1.0)
        self.r2 = el.Resistor(R=2.0)
        self.connect(self.a, self.r1.p)
        self.connect(self.r1.n, self.r2.p)
        self.connect(self.r2.n, self.b)


class Network(ac.Model):
    def __init__(self, n_nodes, branches):
        super().__init__()
        self.ground = el.Ground()
        self.source = el.ConstantVoltage(V=1.0)
        self.div = Divider()
        nodes = [[self.ground.p, self.source.n, self.div.b], [self.source.p, self.div.a]]
        nodes += [[] for _ in range(n_nodes - 1)]
        self.res = []
        for a, b, r in branches:
            comp = el.Resistor(R=r)
            self.res.append(comp)
            nodes[a].append(comp.p)
            nodes[b].append(comp.n)
        for ports in nodes:
            if len(ports) > 1:
                self.connect(*ports)


def _flat(model):
    st = CompileState(model, None)
    st = PASSES[0].run(st)
    return PASSES[1].run(st).flat


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_graph_columns_obey_kirchhoff(seed):
    rng = np.random.default_rng(seed)
    n = 12
    branches = [(int(rng.integers(0, v)), v, float(rng.uniform(1, 5))) for v in range(1, n + 1)]
    branches += [(int(a), int(b), float(rng.uniform(1, 5)))
                 for a, b in rng.integers(0, n + 1, size=(50, 2)) if a != b]
    model = Network(n, branches)
    flat = _flat(model)
    g = flat.graph
    names = list(flat.outputs)
    col = cs.vertcat(*[cs.vec(cs.SX(flat.outputs[k])) for k in names])
    f = cs.Function("f", [cs.vertcat(*[v.sym for v in flat.variables])], [col])
    value = dict(zip(names, np.asarray(f(rng.normal(size=len(flat.variables)))).ravel(),
                     strict=True))
    path = {id(c): c.path() for c in model.walk()}

    def port_q(p, q):
        return value[f"{path[id(p.owner)]}.{p.name}.{q}"]

    K = np.zeros((len(g.vertices), len(g.edges)))
    TV = np.zeros(len(g.edges))
    flow = {}  # port -> signed sum of its edges' through quantities
    for e in g.edges:
        ports = e.component.ports()
        TV[e.index] = value[f"{e.name}.i"]
        K[e.initial, e.index] -= 1.0
        K[e.final, e.index] += 1.0
        x_i = port_q(ports[e.decl.initial], "v") if e.decl.initial is not ac.DATUM else 0.0
        x_f = port_q(ports[e.decl.final], "v") if e.decl.final is not ac.DATUM else 0.0
        # (1e-12: sums of a few O(1) normal deviates in double precision)
        assert value[f"{e.name}.v"] == pytest.approx(x_f - x_i, abs=1e-12)
        for end, sign in ((e.decl.initial, 1.0), (e.decl.final, -1.0)):
            if end is not ac.DATUM:
                flow[id(ports[end])] = flow.get(id(ports[end]), 0.0) + sign * TV[e.index]
    np.testing.assert_allclose(K @ TV, 0.0, atol=1e-12)  # (same reason)
    for c in model.walk():
        for p in c.ports().values():
            if id(p) in flow:
                assert port_q(p, "i") == pytest.approx(flow[id(p)], abs=1e-12)
    # the sub-model's pins carry its resistors' flows at those pins
    div = model.div
    assert port_q(div.a, "i") == pytest.approx(port_q(div.r1.p, "i"), abs=1e-12)
    assert port_q(div.b, "i") == pytest.approx(port_q(div.r2.n, "i"), abs=1e-12)
    assert port_q(div.a, "v") == pytest.approx(port_q(div.r1.p, "v"), abs=1e-12)
    # the resistors were written by a template, their ports bound on demand only
    assert len(model.res) >= 40


class Ladder(ac.Model):
    """A source feeding 40 resistors in parallel (written by a template); the model's own
    equation reads one resistor's port current (a lazily bound port quantity)."""

    i_total = ac.Variable(unit="A")

    def __init__(self, n=40):
        super().__init__()
        self.ground = el.Ground()
        self.source = el.ConstantVoltage(V=2.0)
        self.res = [el.Resistor(R=float(k + 1)) for k in range(n)]
        self.connect(self.source.p, *[r.p for r in self.res])
        self.connect(self.source.n, self.ground.p, *[r.n for r in self.res])

    def equations(self):
        return [self.i_total == self.res[3].p.i * 4.0]


def test_a_templated_components_port_read_by_its_parent():
    model = Ladder()
    res = ac.simulate(model, 0.1, n_points=3)
    # resistor 3 (R = 4 ohm) at 2 V carries 0.5 A into its pin p: i_total = 4 * 0.5
    # (1e-9: the algebraic solve's tolerance on an exact linear system)
    assert res["i_total"][-1] == pytest.approx(2.0, abs=1e-9)
    assert res["res[3].p.i"][-1] == pytest.approx(0.5, abs=1e-9)


@pytest.mark.parametrize("seed", [0, 1])
def test_potentials_a_level_at_a_time_are_the_vertex_by_vertex_ones(seed, monkeypatch):
    """The vertex potentials formed a tree level at a time (wide trees) are the same
    expressions as formed vertex by vertex (deep trees): the same flat system."""
    import acausal.graph_columns as graph_columns

    rng = np.random.default_rng(seed)
    n = 12
    branches = [(int(rng.integers(0, v)), v, float(rng.uniform(1, 5))) for v in range(1, n + 1)]
    branches += [(int(a), int(b), float(rng.uniform(1, 5)))
                 for a, b in rng.integers(0, n + 1, size=(20, 2)) if a != b]
    made = []
    for per_level in (1, 10**9):  # every tree by levels; only trees of 2 levels
        monkeypatch.setattr(graph_columns, "VERTICES_PER_LEVEL", per_level)
        flat = _flat(Network(n, branches))
        made.append(([str(e.res) for e in flat.equations],
                     {k: str(flat.outputs[k]) for k in flat.outputs}))
    assert max(flat.graph.topology.depth) > 2  # (both ways taken)
    assert made[0] == made[1]


def test_an_edges_unknown_and_its_output_share_one_name_string():
    """An edge's output named as its primary unknown (a tree branch's across, a chord's
    through quantity) is the unknown's own name string: the same name, held once."""
    rng = np.random.default_rng(0)
    branches = [(int(rng.integers(0, v)), v, 1.0) for v in range(1, 9)]
    flat = _flat(Network(8, branches))
    names = flat.outputs.block[0]
    shared = [names[k] for k in flat.outputs.unknowns.tolist()]
    assert len(shared) == len(flat.graph.edge_decls)
    assert all(n is flat.variables[flat.index[n]].name for n in shared)
