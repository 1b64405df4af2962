"""FMI 2.0 Model Exchange export, validated with an independent importer (fmpy).

Each FMU is checked by ``fmpy.validate.validate_fmu`` (schema, variable names, start values,
causality/variability/initial combinations, units, model structure) and then simulated by
fmpy with SUNDIALS CVODE -- another integrator, with the algebraic variables solved by the
FMU's own generated Newton code -- and compared with :func:`acausal.simulate` (IDAS on the
DAE). The norm of every comparison: for each output, ``max_t |y_fmu - y_ac|`` divided by
``max_t |y_ac|``, which must stay below 1e-6.

Without a C compiler or without fmpy (``pip install acausal[fmu]``) the tests skip.
"""

from __future__ import annotations

import sys
import warnings
import zipfile
from pathlib import Path

import casadi as cs
import numpy as np
import pytest
from models import RC, pendulum

import acausal as ac
from acausal.codegen import CompilerNotFoundError, find_compiler
from acausal.fmi import FMUExportError, export, fmu

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
if str(EXAMPLES) not in sys.path:
    sys.path.insert(0, str(EXAMPLES))

try:
    find_compiler()
    HAVE_CC = True
except CompilerNotFoundError:
    HAVE_CC = False
needs_cc = pytest.mark.skipif(not HAVE_CC, reason="no C compiler (cc, gcc or clang) found")

# both integrators at rtol 1e-10 (atol 1e-12 for IDAS, rtol x nominal 1 for CVODE): each
# is accurate to ~1e-9 of the signal's scale, so 1e-6 leaves a margin of 1000 for the
# difference of two independent integrations
REL = 1e-6
RTOL = 1e-10
ZERO = 1e-9  # a signal below this everywhere is zero up to the integrators' tolerances
N = 1000  # output points (fmpy samples at the same instants as ac.simulate)


def fmpy_or_skip():
    return pytest.importorskip("fmpy", reason="FMU validation needs fmpy "
                                              "(pip install acausal[fmu])")


def validate(path):
    """fmpy's validation (``fmpy.validation``; older releases call it ``fmpy.validate``)."""
    try:
        from fmpy.validation import validate_fmu
    except ImportError:  # pragma: no cover - older fmpy
        from fmpy.validate import validate_fmu
    return validate_fmu(str(path))


def simulate_both(cm, path, t_end, start_values=None, params=None):
    """The FMU's outputs by fmpy/CVODE and the model's by ac.simulate, on one grid."""
    fmpy = fmpy_or_skip()
    info = export(cm, path)
    problems = validate(info.path)
    assert problems == [], problems
    names = [v for v in info.variables if v.causality == "output"]
    r = fmpy.simulate_fmu(str(info.path), stop_time=t_end, solver="CVode",
                          relative_tolerance=RTOL, output_interval=t_end / N,
                          output=[v.name for v in names], start_values=start_values or {})
    res = ac.simulate(cm, t_end, rtol=RTOL, atol=1e-12, n_points=N + 1, params=params)
    assert np.allclose(r["time"], res.t, rtol=0, atol=1e-12 * t_end)
    return info, r, res, names


def worst_difference(r, res, outputs, zero=ZERO):
    """Largest ``max_t |fmu - ac| / max_t |ac|`` over the outputs, and where it occurs;
    a signal below ``zero`` everywhere must agree to ``zero`` absolutely."""
    worst, where = 0.0, ""
    for v in outputs:
        name = v.name
        ref = res[v.path] if v.element is None else res[v.path][:, v.element]
        scale = np.max(np.abs(ref))
        diff = np.max(np.abs(r[name] - ref))
        if scale < zero:
            # zero in exact arithmetic (a grounded pin; a shaft's twist rate in steady
            # state): both integrators leave round-off and tolerance-level noise there
            assert diff < zero, name
            continue
        if diff / scale > worst:
            worst, where = diff / scale, name
    return worst, where


@needs_cc
def test_dc_motor_fmu_matches_simulate(tmp_path):
    import dc_motor

    cm = ac.build(dc_motor.build_model())
    info, r, res, names = simulate_both(cm, tmp_path / "dc_motor.fmu", dc_motor.T_END)
    assert len(names) > 50  # every output of the model, by dotted path
    worst, where = worst_difference(r, res, names)
    assert worst < REL, (worst, where)
    # the FMU reaches the analytic steady state as the library does (15 time constants)
    ref = dc_motor.analytic_steady_state()
    assert r["motor.w"][-1] == pytest.approx(ref["w_motor"], rel=1e-6)
    assert info.timings["compile"] < 30.0


@needs_cc
def test_rc_fmu_matches_simulate(tmp_path):
    """The README's circuit."""
    cm = ac.build(RC(R=1e3, C=1e-3, V=10.0))
    _, r, res, names = simulate_both(cm, tmp_path / "rc.fmu", 5.0)
    worst, where = worst_difference(r, res, names)
    assert worst < REL, (worst, where)
    # and the closed form, V (1 - exp(-t/RC)): both integrators at rtol 1e-10
    assert np.max(np.abs(r["capacitor.v"] - 10.0 * (1 - np.exp(-r["time"])))) < 1e-7


@needs_cc
def test_index_reduced_pendulum_fmu_solves_algebraic_variables(tmp_path):
    """Cartesian pendulum (index 3) released at 30 degrees: states x, vx; y, the rod force
    and the dummy derivatives are algebraic variables solved by Newton inside the FMU."""
    cm = ac.build(pendulum(30.0))
    assert cm.dae.x_names == ["x", "vx"] and "y" in cm.dae.z_names and "F" in cm.dae.z_names
    with pytest.warns(ac.AcausalWarning, match="dynamic state selection"):
        info, r, res, names = simulate_both(cm, tmp_path / "pendulum.fmu", 3.0)
    assert res.stats.reselections == 0  # the library kept the FMU's state choice too
    worst, where = worst_difference(r, res, names)
    assert worst < REL, (worst, where)
    # the constraint holds to the Newton tolerance inside the FMU
    assert np.max(np.abs(r["x"] ** 2 + r["y"] ** 2 - 1.0)) < 1e-12


@needs_cc
def test_multibody_fmu_matches_simulate(tmp_path):
    """A DC motor driving a two-link arm: 5 states, algebraic variables (joint torques
    and accelerations) solved inside the FMU; vectors flattened as name[k]."""
    import mb_motor_arm

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ac.RedundantConstraintWarning)
        cm = ac.build(mb_motor_arm.build_model())
    assert cm.dae.z_names  # the FMU has algebraic variables to solve
    _, r, res, names = simulate_both(cm, tmp_path / "arm.fmu", mb_motor_arm.T_END)
    assert {"body2.r_0[0]", "body2.Q[3]"} <= {v.name for v in names}
    worst, where = worst_difference(r, res, names)
    assert worst < REL, (worst, where)


@needs_cc
def test_multibody_fmu_reinitializes_calculated_states(tmp_path):
    """The motor angle emf.phi is no fixed start: it follows from the fixed shoulder angle
    through the gear. A changed gear ratio makes the FMU re-solve the whole initial
    system, as acausal.initialize does."""
    import mb_motor_arm

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ac.RedundantConstraintWarning)
        cm = ac.build(mb_motor_arm.build_model())
    ratio = 1.3 * float(cm.dae.p_values[cm.dae.p_names.index("gear.ratio")])
    info, r, res, names = simulate_both(cm, tmp_path / "arm.fmu", mb_motor_arm.T_END,
                                        start_values={"gear.ratio": ratio},
                                        params={"gear.ratio": ratio})
    assert "emf.phi" in info.calculated_states and info.reinitializes_states
    # the same equations solved by Newton in C and in Python: agreement to round-off
    assert r["emf.phi"][0] == pytest.approx(res["emf.phi"][0], rel=1e-12)
    worst, where = worst_difference(r, res, names)
    assert worst < REL, (worst, where)


