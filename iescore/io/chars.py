"""Before the pipeline (input preparation): documents given as raw text with labelled
character spans, turned into the pipeline's [`Document`][iescore.Document] s.

Annotation tools (brat, Prodigy, doccano, Label Studio), PII tools (presidio) and
LLM extractors give spans as character offsets ``[start, end)`` into a text, without
tokens. A [`TextDocument`][iescore.io.chars.TextDocument] holds that text and those spans; the readers of
`iescore.io` return them. They are scored at one of two *levels*, an explicit
option recorded in the signature (``level:...``; Concepts: character-level
scoring):

* ``level="characters"`` -- every character is a token (the separators between
  characters are empty): the matching rules count extra and missing *characters*,
  and the token & separator model counts characters and the boundaries between them;
* ``level="tokens"`` -- the reference text is tokenised (``tokenizer``: ``"regex"``,
  ``"whitespace"``, ``"spacy"``, ``"given"`` for the input's own tokens, or a callable)
  and both sides' spans are mapped onto those tokens with the ``misaligned`` policy
  of [`iescore.text.char_to_token_span`][iescore.text.char_to_token_span]; every span moved or dropped is counted
  in the report (``repairs["adapter"]``: ``misaligned``/``dropped`` for predictions,
  ``reference misaligned``/``reference dropped`` for the reference).

A document may also carry *relations* between character spans and *links* of character
spans to knowledge-base ids ([`Relation`][iescore.Relation], [`Link`][iescore.Link]; an
argument or a mention may be given as the index of one of the document's spans). They are
mapped onto tokens as the spans are, argument by argument; what cannot be mapped exactly
is counted in the report when that task is scored (``task="relations"``: ``relation
arguments misaligned``, ``relations dropped`` -- a relation one of whose arguments covers
no token; ``task="links"``: ``link mentions misaligned``, ``links dropped``; prefixed
``reference`` for the reference), never dropped silently.

Reference and prediction are paired by document id and must have the same text; where
they differ, an [`InputError`][iescore.errors.InputError] names the document and the first
differing character.

They are scored by [`score_text`][iescore.io.textscore.score_text] (or added to a
[`Scorer`][iescore.Scorer] by [`add_text`][iescore.io.textscore.add_text]).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..config import LEVELS
from ..errors import ConfigError, InputError, choices
from ..model import Document, Link, Relation, Span, Template, TextRelation
from ..text import char_to_token_span, tokenize

__all__ = [
    "LEVELS",
    "TextDocument",
    "TextCorpus",
    "char_span",
    "check_same_text",
    "pair_documents",
    "to_document",
    "filler_tokens",
    "text_template",
]

Tokenizer = str | Callable[[str], Sequence[tuple[int, int]]]


def char_span(label: Any, start: Any, end: Any, text: str, where: str, score: Any = None) -> Span:
    """A character span checked against ``text``: an InputError naming ``where`` (the
    file, line or document) for a missing label, non-integer, empty, reversed or
    out-of-text offsets.

    >>> char_span("PER", 0, 2, "Al", "d1")
    Span(label='PER', start=0, end=2, score=None)
    >>> char_span("PER", 1, 5, "Al", "d1")
    Traceback (most recent call last):
    ...
    iescore.errors.InputError: d1: span ('PER', 1, 5) ends outside the text of 2 characters
    """
    if not isinstance(label, str) or not label:
        raise InputError(f"{where}: a span needs a non-empty string label, got {label!r}")
    for name, v in (("start", start), ("end", end)):
        if isinstance(v, bool) or not isinstance(v, int):
            raise InputError(f"{where}: span ({label!r}, {start!r}, {end!r}): {name} must be an integer, got {v!r}")
    if end <= start or start < 0:
        raise InputError(
            f"{where}: span ({label!r}, {start}, {end}) is empty or reversed; "
            "character offsets are half-open [start, end) with 0 <= start < end"
        )
    if end > len(text):
        raise InputError(f"{where}: span ({label!r}, {start}, {end}) ends outside the text of {len(text)} characters")
    try:
        return Span(label, start, end, score)
    except InputError as exc:
        raise InputError(f"{where}: {exc}") from None


def _arg_span(value: Any, spans: Sequence[Span], text: str, where: str) -> Span:
    """A relation argument or link mention: a character span checked against ``text``, or
    the index of one of the document's ``spans`` (an InputError naming ``where`` when none)."""
    if isinstance(value, int) and not isinstance(value, bool):
        if not 0 <= value < len(spans):
            raise InputError(f"{where}: span index {value} names no span of the document "
                             f"(it has {len(spans)} spans, 0..{len(spans) - 1})")
        return spans[value]
    if isinstance(value, Span):
        return char_span(value.label, value.start, value.end, text, where, value.score)
    if isinstance(value, (tuple, list)) and 3 <= len(value) <= 4:
        return char_span(value[0], value[1], value[2], text, where, value[3] if len(value) == 4 else None)
    raise InputError(f"{where}: an argument is a Span, (label, start, end) or the index of a span, got {value!r}")


