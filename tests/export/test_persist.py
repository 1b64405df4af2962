"""Compiled models and results survive pickling and a fresh process (acausal.persist)."""

from __future__ import annotations

import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import acausal as ac
from acausal.persist import DetachedComponent, DetachedModelError

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples"))

import cartesian_pendulum  # noqa: E402
import dc_motor  # noqa: E402
from models import BouncingBall, Limited  # noqa: E402

CASES = {  # model, run settings (dynamic state selection, events, plain ODE)
    "dc_motor": (dc_motor.build_model, dict(t_end=0.3, params={"resistor.R": 0.5},
                                            start={"load.w": 1.0})),
    "pendulum": (cartesian_pendulum.build_model, dict(t_end=2.0)),
    "ball": (BouncingBall, dict(t_end=2.0, rtol=1e-9)),
}


def _run_child(code: str, cwd: Path) -> str:
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=cwd,
                         capture_output=True, text=True, timeout=300,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout


def test_model_and_result_saved_load_in_a_fresh_process_and_match(tmp_path):
    expected = {}
    for name, (make, kw) in CASES.items():
        cm = ac.build(make())
        res = ac.simulate(cm, **kw)
        # read name by name, as the child does: a table of all outputs takes another route
        # (one sparse product) whose values agree to rounding only
        ref = np.column_stack([res[n].reshape(len(res.t), -1) for n in res._names])
        cm.save(tmp_path / f"{name}.acm")
        res.save(tmp_path / f"{name}.res")
        expected[name] = res, ref
    # the child has neither examples/ nor tests/ on its path: the model classes cannot be
    # imported there, and need not be
    settings = {n: kw for n, (_, kw) in CASES.items()}
    _run_child(f"""
        import numpy as np
        import acausal as ac
        cases = {settings!r}
        for name, kw in cases.items():
            cm = ac.load("{tmp_path}/" + name + ".acm")
            res = ac.simulate(cm, **kw)
            old = ac.load("{tmp_path}/" + name + ".res")
            np.savez("{tmp_path}/" + name + ".npz", t=res.t, new=np.column_stack(
                [res[n].reshape(len(res.t), -1) for n in old._names]),
                old=np.column_stack([old[n].reshape(len(old.t), -1) for n in old._names]),
                events=np.array([e.t for e in res.events]), steps=res.stats.steps)
        """, tmp_path)
    for name, (res, ref) in expected.items():
        got = np.load(tmp_path / f"{name}.npz")
        np.testing.assert_array_equal(got["t"], res.t)
        np.testing.assert_array_equal(got["new"], ref)  # the loaded model: bit-identical
        np.testing.assert_array_equal(got["old"], ref)  # the loaded result: as saved
        np.testing.assert_array_equal(got["events"], [e.t for e in res.events])
        assert int(got["steps"]) == res.stats.steps


def test_pickled_model_keeps_reports_and_exports():
    cm = ac.build(dc_motor.build_model())
    cm2 = pickle.loads(pickle.dumps(cm))
    assert str(cm2.report) == str(cm.report)
    assert cm2.graph.listing() == cm.graph.listing()
    assert cm2.equations() == cm.equations()
    lin, lin2 = (ac.export.linearize(c, inputs=["source.V"], outputs=["load.w"])
                 for c in (cm, cm2))
    np.testing.assert_array_equal(lin.A, lin2.A)
    np.testing.assert_array_equal(lin.B, lin2.B)
    # a second round trip (a loaded model saved again) is the same model
    cm3 = pickle.loads(pickle.dumps(cm2))
    r2, r3 = ac.simulate(cm2, 0.1), ac.simulate(cm3, 0.1)
    np.testing.assert_array_equal(r2["load.w"], r3["load.w"])


def test_summary_of_a_loaded_model_lists_its_components_from_their_parameters():
    """summary() raised DetachedModelError on a loaded model (its component objects are
    not saved); the parameters name their components, classes, values and units."""
    cm = ac.build(dc_motor.build_model())
    built = cm.summary()
    loaded = pickle.loads(pickle.dumps(cm)).summary()
    assert "DCMotorDrive (loaded" in loaded
    assert "  shaft        rotational.SpringDamper     c = 200 N.m/rad, d = 0.2 N.m.s/rad" \
        in loaded
    assert "motor        rotational.Inertia          J = 5e-05 kg.m2" in loaded
    # the states and the compiled sizes as the built model's
    assert loaded.partition("States")[2] == built.partition("States")[2]


