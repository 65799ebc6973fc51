"""The report stage of the pipeline: the per-label part of a report's summary, held as
arrays over labels (Concepts: measures, averages, token & separator model,
error categories).

Every per-label measure is computed once, element-wise over labels
([`iescore.measures.span_arrays`][iescore.measures.span_arrays] and its kin: NaN where undefined), and the
averages are taken from those arrays. The per-label dicts that ``to_dict()`` shows are
built only when a view asks for them (`LabelSummary.entries`,
`LabelSummary.ts`, `LabelSummary.categories`), so a report of 50,000
labels costs no per-label Python objects until then.

Sums of floats are Python's (``sum`` of a list, left to right), so every mean is the
same float as the mean of the per-label values.
"""

from __future__ import annotations

import functools
import pickle
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .categories import CATEGORIES, MUC_CODES, MUC_GROUPS
from .measures import (
    BINARY_KEYS,
    TS_FIELDS,
    Counts,
    f_beta,
    jaccard,
    makhoul_e,
    muc_err,
    precision,
    recall,
    slot_arrays,
    slot_error_rate,
    span_arrays,
    ts_arrays,
)
from .nogc import no_cycles_collected

__all__ = ["LabelSummary", "ENTRY_KEYS", "MEASURED", "pylist", "records", "entry", "averages"]

ENTRY_KEYS = ("precision", "recall", "f1", "f_beta", "jaccard", "tp", "fp", "fn", "support", "predicted",
              "ser", "err", "e")
MEASURED = ("precision", "recall", "f1", "f_beta", "jaccard")
TS_PARTS = ("ts", "tokens", "separators")


def pylist(a: np.ndarray) -> list[Any]:
    """The values as Python numbers, ``None`` for NaN (an undefined measure)."""
    out: list[Any] = a.tolist()
    if a.dtype.kind == "f" and np.isnan(a).any():
        out = [None if x != x else x for x in out]
    return out


@functools.cache
def _template(keys: tuple[str, ...]) -> dict[str, Any]:
    """A dict of ``keys`` (values None) whose copies share its key table: in CPython an
    instance's ``__dict__`` is such a dict (key-sharing dictionaries, PEP 412), so a copy
    allocates only its values, a third of an ordinary 12-key dict's memory, and is built
    and freed faster. Its copies are plain dicts, as any other (in any Python)."""
    row = type("_Row", (), {})()
    for k in keys:
        setattr(row, k, None)
    out: dict[str, Any] = row.__dict__
    return out


def records(keys: Sequence[str], columns: Sequence[list[Any]]) -> list[dict[str, Any]]:
    """One dict per row: ``{keys[0]: columns[0][i], ...}`` (copies of `_template`).

    >>> records(("a", "b"), [[1, 2], [None, 4.5]])
    [{'a': 1, 'b': None}, {'a': 2, 'b': 4.5}]
    """
    if not all(isinstance(k, str) for k in keys):
        raise TypeError("records: keys must be strings")
    template = _template(tuple(keys))
    out = []
    for row in zip(*columns):
        d = template.copy()
        d.update(zip(keys, row))
        out.append(d)
    return out


def distinct_rows(arrays: Sequence[np.ndarray]) -> tuple[list[np.ndarray], list[int]]:
    """The distinct rows of side-by-side count arrays (compared bit for bit, so ``-0.0``
    and ``0.0`` stay apart), one array per input, and each element's row number.

    Measures computed on the distinct rows and spread back by the row numbers are the
    same values, and labels of the same counts then share one Python float per value.

    >>> cols, at = distinct_rows([np.array([1, 2, 1]), np.array([0.5, 0.0, 0.5])])
    >>> [c.tolist() for c in cols], at
    ([[1, 2], [0.5, 0.0]], [0, 1, 0])
    """
    n = len(arrays[0])
    if n == 0:
        return [np.asarray(a) for a in arrays], []
    bits = np.stack([np.ascontiguousarray(a, dtype=np.float64).view(np.int64) if a.dtype.kind == "f"
                     else np.asarray(a, dtype=np.int64) for a in arrays], axis=1)
    order = np.lexsort(bits.T[::-1])
    rows = bits[order]
    first = np.ones(n, dtype=bool)
    first[1:] = (rows[1:] != rows[:-1]).any(axis=1)
    at = np.empty(n, dtype=np.int64)
    at[order] = np.cumsum(first) - 1
    u = rows[first]
    out = []
    for j, a in enumerate(arrays):
        col = np.ascontiguousarray(u[:, j])
        out.append(col.view(np.float64) if a.dtype.kind == "f" else col.astype(a.dtype, copy=False))
    return out, at.tolist()


