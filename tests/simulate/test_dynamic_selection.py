"""A run whose state choice changes along the trajectory (dynamic dummy derivatives,
simulate._chunked): a chunk that fails where its choice turns singular is retried up to
the check before the failure, where the checks see the choice degrade and choose again,
not with the backend's fallback method, which integrated through the singular choice.

Reference: the closed-form position of a four-bar's coupler-rocker pivot for the driven
crank angle, and the toggle position of a non-Grashof four-bar (cosine rule)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from mb_models import FourBar, fourbar_closed_form

import acausal as ac

A, B, C, D = 0.7, 0.5, 0.6, 0.55  # crank, coupler, rocker, ground: non-Grashof


def test_a_non_grashof_four_bar_fails_at_its_toggle_with_an_exact_partial_result():
    """Driven at 1 rev/s, the crank cannot pass theta_lim (coupler and rocker in line).
    On the way, at t = 0.0388 s, the dummy derivatives chosen at the start turn singular:
    the chunk that failed there was retried with IDAS's error test on the states only,
    which integrated through the singular choice and stayed in that mode: the loop opened
    by 2e-4 m, the pivot was 6e-4 m off its closed form, 23 s to the toggle."""
    theta_lim = np.arccos((A**2 + D**2 - (B + C) ** 2) / (2 * A * D))
    t_lim = theta_lim / (2 * np.pi)  # 0.3412 s
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ac.RedundantConstraintWarning)  # (planar loop in 3D)
        cm = ac.build(FourBar(a=A, b=B, c=C, d=D))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(ac.SimulationError) as info:
            ac.simulate(cm, 0.6, rtol=1e-8, atol=1e-8, n_points=601)
    assert not [w for w in caught if issubclass(w.category, ac.SolverWarning)]
    exc = info.value
    # it fails at the toggle itself (measured 3e-10 s before it), not before
    assert exc.t_fail == pytest.approx(t_lim, abs=1e-6)
    part = exc.partial
    assert part.t[-1] == pytest.approx(0.341, abs=1e-12)  # the last output point before
    assert all(s.mode != "states_error_only" for s in part.stats.segments)
    theta = part["crank_joint.phi"]
    ref = np.array([fourbar_closed_form(q, A, B, C, D)[1] for q in theta])
    # positions are solved by Newton at every step to the tolerances (atol 1e-8 m on
    # lengths of 1 m): measured 4.4e-10 m off the closed form, loop gap 1.3e-10 m
    assert np.max(np.abs(part["j3.frame_a.r"][:, :2] - ref)) < 1e-8
    gap = np.linalg.norm(part["j4.frame_b.r"] - part["j4.frame_a.r"], axis=1)
    assert np.max(gap) < 1e-8
