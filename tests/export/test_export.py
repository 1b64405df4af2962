"""Exported CasADi functions: DAE, differentiable simulator, linearisation."""

import casadi as cs
import numpy as np
from models import RC, MassSpringDamper

import acausal as ac


def test_dae_function_matches_rc_ode():
    cm = ac.build(RC(R=1000.0, C=1e-3, V=10.0))
    f = ac.export.dae_function(cm)
    assert cm.dae.x_names == ["capacitor.v"]
    ode, _ = f([2.0], [], cm.dae.p_values, 0.0)
    assert abs(float(ode) - (10.0 - 2.0) / 1.0) < 1e-12  # (V - v) / (R C)


def test_linearize_mass_spring_damper():
    m, c, d = 2.0, 50.0, 3.0
    cm = ac.build(MassSpringDamper(m=m, c=c, d=d))
    lin = ac.export.linearize(cm, inputs=["spring.c"], outputs=["spring.f"])
    order = [lin.states.index("mass.s"), lin.states.index("mass.v")]
    A = lin.A[np.ix_(order, order)]
    np.testing.assert_allclose(A, [[0, 1], [-c / m, -d / m]], atol=1e-12)
    # output spring.f = c s: C = [c, 0]; input c acts through f = c s: D = s0
    np.testing.assert_allclose(lin.C[0, order], [c, 0.0], atol=1e-12)
    np.testing.assert_allclose(lin.D, [[0.1]], atol=1e-12)


def test_simulator_is_differentiable_wrt_parameters():
    cm = ac.build(RC(R=1000.0, C=1e-3, V=10.0))
    grid = np.linspace(0.0, 1.0, 11)
    sim = ac.export.simulator(cm, grid, outputs=["capacitor.v"], rtol=1e-10, atol=1e-12)
    p = cs.MX.sym("p", cm.dae.p.numel())
    X, Y = sim(cs.DM([0.0]), cs.DM.zeros(0, 1), p)
    k = cm.dae.p_names.index("resistor.R")
    dvdR = cs.Function("g", [p], [cs.jacobian(Y[-1], p)[k]])(cm.dae.p_values)
    # v(t) = V (1 - exp(-t/(RC)))  ->  dv/dR = -V t/(R^2 C) exp(-t/(RC)) at t = 1
    R, C, V, t = 1000.0, 1e-3, 10.0, 1.0
    ref = -V * t / (R**2 * C) * np.exp(-t / (R * C))
    assert abs(float(dvdR) - ref) < 1e-6 * abs(ref)  # IDAS sensitivity at rtol 1e-10


def test_dae_function_generates_c_code(tmp_path, monkeypatch):
    cm = ac.build(MassSpringDamper())
    f = ac.export.dae_function(cm, name="msd_dae")
    monkeypatch.chdir(tmp_path)  # CasADi writes the C file into the working directory
    f.generate("msd_dae.c")
    code = (tmp_path / "msd_dae.c").read_text()
    assert "msd_dae" in code and "casadi_real" in code
