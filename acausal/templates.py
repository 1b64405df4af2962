"""Equations per component class: one template for a group of alike instances.

Instances of one class with the same structure (the same variable sizes and structural
parameter values, no parameter given as a function of time, graph-domain ports only, no
attribute of their own besides the framework's) write the same equations up to the
renaming of their symbols. The flatten pass calls ``equations()`` once per such group, on
placeholder symbols, and instantiates the template for all members at once: one CasADi
operation per instruction of the template on columns of the members' values
(:func:`~acausal.fastsx.run_columns`; the template mapped over the members where that
would make other nodes), instead of one CasADi operation per scalar operation per
instance.

The evaluation replays the template's operations through the same constructor
(``SXElem::binary`` and friends) as the per-instance construction, on the same actual
symbols and in the same order, so the expressions are the same as the per-instance ones,
including CasADi's construction-time simplifications (``x - x``, ``x * x``...). Anything a
template cannot represent exactly (a ``when``, ``der`` of an expression, a failure, symbols
of its own) sends the group back to the per-instance path, which reports errors with the
instance's name.
"""

from __future__ import annotations

from itertools import repeat
from operator import attrgetter, itemgetter
from operator import eq as _eq
from typing import Any, NamedTuple

import casadi as cs
import numpy as np

from .component import (
    Component,
    Model,
    Parameter,
    Port,
    Variable,
    bind_port,
    collect_equations,
    followers,
    has_parameter_check,
)
from .fastsx import column_program, run_columns
from .functions import no_relation_of
from .symbols import FlatParameter, FlatVariable, LazyColumn, grow_ints, start_values

__all__ = ["MIN_GROUP", "Group", "Lead", "Rows", "Template", "NotTemplate", "group_key",
           "group_keys", "leads_of"]

#: groups smaller than this keep the per-instance path: a template has a fixed cost (a
#: placeholder call of ``equations()``, a CasADi function and its map) of about the
#: per-instance cost of 20 to 35 small instances (flatten CPU, templates against none, of
#: the mass-spring-damper chain and the RC ladder with 16 to 64 stages: break-even near 24
#: and 35 stages)
MIN_GROUP = 40

# what Component.__init__ puts into an instance's __dict__: anything else is the
# instance's own state, which its equations() may read
_FRAMEWORK_KEYS = frozenset({"_id", "_name", "_parent", "_binding", "_children",
                             "_connections", "_params", "_vars", "_ports"})
# names whose use in equations() reads the instance beyond its declarations
_INTROSPECTION = frozenset({
    "_params", "_vars", "_ports", "_children", "__dict__", "_name", "_parent", "_id",
    "path", "_path_or_class", "_describe", "parameters", "variables", "ports", "children",
    "walk", "vars", "id", "getattr", "hasattr", "setattr", "type", "__class__",
    "symbols", "current", "pre", "when", "reinit", "assign", "sample", "inspect",
    "globals", "locals", "eval", "exec"})


# (a variable's declared attributes the members' unknowns share, unless edited per
# instance; its start value and whether it is fixed)
#: what a variable instance has of its own beyond start and fixed (None: its declaration's
#: unit, nominal, hint, state_priority ...; see component.VariableInstance)
_SHARED = attrgetter("_own")
_START = attrgetter("_start")
_FIXED = attrgetter("_fixed")  # (VariableInstance.fixed, read from its slot)
_DER = attrgetter("der")
_UNIT = attrgetter("_spec.unit")  # (FlatVariable.unit, without its property)
_ORIGIN = attrgetter("origin")
_PORTS = attrgetter("_ports")


class NotTemplate(Exception):
    """The group's equations cannot be written as a template (per-instance path)."""


class _ClassInfo:
    """Per class: whether its instances may share a template, and its structural names."""

    def __init__(self, cls: type) -> None:
        methods = [k.__dict__["equations"] for k in cls.__mro__
                   if "equations" in k.__dict__ and k not in (Component, Model)]
        self.structural = frozenset(p.name for p in cls._declarations(Parameter)  # type: ignore[attr-defined]
                                    if p.structural)
        variables = cls._declarations(Variable)  # type: ignore[attr-defined]
        seen: set[int] = set()
        # (parameters that follow others, and a check of them together, take the
        # per-instance path, where they are bound and checked)
        ok = (bool(methods)
                   and all(_plain(getattr(m, "__code__", None), cls, seen,
                                  getattr(m, "__globals__", {})) for m in methods)
                   and all(p.domain.graph for p in cls._declarations(Port))  # type: ignore[attr-defined]
                   and not any(v.discrete for v in variables)
                   and not followers(cls) and not has_parameter_check(cls))
        #: the instances' part of the group key that is the class's (None: the class
        #: keeps the per-instance path)
        self.key = (cls, *(v.size for v in variables)) if ok else None
        self.key1 = (self.key,)  # (the group key of an instance without structural values)


