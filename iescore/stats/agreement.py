"""Statistics, after the report in the pipeline: inter-annotator agreement: F1 both ways
and Cohen's kappa on t-units per pair, Fleiss' kappa over all annotators.

The t-units (SPEC §6) are the tokens and, per document, the separators between
consecutive tokens, so they depend on where documents begin. They are the same
whichever annotator comes first: `agreement` takes the documents as given (the
same for every annotator); for CoNLL files (``iescore agree``, `conll_pairs`)
the documents and tokens come from all the files together, not from the first one:

* a line is a ``-DOCSTART-`` line (no token; a document starts after it) when any
  file has ``-DOCSTART-`` there, a boundary when any file has ``-X-`` there;
* ``documents="auto"`` gives a document per ``-DOCSTART-`` section when any file has
  one, else a document per sentence (``"docstart"``, ``"sentence"``: always so);
* the tokens are the other non-blank lines (blank lines are aligned in all files).

So a gold file with ``-DOCSTART-`` lines and a system file holding only tags (``O``
on those lines) give the gold's documents in either order.
"""

from __future__ import annotations

import itertools
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import ConfigError, InputError, choices
from ..render import notebook
from ..report import Report

__all__ = ['agreement', 'Agreement', 'cohen_kappa', 'fleiss_kappa', 'conll_pairs']


# --- inter-annotator agreement --------------------------------------------------------

def _t_unit_categories(report: Report, side: str, names: Sequence[str]) -> np.ndarray:
    """The category of every t-unit (tokens, then separators) of one side of a report:
    1 + the index in ``names`` of the label of the span that covers it (a separator is
    covered when both its tokens are in the span), 0 for none."""
    items = report.reference if side == "reference" else report.prediction
    tok = report.table.doc_tokens
    if tok is None:
        raise InputError("agreement on t-units needs tokens (templates have none)")
    tok = tok.astype(np.int64)
    toff = np.concatenate([[0], np.cumsum(tok)])
    soff = np.concatenate([[0], np.cumsum(np.maximum(tok - 1, 0))])
    cats = np.zeros(int(toff[-1] + soff[-1]), dtype=np.int64)
    code = np.array([1 + list(names).index(lab) for lab in report.labels], dtype=np.int64)
    for d, lab, s, e in zip(items.doc.tolist(), items.label.tolist(), items.start.tolist(), items.end.tolist()):
        cats[toff[d] + s: toff[d] + e] = code[lab]
        if e - s > 1:
            cats[toff[-1] + soff[d] + s: toff[-1] + soff[d] + e - 1] = code[lab]
    return cats


def cohen_kappa(x: np.ndarray, y: np.ndarray) -> float | None:
    """Cohen's kappa of two raters' categories (``None`` when chance agreement is 1).

    >>> cohen_kappa(np.array([0, 0, 1, 1]), np.array([0, 1, 1, 1]))  # po 3/4, pe 1/2*1/4 + 1/2*3/4
    0.5
    """
    n = len(x)
    if n == 0:
        return None
    k = int(max(x.max(), y.max())) + 1
    po = float(np.sum(x == y)) / n
    pe = float(np.sum(np.bincount(x, minlength=k) * np.bincount(y, minlength=k))) / (n * n)
    return None if pe == 1 else (po - pe) / (1 - pe)


def fleiss_kappa(cats: np.ndarray) -> float | None:
    """Fleiss' kappa of ``(raters, units)`` categories (``None`` when chance agreement is 1).

    >>> round(fleiss_kappa(np.array([[0, 1], [0, 1], [0, 0]])), 12)  # P = (1, 1/3), P_e = (4/6)^2 + (2/6)^2
    0.25
    """
    r, n = cats.shape
    if n == 0 or r < 2:
        return None
    k = int(cats.max()) + 1
    counts = np.zeros((n, k), dtype=np.int64)
    for row in cats:
        counts[np.arange(n), row] += 1
    P = (np.sum(counts * counts, axis=1) - r) / (r * (r - 1))
    p = counts.sum(axis=0) / (n * r)
    pe = float(np.sum(p * p))
    return None if pe == 1 else (float(P.mean()) - pe) / (1 - pe)


