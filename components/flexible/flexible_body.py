"""Flexible body (floating frame of reference) for the 3D multibody components.

Kinematics (the chapter, Richard 2012, section 4, eq. 47): a material point of the
body is at

    r_p = r_A + R_A (u0 + S q),

with ``r_A``, ``R_A`` the position and orientation of the body reference frame ``frame_a``
(the frame of the mesh coordinates, placed by the data's reference condition: the clamp,
the chord A-B of a pinned link, or the mean axes of a free body), ``u0`` the undeformed
position and ``S`` the shape matrix of the elastic coordinates ``q`` (modal amplitudes,
Craig-Bampton coordinates or nodal DOFs; the mass-point fields of
:mod:`components.flexible`: ``u = x_g + T_g D + (R_g D) x d``, ``D = basis q``). The elastic
part is linear in ``q`` (small deformation); the rigid motion is exact.

Attachment frames
-----------------
One frame per attachment node (``frame_b``, ``frame_c``, ...): an "arm" edge ``frame_a ->
frame_x`` in its own child component, with

    r_rel = s_n + Phi_t(n) q,     v_rel = Phi_t(n) q'                       (exact)
    R_rel = Cayley(theta) = I + (K + K^2 / 2) / (1 + |theta|^2 / 4),  K = skew(theta),
    w_rel = (I + K / 2) theta' / (1 + |theta|^2 / 4),        theta = Phi_r(n) q

(``rotation="cayley"``, default): the small rotation vector of the node is turned into
an orthogonal matrix at every ``q`` (the Cayley/Gibbs-Rodrigues map equals the
exponential map to second order, ``|theta|^3 / 12``). ``rotation="linear"`` keeps the
first-order ``R_rel = I + K`` of earlier versions (orthogonal only to first order).

Virtual power
-------------
The d'Alembert and gravity force densities ``rho (g - a_p)`` integrated with the inertia
invariants give, exactly for the kinematics above (all terms quadratic in ``q`` kept),
with body-frame vectors ``a = R^T a_A``, ``alpha = R^T z_A``, ``omega = R^T w_A``,
``g' = R^T g``:

    F  = m g' - (m a + alpha x c + omega x (omega x c) + 2 omega x I3 q' + I3 q'')
    M  = c x (g' - a) - J alpha - omega x J omega - 2 (omega tr W - W^T omega) - M_tf q''
    Qf = I3^T (g' - a) - M_tf^T alpha - sum_ab (omega~^2)_ab U_ab
         - 2 sum_ab omega~_ab int (S_b q') S_a - M_ff q'' - K_ff q - C_ff q'
         - K_G(omega, alpha, a - g') q + Q_loads

(``c = I2 + I3 q``, ``W_ab = int u_a (S q')_b``, ``U_ab = int S_a u_b``); ``F`` and the
moment ``M`` about the origin of ``frame_a`` are the wrench on ``frame_a``, ``Qf`` the
generalized force on ``q'``: the chapter's ``M_RR ... M_ff`` blocks and quadratic-velocity
vector (eqs. 58-67) in body-frame accelerations.

Geometric stiffening
--------------------
``K_G`` is the geometric stiffness of the quasi-static stress that the body's own inertia
and weight cause (SID style, Wallrapp 1994): the preprocessor's unit-load tables
(:mod:`~components.flexible.stiffening`: six centrifugal cases, three Euler cases, three
translational-acceleration cases, each solved with the supports of the reference
condition) are combined with the coefficients ``omega omega^T - |omega|^2 I``, ``alpha``
and ``a - g'``, symbolic functions of the body frame's motion. Not included: the
pre-stress of forces that *other* bodies apply through the joints (the axial force a
coupler transmits), unless given as ``preload``; the stress of the elastic deformation
itself (no large-deflection nonlinearity).
"""

from __future__ import annotations

import string
from dataclasses import dataclass, field
from typing import Any, Sequence

import casadi as cs
import numpy as np
import scipy.sparse as sp

from acausal import Parameter, Variable, der
from acausal.component import PortInstance
from acausal.errors import ModelDefinitionError
from acausal.multibody.base import (
    Coordinates,
    CutEquations,
    EdgeRole,
    Frame,
    Kinematics,
    MBEdge,
    MBPriority,
    MultibodyComponent,
    TreeMotion,
)
from acausal.multibody.constraints import orientation_constraints, position_constraints
from acausal.multibody.rotations import skew
from components.multibody import FreeFlyingBody

from .reference import resolve_nodes
from .stiffening import geometric_stiffening

__all__ = ["FlexibleBody", "DistributedLoad", "PressureLoad", "PointLoad"]

