"""Equations per component class (issue 14, item 3): the flatten pass writes the equations
of a group of alike instances once, on placeholders, and instantiates them for all
members. Reference: the per-instance path of the same pass (templates switched off), whose
products every templated build must reproduce exactly: names, derivative links, equation
strings and labels, origins, ranges, outputs, and the DAE built from them."""

from __future__ import annotations

import casadi as cs
import numpy as np
import pytest
from models import Kinked

import acausal as ac
from acausal import fastsx, templates
from components import electrical as el
from components import translational as tr

# ----- components for the cases a template must get right -----


class Vec(ac.Component):
    """A vector variable, a vector equation, der() of a vector and of a port, the time."""

    p = el.Pin()
    n = el.Pin()
    k = ac.Parameter(2.0)
    x = ac.Variable(size=3, start=[1.0, 2.0, 3.0], fixed=True)
    w = ac.Variable()
    edges = [ac.Edge("p", "n")]

    def equations(self):
        return [ac.der(self.x) == -self.k * self.x + self.p.v,
                self.w == ac.der(self.p.v) + 1e-3 * self.k * self.time,
                self.p.i == self.x[0] + self.w]


class Sized(ac.Component):
    """A structural parameter choosing the equations."""

    flange = tr.Flange()
    n = ac.Parameter(1, structural=True)
    c = ac.Parameter(1.0)
    s = ac.Variable(start=0.5, fixed=True)
    edges = [ac.Edge(ac.DATUM, "flange")]

    def equations(self):
        return [self.s == self.flange.s,
                self.flange.f == -self.c * self.s ** self.n - ac.der(self.s)]


class Steady(ac.Component):
    """Initial equations next to templated equations; der() of an expression."""

    flange = tr.Flange()
    c = ac.Parameter(1.0)
    s = ac.Variable(start=0.1)
    v = ac.Variable()
    edges = [ac.Edge(ac.DATUM, "flange")]

    def equations(self):
        return [self.s == self.flange.s, self.v == ac.der(self.s),
                self.flange.f == -self.c * self.s - ac.der(2 * self.s)]

    def initial_equations(self):
        return [self.s == self.c / 10]


class Own(ac.Component):
    """Reads an attribute of its own: not the same equations up to renaming."""

    flange = tr.Flange()
    k = ac.Parameter(1.0)
    edges = [ac.Edge(ac.DATUM, "flange")]

    def __init__(self, gain, **kw):
        super().__init__(**kw)
        self.gain = gain

    def equations(self):
        return [self.flange.f == self.gain * self.k * self.flange.s]


class Peeks(ac.Component):
    """Reads its parameter values (numbers) inside equations()."""

    flange = tr.Flange()
    c = ac.Parameter(1.0)
    edges = [ac.Edge(ac.DATUM, "flange")]

    def equations(self):
        return [self.flange.f == self.parameters()["c"] * self.c * self.flange.s]


class Helper(ac.Component):
    """Reads its parameter values in a helper method its equations() call."""

    flange = tr.Flange()
    c = ac.Parameter(1.0)
    edges = [ac.Edge(ac.DATUM, "flange")]

    def gain(self):
        return self.parameters()["c"] * self.c

    def equations(self):
        return [self.flange.f == self.gain() * self.flange.s]


def _scaled(comp):
    return comp.parameters()["c"] * comp.c


class GlobalHelper(ac.Component):
    """Reads its parameter values in a function of the module its equations() call."""

    flange = tr.Flange()
    c = ac.Parameter(1.0)
    edges = [ac.Edge(ac.DATUM, "flange")]

    def equations(self):
        return [self.flange.f == _scaled(self) * self.flange.s]


class Bad(ac.Component):
    flange = tr.Flange()
    edges = [ac.Edge(ac.DATUM, "flange")]

    def equations(self):
        raise ValueError("no equations today")


