"""Consistent initial values, with Modelica's ``start``/``fixed`` semantics.

The unknowns are the DAE's states ``x`` and algebraic variables ``z`` at ``t0``. The
equations are the algebraic equations ``g(x, z) = 0`` (which include every differentiated,
hidden constraint of the index reduction), one equation ``v = start`` per variable with
``fixed=True``, and the user's initial equations (``der(w) == 0`` for a steady state). The
system needs as many conditions as there are states: when there are fewer, the start values
of further states are used as initial values in order (what Modelica tools do; the report
names them); when they are more, or structurally inconsistent, an error names them.
Non-fixed start values are the Newton guesses.

:func:`initial_system` builds this problem once per DAE with the start values as symbolic
inputs (so a run with other start values or parameters reuses it, and an exported model
can re-solve it); :func:`initialize` solves it.
"""

from __future__ import annotations

import weakref
from dataclasses import field
from typing import TYPE_CHECKING, Any

import casadi as cs
import numpy as np

from .csr import CSR
from .dae import SemiExplicitDAE
from .errors import InitializationError
from .records import record
from .solvers.newton import AlgebraicSystem, NewtonFailure
from .structure.matching import match

if TYPE_CHECKING:
    from .compiler import CompiledModel

__all__ = ["InitialValues", "InitialSystem", "initial_system", "initialize",
           "consistent_algebraic"]


@record
class InitialValues:
    """Consistent initial values and what determined them.

    Attributes
    ----------
    x0, z0 : ndarray
        States and algebraic variables at the start time.
    conditions : list of str
        Readable conditions used (fixed starts, initial equations).
    defaulted : list of str
        Readable ``name = value (start value)`` of states whose start value completed the
        conditions although not fixed.
    fixed : list of str
        Names of the variables whose fixed start value is a condition.
    defaulted_names : list of str
        Names of the defaulted states.
    initial_equations : int
        Number of user initial equations used.
    residual : float
        Largest residual of the solved initial system.
    """

    x0: np.ndarray
    z0: np.ndarray
    conditions: list[str] = field(default_factory=list)
    defaulted: list[str] = field(default_factory=list)
    fixed: list[str] = field(default_factory=list)
    defaulted_names: list[str] = field(default_factory=list)
    initial_equations: int = 0
    residual: float = 0.0


@record
class InitialSystem:
    """The initial problem ``F(w; s, p, t0) = 0`` in ``w = [x; z]``.

    Attributes
    ----------
    w : casadi.SX
        Unknowns: the DAE's states then algebraic variables.
    residual : casadi.SX
        The rows: algebraic equations, ``v - s_v`` for every condition on a start value,
        the user's initial equations.
    start : casadi.SX
        Symbols of the start values in the rows (one per entry of ``start_names``).
    start_names : list of str
        The variable of each start symbol (fixed variables, then defaulted states).
    labels : list of str
        One readable label per row.
    fixed, defaulted : list of str
        Variables whose start value is a condition because it is fixed / because the
        conditions needed completing.
    n_initial_equations : int
        Rows that are user initial equations.
    """

    w: cs.SX
    residual: cs.SX
    start: cs.SX
    start_names: list[str]
    labels: list[str]
    fixed: list[str]
    defaulted: list[str]
    n_initial_equations: int
    _solver: AlgebraicSystem | None = None

    def solver(self, dae: SemiExplicitDAE) -> AlgebraicSystem:
        """Newton on the rows (arguments ``[s; p; t0]``), built once."""
        if self._solver is None:
            self._solver = AlgebraicSystem(self.residual, self.w,
                                           cs.vertcat(self.start, dae.p, dae.t),
                                           self.labels, jacobian="exact")
        return self._solver


def _augment(inc_rows: list[list[int]], row: int, assign_col: list[int]) -> bool:
    """Augmenting path from ``row`` in a bipartite graph (iterative DFS)."""
    seen: set[int] = set()
    frames: list[list] = [[row, 0, -1]]
    while frames:
        top = frames[-1]
        r, pos, _ = top
        cols = inc_rows[r]
        if pos == 0:
            for c in cols:
                if assign_col[c] < 0:
                    assign_col[c] = r
                    for rr, _, cc in frames[:-1]:
                        assign_col[cc] = rr
                    return True
        while pos < len(cols) and cols[pos] in seen:
            pos += 1
        if pos == len(cols):
            frames.pop()
            continue
        c = cols[pos]
        top[1] = pos + 1
        top[2] = c
        seen.add(c)
        frames.append([assign_col[c], 0, -1])
    return False


