"""Carried through the whole pipeline: the string normalisers of OBD and one-per-string
(Concepts: matching rules), by name, composed with ``+``."""

from __future__ import annotations

import unicodedata
from collections.abc import Callable

from .errors import ConfigError, choices

__all__ = ["NORMALISERS", "get_normaliser"]


def _whitespace(s: str) -> str:
    return " ".join(s.split())


_BASE_NORMALISERS: dict[str, Callable[[str], str]] = {
    "identity": lambda s: s,
    "lower": str.lower,
    "casefold": str.casefold,
    "whitespace": _whitespace,
    "nfkc": lambda s: unicodedata.normalize("NFKC", s),
    "strip-punct": lambda s: "".join(ch for ch in s if not unicodedata.category(ch).startswith("P")),
}
NORMALISERS = tuple(_BASE_NORMALISERS)


def get_normaliser(name: str) -> Callable[[str], str]:
    """A normaliser by name; names compose with ``+`` (``lower+whitespace``).

    Normalisers apply to each token of a filler; tokens that normalise to the
    empty string are dropped.

    >>> get_normaliser("lower+whitespace")("  Al   ROTH ")
    'al roth'
    """
    funcs = []
    for part in name.split("+"):
        f = _BASE_NORMALISERS.get(part.strip())
        if f is None:
            raise ConfigError(
                f"unknown normaliser {part!r} in {name!r}; valid: {choices(NORMALISERS)} "
                "(combine with '+')"
            )
        funcs.append(f)

    def apply(s: str) -> str:
        for f in funcs:
            s = f(s)
        return s

    return apply
