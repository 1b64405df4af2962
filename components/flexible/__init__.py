"""Finite-element preprocessor for flexible bodies (floating frame of reference).

Elements (behind one :class:`Element` protocol, looked up from the mesh class): 2-node
3D Timoshenko beam (exact interdependent interpolation, no shear locking) and 3-node
flat shell (DKT bending + Allman drilling membrane). Meshes with named node sets, sparse
vectorised assembly, static and modal solution, reference conditions (clamped, pinned,
free), modal / Craig-Bampton / nodal reduction, Kelvin-Voigt / Rayleigh damping, FFRF
inertia invariants, unit-load geometric stiffening data, loads and stress resultants in
the elastic coordinates.

The preprocessor imports only ``acausal.errors`` from the compiler (its error root); the
multibody component that uses its data, :class:`FlexibleBody`
(``components/flexible/flexible_body.py``), is exported here too. SI units throughout.

Example
-------
>>> from components.flexible import Material, ShellMesh, FlexibleBodyData
>>> mesh = ShellMesh.rectangle(2.0, 2.0, 4, 4, "union_jack", plane="xz")
>>> body = FlexibleBodyData.from_mesh(mesh, Material.steel(), thickness=0.003,
...                                   modes=4, reduction="fixed", fixed_nodes="x0")
>>> body.frequencies.round(3).tolist()
[0.649, 1.614, 3.994, 5.087]
"""

from __future__ import annotations

from .assembly import (
    COMPONENTS,
    FEModel,
    assemble_matrix,
    assemble_vector,
    element_dofs,
    kelvin_voigt_damping,
    rayleigh_damping,
    solve_static,
)
from .beam import TimoshenkoBeam3D, beam_frames
from .body_data import Attachment, FlexibleBodyData, clear_cache
from .element import Element, element_for_mesh, register_element, registered_elements
from .errors import FEError
from .fields import MassPoints, mass_from_points
from .flexible_body import DistributedLoad, FlexibleBody, PointLoad, PressureLoad
from .invariants import Invariants, compute_invariants
from .linalg import GEOMETRY_RTOL, skew
from .materials import Material, Section
from .mesh import BeamMesh, Mesh, ShellMesh
from .modal import (
    CraigBampton,
    Modes,
    craig_bampton,
    eigenmodes,
    free_interface_modes,
    modal_damping_ratios,
)
from .plot import plot_mesh, plot_mode, plot_modes
from .reference import ReferenceCondition, StaticSolver
from .shell import DKTShell, shell_frames
from .stiffening import GeometricStiffening, geometric_stiffening

__all__ = [
    "COMPONENTS",
    "DistributedLoad",
    "PointLoad",
    "PressureLoad",
    "GEOMETRY_RTOL",
    "Attachment",
    "BeamMesh",
    "CraigBampton",
    "DKTShell",
    "Element",
    "FEError",
    "FEModel",
    "FlexibleBody",
    "FlexibleBodyData",
    "GeometricStiffening",
    "Invariants",
    "MassPoints",
    "Material",
    "Mesh",
    "Modes",
    "ReferenceCondition",
    "Section",
    "ShellMesh",
    "StaticSolver",
    "TimoshenkoBeam3D",
    "assemble_matrix",
    "assemble_vector",
    "beam_frames",
    "clear_cache",
    "compute_invariants",
    "craig_bampton",
    "eigenmodes",
    "element_dofs",
    "element_for_mesh",
    "free_interface_modes",
    "geometric_stiffening",
    "kelvin_voigt_damping",
    "mass_from_points",
    "modal_damping_ratios",
    "plot_mesh",
    "plot_mode",
    "plot_modes",
    "rayleigh_damping",
    "register_element",
    "registered_elements",
    "shell_frames",
    "skew",
    "solve_static",
]
