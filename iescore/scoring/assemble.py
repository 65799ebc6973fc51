"""The report stage of the pipeline: batches' parts summed into one [`Report`][iescore.report.Report].

`_assemble` renumbers each part's labels into the report's (sorted) label list,
concatenates the per-document cells, item tables and token counts, and sums the
confusion tables, repair counts, error categories and multi-slot counts; it never recomputes a count, so streaming,
one-shot scoring and merged shards give the same report. A scorer that keeps counts
only sums its parts into `Totals` instead, whose report
has the same numbers.
"""

from __future__ import annotations

import operator
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import replace
from itertools import islice

import numpy as np

from ..categories import CATEGORIES
from ..cells import CellTable
from ..config import Config, warn_unknown_types
from ..confusion import Confusion
from ..errors import choices, warn
from ..ids import concat_ids
from ..items import Arguments, ItemTable
from ..measures import FIELDS, TS_FIELDS
from ..report import Report
from .partdata import _I64, _PRF_FIELDS, REPAIR_SITES, _empty_items, _Part, _scaled_ts


def _add_repairs(repairs: dict[str, dict[str, int]], sites: dict[str, list[str]],
                 more: Mapping[str, Mapping[str, int]], more_sites: Mapping[str, Sequence[str]]) -> None:
    """Add a part's (or a shard's) repair counts to ``repairs`` and its repair sites to
    ``sites``: the first `REPAIR_SITES` per side over the whole input."""
    for side, rep in more.items():
        d = repairs.setdefault(side, {})
        for k, v in rep.items():
            d[k] = d.get(k, 0) + v
    for side, where in more_sites.items():
        sites.setdefault(side, []).extend(where[: max(0, REPAIR_SITES - len(sites.get(side, [])))])


def _warn_label_sets(report: Report) -> None:
    """Warn ([`IEScoreWarning`][iescore.errors.IEScoreWarning]) when the reference and the
    prediction each have items of at least two labels but no label in common: the
    columns are likely from different tasks (a chunk column scored against an NE
    column). One label against another (a single wrong entity) is ordinary. Before
    that, a label of one side spelt as one of the other but for case, whitespace or
    Unicode normalisation is warned of (`_warn_label_spellings`)."""
    n = len(report.labels)
    if not n:
        return
    # the labels with reference items and with predicted items (counted, so that a report
    # of totals, which keeps no items, warns as well)
    support, predicted = report._item_counts()
    ref, pred = np.flatnonzero(support), np.flatnonzero(predicted)
    if _warn_label_spellings(report.labels, support, predicted):
        return  # said more precisely
    if len(ref) >= 2 and len(pred) >= 2 and not predicted[ref].any():  # no label with both

        def names(ix: np.ndarray) -> str:
            shown = [report.labels[i] for i in ix[:5].tolist()]
            return choices(shown) + (f" and {len(ix) - 5} more" if len(ix) > 5 else "")

        warn(
            f"no predicted label occurs in the reference and no reference label in the prediction "
            f"(reference: {names(ref)}; prediction: {names(pred)}); are the columns from different tasks?"
        )


def _warn_type_filter(report: Report) -> None:
    """Warn ([`IEScoreWarning`][iescore.errors.IEScoreWarning]) for each type of
    ``keep_types`` or ``remove_types`` that is not in the input (`warn_unknown_types`)."""
    if report.config.filters_types():
        removed = {k.split(":", 1)[1] for side in ("reference", "prediction")
                   for k in report.repairs.get(side, {}) if k.startswith("removed:")}
        warn_unknown_types(report.config, report.labels, removed)


def _warn_label_spellings(labels: Sequence[str], support: np.ndarray, predicted: np.ndarray) -> int:
    """Warn ([`IEScoreWarning`][iescore.errors.IEScoreWarning]) for each predicted label that a
    reference label spells the same but for case, surrounding whitespace or Unicode
    normalisation (``per`` and ``PER``; ``É`` composed (NFC) and decomposed (NFD)), one of
    the two being on one side only (``support``, ``predicted``: the items per label): they
    are scored as two labels. Compares the two label sets once (a dict of the reference's
    labels by their folded spelling), whatever the number of items. Returns the warnings
    given."""

    def folded(label: str) -> str:
        return unicodedata.normalize("NFC", label.strip()).casefold()

    by_fold: dict[str, list[int]] = {}
    n = 0
    for i in np.flatnonzero(support).tolist():
        by_fold.setdefault(folded(labels[i]), []).append(i)
    for i in np.flatnonzero(predicted).tolist():
        for j in by_fold.get(folded(labels[i]), ()):
            if i == j or (support[i] and predicted[j]):  # the same label, or both on both sides
                continue
            p, r = labels[i], labels[j]
            a, b = p.strip(), r.strip()
            kinds = [
                kind for kind, differs in (
                    ("case", unicodedata.normalize("NFC", a) != unicodedata.normalize("NFC", b)),
                    ("surrounding whitespace", (a, b) != (p, r)),
                    ("Unicode normalisation (composed or decomposed characters)", a.casefold() != b.casefold()),
                ) if differs
            ]
            show = ascii if kinds[-1].startswith("Unicode") else repr  # spelt alike when printed: escaped
            warn(
                f"labels {show(p)} (prediction) and {show(r)} (reference) differ only by {' and '.join(kinds)}; "
                f"they are scored as two different labels: correct one of them, or merge them "
                f"with supertags={{{show(p)}: {show(r)}}}"
            )
            n += 1
    return n


