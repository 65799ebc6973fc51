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
* Relations (``R1<TAB>LABEL Arg1:T1 Arg2:T2``) are [`Relation`][iescore.Relation] s between
  the spans of the two ``T`` annotations, ``Arg1`` the head (the first argument when none
  is called ``Arg1``).
* Normalisations (``N1<TAB>Reference T1 Wikidata:Q42<TAB>Douglas Adams``) are
  [`Link`][iescore.Link] s of the span of the ``T`` annotation; the link's id is the
  reference as written, ``RID:EID`` (``Wikidata:Q42``): a gold and a predicted link match
  only when they spell it alike.
* A relation or normalisation naming an id that is no ``T`` annotation of its file (a
  missing id, an event ``E``, ...) is skipped, counted (``skipped brat relations to
  missing entities``, ``skipped brat normalizations of missing entities``) and warned
  about, naming the lines. Under ``discontinuous="split"`` a discontinuous entity is
  several spans, so relations and normalisations naming one are skipped and counted
  (``skipped brat relations of split entities``, ``skipped brat normalizations of split
  entities``); under ``"cover"`` they take its one span.
* Every other kind of line -- events ``E``, attributes ``A``/``M``, notes ``#``,
  equivalences ``*`` -- is skipped and counted per kind (``skipped brat events``,
  ``skipped brat attributes``, ``skipped brat notes``, ``skipped brat equivalences``).
  Event triggers are ``T`` lines and read as spans.
* A ``.ann`` without its ``.txt`` is an error naming both files, and so is an id given
  twice in one file (naming both lines).

A document's id is the ``.ann`` path relative to the folder read, without ``.ann``.
[`write_brat`][iescore.io.brat.write_brat] writes documents back (one ``.txt`` and ``.ann`` per document).

Example:
    >>> import tempfile, os, pathlib
    >>> folder = tempfile.mkdtemp()
    >>> _ = pathlib.Path(folder, "a.txt").write_text("Al Roth met Ido Erev.")
    >>> _ = pathlib.Path(folder, "a.ann").write_text(
    ...     "T1\\tPER 0 7\\tAl Roth\\nT2\\tPER 12 15;16 20\\tIdo Erev\\nR1\\tMet Arg1:T1 Arg2:T2\\n"
    ...     "N1\\tReference T1 Wikidata:Q42\\tAl Roth\\nA1\\tNegated T2\\n")
    >>> c = read_brat(folder, discontinuous="cover")
    >>> [(d.id, [(s.label, s.start, s.end) for s in d.spans]) for d in c.documents]
    [('a', [('PER', 0, 7), ('PER', 12, 20)])]
    >>> r = c.documents[0].relations[0]
    >>> r.label, (r.head.start, r.head.end), (r.tail.start, r.tail.end), c.documents[0].links[0].id
    ('Met', (0, 7), (12, 20), 'Wikidata:Q42')
    >>> dict(c.notes)
    {'discontinuous covered': 1, 'skipped brat attributes': 1}
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from ..atomic import atomic_write
from ..errors import ConfigError, InputError, choices, warn
from ..model import Link, Relation, Span
from .chars import TextCorpus, TextDocument, char_span
from .textfiles import decode_error, encoding_problem, read_lines

__all__ = ["DISCONTINUOUS", "read_brat", "write_brat"]

DISCONTINUOUS = ("error", "split", "cover")
_SKIPPED = {"E": "events", "A": "attributes", "M": "attributes", "#": "notes", "*": "equivalences"}
_KINDS = ["T", "R", "N", *_SKIPPED]


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


def _entity(line: str, text: str, txt: str, where: str, discontinuous: str,
            notes: dict[str, int]) -> list[Span]:
    """The spans of one ``T`` line (several under ``discontinuous="split"``)."""
    cols = line.split("\t")
    if len(cols) < 2 or " " not in cols[1]:
        raise InputError(f"{where}: a text-bound annotation is 'T<id><TAB>LABEL START END<TAB>text', got {line!r}")
    label, offsets = cols[1].split(" ", 1)
    got = [char_span(label, a, b, text, where) for a, b in _fragments(offsets, where)]
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
    return got