def test_a_loaded_mechanism_simulates_as_the_built_one():
    """A mechanism's structural parameters (the joints' axes, gravity) are bound into its
    equations; the check for values changed since the build read them from the component
    objects, which a loaded model does not have (KeyError '_params' on every loaded
    multibody model). The loaded one now simulates, bit for bit as the built one."""
    import mb_fourbar

    cm = ac.build(mb_fourbar.build_model())
    assert cm.state.flat.bound_values  # (the case: values bound at the build)
    cm2 = pickle.loads(pickle.dumps(cm))
    r, r2 = ac.simulate(cm, 0.2, n_points=21), ac.simulate(cm2, 0.2, n_points=21)
    for name in r._names[:40]:
        np.testing.assert_array_equal(r2[name], r[name])


def test_a_model_saved_in_format_2_still_loads():
    """Format 2 serialised every expression alone (37 s to save 10 000 masses); format 3
    serialises them together. A file of format 2 still loads, as the same model."""
    import io

    from acausal import persist
    from acausal.component import DATUM, Component, PortInstance

    class Format2(pickle.Pickler):  # (the writer of format 2)
        def persistent_id(self, obj):
            if obj is DATUM:
                return ("datum",)
            if isinstance(obj, Component):
                return ("component", *persist._describe_component(obj)[:4])
            if isinstance(obj, PortInstance):
                return ("port", self.persistent_id(obj.owner), obj.name, obj.domain)
            return None

    cm = ac.build(dc_motor.build_model())
    buf = io.BytesIO()
    with persist._CasadiContext(writing=True):
        Format2(buf, protocol=pickle.HIGHEST_PROTOCOL).dump(persist._model_payload(cm))
    old = persist._restore_model(2, buf.getvalue())
    new = pickle.loads(pickle.dumps(cm))
    r_old, r_new = ac.simulate(old, 0.1), ac.simulate(new, 0.1)
    np.testing.assert_array_equal(r_old["load.w"], r_new["load.w"])
    assert old.equations() == cm.equations()


def test_loaded_model_cannot_rebuild_and_says_so():
    cm = pickle.loads(pickle.dumps(ac.build(dc_motor.build_model())))
    assert isinstance(cm.model, DetachedComponent)
    assert cm.model.class_name.endswith("DCMotorDrive")
    motor = cm.graph.edges[0].component
    assert isinstance(motor, DetachedComponent) and motor.parameters()  # plain values kept
    with pytest.raises(DetachedModelError, match="build the model class again"):
        ac.build(cm.model)
    with pytest.raises(DetachedModelError, match="detached"):
        cm.model.walk()


def test_saved_file_is_checked(tmp_path):
    bad = tmp_path / "x.acm"
    bad.write_bytes(b"not a model")
    with pytest.raises(ac.AcausalError, match="not a file written by acausal"):
        ac.load(bad)
    good = tmp_path / "m.acm"
    ac.build(dc_motor.build_model()).save(good)
    cut = tmp_path / "cut.acm"  # (a copy interrupted: the header, then part of the body)
    cut.write_bytes(good.read_bytes()[:2000])
    with pytest.raises(ac.AcausalError, match=r"cut.acm is damaged or incomplete"):
        ac.load(cut)


def test_a_model_saved_in_another_format_is_refused_by_name():
    """A saved model records the layout's version; another version's file says to rebuild
    (its records would not load into this version's classes)."""
    from acausal import persist

    with pytest.raises(ac.AcausalError, match=r"saved in format 1; .* reads format "
                       rf"{persist.FORMAT_VERSION}: rebuild it"):
        persist._restore_model(1, b"")


def test_pickling_nests_in_a_users_casadi_context():
    import casadi as cs

    cm = ac.build(dc_motor.build_model())
    x = cs.SX.sym("x")
    with cs.global_pickle_context():
        blob = pickle.dumps((x ** 2, cm))
    with cs.global_unpickle_context():
        expr, cm2 = pickle.loads(blob)
    assert str(expr) == "sq(x)" and cm2.states == cm.states


# ----- models with functions, failed saves, damaged files, names on a loaded model -----
class _SineForce(ac.Model):
    """A mass pushed by f = sin(2 t), given as a lambda (a signal parameter)."""

    def __init__(self):
        from components import translational as tr

        super().__init__()
        self.mass = tr.Mass(m=1.0, s=0.0, v=0.0)
        self.force = tr.Force(f=lambda t: np.sin(2 * t))
        self.connect(self.force.flange, self.mass.flange_a)


