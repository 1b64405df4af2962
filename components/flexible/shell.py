"""Three-node flat triangular shell: DKT plate bending + Allman drilling membrane.

Local DOF order per node (element frame ``e1, e2, e3``):
``(u, v, w, theta_x, theta_y, theta_z)``; 18 DOFs per element.

* **Bending** - DKT (Batoz, Bathe & Ho 1980). The normal rotations
  ``beta = (beta_x, beta_y)`` (``u = z beta_x``) are quadratic on the 6-node
  triangle; the Kirchhoff constraints ``beta = -grad w`` are imposed at the
  corners, and at the mid-sides along each edge (``w`` cubic Hermite along the
  edge, normal rotation linear). Kirchhoff: ``w,x = -theta_y``, ``w,y = theta_x``.
* **Membrane** - Allman's (1984) triangle: the 6-node quadratic (LST) field whose
  mid-side displacements are ``(u_i + u_j)/2 + l_ij/8 (omega_j - omega_i) n_ij``
  (``n_ij`` outward unit normal, ``omega = theta_z`` the drilling rotation). Its one
  spurious mode (all ``omega`` equal, no displacement) is removed by the small
  penalty ``k_d (mean(omega_i) - omega_c)^2`` with ``omega_c = (v,x - u,y)/2`` at
  the centroid and ``k_d = drilling_factor * G h A``; the penalty vanishes for
  rigid motions and constant strain, so it does not spoil the patch tests.
* **Mass** (consistent) - in-plane from the Allman field, transverse ``w`` from the
  9-parameter cubic of Bazeley-Cheung-Irons-Zienkiewicz type
  (span{L_i, L_i^2 L_j + L1 L2 L3 / 2}: complete quadratic, matches nodal
  ``w`` and slopes), rotary inertia ``rho h^3/12`` from the DKT rotation field.
* **Element frame** - independent of node numbering: ``e3`` is the unit normal
  with the sign that makes its largest component positive, ``e1`` is the
  projection of body X on the element plane (body Y if the element is nearly
  normal to X), ``e2 = e3 x e1``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from .element import Element, register_element
from .errors import FEError
from .fields import MassPoints
from .linalg import GEOMETRY_RTOL, block_rotate, block_rotation, shape_to_body
from .materials import Material, _quantity
from .mesh import Mesh, ShellMesh
from .quadrature import triangle_midpoint_rule, triangle_rule

__all__ = ["DKTShell", "shell_frames"]

_EDGES = ((0, 1), (1, 2), (2, 0))  # mid-side nodes 3, 4, 5 of the 6-node triangle


def shell_frames(X: NDArray[np.float64]) -> NDArray[np.float64]:
    """Element frames of flat triangles, independent of node numbering.

    Parameters
    ----------
    X : ndarray, shape (E, 3, 3)
        Node coordinates of each triangle [m].

    Returns
    -------
    ndarray, shape (E, 3, 3)
        Rows ``e1, e2, e3`` in the body frame.
    """
    X = np.asarray(X, float)
    n = np.cross(X[:, 1] - X[:, 0], X[:, 2] - X[:, 0])
    a2 = np.linalg.norm(n, axis=1)
    h = np.max(np.linalg.norm(X - X[:, :1], axis=2), axis=1)
    bad = np.flatnonzero(a2 <= GEOMETRY_RTOL * h**2)
    if bad.size:
        raise FEError(f"shell element {int(bad[0])} is degenerate (zero area); check its three "
                      f"node numbers and coordinates")
    e3 = n / a2[:, None]
    k = np.argmax(np.abs(e3), axis=1)
    s = np.sign(e3[np.arange(len(e3)), k])
    e3 *= s[:, None]
    ref = np.tile([1.0, 0.0, 0.0], (len(e3), 1))
    ref[np.abs(e3[:, 0]) > 0.99] = [0.0, 1.0, 0.0]
    e1 = ref - np.sum(ref * e3, axis=1)[:, None] * e3
    e1 /= np.linalg.norm(e1, axis=1)[:, None]
    e2 = np.cross(e3, e1)
    return np.stack([e1, e2, e3], axis=1)


def _quadratic_shape(pts: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """6-node quadratic shape functions and their (xi, eta) derivatives.

    Returns N (q, 6) and dN (q, 2, 6). Node order: 3 corners, mid 12, 23, 31.
    """
    xi, eta = pts[:, 0], pts[:, 1]
    L = np.stack([1.0 - xi - eta, xi, eta], axis=1)
    dL = np.array([[-1.0, 1.0, 0.0], [-1.0, 0.0, 1.0]])  # (2, 3)
    N = np.empty((len(xi), 6))
    dN = np.empty((len(xi), 2, 6))
    for a in range(3):
        N[:, a] = L[:, a] * (2 * L[:, a] - 1)
        dN[:, :, a] = (4 * L[:, a] - 1)[:, None] * dL[:, a]
    for m, (i, j) in enumerate(_EDGES):
        N[:, 3 + m] = 4 * L[:, i] * L[:, j]
        dN[:, :, 3 + m] = 4 * (L[:, j][:, None] * dL[:, i] + L[:, i][:, None] * dL[:, j])
    return N, dN


def _cubic_basis(pts: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Incomplete cubic basis span{L_i, L_a^2 L_b + L1 L2 L3/2} and (xi, eta) derivatives.

    Returns phi (q, 9), dphi (q, 2, 9).
    """
    xi, eta = pts[:, 0], pts[:, 1]
    L = np.stack([1.0 - xi - eta, xi, eta], axis=1)
    dL = np.array([[-1.0, 1.0, 0.0], [-1.0, 0.0, 1.0]])
    q = len(xi)
    phi = np.empty((q, 9))
    dphi = np.empty((q, 2, 9))
    P = L[:, 0] * L[:, 1] * L[:, 2]
    dP = (L[:, 1] * L[:, 2])[:, None] * dL[:, 0] + (L[:, 0] * L[:, 2])[:, None] * dL[:, 1] \
        + (L[:, 0] * L[:, 1])[:, None] * dL[:, 2]
    for a in range(3):
        phi[:, a] = L[:, a]
        dphi[:, :, a] = dL[:, a]
    pairs = ((0, 1), (1, 2), (2, 0), (1, 0), (2, 1), (0, 2))
    for m, (a, b) in enumerate(pairs):
        phi[:, 3 + m] = L[:, a] ** 2 * L[:, b] + 0.5 * P
        dphi[:, :, 3 + m] = (2 * L[:, a] * L[:, b])[:, None] * dL[:, a] \
            + (L[:, a] ** 2)[:, None] * dL[:, b] + 0.5 * dP
    return phi, dphi


