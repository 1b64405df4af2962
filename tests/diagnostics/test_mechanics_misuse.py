"""Misuse of the mechanics libraries (3D multibody, flexible bodies, nodal structures) found
by a user trial: each case was accepted and ran wrong, or failed with a numpy, scipy or
Python error from inside the library. Each now gives an error (or a warning) that names
the component, the parameter or the port, and says what to do."""

import numpy as np
import pytest

import acausal as ac
from components import multibody as mb


class _Pendulum(ac.Model):
    """A 1 kg point on a 1 m rod, on a revolute about z from ``world``."""

    def __init__(self, world=None, name=""):
        super().__init__()
        self.world = world if world is not None else mb.World()
        self.joint = mb.Revolute(phi=0.0, w=0.0)
        self.rod = mb.FixedTranslation(r=[1.0, 0, 0])
        self.bob = mb.Body(m=1.0, I_11=0, I_22=0, I_33=0)
        self.connect(self.world.frame_b, self.joint.frame_a)
        self.connect(self.joint.frame_b, self.rod.frame_a)
        self.connect(self.rod.frame_b, self.bob.frame_a)


# --------------------------------------------------------------------------------------
# multibody


def test_two_worlds_are_an_error_naming_both():
    """The second World's gravity (and dynamics= option) was silently ignored."""
    m = _Pendulum(mb.World(g=[0, -9.81, 0]))
    m.world2 = mb.World(g=[9.81, 0, 0])
    m.j2 = mb.Revolute(phi=0.0, w=0.0)
    m.rod2 = mb.FixedTranslation(r=[0, 1.0, 0])
    m.b2 = mb.Body(m=1.0, I_11=0, I_22=0, I_33=0)
    m.connect(m.world2.frame_b, m.j2.frame_a)
    m.connect(m.j2.frame_b, m.rod2.frame_a)
    m.connect(m.rod2.frame_b, m.b2.frame_a)
    with pytest.raises(ac.TopologyError, match=r"2 World components \(world, world2\)"):
        ac.build(m)


def test_indefinite_inertia_tensor_is_an_error_at_construction_and_in_params():
    """Principal moments (-0.9, 0.1, 1.1): a negative kinetic energy for some rotation.
    It ran with status ok, also as a params= override."""
    with pytest.raises(ac.ModelDefinitionError, match=r"Body: the inertia tensor has the "
                       r"principal moments \(-0.9, 0.1, 1.1\) kg.m2, one negative"):
        mb.Body(m=1.0, I_11=0.1, I_22=0.1, I_33=0.1, I_21=1.0)
    cm = ac.build(_Pendulum())
    with pytest.raises(ac.ArgumentError, match=r"Body 'bob': the inertia tensor has the "
                       r"principal moments \(-5, 0, 5\).*\(with params=\{'bob.I_21': 5.0\}\)"):
        ac.simulate(cm, 0.1, params={"bob.I_21": 5.0})
    # a valid override of the same entry is taken (with I_11 = I_22 = 5 as well)
    ac.simulate(cm, 0.1, params={"bob.I_11": 5.0, "bob.I_22": 5.0, "bob.I_21": 5.0})


