"""The views stage of the pipeline: a report's false positives and false negatives counted
by label and string, most frequent first (seqscore's error counts), as rows, a text block,
CSV and Markdown sections.

An *error* is a predicted item of status ``FP`` or a reference item of status ``FN``
([`Report.items`][iescore.report.Report.items]); items of status ``TP``, ``ignored`` or
``alternative`` (the match modes' statuses) are not counted at all. Errors are grouped by
(error, label, text), where the text is the item's ``text``: its tokens joined by one
space for tag input and CoNLL files, the document's own characters (its spacing kept) for
character-offset input and Documents with separators, the filler for templates.

Rows are ranked by count (descending), then error (``FP`` before ``FN``), then label, then
text (both in code-point order); ``top`` keeps the first ``top`` rows (a tie at the cut is
cut as the order falls).

Example:
    >>> import iescore
    >>> r = iescore.score_tags(reference=[["B-LOC", "I-LOC", "O"], ["B-LOC", "I-LOC", "O"]],
    ...                        prediction=[["B-ORG", "I-ORG", "O"], ["B-ORG", "I-ORG", "B-PER"]],
    ...                        tokens=[["Santa", "Fe", "won"], ["Santa", "Fe", "lost"]])
    >>> for row in error_counts(r):
    ...     print(row)
    {'count': 2, 'error': 'FP', 'label': 'ORG', 'text': 'Santa Fe'}
    {'count': 2, 'error': 'FN', 'label': 'LOC', 'text': 'Santa Fe'}
    {'count': 1, 'error': 'FP', 'label': 'PER', 'text': 'lost'}
    >>> print(format_error_counts(r, 2))
    error counts (FP: predicted, not matched; FN: in the reference, not matched): 2 of 3 rows, 5 errors
    count  error  label  text
        2  FP     ORG    Santa Fe
        2  FN     LOC    Santa Fe
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from ..match.units import STATUS_NAMES

if TYPE_CHECKING:
    from ..items import ItemTable
    from ..report import Report

__all__ = ["error_counts", "error_groups", "ranked_errors", "format_error_counts", "error_counts_csv", "error_counts_markdown",
           "ERROR_FIELDS", "ERRORS", "check_top"]

ERROR_FIELDS = ("count", "error", "label", "text")
ERRORS = ("FP", "FN")  # the order of the ranking: a prediction's error, then an answer's
_SIDES = (("FP", "prediction"), ("FN", "reference"))
HEADING = "error counts (FP: predicted, not matched; FN: in the reference, not matched)"
# a line break or a tab inside a text, made visible on the one line of the text block
_VISIBLE = str.maketrans({"\n": "\\n", "\r": "\\r", "\t": "\\t"})


def check_top(top: int | str | None) -> int | None:
    """``top`` as a number of rows (None for all: ``None`` or ``"all"``); a ConfigError
    for anything else than a positive integer."""
    if top is None or top == "all":
        return None
    if isinstance(top, bool) or not isinstance(top, (int, np.integer)) or top < 1:
        from ..errors import ConfigError

        raise ConfigError(f"error counts: top must be a positive number of rows or 'all', got {top!r}")
    return int(top)


def _side_errors(report: Report, error: str, side: str) -> Iterator[tuple[str, str, int, int]]:
    """(label, text, document index, item index) of every item of ``side`` whose status is ``error``."""
    report.items(side)  # a report of totals keeps no items: its ConfigError says so, here
    t: ItemTable = report.prediction if side == "prediction" else report.reference
    where = np.flatnonzero(t.status == STATUS_NAMES.index(error))
    if where.size and t.text is None:
        from ..errors import ConfigError

        raise ConfigError("error counts group the errors by their text, and this report's items have none "
                          "(tag input without tokens): give the tokens (score_tags(..., tokens=...), a CoNLL "
                          "file with a token column)")
    labels = report.labels
    texts = t.text or ()
    for k, d, lab in zip(where.tolist(), t.doc[where].tolist(), t.label[where].tolist()):
        yield labels[lab], texts[k], d, k


def error_groups(report: Report) -> dict[tuple[str, str, str], list[tuple[int, int]]]:
    """Every error of ``report`` by (error, label, text): the (document index, item index)
    of each, in item order (items of the side the error names: predictions for ``FP``,
    answers for ``FN``)."""
    out: dict[tuple[str, str, str], list[tuple[int, int]]] = {}
    for error, side in _SIDES:
        for lab, text, d, k in _side_errors(report, error, side):
            out.setdefault((error, lab, text), []).append((d, k))
    return out


def ranked_errors(report: Report) -> list[tuple[tuple[str, str, str], list[tuple[int, int]]]]:
    """`error_groups`'s groups as (error, label, text) and occurrences, in the rank order of
    `error_counts` (count descending, ``FP`` before ``FN``, label, text)."""
    order = {e: n for n, e in enumerate(ERRORS)}
    return sorted(error_groups(report).items(), key=lambda kv: (-len(kv[1]), order[kv[0][0]], kv[0][1], kv[0][2]))


def error_counts(report: Report, top: int | str | None = None) -> list[dict[str, Any]]:
    """The false positives and false negatives of ``report`` counted by (error, label, text):
    ``{"count", "error", "label", "text"}`` dicts ranked by count (descending), then error
    (``FP`` before ``FN``), label and text; the first ``top`` of them (all for ``None`` or
    ``"all"``). Statuses other than FP and FN are not counted (see the module's docstring
    for what the text is). A ConfigError for a report of totals (no items are kept) or
    one whose items have no text."""
    n = check_top(top)
    return [{"count": len(occ), "error": e, "label": lab, "text": text}
            for (e, lab, text), occ in ranked_errors(report)[:n]]


def _all_and_top(report: Report, top: int | str | None) -> tuple[list[dict[str, Any]], int, int]:
    rows = error_counts(report)
    return rows[: check_top(top)], len(rows), sum(r["count"] for r in rows)


def _plural(n: int, what: str) -> str:
    return f"{n:,} {what}{'' if n == 1 else 's'}"


def _heading(shown: int, rows: int, errors: int) -> str:
    some = f"{shown:,} of {_plural(rows, 'row')}" if shown < rows else _plural(rows, "row")
    return f"{HEADING}: {some}, {_plural(errors, 'error')}"


def format_error_counts(report: Report, top: int | str | None = None) -> str:
    """The ranked rows of `error_counts` as a text block: a heading (rows shown, rows in
    all, errors in all), then ``count  error  label  text`` lines (a line break or tab in a
    text written ``\\n``, ``\\t``)."""
    rows, n_rows, n_errors = _all_and_top(report, top)
    wc = max([5] + [len(str(r["count"])) for r in rows])
    wl = max([5] + [len(r["label"]) for r in rows])
    out = [_heading(len(rows), n_rows, n_errors), f"{'count':>{wc}}  error  {'label':<{wl}}  text"]
    out += [f"{r['count']:>{wc}}  {r['error']:<5}  {r['label']:<{wl}}  {r['text'].translate(_VISIBLE)}".rstrip()
            for r in rows]
    return "\n".join(out)


def error_counts_csv(report: Report, top: int | str | None = None) -> list[list[Any]]:
    """The CSV section's rows: a header ``count,error,label,text``, then `error_counts`'s rows."""
    return [list(ERROR_FIELDS), *([r[k] for k in ERROR_FIELDS] for r in error_counts(report, top))]


def error_counts_markdown(report: Report, top: int | str | None = None) -> tuple[str, list[list[str]]]:
    """The Markdown section: its heading line and its table's body rows (count, error, label, text)."""
    rows, n_rows, n_errors = _all_and_top(report, top)
    heading = _heading(len(rows), n_rows, n_errors)
    return heading[0].upper() + heading[1:], [[str(r["count"]), r["error"], r["label"], r["text"]] for r in rows]
