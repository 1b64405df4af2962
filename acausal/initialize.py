"""Consistent initial values, with Modelica's ``start``/``fixed`` semantics.

The unknowns are the DAE's states ``x`` and algebraic variables ``z`` at ``t0``. The
equations are the algebraic equations ``g(x, z) = 0`` (which include every differentiated,
hidden constraint of the index reduction), one equation ``v = start`` per variable with
``fixed=True``, and the user's initial equations (``der(w) == 0`` for a steady state). The
system needs as many conditions as there are states: when there are fewer, the start values
of further states are used as initial values in order (what Modelica tools do; the report
names them); when they are more, or structurally inconsistent, an error names them.
Non-fixed start values are the Newton guesses.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import casadi as cs
import numpy as np
import scipy.sparse as sp

from .dae import SemiExplicitDAE
from .errors import InitializationError
from .solvers.newton import AlgebraicSystem
from .structure.matching import match

if TYPE_CHECKING:
    from .compiler import CompiledModel

__all__ = ["InitialValues", "initialize", "consistent_algebraic"]


@dataclass
class InitialValues:
    x0: np.ndarray
    z0: np.ndarray
    conditions: list[str] = field(default_factory=list)
    defaulted: list[str] = field(default_factory=list)
    residual: float = 0.0


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


def initialize(cm: CompiledModel, p: np.ndarray, t0: float = 0.0,
               dae: SemiExplicitDAE | None = None,
               guess: dict[str, float] | None = None) -> InitialValues:
    """Consistent ``(x0, z0)`` for the compiled model ``cm`` at time ``t0``."""
    dae = dae or cm.dae
    sys = cm.system
    nx, nz = int(dae.x.numel()), int(dae.z.numel())
    w = cs.vertcat(dae.x, dae.z)
    start = dict(cm.start_values)
    if guess:
        start.update(guess)

    # fast path: when the fixed starts are all on states, the states are their start values
    # and only the algebraic equations remain, for z (no solve at all for an ODE)
    fixed = [v for v in sys.variables if v.fixed]
    state_set = set(dae.x_names)
    if not cm.flat.initial_equations and all(v.name in state_set for v in fixed):
        x0 = np.array([start[n] for n in dae.x_names], dtype=float)
        z_guess = np.array([start.get(n, 0.0) for n in dae.z_names], dtype=float)
        z0 = consistent_algebraic(dae, x0, z_guess, p, t0) if nz else np.zeros(0)
        fixed_names = {v.name for v in fixed}
        return InitialValues(
            x0, z0, [f"{v.name} = {v.start} (fixed start)" for v in fixed],
            [f"{n} = {start[n]} (start value)" for n in dae.x_names if n not in fixed_names],
            0.0)

    out_index = dae.out_index
    rows: list[cs.SX] = [dae.alg[k] for k in range(nz)]
    labels: list[str] = _algebraic_labels(cm, dae)
    conds: list[str] = []
    fixed_seen: set[str] = set()
    for v in sys.variables:
        if v.fixed and v.name not in fixed_seen:
            fixed_seen.add(v.name)
            e = dae.out_expr[out_index[v.name]]
            rows.append(e - v.start)
            labels.append(f"{v.name} = {v.start} (fixed start)")
            conds.append(labels[-1])
    # initial equations (der(..) symbols replaced by their expressions)
    params = set(dae.p_names)
    for eq in cm.flat.initial_equations:
        res = eq.res
        syms = cs.symvar(res)
        names = [s.name() for s in syms]
        missing = [n for n in names if n not in out_index and n not in params and n != "time"]
        if missing:
            raise InitializationError(
                f"initial equation {eq.describe()} uses {missing}, which the model does not "
                "compute"
            )
        olds = [s for s in syms if s.name() in out_index]
        news = [dae.out_expr[out_index[s.name()]] for s in olds]
        rows.append(cs.substitute(res, cs.vertcat(*olds), cs.vertcat(*news)) if olds else res)
        labels.append(f"initial equation {eq.describe()}")
        conds.append(labels[-1])

    # structure: which rows can be matched to which unknowns
    def incidence(expr_rows: list[cs.SX]) -> list[list[int]]:
        if not expr_rows or w.numel() == 0:
            return [[] for _ in expr_rows]
        ptr, col = cs.jacobian_sparsity(cs.vertcat(*expr_rows), w).get_crs()
        return [sorted(col[ptr[i]: ptr[i + 1]]) for i in range(len(expr_rows))]

    inc_rows = incidence(rows)
    n_w = nx + nz
    assign_col = [-1] * n_w
    mat = sp.csr_matrix(
        (np.ones(sum(len(r) for r in inc_rows)),
         ([i for i, r in enumerate(inc_rows) for _ in r], [c for r in inc_rows for c in r])),
        shape=(len(rows), n_w),
    )
    var_of_row, _ = match(mat)
    unmatched_rows = [i for i, c in enumerate(var_of_row) if c < 0]
    if unmatched_rows:
        bad = [labels[i] for i in unmatched_rows if i >= nz] or [labels[i] for i in unmatched_rows]
        raise InitializationError(
            "the initial conditions are over-determined or inconsistent: "
            + "; ".join(bad)
            + " cannot hold together with the model's equations. Remove fixed=True from "
            "one of them (or an initial equation)."
        )
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
                rows.append(dae.x[k] - start[name])
                labels.append(f"{name} = {start[name]} (start value)")
                defaulted.append(labels[-1])
            else:
                inc_rows.pop()
        if len(rows) < n_w:
            free = [w[c].name() for c in range(n_w) if assign_col[c] < 0]
            raise InitializationError(
                "the initial conditions are under-determined: nothing fixes "
                + ", ".join(free)
                + "; give start values with fixed=True or an initial equation"
            )
    # numeric solve
    guess_x = np.array([start.get(n, 0.0) for n in dae.x_names], dtype=float)
    guess_z = np.array([start.get(n, 0.0) for n in dae.z_names], dtype=float)
    pt = cs.vertcat(dae.p, dae.t)
    solver = AlgebraicSystem(cs.vertcat(*rows), w, pt, labels, jacobian="exact")
    ptv = np.concatenate([p, [t0]])
    sol = solver.solve(np.concatenate([guess_x, guess_z]), ptv,
                       what="consistent initial values")
    return InitialValues(sol.w[:nx], sol.w[nx:], conds, defaulted, sol.residual)


def _algebraic_labels(cm: CompiledModel, dae: SemiExplicitDAE) -> list[str]:
    """A label per algebraic equation: the unknown it determines and its component."""
    idx = cm.system.name_index
    out = []
    for k, n in enumerate(dae.z_names):
        origin = cm.system.variables[idx[n]].origin if n in idx else ""
        out.append(f"algebraic equation {k} (for {n}" + (f" of {origin})" if origin else ")"))
    return out


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