def _plain(code: Any, cls: type, seen: set[int], names: dict[str, Any]) -> bool:
    """Whether a code object, its nested functions, and the methods, properties and
    functions of the user's modules it names (``names``: its globals) read no instance
    introspection."""
    if code is None:
        return False
    if id(code) in seen:
        return True
    seen.add(id(code))
    if _INTROSPECTION.intersection(code.co_names):
        return False
    for name in code.co_names:  # self.helper(), helper(self): their code too
        attr = next((k.__dict__[name] for k in cls.__mro__ if name in k.__dict__),
                    names.get(name))
        if isinstance(attr, property):
            attr = attr.fget
        elif isinstance(attr, (staticmethod, classmethod)):
            attr = attr.__func__
        if not hasattr(attr, "__code__") or any(
                k.__dict__.get(name) is attr for k in (Component, Model)):
            continue  # (not Python code, or the framework's own: self.time)
        if str(getattr(attr, "__module__", "")).split(".")[0] in _TRUSTED:
            continue  # der(), no_event(), numpy and casadi functions
        body: Any = attr
        if not _plain(body.__code__, cls, seen, getattr(body, "__globals__", names)):
            return False
    return all(_plain(k, cls, seen, names) for k in code.co_consts
               if hasattr(k, "co_names"))


_TRUSTED = frozenset({"acausal", "casadi", "numpy", "math", "builtins"})


_INFO: dict[type, _ClassInfo] = {}


def class_info(cls: type) -> _ClassInfo:
    info = _INFO.get(cls)
    if info is None:
        info = _INFO[cls] = _ClassInfo(cls)
    return info


def group_key(c: Component) -> tuple[Any, ...] | None:
    """What makes two instances write different equations, or None if ``c`` keeps the
    per-instance path."""
    return group_keys([c])[0]


def group_keys(comps: list[Component]) -> list[tuple[Any, ...] | None]:
    """:func:`group_key` of every component."""
    out: list[tuple[Any, ...] | None] = []
    framework, n_framework = _FRAMEWORK_KEYS, len(_FRAMEWORK_KEYS)
    infos: dict[type, _ClassInfo] = {}
    for c in comps:
        d = c.__dict__
        if len(d) != n_framework or not framework.issuperset(d) or d["_children"]:
            out.append(None)
            continue
        cls = type(c)
        info = infos.get(cls)
        if info is None:
            info = infos[cls] = class_info(cls)
        if info.key is None:
            out.append(None)
            continue
        structural = info.structural
        if not structural:  # (the common case: the class's key, unless a function of t)
            out.append(None if any(map(callable, d["_params"].values())) else info.key1)
            continue
        parts = [info.key]  # (the class and its variables' sizes: its declarations')
        for name, v in d["_params"].items():
            if name in structural:
                try:
                    hash(v)
                except TypeError:
                    break
                parts.append((type(v), v))
            elif callable(v):
                break
        else:
            out.append(tuple(parts))
            continue
        out.append(None)
    return out


class _TemplateTable:
    """The symbol table ``der()`` and ``self.time`` see while a template is written:
    ``der`` of a placeholder is a new placeholder; anything else is not a template."""

    def __init__(self, t: cs.SX, names: set[str]) -> None:
        self.t = t
        self.names = names  # the placeholders der() may be taken of
        self.calls: list[str] = []  # the placeholder of each der placeholder, in order
        self.ders: dict[str, cs.SX] = {}

    def der(self, expr: Any) -> cs.SX:
        if not isinstance(expr, cs.SX):
            try:
                expr = cs.SX(expr)
            except Exception as exc:  # noqa: BLE001
                raise NotTemplate from exc
        if expr.is_constant():
            return cs.SX.zeros(expr.shape)
        out = []
        for k in range(expr.numel()):
            e = expr[k] if expr.numel() > 1 else expr
            if not e.is_symbolic() or e.name() not in self.names:
                raise NotTemplate  # der of an expression: the per-instance chain rule
            name = e.name()
            d = self.ders.get(name)
            if d is None:
                d = self.ders[name] = cs.SX.sym(f"_der{len(self.calls)}")
                self.calls.append(name)
                self.names.add(d.name())
            out.append(d)
        return out[0] if expr.numel() == 1 and expr.is_scalar() else cs.reshape(
            cs.vertcat(*out), expr.shape)

    def __getattr__(self, name: str) -> Any:
        raise NotTemplate(name)  # pre(), new variables...: the per-instance path


