"""Events versus sharp smooth models: a rectifier and a bouncing ball.

Run: ``python benchmarks/bench_hybrid.py``. Prints, for each model and way of writing it,
the wall time of ``simulate`` (the model built beforehand), the number of events and of
integrator steps, and the error against the closed form:

1. **Half-wave rectifier** (10 V, 50 Hz, 1 kOhm, 100 uF) over 1 s (50 periods): the ideal
   diode (events at every turn-off and turn-on) against the library's exponential
   ``Diode`` made sharp (``Vt = 5 mV``), which has no event and is integrated at the
   default settings or with a tight ``max_step``, as before events existed. Accuracy:
   the ripple of the last period against the ideal rectifier's closed form (the one of
   ``tests/hybrid/test_hybrid.py``); the smooth diode also has a forward drop of ~0.08 V, a
   model error of its own.
2. **Bouncing ball** (1 m drop, e = 0.8) up to the 10th impact: ``when``/``reinit``
   (events), an ``ElastoGap`` contact (stiff, events where it closes and opens), and a
   stiff penalty contact written without events (``ac.no_event``) at the default settings
   and with a tight ``max_step``. Accuracy: the 10th impact time against the rigid
   ball's ``t_1 (1 + 2 (e + ... + e^9))`` (the compliant contacts also last ~1 ms each).
3. **Buck converter** (``examples/buck_converter.py`` at its run settings: a PWM at 20 kHz,
   160 periods, ideal switch and diode): a time event at every PWM edge and state events
   where the diode switches. Accuracy: the mean output of the last period against
   ``D Vin``.

The cost of an event is the wall time over the number of events (``s/event``; for the
hybrid models nearly all of the time goes to events: the restarts of the integrator, the
location of the crossings and the event iterations). Each model is built once per
repetition and simulated once on it (the first run, as a user sees it: integrators built
on the way); the wall time is the minimum over ``REPEAT`` repetitions, the machine's load
being noisy.
"""

from __future__ import annotations

import os
import sys
import time
import warnings

import casadi as cs
import numpy as np
from scipy.optimize import brentq

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "examples"))

import buck_converter as buck  # noqa: E402

import acausal as ac  # noqa: E402
from components import electrical as el  # noqa: E402
from components import translational as tr  # noqa: E402

# ----------------------------------------------------------------------------------------
# rectifier
V, F, R, C = 10.0, 50.0, 1e3, 100e-6
W = 2 * np.pi * F
T_RECT = 1.0
N_RECT = 10_001  # 0.1 ms: the sampled ripple is within (w V) dt^2 / 8 = 4e-5 V of the true


class Rectifier(ac.Model):
    def __init__(self, diode):
        super().__init__()
        self.src = el.SineVoltage(V=V, f=F)
        self.d = diode
        self.c = el.Capacitor(C=C, v=0.0)
        self.r = el.Resistor(R=R)
        self.gnd = el.Ground()
        self.connect(self.src.p, self.d.p)
        self.connect(self.d.n, self.c.p, self.r.p)
        self.connect(self.src.n, self.c.n, self.r.n, self.gnd.p)


def rectifier_ripple() -> float:
    """The ideal rectifier's steady-state ripple (tests/hybrid/test_hybrid.py)."""
    t_off = (np.pi - np.arctan(W * R * C)) / W
    v_off = V * np.sin(W * t_off)
    t_on = brentq(lambda t: V * np.sin(W * t) - v_off * np.exp(-(t - t_off) / (R * C)),
                  1 / F + 1e-6, 1 / F + 0.25 / F)
    return V - V * np.sin(W * t_on)


def last_ripple(res: ac.Result) -> float:
    sel = res.t >= T_RECT - 1 / F
    return float(np.ptp(res["c.v"][sel]))


# ----------------------------------------------------------------------------------------
# bouncing ball
G, E, H0, N_IMPACTS = 9.81, 0.8, 1.0, 10
T1 = np.sqrt(2 * H0 / G)
K_PEN = 1e7  # N/m: contact of ~1 ms for 1 kg
ZETA = -np.log(E) / np.sqrt(np.pi**2 + np.log(E) ** 2)  # linear dashpot with e = 0.8


def tenth_impact() -> float:
    return float(T1 * (1 + 2 * sum(E**k for k in range(1, N_IMPACTS))))


T_BALL = tenth_impact() + 0.05  # s
N_BALL = 40_001  # 0.09 ms: a penalty contact (1 ms) spans ~10 output points


class ReinitBall(ac.Model):
    h = ac.Variable(start=H0, fixed=True, unit="m")
    v = ac.Variable(start=0.0, fixed=True, unit="m/s")

    def equations(self):
        return [ac.der(self.h) == self.v, ac.der(self.v) == -G,
                ac.when(self.h < 0, ac.reinit(self.v, -E * ac.pre(self.v)))]


class GapBall(ac.Model):
    def __init__(self):
        super().__init__()
        self.floor = tr.Fixed()
        # MSL ElastoGap, its damper limited by the spring force: d = 497.02 N.s/m gives
        # e = 0.8 (gap_impact() of tests/hybrid/test_discontinuous.py)
        self.gap = tr.ElastoGap(c=K_PEN, d=497.02)
        self.ball = tr.Mass(m=1.0, s=H0, v=0.0)
        self.weight = tr.Force(f=-G)
        self.connect(self.floor.flange, self.gap.flange_a)
        self.connect(self.gap.flange_b, self.ball.flange_a)
        self.connect(self.weight.flange, self.ball.flange_b)


