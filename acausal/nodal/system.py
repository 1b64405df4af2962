"""The numeric nodal system: CasADi functions built once per model, the constraint matrix,
its rank and null space, and the independent-mode count.

Terms (Xiang, Wu & Zhou 2015, section 3):

* ``A = dPhi/dx`` is the ``s x n`` constraint matrix (eq. 36): for a bar the row
  ``[-lambda^T, lambda^T]`` (eq. 3); for a rigid body rows whose null space is that of the
  paper's ``I - H H+`` (eq. 15); gears, supports and prescribed cable lengths add a row
  each.
* The second-order term ``c = (dA/dt) x' + 2 Phi_xt x' + Phi_tt`` makes the acceleration
  constraint ``A x'' + c = 0`` (eq. 37; for a bar ``|v_j - v_i|^2 / l``, eq. 5; for a body the
  centripetal term of eq. 21). It comes from two forward-mode derivatives of ``Phi``.
* The rank of ``A`` and an orthonormal basis ``U`` of its null space, the **independent
  displacement modes** (eq. 40), come from a rank-revealing factorisation with a stated
  tolerance (:data:`RANK_RTOL`). ``p = n - rank A`` modes; the rows beyond the rank are the
  **redundant constraints**, the count ADAMS adds back in its degree-of-freedom table.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import casadi as cs
import numpy as np
from scipy.linalg.lapack import dgeqp3, dorgqr

from .assemble import NodalAssembly

__all__ = ["RANK_RTOL", "NodalSystem", "ModeCount", "mode_count", "null_space"]

#: A singular value (or pivot of the rank-revealing QR) below ``RANK_RTOL`` times the
#: largest counts as zero. The rows of ``A`` are scaled to O(1) (unit vectors for bars and
#: supports, angles per unit length for gears), so roundoff leaves ~1e-15; a genuine row
#: that is independent by less than 1e-8 means a configuration within ~1e-8 m of a
#: singular one, where the mode count is ambiguous anyway (it is then reported as it is).
RANK_RTOL = 1e-8


@dataclass
class ModeCount:
    """Independent displacement modes and redundant constraints at one configuration (the
    paper's degree-of-freedom table)."""

    n_coordinates: int
    n_constraints: int
    rank: int
    n_redundant: int
    n_modes: int
    singular_values: np.ndarray = field(repr=False)
    redundant: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        sv = self.singular_values
        kept = sv[: self.rank]
        lines = [
            "Independent displacement modes",
            f"  nodal coordinates n:     {self.n_coordinates}",
            f"  constraint equations s:  {self.n_constraints}",
            f"  rank of A:               {self.rank}"
            + (f"  (smallest kept singular value {kept.min() / kept.max():.2e} of the largest)"
               if kept.size else ""),
            f"  redundant constraints:   {self.n_redundant}",
            f"  independent modes p:     {self.n_modes}  (= n - rank A)",
        ]
        for r in self.redundant[:12]:
            lines.append(f"    redundant: {r}")
        if len(self.redundant) > 12:
            lines.append(f"    ... and {len(self.redundant) - 12} more")
        return "\n".join(lines)


def null_space(A: np.ndarray, rtol: float = RANK_RTOL, with_r: bool = False) -> Any:
    """Orthonormal bases of the row space ``N`` (n x r) and null space ``U`` (n x p) of
    ``A`` by a column-pivoted QR of ``A^T`` (rank-revealing), the rank ``r`` and the
    pivot order of the rows (the first ``r`` are independent); with ``with_r`` also the
    triangle ``R`` (r x r) with ``A[piv[:r]] N = R^T``.

    ``|R_ii| <= rtol |R_00|`` counts as zero.
    """
    m, n = A.shape
    if m == 0:
        out = (np.zeros((n, 0)), np.eye(n), 0, np.zeros(0, dtype=int))
        return (*out, np.zeros((0, 0))) if with_r else out
    # LAPACK directly (dgeqp3 + dorgqr): the scipy wrapper costs as much as the
    # factorisation for the small matrices of a time step
    qr, jpvt, tau, _, info = dgeqp3(np.asfortranarray(A.T, dtype=float))
    if info != 0:  # pragma: no cover - invalid arguments
        raise ValueError(f"dgeqp3 failed (info = {info})")
    piv = jpvt - 1
    k = min(m, n)
    d = np.abs(np.diag(qr[:k, :k]))
    r = int(np.sum(d > rtol * d[0])) if d.size and d[0] > 0 else 0
    full = np.zeros((n, n), order="F")
    full[:, :k] = qr[:, :k]
    Q = dorgqr(full, tau[:k])[0]
    out = (Q[:, :r], Q[:, r:], r, piv)
    return (*out, np.asfortranarray(np.triu(qr[:r, :r]))) if with_r else out


def mode_count(A: np.ndarray, labels: list[str], rtol: float = RANK_RTOL) -> ModeCount:
    """The independent-mode count of ``A`` by SVD (singular values reported), and the rows
    found redundant by a pivoted QR (the last ones in pivot order)."""
    m, n = A.shape
    sv = np.linalg.svd(A, compute_uv=False) if m and n else np.zeros(0)
    rank = int(np.sum(sv > rtol * sv[0])) if sv.size and sv[0] > 0 else 0
    _, _, _, piv = null_space(A, rtol)
    redundant = [labels[int(i)] for i in piv[rank:]] if m else []
    return ModeCount(n, m, rank, m - rank, n - rank, sv, redundant)


class _Fast:
    """A CasADi function called through its buffer interface: inputs copied into and
    outputs read from preallocated numpy arrays (dense outputs; ~20x less overhead than
    a regular call for the small, frequent evaluations of a time step)."""

    def __init__(self, f: cs.Function) -> None:
        self.f = f
        self._buf, self._eval = f.buffer()
        self.args = [np.zeros(f.size_in(i)[0] * f.size_in(i)[1]) for i in range(f.n_in())]
        self.res = []
        for i in range(f.n_out()):
            shape = f.size_out(i)
            arr = np.zeros(shape, order="F") if shape[1] > 1 else np.zeros(shape[0])
            self.res.append(arr)
            # (CasADi's stubs want a size too; its wrapper takes it from the buffer)
            self._buf.set_res(i, memoryview(arr.reshape(-1, order="F")))  # type: ignore
        for i, a in enumerate(self.args):
            self._buf.set_arg(i, memoryview(a))  # type: ignore

    def __call__(self, *args: Any) -> list[np.ndarray]:
        for buf, a in zip(self.args, args, strict=True):
            buf[:] = np.ravel(a, order="F")  # column-major, as CasADi stores matrices
        self._eval()
        return [r.copy() for r in self.res]


class NodalSystem:
    """Numeric functions of a :class:`~acausal.nodal.assemble.NodalAssembly` with given
    parameter values (substituted once: the functions see constants).

    Methods take and return numpy arrays: :meth:`phi`, :meth:`kinematics` (``Phi``, ``A``,
    ``Phi_t``), :meth:`inertia_forces` (``c``, ``M``, ``F``).
    """

    def __init__(self, asm: NodalAssembly, p: cs.SX | None = None,
                 p_values: np.ndarray | None = None) -> None:
        self.asm = asm
        x, v, t = asm.x, asm.v, asm.t
        Phi = cs.vertcat(*asm.phi) if asm.phi else cs.SX(0, 1)
        M, F = asm.M, asm.F
        if p is not None and p.numel():
            pv = cs.DM(np.asarray(p_values, dtype=float))
            Phi, M, F = (cs.substitute(e, p, pv) for e in (Phi, M, F))
        A = cs.jacobian(Phi, x)
        Phi_t = cs.jacobian(Phi, t)
        Phid = cs.mtimes(A, v) + Phi_t
        c = cs.jtimes(Phid, x, v) + cs.jacobian(Phid, t)
        self.n = int(x.numel())
        self.m = int(Phi.numel())
        self.labels = list(asm.labels)
        self.rheonomic = bool(cs.depends_on(Phi, t)) if self.m else False
        dense = [cs.densify(e) for e in (Phi, A, Phi_t, c, M, F)]
        Phi, A, Phi_t, c, M, F = dense
        self._phi = _Fast(cs.Function("nodal_phi", [x, t], [Phi]))
        self._kin = _Fast(cs.Function("nodal_kin", [x, t], [Phi, A, Phi_t]))
        self._dyn = _Fast(cs.Function("nodal_dyn", [x, v, t], [c, M, F]))
        # bars and point masses only: M is constant, evaluated once (rigid bodies turn it)
        self._M_const: np.ndarray | None = None
        if not cs.depends_on(M, cs.vertcat(x, v, t)):
            self._M_const = np.asarray(cs.evalf(M))
            self._dyn_cf = _Fast(cs.Function("nodal_dyn_cf", [x, v, t], [c, F]))
        self.x0 = np.asarray(asm.x0, dtype=float)
        self.v0 = np.asarray(asm.v0, dtype=float)
        self._maps: dict[Any, Any] = {}

    # ----- evaluations -----
    def phi(self, x: np.ndarray, t: float) -> np.ndarray:
        return self._phi(x, t)[0]

    def kinematics(self, x: np.ndarray, t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        Phi, A, Pt = self._kin(x, t)
        return Phi, A, Pt

    def inertia_forces(self, x: np.ndarray, v: np.ndarray, t: float
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Second-order constraint term ``c`` (``A x'' + c = 0``), mass matrix ``M`` and
        force ``F`` (applied, gravity, velocity-dependent inertia)."""
        if self._M_const is not None:
            c, F = self._dyn_cf(x, v, t)
            return c, self._M_const, F
        c, M, F = self._dyn(x, v, t)
        return c, M, F

    def batch(self, X: np.ndarray, V: np.ndarray, T: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``A`` (nt, m, n), ``M`` (nt, n, n) and ``F`` (nt, n) at many states in one call
        (the functions mapped over the columns)."""
        nt = len(T)
        key = ("batch", nt)
        if key not in self._maps:
            self._maps[key] = (_Fast(self._kin.f.map(nt)), _Fast(self._dyn.f.map(nt)))
        fk, fd = self._maps[key]
        # column-major buffers: X (nt, n) in C order is X^T (n, nt) in Fortran order
        _, A, _ = fk(np.ravel(X), np.asarray(T, dtype=float))
        _, M, F = fd(np.ravel(X), np.ravel(V), np.asarray(T, dtype=float))
        # a mapped output is [out_1, ..., out_nt] side by side (column-major buffer)
        A = np.asarray(A).reshape(self.m, self.n, nt, order="F").transpose(2, 0, 1)
        M = np.asarray(M).reshape(self.n, self.n, nt, order="F").transpose(2, 0, 1)
        return A, M, np.asarray(F).reshape(self.n, nt, order="F").T

    def mode_count(self, x: np.ndarray, t: float = 0.0, rtol: float = RANK_RTOL) -> ModeCount:
        """The independent-mode count at configuration ``x`` (time ``t``)."""
        _, A, _ = self.kinematics(x, t)
        return mode_count(A, self.labels, rtol)

    # ----- consistent start -----
    def consistent_start(self, x: np.ndarray, v: np.ndarray, t: float, tol: float,
                         max_iter: int = 50) -> tuple[np.ndarray, np.ndarray]:
        """The nearest configuration on the constraint manifold (Gauss-Newton with
        minimum-norm corrections, ``|Phi| <= tol``) and the velocity projected on its
        tangent space (minimum-norm correction of ``A v + Phi_t = 0``)."""
        x = np.array(x, dtype=float)
        for _ in range(max_iter):
            Phi, A, Pt = self.kinematics(x, t)
            if Phi.size == 0 or np.max(np.abs(Phi)) <= tol:
                break
            x = x - np.linalg.lstsq(A, Phi, rcond=None)[0]
        else:
            raise ValueError(f"no configuration satisfying the constraints near the start "
                             f"values (|Phi| = {np.max(np.abs(Phi)):.3g} after {max_iter} "
                             "Gauss-Newton steps)")
        if Phi.size:
            v = np.asarray(v, dtype=float) - np.linalg.lstsq(A, A @ v + Pt, rcond=None)[0]
        return x, np.asarray(v, dtype=float)

    def length_scale(self) -> float:
        """A length of the model (largest extent of the start configuration, >= 1e-3 m)."""
        X = self.x0.reshape(-1, 3)
        return max(float(np.ptp(X, axis=0).max()) if X.size else 1.0, 1e-3)
