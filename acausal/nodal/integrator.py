"""``simulate(..., solver="nullspace", dt=...)``: the null-space Newmark integrator behind
the integrator interface.

The model is compiled as usual (the nodal domain pass writes the Lagrange-multiplier DAE),
but the segment is integrated by :class:`~acausal.nodal.newmark.NewmarkNullspace` on the
nodal system of the pass. At every output time the integrator gives the DAE's states and
algebraic variables **by name** from its own nodal state, so every named output of the
model (``res["node5.x"]``, a bar's ``lambda[0]``, a pin's ``r``) comes from the DAE's
output function as for IDAS:

* ``<node>.x`` (``y``, ``z``): coordinates; ``<node>.vx`` and ``der(<node>.x)``: velocities;
  ``der(<node>.vx)`` and ``der(der(<node>.x))`` (a dummy derivative of index reduction):
  accelerations;
* ``<element>.lambda[k]``: multipliers, by least squares on
  ``A_I^T lambda = F - M x''`` (the kept rows are independent, so this is exact);
* any other algebraic variable: Newton on the DAE's algebraic equations with those known.

A state of the DAE that is none of these (the model has dynamics outside the pin-jointed
structure) is an error: this solver integrates pin-jointed structures only.

Options go in the ``mode`` string of :func:`acausal.simulate`, comma-separated words and
``key=value`` items::

    simulate(cm, 10.0, solver="nullspace", dt=1e-2)                      # Newmark 1/4, 1/2
    simulate(cm, 10.0, solver="nullspace", dt=1e-2, mode="hht, alpha=0.1")
    simulate(cm, 10.0, solver="nullspace", dt=1e-2, mode="generalized-alpha, rho_inf=0.6")
    simulate(cm, 10.0, solver="nullspace", dt=1e-2, mode="taylor")        # the paper's update

Words: ``newmark`` (default), ``generalized-alpha``, ``hht`` (the scheme), ``projection``
(default) or ``taylor`` (the drift correction). Keys: ``beta``, ``gamma`` (Newmark),
``rho_inf`` (generalized-alpha, default 0.8), ``alpha`` (HHT, default 0.05), ``tol``,
``drift_tol``, ``err_tol`` [m] and ``max_iter`` (see
:class:`~acausal.nodal.newmark.NewmarkNullspace`).
"""

from __future__ import annotations

from dataclasses import field
from typing import Any, ClassVar

import casadi as cs
import numpy as np

from ..errors import AcausalError, ArgumentError
from ..records import record
from ..solvers.base import IntegrationFailure, Integrator, IntegratorOptions, Segment, SegmentStats
from .base import COORDINATES, VELOCITIES
from .newmark import NewmarkNullspace, Scheme, Trajectory

__all__ = ["NullspaceIntegrator", "NodalSegmentStats", "mode_table"]


@record
class NodalSegmentStats(SegmentStats):
    """Segment counts plus the independent-mode count over time (``modes``: intervals
    ``(t_from, t_to, p)``) and the largest local error estimate [m]."""

    modes: list[tuple[float, float, int]] = field(default_factory=list)
    max_error_estimate: float = 0.0
    trajectory: Trajectory | None = field(default=None, repr=False)


def mode_table(res: Any) -> list[tuple[float, float, int]]:
    """The independent-mode count over time of a ``solver="nullspace"`` result:
    ``[(t_from, t_to, p), ...]`` (consecutive intervals of constant ``p``)."""
    out: list[tuple[float, float, int]] = []
    for seg in res.stats.segments:
        for a, b, p in getattr(seg, "modes", []):
            if out and out[-1][2] == p:
                out[-1] = (out[-1][0], b, p)
            else:
                out.append((a, b, p))
    return out


_WORDS = {"newmark": ("scheme", "newmark"), "generalized-alpha": ("scheme", "generalized-alpha"),
          "hht": ("scheme", "hht"), "taylor": ("correction", "taylor"),
          "projection": ("correction", "projection")}


