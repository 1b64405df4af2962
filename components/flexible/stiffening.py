r"""Geometric stiffening data in SID style (unit-load geometric stiffness matrices).

A flexible body in a mechanism is pre-stressed by the inertia of its own motion and by
the joint and applied forces at its attachments. Linearised about that quasi-static
pre-stress, the elastic equations gain the geometric stiffness ``K_G`` of the stress
field. Every pre-stress source is linear in a few motion or load quantities, so (as in
the Standard Input Data of flexible multibody codes, Wallrapp 1994) ``K_G`` is
tabulated once per body as unit-load matrices and recombined during the simulation:

    K_G(t) = sum_c coeff_c(t) K_G,c          (k x k, in the elastic coordinates)

with the load cases, all in body-frame components and about the body-frame origin:

===========  =====================================  ==========================================
cases        unit load (d'Alembert body force)      coefficient
===========  =====================================  ==========================================
6 centrif.   ``-rho B_ab x`` (``B_aa = e_a e_a^T``,  ``W_ab`` of ``W = w w^T - |w|^2 I``
             ``B_ab = e_a e_b^T + e_b e_a^T``)      (xx, yy, zz, xy, yz, zx)
3 Euler      ``-rho e_a x x``                       angular acceleration ``alpha_a``
3 transl.    ``-rho e_a``                           ``(a_O - g)_a`` (origin acceleration - gravity)
6 per node   unit force ``e_a`` / moment ``e_a``    force / moment on the body at the node
===========  =====================================  ==========================================

Each unit load is solved statically with the supports of the body's reference
condition (clamped: the clamp; pinned: the six statically determinate chord
constraints; free: inertia relief), its element stress resultants give ``K_G(u_c)``,
and the projection on the elastic basis gives ``K_G,c``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from .assembly import FEModel
from .errors import FEError
from .linalg import skew
from .reference import ReferenceCondition, StaticSolver

__all__ = ["CENTRIFUGAL_PAIRS", "GeometricStiffening", "geometric_stiffening"]

#: Index pairs (a, b) of the six centrifugal cases, in order.
CENTRIFUGAL_PAIRS: tuple[tuple[int, int], ...] = ((0, 0), (1, 1), (2, 2), (0, 1), (1, 2), (2, 0))
_AX = "xyz"


@dataclass(frozen=True)
class GeometricStiffening:
    """Unit-load geometric stiffness matrices of one flexible body.

    Attributes
    ----------
    names : tuple of str
        Load-case names, e.g. ``'centrifugal xx'``, ``'euler z'``, ``'acceleration y'``,
        ``'node 8 force x'``, ``'node 8 moment z'``.
    matrices : list of (k, k) arrays (dense, modal coordinates) or sparse matrices (nodal)
        ``K_G,c`` per case [N/m per unit coefficient, generalized units].
    attachment_nodes : tuple of int
        Nodes with unit force/moment cases (6 per node, in this order).
    displacements : ndarray, shape (n_dofs, n_cases)
        Static nodal pre-stress displacements of the unit loads [m, rad].
    """

    names: tuple[str, ...]
    matrices: list[Any]
    attachment_nodes: tuple[int, ...]
    displacements: NDArray[np.float64]

    @property
    def n_cases(self) -> int:
        """Number of unit load cases (12 + 6 per attachment node)."""
        return len(self.names)

    def coefficients(self, omega: Sequence[Any] | None = None,
                     angular_acceleration: Sequence[Any] | None = None,
                     acceleration: Sequence[Any] | None = None,
                     gravity: Sequence[Any] | None = None,
                     attachment_loads: Sequence[Sequence[Any]] | None = None) -> list[Any]:
        """Coefficients of the load cases for a motion state (numeric or symbolic).

        Written with indexing, ``+``, ``-`` and ``*`` only, so CasADi ``SX``/``MX``
        entries work as well as numbers: the dynamics builds ``K_G`` symbolically once.

        Parameters
        ----------
        omega : sequence of 3, optional
            Angular velocity of the body frame, body components [rad/s].
        angular_acceleration : sequence of 3, optional
            Its derivative ``alpha`` [rad/s^2].
        acceleration : sequence of 3, optional
            Acceleration of the body-frame origin, body components [m/s^2].
        gravity : sequence of 3, optional
            Gravity, body components [m/s^2] (enters as ``acceleration - gravity``).
        attachment_loads : sequence, optional
            One 6-sequence (force [N], moment [N m], body components, acting on the
            body) per attachment node, in the order of :attr:`attachment_nodes`.

        Returns
        -------
        list
            ``n_cases`` coefficients.
        """
        z = (0.0, 0.0, 0.0)
        w = omega if omega is not None else z
        al = angular_acceleration if angular_acceleration is not None else z
        a = acceleration if acceleration is not None else z
        g = gravity if gravity is not None else z
        w2 = w[0] * w[0] + w[1] * w[1] + w[2] * w[2]
        out: list[Any] = [w[i] * w[j] - (w2 if i == j else 0.0) for i, j in CENTRIFUGAL_PAIRS]
        out += [al[i] for i in range(3)]
        out += [a[i] - g[i] for i in range(3)]
        n_att = len(self.attachment_nodes)
        if attachment_loads is None:
            out += [0.0] * (6 * n_att)
        else:
            if len(attachment_loads) != n_att:
                raise FEError(f"attachment_loads needs one (force, moment) 6-vector per "
                              f"attachment node {list(self.attachment_nodes)}, got "
                              f"{len(attachment_loads)}")
            for fm in attachment_loads:
                out += [fm[i] for i in range(6)]
        return out

    def stiffness(self, coefficients: Sequence[Any]) -> Any:
        """``K_G = sum_c coefficients[c] K_G,c`` (numeric, sparse or CasADi-symbolic)."""
        if len(coefficients) != self.n_cases:
            raise FEError(f"expected {self.n_cases} coefficients (see names), got "
                          f"{len(coefficients)}")
        out: Any = None
        for c, K in zip(coefficients, self.matrices, strict=True):
            if isinstance(c, (int, float, np.floating)) and c == 0:
                continue
            t = c * K
            out = t if out is None else out + t
        if out is None:
            return 0.0 * self.matrices[0]
        return out


def _unit_loads(model: FEModel, nodes: Sequence[int]) -> tuple[list[str], NDArray[np.float64]]:
    """Names and load vectors (n_dofs, c) of the unit load cases."""
    names: list[str] = []
    cols: list[NDArray[np.float64]] = []
    for a, b in CENTRIFUGAL_PAIRS:
        B = np.zeros((3, 3))
        B[a, b] = B[b, a] = 1.0
        names.append(f"centrifugal {_AX[a]}{_AX[b]}")
        cols.append(model.acceleration_field_load(B))
    for a in range(3):
        names.append(f"euler {_AX[a]}")
        cols.append(model.acceleration_field_load(skew(np.eye(3)[a])))
    for a in range(3):
        names.append(f"acceleration {_AX[a]}")
        cols.append(model.body_force_load(-np.eye(3)[a]))
    for n in nodes:
        for kind, sl in (("force", slice(0, 3)), ("moment", slice(3, 6))):
            for a in range(3):
                f = np.zeros(model.n_dofs)
                f[6 * n + sl.start + a] = 1.0
                names.append(f"node {n} {kind} {_AX[a]}")
                cols.append(f)
    return names, np.column_stack(cols)


def geometric_stiffening(model: FEModel, reference: ReferenceCondition,
                         basis: NDArray[np.float64] | sp.spmatrix,
                         attachment_nodes: Sequence[int] = (),
                         solver: StaticSolver | None = None,
                         chunk: int = 4096) -> GeometricStiffening:
    """Tabulate the unit-load geometric stiffness matrices of a body.

    Parameters
    ----------
    model : FEModel
        Finite-element model.
    reference : ReferenceCondition
        Supports of the pre-stress problems (see :class:`StaticSolver`).
    basis : ndarray or sparse, shape (n_dofs, k)
        Elastic basis (modes or nodal selection).
    attachment_nodes : sequence of int
        Nodes with unit force and moment cases.
    solver : StaticSolver, optional
        A factorisation to reuse.
    chunk : int
        Elements per batch (memory control for modal bases).

    Returns
    -------
    GeometricStiffening
    """
    solver = solver or StaticSolver(model, reference)
    names, F = _unit_loads(model, attachment_nodes)
    U = solver.solve(F)
    mats: list[Any] = []
    if sp.issparse(basis):  # nodal coordinates: assemble and project each case
        B = sp.csr_matrix(basis)
        for c in range(U.shape[1]):
            mats.append(sp.csr_matrix(B.T @ model.geometric_stiffness(u=U[:, c]) @ B))
    else:
        mats = list(_projected_cases(model, np.asarray(basis, float), U, chunk))
    return GeometricStiffening(names=tuple(names), matrices=mats,
                               attachment_nodes=tuple(int(n) for n in attachment_nodes),
                               displacements=U)


def _projected_cases(model: FEModel, Phi: NDArray[np.float64], U: NDArray[np.float64],
                     chunk: int) -> NDArray[np.float64]:
    """``Phi^T K_G(U[:, c]) Phi`` for every case, element by element.

    K_G is linear in the pre-stress resultants, so each element's contribution is
    ``sum_i s_ci Phi_e^T G_ei Phi_e`` with the unit-resultant matrices ``G_ei``
    (:meth:`Element.geometric_stiffness_basis`) computed once for all cases.
    """
    el = model.element
    p = el.prestress_components
    ed = model.element_dofs
    k, nc = Phi.shape[1], U.shape[1]
    out = np.zeros((nc, k, k))
    Rm = model.resultant_matrices
    for s0 in range(0, model.mesh.n_elements, chunk):
        sl = slice(s0, s0 + chunk)
        G = el.geometric_stiffness_basis(model.X[sl], model.frames[sl])  # (e, p, n, n)
        Pe = Phi[ed[sl]]  # (e, n, k)
        H = np.matmul(np.swapaxes(Pe, 1, 2)[:, None], np.matmul(G, Pe[:, None]))  # (e,p,k,k)
        S = np.einsum("erj,ejc->erc", Rm[sl, :p], U[ed[sl]])  # (e, p, cases)
        out += np.einsum("epc,epkl->ckl", S, H, optimize=True)
    return np.asarray(0.5 * (out + np.swapaxes(out, 1, 2)), dtype=np.float64)
