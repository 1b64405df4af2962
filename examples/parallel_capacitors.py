"""Two capacitors in parallel, charged through one resistor (a classical index-2 DAE).

The physics
-----------
A constant voltage ``V`` charges two capacitors ``C1`` and ``C2`` connected in parallel
through a resistor ``R``. Written as in a textbook (or as Modelica flattens it), each
capacitor brings its own differential equation ``i_k = C_k dv_k/dt`` and the parallel
connection adds the algebraic constraint ``v_1 = v_2`` between two would-be states: the
DAE has differential index 2, and a naive integrator cannot start it. The user writes it
as it is drawn and nothing else.

What the library does
---------------------
In the linear graph the two capacitors are two edges between the same pair of vertices.
Only one of them fits in the normal tree; the other is a cotree chord whose voltage is, by
the circuit postulate, *exactly* the tree capacitor's voltage. Alias elimination then
merges ``v_1``, ``v_2`` and their derivatives, so the constraint disappears before index
reduction is needed: the structure report shows one state and no differentiated equation.
Both capacitors are given a fixed start value; they agree (0 V), so the two conditions are
one (two different values would be reported as conflicting).

Reference solution
------------------
The pair behaves as one capacitor ``C1 + C2``::

    v(t) = V (1 - exp(-t / (R (C1 + C2)))),      i_1 / i_2 = C1 / C2

Run settings: ``T_END``, ``RTOL``, ``ATOL``, ``N_POINTS`` below.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

import acausal as ac
from components import electrical as el

# run settings
T_END = 1.5  # s (5 time constants)
RTOL = 1e-8
ATOL = 1e-10
N_POINTS = 301

# parameters
V = 10.0  # source voltage [V]
R = 100.0  # resistance [Ohm]
C1 = 1e-3  # first capacitance [F]
C2 = 2e-3  # second capacitance [F]

OUTDIR = Path(__file__).resolve().parent / "output"


class ParallelCapacitors(ac.Model):
    """Source -> R -> (C1 || C2) -> ground."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.source = el.ConstantVoltage(V=V)
        self.resistor = el.Resistor(R=R)
        self.c1 = el.Capacitor(C=C1, v=0.0)
        self.c2 = el.Capacitor(C=C2, v=0.0)
        self.ground = el.Ground()
        self.connect(self.source.p, self.resistor.p)
        self.connect(self.resistor.n, self.c1.p, self.c2.p)
        self.connect(self.c1.n, self.c2.n, self.source.n, self.ground.p)


def build_model() -> ParallelCapacitors:
    return ParallelCapacitors()


def analytic(t: np.ndarray) -> np.ndarray:
    """Voltage across the pair."""
    return V * (1 - np.exp(-t / (R * (C1 + C2))))


def run(plot: bool = True, outdir: str | Path | None = None,
        model: ac.Component | ac.CompiledModel | None = None) -> ac.Result:
    """Simulate the charging; optionally write ``parallel_capacitors.png``."""
    res = ac.simulate(model if model is not None else build_model(), T_END, rtol=RTOL,
                      atol=ATOL, n_points=N_POINTS)
    if plot:
        _plot(res, Path(outdir) if outdir is not None else OUTDIR)
    return res


def _plot(res: ac.Result, outdir: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 3.6))
    a1.plot(res.t, res["c1.v"], lw=3, label="c1.v")
    a1.plot(res.t, res["c2.v"], lw=1.5, label="c2.v")
    a1.plot(res.t, analytic(res.t), "k--", lw=1, label="analytic, C = C1 + C2")
    a1.set_ylabel("voltage [V]")
    a1.set_title("capacitor voltages")
    a2.plot(res.t, res["c1.i"] * 1e3, label="c1.i")
    a2.plot(res.t, res["c2.i"] * 1e3, label="c2.i")
    a2.set_ylabel("current [mA]")
    a2.set_title(f"currents (ratio C1/C2 = {C1 / C2:g})")
    for a in (a1, a2):
        a.set_xlabel("time [s]")
        a.grid(True, alpha=0.3)
        a.legend(fontsize=8)
    fig.tight_layout()
    outdir.mkdir(parents=True, exist_ok=True)
    path = outdir / "parallel_capacitors.png"
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return path


def main() -> None:
    cm = ac.build(build_model())
    print(cm.report)
    res = run(plot=True, model=cm)
    k = len(res.t) // 3
    print("Parallel capacitors, checks")
    print(f"  max |v - V(1 - exp(-t/(R(C1+C2))))| = "
          f"{np.max(np.abs(res['c1.v'] - analytic(res.t))):.2e} V, "
          f"max |c1.v - c2.v| = {np.max(np.abs(res['c1.v'] - res['c2.v'])):.1e} V")
    ratio = res["c1.i"][k] / res["c2.i"][k]
    print(f"  current ratio c1.i / c2.i at t = {res.t[k]:.2f} s: {ratio:.6f} "
          f"(C1/C2 = {C1 / C2:.6f})")
    print(f"  plot written to {OUTDIR / 'parallel_capacitors.png'}")


if __name__ == "__main__":
    main()
