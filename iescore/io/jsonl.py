"""Before the pipeline (readers), JSON lines with character spans: the export shapes of
Prodigy, doccano and Label Studio, and presidio's ``entity_type`` results, read into
[`TextDocument`][iescore.io.chars.TextDocument] s.

A file holds one JSON object per line (JSONL), or one JSON list of such objects (Label
Studio's JSON export). Each object is a document, whose shape is recognised by its keys:

* **Label Studio** (a ``data`` object): the text is ``data["text"]``; the spans are the
  ``labels`` results of its one annotation (``source="annotations"``, the default) or
  prediction (``source="predictions"``): ``{"value": {"start", "end", "labels": [...]}}``,
  one span per label. A task with several annotations is an error unless ``pick=k``
  chooses one; cancelled annotations and results of other types are skipped and counted.
* otherwise the text is ``text`` and the spans are the first of these lists present:
  ``spans`` (Prodigy: ``{"start", "end", "label"}``), ``entities`` (doccano:
  ``{"start_offset", "end_offset", "label"}``), ``label`` or ``labels`` (doccano:
  ``[start, end, label]``; Label Studio JSON-MIN: ``{"start", "end", "labels"}``),
  ``results`` (presidio: ``{"entity_type", "start", "end", "score"}``). A span's label
  is its ``label``, ``entity_type``, ``entity_group`` or each of its ``labels``; its
  optional ``score`` is its confidence, a finite number (``Infinity`` and ``NaN``, which
  Python's ``json`` reads but JSON does not have, are errors).
* Prodigy records whose ``answer`` is not ``accept`` are skipped and counted; Prodigy's
  ``tokens`` (``{"start", "end"}``) are kept for ``tokenizer="given"``.
* **Relations and links**: a span object may have an ``id`` (any JSON value but null,
  unique in its document); ``relations`` is a list of ``{"label", "head", "tail"}`` whose
  head and tail are span ids (doccano's ``{"type", "from_id", "to_id"}`` too; Prodigy's
  ``{"label", "head_span", "child_span"}`` give the arguments as span objects), the head
  the first argument; ``links`` is a list of ``{"entity", "id"}``, ``entity`` a span id
  and ``id`` the knowledge-base id (a non-empty string, kept as written); a span
  object's own ``kb_id`` links it too. Either may have a ``score``. An id naming no span
  of the document, or a span object of several ``labels``, is an error. In Label Studio
  tasks, ``relation`` results (``from_id``, ``to_id`` naming ``labels`` results by their
  ``id``) are relations, one per label, ``from_id`` the head (``direction="left"``: the
  tail); relations without a label are skipped and counted (``skipped label studio
  relations without a label``), bidirectional ones read from ``from_id`` and counted
  (``label studio bidirectional relations read from from_id to to_id``). The documented
  shape::

      {"id": "d1", "text": "Al Roth works for IBM.",
       "entities": [{"id": "T1", "label": "PER", "start": 0, "end": 7},
                    {"id": "T2", "label": "ORG", "start": 18, "end": 21}],
       "relations": [{"label": "works_for", "head": "T1", "tail": "T2"}],
       "links": [{"entity": "T2", "id": "Q37156"}]}

A document's id is its ``id`` (or Prodigy's ``meta.id``), else ``<file name>#<line>``.
Every error names the file, the line and the value. [`write_jsonl`][iescore.io.jsonl.write_jsonl] writes
``{"id", "text", "spans": [{"start", "end", "label"}], "tokens"}`` lines (with span ids,
``relations`` and ``links`` when the document has relations or links), which read back
as they were (a relation argument or link mention that is none of the spans is written,
and read back, as a span).

Example:
    >>> import tempfile, os, pathlib
    >>> path = os.path.join(tempfile.mkdtemp(), "d.jsonl")
    >>> _ = pathlib.Path(path).write_text(
    ...     '{"id": "a", "text": "Al Roth", "label": [[0, 7, "PER"]]}\\n'
    ...     '{"id": "b", "text": "Call 555", "results": [{"entity_type": "PHONE", "start": 5, "end": 8, "score": 0.9}]}\\n')
    >>> [(d.id, d.spans) for d in read_jsonl(path).documents]  # doctest: +NORMALIZE_WHITESPACE
    [('a', (Span(label='PER', start=0, end=7, score=None),)),
     ('b', (Span(label='PHONE', start=5, end=8, score=0.9),))]
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Mapping
from typing import Any

from ..atomic import atomic_write
from ..errors import ConfigError, InputError, choices
from ..model import Link, Relation, Span
from .chars import TextCorpus, TextDocument, char_span
from .textfiles import read_lines

__all__ = ["SOURCES", "read_json_records", "read_jsonl", "write_jsonl"]

SOURCES = ("annotations", "predictions")  # Label Studio: which list holds the spans
SPAN_KEYS = ("spans", "entities", "label", "labels", "results")


def read_json_records(path: str, encoding: str = "utf-8") -> list[tuple[int, Any]]:
    """``(line, value)`` for each JSON value of a JSONL file (blank lines skipped), or for
    each item of a file holding one JSON list (line 1 for all); an invalid line is an
    InputError naming the file and line."""
    lines = read_lines(path, encoding)
    text = "\n".join(lines)
    if text.lstrip().startswith("["):
        try:
            items = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"{path}:{exc.lineno}: not valid JSON: {exc.msg}") from None
        return [(1, x) for x in items]
    out = []
    for k, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            out.append((k, json.loads(line)))
        except json.JSONDecodeError as exc:
            raise InputError(f"{path}:{k}: not valid JSON ({exc.msg}): {line[:80]!r}") from None
    return out


def _span_dicts(entry: Any, where: str) -> list[tuple[str, Any, Any, Any]]:
    """``(label, start, end, score)`` of one span entry (a dict or ``[start, end, label]``)."""
    if isinstance(entry, (list, tuple)):
        if len(entry) != 3:
            raise InputError(f"{where}: a span list is [start, end, label], got {entry!r}")
        return [(entry[2], entry[0], entry[1], None)]
    if not isinstance(entry, Mapping):
        raise InputError(f"{where}: a span is an object or [start, end, label], got {entry!r}")
    start = entry.get("start", entry.get("start_offset"))
    end = entry.get("end", entry.get("end_offset"))
    if start is None or end is None:
        raise InputError(f"{where}: span {dict(entry)!r} has no 'start'/'end' (or 'start_offset'/'end_offset')")
    score = entry.get("score")
    for key in ("label", "entity_type", "entity_group"):
        if key in entry:
            return [(entry[key], start, end, score)]
    if isinstance(entry.get("labels"), list) and entry["labels"]:
        return [(lab, start, end, score) for lab in entry["labels"]]
    raise InputError(f"{where}: span {dict(entry)!r} has no 'label', 'entity_type', 'entity_group' or 'labels'")


def _id_key(value: Any) -> str:
    """A span id as compared: ``1`` and ``"1"`` name the same span."""
    return json.dumps(value) if isinstance(value, (bool, Mapping, list)) else str(value)


def _spans_with_ids(entries: Any, where: str) -> tuple[list[tuple[str, Any, Any, Any]], dict[str, list[int]],
                                                      list[tuple[int, Any, Any]]]:
    """The spans of a document's span list, the span indices of each span ``id``, and
    ``(span index, kb_id, score)`` of the spans given a ``kb_id``."""
    raw: list[tuple[str, Any, Any, Any]] = []
    ids: dict[str, list[int]] = {}
    kb: list[tuple[int, Any, Any]] = []
    for e in entries:
        got = _span_dicts(e, where)
        if isinstance(e, Mapping) and e.get("id") is not None:
            key = _id_key(e["id"])
            if key in ids:
                raise InputError(f"{where}: the span id {e['id']!r} is given twice")
            ids[key] = list(range(len(raw), len(raw) + len(got)))
        if isinstance(e, Mapping) and e.get("kb_id") not in (None, ""):
            kb.extend((k, e["kb_id"], None) for k in range(len(raw), len(raw) + len(got)))
        raw.extend(got)
    return raw, ids, kb


def _entries(record: Mapping[str, Any], key: str, where: str) -> list[Any]:
    """A record's list of objects under ``key`` (none when absent)."""
    value = record.get(key)
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(e, Mapping) for e in value):
        raise InputError(f"{where}: {key!r} must be a list of objects, got {str(value)[:80]!r}")
    return value


