"""The array paths of the late structural passes (issue 14) against their definitions.

The levels of the BLT blocks are relaxed on arrays, with a pass in block order for deep
dependency chains; the block solution takes each level's coefficients from the residuals
as written and falls back to the substituted residuals where a coefficient has unknowns.
"""

from __future__ import annotations

import casadi as cs
import numpy as np
import pytest

from acausal.flatten import FlatEquation
from acausal.structure import causalize as causalize_module
from acausal.structure.causalize import causalize
from acausal.structure.solve import solve_blocks
from acausal.structure.system import EquationSystem
from acausal.symbols import SymbolTable


def _levels_by_definition(n_b: int, b_from: np.ndarray, b_to: np.ndarray) -> list[int]:
    """1 + the highest level of the blocks a block needs, in block order (the definition)."""
    level = [0] * n_b
    for b in range(n_b):
        needs = b_to[b_from == b]
        if len(needs):
            level[b] = 1 + max(level[m] for m in needs)
    return level


@pytest.mark.parametrize("depth", [0, 1, 5, causalize_module._SWEEPS + 10])
def test_block_levels_are_those_of_the_definition(depth):
    rng = np.random.default_rng(depth)
    n_b = 200
    # random dependencies on earlier blocks, and a chain of ``depth`` blocks through them
    b_from = rng.integers(1, n_b, 600)
    b_to = (rng.random(600) * b_from).astype(np.int64)
    chain = np.arange(1, depth + 1)
    b_from = np.concatenate([b_from, chain])
    b_to = np.concatenate([b_to, chain - 1])
    got = causalize_module._levels(n_b, b_from, b_to).tolist()
    assert got == _levels_by_definition(n_b, b_from, b_to)
    assert max(got) >= depth  # (the chain is as deep as asked: the deep pass ran)


def test_block_levels_without_dependencies_are_zero():
    empty = np.zeros(0, dtype=np.int64)
    assert causalize_module._levels(3, empty, empty).tolist() == [0, 0, 0]


def _coefficient_in_a_solved_unknown(tab: SymbolTable):
    """b = p (level 0); b c = 1: the coefficient of c is the unknown b, which the level
    before solves by a parameter: c is explicit, 1 / p."""
    a, b, c = tab.new_var("a"), tab.new_var("b"), tab.new_var("c")
    p = tab.new_parameter("p", 4.0)
    return [(tab.der(a) + a, "state"), (b - p, "b"), (b * c - 1, "c")]


def _coefficient_in_a_state(tab: SymbolTable):
    """a c = 1 with the state a: the coefficient of c depends on a, c stays implicit."""
    a, c = tab.new_var("a"), tab.new_var("c")
    return [(tab.der(a) + a, "state"), (a * c - 1, "c")]


@pytest.mark.parametrize("build, explicit", [(_coefficient_in_a_solved_unknown, True),
                                             (_coefficient_in_a_state, False)])
def test_coefficients_in_unknowns_are_decided_on_the_substituted_residuals(build, explicit):
    tab = SymbolTable()
    eqs = [FlatEquation(res, origin) for res, origin in build(tab)]
    sys = EquationSystem.from_lists(tab.t, list(tab.variables), eqs, list(tab.parameters))
    solved = solve_blocks(sys, causalize(sys, [sys.name_index["a"]]))
    assert ("c" in solved.solved) is explicit
    assert (solved.z_names == ["c"]) is not explicit
    if explicit:  # c = 1 / p, with the parameter p a divisor checked per run
        p = sys.parameter_symbols()
        f = cs.Function("f", [p], [solved.solved["c"]])
        assert float(f(4.0)) == 0.25  # (exact in binary)
        assert any(str(piv) == "p" for piv, _, _ in solved.pivots)