def _parse_mode(mode: str | None) -> dict[str, Any]:
    """``"hht, alpha=0.1"`` -> ``{"scheme": "hht", "alpha": 0.1}``."""
    out: dict[str, Any] = {}
    for item in (mode or "").split(","):
        item = item.strip()
        if not item:
            continue
        if "=" in item:
            k, v = (s.strip() for s in item.split("=", 1))
            try:
                out[k] = float(v)
            except ValueError:
                out[k] = v
        elif item.lower() in _WORDS:
            k, v = _WORDS[item.lower()]
            out[k] = v
        else:
            raise ArgumentError(f"unknown word {item!r} in the mode of the nullspace solver "
                                f"(mode={mode!r}); words: {', '.join(_WORDS)}; or key=value "
                                "items (beta, gamma, rho_inf, alpha, tol, drift_tol, err_tol, "
                                "max_iter), e.g. mode='hht, alpha=0.1'")
    return out


_ACCEPTED = ("accepted: words newmark (default), generalized-alpha, hht, projection "
             "(default), taylor and key=value items beta >= 0, gamma >= 1/2 (newmark), "
             "rho_inf in [0, 1] "
             "(generalized-alpha), alpha in [0, 1/3] (hht), tol, drift_tol, err_tol > 0 [m], "
             "max_iter >= 1; e.g. mode='hht, alpha=0.1'")


def _option_error(what: str, mode: str | None) -> ArgumentError:
    given = f" (mode={mode!r})" if mode else ""
    return ArgumentError(f"solver='nullspace'{given}: {what}; {_ACCEPTED}")


def _number(extra: dict[str, Any], key: str, default: Any, mode: str | None,
            positive: bool = False) -> Any:
    v = extra.get(key, default)
    if v is None:
        return None
    try:
        x = float(v)
    except (TypeError, ValueError):
        raise _option_error(f"option {key}={v!r} is not a number", mode) from None
    if not np.isfinite(x) or (positive and not x > 0):
        raise _option_error(f"option {key}={v!r} must be a {'positive ' if positive else ''}"
                            "finite number", mode)
    return x


def _scheme(extra: dict[str, Any], mode: str | None = None) -> Scheme:
    """The time-stepping scheme of the options (``mode``: the user's string, quoted in
    the error of an option that is out of its range)."""
    name = str(extra.get("scheme", "newmark")).lower()
    if name == "newmark":
        beta, gamma = _number(extra, "beta", 0.25, mode), _number(extra, "gamma", 0.5, mode)
        if not (beta >= 0 and gamma >= 0.5):  # gamma < 1/2 amplifies every mode
            raise _option_error(f"the Newmark beta={beta:g}, gamma={gamma:g} are out of range "
                                "(beta >= 0, gamma >= 1/2)", mode)
        return Scheme.newmark(beta, gamma)
    if name in ("generalized-alpha", "generalized_alpha", "genalpha"):
        rho = _number(extra, "rho_inf", 0.8, mode)
        if not 0.0 <= rho <= 1.0:
            raise _option_error(f"rho_inf={rho:g} of the generalized-alpha scheme is out of "
                                "[0, 1]", mode)
        return Scheme.generalized_alpha(rho)
    if name == "hht":
        alpha = _number(extra, "alpha", 0.05, mode)
        if not 0.0 <= alpha <= 1.0 / 3.0:
            raise _option_error(f"alpha={alpha:g} of the HHT scheme is out of [0, 1/3]", mode)
        return Scheme.hht(alpha)
    raise _option_error(f"unknown scheme {name!r}; use 'newmark', 'generalized-alpha' or "
                        "'hht'", mode)


def _check_options(extra: dict[str, Any], mode: str | None) -> None:
    """The numeric options and the correction, checked before any work is done."""
    for key in ("tol", "drift_tol", "err_tol"):
        if key in extra:
            extra[key] = _number(extra, key, None, mode, positive=True)
    if "max_iter" in extra:
        v = _number(extra, "max_iter", 25, mode)
        if not (v >= 1 and float(v).is_integer()):
            raise _option_error(f"option max_iter={extra['max_iter']!r} must be a whole "
                                "number >= 1", mode)
        extra["max_iter"] = int(v)
    corr = str(extra.get("correction", "projection")).lower()
    if corr not in ("projection", "taylor"):
        raise _option_error(f"unknown correction {extra.get('correction')!r}; use 'projection' "
                            "or 'taylor'", mode)
    if "correction" in extra:
        extra["correction"] = corr


