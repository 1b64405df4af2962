"""Time-integration backends behind one interface (:mod:`acausal.solvers.base`) and the
algebraic solver shared by initialisation and restarts (:mod:`acausal.solvers.newton`)."""

from .base import (
    IntegrationFailure,
    Integrator,
    IntegratorOptions,
    Segment,
    SegmentStats,
    integrator_class,
    register_integrator,
)

__all__ = ["IntegrationFailure", "Integrator", "IntegratorOptions", "Segment", "SegmentStats",
           "integrator_class", "register_integrator"]
