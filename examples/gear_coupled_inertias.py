"""Two inertias rigidly coupled by an ideal gear and driven by a torque (higher index).

The physics
-----------
A torque ``tau(t)`` drives inertia ``J1``; an ideal gearbox of ratio ``n`` (``phi_1 = n
phi_2``) couples it rigidly to inertia ``J2``. Each inertia declares its angle and speed as
preferred states, but the gear makes them dependent: the position-level constraint
``phi_1 = n phi_2`` ties two second-order bodies together. As written the DAE has a high
differential index (3 for the angles, 2 for the speeds); the structure stage differentiates
the gear constraint twice (Pantelides), keeps ``J1``'s angle and speed as states and turns
``J2``'s derivatives into dummy derivatives (Mattsson-Soederlind).

Only ``J1`` is given initial values: ``J2``'s follow from the gear. Fixing both (even with
consistent values) over-determines the initial problem and is reported as such, as
Modelica tools do.

Reference solution
------------------
The gear reflects ``J2`` to the driving side as ``J2 / n^2``::

    (J1 + J2 / n^2) dw1/dt = tau(t),      w2 = w1 / n

With ``tau(t) = tau0 sin(Omega t)`` and the system at rest at ``t = 0``::

    w1(t) = tau0 (1 - cos(Omega t)) / (Omega J_eq),      J_eq = J1 + J2 / n^2

and the gear torque on ``J2`` is ``J2 dw2/dt``.

Run settings: ``T_END``, ``RTOL``, ``ATOL``, ``N_POINTS`` below.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

import acausal as ac
from components import rotational as rot

# run settings
T_END = 4.0  # s
RTOL = 1e-8
ATOL = 1e-10
N_POINTS = 401

# parameters
J1 = 0.5  # driving inertia [kg.m2]
J2 = 4.0  # driven inertia [kg.m2]
RATIO = 3.0  # gear ratio phi_1 / phi_2 [1]
TAU0 = 2.0  # torque amplitude [N.m]
OMEGA = 2.0  # torque angular frequency [rad/s]

OUTDIR = Path(__file__).resolve().parent / "output"


class GearCoupledInertias(ac.Model):
    """Torque -> J1 -> ideal gear -> J2."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.torque = rot.Torque(tau=lambda t: TAU0 * np.sin(OMEGA * t))
        self.j1 = rot.Inertia(J=J1, phi=0.0, w=0.0)
        self.gear = rot.IdealGear(ratio=RATIO)
        self.j2 = rot.Inertia(J=J2)  # its start values follow from the gear
        self.connect(self.torque.flange, self.j1.flange_a)
        self.connect(self.j1.flange_b, self.gear.flange_a)
        self.connect(self.gear.flange_b, self.j2.flange_a)


def build_model() -> GearCoupledInertias:
    return GearCoupledInertias()


def analytic(t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Speed of J1 and of J2."""
    j_eq = J1 + J2 / RATIO**2
    w1 = TAU0 * (1 - np.cos(OMEGA * t)) / (OMEGA * j_eq)
    return w1, w1 / RATIO


def run(plot: bool = True, outdir: str | Path | None = None,
        model: ac.Component | ac.CompiledModel | None = None) -> ac.Result:
    """Simulate; optionally write ``gear_coupled_inertias.png``."""
    res = ac.simulate(model if model is not None else build_model(), T_END, rtol=RTOL,
                      atol=ATOL, n_points=N_POINTS)
    if plot:
        _plot(res, Path(outdir) if outdir is not None else OUTDIR)
    return res


def _plot(res: ac.Result, outdir: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    w1, w2 = analytic(res.t)
    fig, ax = plt.subplots(figsize=(7, 3.6))
    ax.plot(res.t, res["j1.w"], lw=2, label="j1.w")
    ax.plot(res.t, res["j2.w"], lw=2, label="j2.w")
    ax.plot(res.t, w1, "k--", lw=1, label="analytic")
    ax.plot(res.t, w2, "k--", lw=1)
    ax.set_xlabel("time [s]")
    ax.set_ylabel("angular velocity [rad/s]")
    ax.set_title(f"Inertias coupled by an ideal gear (ratio {RATIO:g})")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    outdir.mkdir(parents=True, exist_ok=True)
    path = outdir / "gear_coupled_inertias.png"
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return path


def main() -> None:
    cm = ac.build(build_model())
    print(cm.report)
    res = run(plot=True, model=cm)
    w1, w2 = analytic(res.t)
    print("Gear-coupled inertias, checks")
    print(f"  max |j1.w - w1_analytic| = {np.max(np.abs(res['j1.w'] - w1)):.2e} rad/s, "
          f"max |j2.w - w2_analytic| = {np.max(np.abs(res['j2.w'] - w2)):.2e} rad/s")
    print(f"  gear constraint max |j1.phi - n j2.phi| = "
          f"{np.max(np.abs(res['j1.phi'] - RATIO * res['j2.phi'])):.1e} rad")
    print(f"  plot written to {OUTDIR / 'gear_coupled_inertias.png'}")


if __name__ == "__main__":
    main()
