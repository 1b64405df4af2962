"""A mass moved along a prescribed path: the force it takes (index 3, no states).

The physics
-----------
A translational :class:`~components.translational.Position` source imposes the position
``s(t) = A sin(Omega t)`` on a mass ``m``. The mass's equations are those of any mass
(``v = ds/dt``, ``a = dv/dt``, ``m a = f``); the source adds the algebraic equation
``s = A sin(Omega t)``. The unknown force appears in no differential equation, so to find it
the position equation must be differentiated twice: the DAE has differential index 3. The
structure stage does it symbolically (the time function is differentiated exactly), all
derivatives of the mass become dummy derivatives, and the model has **no state at all**:
every quantity is an explicit function of time.

Reference solution
------------------
Newton's law gives the force the source must apply to the mass::

    f(t) = m s''(t) = -m A Omega^2 sin(Omega t)

The source's own flange receives the opposite cut force, ``source.flange.f = -f``.

Run settings: ``T_END``, ``RTOL``, ``ATOL``, ``N_POINTS`` below.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

import acausal as ac
from components import translational as tr

# run settings
T_END = 2 * np.pi  # s (one period of s(t) = sin t)
RTOL = 1e-8
ATOL = 1e-10
N_POINTS = 201

# parameters
M = 2.0  # mass [kg]
A = 1.0  # amplitude [m]
OMEGA = 1.0  # angular frequency [rad/s]

OUTDIR = Path(__file__).resolve().parent / "output"


class PrescribedMotion(ac.Model):
    """Position source s(t) = A sin(Omega t) -> mass."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.source = tr.Position(s_ref=lambda t: A * np.sin(OMEGA * t))
        self.mass = tr.Mass(m=M)
        self.connect(self.source.flange, self.mass.flange_a)


def build_model() -> PrescribedMotion:
    return PrescribedMotion()


def analytic_force(t: np.ndarray) -> np.ndarray:
    """Force applied to the mass, ``m s''(t)``."""
    return -M * A * OMEGA**2 * np.sin(OMEGA * t)


def run(plot: bool = True, outdir: str | Path | None = None,
        model: ac.Component | ac.CompiledModel | None = None) -> ac.Result:
    """Simulate; optionally write ``prescribed_motion.png``."""
    res = ac.simulate(model if model is not None else build_model(), T_END, rtol=RTOL,
                      atol=ATOL, n_points=N_POINTS)
    if plot:
        _plot(res, Path(outdir) if outdir is not None else OUTDIR)
    return res


def _plot(res: ac.Result, outdir: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 3.6))
    ax.plot(res.t, res["mass.s"], lw=2, label="mass.s [m]")
    ax.plot(res.t, res["mass.v"], lw=2, label="mass.v [m/s]")
    ax.plot(res.t, res["mass.flange_a.f"], lw=3, label="force on the mass [N]")
    ax.plot(res.t, analytic_force(res.t), "k--", lw=1, label="m s''(t)")
    ax.set_xlabel("time [s]")
    ax.set_title(f"Prescribed motion s(t) = {A:g} sin({OMEGA:g} t) of a {M:g} kg mass")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    outdir.mkdir(parents=True, exist_ok=True)
    path = outdir / "prescribed_motion.png"
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return path


def main() -> None:
    cm = ac.build(build_model())
    print(cm.report)
    res = run(plot=True, model=cm)
    f = res["mass.flange_a.f"]
    print("Prescribed motion, checks")
    print(f"  max |f - m s''| = {np.max(np.abs(f - analytic_force(res.t))):.1e} N "
          f"(peak force {np.max(np.abs(f)):.6f} N, analytic m A Omega^2 = {M * A * OMEGA**2:g} N)")
    print(f"  source reaction: max |source.flange.f + f| = "
          f"{np.max(np.abs(res['source.flange.f'] + f)):.1e} N")
    print(f"  plot written to {OUTDIR / 'prescribed_motion.png'}")


if __name__ == "__main__":
    main()
