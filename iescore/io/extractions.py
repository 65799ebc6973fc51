"""Before the pipeline (readers), LLM extractions: per document a list of ``{label, text}``
without offsets, read and turned into OBD templates, or aligned to the document text
for AO scoring ([`score_llm`][iescore.io.llm.score_llm] scores them).

* **Reading** ([`read_llm`][iescore.io.extractions.read_llm]): a JSONL file with one object per document, or a JSON
  list of them: ``{"id": ..., "entities": [{"label": ..., "text": ...}, ...]}``
  (the list may also be called ``extractions`` or ``items``; a label may be called
  ``type`` or ``entity_type``); an optional ``text`` is the document's text, checked
  against the reference's.
* **Relations**: a document's ``relations`` list holds ``{"label": ..., "head": ...,
  "tail": ...}``, the two arguments as strings without offsets; they are scored in OBD
  only (``task="relations"``, ``setting="OBD"``).
* **OBD** ([`llm_templates`][iescore.io.extractions.llm_templates]): each document's strings become the fillers of its
  template, split into tokens as the reference's span texts are
  ([`filler_tokens`][iescore.io.chars.filler_tokens]); the configured normaliser compares them.
  A string found nowhere in the text is an ordinary filler, a false positive. Its
  relations become the template's [`TextRelation`][iescore.model.TextRelation] s, their
  head and tail split likewise and compared as fillers are (the distinct ones).
* **AO** ([`align_extractions`][iescore.io.extractions.align_extractions]): each string is looked up in the reference text
  (exactly, occurrences not overlapping, left to right) under ``align``:
  ``"first"`` places it at its first occurrence, ``"every"`` at every occurrence,
  ``"unique"`` refuses a string found more than once (an InputError naming the
  document, the string and two of its offsets). Strings found more than once are
  counted (``ambiguous strings``). A string found nowhere has no position, so it can
  be no AO prediction: it is counted as ``hallucinated`` in the report, listed by
  [`align_extractions`][iescore.io.extractions.align_extractions], and warned about -- never dropped silently. To score
  such strings as false positives, score in OBD.

Example:
    >>> from iescore.io.chars import TextDocument
    >>> ref = TextDocument("d", "Al met Al Roth.", (("PER", 7, 14),))
    >>> pred = [Extraction("d", (("PER", "Al"), ("PER", "Al Roth")))]
    >>> docs, unfound = align_extractions([ref], pred, align="every")
    >>> [(s.start, s.end) for s in docs[0].spans], unfound
    ([(0, 2), (7, 9), (7, 14)], [])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import get_args

from ..errors import ConfigError, InputError, choices
from ..model import Span, Template, TextRelation
from ..options import Align
from .chars import TextDocument, Tokenizer, check_same_text, filler_tokens, pair_documents
from .jsonl import read_json_records

__all__ = ["ALIGN", "Extraction", "read_llm", "llm_templates", "align_extractions"]

ALIGN: tuple[Align, ...] = get_args(Align)  # ("first", "every", "unique"): recorded in the signature as align:...
_LIST_KEYS = ("entities", "extractions", "items")
_LABEL_KEYS = ("label", "type", "entity_type")


@dataclass(frozen=True)
class Extraction:
    """One document's extracted ``(label, text)`` pairs, in the extractor's order; ``text``
    is the document's text when the extractor's output gives it; ``relations`` its
    extracted ``(label, head, tail)`` triples of strings."""

    id: str
    items: tuple[tuple[str, str], ...]
    text: str | None = None
    relations: tuple[tuple[str, str, str], ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "id", str(self.id))
        items = tuple(tuple(x) for x in self.items)
        for k, it in enumerate(items):
            if len(it) != 2 or not all(isinstance(x, str) and x.strip() for x in it):
                raise InputError(f"document {self.id!r}: extraction #{k} must be a (label, text) pair "
                                 f"of strings that are not empty or blank, got {it!r}")
        object.__setattr__(self, "items", items)
        rels = tuple(tuple(x) for x in self.relations)
        for k, r in enumerate(rels):
            if len(r) != 3 or not all(isinstance(x, str) and x.strip() for x in r):
                raise InputError(f"document {self.id!r}: relation #{k} must be a (label, head, tail) triple "
                                 f"of strings that are not empty or blank, got {r!r}")
        object.__setattr__(self, "relations", rels)


def read_llm(path: str, *, encoding: str = "utf-8") -> tuple[Extraction, ...]:
    """Read LLM extractions (see the module docstring); errors name the file and line."""
    out = []
    for lineno, rec in read_json_records(path, encoding):
        where = f"{path}:{lineno}"
        if not isinstance(rec, Mapping) or "id" not in rec:
            raise InputError(f"{where}: a document is an object with an 'id', got {str(rec)[:80]!r}")
        key = next((k for k in _LIST_KEYS if k in rec), None)
        entries = rec[key] if key else []
        if not isinstance(entries, list):
            raise InputError(f"{where}: {key!r} must be a list of {{label, text}} objects")
        items = []
        for e in entries:
            lab = next((e[k] for k in _LABEL_KEYS if isinstance(e, Mapping) and k in e), None)
            if lab is None or not isinstance(e.get("text"), str):
                raise InputError(f"{where}: an extraction is {{'label': ..., 'text': ...}}, got {e!r}")
            items.append((lab, e["text"]))
        text = rec.get("text")
        if text is not None and not isinstance(text, str):
            raise InputError(f"{where}: 'text' must be a string")
        rels = rec.get("relations", [])
        for r in rels if isinstance(rels, list) else [rels]:
            if not isinstance(rels, list) or not isinstance(r, Mapping) or not all(
                    isinstance(r.get(k), str) for k in ("label", "head", "tail")):
                raise InputError(f"{where}: 'relations' is a list of {{'label', 'head', 'tail'}} objects of "
                                 f"strings, got {str(r)[:80]!r}")
        try:
            out.append(Extraction(rec["id"], tuple(items), text, tuple((r["label"], r["head"], r["tail"]) for r in rels)))
        except InputError as exc:
            raise InputError(f"{where}: {exc}") from None
    return tuple(out)


def llm_templates(extractions: Sequence[Extraction], *, level: str, tokenizer: Tokenizer = "regex") -> list[Template]:
    """OBD templates: per document and label, the distinct extracted strings as fillers.

    >>> llm_templates([Extraction("d", (("PER", "Al Roth"), ("PER", "Al Roth")))], level="tokens")[0].slots
    {'PER': (('Al', 'Roth'),)}
    >>> llm_templates([Extraction("d", (), relations=(("works_for", "Al Roth,", "IBM"),))], level="tokens")[0].relations
    (TextRelation(label='works_for', head=('Al', 'Roth', ','), tail=('IBM',), score=None),)
    """
    out = []
    for ex in extractions:
        slots: dict[str, list[tuple[str, ...]]] = {}
        for label, s in ex.items:
            fill = filler_tokens(s, level=level, tokenizer=tokenizer)
            lst = slots.setdefault(label, [])
            if fill not in lst:
                lst.append(fill)
        rels: list[TextRelation] = []
        for k, (label, head, tail) in enumerate(ex.relations):
            h, t = filler_tokens(head, level=level, tokenizer=tokenizer), filler_tokens(tail, level=level, tokenizer=tokenizer)
            if not h or not t:
                raise InputError(f"document {ex.id!r}: relation #{k} {label!r} ({head!r}, {tail!r}): an argument "
                                 "holds no token to compare")
            if (rel := TextRelation(label, h, t)) not in rels:
                rels.append(rel)
        out.append(Template(ex.id, {k: tuple(v) for k, v in slots.items()}, relations=tuple(rels)))
    return out


def _occurrences(text: str, s: str) -> list[int]:
    out, at = [], text.find(s)
    while at >= 0:
        out.append(at)
        at = text.find(s, at + len(s))
    return out


def align_extractions(
    reference: Sequence[TextDocument], prediction: Sequence[Extraction], *, align: str = "first"
) -> tuple[list[TextDocument], list[tuple[str, str, str]]]:
    """The extractions as character-offset documents on the reference texts (paired by
    id), and the ``(document id, label, text)`` of every string found nowhere."""
    if align not in ALIGN:
        raise ConfigError(f"unknown align policy {align!r}; valid: {choices(ALIGN)}")
    out, unfound = [], []
    for ref, ex in zip(reference, pair_documents(reference, prediction)):
        if ex.text is not None:
            check_same_text(ref, TextDocument(ex.id, ex.text))
        spans: list[Span] = []
        for label, s in ex.items:
            at = _occurrences(ref.text, s)
            if not at:
                unfound.append((ref.id, label, s))
                continue
            if align == "unique" and len(at) > 1:
                raise InputError(
                    f"document {ref.id!r}: {label} {s!r} occurs {len(at)} times (at characters {at[0]} and "
                    f"{at[1]}, ...); align='unique' refuses it: choose align={choices(ALIGN[:2])}"
                )
            spans.extend(Span(label, a, a + len(s)) for a in (at if align == "every" else at[:1]))
        out.append(TextDocument(ref.id, ref.text, tuple(spans), ref.tokens))
    return out, unfound
