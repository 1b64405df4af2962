"""Newmark-beta integration on the independent displacement modes (fixed step).

The method of Xiang, Wu & Zhou (2015, section 3), with an exact projection in place of
their second-order Taylor correction:

1. At the start of a step, at configuration ``x_n``, a column-pivoted QR of ``A^T`` gives
   orthonormal bases of the null space ``U_n`` (the ``p`` independent displacement modes,
   eq. 40) and of the row space ``N_n`` of the constraint matrix, and the independent rows
   (the rank; redundant rows are dropped, they hold when the others do).
2. The displacement over the step is ``d = U_n alpha + N_n mu`` (eq. 41/45): ``alpha``
   are the modal coordinates of the step (``alpha_n = 0``), ``mu`` the normal correction
   that puts ``x_n + d`` back on the constraint manifold ``Phi(x, t) = 0``; the paper
   approximates ``N mu`` by its second-order term ``-1/2 A+ Phi'' dt`` (eq. 45), here it is
   solved for by Newton's method to ``|Phi| <= tol`` (**projection**; no drift builds up).
   Since ``U^T N = 0``, ``alpha = U_n^T (x - x_n)`` exactly, so ``alpha' = U_n^T x'`` and
   ``alpha'' = U_n^T x''``.
3. Newmark's formulas (eqs. 53-54, ``beta = 1/4``, ``gamma = 1/2`` by default) advance
   ``alpha``. At ``t_{n+1}`` the velocity is the one with modal rates ``alpha'`` that
   satisfies ``A x' + Phi_t = 0``; the equations of motion projected on the tangent space
   at ``x_{n+1}`` (basis ``J = dx/dalpha``) give the modal acceleration:
   ``(J^T M J) alpha'' = J^T (F - M w)``, ``w`` the particular solution of
   ``A x'' + c = 0`` (eqs. 52/57). The implicit equation in ``alpha''_{n+1}`` is solved by
   fixed-point iteration (Newton with a difference Jacobian when it converges slowly).
4. ``x_{n+1}``, ``x'_{n+1}``, ``x''_{n+1}`` are exact nodal quantities: the next step starts
   a new chart there (the modes are updated as the configuration changes, and a change of
   rank is recorded).

The **generalized-alpha** family (Chung & Hulbert 1993, in the form of Arnold & Bruls 2007
with a pseudo-acceleration ``a*``) adds numerical damping of the high modes:
``rho_inf = 1`` is the trapezoidal Newmark rule above, ``rho_inf < 1`` damps; the
**HHT-alpha** method is its ``alpha_m = 0`` member.

Failures (a projection that does not converge, an iteration that does not, a singular
reduced mass matrix, a local error estimate above the requested bound) stop the
integration: the trajectory computed so far is returned with the time and the reason.
"""

from __future__ import annotations

import time as _time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.linalg.lapack import dgesv, dgetrf, dgetrs

from ..errors import ArgumentError
from .system import RANK_RTOL, NodalSystem, null_space

__all__ = ["Scheme", "NewmarkNullspace", "Trajectory", "NodalIntegrationError"]


#: The iteration on the modal accelerations stops when the error left in them is below
#: ``ETA_RTOL`` times their size (floor 1 m/s2; roundoff level) or below ``ITER_RTOL`` of
#: their change over the step, whichever is larger, and its effect on the positions is
#: below the constraint tolerance. (A position-only test let the velocity error grow like
#: the number of steps times dt times the iteration error.)
ETA_RTOL = 1e-12

#: ... and when the error left is below this fraction of the change of the modal
#: acceleration over the step: the error the iteration adds to a step is then 1e-5 of the
#: step's truncation error (dt^2 |beta - 1/6| |a_{n+1} - a_n|), so it stays 1e-5 of the
#: discretisation error globally, whatever the step.
ITER_RTOL = 1e-5

#: The contraction rate of the fixed point is measured (two evaluations) every
#: ``RATE_REFRESH`` steps and after any change; in between, a step whose first evaluation
#: changes the accelerations by less than the tolerance divided by the remembered rate is
#: accepted after that one evaluation.
RATE_REFRESH = 16

#: The rank of the constraint matrix is decided anew (pivoted QR) every ``RANK_CHECK``
#: steps and whenever the chart's ``B = [U^T; A_rows]`` turns singular (relative pivot
#: below ``PIVOT_RTOL``); in between, the modes follow from the last step's tangent basis.
#: A rank that changes between two checks also shows as violated dropped rows, which stops
#: the step with that reason.
RANK_CHECK = 20
PIVOT_RTOL = 1e-10

#: A failed step whose last configuration has the independent constraints' smallest
#: singular value below this fraction of the largest is reported as reaching a singular
#: configuration (the deployed truss, regular, has 2.7e-2; its stowed bundle, 0).
SINGULAR_NOTE = 1e-3