def test_body_given_only_I_33_is_accepted_quietly():
    """I_33 = 1 > I_11 + I_22 = 0.2 (the defaults) belongs to no mass distribution, but it
    is the common way to give a link of a planar mechanism, whose motion sees only I_33:
    no warning (one per construction, build and run was noise on every planar model)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mb.Body(m=1.0, I_33=1.0)


def test_nodal_rigid_body_inertia_is_checked_alike():
    from components import nodal as nd

    class Tri(ac.Model):
        def __init__(self, inertia):
            super().__init__()
            self.nodes = [nd.Node(x=1.0), nd.Node(y=1.0), nd.Node(z=1.0)]
            self.body = nd.RigidBody(3, inertia=inertia)
            for p, n_ in zip(self.body.pins, self.nodes, strict=True):
                self.connect(p, n_.pin)

    with pytest.raises(ac.ModelDefinitionError, match=r"RigidBody 'body': the inertia tensor "
                       r"has the principal moments \(-0.9, 0.1, 1.1\)"):
        ac.build(Tri([[0.1, 1.0, 0.0], [1.0, 0.1, 0.0], [0.0, 0.0, 0.1]]))


@pytest.mark.parametrize("nb, why", [([1, 0, 0], "they are parallel"),
                                     ([1, 0.1, 0], r"they are at 5.711 deg")])
def test_universal_axes_must_be_perpendicular(nb, why):
    """Parallel axes failed at t = 0 with '-inf ... far out of scale'; skewed ones ran
    (and a cut universal joint holds its axes perpendicular, so it could not close)."""
    with pytest.raises(ac.ModelDefinitionError, match=r"Universal: the axes n_a = \[1.0, 0.0, "
                       rf"0.0\] \(frame_a\) and n_b = .* must be perpendicular; {why}"):
        mb.Universal(n_a=[1, 0, 0], n_b=nb)
    mb.Universal(n_a=[0.6, 0.8, 0], n_b=[-0.8, 0.6, 0])  # perpendicular, not unit


def test_planar_in_plane_axis_parallel_to_the_normal_is_named():
    """It was 'axis vector must not be zero' from rotations.unit."""
    with pytest.raises(ac.ModelDefinitionError, match=r"Planar: parameter 'n_x' = \[0.0, 0.0, "
                       r"2.0\] is parallel to the plane normal n"):
        mb.Planar(n=[0, 0, 1], n_x=[0, 0, 2])
    mb.Planar(n=[0, 0, 1], n_x=[1, 0, 1])  # (its part along n is dropped)


def test_world_force_function_of_the_wrong_length_is_named():
    """lambda t: [1.0, 0] was an IndexError in WorldForce.wrenches."""

    class Pushed(ac.Model):
        def __init__(self, force):
            super().__init__()
            self.world = mb.World(g=[0, 0, 0])
            self.body = mb.Body(m=2.0)
            self.push = mb.WorldForce(force=force)
            self.connect(self.body.frame_a, self.push.frame_b)

    with pytest.raises(ac.ModelDefinitionError, match=r"WorldForce 'push': parameter 'force' "
                       r"is a function of time that returned \[1.0, 0\] \(2 values\); it "
                       r"must return 3 numbers \[N\]"):
        ac.build(Pushed(lambda t: [1.0, 0]))
    # a right one: x = 10 t^3 / (6 m) from rest
    res = ac.simulate(Pushed(lambda t: [10 * t, 0, 0]), 1.0, rtol=1e-10, atol=1e-12)
    # (the integration to rtol 1e-10 of a cubic: 1e-9 bounds it)
    assert res.final("body.r_0")[0] == pytest.approx(10 / 12, rel=1e-9)


# --------------------------------------------------------------------------------------
# flexible bodies


@pytest.fixture(scope="module")
def beam_data():
    """A 1 m steel beam of 4 elements clamped at its start, 2 modes."""
    from components.flexible import BeamMesh, FlexibleBodyData, Material, Section

    return FlexibleBodyData.from_mesh(BeamMesh.line([0, 0, 0], [1, 0, 0], 4), Material.steel(),
                                      Section.circle(0.01), reference_nodes="start", modes=2)


@pytest.mark.parametrize("load, message", [
    # a typo of the frame was taken as 'world'
    (lambda fl: fl.PointLoad("end", force=(0, -10.0, 0), frame="Body"),
     r"loads\[0\] \(PointLoad\)\.frame='Body': use 'body'"),
    (lambda fl: fl.PointLoad("end", force=(0, -10.0, 0), frame="local"),
     r"loads\[0\] \(PointLoad\)\.frame='local'"),
    # wrong lengths were numpy's broadcast errors
    (lambda fl: fl.PointLoad("end", force=(0, 1)),
     r"loads\[0\] \(PointLoad\) force must be 3 finite numbers \[N\].*got \(0, 1\)"),
    (lambda fl: fl.PointLoad("end", moment=(0, 0, float("nan"))),
     r"loads\[0\] \(PointLoad\) moment must be 3 finite numbers \[N m\]"),
    (lambda fl: fl.DistributedLoad((0, 1)),
     r"loads\[0\] \(DistributedLoad\) traction must be 3 finite numbers"),
    (lambda fl: fl.DistributedLoad((0, 1, 0), frame="global"),
     r"loads\[0\] \(DistributedLoad\)\.frame='global'"),
])
def test_flexible_load_with_a_wrong_frame_or_length_names_the_load(beam_data, load, message):
    import components.flexible as fl

    with pytest.raises(ac.ModelDefinitionError, match=message) as err:
        fl.FlexibleBody(data=beam_data, loads=[load(fl)])
    assert str(err.value).startswith("FlexibleBody: ")


def _from_mesh(nodes, elements, **kw):
    from components.flexible import BeamMesh, FlexibleBodyData, Material, Section

    mesh = BeamMesh(np.array(nodes, dtype=float), np.array(elements))
    return FlexibleBodyData.from_mesh(mesh, Material.steel(), Section.circle(0.01),
                                      cache=False, **kw)


@pytest.mark.parametrize("kw", [dict(modes=2, reference_nodes=0), dict(modes=2)])
def test_mesh_node_in_no_element_is_named(kw):
    """It was scipy's LinAlgError from the eigensolver (a node without mass)."""
    from components.flexible import FEError

    with pytest.raises(FEError, match=r"node 2 at \(5, 5, 5\) of the mesh belongs to no "
                       r"element"):
        _from_mesh([[0, 0, 0], [1, 0, 0], [5, 5, 5]], [[0, 1]], **kw)


