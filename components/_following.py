"""How a prescribed-motion source follows its reference signal, shared by the
translational and rotational ``SignalSpeed`` and ``SignalPosition`` (MSL
``Sources.Speed`` / ``Sources.Position``).

Exactly (``exact=True``): the speed or position equals the reference, and the structure
stage differentiates the reference's equations where rates are needed. Otherwise through a
filter of cut-off ``f_crit`` (``w_c = 2 pi f_crit``), so the reference need not be
differentiable: first order for a speed, ``dv/dt = (v_ref - v) w_c``; critically damped
second order (Bessel) for a position,
``d2x/dt2 = ((x_ref - x) w_c - af dx/dt) w_c / bf`` with ``af = 1.3617, bf = 0.6180``.
"""

from __future__ import annotations

from math import pi
from typing import Any

from acausal import der

__all__ = ["follow_speed", "follow_position"]

# s and s^2 coefficients of the critically damped (Bessel) filter of MSL Position
BESSEL_AF = 1.3617
BESSEL_BF = 0.6180


def follow_speed(v: Any, v_ref: Any, exact: bool, f_crit: Any) -> list[Any]:
    """The equation making the speed ``v`` follow ``v_ref``."""
    if exact:
        return [v == v_ref]
    return [der(v) == (v_ref - v) * 2 * pi * f_crit]


def follow_position(x: Any, v: Any, x_ref: Any, exact: bool, f_crit: Any) -> list[Any]:
    """The equation making the position ``x`` (with speed ``v = der(x)``) follow
    ``x_ref``."""
    if exact:
        return [x == x_ref]
    wc = 2 * pi * f_crit
    return [der(v) == ((x_ref - x) * wc - BESSEL_AF * v) * (wc / BESSEL_BF)]