def _records(text: str, rel_entries: list[Any], link_entries: list[Any], spans: tuple[Span, ...],
             ids: Mapping[str, list[int]], kb: list[tuple[int, Any, Any]], where: str
             ) -> tuple[tuple[Relation, ...], tuple[Link, ...]]:
    """A document's relations and links (and spans' ``kb_id``), arguments by span id (or, in
    Prodigy's relations, as ``head_span`` / ``child_span`` objects)."""
    shown = (", ".join(map(repr, list(ids)[:5])) + (", ..." if len(ids) > 5 else "")) or "none; give each span an 'id'"

    def span(value: Any, what: str) -> Span:
        got = ids.get(_id_key(value)) if value is not None else None
        if got is None:
            raise InputError(f"{where}: {what} {value!r} is no span id of the document "
                             f"(span ids: {shown})")
        if len(got) != 1:
            raise InputError(f"{where}: {what} {value!r} names a span of {len(got)} labels; "
                             "an argument or mention is one labelled span")
        return spans[got[0]]

    def given(value: Any, what: str) -> Span:  # Prodigy: the argument as a span object
        lab, a, b, _ = _span_dicts(value, f"{where}: {what}")[0]
        return char_span(lab, a, b, text, f"{where}: {what}")

    rels = []
    for k, e in enumerate(rel_entries):
        label = e.get("label", e.get("type"))
        what = f"relation #{k} {label!r}: the"
        prodigy = isinstance(e.get("head_span"), Mapping) and isinstance(e.get("child_span"), Mapping)
        h, t = e.get("head", e.get("from_id")), e.get("tail", e.get("to_id"))
        if not isinstance(label, str) or not label or (not prodigy and (h is None or t is None)):
            raise InputError(f"{where}: relation #{k} must be {{'label', 'head', 'tail'}} (or doccano's "
                             f"{{'type', 'from_id', 'to_id'}}), got {dict(e)!r}")
        if prodigy:
            head, tail = given(e["head_span"], f"{what} head"), given(e["child_span"], f"{what} tail")
        else:
            head, tail = span(h, f"{what} head"), span(t, f"{what} tail")
        rels.append(Relation(label, head, tail, _score(e.get("score"), where)))
    links = [Link(spans[i], _kb(x, where), _score(sc, where)) for i, x, sc in kb]
    for k, e in enumerate(link_entries):
        if "entity" not in e or ("id" not in e and "kb_id" not in e):
            raise InputError(f"{where}: link #{k} must be {{'entity', 'id'}}, got {dict(e)!r}")
        links.append(Link(span(e["entity"], f"link #{k}: the entity"), _kb(e.get("id", e.get("kb_id")), where),
                          _score(e.get("score"), where)))
    return tuple(rels), tuple(links)