@needs_cc
def test_parameters_and_start_values_set_by_the_importer(tmp_path):
    """A changed rod length re-solves y inside the FMU; changed starts of the exact states
    are used as given."""
    cm = ac.build(pendulum(30.0))
    with pytest.warns(ac.AcausalWarning):
        _, r, res, names = simulate_both(cm, tmp_path / "p.fmu", 2.0,
                                         start_values={"L": 1.3}, params={"L": 1.3})
    assert r["y"][0] == pytest.approx(-np.sqrt(1.3**2 - 0.5**2), rel=1e-14)
    worst, where = worst_difference(r, res, names)
    assert worst < REL, (worst, where)

    fmpy = fmpy_or_skip()
    cm_rc = ac.build(RC(R=1e3, C=1e-3, V=10.0))
    path = fmu(cm_rc, tmp_path / "rc")
    assert path.name == "rc.fmu"
    r = fmpy.simulate_fmu(str(path), stop_time=1.0, solver="CVode", relative_tolerance=RTOL,
                          output_interval=1e-3, output=["capacitor.v"],
                          start_values={"resistor.R": 500.0, "capacitor.v": 2.0})
    exact = 10.0 - 8.0 * np.exp(-r["time"] / 0.5)  # from 2 V towards 10 V, RC = 0.5 s
    assert np.max(np.abs(r["capacitor.v"] - exact)) < 1e-7  # CVODE at rtol 1e-10


@needs_cc
def test_model_description(tmp_path):
    fmpy = fmpy_or_skip()
    import dc_motor

    cm = ac.build(dc_motor.build_model())
    path = fmu(cm, tmp_path, outputs=["load.w", "shaft.tau", "inductor.i"], name="DC motor")
    assert path.name == "DC_motor.fmu"
    md = fmpy.read_model_description(str(path))
    assert md.fmiVersion == "2.0" and md.modelName == "DC motor"
    assert md.modelExchange.modelIdentifier == "DC_motor" and md.coSimulation is None
    var = {v.name: v for v in md.modelVariables}
    # every parameter, with its value, unit and description
    assert [v.name for v in md.modelVariables if v.causality == "parameter"] == cm.dae.p_names
    assert float(var["resistor.R"].start) == dc_motor.R and var["resistor.R"].unit == "Ohm"
    assert "resistance" in var["resistor.R"].description
    assert {u.name for u in md.unitDefinitions} >= {"Ohm", "V", "A", "rad/s", "N.m"}
    volt = next(u for u in md.unitDefinitions if u.name == "V").baseUnit
    assert (volt.kg, volt.m, volt.s, volt.A) == (1, 2, -3, -1)
    # states: exact start values (fixed in the model); derivatives point to them
    states = [u.variable.derivative.name for u in md.derivatives]
    assert states == cm.dae.x_names
    assert var["inductor.i"].initial == "exact" and float(var["inductor.i"].start) == 0.0
    assert var["inductor.i"].causality == "output"  # a requested output that is a state
    assert var["motor.w"].causality == "local"
    # structure: di/dt = (V - R i - k w_motor) / L depends on i and the motor speed only
    der_i = next(u for u in md.derivatives if u.variable.name == "der(inductor.i)")
    assert sorted(v.name for v in der_i.dependencies) == ["inductor.i", "motor.w"]
    outputs = {u.variable.name: sorted(v.name for v in u.dependencies) for u in md.outputs}
    assert outputs["load.w"] == ["load.w"]
    assert outputs["shaft.tau"] == ["load.phi", "load.w", "motor.phi", "motor.w"]
    # the calculated outputs and derivatives; not the states (exact start values)
    initial = {u.variable.name for u in md.initialUnknowns}
    assert initial == {"shaft.tau"} | {f"der({n})" for n in cm.dae.x_names}
    with zipfile.ZipFile(path) as zf:
        files = set(zf.namelist())
    assert "modelDescription.xml" in files
    assert any(f.startswith("binaries/") and "DC_motor." in f for f in files)
    assert {"sources/DC_motor_fmi2.c", "sources/DC_motor_model.c"} <= files


@needs_cc
def test_initial_equations_give_calculated_states(tmp_path):
    """The steady-state motor is initialised by der(w) == 0 equations: its states are
    'calculated', and the FMU solves the initial equations again for the importer's
    parameters (here a doubled source voltage: a new steady state)."""
    import steady_state_motor

    cm = ac.build(steady_state_motor.build_model())
    V = 2 * float(cm.parameter_values()[cm.dae.p_names.index("source.V")])
    info, r, res, names = simulate_both(cm, tmp_path / "ss.fmu", steady_state_motor.T_END,
                                        start_values={"source.V": V},
                                        params={"source.V": V})
    assert "motor.w" in info.calculated_states and info.reinitializes_states
    # the run stays at the steady state, where the accelerations are an exact zero seen
    # through round-off: der(motor.w) = (k i - tau) / J turns 1e-13 N.m of round-off in
    # the torque balance into ~1e-9 rad/s2 (J = 5e-5 kg.m2); 1e-6 separates that from a
    # real transient
    worst, where = worst_difference(r, res, names, zero=1e-6)
    assert worst < REL, (worst, where)


@needs_cc
def test_newton_failure_is_reported(tmp_path, capsys):
    """A start value with no real solution (|x| > L) fails initialisation with a message
    naming the equation block, not with a crash."""
    fmpy = fmpy_or_skip()
    cm = ac.build(pendulum(30.0))
    with pytest.warns(ac.AcausalWarning):
        path = fmu(cm, tmp_path / "p.fmu")
    with pytest.raises(Exception, match="fmi2ExitInitializationMode"):
        fmpy.simulate_fmu(str(path), stop_time=1.0, start_values={"x": 1.5})
    out = capsys.readouterr().out
    assert "algebraic equations were not solved" in out and "initialisation failed" in out


def test_unknown_output_is_named():
    cm = ac.build(RC())
    with pytest.raises(FMUExportError, match=r"'capacitor\.vv' \(did you mean 'capacitor\.v'"):
        fmu(cm, "unused.fmu", outputs=["capacitor.vv"])


@pytest.mark.parametrize("name, ident", [("my model!", "my_model"), ("3phase", "m_3phase"),
                                         ("a__b", "a_b"), ("__", "model")])
def test_model_name_becomes_an_identifier_casadi_takes(name, ident):
    # (CasADi refuses a function name with "__" or a leading "_": "my model!" was its
    # RuntimeError "Function name is not valid" in the export)
    from acausal.fmi.fmi2 import _identifier

    assert _identifier(name) == ident
    x = cs.SX.sym("x")
    cs.Function(f"{ident}_ind", [x], [2 * x])  # (accepted)


def test_missing_compiler_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.delenv("CC", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))  # no compiler on this PATH
    with pytest.raises(CompilerNotFoundError, match="no C compiler found"):
        fmu(ac.build(RC()), tmp_path / "rc.fmu")
    assert not (tmp_path / "rc.fmu").exists()


