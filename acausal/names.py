"""Close-name suggestions for every place a user's name is looked up.

Results (``res["capacitor.vv"]``), parameter overrides (``params={"capacitor.c": ...}``),
start values, tree overrides: a name that is not found is answered with the closest known
names. The similarity is :mod:`difflib`'s ratio on the lower-cased names (so a wrong case,
``capacitor.c`` for ``capacitor.C``, is the best match), after the names that share the
last dotted segment under a similar path (``armature.R`` -> ``armature.resistor.R``).

:func:`name_list` reads every argument that takes a list of names (``outputs=``,
``inputs=``, ``res.to_pandas(names)``): one string is one name, never its characters.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = ["suggest", "did_you_mean", "name_list"]


def suggest(name: str, candidates: Iterable[str], n: int = 5, cutoff: float = 0.6) -> list[str]:
    """Up to ``n`` names of ``candidates`` close to ``name``, best first."""
    import difflib  # here: only a name that is not found needs it (1 ms of a cold start)

    cands = list(dict.fromkeys(candidates))
    if not cands:
        return []
    low = name.lower()
    by_low: dict[str, list[str]] = {}
    for c in cands:
        by_low.setdefault(c.lower(), []).append(c)
    out: list[str] = list(by_low.get(low, []))  # differs only by case
    leaf = low.rsplit(".", 1)[-1]
    head = low.rsplit(".", 1)[0] if "." in low else ""
    # same last segment (any case) under a similar path: 'armature.R' -> 'armature.resistor.R'
    scored = []
    for c in cands:
        cl = c.lower()
        if c in out or cl.rsplit(".", 1)[-1] != leaf:
            continue
        chead = cl.rsplit(".", 1)[0] if "." in cl else ""
        ratio = difflib.SequenceMatcher(None, head, chead).ratio() if head else 1.0
        if ratio >= 0.5 or not head or chead.startswith(head) or head in chead:
            scored.append((-ratio, len(c), c))
    same_leaf = [c for _, _, c in sorted(scored)]
    close = difflib.get_close_matches(low, list(by_low), n=n, cutoff=cutoff)
    for c in same_leaf + [c for lc in close for c in by_low[lc]]:
        if c not in out:
            out.append(c)
    return out[:n]


def did_you_mean(name: str, candidates: Iterable[str], n: int = 5) -> str:
    """``"; did you mean 'a', 'b'?"`` or ``""`` when nothing is close."""
    close = suggest(name, candidates, n)
    return f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""


def name_list(names: Any, what: str) -> list[str]:
    """``names`` as a list of names: one string is one name (``"mass.s"``, not the
    characters of it), a sequence of strings is kept in order. Anything else is an
    :class:`~acausal.errors.ArgumentError` naming the argument ``what``."""
    from .errors import ArgumentError

    if isinstance(names, str):
        return [names]
    try:
        out = list(names)
    except TypeError:
        raise ArgumentError(f"{what} must be a dotted name ('mass.s') or a list of them, "
                            f"got {names!r}") from None
    bad = [n for n in out if not isinstance(n, str)]
    if bad:
        raise ArgumentError(f"{what} must be dotted names ('mass.s'), got {bad[0]!r} "
                            f"in {names!r}")
    return out
