"""The finite-element protocol: what assembly needs from an element, and nothing more.

Every element type is one class deriving from :class:`Element` and registered for the
mesh class it discretises (``@register_element(BeamMesh)``). :class:`FEModel` looks the
element up once from the mesh (:func:`element_for_mesh`) and from then on talks to it
only through this interface, vectorised over a batch of ``E`` elements:

==========================================  ============================================
``frames(X)``                               element frames (E, 3, 3) from node coordinates
``stiffness(X, frames)``                    K (E, n, n) in the body frame
``mass(X, frames, lumped)``                 consistent or HRZ-lumped M (E, n, n)
``mass_points(X, frames)``                  quadrature description of the mass (invariants)
``resultant_matrix(X, frames)``             (E, r, n): element DOFs -> stress resultants
``stress_resultants(X, frames, ue)``        (E, r) resultants of element DOFs ``ue``
``geometric_stiffness(X, frames, s)``       K_G (E, n, n) of pre-stress resultants ``s``
``geometric_stiffness_basis(X, frames)``    (E, p, n, n): K_G per unit resultant
``distributed_load(X, frames, t, lumped)``  load vector (E, n) of a uniform traction ``t``
``body_force(X, frames, a)``                load vector (E, n) of the field ``rho a``
``measure(X)``                              length [m] or area [m^2] (E,)
==========================================  ============================================

``X`` has shape (E, k, 3): the body-frame coordinates [m] of the ``k`` nodes of each
element; ``n = 6 k`` (DOFs ``ux, uy, uz, rx, ry, rz`` per node, body frame). Data an
element needs beyond ``X`` (a beam's orientation vectors, a section, a thickness) is
taken from the mesh and the user's properties once, by :meth:`Element.from_mesh`.

A new element is one file: subclass :class:`Element`, implement the abstract methods,
register it for its mesh class; the contract test (``tests/flexible/
test_element_contract.py``) then checks symmetry, rigid-body modes, mass and frame
invariance for it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Callable, ClassVar, TypeVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .errors import FEError
from .fields import MassPoints
from .materials import Material
from .mesh import Mesh

__all__ = ["Element", "element_for_mesh", "register_element", "registered_elements"]

_REGISTRY: dict[type[Mesh], type["Element"]] = {}

E_ = TypeVar("E_", bound=type["Element"])


def register_element(mesh_class: type[Mesh]) -> Callable[[E_], E_]:
    """Class decorator: ``element_class`` discretises meshes of ``mesh_class``.

    Parameters
    ----------
    mesh_class : type
        A :class:`~components.flexible.mesh.Mesh` subclass.
    """
    def deco(element_class: E_) -> E_:
        if element_class.nodes_per_element != mesh_class.nodes_per_element:
            raise TypeError(f"{element_class.__name__} has {element_class.nodes_per_element} "
                            f"nodes, {mesh_class.__name__} elements have "
                            f"{mesh_class.nodes_per_element}")
        _REGISTRY[mesh_class] = element_class
        return element_class
    return deco


def registered_elements() -> dict[type[Mesh], type["Element"]]:
    """Mesh class -> element class, for every registered element (a copy)."""
    return dict(_REGISTRY)


def element_for_mesh(mesh: Mesh) -> type["Element"]:
    """Element class registered for the class of ``mesh`` (or its nearest base class).

    Raises
    ------
    FEError
        No element is registered for this kind of mesh.
    """
    for cls in type(mesh).__mro__:
        if cls in _REGISTRY:
            return _REGISTRY[cls]
    names = sorted(c.__name__ for c in _REGISTRY)
    raise FEError(f"no finite element is registered for {type(mesh).__name__}; use one of "
                  f"{names} (or register an element class with @register_element)")


class Element(ABC):
    """Interface of a finite element (vectorised over a batch of elements).

    Class attributes
    ----------------
    nodes_per_element : int
        Nodes ``k`` per element.
    dofs_per_node : int
        Always 6: ``(ux, uy, uz, rx, ry, rz)`` in the body frame.
    dimension : int
        1 for line elements (distributed loads in N/m), 2 for surface elements (N/m^2,
        pressure along the element normal ``frames[:, 2]``).
    resultant_names : tuple of str
        Names of the stress resultants returned by :meth:`stress_resultants`.
    resultant_units : tuple of str
        Their units.
    prestress_components : int
        The leading resultants that :meth:`geometric_stiffness` uses.
    """

    nodes_per_element: ClassVar[int] = 0
    dofs_per_node: ClassVar[int] = 6
    dimension: ClassVar[int] = 0
    resultant_names: ClassVar[tuple[str, ...]] = ()
    resultant_units: ClassVar[tuple[str, ...]] = ()
    prestress_components: ClassVar[int] = 0

    material: Material

    @property
    def n_dofs(self) -> int:
        """DOFs per element ``6 k``."""
        return self.dofs_per_node * self.nodes_per_element

    # ------------------------------------------------------------------ construction
    @classmethod
    @abstractmethod
    def from_mesh(cls, mesh: Mesh, material: Material, **properties: Any) -> "Element":
        """Element for every element of ``mesh`` with the user's properties.

        Parameters
        ----------
        mesh : Mesh
            The mesh (extra per-element data such as beam orientation vectors is read here).
        material : Material
            Elastic material.
        **properties
            ``section`` (beams), ``thickness`` and ``drilling_factor`` (shells); a property
            the element does not use must be ``None``.
        """

    # ------------------------------------------------------------------ geometry
    @abstractmethod
    def frames(self, X: NDArray[np.float64]) -> NDArray[np.float64]:
        """Element frames (E, 3, 3), rows = element axes in the body frame.

        Parameters
        ----------
        X : ndarray, shape (E, k, 3)
            Node coordinates [m].
        """

    @abstractmethod
    def measure(self, X: NDArray[np.float64]) -> NDArray[np.float64]:
        """Length [m] (line elements) or area [m^2] (surface elements) of each element (E,)."""

    @property
    @abstractmethod
    def mass_per_measure(self) -> float:
        """Mass per unit length ``rho A`` [kg/m] or per unit area ``rho h`` [kg/m^2]."""

    # ------------------------------------------------------------------ matrices
    @abstractmethod
    def stiffness(self, X: NDArray[np.float64], frames: NDArray[np.float64]
                  ) -> NDArray[np.float64]:
        """Element stiffness matrices (E, n, n) in the body frame [N/m, N, N m]."""

    @abstractmethod
    def mass(self, X: NDArray[np.float64], frames: NDArray[np.float64],
             lumped: bool = False) -> NDArray[np.float64]:
        """Element mass matrices (E, n, n) in the body frame, consistent or HRZ-lumped."""

    @abstractmethod
    def mass_points(self, X: NDArray[np.float64], frames: NDArray[np.float64]) -> MassPoints:
        """Mass quadrature points (consistent mass distribution, body frame)."""

    @abstractmethod
    def resultant_matrix(self, X: NDArray[np.float64], frames: NDArray[np.float64]
                         ) -> NDArray[np.float64]:
        """Map (E, r, n) from body-frame element DOFs to the stress resultants.

        The resultants (:attr:`resultant_names`) are evaluated at the element centre, in
        the element frame.
        """

    @abstractmethod
    def geometric_stiffness(self, X: NDArray[np.float64], frames: NDArray[np.float64],
                            resultants: NDArray[np.float64]) -> NDArray[np.float64]:
        """Geometric (stress) stiffness (E, n, n) of pre-stress resultants.

        Parameters
        ----------
        X : ndarray, shape (E, k, 3)
            Node coordinates [m].
        frames : ndarray, shape (E, 3, 3)
            Element frames.
        resultants : ndarray, shape (E, r') with r' >= prestress_components
            Resultants in the order of :attr:`resultant_names` (only the first
            :attr:`prestress_components` are used), tension positive.
        """

    @abstractmethod
    def geometric_stiffness_basis(self, X: NDArray[np.float64], frames: NDArray[np.float64]
                                  ) -> NDArray[np.float64]:
        """Geometric stiffness per unit pre-stress resultant, (E, p, n, n).

        ``geometric_stiffness(X, frames, s) == sum_i s[:, i] * basis[:, i]`` for the
        ``p = prestress_components`` leading resultants (K_G is linear in them); used to
        tabulate many load cases at the cost of one.
        """

    # ------------------------------------------------------------------ derived (generic)
    def stress_resultants(self, X: NDArray[np.float64], frames: NDArray[np.float64],
                          ue: NDArray[np.float64]) -> NDArray[np.float64]:
        """Stress resultants (E, r) of body-frame element DOFs ``ue`` (E, n) [m, rad].

        Units: :attr:`resultant_units`.
        """
        B = self.resultant_matrix(X, frames)
        return np.asarray(np.einsum("erj,ej->er", B, np.asarray(ue, float)), dtype=np.float64)

    def distributed_load(self, X: NDArray[np.float64], frames: NDArray[np.float64],
                         traction: ArrayLike, lumped: bool = False) -> NDArray[np.float64]:
        """Load vectors (E, n) of a traction uniform over each element.

        Parameters
        ----------
        X : ndarray, shape (E, k, 3)
            Node coordinates [m].
        frames : ndarray, shape (E, 3, 3)
            Element frames.
        traction : array_like, shape (3,) or (E, 3)
            Force per unit length [N/m] (line elements) or per unit area [N/m^2]
            (surface elements), body components.
        lumped : bool
            False: consistent load ``int N^T t`` with the element's displacement
            interpolation (the same fields as the consistent mass, so nodal moments
            appear). True: the resultant ``t * measure`` split equally over the ``k``
            nodes as forces, no moments.

        Returns
        -------
        ndarray, shape (E, n)
            Body-frame element load vectors [N, N m].
        """
        E = X.shape[0]
        t = np.broadcast_to(np.asarray(traction, float), (E, 3))
        if not np.all(np.isfinite(t)):
            raise FEError("distributed load: the traction must be finite (N/m or N/m^2)")
        if lumped:
            k = self.nodes_per_element
            share = t * (self.measure(X) / k)[:, None]
            out = np.zeros((E, k, 6))
            out[:, :, 0:3] = share[:, None, :]
            return out.reshape(E, 6 * k)
        w, T = self.load_points(X, frames)
        return np.asarray(np.einsum("eq,eqaj,ea->ej", w, T, t), dtype=np.float64)

    def load_points(self, X: NDArray[np.float64], frames: NDArray[np.float64]
                    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Quadrature for consistent distributed loads: weights and translation shapes.

        Returns
        -------
        weights : ndarray, shape (E, q)
            Quadrature weights times the element measure [m or m^2].
        T : ndarray, shape (E, q, 3, n)
            Body-frame translation shape functions at the points.

        Notes
        -----
        Default: the mass points (exact for a uniform traction, whose integrand is of
        lower degree than the mass); an element may override it with a cheaper rule.
        """
        mp = self.mass_points(X, frames)
        return mp.weight / self.mass_per_measure, mp.T

    def body_force(self, X: NDArray[np.float64], frames: NDArray[np.float64],
                   acceleration: ArrayLike) -> NDArray[np.float64]:
        """Consistent load vectors (E, n) of the body-force field ``rho a`` [N, N m].

        Parameters
        ----------
        acceleration : array_like, shape (3,)
            Uniform acceleration field ``a`` in the body frame [m/s^2] (gravity: ``g``).
        """
        mp = self.mass_points(X, frames)
        a = np.asarray(acceleration, float).ravel()
        return np.asarray(np.einsum("eq,eqaj,a->ej", mp.weight, mp.T, a), dtype=np.float64)