def _fast_path(cm: CompiledModel, dae: SemiExplicitDAE) -> bool:
    """When the fixed starts are all on states (and there are no initial equations), the
    states are their start values and only the algebraic equations remain, for z."""
    state_set = set(dae.x_names)
    return not cm.flat.initial_equations and all(
        v.name in state_set for v in cm.system.variables if v.fixed)


def _release_advice(inc_rows: list[list[int]], n_w: int, nz: int, labels: list[str],
                    declared: dict[str, str]) -> str:
    """What to do about over-determined initial conditions: how many of them the model's
    equations already determine, and one set of conditions whose removal leaves the rest
    solvable (the rows left out by a matching that takes the algebraic equations first,
    then the conditions in order; augmenting paths never drop a matched row). A loop that
    holds several elastic coordinates over-determines several fixed starts at once, and
    'remove fixed=True from one of them' was not enough. ``declared``: the variable (a
    vector's name) that holds the ``fixed`` flag of each scalar."""
    assign_col = [-1] * n_w
    left = [r for r in range(len(inc_rows)) if not _augment(inc_rows, r, assign_col)]
    names = [labels[r].removesuffix(" = start value (fixed)") for r in left if r >= nz]
    if not names or len(names) < len(left):  # an equation of the model itself left out
        return ". Remove fixed=True from one of them (or an initial equation)."
    owners = list(dict.fromkeys(declared.get(n, n) for n in names))
    whole = ("" if owners == names else
             "; fixed=True/False holds for a whole variable: "
             + ", ".join(f"{v}.fixed = False" for v in owners))
    if len(names) == 1:
        return (", which already determine one of them. Remove fixed=True from one of them "
                f"(its start value is then a guess), e.g. from {names[0]}{whole} (or remove "
                "an initial equation).")
    return (f", which already determine {len(names)} of them: releasing one is not "
            f"enough. Make {len(names)} of them guesses (fixed=False), e.g. "
            + ", ".join(names) + whole + " (or remove initial equations).")


def _declared(variables: Any, names: list[str]) -> dict[str, str]:
    """The declared variable (``component.q`` of the scalar ``component.q_1``) of each
    of ``names``, where it differs."""
    wanted, out = set(names), {}
    for v in variables:
        decl = v.decl
        if v.name in wanted and decl is not None and v.origin and getattr(decl, "name", ""):
            out[v.name] = f"{v.origin}.{decl.name}"
    return out


