"""acausal: Modelica-style acausal multi-domain modelling on linear graph theory.

Write components as classes, connect their ports in a model, and simulate::

    import acausal as ac
    res = ac.simulate(MyModel(), t_end=1.0)
    res["capacitor.v"]

The compile chain (``acausal.PASSES``, one module per pass): graph -> flatten (with the
domain passes, e.g. 3D mechanisms) -> units (dimensional check) -> alias -> balance -> index
reduction (Pantelides) -> state selection (dummy derivatives) -> causalisation (BLT) ->
block solution -> dae; then initialize -> simulate (an integrator backend from
acausal.solvers) -> results / export.
"""

from __future__ import annotations

import casadi as _cs

from . import domains, progress, units
from .compiler import PASSES, CompiledModel, CompileState, Pass, StructureReport, build
from .component import (
    DATUM,
    Component,
    Edge,
    Model,
    Parameter,
    Port,
    RealInput,
    RealOutput,
    TreePriority,
    Variable,
    der,
    guess,
)
from .discrete import assign, pre, reinit, sample, when
from .domains import (
    Domain,
    Electrical,
    Quantity,
    Rotational,
    Signal,
    Thermal,
    Translational,
    signal_domain,
)
from .errors import (
    AcausalError,
    AcausalWarning,
    ArgumentError,
    BalanceError,
    ConnectionError_,
    InitializationError,
    ModelDefinitionError,
    ModelWarning,
    RedundantConstraintWarning,
    SimulationError,
    SingularityError,
    SolverWarning,
    StartValueConflict,
    StartValueError,
    StructureError,
    StructurePart,
    TopologyError,
    UnitError,
    UnresolvedWarning,
)
from .functions import fabs, fmax, fmin, if_else, sign
from .relations import no_event
from .results import Result
from .simulate import SimulationStats, simulate
from .solvers.newton import NewtonFailure
from .state import PassOrderError
from .sweep import SweepResult, sweep

try:  # numpy functions on CasADi symbols return CasADi symbols (sources written with np.sin)
    _cs.GlobalOptions.setNumpyMode(-1)
except AttributeError:  # pragma: no cover - older CasADi
    pass

__version__ = "0.1.0"

# Loaded on first use (PEP 562): the exports, optimal control and saved models are not
# needed to build and simulate, and their modules cost a few ms of a cold script's start.
# (``sweep`` stays eager: the submodule of the same name would shadow the function.)
_LAZY = {
    "export": (".export", None),
    "ocp": (".ocp", None),
    "load": (".persist", "load"),
    "DetachedModelError": (".persist", "DetachedModelError"),
}


def __getattr__(name: str) -> object:
    if name not in _LAZY:
        raise AttributeError(f"module 'acausal' has no attribute {name!r}")
    import importlib

    module_name, attr = _LAZY[name]
    module = importlib.import_module(module_name, __name__)
    value = module if attr is None else getattr(module, attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))

__all__ = [
    "AcausalError",
    "AcausalWarning",
    "ArgumentError",
    "StartValueError",
    "ModelWarning",
    "UnitError",
    "if_else",
    "fmin",
    "fmax",
    "fabs",
    "sign",
    "units",
    "RedundantConstraintWarning",
    "BalanceError",
    "CompiledModel",
    "CompileState",
    "PASSES",
    "Pass",
    "PassOrderError",
    "SimulationStats",
    "SolverWarning",
    "NewtonFailure",
    "UnresolvedWarning",
    "StartValueConflict",
    "StructurePart",
    "Component",
    "ConnectionError_",
    "DATUM",
    "Domain",
    "Edge",
    "Electrical",
    "InitializationError",
    "Model",
    "ModelDefinitionError",
    "Parameter",
    "Port",
    "Quantity",
    "RealInput",
    "RealOutput",
    "Signal",
    "signal_domain",
    "Result",
    "Rotational",
    "SimulationError",
    "SingularityError",
    "StructureError",
    "StructureReport",
    "Thermal",
    "TopologyError",
    "Translational",
    "TreePriority",
    "Variable",
    "build",
    "der",
    "domains",
    "export",
    "ocp",
    "guess",
    "when",
    "reinit",
    "assign",
    "pre",
    "sample",
    "no_event",
    "simulate",
    "load",
    "DetachedModelError",
    "progress",
    "sweep",
    "SweepResult",
]
