"""Closed-form checks of the 1D domains (issue 2)."""

import numpy as np
from models import RC, DCMotor, HeatedMass, MassSpringDamper, SeriesRLC

import acausal as ac

# IDAS at rtol 1e-10 / atol 1e-12: the global error is a few 1e-10, so 1e-6 relative (the
# issue's figure) leaves three orders of margin without hiding a modelling error.
TIGHT = dict(rtol=1e-10, atol=1e-12)


def test_rc_charging():
    res = ac.simulate(RC(R=1000.0, C=1e-3, V=10.0), 5.0, n_points=501, **TIGHT)
    ref = 10.0 * (1 - np.exp(-res.t / 1.0))
    assert res.t[-1] == 5.0
    assert np.max(np.abs(res["capacitor.v"] - ref)) / 10.0 < 1e-6
    # current through the resistor, by Ohm's law and by the closed form
    np.testing.assert_allclose(res["resistor.i"], 0.01 * np.exp(-res.t), atol=1e-9)


def test_series_rlc_underdamped():
    R, L, C, V = 2.0, 0.5, 0.02, 1.0
    res = ac.simulate(SeriesRLC(R, L, C, V), 2.0, n_points=801, **TIGHT)
    a = R / (2 * L)
    w0 = 1 / np.sqrt(L * C)
    wd = np.sqrt(w0**2 - a**2)
    t = res.t
    vc = V * (1 - np.exp(-a * t) * (np.cos(wd * t) + a / wd * np.sin(wd * t)))
    i = V / (L * wd) * np.exp(-a * t) * np.sin(wd * t)
    assert np.max(np.abs(res["capacitor.v"] - vc)) / V < 1e-6
    assert np.max(np.abs(res["inductor.i"] - i)) / np.max(np.abs(i)) < 1e-6


def test_mass_spring_damper_underdamped():
    m, c, d, s0 = 1.0, 100.0, 2.0, 0.1
    res = ac.simulate(MassSpringDamper(m, c, d, s0), 3.0, n_points=601, **TIGHT)
    a = d / (2 * m)
    wd = np.sqrt(c / m - a**2)
    t = res.t
    s = s0 * np.exp(-a * t) * (np.cos(wd * t) + a / wd * np.sin(wd * t))
    assert np.max(np.abs(res["mass.s"] - s)) / s0 < 1e-6
    np.testing.assert_allclose(res["spring.f"], c * (res["mass.s"] - 0.0), atol=1e-9)


def test_dc_motor_steady_state():
    V, R, k, ratio, TL = 24.0, 0.5, 0.05, 10.0, 0.5
    cm = ac.build(DCMotor(V=V, R=R, k=k, ratio=ratio, TL=TL))
    res = ac.simulate(cm, 3.0, rtol=1e-9, atol=1e-11)
    i_ss = TL / (ratio * k)
    w_ss = (V - R * i_ss) / k
    # after 3 s the slowest transient (mechanical, ~0.1 s) has decayed by > e^-20
    assert abs(res["inductor.i"][-1] - i_ss) / i_ss < 1e-6
    assert abs(res["motor.w"][-1] - w_ss) / w_ss < 1e-6
    assert abs(res["load.w"][-1] - w_ss / ratio) / (w_ss / ratio) < 1e-6
    # the shaft carries the load torque at steady state; MSL sign: the shaft is twisted
    # backwards (phi_rel < 0) when it drives a braked load, so tau = -TL
    assert abs(res["shaft.tau"][-1] + TL) / TL < 1e-6


def test_heating_resistor_first_order():
    V, R, C, G, Ta = 10.0, 5.0, 50.0, 2.0, 293.15
    res = ac.simulate(HeatedMass(V, R, C, G, Ta), 100.0, n_points=401, **TIGHT)
    P = V**2 / R
    T = Ta + P / G * (1 - np.exp(-G * res.t / C))
    assert np.max(np.abs(res["capacity.T"] - T)) / (P / G) < 1e-6
    np.testing.assert_allclose(res["heater.LossPower"], P, rtol=1e-9)


def test_results_table_and_plot(tmp_path):
    res = ac.simulate(RC(), 1.0, n_points=11)
    df = res.to_pandas(["capacitor.v", "resistor.i"])
    assert list(df.columns) == ["capacitor.v", "resistor.i"]
    assert df.index[-1] == 1.0
    f = tmp_path / "rc.png"
    res.plot("capacitor.v", ["resistor.i", "source.p.i"], file=str(f))
    assert f.stat().st_size > 1000
    res.to_csv(str(tmp_path / "rc.csv"), ["capacitor.v"])
    assert (tmp_path / "rc.csv").read_text().startswith("time,capacitor.v")


def test_parameter_override_without_rebuild():
    cm = ac.build(RC())
    r1 = ac.simulate(cm, 1.0, params={"resistor.R": 500.0}, **TIGHT)
    ref = 10.0 * (1 - np.exp(-r1.t / 0.5))
    assert np.max(np.abs(r1["capacitor.v"] - ref)) < 1e-6 * 10
    assert r1["resistor.R"][0] == 500.0
