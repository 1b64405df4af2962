"""The integrator interface: what every time-integration backend implements.

:func:`acausal.simulate` does what is common to every solver (the output grid, consistent
initial values, time events, dynamic state re-selection, results) and hands each smooth
segment to an :class:`Integrator`: integrate the DAE from a consistent point over a grid,
return the states and algebraic variables there (:class:`Segment`), or raise
:class:`IntegrationFailure` carrying what was computed up to the failure, the time and
the reason.

Backends register by name (:func:`register_integrator`); ``simulate(..., solver=name)``
chooses one. An integrator instance lives as long as its compiled model's run cache, so
it can keep whatever it builds (CasADi integrator objects, the integration mode that
worked) between runs.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import re
import sys
from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import field
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from ..errors import AcausalError
from ..records import record

if TYPE_CHECKING:
    from ..compiler import CompiledModel
    from ..dae import SemiExplicitDAE

__all__ = ["IntegratorOptions", "Segment", "SegmentStats", "IntegrationFailure", "Integrator",
           "register_integrator", "integrator_class", "captured_output", "INTEGRATORS"]


@record(frozen=True)
class IntegratorOptions:
    """Settings every backend understands (others go in ``extra``).

    Attributes
    ----------
    rtol, atol : float
        Relative and absolute local error tolerances.
    max_step : float or None
        Largest step [s].
    max_num_steps : int
        Steps allowed between two output points before the backend gives up.
    mode : str or None
        Backend-specific integration mode (None: the backend chooses).
    dt : float or None
        Fixed step [s] of fixed-step backends.
    extra : tuple of (key, value)
        Backend-specific options.
    """

    rtol: float = 1e-6
    atol: float = 1e-8
    max_step: float | None = None
    max_num_steps: int = 100_000
    mode: str | None = None
    dt: float | None = None
    extra: tuple[tuple[str, Any], ...] = ()


@record
class SegmentStats:
    """Work done by the integrator on one segment (as far as the backend reports it)."""

    steps: int = 0
    rhs_evaluations: int = 0
    jacobian_evaluations: int = 0
    error_test_failures: int = 0
    newton_failures: int = 0
    mode: str = ""
    attempts: list[str] = field(default_factory=list)  # modes tried before the one that ran

    def add(self, other: SegmentStats) -> None:
        """Count ``other``'s work in this one (a stretch integrated in several calls)."""
        self.steps += other.steps
        self.rhs_evaluations += other.rhs_evaluations
        self.jacobian_evaluations += other.jacobian_evaluations
        self.error_test_failures += other.error_test_failures
        self.newton_failures += other.newton_failures
        self.mode = other.mode or self.mode
        self.attempts += [a for a in other.attempts if a not in self.attempts]


@record
class Segment:
    """The result of integrating one smooth segment.

    ``t`` are the grid points reached after the start, ``x`` (nx, nt) and ``z`` (nz, nt)
    the states and algebraic variables there (CasADi or numpy matrices).
    """

    t: np.ndarray
    x: Any
    z: Any
    stats: SegmentStats = field(default_factory=SegmentStats)


class IntegrationFailure(AcausalError):
    """An integrator could not continue. ``partial`` is the segment computed up to
    ``t_fail`` (possibly empty); ``solver_output`` what the backend printed."""

    def __init__(self, reason: str, t_fail: float, partial: Segment | None = None,
                 solver_output: str = "") -> None:
        super().__init__(reason)
        self.reason = reason
        self.t_fail = t_fail
        self.partial = partial
        self.solver_output = solver_output


