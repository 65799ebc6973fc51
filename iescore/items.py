"""The report stage of the pipeline, its per-item table: what a
[`Report`][iescore.report.Report] holds besides the counts.

[`ItemTable`][iescore.items.ItemTable] lists one side's answers or predictions with their statuses, error
categories and aligned partners (the counts summed over the documents, when the
documents were not kept, are `iescore.scoring.totals.Totals`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["ItemTable", "Arguments"]


@dataclass(frozen=True)
class Arguments:
    """The arguments of relation items, one row per item: the head's and the tail's label,
    document token offsets ``[start, end)`` (-1 for relations between strings, which have
    no positions) and text (where known; labels are ``""`` where there are none).

    >>> a = Arguments(("PER",), np.array([0]), np.array([2]), ("ORG",), np.array([5]), np.array([6]),
    ...               ("Al Roth",), ("IBM",))
    >>> a.row(0)["tail"]
    {'label': 'ORG', 'start': 5, 'end': 6, 'text': 'IBM'}
    """

    head_label: tuple[str, ...]
    head_start: np.ndarray
    head_end: np.ndarray
    tail_label: tuple[str, ...]
    tail_start: np.ndarray
    tail_end: np.ndarray
    head_text: tuple[str, ...] | None = None
    tail_text: tuple[str, ...] | None = None

    def __len__(self) -> int:
        return len(self.head_start)

    def row(self, k: int) -> dict[str, dict[str, Any]]:
        """Item ``k``'s ``{"head": {...}, "tail": {...}}``, each ``{"label", "start", "end", "text"}``."""
        def arg(label: tuple[str, ...], start: np.ndarray, end: np.ndarray, text: tuple[str, ...] | None) -> dict[str, Any]:
            return {"label": label[k] or None, "start": None if start[k] < 0 else int(start[k]),
                    "end": None if end[k] < 0 else int(end[k]), "text": None if text is None else text[k]}

        return {"head": arg(self.head_label, self.head_start, self.head_end, self.head_text),
                "tail": arg(self.tail_label, self.tail_start, self.tail_end, self.tail_text)}

    @classmethod
    def concat(cls, parts: Sequence[Arguments]) -> Arguments:
        """The rows of ``parts`` one after the other."""
        def texts(name: str) -> tuple[str, ...] | None:
            cols = [getattr(p, name) for p in parts]
            return None if any(c is None for c in cols) else tuple(x for c in cols for x in c)

        def col(name: str) -> np.ndarray:
            return np.concatenate([getattr(p, name) for p in parts]) if parts else np.zeros(0, dtype=np.int64)

        return cls(tuple(x for p in parts for x in p.head_label), col("head_start"), col("head_end"),
                   tuple(x for p in parts for x in p.tail_label), col("tail_start"), col("tail_end"),
                   texts("head_text"), texts("tail_text"))


@dataclass(frozen=True)
class ItemTable:
    """Per-item outcomes of one side: every answer or prediction with its status.

    ``start``/``end`` are document token offsets (-1 in OBD, where items are
    template fillers); ``text`` is the filler text where known. ``category`` is the
    error category of each item (an index into `iescore.categories.CATEGORIES`)
    and ``partner`` the index of its aligned item on the other side (-1 when unaligned);
    both are ``None`` where there is no alignment (match-best, ``detail="prf"``).
    ``args`` holds the arguments of relation items (``task="relations"``) and ``ids`` the
    knowledge-base id of link items (``task="links"``); both are ``None`` for entities.
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
    args: Arguments | None = None
    ids: tuple[str, ...] | None = None

    def __len__(self) -> int:
        return len(self.doc)

    def extra(self, k: int) -> dict[str, Any]:
        """Item ``k``'s relation arguments (``head``, ``tail``) or link ``id``; ``{}`` for an entity."""
        out: dict[str, Any] = {} if self.args is None else self.args.row(k)
        if self.ids is not None:
            out["id"] = self.ids[k]
        return out
