"""Side by side with peers: a 3D pendulum chain and a mass-spring-damper chain (issue 14).

Run: ``python benchmarks/bench_peers.py [--quick] [--reps R] [--growth]`` (peers from the
``[bench]`` extra: ``pip install -e ".[bench]"``; a peer that is not installed is skipped).
Prints:

1. **Pendulum chain released horizontal** (N = 10, 50, 200, 1 000 links of total length
   1 m and mass 1 kg, revolutes about z, gravity 9.81 m/s2 along -y; 1 s), for this
   product (``simulate(solver="auto")``, rtol = atol = 1e-6), Pinocchio's ABA in scipy's
   DOP853 (rtol = atol = 1e-6; up to 200 links), MuJoCo (RK4, fixed step 1e-4 s; contacts off) and
   Exudyn (``ObjectKinematicTree``, minimal coordinates, adaptive DOPRI5 at 1e-6): build
   and simulate time, the tip position error against a converged reference (this
   product, DOP853 at 1e-11, cross-checked with Pinocchio at 1e-11), and time ratios;
   then the simulate time of this product and of Pinocchio split into right-hand side
   evaluations and the time of one, with the growth of each, and the instructions of
   this product's right-hand side per link (the cost of one evaluation is what the
   formulation controls; the number of evaluations grows with N for any method).
2. **Hanging rope** of ``bench_multibody.py`` (N = 200, first link deflected 0.3 rad):
   this product against Pinocchio + DOP853, both at rtol = atol = 1e-6 and 1e-8, with
   their end-point errors.
3. **Mass-spring-damper chain** (``benchmarks/_models.py``; N = 100, 1 000, 10 000;
   1 s, rtol 1e-6, atol 1e-8): this product, the hand-written CasADi floor (the same ODE
   in CasADi SX, integrated by CVODES Adams and by IDAS) and rumoca (the Modelica
   compiler's own solver), with the error of the last mass's position.
4. With ``--growth`` (alone): **why the pendulum chain's simulate time grows faster than
   N** (N = 20, 50, 200, 1 000): the last link's peak rate, the tip's peak acceleration
   and speed, and the steps of DOP853 and of CVODES BDF (implicit) at 1e-6: the
   solution's own time scale shrinks like 1/N, so the steps grow for any method.

"acausal (auto)" is a run that finds its right-hand side compiled by an earlier run of
the same model (the disk cache of ``acausal.solvers.machine``, here a temporary
directory of this benchmark's own: the reference run fills it), as a script run a
second time does; "acausal (first run)" is a model's first run ever (no cache: a long
run compiles in the background and switches when the library is ready).

Repetitions are interleaved (one run of every tool, then the next round), and the best
of the rounds is reported; times are wall-clock seconds on a machine shared with other
work, so compare ratios within one run. A tool whose previous size took so long that
the next would exceed the time budget is skipped (shown as ``-``).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

import casadi as cs
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

from _models import LinkChain as HorizontalChain  # noqa: E402
from _models import MassSpringChain  # noqa: E402
from bench_multibody import PendulumChain as HangingRope  # noqa: E402

import acausal as ac  # noqa: E402

T_END = 1.0
G = 9.81
BUDGET = 120.0  # s: a tool is skipped when its next size would exceed this
GROWTH = 2.5  # least exponent of the extrapolation from the previous size (a tool's own
# measured growth between its last two sizes when steeper: Exudyn's kinematic tree grew
# like N^3 from 10 to 50 links and took 2 028 s at 200 in one run)
ONCE = 20.0  # s: a tool whose run takes longer is not repeated
PINOCCHIO_MAX = 200  # links: Pinocchio's createData for a 1 000-joint chain took the
# machine's memory (23 GB; the process was killed), so larger chains skip it


# ------------------------------------------------------------------------- the models
def link_inertia(N: int) -> tuple[float, float, np.ndarray]:
    ell, m = 1.0 / N, 1.0 / N
    return ell, m, np.array([1e-6 * m, m * ell**2 / 12, m * ell**2 / 12])


def tip_of(q: np.ndarray, N: int) -> np.ndarray:
    """Tip (x, y) of a planar chain from its relative joint angles."""
    th = np.cumsum(q)
    return np.array([np.sum(np.cos(th)), np.sum(np.sin(th))]) / N


# ------------------------------------------------------------------------ the runners
@dataclass
class Run:
    build: float = np.nan
    sim: float = np.nan
    value: np.ndarray = field(default_factory=lambda: np.zeros(0))
    note: str = ""
    evaluations: int = 0  # right-hand side evaluations of the run (0: not reported)
    instructions: int = 0  # of this product's right-hand side (CasADi's virtual machine)


def run_acausal_chain(model: ac.Model, N: int, tol: float, solver: str = "auto",
                      tip: str | None = None, cold: bool = False) -> Run:
    """``cold``: without the disk cache of compiled right-hand sides (a model's first run
    ever: the compile, if any, in the background); otherwise a later run finds the
    library an earlier one compiled, as a script run again does."""
    if cold:
        saved = os.environ.get("ACAUSAL_COMPILE_CACHE")
        os.environ["ACAUSAL_COMPILE_CACHE"] = "off"
        try:
            return run_acausal_chain(model, N, tol, solver, tip)
        finally:
            os.environ.pop("ACAUSAL_COMPILE_CACHE")
            if saved is not None:
                os.environ["ACAUSAL_COMPILE_CACHE"] = saved
    t0 = time.perf_counter()
    cm = ac.build(model)
    t1 = time.perf_counter()
    with warnings.catch_warnings():  # two output points on purpose: only the end counts
        warnings.simplefilter("ignore", ac.UnresolvedWarning)
        res = ac.simulate(cm, T_END, rtol=tol, atol=tol, n_points=2, solver=solver)
    t2 = time.perf_counter()
    r = res[tip or f"arms[{N - 1}].frame_b.r"][-1][:2]
    return Run(t1 - t0, t2 - t1, r, f"{res.stats.solver}, {res.stats.steps} steps",
               res.stats.rhs_evaluations, _instructions(cm))


def _instructions(cm: ac.CompiledModel) -> int:
    """The instructions of the explicit ODE's right-hand side (0: not an explicit ODE)."""
    from acausal.solvers.ode import NotAnODE, ode_form

    try:
        return int(ode_form(cm.dae, cm.parameter_values()).f.n_instructions())
    except NotAnODE:
        return 0


