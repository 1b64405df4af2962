"""A thermostat keeps a room in a band around its set point (thermal + logical blocks).

The physics
-----------
A room of heat capacity ``C`` (air, walls, furniture) loses heat through its envelope,
a thermal conductance ``G``, to the outside at ``T_out``. A heater of power ``P`` is
switched by an on-off controller (:class:`~components.blocks.OnOffController`): on when
the room falls below ``T_set - band/2``, off when it reaches ``T_set + band/2``::

    C dT/dt = P u - G (T - T_out),      u in {0, 1},      T(0) = T_out

Each switching instant is an event, located where the temperature crosses the band's edge.

Reference solution
------------------
Between switches the temperature relaxes exponentially, with time constant
``tau = C / G``, towards ``T_on = T_out + P / G`` while heating and towards ``T_out``
while cooling. So the first switch (off) is at ``tau ln((T_on - T_out) / (T_on - T_hi))``,
each cooling phase lasts ``tau ln((T_hi - T_out) / (T_lo - T_out))`` and each heating phase
``tau ln((T_on - T_lo) / (T_on - T_hi))``, with ``T_lo``, ``T_hi`` the band's edges; the
example compares every switching instant of the day with these sums.

Run settings: ``T_END``, ``RTOL``, ``ATOL``, ``N_POINTS`` below.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

import acausal as ac
from components import blocks as bl
from components import thermal as th

# run settings
T_END = 86400.0  # s: one day
RTOL = 1e-10  # (the switching instants accumulate the error of the day's 60 cycles)
ATOL = 1e-10
N_POINTS = 1441  # one point a minute

# parameters
C_ROOM = 1.0e6  # heat capacity of the room [J/K]
G_WALL = 100.0  # thermal conductance of the envelope [W/K]
P_HEATER = 3000.0  # heater power [W]
T_OUT = 278.15  # outside temperature [K] (5 degC)
T_SET = 293.15  # set point [K] (20 degC)
BAND = 1.0  # width of the band [K]

OUTDIR = Path(__file__).resolve().parent / "output"


class HeatedRoom(ac.Model):
    """Room (capacitor) -> envelope (conductor) -> outside; heater driven by the
    controller, which reads the room's thermometer."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.room = th.HeatCapacitor(C=C_ROOM, T=T_OUT)
        self.envelope = th.ThermalConductor(G=G_WALL)
        self.outside = th.FixedTemperature(T=T_OUT)
        self.heater = th.SignalHeatFlow()
        self.thermometer = th.SignalTemperatureSensor()
        self.setpoint = bl.Constant(k=T_SET)
        self.controller = bl.OnOffController(bandwidth=BAND)
        self.power = bl.Gain(k=P_HEATER)
        self.connect(self.room.port, self.envelope.port_a, self.heater.port,
                     self.thermometer.port)
        self.connect(self.envelope.port_b, self.outside.port)
        self.connect(self.setpoint.y, self.controller.reference)
        self.connect(self.thermometer.T, self.controller.u)
        self.connect(self.controller.y, self.power.u)
        self.connect(self.power.y, self.heater.Q_flow)


def build_model() -> HeatedRoom:
    return HeatedRoom()


def switching_times(t_end: float = T_END) -> np.ndarray:
    """The closed-form switching instants before ``t_end`` (off, on, off, ...)."""
    tau, T_on = C_ROOM / G_WALL, T_OUT + P_HEATER / G_WALL
    lo, hi = T_SET - BAND / 2, T_SET + BAND / 2
    times = [tau * np.log((T_on - T_OUT) / (T_on - hi))]
    cool = tau * np.log((hi - T_OUT) / (lo - T_OUT))
    heat = tau * np.log((T_on - lo) / (T_on - hi))
    while times[-1] < t_end:
        times += [times[-1] + cool, times[-1] + cool + heat]
    return np.array([t for t in times if t < t_end])


def simulated_switches(res: ac.Result) -> np.ndarray:
    """The instants where the controller's when clauses fired after the start."""
    return np.array([e.t for e in res.events if e.t > 0 and any(
        c.startswith("when") and c.endswith("[controller]") for c in e.changes)])


def run(plot: bool = True, outdir: str | Path | None = None) -> ac.Result:
    res = ac.simulate(build_model(), T_END, rtol=RTOL, atol=ATOL, n_points=N_POINTS)
    if plot:
        plot_result(res, Path(outdir) if outdir is not None else OUTDIR)
    return res


def plot_result(res: ac.Result, outdir: Path) -> Path:
    """Room temperature with the band, and the heater's power, over the day."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    hours = res.t / 3600.0
    fig, (a1, a2) = plt.subplots(2, 1, figsize=(9, 5), sharex=True)
    a1.plot(hours, res["room.T"] - 273.15, lw=1.5, label="room")
    for edge in (T_SET - BAND / 2, T_SET + BAND / 2):
        a1.axhline(edge - 273.15, color="k", ls=":", lw=1)
    a1.set_ylabel("temperature [degC]")
    a1.set_title("room temperature (dotted: the controller's band)")
    a2.plot(hours, res["heater.Q_flow"] / 1000.0, color="C3", lw=1)
    a2.set_ylabel("heater [kW]")
    a2.set_xlabel("time [h]")
    for a in (a1, a2):
        a.grid(True, alpha=0.3)
    fig.tight_layout()
    outdir.mkdir(parents=True, exist_ok=True)
    path = outdir / "thermostat.png"
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return path


def main() -> None:
    res = run(plot=True)
    got, ref = simulated_switches(res), switching_times()
    duty = np.mean(res["controller.y"][res.t > ref[0]])
    steady = G_WALL * (T_SET - T_OUT) / P_HEATER  # the loss at the set point over P
    print(f"Thermostat: {len(got)} switches in one day (closed form {len(ref)}); "
          f"max |t_sim - t_exact| = {np.max(np.abs(got - ref)):.2e} s")
    print(f"  heater on {100 * duty:.1f} % of the time after the warm-up "
          f"(steady loss G (T_set - T_out) / P = {100 * steady:.1f} %)")
    print(f"  plot written to {OUTDIR / 'thermostat.png'}")


if __name__ == "__main__":
    main()
