"""Point-to-point motion of a DC servo motor: minimum energy and minimum time.

The physics
-----------
A permanent-magnet DC motor (armature resistance ``R``, motor constant ``k``) turns an
inertia ``J`` against viscous friction ``b``. The armature inductance is neglected (its
time constant ``L/R`` is far shorter than the mechanical one), so the current is
algebraic and the acausal model reduces to the **first-order speed model**::

    J w' = k i - b w,    i = (V - k w) / R,    phi' = w

The motor must turn from rest at ``phi = 0`` to rest at ``phi = THETA``; the supply
voltage ``V`` (the control, a parameter of the ``ConstantVoltage`` source made a decision
variable by :class:`acausal.ocp.Collocation`) is limited to ``|V| <= V_MAX``.

Minimum energy (copper losses ``E = int R i^2 dt``) in a given time ``T``
--------------------------------------------------------------------------
With ``q = k i = J w' + b w`` the cost is ``(R/k^2) int q^2 dt``, a functional of
``phi`` through ``phi'`` and ``phi''``. Its Euler–Lagrange equation
``d2/dt2 (dL/dphi'') - d/dt (dL/dphi') = 0`` with ``L = (J phi'' + b phi')^2`` gives
``J q'' - b q' = 0``, so the optimal torque is::

    q(t) = alpha + beta exp(lambda t),    lambda = b / J

and the speed and angle from rest are (``J w' + b w = q``)::

    w(t)   = alpha/b (1 - exp(-lambda t)) + beta/b sinh(lambda t)
    phi(t) = alpha/b (t - (1 - exp(-lambda t))/lambda) + beta/(b lambda) (cosh(lambda t) - 1)

``w(T) = 0`` and ``phi(T) = THETA`` are two linear equations for ``alpha, beta``; the
minimum is ``E* = R/k^2 [alpha^2 T + 2 alpha beta (e^(lambda T) - 1)/lambda
+ beta^2 (e^(2 lambda T) - 1)/(2 lambda)]``. (As ``b -> 0`` this is the classic cubic
angle profile with a linearly falling current.) ``T`` is chosen so that the voltage limit
is not active.

Minimum time under ``|V| <= V_MAX``
-----------------------------------
The speed model ``w' = -a w + c V`` (``a = (b + k^2/R)/J``, ``c = k/(R J)``) with the
angle is a controllable linear system of order 2 with real eigenvalues, so the time-optimal
control is bang-bang with at most one switch: ``V = +V_MAX`` up to ``t1``, then ``-V_MAX``
until the motor stops at ``T``. With ``w_inf = c V_MAX / a``::

    w(t1) = w_inf (1 - e^(-a t1)),   T - t1 = ln((w(t1) + w_inf) / w_inf) / a
    phi(T) = w_inf (t1 - (1 - e^(-a t1))/a) - w_inf (T - t1)
             + (w(t1) + w_inf) (1 - e^(-a (T - t1)))/a

and ``phi(T) = THETA`` is one scalar equation for ``t1`` (solved with ``brentq``).

Both optimal control problems are solved by direct collocation (Radau, degree 3) with
IPOPT; the example prints them next to the closed forms and plots them.

Run settings: ``N_ENERGY``, ``N_TIME``, ``DEGREE``, ``T_MOVE`` below. Run it with
``python examples/ocp_dc_motor.py``; the plot goes to ``examples/output/ocp_dc_motor.png``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from scipy.optimize import brentq

import acausal as ac
from components import electrical as el
from components import rotational as rot

# run settings
N_ENERGY = 20  # collocation intervals, minimum energy (polynomial voltage)
N_TIME = 60  # collocation intervals, minimum time (piecewise-constant voltage)
DEGREE = 3
T_MOVE = 0.5  # s, duration of the minimum-energy move

# parameters
R = 1.2  # armature resistance [Ohm]
K = 0.06  # motor constant [N.m/A]
J = 2e-4  # rotor + load inertia [kg.m2]
B = 1e-3  # viscous friction [N.m.s/rad]
V_MAX = 12.0  # supply limit [V]
THETA = 2 * np.pi  # one turn [rad]

OUTDIR = Path(__file__).resolve().parent / "output"


class ServoMotor(ac.Model):
    """Voltage source -> armature resistance -> EMF -> inertia with viscous friction."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.source = el.ConstantVoltage(V=0.0)
        self.ground = el.Ground()
        self.resistor = el.Resistor(R=R)
        self.emf = el.EMF(k=K)
        self.inertia = rot.Inertia(J=J, phi=0.0, w=0.0)
        self.friction = rot.Damper(d=B)
        self.fixed = rot.Fixed()
        self.connect(self.source.p, self.resistor.p)
        self.connect(self.resistor.n, self.emf.p)
        self.connect(self.emf.n, self.source.n, self.ground.p)
        self.connect(self.emf.flange, self.inertia.flange_a)
        self.connect(self.inertia.flange_b, self.friction.flange_a)
        self.connect(self.friction.flange_b, self.fixed.flange)