def pinocchio_model(N: int, q0: np.ndarray):
    import pinocchio as pin

    ell, m, Id = link_inertia(N)
    model = pin.Model()
    parent = 0
    for k in range(N):
        placement = pin.SE3(np.eye(3), np.array([ell if k else 0.0, 0.0, 0.0]))
        jid = model.addJoint(parent, pin.JointModelRZ(), placement, f"j{k}")
        model.appendBodyToJoint(jid, pin.Inertia(m, np.array([ell / 2, 0, 0]), np.diag(Id)),
                                pin.SE3.Identity())
        parent = jid
    model.gravity.linear = np.array([0.0, -G, 0.0])
    return model


def run_pinocchio(N: int, q0: np.ndarray, tol: float) -> Run:
    import pinocchio as pin
    from scipy.integrate import solve_ivp

    t0 = time.perf_counter()
    model = pinocchio_model(N, q0)
    data = model.createData()
    tau = np.zeros(N)

    def f(t, y):
        return np.concatenate([y[N:], pin.aba(model, data, y[:N], y[N:], tau)])

    t1 = time.perf_counter()
    sol = solve_ivp(f, (0.0, T_END), np.concatenate([q0, np.zeros(N)]), method="DOP853",
                    rtol=tol, atol=tol)
    t2 = time.perf_counter()
    return Run(t1 - t0, t2 - t1, tip_of(sol.y[:N, -1], N), f"{sol.nfev} evaluations",
               int(sol.nfev))


