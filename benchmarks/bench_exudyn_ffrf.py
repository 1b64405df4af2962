"""Flexible slider-crank: acausal against Exudyn's ``ObjectFFRFreducedOrder``.

    python benchmarks/bench_exudyn_ffrf.py [--plot] [--steps N]

(``--plot`` writes ``docs/img/flexible_exudyn.png``.)

An independent implementation of the same floating-frame-of-reference model: the spatial
slider-crank of ``examples/flexible_slider_crank.py`` (crank 0.15 m at 150 rad/s, 6 mm
steel rod of 0.30 m, 20 Timoshenko elements, pinned chord frame, the first two modes,
guide offset 0.10 m, spherical joint at A, universal joint at B, slider of half the rod's
mass, no gravity, no damping), integrated over two crank turns by

* acausal: the example model, with geometric stiffening **off** (Exudyn's reduced-order
  FFRF body has no geometric stiffness), IDAS at the example's tolerances;
* Exudyn 1.13: ``ObjectFFRFreducedOrder`` (C++ FFRF terms, Euler-parameter reference
  frame) in its own joints (``ObjectJointSpherical`` at A, ``ObjectJointGeneric`` as the
  universal joint at B, the prismatic guide and the crank drive with a prescribed
  rotation offset), generalized-alpha (index 3) with a fixed step.

What Exudyn is given, all from our preprocessor (``components.flexible``):

* **the mode shapes** (the same two pinned-pinned modes, mass-normalised) and **the modal
  stiffness matrix** ``K_ff``;
* **the mass distribution**: Exudyn's reduced-order body is *nodal-based* with three
  translational DOFs per mesh node (built for solid meshes), so a beam's 6-DOF mass matrix
  cannot be passed to it as it is. It receives instead the preprocessor's mass points
  (4 Gauss points per element; the quadrature that defines our consistent mass matrix),
  each split into a point on the axis and four points at ``+-a`` along the principal axes
  of the section's second moment ``P_g`` (``a^2 = 4 lambda / w``), so that mass, first and
  second moments of every point are those of our model, as a diagonal "mesh" mass matrix
  with the points' mode displacements ``T_g q + (R_g q) x d``. Exudyn computes its own
  FFRF invariants (``Psi^T M Psi``, ``Psi~^T M Psi``, the inertia tensor, ...) from them;
  its ``Psi^T M Psi`` reproduces our ``M_ff`` to round-off (printed);
* **the nodes**: the FE nodes A (spherical joint), the centre (output) and B with four
  massless points 3 mm (the rod radius) around B, from which Exudyn's
  ``MarkerSuperElementRigid`` computes the node's rotation for the universal joint (our
  attachment frame uses the node rotation of the beam element).

The compared quantity is the rod's mid-span deflection in its chord frame (the body frame:
``res["rod.centre.u"]`` and Exudyn's ``SensorSuperElement`` ``DisplacementLocal`` of the
centre node), both bending components y and z, on the example's output grid (2 degrees of
crank angle). The difference is reported relative to the peak of each component.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))
sys.path.insert(0, str(ROOT))

import acausal as ac  # noqa: E402
from components.flexible import FlexibleBodyData  # noqa: E402

# fixed generalized-alpha steps over two turns (10.5 us): the difference to acausal is
# 0.126 / 0.052 / 0.040 % of the y peak with 4 000 / 8 000 / 20 000 steps (see --steps)
EXUDYN_STEPS = 8_000


@dataclass
class Curves:
    """Mid-span deflection (body frame) on a time grid, and the wall times [s]."""

    t: np.ndarray
    u: np.ndarray  # (n, 3)
    build: float
    simulate: float
    info: dict[str, float]


# --------------------------------------------------------------------------- the model data
@dataclass
class PointCloud:
    """The body as Exudyn's nodal FFRF body sees it: points, masses, mode displacements."""

    positions: np.ndarray  # (N, 3) body frame
    masses: np.ndarray  # (N,)
    psi: np.ndarray  # (3N, k) displacement of every point per modal coordinate
    node_a: int  # index of FE node A
    centre: int  # FE centre node
    group_b: list[int]  # FE node B and its four massless satellites