def build_model() -> ServoMotor:
    return ServoMotor()


# ----- closed forms -----
def min_energy_analytic(theta: float = THETA, T: float = T_MOVE, R: float = R, k: float = K,
                        J: float = J, b: float = B) -> dict[str, object]:
    """``alpha, beta``, the optimal loss ``E`` and functions ``i(t)``, ``w(t)``,
    ``phi(t)``, ``V(t)`` of the minimum-copper-loss move (module docstring)."""
    lam = b / J

    def w_basis(t):  # speed per unit alpha, beta
        t = np.asarray(t, dtype=float)
        return np.array([(1 - np.exp(-lam * t)) / b, np.sinh(lam * t) / b])

    def phi_basis(t):
        t = np.asarray(t, dtype=float)
        return np.array([(t - (1 - np.exp(-lam * t)) / lam) / b,
                         (np.cosh(lam * t) - 1) / (b * lam)])

    A = np.array([w_basis(T), phi_basis(T)])
    alpha, beta = np.linalg.solve(A, [0.0, theta])
    E = R / k**2 * (alpha**2 * T + 2 * alpha * beta * np.expm1(lam * T) / lam
                    + beta**2 * np.expm1(2 * lam * T) / (2 * lam))

    def i(t):
        return (alpha + beta * np.exp(lam * np.asarray(t, dtype=float))) / k

    def w(t):
        return np.tensordot([alpha, beta], w_basis(t), axes=1)

    def phi(t):
        return np.tensordot([alpha, beta], phi_basis(t), axes=1)

    def V(t):
        return R * i(t) + k * w(t)

    return {"alpha": alpha, "beta": beta, "E": E, "i": i, "w": w, "phi": phi, "V": V}


def min_time_analytic(theta: float = THETA, v_max: float = V_MAX, R: float = R,
                      k: float = K, J: float = J, b: float = B) -> tuple[float, float]:
    """Switching time ``t1`` and final time ``T`` of the bang-bang minimum-time move."""
    a = (b + k**2 / R) / J
    w_inf = k / (R * J) * v_max / a

    def end(t1):
        w1 = w_inf * (1 - np.exp(-a * t1))
        t2 = np.log((w1 + w_inf) / w_inf) / a
        phi1 = w_inf * (t1 - (1 - np.exp(-a * t1)) / a)
        return phi1 - w_inf * t2 + (w1 + w_inf) * (1 - np.exp(-a * t2)) / a, t1 + t2

    t1 = brentq(lambda s: end(s)[0] - theta, 1e-9, 100.0, xtol=1e-15, rtol=1e-15)
    return t1, end(t1)[1]


# ----- the optimal control problems on the acausal model -----
def solve_min_energy(cm: ac.CompiledModel, N: int = N_ENERGY, degree: int = DEGREE,
                     T: float = T_MOVE, control_kind: str = "polynomial"):
    """Minimum copper loss from rest to rest in ``T``, ``|V| <= V_MAX``."""
    ocp = ac.ocp.Collocation(cm, N=N, degree=degree, controls=["source.V"], t_final=T,
                             control_kind=control_kind)
    opti = ocp.opti
    opti.subject_to(opti.bounded(-V_MAX, ocp.control("source.V"), V_MAX))
    ocp.start_at_initial_values()  # phi = 0, w = 0 (the model's fixed start values)
    opti.subject_to(ocp.state("inertia.phi")[-1] == THETA)
    opti.subject_to(ocp.state("inertia.w")[-1] == 0.0)
    i = ocp.collocated("resistor.i")
    opti.minimize(ocp.integral(R * i**2))
    return ocp, ocp.solve()


