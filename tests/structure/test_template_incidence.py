"""The template groups' incidence composed per class (issue 14) is CasADi's, row by row.

The flatten pass composes the structural incidence of a group's rows from its template's
(once per class) and what each slot is for each member, the port quantities' unknowns
from the graph's arrays (:mod:`acausal.structure.template_incidence`). Where it says a
row's incidence is exact, it must be ``jacobian_sparsity`` of the row's residual on the
flat unknowns; where it gives a superset (CasADi may have simplified), a superset; and
the alias pass's first incidence must be the one the whole column's Jacobian gives.
"""

from __future__ import annotations

import random

import casadi as cs
import numpy as np
import pytest
from fuzz_models import LIBRARY, REFERENCE, FuzzModel, port_domains
from models import RC, DCMotor, ForcedChain, HeatedMass, Kinked, MassSpringDamper, SeriesRLC

import acausal as ac
from acausal import templates
from acausal.flatten import flatten_pass
from acausal.graph import graph_pass
from acausal.relations import relations_pass
from acausal.state import CompileState
from acausal.structure import alias
from acausal.structure.system import flat_columns
from acausal.structure.template_incidence import EXACT, SUPERSET, UNKNOWN
from components import electrical as el
from components import translational as tr


def _flat(model):
    return flatten_pass(graph_pass(CompileState(model, None))).flat


def _check(fs) -> np.ndarray:
    """Compare the composed incidence with CasADi's; the rows' kinds."""
    ti = fs.template_incidence
    R, X = flat_columns(fs)
    ptr, col = (np.asarray(a) for a in cs.jacobian_sparsity(R, X).get_crs())
    for r, kind in enumerate(ti.kind.tolist()):
        want = col[ptr[r]:ptr[r + 1]].tolist()
        got = ti.col[ti.ptr[r]:ti.ptr[r + 1]].tolist()
        if kind == EXACT:
            assert got == want, (fs.equations[r].describe(), got, want)
        elif kind == SUPERSET:
            assert set(want) <= set(got), (fs.equations[r].describe(), got, want)
        else:
            assert got == []
    hidden = alias._hidden(fs)
    whole = alias._incidence(R, X, np.arange(len(fs.equations)), hidden)
    first = alias._first_incidence(fs, R, X, hidden)
    assert np.array_equal(whole[0], first[0]) and np.array_equal(whole[1], first[1])
    return ti.kind


class _Mixed(ac.Model):
    """Groups on a shared node and in series: ports at several edges, grounded
    acrosses (constant slots), a leaf that joins two of its own ports."""

    def __init__(self, n: int = 5) -> None:
        super().__init__()
        self.gnd = el.Ground()
        self.src = el.SineVoltage(V=1.0, f=2.0)
        self.rs = [el.Resistor(R=1.0 + k) for k in range(n)]
        self.cs = [el.Capacitor(C=1e-3 * (1 + k)) for k in range(n)]
        self.ls = [el.Inductor(L=1e-2) for _ in range(n)]
        self.connect(self.src.p, *[r.p for r in self.rs])
        self.connect(self.src.n, self.gnd.p, *[c.n for c in self.cs], *[l.n for l in self.ls])
        for r, c, l in zip(self.rs, self.cs, self.ls, strict=True):
            self.connect(r.n, c.p, l.p)
        self.fixed = tr.Fixed()
        self.masses = [tr.Mass(m=1.0) for _ in range(n)]
        self.springs = [tr.Spring(c=10.0) for _ in range(n)]
        for m, s in zip(self.masses, self.springs, strict=True):
            self.connect(self.fixed.flange, s.flange_a, m.flange_a)
            self.connect(s.flange_b, m.flange_b)
        self.springs[0].connect(self.springs[0].flange_b, self.masses[0].flange_b)


def _random_model(seed: int) -> FuzzModel:
    """Library components, several of a kind (template groups of 2 and more), on random
    nodes."""
    rng = random.Random(seed)

    def nodes(ports: dict[str, str]) -> dict[str, int]:  # (distinct nodes)
        return dict(zip(ports, rng.sample(range(7), len(ports)), strict=True))

    comps = []
    domains: set[str] = set()
    for kind in rng.choices(sorted(LIBRARY), k=rng.randint(1, 4)):
        ports = port_domains(kind)
        for _ in range(rng.randint(2, 6)):
            comps.append({"kind": kind, "params": {}, "starts": {}, "nodes": nodes(ports)})
        domains |= set(ports.values())
    for d in sorted(domains):
        ports = port_domains(REFERENCE[d])
        for _ in range(rng.randint(1, 3)):
            comps.append({"kind": REFERENCE[d], "params": {}, "starts": {},
                          "nodes": nodes(ports)})
    return FuzzModel({"components": comps})


class _Twice(ac.Model):
    """Two copies of a test model (their components: groups of two)."""

    def __init__(self, cls: type) -> None:
        super().__init__()
        self.a, self.b = cls(), cls()


@pytest.mark.parametrize("make", [
    lambda: ForcedChain(8, mass=lambda k: 1.0 + k, force=lambda t: np.sin(t)), _Mixed,
    *[lambda cls=cls: _Twice(cls) for cls in (RC, SeriesRLC, MassSpringDamper, DCMotor,
                                              HeatedMass)],
], ids=["chain", "mixed", "rc", "rlc", "msd", "motor", "heated"])
def test_composed_incidence_is_casadis(make, monkeypatch):
    monkeypatch.setattr(templates, "MIN_GROUP", 2)
    fs = _flat(make())
    kinds = _check(fs)
    assert (kinds == EXACT).any()


def test_composed_incidence_of_random_models(monkeypatch):
    monkeypatch.setattr(templates, "MIN_GROUP", 2)
    checked = 0
    counts = np.zeros(3, dtype=np.int64)
    for seed in range(60):
        try:
            fs = _flat(_random_model(seed))
        except ac.AcausalError:
            continue  # (a topology the graph pass rejects)
        if fs.template_incidence is None:
            continue
        counts += np.bincount(_check(fs), minlength=3)
        checked += 1
    assert checked >= 20
    assert counts[EXACT] > counts[SUPERSET] > 0 and counts[UNKNOWN] > 0


def test_a_rewritten_system_does_not_take_the_composed_incidence(monkeypatch):
    """The relations pass rewrites the equations (a frozen relation): the incidence
    composed for the flat system's rows is not taken for the new ones."""

    class Kinks(ac.Model):
        def __init__(self):
            super().__init__()
            self.kinks = [Kinked(c=1.0 + k) for k in range(3)]

    monkeypatch.setattr(templates, "MIN_GROUP", 2)
    state = flatten_pass(graph_pass(CompileState(Kinks(), None)))
    fs = state.flat
    assert fs.template_incidence.holds_for(fs.equations, len(fs.variables))
    frozen = relations_pass(state).flat
    assert frozen is not fs and frozen.template_incidence is fs.template_incidence
    assert not frozen.template_incidence.holds_for(frozen.equations, len(frozen.variables))
    assert ac.build(Kinks()).dae is not None