def run_mujoco(N: int, q0: np.ndarray, dt: float = 1e-4) -> Run:
    import mujoco

    ell, m, Id = link_inertia(N)
    body = "".join(
        f'<body pos="{ell if k else 0.0} 0 0"><joint type="hinge" axis="0 0 1"/>'
        f'<inertial pos="{ell / 2} 0 0" mass="{m}" diaginertia="{Id[0]} {Id[1]} {Id[2]}"/>'
        for k in range(N)) + "</body>" * N
    xml = (f'<mujoco><option timestep="{dt}" integrator="RK4" gravity="0 {-G} 0">'
           f'<flag contact="disable"/></option><worldbody>{body}</worldbody></mujoco>')
    t0 = time.perf_counter()
    model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(model)
    data.qpos[:] = q0
    t1 = time.perf_counter()
    for _ in range(int(round(T_END / dt))):
        mujoco.mj_step(model, data)
    t2 = time.perf_counter()
    return Run(t1 - t0, t2 - t1, tip_of(np.array(data.qpos), N), f"RK4 dt={dt:g}")


def run_exudyn(N: int, q0: np.ndarray, tol: float) -> Run:
    import exudyn as exu
    from exudyn.itemInterface import NodeGenericODE2, ObjectKinematicTree

    ell, m, Id = link_inertia(N)
    t0 = time.perf_counter()
    SC = exu.SystemContainer()
    mbs = SC.AddSystem()
    node = mbs.AddNode(NodeGenericODE2(referenceCoordinates=[0.0] * N,
                                       initialCoordinates=list(q0),
                                       initialCoordinates_t=[0.0] * N,
                                       numberOfODE2Coordinates=N))
    mbs.AddObject(ObjectKinematicTree(
        nodeNumber=node, jointTypes=[exu.JointType.RevoluteZ] * N,
        linkParents=list(range(-1, N - 1)),
        jointTransformations=exu.Matrix3DList([np.eye(3)] * N),
        jointOffsets=exu.Vector3DList([[0.0, 0, 0]] + [[ell, 0, 0]] * (N - 1)),
        linkInertiasCOM=exu.Matrix3DList([np.diag(Id)] * N),
        linkCOMs=exu.Vector3DList([[ell / 2, 0, 0]] * N), linkMasses=[m] * N,
        gravity=[0.0, -G, 0.0]))
    mbs.Assemble()
    ss = exu.SimulationSettings()
    ss.timeIntegration.endTime = T_END
    ss.timeIntegration.numberOfSteps = 100  # initial and largest step 0.01 s
    ss.timeIntegration.automaticStepSize = True
    ss.timeIntegration.absoluteTolerance = tol
    ss.timeIntegration.relativeTolerance = tol
    ss.timeIntegration.verboseMode = 0
    ss.solutionSettings.writeSolutionToFile = False
    t1 = time.perf_counter()
    mbs.SolveDynamic(ss, solverType=exu.DynamicSolverType.DOPRI5)
    t2 = time.perf_counter()
    q = np.asarray(mbs.GetNodeOutput(node, exu.OutputVariableType.Coordinates))
    return Run(t1 - t0, t2 - t1, tip_of(q, N), f"DOPRI5 {tol:g}")


def available(module: str) -> bool:
    try:
        __import__(module)
    except Exception:  # noqa: BLE001 - any import failure means: skip the peer
        return False
    return True


# --------------------------------------------------------------------- interleaving
def interleaved(tools: dict[str, Callable[[], Run]], reps: int,
                skip: set[str]) -> dict[str, Run]:
    """Best of ``reps`` rounds, one run of every tool per round (a tool whose run took
    longer than ``ONCE`` seconds runs once: its noise is small against its time)."""
    best: dict[str, Run] = {}
    for _ in range(reps):
        for name, fn in tools.items():
            if name in skip or (name in best and best[name].sim > ONCE):
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                r = fn()
            if name not in best or r.sim + r.build < best[name].sim + best[name].build:
                best[name] = r
    return best


def fmt(x: float, w: int = 9, p: int = 3) -> str:
    return f"{'-':>{w}s}" if not np.isfinite(x) else f"{x:{w}.{p}f}"


