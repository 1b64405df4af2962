"""The semi-explicit index-1 DAE in CasADi, assembled from the solved BLT blocks.

    x' = ode(x, z, p, t),    0 = alg(x, z, p, t)

``x`` are the chosen states, ``z`` the unknowns of the implicit blocks
(:mod:`acausal.structure.solve`); every other unknown has an explicit expression. Every
variable of the model (aliases and port quantities included) gets an output expression in
``(x, z, p, t)``, so results are addressable by dotted path.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence, Sized
from dataclasses import field
from functools import cached_property
from itertools import filterfalse, islice
from operator import attrgetter
from typing import TYPE_CHECKING, Any, overload

import casadi as cs
import numpy as np

from .csr import CSR, unique
from .fastsx import same_nodes, stack, take
from .graph_columns import BlockNames
from .grid_outputs import MAX_PARTS, GridOutputs, by_points, point_args, program_pays
from .grid_program import GridProgram
from .records import record
from .results import LazyNames, Sizes
from .solvers.newton import AlgebraicSystem
from .state import need
from .structure.blt import Blocks
from .structure.solve import SolvedBlocks
from .structure.system import EquationSystem, rows_of
from .symbols import FlatVariable

if TYPE_CHECKING:
    from .state import CompileState

__all__ = ["SemiExplicitDAE", "assemble_dae", "dae_pass"]

#: nonzeros of the affine output map from which it is multiplied by scipy instead of numpy
#: (:meth:`CSR.dot`: as fast up to a few hundred, 20 times slower at 3 000)
SCIPY_PRODUCT_MIN = 500
#: the most entries of ``w = [x; z]`` an output may depend on to be tested for a place in
#: the output plan's product (its symbolic Jacobian, and the test that its coefficients
#: are free of ``w``); a row depending on more is evaluated as it is. An affine output
#: (a variable's alias, a spring's force, a cutset sum) depends on a few; a body's
#: position at the end of a chain of 50 links depends on up to 100, and the Jacobian
#: test of such rows (nonlinear in every one) took 3.9 s there (the plan is made in
#: 0.07 s without it), more than the whole table on 20 001 points costs (1.8 to 2.7 s)
PLAN_MAX_DEGREE = 16
_RAW = getattr(cs, "_casadi", None)
_SIZE1 = getattr(_RAW, "GenSX_size1", cs.SX.size1)
_SIZE2 = getattr(_RAW, "GenSX_size2", cs.SX.size2)
_NUMEL = getattr(_RAW, "GenSX_numel", cs.SX.numel)


@record(eq=False)
class SemiExplicitDAE:
    """``x' = ode(x, z, p, t)``, ``0 = alg(x, z, p, t)`` with named outputs.

    The CasADi functions built from it (:meth:`function`, :meth:`output_function`, ...) are
    built once, on first use, and kept.
    """

    t: cs.SX
    x: cs.SX
    z: cs.SX
    p: cs.SX
    ode: cs.SX
    alg: cs.SX
    x_names: list[str]
    z_names: list[str]
    p_names: list[str]
    p_values: np.ndarray
    out_names: Sequence[str]  # (an :class:`OutNames` when built)
    out_expr: Sequence[cs.SX]
    out_sizes: Sequence[int]  # (a :class:`~acausal.results.Sizes` when built)
    blocks: Blocks = field(default_factory=lambda: Blocks.of([]))  # the BLT blocks
    explicit: int = 0
    n_sys: int = 0  # the first n_sys outputs are the equation system's variables
    out_stacked: cs.SX | None = None
    alg_labels: list[str] = field(default_factory=list)  # the equation behind each alg row
    indicators: cs.SX | None = None  # event indicators g(x, z, p, t) of the relations
    relations: list[Any] = field(default_factory=list)  # their Relation records

    def __getstate__(self) -> dict[str, Any]:
        # (the names' numpy programs are made again when needed: a saved model does not
        # depend on how acausal.grid_program spells its operations)
        return {k: v for k, v in self.__dict__.items() if k != "_column_programs"}

    @cached_property
    def grid_outputs(self) -> GridOutputs:
        """Every output over a grid: by CasADi's function of all outputs, or by the output
        plan on a grid of more than 640 points (:mod:`acausal.grid_outputs`)."""
        return GridOutputs(self)

    @cached_property
    def bulk_outputs(self) -> _BulkOutputs:
        """The output plan: every output over a grid as one sparse product (see
        :class:`_BulkOutputs`; made by :attr:`grid_outputs` for a long grid)."""
        return _BulkOutputs.of(self)

    @cached_property
    def indicator_rate_function(self) -> cs.Function | None:
        """``(x, z, p, t) -> dg/dt`` along the solution (``z'`` from the differentiated
        algebraic equations), or None when the algebraic block is too large to solve
        symbolically (more than 50 unknowns)."""
        g = self.indicators if self.indicators is not None else cs.SX(0, 1)
        nz = int(self.z.numel())
        if nz > 50:
            return None
        rate = cs.jtimes(g, self.x, self.ode) + cs.jacobian(g, self.t)
        if nz:
            rhs = cs.jtimes(self.alg, self.x, self.ode) + cs.jacobian(self.alg, self.t)
            zdot = -cs.solve(cs.jacobian(self.alg, self.z), rhs)
            rate = rate + cs.mtimes(cs.jacobian(g, self.z), zdot)
        return cs.Function("indicator_rates", [self.x, self.z, self.p, self.t], [rate])

    @cached_property
    def indicator_function(self) -> cs.Function:
        """``(x, z, p, t) -> g``: the indicators of the frozen relations."""
        g = self.indicators if self.indicators is not None else cs.SX(0, 1)
        return cs.Function("indicators", [self.x, self.z, self.p, self.t], [g])

    def function(self, name: str = "dae") -> cs.Function:
        """``(x, z, p, t) -> (ode, alg)`` as a named CasADi function."""
        return cs.Function(name, [self.x, self.z, self.p, self.t], [self.ode, self.alg],
                           ["x", "z", "p", "t"], ["ode", "alg"])

    @cached_property
    def default_function(self) -> cs.Function:
        """:meth:`function` built once."""
        return self.function()

    @cached_property
    def out_index(self) -> dict[str, int]:
        """Output name -> position in :attr:`out_names`."""
        return {n: k for k, n in enumerate(self.out_names)}

    def output_function(self) -> cs.Function:
        """``(x, z, p, t) -> all outputs`` stacked in one column.

        Called with ``nt`` columns of ``x``, ``z``, ``t`` it evaluates all times at once.
        """
        return self._output_function

    def output_column_function(self, k: int) -> cs.Function:
        """``(x, z, p, t) -> output k`` (as a column), built on first use and kept."""
        f = self._column_functions.get(k)
        if f is None:
            f = self._column_functions[k] = cs.Function(
                "output", [self.x, self.z, self.p, self.t], [cs.vec(self.out_expr[k])])
        return f

    @cached_property
    def _column_functions(self) -> dict[int, cs.Function]:
        return {}

    def output_column(self, k: int, X: np.ndarray, Z: np.ndarray, p: np.ndarray,
                      T: np.ndarray) -> np.ndarray:
        """Output ``k`` over a grid, ``(nt, size)``, from the states ``X`` and algebraic
        variables ``Z`` (one column per time point).

        Costs what the output's expression costs, not what the model does: the function
        takes only the entries of ``x``, ``z`` and ``p`` the expression depends on, and
        only those rows of ``X`` and ``Z`` are passed. The function is made on the first
        read of output ``k`` and kept (the next results of the model read it again)."""
        nt = len(T)
        got = self._column_plans.get(k)
        if got is None:
            got = self._column_plans[k] = self._column_plan(k)
        f, xi, zi, pi = got
        if type(f) is np.ndarray:  # (a constant)
            return np.tile(f, (nt, 1))
        if type(f) is float:  # (a state or an algebraic variable, or its negation)
            row = np.asarray(X if xi else Z).reshape(-1, nt)[(xi or zi)[0]]
            return (row if f > 0 else -row).reshape(nt, 1).copy()
        Tr = np.asarray(T, dtype=float).reshape(1, -1)
        if program_pays(int(f.n_instructions()), nt):
            program = self._column_program(k, got)
            if program is not None:
                return program.evaluate([np.asarray(X).reshape(-1, nt), np.asarray(Z).reshape(
                    -1, nt), np.asarray(p, dtype=float).ravel(), Tr], nt).T
        Xs = np.asarray(X).reshape(-1, nt)[xi] if xi else np.zeros((0, nt))
        Zs = np.asarray(Z).reshape(-1, nt)[zi] if zi else np.zeros((0, nt))
        Ps = np.asarray(p, dtype=float).ravel()[pi].reshape(-1, 1)
        return np.asarray(f(Xs, Zs, Ps, Tr)).T

    def _column_program(self, k: int, plan: tuple[Any, list[int], list[int], list[int]]
                        ) -> GridProgram | None:
        """Output ``k``'s function as numpy calls over the grid (None where it has an
        instruction numpy does not have), made on first use and kept."""
        programs = self._column_programs
        if k not in programs:
            f, xi, zi, pi = plan
            programs[k] = GridProgram.of(f, [xi, zi, pi, [0]])
        return programs[k]

    def output_column_has_program(self, k: int) -> bool:
        """Whether output ``k`` has been read as numpy calls over the grid
        (:mod:`acausal.grid_program`)."""
        return self._column_programs.get(k) is not None

    @cached_property
    def _column_programs(self) -> dict[int, GridProgram | None]:
        return {}

    def output_column_instructions(self, k: int) -> int:
        """The instructions of output ``k``'s own function (:meth:`output_column`; 0 for a
        constant, or before its first read)."""
        got = self._column_plans.get(k)
        f = got[0] if got is not None else None
        return int(f.n_instructions()) if isinstance(f, cs.Function) else 0

    def output_column_is_read_off(self, k: int) -> bool:
        """Whether output ``k`` is read off the integrated states and algebraic variables
        (one of them or its negation: no function evaluated; after its first read)."""
        got = self._column_plans.get(k)
        return got is not None and type(got[0]) is float

    @cached_property
    def _column_plans(self) -> dict[int, tuple[Any, list[int], list[int], list[int]]]:
        return {}

    def _column_plan(self, k: int) -> tuple[Any, list[int], list[int], list[int]]:
        """Output ``k``'s function of the inputs it depends on and their positions in
        ``x``, ``z`` and ``p`` (a constant: its value as a row, and no inputs; a scalar
        that is a state or an algebraic variable, or its negation: the sign, +-1.0, and
        its position, read off with no function: on 20 001 points 0.1 ms instead of 9)."""
        e = cs.vec(self.out_expr[k])
        if e.is_constant():  # (a structural zero, a constant)
            return np.asarray(cs.DM(e)).reshape(1, -1), [], [], []
        if e.numel() == 1:
            sign, s = (-1.0, e.dep(0)) if e.is_op(cs.OP_NEG) else (1.0, e)
            kind, j = self._input_of(s) if s.is_symbolic() else (3, 0)
            if kind < 2:
                return sign, [j] if kind == 0 else [], [j] if kind == 1 else [], []
        xi: list[int] = []
        zi: list[int] = []
        pi: list[int] = []
        for s in cs.symvar(e):
            kind, j = self._input_of(s)
            (xi, zi, pi, [])[kind].append(j)
        xs = [self.x[j] for j in xi]
        zs = [self.z[j] for j in zi]
        ps = [self.p[j] for j in pi]
        f = cs.Function("output", [cs.vertcat(*xs) if xs else cs.SX(0, 1),
                                   cs.vertcat(*zs) if zs else cs.SX(0, 1),
                                   cs.vertcat(*ps) if ps else cs.SX(0, 1), self.t], [e])
        return f, xi, zi, pi

    def _input_of(self, s: cs.SX) -> tuple[int, int]:
        """``(0 for x, 1 for z, 2 for p, 3 for none of them; position)`` of the symbol
        ``s``."""
        h = s.element_hash()
        code = self._input_names.get(s.name(), 3)
        kind, j = code & 3, code >> 2
        if kind < 3 and (self.x, self.z, self.p)[kind][j].element_hash() != h:
            kind, j = self._input_positions.get(h, (3, 0))  # (two symbols, one name)
        return kind, j

    @cached_property
    def _input_names(self) -> dict[str, int]:
        """``name -> 4 position + kind`` (kind 0 for x, 1 for z, 2 for p) of every input
        (an int, not a tuple: tens of thousands of new tuples set off full scans of the
        cyclic garbage collector over the model's heap, 0.5 s at 10 000 elements)."""
        out: dict[str, int] = {}
        for kind, names in ((2, self.p_names), (1, self.z_names), (0, self.x_names)):
            out.update(zip(names, range(kind, 4 * len(names) + kind, 4), strict=True))
        return out

    @cached_property
    def _input_positions(self) -> dict[int, tuple[int, int]]:
        """``element_hash -> (0 for x, 1 for z, 2 for p; position)`` of every input."""
        out: dict[int, tuple[int, int]] = {}
        for kind, v in ((0, self.x), (1, self.z), (2, self.p)):
            for j, s in enumerate(cs.vertsplit(v)) if v.numel() else ():
                out[s.element_hash()] = (kind, j)
        return out

    @cached_property
    def _output_function(self) -> cs.Function:
        # (a dense column: its buffer, acausal.grid_outputs, writes every output's row)
        return cs.Function("outputs", [self.x, self.z, self.p, self.t],
                           [cs.densify(self.stacked_outputs())])

    def stacked_outputs(self) -> cs.SX:
        """Every output's entries in one column (:attr:`out_stacked`, or made from
        :attr:`out_expr`)."""
        stacked = self.out_stacked
        if stacked is None:
            stacked = self.out_stacked = cs.vertcat(*[cs.vec(e) for e in self.out_expr])
        return stacked

    def variables_function(self) -> cs.Function:
        """``(x, z, p, t) -> values of the equation system's variables``."""
        return self._variables_function

    @cached_property
    def _variables_function(self) -> cs.Function:
        stacked = cs.vertcat(*self.out_expr[: self.n_sys])
        return cs.Function("variables", [self.x, self.z, self.p, self.t], [stacked])

    @cached_property
    def algebraic_solver(self) -> AlgebraicSystem:
        """Newton on ``alg(x, z, p, t) = 0`` for ``z`` (arguments ``[x; p; t]``)."""
        labels = self.alg_labels or [f"algebraic equation {k}" for k in range(len(self.z_names))]
        return AlgebraicSystem(self.alg, self.z, cs.vertcat(self.x, self.p, self.t), labels)


def _read_off(Y: cs.SX, W: cs.SX, other_inputs: cs.SX
              ) -> tuple[list[int], list[int], list[float], list[int], np.ndarray]:
    """Rows of ``Y`` that are an entry of ``W`` or its negative (``(row, column, sign)``
    triplets), the general rows and the number of entries of ``W`` each of these depends
    on; structurally zero rows count as read off (no entry).

    Vectorised: the rows depending on exactly one entry ``w_c`` are candidates; a candidate
    is ``w_c`` when ``y - w_c`` simplifies to the constant zero, ``-w_c`` when ``y + w_c``
    does (CasADi simplifies ``x - x`` and ``-x + x`` of one node to zero, and nothing else
    of a symbol)."""
    del other_inputs
    Yv = cs.vec(Y)
    n_out = int(Yv.numel())
    entries = np.asarray(Yv.sparsity().row(), dtype=np.int64)  # rows with an entry
    ptr, col = cs.jacobian_sparsity(Yv, W).get_crs()
    ptr_a = np.asarray(ptr, dtype=np.int64)
    col_a = np.asarray(col, dtype=np.int64)
    single = entries[(ptr_a[entries + 1] - ptr_a[entries]) == 1] if n_out else entries
    found_rows: list[np.ndarray] = []
    found_cols: list[np.ndarray] = []
    found_signs: list[np.ndarray] = []
    if len(single):
        cols = col_a[ptr_a[single]]
        Yc = Yv[single.tolist(), 0]
        Wc = W[cols.tolist(), 0]
        left = np.ones(len(single), dtype=bool)
        for sign, diff in ((1.0, Yc - Wc), (-1.0, Yc + Wc)):
            nonzero = np.zeros(len(single), dtype=bool)
            nonzero[np.asarray(cs.sparsify(diff).sparsity().row(), dtype=np.int64)] = True
            hit = left & ~nonzero
            found_rows.append(single[hit])
            found_cols.append(cols[hit])
            found_signs.append(np.full(int(hit.sum()), sign))
            left &= nonzero
    if found_rows:
        rows_f = np.concatenate(found_rows)
        order = np.argsort(rows_f, kind="stable")
        rows_f = rows_f[order]
        cols_f = np.concatenate(found_cols)[order]
        signs_f = np.concatenate(found_signs)[order]
    else:
        rows_f = cols_f = np.zeros(0, dtype=np.int64)
        signs_f = np.zeros(0)
    general = np.setdiff1d(entries, rows_f, assume_unique=True)
    return (rows_f.tolist(), cols_f.tolist(), signs_f.tolist(), general.tolist(),
            ptr_a[general + 1] - ptr_a[general])


class _BulkOutputs:
    """Every output over a grid as one sparse product, ``Y = M(p) w + b(p, t)``.

    Most outputs (variables, aliases, port quantities, edges) are an entry of the states
    and algebraic variables ``w = [x; z]`` or its negative (read off: a row of ``M`` with
    one entry, +1 or -1); most others are affine in ``w`` with coefficients of the
    parameters (rows of ``M(p)`` and offsets ``b(p)``, or ``b(p, t)`` where time enters);
    the rest are evaluated by CasADi as they are. ``M`` is stored once as compressed rows
    (a run fills its values from ``p``), so the table is one product: no gathers and
    scatters of the rows by kind, and a row with no entry (a structural zero) is 0.
    """

    def __init__(self, indptr: np.ndarray, indices: np.ndarray, order: np.ndarray,
                 read_signs: np.ndarray, A_nz: cs.Function, n_w: int,
                 const_rows: np.ndarray, const_at: np.ndarray, const: cs.Function,
                 timed_rows: np.ndarray, timed: cs.Function, other_rows: np.ndarray,
                 other: cs.Function, n_out: int) -> None:
        self.indptr, self.indices, self.order = indptr, indices, order
        self.read_signs, self.A_nz, self.n_w = read_signs, A_nz, n_w
        self.const_rows, self.const_at, self.const = const_rows, const_at, const
        self.timed_rows, self.timed = timed_rows, timed
        self.other_rows, self.other, self.n_out = other_rows, other, n_out
        self._M: tuple[bytes, Any] | None = None  # M(p) of the last p (see _matrix)

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_M": None, "_programs": {}}  # (made again when needed)

    def _program(self, which: str, part: tuple[int, int] | None = None
                 ) -> tuple[cs.Function, GridProgram | None]:
        """The function of the timed or the other rows, and its instructions as numpy calls
        over the grid (:mod:`acausal.grid_program`; None where one has no numpy
        equivalent): the nonlinear rows of 50 links on 20 001 points in 0.44 s instead of
        0.95 to 1.29 s by CasADi point after point, their program read in 0.03 s. With
        ``part``, ``(start, stop)``, the program of those of the rows alone."""
        f = self.timed if which == "timed" else self.other
        programs = self.__dict__.setdefault("_programs", {})  # (absent from saved plans)
        if which not in programs:
            programs[which] = GridProgram.of(f)
        whole = programs[which]
        if part is None or whole is None:
            return f, whole
        key = (which, *part)
        if key not in programs:
            if len(programs) >= MAX_PARTS:  # (the blocks of many grids: start again)
                programs.clear()
                programs[which] = whole
            programs[key] = whole.rows(*part)
        return f, programs[key]

    def _matrix(self, p: np.ndarray) -> Any:
        """``M(p)`` (kept for the last ``p``: the runs of a model mostly share their
        parameters, and forming it is a third of the product's cost)."""
        key = p.tobytes()
        got = getattr(self, "_M", None)  # (absent from plans saved before it)
        if got is not None and got[0] == key:
            return got[1]
        data = np.concatenate([self.read_signs, np.asarray(self.A_nz(p)).ravel()])
        M = CSR(self.indptr, self.indices, data[self.order], (self.n_out, self.n_w))
        if M.nnz >= SCIPY_PRODUCT_MIN:
            M = M.to_scipy()
        self._M = (key, M)
        return M

    @classmethod
    def of(cls, dae: SemiExplicitDAE) -> _BulkOutputs:
        Y = dae.stacked_outputs()
        W = cs.vertcat(dae.x, dae.z)
        n_out, n_w = int(Y.numel()), int(W.numel())
        args = [dae.x, dae.z, dae.p, dae.t]
        rows_a, cols_a, vals_a, every, degree = _read_off(Y, W, cs.vertcat(dae.p, dae.t))
        # the others: affine ones through their (sparse) Jacobian, the rest as they are
        # (rows that depend on many entries of w among the rest, without the Jacobian)
        every_a = np.asarray(every, dtype=np.int64)
        wide = every_a[degree > PLAN_MAX_DEGREE]
        general = every_a[degree <= PLAN_MAX_DEGREE].tolist() if len(wide) else every
        Yg = Y[general] if general else cs.SX(0, 1)
        J = cs.jacobian(Yg, W)
        r_idx, c_idx = (np.asarray(v, dtype=np.int64) for v in J.sparsity().get_triplet())
        Jnz = J.nz[:] if J.nnz() else cs.SX(0, 1)  # the nonzeros as one column (no list)
        nonlinear_g = np.zeros(len(general), dtype=bool)
        if J.nnz():  # rows whose coefficients depend on w or t
            dep = np.asarray(cs.jacobian_sparsity(Jnz, cs.vertcat(W, dae.t)).get_triplet()[0],
                             dtype=np.int64)
            nonlinear_g[r_idx[dep]] = True
        general_a = np.asarray(general, dtype=np.int64)
        affine_g = np.flatnonzero(~nonlinear_g)
        affine = general_a[affine_g]  # (sorted: general is)
        other = np.union1d(general_a[nonlinear_g], wide) if len(wide) else general_a[nonlinear_g]
        keep = np.flatnonzero(~nonlinear_g[r_idx]) if len(r_idx) else r_idx
        A_nz = cs.Function("A", [dae.p], [Jnz[keep.tolist()] if len(keep) else cs.SX(0, 1)])
        # M: the read-off entries, then the affine ones; ``order`` puts their values
        # (signs, then A_nz(p)) in compressed-row order (the rows are disjoint)
        rows_m = np.concatenate([np.asarray(rows_a, dtype=np.int64), general_a[r_idx[keep]]])
        cols_m = np.concatenate([np.asarray(cols_a, dtype=np.int64), c_idx[keep]])
        order = np.argsort(rows_m * max(n_w, 1) + cols_m, kind="stable")
        indptr = np.zeros(n_out + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows_m, minlength=n_out), out=indptr[1:])
        # offsets: constant in time (parameters) for most, evaluated once per run, over the
        # grid where time enters
        b = (cs.substitute(Yg[affine_g.tolist()], W, cs.SX.zeros(W.shape)) if len(affine_g)
             else cs.SX(0, 1))
        timed_at = np.array(sorted(set(cs.jacobian_sparsity(b, dae.t).get_triplet()[0])),
                            dtype=np.int64) if b.numel() else np.zeros(0, dtype=np.int64)
        untimed = np.ones(len(affine), dtype=bool)
        untimed[timed_at] = False
        const = cs.Function("b", [dae.p], [cs.substitute(b, dae.t, cs.SX(0))])
        # (dense, as by_points reads them: they are, these rows having entries)
        timed = cs.Function("bt", [dae.p, dae.t], [cs.densify(b[timed_at.tolist()])
                                                   if len(timed_at) else cs.SX(0, 1)])
        other_f = cs.Function("other", args, [cs.densify(Y[other.tolist()]) if len(other)
                                              else cs.SX(0, 1)])
        return cls(indptr, cols_m[order], order, np.asarray(vals_a, dtype=float), A_nz, n_w,
                   affine[untimed], np.flatnonzero(untimed), const, affine[timed_at],
                   timed, other, other_f, n_out)

    def evaluate(self, X: Any, Z: Any, p: np.ndarray, T: np.ndarray,
                 out: np.ndarray | None = None, rows: tuple[int, int] | None = None,
                 ready: dict[str, Any] | None = None) -> np.ndarray:
        """All outputs, ``(nt, n_out)``: the transpose of the ``(n_out, nt)`` table (into
        ``out``, if given, e.g. a slice of a larger one); or those of the rows
        ``start:stop`` (``rows``), ``(nt, stop - start)``, the same values bit for bit (the
        same sums of the same rows, the instructions those rows need). ``ready`` keeps the
        states and algebraic variables stacked, for the next rows."""
        nt = len(T)
        r0, r1 = rows if rows is not None else (0, self.n_out)
        W = ready.get("stacked") if ready is not None else None
        if W is None:
            Xn = X.full() if hasattr(X, "full") else np.asarray(X, dtype=float)
            Zn = Z.full() if hasattr(Z, "full") else np.asarray(Z, dtype=float)
            W = np.vstack([Xn.reshape(-1, nt), Zn.reshape(-1, nt)])
            if ready is not None:
                ready["stacked"] = W
        nx = int(np.prod(np.shape(X))) // nt if nt else 0
        Xw, Zw = W[:nx], W[nx:]
        M = self._matrix(p)
        if rows is not None:
            M = _row_range(M, r0, r1)
        if isinstance(M, CSR):
            Y = M.dot(W)
            Y += 0.0  # (-0.0 -> 0.0, as scipy's sums, which start at 0, give)
        else:
            Y = M @ W
        if len(self.const_rows):
            # (only the rows whose offset is not 0 at this p: a spring's preload, say, is
            # an offset of its force that is mostly 0; adding 0 would change no bit)
            i0, i1 = np.searchsorted(self.const_rows, (r0, r1)).tolist()
            b = np.asarray(self.const(p)).ravel()[self.const_at[i0:i1]]
            hit = np.flatnonzero(b)
            if len(hit):
                Y[self.const_rows[i0:i1][hit] - r0] += b[hit].reshape(-1, 1)
        args: list[np.ndarray] | None = None  # (x, z, p, t) point by point
        grid = [Xw, Zw, np.asarray(p, dtype=float).ravel(),
                np.asarray(T, dtype=float).reshape(1, -1)]
        for which in ("timed", "other"):
            all_rows = self.timed_rows if which == "timed" else self.other_rows
            i0, i1 = np.searchsorted(all_rows, (r0, r1)).tolist() if len(all_rows) else (0, 0)
            if i1 == i0:
                continue
            f, program = self._program(which, (i0, i1) if i1 - i0 < len(all_rows) else None)
            first = 2 if which == "timed" else 0  # (the timed rows: of p and t)
            if program is not None:
                values = program.evaluate(grid[first:], nt)
            else:
                args = args or point_args(Xw, Zw, p, T, len(Xw), len(Zw))
                values = by_points(f, args[first:])[i0:i1]
            if which == "timed":
                Y[all_rows[i0:i1] - r0] += values
            else:
                Y[all_rows[i0:i1] - r0] = values
        if out is not None:
            out[...] = Y
            return out.T
        return Y.T


