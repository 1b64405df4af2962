"""Integration backends behind one interface, and the automatic choice between them.

Every backend integrates the same explicit ODEs to its tolerance against closed forms; the
automatic rule (:mod:`acausal.solvers.choice`) gives an implicit method to a stiff model
and an explicit one to a non-stiff one; an explicit method that meets stiffness later
switches to an implicit one and says so; failures return what was computed before them.
"""

from __future__ import annotations

import gc
import tempfile
import warnings

import casadi as cs
import numpy as np
import pytest
from _models import LinkChain as Chain
from _models import RCLadder
from mb_models import FourBar, Pendulum

import acausal as ac
from acausal.solvers import rk
from acausal.solvers.base import IntegrationFailure, IntegratorOptions, integrator_class
from acausal.solvers.choice import ACCURACY, STIFF_RATIO, analyse, estimate_costs
from acausal.solvers.machine import c_compiler
from acausal.solvers.ode import ode_form
from components import electrical as el
from components import translational as tr

ODE_BACKENDS = ("cvodes-adams", "cvodes-bdf", "cvodes-krylov", "dopri5", "dop853",
                "idas-krylov")


class Oscillators(ac.Model):
    """N independent damped mass-spring oscillators with closed-form motions (an explicit
    ODE of 2 N states, non-stiff: light damping)."""

    def __init__(self, N: int = 20):
        super().__init__()
        self.fixed = tr.Fixed()
        self.m = [tr.Mass(m=1.0, s=1.0, v=0.0) for _ in range(N)]
        self.k = [tr.SpringDamper(c=float(k + 1) ** 2, d=0.1) for k in range(N)]
        for m, k in zip(self.m, self.k, strict=True):
            self.connect(self.fixed.flange, k.flange_a)
            self.connect(k.flange_b, m.flange_a)

    @staticmethod
    def closed_form(k: int, t: np.ndarray) -> np.ndarray:
        w0, z = float(k + 1), 0.1 / (2 * float(k + 1))
        wd = w0 * np.sqrt(1 - z**2)
        return np.exp(-z * w0 * t) * (np.cos(wd * t) + z * w0 / wd * np.sin(wd * t))


@pytest.fixture(scope="module")
def oscillators():
    return ac.build(Oscillators())


@pytest.mark.parametrize("solver", ODE_BACKENDS)
def test_backends_follow_the_closed_form(oscillators, solver):
    res = ac.simulate(oscillators, 5.0, n_points=101, rtol=1e-10, atol=1e-12, solver=solver)
    assert res.stats.solver == solver and res.status == "ok"
    for k in (0, 7, 19):
        err = np.max(np.abs(res[f"m[{k}].s"] - Oscillators.closed_form(k, res.t)))
        assert err < 1e-7, (solver, k, err)


def test_choice_stiff_model_gets_an_implicit_method():
    cm = ac.build(RCLadder())
    choice = analyse(cm, cm.parameter_values(), np.linspace(0.0, 1.0, 101))
    assert choice.solver == "cvodes-bdf", choice
    assert choice.rho_dissipative > STIFF_RATIO * choice.rho_resolve
    res = ac.simulate(cm, 1.0, n_points=101, rtol=1e-8, atol=1e-10)
    assert res.stats.solver == "cvodes-bdf"
    ref = ac.simulate(cm, 1.0, n_points=101, rtol=1e-8, atol=1e-10, solver="idas")
    np.testing.assert_allclose(res["c[39].v"], ref["c[39].v"], atol=1e-6)


def test_choice_nonstiff_models_get_an_explicit_method(oscillators):
    choice = analyse(oscillators, oscillators.parameter_values(), np.linspace(0, 5, 101))
    assert choice.solver in ("cvodes-adams", "dop853"), choice
    assert choice.rho_dissipative == 0.0  # lightly damped: every mode is to be resolved
    cm = ac.build(Chain())
    choice = analyse(cm, cm.parameter_values(), np.linspace(0, 1, 101))
    assert choice.solver in ("cvodes-adams", "dop853"), choice
    # the mirrored spectrum of the released chain: a decay as fast as a growth
    assert choice.rho_dissipative <= choice.rho_resolve * 1.0001


