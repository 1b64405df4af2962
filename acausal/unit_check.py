"""Pass "units": the dimensional consistency of every component's equations.

Each side of an equation, and each term of a sum, must have the same physical dimension.
The pass propagates dimensions (:mod:`acausal.units`) through the CasADi expression graph of
the equations as the flatten pass produced them: a variable or parameter has the dimension
of its declared unit, ``der(x)`` that of ``x`` per second, the time seconds, a port quantity
the unit of its domain (the graph's edge variables carry it), a parameter given as a function
of time its declared unit. Products add dimensions, powers scale them, ``exp``, ``log``,
``sin``... need a dimensionless argument. An undeclared unit (``unit=""``) and a numeric
literal are *unknown* and agree with anything (as in Modelica tools): only declared units
can disagree, so a model whose components declare no units is never rejected.

The equations of one component class are the same for every instance, up to the graph's
port expressions, which have their domain's dimension by construction. So the pass checks
one instance per class (and per choice of structural values and time functions): its cost
grows with the number of component classes, plus a dictionary lookup per component, and
the build of a large model is barely slower (``benchmarks/bench_core.py``).

The pass also warns about implausible values where a domain knows them: an absolute
temperature (a declaration in K with ``min >= 0``) below 1 K. A negative one is an error
already when the component is created (its ``min``).

It fills ``state.units`` (a :class:`UnitCheck`) and changes nothing else: leave it out of
the pass list (``ac.build(model, passes=[p for p in ac.PASSES if p.name != "units"])``) to
skip the check.
"""

from __future__ import annotations

import math
import warnings
from collections import Counter
from dataclasses import field
from itertools import chain
from operator import attrgetter, itemgetter
from typing import TYPE_CHECKING, Any

import casadi as cs
import numpy as np

from .component import Component, Parameter, Variable
from .domains import GRAPH_DOMAINS
from .errors import ModelWarning, UnitError, user_stacklevel
from .records import record
from .state import need
from .templates import _FRAMEWORK_KEYS
from .units import DIMENSIONLESS, Dimension, dimension, format_dimension

if TYPE_CHECKING:
    from fractions import Fraction

    from .flatten import FlatEquation, FlatSystem
    from .state import CompileState

__all__ = ["UnitCheck", "check_units", "units_pass"]


@record
class UnitCheck:
    """What the units pass did."""

    classes: int = 0  # representative instances checked (one per class and variant)
    equations: int = 0  # equations checked
    warnings: list[str] = field(default_factory=list)
    #: equations left without a verdict: their component has structural numbers, whose
    #: unit the expression graph does not keep
    unchecked: list[str] = field(default_factory=list)


class _Mismatch(Exception):
    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


_SAME_RESULT = {cs.OP_ADD, cs.OP_SUB, cs.OP_FMIN, cs.OP_FMAX, cs.OP_HYPOT, cs.OP_FMOD,
                cs.OP_REMAINDER}
_COMPARE = {cs.OP_LT, cs.OP_LE, cs.OP_EQ, cs.OP_NE}
_UNARY_SAME = {cs.OP_NEG, cs.OP_FABS, cs.OP_FLOOR, cs.OP_CEIL, cs.OP_ASSIGN}
# OP_TWICE is x + x but also 2 * x with a literal 2 (unknown unit): unknown, like a literal
_NEEDS_DIMENSIONLESS = {
    cs.OP_EXP: "exp", cs.OP_LOG: "log", cs.OP_SIN: "sin", cs.OP_COS: "cos",
    cs.OP_TAN: "tan", cs.OP_ASIN: "asin", cs.OP_ACOS: "acos", cs.OP_ATAN: "atan",
    cs.OP_SINH: "sinh", cs.OP_COSH: "cosh", cs.OP_TANH: "tanh", cs.OP_ASINH: "asinh",
    cs.OP_ACOSH: "acosh", cs.OP_ATANH: "atanh", cs.OP_ERF: "erf", cs.OP_ERFINV: "erfinv",
    cs.OP_LOG1P: "log1p", cs.OP_EXPM1: "expm1",
}
_BOOLEAN = {cs.OP_NOT, cs.OP_AND, cs.OP_OR, cs.OP_SIGN}
_SECOND: Dimension = (0, 0, 1, 0, 0, 0, 0)


