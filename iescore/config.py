"""Carried through the whole pipeline: the evaluation options (one [`Config`][iescore.config.Config]), the
matching rule, normalisers and the signature (Concepts: matching rules, signature).

Every option that changes a number lives in [`Config`][iescore.config.Config]; the report's
signature is derived from it, and [`Config.from_signature`][iescore.config.Config.from_signature] parses it back,
so a signature is enough to recompute the same numbers.

Example:
    >>> cfg = Config(rule=Rule.parse("O(1,2)"), scheme="IOB1")
    >>> cfg.signature()
    'iescore|setting:AO|rule:O(1,2)|counting:any|mode:match-all|scheme:IOB1|repair:conlleval|avg:micro|norm:identity|v:0.2.0'
    >>> Config.from_signature(cfg.signature()) == cfg
    True
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any, cast, get_args

from .errors import ConfigError, InputError, choices, did_you_mean, warn
from .options import (
    MISALIGNED,
    Align,
    Average,
    Counting,
    Detail,
    Discontinuous,
    Documents,
    Level,
    Misaligned,
    Missing,
    Mode,
    Repair,
    Rule,
    Setting,
    Subwords,
    TokenizerName,
)
from .schemes import SCHEMES, get_scheme
from .version import __version__

__all__ = [
    "Rule", "Config", "SETTINGS", "COUNTINGS", "MODES", "AVERAGES", "REPAIRS_CHOICES", "NORMALISERS", "DOCUMENTS",
    "SUBWORDS", "MISALIGNED", "MISSING", "LEVELS", "TOKENIZER_NAMES", "get_normaliser", "canonical_scheme",
    "parse_supertags", "parse_types", "warn_unknown_types",
]

SETTINGS: tuple[Setting, ...] = get_args(Setting)
COUNTINGS: tuple[Counting, ...] = get_args(Counting)
MODES: tuple[Mode, ...] = get_args(Mode)
AVERAGES: tuple[Average, ...] = get_args(Average)
REPAIRS_CHOICES: tuple[Repair, ...] = get_args(Repair)
DETAILS: tuple[Detail, ...] = get_args(Detail)
DOCUMENTS: tuple[Documents, ...] = get_args(Documents)
SUBWORDS: tuple[Subwords, ...] = get_args(Subwords)
MISSING: tuple[Missing, ...] = get_args(Missing)
LEVELS: tuple[Level, ...] = get_args(Level)  # what character-offset input is scored on (iescore.io.chars)
TOKENIZER_NAMES: tuple[TokenizerName, ...] = get_args(TokenizerName)  # the tokens of level="tokens"
PREPARATION = ("documents", "subwords", "misaligned", "missing", "level", "tokenizer", "align",
               "discontinuous")  # how the input was prepared
_PREPARATION_KEYS = tuple((f, "docs" if f == "documents" else f) for f in PREPARATION)  # (Config field, signature key)

def _number(x: float) -> str:
    """A number as the signature writes it: exactly (the shortest text that reads back
    to the same float), integers without ``.0``.

    >>> _number(2.0), _number(1.0000001), _number(0.1), _number(1e300)
    ('2', '1.0000001', '0.1', '1e+300')
    """
    x = float(x)
    if x.is_integer() and abs(x) < 2**53:
        return str(int(x))
    return repr(x)


_RESERVED = "%|,>:="  # characters with a meaning in the signature, percent-encoded in labels


def _escape(label: str) -> str:
    """Percent-encode the signature's reserved characters (and ``%``) in a label.

    >>> _escape("a|b,c>d:e%")
    'a%7Cb%2Cc%3Ed%3Ae%25'
    """
    return "".join(f"%{ord(ch):02X}" if ch in _RESERVED else ch for ch in label)


def _unescape(text: str) -> str:
    """The inverse of `_escape`."""
    return re.sub(r"%([0-9A-F]{2})", lambda m: chr(int(m.group(1), 16)), text)


def canonical_scheme(name: str) -> str:
    """The canonical name of a tag scheme (aliases and case resolved), or ``"auto"``/``"spans"``.

    >>> canonical_scheme("bio"), canonical_scheme("iob1"), canonical_scheme("auto")
    ('IOB2', 'IOB1', 'auto')
    """
    if name in ("auto", "spans"):
        return name
    try:
        return get_scheme(name).name
    except ConfigError:
        raise ConfigError(
            f"unknown tag scheme {name!r}; valid: {choices([*SCHEMES, 'auto', 'spans'])} "
            "(BIO, BIOES and BILUO are aliases)"
        ) from None


# --- normalisers (OBD string comparison, one-per-string) -------------------------

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


def warn_unknown_types(cfg: Config, present: Iterable[str], removed: Iterable[str]) -> None:
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


@dataclass(frozen=True)
class Config:
    """Every option that changes a number.

    Attributes:
        setting: ``"AO"`` (all occurrences, positions) or ``"OBD"`` (templates).
        rule: the matching rule ([`Rule`][iescore.config.Rule]).
        counting: ``"any"`` (De Sitter's any-match algorithm) or ``"one-to-one"``.
        mode: ``"match-all"``, ``"match-best"`` or ``"one-per-string"``.
        scheme: tag scheme name (``"auto"`` is resolved before scoring), or
            ``"spans"`` when the input was spans, not tags.
        repair: tag decoding policy: ``"conlleval"``, ``"strict"`` or ``"discard"``.
        average: the headline average: ``"micro"``, ``"macro"`` or ``"weighted"``.
        normaliser: name of the string normaliser (OBD, one-per-string).
        beta: the F-measure's beta (alpha = 1/(1+beta^2) for Makhoul's E).
        supertags: label merges applied before scoring, as ``(label, supertag)`` pairs
            (the CLI's ``--type-map``).
        keep_types / remove_types: the types (after ``supertags``) scored, or left out:
            the units of any other type, or of these, are dropped from both sides before
            matching, as if never annotated (their tokens outside). One of the two at most.
        token_weight / separator_weight: t-unit weights of the TS model.
        unit_weights: set by the scorer when documents carry per-t-unit TS weights:
            a digest (16 hex digits) of every such document's id and weights, so that
            runs with different weights never share a signature (``tsw:...,unit=<digest>``).
        documents: what a document of a CoNLL file is: ``"docstart"`` (a
            ``-DOCSTART-`` section) or ``"sentence"`` (set by the CoNLL reader, ``auto``
            resolved); None when the input was not read from such a file.
        subwords: how a word's predicted tag comes from its sub-words (``"first"``,
            ``"max"``, ``"average"``; set by the Trainer adapters), else None.
        misaligned: how predicted character spans were moved onto reference tokens
            (``"expand"``, ``"contract"``, ``"error"``; set by the spaCy and pipeline
            adapters), else None.
        missing: the spaCy adapter's rule for unannotated gold tokens (``"ignore"``,
            ``"outside"``), else None.
        align: where LLM strings were placed in the text (``"first"``, ``"every"``, ``"unique"``
            occurrence; set by [`score_llm`][iescore.io.llm.score_llm] in AO), else None.
        discontinuous: how brat's discontinuous spans became spans (``"split"``: each
            fragment a span, ``"cover"``: one span over them), when the input had one, else None.
        ser_weights: weights of substitutions, deletions and insertions in the
            weighted slot error rate ``(wS*S + wD*D + wI*I) / N`` (Makhoul et al.).
        detail: ``"full"`` (everything), or ``"prf"``: exact-match TP/FP/FN only, for
            speed inside training loops (same numbers; no slot errors, TS model,
            confusion table or alignment). Not part of the signature: it changes
            which numbers are computed, never their values.
    """

    setting: Setting = "AO"
    rule: Rule = field(default_factory=Rule)
    counting: Counting = "any"
    mode: Mode = "match-all"
    scheme: str = "spans"
    repair: Repair = "conlleval"
    average: Average = "micro"
    normaliser: str = "identity"
    beta: float = 1.0
    supertags: tuple[tuple[str, str], ...] = ()
    keep_types: tuple[str, ...] = ()
    remove_types: tuple[str, ...] = ()
    token_weight: float = 1.0
    separator_weight: float = 1.0
    ser_weights: tuple[float, float, float] = (1.0, 1.0, 1.0)
    unit_weights: str | None = None
    documents: Documents | None = None
    subwords: Subwords | None = None
    misaligned: Misaligned | None = None
    missing: Missing | None = None
    level: Level | None = None
    tokenizer: TokenizerName | None = None
    align: Align | None = None
    discontinuous: Discontinuous | None = None
    detail: Detail = "full"

    def __post_init__(self) -> None:
        object.__setattr__(self, "rule", Rule.parse(self.rule))
        # the settings are acronyms, read in any case as scheme names and rules are
        if isinstance(self.setting, str) and self.setting.upper() in SETTINGS:
            object.__setattr__(self, "setting", self.setting.upper())
        checks: tuple[tuple[str, object, tuple[str, ...]], ...] = (
            ("setting", self.setting, SETTINGS),
            ("counting", self.counting, COUNTINGS),
            ("mode", self.mode, MODES),
            ("average", self.average, AVERAGES),
            ("repair", self.repair, REPAIRS_CHOICES),
            ("detail", self.detail, DETAILS),
        )
        for name, value, valid in checks:
            if value not in valid:
                raise ConfigError(f"unknown {name} {value!r}{did_you_mean(value, valid)}; valid: {choices(valid)}")
        self.rule.check_use(self.setting, self.mode)
        for name, value, valid in (
            ("documents", self.documents, DOCUMENTS),
            ("subwords", self.subwords, SUBWORDS),
            ("misaligned", self.misaligned, MISALIGNED),
            ("missing", self.missing, MISSING),
            ("level", self.level, LEVELS),
            ("tokenizer", self.tokenizer, TOKENIZER_NAMES),
            ("align", self.align, get_args(Align)),
            ("discontinuous", self.discontinuous, get_args(Discontinuous)),
        ):
            if value is not None and value not in valid:
                raise ConfigError(
                    f"unknown {name} {value!r}{did_you_mean(value, valid)}; valid: {choices(valid)} (or None: not used)"
                )
        if self.unit_weights is not None and not re.fullmatch(r"[0-9a-f]{16}", str(self.unit_weights)):
            raise ConfigError(f"unit_weights must be None or a digest of 16 hex digits, got {self.unit_weights!r}")
        object.__setattr__(self, "scheme", canonical_scheme(self.scheme))
        get_normaliser(self.normaliser)
        if not (isinstance(self.beta, (int, float)) and self.beta > 0 and math.isfinite(self.beta)):
            raise ConfigError(f"beta must be a positive finite number, got {self.beta!r}")
        for name in ("token_weight", "separator_weight"):
            w = getattr(self, name)
            if not (isinstance(w, (int, float)) and w >= 0 and math.isfinite(w)):
                raise ConfigError(f"{name} must be a non-negative finite number, got {w!r}")
        sw = tuple(float(x) for x in self.ser_weights)
        if len(sw) != 3 or any(not (math.isfinite(x) and x >= 0) for x in sw):
            raise ConfigError(f"ser_weights must be three non-negative numbers (S, D, I), got {self.ser_weights!r}")
        object.__setattr__(self, "ser_weights", sw)
        object.__setattr__(self, "supertags", parse_supertags(self.supertags))
        for name in ("keep_types", "remove_types"):
            object.__setattr__(self, name, parse_types(getattr(self, name), name))
        if self.keep_types and self.remove_types:
            raise ConfigError(
                f"keep_types={','.join(self.keep_types)!r} and remove_types={','.join(self.remove_types)!r} "
                "cannot be combined: give the types to keep, or the types to remove"
            )

    @property
    def alpha(self) -> float:
        """Makhoul's alpha = 1 / (1 + beta^2)."""
        return 1.0 / (1.0 + self.beta**2)

    def supertag_map(self) -> dict[str, str]:
        return dict(self.supertags)

    def filters_types(self) -> bool:
        """Are some types left out (``keep_types`` or ``remove_types``)?"""
        return bool(self.keep_types or self.remove_types)

    def kept(self, label: str) -> bool:
        """Is a type (after ``supertags``) scored?

        >>> Config(keep_types="PER").kept("LOC"), Config(remove_types="MISC").kept("LOC")
        (False, True)
        """
        return label in self.keep_types if self.keep_types else label not in self.remove_types

    def with_(self, **changes: object) -> Config:
        """A copy with some options changed (an unknown option name is a
        [`ConfigError`][iescore.errors.ConfigError] that suggests the nearest valid one)."""
        _check_option_names(changes)
        return replace(self, **changes)  # type: ignore[arg-type]

    @classmethod
    def from_options(cls, config: Config | None = None, /, **options: object) -> Config:
        """The one translation of an entry point's ``config=`` and keyword options
        ([`iescore.score`][iescore.score], [`iescore.Scorer`][iescore.Scorer], the adapters) into a Config:
        ``options`` override ``config``'s fields, or the defaults without ``config``.

        >>> Config.from_options(Config(rule="O(1,1)"), counting="one-to-one").signature().split("|")[2:4]
        ['rule:O(1,1)', 'counting:one-to-one']
        """
        if config is not None:
            return config.with_(**options) if options else config
        _check_option_names(options)
        return cls(**options)  # type: ignore[arg-type]

    def signature(self, data: Any = None) -> str:
        """The reproducibility signature (Concepts: signature); every number is written exactly and
        supertag labels are percent-encoded, so [`from_signature`][iescore.config.Config.from_signature] rebuilds this
        configuration. With ``data`` (a [`Report`][iescore.Report]), the digest of its
        reference data is appended as ``ref:<16 hex digits>``
        (`iescore.ids.reference_digest`)."""
        parts = [
            "iescore",
            f"setting:{self.setting}",
            f"rule:{self.rule}",
            f"counting:{self.counting}",
            f"mode:{self.mode}",
            f"scheme:{self.scheme}",
            f"repair:{self.repair}",
            f"avg:{self.average}",
            f"norm:{self.normaliser}",
        ]
        if self.beta != 1:
            parts.append(f"beta:{_number(self.beta)}")
        if self.supertags:
            parts.append("super:" + ",".join(f"{_escape(a)}>{_escape(b)}" for a, b in self.supertags))
        for key, names in (("keep", self.keep_types), ("remove", self.remove_types)):
            if names:
                parts.append(f"{key}:" + ",".join(map(_escape, names)))
        if (self.token_weight, self.separator_weight) != (1, 1) or self.unit_weights:
            unit = f",unit={self.unit_weights}" if self.unit_weights else ""
            parts.append(f"tsw:{_number(self.token_weight)},{_number(self.separator_weight)}{unit}")
        if self.ser_weights != (1.0, 1.0, 1.0):
            parts.append("serw:" + ",".join(_number(x) for x in self.ser_weights))
        for name, key in _PREPARATION_KEYS:
            if getattr(self, name) is not None:
                parts.append(f"{key}:{getattr(self, name)}")
        parts.append(f"v:{__version__}")
        if data is not None:
            from .ids import reference_digest

            parts.append(f"ref:{reference_digest(data):016x}")
        return "|".join(parts)

    @classmethod
    def from_signature(cls, signature: str) -> Config:
        """Rebuild the configuration a signature names (its ``ref`` and ``v`` fields
        describe the data and the version, not the configuration, and are skipped).

        >>> Config.from_signature(Config(beta=1.0000001, supertags={"a|b": "X"}).signature()).supertags
        (('a|b', 'X'),)
        """
        if not signature.startswith("iescore|"):
            raise ConfigError(f"not an iescore signature: {signature!r}")
        fields = dict(p.split(":", 1) for p in signature.split("|")[1:] if ":" in p)
        kw: dict[str, object] = {
            "setting": fields.get("setting", "AO"),
            "rule": Rule.parse(fields.get("rule", "E")),
            "counting": fields.get("counting", "any"),
            "mode": fields.get("mode", "match-all"),
            "scheme": fields.get("scheme", "spans"),
            "repair": fields.get("repair", "conlleval"),
            "average": fields.get("avg", "micro"),
            "normaliser": fields.get("norm", "identity"),
        }
        try:
            if "beta" in fields:
                kw["beta"] = float(fields["beta"])
            if "super" in fields:
                pairs = [x.split(">") for x in fields["super"].split(",")]
                if any(len(p) != 2 for p in pairs):
                    raise ValueError(fields["super"])
                kw["supertags"] = tuple((_unescape(a), _unescape(b)) for a, b in pairs)
            for key in ("keep", "remove"):
                if key in fields:
                    kw[f"{key}_types"] = tuple(map(_unescape, fields[key].split(",")))
            if "serw" in fields:
                kw["ser_weights"] = tuple(float(x) for x in fields["serw"].split(","))
            if "tsw" in fields:
                t, s, *unit = fields["tsw"].split(",")
                kw["token_weight"], kw["separator_weight"] = float(t), float(s)
                if unit:
                    if len(unit) != 1 or not unit[0].startswith("unit="):
                        raise ValueError(fields["tsw"])
                    kw["unit_weights"] = unit[0][len("unit="):]
        except ValueError:
            raise ConfigError(f"cannot parse the signature {signature!r}") from None
        for name, key in _PREPARATION_KEYS:
            if key in fields:
                kw[name] = fields[key]
        return cls(**kw)  # type: ignore[arg-type]


def _check_option_names(names: Iterable[str]) -> None:
    """Raise a ConfigError for the first name that is not a [`Config`][iescore.config.Config] field,
    suggesting the nearest valid name (a typo such as ``countng=``)."""
    valid = [f.name for f in fields(Config)]
    for name in names:
        if name not in valid:
            raise ConfigError(f"unknown option {name!r}{did_you_mean(name, valid)}; valid: {choices(valid)}")

