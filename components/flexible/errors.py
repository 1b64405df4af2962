"""Error type of the flexible-body finite-element preprocessor."""

from __future__ import annotations

from acausal.errors import ModelDefinitionError

__all__ = ["FEError"]


class FEError(ModelDefinitionError, ValueError):
    """Invalid input to the finite-element preprocessor.

    The message always names the offending parameter, node or element and says
    what to change. A :class:`acausal.errors.ModelDefinitionError` (so the library's
    single exception root :class:`acausal.errors.AcausalError` catches it) and, as
    before, a ``ValueError``.
    """