def initial_system(cm: CompiledModel, dae: SemiExplicitDAE | None = None) -> InitialSystem:
    """The initial problem of ``dae`` (default ``cm.dae``), built once per DAE."""
    dae = dae or cm.dae
    per_model = _SYSTEMS.setdefault(cm, {})
    hit = per_model.get(id(dae))
    if hit is not None:
        return hit
    sys = cm.system
    nx, nz = int(dae.x.numel()), int(dae.z.numel())
    w = cs.vertcat(dae.x, dae.z)
    out_index = dae.out_index
    rows: list[cs.SX] = [dae.alg[k] for k in range(nz)]
    labels: list[str] = _algebraic_labels(cm, dae)
    start_syms: list[cs.SX] = []
    start_names: list[str] = []
    fixed: list[str] = []
    for v in sys.variables:
        if v.fixed and v.name not in fixed:
            fixed.append(v.name)
            s = cs.SX.sym(f"start({v.name})")
            start_syms.append(s)
            start_names.append(v.name)
            rows.append(dae.out_expr[out_index[v.name]] - s)
            labels.append(f"{v.name} = start value (fixed)")
    # initial equations (der(..) symbols replaced by their expressions)
    params = set(dae.p_names)
    n_ieq = 0
    for eq in cm.flat.initial_equations:
        res = eq.res
        syms = cs.symvar(res)
        missing = [s.name() for s in syms
                   if s.name() not in out_index and s.name() not in params and s.name() != "time"]
        if missing:
            raise InitializationError(
                f"initial equation {eq.describe()} uses {missing}, which the model does not "
                "compute"
            )
        olds = [s for s in syms if s.name() in out_index]
        news = [dae.out_expr[out_index[s.name()]] for s in olds]
        rows.append(cs.substitute(res, cs.vertcat(*olds), cs.vertcat(*news)) if olds else res)
        labels.append(f"initial equation {eq.describe()}")
        n_ieq += 1

    # structure: which rows can be matched to which unknowns
    inc_rows = _incidence(rows, w)
    n_w = nx + nz
    assign_col = [-1] * n_w
    mat = CSR.from_coo([i for i, r in enumerate(inc_rows) for _ in r],
                       [c for r in inc_rows for c in r], None, (len(rows), n_w))
    var_of_row, _ = match(mat)
    unmatched_rows = [i for i, c in enumerate(var_of_row) if c < 0]
    if unmatched_rows:
        # the conditions in conflict: the rows an unmatched one reaches through the
        # unknowns it holds and the rows matched to them (the over-determined part), the
        # start values and initial equations among them named (not only the one row the
        # matching happened to leave out)
        row_of = {c: r for r, c in enumerate(var_of_row) if c >= 0}
        part, todo = set(unmatched_rows), list(unmatched_rows)
        while todo:
            for c in inc_rows[todo.pop()]:
                r = row_of.get(c)
                if r is not None and r not in part:
                    part.add(r)
                    todo.append(r)
        bad = [labels[i] for i in sorted(part) if i >= nz] or [labels[i] for i in sorted(part)]
        raise InitializationError(
            "the initial conditions are over-determined or inconsistent: " + "; ".join(bad)
            + " cannot hold together with the model's equations"
            + _release_advice(inc_rows, n_w, nz, labels, _declared(sys.variables, fixed)))
    for i, c in enumerate(var_of_row):
        assign_col[c] = i
    defaulted: list[str] = []
    if len(rows) < n_w:
        # complete with start values of states, in order
        for k in range(nx):
            if len(rows) == n_w:
                break
            name = dae.x_names[k]
            new_row = len(rows)
            inc_rows.append([k])
            if _augment(inc_rows, new_row, assign_col):
                s = cs.SX.sym(f"start({name})")
                start_syms.append(s)
                start_names.append(name)
                rows.append(dae.x[k] - s)
                labels.append(f"{name} = start value (defaulted)")
                defaulted.append(name)
            else:
                inc_rows.pop()
        if len(rows) < n_w:
            free = [w[c].name() for c in range(n_w) if assign_col[c] < 0]
            raise InitializationError(
                "the initial conditions are under-determined: nothing fixes "
                + ", ".join(free)
                + "; give start values with fixed=True or an initial equation"
            )
    out = InitialSystem(w, cs.vertcat(*rows) if rows else cs.SX(0, 1),
                        cs.vertcat(*start_syms) if start_syms else cs.SX(0, 1), start_names,
                        labels, fixed, defaulted, n_ieq)
    per_model[id(dae)] = out
    return out


_SYSTEMS: weakref.WeakKeyDictionary[Any, dict[int, InitialSystem]] = \
    weakref.WeakKeyDictionary()


def _incidence(expr_rows: list[cs.SX], w: cs.SX) -> list[list[int]]:
    if not expr_rows or w.numel() == 0:
        return [[] for _ in expr_rows]
    ptr, col = cs.jacobian_sparsity(cs.vertcat(*expr_rows), w).get_crs()
    return [sorted(col[ptr[i]: ptr[i + 1]]) for i in range(len(expr_rows))]


