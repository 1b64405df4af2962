"""The relations pass's proof that a model has no relation of its unknowns, on the few
equations not proven free for their class: made on the unknowns those equations hold
(not a seed per unknown of the model), it finds the same relations as before."""

from __future__ import annotations

import casadi as cs
import pytest
from models import Kinked

import acausal as ac
from acausal import relations, templates
from components import translational as tr


class Smooth(ac.Component):
    """The same without the kink (its own class: a subclass inherits the equations)."""

    flange = tr.Flange()
    c = ac.Parameter(1.0)
    s = ac.Variable(start=0.5)
    edges = [ac.Edge(ac.DATUM, "flange")]

    def equations(self):
        return [self.s == self.flange.s,
                self.flange.f == -ac.fabs(self.c) * self.s - ac.der(self.s)]


class Chain(ac.Model):
    """Many alike masses and springs (template groups: proven free once) and one end."""

    def __init__(self, n: int, end: type[ac.Component]) -> None:
        super().__init__()
        self.fixed = tr.Fixed()
        self.masses = [tr.Mass(m=1.0, s=0.0, v=0.0) for _ in range(n)]
        self.springs = [tr.SpringDamper(c=10.0, d=1.0) for _ in range(n)]
        self.end = end(c=2.0)
        prev = self.fixed.flange
        for m, s in zip(self.masses, self.springs, strict=True):
            self.connect(prev, s.flange_a)
            self.connect(s.flange_b, m.flange_a)
            prev = m.flange_b
        self.connect(prev, self.end.flange)


@pytest.mark.parametrize("end, n_relations", [(Kinked, 1), (Smooth, 0)])
def test_the_proof_on_the_unknowns_of_the_rows_left(end, n_relations, monkeypatch):
    seen = []
    proof = relations.no_relation_of

    def spy(F: cs.SX, unknowns: cs.SX) -> bool:
        seen.append(int(unknowns.numel()))
        return proof(F, unknowns)

    monkeypatch.setattr(relations, "no_relation_of", spy)
    monkeypatch.setattr(templates, "MIN_GROUP", 2)  # (groups at this size)
    cm = ac.build(Chain(30, end))
    assert seen and seen[0] < 20 < len(cm.flat.variables)  # (the rows' unknowns only)
    rels = [p for p in cm.flat.parameters if p.kind == "relation"]
    assert len(rels) == n_relations
    assert [p.doc for p in rels] == (["fmax(end.s, 0): end.s <= 0"] if n_relations else [])
