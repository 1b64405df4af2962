"""A small units algebra: the library's unit strings as SI base-dimension vectors.

Units in acausal are SI and written as in Modelica: factors joined by ``.`` (or ``*``),
divided by ``/``, each an optional prefix, a symbol and an integer exponent, with
parentheses where needed::

    "V"  "Ohm"  "N.m"  "m/s2"  "kg.m2"  "1/s"  "N.m.s/rad"  "W/(m2.K)"  "s-1"  "1"

:func:`parse_unit` turns such a string into a :class:`Unit`: a scale to SI, an offset (only
for the absolute temperatures ``degC`` and ``degF``) and a :data:`Dimension`, the exponents
of the seven SI base units (m, kg, s, A, K, mol, cd). The radian and the steradian are
dimensionless, as in SI. :func:`to_si` reads a value written with a unit (``"1 kOhm"``,
``"20 degC"``, ``"5 mm"``) and :func:`convert` converts it to a declared unit; components
call it for parameters and start values given as strings.

The dimensional check of the equations (:mod:`acausal.unit_check`) propagates these
dimensions through the CasADi expression graphs of the equations.
"""

from __future__ import annotations

import functools
import math
import re
from typing import TYPE_CHECKING, Any

from .errors import UnitError
from .records import record

if TYPE_CHECKING:
    from collections.abc import Callable
    from fractions import Fraction

__all__ = ["BASE", "Dimension", "Unit", "DIMENSIONLESS", "parse_unit", "dimension",
           "to_si", "convert", "format_dimension", "same", "angle_exponent"]

#: The SI base units, in the order of the entries of a :data:`Dimension`.
BASE: tuple[str, ...] = ("m", "kg", "s", "A", "K", "mol", "cd")

Dimension = tuple["int | Fraction", ...]
"""Exponents of the SI base units :data:`BASE`: integers, and :class:`fractions.Fraction`
where ``sqrt`` or a fractional power made them (an integer and the fraction of the same
value are equal and hash alike, so the two kinds of dimension compare as numbers do; plain
integers spare ``import acausal`` the ``fractions`` module, 1.6 ms of a cold start)."""

DIMENSIONLESS: Dimension = (0,) * 7


def _d(m: int = 0, kg: int = 0, s: int = 0, A: int = 0, K: int = 0, mol: int = 0,
       cd: int = 0) -> Dimension:
    return (m, kg, s, A, K, mol, cd)


@record(frozen=True)
class Unit:
    """A parsed unit: ``value_SI = scale * value + offset``, of dimension ``dim``."""

    scale: float
    dim: Dimension
    offset: float = 0.0


_N = _d(m=1, kg=1, s=-2)
_J = _d(m=2, kg=1, s=-2)
_W = _d(m=2, kg=1, s=-3)
_V = _d(m=2, kg=1, s=-3, A=-1)
_PI = math.pi

# symbol -> (scale to SI, dimension)
_SYMBOLS: dict[str, tuple[float, Dimension]] = {
    "m": (1.0, _d(m=1)), "g": (1e-3, _d(kg=1)), "s": (1.0, _d(s=1)), "A": (1.0, _d(A=1)),
    "K": (1.0, _d(K=1)), "mol": (1.0, _d(mol=1)), "cd": (1.0, _d(cd=1)),
    "rad": (1.0, DIMENSIONLESS), "sr": (1.0, DIMENSIONLESS),
    "deg": (_PI / 180, DIMENSIONLESS), "rev": (2 * _PI, DIMENSIONLESS),
    "rpm": (2 * _PI / 60, _d(s=-1)), "%": (0.01, DIMENSIONLESS),
    "Hz": (1.0, _d(s=-1)), "N": (1.0, _N), "Pa": (1.0, _d(m=-1, kg=1, s=-2)),
    "bar": (1e5, _d(m=-1, kg=1, s=-2)), "J": (1.0, _J), "Wh": (3600.0, _J),
    "eV": (1.602176634e-19, _J), "W": (1.0, _W), "C": (1.0, _d(s=1, A=1)),
    "Ah": (3600.0, _d(s=1, A=1)), "V": (1.0, _V), "F": (1.0, _d(m=-2, kg=-1, s=4, A=2)),
    "Ohm": (1.0, _d(m=2, kg=1, s=-3, A=-2)), "\u03a9": (1.0, _d(m=2, kg=1, s=-3, A=-2)),
    "S": (1.0, _d(m=-2, kg=-1, s=3, A=2)), "Wb": (1.0, _d(m=2, kg=1, s=-2, A=-1)),
    "T": (1.0, _d(kg=1, s=-2, A=-1)), "H": (1.0, _d(m=2, kg=1, s=-2, A=-2)),
    "min": (60.0, _d(s=1)), "h": (3600.0, _d(s=1)), "d": (86400.0, _d(s=1)),
    "l": (1e-3, _d(m=3)), "L": (1e-3, _d(m=3)),
    # temperatures on other scales: alone they are absolute (offset), inside a compound
    # unit ("1/degC") a temperature difference
    "degC": (1.0, _d(K=1)), "degF": (5.0 / 9.0, _d(K=1)),
    "\u00b0C": (1.0, _d(K=1)), "\u00b0F": (5.0 / 9.0, _d(K=1)),
    "\u00b0": (_PI / 180, DIMENSIONLESS),
}
_OFFSETS = {"degC": 273.15, "degF": 273.15 - 32.0 * 5.0 / 9.0,
            "\u00b0C": 273.15, "\u00b0F": 273.15 - 32.0 * 5.0 / 9.0}
