"""Statistics, after the report in the pipeline: inter-annotator agreement: per pair of
annotators F1, precision and recall both ways and Cohen's kappa on t-units, per label
too; over all annotators Fleiss' kappa and Krippendorff's alpha (nominal, missing values
allowed), on annotations of any input `iescore score` reads (`agreement_scored`), on CoNLL
files (`agreement_files`) or on tag sequences (`agreement`).

The t-units (SPEC §6) are the tokens (the characters, scored at ``level="characters"``)
and, per document, the separators between consecutive ones. Each annotator's t-units are
read from its own annotation (scored against itself), each document keyed by its id
(its position for tag input and CoNLL files): a document an annotator did not annotate
leaves its t-units missing for that annotator (Krippendorff's alpha takes them as
missing values; a pair's kappa is over the t-units both annotated, Fleiss' kappa over those
all annotated). So the units are the same whichever annotator comes first. A t-unit's
category is the label of the span that covers it (a separator is covered when both its
neighbours are in the span; of two spans of different labels, the later one in the
annotation), or none; per label, a t-unit is positive when a span of that label covers
it, as in the token & separator model. Templates (OBD) have no t-units: only F1.

For CoNLL files (``iescore agree``, `conll_pairs`) the documents and tokens come from
all the files together, not from the first one:

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
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import ConfigError, IEScoreWarning, InputError, choices
from ..render import notebook
from ..report import Report
from .coefficients import cohen_kappa, fleiss_kappa, krippendorff_alpha, label_alphas, label_kappas

__all__ = ['agreement', 'agreement_files', 'agreement_scored', 'Agreement', 'cohen_kappa', 'fleiss_kappa', 'krippendorff_alpha',
           'conll_pairs']

NO_UNITS = ("templates (OBD) have no t-units (tokens and the separators between them): only F1 is given; "
            "kappa and alpha are None")
# relations and links are no labelling of the t-units: agreement on them is F1 both ways
NO_UNITS_TASK = ("kappa and alpha are not defined for {task}: they are not a label of each t-unit (token or "
                 "separator); only F1 both ways is given, kappa and alpha are None")

# --- t-units ------------------------------------------------------------------------------

def _ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """``starts[k], ..., starts[k] + lengths[k] - 1`` for every k, concatenated."""
    total = int(lengths.sum())
    first = np.repeat(starts - (np.cumsum(lengths) - lengths), lengths)
    return first + np.arange(total, dtype=np.int64)


@dataclass(frozen=True)
class _Units:
    """One annotator's t-units (its documents in order, each its tokens, then its separators):
    the category of each (0 none, else 1 + the label's code), and the units in a span of
    each label as ``(label code, unit)``."""

    keys: list[Any]
    sizes: np.ndarray
    cats: np.ndarray
    pos_label: np.ndarray
    pos_unit: np.ndarray


def _units(report: Report, keys: Sequence[Any], code: Mapping[str, int]) -> _Units:
    """The t-units of a report's reference side (its documents keyed by ``keys``)."""
    items = report.reference
    tok = np.asarray(report.table.doc_tokens, dtype=np.int64)
    sizes = np.where(tok > 0, 2 * tok - 1, 0)
    uoff = np.concatenate([[0], np.cumsum(sizes)])
    d, s, e = (np.asarray(x, dtype=np.int64) for x in (items.doc, items.start, items.end))
    lab = np.array([code[x] for x in report.labels], dtype=np.int64)[np.asarray(items.label, dtype=np.int64)]
    tl = e - s
    sl = np.maximum(tl - 1, 0)
    idx = np.concatenate([_ranges(uoff[d] + s, tl), _ranges(uoff[d] + tok[d] + s, sl)])
    item = np.concatenate([np.repeat(np.arange(len(d)), tl), np.repeat(np.arange(len(d)), sl)])
    labs = lab[item]
    total = int(uoff[-1])
    cats = np.zeros(total, dtype=np.int64)
    if len(idx):
        order = np.lexsort((item, idx))  # by unit, then item: the last item of a unit gives its category
        by_unit = idx[order]
        last = np.r_[by_unit[1:] != by_unit[:-1], True]
        cats[by_unit[last]] = labs[order][last] + 1
    pos = np.unique(labs * max(total, 1) + idx)
    return _Units(list(keys), sizes, cats, pos // max(total, 1), pos % max(total, 1))


def _layout(names: Sequence[str], units: Mapping[str, _Units]) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    """Every annotator's categories over the union of the documents (``-1``: missing), whether
    present, and its positive ``label * units + unit`` codes."""
    size: dict[Any, int] = {}
    owner: dict[Any, str] = {}
    offset: dict[Any, int] = {}
    total = 0
    empty = _Units([], np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64),
                   np.zeros(0, dtype=np.int64))
    units = {a: units.get(a, empty) for a in names}  # an annotator with no document: all missing
    for a in names:
        for key, n in zip(units[a].keys, units[a].sizes.tolist()):
            if key not in size:
                size[key], owner[key], offset[key] = n, a, total
                total += n
            elif size[key] != n:
                what = f"document #{key + 1}" if isinstance(key, int) else f"document {key!r}"
                raise InputError(f"{what} has {(size[key] + 1) // 2} tokens in {owner[key]}'s annotation and "
                                 f"{(n + 1) // 2} in {a}'s: agreement needs the same tokens in every annotation")
    values = np.full((len(names), total), -1, dtype=np.int64)
    positives = []
    for i, a in enumerate(names):
        u = units[a]
        local = np.concatenate([[0], np.cumsum(u.sizes)])[:-1]
        shift = np.repeat(np.array([offset[k] for k in u.keys], dtype=np.int64) - local, u.sizes)
        values[i, np.arange(len(shift)) + shift] = u.cats
        positives.append(np.sort(u.pos_label * total + u.pos_unit + shift[u.pos_unit]))
    return values, values >= 0, positives


# --- agreement -------------------------------------------------------------------------------

@dataclass(frozen=True)
class Agreement:
    """Inter-annotator agreement (plain data). ``pairs``: per pair of annotators ``a``, ``b``:
    ``precision_ab``, ``recall_ab``, ``f1_ab`` (``a``'s spans the reference, ``b``'s the
    prediction), ``precision_ba``, ``recall_ba``, ``f1_ba`` (the other way), their mean
    ``f1`` (``f1_ab`` and ``f1_ba`` are equal under one-to-one counting), Cohen's ``kappa``
    on the t-units both annotated (``t_units``; categories: the covering span's label or
    none). ``pair_labels``: per pair, per label ``kappa`` (t-units in a span of the label or
    not), ``f1_ab``, ``f1_ba``. Over all annotators: ``fleiss_kappa`` (t-units all annotated),
    ``krippendorff_alpha`` (every t-unit, missing values allowed), per label in ``per_label``:
    ``krippendorff_alpha``, and with two annotators their per-label ``kappa``, ``f1_ab``,
    ``f1_ba`` (``kappa`` is None with more). ``t_units``: the t-units of all the documents;
    ``missing``: the (annotator, t-unit) values missing; ``unit``: ``"tokens"``,
    ``"characters"``, or None for templates and for relations and links (then ``note`` says
    why kappa and alpha are None)."""

    signature: str
    annotators: tuple[str, ...]
    pairs: tuple[Mapping[str, Any], ...]
    fleiss_kappa: float | None
    t_units: int
    krippendorff_alpha: float | None = None
    per_label: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    pair_labels: tuple[Mapping[str, Mapping[str, Any]], ...] = ()
    missing: int = 0
    unit: str | None = "tokens"
    note: str | None = None

    def to_dict(self) -> dict[str, Any]:
        pairs = [dict(p) for p in self.pairs]
        for p, labels in zip(pairs, self.pair_labels):
            p["per_label"] = {lab: dict(v) for lab, v in labels.items()}
        return {"signature": self.signature, "annotators": list(self.annotators), "unit": self.unit,
                "t_units": self.t_units, "missing": self.missing, "pairs": pairs,
                "fleiss_kappa": self.fleiss_kappa, "krippendorff_alpha": self.krippendorff_alpha,
                "per_label": {lab: dict(v) for lab, v in self.per_label.items()}, "note": self.note}

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


def _mean(x: float | None, y: float | None) -> float | None:
    return None if x is None or y is None else (x + y) / 2


def _agreement(names: Sequence[str], pair: Callable[[str, str], Report | None],
               keys: Callable[[str, Report], Sequence[Any]] | None = None, shared: bool = False) -> Agreement:
    """Agreement from ``pair(a, b)``, the report of ``a``'s annotation as the reference and
    ``b``'s as the prediction (None: no document in common), ``pair(a, a)`` giving ``a``'s
    t-units (``shared``: every pair holds all the documents, so ``a``'s t-units are those of
    the reference side of a pair, not scored again); ``keys(a, report)``: the keys of the
    documents of ``a``'s report (default: their ids)."""
    if len(names) < 2 or len(set(names)) != len(names):
        raise ConfigError(f"agreement needs two or more distinct annotators; got {list(names)!r}")
    reports = {(a, b): pair(a, b) for a in names for b in names if a != b}
    scored = [r for r in reports.values() if r is not None]
    if not scored:
        raise InputError(f"annotators {', '.join(names)} have no document in common")
    task = scored[0].config.task
    has_units = scored[0].table.doc_tokens is not None and task == "entities"
    own: dict[str, Report | None] = {}
    if has_units and shared:
        own = {a: reports[(a, names[1] if a == names[0] else names[0])] for a in names}
    elif has_units:
        with warnings.catch_warnings():  # an annotation against itself: "the same column twice" is expected
            warnings.simplefilter("ignore", IEScoreWarning)
            own = {a: pair(a, a) for a in names}
    labels = sorted(set().union(*(r.labels for r in [*scored, *(r for r in own.values() if r is not None)])))
    code = {lab: k for k, lab in enumerate(labels)}
    L = len(labels)
    values = np.zeros((len(names), 0), dtype=np.int64)
    present = values >= 0
    positives: list[np.ndarray] = []
    if has_units:
        units = {a: _units(r, list(r.doc_ids) if keys is None else list(keys(a, r)), code) for a, r in own.items()
                 if r is not None}
        values, present, positives = _layout(names, units)
    total = values.shape[1]
    rows, pair_labels = [], []
    for (i, a), (j, b) in itertools.combinations(enumerate(names), 2):
        ab, ba = reports[(a, b)], reports[(b, a)]
        row: dict[str, Any] = {"a": a, "b": b}
        for key, r in (("ab", ab), ("ba", ba)):
            row.update({f"precision_{key}": None if r is None else r.precision,
                        f"recall_{key}": None if r is None else r.recall,
                        f"f1_{key}": None if r is None else r.f1})
        row["f1"] = _mean(row["f1_ab"], row["f1_ba"])
        both = present[i] & present[j]
        n = int(both.sum())
        kappas: list[float | None] = [None] * L
        row["kappa"] = None
        if has_units:
            row["kappa"] = cohen_kappa(values[i][both], values[j][both])
            pa, pb = positives[i], positives[j]
            kappas = label_kappas(n, pa[both[pa % max(total, 1)]], pb[both[pb % max(total, 1)]], L,
                                  units=max(total, 1))
        row["t_units"] = n if has_units else None
        per = {lab: {"kappa": kappas[code[lab]], "f1_ab": None, "f1_ba": None} for lab in labels}
        for key, r in (("f1_ab", ab), ("f1_ba", ba)):
            if r is not None:
                for lab, entry in r.to_dict()["per_label"].items():
                    per[lab][key] = entry["f1"]
        rows.append(row)
        pair_labels.append(per)
    alphas = label_alphas(present, positives, L) if has_units else [None] * L
    per_label = {lab: {**({"kappa": None} if len(names) > 2 else pair_labels[0][lab]),
                       "krippendorff_alpha": alphas[code[lab]]} for lab in labels}
    complete = present.all(axis=0)
    r0 = scored[0]
    unit = (r0.config.level or "tokens") if has_units else None
    return Agreement(
        signature=r0.config.signature() + ("|agree:f1" if task != "entities" else "|agree:f1,kappa,alpha:t-units"),
        annotators=tuple(names), pairs=tuple(rows),
        fleiss_kappa=fleiss_kappa(values[:, complete]) if has_units and complete.any() else None, t_units=total,
        krippendorff_alpha=krippendorff_alpha(values) if has_units else None, per_label=per_label,
        pair_labels=tuple(pair_labels), missing=int((~present).sum()), unit=unit,
        note=None if has_units else NO_UNITS if task == "entities" else NO_UNITS_TASK.format(task=task))


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


def agreement(annotations: Mapping[str, Sequence[Sequence[str] | None]], **options: Any) -> Agreement:
    """Agreement of annotators' tag sequences (name -> one tag sequence per document, the
    same documents and tokens for all; ``None`` for a document the annotator did not
    annotate, whose t-units are then missing), scored with ``options`` as
    [`iescore.score_tags`][iescore.score_tags] takes them (any of [`Options`][iescore.options.Options]: rule, counting,
    scheme...). Each pair is scored on the documents both annotated.

    Example (A and B agree on PER; only A tags the LOC):
        >>> a = agreement({"A": [["B-PER", "O", "B-LOC"]], "B": [["B-PER", "O", "O"]]})
        >>> p = a.pairs[0]
        >>> p["f1_ab"], p["f1_ba"], round(p["kappa"], 12)
        (0.6666666666666666, 0.6666666666666666, 0.583333333333)
        >>> a.per_label["PER"]["kappa"], a.per_label["LOC"]["kappa"], round(a.krippendorff_alpha, 12)
        (1.0, 0.0, 0.608695652174)

    (t-units: 3 tokens and 2 separators, A: PER O LOC | O O, B: PER O O | O O: p_o = 4/5,
    p_e = 3/5 * 4/5 + 1/5 * 1/5 = 13/25, kappa = (20 - 13)/(25 - 13) = 7/12. LOC alone:
    A has 1 of the 5 t-units, B none: p_o = 4/5 = p_e, kappa 0. Alpha: 10 values, 8 of them
    in agreeing pairs, none 7, PER 2, LOC 1: 1 - 9 * (10 - 8) / (100 - 54) = 14/23.)
    """
    from ..config import Config
    from ..scoring.batch import tagged_batch
    from ..scoring.stream import Scorer

    config = options.pop("config", None)  # as score_tags takes them
    if config is None:
        options.setdefault("scheme", "auto")
    cfg = Config.from_options(config, **options)
    docs = {a: list(d) for a, d in annotations.items()}
    sizes = {a: len(d) for a, d in docs.items()}
    if len(set(sizes.values())) > 1:
        raise ConfigError(f"every annotator needs the same documents (None for one not annotated); got "
                          f"{', '.join(f'{a}: {n}' for a, n in sizes.items())} documents")

    def both(a: str, b: str) -> list[int]:
        return [k for k, (x, y) in enumerate(zip(docs[a], docs[b])) if x is not None and y is not None]

    def pair(a: str, b: str) -> Report | None:
        common = both(a, b)
        if not common:
            return None
        s = Scorer(cfg)
        s.add_batch(tagged_batch([docs[a][k] for k in common], [docs[b][k] for k in common]))  # type: ignore[misc]
        return s.report()

    return _agreement(list(annotations), pair, lambda a, r: both(a, a))


def agreement_scored(annotations: Mapping[str, Any], score: Callable[[Any, Any], Report]) -> Agreement:
    """Agreement of annotations of any kind (name -> an annotation: a file, a folder, a
    list of Documents...), each ordered pair scored by ``score(reference, prediction)``,
    which returns a [`Report`][iescore.Report]: [`iescore.score_files`][iescore.score_files] with
    its ``input_format`` and ``level`` reads every input ``iescore score`` reads. Each
    annotation is scored against itself too, for its t-units; documents are keyed by id.

    >>> import tempfile, os, pathlib, iescore
    >>> folder = tempfile.mkdtemp()
    >>> for name, spans in (("a", '[0, 7, "PER"], [17, 22, "LOC"]'), ("b", '[0, 7, "PER"]')):
    ...     _ = pathlib.Path(folder, name + ".jsonl").write_text(
    ...         '{"id": "d1", "text": "Al Roth lives in Paris", "label": [' + spans + ']}\\n')
    >>> files = {"A": os.path.join(folder, "a.jsonl"), "B": os.path.join(folder, "b.jsonl")}
    >>> ag = agreement_scored(files, lambda ref, pred: iescore.score_files(ref, pred, input_format="jsonl",
    ...                                                                    level="tokens"))
    >>> p = ag.pairs[0]
    >>> p["precision_ab"], p["recall_ab"], p["f1_ab"], p["t_units"], round(p["kappa"], 12)
    (1.0, 0.5, 0.6666666666666666, 9, 0.785714285714)

    (5 tokens and 4 separators; A: PER PER O O LOC | PER O O O, B: the LOC token is none:
    p_o = 8/9, p_e = (3 * 3 + 5 * 6) / 81 = 39/81, kappa = (72 - 39) / (81 - 39) = 11/14.)
    """
    return _agreement(list(annotations), lambda a, b: score(annotations[a], annotations[b]))


def agreement_files(paths: Mapping[str, str | os.PathLike[str]], *, encoding: str = "utf-8",
                    documents: str = "auto", **options: Any) -> Agreement:
    """Agreement of CoNLL annotation files (name -> path, aligned line by line, each
    annotator's tags in its last column) with the documents and tokens of all the files
    together (`conll_pairs`), scored with ``options`` (or ``config``) as
    [`iescore.score_tags`][iescore.score_tags] takes them. A file of another format is an
    InputError: `agreement_scored` with [`iescore.score_files`][iescore.score_files] reads it."""
    from ..config import Config
    from ..io.formats import sniff_format
    from ..scoring.stream import Scorer

    files = {a: os.fspath(p) for a, p in paths.items()}
    for path in files.values():
        found = sniff_format(path, encoding)
        if found is not None:
            raise InputError(f"{path}: {found[1]}, not CoNLL columns; agreement_scored with iescore.score_files "
                             f"(input_format={found[0]!r}, level='characters' or 'tokens') reads it")
    config = options.pop("config", None)
    if config is None:
        options.setdefault("scheme", "auto")
    cfg = Config.from_options(config, **options)
    read = conll_pairs(files, encoding=encoding, documents=documents)

    def pair(a: str, b: str) -> Report:  # documents and tokens from all the files: either order, one set of t-units
        scorer = Scorer(cfg)
        scorer.add_batch(read(a, b))
        return scorer.report()

    return _agreement(list(files), pair, lambda a, r: range(len(r.doc_ids)), shared=True)
