"""Beside the pipeline (the CoNLL toolbox), its reader and writer: the lines of a CoNLL
file with their fields' places, so that a file can be written back with one column
changed and every other byte as it was.

Lines end at LF, CRLF or CR and fields are runs of characters other than the ASCII
space and tab, as `iescore.io.conll` reads them; blank lines and ``-X-`` lines end
sentences and a ``-DOCSTART-`` line starts a document (it is no token: its tags are
neither read nor changed). Which tag columns are read (``labels``):

* ``both``: the last two columns, the gold tag and the predicted one (conlleval's input,
  as ``iescore score FILE`` reads a file alone);
* ``gold``: the next-to-last column; ``pred``: the last column, of such a file;
* ``last``: the last column of a file of one tag column (a gold file or a prediction
  file alone, CoNLL-2003's ``token POS chunk tag`` lines or ``token tag`` lines).

A token is the first field when the line has more fields than the columns read as tags
(at least three for ``both``, ``gold`` and ``pred``, two for ``last``).

Other layouts ([`Columns`][iescore.io.conll.Columns], as ``iescore score`` reads them):
the token, gold and predicted tag columns by number (from 1, negative from the end;
``last`` reads the gold column when one is named, else the predicted one), and comment
lines (``#`` before a sentence), skipped, counted (``comments``) and written back as
they were.

Example:
    >>> import os, pathlib, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "x.conll")
    >>> _ = pathlib.Path(path).write_text("John B-PER I-PER\\r\\nlives O O\\r\\n")
    >>> f = read_columns(path, "both")
    >>> f.tags["gold"], f.tags["pred"], f.tokens, f.lines
    (['B-PER', 'O'], ['I-PER', 'O'], ['John', 'lives'], [1, 2])
    >>> f.text({"pred": ["B-PER", "O"]}).splitlines(keepends=True)[0]
    'John B-PER B-PER\\r\\n'
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from ..errors import InputError, choices, shown
from ..io.conll import (
    Columns,
    _comment_hint,
    missing_prediction,
)
from ..io.textfiles import read_text

__all__ = ["LABELS", "SIDES", "ColumnFile", "read_columns", "same_file"]

LABELS = ("both", "gold", "pred", "last")
# the sides each choice reads, and their names in messages
SIDES = {"both": ("gold", "pred"), "gold": ("gold",), "pred": ("pred",), "last": ("last",)}
SIDE_NAMES = {"gold": "gold", "pred": "prediction", "last": "tags"}
_OFFSET = {"gold": -2, "pred": -1, "last": -1}  # the field each side reads
_LINE = re.compile(r"(\r\n|\r|\n)")
_FIELD = re.compile(r"[^ \t]+")
DOCSTART, BOUNDARY = "-DOCSTART-", "-X-"


@dataclass
class ColumnFile:
    """A CoNLL file as read: its text's pieces and, for the tokens (not ``-DOCSTART-``
    lines), their line numbers (1-based), the first field (``""`` when it is a tag), the
    tags of each side read, the flat index where each sentence starts and where each
    document starts (``documents``: ``docstart``, ``sentence`` or ``auto``, as
    `iescore.io.conll.read_conll` reads them)."""

    path: str
    encoding: str
    labels: str
    columns: int = 0  # fields per line
    prefix: str = ""  # a byte-order mark, kept
    pieces: list[str] = field(default_factory=list)  # line, end, line, end, ...
    spans: dict[str, list[tuple[int, int, int]]] = field(default_factory=dict)  # per side: (piece, start, end)
    tags: dict[str, list[str]] = field(default_factory=dict)
    tokens: list[str] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)
    sentences: list[int] = field(default_factory=list)
    documents: list[int] = field(default_factory=list)
    comments: int = 0  # comment lines skipped

    def where(self, k: int, side: str | None = None) -> str:
        """``FILE:LINE`` of token ``k`` (and the side, when given)."""
        at = f"{self.path}:{self.lines[k]}"
        return f"{at} ({SIDE_NAMES[side]})" if side else at

    def text(self, new: dict[str, list[str]]) -> str:
        """The file's text with the tags of the sides in ``new`` replaced, every other
        character as read."""
        pieces = list(self.pieces)
        edits: dict[int, list[tuple[int, int, str]]] = {}
        for side, tags in new.items():
            for (piece, a, b), tag in zip(self.spans[side], tags):
                edits.setdefault(piece, []).append((a, b, tag))
        for piece, changes in edits.items():
            line = pieces[piece]
            for a, b, tag in sorted(changes, reverse=True):
                line = line[:a] + tag + line[b:]
            pieces[piece] = line
        return self.prefix + "".join(pieces)


def same_file(out: str, inp: str) -> bool:
    """Is ``out`` the file ``inp`` (links and other spellings of a path resolved, hard
    links too)?

    >>> same_file("a/../x.conll", "x.conll")
    True
    """
    if os.path.realpath(out) == os.path.realpath(inp):
        return True
    try:
        return os.path.samefile(out, inp)
    except OSError:
        return False


def _check_layout(path: str, labels: str, ncols: int, lineno: int, line: str, encoding: str) -> None:
    """The slips refused before a file's tags are read: too few columns for ``labels``,
    and a gold file alone read as conlleval's input."""
    if labels != "last" and ncols < 2:
        raise InputError(f"{path}:{lineno}: one column, {shown(line)}, where --labels {labels} reads the last two "
                         "(gold and predicted tag); pass --labels last to read a file of one tag column")
    if labels != "last" and path != "-":
        problem = missing_prediction(path, encoding)
        if problem is not None:
            raise InputError(problem.split(" give ", 1)[0].rstrip("; ") +
                             f"; pass --labels last to read the last column alone (--labels {labels} "
                             "reads the last two columns: the gold tag, then the predicted one)")


