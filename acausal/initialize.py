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

import casadi as cs
import numpy as np
import scipy.sparse as sp

from .dae import SemiExplicitDAE
from .errors import InitializationError
from .structure.matching import match

__all__ = ["InitialValues", "initialize"]


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


def initialize(cm, p: np.ndarray, t0: float = 0.0,
               dae: SemiExplicitDAE | None = None,
               guess: dict[str, float] | None = None) -> InitialValues:
    """Consistent ``(x0, z0)`` for the compiled model ``cm`` at time ``t0``."""
    dae = dae or cm.dae
    sys = cm.system
    nx, nz = int(dae.x.numel()), int(dae.z.numel())
    w = cs.vertcat(dae.x, dae.z)
    start = dict(cm._start_values())
    if guess:
        start.update(guess)

    # fast path: when the fixed starts are all on states, the states are their start values
    # and only the algebraic equations remain, for z (no solve at all for an ODE)
    fixed = [v for v in sys.variables if v.fixed]
    state_set = set(dae.x_names)
    if not cm.flat.initial_equations and all(v.name in state_set for v in fixed):
        x0 = np.array([start[n] for n in dae.x_names], dtype=float)
        z_guess = np.array([start.get(n, 0.0) for n in dae.z_names], dtype=float)
        z0 = _solve_z(dae, x0, z_guess, p, t0) if nz else np.zeros(0)
        fixed_names = {v.name for v in fixed}
        return InitialValues(
            x0, z0, [f"{v.name} = {v.start} (fixed start)" for v in fixed],
            [f"{n} = {start[n]} (start value)" for n in dae.x_names if n not in fixed_names],
            0.0)

    out_index = dae._cache.get("out_index")
    if out_index is None:
        out_index = dae._cache["out_index"] = {n: k for k, n in enumerate(dae.out_names)}
    rows: list[cs.SX] = [dae.alg[k] for k in range(nz)]
    labels: list[str] = [f"algebraic equation {k}" for k in range(nz)]
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
    for eq in cm.flat.initial_equations:
        res = eq.res
        syms = cs.symvar(res)
        names = [s.name() for s in syms]
        missing = [n for n in names if n not in out_index and n not in cm.flat.constants
                   and n != "time"]
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
    F = cs.vertcat(*rows)
    pt = cs.vertcat(dae.p, dae.t)
    w0 = np.concatenate([guess_x, guess_z])
    ptv = np.concatenate([p, [t0]])
    sol = _newton(F, w, pt, w0, ptv, labels)
    res_f = cs.Function("r", [w, pt], [F])
    resid = float(np.max(np.abs(np.asarray(res_f(sol, ptv))))) if n_w else 0.0
    return InitialValues(sol[:nx], sol[nx:], conds, defaulted, resid)


def _newton(F: cs.SX, w: cs.SX, pt: cs.SX, w0: np.ndarray, ptv: np.ndarray,
            labels: list[str]) -> np.ndarray:
    """Damped Newton with CasADi's sparse Jacobian; names the worst residuals on failure."""
    n = int(w.numel())
    if n == 0:
        return np.zeros(0)
    J = cs.jacobian(F, w)
    fJ = cs.Function("fJ", [w, pt], [F, J])
    x = np.array(w0, dtype=float)
    f, Jv = fJ(x, ptv)
    f = np.asarray(f).ravel()
    norm = float(np.linalg.norm(f, np.inf))
    import scipy.sparse.linalg as spla

    for _ in range(100):
        if norm < 1e-12:
            break
        Js = Jv.sparse() if hasattr(Jv, "sparse") else sp.csc_matrix(np.asarray(Jv))
        try:
            step = spla.spsolve(sp.csc_matrix(Js), -f)
        except Exception:  # noqa: BLE001
            step = np.linalg.lstsq(np.asarray(Js.todense()), -f, rcond=None)[0]
        if not np.all(np.isfinite(step)):
            step = np.linalg.lstsq(np.asarray(sp.csc_matrix(Js).todense()), -f, rcond=None)[0]
        lam = 1.0
        while lam > 1e-6:
            xn = x + lam * step
            fn, Jn = fJ(xn, ptv)
            fn = np.asarray(fn).ravel()
            nn = float(np.linalg.norm(fn, np.inf))
            if np.isfinite(nn) and nn < norm * (1 - 1e-4 * lam) or nn < 1e-12:
                break
            lam *= 0.5
        x, f, Jv, norm = xn, fn, Jn, nn
        if lam <= 1e-6:
            break
    if not np.isfinite(norm) or norm > 1e-8 * max(1.0, float(np.linalg.norm(x, np.inf))):
        worst = np.argsort(-np.abs(f))[:5]
        raise InitializationError(
            "no consistent initial values found (Newton stopped with residual "
            f"{norm:.3g}); largest residuals: "
            + "; ".join(f"{labels[k]}: {f[k]:.3g}" for k in worst if k < len(labels))
            + ". Check the fixed start values for consistency, or give better guesses "
            "(start values with fixed=False)."
        )
    return x


_FD_JACOBIAN_MIN = 50  # algebraic unknowns above which Newton uses a difference Jacobian


def _solve_z(dae: SemiExplicitDAE, x: np.ndarray, z: np.ndarray, p: np.ndarray,
             t0: float) -> np.ndarray:
    """``alg(x, z) = 0`` for ``z`` by Newton (the states are given).

    A large block (a long chain's mass matrix) is solved with a forward-difference
    Jacobian, all columns in one vectorised evaluation: forming its exact Jacobian
    symbolically costs O(n^3) while the equations are linear in most of ``z``.
    """
    nz = int(dae.z.numel())
    pt = cs.vertcat(dae.x, dae.p, dae.t)
    ptv = np.concatenate([x, p, [t0]])
    if nz <= _FD_JACOBIAN_MIN:
        labels = [f"algebraic equation {k}" for k in range(nz)]
        return _newton(dae.alg, dae.z, pt, z, ptv, labels)
    f = cs.Function("alg", [dae.z, pt], [dae.alg])
    zk = np.array(z, dtype=float)
    g = np.asarray(f(zk, ptv)).ravel()
    for _ in range(30):
        scale = max(1.0, float(np.max(np.abs(zk))))
        if float(np.max(np.abs(g))) < 1e-11 * scale:
            return zk
        h = 1e-7 * np.maximum(1.0, np.abs(zk))
        cols = zk[:, None] + np.diag(h)
        J = (np.asarray(f(cols, ptv)) - g[:, None]) / h[None, :]
        zk = zk - np.linalg.solve(J, g)
        g = np.asarray(f(zk, ptv)).ravel()
    raise InitializationError(
        "no consistent algebraic variables found for the given states (Newton stopped "
        f"with residual {float(np.max(np.abs(g))):.3g}); check the start values")