def _row_range(M: Any, start: int, stop: int) -> Any:
    """Rows ``start:stop`` of a compressed-row matrix (ours or scipy's)."""
    if not isinstance(M, CSR):
        return M[start:stop]
    a, b = int(M.indptr[start]), int(M.indptr[stop])
    return CSR(M.indptr[start:stop + 1] - a, M.indices[a:b], M.data[a:b],
               (stop - start, M.shape[1]))


def _rows(col: cs.SX, rows: np.ndarray) -> cs.SX:
    """Rows of a column (a column of none when there are none: ``col[[]]`` is 1 x 0), a
    slice where they step evenly (:func:`~acausal.fastsx.take`: the eliminated unknowns
    are mostly one run of the flat variables, 300 000 at 10^5 masses, 20 ms less than
    a list; rows in a few runs, the same by assignment of slices, cost more than a list)."""
    return take(col, rows)


def signed_rows(col: cs.SX, rep: np.ndarray, neg: np.ndarray, values: cs.SX,
                solved: np.ndarray) -> cs.SX:
    """``cs.substitute(col, syms, values)`` for a dense column whose row ``k`` is the
    symbol ``syms[rep[k]]``, its negation (``neg[k]``) or, where ``rep[k]`` is -1, an
    expression free of the symbols; ``values`` is ``syms`` with the rows ``solved`` (a
    mask) replaced. The same expressions, by indexing: a row whose symbol is not solved
    stays the node it is (CasADi's substitution keeps a node whose operands it keeps),
    a solved one becomes the solution or its negation, each negation made once per
    symbol as the substitution makes it once per node (the negations of the alias pass
    are one node per symbol)."""
    out = cs.SX(col)
    hit = rep >= 0
    hit[hit] = solved[rep[hit]]
    plus = np.flatnonzero(hit & ~neg)
    one = out.size1() == 1  # (a 1 x 1 column is set by (rows, 0): see rows_of)
    if plus.size:
        got = rows_of(values, rep[plus].tolist())
        if one:
            out[0, 0] = got
        else:
            out[plus.tolist()] = got
    minus = np.flatnonzero(hit & neg)
    if minus.size:
        syms = unique(rep[minus])
        got = rows_of(-rows_of(values, syms.tolist()), np.searchsorted(syms, rep[minus]).tolist())
        if one:
            out[0, 0] = got
        else:
            out[minus.tolist()] = got
    return out