def copies(protos: list[dict[str, Any]], at: list[int]) -> list[dict[str, Any]]:
    """``[protos[i].copy() for i in at]``: a dict of its own per element, the values shared.
    ``at`` uses every proto (as `distinct_rows`' row numbers do), so with as many
    protos as elements each is used once, and is given as it is."""
    if len(protos) == len(at):  # every row distinct: ``at`` is a permutation
        return list(map(protos.__getitem__, at))
    return list(map(dict.copy, map(protos.__getitem__, at)))


def mean(a: np.ndarray) -> float | None:
    """The mean of the defined (non-NaN) values, summed as Python sums a list; None if none is."""
    vals = a[~np.isnan(a)].tolist()
    return sum(vals) / len(vals) if vals else None


@dataclass(frozen=True)
class LabelSummary:
    """Per-label counts (one element per label, labels in report order), and the measures
    computed from them as arrays on each call (nothing but the counts is kept).

    ``counts`` maps the [`Counts`][iescore.measures.Counts] fields ``tp, fp, fn`` (and
    ``C, S, D, I`` under ``detail="full"``) to arrays; ``support``/``predicted`` are the
    reference and prediction items counted per label; ``ts_counts`` the
    `TS_FIELDS` columns (or None: no token & separator model), to be
    weighted by ``ts_weights``; ``category_rows`` the ``(labels, 6)`` error-category
    totals (or None).
    """

    labels: tuple[str, ...]
    counts: Mapping[str, np.ndarray]
    support: np.ndarray
    predicted: np.ndarray
    beta: float
    alpha: float
    full: bool
    ts_counts: Mapping[str, np.ndarray] | None
    ts_weights: tuple[float, float]
    category_rows: np.ndarray | None

    def columns(self) -> dict[str, np.ndarray]:
        """Every `ENTRY_KEYS` key (``ser``/``err``/``e`` only under ``detail="full"``)
        to an array over labels (measures: float64, NaN where undefined)."""
        c = self.counts
        tp, fp, fn = c["tp"], c["fp"], c["fn"]
        cols = span_arrays(tp, fp, fn, self.beta)
        cols.update(tp=tp, fp=fp, fn=fn, support=self.support, predicted=self.predicted)
        if self.full:
            cols.update(slot_arrays(c["C"], c["S"], c["D"], c["I"], self.alpha))
        return cols

    def ts_columns(self) -> dict[str, dict[str, np.ndarray]]:
        """The token & separator measures per part (``ts``, ``tokens``, ``separators``) and key."""
        assert self.ts_counts is not None
        wt, ws = self.ts_weights
        return ts_arrays(self.ts_counts, beta=self.beta, token_weight=wt, separator_weight=ws)

    # --- averages (of the arrays of columns()) -----------------------------------------
    def weighted(self, cols: Mapping[str, np.ndarray], key: str) -> float | None:
        """Per-label values weighted by support, over labels of positive weight where defined."""
        w = self.support
        v = cols[key]
        keep = (w != 0) & ~np.isnan(v)
        den = int(w[keep].sum())
        if den == 0:
            return None
        products: list[float] = (w[keep].astype(np.float64) * v[keep]).tolist()
        return sum(products) / den

    def left_out(self, cols: Mapping[str, np.ndarray], weighted: bool = False) -> dict[str, list[str]]:
        """Per measure, the labels whose measure is undefined (of positive weight if ``weighted``)."""
        out = {}
        for k in MEASURED:
            bad = np.isnan(cols[k])
            if weighted:
                bad &= self.support > 0
            out[k] = [self.labels[i] for i in np.flatnonzero(bad).tolist()]
        return out

    def zero_weight_labels(self) -> list[str]:
        return [self.labels[i] for i in np.flatnonzero(self.support == 0).tolist()]

    # --- the per-label dicts (built on each call) ------------------------------------
    # The measures are computed on the distinct count rows (distinct_rows), one dict per
    # distinct row, copied for every label of that row: with many labels most share their
    # counts, and a dict's copy costs a fraction of building it (the values are shared).
    def entries(self) -> dict[str, dict[str, Any]]:
        """``{label: {precision, recall, f1, f_beta, jaccard, tp, fp, fn, support, predicted, ser, err, e}}``."""
        names = ("tp", "fp", "fn", "C", "S", "D", "I")
        cols_in, at = distinct_rows([self.counts[f] for f in names] + [self.support, self.predicted])
        few = LabelSummary(self.labels, dict(zip(names, cols_in)), cols_in[-2], cols_in[-1], self.beta,
                           self.alpha, self.full, None, self.ts_weights, None)
        cols = few.columns()
        none = [None] * len(cols_in[0])
        protos = records(ENTRY_KEYS, [pylist(cols[k]) if k in cols else none for k in ENTRY_KEYS])
        return dict(zip(self.labels, copies(protos, at)))

    def ts(self) -> dict[str, dict[str, dict[str, Any]]]:
        """``{label: {"ts": {...}, "tokens": {...}, "separators": {...}}}``."""
        assert self.ts_counts is not None

        cols_in, at = distinct_rows([self.ts_counts[f] for f in TS_FIELDS])
        few = LabelSummary(self.labels, self.counts, self.support, self.predicted, self.beta, self.alpha,
                           self.full, dict(zip(TS_FIELDS, cols_in)), self.ts_weights, None)
        tsc = few.ts_columns()
        parts = [copies(records(BINARY_KEYS, [pylist(tsc[p][k]) for k in BINARY_KEYS]), at) for p in TS_PARTS]
        return {lab: {"ts": a, "tokens": b, "separators": c} for lab, a, b, c in zip(self.labels, *parts)}

    def category_columns(self) -> dict[str, np.ndarray] | None:
        """Each error category, then each MUC/SemEval code (the sum of its categories), to
        its count per label (int64); None where not computed."""
        if self.category_rows is None:
            return None
        rows = np.asarray(self.category_rows, dtype=np.int64)
        cols = {c: rows[:, j] for j, c in enumerate(CATEGORIES)}
        for code, group in zip(MUC_CODES, MUC_GROUPS):
            cols[code] = rows[:, list(group)].sum(axis=1)
        return cols

    def categories(self) -> dict[str, dict[str, int]] | None:
        """``{label: {category: n, ..., COR/INC/PAR/MIS/SPU: n}}`` (None where not computed)."""
        cols = self.category_columns()
        if cols is None:
            return None
        distinct, at = distinct_rows(list(cols.values()))
        return dict(zip(self.labels, copies(records(list(cols), [c.tolist() for c in distinct]), at)))


