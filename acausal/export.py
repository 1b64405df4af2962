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

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import casadi as cs
import numpy as np

from .checks import (
    USE_SIMULATE,
    _check_tolerances,
    _number,
    check_current,
    check_signal_ranges,
    check_smooth,
    time_grid,
)
from .compiler import CompiledModel
from .errors import AcausalWarning, ArgumentError, SimulationError, user_stacklevel
from .initialize import initialize
from .names import did_you_mean, name_list
from .solvers.idas import make_integrator
from .solvers.newton import NewtonFailure

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


def _model_name(cm: CompiledModel) -> str:
    from .persist import class_name

    return class_name(cm.model)


def resolve_outputs(cm: CompiledModel, names: Any, what: str = "outputs",
                    error: type[Exception] = ArgumentError) -> list[cs.SX]:
    """The expressions (each a column, ``cs.vec``) of the named quantities: outputs
    (``cm.dae.out_names``) and parameters (``cm.dae.p_names``, which ``res[name]`` reads
    too), by dotted name. ``names`` is one name or a sequence of names
    (:func:`~acausal.names.name_list`); a name that is neither is ``error`` with the
    closest names. The one place every export (and :func:`acausal.sweep`) resolves the
    quantities it evaluates."""
    d = cm.dae
    wanted = name_list(names, what)
    out_index = d.out_index
    p_index: dict[str, int] | None = None
    exprs = []
    for n in wanted:
        k = out_index.get(n)
        if k is not None:
            exprs.append(cs.vec(d.out_expr[k]))
            continue
        if p_index is None:
            p_index = {q: j for j, q in enumerate(d.p_names)}
        j = p_index.get(n)
        if j is not None:
            exprs.append(d.p[j])
            continue
        raise error(f"{what}: {n!r} is not a quantity of {_model_name(cm)} (an output, "
                    "cm.dae.out_names, or a parameter, cm.dae.p_names)"
                    + did_you_mean(n, list(d.out_names) + list(d.p_names)))
    return exprs


def _select(cm: CompiledModel, names: Any, what: str = "outputs") -> cs.SX:
    exprs = resolve_outputs(cm, names, what)
    return cs.vertcat(*exprs) if exprs else cs.SX(0, 1)


def output_function(cm: CompiledModel, names: Sequence[str] | str,
                    name: str = "outputs") -> cs.Function:
    """``(x, z, p, t) -> y`` for the given dotted names (outputs or parameters; one string
    is one name), stacked as ``cs.vec`` of each in order."""
    d = cm.dae
    return cs.Function(name, [d.x, d.z, d.p, d.t], [_select(cm, names)],
                       ["x", "z", "p", "t"], ["y"])


