"""Every library component against an independent expectation (issue 2, item 5)."""

import numpy as np
import pytest

import acausal as ac
from components import electrical as el
from components import rotational as rot
from components import thermal as th
from components import translational as tr

TIGHT = dict(rtol=1e-10, atol=1e-12)


class Circuit(ac.Model):
    """source -> [element] -> ground, with sensors."""

    def __init__(self, source, element):
        super().__init__()
        self.source = source
        self.element = element
        self.ground = el.Ground()
        self.vs = el.VoltageSensor()
        self.cs = el.CurrentSensor()
        self.connect(self.source.p, self.cs.p)
        self.connect(self.cs.n, self.element.p, self.vs.p)
        self.connect(self.element.n, self.source.n, self.ground.p, self.vs.n)


def test_sine_voltage_resistor_and_sensors():
    m = Circuit(el.SineVoltage(V=2.0, f=3.0, phase=0.3, offset=0.5), el.Resistor(R=4.0))
    res = ac.simulate(m, 1.0, n_points=101)
    v = 0.5 + 2.0 * np.sin(2 * np.pi * 3.0 * res.t + 0.3)
    np.testing.assert_allclose(res["vs.v"], v, atol=1e-12)
    np.testing.assert_allclose(res["cs.i"], v / 4.0, atol=1e-12)
    np.testing.assert_allclose(res["vs.i"], 0.0, atol=0)


def test_step_voltage():
    m = Circuit(el.StepVoltage(V=3.0, offset=1.0, startTime=0.5), el.Resistor(R=1.0))
    res = ac.simulate(m, 1.0, t_eval=[0.25, 0.75, 1.0])
    np.testing.assert_allclose(res["element.v"], [1.0, 1.0, 4.0, 4.0], atol=1e-12)


def test_constant_current_into_capacitor():
    class M(ac.Model):
        def __init__(self):
            super().__init__()
            self.src = el.ConstantCurrent(I=lambda t: 2e-3 * t)
            self.cap = el.Capacitor(C=1e-3, v=0.0)
            self.g = el.Ground()
            # current source drives i from p to n internally: into the capacitor at n side
            self.connect(self.src.n, self.cap.p)
            self.connect(self.src.p, self.cap.n, self.g.p)

    res = ac.simulate(M(), 2.0, **TIGHT)
    np.testing.assert_allclose(res["cap.v"], res.t**2, atol=1e-8)  # v = int(2 t) dt / C


def test_diode_exponential_law():
    m = Circuit(el.ConstantVoltage(V=lambda t: -0.5 + t), el.Diode(Ids=1e-9, Vt=0.025,
                                                                       R=1e9))
    res = ac.simulate(m, 1.0, n_points=21)
    v = res["element.v"]
    i = 1e-9 * (np.exp(np.minimum(v / 0.025, 15.0)) - 1) + v / 1e9
    lin = v / 0.025 > 15.0
    i[lin] = 1e-9 * (np.exp(15.0) * (1 + v[lin] / 0.025 - 15.0) - 1) + v[lin] / 1e9
    np.testing.assert_allclose(res["element.i"], i, rtol=1e-10, atol=1e-15)


def test_rotational_speed_source_sensors_damper():
    class M(ac.Model):
        def __init__(self):
            super().__init__()
            self.speed = rot.Speed(w_ref=lambda t: 2.0 * t)
            self.tsensor = rot.TorqueSensor()
            self.damper = rot.Damper(d=0.5)
            self.fixed = rot.Fixed()
            self.angle = rot.AngleSensor()
            self.wsensor = rot.SpeedSensor()
            self.connect(self.speed.flange, self.tsensor.flange_a, self.angle.flange,
                         self.wsensor.flange)
            self.connect(self.tsensor.flange_b, self.damper.flange_a)
            self.connect(self.damper.flange_b, self.fixed.flange)

    res = ac.simulate(M(), 1.0, **TIGHT)
    np.testing.assert_allclose(res["angle.phi"], res.t**2, atol=1e-8)
    np.testing.assert_allclose(res["wsensor.w"], 2 * res.t, atol=1e-8)
    # the damper resists: it is compressed (phi_rel < 0), tau = d w_rel = -0.5 * 2t
    np.testing.assert_allclose(res["damper.tau"], -res.t, atol=1e-8)
    np.testing.assert_allclose(res["tsensor.tau"], res.t, atol=1e-8)