class Integrator(ABC):
    """A time-integration backend for the DAEs of one compiled model.

    Parameters
    ----------
    cm : CompiledModel
        The model (backends may read any of its products, e.g. a domain pass's data).
    options : IntegratorOptions
        Tolerances and step settings.
    """

    #: the name ``simulate(..., solver=name)`` selects
    name: ClassVar[str] = ""
    #: whether the backend integrates the DAE's states (then simulate checks and re-chooses
    #: the dummy derivatives along the run); False for a backend with its own coordinates
    #: that only reports the DAE's variables (the nodal null-space integrator)
    follows_state_selection: ClassVar[bool] = True
    #: the keys of ``simulate(..., solver_options=...)`` the backend takes (any other is
    #: refused with this list, :func:`acausal.checks.check_solver_options`)
    known_options: ClassVar[tuple[str, ...]] = ()

    def __init__(self, cm: CompiledModel, options: IntegratorOptions) -> None:
        self.cm = cm
        self.options = options

    def start_run(self) -> None:  # noqa: B027 - a hook: most backends learn nothing
        """Called at the start of every run (a backend is kept on the model for its next
        runs): a backend that adapts its method within a run forgets here what the last
        run learned, so that identical runs give identical results."""

    @abstractmethod
    def integrate(self, dae: SemiExplicitDAE, p: np.ndarray, x0: np.ndarray, z0: np.ndarray,
                  grid: np.ndarray, allow_fallback: bool = True) -> Segment:
        """Integrate from the consistent point ``(x0, z0)`` at ``grid[0]`` over ``grid``.

        With ``allow_fallback=False`` the backend must not change its method to get through
        (the caller has a remedy of its own to try first, such as choosing other states);
        it fails fast instead.

        Raises
        ------
        IntegrationFailure
            With the partial segment, the time and the reason.
        """


    def advance(self, dae: SemiExplicitDAE, p: np.ndarray, x0: np.ndarray, z0: np.ndarray,
                t0: float, t1: float) -> Segment:
        """The state at ``t1`` from the consistent point at ``t0`` (one interval; called
        many times with different lengths by event location: backends may make it
        cheaper than :meth:`integrate`)."""
        return self.integrate(dae, p, x0, z0, np.array([t0, t1]))


INTEGRATORS: dict[str, tuple[str, str]] = {}


#: output intervals shorter than this go one by one through a backend's time-normalised
#: integrator (:meth:`Integrator.advance`): CasADi's SUNDIALS integrators skip an output
#: time less than 1e-9 after the last (no step, the value of the last point returned), so
#: an RC circuit of 1 ns on points 0.1 ns apart came out flat, and a pulse of 1 ns between
#: its two time events was lost; twice that, for margin
SHORT_INTERVAL = 2e-9


def in_parts(integ: Integrator, dae: Any, p: np.ndarray, x0: np.ndarray, z0: np.ndarray,
             grid: np.ndarray, whole: Any) -> Segment | None:
    """``grid`` integrated in parts (None if no interval of it is shorter than
    :data:`SHORT_INTERVAL`): its stretches of longer intervals by ``whole(x0, z0, grid)``,
    its short intervals one by one by ``integ.advance``. A failure keeps the points
    reached before it in its partial result."""
    short = np.diff(grid) < SHORT_INTERVAL
    if not short.any():
        return None
    ts: list[np.ndarray] = []
    xs: list[np.ndarray] = []
    zs: list[np.ndarray] = []
    stats = SegmentStats()
    k, n = 0, len(grid) - 1
    x, z = np.asarray(x0, float).ravel(), np.asarray(z0, float).ravel()

    def joined() -> Segment:
        nx, nz = len(x), len(z)
        return Segment(np.concatenate(ts) if ts else np.zeros(0),
                       np.hstack(xs) if xs else np.zeros((nx, 0)),
                       np.hstack(zs) if zs else np.zeros((nz, 0)), stats)

    while k < n:
        j = k + 1
        if not short[k]:  # (the run of long intervals from k)
            while j < n and not short[j]:
                j += 1
        try:
            seg = (whole(x, z, grid[k:j + 1]) if not short[k] else
                   integ.advance(dae, p, x, z, float(grid[k]), float(grid[j])))
        except IntegrationFailure as exc:
            if exc.partial is not None and len(exc.partial.t):
                ts.append(np.asarray(exc.partial.t))
                m = len(exc.partial.t)
                xs.append(np.asarray(exc.partial.x, float).reshape(len(x), m))
                zs.append(np.asarray(exc.partial.z, float).reshape(len(z), m))
            exc.partial = joined()
            raise
        X = np.asarray(seg.x, float).reshape(len(x), len(seg.t))
        Z = np.asarray(seg.z, float).reshape(len(z), len(seg.t))
        ts.append(np.asarray(seg.t, float))
        xs.append(X)
        zs.append(Z)
        stats.add(seg.stats)
        x, z = X[:, -1].copy(), Z[:, -1].copy()
        k = j
    return joined()


def register_integrator(name: str, module: str, cls: str) -> None:
    """Make ``module.cls`` available as ``simulate(..., solver=name)`` (imported lazily)."""
    INTEGRATORS[name] = (module, cls)


