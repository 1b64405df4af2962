"""DC motor driving a load through a gearbox and an elastic shaft.

The physics
-----------
A permanent-magnet DC motor is fed by a constant voltage ``V``. Its armature is a resistor
``R`` in series with an inductor ``L`` and the electromotive force ``EMF`` (constant ``k``),
which couples the electrical and rotational domains::

    v_emf = k w_motor            (back EMF)
    tau_motor = k i              (air-gap torque)

The rotor (inertia ``J_motor``) drives an ideal gearbox of ratio ``n`` (``phi_motor = n
phi_gear_out``); the gearbox output is joined to the load inertia ``J_load`` by an elastic
shaft (torsion spring ``c`` and damper ``d`` in parallel). A constant torque ``T_load``
opposes the load's rotation. The model starts at rest and spins up.

Reference solution
------------------
In steady state nothing accelerates and the shaft does not twist any more, so the shaft
carries the load torque, the gearbox multiplies it by ``1/n`` on the motor side and the
armature inductance carries a constant current::

    i_ss = T_load / (n k)
    w_motor_ss = (V - R i_ss) / k,      w_load_ss = w_motor_ss / n

The example checks the simulated values at ``T_END`` against these formulas.

Run settings: ``T_END``, ``RTOL``, ``ATOL``, ``N_POINTS`` below. Run it with
``python examples/dc_motor.py``; the plot goes to ``examples/output/dc_motor.png``.
"""

from __future__ import annotations

from pathlib import Path

import acausal as ac
from components import electrical as el
from components import rotational as rot

# run settings
T_END = 0.3  # s
RTOL = 1e-8
ATOL = 1e-10
N_POINTS = 1501

# parameters
V = 24.0  # supply voltage [V]
R = 0.6  # armature resistance [Ohm]
L = 1.2e-3  # armature inductance [H]
K = 0.06  # motor constant [N.m/A] = [V.s/rad]
J_MOTOR = 5e-5  # rotor inertia [kg.m2]
RATIO = 8.0  # gear ratio phi_motor / phi_load [1]
C_SHAFT = 200.0  # shaft torsional stiffness [N.m/rad]
D_SHAFT = 0.2  # shaft torsional damping [N.m.s/rad]
J_LOAD = 4e-3  # load inertia [kg.m2]
T_LOAD = 0.6  # load torque opposing the rotation [N.m]

OUTDIR = Path(__file__).resolve().parent / "output"


class DCMotorDrive(ac.Model):
    """Voltage source -> armature (R, L, EMF) -> rotor -> gearbox -> shaft -> load.

    Parameters
    ----------
    at_rest : bool
        If True (default) the drive starts at rest: zero current, angles and speeds are
        fixed start values. If False no start value is fixed (used by
        ``steady_state_motor.py``, which states the initial condition by equations).
    """

    def __init__(self, at_rest: bool = True, **kwargs):
        super().__init__(**kwargs)
        start = (lambda x: x) if at_rest else ac.guess
        self.source = el.ConstantVoltage(V=V)
        self.ground = el.Ground()
        self.resistor = el.Resistor(R=R)
        self.inductor = el.Inductor(L=L, i=start(0.0))
        self.emf = el.EMF(k=K)
        self.motor = rot.Inertia(J=J_MOTOR, phi=0.0, w=start(0.0))
        self.gear = rot.IdealGear(ratio=RATIO)
        self.shaft = rot.SpringDamper(c=C_SHAFT, d=D_SHAFT)
        self.load = rot.Inertia(J=J_LOAD, phi=start(0.0), w=start(0.0))
        self.load_torque = rot.Torque(tau=-T_LOAD)  # constant, opposing positive rotation

        # electrical loop
        self.connect(self.source.p, self.resistor.p)
        self.connect(self.resistor.n, self.inductor.p)
        self.connect(self.inductor.n, self.emf.p)
        self.connect(self.emf.n, self.source.n, self.ground.p)
        # drive train
        self.connect(self.emf.flange, self.motor.flange_a)
        self.connect(self.motor.flange_b, self.gear.flange_a)
        self.connect(self.gear.flange_b, self.shaft.flange_a)
        self.connect(self.shaft.flange_b, self.load.flange_a)
        self.connect(self.load.flange_b, self.load_torque.flange)


