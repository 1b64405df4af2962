"""Pin-jointed structures in nodal Cartesian coordinates, integrated on the null space of
the constraint matrix (Xiang, Wu & Zhou 2015).

* :mod:`~acausal.nodal.base` -- the pin domain and the hooks of nodal components;
* :mod:`~acausal.nodal.assemble` -- the symbolic nodal system of a model;
* :mod:`~acausal.nodal.system` -- its numeric functions, the constraint matrix, its rank,
  null space and the independent-mode count;
* :mod:`~acausal.nodal.newmark` -- fixed-step Newmark / generalized-alpha integration on
  the independent displacement modes;
* :mod:`~acausal.nodal.domain_pass` -- the pin domain's pass in the DAE pipeline (the
  Lagrange-multiplier equations for IDAS);
* :mod:`~acausal.nodal.integrator` -- ``simulate(..., solver="nullspace", dt=...)``.

:func:`nodal_system` gives the numeric system of a model made of nodal components only,
outside the DAE pipeline (tests, studies); inside ``ac.build`` the nodal domain pass does
the same assembly.
"""

from __future__ import annotations

from typing import Any

import casadi as cs
import numpy as np

from .assemble import NodalAssembly, _StandaloneBinder, assemble, node_start_values
from .base import MassBlock, NodalComponent, Pin, PinDomain, PinState
from .integrator import NullspaceIntegrator, mode_table
from .newmark import NewmarkNullspace, NodalIntegrationError, Scheme, Trajectory
from .system import RANK_RTOL, ModeCount, NodalSystem, mode_count, null_space

__all__ = [
    "MassBlock", "ModeCount", "NewmarkNullspace", "NodalAssembly", "NodalComponent",
    "NodalIntegrationError", "NodalSystem", "NullspaceIntegrator", "Pin", "PinDomain",
    "PinState", "RANK_RTOL", "Scheme", "Trajectory", "assemble", "mode_count", "mode_table",
    "nodal_system", "null_space",
]


def nodal_system(model: Any, params: dict[str, float] | None = None) -> NodalSystem:
    """The numeric nodal system of ``model`` (nodal components only), with parameter
    overrides ``{"bar1.m": 2.0}``.

    Raises
    ------
    ModelDefinitionError
        A component of another domain, or an unknown parameter name.
    """
    from ..errors import ModelDefinitionError

    comps = list(model.walk())
    t = cs.SX.sym("time")
    binder = _StandaloneBinder(comps, t)
    try:
        asm = assemble(comps, t, lambda nd: binder.node_syms[id(nd)], node_start_values)
    finally:
        binder.release(comps)
    values = np.array(binder.p_values, dtype=float)
    for k, val in (params or {}).items():
        if k not in binder.p_names:
            raise ModelDefinitionError(f"unknown parameter {k!r}")
        values[binder.p_names.index(k)] = float(val)
    p = cs.vertcat(*binder.p_syms) if binder.p_syms else cs.SX(0, 1)
    return NodalSystem(asm, p, values)


def _register() -> None:
    from ..solvers.base import register_integrator

    register_integrator("nullspace", "acausal.nodal.integrator", "NullspaceIntegrator")


_register()