class Chain(ac.Model):
    """N alike elements of every kind above, on one node each (all on the same rail)."""

    def __init__(self, n=30, kinds=("vec", "sized", "steady", "msd"), bad=False):
        super().__init__()
        self.fixed = tr.Fixed()
        if "vec" in kinds:
            self.ground = el.Ground()
            self.src = el.SineVoltage(V=1.0, f=2.0)
            self.connect(self.src.n, self.ground.p)
            self.vec = [Vec(k=1.0 + k) for k in range(n)]
            for v in self.vec:
                self.connect(self.src.p, v.p)
                self.connect(v.n, self.ground.p)
        if "sized" in kinds:
            self.sized = [Sized(n=1 + k % 2, c=1.0 + k) for k in range(n)]
        if "steady" in kinds:
            self.steady = [Steady(c=1.0 + k) for k in range(n)]
        if "own" in kinds:
            self.own = [Own(gain=10.5 + k) for k in range(n)]
        if "peeks" in kinds:
            self.peeks = [Peeks(c=10.5 + k) for k in range(n)]
        if "helper" in kinds:
            self.helper = [Helper(c=10.5 + k) for k in range(n)]
            self.global_helper = [GlobalHelper(c=10.5 + k) for k in range(n)]
        if "msd" in kinds:
            self.masses = [tr.Mass(m=1.0 + k, s=0.0, v=0.0) for k in range(n)]
            self.springs = [tr.SpringDamper(c=100.0, d=1.0 + k) for k in range(n)]
            self.forces = [tr.Force(f=(lambda t, k=k: np.sin(k * t)) if k % 3 == 0 else 1.0)
                           for k in range(n)]
            prev = self.fixed.flange
            for m, s, f in zip(self.masses, self.springs, self.forces, strict=True):
                self.connect(prev, s.flange_a)
                self.connect(s.flange_b, m.flange_a)
                self.connect(m.flange_b, f.flange)
                prev = m.flange_b
        for name in ("own", "peeks", "helper", "global_helper"):
            for c in getattr(self, name, []):
                self.connect(c.flange, self.fixed.flange)
        for name in ("sized", "steady"):  # each on a spring of its own (a state each)
            loads = [tr.Spring(c=10.0) for _ in getattr(self, name, [])]
            setattr(self, f"{name}_loads", loads)
            for c, spring in zip(getattr(self, name, []), loads, strict=True):
                self.connect(c.flange, spring.flange_a)
                self.connect(spring.flange_b, self.fixed.flange)
        if bad:
            self.bad = [Bad() for _ in range(n)]
            for b in self.bad:
                self.connect(b.flange, self.fixed.flange)


def _products(model_factory, min_group, monkeypatch):
    """Everything the flatten pass hands on, and the DAE, as comparable text."""
    monkeypatch.setattr(templates, "MIN_GROUP", min_group)
    cm = ac.build(model_factory())
    fs, d = cm.flat, cm.dae
    return dict(
        variables=[(v.name, v.sym.name(), v.der_of, v.der, v.start, v.fixed, v.unit,
                    v.origin, v.state_priority, v.nominal, v.hint) for v in fs.variables],
        parameters=[(p.name, p.sym.name(), p.value, p.unit, p.kind,
                     p.owner.path() if p.owner is not None else None)
                    for p in fs.parameters],
        equations=[(str(e.res), e.text(), e.origin) for e in fs.equations],
        initial=[(str(e.res), e.text(), e.origin) for e in fs.initial_equations],
        ranges=sorted(fs.equation_ranges.values()),
        initial_ranges=sorted(fs.initial_ranges.values()),
        outputs=[(k, str(v)) for k, v in fs.outputs.items()],
        bound=[(c.path(), n, "f(t)" if callable(v) else repr(v)) for c, n, v in fs.bound_values],
        signals=sorted(fs.signals.values()),
        dae=(list(d.x_names), list(d.z_names), list(d.p_names), list(d.out_names),
             str(d.ode), str(d.alg)),
        report=str(cm.report),
    )


def _templated(monkeypatch):
    """Count the components whose equations a template wrote."""
    counted = []
    real = templates.Group.evaluate

    def evaluate(self):
        counted.extend(type(c).__name__ for c in self.members)
        return real(self)

    monkeypatch.setattr(templates.Group, "evaluate", evaluate)
    return counted


@pytest.mark.parametrize("kinds", [("vec", "sized", "steady", "msd"),
                                   ("own", "peeks", "helper")])
