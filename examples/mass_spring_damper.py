"""Mass-spring-damper released from an initial displacement.

The physics
-----------
A mass ``m`` slides on a frictionless line; a spring ``c`` and a damper ``d`` in parallel
(one :class:`~components.translational.SpringDamper`) tie it to a fixed point at ``s = 0``.
The mass is released at rest from ``s0``::

    m s'' = -c s - d s'

Reference solution
------------------
With ``w0 = sqrt(c / m)``, ``zeta = d / (2 sqrt(c m))`` and ``wd = w0 sqrt(1 - zeta^2)``
(``zeta < 1``, underdamped)::

    s(t) = s0 exp(-zeta w0 t) [cos(wd t) + zeta w0 / wd sin(wd t)]

The example compares the whole trajectory and the damped period ``2 pi / wd``.

Run settings: ``T_END``, ``RTOL``, ``ATOL``, ``N_POINTS`` below.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

import acausal as ac
from components import translational as tr

# run settings
T_END = 5.0  # s
RTOL = 1e-8
ATOL = 1e-10
N_POINTS = 2001

# parameters
M = 1.0  # mass [kg]
C = 100.0  # spring stiffness [N/m]
D = 2.0  # damping coefficient [N.s/m]
S0 = 0.1  # initial displacement [m]

OUTDIR = Path(__file__).resolve().parent / "output"


class MassSpringDamper(ac.Model):
    """Fixed point -- spring/damper -- mass."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.fixed = tr.Fixed(s0=0.0)
        self.spring_damper = tr.SpringDamper(c=C, d=D, s_rel0=0.0)
        self.mass = tr.Mass(m=M, s=S0, v=0.0)
        self.connect(self.fixed.flange, self.spring_damper.flange_a)
        self.connect(self.spring_damper.flange_b, self.mass.flange_a)


def build_model() -> MassSpringDamper:
    return MassSpringDamper()


def constants() -> tuple[float, float, float]:
    """``w0`` [rad/s], ``zeta`` [1], ``wd`` [rad/s]."""
    w0 = np.sqrt(C / M)
    zeta = D / (2 * np.sqrt(C * M))
    return w0, zeta, w0 * np.sqrt(1 - zeta**2)


def analytic(t: np.ndarray) -> np.ndarray:
    """Position of the mass."""
    w0, zeta, wd = constants()
    return S0 * np.exp(-zeta * w0 * t) * (np.cos(wd * t) + zeta * w0 / wd * np.sin(wd * t))


def measured_period(t: np.ndarray, s: np.ndarray) -> float:
    """Mean time between successive downward zero crossings (linear interpolation)."""
    k = np.flatnonzero((s[:-1] > 0) & (s[1:] <= 0))
    tc = t[k] - s[k] * (t[k + 1] - t[k]) / (s[k + 1] - s[k])
    return float(np.mean(np.diff(tc)))


def run(plot: bool = True, outdir: str | Path | None = None) -> ac.Result:
    """Simulate the free damped oscillation; optionally write ``mass_spring_damper.png``."""
    res = ac.simulate(build_model(), T_END, rtol=RTOL, atol=ATOL, n_points=N_POINTS)
    if plot:
        _plot(res, Path(outdir) if outdir is not None else OUTDIR)
    return res


def _plot(res: ac.Result, outdir: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    w0, zeta, _ = constants()
    fig, ax = plt.subplots(figsize=(7, 3.6))
    ax.plot(res.t, res["mass.s"] * 1e3, lw=2, label="simulation")
    ax.plot(res.t, analytic(res.t) * 1e3, "k--", lw=1, label="analytic")
    env = S0 * np.exp(-zeta * w0 * res.t) * 1e3
    ax.plot(res.t, env, color="0.6", lw=0.8, label=r"envelope $s_0 e^{-\zeta\omega_0 t}$")
    ax.plot(res.t, -env, color="0.6", lw=0.8)
    ax.set_xlabel("time [s]")
    ax.set_ylabel("position [mm]")
    ax.set_title(f"Mass-spring-damper: m = {M:g} kg, c = {C:g} N/m, d = {D:g} N.s/m "
                 f"(zeta = {zeta:.2f})")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    outdir.mkdir(parents=True, exist_ok=True)
    path = outdir / "mass_spring_damper.png"
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return path


def main() -> None:
    res = run(plot=True)
    _, zeta, wd = constants()
    err = np.max(np.abs(res["mass.s"] - analytic(res.t)))
    print(f"Mass-spring-damper (zeta = {zeta:.3f})")
    print(f"  damped period {measured_period(res.t, res['mass.s']):.6f} s "
          f"(analytic 2 pi/wd = {2 * np.pi / wd:.6f} s)")
    print(f"  max |s - s_analytic| = {err:.2e} m (s0 = {S0:g} m)")
    print(f"  plot written to {OUTDIR / 'mass_spring_damper.png'}")


if __name__ == "__main__":
    main()