def point_cloud(data: FlexibleBodyData, satellite: float = 3e-3) -> PointCloud:
    """Mass points of the preprocessor split into point masses with the same moments."""
    model = data.model
    mp = model.mass_points
    basis = np.asarray(data.basis)
    E, q = mp.weight.shape
    pos, mass, shapes = [], [], []
    for e in range(E):
        be = basis[model.element_dofs[e]]  # (12, k)
        for g in range(q):
            w, x = float(mp.weight[e, g]), mp.position[e, g]
            Tq, Rq = mp.T[e, g] @ be, mp.R[e, g] @ be  # (3, k) translation, rotation
            lam, vec = np.linalg.eigh(mp.second_moment[e, g])
            dirs = [(lam_i, vec[:, i]) for i, lam_i in enumerate(lam) if lam_i > 1e-14 * w]
            n_s = 2 * len(dirs)
            # the axis point keeps half the mass; +-a v_i carry w / (2 n_s) each:
            # sum m d d^T = sum_i 2 (w / 2 n_s) a_i^2 v_i v_i^T = P  <=>  a_i^2 = n_s lam_i / w
            pos.append(x)
            mass.append(w / 2 if dirs else w)
            shapes.append(Tq)
            for lam_i, v in dirs:
                a = np.sqrt(n_s * lam_i / w)
                for d in (a * v, -a * v):
                    pos.append(x + d)
                    mass.append(w / (2 * n_s))
                    shapes.append(Tq + np.cross(Rq.T, d).T)

    def fe_node(n: int, offset: np.ndarray | None = None) -> int:
        d = np.zeros(3) if offset is None else offset
        pos.append(model.mesh.nodes[n] + d)
        mass.append(0.0)
        shapes.append(data.phi_t(n) + np.cross(data.phi_r(n).T, d).T)
        return len(pos) - 1

    mesh = model.mesh
    ia = fe_node(int(mesh.nodes_of("start")[0]))
    ic = fe_node(int(mesh.nodes_of("centre")[0]))
    nb = int(mesh.nodes_of("end")[0])
    # the node's rotation is exact for any offset (the points move rigidly with the section)
    group = [fe_node(nb)] + [fe_node(nb, s * satellite * e) for e in (np.eye(3)[1], np.eye(3)[2])
                             for s in (1.0, -1.0)]
    psi = np.concatenate([s[None] for s in shapes]).reshape(-1, basis.shape[1])
    return PointCloud(np.array(pos), np.array(mass), psi, ia, ic, group)


# --------------------------------------------------------------------------- acausal
def run_acausal(turns: float = 2.0, stiffening: bool = False) -> Curves:
    import flexible_slider_crank as ex

    t0 = time.perf_counter()
    cm = ac.build(ex.build_model(stiffening=stiffening))
    t1 = time.perf_counter()
    t_end = turns * 2 * np.pi / ex.OMEGA
    res = ac.simulate(cm, t_end, rtol=ex.RTOL, atol=ex.ATOL,
                      n_points=int(round(turns * 180)) + 1)
    t2 = time.perf_counter()
    steps = sum(s.steps for s in res.stats.segments)
    return Curves(res.t, res["rod.centre.u"], t1 - t0, t2 - t1, {"steps": steps})


