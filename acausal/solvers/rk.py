"""Explicit Runge-Kutta methods with error control: Dormand-Prince 5(4) and 8(5,3).

``simulate(..., solver="dopri5")`` or ``solver="dop853"`` integrate the explicit ODE of a
model (:mod:`acausal.solvers.ode`). One step, every stage included, is one call of a
CasADi function that calls the compiled right-hand side (the Python loop costs a few
microseconds per step, not per evaluation); the error norm, the step-size control and the
dense output follow Hairer, Norsett and Wanner (Solving ODEs I, II.4-II.6) with the
published coefficients (:mod:`acausal.solvers._tableaux`, checked bit for bit against
SciPy's ``RK45`` and ``DOP853``): the output points are interpolated (continuous
extensions of order 4 and 7), never stepped onto.

Stiffness is watched as in Hairer's codes: the estimate ``h |f(y_s) - f(y)| / |y_s - y|``
of the two last stages (both at ``t + h``) against the method's stability boundary; after
15 stiff-looking accepted steps (fewer than 6 normal ones between them) the method gives
up. With fallback allowed it continues with CVODES BDF from that point and says so once
(:class:`~acausal.errors.SolverWarning`); otherwise it fails with the reason.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass
from typing import Any, ClassVar

import casadi as cs
import numpy as np

from ..dae import SemiExplicitDAE
from ..errors import AcausalError, SolverWarning, user_stacklevel
from ..pointcall import PointCall
from . import _tableaux as tb_
from .base import (
    IntegrationFailure,
    Integrator,
    IntegratorOptions,
    Segment,
    SegmentStats,
    grown_states,
)
from .machine import (
    COMPILE_MIN_INSTRUCTIONS,
    COMPILE_SECONDS_PER_INSTRUCTION,
    KEY_SECONDS_PER_INSTRUCTION,
    LOOKUP_SHARE,
    BackgroundCompile,
    c_compiler,
    cache_dir,
    cached_library,
    library_key,
)
from .ode import NotAnODE, ODEForm, ode_form

__all__ = ["RungeKuttaIntegrator", "DOPRI5Integrator", "DOP853Integrator"]

_SAFETY, _MIN_FACTOR, _MAX_FACTOR = 0.9, 0.2, 10.0
# error tests failed in a row before the run fails: a step that the end of its stretch cuts
# short is cut to that end again, so a jump of the equations just before the end (rejected
# at every length) was tried forever
_MAX_REJECTIONS = 100
_STIFF_STEPS = 15  # stiff-looking accepted steps before giving up (Hairer: 15)
_NONSTIFF_RESET = 6  # normal steps that clear the count (Hairer: 6)


@dataclass(frozen=True)
class _Tableau:
    """An explicit Runge–Kutta method: its Butcher tableau, the order of its error
    estimator and the reach of its stability region."""

    name: str
    A: np.ndarray  # (s, s)
    B: np.ndarray  # (s,)
    C: np.ndarray  # (s,)
    order: int  # of the error estimator: the step factor is err^(-1/(order+1))
    stability: float  # |h lambda| on the stability boundary (stiffness test)


DOPRI5 = _Tableau("dopri5", tb_.RK45_A, tb_.RK45_B, tb_.RK45_C, tb_.RK45_ERROR_ORDER, 3.25)
#: the 13 stages' coefficients in the extra stages of DOP853's continuous extension and
#: in its last four coefficients, as one matrix (13, 3 + 4)
_DENSE_13 = np.hstack([tb_.DOP853_A_EXTRA[:, :13].T, tb_.DOP853_D[:, :13].T])
DOP8 = _Tableau("dop853", tb_.DOP853_A, tb_.DOP853_B, tb_.DOP853_C, tb_.DOP853_ERROR_ORDER,
                6.1)


class _Stiff(Exception):
    def __init__(self, t: float, x: np.ndarray, hrho: float) -> None:
        super().__init__(f"stiffness detected at t = {t:.6g} s (h |lambda| ~ {hrho:.3g})")
        self.t, self.x, self.hrho = t, x, hrho


class _Stepper:
    """The step function called through CasADi's buffer interface: the arguments are
    copied into, and the results read from, preallocated numpy arrays. A regular call
    converts every result to a new matrix and back (the stages ``K`` included, which are
    needed only at output points): about a fifth of a step's cost at 400 states."""

    def __init__(self, f: cs.Function) -> None:
        n = int(f.size1_in(0))
        self.x, self.t, self.h, self.f0 = np.zeros(n), np.zeros(1), np.zeros(1), np.zeros(n)
        self.x1, self.f1 = np.zeros(n), np.zeros(n)
        self.err, self.hrho = np.zeros(1), np.zeros(1)
        self.K = np.zeros((n, int(f.size2_out(4))), order="F")
        self._buf, self._eval = f.buffer()
        for i, a in enumerate((self.x, self.t, self.h, self.f0)):
            self._buf.set_arg(i, memoryview(a))  # type: ignore[call-arg, arg-type]
        for i, a in enumerate((self.x1, self.f1, self.err, self.hrho,
                               self.K.reshape(-1, order="F"))):
            self._buf.set_res(i, memoryview(a))  # type: ignore[call-arg, arg-type]

    def __call__(self, x: np.ndarray, t: float, h: float, f0: np.ndarray) -> tuple[float,
                                                                                   float]:
        """One step from ``x``; returns the error norm and the stiffness estimate (the
        new state, its derivative and the stages are in ``x1``, ``f1`` and ``K``)."""
        self.x[:] = x
        self.t[0], self.h[0] = t, h
        self.f0[:] = f0
        self._eval()
        return float(self.err[0]), float(self.hrho[0])