def test_templates_reproduce_the_per_instance_build(kinds, monkeypatch):
    def make():
        return Chain(30, kinds)

    reference = _products(make, 10**9, monkeypatch)
    counted = _templated(monkeypatch)
    templated = _products(make, 2, monkeypatch)
    for key in reference:
        assert templated[key] == reference[key], key
    if "msd" in kinds:
        # the classes a template serves; Force with a function of time stays per instance
        assert {"Vec", "Sized", "Mass", "SpringDamper", "Force"} <= set(counted)
        assert counted.count("Force") == 20  # the 10 forces f(t) are per instance
        assert "Steady" not in counted  # der() of an expression: the per-instance chain rule
    else:
        # its own attribute; its parameter values read in equations() or in a helper
        assert counted == []


def test_templated_equations_carry_their_instances_values(monkeypatch):
    """Classes a template cannot serve keep their own numbers (not the first instance's)."""
    monkeypatch.setattr(templates, "MIN_GROUP", 2)
    cm = ac.build(Chain(5, ("own", "peeks", "helper")))
    text = {e.origin: e.text() for e in cm.flat.equations}
    for k in range(5):
        for name in ("own", "peeks", "helper", "global_helper"):
            assert f"{10.5 + k:g}" in text[f"{name}[{k}]"]
            assert f"{10.5 + k + 1:g}" not in text[f"{name}[{k}]"]


def test_error_in_equations_names_the_instance(monkeypatch):
    monkeypatch.setattr(templates, "MIN_GROUP", 2)
    with pytest.raises(ac.ModelDefinitionError, match=r"Bad 'bad\[0\]'.*no equations today"):
        ac.build(Chain(5, ("msd",), bad=True))


def test_large_groups_take_the_template_path_by_default(monkeypatch):
    from _models import MassSpringChain

    counted = _templated(monkeypatch)
    ac.build(MassSpringChain(templates.MIN_GROUP))
    assert counted.count("Mass") == templates.MIN_GROUP
    counted.clear()
    ac.build(MassSpringChain(templates.MIN_GROUP - 1))
    assert counted == []  # small models: the per-instance path


@pytest.mark.parametrize("layout", [True, False])
def test_named_symbols(layout, monkeypatch):
    """Symbols made in one call are named exactly, distinct, and the same with CasADi's
    own per-symbol path (an unknown serialisation layout falls back to it)."""
    monkeypatch.setattr(fastsx, "_layout_ok", None if layout else False)
    names = [f"a[{k}].x" for k in range(20)] + ["der(b.\u00e9)", "c.v_0"]
    col, elems = fastsx.named_symbols(names)
    assert [e.name() for e in elems] == names
    assert col.shape == (len(names), 1) and col.is_valid_input()
    assert len({e.element_hash() for e in elems}) == len(names)
    again = fastsx.named_symbols(names)[1]
    assert not any(cs.is_equal(a, b) for a, b in zip(elems, again, strict=True))
    cols = fastsx.named_columns([names[:3], [], names[3:]])
    assert [c.numel() for c, _ in cols] == [3, 0, len(names) - 3]
    assert [e.name() for e in cols[2][1]] == names[3:]


def test_eligibility_of_library_classes():
    """3D frames (bound by their domain pass), when clauses, discrete variables and
    composites stay on the per-instance path; plain 1D components share templates."""
    from components import blocks
    from components import multibody as mb

    assert templates.group_key(tr.Mass(m=2.0)) == templates.group_key(tr.Mass(m=3.0))
    assert templates.group_key(tr.Force(f=lambda t: t)) is None  # a function of time
    assert templates.group_key(mb.Body(m=1.0)) is None  # frame ports
    assert templates.group_key(mb.Revolute()) is None
    assert templates.group_key(blocks.UnitDelay(samplePeriod=0.1)) is None  # discrete
    assert templates.group_key(Chain(2, ("msd",))) is None  # a composite
    assert templates.group_key(Own(gain=1.0)) is None  # an attribute of its own
    assert templates.group_key(Sized(n=1)) != templates.group_key(Sized(n=2))