# ----------------------------------------------------------------------- section 1
def pendulum_section(sizes: list[int], reps: int) -> None:
    print(f"== 1. Pendulum chain released horizontal, {T_END:g} s: build, simulate, tip "
          "error ==")
    peers = {"pinocchio+DOP853": available("pinocchio"), "mujoco RK4": available("mujoco"),
             "exudyn": available("exudyn")}
    print("   peers: " + ", ".join(f"{k} {'ok' if v else 'not installed (skipped)'}"
                                    for k, v in peers.items()))
    head = (f"{'N':>5s} {'tool':20s} {'build':>9s} {'simulate':>9s} {'tip error':>10s} "
            f"{'sim/ours':>9s}  notes")
    print(head)
    print("-" * len(head))
    last: dict[str, tuple[int, float]] = {}
    growth: dict[str, float] = {}  # a tool's measured exponent between its last two sizes
    ours_sim: dict[int, float] = {}
    per_eval: dict[str, dict[int, tuple[float, int]]] = {}  # tool -> N -> (s, evaluations)
    instructions: dict[int, int] = {}  # N -> this product's right-hand side instructions
    for N in sizes:
        q0 = np.zeros(N)
        ref = run_acausal_chain(HorizontalChain(N), N, 1e-11, "dop853").value
        check = ""
        if peers["pinocchio+DOP853"] and N <= 200:
            check = f"reference cross-check (Pinocchio 1e-11): " \
                    f"{np.abs(run_pinocchio(N, q0, 1e-11).value - ref).max():.1e} m"
        tools: dict[str, Callable[[], Run]] = {
            "acausal (auto)": lambda N=N: run_acausal_chain(HorizontalChain(N), N, 1e-6),
            "acausal (first run)": lambda N=N: run_acausal_chain(HorizontalChain(N), N, 1e-6,
                                                                 cold=True)}
        if peers["pinocchio+DOP853"] and N <= PINOCCHIO_MAX:
            tools["pinocchio+DOP853"] = lambda N=N: run_pinocchio(N, np.zeros(N), 1e-6)
        if peers["mujoco RK4"]:
            tools["mujoco RK4"] = lambda N=N: run_mujoco(N, np.zeros(N))
        if peers["exudyn"]:
            tools["exudyn"] = lambda N=N: run_exudyn(N, np.zeros(N), 1e-6)
        # (this product is the subject: never skipped; a peer only by its extrapolation)
        skip = {name for name, (n0, t) in last.items() if not name.startswith("acausal")
                and t * (N / n0) ** growth.get(name, GROWTH) > BUDGET}
        res = interleaved(tools, reps, skip)
        ours = res["acausal (auto)"].sim
        ours_sim[N] = ours
        for name in tools:
            r = res.get(name)
            if r is None:
                print(f"{N:5d} {name:20s} {'-':>9s} {'-':>9s} {'-':>10s} {'-':>9s}  "
                      "skipped (time budget)")
                continue
            if name in last and r.sim > 0.1:  # (shorter runs: too noisy to extrapolate)
                n0, t0 = last[name]
                growth[name] = max(GROWTH, float(np.log(r.sim / t0) / np.log(N / n0)))
            last[name] = (N, r.sim)
            if r.evaluations and name != "acausal (first run)":
                per_eval.setdefault(name, {})[N] = (r.sim, r.evaluations)
            if r.instructions:
                instructions[N] = r.instructions
            err = float(np.abs(r.value - ref).max())
            print(f"{N:5d} {name:20s} {fmt(r.build)} {fmt(r.sim)} {err:10.1e} "
                  f"{r.sim / ours:9.2f}  {r.note}", flush=True)
        if check:
            print(f"      {check}")
    if len(ours_sim) > 1 and 50 in ours_sim and max(ours_sim) > 50:
        n1 = max(ours_sim)
        p = np.log(ours_sim[n1] / ours_sim[50]) / np.log(n1 / 50)
        print(f"   simulate-time growth of this product from N=50 to {n1}: ~N^{p:.2f} "
              f"(N log N would be ~N^{1 + np.log(np.log(n1) / np.log(50)) / np.log(n1 / 50):.2f})")
    _per_evaluation(per_eval)
    if instructions:
        print("   this product's right-hand side: " + ", ".join(
            f"N={n}: {k} instructions ({k / n:.0f} per link)"
            for n, k in sorted(instructions.items())))
    print()