class Template:
    """The equations of a representative instance on placeholder symbols.

    Inputs, in order (``slots``): every variable's elements (``("var", offset)``: the
    offset among the instance's scalar unknowns), every numeric parameter
    (``("param", name)``), every port's across and through elements
    (``("port", port name, quantity, element)``), every ``der`` placeholder
    (``("der", slot of its argument)``), then the symbols every member uses as they are
    (``("shared", symbol)``: the time, the ``no_event`` marker).
    """

    def __init__(self, c: Component, t: cs.SX) -> None:
        from . import symbols
        from .relations import NO_EVENT  # (relations imports the flatten pass)

        d = c.__dict__
        slots: list[tuple[Any, ...]] = []
        syms: list[cs.SX] = []
        binding: dict[str, Any] = {}
        offset = 0
        for name, vi in d["_vars"].items():
            s = cs.SX.sym(f"_v.{name}", vi.size)
            binding[name] = s
            for k in range(vi.size):
                slots.append(("var", offset + k))
                syms.append(s[k] if vi.size > 1 else s)
            offset += vi.size
        self.n_vars = offset
        structural = class_info(type(c)).structural
        for name, value in d["_params"].items():
            if name in structural:
                binding[name] = value
                continue
            s = cs.SX.sym(f"_p.{name}")
            binding[name] = s
            slots.append(("param", name))
            syms.append(s)
        ports: dict[str, dict[str, cs.SX]] = {}
        for pname, p in d["_ports"].items():
            pb: dict[str, cs.SX] = {}
            for q in (p.domain.across, p.domain.through):
                s = cs.SX.sym(f"_{pname}.{q.name}", q.size)
                pb[q.name] = s
                for k in range(q.size):
                    slots.append(("port", pname, q.name, k if q.size > 1 else -1))
                    syms.append(s[k] if q.size > 1 else s)
            ports[pname] = pb
        slot_of = {s.name(): k for k, s in enumerate(syms)}
        table = _TemplateTable(t, set(slot_of))
        try:
            with _bound(c, binding, ports), symbols.active(table):  # type: ignore[arg-type]
                eqs = collect_equations(c, "equations")
            res, src, is_eq = _template_residuals(eqs)
        except NotTemplate:
            raise
        except Exception as exc:  # noqa: BLE001 - the per-instance path reports it
            raise NotTemplate from exc
        self.n_in = len(slots)  # slots before the der placeholders
        for name in table.calls:
            slots.append(("der", slot_of[name]))
            syms.append(table.ders[name])
            slot_of[syms[-1].name()] = len(syms) - 1
        #: per equation, the unknowns a side of it is alone (the block solution's
        #: coefficient ±1, :func:`_leads`)
        self.leads = _leads(src, is_eq, slots, slot_of, self.n_in, syms[self.n_in:])
        R, S = cs.vertcat(*res), cs.vertcat(*src)
        known = {s.element_hash() for s in syms}
        shared = {t.element_hash(), NO_EVENT.element_hash()}
        for s in cs.symvar(cs.vertcat(R, S)):
            h = s.element_hash()
            if h in known:
                continue
            if h not in shared:
                raise NotTemplate  # a symbol of its own: one per instance
            slots.append(("shared", s))  # the same symbol for every member
            syms.append(s)
        try:
            # (an input per slot; the residuals and the sources apart: the sources are
            # made when read, most builds read those of a few members only)
            self.f_res = cs.Function("template", syms, [R])
            self.f_src = cs.Function("template_sources", syms, [S])
        except Exception as exc:  # noqa: BLE001 - free symbols of its own
            raise NotTemplate from exc
        self.slots = slots
        self.is_eq = is_eq
        #: the residuals' operations on whole columns of the members' inputs
        #: (:func:`~acausal.fastsx.run_columns`), or None: mapped over the members
        self.program = column_program(self.f_res, R, [s[0] == "shared" for s in slots])
        # the structural incidence of each residual on the slots (compressed rows, sorted
        # slot indices), once for the class: a member's row incidence is its composition
        # with what each slot is for the member (structure.template_incidence)
        ptr, col = cs.jacobian_sparsity(R, cs.vertcat(*syms)).get_crs()
        self.sparsity = (np.asarray(ptr, dtype=np.int64), np.asarray(col, dtype=np.int64))
        # whether the equations hold no relation and no kink of any input, proven once
        # for the class: the members' inputs are symbols and the graph's signed sums of
        # symbols, so their equations hold none either
        self.relation_free = no_relation_of(R, cs.vertcat(*syms))
        self.n_eq = len(res)
        self.n_der = len(table.calls)


