"""The immutable report: counts, measures, statuses, confusion table, signature.

A report is computed once (by :class:`iescore.Scorer` or :func:`iescore.score`);
its views (``to_dict``, ``format_table``, ``per_label``...) never recompute.

Averages (SPEC §5):

* micro -- sum the counts over labels, then measure;
* macro -- the unweighted mean of the per-label measures (macro-F is the mean of
  the per-label F; ``f1_of_macro_pr`` is F of macro-P and macro-R); labels whose
  measure is undefined are left out of the mean and listed;
* weighted -- per-label measures weighted by the label's reference answers
  (Chinchor); labels absent from the reference get weight 0 and are listed.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .cells import CellTable
from .config import Config
from .engine import STATUS_NAMES, TS_FIELDS, column_sums
from .measures import (
    Counts,
    f_beta,
    makhoul_e,
    muc_err,
    precision,
    recall,
    slot_error_rate,
    ts_measures,
)

__all__ = ["Report", "ItemTable", "aggregate"]


@dataclass(frozen=True)
class ItemTable:
    """Per-item outcomes of one side: every answer or prediction with its status.

    ``start``/``end`` are document token offsets (-1 in OBD, where items are
    template fillers); ``text`` is the filler text where known.
    """

    doc: np.ndarray
    label: np.ndarray
    start: np.ndarray
    end: np.ndarray
    status: np.ndarray
    score: np.ndarray
    text: tuple[str, ...] | None = None

    def __len__(self) -> int:
        return len(self.doc)


def _freeze(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    a.setflags(write=False)
    return a


def _mean(xs: Sequence[float | None]) -> float | None:
    vals = [x for x in xs if x is not None]
    return sum(vals) / len(vals) if vals else None


def _f1(p: float | None, r: float | None, beta: float = 1.0) -> float | None:
    if p is None or r is None:
        return None
    b2 = beta * beta
    den = b2 * p + r
    return 0.0 if den == 0 else (1 + b2) * p * r / den


@dataclass(frozen=True)
class Report:
    """The result of one evaluation.

    Attributes:
        config: the options used (``config.signature()`` is the signature).
        labels: the evaluated labels, sorted.
        doc_ids: document ids in input order (a tuple, or a compact
            :class:`~iescore.ids.NumberedIds` for auto-numbered documents).
        table: the per-document, per-label counts (:class:`~iescore.cells.CellTable`:
            the cells that hold an answer or a prediction; the others are zeros);
            ``cells`` is the same as a dense ``(docs, labels, len(fields))`` array.
        confusion: reference-label x prediction-label counts of Makhoul's alignment;
            the last row and column are "none" (insertions and deletions).
        reference / prediction: per-item statuses (:class:`ItemTable`).
        token_counts: per-document ``[tokens, agreeing tags, tokens not O on both
            sides, agreeing among those]`` for tag input (conlleval's token
            accuracy), else ``None``.
        repairs: ill-formed chunks repaired (``conlleval``) or discarded, per side.
        ts_error: why the token & separator model is unavailable, if it is.
        ts_cells: per-document, per-label TS counts with per-t-unit weights applied
            (float, ``TS_FIELDS`` order), when documents carried such weights.

    ``fields`` are the :class:`Counts` fields counted (all of them, or
    ``tp``/``fp``/``fn`` under ``detail="prf"``); the others are 0.
    """

    config: Config
    labels: tuple[str, ...]
    doc_ids: Sequence[str]
    table: CellTable
    confusion: np.ndarray
    reference: ItemTable
    prediction: ItemTable
    token_counts: np.ndarray | None = None
    repairs: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    ts_error: str | None = None
    ts_cells: np.ndarray | None = None
    _summary: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.table.n_labels != len(self.labels) or self.table.n_docs != len(self.doc_ids):
            raise ValueError(
                f"Report: a table of {self.table.n_docs} documents x {self.table.n_labels} labels "
                f"for {len(self.doc_ids)} documents and {len(self.labels)} labels"
            )
        object.__setattr__(self, "_label_index", {lab: i for i, lab in enumerate(self.labels)})
        # per-label totals over documents, summed once (64-bit)
        object.__setattr__(self, "_label_totals", self.table.label_totals())
        object.__setattr__(self, "confusion", _freeze(self.confusion))
        if self.token_counts is not None:
            object.__setattr__(self, "token_counts", _freeze(self.token_counts))
        object.__setattr__(self, "_summary", self._compute())

    # --- counts ------------------------------------------------------------------
    @property
    def signature(self) -> str:
        """The reproducibility signature (SPEC §8)."""
        return self._summary["signature"]

    @property
    def fields(self) -> tuple[str, ...]:
        """The :class:`Counts` fields counted (the others are 0)."""
        return self.table.fields

    @property
    def cells(self) -> np.ndarray:
        """Every (document, label) cell as a dense ``(docs, labels, len(fields))`` array in
        ``fields`` order, zeros included (built from ``table`` on each access)."""
        return self.table.dense()

    def counts(self, label: str | None = None, doc: str | int | None = None) -> Counts:
        """Counts of one label (or all labels summed), one document (or all)."""
        j = None
        if label is not None:
            j = self._label_index.get(label)  # type: ignore[attr-defined]
            if j is None:
                from .errors import ConfigError, choices

                raise ConfigError(f"unknown label {label!r}; labels: {choices(self.labels)}")
        if doc is None:
            t = self._label_totals  # type: ignore[attr-defined]
            return self._counts(t.sum(axis=0) if j is None else t[j])
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
        return {lab: self.counts(lab) for lab in self.labels}

    def per_document(self) -> dict[str, Counts]:
        """Counts of every document (all labels summed)."""
        tot = self.table.doc_totals()
        return {d: self._counts(row) for d, row in zip(self.doc_ids, tot)}

    # --- headline views ------------------------------------------------------------
    @property
    def precision(self) -> float | None:
        return self._summary["averages"][self.config.average]["precision"]

    @property
    def recall(self) -> float | None:
        return self._summary["averages"][self.config.average]["recall"]

    @property
    def f(self) -> float | None:
        """F_beta under the configured headline average."""
        return self._summary["averages"][self.config.average]["f"]

    @property
    def ts(self) -> dict[str, Any]:
        """The token & separator model's measures; raises InputError naming the document
        and position when the input is multi-instance (two overlapping spans of one label)."""
        if self.ts_error is not None:
            from .errors import InputError

            raise InputError(self.ts_error)
        return self.to_dict()["ts"]

    @property
    def token_accuracy(self) -> float | None:
        return self._summary["token_accuracy"]

    def to_dict(self) -> dict[str, Any]:
        """Everything as plain JSON-able Python values (``None`` where undefined)."""
        return json.loads(json.dumps(self._summary))

    def to_json(self, **kw: Any) -> str:
        return json.dumps(self._summary, **kw)

    def items(self, side: str = "prediction") -> Iterator[dict[str, Any]]:
        """Per-item statuses (TP, FP, FN, ignored, alternative) of ``"reference"`` or ``"prediction"``."""
        t = self.reference if side == "reference" else self.prediction
        for k in range(len(t)):
            yield {
                "doc": self.doc_ids[int(t.doc[k])],
                "label": self.labels[int(t.label[k])],
                "start": None if t.start[k] < 0 else int(t.start[k]),
                "end": None if t.end[k] < 0 else int(t.end[k]),
                "text": None if t.text is None else t.text[k],
                "score": None if math.isnan(t.score[k]) else float(t.score[k]),
                "status": STATUS_NAMES[int(t.status[k])],
            }

    def confusion_table(self) -> dict[str, dict[str, int]]:
        """Reference label -> prediction label -> aligned count ("none" for D and I)."""
        names = list(self.labels) + ["none"]
        return {
            a: {b: int(self.confusion[i, j]) for j, b in enumerate(names) if self.confusion[i, j]}
            for i, a in enumerate(names)
        }

    # --- computation (once) ---------------------------------------------------------
    def _compute(self) -> dict[str, Any]:
        cfg = self.config
        beta = cfg.beta
        per = self.per_label
        total = self.overall

        full = cfg.detail == "full"

        def entry(c: Counts) -> dict[str, Any]:
            p, r = precision(c), recall(c)
            e = {
                "precision": p,
                "recall": r,
                "f1": f_beta(c.tp, c.fp, c.fn, 1.0),
                "f": f_beta(c.tp, c.fp, c.fn, beta),
                "tp": c.tp,
                "fp": c.fp,
                "fn": c.fn,
                "support": c.N,
                "predicted": c.M,
                "ser": slot_error_rate(c) if full else None,
                "err": muc_err(c) if full else None,
                "e": makhoul_e(c, cfg.alpha) if full else None,
            }
            if not full:  # only exact TP/FP/FN were computed: N and M are their sums
                e["support"], e["predicted"] = c.tp + c.fn, c.tp + c.fp
            return e

        per_entries = {lab: entry(c) for lab, c in per.items()}
        overall = entry(total)
        # averages
        macro_p = _mean([e["precision"] for e in per_entries.values()])
        macro_r = _mean([e["recall"] for e in per_entries.values()])
        undefined = sorted(lab for lab, e in per_entries.items() if e["f"] is None)
        support = {lab: e["support"] for lab, e in per_entries.items()}
        wsum = sum(support.values())

        def weighted(key: str) -> float | None:
            if wsum == 0:
                return None
            vals = [(support[lab], e[key]) for lab, e in per_entries.items() if support[lab]]
            if any(v is None for _, v in vals):
                vals = [(w, v) for w, v in vals if v is not None]
                den = sum(w for w, _ in vals)
                return None if den == 0 else sum(w * v for w, v in vals) / den
            return sum(w * v for w, v in vals) / wsum

        averages = {
            "micro": {k: overall[k] for k in ("precision", "recall", "f1", "f")},
            "macro": {
                "precision": macro_p,
                "recall": macro_r,
                "f1": _mean([e["f1"] for e in per_entries.values()]),
                "f": _mean([e["f"] for e in per_entries.values()]),
                "f1_of_macro_pr": _f1(macro_p, macro_r),
                "undefined_labels": undefined,
            },
            "weighted": {
                "precision": weighted("precision"),
                "recall": weighted("recall"),
                "f1": weighted("f1"),
                "f": weighted("f"),
                "zero_weight_labels": sorted(lab for lab, w in support.items() if w == 0),
            },
        }
        slot: dict[str, Any] | None = {
            "C": total.C, "S": total.S, "D": total.D, "I": total.I, "N": total.N, "M": total.M,
            "ser": slot_error_rate(total), "err": muc_err(total), "e": makhoul_e(total, cfg.alpha),
            "ser_weighted": slot_error_rate(total, dict(zip("SDI", cfg.ser_weights))),
        } if full else None
        # token & separator model
        ts: dict[str, Any] | None = None
        if self.ts_error is None:
            if self.ts_cells is not None:  # weights already applied per t-unit
                tsw = {"beta": beta, "token_weight": 1.0, "separator_weight": 1.0}
                tot = self.ts_cells.sum(axis=0)
                per_ts = {lab: ts_measures(Counts(**dict(zip(TS_FIELDS, tot[j].tolist()))), **tsw)
                          for j, lab in enumerate(self.labels)}
                micro_ts = ts_measures(Counts(**dict(zip(TS_FIELDS, tot.sum(axis=0).tolist()))), **tsw)
            else:
                tsw = {"beta": beta, "token_weight": cfg.token_weight, "separator_weight": cfg.separator_weight}
                per_ts = {lab: ts_measures(c, **tsw) for lab, c in per.items()}
                micro_ts = ts_measures(total, **tsw)
            ts = {
                "f1_macro": _mean([m["ts"]["f1"] for m in per_ts.values()]),
                "f1_micro": micro_ts["ts"]["f1"],
                "token_f1_macro": _mean([m["tokens"]["f1"] for m in per_ts.values()]),
                "token_f1_micro": micro_ts["tokens"]["f1"],
                "accuracy_macro": _mean([m["ts"]["accuracy"] for m in per_ts.values()]),
                "kappa_macro": _mean([m["ts"]["kappa"] for m in per_ts.values()]),
                "per_label": per_ts,
            }
        tok = None
        tok_non_o = None
        n_tokens = None
        if self.token_counts is not None:
            t = column_sums(self.token_counts)
            n_tokens = int(t[0])
            tok = None if t[0] == 0 else float(t[1]) / float(t[0])
            tok_non_o = None if t[2] == 0 else float(t[3]) / float(t[2])
        return {
            "signature": cfg.signature(self),
            "documents": len(self.doc_ids),
            "tokens": n_tokens,
            "token_accuracy": tok,
            "token_accuracy_non_o": tok_non_o,
            "overall": overall,
            "per_label": per_entries,
            "slot_errors": slot,
            "ts": ts,
            "ts_error": self.ts_error,
            "averages": averages,
            "confusion": self.confusion_table(),
            "repairs": {k: dict(v) for k, v in self.repairs.items()},
        }

    # --- text -----------------------------------------------------------------------
    def format_table(self) -> str:
        """A conlleval-style table, then iescore's slot errors, TS model and signature."""
        s = self._summary
        o = self.overall

        def pct(x: float | None) -> str:
            return "   n/a" if x is None else f"{100 * x:6.2f}"

        def conll_prf(c: Counts) -> tuple[str, str, str]:
            # the same arithmetic as conlleval.pl: 100*correct/found, then FB1 from percentages
            p = 100 * c.tp / (c.tp + c.fp) if c.tp + c.fp else None
            r = 100 * c.tp / (c.tp + c.fn) if c.tp + c.fn else None
            f = (2 * p * r / (p + r) if (p + r) else 0.0) if p is not None and r is not None else (0.0 if (c.fp or c.fn) else None)
            def fmt(x: float | None) -> str:
                return "   n/a" if x is None else f"{x:6.2f}"
            return fmt(p), fmt(r), fmt(f)

        lines = []
        head = f"processed {s['tokens']} tokens with " if s["tokens"] is not None else f"{len(self.doc_ids)} documents with "
        full = self.config.detail == "full"
        n_ref, n_pred = (o.N, o.M) if full else (o.tp + o.fn, o.tp + o.fp)
        lines.append(f"{head}{n_ref} phrases; found: {n_pred} phrases; correct: {o.tp}.")
        p, r, f = conll_prf(o)
        acc = "" if s["token_accuracy"] is None else f"accuracy: {pct(s['token_accuracy'])}%; "
        lines.append(f"{acc}precision: {p}%; recall: {r}%; FB1: {f}")
        for lab in self.labels:
            c = self.counts(lab)
            p, r, f = conll_prf(c)
            lines.append(f"{lab:>17}: precision: {p}%; recall: {r}%; FB1: {f}  {c.M if full else c.tp + c.fp}")
        se = s["slot_errors"]
        if se is not None:
            lines.append(
                f"slot errors: C={se['C']} S={se['S']} D={se['D']} I={se['I']} (N={se['N']}, M={se['M']}); "
                f"SER: {pct(se['ser'])}%; ERR: {pct(se['err'])}%; E: {pct(se['e'])}%"
            )
        av = s["averages"]
        lines.append(
            f"averages F1: micro {pct(av['micro']['f1'])}%; macro {pct(av['macro']['f1'])}%; "
            f"weighted {pct(av['weighted']['f1'])}%"
        )
        if s["ts"] is not None:
            ts = s["ts"]
            lines.append(
                f"token & separator: TS-F1^M {pct(ts['f1_macro'])}%; TS-F1^mu {pct(ts['f1_micro'])}%; "
                f"T-F1^M {pct(ts['token_f1_macro'])}%"
            )
        else:
            lines.append(f"token & separator: unavailable ({self.ts_error})")
        for side, rep in s["repairs"].items():
            if any(rep.values()):
                lines.append(f"{side}: " + ", ".join(f"{k} {v}" for k, v in rep.items()))
        lines.append(f"signature: {self.signature}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.format_table()


def aggregate(reports: Sequence[Report], keys: Sequence[str] = ("precision", "recall", "f1", "ser")) -> dict[str, dict[str, float | None]]:
    """Mean and (sample) standard deviation of overall measures across folds or splits (SPEC §5)."""
    out: dict[str, dict[str, float | None]] = {}
    for k in keys:
        vals = [r.to_dict()["overall"][k] for r in reports]
        defined = [v for v in vals if v is not None]
        n = len(defined)
        mean = sum(defined) / n if n else None
        std = None
        if n > 1 and mean is not None:
            std = math.sqrt(sum((v - mean) ** 2 for v in defined) / (n - 1))
        out[k] = {"mean": mean, "std": std, "n": n}
    return out