def _per_evaluation(per_eval: dict[str, dict[int, tuple[float, int]]]) -> None:
    """The simulate time split into right-hand side evaluations and the time of one, with
    each one's growth exponent between the smallest and largest size a tool ran: at the
    fixed tolerance the number of evaluations grows with N for any method (the links get
    shorter and the fastest motion faster), so the cost of one evaluation is what the
    formulation controls (O(N) for a recursive one)."""
    if not per_eval:
        return
    print("   simulate time = evaluations x time per evaluation (right-hand side and the "
          "integrator's own work):")
    for name, runs in per_eval.items():
        sizes = sorted(runs)
        cells = ", ".join(f"N={n}: {runs[n][1]} x {runs[n][0] / runs[n][1] * 1e6:.1f} us"
                          for n in sizes)
        line = f"   {name:20s} {cells}"
        if len(sizes) > 1:
            (t0, e0), (t1, e1) = runs[sizes[0]], runs[sizes[-1]]
            span = np.log(sizes[-1] / sizes[0])
            line += (f"; from N={sizes[0]} to {sizes[-1]}: evaluations ~N^"
                     f"{np.log(e1 / e0) / span:.2f}, time per evaluation ~N^"
                     f"{np.log((t1 / e1) / (t0 / e0)) / span:.2f}")
        print(line)


# ----------------------------------------------------------------------- section 4
def growth_section(sizes: list[int]) -> None:
    """Why the simulate time of the pendulum chain grows faster than N: the solution's
    own time scale shrinks. Released horizontal, the chain whips: the last link's peak
    rate and the tip's peak acceleration grow with N (links shorter and lighter), so a
    method that follows the tip to a fixed tolerance takes more steps, explicit or
    implicit. Shown by a run on 10 001 points (DOP853 at 1e-8; the peaks are sampled
    every 0.1 ms, which at N = 1 000 is about a third of the time scale, so they are
    low there), and by the steps of DOP853 (explicit) and of CVODES BDF (implicit,
    A(alpha)-stable: no stability limit on these modes; dense Jacobian, so N <= 200)
    at rtol = atol = 1e-6."""
    print("== 4. Pendulum chain: the solution's time scale and the steps it takes ==")
    head = (f"{'N':>5s} {'last link rate':>15s} {'tip accel':>10s} {'tip speed':>10s} "
            f"{'v/a':>8s} {'DOP853 steps':>13s} {'BDF steps':>10s}")
    print(head)
    print("-" * len(head))
    rows: dict[int, tuple[float, float, float, int, int]] = {}
    for N in sizes:
        cm = ac.build(HorizontalChain(N))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ac.UnresolvedWarning)
            res = ac.simulate(cm, T_END, rtol=1e-8, atol=1e-8, n_points=10001,
                              solver="dop853")
            tip = f"arms[{N - 1}].frame_b"
            rate = float(np.abs(res[f"{tip}.w"][:, 2]).max())
            accel = float(np.linalg.norm(res[f"{tip}.a"], axis=1).max())
            speed = float(np.linalg.norm(res[f"{tip}.v"], axis=1).max())
            steps = [ac.simulate(cm, T_END, rtol=1e-6, atol=1e-6, n_points=2,
                                 solver=solver).stats.steps if N <= limit else 0
                     for solver, limit in (("dop853", 10**9), ("cvodes-bdf", 200))]
        rows[N] = (rate, accel, speed, steps[0], steps[1])
        print(f"{N:5d} {rate:11.0f} 1/s {accel:6.0f} m/s2 {speed:6.2f} m/s "
              f"{speed / accel * 1e3:5.2f} ms {steps[0]:13d} "
              f"{steps[1] if steps[1] else '-':>10}", flush=True)
    if len(rows) > 1:
        n0, n1 = min(rows), max(rows)
        span = np.log(n1 / n0)
        grow = [np.log(rows[n1][k] / rows[n0][k]) / span for k in range(4)]
        line = (f"   from N={n0} to {n1}: last link rate ~N^{grow[0]:.2f}, tip acceleration "
                f"~N^{grow[1]:.2f}, DOP853 steps ~N^{grow[3]:.2f}")
        bdf = sorted(n for n in rows if rows[n][4])
        if len(bdf) > 1:
            line += (f"; BDF steps from N={bdf[0]} to {bdf[-1]} ~N^"
                     f"{np.log(rows[bdf[-1]][4] / rows[bdf[0]][4]) / np.log(bdf[-1] / bdf[0]):.2f}")
        print(line)
    print()


