"""The views stage of the pipeline: flat, float-only views of a report for integrations
(evaluate, Trainer, spaCy), and the rows of the SemEval-2013 scenarios and of the
per-document scores (a header row, then plain values) for the tabular outputs.

Integrations that must return floats map undefined values (``None``) through an
explicit ``zero_division`` (default 0.0, as seqeval does). Keys named ``f1`` hold
F1 whatever the configured beta; ``f_beta`` keys hold F_beta of the configured beta
(equal to F1 when beta = 1).

Example:
    >>> import iescore
    >>> r = iescore.score_tags(reference=[["B-PER", "O"]], prediction=[["O", "O"]])
    >>> flat_metrics(r)["f1"], flat_metrics(r)["PER_recall"]
    (0.0, 0.0)
"""

from __future__ import annotations

from typing import Any

from ..report import Report

__all__ = ["as_float", "seqeval_style", "flat_metrics", "semeval_rows", "document_rows"]


def as_float(x: Any, zero_division: float) -> float:
    """``x`` as a float, with ``None`` (undefined) mapped to ``zero_division``."""
    return float(zero_division) if x is None else float(x)


def _overall(report: Report, d: dict[str, Any], zero_division: float) -> dict[str, float]:
    av = d["averages"][report.config.average]
    se = d["slot_errors"]
    ts = d["ts"] or {}
    z = zero_division
    out = {
        "precision": as_float(av["precision"], z),
        "recall": as_float(av["recall"], z),
        "f1": as_float(av["f1"], z),
        "f_beta": as_float(av["f_beta"], z),
        "jaccard": as_float(av["jaccard"], z),
        "accuracy": as_float(d["token_accuracy"], z),
    }
    if se is not None:  # not computed under detail="prf": no key rather than a made-up error rate
        out.update({k: as_float(se[k], z) for k in ("ser", "err", "e")})
    out.update({
        "ts_f1_macro": as_float(ts.get("f1_macro"), z),
        "ts_f1_micro": as_float(ts.get("f1_micro"), z),
        "token_f1_macro": as_float(ts.get("token_f1_macro"), z),
        "micro_f1": as_float(d["averages"]["micro"]["f1"], z),
        "macro_f1": as_float(d["averages"]["macro"]["f1"], z),
        "weighted_f1": as_float(d["averages"]["weighted"]["f1"], z),
    })
    return out


def seqeval_style(report: Report, *, zero_division: float = 0.0) -> dict[str, Any]:
    """``evaluate``'s seqeval keys (``overall_precision``..., one dict per label with
    precision/recall/f1/number, exactly seqeval's) plus iescore's ``overall_*`` keys
    (``overall_f_beta`` and ``overall_jaccard`` among them), the slot counts, each label's
    Jaccard overlap as ``<LABEL>_jaccard`` (beside seqeval's dict of the label, which keeps
    seqeval's keys) and the ``signature`` string. Numbers are plain Python floats and ints.
    Under ``detail="prf"`` the slot errors are not computed and their keys are absent."""
    d = report.to_dict()
    out: dict[str, Any] = {}
    for label, e in d["per_label"].items():
        out[label] = {
            "precision": as_float(e["precision"], zero_division),
            "recall": as_float(e["recall"], zero_division),
            "f1": as_float(e["f1"], zero_division),
            "number": int(e["support"]),
        }
    out.update({f"overall_{k}": v for k, v in _overall(report, d, zero_division).items()})
    se = d["slot_errors"]
    if se is not None:
        out.update({f"overall_{k}": int(se[k]) for k in ("C", "S", "D", "I")})
    for label, e in d["per_label"].items():
        out[f"{label}_jaccard"] = as_float(e["jaccard"], zero_division)
    out["signature"] = report.signature
    return out


def flat_metrics(report: Report, *, zero_division: float = 0.0, per_label: bool = True) -> dict[str, float]:
    """Flat ``name -> float`` metrics (what a Trainer logs): overall measures, then
    ``<LABEL>_precision/recall/f1/f_beta/jaccard/number`` per label (``ser``/``err``/``e`` only
    when the slot errors were computed, i.e. not under ``detail="prf"``)."""
    d = report.to_dict()
    out = _overall(report, d, zero_division)
    if per_label:
        for label, e in d["per_label"].items():
            for k in ("precision", "recall", "f1", "f_beta", "jaccard"):
                out[f"{label}_{k}"] = as_float(e[k], zero_division)
            out[f"{label}_number"] = float(e["support"])
    return out


SEMEVAL_HEADER = ("scenario", "label", "COR", "INC", "PAR", "MIS", "SPU", "POS", "ACT", "precision", "recall", "f1")


def semeval_rows(report: Report) -> list[list[Any]]:
    """The SemEval-2013 scenarios as rows: the header, then per scenario the ``overall`` row
    and a row per label (each label on its own items); measures as floats, ``""`` where
    undefined. No rows where there is no alignment (match-best, ``detail="prf"``).

    >>> import iescore
    >>> r = iescore.score_tags(reference=[["B-PER", "I-PER"]], prediction=[["B-PER", "O"]])
    >>> semeval_rows(r)[1], semeval_rows(r)[5]
    (['strict', 'overall', 0, 1, 0, 0, 0, 1, 1, 0.0, 0.0, 0.0], ['partial', 'overall', 0, 0, 1, 0, 0, 1, 1, 0.5, 0.5, 0.5])
    """
    sem = report._full_summary("semeval")
    if sem is None:
        return []
    rows: list[list[Any]] = [list(SEMEVAL_HEADER)]
    for scenario in ("strict", "exact", "partial", "type"):
        for label, e in [("overall", sem[scenario]), *((lab, v[scenario]) for lab, v in sem["per_label"].items())]:
            rows.append([scenario, label, *(e[k] for k in SEMEVAL_HEADER[2:9]),
                         *("" if e[k] is None else e[k] for k in SEMEVAL_HEADER[9:])])
    return rows


def document_rows(report: Report) -> list[list[Any]]:
    """Every document's scores as rows: the header ``doc, tp, fp, fn, precision, recall,
    f1``, then a row per document (``""`` where undefined; `Report.per_document_measures`).

    >>> import iescore
    >>> document_rows(iescore.score_tags(reference=[["B-PER"], ["O"]], prediction=[["B-PER"], ["B-LOC"]]))
    [['doc', 'tp', 'fp', 'fn', 'precision', 'recall', 'f1'], ['0', 1, 0, 0, 1.0, 1.0, 1.0], ['1', 0, 1, 0, 0.0, '', 0.0]]
    """
    keys = ("tp", "fp", "fn", "precision", "recall", "f1")
    return [["doc", *keys], *([doc, *("" if e[k] is None else e[k] for k in keys)]
                              for doc, e in report.per_document_measures().items())]