#: Projections go on below the constraint tolerance down to this fraction of it (or until
#: a chord step gains less than half): cheap, and it keeps projection noise out of the
#: accelerations.
PROJECTION_MARGIN = 1e-3

#: Fixed-point iteration on the modal accelerations hands over to Newton's method (with a
#: difference Jacobian, kept for the next steps) when one iteration reduces the change by
#: less than this factor: the Jacobian costs p evaluations once, then steps take ~2.
NEWTON_RATIO = 0.01

#: Default bound on the constraint drift of the paper's correction (``correction="taylor"``),
#: relative to the model's extent: 1e-5 (40 um on the 3.9 m truss, 80 um on the 8 m reflector),
#: about a tenth of the play of the pins of such structures.
DRIFT_RTOL = 1e-5


def _lu_solve(lu: tuple[np.ndarray, np.ndarray], b: np.ndarray) -> np.ndarray:
    """Solve with an LU factorisation from ``dgetrf`` (LAPACK directly: the scipy wrappers
    cost more than the solve for the small systems of a step)."""
    x, info = dgetrs(lu[0], lu[1], b)
    if info != 0:  # pragma: no cover - invalid arguments
        raise ValueError(f"dgetrs failed (info = {info})")
    return x


class NodalIntegrationError(RuntimeError):
    """A step of the null-space integrator failed (``t`` and ``reason`` say where, why)."""

    def __init__(self, t: float, reason: str) -> None:
        super().__init__(f"t = {t:.6g} s: {reason}")
        self.t = t
        self.reason = reason


@dataclass(frozen=True)
class Scheme:
    """Parameters of the generalized-alpha family (``alpha_m = alpha_f = 0``,
    ``beta = 1/4``, ``gamma = 1/2`` is the trapezoidal Newmark rule of the paper)."""

    alpha_m: float = 0.0
    alpha_f: float = 0.0
    beta: float = 0.25
    gamma: float = 0.5
    name: str = "newmark"

    @classmethod
    def newmark(cls, beta: float = 0.25, gamma: float = 0.5) -> Scheme:
        """Newmark-beta (default: average acceleration, unconditionally stable)."""
        return cls(0.0, 0.0, beta, gamma, f"newmark(beta={beta:g}, gamma={gamma:g})")

    @classmethod
    def generalized_alpha(cls, rho_inf: float = 0.8) -> Scheme:
        """Chung-Hulbert generalized-alpha with spectral radius ``rho_inf`` at infinite
        frequency (``1``: no damping, the trapezoidal rule; ``0``: annihilates the highest
        modes in one step). Second order."""
        if not 0.0 <= rho_inf <= 1.0:
            raise ArgumentError(f"rho_inf must be in [0, 1], not {rho_inf}")
        am = (2 * rho_inf - 1) / (rho_inf + 1)
        af = rho_inf / (rho_inf + 1)
        gamma = 0.5 - am + af
        return cls(am, af, 0.25 * (gamma + 0.5) ** 2, gamma,
                   f"generalized-alpha(rho_inf={rho_inf:g})")

    @classmethod
    def hht(cls, alpha: float = 0.05) -> Scheme:
        """Hilber-Hughes-Taylor ``alpha`` in ``[0, 1/3]`` (``alpha_m = 0``,
        ``alpha_f = alpha``, ``gamma = 1/2 + alpha``, ``beta = (1 + alpha)^2 / 4``)."""
        if not 0.0 <= alpha <= 1.0 / 3.0:
            raise ArgumentError(f"the HHT alpha must be in [0, 1/3], not {alpha}")
        return cls(0.0, alpha, 0.25 * (1 + alpha) ** 2, 0.5 + alpha, f"hht(alpha={alpha:g})")

    @property
    def trapezoidal(self) -> bool:
        return self.alpha_m == 0.0 and self.alpha_f == 0.0


@dataclass
class Trajectory:
    """Result of the null-space integrator at the step times ``t``: coordinates ``x``,
    velocities ``v``, accelerations ``a`` (``(nt, n)``), the number of independent modes
    ``modes`` and the local error estimates ``error`` at every step; ``status`` is
    ``"ok"`` or ``"failed"`` (then ``t_fail`` and ``message`` say when and why)."""

    t: np.ndarray
    x: np.ndarray
    v: np.ndarray
    a: np.ndarray
    modes: np.ndarray
    error: np.ndarray
    status: str = "ok"
    message: str = ""
    t_fail: float | None = None
    stats: dict[str, Any] = field(default_factory=dict)
    multipliers: np.ndarray | None = None  # (nt, len(rows)) when recorded

    def mode_table(self) -> list[tuple[float, float, int]]:
        """Intervals of constant mode count: ``[(t_from, t_to, p), ...]``."""
        out: list[tuple[float, float, int]] = []
        for t, p in zip(self.t, self.modes, strict=True):
            if out and out[-1][2] == p:
                out[-1] = (out[-1][0], float(t), int(p))
            else:
                out.append((float(t), float(t), int(p)))
        return out