def test_choice_spectrum_is_the_closed_form_and_its_jacobian_the_symbolic_one(oscillators):
    """The spectrum behind the choice: the 20 oscillators' eigenvalues are
    ``-zeta w0 +- i w_d`` (closed form); the Jacobian it comes from (central differences
    by colours of columns) matches the symbolic Jacobian, on the sparse chain and on the
    dense dynamics of the link chain at a random state."""
    from _models import MassSpringChain

    from acausal.solvers.choice import _jacobian

    choice = analyse(oscillators, oscillators.parameter_values(), np.linspace(0, 5, 101))
    w0 = np.arange(1.0, 21.0)
    zw = 0.1 / 2  # zeta w0 = d / (2 m) for every oscillator
    wd = np.sqrt(w0**2 - zw**2)
    got = choice.eigenvalues
    # (central differences of a linear right-hand side: rounding only, ~1e-12 relative
    # of entries up to 400; the eigenvalues moved by 6e-10 when written)
    np.testing.assert_allclose(got[np.argsort(got.imag)],
                               np.sort(np.concatenate([wd, -wd])) * 1j - zw,
                               rtol=0, atol=1e-8)
    rng = np.random.default_rng(3)
    for cm in (ac.build(MassSpringChain(30)), ac.build(Chain(8))):
        form = ode_form(cm.dae, cm.parameter_values())
        x0 = rng.normal(size=form.n)
        J = _jacobian(form, x0, 0.2).toarray()
        ref = np.asarray(cs.densify(cs.Function("j", [form.x, form.t], [
            cs.jacobian(form.rhs, form.x)])(x0, 0.2)))
        # (central differences at steps 6e-6: truncation ~h^2 times the third
        # derivative, rounding ~1e-11 |f| / |J|; 4e-11 and 1.6e-10 of the largest entry
        # when written)
        np.testing.assert_allclose(J, ref, rtol=0, atol=1e-8 * np.abs(ref).max())


def test_choice_between_the_explicit_methods_follows_the_cost_model():
    """A chain of 40 masses (cheap right-hand side, 80 states): dop853's set-up and
    Python step loop cost more than Adams's steps in C, even with the accuracy margin;
    the link chain: CVODES's symbolic Jacobian of the dense dynamics outweighs
    everything, dop853."""
    from _models import MassSpringChain

    grid = np.linspace(0.0, 1.0, 101)
    cm = ac.build(MassSpringChain(40))
    choice = analyse(cm, cm.parameter_values(), grid)
    assert choice.solver == "cvodes-adams", choice
    form = ode_form(cm.dae, cm.parameter_values())
    rk, ad = estimate_costs(form, choice.rho_resolve * 1.0, 100, 1e-6)
    assert ACCURACY * ad < rk
    # a tighter tolerance: more steps for both; dop853's set-up is spread over more of
    # them, so its estimate grows less than Adams's
    rk_tight, ad_tight = estimate_costs(form, choice.rho_resolve * 1.0, 100, 1e-10)
    assert rk_tight > rk and ad_tight > ad and rk_tight / rk < ad_tight / ad
    links = ac.build(Chain())
    choice = analyse(links, links.parameter_values(), grid)
    assert choice.solver == "dop853", choice
    assert ac.simulate(links, 0.01, n_points=3).stats.solver == "dop853"


def test_dop853_is_the_more_accurate_at_equal_tolerance():
    """The accuracy margin of the cost model: on the released link chain at rtol = atol
    = 1e-6, dop853's tip error against IDAS at 1e-12 is several times smaller than
    Adams's (3.6e-8 against 3.1e-7 m when written)."""
    cm = ac.build(Chain())
    tip = "arms[19].frame_b.r"
    with warnings.catch_warnings():  # (11 points do not resolve the chain's whip)
        warnings.simplefilter("ignore", ac.UnresolvedWarning)
        ref = ac.simulate(cm, 1.0, n_points=11, rtol=1e-12, atol=1e-12, solver="idas")[tip]
        err = {s: np.abs(ac.simulate(cm, 1.0, n_points=11, rtol=1e-6, atol=1e-6,
                                     solver=s)[tip] - ref).max()
               for s in ("dop853", "cvodes-adams")}
    # (a factor 3, not the 8.6 measured: room for a change of either code's heuristics)
    assert err["dop853"] * 3 < err["cvodes-adams"], err


def test_choice_keeps_idas_where_it_is_the_method():
    cm = ac.build(FourBar())  # multipliers, dynamic state selection
    assert analyse(cm, cm.parameter_values(), np.linspace(0, 1, 11)).solver == "idas"
    cm = ac.build(Pendulum(30.0))  # a small ODE
    choice = analyse(cm, cm.parameter_values(), np.linspace(0, 1, 11))
    assert choice.solver == "idas" and "small" in choice.reason
    assert ac.simulate(cm, 0.1, n_points=3).stats.solver == "idas"
    # a backend mode keeps IDAS, and an explicit request is obeyed
    big = ac.build(Chain())
    assert ac.simulate(big, 0.01, n_points=3, mode="exact_xdot").stats.solver == "idas"
    assert ac.simulate(big, 0.01, n_points=3, solver="dopri5").stats.solver == "dopri5"


