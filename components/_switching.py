"""Switching laws shared by the translational and rotational elements: Coulomb friction
with stick-slip, and a spring-damper contact that can lift off.

Friction
--------

The formulation follows the MSL's ``PartialFriction`` (Otter, Elmqvist and Mattsson,
1999): one *path parameter* ``sa`` stands for the friction force while the surfaces stick
and for the relative acceleration while they slide, so the equations keep one structure
in every mode (no index change, no re-matching at an event)::

    free     (normal force <= 0):  f = 0,              a_rel = sa
    stuck                       :  f = sa,             a_rel = 0
    sliding  (forward / back)   :  f = +/- f_kinetic,  a_rel = sa

The mode is a discrete variable changed by ``when`` clauses (MSL uses ``pre(mode)`` in
equations; here the memory is the discrete variable itself):

* stuck -> starting forward when ``sa`` (the force needed to stick) exceeds the
  breakaway force ``f_max``; -> starting backward when it falls below ``-f_max``;
* starting -> sliding when ``|v_rel|`` exceeds ``v_small`` in the slip's direction (a
  starting slip gives up, stuck, only beyond ``-v_small`` the other way: at the
  breakaway ``v_rel`` is zero up to round-off, and a stop relation watched from there
  could undo the breakaway at the same instant);
* sliding -> stuck when ``v_rel`` crosses zero; the event iteration then solves the stuck
  force again and, if it exceeds ``f_max``, slides on in the other direction at once;
* free -> engaged when the normal force becomes positive: the mode is the sign of the
  relative speed at that instant (stuck if it is zero).

Every relation is *gated* by the mode it matters in (``if_else(stuck, sa, 0) > f_max``,
``if_else(forward, v_rel, 1) < 0``): in the other modes its indicator is a constant away
from zero. So the relative speed, which is zero up to round-off while the surfaces stick,
is never watched in the stuck mode (it would cross zero at random), and the stuck force is
not watched while sliding.

The element starts in the mode ``UNKNOWN``: as long as it has had no event, it slides in
the direction of the relative speed, or sticks where ``|v_rel| <= v_small`` (MSL's
``initial() and w_relfric > 0``). A start speed above ``v_small`` is committed to its
direction when ``|v_rel|`` falls back to ``v_small`` (one event), and the zero crossing
that follows stops the sliding exactly.

Contact
-------
:func:`gap_law` is the MSL ``ElastoGap``'s force with its contact and its two limits as
relations (state events), each watched only where it matters.
"""

from __future__ import annotations

from typing import Any

import casadi as cs

import acausal as ac

__all__ = ["FORWARD", "STUCK", "BACKWARD", "UNKNOWN", "START_FORWARD", "START_BACKWARD",
           "friction_law", "gap_law"]

FORWARD, STUCK, BACKWARD, UNKNOWN = 1.0, 0.0, -1.0, 2.0
START_FORWARD, START_BACKWARD = 3.0, -3.0


