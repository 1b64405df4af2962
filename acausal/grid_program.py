"""A CasADi function of scalars evaluated over a whole time grid by numpy, instruction by
instruction: the route of a name read alone on a long grid.

CasADi evaluates a function over ``nt`` columns point by point: its virtual machine costs
about 0.5 us per point and call, whatever the function (9 ms for one instruction on
20 001 points, most of the 12.6 ms a mass's position cost read alone). The same
instructions run once each on rows of ``nt`` values cost a numpy call each (about a
microsecond) and about a nanosecond per value: the 14 005 outputs of 1 000 masses that are
not read off the states, read one by one on 20 001 points, took 177 s through CasADi and
3.6 s this way (2026-11-29). The arithmetic is IEEE's in both; of the elementary
functions, numpy's sin, cos, exp, log and sqrt gave the C library's values here, while its
tan, inverse and hyperbolic functions, log1p, expm1 and pow are its own vectorised ones,
within 4 units in the last place (tested). The values were bit for bit CasADi's on every
name of three models (1 000 masses, 20 links, the spherical double pendulum); in general
they agree to rounding, as the table's do.
"""

from __future__ import annotations

from typing import Any

import casadi as cs
import numpy as np

__all__ = ["GridProgram"]


# (module functions, not lambdas: a program pickles; a model's DAE leaves its names'
# programs out of its own pickle, and makes them again)
def _assign(x: Any) -> Any:
    return x


def _sq(x: Any) -> Any:
    return x * x


def _twice(x: Any) -> Any:
    return x + x


def _inv(x: Any) -> Any:
    return 1.0 / x


def _sign(x: Any) -> Any:  # (CasADi's: -1, 1, or x itself for 0, -0 and NaN)
    return np.copysign(np.sign(x), x)


def _not(x: Any) -> Any:  # (comparisons and logic give 0.0 or 1.0, as CasADi's)
    return np.asarray(np.equal(x, 0.0), dtype=float)


def _lt(x: Any, y: Any) -> Any:
    return np.asarray(np.less(x, y), dtype=float)


def _le(x: Any, y: Any) -> Any:
    return np.asarray(np.less_equal(x, y), dtype=float)


def _eq(x: Any, y: Any) -> Any:
    return np.asarray(np.equal(x, y), dtype=float)


def _ne(x: Any, y: Any) -> Any:
    return np.asarray(np.not_equal(x, y), dtype=float)


def _and(x: Any, y: Any) -> Any:  # (NaN is true, as in C)
    return np.asarray(np.logical_and(np.not_equal(x, 0.0), np.not_equal(y, 0.0)), dtype=float)


def _or(x: Any, y: Any) -> Any:
    return np.asarray(np.logical_or(np.not_equal(x, 0.0), np.not_equal(y, 0.0)), dtype=float)


def _if_else_zero(c: Any, y: Any) -> Any:
    return np.where(np.equal(c, 0.0), 0.0, y)


_UNARY: dict[int, Any] = {
    cs.OP_ASSIGN: _assign, cs.OP_NEG: np.negative, cs.OP_EXP: np.exp, cs.OP_LOG: np.log,
    cs.OP_SQRT: np.sqrt, cs.OP_SQ: _sq, cs.OP_TWICE: _twice, cs.OP_SIN: np.sin,
    cs.OP_COS: np.cos, cs.OP_TAN: np.tan, cs.OP_ASIN: np.arcsin, cs.OP_ACOS: np.arccos,
    cs.OP_ATAN: np.arctan, cs.OP_FLOOR: np.floor, cs.OP_CEIL: np.ceil, cs.OP_FABS: np.fabs,
    cs.OP_SIGN: _sign, cs.OP_INV: _inv, cs.OP_SINH: np.sinh, cs.OP_COSH: np.cosh,
    cs.OP_TANH: np.tanh, cs.OP_ASINH: np.arcsinh, cs.OP_ACOSH: np.arccosh,
    cs.OP_ATANH: np.arctanh, cs.OP_LOG1P: np.log1p, cs.OP_EXPM1: np.expm1, cs.OP_NOT: _not,
}
_BINARY: dict[int, Any] = {
    cs.OP_ADD: np.add, cs.OP_SUB: np.subtract, cs.OP_MUL: np.multiply, cs.OP_DIV: np.divide,
    cs.OP_POW: np.power, cs.OP_CONSTPOW: np.power, cs.OP_FMOD: np.fmod,
    cs.OP_COPYSIGN: np.copysign, cs.OP_FMIN: np.fmin, cs.OP_FMAX: np.fmax,
    cs.OP_ATAN2: np.arctan2, cs.OP_HYPOT: np.hypot, cs.OP_LT: _lt, cs.OP_LE: _le,
    cs.OP_EQ: _eq, cs.OP_NE: _ne, cs.OP_AND: _and, cs.OP_OR: _or,
    cs.OP_IF_ELSE_ZERO: _if_else_zero,
}
#: the most points evaluated together, and the most intermediate values (points x the
#: function's work vector): the rows of 50 links' nonlinear outputs (11 902 instructions, 937
#: intermediate values) on 20 001 points took 0.75 s at once, 0.44 s 4 096 points at a
#: time, 0.85 s 256 at a time (each call costs more than its values), against 0.95 to
#: 1.29 s by CasADi point after point (2026-11-29)
CHUNK_POINTS, CHUNK_VALUES = 4096, 1 << 22

