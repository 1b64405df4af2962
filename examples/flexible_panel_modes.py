"""Modes of the deployable panel and of a cantilever beam: a frequency table and pictures.

Panel (Richard & Bouazara 2012, section 5.2): 2 m x 2 m x 3 mm steel (E = 210 GPa,
nu = 0.3, rho = 7800 kg/m^3), clamped along its hinge edge, 32 triangles
(4 x 4 cells, "union-jack" diagonals, symmetric about both mid-lines).

Reference solution: the first four frequencies are printed next to the paper's
(0.60, 1.47, 3.71, 5.53 Hz), the same mesh with lumped masses, a 2048-triangle mesh and
Leissa's (1973) Ritz values for the clamped-free-free-free square plate (an upper bound:
measured 0.6487/1.614/3.994/5.087 Hz on 32 triangles, 0.6506/1.595/3.989/5.097 Hz on
2048, Leissa 0.6544/1.598/4.016/5.123 Hz). The script asserts nothing;
``tests/flexible/test_flexible_panel.py`` checks the frequencies and
``tests/test_examples.py`` that the table is printed.

Run ``python examples/flexible_panel_modes.py`` (about a minute of CPU: the 2048-triangle
eigenproblem); pictures go to examples/output/ (panel_mesh, panel_modes,
panel_modes_fine, beam_mesh, beam_modes).
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from components.flexible import (  # noqa: E402
    BeamMesh,
    FEModel,
    FlexibleBodyData,
    Material,
    Section,
    ShellMesh,
    eigenmodes,
    plot_mesh,
    plot_modes,
)

OUT = ROOT / "examples" / "output"
STEEL = Material(E=2.1e11, nu=0.3, rho=7800.0, name="steel")
PAPER = [0.60, 1.47, 3.71, 5.53]
LEISSA = np.array([3.4917, 8.5246, 21.429, 27.331])  # C-F-F-F square, nu = 0.3 (Ritz)


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    mesh = ShellMesh.rectangle(2.0, 2.0, 4, 4, "union_jack", plane="xz")
    mesh.add_node_set("hinge", mesh.node_set("x0"))
    body = FlexibleBodyData.from_mesh(mesh, STEEL, thickness=0.003, modes=6,
                                      reference="clamped", reference_nodes="hinge")
    plot_mesh(mesh, OUT / "panel_mesh.png", node_sets=["hinge", "centre", "corners"],
              title="Panel: 32 triangles (union jack), hinge edge clamped")
    plot_modes(mesh, body.basis, body.frequencies, OUT / "panel_modes.png", n=6,
               reference=PAPER, title="Panel modes, 32 triangles (paper values in brackets)")
    fine = ShellMesh.rectangle(2.0, 2.0, 32, 32, "union_jack", plane="xz")
    mod = FEModel(fine, STEEL, thickness=0.003)
    md = eigenmodes(mod.K, mod.M, 6, mod.dofs("x0"))
    plot_modes(fine, md.shapes, md.frequencies, OUT / "panel_modes_fine.png", n=6,
               title="Panel modes, 2048 triangles")
    coarse = FEModel(mesh, STEEL, thickness=0.003)
    lumped = eigenmodes(coarse.K, coarse.M_lumped, 4, coarse.dofs("x0")).frequencies
    D = STEEL.E * 0.003**3 / (12 * (1 - STEEL.nu**2))
    leissa = LEISSA / (2 * math.pi * 4.0) * math.sqrt(D / (STEEL.rho * 0.003))
    print("mode | paper [Hz] | 32 tri consistent | 32 tri lumped | 2048 tri | Leissa 1973")
    for i in range(4):
        print(f"{i + 1:4d} | {PAPER[i]:10.2f} | {body.frequencies[i]:17.4f} | {lumped[i]:13.4f} |"
              f" {md.frequencies[i]:8.4f} | {leissa[i]:11.4f}")

    beam = BeamMesh.line((0, 0, 0), (1.0, 0, 0), 20)
    bb = FlexibleBodyData.from_mesh(beam, STEEL, section=Section.rectangle(0.02, 0.01), modes=6,
                                    reference="clamped", reference_nodes="start")
    plot_mesh(beam, OUT / "beam_mesh.png")
    plot_modes(beam, bb.basis, bb.frequencies, OUT / "beam_modes.png", n=6,
               title="Cantilever Timoshenko beam, 20 elements")
    print("pictures written to", OUT)


if __name__ == "__main__":
    main()
