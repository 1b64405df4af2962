"""A clutch engaging between a spinning flywheel and a load at rest.

The physics
-----------
A flywheel ``J1`` spins at ``w1``; a load ``J2`` is at rest. At ``T_ENGAGE`` the clutch
(:class:`~components.rotational.Clutch`) is pressed with the normal force ``fn``: its
plates slide on each other and transmit the kinetic friction torque ``Tk = cgeo mu fn``,
which slows the flywheel and speeds up the load::

    J1 w1' = -Tk,   J2 w2' = +Tk            (sliding, w1 > w2)

When the speeds meet, the plates stick (an event): from then on the two inertias turn
together and the clutch carries only the torque that keeps them together (zero here:
no other torque acts). The clutch dissipates the energy of the relative motion.

Reference solution
------------------
Lock-up at ``t_lock = T_ENGAGE + (w1 - w2) / (Tk (1/J1 + 1/J2))``, at the common speed
``w_f = (J1 w1 + J2 w2) / (J1 + J2)`` (angular momentum is conserved: the clutch torque
is internal), and the energy lost is that of a perfectly plastic coupling,
``dE = J1 J2 / (J1 + J2) (w1 - w2)^2 / 2``.

Run settings: ``T_END``, ``RTOL``, ``ATOL``, ``N_POINTS`` below.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

import acausal as ac
from components import blocks as bl
from components import rotational as rot

# run settings
T_END = 2.5  # s
RTOL = 1e-10
ATOL = 1e-12
N_POINTS = 501

# parameters
J1, J2 = 1.0, 2.0  # flywheel and load inertia [kg.m2]
W1, W2 = 10.0, 0.0  # start speeds [rad/s]
MU, CGEO, FN = 0.5, 1.0, 10.0  # friction coefficient [1], geometry [m], normal force [N]
PEAK = 1.2  # static / kinetic friction coefficient [1]
T_ENGAGE = 0.5  # s

OUTDIR = Path(__file__).resolve().parent / "output"


class ClutchEngagement(ac.Model):
    """flywheel -- clutch -- load; the clutch is pressed by a step at T_ENGAGE."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.flywheel = rot.Inertia(J=J1, phi=0.0, w=W1)
        self.clutch = rot.Clutch(mu=MU, cgeo=CGEO, fn_max=FN, peak=PEAK)
        self.load = rot.Inertia(J=J2, phi=0.0, w=W2)
        self.pedal = bl.Step(height=1.0, startTime=T_ENGAGE)
        self.connect(self.flywheel.flange_b, self.clutch.flange_a)
        self.connect(self.clutch.flange_b, self.load.flange_a)
        self.connect(self.pedal.y, self.clutch.f_normalized)


def build_model() -> ClutchEngagement:
    return ClutchEngagement()


def closed_form() -> dict[str, float]:
    """Lock-up time [s], common speed [rad/s], energy lost [J]."""
    tk = CGEO * MU * FN
    return {"t_lock": T_ENGAGE + (W1 - W2) / (tk * (1 / J1 + 1 / J2)),
            "w_f": (J1 * W1 + J2 * W2) / (J1 + J2),
            "loss": 0.5 * J1 * J2 / (J1 + J2) * (W1 - W2) ** 2}


def kinetic_energy(res: ac.Result) -> np.ndarray:
    return 0.5 * J1 * res["flywheel.w"] ** 2 + 0.5 * J2 * res["load.w"] ** 2


def lock_up(res: ac.Result) -> float:
    """The instant the clutch sticks."""
    mode = res["clutch.mode"]
    k = np.flatnonzero((mode[1:] == 0) & (mode[:-1] != 0))
    return float(res.t[k[0] + 1])


def run(plot: bool = True, outdir: str | Path | None = None) -> ac.Result:
    """Simulate the engagement; optionally write ``clutch_engagement.png``."""
    res = ac.simulate(build_model(), T_END, rtol=RTOL, atol=ATOL, n_points=N_POINTS)
    if plot:
        _plot(res, Path(outdir) if outdir is not None else OUTDIR)
    return res


def _plot(res: ac.Result, outdir: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ref = closed_form()
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 3.6))
    ax1.plot(res.t, res["flywheel.w"], lw=1.5, label="flywheel")
    ax1.plot(res.t, res["load.w"], lw=1.5, label="load")
    ax1.axhline(ref["w_f"], color="k", ls="--", lw=0.8, label="common speed (closed form)")
    ax1.axvline(ref["t_lock"], color="0.6", lw=0.8, label="lock-up (closed form)")
    ax1.set_xlabel("time [s]")
    ax1.set_ylabel("speed [rad/s]")
    ax1.set_title("Clutch engagement")
    ax1.legend(fontsize=7)
    ax1.grid(True, alpha=0.3)
    E = kinetic_energy(res)
    ax2.plot(res.t, E, lw=1.5, label="kinetic energy")
    ax2.axhline(E[0] - ref["loss"], color="k", ls="--", lw=0.8,
                label="E0 - J1 J2/(J1+J2) dw^2/2")
    ax2.plot(res.t, res["clutch.tau"], lw=1.0, label="clutch torque [N.m]")
    ax2.set_xlabel("time [s]")
    ax2.set_ylabel("energy [J]")
    ax2.set_title("Energy dissipated while sliding")
    ax2.legend(fontsize=7)
    ax2.grid(True, alpha=0.3)
    fig.tight_layout()
    outdir.mkdir(parents=True, exist_ok=True)
    path = outdir / "clutch_engagement.png"
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return path


def main() -> None:
    res = run(plot=True)
    ref = closed_form()
    E = kinetic_energy(res)
    print("Clutch engagement")
    print(f"  lock-up at {lock_up(res):.9f} s (closed form {ref['t_lock']:.9f} s)")
    print(f"  common speed {res.final('load.w'):.9f} rad/s (closed form {ref['w_f']:.9f})")
    print(f"  energy lost {E[0] - E[-1]:.9f} J (closed form {ref['loss']:.9f} J)")
    print(f"  plot written to {OUTDIR / 'clutch_engagement.png'}")


if __name__ == "__main__":
    main()
