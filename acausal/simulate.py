"""Time integration with SUNDIALS IDAS through ``casadi.integrator``.

The integrator receives the named DAE function built once per model (and per state choice);
nothing symbolic happens per time step. The fast path is one IDAS call over the whole output
grid. The grid is integrated in chunks when the state selection is dynamic (the chosen dummy
derivatives are checked at every output point and re-chosen where they degrade) and, after a
failure, to return the result computed up to the failure.
"""

from __future__ import annotations

import gc
import time as _time
from collections.abc import Sequence
from typing import Any

import casadi as cs
import numpy as np

from .compiler import CompiledModel, build
from .component import Component
from .dae import SemiExplicitDAE
from .errors import AcausalError, SimulationError
from .events import time_events
from .initialize import initialize
from .results import Result
from .structure.dummy import select_states

__all__ = ["simulate", "make_integrator"]


def _linear_solver(F: cs.SX, y: cs.SX) -> str:
    """Dense LAPACK LU for a moderately sized, dense Newton matrix (a mass-matrix block of a
    long chain: sparse LU is far slower there), sparse LU (CSparse) otherwise."""
    n = int(y.numel())
    if n == 0 or n > _DENSE_MAX:
        return "csparse"
    nnz = cs.jacobian_sparsity(F, y).nnz() + n  # + the identity of the x' terms
    return "lapacklu" if nnz > _DENSE_FRACTION * n * n else "csparse"


_DENSE_MAX = 3000  # unknowns: a dense matrix of this size is 72 MB and factors in ~1 s
_DENSE_FRACTION = 0.1


#: integration modes, tried in this order when the previous one fails on a model
MODES = ("idas_ic", "exact_xdot", "states_error_only")


def make_integrator(dae: SemiExplicitDAE, grid: Sequence[float] | np.ndarray, *,
                    rtol: float = 1e-6,
                    atol: float = 1e-8, max_step: float | None = None,
                    max_num_steps: int = 100_000, name: str = "idas",
                    p_values: np.ndarray | None = None,
                    init_xdot: np.ndarray | None = None,
                    suppress_algebraic: bool = False) -> cs.Function:
    """IDAS integrator of ``dae`` on ``grid`` (relative to the start time).

    The returned function takes ``x0``, ``z0`` and ``p = [parameters; t_start]`` and gives
    ``xf``, ``zf`` at the grid points (grid[0] must be 0). With ``p_values`` the parameters
    are substituted by these numbers (constants folded, as in a hand-written model) and the
    ``p`` input is ``[t_start]`` only.

    By default IDAS computes consistent derivatives itself (``IDACalcIC``). With
    ``init_xdot`` (the exact ``ode(x0, z0)`` of a consistent point) that step is skipped:
    the robust mode used when ``IDACalcIC`` fails on a consistent point (it can, on
    ill-scaled algebraic blocks such as a closed loop's multipliers). With
    ``suppress_algebraic`` the local error test covers the states only (the algebraic
    variables follow them through the algebraic equations): the last resort for badly
    conditioned algebraic blocks.
    """
    toff = cs.SX.sym("t_start")
    tau = cs.SX.sym("tau")
    x, z = dae.x, dae.z
    ode, alg = dae.ode, dae.alg
    p_in = dae.p
    if p_values is not None and dae.p.numel():
        ode = cs.substitute(ode, dae.p, cs.DM(p_values))
        alg = cs.substitute(alg, dae.p, cs.DM(p_values))
        p_in = cs.SX(0, 1)
    if x.numel() == 0:  # IDAS needs a state: a dummy one that stays zero
        x = cs.SX.sym("_dummy_state")
        ode = cs.SX(0)
    if cs.depends_on(cs.vertcat(ode, alg), dae.t):
        ode = cs.substitute(ode, dae.t, tau + toff)
        alg = cs.substitute(alg, dae.t, tau + toff)
    problem: dict[str, Any] = {"x": x, "p": cs.vertcat(p_in, toff), "t": tau, "ode": ode}
    if z.numel():
        problem["z"] = z
        problem["alg"] = alg
    opts: dict[str, Any] = {
        "abstol": atol,
        "reltol": rtol,
        "max_num_steps": max_num_steps,
        "verbose": False,
    }

    if init_xdot is not None:
        opts.update(calc_ic=False,
                    init_xdot=[float(v) for v in np.ravel(init_xdot)] or [0.0])
    if suppress_algebraic:
        opts["suppress_algebraic"] = True
    if max_step is not None:
        opts["max_step_size"] = max_step
    opts["linear_solver"] = _linear_solver(cs.vertcat(ode, alg), cs.vertcat(x, z))
    return cs.integrator(name, "idas", problem, 0.0, [float(g) for g in grid[1:]], opts)


