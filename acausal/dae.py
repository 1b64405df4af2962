"""From the index-reduced equation system to a semi-explicit index-1 DAE in CasADi.

Given the chosen states, every other unknown (state derivatives, algebraic variables, dummy
derivatives) is determined by the equations. The equations are matched and sorted into
BLT blocks; a block whose equations are linear in its unknowns with coefficients that
depend only on parameters (a scalar equation, or a small linear loop such as two capacitors
in parallel) is solved symbolically and substituted forward; every other block stays
implicit, its unknowns becoming algebraic variables ``z`` of the DAE:

    x' = f(x, z, p, t),    0 = g(x, z, p, t).

Every variable of the model (aliases included) gets an output expression in ``(x, z, p, t)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import casadi as cs
import numpy as np

from .errors import BalanceError, SingularityError
from .structure.blt import Block, tarjan_blocks
from .structure.matching import dulmage_mendelsohn, match
from .structure.system import EquationSystem

__all__ = ["SemiExplicitDAE", "build_dae", "structural_error"]


@dataclass
class SemiExplicitDAE:
    """``x' = ode(x, z, p, t)``, ``0 = alg(x, z, p, t)`` with named outputs."""

    t: cs.SX
    x: cs.SX
    z: cs.SX
    p: cs.SX
    ode: cs.SX
    alg: cs.SX
    x_names: list[str]
    z_names: list[str]
    p_names: list[str]
    p_values: np.ndarray
    out_names: list[str]
    out_expr: list[cs.SX]
    blocks: list[Block] = field(default_factory=list)
    explicit: int = 0

    def function(self, name: str = "dae") -> cs.Function:
        """``(x, z, p, t) -> (ode, alg)`` as a named CasADi function."""
        return cs.Function(name, [self.x, self.z, self.p, self.t], [self.ode, self.alg],
                           ["x", "z", "p", "t"], ["ode", "alg"])

    def output_function(self) -> cs.Function:
        """``(x, z, p, t) -> all outputs`` (one column vector)."""
        flat = cs.vertcat(*[cs.vec(e) for e in self.out_expr]) if self.out_expr else cs.SX(0, 1)
        return cs.Function("outputs", [self.x, self.z, self.p, self.t], [flat])


def structural_error(sys: EquationSystem, eqs: list[int], unknowns: list[int],
                     what: str = "model") -> Exception:
    """A BalanceError/SingularityError naming the over- and under-determined parts."""
    inc = sys.incidence_matrix(eqs, unknowns)
    var_of_eq, eq_of_var = match(inc)
    dm = dulmage_mendelsohn(inc, var_of_eq, eq_of_var)
    n_e, n_u = len(eqs), len(unknowns)

    def eq_lines(rows: list[int]) -> str:
        shown = [sys.equations[eqs[r]].describe() for r in rows[:12]]
        more = f"\n    ... and {len(rows) - 12} more" if len(rows) > 12 else ""
        return "\n    ".join(shown) + more

    def var_list(cols: list[int]) -> str:
        names = [sys.variables[unknowns[c]].name for c in cols[:20]]
        return ", ".join(names) + (", ..." if len(cols) > 20 else "")

    def comps(rows: list[int], cols: list[int]) -> str:
        cs_ = {sys.equations[eqs[r]].origin for r in rows}
        cs_ |= {sys.variables[unknowns[c]].origin for c in cols}
        return ", ".join(sorted(c for c in cs_ if c))

    parts = []
    if dm.over_equations:
        parts.append(
            f"over-determined part ({len(dm.over_equations)} equations for "
            f"{len(dm.over_variables)} unknowns; components {comps(dm.over_equations, dm.over_variables)}):\n"
            f"    {eq_lines(dm.over_equations)}\n  unknowns: {var_list(dm.over_variables)}"
        )
    if dm.under_variables:
        parts.append(
            f"under-determined part ({len(dm.under_equations)} equations for "
            f"{len(dm.under_variables)} unknowns; components {comps(dm.under_equations, dm.under_variables)}):\n"
            f"    {eq_lines(dm.under_equations) or '(no equation)'}\n"
            f"  unknowns: {var_list(dm.under_variables)}"
        )
    hint = (
        "\nHints: an over-determined part often means two sources fix the same quantity "
        "(two voltage sources in parallel, a position fixed twice) or a fixed start value "
        "that an equation already determines; an under-determined part, a port left "
        "unconnected that needs a connection, or a variable without an equation."
    )
    head = (
        f"the {what} has {n_e} equations and {n_u} unknowns"
        if n_e != n_u
        else f"the {what} has {n_e} equations and {n_u} unknowns but is structurally singular"
    )
    cls = BalanceError if n_e != n_u else SingularityError
    return cls(head + ":\n  " + "\n  ".join(parts) + hint)