def simulator(cm: CompiledModel, grid: Sequence[float], outputs: Sequence[str] = (), *,
              rtol: float = 1e-8, atol: float = 1e-10, params: Sequence[str] | None = None,
              start: Sequence[str] = (), fixed: dict[str, float] | None = None
              ) -> cs.Function:
    """A differentiable simulation: ``(x0, z0, p) -> (X, Y)`` on ``grid``.

    ``grid`` is at least two finite, strictly increasing times [s]; the run starts at
    ``grid[0]``. ``X`` holds the states at ``grid[1:]`` (one column per time), ``Y`` the
    requested outputs there (outputs or parameters by dotted name; one string is one
    name). Derivatives with respect to ``x0`` and ``p`` come from IDAS forward or adjoint
    sensitivities, so the function can sit inside an NLP (``casadi.nlpsol``).

    With ``params=["motor.R", ...]`` the function is ``(p[, s]) -> (X, Y, x0, z0)`` of
    those parameters only (the others fixed, at ``fixed=`` or the model's values; ``s``:
    the start values named in ``start``), the consistent initial values computed inside
    (:func:`acausal.differentiable.parametric_simulator`).
    """
    g = time_grid(grid, "grid", min_points=2)
    _check_tolerances(rtol, atol, None)
    # (a function of time given for a parameter, over the grid: with the model's values of
    # the parameters it may read, as the function's inputs are not known here)
    check_signal_ranges(cm, cm.parameter_values(fixed if params is not None else None), g)
    from .differentiable import guarded, parametric_simulator

    if params is not None or start:
        return parametric_simulator(cm, grid, outputs, params or (), start, rtol=rtol,
                                    atol=atol, fixed=fixed)
    y = _select(cm, outputs)
    d = cm.dae
    check_smooth(cm, "export.simulator", USE_SIMULATE)
    integ = make_integrator(d, g - g[0], rtol=rtol, atol=atol)
    x0 = cs.MX.sym("x0", d.x.numel())
    z0 = cs.MX.sym("z0", d.z.numel())
    p = cs.MX.sym("p", d.p.numel())
    p_ok = guarded(cm, p, d.p_names)
    r = integ(x0=x0, z0=z0, p=cs.vertcat(p_ok, g[0]))
    X, Z = r["xf"], r["zf"]
    if y.numel():
        f = cs.Function("outputs", [d.x, d.z, d.p, d.t], [y]).map(len(g) - 1)
        Y = f(X, Z, cs.repmat(p_ok, 1, len(g) - 1), cs.DM(g[1:]).T)
    else:
        Y = cs.MX(0, len(g) - 1)
    return cs.Function("simulator", [x0, z0, p], [X, Y], ["x0", "z0", "p"], ["X", "Y"])


def _point(cm: CompiledModel, values: Any, what: str, names: Sequence[str],
           kind: str) -> np.ndarray:
    """``values`` as one finite number per name of ``names`` (a linearisation point)."""
    try:
        a = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise ArgumentError(f"{what} must be numbers, one per {kind.split(' (')[0][:-1]}, "
                            f"got {values!r}") from None
    if sum(n != 1 for n in a.shape) > 1:
        raise ArgumentError(f"{what} must be a vector, got shape {a.shape}")
    a = a.ravel()
    if a.size != len(names):
        listed = ", ".join(names[:8]) + (", ..." if len(names) > 8 else "")
        raise ArgumentError(
            f"{what} has {a.size} value{'s' if a.size != 1 else ''}, but {_model_name(cm)} "
            f"has {len(names)} {kind}" + (f": {listed}" if names else "")
            + f"; give one value for each, in this order, or leave {what} out for the "
            "consistent initial point")
    if not np.all(np.isfinite(a)):
        k = int(np.argmax(~np.isfinite(a)))
        raise ArgumentError(f"{what}[{k}] ({names[k]}) must be finite, got {a[k]}")
    return a


def _algebraic_at(cm: CompiledModel, x: np.ndarray, z0: np.ndarray, p: np.ndarray,
                  t: float) -> np.ndarray:
    """``z`` solving the algebraic equations ``g(x, z) = 0`` at the given states (Newton
    from the initial point's ``z0``); a failure names the equations left unsolved."""
    d = cm.dae
    if not d.z.numel():
        return np.zeros(0)
    try:
        return d.algebraic_solver.solve(z0, np.concatenate([x, p, [t]])).w
    except NewtonFailure as exc:
        worst = "; ".join(f"{r:.3g} in {label}" for label, r in exc.worst(3))
        raise ArgumentError(
            f"linearize: no algebraic variables (cm.dae.z_names) solve the algebraic "
            f"equations of {_model_name(cm)} at the given x (Newton from the initial "
            f"point's z stopped with the residuals {worst}): give z as well (one value per "
            "algebraic variable, a consistent point), or an x that has one") from None


def _event_loop(cm: CompiledModel, p: np.ndarray) -> Any:
    """The event loop of a model with relations or when clauses (to read them at a
    point: a relation's value, a discrete variable's), else None."""
    if not cm.dae.relations and not cm.flat.whens:
        return None
    from .hybrid import EventLoop

    loop = _hybrid_call(cm, lambda: EventLoop(cm.dae, None, cm.flat.whens))  # type: ignore
    loop.set_parameters(p)
    return loop


