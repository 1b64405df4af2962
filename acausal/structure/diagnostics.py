"""Structural diagnostics: what is wrong with an ill-posed equation system, in the user's terms.

When equations and unknowns cannot be matched one to one, the Dulmage–Mendelsohn
decomposition (:func:`~acausal.structure.matching.dulmage_mendelsohn`) separates an
*over-determined* part (more equations than the unknowns they contain: two sources fixing
one quantity) and an *under-determined* part (unknowns no equation determines: a port left
unconnected, a forgotten equation). The errors raised here name the equations as written,
their components and the unknowns with their aliases, and carry the parts as
:class:`~acausal.errors.StructurePart` data.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import field
from operator import contains
from typing import TYPE_CHECKING

import casadi as cs
import numpy as np

from ..errors import BalanceError, SingularityError, StructureError, StructurePart
from ..flatten import FlatEquation, FlatSystem
from ..records import record, replace
from ..state import need
from .incidence import int_array
from .matching import dulmage_mendelsohn, match
from .system import EquationSystem, Rows

if TYPE_CHECKING:
    from ..state import CompileState

__all__ = ["StructureDiagnostics", "structural_error", "check_balance", "check_matching",
           "check_nonsingular", "balance_pass", "Explain", "domain_explanations"]

#: a domain's explanation of an over-determined part (``explain(equations, excess)``: the
#: part's equations and how many more equations than unknowns it has; the text to add to
#: the message, or None when the part is none of its business)
Explain = Callable[[list[FlatEquation], int], str | None]

_HINT = (
    "Hints: an over-determined part often means two sources fix the same quantity "
    "(two voltage sources in parallel, a position fixed twice) or a fixed start value "
    "that an equation already determines; an under-determined part, a port left "
    "unconnected that needs a connection, or a variable without an equation."
)


@record
class StructureDiagnostics:
    """What structural error messages need to name the user's objects.

    Attributes
    ----------
    origins : Mapping
        Flat variable name -> its component path (aliases included).
    aliases : Mapping
        Kept variable name -> the names of the variables merged into it.
    flat_counts : tuple
        Equations and unknowns before alias elimination.
    """

    origins: Mapping[str, str] = field(default_factory=dict)
    aliases: Mapping[str, list[str]] = field(default_factory=dict)
    flat_counts: tuple[int, int] | None = None

    @classmethod
    def from_aliases(cls, flat: FlatSystem, substitution: Mapping[int, cs.SX]
                     ) -> StructureDiagnostics:
        aliases: dict[str, list[str]] = {}
        for k, expr in substitution.items():
            v = flat.variables[k]
            if v.der_of is not None:
                continue
            e = expr if isinstance(expr, cs.SX) else cs.SX(expr)
            op = e.op()
            if op == cs.OP_NEG:
                e = e.dep(0)
                op = e.op()
            if op == cs.OP_PARAMETER:
                aliases.setdefault(e.name(), []).append(v.name)
        n_unknowns = sum(1 for v in flat.variables if v.der_of is None)
        return cls({v.name: v.origin for v in flat.variables}, aliases,
                   (len(flat.equations), n_unknowns))


def structural_error(sys: EquationSystem, eqs: list[int], unknowns: list[int],
                     diag: StructureDiagnostics | None = None,
                     what: str = "model", chains: bool = False,
                     explain: Explain | None = None) -> StructureError:
    """A BalanceError/SingularityError naming the over- and under-determined parts
    (``chains``: of the incidence where a variable and its derivatives are one unknown,
    :meth:`EquationSystem.incidence_matrix`); ``explain``, if given, may add a domain's
    account of the over-determined part (:func:`domain_explanations`)."""
    diag = diag or StructureDiagnostics()
    origins = diag.origins or None
    inc = sys.incidence_matrix(eqs, unknowns, chains=chains)
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

    def unknown_name(c: int) -> str:
        name = sys.variables[unknowns[c]].name
        same = diag.aliases.get(name, [])
        if same:
            name += " (= " + ", ".join(same[:4]) + (", ..." if len(same) > 4 else "") + ")"
        return name

    def components(rows: list[int], cols: list[int]) -> list[str]:
        cs_ = {sys.equations[eqs[r]].origin for r in rows}
        if origins is not None:
            for r in rows:
                e = sys.equations[eqs[r]]
                if not sys.incidence[eqs[r]] and e.source is not None:
                    cs_ |= {origins[s.name()] for s in cs.symvar(e.source)
                            if s.name() in origins}
        cs_ |= {sys.variables[unknowns[c]].origin for c in cols}
        if origins is not None:  # (and those of the variables merged into the unknowns:
            # an op amp's output is the load's voltage once the aliases are merged)
            cs_ |= {origins.get(a, "") for c in cols
                    for a in diag.aliases.get(sys.variables[unknowns[c]].name, [])}
        return sorted(c for c in cs_ if c)

    def part(kind: str, rows: list[int], cols: list[int]) -> StructurePart:
        hints = [f"{sys.variables[unknowns[c]].name}: {sys.variables[unknowns[c]].hint}"
                 for c in cols if sys.variables[unknowns[c]].hint]
        return StructurePart(kind, [traced(r) for r in rows], [unknown_name(c) for c in cols],
                             components(rows, cols), hints)

    parts = []
    notes = ""
    if dm.over_equations:
        parts.append(part("over-determined", dm.over_equations, dm.over_variables))
        if explain is not None:
            notes = explain([sys.equations[eqs[r]] for r in dm.over_equations],
                            len(dm.over_equations) - len(dm.over_variables)) or ""
    if dm.under_variables:
        parts.append(part("under-determined", dm.under_equations, dm.under_variables))
    counts = f"{n_e} equations and {n_u} unknowns"
    if diag.flat_counts is not None and diag.flat_counts != (n_e, n_u):
        counts = (f"{diag.flat_counts[0]} equations and {diag.flat_counts[1]} unknowns ({n_e} "
                  f"and {n_u} once the trivial equations a = b, a = const are used)")
    head = (f"the {what} has {counts}" if n_e != n_u
            else f"the {what} has {counts} but is structurally singular")
    cls = BalanceError if n_e != n_u else SingularityError
    return cls(head + ":\n  " + "\n  ".join(render_part(p) for p in parts) + "\n"
               + (notes + "\n" if notes else "") + _HINT, parts)


def render_part(p: StructurePart, max_equations: int = 12, max_unknowns: int = 20) -> str:
    """The text of one part as it appears in error messages."""
    comps = ", ".join(p.components[:10]) + (
        f", ... ({len(p.components)} in all)" if len(p.components) > 10 else "")
    eqs = "\n    ".join(p.equations[:max_equations]) or "(no equation)"
    if len(p.equations) > max_equations:
        eqs += f"\n    ... and {len(p.equations) - max_equations} more"
    unknowns = ", ".join(p.unknowns[:max_unknowns]) + (
        ", ..." if len(p.unknowns) > max_unknowns else "")
    n_e, n_u = len(p.equations), len(p.unknowns)
    text = (f"{p.kind} part ({n_e} equation{'s' * (n_e != 1)} for {n_u} "
            f"unknown{'s' * (n_u != 1)}; "
            f"components {comps}):\n    {eqs}" + (f"\n  unknowns: {unknowns}" if n_u else ""))
    for h in p.hints[:5]:
        text += f"\n  hint for {h}"
    return text


def check_balance(sys: EquationSystem, diag: StructureDiagnostics | None,
                  explain: Explain | None = None) -> None:
    """As many equations as unknowns that are not states (derivatives count as unknowns).

    The parts named are those of the incidence where a variable and its derivatives are
    one unknown (index reduction has not run: an equation among states only, such as a
    position constraint, is still to be differentiated, and is no excess)."""
    n_states = int(np.count_nonzero(int_array(sys.var_der) >= 0))
    if sys.n_eqs != sys.n_vars - n_states:
        unknowns = [j for j in range(sys.n_vars) if sys.var_der[j] < 0]
        raise structural_error(sys, list(range(sys.n_eqs)), unknowns, diag, chains=True,
                               explain=explain)


def check_nonsingular(sys: EquationSystem, diag: StructureDiagnostics | None = None,
                      explain: Explain | None = None) -> None:
    """Raise a :class:`~acausal.errors.SingularityError` naming the parts if the equations
    (those not obtained by differentiation) cannot be matched one to one with the unknowns
    where a variable and its derivatives are one unknown (``chains`` of
    :meth:`EquationSystem.incidence_matrix`).

    That matching is the condition for index reduction to end: Pantelides' algorithm
    terminates if and only if it exists (Pryce 2001, "A simple structural analysis
    method for DAEs", BIT 41: the signature matrix has a finite transversal). Without it
    every differentiation of the over-determined part asks for another, without end (two
    speed drivers on one joint; a closed kinematic loop with more closure equations and
    drivers than its joints have coordinates, a locked loop): index reduction calls this
    at its first failed search, before differentiating anything.

    The incidence of the equations marked with state coordinates
    (:attr:`EquationSystem.implicit`) leaves out some unknowns they hold: a matching of
    it is one of the whole; when there is none, the dependence on those unknowns is
    formed (CasADi sparsity) and the matching tried again, so the error is never raised
    for a system that has the matching."""
    eqs = np.flatnonzero(int_array(sys.eq_int) < 0)
    unknowns = np.flatnonzero(int_array(sys.var_der) < 0)
    var_of_eq, _ = match(sys.incidence_matrix(eqs, unknowns, chains=True))
    if (var_of_eq >= 0).all():
        return
    whole = sys.for_states([])  # (the implicit coordinates listed where they occur)
    if whole is not sys:
        var_of_eq, _ = match(whole.incidence_matrix(eqs, unknowns, chains=True))
        if (var_of_eq >= 0).all():
            return
    raise structural_error(whole, eqs.tolist(), unknowns.tolist(), diag, chains=True,
                           explain=explain)


def domain_explanations(state: CompileState) -> Explain | None:
    """The explanations of the model's domain passes (their optional method
    ``explain_structural_singularity(equations, excess)``, e.g. the mechanism pass's
    account of an over-determined kinematic loop), as one :data:`Explain`; None if no
    pass has one."""
    flat = state.flat
    passes = list(flat.domain_passes.values()) if flat is not None else []
    fns = [f for f in (getattr(dp, "explain_structural_singularity", None) for dp in passes)
           if callable(f)]
    if not fns:
        return None

    def explain(equations: list[FlatEquation], excess: int) -> str | None:
        texts = [t for t in (f(equations, excess) for f in fns) if t]
        return "\n".join(texts) or None

    return explain


def check_matching(sys: EquationSystem, diag: StructureDiagnostics | None,
                   assign: list[int] | None = None) -> None:
    """After index reduction every most-differentiated equation has a highest derivative.

    ``assign`` (the equation matched to each variable, ``-1`` for none: index reduction's
    result), if given, is tried first: when it matches every most-differentiated equation
    to a highest derivative it contains, the check needs no matching of its own."""
    highest = np.flatnonzero(int_array(sys.var_der) < 0)
    top = np.flatnonzero(int_array(sys.eq_der) < 0)
    if assign is not None and _matches_all(sys, assign, highest, top):
        return
    var_of_eq, _ = match(sys.incidence_matrix(rows=top, cols=highest))
    if (var_of_eq < 0).any():
        # the counts before alias elimination say nothing about this sub-problem
        raise structural_error(sys, top.tolist(), highest.tolist(),
                               replace(diag, flat_counts=None) if diag else None)


def _matches_all(sys: EquationSystem, assign: list[int], highest: np.ndarray,
                 top: np.ndarray) -> bool:
    """Whether ``assign`` pairs every equation of ``top`` with a distinct variable of
    ``highest`` that it contains (and no other equation with any)."""
    if len(assign) != sys.n_vars:
        return False
    eqs = int_array(assign)[highest]
    paired = eqs >= 0
    eqs, unknowns = eqs[paired], highest[paired]
    if len(eqs) != len(top) or not np.array_equal(np.sort(eqs), top):
        return False
    inc = sys.incidence
    if isinstance(inc, Rows):  # (kept as arrays: each pair looked up in them)
        ptr, col = inc.arrays()
        n = max(sys.n_vars, 1)
        keys = np.repeat(np.arange(len(ptr) - 1, dtype=np.int64), np.diff(ptr)) * n + col
        want = eqs * n + unknowns
        if not len(keys):
            return not len(want)
        at = np.minimum(np.searchsorted(keys, want), len(keys) - 1)
        return bool((keys[at] == want).all())
    return all(map(contains, map(inc.__getitem__, eqs.tolist()), unknowns.tolist()))


def dependent_constraints_error(sys: EquationSystem, eqs: list[int],
                                cands: list[int]) -> SingularityError:
    """Differentiated equations that constrain fewer derivatives than their number."""
    lines = [sys.equations[i].describe() for i in eqs]
    return SingularityError(
        "index reduction failed: these differentiated equations constrain fewer derivatives "
        "than their number (the constraints are redundant or contradictory):\n  "
        + "\n  ".join(lines)
        + "\ncandidate derivatives: "
        + ", ".join(sys.variables[j].name for j in cands)
    )


def balance_pass(state: CompileState) -> CompileState:
    """Pass: raise a :class:`~acausal.errors.BalanceError` naming the over- and
    under-determined parts if equations and unknowns do not balance."""
    check_balance(need(state.system, "the equation system (alias pass)"), state.diagnostics,
                  domain_explanations(state))
    return state
