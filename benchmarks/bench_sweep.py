"""200 runs of the DC motor drive: a plain loop versus a local Dask cluster of 2 workers.

Run: ``python benchmarks/bench_sweep.py [n_runs] [n_workers]`` (needs ``acausal[sweep]``).
The runs are a 10 x 20 grid of armature resistance and load inertia at the example's own
settings (``examples/dc_motor.py``: 0.3 s, rtol 1e-8, 1501 output points). Each run builds
its IDAS integrator anew (the parameter values are folded into it), so a run costs tens of
milliseconds and the sweep is embarrassingly parallel. Printed: the loop's time, the
cluster's (without and with its start-up), the speed-up, and the CPU load during the
measurement (on a shared machine the speed-up is bounded by the idle cores, not by 2).
"""

from __future__ import annotations

import os
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "examples"))

import numpy as np  # noqa: E402

import acausal as ac  # noqa: E402


def _spin(n: int) -> float:
    tic = time.perf_counter()
    s = 0.0
    for i in range(n):
        s += i * 0.5
    return time.perf_counter() - tic


def capacity(n_workers: int) -> float:
    """Speed-up that ``n_workers`` processes get on a pure CPU loop right now (the machine
    may be shared: this is the ceiling for any parallel sweep)."""
    import multiprocessing as mp

    one = _spin(2_000_000)
    with mp.get_context("spawn").Pool(n_workers) as pool:
        pool.map(_spin, [1000] * n_workers)  # start the processes
        tic = time.perf_counter()
        pool.map(_spin, [2_000_000] * n_workers)
        both = time.perf_counter() - tic
    return n_workers * one / both


def main(n_runs: int = 200, n_workers: int = 2) -> dict[str, float]:
    import dc_motor

    cm = ac.build(dc_motor.build_model())
    n_r = 10
    grid = {"resistor.R": np.linspace(0.4, 0.8, n_r),
            "load.J": np.linspace(2e-3, 6e-3, max(1, n_runs // n_r))}
    settings = dict(outputs=["load.w", "inductor.i"], n_points=dc_motor.N_POINTS,
                    rtol=dc_motor.RTOL, atol=dc_motor.ATOL)
    load0 = os.getloadavg()[0]
    tic = time.perf_counter()
    loop = ac.sweep(cm, grid, dc_motor.T_END, client="serial", **settings)
    t_loop = time.perf_counter() - tic
    import distributed

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tic = time.perf_counter()
        cluster = distributed.LocalCluster(n_workers=n_workers, threads_per_worker=1,
                                           processes=True, dashboard_address=None,
                                           silence_logs=40)
        client = distributed.Client(cluster)
        t_start = time.perf_counter() - tic
        try:
            ac.sweep(cm, {"resistor.R": [0.5] * n_workers}, 0.01, grid=False, client=client,
                     batch_size=1)  # warm-up: imports on the workers
            tic = time.perf_counter()
            par = ac.sweep(cm, grid, dc_motor.T_END, client=client, **settings)
            t_par = time.perf_counter() - tic
        finally:
            client.close()
            cluster.close()
    load1 = os.getloadavg()[0]
    ceiling = capacity(n_workers)
    same = np.array_equal(loop.series, par.series, equal_nan=True)
    n = loop.n_runs
    print(f"DC motor sweep: {n} runs ({len(loop.failed)} failed), {dc_motor.N_POINTS} "
          f"points each, rtol {dc_motor.RTOL:g}")
    print(f"  plain loop                  {t_loop:7.2f} s  ({1e3 * t_loop / n:.1f} ms/run)")
    print(f"  Dask, {n_workers} worker processes    {t_par:7.2f} s  (cluster start-up "
          f"{t_start:.2f} s, first tasks' imports excluded)")
    print(f"  speed-up                    {t_loop / t_par:7.2f} x  (with start-up "
          f"{t_loop / (t_par + t_start):.2f} x)")
    print(f"  identical series: {same};  1-min load average {load0:.1f} -> {load1:.1f} "
          f"on {os.cpu_count()} cores; {n_workers} processes on a pure CPU loop get "
          f"{ceiling:.2f} x right now")
    return {"loop": t_loop, "dask": t_par, "startup": t_start, "speedup": t_loop / t_par,
            "ceiling": ceiling}


if __name__ == "__main__":
    args = [int(a) for a in sys.argv[1:3]]
    main(*args)