def _hybrid_call(cm: CompiledModel, call: Any) -> Any:
    """``call()``, its SimulationError an ArgumentError of the linearisation."""
    try:
        return call()
    except SimulationError as exc:
        raise ArgumentError(f"linearize: {_model_name(cm)}: {exc}") from None


def _mode_at(cm: CompiledModel, loop: Any, x: np.ndarray, z: np.ndarray, p: np.ndarray,
             t: float, solve_z: bool) -> tuple[np.ndarray, np.ndarray]:
    """The relations' values at the point ``(x, z)`` (a limiter's saturation, a diode's
    conduction), with ``z`` solved again in each mode tried (``solve_z``): the
    linearisation is that of the mode the model is in there. A relation on its threshold
    is named in a warning (the point is a switch: each side has its own matrices)."""
    d = loop.frozen(p)
    for _ in range(50):
        p = loop.set_relations(p, d)
        if solve_z:
            z = _algebraic_at(cm, x, z, p, t)
        g = loop.indicators(x, z, p, t)[:, 0]
        live = loop.live(g)
        if np.array_equal(live, d):
            on = [r for r, gk in zip(cm.dae.relations, g, strict=True)
                  if abs(gk) <= 1e-10 * (1.0 + abs(gk))]
            if on:
                warnings.warn(
                    "linearize: the point lies on the switching threshold of "
                    + "; ".join(f"{r.text} [{', '.join(r.components)}]" for r in on)
                    + ": the matrices are those of the mode where "
                    + ("it is" if len(on) == 1 else "they are") + " as evaluated there "
                    "(the other side has its own); move the point off the threshold to "
                    "choose", AcausalWarning, stacklevel=user_stacklevel())
            return p, z
        d = live
    changing = [r for r, a, b in zip(cm.dae.relations, d, live, strict=True) if a != b]
    raise ArgumentError(
        f"linearize: the relations of {_model_name(cm)} do not settle at this point ("
        + "; ".join(f"{r.text} [{', '.join(r.components)}]" for r in changing)
        + " keep changing with the algebraic variables): give a point inside one mode")


def _start_at(cm: CompiledModel, loop: Any, x: np.ndarray, z: np.ndarray, p: np.ndarray,
              t: float, z_given: bool, given: set[str]) -> tuple[np.ndarray, np.ndarray]:
    """The discrete variables at a point ``x`` given to :func:`linearize`: those of a
    start there (the initial event iteration of a run started at ``x``), from the start
    values ``p`` (``params=`` included). The clauses declared ``when(..., initial=True)``
    run where their condition holds at ``x``: a relay outside its band takes that side's
    value, whatever it had at the initial point. Where none of a variable's clauses holds
    (inside the band) it keeps its start value, which is history: named in a warning,
    unless ``params=`` gave it (then it is the user's choice)."""
    from .hybrid import HybridState

    # (the relations as they are at x, also on a threshold, as _mode_at reads them after)
    p = loop.set_relations(p, loop.live(loop.indicators(x, z, p, t)[:, 0]))
    post = _hybrid_call(cm, lambda: loop.iterate(HybridState(t, x, z, p), "initial"))
    if not np.array_equal(post.x, x):
        moved = [n for n, a, b in zip(cm.dae.x_names, x, post.x, strict=True) if a != b]
        fired = [c for c in loop.events[-1].changes if c.startswith("when")]
        raise ArgumentError(
            f"linearize: at this x, a when clause declared initial=True reinitialises "
            f"{', '.join(moved)} ({'; '.join(fired)}): the model jumps away from this "
            "point at once; give a point where it does not")
    held: dict[int, list[Any]] = {}  # a discrete variable: its clauses that run at a start
    for w in loop.whens:
        if w.initial and w.condition is not None:
            for a in w.actions:
                if a.kind == "assign":
                    held.setdefault(a.index, []).append(w)
    names = cm.dae.p_names
    kept = [k for k, ws in held.items() if names[k] not in given
            and not any(w.condition(post.p, t) > 0.5 for w in ws)
            and post.p[k] in _would_set(loop, ws, k, post)]
    sampled = _between_ticks(loop, t, given, names)
    if sampled:
        warnings.warn(
            f"linearize: t = {t:g} s is between the ticks of the clock"
            f"{'s' if len({w.origin for w, _ in sampled}) > 1 else ''} of "
            + ", ".join(sorted({w.origin for w, _ in sampled}))
            + ": the sampled values "
            + ", ".join(f"{names[k]} = {post.p[k]:.6g}" for _, k in sampled)
            + " are what a run started at this t holds (their start values), not a sample "
            "of this x; choose them with params={" + ", ".join(
                f"'{names[k]}': ..." for _, k in sampled) + "}, or give t at a tick",
            AcausalWarning, stacklevel=user_stacklevel())
    if kept:
        warnings.warn(
            "linearize: at this x, no when clause that sets "
            + "; ".join(f"{names[k]} [{', '.join(sorted({w.origin for w in held[k]}))}]"
                        for k in kept)
            + " holds (as inside a relay's band, where the value is history), so "
            + ("it keeps its start value " if len(kept) == 1 else "they keep their start "
               "values ")
            + ", ".join(f"{names[k]} = {post.p[k]:.6g}" for k in kept)
            + "; choose with params={" + ", ".join(f"'{names[k]}': ..." for k in kept)
            + "}", AcausalWarning, stacklevel=user_stacklevel())
    return post.p, (z if z_given else post.z)


