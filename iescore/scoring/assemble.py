"""The report stage of the pipeline: batches' parts summed into one :class:`~iescore.report.Report`.

:func:`_assemble` renumbers each part's labels into the report's (sorted) label list,
concatenates the per-document cells, item tables and token counts, and sums the
confusion tables and repair counts; it never recomputes a count, so streaming,
one-shot scoring and merged shards give the same report.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from ..categories import CATEGORIES
from ..cells import CellTable
from ..config import Config
from ..errors import choices, warn
from ..ids import concat_ids
from ..measures import FIELDS
from ..report import ItemTable, Report
from ..ts import TS_FIELDS
from .part import _I64, _PRF_FIELDS, _empty_items, _Part, _scaled_ts
from .tags import REPAIR_SITES

def _warn_label_sets(report: Report) -> None:
    """Warn (:class:`~iescore.errors.IEScoreWarning`) when the reference and the
    prediction each have items of at least two labels but no label in common: the
    columns are likely from different tasks (a chunk column scored against an NE
    column). One label against another (a single wrong entity) is ordinary."""
    n = len(report.labels)
    if not n:
        return
    ref = np.flatnonzero(np.bincount(report.reference.label, minlength=n))
    pred = np.flatnonzero(np.bincount(report.prediction.label, minlength=n))
    if len(ref) >= 2 and len(pred) >= 2 and not np.intersect1d(ref, pred).size:

        def names(ix: np.ndarray) -> str:
            shown = [report.labels[i] for i in ix[:5].tolist()]
            return choices(shown) + (f" and {len(ix) - 5} more" if len(ix) > 5 else "")

        warn(
            f"no predicted label occurs in the reference and no reference label in the prediction "
            f"(reference: {names(ref)}; prediction: {names(pred)}); are the columns from different tasks?"
        )


def _assemble(parts: list[_Part], cfg: Config, notes: Mapping[str, int] | None = None) -> Report:
    labels = sorted({lab for p in parts for lab in p.labels})
    index = {lab: i for i, lab in enumerate(labels)}
    L = len(labels)
    id_parts: list[Sequence[str]] = []
    n_seen = 0
    tables = []
    conf = np.zeros((L + 1, L + 1), dtype=_I64)
    cats: np.ndarray | None = np.zeros((L, len(CATEGORIES)), dtype=_I64)
    n_items = (0, 0)  # reference and prediction items of the parts so far
    refs, preds, toks = [], [], []
    repairs: dict[str, dict[str, int]] = {}
    sites: dict[str, list[str]] = {}
    ts_error = None
    has_tokens = bool(parts) and all(p.token_counts is not None for p in parts)
    fields = FIELDS[:_PRF_FIELDS] if cfg.detail == "prf" else FIELDS
    for p in parts:
        m = np.array([index[lab] for lab in p.labels], dtype=_I64)
        tables.append((p.table, m))
        mm = np.concatenate((m, [L]))
        conf[np.ix_(mm, mm)] += p.confusion
        off = n_seen
        n_seen += len(p.doc_ids)
        id_parts.append(p.doc_ids)
        for tab, dest, other in ((p.ref, refs, n_items[1]), (p.pred, preds, n_items[0])):
            if off == 0 and np.array_equal(m, np.arange(len(m))):
                dest.append(tab)  # already in the report's numbering
            else:  # partners are indices into the other side's items: shifted by its items so far
                partner = None if tab.partner is None else np.where(tab.partner < 0, -1, tab.partner + other)
                dest.append(ItemTable(tab.doc + off, m[tab.label] if len(tab.label) else tab.label,
                                      tab.start, tab.end, tab.status, tab.score, tab.text, tab.category, partner))
        n_items = (n_items[0] + len(p.ref), n_items[1] + len(p.pred))
        if cats is not None and p.categories is not None:
            cats[m] += p.categories
        else:
            cats = None
        if has_tokens:
            assert p.token_counts is not None
            toks.append(p.token_counts)
        for side, rep in p.repairs.items():
            d = repairs.setdefault(side, {})
            for k, v in rep.items():
                d[k] = d.get(k, 0) + v
        for side, where in p.repair_sites.items():  # the first few over the whole input
            sites.setdefault(side, []).extend(where[: max(0, REPAIR_SITES - len(sites.get(side, [])))])
        ts_error = ts_error or p.ts_error
    if notes:
        repairs["adapter"] = dict(sorted(notes.items()))
    ts_cells = None
    if any(p.unit_totals is not None for p in parts):
        blocks = []
        for p in parts:
            m = [index[lab] for lab in p.labels]
            w = np.zeros((len(p.doc_ids), L, len(TS_FIELDS)))
            if p.unit_totals is not None:
                if p.ts_weighted is not None:  # None when the TS model is unavailable (ts_error)
                    w[:, m, :] = p.ts_weighted
                w[:, :, 3] = p.unit_totals[:, :1]
                w[:, :, 7] = p.unit_totals[:, 1:]
            else:  # the unweighted counts, scaled; t-units for every label, also those absent here
                w[:, m, :], totals = _scaled_ts(p, cfg)
                if totals is not None:
                    w[:, :, 3] = totals[:, :1]
                    w[:, :, 7] = totals[:, 1:]
            blocks.append(w)
        ts_cells = np.concatenate(blocks)
    table = CellTable.concat(tables, L) if tables else CellTable.empty(fields, L)

    def cat(tabs: list[ItemTable]) -> ItemTable:
        if not tabs:
            return _empty_items()
        if len(tabs) == 1:
            return tabs[0]
        texts = None if any(t.text is None for t in tabs) else tuple(x for t in tabs for x in (t.text or ()))
        extra = {f: None if any(getattr(t, f) is None for t in tabs) else np.concatenate([getattr(t, f) for t in tabs])
                 for f in ("category", "partner")}
        return ItemTable(
            *(np.concatenate([getattr(t, f) for t in tabs]) for f in ("doc", "label", "start", "end", "status", "score")),
            text=texts, **extra,
        )

    return Report(
        config=cfg,
        labels=tuple(labels),
        doc_ids=concat_ids(id_parts),
        table=table,
        confusion=conf,
        reference=cat(refs),
        prediction=cat(preds),
        token_counts=(toks[0] if len(toks) == 1 else np.concatenate(toks)) if has_tokens else None,
        repairs=repairs,
        ts_error=ts_error,
        ts_cells=ts_cells,
        categories=cats if parts else None,
        repair_sites={side: tuple(w) for side, w in sites.items()},
    )
