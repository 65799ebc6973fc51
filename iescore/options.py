"""Carried through the whole pipeline: the names and value types of the options, for type
checkers and IDEs (one typed source for [`Config`][iescore.config.Config] and every entry point).

Every entry point that takes options as keywords -- [`iescore.score`][iescore.score],
[`iescore.score_tags`][iescore.score_tags], [`iescore.score_templates`][iescore.score_templates], [`iescore.Scorer`][iescore.Scorer],
the adapters and the Trainer hook -- types them as ``**options: Unpack[Options]``
(PEP 692), so mypy and IDEs complete the names and flag ``rulez="E"`` or
``counting="one-two-one"``. At run time the same mistakes are a
[`ConfigError`][iescore.errors.ConfigError] that suggests the nearest valid name or value.

The value types below are the one source of the valid values: ``iescore.config``'s
tuples (``SETTINGS``, ``COUNTINGS``, ...) are their arguments, and a test checks that
[`Options`][iescore.options.Options] has exactly [`Config`][iescore.config.Config]'s fields and that the
command line offers the same choices. The value of the ``rule`` option is a string or a
[`Rule`][iescore.options.Rule], defined here (``iescore.config.Rule`` and ``iescore.Rule`` are the same class).

Example:
    >>> from typing import get_args
    >>> get_args(Counting)
    ('any', 'one-to-one')
    >>> sorted(ScoringOptions.__optional_keys__)[:4]
    ['arg_labels', 'average', 'beta', 'counting']

``Unpack`` comes from `typing` on Python 3.11 and later; on Python 3.10 type
checkers take it from ``typing_extensions``, which their own stubs bundle (nothing is
imported at run time: annotations stay strings under ``from __future__ import
annotations``), so numpy remains the only dependency.
"""

from __future__ import annotations

import importlib.util
import math
import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Literal, TypedDict, get_args

from .errors import ConfigError, choices

if TYPE_CHECKING:
    if sys.version_info >= (3, 11):
        from typing import Unpack as Unpack
    else:
        from typing_extensions import Unpack as Unpack

__all__ = [
    "Options", "ScoringOptions", "Setting", "Counting", "Mode", "Average", "Repair", "Detail",
    "Documents", "Subwords", "Misaligned", "Missing", "Level", "TokenizerName", "Align", "Discontinuous",
    "SchemeName", "Rule", "Task", "Nil", "RELATION_SETTINGS", "LINK_SETTINGS",
]

Setting = Literal["AO", "OBD"]
Counting = Literal["any", "one-to-one"]
Mode = Literal["match-all", "match-best", "one-per-string"]
Average = Literal["micro", "macro", "weighted"]
Repair = Literal["conlleval", "strict", "discard"]
Detail = Literal["full", "prf"]
Documents = Literal["docstart", "sentence"]  # CoNLL files: what a document is ("auto" resolved)
Subwords = Literal["first", "max", "average"]  # a word's predicted tag from its sub-words
Misaligned = Literal["expand", "contract", "error"]  # predicted character spans onto reference tokens
MISALIGNED: tuple[Misaligned, ...] = get_args(Misaligned)  # its values, in this order
Missing = Literal["ignore", "outside"]  # unannotated gold tokens (spaCy's ent_iob 0)
Level = Literal["characters", "tokens"]  # what character-offset input is scored on (iescore.io.chars)
# the tokens of level="tokens": a named tokenizer, the input's own tokens, or a callable
TokenizerName = Literal["spacy", "regex", "whitespace", "given", "custom"]
Align = Literal["first", "every", "unique"]  # where LLM strings without offsets are placed in the text (AO)
# brat's discontinuous spans: each fragment a span, or one span from the first to the last
Discontinuous = Literal["split", "cover"]
Task = Literal["entities", "relations", "links"]  # what is scored: spans, relations between spans, links of spans
Nil = Literal["keep", "ignore"]  # links: a NIL id is an id like any other, or NIL answers and predictions are left out
# tag schemes: the canonical names, their aliases (case does not matter at run time),
# "auto" (detected from the reference tags) and "spans" (the input is not tags)
SchemeName = Literal[
    "auto", "spans", "IO", "IOB1", "IOB2", "IOE1", "IOE2", "IOBES", "BMES", "BILOU", "BIO", "BIOES", "BILUO",
]


# --- the matching rule (the value of the rule option) ----------------------------------

_INF = math.inf
_SHARE_KINDS = ("iou", "cover", "sim")  # the rules by share: a threshold t, 0 < t <= 1
_KINDS = ("exact", "contain", "overlap", *_SHARE_KINDS)
_SHARE_NAMES = {"iou": "IoU", "cover": "cover", "sim": "sim"}


