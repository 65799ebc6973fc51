"""Stage 2 of the pipeline (match), its objects: units, cells and per-unit outcomes.

A *unit* is what one status is given to: a span (AO, match-all, match-best), or a
distinct string of a document and label (`collapse`): a filler of a template
(OBD), or the occurrences of one string in AO's one-per-string mode, which are
matched like OBD fillers, by their strings. Both sides are columnar arrays
(`Units`); every unit belongs to the (document, label) cell of
`cell_index`, the rows of the per-document counts (`iescore.cells`).
`EngineResult` is what counting (`iescore.match.count`) hands on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from ..confusion import Confusion

TP, FP, FN, IGNORED, ALTERNATIVE = range(5)
STATUS_NAMES = ("TP", "FP", "FN", "ignored", "alternative")
SPAN_FIELDS = ("tp", "fp", "fn", "C", "S", "D", "I")
_I64 = np.int64


@dataclass(frozen=True)
class Units:
    """One side's units as columns. ``start``/``end`` are document token offsets
    (half-open) in AO and ``None`` in OBD; ``key`` holds normalised filler token
    tuples where strings matter (OBD, one-per-string); ``score`` is a confidence
    or NaN. ``cell`` is the row of the unit's (document, label) cell in the
    counts (`cell_index`)."""

    doc: np.ndarray
    label: np.ndarray
    start: np.ndarray | None = None
    end: np.ndarray | None = None
    score: np.ndarray | None = None
    key: list[tuple[str, ...]] | None = None
    cell: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.doc)

    def take(self, idx: np.ndarray) -> Units:
        return Units(
            self.doc[idx],
            self.label[idx],
            None if self.start is None else self.start[idx],
            None if self.end is None else self.end[idx],
            None if self.score is None else self.score[idx],
            None if self.key is None else [self.key[i] for i in idx.tolist()],
            None if self.cell is None else self.cell[idx],
        )

    def with_cells(self, cell: np.ndarray) -> Units:
        return Units(self.doc, self.label, self.start, self.end, self.score, self.key, cell)


@dataclass(frozen=True)
class CellIndex:
    """The (document, label) cells that hold a unit of either side, sorted; a unit's
    ``cell`` is its row here. Every count belongs to the cell of some unit, so the
    cells without units are all zeros and are not stored."""

    doc: np.ndarray
    label: np.ndarray

    def __len__(self) -> int:
        return len(self.doc)


def cell_index(R: Units, P: Units, n_docs: int, n_labels: int) -> tuple[CellIndex, Units, Units]:
    """The cells of both sides' units, and the units with their ``cell`` rows.

    A flag per possible cell marks the cells in use, which are then numbered in
    (document, label) order without sorting, when documents x labels is not much
    larger than the units; a sort of the units' keys otherwise.

    >>> R = Units(np.array([0, 2]), np.array([1, 0]))
    >>> P = Units(np.array([0, 0]), np.array([1, 0]))
    >>> ix, R2, P2 = cell_index(R, P, n_docs=3, n_labels=2)
    >>> ix.doc.tolist(), ix.label.tolist(), R2.cell.tolist(), P2.cell.tolist()
    ([0, 0, 2], [0, 1, 0], [1, 2], [1, 0])
    """
    L = max(n_labels, 1)
    size = n_docs * L
    narrow = np.int32 if size < 2**31 else _I64  # keys, cell rows and the index in one width
    kr = np.multiply(R.doc, L, dtype=narrow)
    kr += R.label
    kp = np.multiply(P.doc, L, dtype=narrow)
    kp += P.label
    if size <= 4 * (len(R) + len(P)) + (1 << 22):
        present = np.zeros(size, dtype=bool)
        present[kr] = True
        present[kp] = True
        keys = np.flatnonzero(present)
        del present
        # each present cell's row; only the pages of present cells are ever written
        row = np.empty(size, dtype=narrow)
        row[keys] = np.arange(len(keys), dtype=narrow)
        sr, sp = row.take(kr), row.take(kp)
        del row
        keys = keys.astype(narrow)
    else:
        keys, inv = np.unique(np.concatenate((kr, kp)), return_inverse=True)
        sr, sp = inv[: len(R)].astype(narrow), inv[len(R) :].astype(narrow)
    doc = keys // L
    ix = CellIndex(doc, keys - doc * L)
    return ix, R.with_cells(sr), P.with_cells(sp)


def _per_cell(cell: np.ndarray, n_cells: int, mask: np.ndarray | None = None, weights: np.ndarray | None = None) -> np.ndarray:
    """Count (or sum ``weights``) per cell row, over the units where ``mask`` holds.
    Integer-valued float weights give exact integer-valued float sums (below 2**53)."""
    if mask is not None:
        cell = cell[mask]
        weights = None if weights is None else weights[mask]
    return np.bincount(cell, weights=weights, minlength=n_cells)


def collapse(U: Units) -> tuple[Units, np.ndarray]:
    """Group units with equal (document, label, key): the distinct strings of OBD and
    of one-per-string (Concepts: modes).

    Returns the group units and the group id of every member; groups are numbered
    in member order. A group carries its best member score and, when the units have
    positions, the position of its earliest occurrence (least start, then end), which
    breaks ties between equally good matchings the same way whatever the input order.

    >>> U = Units(np.array([0, 0, 0]), np.array([1, 1, 1]), np.array([5, 0, 2]), np.array([7, 2, 3]),
    ...           key=[("Al", "Roth"), ("Al", "Roth"), ("met",)])
    >>> G, gid = collapse(U)
    >>> gid.tolist(), G.start.tolist(), G.key
    ([0, 0, 1], [0, 2], [('Al', 'Roth'), ('met',)])
    """
    assert U.key is not None
    ids: dict[tuple[int, int, tuple[str, ...]], int] = {}
    gid = np.empty(len(U), dtype=_I64)
    for i, (d, lab, k) in enumerate(zip(U.doc.tolist(), U.label.tolist(), U.key)):
        gid[i] = ids.setdefault((d, lab, k), len(ids))
    if U.start is not None and len(U):
        assert U.end is not None
        order = np.lexsort((U.end, U.start, gid))  # each group's earliest occurrence first
        lead = np.ones(len(U), dtype=bool)
        lead[1:] = gid[order[1:]] != gid[order[:-1]]
        first = order[lead]
    else:
        first = np.full(len(ids), len(U), dtype=_I64)
        np.minimum.at(first, gid, np.arange(len(U), dtype=_I64))
    G = U.take(first)
    if U.score is not None and len(U):
        best = np.full(len(ids), -np.inf)
        np.maximum.at(best, gid, np.where(np.isnan(U.score), -np.inf, U.score))
        G = Units(G.doc, G.label, G.start, G.end, np.where(np.isinf(best), np.nan, best), G.key, G.cell)
    return G, gid


@dataclass(frozen=True)
class EngineResult:
    """Counts and per-unit outcomes of one scoring run."""

    cells: np.ndarray  # (len(CellIndex), len(SPAN_FIELDS)) int32: the counts of each cell row
    ref_status: np.ndarray  # int8 per reference unit
    pred_status: np.ndarray  # int8 per prediction unit
    aligned_r: np.ndarray  # Makhoul alignment: reference unit of each aligned pair
    aligned_p: np.ndarray
    aligned_correct: np.ndarray
    # dense (n_labels + 1, n_labels + 1), last row/column = none; or the same as a Confusion
    confusion: np.ndarray | Confusion
    # per aligned pair, the rule's test alone (`Pairs.fit`): the extent slot of Makhoul's
    # multi-slot tags; None where the pairs do not carry it (match-best, the exact fast path)
    aligned_fit: np.ndarray | None = None


def _canon(U: Units) -> np.ndarray:
    """A canonical order of units (document, position, label, key): ties go to earlier ones."""
    if U.start is not None:
        assert U.end is not None
        return np.lexsort((U.label, U.end, U.start, U.doc))
    assert U.key is not None
    keyrank = np.empty(len(U), dtype=_I64)
    keyrank[sorted(range(len(U)), key=U.key.__getitem__)] = np.arange(len(U))
    return np.lexsort((keyrank, U.label, U.doc))


class _Ranks:
    """Canonical ranks of a side's units, computed on first use."""

    def __init__(self, U: Units) -> None:
        self.U = U
        self._r: np.ndarray | None = None

    def __call__(self) -> np.ndarray:
        if self._r is None:
            n = len(self.U)
            dt = np.int32 if n < 2**31 else _I64
            r = np.empty(n, dtype=dt)
            r[_canon(self.U)] = np.arange(n, dtype=dt)
            self._r = r
        return self._r
