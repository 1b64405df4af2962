"""3D multibody validation cases (the ``examples/mb_*.py`` gallery) against independent
references: closed-form kinematics, linearised closed-form dynamics, static equilibria
from virtual work, and energy balances recomputed from the simulated kinematics.

Each example is imported from ``examples/`` by path and run with ``plot=False``. Every
tolerance states why it has its size.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

import acausal as ac

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
CASES = ["mb_spring_dashpot_body", "mb_slider_crank", "mb_power_steering", "mb_motor_arm",
         "mb_fourbar"]


def load(name: str):
    """Import ``examples/<name>.py`` as a module (examples is not a package)."""
    if str(EXAMPLES) not in sys.path:
        sys.path.insert(0, str(EXAMPLES))
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", CASES)
def test_case_declares_run_settings(name):
    mod = load(name)
    assert mod.__doc__ and "Reference solution" in mod.__doc__
    for const in ("T_END", "RTOL", "ATOL", "N_POINTS"):
        assert hasattr(mod, const), f"{name} does not declare {const}"
    assert callable(mod.build_model) and callable(mod.run)


# ----------------------------------------------------------------------------------------
# 1. spring-dashpot body (Richard 2012, Fig. 1)
def test_spring_dashpot_graph_is_the_chapters():
    ex = load("mb_spring_dashpot_body")
    model = ex.build_model()
    cm = ac.build(model)
    mech = cm.flat.mechanism
    # the World adds a vertex (the world frame) and a rigid edge datum -> world frame
    assert mech.topo.n_vertices == 7 and len(mech.edges) == 9
    assert len(mech.topo.tree) == 6 and len(mech.topo.cotree) == 3
    assert cm.mechanism.tree == ["world", "body", "arm2", "arm3", "driver4", "driver5"]
    assert cm.mechanism.cotree == ["spring6", "spring7", "dashpot8"]
    # contract the world edge: the chapter's graph, 6 vertices, 8 edges, 5 branches
    order = ["body", "arm2", "arm3", "driver4", "driver5", "spring6", "spring7", "dashpot8"]
    edges = {e.name: e for e in mech.edges}
    world_vertex = edges["world"].final
    vid = {}  # library vertex -> chapter vertex (1..5, datum = 6)
    for k, port in enumerate([model.body.frame_a, model.arm2.frame_b, model.arm3.frame_b,
                              model.driver4.frame_b, model.driver5.frame_b], start=1):
        vid[mech.port_vertex[id(port)]] = k
    vid[mech.datum] = vid[world_vertex] = 6
    K = np.zeros((6, 8))
    for j, name in enumerate(order):
        K[vid[edges[name].initial] - 1, j] -= 1
        K[vid[edges[name].final] - 1, j] += 1
    K_chapter = np.array([[1, -1, -1, 0, 0, 0, 0, 0],  # incidence matrix, eq. (1)
                          [0, 1, 0, 0, 0, 0, 1, 0],
                          [0, 0, 1, 0, 0, 1, 0, 1],
                          [0, 0, 0, 1, 0, -1, 0, 0],
                          [0, 0, 0, 0, 1, 0, -1, -1],
                          [-1, 0, 0, -1, -1, 0, 0, 0]])
    np.testing.assert_array_equal(K, K_chapter)
    # circuit matrix [E U_c] of eq. (4) from the library's topology (world column dropped)
    topo = mech.topo
    C = topo.circuit_matrix()
    cols = {edges_name: i for i, edges_name in
            enumerate([mech.edges[j].name for j in topo.tree + topo.cotree])}
    E_chapter = np.array([[-1, 0, -1, 1, 0, 1, 0, 0],
                          [-1, -1, 0, 0, 1, 0, 1, 0],
                          [-1, 0, -1, 0, 1, 0, 0, 1]])
    np.testing.assert_array_equal(C[:, [cols[n] for n in order]], E_chapter)


def test_spring_dashpot_small_motion_matches_linear_closed_form():
    ex = load("mb_spring_dashpot_body")
    errs = {}
    for scale in (1.0, 0.01):
        res = ex.run(plot=False, scale=scale)
        sim = ex.planar_coordinates(res)
        ref = ex.linear_response(res.t, scale)
        amp = scale * np.array([ex.X0, ex.Y0, ex.THETA0])
        errs[scale] = np.array([np.max(np.abs(s - r)) for s, r in zip(sim, ref, strict=True)])
        errs[scale] /= amp
        if scale == 0.01:
            w = ex.frequencies()
            # undamped y and theta modes: zero crossings on a 2 ms grid give the period to
            # ~1e-7; the residual nonlinearity shifts it by ~1e-6 at this amplitude
            for key, sig in (("y", sim[1]), ("theta", sim[2])):
                T = ex.measured_period(res.t, sig)
                assert T == pytest.approx(2 * np.pi / w[key], rel=1e-5)
    # the linear closed form is exact to first order: at amplitudes of 1/100 of the example
    # (20 um on 0.5 m springs) the departure is < 1e-3 of the amplitude over 6 s ...
    assert np.all(errs[0.01] < 1e-3), errs[0.01]
    # ... and it is the second-order nonlinearity: it shrinks in proportion to the amplitude
    # (ratio 100 for amplitudes 100 times smaller; 80-120 allows for integration error)
    ratio = errs[1.0] / errs[0.01]
    assert np.all((ratio > 80) & (ratio < 120)), ratio


def test_spring_dashpot_energy_without_dashpot():
    ex = load("mb_spring_dashpot_body")
    res = ex.run(plot=False, damping=0.0, drive=False)
    E = ex.energy(res)
    # conservative tree mechanism at rtol 1e-10: drift measured ~3e-11 of the energy
    assert np.max(np.abs(E - E[0])) < 1e-9 * E[0]
    # dashpot on, drivers still: the energy lost is the work of the dashpot force,
    # int f^2 / d dt. The vibration energy (1.1e-3 J) rides on 2 J of spring preload, so the
    # integrator's ~6e-11 J drift is ~5e-8 of it (measured 3e-8); allow 1e-6
    from scipy.integrate import cumulative_simpson

    res = ex.run(plot=False, drive=False)
    E = ex.energy(res)
    lost = cumulative_simpson(res["dashpot8.f"] ** 2 / ex.D, x=res.t, initial=0.0)
    E_vib = E[0] - 2 * 0.5 * ex.K * (ex.L_SPRING - ex.L0_SPRING) ** 2  # above the preload
    assert lost[-1] > 0.5 * E_vib  # the x mode has decayed
    assert np.max(np.abs(E[0] - E - lost)) < 1e-6 * E_vib


# ----------------------------------------------------------------------------------------
# 2. spatial slider-crank
@pytest.fixture(scope="module")
def slider_crank():
    ex = load("mb_slider_crank")
    cm = ac.build(ex.build_model())
    return ex, cm, ex.run(plot=False, model=cm)


def test_slider_crank_freedoms(slider_crank):
    ex, cm, _ = slider_crank
    rep = cm.mechanism
    # tree speeds: crank 1 + spherical 3 + slider 1; the universal joint is cut: 3 position
    # + 1 perpendicularity constraints, all independent in 3D
    assert rep.n_speeds == 5 and rep.n_constraints == 4 and rep.n_removed == 0
    assert rep.dof == 1 and "joint_b" in rep.cotree
    # a spherical joint at B leaves the coupler's spin about its axis free
    alt = ac.build(ex.build_model("spherical")).mechanism
    assert alt.dof == 2 and alt.n_speeds == 7


def test_slider_crank_kinematics_and_loop_closure(slider_crank):
    ex, _, res = slider_crank
    assert res.t[-1] == pytest.approx(ex.T_END)
    th = res["crank_joint.phi"]
    # the drive holds the crank speed exactly: theta = Omega t to round-off
    np.testing.assert_allclose(th, ex.OMEGA * res.t, atol=1e-9)
    # position-level constraints are algebraic equations solved by Newton to ~atol at every
    # step: the slider position matches s(theta) to 1e-9 m (measured ~3e-11 m)
    assert np.max(np.abs(res["slide.s"] - ex.slider_position(th))) < 1e-9
    gap = np.linalg.norm(res["joint_b.frame_a.r"] - res["joint_b.frame_b.r"], axis=1)
    assert np.max(gap) < 1e-9
    # velocities come from the differentiated constraints; 25 m/s peak, rtol 1e-8 -> 1e-6
    assert np.max(np.abs(res["slide.v"] - ex.slider_velocity(th))) < 1e-6
    # the universal joint keeps the coupler's second axis (its local y) normal to the guide
    Rc = res["coupler_body.frame_a.R"]  # column-major: columns 3..5 are the local y axis
    assert np.max(np.abs(Rc[:, 3])) < 1e-9


def test_slider_crank_power_balance(slider_crank):
    ex, _, res = slider_crank
    W = ex.drive_work(res)
    E = ex.energy(res)
    # the drive's work (Simpson on a 1-degree grid of a smooth torque) equals the change of
    # kinetic + potential energy; energies are ~25 J, measured mismatch ~1e-7 J
    assert np.max(np.abs(W - (E - E[0]))) < 1e-8 * 1e3 * np.max(np.abs(E - E[0]))


# ----------------------------------------------------------------------------------------
# 3. electric power steering
@pytest.fixture(scope="module")
def steering():
    ex = load("mb_power_steering")
    cm = ex.compile_model()
    return ex, cm, ex.run(plot=False, model=cm)


def test_power_steering_has_one_degree_of_freedom(steering):
    ex, cm, _ = steering
    rep = cm.mechanism
    # 7 branch speeds - 4 independent loop constraints (2 planar loops, 3 redundant
    # equations removed from each cut revolute) = 3 (rack, column, motor)
    assert rep.n_bodies == 7 and rep.n_speeds == 7
    assert rep.n_constraints == 4 and rep.n_removed == 6 and rep.dof == 3
    assert set(rep.cotree) >= {"ball_l", "ball_r"} and "rack_joint" in rep.tree
    # the rack-and-pinion and gear couplings remove 2 more: one position/velocity state pair
    assert len(cm.states) == 2


def test_power_steering_couplings_and_linkage(steering):
    ex, _, res = steering
    phi4 = res["column_joint.phi"]
    s = res["rack_joint.s"]
    # rack and pinion and gear are linear algebraic relations solved symbolically: exact
    assert np.max(np.abs(s - ex.R_PINION * phi4)) < 1e-12
    assert np.max(np.abs(res["motor_joint.phi"] - ex.RATIO * phi4)) < 1e-12
    # wheel angles against the closed-form linkage (constraints held to Newton accuracy)
    dl, dr = ex.wheel_angles(s)
    assert np.max(np.abs(res["wheel_l_joint.phi"] - dl)) < 1e-8
    assert np.max(np.abs(res["wheel_r_joint.phi"] - dr)) < 1e-8
    # both wheels turn the same way (a positive column torque steers right: angles drop)
    assert res.final("wheel_l_joint.phi") < ex.DELTA0 - 0.05
    assert res.final("wheel_r_joint.phi") < ex.DELTA7_0 - 0.05


def test_power_steering_settles_at_static_equilibrium(steering):
    ex, _, res = steering
    eq = ex.static_equilibrium()
    # after 3 s the transient (decay rate ~4 1/s) is ~1e-6 of the 0.08 rad steer angle
    assert res.final("wheel_l_joint.phi") == pytest.approx(eq["left"], abs=1e-6)
    assert res.final("wheel_r_joint.phi") == pytest.approx(eq["right"], abs=1e-6)
    assert res.final("column_joint.phi") == pytest.approx(eq["column"], rel=1e-5)


# ----------------------------------------------------------------------------------------
# 4. DC motor driving a two-link arm
@pytest.fixture(scope="module")
def motor_arm():
    ex = load("mb_motor_arm")
    cm = ac.build(ex.build_model())
    return ex, cm, ex.run(plot=False, model=cm)


def test_motor_arm_energy_balance(motor_arm):
    ex, cm, res = motor_arm
    assert cm.mechanism.dof == 2 and cm.mechanism.n_constraints == 0
    eb = ex.energy_balance(res)
    # electrical energy in = resistor + damper losses + stored energy (inductor, rotor,
    # arm). Simpson on a 1 ms grid (armature time constant 50 ms) and rtol 1e-10: the
    # residual is ~3e-8 J of 120 J; allow 1e-8 relative
    assert np.max(np.abs(eb["residual"])) < 1e-8 * eb["in"][-1]
    assert eb["damper"][-1] > 0.1  # the elbow damper took a visible share


def test_motor_arm_holds_against_gravity(motor_arm):
    ex, _, res = motor_arm
    # at rest the stall torque n k V / R balances the gravity moment; after 8 s the
    # transient (decay ~2 1/s) is below 1e-6 rad
    assert res.final("shoulder.phi") == pytest.approx(ex.holding_angle(), abs=1e-6)
    assert res.final("resistor.i") == pytest.approx(ex.V / ex.R, rel=1e-5)
    # the lower link hangs vertically (its swing is damped more slowly: ~2e-6 rad left)
    assert res.final("shoulder.phi") + res.final("elbow.phi") == pytest.approx(-np.pi / 2,
                                                                               abs=1e-5)


# ----------------------------------------------------------------------------------------
# 5. four-bar
def test_fourbar_coupler_curve(tmp_path):
    ex = load("mb_fourbar")
    cm = ac.build(ex.build_model())
    rep = cm.mechanism
    assert rep.removed == ["j4: z position", "j4: axis alignment 1", "j4: axis alignment 2"]
    assert rep.dof == 1 and rep.n_constraints == 2
    res = ex.run(plot=True, outdir=tmp_path, model=cm)
    th = res["crank_joint.phi"]
    P = res["coupler_point.frame_b.r"]
    # loop closure is solved by Newton at each step: the coupler point is on the closed-form
    # curve to ~1e-9 m (measured 3e-10 m)
    assert np.max(np.linalg.norm(P[:, :2] - ex.coupler_point(th), axis=1)) < 5e-9
    assert np.max(np.abs(P[:, 2])) < 1e-12  # stays in the plane
    assert (tmp_path / "mb_fourbar.png").stat().st_size > 10_000