def solve_min_time(cm: ac.CompiledModel, N: int = N_TIME, degree: int = DEGREE):
    """Minimum time from rest to rest, ``|V| <= V_MAX``, piecewise-constant voltage."""
    ocp = ac.ocp.Collocation(cm, N=N, degree=degree, controls=["source.V"], t_final=None)
    opti = ocp.opti
    opti.subject_to(opti.bounded(-V_MAX, ocp.control("source.V"), V_MAX))
    opti.subject_to(opti.bounded(1e-3, ocp.t_final, 10.0))
    ocp.start_at_initial_values()
    opti.subject_to(ocp.state("inertia.phi")[-1] == THETA)
    opti.subject_to(ocp.state("inertia.w")[-1] == 0.0)
    opti.set_initial(ocp.t_final, 0.2)
    opti.minimize(ocp.t_final)
    return ocp, ocp.solve(options={"ipopt.bound_relax_factor": 0.0})


def main() -> None:
    cm = ac.build(build_model())
    ref = min_energy_analytic()
    _, se = solve_min_energy(cm)
    t1, T_ref = min_time_analytic()
    _, st = solve_min_time(cm)
    err_w = np.max(np.abs(se.state("inertia.w") - ref["w"](se.t)))
    err_V = np.max(np.abs(se.control("source.V") - ref["V"](se.t_collocation)))
    print("DC servo, one turn from rest to rest")
    print(f"  minimum energy in {T_MOVE} s: loss {se.objective:.9f} J (closed form "
          f"{ref['E']:.9f} J, rel. error {abs(se.objective / ref['E'] - 1):.1e}); "
          f"max speed error {err_w:.1e} rad/s, max voltage error {err_V:.1e} V")
    V = st.control("source.V")
    switch = st.t[int(np.argmax(V < 0))]
    print(f"  minimum time at |V| <= {V_MAX:g} V: T = {st.t_final:.6f} s (closed form "
          f"{T_ref:.6f} s, rel. error {abs(st.t_final / T_ref - 1):.1e}); switch near "
          f"{switch:.4f} s (closed form {t1:.4f} s)")
    plot(se, st, ref, (t1, T_ref), OUTDIR)
    print(f"  plot written to {OUTDIR / 'ocp_dc_motor.png'}")


def plot(se, st, ref, bang, outdir: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tt = np.linspace(0, T_MOVE, 400)
    fig, axes = plt.subplots(2, 2, figsize=(10, 6.4))
    ax = axes[0, 0]
    ax.plot(tt, ref["w"](tt), "k-", lw=1, label="closed form")
    ax.plot(se.t, se.state("inertia.w"), "o", ms=3, label="collocation")
    ax.set_title("minimum energy: speed [rad/s]")
    ax.legend(fontsize=8)
    ax = axes[1, 0]
    ax.plot(tt, ref["V"](tt), "k-", lw=1, label="closed form")
    ax.plot(se.t_collocation, se.control("source.V"), ".", ms=4, label="collocation")
    ax.set_title("minimum energy: voltage [V]")
    ax.set_xlabel("time [s]")
    t1, T = bang
    ax = axes[0, 1]
    ax.plot(st.t, st.state("inertia.phi"), "-", label="collocation")
    ax.axvline(T, color="k", ls="--", lw=1, label="closed-form T")
    ax.set_title("minimum time: angle [rad]")
    ax.legend(fontsize=8)
    ax = axes[1, 1]
    V = st.control("source.V")
    ax.step(st.t, np.append(V, V[-1]), where="post", label="collocation")
    ax.axvline(t1, color="k", ls=":", lw=1, label="closed-form switch")
    ax.set_title("minimum time: voltage [V]")
    ax.set_xlabel("time [s]")
    ax.legend(fontsize=8)
    for a in axes.ravel():
        a.grid(True, alpha=0.3)
    fig.tight_layout()
    outdir.mkdir(parents=True, exist_ok=True)
    path = outdir / "ocp_dc_motor.png"
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


if __name__ == "__main__":
    main()
