"""Small geometric linear algebra shared by the elements, the assembly and the invariants.

One home for the cross-product matrix, the Levi-Civita symbol, the block rotation of
element matrices between element and body frames, and the geometric tolerance of the
package.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "GEOMETRY_RTOL",
    "LEVI_CIVITA",
    "block_rotate",
    "block_rotation",
    "shape_to_body",
    "skew",
]

#: Relative size below which a geometric quantity counts as zero: an element length
#: against the largest length of the mesh, a triangle's doubled area against its squared
#: longest side, the sine of the angle between a beam axis and its orientation vector.
#: 1e-10 is about 5e5 machine epsilons: far above the round-off of coordinates given to
#: 16 digits (so a genuine element is never rejected), far below the aspect ratio of any
#: usable element (a triangle with angles of 1e-5 degrees still passes), so only true
#: degeneracies (repeated or collinear nodes, an axis parallel to zref) are reported.
GEOMETRY_RTOL = 1e-10

#: Levi-Civita symbol ``eps[a, b, c]``: ``(u x v)_a = eps_abc u_b v_c``.
LEVI_CIVITA = np.zeros((3, 3, 3))
LEVI_CIVITA[0, 1, 2] = LEVI_CIVITA[1, 2, 0] = LEVI_CIVITA[2, 0, 1] = 1.0
LEVI_CIVITA[0, 2, 1] = LEVI_CIVITA[2, 1, 0] = LEVI_CIVITA[1, 0, 2] = -1.0


def skew(v: ArrayLike) -> NDArray[np.float64]:
    """Skew-symmetric (cross-product) matrix of a 3-vector: ``skew(a) @ b = a x b``.

    Parameters
    ----------
    v : array_like, shape (3,)
        Vector (any unit).

    Returns
    -------
    ndarray, shape (3, 3)
    """
    x, y, z = np.asarray(v, float).ravel()
    return np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])


def block_rotation(frames: NDArray[np.float64], n_nodes: int) -> NDArray[np.float64]:
    """Block-diagonal rotations ``Tb = blockdiag(F, ..., F)`` (E, 6n, 6n).

    Parameters
    ----------
    frames : ndarray, shape (E, 3, 3)
        Rows = element axes in the body frame (``x_local = F x_body``).
    n_nodes : int
        Nodes per element (two 3 x 3 blocks, translations and rotations, per node).

    Returns
    -------
    ndarray, shape (E, 6 n, 6 n)
        Maps body-frame element DOFs to element-frame DOFs: ``u_local = Tb u_body``.
    """
    E = frames.shape[0]
    T = np.zeros((E, 6 * n_nodes, 6 * n_nodes))
    for b in range(2 * n_nodes):
        T[:, 3 * b:3 * b + 3, 3 * b:3 * b + 3] = frames
    return T


def block_rotate(A: NDArray[np.float64], frames: NDArray[np.float64]) -> NDArray[np.float64]:
    """``Tb^T A Tb`` for element matrices A (E, 3m, 3m) and ``Tb = blockdiag(F, ..., F)``.

    Parameters
    ----------
    A : ndarray, shape (E, 3m, 3m)
        Matrices in the element frame.
    frames : ndarray, shape (E, 3, 3)
        Rows = element axes in the body frame (``x_local = F x_body``).

    Returns
    -------
    ndarray, shape (E, 3m, 3m)
        Matrices in the body frame.
    """
    E, n, _ = A.shape
    B = np.matmul(A.reshape(E, n * n // 3, 3), frames).reshape(E, n, n)  # A Tb
    C = np.matmul(np.swapaxes(B, 1, 2).reshape(E, n * n // 3, 3), frames).reshape(E, n, n)
    return np.swapaxes(C, 1, 2)


def shape_to_body(Tl: NDArray[np.float64], frames: NDArray[np.float64]) -> NDArray[np.float64]:
    """Shape functions (E, q, 3, 3m) from element to body frame: ``F^T Tl Tb``.

    Parameters
    ----------
    Tl : ndarray, shape (E, q, 3, 3m)
        Shape functions in the element frame (field and DOFs local).
    frames : ndarray, shape (E, 3, 3)
        Rows = element axes in the body frame.

    Returns
    -------
    ndarray, shape (E, q, 3, 3m)
        Field in body components per body-frame DOF.
    """
    E, q, _, n = Tl.shape
    T5 = Tl.reshape(E, q, 3, n // 3, 3)
    out = np.einsum("eba,eqbnc,ecd->eqand", frames, T5, frames, optimize=True)
    return out.reshape(E, q, 3, n)
