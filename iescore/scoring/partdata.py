"""The scoring stage's record of one batch: `_Part`, the counts and items of a batch of
documents after the middle of the pipeline (units -> match -> count -> cells, in
`iescore.scoring.part`), which `assemble`, `totals`, `state` and the `Scorer` read and
sum without needing the matching stage."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ..cells import CellTable
from ..config import Config
from ..confusion import Confusion
from ..items import ItemTable
from ..measures import FIELDS, TS_FIELDS

_I64 = np.int64
_PRF_FIELDS = 3  # tp, fp, fn
REPAIR_SITES = 5  # the repairs (or discarded chunks) located per side and batch
_CELL = np.int32  # per-document counts fit in 32 bits; sums are taken in 64 bits


@dataclass
class _Part:
    """The counts and items of one batch, with its own label list."""

    labels: list[str]
    doc_ids: Sequence[str]
    table: CellTable
    confusion: Confusion
    ref: ItemTable
    pred: ItemTable
    token_counts: np.ndarray | None
    repairs: dict[str, dict[str, int]] = field(default_factory=dict)
    ts_error: str | None = None
    ts_weighted: np.ndarray | None = None  # float TS counts when documents carry per-t-unit weights
    unit_totals: np.ndarray | None = None  # per document: total token weight, total separator weight
    unit_digest: int | None = None  # sum of a hash of each document's id and per-t-unit weights
    categories: np.ndarray | None = None  # (labels, 6) error-category totals (iescore.categories)
    repair_sites: dict[str, list[str]] = field(default_factory=dict)  # side -> where the first repairs are
    # (labels, 2) per answer label: aligned pairs of equal labels, aligned pairs whose extents
    # fit the rule (Makhoul's multi-slot tags, iescore.multislot); None where not counted
    multislot: np.ndarray | None = None


def _empty_items() -> ItemTable:
    z = np.zeros(0, dtype=_I64)
    return ItemTable(z, z, z, z, np.zeros(0, np.int8), np.zeros(0), ())
_SPAN = len(FIELDS) - len(TS_FIELDS)  # the span and slot counts come first in a cell table's columns


def _scaled_ts(part: _Part, cfg: Config) -> tuple[np.ndarray, np.ndarray | None]:
    """A part's TS counts weighted by the scalar t-unit weights: per document and label
    of the part (``TS_FIELDS`` order, float), and per document its total token and
    separator weight (None without token counts)."""
    scale = np.array([cfg.token_weight] * 4 + [cfg.separator_weight] * 4)
    counts = part.table.dense()[:, :, _SPAN:].astype(float) * scale
    if part.table.doc_tokens is None:
        return counts, None
    tok = part.table.doc_tokens.astype(float)
    return counts, np.stack([tok * cfg.token_weight, np.maximum(tok - 1, 0) * cfg.separator_weight], axis=1)
