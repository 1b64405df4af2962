"""Flexible bodies inside mechanisms: attachments, reference conditions, nodal vs modal
coordinates, geometric stiffening, loads and results, against independent references.

References never reuse the body's matrices: FE frequencies come from the assembled nodal
``K``/``M`` with the joints' boundary conditions, rotating-beam frequencies from the
published tables (Wright et al. 1982; Hodges & Rutkowski 1981, re-derived to 6 digits in
``test_geometric_stiffening.py``), the spin-up stretch from the closed form
``rho Omega^2 L^3 / (3 E)``, energies from the preprocessor's NumPy invariants.
"""

from __future__ import annotations

import math

import casadi as cs
import numpy as np
import pytest
import scipy.linalg as sla

import acausal as ac
from acausal.errors import ModelDefinitionError, SimulationError
from acausal.export import linearize
from components import multibody as mb
from components import rotational as rot
from components.flexible import (
    BeamMesh,
    DistributedLoad,
    FlexibleBody,
    FlexibleBodyData,
    Material,
    PointLoad,
    Section,
    solve_static,
)

STEEL = Material.steel()
L, NEL = 0.5, 6
SEC = Section.rectangle(0.01, 0.02)


def link_data(reduction="nodal", modes=6, reference="pinned"):
    mesh = BeamMesh.line([0, 0, 0], [L, 0, 0], NEL)
    nodes = ("start", "end") if reference == "pinned" else "start"
    return FlexibleBodyData.from_mesh(mesh, STEEL, SEC, reference=reference,
                                      reference_nodes=nodes, reduction=reduction, modes=modes,
                                      attachment_nodes=["start", "end"])


def frequencies(cm):
    ev = np.linalg.eigvals(linearize(cm).A)
    return np.sort(np.abs(ev.imag[ev.imag > 1e-6])) / (2 * np.pi)


def fe_frequencies(data, fixed):
    K, M = data.model.K.toarray(), data.model.M.toarray()
    free = np.setdiff1d(np.arange(data.model.n_dofs), fixed)
    lam = sla.eigh(K[np.ix_(free, free)], M[np.ix_(free, free)], eigvals_only=True)
    return np.sqrt(lam) / (2 * np.pi)


class PinnedLink(ac.Model):
    """A link between two revolutes about z to the ground (a closed loop, no rigid DOF)."""

    def __init__(self, data):
        super().__init__()
        self.world = mb.World(g=[0, 0, 0])
        self.ja = mb.Revolute(n=[0, 0, 1], phi=ac.guess(0.0), w=ac.guess(0.0))
        self.link = FlexibleBody(data=data, attachments=["start", "end"], stiffening=False,
                                 q=ac.guess(0.0), qd=ac.guess(0.0))
        self.post = mb.FixedTranslation(r=[L, 0, 0])
        self.jb = mb.Revolute(n=[0, 0, 1], phi=ac.guess(0.0))
        self.connect(self.world.frame_b, self.ja.frame_a, self.post.frame_a)
        self.connect(self.ja.frame_b, self.link.frame_b)
        self.connect(self.link.frame_c, self.jb.frame_a)
        self.connect(self.post.frame_b, self.jb.frame_b)


def _revolute_fixed_dofs(node):
    return [6 * node + i for i in range(5)]  # translations and rotations about x, y


def test_nodal_pinned_link_in_a_loop_has_the_fe_frequencies():
    data = link_data("nodal")
    cm = ac.build(PinnedLink(data))
    assert cm.mechanism.dof == 6 * (NEL + 1) - 10  # revolutes hold 5 DOFs at each end
    f = frequencies(cm)
    ref = fe_frequencies(data, _revolute_fixed_dofs(0) + _revolute_fixed_dofs(NEL))
    assert f.size == ref.size
    # measured: 7e-12 worst over all 32 frequencies
    np.testing.assert_allclose(f, ref, rtol=1e-9)


