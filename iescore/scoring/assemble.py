"""The report stage of the pipeline: batches' parts summed into one :class:`~iescore.report.Report`.

:func:`_assemble` renumbers each part's labels into the report's (sorted) label list,
concatenates the per-document cells, item tables and token counts, and sums the
confusion tables and repair counts; it never recomputes a count, so streaming,
one-shot scoring and merged shards give the same report.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence
from itertools import islice

import numpy as np

from ..categories import CATEGORIES
from ..cells import UNIT_FIELDS, CellTable, column_sums
from ..config import Config
from ..confusion import Confusion
from ..errors import ConfigError, choices, warn
from ..ids import concat_ids, reference_digest
from ..measures import FIELDS
from ..items import ItemTable, Totals
from ..report import Report
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
    # the labels with reference items and with predicted items (counted, so that a report
    # of totals, which keeps no items, warns as well)
    support, predicted = report._item_counts()
    ref, pred = np.flatnonzero(support), np.flatnonzero(predicted)
    if len(ref) >= 2 and len(pred) >= 2 and not predicted[ref].any():  # no label with both

        def names(ix: np.ndarray) -> str:
            shown = [report.labels[i] for i in ix[:5].tolist()]
            return choices(shown) + (f" and {len(ix) - 5} more" if len(ix) > 5 else "")

        warn(
            f"no predicted label occurs in the reference and no reference label in the prediction "
            f"(reference: {names(ref)}; prediction: {names(pred)}); are the columns from different tasks?"
        )


def _assemble(parts: list[_Part], cfg: Config, notes: Mapping[str, int] | None = None) -> Report:
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

        return ItemTable(col("doc"), col("label"), col("start"), col("end"), col("status"), col("score"),
                         text=texts, category=optional("category"), partner=optional("partner"))

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
        repair_sites={side: tuple(w) for side, w in sites.items()},
    )


class _Totals:
    """Batches' parts summed over their documents as they come (``Scorer(totals_only=True)``):
    per label name its counts, the t-units, conlleval's token counts, the document count,
    the reference digest, the confusion table and the repairs. Memory grows with the
    labels, not with the documents or items; :meth:`report` gives the report that
    :func:`_assemble` gives for the same parts, less the per-document counts and items."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self.index: dict[str, int] = {}
        self.fields: tuple[str, ...] | None = None
        self.values = np.zeros((0, 0), dtype=_I64)  # per label (in order of first sight)
        self.units = np.zeros(2, dtype=_I64)  # tokens, separators of all documents
        self.tokens: np.ndarray | None = np.zeros(4, dtype=_I64)  # None once a part has none
        self.n_docs = 0
        self.digest = 0
        self.confusion = Confusion.empty(0)
        self.repairs: dict[str, dict[str, int]] = {}
        self.sites: dict[str, list[str]] = {}  # side -> where the first repairs are
        self.cats: np.ndarray | None = np.zeros((0, len(CATEGORIES)), dtype=_I64)  # None once a part has none
        self.ts_error: str | None = None

    def add(self, p: _Part) -> None:
        if p.unit_totals is not None or p.ts_weighted is not None:
            raise ConfigError("per-t-unit weights need the documents: use a Scorer without totals_only=True")
        fields = p.table.fields
        if self.fields is None:
            self.fields = fields
            self.values = np.zeros((0, len(fields)), dtype=_I64)
        elif fields != self.fields:
            raise ConfigError(f"batches counted different fields ({self.fields} vs {fields})")
        m = np.array([self.index.setdefault(lab, len(self.index)) for lab in p.labels], dtype=_I64)
        self.names.extend(list(self.index)[len(self.names):])
        L = len(self.names)
        if len(self.values) < L:
            self.values = np.concatenate((self.values, np.zeros((L - len(self.values), len(fields)), _I64)))
        units = [i for i, f in enumerate(fields) if f in UNIT_FIELDS]
        per_label = p.table.label_totals()
        per_label[:, units] = 0  # the t-units are summed once, below, and given to every label at the end
        self.values[m] += per_label  # m: distinct labels
        if units and p.table.doc_tokens is not None:
            tok = p.table.doc_tokens.astype(_I64)
            self.units += (int(tok.sum()), int(np.maximum(tok - 1, 0).sum()))
        self.tokens = None if self.tokens is None or p.token_counts is None else self.tokens + column_sums(p.token_counts)
        self.n_docs += len(p.doc_ids)
        self.digest = (self.digest + reference_digest(_PartData(p))) % 2**64
        self.confusion = Confusion.join([(self.confusion, np.arange(self.confusion.n_labels)), (p.confusion, m)], L)
        for side, rep in p.repairs.items():
            d = self.repairs.setdefault(side, {})
            for k, v in rep.items():
                d[k] = d.get(k, 0) + v
        for side, where in p.repair_sites.items():  # the first few over the whole input
            self.sites.setdefault(side, []).extend(where[: max(0, REPAIR_SITES - len(self.sites.get(side, [])))])
        if self.cats is not None and p.categories is not None:
            if len(self.cats) < L:
                self.cats = np.concatenate((self.cats, np.zeros((L - len(self.cats), len(CATEGORIES)), _I64)))
            self.cats[m] += p.categories
        else:
            self.cats = None
        self.ts_error = self.ts_error or p.ts_error

    def report(self, cfg: Config, notes: Mapping[str, int] | None = None) -> Report:
        labels = sorted(self.names)
        L = len(labels)
        fields = self.fields or (FIELDS[:_PRF_FIELDS] if cfg.detail == "prf" else FIELDS)
        order = np.array([self.index[lab] for lab in labels], dtype=_I64)
        values = self.values[order] if L else np.zeros((0, len(fields)), dtype=_I64)
        for i, f in enumerate(fields):
            if f in UNIT_FIELDS:
                values[:, i] = self.units[UNIT_FIELDS.index(f)]
        new = np.empty(L, dtype=_I64)  # own label number -> the report's
        new[order] = np.arange(L)
        repairs = {k: dict(v) for k, v in self.repairs.items()}
        if notes:
            repairs["adapter"] = dict(sorted(notes.items()))
        return Report(
            config=cfg, labels=tuple(labels), doc_ids=(), table=CellTable.empty(fields, L),
            confusion_counts=Confusion.join([(self.confusion, new)], L),
            reference=_empty_items(), prediction=_empty_items(), repairs=repairs, ts_error=self.ts_error,
            totals=Totals(self.n_docs, values, self.tokens, self.digest),
            categories=None if self.cats is None or not self.n_docs else self.cats[order] if L else self.cats[:0],
            repair_sites={side: tuple(w) for side, w in self.sites.items()},
        )


class _PartData:
    """A part seen as the report :func:`~iescore.ids.reference_digest` reads."""

    def __init__(self, p: _Part) -> None:
        self.doc_ids, self.table, self.token_counts, self.reference, self.labels = (
            p.doc_ids, p.table, p.token_counts, p.ref, p.labels)
