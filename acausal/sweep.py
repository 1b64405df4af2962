"""Ensembles: parameter grids and Monte Carlo samples, on Dask or in a plain loop.

:func:`sweep` simulates one compiled model for many parameter sets::

    sw = ac.sweep(cm, {"resistor.R": [0.5, 0.6, 0.7], "load.J": [2e-3, 4e-3]}, 0.3,
                  outputs=["load.w", "inductor.i"])
    sw.table          # pandas: one row per run (parameters, final values, metrics, status)
    sw.series         # numpy (run, time, output); sw.to_xarray() with named coordinates

Where the runs go (``client=``):

* ``None`` (default): a local Dask cluster of worker **processes** (the ``distributed``
  package; ``n_workers`` of them, one thread each, since a simulation holds the GIL),
  started for the sweep and closed after it. Without Dask installed the sweep runs in
  a plain loop in this process and says so once (:class:`~acausal.errors.AcausalWarning`);
* a ``distributed.Client``, or the address of a running scheduler
  (``"tcp://host:8786"``): that cluster, left running;
* ``"serial"``: a plain loop in this process (no Dask).

The compiled model reaches the workers by pickling (:mod:`acausal.persist`): once per
worker, not per run. Runs go in batches (``batch_size``) to keep the scheduling overhead
small against simulations of a few milliseconds. A run that fails (an integration error,
an initialisation error, a crashed worker) is a row with ``status == "failed"`` and its
``error``; its time series holds what was computed before the failure and NaN after.
The sweep itself never fails because of a run.
"""

from __future__ import annotations

import itertools
import pickle
import sys
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import field
from typing import Any

import numpy as np

from .checks import _check_grid, check_simulate_arguments
from .compiler import CompiledModel, build
from .component import Component
from .errors import AcausalError, AcausalWarning, ArgumentError, SimulationError
from .names import name_list
from .records import record

__all__ = ["sweep", "SweepResult", "run_batch"]


@record
class SweepResult:
    """What :func:`sweep` returns.

    Attributes
    ----------
    parameters : dict of str to ndarray
        The parameter values, one entry per run.
    t : ndarray
        The common output grid [s].
    outputs : list of str
        Labels of the series (a vector quantity ``v`` gives ``v[0]``, ``v[1]``, ...).
    series : ndarray
        ``(run, time, output)``; NaN after a failure.
    status, error : list of str
        ``"ok"`` / ``"failed"`` and the error text per run.
    finals : dict of str to ndarray
        Each output's value at the end of the run.
    metrics : dict of str to ndarray
        The user's scalar metrics per run.
    wall_time : ndarray
        Seconds per run (on its worker).
    backend : str
        Where it ran (``"dask: <scheduler address>"`` or ``"serial"``).
    elapsed : float
        Seconds of the whole sweep (without starting the local cluster).
    startup : float
        Seconds to start the local cluster (0 when none was started).
    """

    parameters: dict[str, np.ndarray]
    t: np.ndarray
    outputs: list[str]
    series: np.ndarray
    status: list[str]
    error: list[str]
    finals: dict[str, np.ndarray]
    metrics: dict[str, np.ndarray]
    wall_time: np.ndarray
    backend: str = "serial"
    elapsed: float = 0.0
    startup: float = 0.0
    _labels: dict[str, list[int]] = field(default_factory=dict, repr=False)

    @property
    def n_runs(self) -> int:
        return len(self.status)

    @property
    def failed(self) -> list[int]:
        """Indices of the failed runs."""
        return [k for k, s in enumerate(self.status) if s != "ok"]

    @property
    def table(self) -> Any:
        """A pandas DataFrame: one row per run; columns: the parameters, each output's
        final value (``"<name>(t_end)"``), the metrics, ``status``, ``error``,
        ``wall_time``."""
        try:
            import pandas as pd
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise AcausalError("SweepResult.table needs pandas: pip install "
                               "'acausal[sweep]' (or use .parameters, .finals)") from exc
        cols: dict[str, Any] = dict(self.parameters)
        cols.update({f"{n}(t_end)": v for n, v in self.finals.items()})
        cols.update(self.metrics)
        cols.update(status=self.status, error=self.error, wall_time=self.wall_time)
        return pd.DataFrame(cols, index=pd.RangeIndex(self.n_runs, name="run"))

    def __getitem__(self, name: str) -> np.ndarray:
        """The series of one output, ``(run, time)`` (``(run, time, k)`` for a vector)."""
        cols = self._labels.get(name)
        if cols is None:
            raise KeyError(f"{name!r} is not an output of the sweep: {list(self._labels)}")
        s = self.series[:, :, cols]
        return s[:, :, 0] if len(cols) == 1 and self.outputs[cols[0]] == name else s

    def to_xarray(self) -> Any:
        """The series as an ``xarray.DataArray`` with dims ``(run, time, output)`` and the
        parameters, status and metrics as coordinates along ``run``."""
        try:
            import xarray as xr
        except ImportError as exc:
            raise AcausalError("to_xarray() needs xarray: pip install 'acausal[sweep]'") \
                from exc
        coords: dict[str, Any] = {"run": np.arange(self.n_runs), "time": self.t,
                                  "output": list(self.outputs)}
        for name, v in {**self.parameters, **self.metrics}.items():
            coords[name] = ("run", np.asarray(v))
        coords["status"] = ("run", np.asarray(self.status))
        return xr.DataArray(self.series, dims=("run", "time", "output"), coords=coords,
                            name="value")

    def __repr__(self) -> str:
        return (f"<SweepResult: {self.n_runs} runs ({len(self.failed)} failed), "
                f"{len(self.t)} times, {len(self.outputs)} outputs, {self.backend}, "
                f"{self.elapsed:.2f} s>")


