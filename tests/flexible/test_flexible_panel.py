"""The chapter's deployable panel (Richard & Bouazara 2012, section 5.2): 2 m x 2 m x 3 mm
steel, clamped along its hinge edge, 32 triangles; plus pictures."""

from __future__ import annotations

import math

import numpy as np
import pytest

from components.flexible import (
    FEModel,
    FlexibleBodyData,
    Material,
    ShellMesh,
    eigenmodes,
    plot_mesh,
    plot_mode,
    plot_modes,
)

STEEL = Material(E=2.1e11, nu=0.3, rho=7800.0)
A, H = 2.0, 0.003
PAPER_HZ = np.array([0.60, 1.47, 3.71, 5.53])  # reported by the paper for its 32-triangle mesh
# Cantilever (C-F-F-F) square plate, nu = 0.3, lambda = omega a^2 sqrt(rho h / D):
# Leissa (1973), 36-term Ritz solution (an upper bound of the exact Kirchhoff values).
LEISSA = np.array([3.4917, 8.5246, 21.429, 27.331])


def _hz_from_lambda(lam: np.ndarray) -> np.ndarray:
    D = STEEL.E * H**3 / (12 * (1 - STEEL.nu**2))
    return lam / (2 * math.pi * A**2) * math.sqrt(D / (STEEL.rho * H))


def panel_frequencies(n: int, lumped: bool = False) -> np.ndarray:
    """First four frequencies [Hz] of the panel with n x n union-jack cells (2 n^2 triangles)."""
    mesh = ShellMesh.rectangle(A, A, n, n, "union_jack", plane="xz")  # hinge edge x = 0
    mod = FEModel(mesh, STEEL, thickness=H)
    return eigenmodes(mod.K, mod.mass(lumped), 4, mod.dofs("x0")).frequencies


def test_panel_32_triangles_and_converged_values() -> None:
    f32 = panel_frequencies(4)  # 4 x 4 cells x 2 = 32 triangles, as in the paper
    f_fine = panel_frequencies(16)
    leissa = _hz_from_lambda(LEISSA)  # 0.6544, 1.5977, 4.0164, 5.1226 Hz
    # converged Kirchhoff values lie below the Ritz upper bounds, within 1 %
    # (measured -0.58, -0.18, -0.71, -0.52 %: Leissa's 36-term series is not fully converged)
    assert np.all(f_fine < leissa)
    assert np.all(np.abs(f_fine / leissa - 1) < 1e-2)
    # the 32-triangle mesh is already within 1.3 % of the refined mesh (DKT, O(h^2));
    # measured -0.30, +1.19, +0.16, -0.17 %
    assert np.all(np.abs(f32 / f_fine - 1) < 1.3e-2)
    # The paper's 0.60, 1.47, 3.71, 5.53 Hz differ from these by -7.5, -8.9, -7.1, +8.7 %
    # (its element, mass model and hinge modelling are not given); reported in
    # docs/flexible.md, not asserted.
    assert PAPER_HZ.shape == f32.shape


def test_panel_body_data_centre_node_and_pictures(tmp_path) -> None:  # noqa: ANN001
    mesh = ShellMesh.rectangle(A, A, 4, 4, "union_jack", plane="xz")
    body = FlexibleBodyData.from_mesh(mesh, STEEL, thickness=H, modes=4, reduction="fixed",
                                      fixed_nodes="x0")
    # transverse (y) motion of the centre in the first mode, as plotted in the paper
    assert abs(body.phi_t("centre")[1, 0]) > 0.1 * np.abs(body.basis[1::6, 0]).max()
    files = [plot_mesh(mesh, tmp_path / "mesh.png", node_sets=["x0", "centre", "corners"]),
             plot_mode(mesh, body.basis[:, 0], tmp_path / "mode1.png", body.frequencies[0]),
             plot_modes(mesh, body.basis, body.frequencies, tmp_path / "modes.png",
                        reference=PAPER_HZ)]
    from components.flexible import BeamMesh, Section

    beam = BeamMesh.line((0, 0, 0), (1, 0, 0), 10)
    bb = FlexibleBodyData.from_mesh(beam, STEEL, section=Section.circle(0.01), modes=3,
                                    reduction="fixed", fixed_nodes="start")
    files.append(plot_modes(beam, bb.basis, bb.frequencies, tmp_path / "beam.png"))
    files.append(plot_mesh(beam, tmp_path / "beam_mesh.png"))
    for f in files:
        data = f.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000


@pytest.mark.slow
def test_panel_refinement_study() -> None:
    """Refinement study 8 -> 64 cells per side (128 .. 8192 triangles).

    The clamped-free corners carry a moment singularity, so the convergence is not
    cleanly O(h^2) (the SS plate test asserts the rate on a smooth problem). We assert
    Cauchy convergence: the last refinement changes the frequencies by < 1e-4
    (measured 0.6e-4, 0.8e-4, 0.5e-4, 0.8e-4) and by less than the first one did.
    """
    f8, f16, f32, f64 = (panel_frequencies(n) for n in (8, 16, 32, 64))
    last = np.abs(f64 / f32 - 1)
    assert np.all(last < 1e-4)
    assert np.all(last < np.abs(f16 / f8 - 1))
    assert np.all(np.abs(f64 / _hz_from_lambda(LEISSA) - 1) < 1e-2)
