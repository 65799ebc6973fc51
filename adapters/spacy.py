"""spaCy ``Doc``s and ``Example``s to iescore documents.

* A ``Doc`` becomes a [`Document`][iescore.Document] with spaCy's tokens, their
  whitespace as separators and their character offsets; ``doc.ents`` (or
  ``doc.spans[spans_key]``) become AO spans. Span-group scores
  (``doc.spans[key].attrs["scores"]``, as spancat writes them) become confidences.
* Entity links: every one of those spans with a knowledge-base id (``Span.kb_id_``, as
  an entity linker sets it; not empty) is also a [`Link`][iescore.Link] of that span
  (the id as spaCy holds it), scored with ``task="links"``. spaCy has no standard place
  for relations between entities, so none are read: build
  [`Relation`][iescore.Relation] s from a pipeline's own output.
* ``Example``s whose predicted and reference docs are tokenised differently
  are aligned through character offsets: every predicted span is mapped onto
  the reference tokens with the ``misaligned`` policy (``expand``, ``contract``
  or ``error``); spans that moved or were dropped are counted in the report
  (``report.repairs["adapter"]``).
* Missing gold annotation: reference tokens whose ``ent_iob`` is unset (0) are
  *unannotated*. With ``missing="ignore"`` (spaCy's own rule in its NER
  scorer) a predicted entity touching an unannotated token is neither right
  nor wrong: it is left out and counted as ``unannotated``. With
  ``missing="outside"`` unset tokens count as ``O``. Only ``doc.ents`` has
  missing annotation; span groups are complete by definition.

spaCy is imported by the caller's objects, not by this module's import.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from iescore.config import MISSING
from iescore.errors import ConfigError, InputError, choices
from iescore.model import Document, Link, Span
from iescore.options import Misaligned, Missing
from iescore.report import Report
from iescore.scorer import Scorer
from iescore.text import char_to_token_span

if TYPE_CHECKING:
    from iescore.options import ScoringOptions, Unpack

__all__ = ["doc_to_document", "examples_to_documents", "examples_to_links", "score_examples", "MISSING"]


def _span_group(doc: Any, spans_key: str | None) -> tuple[Sequence[Any], Sequence[float] | None]:
    if spans_key is None:
        return doc.ents, None
    if spans_key not in doc.spans:
        raise InputError(
            f"doc has no span group {spans_key!r}; groups: {choices(sorted(doc.spans)) or 'none'}"
        )
    group = doc.spans[spans_key]
    scores = group.attrs.get("scores") if hasattr(group, "attrs") else None
    if scores is not None and len(scores) != len(group):
        scores = None
    return list(group), (None if scores is None else [float(x) for x in scores])


def doc_to_document(doc: Any, *, doc_id: str | None = None, spans_key: str | None = None) -> Document:
    """A spaCy ``Doc`` as a [`Document`][iescore.Document] (tokens, whitespace, offsets, spans)."""
    spans, scores = _span_group(doc, spans_key)
    out = []
    links = []
    for k, sp in enumerate(spans):
        out.append(Span(sp.label_, sp.start, sp.end, None if scores is None else scores[k]))
        if sp.kb_id_:
            links.append(Link(out[-1], sp.kb_id_))
    tokens = tuple(t.text for t in doc)
    seps = tuple(t.whitespace_ for t in doc[:-1]) if len(doc) else ()
    offs = tuple((t.idx, t.idx + len(t.text)) for t in doc)
    did = doc_id if doc_id is not None else (doc.user_data.get("id") if hasattr(doc, "user_data") else None)
    return Document(str(did if did is not None else id(doc)), tokens, tuple(out), seps, offs, links=tuple(links))


def examples_to_documents(
    examples: Iterable[Any],
    *,
    spans_key: str | None = None,
    misaligned: Misaligned = "expand",
    missing: Missing = "ignore",
    doc_ids: Sequence[str] | None = None,
    id_offset: int = 0,
) -> tuple[list[Document], list[list[Span]], dict[str, int]]:
    """spaCy ``Example``s as (reference documents, predicted spans on reference tokens, counts).

    The counts are ``misaligned`` (predicted spans moved onto reference
    token boundaries), ``dropped`` (predicted spans that map to no reference
    token) and ``unannotated`` (predictions over unset gold annotation, under
    ``missing="ignore"``). The reference documents carry their links
    ([`doc_to_document`][iescore.adapters.spacy.doc_to_document]); the predicted links are
    [`examples_to_links`][iescore.adapters.spacy.examples_to_links].
    """
    refs, preds, _, counts = _examples(examples, spans_key, misaligned, missing, doc_ids, id_offset)
    return refs, preds, counts


def examples_to_links(
    examples: Iterable[Any],
    *,
    spans_key: str | None = None,
    misaligned: Misaligned = "expand",
    missing: Missing = "ignore",
    doc_ids: Sequence[str] | None = None,
    id_offset: int = 0,
) -> tuple[list[Document], list[Document], dict[str, int]]:
    """spaCy ``Example``s as (reference documents, predicted documents on the reference
    tokens, counts), both with their links (``Span.kb_id_``): a predicted link follows its
    span, moved, dropped or left out with it and counted as in
    [`examples_to_documents`][iescore.adapters.spacy.examples_to_documents]."""
    refs, preds, links, counts = _examples(examples, spans_key, misaligned, missing, doc_ids, id_offset)
    out = [Document(r.id, r.tokens, tuple(p), r.separators, r.char_offsets, links=tuple(x))
           for r, p, x in zip(refs, preds, links)]
    return refs, out, counts


def _examples(
    examples: Iterable[Any], spans_key: str | None, misaligned: Misaligned, missing: Missing,
    doc_ids: Sequence[str] | None, id_offset: int,
) -> tuple[list[Document], list[list[Span]], list[list[Link]], dict[str, int]]:
    if missing not in MISSING:
        raise ConfigError(f"unknown missing-annotation policy {missing!r}; valid: {choices(MISSING)}")
    refs: list[Document] = []
    preds: list[list[Span]] = []
    links: list[list[Link]] = []
    counts = {"misaligned": 0, "dropped": 0, "unannotated": 0}
    for k, eg in enumerate(examples):
        did = doc_ids[k] if doc_ids is not None else str(id_offset + k)
        ref_doc, pred_doc = eg.reference, eg.predicted
        if ref_doc.text != pred_doc.text:
            raise InputError(
                f"example {did!r}: the predicted and reference texts differ "
                f"({len(pred_doc.text)} vs {len(ref_doc.text)} characters)"
            )
        ref = doc_to_document(ref_doc, doc_id=did, spans_key=spans_key)
        unset = None
        if spans_key is None and missing == "ignore":
            unset = [t.ent_iob == 0 for t in ref_doc]
        pspans, pscores = _span_group(pred_doc, spans_key)
        same_tokens = [t.idx for t in pred_doc] == [t.idx for t in ref_doc] and len(pred_doc) == len(ref_doc)
        assert ref.char_offsets is not None
        out: list[Span] = []
        kept: list[Link] = []
        for j, sp in enumerate(pspans):
            score = None if pscores is None else pscores[j]
            if same_tokens:
                s, e = sp.start, sp.end
            else:
                hit = char_to_token_span(ref.char_offsets, sp.start_char, sp.end_char, misaligned=misaligned)
                if hit is None:
                    counts["dropped"] += 1
                    continue
                s, e, ok = hit
                counts["misaligned"] += not ok
            if unset is not None and any(unset[s:e]):
                counts["unannotated"] += 1
                continue
            out.append(Span(sp.label_, s, e, score))
            if sp.kb_id_:
                kept.append(Link(out[-1], sp.kb_id_))
        refs.append(ref)
        preds.append(out)
        links.append(kept)
    return refs, preds, links, counts


def score_examples(
    examples: Iterable[Any],
    *,
    spans_key: str | None = None,
    misaligned: Misaligned = "expand",
    missing: Missing = "ignore",
    scorer: Scorer | None = None,
    **options: Unpack[ScoringOptions],
) -> Report:
    """Score spaCy ``Example``s; returns an [`iescore.Report`][iescore.Report]. Options as in [`iescore.Config`][iescore.Config]
    (typed by [`iescore.options.ScoringOptions`][iescore.options.ScoringOptions]).

    The signature records ``misaligned`` and, for ``doc.ents``, ``missing``. With
    ``task="links"`` the spans' ``kb_id_`` are scored (``task="relations"`` is a
    ConfigError: spaCy has no standard place for relations)."""
    s = scorer or Scorer(**options)
    if s.config.task == "relations":
        raise ConfigError("spaCy has no standard place for relations between entities: build iescore.Relation "
                          "objects from the pipeline's output and score Documents with iescore.score(task='relations')")
    refs, preds, links, counts = _examples(examples, spans_key, misaligned, missing, None, len(s._ids))
    given: list[Any] = list(preds)
    if s.config.task == "links":  # the predicted links ride on Documents of the reference tokens
        given = [Document(r.id, r.tokens, tuple(p), r.separators, r.char_offsets, links=tuple(x))
                 for r, p, x in zip(refs, preds, links)]
    s.use(misaligned=misaligned, missing=missing if spans_key is None else None)
    s.add(reference=refs, prediction=given)
    for k, v in counts.items():
        if v:
            s.note(k, v)
    return s.report()
