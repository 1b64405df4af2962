"""Conditional and non-smooth functions for equations: ``if_else``, ``fmin``, ``fmax``,
``fabs``, ``sign``.

Inside ``equations()`` the quantities are symbols, so Python's ``if``, ``and``, ``min`` or
``max`` cannot decide anything (their value is not known when the equations are built).
These functions build the condition into the equation instead:

    def equations(self):
        return [self.i == ac.if_else(self.v > 0, self.v / self.R_on, self.v / self.R_off)]

They are thin wrappers of the CasADi functions of the same name and accept plain numbers
too. The points where their value switches are where the solution is not smooth; they
will become event indicators (the integrator stops there and restarts), so prefer them to
hand-made smooth approximations.
"""

from __future__ import annotations

from typing import Any

import casadi as cs

__all__ = ["if_else", "fmin", "fmax", "fabs", "sign"]


def _numbers(*args: Any) -> bool:
    return all(isinstance(a, (int, float)) for a in args)  # bool is an int


def if_else(condition: Any, if_true: Any, if_false: Any) -> Any:
    """``if_true`` where ``condition`` holds, else ``if_false`` (``casadi.if_else``).

    Parameters
    ----------
    condition : expression
        A comparison of symbols (``self.v > 0``), or a combination of comparisons with
        ``casadi.logic_and``/``logic_or``/``logic_not``.
    if_true, if_false : expression or number
        The two branches. Both are evaluated; keep each finite where it is not selected
        (no division by zero in the branch that is not taken).
    """
    if _numbers(condition, if_true, if_false):
        return if_true if condition else if_false
    return cs.if_else(condition, if_true, if_false)


def fmin(a: Any, b: Any) -> Any:
    """The smaller of ``a`` and ``b`` (``casadi.fmin``)."""
    if _numbers(a, b):
        return min(a, b)
    return cs.fmin(a, b)


def fmax(a: Any, b: Any) -> Any:
    """The larger of ``a`` and ``b`` (``casadi.fmax``)."""
    if _numbers(a, b):
        return max(a, b)
    return cs.fmax(a, b)


def fabs(x: Any) -> Any:
    """The absolute value of ``x`` (``casadi.fabs``; Python's ``abs`` also works)."""
    if _numbers(x):
        return abs(x)
    return cs.fabs(x)


def sign(x: Any) -> Any:
    """-1, 0 or 1 by the sign of ``x`` (``casadi.sign``)."""
    if _numbers(x):
        return (x > 0) - (x < 0)
    return cs.sign(x)


def no_relation_of(F: cs.SX, unknowns: cs.SX) -> bool:
    """Whether ``F`` certainly holds no relation and no kink of ``unknowns``: no point where
    one of these functions switches as the unknowns change (the build's proof that a model
    needs no event indicators; two passes over the graph in CasADi).

    CasADi counts ``<``, ``<=``, ``sign`` (and ``==``, ``floor``, ``if_else``...) as not
    smooth, ``fabs``, ``fmin`` and ``fmax`` as smooth; but the derivative of a kink is a
    sign or a comparison, so a kink of the unknowns shows in the directional derivative
    along a symbolic seed (symbolic, so that no two terms can cancel). A kink of time and
    parameters only is left as it is by the relations pass anyway.
    """
    if not F.is_smooth():
        return False
    if not unknowns.numel():
        return True
    return bool(cs.jtimes(F, unknowns, cs.SX.sym("seed", unknowns.numel())).is_smooth())
