"""Two-node 3D Timoshenko beam element with exact interdependent interpolation.

Local DOF order per node: ``(u, v, w, theta_x, theta_y, theta_z)``; local x runs
from node 1 to node 2, local y and z are the principal axes of the section.

Bending in each principal plane uses the *interdependent* interpolation: the
deflection is cubic and the section rotation quadratic, tied together so that
they solve the homogeneous Timoshenko equations

    (EI phi')' + k G A (v' - phi) = 0,     (k G A (v' - phi))' = 0

exactly. Shear strain is therefore constant in the element and equals the value
the exact solution gives: there is no shear locking (a single element gives the
exact cantilever tip deflection ``P L^3/(3EI) + P L/(kGA)`` for any slenderness),
and in the Euler-Bernoulli limit the interpolation reduces to cubic Hermite.
The resulting stiffness equals Przemieniecki's closed form; the consistent mass
(translational and rotary inertia) is integrated exactly from the same shape
functions.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .element import Element, register_element
from .errors import FEError
from .fields import MassPoints, mass_from_points
from .linalg import GEOMETRY_RTOL, block_rotate, block_rotation, shape_to_body
from .materials import Material, Section
from .mesh import BeamMesh, Mesh
from .quadrature import gauss_segment

__all__ = ["TimoshenkoBeam3D", "beam_frames"]

_V_DOFS = (1, 5, 7, 11)  # v1, theta_z1, v2, theta_z2 (x-y plane, phi = theta_z)
_W_DOFS = (2, 4, 8, 10)  # w1, theta_y1, w2, theta_y2 (x-z plane, phi = -theta_y)


def beam_frames(x1: NDArray[np.float64], x2: NDArray[np.float64],
                zref: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
    """Element frames of straight beams.

    Parameters
    ----------
    x1, x2 : ndarray, shape (E, 3)
        End node coordinates [m].
    zref : ndarray, shape (E, 3) or (3,), optional
        Vector towards which local z points (projected normal to the axis).
        Default: global Z, or global X for elements parallel to Z.

    Returns
    -------
    ndarray, shape (E, 3, 3)
        Rows are the local axes ``e_x, e_y, e_z`` in the body frame.
    """
    d = np.asarray(x2, float) - np.asarray(x1, float)
    L = np.linalg.norm(d, axis=1)
    bad = np.flatnonzero(L <= GEOMETRY_RTOL * float(np.max(L, initial=0.0)))
    if bad.size:
        raise FEError(f"beam element {int(bad[0])} has zero length; remove duplicate nodes")
    ex = d / L[:, None]
    if zref is None:
        z = np.tile([0.0, 0.0, 1.0], (len(L), 1))
        par = np.abs(ex[:, 2]) > 0.999
        z[par] = [1.0, 0.0, 0.0]
    else:
        z = np.broadcast_to(np.asarray(zref, float), ex.shape).copy()
    ez = z - np.sum(z * ex, axis=1)[:, None] * ex
    nz = np.linalg.norm(ez, axis=1)
    # nz / |z| = sin(angle between axis and zref): a frame from a nearly parallel zref
    # would amplify round-off by 1/sin; sqrt(GEOMETRY_RTOL) keeps the frame to ~1e-11
    bad = np.flatnonzero(nz <= np.sqrt(GEOMETRY_RTOL) * np.linalg.norm(z, axis=1))
    if bad.size:
        raise FEError(f"beam element {int(bad[0])}: orientation vector zref is parallel to the "
                      f"element axis; give a zref not parallel to it")
    ez /= nz[:, None]
    ey = np.cross(ez, ex)
    return np.stack([ex, ey, ez], axis=1)


@register_element(BeamMesh)
class TimoshenkoBeam3D(Element):
    """2-node, 12-DOF Timoshenko beam (axial, torsion, two shear-deformable bending planes).

    Parameters
    ----------
    material : Material
        Elastic material (E [Pa], G [Pa], rho [kg/m^3]).
    section : Section
        Cross-section (A [m^2], Iy, Iz, J [m^4], shear factors).
    zref : array_like, shape (3,) or (E, 3), optional
        Orientation vector(s) of the local z axis (see :func:`beam_frames`); taken from
        :attr:`BeamMesh.zref` by :meth:`from_mesh`.

    Notes
    -----
    Implements :class:`~components.flexible.element.Element`: every routine is
    vectorised over a batch of ``E`` elements given by their node coordinates ``X``
    (E, 2, 3) [m] and frames (:meth:`frames`). Matrices are returned in the body (mesh)
    frame. Stress resultants at the element centre, element frame:
    ``N`` axial force [N] (tension positive), ``Vy = -dMz/dx``, ``Vz = dMy/dx`` shear
    forces [N], ``T`` torque [N m], ``My = EIy dtheta_y/dx``, ``Mz = EIz dtheta_z/dx``
    bending moments [N m] (a tip force ``P`` along +y on a cantilever gives
    ``Mz = P (L - x)``, ``Vy = P``).
    """

    nodes_per_element = 2
    n_nodes = 2  # alias of nodes_per_element
    dimension = 1
    resultant_names = ("N", "Vy", "Vz", "T", "My", "Mz")
    resultant_units = ("N", "N", "N", "N m", "N m", "N m")
    prestress_components = 1

    def __init__(self, material: Material, section: Section,
                 zref: ArrayLike | None = None) -> None:
        if not isinstance(material, Material):
            raise FEError("TimoshenkoBeam3D needs a Material instance for 'material'")
        if not isinstance(section, Section):
            raise FEError("TimoshenkoBeam3D needs a Section instance for 'section' "
                          "(e.g. Section.rectangle(width, height))")
        self.material = material
        self.section = section
        self.zref = None if zref is None else np.asarray(zref, float)

    @classmethod
    def from_mesh(cls, mesh: Mesh, material: Material, section: Section | None = None,
                  thickness: float | None = None, drilling_factor: float | None = None,
                  **unused: Any) -> "TimoshenkoBeam3D":
        """Beam element for a :class:`BeamMesh` (orientation vectors from ``mesh.zref``).

        Parameters
        ----------
        mesh : BeamMesh
            The beam mesh.
        material : Material
            Elastic material.
        section : Section
            Cross-section (required).
        thickness, drilling_factor : None
            Shell properties; must not be given for a beam mesh.
        """
        if section is None:
            raise FEError("a beam mesh needs section=Section(...) (e.g. Section.circle(r))")
        if thickness is not None or drilling_factor is not None or unused:
            extra = [n for n, v in (("thickness", thickness),
                                    ("drilling_factor", drilling_factor)) if v is not None]
            raise FEError(f"a beam mesh takes section=..., not {extra + sorted(unused)} "
                          f"(shell properties)")
        return cls(material, section, getattr(mesh, "zref", None))

    # ------------------------------------------------------------------ geometry
    def frames(self, X: NDArray[np.float64]) -> NDArray[np.float64]:
        """Element frames (E, 3, 3) of node coordinates ``X`` (E, 2, 3) [m] (``beam_frames``)."""
        X = np.asarray(X, float)
        return beam_frames(X[:, 0], X[:, 1], self.zref)

    def measure(self, X: NDArray[np.float64]) -> NDArray[np.float64]:
        """Element lengths [m] (E,)."""
        X = np.asarray(X, float)
        return np.asarray(np.linalg.norm(X[:, 1] - X[:, 0], axis=1), dtype=np.float64)

    @property
    def mass_per_measure(self) -> float:
        """Mass per unit length ``rho A`` [kg/m]."""
        return float(self.material.rho * self.section.A)

    # ------------------------------------------------------------------ helpers
    def _plane(self, plane: str) -> tuple[float, float]:
        """(EI, 1/(k G A)) of bending plane 'xy' (about z) or 'xz' (about y)."""
        m, s = self.material, self.section
        if plane == "xy":
            EI, k = m.E * s.Iz, s.ky
        else:
            EI, k = m.E * s.Iy, s.kz
        inv = 0.0 if math.isinf(k) else 1.0 / (k * m.shear_modulus * s.A)
        return EI, inv

    def shear_parameter(self, L: NDArray[np.float64], plane: str = "xy") -> NDArray[np.float64]:
        """Przemieniecki's shear parameter ``Phi = 12 EI / (k G A L^2)`` [-].

        Parameters
        ----------
        L : ndarray
            Element lengths [m].
        plane : {'xy', 'xz'}
            Bending plane.
        """
        EI, inv = self._plane(plane)
        return 12.0 * EI * inv / np.asarray(L, float) ** 2

    @staticmethod
    def _coeffs(L: NDArray[np.float64], phi: NDArray[np.float64]) -> NDArray[np.float64]:
        """Map (v1, phi1, v2, phi2) -> polynomial coefficients a (E, 4, 4).

        With ``g = Phi/6``: ``v = a0 + a1 s + a2 s^2/2 + a3 (s^3/3 - g s)`` and
        ``L phi = a1 + a2 s + a3 s^2``, where ``s = x/L``.
        """
        E = L.shape[0]
        g = phi / 6.0
        A = np.zeros((E, 4, 4))
        A[:, 0, 0] = 1.0
        A[:, 1, 1] = 1.0
        A[:, 2, :] = np.stack([np.ones(E), np.ones(E), np.full(E, 0.5), 1.0 / 3.0 - g], axis=1)
        A[:, 3, 1:] = 1.0
        S = np.zeros((E, 4, 4))
        S[:, 0, 0] = 1.0
        S[:, 1, 1] = L
        S[:, 2, 2] = 1.0
        S[:, 3, 3] = L
        return np.asarray(np.linalg.solve(A, S), dtype=np.float64)

    def bending_shape(self, s: NDArray[np.float64], L: NDArray[np.float64],
                      plane: str = "xy") -> dict[str, NDArray[np.float64]]:
        """Interdependent bending shape functions of one plane.

        Parameters
        ----------
        s : ndarray, shape (q,)
            Abscissae ``x / L`` in [0, 1].
        L : ndarray, shape (E,)
            Element lengths [m].
        plane : {'xy', 'xz'}
            'xy': DOFs (v1, theta_z1, v2, theta_z2); 'xz': DOFs (w1, -theta_y1, w2, -theta_y2).

        Returns
        -------
        dict
            ``'v'`` deflection, ``'dv'`` slope dv/dx, ``'phi'`` section rotation,
            ``'dphi'`` curvature, ``'gamma'`` shear strain; each (E, q, 4) in terms of
            the generic DOFs (deflection, rotation phi, deflection, rotation phi).
        """
        s = np.asarray(s, float)
        L = np.asarray(L, float)
        phi = self.shear_parameter(L, plane)
        C = self._coeffs(L, phi)  # (E,4,4)
        g = (phi / 6.0)[:, None]
        one = np.ones((L.size, s.size))
        zero = np.zeros((L.size, s.size))
        S = np.broadcast_to(s, (L.size, s.size))
        pv = np.stack([one, S, S**2 / 2, S**3 / 3 - g * S], axis=-1)
        pdv = np.stack([zero, one, S, S**2 - g], axis=-1) / L[:, None, None]
        pphi = np.stack([zero, one, S, S**2], axis=-1) / L[:, None, None]
        pdphi = np.stack([zero, zero, one, 2 * S], axis=-1) / L[:, None, None] ** 2
        pgam = np.stack([zero, zero, zero, -g * one], axis=-1) / L[:, None, None]
        return {k: np.einsum("eqa,eaj->eqj", p, C)
                for k, p in (("v", pv), ("dv", pdv), ("phi", pphi), ("dphi", pdphi),
                             ("gamma", pgam))}

    # ------------------------------------------------------------------ local matrices
    def local_shape(self, s: NDArray[np.float64], L: NDArray[np.float64]
                    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Translation and rotation shape functions in the local frame.

        Parameters
        ----------
        s : ndarray, shape (q,)
            Abscissae ``x / L``.
        L : ndarray, shape (E,)
            Element lengths [m].

        Returns
        -------
        T, R : ndarray, shape (E, q, 3, 12)
            Local ``(u, v, w)`` and ``(theta_x, theta_y, theta_z)`` per local DOF.
        """
        E, q = L.size, np.size(s)
        T = np.zeros((E, q, 3, 12))
        R = np.zeros((E, q, 3, 12))
        lin = np.stack([1.0 - np.asarray(s), np.asarray(s)], axis=-1)  # (q, 2)
        T[:, :, 0, [0, 6]] = lin
        R[:, :, 0, [3, 9]] = lin
        bv = self.bending_shape(s, L, "xy")
        T[:, :, 1, list(_V_DOFS)] = bv["v"]
        R[:, :, 2, list(_V_DOFS)] = bv["phi"]
        bw = self.bending_shape(s, L, "xz")
        sgn = np.array([1.0, -1.0, 1.0, -1.0])  # generic phi = -theta_y
        T[:, :, 2, list(_W_DOFS)] = bw["v"] * sgn
        R[:, :, 1, list(_W_DOFS)] = -bw["phi"] * sgn
        return T, R

    def local_stiffness(self, L: NDArray[np.float64]) -> NDArray[np.float64]:
        """Element stiffness matrices in the local frame, shape (E, 12, 12) [N/m, N, N m]."""
        L = np.asarray(L, float)
        m, sec = self.material, self.section
        E = L.size
        K = np.zeros((E, 12, 12))
        ka = m.E * sec.A / L
        kt = m.shear_modulus * sec.J / L
        for (i, j), k in (((0, 6), ka), ((3, 9), kt)):
            K[:, i, i] += k
            K[:, j, j] += k
            K[:, i, j] -= k
            K[:, j, i] -= k
        s, w = gauss_segment(2)  # curvature linear, shear constant -> exact
        for plane, dofs, sgn in (("xy", _V_DOFS, np.array([1.0, 1.0, 1.0, 1.0])),
                                 ("xz", _W_DOFS, np.array([1.0, -1.0, 1.0, -1.0]))):
            EI, inv = self._plane(plane)
            b = self.bending_shape(s, L, plane)
            kGA = 0.0 if inv == 0.0 else 1.0 / inv
            Kb = EI * np.einsum("q,eqi,eqj->eij", w, b["dphi"], b["dphi"])
            if kGA > 0.0:
                Kb += kGA * np.einsum("q,eqi,eqj->eij", w, b["gamma"], b["gamma"])
            Kb *= L[:, None, None]
            Kb = Kb * sgn[None, :, None] * sgn[None, None, :]
            idx = np.array(dofs)
            K[:, idx[:, None], idx[None, :]] += Kb
        return 0.5 * (K + np.transpose(K, (0, 2, 1)))

    # ------------------------------------------------------------------ global matrices
    def stiffness(self, X: NDArray[np.float64], frames: NDArray[np.float64]
                  ) -> NDArray[np.float64]:
        """Element stiffness matrices in the body frame, shape (E, 12, 12).

        Parameters
        ----------
        X : ndarray, shape (E, 2, 3)
            Node coordinates [m].
        frames : ndarray, shape (E, 3, 3)
            Local axes (rows) from :meth:`frames`.
        """
        Kl = self.local_stiffness(self.measure(X))
        return block_rotate(Kl, frames)

    def mass_points(self, X: NDArray[np.float64], frames: NDArray[np.float64],
                    n_points: int = 4, local: bool = False) -> MassPoints:
        """Mass quadrature points (exact for the consistent mass with 4 points).

        Parameters
        ----------
        X : ndarray, shape (E, 2, 3)
            Node coordinates [m].
        frames : ndarray, shape (E, 3, 3)
            Local axes (rows).
        n_points : int
            Gauss points per element (4 integrates cubic x cubic exactly).
        local : bool
            Return shape functions, positions (from node 1) and second moments in
            the element frame instead of the body frame.
        """
        X = np.asarray(X, float)
        x1, x2 = X[:, 0], X[:, 1]
        L = self.measure(X)
        s, w = gauss_segment(n_points)
        Tl, Rl = self.local_shape(s, L)
        rho = self.material.rho
        sec = self.section
        weight = rho * sec.A * L[:, None] * w[None, :]
        Pl = np.diag([0.0, sec.Iz, sec.Iy]) * rho  # int rho d d^T per unit length
        lw = (L[:, None] * w[None, :])[:, :, None, None]
        if local:
            pos = np.zeros((L.size, s.size, 3))
            pos[:, :, 0] = L[:, None] * s[None, :]
            return MassPoints(weight=weight, position=pos, second_moment=Pl * lw, T=Tl, R=Rl)
        Ft = np.transpose(frames, (0, 2, 1))  # local -> body
        T = shape_to_body(Tl, frames)
        R = shape_to_body(Rl, frames)
        pos = x1[:, None, :] + s[None, :, None] * (x2 - x1)[:, None, :]
        P = np.einsum("eab,bc,edc->ead", Ft, Pl, Ft)
        P = P[:, None, :, :] * lw
        return MassPoints(weight=weight, position=pos, second_moment=P, T=T, R=R)

    def mass(self, X: NDArray[np.float64], frames: NDArray[np.float64],
             lumped: bool = False) -> NDArray[np.float64]:
        """Element mass matrices in the body frame, shape (E, 12, 12).

        Parameters
        ----------
        X : ndarray, shape (E, 2, 3)
            Node coordinates [m].
        frames : ndarray, shape (E, 3, 3)
            Local axes (rows).
        lumped : bool
            If True, HRZ (Hinton-Rock-Zienkiewicz) diagonal scaling of the local
            consistent matrix: translational diagonal terms scaled to the element
            mass per direction, the bending rotations of each plane scaled with the
            factor of their deflection, torsion scaled to ``rho Ip L``.
        """
        Ml = mass_from_points(self.mass_points(X, frames, local=True))
        if not lumped:
            return block_rotate(Ml, frames)
        L = self.measure(X)
        m = self.material.rho * self.section.A * L
        jt = self.material.rho * self.section.Ip * L
        d = np.einsum("eii->ei", Ml)
        D = np.zeros_like(d)
        for tr, rot in (((0, 6), ()), ((1, 7), (5, 11)), ((2, 8), (4, 10))):
            f = m / (d[:, tr[0]] + d[:, tr[1]])
            for i in tr + rot:
                D[:, i] = d[:, i] * f
        f = jt / (d[:, 3] + d[:, 9])
        D[:, 3] = d[:, 3] * f
        D[:, 9] = d[:, 9] * f
        Dm = np.zeros_like(Ml)
        idx = np.arange(12)
        Dm[:, idx, idx] = D
        return block_rotate(Dm, frames)

    def geometric_stiffness(self, X: NDArray[np.float64], frames: NDArray[np.float64],
                            resultants: NDArray[np.float64]) -> NDArray[np.float64]:
        """Geometric (stress) stiffness for a constant axial force per element.

        ``K_G = N int (v'^2 + w'^2) dx + N (Ip/A) int theta_x'^2 dx`` with the
        interdependent shape functions (tension ``N > 0`` stiffens).

        Parameters
        ----------
        X : ndarray, shape (E, 2, 3)
            Node coordinates [m].
        frames : ndarray, shape (E, 3, 3)
            Local axes (rows).
        resultants : ndarray, shape (E,) or (E, r)
            Axial force ``N`` per element [N], tension positive (first column of the
            resultants; the shear forces, torque and moments are not used).

        Returns
        -------
        ndarray, shape (E, 12, 12)
        """
        L = self.measure(X)
        r = np.asarray(resultants, float)
        N = np.broadcast_to(r if r.ndim <= 1 else r[:, 0], L.shape)
        s, w = gauss_segment(3)  # slopes are quadratic -> product quartic -> 3 points exact
        K = np.zeros((L.size, 12, 12))
        for plane, dofs, sgn in (("xy", _V_DOFS, np.array([1.0, 1.0, 1.0, 1.0])),
                                 ("xz", _W_DOFS, np.array([1.0, -1.0, 1.0, -1.0]))):
            b = self.bending_shape(s, L, plane)
            Kb = np.einsum("q,eqi,eqj->eij", w, b["dv"], b["dv"]) * L[:, None, None]
            Kb = Kb * sgn[None, :, None] * sgn[None, None, :]
            idx = np.array(dofs)
            K[:, idx[:, None], idx[None, :]] += Kb
        kt = self.section.Ip / self.section.A / L
        for i, j, v in ((3, 3, 1.0), (9, 9, 1.0), (3, 9, -1.0), (9, 3, -1.0)):
            K[:, i, j] += v * kt
        K *= N[:, None, None]
        return block_rotate(K, frames)

    def geometric_stiffness_basis(self, X: NDArray[np.float64], frames: NDArray[np.float64]
                                  ) -> NDArray[np.float64]:
        """Geometric stiffness per unit axial force: shape (E, 1, 12, 12)."""
        return self.geometric_stiffness(X, frames, np.ones(X.shape[0]))[:, None]

    def local_resultant_matrix(self, L: NDArray[np.float64]) -> NDArray[np.float64]:
        """Resultants ``(N, Vy, Vz, T, My, Mz)`` at mid-length per local DOF, (E, 6, 12).

        Parameters
        ----------
        L : ndarray, shape (E,)
            Element lengths [m].

        Notes
        -----
        The shear forces come from the equilibrium ``V = -EI phi''`` of the
        interdependent interpolation, equal to ``kGA gamma`` for a finite shear
        stiffness and still defined in the shear-rigid limit ``k = inf``.
        """
        L = np.asarray(L, float)
        m, sec = self.material, self.section
        B = np.zeros((L.size, 6, 12))
        ea, gj = m.E * sec.A / L, m.shear_modulus * sec.J / L
        B[:, 0, 0], B[:, 0, 6] = -ea, ea
        B[:, 3, 3], B[:, 3, 9] = -gj, gj
        mid = np.array([0.5])
        for plane, dofs, sgn, EI, rv, rm in (
                ("xy", _V_DOFS, np.array([1.0, 1.0, 1.0, 1.0]), m.E * sec.Iz, 1, 5),
                ("xz", _W_DOFS, np.array([1.0, -1.0, 1.0, -1.0]), m.E * sec.Iy, 2, 4)):
            C = self._coeffs(L, self.shear_parameter(L, plane))
            ddphi = 2.0 * C[:, 3, :] / L[:, None] ** 3  # phi'' (generic DOFs), constant
            dphi = self.bending_shape(mid, L, plane)["dphi"][:, 0, :]
            idx = list(dofs)
            if plane == "xy":  # phi = theta_z: Mz = EIz phi', Vy = -EIz phi''
                B[:, rm, idx] = EI * dphi * sgn
                B[:, rv, idx] = -EI * ddphi * sgn
            else:  # phi = -theta_y: My = -EIy phi', Vz = dMy/dx = -EIy phi''
                B[:, rm, idx] = -EI * dphi * sgn
                B[:, rv, idx] = -EI * ddphi * sgn
        return B

    def resultant_matrix(self, X: NDArray[np.float64], frames: NDArray[np.float64]
                         ) -> NDArray[np.float64]:
        """Map (E, 6, 12) from body-frame element DOFs to ``(N, Vy, Vz, T, My, Mz)``.

        Resultants at mid-length in the element frame [N, N m] (see the class notes).
        """
        Bl = self.local_resultant_matrix(self.measure(X))
        return np.asarray(np.matmul(Bl, block_rotation(frames, 2)), dtype=np.float64)

    def axial_force(self, X: NDArray[np.float64], frames: NDArray[np.float64],
                    u_e: NDArray[np.float64]) -> NDArray[np.float64]:
        """Axial force ``N = EA (u2 - u1)/L`` of each element [N] from element DOFs (E, 12)."""
        L = self.measure(X)
        ex = frames[:, 0, :]
        du = np.sum((u_e[:, 6:9] - u_e[:, 0:3]) * ex, axis=1)
        return np.asarray(self.material.E * self.section.A * du / L, dtype=np.float64)