@dataclass(frozen=True)
class Agreement:
    """Inter-annotator agreement (plain data): per pair of annotators the F1 of each as
    the reference of the other (``f1_ab``: ``a`` the reference), their mean ``f1`` (the
    two are equal under one-to-one counting) and Cohen's kappa on t-units (tokens and
    separators, categories: the covering span's label or none); over all annotators
    Fleiss' kappa on the same t-units."""

    signature: str
    annotators: tuple[str, ...]
    pairs: tuple[Mapping[str, Any], ...]
    fleiss_kappa: float | None
    t_units: int

    def to_dict(self) -> dict[str, Any]:
        return {"signature": self.signature, "annotators": list(self.annotators), "t_units": self.t_units,
                "pairs": [dict(p) for p in self.pairs], "fleiss_kappa": self.fleiss_kappa}

    def _repr_html_(self) -> str:
        """The compact HTML table a notebook shows (`iescore.render.notebook.agreement_html`), the signature under it."""
        return notebook.agreement_html(self)

    def to_pandas(self) -> Any:
        """A pandas DataFrame (`iescore.render.notebook.agreement_frame`: one row per pair of annotators); ``attrs["signature"]``
        is the signature. Needs pandas (``pip install pandas``)."""
        return notebook.agreement_frame(self)

    def to_html(self, path: str | os.PathLike[str], *, title: str = "iescore agreement") -> int:
        """Write the compact table of `_repr_html_` as a whole HTML page (UTF-8, atomically);
        the file's size in bytes."""
        return notebook.write_table_html(notebook.agreement_html(self), path, title)


def _agreement(names: Sequence[str], pair: Any) -> Agreement:
    if len(names) < 2 or len(set(names)) != len(names):
        raise ConfigError(f"agreement needs two or more distinct annotators; got {list(names)!r}")
    reports = {(a, b): pair(a, b) for a in names for b in names if a != b}
    labels = sorted(set().union(*(r.labels for r in reports.values())))
    rows = []
    for a, b in itertools.combinations(names, 2):
        ab, ba = reports[(a, b)], reports[(b, a)]
        x = _t_unit_categories(ab, "reference", labels)
        y = _t_unit_categories(ab, "prediction", labels)
        f = None if ab.f1 is None or ba.f1 is None else (ab.f1 + ba.f1) / 2
        rows.append({"a": a, "b": b, "f1": f, "f1_ab": ab.f1, "f1_ba": ba.f1, "kappa": cohen_kappa(x, y)})
    first = names[0]
    cats = [_t_unit_categories(reports[(first, names[1])], "reference", labels)]
    cats += [_t_unit_categories(reports[(first, b)], "prediction", labels) for b in names[1:]]
    r0 = reports[(first, names[1])]
    return Agreement(signature=r0.config.signature() + "|agree:f1,kappa:t-units", annotators=tuple(names),
                     pairs=tuple(rows), fleiss_kappa=fleiss_kappa(np.stack(cats)), t_units=len(cats[0]))


_FIRST_FIELD = re.compile(r"[^ \t]+")  # fields: runs of characters other than ASCII space and tab
_DOCSTART, _BOUNDARY = "-DOCSTART-", "-X-"


def _first_fields(path: str, encoding: str) -> list[str | None]:
    """The first field of every line of a CoNLL file (None: blank), trailing blank lines dropped."""
    from ..io.textfiles import read_lines

    out = [(m.group() if (m := _FIRST_FIELD.search(ln)) else None) for ln in read_lines(path, encoding)]
    while out and out[-1] is None:
        out.pop()
    return out