def _short(e: Any, width: int = 70) -> str:
    text = str(e)
    return text if len(text) <= width else text[: width - 3] + "..."


def _scale(d: Dimension | None, k: int | Fraction) -> Dimension | None:
    return None if d is None else tuple(x * k for x in d)


def _add(a: Dimension | None, b: Dimension | None, sign: int = 1) -> Dimension | None:
    if a is None or b is None:
        return None
    return tuple(x + sign * y for x, y in zip(a, b, strict=True))


class _Inference:
    """Dimensions of the nodes of CasADi expressions (memoised by node)."""

    def __init__(self, leaves: dict[str, Dimension | None], time_hash: int,
                 signals: dict[int, Dimension | None]) -> None:
        self.leaves = leaves
        self.memo: dict[int, Dimension | None] = dict(signals)
        # (a function of time that is the time itself, lambda t: t, gives a parameter the
        # time's own node: it is then in the parameter's unit in one place and seconds in
        # another, so the time's dimension is left unknown, agreeing with either)
        self.memo[time_hash] = None if time_hash in signals else _SECOND

    def dim(self, e: Any) -> Dimension | None:
        memo = self.memo
        stack = [e]
        while stack:
            node = stack[-1]
            h = node.element_hash()
            if h in memo:
                stack.pop()
                continue
            if node.is_symbolic():
                memo[h] = self.leaves.get(node.name())
                stack.pop()
                continue
            if node.is_constant():
                if math.isnan(float(node)):
                    raise _Mismatch("it contains the constant NaN: a function of the math "
                                    "module applied to a symbol returns nan; use numpy "
                                    "(np.sin) or casadi functions")
                memo[h] = None  # a literal agrees with any dimension
                stack.pop()
                continue
            deps = [node.dep(i) for i in range(node.n_dep())]
            pending = [d for d in deps if d.element_hash() not in memo]
            if pending:
                stack.extend(pending)
                continue
            stack.pop()
            memo[h] = self._combine(node, deps)
        return memo[e.element_hash()]

    def _combine(self, node: Any, deps: list[Any]) -> Dimension | None:
        memo = self.memo
        ds = [memo[d.element_hash()] for d in deps]
        op = node.op()
        if op in _SAME_RESULT or op in _COMPARE or op == cs.OP_ATAN2:
            a, b = ds
            if a is not None and b is not None and a != b:
                what = {cs.OP_ADD: "a sum", cs.OP_SUB: "a difference"}.get(op, "an operation")
                raise _Mismatch(
                    f"{what} of {_short(deps[0], 50)} [{format_dimension(a)}] and "
                    f"{_short(deps[1], 50)} [{format_dimension(b)}] mixes dimensions")
            if op in _COMPARE or op == cs.OP_ATAN2:
                return DIMENSIONLESS
            return a if a is not None else b
        if op in _UNARY_SAME:
            return ds[0]
        if op == cs.OP_MUL:
            return _add(ds[0], ds[1])
        if op == cs.OP_DIV:
            return _add(ds[0], ds[1], -1)
        if op == cs.OP_INV:
            return _scale(ds[0], -1)
        if op == cs.OP_SQ:
            return _scale(ds[0], 2)
        if op == cs.OP_SQRT:
            from fractions import Fraction  # (a dimension's exponents are integers until here)

            return _scale(ds[0], Fraction(1, 2))
        if op in (cs.OP_POW, cs.OP_CONSTPOW):
            base, expo = deps
            if expo.is_constant():
                from fractions import Fraction

                k = Fraction(float(expo)).limit_denominator(1000)
                return _scale(ds[0], k)
            if ds[1] is not None and ds[1] != DIMENSIONLESS:
                raise _Mismatch(
                    f"the exponent of the power {_short(node, 60)} is "
                    f"{format_dimension(ds[1])}; an exponent must be dimensionless")
            # a dimensioned base to a parameter exponent (a Hertz contact's gap^n): the
            # dimension depends on the exponent's value, so it is unknown (no verdict)
            return DIMENSIONLESS if ds[0] == DIMENSIONLESS else None
        if op in _NEEDS_DIMENSIONLESS:
            d = ds[0]
            if d is not None and d != DIMENSIONLESS:
                raise _Mismatch(
                    f"{_NEEDS_DIMENSIONLESS[op]}() of {_short(deps[0], 50)}, which is "
                    f"{format_dimension(d)}: the argument must be dimensionless")
            return DIMENSIONLESS
        if op in _BOOLEAN:
            return DIMENSIONLESS
        if op == cs.OP_COPYSIGN:
            return ds[0]
        if op == cs.OP_IF_ELSE_ZERO:
            return ds[1]
        return None