def _text_records(doc: TextDocument) -> tuple[tuple[Relation, ...], tuple[Link, ...]]:
    """The document's relations and links as Relation / Link on character spans (span
    indices resolved), checked against its text."""
    rels = []
    for k, r in enumerate(doc.relations):
        where = f"document {doc.id!r}: relation #{k}"
        if isinstance(r, Relation):
            label, head, tail, score = r.label, r.head, r.tail, r.score
        elif isinstance(r, (tuple, list)) and len(r) in (3, 4):
            label, head, tail, score = r[0], r[1], r[2], (r[3] if len(r) == 4 else None)
        else:
            raise InputError(f"{where}: a relation is Relation(label, head, tail) or (label, head, tail), got {r!r}")
        rels.append(Relation(label, _arg_span(head, doc.spans, doc.text, f"{where} {label!r}: the head"),
                             _arg_span(tail, doc.spans, doc.text, f"{where} {label!r}: the tail"), score))
    links = []
    for k, x in enumerate(doc.links):
        where = f"document {doc.id!r}: link #{k}"
        if isinstance(x, Link):
            span, kb, score = x.span, x.id, x.score
        elif isinstance(x, (tuple, list)) and len(x) in (2, 3):
            span, kb, score = x[0], x[1], (x[2] if len(x) == 3 else None)
        else:
            raise InputError(f"{where}: a link is Link(span, id) or (span, id), got {x!r}")
        try:
            links.append(Link(_arg_span(span, doc.spans, doc.text, f"{where}: the mention"), kb, score))
        except InputError as exc:
            raise InputError(f"{where}: {exc}") from None
    return tuple(rels), tuple(links)


@dataclass(frozen=True)
class TextDocument:
    """A raw text with labelled character spans (half-open ``[start, end)``).

    Attributes:
        id: the document id (reference and prediction are paired by it).
        text: the text the offsets point into.
        spans: [`Span`][iescore.Span] s whose offsets are *characters* of ``text``.
        tokens: the input's own tokens as character offsets (Prodigy's ``tokens``, a
            spaCy ``Doc``), used by ``tokenizer="given"``; None when it has none.
        relations: [`Relation`][iescore.Relation] s between character spans (or
            ``(label, head, tail)``, an argument a span, ``(label, start, end)`` or the
            index of one of ``spans``); their arguments need not be among ``spans``.
        links: [`Link`][iescore.Link] s of character spans to knowledge-base ids (or
            ``(span, id)``, the span given as for relations).

    >>> d = TextDocument("d", "Al Roth works for IBM.", (("PER", 0, 7), ("ORG", 18, 21)),
    ...                  relations=(("works_for", 0, 1),), links=((1, "Q37156"),))
    >>> d.relations[0].tail, d.links[0].span == d.spans[1]
    (Span(label='ORG', start=18, end=21, score=None), True)
    """

    id: str
    text: str
    spans: tuple[Span, ...] = ()
    tokens: tuple[tuple[int, int], ...] | None = None
    relations: tuple[Relation, ...] = ()
    links: tuple[Link, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "id", str(self.id))
        if not isinstance(self.text, str):
            raise InputError(f"document {self.id!r}: the text must be a string, got {type(self.text).__name__}")
        where = f"document {self.id!r}"
        spans = tuple(
            char_span(s.label, s.start, s.end, self.text, where, s.score) if isinstance(s, Span)
            else char_span(*s[:3], self.text, where, *s[3:4])
            for s in self.spans
        )
        object.__setattr__(self, "spans", spans)
        if self.tokens is not None:
            toks = tuple((int(a), int(b)) for a, b in self.tokens)
            last = 0
            for i, (a, b) in enumerate(toks):
                if not last <= a < b <= len(self.text):
                    raise InputError(
                        f"{where}: token #{i} [{a}, {b}) is empty, outside the text (length "
                        f"{len(self.text)}) or before the end of the previous token ({last})"
                    )
                last = b
            object.__setattr__(self, "tokens", toks)
        if self.relations or self.links:
            rels, links = _text_records(self)
            object.__setattr__(self, "relations", rels)
            object.__setattr__(self, "links", links)
        else:
            object.__setattr__(self, "relations", ())
            object.__setattr__(self, "links", ())

    def span_text(self, span: Span) -> str:
        """The characters a span covers.

        >>> TextDocument("d", "Al Roth", (("PER", 3, 7),)).span_text(Span("PER", 3, 7))
        'Roth'
        """
        return self.text[span.start : span.end]


