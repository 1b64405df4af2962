"""Optimal control and estimation on acausal models against known optima.

* the double integrator's minimum time with |u| <= 1 from rest to rest over a distance d:
  T = 2 sqrt(d), bang-bang with one switch at T/2;
* the DC servo's minimum copper-loss move (closed form from the Euler–Lagrange equation of
  the first-order speed model, ``examples/ocp_dc_motor.py``) and its bang-bang minimum
  time (closed form up to one scalar root);
* collocation of a DAE with algebraic variables reproduces IDAS;
* Gauss–Newton estimates of inertia and friction with confidence intervals that hold the
  true values at their nominal rate.
"""

from __future__ import annotations

import importlib.util
import sys
import warnings
from pathlib import Path

import casadi as cs
import numpy as np
import pytest

import acausal as ac
from components import translational as tr

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def load(name: str):
    if str(EXAMPLES) not in sys.path:
        sys.path.insert(0, str(EXAMPLES))
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


class DoubleIntegrator(ac.Model):
    """A unit mass pushed by a force: s'' = f."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.mass = tr.Mass(m=1.0, s=0.0, v=0.0)
        self.force = tr.Force(f=0.0)
        self.connect(self.force.flange, self.mass.flange_a)


@pytest.mark.parametrize("d", [0.5, 2.0])
def test_double_integrator_minimum_time_is_bang_bang(d):
    cm = ac.build(DoubleIntegrator())
    N = 20  # even: the switch at T/2 falls on a mesh point
    ocp = ac.ocp.Collocation(cm, N=N, degree=3, controls=["force.f"], t_final=None)
    opti = ocp.opti
    u = ocp.control("force.f")
    opti.subject_to(opti.bounded(-1.0, u, 1.0))
    opti.subject_to(opti.bounded(0.01, ocp.t_final, 100.0))
    ocp.start_at_initial_values()
    opti.subject_to([ocp.state("mass.s")[-1] == d, ocp.state("mass.v")[-1] == 0.0])
    opti.minimize(ocp.t_final)
    if d == 2.0:  # a guess of the free horizon from a run (it raised a CasADi assertion)
        ocp.guess(ac.simulate(cm, 3.0, params={"force.f": 0.5}))
    sol = ocp.solve(options={"ipopt.bound_relax_factor": 0.0})
    assert sol.t_final == pytest.approx(2 * np.sqrt(d), rel=1e-9)
    np.testing.assert_allclose(sol.control("force.f"), [1.0] * (N // 2) + [-1.0] * (N // 2),
                               atol=1e-6)
    # the states are exact (piecewise quadratics): s(T/2) = d/2, v(T/2) = sqrt(d)
    assert sol.state("mass.s")[N // 2] == pytest.approx(d / 2, rel=1e-9)
    assert sol.state("mass.v")[N // 2] == pytest.approx(np.sqrt(d), rel=1e-9)


def test_dc_motor_minimum_energy_matches_the_closed_form():
    ex = load("ocp_dc_motor")
    cm = ac.build(ex.build_model())
    ref = ex.min_energy_analytic()
    _, sol = ex.solve_min_energy(cm)  # polynomial voltage, N = 20, degree 3
    # measured: objective 5e-9 relative, speed 3e-9 rad/s, voltage 4e-5 V (of 1.5 V)
    assert sol.objective == pytest.approx(ref["E"], rel=1e-7)
    np.testing.assert_allclose(sol.state("inertia.w"), ref["w"](sol.t), rtol=0, atol=1e-7)
    np.testing.assert_allclose(sol.state("inertia.phi"), ref["phi"](sol.t), rtol=0,
                               atol=1e-7)
    np.testing.assert_allclose(sol.control("source.V"), ref["V"](sol.t_collocation), rtol=0,
                               atol=5e-4)
    # piecewise-constant voltage converges to the same optimum at second order in h
    errs = []
    for N in (10, 20):
        _, s = ex.solve_min_energy(cm, N=N, control_kind="constant")
        errs.append(s.objective / ref["E"] - 1)
    assert errs[0] > errs[1] > 0 and 3.0 < errs[0] / errs[1] < 5.0


def test_dc_motor_minimum_time_matches_the_bang_bang_closed_form():
    ex = load("ocp_dc_motor")
    cm = ac.build(ex.build_model())
    t1, T = ex.min_time_analytic()
    _, sol = ex.solve_min_time(cm, N=60)
    # the switch falls inside an interval: the piecewise-constant optimum is slightly
    # slower (measured 1.1e-4 relative at N = 60) and never faster
    assert 0.0 <= sol.t_final / T - 1 < 3e-4
    V = sol.control("source.V")
    # interior point: the bounds are approached to ~1e-6 V
    middle = np.flatnonzero(np.abs(V) < ex.V_MAX - 1e-4)  # intervals between the bounds
    assert len(middle) == 1  # bang-bang, one interval holds the switch: it holds t1
    k = int(middle[0])
    assert np.allclose(V[:k], ex.V_MAX, atol=1e-4)
    assert np.allclose(V[k + 1:], -ex.V_MAX, atol=1e-4)
    assert sol.t[k] <= t1 <= sol.t[k + 1]


def test_collocation_of_a_dae_with_algebraic_variables_reproduces_idas():
    from mb_models import Pendulum  # a 3D pendulum: z = der(joint.w) in the implicit form

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ac.RedundantConstraintWarning)
        cm = ac.build(Pendulum(theta0_deg=60.0, dynamics="virtual_power"))
    assert cm.dae.z_names
    ocp = ac.ocp.Collocation(cm, N=40, degree=3, t_final=1.0)
    ocp.start_at_initial_values()
    ocp.opti.minimize(0)
    sol = ocp.solve()
    res = ac.simulate(cm, 1.0, t_eval=sol.t, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(sol.state("joint.phi"), res["joint.phi"], atol=1e-6)
    np.testing.assert_allclose(sol.collocated("body.frame_a.r")[0],
                               np.interp(sol.t_collocation, res.t, res["body.frame_a.r"][:, 0]),
                               atol=1e-3)  # linear interpolation of the reference


def test_names_are_checked():
    cm = ac.build(DoubleIntegrator())
    with pytest.raises(ac.AcausalError, match="did you mean force.f"):
        ac.ocp.Collocation(cm, N=4, controls=["force.F"])
    ocp = ac.ocp.Collocation(cm, N=4, controls="force.f")  # (one string is one name)
    assert ocp.control_names == ["force.f"]
    with pytest.raises(ac.AcausalError, match="not a state"):
        ocp.state("force.f")
    with pytest.raises(ac.AcausalError, match="did you mean 'mass.s'"):
        ocp.collocated("mass.ss")


def test_estimation_confidence_intervals_hold_the_true_values():
    ex = load("estimate_dc_motor")
    cm = ac.build(ex.build_model())
    grid, y = ex.measurements(cm, seed=ex.SEED)
    est = ex.estimate(cm, grid, y)
    assert np.all(est.ci95[:, 0] < ex.TRUE) and np.all(ex.TRUE < est.ci95[:, 1])
    assert est.sigma == pytest.approx(ex.SIGMA, rel=0.25)
    # repeated noise realisations: the spread of the estimates is the predicted one and
    # the 95 % intervals cover the truth at about their nominal rate
    f = ex.model_function(cm, grid)
    values, inside = [], []
    for seed in range(100, 140):
        _, y = ex.measurements(cm, seed=seed)
        e = ex.estimate(cm, grid, y, f=f)
        values.append(e.value)
        inside.append(np.all((e.ci95[:, 0] < ex.TRUE) & (ex.TRUE < e.ci95[:, 1])))
    spread = np.std(values, axis=0, ddof=1)
    assert np.all(np.abs(spread / est.std - 1) < 0.35)  # 40 samples: sd known to ~11 %
    assert np.mean(inside) >= 0.8  # nominal joint coverage ~0.90-0.95
    assert np.allclose(np.mean(values, axis=0), ex.TRUE, rtol=3 * est.std.max() / ex.TRUE.min())


@pytest.mark.parametrize("kwargs, message", [
    # (N = 0 was a ZeroDivisionError, a degree over 9 or an unknown scheme CasADi's
    # assertion, a negative horizon was accepted)
    ({"N": 0}, r"N \(the number of mesh intervals\) must be an integer >= 1, got 0"),
    ({"N": 4, "degree": 12}, "the collocation degree must be 1 to 9, got 12"),
    ({"N": 4, "scheme": "gauss"}, "scheme must be 'radau' or 'legendre', got 'gauss'"),
    ({"N": 4, "t_final": -1.0}, r"t_final \(the horizon\) must be a number > 0 s"),
    ({"N": 4, "controls": ["force.f", "force.f"]}, r"control\(s\) given twice: 'force.f'"),
    # (a fractional degree was SWIG's "Wrong number or type of arguments", a NaN start
    # time was accepted and made every constraint NaN)
    ({"N": 4, "degree": 2.5}, "the collocation degree must be an integer from 1 to 9, got 2.5"),
    ({"N": 4, "t_start": float("nan")}, "t_start must be finite, got nan"),
    ({"N": 4, "t_final": "1"}, r"t_final \(the horizon\) must be a number > 0 s"),
])
def test_transcription_arguments_are_checked(kwargs, message):
    cm = ac.build(DoubleIntegrator())
    with pytest.raises(ac.AcausalError, match=message):
        ac.ocp.Collocation(cm, **{"controls": ["force.f"], **kwargs})


@pytest.mark.parametrize("scheme, exact_to", [("radau", lambda d: 2 * d - 2),
                                              ("legendre", lambda d: 2 * d - 1)])
@pytest.mark.parametrize("degree", [1, 2, 3, 5])
def test_integral_is_the_quadrature_of_the_collocation_points(scheme, exact_to, degree):
    # int_0^T t^k dt = T^(k+1)/(k+1) for every k up to the rule's degree of exactness
    # (Radau's right rule 2d - 2, Gauss 2d - 1). With Radau of degree 1 the weights were
    # B[1:] of the basis through 0 and 1, (1/2), so every integral came out halved.
    cm = ac.build(DoubleIntegrator())
    T = 2.0
    ocp = ac.ocp.Collocation(cm, N=3, degree=degree, t_final=T, scheme=scheme)
    for k in range(exact_to(degree) + 1):
        value = float(cs.evalf(ocp.integral(ocp.tc ** k)))
        assert value == pytest.approx(T ** (k + 1) / (k + 1), rel=1e-12)  # rounding only
    assert ac.ocp.quadrature_weights(degree, scheme).sum() == pytest.approx(1.0, rel=1e-13)


def test_minimum_energy_with_radau_of_degree_one_is_not_halved():
    # min int f^2 dt moving a unit mass from rest at 0 to rest at 1 in 1 s: f = 6 - 12 t,
    # J* = 12 (Euler-Lagrange: s'''' = 0). Implicit Euler (Radau, d = 1) is first order:
    # with N = 200 the objective is within 12 * 3/N of J*, and it was J*/2 before.
    cm = ac.build(DoubleIntegrator())
    ocp = ac.ocp.Collocation(cm, N=200, degree=1, controls=["force.f"],
                             control_kind="polynomial")
    ocp.start_at_initial_values()
    ocp.opti.subject_to([ocp.state("mass.s")[-1] == 1.0, ocp.state("mass.v")[-1] == 0.0])
    ocp.opti.minimize(ocp.integral(ocp.collocated("force.f") ** 2))
    sol = ocp.solve()
    assert sol.objective == pytest.approx(12.0, rel=3 / 200)


def test_controls_that_are_not_numeric_parameters_say_why():
    class Driven(ac.Model):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.mass = tr.Mass(m=1.0, s=0.0, v=0.0)
            self.force = tr.Force(f=lambda t: 0 * t)
            self.connect(self.force.flange, self.mass.flange_a)

    cm = ac.build(Driven())
    # (both were "unknown control(s): 'force.f'", as if the name were misspelt)
    with pytest.raises(ac.AcausalError, match="'force.f' is given as a function of time"):
        ac.ocp.Collocation(cm, N=4, controls=["force.f"])
    with pytest.raises(ac.AcausalError, match="'mass.s' is a variable of the model, not a "
                                              "parameter"):
        ac.ocp.Collocation(cm, N=4, free_params=["mass.s"])
    ocp = ac.ocp.Collocation(cm, N=4)
    with pytest.raises(ac.AcausalError, match="integral\\(\\) takes a row at the collocation "
                                              "points .*got 3.0"):
        ocp.integral(3.0)  # (was AttributeError: 'float' object has no attribute 'shape')