def test_explicit_method_meeting_stiffness_switches_and_says_so():
    cm = ac.build(RCLadder())
    ref = ac.simulate(cm, 1.0, n_points=11, rtol=1e-8, atol=1e-10, solver="idas")
    with pytest.warns(ac.SolverWarning, match="stiffness detected.*CVODES BDF"):
        res = ac.simulate(cm, 1.0, n_points=11, rtol=1e-8, atol=1e-10, solver="dop853")
    np.testing.assert_allclose(res["c[39].v"], ref["c[39].v"], atol=1e-6)
    assert "cvodes-bdf" in res.stats.integration_mode
    # without fallback the backend fails fast with the reason and the points before
    integ = integrator_class("dopri5")(cm, IntegratorOptions(rtol=1e-8, atol=1e-10))
    x0 = np.zeros(cm.dae.x.numel())
    with pytest.raises(IntegrationFailure, match="stiff") as info:
        integ.integrate(cm.dae, cm.parameter_values(), x0, np.zeros(0),
                        np.linspace(0, 1, 11), allow_fallback=False)
    assert info.value.partial is not None and info.value.t_fail < 1.0


class BlowUp(ac.Model):
    """40 copies of v' = v^2, v(0) = 1: a finite-time blow-up at t = 1."""

    def __init__(self, N: int = 40):
        super().__init__()
        self.c = [el.Capacitor(C=1.0, v=1.0) for _ in range(N)]
        self.g = el.Ground()
        self.src = [_Square() for _ in range(N)]
        for c, s in zip(self.c, self.src, strict=True):
            self.connect(c.p, s.p)
            self.connect(c.n, s.n, self.g.p)


class _Square(el.OnePort):
    """Current source i = -v^2 into a unit capacitor: v' = v^2."""

    g = ac.Parameter(1.0, unit="A/V2", doc="coefficient of the square law")

    def equations(self):
        return [self.i == -self.g * self.v * self.v]


@pytest.mark.parametrize("solver", ["cvodes-adams", "cvodes-bdf", "dopri5", "dop853"])
def test_failure_returns_the_points_before_it(solver):
    cm = ac.build(BlowUp())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ac.SolverWarning)
        with pytest.raises(ac.SimulationError) as info:
            ac.simulate(cm, 2.0, n_points=201, solver=solver)
    err = info.value
    assert 0.9 < err.t_fail <= 1.0 + 1e-6, err.t_fail
    part = err.partial
    assert part is not None and 0.95 <= part.t[-1] <= err.t_fail
    assert part.t[-1] < 1.0  # never a point at the pole (a finite value of an infinite one)
    t = part.t[part.t < 0.8]  # the error grows like the solution near the blow-up
    np.testing.assert_allclose(part["c[0].v"][: len(t)], 1.0 / (1.0 - t), rtol=1e-4)