class DrivenCantilever(ac.Model):
    """A link clamped to a revolute whose angle is held by a position driver."""

    def __init__(self, data):
        super().__init__()
        self.world = mb.World(g=[0, 0, 0])
        self.hub = mb.Revolute(use_axis_flange=True, n=[0, 0, 1])
        self.drive = rot.Position(phi_ref=0.3)
        self.link = FlexibleBody(data=data, stiffening=False)
        self.tip = mb.Body(m=0.2, I_11=1e-5, I_22=1e-5, I_33=1e-5)
        self.connect(self.world.frame_b, self.hub.frame_a)
        self.connect(self.drive.flange, self.hub.axis)
        self.connect(self.hub.frame_b, self.link.frame_a)
        self.connect(self.link.frame_b, self.tip.frame_a)


def test_nodal_clamped_link_with_tip_body_has_the_fe_frequencies():
    data = link_data("nodal", reference="clamped")
    f = frequencies(ac.build(DrivenCantilever(data)))
    # reference: FE with the clamp and the tip body's mass and rotary inertia at the end node
    K, M = data.model.K.toarray(), data.model.M.toarray().copy()
    e = 6 * NEL
    M[e:e + 3, e:e + 3] += 0.2 * np.eye(3)
    M[e + 3:e + 6, e + 3:e + 6] += 1e-5 * np.eye(3)
    free = np.arange(6, data.model.n_dofs)
    ref = np.sqrt(sla.eigh(K[np.ix_(free, free)], M[np.ix_(free, free)],
                           eigvals_only=True)) / (2 * np.pi)
    assert f.size == ref.size
    np.testing.assert_allclose(f, ref, rtol=1e-9)


def test_modal_coordinates_converge_to_nodal_inside_the_mechanism():
    ref = frequencies(ac.build(PinnedLink(link_data("nodal"))))
    errors = []
    for n in (1, 2, 4, 8):
        f = frequencies(ac.build(PinnedLink(link_data("craig_bampton", n))))
        errors.append(f[:2] / ref[:2] - 1)
    errors = np.array(errors)
    print("Craig-Bampton 1/2/4/8 fixed-interface modes, first two frequencies:", errors)
    assert np.all(errors > -1e-10)  # Ritz: never below the full model
    assert np.all(np.diff(errors, axis=0) <= 1e-12)  # monotone
    assert errors[-1].max() < 1e-4  # measured 1.8e-6, 2.2e-5
    # plain pinned modes: the in-plane modes are exact (the joints are pinned in-plane),
    # the out-of-plane ones are not (the revolutes clamp them): the reference rule
    f = frequencies(ac.build(PinnedLink(link_data("modal", 4))))
    assert f[0] == pytest.approx(ref[0], rel=1e-9)


# ---------------------------------------------------------------- rotating beams
class Rotor(ac.Model):
    def __init__(self, data, omega, stiffening=True):
        super().__init__()
        self.world = mb.World(g=[0, 0, 0])
        self.hub = mb.Revolute(use_axis_flange=True, n=[0, 0, 1], phi=0.0)
        self.drive = rot.Speed(w_ref=omega)
        self.blade = FlexibleBody(data=data, stiffening=stiffening)
        self.connect(self.world.frame_b, self.hub.frame_a)
        self.connect(self.drive.flange, self.hub.axis)
        self.connect(self.hub.frame_b, self.blade.frame_a)