_EPS = np.zeros((3, 3, 3))
_EPS[0, 1, 2] = _EPS[1, 2, 0] = _EPS[2, 0, 1] = 1.0
_EPS[0, 2, 1] = _EPS[2, 1, 0] = _EPS[1, 0, 2] = -1.0
_INERTIAL_CASES = 12  # 6 centrifugal + 3 Euler + 3 translational unit loads


# ---------------------------------------------------------------------------- loads
@dataclass(frozen=True)
class DistributedLoad:
    """A distributed force on a flexible body: a line load [N/m] on a beam, a surface
    traction [N/m^2] on a shell, uniform per element.

    Parameters
    ----------
    traction : sequence of 3
        Load per unit length or area [N/m or N/m^2].
    frame : {'body', 'world'}
        Components in the body frame (follows the body: a follower load) or in the world
        (a fixed direction, e.g. wind; turned into body components by ``R_A^T``).
    elements : array_like of int or bool, optional
        Loaded elements (default all).
    lumped : bool
        Consistent nodal loads (default; forces and moments from the element's own
        interpolation, exact nodal deflections of the Timoshenko beam) or lumped (each
        element's resultant split equally over its nodes as forces; O(h^2)).
    """

    traction: Sequence[float]
    frame: str = "body"
    elements: Any = None
    lumped: bool = False


@dataclass(frozen=True)
class PressureLoad:
    """A pressure [Pa] on shell elements along their normals ``e3`` (a follower load).

    Parameters
    ----------
    pressure : float
        [Pa], positive along each element's ``e3``.
    elements : array_like of int or bool, optional
        Loaded elements (default all).
    lumped : bool
        Consistent (default) or lumped nodal forces (see :class:`DistributedLoad`).
    """

    pressure: float
    elements: Any = None
    lumped: bool = False


@dataclass(frozen=True)
class PointLoad:
    """A force [N] and moment [N m] at a node, in body components (``frame='body'``, the
    default: the load turns with the body) or world components (``frame='world'``)."""

    node: int | str
    force: Sequence[float] = (0.0, 0.0, 0.0)
    moment: Sequence[float] = (0.0, 0.0, 0.0)
    frame: str = "body"


@dataclass
class _LoadTerm:
    """One load in elastic coordinates: ``components`` (c,) body-fixed amplitudes or world
    components; ``f`` (n_dofs, c) nodal load per unit component."""

    f: np.ndarray
    world: bool
    amplitude: np.ndarray


def _dense(A: Any) -> np.ndarray:
    return np.asarray(A.toarray() if sp.issparse(A) else A, dtype=float)


@dataclass(frozen=True)
class _Constants:
    """The body's constant shape integrals and matrices (numpy, computed once per body)."""

    k: int
    m: float
    I2: np.ndarray
    Q0: np.ndarray
    I3: np.ndarray
    Shat: np.ndarray
    I4: np.ndarray
    Sbar: list[list[np.ndarray]]
    Mff: np.ndarray
    Kff: np.ndarray
    Cff: np.ndarray
    KG: list[np.ndarray] = field(default_factory=list)  # inertial unit-load tables (12)
    KG_pre: np.ndarray | None = None  # preload stiffness (k, k)


def _frame_names(n: int) -> list[str]:
    letters = string.ascii_lowercase[1:]
    return [f"frame_{letters[i]}" if i < len(letters) else f"frame_{i + 1}" for i in range(n)]


