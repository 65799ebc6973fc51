"""Confidence intervals and paired significance tests by resampling documents.

A report keeps its counts per document and label, and every measure is a
function of counts summed over documents. A bootstrap resample that draws
document ``d`` ``w[d]`` times therefore has the counts ``w @ X`` (``X`` the
documents x count-columns table of the report): no re-decoding, no re-matching.
All resamples at once are one matrix product ``W @ X`` (``W`` the resamples x
documents matrix of draw counts), and every measure of every resample is
computed column-wise from those sums with the report's own definitions:

* per-label P/R/F1/F_beta/SER/ERR/E from the label's summed counts;
* micro: counts summed over labels; macro: the mean over the labels whose
  measure is defined *in that resample* (the others are left out, as in the
  report); weighted: per-label measures weighted by the label's reference items
  in the resample (C+S+D, or TP+FN when only TP/FP/FN are counted);
* SER/ERR/E from the summed C/S/D/I; the token & separator model from the summed
  t-unit counts; token accuracy from the summed per-document token counts.

The resample that takes every document once reproduces ``report.to_dict()``
exactly (tested). Measure names (:func:`measure_names`): ``precision``,
``recall``, ``f1``, ``f_beta`` (the configured headline average), ``micro_f1``,
``macro_f1``, ``weighted_f1`` (and ``_precision``, ``_recall``, ``_f_beta``),
``macro_f1_of_macro_pr``, ``ser``, ``err``, ``e``, ``ser_weighted``,
``ts_f1_macro``, ``ts_f1_micro``, ``ts_token_f1_macro`` ... (the keys of the
report's ``ts`` block with ``ts_`` in front), ``token_accuracy``,
``token_accuracy_non_o``, and per label ``f1[PER]``, ``precision[PER]`` ...

Paired tests (systems scored on the same reference documents):

* paired bootstrap (Koehn 2004, in the form of Moses' and sacrebleu's script):
  both systems resampled with the same documents; with ``d* = |m_sys* - m_base*|``
  per resample and ``d`` the observed ``|m_sys - m_base|``,
  ``p = (#{d* - mean(d*) >= d} + 1) / (R + 1)``;
* approximate randomization (Riezler & Maxwell 2005): per resample and document,
  the two systems' counts are swapped with probability 1/2;
  ``p = (#{|m_a* - m_b*| >= d} + 1) / (R + 1)``; with ``resamples="all"`` every
  one of the ``2**D`` swaps is enumerated and ``p = #{...} / 2**D`` (the exact
  permutation test).

``>=`` (not ``>``) makes a system compared with itself get p = 1. A resample
where the measure is undefined counts as at least as extreme (conservative).
Several systems against one baseline: Holm-Bonferroni adjusted p-values
(``correction: "holm"``). Systems are grouped where their differences are not
significant: sorted by the measure, each system joins the group of the best
system of the current group unless the paired test of the two (unadjusted, at
``alpha``) finds them different. (Holm over all pairs would need p < alpha / pairs,
below the smallest p-value 1/(R+1) of 1,000 resamples for more than 7 systems.)

Example (two documents, the second one wrong):
    >>> import iescore
    >>> r = iescore.score_tags(reference=[["B-PER"], ["B-LOC"]], prediction=[["B-PER"], ["O"]])
    >>> b = bootstrap(r, resamples=200, seed=1)
    >>> b.values["f1"], b.intervals["f1"]  # F1 = 2/3; resamples give 0 (no PER), 2/3 or 1
    (0.6666666666666666, (0.0, 1.0))
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Any

import numpy as np

# imports of iescore, in one place (the package may be restructured)
from .engine import TS_FIELDS
from .errors import ConfigError, InputError, choices
from .report import Report

__all__ = [
    "bootstrap",
    "compare",
    "BootstrapResult",
    "Comparison",
    "measure_names",
    "resample_measures",
    "bootstrap_counts",
    "all_resamples",
    "holm",
    "main_compare",
    "add_compare_parser",
    "format_comparison",
    "folds",
    "FoldSummary",
    "t_quantile",
    "agreement",
    "Agreement",
    "cohen_kappa",
    "fleiss_kappa",
    "main_agree",
    "main_stats",
    "add_stats_parsers",
    "format_agreement",
]

METHODS = ("percentile", "bca")
TESTS = ("bs", "ar")
_SPAN = ("tp", "fp", "fn")
_SLOT = ("C", "S", "D", "I")
_TS_CELL = ("tok_tp", "tok_fp", "tok_fn", "sep_tp", "sep_fp", "sep_fn")
_AVG_MEASURES = ("precision", "recall", "f1", "f_beta")
_TS_KEYS = (
    "f1_macro", "f1_micro", "token_f1_macro", "token_f1_micro",
    "f_beta_macro", "f_beta_micro", "token_f_beta_macro", "token_f_beta_micro",
    "accuracy_macro", "kappa_macro",
)
_CHUNK_CELLS = 4_000_000  # resamples x documents per chunk of the draw matrix


# --- the per-document count table of a report ---------------------------------------

@dataclass(frozen=True)
class _Table:
    """A report's counts as one ``(documents, columns)`` float matrix.

    ``blocks`` maps a count name to its columns: ``tp``, ``fp``, ``fn`` (and ``C``,
    ``S``, ``D``, ``I``; TS fields) one column per label of ``labels``; ``tok_n`` and
    ``sep_n`` one column (the document's t-units, the same for every label) unless
    the TS counts carry per-t-unit weights; ``tokens`` four columns (conlleval's
    per-document token counts).
    """

    X: np.ndarray
    blocks: Mapping[str, slice]
    labels: tuple[str, ...]
    report: Report

    @property
    def n_docs(self) -> int:
        return self.X.shape[0]


def _table(report: Report, labels: Sequence[str] | None = None) -> _Table:
    """The count table of ``report`` over ``labels`` (its own labels by default; a label
    the report does not have gets zero columns)."""
    labels = tuple(report.labels if labels is None else labels)
    L, D = len(labels), len(report.doc_ids)
    col = np.array([labels.index(lab) for lab in report.labels], dtype=np.intp)
    t = report.table
    blocks: dict[str, slice] = {}
    parts: list[np.ndarray] = []

    def add(name: str, a: np.ndarray) -> None:
        start = sum(p.shape[1] for p in parts)
        blocks[name] = slice(start, start + a.shape[1])
        parts.append(a.astype(np.float64, copy=False))

    def per_label(values: np.ndarray) -> np.ndarray:
        m = np.zeros((D, L))
        m[t.doc, col[t.label]] = values  # one stored cell per (document, label)
        return m

    vf = t.value_fields
    names = _SPAN + (_SLOT if "C" in vf else ())
    if report.ts_error is None and report.ts_cells is None and "tok_tp" in vf:
        names += _TS_CELL
    for name in names:
        add(name, per_label(t.values[:, vf.index(name)]))
    if report.ts_error is None:
        if report.ts_cells is not None:
            for k, name in enumerate(TS_FIELDS):
                m = np.zeros((D, L))
                m[:, col] = report.ts_cells[:, :, k]
                add(name, m)
        elif "tok_tp" in vf:
            tok = np.zeros(D) if t.doc_tokens is None else t.doc_tokens.astype(np.float64)
            add("tok_n", tok[:, None])
            add("sep_n", np.maximum(tok - 1, 0)[:, None])
    if report.token_counts is not None:
        add("tokens", np.asarray(report.token_counts).reshape(D, -1))
    X = np.concatenate(parts, axis=1) if parts else np.zeros((D, 0))
    return _Table(X, blocks, labels, report)


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


def _mean_defined(v: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Per row, the mean of the defined values of the masked labels, summed left to right
    as the report sums them (NaN when none is defined)."""
    acc = np.zeros(v.shape[0])
    n = np.zeros(v.shape[0])
    for j in np.flatnonzero(mask):
        ok = ~np.isnan(v[:, j])
        acc = acc + np.where(ok, v[:, j], 0.0)
        n = n + ok
    return _div(acc, n)


def _weighted(v: np.ndarray, w: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Per row, sum(w v) / sum(w) over the labels of positive weight whose value is defined."""
    num = np.zeros(v.shape[0])
    den = np.zeros(v.shape[0])
    for j in np.flatnonzero(mask):
        ok = (w[:, j] != 0) & ~np.isnan(v[:, j])
        num = num + np.where(ok, w[:, j] * np.where(ok, v[:, j], 0.0), 0.0)
        den = den + np.where(ok, w[:, j], 0.0)
    return _div(num, den)


def _binary(tp: np.ndarray, fp: np.ndarray, fn: np.ndarray, n: np.ndarray, beta: float) -> dict[str, np.ndarray]:
    """The TS model's binary measures (as :func:`iescore.measures.ts_measures`)."""
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
                  "f1": lambda: _fb(tp, fp, fn, 1.0), "f_beta": lambda: _fb(tp, fp, fn, beta)}
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
                     "f1": lambda: _fb(tps, fps, fns, 1.0), "f_beta": lambda: _fb(tps, fps, fns, beta)}
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
    if report.token_counts is not None:
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
    return {k: _as_values(v) for k, v in _measures(W @ tab.X, tab).items()}


