"""A heating resistor warms a body that loses heat to the ambient (electro-thermal).

The physics
-----------
A constant voltage ``V`` feeds a :class:`~components.electrical.HeatingResistor` whose
resistance depends on its temperature, ``R = R_ref (1 + alpha (T - T_ref))``. Its Joule
losses ``P = V^2 / R`` flow out of its heat port into a heat capacitor ``C`` (the resistor
and the body it sits on), which loses heat to a fixed ambient temperature ``T_amb`` through
a thermal conductance ``G``::

    C dT/dt = V^2 / R(T) - G (T - T_amb),      T(0) = T_amb

Reference solution
------------------
For ``alpha = 0`` the power is constant, ``P = V^2 / R_ref``, and the rise is first order
with time constant ``C / G``::

    T(t) = T_amb + P / G (1 - exp(-G t / C))

For ``alpha != 0`` the steady state solves ``G (T - T_amb) R_ref (1 + alpha (T - T_ref)) =
V^2``, a quadratic in ``T``; a positive ``alpha`` (a metal) lowers the power as the resistor
warms, so it settles cooler. The equation is still separable: with ``x = T - T_amb``,
``b = 1 + alpha (T_amb - T_ref)`` and ``x1 > 0 > x2`` the roots of
``alpha G x^2 + b G x - V^2 / R_ref = 0``, partial fractions give the exact time at which
the temperature rise reaches ``x``::

    t(x) = C / (G alpha (x1 - x2)) [(b + alpha x1) ln(x1 / (x1 - x))
                                    + (b + alpha x2) ln((x - x2) / (-x2))]

which the example compares with the simulated trajectory. The same compiled model is run
for both cases by overriding the parameter ``heater.alpha`` (no rebuild).

Run settings: ``T_END``, ``RTOL``, ``ATOL``, ``N_POINTS`` below.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

import acausal as ac
from components import electrical as el
from components import thermal as th

# run settings
T_END = 1000.0  # s (10 thermal time constants)
RTOL = 1e-8
ATOL = 1e-8
N_POINTS = 601

# parameters
V = 30.0  # supply voltage [V]
R_REF = 10.0  # resistance at T_ref [Ohm]
T_AMB = 293.15  # ambient temperature [K]
T_REF = 293.15  # reference temperature of R_ref [K]
C_TH = 100.0  # heat capacity [J/K]
G_TH = 1.0  # thermal conductance to the ambient [W/K]
ALPHA_METAL = 3.9e-3  # temperature coefficient of copper [1/K], the alpha != 0 case

OUTDIR = Path(__file__).resolve().parent / "output"


class HeatedBody(ac.Model):
    """Voltage source -> heating resistor; its heat port -> capacitor -> conductor -> ambient."""

    def __init__(self, alpha: float = 0.0, **kwargs):
        super().__init__(**kwargs)
        self.source = el.ConstantVoltage(V=V)
        self.ground = el.Ground()
        self.heater = el.HeatingResistor(R_ref=R_REF, T_ref=T_REF, alpha=alpha)
        self.body = th.HeatCapacitor(C=C_TH, T=T_AMB)
        self.loss = th.ThermalConductor(G=G_TH)
        self.ambient = th.FixedTemperature(T=T_AMB)
        self.connect(self.source.p, self.heater.p)
        self.connect(self.heater.n, self.source.n, self.ground.p)
        self.connect(self.heater.heatPort, self.body.port, self.loss.port_a)
        self.connect(self.loss.port_b, self.ambient.port)


def build_model() -> HeatedBody:
    return HeatedBody()


def analytic_alpha0(t: np.ndarray) -> np.ndarray:
    """Temperature for alpha = 0."""
    P = V**2 / R_REF
    return T_AMB + P / G_TH * (1 - np.exp(-G_TH * t / C_TH))


def steady_temperature(alpha: float) -> float:
    """Root of ``G (T - T_amb) R_ref (1 + alpha (T - T_ref)) = V^2`` above ``T_amb``."""
    if alpha == 0.0:
        return T_AMB + V**2 / (R_REF * G_TH)
    # with x = T - T_amb:  alpha x^2 + (1 + alpha (T_amb - T_ref)) x - V^2 / (G R_ref) = 0
    a, b, c = alpha, 1 + alpha * (T_AMB - T_REF), -(V**2) / (G_TH * R_REF)
    x = (-b + np.sqrt(b * b - 4 * a * c)) / (2 * a)
    return T_AMB + x


def time_to_rise(x: np.ndarray, alpha: float) -> np.ndarray:
    """Exact time at which the temperature rise ``T - T_amb`` reaches ``x`` (alpha != 0)."""
    b = 1 + alpha * (T_AMB - T_REF)
    x1 = steady_temperature(alpha) - T_AMB
    x2 = -b / alpha - x1  # sum of the roots is -b / alpha
    return C_TH / (G_TH * alpha * (x1 - x2)) * (
        (b + alpha * x1) * np.log(x1 / (x1 - x)) + (b + alpha * x2) * np.log((x - x2) / -x2))


def run(plot: bool = True, outdir: str | Path | None = None, alpha: float = 0.0,
        model: ac.Component | ac.CompiledModel | None = None) -> ac.Result:
    """Simulate with temperature coefficient ``alpha``; optionally plot this case."""
    res = ac.simulate(model if model is not None else build_model(), T_END, rtol=RTOL,
                      atol=ATOL, n_points=N_POINTS, params={"heater.alpha": alpha})
    if plot:
        plot_cases({alpha: res}, Path(outdir) if outdir is not None else OUTDIR)
    return res


def plot_cases(results: dict[float, ac.Result], outdir: Path) -> Path:
    """Temperature and power of each case; dashed: analytic (alpha = 0) and steady states."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 3.8))
    for k, (alpha, res) in enumerate(results.items()):
        label = f"alpha = {alpha:g} 1/K"
        a1.plot(res.t, res["body.T"] - 273.15, color=f"C{k}", lw=2, label=label)
        a1.axhline(steady_temperature(alpha) - 273.15, color=f"C{k}", ls=":", lw=1)
        a2.plot(res.t, res["heater.LossPower"], color=f"C{k}", lw=2, label=label)
        if alpha == 0.0:
            a1.plot(res.t, analytic_alpha0(res.t) - 273.15, "k--", lw=1,
                    label="analytic (alpha = 0)")
    a1.set_title("body temperature (dotted: steady states)")
    a1.set_ylabel("temperature [degC]")
    a2.set_title("Joule losses of the heating resistor")
    a2.set_ylabel("power [W]")
    for a in (a1, a2):
        a.set_xlabel("time [s]")
        a.grid(True, alpha=0.3)
        a.legend(fontsize=8)
    fig.tight_layout()
    outdir.mkdir(parents=True, exist_ok=True)
    path = outdir / "heating_resistor.png"
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return path


