"""Beside the pipeline (the CoNLL toolbox), on files: validate, repair, convert and
summarize a CoNLL file's tag columns (read by `iescore.toolbox.columns`, tags handled by
`iescore.toolbox.tags`, chunks decoded by stage 1, `iescore.decode`).

Each function returns what it found or did, with the text the command line prints
(``lines``, then a summary line); files are written through
[`atomic_write`][iescore.atomic.atomic_write], never over the file read.

Example:
    >>> import os, pathlib, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> path = os.path.join(folder, "x.conll")
    >>> _ = pathlib.Path(path).write_text("John I-PER B-PER\\nlives O O\\n")
    >>> result = validate_file(path, "IOB2")
    >>> print("\\n".join(line.replace(folder + os.sep, "") for line in result.lines))
    x.conll:1: gold: invalid transition 'O' -> 'I-PER' (token 'John')
    >>> result.counts
    {'gold': 1, 'pred': 0}
    >>> out = os.path.join(folder, "fixed.conll")
    >>> _ = repair_file(path, out, "IOB2")
    >>> pathlib.Path(out).read_text()
    'John B-PER B-PER\\nlives O O\\n'
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..atomic import atomic_write
from ..decode.detect import detect_scheme
from ..decode.vocab import TagArrays, Vocabulary
from ..errors import InputError, choices
from ..io.conll import Columns
from ..schemes import O, Scheme
from .columns import SIDE_NAMES, SIDES, ColumnFile, read_columns, same_file
from .tags import (
    TOOLBOX_REPAIRS,
    TypeFilter,
    decode_column,
    recode,
    roles_of,
    toolbox_scheme,
    transitions_of,
)

__all__ = ["Validation", "validate_file", "repair_file", "convert_file", "summarize_file", "summary_text"]


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def _extent(f: ColumnFile) -> str:
    comments = f", {_plural(f.comments, 'comment line')} skipped" if f.comments else ""
    return (f"{_plural(len(f.lines), 'token')}, {_plural(len(f.sentences), 'sentence')}, "
            f"{_plural(len(f.documents), 'document')}{comments}")


def _token(f: ColumnFile, k: int, after: bool = False) -> str:
    tok = f.tokens[k] if k < len(f.tokens) else ""
    return f" ({'after ' if after else ''}token {tok!r})" if tok else ""


def _bounds(f: ColumnFile) -> list[tuple[int, int]]:
    ends = [*f.sentences[1:], len(f.lines)]
    return list(zip(f.sentences, ends))


@dataclass
class Validation:
    """What `validate_file` found: per side (``gold``, ``pred`` or ``last``) the number of
    invalid transitions (``counts``) and of tags not of the scheme (``not_of_scheme``),
    one message per problem (``lines``, in the file's order) and the ``summary`` line."""

    counts: dict[str, int]
    not_of_scheme: dict[str, int]
    lines: list[str] = field(default_factory=list)
    summary: str = ""

    @property
    def ok(self) -> bool:
        """No invalid transition and no tag of another scheme."""
        return not any(self.counts.values()) and not any(self.not_of_scheme.values())


def validate_file(path: str, scheme: str, labels: str = "both", *, encoding: str = "utf-8",
                  documents: str = "auto", types: TypeFilter | None = None,
                  columns: Columns | None = None) -> Validation:
    """Every invalid transition of the tag columns ``labels`` of a CoNLL file under
    ``scheme`` (see `iescore.toolbox.tags`), and every tag of another scheme. With
    ``types`` (a `TypeFilter`), only the transitions with a tag of a type kept (after the
    type map)."""
    sch = toolbox_scheme(scheme)
    types = types or None
    f = read_columns(path, labels, encoding=encoding, documents=documents, columns=columns)
    found: list[tuple[int, int, int, str]] = []  # (line, side order, position, message)
    counts, foreign = {}, {}
    for order, side in enumerate(SIDES[labels]):
        tags, name = f.tags[side], SIDE_NAMES[side]
        parsed = roles_of(tags, sch)
        kept = _kept_tags(parsed, types)
        counts[side] = foreign[side] = 0
        for k, tag in enumerate(tags):
            if parsed[tag] is None:
                foreign[side] += 1
                found.append((f.lines[k], order, k, f"{f.where(k)}: {name}: {tag!r} is not a tag of scheme "
                              f"{sch.name}{_token(f, k)}"))
        for s, e in _bounds(f):
            for t in transitions_of(tags[s:e], parsed, sch):
                if kept is not None and t.before not in kept and t.after not in kept:
                    continue
                k = s + t.index - t.at_end
                where = f"{f.where(k)}: {name}: invalid transition {t.before!r} -> {t.after!r}"
                rest = f" at the end of the sentence{_token(f, k, after=True)}" if t.at_end else _token(f, k)
                found.append((f.lines[k], order, s + t.index, where + rest))
                counts[side] += 1
    found.sort()
    if types:
        types.warn()
    result = Validation(counts, foreign, [m for *_, m in found])
    total = sum(counts.values())
    per = f" ({', '.join(f'{SIDE_NAMES[s]} {n:,}' for s, n in counts.items())})" if len(counts) > 1 and total else ""
    head = f"{_plural(total, 'invalid transition')}{per}" if total else "no invalid transitions"
    other = sum(foreign.values())
    more = f" and {_plural(other, 'tag')} of another scheme" if other else ""
    read = " and ".join(SIDE_NAMES[s] for s in SIDES[labels])
    hint = TOKENS_HINT if f.columns == 2 and foreign.get("gold") else ""
    result.summary = f"{f.path}: {head}{more} under {sch.name} in {_extent(f)} ({read}){hint}"
    return result


def _kept_tags(parsed: dict[str, tuple[int, str] | None], types: TypeFilter | None) -> set[str] | None:
    """The tags of a type ``types`` keeps (None without a filter); every type is noted."""
    if not types:
        return None
    return {tag for tag, p in parsed.items() if p is not None and p[0] != O and types.type_of(p[1]) is not None}


def _locator(f: ColumnFile, side: str) -> Callable[[int], str]:
    """``FILE:LINE (side)`` of a token, for errors."""
    return lambda k: f.where(k, side)


TOKENS_HINT = ("; a file of 2 columns may hold a token and a tag, not a gold and a predicted tag: pass "
               "--labels last to read its last column alone")


def _recode(f: ColumnFile, side: str, source: Scheme, target: Scheme, repair: str,
            only: list[bool] | None = None, types: TypeFilter | None = None) -> list[str]:
    """`recode` of a side's tags, an error on a 2-column file's gold side saying it may be tokens."""
    try:
        return recode(f.tags[side], f.sentences, source, target, repair, _locator(f, side), only, types or None)
    except InputError as exc:
        if f.columns == 2 and side == "gold" and "not a tag of scheme" in str(exc):
            raise InputError(f"{exc}{TOKENS_HINT}") from None
        raise


def _check_output(path: str, output: str) -> None:
    if output != "-" and path != "-" and same_file(output, path):
        raise InputError(f"--output {output!r} is the input file {path!r}: writing it would destroy the input, so "
                         "nothing was read or written; name another file for --output")


def _write(f: ColumnFile, output: str, new: dict[str, list[str]]) -> None:
    text = f.text(new)
    if output == "-":
        sys.stdout.write(text)
        return
    with atomic_write(output, encoding=f.encoding, newline="") as fh:
        fh.write(text)


def _changed(old: list[str], new: list[str]) -> int:
    return sum(a != b for a, b in zip(old, new))


def _per_side(numbers: dict[str, int]) -> str:
    if len(numbers) < 2:
        return ""
    return f" ({', '.join(f'{SIDE_NAMES[s]} {n:,}' for s, n in numbers.items())})"


def repair_file(path: str, output: str, scheme: str, repair: str = "conlleval", labels: str = "both", *,
                encoding: str = "utf-8", types: TypeFilter | None = None, columns: Columns | None = None) -> str:
    """Write ``path`` to ``output`` with the tag columns ``labels`` repaired to valid tags
    of ``scheme`` (``repair`` ``conlleval`` or ``discard``): the sentences with an invalid
    transition are decoded and written again, every other byte is kept. With ``types``
    (a `TypeFilter`) every sentence is decoded, its chunks renamed and filtered, and
    written again. Returns the summary line."""
    if repair not in TOOLBOX_REPAIRS[:2]:
        raise InputError(f"unknown repair {repair!r}; valid: {choices(TOOLBOX_REPAIRS[:2])}")
    _check_output(path, output)
    sch = toolbox_scheme(scheme)
    f = read_columns(path, labels, encoding=encoding, columns=columns)
    new: dict[str, list[str]] = {}
    changed: dict[str, int] = {}
    sentences: dict[str, int] = {}
    for side in SIDES[labels]:
        tags = f.tags[side]
        parsed = roles_of(tags, sch)
        flags = [bool(transitions_of(tags[s:e], parsed, sch)) for s, e in _bounds(f)]
        new[side] = _recode(f, side, sch, sch, repair, only=None if types else flags, types=types)
        changed[side], sentences[side] = _changed(tags, new[side]), sum(flags)
    if types:
        types.warn()
    _write(f, output, new)
    done = "; ".join(f"{SIDE_NAMES[side] + ' ' if len(changed) > 1 else ''}{_plural(changed[side], 'tag')} changed "
                     f"in {_plural(sentences[side], 'sentence')} with an invalid transition" for side in changed)
    return f"{output}: repaired to {sch.name} ({repair}): {done}"


def _joined(chunks: list[tuple[str, int, int]], starts: set[int]) -> int:
    """Pairs of adjacent chunks of one label inside a sentence (one chunk in IO)."""
    return sum(a[0] == b[0] and a[2] == b[1] and b[1] not in starts for a, b in zip(chunks, chunks[1:]))


def convert_file(path: str, output: str, source: str, target: str, repair: str = "strict", labels: str = "both", *,
                 encoding: str = "utf-8", types: TypeFilter | None = None, columns: Columns | None = None) -> str:
    """Write ``path`` to ``output`` with the tag columns ``labels`` of scheme ``source``
    written in scheme ``target`` (a chunk ``source`` does not allow: an error under
    ``repair="strict"``, else repaired or dropped), every other byte kept; with ``types``
    (a `TypeFilter`), the chunks renamed and filtered. Returns the summary line."""
    if repair not in TOOLBOX_REPAIRS:
        raise InputError(f"unknown repair {repair!r}; valid: {choices(TOOLBOX_REPAIRS)}")
    _check_output(path, output)
    src, dst = toolbox_scheme(source), toolbox_scheme(target)
    f = read_columns(path, labels, encoding=encoding, columns=columns)
    new, changed, joined = {}, {}, 0
    starts = set(f.sentences)
    for side in SIDES[labels]:
        where = _locator(f, side)
        new[side] = _recode(f, side, src, dst, repair, types=types)
        changed[side] = _changed(f.tags[side], new[side])
        if dst.name == "IO":
            chunks = decode_column(f.tags[side], f.sentences, src, repair, where)
            joined += _joined(types.chunks(chunks) if types else chunks, starts)
    if types:
        types.warn()
    _write(f, output, new)
    note = f"; {_plural(joined, 'pair')} of adjacent chunks of one label joined (IO cannot separate them)" if joined else ""
    return (f"{output}: {src.name} -> {dst.name}, {_plural(sum(changed.values()), 'tag')} changed{_per_side(changed)} "
            f"in {_plural(len(f.lines), 'token')}{note}")


def summarize_file(path: str, labels: str = "gold", *, scheme: str = "auto", repair: str = "conlleval",
                   strings: bool = False, encoding: str = "utf-8", documents: str = "auto",
                   types: TypeFilter | None = None, columns: Columns | None = None) -> dict[str, Any]:
    """The documents, sentences and tokens (``-DOCSTART-`` lines are none) of a CoNLL file
    and the mentions per type in its tag column ``labels`` (``gold``, ``pred`` or ``last``),
    decoded under ``scheme`` (``auto``: read from the tags) and ``repair``; with
    ``strings``, the mentions per type and surface string (the tokens joined by a space);
    with ``types`` (a `TypeFilter`), the mentions renamed and filtered."""
    if labels not in ("gold", "pred", "last"):
        raise InputError(f"summarize reads one tag column: --labels {choices(('gold', 'pred', 'last'))}, got {labels!r}")
    f = read_columns(path, labels, encoding=encoding, documents=documents, columns=columns)
    side = SIDES[labels][0]
    tags = f.tags[side]
    if scheme == "auto":
        vocab = Vocabulary()
        arrays = TagArrays(vocab.encode(tags), segments=np.array(f.sentences, dtype=np.int64))
        scheme = detect_scheme(arrays, vocab)
    sch = toolbox_scheme(scheme)
    try:
        chunks = decode_column(tags, f.sentences, sch, repair, _locator(f, side))
    except InputError as exc:
        if f.columns == 2 and side == "gold" and "not a tag of scheme" in str(exc):
            raise InputError(f"{exc}{TOKENS_HINT}") from None
        raise
    if types:
        chunks = types.chunks(chunks)
        types.warn()
    out: dict[str, Any] = {"documents": len(f.documents), "sentences": len(f.sentences), "tokens": len(f.lines),
                 "mentions": dict(sorted(Counter(c[0] for c in chunks).items())),
                 "scheme": sch.name, "labels": labels, **({"comment_lines": f.comments} if f.comments else {})}
    if strings:
        if not any(f.tokens):
            raise InputError(f"{f.path}: no token column (its lines hold tags only), so no surface strings")
        per: dict[str, Counter[str]] = {}
        for label, s, e in chunks:
            per.setdefault(label, Counter())[" ".join(f.tokens[s:e])] += 1
        out["strings"] = {label: dict(sorted(c.items(), key=lambda x: (-x[1], x[0]))) for label, c in sorted(per.items())}
    return out


def summary_text(path: str, summary: dict[str, Any], as_json: bool = False) -> str:
    """The text ``iescore summarize`` prints for a `summarize_file` result: JSON, or
    a head line and a table of the mentions per type (and per string)."""
    if as_json:
        return json.dumps(summary, ensure_ascii=False, indent=2)
    mentions = summary["mentions"]
    head = (f"{path}: {_plural(summary['documents'], 'document')}, {_plural(summary['sentences'], 'sentence')}, "
            f"{_plural(summary['tokens'], 'token')} ({SIDE_NAMES[SIDES[summary['labels']][0]]}, {summary['scheme']})")
    width = max([len("total"), len("type"), *map(len, mentions)])
    rows = [head, f"{'type':<{width}}  mentions"]
    rows += [f"{label:<{width}}  {n:>8,}" for label, n in mentions.items()]
    rows.append(f"{'total':<{width}}  {sum(mentions.values()):>8,}")
    if "strings" in summary:
        rows += ["", f"{'type':<{width}}  mentions  string"]
        rows += [f"{label:<{width}}  {n:>8,}  {s}" for label, per in summary["strings"].items() for s, n in per.items()]
    return "\n".join(rows)