# kinds of instruction (tested in this order: the most frequent first)
_BIN, _UN, _IN, _CONST, _OUT = range(5)


class GridProgram:
    """The instructions of a CasADi function with one output, as numpy calls on rows of
    values over a grid (:meth:`of`; None where an instruction has no numpy equivalent,
    a call of another function, ``erf``, ...)."""

    __slots__ = ("code", "n_work", "n_rows")

    def __init__(self, code: list[tuple[int, Any, int, int, int]], n_work: int,
                 n_rows: int) -> None:
        self.code, self.n_work, self.n_rows = code, n_work, n_rows

    @classmethod
    def of(cls, f: cs.Function, inputs: list[list[int]] | None = None) -> GridProgram | None:
        """The program of ``f`` (inputs of scalars, one output): ``inputs[i][j]``, if given,
        is the row of argument ``i`` of :meth:`evaluate` that entry ``j`` of ``f``'s input
        ``i`` reads (``f`` made of some entries of larger vectors)."""
        rows = f.sparsity_out(0).row()  # (an entry's row in the dense output column)
        code: list[tuple[int, Any, int, int, int]] = []
        for k in range(f.n_instructions()):
            op = f.instruction_id(k)
            i = f.instruction_input(k)
            o = f.instruction_output(k)
            if op == cs.OP_INPUT:
                code.append((_IN, None, i[0], inputs[i[0]][i[1]] if inputs else i[1], o[0]))
            elif op == cs.OP_OUTPUT:
                code.append((_OUT, None, i[0], 0, rows[o[1]]))
            elif op == cs.OP_CONST:
                code.append((_CONST, f.instruction_constant(k), 0, 0, o[0]))
            elif op in _BINARY:
                code.append((_BIN, _BINARY[op], i[0], i[1], o[0]))
            elif op in _UNARY:
                code.append((_UN, _UNARY[op], i[0], 0, o[0]))
            else:
                return None
        return cls(code, int(f.sz_w()), int(f.numel_out(0)))

    @property
    def instructions(self) -> int:
        return len(self.code)

    def rows(self, start: int, stop: int) -> GridProgram:
        """The program of output rows ``start:stop`` alone: the instructions they need (a
        pass backwards from them through the work vector's slots, which CasADi reuses)."""
        needed: set[int] = set()
        keep: list[tuple[int, Any, int, int, int]] = []
        for ins in reversed(self.code):
            kind, fn, a, b, o = ins
            if kind == _OUT:
                if start <= o < stop:
                    keep.append((kind, fn, a, b, o - start))
                    needed.add(a)
            elif o in needed:
                needed.discard(o)  # (defined here: an earlier value of the slot is not)
                keep.append(ins)
                if kind == _BIN:
                    needed.add(a)
                    needed.add(b)
                elif kind == _UN:
                    needed.add(a)
        keep.reverse()
        return GridProgram(keep, self.n_work, stop - start)

    def evaluate(self, args: list[np.ndarray], nt: int) -> np.ndarray:
        """The output over the grid, ``(rows, nt)``: ``args[i]`` is ``(n_i, nt)`` (a row per
        entry) or ``(n_i,)`` (the same at every point). No warning of numpy's: a value that
        is not finite is what CasADi gives there too (a result notes it when read). Points
        go :data:`CHUNK_POINTS` at a time (fewer for a function of many intermediate values,
        :data:`CHUNK_VALUES`)."""
        out = np.zeros((self.n_rows, nt))
        chunk = max(256, min(CHUNK_POINTS, CHUNK_VALUES // max(self.n_work, 1)))
        if nt <= chunk:
            self._run(args, out)
            return out
        for k0 in range(0, nt, chunk):
            cut = slice(k0, k0 + chunk)
            self._run([a[:, cut] if a.ndim == 2 else a for a in args], out[:, cut])
        return out

    def _run(self, args: list[np.ndarray], out: np.ndarray) -> None:
        w: list[Any] = [0.0] * self.n_work
        with np.errstate(all="ignore"):
            for kind, fn, a, b, o in self.code:
                if kind == _BIN:
                    w[o] = fn(w[a], w[b])
                elif kind == _UN:
                    w[o] = fn(w[a])
                elif kind == _IN:
                    w[o] = args[a][b]
                elif kind == _CONST:
                    w[o] = fn
                else:
                    out[o] = w[a]