def _relation(line: str, where: str) -> tuple[str, str, str]:
    """``(label, head id, tail id)`` of an ``R`` line."""
    cols = line.split("\t")
    parts = cols[1].split() if len(cols) > 1 else []
    args = [p.split(":", 1) for p in parts[1:]]
    if len(parts) != 3 or any(len(x) != 2 or not x[1] for x in args):
        raise InputError(f"{where}: a relation is 'R<id><TAB>LABEL Arg1:<id> Arg2:<id>', got {line!r}")
    names = [x[0] for x in args]
    head, tail = (args[0][1], args[1][1]) if names[1] != "Arg1" else (args[1][1], args[0][1])
    return parts[0], head, tail


def _normalization(line: str, where: str) -> tuple[str, str]:
    """``(entity id, reference)`` of an ``N`` line."""
    cols = line.split("\t")
    parts = cols[1].split() if len(cols) > 1 else []
    if len(parts) != 3:
        raise InputError(f"{where}: a normalization is 'N<id><TAB>Reference <id> RID:EID<TAB>text', got {line!r}")
    return parts[1], parts[2]


def _read_ann(doc_id: str, ann: str, txt: str, text: str, discontinuous: str, encoding: str,
              notes: dict[str, int], missing: list[str]) -> TextDocument:
    """One ``.ann`` file on its text: spans, then relations and links by entity id (what is
    skipped counted in ``notes``, the lines naming no entity listed in ``missing``)."""
    spans: list[Span] = []
    entities: dict[str, list[Span]] = {}
    seen: dict[str, int] = {}
    rels: list[tuple[str, str, str, str]] = []  # label, head, tail, where
    norms: list[tuple[str, str, str]] = []  # entity, reference, where
    for lineno, line in enumerate(read_lines(ann, encoding), start=1):
        if not line.strip():
            continue
        where = f"{ann}:{lineno}"
        kind = line[0]
        if kind in _SKIPPED:
            key = f"skipped brat {_SKIPPED[kind]}"
            notes[key] = notes.get(key, 0) + 1
            continue
        if kind not in ("T", "R", "N"):
            raise InputError(f"{where}: unknown annotation {line.split(chr(9))[0]!r}; "
                             f"brat lines start with {choices(_KINDS)}")
        ident = line.split("\t", 1)[0]
        if ident in seen:
            raise InputError(f"{where}: the id {ident!r} is given twice (lines {seen[ident]} and {lineno})")
        seen[ident] = lineno
        if kind == "T":
            got = _entity(line, text, txt, where, discontinuous, notes)
            entities[ident] = got
            spans.extend(got)
        elif kind == "R":
            rels.append((*_relation(line, where), where))
        else:
            norms.append((*_normalization(line, where), where))

    def args(ids: tuple[str, ...], what: str, where: str) -> list[Span] | None:
        """The one span of each entity named, or None (the record skipped and counted)."""
        unknown = [i for i in ids if i not in entities]
        if unknown:
            key = f"skipped brat {what} " + ("to missing entities" if what == "relations" else "of missing entities")
            missing.append(f"{where} ({', '.join(map(repr, unknown))})")
        elif any(len(entities[i]) > 1 for i in ids):
            key = f"skipped brat {what} of split entities"
        else:
            return [entities[i][0] for i in ids]
        notes[key] = notes.get(key, 0) + 1
        return None

    relations = []
    for label, h, t, where in rels:
        pair = args((h, t), "relations", where)
        if pair is not None:
            relations.append(Relation(label, pair[0], pair[1]))
    links = []
    for ident, ref, where in norms:
        one = args((ident,), "normalizations", where)
        if one is not None:
            links.append(Link(one[0], ref))
    return TextDocument(doc_id, text, tuple(spans), relations=tuple(relations), links=tuple(links))


