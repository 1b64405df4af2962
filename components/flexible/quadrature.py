"""Quadrature rules on the unit segment and the unit triangle.

The triangle rule is the collapsed (Duffy) tensor Gauss rule: with ``n`` points
per direction it integrates every polynomial of total degree ``2n - 2`` exactly
(the Jacobian ``1 - s`` of the collapse costs one degree). It needs no tabulated
constants, so its exactness follows from that of Gauss-Legendre.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from numpy.typing import NDArray

__all__ = ["gauss_segment", "triangle_rule", "triangle_midpoint_rule"]


@lru_cache(maxsize=None)
def gauss_segment(n: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Gauss-Legendre rule on [0, 1], exact to degree ``2n - 1``.

    Parameters
    ----------
    n : int
        Number of points.

    Returns
    -------
    points, weights : ndarray
        Abscissae in [0, 1] and weights summing to 1.
    """
    x, w = np.polynomial.legendre.leggauss(n)
    return 0.5 * (x + 1.0), 0.5 * w


@lru_cache(maxsize=None)
def triangle_rule(degree: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Rule on the unit triangle ``{xi, eta >= 0, xi + eta <= 1}`` exact to ``degree``.

    Parameters
    ----------
    degree : int
        Polynomial degree integrated exactly.

    Returns
    -------
    points : ndarray, shape (q, 2)
        ``(xi, eta)`` coordinates.
    weights : ndarray, shape (q,)
        Weights summing to 1 (i.e. normalised by the triangle area).
    """
    n = max(1, (degree + 3) // 2)
    s, ws = gauss_segment(n)
    S, T = np.meshgrid(s, s, indexing="ij")
    W = np.outer(ws, ws) * (1.0 - S) * 2.0
    xi = S.ravel()
    eta = (T * (1.0 - S)).ravel()
    return np.column_stack([xi, eta]), W.ravel()


def triangle_midpoint_rule() -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Three edge-midpoint rule on the unit triangle, exact to degree 2 (weights sum to 1)."""
    pts = np.array([[0.5, 0.0], [0.5, 0.5], [0.0, 0.5]])
    return pts, np.full(3, 1.0 / 3.0)
