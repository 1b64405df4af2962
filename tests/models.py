"""Small reference models shared by the tests."""

import numpy as np

import acausal as ac
from components import blocks
from components import electrical as el
from components import rotational as rot
from components import thermal as th
from components import translational as tr


class RC(ac.Model):
    def __init__(self, R=1000.0, C=1e-3, V=10.0):
        super().__init__()
        self.source = el.ConstantVoltage(V=V)
        self.resistor = el.Resistor(R=R)
        self.capacitor = el.Capacitor(C=C, v=0.0)
        self.ground = el.Ground()
        self.connect(self.source.p, self.resistor.p)
        self.connect(self.resistor.n, self.capacitor.p)
        self.connect(self.capacitor.n, self.source.n, self.ground.p)


class SeriesRLC(ac.Model):
    def __init__(self, R=2.0, L=0.5, C=0.02, V=1.0):
        super().__init__()
        self.source = el.ConstantVoltage(V=V)
        self.resistor = el.Resistor(R=R)
        self.inductor = el.Inductor(L=L, i=0.0)
        self.capacitor = el.Capacitor(C=C, v=0.0)
        self.ground = el.Ground()
        self.connect(self.source.p, self.resistor.p)
        self.connect(self.resistor.n, self.inductor.p)
        self.connect(self.inductor.n, self.capacitor.p)
        self.connect(self.capacitor.n, self.source.n, self.ground.p)


class MassSpringDamper(ac.Model):
    def __init__(self, m=1.0, c=100.0, d=2.0, s0=0.1):
        super().__init__()
        self.fixed = tr.Fixed()
        self.spring = tr.Spring(c=c)
        self.damper = tr.Damper(d=d)
        self.mass = tr.Mass(m=m, s=s0, v=0.0)
        self.connect(self.fixed.flange, self.spring.flange_a, self.damper.flange_a)
        self.connect(self.spring.flange_b, self.damper.flange_b, self.mass.flange_a)


class DCMotor(ac.Model):
    """DC motor -> gearbox -> elastic shaft -> load inertia, with a load torque."""

    def __init__(self, V=24.0, R=0.5, L=1e-3, k=0.05, Jm=1e-4, ratio=10.0, c=500.0,
                 d=0.5, JL=0.01, TL=0.5):
        super().__init__()
        self.source = el.ConstantVoltage(V=V)
        self.ground = el.Ground()
        self.resistor = el.Resistor(R=R)
        self.inductor = el.Inductor(L=L)
        self.emf = el.EMF(k=k)
        self.motor = rot.Inertia(J=Jm)
        self.gear = rot.IdealGear(ratio=ratio)
        self.shaft = rot.SpringDamper(c=c, d=d)
        self.load = rot.Inertia(J=JL)
        self.load_torque = rot.Torque(tau=-TL)
        self.connect(self.source.p, self.resistor.p)
        self.connect(self.resistor.n, self.inductor.p)
        self.connect(self.inductor.n, self.emf.p)
        self.connect(self.emf.n, self.source.n, self.ground.p)
        self.connect(self.emf.flange, self.motor.flange_a)
        self.connect(self.motor.flange_b, self.gear.flange_a)
        self.connect(self.gear.flange_b, self.shaft.flange_a)
        self.connect(self.shaft.flange_b, self.load.flange_a)
        self.connect(self.load.flange_b, self.load_torque.flange)


class HeatedMass(ac.Model):
    def __init__(self, V=10.0, R=5.0, C=50.0, G=2.0, T_amb=293.15, alpha=0.0):
        super().__init__()
        self.source = el.ConstantVoltage(V=V)
        self.ground = el.Ground()
        self.heater = el.HeatingResistor(R_ref=R, alpha=alpha, T_ref=T_amb)
        self.capacity = th.HeatCapacitor(C=C, T=T_amb)
        self.loss = th.ThermalConductor(G=G)
        self.ambient = th.FixedTemperature(T=T_amb)
        self.connect(self.source.p, self.heater.p)
        self.connect(self.heater.n, self.source.n, self.ground.p)
        self.connect(self.heater.heatPort, self.capacity.port, self.loss.port_a)
        self.connect(self.loss.port_b, self.ambient.port)


class CartesianPendulum(ac.Model):
    """A point mass on a rigid massless rod, written by the user in Cartesian coordinates."""

    m = ac.Parameter(1.0, unit="kg", doc="mass")
    L = ac.Parameter(1.0, unit="m", doc="rod length")
    g = ac.Parameter(9.81, unit="m/s2", doc="gravity")
    x = ac.Variable(unit="m", doc="horizontal position")
    y = ac.Variable(unit="m", doc="vertical position (up)")
    vx = ac.Variable(unit="m/s")
    vy = ac.Variable(unit="m/s")
    F = ac.Variable(unit="N", doc="rod tension")

    def equations(self):
        der = ac.der
        return [
            der(self.x) == self.vx,
            der(self.y) == self.vy,
            self.m * der(self.vx) == -self.F * self.x / self.L,
            self.m * der(self.vy) == -self.F * self.y / self.L - self.m * self.g,
            self.x**2 + self.y**2 == self.L**2,
        ]


