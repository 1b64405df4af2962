"""A differentiable simulation of a compiled model as a function of named parameters.

:func:`parametric_simulator` (``ac.export.simulator(cm, grid, outputs, params=[...])``)
returns one CasADi function ``(p[, s]) -> (X, Y, x0, z0)``:

* ``p`` are the named free parameters only (every other parameter keeps its value in the
  model, or the value given in ``fixed=``);
* ``s`` (only with ``start=[...]``) are named start values: a fixed start value stays a
  condition with the new value;
* the consistent initial values ``x0``, ``z0`` are computed **inside** the function: the
  initial problem of :mod:`acausal.initialize` (algebraic equations, fixed start values,
  initial equations) is solved by a CasADi Newton rootfinder, warm-started at the solution
  for the default parameters. Its derivatives come from the implicit function theorem,
  so ``dX/dp`` includes the change of the initial point (a steady-state start,
  ``der(w) == 0``, moves with the parameters);
* ``X`` are the states at ``grid[1:]`` (IDAS; derivatives by IDAS forward or adjoint
  sensitivities), ``Y`` the named outputs there.

Limits: one smooth segment with the initial state choice (no time or state events, no
dynamic state re-selection): use :func:`acausal.simulate` for those.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import casadi as cs
import numpy as np

from .checks import USE_SIMULATE, check_current, check_smooth, time_grid
from .compiler import CompiledModel
from .errors import AcausalError, ArgumentError
from .initialize import initial_system, initialize, start_values
from .names import name_list
from .solvers.idas import make_integrator

__all__ = ["parametric_simulator", "initial_value_function"]


def _check_names(kind: str, names: Sequence[str], known: Sequence[str]) -> list[int]:
    import difflib

    pos = {n: k for k, n in enumerate(known)}
    bad = [n for n in names if n not in pos]
    if bad:
        hints = []
        for n in bad:
            close = difflib.get_close_matches(n, list(known), n=3, cutoff=0.6)
            hints.append(f"{n!r}" + (f" (did you mean {', '.join(close)}?)" if close else ""))
        raise AcausalError(f"unknown {kind}: " + "; ".join(hints))
    _once(kind, names)
    return [pos[n] for n in names]


def _once(kind: str, names: Sequence[str]) -> None:
    """Each name once: two inputs of one quantity would be added (:func:`_embed`)."""
    twice = sorted(n for n, k in Counter(names).items() if k > 1)
    if twice:
        raise AcausalError(f"{kind} given twice: {', '.join(map(repr, twice))}")


def guarded(cm: CompiledModel, p: cs.MX, names: Sequence[str]) -> cs.MX:
    """``p`` (the values of the parameters ``names``, an input of a function) with checks
    attached: each entry finite and in its declared range (``C > 0``). A call with a value
    outside fails with CasADi's assertion error, which names the parameter and its
    component, where the values would otherwise be used as given (a negative capacitance
    runs away). The checks do not change the value or its derivatives.

    Parameters of one declared range are checked together (one assertion per range, 0.03 s
    for 4 000 parameters where one per parameter took 0.7 s); the message names each of
    them up to :data:`_NAMED` and counts the rest."""
    from .component import Parameter, _bound_text

    declared = {q.name: q for q in cm.system.parameters}
    groups: dict[tuple, list[int]] = {}
    for k, name in enumerate(names):
        q = declared.get(name)
        d = q.decl if q is not None and isinstance(q.decl, Parameter) else None
        spec = ((d.min, d.min_inclusive, d.max, d.max_inclusive, d.nonzero, d.unit)
                if d is not None else (None, True, None, True, False, ""))
        groups.setdefault(spec, []).append(k)
    out = p
    for (lo, lo_in, hi, hi_in, nonzero, unit), at in groups.items():
        v = p[at]
        ok = cs.fabs(v) < cs.inf  # (false for inf and NaN)
        if lo is not None:
            ok = cs.logic_and(ok, v >= lo if lo_in else v > lo)
        if hi is not None:
            ok = cs.logic_and(ok, v <= hi if hi_in else v < hi)
        if nonzero:
            ok = cs.logic_and(ok, v != 0)
        need = ", ".join(filter(None, ["finite", _bound_text(lo, lo_in, hi, hi_in, unit),
                                       "nonzero" if nonzero else ""]))
        if len(at) == 1:
            q = declared.get(names[at[0]])
            owner = (f" (parameter {q.decl.name!r} of {q.owner._describe()})"
                     if q is not None and q.owner is not None else "")
            what = f"parameter {names[at[0]]!r}{owner} must be"
        else:
            listed = ", ".join(repr(names[k]) for k in at[:_NAMED])
            more = f" and {len(at) - _NAMED} more" if len(at) > _NAMED else ""
            what = f"each of the parameters {listed}{more} must be"
        out = out.attachAssert(cs.mmin(ok) if len(at) > 1 else ok, f"{what} {need}")
    return out


#: parameters named in the message of a range checked together (:func:`guarded`)
_NAMED = 8


def _embed(base: np.ndarray, idx: Sequence[int], sym: cs.MX) -> cs.MX:
    """``base`` with the entries ``idx`` replaced by the symbols ``sym`` (a selection
    matrix, so the result stays one MX expression)."""
    if not len(base):
        return cs.MX(0, 1)
    E = cs.DM(len(base), len(idx))
    for j, k in enumerate(idx):
        E[k, j] = 1.0
    rest = np.asarray(base, dtype=float).copy()
    rest[list(idx)] = 0.0
    return cs.DM(rest) + cs.mtimes(E, sym)


def initial_value_function(cm: CompiledModel, params: Sequence[str],
                           start: Sequence[str] = (), *, t0: float = 0.0,
                           fixed: dict[str, float] | None = None) -> cs.Function:
    """``(p[, s]) -> (x0, z0)``: consistent initial values as a differentiable function of
    the named parameters (and start values), by a Newton rootfinder on the initial
    problem."""
    d = cm.dae
    params, start = name_list(params, "params"), name_list(start, "start")
    ip = _check_names("parameter(s)", params, d.p_names)
    isys = initial_system(cm)
    base_p = cm.parameter_values(fixed)
    values = start_values(cm)
    s_names = list(isys.start_names)
    unknown_start = [n for n in start if n not in values]
    if unknown_start:
        start_values(cm, {n: 0.0 for n in start})  # raises with the suggestions
    _once("start value(s)", start)
    # start values that the initial problem does not use (a state that is not fixed and
    # not needed to complete the conditions) are only guesses: they cannot be inputs
    unused = [n for n in start if n not in s_names]
    if unused:
        raise AcausalError(
            f"the start value(s) of {unused} are not conditions of the initial problem "
            f"(only guesses); the conditions are the start values of {s_names}")
    guess = initialize(cm, base_p, t0)
    w_guess = np.concatenate([guess.x0, guess.z0])
    nw = int(isys.w.numel())
    p_sym = cs.MX.sym("p", len(ip))
    s_sym = cs.MX.sym("s", len(start))
    p_full = _embed(base_p, ip, p_sym)
    s_base = np.array([values[n] for n in s_names], dtype=float)
    s_full = _embed(s_base, [s_names.index(n) for n in start], s_sym)
    inputs = [p_sym] + ([s_sym] if start else [])
    names = ["p"] + (["s"] if start else [])
    nx = int(d.x.numel())
    if nw == 0:
        w0 = cs.MX(0, 1)
    else:
        G = cs.Function("initial_residual", [isys.w, cs.vertcat(isys.start, d.p, d.t)],
                        [isys.residual])
        rf = cs.rootfinder("initial_values", "newton", G,
                           {"abstol": 1e-12, "abstolStep": 1e-14, "max_iter": 50,
                            "error_on_fail": True})
        w0 = rf(cs.DM(w_guess), cs.vertcat(s_full, p_full, t0))
    return cs.Function("initial_values", inputs, [w0[:nx], w0[nx:]], names, ["x0", "z0"])


def parametric_simulator(cm: CompiledModel, grid: Sequence[float], outputs: Sequence[str] = (),
                         params: Sequence[str] = (), start: Sequence[str] = (), *,
                         rtol: float = 1e-8, atol: float = 1e-10,
                         fixed: dict[str, float] | None = None,
                         name: str = "simulator") -> cs.Function:
    """``(p[, s]) -> (X, Y, x0, z0)`` on ``grid`` (see the module documentation).

    Parameters
    ----------
    cm : CompiledModel
    grid : sequence of float
        Output times [s]; the run starts at ``grid[0]``.
    outputs : sequence of str
        Dotted names evaluated at ``grid[1:]`` (``Y``, one row per name; vector quantities
        take as many rows as they have entries).
    params : sequence of str
        The free parameters, in the order of the input ``p``.
    start : sequence of str
        Start values given as the input ``s`` (conditions of the initial problem).
    rtol, atol : float
        IDAS tolerances (also those of its sensitivities).
    fixed : dict, optional
        Values of the other parameters (default: the model's).
    """
    g = time_grid(grid, "grid", min_points=2)
    params, start = name_list(params, "params"), name_list(start, "start")
    d = cm.dae
    check_smooth(cm, "the differentiable simulator (one smooth segment)", USE_SIMULATE)
    check_current(cm, None)
    both = sorted(set(params) & set(fixed or {}))
    if both:
        raise ArgumentError(
            f"{', '.join(both)} {'is' if len(both) == 1 else 'are'} given in params= (an "
            "input of the function) and in fixed= (a value held fixed): give each parameter "
            "in one of them")
    init = initial_value_function(cm, params, start, t0=float(g[0]), fixed=fixed)
    ip = _check_names("parameter(s)", params, d.p_names)
    base_p = cm.parameter_values(fixed)
    p_sym = cs.MX.sym("p", len(ip))
    s_sym = cs.MX.sym("s", len(start))
    p_ok = guarded(cm, p_sym, params)
    p_full = _embed(base_p, ip, p_ok)
    args = [p_sym] + ([s_sym] if start else [])
    x0, z0 = init(*([p_ok] + ([s_sym] if start else [])))
    integ = make_integrator(d, g - g[0], rtol=rtol, atol=atol, name=f"{name}_idas")
    r = integ(x0=x0 if d.x.numel() else 0.0, z0=z0, p=cs.vertcat(p_full, g[0]))
    n = len(g) - 1
    X = r["xf"] if d.x.numel() else cs.MX(0, n)
    Z = r["zf"] if d.z.numel() else cs.MX(0, n)
    if outputs:
        from .export import output_function

        f = output_function(cm, outputs).map(n)
        Y = f(X, Z, cs.repmat(p_full, 1, n), cs.DM(g[1:]).T)
    else:
        Y = cs.MX(0, n)
    names = ["p"] + (["s"] if start else [])
    return cs.Function(name, args, [X, Y, x0, z0], names, ["X", "Y", "x0", "z0"])
