"""Planar electric power steering (EPS): 7 bodies, rack and pinion, gear joint.

The physics
-----------
The EPS model of "Basic Knowledge of Vehicle System Dynamics", section 1.2.3: a column-assist
electric power steering reduced to a planar multibody system of seven rigid bodies::

    1 left wheel (with its knuckle arm)   revolute to ground at the left kingpin (0, 0)
    2 left tie rod                        revolute to 1 and to 3
    3 rack                                translational joint to ground (y = H)
    4 steering column (pinion)            fixed axis at (L/2, H + R); rack and pinion to 3
    5 motor and reduction                 fixed axis at (L/2 + r4 + r5, H + R); gear to 4
    6 right tie rod                       revolute to 3 and to 7
    7 right wheel (with its knuckle arm)  revolute to ground at the right kingpin (L, 0)

The text counts 21 planar coordinates and 20 constraint equations (eqs. 1.10-1.29): one
degree of freedom. The "cylindrical joints" of bodies 4 and 5 only fix their centres in the
plane, so here they are revolute joints about z.

Mapping onto components: every body is a ``Body`` on a ``Revolute`` or ``Prismatic``
joint with ``FixedTranslation`` arms; the **rack and pinion** is the 1D
``rotational.IdealRollingWheel`` between the column revolute's axis flange and the rack
prismatic's axis flange (``s_rack = R phi_column``: the pinion sits above the rack, so a
positive (counter-clockwise) pinion turn moves the rack towards +x; eq. 1.18 of the text
writes ``x4 - x3 - R delta4 = 0``, the same relation with the opposite angle sign); the
**gear joint** is the 1D
``rotational.IdealGear`` between the motor and column axis flanges (``phi_motor =
(r4/r5) phi_column``, the sign convention of eq. 1.19). The driver's torque and the assist
torque are 1D ``Torque`` sources on the column and motor flanges; the steering resistance
is a torsional spring-damper on each kingpin (self-aligning moment).

The rack prismatic has an axis flange, so it must be a tree joint: ``build(model,
tree=[model.rack_joint])``; the two tie-rod/rack revolutes are then the cut joints. Each
planar loop cut at a revolute gives 5 equations of which 2 are independent: the mechanism
pass removes 3 redundant ones per loop. Branch speeds 7 (4 wheel and tie-rod revolutes,
the rack prismatic, the column and motor revolutes), 4 independent loop constraints: 3
mechanism degrees of freedom (rack, column, motor);
the rack-and-pinion and gear couplings take 2 more, leaving **1**, which the structure
stage confirms with 2 states.

Numbers are not given in the text (Fig. 1.2 is missing); the values below are chosen to be
plausible for a passenger car: kingpins 1.2 m apart, 0.15 m knuckle arms at 70 deg from the
axle line, a 0.5 m rack 0.2 m behind the axle, pinion radius 8 mm, reduction 15.

Reference solution
------------------
Rack and pinion and gear are exact: ``s = R phi_4``, ``phi_5 = (r4/r5) phi_4``. Each wheel
angle follows from the rack position in closed form (circle intersection): the tie-rod
end on the rack is ``Q = (L/2 + s -+ L3/2, H)``, the arm tip ``P = K + L1 (cos d, sin d)``
must satisfy ``|P - Q| = L2``, so with ``rho = |Q - K|`` and ``psi = angle(Q - K)``::

    d = psi + beta,   cos(beta) = (L1^2 + rho^2 - L2^2) / (2 L1 rho)

(``beta`` signed for the assembly branch). Under constant driver and assist torques the
system settles where virtual work vanishes::

    T_driver + (r4/r5) T_assist = sum_wheels c (d_i - d_i0) d(d_i)/d(phi_4)

solved here with a scalar root finder on the closed-form kinematics.

Run settings: ``T_END``, ``RTOL``, ``ATOL``, ``N_POINTS`` below (closed loops: rtol 1e-8).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

import acausal as ac
from components import multibody as mb
from components import rotational as rot

# run settings
T_END = 3.0  # s: the steering settles (slowest decay ~0.25 s)
RTOL = 1e-8  # closed loops: the multiplier block does not converge much tighter
# The algebraic block of this loop is badly conditioned (singular values 1e3 .. 6e-6); the
# simulator switches to a states-only error test for it by itself (res.stats
# ["integration_mode"], docs/multibody.md, Tolerances).
ATOL = 1e-8
N_POINTS = 601

# geometry (chosen; the figure with the numbers is not in the text)
L_KP = 1.2  # distance between the kingpins [m]
H = 0.2  # rack line behind the kingpin axis [m]
L1 = 0.15  # knuckle (steering) arm [m]
DELTA0 = np.radians(70.0)  # left arm angle from the x axis at straight ahead [rad]
L3 = 0.5  # rack length between its tie-rod joints [m]
R_PINION = 0.008  # pinion radius [m]
R4, R5 = 0.06, 0.004  # gear radii of the column and the motor pinion [m]
RATIO = R4 / R5  # phi_motor / phi_column [1]

# masses and inertias (chosen)
M_WHEEL, I_WHEEL = 15.0, 1.0  # wheel + knuckle: mass [kg], inertia about the kingpin [kg.m2]
M_TIE = 0.5  # tie rod [kg]
M_RACK = 3.0  # rack [kg]
I_COLUMN = 0.04  # column + steering wheel [kg.m2]
I_MOTOR = 3e-4  # motor rotor and worm [kg.m2]

# loads
T_DRIVER = 5.0  # driver's torque on the column [N.m]
T_ASSIST = 5.0 / RATIO  # motor assist torque [N.m] (doubles the driver's effort)
T_RAMP = 0.05  # both torques ramp up as 1 - exp(-t / T_RAMP) [s]
C_ALIGN = 1000.0  # self-aligning stiffness per wheel [N.m/rad]
D_ALIGN = 150.0  # steering damping per wheel [N.m.s/rad]

OUTDIR = Path(__file__).resolve().parent / "output"


def _start_geometry():
    """Tie-rod length and start angles from the straight-ahead configuration."""
    P_l = L1 * np.array([np.cos(DELTA0), np.sin(DELTA0)])
    Q_l = np.array([L_KP / 2 - L3 / 2, H])
    L2 = float(np.linalg.norm(Q_l - P_l))
    tie_l = np.arctan2(*(Q_l - P_l)[::-1])
    d7 = np.pi - DELTA0
    P_r = np.array([L_KP, 0.0]) + L1 * np.array([np.cos(d7), np.sin(d7)])
    Q_r = np.array([L_KP / 2 + L3 / 2, H])
    tie_r = np.arctan2(*(Q_r - P_r)[::-1])
    return L2, tie_l, d7, tie_r


L2, _TIE_L0, DELTA7_0, _TIE_R0 = _start_geometry()


def _ramp(T):
    return lambda t: T * (1 - np.exp(-t / T_RAMP))


class PowerSteering(ac.Model):
    """The seven-body EPS model (see the module documentation)."""

    def __init__(self, **kw):
        super().__init__(**kw)
        self.world = mb.World(g=[0.0, 0.0, -9.81])  # gravity normal to the plane
        # 1: left wheel, 2: left tie rod
        self.wheel_l_joint = mb.Revolute(use_axis_flange=True, phi=ac.guess(DELTA0))
        self.wheel_l = mb.Body(m=M_WHEEL, I_11=0.5, I_22=0.5, I_33=I_WHEEL)
        self.arm_l = mb.FixedTranslation(r=[L1, 0, 0])
        self.tie_l_joint = mb.Revolute(phi=ac.guess(_TIE_L0 - DELTA0))
        self.tie_l = mb.FixedTranslation(r=[L2, 0, 0])
        self.tie_l_body = mb.Body(m=M_TIE, r_CM=[L2 / 2, 0, 0], I_22=M_TIE * L2**2 / 12,
                                  I_33=M_TIE * L2**2 / 12)
        # 7: right wheel, 6: right tie rod
        self.kingpin_r = mb.FixedTranslation(r=[L_KP, 0, 0])
        self.wheel_r_joint = mb.Revolute(use_axis_flange=True, phi=ac.guess(DELTA7_0))
        self.wheel_r = mb.Body(m=M_WHEEL, I_11=0.5, I_22=0.5, I_33=I_WHEEL)
        self.arm_r = mb.FixedTranslation(r=[L1, 0, 0])
        self.tie_r_joint = mb.Revolute(phi=ac.guess(_TIE_R0 - DELTA7_0))
        self.tie_r = mb.FixedTranslation(r=[L2, 0, 0])
        self.tie_r_body = mb.Body(m=M_TIE, r_CM=[L2 / 2, 0, 0], I_22=M_TIE * L2**2 / 12,
                                  I_33=M_TIE * L2**2 / 12)
        # 3: rack on a translational joint along x at y = H
        self.rack_guide = mb.FixedTranslation(r=[L_KP / 2, H, 0])
        self.rack_joint = mb.Prismatic(use_axis_flange=True, n=[1, 0, 0], s=ac.guess(0.0))
        self.rack = mb.Body(m=M_RACK, I_22=M_RACK * L3**2 / 12, I_33=M_RACK * L3**2 / 12)
        self.rack_end_l = mb.FixedTranslation(r=[-L3 / 2, 0, 0])
        self.rack_end_r = mb.FixedTranslation(r=[L3 / 2, 0, 0])
        # 4: column (pinion) and 5: motor, on fixed axes
        self.column_mount = mb.FixedTranslation(r=[L_KP / 2, H + R_PINION, 0])
        self.column_joint = mb.Revolute(use_axis_flange=True, phi=0.0, w=0.0)
        self.column = mb.Body(m=1.0, I_11=I_COLUMN / 2, I_22=I_COLUMN / 2, I_33=I_COLUMN)
        self.motor_mount = mb.FixedTranslation(r=[L_KP / 2 + R4 + R5, H + R_PINION, 0])
        self.motor_joint = mb.Revolute(use_axis_flange=True, phi=ac.guess(0.0))
        self.motor = mb.Body(m=1.0, I_33=I_MOTOR)
        # couplings through the axis flanges (1D library)
        self.rack_pinion = rot.IdealRollingWheel(radius=R_PINION)
        self.gear = rot.IdealGear(ratio=RATIO)
        # loads
        self.driver = rot.Torque(tau=_ramp(T_DRIVER))
        self.assist = rot.Torque(tau=_ramp(T_ASSIST))
        self.ground = rot.Fixed()
        self.align_l = rot.SpringDamper(c=C_ALIGN, d=D_ALIGN, phi_rel0=DELTA0)
        self.align_r = rot.SpringDamper(c=C_ALIGN, d=D_ALIGN, phi_rel0=DELTA7_0)
        # tie-rod / rack joints (the cut joints)
        self.ball_l = mb.Revolute()
        self.ball_r = mb.Revolute()

        c = self.connect
        c(self.world.frame_b, self.wheel_l_joint.frame_a, self.kingpin_r.frame_a,
          self.rack_guide.frame_a, self.column_mount.frame_a, self.motor_mount.frame_a)
        c(self.wheel_l_joint.frame_b, self.wheel_l.frame_a, self.arm_l.frame_a)
        c(self.arm_l.frame_b, self.tie_l_joint.frame_a)
        c(self.tie_l_joint.frame_b, self.tie_l.frame_a, self.tie_l_body.frame_a)
        c(self.kingpin_r.frame_b, self.wheel_r_joint.frame_a)
        c(self.wheel_r_joint.frame_b, self.wheel_r.frame_a, self.arm_r.frame_a)
        c(self.arm_r.frame_b, self.tie_r_joint.frame_a)
        c(self.tie_r_joint.frame_b, self.tie_r.frame_a, self.tie_r_body.frame_a)
        c(self.rack_guide.frame_b, self.rack_joint.frame_a)
        c(self.rack_joint.frame_b, self.rack.frame_a, self.rack_end_l.frame_a,
          self.rack_end_r.frame_a)
        c(self.tie_l.frame_b, self.ball_l.frame_a)
        c(self.ball_l.frame_b, self.rack_end_l.frame_b)
        c(self.tie_r.frame_b, self.ball_r.frame_a)
        c(self.ball_r.frame_b, self.rack_end_r.frame_b)
        c(self.column_mount.frame_b, self.column_joint.frame_a)
        c(self.column_joint.frame_b, self.column.frame_a)
        c(self.motor_mount.frame_b, self.motor_joint.frame_a)
        c(self.motor_joint.frame_b, self.motor.frame_a)
        c(self.column_joint.axis, self.rack_pinion.flangeR, self.gear.flange_b,
          self.driver.flange)
        c(self.rack_joint.axis, self.rack_pinion.flangeT)
        c(self.motor_joint.axis, self.gear.flange_a, self.assist.flange)
        c(self.ground.flange, self.align_l.flange_a, self.align_r.flange_a)
        c(self.align_l.flange_b, self.wheel_l_joint.axis)
        c(self.align_r.flange_b, self.wheel_r_joint.axis)


def build_model() -> PowerSteering:
    return PowerSteering()


def compile_model(model: PowerSteering | None = None) -> ac.CompiledModel:
    """Build with the rack's prismatic joint forced into the tree (it has an axis flange)."""
    model = model if model is not None else build_model()
    return ac.build(model, tree=[model.rack_joint])