def main() -> None:
    cm = ac.build(build_model())
    cases = {a: run(plot=False, alpha=a, model=cm) for a in (0.0, ALPHA_METAL)}
    plot_cases(cases, OUTDIR)
    res0 = cases[0.0]
    err = np.max(np.abs(res0["body.T"] - analytic_alpha0(res0.t)))
    print("Heating resistor: first-order temperature rise, time constant C/G = "
          f"{C_TH / G_TH:g} s")
    print(f"  alpha = 0:      max |T - T_analytic| = {err:.2e} K; "
          f"T(C/G) - T_amb = {np.interp(C_TH / G_TH, res0.t, res0['body.T']) - T_AMB:.5f} K "
          f"(analytic {V**2 / R_REF / G_TH * (1 - np.exp(-1)):.5f} K)")
    res1 = cases[ALPHA_METAL]
    x = res1["body.T"] - T_AMB
    sel = (x > 0) & (x < 0.99 * (steady_temperature(ALPHA_METAL) - T_AMB))
    t_err = np.max(np.abs(time_to_rise(x[sel], ALPHA_METAL) - res1.t[sel]))
    print(f"  alpha = {ALPHA_METAL:g}: T(T_END) = {res1.final('body.T'):.4f} K, "
          f"steady state of the quadratic {steady_temperature(ALPHA_METAL):.4f} K "
          f"(vs {steady_temperature(0.0):.2f} K for alpha = 0);")
    print(f"                  max |t_exact(T_sim(t)) - t| up to 99 % of the rise = {t_err:.2e} s")
    print(f"  plot written to {OUTDIR / 'heating_resistor.png'}")


if __name__ == "__main__":
    main()
