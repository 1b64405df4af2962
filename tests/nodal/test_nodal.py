"""Nodal formulation and the null-space Newmark integrator (Xiang, Wu & Zhou 2015).

Element matrices against closed forms; the constraint matrix against the paper's forms
(eqs. 3, 5, 15, 21); the integrator against independent references (a minimal-coordinate
ODE of the five-bar, Euler's equations of a torque-free body, a winch's closed form),
convergence rates, energy balances, the IDAS path on the same components, the paper's
mode counts and the failure of too large a step. Every tolerance says why it has its
size.
"""

from __future__ import annotations

import importlib.util
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.spatial.transform import Rotation

import acausal as ac
from acausal.nodal import NewmarkNullspace, Scheme, nodal_system, null_space
from acausal.nodal.integrator import mode_table
from components import nodal as nd

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def load(name: str):
    if str(EXAMPLES) not in sys.path:
        sys.path.insert(0, str(EXAMPLES))
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ac.RedundantConstraintWarning)
        yield


# --------------------------------------------------------------------------------------
# elements
# --------------------------------------------------------------------------------------


class _TwoNodes(ac.Model):
    def __init__(self, element, ra=(0.0, 0.0, 0.0), rb=(1.0, 0.0, 0.0)):
        super().__init__()
        self.a = nd.Node(x=ra[0], y=ra[1], z=ra[2])
        self.b = nd.Node(x=rb[0], y=rb[1], z=rb[2])
        self.e = element
        self.connect(element.pin_a, self.a.pin)
        self.connect(element.pin_b, self.b.pin)


@pytest.mark.parametrize("kind", ["consistent", "lumped"])
def test_bar_mass_matrix_closed_form(kind):
    sysn = nodal_system(_TwoNodes(nd.Bar(m=6.0, mass=kind)))
    _, M, _ = sysn.inertia_forces(sysn.x0, np.zeros(6), 0.0)
    I3 = np.eye(3)
    ref = (np.block([[2 * I3, I3], [I3, 2 * I3]]) if kind == "consistent"
           else 3.0 * np.eye(6))  # m/6 [[2I, I], [I, 2I]] (eq. 7); m/2 at each end
    np.testing.assert_allclose(M, ref, atol=1e-14)  # exact arithmetic on small integers


def test_bar_constraint_row_and_second_order_term():
    """Row [-lambda^T, lambda^T] (eq. 3) and c = |v_b - v_a|^2 / l (eq. 5)."""
    rng = np.random.default_rng(1)
    ra, d = rng.standard_normal(3), rng.standard_normal(3)
    sysn = nodal_system(_TwoNodes(nd.Bar(m=1.0), ra, ra + d))
    _, A, _ = sysn.kinematics(sysn.x0, 0.0)
    lam = d / np.linalg.norm(d)
    np.testing.assert_allclose(A[0], np.concatenate([-lam, lam]), atol=1e-14)
    v = rng.standard_normal(6)
    c, _, _ = sysn.inertia_forces(sysn.x0, v, 0.0)
    # roundoff of O(1) numbers
    assert c[0] == pytest.approx(np.sum((v[3:] - v[:3]) ** 2) / np.linalg.norm(d), rel=1e-13)


class _Body(ac.Model):
    def __init__(self, points, body, velocities=None):
        super().__init__()
        vel = velocities if velocities is not None else np.zeros_like(points)
        self.nodes = [nd.Node(x=p[0], y=p[1], z=p[2], vx=u[0], vy=u[1], vz=u[2])
                      for p, u in zip(points, vel, strict=True)]
        self.body = body
        for pin, node in zip(body.pins, self.nodes, strict=True):
            self.connect(pin, node.pin)


def _rotated_plate(a=2.0, b=1.0, seed=3):
    R = Rotation.random(random_state=seed).as_matrix()
    c = np.array([0.3, -0.2, 0.5])
    local = np.array([[-a / 2, -b / 2, 0], [a / 2, -b / 2, 0], [a / 2, b / 2, 0],
                      [-a / 2, b / 2, 0]])
    return c, R, c + local @ R.T


def test_plate_kinetic_energy_equals_rigid_body():
    """(H+)^T M_b H+ (eq. 34): for any rigid velocity the nodal kinetic energy is
    m |v_c|^2 / 2 + w.J w / 2 with the thin-plate inertia m (a^2, b^2, a^2 + b^2) / 12."""
    m, a, b = 20.0, 2.0, 1.0
    c, R, P = _rotated_plate(a, b)
    sysn = nodal_system(_Body(P, nd.Plate(m=m)))
    _, M, _ = sysn.inertia_forces(sysn.x0, np.zeros(12), 0.0)
    J = R @ np.diag([m * b * b / 12, m * a * a / 12, m * (a * a + b * b) / 12]) @ R.T
    rng = np.random.default_rng(5)
    for _ in range(3):
        vc, w = rng.standard_normal(3), rng.standard_normal(3)
        v = np.concatenate([vc + np.cross(w, p - c) for p in P])
        T_ref = 0.5 * m * vc @ vc + 0.5 * w @ J @ w
        assert 0.5 * v @ M @ v == pytest.approx(T_ref, rel=1e-12)  # roundoff