@dataclass(frozen=True)
class TextCorpus:
    """What a reader read: the documents, and counts of what it skipped or changed
    (``notes``; the scorer reports them under ``repairs["adapter"]``)."""

    documents: tuple[TextDocument, ...]
    notes: Mapping[str, int] = field(default_factory=dict)


def check_same_text(reference: TextDocument, prediction: TextDocument) -> None:
    """Raise an InputError naming the document and the first differing character when
    the two texts differ.

    >>> check_same_text(TextDocument("d", "Al Roth"), TextDocument("d", "Al Ruth"))
    Traceback (most recent call last):
    ...
    iescore.errors.InputError: document 'd': the prediction's text differs from the reference's at character 4: 'o' (reference) vs 'u' (prediction)
    """
    a, b = reference.text, prediction.text
    if a == b:
        return
    k = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    ca = repr(a[k]) if k < len(a) else "the end of the text"
    cb = repr(b[k]) if k < len(b) else "the end of the text"
    raise InputError(
        f"document {reference.id!r}: the prediction's text differs from the reference's at character {k}: "
        f"{ca} (reference) vs {cb} (prediction)"
    )


def pair_documents(reference: Sequence[Any], prediction: Sequence[Any]) -> list[Any]:
    """The predictions in the order of the reference documents, paired by ``id``; a
    reference document without a prediction, a prediction without a reference document
    or an id given twice is an InputError naming the id."""
    by_id: dict[str, Any] = {}
    for p in prediction:
        if p.id in by_id:
            raise InputError(f"the prediction has document {p.id!r} twice")
        by_id[p.id] = p
    ref_ids = set()
    for r in reference:
        if r.id in ref_ids:
            raise InputError(f"the reference has document {r.id!r} twice")
        ref_ids.add(r.id)
    missing = [r.id for r in reference if r.id not in by_id]
    extra = [i for i in by_id if i not in ref_ids]
    if missing or extra:
        what = (f"reference document {missing[0]!r} has no prediction" if missing
                else f"prediction document {extra[0]!r} is not in the reference")
        raise InputError(
            f"{what} ({len(missing)} reference documents without a prediction, {len(extra)} predictions "
            "without a reference document); documents are paired by id"
        )
    return [by_id[r.id] for r in reference]


def _offsets(doc: TextDocument, tokenizer: Tokenizer) -> list[tuple[int, int]]:
    if tokenizer == "given":
        if doc.tokens is None:
            raise ConfigError(
                f"document {doc.id!r} has no tokens of its own (tokenizer='given'); "
                "pass tokenizer='regex', 'whitespace', 'spacy' or a callable"
            )
        return list(doc.tokens)
    return tokenize(doc.text, tokenizer)


