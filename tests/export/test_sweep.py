"""Parameter sweeps (acausal.sweep): grids and samples, on Dask or in a loop; failed runs
are rows with their error."""

from __future__ import annotations

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