def _leads(src: list[cs.SX], is_eq: list[bool], slots: list[tuple[Any, ...]],
           slot_of: dict[str, int], n_in: int, ders: list[cs.SX]) -> list[Lead | None]:
    """Per equation ``lhs == rhs``, the unknowns alone on a side: ``lhs`` a variable's
    element (or its ``der``) that ``rhs`` does not hold, whose coefficient in the residual
    ``lhs - rhs`` of every member is exactly 1 (``rhs`` alone: -1), decided once for the
    class (the block solution takes these coefficients without differentiating: most
    equations of a large model are ``x == ...``). A member's symbol of a variable slot
    is its own unknown, which no other slot's value holds (another unknown, a
    parameter, a port quantity of the graph's unknowns), so the member's ``rhs`` holds
    it no more than the template's; CasADi's construction-time simplifications of
    ``x - rhs`` (``x``, ``x + y`` for ``rhs = -y``) keep its coefficient. Else ``lhs``
    a parameter times such an unknown (``m * a == f``): its coefficient is the member's
    parameter (:attr:`Lead.scale`). ``ders``: the ``der`` placeholders
    (:attr:`Lead.steady`)."""
    out: list[Lead | None] = []
    der_col = cs.vertcat(*ders) if ders else None
    for e, eq in zip(src, is_eq, strict=True):
        if not eq:
            out.append(None)
            continue
        lhs, rhs = e.dep(0), e.dep(1)
        sides = (_lead(lhs, rhs, slots, slot_of, n_in), _lead(rhs, lhs, slots, slot_of, n_in))
        scale = None
        if sides == (None, None):
            scaled = _scaled_lead(lhs, rhs, slots, slot_of, n_in)
            if scaled is None:
                out.append(None)
                continue
            sides, scale = (scaled[0], None), scaled[1]
        # (a side whose other holds no der placeholder: differentiated, the lead's
        # derivative has the same coefficient)
        steady = tuple(s is not None and (der_col is None or not cs.depends_on(o, der_col))
                       for s, o in zip(sides, (rhs, lhs), strict=True))
        out.append(Lead(*sides, scale, steady))  # type: ignore[arg-type]
    return out


def _lead(side: cs.SX, other: cs.SX, slots: list[tuple[Any, ...]], slot_of: dict[str, int],
          n_in: int) -> tuple[str, int] | None:
    """``("var", offset)`` or ``("der", placeholder)``, if ``side`` is a variable slot or
    the ``der`` of one and ``other`` does not hold it; else None."""
    if not side.is_symbolic():
        return None
    a = slot_of.get(side.name())
    if a is None:
        return None
    kind, arg = slots[a][0], slots[a][1]
    if kind == "der" and slots[arg][0] == "var":
        lead = ("der", a - n_in)
    elif kind == "var":
        lead = ("var", arg)
    else:
        return None
    return None if cs.depends_on(other, side) else lead


def _scaled_lead(side: cs.SX, other: cs.SX, slots: list[tuple[Any, ...]],
                 slot_of: dict[str, int], n_in: int) -> tuple[tuple[str, int], str] | None:
    """``(lead, parameter name)`` if ``side`` is a parameter slot times a lead
    (:func:`_lead`), in either order; else None. (The derivative of ``p * u`` in ``u``,
    ``0 * u + p * 1``, is the node ``p`` itself after CasADi's simplifications.)"""
    if not side.is_op(cs.OP_MUL):
        return None
    a, b = side.dep(0), side.dep(1)
    for p, u in ((a, b), (b, a)):
        k = slot_of.get(p.name()) if p.is_symbolic() else None
        if k is not None and slots[k][0] == "param":
            lead = _lead(u, other, slots, slot_of, n_in)
            if lead is not None:
                return lead, slots[k][1]
    return None


class Lead(NamedTuple):
    """:attr:`Template.leads` of an equation: the unknown alone on the left side
    (coefficient 1) and on the right (-1), or None; of a template, its slot
    (``("var", offset)``, ``("der", placeholder)``); of a group, the column of its
    members' symbols (a :class:`~acausal.symbols.LazyColumn`, the ``_sym`` of the
    unknowns: a member's is the one whose ``_row`` is the member's)."""

    lhs: Any
    rhs: Any
    #: the left side is a parameter times ``lhs`` (``rhs`` None), whose coefficient is
    #: the parameter: of a template, its name; of a group, the column of its members'
    #: parameters (a dense column of symbols)
    scale: Any = None
    #: per side, whether the other side holds no derivative: the time derivative of the
    #: residual has the lead's derivative with the same coefficient (a row made by index
    #: reduction)
    steady: tuple[bool, bool] = (False, False)


#: a relation is no equation (the per-instance path says so)
_RELATION_OPS = frozenset({cs.OP_NE, cs.OP_LT, cs.OP_LE, cs.OP_AND, cs.OP_OR, cs.OP_NOT})


def _template_residuals(eqs: list[Any]) -> tuple[list[cs.SX], list[cs.SX], list[bool]]:
    """Residuals and sources of the template's equations, as the per-instance
    normalisation forms them (``lhs - rhs`` of ``lhs == rhs``, else the expression)."""
    from .discrete import When

    res: list[cs.SX] = []
    src: list[cs.SX] = []
    is_eq: list[bool] = []
    for eq in eqs:
        if isinstance(eq, (When, bool)) or type(eq).__name__ == "bool_":
            raise NotTemplate
        sx = eq if isinstance(eq, cs.SX) else cs.SX(eq)
        n = sx.numel()
        for k in range(n):
            e = sx if n == 1 else sx[k]
            if e.nnz() != 1 or e.is_constant() or e.op() in _RELATION_OPS:
                # (a structural zero: kept as written per instance; a constant or a
                # relation: reported by the per-instance path)
                raise NotTemplate
            eqop = e.is_op(cs.OP_EQ)
            src.append(e)
            res.append(e.dep(0) - e.dep(1) if eqop else e)
            is_eq.append(eqop)
    if not res:
        raise NotTemplate
    return res, src, is_eq


