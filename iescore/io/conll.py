"""Before the pipeline (readers), CoNLL column files: conlleval's input, or a gold file
plus a prediction file.

* One file: every non-blank line has the same number of columns; the last two
  are the gold and the predicted tag (conlleval's input); the first column is
  the token when there are three or more.
* Two files: the gold file's last column and the prediction file's last
  column, aligned line by line. Trailing blank lines are ignored; any other
  mismatch (a blank line against a token line, a different line count) is an
  error naming the files and the line.

Lines end at LF, CRLF or CR (old Mac files); a UTF-8 byte-order mark at the
start of a file is skipped. Fields are separated by runs of ASCII spaces and
tabs only: conlleval.pl splits on the space, so a non-breaking space (U+00A0)
or any other Unicode space is part of a token, as are control characters (a
tag holding one is refused, naming the file and line). A line of spaces and
tabs only is blank. Path ``-`` reads standard input.

Blank lines end sentences (chunks never cross them). A line whose first field
is ``-DOCSTART-`` starts a new document; as in conlleval it counts as a token
for token accuracy but can hold no chunk (its tags must be ``O``). A first
field ``-X-`` is conlleval's explicit boundary and is treated like a blank line.
``documents="auto"`` makes each ``-DOCSTART-`` section a document when the file
has any, and each sentence a document otherwise.

Likely mistakes are warned about (:class:`~iescore.errors.IEScoreWarning`): a
file without tokens, and a predicted column equal to the gold column on every
token (the same column given twice).

Example:
    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "x.conll")
    >>> _ = open(path, "w").write("John B-PER B-PER\\nlives O O\\n\\nin O O\\nParis B-LOC O\\n")
    >>> batch = read_conll(path)
    >>> batch.doc_ids, batch.n_tokens
    (('x.conll#1', 'x.conll#2'), 4)
"""

from __future__ import annotations

import os
import re
import sys

import numpy as np

from ..errors import ConfigError, InputError, choices, warn
from ..decode import TagArrays, Vocabulary
from ..scoring.batch import TaggedBatch

__all__ = ["read_conll", "read_lines"]

DOCSTART = "-DOCSTART-"
BOUNDARY = "-X-"
DOC_MODES = ("auto", "docstart", "sentence")


_LINE_END = re.compile(r"\r\n|\r|\n")
_FIELD = re.compile(r"[^ \t]+")
_BLANK = " \t"
STDIN = "-"


def read_lines(path: str, encoding: str = "utf-8") -> list[str]:
    """The lines of a text file (ended by LF, CRLF or CR), without a leading byte-order
    mark; an undecodable byte is an error naming its line. ``-`` reads standard input.

    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "mac.txt")
    >>> _ = open(path, "wb").write(b"\\xef\\xbb\\xbfa O O\\rb O O\\r\\n\\nc O O")
    >>> read_lines(path)
    ['a O O', 'b O O', '', 'c O O']
    """
    try:
        if path == STDIN:
            if sys.stdin is None:
                raise InputError("no standard input to read (FILE '-')")
            data = sys.stdin.buffer.read()
        else:
            with open(path, "rb") as fh:
                data = fh.read()
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from exc
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        line = len(_LINE_END.split(data[: exc.start].decode("latin-1")))
        bad = data[exc.start : exc.start + 1]
        raise InputError(
            f"{path}:{line}: byte 0x{bad.hex()} cannot be decoded as {encoding}; "
            f"pass the file's encoding (e.g. encoding='latin-1', CLI --encoding latin-1)"
        ) from None
    except LookupError:
        raise ConfigError(f"unknown encoding {encoding!r}") from None
    if text.startswith("\ufeff"):
        text = text[1:]  # a byte-order mark, not data
    lines = _LINE_END.split(text)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


TWO_COLUMNS = (
    "{name} has 2 columns, read as the gold and the predicted tag (conlleval's input, whose "
    "last two columns are the tags); if they are a token and one tag, give the gold file and a "
    "prediction file: iescore score GOLD PRED"
)


def two_columns(path: str | None, encoding: str = "utf-8") -> bool:
    """Is the first line of the file with a token (not ``-DOCSTART-``) one of 2 fields? (For
    the hint of :data:`TWO_COLUMNS` on an error; ``False`` when the file cannot be read.)"""
    if path is None or path == STDIN:
        return False
    try:
        with open(path, encoding=encoding, errors="replace") as f:
            for k, line in enumerate(f):
                fields = _fields(line)
                if fields and fields[0] not in (DOCSTART, BOUNDARY):
                    return len(fields) == 2
                if k > 1000:
                    return False
    except OSError:
        return False
    return False


def _fields(line: str) -> list[str]:
    """The fields of a line: runs of characters other than ASCII space and tab."""
    return _FIELD.findall(line)


def _strip_trailing_blank(lines: list[str]) -> list[str]:
    n = len(lines)
    while n and not lines[n - 1].strip(_BLANK):
        n -= 1
    return lines[:n]


