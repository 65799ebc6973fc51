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

Other layouts (`Columns`): the token and the tag columns chosen by number (1-based;
negative numbers count from the end, -1 being the last), and comment lines: with
``comments``, a line whose first character is ``#`` before a sentence (at the start of
the file, after a blank line, a ``-DOCSTART-`` or ``-X-`` line, or another comment) is
skipped and counted (``repairs["adapter"]["comment lines"]``), as in CoNLL-U files;
inside a sentence it is a token line. Without it, such a line is read as any other line.

Likely mistakes are warned about ([`IEScoreWarning`][iescore.errors.IEScoreWarning]): a
file without tokens, and a predicted column equal to the gold column on every
token (the same column given twice).

Example:
    >>> import tempfile, os, pathlib
    >>> path = os.path.join(tempfile.mkdtemp(), "x.conll")
    >>> _ = pathlib.Path(path).write_text("John B-PER B-PER\\nlives O O\\n\\nin O O\\nParis B-LOC O\\n")
    >>> batch = read_conll(path)
    >>> batch.doc_ids, batch.n_tokens
    (('x.conll#1', 'x.conll#2'), 4)
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

import numpy as np

from ..decode.vocab import TagArrays, Vocabulary
from ..errors import ConfigError, InputError, choices, shown, warn
from ..scoring.batch import TaggedBatch
from .textfiles import (
    _LINE_END,
    STDIN,
    check_encoding,
    encoding_problem,
    file_encoding_problem,
    read_lines,
)
from .textfiles import decode_error as decode_error  # (where the readers and tools have found it)

__all__ = ["Columns", "uncomment", "example_path", "read_conll", "read_lines", "check_encoding", "encoding_problem", "file_encoding_problem", "missing_prediction"]

DOCSTART = "-DOCSTART-"
BOUNDARY = "-X-"
DOC_MODES = ("auto", "docstart", "sentence")


_FIELD = re.compile(r"[^ \t]+")
_BLANK = " \t"


TWO_COLUMNS = (
    "{name} has 2 columns, read as the gold and the predicted tag (conlleval's input, whose "
    "last two columns are the tags); if they are a token and one tag, give the gold file and a "
    "prediction file: iescore score GOLD PRED"
)


def two_columns(path: str | None, encoding: str = "utf-8") -> bool:
    """Is the first line of the file with a token (not ``-DOCSTART-``) one of 2 fields? (For
    the hint of `TWO_COLUMNS` on an error; ``False`` when the file cannot be read.)"""
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


# what the next-to-last column of a gold file alone holds when it is no gold tag column:
# CoNLL-2000's chunk types (CoNLL-2003's third column), Penn Treebank and Universal POS tags
_CHUNKS = frozenset("NP VP PP ADJP ADVP SBAR PRT CONJP INTJ LST UCP".split())
_POS = frozenset(
    "CC CD DT EX FW IN JJ JJR JJS LS MD NN NNS NNP NNPS PDT POS PRP PRP$ RB RBR RBS RP SYM TO UH VB VBD VBG VBN "
    "VBP VBZ WDT WP WP$ WRB -LRB- -RRB- -NONE- NN|SYM ADJ ADP ADV AUX CCONJ DET NOUN NUM PART PRON PROPN PUNCT "
    "SCONJ VERB X".split()) | frozenset({".", ",", ":", "``", "''", "(", ")", '"', "$", "#"})
_PREFIXED = re.compile(r"^[BIESLUM]-(.+)$")


def _label(tag: str) -> str:
    m = _PREFIXED.match(tag)
    return m.group(1) if m else tag


