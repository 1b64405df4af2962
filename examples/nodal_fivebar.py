"""Five-bar linkage released under gravity: null-space Newmark against IDAS and a
minimal-coordinate reference (Xiang, Wu & Zhou 2015, section 4.1).

The physics
-----------
Four rigid bars AB, BC, CD, DE of 1 m and 2.45076 kg each, pinned to each other and to the
fixed points A = (0, 0) and E = (2, 0), in the vertical x-y plane (gravity 9.81 m/s2
along -y). A closed chain of four bars between two fixed points has two degrees of
freedom. It is released at rest with the middle joint at ``x_C = 1 m``, ``y_C = 0`` (on
the line AE). The paper's Fig. 5 is not available as text: we hang the linkage below its
supports, so B = (0.5, -sqrt(3)/2) and D = (1.5, -sqrt(3)/2) (a "W"; the other choices
of the two elbows are equally consistent with the text; the tests also run the
asymmetric start, B above and D below the line AE).

Nodal model: five Nodes, four Bars, Supports holding A and E (all directions) and B, C,
D in the plane z = 0. Two solvers on the same components:

* ``solver="nullspace"`` with the bars' **lumped** masses (m/2 at each end), as the paper;
* IDAS on the Lagrange-multiplier DAE of the same components, with massless bars and the
  masses **at the nodes** B, C and D (m each), as the paper's multiplier solution: the
  same mechanical system.

Reference solution
------------------
An independent ODE of the linkage in two bar angles (Lagrange's equations of three point
masses m at B, C, D; the positions from the angles in closed form, the derivatives by
automatic differentiation), integrated by scipy's DOP853 at rtol = atol = 1e-12. A pair
of angles fixes the linkage except where the two bars it leaves free are in line (the
intersection of two unit circles degenerates): three charts are used, (AB, DE) with C
from the circles about B and D, (AB, BC) with D from the circles about C and E, (DE, DC)
with B from the circles about A and C, and the run switches to the best-conditioned chart
whenever the current one's chord exceeds 1.9 m.

Run settings: ``T_END``, ``DT`` (null-space step), ``RTOL``/``ATOL`` (IDAS), ``N_OUT``.
"""

from __future__ import annotations

from pathlib import Path

import casadi as cs
import numpy as np
from scipy.integrate import solve_ivp

import acausal as ac
from components import nodal as nd

# run settings
T_END = 2.0  # s: the linkage swings down, through its lowest shape and back up
DT = 1e-2  # s: the paper's step
RTOL = ATOL = 1e-10  # IDAS
# at 1e-10 the multipliers and dummy derivatives of the index-3 loop fail IDAS's algebraic
# error test (its corrector stalls near t = 0.08 s): test the states only (exact positions
# and velocities; the algebraic variables follow them through the constraints)
IDAS_MODE = "states_error_only"
N_OUT = 201  # output points (every 10 ms)

# the linkage (paper, section 4.1)
M_BAR = 2.45076  # kg
L_BAR = 1.0  # m
G = 9.81  # m/s2
SPAN = 2.0  # m, |AE|
ELBOWS = (-1, -1)  # B and D below (-1) or above (+1) the line AE at the start

OUTDIR = Path(__file__).resolve().parent / "output"


def start_positions(elbows: tuple[int, int] = ELBOWS) -> dict[str, tuple[float, float]]:
    """A, B, C, D, E at the start (C at (1, 0); B, D at the elbows chosen)."""
    h = np.sqrt(L_BAR**2 - (SPAN / 4) ** 2)
    return {"A": (0.0, 0.0), "B": (SPAN / 4, elbows[0] * h), "C": (SPAN / 2, 0.0),
            "D": (3 * SPAN / 4, elbows[1] * h), "E": (SPAN, 0.0)}


class FiveBar(ac.Model):
    """The five-bar linkage; ``masses="lumped"`` (bars carry their mass, lumped at their
    ends) or ``"nodes"`` (massless bars, the mass m at each of B, C, D)."""

    def __init__(self, masses: str = "lumped", elbows: tuple[int, int] = ELBOWS):
        super().__init__()
        pos = start_positions(elbows)
        node_mass = M_BAR if masses == "nodes" else 0.0
        for k, (x, y) in pos.items():
            m = node_mass if k in "BCD" else 0.0
            setattr(self, k, nd.Node(x=x, y=y, z=0.0, m=m))
        self.gravity = nd.Gravity(g=[0.0, -G, 0.0])
        for a, b in ("AB", "BC", "CD", "DE"):
            bar = nd.Bar(m=M_BAR if masses == "lumped" else 0.0, L=L_BAR, mass="lumped")
            setattr(self, f"bar{a}{b}", bar)
            self.connect(bar.pin_a, getattr(self, a).pin)
            self.connect(bar.pin_b, getattr(self, b).pin)
        self.fixA = nd.Support()
        self.fixE = nd.Support()
        self.connect(self.fixA.pin, self.A.pin)
        self.connect(self.fixE.pin, self.E.pin)
        for k in "BCD":  # the linkage moves in the plane z = 0
            s = nd.Support(directions="z")
            setattr(self, f"plane{k}", s)
            self.connect(s.pin, getattr(self, k).pin)


