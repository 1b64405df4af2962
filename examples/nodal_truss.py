"""Deployable ring truss folded by its diagonal cable (Xiang, Wu & Zhou 2015, section 4.3).

The physics
-----------
The ring truss of an AstroMesh-type reflector (Thomson 1999): an upper and a lower
decagon ring of 1.2 m bars, joined by ten 1.6 m verticals, 30 rigid bars of 9.8 kg/m
(consistent mass matrices: the exact kinetic energy of a rigid rod). A continuous cable
runs diagonally through the ten rectangular bays; here it is replaced, as in the paper,
by ten force pairs of 2.0 N along the current direction of each bay's diagonal. No
gravity. The truss starts deployed and at rest; the cable pulls the bays into
parallelograms until every ring bar stands parallel to the verticals: the truss is then a
bundle ("completely stowed"), each diagonal 1.6 - 1.2 = 0.4 m long.

Reconstruction (the figure is not available as text; every choice here is ours):

* node numbering: upper ring ``node1`` ... ``node10`` at angles 0, 36, ... 324 deg
  (``node1`` on the x axis), lower ring ``node11`` ... ``node20`` below them; the axis of
  the ring is z;
* the cable zigzags: in bay k (between verticals k and k + 1) it runs from the lower node
  of vertical k to the upper node of vertical k + 1 for odd k, from the upper to the lower
  for even k, so that every diagonal shortens as the truss folds (ten bays, even: the
  zigzag closes);
* the paper's ADAMS model has 10 planar joints: one per vertical. Their nodal
  equivalent here: each vertical keeps to the vertical plane through the ring axis
  (``PlanarGuide`` on its lower node) and stays parallel to the axis (``ParallelGuide``).
  With them the constraint matrix has 60 rows, rank 49 at the deployed configuration,
  and ``p = 11`` independent modes, the paper's count (without the guides the bare
  bar truss has 30 modes; with guides on both nodes of each vertical but free tilt,
  12).

Reference values
----------------
The paper's figures: 11 independent modes and complete stowage at t = 8.890 s. The fold
time depends on the mass model the paper does not state: we report the time with the
consistent (exact) and the lumped bar masses. Energy balance: the work of the cable force
pairs equals the kinetic energy (no dissipation), checked by the tests. The run goes on
past the stowage (the ideal pin-jointed bars would then pass through the bundle); the
plots stop there.

Run settings: ``T_END``, ``DT`` below.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

import acausal as ac
from components import nodal as nd

# run settings
T_END = 9.0  # s: covers the paper's stowage time (8.890 s) and ours
DT = 1e-2  # s: the paper's step

# the truss (paper, section 4.3)
N_BAYS = 10
EDGE = 1.2  # m, ring bars
HEIGHT = 1.6  # m, verticals
DENSITY = 9.8  # kg/m
CABLE_FORCE = 2.0  # N
RADIUS = EDGE / (2 * np.sin(np.pi / N_BAYS))  # m, ring radius (1.9416 m)
FOLDED_DIAGONAL = HEIGHT - EDGE  # m, the diagonal of a bay folded flat

OUTDIR = Path(__file__).resolve().parent / "output"


class RingTruss(ac.Model):
    """The ring truss with its cable force pairs and vertical guides (see the module
    documentation); ``mass`` is the bars' mass matrix ("consistent" or "lumped")."""

    def __init__(self, mass: str = "consistent", guides: bool = True):
        super().__init__()
        th = 2 * np.pi * np.arange(N_BAYS) / N_BAYS
        upper = [nd.Node(x=RADIUS * np.cos(a), y=RADIUS * np.sin(a), z=HEIGHT) for a in th]
        lower = [nd.Node(x=RADIUS * np.cos(a), y=RADIUS * np.sin(a), z=0.0) for a in th]
        for k, n_ in enumerate(upper + lower, start=1):
            self.add(f"node{k}", n_)
        members = []
        for k in range(N_BAYS):
            j = (k + 1) % N_BAYS
            members += [(upper[k], upper[j], EDGE), (lower[k], lower[j], EDGE),
                        (lower[k], upper[k], HEIGHT)]
        self.bars = [nd.Bar(m=DENSITY * L, L=L, mass=mass) for _, _, L in members]
        for bar, (a, b, _) in zip(self.bars, members, strict=True):
            self.connect(bar.pin_a, a.pin)
            self.connect(bar.pin_b, b.pin)
        ends = [(lower[k], upper[(k + 1) % N_BAYS]) if k % 2 == 0
                else (upper[k], lower[(k + 1) % N_BAYS]) for k in range(N_BAYS)]
        self.cables = [nd.CableForce(F=CABLE_FORCE) for _ in ends]
        for c, (a, b) in zip(self.cables, ends, strict=True):
            self.connect(c.pin_a, a.pin)
            self.connect(c.pin_b, b.pin)
        if guides:
            self.radial = [nd.PlanarGuide(normal=[-np.sin(a), np.cos(a), 0.0]) for a in th]
            self.upright = [nd.ParallelGuide(direction=[0.0, 0.0, 1.0]) for _ in th]
            for k in range(N_BAYS):
                self.connect(self.radial[k].pin, lower[k].pin)
                self.connect(self.upright[k].pin_a, lower[k].pin)
                self.connect(self.upright[k].pin_b, upper[k].pin)


def build_model(mass: str = "consistent", guides: bool = True) -> RingTruss:
    return RingTruss(mass, guides)


