"""Constraint helpers for component authors: the circuit equations of a cut edge.

A chord (cotree edge) of the mechanism graph contributes its circuit equation projected
on its reaction space: the relative position and orientation its joint does not allow.
These helpers give the common projections as residual lists with readable labels
(the labels name the constraint in messages and in the mechanism report).
"""

from __future__ import annotations

from typing import Any

import casadi as cs
import numpy as np

from .base import Kinematics

__all__ = ["position_constraints", "orientation_constraints"]

_X, _Y, _Z = (cs.DM(v) for v in np.eye(3))


def position_constraints(ka: Kinematics, kb: Kinematics,
                         offset: Any = None) -> tuple[list[cs.SX], list[str]]:
    """``r_b = r_a + R_a offset`` (3 residuals, world components)."""
    d = kb.r - ka.r - (ka.R @ cs.DM(offset) if offset is not None else 0)
    return [d[0], d[1], d[2]], ["x position", "y position", "z position"]


def orientation_constraints(ka: Kinematics, kb: Kinematics,
                            R_rel: Any = None) -> tuple[list[cs.SX], list[str]]:
    """``R_b = R_a R_rel`` through three orthogonality conditions of the frame axes
    (valid near the aligned configuration, as every cut-joint constraint)."""
    Ra = ka.R if R_rel is None else ka.R @ R_rel
    return ([cs.dot(Ra @ _X, kb.R @ _Y), cs.dot(Ra @ _Y, kb.R @ _Z),
             cs.dot(Ra @ _Z, kb.R @ _X)],
            ["orientation xy", "orientation yz", "orientation zx"])
