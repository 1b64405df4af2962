"""Assembly of the nodal system from pin-jointed components.

Pins connected together are one nodal point; each point holds exactly one ``Node``
component, whose coordinate and velocity symbols (the unknowns) the point's pins share.
Every element then contributes its mass blocks, constraints and forces through the hooks
of :class:`~acausal.nodal.base.NodalComponent`, evaluated on the pins' symbolic states.

The result, :class:`NodalAssembly`, holds the symbolic equations of motion in nodal
coordinates ``x`` (3 per node, node by node)::

    M(x) x'' = F(x, x', t) + A(x, t)^T lambda,     Phi(x, t) = 0,   A = dPhi/dx

where ``F`` gathers the applied forces, gravity (``M (1 x g)`` per mass block, the exact
nodal load of a uniform field) and the velocity-dependent inertial forces of rigid bodies.
It serves both solvers: the null-space Newmark integrator (:mod:`acausal.nodal.newmark`)
and the ordinary DAE pipeline (the domain pass writes the same equations with Lagrange
multipliers for IDAS).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import casadi as cs
import numpy as np

from ..component import Component, PortInstance
from ..errors import ModelDefinitionError, TopologyError
from ..topology import _UnionFind
from .base import COORDINATES, VELOCITIES, NodalComponent, PinDomain, PinState

__all__ = ["NodalAssembly", "assemble", "pin_points"]


@dataclass
class NodalAssembly:
    """Symbolic nodal system of a model (see the module documentation)."""

    t: cs.SX
    node_names: list[str]
    x: cs.SX  # (n,) coordinates, node by node (x, y, z)
    v: cs.SX  # (n,) velocities
    x0: np.ndarray  # start values
    v0: np.ndarray
    M: cs.SX  # (n, n)
    F: cs.SX  # (n,)
    phi: list[cs.SX]  # scalar constraint residuals
    labels: list[str]  # "<component path>: <label>"
    owners: list[Component]
    gravity: np.ndarray
    mass_labels: list[str] = field(default_factory=list)

    @property
    def n(self) -> int:
        return int(self.x.numel())

    @property
    def coordinate_names(self) -> list[str]:
        return [f"{nd}.{c}" for nd in self.node_names for c in COORDINATES]


def pin_points(comps: list[Component]) -> tuple[list[list[PortInstance]], dict[int, int]]:
    """Connection sets of pin ports (nodal points) and the point index of every pin
    (``comps``: all components of the model, whose connections are read)."""
    pins = [p for c in comps for p in c.ports().values() if p.domain is PinDomain]
    pid = {id(p): k for k, p in enumerate(pins)}
    uf = _UnionFind(len(pins))
    for c in comps:
        for conn in c._connections:
            if conn[0].domain is not PinDomain:
                continue
            for p in conn[1:]:
                if id(p) in pid and id(conn[0]) in pid:
                    uf.union(pid[id(conn[0])], pid[id(p)])
    rep: dict[int, int] = {}
    sets: list[list[PortInstance]] = []
    index: dict[int, int] = {}
    for k, p in enumerate(pins):
        r = uf.find(k)
        if r not in rep:
            rep[r] = len(sets)
            sets.append([])
        sets[rep[r]].append(p)
        index[id(p)] = rep[r]
    return sets, index


def assemble(comps: list[Component], t: cs.SX,
             node_symbols: Callable[[Component], tuple[cs.SX, cs.SX]],
             node_start: Callable[[Component], tuple[np.ndarray, np.ndarray]]
             ) -> NodalAssembly:
    """Assemble the nodal system of the pin-jointed components among ``comps``.

    Parameters
    ----------
    comps : all components of the model (the nodal ones are picked)
    t : the time symbol
    node_symbols : ``node -> (r, v)``, the coordinate and velocity symbols (3-vectors) of a
        Node component (bound by the caller, the flattener or a standalone binder)
    node_start : ``node -> (r0, v0)``, their numeric start values

    Raises
    ------
    TopologyError
        A nodal point without a Node, or with two.
    """
    nodal = [c for c in comps if isinstance(c, NodalComponent)]
    sets, index = pin_points(comps)
    owner_node: list[Component | None] = [None] * len(sets)
    for k, ports in enumerate(sets):
        nodes = [p.owner for p in ports if getattr(p.owner, "is_node", False)]
        if len(nodes) > 1:
            raise TopologyError(
                "nodal point joins two Nodes, " + " and ".join(n._path_or_class() for n in nodes)
                + ": a nodal point is one Node; connect the elements' pins to one of them")
        if not nodes:
            names = ", ".join(p.path() for p in ports)
            raise TopologyError(
                f"the pins {names} are not connected to a Node: every nodal point needs one "
                "components.nodal.Node (it holds the point's coordinates), e.g. "
                f"self.connect({ports[0].path()}, node.pin)")
        owner_node[k] = nodes[0]
    node_list = [c for c in nodal if getattr(c, "is_node", False)]
    node_pos = {id(nd): i for i, nd in enumerate(node_list)}
    syms = [node_symbols(nd) for nd in node_list]
    starts = [node_start(nd) for nd in node_list]
    n = 3 * len(node_list)
    x = cs.vertcat(*[s[0] for s in syms]) if syms else cs.SX(0, 1)
    v = cs.vertcat(*[s[1] for s in syms]) if syms else cs.SX(0, 1)
    x0 = np.concatenate([s[0] for s in starts]) if starts else np.zeros(0)
    v0 = np.concatenate([s[1] for s in starts]) if starts else np.zeros(0)

    def states(c: Component) -> dict[str, PinState]:
        out = {}
        for name, p in c.ports().items():
            if p.domain is not PinDomain:
                continue
            nd = owner_node[index[id(p)]]
            assert nd is not None  # every point has its Node (checked above)
            i = node_pos[id(nd)]
            out[name] = PinState(syms[i][0], syms[i][1], starts[i][0], nd._path_or_class())
        return out

    def dofs(c: Component, pin_names: list[str]) -> list[int]:
        cp = c.ports()
        out = []
        for name in pin_names:
            i = node_pos[id(owner_node[index[id(cp[name])]])]
            out += [3 * i, 3 * i + 1, 3 * i + 2]
        return out

    gravities = [(c, c.gravity_vector()) for c in nodal if c.gravity_vector() is not None]
    if len(gravities) > 1:
        raise ModelDefinitionError(
            "two gravity fields: " + ", ".join(c._path_or_class() for c, _ in gravities)
            + "; keep one Gravity component")
    g = np.asarray(gravities[0][1], dtype=float) if gravities else np.zeros(3)
    gvec = cs.DM(g)

    M = cs.SX.zeros(n, n)
    F = cs.SX.zeros(n)
    phi: list[cs.SX] = []
    labels: list[str] = []
    owners: list[Component] = []
    mass_labels: list[str] = []
    for c in nodal:
        pins = states(c)
        if not pins:
            continue
        path = c._path_or_class()
        for blk in c.nodal_mass(pins):
            idx = dofs(c, blk.pins)
            k = len(blk.pins)
            Mb = cs.SX(blk.M)
            if Mb.shape != (3 * k, 3 * k):
                raise ModelDefinitionError(f"{c._describe()}: mass block {blk.label!r} has "
                                           f"shape {Mb.shape}, expected {(3 * k, 3 * k)}")
            M[idx, idx] = M[idx, idx] + Mb
            fb = Mb @ cs.repmat(gvec, k, 1) if np.any(g) else cs.SX.zeros(3 * k)
            if blk.q is not None:
                fb = fb + blk.q
            F[idx] = F[idx] + fb
            mass_labels.append(f"{path}: {blk.label}")
        for res, lab in c.nodal_constraints(pins, t):
            phi.append(cs.SX(res))
            labels.append(f"{path}: {lab}")
            owners.append(c)
        for pin, f in c.nodal_forces(pins, t):
            idx = dofs(c, [pin])
            F[idx] = F[idx] + cs.SX(f)
    return NodalAssembly(t=t, node_names=[nd._path_or_class() for nd in node_list], x=x, v=v,
                         x0=x0, v0=v0, M=M, F=F, phi=phi, labels=labels, owners=owners,
                         gravity=g, mass_labels=mass_labels)


class _StandaloneBinder:
    """Binds the parameters and node variables of nodal components to fresh symbols (the
    flattener's job inside ``ac.build``), for a nodal system outside the DAE pipeline."""

    def __init__(self, comps: list[Component], t: cs.SX) -> None:
        self.t = t
        self.p_syms: list[cs.SX] = []
        self.p_names: list[str] = []
        self.p_values: list[float] = []
        self.node_syms: dict[int, tuple[cs.SX, cs.SX]] = {}
        for c in comps:
            path = c.path()
            prefix = f"{path}." if path else ""
            b: dict[str, Any] = {}
            for name, value in c.__dict__["_params"].items():  # its own, not a model's
                decl = getattr(type(c), name)
                if value is None:  # (a parameter that follows others: read through them)
                    continue
                if decl.structural:
                    b[name] = value
                elif callable(value):
                    b[name] = cs.SX(value(t))
                else:
                    s = cs.SX.sym(prefix + name)
                    self.p_syms.append(s)
                    self.p_names.append(prefix + name)
                    self.p_values.append(float(value))
                    b[name] = s
            variables = c.variables()
            if getattr(c, "is_node", False):
                for name in COORDINATES + VELOCITIES:
                    b[name] = cs.SX.sym(prefix + name)
                self.node_syms[id(c)] = (cs.vertcat(*[b[k] for k in COORDINATES]),
                                         cs.vertcat(*[b[k] for k in VELOCITIES]))
            elif variables:
                raise ModelDefinitionError(
                    f"{c._describe()} has variables of its own; a standalone nodal system "
                    "takes nodal components only (build mixed models with ac.build)")
            c.__dict__["_binding"] = b

    def release(self, comps: list[Component]) -> None:
        for c in comps:
            c.__dict__["_binding"] = None


def node_start_values(node: Component) -> tuple[np.ndarray, np.ndarray]:
    """Start position and velocity of a Node component (its variables' start values)."""
    var = node.variables()
    return (np.array([float(var[k].start) for k in COORDINATES]),
            np.array([float(var[k].start) for k in VELOCITIES]))