def test_rotating_beam_flapwise_frequencies_against_tables():
    sec = Section.rectangle(0.03, 0.005)  # flap (z) weak, chord (y) 6x stiffer
    data = FlexibleBodyData.from_mesh(BeamMesh.line([0, 0, 0], [1.0, 0, 0], 20), STEEL, sec,
                                      reference="clamped", reference_nodes="start", modes=12)
    s = np.sqrt(STEEL.rho * sec.A / (STEEL.E * sec.Iy))  # L = 1
    chord0 = frequencies(ac.build(Rotor(data, 0.0)))[1] * 2 * np.pi * s  # 21.08 (6 x 3.516)
    for lam, ref in ((1, 3.681647), (5, 6.449546), (10, 11.202329)):
        cm = ac.build(Rotor(data, lam / s))
        f = frequencies(cm) * 2 * np.pi * s
        print(f"spin {lam}: flap {f[0]:.6f} (table {ref}), chord {f[1]:.4f}")
        assert f[0] == pytest.approx(ref, rel=3e-4)  # measured 3e-6, 1.2e-4, 1.1e-4
        helper = Rotor(data, lam / s).blade.rotating_frequencies([0, 0, lam / s])
        np.testing.assert_allclose(helper[:4] * 2 * np.pi * s, f[:4], rtol=1e-9)
        # chordwise: spin softening offsets the centrifugal stiffening,
        # w^2 = w0^2 + (K1 - 1) Omega^2 with the Southwell coefficient K1 = 1.193
        # (less a little Coriolis coupling with the axial motion: measured -8e-4 at spin 10)
        assert f[1] ** 2 == pytest.approx(chord0**2 + 0.1934 * lam**2, rel=2e-3)
    # without stiffening the flapwise frequency softens instead (the classic failure)
    f = frequencies(ac.build(Rotor(data, 5 / s, stiffening=False))) * 2 * np.pi * s
    assert f[0] < 3.52


KANE = dict(L=10.0, E=7e10, rho=3000.0, A=4e-4, I=2e-7, omega=6.0, T=15.0)


def spin_up_angle(t):
    """Kane, Ryan & Banerjee (1987): Omega(t) = Os/T (t - T/(2 pi) sin(2 pi t/T)), t < T."""
    Os, T = KANE["omega"], KANE["T"]
    ramp = Os / T * (t**2 / 2 + (T / (2 * np.pi)) ** 2 * (cs.cos(2 * np.pi * t / T) - 1))
    return cs.if_else(t < T, ramp, Os * (t - T / 2))


class SpinUp(ac.Model):
    def __init__(self, data, stiffening=True):
        super().__init__()
        self.world = mb.World(g=[0, 0, 0])
        self.hub = mb.Revolute(use_axis_flange=True, n=[0, 0, 1])
        self.drive = rot.Position(phi_ref=spin_up_angle)
        self.beam = FlexibleBody(data=data, stiffening=stiffening)
        self.connect(self.world.frame_b, self.hub.frame_a)
        self.connect(self.drive.flange, self.hub.axis)
        self.connect(self.hub.frame_b, self.beam.frame_a)


def kane_beam():
    k = KANE
    sec = Section(A=k["A"], Iy=k["I"], Iz=k["I"], J=2 * k["I"], ky=math.inf, kz=math.inf)
    # Craig-Bampton at the tip: the axial constraint mode carries the stretch
    return FlexibleBodyData.from_mesh(BeamMesh.line([0, 0, 0], [k["L"], 0, 0], 10),
                                      Material(E=k["E"], nu=0.3, rho=k["rho"]), sec,
                                      reference="clamped", reference_nodes="start",
                                      reduction="craig_bampton", modes=4, attachment_nodes="end")


def test_spin_up_beam_stays_bounded_and_stretches_as_the_closed_form():
    k = KANE
    res = ac.simulate(SpinUp(kane_beam()), 20.0, rtol=1e-6, atol=1e-8, n_points=201)
    u = res["beam.end.u"]
    stretch = k["rho"] * k["omega"] ** 2 * k["L"] ** 3 / (3 * k["E"])
    late = res.t > 17.0
    print(f"tip lag peak {np.abs(u[:, 1]).max():.3f} m; stretch {u[-1, 0]:.5e} m vs "
          f"{stretch:.5e} m")
    assert np.abs(u[:, 1]).max() < 0.65  # measured 0.574 m during the spin-up, then < 4 mm
    assert np.abs(u[late, 1]).max() < 0.01
    assert u[late, 0].mean() == pytest.approx(stretch, rel=0.01)  # measured +5e-4


