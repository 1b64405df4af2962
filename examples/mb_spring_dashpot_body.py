"""The spring-dashpot body of the chapter's Fig. 1, built from 3D multibody components.

The physics
-----------
Richard (2012, section 2, Fig. 1) introduces the linear graph of a mechanical system with a
planar rigid body (centre of gravity C.G.) carrying two rigid arms; two springs and a
dashpot join the arm tips to two points whose motion is prescribed by *displacement
drivers*; the weight is neglected. Its graph has six vertices and eight edges::

    e1  body (inertial edge, datum -> C.G.)          tree
    e2  arm  C.G. -> point 2                         tree
    e3  arm  C.G. -> point 3                         tree
    e4  displacement driver  datum -> point 4        tree
    e5  displacement driver  datum -> point 5        tree
    e6  spring  point 4 -> point 3                   cotree
    e7  spring  point 5 -> point 2                   cotree
    e8  dashpot point 5 -> point 3                   cotree

The figure itself is not in the text, so the geometry is chosen here (symmetric, so that the
small motions have closed-form frequencies): the arms are ``a = 0.3 m`` long along the
body's x axis (points 2 and 3 at ``-a`` and ``+a``); the drivers hold points 5 and 4 on the
same line at ``x = -(a + L)`` and ``x = +(a + L)`` (``L = 0.5 m``) and move them along it by
``delta5(t)``, ``delta4(t)``. Both springs (stiffness ``k``, free length ``L0 < L``) are
stretched, so they carry the preload ``T = k (L - L0)``; the dashpot (``d``) spans from
point 5 to point 3.

Mapping onto components (``components.multibody``): the body is a ``Body`` whose inertial
edge is itself a tree branch (it flies free with 6 coordinates, position and quaternion:
exactly the chapter's ``e1``); the arms are ``FixedTranslation``; each driver is a
``Prismatic`` joint from the world along x, moved through its axis flange by a 1D
translational ``Position`` source; the springs and the dashpot are the line-force elements
``Spring`` and ``Damper``. The only difference in the graph is the ``World`` component: it
adds its own vertex (the world frame) and a rigid edge from the datum to it, on which the
drivers stand. Contracting that edge gives the chapter's graph, incidence matrix (1) and
circuit matrix (4) exactly.

Reference solution
------------------
For small motions about the symmetric equilibrium the planar coordinates ``x``, ``y``,
``theta`` of the C.G. decouple (derived independently of the library)::

    m x'' + d x' + 2 k x = k delta4 + k delta5 + d delta5'     (springs and dashpot along x)
    m y'' + (2 T / L) y = 0                                    (preload: transverse stiffness)
    I theta'' + 2 T (a^2 / L + a) theta = 0                    (preload, lever a, arm rotation)

so ``w_x = sqrt(2k/m)`` (damped by ``d``), ``w_y = sqrt(2T/(mL))``,
``w_theta = sqrt(2T(a^2/L + a)/I)``. With sinusoidal drivers the x response is the
closed-form forced response of a damped oscillator. The nonlinear model departs from these
by terms of relative size ``amplitude / L``; the test checks that the error shrinks in
proportion when the amplitudes are scaled down. With the dashpot off and the drivers held,
the energy (kinetic + spring) is conserved.

Run settings: ``T_END``, ``RTOL``, ``ATOL``, ``N_POINTS`` below. Run it with
``python examples/mb_spring_dashpot_body.py``; the plot goes to
``examples/output/mb_spring_dashpot_body.png``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

import acausal as ac
from components import multibody as mb
from components import translational as tr

# run settings
T_END = 6.0  # s (about six periods of the slowest mode)
RTOL = 1e-10  # a tree mechanism (no loop constraints): tight tolerances are fine
ATOL = 1e-12
N_POINTS = 3001

# parameters
M = 2.0  # body mass [kg]
I_ZZ = 0.05  # inertia about the C.G., normal to the plane [kg.m2]
I_XX = I_YY = 0.05  # out-of-plane inertias (no effect on the planar motion) [kg.m2]
A_ARM = 0.3  # arm length, C.G. to points 2 and 3 [m]
L_SPRING = 0.5  # installed spring length [m]
L0_SPRING = 0.4  # free length of the springs [m]
K = 200.0  # spring stiffness [N/m]
D = 2.0  # dashpot damping [N.s/m]

# initial perturbation and driver motion (all small: the reference is linear)
X0 = 2e-3  # initial C.G. displacement along x [m]
Y0 = 2e-3  # initial C.G. displacement along y [m]
THETA0 = 4e-3  # initial rotation [rad]
A4, W4 = 1e-3, 9.0  # driver 4: delta4 = A4 sin(W4 t) [m], [rad/s]
A5, W5 = 1e-3, 5.0  # driver 5: delta5 = A5 sin(W5 t) [m], [rad/s]

OUTDIR = Path(__file__).resolve().parent / "output"


class SpringDashpotBody(ac.Model):
    """Body + two arms + two displacement drivers + two springs + a dashpot (Fig. 1).

    Parameters
    ----------
    scale : factor on every initial perturbation and driver amplitude
    damping : dashpot coefficient [N.s/m]
    drive : move the drivers (False: they hold points 4 and 5 still)
    """

    def __init__(self, scale: float = 1.0, damping: float = D, drive: bool = True, **kw):
        super().__init__(**kw)
        th = scale * THETA0
        a4, a5 = (scale * A4, scale * A5) if drive else (0.0, 0.0)
        base = A_ARM + L_SPRING
        self.world = mb.World(g=[0.0, 0.0, 0.0])  # "assuming negligible weight"
        # e1: the body; its inertial edge is a tree branch (free flight, 6 coordinates)
        self.body = mb.Body(m=M, I_11=I_XX, I_22=I_YY, I_33=I_ZZ,
                            r_0=[scale * X0, scale * Y0, 0.0], v_0=[0.0, 0.0, 0.0],
                            Q=[np.cos(th / 2), 0.0, 0.0, np.sin(th / 2)], w_a=[0.0, 0.0, 0.0])
        # e2, e3: rigid arms
        self.arm2 = mb.FixedTranslation(r=[-A_ARM, 0.0, 0.0])
        self.arm3 = mb.FixedTranslation(r=[A_ARM, 0.0, 0.0])
        # e4, e5: displacement drivers (prismatic joints moved by 1D position sources)
        self.driver4 = mb.Prismatic(use_axis_flange=True, n=[1.0, 0.0, 0.0])
        self.driver5 = mb.Prismatic(use_axis_flange=True, n=[1.0, 0.0, 0.0])
        self.motion4 = tr.Position(s_ref=lambda t: base + a4 * np.sin(W4 * t))
        self.motion5 = tr.Position(s_ref=lambda t: -base + a5 * np.sin(W5 * t))
        # e6, e7: springs; e8: dashpot
        self.spring6 = mb.Spring(c=K, s_unstretched=L0_SPRING)
        self.spring7 = mb.Spring(c=K, s_unstretched=L0_SPRING)
        self.dashpot8 = mb.Damper(d=damping)

        self.connect(self.body.frame_a, self.arm2.frame_a, self.arm3.frame_a)  # vertex 1
        self.connect(self.world.frame_b, self.driver4.frame_a, self.driver5.frame_a)
        self.connect(self.motion4.flange, self.driver4.axis)
        self.connect(self.motion5.flange, self.driver5.axis)
        self.connect(self.arm2.frame_b, self.spring7.frame_b)  # vertex 2
        self.connect(self.arm3.frame_b, self.spring6.frame_b, self.dashpot8.frame_b)  # 3
        self.connect(self.driver4.frame_b, self.spring6.frame_a)  # vertex 4
        self.connect(self.driver5.frame_b, self.spring7.frame_a, self.dashpot8.frame_a)  # 5


def build_model(scale: float = 1.0, damping: float = D, drive: bool = True
                ) -> SpringDashpotBody:
    return SpringDashpotBody(scale=scale, damping=damping, drive=drive)


# ----------------------------------------------------------------------------------------
# independent references
def frequencies() -> dict[str, float]:
    """Closed-form small-motion angular frequencies [rad/s] (undamped)."""
    T = K * (L_SPRING - L0_SPRING)
    return {"x": np.sqrt(2 * K / M), "y": np.sqrt(2 * T / (M * L_SPRING)),
            "theta": np.sqrt(2 * T * (A_ARM**2 / L_SPRING + A_ARM) / I_ZZ)}


def _oscillator(t, m, c, k, x0, terms):
    """Closed-form solution of ``m x'' + c x' + k x = sum(a sin(w t) + b cos(w t))`` with
    ``x(0) = x0``, ``x'(0) = 0`` (underdamped)."""
    xp = np.zeros_like(t)
    xp0 = vp0 = 0.0
    for a, b, w in terms:
        H = 1.0 / (k - m * w**2 + 1j * c * w)
        F = (b - 1j * a) * H  # forcing Re((b - i a) e^{iwt})
        xp = xp + np.real(F * np.exp(1j * w * t))
        xp0 += np.real(F)
        vp0 += np.real(1j * w * F)
    wn = np.sqrt(k / m)
    zeta = c / (2 * np.sqrt(k * m))
    wd = wn * np.sqrt(1 - zeta**2)
    c1 = x0 - xp0
    c2 = (0.0 - vp0 + zeta * wn * c1) / wd
    return np.exp(-zeta * wn * t) * (c1 * np.cos(wd * t) + c2 * np.sin(wd * t)) + xp


