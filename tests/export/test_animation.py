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


@pytest.mark.parametrize("kwargs, message", [
    # (fps = 0 was a ZeroDivisionError, frames = 0 an IndexError, frames = -3 numpy's
    # "Number of samples, -3, must be non-negative", a missing folder FileNotFoundError
    # after every frame was drawn)
    ({"fps": 0, "frames": 2}, r"fps \(frames per second\) must be a number > 0, got 0"),
    ({"frames": 0}, "frames must be a number of frames >= 1 or a sequence of instants, got 0"),
    ({"frames": -3}, "got -3"),
    ({"frames": []}, "frames is an empty sequence"),
    ({"file": "plain/p.gif"}, r"'.*plain' is a file, not a folder"),
    # (a misspelt path or shape was ignored and the default drawn)
    ({"shapes": {"bodyy": "box"}}, "'bodyy' is not a frame-connected component of the "
                                   "model; did you mean 'body'"),
    ({"shapes": {"body": "cube"}}, r"shapes\['body'\] = 'cube' is not one of 'sphere'"),
])
def test_animation_arguments_are_checked(run, tmp_path, kwargs, message):
    cm, res = run
    (tmp_path / "plain").write_text("")
    file = str(tmp_path / kwargs.pop("file", "p.gif"))
    with pytest.raises(ac.AcausalError, match=message):
        res.animate(cm, file, **kwargs)


def test_a_planar_view_hides_the_axis_seen_end_on(run):
    plt = pytest.importorskip("matplotlib.pyplot")
    cm, res = run
    scene = _Scene(res, cm, 1.0, {})
    assert (scene.hi - scene.lo)[2] < 1e-12  # the pendulum swings in the x-y plane
    ax = ac.animation.draw_frame(res, cm, 0.5)
    # seen along z, the z ticks and label were printed on top of each other at one spot
    assert len(ax.zaxis.get_ticklocs()) == 0 and ax.zaxis.get_label_text() == ""
    assert ax.xaxis.get_label_text() == "x [m]" and ax.yaxis.get_label_text() == "y [m]"
    plt.close(ax.figure)


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


def test_an_animation_into_a_missing_folder_makes_it(run, tmp_path):
    cm, res = run
    res.animate(cm, str(tmp_path / "new" / "end.png"), t=1.0)
    assert (tmp_path / "new" / "end.png").stat().st_size > 0