def test_rigid_body_null_space_is_the_papers():
    """The body's constraint rows have the null space of I - H H+ (eq. 15), and their
    second-order term is that of eq. 21 on the rigid-velocity space."""
    rng = np.random.default_rng(2)
    P = rng.standard_normal((5, 3))
    sysn = nodal_system(_Body(P, nd.RigidBody(5, m=3.0)))
    _, A, _ = sysn.kinematics(sysn.x0, 0.0)
    assert A.shape == (9, 15)  # 3 k - 6 rows, none redundant
    C = P.mean(axis=0)
    H = np.vstack([np.hstack([np.eye(3), -np.array([[0, -r[2], r[1]], [r[2], 0, -r[0]],
                                                    [-r[1], r[0], 0]])]) for r in P - C])
    paper = np.eye(15) - H @ np.linalg.pinv(H)
    _, U_ours, r_ours, _ = null_space(A)
    _, U_paper, r_paper, _ = null_space(paper)
    assert (15 - r_ours, 15 - r_paper) == (6, 6)
    # same 6-dimensional subspace: principal angles zero (roundoff)
    assert np.linalg.norm(U_paper.T @ U_ours, 2) == pytest.approx(1.0, abs=1e-12)
    s = np.linalg.svd(U_paper.T @ U_ours, compute_uv=False)
    np.testing.assert_allclose(s, 1.0, atol=1e-12)
    # second order: for a rigid velocity, A a + c = 0 holds for the exact acceleration of
    # the rigid motion (centripetal terms w x (w x r)), as eq. 21 states
    vc, w = rng.standard_normal(3), rng.standard_normal(3)
    v = np.concatenate([vc + np.cross(w, p - C) for p in P])
    acc = np.concatenate([np.cross(w, np.cross(w, p - C)) for p in P])
    c, _, _ = sysn.inertia_forces(sysn.x0, v, 0.0)
    np.testing.assert_allclose(A @ acc + c, 0.0, atol=1e-12)


def test_torque_free_body_against_euler_equations():
    """A free asymmetric body spinning about no principal axis (the paper's frozen-inertia
    step drops w x J w; ours keeps it): node positions against Euler's equations."""
    m = 2.0
    Jb = np.diag([0.5, 1.0, 1.6])  # principal inertia about the centre of mass
    R0 = Rotation.from_euler("xyz", [0.3, -0.4, 0.2]).as_matrix()
    s = np.array([[0.6, 0.1, -0.2], [-0.3, 0.5, 0.1], [-0.2, -0.4, 0.3], [0.1, 0.2, -0.5]])
    s = s - s.mean(axis=0)
    c0 = np.array([1.0, 2.0, 0.5])
    P = c0 + s @ R0.T
    w0 = R0 @ np.array([0.2, 3.0, 0.3])  # near the unstable middle axis: a hard case
    V = np.array([np.cross(w0, p - c0) for p in P])
    body = nd.RigidBody(4, m=m, r_cm=c0, inertia=R0 @ Jb @ R0.T)
    model = _Body(P, body, V)
    T_END = 1.0

    def euler(_t, y):
        wb, q = y[:3], y[3:]
        dw = np.linalg.solve(Jb, -np.cross(wb, Jb @ wb))
        qw, qx, qy, qz = q
        Om = np.array([[0, -wb[0], -wb[1], -wb[2]], [wb[0], 0, wb[2], -wb[1]],
                       [wb[1], -wb[2], 0, wb[0]], [wb[2], wb[1], -wb[0], 0]])
        return np.concatenate([dw, 0.5 * Om @ q])

    q0 = Rotation.from_matrix(R0).as_quat()  # x, y, z, w
    y0 = np.concatenate([R0.T @ w0, [q0[3], q0[0], q0[1], q0[2]]])
    sol = solve_ivp(euler, (0, T_END), y0, rtol=1e-12, atol=1e-12)
    qe = sol.y[3:, -1]
    Re = Rotation.from_quat([qe[1], qe[2], qe[3], qe[0]]).as_matrix()
    ref = c0 + (s @ R0.T) @ R0 @ Re.T  # s in the initial body frame
    errs = []
    for dt in (2e-3, 1e-3):
        tr = NewmarkNullspace(nodal_system(model), dt).run(np.linspace(0, T_END, 11))
        assert tr.status == "ok"
        errs.append(np.max(np.abs(tr.x[-1].reshape(4, 3) - ref)))
    # second order in dt (ratio 4 for a halved step; 3.5..4.5 allows the O(dt^3) terms)
    assert 3.5 < errs[0] / errs[1] < 4.5
    # |w| ~ 3 rad/s, dt = 1e-3: the trapezoidal rule's phase error ~ (w dt)^2 w T / 12
    # ~ 2e-6 rad on 0.6 m arms: 1e-5 m leaves a margin of a few
    assert errs[1] < 1e-5


def test_winch_hauls_at_its_rate_and_carries_the_weight():
    """A 3 kg point mass hung from a winch hauled in at 0.2 m/s: it rises at exactly that
    rate (rheonomic constraint) and the cable tension (the multiplier) is m g."""

    class Hoist(ac.Model):
        def __init__(self):
            super().__init__()
            self.top = nd.Node(x=0.0, y=0.0, z=0.0)
            self.load = nd.Node(x=0.0, y=-2.0, z=0.0, vy=0.2, m=3.0)
            self.fix = nd.Support()
            self.guide = nd.Support(directions="xz")
            self.cable = nd.Winch(rate=-0.2)
            self.gravity = nd.Gravity(g=[0.0, -9.81, 0.0])
            self.connect(self.fix.pin, self.top.pin)
            self.connect(self.guide.pin, self.load.pin)
            self.connect(self.cable.pin_a, self.top.pin)
            self.connect(self.cable.pin_b, self.load.pin)

    cm = ac.build(Hoist())
    res = ac.simulate(cm, 2.0, solver="nullspace", dt=0.05)
    # the constraint is held to tol = 1e-10 x 2 m: positions exact to ~1e-10 m
    np.testing.assert_allclose(res["load.y"], -2.0 + 0.2 * res.t, atol=1e-9)
    np.testing.assert_allclose(res["load.vy"], 0.2, atol=1e-9)
    # tension = m g (no acceleration): the multiplier is the tension itself (the row
    # (|d|^2 - L(t)^2) / (2 L(t)) has the unit vector along the cable as its gradient);
    # the accelerations are exact (zero) to the constraint tolerance, hence 1e-9
    np.testing.assert_allclose(res["cable.lambda[0]"], 3.0 * 9.81, rtol=1e-9)