def _grid(t_start: float, t_end: float, n_points: int | None, dt: float | None,
          t_eval: Sequence[float] | None) -> np.ndarray:
    if t_eval is not None:
        g = np.asarray(t_eval, dtype=float)
        if g[0] != t_start:
            g = np.concatenate([[t_start], g])
        if np.any(np.diff(g) <= 0):
            raise AcausalError("t_eval must be strictly increasing and after t_start")
        return g
    if t_end <= t_start:
        raise AcausalError(f"t_end ({t_end}) must be after t_start ({t_start})")
    if dt is not None:
        n = int(np.ceil((t_end - t_start) / dt - 1e-9))
        g = t_start + dt * np.arange(n + 1)
        g[-1] = t_end
        return g
    return np.linspace(t_start, t_end, n_points or 501)


class _Runner:
    """Integrates one compiled model; keeps integrators per (DAE, relative grid)."""

    def __init__(self, cm: CompiledModel, p: np.ndarray, rtol: float, atol: float,
                 max_step: float | None, max_num_steps: int = 100_000) -> None:
        self.cm, self.p = cm, p
        self.rtol, self.atol, self.max_step = rtol, atol, max_step
        self.max_num_steps = max_num_steps
        # integration mode (see MODES): advanced when a mode fails, remembered per model
        self.mode = int(cm._misc.get("integration_mode", 0))
        self.cache: dict[tuple, cs.Function] = cm._integrators
        self.outf: dict[int, cs.Function] = {}

    def integrator(self, dae: SemiExplicitDAE, rel: np.ndarray) -> cs.Function:
        key = (id(dae), tuple(np.round(rel, 12)), self.rtol, self.atol, self.max_step,
               self.max_num_steps, self.p.tobytes())
        if key not in self.cache:
            self.cache[key] = make_integrator(dae, rel, rtol=self.rtol, atol=self.atol,
                                              max_step=self.max_step,
                                              max_num_steps=self.max_num_steps,
                                              p_values=self.p)
        return self.cache[key]

    def outputs(self, dae: SemiExplicitDAE, X: Any, Z: Any, T: np.ndarray,
                only_variables: bool = False) -> np.ndarray:
        """Outputs at the given times, ``(nt, n_out)`` (CasADi evaluates all columns)."""
        f = dae.variables_function() if only_variables else dae.output_function()
        return f(X, Z, self.p.reshape(-1, 1), T.reshape(1, -1)).full().T

    def _call(self, dae: SemiExplicitDAE, grid: np.ndarray, x0: np.ndarray, z0: np.ndarray,
              args: dict[str, Any]) -> Any:
        if self.mode == 0:
            return self.integrator(dae, grid - grid[0])(**args)
        xdot = np.asarray(dae.function()(x0, z0, self.p, grid[0])[0]).ravel()
        integ = make_integrator(dae, grid - grid[0], rtol=self.rtol, atol=self.atol,
                                max_step=self.max_step, max_num_steps=self.max_num_steps,
                                p_values=self.p, init_xdot=xdot if xdot.size else np.zeros(1),
                                suppress_algebraic=self.mode == 2)
        return integ(**args)

    def step(self, dae: SemiExplicitDAE, x0: np.ndarray, z0: np.ndarray,
             grid: np.ndarray) -> tuple[cs.DM, cs.DM]:
        args = dict(x0=x0 if x0.size else 0.0, z0=z0, p=[grid[0]])
        while True:
            try:
                r = self._call(dae, grid, x0, z0, args)
                break
            except RuntimeError as exc:
                calc_ic_failed = "IDACalcIC" in str(exc)
                if self.mode == 0 and calc_ic_failed:
                    self.mode = 1
                elif self.mode < 2 and not calc_ic_failed and dae.z.numel():
                    self.mode = 2
                else:
                    raise
                self.cm._misc["integration_mode"] = self.mode
        # kept as CasADi matrices: the output function takes them as they are, and only
        # the last column is converted to continue (copying to numpy costs as much as IDAS)
        n = len(grid) - 1
        X = r["xf"] if dae.x.numel() else cs.DM(0, n)
        Z = r["zf"] if dae.z.numel() else cs.DM(0, n)
        return X, Z