def test_small_linear_algebraic_block_is_eliminated_for_the_ode_backends():
    """The motor arm: the articulated-body inertia meets the motor's through a gear, a
    small linear block of axis torques and accelerations that the ODE backends solve
    inside the right-hand side."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
    import mb_motor_arm

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ac.RedundantConstraintWarning)
        cm = ac.build(mb_motor_arm.build_model())
    assert cm.dae.z.numel() > 0
    ref = ac.simulate(cm, 0.5, n_points=51, rtol=1e-10, atol=1e-10, solver="idas")
    res = ac.simulate(cm, 0.5, n_points=51, rtol=1e-10, atol=1e-10, solver="cvodes-adams")
    for name in ("shoulder.phi", "elbow.phi", "inductor.i", "shoulder.axis.tau"):
        np.testing.assert_allclose(res[name], ref[name], rtol=1e-6, atol=1e-7)


def test_ode_form_refuses_a_nonlinear_algebraic_block():
    from acausal.solvers.ode import NotAnODE, ode_form

    x, z, t = cs.SX.sym("x"), cs.SX.sym("z"), cs.SX.sym("t")
    from acausal.dae import SemiExplicitDAE

    dae = SemiExplicitDAE(t, x, z, cs.SX(0, 1), ode=-z, alg=z**3 - x, x_names=["x"],
                          z_names=["z"], p_names=[], p_values=np.zeros(0), out_names=[],
                          out_expr=[], out_sizes=[])
    with pytest.raises(NotAnODE, match="nonlinear"):
        ode_form(dae, np.zeros(0))


def test_tableaux_are_scipys():
    from scipy.integrate import DOP853, RK45

    from acausal.solvers import _tableaux as tb

    for name in ("C", "A", "B", "E", "P"):
        assert np.array_equal(getattr(tb, f"RK45_{name}"), getattr(RK45, name)), name
    for name in ("C", "A", "B", "E3", "E5", "D", "A_EXTRA", "C_EXTRA"):
        assert np.array_equal(getattr(tb, f"DOP853_{name}"), getattr(DOP853, name)), name


@pytest.mark.skipif(c_compiler() is None, reason="no C compiler on this machine")
@pytest.mark.parametrize("solver", ("dopri5", "dop853"))
def test_compiled_right_hand_side_gives_the_same_run(tmp_path, monkeypatch, solver):
    """The right-hand side compiled to machine code (``solver_options={"compile": True}``:
    compiled before the run; ``"auto"`` switches when the background compile is done)
    is the same arithmetic as CasADi's virtual machine: the runs agree to rounding, and
    no file is left behind, neither in the working directory nor in the temporary one."""
    work, temp = tmp_path / "work", tmp_path / "temp"
    work.mkdir()
    temp.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setattr(tempfile, "tempdir", str(temp))  # (other processes may compile too)
    monkeypatch.setattr(rk, "COMPILE_MIN_INSTRUCTIONS", 0)  # "auto" compiles this small one
    runs = {}
    for mode in (False, True, "auto"):
        cm = ac.build(Chain(20))
        with warnings.catch_warnings():  # the free end whips between the points: only the
            warnings.simplefilter("ignore", ac.UnresolvedWarning)  # agreement counts here
            runs[mode] = ac.simulate(cm, 0.5, n_points=121, rtol=1e-9, atol=1e-9,
                                     solver=solver, solver_options={"compile": mode})
    # same operations in the same order; 1e-12 leaves room for a libm that rounds sin
    # and cos differently from CasADi's own calls (none seen: the runs were identical)
    for k in (0, 19):
        a = runs[False][f"joints[{k}].phi"]
        for mode in (True, "auto"):
            assert np.max(np.abs(runs[mode][f"joints[{k}].phi"] - a)) < 1e-12, (solver, k)
    with pytest.raises(ac.AcausalError, match="compile"):
        ac.simulate(cm, 0.1, solver=solver, solver_options={"compile": "yes"})
    with pytest.raises(ac.AcausalError, match="no option"):
        ac.simulate(cm, 0.1, solver=solver, solver_options={"jit": True})
    assert list(work.iterdir()) == []
    # a compile still running when a run ends is kept for the model's next run; it is
    # abandoned (and its directory removed) when the model goes
    del cm, runs
    gc.collect()
    assert list(temp.iterdir()) == []


@pytest.mark.skipif(c_compiler() is None, reason="no C compiler on this machine")
def test_a_compiled_right_hand_side_is_kept_on_disk_for_the_next_run(tmp_path, monkeypatch):
    """A library one run compiled is kept in the cache directory; the next run of the
    same model (a new build, as a script run again makes) loads it, with no compiler
    started, and agrees with the virtual machine to rounding. A damaged file is compiled
    again and replaced; beyond ``CACHE_MAX_FILES`` the least recently used go; ``off``
    keeps none."""
    from acausal.solvers import machine

    cache = tmp_path / "cache"
    monkeypatch.setenv("ACAUSAL_COMPILE_CACHE", str(cache))
    monkeypatch.setattr(rk, "COMPILE_MIN_INSTRUCTIONS", 0)  # ("auto" considers this one)
    started: list[object] = []
    popen = machine.subprocess.Popen
    monkeypatch.setattr(machine.subprocess, "Popen",
                        lambda *a, **k: started.append(a) or popen(*a, **k))

    def run(mode, n=8):
        cm = ac.build(Chain(n))
        with warnings.catch_warnings():  # (only the agreement of the runs counts here)
            warnings.simplefilter("ignore", ac.UnresolvedWarning)
            return ac.simulate(cm, 0.3, n_points=31, rtol=1e-9, atol=1e-9,
                               solver="dop853", solver_options={"compile": mode})

    def agree(a, b):  # (the same arithmetic: 1e-12 leaves room for a libm's sin and cos)
        return max(np.max(np.abs(a[f"joints[{k}].phi"] - b[f"joints[{k}].phi"]))
                   for k in (0, 7)) < 1e-12

    vm = run(False)
    assert not cache.exists() and started == []  # (nothing compiled, nothing kept)
    assert agree(run(True), vm) and len(started) == 1
    libs = list(cache.iterdir())
    assert len(libs) == 1 and libs[0].name.startswith("acausal_rhs_")
    assert agree(run("auto"), vm) and len(started) == 1  # loaded: no compiler this time
    monkeypatch.setattr(machine, "CACHE_MAX_FILES", 1)  # another function: the older goes
    run(True, n=9)
    (lib,) = cache.iterdir()
    assert lib != libs[0] and len(started) == 2
    # a damaged file (of a key not loaded in this process: one loaded is reused by its
    # path): not loaded, compiled again and replaced
    x = cs.SX.sym("x", 2)
    f = cs.Function("f", [x], [cs.sin(x)])
    damaged = cache / "acausal_rhs_0123456789abcdef0123456789abcdef.so"
    damaged.write_bytes(b"not a library")
    cc = c_compiler()
    assert machine.cached_library(f, cc, damaged.stem[12:]) is None
    job = machine.BackgroundCompile(f, cc, damaged.stem[12:])
    fc = job.result(wait=True)
    assert not job.cached and len(started) == 3 and damaged.stat().st_size > 1000
    # (the C library's sin against numpy's: they may differ in the last bit)
    np.testing.assert_allclose(np.asarray(fc([0.5, 1.0])).ravel(), np.sin([0.5, 1.0]),
                               rtol=4e-16)
    assert lib not in cache.iterdir()  # (the bound: one file)
    monkeypatch.setenv("ACAUSAL_COMPILE_CACHE", "off")
    run(True, n=10)
    assert list(cache.iterdir()) == [damaged] and len(started) == 4
    blocked = tmp_path / "a file"  # a cache that cannot be made: the run loads its own
    blocked.write_text("")
    monkeypatch.setenv("ACAUSAL_COMPILE_CACHE", str(blocked / "cache"))
    assert agree(run(True), vm) and len(started) == 5
    # a directory anyone may write to is not used: a library there under the expected
    # name is not loaded (compiled again), and nothing is kept there
    private, shared = tmp_path / "private", tmp_path / "shared"
    monkeypatch.setenv("ACAUSAL_COMPILE_CACHE", str(private))
    run(True, n=9)
    (made,) = private.iterdir()
    shared.mkdir()
    planted = shared / made.name
    made.replace(planted)
    shared.chmod(0o777)
    monkeypatch.setenv("ACAUSAL_COMPILE_CACHE", str(shared))
    assert len(started) == 6
    assert agree(run(True, n=9), run(False, n=9)) and len(started) == 7
    assert list(shared.iterdir()) == [planted]


class _Root(ac.Component):
    """``x' = -sqrt(x)`` from a negative start: the right-hand side is NaN there."""

    x = ac.Variable(start=-1.0)

    def equations(self):
        return [ac.der(self.x) == -cs.sqrt(self.x)]


