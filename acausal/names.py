"""Close-name suggestions for every place a user's name is looked up.

Results (``res["capacitor.vv"]``), parameter overrides (``params={"capacitor.c": ...}``),
start values, tree overrides: a name that is not found is answered with the closest known
names. The similarity is :mod:`difflib`'s ratio on the lower-cased names (so a wrong case,
``capacitor.c`` for ``capacitor.C``, is the best match), with the names that share the
last dotted segment, case-insensitively, first.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

__all__ = ["suggest", "did_you_mean"]


def suggest(name: str, candidates: Iterable[str], n: int = 5, cutoff: float = 0.6) -> list[str]:
    """Up to ``n`` names of ``candidates`` close to ``name``, best first."""
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
    same_leaf = [c for c in cands if c.lower().rsplit(".", 1)[-1] == leaf and c not in out]
    same_leaf.sort(key=lambda c: -difflib.SequenceMatcher(None, head, c.lower()).ratio())
    close = difflib.get_close_matches(low, list(by_low), n=n, cutoff=cutoff)
    ranked = [c for lc in close for c in by_low[lc]]
    for c in ranked[:2] + same_leaf + ranked[2:]:
        if c not in out:
            out.append(c)
    return out[:n]


def did_you_mean(name: str, candidates: Iterable[str], n: int = 5) -> str:
    """``"; did you mean 'a', 'b'?"`` or ``""`` when nothing is close."""
    close = suggest(name, candidates, n)
    return f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