class _bound:
    """Bind a component (and its ports) to placeholders for the duration of a block."""

    def __init__(self, c: Component, binding: dict[str, Any],
                 ports: dict[str, dict[str, cs.SX]]) -> None:
        self.c, self.binding, self.ports = c, binding, ports

    def __enter__(self) -> None:
        d = self.c.__dict__
        self.saved = (d["_binding"], [p._binding for p in d["_ports"].values()])
        d["_binding"] = self.binding
        for name, p in d["_ports"].items():
            bind_port(p, self.ports[name])

    def __exit__(self, *exc: Any) -> None:
        d = self.c.__dict__
        d["_binding"] = self.saved[0]
        for p, b in zip(d["_ports"].values(), self.saved[1], strict=True):
            bind_port(p, b)


class MemberBinding:
    """The binding of a template group's member (its variables' and parameters' symbols,
    its structural values): the symbols are rows of the group's columns, made only if
    an equation reads them (a parent's, or the member's initial equations)."""

    __slots__ = ("at", "values", "i")

    def __init__(self, at: dict[str, int], values: list[Any], i: int) -> None:
        self.at = at  # name -> its list in ``values`` (shared by the members)
        self.values = values
        self.i = i

    def __contains__(self, name: object) -> bool:
        return name in self.at

    def __getitem__(self, name: str) -> Any:
        return self.values[self.at[name]][self.i]

    def keys(self) -> Any:
        return self.at.keys()


