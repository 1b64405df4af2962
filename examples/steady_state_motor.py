"""The DC motor drive of ``dc_motor.py`` initialised directly at its steady state.

The physics
-----------
Same drive as ``dc_motor.py`` (voltage source, armature R and L, EMF, rotor, gearbox,
elastic shaft, load inertia, constant opposing load torque). Instead of starting at rest,
the initial state is *defined by equations*, as Modelica's ``initial equation`` section
does: nothing accelerates, the armature current does not change and the shaft does not
twist any more::

    der(motor.w) = 0,  der(load.w) = 0,  der(inductor.i) = 0,  shaft.w_rel = 0

The model class overrides ``initial_equations()`` (collected like ``equations()``; ``der``
is allowed there). The absolute angle of the rotor is not determined by a steady state, so
it keeps its fixed start value ``motor.phi = 0``. The initialisation solves the model's
equations together with these conditions for all five states; the simulation must then
stay where it starts.

Reference solution
------------------
As in ``dc_motor.py``: ``i_ss = T_load / (n k)``, ``w_motor = (V - R i_ss) / k``,
``w_load = w_motor / n``, and the shaft twist ``phi_rel = -T_load / c`` (MSL sign: the
spring's cut torque at its flange_b is ``c phi_rel``).

Run settings: ``T_END``, ``RTOL``, ``ATOL``, ``N_POINTS`` below.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

import acausal as ac
from acausal import der

sys.path.insert(0, str(Path(__file__).resolve().parent))
from dc_motor import C_SHAFT, T_LOAD, DCMotorDrive, analytic_steady_state  # noqa: E402

# run settings
T_END = 0.3  # s
RTOL = 1e-8
ATOL = 1e-10
N_POINTS = 301

OUTDIR = Path(__file__).resolve().parent / "output"


class SteadyDCMotorDrive(DCMotorDrive):
    """The drive with steady-state initial equations (no start value fixed but the angle)."""

    def __init__(self, **kwargs):
        super().__init__(at_rest=False, **kwargs)

    def initial_equations(self):
        return [
            der(self.motor.w) == 0,
            der(self.load.w) == 0,
            der(self.inductor.i) == 0,
            self.shaft.w_rel == 0,
        ]


def build_model() -> SteadyDCMotorDrive:
    return SteadyDCMotorDrive()


def run(plot: bool = True, outdir: str | Path | None = None,
        model: ac.Component | ac.CompiledModel | None = None) -> ac.Result:
    """Simulate from the steady state; optionally write ``steady_state_motor.png``."""
    res = ac.simulate(model if model is not None else build_model(), T_END, rtol=RTOL,
                      atol=ATOL, n_points=N_POINTS)
    if plot:
        _plot(res, Path(outdir) if outdir is not None else OUTDIR)
    return res


def _plot(res: ac.Result, outdir: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ref = analytic_steady_state()
    fig, axes = plt.subplots(1, 3, figsize=(11, 3.2))
    for ax, key, rkey, label in [(axes[0], "motor.w", "w_motor", "motor speed [rad/s]"),
                                 (axes[1], "load.w", "w_load", "load speed [rad/s]"),
                                 (axes[2], "inductor.i", "i", "armature current [A]")]:
        ax.plot(res.t * 1e3, res[key], lw=2, label="simulation")
        ax.axhline(ref[rkey], color="k", ls="--", lw=1, label="analytic")
        ax.set_title(label)
        ax.set_xlabel("time [ms]")
        ax.grid(True, alpha=0.3)
        ax.set_ylim(0.98 * ref[rkey], 1.02 * ref[rkey])  # +-2 %: a flat line is the result
    axes[0].legend(fontsize=8)
    fig.suptitle("DC motor drive started at its steady state (initial equations)")
    fig.tight_layout()
    outdir.mkdir(parents=True, exist_ok=True)
    path = outdir / "steady_state_motor.png"
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return path


def main() -> None:
    cm = ac.build(build_model())
    print(cm.report)
    res = run(plot=True, model=cm)
    ref = analytic_steady_state()
    print("Initial conditions used:")
    for c in res.stats.initial_conditions:
        print(f"  {c}")
    print("Steady state, checks (largest deviation over the run)")
    for key, rkey, unit in [("inductor.i", "i", "A"), ("motor.w", "w_motor", "rad/s"),
                            ("load.w", "w_load", "rad/s")]:
        dev = np.max(np.abs(res[key] - ref[rkey]))
        print(f"  {key:<11} starts at {res[key][0]:.6f} {unit} (analytic {ref[rkey]:.6f}),"
              f" max deviation {dev:.1e}")
    print(f"  shaft twist {res['shaft.phi_rel'][0]:.6f} rad (analytic -T_load/c = "
          f"{-T_LOAD / C_SHAFT:.6f} rad)")
    print(f"  plot written to {OUTDIR / 'steady_state_motor.png'}")


if __name__ == "__main__":
    main()