def _variant_key(c: Component, structural: frozenset[str]) -> tuple[Any, ...]:
    """What can make two instances of a class write different equations."""
    parts: list[Any] = [type(c)]
    d = c.__dict__
    if len(d) == len(_FRAMEWORK_KEYS) and not structural and _FRAMEWORK_KEYS.issuperset(d):
        # (the common case: nothing but declarations; a function of time still counts)
        return (type(c), *[(n, "f(t)") for n, v in d["_params"].items() if callable(v)])
    for name, v in d["_params"].items():
        if callable(v):
            parts.append((name, "f(t)"))
        elif name in structural:
            parts.append((name, _hashable(v)))
    for name, v in d.items():
        if name[0] != "_" and not isinstance(v, (Component, list, tuple)):
            parts.append((name, _hashable(v)))
    return tuple(parts)


def _hashable(v: Any) -> Any:
    try:
        hash(v)
        return v
    except TypeError:
        pass
    if isinstance(v, np.ndarray):
        return ("array", v.shape, v.tobytes())
    if isinstance(v, (list, tuple)):
        try:
            return tuple(v) if hash(tuple(v)) is not None else None
        except TypeError:
            pass
    return ("id", id(v))


class _ClassInfo:
    """Per component class: structural parameters and absolute-quantity declarations."""

    def __init__(self, cls: type) -> None:
        params = cls._declarations(Parameter)  # type: ignore[attr-defined]
        self.structural = frozenset(p.name for p in params if p.structural)
        self.units: dict[str, str] = {p.name: p.unit for p in params}
        self.structural_names = [p.name for p in params if p.structural]
        self.absolute: list[tuple[str, bool, float | None, float | None, str, str]] = []
        decls = list(params) + list(cls._declarations(Variable))  # type: ignore[attr-defined]
        for decl in decls:
            if getattr(decl, "structural", False) or decl.min is None or decl.min < 0:
                continue
            rng = _plausible(_decl_dimension(decl.unit, cls, decl.name))
            if rng is not None:
                self.absolute.append((decl.name, isinstance(decl, Parameter), *rng,
                                      decl.unit))


    def has_numbers(self, c: Component) -> bool:
        """Whether a structural parameter of ``c`` is a number (it may be in equations)."""
        values = c.__dict__["_params"]
        return any(isinstance(values[n], (int, float, np.number)) and not isinstance(
            values[n], bool) for n in self.structural_names)


def _decl_dimension(unit: str, cls: type, name: str) -> Dimension | None:
    if not unit:
        return None
    try:
        return dimension(unit)
    except UnitError as exc:
        raise UnitError(f"{cls.__module__}.{cls.__name__}.{name} declares unit {unit!r}, "
                        f"which cannot be read: {exc}") from None


_PLAUSIBLE: dict[Dimension, tuple[float | None, float | None, str]] | None = None


def _plausible(dim: Dimension | None) -> tuple[float | None, float | None, str] | None:
    global _PLAUSIBLE
    if _PLAUSIBLE is None:
        _PLAUSIBLE = {}
        for dom in GRAPH_DOMAINS:
            q = dom.across
            if q.plausible is not None:
                _PLAUSIBLE[dimension(q.unit)] = (*q.plausible, f"{dom.name} {q.doc}")
    return None if dim is None else _PLAUSIBLE.get(dim)


