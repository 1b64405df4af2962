"""Solve the BLT blocks symbolically where possible; the rest become algebraic equations.

Level by level (:class:`~acausal.structure.causalize.Causalization`), the solutions found
so far are substituted into the block equations with one vectorised call, then

* a scalar block whose equation is linear in its unknown with a coefficient free of
  unknowns and time (``C der(v) = i``, ``R i = v``) is solved explicitly, all such blocks of
  a level in one division;
* a small block linear in its unknowns with a constant matrix (two capacitors in parallel,
  rigidly coupled inertias) is solved by a symbolic linear solve;
* every other block stays implicit: its unknowns become algebraic variables ``z`` of the
  DAE and its equations the algebraic residuals ``0 = alg(x, z, p, t)``.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import casadi as cs
import numpy as np

from ..errors import SingularityError
from ..state import need
from ..symbols import FlatParameter
from .blt import Block
from .causalize import Causalization
from .system import EquationSystem

if TYPE_CHECKING:
    from ..state import CompileState

__all__ = ["SolvedBlocks", "solve_blocks", "solve_pass", "MAX_LINEAR_BLOCK"]

#: largest implicit block solved by a symbolic linear solve (the expression of a dense
#: solve grows like n^3)
MAX_LINEAR_BLOCK = 24


@dataclass
class SolvedBlocks:
    """Unknowns solved explicitly and the implicit rest (``z``, ``alg``).

    The explicit solutions are kept as one column, ``expr`` (row ``k`` solves variable
    ``idx[k]``, named ``names[k]``), not as one scalar expression per unknown: splitting
    and stacking again costs a call (and a Python object) per unknown."""

    idx: list[int] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    expr: cs.SX = field(default_factory=lambda: cs.SX(0, 1))
    z: list[cs.SX] = field(default_factory=list)
    z_names: list[str] = field(default_factory=list)
    alg: list[cs.SX] = field(default_factory=list)
    alg_equations: list[int] = field(default_factory=list)  # system equation of each row
    n_explicit: int = 0
    #: blocks solved by dividing by parameters: (coefficient or matrix of the block, its
    #: equations, its unknowns); singular for some parameter values (a coefficient alpha
    #: that is zero), checked with the values of each run (acausal.regularity)
    pivots: list[tuple[cs.SX, list[int], list[int]]] = field(default_factory=list)

    @property
    def solved(self) -> dict[str, cs.SX]:
        """The explicit solutions by variable name (one scalar expression each)."""
        return dict(zip(self.names, cs.vertsplit(self.expr), strict=True))


def _unknown_not_determined(sys: EquationSystem, bl: Block, why: str) -> SingularityError:
    return SingularityError(
        f"equation {sys.equations[bl.equations[0]].describe()} does not determine "
        f"{sys.variables[bl.unknowns[0]].name}{why}"
    )


def _in_parameters(e: cs.SX, params: dict[str, FlatParameter]) -> bool:
    """Whether every free symbol of ``e`` is a parameter (looked up by name, checked by
    identity): coefficients in parameters only, the common case, need no dependency sweep
    over every unknown. False also for a symbol it cannot place (the sweep decides)."""
    for s in cs.symvar(e):
        p = params.get(s.name())
        if p is None or p.sym.element_hash() != s.element_hash():
            return False
    return True


def _coefficients(F: cs.SX, us: cs.SX) -> cs.SX:
    """``d F_k / d u_k`` of rows each linear in their own unknown (one forward directional
    derivative: the rows' unknowns are distinct)."""
    return cs.jtimes(F, us, cs.DM.ones(us.shape))


def _substituted(F: cs.SX, v: cs.SX, vdef: cs.SX) -> cs.SX:
    """``F`` with the symbols ``v`` replaced by ``vdef`` (if any)."""
    return cs.substitute(F, v, vdef) if v.numel() else F


def _dependent_rows(coef: cs.SX, params: dict[str, FlatParameter],
                    all_vars: cs.SX) -> set[int]:
    """Rows of ``coef`` that depend on an unknown or time."""
    if _in_parameters(coef, params):
        return set()
    return set(cs.jacobian_sparsity(coef, all_vars).get_triplet()[0])


def solve_blocks(sys: EquationSystem, causal: Causalization,
                 max_linear_block: int = MAX_LINEAR_BLOCK) -> SolvedBlocks:
    """Explicit solutions where the blocks allow them, algebraic equations elsewhere."""
    # the incidence decides which solutions a level substitutes: it must list the tree
    # coordinates the dummy derivatives made unknowns (implicit in the equations of motion)
    sys = sys.for_states(causal.states)
    out = SolvedBlocks()
    sol_expr = cs.SX(0, 1)  # the solutions so far (grown once per level)
    sol_row = np.full(sys.n_vars, -1, dtype=np.int64)  # variable -> its row there
    new_expr: list[cs.SX] = []  # columns of solutions found in the current level
    # the unknowns (and time) and the residuals stacked once: a level takes its rows by
    # index instead of stacking thousands of scalar expressions again
    all_vars = cs.vertcat(sys.symbols(), sys.t)
    all_res = sys.residuals()
    params = {p.name: p for p in sys.parameters}

    def record(js: list[int], exprs: cs.SX) -> None:
        out.idx.extend(js)
        out.names.extend([sys.variables[j].name for j in js])
        new_expr.append(exprs)

    for lv_blocks in causal.by_level():
        if new_expr:
            first = int(sol_expr.numel())
            sol_expr = cs.vertcat(sol_expr, *new_expr)
            new = np.asarray(out.idx[first:], dtype=np.int64)
            sol_row[new] = first + np.arange(len(new))
            new_expr.clear()
        eq_rows = [i for bl in lv_blocks for i in bl.equations]
        F_raw = all_res[eq_rows]
        # the solutions of the unknowns these equations contain (their incidence), not
        # every solution so far: a level costs its own size
        used = np.unique(np.fromiter(itertools.chain.from_iterable(
            sys.incidence[i] for i in eq_rows), dtype=np.int64))
        used = used[sol_row[used] >= 0]
        used_v = all_vars[used.tolist()] if len(used) else cs.SX(0, 1)
        used_s = sol_expr[sol_row[used].tolist()] if len(used) else cs.SX(0, 1)

        row_of = {i: r for r, i in enumerate(eq_rows)}
        scalar = [bl for bl in lv_blocks if len(bl.unknowns) == 1]
        rest = [bl for bl in lv_blocks if len(bl.unknowns) > 1]
        if scalar:  # explicit when linear with a coefficient free of unknowns and time
            rows = [row_of[bl.equations[0]] for bl in scalar]
            us = all_vars[[bl.unknowns[0] for bl in scalar]]
            # (blocks of one level are independent of each other: the diagonal of the
            # Jacobian is one forward directional derivative, without its sparsity pattern)
            # The coefficients are taken of the residuals as written: substituting the
            # solutions first would make CasADi traverse every solution below this level.
            # Where a coefficient has unknowns, the substituted residual decides (a
            # coefficient in unknowns solved by parameters only is still explicit).
            coef = _coefficients(F_raw[rows], us)
            dep_rows = _dependent_rows(coef, params, all_vars)
            if dep_rows and len(used):
                dep = sorted(dep_rows)
                F_dep = _substituted(F_raw[[rows[q] for q in dep]], used_v, used_s)
                coef_sub = _coefficients(F_dep, us[dep])
                still = {dep[q] for q in _dependent_rows(coef_sub, params, all_vars)}
                settled = [q for q in dep if q not in still]
                if settled:  # their coefficients from the substituted residuals
                    parts = cs.vertsplit(coef)
                    for q, c in zip(dep, cs.vertsplit(coef_sub), strict=True):
                        parts[q] = c
                    coef = cs.vertcat(*parts)
                dep_rows = still
            ok = [q for q in range(len(scalar)) if q not in dep_rows]
            rest += [scalar[q] for q in range(len(scalar)) if q in dep_rows]
            if ok:
                a_ok = coef[ok]
                # a vanishing coefficient (constant zero) is the first row sparsify drops
                kept = cs.sparsify(a_ok).sparsity().row()
                if len(kept) < len(ok):
                    q = next(q for q, r in enumerate([*kept, -1]) if q != r)
                    raise _unknown_not_determined(
                        sys, scalar[ok[q]], ": its coefficient vanishes. Check for an "
                        "unconnected port of that component: an unconnected port carries "
                        "zero through variable (zero current, force, heat flow)")
                if not a_ok.is_constant():  # parameter-dependent divisors, checked per run
                    coefs = cs.vertsplit(a_ok)  # (one call, not one per entry)
                    out.pivots += [(coefs[q], scalar[k].equations, scalar[k].unknowns)
                                   for q, k in enumerate(ok) if not coefs[q].is_constant()]
                u_ok = us[ok]
                # the residual at zero unknown, with the solutions so far: one substitution
                r0 = cs.substitute(F_raw[[rows[k] for k in ok]], cs.vertcat(used_v, u_ok),
                                   cs.vertcat(used_s, cs.SX.zeros(u_ok.shape)))
                record([scalar[k].unknowns[0] for k in ok], -r0 / a_ok)
                out.n_explicit += len(ok)
        # the other blocks: their residuals with the solutions so far
        rest_eqs = [i for bl in rest for i in bl.equations]
        F = (_substituted(F_raw[[row_of[i] for i in rest_eqs]], used_v, used_s) if rest
             else cs.SX(0, 1))
        rest_row = {i: k for k, i in enumerate(rest_eqs)}
        for bl in rest:
            res = F[[rest_row[i] for i in bl.equations]]
            u = all_vars[list(bl.unknowns)]
            if len(bl.unknowns) <= max_linear_block:
                A = cs.jacobian(res, u)
                if not cs.depends_on(A, all_vars):
                    if len(bl.unknowns) == 1 and A.is_zero():
                        raise _unknown_not_determined(sys, bl, "")
                    if not A.is_constant():
                        out.pivots.append((A, bl.equations, bl.unknowns))
                    r0 = cs.substitute(res, u, cs.SX.zeros(u.shape))
                    record(list(bl.unknowns), -cs.solve(A, r0))
                    out.n_explicit += len(bl.unknowns)
                    continue
            for j in bl.unknowns:
                out.z.append(sys.variables[j].sym)
                out.z_names.append(sys.variables[j].name)
            out.alg.extend(cs.vertsplit(res))
            out.alg_equations.extend(bl.equations)
    out.expr = cs.vertcat(sol_expr, *new_expr)
    return out


def solve_pass(state: CompileState) -> CompileState:
    """Pass: explicit solutions of the BLT blocks, implicit rest as algebraic equations."""
    sys = need(state.system, "the index-reduced system (index reduction pass)")
    causal = need(state.causal, "the BLT blocks (causalisation pass)")
    return state.update(solved=solve_blocks(sys, causal))