class _HauledBar(ac.Model):
    """A uniform bar AB (1 m, 2 kg) pinned at A = (0, 0), in the plane z = 0, hauled up by
    a winch from B to P = (0, 1.5) at 5 cm/s, gravity -y (the user's trial case)."""

    L, H, rate, m, g, th0 = 1.0, 1.5, -0.05, 2.0, 9.81, np.radians(60.0)

    def __init__(self):
        super().__init__()
        L, H, th0 = self.L, self.H, self.th0
        self.A = nd.Node(x=0.0, y=0.0, z=0.0)
        self.P = nd.Node(x=0.0, y=H, z=0.0)
        self.B = nd.Node(x=L * np.cos(th0), y=L * np.sin(th0), z=0.0)
        self.bar = nd.Bar(m=self.m)
        self.sa = nd.Support()
        self.sp = nd.Support()
        self.plane = nd.Support(directions="z")
        self.winch = nd.Winch(rate=self.rate)
        self.gravity = nd.Gravity(g=[0.0, -self.g, 0.0])
        self.connect(self.bar.pin_a, self.A.pin, self.sa.pin)
        self.connect(self.bar.pin_b, self.B.pin, self.plane.pin, self.winch.pin_a)
        self.connect(self.winch.pin_b, self.P.pin, self.sp.pin)

    @classmethod
    def tension(cls, t):
        """Closed form: the cable length l(t) = l0 + rate t fixes the angle theta of the
        bar, sin(theta) = (H^2 + L^2 - l^2) / (2 H L), and the moment balance about the pin,
        I theta'' = -m g L/2 cos(theta) + T L H cos(theta) / l with I = m L^2 / 3 (the arm
        of the cable about A is |B x P| / l), gives T."""
        L, H, r, m, g, th0 = cls.L, cls.H, cls.rate, cls.m, cls.g, cls.th0
        ell = np.sqrt(H**2 + L**2 - 2 * H * L * np.sin(th0)) + r * t
        s = (H**2 + L**2 - ell**2) / (2 * H * L)
        c = np.sqrt(1 - s**2)
        thd = -ell * r / (H * L) / c
        thdd = (-r**2 / (H * L) + s * thd**2) / c
        return (m * L**2 / 3 * thdd + m * g * L / 2 * c) * ell / (L * H * c)


@pytest.mark.parametrize("solver", ["idas", "nullspace"])
def test_winch_multiplier_is_the_tension_while_the_length_changes(solver):
    """The winch's multiplier is the cable tension at every length, not the tension
    times L0 / L(t) (the row was once normalised by the start length: 1.6 % off at
    t = 0.25 s, 18 % at 2.5 s, 42 % at 4.75 s). The consistent mass of a rigid bar is exact
    (its velocity is linear along it), so the closed form is the model's exact answer."""
    cm = ac.build(_HauledBar())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if solver == "idas":
            res = ac.simulate(cm, 4.75, n_points=20)
        else:
            res = ac.simulate(cm, 4.75, solver="nullspace", dt=0.05)
    T = _HauledBar.tension(res.t)
    assert T[-1] < 0.75 * T[0]  # the tension changes enough to tell L0 from L(t)
    # the motion is prescribed (no free mode): IDAS at its default tolerances gives the
    # multiplier to ~5e-9 relative (measured), the null-space solver to roundoff (it
    # solves the constraints to 1e-10 m); 1e-6 is far from both and far below the 1.6 %
    # of the old normalisation
    np.testing.assert_allclose(res["winch.lambda[0]"], T, rtol=1e-6)


def test_gear_turns_the_arms_equally_and_oppositely():
    """Rotating arm a by 0.3 rad about the hub and arm b by -0.3 rad satisfies a
    sense = -1 gear; the same rotation of both satisfies sense = +1."""

    class Arms(ac.Model):
        def __init__(self, sense):
            super().__init__()
            self.h = nd.Node(x=0.0, y=0.0, z=0.0)
            self.a = nd.Node(x=1.0, y=0.2, z=0.0)
            self.b = nd.Node(x=-0.5, y=0.8, z=0.0)
            self.g = nd.Gear(sense=sense)
            self.connect(self.g.hub, self.h.pin)
            self.connect(self.g.pin_a, self.a.pin)
            self.connect(self.g.pin_b, self.b.pin)

    def rot(p, th):
        return np.array([np.cos(th) * p[0] - np.sin(th) * p[1],
                         np.sin(th) * p[0] + np.cos(th) * p[1], 0.0])

    for sense, thb in ((-1, -0.3), (1, 0.3)):
        sysn = nodal_system(Arms(sense))
        x = np.concatenate([[0, 0, 0], rot([1.0, 0.2], 0.3), rot([-0.5, 0.8], thb)])
        assert abs(sysn.phi(x, 0.0)[0]) < 1e-15  # exact identity up to roundoff
        x_bad = np.concatenate([[0, 0, 0], rot([1.0, 0.2], 0.3), rot([-0.5, 0.8], -thb)])
        assert abs(sysn.phi(x_bad, 0.0)[0]) > 0.1  # sin(0.6) ~ 0.56: clearly violated


