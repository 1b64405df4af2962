"""FlexibleBody (modal FFRF) in the multibody mechanism: checks against independent references.

Beam: steel, L = 1 m, 10 Timoshenko elements, rectangle 10 mm (body y, bending plane x-y)
x 30 mm (body z), clamped at node 0 = origin of frame_a, first 3 fixed-interface modes
(8.38 Hz y-bending, 25.1 Hz z-bending, 52.5 Hz y-bending).

The reference energies are computed from the raw finite-element mass quadrature points
(``FEModel.mass_points``: weights, positions, translation/rotation shape functions and section
second moments) and the full nodal stiffness ``FEModel.K``; neither the inertia invariants nor
the component's matrices are used. (A nodal ``V^T M V`` with the consistent beam mass matrix
is not exact for the term ``omega x (S q)``: a rotated beam deflection is not in the span of
the beam shape functions, so it would be a test of the discretisation, not of the equations.)
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.interpolate import CubicSpline

import acausal as ac
from components import multibody as mb
from components.flexible import (
    BeamMesh,
    FlexibleBody,
    FlexibleBodyData,
    Material,
    Section,
    solve_static,
)

L, WIDTH, HEIGHT, NEL = 1.0, 0.01, 0.03, 10
G = np.array([0.0, -9.81, 0.0])


def beam_data(E_scale: float = 1.0, rayleigh=(0.0, 0.0)) -> FlexibleBodyData:
    steel = Material.steel()
    mat = Material(E=steel.E * E_scale, nu=steel.nu, rho=steel.rho)
    mesh = BeamMesh.line([0, 0, 0], [L, 0, 0], NEL)
    return FlexibleBodyData.from_mesh(mesh, mat, Section.rectangle(WIDTH, HEIGHT), modes=3,
                                      reduction="fixed", fixed_nodes="start", rayleigh=rayleigh)


class Cantilever(ac.Model):
    def __init__(self, data, g, **kw):
        super().__init__()
        self.world = mb.World(g=list(g))
        self.beam = FlexibleBody(data=data, **kw)
        self.connect(self.world.frame_b, self.beam.frame_a)


class FlexPendulum(ac.Model):
    def __init__(self, data, stiffening=False):
        super().__init__()
        self.world = mb.World(g=list(G))
        self.hinge = mb.Revolute(n=[0, 0, 1], phi=0.0, w=0.0)
        self.beam = FlexibleBody(data=data, stiffening=stiffening)
        self.connect(self.world.frame_b, self.hinge.frame_a)
        self.connect(self.hinge.frame_b, self.beam.frame_a)


class RigidPendulum(ac.Model):
    def __init__(self):
        super().__init__()
        m = 7800.0 * WIDTH * HEIGHT * L
        self.world = mb.World(g=list(G))
        self.hinge = mb.Revolute(n=[0, 0, 1], phi=0.0, w=0.0)
        # closed forms: uniform bar plus the section's rotary inertia (Timoshenko mass)
        self.body = mb.Body(m=m, r_CM=[L / 2, 0, 0], I_11=m * (WIDTH**2 + HEIGHT**2) / 12,
                            I_22=m * (L**2 + HEIGHT**2) / 12, I_33=m * (L**2 + WIDTH**2) / 12)
        self.connect(self.world.frame_b, self.hinge.frame_a)
        self.connect(self.hinge.frame_b, self.body.frame_a)


def _frames(res, name):
    nt = res.t.size
    R = res[f"{name}.frame_a.R"].reshape(nt, 3, 3).transpose(0, 2, 1)  # column-major
    return res[f"{name}.frame_a.r"], R, res[f"{name}.frame_a.v"], res[f"{name}.frame_a.w"]


def _skew(v):
    out = np.zeros(v.shape[:-1] + (3, 3))
    out[..., 0, 1], out[..., 0, 2], out[..., 1, 2] = -v[..., 2], v[..., 1], -v[..., 0]
    return out - np.swapaxes(out, -1, -2)


def independent_energy(data, res, name, g):
    """Kinetic + gravity + strain energy of every particle u = x_g + T D + (R D) x d."""
    mp, ed, K = data.model.mass_points, data.model.element_dofs, data.model.K
    basis = np.asarray(data.basis)
    r, Rm, v, w = _frames(res, name)
    q, qd = res[f"{name}.q"], res[f"{name}.qd"]
    E = np.empty(res.t.size)
    for n in range(res.t.size):
        D, Dd = basis @ q[n], basis @ qd[n]
        De, Dde = D[ed], Dd[ed]  # (E, nd)
        p = mp.position + np.einsum("eqan,en->eqa", mp.T, De)
        th = np.einsum("eqan,en->eqa", mp.R, De)
        thd = np.einsum("eqan,en->eqa", mp.R, Dde)
        vb, wb = Rm[n].T @ v[n], Rm[n].T @ w[n]
        vel = vb + np.cross(wb, p) + np.einsum("eqan,en->eqa", mp.T, Dde)
        # section particles at offset d: velocity B d, B = w~ (I + th~) + thd~
        Wb = _skew(wb)
        B = Wb @ (np.eye(3) + _skew(th)) + _skew(thd)
        T = 0.5 * np.einsum("eq,eqa,eqa->", mp.weight, vel, vel) \
            + 0.5 * np.einsum("eqab,eqbc,eqac->", B, mp.second_moment, B)
        Vg = -np.einsum("eq,a,eqa->", mp.weight, Rm[n].T @ g, p) - mp.weight.sum() * g @ r[n]
        E[n] = T + Vg + 0.5 * D @ (K @ D)
    return E


def _roots(t, y):
    return CubicSpline(t, y).roots(extrapolate=False)


def test_cantilever_free_vibration_period():
    data = beam_data()
    q0 = 0.01
    res = ac.simulate(Cantilever(data, [0, 0, 0], q=[q0, 0, 0]), 1.0, n_points=4001,
                      rtol=1e-11, atol=1e-13)
    z = _roots(res.t, res["beam.q"][:, 0])
    # zero crossings are half a period apart; least-squares slope over ~16 crossings
    half = np.polyfit(np.arange(z.size), z, 1)[0]
    err = abs(2 * half * data.frequencies[0] - 1.0)
    print(f"period relative error {err:.2e} ({z.size} crossings)")
    # IDAS at rtol 1e-11 (phase error ~1e-9) and spline interpolation at 0.25 ms steps
    # (~1e-9): a 1e-6 bound is met with three orders of margin
    assert err < 1e-6
    # other modes stay at rest: the clamped, non-rotating body has decoupled modal equations
    assert np.abs(res["beam.q"][:, 1:]).max() < 1e-12


def test_cantilever_static_deflection_under_gravity():
    w1 = 2 * np.pi * 8.38125
    data = beam_data(rayleigh=(2 * w1, 0.0))  # mass-proportional: every mode decays ~ e^-w1 t
    res = ac.simulate(Cantilever(data, G), 0.8, n_points=81, rtol=1e-11, atol=1e-14)
    q_end = res["beam.q"][-1]
    assert np.abs(res["beam.qd"][-1]).max() < 1e-9  # settled (e^-42 of the initial rate)
    model = data.model
    f = model.body_force_load(G)
    basis = np.asarray(data.basis)
    # modal static solution from the FE consistent load (not from the invariants)
    q_ref = np.linalg.solve(basis.T @ (model.K @ basis), basis.T @ f)
    np.testing.assert_allclose(q_end, q_ref, rtol=1e-8, atol=1e-12 * np.abs(q_ref).max())
    u_full = solve_static(model.K, f, data.fixed_dofs)
    tip_full = u_full[6 * NEL + 1]
    tip_modal = data.phi_t("end")[1] @ q_end
    tip_frame_b = res["beam.frame_b.r"][-1, 1]
    trunc = abs(tip_modal / tip_full - 1.0)
    print(f"tip: full FE {tip_full:.6e} m, 3 modes {tip_modal:.6e} m, truncation {trunc:.2e}")
    assert tip_frame_b == pytest.approx(tip_modal, rel=1e-12)
    assert tip_full == pytest.approx(-3 * 7800 * 9.81 * WIDTH * HEIGHT * L**4
                                     / (2 * 2.1e11 * HEIGHT * WIDTH**3), rel=1e-3)  # q L^4/8EI
    # modal truncation (2 in-plane bending modes for a uniform load): measured 9.1e-4;
    # bound 2e-3 (a fixed property of this mesh and mode count, not of the integration)
    assert trunc < 2e-3


def test_flexible_pendulum_energy():
    data = beam_data()
    res = ac.simulate(FlexPendulum(data), 2.0, n_points=2001, rtol=1e-11, atol=1e-12)
    E = independent_energy(data, res, "beam", G)
    m = 7800.0 * WIDTH * HEIGHT * L
    scale = m * 9.81 * L / 2  # largest exchange between kinetic and potential energy
    drift = np.abs(E - E[0]).max() / scale
    tip = res["beam.q"] @ data.phi_t("end")[1]
    print(f"energy drift {drift:.2e} of m g L/2; max |tip deflection| {np.abs(tip).max():.3e}")
    assert np.abs(tip).max() > 1e-4  # the elastic coordinates do take part in the motion
    # IDAS rtol 1e-11: the drift is the integrator's (measured 3e-13); 1e-6 as asked
    assert drift < 1e-6


def _period(res):
    # passages through the bottom (phi = -pi/2) are half a period apart and steep (|w| is
    # largest there), unlike the turning points where elastic wiggles give spurious roots
    z = _roots(res.t, res["hinge.phi"] + np.pi / 2)
    return 2 * (z[1] - z[0])


def test_stiff_flexible_pendulum_matches_rigid_period():
    rigid = ac.simulate(RigidPendulum(), 2.2, n_points=2201, rtol=1e-11, atol=1e-12)
    # E x 1e6 puts the modes at 8-52 kHz; stiffness-proportional damping (critical for
    # mode 1, beta = 2 / omega_1) removes their unresolved oscillation, so BDF steps over
    # them (undamped: 114 s and a 3e-6 period error from step-size trouble). Its force
    # beta K q' on the quasi-static deflection is ~1e-14 of gravity here.
    d = beam_data(E_scale=1e6)
    beta = 2.0 / (2 * np.pi * d.frequencies[0])
    stiff = ac.simulate(FlexPendulum(beam_data(E_scale=1e6, rayleigh=(0.0, beta))), 2.2,
                        n_points=2201, rtol=1e-11, atol=1e-12)
    Tr, Ts = _period(rigid), _period(stiff)
    print(f"rigid period {Tr:.9f} s, stiff flexible {Ts:.9f} s, rel {abs(Ts / Tr - 1):.2e}")
    # elastic compliance (omega_pendulum / omega_1)^2 ~ 1e-11 with E x 1e6: measured 2e-11;
    # the asked bound 1e-4 (a wrong rigid inertia, e.g. no rotary term, shows at 2.5e-5
    # only, so the trajectories are also compared: measured 4e-10 rad)
    assert Ts == pytest.approx(Tr, rel=1e-4)
    assert np.abs(stiff["hinge.phi"] - rigid["hinge.phi"]).max() < 1e-7


class FreeFlight(ac.Model):
    """No joint: the body edge is a tree branch (quaternion free flight), gravity off."""

    def __init__(self, data):
        super().__init__()
        self.world = mb.World(g=[0, 0, 0])
        # stiffening off: the SID geometric stiffness K_G(omega) has no potential (see docs)
        self.beam = FlexibleBody(data=data, stiffening=False, q=[0.01, 0.005, 0.002], r_0=[0, 0, 0],
                                 v_0=[0.1, 0.2, 0.0], Q=[1, 0, 0, 0], w_a=[0.5, 1.0, 3.0])


def test_free_flight_conserves_energy_and_momentum():
    data = beam_data()
    res = ac.simulate(FreeFlight(data), 1.0, n_points=201, rtol=1e-10, atol=1e-10)
    E = independent_energy(data, res, "beam", np.zeros(3))
    mp, ed, basis = data.model.mass_points, data.model.element_dofs, np.asarray(data.basis)
    r, Rm, v, w = _frames(res, "beam")
    P = []
    for n in range(res.t.size):  # linear momentum of all particles (int rho d = 0)
        D, Dd = basis @ res["beam.q"][n], basis @ res["beam.qd"][n]
        p = mp.position + np.einsum("eqan,en->eqa", mp.T, D[ed])
        vb, wb = Rm[n].T @ v[n], Rm[n].T @ w[n]
        vel = vb + np.cross(wb, p) + np.einsum("eqan,en->eqa", mp.T, Dd[ed])
        P.append(Rm[n] @ np.einsum("eq,eqa->a", mp.weight, vel))
    P = np.array(P)
    e_drift = np.abs(E - E[0]).max() / E[0]
    p_drift = np.abs(P - P[0]).max() / np.linalg.norm(P[0])
    print(f"free flight: energy drift {e_drift:.2e}, momentum drift {p_drift:.2e}")
    # integration error at rtol 1e-10 (measured ~1e-8 and below): 1e-6 leaves margin
    assert e_drift < 1e-6 and p_drift < 1e-6
    assert np.abs(res["beam.q"][:, 1]).max() > 1e-3  # elastic motion present


class TipMass(ac.Model):
    """Cantilever with a rigid point mass at frame_b (the tip), gravity on, damped."""

    def __init__(self, data, m_tip):
        super().__init__()
        self.world = mb.World(g=list(G))
        self.beam = FlexibleBody(data=data)
        self.tip = mb.Body(m=m_tip, I_11=0.0, I_22=0.0, I_33=0.0)
        self.connect(self.world.frame_b, self.beam.frame_a)
        self.connect(self.beam.frame_b, self.tip.frame_a)


def test_tip_mass_at_frame_b_static():
    w1 = 2 * np.pi * 8.38125
    data = beam_data(rayleigh=(2 * w1, 0.0))
    m_tip = 1.0
    res = ac.simulate(TipMass(data, m_tip), 1.5, n_points=31, rtol=1e-11, atol=1e-13)
    model, basis = data.model, np.asarray(data.basis)
    f = model.body_force_load(G)
    f[6 * NEL: 6 * NEL + 3] += m_tip * G  # the tip weight at the end node
    q_ref = np.linalg.solve(basis.T @ (model.K @ basis), basis.T @ f)
    # a point mass: frame_b's linearised rotation carries no load, translation is exact
    np.testing.assert_allclose(res["beam.q"][-1], q_ref, rtol=1e-7,
                               atol=1e-10 * np.abs(q_ref).max())
    tip_full = solve_static(model.K, f, data.fixed_dofs)[6 * NEL + 1]
    print(f"tip mass: full FE {tip_full:.6e}, modal {res['beam.frame_b.r'][-1, 1]:.6e}")


def test_flexible_results_have_their_units():
    """res.unit gave None for a flexible body's node results and element resultants (the
    mechanism pass added them without a unit); reference: metres for nodes, the beam
    element's resultant_units (N, N.m) for resultants."""
    m = FlexPendulum(beam_data())
    m.beam.output_resultants = True
    res = ac.simulate(m, 0.001)
    assert not [n for n in res.names() if res.unit(n) is None]
    expected = {"beam.end.u": "m", "beam.end.r": "m", "beam.element[0].N": "N",
                "beam.element[0].Vz": "N", "beam.element[0].T": "N.m",
                "beam.element[0].Mz": "N.m"}
    assert {n: res.unit(n) for n in expected} == expected
