"""Every output of a model over a time grid: the table a result reads when all is asked for.

Two ways, chosen by what they cost (measured on the mass-spring-damper chain of 1 000 and
10 000 masses, 2026-11-27; figures for 10 000: 230 008 outputs, 101 points):

* **CasADi's virtual machine**: the function of all outputs evaluated point after point
  through its buffer (numpy memory in and out; converting the ``DM`` of a plain call
  instead took 4.3 s for these 23 million values). Making the function costs next to
  nothing (0.07 s for its 410 000 instructions); a point costs 3 to 4 ns per instruction,
  ~1.1 ms, and ~1.8 ms with the copy into the table (2026-11-29, chunks of 36 points;
  ~3 ms with the chunks of 4 points used before, see :data:`CHUNK_VALUES`).
* **the output plan** (:class:`acausal.dae._BulkOutputs`): one sparse product
  ``M(p) w`` plus offsets. A point costs a third to a quarter of the machine's, but
  making the plan (read-off rows, the symbolic Jacobian of the affine ones) costs 1.5 to
  1.8 s (0.14 to 0.2 s at 1 000 masses): what 600 to 1 000 points cost the machine, at
  both sizes (on 1 001 points the machine took 2.1 to 3.5 s at 10 000 masses, its
  table of 1.8 GB mostly new memory, the plan 2.1 to 2.6 s with its making).

So a table of up to :data:`MACHINE_MAX_POINTS` points is evaluated by the machine, a
longer one by the plan (made by the first such table and kept by the model). The choice
depends on the grid alone, not on what the model evaluated before, so a table's values do
not depend on the history of the process (the two ways agree to rounding only: the
product sums in another order), and a saved model gives what the model gave.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import casadi as cs
import numpy as np

if TYPE_CHECKING:
    from .dae import SemiExplicitDAE

__all__ = ["GridOutputs", "MACHINE_MAX_POINTS", "MAX_PARTS", "NAME_SECONDS",
           "NAME_SECONDS_PER_INSTRUCTION", "NAME_SECONDS_PER_POINT",
           "PROGRAM_SECONDS_PER_INSTRUCTION", "PROGRAM_SECONDS_PER_VALUE", "READ_OFF_SECONDS",
           "READ_OFF_SECONDS_PER_POINT", "TABLE_SECONDS_PER_ENTRY", "by_points", "point_args",
           "program_pays", "read_seconds"]

#: the most time points a table is evaluated at by the virtual machine (making the output
#: plan costs what about 600 points cost the machine: see above)
MACHINE_MAX_POINTS = 640

#: the most functions (or programs) of runs of rows a model keeps: a grid's blocks
#: (:class:`acausal.results.Result`) partition the table, other grids' blocks differ
MAX_PARTS = 256

#: what reading outputs costs, for a result's choice between names read one by one and the
#: table of all (:meth:`acausal.results.Result._column`) and for the route of a name: the
#: table ~16 ns per entry (outputs x points; 12 to 26 ns measured on the mass-spring chain
#: of 1 000 and 10 000 masses and the link chain of 50 and 200 links, 101 to 20 001
#: points, both ways); a name read alone 1.5 ms (its plan, made on the first read, and the
#: result's checks), plus, by CasADi, per point 1 us and 6 ns per instruction of the
#: name's own function, or, as numpy calls over the grid (:mod:`acausal.grid_program`),
#: per instruction 3 us (reading it from CasADi, once, and a numpy call) and 0.8 ns per
#: value (fitted on 1 000 masses, 20 links and the spherical double pendulum on 101 to
#: 20 001 points, 2026-11-29: 0.44 us a call and 0.77 ns a value, 2.6 us an instruction
#: read; the median name of 20 links, 190 instructions, on 20 001 points 5.3 ms instead of
#: 59); and a name read off the
#: states (one of them or its negation, no function) 50 us plus 5 ns per point (0.1 to
#: 0.17 ms on 20 001 points). Estimates, not timings, so the route of a read, and with it
#: the rounding of its value, does not depend on the machine's load; only ratios matter
TABLE_SECONDS_PER_ENTRY = 16e-9
NAME_SECONDS, NAME_SECONDS_PER_POINT, NAME_SECONDS_PER_INSTRUCTION = 1.5e-3, 1e-6, 6e-9
PROGRAM_SECONDS_PER_INSTRUCTION, PROGRAM_SECONDS_PER_VALUE = 3e-6, 0.8e-9
READ_OFF_SECONDS, READ_OFF_SECONDS_PER_POINT = 5e-5, 5e-9

#: the most values of one chunk of points (the chunk is transposed into the table: each output
#: receives a run of the chunk's points, and runs shorter than a few cache lines make the
#: copy cost more than the evaluation: 0.27 s for runs of 4 points at 10 000 masses, 0.07 s
#: for runs of 32, against 0.11 s for the 101 points' evaluation; 8 Mi values, 64 MB, give
#: runs of 36 points there)
CHUNK_VALUES = 1 << 23


class GridOutputs:
    """The table of all outputs of ``dae`` over grids (kept by the DAE with the function
    it evaluates)."""

    def __init__(self, dae: SemiExplicitDAE) -> None:
        self.dae = dae
        self._machine: cs.Function | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_machine": None, "_parts": {}}  # (made again when needed)

    @property
    def n_out(self) -> int:
        return sum(self.dae.out_sizes)

    def evaluate(self, X: Any, Z: Any, p: np.ndarray, T: np.ndarray,
                 out: np.ndarray | None = None) -> np.ndarray:
        """All outputs, ``(nt, n_out)``: the transpose of the ``(n_out, nt)`` table (into
        ``out``, if given, e.g. a slice of a larger one)."""
        if len(T) > MACHINE_MAX_POINTS:
            return self.dae.bulk_outputs.evaluate(X, Z, p, T, out=out)
        return self._by_machine(X, Z, p, T, out)

    def evaluate_rows(self, start: int, stop: int, X: Any, Z: Any, p: np.ndarray,
                      T: np.ndarray, ready: dict[str, Any] | None = None) -> np.ndarray:
        """Outputs ``start:stop``, ``(nt, stop - start)``: the same values, bit for bit, as
        those columns of :meth:`evaluate` (the same instructions for those rows, by the
        same route), with no table of the others. ``ready`` keeps what the inputs become
        for either route (the states point by point, or stacked), for the next rows."""
        ready = {} if ready is None else ready
        if len(T) > MACHINE_MAX_POINTS:
            return self.dae.bulk_outputs.evaluate(X, Z, p, T, rows=(start, stop), ready=ready)
        return self._by_machine(X, Z, p, T, None, (start, stop), ready)

    def _point_function(self, start: int, stop: int) -> cs.Function:
        """The function of outputs ``start:stop`` at one point (called point by point from
        Python, :func:`by_points`: a call costs a few microseconds, and no table evaluated
        this way has more than :data:`MACHINE_MAX_POINTS` points. A function mapped over a
        chunk would save them, but CasADi takes longer to make it than the calls cost:
        0.08 s at 1 000 masses). That of all outputs is the model's; those of runs of them
        are kept here, :data:`MAX_PARTS` at most."""
        d = self.dae
        if start == 0 and stop == self.n_out:
            if self._machine is None:
                self._machine = d.output_function()  # (dense: every output's row written)
            return self._machine
        parts = self.__dict__.setdefault("_parts", {})  # (absent from models saved before)
        f = parts.get((start, stop))
        if f is None:
            if len(parts) >= MAX_PARTS:  # (the blocks of many grids: start again)
                parts.clear()
            f = parts[start, stop] = cs.Function(
                "outputs", [d.x, d.z, d.p, d.t], [cs.densify(d.stacked_outputs()[start:stop])])
        return f

    def _by_machine(self, X: Any, Z: Any, p: np.ndarray, T: np.ndarray,
                    out: np.ndarray | None, rows: tuple[int, int] | None = None,
                    ready: dict[str, Any] | None = None) -> np.ndarray:
        d = self.dae
        start, stop = rows if rows is not None else (0, self.n_out)
        nt = len(T)
        table = out if out is not None else np.empty((stop - start, nt))
        if nt and stop > start:
            args = ready.get("points") if ready is not None else None
            if args is None:
                args = point_args(X, Z, p, T, int(d.x.numel()), int(d.z.numel()))
                if ready is not None:
                    ready["points"] = args
            by_points(self._point_function(start, stop), args, table)
        return table.T


def read_seconds(dae: SemiExplicitDAE, k: int, nt: int) -> float:
    """The estimated cost of reading output ``k`` of ``dae`` alone on ``nt`` points (after
    its first read, which made its plan)."""
    if dae.output_column_is_read_off(k):
        return READ_OFF_SECONDS + nt * READ_OFF_SECONDS_PER_POINT
    n = dae.output_column_instructions(k)
    if program_pays(n, nt) and dae.output_column_has_program(k):
        return _program_seconds(n, nt)
    return _casadi_seconds(n, nt)


def program_pays(instructions: int, nt: int) -> bool:
    """Whether a name whose function has ``instructions`` is read on ``nt`` points as numpy
    calls over the grid (:mod:`acausal.grid_program`) rather than by CasADi."""
    return _program_seconds(instructions, nt) < _casadi_seconds(instructions, nt)


def _casadi_seconds(instructions: int, nt: int) -> float:
    return NAME_SECONDS + nt * (NAME_SECONDS_PER_POINT
                                + NAME_SECONDS_PER_INSTRUCTION * instructions)


def _program_seconds(instructions: int, nt: int) -> float:
    return NAME_SECONDS + instructions * (PROGRAM_SECONDS_PER_INSTRUCTION
                                          + nt * PROGRAM_SECONDS_PER_VALUE)


def by_points(f: cs.Function, args: list[np.ndarray], table: np.ndarray | None = None
              ) -> np.ndarray:
    """``table[:, k]`` = ``f`` at point ``k`` (``table``: ``(rows, nt)``, ``rows`` the
    entries of ``f``'s dense output; made if not given, and returned), evaluated point
    after point through ``f``'s buffer: no CasADi matrix is made (one call of ``f`` on
    the whole grid, its ``DM`` result converted, took 19 to 21 s for the 3 650 rows of 50
    links that the output plan evaluates as they are, on 20 001 points, against 1.1 to
    2.1 s here; the whole table peaked at 6.9 GB that way). ``args[i]`` is ``(nt, n_i)``
    in C order (a row per point) or one-dimensional (the same at every point). Points go
    :data:`CHUNK_VALUES` values at a time into a buffer that is then transposed into the
    table."""
    if table is None:
        nt = next(a for a in args if a.ndim == 2).shape[0]  # (the time, at least)
        table = np.empty((int(f.nnz_out(0)), nt))
    n, nt = table.shape
    if not n or not nt:
        return table
    chunk = max(1, min(64, CHUNK_VALUES // n))
    buf, trigger = f.buffer()  # (one per call: calls from two threads do not mix)
    b = cast(Any, buf)
    moving = []
    for i, a in enumerate(args):
        if a.ndim == 1:
            b.set_arg(i, a.data)
        else:
            moving.append((i, a))
    rows = np.empty((chunk, n))  # (points' outputs, then copied into the table)
    for k0 in range(0, nt, chunk):
        m = min(chunk, nt - k0)
        for j in range(m):
            for i, a in moving:
                b.set_arg(i, a[k0 + j].data)
            b.set_res(0, rows[j].data)
            trigger()
        table[:, k0:k0 + m] = rows[:m].T
    return table


def point_args(X: Any, Z: Any, p: np.ndarray, T: np.ndarray, nx: int, nz: int
               ) -> list[np.ndarray]:
    """The arguments of :func:`by_points` for a function of ``(x, z, p, t)`` over the grid
    ``T``, from the ``(nx, nt)`` and ``(nz, nt)`` matrices ``X`` and ``Z`` (CasADi or
    numpy) and the parameter values ``p``."""
    nt = len(T)
    return [_by_point(X, nx, nt), _by_point(Z, nz, nt), np.asarray(p, dtype=float).ravel().copy(),
            np.ascontiguousarray(T, dtype=float).reshape(-1, 1)]


def _by_point(M: Any, n: int, nt: int) -> np.ndarray:
    """``(nt, n)``, C order: the ``(n, nt)`` matrix ``M`` (CasADi or numpy), point after
    point."""
    if not n:
        return np.zeros((nt, 0))
    A = M.full() if hasattr(M, "full") else np.asarray(M, dtype=float)
    return np.ascontiguousarray(A.reshape(n, nt).T)