# --------------------------------------------------------------------------- Exudyn
def start_state() -> dict[str, np.ndarray]:
    """Rigid start of the mechanism at theta = 0 (the example's: crank at full speed, rod
    undeformed and at rest relative to the rigid motion) from the closed-form geometry and
    the velocity constraints (spherical at A, slider along x, universal at B)."""
    import mb_slider_crank as rigid

    a, h, w = rigid.A_CRANK, rigid.H_OFFSET, rigid.OMEGA
    A = np.array([a, 0.0, 0.0])
    B = np.array([rigid.slider_position(0.0), 0.0, h])
    ex = (B - A) / rigid.L_COUPLER
    ey = np.cross([1.0, 0.0, 0.0], ex)
    ey /= np.linalg.norm(ey)
    R = np.column_stack([ex, ey, np.cross(ex, ey)])  # = coupler_start_quaternion()
    vA = np.array([0.0, a * w, 0.0])
    # unknowns (omega_rod, s_dot): omega x (B - A) - s_dot e_x = -v_A;
    # universal: d/dt (e_x . e_y,rod) = omega . (e_y,rod x e_x) = 0
    d = B - A
    J = np.zeros((4, 4))
    J[:3, :3] = -np.array([[0, -d[2], d[1]], [d[2], 0, -d[0]], [-d[1], d[0], 0]])
    J[0, 3] = -1.0
    J[3, :3] = np.cross(ey, [1.0, 0.0, 0.0])
    sol = np.linalg.solve(J, np.concatenate([-vA, [0.0]]))
    return {"A": A, "B": B, "R": R, "vA": vA, "omega": sol[:3], "s_dot": np.array(sol[3])}


