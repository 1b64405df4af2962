"""Progress reporting (acausal.progress) and the integrator statistics of a run."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import acausal as ac

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
import cartesian_pendulum  # noqa: E402
import dc_motor  # noqa: E402


def test_build_reports_every_pass():
    calls = []
    ac.build(dc_motor.build_model(), progress=lambda f, m: calls.append((f, m)))
    assert [m for _, m in calls] == [p.name for p in ac.PASSES] + ["done"]
    assert [f for f, _ in calls] == sorted(f for f, _ in calls) and calls[-1][0] == 1.0


def test_simulate_reports_once_per_integrator_call():
    cm = ac.build(cartesian_pendulum.build_model())  # dynamic state selection: chunks
    calls = []
    res = ac.simulate(cm, 2.0, progress=lambda f, m: calls.append((f, m)))
    assert len(calls) == len(res.stats.segments) > 5
    fractions = [f for f, _ in calls]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0
    assert calls[-1][1] == "t = 2 s"


def test_quiet_without_a_terminal_and_a_bar_on_request(capfd):
    cm = ac.build(dc_motor.build_model())
    ac.simulate(cm, 0.3)  # stderr is not a terminal here
    assert capfd.readouterr().err == ""
    pytest.importorskip("tqdm")
    ac.simulate(cm, 0.3, progress=True)
    assert "simulate" in capfd.readouterr().err


def test_stats_per_segment_and_totals():
    res = ac.simulate(cartesian_pendulum.build_model(), 2.0)
    st = res.stats
    for name in ("steps", "rhs_evaluations", "jacobian_evaluations", "error_test_failures",
                 "newton_failures"):
        assert getattr(st, name) == sum(getattr(s, name) for s in st.segments)
    assert st.steps > 0 and st.rhs_evaluations >= st.steps and st.jacobian_evaluations > 0
    text = st.summary()
    assert text.splitlines()[0].startswith(f"idas: {len(st.segments)} integrator call(s)")
    assert text.splitlines()[-1].split() == ["total", str(st.steps), str(st.rhs_evaluations),
                                             str(st.jacobian_evaluations),
                                             str(st.error_test_failures),
                                             str(st.newton_failures)]
