"""Planar four-bar linkage in 3D: coupler curve and redundant loop constraints.

The physics
-----------
The four-bar of the chapter (Richard 2012, Fig. 2) with rigid links: crank ``OA``
(``a = 0.3 m``), coupler ``AB`` (``b = 1.0 m``), rocker ``BC`` (``c = 0.8 m``), ground
``OC`` (``d = 0.9 m``). Grashof: ``a + b <= c + d``, so the crank turns fully. It is driven
at a constant ``2 pi rad/s`` by a 1D rotational ``Speed`` source on the crank revolute's
axis flange; gravity acts along -y.

Four revolute joints about z. The mechanism graph has one loop; the tree takes the crank,
coupler and rocker revolutes (the chapter's order: arms first, then revolute joints in
model order) and the last revolute ``j4`` (rocker to ground) is the cut joint. Cut, a
revolute gives 5 constraint equations (3 position, 2 axis alignment); for a planar loop
only 2 are independent (the in-plane position), so the mechanism pass removes the 3
redundant ones (z position and both axis alignments) by the rank of the constraint Jacobian
and lists them. Three tree speeds minus two constraints leave one freedom, taken by the
drive.

Reference solution
------------------
For the crank angle ``theta``, ``A = a (cos theta, sin theta)``, and ``B`` is the
intersection of the circles of radius ``b`` about ``A`` and ``c`` about ``C = (d, 0)``
(upper assembly branch)::

    e = (C - A) / |C - A|,  x = (b^2 - c^2 + |C - A|^2) / (2 |C - A|),
    h = sqrt(b^2 - x^2),    B = A + x e + h (-e_y, e_x)

The coupler curve of the coupler point ``P = A + p_x u + p_y u_perp`` (``u`` along ``AB``)
follows from it.

Run settings: ``T_END``, ``RTOL``, ``ATOL``, ``N_POINTS`` below (closed loop: rtol 1e-8).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

import acausal as ac
from components import multibody as mb
from components import rotational as rot

# run settings
T_END = 2.0  # s: two crank revolutions
RTOL = 1e-8  # closed loop: the multiplier block does not converge much tighter
ATOL = 1e-8
N_POINTS = 721

# linkage
A_CRANK, B_COUPLER, C_ROCKER, D_GROUND = 0.3, 1.0, 0.8, 0.9  # [m]
OMEGA = 2 * np.pi  # crank speed [rad/s]
P_COUPLER = (0.5, 0.35)  # coupler point in the coupler frame (along AB, normal) [m]

OUTDIR = Path(__file__).resolve().parent / "output"


def closed_form(theta):
    """Crank tip A and rocker pivot B (upper branch), arrays of shape (n, 2)."""
    theta = np.atleast_1d(theta)
    A = A_CRANK * np.column_stack([np.cos(theta), np.sin(theta)])
    dv = np.array([D_GROUND, 0.0]) - A
    Lc = np.linalg.norm(dv, axis=1)
    x = (B_COUPLER**2 - C_ROCKER**2 + Lc**2) / (2 * Lc)
    h = np.sqrt(B_COUPLER**2 - x**2)
    e = dv / Lc[:, None]
    return A, A + x[:, None] * e + h[:, None] * np.column_stack([-e[:, 1], e[:, 0]])


def coupler_point(theta):
    """Closed-form coupler curve point, shape (n, 2)."""
    A, B = closed_form(theta)
    u = (B - A) / B_COUPLER
    return A + P_COUPLER[0] * u + P_COUPLER[1] * np.column_stack([-u[:, 1], u[:, 0]])


class FourBar(ac.Model):
    """Crank (driven revolute) - coupler - rocker - ground, four revolutes about z."""

    def __init__(self, **kw):
        super().__init__(**kw)
        a, b, c, d = A_CRANK, B_COUPLER, C_ROCKER, D_GROUND
        A0, B0 = closed_form(0.0)
        phi2 = np.arctan2(*(B0[0] - A0[0])[::-1])
        phi3 = np.arctan2(B0[0, 1], B0[0, 0] - d)
        self.world = mb.World(g=[0, -9.81, 0])
        self.crank_joint = mb.Revolute(use_axis_flange=True, phi=0.0)
        self.speed = rot.Speed(w_ref=OMEGA)
        self.crank = mb.FixedTranslation(r=[a, 0, 0])
        self.crank_body = mb.Body(m=1.0, r_CM=[a / 2, 0, 0], I_22=0.01, I_33=0.01)
        self.j2 = mb.Revolute(phi=ac.guess(phi2))
        self.coupler = mb.FixedTranslation(r=[b, 0, 0])
        self.coupler_body = mb.Body(m=2.0, r_CM=[b / 2, 0, 0], I_22=0.1, I_33=0.1)
        self.coupler_point = mb.FixedTranslation(r=[P_COUPLER[0], P_COUPLER[1], 0])
        self.j3 = mb.Revolute(phi=ac.guess(phi3 - phi2))
        self.rocker = mb.FixedTranslation(r=[-c, 0, 0])
        self.rocker_body = mb.Body(m=1.5, r_CM=[-c / 2, 0, 0], I_22=0.05, I_33=0.05)
        self.ground_arm = mb.FixedTranslation(r=[d, 0, 0])
        self.j4 = mb.Revolute()
        self.connect(self.world.frame_b, self.crank_joint.frame_a, self.ground_arm.frame_a)
        self.connect(self.speed.flange, self.crank_joint.axis)
        self.connect(self.crank_joint.frame_b, self.crank.frame_a, self.crank_body.frame_a)
        self.connect(self.crank.frame_b, self.j2.frame_a)
        self.connect(self.j2.frame_b, self.coupler.frame_a, self.coupler_body.frame_a,
                     self.coupler_point.frame_a)
        self.connect(self.coupler.frame_b, self.j3.frame_a)
        self.connect(self.j3.frame_b, self.rocker.frame_a, self.rocker_body.frame_a)
        self.connect(self.rocker.frame_b, self.j4.frame_b)
        self.connect(self.ground_arm.frame_b, self.j4.frame_a)


def build_model() -> FourBar:
    return FourBar()


def run(plot: bool = True, outdir: str | Path | None = None, model=None) -> ac.Result:
    """Simulate two crank turns; optionally write ``mb_fourbar.png`` to ``outdir``."""
    res = ac.simulate(model if model is not None else build_model(), T_END, rtol=RTOL,
                      atol=ATOL, n_points=N_POINTS)
    if plot:
        plot_result(res, Path(outdir) if outdir is not None else OUTDIR)
    return res


def plot_result(res: ac.Result, outdir: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    th = res["crank_joint.phi"]
    P = res["coupler_point.frame_b.r"]
    Pref = coupler_point(th)
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.8), gridspec_kw={"width_ratios": [1.3, 1]})
    ax = axes[0]
    ax.plot(Pref[:, 0], Pref[:, 1], "k--", lw=1, label="closed-form coupler curve")
    ax.plot(P[:, 0], P[:, 1], lw=2, alpha=0.7, label="coupler point (simulated)")
    per_turn = int(round((len(th) - 1) * 2 * np.pi / (OMEGA * T_END)))
    for n, k in enumerate((0, per_turn // 3, 2 * per_turn // 3)):
        A = res["crank.frame_b.r"][k]
        B = res["j3.frame_a.r"][k]
        col = f"C{n + 2}"
        ax.plot([0.0, A[0], B[0], D_GROUND], [0.0, A[1], B[1], 0.0], "o-", color=col, lw=1.2,
                ms=4, label=f"theta = {int(round(np.degrees(th[k])))} deg")
        ax.fill([A[0], P[k, 0], B[0]], [A[1], P[k, 1], B[1]], color=col, alpha=0.2)
    ax.set_aspect("equal")
    ax.set_xlabel("x [m]")
    ax.set_ylabel("y [m]")
    ax.set_title("coupler curve and linkage positions")
    ax.legend(fontsize=8, loc="lower left")
    ax = axes[1]
    gap = np.linalg.norm(res["j4.frame_b.r"] - res["j4.frame_a.r"], axis=1)
    ax.semilogy(np.degrees(th), np.maximum(np.linalg.norm(P[:, :2] - Pref, axis=1), 1e-17),
                lw=1, label="|coupler point - closed form| [m]")
    ax.semilogy(np.degrees(th), np.maximum(gap, 1e-17), lw=1, label="loop gap at j4 [m]")
    ax.set_xlabel("crank angle [deg]")
    ax.set_title("errors")
    ax.legend(fontsize=8)
    for ax in axes:
        ax.grid(True, alpha=0.3)
    fig.suptitle("Four-bar linkage driven at constant speed", fontsize=11)
    fig.tight_layout()
    outdir.mkdir(parents=True, exist_ok=True)
    path = outdir / "mb_fourbar.png"
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def main() -> None:
    cm = ac.build(build_model())
    print("Four-bar linkage (one loop, cut at j4)")
    print(cm.mechanism)
    print(f"  states chosen: {', '.join(cm.states)}; state selection "
          f"{'dynamic' if cm.report.dynamic_state_selection else 'static'}")
    res = run(plot=True, model=cm)
    th = res["crank_joint.phi"]
    err = np.linalg.norm(res["coupler_point.frame_b.r"][:, :2] - coupler_point(th), axis=1)
    gap = np.linalg.norm(res["j4.frame_b.r"] - res["j4.frame_a.r"], axis=1)
    print(f"  max |coupler point - closed form| = {np.max(err):.1e} m; "
          f"max loop gap at j4 = {np.max(gap):.1e} m; "
          f"state re-selections: {res.stats.reselections}")
    print(f"  plot written to {OUTDIR / 'mb_fourbar.png'}")


if __name__ == "__main__":
    main()
