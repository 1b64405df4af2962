"""Flexible four-bar at 210 rad/s: the chapter's example 5.1 (Richard 2012, Fig. 6).

The physics
-----------
A planar four-bar whose rigid crank ``OA`` (0.3 m) is driven at a constant 210 rad/s and
whose coupler ``AB`` and follower (rocker) ``BC`` are flexible steel links (E = 2e11 Pa,
rho = 7800 kg/m3), each discretised by eight Timoshenko beam elements and reduced to its
first two vibration modes, as in the chapter (after Khulief 1992). The crank starts
horizontal and at full speed with undeformed links at rest relative to the rigid
motion; the inertia of the fast rigid motion bends the links, and with no damping the
deflection carries the start transient on top of the forced, crank-periodic response.

*Link lengths* (not given in the chapter): a Grashof crank-rocker, crank 0.3 m, coupler
0.7 m, rocker 0.6 m, ground 0.7 m (``A_CRANK`` ... ``D_GROUND`` below; shortest plus
longest ``0.3 + 0.7 = 1.0 <= 0.6 + 0.7 = 1.3`` and the crank is the shortest link, so it
turns fully).

*Section data*: the chapter gives A = 1.767e-4 m2 (a 15 mm round bar, whose I would be
2.49e-9 m4) and I = 3.112e-8 m4 (the I of a 28.2 mm round bar, whose A would be 6.25e-4
m2): the two do not belong to one circle. We use both as given, A for the mass and axial
stiffness and I for the in-plane bending, as a section of its own
(``Section(A, Iy, Iz, J)``). The chapter's links are planar beams, so "the first two
modes" are the first two in-plane bending modes; in 3D we make the out-of-plane bending
and the torsion 100 times stiffer (Iy = 100 I, J = Iy + I) so that these are the first
two modes of each link: coupler 213.9 / 838.9 Hz, rocker 290.4 / 1131.2 Hz
(``link_data(L).frequencies``; Timoshenko beams, with rotary inertia and shear: the
Euler-Bernoulli closed form gives 215.4 / 861.7 and 293.2 / 1172.9 Hz). The third mode
of each link is torsion about the chord (1123 / 1311 Hz), which the planar loop of
revolutes constrains: ``build_model(modes=3)`` starts only with ``q`` and ``qd`` of the
links as guesses, not fixed (``link.q.fixed = False``, ``link.qd.fixed = False``; see
"Start values in a closed loop" in ``docs/flexible.md``).

*Reference conditions*: each link sits between two revolutes, so its body frame is the
chord frame (``reference="pinned"`` through its end nodes): pinned-pinned modes, and no
spurious axial stretch of the chord. The mid-point deflection "measured perpendicular to
the initial links" is the transverse displacement of the centre node in that frame,
``res["coupler.centre.u"][:, 1]``.

*Stiffening* (on, the default for beams) includes the geometric stiffness of the links'
own inertia (centrifugal, Euler and translational accelerations of each link frame);
the axial force that the coupler transmits to the rocker is not included (see
``docs/flexible.md``). Gravity is neglected (13 000 m/s2 of crank-tip acceleration).

Reference solution
------------------
The chapter's Fig. 6 (deflections of the link centres against the crank angle) is not in
the text we have; the printed amplitudes are compared in ``docs/flexible.md``. Checks
here: the loop closes (gap at the cut joint), the crank angle follows the drive, and the
rigid-body motion agrees with the rigid four-bar of the same lengths (``closed_form``
below: the joint B of the rigid linkage) to the elastic deflection's order.

Run settings: ``T_END``, ``RTOL``, ``ATOL``, ``N_POINTS`` below.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

import acausal as ac
from components import multibody as mb
from components import rotational as rot
from components.flexible import BeamMesh, FlexibleBody, FlexibleBodyData, Material, Section

OMEGA = 210.0  # crank speed [rad/s]
TURNS = 2
T_END = TURNS * 2 * np.pi / OMEGA  # s: two crank revolutions
RTOL = 1e-6
ATOL = 1e-8
N_POINTS = TURNS * 180 + 1  # one output per 2 degrees of crank angle

A_CRANK, B_COUPLER, C_ROCKER, D_GROUND = 0.3, 0.7, 0.6, 0.7  # [m] (Grashof crank-rocker)
NEL, MODES = 8, 2
STEEL = Material(E=2.0e11, nu=0.3, rho=7800.0)
AREA, INERTIA = 1.767e-4, 3.112e-8  # the chapter's section data [m2, m4]
SECTION = Section(A=AREA, Iy=100 * INERTIA, Iz=INERTIA, J=101 * INERTIA)
OUTDIR = Path(__file__).resolve().parent / "output"


def link_data(length: float, modes: int = MODES, reduction: str = "modal") -> FlexibleBodyData:
    """A link between two revolutes: chord frame through its end nodes."""
    return FlexibleBodyData.from_mesh(BeamMesh.line([0, 0, 0], [length, 0, 0], NEL), STEEL,
                                      SECTION, reference="pinned",
                                      reference_nodes=("start", "end"), modes=modes,
                                      reduction=reduction)


def closed_form(theta):
    """Rigid four-bar: crank tip A and joint B (upper branch), arrays (n, 2)."""
    theta = np.atleast_1d(theta)
    A = A_CRANK * np.column_stack([np.cos(theta), np.sin(theta)])
    dv = np.array([D_GROUND, 0.0]) - A
    Lc = np.linalg.norm(dv, axis=1)
    x = (B_COUPLER**2 - C_ROCKER**2 + Lc**2) / (2 * Lc)
    h = np.sqrt(B_COUPLER**2 - x**2)
    e = dv / Lc[:, None]
    return A, A + x[:, None] * e + h[:, None] * np.column_stack([-e[:, 1], e[:, 0]])


class FlexibleFourBar(ac.Model):
    """Rigid crank (speed drive) - flexible coupler - flexible rocker - ground."""

    def __init__(self, coupler: FlexibleBodyData, rocker: FlexibleBodyData,
                 stiffening: bool = True, **kw):
        super().__init__(**kw)
        A0, B0 = closed_form(0.0)
        th_b = np.arctan2(*(B0[0] - A0[0])[::-1])  # coupler angle
        th_c = np.arctan2(B0[0, 1], B0[0, 0] - D_GROUND)  # rocker angle (from C to B)
        self.world = mb.World(g=[0, 0, 0])
        self.crank_joint = mb.Revolute(use_axis_flange=True, phi=0.0)
        self.drive = rot.Speed(w_ref=OMEGA)
        for v in ("phi", "w"):  # the driven crank angle is a state (not the loop's)
            self.crank_joint.variables()[v].state_priority = 3
        self.crank = mb.FixedTranslation(r=[A_CRANK, 0, 0])
        m_crank = STEEL.rho * AREA * A_CRANK
        self.crank_body = mb.Body(m=m_crank, r_CM=[A_CRANK / 2, 0, 0], I_11=1e-6,
                                  I_22=m_crank * A_CRANK**2 / 12, I_33=m_crank * A_CRANK**2 / 12)
        self.j_a = mb.Revolute(phi=ac.guess(th_b))
        self.coupler = FlexibleBody(data=coupler, attachments=["start", "end"],
                                    stiffening=stiffening)
        self.j_b = mb.Revolute(phi=ac.guess(th_c - th_b))
        self.rocker = FlexibleBody(data=rocker, attachments=["start", "end"],
                                   stiffening=stiffening)
        self.ground = mb.FixedTranslation(r=[D_GROUND, 0, 0])
        self.j_c = mb.Revolute(phi=ac.guess(th_c))
        self.connect(self.world.frame_b, self.crank_joint.frame_a, self.ground.frame_a)
        self.connect(self.drive.flange, self.crank_joint.axis)
        self.connect(self.crank_joint.frame_b, self.crank.frame_a, self.crank_body.frame_a)
        self.connect(self.crank.frame_b, self.j_a.frame_a)
        self.connect(self.j_a.frame_b, self.coupler.frame_b)  # node A of the coupler
        self.connect(self.coupler.frame_c, self.j_b.frame_a)  # node B of the coupler
        self.connect(self.j_b.frame_b, self.rocker.frame_c)  # node B of the rocker
        self.connect(self.rocker.frame_b, self.j_c.frame_b)  # node C of the rocker
        self.connect(self.ground.frame_b, self.j_c.frame_a)


def build_model(modes: int = MODES, stiffening: bool = True) -> FlexibleFourBar:
    return FlexibleFourBar(link_data(B_COUPLER, modes), link_data(C_ROCKER, modes), stiffening)


def run(plot: bool = True, outdir: str | Path | None = None, model=None,
        t_end: float = T_END) -> ac.Result:
    res = ac.simulate(model if model is not None else build_model(), t_end, rtol=RTOL,
                      atol=ATOL, n_points=int(round(t_end / T_END * (N_POINTS - 1))) + 1)
    if plot:
        plot_result(res, Path(outdir) if outdir is not None else OUTDIR)
    return res


def plot_result(res: ac.Result, outdir: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from components.flexible.plot import plot_deformed_mechanism

    deg = np.degrees(res["crank_joint.phi"])
    fig = plt.figure(figsize=(12, 7.5))
    for n, (name, title) in enumerate((("coupler", "link AB (coupler)"),
                                       ("rocker", "link BC (follower)"))):
        ax = fig.add_subplot(2, 2, 1 + 2 * n)
        ax.plot(deg, 1e3 * res[f"{name}.centre.u"][:, 1], lw=1.2)
        ax.set_ylabel("mid-point deflection [mm]")
        ax.set_title(f"Fig. 6({'ab'[n]}): deflection of the centre of {title}", fontsize=10)
        ax.grid(True, alpha=0.3)
        ax.set_xlabel("crank angle [deg]")
    ax = fig.add_subplot(1, 2, 2)
    k_turn = (len(res.t) - 1) // TURNS
    times = [res.t[(TURNS - 1) * k_turn + k] for k in (0, k_turn // 4, k_turn // 2,
                                                       3 * k_turn // 4)]
    plot_deformed_mechanism(res, {"coupler": link_data(B_COUPLER), "rocker": link_data(C_ROCKER)},
                            times, scale=20.0,
                            lines=[("crank_joint.frame_a", "crank.frame_b")], ax=ax)
    ax.set_title("last turn, deflections x 20", fontsize=10)
    fig.suptitle(f"Flexible four-bar, crank at {OMEGA:g} rad/s, {MODES} modes per link "
                 f"(pinned chord frames, stiffening on)", fontsize=11)
    fig.tight_layout()
    outdir.mkdir(parents=True, exist_ok=True)
    path = outdir / "flexible_fourbar.png"
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def summary(res: ac.Result) -> dict[str, float]:
    th = res["crank_joint.phi"]
    gap = np.linalg.norm(res["j_c.frame_b.r"] - res["j_c.frame_a.r"], axis=1)
    _, B = closed_form(th)
    k_turn = (len(res.t) - 1) // TURNS
    last = slice((TURNS - 1) * k_turn, None)
    return {
        "loop_gap": float(gap.max()),
        "B_vs_rigid": float(np.abs(res["j_b.frame_a.r"][:, :2] - B).max()),
        "coupler_peak": float(np.abs(res["coupler.centre.u"][last, 1]).max()),
        "rocker_peak": float(np.abs(res["rocker.centre.u"][last, 1]).max()),
        "coupler_axial": float(np.abs(res["coupler.node[8].u"][:, 0]).max()),
    }


def main() -> None:
    import time
    import warnings

    # the planar loop modelled in 3D has 3 redundant equations at the cut joint j_c; they
    # are removed and listed in the mechanism report printed below
    warnings.simplefilter("ignore", ac.RedundantConstraintWarning)
    t0 = time.perf_counter()
    cm = ac.build(build_model())
    t1 = time.perf_counter()
    print("Flexible four-bar (chapter 5.1)")
    print(cm.mechanism)
    res = run(plot=True, model=cm)
    t2 = time.perf_counter()
    s = summary(res)
    print(f"  build {t1 - t0:.2f} s, simulate {TURNS} turns {t2 - t1:.2f} s")
    print(f"  loop gap {s['loop_gap']:.1e} m; joint B vs rigid four-bar "
          f"{1e3 * s['B_vs_rigid']:.3f} mm")
    print(f"  last turn: mid-point deflection peaks: coupler {1e3 * s['coupler_peak']:.3f} mm,"
          f" rocker {1e3 * s['rocker_peak']:.3f} mm")
    print(f"  plot written to {OUTDIR / 'flexible_fourbar.png'}")


if __name__ == "__main__":
    main()
