"""Series RLC circuit: the underdamped step response.

The physics
-----------
A constant voltage ``V`` is applied at ``t = 0`` to a resistor ``R``, an inductor ``L`` and a
capacitor ``C`` in series; the inductor current and the capacitor voltage start at zero.
With the loop current ``i`` and the capacitor voltage ``v``::

    L di/dt + R i + v = V,      C dv/dt = i

Reference solution
------------------
With ``alpha = R / (2 L)``, ``w0 = 1 / sqrt(L C)`` and, for ``alpha < w0`` (underdamped),
``wd = sqrt(w0^2 - alpha^2)``::

    v(t) = V [1 - exp(-alpha t) (cos(wd t) + alpha / wd sin(wd t))]
    i(t) = V / (L wd) exp(-alpha t) sin(wd t)

The example compares both over the whole run and checks the first overshoot
``exp(-alpha pi / wd)``.

Run settings: ``T_END``, ``RTOL``, ``ATOL``, ``N_POINTS`` below.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

import acausal as ac
from components import electrical as el

# run settings
T_END = 0.1  # s
RTOL = 1e-8
ATOL = 1e-10
N_POINTS = 2001

# parameters
V = 1.0  # step height [V]
R = 10.0  # resistance [Ohm]
L = 0.1  # inductance [H]
C = 1e-4  # capacitance [F]

OUTDIR = Path(__file__).resolve().parent / "output"


class SeriesRLC(ac.Model):
    """Source -> R -> L -> C -> ground."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.source = el.ConstantVoltage(V=V)
        self.resistor = el.Resistor(R=R)
        self.inductor = el.Inductor(L=L, i=0.0)
        self.capacitor = el.Capacitor(C=C, v=0.0)
        self.ground = el.Ground()
        self.connect(self.source.p, self.resistor.p)
        self.connect(self.resistor.n, self.inductor.p)
        self.connect(self.inductor.n, self.capacitor.p)
        self.connect(self.capacitor.n, self.source.n, self.ground.p)


def build_model() -> SeriesRLC:
    return SeriesRLC()


def constants() -> tuple[float, float, float]:
    """``alpha`` [1/s], ``w0`` and ``wd`` [rad/s]."""
    alpha = R / (2 * L)
    w0 = 1 / np.sqrt(L * C)
    return alpha, w0, np.sqrt(w0**2 - alpha**2)


def analytic(t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Capacitor voltage and loop current of the underdamped step response."""
    alpha, _, wd = constants()
    e = np.exp(-alpha * t)
    v = V * (1 - e * (np.cos(wd * t) + alpha / wd * np.sin(wd * t)))
    i = V / (L * wd) * e * np.sin(wd * t)
    return v, i


def run(plot: bool = True, outdir: str | Path | None = None) -> ac.Result:
    """Simulate the step response; optionally write ``series_rlc.png``."""
    res = ac.simulate(build_model(), T_END, rtol=RTOL, atol=ATOL, n_points=N_POINTS)
    if plot:
        _plot(res, Path(outdir) if outdir is not None else OUTDIR)
    return res


def _plot(res: ac.Result, outdir: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    v_ref, i_ref = analytic(res.t)
    t_ms = res.t * 1e3
    fig, (a1, a2) = plt.subplots(2, 1, figsize=(7, 5.5), sharex=True)
    a1.plot(t_ms, res["capacitor.v"], lw=2, label="simulation")
    a1.plot(t_ms, v_ref, "k--", lw=1, label="analytic")
    a1.set_ylabel("capacitor voltage [V]")
    alpha, w0, _ = constants()
    a1.set_title(f"Series RLC step response (damping ratio {alpha / w0:.3f})")
    a1.legend()
    a2.plot(t_ms, res["inductor.i"] * 1e3, color="C2", lw=2, label="simulation")
    a2.plot(t_ms, i_ref * 1e3, "k--", lw=1, label="analytic")
    a2.set_ylabel("current [mA]")
    a2.set_xlabel("time [ms]")
    a2.legend()
    for a in (a1, a2):
        a.grid(True, alpha=0.3)
    fig.tight_layout()
    outdir.mkdir(parents=True, exist_ok=True)
    path = outdir / "series_rlc.png"
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return path


def main() -> None:
    res = run(plot=True)
    v_ref, i_ref = analytic(res.t)
    alpha, w0, wd = constants()
    overshoot_ref = np.exp(-alpha * np.pi / wd)
    overshoot = res["capacitor.v"].max() / V - 1
    print(f"Series RLC: alpha = {alpha:g} 1/s, w0 = {w0:.4g} rad/s, wd = {wd:.4g} rad/s")
    print(f"  first overshoot {overshoot:.5f} (analytic exp(-alpha pi/wd) = {overshoot_ref:.5f},"
          f" sampled every {T_END / (N_POINTS - 1) * 1e3:g} ms)")
    print(f"  max error: v_C {np.max(np.abs(res['capacitor.v'] - v_ref)):.2e} V, "
          f"i {np.max(np.abs(res['inductor.i'] - i_ref)):.2e} A")
    print(f"  plot written to {OUTDIR / 'series_rlc.png'}")


if __name__ == "__main__":
    main()
