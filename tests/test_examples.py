"""Every example of the gallery runs and reproduces its analytic reference.

Each example module is imported from ``examples/`` by path and run with ``plot=False``;
the assertions compare with closed-form solutions (or, for the heating resistor with a
temperature-dependent resistance, with the exact implicit solution ``t(T)``). Tolerances
are stated next to each check with the reason for their size. The flagship
``examples/dc_motor.py`` is also run as a script, as the README tells a new user to do.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def load(name: str):
    """Import ``examples/<name>.py`` as a module (examples is not a package)."""
    if str(EXAMPLES) not in sys.path:  # steady_state_motor imports dc_motor
        sys.path.insert(0, str(EXAMPLES))
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ALL = ["rc_charging", "series_rlc", "mass_spring_damper", "dc_motor", "heating_resistor",
       "parallel_capacitors", "gear_coupled_inertias", "prescribed_motion",
       "cartesian_pendulum", "steady_state_motor", "dc_motor_pi", "stick_slip",
       "clutch_engagement", "bouncing_ball", "half_wave_rectifier", "buck_converter",
       "thermostat"]


@pytest.mark.parametrize("name", ALL)
def test_example_declares_run_settings(name):
    mod = load(name)
    assert mod.__doc__ and "Reference solution" in mod.__doc__
    for const in ("T_END", "RTOL", "ATOL", "N_POINTS"):
        assert hasattr(mod, const), f"{name} does not declare {const}"
    assert callable(mod.build_model) and callable(mod.run)


def test_rc_charging():
    ex = load("rc_charging")
    res = ex.run(plot=False)
    assert res.t[-1] == pytest.approx(ex.T_END)
    v_ref, i_ref = ex.analytic(res.t)
    # IDAS with rtol 1e-8 on a 10 V signal: the global error stays well below 1e-5 V
    assert np.max(np.abs(res["capacitor.v"] - v_ref)) < 1e-5 * ex.V
    assert np.max(np.abs(res["resistor.i"] - i_ref)) < 1e-5 * ex.V / ex.R


def test_series_rlc():
    ex = load("series_rlc")
    res = ex.run(plot=False)
    v_ref, i_ref = ex.analytic(res.t)
    # ~5 oscillation periods at rtol 1e-8: phase error accumulates but stays < 1e-5 relative
    assert np.max(np.abs(res["capacitor.v"] - v_ref)) < 1e-5 * ex.V
    i_peak = ex.V / (ex.L * ex.constants()[2])
    assert np.max(np.abs(res["inductor.i"] - i_ref)) < 1e-5 * i_peak


def test_mass_spring_damper():
    ex = load("mass_spring_damper")
    res = ex.run(plot=False)
    # global error of IDAS at rtol 1e-8 over 8 periods: 1e-6 of the amplitude is ample
    assert np.max(np.abs(res["mass.s"] - ex.analytic(res.t))) < 1e-6 * ex.S0
    # zero crossings by linear interpolation on a 2.5 ms grid: O(dt^2 * curvature) ~ 1e-6 s
    _, _, wd = ex.constants()
    assert ex.measured_period(res.t, res["mass.s"]) == pytest.approx(2 * np.pi / wd, rel=1e-5)


def test_dc_motor_steady_state():
    ex = load("dc_motor")
    res = ex.run(plot=False)
    ref = ex.analytic_steady_state()
    # T_END is 15 mechanical time constants: the transient has decayed below 1e-6 relative
    assert res.final("inductor.i") == pytest.approx(ref["i"], rel=1e-5)
    assert res.final("motor.w") == pytest.approx(ref["w_motor"], rel=1e-6)
    assert res.final("load.w") == pytest.approx(ref["w_load"], rel=1e-6)
    # the shaft carries the load torque (cut torque at flange_b is negative when driving)
    assert -res.final("shaft.tau") == pytest.approx(ref["tau_shaft"], rel=1e-5)
    # the gear is rigid: exact to round-off (it is an algebraic equation solved symbolically)
    assert np.max(np.abs(res["motor.phi"] - ex.RATIO * res["gear.phi_b"])) < 1e-9


def test_dc_motor_power_balance():
    """Electrical power in = losses + mechanical power out + stored energy rate."""
    ex = load("dc_motor")
    res = ex.run(plot=False)
    p_emf = res["emf.v"] * res["emf.i"]
    p_mech = -res["emf.flange.tau"] * res["motor.w"]  # torque the EMF applies times speed
    # the EMF is an ideal converter: exact up to the integrator's rounding of outputs
    assert np.max(np.abs(p_emf - p_mech)) < 1e-9 * np.max(np.abs(p_emf))


def test_heating_resistor():
    ex = load("heating_resistor")
    cm = ex.ac.build(ex.build_model())
    res0 = ex.run(plot=False, alpha=0.0, model=cm)
    # first-order rise of ~90 K at rtol 1e-8: errors are of order 1e-5 K
    assert np.max(np.abs(res0["body.T"] - ex.analytic_alpha0(res0.t))) < 1e-4
    res1 = ex.run(plot=False, alpha=ex.ALPHA_METAL, model=cm)
    x = res1["body.T"] - ex.T_AMB
    x1 = ex.steady_temperature(ex.ALPHA_METAL) - ex.T_AMB
    sel = (x > 0.01 * x1) & (x < 0.99 * x1)
    # exact implicit solution t(T); below 99 % of the rise dt/dT is moderate, so a 1e-5 K
    # temperature error maps to < 1e-3 s
    assert np.max(np.abs(ex.time_to_rise(x[sel], ex.ALPHA_METAL) - res1.t[sel])) < 1e-3
    # after 10 time constants the steady state of the quadratic is reached to < 1e-3 K
    assert res1.final("body.T") == pytest.approx(ex.T_AMB + x1, abs=1e-3)
    assert res1.final("body.T") < res0.final("body.T")  # positive alpha settles cooler


def test_parallel_capacitors():
    ex = load("parallel_capacitors")
    cm = ex.ac.build(ex.build_model())
    # the circuit postulate makes c2.v an alias of c1.v: one state, nothing differentiated
    assert len(cm.states) == 1 and cm.report.differentiated == []
    res = ex.run(plot=False, model=cm)
    assert np.max(np.abs(res["c1.v"] - res["c2.v"])) == 0.0  # same symbol
    assert np.max(np.abs(res["c1.v"] - ex.analytic(res.t))) < 1e-5 * ex.V
    # both currents are C_k dv/dt of the same v: the ratio is exact up to round-off
    assert np.allclose(res["c1.i"] / res["c2.i"], ex.C1 / ex.C2, rtol=1e-9)


def test_gear_coupled_inertias():
    ex = load("gear_coupled_inertias")
    cm = ex.ac.build(ex.build_model())
    # the angle constraint is differentiated twice; J1 keeps its states
    assert cm.report.index == 2 and sorted(cm.states) == ["j1.phi", "j1.w"]
    res = ex.run(plot=False, model=cm)
    w1, w2 = ex.analytic(res.t)
    scale = 2 * ex.TAU0 / (ex.OMEGA * (ex.J1 + ex.J2 / ex.RATIO**2))  # peak speed
    # rtol 1e-8 integration of a smooth forced response: 1e-6 relative is ample
    assert np.max(np.abs(res["j1.w"] - w1)) < 1e-6 * scale
    assert np.max(np.abs(res["j2.w"] - w2)) < 1e-6 * scale
    # the constraint itself holds to round-off (solved exactly, not integrated)
    assert np.max(np.abs(res["j1.phi"] - ex.RATIO * res["j2.phi"])) < 1e-12


def test_prescribed_motion():
    ex = load("prescribed_motion")
    cm = ex.ac.build(ex.build_model())
    assert cm.states == [] and cm.report.index == 2  # index 3: no state left
    res = ex.run(plot=False, model=cm)
    # every quantity is an explicit function of time (exact symbolic derivatives), so the
    # force is exact to round-off
    f = res["mass.flange_a.f"]
    assert np.max(np.abs(f - ex.analytic_force(res.t))) < 1e-12
    assert np.max(np.abs(res["source.flange.f"] + f)) < 1e-12
    assert np.max(np.abs(res["mass.s"] - ex.A * np.sin(ex.OMEGA * res.t))) < 1e-12


def test_cartesian_pendulum():
    ex = load("cartesian_pendulum")
    cm = ex.ac.build(ex.build_model())
    assert cm.report.index == 2 and cm.report.dynamic_state_selection
    res = ex.run(plot=False, model=cm)
    assert res.status == "ok"
    # exact elliptic-integral period; zero crossings interpolated linearly on a 5 ms grid
    # near the bottom where x is almost linear in t: ~1e-7 relative; allow 1e-6
    assert ex.measured_period(res.t, res["x"]) == pytest.approx(ex.exact_period(), rel=1e-6)
    E = ex.energy(res)
    # IDAS at rtol 1e-8 does not conserve energy exactly; measured drift is ~1e-7 m g L
    assert np.max(np.abs(E - E[0])) < 1e-5 * ex.M * ex.G * ex.L
    # the position constraint is an equation of the index-reduced DAE: held to ~atol
    assert np.max(np.abs(res["x"] ** 2 + res["y"] ** 2 - ex.L**2)) < 1e-7


def test_steady_state_motor():
    ex = load("steady_state_motor")
    res = ex.run(plot=False)
    ref = ex.analytic_steady_state()
    # initialised by Newton on the steady-state equations (residual ~1e-12) and then
    # integrated from an equilibrium: deviations stay at round-off level
    assert np.max(np.abs(res["inductor.i"] - ref["i"])) < 1e-8 * ref["i"]
    assert np.max(np.abs(res["motor.w"] - ref["w_motor"])) < 1e-8 * ref["w_motor"]
    assert np.max(np.abs(res["load.w"] - ref["w_load"])) < 1e-8 * ref["w_load"]
    assert res["shaft.phi_rel"][0] == pytest.approx(-ex.T_LOAD / ex.C_SHAFT, rel=1e-9)
    assert any("initial equation" in c for c in res.stats.initial_conditions)


def test_dc_motor_pi():
    ex = load("dc_motor_pi")
    results = ex.run(plot=False)
    res = results["pi"]
    # rtol 1e-8 on a smooth 5 rad/s response: measured 1.4e-7 rad/s (2.8e-8 relative)
    assert np.max(np.abs(res["sensor.w"] - ex.analytic(res.t))) < 1e-6 * ex.R_SMALL
    # anti-windup: LimPID overshoots less than the unlimited linear loop (6.0 %), the
    # PI + Limiter much more (measured 3.3 % and 18.4 %)
    assert ex.overshoot(results["limpid"]) < ex.linear_overshoot() < 0.5 * ex.overshoot(
        results["pi_limiter"])


def test_stick_slip():
    ex = load("stick_slip")
    res = ex.run(plot=False)
    ref = ex.closed_form()
    tb = ex.breakaways(res)
    # breakaways are located to 1e-13 s on an IDAS solution at rtol 1e-10: measured 3e-12 s
    assert tb[0] == pytest.approx(ref["t1"], abs=1e-9)
    np.testing.assert_allclose(np.diff(tb), ref["period"], rtol=0, atol=1e-9)
    slipping = np.abs(res["friction.mode"]) == 1
    x_k = ex.FK / ex.K
    # the slip is the harmonic oscillation about x_k (IDAS rtol 1e-10; the extremes on the
    # 2 ms grid are within w^2 A dt^2 / 8 = 5e-8 m of the true ones)
    assert np.max(res["block.s"][slipping] - x_k) == pytest.approx(ref["amplitude"], abs=1e-7)


def test_clutch_engagement():
    ex = load("clutch_engagement")
    res = ex.run(plot=False)
    ref = ex.closed_form()
    assert ex.lock_up(res) == pytest.approx(ref["t_lock"], abs=1e-9)  # measured 1e-14 s
    # locked: one speed, the common one (momentum conserved exactly by the equations)
    assert res.final("flywheel.w") == pytest.approx(ref["w_f"], rel=1e-9)
    assert res.final("load.w") == pytest.approx(ref["w_f"], rel=1e-9)
    E = ex.kinetic_energy(res)
    assert E[0] - E[-1] == pytest.approx(ref["loss"], rel=1e-9)


def test_bouncing_ball():
    ex = load("bouncing_ball")
    res = ex.run(plot=False)
    t_ref = ex.impact_times()
    t_sim = ex.impacts(res)
    # the impact times are sums of located events (1e-13 s each): measured 1e-12 s
    assert len(t_sim) == len(t_ref)
    np.testing.assert_allclose(t_sim, t_ref, rtol=0, atol=1e-9)
    rest = res.t > t_ref[-1] + 1e-9
    assert np.all(res["ball.s"][rest] == res["ball.s"][rest][0])  # at rest on the floor
    assert abs(res["ball.s"][rest][0]) < 1e-12
    # the floor carries the weight
    np.testing.assert_allclose(res["ball.f_stop"][rest], ex.M * ex.G, rtol=1e-12)


def test_half_wave_rectifier():
    ex = load("half_wave_rectifier")
    res = ex.run(plot=False)
    ref = ex.closed_form()
    off, on = ex.switchings(res)
    period = 1 / ex.F
    t_off = off[(off > 3 * period) & (off < 4 * period)].max() - 3 * period
    t_on = on[(on > 4 * period) & (on < 4.5 * period)].min() - 4 * period
    # the indicator is the diode current through Ron = 1e-5 Ohm: at rtol 1e-8 the
    # voltages' errors place its zero within ~1e-8 s (measured 8e-9 s at the turn-off,
    # where the current falls slowly, 2e-9 s at the turn-on)
    assert t_off == pytest.approx(ref["t_off"], abs=3e-8)
    assert t_on == pytest.approx(ref["t_on"], abs=1e-8)
    last = (res.t >= 3 * period) & (res.t <= 4 * period)
    # extremes sampled on the 0.1 ms grid: within (w V) dt^2 / 8 = 4e-5 V of the true ones
    assert np.ptp(res["capacitor.v"][last]) == pytest.approx(ref["ripple"], abs=1e-4)


def test_buck_converter():
    ex = load("buck_converter")
    res = ex.run(plot=False)
    ref = ex.textbook()
    mean, ripple = ex.last_period(res)
    # the transient has decayed to e^-16 of 4.8 V; the trapezoidal mean over 10 points a
    # period is within T h^2 max|v''| / 12 (1e-3 V) of the true mean: measured 1.4e-4 V
    assert mean == pytest.approx(ref["vout"], abs=1e-3)
    # the exact periodic ripple is 0.64 % above the textbook formula (see
    # tests/hybrid/test_discontinuous.py); sampled on 10 points a period (measured 0.66 %)
    assert ripple == pytest.approx(ref["ripple"], rel=1e-2)
    n_periods = round(ex.T_END * ex.FSW)
    closes = np.flatnonzero(np.diff(res["switch.control"]) > 0)
    # one closing a period: after the first period's, up to the rising edge at T_END itself
    assert len(closes) == n_periods


def test_thermostat():
    ex = load("thermostat")
    res = ex.run(plot=False)
    got, ref = ex.simulated_switches(res), ex.switching_times()
    assert len(got) == len(ref) == 119
    # IDAS's global error on a 293 K state at rtol 1e-10, divided by the slow slopes at
    # the band's edges (1.5e-3 K/s), accumulated over the day's 60 cycles: measured
    # 3.8e-3 s, 6e-6 of a cycle (it converges with rtol)
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-2)
    on = res["controller.y"]
    assert set(np.unique(on)) == {0.0, 1.0}
    assert on[0] == 1.0  # below the band at the start: on from the start
    # after the warm-up the room stays in the band (to the state's error, 1e-6 K)
    T = res["room.T"][res.t > ref[0] + 1.0]
    assert ex.T_SET - ex.BAND / 2 - 1e-6 < T.min() and T.max() < ex.T_SET + ex.BAND / 2 + 1e-6


def test_examples_write_png(tmp_path):
    ex = load("rc_charging")
    ex.run(plot=True, outdir=tmp_path)
    assert (tmp_path / "rc_charging.png").stat().st_size > 1000


def test_dc_motor_script(tmp_path):
    """The README's first command: run the flagship as a script."""
    out = EXAMPLES / "output" / "dc_motor.png"
    before = out.stat().st_mtime_ns if out.exists() else -1
    proc = subprocess.run([sys.executable, str(EXAMPLES / "dc_motor.py")], capture_output=True,
                          text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "steady state" in proc.stdout
    assert "states chosen" in proc.stdout
    assert out.exists() and out.stat().st_mtime_ns > before
    assert out.stat().st_size > 10_000


def test_flexible_pendulum_example(tmp_path):
    ex = load("flexible_pendulum")
    data, res = ex.run(plot=False)
    E = ex.energy(data, res)
    scale = data.invariants.mass * 9.81 * ex.L / 2
    # undamped modal FFRF pendulum at rtol 1e-10: energy is conserved to solver accuracy
    assert np.abs(E - E[0]).max() / scale < 1e-6
    assert (res.t[-1], len(res.t)) == (ex.T_END, ex.N_POINTS)


def test_flexible_panel_modes_script(tmp_path):
    out = subprocess.run([sys.executable, str(EXAMPLES / "flexible_panel_modes.py")],
                         capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "Leissa" in out.stdout


def test_fmu_export_example(tmp_path):
    """The DC motor exported as an FMU and simulated by fmpy (CVODE) reproduces the
    library's IDAS result; without a C compiler or fmpy the example runs and says so."""
    ex = load("fmu_export")
    res, fmu_res = ex.run(plot=True, outdir=tmp_path)
    assert (tmp_path / "fmu_export.png").stat().st_size > 10_000
    assert res.final("motor.w") == pytest.approx(ex.dc_motor.analytic_steady_state()[
        "w_motor"], rel=1e-6)  # 15 mechanical time constants: the transient has decayed
    if fmu_res is None:
        pytest.skip("no C compiler or no fmpy: the FMU was not simulated")
    assert (tmp_path / "DCMotorDrive.fmu").exists()
    # both integrators at rtol 1e-10 on the same equations: measured ~3e-9; 1e-6 is the
    # FMU export's acceptance bound (tests/export/test_fmu.py)
    assert max(ex.max_relative_difference(res, fmu_res).values()) < 1e-6