class PenaltyBall(ac.Model):
    """A linear spring-dashpot contact without events (e = 0.8 in closed form)."""

    h = ac.Variable(start=H0, fixed=True, unit="m")
    v = ac.Variable(start=0.0, fixed=True, unit="m/s")

    def equations(self):
        push = ac.no_event(cs.if_else(self.h < 0, -K_PEN * self.h
                                      - 2 * ZETA * np.sqrt(K_PEN) * self.v, 0.0))
        return [ac.der(self.h) == self.v, ac.der(self.v) == -G + push]


def impacts_of(res: ac.Result, h: str) -> np.ndarray:
    """Instants where the height crosses zero downwards (interpolated on the output)."""
    y = res[h]
    k = np.flatnonzero((y[:-1] > 0) & (y[1:] <= 0))
    return res.t[k] - y[k] * (res.t[k + 1] - res.t[k]) / (y[k + 1] - y[k])


REPEAT = 3


def timed(cm, t_end, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        res = ac.simulate(cm, t_end, **kw)
        return res, time.perf_counter() - t0


def timed_fresh(make, t_end, **kw):
    """The minimum wall time of ``simulate`` over :data:`REPEAT` freshly built models (the
    first run on each) and the last result."""
    best = np.inf
    for _ in range(REPEAT):
        cm = ac.build(make())
        res, wall = timed(cm, t_end, **kw)
        best = min(best, wall)
    return res, best


def per_event(wall: float, res: ac.Result) -> str:
    return f"{1e3 * wall / len(res.events):9.2f}" if res.events else f"{'-':>9s}"


def steps(res: ac.Result) -> int:
    return int(sum(s.steps for s in res.stats.segments)) if res.stats.segments else -1


def main() -> None:
    print(f"== Half-wave rectifier, {T_RECT:g} s ({T_RECT * F:g} periods), {N_RECT} points ==")
    ref = rectifier_ripple()
    print(f"closed-form ripple {ref:.6f} V")
    print(f"{'model':34s} {'wall [s]':>9s} {'events':>7s} {'ms/event':>9s} "
          f"{'ripple [V]':>11s} {'error':>9s}")
    cases = [
        ("ideal diode, rtol 1e-6", lambda: el.IdealDiode(Goff=1e-9), {}),
        ("ideal diode, rtol 1e-8", lambda: el.IdealDiode(Goff=1e-9),
         {"rtol": 1e-8, "atol": 1e-10}),
        ("smooth diode, rtol 1e-6", lambda: el.Diode(Vt=0.005), {}),
        ("smooth diode, max_step 1e-5 s", lambda: el.Diode(Vt=0.005), {"max_step": 1e-5}),
    ]
    for name, diode, kw in cases:
        res, wall = timed_fresh(lambda d=diode: Rectifier(d()), T_RECT, n_points=N_RECT, **kw)
        rip = last_ripple(res)
        print(f"{name:34s} {wall:9.2f} {len(res.events):7d} {per_event(wall, res)} "
              f"{rip:11.6f} {abs(rip - ref) / ref:9.1e}")
    print()
    print(f"== Bouncing ball to the {N_IMPACTS}th impact ({T_BALL:.3f} s) ==")
    ref_t = tenth_impact()
    print(f"closed-form {N_IMPACTS}th impact (rigid ball) {ref_t:.9f} s")
    print(f"{'model':34s} {'points':>7s} {'wall [s]':>9s} {'events':>7s} {'impact [s]':>12s} "
          f"{'error [s]':>10s}")
    balls = [
        ("when/reinit", ReinitBall(), {"rtol": 1e-8, "atol": 1e-10}),
        ("ElastoGap (events), rtol 1e-8", GapBall(), {"rtol": 1e-8, "atol": 1e-10}),
        ("penalty, no events, rtol 1e-8", PenaltyBall(), {"rtol": 1e-8, "atol": 1e-10}),
        ("penalty, no events, max_step 1e-4", PenaltyBall(),
         {"rtol": 1e-8, "atol": 1e-10, "max_step": 1e-4}),
    ]
    for name, model, kw in balls:
        cm = ac.build(model)
        for n in (2001, N_BALL) if not isinstance(model, PenaltyBall) else (N_BALL,):
            res, wall = timed(cm, T_BALL, n_points=n, **kw)
            if isinstance(model, ReinitBall):
                t_imp = np.array([ev.t for ev in res.events
                                  if any(c.startswith("when") for c in ev.changes)])
            elif isinstance(model, GapBall):  # the contact closes
                t_imp = np.array([ev.t for ev in res.events if any(
                    "s_rel < gap.s_rel0 -> True" in c for c in ev.changes)])
            else:  # no event: the zero crossings on the output grid
                t_imp = impacts_of(res, "h")
            t10 = t_imp[N_IMPACTS - 1] if len(t_imp) >= N_IMPACTS else np.nan
            print(f"{name:34s} {n:7d} {wall:9.2f} {len(res.events):7d} {t10:12.6f} "
                  f"{abs(t10 - ref_t):10.1e}")
    print()
    print(f"== Buck converter, {buck.T_END * 1e3:g} ms ({buck.T_END * buck.FSW:g} PWM periods), "
          f"{buck.N_POINTS} points, rtol {buck.RTOL:g} ==")
    print(f"{'model':34s} {'wall [s]':>9s} {'events':>7s} {'ms/event':>9s} {'mean [V]':>11s} "
          f"{'error':>9s}")
    res, wall = timed_fresh(buck.build_model, buck.T_END, rtol=buck.RTOL, atol=buck.ATOL,
                            n_points=buck.N_POINTS)
    mean, _ = buck.last_period(res)
    vout = buck.textbook()["vout"]
    print(f"{'ideal switch and diode, PWM':34s} {wall:9.2f} {len(res.events):7d} "
          f"{per_event(wall, res)} {mean:11.6f} {abs(mean - vout) / vout:9.1e}")

if __name__ == "__main__":
    main()
