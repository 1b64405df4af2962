"""Time events: switching instants of conditions that depend on time only.

Inputs such as steps (``if_else(t >= t0, ...)``) make the algebraic variables jump; an
integrator cannot step across such a jump, so the simulation stops at the instant and
restarts on the other side with consistent values (what Modelica tools call time events).
The instants are found in the compiled DAE function by following expressions that are affine
in time (``a t + b``) through its instruction list to the comparisons that use them, and to
``floor``/``ceil`` of them (a periodic pulse ``floor((t - t0) / T)`` jumps at every period:
all its instants inside the simulated interval are events). The simulation searches the
equations and the indicators ``g < 0`` of the frozen relations (:mod:`acausal.relations`):
a relation of a variable that the model makes a function of time (a pulse reaching a
switch through signal ports) changes at such instants too.
"""

from __future__ import annotations

import casadi as cs
import numpy as np

__all__ = ["time_events", "crossings", "MAX_SCAN_STEPS"]

_AFFINE = (cs.OP_ADD, cs.OP_SUB, cs.OP_MUL, cs.OP_DIV, cs.OP_NEG, cs.OP_TWICE)
_COMPARE = (cs.OP_LT, cs.OP_LE, cs.OP_EQ, cs.OP_NE)
_STEPS = (cs.OP_FLOOR, cs.OP_CEIL)
MAX_PERIODIC_EVENTS = 100_000  # instants of one floor/ceil in one run, at most
MAX_SCAN_STEPS = 200_000  # steps of the search for the crossings of one function of time


def time_events(f: cs.Function, t_input: int, t0: float, t1: float) -> list[float]:
    """Instants in ``(t0, t1)`` where a comparison of two affine functions of the time
    input ``t_input`` of ``f`` changes value."""
    aff: dict[int, tuple[float, float] | None] = {}
    events: set[float] = set()
    for k in range(f.n_instructions()):
        op = f.instruction_id(k)
        ins = f.instruction_input(k)
        outs = f.instruction_output(k)
        if op == cs.OP_OUTPUT:
            continue
        if op == cs.OP_CONST:
            aff[outs[0]] = (0.0, float(f.instruction_constant(k)))
            continue
        if op == cs.OP_INPUT:
            aff[outs[0]] = (1.0, 0.0) if ins[0] == t_input else None
            continue
        args = [aff.get(i) for i in ins]
        result: tuple[float, float] | None = None
        if op in _STEPS and args and args[0] is not None and args[0][0] != 0.0:
            a, b = args[0]  # floor(a t + b) jumps where a t + b is an integer
            lo, hi = sorted((a * t0 + b, a * t1 + b))
            ks = np.arange(np.floor(lo) + 1, np.ceil(hi))
            if len(ks) > MAX_PERIODIC_EVENTS:
                ks = ks[:MAX_PERIODIC_EVENTS]
            for kk in ks:
                ts = (kk - b) / a
                if t0 < ts < t1:
                    events.add(float(ts))
        elif op in _COMPARE and len(args) == 2 and None not in args:
            (a1, b1), (a2, b2) = args  # type: ignore[misc]
            if a1 != a2:
                ts = (b2 - b1) / (a1 - a2)
                if t0 < ts < t1:
                    events.add(ts)
        elif op in _AFFINE and None not in args:
            if op == cs.OP_NEG:
                a, b = args[0]  # type: ignore[misc]
                result = (-a, -b)
            elif op == cs.OP_TWICE:
                a, b = args[0]  # type: ignore[misc]
                result = (2 * a, 2 * b)
            elif op == cs.OP_ADD:
                result = (args[0][0] + args[1][0], args[0][1] + args[1][1])  # type: ignore
            elif op == cs.OP_SUB:
                result = (args[0][0] - args[1][0], args[0][1] - args[1][1])  # type: ignore
            elif op == cs.OP_MUL:
                (a1, b1), (a2, b2) = args  # type: ignore[misc]
                if a1 == 0.0 or a2 == 0.0:
                    result = (a1 * b2 + a2 * b1, b1 * b2)
            elif op == cs.OP_DIV:
                (a1, b1), (a2, b2) = args  # type: ignore[misc]
                if a2 == 0.0 and b2 != 0.0:
                    result = (a1 / b2, b1 / b2)
        for o in outs:
            aff[o] = result
    return sorted(events)