def pendulum(theta0_deg: float) -> CartesianPendulum:
    th0 = np.radians(theta0_deg)
    return CartesianPendulum(x=np.sin(th0), y=ac.guess(-np.cos(th0)), vx=0.0, vy=ac.guess(0.0))


class BouncingBall(ac.Model):
    """h'' = -g (9.81 m/s2) from h = 1 m at rest; at an impact the velocity reverses
    with restitution e (0.8): a `when` clause with `reinit` and a discrete counter."""

    h = ac.Variable(start=1.0, fixed=True, unit="m", doc="height")
    v = ac.Variable(start=0.0, fixed=True, unit="m/s", doc="velocity")
    n = ac.Variable(start=0.0, unit="1", doc="impacts so far", discrete=True)
    e = ac.Parameter(0.8, unit="1", doc="coefficient of restitution")

    def equations(self):
        return [ac.der(self.h) == self.v, ac.der(self.v) == -9.81,
                ac.when(self.h < 0, ac.reinit(self.v, -self.e * ac.pre(self.v)),
                        ac.assign(self.n, ac.pre(self.n) + 1))]


def impacts(res) -> list[float]:
    return [ev.t for ev in res.events if any(c.startswith("when") for c in ev.changes)]


class ForcedChain(ac.Model):
    """Masses and spring-dampers in a chain (template groups), pulled at its end by a
    force of time (per instance): mass ``k`` is ``mass(k)`` kg, the force ``force(t)`` N."""

    def __init__(self, n=8, mass=lambda k: 1.0, force=lambda t: 1.0 + t):
        super().__init__()
        self.fixed = tr.Fixed()
        self.masses = [tr.Mass(m=mass(k), s=0.0, v=0.0) for k in range(n)]
        self.springs = [tr.SpringDamper(c=100.0, d=1.0) for _ in range(n)]
        self.force = tr.Force(f=force)
        prev = self.fixed.flange
        for m, s in zip(self.masses, self.springs, strict=True):
            self.connect(prev, s.flange_a)
            self.connect(s.flange_b, m.flange_a)
            prev = m.flange_b
        self.connect(prev, self.force.flange)


class Kinked(ac.Component):
    """A kink of its unknowns (``fmax(s, 0)``: a relation to freeze), one of its parameter
    only (``fabs(c)``: none)."""

    flange = tr.Flange()
    c = ac.Parameter(1.0)
    s = ac.Variable(start=0.5)
    edges = [ac.Edge(ac.DATUM, "flange")]

    def equations(self):
        return [self.s == self.flange.s,
                self.flange.f == -ac.fabs(self.c) * ac.fmax(self.s, 0.0) - ac.der(self.s)]


class Limited(ac.Model):
    """A sine through a Limiter whose limits are given as keywords (parameters that
    depend on each other: uMin follows uMax when not given)."""

    def __init__(self, **limits):
        super().__init__()
        from components import blocks as bl

        self.s = bl.Sine(amplitude=2.0, f=1.0)
        self.lim = bl.Limiter(**limits)
        self.connect(self.s.y, self.lim.u)


# ----- sampled blocks on one clock (tests/library/test_blocks.py, tests/export/test_fmu.py)
TS_CHAIN = 0.1


class Accumulator(ac.Model):
    """y = z^-1 (y + 1): a UnitDelay fed back through an Add."""

    def __init__(self):
        super().__init__()
        self.one = blocks.Constant(k=1.0)
        self.add = blocks.Add()
        self.delay = blocks.UnitDelay(samplePeriod=TS_CHAIN, startTime=0.0)
        self.connect(self.delay.y, self.add.u1)
        self.connect(self.one.y, self.add.u2)
        self.connect(self.add.y, self.delay.u)


class HoldThen(ac.Model):
    """A ramp u = t sampled by a ZeroOrderHold that feeds a UnitDelay and a DiscretePI
    (k = 1, T = Ts) ticking on the same clock."""

    def __init__(self):
        super().__init__()
        self.src = blocks.Ramp(height=1.0, duration=1.0)
        self.zoh = blocks.ZeroOrderHold(samplePeriod=TS_CHAIN, startTime=0.0)
        self.delay = blocks.UnitDelay(samplePeriod=TS_CHAIN, startTime=0.0)
        self.pi = blocks.DiscretePI(k=1.0, T=TS_CHAIN, samplePeriod=TS_CHAIN, startTime=0.0)
        self.connect(self.src.y, self.zoh.u)
        self.connect(self.zoh.y, self.delay.u, self.pi.u)


def chain_references(n):
    """z-domain recursions: the accumulator y_k = k; the delay y_k = u(t_(k-1)) (0 at
    k = 0); the PI x_k = x_(k-1) + u(t_k), y_k = x_k + u(t_k)."""
    u = np.arange(n) * TS_CHAIN
    x = np.cumsum(u)
    return np.arange(n, dtype=float), np.r_[0.0, u[:-1]], x + u


class StopBall(ac.Model):
    """A ball of the default MassWithStop (e = 0.8, v_rest = 1 mm/s) dropped 1 m."""

    def __init__(self, v_rest=1e-3):
        super().__init__()
        self.ball = tr.MassWithStop(m=0.1, s=1.0, v=0.0, s_min=0.0, s_max=100.0,
                                    v_rest=v_rest)
        self.weight = tr.Force(f=-0.981)
        self.connect(self.weight.flange, self.ball.flange_a)
