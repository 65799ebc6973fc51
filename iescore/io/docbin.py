"""Before the pipeline (readers), spaCy ``DocBin`` files (``.spacy``, spaCy's training
data format) read into [`TextDocument`][iescore.io.chars.TextDocument] s.

Each ``Doc`` gives its text, its entities (``doc.ents``; or the span group
``doc.spans[spans_key]``) as character spans, their knowledge-base ids (``Span.kb_id_``,
when not empty) as links, and its tokens (whitespace tokens left out) for
``tokenizer="given"``. Tokens without entity annotation (``ent_iob`` unset, spaCy's
missing annotation) are read as outside any entity and counted (``unannotated tokens
read as outside``). A document's id is ``doc.user_data["id"]`` when the file stores user
data, else ``<file name>#<k>`` (k from 1). [`write_docbin`][iescore.io.docbin.write_docbin] writes documents as a
``DocBin`` (storing the ids), atomically (`atomic_write`). spaCy is imported only when these functions run.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import Any

from ..atomic import atomic_write
from ..errors import ConfigError, InputError
from ..model import Link, Span
from .chars import TextCorpus, TextDocument, char_span

__all__ = ["read_docbin", "write_docbin"]


def _spacy(doing: str) -> Any:
    """spaCy, or a ConfigError saying what needs it (``doing``: "reading", "writing")."""
    try:
        import spacy
        import spacy.tokens
    except ImportError:  # pragma: no cover - depends on the environment
        raise ConfigError(f"{doing} .spacy files needs spaCy (pip install 'iescore[spacy]')") from None
    return spacy


def read_docbin(path: str, *, spans_key: str | None = None) -> TextCorpus:
    """Read a ``.spacy`` file; spans from ``doc.ents`` or ``doc.spans[spans_key]``."""
    spacy = _spacy("reading")
    from spacy.vocab import Vocab

    if not os.path.isfile(path):
        raise InputError(f"cannot read {path}: no such file")
    try:
        docs = list(spacy.tokens.DocBin().from_disk(path).get_docs(Vocab()))
    except (ValueError, KeyError, TypeError) as exc:
        raise InputError(f"{path}: not a spaCy DocBin file ({type(exc).__name__}: {exc})") from None
    name = os.path.basename(path)
    out = []
    unset = 0
    for k, doc in enumerate(docs, start=1):
        doc_id = str(doc.user_data.get("id", f"{name}#{k}"))
        where = f"{path}: document {doc_id!r}"
        if spans_key is None:
            group: Sequence[Any] = doc.ents
            scores = None
            unset += sum(1 for t in doc if t.ent_iob == 0 and not t.text.isspace())
        else:
            if spans_key not in doc.spans:
                raise InputError(f"{where} has no span group {spans_key!r} (groups: {sorted(doc.spans)})")
            group = list(doc.spans[spans_key])
            scores = doc.spans[spans_key].attrs.get("scores")
        spans = tuple(
            char_span(s.label_, s.start_char, s.end_char, doc.text, where,
                      None if scores is None or len(scores) != len(group) else float(scores[j]))
            for j, s in enumerate(group)
        )
        links = tuple(Link(spans[j], s.kb_id_) for j, s in enumerate(group) if s.kb_id_)
        tokens = tuple((t.idx, t.idx + len(t.text)) for t in doc if not t.text.isspace())
        out.append(TextDocument(doc_id, doc.text, spans, tokens, links=links))
    notes = {"unannotated tokens read as outside": unset} if unset else {}
    return TextCorpus(tuple(out), notes)


def write_docbin(documents: Iterable[TextDocument], path: str, *, spans_key: str | None = None) -> None:
    """Write documents as a ``DocBin`` (tokenised by a blank multi-language spaCy
    pipeline; spans in ``doc.ents``, or in ``doc.spans[spans_key]``; a link's id as its
    span's ``kb_id``; relations are not written: spaCy has no standard place for them). A
    span off the tokens, overlapping spans in ``doc.ents``, or a link on none of the
    spans is an InputError naming the document."""
    spacy = _spacy("writing")
    nlp = spacy.blank("xx")
    db = spacy.tokens.DocBin(store_user_data=True)
    for d in documents:
        doc = nlp(d.text)
        doc.user_data["id"] = d.id
        spans = []
        kb = {(x.span.label, x.span.start, x.span.end): x.id for x in d.links}
        lone = [k for k in kb if k not in {(s.label, s.start, s.end) for s in d.spans}]
        if lone:
            raise InputError(f"document {d.id!r}: the link of span {lone[0]!r} is on none of the document's spans; "
                             "a DocBin keeps knowledge-base ids on the spans (Span.kb_id_)")
        for s in d.spans:
            sp = doc.char_span(s.start, s.end, label=s.label, kb_id=kb.get((s.label, s.start, s.end), ""))
            if sp is None:
                raise InputError(f"document {d.id!r}: span {_show(s)} does not fall on spaCy's tokens")
            spans.append(sp)
        try:
            if spans_key is None:
                doc.ents = spans
            else:
                doc.spans[spans_key] = spans
        except ValueError as exc:
            raise InputError(f"document {d.id!r}: {exc}") from None
        db.add(doc)
    data = db.to_bytes()
    with atomic_write(path, "wb") as fh:  # as DocBin.to_disk writes it, whole or not at all
        fh.write(data)


def _show(s: Span) -> str:
    return f"({s.label!r}, {s.start}, {s.end})"