def integrator_class(name: str) -> type[Integrator]:
    """The backend registered under ``name``."""
    entry = INTEGRATORS.get(name)
    if entry is None:
        raise AcausalError(
            f"unknown solver {name!r}; available: {', '.join(sorted(INTEGRATORS))}")
    cls = getattr(importlib.import_module(entry[0]), entry[1])
    if not (isinstance(cls, type) and issubclass(cls, Integrator)):
        raise TypeError(f"{entry[0]}.{entry[1]} is not an Integrator")
    return cls


@contextlib.contextmanager
def captured_output() -> Iterator[io.StringIO]:
    """Collect what native solvers print (CasADi routes SUNDIALS messages through
    Python's ``sys.stdout``/``sys.stderr``) instead of showing it: the library decides
    whether it is worth reporting (in an exception) or was recovered from (dropped)."""
    buf = io.StringIO()
    old = sys.stdout, sys.stderr
    sys.stdout = sys.stderr = buf
    try:
        yield buf
    finally:
        sys.stdout, sys.stderr = old


register_integrator("idas", "acausal.solvers.idas", "IDASIntegrator")
register_integrator("idas-krylov", "acausal.solvers.idas", "IDASKrylovIntegrator")
register_integrator("cvodes-adams", "acausal.solvers.cvodes", "CVODESAdamsIntegrator")
register_integrator("cvodes-bdf", "acausal.solvers.cvodes", "CVODESBDFIntegrator")
register_integrator("cvodes-krylov", "acausal.solvers.cvodes", "CVODESKrylovIntegrator")
register_integrator("dopri5", "acausal.solvers.rk", "DOPRI5Integrator")
register_integrator("dop853", "acausal.solvers.rk", "DOP853Integrator")


# (patterns of failures' texts, compiled when first used by re's cache, not at import)
_SOLVER_TIME = r"\b(At|Internal) t = ([-+0-9.eE]+\d)"
_MXSTEP = r",\s*(?:,\s*)?mxstep steps taken before reaching tout\."


def rephrase_solver_output(output: str, t0: float, scale: float, max_steps: int) -> str:
    """What SUNDIALS printed, in the user's terms: its times are those of the integrator
    (from 0 at the call's start, or normalised to [0, 1] for one interval): shown as the
    model's (``t0 + t scale``); and its "mxstep steps taken" (IDAS: "At t = 0.99, ,
    mxstep steps taken", the count missing) says how many."""
    def at(m: re.Match[str]) -> str:
        try:
            return f"{m.group(1)} t = {t0 + float(m.group(2)) * scale:.6g}"
        except ValueError:  # (not a number after all)
            return m.group(0)

    text = re.sub(_SOLVER_TIME, at, output)
    return re.sub(_MXSTEP, f", {max_steps} steps (the integrator's limit per output "
                  "interval) were taken before reaching the next output time.", text)


class NativeCallFailed(Exception):
    """A native integrator call that raised: its exception, the text and what the solver
    printed meanwhile (the failure's details are parsed from both)."""

    def __init__(self, exc: BaseException, output: str) -> None:
        super().__init__(str(exc))
        self.exc, self.text, self.output = exc, str(exc), output


def call_native(f: Any, args: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """One call of a CasADi integrator: interruptible (Ctrl-C raises ``KeyboardInterrupt``
    at once), its trajectory written into numpy memory
    (:func:`~acausal.pointcall.call_dense`), what the solver prints captured and returned,
    or carried by :class:`NativeCallFailed`."""
    from ..pointcall import call_dense
    from .interrupt import call_interruptibly

    with captured_output() as out:
        try:
            r = call_interruptibly(call_dense, f, args)
        except RuntimeError as exc:
            if "nterrupt" in str(exc):  # CasADi's text of a KeyboardInterrupt in a callback
                raise KeyboardInterrupt from None
            exc.args = (str(exc),)
            raise NativeCallFailed(exc, out.getvalue()) from None
    return r, out.getvalue()


def grown_states(names: list[str], x0: np.ndarray, x: np.ndarray | None
                 ) -> list[tuple[str, str]]:
    """The states whose magnitude grew more than 100-fold from ``x0`` to ``x`` (a failure
    after such growth is reported as a blow-up), fastest first: ``(name, "name: x0 ->
    x")``, five at most."""
    if x is None or not x.size or not x0.size:
        return []
    ratio = np.abs(x) / np.maximum(np.abs(x0), 1.0)
    order = [int(k) for k in np.argsort(-ratio, kind="stable") if ratio[k] > 100.0]
    return [(names[k], f"{names[k]}: {x0[k]:.3g} -> {x[k]:.3g}") for k in order[:5]]