def diagonal(res: ac.Result, bay: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Length and rate of the cable diagonal of a bay (``bay`` from 0)."""
    k = bay + 1
    j = bay % N_BAYS + 2 if bay < N_BAYS - 1 else 1
    a, b = (f"node{k + N_BAYS}", f"node{j}") if bay % 2 == 0 else (f"node{k}",
                                                                    f"node{j + N_BAYS}")
    d = np.column_stack([res[f"{b}.{c}"] - res[f"{a}.{c}"] for c in "xyz"])
    w = np.column_stack([res[f"{b}.v{c}"] - res[f"{a}.v{c}"] for c in "xyz"])
    L = np.linalg.norm(d, axis=1)
    return L, np.einsum("ij,ij->i", d, w) / L


def fold_time(res: ac.Result) -> float:
    """Time at which the diagonals stop shortening (the first zero of their rate, by
    linear interpolation): the truss is then folded flat when the diagonal there is the
    folded length 0.4 m."""
    L, rate = diagonal(res)
    k = int(np.argmax(rate[1:] >= 0)) + 1 if np.any(rate[1:] >= 0) else -1
    if k < 0:
        return float("nan")
    t0, t1, r0, r1 = res.t[k - 1], res.t[k], rate[k - 1], rate[k]
    return float(t0 - r0 * (t1 - t0) / (r1 - r0))


def work_and_energy(res: ac.Result, cm: ac.CompiledModel) -> tuple[np.ndarray, np.ndarray]:
    """Work of the cable force pairs (``F * (L0 - L)`` per cable: the force is constant
    along the cable) and the kinetic energy, at every output time."""
    L0 = np.hypot(EDGE, HEIGHT)
    work = sum(CABLE_FORCE * (L0 - diagonal(res, b)[0]) for b in range(N_BAYS))
    sysn = cm.domain_pass("pin").start_system()
    names = sysn.asm.coordinate_names
    X = np.column_stack([res[n] for n in names])
    V = np.column_stack([res[n.rsplit(".", 1)[0] + ".v" + n[-1]] for n in names])
    kin = np.array([0.5 * v @ sysn.inertia_forces(x, v, t)[1] @ v
                    for x, v, t in zip(X, V, res.t, strict=True)])
    return np.asarray(work), kin


def run(plot: bool = True, dt: float = DT, t_end: float = T_END,
        mass: str = "consistent", mode: str | None = None) -> dict[str, object]:
    """Fold the truss with the null-space integrator; writes ``output/nodal_truss.png``
    (node 1: coordinates, velocities, accelerations, as the paper's Fig. 12; snapshots)."""
    cm = ac.build(build_model(mass))
    res = ac.simulate(cm, t_end, solver="nullspace", dt=dt, mode=mode,
                      raise_on_failure=False)
    out = {"cm": cm, "res": res, "fold_time": fold_time(res)}
    if plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        OUTDIR.mkdir(exist_ok=True)
        fig = plt.figure(figsize=(13, 7))
        tf = out["fold_time"] if np.isfinite(out["fold_time"]) else res.t[-1]
        upto = res.t <= tf + 1e-9  # beyond the fold the ideal bars would pass each other
        for row, (what, unit) in enumerate((("", "m"), ("v", "m/s"), ("a", "m/s2"))):
            ax = fig.add_subplot(3, 2, 2 * row + 1)
            for c in "xyz":
                ax.plot(res.t[upto], res[f"node1.{what}{c}"][upto], label=f"{what or 'r'}_{c}")
            ax.set_ylabel(f"node 1 [{unit}]")
            ax.legend(fontsize=7, loc="best")
            ax.grid(alpha=0.3)
        ax.set_xlabel(f"t [s] (stowed at {tf:.3f} s)")
        ax3 = fig.add_subplot(1, 2, 2, projection="3d")
        for k, tk in enumerate(np.linspace(0.0, tf, 4)):
            i = int(np.argmin(np.abs(res.t - tk)))
            P = {n: np.array([res[f"{n}.{c}"][i] for c in "xyz"])
                 for n in [f"node{q}" for q in range(1, 2 * N_BAYS + 1)]}
            col = plt.cm.viridis(k / 3)
            for q in range(N_BAYS):
                j = (q + 1) % N_BAYS
                for a, b in ((q + 1, j + 1), (q + 11, j + 11), (q + 11, q + 1)):
                    seg = np.array([P[f"node{a}"], P[f"node{b}"]])
                    ax3.plot(*seg.T, color=col, lw=1)
            ax3.plot([], [], color=col, label=f"t = {res.t[i]:.2f} s")
        ax3.legend(fontsize=7)
        ax3.set_title("folding of the ring truss")
        fig.tight_layout()
        fig.savefig(OUTDIR / "nodal_truss.png", dpi=110)
        plt.close(fig)
    return out


if __name__ == "__main__":
    import warnings

    warnings.simplefilter("ignore", ac.RedundantConstraintWarning)
    from acausal.nodal.integrator import mode_table

    r = run()
    res = r["res"]
    print(r["cm"].domain_pass("pin").report)
    L, _ = diagonal(res)
    print(f"status {res.status}; stowed at t = {r['fold_time']:.3f} s (paper: 8.890 s), "
          f"shortest diagonal {L.min():.6f} m (folded flat: {FOLDED_DIAGONAL:.6f} m)")
    print("independent modes over time:", mode_table(res))
    print(f"wall time {res.stats.wall_time:.2f} s for {res.stats.steps} steps")
