"""SI unit strings of the library (``"N.m/rad"``, ``"kg.m2"``, ``"rad/s/s"``) as FMI base units.

A unit string is a product of factors separated by ``.``; each ``/`` divides by the factor
group that follows it; a factor is a symbol with an optional integer exponent (``m2``,
``s-1``). :func:`base_unit` returns the exponents of the seven SI base units and ``rad``
plus a factor and an offset, as FMI 2.0's ``<BaseUnit>`` wants them, or ``None`` for a
string it does not know (the FMU then declares the unit by name only).
"""

from __future__ import annotations

import math
import re

__all__ = ["BaseUnit", "base_unit"]

BaseUnit = tuple[dict[str, int], float, float]  # exponents, factor, offset

_KEYS = ("kg", "m", "s", "A", "K", "mol", "cd", "rad")


def _u(factor: float = 1.0, **exp: int) -> tuple[dict[str, int], float]:
    return dict(exp), factor


_SYMBOLS: dict[str, tuple[dict[str, int], float]] = {
    "1": _u(),
    "kg": _u(kg=1), "g": _u(1e-3, kg=1), "m": _u(m=1), "s": _u(s=1), "A": _u(A=1),
    "K": _u(K=1), "mol": _u(mol=1), "cd": _u(cd=1), "rad": _u(rad=1),
    "deg": _u(math.pi / 180, rad=1), "sr": _u(),
    "min": _u(60.0, s=1), "h": _u(3600.0, s=1), "Hz": _u(s=-1),
    "N": _u(kg=1, m=1, s=-2), "J": _u(kg=1, m=2, s=-2), "W": _u(kg=1, m=2, s=-3),
    "Pa": _u(kg=1, m=-1, s=-2), "bar": _u(1e5, kg=1, m=-1, s=-2),
    "C": _u(A=1, s=1), "V": _u(kg=1, m=2, s=-3, A=-1), "Ohm": _u(kg=1, m=2, s=-3, A=-2),
    "S": _u(kg=-1, m=-2, s=3, A=2), "F": _u(kg=-1, m=-2, s=4, A=2),
    "H": _u(kg=1, m=2, s=-2, A=-2), "Wb": _u(kg=1, m=2, s=-2, A=-1),
    "T": _u(kg=1, s=-2, A=-1), "l": _u(1e-3, m=3), "L": _u(1e-3, m=3),
}
_FACTOR = re.compile(r"^([A-Za-z]+|1)(-?\d+)?$")


def base_unit(unit: str) -> BaseUnit | None:
    """Exponents, factor and offset of ``unit`` in SI base units, or None if unknown."""
    unit = unit.strip()
    if not unit:
        return None
    if unit == "degC":
        return {"K": 1}, 1.0, 273.15
    exps = dict.fromkeys(_KEYS, 0)
    factor = 1.0
    for g, group in enumerate(unit.split("/")):
        sign = 1 if g == 0 else -1
        for tok in group.split("."):
            match = _FACTOR.match(tok)
            if not match or match.group(1) not in _SYMBOLS:
                return None
            e, f = _SYMBOLS[match.group(1)]
            power = sign * int(match.group(2) or 1)
            for k, v in e.items():
                exps[k] += v * power
            factor *= f**power
    return {k: v for k, v in exps.items() if v}, factor, 0.0