def test_a_model_with_a_lambda_signal_saves_loads_and_simulates(tmp_path):
    """The lambda could not be pickled (AttributeError: Can't pickle local object) and the
    save left a 14-byte header. Its values are in the compiled expressions: the saved
    model does without it, and says so if the stand-in is called."""
    cm = ac.build(_SineForce())
    path = cm.save(tmp_path / "sig.acm")
    cm2 = ac.load(path)
    assert repr(cm2).startswith("<CompiledModel _SineForce: ")
    res = ac.simulate(cm2, 2.0, n_points=5, rtol=1e-10, atol=1e-12)
    # m v' = sin(2 t), v(0) = 0: v(t) = (1 - cos 2t) / 2; 1e-8: the integration at rtol 1e-10
    assert abs(res.final("mass.v") - (1 - np.cos(4.0)) / 2) < 1e-8
    np.testing.assert_array_equal(res["mass.v"], ac.simulate(cm, 2.0, n_points=5, rtol=1e-10,
                                                             atol=1e-12)["mass.v"])
    stand_in = next(v for _, n, v in cm2.state.flat.bound_values if n == "f")
    with pytest.raises(DetachedModelError, match="the function given for force.f was not saved"):
        stand_in(0.0)
    with pytest.raises(ac.ArgumentError, match="'force.f' is given as a function of time"):
        ac.simulate(cm2, 1.0, params={"force.f": 1.0})
    assert callable(cm.model.force.f)  # (the built model keeps its function)


def test_a_failed_save_leaves_the_earlier_file_and_names_the_value(tmp_path):
    """A value that cannot be pickled (a lock held by a structural parameter) is an error
    naming the parameter; the save is atomic: the file written before is intact."""
    import threading

    from acausal import Parameter, Variable, der

    class Holder(ac.Component):
        k = Parameter(2.0, unit="1/s")
        lock = Parameter(None, structural=True)
        x = Variable(start=1.0, fixed=True)

        def equations(self):
            return [der(self.x) == -self.k * self.x]

    class Top(ac.Model):
        def __init__(self):
            super().__init__()
            self.h = Holder(lock=threading.Lock())

    path = tmp_path / "m.acm"
    good = ac.build(dc_motor.build_model()).save(path).read_bytes()
    with pytest.raises(ac.AcausalError, match=r"the compiled model of Top cannot be saved .*: "
                       r"the value of parameter 'h.lock' \(lock\) cannot be pickled"):
        ac.build(Top()).save(path)
    assert path.read_bytes() == good
    assert [p.name for p in tmp_path.iterdir()] == ["m.acm"]  # (no temporary file left)
    sub = tmp_path / "new" / "folder" / "m.acm"  # missing folders are made, as fmu() does
    ac.build(dc_motor.build_model()).save(sub)
    assert ac.load(sub).dae.x_names


