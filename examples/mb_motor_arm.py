"""Multi-domain: a DC motor and gearbox lift a two-link arm under gravity.

The physics
-----------
A permanent-magnet DC motor (armature resistance ``R``, inductance ``L``, motor constant
``k``, rotor inertia ``J_m``) is fed by a constant voltage ``V``; through an ideal gearbox of
ratio ``n`` (``phi_motor = n phi_shoulder``) it drives the shoulder of a two-link arm: the
gearbox output is the 1D rotational axis flange of the shoulder ``Revolute`` (axis z,
gravity along -y). The second link hangs from a free elbow revolute with a small viscous
damper (a 1D ``Damper`` between the elbow's axis flange and a ``Fixed`` flange). The arm
starts hanging straight down at rest, with no current.

Electrical, 1D rotational and 3D multibody domains meet in one model: ``EMF`` couples the
circuit to the rotor, ``IdealGear`` the rotor to the joint's axis flange, and the axis
flange's torque drives the joint (``axis.tau`` acts on ``frame_b`` about the joint axis,
its reaction on ``frame_a``).

Reference solution
------------------
*Energy balance* (independent of the library's equations: every term is recomputed from the
simulated currents, speeds and frame kinematics and integrated by Simpson's rule)::

    int V i dt = int R i^2 dt + int d w_elbow^2 dt + [L i^2 / 2] + [J_m w_m^2 / 2] + [E_arm]

with ``E_arm`` the kinetic plus potential energy of the two links.

*Quasi-static holding torque*: the back EMF and the elbow damper dissipate the motion; the
arm comes to rest where the stall torque balances gravity. At rest the EMF vanishes, so
``i = V / R`` and the shoulder torque is ``n k V / R``; the second link hangs vertically, so
the gravity moment about the shoulder is ``g (m1 l1 / 2 + m2 l1) cos(theta1)``::

    theta1 = -arccos(n k V / (R g (m1 l1 / 2 + m2 l1)))    (below the horizontal)

Run settings: ``T_END``, ``RTOL``, ``ATOL``, ``N_POINTS`` below (a tree mechanism: the
multibody part has no loop constraint, so tight tolerances are fine).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

import acausal as ac
from components import electrical as el
from components import multibody as mb
from components import rotational as rot

# run settings
T_END = 8.0  # s: the arm settles (slowest decay rate ~2 1/s)
RTOL = 1e-10
ATOL = 1e-10
N_POINTS = 8001  # 1 ms output step: Simpson's rule on the energy terms

# motor and gearbox
V = 4.0  # supply voltage [V]
R = 1.0  # armature resistance [Ohm]
L = 0.05  # armature inductance [H]
K = 0.05  # motor constant [N.m/A]
J_M = 2e-5  # rotor inertia [kg.m2]
RATIO = 40.0  # gear ratio phi_motor / phi_shoulder [1]

# arm (links are uniform bars along their local x axis)
G = 9.81  # gravity [m/s2]
M1, L1 = 2.0, 0.5  # upper link: mass [kg], length [m]
M2, L2 = 1.5, 0.4  # lower link: mass [kg], length [m]
D_ELBOW = 0.3  # elbow damping [N.m.s/rad]

OUTDIR = Path(__file__).resolve().parent / "output"


def _bar(m, length):
    """Body parameters of a slender bar along x from frame_a."""
    return dict(m=m, r_CM=[length / 2, 0, 0], I_11=1e-4, I_22=m * length**2 / 12,
                I_33=m * length**2 / 12)


class MotorArm(ac.Model):
    """Voltage source -> armature (R, L, EMF) -> rotor -> gearbox -> shoulder of a 2-link arm."""

    def __init__(self, **kw):
        super().__init__(**kw)
        # electrical circuit
        self.source = el.ConstantVoltage(V=V)
        self.ground = el.Ground()
        self.resistor = el.Resistor(R=R)
        self.inductor = el.Inductor(L=L, i=0.0)
        self.emf = el.EMF(k=K)
        # drive train (1D rotational)
        self.rotor = rot.Inertia(J=J_M, phi=ac.guess(-RATIO * np.pi / 2), w=0.0)
        self.gear = rot.IdealGear(ratio=RATIO)
        # two-link arm (3D multibody)
        self.world = mb.World(g=[0.0, -G, 0.0])
        self.shoulder = mb.Revolute(use_axis_flange=True, n=[0, 0, 1], phi=-np.pi / 2)
        self.link1 = mb.FixedTranslation(r=[L1, 0, 0])
        self.body1 = mb.Body(**_bar(M1, L1))
        self.elbow = mb.Revolute(use_axis_flange=True, n=[0, 0, 1], phi=0.0, w=0.0)
        self.link2 = mb.FixedTranslation(r=[L2, 0, 0])
        self.body2 = mb.Body(**_bar(M2, L2))
        self.elbow_damper = rot.Damper(d=D_ELBOW)
        self.housing = rot.Fixed()

        self.connect(self.source.p, self.resistor.p)
        self.connect(self.resistor.n, self.inductor.p)
        self.connect(self.inductor.n, self.emf.p)
        self.connect(self.emf.n, self.source.n, self.ground.p)
        self.connect(self.emf.flange, self.rotor.flange_a)
        self.connect(self.rotor.flange_b, self.gear.flange_a)
        self.connect(self.gear.flange_b, self.shoulder.axis)
        self.connect(self.world.frame_b, self.shoulder.frame_a)
        self.connect(self.shoulder.frame_b, self.link1.frame_a, self.body1.frame_a)
        self.connect(self.link1.frame_b, self.elbow.frame_a)
        self.connect(self.elbow.frame_b, self.link2.frame_a, self.body2.frame_a)
        self.connect(self.housing.flange, self.elbow_damper.flange_a)
        self.connect(self.elbow_damper.flange_b, self.elbow.axis)


def build_model() -> MotorArm:
    return MotorArm()


# ----------------------------------------------------------------------------------------
# independent references
def holding_angle() -> float:
    """Closed-form rest angle of the upper link [rad] (from +x, negative below)."""
    return -np.arccos(RATIO * K * V / (R * G * (M1 * L1 / 2 + M2 * L1)))


def arm_energy(res: ac.Result) -> np.ndarray:
    """Kinetic + potential energy of the two links from their frame kinematics [J]."""
    E = 0.0
    for name, (m, length) in (("body1", (M1, L1)), ("body2", (M2, L2))):
        p = _bar(m, length)
        Ib = np.diag([p["I_11"], p["I_22"], p["I_33"]])
        R_ = res[f"{name}.frame_a.R"].reshape(-1, 3, 3).transpose(0, 2, 1)  # column-major
        r, v, w = (res[f"{name}.frame_a.{k}"] for k in ("r", "v", "w"))
        rc = np.einsum("tij,j->ti", R_, p["r_CM"])
        vc = v + np.cross(w, rc)
        Iw = np.einsum("tij,jk,tlk->til", R_, Ib, R_)
        E = E + 0.5 * m * np.sum(vc**2, 1) + 0.5 * np.einsum("ti,tij,tj->t", w, Iw, w) \
            + m * G * (r[:, 1] + rc[:, 1])
    return E


def energy_balance(res: ac.Result) -> dict[str, np.ndarray]:
    """Every term of the energy balance as a time series [J] (cumulative Simpson)."""
    from scipy.integrate import cumulative_simpson

    def integral(y):
        return cumulative_simpson(y, x=res.t, initial=0.0)

    i = res["resistor.i"]
    e_in = integral(-res["source.v"] * res["source.i"])  # power delivered by the source
    e_r = integral(R * i**2)
    e_d = integral(D_ELBOW * res["elbow.w"] ** 2)
    e_l = 0.5 * L * i**2
    e_m = 0.5 * J_M * res["rotor.w"] ** 2
    e_arm = arm_energy(res)
    stored = e_l - e_l[0] + e_m - e_m[0] + e_arm - e_arm[0]
    return {"in": e_in, "resistor": e_r, "damper": e_d, "stored": stored,
            "residual": e_in - e_r - e_d - stored}


def run(plot: bool = True, outdir: str | Path | None = None, model=None) -> ac.Result:
    """Simulate the lift; optionally write ``mb_motor_arm.png`` to ``outdir``."""
    res = ac.simulate(model if model is not None else build_model(), T_END, rtol=RTOL,
                      atol=ATOL, n_points=N_POINTS)
    if plot:
        plot_result(res, Path(outdir) if outdir is not None else OUTDIR)
    return res


def plot_result(res: ac.Result, outdir: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    eb = energy_balance(res)
    fig, axes = plt.subplots(1, 3, figsize=(13, 4))
    ax = axes[0]
    ax.plot(res.t, np.degrees(res["shoulder.phi"]), lw=1.8, label="shoulder (upper link)")
    ax.plot(res.t, np.degrees(res["shoulder.phi"] + res["elbow.phi"]), lw=1.4,
            label="lower link (absolute)")
    ax.axhline(np.degrees(holding_angle()), color="k", ls="--", lw=1,
               label="closed-form holding angle")
    ax.set_ylabel("angle from horizontal [deg]")
    ax.legend(fontsize=8)
    ax = axes[1]
    ax.plot(res.t, res["resistor.i"], lw=1.6, label="armature current [A]")
    ax.plot(res.t, res["rotor.w"] / RATIO, lw=1.4, label="shoulder speed [rad/s]")
    ax.axhline(V / R, color="k", ls="--", lw=1, label="stall current V/R")
    ax.legend(fontsize=8)
    ax = axes[2]
    for key, lab in (("in", "electrical energy in"), ("resistor", "resistive loss"),
                     ("damper", "elbow damper loss"), ("stored", "stored (L, rotor, arm)")):
        ax.plot(res.t, eb[key], lw=1.4, label=lab)
    ax.plot(res.t, 1e6 * eb["residual"], "k:", lw=1, label="balance residual x 1e6")
    ax.set_ylabel("energy [J]")
    ax.legend(fontsize=8)
    for ax in axes:
        ax.set_xlabel("time [s]")
        ax.grid(True, alpha=0.3)
    fig.suptitle(f"DC motor ({V:g} V, gear {RATIO:g}) lifting a two-link arm", fontsize=11)
    fig.tight_layout()
    outdir.mkdir(parents=True, exist_ok=True)
    path = outdir / "mb_motor_arm.png"
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def main() -> None:
    cm = ac.build(build_model())
    print("DC motor + gearbox driving the shoulder of a two-link arm")
    print(cm.mechanism)
    print(f"  states chosen: {', '.join(cm.states)}")
    res = run(plot=True, model=cm)
    eb = energy_balance(res)
    print(f"  energy in {eb['in'][-1]:.6f} J = resistor {eb['resistor'][-1]:.6f} + damper "
          f"{eb['damper'][-1]:.6f} + stored {eb['stored'][-1]:.6f}; "
          f"max |residual| {np.max(np.abs(eb['residual'])):.1e} J")
    th = holding_angle()
    print(f"  settled shoulder angle {np.degrees(res.final('shoulder.phi')):.6f} deg, "
          f"closed-form holding angle {np.degrees(th):.6f} deg")
    print(f"  settled current {res.final('resistor.i'):.6f} A (V/R = {V / R:g} A)")
    print(f"  plot written to {OUTDIR / 'mb_motor_arm.png'}")


if __name__ == "__main__":
    main()
