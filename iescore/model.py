"""The pipeline's input objects: documents, labelled spans and templates (Concepts: settings).

Offsets inside the library are 0-based and half-open: a span ``[start, end)``
covers tokens ``start .. end-1``. The papers write 1-based inclusive positions
``(i, j)``; [`Span.from_inclusive`][iescore.model.Span.from_inclusive] converts at the boundary.

Example:
    >>> doc = Document(id="d1", tokens=("Al", "Roth", "will", "speak"),
    ...                spans=(Span.from_inclusive("speaker", 1, 2),))
    >>> doc.spans[0], doc.span_text(doc.spans[0])
    (Span(label='speaker', start=0, end=2, score=None), 'Al Roth')
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .errors import InputError

__all__ = ["Span", "Relation", "Link", "TextRelation", "Document", "Template"]


def _confidence(value: object, what: str) -> float:
    """A confidence as a float: a number (int, float, numpy or torch scalar), not a
    string or a bool; else an InputError naming ``what`` and the value."""
    if not isinstance(value, (str, bytes, bool)):
        try:
            return float(value)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            pass
    raise InputError(f"{what}: the confidence must be a number, got {value!r} ({type(value).__name__})")


@dataclass(frozen=True, order=True)
class Span:
    """A labelled token span ``[start, end)`` with an optional confidence ``score``."""

    label: str
    start: int
    end: int
    score: float | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.label, str) or not self.label:
            raise InputError(f"span label must be a non-empty string, got {self.label!r}")
        for name in ("start", "end"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int):
                try:
                    iv = int(v)
                except (TypeError, ValueError):
                    iv = None
                if iv is None or iv != v:
                    raise InputError(f"span {name} must be an integer, got {v!r}")
                object.__setattr__(self, name, iv)
        if self.start < 0 or self.end <= self.start:
            raise InputError(
                f"span ({self.label!r}, {self.start}, {self.end}) is empty or reversed; "
                "offsets are half-open [start, end) with 0 <= start < end"
            )
        if self.score is not None:
            what = f"span ({self.label!r}, {self.start}, {self.end})"
            object.__setattr__(self, "score", _confidence(self.score, what))

    @classmethod
    def from_inclusive(cls, label: str, i: int, j: int, score: float | None = None) -> Span:
        """From the papers' 1-based inclusive positions ``(i, j)``."""
        if i < 1 or j < i:
            raise InputError(f"1-based inclusive span ({i}, {j}) needs 1 <= i <= j")
        return cls(label, i - 1, j, score)

    def to_inclusive(self) -> tuple[int, int]:
        """The papers' 1-based inclusive ``(i, j)``."""
        return self.start + 1, self.end


def _span(value: object, what: str) -> Span:
    """A Span, or a ``(label, start, end[, score])`` tuple made one (else an InputError naming ``what``)."""
    if isinstance(value, Span):
        return value
    try:
        return Span(*value)  # type: ignore[misc]
    except TypeError:
        raise InputError(f"{what} must be a Span or (label, start, end), got {value!r}") from None


def _label(value: object, what: str) -> str:
    if not isinstance(value, str) or not value:
        raise InputError(f"{what} must be a non-empty string, got {value!r}")
    return value


@dataclass(frozen=True)
class Relation:
    """A relation ``(label, head, tail)`` between two labelled spans of one document
    (Concepts: relations); ``head`` is the first argument (brat's ``Arg1``).

    >>> Relation("works_for", Span("PER", 0, 2), ("ORG", 5, 6)).tail
    Span(label='ORG', start=5, end=6, score=None)
    """

    label: str
    head: Span
    tail: Span
    score: float | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        _label(self.label, "a relation label")
        object.__setattr__(self, "head", _span(self.head, f"relation {self.label!r}: the head"))
        object.__setattr__(self, "tail", _span(self.tail, f"relation {self.label!r}: the tail"))
        if self.score is not None:
            object.__setattr__(self, "score", _confidence(self.score, f"relation {self.label!r}"))


@dataclass(frozen=True)
class Link:
    """A mention span linked to a knowledge-base ``id`` (Concepts: links); the span's label
    is the mention's entity type.

    >>> Link(("PER", 0, 2), "Q42").span.label
    'PER'
    """

    span: Span
    id: str
    score: float | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "span", _span(self.span, "a link's span"))
        _label(self.id, f"link of span ({self.span.label!r}, {self.span.start}, {self.span.end}): the id")
        if self.score is not None:
            object.__setattr__(self, "score", _confidence(self.score, f"link {self.id!r}"))


