"""Raised at every stage of the pipeline: the library's exception types.

Every error raised on bad input is an [`IEScoreError`][iescore.errors.IEScoreError] (a ``ValueError``),
and its message names what is at fault: the document, the position, the value,
and the valid choices where there are any.

Likely mistakes that are not errors (an empty file, the same column given twice,
reference and prediction without a label in common) are reported with
`warnings.warn` as an [`IEScoreWarning`][iescore.errors.IEScoreWarning]; the command line prints them
as ``iescore: warning: ...``. Silence them with
``warnings.simplefilter("ignore", iescore.errors.IEScoreWarning)``.
"""

from __future__ import annotations

import difflib
import os
import sys
import warnings
from collections.abc import Iterable

__all__ = ["IEScoreError", "InputError", "ConfigError", "IEScoreWarning", "warn", "choices", "did_you_mean"]


class IEScoreError(ValueError):
    """Base class of every error iescore raises on bad input or options."""


class InputError(IEScoreError):
    """Bad data: ill-formed tags, spans out of range, mismatched documents, bad files.

    ``doc_id``: the repeated document id, for an id given twice (else None).
    """

    doc_id: str | None = None


class ConfigError(IEScoreError):
    """A bad option value; the message lists the valid choices."""


class IEScoreWarning(UserWarning):
    """A likely mistake in the input that still gives a well-defined report."""


_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def warn(message: str) -> None:
    """Issue an [`IEScoreWarning`][iescore.errors.IEScoreWarning] attributed to the first caller outside the
    ``iescore`` package (the user's line that led to it)."""
    level, frame = 2, sys._getframe(1)
    while frame.f_back is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, IEScoreWarning, stacklevel=level)


def choices(values: Iterable[object]) -> str:
    """Format valid choices for an error message: ``'a', 'b' or 'c'``."""
    items = [repr(v) for v in values]
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " or " + items[-1]


def did_you_mean(value: object, valid: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` naming the valid string nearest to a misspelt one, or the
    one valid string it abbreviates (``norm`` for ``normaliser``, as the signature writes
    it), or ``""``.

    >>> did_you_mean("one-two-one", ["any", "one-to-one"]), did_you_mean(3, ["any"])
    (" (did you mean 'one-to-one'?)", '')
    >>> did_you_mean("norm", ["normaliser", "mode"]), did_you_mean("m", ["mode", "match"])
    (" (did you mean 'normaliser'?)", '')
    """
    if not isinstance(value, str):
        return ""
    valid = list(valid)
    near = difflib.get_close_matches(value, valid, n=1)
    if not near and len(value) >= 3:
        near = [v for v in valid if v.startswith(value)]
    return f" (did you mean {near[0]!r}?)" if len(near) == 1 else ""


def shown(text: str, limit: int = 80) -> str:
    """``repr(text)`` for a message, its middle cut when it is longer than ``limit``
    characters (a bad line of a file can be megabytes long).

    >>> shown("B-PER"), shown("x" * 1000, limit=10)
    ("'B-PER'", "'xxxxx' ... 'xxxxx' (1,000 characters)")
    """
    if len(text) <= limit:
        return repr(text)
    half = limit // 2
    return f"{text[:half]!r} ... {text[-half:]!r} ({len(text):,} characters)"