def simulate(model: Component | CompiledModel, t_end: float, *, t_start: float = 0.0,
             n_points: int | None = None, dt: float | None = None,
             t_eval: Sequence[float] | None = None, rtol: float = 1e-6, atol: float = 1e-8,
             params: dict[str, float] | None = None, max_step: float | None = None,
             raise_on_failure: bool = True) -> Result:
    """Simulate a model with IDAS and return the :class:`~acausal.results.Result`.

    Parameters
    ----------
    model : Component or CompiledModel
        The model (built on the fly) or the output of :func:`acausal.build`.
    t_end : float
        Final time [s]; ``res.t`` ends exactly there.
    t_start : float
        Initial time [s].
    n_points, dt, t_eval
        Output grid: number of points (default 501), step, or explicit times.
    rtol, atol : float
        IDAS relative and absolute tolerances.
    params : dict
        Parameter overrides by dotted path, ``{"r.R": 10.0}`` (no rebuild needed).
    max_step : float, optional
        Largest IDAS step [s].
    raise_on_failure : bool
        If True (default) an integration failure raises :class:`SimulationError` whose
        ``partial`` holds the result up to the failure; if False that partial result is
        returned with ``status == "failed"``.
    """
    cm = model if isinstance(model, CompiledModel) else build(model)
    gc_was_enabled = gc.isenabled()
    gc.disable()  # no reference cycles are made here; avoid full scans of a large heap
    try:
        return _simulate(cm, t_end, t_start, n_points, dt, t_eval, rtol, atol, params,
                         max_step, raise_on_failure)
    finally:
        if gc_was_enabled:
            gc.enable()


