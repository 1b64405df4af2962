"""Scalable models shared by the benchmark scripts."""

import acausal as ac
from components import electrical as el
from components import translational as tr


class RCLadder(ac.Model):
    """A voltage source feeding N resistor-capacitor stages."""

    def __init__(self, N: int):
        super().__init__()
        self.source = el.ConstantVoltage(V=1.0)
        self.ground = el.Ground()
        self.r = [el.Resistor(R=1.0) for _ in range(N)]
        self.c = [el.Capacitor(C=1e-3, v=0.0) for _ in range(N)]
        self.connect(self.source.n, self.ground.p)
        prev = self.source.p
        for r, c in zip(self.r, self.c, strict=True):
            self.connect(prev, r.p)
            self.connect(r.n, c.p)
            self.connect(c.n, self.ground.p)
            prev = r.n


class MassSpringChain(ac.Model):
    """N masses joined by spring-dampers, the first to a fixed point, a force on the last."""

    def __init__(self, N: int, m: float = 1.0, c: float = 1e3, d: float = 1.0):
        super().__init__()
        self.fixed = tr.Fixed()
        self.masses = [tr.Mass(m=m, s=0.0, v=0.0) for _ in range(N)]
        self.springs = [tr.SpringDamper(c=c, d=d) for _ in range(N)]
        self.force = tr.Force(f=1.0)
        prev = self.fixed.flange
        for mass, spring in zip(self.masses, self.springs, strict=True):
            self.connect(prev, spring.flange_a)
            self.connect(spring.flange_b, mass.flange_a)
            prev = mass.flange_b
        self.connect(prev, self.force.flange)