def _between_ticks(loop: Any, t: float, given: set[str],
                   names: Sequence[str]) -> list[tuple[Any, int]]:
    """The clock clauses not ticking at ``t`` and the discrete variables they assign that
    ``params=`` does not give: between ticks such a value is history (the last sample),
    which a linearisation at a point cannot know. (The clocks of parameters are resolved
    with the run's values by :func:`_event_loop`.)"""
    out = []
    for w in loop.whens:
        if w.clock is None:
            continue
        k = (t - float(w.clock.start)) / float(w.clock.interval)
        if k >= -1e-9 and abs(k - round(k)) <= 1e-9 * max(1.0, abs(k)):
            continue  # (a tick: the clause runs at this start)
        out += [(w, a.index) for a in w.actions
                if a.kind == "assign" and names[a.index] not in given]
    return out


def _would_set(loop: Any, whens: list[Any], k: int, s: Any) -> set[float]:
    """The values the clauses ``whens`` would give the discrete variable ``p[k]`` at the
    point ``s``. Its start value among them is a branch one of them chose (a relay's 0 or
    1: history); a start value none gives is a mode of its own (a friction element's
    "not yet decided", read from the state), not history."""
    out = set()
    for w in whens:
        for a in w.actions:
            if a.kind == "assign" and a.index == k:
                now = loop._named(s.x, s.z, s.p, s.t, a.names)
                pre = loop._named(s.x, s.z, s.p, s.t, a.pre_names)
                out.add(float(a.value(now, pre, s.p, s.t)))
    return out


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