class OutNames(LazyNames):
    """The outputs' names: the equation system's variables' (read from them), then the
    other parts' (the graph's port and edge quantities made when first read,
    :class:`~acausal.graph_columns.BlockNames`), one after the other. A build keeps no
    list of them: 2.3 million names at 100 000 masses, an 18 MB list of pointers and
    1.1 million strings no other table holds. Reads like a list (made once, then kept)."""

    def __init__(self, parts: list[Sequence[str]]) -> None:
        flat: list[Sequence[str]] = []
        for p in parts:
            flat += p.parts if isinstance(p, OutNames) else [p]
        self.parts: list[Sequence[str]] = [p for p in flat if len(p)]
        self._ends = np.cumsum([len(p) for p in self.parts], dtype=np.int64).tolist()

    def _make(self) -> list[str]:
        out: list[str] = []
        for p in self.parts:
            out += p.names() if isinstance(p, LazyNames) else p
        return out

    def _one(self, k: int) -> str:
        i = bisect_right(self._ends, k)
        return self.parts[i][k - (self._ends[i - 1] if i else 0)]

    def __len__(self) -> int:
        return self._ends[-1] if self._ends else 0


class _VarNames(Sequence[str]):
    """The names of ``variables``, read from them."""

    def __init__(self, variables: list[Any]) -> None:
        self.variables = variables

    def __len__(self) -> int:
        return len(self.variables)

    @overload
    def __getitem__(self, k: int) -> str: ...

    @overload
    def __getitem__(self, k: slice) -> list[str]: ...

    def __getitem__(self, k: int | slice) -> str | list[str]:
        if type(k) is int:
            return self.variables[k].name  # type: ignore[no-any-return]
        return list(map(_NAME, self.variables[k]))

    def __iter__(self) -> Iterator[str]:
        return map(_NAME, self.variables)