class _Roots(ac.Model):
    def __init__(self, n: int):
        super().__init__()
        self.r = [_Root() for _ in range(n)]


@pytest.mark.parametrize("n", [40, 80])  # (all eigenvalues; the 8 largest by Arnoldi)
def test_choice_at_a_start_that_is_not_a_number_names_the_variable(n, capfd):
    """An explicit ODE undefined at its start: the choice finds no spectrum and leaves the
    model to IDAS, whose error names the derivative and its component (before, 40 states
    raised numpy's bare LinAlgError from the eigenvalues, and 80 let ARPACK print LAPACK's
    complaints on stderr)."""
    cm = ac.build(_Roots(n))
    choice = analyse(cm, cm.parameter_values(), np.linspace(0.0, 0.1, 3))
    assert choice.solver == "idas" and "not finite" in choice.reason, choice
    with pytest.raises(ac.SimulationError, match=r"der\(r\[0\]\.x\) = nan .*in r\[0\]"):
        ac.simulate(cm, 0.1, n_points=3)
    assert capfd.readouterr().err == ""


def test_choice_without_converged_eigenvalues_keeps_idas_and_says_why(monkeypatch):
    """No eigenvalue converged (the iteration's restarts spent) on a finite Jacobian: no
    verdict on stiffness, so IDAS, and the reason says which of the two it was."""
    from _models import MassSpringChain

    cm = ac.build(MassSpringChain(40))  # (80 states: the iterative path)
    from acausal.solvers import arnoldi

    monkeypatch.setattr(arnoldi, "largest_eigenvalues",
                        lambda matvec, n, **kw: (np.zeros(0, complex), False))
    got = analyse(cm, cm.parameter_values(), np.linspace(0.0, 1.0, 11))
    assert got.solver == "idas" and "did not converge" in got.reason, got