@needs_cc
def test_sources_compile_warning_free_and_with_a_function_prefix(tmp_path):
    """The archive's C sources build elsewhere too: the wrapper is strict C99 without a
    warning, and with FMI2_FUNCTION_PREFIX (static linking of source FMUs) the functions
    carry the prefix."""
    import ctypes
    import subprocess

    from acausal.codegen import compile_shared, shared_library_suffix

    cm = ac.build(pendulum(30.0))  # algebraic variables: the Newton code is compiled in
    with pytest.warns(ac.AcausalWarning):
        path = fmu(cm, tmp_path / "p.fmu", name="Pend")
    with zipfile.ZipFile(path) as zf:
        zf.extractall(tmp_path / "x")
    src = tmp_path / "x" / "sources"
    obj = tmp_path / "wrapper.o"
    proc = subprocess.run([find_compiler(), "-c", "-fPIC", "-std=c99", "-Wall", "-Wextra",
                           "-pedantic", "-Werror", "-DFMI2_FUNCTION_PREFIX=Pend_", f"-I{src}",
                           str(src / "Pend_fmi2.c"), "-o", str(obj)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    # CasADi's generated code is plain C99 too (it has unused arguments, hence no -Wextra)
    lib = compile_shared([obj, src / "Pend_model.c"], tmp_path / f"p{shared_library_suffix()}",
                         flags=["-std=c99", "-Wall", "-Werror", f"-I{src}"])
    so = ctypes.CDLL(str(lib))
    assert hasattr(so, "Pend_fmi2Instantiate") and hasattr(so, "Pend_fmi2GetDerivatives")


@needs_cc
def test_edge_cases_no_states_no_outputs_later_start(tmp_path):
    """A model without states (index 3, everything a function of time), an FMU without
    outputs, and a start time other than the exported t = 0."""
    fmpy = fmpy_or_skip()
    import gear_coupled_inertias
    import prescribed_motion

    cm = ac.build(prescribed_motion.build_model())
    assert cm.dae.x_names == []
    _, r, res, names = simulate_both(cm, tmp_path / "pm.fmu", 1.0)
    worst, where = worst_difference(r, res, names)
    # every output is an explicit function of time, evaluated exactly by both
    assert worst < 1e-12, (worst, where)

    cm = ac.build(gear_coupled_inertias.build_model())
    path = fmu(cm, tmp_path / "gear.fmu", outputs=[])
    assert validate(path) == []
    md = fmpy.read_model_description(str(path))
    assert {v.causality for v in md.modelVariables} == {"parameter", "local"}
    # start at t = 1 s: the driving torque tau0 sin(Omega t) is inside the expressions
    r = fmpy.simulate_fmu(str(path), start_time=1.0, stop_time=3.0, solver="CVode",
                          relative_tolerance=RTOL, output_interval=2e-3, output=["j1.w"])
    res = ac.simulate(cm, 3.0, t_start=1.0, rtol=RTOL, atol=1e-12, n_points=1001)
    # both integrators at rtol 1e-10 (measured 2e-9)
    assert np.max(np.abs(r["j1.w"] - res["j1.w"])) < REL * np.max(np.abs(res["j1.w"]))


# ----------------------------------------------------------------------------------------
# Hybrid models: state events, when clauses, time events and sample clocks.
#
# fmpy's CVODE locates the sign changes of the FMU's event indicators (its root finding:
# to ~100 units of round-off in time), stops at the announced time events (nextEventTime)
# and calls fmi2NewDiscreteStates there; ac.simulate locates the same crossings with its
# own integrator and event loop (Illinois' method to ~1e-13 s). With record_events=True
# fmpy records every event instant twice (before and after the event), which is how the
# FMU's events are read off below.

def strict_compile(path, tmp_path, ident):
    """The wrapper of an FMU with events is strict C99 without a warning too."""
    import subprocess

    with zipfile.ZipFile(path) as zf:
        zf.extractall(tmp_path / ident)
    src = tmp_path / ident / "sources"
    proc = subprocess.run([find_compiler(), "-c", "-fPIC", "-std=c99", "-Wall", "-Wextra",
                           "-pedantic", "-Werror", f"-I{src}", str(src / f"{ident}_fmi2.c"),
                           "-o", str(tmp_path / f"{ident}.o")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def fmu_events(r, name):
    """The FMU's events from a run with ``record_events=True``: ``(t, before, after)`` of
    the output ``name`` at each instant fmpy recorded twice."""
    t = r["time"]
    k = np.flatnonzero(np.diff(t) == 0)
    return t[k], r[name][k], r[name][k + 1]


def on_grid(r, res, t_events, away=1e-9):
    """Indices into fmpy's regular output points and into ``res.t`` for the same instants,
    leaving out the points within ``away`` of an event (where the two runs may be on
    different sides of a jump)."""
    t_ev = np.asarray(t_events, dtype=float)
    keep = [j for j, tt in enumerate(r["time"])
            if not len(t_ev) or np.min(np.abs(t_ev - tt)) > away]
    idx = [int(np.argmin(np.abs(res.t - r["time"][j]))) for j in keep]
    assert np.max(np.abs(res.t[idx] - r["time"][keep])) < 1e-12
    return keep, idx


def impact_time_bound(exact, e, g=9.81, h0=1.0):
    """How far CVODE at rtol 1e-10 may place the impacts of the bouncing ball: fmpy gives
    it atol = rtol x nominal = 1e-10 m, and its global error is a few times its local
    tolerance (10 x allowed); a height error dh moves an impact at speed v_k by dh / v_k,
    and the later flights carry it: the bound is the sum of 10 atol / v_k."""
    v = np.sqrt(2 * g * h0) * e ** np.arange(len(exact))
    return float(np.sum(10 * RTOL / v))


@needs_cc
def test_bouncing_ball_fmu_impacts(tmp_path):
    """when h < 0: reinit(v, -e pre(v)) and n := pre(n) + 1. The FMU has one event
    indicator (h); its impacts against the closed form and against ac.simulate."""
    from models import BouncingBall, impacts

    fmpy = fmpy_or_skip()
    cm = ac.build(BouncingBall())
    info = export(cm, tmp_path / "ball.fmu")
    assert validate(info.path) == []
    md = fmpy.read_model_description(str(info.path))
    assert md.numberOfEventIndicators == 1
    assert info.event_indicators == ["h < 0 [BouncingBall]"]
    var = {v.name: v for v in md.modelVariables}
    # the discrete variable is an FMU variable; the relation's value is internal
    assert (var["n"].variability, var["n"].causality) == ("discrete", "output")
    assert not any(n.startswith("relation[") for n in var)
    strict_compile(info.path, tmp_path, "BouncingBall")

    t_end = 3.0
    r = fmpy.simulate_fmu(str(info.path), stop_time=t_end, solver="CVode",
                          relative_tolerance=RTOL, output_interval=t_end / N,
                          output=["h", "v", "n"], record_events=True)
    t_ev, n_before, n_after = fmu_events(r, "n")
    hits = t_ev[n_after == n_before + 1]  # the when clause ran there
    res = ac.simulate(cm, t_end, rtol=RTOL, atol=1e-12, n_points=N + 1)
    ref = np.array(impacts(res))
    # closed form: t_1 = sqrt(2 h0 / g), then flights of 2 e^k v_1 / g
    g, e, h0 = 9.81, 0.8, 1.0
    t1 = np.sqrt(2 * h0 / g)
    exact = t1 + np.concatenate([[0.0], np.cumsum(2 * e ** np.arange(1, 10) * g * t1 / g)])
    exact = exact[exact < t_end]
    assert len(hits) == len(ref) == len(exact) == 6
    assert r["n"][-1] == res["n"][-1] == 6.0
    bound = impact_time_bound(exact, e)
    assert np.max(np.abs(hits - exact)) < bound, hits - exact
    assert np.max(np.abs(hits - ref)) < bound, hits - ref
    # the states between the impacts: both integrators at rtol 1e-10, as for the
    # continuous models (1e-6 of the signal's scale)
    keep, idx = on_grid(r[np.concatenate([[True], np.diff(r["time"]) > 0])], res, exact,
                        away=1e-6)
    rr = r[np.concatenate([[True], np.diff(r["time"]) > 0])]
    for name in ("h", "v"):
        diff = np.max(np.abs(rr[name][keep] - res[name][idx]))
        assert diff < REL * np.max(np.abs(res[name])), (name, diff)


@needs_cc
def test_half_wave_rectifier_fmu_switchings(tmp_path):
    """The ideal diode's mode is the relation s < 0; its indicator is s, the diode's
    current while it conducts (v_src - v_C) / Ron, its voltage while it blocks. The
    capacitor voltage and the turn-on/turn-off instants against ac.simulate and the
    closed form of the periodic steady state."""
    import half_wave_rectifier as hw

    fmpy = fmpy_or_skip()
    cm = ac.build(hw.build_model())
    info = export(cm, tmp_path / "rectifier.fmu")
    assert validate(info.path) == []
    r = fmpy.simulate_fmu(str(info.path), stop_time=hw.T_END, solver="CVode",
                          relative_tolerance=RTOL, output_interval=hw.T_END / N,
                          output=["capacitor.v", "diode.s"], record_events=True)
    # after a switching s has the sign of the new mode; where the located crossing left s
    # exactly zero (the current is quantised: one unit of round-off of v_src - v_C is
    # 1.8e-15 V, 1.8e-10 A), no relation changes and the next step makes the switching
    t_ev, _, s_after = fmu_events(r, "diode.s")
    off, on = t_ev[s_after < 0], t_ev[s_after > 0]
    res = ac.simulate(cm, hw.T_END, rtol=RTOL, atol=1e-12, n_points=N + 1)
    ref_off, ref_on = hw.switchings(res)
    assert len(off) == len(ref_off) == 5 and len(on) == len(ref_on) == 4
    # turn-on: the indicator is the blocking diode's voltage v_src - v_C, rising at
    # ~1.8e3 V/s; the two runs' capacitor voltages differ by up to 9e-9 V after the decay
    # (CVODE's global error at rtol 1e-10, measured below), which moves the crossing by
    # 5e-12 s: 1e-10 s leaves a margin of 20
    assert np.max(np.abs(on - ref_on)) < 1e-10, on - ref_on
    # turn-off: the indicator is the current (v_src - v_C) / Ron, Ron = 1e-5 Ohm, which
    # magnifies the capacitor voltage's error 1e5 times; it falls at ~99 A/s, so CVODE's
    # atol of 1e-10 V on v_C (while conducting, v_C is pinned to the source by the fast
    # mode Ron C = 1e-9 s) moves the crossing by up to 1e-10 / (1e-5 * 99) = 1e-7 s
    assert np.max(np.abs(off - ref_off)) < 1e-7, off - ref_off
    # the periodic steady state (4th period) against the closed form of the perfect diode:
    # Ron C = 1e-9 s and the leakage Goff = 1e-9 S shift it by less than 1e-7 s
    ref = hw.closed_form()
    period = 1 / hw.F
    assert off[3] - 3 * period == pytest.approx(ref["t_off"], abs=2e-7)
    assert on[3] - 4 * period == pytest.approx(ref["t_on"], abs=2e-7)
    # the capacitor voltage on the regular grid: both integrators at rtol 1e-10
    rr = r[np.concatenate([[True], np.diff(r["time"]) > 0])]
    keep, idx = on_grid(rr, res, np.concatenate([off, on]), away=1e-6)
    diff = np.max(np.abs(rr["capacitor.v"][keep] - res["capacitor.v"][idx]))
    assert diff < REL * hw.V, diff


def signals_model(hold=True, pulse=True):
    """A step of 2 at 0.25 s into a first-order lag (T = 0.2 s), sampled every 0.1 s from
    0.1 s on by a zero-order hold; a pulse train (period 0.13 s, 40 %, from 0.03 s: floor
    of an affine function of time) into another lag (T = 0.1 s)."""
    from components import blocks as bl

    class Signals(ac.Model):
        def __init__(self):
            super().__init__()
            if hold:
                self.step = bl.Step(height=2.0, startTime=0.25)
                self.lag = bl.FirstOrder(k=1.0, T=0.2)
                self.zoh = bl.ZeroOrderHold(samplePeriod=0.1, startTime=0.1)
                self.connect(self.step.y, self.lag.u)
                self.connect(self.lag.y, self.zoh.u)
            if pulse:
                self.pulse = bl.Pulse(amplitude=1.0, width=40.0, period=0.13, startTime=0.03)
                self.lag2 = bl.FirstOrder(k=1.0, T=0.1)
                self.connect(self.pulse.y, self.lag2.u)

    return Signals()


def lag_closed_form(t):
    """The lag's output: 2 (1 - exp(-(t - 0.25) / 0.2)) from the step on."""
    return np.where(t >= 0.25, 2.0 * (1.0 - np.exp(-(t - 0.25) / 0.2)), 0.0)


def pulse_lag_closed_form(t):
    """The second lag's output: exponentials towards 1 in the pulses, towards 0 between."""
    edges = np.sort(np.concatenate([0.03 + 0.13 * np.arange(8), 0.082 + 0.13 * np.arange(8)]))
    out = np.empty_like(t)
    y0, t0, u = 0.0, 0.0, 0.0
    bounds = list(edges) + [np.inf]
    for k, t1 in enumerate(bounds):
        m = (t >= t0) & (t < t1)
        out[m] = u + (y0 - u) * np.exp(-(t[m] - t0) / 0.1)
        if np.isfinite(t1):
            y0, t0, u = u + (y0 - u) * np.exp(-(t1 - t0) / 0.1), t1, float(k % 2 == 0)
    return out


@needs_cc
def test_time_events_and_sample_clock_fmu(tmp_path):
    """A step (a relation of time), a pulse train (floor of time) and a sample clock are
    time events of the FMU (nextEventTime): the instants, the held values after each tick
    and the lags against their closed forms."""
    fmpy = fmpy_or_skip()
    cm = ac.build(signals_model())
    info = export(cm, tmp_path / "signals.fmu")
    assert validate(info.path) == []
    md = fmpy.read_model_description(str(info.path))
    assert md.numberOfEventIndicators == 0  # nothing for the importer to locate
    strict_compile(info.path, tmp_path, "Signals")
    t_end = 1.0
    # CVODE restarts at order 1 after each of the 26 events; its global error at rtol
    # 1e-10 is ~3e-9 here and falls with the tolerance (3e-10 at 1e-11, 3e-11 at 1e-12,
    # measured): the integration's error, not the events'. At 1e-12 the closed forms are
    # met to 1e-10.
    r = fmpy.simulate_fmu(str(info.path), stop_time=t_end, solver="CVode",
                          relative_tolerance=1e-12, output_interval=t_end / N,
                          output=["lag.y", "zoh.y", "lag2.y"], record_events=True)
    t_ev, _, zoh_after = fmu_events(r, "zoh.y")
    ticks = 0.1 * np.arange(1, 11)  # (fmpy runs the event at its stop time too)
    edges = np.concatenate([0.03 + 0.13 * np.arange(8), 0.082 + 0.13 * np.arange(8)])
    expected = np.sort(np.concatenate([ticks, edges, [0.25]]))
    # every instant announced as a time event, and nothing else: fmpy stops at
    # nextEventTime, which the FMU computes as the library does (start + k interval; the
    # root of the affine argument), so they agree to round-off
    np.testing.assert_allclose(t_ev, expected, rtol=0, atol=1e-14)
    # after each tick the hold has the lag's output at the tick (its closed form)
    held = zoh_after[np.min(np.abs(t_ev[:, None] - ticks[None, :]), axis=1) < 1e-14]
    np.testing.assert_allclose(held, lag_closed_form(ticks), rtol=0, atol=1e-10)
    # the lags on the regular grid
    rr = r[np.concatenate([[True], np.diff(r["time"]) > 0])]
    assert np.max(np.abs(rr["lag.y"] - lag_closed_form(rr["time"]))) < 1e-10
    assert np.max(np.abs(rr["lag2.y"] - pulse_lag_closed_form(rr["time"]))) < 1e-10


@needs_cc
@pytest.mark.parametrize("part", ["hold", "pulse", "both"])
def test_time_events_fmu_matches_simulate(tmp_path, part):
    """The same signals against ac.simulate, which restarts at the same instants; each part
    alone and both together (the pulse's first edge is two time events 4e-18 s apart,
    t >= startTime and the floor: one instant)."""
    fmpy = fmpy_or_skip()
    cm = ac.build(signals_model(hold=part != "pulse", pulse=part != "hold"))
    info = export(cm, tmp_path / f"{part}.fmu")
    assert validate(info.path) == []
    outputs = {"hold": ["lag.y", "zoh.y"], "pulse": ["lag2.y", "pulse.y"],
               "both": ["lag.y", "zoh.y", "lag2.y", "pulse.y"]}[part]
    t_end = 1.0
    r = fmpy.simulate_fmu(str(info.path), stop_time=t_end, solver="CVode",
                          relative_tolerance=RTOL, output_interval=t_end / N, output=outputs)
    res = ac.simulate(cm, t_end, rtol=RTOL, atol=1e-12, n_points=N + 1)
    assert res.status == "ok" and res.t[-1] == t_end
    # the grid points at an event are left out: fmpy records the value after the event,
    # ac.simulate both (1e-12 s apart); at the stop time, a tick of the clock, fmpy runs
    # the event and ac.simulate does not
    keep, idx = on_grid(r, res, [*res.stats.time_events, t_end])
    for name in outputs:
        diff = np.max(np.abs(r[name][keep] - res[name][idx]))
        # both integrators at rtol 1e-10; the held and pulse values are exact
        assert diff < REL * np.max(np.abs(res[name])), (name, diff)


@needs_cc
def test_a_clock_ticks_at_the_start_time_in_the_fmu(tmp_path):
    """sample(0, Ts) ticks at t = 0 (Modelica semantics, as ac.simulate): a hold of a
    constant 1 holds 1 from the start, not 0 until the first interval has passed."""
    from components import blocks as bl

    fmpy = fmpy_or_skip()

    class Hold(ac.Model):
        def __init__(self):
            super().__init__()
            self.one = bl.Constant(k=1.0)
            self.zoh = bl.ZeroOrderHold(samplePeriod=0.05, startTime=0.0)
            self.connect(self.one.y, self.zoh.u)

    info = export(ac.build(Hold()), tmp_path / "hold.fmu")
    r = fmpy.simulate_fmu(str(info.path), stop_time=0.12, solver="CVode",
                          output_interval=0.01, output=["zoh.y"])
    assert np.all(r["zoh.y"] == 1.0)  # held values are exact


@needs_cc
def test_sampled_pi_loop_fmu_against_the_exact_recursion(tmp_path):
    """A first-order plant under a sampled PI (bl.DiscretePI: x := pre(x) + Ts/T e, then
    y := k (x + e), actions in order): the plant output at the ticks obeys an exact
    recursion (u held between ticks)."""
    from components import blocks as bl

    fmpy = fmpy_or_skip()
    ts, kp, tp, kc, ti, ref = 0.1, 2.0, 0.3, 0.8, 0.4, 1.0

    class SampledLoop(ac.Model):
        def __init__(self):
            super().__init__()
            self.ref = bl.Constant(k=ref)
            self.error = bl.Feedback()
            self.pi = bl.DiscretePI(k=kc, T=ti, samplePeriod=ts, startTime=ts)
            self.plant = bl.FirstOrder(k=kp, T=tp)
            self.connect(self.ref.y, self.error.u1)
            self.connect(self.plant.y, self.error.u2)
            self.connect(self.error.y, self.pi.u)
            self.connect(self.pi.y, self.plant.u)

    a = np.exp(-ts / tp)
    y, x, exact = 0.0, 0.0, []  # the plant output just before the ticks at ts, 2 ts, ...
    for _ in range(20):
        exact.append(y)
        e = ref - y
        x += ts / ti * e
        y = a * y + (1 - a) * kp * kc * (x + e)
    info = export(ac.build(SampledLoop()), tmp_path / "loop.fmu")
    assert validate(info.path) == []
    md = fmpy.read_model_description(str(info.path))
    var = {v.name: v for v in md.modelVariables}
    assert var["pi.x"].variability == "discrete" and var["pi.y_held"].variability == "discrete"
    r = fmpy.simulate_fmu(str(info.path), stop_time=1.95, solver="CVode",
                          relative_tolerance=1e-12, output_interval=0.05,
                          output=["plant.y", "pi.x"], record_events=True)
    t_ev, y_before, _ = fmu_events(r, "plant.y")
    assert len(t_ev) == 19
    # the exponential between the ticks by CVODE at rtol 1e-12 (the integration's error,
    # ~1e-11 after 19 restarts)
    np.testing.assert_allclose(y_before, exact[:19], rtol=0, atol=1e-10)
    assert r["pi.x"][-1] == pytest.approx(x - ts / ti * (ref - exact[-1]), abs=1e-10)


@needs_cc
def test_hybrid_parameters_and_discrete_starts_set_by_the_importer(tmp_path):
    """A changed restitution and a changed start of the impact counter (a discrete
    variable, settable before initialisation), a moved step (its time event moves with
    it): against the closed form and ac.simulate with the same settings."""
    from models import BouncingBall

    fmpy = fmpy_or_skip()
    path = fmu(ac.build(BouncingBall()), tmp_path / "ball.fmu")
    # with e = 0.5 the impacts accumulate at 3 t_1 = 1.3546 s (Zeno): stop before
    r = fmpy.simulate_fmu(str(path), stop_time=1.3, solver="CVode", relative_tolerance=RTOL,
                          output_interval=1e-3, output=["n"], record_events=True,
                          start_values={"e": 0.5, "n": 10.0})
    t_ev, n_before, n_after = fmu_events(r, "n")
    hits = t_ev[n_after == n_before + 1]
    t1 = np.sqrt(2 / 9.81)
    exact = t1 + np.concatenate([[0.0], np.cumsum(2 * 0.5 ** np.arange(1, 20) * t1)])
    exact = exact[exact < 1.3]
    assert len(exact) == 5
    # as in test_bouncing_ball_fmu_impacts; the impacts are slower here (0.28 m/s at the
    # fifth), so each carries more of the height error
    np.testing.assert_allclose(hits, exact, rtol=0, atol=impact_time_bound(exact, 0.5))
    assert r["n"][-1] == 10.0 + len(exact)

    cm = ac.build(signals_model(pulse=False))
    path = fmu(cm, tmp_path / "hold.fmu")
    r = fmpy.simulate_fmu(str(path), stop_time=1.0, solver="CVode",
                          relative_tolerance=1e-12, output_interval=1e-3,
                          output=["lag.y"], start_values={"step.startTime": 0.42})
    moved = np.where(r["time"] >= 0.42, 2.0 * (1.0 - np.exp(-(r["time"] - 0.42) / 0.2)), 0.0)
    # CVODE at rtol 1e-12 (as in test_time_events_and_sample_clock_fmu)
    assert np.max(np.abs(r["lag.y"] - moved)) < 1e-10


def test_what_cannot_be_exported_is_named():
    """floor of a time function that is not affine cannot be scheduled as time events."""
    import casadi as cs

    class Chirp(ac.Model):
        x = ac.Variable(start=0.0, fixed=True, unit="1")
        tau = ac.Parameter(1.0, unit="s")

        def equations(self):
            return [ac.der(self.x) == cs.floor((self.time / self.tau) ** 2) / self.tau]

    with pytest.raises(FMUExportError, match=r"Chirp.*floor.*not affine in time"):
        fmu(ac.build(Chirp()), "unused.fmu")


@needs_cc
def test_zeno_behaviour_stops_the_importer(tmp_path, capsys):
    """Past its accumulation point a ball without a resting phase would fall through the
    floor (the when clause runs where h < 0 becomes true, not while it stays true); the
    FMU detects the accumulating events as ac.simulate does and asks the importer to stop
    (terminateSimulation), with the predicted accumulation time in the log."""
    from models import BouncingBall

    fmpy = fmpy_or_skip()
    cm = ac.build(BouncingBall())
    path = fmu(cm, tmp_path / "ball.fmu")
    r = fmpy.simulate_fmu(str(path), stop_time=5.0, solver="CVode", relative_tolerance=RTOL,
                          output_interval=5e-3, output=["h", "n"])
    out = capsys.readouterr().out
    assert "Zeno behaviour: the events of h < 0 [BouncingBall] accumulate" in out
    t_zeno = np.sqrt(2 / 9.81) * (1 + 2 * 0.8 / (1 - 0.8))
    assert r["time"][-1] < t_zeno and r["h"][-1] > -1e-9  # stopped, not fallen through
    with pytest.warns(ac.SolverWarning, match="Zeno"):
        res = ac.simulate(cm, 5.0, rtol=RTOL, atol=1e-12, n_points=N + 1)
    assert res.status == "stopped"
    # both stop at the same impact, the 31st: its instant carries the integration error
    # of the slow late impacts (down to 5e-3 m/s), as in test_bouncing_ball_fmu_impacts
    exact = np.sqrt(2 / 9.81) * (1 + np.concatenate([[0.0], np.cumsum(2 * 0.8 ** np.arange(
        1, 31))]))
    assert r["time"][-1] == pytest.approx(res.t[-1], abs=impact_time_bound(exact, 0.8))


@needs_cc
def test_a_mass_with_stop_rests_in_the_fmu(tmp_path, capsys):
    """The default MassWithStop (v_rest = 1 mm/s) dropped 1 m rests on its stop after its
    38th impact, in the FMU as in ac.simulate: the Zeno check waits for a clause that
    chooses its mode from the state (acausal.hybrid.choosing), in C as in Python. With
    v_rest = 0 it never rests, and both stop before the accumulation point."""
    from models import StopBall

    fmpy = fmpy_or_skip()
    path = fmu(ac.build(StopBall()), tmp_path / "stop.fmu")
    r = fmpy.simulate_fmu(str(path), stop_time=10.0, solver="CVode", relative_tolerance=RTOL,
                          output_interval=1e-2, output=["ball.s", "ball.v", "ball.mode"])
    assert "Zeno" not in capsys.readouterr().out
    assert r["time"][-1] == pytest.approx(10.0)
    assert r["ball.mode"][-1] == -1 and r["ball.v"][-1] == 0.0 and r["ball.s"].min() > -1e-9
    t_zeno = np.sqrt(2 / 9.81) * (1 + 2 * 0.8 / 0.2)
    r = fmpy.simulate_fmu(str(path), stop_time=10.0, solver="CVode", relative_tolerance=RTOL,
                          output_interval=1e-2, output=["ball.s"],
                          start_values={"ball.v_rest": 0.0})
    assert "check the rest threshold" in capsys.readouterr().out
    assert t_zeno - 1e-3 < r["time"][-1] < t_zeno and r["ball.s"].min() > -1e-9


@needs_cc
def test_initial_mode_follows_the_importers_parameters(tmp_path):
    """The rectifier's source started at -90 degrees by the importer: the diode starts
    blocking (the relation s < 0 is evaluated at the start again, in
    fmi2ExitInitializationMode) and first conducts where the source reaches the
    capacitor's 0 V, a quarter period later."""
    import half_wave_rectifier as hw

    fmpy = fmpy_or_skip()
    cm = ac.build(hw.build_model())
    path = fmu(cm, tmp_path / "rectifier.fmu")
    phase = -np.pi / 2
    r = fmpy.simulate_fmu(str(path), stop_time=0.03, solver="CVode", relative_tolerance=RTOL,
                          output_interval=3e-5, output=["capacitor.v", "diode.s"],
                          start_values={"source.phase": phase}, record_events=True)
    assert r["diode.s"][0] < 0  # blocking from the start
    t_ev, _, s_after = fmu_events(r, "diode.s")
    first_on = t_ev[s_after > 0][0]
    # the blocking diode's indicator is v_src - v_C, v_src = 10 sin(w t - pi/2): zero at a
    # quarter period, 5 ms, for v_C = 0; the leak Goff = 1e-9 S charges the capacitor to
    # about -3e-7 V meanwhile, which the source, rising at 3.1e3 V/s, reaches 1e-10 s
    # earlier
    assert first_on == pytest.approx(0.25 / hw.F, abs=2e-10)
    res = ac.simulate(cm, 0.03, rtol=RTOL, atol=1e-12, n_points=N + 1,
                      params={"source.phase": phase})
    _, on = hw.switchings(res)
    # the same crossing located by both (the capacitor voltages agree to ~1e-10 V here:
    # 3e-14 s at 3.1e3 V/s)
    assert first_on == pytest.approx(on[0], abs=1e-12)
    rr = r[np.concatenate([[True], np.diff(r["time"]) > 0])]
    keep, idx = on_grid(rr, res, [e.t for e in res.events], away=1e-6)
    diff = np.max(np.abs(rr["capacitor.v"][keep] - res["capacitor.v"][idx]))
    assert diff < REL * hw.V, diff  # both integrators at rtol 1e-10


@needs_cc
@pytest.mark.parametrize("F", [2.5, -2.5])
def test_friction_pushed_beyond_breakaway_from_the_start_slips_in_the_fmu(tmp_path, F):
    """The friction law's breakaway clauses run at initialisation where their condition
    holds (when(..., initial=True)): the FMU's initial event iteration does it too. A 1 kg
    block on tr.Friction (kinetic 1 N, breakaway 2 N) pushed by 2.5 N from t = 0 slides with
    a = 1.5 m/s2 (it stayed at rest)."""
    from components import translational as tr

    class PushedBlock(ac.Model):
        def __init__(self):
            super().__init__()
            self.fixed = tr.Fixed()
            self.fr = tr.Friction(f_coulomb=1.0, peak=2.0)
            self.mass = tr.Mass(m=1.0, s=0.0, v=0.0)
            self.push = tr.Force(f=F)
            self.connect(self.fixed.flange, self.fr.flange_a)
            self.connect(self.fr.flange_b, self.mass.flange_a)
            self.connect(self.push.flange, self.mass.flange_b)

    fmpy = fmpy_or_skip()
    info = export(ac.build(PushedBlock()), tmp_path / "pushed.fmu")
    assert validate(info.path) == []
    r = fmpy.simulate_fmu(str(info.path), stop_time=1.0, solver="CVode",
                          relative_tolerance=RTOL, output_interval=0.1,
                          output=["mass.v", "fr.mode"])
    a = F - np.sign(F) * 1.0
    # constant acceleration from the start: CVODE at rtol 1e-10 (the start slip within
    # v_small = 1e-9 m/s aside)
    assert r["mass.v"][-1] == pytest.approx(a, abs=1e-8)
    assert r["fr.mode"][0] == 3 * np.sign(F) and r["fr.mode"][-1] == np.sign(F)


# ----- the checks of the event iteration, as in acausal.hybrid -----------------------------

class _Drain(ac.Model):
    """x' = -1 from 1; when x < 0, x is set back to ``to`` and n counts."""

    x = ac.Variable(start=1.0, fixed=True)
    n = ac.Variable(start=0.0, unit="1", discrete=True)
    to = ac.Parameter(0.0)

    def equations(self):
        return [ac.der(self.x) == -1.0,
                ac.when(self.x < 0, ac.reinit(self.x, self.to),
                        ac.assign(self.n, ac.pre(self.n) + 1))]


class _Fall(ac.Model):
    """A ball dropped from 1 m; ``actions(self)`` gives the impact's when clauses."""

    h = ac.Variable(start=1.0, fixed=True, unit="m")
    v = ac.Variable(start=0.0, fixed=True, unit="m/s")
    n = ac.Variable(start=0.0, unit="1", discrete=True)

    def actions(self):
        raise NotImplementedError

    def equations(self):
        return [ac.der(self.h) == self.v, ac.der(self.v) == -9.81, *self.actions()]


def _fall(actions):
    return type("Ball", (_Fall,), {"actions": actions})()


@needs_cc
def test_a_reinit_onto_the_threshold_stops_the_fmu_as_simulate_does(tmp_path, capsys):
    """x reset to exactly 0 where x < 0 became true: the relation is read again after the
    reinit (x = 0 is on the threshold, not round-off), so the condition becomes true again
    at once, without end; the FMU stops there and says why, as ac.simulate does (it went
    on with the relation stuck true and x drifting to -1)."""
    fmpy = fmpy_or_skip()
    cm = ac.build(_Drain())
    path = fmu(cm, tmp_path / "drain.fmu")
    r = fmpy.simulate_fmu(str(path), stop_time=2.0, solver="CVode", relative_tolerance=RTOL,
                          output_interval=0.02, output=["x", "n"])
    out = capsys.readouterr().out
    assert "when x < 0 [_Drain] fires again and again" in out
    assert "exactly onto the threshold" in out
    # x = 1 - t reaches 0 at t = 1: the run stops there (CVODE locates the crossings to
    # some 1e-14 s; the ten repeats before the stop add 1e-13 s) and x never drifts
    assert r["time"][-1] == pytest.approx(1.0, abs=1e-9)
    assert np.min(r["x"]) > -1e-9
    with pytest.warns(ac.SolverWarning, match="exactly onto the threshold"):
        res = ac.simulate(cm, 2.0, n_points=5)
    assert res.status == "stopped" and res.t[-1] == pytest.approx(1.0, abs=1e-9)
    # reset clear of the threshold: every 0.25 s from t = 1 (x = 1.25 - 1.9 + 0.75 = 0.1)
    r = fmpy.simulate_fmu(str(path), stop_time=1.9, solver="CVode", relative_tolerance=RTOL,
                          output_interval=0.019, output=["x", "n"], start_values={"to": 0.25})
    assert r["n"][-1] == 4.0
    assert r["x"][-1] == pytest.approx(0.1, abs=1e-9)  # CVODE's event location, rtol 1e-10


def _event_refused(fmpy, path, output, capsys):
    """Run the FMU for 1 s, which must fail at an event (fmi2NewDiscreteStates refuses
    it); what the FMU logged."""
    with pytest.raises(Exception, match="fmi2NewDiscreteStates"):
        fmpy.simulate_fmu(str(path), stop_time=1.0, solver="CVode", relative_tolerance=RTOL,
                          output=output)
    return capsys.readouterr().out


@needs_cc
def test_two_when_clauses_setting_one_variable_differently_fail_in_the_fmu(tmp_path, capsys):
    fmpy = fmpy_or_skip()
    cm = ac.build(_fall(lambda self: [ac.when(self.h < 0, ac.assign(self.n, 1.0)),
                                      ac.when(self.h < 0, ac.assign(self.n, 2.0))]))
    out = _event_refused(fmpy, fmu(cm, tmp_path / "conflict.fmu"), ["h", "n"], capsys)
    # at the impact, t = sqrt(2 / g) = 0.4515 s (it silently took the last value, n = 2)
    assert ("at t = 0.451523641 s, when h < 0 [Ball] and when h < 0 [Ball] both fire and "
            "set n, to 1 and 2: a variable takes one value at an event") in out
    with pytest.raises(ac.SimulationError, match="both fire and set n, to 1 and 2"):
        ac.simulate(cm, 1.0)


@needs_cc
def test_a_reinit_to_nan_fails_in_the_fmu_naming_the_when_and_the_variable(tmp_path, capsys):
    fmpy = fmpy_or_skip()
    cm = ac.build(_fall(lambda self: [ac.when(self.h < 0, ac.reinit(self.v,
                                                                    ac.pre(self.v) * np.nan))]))
    out = _event_refused(fmpy, fmu(cm, tmp_path / "nan.fmu"), ["h", "v"], capsys)
    # (CVODE failed after the event with "corrector convergence test failed", unnamed)
    assert ("at t = 0.451523641 s, reinit(v, ...) of when h < 0 [Ball] gives v the value "
            "nan: the value of the action is not finite") in out
    with pytest.raises(ac.SimulationError, match=r"reinit\(v, \.\.\.\) of when h < 0 "
                                                 r"\[Ball\] gives v the value nan"):
        ac.simulate(cm, 1.0)


# ----------------------------------------------------------------------------------------
# What an importer may set, the units, the model's own inputs
# ----------------------------------------------------------------------------------------

@needs_cc
def test_declared_ranges_are_in_the_description_and_refused_as_simulate_refuses_them(
        tmp_path, capsys):
    """The declared ranges are the variables' min/max (an exclusive bound, C > 0, as its
    bound: FMI's are inclusive), and fmi2SetReal refuses what ac.simulate refuses (out of
    range, zero where excluded, NaN, inf), in its words, and keeps the value. (fmpy ran
    the RC circuit with C = -1e-3 F: the capacitor voltage ran away to -17 V in 1 s.)"""
    fmpy = fmpy_or_skip()
    from fmpy.fmi2 import FMU2Model
    from models import DCMotor, HeatedMass

    cm = ac.build(RC(R=1e3, C=1e-3, V=10.0))
    path = fmu(cm, tmp_path / "rc.fmu")
    assert validate(path) == []
    md = fmpy.read_model_description(str(path))
    var = {v.name: v for v in md.modelVariables}
    assert (var["capacitor.C"].min, var["capacitor.C"].max) == ("0.0", None)
    assert var["resistor.R"].min == "0.0" and var["source.V"].min is None
    heated = ac.build(HeatedMass())
    motor = ac.build(DCMotor())
    cases = [(cm, path, "params", "capacitor.C", -1e-3),
             (cm, path, "params", "capacitor.C", 0.0),
             (heated, fmu(heated, tmp_path / "heated.fmu"), "start", "capacity.T", -1.0),
             (motor, fmu(motor, tmp_path / "motor.fmu"), "params", "gear.ratio", 0.0)]
    for model, fmu_path, kind, name, value in cases:
        with pytest.raises(ac.AcausalError) as exc:
            ac.simulate(model, 1.0, **{kind: {name: value}})
        said = str(exc.value).removeprefix(f"{kind}[{name!r}]")  # " = -0.001 F is out ..."
        assert said.startswith(" = ")
        with pytest.raises(Exception, match="fmi2SetReal"):
            fmpy.simulate_fmu(str(fmu_path), stop_time=1.0, start_values={name: value})
        out = capsys.readouterr().out
        assert f"fmi2SetReal: {name}{said}" in out, (said, out)
    # the state's range, declared (Variable(min=0) of an absolute temperature)
    heated_md = fmpy.read_model_description(str(tmp_path / "heated.fmu"))
    assert next(v for v in heated_md.modelVariables if v.name == "capacity.T").min == "0.0"
    for value in (np.nan, np.inf):  # (ac.simulate: "must be finite, got nan")
        with pytest.raises(Exception, match="fmi2SetReal"):
            fmpy.simulate_fmu(str(path), stop_time=1.0, start_values={"resistor.R": value})
        assert (f"fmi2SetReal: resistor.R is {value}; it must be a finite number >= 0 Ohm "
                "(parameter 'R' of Resistor 'resistor'); it keeps its value 1000 Ohm"
                ) in capsys.readouterr().out

    # a refused call changes nothing, not even its values that were in range
    m = FMU2Model(guid=md.guid, modelIdentifier="RC", instanceName="rc",
                  unzipDirectory=fmpy.extract(str(path), unzipdir=tmp_path / "rc"))
    m.instantiate()
    vr = [var["resistor.R"].valueReference, var["capacitor.C"].valueReference]
    with pytest.raises(Exception, match="fmi2SetReal"):
        m.setReal(vr, [500.0, -1e-3])
    assert m.getReal(vr) == [1e3, 1e-3]
    m.setReal(vr, [500.0, 2e-3])
    assert m.getReal(vr) == [500.0, 2e-3]
    m.freeInstance()


@needs_cc
def test_every_unit_is_defined_in_base_units_and_every_known_unit_given(tmp_path):
    """Prefixed units, %, degC, rpm and units with parentheses are defined in SI base units
    (they were empty <Unit> elements), and every FMU variable has the unit the library
    gives its name (the graph's edge variables, source[p->n].v, had none)."""
    fmpy = fmpy_or_skip()

    class Odd(ac.Model):
        a = ac.Parameter(2.0, unit="mm")
        tau = ac.Parameter(1.0, unit="s")
        b = ac.Parameter(1.0, unit="kOhm")
        h = ac.Parameter(10.0, unit="W/(m2.K)")
        k = ac.Parameter(50.0, unit="%")
        T0 = ac.Parameter(20.0, unit="degC")
        w = ac.Parameter(3000.0, unit="rpm")
        x = ac.Variable(start=0.0, fixed=True, unit="mm")

        def equations(self):
            return [ac.der(self.x) == self.a / self.tau]

    path = fmu(ac.build(Odd()), tmp_path / "odd.fmu")
    assert validate(path) == []
    md = fmpy.read_model_description(str(path))
    units = {u.name: u.baseUnit for u in md.unitDefinitions}
    assert all(b is not None for b in units.values()), units
    exps = ("kg", "m", "s", "A", "K", "mol", "cd", "rad")

    def base(name):
        b = units[name]
        return {e: getattr(b, e) for e in exps if getattr(b, e)}, b.factor, b.offset

    # factors: the library's own (acausal.units.parse_unit), to the last bit
    assert base("mm") == ({"m": 1}, 1e-3, 0.0)
    assert base("mm/s") == ({"m": 1, "s": -1}, 1e-3, 0.0)  # der(x)
    assert base("kOhm") == ({"kg": 1, "m": 2, "s": -3, "A": -2}, 1e3, 0.0)
    assert base("W/(m2.K)") == ({"kg": 1, "s": -3, "K": -1}, 1.0, 0.0)
    assert base("%") == ({}, 0.01, 0.0)
    assert base("degC") == ({"K": 1}, 1.0, 273.15)
    assert base("rpm") == ({"rad": 1, "s": -1}, 2 * np.pi / 60, 0.0)

    cm = ac.build(RC())
    info = export(cm, tmp_path / "rc.fmu")
    md = fmpy.read_model_description(str(info.path))
    var = {v.name: v for v in md.modelVariables}
    assert var["source[p->n].v"].unit == "V" and var["ground[datum->p].i"].unit == "A"
    for v in info.variables:
        assert var[v.name].unit == (cm.unit(v.path) or None), v.name
    assert {u.name for u in md.unitDefinitions} == {"A", "F", "Ohm", "V", "V/s"}


def test_an_input_of_the_model_is_named_as_the_fmu_has_no_inputs(tmp_path):
    """The build named the component input the model's own input feeds (force.f) as not
    connected; it now names the model's input, says why and what to do (for simulate as
    for the export)."""
    from components import blocks
    from components import translational as tr

    class Plant(ac.Model):
        u = ac.RealInput("force command")
        y = ac.RealOutput("position")

        def __init__(self, source=None):
            super().__init__()
            self.force = tr.SignalForce()
            self.mass = tr.Mass(m=1.0, s=0.0, v=0.0)
            self.sensor = tr.SignalPositionSensor()
            if source is not None:  # what the message suggests
                self.source = source
                self.connect(self.source.y, self.u)
            self.connect(self.u, self.force.f)
            self.connect(self.force.flange, self.mass.flange_a, self.sensor.flange)
            self.connect(self.sensor.s, self.y)

    with pytest.raises(ac.ConnectionError_) as exc:
        fmu(Plant(), tmp_path / "plant.fmu")
    said = str(exc.value)
    assert said.startswith("signal input force.f is fed by the model's own input u, which "
                           "nothing drives")
    assert "an FMU has no inputs" in said and "self.connect(source.y, self.u)" in said
    assert "blocks.Constant" in said and "FMU importers can set" in said
    assert not (tmp_path / "plant.fmu").exists()
    if HAVE_CC:  # driven inside, it exports; a Constant's k is a parameter to set
        fmpy = fmpy_or_skip()
        path = fmu(Plant(blocks.Constant(k=2.0)), tmp_path / "plant.fmu")
        r = fmpy.simulate_fmu(str(path), stop_time=1.0, solver="CVode",
                              relative_tolerance=RTOL, output=["mass.s"],
                              start_values={"source.k": 4.0})
        # s = k t^2 / 2 (m = 1 kg): CVODE at rtol 1e-10
        assert r["mass.s"][-1] == pytest.approx(2.0, rel=1e-8)


@needs_cc
def test_blocks_on_one_clock_in_the_fmu(tmp_path):
    """As ac.simulate (tests/library/test_blocks.py): the actions of a tick level by level
    (the FMU evaluated them all with the values before the tick), and the tick at the
    start run once (the embedded start had it already run: the accumulator began at 1)."""
    from models import TS_CHAIN, Accumulator, HoldThen, chain_references

    fmpy = fmpy_or_skip()
    n = 6
    acc, delayed, pi = chain_references(n)
    for model, refs in ((Accumulator(), {"delay.y": acc}),
                        (HoldThen(), {"delay.y": delayed, "pi.y": pi})):
        path = fmu(ac.build(model), tmp_path / f"{type(model).__name__}.fmu")
        r = fmpy.simulate_fmu(str(path), stop_time=n * TS_CHAIN, output=list(refs),
                              output_interval=TS_CHAIN / 2)
        for name, ref in refs.items():
            # read half a period after each tick, where fmpy's grid has one point
            got = np.interp((np.arange(n) + 0.5) * TS_CHAIN, r["time"], r[name])
            np.testing.assert_allclose(got, ref, atol=1e-12)  # (sums of 0.1: round-off)
