"""The ideal diode with a knee voltage (MSL ``Ideal.IdealDiode``) in a full-wave bridge,
against the closed form.

Four ``el.IdealDiode`` with equal ``Ron``, ``Goff`` and ``Vknee`` feed a resistor ``R``
from a floating source ``v = V sin(w t)``: the pair d1/d4 conducts while
``v > 2 Vknee``, the pair d2/d3 while ``v < -2 Vknee``, and all four block in between.
By the bridge's symmetry the closed form is exact for this model, leakage included:

* all four blocking: the leakage currents balance, the load carries no current and each
  diode sees half the source voltage, ``+-v/2``, so ``s = +-v/2 - Vknee``; a pair turns
  on where ``|v| = 2 Vknee``;
* a pair conducting: its diodes carry ``s = (i + Goff (|v| - 2 Vknee)) / (1 + Ron Goff)``
  (the load current ``i`` and the blocking pair's leakage) and, around the loop,
  ``|v| = 2 (Vknee + Ron s) + R i``, so
  ``i = (|v| - 2 Vknee) (1 - Ron Goff) / (R (1 + Ron Goff) + 2 Ron)``, which is
  ``(|v| - 2 Vknee) / (R + 2 Ron)`` within ``2 Ron Goff`` of it; ``s`` is zero where
  ``|v| = 2 Vknee``: the pair turns off there, both diodes at the same instant.

While the four diodes block, the bridge's two input nodes are held by the leakage ``Goff``
alone: the linear system of that mode has a condition number proportional to ``1 / Goff``
(1.7e11 at ``Goff = 1e-9``). ``acausal/structure/solve.py`` solves such a block by a
Householder QR, whose error grows like ``eps / Goff`` (measured 4e-12 V, 1.3e-9 V and
8e-8 V at ``Goff`` = 1e-5, 1e-7, 1e-9). CasADi's symbolic ``solve`` (Gram-Schmidt QR),
used before, erred like ``eps / Goff^2``: 218 V at ``Goff = 1e-9``, a false "chattering at
t = 0", and 255 000 steps for one period at 1e-5. These tests failed then.
"""

import contextlib
import re
import signal
import threading

import numpy as np
import pytest

import acausal as ac
from components import electrical as el

V, F, R, VKNEE = 10.0, 50.0, 100.0, 0.7
W = 2 * np.pi * F
PERIOD = 1 / F
#: the pair d1/d4 turns on here (|v| = 2 Vknee on the rising edge)
T_ON = np.arcsin(2 * VKNEE / V) / W
#: the slope of the source at the switching instants [V/s]
SLOPE = W * V * np.cos(W * T_ON)

LEAKAGES = [pytest.param(g, id=f"Goff={g:g}") for g in (1e-5, 1e-7, 1e-9)]


class Bridge(ac.Model):
    def __init__(self, Vknee, Ron, Goff):
        super().__init__()
        self.src = el.SineVoltage(V=V, f=F)
        self.d1, self.d2, self.d3, self.d4 = (el.IdealDiode(Ron=Ron, Goff=Goff, Vknee=Vknee)
                                              for _ in range(4))
        self.load = el.Resistor(R=R)
        self.gnd = el.Ground()
        self.connect(self.src.p, self.d1.p, self.d3.n)
        self.connect(self.src.n, self.d2.p, self.d4.n)
        self.connect(self.d1.n, self.d2.n, self.load.p)
        self.connect(self.d3.p, self.d4.p, self.load.n, self.gnd.p)


class _TooLong(BaseException):
    """(not an Exception: the library's handlers must not take it for a solver failure)"""


@contextlib.contextmanager
def at_most(seconds):
    """Interrupt the block after ``seconds`` of wall time (where SIGALRM exists): a run
    that crawls through an event takes minutes, not the expected tenth of a second."""
    if not hasattr(signal, "SIGALRM") or threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum, frame):
        raise _TooLong(f"the run took more than {seconds} s")

    old = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    except _TooLong as exc:
        pytest.fail(str(exc))
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def switchings(res, merge=1e-9):
    """Each diode's net changes, ``{name: [(t, conducting), ...]}``: changes of one diode
    within ``merge`` seconds of each other count as one (a pair switched one diode after
    the other at the same instant), and changes back to where it was are dropped. A diode
    starts conducting where its ``s`` is not negative at the start."""
    out = {}
    for ev in res.events:
        for change in ev.changes:
            m = re.fullmatch(r"(d\d)\.s < 0 -> (True|False)", change)
            if m:
                out.setdefault(m[1], []).append((ev.t, m[2] == "False"))
    net = {}
    for name in ("d1", "d2", "d3", "d4"):
        merged = []
        for t, on in out.get(name, []):
            if merged and t - merged[-1][0] <= merge:
                merged[-1] = (merged[-1][0], on)
            else:
                merged.append((t, on))
        state, kept = bool(res[f"{name}.s"][0] >= 0), []
        for t, on in merged:
            if on != state:
                kept.append((t, on))
                state = on
        net[name] = kept
    return net


