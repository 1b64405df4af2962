"""Pantelides' algorithm: which equations to differentiate, and how often.

Pantelides (1988), "The consistent initialization of differential-algebraic systems".
Every equation must be matched to a *highest-derivative* unknown; when an augmenting path
cannot be found, the equations and variables coloured by the failed search are
differentiated (equations structurally, variables get derivative symbols) and the search is
repeated on the differentiated equation. The symbolic derivatives are then formed by CasADi
automatic differentiation. A maximum matching from Hopcroft–Karp seeds the search, so an
index-1 model costs one matching and no augmenting-path search.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import StructureError
from ..state import need
from .diagnostics import check_matching
from .matching import match
from .system import EquationSystem

if TYPE_CHECKING:
    from ..state import CompileState

__all__ = ["PantelidesResult", "pantelides", "pantelides_pass"]


@dataclass
class PantelidesResult:
    assign: list[int]  # equation matched to each variable (-1: not a highest derivative)
    differentiated: list[int]  # indices of equations created by differentiation
    max_level: int


def _augment(sys: EquationSystem, i0: int, assign: list[int], col_e: set[int],
             col_v: set[int]) -> bool:
    """Iterative augmenting-path search from equation ``i0`` (highest derivatives only).

    Same as the recursive AUGMENTPATH of Pantelides: colour the equation; take a free
    highest-derivative variable if there is one; otherwise try to re-route the equation
    matched to each uncoloured candidate variable.
    """
    A = sys.var_der
    inc = sys.incidence
    frames: list[list] = []  # [equation, candidates, next position, variable being tried]

    def enter(i: int) -> bool:
        col_e.add(i)
        cands = [j for j in inc[i] if A[j] < 0]
        for j in cands:
            if assign[j] < 0:
                assign[j] = i
                for eq, _, _, jj in frames:
                    assign[jj] = eq
                return True
        frames.append([i, cands, 0, -1])
        return False

    if enter(i0):
        return True
    while frames:
        top = frames[-1]
        i, cands, pos, _ = top
        while pos < len(cands) and cands[pos] in col_v:
            pos += 1
        if pos == len(cands):
            frames.pop()
            continue
        j = cands[pos]
        top[2] = pos + 1
        top[3] = j
        col_v.add(j)
        if enter(assign[j]):
            return True
    return False


def pantelides(sys: EquationSystem, max_steps: int | None = None) -> PantelidesResult:
    """Run Pantelides' algorithm on ``sys``, extending it in place (differentiated
    equations and derivative variables appended); return the final assignment.

    The pass (:func:`pantelides_pass`) runs it on a copy of the alias pass's system.
    """
    n_var = sys.n_vars
    if max_steps is None:
        max_steps = 8 * (sys.n_eqs + n_var) + 100
    max_level = n_var + 1  # the index cannot exceed the number of unknowns
    highest = [j for j in range(n_var) if sys.var_der[j] < 0]
    inc = sys.incidence_matrix(cols=highest)
    var_of_eq, _ = match(inc)
    assign = [-1] * n_var
    for i, c in enumerate(var_of_eq):
        if c >= 0:
            assign[highest[c]] = i
    unmatched = [i for i, c in enumerate(var_of_eq) if c < 0]
    differentiated: list[int] = []
    steps = 0
    for i0 in unmatched:
        i = i0
        while True:
            steps += 1
            if steps > max_steps:
                raise StructureError(
                    f"index reduction did not finish after {max_steps} steps (equation "
                    f"{sys.equations[i].describe()}); the model is probably structurally "
                    "singular"
                )
            col_e: set[int] = set()
            col_v: set[int] = set()
            if _augment(sys, i, assign, col_e, col_v):
                break
            # an equation without unknowns (0 == 0, or in parameters only) is structurally
            # singular and cannot be cured by differentiation: left for the diagnostics
            if not sys.incidence[i] or sys.level(i) > max_level:
                break
            for j in sorted(col_v):
                sys.add_derivative_variable(j)
            for e in sorted(col_e):
                differentiated.append(sys.add_differentiated_equation(e))
            assign.extend([-1] * (sys.n_vars - len(assign)))
            for j in sorted(col_v):
                if assign[j] >= 0:
                    assign[sys.var_der[j]] = sys.eq_der[assign[j]]
            i = sys.eq_der[i]
    if differentiated:
        sys.differentiate_symbolically(differentiated)
    level = max((sys.level(i) for i in range(sys.n_eqs)), default=0)
    # assignments refer to highest derivatives only
    final = [a if sys.var_der[j] < 0 else -1 for j, a in enumerate(assign)]
    return PantelidesResult(final, differentiated, int(level))


def pantelides_pass(state: CompileState) -> CompileState:
    """Pass: differentiate the equations Pantelides' algorithm asks for (CasADi AD), on a
    copy of the equation system; then check every equation has a highest derivative."""
    sys = need(state.system, "the equation system (alias pass)").copy()
    result = pantelides(sys)
    check_matching(sys, state.diagnostics)
    return state.update(system=sys, pantelides=result)
