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
    n_sys: int = 0  # the first n_sys outputs are the equation system's variables
    out_stacked: cs.SX | None = None
    _cache: dict = field(default_factory=dict, repr=False)

    @property
    def out_sizes(self) -> list[int]:
        if "sizes" not in self._cache:
            self._cache["sizes"] = [1 if e.is_scalar() else int(e.numel())
                                    for e in self.out_expr]
        return self._cache["sizes"]

    def function(self, name: str = "dae") -> cs.Function:
        """``(x, z, p, t) -> (ode, alg)`` as a named CasADi function."""
        return cs.Function(name, [self.x, self.z, self.p, self.t], [self.ode, self.alg],
                           ["x", "z", "p", "t"], ["ode", "alg"])

    def output_function(self) -> cs.Function:
        """``(x, z, p, t) -> all outputs`` stacked in one column (built once, cached).

        Called with ``nt`` columns of ``x``, ``z``, ``t`` it evaluates all times at once.
        """
        if "out" not in self._cache:
            stacked = self.out_stacked
            if stacked is None:
                stacked = cs.vertcat(*[cs.vec(e) for e in self.out_expr])
            self._cache["out"] = cs.Function("outputs", [self.x, self.z, self.p, self.t],
                                             [stacked])
        return self._cache["out"]

    def variables_function(self) -> cs.Function:
        """``(x, z, p, t) -> values of the equation system's variables`` (cached)."""
        if "vars" not in self._cache:
            stacked = cs.vertcat(*self.out_expr[: self.n_sys])
            self._cache["vars"] = cs.Function("variables", [self.x, self.z, self.p, self.t],
                                              [stacked])
        return self._cache["vars"]