def crossings(g: cs.Function, t0: float, t1: float) -> tuple[list[float], bool]:
    """The instants in ``(t0, t1)`` where a smooth function of time ``g`` changes sign
    (``g: t -> (g, g', g'')``), and whether the search covered the whole interval (it
    stops after :data:`MAX_SCAN_STEPS` steps).

    For the relations of time that are not affine (``sin(w t) > 0.99``), whose instants no
    walk through the expression can give. The search steps along time with steps that
    keep the sign by the function's local quadratic model with its curvature doubled,
    ``|g| - |g'| h - |g''| h^2 >= 0`` (so it slows down where the function comes near zero
    and strides where it is far from it), checks each step for an excursion to zero and
    back on the cubic through the values and rates at its ends, and locates each sign
    change by Illinois' method to round-off."""
    span = t1 - t0
    h_min = 1e-9 * max(span, 1e-300)
    tol = 1e-15 * max(1.0, abs(t0), abs(t1))

    def at(t: float) -> tuple[float, float, float]:
        v = g(t)
        return float(v[0]), float(v[1]), float(v[2])

    out: list[float] = []
    t, (v, d1, d2) = t0, at(t0)
    for _ in range(MAX_SCAN_STEPS):
        if t >= t1:
            return out, True
        a, b, c = abs(v), abs(d1), 2.0 * abs(d2)
        if c > 0.0:
            h = 2.0 * a / (b + np.sqrt(b * b + 2.0 * c * a))  # root of a - b h - c h^2/2
        else:
            h = a / b if b > 0.0 else span
        h = min(max(h, h_min), t1 - t)
        tn = t + h
        vn, d1n, d2n = at(tn)
        ta = tb = None
        if (v < 0.0) != (vn < 0.0) and v != 0.0:
            ta, tb = t, tn
        else:  # an excursion to the other side and back, on the cubic Hermite
            u = _hermite_extremum(v, vn, d1 * h, d1n * h)
            if u is not None:
                tm = t + u * h
                vm = at(tm)[0]
                if (vm < 0.0) != (v < 0.0) and v != 0.0:
                    ta, tb = t, tm
        if ta is not None and tb is not None:
            root = _illinois(lambda s: at(s)[0], ta, tb, tol)
            if t0 < root < t1:
                out.append(root)
            t = tb  # the search goes on from the far side of the crossing
            v, d1, d2 = at(t)
            continue
        t, v, d1, d2 = tn, vn, d1n, d2n
    return out, False


def _hermite_extremum(g0: float, g1: float, m0: float, m1: float) -> float | None:
    """Where the cubic Hermite interpolant on ``[0, 1]`` of the values ``g0``, ``g1`` and
    the scaled rates ``m0``, ``m1`` has an extremum on the far side of zero, if any."""
    a = 6 * g0 + 3 * m0 - 6 * g1 + 3 * m1
    b = -6 * g0 - 4 * m0 + 6 * g1 - 2 * m1
    c = m0
    roots: list[float] = []
    if abs(a) > 1e-14 * (abs(b) + abs(c) + 1e-300):
        disc = b * b - 4 * a * c
        if disc >= 0:
            sq = float(np.sqrt(disc))
            roots = [(-b + sq) / (2 * a), (-b - sq) / (2 * a)]
    elif b != 0:
        roots = [-c / b]
    for u in roots:
        if 0.0 < u < 1.0:
            val = ((2 * u**3 - 3 * u**2 + 1) * g0 + (u**3 - 2 * u**2 + u) * m0
                   + (-2 * u**3 + 3 * u**2) * g1 + (u**3 - u**2) * m1)
            if (val < 0.0) != (g0 < 0.0):
                return u
    return None


def _illinois(f, a: float, b: float, tol: float) -> float:  # type: ignore[no-untyped-def]
    """A sign change of ``f`` in ``[a, b]`` (``f(a)``, ``f(b)`` of opposite signs), to
    ``tol``: the middle of the last bracket."""
    fa, fb = f(a), f(b)
    side = 0
    for _ in range(200):
        if b - a <= tol:
            break
        t = (a * fb - b * fa) / (fb - fa) if fb != fa else 0.5 * (a + b)
        if not a < t < b:
            t = 0.5 * (a + b)
        ft = f(t)
        if (ft < 0.0) == (fa < 0.0):
            a, fa = t, ft
            if side == -1:
                fb *= 0.5
            side = -1
        else:
            b, fb = t, ft
            if side == 1:
                fa *= 0.5
            side = 1
    return 0.5 * (a + b)
