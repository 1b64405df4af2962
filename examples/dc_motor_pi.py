"""Speed control of the DC motor of ``dc_motor.py`` with a PI controller made of blocks.

The physics
-----------
The motor of ``dc_motor.py`` (armature resistance ``R``, motor constant ``k``, rotor
inertia ``J_motor``) drives the load inertia ``J_load`` through the gearbox of ratio
``n``. Here the armature inductance (``L/R = 2 ms``) and the shaft compliance are left
out, so the plant is first order: with the inertia seen by the motor
``J = J_motor + J_load/n^2`` and the armature voltage ``V``::

    J dw_m/dt = k i,    i = (V - k w_m)/R,    w_load = w_m/n
    =>  w_load = Kg/(tau s + 1) V,    Kg = 1/(k n),    tau = J R/k^2

A speed sensor with a signal output measures ``w_load``; a ``Feedback`` block forms the
error ``e = w_ref - w_load``, a ``PI`` block computes the voltage
``V = kp (e + x)``, ``dx/dt = e/Ti``, and a ``SignalVoltage`` applies it. The reference
is a ``Step`` of height ``r`` at ``T_STEP``.

Reference solution
------------------
The closed loop is second order with one zero::

    w_load/w_ref = wn^2 (Ti s + 1)/(s^2 + 2 zeta wn s + wn^2),
    wn^2 = kp Kg/(Ti tau),   2 zeta wn = (1 + kp Kg)/tau

so its step response (``sigma = zeta wn``, ``wd = wn sqrt(1 - zeta^2)``,
``t' = t - T_STEP``) is::

    w_load = r [1 - e^(-sigma t') (cos wd t' + sigma/wd sin wd t')
                + Ti wn^2 e^(-sigma t') sin(wd t')/wd]

``kp`` and ``Ti`` are chosen for ``wn = 100 rad/s`` and ``zeta = 0.8``. The small step
(``R_SMALL``) never needs more than the 24 V of the supply, and the simulation is checked
against this formula.

A large step (``R_LARGE``) asks for more than ``V_MAX`` at first. With a ``Limiter``
after the ``PI`` block, the integrator keeps integrating the error while the voltage is
saturated (windup) and the speed overshoots; ``LimPID`` (MSL semantics) feeds the
difference between the limited and the unlimited output back into its integrator
(back-calculation, gain ``1/(kp Ni)``), and the overshoot almost disappears. The example
prints both overshoots.

Run settings: ``T_END``, ``RTOL``, ``ATOL``, ``N_POINTS`` below. Run it with
``python examples/dc_motor_pi.py``; the plot goes to ``examples/output/dc_motor_pi.png``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

import acausal as ac
from components import blocks as bl
from components import electrical as el
from components import rotational as rot

sys.path.insert(0, str(Path(__file__).resolve().parent))
import dc_motor  # noqa: E402 - the motor data of the flagship example

# run settings
T_END = 0.15  # s
RTOL = 1e-8
ATOL = 1e-10
N_POINTS = 1501

# the motor of dc_motor.py
R = dc_motor.R  # armature resistance [Ohm]
K = dc_motor.K  # motor constant [N.m/A]
J_MOTOR = dc_motor.J_MOTOR  # rotor inertia [kg.m2]
RATIO = dc_motor.RATIO  # gear ratio w_motor / w_load [1]
J_LOAD = dc_motor.J_LOAD  # load inertia [kg.m2]
V_MAX = dc_motor.V  # supply voltage: the controller's output limit [V]

# plant and controller design
J_EQ = J_MOTOR + J_LOAD / RATIO**2  # inertia seen by the motor [kg.m2]
TAU = J_EQ * R / K**2  # mechanical time constant [s]
KG = 1.0 / (K * RATIO)  # plant gain w_load / V [rad/s/V]
WN = 100.0  # closed-loop natural frequency [rad/s]
ZETA = 0.8  # closed-loop damping ratio [1]
KP = (2 * ZETA * WN * TAU - 1) / KG  # proportional gain [V.s/rad]
TI = KP * KG / (WN**2 * TAU)  # integral time [s]
NI = 0.9  # anti-windup: Ni*Ti is the tracking time constant [1]

T_STEP = 0.01  # time of the reference step [s]
R_SMALL = 5.0  # small reference step, never saturates [rad/s]
R_LARGE = 40.0  # large reference step, saturates the voltage at first [rad/s]

OUTDIR = Path(__file__).resolve().parent / "output"


class SpeedControl(ac.Model):
    """DC motor, gearbox and load under PI speed control.

    Parameters
    ----------
    controller : str
        ``"pi"``: ``Feedback`` + ``PI`` blocks, no voltage limit;
        ``"pi_limiter"``: ``Feedback`` + ``PI`` + ``Limiter`` (windup);
        ``"limpid"``: ``LimPID`` with anti-windup.
    w_ref : float
        Height of the reference step [rad/s].
    """

    def __init__(self, controller: str = "pi", w_ref: float = R_SMALL, **kwargs):
        super().__init__(**kwargs)
        # plant: voltage source, armature resistance, EMF, rotor, gear, load
        self.source = el.SignalVoltage()
        self.ground = el.Ground()
        self.resistor = el.Resistor(R=R)
        self.emf = el.EMF(k=K)
        self.motor = rot.Inertia(J=J_MOTOR, phi=0.0, w=0.0)
        self.gear = rot.IdealGear(ratio=RATIO)
        self.load = rot.Inertia(J=J_LOAD)  # its motion follows from the motor's
        self.sensor = rot.SignalSpeedSensor()
        self.connect(self.source.p, self.resistor.p)
        self.connect(self.resistor.n, self.emf.p)
        self.connect(self.emf.n, self.source.n, self.ground.p)
        self.connect(self.emf.flange, self.motor.flange_a)
        self.connect(self.motor.flange_b, self.gear.flange_a)
        self.connect(self.gear.flange_b, self.load.flange_a, self.sensor.flange)
        # controller
        self.reference = bl.Step(height=w_ref, startTime=T_STEP)
        if controller == "limpid":
            self.controller = bl.LimPID(controllerType="PI", k=KP, Ti=TI, yMax=V_MAX, Ni=NI)
            self.connect(self.reference.y, self.controller.u_s)
            self.connect(self.sensor.w, self.controller.u_m)
            self.connect(self.controller.y, self.source.v)
            return
        if controller not in ("pi", "pi_limiter"):
            raise ValueError(f"controller must be 'pi', 'pi_limiter' or 'limpid', "
                             f"got {controller!r}")
        self.feedback = bl.Feedback()
        self.controller = bl.PI(k=KP, T=TI)
        self.connect(self.reference.y, self.feedback.u1)
        self.connect(self.sensor.w, self.feedback.u2)
        self.connect(self.feedback.y, self.controller.u)
        if controller == "pi_limiter":
            self.limiter = bl.Limiter(uMax=V_MAX)
            self.connect(self.controller.y, self.limiter.u)
            self.connect(self.limiter.y, self.source.v)
        else:
            self.connect(self.controller.y, self.source.v)


def build_model() -> SpeedControl:
    """The unsaturated loop (PI blocks, small step) that has the closed form."""
    return SpeedControl("pi", R_SMALL)


def closed_loop_constants() -> tuple[float, float, float]:
    """``(sigma, wd, wn)`` of the linear closed loop [1/s, rad/s, rad/s]."""
    wn2 = KP * KG / (TI * TAU)
    sigma = (1 + KP * KG) / (2 * TAU)
    return sigma, float(np.sqrt(wn2 - sigma**2)), float(np.sqrt(wn2))


def analytic(t: np.ndarray, r: float = R_SMALL) -> np.ndarray:
    """Closed-form load speed of the linear closed loop after a step ``r`` at T_STEP."""
    sigma, wd, wn = closed_loop_constants()
    tt = np.clip(np.asarray(t, dtype=float) - T_STEP, 0.0, None)
    decay = np.exp(-sigma * tt)
    y = 1 - decay * (np.cos(wd * tt) + sigma / wd * np.sin(wd * tt)) \
        + TI * wn**2 * decay * np.sin(wd * tt) / wd
    return np.where(np.asarray(t) >= T_STEP, r * y, 0.0)


def overshoot(res: ac.Result, r: float = R_LARGE) -> float:
    """Largest load speed above the reference, relative to the step height [1]."""
    return float(max(np.max(res["sensor.w"]) - r, 0.0) / r)


def linear_overshoot() -> float:
    """Overshoot of the unlimited linear loop (from the closed form; caused by the zero
    of the PI controller) [1]."""
    t = np.linspace(T_STEP, T_END, 200_001)
    return float(np.max(analytic(t, 1.0)) - 1.0)


def run(plot: bool = True, outdir: str | Path | None = None) -> dict[str, ac.Result]:
    """Simulate the small step (closed-form case) and the large step with and without
    anti-windup; optionally write ``dc_motor_pi.png`` to ``outdir``."""
    cases = {"pi": ("pi", R_SMALL), "pi_limiter": ("pi_limiter", R_LARGE),
             "limpid": ("limpid", R_LARGE)}
    results = {name: ac.simulate(SpeedControl(ctrl, r), T_END, rtol=RTOL, atol=ATOL,
                                 n_points=N_POINTS)
               for name, (ctrl, r) in cases.items()}
    if plot:
        plot_result(results, Path(outdir) if outdir is not None else OUTDIR)
    return results


def plot_result(results: dict[str, ac.Result], outdir: Path,
                name: str = "dc_motor_pi") -> Path:
    """Left: small step against the closed form. Right: large step, speed and voltage,
    with and without anti-windup."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 2, figsize=(10, 6.4), sharex=True)
    res = results["pi"]
    t_ms = res.t * 1e3
    axes[0, 0].plot(t_ms, res["sensor.w"], color="C0", lw=1.8, label="simulation")
    axes[0, 0].plot(t_ms, analytic(res.t), "k--", lw=1.0, label="closed form")
    axes[0, 0].axhline(R_SMALL, color="0.6", lw=0.8)
    axes[0, 0].set_title(f"small step ({R_SMALL:g} rad/s): load speed")
    axes[0, 0].set_ylabel("angular velocity [rad/s]")
    axes[0, 0].legend(loc="lower right", fontsize=8)
    axes[1, 0].plot(t_ms, res["source.v"], color="C2", lw=1.6)
    axes[1, 0].set_title("small step: armature voltage (PI output)")
    axes[1, 0].set_ylabel("voltage [V]")
    for key, label, color in (("pi_limiter", "PI + Limiter (windup)", "C3"),
                              ("limpid", "LimPID (anti-windup)", "C0")):
        r = results[key]
        axes[0, 1].plot(r.t * 1e3, r["sensor.w"], color=color, lw=1.6,
                        label=f"{label}: overshoot {100 * overshoot(r):.1f} %")
        axes[1, 1].plot(r.t * 1e3, r["source.v"], color=color, lw=1.6, label=label)
    t_ref = results["limpid"].t
    axes[0, 1].plot(t_ref * 1e3, analytic(t_ref, R_LARGE), "k--", lw=1.0,
                    label=f"no limit (closed form): overshoot {100 * linear_overshoot():.1f} %")
    axes[0, 1].axhline(R_LARGE, color="0.6", lw=0.8)
    axes[0, 1].set_title(f"large step ({R_LARGE:g} rad/s): load speed")
    axes[0, 1].legend(loc="lower right", fontsize=8)
    axes[1, 1].axhline(V_MAX, color="0.6", lw=0.8, ls=":")
    axes[1, 1].set_title(f"large step: voltage, limited to {V_MAX:g} V")
    axes[1, 1].legend(loc="upper right", fontsize=8)
    for ax in axes.flat:
        ax.grid(True, alpha=0.3)
    for ax in axes[1]:
        ax.set_xlabel("time [ms]")
    fig.suptitle(f"DC motor speed control: PI with kp = {KP:.3g} V.s/rad, Ti = {1e3 * TI:.3g}"
                 f" ms (wn = {WN:g} rad/s, zeta = {ZETA:g})", fontsize=12)
    fig.tight_layout()
    outdir.mkdir(parents=True, exist_ok=True)
    path = outdir / f"{name}.png"
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def main() -> None:
    results = run(plot=True)
    res = results["pi"]
    err = np.max(np.abs(res["sensor.w"] - analytic(res.t)))
    print("DC motor speed control with a PI controller made of blocks")
    print(f"  plant: tau = {1e3 * TAU:.3f} ms, Kg = {KG:.4f} rad/s/V; "
          f"PI: kp = {KP:.4f} V.s/rad, Ti = {1e3 * TI:.4f} ms")
    print(f"  small step {R_SMALL:g} rad/s: max |w_load - closed form| = {err:.2e} rad/s "
          f"({err / R_SMALL:.1e} of the step)")
    print(f"  large step {R_LARGE:g} rad/s, voltage limited to {V_MAX:g} V:")
    for key, label in (("pi_limiter", "PI + Limiter (windup)"),
                       ("limpid", "LimPID (anti-windup)")):
        print(f"    {label:<32} overshoot {100 * overshoot(results[key]):6.2f} %")
    print(f"    {'linear loop without limit':<32} overshoot {100 * linear_overshoot():6.2f} %"
          " (closed form)")
    print(f"  plot written to {OUTDIR / 'dc_motor_pi.png'}")


if __name__ == "__main__":
    main()