def to_document(
    doc: TextDocument,
    spans: Sequence[Span] | None = None,
    *,
    level: str,
    tokenizer: Tokenizer = "regex",
    misaligned: str = "expand",
    offsets: Sequence[tuple[int, int]] | None = None,
    relations: Sequence[Relation] | None = None,
    links: Sequence[Link] | None = None,
) -> tuple[Document, dict[str, int]]:
    """``doc`` (or ``spans``, ``relations`` and ``links`` on its text) as a
    [`Document`][iescore.Document] at ``level``; returns the document and counts of spans
    ``misaligned`` (moved onto token boundaries) and ``dropped`` (no token inside them,
    under ``contract``), and, when the document has relations or links, of ``relation
    arguments misaligned`` and ``relations dropped`` (an argument covers no token), ``link
    mentions misaligned`` and ``links dropped``.

    At ``level="characters"`` every character is a token and the spans keep their
    offsets. At ``level="tokens"`` the text is split by ``tokenizer`` (or at the given
    token ``offsets``) and each span, relation argument and link mention is mapped with
    ``misaligned``; under ``"error"`` one off the token boundaries is an InputError naming
    the document and the span.

    >>> d, counts = to_document(TextDocument("d", "Al Roth", (("PER", 3, 6),)), level="tokens")
    >>> d.tokens, d.spans, counts
    (('Al', 'Roth'), (Span(label='PER', start=1, end=2, score=None),), {'misaligned': 1, 'dropped': 0})
    >>> d, counts = to_document(TextDocument("d", "Al Roth", links=((("PER", 0, 6), "Q1"),)), level="tokens")
    >>> d.links, counts["link mentions misaligned"]
    ((Link(span=Span(label='PER', start=0, end=2, score=None), id='Q1', score=None),), 1)
    """
    spans = doc.spans if spans is None else tuple(spans)
    relations = doc.relations if relations is None else tuple(relations)
    links = doc.links if links is None else tuple(links)
    counts = {"misaligned": 0, "dropped": 0}
    if relations:
        counts.update({"relation arguments misaligned": 0, "relations dropped": 0})
    if links:
        counts.update({"link mentions misaligned": 0, "links dropped": 0})
    if level == "characters":
        n = len(doc.text)
        return Document(doc.id, tuple(doc.text), spans, ("",) * max(n - 1, 0),
                        tuple((k, k + 1) for k in range(n)), relations=relations, links=links), counts
    if level != "tokens":
        raise ConfigError(f"unknown level {level!r}; valid: {choices(LEVELS)}")
    offs = list(offsets) if offsets is not None else _offsets(doc, tokenizer)

    def mapped(sp: Span, moved: str) -> Span | None:
        try:
            hit = char_to_token_span(offs, sp.start, sp.end, misaligned=misaligned)
        except InputError as exc:
            raise InputError(f"document {doc.id!r}: span ({sp.label!r}, {sp.start}, {sp.end}) "
                             f"{doc.span_text(sp)!r}: {exc}") from None
        if hit is None:
            return None
        counts[moved] += not hit[2]
        return Span(sp.label, hit[0], hit[1], sp.score)

    out = []
    for sp in spans:
        got = mapped(sp, "misaligned")
        if got is None:
            counts["dropped"] += 1
        else:
            out.append(got)
    rels = []
    for r in relations:
        head, tail = mapped(r.head, "relation arguments misaligned"), mapped(r.tail, "relation arguments misaligned")
        if head is None or tail is None:
            counts["relations dropped"] += 1
        else:
            rels.append(Relation(r.label, head, tail, r.score))
    kept = []
    for x in links:
        got = mapped(x.span, "link mentions misaligned")
        if got is None:
            counts["links dropped"] += 1
        else:
            kept.append(Link(got, x.id, x.score))
    tokens = tuple(doc.text[a:b] for a, b in offs)
    seps = tuple(doc.text[offs[k][1] : offs[k + 1][0]] for k in range(len(offs) - 1))
    return Document(doc.id, tokens, tuple(out), seps, tuple(offs), relations=tuple(rels), links=tuple(kept)), counts


def filler_tokens(text: str, *, level: str, tokenizer: Tokenizer = "regex") -> tuple[str, ...]:
    """An OBD filler string as the tokens it is compared by: its characters at
    ``level="characters"``, else its tokens under ``tokenizer`` (``"given"`` cannot split
    a lone string: a ConfigError).

    >>> filler_tokens("Al Roth,", level="tokens"), filler_tokens("Al", level="characters")
    (('Al', 'Roth', ','), ('A', 'l'))
    """
    if level == "characters":
        return tuple(text)
    if tokenizer == "given":
        raise ConfigError("tokenizer='given' cannot split filler strings; pass 'regex', 'whitespace', 'spacy' or a callable")
    return tuple(text[a:b] for a, b in tokenize(text, tokenizer))


def text_template(doc: TextDocument, *, level: str, tokenizer: Tokenizer = "regex") -> Template:
    """The OBD template of ``doc``: per label, the distinct span texts as fillers
    (split as [`filler_tokens`][iescore.io.chars.filler_tokens] splits them), and its
    relations as [`TextRelation`][iescore.model.TextRelation] s between their arguments'
    texts (split likewise; the distinct ones).

    >>> text_template(TextDocument("d", "Al and Al", (("PER", 0, 2), ("PER", 7, 9))), level="tokens").slots
    {'PER': (('Al',),)}
    >>> d = TextDocument("d", "Al Roth at IBM", (("PER", 0, 7), ("ORG", 11, 14)), relations=(("works_for", 0, 1),))
    >>> text_template(d, level="tokens").relations
    (TextRelation(label='works_for', head=('Al', 'Roth'), tail=('IBM',), score=None),)
    """

    def fill(sp: Span) -> tuple[str, ...]:
        got = filler_tokens(doc.span_text(sp), level=level, tokenizer=tokenizer)
        if not got:
            raise InputError(f"document {doc.id!r}: span ({sp.label!r}, {sp.start}, {sp.end}) "
                             f"{doc.span_text(sp)!r} holds no token to compare as a filler")
        return got

    slots: dict[str, list[tuple[str, ...]]] = {}
    for sp in doc.spans:
        lst = slots.setdefault(sp.label, [])
        if (f := fill(sp)) not in lst:
            lst.append(f)
    rels: list[TextRelation] = []
    for r in doc.relations:
        rel = TextRelation(r.label, fill(r.head), fill(r.tail), r.score)
        if rel not in rels:
            rels.append(rel)
    return Template(doc.id, {k: tuple(v) for k, v in slots.items()}, relations=tuple(rels))


def _tokenizer_name(tokenizer: Tokenizer) -> str:
    return "custom" if callable(tokenizer) else str(tokenizer)