def test_a_damaged_file_is_named_before_casadi_reads_it(tmp_path):
    """Flipped bytes gave CasADi's vector::_M_range_check or 'Notify the CasADi
    developers'; the digest in the header finds the damage first. A file written before
    the digest (the pickle right after the magic line) still loads, and its damage is the
    same error."""
    from acausal import persist

    cm = ac.build(dc_motor.build_model())
    path = cm.save(tmp_path / "m.acm")
    data = bytearray(path.read_bytes())
    for i in range(len(data) // 3, len(data) // 3 + 50):
        data[i] ^= 0x5A
    bad = tmp_path / "bad.acm"
    bad.write_bytes(bytes(data))
    with pytest.raises(ac.AcausalError, match=r"bad.acm is damaged or incomplete \(its "
                       "content does not match the checksum"):
        ac.load(bad)
    body = pickle.dumps(cm, protocol=pickle.HIGHEST_PROTOCOL)
    old = tmp_path / "old.acm"
    old.write_bytes(persist._MAGIC + body)
    r_old = ac.simulate(ac.load(old), 0.1)
    np.testing.assert_array_equal(r_old["load.w"], ac.simulate(cm, 0.1)["load.w"])
    flipped = bytearray(body)
    for i in range(len(flipped) // 3, len(flipped) // 3 + 50):
        flipped[i] ^= 0x5A
    old.write_bytes(persist._MAGIC + bytes(flipped))
    with pytest.raises(ac.AcausalError, match=r"old.acm is damaged or incomplete \("):
        ac.load(old)
    with pytest.raises(ac.AcausalError, match=r"cannot read .*nothing.acm"):
        ac.load(tmp_path / "nothing.acm")


def test_a_loaded_model_answers_a_wrong_parameter_name_with_suggestions(tmp_path):
    """The check of params= walked the model tree for structural and signal parameters,
    which a loaded model does not have: a typo was DetachedModelError (.walk)."""
    cm = ac.load(ac.build(dc_motor.build_model()).save(tmp_path / "m.acm"))
    with pytest.raises(ac.ArgumentError, match=r"unknown parameter 'resistor.RR'; did you mean "
                       "'resistor.R'"):
        ac.simulate(cm, 0.1, params={"resistor.RR": 0.5})
    assert repr(cm).startswith("<CompiledModel DCMotorDrive: ")


# ----- the parameter checks of a loaded model's runs ------------------------------------------


class _Stopped(ac.Model):
    def __init__(self):
        super().__init__()
        from components import translational as tr

        self.mass = tr.MassWithStop(s=0.0, v=0.0)
        self.f = tr.Force(f=1.0)
        self.connect(self.f.flange, self.mass.flange_a)


def _messages(cm, run):
    """The error (or None) of ``run`` on the live model and on it loaded from bytes."""
    out = []
    for model in (cm, pickle.loads(pickle.dumps(cm))):
        try:
            run(model)
            out.append(None)
        except ac.ArgumentError as exc:
            out.append(str(exc))
    return out


def test_a_loaded_models_runs_check_parameters_together_as_the_live_ones():
    """uMin above uMax on a loaded model ran silently with y = uMax (the detached
    components had no check_parameters): the loaded model refuses it as the live one does,
    and says a parameter that follows others is one (it said 'unknown parameter')."""
    given = ac.build(Limited(uMax=1.0, uMin=-1.0))
    live, loaded = _messages(given, lambda m: ac.simulate(m, 0.1, params={"lim.uMin": 3.0}))
    assert live is not None and "uMin = 3.0 is above uMax = 1.0" in live
    assert loaded == live
    ok = _messages(given, lambda m: ac.simulate(m, 0.1, params={"lim.uMin": 0.5}))
    assert ok == [None, None]
    following = ac.build(Limited(uMax=1.0))
    live, loaded = _messages(following,
                             lambda m: ac.simulate(m, 0.1, params={"lim.uMin": 3.0}))
    assert live is not None and "'lim.uMin' was not given, so it is calculated" in live
    assert loaded == live


def test_a_check_that_reads_the_component_warns_on_a_loaded_model():
    """MassWithStop's check reads the instance's start position, which a loaded model
    does not have: its own order check still runs, and the rest is said to be unchecked
    rather than silently skipped."""
    cm = ac.build(_Stopped())
    live, loaded = _messages(cm, lambda m: ac.simulate(m, 0.1, params={"mass.s_min": 2.0}))
    assert live is not None and "s_min = 2 m is not below the upper stop" in live
    assert loaded == live
    with pytest.raises(ac.ArgumentError, match="start position s = 0 m is outside"):
        ac.simulate(cm, 0.1, params={"mass.s_min": 0.5})
    with pytest.warns(ac.ModelWarning, match=r"MassWithStop 'mass': its parameters could not "
                                             r"be checked together.*build the model class"):
        ac.simulate(pickle.loads(pickle.dumps(cm)), 0.1, params={"mass.s_min": 0.5})


def test_a_check_whose_class_is_not_found_warns_on_a_loaded_model():
    """A class defined inside a function cannot be found by name: its check is said not
    to have run (a user's module is looked up only if imported: importing a script could
    run it)."""

    class Ordered(ac.Component):
        lo = ac.Parameter(0.0)
        hi = ac.Parameter(1.0)
        x = ac.Variable(start=0.0)

        def check_parameters(self, p):
            return None if p.lo <= p.hi else f"lo = {p.lo} is above hi = {p.hi}"

        def equations(self):
            return [ac.der(self.x) == self.hi - self.lo]

    cm = ac.build(Ordered())
    with pytest.raises(ac.ArgumentError, match="lo = 2.0 is above hi = 1.0"):
        ac.simulate(cm, 0.1, params={"lo": 2.0})
    loaded = pickle.loads(pickle.dumps(cm))
    with pytest.warns(ac.ModelWarning, match=r"Ordered: its parameters could not be checked "
                                             r"together.*\{'lo': 2.0\}.*loaded without its "
                                             r"class"):
        ac.simulate(loaded, 0.1, params={"lo": 2.0})