def linearize(cm: CompiledModel, inputs: Sequence[str] | str = (),
              outputs: Sequence[str] | str = (), *,
              x: np.ndarray | None = None, z: np.ndarray | None = None,
              params: dict[str, float] | None = None, t: float = 0.0) -> Linearization:
    """State-space linearisation with the named parameters as inputs.

    ``inputs`` are parameters, ``outputs`` outputs or parameters, by dotted name (one
    string is one name). Without ``x``/``z`` the consistent initial point is used; given,
    ``x`` holds one value per state (``cm.dae.x_names``, in that order) and ``z`` one per
    algebraic variable (``cm.dae.z_names``). With ``x`` alone, ``z`` solves the algebraic
    equations ``g(x, z) = 0`` at that ``x`` (Newton from the initial point; an error names
    the equations if it does not converge). The algebraic variables are eliminated:
    ``dz = -g_z^{-1} (g_x dx + g_u du)``.

    A hybrid model is linearised in its mode at the point: the relations are evaluated
    there, and at a given ``x`` the discrete variables are those of a start there (the
    ``when(..., initial=True)`` clauses whose condition holds run, a relay outside its
    band switches by its own condition; a sample clock ticking at ``t`` runs its
    clauses); one that none of its clauses sets there (a relay
    inside its band) keeps its start value, or the value ``params=`` gives it, and a
    warning names it when ``params=`` does not.
    """
    d = cm.dae
    in_names = name_list(inputs, "inputs")
    out_names = name_list(outputs, "outputs")
    t_lin = _number(t, "t")
    assert t_lin is not None
    if x is not None:
        x = _point(cm, x, "x", d.x_names, "states (cm.dae.x_names)")
    if z is not None:
        z = _point(cm, z, "z", d.z_names, "algebraic variables (cm.dae.z_names)")
    p_index = {n: k for k, n in enumerate(d.p_names)}
    for name in in_names:
        if name not in p_index:
            raise ArgumentError(f"inputs: {name!r} is not a parameter of {_model_name(cm)}; the "
                                "inputs of a linearisation are parameters (cm.dae.p_names)"
                                + did_you_mean(name, d.p_names))
    y = _select(cm, out_names)
    check_current(cm, "linearize", params)
    pv = start_p = cm.parameter_values(params)
    check_signal_ranges(cm, pv, [t_lin])  # (a function of time given for a parameter)
    loop = _event_loop(cm, pv)
    z_given, x_given = z is not None, x is not None
    if x is None or z is None:
        if loop is not None:  # the relations and discrete variables of the initial point
            from .hybrid import initial_mode

            post, init = _hybrid_call(cm, lambda: initial_mode(cm, loop, pv, t_lin))
            pv, init.x0, init.z0 = post.p, post.x, post.z
        else:
            init = initialize(cm, pv, t_lin)
        if x is not None and z is None:  # the algebraic variables at this x, not the
            z = _algebraic_at(cm, x, init.z0, pv, t_lin)  # initial point's
        x = init.x0 if x is None else x
        z = init.z0 if z is None else z
    if loop is not None:
        if x_given:  # the discrete variables of a start at this point, not at x0
            pv, z = _start_at(cm, loop, x, z, start_p, t_lin, z_given, set(params or ()))
        pv, z = _mode_at(cm, loop, x, z, pv, t_lin, solve_z=not z_given)
    ui = [p_index[n] for n in in_names]
    u = cs.vertcat(*[d.p[k] for k in ui]) if ui else cs.SX(0, 1)
    jac = cs.Function(
        "lin", [d.x, d.z, d.p, d.t],
        [cs.jacobian(d.ode, d.x), cs.jacobian(d.ode, d.z), cs.jacobian(d.ode, u),
         cs.jacobian(d.alg, d.x), cs.jacobian(d.alg, d.z), cs.jacobian(d.alg, u),
         cs.jacobian(y, d.x), cs.jacobian(y, d.z), cs.jacobian(y, u)],
    )
    fx, fz, fu, gx, gz, gu, hx, hz, hu = (np.asarray(m) for m in jac(x, z, pv, t_lin))
    if gz.size:
        try:
            dzdx = -np.linalg.solve(gz, gx)
            dzdu = -np.linalg.solve(gz, gu)
        except np.linalg.LinAlgError:
            raise ArgumentError(
                "the algebraic equations do not determine the algebraic variables at this "
                "point (their Jacobian g_z is singular): give a consistent point (x, z), or "
                "leave x and z out for the consistent initial point") from None
    else:
        dzdx = np.zeros((0, fx.shape[1]))
        dzdu = np.zeros((0, fu.shape[1]))
    A = fx + fz @ dzdx
    B = fu + fz @ dzdu
    C = hx + hz @ dzdx
    D = hu + hz @ dzdu
    return Linearization(A, B, C, D, list(d.x_names), in_names, out_names,
                         np.asarray(x, float), np.asarray(z, float), pv, t_lin)