# ----- the work of one batch (runs on a worker) -----
def _one_run(cm: CompiledModel, values: dict[str, float], t_end: float, grid: np.ndarray,
             outputs: Sequence[str], width: int,
             metrics: Mapping[str, Callable[[Any], float]],
             options: dict[str, Any]) -> dict[str, Any]:
    from .simulate import simulate

    tic = time.perf_counter()
    series = np.full((len(grid), width), np.nan)
    out: dict[str, Any] = {"status": "ok", "error": "", "metrics": {}}
    res: Any = None
    try:
        res = simulate(cm, t_end, t_eval=list(grid), params=values, **options)
    except SimulationError as exc:
        out.update(status="failed", error=f"SimulationError: {exc}")
        res = exc.partial
    except Exception as exc:  # noqa: BLE001 - a run's failure is data, not the sweep's
        out.update(status="failed", error=f"{type(exc).__name__}: {exc}")
    if res is not None and len(res.t):
        cols = [np.asarray(res[n]).reshape(len(res.t), -1) for n in outputs]
        data = np.hstack(cols) if cols else np.zeros((len(res.t), 0))
        # events repeat their instant in res.t: keep the last value at each grid time
        idx = np.searchsorted(grid, res.t, side="left")
        ok = (idx < len(grid)) & np.isclose(res.t, grid[np.minimum(idx, len(grid) - 1)],
                                            rtol=0, atol=1e-12 * max(1.0, abs(t_end)))
        series[idx[ok]] = data[ok]
        if out["status"] == "ok":
            for name, fn in metrics.items():
                try:
                    out["metrics"][name] = float(fn(res))
                except Exception as exc:  # noqa: BLE001
                    out["metrics"][name] = np.nan
                    out.update(status="failed", error=f"metric {name!r}: "
                               f"{type(exc).__name__}: {exc}")
    out["series"] = series
    out["wall_time"] = time.perf_counter() - tic
    return out


