"""The mechanism pass: 3D multibody equations by graph-theoretic branch coordinates.

Source: Richard (2012) sections 2-3 (linear graph, tree, branch coordinates, virtual work
terminal equations, cotree joints as projected circuit equations); McPhee (1998).

1. *Graph.* Vertices are frame connection sets, the datum is the world frame; the edges come
   from the components' ``mb_edges``. The spanning tree follows the chapter's order
   (:class:`~acausal.multibody.base.MBPriority`), overridable with ``build(tree=...)``.
2. *Branch coordinates.* The coordinates of tree edges (joint angles and displacements,
   6-DOF coordinates of a body edge in the tree). Walking the tree from the world gives every
   frame's position ``r``, orientation ``R`` (products of relative rotations, exact),
   velocity ``v`` and angular velocity ``w``; accelerations follow by one forward-mode
   derivative of all velocities.
3. *Constraints.* Each cotree joint's circuit equation, projected on its reaction space, is a
   constraint ``Phi(q) = 0`` with a Lagrange multiplier (its reaction). Constraints that are
   linearly dependent on the others (a planar loop modelled in 3D) are detected by the rank
   of ``Phi_q`` at the start configuration and removed; :attr:`Mechanism.removed` names them.
   A dependent row that the others leave violated (a loop that cannot close) or that is
   independent near the start (a singular start) is no redundant row
   (:mod:`acausal.redundancy`). The rank is judged at the start values once they close
   the loops (:meth:`Mechanism._assembled` moves the guesses), and every run checks the
   removed rows on its output points (:meth:`Mechanism.check_closure`: a loop that opens
   after a singular start is named).
4. *Equations of motion by virtual power* (equivalent to virtual work with branch
   coordinates): for every virtual speed ``du``, ``sum(F . v(du) + M . w(du)) +
   lambda . Phi_dot(du) = 0`` over all applied and d'Alembert wrenches; the residual is the
   gradient with respect to ``du`` (one reverse sweep), so ``M(q)`` is symmetric and the
   quadratic velocity terms come from automatic differentiation.

The equations join the flat system, so the structure stage (Pantelides, dummy derivatives
with dynamic state selection) reduces the index of closed loops like any other model. A
loop that its drivers over-determine (more prescribed motions than its mobility; any
driver on a locked loop) is structurally singular: the structure stage refuses it before
index reduction, and :meth:`Mechanism.explain_structural_singularity` adds the loop, its
coordinates, independent closure equations and mobility to the message.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

import casadi as cs
import numpy as np

from ..component import DATUM, Component, PortInstance, TreePriority, bind_port
from ..domain_passes import DomainEquation, DomainPass, StateCoordinates
from ..errors import (
    ConnectionError_,
    ModelDefinitionError,
    ModelWarning,
    RedundantConstraintWarning,
    SolverWarning,
    TopologyError,
    user_stacklevel,
)
from ..graph import _not_in_model
from ..redundancy import check_dropped_rows, satisfy_rows
from ..symbols import SymbolTable
from ..topology import Topology, _UnionFind
from .articulated import TreeEdgeDynamics, articulated_accelerations, edge_motion_world
from .base import EdgeRole, Kinematics, MultibodyComponent
from .rotations import quat_product, skew

__all__ = ["Mechanism", "MechanismReport"]

_CLOSURE_TOL = 1e-6  # m or rad: a loop that misses by more cannot close


@dataclass
class MechanismReport:
    """Counts and choices of the mechanism pass (printable)."""

    n_bodies: int
    n_branch_coordinates: int
    n_speeds: int
    n_constraints: int
    n_removed: int
    dof: int
    tree: list[str]
    cotree: list[str]
    removed: list[str] = field(default_factory=list)
    cartesian_coordinates: int = 0
    cartesian_constraints: int = 0
    dynamics: str = "virtual power"
    fallback_reason: str = ""
    #: coordinates whose start guesses were moved to close the loops (:meth:`Mechanism._assembled`)
    assembled: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        lines = [
            "Mechanism report",
            f"  bodies: {self.n_bodies}; branch coordinates: {self.n_branch_coordinates} "
            f"({self.n_speeds} speeds)",
            f"  constraints: {self.n_constraints} independent"
            + (f", {self.n_removed} redundant removed" if self.n_removed else ""),
            f"  degrees of freedom: {self.dof}",
            f"  Cartesian formulation of the same model: {self.cartesian_coordinates} "
            f"coordinates, {self.cartesian_constraints} constraints",
            "  equations of motion: " + ("recursive (articulated body)"
                                          if self.dynamics == "recursive" else self.dynamics),
            "  tree:   " + ", ".join(self.tree),
            "  cotree: " + (", ".join(self.cotree) or "(none)"),
        ]
        for r in self.removed:
            lines.append(f"  removed redundant constraint: {r}")
        if self.assembled:
            lines.append("  start guesses moved to close the loops: "
                         + ", ".join(self.assembled))
        if self.fallback_reason and self.dynamics != "recursive":
            lines.append(f"  not recursive: {self.fallback_reason}")
        return "\n".join(lines)


@dataclass
class _Edge:
    """A joint or body edge of the mechanism graph."""

    comp: MultibodyComponent
    initial: Any
    final: Any
    priority: int
    role: EdgeRole
    name: str


class Mechanism(DomainPass):
    """Builds the multibody equations for the frame-connected components of a model."""

    domain_name = "frame"

    def __init__(self, symbols: SymbolTable, comps: list[Component],
                 tree: list[Any] | None = None) -> None:
        super().__init__(symbols, comps, tree)
        for c in comps:
            if not isinstance(c, MultibodyComponent):
                raise TopologyError(
                    f"{c._describe()} has frame ports but is not a MultibodyComponent: "
                    "frame ports belong to 3D multibody components "
                    "(acausal.multibody.base.MultibodyComponent)")
        self.comps: list[MultibodyComponent] = list(comps)  # type: ignore[arg-type]
        worlds = [c._path_or_class() for c in self.comps if getattr(c, "is_world", False)]
        if len(worlds) > 1:  # (only the first one's gravity and options would count)
            raise TopologyError(
                f"the model has {len(worlds)} World components ({', '.join(worlds[:6])}); a "
                "mechanism has one inertial frame, with one gravity field and one dynamics= "
                "option: keep one World and connect every frame fixed in space to its "
                "frame_b (or through FixedTranslation arms)")
        self._report: MechanismReport | None = None
        self._constraints: tuple[list[cs.SX], list[str], list[Component], list[cs.SX]] = (
            [], [], [], [])
        ports = [p for c in comps for p in c.ports().values() if not p.domain.graph]
        self.ports = ports
        pid = {id(p): k for k, p in enumerate(ports)}
        uf = _UnionFind(len(ports))
        for c in self._connection_owners(comps):
            for conn in c._connections:
                if conn[0].domain.graph:
                    continue
                for p in conn:
                    if id(p) not in pid:  # (a port of a component no longer in the model)
                        raise ConnectionError_(_not_in_model(c, p))
                for p in conn[1:]:
                    uf.union(pid[id(conn[0])], pid[id(p)])
        rep_vertex: dict[int, int] = {}
        self.port_vertex: dict[int, int] = {}
        self.vertex_ports: list[list[PortInstance]] = []
        for k, p in enumerate(ports):
            r = uf.find(k)
            if r not in rep_vertex:
                rep_vertex[r] = len(self.vertex_ports)
                self.vertex_ports.append([])
            self.port_vertex[id(p)] = rep_vertex[r]
            self.vertex_ports[rep_vertex[r]].append(p)
        self.datum = len(self.vertex_ports)
        self.edges: list[_Edge] = []
        for c in self.comps:
            cp = c.ports()
            for e in c.mb_edges:
                ends = [self.datum if x is DATUM else self.port_vertex[id(cp[x])]
                        for x in (e.initial, e.final)]
                label = f"{c._path_or_class()}"
                self.edges.append(_Edge(c, ends[0], ends[1], e.priority, e.role, label))
        forced = []
        if tree is not None:
            for item in tree:
                forced += [k for k, e in enumerate(self.edges)
                           if e.comp is item or e.name == item]
        self.topo = Topology(self.datum + 1, [(e.initial, e.final) for e in self.edges],
                             {self.datum}, priorities=[e.priority for e in self.edges],
                             forced=forced)
        if self.topo.floating:
            names = [p.path() for v in self.topo.floating[0] if v < self.datum
                     for p in self.vertex_ports[v]]
            raise TopologyError(
                "the frames " + ", ".join(names[:8]) + " are not connected to the world: "
                "connect them through joints to components.multibody.World, or give the "
                "body a free motion"
            )
        self._check_frames_connected()
        self.removed: list[str] = []
        self.assembled: list[str] = []  # (start guesses moved by _assembled)
        self._quaternions: list[list[str]] = []  # (the tree's quaternion coordinates)
        #: the removed rows themselves (residual, label, cut joint): checked on results
        self._removed_rows: list[tuple[cs.SX, str, Component]] = []
        #: the branch coordinates of each tree edge, by name (set by :meth:`assemble`)
        self._edge_coordinates: dict[int, list[str]] = {}
        self.dynamics = "virtual power"  # or "recursive" (set by assemble)
        self.fallback_reason = ""  # why the recursive form was not used

    def _check_frames_connected(self) -> None:
        """A joint moves one frame relative to another: both must be connected to something
        (a joint with a free side has no mass on it, a singular model). The free end of an
        arm is allowed: it is a point of its body."""
        has_world = any(getattr(c, "is_world", False) for c in self.comps)
        for e in self.edges:
            if e.role is not EdgeRole.JOINT:
                continue
            for end in (e.initial, e.final):
                if end == self.datum or len(self.vertex_ports[end]) > 1:
                    continue
                port = self.vertex_ports[end][0]
                if port.owner is not e.comp and port.owner._parent is e.comp:
                    continue  # an inner port of the component itself (flexible attachments)
                hint = ("" if has_world else
                        " The model has no World (the inertial frame and gravity): add "
                        "components.multibody.World() and connect its frame_b to the frame "
                        "that is fixed in space.")
                raise TopologyError(
                    f"frame {port.path()} is connected to nothing: {e.comp._describe()} acts "
                    "between two frames, connect it to the World's frame_b (fixed base) or "
                    "to a body or another joint." + hint)

    def _loop_edges(self, chord: int) -> list[int]:
        """The edges around the fundamental loop of a chord: the chord, then the tree
        path from its initial to its final vertex."""
        topo = self.topo
        a, b = self.edges[chord].initial, self.edges[chord].final
        up_a, up_b = [], []
        while a != b:
            if topo.depth[a] >= topo.depth[b]:
                up_a.append(int(topo.parent_edge[a]))
                a = int(topo.parent[a])
            else:
                up_b.append(int(topo.parent_edge[b]))
                b = int(topo.parent[b])
        return [chord, *up_a, *reversed(up_b)]

    def _loop(self, chord: int) -> list[str]:
        """The names of the edges around the fundamental loop of a chord (tree path +
        chord)."""
        names: list[str] = []
        for k in self._loop_edges(chord):
            if self.edges[k].name not in names:
                names.append(self.edges[k].name)
        return names

    def explain_structural_singularity(self, equations: list[Any], excess: int
                                       ) -> str | None:
        """The over-determined part of a structurally singular model in the mechanism's
        terms, when it holds closure equations of cut joints (called by the structure
        stage, :func:`acausal.structure.diagnostics.domain_explanations`): the loops they
        close, their joint coordinates, independent closure equations and mobility, and
        the components outside the mechanism in the part (drivers of its joints). None
        when the part holds no closure equation.

        The closure equations kept are independent (:meth:`_independent`), so a loop
        alone is never over-determined: what over-determines it is what acts on its
        joints from outside, more prescribed motions than its mobility (two speed
        drivers on a one-degree-of-freedom four-bar; one on a locked loop)."""
        _, _, comps, _ = self._constraints
        cut_paths = {c._path_or_class() for c in comps}
        named = {e.origin for e in equations
                 if e.origin in cut_paths and e.text().startswith("constraint ")}
        if not named:
            return None
        chords = [k for k in self.topo.cotree if self.edges[k].name in named]
        coords: list[str] = []
        for k in chords:
            for j in self._loop_edges(k)[1:]:
                for name in self._edge_coordinates.get(j, []):
                    if name not in coords:
                        coords.append(name)
        kept = sum(1 for c in comps if c._path_or_class() in named)
        removed = [r for r in self.removed if r.split(": ", 1)[0] in named]
        mechanism = {c._path_or_class() for c in self.comps}
        outside = sorted({e.origin for e in equations if e.origin not in mechanism})
        dof = len(coords) - kept
        one = len(chords) == 1
        loops = "; ".join(" - ".join(self._loop(k)) for k in chords)
        text = (f"In the mechanism: the kinematic loop{'' if one else 's'} closed by the cut "
                f"joint{'' if one else 's'} {', '.join(self.edges[k].name for k in chords)} "
                f"({loops}) {'has' if one else 'have'} {_count(len(coords), 'joint coordinate')}"
                f" ({', '.join(coords[:8])}{', ...' if len(coords) > 8 else ''}) and "
                f"{_count(kept, 'independent closure equation')}"
                + (f" ({_count(len(removed), 'redundant one')} removed)" if removed else "")
                + ": ")
        if dof == 0:
            text += ("mobility 0, a locked loop that cannot move at all: its joint axes "
                     "leave it no motion (a prismatic guide out of the plane of a planar "
                     "loop; revolute axes not all parallel: a loop of four revolutes moves "
                     "only if its axes are parallel, meet in one point, or form a Bennett "
                     "linkage)")
        else:
            text += f"mobility {dof} ({_count(dof, 'degree')} of freedom)"
        if outside:
            text += (f"; the equations of {', '.join(outside)} prescribe motions of its "
                     f"joints, {_count(excess, 'equation')} more than the loop can satisfy. ")
            text += (f"Prescribe at most {_count(dof, 'motion')} of the loop's joints (remove "
                     "a driver, or let a driven joint be free)" if dof else
                     "A locked loop can follow no prescribed motion: remove the driver, or, "
                     "if the loop should move, check its joint axes (n) and arm vectors (r)")
        else:
            text += (f"; the part's equations fix {_count(excess, 'motion')} more than the "
                     "loop can follow: if it should move, check its joint axes (n) and arm "
                     "vectors (r)")
        return text + "."

    def diagnose_initial_failure(self, start: dict[str, float], fixed: set[str],
                                 params: dict[str, float]) -> str | None:
        """Whether the kinematic loops can close with the fixed coordinates: the position
        constraints alone are solved in the least-squares sense over the coordinates
        without a fixed start; a miss means the geometry cannot close."""
        constraints, labels, comps, q = self._constraints
        if not constraints:
            return None
        from scipy.optimize import least_squares

        Phi = cs.vertcat(*constraints)
        qnames = {s.name() for s in q}
        syms = cs.symvar(Phi)
        free = [s for s in syms if s.name() in qnames and s.name() not in fixed]
        known = [s for s in syms if not (s.name() in qnames and s.name() not in fixed)]
        f = cs.Function("phi", [cs.vertcat(*free) if free else cs.SX(0, 1),
                                cs.vertcat(*known) if known else cs.SX(0, 1)], [Phi])
        kv = np.array([start.get(s.name(), params.get(s.name(), 0.0)) for s in known])
        v0 = np.array([start.get(s.name(), 0.0) for s in free])

        def residual(v: np.ndarray) -> np.ndarray:
            return np.asarray(f(v, kv)).ravel()

        if free:
            sol = least_squares(residual, v0, xtol=1e-14, ftol=1e-14, gtol=1e-14)
            r, v = residual(sol.x), sol.x
        else:
            r, v = residual(v0), v0
        bad = [k for k in range(len(r)) if abs(r[k]) > _CLOSURE_TOL]
        if not bad:
            guesses = ", ".join(f"{s.name()!r}: {x:.6g}" for s, x in zip(free, v, strict=True)
                                if abs(x - start.get(s.name(), 0.0)) > 1e-6)
            return ("the kinematic loops can close, but Newton did not reach a closed "
                    "configuration from the start values; a closed one is near "
                    + (f"start={{{guesses}}}" if guesses else "the start values")
                    + " (pass these to simulate(start=...) or as guesses)")
        fixed_used = sorted(s.name() for s in known if s.name() in qnames)
        by_chord: dict[str, list[int]] = {}
        for k in bad:
            by_chord.setdefault(comps[k]._path_or_class(), []).append(k)
        parts = []
        for name, rows in by_chord.items():
            chord = next(k for k in self.topo.cotree if self.edges[k].name == name)
            misses = ", ".join(
                f"{abs(r[k]):.3g} {'m' if 'position' in labels[k] else 'rad'} in "
                f"{labels[k].split(': ', 1)[-1]!r}" for k in rows[:4])
            parts.append(f"the loop closed by the cut joint {name} ("
                         + " - ".join(self._loop(chord)) + f") cannot close: {misses}")
        return ("the mechanism's geometry cannot close: " + "; ".join(parts)
                + (f" (with the fixed start values of {', '.join(fixed_used)})"
                   if fixed_used else "")
                + ". Check the link lengths, the joint positions and the fixed joint "
                "angles.")

    @staticmethod
    def _connection_owners(comps: list[Component]) -> list[Component]:
        """Every component of the model that may hold connections: the root model and its
        sub-models are not frame components, so walk up from the frame components."""
        seen: dict[int, Component] = {}
        for c in comps:
            node: Component | None = c
            while node is not None:
                seen.setdefault(id(node), node)
                node = node._parent
        return list(seen.values())

    @property
    def report(self) -> MechanismReport | None:
        return self._report

    # ------------------------------------------------------------------
    def assemble(self) -> list[DomainEquation]:
        """Kinematics, frame bindings and all mechanism equations."""
        fl = self.symbols
        topo = self.topo
        eqs: list[DomainEquation] = []
        zero3 = cs.SX.zeros(3)
        kin: dict[int, Kinematics] = {self.datum: Kinematics(zero3, cs.SX.eye(3), zero3, zero3,
                                                             Q=_Q_IDENTITY)}
        q_all: list[cs.SX] = []
        u_all: list[cs.SX] = []
        qdot_all: list[cs.SX] = []
        for k in topo.tree:
            e = self.edges[k]
            if e.role is EdgeRole.FORCE:
                raise TopologyError(
                    f"{e.name} is a force element but had to be a tree branch: a part of the "
                    "mechanism hangs on force elements only; give its body a FreeMotion or "
                    "connect it by joints"
                )
        internal = []
        owners: list[Component] = []  # the component each speed belongs to
        for c in self.comps:
            im = c.internal_motion()
            if im is not None:
                internal.append((c, im))
                q_all += im.q
                u_all += im.u
                owners += [c] * len(im.u)
                qdot_all.append(im.qdot)
        motions: dict[int, Any] = {}
        for v in topo.order:
            if v == self.datum or topo.parent[v] < 0:
                continue
            k = int(topo.parent_edge[v])
            e = self.edges[k]
            if k not in motions:
                motions[k] = e.comp.tree_motion()
                m = motions[k]
                q_all += m.q
                u_all += m.u
                owners += [e.comp] * len(m.u)
                qdot_all.append(m.qdot)
            m = motions[k]
            self._edge_coordinates[k] = [s.name() for s in m.q]
            parent = kin[int(topo.parent[v])]
            args = [_dense(x) for x in (parent.r, parent.R, parent.v, parent.w, m.r_rel,
                                        m.R_rel, m.v_rel, m.w_rel)]
            # the orientation quaternion (for the chords' definitions) in the same call: a
            # product of the edges' Q_rel along the tree path (smooth in the coordinates, no
            # branch choice), left None below an edge that gives none
            if parent.Q is not None and m.Q_rel is not None:
                r, R, vel, w, Q = _WALK[e.final == v, True](*args, parent.Q, m.Q_rel)
                kin[v] = Kinematics(r, R, vel, w, Q=Q)
            else:
                kin[v] = Kinematics(*_WALK[e.final == v, False](*args))
        for v in range(self.datum):
            if v not in kin:
                kin[v] = Kinematics(zero3, cs.SX.eye(3), zero3, zero3)
        q = cs.vertcat(*q_all) if q_all else cs.SX(0, 1)
        u = cs.vertcat(*u_all) if u_all else cs.SX(0, 1)
        qdot = cs.vertcat(*qdot_all) if qdot_all else cs.SX(0, 1)
        udot = cs.vertcat(*[fl.der(s) for s in u_all]) if u_all else cs.SX(0, 1)
        # the equations of motion and the frames' definitions depend on (nearly) every
        # coordinate of the tree: the structure stage keeps that incidence implicit
        coords = StateCoordinates(frozenset(s.name() for s in q_all + u_all))

        # accelerations of every frame: one forward-mode sweep over all velocities
        verts = list(range(self.datum))
        V = cs.vertcat(*[x for v in verts for x in (kin[v].v, kin[v].w)]) if verts \
            else cs.SX(0, 1)
        if verts and u.numel():
            X = cs.vertcat(q, u, fl.t)
            Xd = cs.vertcat(qdot, udot, cs.SX(1))
            A = cs.jtimes(V, X, Xd)
        else:
            A = cs.SX.zeros(V.shape)
        if verts:
            pieces = cs.vertsplit(A, 3)
            for n, v in enumerate(verts):
                kin[v].a, kin[v].z = pieces[2 * n], pieces[2 * n + 1]

        # bind frame ports (for equations and results)
        for p in self.ports:
            kv = kin[self.port_vertex[id(p)]]
            bind_port(p, {"r": kv.r, "R": kv.R, "v": kv.v, "w": kv.w, "a": kv.a,
                          "z": kv.z})
            pp = p.path()
            for key in ("r", "R", "v", "w", "a", "z"):
                fl.add_output(f"{pp}.{key}", getattr(kv, key))

        # component and tree coordinates: kinematic differential equations
        for c, im in internal:
            for qs, qd in zip(im.q, cs.vertsplit(im.qdot), strict=True):
                eqs.append(DomainEquation(fl.der(qs) == qd, c))
        for k, m in motions.items():
            c = self.edges[k].comp
            for qs, qd in zip(m.q, _split(m.qdot, len(m.q)), strict=True):
                eqs.append(DomainEquation(fl.der(qs) == qd, c))

        # chords: definitions and constraints
        constraints: list[cs.SX] = []
        labels: list[tuple[str, Component]] = []
        for k in topo.cotree:
            e = self.edges[k]
            ka = kin[e.initial]
            kb = kin[e.final]
            ce = e.comp.cut(ka, kb)
            for d in ce.definitions:
                eqs.append(DomainEquation(d, e.comp, coordinates=coords))
            for res, lab in zip(ce.constraints, ce.labels, strict=True):
                constraints.append(res)
                labels.append((f"{e.name}: {lab}", e.comp))
        if constraints:  # (their scale is free: _assembled keeps them unit quaternions)
            self._quaternions = _quaternion_groups(motions.values())
        constraints, labels = self._independent(constraints, labels, q, u, qdot)
        self._constraints = (constraints, [lab for lab, _ in labels],
                             [c for _, c in labels], list(q_all))

        # multipliers of the cut joints
        du = cs.SX.sym("du", u.numel()) if u.numel() else cs.SX(0, 1)
        gravity = self._gravity()
        wr_kin = {id(p): kin[self.port_vertex[id(p)]] for p in self.ports}
        power = cs.SX(0)  # virtual power of what is not a frame wrench
        if constraints:
            Phi = cs.vertcat(*constraints)
            qd_du = cs.substitute(qdot, u, du)
            Phi_dot = cs.jtimes(Phi, q, qd_du)
            lam: list[cs.SX] = []
            for n, (_lab, comp) in enumerate(labels):
                sym = fl.new_var(f"{comp._path_or_class()}.lambda[{n}]", 1, unit="",
                                 origin=comp._path_or_class())
                lam.append(sym)
            power = power + cs.dot(cs.vertcat(*lam), Phi_dot)
            for res, (lab, comp) in zip(constraints, labels, strict=True):
                eqs.append(DomainEquation(res == 0, comp, f"constraint {lab} == 0"))
        kmaps = {}
        for c in self.comps:
            kmap = {name: wr_kin[id(p)] for name, p in c.ports().items() if id(p) in wr_kin}
            kmaps[id(c)] = kmap
            for speeds, Q in c.generalized_forces(kmap, gravity):
                power = power + cs.dot(Q, cs.substitute(speeds, u, du))
            for name, expr in c.result_outputs(kmap).items():
                fl.add_output(f"{c._path_or_class()}.{name}", expr, c.result_unit(name))
        self._check_forces(kmaps, gravity, coords.names)

        # equations of motion: recursive where the mechanism allows it, else virtual power
        self.dynamics, self.fallback_reason = "virtual power", ""
        recursive = None
        option = self._dynamics_option()
        if u.numel() and option == "auto" and constraints:
            cut = sorted({comp._path_or_class() for _lab, comp in labels})
            self.fallback_reason = (
                f"closed kinematic loop (cut joint{'s' if len(cut) > 1 else ''} "
                f"{', '.join(cut[:4])}); World(dynamics='recursive') to force it")
        elif u.numel() and option != "virtual_power":
            tau = cs.gradient(power, du) if power.numel() else cs.SX.zeros(u.shape)
            tau = cs.substitute(tau, du, cs.SX.zeros(du.shape))  # power is linear in du
            recursive, why = self._articulated(kin, motions, u_all, tau, udot, internal,
                                               gravity)
            if recursive is None:
                self.fallback_reason = why
                if option == "recursive":
                    raise TopologyError(
                        f"the recursive (articulated-body) dynamics cannot be used: {why}; "
                        "use World(dynamics='auto') or 'virtual_power'")
        if recursive is not None:
            self.dynamics = "recursive"
            for sym, owner, (expr, residual) in zip(u_all, owners, recursive, strict=True):
                if residual:  # a prescribed joint: the equation determines its force
                    eqs.append(DomainEquation(
                        expr == 0, owner, f"equation of motion along {sym.name()} "
                        "(articulated body, motion prescribed)", coords))
                else:
                    eqs.append(DomainEquation(
                        fl.der(sym) == expr, owner,
                        f"equation of motion along {sym.name()} (articulated body)", coords))
        elif u.numel():
            for c in self.comps:
                kmap = kmaps[id(c)]
                for port, F, M in c.wrenches(kmap, gravity):
                    kv = kmap[port]
                    power = power + cs.dot(F, cs.substitute(kv.v, u, du)) + cs.dot(
                        M, cs.substitute(kv.w, u, du))
            R_dyn = cs.gradient(power, du)
            for sym, owner, res in zip(u_all, owners, cs.vertsplit(R_dyn), strict=True):
                eqs.append(DomainEquation(
                    res == 0, owner, f"equation of motion along {sym.name()} (virtual power)",
                    coords))
        self._report = self._make_report(q_all, u_all, constraints)
        return eqs

    def _check_forces(self, kmaps: dict[int, dict[str, Kinematics]], gravity: cs.SX,
                      coordinates: frozenset[str]) -> None:
        """Raise a :class:`~acausal.errors.ModelDefinitionError` naming a force element
        whose force is not a number at the start values (a line force whose frames
        coincide: its direction is 0/0). The run would fail at t = 0 naming the joint
        whose equation of motion the force enters, not the element. Only forces given by
        the branch coordinates, speeds and parameters are judged (another unknown's start
        value is a guess the initialisation replaces)."""
        parts = [(c, port, cs.vertcat(F, M)) for c in self.comps
                 if any(e.role is EdgeRole.FORCE for e in c.mb_edges)
                 for port, F, M in c.wrenches(kmaps[id(c)], gravity)]
        index = self.symbols.index
        parts = [p for p in parts if not any(s.name() in index and s.name() not in coordinates
                                             for s in cs.symvar(p[2]))]
        if not parts:
            return
        W = cs.vertcat(*[w for _, _, w in parts])
        syms = cs.symvar(W)
        X = cs.vertcat(*syms) if syms else cs.SX(0, 1)
        vals = [float(self.symbols.value(s)) for s in syms]  # type: ignore[arg-type]
        ends = np.cumsum([int(w.numel()) for _, _, w in parts])
        bad = np.flatnonzero(~np.isfinite(np.asarray(cs.Function("W", [X], [W])(vals))
                                          .ravel()))
        if not len(bad):
            return
        c, port, _ = parts[int(np.searchsorted(ends, bad[0], side="right"))]
        text = (f"{c._describe()}: its force on {port} is not a number at the start values "
                "(an expression of it is undefined there")
        kmap = kmaps[id(c)]
        if "frame_a" in kmap and "frame_b" in kmap:
            d = float(np.linalg.norm(np.asarray(cs.Function(
                "d", [X], [kmap["frame_b"].r - kmap["frame_a"].r])(vals))))
            if d == 0.0:
                text += (": its frames' origins coincide, and the direction of a force "
                         "along the line between them is 0/0 there). Start the mechanism "
                         "with the frames apart, or, for a spring, give it s_unstretched=0 "
                         "and no damping (a zero-length spring's force c (r_b - r_a) needs "
                         "no direction)")
                raise ModelDefinitionError(text)
        raise ModelDefinitionError(text + "); check its parameters and the start values")

    def _dynamics_option(self) -> str:
        """``World(dynamics=...)``: "auto" (default), "recursive" or "virtual_power"."""
        worlds = [c for c in self.comps if getattr(c, "is_world", False)]
        return str(getattr(worlds[0], "dynamics", "auto")) if worlds else "auto"

    def _articulated(self, kin: dict[int, Kinematics], motions: dict[int, Any],
                     u_all: list[cs.SX], tau: cs.SX, udot: cs.SX,
                     internal: list[Any], gravity: cs.SX) -> tuple[list[cs.SX] | None, str]:
        """The speeds' derivatives by the articulated-body algorithm
        (:mod:`acausal.multibody.articulated`), in the order of ``u_all``; or None and the
        reason when the mechanism has something the recursion does not handle."""
        if internal:
            names = ", ".join(c._path_or_class() for c, _ in internal[:3])
            return None, f"{names} has coordinates of its own (internal_motion)"
        topo = self.topo
        # frame wrenches at placeholder kinematics: W_v = -M_v A_v + b_v
        verts = list(dict.fromkeys(self.port_vertex[id(p)] for c in self.comps
                                   for p in c.ports().values() if id(p) in self.port_vertex))
        ph: dict[int, Kinematics] = {}  # (made for the first component that needs them)
        wrench: dict[int, tuple[cs.SX, cs.SX]] = {}  # vertex -> (F, M)
        given: dict[int, list[tuple[cs.SX, cs.SX]]] = {}  # vertex -> [(M_v, b_v)]
        for c in self.comps:
            ports = {name: p for name, p in c.ports().items() if id(p) in self.port_vertex}
            # (a component that gives its wrenches split needs no derivative of them)
            parts = c.wrench_parts({name: kin[self.port_vertex[id(p)]]
                                    for name, p in ports.items()}, gravity) if ports else None
            if parts is not None:
                for port, Mv, b in parts:
                    given.setdefault(self.port_vertex[id(ports[port])], []).append((Mv, b))
                continue
            if not ph:
                ph_list, ph_blocks, A_all = _placeholders(len(verts))
                ph = dict(zip(verts, ph_list, strict=True))
            kmap = {name: ph[self.port_vertex[id(p)]] for name, p in ports.items()}
            for port, F, M in c.wrenches(kmap, gravity):
                v = self.port_vertex[id(c.ports()[port])]
                others = [_acc(k) for k in kmap.values() if k is not ph[v]]
                if others and cs.depends_on(cs.vertcat(F, M), cs.vertcat(*others)):
                    return None, "a frame wrench depends on the acceleration of another frame"
                wrench[v] = (wrench[v][0] + F, wrench[v][1] + M) if v in wrench else (F, M)
        # the tree edges' relative motion in the parent's axes: J_loc = S_loc u
        edges_v = [v for v in topo.order if v != self.datum and topo.parent[v] >= 0]
        speed_index = {s.name(): i for i, s in enumerate(u_all)}
        Js, ds, qs, qds = [], [], [], []
        for v in edges_v:
            m = motions[int(topo.parent_edge[v])]
            d, Jv, Jw = _relative_motion(m, self.edges[int(topo.parent_edge[v])].final == v)
            Js += [Jv, Jw]
            ds.append(d)
            qs += m.q
            qds.append(m.qdot)
        # everything derived at once (linear cost, a few CasADi calls)
        J_all = cs.vertcat(*Js) if Js else cs.SX(0, 1)
        S_all = cs.jacobian(J_all, cs.vertcat(*u_all))
        q_vec = cs.vertcat(*qs) if qs else cs.SX(0, 1)
        qd_vec = cs.vertcat(*qds) if qds else cs.SX(0, 1)
        Jd_all = cs.jtimes(J_all, q_vec, qd_vec) if qs else cs.SX.zeros(J_all.shape)
        # (few CasADi calls per frame: their Python overhead dominates a long chain's build)
        inertia: dict[int, cs.SX] = {}
        bias: dict[int, cs.SX] = {}
        free_of_udot = [tau]  # (what must not depend on the speeds' derivatives)
        vs = list(wrench)
        if vs:
            W_all = cs.vertcat(*[x for v in vs for x in wrench[v]])
            # each frame's wrench depends on its own acceleration only (checked above): one
            # directional derivative per acceleration component gives every M_v at once (a
            # Jacobian with respect to all accelerations would cost a sparsity sweep per 64
            # of them, quadratic in the number of frames)
            JW = cs.jtimes(W_all, A_all, cs.repmat(cs.DM.eye(6), len(verts), 1))
            if cs.depends_on(JW, A_all):
                return None, "a frame wrench is not affine in the frame's acceleration"
            b_all = cs.substitute(W_all, A_all, cs.SX.zeros(A_all.shape))
            # placeholders -> the tree walk's kinematics (one substitution for everything)
            vals = [cs.densify(cs.horzcat(*[getattr(kin[v], key) for v in verts]))
                    for key in ("r", "R", "v", "w")]
            JW, b_all = cs.substitute([JW, b_all], ph_blocks, vals)
            inertia = dict(zip(vs, cs.vertsplit(-JW, 6), strict=True))
            bias = dict(zip(vs, cs.vertsplit(b_all, 6), strict=True))
            free_of_udot.append(b_all)
        for v, pairs in given.items():
            for Mv, b in pairs:
                inertia[v] = inertia[v] + Mv if v in inertia else Mv
                bias[v] = bias[v] + b if v in bias else b
                free_of_udot += [cs.vec(Mv), b]
        if cs.depends_on(cs.vertcat(*free_of_udot), udot):
            return None, "a force depends on the derivatives of the speeds"
        parents = [int(topo.parent[v]) for v in edges_v]
        idxs = [[speed_index[s.name()] for s in motions[int(topo.parent_edge[v])].u]
                for v in edges_v]
        world = _edge_geometry(kin, parents, ds, S_all, Jd_all, cs.vertcat(*u_all), idxs)
        geometry: dict[int, tuple[int, Any, cs.SX, cs.SX, cs.SX, list[int]]] = {
            v: (p, motions[int(topo.parent_edge[v])], *dsc, idx)
            for v, p, dsc, idx in zip(edges_v, parents, world, idxs, strict=True)}
        order = [v for v in topo.order if v == self.datum or topo.parent[v] >= 0]
        axis_joint = {v: self.edges[int(topo.parent_edge[v])].comp for v in geometry
                      if getattr(self.edges[int(topo.parent_edge[v])].comp,
                                 "use_axis_flange", False)}
        prescribed = {v for v, c in axis_joint.items() if self._kinematically_driven(c)}
        taus = _split(tau, len(u_all))
        for _attempt in range(2):
            edge_of = {}
            for v, (p, m, d, S, cvec, idx) in geometry.items():
                pres = cs.vertcat(*[self.symbols.der(s) for s in m.u]) if v in prescribed \
                    else None
                edge_of[v] = TreeEdgeDynamics(p, v, d, S, cvec,
                                              _column([taus[i] for i in idx]), pres)
            res = articulated_accelerations(order, edge_of, inertia, bias)
            massless = self._massless(res.inertias)
            if not massless:
                break
            for v in massless:  # (a joint whose motion only the joints below it cancel)
                if v not in axis_joint:
                    self._check_coupled(v, geometry, inertia, kin, prescribed, u_all)
            if any(v not in axis_joint for v in massless) or _attempt:
                joints = sorted({self.edges[int(topo.parent_edge[v])].name for v in massless})
                return None, (f"the joint(s) {', '.join(joints)} move no mass (their "
                              "joint-space inertia vanishes)")
            prescribed |= set(massless)  # massless axis joints: driven through the axis
        self._check_singular_inertia(res.inertias, geometry, u_all, inertia, kin, prescribed)
        out: list[tuple[cs.SX, bool] | None] = [None] * len(u_all)
        for v, ud in res.accelerations.items():
            for i, e in zip(geometry[v][5], _split(ud, len(geometry[v][5])), strict=True):
                out[i] = (e, False)
        for v, r in res.residuals.items():
            for i, e in zip(geometry[v][5], _split(r, len(geometry[v][5])), strict=True):
                out[i] = (e, True)
        if any(e is None for e in out):
            return None, "some speeds belong to no tree edge"
        return out, ""  # type: ignore[return-value]

    def _kinematically_driven(self, joint: Component) -> bool:
        """Whether a 1D across source (``Position``, ``Speed``...) acts directly on the
        joint's axis flange: its motion is then prescribed, and the recursion computes
        the driving force instead of the acceleration."""
        axis = joint.ports().get("axis")
        if axis is None:
            return False
        members = {id(axis)}
        owners = self._connection_owners(list[Component](self.comps))
        conns = [conn for c in owners for conn in c._connections
                 if conn[0].domain is axis.domain]
        grown = True
        while grown:  # the connection set of the axis flange
            grown = False
            for conn in conns:
                ids = {id(p) for p in conn}
                if ids & members and not ids <= members:
                    members |= ids
                    grown = True
        for conn in conns:
            for port in conn:
                if id(port) not in members or port.owner is joint:
                    continue
                for e in getattr(port.owner, "edges", []):
                    if (e.initial is DATUM and e.final == port.name
                            and e.priority == TreePriority.ACROSS_SOURCE):
                        return True
        return False

    def _massless(self, inertias: dict[int, cs.SX]) -> list[int]:
        """Edges whose joint-space inertia vanishes (nothing with mass moves with them):
        evaluated at the parameter values and generic coordinates, speeds and forces (a
        golden-ratio sequence in [0.5, 1.5): no value a simple multiple of another, and no
        numpy.random, ~10 ms of a cold script's import)."""
        if not inertias:
            return []
        keys = list(inertias)
        D = cs.vertcat(*[x if x.size2() == 1 else cs.vec(x) for x in inertias.values()])
        syms = cs.symvar(D)
        vals = 0.5 + (np.arange(1, len(syms) + 1) * 0.6180339887498949) % 1.0
        params = {q.name: q.value for q in self.symbols.parameters}
        for i, sy in enumerate(syms):
            vals[i] = params.get(sy.name(), vals[i])
        f = cs.Function("D", [cs.vertcat(*syms) if syms else cs.SX(0, 1)], [D])
        Dn = np.asarray(f(vals)).ravel()
        out, pos = [], 0
        scale = max(float(np.abs(Dn).max()), 1e-300)
        for v in keys:
            n = int(inertias[v].numel())
            block = Dn[pos:pos + n]
            pos += n
            if np.abs(block).max() <= 1e-12 * scale:
                out.append(v)
        return out

    def _check_singular_inertia(self, inertias: dict[int, cs.SX], geometry: dict[int, Any],
                                u_all: list[cs.SX], frame_inertia: dict[int, cs.SX],
                                kin: dict[int, Kinematics], prescribed: set[int]) -> None:
        """A tree joint with a motion that moves no mass (a point mass spinning on a ball
        joint, a free body without inertia): its joint-space inertia ``D`` (n x n, the
        articulated inertia seen along its motion subspace) is singular at the start
        configuration, so its acceleration is undefined there. Where that motion moves
        joints below this one too (a revolute about the rod of a ball joint), they are
        named together (:meth:`_check_coupled`). (A joint that moves no mass at all is
        found by :meth:`_massless`; a joint with one speed is singular only then, or when
        joints below it cancel its motion, which :meth:`_check_coupled` names from there;
        a singularity in a closed loop is not looked for.)"""
        # (one speed: D is a number, zero only where the joint moves no mass at all)
        keys = [v for v in inertias if inertias[v].size1() > 1]
        if not keys:
            return
        parts = [cs.vec(inertias[v]) for v in keys] + [cs.vec(geometry[v][3]) for v in keys]
        out = cs.vertcat(*parts)
        syms = cs.symvar(out)
        f = cs.Function("D_S", [cs.vertcat(*syms) if syms else cs.SX(0, 1)], [out])
        vals = [float(self.symbols.value(sy)) for sy in syms]  # type: ignore[arg-type]
        flat = np.asarray(f(np.asarray(vals))).ravel()
        blocks, pos = [], 0
        for part in parts:
            n = int(part.numel())
            blocks.append(flat[pos:pos + n])
            pos += n
        Ds = blocks[:len(keys)]
        scale = max((float(np.abs(b).max()) for b in Ds if b.size), default=0.0)
        if scale <= 0.0:
            return
        for k, v in enumerate(keys):
            n = int(inertias[v].size1())
            D = Ds[k].reshape(n, n, order="F")
            lam, vec = np.linalg.eigh(0.5 * (D + D.T))
            # (roundoff of a joint-space inertia built from O(scale) terms: ~1e-16 scale)
            if lam[0] > 1e-12 * scale or np.abs(D).max() <= 1e-12 * scale:
                continue  # regular, or moving no mass at all (_massless's case)
            self._check_coupled(v, geometry, frame_inertia, kin, prescribed, u_all)
            self._raise_singular(v, vec[:, 0], blocks[len(keys) + k].reshape(6, n, order="F"),
                                 geometry[v][5], u_all)

    def _check_coupled(self, v: int, geometry: dict[int, Any], frame_inertia: dict[int, cs.SX],
                       kin: dict[int, Kinematics], prescribed: set[int],
                       u_all: list[cs.SX]) -> None:
        """Raise a :class:`~acausal.errors.ModelDefinitionError` if the joint-space inertia
        of the tree edge into ``v`` is singular because joints below it cancel its motion:
        a combination of its speeds and theirs that moves no mass (two revolutes about one
        axis through one point in series, nothing with mass between them; the speeds
        ``(1, -1)`` move only the massless frame between them). The mass matrix of the
        mechanism is then singular as well (the articulated-body algorithm is a
        factorisation of it, ``det M`` the product of the joint-space inertias), in the
        recursive and in the virtual-power form, whatever holds the joints.

        The mass matrix of ``v``'s subtree (its free edges' speeds; the prescribed ones
        are known) is evaluated at the start configuration: speeds that move no mass at
        all (a massless joint: :meth:`_massless`'s case, which the virtual-power form
        takes) are left out, and a null vector of what is left that moves the edge into
        ``v`` and another is the motion named. Nothing is raised otherwise (the caller's
        case: a point mass spinning on its ball joint)."""
        topo = self.topo
        sub = [v]
        inside = {v}
        for x in topo.order:  # (parents come first)
            if topo.parent[x] >= 0 and int(topo.parent[x]) in inside:
                sub.append(x)
                inside.add(x)
        free = [x for x in sub if x in geometry and x not in prescribed and geometry[x][5]]
        carried = [x for x in sub if x in frame_inertia]
        if len(free) < 2 or free[0] != v or not carried:
            return
        # the twist of every frame with inertia per unit speed of each free edge above it
        # (the edge's motion subspace moved from its child's origin to the frame's)
        n_of = {x: len(geometry[x][5]) for x in free}
        cols = sum(n_of.values())
        M = cs.SX.zeros(cols, cols)
        for y in carried:
            above = set()
            x = y
            while x in inside:
                above.add(x)
                x = int(topo.parent[x])
            blocks = []
            for x in free:
                S = geometry[x][3]
                if x in above:
                    K = skew(kin[y].r - kin[x].r)
                    blocks.append(cs.vertcat(S[:3, :] - K @ S[3:, :], S[3:, :]))
                else:
                    blocks.append(cs.SX.zeros(6, n_of[x]))
            J = cs.horzcat(*blocks)
            M = M + J.T @ frame_inertia[y] @ J
        syms = cs.symvar(M)
        f = cs.Function("M_sub", [cs.vertcat(*syms) if syms else cs.SX(0, 1)], [cs.densify(M)])
        vals = np.array([float(self.symbols.value(sy)) for sy in syms])  # type: ignore[arg-type]
        Mn = np.asarray(f(vals), dtype=float)
        Mn = 0.5 * (Mn + Mn.T)
        scale = float(np.abs(Mn).max()) if Mn.size else 0.0
        if not np.isfinite(scale) or scale <= 0.0:
            return
        # (roundoff of a mass matrix built from O(scale) terms, as for D)
        moving = np.flatnonzero(np.diag(Mn) > 1e-12 * scale)
        if not len(moving):
            return
        lam, vec = np.linalg.eigh(Mn[np.ix_(moving, moving)])
        null = vec[:, lam <= 1e-12 * scale]
        own = [k for k, c in enumerate(moving) if c < n_of[v]]  # (v is free[0])
        if not null.shape[1] or not own:
            return
        # the null vector that moves v's edge most
        _, _, wt = np.linalg.svd(null[own, :])
        direction = np.zeros(cols)
        direction[moving] = null @ wt[0]
        direction /= np.abs(direction).max()
        direction[np.abs(direction) < 1e-9] = 0.0
        lead = np.flatnonzero(direction[:n_of[v]])
        if len(lead) and direction[lead[0]] < 0:  # (the joint's own first speed positive)
            direction = -direction
        offsets = np.cumsum([0] + [n_of[x] for x in free])
        joints = [x for k, x in enumerate(free)
                  if np.any(direction[offsets[k]:offsets[k + 1]] != 0.0)]
        if v not in joints or len(joints) < 2:
            return
        speeds, amounts = [], []
        for k, x in enumerate(free):
            if x in joints:
                for i, c in zip(geometry[x][5], range(offsets[k], offsets[k + 1]),
                                strict=True):
                    speeds.append(u_all[i].name())
                    amounts.append(float(np.round(direction[c], 6)) + 0.0)
        names = [self.edges[int(topo.parent_edge[x])].name for x in joints]
        bodies = sorted({e.comp._path_or_class() for e in self.edges if e.role is EdgeRole.BODY
                         and e.final in inside})
        raise ModelDefinitionError(
            f"the joints {', '.join(names)} have a combined motion that moves no mass at the "
            f"start configuration: their speeds ({', '.join(speeds)}) in the proportion "
            f"{tuple(amounts)} cancel out, moving only the frames without mass between the "
            "joints, so the equations of motion cannot give that acceleration (a singular "
            "mass matrix), although the bodies they carry ("
            + (", ".join(bodies[:6]) if bodies else "none") + ") have inertia. Joints in "
            "series that allow the same motion with nothing of mass between them (two "
            "revolutes about one axis through one point, two prismatic joints along one "
            "direction) act as one joint: remove one of them, or put a body with mass and "
            "inertia between them")

    def _raise_singular(self, v: int, direction: np.ndarray, S: np.ndarray, idx: list[int],
                        u_all: list[cs.SX]) -> None:
        topo = self.topo
        edge = self.edges[int(topo.parent_edge[v])]
        speeds = [u_all[i].name() for i in idx]
        twist = S @ direction
        w, vel = twist[3:], twist[:3]
        what = (f"a rotation about {np.round(w / np.linalg.norm(w), 6).tolist()} (world axes)"
                if float(np.linalg.norm(w)) > 1e-9 * max(float(np.linalg.norm(vel)), 1.0)
                else f"a translation along {np.round(vel / np.linalg.norm(vel), 6).tolist()}")
        sub = {v}
        for x in topo.order:  # (parents come first)
            if topo.parent[x] >= 0 and int(topo.parent[x]) in sub:
                sub.add(x)
        bodies = sorted({e.comp._path_or_class() for e in self.edges if e.role is EdgeRole.BODY
                         and (e.final in sub or e.comp is edge.comp)})
        d = np.round(direction / np.abs(direction).max(), 6) + 0.0
        who = (f"the free body {edge.name}" if edge.role is EdgeRole.BODY
               else f"the joint {edge.name}")
        raise ModelDefinitionError(
            f"{who} has a motion that moves no mass at the start configuration: its speeds "
            f"({', '.join(speeds)}) in the proportion {tuple(float(x) for x in d)}, {what}, "
            "move nothing with inertia, so the equations of motion cannot give that "
            "acceleration (a singular mass matrix). The bodies it carries ("
            + (", ".join(bodies[:6]) if bodies else "none") + ") have no inertia for that "
            "motion (a point mass on a ball joint cannot spin about its rod; a free body "
            "needs a positive inertia about every axis): give them inertia (Body I_11, "
            "I_22, I_33), or use a joint without that freedom (a Universal or Revolute "
            "instead of a Spherical)")

    def draw(self, ax: Any = None) -> Any:
        """Draw the mechanism graph (networkx/matplotlib): tree edges bold, chords dashed,
        vertices labelled by their frames."""
        import matplotlib.pyplot as plt
        import networkx as nx

        g = nx.MultiDiGraph()
        labels = {self.datum: "world datum"}
        for v, ports in enumerate(self.vertex_ports):
            labels[v] = ports[0].path() if ports else f"v{v}"
        g.add_nodes_from(labels)
        tree = [(self.edges[k].initial, self.edges[k].final) for k in self.topo.tree]
        chords = [(self.edges[k].initial, self.edges[k].final) for k in self.topo.cotree]
        g.add_edges_from(tree + chords)
        if ax is None:
            _, ax = plt.subplots(figsize=(8, 6))
        pos = nx.kamada_kawai_layout(nx.Graph(g))
        nx.draw_networkx_nodes(g, pos, ax=ax, node_size=120)
        nx.draw_networkx_labels(g, pos, labels=labels, ax=ax, font_size=7)
        nx.draw_networkx_edges(g, pos, edgelist=tree, width=2.5, ax=ax)
        nx.draw_networkx_edges(g, pos, edgelist=chords, style="dashed", ax=ax)
        ax.set_axis_off()
        return ax

    # ------------------------------------------------------------------
    def _gravity(self) -> cs.SX:
        worlds = [c for c in self.comps if getattr(c, "is_world", False)]
        if not worlds:
            return cs.SX.zeros(3)
        g = np.asarray(worlds[0].parameters()["g"], dtype=float).reshape(3, 1)
        return cs.SX(cs.DM(g))

    def _independent(self, constraints: list[cs.SX], labels: list[tuple[str, Component]],
                     q: cs.SX, u: cs.SX, qdot: cs.SX
                     ) -> tuple[list[cs.SX], list[tuple[str, Component]]]:
        """Remove constraints whose Jacobian rows depend on the others at the start
        configuration, after checking that they are redundant
        (:func:`acausal.redundancy.check_dropped_rows`): a dependent row that the others
        leave violated (a loop that cannot close) or that is independent near the start
        (a singular start) is an error, not a redundant row."""
        if not constraints:
            return constraints, labels
        Phi = cs.vertcat(*constraints)
        J = cs.jacobian(Phi, q)
        N = cs.jacobian(qdot, u) if u.numel() else cs.SX(q.numel(), 0)
        qnames = {s.name() for s in cs.vertsplit(q)} if q.numel() else set()
        others = [s for s in cs.symvar(cs.vertcat(Phi, cs.vec(J), cs.vec(N)))
                  if s.name() not in qnames]
        P = cs.vertcat(*others) if others else cs.SX(0, 1)
        f = cs.Function("phi_q", [q, P], [cs.densify(Phi), cs.densify(J), cs.densify(N)])
        pv = np.array([self.symbols.value(s) for s in others], dtype=float)
        x0 = np.array([self.symbols.value(s) for s in cs.vertsplit(q)], dtype=float) \
            if q.numel() else np.zeros(0)

        def fun(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            Phi_n, J_n, _ = f(x, pv)
            return np.asarray(Phi_n).ravel(), np.asarray(J_n)

        x0 = self._assembled(fun, x0, cs.vertsplit(q) if q.numel() else [])
        _, Jn = fun(x0)
        keep = set(range(len(constraints)))
        if Jn.size:
            # (imported here: a tree mechanism has no constraints, and scipy.linalg costs
            # a fresh process 0.13 s, a fifth of building a 200-link chain)
            import scipy.linalg as sla

            scale = max(np.abs(Jn).max(), 1e-300)
            _, Rq, piv = sla.qr(Jn.T, pivoting=True, mode="economic")
            d = np.abs(np.diag(Rq))
            rank = int(np.sum(d > 1e-9 * scale))
            keep = set(int(i) for i in piv[:rank])
        dropped = [i for i in range(len(constraints)) if i not in keep]
        if dropped:
            self._check_dropped(fun, x0, sorted(keep), dropped,
                                lambda x: np.asarray(f(x, pv)[2]), labels)
        out_c, out_l = [], []
        for i, (c, lab) in enumerate(zip(constraints, labels, strict=True)):
            if i in keep:
                out_c.append(c)
                out_l.append(lab)
            else:
                self.removed.append(lab[0])
                self._removed_rows.append((c, lab[0], lab[1]))
        if self.removed:
            warnings.warn(
                f"{len(self.removed)} redundant constraint equation(s) removed (linearly "
                "dependent on the others, e.g. a planar loop modelled in 3D): "
                + "; ".join(self.removed),
                RedundantConstraintWarning, stacklevel=user_stacklevel())
        return out_c, out_l

    def _assembled(self, fun: Any, x0: np.ndarray, q: list[cs.SX]) -> np.ndarray:
        """The assembled start: a configuration near the start values where every
        closure row holds (to 1e-12 m or rad, roundoff of O(1) coordinates), where their
        rank is judged. The start values themselves when they close the loops (a
        singular start stays singular); else the Gauss-Newton point from them
        (minimum-norm steps over the coordinates whose start is a guess), whose values
        become those guesses (:attr:`assembled` names them); else, when the loops cannot
        close from there, the start values (the checks of :meth:`_check_dropped` then
        say why).

        The rank of ``Phi_q`` at start values that do not close a loop means little: a
        ball joint left at its default orientation made a spatial RSSR's Jacobian
        singular there, a row was dropped, and a loop that closes was refused as one that
        cannot. The guesses have to move as well: the initialisation holds the states at
        their start values, and with the ball joint's default ones the loop could not
        close."""
        k = [self.symbols.index.get(s.name()) for s in q]
        fixed = np.array([i is None or self.symbols.variables[i].fixed for i in k], dtype=bool)
        rows = list(range(fun(x0)[0].size))
        x, ok = satisfy_rows(fun, x0, rows, tol=1e-12, movable=np.flatnonzero(~fixed))
        if not ok:
            return x0
        # (the steps, normal to a quaternion, lengthen it: a unit one again, the same
        # rotation; the frames use it normalised)
        at = {s.name(): n for n, s in enumerate(q)}
        for group in self._quaternions:
            idx = [at[name] for name in group if name in at]
            if len(idx) == 4 and not fixed[idx].any():
                x[idx] /= np.linalg.norm(x[idx])
        for i, s, v, v0 in zip(k, q, x, x0, strict=True):
            if i is not None and v != v0:  # (only guesses move)
                self.symbols.variables[i].start = float(v)
                self.assembled.append(s.name())
        return x

    def _check_dropped(self, fun: Any, x0: np.ndarray, keep: list[int], dropped: list[int],
                       speeds: Any, labels: list[tuple[str, Component]]) -> None:
        """The checks of :func:`acausal.redundancy.check_dropped_rows` on the cut joints'
        rows, with the messages of the mechanism."""

        def unit(k: int) -> str:
            return "m" if "position" in labels[k][0] else "rad"

        # the kept rows to 1e-12 (m or rad: roundoff of O(1) coordinates); a dropped row
        # off by more than the loop-closure tolerance cannot be closed
        found = check_dropped_rows(fun, x0, keep, dropped, tol=1e-12,
                                   gap_tol=_CLOSURE_TOL, speeds=speeds)
        if found.gaps:
            parts = []
            for k, r in list(found.gaps.items())[:5]:
                joint, what = labels[k][0].split(": ", 1)
                chord = next(c for c in self.topo.cotree if self.edges[c].name == joint)
                parts.append(
                    f"the loop closed by the cut joint {joint} ("
                    + " - ".join(self._loop(chord)) + f") misses by {abs(r):.3g} {unit(k)} "
                    f"in {what!r} where its other equations hold")
            raise ModelDefinitionError(
                "the mechanism's geometry cannot close: " + "; ".join(parts)
                + ". That equation depends on the others, so no motion of the joints can "
                "close it (it is not a redundant equation that could be left out): check "
                "the arm vectors and joint axes along the loop (a planar loop with a part "
                "out of its plane, a joint axis tilted)")
        if found.singular:
            names = [labels[k][0] for k in found.singular]
            one = len(names) == 1
            shown = "; ".join(names[:6]) + (f"; ... ({len(names) - 6} more)"
                                             if len(names) > 6 else "")
            if found.locked:
                raise ModelDefinitionError(
                    f"the start configuration of the mechanism is singular: {shown} "
                    f"{'depends' if one else 'depend'} on the other loop equations only "
                    "at the start, not near it (links on one line, a linkage at a dead "
                    "point), so the mechanism cannot move at all, but without "
                    f"{'it' if one else 'them'} the equations would let it move (and kept, "
                    f"{'it makes' if one else 'they make'} them singular). Start the joint "
                    "coordinates out of the singular configuration")
            warnings.warn(
                f"the start configuration of the mechanism is singular: {shown} "
                f"{'depends' if one else 'depend'} on the other loop equations only at the "
                f"start, not near it, and {'is' if one else 'are'} removed as redundant; "
                "the equations then hold " + ("it" if one else "them") + " to first order "
                "only, so a motion that does not keep " + ("it" if one else "them")
                + " by itself violates " + ("it" if one else "them") + " (a run checks "
                "the removed rows on its output points and warns where the loop opens). "
                "Start the joint coordinates out of the singular configuration",
                ModelWarning, stacklevel=user_stacklevel())

    def check_closure(self, res: Any, stacklevel: int = 2) -> list[str]:
        """Warn (:class:`~acausal.errors.SolverWarning`) where a loop opened during a run:
        a closure row removed as redundant at the start is violated on the result's output
        points. Returns the messages (empty: every removed row held).

        A removed row is held by the kept ones only where it is truly redundant; after a
        singular start (links on one line: :meth:`_check_dropped` warns) the kept rows
        leave the mechanism a motion that opens the loop, and nothing in the run would
        see it. The test is the build's (:func:`acausal.redundancy.check_dropped_rows`'
        gaps) at each output point: from the result's coordinates the kept rows are
        satisfied to 1e-12 (Gauss-Newton, minimum-norm steps: the nearest configuration
        where they hold, which removes the part of a removed row's residual that the
        kept rows' own tolerance in the run explains), and a removed row off by more than
        the loop-closure tolerance ``_CLOSURE_TOL`` (1e-6 m or rad, the build's "cannot
        close") there is open. Points where the removed rows already hold to that
        tolerance (every point of a planar loop, whose out-of-plane rows vanish
        identically) need no projection."""
        if not self._removed_rows or not len(res.t):
            return []
        nd = len(self._removed_rows)
        rows, q = self._closure_rows(res)
        X = np.vstack([np.reshape(res[s.name()], (1, -1)) for s in cs.vertsplit(q)])
        gaps = np.abs(np.asarray(cs.Function("phi", [q], [rows]).map(X.shape[1])(X))[:nd])
        fun = cs.Function("closure", [q], [cs.densify(rows), cs.densify(cs.jacobian(rows, q))])

        def at(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            P, J = fun(x)
            return np.asarray(P).ravel(), np.asarray(J)

        keep = list(range(nd, int(rows.numel())))
        chords = list(dict.fromkeys(c._path_or_class() for _, _, c in self._removed_rows))
        first: dict[str, tuple[int, int, float]] = {}  # cut joint -> (point, row, gap)
        for k in _open_after_one_step(fun, X, gaps, keep):
            if len(first) == len(chords):
                break
            x_c, ok = satisfy_rows(at, X[:, k], keep, tol=1e-12)
            # (kept rows that cannot be satisfied near the point: the raw residuals)
            r = np.abs(at(x_c)[0][:nd]) if ok else gaps[:, k]
            for i in np.flatnonzero(r > _CLOSURE_TOL):
                first.setdefault(self._removed_rows[i][2]._path_or_class(),
                                 (int(k), int(i), float(r[i])))
        messages = [self._opened_message(name, *first[name], gaps, res.t)
                    for name in chords if name in first]
        for msg in messages:
            warnings.warn(msg, SolverWarning, stacklevel=stacklevel)
        return messages

    def _closure_rows(self, res: Any) -> tuple[cs.SX, cs.SX]:
        """The removed closure rows, then the kept ones, as expressions of the branch
        coordinates only (the parameters at the result's values), and the coordinates."""
        q = cs.vertcat(*self._constraints[3])
        rows = cs.vertcat(*[c for c, _, _ in self._removed_rows], *self._constraints[0])
        qnames = {s.name() for s in self._constraints[3]}
        others = [s for s in cs.symvar(rows) if s.name() not in qnames]
        if others:
            pv = [res.parameters[s.name()] if s.name() in res.parameters
                  else float(self.symbols.value(s)) for s in others]  # type: ignore[arg-type]
            rows = cs.substitute(rows, cs.vertcat(*others), cs.DM(pv))
        return rows, q

    def _opened_message(self, name: str, k: int, row: int, gap: float, gaps: np.ndarray,
                        t: np.ndarray) -> str:
        """The warning for the loop of the cut joint ``name`` found open at point ``k``."""
        rows = [i for i, (_, _, c) in enumerate(self._removed_rows)
                if c._path_or_class() == name]
        worst = max(rows, key=lambda i: float(gaps[i].max()))
        kmax = int(np.argmax(gaps[worst]))
        label = self._removed_rows[row][1].split(": ", 1)[-1]
        unit = "m" if "position" in label else "rad"
        wunit = "m" if "position" in self._removed_rows[worst][1] else "rad"
        chord = next(c for c in self.topo.cotree if self.edges[c].name == name)
        return (
            f"the loop closed by the cut joint {name} (" + " - ".join(self._loop(chord))
            + f") opened during the run: its equation {label!r}, removed as redundant at "
            f"the start, is violated by {gap:.3g} {unit} at t = {t[k]:.6g} s (more than "
            f"the loop-closure tolerance {_CLOSURE_TOL:g} {unit} where the loop's other "
            f"equations hold), up to {float(gaps[worst, kmax]):.3g} {wunit} in "
            f"{self._removed_rows[worst][1].split(': ', 1)[-1]!r} at t = {t[kmax]:.6g} s. "
            "From there the result is not a motion of the mechanism: the kept equations "
            "do not hold the removed one along this motion (it depended on them at a "
            "singular configuration only, links on one line, such as the start). Start "
            "the joint coordinates out of the singular configuration")

    def _make_report(self, q_all, u_all, constraints) -> MechanismReport:
        bodies = [c for c in self.comps if any(e.role is EdgeRole.BODY for e in c.mb_edges)]
        nfree = len(u_all) - len(constraints)
        # Cartesian formulation: 6 coordinates per body, 6 - dof constraints per joint
        joints = [e for e in self.edges if e.role is EdgeRole.JOINT]
        cart_c = sum(6 - getattr(e.comp, "n_dof", 0) for e in joints)
        return MechanismReport(
            n_bodies=len(bodies),
            n_branch_coordinates=len(q_all),
            n_speeds=len(u_all),
            n_constraints=len(constraints),
            n_removed=len(self.removed),
            dof=nfree,
            tree=[self.edges[k].name for k in self.topo.tree],
            cotree=[self.edges[k].name for k in self.topo.cotree],
            removed=list(self.removed),
            cartesian_coordinates=6 * len(bodies),
            cartesian_constraints=cart_c,
            dynamics=self.dynamics,
            fallback_reason=self.fallback_reason,
            assembled=list(self.assembled),
        )


def _quaternion_groups(motions: Any) -> list[list[str]]:
    """The coordinates of tree edges that are a quaternion, by name: four on which the
    edge's orientation quaternion depends (a ball joint, a free body, a FreeMotion)."""
    out = []
    for m in motions:
        if m.Q_rel is not None and len(m.q) >= 4:
            deps = [s.name() for s in m.q if cs.depends_on(m.Q_rel, s)]
            if len(deps) == 4:
                out.append(deps)
    return out


def _open_after_one_step(fun: cs.Function, X: np.ndarray, gaps: np.ndarray,
                         keep: list[int]) -> np.ndarray:
    """The output points (columns of ``X``) where a removed row (``gaps``, the first
    rows of ``fun``'s) is off by more than ``_CLOSURE_TOL`` after one Gauss-Newton step
    onto the kept rows (minimum norm, all points at once). The kept rows are off by the
    run's tolerances, so the step leaves a redundant row off by their square (1e-8 m
    for a loop held to 1e-4 m): only the points of an open loop remain, for the full
    projection (a loop in a tilted plane run at rtol 1e-2: every one of 2001 points is
    off before the step, 0.7 s of one projection each)."""
    pts = np.flatnonzero(np.any(gaps > _CLOSURE_TOL, axis=0))
    if not len(pts):
        return pts
    P, J = (np.asarray(v) for v in fun.map(len(pts))(X[:, pts]))
    nq = X.shape[0]
    J = J.reshape(J.shape[0], len(pts), nq).transpose(1, 0, 2)[:, keep, :]
    step = np.linalg.pinv(J) @ P[keep, :].T[:, :, None]
    phi = np.asarray(fun.map(len(pts))(X[:, pts] - step[:, :, 0].T)[0])
    return pts[np.any(np.abs(phi[:gaps.shape[0]]) > _CLOSURE_TOL, axis=0)]


def _count(n: int, noun: str) -> str:
    """``"1 motion"``, ``"2 motions"``."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _dense(x: Any) -> Any:
    """``x`` as an argument of the inlined functions (which project a sparse matrix on their
    dense inputs themselves; numbers become a DM)."""
    return x if isinstance(x, cs.SX | cs.DM) else cs.DM(np.asarray(x, dtype=float))


def _walk(forward: bool, quaternion: bool) -> cs.Function:
    """One step of the tree walk: a frame's ``r, R, v, w`` (world) and, with
    ``quaternion``, its orientation quaternion ``Q``, from its parent's and the edge's
    relative motion (a CasADi function, inlined at each edge: positions add, rotations
    multiply)."""
    r, v, w = cs.SX.sym("r", 3), cs.SX.sym("v", 3), cs.SX.sym("w", 3)
    R, Rr = cs.SX.sym("R", 3, 3), cs.SX.sym("R_rel", 3, 3)
    rr, vr, wr = cs.SX.sym("r_rel", 3), cs.SX.sym("v_rel", 3), cs.SX.sym("w_rel", 3)
    Qp, Qr = cs.SX.sym("Q", 4), cs.SX.sym("Q_rel", 4)
    if forward:  # the child is the edge's final frame
        rho = R @ rr
        out = [r + rho, R @ Rr, v + cs.cross(w, rho) + R @ vr, w + R @ wr]
    else:  # the parent is the final frame, the child the initial one
        Rv = R @ Rr.T
        wv = w - Rv @ wr
        rho = Rv @ rr
        out = [r - rho, Rv, v - cs.cross(wv, rho) - Rv @ vr, wv]
    args = [r, R, v, w, rr, Rr, vr, wr]
    if quaternion:
        args += [Qp, Qr]
        out.append(quat_product(Qp, Qr if forward else Qr * cs.DM([1, -1, -1, -1])))
    return cs.Function("walk", args, out)


_WALK = {(f, q): _walk(f, q) for f in (True, False) for q in (True, False)}
_Q_IDENTITY = cs.SX(cs.DM([1.0, 0.0, 0.0, 0.0]))


def _acc(k: Kinematics) -> cs.SX:
    """``[a; z]`` of a frame (placeholders: always set)."""
    assert k.a is not None and k.z is not None
    return cs.vertcat(k.a, k.z)


def _relative_motion(m: Any, forward: bool) -> tuple[cs.SX, cs.SX, cs.SX]:
    """Offset ``d = r_child - r_parent`` and relative motion ``J = [J_v; J_w] = S u`` of a
    tree edge, in the parent frame's axes, at the child's origin (``J`` is linear in the
    speeds)."""
    if forward:
        return m.r_rel, m.v_rel, m.w_rel
    # the parent is the edge's final frame: invert the relative motion
    Rt = m.R_rel.T
    rho = Rt @ m.r_rel
    w = Rt @ m.w_rel
    return -rho, cs.cross(w, rho) - Rt @ m.v_rel, -w


def _split(x: cs.SX, n: int) -> list[cs.SX]:
    """The ``n`` entries of a column (no CasADi call for none or a single one)."""
    return [x] if n == 1 else cs.vertsplit(x) if n else []


def _column(items: list[cs.SX]) -> cs.SX:
    """The scalars ``items`` as a column (no CasADi call for none or a single one)."""
    return items[0] if len(items) == 1 else cs.vertcat(*items) if items else cs.SX(0, 1)


def _placeholders(n: int) -> tuple[list[Kinematics], list[cs.SX], cs.SX]:
    """Placeholder kinematics of ``n`` frames, slices of a few block symbols (a symbol per
    frame and quantity costs a CasADi call each): the kinematics, the blocks ``[r, R, v,
    w]`` (``3 x n``, ``R`` ``3 x 3n``, frame by frame) and the accelerations ``[a; z]``
    of all frames (``6n``, frame by frame)."""
    r, v, w = (cs.SX.sym(name, 3, n) for name in ("r", "v", "w"))
    R = cs.SX.sym("R", 3, 3 * n)
    A = cs.SX.sym("A", 6, n)
    if not n:
        return [], [r, R, v, w], cs.vec(A)
    a, z = cs.vertsplit(A, [0, 3, 6])
    cols = [cs.horzsplit(x, 1) for x in (r, v, w, a, z)]
    Rs = cs.horzsplit(R, 3)
    kins = [Kinematics(cols[0][i], Rs[i], cols[1][i], cols[2][i], cols[3][i], cols[4][i])
            for i in range(n)]
    return kins, [r, R, v, w], cs.vec(A)


def _edge_geometry(kin: dict[int, Kinematics], parents: list[int], ds: list[cs.SX],
                   S_all: cs.SX, Jd_all: cs.SX, u_vec: cs.SX,
                   idxs: list[list[int]]) -> list[tuple[cs.SX, cs.SX, cs.SX]]:
    """``(d, S, c)`` of every tree edge in world axes
    (:func:`~acausal.multibody.articulated.edge_motion_world`), one mapped call per number
    of speeds: ``S_all`` and ``Jd_all`` stack the edges' ``S_loc`` (6 rows each, the
    columns of all speeds) and ``Jd_loc``; ``idxs`` are each edge's speed indices."""
    E = len(parents)
    out: list[Any] = [None] * E
    if not E:
        return out
    Jd6 = cs.reshape(Jd_all, 6, E)
    groups: dict[int, list[int]] = {}
    for n, idx in enumerate(idxs):
        groups.setdefault(len(idx), []).append(n)
    for k, members in groups.items():
        g = len(members)
        cols = [j for n in members for j in idxs[n]]
        if k:  # the 6 x k blocks of S_all, side by side: one indexing call
            rows = np.array([6 * n for n in members for _ in idxs[n]])
            lin = rows[None, :] + np.arange(6)[:, None] + 6 * E * np.array(cols)[None, :]
            S_loc, u = S_all[lin], cs.reshape(u_vec[cols], k, g)
        else:
            S_loc, u = cs.SX(6, 0), cs.SX(0, g)
        # (a CasADi function takes sparse arguments of the right shape as they are)
        d, S, c = edge_motion_world(k).map(g)(
            cs.horzcat(*[kin[parents[n]].R for n in members]),
            cs.horzcat(*[kin[parents[n]].w for n in members]),
            cs.horzcat(*[ds[n] for n in members]), S_loc, Jd6[:, members], u)
        Ss = cs.horzsplit(S, k) if k else [cs.SX(6, 0)] * g
        for n, dn, Sn, cn in zip(members, cs.horzsplit(d, 1), Ss, cs.horzsplit(c, 1),
                                 strict=True):
            out[n] = (dn, Sn, cn)
    return out