@dataclass(frozen=True)
class TextRelation:
    """A relation between two strings without positions (OBD; an LLM's ``{"label", "head",
    "tail"}``): the arguments are token sequences, strings split on whitespace.

    >>> TextRelation("works_for", "Al Roth", "IBM").head
    ('Al', 'Roth')
    """

    label: str
    # as given: token sequences or strings (a str is a Sequence[str]); stored as token tuples
    head: Sequence[str]
    tail: Sequence[str]
    score: float | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        _label(self.label, "a relation label")
        for name in ("head", "tail"):
            v: Any = getattr(self, name)
            seq = tuple(v.split()) if isinstance(v, str) else tuple(v)
            if not seq or not all(isinstance(t, str) for t in seq):
                raise InputError(f"relation {self.label!r}: the {name} must be a non-empty string or token sequence, got {v!r}")
            object.__setattr__(self, name, seq)
        if self.score is not None:
            object.__setattr__(self, "score", _confidence(self.score, f"relation {self.label!r}"))


@dataclass(frozen=True)
class Document:
    """A tokenised document with its labelled spans.

    Args:
        id: the document id (unique within a corpus).
        tokens: the token strings.
        spans: labelled spans over the tokens (AO answers or predictions).
        separators: the text between consecutive tokens (``len(tokens) - 1`` items);
            defaults to single spaces.
        char_offsets: ``(start, end)`` character offsets of every token in ``text``.
        token_weights: per-token weights for the token & separator model
            (``len(tokens)`` non-negative numbers); a document without them uses the
            configured scalar ``token_weight``.
        separator_weights: per-separator weights (``len(tokens) - 1`` non-negative
            numbers), likewise.
        relations: relations between spans of the document (``task="relations"``); their
            arguments need not be among ``spans``.
        links: mention spans with knowledge-base ids (``task="links"``).
    """

    id: str
    tokens: tuple[str, ...]
    spans: tuple[Span, ...] = ()
    separators: tuple[str, ...] | None = None
    char_offsets: tuple[tuple[int, int], ...] | None = None
    token_weights: tuple[float, ...] | None = None
    separator_weights: tuple[float, ...] | None = None
    relations: tuple[Relation, ...] = ()
    links: tuple[Link, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "id", str(self.id))
        object.__setattr__(self, "tokens", tuple(self.tokens))
        spans = tuple(self.spans)
        n = len(self.tokens)
        for k, sp in enumerate(spans):
            if not isinstance(sp, Span):
                try:
                    sp = Span(*sp)
                except TypeError as exc:
                    raise InputError(f"document {self.id!r}: span #{k} {sp!r} is not a Span") from exc
            if sp.end > n:
                raise InputError(
                    f"document {self.id!r}: span #{k} ({sp.label!r}, {sp.start}, {sp.end}) "
                    f"is outside the document's {n} tokens"
                )
            if sp.score is not None and math.isnan(sp.score):
                raise InputError(f"document {self.id!r}: span #{k} has a NaN confidence")
        object.__setattr__(self, "spans", tuple(s if isinstance(s, Span) else Span(*s) for s in spans))
        self._check_records(n)
        if self.separators is not None:
            seps = tuple(self.separators)
            if len(seps) != max(n - 1, 0):
                raise InputError(
                    f"document {self.id!r}: {len(seps)} separators for {n} tokens (need {max(n - 1, 0)})"
                )
            object.__setattr__(self, "separators", seps)
        for name, need in (("token_weights", n), ("separator_weights", max(n - 1, 0))):
            w = getattr(self, name)
            if w is None:
                continue
            w = tuple(float(x) for x in w)
            if len(w) != need:
                raise InputError(f"document {self.id!r}: {len(w)} {name} for {need} t-units")
            bad = [k for k, x in enumerate(w) if not (math.isfinite(x) and x >= 0)]
            if bad:
                raise InputError(f"document {self.id!r}: {name}[{bad[0]}] = {w[bad[0]]!r} is not a non-negative number")
            object.__setattr__(self, name, w)
        if self.char_offsets is not None:
            offs = tuple((int(a), int(b)) for a, b in self.char_offsets)
            if len(offs) != n:
                raise InputError(f"document {self.id!r}: {len(offs)} character offsets for {n} tokens")
            object.__setattr__(self, "char_offsets", offs)

    def _check_records(self, n: int) -> None:
        """Relations and links as such (tuples made them), their spans inside the document."""
        rels = tuple(r if isinstance(r, Relation) else Relation(*r) for r in self.relations)
        links = tuple(x if isinstance(x, Link) else Link(*x) for x in self.links)
        for what, sp in [*((f"relation #{k} {r.label!r}", s) for k, r in enumerate(rels) for s in (r.head, r.tail)),
                         *((f"link #{k} {x.id!r}", x.span) for k, x in enumerate(links))]:
            if sp.end > n:
                raise InputError(f"document {self.id!r}: {what}: span ({sp.label!r}, {sp.start}, {sp.end}) "
                                 f"is outside the document's {n} tokens")
        object.__setattr__(self, "relations", rels)
        object.__setattr__(self, "links", links)

    @property
    def text(self) -> str:
        """Tokens joined by their separators."""
        seps = self.separators if self.separators is not None else (" ",) * max(len(self.tokens) - 1, 0)
        out = []
        for k, tok in enumerate(self.tokens):
            out.append(tok)
            if k < len(seps):
                out.append(seps[k])
        return "".join(out)

    def span_tokens(self, span: Span) -> tuple[str, ...]:
        return self.tokens[span.start : span.end]

    def span_text(self, span: Span) -> str:
        """The text of a span (its tokens with their separators)."""
        return self.text_of(span.start, span.end)

    def text_of(self, start: int, end: int) -> str:
        """The text of tokens ``[start, end)`` with the separators between them."""
        if self.separators is None or end - start < 2:
            return " ".join(self.tokens[start:end])
        seps = self.separators
        return "".join(x for k in range(start, end) for x in (self.tokens[k], seps[k] if k < end - 1 else ""))

    def template(self) -> Template:
        """The OBD template of this document: the distinct filler token sequences per label."""
        slots: dict[str, list[tuple[str, ...]]] = {}
        for sp in self.spans:
            fill = self.span_tokens(sp)
            lst = slots.setdefault(sp.label, [])
            if fill not in lst:
                lst.append(fill)
        return Template(self.id, {k: tuple(v) for k, v in slots.items()})