def test_rotational_position_spring_inertia():
    class M(ac.Model):
        def __init__(self):
            super().__init__()
            self.pos = rot.Position(phi_ref=lambda t: 0.1 * np.sin(3.0 * t))
            self.spring = rot.Spring(c=4.0)
            self.inertia = rot.Inertia(J=1.0, phi=0.0, w=0.0)
            self.connect(self.pos.flange, self.spring.flange_a)
            self.connect(self.spring.flange_b, self.inertia.flange_a)

    res = ac.simulate(M(), 3.0, **TIGHT)
    # J phi'' = -c (phi - 0.1 sin 3t), phi(0)=phi'(0)=0, w0 = 2:
    # phi = A (sin 3t - (3/2) sin 2t) with A = 0.1 c/(c - 9) = -0.08
    t = res.t
    ref = -0.08 * (np.sin(3 * t) - 1.5 * np.sin(2 * t))
    np.testing.assert_allclose(res["inertia.phi"], ref, atol=1e-8)


def test_translational_speed_force_sensors():
    class M(ac.Model):
        def __init__(self):
            super().__init__()
            self.force = tr.ConstantForce(f=3.0)
            self.fsensor = tr.ForceSensor()
            self.mass = tr.Mass(m=1.5, s=0.0, v=0.0)
            self.pos = tr.PositionSensor()
            self.vel = tr.SpeedSensor()
            self.connect(self.force.flange, self.fsensor.flange_a)
            self.connect(self.fsensor.flange_b, self.mass.flange_a, self.pos.flange,
                         self.vel.flange)

    res = ac.simulate(M(), 1.0, **TIGHT)
    np.testing.assert_allclose(res["pos.s"], 0.5 * 2.0 * res.t**2, atol=1e-8)
    np.testing.assert_allclose(res["vel.v"], 2.0 * res.t, atol=1e-8)
    # the source's cut force is -3 N, so the sensor transmits +3 N from flange_a to flange_b
    np.testing.assert_allclose(res["fsensor.f"], 3.0, atol=1e-10)


def test_translational_speed_source_spring_damper():
    class M(ac.Model):
        def __init__(self):
            super().__init__()
            self.speed = tr.Speed(v_ref=1.0)
            self.sd = tr.SpringDamper(c=10.0, d=2.0)
            self.fixed = tr.Fixed(s0=0.0)
            self.connect(self.fixed.flange, self.sd.flange_a)
            self.connect(self.sd.flange_b, self.speed.flange)

    res = ac.simulate(M(), 1.0, **TIGHT)
    np.testing.assert_allclose(res["sd.f"], 10.0 * res.t + 2.0, atol=1e-8)


def test_rolling_wheel_couples_domains():
    class M(ac.Model):
        def __init__(self):
            super().__init__()
            self.torque = rot.Torque(tau=2.0)
            self.wheel = rot.IdealRollingWheel(radius=0.5)
            self.car = tr.Mass(m=4.0, s=0.0, v=0.0)
            self.connect(self.torque.flange, self.wheel.flangeR)
            self.connect(self.wheel.flangeT, self.car.flange_a)

    res = ac.simulate(M(), 1.0, **TIGHT)
    # force on the car tau / r = 4 N -> a = 1 m/s2
    np.testing.assert_allclose(res["car.a"], 1.0, atol=1e-10)
    np.testing.assert_allclose(res["wheel.flangeR.phi"], res["car.s"] / 0.5, atol=1e-9)


def test_thermal_heat_flow_and_sensor():
    class M(ac.Model):
        def __init__(self):
            super().__init__()
            self.heater = th.HeatFlow(Q_flow=10.0)
            self.cap = th.HeatCapacitor(C=100.0, T=300.0)
            self.sensor = th.TemperatureSensor()
            self.connect(self.heater.port, self.cap.port, self.sensor.port)

    res = ac.simulate(M(), 5.0, **TIGHT)
    np.testing.assert_allclose(res["sensor.T"], 300.0 + 0.1 * res.t, atol=1e-9)
    np.testing.assert_allclose(res["cap.der_T"], 0.1, atol=1e-12)


def test_emf_is_power_conserving():
    from models import DCMotor

    res = ac.simulate(DCMotor(), 0.5, n_points=51, rtol=1e-9)
    p_el = res["emf.v"] * res["emf.i"]
    p_mech = res["emf.tau"] * res["emf.w"]
    np.testing.assert_allclose(p_el, p_mech, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("module", [el, tr, rot, th])
def test_every_component_documents_units(module):
    for name in module.__all__:
        obj = getattr(module, name)
        if not (isinstance(obj, type) and issubclass(obj, ac.Component)):
            continue
        assert obj.__doc__, name
        for p in obj._declarations(ac.Parameter):
            assert p.unit and p.doc, f"{name}.{p.name}"
        for v in obj._declarations(ac.Variable):
            # a variable without a unit must say why in its doc (an ideal switch's
            # characteristic parameter is a current or a voltage by mode)
            assert v.doc and (v.unit or "unit" in v.doc), f"{name}.{v.name}"
