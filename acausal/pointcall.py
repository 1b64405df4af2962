"""Fast evaluation of a CasADi function at one point.

Calling a ``casadi.Function`` from Python with numpy arguments converts every argument
to a ``DM`` and the results back (some 50 us for a small function, against 2 us for the
evaluation itself). Event handling evaluates the indicators and the rates at one point
many times per event; :class:`PointCall` evaluates through the function's buffer
(``Function.buffer``: numpy memory passed to the compiled instructions, no conversion).
"""

from __future__ import annotations

from typing import Any, cast

import casadi as cs
import numpy as np

__all__ = ["PointCall", "call_dense", "euler_gap", "point_call"]


class PointCall:
    """``f`` at one point: arguments as scalars or flat arrays of the inputs' sizes, the
    outputs as flat numpy arrays (dense, copies). Functions with a sparse input are
    called the ordinary way."""

    def __init__(self, f: cs.Function) -> None:
        self.f = f
        self.fast = all(f.sparsity_in(i).is_dense() for i in range(f.n_in()))
        if not self.fast:
            return
        buf, self.trigger = f.buffer()
        # (its stubs ask for a size, which the binding takes from the view)
        self.buf = cast(Any, buf)
        self.args = [np.zeros(f.nnz_in(i)) for i in range(f.n_in())]
        self.res = [np.zeros(f.nnz_out(i)) for i in range(f.n_out())]
        for i, a in enumerate(self.args):
            self.buf.set_arg(i, a.data)
        for i, r in enumerate(self.res):
            self.buf.set_res(i, r.data)
        # output rows of structural nonzeros (outputs are column vectors)
        self.rows = [None if f.sparsity_out(i).is_dense() else
                     np.asarray(f.sparsity_out(i).row(), dtype=int) for i in range(f.n_out())]
        self.sizes = [int(f.numel_out(i)) for i in range(f.n_out())]

    def __call__(self, *args: Any) -> list[np.ndarray]:
        if not self.fast:
            out = self.f(*args)
            outs = out if isinstance(out, (list, tuple)) else [out]
            return [np.asarray(o, dtype=float).ravel() for o in outs]
        for a, v in zip(self.args, args, strict=True):
            a[:] = np.ravel(v) if a.size else a
        self.trigger()
        out = []
        for r, rows, n in zip(self.res, self.rows, self.sizes, strict=True):
            if rows is None:
                out.append(r.copy())
            else:
                full = np.zeros(n)
                full[rows] = r
                out.append(full)
        return out


def point_call(cache: dict[int, tuple[cs.Function, PointCall]], f: cs.Function) -> PointCall:
    """The :class:`PointCall` of ``f`` kept in ``cache`` (by the function's identity; the
    function is kept with it, so the identity stays its own)."""
    entry = cache.get(id(f))
    if entry is None or entry[0] is not f:
        entry = cache[id(f)] = (f, PointCall(f))
    return entry[1]


def call_dense(f: cs.Function, args: dict[str, Any]) -> dict[str, Any]:
    """``f(**args)`` with its outputs as numpy matrices, through the function's buffer: an
    integrator's trajectory (states by output points, millions of values for a large
    model) is written into numpy memory instead of being converted from a ``DM`` element
    by element (65 ns each). A function with a sparse input or output is called the
    ordinary way. Errors are those of the ordinary call (``RuntimeError``). The
    function's statistics of this call (an integrator's steps) are under ``"_stats"``."""
    n_in, n_out = f.n_in(), f.n_out()
    if not (all(f.sparsity_in(i).is_dense() for i in range(n_in))
            and all(f.sparsity_out(i).is_dense() for i in range(n_out))):
        out = dict(f(**args))
        out["_stats"] = f.stats()
        return out
    buf, trigger = f.buffer()
    b = cast(Any, buf)
    ins = []
    for i in range(n_in):
        a = np.zeros(f.nnz_in(i))
        v = args.get(f.name_in(i))
        if v is not None and a.size:
            a[:] = np.ravel(np.asarray(v, dtype=float), order="F")
        ins.append(a)
        b.set_arg(i, a.data)
    outs = [np.zeros(f.nnz_out(i)) for i in range(n_out)]
    for i, r in enumerate(outs):
        b.set_res(i, r.data)
    trigger()
    res: dict[str, Any] = {f.name_out(i): r.reshape(f.size_out(i), order="F")
                           for i, r in enumerate(outs)}
    res["_stats"] = b.stats()
    return res


def euler_gap(calls: dict[int, Any], dae: Any, x: np.ndarray, z: np.ndarray, p: np.ndarray,
              t: float, dt: float) -> np.ndarray:
    """The states ``x`` carried over a short gap ``dt`` from ``t`` by one explicit Euler step
    with their rates at ``(x, z, p, t)`` (``calls``: the caller's cache of one-point
    evaluators): the gaps around an event instant (1e-12 s: error ``dt^2 |x''| / 2``, some
    1e-24), and intervals CasADi's integrators do not step."""
    if not x.size or dt == 0.0:
        return x
    return x + dt * point_call(calls, dae.default_function)(x, z, p, t)[0]