@pytest.mark.parametrize("Goff", LEAKAGES)
def test_bridge_with_knee_voltage_starts_with_all_diodes_blocking(Goff):
    """At t = 0 every diode sees 0 V, below its knee: the all-off mode is consistent, and
    it lasts until the source reaches 2 Vknee (t = 0.447 ms)."""
    res = ac.simulate(Bridge(VKNEE, Goff, Goff), 0.4e-3, rtol=1e-8, atol=1e-10, n_points=41)
    assert res.events == []
    v = V * np.sin(W * res.t)
    # each diode sees +-v/2 (the leakage balances); a backward-stable solve of this
    # ill-conditioned mode (cond ~ 1/Goff) errs by about eps / Goff: measured 4e-12 V,
    # 1.3e-9 V and 8e-8 V for Goff = 1e-5, 1e-7, 1e-9; 1e-14 / Goff is 50-250 times that
    # and still far below the knee
    tol = 1e-14 / Goff
    for name, sign in (("d1", 1), ("d4", 1), ("d2", -1), ("d3", -1)):
        np.testing.assert_allclose(res[f"{name}.s"], sign * v / 2 - VKNEE, rtol=0, atol=tol)
    # no current reaches the load while all four block (round-off only: measured 3e-16 A)
    np.testing.assert_allclose(res["load.i"], 0.0, rtol=0, atol=1e-12)


@pytest.mark.parametrize("Goff", LEAKAGES)
def test_bridge_with_knee_voltage_over_one_period(Goff):
    """Conduction intervals and load current of one period against the closed form, in
    about the effort of the bridge without a knee voltage."""
    Ron = Goff
    with at_most(10.0):
        res = ac.simulate(Bridge(VKNEE, Ron, Goff), PERIOD, rtol=1e-8, atol=1e-10,
                          n_points=201)
    # effort: 505-622 steps measured (237 without the knee voltage); the crawl through
    # the turn-offs took 255 032
    assert res.stats.steps < 2000
    # every diode switches on and off once; a pair switches at one instant (its two
    # diodes one after the other, measured 0 to 3.5e-11 s apart). Exact instants
    # (above), located to 1e-13 s; the blocking diodes' error (eps / Goff, 8e-8 V at
    # Goff = 1e-9, see the test above) moves them by that over the slope of v/2
    # (1.6e3 V/s), 5e-11 s: 1e-9 s (3e-6 V of the source) leaves a factor 20
    on, off = T_ON, PERIOD / 2 - T_ON
    expected = {"d1": [(on, True), (off, False)], "d4": [(on, True), (off, False)],
                "d2": [(on + PERIOD / 2, True), (off + PERIOD / 2, False)],
                "d3": [(on + PERIOD / 2, True), (off + PERIOD / 2, False)]}
    net = switchings(res)
    assert sorted(net) == sorted(expected)
    for name, changes in expected.items():
        assert [c for _, c in net[name]] == [c for _, c in changes], (name, net[name])
        np.testing.assert_allclose([t for t, _ in net[name]], [t for t, _ in changes],
                                   rtol=0, atol=1e-9, err_msg=name)
    # the load current: (|v| - 2 Vknee) / (R + 2 Ron) while a pair conducts, zero while
    # all block; the leakage's share is 2 Ron Goff of it (2e-11 A at 1e-5), the
    # round-off of the algebraic solution below that (measured 3e-12 to 1.7e-11 A)
    v = V * np.sin(W * res.t)
    i_ref = np.maximum(np.abs(v) - 2 * VKNEE, 0.0) / (R + 2 * Ron)
    np.testing.assert_allclose(res["load.i"], i_ref, rtol=0, atol=1e-10)
    # while all four block, each sees half the source voltage (as at the start)
    blocking = np.abs(v) < 2 * VKNEE
    np.testing.assert_allclose(res["d1.s"][blocking], v[blocking] / 2 - VKNEE, rtol=0,
                               atol=1e-14 / Goff)
    np.testing.assert_allclose(res["d2.s"][blocking], -v[blocking] / 2 - VKNEE, rtol=0,
                               atol=1e-14 / Goff)


def test_bridge_without_knee_voltage_over_one_period():
    """The same bridge without a knee voltage, the effort the knee voltage is measured
    against (the bridge's input floats only at the instants where the source is zero):
    the pairs take over from each other at the source's zero crossings, the last one at
    the end time."""
    Ron = Goff = 1e-5
    res = ac.simulate(Bridge(0.0, Ron, Goff), PERIOD, rtol=1e-8, atol=1e-10, n_points=201)
    assert res.stats.steps < 2000  # measured 237
    net = switchings(res)
    # at t = 0 every s is zero: the diodes start conducting, and d2/d3 stop within
    # round-off of the start (measured 1e-13 s), reverse biased from the first step on
    expected = {"d1": [(PERIOD / 2, False), (PERIOD, True)],
                "d4": [(PERIOD / 2, False), (PERIOD, True)],
                "d2": [(PERIOD / 2, True), (PERIOD, False)],
                "d3": [(PERIOD / 2, True), (PERIOD, False)]}
    for name, want in expected.items():
        got = [(t, c) for t, c in net[name] if t > 1e-9]
        assert [c for _, c in got] == [c for _, c in want], (name, net[name])
        np.testing.assert_allclose([t for t, _ in got], [t for t, _ in want], rtol=0,
                                   atol=1e-9, err_msg=name)
    v = V * np.sin(W * res.t)
    np.testing.assert_allclose(res["load.i"], np.abs(v) / (R + 2 * Ron), rtol=0, atol=1e-10)