# --- drawing resamples --------------------------------------------------------------

def bootstrap_counts(n_docs: int, resamples: int, rng: np.random.Generator) -> np.ndarray:
    """``(resamples, n_docs)`` draw counts: each row draws ``n_docs`` documents uniformly
    with replacement (a multinomial row), as integer draws counted per row."""
    idx = rng.integers(0, n_docs, size=(resamples, n_docs))
    flat = idx + (np.arange(resamples) * n_docs)[:, None]
    return np.bincount(flat.ravel(), minlength=resamples * n_docs).reshape(resamples, n_docs)


def all_resamples(n_docs: int) -> tuple[np.ndarray, np.ndarray]:
    """Every distinct bootstrap resample of ``n_docs`` documents and its probability:
    ``(counts (k, n_docs), probabilities (k,))`` with multinomial weights
    ``n! / prod(c_i!) / n**n`` (for a handful of documents only).

    >>> c, p = all_resamples(2)
    >>> c.tolist(), p.tolist()
    ([[0, 2], [1, 1], [2, 0]], [0.25, 0.5, 0.25])
    """
    if n_docs > 8:
        raise ConfigError(f"all_resamples enumerates n**n draws; {n_docs} documents is too many (at most 8)")
    rows, probs = [], []
    for c in itertools.product(range(n_docs + 1), repeat=n_docs):
        if sum(c) == n_docs:
            rows.append(c)
            probs.append(math.factorial(n_docs) / math.prod(math.factorial(x) for x in c) / n_docs**n_docs)
    return np.array(rows, dtype=np.int64).reshape(-1, n_docs), np.array(probs)