# ----------------------------------------------------------------------- section 2
def rope_section(reps: int) -> None:
    N = 200
    print(f"== 2. Hanging rope (bench_multibody.py, N = {N}), {T_END:g} s: this product vs "
          "Pinocchio + scipy DOP853 ==")
    if not available("pinocchio"):
        print("   pinocchio not installed: skipped\n")
        return
    q0 = np.zeros(N)
    q0[0] = -np.pi / 2 + 0.3
    tip = f"arms[{N - 1}].frame_b.r"
    ref = run_acausal_chain(HangingRope(N), N, 1e-11, "dop853", tip).value
    cross = np.abs(run_pinocchio(N, q0, 1e-11).value - ref).max()
    head = (f"{'tol':>7s} {'tool':20s} {'simulate':>9s} {'end error':>10s} {'ratio':>7s}  "
            "notes")
    print(head)
    print("-" * len(head))
    for tol in (1e-6, 1e-8):
        tools = {"acausal (auto)": lambda tol=tol: run_acausal_chain(HangingRope(N), N, tol,
                                                                     tip=tip),
                 "acausal (first run)": lambda tol=tol: run_acausal_chain(
                     HangingRope(N), N, tol, tip=tip, cold=True),
                 "pinocchio+DOP853": lambda tol=tol: run_pinocchio(N, q0, tol)}
        res = interleaved(tools, reps, set())
        base = res["pinocchio+DOP853"].sim
        for name, r in res.items():
            print(f"{tol:7.0e} {name:20s} {fmt(r.sim)} {np.abs(r.value - ref).max():10.1e} "
                  f"{r.sim / base:7.2f}  {r.note}")
    print(f"   reference cross-check (Pinocchio 1e-11): {cross:.1e} m; ratio = time / "
          "Pinocchio's (goal <= 2 at the same end-point accuracy)")
    print()


# ----------------------------------------------------------------------- section 3
def hand_written_msd(N: int, m: float = 1.0, c: float = 1e3, d: float = 1.0,
                     f: float = 1.0) -> tuple[cs.SX, cs.SX]:
    """The chain of ``_models.MassSpringChain`` as a minimal ODE in CasADi SX."""
    s, v = cs.SX.sym("s", N), cs.SX.sym("v", N)
    ext = cs.vertcat(cs.SX(0), s)
    extv = cs.vertcat(cs.SX(0), v)
    tension = c * (s - ext[:-1]) + d * (v - extv[:-1])
    nxt = cs.vertcat(tension[1:], cs.SX(0))
    force = cs.vertcat(cs.SX.zeros(N - 1), cs.SX(f))
    return cs.vertcat(s, v), cs.vertcat(v, (nxt - tension + force) / m)


def run_floor(N: int, plugin: str, rtol: float, atol: float, extra: dict | None = None) -> Run:
    # build: the expressions; simulate: the integrator made and run, as ``simulate`` makes
    # and runs its own (the same split as bench_scale.py's floor)
    t0 = time.perf_counter()
    x, ode = hand_written_msd(N)
    t1 = time.perf_counter()
    integ = cs.integrator("floor", plugin, {"x": x, "ode": ode}, 0.0, [T_END],
                          {"abstol": atol, "reltol": rtol, "max_num_steps": 10**6,
                           **(extra or {})})
    out = integ(x0=np.zeros(2 * N))
    t2 = time.perf_counter()
    return Run(t1 - t0, t2 - t1, np.array([float(out["xf"][N - 1])]), plugin)


def run_acausal_msd(N: int) -> Run:
    t0 = time.perf_counter()
    cm = ac.build(MassSpringChain(N))
    t1 = time.perf_counter()
    res = ac.simulate(cm, T_END, rtol=1e-6, atol=1e-8, n_points=2)
    t2 = time.perf_counter()
    return Run(t1 - t0, t2 - t1, np.array([res[f"masses[{N - 1}].s"][-1]]),
               f"{res.stats.solver}, {res.stats.steps} steps")