def run_exudyn(data: FlexibleBodyData, n_steps: int = EXUDYN_STEPS,
               turns: float = 2.0) -> Curves:
    import exudyn as exu
    import exudyn.itemInterface as eii
    import mb_slider_crank as rigid
    import scipy.sparse as sp
    from exudyn.FEM import FEMinterface, ObjectFFRFreducedOrderInterface

    t0 = time.perf_counter()
    cloud = point_cloud(data)
    fem = FEMinterface()
    fem.nodes = {"Position": cloud.positions}
    fem.massMatrix = sp.csr_matrix(sp.diags(np.repeat(cloud.masses, 3)))
    # Exudyn projects the mesh stiffness on the modes; the FE stiffness of the beam lives
    # on 6-DOF nodes, so the modal stiffness is given directly (the same K_ff as ours)
    fem.stiffnessMatrix = sp.csr_matrix((3 * len(cloud.masses),) * 2)
    fem.modeBasis = {"matrix": cloud.psi, "type": "NormalModes"}
    cms = ObjectFFRFreducedOrderInterface(fem)
    cms.stiffnessMatrixReduced = np.asarray(data.K_ff, dtype=float)
    mff_err = float(np.abs(cms.massMatrixReduced - np.asarray(data.M_ff)).max())

    st = start_state()
    a, w = rigid.A_CRANK, rigid.OMEGA
    SC = exu.SystemContainer()
    mbs = SC.AddSystem()
    ground = mbs.AddObject(eii.ObjectGround())
    rod = cms.AddObjectFFRFreducedOrder(mbs, positionRef=st["A"], initialVelocity=st["vA"],
                                        rotationMatrixRef=st["R"],
                                        initialAngularVelocity=st["omega"])
    o_rod = rod["oFFRFreducedOrder"]

    def rigid_body(mass, inertia6, com, pos, vel, omega):
        node = mbs.AddNode(eii.NodeRigidBodyEP(
            referenceCoordinates=list(pos) + [1.0, 0.0, 0.0, 0.0],
            initialVelocities=list(vel) + list(0.5 * np.array([0.0, *omega]))))
        return mbs.AddObject(eii.ObjectRigidBody(mass=mass, inertia=inertia6, centerOfMass=com,
                                                 nodeNumber=node))

    # crank: rigid body about O, the drive prescribes its rotation about z (the crank's
    # inertia does not enter the rod's motion)
    mc = rigid.M_CRANK
    crank = rigid_body(mc, [1e-6, mc * a**2 / 3, mc * a**2 / 3, 0, 0, 0], [a / 2, 0, 0],
                       [0, 0, 0], [0, 0, 0], [0, 0, w])
    # slider: guide along x at z = h; a rigid body so that the universal joint sees its frame
    slider = rigid_body(rigid.M_SLIDER, [1e-6] * 3 + [0] * 3, [0, 0, 0], st["B"],
                        [float(st["s_dot"]), 0, 0], [0, 0, 0])

    def ht(rotation=None, translation=(0.0, 0.0, 0.0)):
        R = np.eye(3) if rotation is None else np.asarray(rotation, float)
        return exu.HT(rotation=R, translation=list(translation))

    m_g0 = mbs.AddMarker(eii.MarkerBodyRigid(bodyNumber=ground, localPosition=[0, 0, 0]))
    m_c0 = mbs.AddMarker(eii.MarkerBodyRigid(bodyNumber=crank, localPosition=[0, 0, 0]))
    mbs.AddObject(eii.ObjectJointGeneric(
        markerNumbers=[m_g0, m_c0], constrainedAxes=[1] * 6,
        offsetUserFunction=lambda mbs, t, i, p: [0, 0, 0, 0, 0, w * t],
        offsetUserFunction_t=lambda mbs, t, i, p: [0, 0, 0, 0, 0, w]))
    m_tip = mbs.AddMarker(eii.MarkerBodyPosition(bodyNumber=crank, localPosition=[a, 0, 0]))
    m_a = mbs.AddMarker(eii.MarkerSuperElementPosition(
        bodyNumber=o_rod, meshNodeNumbers=[cloud.node_a], weightingFactors=[1.0]))
    mbs.AddObject(eii.ObjectJointSpherical(markerNumbers=[m_tip, m_a]))
    m_guide = mbs.AddMarker(eii.MarkerBodyRigid(bodyNumber=ground,
                                                localPosition=[0, 0, rigid.H_OFFSET]))
    m_s = mbs.AddMarker(eii.MarkerBodyRigid(bodyNumber=slider, localPosition=[0, 0, 0]))
    mbs.AddObject(eii.ObjectJointGeneric(markerNumbers=[m_guide, m_s],
                                         constrainedAxes=[0, 1, 1, 1, 1, 1]))
    # universal joint: Exudyn's generic joint with one locked rotation keeps t_y0 . t_z1 = 0;
    # t_y0 = the slider's x (n_a), t_z1 = the rod's y at node B (n_b)
    m_su = mbs.AddMarker(eii.MarkerBodyRigid(
        bodyNumber=slider, localHT=ht([[0, 1, 0], [1, 0, 0], [0, 0, -1]])))
    m_b = mbs.AddMarker(eii.MarkerSuperElementRigid(
        bodyNumber=o_rod, meshNodeNumbers=cloud.group_b,
        weightingFactors=[1.0 / len(cloud.group_b)] * len(cloud.group_b),
        localHT=ht([[0, 1, 0], [0, 0, 1], [1, 0, 0]])))
    mbs.AddObject(eii.ObjectJointGeneric(markerNumbers=[m_su, m_b],
                                         constrainedAxes=[1, 1, 1, 1, 0, 0]))
    sensor = mbs.AddSensor(eii.SensorSuperElement(
        bodyNumber=o_rod, meshNodeNumber=cloud.centre, storeInternal=True, writeToFile=False,
        outputVariableType=exu.OutputVariableType.DisplacementLocal))
    mbs.Assemble()

    t_end = turns * 2 * np.pi / w
    s = exu.SimulationSettings()
    s.timeIntegration.numberOfSteps = n_steps
    s.timeIntegration.endTime = t_end
    s.timeIntegration.verboseMode = 0
    s.timeIntegration.generalizedAlpha.spectralRadius = 1.0  # no numerical damping
    s.timeIntegration.newton.relativeTolerance = 1e-10
    s.timeIntegration.newton.absoluteTolerance = 1e-12
    s.solution.file.write = False
    s.solution.sensors.writePeriod = t_end / n_steps
    s.show.statistics = False
    s.show.computationTime = False
    t1 = time.perf_counter()
    mbs.SolveDynamic(s)
    t2 = time.perf_counter()
    data_s = mbs.GetSensorStoredData(sensor)
    return Curves(data_s[:, 0], data_s[:, 1:4], t1 - t0, t2 - t1,
                  {"M_ff error": mff_err, "points": float(len(cloud.masses))})