_NAME = attrgetter("name")


class _Split(Sequence[cs.SX]):
    """The outputs' expressions, one per output, split from their stacked column on first
    use (a build keeps one column, not a Python object per output)."""

    #: single reads taken from the column alone before all are split at once
    ALONE = 256

    def __init__(self, col: cs.SX, sizes: Sequence[int],
                 shapes: dict[int, tuple[int, int]]):
        self._col, self._sizes, self._shapes = col, sizes, shapes
        self._parts: list[cs.SX] | None = None
        self._offsets: list[int] | None = None
        self._reads = 0

    def _split(self) -> list[cs.SX]:
        if self._parts is None:
            offsets = np.concatenate([[0], np.cumsum(self._sizes, dtype=np.int64)])
            parts = cs.vertsplit(self._col, offsets.tolist()) if len(self._sizes) else []
            for k, shp in self._shapes.items():
                parts[k] = cs.reshape(parts[k], shp)
            self._parts = parts
        return self._parts

    def _alone(self, k: int) -> cs.SX:
        """Output ``k`` as rows of the column (splitting all costs a call per output:
        a result whose first reads are a few names needs only those)."""
        if self._offsets is None:
            self._offsets = np.concatenate(
                [[0], np.cumsum(self._sizes, dtype=np.int64)]).tolist()
        k = range(len(self._sizes))[k]  # (a negative index, or IndexError)
        e = self._col[self._offsets[k]:self._offsets[k + 1]]
        shp = self._shapes.get(k)
        return cs.reshape(e, shp) if shp is not None else e

    def __len__(self) -> int:
        return len(self._sizes)

    @overload
    def __getitem__(self, k: int) -> cs.SX: ...

    @overload
    def __getitem__(self, k: slice) -> list[cs.SX]: ...

    def __getitem__(self, k: int | slice) -> cs.SX | list[cs.SX]:
        if self._parts is None and type(k) is int and self._reads < self.ALONE:
            self._reads += 1
            return self._alone(k)
        return self._split()[k]