_PREFIXES = {
    "Y": 1e24, "Z": 1e21, "E": 1e18, "P": 1e15, "T": 1e12, "G": 1e9, "M": 1e6, "k": 1e3,
    "h": 1e2, "da": 1e1, "d": 1e-1, "c": 1e-2, "m": 1e-3, "u": 1e-6, "\u00b5": 1e-6,
    "\u03bc": 1e-6, "n": 1e-9, "p": 1e-12, "f": 1e-15, "a": 1e-18,
}
_NO_PREFIX = {"%", "deg", "rev", "rpm", "min", "h", "d", "degC", "degF", "bar", "\u00b0C",
              "\u00b0F", "\u00b0"}

# (the patterns are compiled when first used, by re's cache: compiling them at import cost
# 1 ms of a cold start, and the library's units are single symbols, read without them)
_TOKEN = (r"\s*(?:(?P<op>[./*\u00b7()])|(?P<sym>[A-Za-z%\u00b0\u00b5\u03bc\u03a9]+)"
          r"(?:\^?(?P<exp>[+-]?\d+))?|(?P<num>\d+)(?:\^?(?P<nexp>[+-]?\d+))?)")
# the characters of a symbol (_TOKEN's "sym")
_WORD = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                  "%\u00b0\u00b5\u03bc\u03a9")


def _symbol(word: str, text: str) -> tuple[float, Dimension]:
    hit = _SYMBOLS.get(word)
    if hit is not None:
        return hit
    for k in (2, 1):  # "da" before "d"
        pre, rest = word[:k], word[k:]
        if pre in _PREFIXES and rest in _SYMBOLS and rest not in _NO_PREFIX:
            scale, dim = _SYMBOLS[rest]
            return _PREFIXES[pre] * scale, dim
    known = ", ".join(sorted(s for s in _SYMBOLS if s.isascii()))
    raise UnitError(f"unit {text!r}: {word!r} is not a unit symbol (known symbols, with SI "
                    f"prefixes: {known})")


@functools.lru_cache(maxsize=4096)
def parse_unit(text: str) -> Unit:
    """The :class:`Unit` of a unit string (``"N.m/rad"``, ``"kOhm"``, ``""`` = ``"1"``).

    Raises
    ------
    UnitError
        If the string is not a unit.
    """
    s = text.strip()
    if s in ("", "1"):
        return Unit(1.0, DIMENSIONLESS)
    if s in _OFFSETS:
        scale, dim = _SYMBOLS[s]
        return Unit(scale, dim, _OFFSETS[s])
    if _WORD.issuperset(s):  # one symbol without exponent ("V", "kOhm"): as its token
        return Unit(*_symbol(s, text))
    total_scale, total_dim = _evaluate(s, text, lambda w: _symbol(w, text), DIMENSIONLESS)
    return Unit(total_scale, tuple(total_dim))


#: the angle symbols (with prefixes: "mrad"), which SI and the library count dimensionless
_ANGLES = frozenset({"rad", "deg", "rev", "rpm", "\u00b0"})


def angle_exponent(text: str) -> int:
    """The power of angle in a unit string the library reads (``"rad/s"``: 1, ``"1/s"``:
    0, ``"N.m/rad"``: -1), which its dimensions leave out (an FMU's ``<BaseUnit rad=>``)."""
    s = text.strip()
    if s in ("", "1") or s in _OFFSETS:
        return 0

    def angle(word: str) -> tuple[float, list[int | Fraction]]:
        plain = word if word in _ANGLES else next(
            (word[k:] for k in (2, 1) if word[:k] in _PREFIXES and word[k:] in _ANGLES), "")
        return 1.0, [1 if plain else 0]

    return int(_evaluate(s, text, angle, (0,))[1][0])