class ParamKink(ac.Component):
    """A kink of its parameter only: not proven free for the class (the template cannot
    tell parameters from unknowns), so the relations pass looks at its equations."""

    flange = tr.Flange()
    c = ac.Parameter(1.0)
    edges = [ac.Edge(ac.DATUM, "flange")]

    def equations(self):
        return [self.flange.f == -ac.fabs(self.c) * self.flange.s]


class Kinks(ac.Model):
    def __init__(self, n, kinked=True):
        super().__init__()
        self.fixed = tr.Fixed()
        self.masses = [tr.Mass(m=1.0 + k, s=0.0, v=0.0) for k in range(n)]
        self.pk = [ParamKink(c=-1.0 - k) for k in range(n)]
        self.kinked = [Kinked(c=1.0 + k) for k in range(n)] if kinked else []
        for m, p in zip(self.masses, self.pk, strict=True):
            self.connect(m.flange_a, p.flange)
        for m, k in zip(self.masses, self.kinked, strict=False):  # (none, or one each)
            self.connect(m.flange_b, k.flange)


@pytest.mark.parametrize("kinked", [True, False])
def test_relations_of_templated_classes(kinked, monkeypatch):
    """The relations pass proves a template's equations free of relations once for its
    class; a class with a kink of its unknowns, or of a parameter, is looked at as before:
    the same relations, equations and DAE as the per-instance build."""
    def make():
        return Kinks(6, kinked)

    reference = _products(make, 10**9, monkeypatch)
    templated = _products(make, 2, monkeypatch)
    for key in reference:
        assert templated[key] == reference[key], key
    cm = ac.build(make())
    rels = [p.name for p in cm.flat.parameters if p.kind == "relation"]
    assert len(rels) == (6 if kinked else 0)  # fmax(s, 0) of each Kinked
    free = cm.flat.relation_free
    origins = [e.origin for e in cm.flat.equations]
    if not kinked:  # (the relations pass leaves the flat system as flatten made it)
        assert free is not None
        assert {o.split("[")[0] for o, f in zip(origins, free, strict=True) if f} == {"masses"}


@pytest.mark.parametrize("min_group", [2, 10**9])
def test_flat_columns_are_the_stacked_equations_and_unknowns(min_group, monkeypatch):
    """The columns the flatten pass gathers from the template groups' columns hold, row by
    row, the residual of every equation and the symbol of every unknown (the same nodes),
    in the lists' order: graph unknowns, group members' variables and derivatives, vector
    variables, per-instance equations between the members'."""
    from acausal.flatten import flatten
    from acausal.graph import LinearGraph

    monkeypatch.setattr(templates, "MIN_GROUP", min_group)
    model = Chain(6)
    fs = flatten(model, LinearGraph(model))
    assert fs.res_column is not None and fs.var_column is not None
    res = cs.vertsplit(fs.res_column)
    assert len(res) == len(fs.equations)
    assert [r.element_hash() for r in res] == [e.res.element_hash() for e in fs.equations]
    syms = cs.vertsplit(fs.var_column)
    assert [s.name() for s in syms] == [v.name for v in fs.variables]
    assert [s.element_hash() for s in syms] == [v.sym.element_hash() for v in fs.variables]


class Mixed(ac.Model):
    """Members of two groups one after the other (runs of members declared and replayed
    at once) and interleaved with each other and with per-instance components (runs of
    one); a parent whose equations take der() of a member's variable before the member
    does (its run replayed member by member); starts given, guessed and left."""

    w = ac.Variable(unit="m/s2")

    def __init__(self, n=6):
        super().__init__()
        self.fixed = tr.Fixed()
        self.masses = [tr.Mass(m=1.0 + k, s=0.1 * k, v=ac.guess(0.5) if k % 2 else 0.0)
                       for k in range(n)]
        self.springs = [tr.SpringDamper(c=100.0, d=1.0 + k) for k in range(n)]
        prev = self.fixed.flange
        for m, s in zip(self.masses, self.springs, strict=True):
            self.connect(prev, s.flange_a)
            self.connect(s.flange_b, m.flange_a)
            prev = m.flange_b
        for k in range(n):  # interleaved: a mass, a spring, a force (per instance: f(t))
            m, s = tr.Mass(m=2.0 + k), tr.SpringDamper(c=50.0, d=2.0 + k)
            f = tr.Force(f=lambda t, k=k: np.cos(k * t))
            setattr(self, f"m{k}", m)
            setattr(self, f"s{k}", s)
            setattr(self, f"f{k}", f)
            self.connect(prev, s.flange_a)
            self.connect(s.flange_b, m.flange_a)
            self.connect(m.flange_b, f.flange)
            prev = m.flange_b

    def equations(self):
        return [self.w == ac.der(self.masses[2].v) + ac.der(self.m1.v)]


