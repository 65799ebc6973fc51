"""The report stage of the pipeline, its per-item and summed tables: what a
:class:`~iescore.report.Report` holds besides the per-document counts.

:class:`ItemTable` lists one side's answers or predictions with their statuses, error
categories and aligned partners; :class:`Totals` holds the counts summed over the
documents when the documents themselves were not kept.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["ItemTable", "Totals"]


@dataclass(frozen=True)
class ItemTable:
    """Per-item outcomes of one side: every answer or prediction with its status.

    ``start``/``end`` are document token offsets (-1 in OBD, where items are
    template fillers); ``text`` is the filler text where known. ``category`` is the
    error category of each item (an index into :data:`iescore.categories.CATEGORIES`)
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



@dataclass(frozen=True)
class Totals:
    """A report's counts summed over its documents: what its numbers and views need
    when the per-document cells and the items were not kept (a :class:`~iescore.Scorer`
    made with ``totals_only=True``, as the ``iescore score`` command makes it).

    ``label_totals`` is ``(labels, len(fields))`` int64 (every label's counts, t-units
    included); ``token_counts`` conlleval's four token counts summed (or None);
    ``digest`` the reference digest of the documents (README, Definitions: signature).
    """

    n_docs: int
    label_totals: np.ndarray
    token_counts: np.ndarray | None
    digest: int
