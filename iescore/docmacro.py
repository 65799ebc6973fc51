"""The report stage of the pipeline, its document-level part: precision, recall and F1 of
every document (its counts summed over labels) and their document-macro average
(Concepts: averages).

The document-macro average of a measure is the mean of its per-document values over the
documents where it is defined, with their sample standard deviation (``None`` under two
documents), the number of documents that define it and the number left out (precision is
undefined in a document without predictions, recall in one without answers, F1 in one
with neither). F1 is in count form, ``2 TP / (2 TP + FP + FN)``, as everywhere.

Example (three documents: TP/FP/FN 2/0/2, 0/1/0 and 0/0/0, the last one empty):
    >>> m = doc_macro(np.array([2, 0, 0]), np.array([0, 1, 0]), np.array([2, 0, 0]))
    >>> m["precision"]["mean"], m["recall"]["documents"], m["recall"]["left_out"]
    (0.5, 1, 2)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

__all__ = ["DOC_MEASURES", "DocSums", "document_columns", "doc_macro", "exact_sums", "per_document_rows"]

DOC_MEASURES = ("precision", "recall", "f1")


def document_columns(tp: np.ndarray, fp: np.ndarray, fn: np.ndarray) -> dict[str, np.ndarray]:
    """Per document, each of `DOC_MEASURES` as a float array (NaN where undefined)."""
    tp, fp, fn = (np.asarray(a, dtype=np.int64) for a in (tp, fp, fn))
    out = {}
    with np.errstate(divide="ignore", invalid="ignore"):
        for name, num, den in (("precision", tp, tp + fp), ("recall", tp, tp + fn),
                               ("f1", 2 * tp, 2 * tp + fp + fn)):
            out[name] = np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)
    return out


# A value x in [0, 1] of a document (a ratio of int64 counts: 0 or at least 2**-63) is
# num / 2**k with k <= SHIFT, so x * 2**SHIFT and x**2 * 2**(2 * SHIFT) are integers: the
# sums below are exact, whatever the order of the documents, and the sums of shards add
# up to the sum of the whole.
SHIFT = 116


def exact_sums(x: np.ndarray) -> tuple[int, int, int]:
    """``(n, S1, S2)`` of the defined (non-NaN) values of ``x`` (each in [0, 1]):
    ``S1 = sum(x) * 2**SHIFT`` and ``S2 = sum(x**2) * 2**(2 * SHIFT)``, exact integers
    (each distinct value taken once, times its count)."""
    v = np.asarray(x, dtype=np.float64)
    vals, counts = np.unique(v[~np.isnan(v)], return_counts=True)
    s1 = s2 = 0
    for val, c in zip(vals.tolist(), counts.tolist()):
        num, den = val.as_integer_ratio()
        up = SHIFT - (den.bit_length() - 1)
        if not 0.0 <= val <= 1.0 or up < 0:
            raise ValueError(f"exact_sums takes values in [0, 1], each 0 or at least 2**-63; got {val!r}")
        s1 += (c * num) << up
        s2 += (c * num * num) << (2 * up)
    return int(counts.sum()), s1, s2


@dataclass(frozen=True)
class DocSums:
    """What the document-macro average needs, summed over documents, exactly: the number of
    documents and, per measure of `DOC_MEASURES`, ``(n, S1, S2)`` of `exact_sums`. Two
    `DocSums` add up (`plus`) to those of their documents together, so shards of a corpus
    give the numbers of one call."""

    documents: int = 0
    sums: tuple[tuple[int, int, int], ...] = ((0, 0, 0),) * len(DOC_MEASURES)

    @classmethod
    def of(cls, tp: np.ndarray, fp: np.ndarray, fn: np.ndarray) -> DocSums:
        cols = document_columns(tp, fp, fn)
        return cls(len(np.asarray(tp)), tuple(exact_sums(cols[k]) for k in DOC_MEASURES))

    def plus(self, other: DocSums) -> DocSums:
        return DocSums(self.documents + other.documents,
                       tuple((a[0] + b[0], a[1] + b[1], a[2] + b[2]) for a, b in zip(self.sums, other.sums)))

    def dump(self) -> list[str]:
        """The sums as decimal strings (for a scorer's state), read back by `load`."""
        return [str(self.documents), *(str(v) for row in self.sums for v in row)]

    @classmethod
    def load(cls, values: Sequence[str]) -> DocSums:
        nums = [int(v) for v in values]
        if len(nums) != 1 + 3 * len(DOC_MEASURES) or min(nums) < 0:
            raise ValueError(f"document sums: {1 + 3 * len(DOC_MEASURES)} non-negative integers expected, got {values!r:.80}")
        rows = tuple(tuple(nums[1 + 3 * k:4 + 3 * k]) for k in range(len(DOC_MEASURES)))
        return cls(nums[0], rows)  # type: ignore[arg-type]

    def averages(self) -> dict[str, dict[str, Any]]:
        """``{measure: {"mean", "sd", "documents", "left_out"}}``: the mean correctly rounded
        from the exact sum, the sample standard deviation the square root of the correctly
        rounded exact variance (None under two documents)."""
        out = {}
        for name, (n, s1, s2) in zip(DOC_MEASURES, self.sums):
            mean = float(Fraction(s1, n << SHIFT)) if n else None
            sd = math.sqrt(float(Fraction(n * s2 - s1 * s1, (n * (n - 1)) << (2 * SHIFT)))) if n >= 2 else None
            out[name] = {"mean": mean, "sd": sd, "documents": n, "left_out": self.documents - n}
        return out


def doc_macro(tp: np.ndarray, fp: np.ndarray, fn: np.ndarray) -> dict[str, dict[str, Any]]:
    """``{measure: {"mean", "sd", "documents", "left_out"}}`` over the documents whose
    counts (summed over labels) are ``tp``, ``fp``, ``fn`` (`DocSums.averages`)."""
    return DocSums.of(tp, fp, fn).averages()


def per_document_rows(doc_ids: Sequence[str], tp: np.ndarray, fp: np.ndarray,
                      fn: np.ndarray) -> dict[str, dict[str, Any]]:
    """``{doc: {"tp", "fp", "fn", "precision", "recall", "f1"}}`` (None where undefined)."""
    cols = document_columns(tp, fp, fn)
    lists = [np.asarray(a, dtype=np.int64).tolist() for a in (tp, fp, fn)]
    meas = [[None if math.isnan(v) else v for v in cols[k].tolist()] for k in DOC_MEASURES]
    keys = ("tp", "fp", "fn", *DOC_MEASURES)
    return {d: dict(zip(keys, row)) for d, row in zip(doc_ids, zip(*lists, *meas))}