def check_units(model: Component, flat: FlatSystem) -> UnitCheck:
    """Check the dimensions of the component equations of ``flat``; raise
    :class:`~acausal.errors.UnitError` at the first inconsistent one, warn about implausible
    values."""
    out = UnitCheck()
    ranges, init_ranges = flat.equation_ranges, flat.initial_ranges
    g = flat.graph  # (its list of the components in walk order, where it has the model's)
    comps = list(g.components if getattr(g, "model", None) is model else model.walk())
    n = len(comps)
    types = list(map(type, comps))
    # the classes' infos in the order of their first instances (a declaration's unit that
    # cannot be read is an error once the warnings of the instances before it are given)
    infos: dict[type, _ClassInfo] = {}
    for cls in dict.fromkeys(types):
        try:
            infos[cls] = _ClassInfo(cls)
        except UnitError:
            _plausibilities(comps[:types.index(cls)], infos, out)
            raise
    kind = {cls: k for k, cls in enumerate(infos)}
    kind_of = np.fromiter(map(kind.__getitem__, types), dtype=np.int64, count=n)
    if any(info.absolute for info in infos.values()):
        _plausibilities(comps, infos, out)
    # the components with equations and what can make an instance's differ from its
    # class's (C-level maps over the components: this runs per component)
    ids = list(map(id, comps))
    has = np.fromiter(map(ranges.__contains__, ids), dtype=bool, count=n)
    if init_ranges:
        has |= np.fromiter(map(init_ranges.__contains__, ids), dtype=bool, count=n)
    dicts = list(map(attrgetter("__dict__"), comps))
    # (the common case of _variant_key: nothing but the framework's keys, no structural
    # parameter, no parameter given as a function of time: the class alone)
    alone = np.fromiter(map(len, dicts), dtype=np.int64, count=n) == len(_FRAMEWORK_KEYS)
    alone &= np.fromiter(map(_FRAMEWORK_KEYS.issuperset, dicts), dtype=bool, count=n)
    structural = np.array([bool(info.structural) for info in infos.values()], dtype=bool)
    alone &= ~structural[kind_of]
    params = list(map(itemgetter("_params"), dicts))
    n_par = np.fromiter(map(len, params), dtype=np.int64, count=n)
    calls = np.zeros(int(n_par.sum()) + 1, dtype=np.int64)
    calls[1:] = np.cumsum(np.fromiter(map(callable, chain.from_iterable(
        map(dict.values, params))), dtype=bool, count=len(calls) - 1))
    ends = np.cumsum(n_par)
    alone &= calls[ends] == calls[ends - n_par]
    keys: list[Any] = list(types)  # (the class for the common case, else a tuple)
    for k in np.flatnonzero(has & ~alone).tolist():
        keys[k] = _variant_key(comps[k], infos[types[k]].structural)
    at = np.flatnonzero(has).tolist()
    keys = list(map(keys.__getitem__, at))
    firsts = dict(zip(reversed(keys), map(comps.__getitem__, reversed(at)), strict=True))
    count = Counter(keys)
    reps = [(firsts[key], count[key]) for key in dict.fromkeys(keys)]
    signals = {h: dimension(unit) if unit else None for h, (_, unit) in flat.signals.items()}
    for c, n_alike in reps:
        _check_component(c, flat, infos[type(c)], n_alike, signals, out)
    out.classes = len(reps)
    return out


def _plausibilities(comps: list[Component], infos: dict[type, _ClassInfo],
                    out: UnitCheck) -> None:
    """:func:`_plausibility` of those of ``comps`` whose class declares absolute
    quantities."""
    for c in comps:
        info = infos[type(c)]
        if info.absolute:
            _plausibility(c, info, out)


def _plausibility(c: Component, info: _ClassInfo, out: UnitCheck) -> None:
    d = c.__dict__
    for name, is_param, lo, hi, what, unit in info.absolute:
        if is_param:
            value = d["_params"].get(name)
            if callable(value) or value is None:
                continue
        else:
            vi = d["_vars"][name]
            if not vi.fixed:
                continue
            value = vi.start
        vals = np.ravel(np.asarray(value, dtype=float))
        bad = [v for v in vals if (lo is not None and v < lo) or (hi is not None and v > hi)]
        if not bad:
            continue
        rng = " and ".join(x for x in (f">= {lo:g} {unit}" if lo is not None else "",
                                       f"<= {hi:g} {unit}" if hi is not None else "") if x)
        kind = "parameter" if is_param else "fixed start value of"
        msg = (f"{c._describe()}: {kind} {name!r} = {bad[0]:g} {unit} is an implausible "
               f"{what} (expected {rng})")
        if unit == "K":
            msg += f"; a temperature in degrees Celsius is written '{bad[0]:g} degC'"
        out.warnings.append(msg)
        warnings.warn(msg, ModelWarning, stacklevel=user_stacklevel())


