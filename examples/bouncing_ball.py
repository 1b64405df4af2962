"""A ball bouncing on the floor until it comes to rest.

The physics
-----------
A ball of mass ``m`` is dropped from the height ``H0`` onto a hard floor. It is a
:class:`~components.translational.MassWithStop` whose lower stop is the floor: at each
impact its velocity jumps from ``v`` to ``-e v`` (a ``when`` clause with ``reinit``, at
the instant the height crosses zero). Since each bounce is ``e`` times shorter than the
previous one, the impacts accumulate at a finite time (Zeno behaviour): an ideal model
would need infinitely many events. The component ends the sequence physically: an
impact whose rebound would be slower than ``v_rest`` leaves the ball resting on the
floor, where the floor's reaction carries its weight.

Reference solution
------------------
The first impact is at ``t_1 = sqrt(2 H0 / g)`` with the speed ``v_1 = g t_1``; the
k-th rebound (k = 1, 2, ...) leaves at ``e^k v_1`` and lasts ``2 e^k t_1``, so the
impacts are at ``t_1 (1 + 2 (e + e^2 + ... + e^(k-1)))``. The ball rests at the first
impact whose rebound speed ``e^k v_1`` is at most ``v_rest``. Without the resting phase
the impacts would accumulate at ``t_1 (1 + 2 e / (1 - e))``.

Run settings: ``T_END``, ``RTOL``, ``ATOL``, ``N_POINTS`` below.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

import acausal as ac
from components import translational as tr

# run settings
T_END = 5.0  # s
RTOL = 1e-10
ATOL = 1e-12
N_POINTS = 2001

# parameters
M = 0.1  # ball mass [kg]
G = 9.81  # gravity [m/s2]
H0 = 1.0  # drop height [m]
E = 0.8  # coefficient of restitution [1]
V_REST = 0.05  # rebound speed below which the ball stays on the floor [m/s]

OUTDIR = Path(__file__).resolve().parent / "output"


class BouncingBall(ac.Model):
    """A ball between the floor (s = 0) and a ceiling out of reach, under its weight."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.ball = tr.MassWithStop(m=M, s=H0, v=0.0, s_min=0.0, s_max=100.0, e=E,
                                    v_rest=V_REST)
        self.weight = tr.Force(f=-M * G)
        self.connect(self.weight.flange, self.ball.flange_a)


def build_model() -> BouncingBall:
    return BouncingBall()


def impact_times() -> np.ndarray:
    """The impacts up to the one where the ball comes to rest [s]."""
    t1 = np.sqrt(2 * H0 / G)
    v1 = G * t1
    n = int(np.ceil(np.log(V_REST / v1) / np.log(E)))  # first k with e^k v1 <= v_rest
    return t1 + np.concatenate([[0.0], np.cumsum(2 * t1 * E ** np.arange(1, n))])


def zeno_time() -> float:
    """Where the impacts of a ball that never rests would accumulate [s]."""
    return float(np.sqrt(2 * H0 / G) * (1 + 2 * E / (1 - E)))


def impacts(res: ac.Result) -> np.ndarray:
    """The impact instants of the simulation (the when clauses that fired)."""
    return np.array([ev.t for ev in res.events
                     if any(c.startswith("when") for c in ev.changes)])


def run(plot: bool = True, outdir: str | Path | None = None) -> ac.Result:
    """Simulate the bounces; optionally write ``bouncing_ball.png``."""
    res = ac.simulate(build_model(), T_END, rtol=RTOL, atol=ATOL, n_points=N_POINTS)
    if plot:
        _plot(res, Path(outdir) if outdir is not None else OUTDIR)
    return res


def _plot(res: ac.Result, outdir: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(7, 4.6), sharex=True)
    ax1.plot(res.t, res["ball.s"], lw=1.5, label="height")
    ax1.plot(impact_times(), np.zeros(len(impact_times())), "k|", ms=10,
             label="impacts (closed form)")
    ax1.axvline(zeno_time(), color="C3", ls="--", lw=0.8,
                label="accumulation point without rest")
    ax1.set_ylabel("height [m]")
    ax1.set_title(f"Bouncing ball, e = {E:g}: {len(impact_times())} impacts, then at rest")
    ax1.legend(fontsize=7)
    ax1.grid(True, alpha=0.3)
    ax2.plot(res.t, res["ball.v"], lw=1.2, label="velocity [m/s]")
    ax2.plot(res.t, res["ball.f_stop"] / (M * G), lw=1.2,
             label="floor reaction / weight")
    ax2.set_xlabel("time [s]")
    ax2.legend(fontsize=7)
    ax2.grid(True, alpha=0.3)
    fig.tight_layout()
    outdir.mkdir(parents=True, exist_ok=True)
    path = outdir / "bouncing_ball.png"
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return path


def main() -> None:
    res = run(plot=True)
    t_ref = impact_times()
    t_sim = impacts(res)
    print("Bouncing ball")
    print(f"  {len(t_sim)} impacts (closed form {len(t_ref)}), at rest from "
          f"{t_sim[-1]:.9f} s (closed form {t_ref[-1]:.9f} s)")
    print(f"  largest impact-time error {np.max(np.abs(t_sim - t_ref)):.2e} s")
    print(f"  without the resting phase the impacts would accumulate at {zeno_time():.6f} s")
    print(f"  plot written to {OUTDIR / 'bouncing_ball.png'}")


if __name__ == "__main__":
    main()