# ----------------------------------------------------------------------------------------
# independent references
def wheel_angles(s):
    """Closed-form left and right arm angles [rad] for the rack displacement s [m]."""
    s = np.asarray(s, dtype=float)
    out = []
    for kingpin, end, d0 in ((0.0, -L3 / 2, DELTA0), (L_KP, L3 / 2, DELTA7_0)):
        qx, qy = L_KP / 2 + s + end - kingpin, H + 0 * s
        rho = np.hypot(qx, qy)
        psi = np.arctan2(qy, qx)
        beta = np.arccos((L1**2 + rho**2 - L2**2) / (2 * L1 * rho))
        # assembly branch of the start configuration
        beta0 = d0 - np.arctan2(H, L_KP / 2 + end - kingpin)
        out.append(psi + np.sign(beta0) * beta)
    return out[0], out[1]


def static_equilibrium() -> dict[str, float]:
    """Settled state under the constant torques, by virtual work on the closed forms."""
    from scipy.optimize import brentq

    def residual(phi4):
        h = 1e-6
        d = wheel_angles(R_PINION * phi4)
        dp = wheel_angles(R_PINION * (phi4 + h))
        dm = wheel_angles(R_PINION * (phi4 - h))
        work = T_DRIVER + RATIO * T_ASSIST
        for k, d0 in enumerate((DELTA0, DELTA7_0)):
            work -= C_ALIGN * (d[k] - d0) * (dp[k] - dm[k]) / (2 * h)
        return work

    phi4 = brentq(residual, 0.0, 5.0, xtol=1e-14)
    d1, d7 = wheel_angles(R_PINION * phi4)
    return {"column": phi4, "rack": R_PINION * phi4, "motor": RATIO * phi4,
            "left": float(d1), "right": float(d7)}