def _leading(names: Iterable[str], index: dict[str, int]) -> bool:
    """Whether ``names`` are the first keys of ``index``, in order (a build's named
    outputs are the system's variables, in the system's order: told by one comparison of
    two lists, where a lookup per name in the index, a table of a million names at 10^5
    masses, costs 0.14 s)."""
    n = len(names) if isinstance(names, Sized) else -1
    return 0 <= n <= len(index) and list(names) == list(islice(index, n))


def assemble_dae(sys: EquationSystem, states: list[int], solved: SolvedBlocks,
                 blocks: Blocks, alias: tuple[list[str], cs.SX, cs.SX],
                 extra_outputs: Mapping[str, Any],
                 relations: list[Any] | None = None,
                 alias_rows: tuple[np.ndarray, np.ndarray] | None = None) -> SemiExplicitDAE:
    """The DAE and the output expressions of every variable, alias and port quantity.

    ``alias`` = (names of the eliminated unknowns, their symbols, their expressions in the
    kept unknowns; the two as columns); ``extra_outputs`` = named expressions (port
    quantities, edges, variables) to evaluate in results. ``alias_rows``, if given, tells
    per row of the alias expressions the unknown of ``sys`` it is up to sign (-1: an
    expression in parameters) and whether negated: the solutions are then put into
    these rows by indexing (:func:`signed_rows`) rather than by substitution.
    """
    syms = sys.symbols() if sys.variables else cs.SX(0, 1)
    n_sys = len(sys.variables)
    # every variable's expression: its explicit solution, else its own symbol (the
    # solutions assigned into a copy of the symbols' column in one call: a stacking and
    # indexing of both would copy every row twice)
    sys_stacked = syms
    if len(solved.idx):
        sys_stacked = cs.SX(syms)
        sys_stacked[list(map(int, solved.idx))] = solved.expr
    x = syms[list(states)] if states else cs.SX(0, 1)
    ode = (sys_stacked[list(map(sys.var_der.__getitem__, states))] if states
           else cs.SX(0, 1))
    z = cs.vertcat(*solved.z) if solved.z else cs.SX(0, 1)
    pv = sys.parameter_symbols()

    # outputs: every variable, every alias, every port quantity
    sys_names = _VarNames(sys.variables)
    sizes = Sizes(n_sys)  # equation-system variables are scalars
    shapes: dict[int, tuple[int, int]] = {}  # outputs that are matrices, by position
    # the names known so far, tested apart (no set of every name: a million names at
    # 10^5 masses, a table of 64 MB alive through the substitution below): the system's
    # variables (its name index, which holds them), the graph's unknowns, the eliminated
    # unknowns
    names_ix = sys.name_index
    in_sys: Callable[[str], bool] = (names_ix.__contains__ if len(names_ix) == n_sys
                                     else set(sys_names).__contains__)
    shared_set: set[str] = set()
    # the graph's port and edge quantities come as one column (graph_columns.OutputTable;
    # an edge's primary unknown is a variable of that name), the other outputs one by one
    block = getattr(extra_outputs, "block", None)
    named = extra_outputs.named if hasattr(extra_outputs, "named") else extra_outputs
    if block is not None:
        b_names, b_sizes, b_col = block
        at = getattr(extra_outputs, "unknowns", None)
        at = np.arange(len(b_names)) if at is None else at
        shared = (b_names.take(at) if isinstance(b_names, BlockNames)
                  else list(map(b_names.__getitem__, at.tolist())))
        b_drop = np.zeros(len(b_names), dtype=bool)
        b_drop[at] = np.fromiter(map(in_sys, shared), dtype=bool, count=len(shared))
        if b_drop.any():
            b_keep = np.flatnonzero(~b_drop).tolist()
            b_names = list(map(list(b_names).__getitem__, b_keep))
            b_sizes = Sizes.of(np.asarray(b_sizes)[b_keep])
            b_col = _rows(b_col, np.flatnonzero(~np.repeat(b_drop, block[1])))
        shared_set = set(shared)
        block = (b_names, b_sizes, b_col)
    # an eliminated unknown's output is its expression (the alias column, not a symbol
    # per output substituted)
    a_names, a_syms, a_exprs = alias
    # (the graph's unknowns first: nearly every eliminated unknown is one, and the
    # system's name index, a table of every variable, is asked only of the others)
    a_new = ~np.fromiter(map(shared_set.__contains__, a_names), dtype=bool,
                         count=len(a_names))
    if a_new.any():
        at_new = np.flatnonzero(a_new)
        a_new[at_new] = ~np.fromiter(map(in_sys, map(a_names.__getitem__, at_new.tolist())),
                                     dtype=bool, count=len(at_new))
    rest = (set() if len(names_ix) == n_sys and _leading(named, names_ix) else
            set(filterfalse(shared_set.__contains__, filterfalse(in_sys, named))))
    if rest:
        rest.difference_update(a_names)
    pending = ({n: e.sym if type(e) is FlatVariable else e for n, e in named.items()
                if n in rest} if rest else {})
    del shared_set, rest
    relations = relations or []
    for r in relations:  # indicators go through the same substitution as the outputs
        pending[f"__indicator__{r.name}"] = r.indicator
    # (the alias expressions with the solutions put in, by indexing: see signed_rows)
    signed = None
    if alias_rows is not None and a_names and sys_stacked.is_dense() and a_exprs.is_dense():
        solved_mask = np.zeros(n_sys, dtype=bool)
        solved_mask[np.asarray(solved.idx, dtype=np.int64)] = True
        signed = (alias_rows[0], alias_rows[1], solved_mask)
    done_at = -1  # the position among the outputs of the alias rows made so (if any)
    if a_new.any():
        a_keep = np.flatnonzero(a_new)
        a_out = [a_names[k] for k in a_keep.tolist()]
        a_col = _rows(a_exprs, a_keep)
        if signed is not None:
            a_col = signed_rows(a_col, signed[0][a_keep], signed[1][a_keep], sys_stacked,
                                signed[2])
            done_at = 0 if block is None else 1
        block = ((a_out, Sizes(len(a_out)), [a_col]) if block is None else
                 (OutNames([block[0], a_out]), Sizes.join([block[1], Sizes(len(a_out))]),
                  [block[2], a_col]))
    elif block is not None:
        block = (block[0], block[1], [block[2]])
    indicators = None
    out_names: Sequence[str] = sys_names
    if pending or block is not None:
        names: Sequence[str] = list(pending)
        exprs = [e if type(e) is cs.SX else cs.SX(e) for e in pending.values()]
        # (the C function behind SX.numel: one call per output of the model, the shape
        # asked only of the outputs that are not scalars)
        own_sizes = [_NUMEL(e) for e in exprs]
        n_block = len(block[0]) if block is not None else 0
        mats = {n_block + k: rc for k, n in enumerate(own_sizes) if n != 1
                for rc in [(_SIZE1(exprs[k]), _SIZE2(exprs[k]))] if rc[1] != 1}
        if mats:
            exprs = [cs.vec(e) if n_block + k in mats else e for k, e in enumerate(exprs)]
        part_sizes = Sizes.of(own_sizes)
        if block is not None:  # (column vectors at most: no shapes to keep)
            names = OutNames([block[0], names])
            part_sizes = Sizes.join([block[1], part_sizes])
            exprs = [*block[2], *exprs]
        # (one stacking, the system's variables first: each stacking copies every row,
        # costly at 10^5 rows and more; their symbols become their solutions below)
        # (the system's variables are their solutions, sys_stacked as it is, when it is
        # dense: only the other outputs go through the substitution)
        if signed is not None:
            # the other outputs through one substitution (one pass over them) of the
            # eliminated unknowns by their expressions and of the system's by their
            # solutions, the alias rows made already; the alias expressions themselves (an
            # alias refers to a representative, which may be solved) by indexing too
            # (0.04 s of substitutions less at 10 000 masses)
            done = exprs[done_at] if done_at >= 0 else cs.SX(0, 1)
            pieces = [exprs[:done_at], exprs[done_at + 1:]] if done_at >= 0 else [[], exprs]
            a_sub = signed_rows(a_exprs, signed[0], signed[1], sys_stacked, signed[2])
            subs = cs.substitute([stack(*p) if p else cs.SX(0, 1) for p in pieces],
                                 [a_syms, syms], [a_sub, sys_stacked])
            stacked = stack(sys_stacked, subs[0], done, subs[1])
        else:
            dense = sys_stacked.is_dense()
            stacked = stack(*exprs) if dense else stack(syms, *exprs)
            # one substitution (one pass over the outputs) of the eliminated unknowns by
            # their expressions and of the system's by their solutions; an alias
            # expression refers to representatives, which may themselves be solved
            if a_names:
                stacked = cs.substitute([stacked], [a_syms, syms],
                                        [cs.substitute(a_exprs, syms, sys_stacked),
                                         sys_stacked])[0]
            else:
                stacked = cs.substitute(stacked, syms, sys_stacked)
            if dense:
                stacked = stack(sys_stacked, stacked)
        if relations:  # the indicators leave the outputs
            keys = {f"__indicator__{r.name}" for r in relations}
            drop = np.array([n in keys for n in names], dtype=bool)
            row_drop = np.concatenate([np.zeros(n_sys, dtype=bool),
                                       np.repeat(drop, part_sizes)])
            indicators, stacked = (_rows(stacked, np.flatnonzero(sel))
                                   for sel in (row_drop, ~row_drop))
            keep = np.flatnonzero(~drop).tolist()
            names = list(map(list(names).__getitem__, keep))
            part_sizes = Sizes.of(np.asarray(part_sizes)[keep])
            mats = {q: mats[k] for q, k in enumerate(keep) if k in mats}
        shapes = {n_sys + k: rc for k, rc in mats.items()}
        out_names = OutNames([sys_names, names])
        sizes = Sizes.join([sizes, part_sizes])
        out_stacked = stacked
    else:
        out_stacked = sys_stacked
    return SemiExplicitDAE(
        t=sys.t,
        x=x,
        z=z,
        p=pv,
        ode=ode,
        alg=cs.vertcat(*solved.alg) if solved.alg else cs.SX(0, 1),
        x_names=[sys.variables[k].name for k in states],
        z_names=list(solved.z_names),
        p_names=list(map(attrgetter("name"), sys.parameters)),
        p_values=np.array(list(map(attrgetter("value"), sys.parameters)), dtype=float),
        out_names=out_names if isinstance(out_names, OutNames) else OutNames([out_names]),
        out_expr=_Split(out_stacked, sizes, shapes),
        out_sizes=sizes,
        blocks=blocks,
        explicit=solved.n_explicit,
        n_sys=n_sys,
        out_stacked=out_stacked,
        alg_labels=[sys.equations[i].describe(100) for i in solved.alg_equations],
        indicators=indicators,
        relations=list(relations),
    )


