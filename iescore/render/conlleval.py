"""The views stage of the pipeline: the conlleval.pl table of a report.

A view reads a finished [`Report`][iescore.report.Report] and never recomputes a count;
this one prints, byte for byte, what conlleval.pl (version 2004-01-26) prints for
the same chunks (`format_conlleval`).
"""

from __future__ import annotations

import operator
from typing import TYPE_CHECKING, Any

import numpy as np

from ..summary import distinct_rows

if TYPE_CHECKING:
    from ..report import Report

__all__ = ["format_conlleval", "conlleval_lines"]


def format_conlleval(report: Report) -> str:
    """The conlleval.pl view (version 2004-01-26): byte for byte what conlleval prints
    for the same chunks, every line ending in a newline.

    ``processed T tokens with N phrases; found: M phrases; correct: C.``; when there
    are tokens, a line with token accuracy and overall precision, recall and FB1; then
    one line per type that has an answer or a prediction, with its precision, recall,
    FB1 and number of predicted chunks. As conlleval prints them: percentages are
    ``100*correct/found``, FB1 is computed from the two percentages, an undefined value
    prints as 0.00, type names are sorted and right-aligned in 17 bytes (longer names
    are not cut; a name is padded by its UTF-8 length), and a type named ``""`` or
    ``"0"`` with both answers and predictions is listed twice (conlleval's duplicate
    check takes these names for false).

    Other evaluation models print the report's own counts in the same layout
    (correct = TP, precision TP/(TP+FP), recall TP/(TP+FN)); input without a token
    count (spans, templates) counts documents on the first line and has no accuracy.

    Example (gold LOC, predicted PER: LOC has no prediction, PER no answer):
        >>> import iescore
        >>> r = iescore.score_tags(reference=[["B-LOC"]], prediction=[["B-PER"]])
        >>> print(r.format_conlleval(), end="")
        processed 1 tokens with 1 phrases; found: 1 phrases; correct: 0.
        accuracy:   0.00%; precision:   0.00%; recall:   0.00%; FB1:   0.00
                      LOC: precision:   0.00%; recall:   0.00%; FB1:   0.00  0
                      PER: precision:   0.00%; recall:   0.00%; FB1:   0.00  1
    """
    return "".join(line + "\n" for line in conlleval_lines(report))


def conlleval_lines(report: Report) -> list[str]:
    """The lines of `format_conlleval`, without their newlines."""
    s = report._summary
    o = s["overall"]

    def prf(e: dict[str, Any]) -> str:
        # conlleval's arithmetic: 100*correct/found, 0 when nothing was found; FB1 from those
        p = 100 * e["tp"] / (e["tp"] + e["fp"]) if e["tp"] + e["fp"] else 0.0
        r = 100 * e["tp"] / (e["tp"] + e["fn"]) if e["tp"] + e["fn"] else 0.0
        f = 2 * p * r / (p + r) if p + r else 0.0
        return f"precision: {p:6.2f}%; recall: {r:6.2f}%; FB1: {f:6.2f}"

    if s["tokens"] is None:
        lines = [f"{report.n_documents} documents with {o['support']} phrases; "
                 f"found: {o['predicted']} phrases; correct: {o['tp']}.", prf(o)]
    else:
        lines = [f"processed {s['tokens']} tokens with {o['support']} phrases; "
                 f"found: {o['predicted']} phrases; correct: {o['tp']}."]
        if s["tokens"] > 0:
            t = report.token_sums()
            assert t is not None
            lines.append(f"accuracy: {100 * int(t[1]) / int(t[0]):6.2f}%; {prf(o)}")
    # the types seen (an answer or a prediction), sorted (a report's labels are, as a rule);
    # prf()'s arithmetic done element-wise (numpy's float64 operations are Python's) and its
    # text formatted once per distinct row of counts, which the types of that row share
    per = report._labels_summary  # type: ignore[attr-defined]
    labels = report.labels
    order = np.arange(len(labels)) if all(map(operator.le, labels, labels[1:])) else \
        np.array(sorted(range(len(labels)), key=labels.__getitem__), dtype=np.int64)
    order = order[((per.support != 0) | (per.predicted != 0)).take(order)]
    seen = list(map(labels.__getitem__, order.tolist()))
    (tp, fp, fn, predicted), at = distinct_rows([np.asarray(a, dtype=np.int64).take(order) for a in
                                                 (per.counts["tp"], per.counts["fp"], per.counts["fn"], per.predicted)])
    p, r = (np.divide(100 * tp, n, out=np.zeros(len(tp)), where=n > 0) for n in (tp + fp, tp + fn))
    f = np.divide(2 * p * r, p + r, out=np.zeros(len(tp)), where=p + r > 0)
    fmt = "precision: %6.2f%%; recall: %6.2f%%; FB1: %6.2f  %d"
    text = list(map(fmt.__mod__, zip(p.tolist(), r.tolist(), f.tolist(), predicted.tolist())))
    # a name is right-aligned in 17 bytes of UTF-8: in 17 characters less its extra bytes
    n_bytes, n_chars = (np.fromiter(map(len, x), np.int64, len(seen)) for x in (map(str.encode, seen), seen))
    width = (17 - (n_bytes - n_chars)).tolist()
    rows = list(map("%*s: %s".__mod__, zip(width, seen, map(text.__getitem__, at))))
    for lab in ("0", ""):  # conlleval lists these twice (see above); "0" sorts after ""
        i = seen.index(lab) if lab in seen else -1
        if i >= 0 and per.support[order[i]] and per.predicted[order[i]]:
            rows.insert(i, rows[i])
    return lines + rows
