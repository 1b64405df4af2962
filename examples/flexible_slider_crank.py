"""Spatial slider-crank with a flexible connecting rod (Richard & Bouazara 2012, section 5.1).

The physics
-----------
The spatial slider-crank of ``examples/mb_slider_crank.py`` (after Jonker 1989 and Shi &
McPhee 2000) with its connecting rod made flexible: a rigid crank ``OA`` (0.15 m) turns
about the world z axis at 150 rad/s; the rod ``AB`` (0.30 m, a 6 mm steel rod, E = 2e11
Pa, rho = 7870 kg/m3; the numbers lost in the text extraction of the paper are those of
the rigid example) joins it by a spherical joint at ``A`` and a universal joint at ``B``
to a slider (half the rod's mass) on a guide parallel to x, offset 0.10 m out of the
crank plane, so the mechanism is spatial and the rod bends in both planes.

The rod is a :class:`~components.flexible.FlexibleBody` between two joints: chord frame
through its end nodes (``reference="pinned"``), 20 beam elements as in the paper, first
two modes (the two bending planes of the round rod, 132 Hz each), geometric stiffening
on. Its attachment frames: ``frame_b`` at node A (spherical joint), ``frame_c`` at node B
(universal joint, the cut joint of the loop). The crank starts at theta = 0 at full
speed with the rod undeformed; no damping, no gravity (as in the paper's comparison).

The mid-span deflection of the rod, measured in its chord frame (``res["rod.centre.u"]``,
components y and z), is plotted against the crank angle, as the paper's Fig. 4.

Reference solution
------------------
The paper's Fig. 4 is not in the text we have. The independent check is
``benchmarks/bench_exudyn_ffrf.py``: Exudyn's ``ObjectFFRFreducedOrder`` fed the same
mode shapes, modal stiffness and mass distribution from our preprocessor, both with
geometric stiffening off (the mid-span deflections agree to 0.05 % of the peak; see
``docs/flexible.md``). Here: the loop closes, and the rigid part of the motion follows the
closed-form slider position.

Run settings: ``T_END``, ``RTOL``, ``ATOL``, ``N_POINTS`` below.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

import acausal as ac
from components import multibody as mb
from components import rotational as rot
from components.flexible import BeamMesh, FlexibleBody, FlexibleBodyData, Material, Section

sys.path.insert(0, str(Path(__file__).resolve().parent))
import mb_slider_crank as rigid  # noqa: E402  (geometry and closed form)

OMEGA = rigid.OMEGA  # 150 rad/s
TURNS = 2
T_END = TURNS * 2 * np.pi / OMEGA
RTOL = 1e-6
ATOL = 1e-9
N_POINTS = TURNS * 180 + 1
NEL, MODES = 20, 2
ROD = Material(E=2.0e11, nu=0.3, rho=rigid.RHO)
SECTION = Section.circle(rigid.D_ROD / 2)
OUTDIR = Path(__file__).resolve().parent / "output"


def rod_data(modes: int = MODES, reduction: str = "modal") -> FlexibleBodyData:
    return FlexibleBodyData.from_mesh(BeamMesh.line([0, 0, 0], [rigid.L_COUPLER, 0, 0], NEL),
                                      ROD, SECTION, reference="pinned",
                                      reference_nodes=("start", "end"), modes=modes,
                                      reduction=reduction)


class FlexibleSliderCrank(ac.Model):
    """Crank (speed drive) - spherical - flexible rod - universal - slider (prismatic)."""

    def __init__(self, data: FlexibleBodyData, stiffening: bool = True, **kw):
        super().__init__(**kw)
        a, h = rigid.A_CRANK, rigid.H_OFFSET
        self.world = mb.World(g=[0, 0, 0])
        self.crank_joint = mb.Revolute(use_axis_flange=True, n=[0, 0, 1], phi=0.0)
        for v in ("phi", "w"):  # the driven crank angle is a state
            self.crank_joint.variables()[v].state_priority = 3
        self.drive = rot.Speed(w_ref=OMEGA)
        self.crank = mb.FixedTranslation(r=[a, 0, 0])
        self.crank_body = mb.Body(m=rigid.M_CRANK, r_CM=[a / 2, 0, 0], I_11=1e-6,
                                  I_22=rigid.M_CRANK * a**2 / 12,
                                  I_33=rigid.M_CRANK * a**2 / 12)
        self.sph = mb.Spherical(Q=ac.guess(rigid.coupler_start_quaternion()))
        self.rod = FlexibleBody(data=data, attachments=["start", "end"], stiffening=stiffening)
        self.guide = mb.FixedTranslation(r=[0, 0, h])
        self.slide = mb.Prismatic(n=[1, 0, 0], s=ac.guess(rigid.slider_position(0.0)))
        self.slider = mb.Body(m=rigid.M_SLIDER, I_11=1e-6, I_22=1e-6, I_33=1e-6)
        self.joint_b = mb.Universal(n_a=[1, 0, 0], n_b=[0, 1, 0])
        self.connect(self.world.frame_b, self.crank_joint.frame_a, self.guide.frame_a)
        self.connect(self.drive.flange, self.crank_joint.axis)
        self.connect(self.crank_joint.frame_b, self.crank.frame_a, self.crank_body.frame_a)
        self.connect(self.crank.frame_b, self.sph.frame_a)
        self.connect(self.sph.frame_b, self.rod.frame_b)
        self.connect(self.guide.frame_b, self.slide.frame_a)
        self.connect(self.slide.frame_b, self.slider.frame_a, self.joint_b.frame_a)
        self.connect(self.rod.frame_c, self.joint_b.frame_b)


def build_model(modes: int = MODES, stiffening: bool = True) -> FlexibleSliderCrank:
    return FlexibleSliderCrank(rod_data(modes), stiffening)


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

    deg = np.degrees(res["crank_joint.phi"])
    u = res["rod.centre.u"]
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.2), sharex=True)
    for ax, c, name in zip(axes, (1, 2), ("y", "z"), strict=True):
        ax.plot(deg, 1e3 * u[:, c], lw=1.2)
        ax.set_title(f"Fig. 4({'ab'[c - 1]}): mid-span deflection along the chord frame's "
                     f"{name}", fontsize=10)
        ax.set_xlabel("crank angle [deg]")
        ax.set_ylabel("deflection [mm]")
        ax.grid(True, alpha=0.3)
    fig.suptitle(f"Spatial slider-crank, flexible rod ({MODES} modes, {NEL} elements), crank "
                 f"at {OMEGA:g} rad/s", fontsize=11)
    fig.tight_layout()
    outdir.mkdir(parents=True, exist_ok=True)
    path = outdir / "flexible_slider_crank.png"
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def main() -> None:
    import time

    t0 = time.perf_counter()
    cm = ac.build(build_model())
    t1 = time.perf_counter()
    res = run(plot=True, model=cm)
    t2 = time.perf_counter()
    th = res["crank_joint.phi"]
    gap = np.linalg.norm(res["joint_b.frame_a.r"] - res["joint_b.frame_b.r"], axis=1)
    u = res["rod.centre.u"]
    print("Spatial slider-crank with a flexible rod")
    print(cm.mechanism)
    print(f"  rod modes {np.round(rod_data().frequencies, 2).tolist()} Hz; build {t1 - t0:.2f}"
          f" s, simulate {TURNS} turns {t2 - t1:.2f} s")
    print(f"  loop gap {gap.max():.1e} m; slider vs rigid closed form "
          f"{np.abs(res['slide.s'] - rigid.slider_position(th)).max():.2e} m")
    print(f"  mid-span deflection peaks: y {1e3 * np.abs(u[:, 1]).max():.3f} mm, "
          f"z {1e3 * np.abs(u[:, 2]).max():.3f} mm")
    print(f"  plot written to {OUTDIR / 'flexible_slider_crank.png'}")


if __name__ == "__main__":
    main()