class Group:
    """The members of one template (in model order) and their actual symbols."""

    def __init__(self, template: Template, members: list[Component]) -> None:
        self.tpl = template
        self.members = members
        self.pos = {id(c): i for i, c in enumerate(members)}
        self.var_base = [0] * len(members)  # index of a member's first unknown
        self.param_base = [0] * len(members)  # index of a member's first parameter
        self.var_names: list[list[str]] = []  # per scalar offset, per member
        self.var_elems: list[Any] = []  # per scalar offset: the members' symbols (LazyColumn)
        self.var_cols: list[cs.SX] = []
        self.param_names: dict[str, list[str]] = {}
        self.param_elems: dict[str, Any] = {}  # (LazyColumn)
        self.param_cols: dict[str, cs.SX] = {}
        #: per der placeholder, per member: its derivative, or (one made here, whose
        #: symbol is the member's row of der_made's column) that column
        self.ders: list[list[Any]] = [[] for _ in range(template.n_der)]
        self.der_made: list[Any] = []  # per der placeholder: (names, column, elements)
        self.der_fresh: list[bool] = []  # whether every member's der(v) is of der_made
        #: per der placeholder: the unknowns made of der_made and of which members
        self.der_at: list[tuple[list[int], list[int]]] = [
            ([], []) for _ in range(template.n_der)]
        self.res_col = cs.SX(0, 1)  # the members' residuals, member after member
        #: the residuals and the sources (``lhs == rhs``) of the members' equations,
        #: member after member, each made when first read
        self.res = LazyColumn(self.res_col)
        self.src = LazyColumn(self.res_col)
        self.flat: list[Any] = []  # the members' FlatEquations, member after member
        #: each member's path (or class name, at the root) and its ``path.`` (the flatten
        #: pass sets them)
        self.origins: list[str] = []
        self.prefixes: list[str] = []
        self.rows: list[int] = []  # ``0 .. n - 1``: one int object each, shared
        #: the integers as shared objects (:func:`~acausal.symbols.grow_ints`), set by the
        #: flatten pass
        self.ints: list[int] = []
        #: the graph's quantities (:class:`~acausal.graph_columns.GraphColumns`): the
        #: members' port quantities as rows
        self.ports: Any = None
        cls = type(members[0])
        self.param_decls = {p.name: p for p in cls._declarations(Parameter)}  # type: ignore[attr-defined]

    def names(self, prefixes: list[str]) -> list[list[str]]:
        """The names of the symbols the group needs, one list per declaration: every
        scalar variable element, every numeric parameter, every ``der(v)`` the template
        takes (``prefixes``: each member's ``path.``). :meth:`take` gets them made."""
        c0 = self.members[0].__dict__
        for name, vi in c0["_vars"].items():
            for k in range(vi.size):
                suffix = f"{name}_{k}" if vi.size > 1 else name
                self.var_names.append([p + suffix for p in prefixes])
        params = [slot[1] for slot in self.tpl.slots if slot[0] == "param"]
        for name in params:
            self.param_names[name] = [p + name for p in prefixes]
        slots, n0 = self.tpl.slots, self.tpl.n_in
        ders: list[list[str]] = []
        for j in range(self.tpl.n_der):
            a = slots[n0 + j][1]
            ders.append([f"der({s})" for s in self.var_names[slots[a][1]]]
                        if slots[a][0] == "var" else [])
        self._der_names = ders
        # per der placeholder: the offset of its variable among the member's unknowns,
        # or (not of a variable) the slot of its argument
        self._der_offsets = [slots[slots[n0 + j][1]][1] if ders[j] else slots[n0 + j][1]
                             for j in range(self.tpl.n_der)]
        return [*self.var_names, *self.param_names.values(), *ders]

    def take(self, made: list[tuple[cs.SX, list[cs.SX]]]) -> None:
        """The symbols of :meth:`names`, in its order: ``(column, elements)`` each."""
        nv, npar = len(self.var_names), len(self.param_names)
        self.var_cols = [m[0] for m in made[:nv]]
        self.var_elems = [m[1] for m in made[:nv]]
        for name, m in zip(self.param_names, made[nv:nv + npar], strict=True):
            self.param_cols[name], self.param_elems[name] = m
        for names, m in zip(self._der_names, made[nv + npar:], strict=True):
            # (a der placeholder of something else than a variable: made by replay())
            self.der_made.append((names, *m) if names else None)
        self.der_fresh = [d is not None for d in self.der_made]

    def declarations(self, origins: list[str], prefixes: list[str]) -> Rows:
        """Every member's unknowns, parameters, outputs and bound structural values, made
        for all members at once as each member's own declaration makes them, member after
        member; binds every member's symbols (``origins``, ``prefixes``: each member's
        path or class name, and its ``path.``)."""
        members, n = self.members, len(self.members)
        dicts = [c.__dict__ for c in members]
        c0 = dicts[0]
        rows = self.rows = grow_ints(self.ints, n)[:n]  # (the shared int objects)
        fvs: list[list[Any]] = []  # per scalar offset, per member
        out_names: list[list[str]] = []  # per output, per member
        out_syms: list[list[Any]] = []
        keys: list[str] = []  # the binding's keys, and per key its value per member
        values: list[list[Any]] = []
        o = 0
        var_dicts = list(map(itemgetter("_vars"), dicts))
        for name, vi0 in c0["_vars"].items():
            vis = list(map(itemgetter(name), var_dicts))
            size = vi0.size
            # (start and fixed are the instance's own; the rest is the class's declaration
            # unless an instance edited it)
            fixed = list(map(_FIXED, vis))
            if size == 1:
                names, elems = self.var_names[o], self.var_elems[o]
                starts1 = list(map(_START, vis))
                if set(map(type, starts1)) != {float}:  # (floats: start_values' own)
                    starts1 = [start_values(vi._start, 1, nm)[0]
                               for vi, nm in zip(vis, names, strict=True)]
                made = _flat_variables(names, elems, starts1, fixed, vis, origins, rows)
                fvs.append(made)
                # (an unknown's output is its symbol: the variable stands for it until read)
                out_names.append(names)
                out_syms.append(made)
                values.append(elems)
            else:
                starts = [start_values(vi._start, size, p + name)
                          for vi, p in zip(vis, prefixes, strict=True)]
                for k in range(size):
                    fvs.append(_flat_variables(self.var_names[o + k], self.var_elems[o + k],
                                               [s[k] for s in starts], fixed, vis, origins,
                                               rows))
                syms = [cs.vertcat(*[self.var_elems[o + k][i] for k in range(size)])
                        for i in range(n)]
                out_names.append([p + name for p in prefixes])
                out_syms.append(syms)
                values.append(syms)
            keys.append(name)
            o += size
        pars: list[list[Any]] = []
        bound: list[list[Any]] = []
        par_dicts = list(map(itemgetter("_params"), dicts))
        for name in c0["_params"]:
            given = list(map(itemgetter(name), par_dicts))
            keys.append(name)
            if name not in self.param_elems:  # structural
                values.append(given)
                bound.append([(c, name, v) for c, v in zip(members, given, strict=True)])
                continue
            elems = self.param_elems[name]
            values.append(elems)
            decl = self.param_decls[name]
            spec = FlatParameter.spec(decl.unit, decl.doc, decl, "parameter")
            pars.append(FlatParameter.many(self.param_names[name], repeat(elems),
                                           map(float, given), members, rows, repeat(spec)))
        # (read by a member's initial_equations(), which stay per instance, and by the
        # equations of the models that contain it)
        at = {k: a for a, k in enumerate(keys)}
        for d, b in zip(dicts, map(MemberBinding, repeat(at), repeat(values), rows),
                        strict=True):
            d["_binding"] = b
        return Rows(_interleave(fvs, n), _interleave(out_names, n), _interleave(out_syms, n),
                    _interleave(pars, n), _interleave(bound, n))

    def replay(self, c: Component, table: Any) -> None:
        """The derivatives the member's equations take, created in the order its own
        ``equations()`` would create them."""
        i = self.pos[id(c)]
        base = self.var_base[i]
        variables, index = table.variables, table.index
        for j, offset in enumerate(self._der_offsets):
            made = self.der_made[j]
            if made is not None:
                # (the indices as the shared integer objects: grow_ints)
                pool = grow_ints(self.ints, len(variables) + 1)
                k = pool[base + offset]
                v = variables[k]
                if v.der is None:  # (SymbolTable.add_derivative, inline)
                    at = self.der_at[j]
                    v.der = idx = pool[len(variables)]
                    at[0].append(idx)
                    at[1].append(i)
                    name = made[0][i]
                    index[name] = idx
                    variables.append(FlatVariable(
                        name, made[2], 0.0, False, f"{v.unit}/s" if v.unit else "1/s", None,
                        0, v.origin, k, None, "", None, i))
                    self.ders[j].append(made[2])
                else:
                    self.der_fresh[j] = False
                    self.ders[j].append(variables[v.der].sym)
            else:
                self.ders[j].append(table.der(self._actual(c, i, offset)))

    def replay_run(self, i: int, r: int, table: Any) -> None:
        """:meth:`replay` of the members ``i`` to ``i + r - 1``, which come one after
        the other in the model: when every derivative they take is of one of their
        variables and new (the common case), all made at once in the same order."""
        variables = table.variables
        if r > 1 and None not in self.der_made:  # (every der placeholder of a variable)
            bases = np.asarray(self.var_base[i:i + r], dtype=np.int64)
            pool = grow_ints(self.ints, len(variables) + r * len(self._der_offsets))
            ks = [list(map(pool.__getitem__, (bases + off).tolist()))
                  for off in self._der_offsets]
            ofs = [list(map(variables.__getitem__, col)) for col in ks]
        if r == 1 or None in self.der_made or any(
                list(map(_DER, of)).count(None) != r for of in ofs):
            for c in self.members[i:i + r]:
                self.replay(c, table)
            return
        nd, first = len(ks), len(variables)
        rows = self.rows[i:i + r]  # (the members' rows: shared int objects)
        cols = []
        for j, (col, of) in enumerate(zip(ks, ofs, strict=True)):
            names, _, syms = self.der_made[j]
            names = names[i:i + r]
            at = pool[first + j:first + r * nd:nd]
            for v, idx in zip(of, at, strict=True):
                v.der = idx
            # (one unit string per unit: a hundred thousand derivatives share a few)
            units = list(map(_UNIT, of))
            per = {u: FlatVariable.spec(f"{u}/s" if u else "1/s", False, None, 0, "", None)
                   for u in set(units)}
            cols.append(FlatVariable.many(names, repeat(syms), repeat(0.0), map(_ORIGIN, of),
                                          col, rows, map(per.__getitem__, units)))
            self.der_at[j][0].extend(at)
            self.der_at[j][1].extend(rows)
            table.index.update(zip(names, at, strict=True))
            self.ders[j].extend(repeat(syms, r))
        variables.extend(_interleave(cols, r))

    def _actual(self, c: Component, i: int, a: int) -> Any:
        """The member's value of input slot ``a`` (not a variable)."""
        slot = self.tpl.slots[a]
        kind = slot[0]
        if kind == "param":
            return self.param_elems[slot[1]][i]
        if kind == "der":
            d = self.ders[a - self.tpl.n_in][i]
            return d[i] if type(d) is LazyColumn else d
        _, pname, q, k = slot
        v = self.ports.value(c.__dict__["_ports"][pname], q)
        return v if k < 0 else v[k]

    def evaluate(self) -> None:
        """Every member's residuals and sources: the template's operations on columns of
        the members' values, one column per input slot (:func:`~acausal.fastsx.
        run_columns`), or the template mapped over the members (which takes the columns
        as they are; stacking them in one matrix cost more than the evaluation)."""
        n = len(self.members)
        cols: list[cs.SX] = []  # per input slot (a shared slot: its symbol)
        # (per port name, the members' ports and their positions among the graph's: one
        # search for all its quantities)
        ports_of: dict[str, tuple[list[Any], Any]] = {}
        for a, slot in enumerate(self.tpl.slots):
            kind = slot[0]
            if kind == "var":
                cols.append(self.var_cols[slot[1]])
            elif kind == "param":
                cols.append(self.param_cols[slot[1]])
            elif kind == "shared":
                cols.append(slot[1])
            elif kind == "der":
                j = a - self.tpl.n_in
                made = self.der_made[j]
                cols.append(made[1] if self.der_fresh[j] else
                            cs.vertcat(*[d[i] if type(d) is LazyColumn else d
                                         for i, d in enumerate(self.ders[j])]))
            else:  # a port quantity
                _, pname, q, k = slot
                entry = ports_of.get(pname)
                if entry is None:
                    ports = list(map(itemgetter(pname), map(_PORTS, self.members)))
                    entry = ports_of[pname] = (ports, self.ports.positions(ports))
                cols.append(self.ports.column(entry[0], q, k, entry[1]))
        args = [cs.repmat(x, 1, n) if slot[0] == "shared" else x
                for x, slot in zip(cols, self.tpl.slots, strict=True)]
        program = self.tpl.program
        res = None if program is None else run_columns(program, cols, n, self.tpl.n_eq)
        self.res_col = (cs.vec(cs.densify(self.tpl.f_res.map(n)(*args))) if res is None
                        else res)
        self.res = LazyColumn(self.res_col)
        self.src = LazyColumn(None, _Sources(self.tpl.f_src, args, n, self.tpl.n_eq,
                                             self._leads(), self.res),
                              n * self.tpl.n_eq)

    def _leads(self) -> list[Lead | None]:
        """The template's :attr:`~Template.leads` with each slot as the column of the
        members' symbols (the ``_sym`` of their unknowns)."""
        def col(slot: Any) -> Any:
            if slot is None:
                return None
            if slot[0] == "var":
                return self.var_elems[slot[1]]
            made = self.der_made[slot[1]]
            return None if made is None else made[2]

        return [None if lead is None else
                Lead(col(lead.lhs), col(lead.rhs),
                     None if lead.scale is None else self.param_cols[lead.scale],
                     lead.steady)
                for lead in self.tpl.leads]