def test_spinning_beam_without_stiffening_is_unstable():
    """Linearised at the final speed (6 rad/s, above the first bending frequency 3.8
    rad/s), the linear FFRF model without stiffening has a real positive eigenvalue."""
    cm = ac.build(Rotor(kane_beam(), KANE["omega"], stiffening=False))
    assert np.linalg.eigvals(linearize(cm).A).real.max() > 1.0
    cm = ac.build(Rotor(kane_beam(), KANE["omega"]))
    assert np.linalg.eigvals(linearize(cm).A).real.max() < 1e-6


@pytest.mark.slow
def test_spin_up_beam_without_stiffening_diverges():
    with pytest.raises(SimulationError) as info:
        ac.simulate(SpinUp(kane_beam(), stiffening=False), 20.0, rtol=1e-6, atol=1e-8,
                    n_points=201)
    u = info.value.partial["beam.end.u"]
    assert np.abs(u[:, 1]).max() > 5.0  # the tip runs away (the linear FFRF failure)


# ---------------------------------------------------------------- kinematics and results
def test_cayley_node_rotation_is_orthogonal_with_consistent_angular_velocity():
    data = link_data("modal", 4)
    body = FlexibleBody(data=data, attachments=["start", "centre", "end"])
    assert body.attachment_frames == {"frame_b": 0, "frame_c": 3, "frame_d": 6}
    assert body.frame("end") is body.frame_d
    q, qd = cs.SX.sym("q", 4), cs.SX.sym("qd", 4)
    body.__dict__["_binding"] = {"q": q, "qd": qd}
    m = body.node_motion(6)
    f = cs.Function("f", [q, qd], [m.R_rel, cs.jtimes(cs.vec(m.R_rel), q, qd), m.w_rel])
    rng = np.random.default_rng(1)
    for _ in range(3):
        qv, qdv = 50 * rng.standard_normal(4), rng.standard_normal(4)  # rotations ~0.1-1
        R, dR, w = (np.asarray(x) for x in f(qv, qdv))
        dR = dR.reshape(3, 3, order="F")
        np.testing.assert_allclose(R.T @ R, np.eye(3), atol=1e-13)
        W = dR @ R.T
        np.testing.assert_allclose(W, -W.T, atol=1e-12)
        np.testing.assert_allclose([W[2, 1], W[0, 2], W[1, 0]], w.ravel(), atol=1e-12)
    with pytest.raises(ModelDefinitionError, match="no attachment frame"):
        body.frame(2)
    with pytest.raises(ModelDefinitionError, match="frame name"):
        FlexibleBody(data=data, attachments={"frame_a": "end"})


class LoadedCantilever(ac.Model):
    def __init__(self, data, loads, rayleigh_damped=True):
        super().__init__()
        self.world = mb.World(g=[0, 0, 0])
        self.beam = FlexibleBody(data=data, loads=loads, stiffening=False)
        self.connect(self.world.frame_b, self.beam.frame_a)


@pytest.mark.parametrize("lumped", [False, True])
def test_distributed_and_point_loads_static_against_fe(lumped):
    mesh = BeamMesh.line([0, 0, 0], [L, 0, 0], NEL)
    w1 = 2 * np.pi * fe_frequencies(link_data("nodal", reference="clamped"), range(6))[0]
    # stiffness-proportional damping, critical for mode 1 (higher modes overdamped)
    data = FlexibleBodyData.from_mesh(mesh, STEEL, SEC, reference="clamped",
                                      reference_nodes="start", reduction="nodal",
                                      rayleigh=(0.0, 2 / w1))
    loads = [DistributedLoad([0, -200.0, 50.0], lumped=lumped),
             PointLoad("end", force=[0, 0, -30.0], moment=[2.0, 0, 0])]
    res = ac.simulate(LoadedCantilever(data, loads), 40 / w1, rtol=1e-10, atol=1e-13,
                      n_points=11)
    f = data.model.distributed_load([0, -200.0, 50.0], lumped=lumped)
    f += data.model.point_load("end", [0, 0, -30.0], [2.0, 0, 0])
    u_ref = solve_static(data.model.K, f, data.fixed_dofs)
    u = res["beam.end.u"][-1]
    np.testing.assert_allclose(u, u_ref[6 * NEL:6 * NEL + 3], rtol=1e-7)
    # element resultants as results equal the preprocessor's from the static solution
    N = res["beam.element[0].Mz"][-1]
    assert N == pytest.approx(data.model.element_resultants(u_ref)[0, 5], rel=1e-6)
    # every node is a result (small mesh), also by set name
    np.testing.assert_allclose(res["beam.node[6].u"], res["beam.end.u"])


