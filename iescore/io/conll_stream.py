"""Before the pipeline (readers), CoNLL column files read as a stream of batches, and a
file scored batch by batch in bounded memory (the ``iescore score`` command).

[`iter_conll`][iescore.io.conll_stream.iter_conll] reads what [`read_conll`][iescore.io.conll.read_conll] reads (the same
lines, fields, sentences, documents, ``-DOCSTART-`` counts, ids, line numbers and
warnings) a block of lines at a time, and yields it as consecutive
[`TaggedBatch`][iescore.scoring.batch.TaggedBatch] es of whole documents over one
`Vocabulary`. Its fields are split a block at a time
(``str.split`` where that splits as the ASCII spaces and tabs do), so it is the fast
path; [`read_conll`][iescore.io.conll.read_conll] is its plain reference, and whenever the
input is bad (a column missing, files out of step, an undecodable byte, a
``-DOCSTART-`` line with a tag) the reference reads it again to raise its exact error.
Standard input is first copied to a temporary file, which is read like a file.

[`score_conll`][iescore.io.conll_stream.score_conll] adds the batches to a [`Scorer`][iescore.Scorer] that keeps totals
only; under ``scheme="auto"`` it reads the file once more when the whole file turns out
to be of another scheme than its first batch, so the report is the one-shot report,
number for number. A document is never split: one larger than a batch is held whole.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from itertools import chain, compress
from operator import itemgetter
from typing import Any

import numpy as np

from ..config import Config
from ..decode.detect import SchemeWatch
from ..decode.vocab import NOT_OF_SCHEME, TagArrays, Vocabulary, detected_note
from ..errors import ConfigError, IEScoreError, InputError, choices, warn
from ..report import Report
from ..scoring.batch import TaggedBatch
from ..scoring.stream import Scorer
from .conll import _FIELD, _PLAIN, BOUNDARY, DOC_MODES, DOCSTART, Columns, read_conll, uncomment
from .textfiles import _CHUNK, _LINE_END, STDIN, _Bad, _Lines, _lines_of, file_encoding_problem

__all__ = ["iter_conll", "score_conll", "BATCH_TOKENS"]

BATCH_TOKENS = 1 << 19  # tokens per batch (a batch is cut at the next document start)
# the ASCII characters other than space and tab that str.split() splits at (\n and \r end
# lines; the others are not ASCII)
_OTHER_ASCII_SPACE = "\x0b\x0c\x1c\x1d\x1e\x1f"
_HAS_DOCSTART = re.compile(r"(?:^|[\r\n])[ \t]*-DOCSTART-(?=[ \t\r\n]|$)")


def _fields(text: str) -> tuple[list[str], np.ndarray]:
    """All the fields of the lines of ``text`` in order (runs of characters other than
    ASCII space and tab), and how many each line has.

    ASCII text with LF line ends and no other space character is split by
    ``str.split`` in one call, and a line's fields are counted from where fields start
    (a byte after a space, tab or line end) and where lines end; other text line by
    line, as [`read_conll`][iescore.io.conll.read_conll] splits it.

    >>> flat, n = _fields("a B-X  O\\n\\n\\tc O O\\nd")
    >>> flat, n.tolist()
    (['a', 'B-X', 'O', 'c', 'O', 'O', 'd'], [3, 0, 3, 1])
    """
    if text.isascii() and "\r" not in text and not any(c in text for c in _OTHER_ASCII_SPACE):
        if not text:
            return [], np.zeros(0, dtype=np.intp)
        # a byte array or two at a time (a line may be the whole block: memory a small multiple of it)
        b = np.frombuffer(text.encode("ascii"), dtype=np.uint8)
        ends = np.flatnonzero(b == 10)
        space = b == 32
        space |= b == 9
        space[ends] = True
        start = ~space
        start[1:] &= space[:-1]
        del space
        n_lines = len(ends) + (1 if b[-1] != 10 else 0)
        del b
        # a field starts on the line of the line ends before it
        line_of = np.searchsorted(ends, np.flatnonzero(start))
        del start
        return text.split(), np.bincount(line_of, minlength=n_lines)
    lines = _LINE_END.split(text)
    if lines and lines[-1] == "":
        lines.pop()
    per_line = [_FIELD.findall(ln) for ln in lines]
    return list(chain.from_iterable(per_line)), np.fromiter(map(len, per_line), dtype=np.int64, count=len(per_line))


def _has_docstart(path: str, encoding: str) -> bool:
    """Does some line of the file have ``-DOCSTART-`` as its first field?"""
    with open(path, "rb") as fh:
        src = _Lines(fh, encoding)
        while (text := src.text()) is not None:
            if DOCSTART in text and _HAS_DOCSTART.search(text):
                return True
    return False


def iter_conll(
    path: str,
    pred_path: str | None = None,
    *,
    encoding: str = "utf-8",
    documents: str = "auto",
    vocab: Vocabulary | None = None,
    tokens: bool = True,
    batch_tokens: int = BATCH_TOKENS,
    progress: Callable[[int], None] | None = None,
    names: tuple[str, str | None] | None = None,
    columns: Columns | None = None,
) -> Iterator[TaggedBatch]:
    """The batches of [`read_conll`][iescore.io.conll.read_conll]'s batch: its documents in order,
    about ``batch_tokens`` tokens per batch (whole documents), over one vocabulary.
    ``tokens=False`` leaves out the token column (when only tags are scored);
    ``progress(n)`` is called with the bytes of each block read; ``names`` are the
    files' names in messages and ids (``<stdin>`` for a copy of standard input);
    ``columns``: other columns, comment lines ([`Columns`][iescore.io.conll.Columns]).
    Paths are files ([`score_conll`][iescore.io.conll_stream.score_conll] copies standard input to one)."""
    if documents not in DOC_MODES:
        raise ConfigError(f"unknown documents mode {documents!r}; valid: {choices(DOC_MODES)}")
    shown = names or (path, pred_path)
    try:
        if any(file_encoding_problem(f, encoding) for f in (path, pred_path) if f is not None):
            raise _Bad  # (a byte-order mark of another encoding, UTF-16 without one) the reference says which
        by_docstart = documents == "docstart" or (documents == "auto" and _has_docstart(path, encoding))
        yield from _batches(path, pred_path, encoding, by_docstart, vocab or Vocabulary(), tokens,
                            batch_tokens, progress, shown, columns or _PLAIN)
    except (_Bad, OSError):
        try:
            read_conll(path, pred_path, encoding=encoding, documents=documents, columns=columns)  # the exact error
        except InputError as exc:
            message = str(exc)
            for real, name in ((path, shown[0]), (pred_path, shown[1])):
                if real is not None and name is not None and name != real:
                    message = message.replace(real, name)
            raise InputError(message) from None
        raise InputError(f"{shown[0]}: cannot be read as a CoNLL file") from None


def _batches(path: str, pred_path: str | None, encoding: str, by_docstart: bool, vocab: Vocabulary,
             keep_tokens: bool, batch_tokens: int, progress: Callable[[int], None] | None,
             shown: tuple[str, str | None], cols: Columns = _PLAIN) -> Iterator[TaggedBatch]:
    with open(path, "rb") as gfh, (open(pred_path, "rb") if pred_path is not None else open(os.devnull, "rb")) as pfh:
        gold_src = _Lines(gfh, encoding, progress)
        pred_src = _Lines(pfh, encoding, progress) if pred_path is not None else None
        st = _State(shown[0], shown[1], by_docstart, vocab, keep_tokens or pred_path is not None, cols)
        starts = [True, True]  # (comment lines) does the next line of each file start a sentence?
        gbuf: list[str] = []  # lines of the two files not yet read as aligned pairs
        pbuf: list[str] = []
        ncols: list[int] = []  # the file's number of columns, once known (one file)
        while True:
            if pred_src is None:
                text = gold_src.text()
                done = text is None
                if text and cols.comments:
                    text = st.uncommented(text, starts)
                if text:
                    st.lines(text, None, ncols)
            else:
                g, p = gold_src.block(), pred_src.block()
                if cols.comments:
                    g, p = st.uncommented_lines(g, starts, 0), st.uncommented_lines(p, starts, 1)
                gbuf += g or []
                pbuf += p or []
                done = g is None and p is None
                n = min(len(gbuf), len(pbuf))
                # past the end of the shorter file, the other may hold blank lines only
                if done and any(ln.strip(" \t") for ln in gbuf[n:] + pbuf[n:]):
                    raise _Bad
                if n:
                    st.lines("\n".join(gbuf[:n]) + "\n", "\n".join(pbuf[:n]) + "\n", ncols)
                    del gbuf[:n], pbuf[:n]
            while st.can_cut(batch_tokens):
                yield st.cut(batch_tokens)
            if done:
                break
        yield from st.finish()


def _column(flat: list[str], n_f: np.ndarray, ends: np.ndarray, nonblank: np.ndarray, c: int) -> list[str]:
    """Column ``c`` (from 1; negative: from the end) of the non-blank lines, whose fields
    are ``flat`` (``n_f`` and ``ends``: each line's number of fields and where they end);
    `_Bad` when a line has no such column."""
    n, end = n_f[nonblank], ends[nonblank]
    if (n < abs(c)).any():
        raise _Bad
    return _take(flat, end - n + (c - 1) if c > 0 else end + c)


def _take(items: list[str], at: np.ndarray) -> list[str]:
    """``[items[i] for i in at]``, gathered in C."""
    if len(at) == 0:
        return []
    got = itemgetter(*at.tolist())(items)
    return [got] if len(at) == 1 else list(got)


class _State:
    """Tokens read and not yet given out in a batch, and the reader's running state."""

    def __init__(self, path: str, pred_path: str | None, by_docstart: bool, vocab: Vocabulary,
                 keep_tokens: bool, cols: Columns = _PLAIN) -> None:
        self.name = os.path.basename(path)
        self.path, self.pred_path = path, pred_path
        self.by_docstart, self.vocab, self.keep_tokens = by_docstart, vocab, keep_tokens
        self.cols, self.comments = cols, 0  # the columns read; comment lines skipped, not yet in a batch
        self.line_no = 0  # lines read so far
        self.new_sentence = True
        self.pending_extra = 0  # -DOCSTART- lines not yet given to a document (sentence mode)
        self.n_docs = 0  # documents given out in batches
        self.n_seen = 0  # tokens read
        self.ncols = 0  # columns of the file (one file), once known
        self.same = True  # every token so far has equal tags
        # not yet given out: tags, tokens, line numbers, sentence starts, documents
        self.gold: list[str] = []
        self.pred: list[str] = []
        self.toks: list[str] = []
        self.lines_at: list[np.ndarray] = []
        self.first: list[np.ndarray] = []
        self.doc_start: list[int] = []  # token offset (in the pending tokens) of each open document
        self.doc_extra: list[int] = []

    def n_tokens(self) -> int:
        return len(self.gold)

    def uncommented(self, text: str, starts: list[bool]) -> str:
        """A block of one file with its comment lines made blank (`uncomment`), counted."""
        lines = self.uncommented_lines(_lines_of(text), starts, 0)
        return text if lines is None else "\n".join(lines) + "\n" if lines else ""

    def uncommented_lines(self, lines: list[str] | None, starts: list[bool], k: int) -> list[str] | None:
        """A block of lines of file ``k`` with its comment lines made blank, counted."""
        if not lines:
            return lines
        lines, n, starts[k] = uncomment(lines, starts[k])
        self.comments += n
        return lines

    def lines(self, gtext: str, ptext: str | None, ncols: list[int]) -> None:
        """Read a block of whole lines (aligned blocks of both files with a prediction file)."""
        flat, n_f = _fields(gtext)
        base = self.line_no
        self.line_no += len(n_f)
        blank = n_f == 0
        nonblank = np.flatnonzero(~blank)
        ends = np.cumsum(n_f)  # where each line's fields end in ``flat``
        if ptext is not None:
            pflat, pn_f = _fields(ptext)
            if len(pn_f) != len(n_f) or (blank != (pn_f == 0)).any():
                raise _Bad
            if self.cols.default:
                gtag = _take(flat, ends[nonblank] - 1)
                ptag = _take(pflat, np.cumsum(pn_f)[nonblank] - 1)
            else:
                gtag = _column(flat, n_f, ends, nonblank, self.cols.gold or -1)
                ptag = _column(pflat, pn_f, np.cumsum(pn_f), nonblank, self.cols.pred or -1)
            heads = _take(flat, (ends - n_f)[nonblank])
            tokcol = heads if self.cols.token is None else _column(flat, n_f, ends, nonblank, self.cols.token)
        else:
            if not ncols and len(nonblank):
                ncols.append(int(n_f[nonblank[0]]))
                self.ncols = ncols[0]
            if ncols and (ncols[0] < 2 or (n_f[nonblank] != ncols[0]).any()):
                raise _Bad
            k = ncols[0] if ncols else 2
            gtag, ptag, heads = flat[k - 2 :: k], flat[k - 1 :: k], flat[::k]
            tokcol = heads
            if not self.cols.default:
                gi, pi, ti = (self.cols.at(which, k, False) for which in ("gold", "pred", "token"))
                if gi < 0 or pi < 0 or (ti < 0 and self.cols.token is not None):
                    raise _Bad
                gtag, ptag = flat[gi::k], flat[pi::k]
                tokcol = flat[ti::k] if self.cols.token is not None else heads
        text_has = (DOCSTART in gtext, BOUNDARY in gtext)
        starts = heads if (self.keep_tokens or any(text_has)) else None
        # line kinds among the non-blank lines: -DOCSTART-, -X- (a boundary), tokens
        if starts is not None and any(text_has):
            doc_l = np.fromiter((s == DOCSTART for s in starts), dtype=bool, count=len(starts))
            bnd_l = np.fromiter((s == BOUNDARY for s in starts), dtype=bool, count=len(starts))
        else:
            doc_l = bnd_l = np.zeros(len(nonblank), dtype=bool)
        if doc_l.any():
            at = np.flatnonzero(doc_l)
            if any(gtag[i] != "O" or ptag[i] != "O" for i in at.tolist()):
                raise _Bad
        tok_l = ~(doc_l | bnd_l)
        # breaks before each non-blank line: blank lines, -DOCSTART- and -X- lines
        brk = blank.copy()
        brk[nonblank] = ~tok_l
        before = np.cumsum(brk) - brk  # breaks strictly before each line
        tok_lines = nonblank[tok_l]
        keep = tok_l.tolist() if not tok_l.all() else None
        g = gtag if keep is None else list(compress(gtag, keep))
        p = ptag if keep is None else list(compress(ptag, keep))
        n0 = len(self.gold)
        # a token starts a sentence when a break came since the previous token (or before it)
        b = before[tok_lines]
        first = np.empty(len(tok_lines), dtype=bool)
        if len(first):
            first[0] = self.new_sentence or b[0] > 0
            first[1:] = b[1:] > b[:-1]
        # documents: opened by -DOCSTART- lines, or by sentence starts; tokens before any document open one
        doc_lines = nonblank[doc_l]
        if self.by_docstart:
            opens = [(int(np.searchsorted(tok_lines, d)), 1) for d in doc_lines.tolist()]
            if len(first) and not self.doc_start and self.n_docs == 0 and (not opens or opens[0][0] > 0):
                opens.insert(0, (0, 0))
            for at_tok, extra in opens:
                self.doc_start.append(n0 + at_tok)
                self.doc_extra.append(extra)
        else:
            sentence_heads = np.flatnonzero(first)
            if len(first) and not len(sentence_heads) and not self.doc_start and self.n_docs == 0:
                sentence_heads = np.zeros(1, dtype=np.int64)  # (never: the first token starts a sentence)
            # -DOCSTART- lines before each sentence start, since the one before it
            ds_before = np.searchsorted(doc_lines, tok_lines[sentence_heads])
            prev = 0
            for h, k in zip(sentence_heads.tolist(), ds_before.tolist()):
                self.doc_start.append(n0 + h)
                self.doc_extra.append(self.pending_extra + k - prev)
                self.pending_extra, prev = 0, k
            self.pending_extra += len(doc_lines) - prev
        if len(tok_lines):
            self.new_sentence = False
        if len(brk) and (not len(tok_lines) or brk[tok_lines[-1] + 1:].any()):
            self.new_sentence = True
        self.gold += g
        self.pred += p
        if self.keep_tokens:
            assert starts is not None
            self.toks += tokcol if keep is None else list(compress(tokcol, keep))
        self.lines_at.append(tok_lines + (base + 1))
        self.first.append(first)
        self.n_seen += len(g)
        self.same = self.same and g == p

    def can_cut(self, batch_tokens: int) -> bool:
        """Do whole documents (all but the last, which may go on) hold ``batch_tokens``?"""
        return len(self.doc_start) > 1 and self.doc_start[-1] >= batch_tokens

    def cut(self, batch_tokens: int) -> TaggedBatch:
        """A batch of the documents before the first one to start at ``batch_tokens`` or
        later (see `can_cut`)."""
        return self._batch(max(int(np.searchsorted(self.doc_start, batch_tokens)), 1))

    def finish(self) -> Iterator[TaggedBatch]:
        if self.pending_extra:
            if not self.doc_start and self.n_docs == 0:
                self.doc_start.append(len(self.gold))
                self.doc_extra.append(0)
            if self.doc_start:
                self.doc_extra[-1] += self.pending_extra
            self.pending_extra = 0
        if not self.n_seen:
            warn(f"{self.path}: no tokens (the file is empty, blank or only -DOCSTART- lines)")
        elif self.same:
            what = f"{self.pred_path}: its last column equals that of {self.path}" if self.pred_path is not None else (
                f"{self.path}: the predicted column equals the gold column")
            warn(f"{what} on every token ({self.n_seen}); is the same column given twice?")
        if self.doc_start or self.n_docs == 0:
            yield self._batch(len(self.doc_start))

    def _batch(self, k: int) -> TaggedBatch:
        """A batch of the first ``k`` open documents (all pending tokens when ``k`` is all)."""
        end = self.doc_start[k] if k < len(self.doc_start) else len(self.gold)
        starts = np.array(self.doc_start[:k], dtype=np.int64)
        extra = np.array(self.doc_extra[:k], dtype=np.int64)
        first = np.concatenate(self.first) if self.first else np.zeros(0, bool)
        lines_at = np.concatenate(self.lines_at) if self.lines_at else np.zeros(0, np.int64)
        gold, pred = self.gold[:end], self.pred[:end]
        # the first column is a token with three columns or more, or a prediction file
        toks = self.toks[:end] if self.keep_tokens and (
            self.pred_path is not None or self.ncols >= 3 or self.cols.token is not None) else None
        ref_ids = self.vocab.encode(gold, count=end)
        pred_ids = self.vocab.encode(pred, count=end)
        f, la = first[:end], lines_at[:end]
        ids = tuple(f"{self.name}#{self.n_docs + j + 1}" for j in range(k))
        path, pname = self.path, self.pred_path or self.path

        def where(flat: int, side: str) -> str:
            return f"{pname if side == 'prediction' else path}:{int(la[flat])} ({side})"

        batch = TaggedBatch(
            vocab=self.vocab, reference=TagArrays(ref_ids, f), prediction=TagArrays(pred_ids, f),
            doc_offsets=starts - (starts[0] if k else 0), doc_ids=ids, tokens=toks,
            extra=np.stack([extra, extra], axis=1), where=where,
            options={"documents": "docstart" if self.by_docstart else "sentence"},
            notes={"comment lines": self.comments} if self.comments else {},
        )
        self.comments = 0
        # what stays: the documents from the k-th on
        del self.gold[:end], self.pred[:end]
        if self.keep_tokens:
            del self.toks[:end]
        self.first, self.lines_at = [first[end:]], [lines_at[end:]]
        self.doc_start = [s - end for s in self.doc_start[k:]]
        self.doc_extra = self.doc_extra[k:]
        self.n_docs += k
        return batch


def score_conll(
    path: str,
    pred_path: str | None = None,
    *,
    config: Config,
    encoding: str = "utf-8",
    documents: str = "auto",
    batch_tokens: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    columns: Columns | None = None,
) -> Report:
    """Score a CoNLL file (or a gold and a prediction file; ``-`` is standard input) in
    batches, keeping totals only ([`Scorer`][iescore.Scorer] with ``totals_only=True``):
    the numbers, views and signature of ``Scorer(config).add_batch(read_conll(...))``,
    in memory that does not grow with the file.

    Under ``scheme="auto"`` the batches are decoded with the scheme of the first one;
    when the whole file turns out to be of another scheme (a first ``I-`` chunk start
    late in a file of B/I tags, say), it is read once more with that scheme, so the
    scheme is always the one detected on the whole file. ``progress(done, total)`` is called
    with the bytes read (of both files) after each block; ``columns``: other columns,
    comment lines ([`Columns`][iescore.io.conll.Columns])."""
    batch_tokens = batch_tokens or BATCH_TOKENS
    with _as_file(path) as (gpath, gname), _as_file(pred_path) as (ppath, pname):
        total = sum(os.path.getsize(f) for f in (gpath, ppath) if f is not None and os.path.isfile(f))
        keep_tokens = config.setting == "OBD" or config.mode == "one-per-string"
        auto = config.scheme == "auto"
        scheme = config.scheme
        while True:
            done = [0]

            def seen(n: int) -> None:
                done[0] += n
                if progress is not None:
                    progress(done[0], total)

            scorer = Scorer(config.with_(scheme=scheme) if scheme != "auto" else config, totals_only=True)
            watch, found, failed = SchemeWatch(), scheme, None
            for batch in iter_conll(gpath, ppath, encoding=encoding, documents=documents, tokens=keep_tokens,
                                    batch_tokens=batch_tokens, progress=seen, names=(gname, pname), columns=columns):
                if auto:
                    found = watch.update(batch.reference, batch.prediction, batch.vocab)
                    if scheme == "auto":  # the first batch: its scheme, until a later one says otherwise
                        scheme = found
                        scorer = Scorer(config.with_(scheme=scheme), totals_only=True)
                if failed is None:
                    try:
                        scorer.add_batch(batch)
                    except IEScoreError as exc:
                        if not auto:
                            raise
                        failed = exc  # (a tag of another scheme?) read on to know the file's scheme
            if auto and found != scheme:
                scheme = found  # the scheme of the whole file: once more with it
                continue
            if failed is not None:
                # the streamed scorer was given the detected scheme: the note is added here
                raise InputError(f"{failed}{detected_note(scheme)}") if auto and NOT_OF_SCHEME in str(failed) else failed
            if auto and watch.message is not None:
                warn(watch.message)
            return scorer.report()


@contextmanager
def _as_file(path: str | None) -> Iterator[tuple[Any, Any]]:
    """A path as a file that can be read twice: standard input (``-``) is copied to a
    temporary file first, deleted after (also on Ctrl-C). Gives ``(path, name in messages)``."""
    if path != STDIN:
        yield path, path
        return
    if sys.stdin is None:
        raise InputError("no standard input to read (FILE '-')")
    fd, tmp = tempfile.mkstemp(prefix="iescore-stdin-")
    try:
        with os.fdopen(fd, "wb") as out:
            shutil.copyfileobj(sys.stdin.buffer, out, _CHUNK)
        yield tmp, "<stdin>"
    finally:
        os.unlink(tmp)