def _assemble(parts: list[_Part], cfg: Config, notes: Mapping[str, int] | None = None) -> Report:
    # a part without documents (an empty batch or shard) adds nothing: its kind (tokens or
    # templates) must not decide the report's, which the reference digest reads
    parts = [p for p in parts if len(p.doc_ids)] or parts[:1]
    # one part whose labels are already the sorted distinct labels (as a part of tags has
    # them): no sorting and no renumbering (and no per-label dict: there may be many thousand)
    same = len(parts) == 1 and all(map(operator.lt, parts[0].labels, islice(parts[0].labels, 1, None)))
    labels = list(parts[0].labels) if same else sorted({lab for p in parts for lab in p.labels})
    index = {} if same else {lab: i for i, lab in enumerate(labels)}
    L = len(labels)
    id_parts: list[Sequence[str]] = []
    n_seen = 0
    tables = []
    confusions = []
    cats: np.ndarray | None = np.zeros((L, len(CATEGORIES)), dtype=_I64)
    slots: np.ndarray | None = np.zeros((L, 2), dtype=_I64)  # multi-slot counts: None unless every part has them
    n_items = (0, 0)  # reference and prediction items of the parts so far
    refs, preds, toks = [], [], []  # type: list[ItemTable], list[ItemTable], list[np.ndarray]
    repairs: dict[str, dict[str, int]] = {}
    sites: dict[str, list[str]] = {}
    ts_error = None
    has_tokens = bool(parts) and all(p.token_counts is not None for p in parts)
    fields = FIELDS[:_PRF_FIELDS] if cfg.detail == "prf" else FIELDS
    # each part's label numbers in the report
    maps = [np.arange(L, dtype=_I64) if same else np.array([index[lab] for lab in p.labels], dtype=_I64)
            for p in parts]
    for p, m in zip(parts, maps):
        tables.append((p.table, m))
        confusions.append((p.confusion, m))
        off = n_seen
        n_seen += len(p.doc_ids)
        id_parts.append(p.doc_ids)
        for tab, dest, other in ((p.ref, refs, n_items[1]), (p.pred, preds, n_items[0])):
            if off == 0 and np.array_equal(m, np.arange(len(m))):
                dest.append(tab)  # already in the report's numbering
            else:  # partners are indices into the other side's items: shifted by its items so far
                partner = None if tab.partner is None else np.where(tab.partner < 0, -1, tab.partner + other)
                dest.append(replace(tab, doc=tab.doc + off, label=m[tab.label] if len(tab.label) else tab.label,
                                    partner=partner))
        n_items = (n_items[0] + len(p.ref), n_items[1] + len(p.pred))
        if cats is not None and p.categories is not None:
            cats[m] += p.categories
        else:
            cats = None
        if slots is not None and p.multislot is not None:
            slots[m] += p.multislot
        else:
            slots = None
        if has_tokens:
            assert p.token_counts is not None
            toks.append(p.token_counts)
        _add_repairs(repairs, sites, p.repairs, p.repair_sites)
        ts_error = ts_error or p.ts_error
    if notes:
        repairs["adapter"] = dict(sorted(notes.items()))
    ts_cells = None
    if any(p.unit_totals is not None for p in parts):
        blocks = []
        for p, m in zip(parts, maps):
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

        def col(f: str) -> np.ndarray:
            return np.concatenate([getattr(t, f) for t in tabs])

        def optional(f: str) -> np.ndarray | None:  # None unless every table has the column
            return None if any(getattr(t, f) is None for t in tabs) else col(f)

        args = None if any(t.args is None for t in tabs) else Arguments.concat([t.args for t in tabs if t.args is not None])
        ids = None if any(t.ids is None for t in tabs) else tuple(x for t in tabs for x in (t.ids or ()))
        return ItemTable(col("doc"), col("label"), col("start"), col("end"), col("status"), col("score"),
                         text=texts, category=optional("category"), partner=optional("partner"), args=args, ids=ids)

    return Report(
        config=cfg,
        labels=tuple(labels),
        doc_ids=concat_ids(id_parts),
        table=table,
        confusion_counts=Confusion.join(confusions, L),
        reference=cat(refs),
        prediction=cat(preds),
        token_counts=(toks[0] if len(toks) == 1 else np.concatenate(toks)) if has_tokens else None,
        repairs=repairs,
        ts_error=ts_error,
        ts_cells=ts_cells,
        categories=cats if parts else None,
        multislot=slots if parts else None,
        repair_sites={side: tuple(w) for side, w in sites.items()},
    )

