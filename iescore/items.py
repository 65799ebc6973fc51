"""The report stage of the pipeline, its per-item table: what a
[`Report`][iescore.report.Report] holds besides the counts.

[`ItemTable`][iescore.items.ItemTable] lists one side's answers or predictions with their statuses, error
categories and aligned partners (the counts summed over the documents, when the
documents were not kept, are `iescore.scoring.totals.Totals`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["ItemTable"]


@dataclass(frozen=True)
class ItemTable:
    """Per-item outcomes of one side: every answer or prediction with its status.

    ``start``/``end`` are document token offsets (-1 in OBD, where items are
    template fillers); ``text`` is the filler text where known. ``category`` is the
    error category of each item (an index into `iescore.categories.CATEGORIES`)
    and ``partner`` the index of its aligned item on the other side (-1 when unaligned);
    both are ``None`` where there is no alignment (match-best, ``detail="prf"``).
    """

    doc: np.ndarray
    label: np.ndarray
    start: np.ndarray
    end: np.ndarray
    status: np.ndarray
    score: np.ndarray
    text: tuple[str, ...] | None = None
    category: np.ndarray | None = None
    partner: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.doc)