def read_brat(path: str, *, discontinuous: str = "error", encoding: str = "utf-8") -> TextCorpus:
    """Read a brat folder (every ``.ann`` below it, each with its ``.txt``) or one ``.ann``
    file; see the module docstring for what is read, skipped and counted."""
    if discontinuous not in DISCONTINUOUS:
        raise ConfigError(f"unknown discontinuous policy {discontinuous!r}; valid: {choices(DISCONTINUOUS)}")
    docs = []
    notes: dict[str, int] = {}
    missing: list[str] = []  # the lines naming an id that is no entity
    files = _ann_files(path)
    if not files:
        raise InputError(f"{path}: no .ann files")
    for doc_id, ann in files:
        txt = ann[: -len(".ann")] + ".txt"
        if not os.path.exists(txt):
            raise InputError(f"{ann}: its text {txt} does not exist (brat needs a .txt beside each .ann)")
        docs.append(_read_ann(doc_id, ann, txt, _read_text(txt, encoding), discontinuous, encoding, notes, missing))
    if missing:
        warn(f"{len(missing)} brat relations or normalizations name an id that is no entity (T line) of their "
             f"file and are skipped (counted in the notes): {'; '.join(missing[:3])}{' ...' if len(missing) > 3 else ''}")
    return TextCorpus(tuple(docs), dict(sorted(notes.items())))


def write_brat(documents: Iterable[TextDocument], folder: str, *, encoding: str = "utf-8") -> None:
    """Write each document as ``<folder>/<id>.txt`` and ``<id>.ann``: text-bound
    annotations ``T1``, ``T2``, ... in the order of its spans (then one for each relation
    argument or link mention that is none of its spans), relations ``R1``, ... and
    normalisations ``N1``, ... (``Reference T<k> <id>``; an id holding whitespace is an
    InputError naming the document). [`read_brat`][iescore.io.brat.read_brat] reads them back as
    they were, the arguments and mentions that were none of the spans among the spans.
    Each file is written atomically (`atomic_write`): an interrupted write leaves every
    file whole, old or new."""
    for doc in documents:
        base = os.path.join(folder, *doc.id.split("/"))
        os.makedirs(os.path.dirname(base) or ".", exist_ok=True)
        for x in doc.links:
            if not x.id or len(x.id.split()) != 1:
                raise InputError(f"document {doc.id!r}: the link id {x.id!r} holds whitespace; brat writes "
                                 "'RID:EID' without any")
        with atomic_write(base + ".txt", encoding=encoding, newline="") as fh:
            fh.write(doc.text)
        with atomic_write(base + ".ann", encoding=encoding, newline="") as fh:
            ids: dict[tuple[str, int, int], str] = {}
            extra = [*(a for r in doc.relations for a in (r.head, r.tail)), *(x.span for x in doc.links)]
            written = 0
            for s in doc.spans:
                written += 1
                ids.setdefault(_key(s), f"T{written}")
                fh.write(f"T{written}\t{s.label} {s.start} {s.end}\t{' '.join(doc.span_text(s).split())}\n")
            for s in extra:
                if _key(s) not in ids:  # an argument or mention that is none of the spans
                    written += 1
                    ids[_key(s)] = f"T{written}"
                    fh.write(f"T{written}\t{s.label} {s.start} {s.end}\t{' '.join(doc.span_text(s).split())}\n")
            for k, r in enumerate(doc.relations, start=1):
                h, t = ids[_key(r.head)], ids[_key(r.tail)]
                fh.write(f"R{k}\t{r.label} Arg1:{h} Arg2:{t}\n")
            for k, x in enumerate(doc.links, start=1):
                shown = " ".join(doc.span_text(x.span).split())
                fh.write(f"N{k}\tReference {ids[_key(x.span)]} {x.id}\t{shown}\n")


def _key(s: Span) -> tuple[str, int, int]:
    return s.label, s.start, s.end