def build_model() -> DCMotorDrive:
    """The drive, starting at rest."""
    return DCMotorDrive()


def analytic_steady_state() -> dict[str, float]:
    """Steady-state current, motor and load speeds, shaft torque."""
    i_ss = T_LOAD / (RATIO * K)
    w_motor = (V - R * i_ss) / K
    return {"i": i_ss, "w_motor": w_motor, "w_load": w_motor / RATIO, "tau_shaft": T_LOAD}


def run(plot: bool = True, outdir: str | Path | None = None,
        model: ac.Component | ac.CompiledModel | None = None) -> ac.Result:
    """Simulate the spin-up; optionally write ``dc_motor.png`` to ``outdir``."""
    res = ac.simulate(model if model is not None else build_model(), T_END, rtol=RTOL,
                      atol=ATOL, n_points=N_POINTS)
    if plot:
        plot_result(res, Path(outdir) if outdir is not None else OUTDIR)
    return res


def plot_result(res: ac.Result, outdir: Path, name: str = "dc_motor") -> Path:
    """Four panels: speeds, current, shaft torque (dashed: analytic steady state)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ref = analytic_steady_state()
    t_ms = res.t * 1e3
    fig, axes = plt.subplots(2, 2, figsize=(10, 6.4), sharex=True)
    panels = [
        (axes[0, 0], "motor.w", "w_motor", "motor speed", "angular velocity [rad/s]", "C0"),
        (axes[0, 1], "load.w", "w_load", "load speed (after the gearbox)",
         "angular velocity [rad/s]", "C1"),
        (axes[1, 0], "inductor.i", "i", "armature current", "current [A]", "C2"),
        (axes[1, 1], "-shaft.tau", "tau_shaft", "torque the elastic shaft applies to the load",
         "torque [N.m]", "C3"),
    ]
    for ax, key, rkey, title, ylabel, color in panels:
        # shaft.tau is the cut torque at its flange_b (MSL sign): negative while driving
        y = -res[key[1:]] if key.startswith("-") else res[key]
        ax.plot(t_ms, y, color=color, lw=1.6, label="simulation")
        ax.axhline(ref[rkey], color="k", ls="--", lw=1.0, label="analytic steady state")
        ax.set_title(title)
        ax.set_ylabel(ylabel)
        ax.grid(True, alpha=0.3)
    axes[0, 0].legend(loc="lower right", fontsize=8)
    for ax in axes[1]:
        ax.set_xlabel("time [ms]")
    fig.suptitle(f"DC motor start-up: {V:g} V supply, gear ratio {RATIO:g}, "
                 f"load torque {T_LOAD:g} N.m", fontsize=12)
    fig.tight_layout()
    outdir.mkdir(parents=True, exist_ok=True)
    path = outdir / f"{name}.png"
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def main() -> None:
    cm = ac.build(build_model())
    res = run(plot=True, model=cm)
    ref = analytic_steady_state()
    print("DC motor -> gearbox -> elastic shaft -> load")
    print(f"  states chosen: {', '.join(cm.states)}")
    print(f"  steady state at t = {T_END:g} s      simulated      analytic")
    rows = [("armature current [A]", res.final("inductor.i"), ref["i"]),
            ("motor speed [rad/s]", res.final("motor.w"), ref["w_motor"]),
            ("load speed [rad/s]", res.final("load.w"), ref["w_load"])]
    for label, sim, exact in rows:
        err = abs(sim / exact - 1)
        print(f"    {label:<22} {sim:12.6f}  {exact:12.6f}   (rel. error {err:.1e})")
    print(f"  plot written to {OUTDIR / 'dc_motor.png'}")


if __name__ == "__main__":
    main()
