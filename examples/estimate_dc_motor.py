"""Estimating friction and inertia of a DC motor from noisy speed measurements.

The physics
-----------
The servo of ``ocp_dc_motor.py`` (armature resistance ``R``, motor constant ``k``, inertia
``J``, viscous friction ``b``; inductance neglected) is started from rest by a voltage step
``V``. Its speed is the first-order response::

    w(t) = w_inf (1 - exp(-t / tau)),   w_inf = k V / (R b + k^2),   tau = J R / (R b + k^2)

so the final speed carries ``b`` and the time constant then carries ``J``: both are
identifiable from a speed record. ``R`` and ``k`` are taken as known (from a locked-rotor
and a back-EMF test).

The estimation
--------------
"Measurements" are a simulation with the true ``J``, ``b`` plus white noise of standard
deviation ``SIGMA``. The estimate minimises the sum of squared residuals
``r(theta) = y - w(t; theta)``, ``theta = (J, b)`` scaled by their nominal values, by
Gauss–Newton steps ``theta += (S^T S)^-1 S^T r`` with the sensitivity matrix ``S = dw/dtheta``
from IDAS (``ac.export.simulator(cm, grid, ["inertia.w"], params=["inertia.J",
"friction.d"])``: a CasADi function of those two parameters only, whose Jacobian IDAS
computes by forward sensitivities). At the optimum the covariance of the estimate is
``s^2 (S^T S)^-1`` with ``s^2 = RSS / (m - 2)`` (Gauss–Newton approximation of the Hessian);
95 % confidence intervals use Student's t with ``m - 2`` degrees of freedom.

Reference: Bates, D. M. and Watts, D. G. (1988), *Nonlinear Regression Analysis and Its
Applications*, Wiley, ch. 2. The example checks that the intervals hold the true values;
``tests/export/test_ocp.py`` also checks their coverage over repeated noise realisations.

Run settings: ``T_END``, ``N_MEAS``, ``SIGMA``, ``SEED`` below. Run it with
``python examples/estimate_dc_motor.py``; the plot goes to
``examples/output/estimate_dc_motor.png``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import casadi as cs
import numpy as np
from ocp_dc_motor import B, J, ServoMotor
from scipy import stats

import acausal as ac

# run settings
T_END = 0.3  # s
N_MEAS = 60  # measurements
SIGMA = 1.0  # rad/s, noise standard deviation
SEED = 1
V_STEP = 6.0  # V

NAMES = ["inertia.J", "friction.d"]
TRUE = np.array([J, B])
GUESS = np.array([1.5 * J, 0.5 * B])  # deliberately off

OUTDIR = Path(__file__).resolve().parent / "output"


@dataclass
class Estimate:
    """Estimated parameters with their covariance and 95 % confidence intervals."""

    names: list[str]
    value: np.ndarray
    covariance: np.ndarray
    ci95: np.ndarray  # (n, 2)
    sigma: float  # estimated noise standard deviation
    iterations: int

    @property
    def std(self) -> np.ndarray:
        return np.sqrt(np.diag(self.covariance))


def build_model() -> ServoMotor:
    m = ServoMotor()
    m.source.V = V_STEP
    return m


def measurements(cm: ac.CompiledModel, seed: int = SEED, sigma: float = SIGMA):
    """Times and noisy speeds of the true motor."""
    grid = np.linspace(0.0, T_END, N_MEAS + 1)
    res = ac.simulate(cm, T_END, t_eval=grid, rtol=1e-10, atol=1e-10,
                      params=dict(zip(NAMES, TRUE, strict=True)))
    rng = np.random.default_rng(seed)
    return grid, res["inertia.w"][1:] + sigma * rng.standard_normal(N_MEAS)


def model_function(cm: ac.CompiledModel, grid: np.ndarray) -> cs.Function:
    """``theta (scaled) -> (w at grid[1:], dw/dtheta)``."""
    sim = ac.export.simulator(cm, grid, ["inertia.w"], params=NAMES, rtol=1e-10, atol=1e-10)
    th = cs.MX.sym("theta", len(NAMES))
    y = sim(th * cs.DM(TRUE))[1].T  # scaled by the nominal values
    return cs.Function("model", [th], [y, cs.jacobian(y, th)])


def estimate(cm: ac.CompiledModel, grid: np.ndarray, y: np.ndarray,
             f: cs.Function | None = None, tol: float = 1e-10) -> Estimate:
    """Gauss–Newton least squares with the Gauss–Newton covariance."""
    f = f or model_function(cm, grid)
    theta = GUESS / TRUE
    iterations = 0
    while iterations < 50:
        iterations += 1
        w, S = (np.asarray(a) for a in f(theta))
        r = y - w.ravel()
        step = np.linalg.lstsq(S, r, rcond=None)[0]
        theta = theta + step
        if np.max(np.abs(step)) < tol:
            break
    w, S = (np.asarray(a) for a in f(theta))
    r = y - w.ravel()
    m, n = S.shape
    s2 = float(r @ r) / (m - n)
    cov_scaled = s2 * np.linalg.inv(S.T @ S)
    scale = np.diag(TRUE)
    cov = scale @ cov_scaled @ scale
    value = theta * TRUE
    half = stats.t.ppf(0.975, m - n) * np.sqrt(np.diag(cov))
    return Estimate(list(NAMES), value, cov, np.column_stack([value - half, value + half]),
                    float(np.sqrt(s2)), iterations)


def main() -> None:
    cm = ac.build(build_model())
    grid, y = measurements(cm)
    est = estimate(cm, grid, y)
    print(f"DC motor: J and b from {N_MEAS} noisy speed samples (sigma = {SIGMA} rad/s), "
          f"{est.iterations} Gauss-Newton steps")
    for k, name in enumerate(NAMES):
        lo, hi = est.ci95[k]
        inside = "contains" if lo <= TRUE[k] <= hi else "MISSES"
        print(f"  {name:<11} estimate {est.value[k]:.5e} +- {est.std[k]:.2e} (1 sd); "
              f"95% CI [{lo:.5e}, {hi:.5e}] {inside} the true {TRUE[k]:.5e}")
    print(f"  noise sd estimated {est.sigma:.3f} rad/s (true {SIGMA})")
    res = ac.simulate(cm, T_END, n_points=301, params=dict(zip(NAMES, est.value, strict=True)))
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(grid[1:], y, ".", ms=4, label="measurements")
    ax.plot(res.t, res["inertia.w"], "-", label="fitted model")
    ax.set_xlabel("time [s]")
    ax.set_ylabel("speed [rad/s]")
    ax.grid(True, alpha=0.3)
    ax.legend()
    OUTDIR.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(OUTDIR / "estimate_dc_motor.png", dpi=90)
    plt.close(fig)
    print(f"  plot written to {OUTDIR / 'estimate_dc_motor.png'}")


if __name__ == "__main__":
    main()