def _kb(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InputError(f"{where}: a knowledge-base id is a non-empty string, got {value!r}")
    return value


def _score(value: Any, where: str) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        raise InputError(f"{where}: the confidence {json.dumps(value)} is not a finite number")
    return value


def _label_studio(record: Mapping[str, Any], source: str, pick: int | None, where: str, notes: dict[str, int]
                  ) -> tuple[str, list[tuple[str, Any, Any, Any]], dict[str, list[int]], list[dict[str, Any]]]:
    """A Label Studio task's text, spans, span indices by result id and relations."""
    data = record["data"]
    if not isinstance(data, Mapping) or not isinstance(data.get("text"), str):
        raise InputError(f"{where}: a Label Studio task needs data.text (a string)")
    entries = [a for a in record.get(source) or [] if not (isinstance(a, Mapping) and a.get("was_cancelled"))]
    cancelled = len(record.get(source) or []) - len(entries)
    if cancelled:
        notes["skipped cancelled annotations"] = notes.get("skipped cancelled annotations", 0) + cancelled
    if pick is not None:
        if not 0 <= pick < len(entries):
            raise InputError(f"{where}: pick={pick} but the task has {len(entries)} {source}")
        entries = [entries[pick]]
    if len(entries) > 1:
        raise InputError(f"{where}: the task has {len(entries)} {source}; choose one with pick=0..{len(entries) - 1}")
    spans: list[tuple[str, Any, Any, Any]] = []
    ids: dict[str, list[int]] = {}
    rels: list[dict[str, Any]] = []
    for result in (entries[0].get("result") or []) if entries else []:
        kind = result.get("type", "labels")
        if kind == "relation":
            labels = result.get("labels") or []
            if not labels:
                notes["skipped label studio relations without a label"] = (
                    notes.get("skipped label studio relations without a label", 0) + 1)
                continue
            a, b = result.get("from_id"), result.get("to_id")
            if result.get("direction") == "left":
                a, b = b, a
            elif result.get("direction") == "bi":
                notes["label studio bidirectional relations read from from_id to to_id"] = (
                    notes.get("label studio bidirectional relations read from from_id to to_id", 0) + len(labels))
            rels.extend({"label": lab, "head": a, "tail": b} for lab in labels)
            continue
        if kind != "labels":
            key = f"skipped label studio {kind} results"
            notes[key] = notes.get(key, 0) + 1
            continue
        got = _span_dicts(result.get("value"), where)
        if result.get("id") is not None:
            ids[_id_key(result["id"])] = list(range(len(spans), len(spans) + len(got)))
        spans.extend(got)
    return data["text"], spans, ids, rels


def read_jsonl(
    path: str, *, source: str = "annotations", pick: int | None = None, encoding: str = "utf-8"
) -> TextCorpus:
    """Read a JSONL (or JSON list) file of documents with character spans; see the module
    docstring for the shapes read."""
    if source not in SOURCES:
        raise ConfigError(f"unknown Label Studio source {source!r}; valid: {choices(SOURCES)}")
    name = "<stdin>" if path == "-" else os.path.basename(path)
    docs = []
    notes: dict[str, int] = {}
    for lineno, record in read_json_records(path, encoding):
        where = f"{path}:{lineno}"
        if not isinstance(record, Mapping):
            raise InputError(f"{where}: a document is a JSON object, got {type(record).__name__}")
        if "answer" in record and record["answer"] != "accept":
            key = f"skipped prodigy {record['answer']} answers"
            notes[key] = notes.get(key, 0) + 1
            continue
        meta = record.get("meta")
        doc_id = record.get("id", meta.get("id") if isinstance(meta, Mapping) else None)
        doc_id = f"{name}#{lineno}" if doc_id is None else str(doc_id)
        where = f"{path}:{lineno} (document {doc_id!r})"
        kb: list[tuple[int, Any, Any]] = []
        if "data" in record:
            text, raw, ids, ls_rels = _label_studio(record, source, pick, where, notes)
            rel_entries, link_entries = ls_rels, []
        else:
            given = record.get("text")
            if not isinstance(given, str):
                raise InputError(f"{where}: a document needs 'text' (a string), or Label Studio's data.text")
            text = given
            found = next((k for k in SPAN_KEYS if isinstance(record.get(k), list)), None)
            raw, ids, kb = _spans_with_ids(record[found] if found else [], where)
            rel_entries, link_entries = _entries(record, "relations", where), _entries(record, "links", where)
        for lab, a, b, sc in raw:
            if isinstance(sc, float) and not math.isfinite(sc):  # Python's json reads them; JSON has none
                raise InputError(
                    f"{where}: span ({lab!r}, {a!r}, {b!r}) has the confidence {json.dumps(sc)}, not a finite "
                    "number; leave 'score' out (or null) for a span without one"
                )
        spans = tuple(char_span(lab, a, b, text, where, sc) for lab, a, b, sc in raw)
        tokens = None
        if isinstance(record.get("tokens"), list):
            try:
                tokens = tuple((int(t["start"]), int(t["end"])) for t in record["tokens"])
            except (KeyError, TypeError, ValueError):
                raise InputError(f"{where}: tokens must be objects with 'start' and 'end'") from None
        rels, links = _records(text, rel_entries, link_entries, spans, ids, kb, where)
        docs.append(TextDocument(doc_id, text, spans, tokens, rels, links))
    return TextCorpus(tuple(docs), dict(sorted(notes.items())))


def write_jsonl(documents: Iterable[Any], path: str, *, encoding: str = "utf-8") -> None:
    """Write [`TextDocument`][iescore.io.chars.TextDocument] s as JSON lines (Prodigy's span shape;
    with relations or links, each span with its index as ``id`` and the relations and
    links by span id), atomically (`atomic_write`: an interrupted write leaves the old file)."""
    with atomic_write(path, encoding=encoding) as fh:
        for d in documents:
            rels, links = getattr(d, "relations", ()), getattr(d, "links", ())
            spans = list(d.spans)
            if rels or links:
                keys = {_key(s): k for k, s in reversed(list(enumerate(spans)))}
                for a in [*(a for r in rels for a in (r.head, r.tail)), *(x.span for x in links)]:
                    if _key(a) not in keys:
                        keys[_key(a)] = len(spans)
                        spans.append(a)
            rec: dict[str, Any] = {"id": d.id, "text": d.text, "spans": [_span_json(s) for s in spans]}
            if rels or links:
                for k, sj in enumerate(rec["spans"]):
                    sj["id"] = k
                rec["relations"] = [_scored({"label": r.label, "head": keys[_key(r.head)], "tail": keys[_key(r.tail)]},
                                            r.score) for r in rels]
                rec["links"] = [_scored({"entity": keys[_key(x.span)], "id": x.id}, x.score) for x in links]
            if d.tokens is not None:
                rec["tokens"] = [{"text": d.text[a:b], "start": a, "end": b, "id": k} for k, (a, b) in enumerate(d.tokens)]
            fh.write(json.dumps(rec, ensure_ascii=False) + "\n")


def _key(s: Span) -> tuple[str, int, int]:
    return s.label, s.start, s.end


def _scored(out: dict[str, Any], score: float | None) -> dict[str, Any]:
    if score is not None:
        out["score"] = score
    return out


def _span_json(s: Span) -> dict[str, Any]:
    return _scored({"start": s.start, "end": s.end, "label": s.label}, s.score)
