"""The views stage of the pipeline: the conlleval.pl table of a report.

A view reads a finished :class:`~iescore.report.Report` and never recomputes a count;
this one prints, byte for byte, what conlleval.pl (version 2004-01-26) prints for
the same chunks (:func:`format_conlleval`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any


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
    """The lines of :func:`format_conlleval`, without their newlines."""
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
    per = report._full_summary("per_label")
    for lab in sorted(report.labels):
        e = per[lab]
        if not (e["support"] or e["predicted"]):
            continue  # conlleval lists the types it has seen
        pad = " " * max(0, 17 - len(lab.encode("utf-8")))
        line = f"{pad}{lab}: {prf(e)}  {e['predicted']}"
        lines += [line, line] if lab in ("", "0") and e["support"] and e["predicted"] else [line]
    return lines
