"""The nodal domain pass: pin-jointed structures in the ordinary DAE pipeline.

The pass assembles the nodal system (:mod:`acausal.nodal.assemble`) on the Node
components' own variables and writes, for the structure stage and IDAS, the
Lagrange-multiplier form of the equations of motion::

    der(x) = v                                   (3 per node: kinematics)
    M(x) der(v) + A_I(x, t)^T lambda = F(x, v, t)  (3 per node: equations of motion)
    Phi_I(x, t) = 0                              (the independent constraints)

``A_I`` are the rows of the constraint matrix that are linearly independent at the start
configuration (pivoted QR, :data:`~acausal.nodal.system.RANK_RTOL`): redundant rows would
make the multiplier block singular, so they are removed, named in the report and announced
by a :class:`~acausal.errors.RedundantConstraintWarning`, after :mod:`acausal.redundancy`
has checked that they hold where the kept rows do and stay dependent near the start (a
singular start configuration is an error, or a ``ModelWarning`` when the structure has
genuine modes besides). The multiplier of a kept row is
the unknown ``<component>.lambda[k]`` (``k`` counts the component's kept rows); for a bar
it is the tension [N] (its row is a unit vector).

The pass object stays on the compiled model (``cm.domain_pass("pin")``): the null-space
integrator (:mod:`acausal.nodal.integrator`) builds its numeric system from it.
"""

from __future__ import annotations

import warnings
from typing import Any

import casadi as cs
import numpy as np

from ..component import Component, bind_port
from ..domain_passes import DomainEquation, DomainPass
from ..errors import (
    ModelDefinitionError,
    ModelWarning,
    RedundantConstraintWarning,
    TopologyError,
    user_stacklevel,
)
from ..redundancy import check_dropped_rows
from ..symbols import SymbolTable
from .assemble import NodalAssembly, assemble, node_start_values, pin_points
from .base import COORDINATES, VELOCITIES, NodalComponent
from .system import RANK_RTOL, ModeCount, NodalSystem, mode_count, null_space

__all__ = ["NodalPass", "NodalReport"]


class NodalReport:
    """What the nodal pass found (printable): nodes, elements, the independent-mode count
    of the start configuration (the paper's degree-of-freedom table) and the constraints
    removed from the DAE as redundant."""

    def __init__(self, n_nodes: int, elements: dict[str, int], modes: ModeCount,
                 removed: list[str]) -> None:
        self.n_nodes = n_nodes
        self.elements = elements
        self.modes = modes
        self.removed = removed

    @property
    def n_modes(self) -> int:
        return self.modes.n_modes

    def __str__(self) -> str:
        elems = ", ".join(f"{n} {k}" for k, n in sorted(self.elements.items()))
        lines = ["Nodal structure report", f"  nodes: {self.n_nodes}; elements: {elems}"]
        lines += ["  " + ln for ln in str(self.modes).splitlines()[1:]]
        if self.removed:
            lines.append(f"  removed from the DAE (redundant at the start): "
                         f"{len(self.removed)} constraint(s)")
        return "\n".join(lines)