# --------------------------------------------------------------------------------------
# the five-bar linkage: three methods
# --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def fivebar():
    return load("nodal_fivebar")


def test_fivebar_mode_count(fivebar):
    cm = ac.build(fivebar.build_model())
    rep = cm.domain_pass("pin").report
    assert (rep.modes.n_coordinates, rep.modes.rank, rep.n_modes) == (15, 13, 2)


@pytest.mark.parametrize("elbows", [(-1, -1), (1, -1)])
def test_fivebar_idas_matches_the_two_angle_ode(fivebar, elbows):
    """IDAS on the Lagrange-multiplier DAE (masses at B, C, D) against the independent
    ODE: rtol = atol = 1e-10 on a motion of 1 m and 4 m/s keeps the global error below
    1e-7 (measured 7e-9 over 1 s): 1e-6 is the agreement the paper shows."""
    grid = np.linspace(0.0, 1.0, 101)
    ref = fivebar.reference(grid, elbows)
    res = ac.simulate(ac.build(fivebar.build_model("nodes", elbows)), 1.0, t_eval=grid,
                      rtol=1e-10, atol=1e-10, mode=fivebar.IDAS_MODE)
    for key in ("B.x", "B.vx", "C.y", "D.vy"):
        assert np.max(np.abs(res[key] - ref[key])) < 1e-6, key


@pytest.mark.parametrize("elbows", [(-1, -1), (1, -1)])
def test_fivebar_nullspace_converges_at_second_order_to_the_ode(fivebar, elbows):
    grid = np.linspace(0.0, 1.0, 51)
    ref = fivebar.reference(grid, elbows)
    cm = ac.build(fivebar.build_model("lumped", elbows))
    err, xb = [], []
    for dt in (4e-3, 2e-3, 1e-3):
        res = ac.simulate(cm, 1.0, t_eval=grid, solver="nullspace", dt=dt)
        err.append(np.max(np.abs(res["B.x"] - ref["B.x"])))
        xb.append(res["B.x"])
    # ratio 4 per halving for a second-order method (3.6..4.4: O(dt^3) terms)
    assert all(3.6 < err[k] / err[k + 1] < 4.4 for k in range(2)), err
    # Richardson extrapolation of the two finest runs is fourth order: the nodal method
    # then agrees with the independent ODE to the paper's 1e-6
    extrap = (4 * xb[2] - xb[1]) / 3
    assert np.max(np.abs(extrap - ref["B.x"])) < 1e-6


@pytest.mark.slow
def test_fivebar_nullspace_matches_idas_at_refined_step(fivebar):
    """dt = 1e-4: Newmark's error ~ 2.7e-3 (dt / 1e-2)^2 = 2.7e-7 m on x_B, below 1e-6."""
    grid = np.linspace(0.0, fivebar.T_END, 201)
    ns = ac.simulate(ac.build(fivebar.build_model("lumped")), fivebar.T_END, t_eval=grid,
                     solver="nullspace", dt=1e-4)
    ida = ac.simulate(ac.build(fivebar.build_model("nodes")), fivebar.T_END, t_eval=grid,
                      rtol=1e-10, atol=1e-10, mode=fivebar.IDAS_MODE)
    assert np.max(np.abs(ns["B.x"] - ida["B.x"])) < 1e-6
    assert np.max(np.abs(ns["B.vx"] - ida["B.vx"])) < 1e-5  # velocities: 4 m/s scale


def test_fivebar_example_runs(fivebar, tmp_path, monkeypatch):
    monkeypatch.setattr(fivebar, "OUTDIR", tmp_path)
    out = fivebar.run(plot=True)
    assert (tmp_path / "nodal_fivebar.png").exists()
    # dt = 1e-2 (the paper's step): Newmark's error on x_B is 2.7e-3 m; 1e-2 bounds it
    assert np.max(np.abs(out["nullspace"]["B.x"] - out["reference"]["B.x"])) < 1e-2
    for const in ("T_END", "DT", "RTOL", "ATOL"):
        assert hasattr(fivebar, const)


# --------------------------------------------------------------------------------------
# the integrator
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("scheme", [Scheme.generalized_alpha(0.8), Scheme.hht(0.1),
                                    Scheme.generalized_alpha(0.0)])
def test_alpha_schemes_are_second_order(fivebar, scheme):
    sysn = nodal_system(fivebar.build_model())
    grid = np.linspace(0.0, 0.5, 11)
    ref = fivebar.reference(grid)
    err = [np.max(np.abs(NewmarkNullspace(sysn, dt, scheme).run(grid).x[:, 3] - ref["B.x"]))
           for dt in (1e-2, 5e-3)]
    assert 3.4 < err[0] / err[1] < 4.6  # order 2 (rho_inf = 0 is the least accurate)


class _Oscillator(ac.Model):
    """A 1 kg node on a 1e4 N/m spring (omega = 100 rad/s) moving along x only (a long
    spring, 10 m: the first iterates of an unresolved step stay on its linear side)."""

    def __init__(self):
        super().__init__()
        self.base = nd.Node(x=-10.0, y=0.0, z=0.0)
        self.mass = nd.Node(x=0.0, y=0.0, z=0.0, vx=1.0, m=1.0)
        self.fix = nd.Support()
        self.guide = nd.Support(directions="yz")
        self.spring = nd.Spring(c=1e4)
        self.connect(self.fix.pin, self.base.pin)
        self.connect(self.guide.pin, self.mass.pin)
        self.connect(self.spring.pin_a, self.base.pin)
        self.connect(self.spring.pin_b, self.mass.pin)


