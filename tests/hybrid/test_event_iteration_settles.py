"""An event iteration that cannot settle: a relay whose output feeds its own input with no
state in between (``u = ref - 3 y``, band ``[-0.5, 0.5]``) has no consistent value once
``ref = 1``: ``y = 1`` gives ``u = -2`` (off), ``y = 0`` gives ``u = 1`` (on). A when
clause fires once per event, so the iteration used to end with ``y = 0`` while
``u = 1 > uHigh`` and the run went on with it, silently. It now stops with a
``SimulationError`` naming the clause, its variable and its component (Modelica tools
report an event iteration that does not converge).

The same relay in a loop *with* a state (an integrator, ``x' = 1 - 2 y``) is a
triangle wave between the band's edges: switches at ``t = 0.5, 1.5, 2.5, ...``, the closed
form the run is compared with (to the event location's 1e-13 s and IDAS's tolerances).
"""

from __future__ import annotations

import numpy as np
import pytest

import acausal as ac
from components import blocks as bl


class RelayLoop(ac.Model):
    """``relay.u = ref - 3 relay.y``: an algebraic loop through the relay's output."""

    def __init__(self, ref, **kw):
        super().__init__(**kw)
        self.ref = ref
        self.fb = bl.Feedback()
        self.relay = bl.Hysteresis(uLow=-0.5, uHigh=0.5)
        self.g = bl.Gain(k=3.0)
        self.connect(self.ref.y, self.fb.u1)
        self.connect(self.fb.y, self.relay.u)
        self.connect(self.relay.y, self.g.u)
        self.connect(self.g.y, self.fb.u2)


def _says_loop(message: str, t: str) -> None:
    assert f"at t = {t} s, the event iteration does not settle" in message
    # the clause that would fire again, its variable with both values, its component
    assert "when relay.uHigh < fb.y [relay] would set relay.y_held from 0 to 1" in message
    assert "when fb.y < relay.uLow [relay]" in message  # the clause that undid it
    assert "algebraic loop" in message and "hysteresis margin" in message


def test_relay_in_algebraic_loop_at_the_start_is_refused():
    with pytest.raises(ac.SimulationError) as info:
        ac.simulate(RelayLoop(bl.Constant(k=1.0)), 1.0, n_points=3)
    _says_loop(str(info.value), "0")


def test_relay_in_algebraic_loop_at_a_time_event_stops_with_partial_result():
    with pytest.raises(ac.SimulationError) as info:
        ac.simulate(RelayLoop(bl.Step(height=1.0, startTime=0.5)), 2.0, n_points=5)
    exc = info.value
    _says_loop(str(exc), "0.5")
    assert exc.t_fail == 0.5
    part = exc.partial
    assert part is not None and part.status == "failed"
    # the result up to the event: the relay off, its input 0 (inside the band)
    np.testing.assert_array_equal(part["relay.y"], 0.0)
    np.testing.assert_array_equal(part["relay.u"], 0.0)
    # it ends at the event's left limit (1e-12 s before a time event, see hybrid.md)
    assert part.t[-1] == pytest.approx(0.5, abs=2e-12) and part.t[-1] < 0.5


class RelayIntegrator(ac.Model):
    """``x' = 1 - 2 y``, ``y`` the relay of ``x`` with band ``[-0.5, 0.5]``: a triangle
    wave of slope +-1 between the band's edges."""

    def __init__(self, **kw):
        super().__init__(**kw)
        self.one = bl.Constant(k=1.0)
        self.fb = bl.Feedback()
        self.x = bl.Integrator(y_start=0.0)
        self.relay = bl.Hysteresis(uLow=-0.5, uHigh=0.5)
        self.g = bl.Gain(k=2.0)
        self.connect(self.one.y, self.fb.u1)
        self.connect(self.fb.y, self.x.u)
        self.connect(self.x.y, self.relay.u)
        self.connect(self.relay.y, self.g.u)
        self.connect(self.g.y, self.fb.u2)


def test_relay_in_loop_with_a_state_runs_as_the_closed_form():
    res = ac.simulate(RelayIntegrator(), 4.2, n_points=43, rtol=1e-10, atol=1e-12)
    assert res.status == "ok"
    # (the switches: the relay's clauses fire, each once; the relation of the threshold
    # just crossed turns back 1e-13 s later as x does, an event without a firing)
    fired = [[c for c in ev.changes if c.startswith("when")] for ev in res.events]
    switches = [ev.t for ev, f in zip(res.events, fired, strict=True) if f]
    assert all(len(f) <= 1 for f in fired)
    # x rises from 0 to 0.5 (t = 0.5), then falls and rises by 1 per second; the event
    # is located to 1e-13 s, on states integrated to rtol 1e-10: 1e-9 s
    np.testing.assert_allclose(switches, [0.5, 1.5, 2.5, 3.5], atol=1e-9)
    t = res.t
    phase = np.mod(t - 0.5, 2.0)
    tri = np.where(t < 0.5, t, np.where(phase < 1.0, 0.5 - phase, phase - 1.5))
    # piecewise linear motion, integrated exactly between events (atol 1e-12); the
    # result's event instants carry the location error above: 1e-9
    np.testing.assert_allclose(res["x.y"], tri, atol=1e-9)


def test_the_fmu_refuses_the_relay_loop_as_simulate_does(tmp_path, capsys):
    """The FMU's event iteration (its C wrapper) makes the same check: it went on with
    the relay off and its input at 1 (above uHigh) as simulate did."""
    fmpy = pytest.importorskip("fmpy", reason="running an FMU needs fmpy")
    from acausal.codegen import CompilerNotFoundError, find_compiler
    from acausal.fmi import fmu

    try:
        find_compiler()
    except CompilerNotFoundError:
        pytest.skip("no C compiler (cc, gcc or clang) found")
    path = fmu(ac.build(RelayLoop(bl.Step(height=1.0, startTime=0.5))),
               tmp_path / "relay.fmu")
    with pytest.raises(Exception, match="fmi2NewDiscreteStates"):
        fmpy.simulate_fmu(str(path), stop_time=2.0, solver="CVode", output_interval=0.5,
                          output=["relay.y", "relay.u"])
    _says_loop(capsys.readouterr().out, "0.5")


def test_relay_loop_closing_at_a_threshold_crossing_stops_as_chattering():
    """A ramp brings u = ref - 3 y to uHigh: the relay goes on, then off, and u ends
    within round-off of its threshold (1e-13), not beyond it: the next event comes
    1e-13 s later, again and again. The chattering check stops the run there and names
    the algebraic loop (it said only that the model slides along a switching surface)."""
    with pytest.warns(ac.SolverWarning) as warned:
        res = ac.simulate(RelayLoop(bl.Ramp(height=1.0, duration=1.0)), 2.0, n_points=5)
    assert res.status == "stopped"
    # u = t reaches uHigh = 0.5 at t = 0.5; ten firings 1e-13 s apart follow
    assert res.t[-1] == pytest.approx(0.5, abs=1e-11)
    message = str(warned[-1].message)
    assert "chattering: when relay.uHigh < fb.y [relay] fires again and again" in message
    assert "algebraic loop" in message and "relay whose output feeds its input" in message
