"""Stick-slip: a block on a moving belt, held back by a spring.

The physics
-----------
A block of mass ``m`` lies on a belt that moves at the constant speed ``vb``; a spring
``k`` ties it to a wall. Coulomb friction between block and belt
(:class:`~components.translational.Friction`) holds the block on the belt while the
force needed for that, the spring force ``k x``, stays below the breakaway force
``Fs = peak Fk``; then the block slips and the belt drags it with the kinetic force
``Fk`` only::

    stuck:     x' = vb                       (while k |x| <= Fs)
    slipping:  m x'' = -k x + Fk             (until x' = vb again)

Slipping, the block is a harmonic oscillator about ``x_k = Fk / k``: it falls back,
swings and catches up with the belt, where it sticks again, and the cycle repeats (the
squeak of a door hinge, the chatter of a machine slide). The friction element switches
between its modes at events: the breakaway where the stuck force reaches ``Fs``, the
sticking where the relative speed crosses zero.

Reference solution
------------------
With ``w = sqrt(k/m)`` and ``d = (Fs - Fk)/k``: the block starts stuck at the spring's
rest length and breaks away at ``t1 = Fs / (k vb)``. The slip starts at ``x_k + d`` with
the belt's speed and ends at ``x_k - d`` with it again, after the phase angle
``pi + 2 atan2(vb/w, d)`` of the oscillation; stuck again, the belt carries the block
back to ``x_k + d`` in ``2 d / vb``. The period is::

    T = (pi + 2 atan2(vb/w, d)) / w + 2 d / vb

and the amplitude of the slip ``hypot(d, vb/w)``.

Run settings: ``T_END``, ``RTOL``, ``ATOL``, ``N_POINTS`` below.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

import acausal as ac
from components import translational as tr

# run settings
T_END = 3.0  # s (4 periods)
RTOL = 1e-10
ATOL = 1e-12
N_POINTS = 1501

# parameters
M = 1.0  # block mass [kg]
K = 100.0  # spring stiffness [N/m]
VB = 0.1  # belt speed [m/s]
FK = 1.0  # kinetic friction force [N]
PEAK = 2.0  # breakaway force / kinetic force [1]

OUTDIR = Path(__file__).resolve().parent / "output"


class BlockOnBelt(ac.Model):
    """wall -- spring -- block, the block on a belt through Coulomb friction."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.wall = tr.Fixed()
        self.spring = tr.Spring(c=K)
        self.block = tr.Mass(m=M, s=0.0, v=VB)
        self.belt = tr.Speed(v_ref=VB)
        self.friction = tr.Friction(f_coulomb=FK, peak=PEAK)
        self.connect(self.wall.flange, self.spring.flange_a)
        self.connect(self.spring.flange_b, self.block.flange_a)
        self.connect(self.belt.flange, self.friction.flange_a)
        self.connect(self.friction.flange_b, self.block.flange_b)


def build_model() -> BlockOnBelt:
    return BlockOnBelt()


def closed_form() -> dict[str, float]:
    """First breakaway, slip and stick durations, period [s] and slip amplitude [m]."""
    w = np.sqrt(K / M)
    d = (PEAK * FK - FK) / K
    t_slip = (np.pi + 2 * np.arctan2(VB / w, d)) / w
    t_stick = 2 * d / VB
    return {"t1": PEAK * FK / (K * VB), "t_slip": t_slip, "t_stick": t_stick,
            "period": t_slip + t_stick, "amplitude": float(np.hypot(d, VB / w))}


def breakaways(res: ac.Result) -> np.ndarray:
    """Instants where the block breaks away from the belt (the mode leaves 'stuck')."""
    mode = res["friction.mode"]
    k = np.flatnonzero((mode[1:] != mode[:-1]) & np.isin(mode[:-1], [0.0, 2.0]))
    return res.t[k + 1]


def run(plot: bool = True, outdir: str | Path | None = None) -> ac.Result:
    """Simulate four stick-slip cycles; optionally write ``stick_slip.png``."""
    res = ac.simulate(build_model(), T_END, rtol=RTOL, atol=ATOL, n_points=N_POINTS)
    if plot:
        _plot(res, Path(outdir) if outdir is not None else OUTDIR)
    return res


def _plot(res: ac.Result, outdir: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ref = closed_form()
    stuck = res["friction.mode"] == 0
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 3.6))
    ax1.plot(res.t, res["block.s"] * 1e3, lw=1.5, label="block position")
    ax1.plot(res.t[stuck], res["block.s"][stuck] * 1e3, ".", ms=2, color="C3",
             label="stuck on the belt")
    for k, tb in enumerate(breakaways(res)):
        ax1.axvline(tb, color="0.7", lw=0.8, label="breakaway" if k == 0 else None)
    ax1.set_xlabel("time [s]")
    ax1.set_ylabel("x [mm]")
    ax1.set_title(f"Stick-slip, period {ref['period'] * 1e3:.1f} ms (closed form)")
    ax1.legend(fontsize=7, loc="lower right")
    ax1.grid(True, alpha=0.3)
    ax2.plot(res["block.s"] * 1e3, res["block.v"] * 1e3, lw=1.2)
    ax2.axhline(VB * 1e3, color="C3", lw=0.8, ls="--", label="belt speed (stuck)")
    ax2.set_xlabel("x [mm]")
    ax2.set_ylabel("v [mm/s]")
    ax2.set_title("Phase portrait: the limit cycle")
    ax2.legend(fontsize=7)
    ax2.grid(True, alpha=0.3)
    fig.tight_layout()
    outdir.mkdir(parents=True, exist_ok=True)
    path = outdir / "stick_slip.png"
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return path


def main() -> None:
    res = run(plot=True)
    ref = closed_form()
    tb = breakaways(res)
    print("Stick-slip of a block on a belt")
    print(f"  first breakaway {tb[0]:.9f} s (closed form {ref['t1']:.9f} s)")
    print(f"  period {np.mean(np.diff(tb)):.9f} s (closed form {ref['period']:.9f} s: "
          f"slip {ref['t_slip']:.6f} s + stick {ref['t_stick']:.6f} s)")
    print(f"  {len(res.events)} events; plot written to {OUTDIR / 'stick_slip.png'}")


if __name__ == "__main__":
    main()