_VERTS = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]])


def _reference_mass_integrals() -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Area-averaged ``<N6 N6^T> x I2`` (12 x 12) and ``<phi9 phi9^T>`` (9 x 9), exact."""
    if not _REF:
        pts, w = triangle_rule(6)
        N, _ = _quadratic_shape(pts)
        phi, _ = _cubic_basis(pts)
        NN = np.einsum("q,qi,qj->ij", w, N, N)
        _REF.append(np.kron(NN, np.eye(2)))
        _REF.append(np.einsum("q,qi,qj->ij", w, phi, phi))
    return _REF[0], _REF[1]


_REF: list[NDArray[np.float64]] = []


@register_element(ShellMesh)
class DKTShell(Element):
    """Flat 3-node shell element (DKT bending + Allman membrane), 6 DOF per node.

    Parameters
    ----------
    material : Material
        Elastic material (E [Pa], nu [-], rho [kg/m^3]).
    thickness : float
        Shell thickness h [m].
    drilling_factor : float
        Dimensionless drilling penalty ``alpha`` in ``k_d = alpha G h A`` [-].

    Notes
    -----
    Implements :class:`~components.flexible.element.Element`: routines are vectorised
    over ``E`` triangles given by their node coordinates ``X`` (E, 3, 3) [m] and frames
    (:meth:`frames`); results are in the body (mesh) frame with DOF order
    ``(u, v, w, rx, ry, rz)`` per node. Stress resultants at the centroid, element
    frame: membrane forces ``Nx, Ny, Nxy`` [N/m] (tension positive) and bending moments
    ``Mx = D (kx + nu ky)``, ``My = D (ky + nu kx)``, ``Mxy = D (1 - nu)/2 kxy`` [N m/m]
    with the curvatures ``(beta_x,x, beta_y,y, beta_x,y + beta_y,x)``, i.e. ``Mx > 0``
    stretches the fibres on the ``+e3`` side.
    """

    nodes_per_element = 3
    n_nodes = 3  # alias of nodes_per_element
    dimension = 2
    resultant_names = ("Nx", "Ny", "Nxy", "Mx", "My", "Mxy")
    resultant_units = ("N/m", "N/m", "N/m", "N m/m", "N m/m", "N m/m")
    prestress_components = 3

    def __init__(self, material: Material, thickness: float, drilling_factor: float = 1e-3) -> None:
        if not isinstance(material, Material):
            raise FEError("DKTShell needs a Material instance for 'material'")
        h = _quantity("shell thickness", thickness, "m")
        if not (np.isfinite(h) and h > 0):
            raise FEError(f"shell thickness must be a positive length in metres, got {thickness!r}")
        if not (drilling_factor > 0):
            raise FEError(f"drilling_factor must be > 0 (typ. 1e-3..1e-1), got {drilling_factor!r}")
        self.material = material
        self.thickness = h
        self.drilling_factor = float(drilling_factor)

    @classmethod
    def from_mesh(cls, mesh: Mesh, material: Material, section: Any = None,
                  thickness: float | None = None, drilling_factor: float | None = None,
                  **unused: Any) -> "DKTShell":
        """Shell element for a :class:`ShellMesh`.

        Parameters
        ----------
        mesh : ShellMesh
            The triangle mesh.
        material : Material
            Elastic material.
        section : None
            Beam property; must not be given for a shell mesh.
        thickness : float
            Thickness [m] (required).
        drilling_factor : float, optional
            Drilling penalty factor [-] (default 1e-3).
        """
        if thickness is None:
            raise FEError("a shell mesh needs thickness=<metres>")
        if section is not None or unused:
            extra = (["section"] if section is not None else []) + sorted(unused)
            raise FEError(f"a shell mesh takes thickness=..., not {extra} (beam properties)")
        return cls(material, thickness, 1e-3 if drilling_factor is None else drilling_factor)

    def frames(self, X: NDArray[np.float64]) -> NDArray[np.float64]:
        """Element frames (E, 3, 3) of triangles ``X`` (E, 3, 3) [m] (:func:`shell_frames`)."""
        return shell_frames(X)

    def measure(self, X: NDArray[np.float64]) -> NDArray[np.float64]:
        """Triangle areas [m^2] (E,)."""
        X = np.asarray(X, float)
        n = np.cross(X[:, 1] - X[:, 0], X[:, 2] - X[:, 0])
        return np.asarray(0.5 * np.linalg.norm(n, axis=1), dtype=np.float64)

    @property
    def mass_per_measure(self) -> float:
        """Mass per unit area ``rho h`` [kg/m^2]."""
        return float(self.material.rho * self.thickness)

    # ------------------------------------------------------------------ geometry
    def plane_stress(self) -> NDArray[np.float64]:
        """Plane-stress elasticity matrix [Pa] (Voigt order xx, yy, xy engineering)."""
        E, nu = self.material.E, self.material.nu
        return E / (1 - nu**2) * np.array([[1, nu, 0], [nu, 1, 0], [0, 0, (1 - nu) / 2]])

    @staticmethod
    def local_coordinates(X: NDArray[np.float64], frames: NDArray[np.float64]
                          ) -> NDArray[np.float64]:
        """In-plane coordinates (E, 3, 2) of the nodes relative to the centroid [m]."""
        c = X.mean(axis=1, keepdims=True)
        return np.einsum("eia,eba->eib", X - c, frames[:, :2, :])

    @staticmethod
    def _jacobian(xl: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Inverse Jacobian (E, 2, 2) mapping d/d(xi, eta) -> d/d(x, y) and signed det (E,)."""
        J = np.stack([xl[:, 1] - xl[:, 0], xl[:, 2] - xl[:, 0]], axis=1)  # rows d/dxi, d/deta
        det = J[:, 0, 0] * J[:, 1, 1] - J[:, 0, 1] * J[:, 1, 0]
        Jinv = np.stack([np.stack([J[:, 1, 1], -J[:, 0, 1]], -1),
                         np.stack([-J[:, 1, 0], J[:, 0, 0]], -1)], axis=1) / det[:, None, None]
        return Jinv, det

    # ------------------------------------------------------------------ DKT
    @staticmethod
    def dkt_beta_nodes(xl: NDArray[np.float64]) -> NDArray[np.float64]:
        """Map bending DOFs (w, theta_x, theta_y) x 3 to beta at the 6 nodes.

        Returns G (E, 12, 9); rows ordered (beta_x, beta_y) per node.
        """
        E = xl.shape[0]
        G = np.zeros((E, 12, 9))
        for i in range(3):  # corners: beta_x = theta_y, beta_y = -theta_x
            G[:, 2 * i, 3 * i + 2] = 1.0
            G[:, 2 * i + 1, 3 * i + 1] = -1.0
        for m, (i, j) in enumerate(_EDGES):
            d = xl[:, j] - xl[:, i]
            ell = np.linalg.norm(d, axis=1)
            t = d / ell[:, None]
            n = np.stack([t[:, 1], -t[:, 0]], axis=1)
            # beta (2 comps) at corner a as rows of G: rows 2a, 2a+1
            bi, bj = G[:, 2 * i:2 * i + 2, :], G[:, 2 * j:2 * j + 2, :]
            bs_i = np.einsum("ea,eak->ek", t, bi)
            bs_j = np.einsum("ea,eak->ek", t, bj)
            bn_i = np.einsum("ea,eak->ek", n, bi)
            bn_j = np.einsum("ea,eak->ek", n, bj)
            bs = -0.25 * (bs_i + bs_j)
            bs[:, 3 * j] += -1.5 / ell
            bs[:, 3 * i] += 1.5 / ell
            bn = 0.5 * (bn_i + bn_j)
            r = 2 * (3 + m)
            G[:, r:r + 2, :] = t[:, :, None] * bs[:, None, :] + n[:, :, None] * bn[:, None, :]
        return G

    def dkt_curvature(self, xl: NDArray[np.float64], pts: NDArray[np.float64]
                      ) -> NDArray[np.float64]:
        """Curvature-displacement matrices (E, q, 3, 9) [1/m] at points (xi, eta).

        Curvatures ``(beta_x,x, beta_y,y, beta_x,y + beta_y,x)`` from bending DOFs.
        """
        G = self.dkt_beta_nodes(xl)
        Jinv, _ = self._jacobian(xl)
        _, dN = _quadratic_shape(pts)
        dNx = np.einsum("eab,qbk->eqak", Jinv, dN)  # (E, q, 2, 6)
        E, q = xl.shape[0], len(pts)
        B = np.zeros((E, q, 3, 12))
        B[:, :, 0, 0::2] = dNx[:, :, 0]
        B[:, :, 1, 1::2] = dNx[:, :, 1]
        B[:, :, 2, 0::2] = dNx[:, :, 1]
        B[:, :, 2, 1::2] = dNx[:, :, 0]
        return np.einsum("eqak,ekj->eqaj", B, G)

    def dkt_rotations(self, xl: NDArray[np.float64], pts: NDArray[np.float64]
                      ) -> NDArray[np.float64]:
        """Normal rotations (beta_x, beta_y) (E, q, 2, 9) from bending DOFs at points."""
        G = self.dkt_beta_nodes(xl)
        N, _ = _quadratic_shape(pts)
        q = len(pts)
        Nb = np.zeros((q, 2, 12))
        Nb[:, 0, 0::2] = N
        Nb[:, 1, 1::2] = N
        return np.einsum("qak,ekj->eqaj", Nb, G)

    # ------------------------------------------------------------------ transverse cubic
    def cubic_coefficients(self, xl: NDArray[np.float64]) -> NDArray[np.float64]:
        """Coefficients (E, 9, 9) of the cubic basis in terms of the bending DOFs."""
        Jinv, _ = self._jacobian(xl)
        phi_v, dphi_v = _cubic_basis(_VERTS)
        V = np.zeros((xl.shape[0], 9, 9))  # functionals (w, w_x, w_y) per vertex x basis
        gv = np.einsum("eab,vbk->evak", Jinv, dphi_v)  # (E, 3, 2, 9)
        for i in range(3):
            V[:, 3 * i] = phi_v[i]
            V[:, 3 * i + 1] = gv[:, i, 0]
            V[:, 3 * i + 2] = gv[:, i, 1]
        C = np.linalg.inv(V)
        # functionals -> DOFs: w_x = -theta_y, w_y = theta_x
        S = np.zeros((9, 9))
        for i in range(3):
            S[3 * i, 3 * i] = 1.0
            S[3 * i + 1, 3 * i + 2] = -1.0
            S[3 * i + 2, 3 * i + 1] = 1.0
        return C @ S

    def cubic_w(self, xl: NDArray[np.float64], pts: NDArray[np.float64]
                ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Cubic transverse displacement used for mass, loads and geometric stiffness.

        Returns ``w`` (E, q, 9) and its gradient (E, q, 2, 9) in terms of the
        bending DOFs (w, theta_x, theta_y) per node.
        """
        Jinv, _ = self._jacobian(xl)
        CS = self.cubic_coefficients(xl)
        phi, dphi = _cubic_basis(pts)
        w = np.einsum("qk,ekj->eqj", phi, CS)
        g = np.einsum("eab,qbk,ekj->eqaj", Jinv, dphi, CS)
        return w, g

    # ------------------------------------------------------------------ Allman membrane
    @staticmethod
    def allman_transform(xl: NDArray[np.float64]) -> NDArray[np.float64]:
        """LST nodal displacements (u, v) x 6 from (u, v, omega) x 3: (E, 12, 9)."""
        E = xl.shape[0]
        T = np.zeros((E, 12, 9))
        for i in range(3):
            T[:, 2 * i, 3 * i] = 1.0
            T[:, 2 * i + 1, 3 * i + 1] = 1.0
        for m, (i, j) in enumerate(_EDGES):
            d = xl[:, j] - xl[:, i]
            # (l/8) n with n the unit normal to the right of i -> j (outward for
            # counter-clockwise numbering): independent of the triangle's orientation
            c = np.stack([d[:, 1], -d[:, 0]], axis=1) / 8.0
            r = 2 * (3 + m)
            for a in range(2):
                T[:, r + a, 3 * i + a] = 0.5
                T[:, r + a, 3 * j + a] = 0.5
                T[:, r + a, 3 * j + 2] = c[:, a]
                T[:, r + a, 3 * i + 2] = -c[:, a]
        return T

    def membrane_strain(self, xl: NDArray[np.float64], pts: NDArray[np.float64]
                        ) -> NDArray[np.float64]:
        """Membrane strains (E, q, 3, 9) from (u, v, omega) per node."""
        Jinv, _ = self._jacobian(xl)
        _, dN = _quadratic_shape(pts)
        dNx = np.einsum("eab,qbk->eqak", Jinv, dN)
        E, q = xl.shape[0], len(pts)
        B = np.zeros((E, q, 3, 12))
        B[:, :, 0, 0::2] = dNx[:, :, 0]
        B[:, :, 1, 1::2] = dNx[:, :, 1]
        B[:, :, 2, 0::2] = dNx[:, :, 1]
        B[:, :, 2, 1::2] = dNx[:, :, 0]
        return np.einsum("eqak,ekj->eqaj", B, self.allman_transform(xl))

    def membrane_displacement(self, xl: NDArray[np.float64], pts: NDArray[np.float64]
                              ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """In-plane displacement (E, q, 2, 9) and rotation ``(v,x - u,y)/2`` (E, q, 9)."""
        N, dN = _quadratic_shape(pts)
        Jinv, _ = self._jacobian(xl)
        dNx = np.einsum("eab,qbk->eqak", Jinv, dN)
        T = self.allman_transform(xl)
        q = len(pts)
        Nu = np.zeros((q, 2, 12))
        Nu[:, 0, 0::2] = N
        Nu[:, 1, 1::2] = N
        U = np.einsum("qak,ekj->eqaj", Nu, T)
        W = np.zeros((xl.shape[0], q, 12))
        W[:, :, 1::2] = 0.5 * dNx[:, :, 0]
        W[:, :, 0::2] = -0.5 * dNx[:, :, 1]
        return U, np.einsum("eqk,ekj->eqj", W, T)

    # ------------------------------------------------------------------ matrices
    _MEM = np.array([0, 1, 5, 6, 7, 11, 12, 13, 17])   # u, v, rz
    _BEN = np.array([2, 3, 4, 8, 9, 10, 14, 15, 16])   # w, rx, ry

    def local_stiffness(self, xl: NDArray[np.float64]) -> NDArray[np.float64]:
        """Element stiffness (E, 18, 18) in the element frame [N/m, N, N m]."""
        C = self.plane_stress()
        h = self.thickness
        _, det = self._jacobian(xl)
        area = 0.5 * np.abs(det)
        pts, w = triangle_midpoint_rule()  # strains linear -> degree 2 exact
        E = xl.shape[0]
        K = np.zeros((E, 18, 18))
        Bm = self.membrane_strain(xl, pts)
        Km = h * np.einsum("q,eqai,ab,eqbj->eij", w, Bm, C, Bm, optimize=True)
        Km *= area[:, None, None]
        # drilling penalty on mean(omega) - omega_centroid (zero for rigid motion/constant strain)
        _, wrot = self.membrane_displacement(xl, np.array([[1 / 3, 1 / 3]]))
        b = -wrot[:, 0, :]
        b[:, 2::3] += 1.0 / 3.0
        kd = self.drilling_factor * self.material.shear_modulus * h * area
        Km += kd[:, None, None] * np.einsum("ei,ej->eij", b, b)
        Bb = self.dkt_curvature(xl, pts)
        Kb = h**3 / 12.0 * np.einsum("q,eqai,ab,eqbj->eij", w, Bb, C, Bb, optimize=True)
        K[:, self._MEM[:, None], self._MEM[None, :]] = Km
        K[:, self._BEN[:, None], self._BEN[None, :]] = Kb * area[:, None, None]
        return 0.5 * (K + np.transpose(K, (0, 2, 1)))

    def stiffness(self, X: NDArray[np.float64], frames: NDArray[np.float64]) -> NDArray[np.float64]:
        """Element stiffness matrices in the body frame, shape (E, 18, 18).

        Parameters
        ----------
        X : ndarray, shape (E, 3, 3)
            Node coordinates [m].
        frames : ndarray, shape (E, 3, 3)
            Element frames (rows) from :func:`shell_frames`.
        """
        Kl = self.local_stiffness(self.local_coordinates(X, frames))
        return block_rotate(Kl, frames)

    def local_shape(self, xl: NDArray[np.float64], pts: NDArray[np.float64]
                    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Translation and rotation shape functions (E, q, 3, 18) in the element frame."""
        E, q = xl.shape[0], len(pts)
        T = np.zeros((E, q, 3, 18))
        R = np.zeros((E, q, 3, 18))
        U, _ = self.membrane_displacement(xl, pts)
        T[:, :, 0:2, self._MEM] = U
        w, _ = self.cubic_w(xl, pts)
        T[:, :, 2, self._BEN] = w
        beta = self.dkt_rotations(xl, pts)
        R[:, :, 0, self._BEN] = -beta[:, :, 1]
        R[:, :, 1, self._BEN] = beta[:, :, 0]
        L = np.stack([1 - pts[:, 0] - pts[:, 1], pts[:, 0], pts[:, 1]], axis=1)
        R[:, :, 2, [5, 11, 17]] = L
        return T, R

    def local_mass(self, xl: NDArray[np.float64]) -> NDArray[np.float64]:
        """Consistent mass (E, 18, 18) in the element frame, from reference-triangle integrals.

        Every field is a fixed polynomial basis times an element coefficient map
        (Allman ``T_A``, cubic ``C``, DKT ``G``), so the mass is
        ``rho h A [T_A^T (N6 x I2) T_A  +  C^T Phi9 C  +  h^2/12 G^T (N6 x I2) G]`` with
        constant reference matrices ``N6 = <N N^T>``, ``Phi9 = <phi phi^T>``. Equal to
        :func:`mass_from_points` of :meth:`mass_points` (checked in the tests).
        """
        _, det = self._jacobian(xl)
        area = 0.5 * np.abs(det)
        N12, P9 = _reference_mass_integrals()
        rho, h = self.material.rho, self.thickness
        TA = self.allman_transform(xl)
        CS = self.cubic_coefficients(xl)
        G = self.dkt_beta_nodes(xl)
        Mm = np.matmul(np.swapaxes(TA, 1, 2), np.matmul(N12, TA))
        Mb = np.matmul(np.swapaxes(CS, 1, 2), np.matmul(P9, CS))
        Mb += h**2 / 12.0 * np.matmul(np.swapaxes(G, 1, 2), np.matmul(N12, G))
        M = np.zeros((xl.shape[0], 18, 18))
        f = (rho * h * area)[:, None, None]
        M[:, self._MEM[:, None], self._MEM[None, :]] = Mm * f
        M[:, self._BEN[:, None], self._BEN[None, :]] = Mb * f
        return 0.5 * (M + np.swapaxes(M, 1, 2))

    def mass_points(self, X: NDArray[np.float64], frames: NDArray[np.float64],
                    degree: int = 6, local: bool = False) -> MassPoints:
        """Mass quadrature points (degree 6 integrates the cubic-squared terms exactly).

        Parameters
        ----------
        X : ndarray, shape (E, 3, 3)
            Node coordinates [m].
        frames : ndarray, shape (E, 3, 3)
            Element frames (rows).
        degree : int
            Polynomial degree integrated exactly.
        local : bool
            Return shape functions, positions and second moments in the element
            frame (positions relative to the centroid) instead of the body frame.
        """
        X = np.asarray(X, float)
        xl = self.local_coordinates(X, frames)
        _, det = self._jacobian(xl)
        area = 0.5 * np.abs(det)
        pts, w = triangle_rule(degree)
        Tl, Rl = self.local_shape(xl, pts)
        rho, h = self.material.rho, self.thickness
        weight = rho * h * area[:, None] * w[None, :]
        L = np.stack([1 - pts[:, 0] - pts[:, 1], pts[:, 0], pts[:, 1]], axis=1)
        if local:
            pos = np.einsum("qi,eia->eqa", L, np.concatenate([xl, np.zeros_like(xl[..., :1])], -1))
            P = np.zeros((X.shape[0], len(w), 3, 3))
            P[:, :, 2, 2] = rho * h**3 / 12.0 * area[:, None] * w[None, :]
            return MassPoints(weight=weight, position=pos, second_moment=P, T=Tl, R=Rl)
        T = shape_to_body(Tl, frames)
        R = shape_to_body(Rl, frames)
        pos = np.einsum("qi,eia->eqa", L, X)
        e3 = frames[:, 2, :]
        P = rho * h**3 / 12.0 * np.einsum("ea,eb->eab", e3, e3)
        P = P[:, None] * (area[:, None] * w[None, :])[:, :, None, None]
        return MassPoints(weight=weight, position=pos, second_moment=P, T=T, R=R)

    def mass(self, X: NDArray[np.float64], frames: NDArray[np.float64],
             lumped: bool = False) -> NDArray[np.float64]:
        """Element mass matrices (E, 18, 18) in the body frame.

        Parameters
        ----------
        X : ndarray, shape (E, 3, 3)
            Node coordinates [m].
        frames : ndarray, shape (E, 3, 3)
            Element frames (rows).
        lumped : bool
            HRZ lumping in the element frame: translational diagonal scaled to the
            element mass per direction, bending rotations with the ``w`` factor,
            drilling rotations with the in-plane factor.
        """
        X = np.asarray(X, float)
        Ml = self.local_mass(self.local_coordinates(X, frames))
        if not lumped:
            return block_rotate(Ml, frames)
        xl = self.local_coordinates(X, frames)
        _, det = self._jacobian(xl)
        m = self.material.rho * self.thickness * 0.5 * np.abs(det)
        d = np.einsum("eii->ei", Ml)
        D = np.zeros_like(d)
        for comp, rots in ((0, (5,)), (1, ()), (2, (3, 4))):
            tr = [6 * a + comp for a in range(3)]
            f = m / d[:, tr].sum(axis=1)
            for i in tr + [6 * a + r for a in range(3) for r in rots]:
                D[:, i] = d[:, i] * f
        Dm = np.zeros_like(Ml)
        idx = np.arange(18)
        Dm[:, idx, idx] = D
        return block_rotate(Dm, frames)

    def load_points(self, X: NDArray[np.float64], frames: NDArray[np.float64]
                    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Degree-3 rule with the translation fields only (exact for a uniform traction:
        the Allman field is quadratic, the transverse ``w`` cubic)."""
        X = np.asarray(X, float)
        xl = self.local_coordinates(X, frames)
        _, det = self._jacobian(xl)
        pts, w = triangle_rule(3)
        E, q = X.shape[0], len(pts)
        Tl = np.zeros((E, q, 3, 18))
        U, _ = self.membrane_displacement(xl, pts)
        Tl[:, :, 0:2, self._MEM] = U
        wf, _ = self.cubic_w(xl, pts)
        Tl[:, :, 2, self._BEN] = wf
        return 0.5 * np.abs(det)[:, None] * w[None, :], shape_to_body(Tl, frames)

    def pressure_load(self, X: NDArray[np.float64], frames: NDArray[np.float64],
                      pressure: float | NDArray[np.float64], lumped: bool = False
                      ) -> NDArray[np.float64]:
        """Load (E, 18) of a uniform pressure along +e3 on each element.

        Parameters
        ----------
        X : ndarray, shape (E, 3, 3)
            Node coordinates [m].
        frames : ndarray, shape (E, 3, 3)
            Element frames (rows).
        pressure : float or ndarray (E,)
            Pressure along the element normal ``e3`` [Pa].
        lumped : bool
            Consistent (cubic ``w``, nodal moments included) or lumped (``p A / 3`` per
            node); see :meth:`Element.distributed_load`.
        """
        p = np.broadcast_to(np.asarray(pressure, float), (X.shape[0],))
        return self.distributed_load(X, frames, p[:, None] * frames[:, 2, :], lumped)

    def local_resultant_matrix(self, xl: NDArray[np.float64]) -> NDArray[np.float64]:
        """Centroid resultants ``(Nx, Ny, Nxy, Mx, My, Mxy)`` per local DOF, (E, 6, 18).

        Parameters
        ----------
        xl : ndarray, shape (E, 3, 2)
            In-plane node coordinates [m] (:meth:`local_coordinates`).
        """
        C = self.plane_stress()
        h = self.thickness
        c = np.array([[1 / 3, 1 / 3]])
        Bm = self.membrane_strain(xl, c)[:, 0]  # (E, 3, 9)
        Bb = self.dkt_curvature(xl, c)[:, 0]
        B = np.zeros((xl.shape[0], 6, 18))
        B[:, 0:3, self._MEM] = h * np.einsum("ab,ebj->eaj", C, Bm)
        B[:, 3:6, self._BEN] = h**3 / 12.0 * np.einsum("ab,ebj->eaj", C, Bb)
        return B

    def resultant_matrix(self, X: NDArray[np.float64], frames: NDArray[np.float64]
                         ) -> NDArray[np.float64]:
        """Map (E, 6, 18) from body-frame element DOFs to ``(Nx, Ny, Nxy, Mx, My, Mxy)``.

        Resultants at the centroid in the element frame [N/m, N m/m] (class notes).
        """
        Bl = self.local_resultant_matrix(self.local_coordinates(X, frames))
        return np.asarray(np.matmul(Bl, block_rotation(frames, 3)), dtype=np.float64)

    def membrane_forces(self, X: NDArray[np.float64], frames: NDArray[np.float64],
                        u_e: NDArray[np.float64]) -> NDArray[np.float64]:
        """Membrane stress resultants (Nx, Ny, Nxy) at the centroid [N/m], shape (E, 3).

        Parameters
        ----------
        X : ndarray, shape (E, 3, 3)
            Node coordinates [m].
        frames : ndarray, shape (E, 3, 3)
            Element frames (rows).
        u_e : ndarray, shape (E, 18)
            Element DOFs in the body frame [m, rad].
        """
        return self.stress_resultants(X, frames, u_e)[:, :3]

    def geometric_stiffness(self, X: NDArray[np.float64], frames: NDArray[np.float64],
                            resultants: NDArray[np.float64]) -> NDArray[np.float64]:
        """Geometric stiffness ``int grad(w)^T N grad(w) dA`` for given membrane forces.

        Parameters
        ----------
        X : ndarray, shape (E, 3, 3)
            Node coordinates [m].
        frames : ndarray, shape (E, 3, 3)
            Element frames (rows).
        resultants : ndarray, shape (E, r), r >= 3
            ``(Nx, Ny, Nxy, ...)`` in the element frame [N/m], tension positive (the
            bending moments, if given, are not used).

        Returns
        -------
        ndarray, shape (E, 18, 18)
            Body-frame matrices (transverse part only; in-plane terms are neglected).
        """
        xl = self.local_coordinates(X, frames)
        _, det = self._jacobian(xl)
        area = 0.5 * np.abs(det)
        pts, w = triangle_rule(4)
        _, g = self.cubic_w(xl, pts)
        Nf = np.asarray(resultants, float)
        Nm = np.stack([np.stack([Nf[:, 0], Nf[:, 2]], -1), np.stack([Nf[:, 2], Nf[:, 1]], -1)], 1)
        Kg = np.einsum("q,eqai,eab,eqbj->eij", w, g, Nm, g, optimize=True) * area[:, None, None]
        K = np.zeros((X.shape[0], 18, 18))
        K[:, self._BEN[:, None], self._BEN[None, :]] = Kg
        return block_rotate(K, frames)

    def geometric_stiffness_basis(self, X: NDArray[np.float64], frames: NDArray[np.float64]
                                  ) -> NDArray[np.float64]:
        """Geometric stiffness per unit ``Nx``, ``Ny``, ``Nxy``: shape (E, 3, 18, 18).

        ``geometric_stiffness(X, frames, s) = sum_i s[:, i] basis[:, i]``.
        """
        xl = self.local_coordinates(X, frames)
        _, det = self._jacobian(xl)
        area = 0.5 * np.abs(det)
        pts, w = triangle_rule(4)
        _, g = self.cubic_w(xl, pts)
        gw = g * (w[None, :, None, None] * area[:, None, None, None])
        G = np.zeros((X.shape[0], 3, 18, 18))
        xx = np.einsum("eqi,eqj->eij", gw[:, :, 0], g[:, :, 0])
        yy = np.einsum("eqi,eqj->eij", gw[:, :, 1], g[:, :, 1])
        xy = np.einsum("eqi,eqj->eij", gw[:, :, 0], g[:, :, 1])
        B = self._BEN
        for i, Kg in enumerate((xx, yy, xy + np.swapaxes(xy, 1, 2))):
            K = np.zeros((X.shape[0], 18, 18))
            K[:, B[:, None], B[None, :]] = Kg
            G[:, i] = block_rotate(K, frames)
        return G