def test_newmark_keeps_and_generalized_alpha_damps_an_unresolved_mode():
    """omega dt = 10: the trapezoidal rule keeps the energy of the unresolved oscillation
    (amplification 1, unconditional stability), generalized-alpha with rho_inf = 0.5
    removes it (spectral radius -> 0.5 per step: 0.5^40 ~ 1e-12 after 40 steps); the
    fixed point does not contract here, so this also runs the Newton fallback."""
    sysn = nodal_system(_Oscillator())
    grid = np.linspace(0.0, 4.0, 41)
    for scheme, keep in ((Scheme.newmark(), True), (Scheme.generalized_alpha(0.5), False)):
        integ = NewmarkNullspace(sysn, 0.1, scheme)
        tr = integ.run(grid)
        assert tr.status == "ok" and integ.counters["newton_fallbacks"] > 0
        E = 0.5 * tr.v[:, 3] ** 2 + 0.5e4 * tr.x[:, 3] ** 2
        if keep:
            # a linear system: the trapezoidal rule conserves its energy exactly; what
            # is left is the iteration's error, stopped at ITER_RTOL = 1e-5 of each
            # step's change of acceleration (measured 1e-7 of E): 1e-6 bounds it
            np.testing.assert_allclose(E, E[0], rtol=1e-6)
        else:
            assert E[-1] < 1e-6 * E[0]


class _DampedOscillator(ac.Model):
    """A 2 kg node on a 200 N/m spring and a 4 N.s/m damper along x (a 10 m spring: linear
    in x to first order along the line), pushed by a constant 10 N load."""

    def __init__(self):
        super().__init__()
        self.base = nd.Node(x=-10.0, y=0.0, z=0.0)
        self.mass = nd.Node(x=0.0, y=0.0, z=0.0, m=2.0)
        self.fix = nd.Support()
        self.guide = nd.Support(directions="yz")
        self.spring = nd.Spring(c=200.0)
        self.damper = nd.Damper(d=4.0)
        self.push = nd.Load(f=[10.0, 0.0, 0.0])
        self.connect(self.fix.pin, self.base.pin)
        self.connect(self.guide.pin, self.mass.pin, self.push.pin)
        self.connect(self.spring.pin_a, self.base.pin, self.damper.pin_a)
        self.connect(self.spring.pin_b, self.mass.pin, self.damper.pin_b)


def test_spring_damper_load_against_the_closed_form():
    """m x'' + d x' + c x = F from rest: x = F/c (1 - e^(-z w t) (cos(wd t) +
    z w / wd sin(wd t))), w = 10 rad/s, z = 0.1."""
    m, c, d, F = 2.0, 200.0, 4.0, 10.0
    w, z = np.sqrt(c / m), d / (2 * np.sqrt(c * m))
    wd = w * np.sqrt(1 - z * z)
    res = ac.simulate(_DampedOscillator(), 3.0, solver="nullspace", dt=1e-3)
    t = res.t
    exact = F / c * (1 - np.exp(-z * w * t) * (np.cos(wd * t) + z * w / wd * np.sin(wd * t)))
    # trapezoidal phase error ~ (w dt)^2 w t / 12 = 2.5e-5 rad after 3 s on a 0.05 m
    # amplitude: ~1e-6 m; 1e-5 m bounds it
    assert np.max(np.abs(res["mass.x"] - exact)) < 1e-5


def test_dt_too_large_fails_with_the_partial_result(tmp_path):
    """The paper's dt = 0.1 fails for its method; so does ours in the paper's variant
    (second-order correction, no projection, drift bounded): the partial result comes
    back with the time and the reason."""
    ex = load("nodal_truss")
    cm = ac.build(ex.build_model())
    res = ac.simulate(cm, 4.0, solver="nullspace", dt=0.1, mode="taylor",
                      raise_on_failure=False)
    assert res.status == "failed"
    assert "constraint drift" in res.message and "drift_tol" in res.message
    assert 0.0 < res.t[-1] < 4.0 and "failed at t = " in res.message
    with pytest.raises(ac.SimulationError) as info:
        ac.simulate(cm, 4.0, solver="nullspace", dt=0.1, mode="taylor")
    assert info.value.partial is not None and info.value.t_fail > 0.0
    # the same variant at the paper's dt = 1e-2 holds the drift bound to the end
    ok = ac.simulate(cm, 4.0, solver="nullspace", dt=1e-2, mode="taylor")
    assert ok.status == "ok"


def test_projection_holds_the_constraints():
    ex = load("nodal_truss")
    cm = ac.build(ex.build_model())
    res = ac.simulate(cm, 2.0, solver="nullspace", dt=1e-2)
    sysn = cm.domain_pass("pin").start_system()
    names = sysn.asm.coordinate_names
    X = np.column_stack([res[n] for n in names])
    drift = max(np.max(np.abs(sysn.phi(x, 0.0))) for x in X)
    assert drift <= 1e-10 * sysn.length_scale()  # the stated projection tolerance


# --------------------------------------------------------------------------------------
# the deployable truss and reflector
# --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def truss():
    ex = load("nodal_truss")
    cm = ac.build(ex.build_model())
    res = ac.simulate(cm, 8.0, solver="nullspace", dt=1e-2)
    return ex, cm, res


