"""Deployment of two flexible panels: the chapter's example 5.2 (Richard 2012, Fig. 8).

The physics
-----------
Two square steel panels (2 m x 2 m x 3 mm; E = 2.1e11 Pa, nu = 0.3, rho = 7800 kg/m3),
each meshed with 32 DKT shell triangles (4 x 4 cells, "union-jack" diagonals: the
symmetric mesh the chapter asks for, with a node at the panel centre). Panel 1 is hinged
to a rigid base by a revolute about the world z axis, panel 2 to the far edge of panel 1
by a second revolute about the same direction. Drivers (the chapter's eqs. 71-72) unfold
the structure in T = 14 s with zero velocity and acceleration at both ends, then hold:

    psi1(t) = pi/(2T) (t - T/(2 pi) sin(2 pi t/T)),   0 -> 90 deg
    psi2(t) = pi - pi/T (t - T/(2 pi) sin(2 pi t/T)), 180 -> 0 deg (panel 2 folded back
                                                       onto panel 1 at the start)

Each panel is a :class:`~components.flexible.FlexibleBody` clamped along its own hinge
line (``reference="clamped"`` on the edge nodes: the rigid beam elements the chapter
"pastes" along the hinge, which keep the hinge line straight), with the first four
clamped modes (0.649, 1.614, 3.994, 5.087 Hz; the chapter quotes 0.60, 1.47, 3.71,
5.53 Hz for its own mesh, see ``docs/flexible.md`` section 9). Panel 2's hinge is a
revolute at the middle node of panel 1's far edge (panel 1's attachment frame there), so
panel 1 feels panel 2 as a point load at that node (the chapter's rigid beams along that
edge would spread it; we keep a single joint, an open-loop tree as in the chapter). No
gravity (a deployable space structure) and no damping: the panels are bent by the
drivers' accelerations and ring after the motion stops at 14 s.

The plotted quantity is the transverse deflection of each panel's centre in its own body
frame (``res["panel1.centre.u"][:, 1]``; the panels lie in their body x-z planes).

Reference solution
------------------
The chapter's Fig. 8 (ADAMS/Flex and the authors' code) is not in the text we have. Checks
here: the drive angles follow eqs. 71-72, the deflections vanish with the accelerations
(quasi-static part), and the result converges when the mode count doubles (8 modes).

Run settings: ``T_END``, ``RTOL``, ``ATOL``, ``N_POINTS`` below.
"""

from __future__ import annotations

from pathlib import Path

import casadi as cs
import numpy as np

import acausal as ac
from components import multibody as mb
from components import rotational as rot
from components.flexible import FlexibleBody, FlexibleBodyData, Material, ShellMesh

T_DEPLOY = 14.0  # s
T_END = 20.0
RTOL = 1e-6
ATOL = 1e-9
N_POINTS = 401
SIDE, THICKNESS, MODES = 2.0, 0.003, 4
STEEL = Material(E=2.1e11, nu=0.3, rho=7800.0)
OUTDIR = Path(__file__).resolve().parent / "output"


def panel_data(modes: int = MODES) -> FlexibleBodyData:
    """Panel in its body x-z plane, hinge edge x = 0 clamped (the pasted rigid beams)."""
    mesh = ShellMesh.rectangle(SIDE, SIDE, 4, 4, "union_jack", plane="xz")
    return FlexibleBodyData.from_mesh(mesh, STEEL, thickness=THICKNESS, modes=modes,
                                      reference="clamped", reference_nodes="x0")


def _ramp(t):
    T = T_DEPLOY
    s = (t - T / (2 * np.pi) * cs.sin(2 * np.pi * t / T)) / T  # 0 -> 1
    return cs.if_else(t < T, s, 1.0)


def psi1(t):
    return np.pi / 2 * _ramp(t)


def psi2(t):
    return np.pi - np.pi * _ramp(t)