class NullspaceIntegrator(Integrator):
    """Fixed-step Newmark on the independent displacement modes of the model's pin-jointed
    structure (see the module documentation)."""

    name = "nullspace"
    follows_state_selection = False  # its coordinates are the nodes', not the DAE's states
    known_options: ClassVar[tuple[str, ...]] = (
        "scheme", "beta", "gamma", "rho_inf", "alpha", "correction", "tol", "drift_tol",
        "err_tol", "max_iter")

    def __init__(self, cm: Any, options: IntegratorOptions) -> None:
        super().__init__(cm, options)
        npass = cm.domain_pass("pin")
        if npass is None:
            raise AcausalError(
                "solver='nullspace' integrates pin-jointed structures (components.nodal); "
                "this model has none: use the default solver")
        if options.dt is None or not options.dt > 0:
            raise AcausalError("solver='nullspace' is a fixed-step method: give the step, "
                               "e.g. simulate(model, t_end, solver='nullspace', dt=1e-2)")
        self.npass = npass
        self.extra = dict(options.extra)
        self.extra.update(_parse_mode(options.mode))
        known = set(self.known_options)
        bad = sorted(set(self.extra) - known)
        if bad:
            raise ArgumentError(f"unknown option(s) {bad} of the nullspace solver; known: "
                                f"{sorted(known)}")
        _check_options(self.extra, options.mode)
        self.scheme = _scheme(self.extra, options.mode)
        self._maps: dict[Any, Any] = {}  # per DAE: sources, output indices, solvers
        self._carry: tuple[float, np.ndarray, np.ndarray, Any] | None = None

    # ------------------------------------------------------------------
    def _sources(self, dae: Any) -> tuple[list[Any], list[Any]]:
        """For every DAE state and algebraic variable: where its value comes from."""
        key = id(dae)
        if key in self._maps:
            return self._maps[key]
        asm = self.npass.assembly
        src: dict[str, tuple[str, int]] = {}
        for i, node in enumerate(asm.node_names):
            for k, (c, vc) in enumerate(zip(COORDINATES, VELOCITIES, strict=True)):
                j = 3 * i + k
                src[f"{node}.{c}"] = ("x", j)
                src[f"{node}.{vc}"] = ("v", j)
                src[f"der({node}.{c})"] = ("v", j)
                src[f"der({node}.{vc})"] = ("a", j)
                src[f"der(der({node}.{c}))"] = ("a", j)
        for j, name in enumerate(self.npass.lambda_names):
            src[name] = ("lam", j)
        xs = [src.get(n) for n in dae.x_names]
        missing = [n for n, s in zip(dae.x_names, xs, strict=True) if s is None]
        if missing:
            raise AcausalError(
                "solver='nullspace' integrates the pin-jointed structure only, but the model "
                "has other states: " + ", ".join(missing[:8]) + "; simulate it with the "
                "default solver (IDAS)")
        zs = [src.get(n) for n in dae.z_names]
        self._maps[key] = (xs, zs)
        return xs, zs

    def integrate(self, dae: Any, p: np.ndarray, x0: np.ndarray, z0: np.ndarray,
                  grid: np.ndarray, allow_fallback: bool = True) -> Segment:
        xs, zs = self._sources(dae)
        sysn = self.npass.system(p, list(dae.p_names))
        ex = self.extra
        assert self.options.dt is not None  # checked at construction
        integ = NewmarkNullspace(
            sysn, float(self.options.dt), self.scheme, tol=ex.get("tol"),
            err_tol=ex.get("err_tol"), correction=str(ex.get("correction", "projection")),
            drift_tol=ex.get("drift_tol"), max_iter=int(ex.get("max_iter", 25)))
        t0 = float(grid[0])
        xn, vn = self._nodal_start(dae, p, x0, z0, t0)
        carry = None
        if self._carry is not None and self._carry[0] == t0 and np.allclose(
                self._carry[1], xn, rtol=0, atol=1e-12) and np.allclose(
                self._carry[2], vn, rtol=0, atol=1e-12):
            carry = self._carry[3]  # continue the previous segment (chunked runs)
        traj = integ.run(np.asarray(grid, dtype=float), xn, vn, state=carry,
                         multiplier_rows=np.array(self.npass.kept, dtype=int))
        self._carry = ((float(traj.t[-1]), traj.x[-1], traj.v[-1], integ.last_state)
                       if len(traj.t) else None)
        X, Z = self._dae_values(dae, p, xs, zs, traj, integ)
        stats = NodalSegmentStats(
            steps=int(traj.stats.get("steps", 0)),
            rhs_evaluations=int(traj.stats.get("iterations", 0)),
            jacobian_evaluations=int(traj.stats.get("factorizations", 0)),
            mode=f"{self.scheme.name}, {integ.correction}",
            modes=[m for m in traj.mode_table()],
            max_error_estimate=float(traj.error.max()) if traj.error.size else 0.0,
            trajectory=traj)
        seg = Segment(traj.t[1:], X, Z, stats)
        if traj.status != "ok":
            raise IntegrationFailure(traj.stats.get("reason") or traj.message,
                                     float(traj.t_fail if traj.t_fail is not None
                                           else traj.t[-1]), seg)
        return seg

    # ------------------------------------------------------------------
    def _nodal_start(self, dae: Any, p: np.ndarray, x0: np.ndarray, z0: np.ndarray,
                     t0: float) -> tuple[np.ndarray, np.ndarray]:
        """Coordinates and velocities of the nodes at a consistent point of the DAE."""
        asm = self.npass.assembly
        key = ("outidx", id(dae))
        if key not in self._maps:
            names = list(dae.out_names)
            offs = np.concatenate([[0], np.cumsum(dae.out_sizes)]).astype(int)
            where = {n: int(offs[k]) for k, n in enumerate(names)}
            idx_x, idx_v = [], []
            for node in asm.node_names:
                for c, vc in zip(COORDINATES, VELOCITIES, strict=True):
                    idx_x.append(where[f"{node}.{c}"])
                    idx_v.append(where[f"{node}.{vc}"])
            self._maps[key] = (idx_x, idx_v)
        idx_x, idx_v = self._maps[key]
        out = np.asarray(dae.output_function()(x0, z0, p, t0)).ravel()
        return out[idx_x], out[idx_v]

    def _dae_values(self, dae: Any, p: np.ndarray, xs: list[Any], zs: list[Any],
                    traj: Trajectory, integ: NewmarkNullspace) -> tuple[np.ndarray, np.ndarray]:
        nt = len(traj.t) - 1
        lam = traj.multipliers
        if lam is None:
            lam = np.zeros((len(traj.t), 0))
        stack = np.hstack([traj.x, traj.v, traj.a, lam])[1:].T  # (4n + r, nt)
        n = traj.x.shape[1]
        base = {"x": 0, "v": n, "a": 2 * n, "lam": 3 * n}

        def rows(src: list[Any]) -> tuple[np.ndarray, np.ndarray]:
            known = [i for i, s in enumerate(src) if s is not None]
            return np.array(known, dtype=int), np.array(
                [base[src[i][0]] + src[i][1] for i in known], dtype=int)

        X = np.zeros((len(xs), nt))
        Z = np.zeros((len(zs), nt))
        ix, sx = rows(xs)
        iz, sz = rows(zs)
        X[ix] = stack[sx]
        Z[iz] = stack[sz]
        unknown_z = [i for i, s in enumerate(zs) if s is None]
        if unknown_z:
            for k in range(nt):
                Z[:, k] = self._solve_rest(dae, p, X[:, k], Z[:, k], unknown_z,
                                           float(traj.t[k + 1]))
        return X, Z

    def _solve_rest(self, dae: Any, p: np.ndarray, x: np.ndarray, z: np.ndarray,
                    unknown: list[int], t: float) -> np.ndarray:
        """Algebraic variables the nodal state does not give: Newton on the DAE's algebraic
        equations for them, the others held at their nodal values."""
        key = ("rest", id(dae))
        if key not in self._maps:
            zu = cs.vertcat(*[dae.z[i] for i in unknown])
            f = cs.Function("rest", [dae.x, dae.z, dae.p, dae.t],
                            [dae.alg, cs.jacobian(dae.alg, zu)])
            self._maps[key] = (f, None)
        f = self._maps[key][0]
        zk = np.array(z, dtype=float)
        for _ in range(30):
            g, J = f(x, zk, p, t)
            g = np.asarray(g).ravel()
            if np.max(np.abs(g)) < 1e-10 * max(1.0, float(np.max(np.abs(zk)))):
                break
            zk[unknown] -= np.linalg.lstsq(np.asarray(J), g, rcond=None)[0]
        return zk