def _at(cols: Columns, side: str, n: int) -> int:
    """The index of a side's column (or of the token: -1 when there is none) in lines of ``n`` fields."""
    c = {"gold": cols.gold, "pred": cols.pred, "last": cols.gold or cols.pred, "token": cols.token}[side]
    if c is None:
        return _OFFSET[side] + n if side != "token" else 0
    return c - 1 if c > 0 else n + c


def read_columns(path: str, labels: str = "both", *, encoding: str = "utf-8", documents: str = "auto",
                 columns: Columns | None = None) -> ColumnFile:
    """Read a CoNLL file's tag columns (see the module's description); every non-blank
    line must have as many fields as the first (``columns``: other columns, comment lines)."""
    cols = columns or Columns()
    if labels not in LABELS:
        raise InputError(f"unknown --labels {labels!r}; valid: {choices(LABELS)}")
    if documents not in ("auto", "docstart", "sentence"):
        raise InputError(f"unknown documents mode {documents!r}; valid: {choices(('auto', 'docstart', 'sentence'))}")
    text = read_text(path, encoding)
    shown_path = "<stdin>" if path == "-" else path
    f = ColumnFile(shown_path, encoding, labels)
    if text.startswith("\ufeff"):
        f.prefix, text = "\ufeff", text[1:]
    f.pieces = _LINE.split(text)
    sides = SIDES[labels]
    f.spans = {s: [] for s in sides}
    f.tags = {s: [] for s in sides}
    token_after = 1 if labels == "last" else 2  # the first field is a token beyond these
    ncols = None
    rows = []  # (piece, fields)
    for piece in range(0, len(f.pieces), 2):
        found = list(_FIELD.finditer(f.pieces[piece]))
        rows.append((piece, found))
    has_docstart = any(m and m[0].group() == DOCSTART for _, m in rows)
    by_docstart = documents == "docstart" or (documents == "auto" and has_docstart)
    new_sentence = True
    at: dict[str, int] = {}
    for piece, found in rows:
        lineno = piece // 2 + 1
        if not found:
            new_sentence = True
            continue
        if cols.comments and new_sentence and f.pieces[piece].startswith("#"):
            f.comments += 1
            continue
        if ncols is None:
            ncols = f.columns = len(found)
            if cols.default:
                _check_layout(shown_path, labels, ncols, lineno, f.pieces[piece], encoding)
            at = {side: _at(cols, side, ncols) for side in (*sides, "token")}
            for side, i in at.items():
                if not 0 <= i < ncols and (side != "token" or cols.token is not None):
                    which = "gold" if side == "last" and cols.gold else "pred" if side == "last" else side
                    raise cols.too_few(which, ncols, f"{shown_path}:{lineno}", f.pieces[piece])
        elif len(found) != ncols:
            raise InputError(f"{shown_path}:{lineno}: {len(found)} columns where earlier lines have {ncols}: "
                             f"{shown(f.pieces[piece])}{_comment_hint(f.pieces[piece], cols)}")
        first = found[0].group()
        if first == DOCSTART:
            new_sentence = True
            if by_docstart:
                f.documents.append(len(f.lines))
            continue
        if first == BOUNDARY:
            new_sentence = True
            continue
        if new_sentence:
            f.sentences.append(len(f.lines))
            if not by_docstart or not f.documents:
                f.documents.append(len(f.lines))
        new_sentence = False
        for side in sides:
            m = found[at[side]]
            f.spans[side].append((piece, m.start(), m.end()))
            f.tags[side].append(m.group())
        f.tokens.append(found[at["token"]].group() if cols.token is not None else first if ncols > token_after else "")
        f.lines.append(lineno)
    return f