def build_model(masses: str = "lumped", elbows: tuple[int, int] = ELBOWS) -> FiveBar:
    return FiveBar(masses, elbows)


# --------------------------------------------------------------------------------------
# reference: Lagrange's equations in two bar angles, three charts
# --------------------------------------------------------------------------------------


def _circles(p1: cs.SX, p2: cs.SX, s: float) -> tuple[cs.SX, cs.SX]:
    """Intersection of the unit circles about p1 and p2 on side s of p1 -> p2, and the
    chord |p2 - p1|."""
    d = p2 - p1
    chord = cs.sqrt(cs.dot(d, d))
    h = cs.sqrt(L_BAR**2 - chord**2 / 4)
    return (p1 + p2) / 2 + s * h * cs.vertcat(-d[1], d[0]) / chord, chord


def _chart(name: str, s: float) -> cs.Function:
    """Positions of B, C, D (stacked), the chord of the chart and q'' for one chart."""
    q, qd = cs.SX.sym("q", 2), cs.SX.sym("qd", 2)
    A, E = cs.DM([0.0, 0.0]), cs.DM([SPAN, 0.0])

    def arm(p: cs.SX, th: cs.SX) -> cs.SX:
        return p + L_BAR * cs.vertcat(cs.cos(th), cs.sin(th))

    if name == "BD":  # angles of AB and ED; C from B and D
        B, D = arm(A, q[0]), arm(E, q[1])
        C, chord = _circles(B, D, s)
    elif name == "BC":  # angles of AB and BC; D from C and E
        B = arm(A, q[0])
        C = arm(B, q[1])
        D, chord = _circles(C, E, s)
    else:  # "DC": angles of ED and DC; B from A and C
        D = arm(E, q[0])
        C = arm(D, q[1])
        B, chord = _circles(A, C, s)
    P = cs.vertcat(B, C, D)
    J = cs.jacobian(P, q)
    f = cs.repmat(cs.vertcat(0.0, -M_BAR * G), 3, 1)
    qdd = cs.solve(M_BAR * J.T @ J, J.T @ (f - M_BAR * cs.jtimes(J @ qd, q, qd)))
    return cs.Function(name, [q, qd], [P, J @ qd, chord, qdd])