def conll_pairs(paths: Mapping[str, str], *, encoding: str = "utf-8",
                documents: str = "auto") -> Callable[[str, str], Any]:
    """A reader of CoNLL annotation files (name -> path, the files aligned line by line, each
    annotator's tags in its last column) for agreement: ``read(a, b)`` is the
    [`TaggedBatch`][iescore.scoring.batch.TaggedBatch] of ``a``'s tags as the reference and ``b``'s
    as the prediction, with the documents, sentences and tokens that all the files give
    together (the module docstring), so the same for every pair and either order. Each
    pair is read and checked by [`read_conll`][iescore.io.conll.read_conll] (its errors name the
    file and line), then laid out on these common lines."""
    from ..decode.vocab import TagArrays
    from ..io.conll import DOC_MODES, read_conll
    from ..scoring.batch import TaggedBatch

    if documents not in DOC_MODES:
        raise ConfigError(f"unknown documents mode {documents!r}; valid: {choices(DOC_MODES)}")
    firsts = {name: _first_fields(p, encoding) for name, p in paths.items()}
    n = max(len(f) for f in firsts.values())
    docstart = np.zeros(n, dtype=bool)
    boundary = np.zeros(n, dtype=bool)
    for f in firsts.values():
        docstart[:len(f)] |= np.array([x == _DOCSTART for x in f], dtype=bool)
        boundary[:len(f)] |= np.array([x == _BOUNDARY for x in f], dtype=bool)
    by_docstart = documents == "docstart" or (documents == "auto" and bool(docstart.any()))
    # the common layout, line by line
    token_line: list[int] = []  # the line (0-based) of every common token
    first: list[bool] = []
    doc_starts: list[int] = []
    extra: list[list[int]] = []
    pending, new_sentence = 0, True
    blank = np.zeros(n, dtype=bool)  # blank in some file, or past its end: read_conll names the mismatch
    for f in firsts.values():
        blank |= np.array([x is None for x in f] + [True] * (n - len(f)), dtype=bool)
    for i in range(n):
        if docstart[i]:
            pending += 1
            if by_docstart:
                doc_starts.append(len(token_line))
                extra.append([pending, pending])
                pending = 0
            new_sentence = True
        elif blank[i] or boundary[i]:
            new_sentence = True
        else:
            if (new_sentence and not by_docstart) or not doc_starts:
                doc_starts.append(len(token_line))
                extra.append([pending, pending])
                pending = 0
            token_line.append(i)
            first.append(new_sentence)
            new_sentence = False
    if pending:
        if not doc_starts:
            doc_starts.append(len(token_line))
            extra.append([0, 0])
        extra[-1][0] += pending
        extra[-1][1] += pending
    lines = np.array(token_line, dtype=np.int64)
    first_arr = np.array(first, dtype=bool)

    def read(a: str, b: str) -> TaggedBatch:
        batch = read_conll(paths[a], paths[b], encoding=encoding, documents=documents)
        fa = firsts[a]
        # the lines read_conll made tokens of: those of a's lines that hold one
        own = np.array([i for i, x in enumerate(fa) if x is not None and x not in (_DOCSTART, _BOUNDARY)],
                       dtype=np.int64)
        keep = np.searchsorted(own, lines)  # every common token line is one of a's token lines
        assert len(own) == batch.n_tokens and np.array_equal(own[keep], lines)
        where = batch.where
        return TaggedBatch(
            vocab=batch.vocab,
            reference=TagArrays(batch.reference.ids[keep], first_arr),
            prediction=TagArrays(batch.prediction.ids[keep], first_arr),
            doc_offsets=np.array(doc_starts, dtype=np.int64),
            doc_ids=tuple(f"{os.path.basename(paths[a])}#{k + 1}" for k in range(len(doc_starts))),
            tokens=None if batch.tokens is None else [batch.tokens[k] for k in keep.tolist()],
            extra=np.array(extra, dtype=np.int64).reshape(-1, 2),
            where=None if where is None else (lambda flat, side: where(int(keep[flat]), side)),
            options={**batch.options, "documents": "docstart" if by_docstart else "sentence"},
        )

    return read


def agreement(annotations: Mapping[str, Sequence[Sequence[str]]], **options: Any) -> Agreement:
    """Agreement of annotators' tag sequences (name -> one tag sequence per document, the
    same documents and tokens for all), scored with ``options`` as
    [`iescore.score_tags`][iescore.score_tags] takes them (any of [`Options`][iescore.options.Options]: rule, counting,
    scheme...).

    Example (A and B agree on PER; only A tags the LOC):
        >>> a = agreement({"A": [["B-PER", "O", "B-LOC"]], "B": [["B-PER", "O", "O"]]})
        >>> p = a.pairs[0]
        >>> p["f1_ab"], p["f1_ba"], round(p["kappa"], 12)
        (0.6666666666666666, 0.6666666666666666, 0.583333333333)

    (t-units: 3 tokens and 2 separators, A: PER O LOC | O O, B: PER O O | O O: p_o = 4/5,
    p_e = 3/5 * 4/5 + 1/5 * 1/5 = 13/25, kappa = (20 - 13)/(25 - 13) = 7/12.)
    """
    from ..config import Config
    from ..scoring.batch import tagged_batch
    from ..scoring.stream import Scorer

    config = options.pop("config", None)  # as score_tags takes them
    if config is None:
        options.setdefault("scheme", "auto")
    cfg = Config.from_options(config, **options)

    def pair(a: str, b: str) -> Report:
        s = Scorer(cfg)
        s.add_batch(tagged_batch(annotations[a], annotations[b]))
        return s.report()

    return _agreement(list(annotations), pair)