def test_world_frame_load_turns_with_the_body():
    """A world-fixed load on a body rotated by 90 degrees about z equals the body-frame
    load turned back."""
    data = link_data("modal", 4, reference="clamped")

    class Turned(ac.Model):
        def __init__(self, frame):
            super().__init__()
            self.world = mb.World(g=[0, 0, 0])
            self.turn = mb.FixedRotation(n=[0, 0, 1], angle=np.pi / 2)
            t = [-100.0, 0, 0] if frame == "world" else [0, 100.0, 0]
            self.beam = FlexibleBody(data=data, stiffening=False,
                                     loads=[DistributedLoad(t, frame=frame)])
            self.connect(self.world.frame_b, self.turn.frame_a)
            self.connect(self.turn.frame_b, self.beam.frame_a)

    a = ac.simulate(Turned("world"), 0.01, rtol=1e-10, atol=1e-12, n_points=11)
    b = ac.simulate(Turned("body"), 0.01, rtol=1e-10, atol=1e-12, n_points=11)
    np.testing.assert_allclose(a["beam.q"], b["beam.q"], atol=1e-14)
    assert np.abs(a["beam.q"]).max() > 1e-8


# ---------------------------------------------------------------- energy of a free loop
class FreeFourBar(ac.Model):
    """Rigid crank and rocker, flexible pinned coupler; swings under gravity, undriven."""

    def __init__(self, data):
        super().__init__()
        a, b, c, d = 0.2, 0.5, 0.4, 0.5
        A, C = np.array([0.0, a]), np.array([d, 0.0])  # crank up; closed form for B
        e = (C - A) / np.linalg.norm(C - A)
        x = (b**2 - c**2 + np.sum((C - A) ** 2)) / (2 * np.linalg.norm(C - A))
        B = A + x * e + np.sqrt(b**2 - x**2) * np.array([-e[1], e[0]])
        th_b = np.arctan2(*(B - A)[::-1])
        th_c = np.arctan2(*(B - C)[::-1])
        self.world = mb.World()
        self.j1 = mb.Revolute(n=[0, 0, 1], phi=np.pi / 2, w=0.0)
        for v in ("phi", "w"):  # the crank angle with the fixed start is a state
            self.j1.variables()[v].state_priority = 3
        self.crank = mb.FixedTranslation(r=[a, 0, 0])
        self.crank_body = mb.Body(m=0.5, r_CM=[a / 2, 0, 0], I_33=0.5 * a**2 / 12)
        self.j2 = mb.Revolute(n=[0, 0, 1], phi=ac.guess(th_b - np.pi / 2))
        self.coupler = FlexibleBody(data=data, attachments=["start", "end"], stiffening=False)
        self.j3 = mb.Revolute(n=[0, 0, 1], phi=ac.guess(th_c - th_b))
        self.rocker = mb.FixedTranslation(r=[c, 0, 0])
        self.rocker_body = mb.Body(m=0.8, r_CM=[c / 2, 0, 0], I_33=0.8 * c**2 / 12)
        self.base = mb.FixedTranslation(r=[d, 0, 0])
        self.j4 = mb.Revolute(n=[0, 0, 1], phi=ac.guess(th_c))
        self.connect(self.world.frame_b, self.j1.frame_a, self.base.frame_a)
        self.connect(self.j1.frame_b, self.crank.frame_a, self.crank_body.frame_a)
        self.connect(self.crank.frame_b, self.j2.frame_a)
        self.connect(self.j2.frame_b, self.coupler.frame_b)
        self.connect(self.coupler.frame_c, self.j3.frame_a)
        self.connect(self.j3.frame_b, self.rocker.frame_b)
        self.connect(self.rocker.frame_a, self.rocker_body.frame_a, self.j4.frame_b)
        self.connect(self.base.frame_b, self.j4.frame_a)


