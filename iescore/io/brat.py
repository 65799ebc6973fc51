"""Before the pipeline (readers), brat standoff files: a ``.txt`` text and its ``.ann``
annotations, read into [`TextDocument`][iescore.io.chars.TextDocument] s.

* Text-bound annotations (``T1<TAB>LABEL START END<TAB>text``) are the spans; their
  offsets are characters of the ``.txt`` file read as it is (UTF-8 by default, line ends
  kept). The annotation's own text must equal the characters it points at (runs of
  whitespace compared as one space), else the ``.txt`` is not the annotated one: an
  error naming the file and line.
* Discontinuous spans (``T1<TAB>LABEL 0 5;9 14<TAB>...``) follow ``discontinuous``:
  ``"error"`` (the default: an InputError naming the file and line), ``"split"``
  (each fragment a span of its own) or ``"cover"`` (one span from the first
  fragment's start to the last one's end, the gaps included); each such annotation
  is counted (``discontinuous split`` / ``discontinuous covered``).
* Every other kind of line -- relations ``R``, events ``E``, attributes ``A``/``M``,
  normalisations ``N``, notes ``#``, equivalences ``*`` -- is skipped and counted per
  kind (``skipped brat relations``, ...). Event triggers are ``T`` lines and read as spans.
* A ``.ann`` without its ``.txt`` is an error naming both files.

A document's id is the ``.ann`` path relative to the folder read, without ``.ann``.
[`write_brat`][iescore.io.brat.write_brat] writes documents back (one ``.txt`` and ``.ann`` per document).

Example:
    >>> import tempfile, os, pathlib
    >>> folder = tempfile.mkdtemp()
    >>> _ = pathlib.Path(folder, "a.txt").write_text("Al Roth met Ido Erev.")
    >>> _ = pathlib.Path(folder, "a.ann").write_text(
    ...     "T1\\tPER 0 7\\tAl Roth\\nT2\\tPER 12 15;16 20\\tIdo Erev\\nR1\\tMet Arg1:T1 Arg2:T2\\n")
    >>> c = read_brat(folder, discontinuous="cover")
    >>> [(d.id, [(s.label, s.start, s.end) for s in d.spans]) for d in c.documents]
    [('a', [('PER', 0, 7), ('PER', 12, 20)])]
    >>> dict(c.notes)
    {'discontinuous covered': 1, 'skipped brat relations': 1}
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from ..atomic import atomic_write
from ..errors import ConfigError, InputError, choices
from ..model import Span
from .chars import TextCorpus, TextDocument, char_span
from .textfiles import decode_error, encoding_problem, read_lines

__all__ = ["DISCONTINUOUS", "read_brat", "write_brat"]

DISCONTINUOUS = ("error", "split", "cover")
_SKIPPED = {"R": "relations", "E": "events", "A": "attributes", "M": "attributes",
            "N": "normalizations", "#": "notes", "*": "equivalences"}


def _read_text(path: str, encoding: str) -> str:
    try:
        with open(path, encoding=encoding, newline="") as fh:
            return fh.read()
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from None
    except UnicodeError as exc:  # the line, byte and encoding to pass (iescore.io.conll.decode_error)
        with open(path, "rb") as fh:
            data = fh.read()
        problem = encoding_problem(data[:4096], encoding)
        raise (InputError(f"{path}:1: {problem}") if problem else decode_error(path, data, encoding, exc)) from None


def _ann_files(path: str) -> list[tuple[str, str]]:
    """``(document id, .ann path)`` for a folder (every ``.ann`` below it, sorted) or one file."""
    if os.path.isdir(path):
        out = []
        for root, dirs, files in os.walk(path):
            dirs.sort()
            for name in sorted(files):
                if name.endswith(".ann"):
                    full = os.path.join(root, name)
                    out.append((os.path.relpath(full, path)[: -len(".ann")].replace(os.sep, "/"), full))
        return out
    if not path.endswith(".ann"):
        raise InputError(f"{path}: a brat input is a folder or a .ann file")
    if not os.path.exists(path):
        raise InputError(f"cannot read {path}: no such file")
    return [(os.path.basename(path)[: -len(".ann")], path)]


def _fragments(field: str, where: str) -> list[tuple[int, int]]:
    out = []
    for frag in field.split(";"):
        parts = frag.split()
        try:
            a, b = (int(x) for x in parts)
        except ValueError:
            raise InputError(f"{where}: expected 'START END' character offsets, got {frag!r}") from None
        out.append((a, b))
    return out


def read_brat(path: str, *, discontinuous: str = "error", encoding: str = "utf-8") -> TextCorpus:
    """Read a brat folder (every ``.ann`` below it, each with its ``.txt``) or one ``.ann``
    file; see the module docstring for what is read, skipped and counted."""
    if discontinuous not in DISCONTINUOUS:
        raise ConfigError(f"unknown discontinuous policy {discontinuous!r}; valid: {choices(DISCONTINUOUS)}")
    docs = []
    notes: dict[str, int] = {}
    files = _ann_files(path)
    if not files:
        raise InputError(f"{path}: no .ann files")
    for doc_id, ann in files:
        txt = ann[: -len(".ann")] + ".txt"
        if not os.path.exists(txt):
            raise InputError(f"{ann}: its text {txt} does not exist (brat needs a .txt beside each .ann)")
        text = _read_text(txt, encoding)
        spans: list[Span] = []
        for lineno, line in enumerate(read_lines(ann, encoding), start=1):
            if not line.strip():
                continue
            where = f"{ann}:{lineno}"
            kind = line[0]
            if kind in _SKIPPED:
                key = f"skipped brat {_SKIPPED[kind]}"
                notes[key] = notes.get(key, 0) + 1
                continue
            if kind != "T":
                raise InputError(f"{where}: unknown annotation {line.split(chr(9))[0]!r}; "
                                 f"brat lines start with {choices(['T', *_SKIPPED])}")
            cols = line.split("\t")
            if len(cols) < 2 or " " not in cols[1]:
                raise InputError(f"{where}: a text-bound annotation is 'T<id><TAB>LABEL START END<TAB>text', got {line!r}")
            label, offsets = cols[1].split(" ", 1)
            frags = _fragments(offsets, where)
            got = [char_span(label, a, b, text, where) for a, b in frags]
            if len(cols) > 2:
                want = " ".join(cols[2].split())
                have = " ".join(" ".join(text[s.start : s.end] for s in got).split())
                if want != have:
                    raise InputError(
                        f"{where}: the annotation's text {cols[2]!r} is not the text at {offsets} "
                        f"in {txt} ({have!r}); is it the annotated .txt?"
                    )
            if len(got) > 1:
                if discontinuous == "error":
                    raise InputError(
                        f"{where}: discontinuous span {label} {offsets}; choose a policy: "
                        f"discontinuous={choices(DISCONTINUOUS[1:])} (CLI --discontinuous)"
                    )
                key = "discontinuous split" if discontinuous == "split" else "discontinuous covered"
                notes[key] = notes.get(key, 0) + 1
                if discontinuous == "cover":
                    got = [char_span(label, min(s.start for s in got), max(s.end for s in got), text, where)]
            spans.extend(got)
        docs.append(TextDocument(doc_id, text, tuple(spans)))
    return TextCorpus(tuple(docs), dict(sorted(notes.items())))


def write_brat(documents: Iterable[TextDocument], folder: str, *, encoding: str = "utf-8") -> None:
    """Write each document as ``<folder>/<id>.txt`` and ``<id>.ann`` (text-bound
    annotations ``T1``, ``T2``, ... in the order of its spans); [`read_brat`][iescore.io.brat.read_brat] reads
    them back as they were. Each file is written atomically (`atomic_write`):
    an interrupted write leaves every file whole, old or new."""
    for doc in documents:
        base = os.path.join(folder, *doc.id.split("/"))
        os.makedirs(os.path.dirname(base) or ".", exist_ok=True)
        with atomic_write(base + ".txt", encoding=encoding, newline="") as fh:
            fh.write(doc.text)
        with atomic_write(base + ".ann", encoding=encoding, newline="") as fh:
            for k, s in enumerate(doc.spans, start=1):
                shown = " ".join(doc.span_text(s).split())
                fh.write(f"T{k}\t{s.label} {s.start} {s.end}\t{shown}\n")
