"""Before the pipeline (readers), LLM extractions: per document a list of ``{label, text}``
without offsets, read and turned into OBD templates, or aligned to the document text
for AO scoring.

* **Reading** ([`read_llm`][iescore.io.llm.read_llm]): a JSONL file with one object per document, or a JSON
  list of them: ``{"id": ..., "entities": [{"label": ..., "text": ...}, ...]}``
  (the list may also be called ``extractions`` or ``items``; a label may be called
  ``type`` or ``entity_type``); an optional ``text`` is the document's text, checked
  against the reference's.
* **OBD** ([`llm_templates`][iescore.io.llm.llm_templates]): each document's strings become the fillers of its
  template, split into tokens as the reference's span texts are
  ([`filler_tokens`][iescore.io.chars.filler_tokens]); the configured normaliser compares them.
  A string found nowhere in the text is an ordinary filler, a false positive.
* **AO** ([`align_extractions`][iescore.io.llm.align_extractions]): each string is looked up in the reference text
  (exactly, occurrences not overlapping, left to right) under ``align``:
  ``"first"`` places it at its first occurrence, ``"every"`` at every occurrence,
  ``"unique"`` refuses a string found more than once (an InputError naming the
  document, the string and two of its offsets). Strings found more than once are
  counted (``ambiguous strings``). A string found nowhere has no position, so it can
  be no AO prediction: it is counted as ``hallucinated`` in the report, listed by
  [`align_extractions`][iescore.io.llm.align_extractions], and warned about -- never dropped silently. To score
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
from typing import Any, get_args

from ..config import Config
from ..errors import ConfigError, InputError, choices, warn
from ..model import Span, Template
from ..options import Align
from ..scoring.stream import Scorer
from .chars import (
    TextDocument,
    Tokenizer,
    check_same_text,
    filler_tokens,
    pair_documents,
    text_template,
)
from .jsonl import read_json_records
from .textscore import add_text

__all__ = ["ALIGN", "Extraction", "read_llm", "llm_templates", "align_extractions", "score_llm"]

ALIGN: tuple[Align, ...] = get_args(Align)  # ("first", "every", "unique"): recorded in the signature as align:...
_LIST_KEYS = ("entities", "extractions", "items")
_LABEL_KEYS = ("label", "type", "entity_type")


@dataclass(frozen=True)
class Extraction:
    """One document's extracted ``(label, text)`` pairs, in the extractor's order; ``text``
    is the document's text when the extractor's output gives it."""

    id: str
    items: tuple[tuple[str, str], ...]
    text: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "id", str(self.id))
        items = tuple(tuple(x) for x in self.items)
        for k, it in enumerate(items):
            if len(it) != 2 or not all(isinstance(x, str) and x.strip() for x in it):
                raise InputError(f"document {self.id!r}: extraction #{k} must be a (label, text) pair "
                                 f"of strings that are not empty or blank, got {it!r}")
        object.__setattr__(self, "items", items)


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
        try:
            out.append(Extraction(rec["id"], tuple(items), text))
        except InputError as exc:
            raise InputError(f"{where}: {exc}") from None
    return tuple(out)


def llm_templates(extractions: Sequence[Extraction], *, level: str, tokenizer: Tokenizer = "regex") -> list[Template]:
    """OBD templates: per document and label, the distinct extracted strings as fillers.

    >>> llm_templates([Extraction("d", (("PER", "Al Roth"), ("PER", "Al Roth")))], level="tokens")[0].slots
    {'PER': (('Al', 'Roth'),)}
    """
    out = []
    for ex in extractions:
        slots: dict[str, list[tuple[str, ...]]] = {}
        for label, s in ex.items:
            fill = filler_tokens(s, level=level, tokenizer=tokenizer)
            lst = slots.setdefault(label, [])
            if fill not in lst:
                lst.append(fill)
        out.append(Template(ex.id, {k: tuple(v) for k, v in slots.items()}))
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


def _ambiguous(reference: Sequence[TextDocument], prediction: Sequence[Extraction]) -> int:
    return sum(len(_occurrences(r.text, s)) > 1
               for r, ex in zip(reference, pair_documents(reference, prediction)) for _, s in ex.items)


def score_llm(
    reference: Sequence[TextDocument] | Sequence[Extraction],
    prediction: Sequence[Extraction],
    *,
    level: str,
    tokenizer: Tokenizer = "regex",
    misaligned: str = "expand",
    align: str = "first",
    notes: Mapping[str, int] | None = None,
    config: Config | None = None,
    **options: Any,
) -> Any:
    """Score LLM extractions against character-offset reference documents (or against
    other extractions, in OBD); returns an [`iescore.Report`][iescore.Report]. ``options``: any
    of [`Options`][iescore.options.Options].

    ``setting="OBD"`` compares templates ([`llm_templates`][iescore.io.llm.llm_templates]); ``"AO"`` aligns the
    strings ([`align_extractions`][iescore.io.llm.align_extractions]) and scores them at ``level`` as
    [`score_text`][iescore.io.textscore.score_text] does, counting ``hallucinated`` and
    ``ambiguous strings`` in the report; its signature names ``align`` (``align:every``).

    >>> from iescore.io.chars import TextDocument
    >>> ref = [TextDocument("d", "Al met Al Roth.", (("PER", 7, 14),))]
    >>> pred = [Extraction("d", (("PER", "Al"),))]
    >>> [(r.overall.fp, r.signature.split("|")[-3]) for r in
    ...  (score_llm(ref, pred, level="characters", align=a) for a in ("first", "every"))]
    [(1, 'align:first'), (2, 'align:every')]"""
    cfg = Config.from_options(config, **options)
    s = Scorer(cfg)
    for k, v in (notes or {}).items():
        if v:
            s.note(k, v)
    if cfg.setting == "OBD":
        if reference and isinstance(reference[0], Extraction):
            refs = llm_templates(reference, level=level, tokenizer=tokenizer)  # type: ignore[arg-type]
        else:
            for r, p in zip(reference, pair_documents(reference, prediction)):
                if p.text is not None:
                    check_same_text(r, TextDocument(p.id, p.text))  # type: ignore[arg-type]
            refs = [text_template(d, level=level, tokenizer=tokenizer) for d in reference]  # type: ignore[arg-type]
        preds = llm_templates(pair_documents(refs, prediction), level=level, tokenizer=tokenizer)
        s.use(level=level, tokenizer=None if level == "characters" else ("custom" if callable(tokenizer) else tokenizer))
        s.add(reference=refs, prediction=preds)
        return s.report()
    if reference and isinstance(reference[0], Extraction):
        raise ConfigError("extractions without offsets have no positions: score them against each other with setting='OBD'")
    docs, unfound = align_extractions(reference, prediction, align=align)  # type: ignore[arg-type]
    s.use(align=align)  # where the strings went changes the numbers: the signature says it
    if unfound:
        shown = "; ".join(f"{d!r}: {lab} {t!r}" for d, lab, t in unfound[:3])
        warn(f"{len(unfound)} extracted strings are found nowhere in their document's text and "
             f"have no position (counted as 'hallucinated'): {shown}{' ...' if len(unfound) > 3 else ''}")
        s.note("hallucinated", len(unfound))
    ambiguous = _ambiguous(reference, prediction)  # type: ignore[arg-type]
    if ambiguous:
        s.note("ambiguous strings", ambiguous)
    add_text(s, reference, docs, level=level, tokenizer=tokenizer, misaligned=misaligned)  # type: ignore[arg-type]
    return s.report()