def _evaluate(s: str, text: str, symbol: Callable[[str], tuple[float, Any]],
              one: tuple[int | Fraction, ...]) -> tuple[float, list[int | Fraction]]:
    """The scale and exponents of the unit string ``s`` (``text`` as given, for messages),
    each symbol's from ``symbol(word)``; ``one``: the exponents of ``1``."""
    token = re.compile(_TOKEN)
    tokens: list[tuple[str, str, int]] = []  # (kind, text, exponent)
    pos = 0
    while pos < len(s):
        m = token.match(s, pos)
        if m is None or m.end() == pos:
            raise UnitError(f"unit {text!r}: cannot read {s[pos:]!r}")
        pos = m.end()
        if m.group("op"):
            tokens.append(("op", m.group("op"), 1))
        elif m.group("sym"):
            tokens.append(("sym", m.group("sym"), int(m.group("exp") or 1)))
        else:
            if m.group("num") != "1":
                raise UnitError(f"unit {text!r}: a number ({m.group('num')}) inside a unit; "
                                "write the factor into the value")
            tokens.append(("sym", "1", 1))
        while pos < len(s) and s[pos].isspace():
            pos += 1
    k = 0

    def factor() -> tuple[float, list[int | Fraction]]:
        nonlocal k
        if k >= len(tokens):
            raise UnitError(f"unit {text!r} ends where a unit symbol is expected")
        kind, tok, e = tokens[k]
        k += 1
        if kind == "op" and tok == "(":
            scale, dim = expr()
            if k >= len(tokens) or tokens[k][1] != ")":
                raise UnitError(f"unit {text!r}: missing ')'")
            k += 1
            return scale, dim
        if kind != "sym":
            raise UnitError(f"unit {text!r}: unexpected {tok!r}")
        if tok == "1":
            return 1.0, list(one)
        sym_scale, sym_dim = symbol(tok)
        return sym_scale ** e, [x * e for x in sym_dim]

    def expr() -> tuple[float, list[int | Fraction]]:
        nonlocal k
        scale, dim = factor()
        while k < len(tokens) and tokens[k][0] == "op" and tokens[k][1] in "./*\u00b7":
            op = tokens[k][1]
            k += 1
            s2, d2 = factor()
            if op == "/":
                scale, dim = scale / s2, [a - b for a, b in zip(dim, d2, strict=True)]
            else:
                scale, dim = scale * s2, [a + b for a, b in zip(dim, d2, strict=True)]
        return scale, dim

    total = expr()
    if k != len(tokens):
        raise UnitError(f"unit {text!r}: unexpected {tokens[k][1]!r}")
    return total


def dimension(text: str) -> Dimension:
    """The dimension of a unit string."""
    return parse_unit(text).dim


_NUMBER = r"^\s*([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)\s*(.*?)\s*$"  # (see _TOKEN)


def to_si(text: str) -> tuple[float, Unit]:
    """Read ``"<number> <unit>"`` (``"1 kOhm"``, ``"20 degC"``, ``"-3.5e-3 m/s"``).

    Returns the value in SI units and the parsed unit (its ``dim``).
    """
    m = re.match(_NUMBER, text)
    if m is None:
        raise UnitError(f"{text!r} is not a number followed by a unit (e.g. '1 kOhm')")
    value = float(m.group(1))
    u = parse_unit(m.group(2))
    # 15 significant digits: "10 uF" is 1e-05 F, not 9.999999999999999e-06
    return float(f"{u.scale * value + u.offset:.15g}"), u


def convert(text: str, unit: str) -> float:
    """The value of ``text`` (a number with a unit) in the declared ``unit``.

    A value without a unit is taken as already in ``unit``. A declared unit ``""`` (none)
    takes the SI value.

    Raises
    ------
    UnitError
        If a unit cannot be read or the dimensions differ.
    """
    m = re.match(_NUMBER, text)
    if m is not None and not m.group(2):
        return float(m.group(1))
    si, u = to_si(text)
    if not unit:
        return si
    target = parse_unit(unit)
    if target.dim != u.dim:
        raise UnitError(f"{text!r} is {format_dimension(u.dim)}, not {unit!r} "
                        f"({format_dimension(target.dim)})")
    return float(f"{(si - target.offset) / target.scale:.15g}")


def same(a: Dimension | None, b: Dimension | None) -> bool:
    """Whether two dimensions agree (``None``, unknown, agrees with anything)."""
    return a is None or b is None or a == b


# the name shown next to a dimension in messages
_NAMED: dict[Dimension, str] = {_d(kg=1): "kg"}
for _name in ("m", "s", "A", "K", "mol", "cd", "Hz", "N", "Pa", "J", "W", "C", "V",
              "F", "Ohm", "S", "Wb", "T", "H"):
    _NAMED.setdefault(_SYMBOLS[_name][1], _name)
_NAMED[_J] = "J = N.m"


def format_dimension(dim: Dimension | None) -> str:
    """Readable dimension: ``"kg.m/s2 (N)"``, ``"1"``, ``"unknown"``."""
    if dim is None:
        return "unknown"
    if dim == DIMENSIONLESS:
        return "1 (dimensionless)"

    def part(items: list[tuple[str, int | Fraction]]) -> str:
        return ".".join(b + ("" if e == 1 else str(e)) for b, e in items)

    order = [1, 0, 2, 3, 4, 5, 6]  # kg.m2/s2 as usually written
    num = [(BASE[k], dim[k]) for k in order if dim[k] > 0]
    den = [(BASE[k], -dim[k]) for k in order if dim[k] < 0]
    text = part(num) or "1"
    if den:
        text += "/" + (part(den) if len(den) == 1 else f"({part(den)})")
    name = _NAMED.get(dim)
    return f"{text} ({name})" if name and name != text else text