def friction_law(mode: Any, v: Any, sa: Any, f_kinetic: Any, f_max: Any, v_small: Any,
                 free: Any = None, engage: bool = False
                 ) -> tuple[cs.SX, cs.SX, list[ac.When]]:
    """The friction force, the relative acceleration and the mode switches.

    Parameters
    ----------
    mode : the element's discrete mode variable (``Variable(discrete=True, start=2)``)
    v : relative speed of the surfaces
    sa : the path parameter (an unknown of the element)
    f_kinetic : friction force while sliding (>= 0)
    f_max : breakaway force (>= f_kinetic)
    v_small : start speed that counts as stuck
    free : a relation, true while the normal force is not positive (None: never free)
    engage : add the ``when`` that sets the mode when the element engages (elements
        with a normal-force input)

    Returns
    -------
    f : friction force, ``f(v_rel > 0) > 0`` (it opposes the relative motion)
    a : relative acceleration
    whens : the mode switches
    """
    free = cs.SX(0) if free is None else free
    engaged = cs.logic_not(free)
    initial = cs.logic_and(mode > 1.5, mode < 2.5)
    start_fwd, start_bwd = mode > 2.5, mode < -2.5
    # the speed is compared with +-v_small before the first event and while a slip starts
    # (gated: elsewhere the indicators are constants)
    pos = cs.if_else(cs.logic_or(initial, start_fwd), v, -v_small - 1.0) > v_small
    neg = cs.if_else(cs.logic_or(initial, start_bwd), v, v_small + 1.0) < -v_small
    direction = cs.if_else(mode > 0.5, 1.0, cs.if_else(mode < -0.5, -1.0, 0.0))
    m = cs.if_else(initial, cs.if_else(pos, 1.0, cs.if_else(neg, -1.0, 0.0)), direction)
    stuck = cs.logic_and(m == 0, engaged)
    f = cs.if_else(free, 0.0, cs.if_else(stuck, sa, m * f_kinetic))
    a = cs.if_else(stuck, 0.0, sa)
    # a slip stops where v crosses zero; one that is starting (v still within round-off
    # of zero) gives up only beyond -v_small
    stop_fwd = cs.if_else(cs.logic_and(mode == FORWARD, engaged), v, cs.if_else(
        cs.logic_and(start_fwd, engaged), v + v_small, 1.0)) < 0
    stop_bwd = cs.if_else(cs.logic_and(mode == BACKWARD, engaged), v, cs.if_else(
        cs.logic_and(start_bwd, engaged), v - v_small, -1.0)) > 0
    # breakaway. initial=True: surfaces at rest whose force to stick exceeds the breakaway
    # force already at the start break away there (the start mode follows the start
    # values). Before the first event a start speed that falls to v_small is committed to
    # its direction (below) while m reads "stuck" at that instant: a breakaway against the
    # motion is not one then (the speed is read without an event, against half of v_small:
    # at rest it is zero up to round-off; so the clauses never set the mode together)
    half = 0.5 * v_small
    stuck_fwd = cs.logic_and(stuck, cs.logic_or(cs.logic_not(initial),
                                                ac.no_event(v > -half)))
    stuck_bwd = cs.logic_and(stuck, cs.logic_or(cs.logic_not(initial),
                                                ac.no_event(v < half)))
    whens = [
        ac.when(cs.if_else(stuck_fwd, sa - f_max, -1.0) > 0, ac.assign(mode, START_FORWARD),
                initial=True),
        ac.when(cs.if_else(stuck_bwd, sa + f_max, 1.0) < 0, ac.assign(mode, START_BACKWARD),
                initial=True),
        ac.when(stop_fwd, ac.assign(mode, STUCK)),
        ac.when(stop_bwd, ac.assign(mode, STUCK)),
        # commit a direction: the start speed falls back to v_small, or a starting slip
        # reaches it
        ac.when(cs.logic_and(initial, cs.logic_not(pos)), ac.assign(mode, FORWARD)),
        ac.when(cs.logic_and(initial, cs.logic_not(neg)), ac.assign(mode, BACKWARD)),
        ac.when(cs.logic_and(start_fwd, pos), ac.assign(mode, FORWARD)),
        ac.when(cs.logic_and(start_bwd, neg), ac.assign(mode, BACKWARD)),
    ]
    if engage:
        # the relation v > v_small must not be watched: the sign is read at the instant
        direction = ac.no_event(cs.if_else(v > v_small, 1.0, cs.if_else(v < -v_small, -1.0,
                                                                        0.0)))
        whens.append(ac.when(engaged, ac.assign(mode, direction)))
    return f, a, whens


def gap_law(s_rel: Any, v_rel: Any, f_c: Any, c: Any, d: Any, s_rel0: Any, n: Any
            ) -> tuple[cs.SX, cs.SX, cs.SX]:
    """Spring force, limited damper force and contact flag of an elastic gap.

    In contact (``s_rel < s_rel0``): ``f_c = -c (s_rel0 - s_rel)^n`` and the damper force
    ``d v_rel`` limited to ``[f_c, -f_c]``; zero apart. ``f_c`` is the element's variable
    holding the spring force (the limits compare with it).

    Returns
    -------
    f_c, f_d : spring and limited damper forces (expressions)
    contact : 1 in contact, 0 apart
    """
    contact = s_rel < s_rel0
    # the penetration is >= 0 in contact; no_event: its kink at zero is the contact's
    depth = ac.no_event(cs.fmax(s_rel0 - s_rel, 0.0))
    f_d2 = d * v_rel
    # the limits are watched in contact only (apart, their indicators are constants)
    below = cs.if_else(contact, f_d2 - f_c, 1.0) < 0
    above = cs.if_else(contact, f_d2 + f_c, -1.0) > 0
    f_d = cs.if_else(contact, cs.if_else(below, f_c, cs.if_else(above, -f_c, f_d2)), 0.0)
    return (cs.if_else(contact, -c * depth**n, 0.0), f_d, cs.if_else(contact, 1.0, 0.0))