def _rigid_energy(res, name, m, rcm, I33, g):
    R = res[f"{name}.frame_a.R"].reshape(-1, 3, 3).transpose(0, 2, 1)
    r, v, w = (res[f"{name}.frame_a.{k}"] for k in ("r", "v", "w"))
    rc = np.einsum("tij,j->ti", R, rcm)
    vc = v + np.cross(w, rc)
    return 0.5 * m * np.sum(vc**2, 1) + 0.5 * I33 * w[:, 2] ** 2 - m * (r + rc) @ g


def test_energy_of_a_free_flexible_four_bar():
    mesh = BeamMesh.line([0, 0, 0], [0.5, 0, 0], 6)
    data = FlexibleBodyData.from_mesh(mesh, Material.aluminium(), Section.rectangle(0.004, 0.02),
                                      reference="pinned", reference_nodes=("start", "end"),
                                      modes=2)  # the two in-plane bending modes (37, 148 Hz)
    res = ac.simulate(FreeFourBar(data), 1.0, rtol=1e-9, atol=1e-11, n_points=501)
    g = np.array([0, -9.81, 0])
    E = (_rigid_energy(res, "crank_body", 0.5, [0.1, 0, 0], 0.5 * 0.04 / 12, g)
         + _rigid_energy(res, "rocker_body", 0.8, [0.2, 0, 0], 0.8 * 0.16 / 12, g))
    inv, K, basis = data.invariants, data.model.K, np.asarray(data.basis)
    R = res["coupler.frame_a.R"].reshape(-1, 3, 3).transpose(0, 2, 1)
    for n in range(res.t.size):  # kinetic energy 1/2 u^T M(q) u (NumPy invariants)
        q, qd = res["coupler.q"][n], res["coupler.qd"][n]
        u = np.concatenate([R[n].T @ res["coupler.frame_a.v"][n],
                            R[n].T @ res["coupler.frame_a.w"][n], qd])
        cmv = R[n] @ (inv.first_moment + inv.I3 @ q) + inv.mass * res["coupler.frame_a.r"][n]
        D = basis @ q
        E[n] += 0.5 * u @ inv.mass_matrix(q) @ u - g @ cmv + 0.5 * D @ (K @ D)
    scale = 9.81 * (0.5 * 0.2 + 0.8 * 0.4 + inv.mass * 0.4)
    drift = np.abs(E - E[0]).max() / scale
    tip = np.abs(res["coupler.centre.u"][:, 1]).max()
    print(f"free flexible four-bar: energy drift {drift:.2e} of the potential scale; "
          f"coupler mid-span deflection up to {tip:.2e} m")
    assert tip > 1e-5
    assert drift < 1e-6


def test_state_choice_by_priority_is_not_rechecked_at_every_output_point():
    """The elastic coordinates (priority 2) and the crank angle (3) are states, the loop's
    joint angles dummies. That choice is well conditioned but not the best-conditioned one
    without priorities; measured against the unweighted optimum it looked permanently
    "near a switch", and the simulator restarted IDAS at every output point (72 000 steps
    per turn of the driven flexible four-bar instead of 4 000). Judged with the selection's
    own priority weights it is the best choice: chunks of 20 checks, no switch."""
    mesh = BeamMesh.line([0, 0, 0], [0.5, 0, 0], 6)
    data = FlexibleBodyData.from_mesh(mesh, Material.aluminium(), Section.rectangle(0.004, 0.02),
                                      reference="pinned", reference_nodes=("start", "end"),
                                      modes=2)
    cm = ac.build(FreeFourBar(data))
    assert cm.selection.dynamic
    res = ac.simulate(cm, 0.03, rtol=1e-8, atol=1e-10, n_points=61)
    assert res.stats.reselections == 0
    # 60 output intervals, checked about every 10 of IDAS's steps, in chunks of 20 checks:
    # 8 integrator calls measured (832 steps); restarted at every output point, 60
    assert len(res.stats.segments) <= 12
