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

A document's id is its ``id`` (or Prodigy's ``meta.id``), else ``<file name>#<line>``.
Every error names the file, the line and the value. [`write_jsonl`][iescore.io.jsonl.write_jsonl] writes
``{"id", "text", "spans": [{"start", "end", "label"}], "tokens"}`` lines, which read back
as they were.

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
from ..model import Span
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


def _label_studio(record: Mapping[str, Any], source: str, pick: int | None, where: str,
                  notes: dict[str, int]) -> tuple[str, list[tuple[str, Any, Any, Any]]]:
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
    spans = []
    for result in (entries[0].get("result") or []) if entries else []:
        if result.get("type", "labels") != "labels":
            key = f"skipped label studio {result.get('type')} results"
            notes[key] = notes.get(key, 0) + 1
            continue
        spans.extend(_span_dicts(result.get("value"), where))
    return data["text"], spans


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
        if "data" in record:
            text, raw = _label_studio(record, source, pick, where, notes)
        else:
            given = record.get("text")
            if not isinstance(given, str):
                raise InputError(f"{where}: a document needs 'text' (a string), or Label Studio's data.text")
            text = given
            found = next((k for k in SPAN_KEYS if isinstance(record.get(k), list)), None)
            raw = [x for e in (record[found] if found else []) for x in _span_dicts(e, where)]
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
        docs.append(TextDocument(doc_id, text, spans, tokens))
    return TextCorpus(tuple(docs), dict(sorted(notes.items())))


def write_jsonl(documents: Iterable[Any], path: str, *, encoding: str = "utf-8") -> None:
    """Write [`TextDocument`][iescore.io.chars.TextDocument] s as JSON lines (Prodigy's span shape),
    atomically (`atomic_write`: an interrupted write leaves the old file)."""
    with atomic_write(path, encoding=encoding) as fh:
        for d in documents:
            rec: dict[str, Any] = {"id": d.id, "text": d.text, "spans": [_span_json(s) for s in d.spans]}
            if d.tokens is not None:
                rec["tokens"] = [{"text": d.text[a:b], "start": a, "end": b, "id": k} for k, (a, b) in enumerate(d.tokens)]
            fh.write(json.dumps(rec, ensure_ascii=False) + "\n")


def _span_json(s: Span) -> dict[str, Any]:
    out: dict[str, Any] = {"start": s.start, "end": s.end, "label": s.label}
    if s.score is not None:
        out["score"] = s.score
    return out