def structural_error(sys: EquationSystem, eqs: list[int], unknowns: list[int],
                     what: str = "model", origins: dict[str, str] | None = None,
                     aliases: dict[str, list[str]] | None = None,
                     flat_counts: tuple[int, int] | None = None) -> Exception:
    """A BalanceError/SingularityError naming the over- and under-determined parts.

    ``origins`` maps every flat variable name to its component, so that an equation left
    without unknowns by alias elimination (two sources fixing one quantity) names all the
    components it came from; ``aliases`` lists, for a kept variable, the variables merged
    into it; ``flat_counts`` are the counts before alias elimination.
    """
    inc = sys.incidence_matrix(eqs, unknowns)
    var_of_eq, eq_of_var = match(inc)
    dm = dulmage_mendelsohn(inc, var_of_eq, eq_of_var)
    n_e, n_u = len(eqs), len(unknowns)

    def traced(r: int) -> str:
        e = sys.equations[eqs[r]]
        text = e.describe()
        if sys.incidence[eqs[r]] or origins is None or e.source is None:
            return text
        comps_ = sorted({origins[s.name()] for s in cs.symvar(e.source)
                         if s.name() in origins} - {e.origin})
        if comps_:
            text += ("\n      (it relates only constants once the trivial equations of "
                     + ", ".join(comps_) + " are used: they fix the same quantity)")
        return text

    def eq_lines(rows: list[int]) -> str:
        shown = [traced(r) for r in rows[:12]]
        more = f"\n    ... and {len(rows) - 12} more" if len(rows) > 12 else ""
        return "\n    ".join(shown) + more

    def var_list(cols: list[int]) -> str:
        names = []
        for c in cols[:20]:
            name = sys.variables[unknowns[c]].name
            same = (aliases or {}).get(name, [])
            if same:
                name += " (= " + ", ".join(same[:4]) + (", ..." if len(same) > 4 else "") + ")"
            names.append(name)
        return ", ".join(names) + (", ..." if len(cols) > 20 else "")

    def comps(rows: list[int], cols: list[int]) -> str:
        cs_ = {sys.equations[eqs[r]].origin for r in rows}
        if origins is not None:
            for r in rows:
                e = sys.equations[eqs[r]]
                if not sys.incidence[eqs[r]] and e.source is not None:
                    cs_ |= {origins[s.name()] for s in cs.symvar(e.source)
                            if s.name() in origins}
        cs_ |= {sys.variables[unknowns[c]].origin for c in cols}
        names = sorted(c for c in cs_ if c)
        return ", ".join(names[:10]) + (f", ... ({len(names)} in all)" if len(names) > 10 else "")

    parts = []
    if dm.over_equations:
        parts.append(
            f"over-determined part ({len(dm.over_equations)} equations for "
            f"{len(dm.over_variables)} unknowns; components "
            f"{comps(dm.over_equations, dm.over_variables)}):\n"
            f"    {eq_lines(dm.over_equations)}\n  unknowns: {var_list(dm.over_variables)}"
        )
    if dm.under_variables:
        parts.append(
            f"under-determined part ({len(dm.under_equations)} equations for "
            f"{len(dm.under_variables)} unknowns; components "
            f"{comps(dm.under_equations, dm.under_variables)}):\n"
            f"    {eq_lines(dm.under_equations) or '(no equation)'}\n"
            f"  unknowns: {var_list(dm.under_variables)}"
        )
    hint = (
        "\nHints: an over-determined part often means two sources fix the same quantity "
        "(two voltage sources in parallel, a position fixed twice) or a fixed start value "
        "that an equation already determines; an under-determined part, a port left "
        "unconnected that needs a connection, or a variable without an equation."
    )
    counts = f"{n_e} equations and {n_u} unknowns"
    if flat_counts is not None and flat_counts != (n_e, n_u):
        counts = (f"{flat_counts[0]} equations and {flat_counts[1]} unknowns ({n_e} and "
                  f"{n_u} once the trivial equations a = b, a = const are used)")
    head = (f"the {what} has {counts}" if n_e != n_u
            else f"the {what} has {counts} but is structurally singular")
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
    sol_syms = cs.SX(0, 1)  # solved unknowns so far (grown once per level)
    sol_expr = cs.SX(0, 1)
    z_syms: list[cs.SX] = []
    z_names: list[str] = []
    alg: list[cs.SX] = []
    blocks: list[Block] = []
    n_explicit = 0
    all_vars = cs.vertcat(*[v.sym for v in sys.variables], sys.t)

    # level of a block = 1 + highest level of the blocks it needs: blocks of one level are
    # independent, so each level is substituted and solved with a few vectorised calls
    block_of = np.empty(len(unknowns), dtype=int)
    for b_i, comp in enumerate(comps):
        block_of[comp] = b_i
    level = np.zeros(len(comps), dtype=int)
    for b_i, comp in enumerate(comps):
        lv = 0
        for k in comp:
            for m in succ[k]:
                if block_of[m] != b_i:
                    lv = max(lv, level[block_of[m]] + 1)
        level[b_i] = lv
    by_level: dict[int, list[int]] = {}
    for b_i, lv in enumerate(level):
        by_level.setdefault(int(lv), []).append(b_i)

    new_syms: list[cs.SX] = []
    new_expr: list[cs.SX] = []

    def record(js: list[int], exprs: list[cs.SX]) -> None:
        for j, e in zip(js, exprs, strict=True):
            solved[sys.variables[j].name] = e
            new_syms.append(sys.variables[j].sym)
            new_expr.append(e)

    for lv in sorted(by_level):
        if new_syms:
            sol_syms = cs.vertcat(sol_syms, *new_syms)
            sol_expr = cs.vertcat(sol_expr, *new_expr)
            new_syms.clear()
            new_expr.clear()
        lv_blocks = by_level[lv]
        eq_rows: list[int] = []
        for b_i in lv_blocks:
            ks = sorted(comps[b_i])
            block_unknowns = [unknowns[k] for k in ks]
            block_eqs = [eqs[eq_of_var[k]] for k in ks]
            blocks.append(Block(block_eqs, block_unknowns))
            eq_rows.extend(block_eqs)
        F = cs.vertcat(*[sys.equations[i].res for i in eq_rows])
        if sol_syms.numel():
            F = cs.substitute(F, sol_syms, sol_expr)
        row_of = {i: r for r, i in enumerate(eq_rows)}
        # scalar blocks: explicit when linear with a parameter-only coefficient
        scal = [blocks[-len(lv_blocks) + q] for q in range(len(lv_blocks))]
        scalar = [bl for bl in scal if len(bl.unknowns) == 1]
        rest = [bl for bl in scal if len(bl.unknowns) > 1]
        if scalar:
            rows = [row_of[bl.equations[0]] for bl in scalar]
            Fs = F[rows]
            us = cs.vertcat(*[sys.variables[bl.unknowns[0]].sym for bl in scalar])
            coef = cs.diag(cs.jacobian(Fs, us))
            dep = cs.jacobian_sparsity(coef, all_vars)
            dep_rows = set(dep.get_triplet()[0])
            ok = [q for q in range(len(scalar)) if q not in dep_rows]
            for q in range(len(scalar)):
                if q in dep_rows:
                    rest.append(scalar[q])
            if ok:
                a_ok = coef[ok]
                for q, k in enumerate(ok):
                    if a_ok[q].is_zero():
                        bl = scalar[k]
                        raise SingularityError(
                            f"equation {sys.equations[bl.equations[0]].describe()} does not "
                            f"determine {sys.variables[bl.unknowns[0]].name}: its coefficient "
                            "vanishes. Check for an unconnected port of that component: an "
                            "unconnected port carries zero through variable (zero current, "
                            "force, heat flow)"
                        )
                u_ok = us[ok]
                r0 = cs.substitute(Fs[ok], u_ok, cs.SX.zeros(u_ok.shape))
                sol = -r0 / a_ok
                record([scalar[k].unknowns[0] for k in ok], cs.vertsplit(sol))
                n_explicit += len(ok)
        for bl in rest:
            rows = [row_of[i] for i in bl.equations]
            res = F[rows]
            u = cs.vertcat(*[sys.variables[j].sym for j in bl.unknowns])
            if len(bl.unknowns) <= max_linear_block:
                A = cs.jacobian(res, u)
                if not cs.depends_on(A, all_vars):
                    if len(bl.unknowns) == 1 and A.is_zero():
                        raise SingularityError(
                            f"equation {sys.equations[bl.equations[0]].describe()} does not "
                            f"determine {sys.variables[bl.unknowns[0]].name}"
                        )
                    r0 = cs.substitute(res, u, cs.SX.zeros(u.shape))
                    sol = -cs.solve(A, r0)
                    record(bl.unknowns, cs.vertsplit(sol))
                    n_explicit += len(bl.unknowns)
                    continue
            for j in bl.unknowns:
                z_syms.append(sys.variables[j].sym)
                z_names.append(sys.variables[j].name)
            alg.extend(cs.vertsplit(res))

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
    n_sys = len(out_names)
    sizes = [1] * n_sys  # equation-system variables are scalars
    sys_stacked = cs.vertcat(*all_expr) if all_expr else cs.SX(0, 1)
    stacked = cs.SX(0, 1)
    known = set(out_names)
    pending = {n: e for n, e in extra_outputs.items() if n not in known}
    for s, e in zip(*alias, strict=True):
        if s.name() not in known:
            pending.setdefault(s.name(), e)
    if pending:
        names = list(pending)
        exprs = [pending[n] if isinstance(pending[n], cs.SX) else cs.SX(pending[n])
                 for n in names]
        shapes = [e.shape for e in exprs]
        stacked = cs.vertcat(*[e if e.size2() == 1 else cs.vec(e) for e in exprs])
        if alias[0]:
            stacked = cs.substitute(stacked, cs.vertcat(*alias[0]), cs.vertcat(*alias[1]))
        # alias expressions refer to representatives, which may themselves be solved
        stacked = cs.substitute(stacked, cs.vertcat(*all_syms), cs.vertcat(*all_expr))
        offsets = np.cumsum([0] + [a * b for a, b in shapes])
        parts = cs.vertsplit(stacked, [int(o) for o in offsets]) if len(names) else []
        for part, shp in zip(parts, shapes, strict=True):
            out_expr.append(part if shp[1] == 1 else cs.reshape(part, shp))
        out_names.extend(names)
        sizes.extend(a * b for a, b in shapes)
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
        n_sys=n_sys,
        out_stacked=cs.vertcat(sys_stacked, stacked),
        _cache={"sizes": sizes},
    )
