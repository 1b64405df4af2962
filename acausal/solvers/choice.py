"""Which integrator a compiled model gets: ``simulate(..., solver="auto")``.

The rule (docs/theory.md, *Choosing the integrator*):

1. **Structure.** A model with algebraic variables that are not a small linear block (a
   closed kinematic loop's multipliers, a nonlinear algebraic loop), with events (frozen
   relations, ``when`` clauses) or with dynamic state selection goes to **IDAS**.
   Everything else is an explicit ODE ``x' = f(x, t)`` (:mod:`acausal.solvers.ode`). A
   small one (fewer than 32 states) stays with IDAS too: its Newton matrix costs nothing,
   and IDAS is the reference path of every model.
2. **Stiffness**, from the eigenvalues ``lambda`` of ``df/dx`` at the start point against
   the span ``T`` of the output grid. A mode is *dissipative* when it is heavily damped
   (``-Re lambda >= |lambda| / 2``); every other mode (an oscillation, a growing mode)
   must be resolved by any method. With ``rho_d`` the fastest dissipative decay rate and
   ``rho_r`` the fastest rate to resolve (at least ``10 / T``), the ODE is **stiff** when
   ``rho_d T > 500`` and ``rho_d > 10 rho_r``: an explicit method would then be held to
   steps of ``~3 / rho_d`` by stability alone, far below what accuracy asks for. The
   mirrored spectrum of a conservative mechanism (``+-a``, ``+-i omega``) is never stiff:
   its fast modes must be followed anyway.
3. **Method.** Stiff: **cvodes-bdf** (direct dense or sparse LU), or **cvodes-krylov**
   (Newton-GMRES, matrix-free) when the Jacobian is dense and the system large (over
   1 000 states). Non-stiff: **dop853** (explicit Runge-Kutta 8(5,3) with error control)
   or **cvodes-adams**, whichever a cost model (:func:`estimate_costs`) finds cheaper
   once Adams is charged for matching dop853's accuracy. Per dop853 step, Adams takes
   about 8 steps of 1.5 evaluations (measured from rtol 1e-4 to 1e-10 on the
   mass-spring and pendulum chains: 7-8.6 and 1.2-1.8), so both spend about 12
   right-hand side evaluations; what differs is the rest: dop853's Python step loop
   and stage combinations (20 us + 75 ns per state a step) and the 3 evaluations of
   its continuous extension in steps with output points, against CVODES's per-step
   vector work in C (1 us + 7 ns per state); and the set-up: the step function
   (~8 ms) against CasADi's CVODES interface, which forms the symbolic Jacobian (cost
   ~ operations x colours of its sparsity: 0.2 s for a 50-link pendulum). The steps
   are estimated from the fastest rate to resolve. At equal rtol dop853's global error
   on smooth mechanics is 5-30 times smaller (the pendulum and mass-spring chains), and
   Adams's steps grow like rtol^-0.12: matching it costs Adams about 1.3 times its
   work (:data:`ACCURACY`).

The start Jacobian can mislead (stiffness may appear later): the Runge-Kutta methods
watch for it at every step and continue with CVODES BDF if it shows (with a
:class:`~acausal.errors.SolverWarning`), so the choice never costs accuracy.

Eigenvalues: all of them (dense) up to 64 states; above, the 8 of largest magnitude (the
fast modes the rule is about) by Arnoldi's iteration with Krylov-Schur restarts
(:mod:`acausal.solvers.arnoldi`, on numpy: no scipy import), on the sparse Jacobian when
it is sparse, on Jacobian-vector products otherwise. The Jacobian (small or sparse) comes
from central differences, two evaluations per colour of its columns (to about 1e-10).
Modes outside those 8 are not looked at: if one of them had to be resolved, ``rho_r`` is
underestimated and the rule can only call a non-stiff model stiff (a slower method), never
the reverse. No spectrum (a Jacobian that is not finite, eigenvalues that do not
converge): IDAS.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from dataclasses import field
from typing import TYPE_CHECKING

import numpy as np

from ..csr import CSR
from ..pointcall import PointCall
from ..records import record
from .ode import NotAnODE, ODEForm, ode_form

if TYPE_CHECKING:
    from ..compiler import CompiledModel

__all__ = ["SolverChoice", "choose_solver", "analyse", "estimate_costs", "SMALL",
           "STIFF_SPAN", "STIFF_RATIO", "ACCURACY"]

SMALL = 32  # states below which an explicit ODE stays with IDAS
STIFF_SPAN = 500.0  # rho_d T above which stability would dominate an explicit method
STIFF_RATIO = 10.0  # rho_d / rho_r above which the ODE is stiff
_DAMPED = 0.5  # -Re(lambda) / |lambda| of a dissipative mode
#: the work Adams needs to match dop853's global error at equal rtol (10 times
#: smaller, with Adams's steps growing like rtol^-0.12: 10^0.12)
ACCURACY = 1.3
# The cost model (processor seconds, measured by benchmarks/bench_choice.py on two shared
# cores, which prints them again; only their ratios matter)
_SECONDS_PER_OPERATION = 3.5e-9  # the right-hand side in CasADi's virtual machine
_RK_SETUP, _RK_SETUP_PER_STATE = 7.5e-3, 1e-6  # dop853's step function
_RK_STEP, _RK_STEP_PER_STATE = 20e-6, 75e-9  # dop853's step beyond its evaluations
_RK_STAGES, _RK_DENSE = 12, 3  # evaluations per step, and per step with output points
_AD_SETUP = 0.8e-3  # CasADi's CVODES interface, without its Jacobian
_AD_JACOBIAN = 0.35e-6  # per operation and colour of the symbolic Jacobian it forms
_AD_STEP, _AD_STEP_PER_STATE = 1e-6, 7e-9  # CVODES's work per Adams step
_AD_STEPS, _AD_EVALUATIONS = 8.0, 1.5  # Adams steps per dop853 step, evaluations each
_RK_STEP_SCALE = 0.09  # dop853 steps ~ this x T rho_r rtol^(-1/8) (mass-spring chain)
_MIN_STEPS = 10
_DENSE_EIG = 64  # states up to which every eigenvalue is computed
_LARGE = 1000  # states above which a dense stiff system goes to Newton-GMRES


@record
class SolverChoice:
    """The automatic choice and why (``explain``)."""

    solver: str
    reason: str
    n_states: int = 0
    eigenvalues: np.ndarray = field(default_factory=lambda: np.zeros(0, complex))
    rho_dissipative: float = 0.0
    rho_resolve: float = 0.0

    def __str__(self) -> str:
        return f"{self.solver}: {self.reason}"


def choose_solver(cm: CompiledModel, requested: str, p: np.ndarray, grid: np.ndarray,
                  mode: str | None = None, rtol: float = 1e-6) -> str:
    """The backend to run: ``requested`` unless it is ``"auto"`` (see the module
    documentation; :func:`analyse` gives the reasons). An IDAS ``mode`` keeps IDAS. The
    choice is kept per model, parameter values and span."""
    if requested != "auto":
        return requested
    if mode is not None:
        return "idas"
    key = (np.asarray(p, dtype=float).tobytes(), float(grid[-1] - grid[0]), len(grid),
           float(rtol))
    kept = _CHOICES.setdefault(cm, {})
    if key not in kept:
        kept[key] = analyse(cm, p, grid, rtol)
    return kept[key].solver


_CHOICES: weakref.WeakKeyDictionary[CompiledModel, dict[tuple[bytes, float, int, float],
                                                        SolverChoice]] = (
    weakref.WeakKeyDictionary())


def analyse(cm: CompiledModel, p: np.ndarray, grid: np.ndarray,
            rtol: float = 1e-6) -> SolverChoice:
    """The automatic choice for ``cm`` with parameter values ``p`` on ``grid`` at the
    relative tolerance ``rtol``."""
    dae = cm.dae
    if dae.relations or cm.flat.whens:
        return SolverChoice("idas", "the model has events (relations or when clauses)")
    if cm.selection.dynamic:
        return SolverChoice("idas", "the state selection is dynamic")
    try:
        form = ode_form(dae, p)
    except NotAnODE as exc:
        return SolverChoice("idas", f"not an explicit ODE: {exc}")
    n = form.n
    if n < SMALL:
        return SolverChoice("idas", f"a small explicit ODE ({n} states): IDAS's Newton "
                            "matrix costs nothing", n)
    x0 = np.array([cm.start_values.get(name, 0.0) for name in dae.x_names], dtype=float)
    t0, T = float(grid[0]), float(grid[-1] - grid[0])
    lam, why = _eigenvalues(form, x0, t0)
    if why:
        return SolverChoice("idas", why, n)
    mag = np.abs(lam)
    damped = -lam.real >= _DAMPED * mag
    rho_d = float(np.max(-lam.real[damped], initial=0.0)) + 0.0  # (no -0)
    rho_r = float(max(np.max(mag[~damped], initial=0.0), 10.0 / T))
    stiff = rho_d * T > STIFF_SPAN and rho_d > STIFF_RATIO * rho_r
    numbers = (f"fastest dissipative decay {rho_d:.3g} 1/s, fastest rate to resolve "
               f"{rho_r:.3g} 1/s over {T:.3g} s")
    if stiff:
        big_dense = n > _LARGE and form.sparsity.nnz() > 0.1 * n * n
        solver = "cvodes-krylov" if big_dense else "cvodes-bdf"
        return SolverChoice(solver, f"stiff explicit ODE ({numbers})", n, lam, rho_d, rho_r)
    rk, ad = estimate_costs(form, rho_r * T, len(grid) - 1, rtol)
    solver = "cvodes-adams" if ACCURACY * ad < rk else "dop853"
    return SolverChoice(solver, f"non-stiff explicit ODE ({numbers}); estimated dop853 "
                        f"{rk * 1e3:.3g} ms, cvodes-adams {ad * 1e3:.3g} ms (x{ACCURACY:g} "
                        "to match dop853's accuracy)", n, lam, rho_d, rho_r)


def estimate_costs(form: ODEForm, rate_span: float, n_outputs: int,
                   rtol: float) -> tuple[float, float]:
    """Estimated seconds of dop853 and of cvodes-adams on ``form`` over a span whose
    fastest motion to resolve is ``rate_span`` (``rho_r T``), with ``n_outputs`` output
    intervals (the module documentation gives the model)."""
    n = form.n
    f = _SECONDS_PER_OPERATION * form.f.n_instructions()
    steps = max(_MIN_STEPS, _RK_STEP_SCALE * rate_span * max(rtol, 1e-14) ** -0.125)
    dense = min(1.0, n_outputs / steps)  # share of the steps with output points
    rk = (_RK_SETUP + _RK_SETUP_PER_STATE * n
          + steps * ((_RK_STAGES + _RK_DENSE * dense) * f + _RK_STEP
                     + _RK_STEP_PER_STATE * n))
    colours = form.sparsity.uni_coloring().size2() if n else 0
    ad = (_AD_SETUP + _AD_JACOBIAN * form.f.n_instructions() * colours
          + _AD_STEPS * steps * (_AD_EVALUATIONS * f + _AD_STEP + _AD_STEP_PER_STATE * n))
    return rk, ad


def _eigenvalues(form: ODEForm, x0: np.ndarray, t0: float) -> tuple[np.ndarray, str]:
    """Eigenvalues of ``df/dx`` at ``(x0, t0)``: all of them for a small system, the 8 of
    largest magnitude otherwise (to 1e-3: :mod:`acausal.solvers.arnoldi`); or none and
    why."""
    n = form.n
    not_finite = "the Jacobian at the start is not finite"
    if n <= _DENSE_EIG:
        D = _jacobian(form, x0, t0).toarray()
        if not np.isfinite(D).all():
            return np.zeros(0, complex), not_finite
        return np.linalg.eigvals(D), ""
    if form.sparsity.nnz() <= 20 * n:  # sparse: form it
        J = _jacobian(form, x0, t0)

        def matvec(v: np.ndarray) -> np.ndarray:
            return J.dot(v[:, None])[:, 0]
    else:
        jvp = form.jvp()

        def matvec(v: np.ndarray) -> np.ndarray:
            return np.asarray(jvp(x0, t0, v)).ravel()
    from .arnoldi import largest_eigenvalues  # (here: a small model never needs it)

    lam, converged = largest_eigenvalues(matvec, n, k=8, tol=1e-3)
    if lam.size:  # (those that converged, if not all)
        return lam, ""
    return lam, (not_finite if not converged and _not_finite(matvec, n) else
                 "the largest eigenvalues of the Jacobian at the start did not converge")


def _not_finite(matvec: Callable[[np.ndarray], np.ndarray], n: int) -> bool:
    """Whether the Jacobian has an entry that is not finite: its product with a vector of
    ones is then not finite (an infinite entry times 1, a NaN)."""
    return not np.isfinite(matvec(np.ones(n))).all()


def _jacobian(form: ODEForm, x0: np.ndarray, t0: float) -> CSR:
    """``df/dx`` at one point by central differences of the right-hand side, one pair of
    evaluations per colour of its columns (columns that share no row are perturbed
    together: a mass-spring chain's 2 000 or 20 000 columns take 3 colours), steps
    ``eps^(1/3) max(1, |x_j|)``: entries to about 1e-10 relative, far finer than the
    rule's thresholds (factors 10 and 500). Exact directional derivatives would first need
    their function made: 42 ms at 20 000 states, against 2 ms for the 6 evaluations; the
    symbolic Jacobian took 15 ms at 2 000. A numpy CSR (:mod:`acausal.csr`): no scipy."""
    n = form.n
    sp = form.sparsity
    colouring = sp.uni_coloring()  # (n x colours): column c holds the columns of colour c
    colour = np.zeros(n, dtype=np.int64)
    colour[np.asarray(colouring.row(), dtype=np.int64)] = np.repeat(
        np.arange(colouring.size2()), np.diff(colouring.colind()))
    f = PointCall(form.f)  # (through its buffer: no conversions)
    h = np.finfo(float).eps ** (1 / 3) * np.maximum(1.0, np.abs(x0))
    h = (x0 + h) - x0  # (steps exactly representable)
    DF = np.empty((n, colouring.size2()))
    for c in range(colouring.size2()):
        step = np.where(colour == c, h, 0.0)
        DF[:, c] = f(x0 + step, t0)[0] - f(x0 - step, t0)[0]
    colind = np.asarray(sp.colind(), dtype=np.int64)
    rows = np.asarray(sp.row(), dtype=np.int64)
    cols = np.repeat(np.arange(n), np.diff(colind))
    values = DF[rows, colour[cols]] / (2 * h[cols])
    return CSR.from_coo(rows, cols, values, (n, n))
