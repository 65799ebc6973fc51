"""The report stage of the pipeline: the immutable report (counts, measures, statuses,
confusion table, signature), the one object every view reads (`iescore.render`).

A report is computed once (by [`iescore.Scorer`][iescore.Scorer] or [`iescore.score`][iescore.score]);
its views (``to_dict``, ``format_table``, ``per_label``...) never recount; the
per-label dicts they show are built from per-label arrays when asked (`iescore.summary`).

Averages (Concepts: averages):

* micro -- sum the counts over labels, then measure;
* macro -- the unweighted mean of the per-label measures (macro-F1 is the mean of
  the per-label F1; ``f1_of_macro_pr`` is F1 of macro-P and macro-R); labels whose
  measure is undefined are left out of that measure's mean and listed, per measure,
  in ``left_out``;
* weighted -- per-label measures weighted by the label's reference answers
  (Chinchor); labels absent from the reference get weight 0 and are listed in
  ``zero_weight_labels``, labels of positive weight whose measure is undefined in
  ``left_out``.

Names: ``f1`` is always F1 (beta = 1); ``f_beta`` is F_beta with the configured
beta (equal to ``f1`` when beta = 1).
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from .categories import CATEGORIES, MUC_OF, category_dict
from .cells import CellTable, column_sums
from .config import Config
from .confusion import Confusion
from .docmacro import DocSums, per_document_rows
from .items import ItemTable
from .match.units import STATUS_NAMES
from .measures import FIELDS, TS_FIELDS, Counts, makhoul_e, muc_err, slot_error_rate, ts_measures
from .multislot import multislot_summary
from .semeval import semeval_overall, semeval_per_label
from .summary import LabelSummary, copied, entry, full_summary, mean
from .summary import averages as summary_averages
from .viewhooks import VIEWS, ReportViews

if TYPE_CHECKING:
    from .cost import Cost

__all__ = ["Report", "ItemTable"]


class _Totals(Protocol):
    """What a report reads of the summed counts it keeps instead of its documents
    (`iescore.scoring.totals.Totals`: the scoring stage above makes them)."""

    @property
    def label_totals(self) -> np.ndarray: ...
    @property
    def tokens(self) -> np.ndarray | None: ...


def _freeze(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    a.setflags(write=False)
    return a


@dataclass(frozen=True, repr=False)
class Report(ReportViews):
    """The result of one evaluation.

    Attributes:
        config: the options used (``config.signature()`` is the signature).
        labels: the evaluated labels, sorted.
        doc_ids: document ids in input order (a tuple, or a compact
            `NumberedIds` for auto-numbered documents).
        table: the per-document, per-label counts (`CellTable`:
            the cells that hold an answer or a prediction; the others are zeros);
            ``cells`` is the same as a dense ``(docs, labels, len(fields))`` array.
        confusion_counts: reference-label x prediction-label counts of Makhoul's
            alignment (`Confusion`: the pairs that occur;
            label number ``len(labels)`` is "none", insertions and deletions);
            ``confusion`` is the same as a dense table.
        reference / prediction: per-item statuses ([`ItemTable`][iescore.items.ItemTable]).
        token_counts: per-document ``[tokens, agreeing tags, tokens not O on both
            sides, agreeing among those]`` for tag input (conlleval's token
            accuracy), else ``None``.
        repairs: chunks repaired or discarded per side; ``adapter`` only if nonzero (``.get("adapter", {})``).
        repair_sites: per side, where the first repaired or discarded chunks start
            (``document 'id', token k (file:line (side))``; at most a few per batch).
        ts_error: why the token & separator model is unavailable, if it is.
        ts_cells: per-document, per-label TS counts with per-t-unit weights applied
            (float, ``TS_FIELDS`` order), when documents carried such weights.
        totals: set when only totals were kept (`Totals`:
            ``Scorer(totals_only=True)``, or states kept with ``keep="counts"``): every
            number and view is the same, but there are no per-document counts (``table``
            is empty, ``doc_ids`` only counts the documents) and no items; asking for
            them raises ConfigError.
        categories: per-label error-category totals (``(labels, 6)`` in
            `CATEGORIES` order; Concepts: error
            categories), or ``None`` where there is no alignment (match-best, ``detail="prf"``).
        multislot: the multi-slot counts (`iescore.multislot`; [`multislot_errors`][iescore.report.Report.multislot_errors]) or ``None``.
        cost: the extractor's cost (``iescore.cost.Cost``), set by
            [`with_cost`][iescore.report.Report.with_cost]; ``None`` by default, and in
            every report a scorer makes (merged shards included).

    ``fields`` are the [`Counts`][iescore.measures.Counts] fields counted (all of them, or
    ``tp``/``fp``/``fn`` under ``detail="prf"``); the others are 0.

    Its text, HTML and DataFrame views are looked up in `iescore.viewhooks.VIEWS`, which
    `iescore.render` fills: the views sit above the report, which never imports them.
    """

    config: Config
    labels: tuple[str, ...]
    doc_ids: Sequence[str]
    table: CellTable
    confusion_counts: Confusion
    reference: ItemTable
    prediction: ItemTable
    token_counts: np.ndarray | None = None
    repairs: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    ts_error: str | None = None
    ts_cells: np.ndarray | None = None
    totals: _Totals | None = None
    categories: np.ndarray | None = None
    multislot: np.ndarray | None = None
    repair_sites: Mapping[str, Sequence[str]] = field(default_factory=dict)
    cost: Cost | None = None
    _summary: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.table.n_labels != len(self.labels) or (self.totals is None and self.table.n_docs != len(self.doc_ids)):
            raise ValueError(
                f"Report: a table of {self.table.n_docs} documents x {self.table.n_labels} labels "
                f"for {len(self.doc_ids)} documents and {len(self.labels)} labels"
            )
        # per-label totals over documents, summed once (64-bit)
        kept = self.totals.label_totals if self.totals is not None else self.table.label_totals()
        object.__setattr__(self, "_label_totals", kept)
        if self.token_counts is not None:
            object.__setattr__(self, "token_counts", _freeze(self.token_counts))
        object.__setattr__(self, "_summary", self._compute())

    # --- counts ------------------------------------------------------------------
    @property
    def n_documents(self) -> int:
        """The number of documents scored."""
        return len(self.doc_ids)

    def token_sums(self) -> np.ndarray | None:
        """conlleval's token counts summed over documents (see ``token_counts``), or None."""
        if self.totals is not None:
            return self.totals.tokens
        return None if self.token_counts is None else column_sums(self.token_counts)

    def _documents_kept(self, what: str) -> None:
        if self.totals is not None:
            from .errors import ConfigError
            from .ids import UNKEPT

            raise ConfigError(UNKEPT.format(what=what))

    @property
    def signature(self) -> str:
        """The reproducibility signature (Concepts: signature)."""
        return self._summary["signature"]

    @property
    def fields(self) -> tuple[str, ...]:
        """The [`Counts`][iescore.measures.Counts] fields counted (the others are 0)."""
        return self.table.fields

    @property
    def cells(self) -> np.ndarray:
        """Every (document, label) cell as a dense ``(docs, labels, len(fields))`` array in
        ``fields`` order, zeros included (built from ``table`` on each access)."""
        self._documents_kept("per-document cells")
        return self.table.dense()

    def counts(self, label: str | None = None, doc: str | int | None = None) -> Counts:
        """Counts of one label (or all labels summed), one document (or all)."""
        j = None
        if label is not None:
            if "_label_index" not in self.__dict__:  # built on first use (there may be many labels)
                object.__setattr__(self, "_label_index", dict(zip(self.labels, range(len(self.labels)))))
            j = self._label_index.get(label)  # type: ignore[attr-defined]
            if j is None:
                from .errors import ConfigError, choices

                raise ConfigError(f"unknown label {label!r}; labels: {choices(self.labels)}")
        if doc is None:
            t = self._label_totals  # type: ignore[attr-defined]
            return self._counts(t.sum(axis=0) if j is None else t[j])
        self._documents_kept("per-document counts")
        k = doc if isinstance(doc, int) else self.doc_ids.index(doc)
        if not 0 <= k < len(self.doc_ids):
            raise IndexError(f"document #{k} is out of range: the report has {len(self.doc_ids)} documents")
        return self._counts(self.table.total(doc=k, label=j))

    def _counts(self, row: np.ndarray) -> Counts:
        return Counts(**{f: int(x) for f, x in zip(self.fields, row.tolist())})

    @property
    def overall(self) -> Counts:
        """Micro-summed counts over all labels and documents."""
        return self.counts()

    @property
    def per_label(self) -> dict[str, Counts]:
        fields = self.fields
        rows = self._label_totals.tolist()  # type: ignore[attr-defined]
        return {lab: Counts(**dict(zip(fields, row))) for lab, row in zip(self.labels, rows)}

    def per_document(self) -> dict[str, Counts]:
        """Counts of every document (all labels summed)."""
        self._documents_kept("per-document counts")
        tot = self.table.doc_totals()
        return {d: self._counts(row) for d, row in zip(self.doc_ids, tot)}

    def per_document_measures(self) -> dict[str, dict[str, Any]]:
        """Every document's ``{"tp", "fp", "fn", "precision", "recall", "f1"}`` (its counts
        summed over labels; None where undefined), the values ``to_dict()["doc_macro"]``
        averages (Concepts: averages)."""
        self._documents_kept("per-document measures")
        return per_document_rows(list(self.doc_ids), *self._doc_prf())

    def _doc_prf(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        tot = self.table.doc_totals()
        return tuple(tot[:, self.fields.index(k)] for k in ("tp", "fp", "fn"))  # type: ignore[return-value]

    # --- headline views ------------------------------------------------------------
    @property
    def precision(self) -> float | None:
        return self._summary["averages"][self.config.average]["precision"]

    @property
    def recall(self) -> float | None:
        return self._summary["averages"][self.config.average]["recall"]

    @property
    def f(self) -> float | None:
        """F_beta (the configured beta) under the configured headline average; the same
        as [`f_beta`][iescore.report.Report.f_beta], and as [`f1`][iescore.report.Report.f1] when beta = 1."""
        return self.f_beta

    @property
    def f_beta(self) -> float | None:
        """F_beta (the configured beta) under the configured headline average."""
        return self._summary["averages"][self.config.average]["f_beta"]

    @property
    def f1(self) -> float | None:
        """F1 (beta = 1, whatever the configured beta) under the configured headline average."""
        return self._summary["averages"][self.config.average]["f1"]

    @property
    def ts(self) -> dict[str, Any]:
        """The token & separator model's measures; raises InputError naming the document
        and position when the input is multi-instance (two overlapping spans of one label)."""
        if self.ts_error is not None:
            from .errors import InputError

            raise InputError(self.ts_error)
        return self._full_summary("ts")

    @property
    def token_accuracy(self) -> float | None:
        return self._summary["token_accuracy"]

    def to_dict(self) -> dict[str, Any]:
        """Everything as plain JSON-able Python values (``None`` where undefined): a
        fresh tree built on each call, equal to ``json.loads(report.to_json())`` (only
        dicts, lists, strings, ints, floats, booleans and None); ``"cost"`` (the
        extractor's, ``Cost.to_dict()``) only when the report has one."""
        tree: dict[str, Any] = self._full_summary()
        if self.cost is not None:
            tree["cost"] = self.cost.to_dict()
        return tree

    def to_json(self, **kw: Any) -> str:
        """``json.dumps(report.to_dict(), **kw)``; with ``indent`` alone, the same text from
        `iescore.render.jsontext` (the standard library indents in pure Python)."""
        if set(kw) == {"indent"} and kw["indent"] is not None:
            return VIEWS["json_text"](self.to_dict(), kw["indent"])
        return json.dumps(self.to_dict(), **kw)

    def with_cost(self, cost: Cost | None) -> Report:
        """This report with the extractor's ``cost`` attached (an ``iescore.cost.Cost``, from
        ``iescore.cost.measure`` or ``measure_command``; ``None`` takes it off), as a copy:
        this report is unchanged. ``to_dict()`` then holds ``"cost"`` and the text table
        shows it; every number and the signature stay the same (a cost is not a score)."""
        from .cost import Cost

        if cost is not None and not isinstance(cost, Cost):
            from .errors import ConfigError

            raise ConfigError(f"with_cost takes an iescore.cost.Cost or None; got {type(cost).__name__} {cost!r:.80}")
        out = copy.copy(self)
        object.__setattr__(out, "cost", cost)
        return out

    def items(self, side: str = "prediction") -> Iterator[dict[str, Any]]:
        """Per-item outcomes of ``"reference"`` or ``"prediction"``: the status (TP, FP, FN,
        ignored, alternative), the error category and its MUC/SemEval code (Concepts: error categories) and the aligned ``partner`` on the other side
        (``{"index", "label", "start", "end", "text"}``, ``index`` counting the other
        side's items in this same order; ``None`` when unaligned). Category, code and
        partner are ``None`` where there is no alignment (match-best, ``detail="prf"``).
        A relation's item also has ``head`` and ``tail`` (each ``{"label", "start", "end",
        "text"}``), a link's its knowledge-base ``id``.

        >>> import iescore
        >>> r = iescore.score_tags(reference=[["B-LOC", "O"]], prediction=[["B-ORG", "O"]])
        >>> it = next(r.items("reference"))
        >>> it["status"], it["category"], it["muc"], it["partner"]["label"]
        ('FN', 'wrong_label', 'INC', 'ORG')
        """
        if side not in ("reference", "prediction"):
            from .errors import ConfigError, choices

            raise ConfigError(f"unknown side {side!r}; sides: {choices(('reference', 'prediction'))}")
        self._documents_kept("per-item statuses")  # here, not when the iteration starts
        t = self.reference if side == "reference" else self.prediction
        other = self.prediction if side == "reference" else self.reference
        return self._items(t, other)

    def _items(self, t: ItemTable, other: ItemTable) -> Iterator[dict[str, Any]]:
        def where(u: ItemTable, k: int) -> dict[str, Any]:
            return {
                "label": self.labels[int(u.label[k])],
                "start": None if u.start[k] < 0 else int(u.start[k]),
                "end": None if u.end[k] < 0 else int(u.end[k]),
                "text": None if u.text is None else u.text[k],
            }

        for k in range(len(t)):
            cat = None if t.category is None else CATEGORIES[int(t.category[k])]
            partner = None
            if t.partner is not None and t.partner[k] >= 0:
                j = int(t.partner[k])
                partner = {"index": j, **where(other, j), **other.extra(j)}
            yield {
                "doc": self.doc_ids[int(t.doc[k])],
                **where(t, k),
                "score": None if math.isnan(t.score[k]) else float(t.score[k]),
                "status": STATUS_NAMES[int(t.status[k])],
                "category": cat,
                "muc": None if t.category is None else MUC_OF[int(t.category[k])],
                "partner": partner,
                **t.extra(k),
            }

    def multislot_errors(self) -> dict[str, Any] | None:
        """Makhoul's multi-slot tags, each tag's type and extent scored as two slots (Concepts: measures): ``to_dict()["multislot"]``."""
        return self._full_summary("multislot")

    @property
    def confusion(self) -> np.ndarray:
        """The confusion table as a dense ``(labels + 1, labels + 1)`` array (the last row
        and column are "none": insertions and deletions), built on each access; with many
        labels read [`confusion_table`][iescore.report.Report.confusion_table] or ``confusion_counts`` instead."""
        return self.confusion_counts.dense()

    def confusion_table(self) -> dict[str, dict[str, int]]:
        """Reference label -> prediction label -> aligned count ("none" for D and I)."""
        return self.confusion_counts.table(self.labels)

    # --- computation (once) ---------------------------------------------------------
    def _item_counts(self) -> tuple[np.ndarray, np.ndarray]:
        """Per label, the reference items and the prediction items counted.

        With ``detail="full"`` they are the row and column sums of the confusion
        table (every answer is in its label's row, aligned or in "none"; every
        prediction in its label's column); the slot counts' ``N``/``M`` cannot serve
        per label, as a substitution belongs to the reference label. With
        ``detail="prf"`` (exact matches of decoded tags) they are TP + FN and TP + FP.
        """
        L = len(self.labels)
        if self.config.detail == "full":
            c = self.confusion_counts
            return c.row_sums()[:L], c.col_sums()[:L]
        t = self._label_totals  # type: ignore[attr-defined]
        tp, fp, fn = (t[:, self.fields.index(k)].astype(np.int64) for k in ("tp", "fp", "fn"))
        return tp + fn, tp + fp

    def _compute(self) -> dict[str, Any]:
        """The summary without its per-label dicts (kept as arrays in ``_labels_summary``
        and built by `_full_summary` when a view asks for them)."""
        cfg = self.config
        beta = cfg.beta
        total = self.overall
        full = cfg.detail == "full"
        support, predicted = self._item_counts()
        t = self._label_totals  # type: ignore[attr-defined]
        zeros = np.zeros(len(self.labels), dtype=np.int64)
        counts = {f: (t[:, self.fields.index(f)] if f in self.fields else zeros) for f in FIELDS}
        ts_counts = None
        ts_weights = (cfg.token_weight, cfg.separator_weight)
        if self.ts_error is None:
            if self.ts_cells is not None:  # weights already applied per t-unit
                ts_tot = self.ts_cells.sum(axis=0)
                ts_counts = {f: np.ascontiguousarray(ts_tot[:, j]) for j, f in enumerate(TS_FIELDS)}
                ts_weights = (1.0, 1.0)
            else:
                ts_counts = {f: counts[f] for f in TS_FIELDS}
        per = LabelSummary(self.labels, {f: counts[f] for f in ("tp", "fp", "fn", "C", "S", "D", "I")},
                           np.asarray(support, dtype=np.int64), np.asarray(predicted, dtype=np.int64),
                           beta, cfg.alpha, full, ts_counts, ts_weights, self.categories)
        cols = per.columns()  # the per-label measures, for the averages (not kept)
        object.__setattr__(self, "_labels_summary", per)

        overall = entry(total, int(support.sum()), int(predicted.sum()), beta, cfg.alpha, full)
        averages = summary_averages(overall, per, cols)
        slot: dict[str, Any] | None = {
            "C": total.C, "S": total.S, "D": total.D, "I": total.I, "N": total.N, "M": total.M,
            "ser": slot_error_rate(total), "err": muc_err(total), "e": makhoul_e(total, cfg.alpha),
            "ser_weighted": slot_error_rate(total, dict(zip("SDI", cfg.ser_weights))),
        } if full else None
        # token & separator model (its per-label dicts: _full_summary)
        ts: dict[str, Any] | None = None
        if ts_counts is not None:
            if self.ts_cells is not None:
                tsw = {"beta": beta, "token_weight": 1.0, "separator_weight": 1.0}
                micro_ts = ts_measures(Counts(**dict(zip(TS_FIELDS, ts_tot.sum(axis=0).tolist()))), **tsw)
            else:
                tsw = {"beta": beta, "token_weight": cfg.token_weight, "separator_weight": cfg.separator_weight}
                micro_ts = ts_measures(total, **tsw)
            tsc = per.ts_columns()
            ts = {}
            for f in ("f1", "f_beta"):
                ts[f"{f}_macro"] = mean(tsc["ts"][f])
                ts[f"{f}_micro"] = micro_ts["ts"][f]
                ts[f"token_{f}_macro"] = mean(tsc["tokens"][f])
                ts[f"token_{f}_micro"] = micro_ts["tokens"][f]
            ts["accuracy_macro"] = mean(tsc["ts"]["accuracy"])
            ts["kappa_macro"] = mean(tsc["ts"]["kappa"])
        tok = None
        tok_non_o = None
        n_tokens = None
        t = self.token_sums()
        if t is not None:
            n_tokens = int(t[0])
            tok = None if t[0] == 0 else float(t[1]) / float(t[0])
            tok_non_o = None if t[2] == 0 else float(t[3]) / float(t[2])
        return {
            "signature": cfg.signature(self),  # (a report of totals: the digest of its documents)
            "documents": self.n_documents,
            "tokens": n_tokens,
            "token_accuracy": tok,
            "token_accuracy_non_o": tok_non_o,
            "overall": overall,
            "per_label": None,  # built by _full_summary
            "slot_errors": slot,
            "ts": ts,
            "ts_error": self.ts_error,
            "averages": averages,
            "confusion": None,  # built by _full_summary
            "repairs": {k: dict(v) for k, v in self.repairs.items()},
            "repair_sites": {k: list(v) for k, v in self.repair_sites.items()},
            "categories": None if self.categories is None else {
                "overall": category_dict(self.categories.sum(axis=0).tolist()),
            },
            "semeval": None if self.categories is None else {**semeval_overall(self.categories), "per_label": None},
            "doc_macro": None,  # built by _full_summary
            "multislot": multislot_summary(self.multislot, counts),  # its per_label: _full_summary
        }

    def _fills(self) -> dict[str, Callable[[Any], Any]]:
        """The parts built when a view asks: SemEval per label, the document-macro average
        (from the kept totals' sums when only totals were kept: None without them)."""
        per: LabelSummary = self._labels_summary  # type: ignore[attr-defined]

        def semeval(v: Any) -> Any:
            return None if v is None else {**v, "per_label": semeval_per_label(
                per.labels, per.category_rows, per.support, per.predicted)}  # type: ignore[arg-type]

        def doc_macro(_: Any) -> Any:
            sums = self.__dict__.get("_doc_sums", False)  # summed once
            if sums is False:
                sums = getattr(self.totals, "doc_sums", None) if self.totals is not None else DocSums.of(*self._doc_prf())
                object.__setattr__(self, "_doc_sums", sums)
            return None if sums is None else sums.averages()

        return {"semeval": semeval, "doc_macro": doc_macro,
                "multislot": lambda v: v and multislot_summary(self.multislot, per.counts, per.labels)}

    def _full_summary(self, only: str | None = None) -> Any:
        """The whole summary as fresh plain values (``to_dict()``), or its part ``only``
        (kept and copied for a report of at most 1,000 labels: a copy is faster than a rebuild)."""
        kept = self.__dict__.get("_full")
        if kept is None:
            s = full_summary(self._summary, self._labels_summary, self.confusion_table, only, self._fills())  # type: ignore[attr-defined]
            if only is not None or len(self.labels) > 1000:
                return s
            object.__setattr__(self, "_full", kept := s)
        return copied(kept if only is None else kept[only])