class _Sources:
    """The sources (``lhs == rhs``) of a group's equations, member after member, made
    when read (:class:`~acausal.symbols.LazyColumn`): ``k``, the source of equation ``k``
    alone (the template evaluated for its member); None, all of them (mapped over the
    members). The same operations on the same inputs as the residuals'."""

    __slots__ = ("f", "args", "n", "n_eq", "last", "leads", "res")

    def __init__(self, f: cs.Function, args: list[cs.SX], n: int, n_eq: int,
                 leads: list[Lead | None] | None = None, res: Any = None) -> None:
        self.f = f  # the template's sources
        self.args = args  # its inputs: per input, the members' values (a row or a column)
        self.n = n
        self.n_eq = n_eq
        self.last: tuple[int, list[cs.SX]] | None = None  # a member's sources, last made
        #: per equation of the template, its :class:`Lead`, and the members' residuals
        #: as the group made them (a LazyColumn: an equation whose residual it still is
        #: was not rewritten), read by the block solution through the equations' source
        #: column, whose maker this is
        self.leads = leads
        self.res = res

    def __call__(self, k: int | None) -> Any:
        if k is None:
            out = cs.vec(cs.densify(self.f.map(self.n)(*self.args)))
            self.args, self.last = [], None
            return out
        i, j = divmod(k, self.n_eq)
        last = self.last
        if last is None or last[0] != i:
            made: Any = cs.densify(self.f(*[a[i] for a in self.args])).nonzeros()  # (SX)
            last = self.last = (i, made)
        return last[1][j]