def _check_component(c: Component, flat: FlatSystem, info: _ClassInfo, n: int,
                     signals: dict[int, Dimension | None], out: UnitCheck) -> None:
    path = c.path()
    prefix = f"{path}." if path else ""
    leaves: dict[str, Dimension | None] = {}
    cls = type(c)
    for name, unit in info.units.items():
        leaves[prefix + name] = _decl_dimension(unit, cls, name)
    for name, vi in c.__dict__["_vars"].items():
        dim = _decl_dimension(vi.unit, cls, name)
        sym_names = [prefix + name] if vi.size == 1 else [
            f"{prefix}{name}_{k}" for k in range(vi.size)]
        for sn in sym_names:
            leaves[sn] = dim
    inf = _Inference(_LeafLookup(leaves, flat), flat.t.element_hash(), signals)
    for what, eqs, rng in (("equations()", flat.equations, flat.equation_ranges),
                           ("initial_equations()", flat.initial_equations, flat.initial_ranges)):
        if id(c) not in rng:
            continue
        a, b = rng[id(c)]
        for fe in eqs[a:b]:
            out.equations += 1
            try:
                _check_equation(fe, inf)
            except _Mismatch as exc:
                if info.has_numbers(c):
                    # a structural number multiplies a symbol as a literal, and CasADi
                    # folds 1 * x into x: its (unknown) unit is lost, so no verdict
                    out.unchecked.append(f"{c._path_or_class()}: {fe.text()}")
                    continue
                others = f" (checked once for the {n} instances of {cls.__name__} that " \
                         "write the same equations)" if n > 1 else ""
                raise UnitError(
                    f"{c._describe()} ({cls.__module__}.{cls.__name__}): an equation of its "
                    f"{what} is dimensionally inconsistent{others}:\n    {fe.text()}\n  "
                    f"{exc.text}.\nCheck the equation and the units declared for its "
                    "parameters and variables (a port quantity has its domain's unit). To "
                    "build without this check, leave the 'units' pass out: "
                    "ac.build(model, passes=[p for p in ac.PASSES if p.name != 'units'])"
                ) from None


class _LeafLookup(dict):  # type: ignore[type-arg]
    """Dimensions of symbols by name: the component's own declarations first, then the
    flat variables (graph edge quantities, derivatives)."""

    def __init__(self, own: dict[str, Dimension | None], flat: FlatSystem) -> None:
        super().__init__(own)
        self.flat = flat

    def get(self, name: str, default: Any = None) -> Dimension | None:  # type: ignore[override]
        if name in self:
            return self[name]
        k = self.flat.index.get(name)
        if k is None:
            return None
        v = self.flat.variables[k]
        if v.der_of is not None:
            base = self.get(self.flat.variables[v.der_of].name)
            dim = _add(base, _SECOND, -1)
        else:
            dim = dimension(v.unit) if v.unit else None
        self[name] = dim
        return dim


def _check_equation(fe: FlatEquation, inf: _Inference) -> None:
    e = fe.source if fe.source is not None else fe.res
    if e is None:
        return
    if e.is_op(cs.OP_EQ):
        lhs, rhs = e.dep(0), e.dep(1)
        a, b = inf.dim(lhs), inf.dim(rhs)
        if a is not None and b is not None and a != b:
            raise _Mismatch(f"the left side is {format_dimension(a)} and the right side "
                            f"{format_dimension(b)}")
    else:
        inf.dim(e)


def units_pass(state: CompileState) -> CompileState:
    """Pass: check the dimensions of the flat system's component equations (no change)."""
    flat = need(state.flat, "the flat system (flatten pass)")
    return state.update(units=check_units(state.model, flat))
