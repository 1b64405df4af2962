"""Hierarchical models: sub-models exposing inner ports as their own (issue 2, item 2)."""

import numpy as np
import pytest

import acausal as ac
from components import electrical as el
from components import rotational as rot


class Motor(ac.Model):
    """A DC motor as a reusable sub-model with its own shaft flange and pins."""

    flange = rot.Flange("motor shaft")
    p = el.Pin("positive terminal")
    n = el.Pin("negative terminal")

    def __init__(self, R=0.5, L=1e-3, k=0.05, J=1e-4):
        super().__init__()
        self.resistor = el.Resistor(R=R)
        self.inductor = el.Inductor(L=L)
        self.emf = el.EMF(k=k)
        self.rotor = rot.Inertia(J=J)
        self.connect(self.p, self.resistor.p)
        self.connect(self.resistor.n, self.inductor.p)
        self.connect(self.inductor.n, self.emf.p)
        self.connect(self.emf.n, self.n)
        self.connect(self.emf.flange, self.rotor.flange_a)
        self.connect(self.rotor.flange_b, self.flange)


class Drive(ac.Model):
    def __init__(self):
        super().__init__()
        self.source = el.ConstantVoltage(V=12.0)
        self.ground = el.Ground()
        self.motor = Motor()
        self.load = rot.Inertia(J=0.01)
        self.brake = rot.Damper(d=0.02)
        self.fixed = rot.Fixed()
        self.connect(self.source.p, self.motor.p)
        self.connect(self.source.n, self.motor.n, self.ground.p)
        self.connect(self.motor.flange, self.load.flange_a)
        self.connect(self.load.flange_b, self.brake.flange_a)
        self.connect(self.brake.flange_b, self.fixed.flange)


def test_exposed_ports_carry_the_inner_flows():
    res = ac.simulate(Drive(), 6.0, rtol=1e-9, atol=1e-11)
    # the sub-model's pin current is the current into its first resistor
    np.testing.assert_allclose(res["motor.p.i"], res["motor.resistor.i"], atol=1e-12)
    # the shaft torque the motor delivers drives the load: J_L a_L = -motor.flange.tau - d w
    lhs = 0.01 * res["load.a"]
    rhs = -res["motor.flange.tau"] - 0.02 * res["load.w"]
    np.testing.assert_allclose(lhs, rhs, atol=1e-9)
    np.testing.assert_allclose(res["motor.flange.phi"], res["load.phi"], atol=1e-12)
    # steady state: k i = d w and 12 = R i + k w
    k, R, d = 0.05, 0.5, 0.02
    w = 12.0 / (k + R * d / k)
    # time constant (J_rotor + J_load) / (k^2/R + d) = 0.404 s: 6 s is 15 of them (3e-7)
    assert abs(res["load.w"][-1] - w) / w < 1e-5


def test_submodel_paths_and_reuse():
    m = Drive()
    assert m.motor.rotor.path() == "motor.rotor"
    cm = ac.build(m)
    # rotor and load are rigidly joined through the exposed flange: one rotational pair of
    # states for both, plus the inductor current
    assert "motor.inductor.i" in cm.states
    assert len(cm.states) == 3


def test_a_models_constructor_runs_with_the_cyclic_collector_paused():
    """A model's own ``__init__`` (wrapped by Component.__init_subclass__) runs with the
    collector paused, nested ones too, and leaves it as it found it, also on an error."""
    import gc

    seen = []

    class Inner(ac.Model):
        def __init__(self):
            super().__init__()
            seen.append(gc.isenabled())

    class Outer(ac.Model):
        def __init__(self, fail=False):
            super().__init__()
            seen.append(gc.isenabled())
            self.inner = Inner()
            if fail:
                raise ValueError("made to fail")

    assert gc.isenabled()
    Outer()
    assert seen == [False, False] and gc.isenabled()
    with pytest.raises(ValueError, match="made to fail"):
        Outer(fail=True)
    assert gc.isenabled()
    gc.disable()  # (a caller that had it off finds it off)
    try:
        Outer()
        assert not gc.isenabled()
    finally:
        gc.enable()
    import inspect

    assert "fail" in inspect.signature(Outer).parameters  # (the wrapper keeps it)


def test_copied_and_pickled_models_simulate_alike_and_keep_their_leaves_apart():
    """A model's deep copy and its pickle simulate as the model does. Components without
    sub-components or connections share one empty, read-only record of them (memory: a
    model of 100 000 components); a copy's leaf that gets a child gets its own, and no other
    leaf sees it. A port of a copy still refuses assignments."""
    import copy
    import pickle

    m = Drive()
    ref = ac.simulate(m, 1.0)["load.w"]
    for other in (copy.deepcopy(m), pickle.loads(pickle.dumps(m))):
        # (the same equations from the same start: bit for bit)
        assert np.array_equal(ac.simulate(other, 1.0)["load.w"], ref)
        leaf, another = other.load, other.brake
        assert leaf.children() == {} and another.children() == {}
        leaf.note = el.Resistor(R=1.0)  # a child of a former leaf (not part of the physics)
        assert list(leaf.children()) == ["note"] and another.children() == {}
        assert m.load.children() == {}
        with pytest.raises(ac.ModelDefinitionError, match="cannot be assigned"):
            other.load.flange_a.phi = 1.0


def test_a_variables_own_fields_survive_copies_and_stay_its_own():
    """A variable instance reads its declaration's unit, nominal, state priority, ...
    until it is given its own; its own stay with it through a deep copy and a pickle and
    never reach the declaration or another instance (the fields are kept once per
    declaration: a large model holds half a million variable instances)."""
    import copy
    import pickle

    from components import translational as tr

    a, b = tr.Mass(m=1.0), tr.Mass(m=1.0)
    va, vb = a.variables()["v"], b.variables()["v"]
    declared = va.decl.state_priority
    assert (va.name, va.unit, va.size, va.state_priority) == ("v", "m/s", 1, declared)
    va.state_priority, va.nominal = declared + 3, 2.5
    assert (va.state_priority, va.nominal) == (declared + 3, 2.5)
    assert (vb.state_priority, vb.nominal) == (declared, vb.decl.nominal)
    assert va.decl.state_priority == declared
    for c in (copy.deepcopy(a), pickle.loads(pickle.dumps(a))):
        v = c.variables()["v"]
        assert (v.state_priority, v.nominal, v.owner) == (declared + 3, 2.5, c)
        v.state_priority = declared  # (the copy's own: the original keeps its value)
        assert va.state_priority == declared + 3