def test_members_in_runs_and_interleaved_reproduce_the_per_instance_build(monkeypatch):
    reference = _products(Mixed, 10**9, monkeypatch)
    counted = _templated(monkeypatch)
    templated = _products(Mixed, 2, monkeypatch)
    for key in reference:
        assert templated[key] == reference[key], key
    assert counted.count("Mass") == 12 and counted.count("SpringDamper") == 12


class Clash(ac.Component):
    """Two scalar unknowns of the same name: x_0 of the vector x and the scalar x_0."""

    flange = tr.Flange()
    x = ac.Variable(size=2)
    x_0 = ac.Variable()
    edges = [ac.Edge(ac.DATUM, "flange")]

    def equations(self):
        return [self.x == self.flange.s, self.x_0 == self.flange.f]


@pytest.mark.parametrize("min_group", [2, 10**9])
def test_two_unknowns_of_one_name_are_refused(min_group, monkeypatch):
    monkeypatch.setattr(templates, "MIN_GROUP", min_group)

    class Clashes(ac.Model):
        def __init__(self):
            super().__init__()
            self.fixed = tr.Fixed()
            self.clash = [Clash() for _ in range(3)]
            for c in self.clash:
                self.connect(c.flange, self.fixed.flange)

    with pytest.raises(ac.ModelDefinitionError, match=r"two unknowns are named 'clash\[0\]\.x_0'"):
        ac.build(Clashes())


class EditedChain(Mixed):
    """The mixed chain with one templated member's declaration edited on the instance (as
    the flexible-mechanism examples edit a joint's state priority)."""

    def __init__(self):
        super().__init__()
        v = self.masses[1].variables()["v"]
        v.state_priority, v.nominal = 3, 2.5


def test_an_instances_edited_declaration_is_kept_by_the_template(monkeypatch):
    reference = _products(EditedChain, 10**9, monkeypatch)
    templated = _products(EditedChain, 2, monkeypatch)
    edited = [v for v in reference["variables"] if v[0] == "masses[1].v"]
    assert edited and edited[0][8] == 3 and edited[0][9] == 2.5
    assert templated["variables"] == reference["variables"]


class Accelerated(ac.Component):
    """A mass written with der() of a derivative (a template's der of a der placeholder)."""

    flange = tr.Flange()
    m = ac.Parameter(1.0)
    s = ac.Variable(start=0.0)
    edges = [ac.Edge(ac.DATUM, "flange")]

    def equations(self):
        return [self.s == self.flange.s, self.m * ac.der(ac.der(self.s)) == -self.flange.f]


class SecondOrderChain(ac.Model):
    """Springs (no derivative), then the masses they join: the masses' unknowns are the
    model's last when their derivatives are made."""

    def __init__(self, n: int):
        super().__init__()
        self.fixed = tr.Fixed()
        self.springs = [tr.Spring(c=100.0 + k) for k in range(n)]
        self.masses = [Accelerated(m=1.0 + k) for k in range(n)]
        prev = self.fixed.flange
        for spring, mass in zip(self.springs, self.masses, strict=True):
            self.connect(prev, spring.flange_a)
            self.connect(spring.flange_b, mass.flange)
            prev = mass.flange


def test_der_of_a_derivative_in_a_run_of_members(monkeypatch):
    """A run of members whose template takes der() of a der placeholder goes member by
    member (its second derivatives are no variable's of the run): the same products as
    per instance (it failed with an IndexError where the run's unknowns were the last)."""
    reference = _products(lambda: SecondOrderChain(12), 10**9, monkeypatch)
    counted = _templated(monkeypatch)
    templated = _products(lambda: SecondOrderChain(12), 2, monkeypatch)
    for key in reference:
        assert templated[key] == reference[key], key
    assert counted.count("Accelerated") == 12
