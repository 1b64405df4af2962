"""Performance of the flexible-body preprocessor (components.flexible).

Run ``python benchmarks/bench_flexible.py [--quick]``. Prints, for shell (DKT +
Allman) and beam (Timoshenko) meshes of about 1 000, 10 000 and 100 000
elements: the assembly time of K and of M (vectorised element batches + CSR
scatter; the first K call includes building the sparsity pattern), the time of
the first 10 eigenmodes of the clamped structure (SuperLU + ARPACK shift-invert),
and the time of the modal FFRF invariants of those 10 modes.

Targets from issue 5: 10 000 shell elements assembled in < 1 s and their first
10 modes in < 5 s on the 2-core reference machine.

``--stiffening`` also times the whole preprocessor with the geometric stiffening tables
(``FlexibleBodyData.from_mesh(..., stiffening=True)``, 18 unit-load cases) on the
10 082-triangle panel, clamped at its hinge and free.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from components.flexible import (  # noqa: E402
    BeamMesh,
    FEModel,
    FlexibleBodyData,
    Material,
    Section,
    ShellMesh,
    compute_invariants,
    eigenmodes,
)

STEEL = Material(E=2.1e11, nu=0.3, rho=7800.0)


def _timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def bench_shell(n_cells: int, modes: bool = True) -> dict[str, Any]:
    mesh = ShellMesh.rectangle(2.0, 2.0, n_cells, n_cells, "union_jack", plane="xz")
    mod = FEModel(mesh, STEEL, thickness=0.003)
    K, tk = _timed(lambda: mod.K)
    M, tm = _timed(lambda: mod.M)
    row = {"kind": "shell DKT+Allman", "elements": mesh.n_elements, "dofs": mod.n_dofs,
           "K [s]": tk, "M [s]": tm, "10 modes [s]": math.nan, "invariants [s]": math.nan,
           "f1 [Hz]": math.nan}
    if modes:
        md, te = _timed(lambda: eigenmodes(K, M, 10, mod.dofs("x0")))
        _, ti = _timed(lambda: compute_invariants(mod.mass_points, mod.element_dofs,
                                                  mod.n_dofs, basis=md.shapes))
        row.update({"10 modes [s]": te, "invariants [s]": ti, "f1 [Hz]": md.frequencies[0]})
    return row


def bench_beam(n_el: int) -> dict[str, Any]:
    mesh = BeamMesh.line((0, 0, 0), (10.0, 0, 0), n_el)
    mod = FEModel(mesh, STEEL, section=Section.tube(0.05, 0.045))
    K, tk = _timed(lambda: mod.K)
    M, tm = _timed(lambda: mod.M)
    md, te = _timed(lambda: eigenmodes(K, M, 10, mod.dofs("start")))
    _, ti = _timed(lambda: compute_invariants(mod.mass_points, mod.element_dofs, mod.n_dofs,
                                              basis=md.shapes))
    return {"kind": "beam Timoshenko", "elements": mesh.n_elements, "dofs": mod.n_dofs,
            "K [s]": tk, "M [s]": tm, "10 modes [s]": te, "invariants [s]": ti,
            "f1 [Hz]": md.frequencies[0]}


def bench_stiffening() -> list[str]:
    """Preprocessor time with and without the unit-load geometric stiffening tables."""
    mesh = ShellMesh.rectangle(2.0, 2.0, 71, 71, "union_jack", plane="xz")
    lines = []
    for ref, nodes in (("clamped", "x0"), ("free", None)):
        times = []
        for st in (False, True):
            t0 = time.perf_counter()
            FlexibleBodyData.from_mesh(mesh, STEEL, thickness=0.003, modes=10, reference=ref,
                                       reference_nodes=nodes, attachment_nodes=["corner_11"],
                                       stiffening=st, cache=False)
            times.append(time.perf_counter() - t0)
        lines.append(f"from_mesh, 10 082 triangles, reference={ref!r}, 10 modes: "
                     f"{times[0]:.2f} s, with stiffening tables (18 cases) {times[1]:.2f} s")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="skip the 100 000-element cases")
    ap.add_argument("--no-big-modes", action="store_true",
                    help="assemble but do not solve modes for the 100 000-element shell")
    ap.add_argument("--stiffening", action="store_true",
                    help="also time from_mesh with the geometric stiffening tables")
    args = ap.parse_args()
    rows = [bench_shell(22), bench_shell(71)]
    if not args.quick:
        rows.append(bench_shell(224, modes=not args.no_big_modes))
    rows += [bench_beam(1000), bench_beam(10000)]
    if not args.quick:
        rows.append(bench_beam(100000))
    cols = ["kind", "elements", "dofs", "K [s]", "M [s]", "10 modes [s]", "invariants [s]",
            "f1 [Hz]"]
    print(" | ".join(f"{c:>16}" if i == 0 else f"{c:>14}" for i, c in enumerate(cols)))
    print("-" * (17 + 17 * (len(cols) - 1)))
    for r in rows:
        cells = []
        for i, c in enumerate(cols):
            v = r[c]
            if i == 0:
                cells.append(f"{v:>16}")
            elif isinstance(v, int):
                cells.append(f"{v:>14d}")
            elif c == "f1 [Hz]":
                cells.append(f"{v:>14.5g}")
            else:
                cells.append(f"{v:>14.3f}")
        print(" | ".join(cells))
    ten = next(r for r in rows if r["kind"].startswith("shell") and r["elements"] > 5000)
    print(f"\ntargets (10 082 shell elements): assembly K+M {ten['K [s]'] + ten['M [s]']:.2f} s "
          f"(< 1 s), 10 modes {ten['10 modes [s]']:.2f} s (< 5 s)")
    if args.stiffening:
        print("\n".join(bench_stiffening()))


if __name__ == "__main__":
    main()