class RungeKuttaIntegrator(Integrator):
    """Embedded explicit Runge-Kutta method with error control and dense output (see the
    module documentation); the subclasses choose the tableau."""

    tableau: ClassVar[_Tableau] = DOPRI5
    known_options: ClassVar[tuple[str, ...]] = ("compile",)

    def __init__(self, cm: Any, options: IntegratorOptions) -> None:
        super().__init__(cm, options)
        if options.mode is not None:
            raise AcausalError(f"the {self.name} solver has no modes (got {options.mode!r})")
        self._forms: dict[tuple[int, bytes], tuple[ODEForm, _Stepper, Any]] = {}
        self._machine: dict[tuple[int, bytes], BackgroundCompile] = {}
        self._library_keys: dict[tuple[int, bytes], str] = {}  # (see _cached)
        self._compile_tried: set[tuple[int, bytes]] = set()
        extra = dict(options.extra)
        unknown = set(extra) - {"compile"}
        if unknown:
            raise AcausalError(f"the {self.name} solver has no option(s) "
                               f"{', '.join(sorted(unknown))} (solver_options: 'compile')")
        self._compile = extra.get("compile", "auto")
        if self._compile not in ("auto", True, False):
            raise AcausalError(f"solver_options={{'compile': {self._compile!r}}}: use 'auto' "
                               "(compile large right-hand sides in the background), True "
                               "(compile and wait for it) or False (virtual machine only)")
        self._fallback: Integrator | None = None
        self._warned = False

    def start_run(self) -> None:
        """Each run that switches to the implicit method says so (the backend stays with
        the compiled model: its second run switched without a word)."""
        self._warned = False

    # ----- building -----
    def _compiled(self, dae: SemiExplicitDAE, p: np.ndarray) -> tuple[ODEForm, _Stepper,
                                                                      Any]:
        """The ODE, the step function and the dense-output function for these parameter
        values (kept for repeated runs)."""
        key = (id(dae), p.tobytes())
        got = self._forms.get(key)
        if got is None:
            try:
                form = ode_form(dae, p)
            except NotAnODE as exc:
                raise AcausalError(f"the {self.name} solver needs an explicit ODE: {exc}; "
                                   "use solver='idas'") from None
            got = self._forms[key] = (form, _Stepper(self._step_function(form, form.f)),
                                      _point_call(self._dense_function(form, form.f)))
        return got

    def _compile_delay(self, key: tuple[int, bytes], form: ODEForm) -> float | None:
        """After how many seconds of stepping a run starts compiling its right-hand side
        (None: not at all): the compiler's expected time, as in the ski-rental rule (a
        run never spends more than about twice what the better choice would have cost;
        a shorter run would not see the machine code, and on a busy machine the compiler
        would only compete with it for the processor)."""
        if self._compile is False or key in self._compile_tried:
            return None
        n = form.f.n_instructions()
        if self._compile == "auto" and n < COMPILE_MIN_INSTRUCTIONS:
            return None
        return 0.0 if self._compile is True else COMPILE_SECONDS_PER_INSTRUCTION * n

    def _start_compile(self, key: tuple[int, bytes], form: ODEForm) -> None:
        self._compile_tried.add(key)
        cc = c_compiler()
        if cc is not None:
            self._machine[key] = BackgroundCompile(form.f, cc, self._library_keys.get(key))

    def _cached(self, key: tuple[int, bytes], form: ODEForm) -> tuple[ODEForm, _Stepper,
                                                                      Any] | None:
        """The step and dense-output functions on the right-hand side as an earlier run
        compiled it (:func:`~acausal.solvers.machine.cached_library`: in this process or
        another); None if there is none. (Asked by a run that would compile it.)"""
        cc = c_compiler()
        if cc is None:
            return None
        lib = self._library_keys.get(key) or library_key(form.f, cc)
        self._library_keys[key] = lib
        fc = cached_library(form.f, cc, lib)
        if fc is None:
            return None
        self._compile_tried.add(key)
        return self._install(key, fc)

    def _install(self, key: tuple[int, bytes], fc: cs.Function) -> tuple[ODEForm, _Stepper,
                                                                          Any]:
        form = self._forms[key][0]
        got = self._forms[key] = (form, _Stepper(self._step_function(form, fc)),
                                  _point_call(self._dense_function(form, fc)))
        return got

    def _upgrade(self, key: tuple[int, bytes], wait: bool = False) -> tuple[ODEForm, _Stepper,
                                                                             Any] | None:
        """The step and dense-output functions on the compiled right-hand side, once its
        background compile has finished (None before, or if it failed)."""
        job = self._machine.get(key)
        if job is None or not (wait or job.done):
            return None
        del self._machine[key]
        fc = job.result(wait=True)
        return None if fc is None else self._install(key, fc)

    def _step_function(self, form: ODEForm, rhs: cs.Function) -> cs.Function:
        """``(x, t, h, f0) -> (x1, f1, err, h*rho, K)``: one step from ``x`` (``f0 = f(x)``,
        first same as last), the weighted RMS error norm, the stiffness estimate and the
        stages (columns; the last one ``f1``)."""
        tb, o = self.tableau, self.options
        n = form.n
        x, f0 = cs.MX.sym("x", n), cs.MX.sym("f0", n)
        t, h = cs.MX.sym("t"), cs.MX.sym("h")
        K = [f0]
        ys = x
        for s in range(1, len(tb.C)):  # (the nodes made as in _sum)
            ys = _binary(_ADD, x, _binary(_MUL, h, _sum(K, tb.A[s, :s], n)))
            K.append(rhs(ys, _binary(_ADD, t, _binary(_MUL, cs.MX(float(tb.C[s])), h))))
        x1 = _binary(_ADD, x, _binary(_MUL, h, _sum(K, tb.B, n)))
        f1 = rhs(x1, t + h)
        K.append(f1)
        scale = o.atol + o.rtol * cs.fmax(cs.fabs(x), cs.fabs(x1))
        err = self._error_norm(K, h, scale, n)
        # stiffness: the last stage is at t + h as well (C[-1] == 1)
        hrho = cs.fabs(h) * cs.norm_2(f1 - K[-2]) / cs.fmax(cs.norm_2(x1 - ys), 1e-300)
        return cs.Function(f"{tb.name}_step", [x, t, h, f0],
                           [x1, f1, err, hrho, cs.horzcat(*K)])

    def _error_norm(self, K: list[cs.MX], h: cs.MX, scale: cs.MX, n: int) -> cs.MX:
        e = _sum(K, tb_.RK45_E, n)
        return cs.norm_2(h * e / scale) / np.sqrt(n)

    def _dense_function(self, form: ODEForm, rhs: cs.Function) -> Any:
        """``(x0, x1, h, K) -> Q``: coefficients of the interpolant on the step."""
        return None

    def _interpolate(self, x0: np.ndarray, x1: np.ndarray, h: float, K: np.ndarray,
                     dense: Any, t0: float, theta: np.ndarray, form: ODEForm) -> np.ndarray:
        """States at ``t0 + theta h`` (``theta`` in (0, 1], one column each)."""
        Q = K @ tb_.RK45_P  # (n, 4)
        powers = np.cumprod(np.tile(theta, (Q.shape[1], 1)), axis=0)  # theta^1..theta^4
        return x0[:, None] + h * (Q @ powers)

    # ----- integration -----
    def integrate(self, dae: SemiExplicitDAE, p: np.ndarray, x0: np.ndarray, z0: np.ndarray,
                  grid: np.ndarray, allow_fallback: bool = True) -> Segment:
        key = (id(dae), p.tobytes())
        form, step, dense = self._compiled(dae, p)
        if self._compile is True and self._compile_delay(key, form) is not None:
            self._start_compile(key, form)
            step, dense = (self._upgrade(key, wait=True) or (form, step, dense))[1:]
        stats = SegmentStats(mode=self.name)
        X = np.zeros((form.n, len(grid) - 1))
        try:
            self._run(form, step, dense, np.asarray(x0, float).copy(), grid, X, stats, key)
        except _Stiff as st:
            reached = int(np.searchsorted(grid, st.t, side="right")) - 1  # outputs done
            if not allow_fallback:
                raise IntegrationFailure(
                    f"{self.name}: {st} (the model is stiff here: use an implicit solver, "
                    "solver='cvodes-bdf' or 'idas')", st.t,
                    self._segment(form, grid[1:reached + 1], X[:, :reached], stats)) from None
            return self._continue_implicit(dae, p, form, grid, X, stats, st, reached)
        except _Failed as fl:
            k, reason = fl.reached, fl.reason
            grown = grown_states(dae.x_names, np.asarray(x0, float), fl.x) if fl.collapse else []
            if grown:
                # a blow-up. The computed solution has its pole at fl.t, but the pole's
                # time carries the run's accumulated error: each step's local error (up
                # to rtol relative) moves it. Measured on x' = x^2, x^3, x^2/1000 at
                # rtol 1e-3, 1e-6, 1e-9 (/tmp/fix-rem/poles.py): |fl.t - pole| up to
                # 0.62 rtol (fl.t - t0) with dopri5, 0.06 with dop853 (IDAS: 16, early).
                # A point that near the pole may hold any value (x(1) = 3.5e6 on
                # x' = x^2, whose solution is infinite there): only the points before
                # fl.t - 10 rtol (fl.t - t0) are kept (the factor 10 over the largest
                # shift measured keeps their relative error below about 6 %), as IDAS
                # keeps those before the time it stopped at
                k = int(np.searchsorted(grid[1:k + 1], fl.t - 10 * self.options.rtol
                                        * (fl.t - float(grid[0])), side="left"))
                var = grown[0][0]
                origin = ", ".join(self._origins([var]))
                reason = (f"blow-up: the step size fell to {fl.h:.3g} s at t = {fl.t:.6g} s "
                          f"in the equation for der({var})"
                          + (f" of {origin}" if origin else "")
                          + "; the states grew without bound ("
                          + "; ".join(g[1] for g in grown) + f" at t = {fl.t:.6g} s)")
            raise IntegrationFailure(f"{self.name}: {reason}", fl.t,
                                     self._segment(form, grid[1:k + 1], X[:, :k],
                                                   stats)) from None
        return self._segment(form, grid[1:], X, stats)

    def _origins(self, names: list[str]) -> list[str]:
        idx = self.cm.system.name_index
        return sorted({self.cm.system.variables[idx[n]].origin for n in names if n in idx})

    def _segment(self, form: ODEForm, t: np.ndarray, X: np.ndarray,
                 stats: SegmentStats) -> Segment:
        Z = np.asarray(form.z(X, t.reshape(1, -1))) if len(t) and form.z.size1_out(0) \
            else np.zeros((form.z.size1_out(0), len(t)))
        return Segment(t, X, Z, stats)

    def _continue_implicit(self, dae: SemiExplicitDAE, p: np.ndarray, form: ODEForm,
                           grid: np.ndarray, X: np.ndarray, stats: SegmentStats, st: _Stiff,
                           reached: int) -> Segment:
        """The rest of the segment with CVODES BDF from the point where stiffness showed."""
        from .cvodes import CVODESBDFIntegrator

        if self._fallback is None:
            self._fallback = CVODESBDFIntegrator(self.cm, self.options)
        if not self._warned:
            self._warned = True
            warnings.warn(
                f"{self.name}: {st}; the integration continues with CVODES BDF (implicit). "
                "Pass solver='cvodes-bdf' (or 'idas') to simulate() to start with it.",
                SolverWarning, stacklevel=user_stacklevel())
        rest = np.concatenate([[st.t], grid[reached + 1:]])
        if len(rest) < 2 or rest[1] <= rest[0]:
            rest = rest[1:]
        z_st = np.asarray(form.z(st.x, st.t)).ravel()
        seg = self._fallback.integrate(dae, p, st.x, z_st, rest)
        Xr = np.asarray(seg.x)
        X[:, reached:] = Xr[:, -(X.shape[1] - reached):]
        stats.steps += seg.stats.steps
        stats.rhs_evaluations += seg.stats.rhs_evaluations
        stats.mode = f"{self.name} -> cvodes-bdf"
        return self._segment(form, grid[1:], X, stats)

    def advance(self, dae: SemiExplicitDAE, p: np.ndarray, x0: np.ndarray, z0: np.ndarray,
                t0: float, t1: float) -> Segment:
        return self.integrate(dae, p, x0, z0, np.array([t0, t1]))

    def _run(self, form: ODEForm, step: _Stepper, dense: Any, x: np.ndarray,
             grid: np.ndarray, X: np.ndarray, stats: SegmentStats,
             key: tuple[int, bytes] | None = None) -> None:
        """Step from ``grid[0]`` to ``grid[-1]``, filling ``X`` at the output points."""
        o, tb = self.options, self.tableau
        exponent = -1.0 / (tb.order + 1)
        t, t_end = float(grid[0]), float(grid[-1])
        f = np.asarray(form.f(x, t)).ravel()
        stats.rhs_evaluations += 1
        h = self._initial_step(form, x, t, f, t_end)
        compile_at = self._compile_delay(key, form) if key is not None else None
        # the disk cache is looked up once the run has lasted five times what the lookup
        # costs (the function's key, a hash of its serialisation: ~1 us per instruction,
        # 0.09 s for a 10 000-mass chain, whose runs take 0.35 s): a run that looks and
        # finds nothing spends a fifth more at most
        lookup_at = (KEY_SECONDS_PER_INSTRUCTION * form.f.n_instructions() / LOOKUP_SHARE
                     if compile_at is not None and cache_dir() is not None else None)
        started = time.perf_counter()
        hmax = o.max_step if o.max_step is not None else np.inf
        k = 1  # next output point
        steps_since_output = 0
        stiff, nonstiff = 0, 0
        rejected = 0  # error tests failed in a row
        evals = len(tb.C)
        while k < len(grid):
            if rejected > _MAX_REJECTIONS:
                raise _Failed(f"the error test failed {rejected} times in a row at t = {t:.6g} "
                              f"s (step {h:.3g} s): the equations jump there (a switch "
                              "written without an event, an input that changes abruptly)",
                              t, k - 1, x, h)
            h = min(h, hmax)
            last = t + h >= t_end - 1e-12 * max(1.0, abs(t_end))
            if last:
                h = t_end - t
            hmin = 16 * np.spacing(max(abs(t), 1.0))
            if h < hmin:
                raise _Failed(f"step size {h:.3g} s below the minimum at t = {t:.6g} s "
                              "(a singularity or a blow-up of the model)", t, k - 1, x, h)
            err, hrho = step(x, t, h, f)
            stats.rhs_evaluations += evals
            if not np.isfinite(err):
                h *= _MIN_FACTOR  # NaN/Inf at a trial point: shorter step
                stats.error_test_failures += 1
                rejected += 1
                continue
            if err > 1.0:
                h *= max(_MIN_FACTOR, _SAFETY * err ** exponent)
                stats.error_test_failures += 1
                rejected += 1
                continue
            rejected = 0
            x1 = step.x1.copy()
            t1 = t_end if last else t + h
            # outputs inside the step, by the continuous extension
            j = k
            while j < len(grid) and grid[j] <= t1 + 1e-14 * max(1.0, abs(t1)):
                j += 1
            if j > k:
                Kn = step.K
                inside = grid[k:j]
                theta = (inside - t) / h
                Xi = self._interpolate(x, x1, h, Kn, dense, t, theta, form)
                if inside[-1] >= t1 - 1e-14 * max(1.0, abs(t1)):
                    Xi[:, -1] = x1  # an output point at the step's end: the step itself
                X[:, k - 1:j - 1] = Xi
                k = j
                steps_since_output = 0
            stats.steps += 1
            steps_since_output += 1
            if steps_since_output > o.max_num_steps:
                raise _Failed(f"more than {o.max_num_steps} steps between two output points "
                              f"(at t = {t1:.6g} s)", t1, k - 1)
            # stiffness watch (Hairer)
            if hrho > tb.stability:
                stiff, nonstiff = stiff + 1, 0
                if stiff >= _STIFF_STEPS:
                    raise _Stiff(t1, x1, hrho)
            else:
                nonstiff += 1
                if nonstiff >= _NONSTIFF_RESET:
                    stiff = 0
            t, x, f = t1, x1, step.f1.copy()
            if key is None:
                pass
            elif key in self._machine:  # machine code ready? switch
                better = self._upgrade(key)
                if better is not None:
                    step, dense = better[1], better[2]
            elif lookup_at is not None and time.perf_counter() - started > lookup_at:
                lookup_at = None
                better = self._cached(key, form)  # compiled by an earlier run?
                if better is not None:
                    step, dense = better[1], better[2]
                    compile_at = None
            elif compile_at is not None and time.perf_counter() - started > compile_at:
                self._start_compile(key, form)  # a long run: compile in the background
                compile_at = None
            factor = _MAX_FACTOR if err == 0.0 else min(_MAX_FACTOR,
                                                        _SAFETY * err ** exponent)
            h *= factor

    def _initial_step(self, form: ODEForm, x: np.ndarray, t: float, f: np.ndarray,
                      t_end: float) -> float:
        """Hairer's starting step (Solving ODEs I, II.4)."""
        o = self.options
        scale = o.atol + np.abs(x) * o.rtol
        d0 = np.sqrt(np.mean((x / scale) ** 2)) if x.size else 0.0
        d1 = np.sqrt(np.mean((f / scale) ** 2)) if x.size else 0.0
        h0 = 1e-6 if d0 < 1e-5 or d1 < 1e-5 else 0.01 * d0 / d1
        span = t_end - t
        h0 = min(h0, span)
        f1 = np.asarray(form.f(x + h0 * f, t + h0)).ravel()
        d2 = np.sqrt(np.mean(((f1 - f) / scale) ** 2)) / h0 if x.size else 0.0
        if d1 <= 1e-15 and d2 <= 1e-15:
            h1 = max(1e-6, h0 * 1e-3)
        else:
            h1 = (0.01 / max(d1, d2)) ** (1.0 / (self.tableau.order + 1))
        return float(min(100 * h0, h1, span))


