"""Half-wave rectifier with an ideal diode and a smoothing capacitor.

The physics
-----------
A sine source ``V sin(w t)`` charges a capacitor ``C`` through an ideal diode
(:class:`~components.electrical.IdealDiode`); a resistor ``R`` loads it. While the diode
conducts, the capacitor follows the source; where the capacitor would need a negative
diode current the diode blocks (an event: the sign of its characteristic's parameter
``s`` changes), and the capacitor discharges into the load with the time constant
``RC``, until the source catches up with it in the next period (the diode conducts
again, another event). The output is a DC voltage with a ripple.

Reference solution
------------------
In the periodic steady state the diode turns off where the capacitor current
``C dv/dt + v/R`` of ``v = V sin(w t)`` reaches zero, ``tan(w t_off) = -w R C``; the
capacitor then decays as ``V sin(w t_off) exp(-(t - t_off)/(RC))`` and the diode turns
on where this meets the rising source again (a scalar root); the ripple is
``V (1 - sin(w t_on))``. The same closed form is checked in ``tests/hybrid/test_hybrid.py``.

Run settings: ``T_END``, ``RTOL``, ``ATOL``, ``N_POINTS`` below.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from scipy.optimize import brentq

import acausal as ac
from components import electrical as el

# run settings
T_END = 0.1  # s (5 periods)
RTOL = 1e-8
ATOL = 1e-10
N_POINTS = 1001

# parameters
V = 10.0  # source amplitude [V]
F = 50.0  # source frequency [Hz]
R = 1e3  # load [Ohm]
C = 100e-6  # smoothing capacitor [F]
W = 2 * np.pi * F

OUTDIR = Path(__file__).resolve().parent / "output"


class HalfWaveRectifier(ac.Model):
    """source -- ideal diode -- (capacitor || resistor)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.source = el.SineVoltage(V=V, f=F)
        # Goff = 1e-9 S: the blocking diode leaks 1e-6 of the load current (the default
        # 1e-5 S would leak 1 % and turn the diode on 9 us early)
        self.diode = el.IdealDiode(Goff=1e-9)
        self.capacitor = el.Capacitor(C=C, v=0.0)
        self.load = el.Resistor(R=R)
        self.ground = el.Ground()
        self.connect(self.source.p, self.diode.p)
        self.connect(self.diode.n, self.capacitor.p, self.load.p)
        self.connect(self.source.n, self.capacitor.n, self.load.n, self.ground.p)


def build_model() -> HalfWaveRectifier:
    return HalfWaveRectifier()


def closed_form() -> dict[str, float]:
    """Turn-off and turn-on instants within a period [s] and the ripple [V] of the
    periodic steady state."""
    t_off = (np.pi - np.arctan(W * R * C)) / W
    v_off = V * np.sin(W * t_off)

    def gap(t: float) -> float:
        return V * np.sin(W * t) - v_off * np.exp(-(t - t_off) / (R * C))

    t_on = brentq(gap, 1 / F + 1e-6, 1 / F + 0.25 / F) - 1 / F
    return {"t_off": t_off, "t_on": t_on, "ripple": V * (1 - np.sin(W * (t_on + 1 / F)))}


def switchings(res: ac.Result) -> tuple[np.ndarray, np.ndarray]:
    """Instants where the diode turns off and on (``s < 0`` becomes true / false)."""
    off = [ev.t for ev in res.events if "diode.s < 0 -> True" in " ".join(ev.changes)]
    on = [ev.t for ev in res.events if "diode.s < 0 -> False" in " ".join(ev.changes)]
    return np.array(off), np.array(on)


def run(plot: bool = True, outdir: str | Path | None = None) -> ac.Result:
    """Simulate five periods; optionally write ``half_wave_rectifier.png``."""
    res = ac.simulate(build_model(), T_END, rtol=RTOL, atol=ATOL, n_points=N_POINTS)
    if plot:
        _plot(res, Path(outdir) if outdir is not None else OUTDIR)
    return res


def _plot(res: ac.Result, outdir: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ref = closed_form()
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(7, 4.6), sharex=True)
    ax1.plot(res.t * 1e3, res["source.v"], lw=1.0, color="0.6", label="source")
    ax1.plot(res.t * 1e3, res["capacitor.v"], lw=1.5, label="output")
    ax1.axhline(V - ref["ripple"], color="k", ls="--", lw=0.8,
                label="V - ripple (closed form)")
    ax1.set_ylabel("voltage [V]")
    ax1.set_title(f"Ideal half-wave rectifier: ripple {ref['ripple']:.3f} V (closed form)")
    ax1.legend(fontsize=7, loc="lower right")
    ax1.grid(True, alpha=0.3)
    ax2.plot(res.t * 1e3, res["diode.i"] * 1e3, lw=1.2, label="diode current")
    ax2.set_xlabel("time [ms]")
    ax2.set_ylabel("current [mA]")
    ax2.legend(fontsize=7)
    ax2.grid(True, alpha=0.3)
    fig.tight_layout()
    outdir.mkdir(parents=True, exist_ok=True)
    path = outdir / "half_wave_rectifier.png"
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return path


def main() -> None:
    res = run(plot=True)
    ref = closed_form()
    off, on = switchings(res)
    period = 1 / F
    t_off = off[(off > 3 * period) & (off < 4 * period)].max() - 3 * period
    t_on = on[(on > 4 * period) & (on < 4.5 * period)].min() - 4 * period
    last = (res.t >= 3 * period) & (res.t <= 4 * period)
    ripple = np.ptp(res["capacitor.v"][last])
    print("Ideal half-wave rectifier (steady state, 4th period)")
    print(f"  diode off at {t_off * 1e3:.6f} ms (closed form {ref['t_off'] * 1e3:.6f} ms)")
    print(f"  diode on at {t_on * 1e3:.6f} ms (closed form {ref['t_on'] * 1e3:.6f} ms)")
    print(f"  ripple {ripple:.6f} V (closed form {ref['ripple']:.6f} V)")
    print(f"  plot written to {OUTDIR / 'half_wave_rectifier.png'}")


if __name__ == "__main__":
    main()
