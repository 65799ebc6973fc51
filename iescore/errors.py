"""The library's exception types.

Every error raised on bad input is an :class:`IEScoreError` (a ``ValueError``),
and its message names what is at fault: the document, the position, the value,
and the valid choices where there are any.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["IEScoreError", "InputError", "ConfigError", "choices"]


class IEScoreError(ValueError):
    """Base class of every error iescore raises on bad input or options."""


class InputError(IEScoreError):
    """Bad data: ill-formed tags, spans out of range, mismatched documents, bad files."""


class ConfigError(IEScoreError):
    """A bad option value; the message lists the valid choices."""


def choices(values: Iterable[object]) -> str:
    """Format valid choices for an error message: ``'a', 'b' or 'c'``."""
    items = [repr(v) for v in values]
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " or " + items[-1]