def _sum(K: list[cs.MX], c: np.ndarray, n: int) -> cs.MX:
    """``sum_j c_j K_j`` over the nonzero coefficients (term by term: cheaper to evaluate
    than a product of the stacked stages, which copies them at every stage). The nodes
    are made by ``MX.binary``: the operators build the same nodes, but their overloaded
    dispatch costs ~10 times more (about 60 us a node; the 200 nodes of a dop853 step
    took 12 ms of a 1 000-mass chain's first run)."""
    acc = cs.MX.zeros(n)
    for j in range(min(len(K), len(c))):
        if c[j] != 0:
            acc = _binary(_ADD, acc, _binary(_MUL, cs.MX(float(c[j])), K[j]))
    return acc


_binary, _ADD, _MUL = cs.MX.binary, cs.OP_ADD, cs.OP_MUL


def _point_call(f: cs.Function | None) -> PointCall | None:
    """The dense output's function called through its buffer (numpy memory, no
    conversion to a ``DM`` element by element)."""
    return None if f is None else PointCall(f)


class _Failed(Exception):
    """A failure at ``t`` after ``reached`` output points; with the state ``x`` and the
    step ``h`` when the step size collapsed (None otherwise)."""

    def __init__(self, reason: str, t: float, reached: int, x: np.ndarray | None = None,
                 h: float | None = None) -> None:
        super().__init__(reason)
        self.reason, self.t, self.reached, self.x, self.h = reason, t, reached, x, h

    @property
    def collapse(self) -> bool:
        return self.h is not None


