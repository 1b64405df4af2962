"""The library's unit strings (``"N.m/rad"``, ``"kOhm"``, ``"W/(m2.K)"``, ``"%"``) as FMI base
units.

FMI 2.0's ``<BaseUnit>`` gives a unit as the exponents of the seven SI base units and
``rad``, a factor and an offset (``value_SI = factor * value + offset``). The unit is read
by the library's own parser, :func:`acausal.units.parse_unit` (prefixes, parentheses,
``%``, ``degC``, ...), so every unit a model may declare has its definition; the exponent of
``rad``, which the library counts as dimensionless (as SI does), is read off the same
string: an angle (``rad``, ``mrad``, ``deg``, ``rev``, ``rpm``, ``°``) keeps it in the FMU,
where ``rad/s`` and ``1/s`` are told apart. :func:`base_unit` returns ``None`` for a string
the library cannot read (the FMU then declares the unit by name only).
"""

from __future__ import annotations

from ..errors import UnitError
from ..units import BASE, angle_exponent, parse_unit

__all__ = ["BaseUnit", "base_unit"]

BaseUnit = tuple[dict[str, int], float, float]  # exponents, factor, offset

# FMI's attributes of <BaseUnit>, in the order of its schema
_KEYS = ("kg", "m", "s", "A", "K", "mol", "cd", "rad")


def base_unit(unit: str) -> BaseUnit | None:
    """Exponents, factor and offset of ``unit`` in SI base units (and ``rad``), or None if
    the library cannot read it."""
    text = unit.strip()
    if not text:
        return None
    try:
        u = parse_unit(text)
    except UnitError:
        return None
    dims = dict(zip(BASE, u.dim, strict=True))
    dims["rad"] = angle_exponent(text) if u.offset == 0.0 else 0
    if any(int(dims[k]) != dims[k] for k in _KEYS):  # (a fractional power: none in FMI)
        return None
    return ({k: int(dims[k]) for k in _KEYS if dims[k]}, float(u.scale), float(u.offset))
