"""Cheaper CasADi ``SX`` arithmetic while a model is built.

CasADi's Python operators on ``SX`` (``a + b``, ``a == b``, ``2 * a``...) spend most of
their time choosing among the overloads of the wrapped C++ function (float, DM, SX, MX,
numpy arrays): about 25 microseconds for a scalar ``a + b``, of which the operation itself
takes about 2 (``SX.binary(OP_ADD, a, b)``). A build forms hundreds of thousands of such
scalar operations in the components' ``equations()`` and in the passes, so while
:func:`acausal.build` runs, :func:`fast_operators` routes the operators of ``SX`` operands
with ``SX``, ``float`` or ``int`` partners straight to ``SX.binary``, which is the function
the overloads end in (``plus(x, y)`` is ``binary(OP_ADD, x, y)`` in CasADi). Any other
partner (numpy values, ``DM``, ``MX``, unsupported types) goes to CasADi's own operator,
so results and error messages are the same as without it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import casadi as cs

__all__ = ["fast_operators"]

_SX = cs.SX
# the C function behind the ``SX.binary`` wrapper (one Python call less per operation)
_binary = getattr(getattr(cs, "_casadi", None), "SX_binary", cs.SX.binary)
_FAST = (cs.SX, float, int)

# (method, operation, reflected): reflected ones compute ``other op self``
_TABLE: tuple[tuple[str, int, bool], ...] = (
    ("__add__", cs.OP_ADD, False), ("__radd__", cs.OP_ADD, True),
    ("__sub__", cs.OP_SUB, False), ("__rsub__", cs.OP_SUB, True),
    ("__mul__", cs.OP_MUL, False), ("__rmul__", cs.OP_MUL, True),
    ("__truediv__", cs.OP_DIV, False), ("__rtruediv__", cs.OP_DIV, True),
    ("__eq__", cs.OP_EQ, False), ("__ne__", cs.OP_NE, False),
    ("__lt__", cs.OP_LT, False), ("__le__", cs.OP_LE, False),
    ("__gt__", cs.OP_LT, True), ("__ge__", cs.OP_LE, True),
)

_lock = threading.Lock()
_depth = 0
_originals: dict[str, Callable[..., Any] | None] = {}  # None: inherited, not own


def _make(op: int, reflected: bool, orig: Callable[..., Any]) -> Callable[..., Any]:
    if reflected:
        def method(x: Any, y: Any) -> Any:
            if type(y) in _FAST and type(x) is _SX:
                return _binary(op, y, x)
            return orig(x, y)
    else:
        def method(x: Any, y: Any) -> Any:
            if type(y) in _FAST and type(x) is _SX:
                return _binary(op, x, y)
            return orig(x, y)
    method.__name__ = orig.__name__
    method.__doc__ = orig.__doc__
    return method


@contextmanager
def fast_operators() -> Iterator[None]:
    """Within the block, ``SX`` operators with ``SX``/``float``/``int`` operands call
    ``SX.binary`` directly (same results; see the module docstring). Re-entrant and
    shared between threads: the operators are restored when the last block ends."""
    global _depth
    with _lock:
        if _depth == 0:
            for name, op, reflected in _TABLE:
                _originals[name] = _SX.__dict__.get(name)
                setattr(_SX, name, _make(op, reflected, getattr(_SX, name)))
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                for name, orig in _originals.items():
                    if orig is None:
                        delattr(_SX, name)
                    else:
                        setattr(_SX, name, orig)
                _originals.clear()
