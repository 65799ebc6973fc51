"""Carried through the whole pipeline: the type options' values parsed (``supertags``,
``keep_types``, ``remove_types``), and the warning for a type the input lacks."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Protocol, cast

from .errors import ConfigError, InputError, did_you_mean, warn


class _TypeOptions(Protocol):
    """The options `warn_unknown_types` reads (a [`Config`][iescore.config.Config])."""

    @property
    def keep_types(self) -> tuple[str, ...]: ...
    @property
    def remove_types(self) -> tuple[str, ...]: ...
    @property
    def supertags(self) -> tuple[tuple[str, str], ...]: ...

__all__ = ["parse_supertags", "parse_types", "warn_unknown_types"]


def parse_supertags(value: object) -> tuple[tuple[str, str], ...]:
    """Label merges as sorted ``(label, supertag)`` pairs, from a mapping, pairs, or a string
    ``"PER=NE,LOC=NE"`` (the CLI's form).

    >>> parse_supertags("PER=NE, LOC=NE")
    (('LOC', 'NE'), ('PER', 'NE'))
    >>> parse_supertags({"PER": "NE"})
    (('PER', 'NE'),)
    """
    if isinstance(value, str):
        pairs: list[tuple[object, object]] = []
        for item in value.split(","):
            if not item.strip():
                continue
            if "=" not in item:
                raise ConfigError(f"supertag {item.strip()!r} in {value!r} must look like LABEL=SUPERTAG")
            a, b = item.split("=", 1)
            pairs.append((a.strip(), b.strip()))
    elif isinstance(value, Mapping):
        pairs = list(value.items())
    else:
        try:
            pairs = [tuple(p) for p in value]  # type: ignore[attr-defined]
        except TypeError:
            raise ConfigError(
                f"supertags must be a mapping {{label: supertag}}, (label, supertag) pairs or 'A=X,B=Y', got {value!r}"
            ) from None
    out: dict[str, str] = {}
    for p in pairs:
        if len(p) != 2 or not all(isinstance(x, str) for x in p):
            raise ConfigError(f"a supertag must be a pair of label strings (label, supertag), got {p!r}")
        a, b = cast("tuple[str, str]", p)
        if out.get(a, b) != b:
            raise ConfigError(f"label {a!r} is merged into two supertags: {out[a]!r} and {b!r}")
        out[a] = b
    return tuple(sorted(out.items()))


def parse_types(value: object, name: str = "types") -> tuple[str, ...]:
    """Type names as a sorted tuple without repeats, from a string ``"PER,LOC"`` (the CLI's
    form) or an iterable of strings.

    >>> parse_types("PER, LOC,PER"), parse_types(["MISC"])
    (('LOC', 'PER'), ('MISC',))
    """
    if isinstance(value, str):
        items: list[object] = [x.strip() for x in value.split(",") if x.strip()]
    else:
        try:
            items = list(value)  # type: ignore[call-overload]
        except TypeError:
            raise ConfigError(f"{name} must be type names, as a list or 'A,B', got {value!r}") from None
    for x in items:
        if not isinstance(x, str) or not x.strip():
            raise ConfigError(f"{name}: a type name must be a non-empty string, got {x!r}")
    return tuple(sorted(set(cast("list[str]", items))))


def warn_unknown_types(cfg: _TypeOptions, present: Iterable[str], removed: Iterable[str]) -> None:
    """Warn for each type of ``cfg.keep_types`` or ``cfg.remove_types`` not in the input
    (``present``: its types after the type map; ``removed``: those left out), naming the
    nearest type present (in any case) and the types present."""
    shown, gone = sorted(set(present) | set(removed)), set(removed)
    option, names = ("keep_types", cfg.keep_types) if cfg.keep_types else ("remove_types", cfg.remove_types)
    found = set(shown) - gone if cfg.keep_types else gone
    missing = [n for n in names if n not in found]
    for name in missing:
        near = [p for p in shown if p.casefold() == name.casefold()]
        hint = f" (did you mean {near[0]!r}?)" if near else did_you_mean(name, shown)
        after = " after the type map (supertags)" if cfg.supertags else ""
        message = (f"{option}: type {name!r} is not in the input{after}{hint}; the types present: "
                   f"{', '.join(map(repr, shown)) if shown else 'none'}")
        if cfg.keep_types and shown and len(missing) == len(names):  # nothing kept: nothing would be scored
            raise InputError(message + "; none of the types to keep is in the input")
        warn(message)
