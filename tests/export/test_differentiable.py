"""``ac.export.simulator(cm, grid, outputs, params=[...])``: a function of named parameters
only, with the consistent initial values computed inside; derivatives checked against
finite differences and a closed form."""

from __future__ import annotations

import sys
from pathlib import Path

import casadi as cs
import numpy as np
import pytest

import acausal as ac

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
import dc_motor  # noqa: E402
import steady_state_motor  # noqa: E402

GRID = np.linspace(0.0, 0.3, 31)


def test_function_of_named_parameters_matches_simulate_and_finite_differences():
    cm = ac.build(dc_motor.build_model())
    sim = ac.export.simulator(cm, GRID, ["load.w", "inductor.i"],
                              params=["resistor.R", "load.J"], start=["load.w"],
                              rtol=1e-12, atol=1e-12)
    assert sim.name_in() == ["p", "s"] and sim.name_out() == ["X", "Y", "x0", "z0"]
    p0, s0 = np.array([0.5, 3e-3]), np.array([0.5])
    Y = np.asarray(sim(p0, s0)[1])
    res = ac.simulate(cm, 0.3, t_eval=GRID, rtol=1e-12, atol=1e-12,
                      params={"resistor.R": 0.5, "load.J": 3e-3}, start={"load.w": 0.5})
    np.testing.assert_allclose(Y[0], res["load.w"][1:], rtol=0, atol=1e-7)
    np.testing.assert_allclose(Y[1], res["inductor.i"][1:], rtol=0, atol=1e-7)
    # d(outputs at t = 50 ms)/d(R, J, w0) by IDAS sensitivities vs central differences
    P, S = cs.MX.sym("P", 2), cs.MX.sym("S", 1)
    jac = cs.Function("dydp", [P, S], [cs.jacobian(sim(P, S)[1][:, 5], cs.vertcat(P, S))])
    J = np.asarray(jac(p0, s0))
    x = np.concatenate([p0, s0])
    for k in range(3):
        h = 1e-4 * abs(x[k])
        e = np.zeros(3)
        e[k] = h
        yp = np.asarray(sim((x + e)[:2], (x + e)[2:])[1])[:, 5]
        ym = np.asarray(sim((x - e)[:2], (x - e)[2:])[1])[:, 5]
        # central differences: truncation error O(h^2), measured 3e-5 relative (at looser
        # tolerances IDAS changes its step sequence between the two runs: noisy quotients)
        np.testing.assert_allclose(J[:, k], (yp - ym) / (2 * h), rtol=1e-4)


def test_initial_values_move_with_the_parameters_through_the_initial_problem():
    # the steady-state drive starts where der(w) = 0: w_motor(0) = (V - R i)/k with
    # i = T_load/(n k), so d w_motor(0)/dR = -i/k exactly
    cm = ac.build(steady_state_motor.build_model())
    sim = ac.export.simulator(cm, GRID, ["load.w"], params=["resistor.R"])
    P = cs.MX.sym("P")
    X, Y, x0, z0 = sim(P)
    f = cs.Function("f", [P], [x0, cs.jacobian(x0, P), cs.jacobian(Y[-1], P)])
    x0v, dx0, dy = (np.asarray(a).ravel() for a in f(0.6))
    i_ss = dc_motor.T_LOAD / (dc_motor.RATIO * dc_motor.K)
    k = cm.dae.x_names.index("motor.w")
    assert x0v[k] == pytest.approx((dc_motor.V - 0.6 * i_ss) / dc_motor.K, rel=1e-12)
    assert dx0[k] == pytest.approx(-i_ss / dc_motor.K, rel=1e-9)
    # the load stays at its steady speed: dY/dR = -i/(k n) at every time
    assert dy[0] == pytest.approx(-i_ss / dc_motor.K / dc_motor.RATIO, rel=1e-6)


def test_unknown_names_are_reported_with_suggestions():
    cm = ac.build(dc_motor.build_model())
    with pytest.raises(ac.AcausalError, match="did you mean resistor.R"):
        ac.export.simulator(cm, GRID, params=["resistor.r"])
    with pytest.raises(ac.AcausalError, match="not conditions of the initial problem"):
        ac.export.simulator(cm, GRID, params=["resistor.R"], start=["resistor.v"])
    # (a name given twice would be two inputs added into one quantity)
    with pytest.raises(ac.AcausalError, match=r"parameter\(s\) given twice: 'load.J'"):
        ac.export.simulator(cm, GRID, params=["load.J", "resistor.R", "load.J"])
    with pytest.raises(ac.AcausalError, match=r"start value\(s\) given twice: 'load.w'"):
        ac.export.simulator(cm, GRID, params=["resistor.R"], start=["load.w", "load.w"])


def test_a_parameter_both_input_and_fixed_is_refused():
    from models import MassSpringDamper

    cm = ac.build(MassSpringDamper())
    with pytest.raises(ac.ArgumentError, match=r"mass.m is given in params= .* and in fixed="):
        ac.export.simulator(cm, [0.0, 1.0], params=["mass.m"], fixed={"mass.m": 2.0})


def test_values_outside_a_parameters_range_fail_the_call_naming_it():
    # simulate refuses J = -1e-3 (declared J > 0); the function's inputs are numbers chosen
    # at each call, so the range is checked inside it, in both of its forms
    cm = ac.build(dc_motor.build_model())
    sim = ac.export.simulator(cm, GRID, ["load.w"], params=["resistor.R", "load.J"],
                              rtol=1e-12, atol=1e-12)
    ok = np.asarray(sim([0.5, 3e-3])[1])
    res = ac.simulate(cm, 0.3, t_eval=GRID, params={"resistor.R": 0.5, "load.J": 3e-3},
                      rtol=1e-12, atol=1e-12)
    # in range the check changes nothing: the two IDAS runs at 1e-12 agree as in the
    # first test of this file (1e-7)
    np.testing.assert_allclose(ok[0], res["load.w"][1:], rtol=0, atol=1e-7)
    for bad in ([0.5, -3e-3], [0.5, 0.0], [np.nan, 3e-3], [np.inf, 3e-3]):
        with pytest.raises(RuntimeError, match=r"parameter '(load\.J|resistor\.R)' \(parameter "
                                               r"'(J|R)' of .*\) must be finite"):
            sim(bad)
    full = ac.export.simulator(cm, GRID, ["load.w"])
    p = np.array(cm.dae.p_values, dtype=float)
    p[cm.dae.p_names.index("load.J")] = -1.0
    # (parameters of one declared range are checked, and named, together)
    with pytest.raises(RuntimeError, match=r"each of the parameters 'motor\.J', 'load\.J' "
                                           r"must be finite, > 0 kg.m2"):
        full(np.zeros(cm.dae.x.numel()), np.zeros(cm.dae.z.numel()), p)
