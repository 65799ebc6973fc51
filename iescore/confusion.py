"""Stage 3 of the pipeline (count), its confusion table: reference label x predicted
label counts of Makhoul's alignment, stored only for the pairs of labels that occur.

A dense ``(labels + 1) x (labels + 1)`` table is mostly zeros (an answer is aligned
with a prediction of its own label or of a few others) and does not fit in memory
for large label sets (50,000 labels: 20 GB). `Confusion` keeps one row per
pair that occurs, sorted; label number ``n_labels`` is "none" (deletions in its
column, insertions in its row). Every view of it (`Confusion.table`, the row
and column sums, `Confusion.dense`) gives the numbers the dense table gives.

Example (labels A = 0, B = 1; none = 2): an A answer aligned with a B prediction,
an A answer aligned with an A prediction, an inserted B:
    >>> c = Confusion.of_pairs(np.array([0, 0, 2]), np.array([1, 0, 1]), n_labels=2)
    >>> c.table(["A", "B"])
    {'A': {'A': 1, 'B': 1}, 'B': {}, 'none': {'B': 1}}
    >>> c.row_sums().tolist(), c.col_sums().tolist()
    ([2, 0, 1], [1, 2, 0])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["Confusion"]

_I64 = np.int64


@dataclass(frozen=True)
class Confusion:
    """The pairs ``(ref[k], pred[k])`` that occur, with their counts ``count[k] > 0``,
    sorted by reference then predicted label; ``n_labels`` stands for "none"."""

    ref: np.ndarray
    pred: np.ndarray
    count: np.ndarray
    n_labels: int

    @classmethod
    def of_pairs(cls, ref: np.ndarray, pred: np.ndarray, n_labels: int,
                 count: np.ndarray | None = None) -> Confusion:
        """The table of the pairs ``(ref[k], pred[k])``, each counted once (or ``count[k]``
        times); equal pairs are summed and pairs of count 0 left out."""
        width = n_labels + 1
        key = np.asarray(ref, dtype=_I64) * width + np.asarray(pred, dtype=_I64)
        weights = np.ones(len(key), dtype=_I64) if count is None else np.asarray(count, dtype=_I64)
        if len(key) == 0:
            z = np.zeros(0, dtype=_I64)
            return cls(z, z, z, n_labels)
        order = np.argsort(key, kind="stable")
        key, weights = key[order], weights[order]
        starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
        sums = np.add.reduceat(weights, starts)
        keep = sums != 0
        key, sums = key[starts][keep], sums[keep]
        return cls(key // width, key % width, sums, n_labels)

    @classmethod
    def of_dense(cls, table: np.ndarray) -> Confusion:
        """The pairs of a dense ``(n + 1, n + 1)`` table (last row and column: none)."""
        r, p = np.nonzero(table)
        return cls.of_pairs(r, p, table.shape[0] - 1, table[r, p])

    @classmethod
    def empty(cls, n_labels: int) -> Confusion:
        return cls.of_pairs(np.zeros(0, _I64), np.zeros(0, _I64), n_labels)

    @classmethod
    def join(cls, tables: Sequence[tuple[Confusion, np.ndarray]], n_labels: int) -> Confusion:
        """The sum of tables, each with its label map into the joint labels
        (``label_map[own label] = joint label``; none stays none)."""
        refs, preds, counts = [], [], []
        for t, m in tables:
            full = np.append(np.asarray(m, dtype=_I64), n_labels)  # own none -> joint none
            refs.append(full[t.ref])
            preds.append(full[t.pred])
            counts.append(t.count)
        if not refs:
            return cls.empty(n_labels)
        return cls.of_pairs(np.concatenate(refs), np.concatenate(preds), n_labels, np.concatenate(counts))

    def __len__(self) -> int:
        return len(self.count)

    def row_sums(self) -> np.ndarray:
        """``(n_labels + 1,)``: per reference label (then none), its pairs summed."""
        return np.bincount(self.ref, weights=self.count, minlength=self.n_labels + 1).astype(_I64)

    def col_sums(self) -> np.ndarray:
        """``(n_labels + 1,)``: per predicted label (then none), its pairs summed."""
        return np.bincount(self.pred, weights=self.count, minlength=self.n_labels + 1).astype(_I64)

    def dense(self) -> np.ndarray:
        """The dense ``(n_labels + 1, n_labels + 1)`` int64 table (zeros included)."""
        out = np.zeros((self.n_labels + 1, self.n_labels + 1), dtype=_I64)
        out[self.ref, self.pred] = self.count
        return out

    def table(self, names: Sequence[str]) -> dict[str, dict[str, int]]:
        """Reference label -> predicted label -> count, every label (then ``"none"``)
        a key in label order, each inner dict holding the non-zero pairs in label order."""
        full = list(names) + ["none"]
        out: dict[str, dict[str, int]] = {a: {} for a in full}
        for r, p, n in zip(self.ref.tolist(), self.pred.tolist(), self.count.tolist()):
            out[full[r]][full[p]] = n
        return out