def _num(text: str) -> float:
    t = text.strip().lower()
    if t in ("inf", "infinity", "\u221e"):
        return _INF
    if not t.isdigit():
        raise ValueError(t)
    return int(t)


def _fmt(x: float) -> str:
    return "inf" if x == _INF else str(int(x))


def _share(text: str) -> float:
    """A threshold written as a decimal number (``0.5``, ``.8``, ``1``, ``1e-05``)."""
    t = text.strip()
    if not re.fullmatch(r"(\d+(\.\d*)?|\.\d+)(e[-+]?\d+)?", t):
        raise ValueError(t)
    return float(t)


@dataclass(frozen=True)
class Rule:
    """A matching rule: ``exact``, ``contain(e)``, ``overlap(e, m)``, or a rule by share:
    ``IoU(t)``, ``cover(t)`` (spans, and token sequences) or ``sim(t)`` (strings).

    ``e`` is the number of extra tokens allowed, ``m`` the number of missing
    tokens allowed; either may be ``math.inf`` for the explicitly spelled
    "any overlap" rule ``O(inf,inf)``. ``t`` is the threshold of a rule by share
    (``0 < t <= 1``; a pair matches when its share is at least ``t``), compared exactly
    as the decimal number it prints as ([`share`][iescore.options.Rule.share]).
    """

    kind: str = "exact"
    e: float = 0
    m: float = 0
    t: float | None = None

    def __post_init__(self) -> None:
        if self.kind not in _KINDS:
            raise ConfigError(f"unknown rule kind {self.kind!r}; valid: {choices(list(_KINDS))}")
        for name, v in (("e", self.e), ("m", self.m)):
            if not (v == _INF or (isinstance(v, int) and v >= 0)):
                raise ConfigError(f"rule parameter {name}={v!r} must be a non-negative integer or inf")
        if self.kind == "exact" and (self.e or self.m):
            raise ConfigError("the exact rule takes no parameters")
        if self.kind == "contain" and self.m:
            raise ConfigError("contain(e) takes one parameter")
        if self.kind in _SHARE_KINDS:
            name = _SHARE_NAMES[self.kind]
            if self.e or self.m:
                raise ConfigError(f"{name}(t) takes one parameter, the share t")
            t = self.t
            if isinstance(t, bool) or not isinstance(t, (int, float)) or not (0 < t <= 1):
                raise ConfigError(f"{name}(t): the share t={t!r} must be a number with 0 < t <= 1")
            object.__setattr__(self, "t", float(t))
        elif self.t is not None:
            raise ConfigError(f"the {self.kind} rule takes no share t (t={self.t!r})")

    @property
    def by_share(self) -> bool:
        """Is this a rule by share (``IoU(t)``, ``cover(t)``, ``sim(t)``)?"""
        return self.kind in _SHARE_KINDS

    def share(self) -> Fraction:
        """The threshold ``t`` as an exact fraction of the decimal it prints as
        (``0.1`` is one tenth, not the binary float nearest it), so that a share of
        exactly ``t`` is accepted.

        >>> Rule.parse("IoU(0.1)").share()
        Fraction(1, 10)
        """
        if self.t is None:
            raise ConfigError(f"the {self.kind} rule has no share t")
        return Fraction(repr(self.t))

    def check_use(self, setting: str, mode: str) -> None:
        """Raise a [`ConfigError`][iescore.errors.ConfigError] where the rule compares
        nothing: ``sim(t)`` compares strings, so it needs ``setting="OBD"`` or
        ``mode="one-per-string"`` (spans matched by position have no string rule), and
        rapidfuzz (the ``fuzzy`` extra), which computes it.

        >>> Rule.parse("sim(0.8)").check_use("AO", "match-all")
        Traceback (most recent call last):
        ...
        iescore.errors.ConfigError: rule sim(0.8) compares strings: use it with setting='OBD' or mode='one-per-string' (setting='AO', mode='match-all' match spans by position: IoU(t), cover(t), E, C(e) or O(e,m))
        """
        if self.kind == "sim" and setting == "AO" and mode != "one-per-string":
            raise ConfigError(
                f"rule {self} compares strings: use it with setting='OBD' or mode='one-per-string' "
                f"(setting={setting!r}, mode={mode!r} match spans by position: IoU(t), cover(t), E, C(e) or O(e,m))"
            )
        if self.kind == "sim" and importlib.util.find_spec("rapidfuzz") is None:
            raise ConfigError(
                f"rule {self} needs rapidfuzz, which is not installed: pip install 'iescore[fuzzy]' (or pip install rapidfuzz)"
            )

    @classmethod
    def parse(cls, text: str | Rule) -> Rule:
        """Parse ``exact``/``E``, ``contain(e)``/``C(e)``, ``overlap(e,m)``/``O(e,m)``,
        ``IoU(t)``, ``cover(t)`` and ``sim(t)`` (names in any case).

        >>> Rule.parse("contain(1)"), Rule.parse("O(inf,inf)")
        (Rule(kind='contain', e=1, m=0), Rule(kind='overlap', e=inf, m=inf))
        >>> Rule.parse("IoU(0.5)"), str(Rule.parse("cover(.50)"))
        (Rule(kind='iou', t=0.5), 'cover(0.5)')
        """
        if isinstance(text, Rule):
            return text
        t = str(text).strip().replace(" ", "")
        low = t.lower()
        if low in ("e", "exact", "strict"):
            return cls("exact")
        match = re.fullmatch(r"(c|contain|o|overlap)\(([^()]*)\)", low)
        if match:
            name = "contain" if match.group(1) in ("c", "contain") else "overlap"
            parts = match.group(2).split(",")
            try:
                vals = [_num(p) for p in parts]
            except ValueError:
                vals = []
            if name == "contain" and len(vals) == 1:
                return cls("contain", vals[0], 0)
            if name == "overlap" and len(vals) == 2:
                return cls("overlap", vals[0], vals[1])
        match = re.fullmatch(r"(iou|cover|sim)\(([^()]*)\)", low)
        if match:
            try:
                share = _share(match.group(2))
            except ValueError:
                share = None
            if share is not None:
                return cls(match.group(1), t=share)
        raise ConfigError(
            f"cannot parse matching rule {text!r}; valid forms: "
            f"{choices(['exact', 'E', 'contain(e)', 'C(e)', 'overlap(e,m)', 'O(e,m)', 'O(inf,inf)', 'IoU(t)', 'cover(t)', 'sim(t)'])}"
            " (e, m: integers or inf; t: a decimal number, 0 < t <= 1)"
        )

    def __str__(self) -> str:
        if self.kind == "exact":
            return "E"
        if self.kind == "contain":
            return f"C({_fmt(self.e)})"
        if self.kind == "overlap":
            return f"O({_fmt(self.e)},{_fmt(self.m)})"
        t = repr(self.t)
        return f"{_SHARE_NAMES[self.kind]}({t[:-2] if t.endswith('.0') else t})"

    def __repr__(self) -> str:
        if self.kind in _SHARE_KINDS:
            return f"Rule(kind={self.kind!r}, t={self.t!r})"
        return f"Rule(kind={self.kind!r}, e={self.e!r}, m={self.m!r})"