def _chunks(resamples: int, n_docs: int) -> list[tuple[int, int]]:
    step = max(1, _CHUNK_CELLS // max(1, n_docs))
    return [(a, min(resamples, a + step)) for a in range(0, resamples, step)]


def _signs(n_docs: int, resamples: int | str, rng: np.random.Generator, chunk: tuple[int, int]) -> np.ndarray:
    """Swap indicators of approximate randomization: random 0/1, or every one of the
    ``2**n_docs`` patterns (``resamples="all"``)."""
    a, b = chunk
    if resamples == "all":
        rows = np.arange(a, b, dtype=np.int64)[:, None]
        return ((rows >> np.arange(n_docs, dtype=np.int64)) & 1).astype(np.float64)
    return rng.integers(0, 2, size=(b - a, n_docs)).astype(np.float64)


# --- intervals ----------------------------------------------------------------------

def _interval(dist: np.ndarray, point: float | None, level: float, method: str,
              jack: np.ndarray | None) -> tuple[float, float] | None:
    """The ``level`` interval of a bootstrap distribution (NaN resamples left out):
    percentile (numpy's linear interpolation), or BCa (Efron 1987) with the bias from the
    share of resamples below the point (ties count half) and the acceleration from the
    leave-one-document-out jackknife ``jack``. A distribution of one value gives that
    point (all quantiles are equal; BCa's bias and acceleration are then 0)."""
    v = dist[~np.isnan(dist)]
    if len(v) == 0:
        return None
    lo_q, hi_q = (1 - level) / 2, 1 - (1 - level) / 2
    if method == "bca":
        if point is None:
            return None
        nd = NormalDist()
        share = (np.sum(v < point) + 0.5 * np.sum(v == point)) / len(v)
        share = min(max(share, 0.5 / len(v)), 1 - 0.5 / len(v))
        z0 = nd.inv_cdf(share)
        a = 0.0
        assert jack is not None
        j = jack[~np.isnan(jack)]
        if len(j) > 1:
            d = j.mean() - j
            den = 6 * float(np.sum(d * d)) ** 1.5
            a = float(np.sum(d * d * d)) / den if den > 0 else 0.0
        qs = []
        for q in (lo_q, hi_q):
            z = z0 + nd.inv_cdf(q)
            qs.append(nd.cdf(z0 + z / (1 - a * z)))
        lo_q, hi_q = qs
    lo, hi = np.quantile(v, [lo_q, hi_q])
    return float(lo), float(hi)


def _intervals(dist: Mapping[str, np.ndarray], point: Mapping[str, float | None], level: float, method: str,
               jack: Mapping[str, np.ndarray]) -> dict[str, tuple[float, float] | None]:
    """:func:`_interval` of every measure; the percentile intervals of the measures defined in
    every resample are taken in one call (the same numbers)."""
    out: dict[str, tuple[float, float] | None] = {}
    names = list(dist)
    if method == "percentile" and names:
        M = np.stack([dist[k] for k in names], axis=1)
        full = ~np.isnan(M).any(axis=0)
        if full.any():
            q = np.quantile(M[:, full], [(1 - level) / 2, 1 - (1 - level) / 2], axis=0)
            for c, k in enumerate(n for n, f in zip(names, full) if f):
                out[k] = (float(q[0, c]), float(q[1, c]))
    for k in names:
        if k not in out:
            out[k] = _interval(dist[k], point[k], level, method, jack.get(k))
    return out


def _exact_dtype(X: np.ndarray, n_docs: int, integer: bool) -> type:
    """float32 when every product with a draw or swap matrix is exact in it (``integer``,
    non-negative counts whose largest possible sum, documents x largest count, is below
    2**24), else float64 (exact below 2**53)."""
    if integer and X.size and X.min() >= 0 and float(X.max()) * n_docs < 2**24:
        return np.float32
    return np.float64


def _jackknife(tab: _Table, names: frozenset[str], mask: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """The measures of the leave-one-document-out samples (for BCa's acceleration)."""
    total = tab.X.sum(axis=0)
    out: dict[str, list[np.ndarray]] = {}
    for a, b in _chunks(tab.n_docs, tab.X.shape[1]):
        for k, v in _measures(total - tab.X[a:b], tab, mask, names).items():
            out.setdefault(k, []).append(v)
    return {k: np.concatenate(v) for k, v in out.items()}


def _check_level(level: float, method: str) -> None:
    if not 0 < level < 1:
        raise ConfigError(f"level must be in (0, 1); got {level!r}")
    if method not in METHODS:
        raise ConfigError(f"unknown interval method {method!r}; choices: {choices(METHODS)}")


def _names(report: Report, measures: Sequence[str] | None) -> tuple[str, ...]:
    have = measure_names(report)
    if measures is None:
        return have
    for m in measures:
        if m not in have:
            raise ConfigError(f"unknown measure {m!r} for this report; choices: {choices(have)}")
    return tuple(measures)


@dataclass(frozen=True)
class BootstrapResult:
    """Bootstrap confidence intervals of a report's measures (plain data).

    ``values`` are the report's own numbers, ``intervals`` the ``(low, high)`` bounds
    (``None`` where no resample defines the measure); ``signature`` is the report's
    signature with the method, resamples, seed and level appended.
    """

    signature: str
    method: str
    resamples: int
    seed: int
    level: float
    values: Mapping[str, float | None]
    intervals: Mapping[str, tuple[float, float] | None]

    def to_dict(self) -> dict[str, Any]:
        return {
            "signature": self.signature, "method": self.method, "resamples": self.resamples,
            "seed": self.seed, "level": self.level, "values": dict(self.values),
            "intervals": {k: None if v is None else list(v) for k, v in self.intervals.items()},
        }


def _suffix(method: str, resamples: int | str, seed: int, level: float) -> str:
    return f"|ci:{method}|bs:{resamples}|seed:{seed}|level:{level:g}"


def bootstrap(report: Report, *, resamples: int = 1000, seed: int = 12345, method: str = "percentile",
              level: float = 0.95, measures: Sequence[str] | None = None) -> BootstrapResult:
    """Confidence intervals of ``report``'s measures by resampling its documents.

    ``measures``: names from :func:`measure_names` (all by default); ``method``:
    ``"percentile"`` or ``"bca"``. The resamples are drawn from
    ``numpy.random.default_rng(seed)``, so the same seed gives the same intervals.
    """
    _check_level(level, method)
    if resamples < 1:
        raise ConfigError(f"resamples must be at least 1; got {resamples!r}")
    names = _names(report, measures)
    wanted = frozenset(names)
    tab = _table(report)
    rng = np.random.default_rng(seed)
    dt = _exact_dtype(tab.X, tab.n_docs, report.ts_cells is None)
    Xd = tab.X.astype(dt)
    dist: dict[str, list[np.ndarray]] = {k: [] for k in names}
    for a, b in _chunks(resamples, tab.n_docs):
        W = bootstrap_counts(tab.n_docs, b - a, rng).astype(dt)
        for k, v in _measures((W @ Xd).astype(np.float64), tab, only=wanted).items():
            dist[k].append(v)
    point = _point(report)
    jack = _jackknife(tab, wanted) if method == "bca" else {}
    intervals = _intervals({k: np.concatenate(dist[k]) for k in names}, point, level, method, jack)
    return BootstrapResult(
        signature=report.signature + _suffix(method, resamples, seed, level), method=method,
        resamples=resamples, seed=seed, level=level, values={k: point[k] for k in names}, intervals=intervals,
    )


# --- paired tests -------------------------------------------------------------------

def holm(p: Sequence[float | None]) -> list[float | None]:
    """Holm-Bonferroni adjusted p-values (``None`` stays ``None`` and is not counted):
    the i-th smallest of m is ``max_{j<=i} min(1, (m - j + 1) p_(j))`` (j from 1).

    >>> holm([0.01, 0.04, 0.03, None])
    [0.03, 0.06, 0.06, None]
    """
    idx = sorted((i for i, x in enumerate(p) if x is not None), key=lambda i: p[i])  # type: ignore[arg-type, return-value]
    m = len(idx)
    out: list[float | None] = [None] * len(p)
    run = 0.0
    for j, i in enumerate(idx):
        run = max(run, min(1.0, (m - j) * p[i]))  # type: ignore[operator]
        out[i] = run
    return out


def _p_value(extreme: np.ndarray, total: int, exact: bool) -> float:
    """(#extreme + 1) / (R + 1), or #extreme / R when every resample was enumerated."""
    c = int(np.sum(extreme))
    return c / total if exact else (c + 1) / (total + 1)


@dataclass(frozen=True)
class Comparison:
    """Systems scored on the same reference, compared with a baseline (plain data).

    ``systems``: one row per system (input order) with every measure, its interval
    (``<measure>_ci``), ``p_value`` of the paired test of ``measure`` against the
    baseline (``None`` for the baseline), ``p_value_holm`` (Holm-Bonferroni over the
    systems compared with the baseline), ``significant`` (adjusted p < ``alpha``) and
    ``group`` (1 = the best group; systems of a group are not significantly different
    from the group's first system: unadjusted paired test at ``alpha``). ``pairwise``:
    the raw p-value of every pair tested (``"a vs b"``).
    """

    signature: str
    test: str
    resamples: int | str
    seed: int
    baseline: str
    measure: str
    method: str
    level: float
    alpha: float
    measures: tuple[str, ...]
    systems: tuple[Mapping[str, Any], ...]
    correction: str = "holm"
    pairwise: Mapping[str, float | None] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "signature": self.signature, "resamples": self.resamples, "seed": self.seed,
            "baseline": self.baseline, "test": self.test, "measure": self.measure,
            "correction": self.correction, "ci": self.method, "level": self.level, "alpha": self.alpha,
            "systems": [dict(s) for s in self.systems],
        }


def _same_reference(reports: Mapping[str, Report]) -> None:
    items = list(reports.items())
    name0, r0 = items[0]
    for name, r in items[1:]:
        if r.signature != r0.signature:
            raise InputError(
                f"system {name!r} was not scored like {name0!r} on the same reference: "
                f"signature {r.signature!r} vs {r0.signature!r}"
            )
        if len(r.doc_ids) != len(r0.doc_ids):  # the signature's reference digest covers the rest
            raise InputError(f"system {name!r} has {len(r.doc_ids)} documents, {name0!r} {len(r0.doc_ids)}; "
                             "paired tests need the same documents")


def compare(reports: Mapping[str, Report], *, baseline: str | None = None, test: str = "bs",
            resamples: int | str = 1000, seed: int = 12345, measures: Sequence[str] | None = None,
            measure: str = "f1", method: str = "percentile", level: float = 0.95,
            alpha: float = 0.05) -> Comparison:
    """Paired comparison of systems scored on the same reference documents.

    ``reports``: name -> report (same configuration and reference, so the same
    signature); ``baseline``: a name (the first by default); ``test``: ``"bs"`` (paired
    bootstrap) or ``"ar"`` (approximate randomization; ``resamples="all"`` enumerates
    every swap, for a few documents); ``measure``: the one tested; ``measures``: those
    shown with intervals (``measure`` first, then precision and recall by default).
    Intervals always come from the paired bootstrap resamples.

    Example (a system compared with itself: p = 1):
        >>> import iescore
        >>> r = iescore.score_tags(reference=[["B-PER"], ["B-LOC"]], prediction=[["B-PER"], ["O"]])
        >>> c = compare({"a": r, "b": r}, resamples=50, seed=3)
        >>> c.systems[1]["p_value"], c.systems[1]["f1_ci"] == c.systems[0]["f1_ci"]
        (1.0, True)
    """
    if test not in TESTS:
        raise ConfigError(f"unknown paired test {test!r}; choices: {choices(TESTS)}")
    _check_level(level, method)
    if not reports:
        raise ConfigError("compare needs at least one system")
    names = list(reports)
    baseline = names[0] if baseline is None else baseline
    if baseline not in reports:
        raise ConfigError(f"unknown baseline {baseline!r}; systems: {choices(names)}")
    exact = resamples == "all"
    if exact and test != "ar":
        raise ConfigError("resamples='all' (every swap) is for test='ar'")
    if not exact and (not isinstance(resamples, int) or resamples < 1):
        raise ConfigError(f"resamples must be a positive integer or 'all'; got {resamples!r}")
    _same_reference(reports)
    shown = tuple(dict.fromkeys([measure] + list(measures if measures is not None else ("precision", "recall"))))
    for r in reports.values():
        _names(r, shown)
    labels = tuple(sorted(set().union(*(r.labels for r in reports.values()))))
    tabs = [_table(reports[n], labels) for n in names]
    if any(dict(t.blocks) != dict(tabs[0].blocks) for t in tabs):
        raise InputError("the systems' reports count different fields; they cannot be compared")
    masks = [np.isin(labels, reports[n].labels) for n in names]
    X = np.concatenate([t.X for t in tabs], axis=1)
    K, D = tabs[0].X.shape[1], tabs[0].n_docs
    dt = _exact_dtype(X, D, all(r.ts_cells is None for r in reports.values()))
    Xd = X.astype(dt)
    wanted = frozenset(shown)
    n_bs = 1000 if exact else int(resamples)
    rng = np.random.default_rng(seed)
    dist: list[dict[str, list[np.ndarray]]] = [{k: [] for k in shown} for _ in names]
    for a, b in _chunks(n_bs, D):
        B = (bootstrap_counts(D, b - a, rng).astype(dt) @ Xd).astype(np.float64)
        for s, t in enumerate(tabs):
            for k, v in _measures(B[:, s * K:(s + 1) * K], t, masks[s], wanted).items():
                dist[s][k].append(v)
    dists = [{k: np.concatenate(v) for k, v in d.items()} for d in dist]
    points = [_point(reports[n]) for n in names]
    jack = [_jackknife(t, wanted, masks[s]) if method == "bca" else {} for s, t in enumerate(tabs)]

    # paired tests of `measure`, computed for the pairs asked (the baseline's, the groups')
    S = len(names)
    if test == "ar":
        n_ar = 2 ** D if exact else int(resamples)
        if exact and D > 20:
            raise ConfigError(f"resamples='all' enumerates 2**documents swaps; {D} documents is too many (at most 20)")
        T = X.sum(axis=0)
        # swapped sums of every system, one block per chunk of shuffles (all pairs share the swaps)
        swapped = [(_signs(D, resamples, rng, (a, b)).astype(dt) @ Xd).astype(np.float64)
                   for a, b in _chunks(n_ar, D)]
    one = frozenset([measure])
    p_pair: dict[tuple[int, int], float | None] = {}

    def pv(i: int, j: int) -> float | None:
        """The p-value of the paired test of systems ``i`` and ``j``."""
        if i == j:
            return 1.0
        i, j = min(i, j), max(i, j)
        if (i, j) in p_pair:
            return p_pair[(i, j)]
        pi, pj = points[i][measure], points[j][measure]
        if pi is None or pj is None:
            p_pair[(i, j)] = None
            return None
        obs = abs(pi - pj)
        if test == "bs":
            d = np.abs(dists[i][measure] - dists[j][measure])
            stat = d - np.nanmean(d) if (~np.isnan(d)).any() else d
            p_pair[(i, j)] = _p_value(np.isnan(stat) | (stat >= obs), n_bs, False)
        else:
            si, sj = slice(i * K, (i + 1) * K), slice(j * K, (j + 1) * K)
            m = masks[i] | masks[j]
            hits = 0
            for SX in swapped:
                swap = SX[:, sj] - SX[:, si]  # system i takes j's counts where swapped
                ma = _measures(T[si] + swap, tabs[i], m, one)[measure]
                mb = _measures(T[sj] - swap, tabs[j], m, one)[measure]
                d = np.abs(ma - mb)
                hits += int(np.sum(np.isnan(d) | (d >= obs)))
            p_pair[(i, j)] = hits / n_ar if exact else (hits + 1) / (n_ar + 1)
        return p_pair[(i, j)]

    b0 = names.index(baseline)
    raw = [None if s == b0 else pv(s, b0) for s in range(S)]
    adj = holm(raw)

    # groups: best first; join the current group unless the (unadjusted) paired test finds the
    # system different from the group's first system
    order = sorted(range(S), key=lambda s: (points[s][measure] is None, -(points[s][measure] or 0.0), s))
    group = [0] * S
    g, leader = 0, None
    for s in order:
        p_lead = None if leader is None else pv(s, leader)
        if leader is None or (p_lead is not None and p_lead < alpha):
            g, leader = g + 1, s
        group[s] = g

    rows = []
    for s, n in enumerate(names):
        row: dict[str, Any] = {"name": n}
        ivs = _intervals(dists[s], points[s], level, method, jack[s])
        for k in shown:
            row[k] = points[s][k]
            row[f"{k}_ci"] = None if ivs[k] is None else list(ivs[k])
        row["p_value"] = raw[s]
        row["p_value_holm"] = adj[s]
        row["significant"] = None if adj[s] is None else adj[s] < alpha
        row["group"] = group[s]
        rows.append(row)
    sig = reports[baseline].signature + f"|test:{test}|n:{resamples}|seed:{seed}|measure:{measure}" \
        + f"|ci:{method}|level:{level:g}|correction:holm"
    return Comparison(
        signature=sig, test=test, resamples=resamples, seed=seed, baseline=baseline, measure=measure,
        method=method, level=level, alpha=alpha, measures=shown, systems=tuple(rows),
        pairwise={f"{names[i]} vs {names[j]}": p for (i, j), p in sorted(p_pair.items())},
    )


# --- command line: iescore compare ----------------------------------------------------

_COPIED_GROUPS = ("evaluation model", "input and output")


def _copy_options(cp: Any, score_parser: Any) -> None:
    """Give ``cp`` the evaluation and input options of ``score_parser`` (the option
    objects are shared, as argparse's ``parents=`` shares them)."""
    for group in score_parser._action_groups:  # argparse has no public accessor for a group's options
        if group.title in _COPIED_GROUPS:
            g = cp.add_argument_group(group.title)
            for action in group._group_actions:
                g._add_action(action)
            if group.title == "evaluation model":  # these options are the Config's fields
                cp.set_defaults(config_fields=tuple(a.dest for a in group._group_actions))


def add_stats_parsers(sub: Any, score_parser: Any) -> None:
    """Add ``iescore compare`` and ``iescore agree`` to the subcommands ``sub``, with the
    evaluation and input options of ``score_parser`` (the ``score`` subcommand's parser);
    :func:`main_stats` runs them."""
    add_compare_parser(sub, score_parser)
    ap = sub.add_parser(
        "agree",
        help="inter-annotator agreement: F1 and Cohen's kappa per pair, Fleiss' kappa",
        description="Each FILE holds one annotator's tags in its last column, the files aligned line by "
                    "line. Prints, per pair of annotators, the F1 of each as the other's reference and "
                    "their mean, Cohen's kappa on t-units (tokens and separators), and Fleiss' kappa "
                    "over all annotators.",
    )
    ap.add_argument("annotators", nargs="+", metavar="FILE", help="two or more annotation files")
    ap.add_argument("--names", help="comma-separated annotator names (default: the shortest distinct path endings)")
    _copy_options(ap, score_parser)
    ap.set_defaults(stats_main=main_agree)


def main_stats(args: Any) -> int:
    """Run ``iescore compare`` or ``iescore agree``."""
    return args.stats_main(args)


def add_compare_parser(sub: Any, score_parser: Any) -> Any:
    """Add ``iescore compare`` to the subcommands ``sub``, with the evaluation and input
    options of ``score_parser`` (the ``score`` subcommand's parser)."""
    cp = sub.add_parser(
        "compare",
        help="compare systems on one gold file: intervals and paired significance tests",
        description="Score every SYS against GOLD (CoNLL files aligned line by line, as "
                    "`iescore score GOLD SYS`), then give each measure's bootstrap interval over "
                    "documents and the p-value of a paired test of the first measure against the "
                    "baseline (Holm-Bonferroni adjusted); systems whose differences are not "
                    "significant share a group.",
    )
    cp.add_argument("gold", help="the gold CoNLL file")
    cp.add_argument("systems", nargs="+", metavar="SYS", help="system outputs (each file's last column)")
    t = cp.add_argument_group("comparison")
    t.add_argument("--baseline", help="the baseline system's name or path (default: the first SYS)")
    t.add_argument("--paired", choices=TESTS, default="bs",
                   help="bs: paired bootstrap (Koehn 2004); ar: approximate randomization (Riezler & Maxwell 2005)")
    t.add_argument("--resamples", type=int, default=1000, help="resamples (bs) or shuffles (ar); default 1000")
    t.add_argument("--seed", type=int, default=12345)
    t.add_argument("--ci", choices=METHODS, default="percentile", help="interval method")
    t.add_argument("--level", type=float, default=0.95, help="interval level (default 0.95)")
    t.add_argument("--alpha", type=float, default=0.05, help="significance level of the groups (default 0.05)")
    t.add_argument("--measures", default="f1,precision,recall",
                   help="comma-separated measures shown; the first is tested (e.g. macro_f1,f1[PER],ser,ts_f1_macro), "
                        "or 'all'")
    t.add_argument("--names", help="comma-separated system names (default: the shortest distinct path endings)")
    _copy_options(cp, score_parser)
    cp.set_defaults(stats_main=main_compare)
    return cp


def _short_names(paths: Sequence[str]) -> list[str]:
    """The shortest path endings (in components) that tell the paths apart."""
    parts = [p.replace("\\", "/").split("/") for p in paths]
    for k in range(1, max(len(p) for p in parts) + 1):
        names = ["/".join(p[-k:]) for p in parts]
        if len(set(names)) == len(names):
            return names
    return list(paths)


def _config_from(args: Any) -> Any:
    """The Config of the evaluation-model options (named as the Config's fields)."""
    from .config import Config

    return Config(**{name: getattr(args, name) for name in args.config_fields})


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.2f}"