class NodalPass(DomainPass):
    """Builds the equations of the pin-jointed components of a model (see the module
    documentation)."""

    domain_name = "pin"

    def __init__(self, symbols: SymbolTable, components: list[Component],
                 tree: list[Any] | None = None) -> None:
        super().__init__(symbols, components, tree)
        for c in components:
            if not isinstance(c, NodalComponent):
                raise TopologyError(
                    f"{c._describe()} has pin ports but is not a NodalComponent: pin ports "
                    "belong to the nodal components of components.nodal")
        self.assembly: NodalAssembly | None = None
        self.kept: list[int] = []
        self.removed: list[str] = []
        self.lambda_names: list[str] = []
        self._report: NodalReport | None = None
        self._systems: dict[bytes, NodalSystem] = {}

    # ------------------------------------------------------------------
    @staticmethod
    def _model_components(comps: list[Component]) -> list[Component]:
        """Every component of the model (the Gravity component has no pin, and the
        connections live on the enclosing models)."""
        root: Component | None = comps[0] if comps else None
        while root is not None and root._parent is not None:
            root = root._parent
        return list(root.walk()) if root is not None else []

    def assemble(self) -> list[DomainEquation]:
        tab = self.symbols
        comps = self._model_components(self.components)

        def node_symbols(nd: Component) -> tuple[cs.SX, cs.SX]:
            b = nd.__dict__["_binding"]
            return (cs.vertcat(*[b[k] for k in COORDINATES]),
                    cs.vertcat(*[b[k] for k in VELOCITIES]))

        asm = assemble(comps, tab.t, node_symbols, node_start_values)
        self.assembly = asm
        nodes = [c for c in comps if getattr(c, "is_node", False)]
        by_path = {nd._path_or_class(): nd for nd in nodes}

        # pins: position and velocity of their nodal point (for equations and results)
        pos = {path: (asm.x[3 * i: 3 * i + 3], asm.v[3 * i: 3 * i + 3])
               for i, path in enumerate(asm.node_names)}
        sets, _ = pin_points(comps)
        for ports in sets:
            node = next(p.owner for p in ports if getattr(p.owner, "is_node", False))
            r, v = pos[node._path_or_class()]
            for p in ports:
                bind_port(p, {"r": r, "v": v})
                tab.add_output(f"{p.path()}.r", r, "m")
                tab.add_output(f"{p.path()}.v", v, "m/s")

        # accelerations
        acc = cs.vertcat(*[tab.der(asm.v[i]) for i in range(asm.n)]) if asm.n else cs.SX(0, 1)
        for i, path in enumerate(asm.node_names):
            for k, ax in enumerate(("ax", "ay", "az")):
                tab.add_output(f"{path}.{ax}", acc[3 * i + k], "m/s2")

        # independent constraints at the start configuration
        self.kept = self._independent(asm)
        counters: dict[int, int] = {}
        lam = []
        for k in self.kept:
            owner = asm.owners[k]
            j = counters.get(id(owner), 0)
            counters[id(owner)] = j + 1
            name = f"{owner._path_or_class()}.lambda[{j}]"
            lam.append(tab.new_var(name, unit="N", origin=owner._path_or_class()))
            self.lambda_names.append(name)

        eqs: list[DomainEquation] = []
        for i, path in enumerate(asm.node_names):
            nd = by_path[path]
            for k, c in enumerate(COORDINATES):
                eqs.append(DomainEquation(tab.der(asm.x[3 * i + k]) == asm.v[3 * i + k], nd,
                                          f"kinematics: der({path}.{c}) = {path}.v{c}"))
        res = cs.mtimes(asm.M, acc) - asm.F
        if lam:
            Phi_I = cs.vertcat(*[asm.phi[k] for k in self.kept])
            res = res + cs.mtimes(cs.jacobian(Phi_I, asm.x).T, cs.vertcat(*lam))
        for i, path in enumerate(asm.node_names):
            nd = by_path[path]
            for k, c in enumerate(COORDINATES):
                eqs.append(DomainEquation(res[3 * i + k] == 0, nd,
                                          f"equation of motion of {path} ({c})"))
        for k in self.kept:
            eqs.append(DomainEquation(asm.phi[k] == 0, asm.owners[k],
                                      f"constraint {asm.labels[k]} == 0"))
        self._report = self._make_report(asm, comps)
        return eqs

    # ------------------------------------------------------------------
    def start_system(self) -> NodalSystem:
        """The numeric system with the parameters' default values."""
        tab = self.symbols
        return self.system(np.array([p.value for p in tab.parameters], dtype=float),
                           [p.name for p in tab.parameters])

    def system(self, values: np.ndarray, names: list[str]) -> NodalSystem:
        """The numeric nodal system for the parameter values ``values`` (by ``names``;
        parameters not named keep their default), cached per value set."""
        asm = self._need()
        tab = self.symbols
        given = dict(zip(names, np.asarray(values, dtype=float), strict=True))
        pv = np.array([given.get(p.name, p.value) for p in tab.parameters], dtype=float)
        key = pv.tobytes()
        if key not in self._systems:
            psym = cs.vertcat(*[p.sym for p in tab.parameters]) if tab.parameters else cs.SX(0, 1)
            self._systems[key] = NodalSystem(asm, psym, pv)
        return self._systems[key]

    def _need(self) -> NodalAssembly:
        if self.assembly is None:
            raise RuntimeError("the nodal pass has not assembled yet")
        return self.assembly

    def _independent(self, asm: NodalAssembly) -> list[int]:
        """Rows of the constraint matrix independent at the start configuration."""
        if not asm.phi:
            return []
        sysn = self.start_system()
        _, A, _ = sysn.kinematics(asm.x0, 0.0)
        _, _, rank, piv = null_space(A, RANK_RTOL)
        keep = sorted(int(i) for i in piv[:rank])
        dropped = sorted(set(range(len(asm.phi))) - set(keep))
        self.removed = [asm.labels[i] for i in dropped]
        if dropped:
            self._check_dropped(sysn, asm, keep, dropped)
        if self.removed:
            shown = "; ".join(self.removed[:6]) + (
                f"; ... ({len(self.removed) - 6} more)" if len(self.removed) > 6 else "")
            warnings.warn(
                f"{len(self.removed)} redundant constraint equation(s) of the pin-jointed "
                f"structure removed from the DAE (linearly dependent on the others at the "
                f"start configuration): {shown}",
                RedundantConstraintWarning, stacklevel=user_stacklevel())
        return keep

    @staticmethod
    def _check_dropped(sysn: NodalSystem, asm: NodalAssembly, keep: list[int],
                       dropped: list[int]) -> None:
        """A dependent row must hold where the independent ones do, and stay dependent
        near the start (:func:`acausal.redundancy.check_dropped_rows`): otherwise the
        constraints contradict each other, or the start configuration is singular."""
        scale = sysn.length_scale()

        def fun(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            Phi, A, _ = sysn.kinematics(x, 0.0)
            return Phi, A

        # the kept rows to 1e-12 of the extent (roundoff of the rows' O(1) scaling); a
        # dropped row off by 1e-6 of it is no roundoff
        found = check_dropped_rows(fun, asm.x0, keep, dropped, tol=1e-12 * scale,
                                   gap_tol=1e-6 * scale, scale=scale)
        if found.gaps:
            raise ModelDefinitionError(
                "constraints of the pin-jointed structure contradict each other: with the "
                "others satisfied, " + "; ".join(
                    f"{asm.labels[i]} has the residual {abs(r):.3g} m"
                    for i, r in list(found.gaps.items())[:5])
                + " (a bar length or a support that the rest of the structure does not "
                "allow; check the given lengths against the nodes' positions)")
        if found.singular:
            names = [asm.labels[i] for i in found.singular]  # "<component>: <row>"
            shown = "; ".join(names[:6]) + (f"; ... ({len(names) - 6} more)"
                                             if len(names) > 6 else "")
            one = len(names) == 1
            if found.locked:
                raise ModelDefinitionError(
                    "the start configuration of the pin-jointed structure is singular: "
                    f"{shown} {'depends' if one else 'depend'} on the other constraints "
                    "only in this configuration, not near it (bars on one line, a linkage "
                    "at a dead point), so the structure cannot move at all, but without "
                    f"{'it' if one else 'them'} the equations would let it move (and kept, "
                    f"{'it makes' if one else 'they make'} them singular). Move the nodes' "
                    "start positions out of the singular configuration (e.g. a node off the "
                    "line of its two bars)")
            warnings.warn(
                f"the start configuration of the pin-jointed structure is singular: {shown} "
                f"{'depends' if one else 'depend'} on the other constraints only in this "
                f"configuration, not near it, and {'is' if one else 'are'} removed from the "
                "DAE, which then holds " + ("it" if one else "them") + " to first order "
                "only: a motion that keeps " + ("it" if one else "them") + " by itself (a "
                "symmetric fold) is right, any other violates " + ("it" if one else "them")
                + " unnoticed. Move the start out of the singular configuration, or "
                "simulate with solver='nullspace', which keeps every constraint (the build "
                "says this before any solver is chosen: a run with that solver is right)",
                ModelWarning, stacklevel=user_stacklevel())

    def _make_report(self, asm: NodalAssembly, comps: list[Component]) -> NodalReport:
        elements: dict[str, int] = {}
        for c in comps:
            if isinstance(c, NodalComponent) and not c.is_node:
                name = type(c).__name__
                elements[name] = elements.get(name, 0) + 1
        sysn = self.start_system()
        _, A, _ = sysn.kinematics(asm.x0, 0.0)
        return NodalReport(len(asm.node_names), elements, mode_count(A, asm.labels),
                           list(self.removed))

    @property
    def report(self) -> NodalReport | None:
        return self._report

    def diagnose_initial_failure(self, start: dict[str, float], fixed: set[str],
                                 params: dict[str, float]) -> str | None:
        """Name the constraints the start configuration violates most."""
        asm = self.assembly
        if asm is None or not asm.phi:
            return None
        names = asm.coordinate_names
        x = np.array([start.get(n, v) for n, v in zip(names, asm.x0, strict=True)])
        tab = self.symbols
        pv = np.array([params.get(p.name, p.value) for p in tab.parameters], dtype=float)
        sysn = self.system(pv, [p.name for p in tab.parameters])
        Phi = sysn.phi(x, 0.0)
        worst = np.argsort(-np.abs(Phi))[:5]
        lines = [f"{asm.labels[i]}: residual {Phi[i]:.3g} m" for i in worst
                 if abs(Phi[i]) > 1e-6 * sysn.length_scale()]
        if not lines:
            return None
        return ("the start configuration of the pin-jointed structure violates its "
                "constraints: " + "; ".join(lines) + " (give the nodes consistent start "
                "positions, or leave bar lengths to be measured from them)")

