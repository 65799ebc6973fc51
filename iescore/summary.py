"""The report stage of the pipeline: the per-label part of a report's summary, held as
arrays over labels (README, Definitions: measures, averages, token & separator model,
error categories).

Every per-label measure is computed once, element-wise over labels
(:func:`iescore.measures.span_arrays` and its kin: NaN where undefined), and the
averages are taken from those arrays. The per-label dicts that ``to_dict()`` shows are
built only when a view asks for them (:meth:`LabelSummary.entries`,
:meth:`LabelSummary.ts`, :meth:`LabelSummary.categories`), so a report of 50,000
labels costs no per-label Python objects until then.

Sums of floats are Python's (``sum`` of a list, left to right), so every mean is the
same float as the mean of the per-label values.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .categories import CATEGORIES, MUC_CODES, MUC_OF
from .measures import BINARY_KEYS, slot_arrays, span_arrays, ts_arrays

__all__ = ["LabelSummary", "ENTRY_KEYS", "MEASURED", "pylist", "records"]

ENTRY_KEYS = ("precision", "recall", "f1", "f_beta", "tp", "fp", "fn", "support", "predicted", "ser", "err", "e")
MEASURED = ("precision", "recall", "f1", "f_beta")
TS_PARTS = ("ts", "tokens", "separators")


def pylist(a: np.ndarray) -> list[Any]:
    """The values as Python numbers, ``None`` for NaN (an undefined measure)."""
    out = a.tolist()
    if a.dtype.kind == "f" and np.isnan(a).any():
        out = [None if x != x else x for x in out]
    return out


@functools.lru_cache(maxsize=None)
def _record_maker(keys: tuple[str, ...]) -> Callable[[Sequence[list[Any]]], list[dict[str, Any]]]:
    # a comprehension over a dict display: twice as fast as dict(zip(keys, row)) per row
    names = [f"v{i}" for i in range(len(keys))]
    display = ", ".join(f"{k!r}: {v}" for k, v in zip(keys, names))
    code = f"lambda columns: [{{{display}}} for {', '.join(names)}, in zip(*columns)]"
    made: Callable[[Sequence[list[Any]]], list[dict[str, Any]]] = eval(code, {"zip": zip})  # noqa: S307 (fixed keys)
    return made


def records(keys: Sequence[str], columns: Sequence[list[Any]]) -> list[dict[str, Any]]:
    """One dict per row: ``{keys[0]: columns[0][i], ...}``.

    >>> records(("a", "b"), [[1, 2], [None, 4.5]])
    [{'a': 1, 'b': None}, {'a': 2, 'b': 4.5}]
    """
    if not all(isinstance(k, str) for k in keys):
        raise TypeError("records: keys must be strings")
    return _record_maker(tuple(keys))(columns)


def mean(a: np.ndarray) -> float | None:
    """The mean of the defined (non-NaN) values, summed as Python sums a list; None if none is."""
    vals = a[~np.isnan(a)].tolist()
    return sum(vals) / len(vals) if vals else None


@dataclass(frozen=True)
class LabelSummary:
    """Per-label counts and measures as arrays (one element per label, labels in report order).

    ``columns`` maps every :data:`ENTRY_KEYS` key to an array (measures: float64, NaN
    where undefined; ``ser``/``err``/``e`` are absent under ``detail="prf"``);
    ``ts_columns`` the token & separator measures per part and key (or None);
    ``category_rows`` the ``(labels, 6)`` error-category totals (or None).
    """

    labels: tuple[str, ...]
    columns: Mapping[str, np.ndarray]
    ts_columns: Mapping[str, Mapping[str, np.ndarray]] | None
    category_rows: np.ndarray | None

    @classmethod
    def of(cls, labels: tuple[str, ...], counts: Mapping[str, np.ndarray], support: np.ndarray,
           predicted: np.ndarray, *, beta: float, alpha: float, full: bool,
           ts_counts: Mapping[str, np.ndarray] | None, ts_weights: tuple[float, float],
           categories: np.ndarray | None) -> LabelSummary:
        """``counts`` maps the :class:`~iescore.measures.Counts` fields to per-label arrays."""
        tp, fp, fn = counts["tp"], counts["fp"], counts["fn"]
        cols: dict[str, np.ndarray] = dict(span_arrays(tp, fp, fn, beta))
        cols.update(tp=tp, fp=fp, fn=fn, support=np.asarray(support, dtype=np.int64),
                    predicted=np.asarray(predicted, dtype=np.int64))
        if full:
            cols.update(slot_arrays(counts["C"], counts["S"], counts["D"], counts["I"], alpha))
        ts = None
        if ts_counts is not None:
            ts = ts_arrays(ts_counts, beta=beta, token_weight=ts_weights[0], separator_weight=ts_weights[1])
        return cls(labels, cols, ts, categories)

    # --- averages ------------------------------------------------------------------
    def macro(self, key: str) -> float | None:
        return mean(self.columns[key])

    def ts_macro(self, part: str, key: str) -> float | None:
        assert self.ts_columns is not None
        return mean(self.ts_columns[part][key])

    def weighted(self, key: str) -> float | None:
        """Per-label values weighted by support, over labels of positive weight where defined."""
        w = self.columns["support"]
        v = self.columns[key]
        keep = (w != 0) & ~np.isnan(v)
        den = int(w[keep].sum())
        if den == 0:
            return None
        return sum((w[keep].astype(np.float64) * v[keep]).tolist()) / den

    def left_out(self, weighted: bool = False) -> dict[str, list[str]]:
        """Per measure, the labels whose measure is undefined (of positive weight if ``weighted``)."""
        w = self.columns["support"]
        out = {}
        for k in MEASURED:
            bad = np.isnan(self.columns[k])
            if weighted:
                bad &= w > 0
            out[k] = [self.labels[i] for i in np.flatnonzero(bad).tolist()]
        return out

    def zero_weight_labels(self) -> list[str]:
        return [self.labels[i] for i in np.flatnonzero(self.columns["support"] == 0).tolist()]

    # --- the per-label dicts (built on each call) ------------------------------------
    def entries(self) -> dict[str, dict[str, Any]]:
        """``{label: {precision, recall, f1, f_beta, tp, fp, fn, support, predicted, ser, err, e}}``."""
        n = len(self.labels)
        none = [None] * n
        cols = [pylist(self.columns[k]) if k in self.columns else none for k in ENTRY_KEYS]
        return dict(zip(self.labels, records(ENTRY_KEYS, cols)))

    def ts(self) -> dict[str, dict[str, dict[str, Any]]]:
        """``{label: {"ts": {...}, "tokens": {...}, "separators": {...}}}``."""
        assert self.ts_columns is not None
        parts = [records(BINARY_KEYS, [pylist(self.ts_columns[p][k]) for k in BINARY_KEYS]) for p in TS_PARTS]
        return {lab: {"ts": a, "tokens": b, "separators": c} for lab, a, b, c in zip(self.labels, *parts)}

    def categories(self) -> dict[str, dict[str, int]] | None:
        """``{label: {category: n, ..., COR/INC/PAR/MIS/SPU: n}}`` (None where not computed)."""
        if self.category_rows is None:
            return None
        rows = self.category_rows
        cols = [rows[:, j] for j in range(len(CATEGORIES))]
        for code in MUC_CODES:
            cols.append(sum((rows[:, j] for j, c in enumerate(MUC_OF) if c == code), np.zeros(len(rows), dtype=np.int64)))
        keys = list(CATEGORIES) + list(MUC_CODES)
        return dict(zip(self.labels, records(keys, [np.asarray(c, dtype=np.int64).tolist() for c in cols])))