def start_values(cm: CompiledModel, start: dict[str, float] | None = None) -> dict[str, float]:
    """The model's start values with per-run overrides (names checked)."""
    values = dict(cm.start_values)
    if start:
        unknown = [k for k in start if k not in values]
        if unknown:
            import difflib

            hints = []
            for k in unknown:
                close = difflib.get_close_matches(k, list(values), n=3, cutoff=0.6)
                hints.append(f"{k!r}" + (f" (did you mean {', '.join(close)}?)" if close
                                         else ""))
            raise InitializationError(
                "start values given for " + "; ".join(hints) + ", which are not variables "
                "of the compiled model (aliases of another variable and quantities the "
                "model computes explicitly take no start value)")
        values.update({k: float(v) for k, v in start.items()})
    return values


def initialize(cm: CompiledModel, p: np.ndarray, t0: float = 0.0,
               dae: SemiExplicitDAE | None = None,
               start: dict[str, float] | None = None) -> InitialValues:
    """Consistent ``(x0, z0)`` for the compiled model ``cm`` at time ``t0``.

    ``start`` overrides start values for this solve (fixed ones are conditions, the
    others guesses).
    """
    dae = dae or cm.dae
    nx, nz = int(dae.x.numel()), int(dae.z.numel())
    values = start_values(cm, start)
    fixed = [v.name for v in cm.system.variables if v.fixed]
    if _fast_path(cm, dae):
        x0 = np.array([values[n] for n in dae.x_names], dtype=float)
        z_guess = np.array([values.get(n, 0.0) for n in dae.z_names], dtype=float)
        z0 = consistent_algebraic(dae, x0, z_guess, p, t0) if nz else np.zeros(0)
        fixed_set = set(fixed)
        defaulted = [n for n in dae.x_names if n not in fixed_set]
        return InitialValues(
            x0, z0, [f"{n} = {values[n]} (fixed start)" for n in fixed],
            [f"{n} = {values[n]} (start value)" for n in defaulted], fixed, defaulted, 0, 0.0)
    isys = initial_system(cm, dae)
    guess = np.array([values.get(n, 0.0) for n in dae.x_names]
                     + [values.get(n, 0.0) for n in dae.z_names], dtype=float)
    s = np.array([values[n] for n in isys.start_names], dtype=float)
    try:
        sol = isys.solver(dae).solve(guess, np.concatenate([s, p, [t0]]),
                                     what="consistent initial values")
    except NewtonFailure as failure:
        raise _diagnosed(cm, failure, values, isys.fixed, p) from None
    conds = [f"{n} = {values[n]} (fixed start)" for n in isys.fixed]
    conds += [lab for lab in isys.labels if lab.startswith("initial equation")]
    return InitialValues(sol.w[:nx], sol.w[nx:], conds,
                         [f"{n} = {values[n]} (start value)" for n in isys.defaulted],
                         list(isys.fixed), list(isys.defaulted), isys.n_initial_equations,
                         sol.residual)


def _diagnosed(cm: CompiledModel, failure: NewtonFailure, values: dict[str, float],
               fixed: list[str], p: np.ndarray) -> InitializationError:
    """The Newton failure, explained by the domain passes where they can (a kinematic loop
    that cannot close names its cut joint, the loop and the miss in metres)."""
    notes = []
    for dp in cm.flat.domain_passes.values():
        note = dp.diagnose_initial_failure(values, set(fixed),
                                           dict(zip(cm.dae.p_names, p, strict=True)))
        if note:
            notes.append(note)
    if not notes:
        return failure
    return InitializationError("\n".join(notes) + "\n(" + str(failure) + ")")


def _algebraic_labels(cm: CompiledModel, dae: SemiExplicitDAE) -> list[str]:
    """A label per algebraic equation: the equation as written, with its component."""
    return list(dae.alg_labels) or [f"algebraic equation {k}" for k in range(len(dae.z_names))]


def consistent_algebraic(dae: SemiExplicitDAE, x: np.ndarray, z: np.ndarray, p: np.ndarray,
                         t: float) -> np.ndarray:
    """``alg(x, z) = 0`` for ``z`` given the states (Newton from ``z``).

    A large block (a long chain's mass matrix) uses a difference Jacobian (see
    :class:`~acausal.solvers.newton.AlgebraicSystem`).
    """
    if dae.z.numel() == 0:
        return np.zeros(0)
    solver = dae.algebraic_solver
    return solver.solve(z, np.concatenate([x, p, [t]]),
                        what="consistent algebraic variables for the given states").w