def missing_prediction(path: str | None, encoding: str = "utf-8", *, head: int = 1 << 18) -> str | None:
    """Why a CoNLL file given alone looks like a gold file without its prediction column,
    from its first ``head`` bytes: the predicted (last) column has labels, the gold
    (next-to-last) column has none of them, and it holds chunk or POS tags (CoNLL-2003's
    columns are token, POS, chunk, entity tag: chunk tags after a POS column) or
    punctuation tokens (``token TAG`` lines);
    else None, and None for a file that cannot be read.

    >>> import tempfile, os, pathlib
    >>> path = os.path.join(tempfile.mkdtemp(), "eng.testa")
    >>> _ = pathlib.Path(path).write_text("EU NNP I-NP I-ORG\\nrejects VBZ I-VP O\\n. . O O\\n")
    >>> print(missing_prediction(path).split(": ", 1)[1])  # doctest: +ELLIPSIS
    the prediction column is missing: of its 4 columns the last two are read as the gold and the predicted tag, but column 3 holds chunk tags ('I-NP', 'I-VP') with no label in common with column 4 ('I-ORG'); give ...
    """
    if path is None or path == STDIN:
        return None
    try:
        with open(path, "rb") as fh:
            data = fh.read(head)
        text = data.decode(encoding, errors="replace").lstrip("\ufeff")
    except (OSError, LookupError, UnicodeError):
        return None
    lines = _LINE_END.split(text)
    if len(data) == head:
        lines.pop()  # cut short
    rows = [f for f in map(_fields, lines) if f and f[0] not in (DOCSTART, BOUNDARY)]
    if not rows or len(rows[0]) < 2 or any(len(f) != len(rows[0]) for f in rows):
        return None  # the reader says what is wrong
    n = len(rows[0])
    gold = [f[-2] for f in rows if f[-2] != "O"]
    pred = [f[-1] for f in rows if f[-1] != "O"]
    if not gold or not pred or {_label(t) for t in gold} & {_label(t) for t in pred}:
        return None
    chunks = sum(_label(t) in _CHUNKS for t in gold)
    pos = sum(t in _POS for t in gold)
    before = [f[-3] for f in rows] if n >= 4 else []  # CoNLL-2003's POS column, before the chunk tags
    if chunks >= 0.9 * len(gold) and sum(t in _POS for t in before) >= 0.9 * len(rows):
        what = "chunk tags"
    elif pos >= 0.9 * len(gold):
        what = "POS tags"
    elif any(not any(c.isalnum() for c in t) for t in gold):  # punctuation: a token, never a tag
        what = "tokens" if n == 2 else "values that are no tags"
    else:
        return None

    eg_gold = ", ".join(repr(t) for t in list(dict.fromkeys(gold))[:2])
    eg_pred = ", ".join(repr(t) for t in list(dict.fromkeys(pred))[:2])
    read = "its 2 columns are" if n == 2 else f"of its {n} columns the last two are"
    return (f"{path}: the prediction column is missing: {read} read as the gold and the predicted tag, but column {n - 1} holds {what} ({eg_gold}) with no label in common with column {n} "
            f"({eg_pred}); give the predicted tags as a last column, or in a file of their own: "
            "iescore score GOLD PRED")


def _fields(line: str) -> list[str]:
    """The fields of a line: runs of characters other than ASCII space and tab."""
    return _FIELD.findall(line)


_DEFAULT_AT = {"token": 1, "gold": -2, "pred": -1}  # one file; two files: each file's last column


@dataclass(frozen=True)
class Columns:
    """Where a line's token and tags are: column numbers from 1 (negative: from the end,
    -1 the last), None for the default (the token first; of one file the gold and the
    predicted tag the last two columns, of two files each file's last column); and
    whether lines starting with ``#`` before a sentence are ``comments``.

    >>> Columns(token=2, gold=-1).at("gold", 10, False), Columns().at("gold", 3, False)
    (9, 1)
    """

    token: int | None = None
    gold: int | None = None
    pred: int | None = None
    comments: bool = False

    def __post_init__(self) -> None:
        for which in ("token", "gold", "pred"):
            c = getattr(self, which)
            if c is not None and (isinstance(c, bool) or not isinstance(c, int) or c == 0):
                raise ConfigError(f"the {which} column must be a column number from 1 (negative: from the end, "
                                  f"-1 the last), got {c!r}")

    @property
    def default(self) -> bool:
        return self == _PLAIN

    def at(self, which: str, n: int, two_files: bool) -> int:
        """The index of the ``which`` column in a line of ``n`` fields, -1 when it has no such column."""
        c = getattr(self, which)
        if c is None:
            c = -1 if two_files and which == "gold" else _DEFAULT_AT[which]
        i: int = c - 1 if c > 0 else n + c
        return i if 0 <= i < n else -1

    def too_few(self, which: str, n: int, where: str, line: str) -> InputError:
        """The error of a line of ``n`` columns without the ``which`` column."""
        c = getattr(self, which)
        return InputError(f"{where}: {n} column{'' if n == 1 else 's'}, no {which} column {c} "
                          f"(--{which}-column {c}): {shown(line)}{_comment_hint(line, self)}")


_PLAIN = Columns()