def _system_indices(sys: EquationSystem, flat: Any, gone: list[int], of: np.ndarray,
                    col: cs.SX | None) -> np.ndarray:
    """The equation system's indices of the flat variables ``of`` (-2 for one it does
    not have), ``gone`` the flat variables the alias pass eliminated.

    The alias pass keeps the others in flat order as the system's first variables
    (:func:`~acausal.structure.alias.equation_system`): the index is a flat index's rank
    among the kept ones, taken so where the system's symbols there are the flat
    variables' own (one test of the column; a name looked up per variable costs 45 ms
    at 10 000 masses), else by name."""
    n = len(flat.variables)
    if col is not None and col.numel() == n and len(of):
        kept = np.ones(n, dtype=bool)
        kept[np.asarray(gone, dtype=np.int64)] = False
        guess = (np.cumsum(kept) - 1)[of]
        if (kept[of].all() and int(guess.max()) < sys.n_vars
                and same_nodes(rows_of(sys.symbols(), guess.tolist()),
                               rows_of(col, of.tolist())).all()):
            return guess
    index = sys.name_index
    return np.fromiter((index.get(flat.variables[r].name, -2) for r in of.tolist()),
                       dtype=np.int64, count=len(of))


def dae_pass(state: CompileState) -> CompileState:
    """Pass: assemble the semi-explicit DAE and the outputs of every named quantity."""
    sys = need(state.system, "the index-reduced system (index reduction pass)")
    causal = need(state.causal, "the BLT blocks (causalisation pass)")
    solved = need(state.solved, "the solved blocks (block solution pass)")
    flat = need(state.flat, "the flat system (flatten pass)")
    aliases = need(state.aliases, "the alias elimination (alias pass)")
    keys = list(aliases.substitution)
    names = list(map(attrgetter("name"), map(flat.variables.__getitem__, keys)))
    col = flat.var_column
    syms = (_rows(col, np.asarray(keys, dtype=np.int64))
            if col is not None and col.numel() == len(flat.variables)
            else cs.vertcat(cs.SX(0, 1), *[flat.variables[k].sym for k in keys]))
    subst = aliases.substitution
    exprs = getattr(subst, "column", None)
    signed = getattr(subst, "signed", None)
    if exprs is None or exprs.numel() != len(subst):
        exprs = cs.vertcat(cs.SX(0, 1), *subst.values())
        signed = None
    rows = None
    if signed is not None:  # (the alias pass's flat indices as the system's)
        rep, neg = signed
        at = np.flatnonzero(rep >= 0)
        sys_rep = np.full(len(rep), -1, dtype=np.int64)
        sys_rep[at] = _system_indices(sys, flat, keys, rep[at], col)
        if not (sys_rep[at] < 0).any():
            rows = (sys_rep, neg)
    return state.update(dae=assemble_dae(sys, causal.states, solved, causal.blocks,
                                         (names, syms, exprs), flat.outputs, flat.relations,
                                         alias_rows=rows))