def test_truss_mode_count_is_the_papers(truss):
    ex, cm, res = truss
    modes = cm.domain_pass("pin").report.modes
    assert (modes.n_coordinates, modes.n_constraints, modes.rank) == (60, 60, 49)
    assert modes.n_modes == 11  # the paper's count
    assert mode_table(res) == [(0.0, 8.0, 11)]  # constant along the fold


def test_truss_folds_flat_symmetrically(truss):
    ex, cm, res = truss
    L, _ = ex.diagonal(res)
    # folded flat: the diagonal reaches 1.6 - 1.2 = 0.4 m (to 1e-4: the minimum of a
    # smooth curve sampled every 10 ms lies within ~|L''| dt^2 / 8 ~ 1e-6 m of it)
    assert abs(L.min() - ex.FOLDED_DIAGONAL) < 1e-4
    tf = ex.fold_time(res)
    assert 5.0 < tf < 8.0
    # five-fold symmetry of the cable pattern: every bay folds alike (roundoff only)
    for bay in range(1, ex.N_BAYS):
        np.testing.assert_allclose(ex.diagonal(res, bay)[0], L, atol=1e-9)


def test_truss_energy_balance(truss):
    ex, cm, res = truss
    work, kin = ex.work_and_energy(res, cm)
    k = res.t <= ex.fold_time(res)
    # no dissipation: cable work = kinetic energy. The trapezoidal rule's energy error is
    # of the order of its truncation error relative to the motion (measured 2e-6 at
    # dt = 1e-2, 5e-7 at 5e-3); 1e-5 of the final energy bounds it
    assert np.max(np.abs(work[k] - kin[k])) < 1e-5 * kin[k][-1]
    # at the fold every cable has shortened from 2.0 m to 0.4 m: 10 x 2 N x 1.6 m = 32 J
    assert kin[k][-1] == pytest.approx(10 * 2.0 * 1.6, rel=1e-4)


def test_truss_fold_time_converges(truss):
    ex, cm, res = truss
    res2 = ac.simulate(cm, 8.0, solver="nullspace", dt=5e-3)
    # second order: the change from dt = 1e-2 to 5e-3 is 3/4 of the error at 1e-2;
    # a fold time known to 1e-3 s is far finer than the paper's 3 digits
    assert abs(ex.fold_time(res) - ex.fold_time(res2)) < 1e-3


@pytest.mark.slow
def test_truss_nullspace_matches_idas(truss):
    """Same components, the Lagrange-multiplier DAE on IDAS (rtol 1e-10): node 1 agrees to
    the Newmark error (3e-6 m at dt = 1e-2, 3e-8 at 1e-3: second order)."""
    ex, cm, _ = truss
    grid = np.linspace(0.0, 7.0, 71)
    ida = ac.simulate(cm, 7.0, t_eval=grid, rtol=1e-10, atol=1e-10)
    errs = []
    for dt in (1e-2, 1e-3):
        ns = ac.simulate(cm, 7.0, t_eval=grid, solver="nullspace", dt=dt)
        errs.append(max(np.max(np.abs(ns[f"node1.{c}"] - ida[f"node1.{c}"])) for c in "xyz"))
    assert errs[1] < 1e-7 and 80 < errs[0] / errs[1] < 120


@pytest.fixture(scope="module")
def reflector():
    ex = load("nodal_reflector")
    cm = ac.build(ex.build_model())
    res = ac.simulate(cm, ex.T_END, solver="nullspace", dt=1e-2)
    return ex, cm, res


def test_reflector_counts(reflector):
    """The reconstruction has the paper's element counts, ADAMS joint counts, mode count
    (6) and redundancy (19) (see the example's documentation)."""
    ex, cm, res = reflector
    model = cm.model
    comps = list(model.walk())
    bars = [c for c in comps if isinstance(c, nd.Bar)]
    assert len(bars) == 41 and len([c for c in comps if isinstance(c, nd.Plate)]) == 4
    assert len([c for c in comps if isinstance(c, nd.Gear)]) == 14
    # bar lengths: 16 diagonals of 1.5 m, 25 bars of 1.0 m
    pos = ex.node_positions()
    L = sorted(round(float(np.linalg.norm(pos[b] - pos[a])), 9) for a, b in model.members)
    assert L == [1.0] * 25 + [1.5] * 16
    # ADAMS: 45 parts; spherical joints = sum over the nodes of (parts there - 1)
    parts_at = {k: 0 for k in pos}
    for conn in model._connections:
        owners = [p.owner for p in conn]
        node = next(o for o in owners if isinstance(o, nd.Node))
        k = int(node.path()[4:])
        parts_at[k] += sum(isinstance(o, (nd.Bar, nd.Plate)) for o in owners)
    assert sum(n - 1 for n in parts_at.values()) == 76
    modes = cm.domain_pass("pin").report.modes
    assert (modes.n_coordinates, modes.n_constraints, modes.rank) == (66, 79, 60)
    assert modes.n_modes == 6  # the paper's count
    assert modes.n_constraints - modes.rank == 19  # the paper's redundant constraints
    assert mode_table(res) == [(0.0, ex.T_END, 6)]  # constant along the fold


