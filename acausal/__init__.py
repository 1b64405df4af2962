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

from . import domains, export, ocp, progress, units
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
from .persist import DetachedModelError, load
from .relations import no_event
from .results import Result
from .simulate import SimulationStats, simulate
from .solvers.newton import NewtonFailure
from .sweep import SweepResult, sweep

try:  # numpy functions on CasADi symbols return CasADi symbols (sources written with np.sin)
    _cs.GlobalOptions.setNumpyMode(-1)
except AttributeError:  # pragma: no cover - older CasADi
    pass

__version__ = "0.1.0"

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