def run(plot: bool = True, outdir: str | Path | None = None, model=None) -> ac.Result:
    """Simulate the steering manoeuvre; optionally write ``mb_power_steering.png``."""
    res = ac.simulate(model if model is not None else compile_model(), T_END, rtol=RTOL,
                      atol=ATOL, n_points=N_POINTS)
    if plot:
        plot_result(res, Path(outdir) if outdir is not None else OUTDIR)
    return res


def plot_result(res: ac.Result, outdir: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    eq = static_equilibrium()
    s = res["rack_joint.s"]
    dl, dr = wheel_angles(s)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    ax = axes[0]
    ax.plot(res.t, np.degrees(res["wheel_l_joint.phi"] - DELTA0), lw=1.8, label="left wheel")
    ax.plot(res.t, np.degrees(res["wheel_r_joint.phi"] - DELTA7_0), lw=1.8,
            label="right wheel")
    ax.plot(res.t, np.degrees(dl - DELTA0), "k--", lw=1, label="closed form from the rack")
    ax.plot(res.t, np.degrees(dr - DELTA7_0), "k--", lw=1)
    for key, d0 in (("left", DELTA0), ("right", DELTA7_0)):
        ax.axhline(np.degrees(eq[key] - d0), color="gray", ls=":", lw=1)
    ax.set_xlabel("time [s]")
    ax.set_ylabel("steer angle change [deg]")
    ax.set_title("wheels (dotted: static equilibrium)")
    ax.legend(fontsize=8)
    ax = axes[1]
    ax.plot(res.t, 1e3 * s, lw=1.8, label="rack displacement [mm]")
    ax.plot(res.t, 1e3 * R_PINION * res["column_joint.phi"], "k--", lw=1,
            label="R x column angle [mm]")
    ax.plot(res.t, res["motor_joint.phi"], lw=1.4, label="motor angle [rad]")
    ax.set_xlabel("time [s]")
    ax.set_title("rack, pinion and motor")
    ax.legend(fontsize=8)
    for ax in axes:
        ax.grid(True, alpha=0.3)
    fig.suptitle(f"Electric power steering: driver {T_DRIVER:g} N.m + assist "
                 f"{RATIO * T_ASSIST:g} N.m at the column", fontsize=11)
    fig.tight_layout()
    outdir.mkdir(parents=True, exist_ok=True)
    path = outdir / "mb_power_steering.png"
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def main() -> None:
    cm = compile_model()
    mech = cm.mechanism
    print("Electric power steering (7 bodies, rack and pinion, gear joint)")
    print(mech)
    print(f"  mechanism DOF {mech.dof} - 2 couplings (rack and pinion, gear) = {mech.dof - 2};"
          f" states chosen: {', '.join(cm.states)} -> {len(cm.states) // 2} DOF")
    print("  text (Cartesian): 21 coordinates - 20 constraints = 1 DOF; here "
          f"{mech.n_speeds} branch speeds - {mech.n_constraints} loop constraints - 2 "
          "couplings = 1")
    res = run(plot=True, model=cm)
    s = res["rack_joint.s"]
    dl, dr = wheel_angles(s)
    eq = static_equilibrium()
    print(f"  max |rack - R phi_column|        = "
          f"{np.max(np.abs(s - R_PINION * res['column_joint.phi'])):.1e} m")
    print(f"  max |phi_motor - ratio phi_col|  = "
          f"{np.max(np.abs(res['motor_joint.phi'] - RATIO * res['column_joint.phi'])):.1e} rad")
    print(f"  max |left wheel - closed form|   = "
          f"{np.max(np.abs(res['wheel_l_joint.phi'] - dl)):.1e} rad")
    print(f"  max |right wheel - closed form|  = "
          f"{np.max(np.abs(res['wheel_r_joint.phi'] - dr)):.1e} rad")
    for key, name, d0 in (("left", "wheel_l_joint.phi", DELTA0),
                          ("right", "wheel_r_joint.phi", DELTA7_0)):
        print(f"  settled {key:5s} steer angle: {np.degrees(res.final(name) - d0):+.5f} deg "
              f"(static equilibrium {np.degrees(eq[key] - d0):+.5f} deg)")
    print(f"  plot written to {OUTDIR / 'mb_power_steering.png'}")


if __name__ == "__main__":
    main()