def read_conll(
    path: str,
    pred_path: str | None = None,
    *,
    encoding: str = "utf-8",
    documents: str = "auto",
    vocab: Vocabulary | None = None,
) -> TaggedBatch:
    """Read a CoNLL file (gold and prediction columns) or a gold file and a prediction file.

    Returns a :class:`~iescore.scorer.TaggedBatch` for :meth:`iescore.Scorer.add_batch`;
    error messages about tags name ``file:line``.
    """
    if documents not in DOC_MODES:
        raise ConfigError(f"unknown documents mode {documents!r}; valid: {choices(DOC_MODES)}")
    gold_lines = _strip_trailing_blank(read_lines(path, encoding))
    pred_lines = None
    if pred_path is not None:
        pred_lines = _strip_trailing_blank(read_lines(pred_path, encoding))
    # standard input is named so in messages
    path = "<stdin>" if path == STDIN else path
    if pred_path is not None and pred_lines is not None:
        pred_path = "<stdin>" if pred_path == STDIN else pred_path
        if len(pred_lines) > len(gold_lines):
            raise InputError(
                f"{pred_path}:{len(gold_lines) + 1}: {path} ends at line {len(gold_lines)} but {pred_path} "
                f"goes on (trailing blank lines aside); the files must be aligned line by line"
            )
    name = os.path.basename(path)
    tokens: list[str] = []
    gold: list[str] = []
    pred: list[str] = []
    line_no: list[int] = []
    first: list[bool] = []
    doc_starts: list[int] = []  # flat token index where each document starts
    doc_lines: list[int] = []
    extra: list[list[int]] = []
    has_docstart = any(_fields(ln)[:1] == [DOCSTART] for ln in gold_lines if DOCSTART in ln)
    by_docstart = documents == "docstart" or (documents == "auto" and has_docstart)
    new_sentence = True
    ncols = None
    pending_extra = 0  # -DOCSTART- lines not yet given to a document (sentence mode)

    def open_doc(lineno: int) -> None:
        nonlocal pending_extra
        doc_starts.append(len(gold))
        doc_lines.append(lineno)
        extra.append([pending_extra, pending_extra])
        pending_extra = 0

    for i, line in enumerate(gold_lines):
        lineno = i + 1
        fields = _fields(line)
        pline = None
        if pred_lines is not None:
            if i >= len(pred_lines):
                raise InputError(
                    f"{pred_path}:{i + 1}: {pred_path} ends at line {len(pred_lines)} but {path} goes on "
                    f"(trailing blank lines aside); the files must be aligned line by line"
                )
            pline = pred_lines[i]
        if not fields:
            if pline is not None and pline.strip(_BLANK):
                raise InputError(f"{pred_path}:{lineno}: expected a blank line (as in {path}), got {pline!r}")
            new_sentence = True
            continue
        if pline is not None:
            pfields = _fields(pline)
            if not pfields:
                raise InputError(f"{pred_path}:{lineno}: blank line where {path} has {line!r}")
            g, p = fields[-1], pfields[-1]
            tok = fields[0]
        else:
            if ncols is None:
                ncols = len(fields)
                if ncols < 2:
                    raise InputError(
                        f"{path}:{lineno}: need at least 2 columns (gold and predicted tag), got {line!r}"
                    )
            elif len(fields) != ncols:
                raise InputError(f"{path}:{lineno}: {len(fields)} columns where earlier lines have {ncols}: {line!r}")
            g, p = fields[-2], fields[-1]
            tok = fields[0] if len(fields) >= 3 else ""
        if fields[0] == DOCSTART:
            if g != "O" or p != "O":
                where_file = pred_path if (pred_path is not None and p != "O") else path
                if pred_path is None and len(fields) == 2:
                    raise InputError(f"{path}:{lineno}: a -DOCSTART- line with 2 columns, {line.strip(_BLANK)!r}: "
                                     f"{TWO_COLUMNS.format(name=path)}")
                raise InputError(
                    f"{where_file}:{lineno}: a -DOCSTART- line must be tagged O, "
                    f"got gold {g!r} and prediction {p!r}"
                )
            # conlleval counts the line as a (correct) token
            pending_extra += 1
            if by_docstart:
                open_doc(lineno)
            new_sentence = True
            continue
        if fields[0] == BOUNDARY:
            new_sentence = True
            continue
        if (new_sentence and not by_docstart) or not doc_starts:
            open_doc(lineno)
        tokens.append(tok)
        gold.append(g)
        pred.append(p)
        line_no.append(lineno)
        first.append(new_sentence)
        new_sentence = False
    if pending_extra:
        if not doc_starts:
            open_doc(len(gold_lines))
        else:
            extra[-1][0] += pending_extra
            extra[-1][1] += pending_extra
    if not gold:
        warn(f"{path}: no tokens (the file is empty, blank or only -DOCSTART- lines)")
    elif gold == pred:
        what = f"{pred_path}: its last column equals that of {path}" if pred_path is not None else (
            f"{path}: the predicted column equals the gold column")
        warn(f"{what} on every token ({len(gold)}); is the same column given twice?")
    vocab = vocab or Vocabulary()
    n = len(gold)
    ref_ids = vocab.encode(gold, count=n)
    pred_ids = vocab.encode(pred, count=n)
    first_arr = np.array(first, dtype=bool)
    offsets = np.array(doc_starts, dtype=np.int64)
    lines_arr = np.array(line_no, dtype=np.int64)
    ids = tuple(f"{name}#{k + 1}" for k in range(len(doc_starts)))
    pname = pred_path or path

    def where(flat: int, side: str) -> str:
        f = pname if side == "prediction" else path
        return f"{f}:{int(lines_arr[flat])} ({side})"

    return TaggedBatch(
        vocab=vocab,
        reference=TagArrays(ref_ids, first_arr),
        prediction=TagArrays(pred_ids, first_arr),
        doc_offsets=offsets,
        doc_ids=ids,
        tokens=tokens if (pred_path is not None or (ncols or 0) >= 3) else None,  # 2 columns: no tokens
        extra=np.array(extra, dtype=np.int64).reshape(-1, 2),
        where=where,
        options={"documents": "docstart" if by_docstart else "sentence"},
    )
