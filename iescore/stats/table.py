"""Statistics, after the report in the pipeline: the per-document count table of a report
and every measure of many count sums at once (the report's definitions, vectorised over
resamples)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ..errors import ConfigError, InputError
from ..measures import TS_FIELDS
from ..report import Report

__all__ = ['measure_names', 'resample_measures']


METHODS = ("percentile", "bca")
# the paired tests, the better calibrated first (the default): code -> what it computes
TESTS = ("ar", "bs")
TEST_NAMES = {
    "ar": "approximate randomization (Riezler & Maxwell 2005)",
    "bs": "paired bootstrap, centred (Efron & Tibshirani 1993)",
}
_SPAN = ("tp", "fp", "fn")
_SLOT = ("C", "S", "D", "I")
_TS_CELL = ("tok_tp", "tok_fp", "tok_fn", "sep_tp", "sep_fp", "sep_fn")
_AVG_MEASURES = ("precision", "recall", "f1", "f_beta", "jaccard")
# a count table of at most this many cells (documents x columns) is also kept whole
_DENSE_CELLS = 4_000_000
_TS_KEYS = (
    "f1_macro", "f1_micro", "token_f1_macro", "token_f1_micro",
    "f_beta_macro", "f_beta_micro", "token_f_beta_macro", "token_f_beta_micro",
    "accuracy_macro", "kappa_macro",
)


# --- the per-document count table of a report ---------------------------------------

@dataclass(frozen=True)
class _Table:
    """A report's counts as a ``(documents, columns)`` matrix X, never built whole.

    ``blocks`` maps a count name to its columns: ``tp``, ``fp``, ``fn`` (and ``C``,
    ``S``, ``D``, ``I``; TS fields) one column per label of ``labels``; ``tok_n`` and
    ``sep_n`` one column (the document's t-units, the same for every label) unless
    the TS counts carry per-t-unit weights; ``tokens`` four columns (conlleval's
    per-document token counts). The per-label blocks come first and are kept as the
    (document, label) cells that occur: ``doc`` and ``label`` of each cell (sorted by
    label, then document) and ``values``, one column per per-label name; the other
    columns are ``dense`` (documents x columns). So a report of 50,000 labels costs
    its cells, not documents x labels.
    """

    n_docs: int
    doc: np.ndarray
    label: np.ndarray
    values: np.ndarray
    dense: np.ndarray
    blocks: Mapping[str, slice]
    labels: tuple[str, ...]
    report: Report

    @property
    def n_columns(self) -> int:
        return int(self.values.shape[1] * len(self.labels) + self.dense.shape[1])

    @property
    def width(self) -> int:
        """The cells a row of weights takes in a product (the row of sums, and the row of
        weighted cells when summed from the cells), for chunking."""
        return max(self.n_columns, 1) if self._X is not None else max(len(self.doc), self.n_columns, 1)

    def bounds(self) -> tuple[float, float]:
        """The smallest and largest entry of X (0 where a cell is not stored)."""
        parts = [a.ravel() for a in (self.values, self.dense) if a.size]
        if not parts:
            return 0.0, 0.0
        lo = min(float(p.min()) for p in parts)
        hi = max(float(p.max()) for p in parts)
        if len(self.doc) < self.n_docs * len(self.labels):  # some stored nowhere: 0
            lo, hi = min(lo, 0.0), max(hi, 0.0)
        return lo, hi

    @cached_property
    def _X(self) -> np.ndarray | None:
        """X itself when it has at most ``_DENSE_CELLS`` cells (a matrix product is then the
        fastest sum), else None."""
        if self.n_docs * self.n_columns > _DENSE_CELLS:
            return None
        L, F = len(self.labels), self.values.shape[1]
        X = np.zeros((self.n_docs, self.n_columns))
        for f in range(F):
            X[self.doc, f * L + self.label] = self.values[:, f]
        X[:, F * L:] = self.dense
        return X

    def sums(self, W: np.ndarray) -> np.ndarray:
        """``W @ X`` for weights ``W`` (``(rows, documents)``), in ``W``'s dtype: a matrix
        product when X is small (``_X``); else each per-label column sums its cells'
        weighted values (one ``reduceat`` per name over the cells sorted by label), the
        dense columns by a matrix product."""
        if self._X is not None:
            out_: np.ndarray = W @ self._X.astype(W.dtype)
            return out_
        L, F = len(self.labels), self.values.shape[1]
        out = np.zeros((W.shape[0], self.n_columns), dtype=W.dtype)
        if len(self.doc):
            Y = W[:, self.doc]
            starts = np.flatnonzero(np.r_[True, self.label[1:] != self.label[:-1]])
            present = self.label[starts]
            for f in range(F):
                out[:, f * L + present] = np.add.reduceat(Y * self.values[:, f].astype(W.dtype), starts, axis=1)
        if self.dense.shape[1]:
            out[:, F * L:] = W @ self.dense.astype(W.dtype)
        return out

    def total(self) -> np.ndarray:
        """The column sums of X (float64)."""
        out: np.ndarray = self.sums(np.ones((1, self.n_docs)))[0]
        return out

    def rows(self, a: int, b: int) -> np.ndarray:
        """The dense rows ``a`` to ``b`` of X (documents ``a`` to ``b - 1``)."""
        if self._X is not None:
            part: np.ndarray = self._X[a:b].copy()
            return part
        W = np.zeros((b - a, self.n_docs))
        W[np.arange(b - a), np.arange(a, b)] = 1.0
        return self.sums(W)


def _table(report: Report, labels: Sequence[str] | None = None) -> _Table:
    """The count table of ``report`` over ``labels`` (its own labels by default; a label
    the report does not have gets zero columns)."""
    if report.totals is not None:
        raise InputError(
            "this report keeps only totals (Scorer(totals_only=True), the CLI's streaming, or "
            "states saved with keep='counts'); resampling draws documents and needs each "
            "document's counts: score with the documents kept (the default Scorer, or states "
            "saved with keep='items')"
        )
    labels = tuple(report.labels if labels is None else labels)
    L, D = len(labels), len(report.doc_ids)
    index = dict(zip(labels, range(L)))
    col = np.array([index[lab] for lab in report.labels], dtype=np.int64)
    t = report.table
    blocks: dict[str, slice] = {}
    # per-label names: one (documents, labels) block each, stored as cells
    vf = t.value_fields
    names = _SPAN + (_SLOT if "C" in vf else ())
    if report.ts_error is None and report.ts_cells is None and "tok_tp" in vf:
        names += _TS_CELL
    cell_doc, cell_label = t.doc.astype(np.int64), col[t.label]
    columns = [t.values[:, vf.index(name)].astype(np.float64) for name in names]
    if report.ts_error is None and report.ts_cells is not None and L == 0:
        names += TS_FIELDS
        columns += [np.zeros(0)] * len(TS_FIELDS)
    elif report.ts_error is None and report.ts_cells is not None:
        # per-t-unit weights: every TS field per (document, label); the cells where any is not 0,
        # merged with the count table's cells
        td, tl = np.nonzero(report.ts_cells.any(axis=2))
        keys = np.union1d(cell_doc * L + cell_label, td * L + col[tl])
        at, at_ts = np.searchsorted(keys, cell_doc * L + cell_label), np.searchsorted(keys, td * L + col[tl])
        merged = []
        for c in columns:
            m = np.zeros(len(keys))
            m[at] = c
            merged.append(m)
        for k in range(len(TS_FIELDS)):
            m = np.zeros(len(keys))
            m[at_ts] = report.ts_cells[td, tl, k]
            merged.append(m)
        names += TS_FIELDS
        cell_doc, cell_label, columns = keys // L, keys % L, merged
    for k, name in enumerate(names):
        blocks[name] = slice(k * L, (k + 1) * L)
    order = np.lexsort((cell_doc, cell_label))
    values = np.stack(columns, axis=1)[order] if columns else np.zeros((0, 0))
    # the other columns, dense
    dense: list[np.ndarray] = []

    def add(name: str, a: np.ndarray) -> None:
        start = len(names) * L + sum(p.shape[1] for p in dense)
        blocks[name] = slice(start, start + a.shape[1])
        dense.append(a.astype(np.float64, copy=False))

    if report.ts_error is None and report.ts_cells is None and "tok_tp" in vf:
        tok = np.zeros(D) if t.doc_tokens is None else t.doc_tokens.astype(np.float64)
        add("tok_n", tok[:, None])
        add("sep_n", np.maximum(tok - 1, 0)[:, None])
    if report.token_counts is not None:
        add("tokens", np.asarray(report.token_counts).reshape(D, -1))
    return _Table(D, cell_doc[order], cell_label[order], values,
                  np.concatenate(dense, axis=1) if dense else np.zeros((D, 0)), blocks, labels, report)


# --- measures of many count sums at once ----------------------------------------------

def _div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a / b`` elementwise, NaN where ``b`` is 0 (the report's None)."""
    a, b = np.broadcast_arrays(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64))
    out = np.full(a.shape, np.nan)
    np.divide(a, b, out=out, where=b != 0)
    return out