class PanelDeployment(ac.Model):
    """Base - revolute (psi1) - panel 1 - revolute (psi2) - panel 2."""

    def __init__(self, data: FlexibleBodyData, **kw):
        super().__init__(**kw)
        mesh = data.model.mesh
        hinge_mid = int(mesh.find_node([0.0, 0.0, SIDE / 2]))
        far_mid = int(mesh.find_node([SIDE, 0.0, SIDE / 2]))
        self.world = mb.World(g=[0, 0, 0])
        self.hinge1 = mb.Revolute(use_axis_flange=True, n=[0, 0, 1])
        self.drive1 = rot.Position(phi_ref=psi1)
        self.to_hinge = mb.FixedTranslation(r=[0.0, 0.0, -SIDE / 2])
        self.panel1 = FlexibleBody(data=data, attachments={"frame_b": far_mid})
        self.hinge2 = mb.Revolute(use_axis_flange=True, n=[0, 0, 1])
        self.drive2 = rot.Position(phi_ref=psi2)
        self.panel2 = FlexibleBody(data=data, attachments={"frame_b": hinge_mid})
        self.connect(self.world.frame_b, self.hinge1.frame_a)
        self.connect(self.drive1.flange, self.hinge1.axis)
        self.connect(self.hinge1.frame_b, self.to_hinge.frame_a)
        self.connect(self.to_hinge.frame_b, self.panel1.frame_a)
        self.connect(self.panel1.frame_b, self.hinge2.frame_a)
        self.connect(self.drive2.flange, self.hinge2.axis)
        self.connect(self.hinge2.frame_b, self.panel2.frame_b)


def build_model(modes: int = MODES) -> PanelDeployment:
    return PanelDeployment(panel_data(modes))


def run(plot: bool = True, outdir: str | Path | None = None, model=None,
        t_end: float = T_END, n_points: int = N_POINTS) -> ac.Result:
    res = ac.simulate(model if model is not None else build_model(), t_end, rtol=RTOL,
                      atol=ATOL, n_points=n_points)
    if plot:
        plot_result(res, Path(outdir) if outdir is not None else OUTDIR)
    return res


def plot_result(res: ac.Result, outdir: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from components.flexible.plot import plot_deformed_mechanism

    fig = plt.figure(figsize=(13, 5.5))
    ax = fig.add_subplot(1, 2, 1)
    for name in ("panel1", "panel2"):
        ax.plot(res.t, 1e3 * res[f"{name}.centre.u"][:, 1], lw=1.2,
                label=f"centre of {name[:-1]} {name[-1]}")
    ax.axvline(T_DEPLOY, color="k", lw=0.8, ls=":")
    ax.set_xlabel("time [s]")
    ax.set_ylabel("transverse deflection of the centre [mm]")
    ax.set_title("Fig. 8: deflections of the panel centres (4 modes each)", fontsize=10)
    ax.legend(fontsize=8)
    ax.grid(True, alpha=0.3)
    ax = fig.add_subplot(1, 2, 2, projection="3d")
    data = panel_data()
    plot_deformed_mechanism(res, {"panel1": data, "panel2": data}, [0.0, 7.0, 14.0],
                            scale=20.0, ax=ax, view="3d")
    ax.set_title("deployment, deflections x 20", fontsize=10)
    fig.tight_layout()
    outdir.mkdir(parents=True, exist_ok=True)
    path = outdir / "flexible_panels.png"
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
    print("Deployment of two flexible panels (chapter 5.2)")
    print(f"  modes per panel: {np.round(panel_data().frequencies, 3).tolist()} Hz")
    print(f"  build {t1 - t0:.2f} s; simulate {T_END:g} s of motion in {t2 - t1:.2f} s wall")
    for name in ("panel1", "panel2"):
        w = res[f"{name}.centre.u"][:, 1]
        print(f"  {name}: centre deflection max |w| {1e3 * np.abs(w).max():.3f} mm; "
              f"after 14 s: +-{1e3 * np.abs(w[res.t > T_DEPLOY]).max():.3f} mm")
    print(f"  plot written to {OUTDIR / 'flexible_panels.png'}")


if __name__ == "__main__":
    main()