def _simulate(cm: CompiledModel, t_end: float, t_start: float, n_points: int | None,
              dt: float | None, t_eval: Sequence[float] | None, rtol: float, atol: float,
              params: dict[str, float] | None, max_step: float | None,
              raise_on_failure: bool) -> Result:
    tic = _time.perf_counter()
    p = cm.parameter_values(params)
    grid = _grid(t_start, t_end, n_points, dt, t_eval)
    init = initialize(cm, p, grid[0])
    # a chunk of a dynamic-selection run is short: a singular choice fails fast
    run = _Runner(cm, p, rtol, atol, max_step,
                  max_num_steps=5_000 if cm.selection.dynamic else 100_000)
    dae = cm.dae
    x0, z0 = init.x0, init.z0
    sel = cm.selection
    stats: dict[str, Any] = {"initial_conditions": init.conditions,
                             "defaulted_starts": init.defaulted, "reselections": 0}

    if sel.dynamic:
        values = run.outputs(dae, x0.reshape(-1, 1), z0.reshape(-1, 1), grid[:1],
                             only_variables=True)[0]
        dae, x0, z0, sel = _reselect(cm, values, p, grid[0], dae, x0, z0, sel, stats)

    first = (dae, x0.reshape(-1, 1), z0.reshape(-1, 1), grid[:1])
    pieces: list[tuple[SemiExplicitDAE, Any, Any, np.ndarray]] = [first]
    status, message = "ok", ""
    events = _events(cm, dae, p, grid[0], grid[-1])
    if events:
        grid = np.union1d(grid, events)  # event instants are output points
        stats["time_events"] = events
    bounds = [grid[0], *events, grid[-1]]
    x, z = x0, z0
    for s, (ta, tb) in enumerate(zip(bounds[:-1], bounds[1:], strict=True)):
        seg = grid[(grid >= ta) & (grid <= tb)]
        if s > 0:  # restart just after the event, algebraic variables on the new side
            seg = np.concatenate([[ta + _EVENT_EPS * max(1.0, abs(ta))], seg[1:]])
            z = _consistent_z(dae, x, z, run.p, float(seg[0]))
        status, message, blocks, sel = _integrate(run, cm, dae, x, z, seg, sel, stats)
        pieces += [b for b in blocks if len(b[3])]
        if status != "ok" or not blocks:
            break
        dae = blocks[-1][0]
        x, z = _last(blocks[-1][1]), _last(blocks[-1][2])
    t_all = np.concatenate([b[3] for b in pieces])

    def evaluate() -> np.ndarray:  # outputs on first access (the states are the result)
        return np.vstack([run.outputs(*b) for b in pieces])

    stats["integration_mode"] = MODES[run.mode]
    stats["wall_time"] = _time.perf_counter() - tic
    res = Result(t_all, dae.out_names, dae.out_sizes, evaluate,
                 dict(zip(dae.p_names, p, strict=True)), status=status, message=message,
                 stats=stats)
    if status != "ok":
        if raise_on_failure:
            raise SimulationError(message, partial=res, t_fail=float(t_all[-1]))
    return res


_EVENT_EPS = 1e-12  # restart offset after a time event, relative to max(1, |t|)


def _events(cm: CompiledModel, dae: SemiExplicitDAE, p: np.ndarray, t0: float,
            t1: float) -> list[float]:
    """Time events of the model with these parameter values (cached)."""
    key = ("events", id(dae), p.tobytes(), t0, t1)
    if key not in cm._misc:
        if not cs.depends_on(cs.vertcat(dae.ode, dae.alg), dae.t):
            cm._misc[key] = []
        else:
            pv = cs.DM(p) if dae.p.numel() else cs.DM(0, 1)
            f = cs.Function("rhs", [dae.x, dae.z, dae.t], [
                cs.substitute(cs.vertcat(dae.ode, dae.alg), dae.p, pv)])
            cm._misc[key] = time_events(f, 2, t0, t1)
    return list(cm._misc[key])


def _consistent_z(dae: SemiExplicitDAE, x: np.ndarray, z: np.ndarray, p: np.ndarray,
                  t: float) -> np.ndarray:
    """Algebraic variables consistent with the states at ``t`` (Newton from ``z``)."""
    if dae.z.numel() == 0:
        return z
    if "znewton" not in dae._cache:
        dae._cache["znewton"] = cs.Function(
            "znewton", [dae.x, dae.z, dae.p, dae.t],
            [dae.alg, cs.jacobian(dae.alg, dae.z)])
    f = dae._cache["znewton"]
    zk = np.array(z, dtype=float)
    for _ in range(50):
        g, J = f(x, zk, p, t)
        g = np.asarray(g).ravel()
        if np.max(np.abs(g)) < 1e-12 * max(1.0, float(np.max(np.abs(zk)))):
            break
        zk = zk - np.linalg.solve(np.asarray(J), g)
    return zk


def _integrate(run: _Runner, cm: CompiledModel, dae: SemiExplicitDAE, x0: np.ndarray,
               z0: np.ndarray, grid: np.ndarray, sel: Any, stats: dict[str, Any]):
    """One smooth segment: a single IDAS call when possible, else chunks."""
    if not sel.dynamic:
        try:
            X, Z = run.step(dae, x0, z0, grid)
            return "ok", "", [(dae, X, Z, grid[1:])], sel
        except RuntimeError:
            pass
    return _chunked(run, cm, dae, x0, z0, grid, sel, stats)


