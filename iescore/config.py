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
from collections.abc import Iterable
from dataclasses import dataclass, field, fields, replace
from typing import Any, get_args

from .errors import ConfigError, choices, did_you_mean
from .normalise import NORMALISERS, get_normaliser
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
    Nil,
    Repair,
    Rule,
    Setting,
    Subwords,
    Task,
    TokenizerName,
)
from .schemes import SCHEMES, get_scheme
from .typemaps import parse_supertags, parse_types, warn_unknown_types
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
TASKS: tuple[Task, ...] = get_args(Task)
NILS: tuple[Nil, ...] = get_args(Nil)
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
        task: what is scored: ``"entities"`` (spans), ``"relations"`` (a document's
            `Relation`s, whose head and tail spans match under ``rule``) or ``"links"`` (a
            document's `Link`s: a mention span matched under ``rule`` and the same
            knowledge-base id); Concepts: relations and links.
        arg_labels: relations: are the arguments' entity labels compared (``False``: the
            "boundaries" setting)?
        symmetric: relations: the relation labels that match in either argument order.
        nil: links: ``"keep"`` (``NIL`` is an id like any other) or ``"ignore"`` (answers
            and predictions whose id is ``NIL`` are left out).
        link_types: links: are the mentions' entity types compared? Links are counted per
            entity type either way.
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
    task: Task = "entities"
    arg_labels: bool = True
    symmetric: tuple[str, ...] = ()
    nil: Nil = "keep"
    link_types: bool = False

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
            ("task", self.task, TASKS),
            ("nil", self.nil, NILS),
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
        object.__setattr__(self, "symmetric", parse_types(self.symmetric, "symmetric"))
        self._check_task()
        if self.keep_types and self.remove_types:
            raise ConfigError(
                f"keep_types={','.join(self.keep_types)!r} and remove_types={','.join(self.remove_types)!r} "
                "cannot be combined: give the types to keep, or the types to remove"
            )

    def _check_task(self) -> None:
        """A task's options are refused with another task (set, they would change nothing)."""
        for name in ("arg_labels", "link_types"):
            if not isinstance(getattr(self, name), bool):
                raise ConfigError(f"{name} must be True or False, got {getattr(self, name)!r}")
        for name, value, default, task in (("arg_labels", self.arg_labels, True, "relations"),
                                           ("symmetric", self.symmetric, (), "relations"),
                                           ("nil", self.nil, "keep", "links"),
                                           ("link_types", self.link_types, False, "links")):
            if value != default and self.task != task:
                raise ConfigError(f"{name}={value!r} applies to task={task!r}; this is task={self.task!r}")
        if self.task == "links" and self.setting == "OBD":
            raise ConfigError("task='links' scores mentions by position: use setting='AO'")

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
        if self.task != "entities":
            parts.append(f"task:{self.task}")
        if not self.arg_labels:
            parts.append("args:unlabelled")
        if self.symmetric:
            parts.append("sym:" + ",".join(map(_escape, self.symmetric)))
        if self.nil != "keep":
            parts.append(f"nil:{self.nil}")
        if self.link_types:
            parts.append("linktypes:compared")
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
            if "sym" in fields:
                kw["symmetric"] = tuple(map(_unescape, fields["sym"].split(",")))
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
        kw["task"] = fields.get("task", "entities")
        kw["arg_labels"] = fields.get("args") != "unlabelled"
        kw["nil"] = fields.get("nil", "keep")
        kw["link_types"] = "linktypes" in fields
        return cls(**kw)  # type: ignore[arg-type]


def _check_option_names(names: Iterable[str]) -> None:
    """Raise a ConfigError for the first name that is not a [`Config`][iescore.config.Config] field,
    suggesting the nearest valid name (a typo such as ``countng=``)."""
    valid = [f.name for f in fields(Config)]
    for name in names:
        if name not in valid:
            raise ConfigError(f"unknown option {name!r}{did_you_mean(name, valid)}; valid: {choices(valid)}")

