"""Is the result resolved by its output points?

The integrator controls its own error between output points, but a result is read at the
output points only. When the model moves faster than the points are spaced (an oscillation
with fewer than about four points per period, a sharp change of regime inside one output
interval, a condition that switched back and forth between two points), the sampled
curves are wrong although every number in them is accurate: aliased oscillations, a
capacitor that seems never to recharge. Nothing in the numbers says so.

The check here reads the result as a user would, with one more piece of information per
point: the rate ``x'`` of every state, which the model gives exactly. Over an output
interval ``[t_k, t_k+1]`` of length ``h``, a curve that the points resolve satisfies the
trapezoidal rule

    x_k+1 - x_k = h/2 (x'_k + x'_k+1) + O(h^3 x''')

to a small fraction of the state's range: for a sine sampled with ``n`` points per period
the defect is at most ``(2 pi / n)^3 / 24`` of its peak-to-peak range: 0.13 % with 20
points, 1 % with ten, 8 % with five, 15 % with four. A larger defect means the curve
between the two points is not what the points show. The check costs one evaluation of
the model's right-hand side per output point and flags the states (and so the components)
concerned, with the worst interval; :mod:`acausal.simulate` runs it only when the
integrator took at least as many steps as there are output intervals (a grid finer than
the integrator's steps is resolved by them).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .errors import UnresolvedWarning
from .pointcall import PointCall
from .records import record

__all__ = ["Unresolved", "DEFECT", "unresolved_states", "warn_unresolved"]

# Defect of the trapezoidal rule over one output interval, as a fraction of the state's
# range over the run, above which the points do not resolve the curve. For a sine with n
# points per period the largest defect over the phases is 0.15 (n = 4), 0.079 (5), 0.047
# (6), 0.010 (10) (tests/simulate/test_resolution.py checks these): 0.1 flags fewer than about
# 4.5 points per period, where a plot of the points no longer shows the oscillation, and
# leaves alone what a plot shows roughly but rightly.
DEFECT = 0.1
# states whose whole range is below this fraction of the integrator's absolute tolerance
# are noise, not curves
_NOISE = 100.0
_MAX_VALUES = 20_000_000  # skip the check when states x points exceed this (memory)


@record
class Unresolved:
    """A state the output points do not resolve, with its worst output interval."""

    state: str
    t0: float
    t1: float
    defect: float  # as a fraction of the state's range (or its move in one interval)
    intervals: int  # how many output intervals are flagged

    def __str__(self) -> str:
        return (f"{self.state} between t = {self.t0:.6g} s and {self.t1:.6g} s "
                f"(defect {self.defect:.0%} of its range, {self.intervals} interval"
                f"{'s' if self.intervals != 1 else ''})")


def _merged(pieces: list[tuple[Any, Any, Any, np.ndarray, np.ndarray]]
            ) -> list[tuple[Any, np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
    """Consecutive pieces of the same system and parameters joined (chunks of one smooth
    stretch); pieces separated by an event stay apart."""
    out: list[tuple[Any, np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
    for dae, X, Z, T, p in pieces:
        nx, nz, nt = int(dae.x.numel()), int(dae.z.numel()), len(T)
        Xn = np.asarray(X.full() if hasattr(X, "full") else X, dtype=float).reshape(nx, nt)
        Zn = np.asarray(Z.full() if hasattr(Z, "full") else Z, dtype=float).reshape(nz, nt)
        if out and out[-1][0] is dae and np.array_equal(out[-1][4], p) and nt \
                and T[0] > out[-1][3][-1]:
            d0, X0, Z0, T0, _ = out[-1]
            out[-1] = (dae, np.hstack([X0, Xn]), np.hstack([Z0, Zn]),
                       np.concatenate([T0, T]), p)
        elif nt:
            out.append((dae, Xn, Zn, np.asarray(T, dtype=float), np.asarray(p)))
    return out


def _rates(pieces: list[tuple[Any, np.ndarray, np.ndarray, np.ndarray, np.ndarray]]
           ) -> list[np.ndarray]:
    """The states' rates at every point of every piece, one point at a time through the
    DAE function's buffer (no conversion of the states to CasADi matrices; a call with
    all points as columns would build a map of the function at every call)."""
    from .solvers.ode import derived_form

    out: list[np.ndarray] = []
    calls: dict[tuple[int, bytes], tuple[PointCall, bool]] = {}
    for dae, X, Z, T, p in pieces:
        pv = np.asarray(p, dtype=float)
        key = (id(dae), pv.tobytes())
        got = calls.get(key)
        if got is None:  # the explicit ODE if the run has it (parameters folded in: about
            # half the operations of the DAE's function), else the DAE
            form = derived_form(dae, pv)
            got = calls[key] = (PointCall(form.f), True) if form is not None else (
                PointCall(dae.default_function), False)
        call, explicit = got
        F = np.empty((int(dae.x.numel()), len(T)))
        for k, tk in enumerate(np.asarray(T, dtype=float).tolist()):
            F[:, k] = call(X[:, k], tk)[0] if explicit else call(X[:, k], Z[:, k], pv, tk)[0]
        out.append(F)
    return out


def unresolved_states(pieces: list[tuple[Any, Any, Any, np.ndarray, np.ndarray]],
                      atol: float, breaks: list[float] | None = None) -> list[Unresolved]:
    """The states the output points do not resolve, worst first.

    ``pieces`` are the stretches of a run, ``(dae, X, Z, times, parameters)``; intervals
    across an event (a change of parameters or system) and intervals touching one of the
    ``breaks`` (time events, where the rates jump) are not checked.
    """
    merged = _merged(pieces)
    # each state's range over the run (a state keeps its name across state choices)
    index: dict[str, int] = {}
    rows_of = []
    for dae, *_ in merged:
        if not index:  # (the first system's states in order: one dict, no loop)
            index = dict(zip(dae.x_names, range(len(dae.x_names)), strict=True))
            rows_of.append(np.arange(len(index), dtype=np.int64))
            continue
        rows_of.append(np.array([index.setdefault(n, len(index)) for n in dae.x_names],
                                dtype=np.int64))
    lo, hi = np.full(len(index), np.inf), np.full(len(index), -np.inf)
    per_piece = []
    for (dae, Xn, Z, T, p), rows in zip(merged, rows_of, strict=True):
        nt, nx = len(T), len(rows)
        if nx == 0:
            continue
        np.minimum.at(lo, rows, Xn.min(axis=1))
        np.maximum.at(hi, rows, Xn.max(axis=1))
        if nt < 2 or nx * nt > _MAX_VALUES:
            continue
        per_piece.append((dae, Xn, Z, T, p, rows))
    found: dict[str, list[tuple[float, float, float, int]]] = {}
    brk = np.asarray(sorted(breaks or []), dtype=float)
    for (dae, Xn, _z, T, _p, rows), F in zip(per_piece, _rates([b[:5] for b in per_piece]),
                                             strict=True):
        h = np.diff(T)
        defect = np.abs(np.diff(Xn, axis=1) - 0.5 * h * (F[:, :-1] + F[:, 1:]))
        if len(brk):  # an interval with a time event at an end: the rate there jumps
            scale = 1e-9 * max(1.0, float(np.abs(T).max()))
            near = np.abs(T[:, None] - brk[None, :]).min(axis=1) <= scale
            defect[:, near[:-1] | near[1:]] = 0.0
        # a state's scale: its range, or what its rates move it by in one interval when
        # that is more (points that alias an oscillation can show no range at all)
        moved = 0.5 * h * (np.abs(F[:, :-1]) + np.abs(F[:, 1:]))
        span = np.maximum(hi[rows] - lo[rows], moved.max(axis=1))
        with np.errstate(invalid="ignore"):
            checked = np.isfinite(span) & (span > _NOISE * atol)
            rel = defect / np.where(checked, span, 1.0)[:, None]
            bad = (rel > DEFECT) & checked[:, None]
        for i in np.flatnonzero(bad.any(axis=1)).tolist():
            flagged = np.flatnonzero(bad[i])
            k = int(flagged[np.argmax(rel[i, flagged])])
            found.setdefault(dae.x_names[i], []).append(
                (float(rel[i, k]), float(T[k]), float(T[k + 1]), len(flagged)))
    out = []
    for name, hits in found.items():
        worst = max(hits)
        out.append(Unresolved(name, worst[1], worst[2], worst[0], sum(h[3] for h in hits)))
    return sorted(out, key=lambda u: -u.defect)


def _component_of(name: str) -> str:
    """``"der(body.v)"`` -> ``"body"``."""
    while name.startswith("der(") and name.endswith(")"):
        name = name[4:-1]
    return name.rsplit(".", 1)[0]


def warn_unresolved(found: list[Unresolved], n_intervals: int, stacklevel: int = 4) -> str:
    """Warn about the states the output points do not resolve, naming their components;
    returns the message (empty when there is nothing to say)."""
    if not found:
        return ""
    comps: list[str] = []
    for u in found:
        c = _component_of(u.state)
        if c not in comps:
            comps.append(c)
    shown = "; ".join(str(u) for u in found[:3]) + (
        f"; and {len(found) - 3} more" if len(found) > 3 else "")
    more = max(4 * n_intervals, n_intervals + 100)
    msg = (f"the output points do not resolve the motion of {', '.join(comps[:5])}"
           f"{' and others' if len(comps) > 5 else ''}: {shown}. Between these points the "
           "curve is not what the points show (an oscillation faster than the points, or a "
           "sharp change inside one output interval); the integration itself met its "
           f"tolerances. Ask for more points (n_points={more + 1} or a smaller dt) to see "
           "it, or, if a smooth-but-sharp element (tanh friction, an exponential diode) "
           "switches there, give max_step or use the event-driven component.")
    warnings.warn(msg, UnresolvedWarning, stacklevel=stacklevel)
    return msg