def linear_response(t, scale: float = 1.0, damping: float = D, drive: bool = True):
    """Closed-form linear response (x, y, theta) of the C.G."""
    w = frequencies()
    a4, a5 = (scale * A4, scale * A5) if drive else (0.0, 0.0)
    terms = [(K * a4, 0.0, W4), (K * a5, damping * a5 * W5, W5)]
    x = _oscillator(t, M, damping, 2 * K, scale * X0, terms)
    y = scale * Y0 * np.cos(w["y"] * t)
    th = scale * THETA0 * np.cos(w["theta"] * t)
    return x, y, th


def planar_coordinates(res: ac.Result):
    """x, y of the C.G. and rotation theta about z from the simulated frame."""
    r = res["body.frame_a.r"]
    R = res["body.frame_a.R"]  # column-major: R[:, 0] = R11, R[:, 1] = R21
    return r[:, 0], r[:, 1], np.arctan2(R[:, 1], R[:, 0])


def energy(res: ac.Result) -> np.ndarray:
    """Kinetic energy of the body plus the energy stored in the two springs [J]."""
    v, w = res["body.frame_a.v"], res["body.frame_a.w"]
    R = res["body.frame_a.R"].reshape(-1, 3, 3).transpose(0, 2, 1)  # column-major storage
    Iw = np.einsum("tij,jk,tlk->til", R, np.diag([I_XX, I_YY, I_ZZ]), R)
    kin = 0.5 * M * np.sum(v**2, 1) + 0.5 * np.einsum("ti,tij,tj->t", w, Iw, w)
    pot = sum(0.5 * K * (res[f"{s}.s"] - L0_SPRING) ** 2 for s in ("spring6", "spring7"))
    return kin + pot