def uncomment(lines: list[str], start: bool = True) -> tuple[list[str], int, bool]:
    """``lines`` with the comment lines made blank (lines whose first character is ``#``,
    before a sentence: see the module's description), how many, and whether the line
    after them would start a sentence (``start``: does the first one?). Blank lines keep
    the line numbers and end no sentence that a comment could be inside.

    >>> uncomment(["# id 1", "a O O", "# a token", "", "#x"])
    (['', 'a O O', '# a token', '', ''], 2, True)
    """
    out, n = lines, 0
    for k, line in enumerate(lines):
        if start and line.startswith("#"):
            if out is lines:
                out = list(lines)
            out[k] = ""
            n += 1
            continue
        first = _FIELD.search(line)
        start = first is None or first.group() in (DOCSTART, BOUNDARY)
    return out, n, start


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
    columns: Columns | None = None,
) -> TaggedBatch:
    """Read a CoNLL file (gold and prediction columns) or a gold file and a prediction file
    (``columns``: other columns, comment lines; `Columns`).

    Returns a [`TaggedBatch`][iescore.scorer.TaggedBatch] for [`iescore.Scorer.add_batch`][iescore.Scorer.add_batch];
    error messages about tags name ``file:line``.
    """
    if documents not in DOC_MODES:
        raise ConfigError(f"unknown documents mode {documents!r}; valid: {choices(DOC_MODES)}")
    cols = columns or _PLAIN
    gold_lines = read_lines(path, encoding)
    pred_lines = read_lines(pred_path, encoding) if pred_path is not None else None
    n_comments = 0
    if cols.comments:
        gold_lines, n_comments, _ = uncomment(gold_lines)
        if pred_lines is not None:
            pred_lines, k, _ = uncomment(pred_lines)
            n_comments += k
    gold_lines = _strip_trailing_blank(gold_lines)
    if pred_lines is not None:
        pred_lines = _strip_trailing_blank(pred_lines)
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
                raise InputError(f"{pred_path}:{lineno}: expected a blank line (as in {path}), got {shown(pline)}")
            new_sentence = True
            continue
        if pline is not None:
            pfields = _fields(pline)
            if not pfields:
                raise InputError(f"{pred_path}:{lineno}: blank line where {path} has {shown(line)}")
            if cols.default:
                g, p = fields[-1], pfields[-1]
                tok = fields[0]
            else:
                g, p, tok = _picked(cols, fields, pfields, f"{path}:{lineno}", f"{pred_path}:{lineno}", line, pline)
        else:
            if ncols is None:
                ncols = len(fields)
                if ncols < 2:
                    raise InputError(
                        f"{path}:{lineno}: need at least 2 columns (gold and predicted tag), got {shown(line)}"
                        f"{_comment_hint(line, cols)}"
                    )
                at = _one_file(cols, ncols, f"{path}:{lineno}", line)
            elif len(fields) != ncols:
                raise InputError(f"{path}:{lineno}: {len(fields)} columns where earlier lines have {ncols}: "
                                 f"{shown(line)}{_comment_hint(line, cols)}")
            g, p = fields[at[0]], fields[at[1]]
            tok = fields[at[2]] if at[2] >= 0 else ""
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
        # 2 columns: no tokens (unless a token column is named)
        tokens=tokens if (pred_path is not None or (ncols or 0) >= 3 or cols.token is not None) else None,
        extra=np.array(extra, dtype=np.int64).reshape(-1, 2),
        where=where,
        options={"documents": "docstart" if by_docstart else "sentence"},
        notes={"comment lines": n_comments} if n_comments else {},
    )


def _comment_hint(line: str, cols: Columns) -> str:
    """A hint for a line that may be a comment, when comment lines are not read as such."""
    return "; if it is a comment, pass --comment-lines (comments=True)" if (
        line.startswith("#") and not cols.comments) else ""


def _one_file(cols: Columns, n: int, where: str, line: str) -> tuple[int, int, int]:
    """The indices of the gold tag, the predicted tag and the token (-1: none) in the
    lines of ``n`` columns of one file; an error when a column named is not there."""
    if cols.default:
        return n - 2, n - 1, 0 if n >= 3 else -1
    at = [cols.at(which, n, False) for which in ("gold", "pred", "token")]
    for which, i in zip(("gold", "pred", "token"), at):
        if i < 0 and (which != "token" or cols.token is not None):
            raise cols.too_few(which, n, where, line)
    if cols.token is None and n < 3:
        at[2] = -1
    return at[0], at[1], at[2]


def _picked(cols: Columns, fields: list[str], pfields: list[str], where: str, pwhere: str, line: str,
            pline: str) -> tuple[str, str, str]:
    """The gold tag, the predicted tag and the token of aligned lines of two files."""
    out = []
    for which, f, at, text in (("gold", fields, where, line), ("pred", pfields, pwhere, pline),
                               ("token", fields, where, line)):
        i = cols.at(which, len(f), True)
        if i < 0:
            raise cols.too_few(which, len(f), at, text)
        out.append(f[i])
    return out[0], out[1], out[2]


def example_path() -> str:
    """The path of the built-in example CoNLL file (``iescore score --example`` scores it)."""
    from importlib import resources

    return str(resources.files("iescore") / "data" / "example.conll")