def _reselect(cm, values, p, t, dae, x0, z0, sel, stats):
    """Choose the dummy derivatives again at a consistent point and switch DAE if needed."""
    new = select_states(cm.system, values, p, t)
    if new.states == sel.states:
        return dae, x0, z0, new
    stats["reselections"] += 1
    d2 = cm.dae_for(new.states)
    name_val = {v.name: values[k] for k, v in enumerate(cm.system.variables)}
    x1 = np.array([name_val[n] for n in d2.x_names])
    z1 = np.array([name_val[n] for n in d2.z_names])
    return d2, x1, z1, new


def _last(M: Any) -> np.ndarray:
    """Last column of a CasADi or numpy matrix, as a flat numpy array."""
    return np.asarray(M[:, -1]).ravel() if M.shape[0] else np.zeros(0)


_SWITCH = 0.7  # re-select when another choice is better conditioned by 1/0.7
_NEAR_SWITCH = 0.9  # below this, integrate one output interval at a time


def _chunked(run: _Runner, cm: CompiledModel, dae, x0, z0, grid, sel, stats):
    """Integrate in chunks; re-select states where needed; stop cleanly on failure.

    With dynamic state selection the choice is checked at every output point; a chunk
    that fails (the choice became singular between two checks) is retried from its start
    with the best choice there, then with fewer output points.
    """
    blocks: list[tuple[SemiExplicitDAE, Any, Any, np.ndarray]] = []
    k = 0
    m0 = 20 if sel.dynamic else max(1, (len(grid) - 1) // 20)
    m = m0
    retried = False
    while k < len(grid) - 1:
        chunk = grid[k: min(k + m, len(grid) - 1) + 1]
        try:
            X, Z = run.step(dae, x0, z0, chunk)
        except RuntimeError as exc:
            if sel.dynamic and not retried:
                retried = True
                vals = run.outputs(dae, x0.reshape(-1, 1), z0.reshape(-1, 1), chunk[:1],
                                   only_variables=True)[0]
                dae, x0, z0, sel = _reselect(cm, vals, run.p, float(chunk[0]), dae, x0, z0,
                                             sel, stats)
                continue
            if len(chunk) > 2:
                m = max(1, m // 4)
                continue
            msg = (f"IDAS failed between t = {chunk[0]:.6g} s and t = {chunk[-1]:.6g} s: "
                   f"{str(exc).splitlines()[-1] if str(exc) else type(exc).__name__}. "
                   "The result up to the failure is in .partial. Typical causes: a "
                   "singularity of the model (a mechanism reaching a dead point, a "
                   "division by zero), an inconsistent input, tolerances too loose, or "
                   "tolerances too tight for the conditioning of the algebraic equations "
                   "(try rtol=1e-8).")
            return "failed", msg, blocks, sel
        retried = False
        m = m0
        T = chunk[1:]
        keep = len(T)
        degraded = False
        if sel.dynamic:
            vals = run.outputs(dae, X, Z, T, only_variables=True)
            for q in range(len(T)):
                quality = sel.worst_quality(vals[q], run.p, float(T[q]))
                if quality < _SWITCH:
                    keep, degraded = q + 1, True
                    break
            X, Z, T = X[:, :keep], Z[:, :keep], T[:keep]
            # approaching a switch: check at every output point
            m = 1 if (not degraded and quality < _NEAR_SWITCH) else m0
        blocks.append((dae, X, Z, T))
        x0, z0 = _last(X), _last(Z)
        if degraded:
            dae, x0, z0, sel = _reselect(cm, vals[keep - 1], run.p, float(T[-1]), dae,
                                         x0, z0, sel, stats)
        k += keep
    return "ok", "", blocks, sel