def format_comparison(c: Comparison) -> str:
    """The comparison as a text table: one row per system, each measure with its interval,
    the p-value against the baseline (raw and Holm-adjusted) and the group."""
    head = ["system"] + [f"{m} [{100 * c.level:g}% CI]" for m in c.measures] + ["p", "p (Holm)", "group"]
    rows = []
    for s in c.systems:
        cells = [s["name"] + (" (baseline)" if s["name"] == c.baseline else "")]
        for m in c.measures:
            ci = s[f"{m}_ci"]
            cells.append(f"{_pct(s[m])} [{_pct(ci[0]) if ci else 'n/a'}, {_pct(ci[1]) if ci else 'n/a'}]")
        cells += ["-" if s["p_value"] is None else f"{s['p_value']:.4f}",
                  "-" if s["p_value_holm"] is None else f"{s['p_value_holm']:.4f}" + ("*" if s["significant"] else ""),
                  str(s["group"])]
        rows.append(cells)
    widths = [max(len(r[i]) for r in [head] + rows) for i in range(len(head))]
    lines = ["  ".join(x.ljust(w) if i == 0 else x.rjust(w) for i, (x, w) in enumerate(zip(r, widths)))
             for r in [head] + rows]
    test = "paired bootstrap (Koehn 2004)" if c.test == "bs" else "approximate randomization (Riezler & Maxwell 2005)"
    lines.append(f"p: {test} of {c.measure} against {c.baseline}, {c.resamples} resamples; "
                 f"* = significant at {c.alpha:g} after Holm-Bonferroni correction; "
                 f"a group holds systems not significantly different from its first system")
    lines.append(f"signature: {c.signature}")
    return "\n".join(lines)