def build_dae(sys: EquationSystem, states: list[int],
              alias: tuple[list[cs.SX], list[cs.SX]],
              extra_outputs: dict[str, cs.SX],
              max_linear_block: int = 24) -> SemiExplicitDAE:
    """Causalise ``sys`` for the given states and build the semi-explicit DAE.

    ``alias`` = (eliminated symbols, their expressions in kept variables);
    ``extra_outputs`` = named expressions (port quantities, aliases) to evaluate in results.
    """
    state_set = set(states)
    unknowns = [j for j in range(sys.n_vars) if j not in state_set]
    eqs = list(range(sys.n_eqs))
    if len(unknowns) != len(eqs):
        raise structural_error(sys, eqs, unknowns)
    inc = sys.incidence_matrix(eqs, unknowns)
    var_of_eq, eq_of_var = match(inc)
    if (eq_of_var < 0).any():
        raise structural_error(sys, eqs, unknowns)
    upos = {j: k for k, j in enumerate(unknowns)}
    succ: list[list[int]] = []
    for k, j in enumerate(unknowns):
        i = eq_of_var[k]
        succ.append([upos[m] for m in sys.incidence[eqs[i]] if m in upos and m != j])
    comps = tarjan_blocks(len(unknowns), succ)

    pv = cs.vertcat(*[p.sym for p in sys.parameters]) if sys.parameters else cs.SX(0, 1)
    solved: dict[str, cs.SX] = {}  # unknown name -> expression in (x, z, p, t)
    z_syms: list[cs.SX] = []
    z_names: list[str] = []
    alg: list[cs.SX] = []
    blocks: list[Block] = []
    n_explicit = 0
    zset: set[str] = set()

    def substituted(res: cs.SX) -> cs.SX:
        syms = [s for s in cs.symvar(res) if s.name() in solved]
        if not syms:
            return res
        return cs.substitute(res, cs.vertcat(*syms), cs.vertcat(*[solved[s.name()] for s in syms]))

    knowns = [sys.variables[j].sym for j in states]
    for comp in comps:
        ks = sorted(comp)
        block_unknowns = [unknowns[k] for k in ks]
        block_eqs = [eqs[eq_of_var[k]] for k in ks]
        blocks.append(Block(block_eqs, block_unknowns))
        if len(ks) == 1:
            j = block_unknowns[0]
            u = sys.variables[j].sym
            res = substituted(sys.equations[block_eqs[0]].res)
            a = cs.jacobian(res, u)
            if not cs.depends_on(a, u) and not _depends_on_unknowns(a, sys, knowns, z_syms):
                if a.is_zero():
                    raise SingularityError(
                        f"equation {sys.equations[block_eqs[0]].describe()} does not determine "
                        f"{sys.variables[j].name}: its coefficient vanishes"
                    )
                rest = cs.substitute(res, u, cs.SX(0))
                solved[sys.variables[j].name] = -rest / a
                n_explicit += 1
                continue
        if len(ks) <= max_linear_block:
            u = cs.vertcat(*[sys.variables[j].sym for j in block_unknowns])
            res = cs.vertcat(*[substituted(sys.equations[i].res) for i in block_eqs])
            A = cs.jacobian(res, u)
            if not cs.depends_on(A, u) and not _depends_on_unknowns(A, sys, knowns, z_syms):
                b = cs.substitute(res, u, cs.SX.zeros(u.shape))
                sol = -cs.solve(A, b)
                for k, j in enumerate(block_unknowns):
                    solved[sys.variables[j].name] = sol[k]
                n_explicit += len(ks)
                continue
        for i, j in zip(block_eqs, block_unknowns, strict=True):
            v = sys.variables[j]
            z_syms.append(v.sym)
            z_names.append(v.name)
            zset.add(v.name)
        for i in block_eqs:
            alg.append(substituted(sys.equations[i].res))

    # ODE right-hand sides
    x = cs.vertcat(*[sys.variables[j].sym for j in states]) if states else cs.SX(0, 1)
    ode = []
    for j in states:
        d = sys.variables[sys.var_der[j]]
        ode.append(solved[d.name] if d.name in solved else d.sym)
    z = cs.vertcat(*z_syms) if z_syms else cs.SX(0, 1)

    # outputs: every variable, every alias, every port quantity
    all_syms = [v.sym for v in sys.variables]
    all_expr = []
    for v in sys.variables:
        if v.name in solved:
            all_expr.append(solved[v.name])
        else:
            all_expr.append(v.sym)
    out_names: list[str] = []
    out_expr: list[cs.SX] = []
    for v, e in zip(sys.variables, all_expr, strict=True):
        out_names.append(v.name)
        out_expr.append(e)
    known = set(out_names)
    pending = {n: e for n, e in extra_outputs.items() if n not in known}
    for s, e in zip(*alias, strict=True):
        if s.name() not in known:
            pending.setdefault(s.name(), e)
    if pending:
        names = list(pending)
        exprs = [cs.SX(pending[n]) for n in names]
        if alias[0]:
            exprs = cs.substitute(exprs, list(alias[0]), list(alias[1]))
        # alias expressions refer to representatives, which may themselves be solved
        subbed = cs.substitute(exprs, all_syms, all_expr)
        out_names.extend(names)
        out_expr.extend(subbed)
    return SemiExplicitDAE(
        t=sys.t,
        x=x,
        z=z,
        p=pv,
        ode=cs.vertcat(*ode) if ode else cs.SX(0, 1),
        alg=cs.vertcat(*alg) if alg else cs.SX(0, 1),
        x_names=[sys.variables[j].name for j in states],
        z_names=z_names,
        p_names=[p.name for p in sys.parameters],
        p_values=np.array([p.value for p in sys.parameters], dtype=float),
        out_names=out_names,
        out_expr=out_expr,
        blocks=blocks,
        explicit=n_explicit,
    )


def _depends_on_unknowns(a: cs.SX, sys: EquationSystem, knowns: list[cs.SX],
                         z_syms: list[cs.SX]) -> bool:
    """Coefficient must depend on parameters only (safe to divide by, for all states)."""
    for s in cs.symvar(a):
        if s.name() in sys.name_index or cs.is_equal(s, sys.t):
            return True
    return False