def _to_chart(name: str, P: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """Angles, rates and branch of a chart from the positions/velocities of B, C, D."""
    B, C, D, vB, vC, vD = P[0:2], P[2:4], P[4:6], V[0:2], V[2:4], V[4:6]
    A, E = np.array([0.0, 0.0]), np.array([SPAN, 0.0])

    def ang(p: np.ndarray, r: np.ndarray, vp: np.ndarray, vr: np.ndarray):
        d, dd = r - p, vr - vp
        return np.arctan2(d[1], d[0]), (d[0] * dd[1] - d[1] * dd[0]) / (d @ d)

    def side(p1: np.ndarray, p2: np.ndarray, x: np.ndarray) -> float:
        d, e = p2 - p1, x - p1
        return 1.0 if d[0] * e[1] - d[1] * e[0] > 0 else -1.0

    z = np.zeros(2)
    if name == "BD":
        (a, ad), (b, bd) = ang(A, B, z, vB), ang(E, D, z, vD)
        s = side(B, D, C)
    elif name == "BC":
        (a, ad), (b, bd) = ang(A, B, z, vB), ang(B, C, vB, vC)
        s = side(C, E, D)
    else:
        (a, ad), (b, bd) = ang(E, D, z, vD), ang(D, C, vD, vC)
        s = side(A, C, B)
    return np.array([a, b]), np.array([ad, bd]), s


def _chords(P: np.ndarray) -> dict[str, float]:
    B, C, D = P[0:2], P[2:4], P[4:6]
    return {"BD": float(np.linalg.norm(D - B)), "BC": float(np.linalg.norm([SPAN, 0] - C)),
            "DC": float(np.linalg.norm(C))}


CHORD_SWITCH = 1.9  # m: a chart is left when its two free bars are within ~36 deg of a line


def reference(t_eval: np.ndarray, elbows: tuple[int, int] = ELBOWS) -> dict[str, np.ndarray]:
    """Positions and velocities of B, C, D at ``t_eval`` (keys ``"B.x"``, ``"B.vx"``, ...)
    from the minimal-coordinate ODE (see the module documentation)."""
    pos = start_positions(elbows)
    P = np.array([*pos["B"], *pos["C"], *pos["D"]])
    V = np.zeros(6)
    t, out_t, out_P, out_V = 0.0, [], [], []
    charts: dict[tuple[str, float], cs.Function] = {}
    while t < t_eval[-1]:
        chords = _chords(P)
        name = min(chords, key=chords.get)
        q, qd, s = _to_chart(name, P, V)
        f = charts.setdefault((name, s), _chart(name, s))

        def rhs(_t: float, y: np.ndarray, f=f) -> np.ndarray:
            return np.concatenate([y[2:], np.asarray(f(y[:2], y[2:])[3]).ravel()])

        def leave(_t: float, y: np.ndarray, f=f) -> float:
            return CHORD_SWITCH - float(f(y[:2], y[2:])[2])

        leave.terminal = True  # type: ignore[attr-defined]
        pts = t_eval[(t_eval > t) & (t_eval <= t_eval[-1])]
        sol = solve_ivp(rhs, (t, t_eval[-1]), np.concatenate([q, qd]), method="DOP853",
                        rtol=1e-12, atol=1e-12, t_eval=pts, events=leave)
        for tk, y in zip(sol.t, sol.y.T, strict=True):
            Pk, Vk, *_ = f(y[:2], y[2:])
            out_t.append(tk)
            out_P.append(np.asarray(Pk).ravel())
            out_V.append(np.asarray(Vk).ravel())
        y = sol.y_events[0][0] if sol.status == 1 else sol.y[:, -1]
        t = float(sol.t_events[0][0]) if sol.status == 1 else float(sol.t[-1])
        Pk, Vk, *_ = f(y[:2], y[2:])
        P, V = np.asarray(Pk).ravel(), np.asarray(Vk).ravel()
    Pa, Va = np.array([P0 for P0 in out_P]), np.array(out_V)
    res = {"t": np.concatenate([[0.0], np.array(out_t)])}
    P0 = np.array([*pos["B"], *pos["C"], *pos["D"]])
    Pa = np.vstack([P0, Pa])
    Va = np.vstack([np.zeros(6), Va])
    for k, nme in enumerate("BCD"):
        res[f"{nme}.x"], res[f"{nme}.y"] = Pa[:, 2 * k], Pa[:, 2 * k + 1]
        res[f"{nme}.vx"], res[f"{nme}.vy"] = Va[:, 2 * k], Va[:, 2 * k + 1]
    return res


# --------------------------------------------------------------------------------------


def run(plot: bool = True, dt: float = DT, t_end: float = T_END,
        elbows: tuple[int, int] = ELBOWS) -> dict[str, object]:
    """Null-space (lumped masses) and IDAS (masses at the nodes) runs and the reference on
    the same output grid; writes ``output/nodal_fivebar.png``."""
    n_out = int(round(t_end / T_END * (N_OUT - 1))) + 1
    grid = np.linspace(0.0, t_end, n_out)
    cm_ns = ac.build(build_model("lumped", elbows))
    res_ns = ac.simulate(cm_ns, t_end, solver="nullspace", dt=dt, t_eval=grid)
    cm_ms = ac.build(build_model("nodes", elbows))
    res_ms = ac.simulate(cm_ms, t_end, t_eval=grid, rtol=RTOL, atol=ATOL, mode=IDAS_MODE)
    ref = reference(grid, elbows)
    out = {"nullspace": res_ns, "idas": res_ms, "reference": ref, "cm": cm_ns}
    if plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        OUTDIR.mkdir(exist_ok=True)
        fig, ax = plt.subplots(1, 3, figsize=(13, 3.8))
        for res, lab, st in ((res_ns, f"null space, Newmark dt = {dt:g} s", "-"),
                             (res_ms, "IDAS, Lagrange multipliers", "--")):
            ax[0].plot(res.t, res["B.x"], st, label=lab)
            ax[1].plot(res.t, res["B.vx"], st, label=lab)
        ax[0].plot(ref["t"], ref["B.x"], ":", color="k", label="two-angle ODE")
        ax[1].plot(ref["t"], ref["B.vx"], ":", color="k", label="two-angle ODE")
        ax[0].set(xlabel="t [s]", ylabel="x_B [m]")
        ax[1].set(xlabel="t [s]", ylabel="v_Bx [m/s]")
        ax[0].legend(fontsize=7)
        for k in range(0, len(res_ns.t), 20):  # snapshots of the linkage
            xs = [res_ns[f"{n}.x"][k] for n in "ABCDE"]
            ys = [res_ns[f"{n}.y"][k] for n in "ABCDE"]
            ax[2].plot(xs, ys, "o-", color=plt.cm.viridis(k / len(res_ns.t)), lw=1, ms=3)
        ax[2].set(aspect="equal", xlabel="x [m]", ylabel="y [m]",
                  title="linkage every 0.2 s (dark: start)")
        fig.tight_layout()
        fig.savefig(OUTDIR / "nodal_fivebar.png", dpi=110)
        plt.close(fig)
    return out


if __name__ == "__main__":
    import warnings

    warnings.simplefilter("ignore", ac.RedundantConstraintWarning)
    r = run()
    ref = r["reference"]
    for name in ("nullspace", "idas"):
        res = r[name]
        print(f"{name:>9}: max |x_B - ref| = {np.max(np.abs(res['B.x'] - ref['B.x'])):.2e} m, "
              f"max |v_Bx - ref| = {np.max(np.abs(res['B.vx'] - ref['B.vx'])):.2e} m/s, "
              f"wall {res.stats.wall_time:.2f} s")
    print(r["cm"].domain_pass("pin").report)
