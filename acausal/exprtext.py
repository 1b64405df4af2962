"""Expressions as text for messages and event logs.

CasADi prints an expression whose subexpressions are shared with ``@1=...`` definitions in
front (``@1=(1.5<fr.mode), ((@1?x:0)+((!@1)?y:0))``), which reads like a dump. Here every
node is written where it is used, ``if_else(c, a, b)`` is recognised in the two masked terms
CasADi makes of it, and the text stops at a width with ``...``.
"""

from __future__ import annotations

from typing import Any

import casadi as cs

__all__ = ["expression_text", "readable", "READABLE"]

#: a text longer than this reads worse than the source it came from, where there is one
READABLE = 60

_HOLES = (cs.SX.sym("__hole0__"), cs.SX.sym("__hole1__"))
_FORMATS: dict[tuple[int, int], str] = {}


class _Full(Exception):
    """The text reached its width."""


def _format(op: int, n: int) -> str:
    """CasADi's way of writing the operation ``op`` (its operands as holes)."""
    key = (op, n)
    if key not in _FORMATS:
        try:
            node = cs.SX.unary(op, _HOLES[0]) if n == 1 else cs.SX.binary(op, *_HOLES)
            _FORMATS[key] = str(node)
        except Exception:  # noqa: BLE001 - an operation CasADi cannot make this way
            _FORMATS[key] = ""
    return _FORMATS[key]


def _if_else(e: cs.SX) -> tuple[cs.SX, cs.SX, cs.SX] | None:
    """``(c, a, b)`` if ``e`` is CasADi's ``if_else(c, a, b)``:
    ``(c ? a : 0) + ((!c) ? b : 0)``."""
    if not e.is_op(cs.OP_ADD):
        return None
    u, v = e.dep(0), e.dep(1)
    if not (u.is_op(cs.OP_IF_ELSE_ZERO) and v.is_op(cs.OP_IF_ELSE_ZERO)):
        return None
    c, nc = u.dep(0), v.dep(0)
    if nc.is_op(cs.OP_NOT) and cs.is_equal(nc.dep(0), c, 1):
        return c, u.dep(1), v.dep(1)
    if c.is_op(cs.OP_NOT) and cs.is_equal(c.dep(0), nc, 1):
        return nc, v.dep(1), u.dep(1)
    return None


def expression_text(e: Any, width: int = 100) -> str:
    """``e`` written out in full (no ``@k`` definitions), cut at ``width`` characters."""
    try:
        sx = cs.SX(e)
    except Exception:  # noqa: BLE001
        return str(e)[:width]
    if not sx.is_scalar():
        text = str(sx)
        return text if len(text) <= width else text[: width - 3] + "..."
    limit = 4 * width
    used = [0]
    depth_left = [10**9]

    def go(x: cs.SX) -> str:
        if x.is_symbolic() or x.is_constant() or x.n_dep() == 0:
            s = str(x)
        elif depth_left[0] <= 0:
            s = "(...)"
        else:
            depth_left[0] -= 1
            s = node(x)
            depth_left[0] += 1
        used[0] += len(s)
        if used[0] > limit * 4 or len(s) > limit:
            raise _Full
        return s

    def node(x: cs.SX) -> str:
        branches = _if_else(x)
        if branches is not None:
            c, a, b = branches
            return f"if_else({go(c)}, {go(a)}, {go(b)})"
        if x.is_op(cs.OP_IF_ELSE_ZERO):
            return f"if_else({go(x.dep(0))}, {go(x.dep(1))}, 0)"
        n = x.n_dep()
        fmt = _format(x.op(), n)
        if not fmt:
            return "(...)"  # (an operation CasADi only prints with its definitions)
        s = fmt.replace("__hole0__", go(x.dep(0)))
        return s.replace("__hole1__", go(x.dep(1))) if n > 1 else s

    text = ""
    for depth in (10**9, 8, 5, 3, 2, 1):  # the whole expression, else its top levels
        depth_left[0], used[0] = depth, 0
        try:
            text = go(sx)
            break
        except (_Full, RecursionError):
            continue
    else:
        text = "(...)"
    return text if len(text) <= width else text[: width - 3] + "..."


def readable(text: str) -> bool:
    """Whether an expression's text reads well as it is (short, whole)."""
    return len(text) <= READABLE and "..." not in text and "@" not in text
