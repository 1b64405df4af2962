"""Scalable models shared by the benchmark scripts (and the tests of the solvers)."""

import acausal as ac
from components import electrical as el
from components import multibody as mb
from components import translational as tr


class RCLadder(ac.Model):
    """A voltage step into N resistor-capacitor stages: decay rates from ~1/(N^2 RC) to
    4/(RC), all real (a stiff ODE for N >> 1)."""

    def __init__(self, N: int = 40, R: float = 1.0, C: float = 1e-3):
        super().__init__()
        self.source = el.ConstantVoltage(V=1.0)
        self.ground = el.Ground()
        self.r = [el.Resistor(R=R) for _ in range(N)]
        self.c = [el.Capacitor(C=C, v=0.0) for _ in range(N)]
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


class NPN(ac.Component):
    """Ebers-Moll NPN transistor written by a user (exponential junctions, no limiting).

    Ports b, c, e; collector and base currents ``ic = ibe - ibc (1 + 1/br)``,
    ``ib = ibe / bf + ibc / br`` with ``ibe = Is (exp(vbe / Vt) - 1)``.
    """

    b = el.Pin("base")
    c = el.Pin("collector")
    e = el.Pin("emitter")
    Is = ac.Parameter(1e-14, unit="A", doc="saturation current", min=0.0)
    Vt = ac.Parameter(0.02585, unit="V", doc="thermal voltage", min=0.0)
    bf = ac.Parameter(100.0, unit="1", doc="forward current gain", min=0.0)
    br = ac.Parameter(1.0, unit="1", doc="reverse current gain", min=0.0)
    vbe = ac.Variable(unit="V", doc="base-emitter voltage")
    vbc = ac.Variable(unit="V", doc="base-collector voltage")
    edges = [ac.Edge("b", "e"), ac.Edge("c", "e")]

    def equations(self):
        import casadi as cs

        ibe = self.Is * (cs.exp(self.vbe / self.Vt) - 1)
        ibc = self.Is * (cs.exp(self.vbc / self.Vt) - 1)
        return [self.vbe == self.b.v - self.e.v, self.vbc == self.b.v - self.c.v,
                self.b.i == ibe / self.bf + ibc / self.br,
                self.c.i == ibe - ibc * (1 + 1 / self.br)]


class CommonEmitterAmplifier(ac.Model):
    """A stiff 8-node circuit: voltage-divider-biased common-emitter stage with coupling
    and bypass capacitors, driven by a 1 kHz sine."""

    def __init__(self):
        super().__init__()
        self.vcc = el.ConstantVoltage(V=12.0)
        self.vin = el.SineVoltage(V=0.05, f=1000.0)
        self.cin = el.Capacitor(C=10e-6, v=ac.guess(0.0))
        self.r1 = el.Resistor(R=47e3)
        self.r2 = el.Resistor(R=10e3)
        self.rc = el.Resistor(R=4.7e3)
        self.re = el.Resistor(R=1e3)
        self.ce = el.Capacitor(C=100e-6, v=ac.guess(0.0))
        self.cout = el.Capacitor(C=10e-6, v=ac.guess(0.0))
        self.rl = el.Resistor(R=10e3)
        self.q = NPN()
        self.gnd = el.Ground()
        self.connect(self.vin.p, self.cin.p)
        self.connect(self.cin.n, self.r1.n, self.r2.p, self.q.b)
        self.connect(self.vcc.p, self.r1.p, self.rc.p)
        self.connect(self.rc.n, self.q.c, self.cout.p)
        self.connect(self.q.e, self.re.p, self.ce.p)
        self.connect(self.cout.n, self.rl.p)
        self.connect(self.vin.n, self.vcc.n, self.r2.n, self.re.n, self.ce.n, self.rl.n,
                     self.gnd.p)


class DiodeBridge(ac.Model):
    """Full-wave rectifier: four exponential diodes, smoothing capacitor and load."""

    def __init__(self):
        super().__init__()
        self.src = el.SineVoltage(V=10.0, f=50.0)
        self.d = [el.Diode(Ids=1e-9, Vt=0.026) for _ in range(4)]
        self.c = el.Capacitor(C=100e-6, v=0.0)
        self.r = el.Resistor(R=1e3)
        self.gnd = el.Ground()
        a, b = self.src.p, self.src.n
        self.connect(a, self.d[0].p, self.d[2].n)
        self.connect(b, self.d[1].p, self.d[3].n)
        self.connect(self.d[0].n, self.d[1].n, self.c.p, self.r.p)
        self.connect(self.d[2].p, self.d[3].p, self.c.n, self.r.n, self.gnd.p)


class LinkChain(ac.Model):
    """N rigid links in the x-y plane under gravity along -y: each a revolute about z, a
    rigid arm of length ``length / N`` and a body at the arm's midpoint (mass
    ``mass / N``, slender-rod inertia). The first joint starts at ``phi0`` (0: the chain
    horizontal), the others straight; all at rest. Conservative: its linearisation has
    mirrored eigenvalues (+-a), fast but nothing to damp."""

    def __init__(self, N: int = 20, length: float = 1.0, mass: float = 1.0,
                 phi0: float = 0.0):
        super().__init__()
        self.world = mb.World(g=[0.0, -9.81, 0.0])
        ell, m = length / N, mass / N
        # lists of components are registered when assigned: build them complete first
        self.joints = [mb.Revolute(n=[0, 0, 1], phi=phi0 if k == 0 else 0.0, w=0.0)
                       for k in range(N)]
        self.arms = [mb.FixedTranslation(r=[ell, 0, 0]) for _ in range(N)]
        self.bodies = [mb.Body(m=m, r_CM=[ell / 2, 0, 0], I_11=1e-6 * m,
                               I_22=m * ell**2 / 12, I_33=m * ell**2 / 12) for _ in range(N)]
        prev = self.world.frame_b
        for j, a, b in zip(self.joints, self.arms, self.bodies, strict=True):
            self.connect(prev, j.frame_a)
            self.connect(j.frame_b, a.frame_a, b.frame_a)
            prev = a.frame_b
