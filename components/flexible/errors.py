"""Error type of the flexible-body finite-element preprocessor."""

from __future__ import annotations

__all__ = ["FEError"]


class FEError(ValueError):
    """Invalid input to the finite-element preprocessor.

    The message always names the offending parameter, node or element and says
    what to change.
    """