class DOPRI5Integrator(RungeKuttaIntegrator):
    """Dormand-Prince 5(4) (``solver="dopri5"``): moderate tolerances."""

    name = "dopri5"
    tableau = DOPRI5


class DOP853Integrator(RungeKuttaIntegrator):
    """Dormand-Prince 8(5,3) (``solver="dop853"``): tight tolerances, smooth problems."""

    name = "dop853"
    tableau = DOP8

    def _error_norm(self, K: list[cs.MX], h: cs.MX, scale: cs.MX, n: int) -> cs.MX:
        e5 = _sum(K, tb_.DOP853_E5, n) / scale
        e3 = _sum(K, tb_.DOP853_E3, n) / scale
        n5, n3 = cs.sumsqr(e5), cs.sumsqr(e3)
        denom = cs.fmax(n5 + 0.01 * n3, 1e-300)
        return cs.fabs(h) * n5 / cs.sqrt(denom * n)

    def _dense_function(self, form: ODEForm, rhs: cs.Function) -> cs.Function:
        """The right-hand side, for the three extra stages of the continuous extension
        (evaluated one by one through its buffer; the linear combinations are numpy
        products, two matrix products per step for all of them)."""
        return rhs

    def _interpolate(self, x0: np.ndarray, x1: np.ndarray, h: float, K: np.ndarray,
                     dense: Any, t0: float, theta: np.ndarray, form: ODEForm) -> np.ndarray:
        A, D = tb_.DOP853_A_EXTRA, tb_.DOP853_D  # (3, 16), (4, 16)
        G = K @ _DENSE_13  # (n, 7): the 13 stages' part of the extra stages and of F
        E = np.empty((len(x0), 3), order="F")  # the extra stages
        for i, c in enumerate(tb_.DOP853_C_EXTRA):
            dy = G[:, i] + E[:, :i] @ A[i, 13:13 + i] if i else G[:, 0]
            E[:, i] = dense(x0 + h * dy, t0 + float(c) * h)[0]
        tail = G[:, 3:] + E @ D[:, 13:].T
        dx = x1 - x0
        F = np.empty((len(x0), 7))
        F[:, 0] = dx
        F[:, 1] = h * K[:, 0] - dx
        F[:, 2] = 2 * dx - h * (K[:, 12] + K[:, 0])
        F[:, 3:] = h * tail
        # Hairer's nested form th (F0 + th1 (F1 + th (F2 + th1 (F3 + ...)))), th1 = 1 - th,
        # as one product with its basis th, th th1, th^2 th1, th^2 th1^2, ..., th^4 th1^3
        B = np.empty((7, len(theta)))
        B[0] = theta
        for i in range(1, 7):
            B[i] = B[i - 1] * (1.0 - theta if i % 2 else theta)
        return x0[:, None] + F @ B