def run_batch(cm: CompiledModel, batch: list[tuple[int, dict[str, float]]], t_end: float,
              grid: np.ndarray, outputs: Sequence[str], width: int,
              metrics: Mapping[str, Callable[[Any], float]],
              options: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
    """Simulate the runs of one batch (``[(index, parameter values)]``)."""
    if isinstance(cm, _Pickled):  # (a worker in this process)
        cm = cm.model()
    return [(k, _one_run(cm, values, t_end, grid, outputs, width, metrics, options))
            for k, values in batch]


# ----- the driver -----
def _in_units(name: str, values: Any, unit: str) -> Any:
    """``values`` with those written with a unit (``"1.2 kOhm"``) in the parameter's own
    unit, as ``simulate(params=)`` takes them."""
    if isinstance(values, str):
        values = [values]
    if not isinstance(values, (list, tuple)) or not any(isinstance(v, str) for v in values):
        return values  # (numbers, or an array of them)
    from .checks import _convert
    from .errors import UnitError

    try:
        return [_convert(v, unit) if isinstance(v, str) else v for v in values]
    except UnitError as exc:
        raise ArgumentError(f"the values of {name!r}: {exc}") from None


def _runs(params: Mapping[str, Sequence[float]], grid: bool) -> dict[str, np.ndarray]:
    names = list(params)
    values = []
    for n in names:
        try:
            v = np.atleast_1d(np.asarray(params[n], dtype=float))
        except (TypeError, ValueError):
            raise ArgumentError(f"the values of {n!r} must be numbers (in SI units), got "
                               f"{params[n]!r}") from None
        if v.ndim != 1 or not len(v):
            raise ArgumentError(f"{n!r} needs a sequence of one or more values (one per run "
                               f"or grid point), got {params[n]!r}")
        values.append(v)
    if grid:
        prod = list(itertools.product(*values)) if names else []
        return {n: np.array([p[k] for p in prod]) for k, n in enumerate(names)}
    sizes = {len(v) for v in values}
    if len(sizes) > 1:
        raise ArgumentError("with grid=False every parameter needs the same number of values "
                           f"(one per run); got {dict(zip(names, map(len, values), strict=True))}")
    return dict(zip(names, values, strict=True))


#: the keyword arguments of simulate() that a sweep passes on (the others are the sweep's
#: own: the parameters and the output grid)
_SIMULATE_OPTIONS = ("t_start", "rtol", "atol", "start", "max_step", "solver", "mode",
                     "solver_options")
#: those check_simulate_arguments() checks
_CHECKED = ("t_start", "rtol", "atol", "start", "max_step", "solver")


def _simulate_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """The ``**simulate_options`` of a sweep: keywords simulate() takes for every run."""
    from .names import did_you_mean

    for key in options:
        if key not in _SIMULATE_OPTIONS:
            hint = ("; the output grid of a sweep is n_points= or t_eval=" if key == "dt"
                    else "" if key in ("params", "raise_on_failure")
                    else did_you_mean(key, _SIMULATE_OPTIONS + ("t_eval", "n_points")))
            raise ArgumentError(
                f"sweep() got an unexpected keyword argument {key!r}{hint} (it passes "
                f"{', '.join(_SIMULATE_OPTIONS)} on to simulate())")
    return dict(options)


def _check_client(client: Any) -> None:
    if client is None or isinstance(client, str):
        return
    try:
        import distributed
    except ImportError:
        return  # (said by _dask_client)
    if not isinstance(client, distributed.Client):
        raise ArgumentError(
            f"client must be None (a local Dask cluster), 'serial' (a loop in this "
            f"process), a scheduler's address ('tcp://host:8786') or a distributed.Client, "
            f"got {client!r}")


def _goes_to_dask(client: Any) -> bool:
    if isinstance(client, str) and client == "serial":
        return False
    import importlib.util

    return importlib.util.find_spec("distributed") is not None


class _Pickled:
    """A compiled model pickled once: Dask sends these bytes, and the worker unpickles them
    into the model itself (``__reduce__``). A worker in this process (a
    ``Client(processes=False)``) gets this object itself, not its pickle: :meth:`model`."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self._models: Any = None

    def model(self) -> CompiledModel:
        """The model for this thread: a copy, as a worker process has (its run caches, the
        integrators kept between runs, are not shared by two runs at once)."""
        import threading

        if self._models is None:
            self._models = threading.local()
        cm = getattr(self._models, "cm", None)
        if cm is None:
            cm = self._models.cm = pickle.loads(self.data)
        return cm  # type: ignore[no-any-return]

    def __reduce__(self) -> Any:
        return (pickle.loads, (self.data,))


def _pickled(cm: CompiledModel) -> _Pickled:
    return _Pickled(pickle.dumps(cm, protocol=pickle.HIGHEST_PROTOCOL))


def _dask_client(client: Any, n_workers: int | None) -> tuple[Any, Any, float]:
    """``(client, cluster to close or None, startup seconds)``; client None: serial."""
    if isinstance(client, str) and client == "serial":
        return None, None, 0.0
    try:
        import distributed
    except ImportError:
        if client is not None:
            raise AcausalError("a Dask client or address was given but the distributed "
                               "package is not installed: pip install 'acausal[sweep]'") \
                from None
        warnings.warn("acausal.sweep: Dask (the distributed package) is not installed; "
                      "running the sweep in a plain loop in this process (pip install "
                      "'acausal[sweep]' for parallel runs, client='serial' to silence this)",
                      AcausalWarning, stacklevel=3)
        return None, None, 0.0
    if client is None:
        import multiprocessing
        import os

        if getattr(multiprocessing.current_process(), "_inheriting", False):
            # a worker process starting: it imports the user's script again (as
            # __mp_main__), which, without a main guard, calls sweep() again here (the
            # flag multiprocessing's own check reads, which would raise in the cluster)
            raise AcausalError(_GUARD)
        tic = time.perf_counter()
        n = n_workers or max(1, min(os.cpu_count() or 1, 8))
        try:
            cluster = distributed.LocalCluster(n_workers=n, threads_per_worker=1,
                                               processes=True, dashboard_address=None,
                                               silence_logs=40)
        except RuntimeError as exc:  # (the workers failed to start: "Nanny failed to start")
            main = sys.modules.get("__main__")
            if getattr(main, "__file__", None) is None:  # (not a script: not the guard)
                raise
            raise AcausalError(f"{_GUARD} ({exc})") from None
        return distributed.Client(cluster), cluster, time.perf_counter() - tic
    if isinstance(client, str):
        try:
            return distributed.Client(client), None, 0.0
        except (ValueError, OSError) as exc:  # (a malformed or unreachable address)
            raise ArgumentError(
                f"client={client!r}: no Dask scheduler there ({exc}); give None (a local "
                "cluster), 'serial', a scheduler's address ('tcp://host:8786') or a "
                "distributed.Client") from None
    return client, None, 0.0


_GUARD = ("sweep(): the local Dask cluster's worker processes could not start. Each "
          "imports the script that called sweep() again: put the script's work under "
          "`if __name__ == \"__main__\":` (as multiprocessing requires), or run the sweep "
          "in this process with client='serial'")


def sweep(model: Component | CompiledModel, params: Mapping[str, Sequence[float]],
          t_end: float, *, outputs: Sequence[str] = (),
          metrics: Mapping[str, Callable[[Any], float]] | None = None, grid: bool = True,
          n_points: int | None = None, t_eval: Sequence[float] | None = None,
          client: Any = None,
          n_workers: int | None = None, batch_size: int | None = None,
          progress: Any = None, **simulate_options: Any) -> SweepResult:
    """Simulate ``model`` for every parameter set and gather the results.

    Parameters
    ----------
    model : Component or CompiledModel
        Built once here (if not already), then sent to the workers.
    params : dict of str to sequence of float
        Parameter values by dotted name (numbers in SI units, or strings with a unit,
        ``"500 mOhm"``, as ``simulate(params=)`` takes them). ``grid=True``: every
        combination (a Cartesian grid); ``grid=False``: one run per position (equal
        lengths; a Monte Carlo sample drawn with numpy).
    t_end : float
        Final time of every run [s].
    outputs : str or sequence of str
        Quantities kept as time series (and as final values in the table): outputs or
        parameters by dotted name (one string is one name).
    metrics : dict of str to callable, optional
        Scalar functions of a run's :class:`~acausal.results.Result`, e.g.
        ``{"peak_current": lambda r: r["inductor.i"].max()}`` (columns of the table, so
        not named as another column; they are pickled to the workers, lambdas included).
    n_points, t_eval
        The common output grid, one or the other (default 101 points from ``t_start``,
        0 unless given, to ``t_end``).
    client : None, "serial", str or distributed.Client
        Where the runs go (module documentation).
    n_workers : int, optional
        Worker processes of the local cluster (default: the number of CPU cores).
    batch_size : int, optional
        Runs per task (default: about four tasks per worker).
    progress : None, bool or callable
        Progress reporting (:mod:`acausal.progress`): a bar in a terminal, or
        ``callback(fraction, message)``.
    **simulate_options
        Passed to :func:`acausal.simulate` (``t_start``, ``rtol``, ``atol``, ``start``,
        ``max_step``, ``solver``, ``mode``, ``solver_options``), checked once before any
        run (a mistake there would fail every run).
    """
    from .export import resolve_outputs  # (here: the exports load on first use)
    from .progress import reporter

    if not isinstance(params, Mapping):
        raise ArgumentError(f"params must be a dict {{'path.name': [values, ...]}}, got "
                            f"{params!r}")
    options = _simulate_options(simulate_options)
    _check_client(client)
    cm = model if isinstance(model, CompiledModel) else build(model)
    # names are checked here (a misspelt name ends the sweep); a value out of its range is a
    # failed run like any other, reported in its row
    built = {q.name: q.value for q in cm.system.parameters}
    cm.parameter_values({k: built.get(k, np.nan) for k in params})
    units = {q.name: q.unit for q in cm.system.parameters}
    runs = _runs({k: _in_units(k, v, units[k]) for k, v in params.items()}, grid)
    n = len(next(iter(runs.values()))) if runs else 1
    # the arguments every run shares are checked once, here, as simulate() checks them:
    # a mistake in them would fail every run
    t_start = options.get("t_start", 0.0)
    _check_grid(t_end, t_start, n_points, None, t_eval)
    tgrid = (np.asarray(t_eval, dtype=float) if t_eval is not None
             else np.linspace(t_start, t_end, 101 if n_points is None else n_points))
    check_simulate_arguments(cm, t_end, t_eval=tgrid, **{
        k: v for k, v in options.items() if k in _CHECKED})
    resolved = resolve_outputs(cm, outputs, "outputs")
    outputs = name_list(outputs, "outputs")
    labels: dict[str, list[int]] = {}
    flat: list[str] = []
    for name, expr in zip(outputs, resolved, strict=True):
        k = int(expr.numel())
        labels[name] = list(range(len(flat), len(flat) + k))
        flat += [name] if k == 1 else [f"{name}[{j}]" for j in range(k)]
    metrics = dict(metrics or {})
    # a metric is a column of the table beside the parameters, the final values and the
    # run's status: a name taken by one of them would overwrite it
    taken = {*params, *(f"{o}(t_end)" for o in outputs), "status", "error", "wall_time"}
    clash = sorted(m for m in metrics if m in taken)
    if clash:
        raise ArgumentError(
            f"metric {', '.join(map(repr, clash))}: a column of the sweep's table has that "
            "name already (a swept parameter, an output's final value '<name>(t_end)', "
            "'status', 'error' or 'wall_time'); name the metric otherwise")
    jobs = [(k, {p: float(v[k]) for p, v in runs.items()}) for k in range(n)]
    results: dict[int, dict[str, Any]] = {}
    # pickled before any cluster starts: a model that cannot go to the workers is one
    # error now, not Dask's serialisation traceback on every attempt
    payload = _pickled(cm) if _goes_to_dask(client) else None
    report = reporter(progress, what="sweep")
    dask, cluster, startup = _dask_client(client, n_workers)
    tic = time.perf_counter()
    backend = "serial"
    try:
        if dask is None:
            for k, values in jobs:
                results[k] = _one_run(cm, values, t_end, tgrid, list(outputs), len(flat),
                                      metrics, options)
                report(len(results) / n, f"run {len(results)}/{n}")
        else:
            backend = f"dask: {dask.scheduler.address}"
            results = _on_dask(dask, payload or _pickled(cm), jobs, t_end, tgrid,
                               list(outputs), len(flat), metrics, options, batch_size,
                               report)
    finally:
        report.close()
        if cluster is not None:
            dask.close()
            cluster.close()
    elapsed = time.perf_counter() - tic
    series = np.stack([results[k]["series"] for k in range(n)]) if n else \
        np.zeros((0, len(tgrid), len(flat)))
    last = series[:, -1, :] if n else np.zeros((0, len(flat)))
    finals = {label: last[:, j] for j, label in enumerate(flat)}
    metric_values = {m: np.array([results[k]["metrics"].get(m, np.nan) for k in range(n)])
                     for m in metrics}
    return SweepResult(
        parameters=runs, t=tgrid, outputs=flat, series=series,
        status=[results[k]["status"] for k in range(n)],
        error=[results[k]["error"] for k in range(n)], finals=finals,
        metrics=metric_values,
        wall_time=np.array([results[k]["wall_time"] for k in range(n)]),
        backend=backend, elapsed=elapsed, startup=startup, _labels=labels)


def _on_dask(client: Any, cm: _Pickled, jobs: list[tuple[int, dict[str, float]]],
             t_end: float, grid: np.ndarray, outputs: list[str], width: int,
             metrics: dict[str, Callable[[Any], float]], options: dict[str, Any],
             batch_size: int | None, report: Any) -> dict[int, dict[str, Any]]:
    import distributed

    n = len(jobs)
    workers = max(1, len(client.scheduler_info().get("workers", {})) or 1)
    size = batch_size or max(1, int(np.ceil(n / (4 * workers))))
    batches = [jobs[i: i + size] for i in range(0, n, size)]
    # pickled once (already), one copy per worker, unpickled there as the model
    model = client.scatter(cm, broadcast=True)
    futures = {client.submit(run_batch, model, b, t_end, grid, outputs, width, metrics,
                             options, pure=False): b for b in batches}
    results: dict[int, dict[str, Any]] = {}
    for fut in distributed.as_completed(list(futures)):
        batch = futures[fut]
        try:
            for k, out in fut.result():
                results[k] = out
        except Exception as exc:  # noqa: BLE001 - a lost worker: these runs failed
            import traceback  # (here only: 0.5 ms of a cold start)

            text = "".join(traceback.format_exception_only(type(exc), exc)).strip()
            for k, _ in batch:
                results[k] = {"status": "failed", "error": f"worker: {text}",
                              "metrics": {}, "series": np.full((len(grid), width), np.nan),
                              "wall_time": np.nan}
        report(len(results) / n, f"run {len(results)}/{n}")
    return results