def entry(c: Counts, n_ref: int, n_pred: int, beta: float, alpha: float, full: bool) -> dict[str, Any]:
    """The measures of one sum of counts in `ENTRY_KEYS` order (``overall``): the same
    values as a label's entry of `LabelSummary.entries`; ``ser``/``err``/``e`` are
    None unless ``full`` (``detail="full"``)."""
    return {
        "precision": precision(c),
        "recall": recall(c),
        "f1": f_beta(c.tp, c.fp, c.fn, 1.0),
        "f_beta": f_beta(c.tp, c.fp, c.fn, beta),
        "jaccard": jaccard(c),
        "tp": c.tp,
        "fp": c.fp,
        "fn": c.fn,
        "support": n_ref,
        "predicted": n_pred,
        "ser": slot_error_rate(c) if full else None,
        "err": muc_err(c) if full else None,
        "e": makhoul_e(c, alpha) if full else None,
    }


def _f1(p: float | None, r: float | None) -> float | None:
    """F1 of a precision and a recall (0 when both are 0; None when either is)."""
    if p is None or r is None:
        return None
    den = p + r
    return 0.0 if den == 0 else 2 * p * r / den


def averages(overall: Mapping[str, Any], per: LabelSummary, cols: Mapping[str, np.ndarray]) -> dict[str, Any]:
    """The micro (``overall``'s values), macro and weighted averages of every `MEASURED`
    key, from the per-label arrays ``cols`` of ``per`` (`LabelSummary.columns`)."""
    macro = {k: mean(cols[k]) for k in MEASURED}
    return {
        "micro": {k: overall[k] for k in MEASURED},
        "macro": {**macro, "f1_of_macro_pr": _f1(macro["precision"], macro["recall"]),
                  "left_out": per.left_out(cols)},
        "weighted": {
            **{k: per.weighted(cols, k) for k in MEASURED},
            "zero_weight_labels": per.zero_weight_labels(),
            "left_out": per.left_out(cols, weighted=True),
        },
    }


def copied(tree: Any) -> Any:
    """A fresh copy of a tree of plain values (a pickle round trip copies it as the JSON
    one would, several times faster)."""
    return pickle.loads(pickle.dumps(tree, protocol=pickle.HIGHEST_PROTOCOL))


def full_summary(light: Mapping[str, Any], per: LabelSummary, confusion: Callable[[], dict[str, dict[str, int]]],
                 only: str | None = None, fills: Mapping[str, Callable[[Any], Any]] | None = None) -> Any:
    """The report's summary ``light`` (its per-label parts left out) completed by the
    per-label dicts of ``per``, the ``confusion`` table and ``fills`` (key -> a function of
    the light value giving the full one), as a fresh tree; or its part ``only``."""
    with no_cycles_collected():
        s = copied(dict(light) if only is None else {only: light[only]})
        if "per_label" in s:
            s["per_label"] = per.entries()
        if s.get("ts") is not None:
            s["ts"]["per_label"] = per.ts()
        if "confusion" in s:
            s["confusion"] = confusion()
        if s.get("categories") is not None:
            s["categories"]["per_label"] = per.categories()
        for key, fill in (fills or {}).items():
            if key in s:
                s[key] = fill(s[key])
    return s if only is None else s[only]