def measured_period(t, y):
    """Mean period from upward zero crossings (linear interpolation)."""
    k = np.flatnonzero((y[:-1] < 0) & (y[1:] >= 0))
    tc = t[k] - y[k] * (t[k + 1] - t[k]) / (y[k + 1] - y[k])
    return (tc[-1] - tc[0]) / (len(tc) - 1)


def run(plot: bool = True, outdir: str | Path | None = None, model=None, scale: float = 1.0,
        damping: float = D, drive: bool = True) -> ac.Result:
    """Simulate; optionally write ``mb_spring_dashpot_body.png`` to ``outdir``."""
    model = model if model is not None else build_model(scale, damping, drive)
    res = ac.simulate(model, T_END, rtol=RTOL, atol=ATOL, n_points=N_POINTS)
    if plot:
        plot_result(res, Path(outdir) if outdir is not None else OUTDIR, scale, damping,
                    drive)
    return res


def plot_result(res, outdir: Path, scale=1.0, damping=D, drive=True) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sim = planar_coordinates(res)
    ref = linear_response(res.t, scale, damping, drive)
    fig, axes = plt.subplots(3, 1, figsize=(9, 7.5), sharex=True)
    labels = [("x of the C.G. [mm]", 1e3), ("y of the C.G. [mm]", 1e3),
              ("rotation theta [mrad]", 1e3)]
    for ax, s, r, (lab, f) in zip(axes, sim, ref, labels, strict=True):
        ax.plot(res.t, f * s, lw=1.6, label="multibody model")
        ax.plot(res.t, f * r, "k--", lw=1.0, label="linearised closed form")
        ax.set_ylabel(lab)
        ax.grid(True, alpha=0.3)
    axes[0].plot(res.t, 1e3 * (res["driver4.s"] - A_ARM - L_SPRING), ":", color="C3", lw=1,
                 label="driver 4 displacement")
    axes[0].legend(loc="upper right", fontsize=8)
    axes[-1].set_xlabel("time [s]")
    fig.suptitle("Spring-dashpot body (Richard 2012, Fig. 1): free body on two springs and a "
                 "dashpot, moving drivers", fontsize=11)
    fig.tight_layout()
    outdir.mkdir(parents=True, exist_ok=True)
    path = outdir / "mb_spring_dashpot_body.png"
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def main() -> None:
    cm = ac.build(build_model())
    mech = cm.flat.mechanism
    print("Spring-dashpot body of Fig. 1 (Richard 2012)")
    print(cm.mechanism)
    print(f"  mechanism graph: {mech.topo.n_vertices} vertices (incl. datum), "
          f"{len(mech.edges)} edges, {len(mech.topo.tree)} tree branches, "
          f"{len(mech.topo.cotree)} chords  (chapter: 6, 8, 5, 3; the World edge adds one "
          "vertex and one tree branch)")
    res = run(plot=True, model=cm)
    x, y, th = planar_coordinates(res)
    xr, yr, thr = linear_response(res.t)
    print("  max |simulated - linear closed form| / amplitude:  "
          f"x {np.max(np.abs(x - xr)) / X0:.1e}, y {np.max(np.abs(y - yr)) / Y0:.1e}, "
          f"theta {np.max(np.abs(th - thr)) / THETA0:.1e}")
    w = frequencies()
    for key, sig in (("y", y), ("theta", th)):
        Tm = measured_period(res.t, sig)
        print(f"  period of the {key:5s} mode: simulated {Tm:.6f} s, closed form "
              f"{2 * np.pi / w[key]:.6f} s")
    free = run(plot=False, damping=0.0, drive=False)
    E = energy(free)
    print(f"  dashpot off, drivers held: energy drift {np.max(np.abs(E - E[0])) / E[0]:.1e} "
          "(relative)")
    print(f"  plot written to {OUTDIR / 'mb_spring_dashpot_body.png'}")


if __name__ == "__main__":
    main()