def leads_of(src: Any) -> tuple[list[Lead | None], int, Any] | None:
    """The :attr:`Template.leads` of the group whose equations' sources are the column
    ``src`` (an equation's ``_source``), its number of equations per member and its
    residuals' column as made (a :class:`~acausal.symbols.LazyColumn`, the ``_res`` of
    the equations not rewritten since), or None (not a group's, or its sources all made:
    the maker that knows them is gone)."""
    make = getattr(src, "make", None) if type(src) is LazyColumn else None
    if type(make) is not _Sources or make.leads is None:
        return None
    return make.leads, make.n_eq, make.res


class Rows(NamedTuple):
    """A group's declarations, member after member (:meth:`Group.declarations`): the
    same number of each per member."""

    variables: list[FlatVariable]
    out_names: list[str]  # the outputs' names and expressions
    out_syms: list[Any]  # (a scalar unknown: its FlatVariable, whose symbol is made on use)
    parameters: list[FlatParameter]
    bound: list[tuple[Component, str, Any]]  # structural parameter values


def _interleave(columns: list[list[Any]], n: int) -> list[Any]:
    """Columns of ``n`` items each as one list, row after row (member after member)."""
    m = len(columns)
    out: list[Any] = [None] * (n * m)
    for o, col in enumerate(columns):
        out[o::m] = col
    return out


def _flat_variables(names: list[str], syms: LazyColumn, starts: list[float],
                    fixed: list[bool], vis: list[Any], origins: list[str], rows: list[int]
                    ) -> list[FlatVariable]:
    """The unknowns of one scalar element of a variable, one per member (``vis``: the
    members' declarations; ``syms``: their symbols, row by row; ``rows``: the members'
    rows, ``0, 1, ...``)."""
    vi = vis[0]
    shared = _SHARED(vi)
    if all(map(_eq, repeat(shared), map(_SHARED, vis))):  # (None == {...}: False)
        # (one spec per fixed value)
        spec = {f: FlatVariable.spec(vi.unit, f, vi.nominal, vi.state_priority, vi.hint,
                                     vi.decl) for f in set(fixed)}
        return FlatVariable.many(names, repeat(syms), starts, origins, repeat(None), rows,
                                 map(spec.__getitem__, fixed))
    # an instance's own edit (e.g. ``c.variables()["x"].state_priority = 3``)
    return [FlatVariable(name, syms, start, fx, v.unit, v.nominal, v.state_priority, origin,
                         None, None, v.hint, v.decl, i)
            for i, (name, start, fx, v, origin) in enumerate(zip(names, starts, fixed, vis,
                                                               origins, strict=True))]