def test_reflector_corner_pinned_panels_leave_four_infinitesimal_modes(reflector, monkeypatch):
    """The counting argument of docs/nodal.md: with the paper's element and joint counts
    p - r = 3 N - s = -13 whatever the geometry; panels pinned at their four corners only
    leave each pair of middle edge nodes a mode (10 modes, 23 redundant rows)."""
    ex, cm, _ = reflector
    monkeypatch.setattr(ex, "panel_pins", ex.panel_corners)
    modes = ac.build(ex.build_model()).domain_pass("pin").report.modes
    assert (modes.n_modes, modes.n_constraints - modes.rank) == (10, 23)
    for m in (modes, cm.domain_pass("pin").report.modes):
        assert m.n_modes - (m.n_constraints - m.rank) == m.n_coordinates - m.n_constraints == -13


def test_reflector_folds_symmetrically_and_conserves_energy(reflector):
    ex, cm, res = reflector
    ts = ex.stow_time(res)
    assert 0.5 < ts < ex.T_END
    # the structure and its loads are symmetric about x = 4 m: node 5 stays there
    np.testing.assert_allclose(res["node5.x"], 4.0, atol=1e-9)
    psi = ex.panel_angles(res)
    np.testing.assert_allclose(psi[:, 0], -psi[:, 1], atol=1e-9)  # the gears' accordion
    np.testing.assert_allclose(psi[:, 0], psi[:, 2], atol=1e-9)
    work, kin = ex.work_and_energy(res, cm)
    k = res.t <= ts
    # the trapezoidal rule's energy error (measured 1e-5 of the final 450 J at dt = 1e-2)
    assert np.max(np.abs(work[k] - kin[k])) < 1e-4 * kin[k][-1]


@pytest.mark.slow
def test_reflector_nullspace_matches_idas(reflector):
    ex, cm, _ = reflector
    grid = np.linspace(0.0, 1.4, 71)
    ida = ac.simulate(cm, 1.4, t_eval=grid, rtol=1e-10, atol=1e-10)
    ns = ac.simulate(cm, 1.4, t_eval=grid, solver="nullspace", dt=1e-3)
    # Newmark at dt = 1e-3: 4.4e-8 m measured on node 5 (4.4e-6 at 1e-2): 1e-7 bounds it
    assert max(np.max(np.abs(ns[f"node5.{c}"] - ida[f"node5.{c}"])) for c in "xyz") < 1e-7


def test_examples_run(tmp_path, monkeypatch):
    for name in ("nodal_truss", "nodal_reflector"):
        ex = load(name)
        monkeypatch.setattr(ex, "OUTDIR", tmp_path)
        out = ex.run(plot=True, t_end=2.0 if name == "nodal_truss" else ex.T_END)
        assert (tmp_path / f"{name}.png").exists()
        assert out["res"].status == "ok"
        assert ex.__doc__ and "Reconstruction" in ex.__doc__


# --------------------------------------------------------------------------------------
# errors name the user's objects
# --------------------------------------------------------------------------------------


def test_pin_without_node_is_named():
    class Loose(ac.Model):
        def __init__(self):
            super().__init__()
            self.n1 = nd.Node()
            self.bar = nd.Bar()
            self.connect(self.bar.pin_a, self.n1.pin)

    with pytest.raises(ac.TopologyError, match=r"bar\.pin_b.*not connected to a Node"):
        ac.build(Loose())


def test_two_nodes_at_one_point_are_named():
    class Twice(ac.Model):
        def __init__(self):
            super().__init__()
            self.n1 = nd.Node()
            self.n2 = nd.Node(x=1.0)
            self.connect(self.n1.pin, self.n2.pin)

    with pytest.raises(ac.TopologyError, match="n1 and n2"):
        ac.build(Twice())


def test_degenerate_elements_are_named():
    class Line(ac.Model):
        def __init__(self):
            super().__init__()
            self.nodes = [nd.Node(x=float(k)) for k in range(3)]
            self.body = nd.RigidBody(3)
            for p, n_ in zip(self.body.pins, self.nodes, strict=True):
                self.connect(p, n_.pin)

    with pytest.raises(ac.ModelDefinitionError, match="body.*one line"):
        ac.build(Line())
    with pytest.raises(ac.ModelDefinitionError, match="at least 3 pins"):
        nd.RigidBody(2)


def test_solver_misuse_is_explained(fivebar):
    cm = ac.build(fivebar.build_model())
    with pytest.raises(ac.AcausalError, match="fixed-step method: give the step"):
        ac.simulate(cm, 1.0, solver="nullspace")
    with pytest.raises(ac.AcausalError, match="unknown word 'rk4'"):
        ac.simulate(cm, 1.0, solver="nullspace", dt=0.01, mode="rk4")
    # options out of range or not numbers: an ArgumentError naming the option, the
    # user's mode string and the accepted forms (a builtin ValueError before)
    for mode, what in [("hht, alpha=0.9", r"alpha=0\.9 of the HHT scheme is out of \[0, 1/3\]"),
                       ("generalized-alpha, rho_inf=2", r"rho_inf=2 .* out of \[0, 1\]"),
                       ("hht, alpha=big", "option alpha='big' is not a number"),
                       ("newmark, beta=-0.1", "beta=-0.1, gamma=0.5 are out of range"),
                       ("newmark, gamma=0.4", "beta=0.25, gamma=0.4 are out of range"),
                       ("max_iter=2.5", "max_iter=2.5 must be a whole number"),
                       ("tol=-1", "tol=-1.0 must be a positive"),
                       ("correction=euler", "unknown correction 'euler'")]:
        with pytest.raises(ac.ArgumentError, match=what) as err:
            ac.simulate(cm, 1.0, solver="nullspace", dt=0.01, mode=mode)
        assert f"mode={mode!r}" in str(err.value) and "accepted:" in str(err.value)
    with pytest.raises(ac.ArgumentError, match="unknown word 'newmrk'.*mode='newmrk'"):
        ac.simulate(cm, 1.0, solver="nullspace", dt=0.01, mode="newmrk")
    with pytest.raises(ac.ArgumentError, match="HHT alpha must be in"):
        Scheme.hht(0.9)
    from components import electrical as el

    class RC(ac.Model):
        def __init__(self):
            super().__init__()
            self.r = el.Resistor(R=1.0)
            self.c = el.Capacitor(C=1.0, v=1.0)
            self.g = el.Ground()
            self.connect(self.r.p, self.c.p)
            self.connect(self.r.n, self.c.n, self.g.p)

    with pytest.raises(ac.AcausalError, match="pin-jointed structures"):
        ac.simulate(RC(), 1.0, solver="nullspace", dt=0.01)