class FlexibleBody(FreeFlyingBody):
    """Flexible body in elastic coordinates (FFRF) with any number of attachment frames.

    Parameters
    ----------
    data : FlexibleBodyData
        Preprocessor output (:meth:`FlexibleBodyData.from_mesh`); its body frame (the mesh
        coordinates, placed by its reference condition) is ``frame_a``.
    attachments : node spec, list or dict, optional
        Attachment nodes, one frame each: a node set name (every node of the set, in
        order), a list of node indices / one-node set names, or ``{"frame_x": node}``.
        Frames are named ``frame_b``, ``frame_c``, ... in order (unless given by a dict);
        :meth:`frame` finds the frame of a node. Default: ``node_b``.
    node_b : int or str, optional
        The single attachment node of earlier versions (default, when ``attachments`` is
        not given: the node farthest from the body-frame origin).
    stiffening : bool, optional
        Geometric stiffening by the body's own inertia and weight, ``True`` or ``False``
        (default: on for beams, off for shells). The unit-load tables are taken from
        ``data`` when it has them (``from_mesh(..., stiffening=True)``), else computed once
        here.
    preload : dict, optional
        ``{node: (fx, fy, fz, mx, my, mz)}``: constant loads [N, N m], body components,
        at nodes, taken into the geometric stiffness only (a known axial force that the
        rest of the mechanism applies; the forces themselves must come from the model).
    rotation : {'cayley', 'linear'}
        Orientation of the attachment frames from the node rotation (see module doc).
    loads : DistributedLoad, PressureLoad, PointLoad, or a sequence of them, optional
        Applied loads on the body (virtual power exact for the nodal forces at the
        deformed nodes), scaled by ``load_factor``.
    load_factor : float or f(t)
        Factor on all ``loads`` [1] (a function of time for a time-varying load).
    output_nodes : node spec, optional
        Nodes whose displacement is a result (``res["body.node[4].u"]``, body-frame
        displacement [m]; ``.r`` world position; one-node sets also by name,
        ``res["body.centre.u"]``). Default: every node of meshes up to 200 nodes, else
        the attachment nodes.
    output_resultants : bool, optional
        Stress resultants per element as results (``res["body.element[3].N"]``); default
        on when the mesh has at most 200 elements.

    Variables
    ---------
    q : elastic coordinates (size k); qd : their rates
    r_0, v_0, Q, w_a : free-flight coordinates of ``frame_a`` (used only when no joint holds
        the body, as for :class:`components.multibody.Body`)
    """

    data = Parameter(None, doc="FlexibleBodyData of the body", structural=True)
    node_b = Parameter(None, doc="node of frame_b (legacy single attachment)", structural=True)
    attachments = Parameter(None, doc="attachment nodes (one frame each)", structural=True)
    stiffening = Parameter(None, doc="geometric stiffening on/off (default: beams on)",
                           structural=True)
    preload = Parameter(None, doc="{node: 6-vector} loads for the geometric stiffness",
                        structural=True)
    rotation = Parameter("cayley", doc="attachment rotation: 'cayley' or 'linear'",
                         structural=True)
    loads = Parameter(None, doc="applied loads (DistributedLoad, PressureLoad, PointLoad)",
                      structural=True)
    load_factor = Parameter(1.0, unit="1", doc="factor on all loads", signal=True)
    output_nodes = Parameter(None, doc="nodes with displacement results", structural=True)
    output_resultants = Parameter(None, doc="element stress resultants as results",
                                  structural=True)
    frame_a = Frame("body reference frame (mesh coordinates)")
    q = Variable(start=0.0, fixed=True, doc="elastic coordinates (size k)", state_priority=2)
    qd = Variable(start=0.0, fixed=True, unit="1/s", doc="elastic rates (size k)",
                  state_priority=2)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        p = self.parameters()
        data = p["data"]
        if data is None or not hasattr(data, "invariants"):
            raise ModelDefinitionError(
                f"{self._describe()}: FlexibleBody needs data=FlexibleBodyData.from_mesh(...)")
        k = int(data.n_coordinates)
        if k > 300:
            raise ModelDefinitionError(
                f"{self._describe()}: {k} elastic coordinates; the body's invariants are "
                "dense in them: use a modal or Craig-Bampton reduction, or a coarser mesh "
                "for nodal coordinates (at most 300)")
        if p["rotation"] not in ("cayley", "linear"):
            raise ModelDefinitionError(
                f"{self._describe()}: rotation={p['rotation']!r}; use 'cayley' (orthogonal "
                "at every order) or 'linear' (first order)")
        for name in ("q", "qd"):
            vi = self.__dict__["_vars"][name]
            vi.size = k
            s = np.atleast_1d(np.asarray(vi.start, dtype=float)).ravel()
            if s.size == 1:
                s = np.full(k, s[0])
            if s.size != k:
                raise ModelDefinitionError(
                    f"{self._describe()}: start value of {name!r} has {s.size} entries, "
                    f"expected {k}")
            vi.start = s.tolist() if k > 1 else float(s[0])
        mesh = data.model.mesh
        # attachment nodes and their frames
        att = self._resolve_attachments(data, p["attachments"], p["node_b"])
        object.__setattr__(self, "_frames", att)  # frame name -> node
        # constants
        inv = data.invariants
        stiff = self._flag(p, "stiffening", "geometric stiffening by the body's own "
                           "inertia and weight; None: on for beams, off for shells")
        if stiff is None:
            stiff = data.model.element.dimension == 1
        KG: list[np.ndarray] = []
        KG_pre = None
        if stiff or p["preload"]:
            pre_nodes: list[int] = []
            if p["preload"]:
                for spec in p["preload"]:
                    pre_nodes += [int(n) for n in resolve_nodes(mesh, spec, "preload")]
            gs = data.geometric_stiffening
            if gs is None or not set(pre_nodes) <= set(gs.attachment_nodes):
                gs = geometric_stiffening(data.model, data.reference, data.basis,
                                          tuple(dict.fromkeys(pre_nodes)))
            if stiff:
                KG = [_dense(gs.matrices[i]) for i in range(_INERTIAL_CASES)]
            if p["preload"]:
                KG_pre = np.zeros((k, k))
                for spec, fm in p["preload"].items():
                    fm = np.asarray(fm, float).ravel()
                    if fm.size != 6:
                        raise ModelDefinitionError(
                            f"{self._describe()}: preload[{spec!r}] needs 6 numbers "
                            "(force [N], moment [N m], body components)")
                    for n in resolve_nodes(mesh, spec, "preload"):
                        j = gs.attachment_nodes.index(int(n))
                        for a in range(6):
                            KG_pre += fm[a] * _dense(gs.matrices[_INERTIAL_CASES + 6 * j + a])
        c = _Constants(
            k=k, m=float(inv.mass), I2=np.asarray(inv.first_moment, float),
            Q0=np.asarray(inv.second_moment, float), I3=np.asarray(inv.I3, float),
            Shat=np.asarray(inv.Shat, float), I4=np.asarray(inv.I4, float),
            Sbar=[[_dense(inv.Sbar[a][b]) for b in range(3)] for a in range(3)],
            Mff=_dense(data.M_ff), Kff=_dense(data.K_ff), Cff=_dense(data.C_ff),
            KG=KG, KG_pre=KG_pre)
        object.__setattr__(self, "_ffrf", c)
        object.__setattr__(self, "_loads", self._prepare_loads(data, p["loads"]))
        object.__setattr__(self, "_cache", {})
        # outputs
        on = p["output_nodes"]
        if on is None:
            out_nodes = (np.arange(mesh.n_nodes) if mesh.n_nodes <= 200
                         else np.asarray(sorted(set(att.values())), np.int64))
        else:
            out_nodes = resolve_nodes(mesh, on, "output_nodes")
        object.__setattr__(self, "_out_nodes", [int(n) for n in out_nodes])
        orr = self._flag(p, "output_resultants", "element stress resultants as results; "
                         "None: on up to 200 elements")
        object.__setattr__(self, "_out_resultants",
                           mesh.n_elements <= 200 if orr is None else bool(orr))
        # the frame_a -> frame_x arm edges live in child components (the mechanism asks a
        # component for one tree motion / cut, so each edge needs its own component)
        for fname, node in att.items():
            decl = Frame(f"attachment frame at node {node}")
            decl.name = fname
            port = PortInstance(decl, self)
            self.__dict__["_ports"][fname] = port
            self.__dict__[fname] = port
            child = _Attachment()
            child.__dict__["_body"] = self
            child.__dict__["_node"] = node
            self.add("attachment" if len(att) == 1 and fname == "frame_b"
                     else f"attachment_{fname[6:]}", child)
            self.connect(self.frame_a, child.frame_a)
            self.connect(port, child.frame_b)

    # ------------------------------------------------------------------ set-up helpers
    def _flag(self, p: dict[str, Any], name: str, doc: str) -> bool | None:
        """A switch: True, False or None (the default), nothing else (a string such as
        'yes' or 'off' would count as true)."""
        v = p[name]
        if v is None or isinstance(v, (bool, np.bool_)):
            return None if v is None else bool(v)
        raise ModelDefinitionError(
            f"{self._describe()}: {name}={v!r}; give True or False ({doc})")

    def _resolve_attachments(self, data: Any, spec: Any, node_b: Any) -> dict[str, int]:
        mesh = data.model.mesh
        if spec is None:
            if node_b is None:
                nb = int(np.argmax(np.linalg.norm(mesh.nodes, axis=1)))
            else:
                nb = int(resolve_nodes(mesh, node_b, "node_b")[0]) \
                    if np.size(resolve_nodes(mesh, node_b, "node_b")) == 1 else None
                if nb is None:
                    raise ModelDefinitionError(
                        f"{self._describe()}: node_b={node_b!r} is not a single node; use "
                        "attachments=... for several")
            return {"frame_b": nb}
        if node_b is not None:
            raise ModelDefinitionError(f"{self._describe()}: give attachments=... or node_b=..., "
                                       "not both")
        if isinstance(spec, dict):
            out: dict[str, int] = {}
            for name, nspec in spec.items():
                ids = resolve_nodes(mesh, nspec, f"attachments[{name!r}]")
                if ids.size != 1 or not str(name).startswith("frame_") or name == "frame_a":
                    raise ModelDefinitionError(
                        f"{self._describe()}: attachments[{name!r}] must map a frame name "
                        "'frame_<x>' (not frame_a) to a single node")
                out[str(name)] = int(ids[0])
            return out
        nodes = [int(n) for n in resolve_nodes(mesh, spec, "attachments")]
        if not nodes:
            raise ModelDefinitionError(f"{self._describe()}: attachments={spec!r} has no node")
        return dict(zip(_frame_names(len(nodes)), nodes, strict=True))

    def _prepare_loads(self, data: Any, loads: Any) -> list[_LoadTerm]:
        out: list[_LoadTerm] = []
        model = data.model

        def vector(value: Any, what: str, unit: str) -> np.ndarray:
            """A finite 3-vector, or an error naming the body, the load and the field."""
            try:
                v = np.asarray(value, dtype=float)
            except (TypeError, ValueError):
                v = np.zeros(0)
            if v.shape != (3,) or not np.all(np.isfinite(v)):
                raise ModelDefinitionError(
                    f"{self._describe()}: {what} must be 3 finite numbers [{unit}] (x, y, "
                    f"z components), got {value!r}")
            return v

        def frame(ld: Any, what: str) -> bool:
            """Whether the load's components are world components ('body' or 'world')."""
            if ld.frame not in ("body", "world"):
                raise ModelDefinitionError(
                    f"{self._describe()}: {what}.frame={ld.frame!r}: use 'body' (components "
                    "in the body frame, turning with it) or 'world' (a fixed direction)")
            return bool(ld.frame == "world")

        if loads is None:
            loads = []
        elif isinstance(loads, (DistributedLoad, PressureLoad, PointLoad)):
            loads = [loads]  # a single load
        elif isinstance(loads, (str, bytes, dict)) or not hasattr(loads, "__iter__"):
            raise ModelDefinitionError(
                f"{self._describe()}: loads={loads!r}; give a load (DistributedLoad, "
                "PressureLoad or PointLoad) or a list of them")
        for k, ld in enumerate(loads):
            what = f"loads[{k}] ({type(ld).__name__})"
            if isinstance(ld, DistributedLoad):
                t = vector(ld.traction, f"{what} traction", "N/m or N/m2")
                if not frame(ld, what):
                    f = model.distributed_load(t, ld.elements, ld.lumped)[:, None]
                    out.append(_LoadTerm(f, False, np.ones(1)))
                else:
                    f = np.column_stack([model.distributed_load(e, ld.elements, ld.lumped)
                                         for e in np.eye(3)])
                    out.append(_LoadTerm(f, True, t))
            elif isinstance(ld, PressureLoad):
                try:
                    pressure = float(ld.pressure)
                except (TypeError, ValueError):
                    pressure = float("nan")
                if not np.isfinite(pressure):
                    raise ModelDefinitionError(
                        f"{self._describe()}: {what} pressure must be a finite number [Pa], "
                        f"got {ld.pressure!r}")
                f = model.pressure_load(pressure, ld.elements, ld.lumped)[:, None]
                out.append(_LoadTerm(f, False, np.ones(1)))
            elif isinstance(ld, PointLoad):
                force = vector(ld.force, f"{what} force", "N")
                moment = vector(ld.moment, f"{what} moment", "N m")
                if not frame(ld, what):
                    f = model.point_load(ld.node, force, moment)[:, None]
                    out.append(_LoadTerm(f, False, np.ones(1)))
                else:
                    f = np.column_stack([model.point_load(ld.node, e[:3], e[3:])
                                         for e in np.eye(6)])
                    out.append(_LoadTerm(f, True, np.concatenate([force, moment])))
            else:
                raise ModelDefinitionError(
                    f"{self._describe()}: loads[{k}] = {ld!r} is not a load: use "
                    "DistributedLoad, PressureLoad or PointLoad")
        return out

    # ------------------------------------------------------------------ frames
    @property
    def attachment_frames(self) -> dict[str, int]:
        """Attachment frame name -> node index."""
        return dict(self._frames)

    def frame(self, node: int | str) -> PortInstance:
        """The attachment frame of a node (index or one-node set name)."""
        ids = resolve_nodes(self._data().model.mesh, node, "node")
        for name, n in self._frames.items():
            if ids.size == 1 and n == int(ids[0]):
                return self.__dict__[name]
        raise ModelDefinitionError(
            f"{self._describe()}: node {node!r} has no attachment frame; attachment nodes: "
            + ", ".join(f"{k} = node {v}" for k, v in self._frames.items()))

    def _data(self) -> Any:
        return self.parameters()["data"]

    # ------------------------------------------------------------------ graph edges
    def node_motion(self, node: int) -> TreeMotion:
        """frame_a -> node frame: ``r_rel = s + Phi_t q``, ``v_rel = Phi_t q'`` and the
        node rotation ``theta = Phi_r q`` as an orthogonal matrix (Cayley) or linearised."""
        data = self._data()
        q, qd = self.q, self.qd
        Pt, Pr = cs.DM(data.phi_t(node)), cs.DM(data.phi_r(node))
        r_rel = cs.DM(data.node_position(node)) + cs.mtimes(Pt, q)
        th = cs.mtimes(Pr, q)
        thd = cs.mtimes(Pr, qd)
        K = skew(th)
        if self.parameters()["rotation"] == "linear":
            R_rel = cs.SX.eye(3) + K
            w_rel = thd
        else:
            den = 1.0 + cs.sumsqr(th) / 4.0
            R_rel = cs.SX.eye(3) + (K + cs.mtimes(K, K) / 2.0) / den
            w_rel = (thd + cs.cross(th, thd) / 2.0) / den
        return TreeMotion([], [], cs.SX(0, 1), r_rel, R_rel, cs.mtimes(Pt, qd), w_rel)

    def arm_motion(self) -> TreeMotion:
        """Motion of ``frame_b`` (the first attachment) relative to ``frame_a``."""
        return self.node_motion(next(iter(self._frames.values())))

    def internal_motion(self) -> Coordinates:
        return Coordinates(cs.vertsplit(self.q), cs.vertsplit(self.qd), cs.SX(self.qd))

    # ------------------------------------------------------------------ dynamics
    def _inertial(self, kin: dict[str, Kinematics], gravity: cs.SX) -> tuple[Any, Any, Any]:
        """Body-frame d'Alembert + gravity + load resultant (F, M about frame_a) and Q_f."""
        key = (id(kin["frame_a"].R), id(gravity))
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        c = self._ffrf
        k = kin["frame_a"]
        R = k.R
        q, qd, qdd = self.q, self.qd, der(self.qd)
        a = R.T @ k.a
        al = R.T @ k.z
        om = R.T @ k.w
        g = R.T @ gravity
        m = c.m
        I3 = cs.DM(c.I3)
        Sb = c.Sbar
        Sq = [[cs.mtimes(cs.DM(Sb[i][j].T), q) for j in range(3)] for i in range(3)]
        Sqd = [[cs.mtimes(cs.DM(Sb[i][j].T), qd) for j in range(3)] for i in range(3)]
        Shat = c.Shat
        sh = [[cs.DM(Shat[i, j, :]) for j in range(3)] for i in range(3)]
        cm = cs.DM(c.I2) + cs.mtimes(I3, q)  # int rho u
        Qm = cs.SX(3, 3)  # int rho u u^T
        Wm = cs.SX(3, 3)  # int rho u_a (S q')_b
        for i in range(3):
            for j in range(3):
                Qm[i, j] = (c.Q0[i, j] + cs.dot(sh[i][j], q) + cs.dot(sh[j][i], q)
                            + cs.dot(Sq[i][j], q))
                Wm[i, j] = cs.dot(sh[i][j], qd) + cs.dot(Sq[i][j], qd)
        J = cs.trace(Qm) * cs.SX.eye(3) - Qm
        # M_tf = int rho u~ S = I4 + eps_abc int (S_b q) S_c
        rows = []
        for i in range(3):
            row = cs.SX(c.k, 1)
            for j in range(3):
                for l in range(3):
                    if _EPS[i, j, l] != 0.0:
                        row = row + _EPS[i, j, l] * Sq[j][l]
            rows.append(row.T)
        Mtf = cs.SX(cs.DM(c.I4)) + cs.vertcat(*rows)
        Iqd = cs.mtimes(I3, qd)
        F = m * g - (m * a + cs.cross(al, cm) + cs.cross(om, cs.cross(om, cm))
                     + 2 * cs.cross(om, Iqd) + cs.mtimes(I3, qdd))
        M = (cs.cross(cm, g - a) - cs.mtimes(J, al) - cs.cross(om, cs.mtimes(J, om))
             - 2 * (om * cs.trace(Wm) - cs.mtimes(Wm.T, om)) - cs.mtimes(Mtf, qdd))
        W = skew(om)
        W2 = cs.mtimes(W, W)
        Qf = cs.mtimes(I3.T, g - a) - cs.mtimes(Mtf.T, al)
        for i in range(3):
            for j in range(3):
                U_ij = cs.DM(Shat[j, i, :]) + Sq[j][i]  # int rho S_i u_j
                Qf = Qf - W2[i, j] * U_ij - 2 * W[i, j] * Sqd[j][i]
        Qf = (Qf - cs.mtimes(cs.DM(c.Mff), qdd) - cs.mtimes(cs.DM(c.Kff), q)
              - cs.mtimes(cs.DM(c.Cff), qd))
        if c.KG:  # geometric stiffening by the body's own inertia and weight
            ww = cs.sumsqr(om)
            coef = [om[i] * om[j] - (ww if i == j else 0.0)
                    for i, j in ((0, 0), (1, 1), (2, 2), (0, 1), (1, 2), (2, 0))]
            coef += [al[i] for i in range(3)] + [a[i] - g[i] for i in range(3)]
            for cf, KGc in zip(coef, c.KG, strict=True):
                Qf = Qf - cf * cs.mtimes(cs.DM(KGc), q)
        if c.KG_pre is not None:
            Qf = Qf - cs.mtimes(cs.DM(c.KG_pre), q)
        if self._loads:
            Fl, Ml, Ql = self._load_terms(R, q)
            F, M, Qf = F + Fl, M + Ml, Qf + Ql
        out = (F, M, Qf)
        self._cache.clear()
        self._cache[key] = out
        return out

    def _load_terms(self, R: cs.SX, q: cs.SX) -> tuple[Any, Any, Any]:
        """Applied loads: resultant force, moment about frame_a (at the deformed nodes) and
        elastic generalized force, all body components, times ``load_factor``."""
        data = self._data()
        basis = data.basis
        nodes = data.model.mesh.nodes
        lf = self.load_factor
        F = cs.SX.zeros(3)
        M = cs.SX.zeros(3)
        Q = cs.SX.zeros(self._ffrf.k)
        for term in self._loads:
            f = term.f  # (n_dofs, c)
            amp = cs.DM(term.amplitude)
            if term.world:
                n = f.shape[1]
                if n == 3:
                    amp = R.T @ amp
                else:  # force and moment
                    amp = cs.vertcat(R.T @ amp[:3], R.T @ amp[3:])
            fn = f.reshape(-1, 6, f.shape[1])  # (nodes, 6, c)
            Ff = fn[:, :3, :].sum(axis=0)  # (3, c)
            M0 = (np.einsum("abc,nb,ncj->aj", _EPS, nodes, fn[:, :3, :])
                  + fn[:, 3:, :].sum(axis=0))
            # moment of the nodal forces about the displaced nodes: sum u_n x f_n
            Bt = np.asarray(_dense(basis)).reshape(-1, 6, self._ffrf.k)[:, :3, :]  # (n, 3, k)
            Mq = np.einsum("abc,nbk,ncj->ajk", _EPS, Bt, fn[:, :3, :])  # (3, c, k)
            Qe = np.asarray(basis.T @ f)  # (k, c)
            F = F + cs.mtimes(cs.DM(Ff), amp)
            M = M + cs.mtimes(cs.DM(M0), amp)
            for j in range(f.shape[1]):
                M = M + cs.mtimes(cs.DM(Mq[:, j, :]), q) * amp[j]
            Q = Q + cs.mtimes(cs.DM(Qe), amp)
        return lf * F, lf * M, lf * Q

    def wrenches(self, kin, gravity):
        F, M, _ = self._inertial(kin, gravity)
        R = kin["frame_a"].R
        return [("frame_a", R @ F, R @ M)]

    def generalized_forces(self, kin, gravity):
        _, _, Qf = self._inertial(kin, gravity)
        return [(self.qd, Qf)]

    def result_outputs(self, kin: dict[str, Kinematics]) -> dict[str, cs.SX]:
        """Node displacements (body frame) and world positions; element stress resultants."""
        data = self._data()
        mesh = data.model.mesh
        k = kin["frame_a"]
        q = self.q
        out: dict[str, cs.SX] = {}
        names = {int(ids[0]): name for name, ids in mesh.node_sets.items() if len(ids) == 1}
        for n in self._out_nodes:
            u = cs.mtimes(cs.DM(data.phi_t(n)), q)
            r = k.r + k.R @ (cs.DM(data.node_position(n)) + u)
            out[f"node[{n}].u"] = u
            out[f"node[{n}].r"] = r
            if n in names:
                out[f"{names[n]}.u"] = u
                out[f"{names[n]}.r"] = r
        if self._out_resultants:
            Rm = _dense(data.resultant_matrix())
            rn = data.model.element.resultant_names
            nr = len(rn)
            res = cs.mtimes(cs.DM(Rm), q)
            for e in range(mesh.n_elements):
                for i, name in enumerate(rn):
                    out[f"element[{e}].{name}"] = res[e * nr + i]
        return out

    def result_unit(self, name: str) -> str | None:
        """Node displacements and positions in m; an element's resultants in its
        element's units (``resultant_units``: N and N.m for a beam, per metre for a
        shell)."""
        head, _, quantity = name.rpartition(".")
        if quantity in ("u", "r"):
            return "m"
        if head.startswith("element["):
            element = self._data().model.element
            if quantity in element.resultant_names:
                unit = element.resultant_units[element.resultant_names.index(quantity)]
                return unit.replace(" ", ".")
        return None

    # ------------------------------------------------------------------ helpers
    def elastic_energy(self, q: Any) -> float:
        """Strain energy ``0.5 q^T K_ff q`` [J] (numeric ``q``)."""
        qv = np.asarray(q, float)
        return 0.5 * float(qv @ self._ffrf.Kff @ qv)

    def rotating_matrices(self, omega: Sequence[float]) -> tuple[np.ndarray, np.ndarray,
                                                                   np.ndarray]:
        """Linearised elastic equations of the body spinning at a constant ``omega``.

        ``M q'' + G q' + K q = 0`` about the undeformed state, with the frame spinning at
        ``omega`` [rad/s] (body components) about its fixed origin:
        ``G = 2 sum_ab omega~_ab Sbar_ab^T``-form gyroscopic (Coriolis) matrix
        (skew-symmetric), ``K = K_ff + omega~^2 spin softening + K_G(omega)`` (geometric
        stiffening if on).

        Returns
        -------
        M, G, K : ndarray (k, k)
        """
        c = self._ffrf
        w = np.asarray(omega, float).ravel()
        W = np.array([[0, -w[2], w[1]], [w[2], 0, -w[0]], [-w[1], w[0], 0]])
        W2 = W @ W
        G = np.zeros((c.k, c.k))
        Ks = np.zeros((c.k, c.k))
        for i in range(3):
            for j in range(3):
                # Qf gets -2 W_ij Sbar_ji^T q'  and  -W2_ij Sbar_ji^T q  (int S_i S_j)
                G += 2 * W[i, j] * c.Sbar[j][i].T
                Ks += W2[i, j] * c.Sbar[j][i].T
        K = c.Kff + Ks
        if c.KG:
            ww = float(w @ w)
            coef = [w[i] * w[j] - (ww if i == j else 0.0)
                    for i, j in ((0, 0), (1, 1), (2, 2), (0, 1), (1, 2), (2, 0))]
            for cf, KGc in zip(coef, c.KG[:6], strict=True):
                K = K + cf * KGc
        return c.Mff.copy(), G, K

    def rotating_frequencies(self, omega: Sequence[float]) -> np.ndarray:
        """Natural frequencies [Hz] of the body spinning at ``omega`` (gyroscopic
        quadratic eigenproblem of :meth:`rotating_matrices`), ascending."""
        M, G, K = self.rotating_matrices(omega)
        n = M.shape[0]
        Minv = np.linalg.inv(M)
        A = np.block([[np.zeros((n, n)), np.eye(n)], [-Minv @ K, -Minv @ G]])
        lam = np.linalg.eigvals(A)
        f = np.sort(np.abs(lam.imag[lam.imag > 0])) / (2 * np.pi)
        return f


class _Attachment(MultibodyComponent):
    """The arm edge frame_a -> node frame of a :class:`FlexibleBody` (motion depends on q)."""

    frame_a = Frame("body reference frame")
    frame_b = Frame("attachment frame")
    mb_edges = [MBEdge("frame_a", "frame_b", MBPriority.ARM, EdgeRole.ARM)]

    def tree_motion(self) -> TreeMotion:
        return self.__dict__["_body"].node_motion(self.__dict__["_node"])

    def cut(self, ka, kb) -> CutEquations:
        """As a chord (a loop closed through the node frame): the frame on the deformed
        node, with the node's orientation ``R_a R_rel(q)`` (3 + 3 constraints)."""
        m = self.__dict__["_body"].node_motion(self.__dict__["_node"])
        shifted = Kinematics(ka.r + ka.R @ m.r_rel, ka.R, ka.v, ka.w)
        c1, l1 = position_constraints(shifted, kb)
        c2, l2 = orientation_constraints(ka, kb, m.R_rel)
        return CutEquations([], c1 + c2, l1 + l2)