def _fb(tp: np.ndarray, fp: np.ndarray, fn: np.ndarray, beta: float) -> np.ndarray:
    b2 = beta * beta
    return _div((1 + b2) * tp, (1 + b2) * tp + b2 * fn + fp)


def _row_sums(a: np.ndarray) -> np.ndarray:
    """Per row, the sum of its values added left to right as Python's ``sum`` of a list
    adds them (``cumsum`` is sequential; a ``sum`` could pair them differently)."""
    return np.cumsum(a, axis=1)[:, -1] if a.shape[1] else np.zeros(a.shape[0])


def _mean_defined(v: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Per row, the mean of the defined values of the masked labels, summed left to right
    as the report sums them (NaN when none is defined)."""
    m = v[:, mask]
    ok = ~np.isnan(m)
    return _div(_row_sums(np.where(ok, m, 0.0)), ok.sum(axis=1))


def _weighted(v: np.ndarray, w: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Per row, sum(w v) / sum(w) over the labels of positive weight whose value is defined."""
    vm, wm = v[:, mask], w[:, mask]
    ok = (wm != 0) & ~np.isnan(vm)
    return _div(_row_sums(np.where(ok, wm * np.where(ok, vm, 0.0), 0.0)), _row_sums(np.where(ok, wm, 0.0)))


def _binary(tp: np.ndarray, fp: np.ndarray, fn: np.ndarray, n: np.ndarray, beta: float) -> dict[str, np.ndarray]:
    """The TS model's binary measures (as [`iescore.measures.ts_measures`][iescore.measures.ts_measures])."""
    tn = n - tp - fp - fn
    acc = _div(tp + tn, n)
    pe = _div((tp + fp) * (tp + fn) + (fn + tn) * (fp + tn), n * n)
    with np.errstate(invalid="ignore", divide="ignore"):
        kappa = np.where(np.isnan(acc) | np.isnan(pe) | (pe == 1), np.nan, (acc - pe) / (1 - pe))
    return {"f1": _fb(tp, fp, fn, 1.0), "f_beta": _fb(tp, fp, fn, beta), "accuracy": acc, "kappa": kappa}


def _measures(S: np.ndarray, tab: _Table, mask: np.ndarray | None = None,
              only: frozenset[str] | None = None) -> dict[str, np.ndarray]:
    """Every measure of each row of count sums ``S`` (``(R, columns)`` of ``tab``), NaN
    where undefined; ``mask`` selects the labels that belong to the system (all by
    default); ``only`` limits the work to the measures named."""
    cfg = tab.report.config
    beta = cfg.beta
    labels = tab.labels
    mask = np.ones(len(labels), dtype=bool) if mask is None else mask
    b = tab.blocks

    def want(*names: str) -> bool:
        """Whether any of ``names`` is wanted (``"f1["`` stands for every label's F1)."""
        return only is None or any(n in only or (n.endswith("[") and any(o.startswith(n) for o in only))
                                   for n in names)

    out: dict[str, np.ndarray] = {}
    tp, fp, fn = (S[:, b[k]] for k in _SPAN)
    full = "C" in b
    # which (average, measure) pairs and per-label measures are wanted
    avgs = {(a, m) for a in ("micro", "macro", "weighted") for m in _AVG_MEASURES
            if want(f"{a}_{m}") or (a == cfg.average and want(m))}
    if want("macro_f1_of_macro_pr"):
        avgs |= {("macro", "precision"), ("macro", "recall")}
    per_wanted = [m for m in _AVG_MEASURES + (("ser", "err", "e") if full else ()) if want(f"{m}[")]
    if avgs or per_wanted:
        per_fn = {"precision": lambda: _div(tp, tp + fp), "recall": lambda: _div(tp, tp + fn),
                  "f1": lambda: _fb(tp, fp, fn, 1.0), "f_beta": lambda: _fb(tp, fp, fn, beta),
                  "jaccard": lambda: _div(tp, tp + fp + fn)}
        if full:
            C, Sb, Dl, I = (S[:, b[k]] for k in _SLOT)
            support = C + Sb + Dl
            a = cfg.alpha
            per_fn["ser"] = lambda: _div(1.0 * Sb + 1.0 * Dl + 1.0 * I, support)
            per_fn["err"] = lambda: _div(Sb + Dl + I, support + I)
            per_fn["e"] = lambda: _div(Sb + (1 - a) * Dl + a * I, (1 - a) * support + a * (C + Sb + I))
        else:
            support = tp + fn
        per: dict[str, np.ndarray] = {}

        def label_values(m: str) -> np.ndarray:
            if m not in per:
                per[m] = per_fn[m]()
            return per[m]

        if any(avg == "micro" for avg, _ in avgs):
            tps, fps, fns = (x[:, mask].sum(axis=1) for x in (tp, fp, fn))
            micro = {"precision": lambda: _div(tps, tps + fps), "recall": lambda: _div(tps, tps + fns),
                     "f1": lambda: _fb(tps, fps, fns, 1.0), "f_beta": lambda: _fb(tps, fps, fns, beta),
                     "jaccard": lambda: _div(tps, tps + fps + fns)}
        for avg, m in sorted(avgs):
            if avg == "micro":
                out[f"micro_{m}"] = micro[m]()
            elif avg == "macro":
                out[f"macro_{m}"] = _mean_defined(label_values(m), mask)
            else:
                out[f"weighted_{m}"] = _weighted(label_values(m), support, mask)
        if want("macro_f1_of_macro_pr"):
            p, r = out["macro_precision"], out["macro_recall"]
            den = 1.0 * p + r
            with np.errstate(invalid="ignore", divide="ignore"):
                out["macro_f1_of_macro_pr"] = np.where(den == 0, 0.0, (1 + 1.0) * p * r / den)
        for m in _AVG_MEASURES:
            if (cfg.average, m) in avgs:
                out[m] = out[f"{cfg.average}_{m}"]
        for m in per_wanted:
            v = label_values(m)
            for j in np.flatnonzero(mask):
                out[f"{m}[{labels[j]}]"] = v[:, j]
    if full and want("ser", "err", "e", "ser_weighted"):
        C, Sb, Dl, I = (S[:, b[k]][:, mask].sum(axis=1) for k in _SLOT)
        N, M = C + Sb + Dl, C + Sb + I
        a = cfg.alpha
        ws, wd, wi = cfg.ser_weights
        out["ser"] = _div(1.0 * Sb + 1.0 * Dl + 1.0 * I, N)
        out["err"] = _div(Sb + Dl + I, N + I)
        out["e"] = _div(Sb + (1 - a) * Dl + a * I, (1 - a) * N + a * M)
        out["ser_weighted"] = _div(ws * Sb + wd * Dl + wi * I, N)
    if "tok_tp" in b and want(*(f"ts_{k}" for k in _TS_KEYS)):
        out.update(_ts(S, tab, mask))
    if "tokens" in b and want("token_accuracy", "token_accuracy_non_o"):
        t = S[:, b["tokens"]]
        out["token_accuracy"] = _div(t[:, 1], t[:, 0])
        out["token_accuracy_non_o"] = _div(t[:, 3], t[:, 2])
    if only is not None:
        out = {k: v for k, v in out.items() if k in only}
    return out


def _ts(S: np.ndarray, tab: _Table, mask: np.ndarray) -> dict[str, np.ndarray]:
    """The token & separator block (``ts_*``) as the report computes it."""
    cfg = tab.report.config
    b = tab.blocks
    k = int(mask.sum())
    if tab.report.ts_cells is not None:  # per-t-unit weights applied: every field per label
        wt = ws = 1.0
        g = {f: S[:, b[f]][:, mask] for f in TS_FIELDS}
    else:  # the t-units of a document count once for every label
        wt, ws = cfg.token_weight, cfg.separator_weight
        g = {f: S[:, b[f]][:, mask] for f in _TS_CELL}
        g["tok_n"] = np.repeat(S[:, b["tok_n"]], k, axis=1)
        g["sep_n"] = np.repeat(S[:, b["sep_n"]], k, axis=1)
    tot = {f: v.sum(axis=1, keepdims=True) for f, v in g.items()}
    out: dict[str, np.ndarray] = {}
    for name, c in (("per", g), ("micro", tot)):
        ts = _binary(wt * c["tok_tp"] + ws * c["sep_tp"], wt * c["tok_fp"] + ws * c["sep_fp"],
                     wt * c["tok_fn"] + ws * c["sep_fn"], wt * c["tok_n"] + ws * c["sep_n"], cfg.beta)
        tok = _binary(c["tok_tp"], c["tok_fp"], c["tok_fn"], c["tok_n"], cfg.beta)
        if name == "per":
            every = np.ones(k, dtype=bool)
            for f in ("f1", "f_beta"):
                out[f"ts_{f}_macro"] = _mean_defined(ts[f], every)
                out[f"ts_token_{f}_macro"] = _mean_defined(tok[f], every)
            out["ts_accuracy_macro"] = _mean_defined(ts["accuracy"], every)
            out["ts_kappa_macro"] = _mean_defined(ts["kappa"], every)
        else:
            for f in ("f1", "f_beta"):
                out[f"ts_{f}_micro"] = ts[f][:, 0]
                out[f"ts_token_{f}_micro"] = tok[f][:, 0]
    return out


def _point(report: Report) -> dict[str, float | None]:
    """The named measures as ``report.to_dict()`` has them."""
    d = report.to_dict()
    out: dict[str, float | None] = {}
    for avg in ("micro", "macro", "weighted"):
        for m in _AVG_MEASURES:
            out[f"{avg}_{m}"] = d["averages"][avg][m]
    out["macro_f1_of_macro_pr"] = d["averages"]["macro"]["f1_of_macro_pr"]
    for m in _AVG_MEASURES:
        out[m] = d["averages"][report.config.average][m]
    full = d["slot_errors"] is not None
    for lab, e in d["per_label"].items():
        for m in _AVG_MEASURES + (("ser", "err", "e") if full else ()):
            out[f"{m}[{lab}]"] = e[m]
    if full:
        for m in ("ser", "err", "e", "ser_weighted"):
            out[m] = d["slot_errors"][m]
    if d["ts"] is not None:
        for k in _TS_KEYS:
            out[f"ts_{k}"] = d["ts"][k]
    if report.token_sums() is not None:
        out["token_accuracy"] = d["token_accuracy"]
        out["token_accuracy_non_o"] = d["token_accuracy_non_o"]
    return out


def measure_names(report: Report) -> tuple[str, ...]:
    """The names of the measures a resample of ``report`` has (see the module's docstring)."""
    return tuple(_point(report))


def _as_values(a: np.ndarray) -> list[float | None]:
    return [None if math.isnan(x) else float(x) for x in a.tolist()]


def resample_measures(report: Report, counts: np.ndarray) -> dict[str, list[float | None]]:
    """The measures of the resamples given by ``counts`` (``(resamples, documents)``: how
    many times each document is drawn), ``None`` where undefined.

    Example (every document once: the report's own numbers):
        >>> import iescore
        >>> r = iescore.score_tags(reference=[["B-PER"], ["B-LOC"]], prediction=[["B-PER"], ["O"]])
        >>> resample_measures(r, np.array([[1, 1], [2, 0]]))["f1"]
        [0.6666666666666666, 1.0]
    """
    tab = _table(report)
    W = np.asarray(counts, dtype=np.float64)
    if W.ndim != 2 or W.shape[1] != tab.n_docs:
        raise ConfigError(f"resample counts need shape (resamples, {tab.n_docs}); got {W.shape}")
    return {k: _as_values(v) for k, v in _measures(tab.sums(W), tab).items()}