def test_inconsistent_start_is_diagnosed():
    """A bar length that the supports do not allow: the error names the bar and the
    miss."""

    class Bad(ac.Model):
        def __init__(self):
            super().__init__()
            self.a = nd.Node()
            self.b = nd.Node(x=1.0)
            self.fa = nd.Support()
            self.fb = nd.Support()
            self.bar = nd.Bar(L=2.0)
            self.connect(self.fa.pin, self.a.pin)
            self.connect(self.fb.pin, self.b.pin)
            self.connect(self.bar.pin_a, self.a.pin)
            self.connect(self.bar.pin_b, self.b.pin)

    with pytest.raises(ac.ModelDefinitionError, match=r"bar: length has the residual 0.75 m"):
        ac.build(Bad())


class _FlatTriangle(ac.Model):
    """Bars AB (1 m), BC and CA (0.5 m) with C on AB: finitely rigid (C must stay at the
    middle of AB), but at the start the three bar rows are dependent (all along x).
    ``B_held``: B on a roller along x (y, z held); else B held in z only (the triangle
    may turn about A, a genuine mode)."""

    def __init__(self, b_held: str = "yz", c_y: float = 0.0):
        super().__init__()
        self.A = nd.Node(x=0, y=0, z=0)
        self.B = nd.Node(x=1, y=0, z=0)
        self.C = nd.Node(x=0.5, y=c_y, z=0, m=1.0)
        self.ab, self.bc, self.ca = nd.Bar(m=1.0), nd.Bar(m=1.0), nd.Bar(m=1.0)
        self.g = nd.Gravity()
        self.sa, self.sb, self.sc = nd.Support(), nd.Support(directions=b_held), \
            nd.Support(directions="z")
        self.connect(self.A.pin, self.ab.pin_a, self.sa.pin, self.ca.pin_b)
        self.connect(self.B.pin, self.ab.pin_b, self.bc.pin_a, self.sb.pin)
        self.connect(self.C.pin, self.bc.pin_b, self.sc.pin, self.ca.pin_a)


def test_singular_start_is_not_a_redundant_constraint():
    """A row dependent only at the start is not redundant: removed, the flat triangle's
    C swung on its circle about A under gravity and stretched BC to 1.43 m."""
    with pytest.raises(ac.ModelDefinitionError, match=r"singular: bc: length") as err:
        ac.build(_FlatTriangle())
    assert "cannot move at all" in str(err.value)
    # the same with a genuine mode (the triangle turns about A): a warning names the row
    with pytest.warns(ac.ModelWarning, match=r"singular: bc: length depends"):
        ac.build(_FlatTriangle(b_held="z"))
    # a true triangle has no redundant row; a bar doubling another has one, dependent
    # near the start too: today's warning, and the run holds it
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ac.build(_FlatTriangle(c_y=0.3))
    m = _FlatTriangle(c_y=0.3)
    m.twin = nd.Bar(m=0.0)
    m.connect(m.twin.pin_a, m.B.pin)
    m.connect(m.twin.pin_b, m.C.pin)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ac.ModelWarning)
        with pytest.warns(ac.RedundantConstraintWarning, match="length"):
            cm = ac.build(m)
    assert len(cm.domain_pass("pin").removed) == 1


def test_parameter_overrides_reach_the_nullspace_solver():
    """Parameter overrides reach the null-space solver (a heavier five-bar moves alike
    under gravity alone: the motion does not depend on the mass)."""
    ex = load("nodal_fivebar")
    cm = ac.build(ex.build_model())
    r1 = ac.simulate(cm, 0.3, solver="nullspace", dt=1e-2)
    r2 = ac.simulate(cm, 0.3, solver="nullspace", dt=1e-2,
                     params={f"bar{a}.m": 10.0 for a in ("AB", "BC", "CD", "DE")})
    np.testing.assert_allclose(r1["B.x"], r2["B.x"], atol=1e-12)
    lam1, lam2 = r1["barAB.lambda[0]"][0], r2["barAB.lambda[0]"][0]
    assert lam2 == pytest.approx(lam1 * 10.0 / ex.M_BAR, rel=1e-9)  # forces scale with m


def test_node_quantities_have_their_units():
    """res.unit gave None for a node's accelerations and its pins' r and v (outputs of
    the nodal pass, added without a unit); reference: their SI units."""
    res = ac.simulate(_Oscillator(), 0.01)
    expected = {"mass.ax": "m/s2", "mass.az": "m/s2", "mass.pin.r": "m", "mass.pin.v": "m/s",
                "mass.x": "m", "mass.vx": "m/s", "mass.m": "kg"}
    assert {n: res.unit(n) for n in expected} == expected
