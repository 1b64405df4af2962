"""Pictures of mechanisms: res.animate to GIF/PNG (acausal.animation)."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
from mb_models import Pendulum

import acausal as ac
from acausal.animation import _Scene

pytest.importorskip("matplotlib")


@pytest.fixture(scope="module")
def run():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ac.RedundantConstraintWarning)
        cm = ac.build(Pendulum(theta0_deg=60.0))
    return cm, ac.simulate(cm, 1.0, n_points=21)


def test_gif_and_png(run, tmp_path):
    PIL = pytest.importorskip("PIL.Image")
    cm, res = run
    gif = res.animate(cm, str(tmp_path / "p.gif"), frames=6, fps=10)
    with PIL.open(gif) as im:
        assert im.n_frames == 6
    png = res.animate(cm, str(tmp_path / "p.png"), t=0.5)
    with PIL.open(png) as im:
        assert im.size[0] > 300


def test_a_time_outside_the_run_is_an_error(run, tmp_path):
    """t = 5 s on a 0 to 1 s run drew the last point silently."""
    cm, res = run
    with pytest.raises(ac.ArgumentError, match=r"t = 5 s is outside the run, which covers "
                       r"\[0, 1\] s"):
        res.animate(cm, str(tmp_path / "late.png"), t=5.0)
    with pytest.raises(ac.ArgumentError, match=r"frames\[1\] = -0.5 s is outside the run"):
        res.animate(cm, str(tmp_path / "x.gif"), frames=[0.0, -0.5])
    assert not (tmp_path / "late.png").exists()
    res.animate(cm, str(tmp_path / "end.png"), t=1.0)  # the end itself is in


def test_geometry_follows_the_frames(run):
    cm, res = run
    scene = _Scene(res, cm, 1.0, {})
    # the scene box holds every frame position of the run: pivot and the swinging mass
    r = res["body.frame_a.r"]
    assert np.all(scene.lo <= r.min(axis=0) + 1e-12) and np.all(r.max(axis=0) <= scene.hi
                                                                 + 1e-12)
    classes = {path: cls for path, cls, _, _ in scene.items}
    assert "Body" in classes["body"] and "Revolute" in classes["joint"]


def test_a_loaded_model_animates_and_a_circuit_is_refused(run, tmp_path):
    cm, res = run
    cm2 = pickle.loads(pickle.dumps(cm))
    assert res.animate(cm2, str(tmp_path / "q.png")).stat().st_size > 1000
    from models import RC

    rc = ac.build(RC())
    with pytest.raises(ac.AcausalError, match="3D mechanisms"):
        ac.simulate(rc, 0.1).animate(rc, str(tmp_path / "x.gif"))
    with pytest.raises(ac.AcausalError, match="unknown animation format"):
        res.animate(cm, str(tmp_path / "x.avi"), frames=2)


def test_graph_drawing_in_the_style_of_fig1():
    from models import RC

    g = ac.build(RC()).graph
    ax = g.draw()
    texts = [t.get_text() for t in ax.texts]
    assert sorted(t for t in texts if t.startswith("$e_")) == sorted(
        f"$e_{{{e.index}}}$" for e in g.edges)
    assert any("ground" in t for t in texts)  # the datum is named
    widths = sorted({round(line.get_linewidth(), 1) for line in ax.get_legend().get_lines()})
    assert widths == [1.2, 2.6]  # cotree thin (dashed), tree bold
    import matplotlib.pyplot as plt

    plt.close(ax.figure)
