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

__all__ = ["GridOutputs", "MACHINE_MAX_POINTS"]

#: the most time points a table is evaluated at by the virtual machine (making the output
#: plan costs what about 600 points cost the machine: see above)
MACHINE_MAX_POINTS = 640

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
        self._machine: tuple[int, cs.Function] | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_machine": None}  # (made again when needed)

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

    def _point_function(self) -> tuple[int, cs.Function]:
        """The function of all outputs at one point, and the points of a chunk.

        (Called point by point from Python: a call costs a few microseconds, and no
        table evaluated this way has more than :data:`MACHINE_MAX_POINTS` points. A
        function mapped over a chunk would save them, but CasADi takes longer to make
        it than the calls cost: 0.08 s at 1 000 masses.)"""
        if self._machine is None:
            f = self.dae.output_function()  # (dense: every output's row written)
            self._machine = (max(1, min(64, CHUNK_VALUES // max(1, f.nnz_out(0)))), f)
        return self._machine

    def _by_machine(self, X: Any, Z: Any, p: np.ndarray, T: np.ndarray,
                    out: np.ndarray | None) -> np.ndarray:
        d = self.dae
        nt, n_out = len(T), self.n_out
        table = out if out is not None else np.empty((n_out, nt))
        if not nt or not n_out:
            return table.T
        chunk, f = self._point_function()
        buf, trigger = f.buffer()  # (one per call: calls from two threads do not mix)
        b = cast(Any, buf)
        Xt = _by_point(X, int(d.x.numel()), nt)
        Zt = _by_point(Z, int(d.z.numel()), nt)
        Tt = np.asarray(T, dtype=float)
        P = np.asarray(p, dtype=float).ravel().copy()
        rows = np.empty((chunk, n_out))  # (points' outputs, then copied into the table)
        b.set_arg(2, P.data)
        for k0 in range(0, nt, chunk):
            m = min(chunk, nt - k0)
            for j in range(m):
                b.set_arg(0, Xt[k0 + j].data)
                b.set_arg(1, Zt[k0 + j].data)
                b.set_arg(3, Tt[k0 + j:k0 + j + 1].data)
                b.set_res(0, rows[j].data)
                trigger()
            table[:, k0:k0 + m] = rows[:m].T
        return table.T


def _by_point(M: Any, n: int, nt: int) -> np.ndarray:
    """``(nt, n)``, C order: the ``(n, nt)`` matrix ``M`` (CasADi or numpy), point after
    point."""
    if not n:
        return np.zeros((nt, 0))
    A = M.full() if hasattr(M, "full") else np.asarray(M, dtype=float)
    return np.ascontiguousarray(A.reshape(n, nt).T)