def main_compare(args: Any) -> int:
    """Run ``iescore compare`` on parsed ``args`` (exit status 0, or 2 on bad input)."""
    import json
    import sys

    from .io.conll import read_conll
    from .scorer import Scorer

    paths = list(args.systems)
    try:
        names = args.names.split(",") if args.names else _short_names(paths)
        if len(names) != len(paths) or len(set(names)) != len(names):
            raise ConfigError(f"--names needs {len(paths)} distinct names; got {args.names!r}")
        baseline = None
        if args.baseline is not None:
            by_path = dict(zip(paths, names))
            baseline = by_path.get(args.baseline, args.baseline)
            if baseline not in names:
                raise ConfigError(f"unknown --baseline {args.baseline!r}; systems: {choices(names)}")
        cfg = _config_from(args)
        reports = {}
        for name, path in zip(names, paths):
            scorer = Scorer(cfg)
            scorer.add_batch(read_conll(args.gold, path, encoding=args.encoding, documents=args.documents))
            reports[name] = scorer.report()
        first = next(iter(reports.values()))
        wanted = [m for m in args.measures.split(",") if m]
        if wanted == ["all"]:
            wanted = list(measure_names(first))
        c = compare(reports, baseline=baseline, test=args.paired, resamples=args.resamples, seed=args.seed,
                    measure=wanted[0], measures=wanted[1:], method=args.ci, level=args.level, alpha=args.alpha)
    except (ConfigError, InputError) as exc:
        print(f"iescore: error: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(c.to_dict(), indent=2) if args.json else format_comparison(c))
    sys.stdout.flush()
    return 0


# --- cross-validation folds -----------------------------------------------------------

def t_quantile(q: float, df: int) -> float:
    """The ``q`` quantile of Student's t with ``df`` (a positive integer) degrees of freedom,
    from the closed-form distribution function of integer ``df`` (Abramowitz & Stegun
    26.7.3-4) inverted by bisection.

    >>> round(t_quantile(0.975, 1), 4), round(t_quantile(0.975, 4), 4), round(t_quantile(0.025, 9), 4)
    (12.7062, 2.7764, -2.2622)
    """
    if df < 1 or int(df) != df:
        raise ConfigError(f"degrees of freedom must be a positive integer; got {df!r}")
    if not 0 < q < 1:
        raise ConfigError(f"quantile must be in (0, 1); got {q!r}")
    if q < 0.5:
        return -t_quantile(1 - q, df)

    def within(t: float) -> float:  # P(|T| <= t)
        th = math.atan(t / math.sqrt(df))
        c2 = math.cos(th) ** 2
        if df % 2 == 1:
            term, acc = math.cos(th), 0.0
            for k in range(1, (df - 1) // 2 + 1):
                if k > 1:
                    term *= c2 * (2 * k - 2) / (2 * k - 1)
                acc += term
            return 2 / math.pi * (th + math.sin(th) * acc) if df > 1 else 2 * th / math.pi
        term, acc = 1.0, 1.0
        for k in range(1, df // 2):
            term *= c2 * (2 * k - 1) / (2 * k)
            acc += term
        return math.sin(th) * acc

    target, lo, hi = 2 * q - 1, 0.0, 1.0
    while within(hi) < target:
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if within(mid) < target else (lo, mid)
    return (lo + hi) / 2


@dataclass(frozen=True)
class FoldSummary:
    """Measures across folds: per measure the mean, the sample standard deviation, the
    number of folds where it is defined and the Student-t interval of the mean
    ``mean -+ t(level, n-1) sd / sqrt(n)`` (``None`` with fewer than two folds)."""

    signature: str
    folds: int
    level: float
    stats: Mapping[str, Mapping[str, Any]]

    def to_dict(self) -> dict[str, Any]:
        return {"signature": self.signature, "folds": self.folds, "level": self.level,
                "measures": {k: dict(v) for k, v in self.stats.items()}}


def folds(reports: Sequence[Report], *, measures: Sequence[str] | None = None, level: float = 0.95) -> FoldSummary:
    """Aggregate any measure over cross-validation folds (or splits) scored alike.

    ``measures``: names from :func:`measure_names` (every name of any fold by default:
    per label, micro/macro/weighted, slot errors, TS, token accuracy). A fold where a
    measure is undefined (or absent: a label the fold lacks) is left out of its mean.

    Example (F1 2/3 and 1 in two folds: mean 5/6, sd sqrt(2 (1/6)**2 / 1) = sqrt(1/18)):
        >>> import iescore
        >>> a = iescore.score_tags(reference=[["B-PER", "B-LOC"]], prediction=[["B-PER", "O"]])
        >>> b = iescore.score_tags(reference=[["B-PER"]], prediction=[["B-PER"]])
        >>> s = folds([a, b], measures=["f1", "f1[LOC]"]).stats
        >>> s["f1"]["mean"], round(s["f1"]["sd"], 6), s["f1[LOC]"]["n"]
        (0.8333333333333333, 0.235702, 1)
    """
    if not reports:
        raise ConfigError("folds needs at least one report")
    if not 0 < level < 1:
        raise ConfigError(f"level must be in (0, 1); got {level!r}")
    cfg = reports[0].config
    for k, r in enumerate(reports):
        if r.config != cfg:
            raise ConfigError(f"fold #{k} was scored with {r.config.signature()!r}, fold #0 with {cfg.signature()!r}")
    points = [_point(r) for r in reports]
    names = list(measures) if measures is not None else list(dict.fromkeys(k for p in points for k in p))
    known = set().union(*points)
    for m in names:
        if m not in known:
            raise ConfigError(f"unknown measure {m!r}; choices: {choices(sorted(known))}")
    out: dict[str, dict[str, Any]] = {}
    for m in names:
        vals = [p[m] for p in points if p.get(m) is not None]
        n = len(vals)
        mean = sum(vals) / n if n else None
        sd = math.sqrt(sum((v - mean) ** 2 for v in vals) / (n - 1)) if n > 1 and mean is not None else None
        ci = None
        if sd is not None and mean is not None:
            h = t_quantile(1 - (1 - level) / 2, n - 1) * sd / math.sqrt(n)
            ci = [mean - h, mean + h]
        out[m] = {"mean": mean, "sd": sd, "n": n, "ci": ci, "values": [p.get(m) for p in points]}
    sig = cfg.signature() + f"|folds:{len(reports)}|ci:t|level:{level:g}"
    return FoldSummary(signature=sig, folds=len(reports), level=level, stats=out)


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


def agreement(annotations: Mapping[str, Sequence[Sequence[str]]], **options: Any) -> Agreement:
    """Agreement of annotators' tag sequences (name -> one tag sequence per document, the
    same documents and tokens for all), scored with ``options`` as
    :func:`iescore.score_tags` takes them (any rule, counting, scheme...).

    Example (A and B agree on PER; only A tags the LOC):
        >>> a = agreement({"A": [["B-PER", "O", "B-LOC"]], "B": [["B-PER", "O", "O"]]})
        >>> p = a.pairs[0]
        >>> p["f1_ab"], p["f1_ba"], round(p["kappa"], 12)
        (0.6666666666666666, 0.6666666666666666, 0.583333333333)

    (t-units: 3 tokens and 2 separators, A: PER O LOC | O O, B: PER O O | O O: p_o = 4/5,
    p_e = 3/5 * 4/5 + 1/5 * 1/5 = 13/25, kappa = (20 - 13)/(25 - 13) = 7/12.)
    """
    from .scorer import score_tags

    def pair(a: str, b: str) -> Report:
        return score_tags(reference=annotations[a], prediction=annotations[b], **options)

    return _agreement(list(annotations), pair)


def format_agreement(ag: Agreement) -> str:
    """The agreement as text: one line per pair, then Fleiss' kappa."""
    lines = [f"{'a':<20} {'b':<20} {'F1':>7} {'F1(a ref)':>9} {'F1(b ref)':>9} {'kappa':>7}"]
    for p in ag.pairs:
        lines.append(f"{p['a']:<20} {p['b']:<20} {_pct(p['f1']):>7} {_pct(p['f1_ab']):>9} "
                     f"{_pct(p['f1_ba']):>9} {'n/a' if p['kappa'] is None else format(p['kappa'], '.4f'):>7}")
    fk = "n/a" if ag.fleiss_kappa is None else f"{ag.fleiss_kappa:.4f}"
    lines.append(f"Fleiss' kappa ({len(ag.annotators)} annotators, {ag.t_units} t-units: tokens and separators): {fk}")
    lines.append(f"signature: {ag.signature}")
    return "\n".join(lines)


def main_agree(args: Any) -> int:
    """Run ``iescore agree`` on parsed ``args`` (exit status 0, or 2 on bad input)."""
    import json
    import sys

    from .io.conll import read_conll
    from .scorer import Scorer

    paths = list(args.annotators)
    try:
        names = args.names.split(",") if args.names else _short_names(paths)
        if len(names) != len(paths) or len(set(names)) != len(names):
            raise ConfigError(f"--names needs {len(paths)} distinct names; got {args.names!r}")
        path = dict(zip(names, paths))
        cfg = _config_from(args)

        def pair(a: str, b: str) -> Report:
            scorer = Scorer(cfg)
            scorer.add_batch(read_conll(path[a], path[b], encoding=args.encoding, documents=args.documents))
            return scorer.report()

        ag = _agreement(names, pair)
    except (ConfigError, InputError) as exc:
        print(f"iescore: error: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(ag.to_dict(), indent=2) if args.json else format_agreement(ag))
    sys.stdout.flush()
    return 0
