"""State events: integrating a model with frozen relations (Modelica's event semantics).

Between events every relation of the model keeps its value (:mod:`acausal.relations`), so
the DAE the integrator sees is smooth. The run advances one output interval at a time,
watching the relations' indicators at a few points inside it; where a relation's live
value differs from its frozen one, the crossing is located (Illinois' method on the
indicator, each trial point integrated from the last point before the crossing), the
integration stops there and the *event iteration* runs:

1. the relations that crossed take their new value;
2. the algebraic variables are solved again (the states are continuous);
3. every relation is evaluated again at the new point; where one disagrees (beyond a small
   band around zero) it changes too, and 2-3 repeat until nothing changes.

A relation that keeps changing at the same instant is *chattering* (an error naming it);
events that accumulate (a ball bouncing to rest) are *Zeno* behaviour: the run stops at the
accumulation point with a warning. Every event is logged (:class:`Event`, ``res.events``),
and the result has the instant twice, with the values before and after.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from .errors import SimulationError, SolverWarning
from .initialize import consistent_algebraic

if TYPE_CHECKING:
    from .dae import SemiExplicitDAE
    from .solvers.base import Integrator

__all__ = ["Event", "HybridState", "EventLoop", "SAMPLES", "warn_zeno"]

#: indicator checks per output interval (besides its ends)
SAMPLES = 4
_MAX_ITERATIONS = 50  # event iterations at one instant before calling it chattering
_ZENO_EVENTS = 30  # events of one relation inside a vanishing window: Zeno
_BAND = 1e-10  # |g| below BAND * (1 + scale) does not flip a relation during iteration


@dataclass
class Event:
    """One event of a run.

    Attributes
    ----------
    t : float
        Its time [s].
    kind : str
        ``"state"`` (a relation's indicator crossed zero), ``"time"`` (a known instant)
        or ``"initial"``.
    changes : list of str
        The relations that changed, as written, with their new values.
    components : list of str
        The components they belong to.
    iterations : int
        Event iterations until nothing changed.
    """

    t: float
    kind: str
    changes: list[str] = field(default_factory=list)
    components: list[str] = field(default_factory=list)
    iterations: int = 0

    def __str__(self) -> str:
        comps = f" [{', '.join(self.components)}]" if self.components else ""
        what = "; ".join(self.changes) or "no relation changed"
        return f"t = {self.t:.9g} s, {self.kind} event: {what}{comps}"


@dataclass
class HybridState:
    """Where a hybrid run is: time, states, algebraic variables, parameters with the
    relations' values."""

    t: float
    x: np.ndarray
    z: np.ndarray
    p: np.ndarray


class EventLoop:
    """The event handling of one run of a DAE with frozen relations."""

    def __init__(self, dae: SemiExplicitDAE, integ: Integrator) -> None:
        self.dae = dae
        self.integ = integ
        self.pos = np.array([dae.p_names.index(r.name) for r in dae.relations], dtype=int)
        self.events: list[Event] = []
        self._recent: dict[int, list[float]] = {}

    # ----- relations -----
    def indicators(self, x: Any, z: Any, p: np.ndarray, t: Any) -> np.ndarray:
        """Indicators ``g`` at one or several points: ``(n_relations, nt)``."""
        T = np.atleast_1d(np.asarray(t, dtype=float)).reshape(1, -1)
        X = x if not isinstance(x, np.ndarray) or x.ndim == 2 else x.reshape(-1, 1)
        Z = z if not isinstance(z, np.ndarray) or z.ndim == 2 else z.reshape(-1, 1)
        return np.asarray(self.dae.indicator_function(X, Z, p.reshape(-1, 1), T))

    def live(self, g: np.ndarray) -> np.ndarray:
        """The relations' live values for indicator values ``g`` (one column)."""
        return np.array([r.value(float(gk)) for r, gk in zip(self.dae.relations, g,
                                                               strict=True)])

    def frozen(self, p: np.ndarray) -> np.ndarray:
        return p[self.pos] > 0.5

    def set_relations(self, p: np.ndarray, d: np.ndarray) -> np.ndarray:
        q = p.copy()
        q[self.pos] = d.astype(float)
        return q

    # ----- event iteration -----
    def iterate(self, s: HybridState, kind: str, forced: dict[int, bool] | None = None
                ) -> HybridState:
        """The event iteration at ``s.t`` (see the module documentation)."""
        d0 = self.frozen(s.p)
        d = d0.copy()
        for k, v in (forced or {}).items():
            d[k] = v
        z = s.z
        for it in range(1, _MAX_ITERATIONS + 1):
            p = self.set_relations(s.p, d)
            z = consistent_algebraic(self.dae, s.x, z, p, s.t)
            g = self.indicators(s.x, z, p, s.t)[:, 0]
            live = self.live(g)
            scale = 1.0 + np.abs(g)
            flip = (live != d) & (np.abs(g) > _BAND * scale)
            if not flip.any():
                changed = np.flatnonzero(d != d0)
                if len(changed) or kind != "state":
                    self._log(s.t, kind, d, changed, it)
                return HybridState(s.t, s.x, z, p)
            d[flip] = live[flip]
        rels = [self.dae.relations[k] for k in np.flatnonzero(d != d0)]
        raise SimulationError(
            f"chattering at t = {s.t:.9g} s: the relations "
            + "; ".join(f"{r.text} [{', '.join(r.components)}]" for r in rels)
            + f" keep changing after {_MAX_ITERATIONS} event iterations (each new value "
            "makes another one wrong): the model has no consistent mode at this instant "
            "(check the switching conditions of these components)")

    def _log(self, t: float, kind: str, d: np.ndarray, changed: np.ndarray,
             iterations: int) -> None:
        rels = self.dae.relations
        self.events.append(Event(
            t, kind, [f"{rels[k].text} -> {bool(d[k])}" for k in changed],
            sorted({c for k in changed for c in rels[k].components}), iterations))
        for k in changed:
            self._recent.setdefault(int(k), []).append(t)

    def zeno(self, t: float, span: float) -> str | None:
        """A description if one relation's events accumulate (Zeno), else None."""
        for k, times in self._recent.items():
            if len(times) < _ZENO_EVENTS:
                continue
            last = np.array(times[-_ZENO_EVENTS:])
            gaps = np.diff(last)
            if gaps[-1] < 1e-9 * max(span, abs(t)) or (
                    np.all(gaps[1:] <= gaps[:-1] * (1 + 1e-9))
                    and gaps[-1] < 1e-6 * max(span, abs(t))):
                ratio = float(np.median(gaps[1:] / np.maximum(gaps[:-1], 1e-300)))
                t_inf = t + gaps[-1] * ratio / max(1 - ratio, 1e-12)
                r = self.dae.relations[k]
                return (f"Zeno behaviour: the events of {r.text} [{', '.join(r.components)}] "
                        f"accumulate (the last {_ZENO_EVENTS} intervals shrink to "
                        f"{gaps[-1]:.3g} s, ratio {ratio:.3g}) towards t = {t_inf:.9g} s, "
                        "where the motion comes to rest; the run stops here. Model the "
                        "resting phase (e.g. a contact that can stay closed) to go on.")
        return None

    # ----- integration -----
    def _advance(self, p: np.ndarray, s: HybridState, t1: float,
                 n: int) -> tuple[np.ndarray, Any, Any]:
        """States at ``n`` equally spaced points of ``(s.t, t1]``."""
        T = np.linspace(s.t, t1, n + 1)
        seg = self.integ.integrate(self.dae, p, s.x, s.z, T)
        return T[1:], seg.x, seg.z

    def advance(self, s: HybridState, outputs: np.ndarray
                ) -> tuple[list[HybridState], HybridState | None, HybridState]:
        """Integrate from ``s`` through the output times ``outputs`` in one call; stop at
        the first crossing.

        Returns the states reached at the output times before any event, and either
        ``(None, last of them)`` or, at a located crossing, ``(state just before the event,
        state after the event iteration)`` at the same time.
        """
        knots = np.concatenate([[s.t], outputs])
        T = np.concatenate([np.linspace(a, b, SAMPLES + 1)[1:]
                            for a, b in zip(knots[:-1], knots[1:], strict=True)])
        seg = self.integ.integrate(self.dae, s.p, s.x, s.z, np.concatenate([[s.t], T]))
        X, Z = seg.x, seg.z
        G = self.indicators(X, Z, s.p, T)
        d = self.frozen(s.p)
        reached: list[HybridState] = []
        for j in range(len(T)):
            if (self.live(G[:, j]) != d).any():
                prev = s if j == 0 else HybridState(
                    float(T[j - 1]), _col(X, j - 1), _col(Z, j - 1), s.p)
                pre, post = self._locate(prev, float(T[j]), _col(X, j), _col(Z, j), G[:, j])
                return reached, pre, post
            if (j + 1) % SAMPLES == 0:
                reached.append(HybridState(float(T[j]), _col(X, j), _col(Z, j), s.p))
        return reached, None, reached[-1]

    def _locate(self, a: HybridState, tb: float, xb: np.ndarray, zb: np.ndarray,
                gb: np.ndarray) -> tuple[HybridState, HybridState]:
        """The first crossing in ``(a.t, tb]`` by Illinois' method, then the iteration."""
        d = self.frozen(a.p)
        ga = self.indicators(a.x, a.z, a.p, a.t)[:, 0]
        changed = np.flatnonzero(self.live(gb) != d)
        target = self._earliest(changed, a.t, tb, ga, gb)
        fa, fb = ga[target], gb[target]
        tol = 1e-13 * max(1.0, abs(tb)) + 1e-15
        side = 0
        for _ in range(100):
            if tb - a.t <= tol:
                break
            t = (a.t * fb - tb * fa) / (fb - fa) if fb != fa else 0.5 * (a.t + tb)
            lo, hi = a.t + 1e-3 * (tb - a.t), tb - 1e-3 * (tb - a.t)
            t = min(max(t, lo), hi) if hi > lo else 0.5 * (a.t + tb)
            T, X, Z = self._advance(a.p, a, t, 1)
            gt = self.indicators(X, Z, a.p, T)[:, 0]
            now = np.flatnonzero(self.live(gt) != d)
            if len(now):
                tb, xb, zb, gb = t, _col(X, 0), _col(Z, 0), gt
                if target not in now:
                    target = self._earliest(now, a.t, tb, ga, gb)
                    fa = ga[target]
                fb = gb[target]
                if side == 1:
                    fa *= 0.5
                side = 1
            else:
                a, ga = HybridState(t, _col(X, 0), _col(Z, 0), a.p), gt
                fa = ga[target]
                if side == -1:
                    fb *= 0.5
                side = -1
        crossed = {int(k): bool(v) for k, v in
                   zip(np.flatnonzero(self.live(gb) != d),
                       self.live(gb)[self.live(gb) != d], strict=True)}
        pre = HybridState(tb, xb, zb, a.p)
        return pre, self.iterate(pre, "state", crossed)

    @staticmethod
    def _earliest(changed: np.ndarray, ta: float, tb: float, ga: np.ndarray,
                  gb: np.ndarray) -> int:
        """The changed relation whose linear-interpolation root is earliest."""
        best, t_best = int(changed[0]), np.inf
        for k in changed:
            den = gb[k] - ga[k]
            t = ta - ga[k] * (tb - ta) / den if den != 0 else tb
            if t < t_best:
                best, t_best = int(k), t
        return best


def _col(M: Any, j: int) -> np.ndarray:
    return np.asarray(M[:, j]).ravel() if M.shape[0] else np.zeros(0)


def warn_zeno(message: str) -> None:
    """Announce that a run stopped at a Zeno accumulation point."""
    warnings.warn(message, SolverWarning, stacklevel=4)
