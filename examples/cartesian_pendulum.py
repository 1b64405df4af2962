"""A planar pendulum in Cartesian coordinates, written as one component (index 3).

The physics
-----------
A point mass ``m`` on a massless rod of length ``L`` swings under gravity ``g``. Written in
Cartesian coordinates with the rod force ``F`` (tension positive) as an unknown::

    x' = vx,  y' = vy,
    m vx' = -F x / L,   m vy' = -F y / L - m g,
    x^2 + y^2 = L^2

The user writes exactly these five equations in one component class (:class:`Pendulum`,
no ports, no edges). The length constraint contains no derivative and no ``F``: it must be
differentiated twice before ``F`` can be computed, so the DAE has index 3. Pantelides'
algorithm finds the differentiations, the dummy-derivative method keeps two states out of
``x, y, vx, vy``; which two is a matter of conditioning (``x`` is a bad state near the
horizontal, ``y`` near the bottom), so the choice is *dynamic*: it is re-made along the
trajectory, which the structure report and the ``reselections`` count show.

The pendulum is released at rest from ``theta0 = 120`` degrees (above the pivot height).
Only ``x`` and ``vx`` are fixed; ``y`` and ``vy`` follow from the constraint and its
derivative (the start of ``y`` is a guess that picks the upper root).

Reference solution
------------------
The exact period of the nonlinear pendulum is

    T = 4 sqrt(L / g) K(k^2),      k = sin(theta0 / 2),

with ``K`` the complete elliptic integral of the first kind (``scipy.special.ellipk`` takes
the parameter ``m = k^2``). The energy ``m (vx^2 + vy^2) / 2 + m g y`` is conserved and the
constraint ``x^2 + y^2 - L^2`` stays zero; the example reports both drifts.

Run settings: ``T_END``, ``RTOL``, ``ATOL``, ``N_POINTS`` below.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from scipy.special import ellipk

import acausal as ac
from acausal import Parameter, Variable, der

# run settings
T_END = 10.0  # s (about 3.6 periods)
RTOL = 1e-8
ATOL = 1e-10
N_POINTS = 2001

# parameters
M = 1.0  # mass [kg]
L = 1.0  # rod length [m]
G = 9.81  # gravity [m/s2]
THETA0 = np.deg2rad(120.0)  # release angle from the downward vertical [rad]

OUTDIR = Path(__file__).resolve().parent / "output"


class Pendulum(ac.Component):
    """Point mass on a rigid massless rod, pivot at the origin, y upwards.

    Parameters
    ----------
    m : mass [kg]; L : rod length [m]; g : gravity [m/s2]

    Variables
    ---------
    x, y : position [m]; vx, vy : velocity [m/s]; F : rod tension [N]
    """

    m = Parameter(1.0, unit="kg", doc="mass", min=0.0)
    L = Parameter(1.0, unit="m", doc="rod length", min=0.0)
    g = Parameter(9.81, unit="m/s2", doc="gravitational acceleration")
    x = Variable(unit="m", doc="horizontal position")
    y = Variable(unit="m", doc="vertical position (up)")
    vx = Variable(unit="m/s", doc="horizontal velocity")
    vy = Variable(unit="m/s", doc="vertical velocity")
    F = Variable(unit="N", doc="rod tension")

    def equations(self):
        return [
            der(self.x) == self.vx,
            der(self.y) == self.vy,
            self.m * der(self.vx) == -self.F * self.x / self.L,
            self.m * der(self.vy) == -self.F * self.y / self.L - self.m * self.g,
            self.x**2 + self.y**2 == self.L**2,
        ]


def build_model() -> Pendulum:
    """Released at rest from THETA0: x and vx fixed, y and vy guessed."""
    return Pendulum(m=M, L=L, g=G, x=L * np.sin(THETA0), vx=0.0,
                    y=ac.guess(-L * np.cos(THETA0)), vy=ac.guess(0.0), F=ac.guess(0.0))


def exact_period() -> float:
    return float(4 * np.sqrt(L / G) * ellipk(np.sin(THETA0 / 2) ** 2))


def measured_period(t: np.ndarray, x: np.ndarray) -> float:
    """Mean time between successive downward zero crossings of ``x`` (linear interpolation)."""
    k = np.flatnonzero((x[:-1] > 0) & (x[1:] <= 0))
    tc = t[k] - x[k] * (t[k + 1] - t[k]) / (x[k + 1] - x[k])
    return float(np.mean(np.diff(tc)))


def energy(res: ac.Result) -> np.ndarray:
    return 0.5 * M * (res["vx"] ** 2 + res["vy"] ** 2) + M * G * res["y"]


def run(plot: bool = True, outdir: str | Path | None = None,
        model: ac.Component | ac.CompiledModel | None = None) -> ac.Result:
    """Simulate the swing; optionally write ``cartesian_pendulum.png``."""
    res = ac.simulate(model if model is not None else build_model(), T_END, rtol=RTOL,
                      atol=ATOL, n_points=N_POINTS)
    if plot:
        _plot(res, Path(outdir) if outdir is not None else OUTDIR)
    return res


def _plot(res: ac.Result, outdir: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 3.8),
                                 gridspec_kw={"width_ratios": [1.6, 1]})
    a1.plot(res.t, res["x"], label="x [m]")
    a1.plot(res.t, res["y"], label="y [m]")
    a1.plot(res.t, res["F"] / (M * G), label="F / (m g) [1]", lw=1)
    a1.set_xlabel("time [s]")
    a1.set_title(f"Cartesian pendulum released at {np.rad2deg(THETA0):.0f} deg")
    a1.grid(True, alpha=0.3)
    a1.legend(fontsize=8, loc="lower right")
    a2.plot(res["x"], res["y"], lw=1)
    a2.plot([0, res["x"][0]], [0, res["y"][0]], "k-o", ms=3, lw=1)
    a2.set_aspect("equal")
    a2.set_xlabel("x [m]")
    a2.set_ylabel("y [m]")
    a2.set_title("path")
    a2.grid(True, alpha=0.3)
    fig.tight_layout()
    outdir.mkdir(parents=True, exist_ok=True)
    path = outdir / "cartesian_pendulum.png"
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return path


def main() -> None:
    cm = ac.build(build_model())
    print(cm.report)
    res = run(plot=True, model=cm)
    E = energy(res)
    T_sim, T_ref = measured_period(res.t, res["x"]), exact_period()
    print("Cartesian pendulum, checks")
    print(f"  period {T_sim:.7f} s, exact 4 sqrt(L/g) K(sin^2(theta0/2)) = {T_ref:.7f} s "
          f"(rel. error {abs(T_sim / T_ref - 1):.1e})")
    print(f"  energy drift max |E - E0| / (m g L) = {np.max(np.abs(E - E[0])) / (M * G * L):.1e}, "
          f"constraint max |x^2 + y^2 - L^2| = "
          f"{np.max(np.abs(res['x'] ** 2 + res['y'] ** 2 - L**2)):.1e} m2")
    print(f"  state re-selections during the run: {res.stats.reselections}")
    print(f"  plot written to {OUTDIR / 'cartesian_pendulum.png'}")


if __name__ == "__main__":
    main()