@dataclass
class _Chart:
    """Null-space chart at a configuration: the modal basis ``U``, the independent rows
    of the constraint matrix, the rank, and the LU factors of ``B = [U^T; A_rows]``."""

    x: np.ndarray
    U: np.ndarray
    rows: np.ndarray
    rank: int
    lu: tuple[np.ndarray, np.ndarray]
    # a chart made from the last step's tangent basis J keeps that step's factors
    # ([U_old^T; A_rows] = lu) and corrects with J: see NewmarkNullspace._normal_solve
    J: np.ndarray | None = None
    Sinv: np.ndarray | None = None


class NewmarkNullspace:
    """Fixed-step Newmark / generalized-alpha integrator on the null space of the
    constraint matrix (see the module documentation).

    Parameters
    ----------
    system : the numeric nodal system
    dt : step [s]
    scheme : :class:`Scheme` (default: Newmark, beta = 1/4, gamma = 1/2)
    tol : constraint tolerance [m]: positions are projected until ``|Phi| <= tol``, and
        the iteration on the accelerations stops when it moves the positions by less
        (default ``1e-10`` times the model's extent)
    err_tol : bound on the local error estimate (Zienkiewicz & Xie 1991)
        ``dt^2 |beta - 1/6| |x''_{n+1} - x''_n|`` [m]; a step above it fails. ``None``
        (default): only recorded.
    rank_rtol : relative tolerance of the rank decision (:data:`RANK_RTOL`)
    max_iter : iterations on the accelerations per step
    correction : ``"projection"`` (default): every step is projected back on the
        constraint manifold, ``|Phi| <= tol``; ``"taylor"``: the paper's second-order
        correction (eq. 45) without projection, the run failing when the accumulated
        drift exceeds ``drift_tol``
    drift_tol : bound on ``|Phi|`` for ``correction="taylor"`` [m] (default ``1e-6`` times
        the model's extent)
    """

    def __init__(self, system: NodalSystem, dt: float, scheme: Scheme | None = None,
                 tol: float | None = None, err_tol: float | None = None,
                 rank_rtol: float = RANK_RTOL, max_iter: int = 25,
                 max_projection: int = 25, correction: str = "projection",
                 drift_tol: float | None = None) -> None:
        if not dt > 0:
            raise ArgumentError(f"the step dt must be positive, not {dt}")
        self.sys = system
        self.h = float(dt)
        self.scheme = scheme or Scheme.newmark()
        self.tol = float(tol) if tol is not None else 1e-10 * system.length_scale()
        self.err_tol = err_tol
        self.rank_rtol = rank_rtol
        self.max_iter = max_iter
        self.max_projection = max_projection
        if correction not in ("projection", "taylor"):
            raise ArgumentError(f"correction must be 'projection' or 'taylor', not {correction!r}")
        self.correction = correction
        self.drift_tol = (float(drift_tol) if drift_tol is not None
                          else DRIFT_RTOL * system.length_scale())
        self.last_state: Any = None
        self._a_hist: list[np.ndarray] = []  # accelerations of the last steps (predictor)
        self._JG: np.ndarray | None = None  # Jacobian of the modal iteration (kept)
        self._rate: float | None = None  # contraction rate of the fixed point (kept)
        self._since_check = 0  # steps since the last rank-revealing factorisation
        self._last_MF: Any = None
        self.last_multipliers: Any = None
        self.counters: dict[str, Any] = {
            "steps": 0, "iterations": 0, "projections": 0, "newton_fallbacks": 0,
            "factorizations": 0}

    # ------------------------------------------------------------------
    def chart(self, x: np.ndarray, t: float, previous: _Chart | None = None) -> _Chart:
        """Null-space chart at ``x`` by a rank-revealing factorisation."""
        _, A, _ = self.sys.kinematics(x, t)
        return self._chart_from(A, x, previous)

    @staticmethod
    def _factor_B(U: np.ndarray, A: np.ndarray, rows: np.ndarray
                  ) -> tuple[tuple[np.ndarray, np.ndarray], bool]:
        """LU of ``B = [U^T; A_rows]``; False when it is (nearly) singular: the rows are no
        longer independent, or the rank changed."""
        lu, piv, info = dgetrf(np.vstack([U.T, A[rows]]))
        d = np.abs(np.diag(lu))
        ok = info == 0 and (d.size == 0 or d.min() > PIVOT_RTOL * d.max())
        return (lu, piv), bool(ok)

    def _chart_from(self, A: np.ndarray, x: np.ndarray, previous: _Chart | None,
                    J: np.ndarray | None = None, lu_J: Any = None) -> _Chart:
        """The chart at ``x`` (``A`` the constraint matrix there).

        Between rank checks, the modal basis is the orthonormal basis closest to the last
        step's (the polar factor ``J (J^T J)^(-1/2)`` of the tangent basis ``J`` of that
        step, which spans the null space here): the modal coordinates then vary
        continuously, and no factorisation is needed (the LU of that step's
        ``[U_old^T; A_rows]`` serves, see :meth:`_normal_solve`). Every
        :data:`RANK_CHECK` steps, and whenever ``B`` turns singular, a column-pivoted QR of
        ``A^T`` decides the rank again (the independent rows are kept while they stay
        independent) and its basis is turned to the closest match of the previous one
        (orthogonal Procrustes)."""
        if previous is not None and J is not None and lu_J is not None and J.shape[1] and \
                self._since_check < RANK_CHECK:
            w, Q = np.linalg.eigh(J.T @ J)
            if w.min() > PIVOT_RTOL * w.max():
                U = J @ ((Q / np.sqrt(w)) @ Q.T)
                self._since_check += 1
                return _Chart(x, U, previous.rows, previous.rank, lu_J, J,
                              (Q / w) @ Q.T)
        _, U, r, piv = null_space(A, self.rank_rtol)
        self.counters["factorizations"] += 1
        self._since_check = 0
        rows = np.sort(piv[:r])
        if previous is not None and r == previous.rank and not np.array_equal(
                rows, previous.rows):
            if self._factor_B(U, A, previous.rows)[1]:
                rows = previous.rows  # still independent: keep them (same multipliers)
        if previous is not None and previous.U.shape[1] == U.shape[1] and U.shape[1]:
            W, _, Zt = np.linalg.svd(U.T @ previous.U)
            U = U @ (W @ Zt)
        elif previous is not None:
            self._JG = None  # the mode count changed: a Jacobian of the old modes is void
        lu, ok = self._factor_B(U, A, rows)
        if not ok:  # pragma: no cover - the pivoted QR's rows are independent
            raise NodalIntegrationError(0.0, "singular chart")
        return _Chart(x, U, rows, r, lu)

    def _solve_tangent(self, ch: _Chart, A: np.ndarray, Pt: np.ndarray, adot: np.ndarray,
                       t: float):
        """At a configuration: the velocity with modal rates ``adot`` that satisfies
        ``A v + Phi_t = 0`` and the tangent basis ``J = dx/dalpha`` (``U^T J = I``,
        ``A J = 0``), from one LU of ``B = [U^T; A_I]``."""
        p = ch.U.shape[1]
        B = np.vstack([ch.U.T, A[ch.rows]])
        lu = dgetrf(B)[:2]
        rhs = np.zeros((B.shape[0], p + 1))
        rhs[:p, :p] = np.eye(p)
        rhs[:p, p] = adot
        rhs[p:, p] = -Pt[ch.rows]
        sol = _lu_solve(lu, rhs)
        if not np.all(np.isfinite(sol)):
            raise NodalIntegrationError(
                t, "the tangent system [U^T; A] is singular: the mechanism changed its mode "
                   "count within the step; reduce dt")
        return sol[:, p], sol[:, :p], lu

    def _taylor(self, ch: _Chart, x: np.ndarray, d1: np.ndarray, t: float,
                h: float) -> np.ndarray:
        """The paper's update (eq. 45): the first-order displacement ``d1 = U alpha`` plus
        the second-order normal correction ``-1/2 A+ (d1^T Phi_xx d1)`` (time terms of a
        rheonomic constraint included); no projection, so the constraint error of each
        step (third order) accumulates."""
        _, A, Pt = self.sys.kinematics(x, t)
        c, _, _ = self.sys.inertia_forces(x, d1 / h, t)
        B = np.vstack([ch.U.T, A[ch.rows]])
        rhs = np.zeros(x.size)
        rhs[ch.U.shape[1]:] = -(Pt[ch.rows] * h + 0.5 * h * h * c[ch.rows])
        return x + d1 + np.linalg.solve(B, rhs)

    @staticmethod
    def _normal_solve(ch: _Chart, rhs: np.ndarray) -> np.ndarray:
        """``d`` with ``U^T d = 0`` and ``A_rows d = rhs[p:]`` (``rhs[:p] = 0``): a Newton step
        normal to the chart. For a chart made from a tangent basis ``J`` (with
        ``[U_old^T; A_rows] J = [I; 0]`` and ``U = J (J^T J)^(-1/2)``) the old factors give
        ``d0`` with ``U_old^T d0 = 0``, and ``d = d0 - J (J^T J)^-1 J^T d0``."""
        d = _lu_solve(ch.lu, rhs)
        if ch.J is not None:
            d = d - ch.J @ (ch.Sinv @ (ch.J.T @ d))
        return d

    def _project(self, ch: _Chart, xp: np.ndarray, t: float,
                 lu: Any) -> tuple[np.ndarray, np.ndarray]:
        """Newton (chord) steps along the row space of the chart until ``|Phi| <= tol``.

        The steps go on to ``PROJECTION_MARGIN * tol`` while they still gain (one chord
        step more, near roundoff): the accelerations computed at the projected point then
        carry no noise from the projection, and the iteration on them can converge to its
        own relative tolerance."""
        p = ch.U.shape[1]
        x = xp
        last = np.inf
        for _ in range(self.max_projection):
            Phi = self.sys.phi(x, t)
            err = float(np.max(np.abs(Phi))) if Phi.size else 0.0
            if err <= PROJECTION_MARGIN * self.tol or (err <= self.tol and err > 0.5 * last):
                return x, Phi
            if not np.isfinite(err) or (err > 0.9 * last and err > 1e3 * self.tol):
                break
            last = err
            rhs = np.zeros(x.size)
            rhs[p:] = -Phi[ch.rows]
            x = x + (self._normal_solve(ch, rhs) if lu is None else _lu_solve(lu, rhs))
            self.counters["projections"] += 1
        raise NodalIntegrationError(
            t, f"the configuration could not be projected on the constraint manifold "
               f"(|Phi| = {err:.3g} m > tol = {self.tol:.3g} m after Newton steps): the step "
               "dt is too large for the curvature of the motion, or the mechanism reached a "
               "singular configuration; reduce dt")

    def _accel(self, ch: _Chart, x: np.ndarray, adot: np.ndarray, t: float):
        """At configuration ``x`` with modal rates ``adot``: the velocity, the tangent basis
        ``J``, the particular acceleration ``w`` (``A w + c = 0``, ``U^T w = 0``) and the
        modal acceleration of the projected equations of motion
        ``(J^T M J) alpha'' = J^T (F - M w)``."""
        _, A, Pt = self.sys.kinematics(x, t)
        v, J, lu = self._solve_tangent(ch, A, Pt, adot, t)
        c, M, F = self.sys.inertia_forces(x, v, t)
        rhs = np.zeros(x.size)
        rhs[ch.U.shape[1]:] = -c[ch.rows]
        w = _lu_solve(lu, rhs)
        if J.shape[1] == 0:  # no independent mode: the motion is prescribed
            return v, J, w, np.zeros(0), lu, A, M, F
        MJ = M @ J
        _, _, eta, info = dgesv(J.T @ MJ, J.T @ (F - M @ w))
        if info != 0 or not np.all(np.isfinite(eta)):
            raise NodalIntegrationError(
                t, "the reduced mass matrix J^T M J is singular: a mode moves no mass "
                   "(a Node without mass that no constraint holds?)")
        return v, J, w, eta, lu, A, M, F

    # ------------------------------------------------------------------
    def initial_state(self, x0: np.ndarray, v0: np.ndarray, t0: float):
        x, v = self.sys.consistent_start(x0, v0, t0, self.tol)
        ch = self.chart(x, t0)
        v, J, w, eta, *_ = self._accel(ch, x, ch.U.T @ v, t0)
        a = J @ eta + w
        return x, v, a, ch

    def run(self, t_out: np.ndarray, x0: np.ndarray | None = None,
            v0: np.ndarray | None = None, state: Any = None,
            multiplier_rows: np.ndarray | None = None) -> Trajectory:
        """Integrate from ``t_out[0]`` through the output times ``t_out`` (each interval in
        equal steps no longer than ``dt``). Never raises on a failed step: the trajectory
        up to the failure has ``status = "failed"``.

        ``state`` (a previous run's :attr:`last_state` ending at ``t_out[0]``) continues
        that run exactly (accelerations and, for generalized-alpha, the
        pseudo-acceleration carried over) instead of restarting from ``x0``, ``v0``.
        With ``multiplier_rows`` the multipliers of these (independent) constraint rows are
        recorded at the output times (``Trajectory.multipliers``).
        """
        tic = _time.perf_counter()
        t_out = np.asarray(t_out, dtype=float)
        x0 = self.sys.x0 if x0 is None else np.asarray(x0, dtype=float)
        v0 = self.sys.v0 if v0 is None else np.asarray(v0, dtype=float)
        t = float(t_out[0])
        sc = self.scheme
        if state is not None:
            x, v, a, astar, ch = state
        else:
            try:
                x, v, a, ch = self.initial_state(x0, v0, t)
            except (NodalIntegrationError, ValueError) as exc:
                msg = exc.reason if isinstance(exc, NodalIntegrationError) else str(exc)
                empty = np.zeros((0, self.sys.n))
                return Trajectory(t_out[:0], empty, empty, empty, np.zeros(0, int),
                                  np.zeros(0), "failed", f"no consistent start: {msg}", t)
            astar = a.copy()  # pseudo-acceleration (ambient); a itself for the trapezoidal rule
        T, X, V, Acc, P, E = [t], [x], [v], [a], [ch.U.shape[1]], [0.0]
        self.last_state = (x, v, a, astar, ch)
        L: list[Any] = [None]  # multipliers at the output times (None: computed at the end)
        status, message, reason, t_fail = "ok", "", "", None
        for k in range(1, len(t_out)):
            nsub = max(1, int(np.ceil((t_out[k] - t_out[k - 1]) / self.h - 1e-9)))
            h = (t_out[k] - t_out[k - 1]) / nsub
            try:
                for _ in range(nsub):
                    x, v, a_new, astar, ch = self.step(x, v, a, astar, ch, t, h)
                    err = h * h * abs(sc.beta - 1.0 / 6.0) * float(np.max(np.abs(a_new - a)))
                    a = a_new
                    t = t + h
                    if self.err_tol is not None and err > self.err_tol:
                        raise NodalIntegrationError(
                            t, f"local error estimate {err:.3g} m exceeds err_tol = "
                               f"{self.err_tol:.3g} m; reduce dt")
            except NodalIntegrationError as exc:
                status, t_fail = "failed", exc.t if exc.t else t
                reason = f"{exc.reason} (step dt = {h:.3g} s)" + self._near_singular(x, t)
                message = (f"null-space Newmark integration failed at t = {t_fail:.6g} s: "
                           f"{reason}. The result up to t = {t:.6g} s is kept.")
                break
            self.last_state = (x, v, a, astar, ch)
            lm = self.last_multipliers
            L.append(lm[1] if multiplier_rows is not None and lm is not None
                     and np.array_equal(lm[0], multiplier_rows) else None)
            T.append(t_out[k])
            X.append(x)
            V.append(v)
            Acc.append(a)
            P.append(ch.U.shape[1])
            E.append(err)
        self.counters["wall_time"] = _time.perf_counter() - tic
        return Trajectory(np.array(T), np.array(X), np.array(V), np.array(Acc),
                          np.array(P, dtype=int), np.array(E), status, message, t_fail,
                          dict(self.counters, scheme=sc.name, dt=self.h, tol=self.tol,
                               correction=self.correction, reason=reason),
                          self._collect_multipliers(L, X, V, Acc, T, multiplier_rows))

    def step(self, x: np.ndarray, v: np.ndarray, a: np.ndarray, astar: np.ndarray,
             ch: _Chart, t: float, h: float):
        """One step from ``t`` to ``t + h``; returns ``x, v, a, a*`` and the new chart.

        The modal acceleration ``eta`` at ``t + h`` solves ``G(eta) = Psi(eta) - eta = 0``,
        ``Psi`` being the acceleration of the dynamics at the state Newmark's formulas give
        for ``eta``. Fixed-point iteration converges at the rate of ``dt^2`` times the
        stiffness and ``dt`` times the velocity coupling; when it is slow, Newton's method
        with a difference Jacobian of ``G`` takes over, and the Jacobian is kept for the
        next steps (the charts' bases are aligned, so it stays valid) until the iteration
        slows down again.
        """
        sc = self.scheme
        U = ch.U
        p = U.shape[1]
        t1 = t + h
        ad0, add0, as0 = U.T @ v, U.T @ a, U.T @ astar
        # predictor: the modal acceleration extrapolated (quadratically when three steps are
        # known) from the last steps
        hist = [q for q in self._a_hist if q.shape == a.shape]
        if len(hist) >= 2:
            eta = U.T @ (3 * a - 3 * hist[-1] + hist[-2])
        elif hist:
            eta = U.T @ (2 * a - hist[-1])
        else:
            eta = add0.copy()
        beta_h2 = sc.beta * h * h
        JG = self._JG if self._JG is not None and self._JG.shape == (p, p) else None
        reused = JG is not None
        size = 0.0
        prev_size = np.inf
        lu_prev = None
        xproj = x

        def evaluate(eta_: np.ndarray, lu_: Any, xguess: np.ndarray):
            astar_ = ((1 - sc.alpha_f) * eta_ + sc.alpha_f * add0
                      - sc.alpha_m * as0) / (1 - sc.alpha_m)
            alpha = h * ad0 + h * h * ((0.5 - sc.beta) * as0 + sc.beta * astar_)
            adot = ad0 + h * ((1 - sc.gamma) * as0 + sc.gamma * astar_)
            if self.correction == "taylor":
                x1 = self._taylor(ch, x, U @ alpha, t, h)
                Phi1 = None
            else:
                xp = x + U @ alpha
                dg = xguess - x  # warm start: the normal part of the last iterate
                xp = xp + dg - U @ (U.T @ dg)
                x1, Phi1 = self._project(ch, xp, t1, lu_)
            v1, J, w, eta_new, lu1, A1, M1, F1 = self._accel(ch, x1, adot, t1)
            self._last_MF = (M1, F1)
            return eta_new, x1, v1, J, w, lu1, A1, Phi1

        # the iteration stops when the error left in the accepted modal acceleration is
        # below ITER_RTOL of its change over the step (or ETA_RTOL of its size), and its
        # effect on the positions below the constraint tolerance
        refresh = self.counters["steps"] % RATE_REFRESH == 0 or self._rate is None
        for it in range(self.max_iter):
            self.counters["iterations"] += 1
            eta_new, x1, v1, J, w, lu1, A1, Phi1 = evaluate(eta, lu_prev, xproj)
            lu_prev, xproj = lu1, x1
            G = eta_new - eta
            size = float(np.max(np.abs(G))) if p else 0.0
            scale = max(float(np.max(np.abs(eta_new))), float(np.max(np.abs(add0))),
                        1.0) if p else 1.0
            change = float(np.max(np.abs(eta_new - add0))) if p else 0.0
            tol_eta = max(ITER_RTOL * change, ETA_RTOL * scale)
            # error left in eta_new: ~ rate * size (rate of the fixed point, measured in
            # this step or remembered from the last ones), the size itself otherwise
            if np.isfinite(prev_size) and prev_size > 0 and JG is None:
                rate = size / prev_size
                self._rate = rate if self._rate is None else max(rate, 0.5 * self._rate)
            elif JG is None and not refresh and self._rate is not None:
                rate = self._rate
            else:
                rate = 1.0
            left = size if rate >= 0.1 else size * rate / (1.0 - rate)
            if left <= tol_eta and beta_h2 * left <= self.tol:
                # the state was computed for eta: move it to eta_new to first order (the
                # second-order remainder, (beta dt^2 |G|)^2, is far below the tolerance)
                ds = (1 - sc.alpha_f) / (1 - sc.alpha_m) * G
                x1 = x1 + J @ (beta_h2 * ds)
                v1 = v1 + J @ (sc.gamma * h * ds)
                eta = eta_new
                break
            if JG is None and it >= 1 and size > NEWTON_RATIO * prev_size:
                # slow fixed point: Newton with a difference Jacobian of G
                JG = np.empty((p, p))
                for j in range(p):
                    de = np.zeros(p)
                    de[j] = 1e-6 * max(1.0, abs(eta[j]))
                    ej = evaluate(eta + de, lu_prev, xproj)[0]
                    JG[:, j] = ((ej - eta - de) - G) / de[j]
                self.counters["newton_fallbacks"] += 1
            prev_size = size
            if JG is not None:
                try:
                    eta = eta - np.linalg.solve(JG, G)
                except np.linalg.LinAlgError:
                    JG = None
                    eta = eta_new
            else:
                eta = eta_new
        else:
            raise NodalIntegrationError(
                t1, f"the iteration on the modal accelerations did not converge in "
                    f"{self.max_iter} iterations (last change {size:.3g} m/s2): the step dt "
                    "is too large for the dynamics; reduce dt")
        # keep the Jacobian while it works (a reused one that needed many iterations is
        # dropped and made again when the fixed point is slow)
        self._JG = None if (reused and it >= 3) else JG
        eta_fin = eta
        a1 = J @ eta_fin + w
        # the pseudo-acceleration of the converged step, pushed forward to the ambient space
        astar_fin = ((1 - sc.alpha_f) * eta_fin + sc.alpha_f * add0
                     - sc.alpha_m * as0) / (1 - sc.alpha_m)
        astar_amb = a1 if sc.trapezoidal else J @ astar_fin + w
        self._a_hist = (self._a_hist + [a])[-2:]
        # all constraint rows hold (a redundant row that does not: the rank changed)
        Phi = self.sys.phi(x1, t1) if Phi1 is None else Phi1
        drift = float(np.max(np.abs(Phi))) if Phi.size else 0.0
        if self.correction == "taylor":
            if drift > self.drift_tol:
                raise NodalIntegrationError(
                    t1, f"constraint drift |Phi| = {drift:.3g} m exceeds drift_tol = "
                        f"{self.drift_tol:.3g} m (the paper's second-order correction, "
                        "no projection); reduce dt, or use correction='projection'")
        elif drift > 100 * self.tol:
            raise NodalIntegrationError(
                t1, f"constraints outside the independent set are violated "
                    f"(|Phi| = {np.max(np.abs(Phi)):.3g} m): the mechanism passed a "
                    "configuration where its rank changes; reduce dt")
        # multipliers of the chart's rows: B^T [mu; lambda] = F - M a (mu = 0: F - M a lies
        # in the row space), with the LU of B at x1 from the last evaluation
        M1, F1 = self._last_MF
        rhs = F1 - M1 @ a1
        sol, info = dgetrs(lu1[0], lu1[1], rhs, trans=1)
        self.last_multipliers = (ch.rows, sol[p:])
        new = self._chart_from(A1, x1, ch, J, lu1)  # at x1 (before a first-order move)
        self.counters["steps"] += 1
        return x1, v1, a1, astar_amb, new

    def _near_singular(self, x: np.ndarray, t: float) -> str:
        """A note when the last configuration is close to one where the constraint matrix
        loses rank (a fold completing, a linkage at a dead point): then no step reaches
        beyond it, whatever dt."""
        try:
            _, A, _ = self.sys.kinematics(x, t)
            rows = self.last_state[4].rows if self.last_state is not None else None
            sv = np.linalg.svd(A if rows is None else A[rows], compute_uv=False)
        except Exception:  # noqa: BLE001 - a diagnosis only
            return ""
        if sv.size and sv[-1] < SINGULAR_NOTE * sv[0]:
            return (f"; the configuration at t = {t:.6g} s is nearly singular (the "
                    f"independent constraints' smallest singular value is {sv[-1] / sv[0]:.1e} "
                    "of the largest): the mechanism is reaching a configuration where its "
                    "modes change, such as a fold completing or a dead point")
        return ""

    # ------------------------------------------------------------------
    def multipliers(self, x: np.ndarray, v: np.ndarray, a: np.ndarray, t: float,
                    rows: np.ndarray | None = None) -> np.ndarray:
        """Lagrange multipliers ``lambda`` of ``M x'' + A^T lambda = F`` (least squares on
        the given independent rows; all rows with minimum norm when ``rows`` is None)."""
        _, M, F = self.sys.inertia_forces(x, v, t)
        b = F - M @ a
        _, A, _ = self.sys.kinematics(x, t)
        if rows is None:
            return np.linalg.lstsq(A.T, b, rcond=None)[0]
        Ar = A[rows]
        try:  # independent rows: the normal equations are regular (and small)
            return np.linalg.solve(Ar @ Ar.T, Ar @ b)
        except np.linalg.LinAlgError:
            return np.linalg.lstsq(Ar.T, b, rcond=None)[0]

    def _collect_multipliers(self, L: list[Any], X: list[np.ndarray], V: list[np.ndarray],
                             Acc: list[np.ndarray], T: list[float],
                             rows: np.ndarray | None) -> np.ndarray | None:
        """The multipliers of ``rows`` at every output time: those of the steps (the
        charts' rows are ``rows``), the others in one batch."""
        if rows is None:
            return None
        miss = [k for k, lam in enumerate(L) if lam is None]
        if len(miss) <= 8:  # a few (the start): one at a time (a batch function costs more)
            for k in miss:
                L[k] = self.multipliers(X[k], V[k], Acc[k], T[k], rows)
        elif miss:
            got = self.multipliers_batch(np.array([X[k] for k in miss]),
                                         np.array([V[k] for k in miss]),
                                         np.array([Acc[k] for k in miss]),
                                         np.array([T[k] for k in miss]), rows)
            for k, lam in zip(miss, got, strict=True):
                L[k] = lam
        return np.array(L) if L else np.zeros((0, len(rows)))

    def multipliers_batch(self, X: np.ndarray, V: np.ndarray, Acc: np.ndarray,
                          T: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """:meth:`multipliers` of independent rows at many states at once (``(nt, r)``):
        the normal equations ``A_I A_I^T lambda = A_I (F - M x'')`` solved as a batch."""
        if len(T) == 0:
            return np.zeros((0, len(rows)))
        A, M, F = self.sys.batch(X, V, T)
        Ar = A[:, rows, :]
        b = F - np.einsum("tij,tj->ti", M, Acc)
        G = Ar @ Ar.transpose(0, 2, 1)
        return np.linalg.solve(G, (Ar @ b[:, :, None]))[:, :, 0]

    def kinetic_energy(self, x: np.ndarray, v: np.ndarray, t: float = 0.0) -> float:
        _, M, _ = self.sys.inertia_forces(x, v, t)
        return 0.5 * float(v @ M @ v)
