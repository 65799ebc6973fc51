"""Inline-tag corpora: the CMU Seminar Announcements format.

A file holds raw text with slot tags around slot fillers
(``<stime>5:00 PM</stime>``). Markup tags (``<paragraph>``, ``<sentence>``)
are removed and ignored, even where they cross slot tags; any other text in
angle brackets (e-mail addresses, ``<note>``) is kept as text. The reader gives
the raw text with the slots' character offsets, and a tokenised
[`Document`][iescore.Document] whose AO spans are the slots; its OBD template is
``document.template()``. [`write_inline`][iescore.adapters.inline.write_inline] puts the slots back as tags, so
the reader round-trips.

Example:
    >>> doc = parse_inline("d", "Time: <stime>5:00 PM</stime><sentence> at <location>Wean</location>",
    ...                    tokenizer="regex")
    >>> doc.text, doc.slots
    ('Time: 5:00 PM at Wean', (('stime', 6, 13), ('location', 17, 21)))
    >>> [(s.label, doc.document.span_text(s)) for s in doc.document.spans]
    [('stime', '5:00 PM'), ('location', 'Wean')]
    >>> write_inline(doc.text, doc.slots)
    'Time: <stime>5:00 PM</stime> at <location>Wean</location>'
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from iescore.errors import InputError
from iescore.io.conll import read_lines
from iescore.model import Document, Span
from iescore.text import char_to_token_span, tokenize

__all__ = ["SEMINAR_SLOTS", "MARKUP", "InlineDocument", "parse_inline", "write_inline", "read_seminar"]

SEMINAR_SLOTS = ("stime", "etime", "speaker", "location")
MARKUP = ("paragraph", "sentence")


@dataclass(frozen=True)
class InlineDocument:
    """One inline-tagged document.

    Attributes:
        id: the document id (``split/stem`` for corpus files).
        text: the raw text, every slot and markup tag removed.
        slots: ``(label, start, end)`` character spans of the slot fillers in ``text``.
        document: the tokenised document; its spans are the slots on token offsets.
        misaligned: slots whose characters did not fall on token boundaries
            (mapped with ``misaligned="expand"``).
    """

    id: str
    text: str
    slots: tuple[tuple[str, int, int], ...]
    document: Document
    misaligned: int = 0


def _tag_pattern(slots: Sequence[str], markup: Sequence[str]) -> re.Pattern[str]:
    names = "|".join(re.escape(n) for n in (*slots, *markup))
    return re.compile(rf"<(/?)({names})>")


def parse_inline(
    doc_id: str,
    text: str,
    *,
    slots: Sequence[str] = SEMINAR_SLOTS,
    markup: Sequence[str] = MARKUP,
    tokenizer: str | Callable[[str], Sequence[tuple[int, int]]] = "spacy",
    misaligned: str = "expand",
) -> InlineDocument:
    """Parse one inline-tagged text (see the module docstring)."""
    pat = _tag_pattern(slots, markup)
    out: list[str] = []
    pos = 0
    length = 0
    open_at: dict[str, int] = {}
    found: list[tuple[str, int, int]] = []
    for m in pat.finditer(text):
        out.append(text[pos : m.start()])
        length += m.start() - pos
        pos = m.end()
        closing, name = m.group(1) == "/", m.group(2)
        if name in markup:
            continue
        line = text.count("\n", 0, m.start()) + 1
        if not closing:
            if name in open_at:
                raise InputError(f"{doc_id}:{line}: <{name}> opened again before </{name}>")
            open_at[name] = length
        else:
            if name not in open_at:
                raise InputError(f"{doc_id}:{line}: </{name}> without an opening <{name}>")
            found.append((name, open_at.pop(name), length))
    if open_at:
        name = next(iter(open_at))
        raise InputError(f"{doc_id}: <{name}> is never closed")
    out.append(text[pos:])
    raw = "".join(out)
    # a filler's surrounding whitespace is not part of it
    clean = []
    for name, a, b in found:
        while a < b and raw[a].isspace():
            a += 1
        while b > a and raw[b - 1].isspace():
            b -= 1
        if a < b:
            clean.append((name, a, b))
    clean.sort(key=lambda x: (x[1], x[2], x[0]))
    offsets = tokenize(raw, tokenizer)
    spans = []
    n_mis = 0
    for name, a, b in clean:
        hit = char_to_token_span(offsets, a, b, misaligned=misaligned)
        if hit is None:
            n_mis += 1
            continue
        s, e, ok = hit
        n_mis += not ok
        spans.append(Span(name, s, e))
    tokens = tuple(raw[a:b] for a, b in offsets)
    seps = tuple(raw[offsets[k][1] : offsets[k + 1][0]] for k in range(len(offsets) - 1))
    doc = Document(doc_id, tokens, tuple(spans), seps, tuple(offsets))
    return InlineDocument(doc_id, raw, tuple(clean), doc, n_mis)


def write_inline(text: str, slots: Sequence[tuple[str, int, int]]) -> str:
    """Insert slot tags into raw text at their character offsets (the inverse of parsing)."""
    inserts: list[tuple[int, int, str]] = []
    for name, a, b in slots:
        inserts.append((a, 1, f"<{name}>"))
        inserts.append((b, 0, f"</{name}>"))
    inserts.sort(key=lambda x: (x[0], x[1]))
    out, pos = [], 0
    for at, _, tag in inserts:
        out.append(text[pos:at])
        out.append(tag)
        pos = at
    out.append(text[pos:])
    return "".join(out)


def read_seminar(
    path: str,
    *,
    tokenizer: str | Callable[[str], Sequence[tuple[int, int]]] = "spacy",
    misaligned: str = "expand",
    encoding: str = "latin-1",
) -> list[InlineDocument]:
    """Read a Seminar Announcements folder (or one file), in numeric file order.

    ``path`` may be the corpus root (``training/pretagged`` and
    ``test/pretagged`` are read, ids ``training/0``...), a folder of ``.txt``
    files, or a single file.
    """
    if os.path.isfile(path):
        files = [("", path)]
    else:
        subdirs = [("training", os.path.join(path, "training", "pretagged")), ("test", os.path.join(path, "test", "pretagged"))]
        if all(os.path.isdir(d) for _, d in subdirs):
            return [d for split, folder in subdirs for d in _read_folder(folder, split, tokenizer, misaligned, encoding)]
        if not os.path.isdir(path):
            raise InputError(f"no Seminar Announcements files at {path}")
        return _read_folder(path, os.path.basename(os.path.normpath(path)), tokenizer, misaligned, encoding)
    return [_read_file(f, prefix, tokenizer, misaligned, encoding) for prefix, f in files]


def _sort_key(name: str) -> tuple[int, int | str]:
    stem = os.path.splitext(name)[0]
    return (0, int(stem)) if stem.isdigit() else (1, stem)


def _read_folder(folder: str, split: str, tokenizer, misaligned: str, encoding: str) -> list[InlineDocument]:  # type: ignore[no-untyped-def]
    names = sorted((n for n in os.listdir(folder) if not n.startswith(".")), key=_sort_key)
    if not names:
        raise InputError(f"no files in {folder}")
    return [_read_file(os.path.join(folder, n), split, tokenizer, misaligned, encoding) for n in names]


def _read_file(path: str, split: str, tokenizer, misaligned: str, encoding: str) -> InlineDocument:  # type: ignore[no-untyped-def]
    text = "\n".join(read_lines(path, encoding)) + "\n"
    stem = os.path.splitext(os.path.basename(path))[0]
    doc_id = f"{split}/{stem}" if split else stem
    try:
        return parse_inline(doc_id, text, tokenizer=tokenizer, misaligned=misaligned)
    except InputError as exc:
        raise InputError(f"{path}: {exc}") from None