def test_mesh_piece_the_reference_does_not_hold_is_named():
    """Two beams meeting at x = 1 m with unmerged nodes: clamped at node 0, the second
    beam's rigid motions came out as 'elastic modes' of frequency 0; with reference='free'
    it was scipy's LinAlgError."""
    from components.flexible import FEError

    nodes, elements = [[0, 0, 0], [1, 0, 0], [1, 0, 0], [2, 0, 0]], [[0, 1], [2, 3]]
    with pytest.raises(FEError, match=r"2 separate pieces, and the piece of nodes \[2, 3\] "
                       r"\(element\(s\) \[1\]\) holds none of the clamped reference_nodes "
                       r"\[0\].*node 2 and node 1 of another piece are at the same point"):
        _from_mesh(nodes, elements, modes=3, reference_nodes=0)
    with pytest.raises(FEError, match=r"2 separate pieces; reference='free' needs one piece"):
        _from_mesh(nodes, elements, modes=3)
    # both pieces clamped: two cantilevers of 1 m, the same first frequency twice
    # (eigen-solver round-off between two identical blocks: 1e-9 relative)
    data = _from_mesh(nodes, elements, modes=2, reference_nodes=[0, 3])
    assert data.frequencies[0] > 1.0
    assert data.frequencies[1] == pytest.approx(data.frequencies[0], rel=1e-9)


# --------------------------------------------------------------------------------------
# nodal structures


@pytest.mark.parametrize("make, message", [
    # a negative L0 ran the winch the wrong way; 0 gave "residual inf"
    (lambda nd: nd.Winch(rate=-0.1, L0=-1.0),
     "Winch: parameter 'L0' = -1 m is out of its range: it must be > 0 m"),
    (lambda nd: nd.Winch(rate=-0.1, L0=0.0),
     "Winch: parameter 'L0' = 0 m is out of its range: it must be > 0 m (zero is excluded"),
    # Bar(L=-1) said "the bar has zero length; its pins start at the same point"
    (lambda nd: nd.Bar(L=-1.0), "Bar: parameter 'L' = -1 m is out of its range: it must be > 0"),
    (lambda nd: nd.Bar(L="5 kg"), "Bar: parameter 'L' [m]: '5 kg' is kg, not 'm'"),
])
def test_nodal_length_out_of_range_names_the_parameter(make, message):
    from components import nodal as nd

    with pytest.raises(ac.ModelDefinitionError) as err:
        make(nd)
    assert message in str(err.value)


def test_nodal_lengths_take_units():
    from components import nodal as nd

    assert nd.Bar(L="50 cm").L == 0.5 and nd.Winch(L0="2 m").L0 == 2.0


def test_support_direction_given_twice_is_an_error():
    from components import nodal as nd

    class Held(ac.Model):
        def __init__(self, directions):
            super().__init__()
            self.a = nd.Node()
            self.hold = nd.Support(directions=directions)
            self.connect(self.a.pin, self.hold.pin)

    with pytest.raises(ac.ModelDefinitionError,
                       match=r"Support 'hold': directions='xzx' names x more than once.*'xz'"):
        ac.build(Held("xzx"))
    cm = ac.build(Held("zx"))
    assert cm.domain_pass("pin").report.modes.n_modes == 1  # only y is free


