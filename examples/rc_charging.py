"""RC circuit: a capacitor charged through a resistor by a constant voltage.

The physics
-----------
A constant voltage source ``V`` charges the capacitor ``C`` through the resistor ``R``;
the capacitor starts empty (``Capacitor(C=..., v=0.0)`` fixes its initial voltage).
Kirchhoff's voltage law around the loop and the two constitutive laws give::

    V = R i + v_C,      i = C dv_C/dt

Reference solution
------------------
A first-order response with time constant ``tau = R C``::

    v_C(t) = V (1 - exp(-t / (R C))),      i(t) = (V / R) exp(-t / (R C))

The example compares the whole simulated trajectory with it.

Run settings: ``T_END``, ``RTOL``, ``ATOL``, ``N_POINTS`` below.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

import acausal as ac
from components import electrical as el

# run settings
T_END = 0.5  # s (5 time constants)
RTOL = 1e-8
ATOL = 1e-10
N_POINTS = 501

# parameters
V = 10.0  # source voltage [V]
R = 100.0  # resistance [Ohm]
C = 1e-3  # capacitance [F]

OUTDIR = Path(__file__).resolve().parent / "output"


class RCCircuit(ac.Model):
    """Source, resistor and capacitor in series, grounded at the source's negative pin."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.source = el.ConstantVoltage(V=V)
        self.resistor = el.Resistor(R=R)
        self.capacitor = el.Capacitor(C=C, v=0.0)
        self.ground = el.Ground()
        self.connect(self.source.p, self.resistor.p)
        self.connect(self.resistor.n, self.capacitor.p)
        self.connect(self.capacitor.n, self.source.n, self.ground.p)


def build_model() -> RCCircuit:
    return RCCircuit()


def analytic(t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Capacitor voltage and loop current."""
    tau = R * C
    return V * (1.0 - np.exp(-t / tau)), V / R * np.exp(-t / tau)


def run(plot: bool = True, outdir: str | Path | None = None) -> ac.Result:
    """Simulate the charging; optionally write ``rc_charging.png``."""
    res = ac.simulate(build_model(), T_END, rtol=RTOL, atol=ATOL, n_points=N_POINTS)
    if plot:
        _plot(res, Path(outdir) if outdir is not None else OUTDIR)
    return res


def _plot(res: ac.Result, outdir: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    v_ref, i_ref = analytic(res.t)
    fig, (a1, a2) = plt.subplots(2, 1, figsize=(7, 5.5), sharex=True)
    a1.plot(res.t, res["capacitor.v"], lw=2, label="simulation")
    a1.plot(res.t, v_ref, "k--", lw=1, label=r"$V(1-e^{-t/RC})$")
    a1.set_ylabel("capacitor voltage [V]")
    a1.set_title(f"RC charging: R = {R:g} Ohm, C = {C:g} F, RC = {R * C:g} s")
    a1.legend()
    a2.plot(res.t, res["resistor.i"] * 1e3, color="C2", lw=2, label="simulation")
    a2.plot(res.t, i_ref * 1e3, "k--", lw=1, label=r"$(V/R)e^{-t/RC}$")
    a2.set_ylabel("current [mA]")
    a2.set_xlabel("time [s]")
    a2.legend()
    for a in (a1, a2):
        a.grid(True, alpha=0.3)
    fig.tight_layout()
    outdir.mkdir(parents=True, exist_ok=True)
    path = outdir / "rc_charging.png"
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return path


def main() -> None:
    res = run(plot=True)
    v_ref, _ = analytic(res.t)
    err = np.max(np.abs(res["capacitor.v"] - v_ref))
    print("RC charging")
    print(f"  v_C(RC) = {np.interp(R * C, res.t, res['capacitor.v']):.6f} V "
          f"(analytic V(1 - 1/e) = {V * (1 - np.exp(-1)):.6f} V)")
    print(f"  max |v_C - V(1 - exp(-t/RC))| over the run = {err:.2e} V")
    print(f"  plot written to {OUTDIR / 'rc_charging.png'}")


if __name__ == "__main__":
    main()
