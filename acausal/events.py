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

__all__ = ["time_events"]

_AFFINE = (cs.OP_ADD, cs.OP_SUB, cs.OP_MUL, cs.OP_DIV, cs.OP_NEG, cs.OP_TWICE)
_COMPARE = (cs.OP_LT, cs.OP_LE, cs.OP_EQ, cs.OP_NE)
_STEPS = (cs.OP_FLOOR, cs.OP_CEIL)
MAX_PERIODIC_EVENTS = 100_000  # instants of one floor/ceil in one run, at most


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
