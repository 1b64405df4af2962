"""Is the model regular for the parameter values of this run?

The block-solution pass solves a block explicitly when its equations are linear in its
unknowns with coefficients free of unknowns and time: ``alpha R_ref T = ...`` becomes
``T = .../(alpha R_ref)``. Such a solution is right for every parameter value that keeps
the coefficient away from zero, and a division by zero for the others: a heating resistor
whose port is left open has ``T = T_ref - 1/alpha``, minus infinity when ``alpha = 0``,
because no equation then determines its temperature. The pass records these coefficients
(:attr:`~acausal.structure.solve.SolvedBlocks.pivots`); before a run they are evaluated
with the run's parameter values, and a zero (or a singular matrix of a small linear
block) is an error that names the equation, the unknown and the parameters concerned,
instead of a result full of infinities.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import casadi as cs
import numpy as np

from .errors import SingularityError

if TYPE_CHECKING:
    from .compiler import CompiledModel
    from .dae import SemiExplicitDAE

__all__ = ["check_regularity", "singular_for_values"]

#: a small block's matrix with a reciprocal condition number below this is singular for
#: the run (double precision leaves no correct digit in its solution)
RCOND = 1e-14


class _Pivots:
    """The recorded coefficients as one CasADi function of the parameters."""

    def __init__(self, cm: CompiledModel) -> None:
        pivots = cm.state.solved.pivots if cm.state.solved is not None else []
        self.items = pivots
        p = cm.dae.p
        # (one veccat, sizes from the unknowns: a CasADi call per pivot costs 1-14 us,
        # and a chain of 10 000 masses has 10 000 pivots)
        self.sizes = np.array([len(u) for _, _, u in pivots], dtype=np.int64)
        self.offsets = np.concatenate([[0], np.cumsum(self.sizes**2)])
        self.f = cs.Function("pivots", [p], [cs.veccat(*[a for a, _, _ in pivots])
                                             if pivots else cs.SX(0, 1)])

    def singular(self, p: np.ndarray) -> list[int]:
        """Indices of the pivots that vanish (or whose matrix is singular) at ``p``."""
        v = np.asarray(self.f(p)).ravel()
        scalar = self.sizes == 1
        first = v[self.offsets[:-1]]
        bad = np.flatnonzero(scalar & ~(np.isfinite(first) & (first != 0.0))).tolist()
        for k in np.flatnonzero(~scalar).tolist():
            n = int(self.sizes[k])
            A = v[self.offsets[k]:self.offsets[k + 1]].reshape(n, n, order="F")
            if not np.all(np.isfinite(A)) or 1.0 / np.linalg.cond(A) < RCOND:
                bad.append(k)
        return sorted(bad)


def _pivots(cm: CompiledModel) -> _Pivots:
    cache = cm.run_cache
    piv = getattr(cache, "pivots", None)
    if piv is None:
        piv = cache.pivots = _Pivots(cm)
    return piv


def check_regularity(cm: CompiledModel, p: np.ndarray) -> None:
    """Raise :class:`SingularityError` when a block solved by division is singular with
    the parameter values ``p``, naming the equation, the unknown and the parameters."""
    piv = _pivots(cm)
    if not piv.items:
        return
    bad = piv.singular(p)
    if not bad:
        return
    sys = cm.system
    values = dict(zip(cm.dae.p_names, p, strict=True))
    lines = []
    for k in bad[:5]:
        a, eqs, unknowns = piv.items[k]
        names = [sys.variables[j].name for j in unknowns]
        used = sorted({s.name() for s in cs.symvar(a)}, key=lambda n: values.get(n) != 0.0)
        shown = ", ".join(f"{n} = {values[n]:g}" for n in used if n in values)
        what = ("its coefficient " + str(a) + " is zero" if len(unknowns) == 1
                else "the matrix of its equations is singular")
        lines.append(f"  {', '.join(names)}: {what}" + (f" with {shown}" if shown else "")
                     + f", in {'; '.join(sys.equations[i].describe() for i in eqs)}")
    more = f"\n  ... and {len(bad) - 5} more" if len(bad) > 5 else ""
    raise SingularityError(
        "with the parameter values of this run, some equations no longer determine their "
        "unknowns (their solution would divide by zero):\n" + "\n".join(lines) + more
        + "\nA value that removes a coupling (a coefficient of zero) can leave a variable "
        "with no equation: change the value, or connect the port whose quantity is then "
        "undetermined (an open heat port, an unconnected flange).")


def singular_for_values(dae: SemiExplicitDAE, p: np.ndarray) -> SingularityError:
    """The error for a DAE whose algebraic equations, with the parameter values ``p``
    substituted, no longer determine every algebraic variable (a term multiplied by a
    parameter equal to zero was the only place a variable appeared): names the variables,
    their equations and the parameters whose values removed them."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import maximum_bipartite_matching

    alg = cs.substitute(dae.alg, dae.p, cs.DM(p)) if dae.p.numel() else dae.alg
    rows, cols = cs.jacobian_sparsity(alg, dae.z).get_triplet()
    nz = int(dae.z.numel())
    S = csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(nz, nz))
    match = maximum_bipartite_matching(S, perm_type="column")  # row -> column or -1
    matched_cols = set(int(c) for c in match if c >= 0)
    lost = [j for j in range(nz) if j not in matched_cols]
    # the rows that mention a lost variable before the values are substituted
    full_rows, full_cols = cs.jacobian_sparsity(dae.alg, dae.z).get_triplet()
    values = dict(zip(dae.p_names, p, strict=True))
    lines = []
    for j in lost[:5]:
        eqs = sorted({int(r) for r, c in zip(full_rows, full_cols, strict=True) if c == j})
        zero = sorted({s.name() for r in eqs for s in cs.symvar(dae.alg[r])
                       if s.name() in values and values[s.name()] == 0.0})
        labels = [dae.alg_labels[r] if r < len(dae.alg_labels) else f"algebraic row {r}"
                  for r in eqs]
        lines.append(f"  {dae.z_names[j]}: appears only in {'; '.join(labels)}"
                     + (f", multiplied away by {', '.join(f'{n} = 0' for n in zero)}"
                        if zero else ""))
    return SingularityError(
        "with the parameter values of this run, the algebraic equations no longer "
        "determine " + ", ".join(dae.z_names[j] for j in lost[:5])
        + (" and others" if len(lost) > 5 else "") + ":\n" + "\n".join(lines)
        + "\nA value that removes a coupling (a coefficient of zero) can leave a variable "
        "with no equation: change the value, or connect the port whose quantity is then "
        "undetermined (an open heat port, an unconnected flange).")