def test_fe_inputs_take_unit_strings():
    """Material("210 GPa", ...) and thickness="3 mm" were 'could not convert string to
    float'; they are converted as parameters are (the reference: the same numbers in SI)."""
    from components.flexible import FEError, FlexibleBodyData, Material, Section, ShellMesh

    assert Material("210 GPa", "0.3", "7.8 g/cm3").E == 2.1e11
    assert Material("210 GPa", 0.3, "7800 kg/m3", G="80 GPa").G == 8e10
    assert Section.circle("1 cm") == Section.circle(0.01)
    assert Section.tube("2 cm", "10 mm") == Section.tube(0.02, 0.01)
    mesh = ShellMesh.rectangle(1.0, 1.0, 2, 2)
    a = FlexibleBodyData.from_mesh(mesh, Material("210 GPa", 0.3, "7800 kg/m3"),
                                   thickness="3 mm", modes=2, reference_nodes="s0", cache=False)
    b = FlexibleBodyData.from_mesh(mesh, Material.steel(), thickness=0.003, modes=2,
                                   reference_nodes="s0", cache=False)
    np.testing.assert_array_equal(a.frequencies, b.frequencies)
    with pytest.raises(FEError, match=r"Material.E \[Pa\]: '210 GPa/m' is kg/\(m2.s2\), not 'Pa'"):
        Material("210 GPa/m", 0.3, 7800)
    with pytest.raises(FEError, match=r"shell thickness \[m\]: '3 kg' is kg, not 'm'"):
        FlexibleBodyData.from_mesh(mesh, Material.steel(), thickness="3 kg", modes=2,
                                   reference_nodes="s0", cache=False)


@pytest.mark.parametrize("modes", [2.5, "2", True])
def test_fe_modes_must_be_a_whole_number(modes):
    """modes=2.5 was truncated to 2 silently."""
    from components.flexible import BeamMesh, FEError, FlexibleBodyData, Material, Section

    with pytest.raises(FEError, match=r"modes must be a whole number.*got "):
        FlexibleBodyData.from_mesh(BeamMesh.line([0, 0, 0], [1, 0, 0], 4), Material.steel(),
                                   Section.circle(0.01), reference_nodes="start", modes=modes)


def test_joint_motion_without_inertia_is_named_at_build():
    """A point mass on a ball joint cannot spin about its rod (the spin moves no mass): it
    was 'der(ball.w_rel_0) = nan ... a parameter or a source far out of scale' at t = 0."""

    class Ball(ac.Model):
        def __init__(self, inertia):
            super().__init__()
            self.world = mb.World()
            self.ball = mb.Spherical()
            self.rod = mb.FixedTranslation(r=[1.0, 0, 0])
            self.bob = mb.Body(m=1.0, **inertia)
            self.connect(self.world.frame_b, self.ball.frame_a)
            self.connect(self.ball.frame_b, self.rod.frame_a)
            self.connect(self.rod.frame_b, self.bob.frame_a)

    with pytest.raises(ac.ModelDefinitionError, match=r"the joint ball has a motion that moves "
                       r"no mass at the start configuration: its speeds \(ball.w_rel_0, "
                       r"ball.w_rel_1, ball.w_rel_2\) in the proportion \(1.0, 0.0, 0.0\), a "
                       r"rotation about \[1.0, 0.0, 0.0\].*The bodies it carries \(bob\)"):
        ac.build(Ball(dict(I_11=0, I_22=0, I_33=0)))
    ac.build(Ball(dict(I_11=1e-4, I_22=1e-4, I_33=1e-4)))  # a small sphere: regular


def test_free_body_without_inertia_is_named_at_build():
    class Free(ac.Model):
        def __init__(self):
            super().__init__()
            self.world = mb.World(g=[0, 0, 0])
            self.body = mb.Body(m=1.0, I_11=0, I_22=0, I_33=0)
            self.torque = mb.WorldTorque(torque=[0, 0, 1.0])
            self.connect(self.body.frame_a, self.torque.frame_b)

    with pytest.raises(ac.ModelDefinitionError, match=r"the free body body has a motion that "
                       r"moves no mass.*a rotation about"):
        ac.build(Free())


def test_not_a_number_at_the_start_is_named_as_such():
    """An expression that is 0/0 at the start (the direction x / |x| of x = 0): the failure
    said '... is beyond what the integrator can work with (|value| > 1e+150): a parameter
    or a source far out of scale', which a NaN is not."""
    from components import electrical as el

    class Direction(ac.Component):
        p = el.Pin()
        x = ac.Variable(start=0.0, fixed=True)
        edges = [ac.Edge(ac.DATUM, "p")]

        def equations(self):
            return [ac.der(self.x) == 1.0 + self.x / (self.x**2) ** 0.5, self.p.v == 0]

    class M(ac.Model):
        def __init__(self):
            super().__init__()
            self.b = Direction()

    with pytest.raises(ac.SimulationError) as exc:
        ac.simulate(M(), 1.0)
    text = str(exc.value)
    assert "= nan at t = 0 s (in b) is not a number" in text
    assert "two points that coincide" in text and "far out of scale" not in text
