"""Exports: the compiled model as CasADi functions for optimisation, control and codegen.

* :func:`dae_function` — ``(x, z, p, t) -> (ode, alg)``, the semi-explicit index-1 DAE;
* :func:`output_function` — ``(x, z, p, t) -> named outputs``;
* :func:`simulator` — ``(x0, z0, p) -> states and outputs on a time grid``, an IDAS
  integrator wrapped as one differentiable CasADi function (sensitivities by IDAS);
* :func:`linearize` — ``A, B, C, D`` of the state-space linearisation at a point, with
  parameters as inputs (algebraic variables eliminated by the implicit function theorem);
* :func:`fmu` — an FMI 2.0 Model Exchange FMU compiled from CasADi-generated C
  (:mod:`acausal.fmi`).

Every function can be code-generated with CasADi's ``Function.generate``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import casadi as cs
import numpy as np

from .compiler import CompiledModel
from .errors import AcausalError
from .initialize import initialize
from .solvers.idas import make_integrator

__all__ = ["dae_function", "output_function", "simulator", "linearize", "Linearization",
           "fmu"]


def fmu(model, path, **kwargs):  # type: ignore[no-untyped-def]
    """Export an FMI 2.0 Model Exchange FMU (see :func:`acausal.fmi.fmu`; needs a C
    compiler)."""
    from .fmi import fmu as _fmu

    return _fmu(model, path, **kwargs)


def dae_function(cm: CompiledModel, name: str = "dae") -> cs.Function:
    """``(x, z, p, t) -> (ode, alg)``; names of x, z, p in ``cm.dae.x_names`` etc."""
    return cm.dae.function(name)


def _select(cm: CompiledModel, names: Sequence[str]) -> cs.SX:
    idx = {n: k for k, n in enumerate(cm.dae.out_names)}
    missing = [n for n in names if n not in idx]
    if missing:
        raise AcausalError(f"unknown output(s) {missing}")
    return cs.vertcat(*[cs.vec(cm.dae.out_expr[idx[n]]) for n in names])


def output_function(cm: CompiledModel, names: Sequence[str],
                    name: str = "outputs") -> cs.Function:
    """``(x, z, p, t) -> [outputs...]`` for the given dotted names."""
    d = cm.dae
    return cs.Function(name, [d.x, d.z, d.p, d.t], [_select(cm, names)],
                       ["x", "z", "p", "t"], ["y"])


def simulator(cm: CompiledModel, grid: Sequence[float], outputs: Sequence[str] = (), *,
              rtol: float = 1e-8, atol: float = 1e-10, params: Sequence[str] | None = None,
              start: Sequence[str] = (), fixed: dict[str, float] | None = None
              ) -> cs.Function:
    """A differentiable simulation: ``(x0, z0, p) -> (X, Y)`` on ``grid``.

    ``X`` holds the states at ``grid[1:]`` (one column per time), ``Y`` the requested
    outputs there. Derivatives with respect to ``x0`` and ``p`` come from IDAS forward or
    adjoint sensitivities, so the function can sit inside an NLP (``casadi.nlpsol``).

    With ``params=["motor.R", ...]`` the function is ``(p[, s]) -> (X, Y, x0, z0)`` of
    those parameters only (the others fixed, at ``fixed=`` or the model's values; ``s``:
    the start values named in ``start``), the consistent initial values computed inside
    (:func:`acausal.differentiable.parametric_simulator`).
    """
    if params is not None or start:
        from .differentiable import parametric_simulator

        return parametric_simulator(cm, grid, outputs, params or (), start, rtol=rtol,
                                    atol=atol, fixed=fixed)
    g = np.asarray(grid, dtype=float)
    d = cm.dae
    integ = make_integrator(d, g - g[0], rtol=rtol, atol=atol)
    x0 = cs.MX.sym("x0", d.x.numel())
    z0 = cs.MX.sym("z0", d.z.numel())
    p = cs.MX.sym("p", d.p.numel())
    r = integ(x0=x0, z0=z0, p=cs.vertcat(p, g[0]))
    X, Z = r["xf"], r["zf"]
    if outputs:
        f = output_function(cm, outputs).map(len(g) - 1)
        Y = f(X, Z, cs.repmat(p, 1, len(g) - 1), cs.DM(g[1:]).T)
    else:
        Y = cs.MX(0, len(g) - 1)
    return cs.Function("simulator", [x0, z0, p], [X, Y], ["x0", "z0", "p"], ["X", "Y"])


@dataclass
class Linearization:
    """``dx = A dx + B du``, ``dy = C dx + D du`` around the point ``(x, z, p, t)``."""

    A: np.ndarray
    B: np.ndarray
    C: np.ndarray
    D: np.ndarray
    states: list[str]
    inputs: list[str]
    outputs: list[str]
    x: np.ndarray
    z: np.ndarray
    p: np.ndarray
    t: float


def linearize(cm: CompiledModel, inputs: Sequence[str] = (), outputs: Sequence[str] = (), *,
              x: np.ndarray | None = None, z: np.ndarray | None = None,
              params: dict[str, float] | None = None, t: float = 0.0) -> Linearization:
    """State-space linearisation with the named parameters as inputs.

    Without ``x``/``z`` the consistent initial point is used. The algebraic variables are
    eliminated: ``dz = -g_z^{-1} (g_x dx + g_u du)``.
    """
    d = cm.dae
    pv = cm.parameter_values(params)
    if x is None or z is None:
        init = initialize(cm, pv, t)
        x = init.x0 if x is None else x
        z = init.z0 if z is None else z
    missing = [u for u in inputs if u not in d.p_names]
    if missing:
        raise AcausalError(f"inputs must be parameters of the model; unknown: {missing}")
    ui = [d.p_names.index(u) for u in inputs]
    u = cs.vertcat(*[d.p[k] for k in ui]) if ui else cs.SX(0, 1)
    y = _select(cm, outputs) if outputs else cs.SX(0, 1)
    jac = cs.Function(
        "lin", [d.x, d.z, d.p, d.t],
        [cs.jacobian(d.ode, d.x), cs.jacobian(d.ode, d.z), cs.jacobian(d.ode, u),
         cs.jacobian(d.alg, d.x), cs.jacobian(d.alg, d.z), cs.jacobian(d.alg, u),
         cs.jacobian(y, d.x), cs.jacobian(y, d.z), cs.jacobian(y, u)],
    )
    fx, fz, fu, gx, gz, gu, hx, hz, hu = (np.asarray(m) for m in jac(x, z, pv, t))
    if gz.size:
        dzdx = -np.linalg.solve(gz, gx)
        dzdu = -np.linalg.solve(gz, gu)
    else:
        dzdx = np.zeros((0, fx.shape[1]))
        dzdu = np.zeros((0, fu.shape[1]))
    A = fx + fz @ dzdx
    B = fu + fz @ dzdu
    C = hx + hz @ dzdx
    D = hu + hz @ dzdu
    return Linearization(A, B, C, D, list(d.x_names), list(inputs), list(outputs),
                         np.asarray(x, float), np.asarray(z, float), pv, t)
