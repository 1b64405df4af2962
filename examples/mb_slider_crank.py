"""Spatial slider-crank with a spherical and a universal joint, crank at constant speed.

The physics
-----------
The rigid version of the spatial slider-crank of Richard & Bouazara (2012, section 5.1;
also Jonker 1990, Shi & McPhee with MapleSim): a crank ``OA`` (length ``a = 0.15 m``) turns
about the world z axis at ``Omega = 150 rad/s``; a coupler ``AB`` (``L = 0.30 m``) joins
it by a **spherical** joint at ``A`` and a **universal** joint at ``B`` to a slider that runs
on a guide parallel to the world x axis, offset ``h = 0.10 m`` out of the crank plane
(``z = h``). The slider's mass is half the coupler's. The coupler is rigid here (the paper's
is a flexible beam). Numbers lost in the text extraction of the seed (cross-section,
density, inertias) are chosen: the coupler is a 6 mm steel rod (7870 kg/m3), the crank a
0.1 kg bar; they do not affect the kinematics checked below.

Counting freedoms (Gruebler, 3 moving bodies): 3 x 6 = 18 coordinates; revolute 5,
spherical 3, universal 4 and prismatic 5 constraints = 17; so 1 degree of freedom, taken by
the speed drive. With a spherical joint at *both* ends the coupler could also spin about its
own axis (a second, idle freedom); the universal joint's two perpendicular axes (``n_a``
along the guide on the slider, ``n_b`` across the coupler) remove that spin.

In the mechanism graph the tree takes, in the chapter's order, the crank revolute and the
arms, the spherical joint and the prismatic joint; the universal joint at ``B`` is the cut
joint. Its circuit equation projected on its reaction space gives 4 constraints (3
position, 1 "axes perpendicular") with multipliers ``univ.lambda[k]``. Branch speeds: 1
(crank) + 3 (spherical) + 1 (slider) = 5; 5 - 4 = 1 freedom.

The crank is driven by a 1D rotational ``Speed`` source on the crank revolute's axis
flange; the torque it needs is ``crank_joint.axis.tau``.

Reference solution
------------------
With the crank angle ``theta`` the crank tip is ``A = (a cos theta, a sin theta, 0)``; the
slider point ``B = (s, 0, h)`` lies on the guide; ``|B - A| = L`` gives the closed-form
slider position (the assembly branch with ``B`` ahead of ``A``)::

    s(theta) = a cos theta + sqrt(L^2 - h^2 - a^2 sin^2 theta)
    ds/dt    = -Omega a sin theta (1 + a cos theta / sqrt(L^2 - h^2 - a^2 sin^2 theta))

Loop closure: the universal joint's frames coincide, ``|r_B(coupler) - r_B(slider)| = 0``.
Power balance: the drive's work equals the change of kinetic plus potential energy.

Run settings: ``T_END``, ``RTOL``, ``ATOL``, ``N_POINTS`` below (closed loop: rtol 1e-8).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from scipy.spatial.transform import Rotation

import acausal as ac
from components import multibody as mb
from components import rotational as rot

# run settings
OMEGA = 150.0  # crank speed [rad/s]
T_END = 2 * (2 * np.pi / OMEGA)  # s: two crank revolutions
RTOL = 1e-8  # closed loop: the multiplier block does not converge much tighter
ATOL = 1e-10
N_POINTS = 1441  # 1 degree of crank angle per output step

# geometry and masses
A_CRANK = 0.15  # crank length OA [m]
L_COUPLER = 0.30  # coupler length AB [m]
H_OFFSET = 0.10  # slider guide offset out of the crank plane [m]
RHO, D_ROD = 7870.0, 0.006  # coupler: steel rod, density [kg/m3] and diameter [m] (chosen)
M_COUPLER = RHO * np.pi * D_ROD**2 / 4 * L_COUPLER  # [kg]
M_SLIDER = M_COUPLER / 2  # half the coupler's mass [kg]
M_CRANK = 0.1  # crank mass [kg] (chosen)
G = [0.0, -9.81, 0.0]  # gravity [m/s2], in the crank plane

OUTDIR = Path(__file__).resolve().parent / "output"


def slider_position(theta):
    """Closed-form slider position s(theta) [m] along the guide."""
    return A_CRANK * np.cos(theta) + np.sqrt(L_COUPLER**2 - H_OFFSET**2
                                             - A_CRANK**2 * np.sin(theta) ** 2)


def slider_velocity(theta, omega=OMEGA):
    """Closed-form slider velocity ds/dt [m/s] at constant crank speed."""
    root = np.sqrt(L_COUPLER**2 - H_OFFSET**2 - A_CRANK**2 * np.sin(theta) ** 2)
    return -omega * A_CRANK * np.sin(theta) * (1 + A_CRANK * np.cos(theta) / root)


def coupler_start_quaternion() -> list[float]:
    """Coupler orientation at theta = 0: x along AB, y (the universal's n_b) normal to both
    AB and the guide; as a (w, x, y, z) quaternion."""
    A = np.array([A_CRANK, 0.0, 0.0])
    B = np.array([slider_position(0.0), 0.0, H_OFFSET])
    ex = (B - A) / L_COUPLER
    ey = np.cross([1.0, 0.0, 0.0], ex)
    ey /= np.linalg.norm(ey)
    x, y, z, w = Rotation.from_matrix(np.column_stack([ex, ey, np.cross(ex, ey)])).as_quat()
    return [w, x, y, z]


class SpatialSliderCrank(ac.Model):
    """Crank (revolute, speed drive) - spherical - coupler - universal - slider (prismatic).

    Parameters
    ----------
    joint_b : "universal" (the mechanism) or "spherical" (shows the idle coupler spin)
    """

    def __init__(self, joint_b: str = "universal", **kw):
        super().__init__(**kw)
        a, L, h = A_CRANK, L_COUPLER, H_OFFSET
        self.world = mb.World(g=G)
        # crank: revolute about z at O, driven through its axis flange
        self.crank_joint = mb.Revolute(use_axis_flange=True, n=[0, 0, 1], phi=0.0)
        self.drive = rot.Speed(w_ref=OMEGA)
        self.crank = mb.FixedTranslation(r=[a, 0, 0])
        self.crank_body = mb.Body(m=M_CRANK, r_CM=[a / 2, 0, 0], I_11=1e-6,
                                  I_22=M_CRANK * a**2 / 12, I_33=M_CRANK * a**2 / 12)
        # coupler: spherical joint at A, rigid rod along its local x
        self.sph = mb.Spherical(Q=ac.guess(coupler_start_quaternion()))
        self.coupler = mb.FixedTranslation(r=[L, 0, 0])
        i_t = M_COUPLER * L**2 / 12
        self.coupler_body = mb.Body(m=M_COUPLER, r_CM=[L / 2, 0, 0],
                                    I_11=M_COUPLER * D_ROD**2 / 8, I_22=i_t, I_33=i_t)
        # slider: guide offset h out of the crank plane, prismatic along x
        self.guide = mb.FixedTranslation(r=[0, 0, h])
        self.slide = mb.Prismatic(n=[1, 0, 0], s=ac.guess(slider_position(0.0)))
        self.slider = mb.Body(m=M_SLIDER, I_11=1e-6, I_22=1e-6, I_33=1e-6)
        # joint at B: universal, first axis along the guide (slider), second across the rod
        if joint_b == "universal":
            self.joint_b = mb.Universal(n_a=[1, 0, 0], n_b=[0, 1, 0])
        else:
            self.joint_b = mb.Spherical()

        self.connect(self.world.frame_b, self.crank_joint.frame_a, self.guide.frame_a)
        self.connect(self.drive.flange, self.crank_joint.axis)
        self.connect(self.crank_joint.frame_b, self.crank.frame_a, self.crank_body.frame_a)
        self.connect(self.crank.frame_b, self.sph.frame_a)
        self.connect(self.sph.frame_b, self.coupler.frame_a, self.coupler_body.frame_a)
        self.connect(self.guide.frame_b, self.slide.frame_a)
        self.connect(self.slide.frame_b, self.slider.frame_a, self.joint_b.frame_a)
        self.connect(self.coupler.frame_b, self.joint_b.frame_b)


def build_model(joint_b: str = "universal") -> SpatialSliderCrank:
    return SpatialSliderCrank(joint_b)


def energy(res: ac.Result) -> np.ndarray:
    """Kinetic plus potential energy of the three bodies [J] (from frame kinematics)."""
    g = np.asarray(G)
    i_t = M_COUPLER * L_COUPLER**2 / 12
    bodies = [
        ("crank_body", M_CRANK, [A_CRANK / 2, 0, 0],
         np.diag([1e-6, M_CRANK * A_CRANK**2 / 12, M_CRANK * A_CRANK**2 / 12])),
        ("coupler_body", M_COUPLER, [L_COUPLER / 2, 0, 0],
         np.diag([M_COUPLER * D_ROD**2 / 8, i_t, i_t])),
        ("slider", M_SLIDER, [0, 0, 0], np.diag([1e-6, 1e-6, 1e-6])),
    ]
    E = 0.0
    for name, m, rcm, Ib in bodies:
        R = res[f"{name}.frame_a.R"].reshape(-1, 3, 3).transpose(0, 2, 1)  # column-major
        r, v, w = (res[f"{name}.frame_a.{k}"] for k in ("r", "v", "w"))
        rc = np.einsum("tij,j->ti", R, rcm)
        vc = v + np.cross(w, rc)
        Iw = np.einsum("tij,jk,tlk->til", R, Ib, R)
        E = E + 0.5 * m * np.sum(vc**2, 1) + 0.5 * np.einsum("ti,tij,tj->t", w, Iw, w) \
            - m * (r + rc) @ g
    return E


def drive_work(res: ac.Result) -> np.ndarray:
    """Work done by the drive torque on the crank [J] (cumulative Simpson)."""
    from scipy.integrate import cumulative_simpson

    power = res["crank_joint.axis.tau"] * res["crank_joint.w"]
    return cumulative_simpson(power, x=res.t, initial=0.0)


def run(plot: bool = True, outdir: str | Path | None = None, model=None) -> ac.Result:
    """Simulate two crank revolutions; optionally write ``mb_slider_crank.png``."""
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
    deg = np.degrees(th)
    fig, axes = plt.subplots(2, 2, figsize=(11, 6.5))
    ax = axes[0, 0]
    ax.plot(deg, 1e3 * res["slide.s"], lw=1.8, label="multibody model")
    ax.plot(deg, 1e3 * slider_position(th), "k--", lw=1, label="closed form s(theta)")
    ax.set_ylabel("slider position s [mm]")
    ax.legend(fontsize=8)
    ax = axes[0, 1]
    ax.plot(deg, 1e9 * (res["slide.s"] - slider_position(th)), lw=1, label="s - s(theta)")
    gap = np.linalg.norm(res["joint_b.frame_a.r"] - res["joint_b.frame_b.r"], axis=1)
    ax.plot(deg, 1e9 * gap, lw=1, label="loop closure gap at B")
    ax.set_ylabel("error [nm]")
    ax.legend(fontsize=8)
    ax = axes[1, 0]
    ax.plot(deg, res["slide.v"], lw=1.8, label="multibody model")
    ax.plot(deg, slider_velocity(th), "k--", lw=1, label="closed form")
    ax.set_ylabel("slider velocity [m/s]")
    ax.legend(fontsize=8)
    ax = axes[1, 1]
    ax.plot(deg, res["crank_joint.axis.tau"], lw=1.4)
    ax.set_ylabel("drive torque on the crank [N.m]")
    for ax in axes.flat:
        ax.set_xlabel("crank angle [deg]")
        ax.grid(True, alpha=0.3)
    fig.suptitle(f"Spatial slider-crank: a = {A_CRANK} m, L = {L_COUPLER} m, guide offset "
                 f"{H_OFFSET} m, crank at {OMEGA:g} rad/s", fontsize=11)
    fig.tight_layout()
    outdir.mkdir(parents=True, exist_ok=True)
    path = outdir / "mb_slider_crank.png"
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def main() -> None:
    cm = ac.build(build_model())
    print("Spatial slider-crank (spherical joint at A, universal joint at B)")
    print(cm.mechanism)
    alt = ac.build(build_model("spherical")).mechanism
    print(f"  same mechanism with a spherical joint at B: {alt.dof} degrees of freedom "
          "(the coupler's idle spin)")
    print(f"  states chosen: {', '.join(cm.states)}")
    res = run(plot=True, model=cm)
    th = res["crank_joint.phi"]
    gap = np.linalg.norm(res["joint_b.frame_a.r"] - res["joint_b.frame_b.r"], axis=1)
    W = drive_work(res)
    E = energy(res)
    print(f"  max |s - s(theta)|       = {np.max(np.abs(res['slide.s'] - slider_position(th))):.2e}"
          " m")
    print(f"  max |v - ds/dt(theta)|   = {np.max(np.abs(res['slide.v'] - slider_velocity(th))):.2e}"
          " m/s")
    print(f"  max loop closure gap at B = {np.max(gap):.2e} m")
    print(f"  power balance: max |work - energy change| = {np.max(np.abs(W - (E - E[0]))):.2e} J"
          f" (peak energy change {np.max(E - E[0]):.3f} J)")
    print(f"  plot written to {OUTDIR / 'mb_slider_crank.png'}")


if __name__ == "__main__":
    main()
