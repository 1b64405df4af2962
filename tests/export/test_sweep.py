"""Parameter sweeps (acausal.sweep): grids and samples, on Dask or in a loop; failed runs
are rows with their error."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import acausal as ac

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
import dc_motor  # noqa: E402

GRID = {"resistor.R": [0.5, 0.7], "load.J": [0.0, 4e-3, 6e-3]}  # J = 0 is out of range


@pytest.fixture(scope="module")
def cm():
    return ac.build(dc_motor.build_model())


def peak_current(res):
    return float(res["inductor.i"].max())


def _check(sw, cm):
    assert sw.n_runs == 6 and sw.series.shape == (6, 31, 2)
    assert sw.outputs == ["load.w", "inductor.i"]
    np.testing.assert_array_equal(sw.parameters["resistor.R"], [0.5] * 3 + [0.7] * 3)
    np.testing.assert_array_equal(sw.parameters["load.J"], [0.0, 4e-3, 6e-3] * 2)
    assert sw.status == ["failed", "ok", "ok"] * 2
    # J = 0 is refused before integrating: the row names the parameter and has no series
    assert all("ArgumentError" in sw.error[k] and "load.J" in sw.error[k] for k in (0, 3))
    assert np.all(np.isnan(sw.series[[0, 3]]))
    for k in (1, 2, 4, 5):  # every successful run is the run simulate() makes
        res = ac.simulate(cm, 0.3, n_points=31, params={
            "resistor.R": sw.parameters["resistor.R"][k], "load.J": sw.parameters["load.J"][k]})
        np.testing.assert_array_equal(sw["load.w"][k], res["load.w"])
        assert sw.metrics["peak"][k] == peak_current(res)
        assert sw.finals["inductor.i"][k] == res.final("inductor.i")


def test_serial_grid_with_a_failing_run(cm):
    sw = ac.sweep(cm, GRID, 0.3, outputs=["load.w", "inductor.i"], n_points=31,
                  metrics={"peak": peak_current}, client="serial")
    _check(sw, cm)
    assert sw.backend == "serial"
    table = sw.table
    assert list(table.columns) == ["resistor.R", "load.J", "load.w(t_end)",
                                   "inductor.i(t_end)", "peak", "status", "error",
                                   "wall_time"]
    assert table["status"].tolist() == sw.status
    assert np.isnan(table["peak"][0]) and table["peak"][1] > 0


def test_sample_runs_zip_and_vector_outputs(cm):
    rng = np.random.default_rng(0)
    R = rng.uniform(0.5, 0.7, 4)
    sw = ac.sweep(cm, {"resistor.R": R, "load.J": np.full(4, 4e-3)}, 0.1, grid=False,
                  outputs=["load.w"], n_points=11, client="serial")
    np.testing.assert_array_equal(sw.parameters["resistor.R"], R)
    assert sw.status == ["ok"] * 4
    with pytest.raises(ac.AcausalError, match="same number of values"):
        ac.sweep(cm, {"resistor.R": [1, 2], "load.J": [1]}, 0.1, grid=False, client="serial")
    with pytest.raises(ac.AcausalError, match="did you mean"):
        ac.sweep(cm, {"resistor.R": [1]}, 0.1, outputs=["load.ww"], client="serial")
    with pytest.raises(ac.AcausalError, match="unknown parameter"):
        ac.sweep(cm, {"resistor.r": [1]}, 0.1, client="serial")
    # (no values made a sweep of no runs; text was numpy's "could not convert")
    with pytest.raises(ac.AcausalError, match=r"'resistor.R' needs a sequence of one or more"):
        ac.sweep(cm, {"resistor.R": []}, 0.1, client="serial")
    with pytest.raises(ac.AcausalError, match=r"the values of 'resistor.R': 'x'"):
        ac.sweep(cm, {"resistor.R": ["1 Ohm", "x"]}, 0.1, client="serial")
    with pytest.raises(ac.AcausalError, match=r"the values of 'resistor.R' must be numbers"):
        ac.sweep(cm, {"resistor.R": [[1.0, 2.0], 3.0]}, 0.1, client="serial")
    # values with a unit, as simulate(params=) takes them, in the parameter's own unit
    sw = ac.sweep(cm, {"resistor.R": ["500 mOhm", 0.6]}, 0.05, n_points=3, client="serial")
    np.testing.assert_array_equal(sw.parameters["resistor.R"], [0.5, 0.6])


def test_a_client_address_that_is_not_one_is_explained(cm):
    pytest.importorskip("distributed")
    # (it was the distributed package's "missing port number in address")
    with pytest.raises(ac.AcausalError, match=r"client='dask!': no Dask scheduler there .*"
                       r"'serial', a scheduler's address"):
        ac.sweep(cm, {"resistor.R": [1.0]}, 0.1, client="dask!")


def test_to_xarray(cm):
    xr = pytest.importorskip("xarray")
    sw = ac.sweep(cm, {"resistor.R": [0.5, 0.6]}, 0.1, outputs=["load.w", "inductor.i"],
                  n_points=11, client="serial")
    da = sw.to_xarray()
    assert isinstance(da, xr.DataArray) and da.dims == ("run", "time", "output")
    np.testing.assert_array_equal(da.sel(output="load.w").values, sw["load.w"])
    assert da.coords["resistor.R"].values.tolist() == [0.5, 0.6]


def test_without_dask_it_falls_back_to_a_loop_and_says_so(cm, monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)  # import fails
    with pytest.warns(ac.AcausalWarning, match="plain loop"):
        sw = ac.sweep(cm, {"resistor.R": [0.5]}, 0.1, n_points=5)
    assert sw.backend == "serial" and sw.status == ["ok"]
    with pytest.raises(ac.AcausalError, match="distributed package is not installed"):
        ac.sweep(cm, {"resistor.R": [0.5]}, 0.1, client="tcp://127.0.0.1:1")


def test_dask_local_cluster_matches_the_loop(cm):
    pytest.importorskip("distributed")
    calls = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # distributed's own notices (ports, memory)
        sw = ac.sweep(cm, GRID, 0.3, outputs=["load.w", "inductor.i"], n_points=31,
                      metrics={"peak": lambda r: float(r["inductor.i"].max())},  # pickled
                      n_workers=2, batch_size=2,
                      progress=lambda f, m: calls.append(f))
    assert sw.backend.startswith("dask")
    _check(sw, cm)
    assert calls[-1] == 1.0 and len(calls) >= 3 and calls == sorted(calls)


def test_a_client_whose_workers_run_in_this_process(cm):
    """A ``Client(processes=False)`` hands its workers the pickled model itself, not its
    pickle: every run failed, "simulate() needs a model ..., got <acausal.sweep._Pickled>"."""
    distributed = pytest.importorskip("distributed")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # distributed's own notices
        with distributed.Client(processes=False, n_workers=1, threads_per_worker=1,
                                dashboard_address=None) as client:
            sw = ac.sweep(cm, GRID, 0.3, outputs=["load.w", "inductor.i"], n_points=31,
                          metrics={"peak": peak_current}, client=client)
    _check(sw, cm)


def test_values_every_run_shares_are_argument_errors(cm):
    """A mistake in the values (as simulate(params=) says for the same values)."""
    for params, grid, what in [({"resistor.R": [1, 2], "load.J": [1e-3]}, False, "same number"),
                               ({"resistor.R": []}, True, "one or more values"),
                               ({"resistor.R": ["500 mH"]}, True, "not 'Ohm'"),
                               ({"resistor.R": ["abc"]}, True, "not a number")]:
        with pytest.raises(ac.ArgumentError, match=what):
            ac.sweep(cm, params, 0.1, grid=grid, client="serial")


def test_a_metric_named_as_a_column_is_refused(cm):
    """A metric is a column of the table: one named as a swept parameter, an output's final
    value or the status overwrote that column, silently."""
    for name in ("resistor.R", "load.w(t_end)", "status"):
        with pytest.raises(ac.ArgumentError, match=rf"metric '{re.escape(name)}'.*name the metric"):
            ac.sweep(cm, {"resistor.R": [0.5, 0.6]}, 0.3, outputs=["load.w"],
                     metrics={name: peak_current}, client="serial")


def test_a_mechanism_sweeps_on_dask_workers():
    """The workers receive the model pickled, its components detached. The check of
    parameters changed since the build read the mechanism's structural values (gravity,
    joint axes) from those components, which hold none: until it skipped detached
    components, every run of a mechanism on Dask failed (KeyError '_params'). The runs
    are the runs simulate() makes in this process, bit for bit."""
    pytest.importorskip("distributed")
    import mb_fourbar

    cm = ac.build(mb_fourbar.build_model())
    masses = [1.0, 1.5]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # distributed's own notices (ports, memory)
        sw = ac.sweep(cm, {"coupler_body.m": masses}, 0.2, outputs=["j2.phi"], n_points=11,
                      n_workers=1)
    assert sw.backend.startswith("dask") and sw.status == ["ok", "ok"], sw.error
    for k, m in enumerate(masses):
        res = ac.simulate(cm, 0.2, n_points=11, params={"coupler_body.m": m})
        np.testing.assert_array_equal(sw["j2.phi"][k], res["j2.phi"])


def test_arguments_every_run_shares_are_checked_once_before_the_runs(cm):
    """A mistake that applies to every run was N failed rows (or a sweep that could never
    succeed: the grid ignored t_start); it is one ArgumentError before any run."""
    one = {"resistor.R": [0.5]}
    cases = [
        (dict(rtoll=1e-6), r"unexpected keyword argument 'rtoll'; did you mean 'rtol'"),
        (dict(rtol=-1), r"rtol must be > 0 and < 1, got -1"),
        (dict(n_points=1), r"n_points must be at least 2"),
        (dict(t_eval=[0.0, 0.5, 2.0]), r"t_eval ends at 2, after t_end = 0.1"),
        (dict(t_eval=[0.0, 0.1], n_points=5), r"give the output grid one way"),
        (dict(solver="idass"), r"unknown solver 'idass'"),
        (dict(start={"load.ww": 1.0}), r"start values given for 'load.ww' \(did you mean"),
    ]
    for kwargs, message in cases:
        with pytest.raises(ac.ArgumentError, match=message):
            ac.sweep(cm, one, 0.1, client="serial", **kwargs)
    # the message is about t_end, not about a t_eval the user never gave
    with pytest.raises(ac.ArgumentError, match=r"^t_end \(-1\) must be after t_start \(0\)$"):
        ac.sweep(cm, one, -1.0, client="serial")
    with pytest.raises(ac.ArgumentError, match=r"params must be a dict"):
        ac.sweep(cm, [("resistor.R", [0.5])], 0.1, client="serial")  # (was unhashable)
    with pytest.raises(ac.ArgumentError, match=r"client must be None .* or a "
                       r"distributed.Client, got 42"):
        ac.sweep(cm, one, 0.1, client=42)  # (was an AttributeError in the sweep)


def test_t_start_starts_the_default_grid(cm):
    """The default grid began at 0, before t_start: every run failed."""
    sw = ac.sweep(cm, {"resistor.R": [0.5]}, 0.3, outputs=["load.w"], n_points=5,
                  t_start=0.1, client="serial")
    assert sw.status == ["ok"] and sw.t.tolist() == np.linspace(0.1, 0.3, 5).tolist()
    res = ac.simulate(cm, 0.3, t_start=0.1, n_points=5, params={"resistor.R": 0.5})
    np.testing.assert_array_equal(sw["load.w"][0], res["load.w"])


def test_outputs_one_string_and_parameters(cm):
    """outputs="load.w" was split into characters; a parameter is an output, as res[]
    reads it (its value in each run); an unknown name has suggestions."""
    sw = ac.sweep(cm, {"resistor.R": [0.5, 0.6]}, 0.05, outputs="load.w", n_points=3,
                  client="serial")
    assert sw.outputs == ["load.w"]
    sw = ac.sweep(cm, {"resistor.R": [0.5, 0.6]}, 0.05, outputs=["resistor.R"], n_points=3,
                  client="serial")
    assert sw["resistor.R"].tolist() == [[0.5] * 3, [0.6] * 3]
    with pytest.raises(ac.ArgumentError, match=r"'resistor.RR' is not a quantity of "
                       r"DCMotorDrive .*did you mean 'resistor.R'"):
        ac.sweep(cm, {"resistor.R": [0.5]}, 0.05, outputs=["resistor.RR"], client="serial")


def test_a_model_that_cannot_be_pickled_is_one_error_before_dask_starts():
    """A value Dask could not serialise was a TypeError and ~540 lines on stderr; it is
    one error naming the value, before a cluster is started. A lambda signal is no such
    value: it is compiled into the expressions, and such a model sweeps on Dask."""
    pytest.importorskip("distributed")
    import threading

    from acausal import Parameter, Variable, der
    from components import translational as tr

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
            self.mass = tr.Mass(m=1.0, s=0.0, v=0.0)
            self.force = tr.Force(f=lambda t: np.sin(2 * t))
            self.connect(self.force.flange, self.mass.flange_a)

    cm = ac.build(Top())
    with pytest.raises(ac.AcausalError, match=r"cannot be saved or sent to another process: "
                       r"the value of parameter 'h.lock' .*client='serial'"):
        ac.sweep(cm, {"h.k": [1.0, 2.0]}, 1.0, outputs=["h.x"])
    sw = ac.sweep(cm, {"h.k": [1.0, 2.0]}, 1.0, outputs=["h.x"], n_points=3, client="serial")
    assert sw.status == ["ok", "ok"]

    class Sine(ac.Model):
        def __init__(self):
            super().__init__()
            self.mass = tr.Mass(m=1.0, s=0.0, v=0.0)
            self.force = tr.Force(f=lambda t: np.sin(2 * t))
            self.connect(self.force.flange, self.mass.flange_a)

    sine = ac.build(Sine())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # distributed's own notices (ports, memory)
        sw = ac.sweep(sine, {"mass.m": [1.0, 2.0]}, 1.0, outputs=["mass.v"], n_points=5,
                      n_workers=1)
    assert sw.backend.startswith("dask") and sw.status == ["ok", "ok"], sw.error
    for k, m in enumerate([1.0, 2.0]):  # the runs simulate() makes here, bit for bit
        res = ac.simulate(sine, 1.0, n_points=5, params={"mass.m": m})
        np.testing.assert_array_equal(sw["mass.v"][k], res["mass.v"])


def test_a_script_without_a_main_guard_is_told_to_add_one(tmp_path):
    """Dask's worker processes import the calling script again; without a main guard each
    called sweep() again and the run died with 'RuntimeError: Nanny failed to start' after
    three screens of tracebacks. The error now says what to do."""
    pytest.importorskip("distributed")
    root = Path(__file__).resolve().parents[2]
    (tmp_path / "unguarded.py").write_text(
        "import acausal as ac\n"
        "from components import electrical as el\n"
        "class RC(ac.Model):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.r = el.Resistor(R=1.0)\n"
        "        self.c = el.Capacitor(C=1.0, v=1.0)\n"
        "        self.g = el.Ground()\n"
        "        self.connect(self.r.p, self.c.p)\n"
        "        self.connect(self.r.n, self.c.n, self.g.p)\n"
        "ac.sweep(RC(), {'r.R': [1.0, 2.0]}, 1.0, n_workers=1)\n")
    out = subprocess.run([sys.executable, "unguarded.py"], cwd=tmp_path, capture_output=True,
                         text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(root)})
    assert out.returncode == 1
    assert out.stderr.rstrip().splitlines()[-1].startswith(
        "acausal.errors.AcausalError: sweep(): the local Dask cluster's worker processes "
        "could not start"), out.stderr[-2000:]
    assert 'if __name__ == "__main__":' in out.stderr and "client='serial'" in out.stderr