def run_rumoca(N: int) -> Run:
    import rumoca as rm

    src = f"""
model MSDChain
  parameter Integer N = {N};
  parameter Real m = 1.0;
  parameter Real c = 1000.0;
  parameter Real d = 1.0;
  parameter Real f = 1.0;
  Real s[N](each start = 0.0);
  Real v[N](each start = 0.0);
  Real ten[N];
equation
  ten[1] = c*s[1] + d*v[1];
  for k in 2:N loop
    ten[k] = c*(s[k] - s[k-1]) + d*(v[k] - v[k-1]);
  end for;
  for k in 1:N loop
    der(s[k]) = v[k];
  end for;
  for k in 1:N-1 loop
    m*der(v[k]) = ten[k+1] - ten[k];
  end for;
  m*der(v[N]) = f - ten[N];
end MSDChain;
"""
    t0 = time.perf_counter()
    model = rm.Session().loads(src, model="MSDChain")
    t1 = time.perf_counter()
    r = model.simulate((0.0, T_END), config=rm.SimConfig(rtol=1e-6, atol=1e-8, dt=T_END / 100))
    t2 = time.perf_counter()
    d = r.to_dict()
    return Run(t1 - t0, t2 - t1, np.array([np.asarray(d["data"][f"s[{N}]"])[-1]]),
               "rumoca auto")


def msd_section(sizes: list[int], reps: int) -> None:
    print(f"== 3. Mass-spring-damper chain, {T_END:g} s, rtol 1e-6, atol 1e-8: build, "
          "simulate, error of the last mass ==")
    has_rumoca = available("rumoca")
    if not has_rumoca:
        print("   rumoca not installed: skipped")
    head = (f"{'N':>6s} {'tool':24s} {'build':>9s} {'simulate':>9s} {'error':>9s} "
            f"{'sim/ours':>9s}  notes")
    print(head)
    print("-" * len(head))
    last: dict[str, tuple[int, float]] = {}
    for N in sizes:
        ref = run_floor(N, "cvodes", 1e-12, 1e-14, {"linear_multistep_method": "adams",
                                                     "nonlinear_solver_iteration": "functional"}
                        ).value
        tools: dict[str, Callable[[], Run]] = {
            "acausal (auto)": lambda N=N: run_acausal_msd(N),
            "CasADi floor, CVODES Adams": lambda N=N: run_floor(
                N, "cvodes", 1e-6, 1e-8, {"linear_multistep_method": "adams",
                                          "nonlinear_solver_iteration": "functional"}),
            "CasADi floor, IDAS": lambda N=N: run_floor(N, "idas", 1e-6, 1e-8),
        }
        if has_rumoca:
            tools["rumoca"] = lambda N=N: run_rumoca(N)
        skip = {name for name, (n0, t) in last.items() if t * (N / n0) ** GROWTH > BUDGET}
        res = interleaved(tools, reps, skip)
        ours = res["acausal (auto)"].sim
        for name in tools:
            r = res.get(name)
            if r is None:
                print(f"{N:6d} {name:24s} {'-':>9s} {'-':>9s} {'-':>9s} {'-':>9s}  skipped")
                continue
            last[name] = (N, r.sim)
            print(f"{N:6d} {name:24s} {fmt(r.build)} {fmt(r.sim)} "
                  f"{abs(float(r.value[0] - ref[0])):9.1e} {r.sim / ours:9.2f}  {r.note}")
    print()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="small sizes, one round")
    ap.add_argument("--reps", type=int, default=None, help="interleaved rounds (default 3)")
    ap.add_argument("--sizes", type=int, nargs="+", default=None,
                    help="pendulum chain sizes (default 10 50 200 1000; --growth: 20 50 "
                    "200 1000)")
    ap.add_argument("--growth", action="store_true",
                    help="only section 4: the pendulum chain's time scale and step counts")
    args = ap.parse_args()
    import shutil
    import tempfile

    cache = tempfile.mkdtemp(prefix="bench_peers_rhs_")  # (see the module's documentation)
    os.environ["ACAUSAL_COMPILE_CACHE"] = cache
    try:
        run_sections(args)
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def run_sections(args: argparse.Namespace) -> None:
    if args.growth:
        growth_section(args.sizes or [20, 50, 200, 1000])
        return
    reps = args.reps or (1 if args.quick else 3)
    sizes = args.sizes or ([10, 50] if args.quick else [10, 50, 200, 1000])
    pendulum_section(sizes, reps)
    if not args.quick:
        rope_section(reps)
    msd_section([100, 1000] if args.quick else [100, 1000, 10000], reps)


if __name__ == "__main__":
    main()