class ScoringOptions(TypedDict, total=False):
    """The options a user sets ([`Config`][iescore.config.Config]'s fields, see there),
    all optional."""

    setting: Setting
    rule: str | Rule
    counting: Counting
    mode: Mode
    scheme: SchemeName
    repair: Repair
    average: Average
    normaliser: str
    beta: float
    supertags: Mapping[str, str] | Iterable[tuple[str, str]] | str
    keep_types: Iterable[str] | str
    remove_types: Iterable[str] | str
    token_weight: float
    separator_weight: float
    ser_weights: tuple[float, float, float]
    detail: Detail
    task: Task
    arg_labels: bool
    symmetric: Iterable[str] | str
    nil: Nil
    link_types: bool


class Options(ScoringOptions, total=False):
    """Every [`Config`][iescore.config.Config] field: [`ScoringOptions`][iescore.options.ScoringOptions] and the
    options that record how the input was prepared (the readers and adapters set them;
    None means not used)."""

    unit_weights: str | None
    documents: Documents | None
    subwords: Subwords | None
    misaligned: Misaligned | None
    missing: Missing | None
    level: Level | None
    tokenizer: TokenizerName | None
    align: Align | None
    discontinuous: Discontinuous | None


# the field's named settings for relations (Bekoulis et al. 2018; Taillé et al. 2020) and links
# (Cornolti et al. 2013), as the options they stand for: ``iescore.score(..., **RELATION_SETTINGS["strict"])``
class RelationSetting(TypedDict):
    """The options of a named setting of relations."""

    rule: str
    arg_labels: bool


class LinkSetting(TypedDict):
    """The options of a named setting of links."""

    rule: str


RELATION_SETTINGS: dict[str, RelationSetting] = {
    "strict": {"rule": "E", "arg_labels": True},
    "boundaries": {"rule": "E", "arg_labels": False},
    "relaxed": {"rule": "O(inf,inf)", "arg_labels": True},
}
LINK_SETTINGS: dict[str, LinkSetting] = {"strong": {"rule": "E"}, "weak": {"rule": "O(inf,inf)"}}