@dataclass(frozen=True)
class Template:
    """An OBD template: for each slot (label), its filler token sequences (position-free).

    Fillers may be given as token tuples or as strings (split on whitespace).
    ``scores`` optionally gives a confidence per filler (same shape as ``slots``).
    ``relations`` are relations between strings ([`TextRelation`][iescore.model.TextRelation],
    or ``(label, head, tail)`` tuples), scored with ``task="relations"``.
    """

    id: str
    # as given: token sequences or strings (a str is a Sequence[str]); stored as token tuples
    slots: Mapping[str, Sequence[Sequence[str]]]
    scores: Mapping[str, tuple[float, ...]] | None = None
    relations: tuple[TextRelation, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "id", str(self.id))
        object.__setattr__(self, "relations",
                           tuple(r if isinstance(r, TextRelation) else TextRelation(*r) for r in self.relations))
        norm: dict[str, tuple[tuple[str, ...], ...]] = {}
        for label, fillers in dict(self.slots).items():
            if isinstance(fillers, str):
                fillers = [fillers]
            if not isinstance(fillers, Iterable):
                raise InputError(
                    f"template {self.id!r}: slot {label!r} holds {fillers!r} ({type(fillers).__name__}); "
                    "a slot holds a list of fillers, each a string or a sequence of token strings"
                )
            out = []
            for f in fillers:
                if not isinstance(f, Iterable):
                    raise InputError(
                        f"template {self.id!r}: slot {label!r} has the filler {f!r}, not a string "
                        f"({type(f).__name__}); a filler is a string or a sequence of token strings"
                    )
                seq = tuple(f.split()) if isinstance(f, str) else tuple(f)
                bad = next((t for t in seq if not isinstance(t, str)), None)
                if bad is not None:
                    raise InputError(
                        f"template {self.id!r}: slot {label!r} has the filler {f!r}, whose token {bad!r} is "
                        f"not a string ({type(bad).__name__}); a filler is a string or a sequence of token strings"
                    )
                if not seq:
                    raise InputError(f"template {self.id!r}: slot {label!r} has an empty filler")
                out.append(seq)
            norm[str(label)] = tuple(out)
        object.__setattr__(self, "slots", norm)
        if self.scores is not None:
            sc = {
                str(k): tuple(_confidence(x, f"template {self.id!r}: slot {k!r}") for x in v)
                for k, v in dict(self.scores).items()
            }
            for k, v in sc.items():
                if len(v) != len(norm.get(k, ())):
                    raise InputError(f"template {self.id!r}: slot {k!r} has {len(v)} scores for {len(norm.get(k, ()))} fillers")
            object.__setattr__(self, "scores", sc)

    def fillers(self) -> Iterable[tuple[str, tuple[str, ...], float | None]]:
        for label, fills in self.slots.items():
            scores: Sequence[float] | None = (self.scores or {}).get(label)
            for k, f in enumerate(fills):
                yield label, tuple(f), (scores[k] if scores else None)
