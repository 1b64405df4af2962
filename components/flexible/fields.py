"""Mass-point representation of an element's displacement field.

Every element describes its mass distribution by quadrature points. At a point
``g`` with undeformed position ``x_g`` (on the beam axis or shell mid-surface),
a material particle at offset ``d`` in the cross-section (or thickness) moves by

    u(d) = T_g q + (R_g q) x d,

where ``q`` are the element's nodal DOFs (global frame), ``T_g`` (3 x n) the
translation shape functions and ``R_g`` (3 x n) the rotation shape functions.
With the point mass ``w_g = int rho dA * weight`` and the second moment
``P_g = int rho d d^T`` about the point, every mass integral quadratic in the
position is exact: this is what the consistent mass matrix and the FFRF inertia
invariants are built from.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from .linalg import block_rotate, shape_to_body

__all__ = ["MassPoints", "block_rotate", "mass_from_points", "rotary_inertia", "shape_to_body"]


@dataclass(frozen=True)
class MassPoints:
    """Quadrature description of the mass of a batch of elements.

    Attributes
    ----------
    weight : ndarray, shape (E, q)
        Mass lumped at each quadrature point [kg].
    position : ndarray, shape (E, q, 3)
        Undeformed position of each point in the body frame [m].
    second_moment : ndarray, shape (E, q, 3, 3)
        ``int rho d d^T`` over the section/thickness about the point [kg m^2].
    T : ndarray, shape (E, q, 3, n)
        Translation shape functions in the body frame [-, m for rotational DOFs].
    R : ndarray, shape (E, q, 3, n)
        Rotation shape functions in the body frame [1/m, - for rotational DOFs].
    """

    weight: NDArray[np.float64]
    position: NDArray[np.float64]
    second_moment: NDArray[np.float64]
    T: NDArray[np.float64]
    R: NDArray[np.float64]


def rotary_inertia(P: NDArray[np.float64]) -> NDArray[np.float64]:
    """Inertia tensor ``tr(P) I - P`` of a second-moment tensor ``P`` [kg m^2].

    Parameters
    ----------
    P : ndarray, shape (..., 3, 3)
        Second moments ``int rho d d^T`` [kg m^2].

    Returns
    -------
    ndarray, shape (..., 3, 3)
    """
    tr = np.trace(P, axis1=-2, axis2=-1)
    return tr[..., None, None] * np.eye(3) - P


def mass_from_points(mp: MassPoints) -> NDArray[np.float64]:
    """Consistent element mass matrices ``sum_g w T^T T + R^T J R``.

    Parameters
    ----------
    mp : MassPoints
        Element mass points.

    Returns
    -------
    ndarray, shape (E, n, n)
        Element mass matrices [kg, kg m, kg m^2 blocks].
    """
    E, q, _, n = mp.T.shape
    Tw = (mp.T * np.sqrt(mp.weight)[:, :, None, None]).reshape(E, q * 3, n)
    M = np.matmul(np.swapaxes(Tw, 1, 2), Tw)
    J = rotary_inertia(mp.second_moment)
    JR = np.matmul(J, mp.R).reshape(E, q * 3, n)
    M += np.matmul(np.swapaxes(mp.R.reshape(E, q * 3, n), 1, 2), JR)
    return 0.5 * (M + np.swapaxes(M, 1, 2))
