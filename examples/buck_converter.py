"""Buck converter: a PWM-switched step-down DC-DC converter with ideal switches.

The physics
-----------
An ideal switch (:class:`~components.electrical.ControlledIdealSwitch`) connects the
input ``Vin`` to an LC filter during the fraction ``D`` (duty cycle) of each switching
period ``T = 1/f``; a PWM :class:`~components.blocks.Pulse` drives it. While the switch
is open, an ideal freewheeling diode (:class:`~components.electrical.IdealDiode`) carries
the inductor current. Each edge of the PWM and each switching of the diode is an event,
so the switching instants are exact. Starting from rest, the output voltage rises with
the filter's damped resonance and settles on a DC value with a small ripple at the
switching frequency.

Reference solution
------------------
In continuous conduction the mean inductor voltage over a period is zero, so the mean of
the switched node, ``D Vin``, is the mean output voltage: ``Vout = D Vin``. The textbook
ripple of the output (all of the inductor's ripple current ``(Vin - Vout) D T / L`` into
the capacitor) is ``dV = (1 - D) Vout / (8 L C f^2)``; the exact periodic orbit of the
two linear modes (matrix exponentials, as in ``tests/hybrid/test_discontinuous.py``) differs
from it by the load's share of the ripple current and the LC resonance, here 0.6 %.

Run settings: ``T_END``, ``RTOL``, ``ATOL``, ``N_POINTS`` below. The PWM edges reach the
switch through its control port; give at least a few output points per PWM phase (here
10 per period) so that no pulse falls between the indicator checks.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

import acausal as ac
from components import blocks as bl
from components import electrical as el

# parameters
VIN = 12.0  # input voltage [V]
DUTY = 0.4  # duty cycle [1]
FSW = 20e3  # switching frequency [Hz]
L = 100e-6  # inductance [H]
C = 100e-6  # output capacitance [F]
R = 5.0  # load [Ohm]

# run settings
T_END = 160 / FSW  # s: 8 ms, 16 time constants 2 R C of the filter's decay
RTOL = 1e-8
ATOL = 1e-10
N_POINTS = 10 * 160 + 1

OUTDIR = Path(__file__).resolve().parent / "output"


class BuckConverter(ac.Model):
    """Vin -- PWM switch -- L -- (C || R), freewheeling diode from ground to the switch."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.source = el.ConstantVoltage(V=VIN)
        self.pwm = bl.Pulse(amplitude=1.0, width=100 * DUTY, period=1 / FSW)
        self.switch = el.ControlledIdealSwitch(Ron=1e-9, Goff=1e-9)
        self.diode = el.IdealDiode(Ron=1e-9, Goff=1e-9)
        self.inductor = el.Inductor(L=L, i=0.0)
        self.capacitor = el.Capacitor(C=C, v=0.0)
        self.load = el.Resistor(R=R)
        self.ground = el.Ground()
        self.connect(self.source.p, self.switch.p)
        self.connect(self.switch.n, self.diode.n, self.inductor.p)
        self.connect(self.inductor.n, self.capacitor.p, self.load.p)
        self.connect(self.source.n, self.diode.p, self.capacitor.n, self.load.n,
                     self.ground.p)
        self.connect(self.pwm.y, self.switch.control)


def build_model() -> BuckConverter:
    return BuckConverter()


def textbook() -> dict[str, float]:
    """Mean output [V] and output ripple [V] of the textbook formulas."""
    vout = DUTY * VIN
    return {"vout": vout, "ripple": (1 - DUTY) * vout / (8 * L * C * FSW**2)}


def last_period(res: ac.Result) -> tuple[float, float]:
    """Mean (trapezoidal, 10 points a period and the event instants) and peak-to-peak
    output voltage over the last switching period."""
    sel = res.t >= T_END - 1 / FSW - 1e-12
    t, v = res.t[sel], res["capacitor.v"][sel]
    return float(np.trapezoid(v, t) / (t[-1] - t[0])), float(np.ptp(v))


def run(plot: bool = True, outdir: str | Path | None = None) -> ac.Result:
    """Simulate the start-up; optionally write ``buck_converter.png``."""
    res = ac.simulate(build_model(), T_END, rtol=RTOL, atol=ATOL, n_points=N_POINTS)
    if plot:
        _plot(res, Path(outdir) if outdir is not None else OUTDIR)
    return res


def _plot(res: ac.Result, outdir: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ref = textbook()
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 3.6))
    ax1.plot(res.t * 1e3, res["capacitor.v"], lw=1.2, label="output voltage [V]")
    ax1.plot(res.t * 1e3, res["inductor.i"], lw=0.8, label="inductor current [A]")
    ax1.axhline(ref["vout"], color="k", ls="--", lw=0.8, label="D Vin")
    ax1.set_xlabel("time [ms]")
    ax1.set_title("Start-up from rest")
    ax1.legend(fontsize=7)
    ax1.grid(True, alpha=0.3)
    zoom = res.t >= T_END - 3 / FSW
    tz = (res.t[zoom] - res.t[zoom][0]) * 1e6
    ax2.plot(tz, res["capacitor.v"][zoom], lw=1.5, label="output voltage")
    mean, _ = last_period(res)
    for sign in (-0.5, 0.5):
        ax2.axhline(mean + sign * ref["ripple"], color="k", ls="--", lw=0.8,
                    label="textbook ripple" if sign < 0 else None)
    ax2.set_xlabel("time in the last 3 periods [us]")
    ax2.set_ylabel("voltage [V]")
    ax2.set_title(f"Ripple at {FSW / 1e3:g} kHz, D = {DUTY:g}")
    ax2.legend(fontsize=7)
    ax2.grid(True, alpha=0.3)
    fig.tight_layout()
    outdir.mkdir(parents=True, exist_ok=True)
    path = outdir / "buck_converter.png"
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return path


def main() -> None:
    res = run(plot=True)
    ref = textbook()
    mean, ripple = last_period(res)
    print("Buck converter, last switching period")
    print(f"  mean output {mean:.6f} V (D Vin = {ref['vout']:.6f} V)")
    print(f"  ripple {ripple * 1e3:.3f} mV (textbook (1 - D) Vout / (8 L C f^2) = "
          f"{ref['ripple'] * 1e3:.3f} mV)")
    print(f"  {len(res.events)} events in {res.stats.wall_time:.1f} s")
    print(f"  plot written to {OUTDIR / 'buck_converter.png'}")


if __name__ == "__main__":
    main()