# --------------------------------------------------------------------------- comparison
def compare(ours: Curves, theirs: Curves) -> dict[str, float]:
    """Peaks of both y and z curves and their largest difference relative to the peak."""
    out: dict[str, float] = {}
    for c, name in ((1, "y"), (2, "z")):
        u_ex = np.interp(ours.t, theirs.t, theirs.u[:, c])
        peak = float(np.abs(ours.u[:, c]).max())
        out[f"peak_{name}"] = peak
        out[f"peak_{name}_exudyn"] = float(np.abs(u_ex).max())  # on the same grid
        out[f"diff_{name}"] = float(np.abs(ours.u[:, c] - u_ex).max() / peak)
    return out


def plot(ours: Curves, theirs: Curves, path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import mb_slider_crank as rigid

    fig, axes = plt.subplots(2, 2, figsize=(12, 6.4), sharex=True,
                             gridspec_kw={"height_ratios": [2.2, 1]})
    deg = np.degrees(rigid.OMEGA * ours.t)
    for k, (c, name) in enumerate(((1, "y"), (2, "z"))):
        ax, ad = axes[0, k], axes[1, k]
        ax.plot(np.degrees(rigid.OMEGA * theirs.t), 1e3 * theirs.u[:, c], lw=2.6,
                color="0.75", label="Exudyn ObjectFFRFreducedOrder")
        ax.plot(deg, 1e3 * ours.u[:, c], lw=1.1, color="C0", label="acausal FlexibleBody")
        ax.set_title(f"rod mid-span deflection, chord-frame {name}", fontsize=10)
        ax.set_ylabel("deflection [mm]")
        ax.legend(fontsize=8)
        diff = ours.u[:, c] - np.interp(ours.t, theirs.t, theirs.u[:, c])
        ad.plot(deg, 1e6 * diff, lw=1.0, color="C3")
        ad.set_ylabel("acausal - Exudyn [um]")
        ad.set_xlabel("crank angle [deg]")
        for a in (ax, ad):
            a.grid(True, alpha=0.3)
    fig.suptitle("Flexible spatial slider-crank (2 modes, stiffening off): acausal vs Exudyn",
                 fontsize=11)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def main() -> None:
    import flexible_slider_crank as ex

    steps = EXUDYN_STEPS
    if "--steps" in sys.argv:
        steps = int(sys.argv[sys.argv.index("--steps") + 1])
    ours = run_acausal()
    theirs = run_exudyn(ex.rod_data(), steps)
    r = compare(ours, theirs)
    print("Flexible slider-crank, two crank turns, mid-span deflection (chord frame)")
    print(f"  Exudyn: {int(theirs.info['points'])} mesh points; its Psi^T M Psi - our M_ff:"
          f" {theirs.info['M_ff error']:.1e}")
    for name in ("y", "z"):
        print(f"  {name}: peak acausal {1e3 * r[f'peak_{name}']:.4f} mm, Exudyn "
              f"{1e3 * r[f'peak_{name}_exudyn']:.4f} mm; largest difference "
              f"{100 * r[f'diff_{name}']:.3f} % of the peak")
    print(f"  acausal: build {ours.build:.2f} s, simulate {ours.simulate:.2f} s "
          f"({int(ours.info['steps'])} IDAS steps, rtol {ex.RTOL:g})")
    print(f"  Exudyn:  set-up {theirs.build:.2f} s, simulate {theirs.simulate:.2f} s "
          f"({steps} generalized-alpha steps)")
    stiff = run_acausal(stiffening=True)
    for c, name in ((1, "y"), (2, "z")):
        d = np.abs(stiff.u[:, c] - ours.u[:, c]).max() / r[f"peak_{name}"]
        print(f"  (the example's geometric stiffening, not in Exudyn's body, changes {name} by "
              f"{100 * d:.2f} % of the peak)")
    if "--plot" in sys.argv:
        print(f"  figure: {plot(ours, theirs, ROOT / 'docs' / 'img' / 'flexible_exudyn.png')}")


if __name__ == "__main__":
    main()
