"""The views stage of the pipeline: a report in the command line's output formats
(table, JSON, CSV, Markdown), with the confusion table, the error counts
(`iescore.render.errorcounts`), the breakdowns (`iescore.render.breakdowns`) and a
precision-recall curve over confidence thresholds (`iescore.stats.thresholds`, computed
by the caller) on request.

Every format reads the report's summary ([`Report.to_dict`][iescore.report.Report.to_dict]) and recomputes nothing.
Undefined values are empty cells in CSV, ``n/a`` in the table and Markdown, ``null`` in JSON.
Every format carries the signature: CSV on its first line, a comment (``# signature: ...``)
that ``pandas.read_csv(path, comment="#")`` skips (a cell holding ``#`` is quoted, so
such a reader keeps it whole).

Example:
    >>> import iescore
    >>> r = iescore.score_tags(reference=[["B-LOC", "O"]], prediction=[["B-PER", "O"]])
    >>> print(format_report(r, "csv").splitlines()[1])
    label,tp,fp,fn,support,predicted,precision,recall,f1,jaccard,correct,wrong_label,wrong_boundary,wrong_label_boundary,missed,spurious,type_C,type_S,type_D,type_I,extent_C,extent_S,extent_D,extent_I,multislot_ser
    >>> print(format_confusion(r))
    confusion (rows: reference, columns: prediction; none = missed or spurious):
                   LOC   PER  none
             LOC     0     1     0
             PER     0     0     0
            none     0     0     0
"""

from __future__ import annotations

import csv
import io
import sys
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..categories import CATEGORIES
from ..multislot import HEADINGS as SLOT_HEADINGS
from ..multislot import KINDS
from .breakdowns import (
    Breakdown,
    breakdown_csv,
    breakdown_markdown,
    format_breakdown,
    parse_breakdown,
)
from .categories import HEADINGS
from .errorcounts import (
    check_top,
    error_counts,
    error_counts_csv,
    error_counts_markdown,
    format_error_counts,
)
from .flat import document_rows, semeval_rows
from .jsontext import json_pieces, json_text, write_pieces

if TYPE_CHECKING:
    from ..report import Report

__all__ = ["FORMATS", "format_report", "report_pieces", "format_confusion", "confusion_grid", "MAX_CONFUSION_CELLS", "write_output",
           "add_output_options", "output_format", "error_counts_arg", "format_thresholds", "THRESHOLD_FIELDS"]

FORMATS = ("table", "json", "csv", "markdown")
_COUNTS = ("tp", "fp", "fn", "support", "predicted")
_MEASURES = ("precision", "recall", "f1", "jaccard")
THRESHOLD_FIELDS = ("threshold", "tp", "fp", "fn", "precision", "recall", "f1", "f_beta")
# the CSV's columns of Makhoul's multi-slot tags (iescore.multislot), after the error categories
MULTISLOT_COLUMNS = (*(f"{kind}_{k}" for kind in KINDS for k in "CSDI"), "multislot_ser")


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.2f}"


def _pct_sign(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.2f}%"


def format_thresholds(curve: Any) -> str:
    """A precision-recall curve's (`iescore.stats.thresholds.ThresholdCurve`) text block:
    its best point, how the points were found, and its note."""
    how = {"pairs": "from the candidate pairs", "matching": "from a largest matching grown over the thresholds"}.get(
        curve.method, "each scored again")
    head = (f"thresholds (predictions of confidence >= t kept): {len(curve):,} points of "
            f"{curve.distinct:,} distinct confidences, {how}")
    f = "F1" if curve.beta == 1 else f"F{curve.beta:g}"
    b = curve.best
    if b is None:
        best = f"best {f}: n/a (no F defined at any threshold)"
    else:
        best = (f"best {f} {_pct_sign(b.f_beta)} at t = {b.threshold!r}: precision {_pct_sign(b.precision)}, recall "
                f"{_pct_sign(b.recall)} (tp {b.tp}, fp {b.fp}, fn {b.fn})")
    return "\n".join([head, best] + ([curve.note] if curve.note else []))


def _thresholds_csv(curve: Any) -> list[list[Any]]:
    rows: list[list[Any]] = [list(THRESHOLD_FIELDS)]
    for k in range(len(curve)):
        d = curve.point(k).to_dict()
        rows.append([("" if d[c] is None else repr(d[c]) if isinstance(d[c], float) else d[c]) for c in THRESHOLD_FIELDS])
    return rows


def format_report(report: Report, fmt: str = "table", *, confusion: bool = False,
                  error_counts: int | str | None = None, breakdowns: Sequence[Breakdown] = (),
                  thresholds: Any = None, semeval: bool = False, per_document: bool = False) -> str:
    """The report in ``fmt`` (one of `FORMATS`); ``confusion`` adds the confusion
    table (the text table: before the signature line; CSV and Markdown: after the rest;
    JSON always holds it as ``confusion``). ``error_counts`` (a number of rows, or ``"all"``)
    adds the first rows of [`error_counts`][iescore.render.errorcounts.error_counts]: the
    text table's block before the signature line (after the confusion table), a section
    after the rest in CSV and Markdown, a top-level ``error_counts`` list in JSON; ``None``
    adds nothing. ``breakdowns`` ([`Breakdown`][iescore.render.breakdowns.Breakdown] s) add
    one block each (the text table's before the signature line, after the error counts; a
    section each in CSV and Markdown; a top-level ``breakdowns`` list in JSON);
    ``thresholds`` (a [`ThresholdCurve`][iescore.stats.thresholds.ThresholdCurve]) adds its
    best point (text table and Markdown: one block), its points (a CSV section) or its
    ``to_dict()`` (a top-level ``thresholds`` object in JSON). ``semeval`` adds the
    SemEval-2013 scenarios per label (`semeval_rows`), a section in CSV and a table in
    Markdown; ``per_document`` the per-document precision, recall and F1
    (`document_rows`; the report must keep its documents), a section in CSV and a table in
    Markdown; the text table always has the overall scenarios and the document-macro line,
    JSON ``semeval`` and ``doc_macro``. Makhoul's multi-slot tags (`iescore.multislot`) are
    the text table's block, CSV columns after the error categories, a Markdown table after
    the scenarios and documents, JSON ``multislot``. JSON is
    ``json.dumps(report.to_dict(), indent=2)``'s text (`jsontext` writes it faster)."""
    extra = (tuple(breakdowns), thresholds)
    if fmt == "json":
        return json_text(_json_tree(report, error_counts, *extra))
    if fmt == "csv":
        return _csv(report, confusion, error_counts, *extra, semeval=semeval, per_document=per_document)
    if fmt == "markdown":
        return _markdown(report, confusion, error_counts, *extra, semeval=semeval, per_document=per_document)
    if fmt == "table":
        lines = report.format_table().split("\n")
        if confusion:
            lines[-1:-1] = format_confusion(report).split("\n")
        if error_counts is not None:
            lines[-1:-1] = format_error_counts(report, error_counts).split("\n")
        for b in breakdowns:
            lines[-1:-1] = format_breakdown(b).split("\n")
        if thresholds is not None:
            lines[-1:-1] = format_thresholds(thresholds).split("\n")
        return "\n".join(lines)
    from ..errors import ConfigError, choices

    raise ConfigError(f"unknown output format {fmt!r}; formats: {choices(FORMATS)}")


def report_pieces(report: Report, fmt: str = "table", *, confusion: bool = False,
                  error_counts: int | str | None = None, breakdowns: Sequence[Breakdown] = (),
                  thresholds: Any = None, semeval: bool = False, per_document: bool = False) -> Iterator[str]:
    """`format_report`'s text in pieces: JSON's as it is written (a large report's
    text is never held whole), the other formats' in one piece. Whatever cannot be
    made (error counts of a report without items) raises here, before a piece is written."""
    if fmt == "json":
        return json_pieces(_json_tree(report, error_counts, tuple(breakdowns), thresholds))
    return iter((format_report(report, fmt, confusion=confusion, error_counts=error_counts, breakdowns=breakdowns,
                               thresholds=thresholds, semeval=semeval, per_document=per_document),))


def _json_tree(report: Report, top: int | str | None, breakdowns: Sequence[Breakdown] = (),
               thresholds: Any = None) -> dict[str, Any]:
    """``report.to_dict()``, with ``error_counts``, ``breakdowns`` and ``thresholds`` last
    when asked for."""
    d = report.to_dict()
    if top is not None:
        d["error_counts"] = error_counts(report, top)
    if breakdowns:
        d["breakdowns"] = [b.to_dict() for b in breakdowns]
    if thresholds is not None:
        d["thresholds"] = thresholds.to_dict()
    return d


def _names(report: Report) -> list[str]:
    return list(report.labels) + ["none"]


# the largest confusion table printed, in cells ("none" included): 3,161 labels
MAX_CONFUSION_CELLS = 10_000_000


def confusion_grid(report: Report, *, limit: int = MAX_CONFUSION_CELLS) -> np.ndarray:
    """The dense confusion table, built once (``(labels + 1)²`` cells, "none" last); a
    ConfigError when it would hold more than ``limit`` cells."""
    n = len(report.labels) + 1
    if n * n > limit:
        from ..errors import ConfigError

        raise ConfigError(f"the confusion table of {n - 1:,} labels has {n * n:,} cells, more than the {limit:,} "
                          "printed; its non-zero pairs are in the JSON output's \"confusion\" (--format json) "
                          "and in Report.confusion_table()")
    return report.confusion


def format_confusion(report: Report) -> str:
    """The confusion table of the slot alignment as text: reference labels in rows,
    predicted labels in columns, ``none`` for missed (last column) and spurious (last row);
    a ConfigError beyond `MAX_CONFUSION_CELLS` cells (`confusion_grid`)."""
    names = _names(report)
    grid = confusion_grid(report)
    w = max([len(n) for n in names] + [len(str(int(grid.max()))), 4])
    out = ["confusion (rows: reference, columns: prediction; none = missed or spurious):",
           " " * 12 + "".join(f"{n:>{w + 2}}" for n in names)]
    for a, row in zip(names, grid.tolist()):
        out.append(f"{a:>12}" + "".join(f"{x:>{w + 2}}" for x in row))
    return "\n".join(out)


def _rows(report: Report) -> list[tuple[str, dict[str, Any], dict[str, int] | None, dict[str, Any] | None]]:
    """Per label, then overall: the entry, the error categories and the multi-slot entry (or None)."""
    d = report.to_dict()
    cats, slots = d["categories"], d["multislot"]
    rows = [(lab, e, None if cats is None else cats["per_label"][lab], None if slots is None else slots["per_label"][lab])
            for lab, e in d["per_label"].items()]
    rows.append(("overall", d["overall"], None if cats is None else cats["overall"],
                 None if slots is None else slots["overall"]))
    return rows


def _slot_cells(m: dict[str, Any]) -> list[Any]:
    """A multi-slot entry's `MULTISLOT_COLUMNS`: the type slot's C, S, D, I, the extent slot's, SER over both."""
    return [m[kind][k] for kind in KINDS for k in "CSDI"] + [m["ser"]]


class _Quoted:
    """A csv writer that also quotes a cell holding ``#`` (a reader skipping ``#`` comments
    keeps a quoted cell whole)."""

    def __init__(self, buf: io.StringIO) -> None:
        self.w = csv.writer(buf, lineterminator="\n")
        self.q = csv.writer(buf, lineterminator="\n", quoting=csv.QUOTE_ALL)

    def writerow(self, row: list[Any]) -> None:
        (self.q if any("#" in str(c) for c in row) else self.w).writerow(row)


def _csv(report: Report, confusion: bool, top: int | str | None = None, breakdowns: Sequence[Breakdown] = (),
         thresholds: Any = None, *, semeval: bool = False, per_document: bool = False) -> str:
    buf = io.StringIO()
    buf.write(f"# signature: {report.signature}\n")  # pandas.read_csv(..., comment="#") skips it
    w = _Quoted(buf)
    has_cats, has_slots = report.categories is not None, report.multislot is not None
    w.writerow(["label", *_COUNTS, *_MEASURES, *(CATEGORIES if has_cats else ()), *(MULTISLOT_COLUMNS if has_slots else ())])
    for lab, e, c, m in _rows(report):
        w.writerow([lab, *(e[k] for k in _COUNTS), *("" if e[k] is None else repr(e[k]) for k in _MEASURES),
                    *((c[k] for k in CATEGORIES) if c is not None else ()),
                    *(("" if x is None else repr(x) if isinstance(x, float) else x for x in _slot_cells(m))
                      if m is not None else ())])
    if confusion:
        buf.write("\n")
        names = _names(report)
        w.writerow(["reference\\prediction", *names])
        for a, row in zip(names, confusion_grid(report).tolist()):
            w.writerow([a, *row])
    for section in ((semeval_rows(report) if semeval else []), (document_rows(report) if per_document else [])):
        if section:  # each its own header row
            buf.write("\n")
            for row in section:
                w.writerow(row)
    if top is not None:  # a section of its own: its header row, then one row per (error, label, text)
        buf.write("\n")
        for row in error_counts_csv(report, top):
            w.writerow(row)
    sections = [breakdown_csv(b) for b in breakdowns] + ([_thresholds_csv(thresholds)] if thresholds is not None else [])
    for section in sections:  # each its own header row
        buf.write("\n")
        for row in section:
            w.writerow(row)
    return buf.getvalue().rstrip("\n")


_MD_SPECIAL = "\\`*_{}[]()<>#+-!|&~"
# each special character backslash-escaped, a line break made a space (one C-level pass)
_MD_ESCAPES = str.maketrans({**{ch: "\\" + ch for ch in _MD_SPECIAL}, "\r": " ", "\n": " "})


def _md_cell(text: str) -> str:
    """A Markdown table cell holding ``text`` as text: Markdown's and HTML's special
    characters backslash-escaped (CommonMark), no line break.

    >>> _md_cell('<img src=x>|a_b')
    '\\\\<img src=x\\\\>\\\\|a\\\\_b'
    """
    return text.translate(_MD_ESCAPES)


def _markdown(report: Report, confusion: bool, top: int | str | None = None, breakdowns: Sequence[Breakdown] = (),
              thresholds: Any = None, *, semeval: bool = False, per_document: bool = False) -> str:
    def pct(x: float | None) -> str:
        return "n/a" if x is None else f"{100 * x:.2f}"

    def table(head: list[str], body: list[list[str]], right: set[int] | None = None) -> list[str]:
        """A Markdown table; the columns ``right`` right-aligned (all but the first by default)."""
        at = set(range(1, len(head))) if right is None else right
        out = ["| " + " | ".join(_md_cell(h) for h in head) + " |", "|" + "|".join("---:" if k in at else "---"
                                                                              for k in range(len(head))) + "|"]
        return out + ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in body]

    rows = _rows(report)
    lines = table(["label", *_COUNTS, "precision %", "recall %", "F1 %", "Jaccard %"],
                  [[lab, *(str(e[k]) for k in _COUNTS), *(pct(e[k]) for k in _MEASURES)] for lab, e, *_ in rows])
    if report.categories is not None:
        lines += ["", "Error categories (see the manual, Concepts: Error categories):", ""]
        lines += table(["label", *HEADINGS], [[lab, *(str(c[k]) for k in CATEGORIES)] for lab, _, c, _ in rows if c])
    if semeval and (sem := semeval_rows(report)):
        lines += ["", "SemEval-2013 scenarios (see the manual, Concepts: Measures and averages):", ""]
        lines += table(sem[0][:9] + ["precision %", "recall %", "F1 %"],
                       [[*map(str, r[:9]), *(pct(None if x == "" else x) for x in r[9:])] for r in sem[1:]],
                       set(range(2, 12)))
    if per_document:
        docs = document_rows(report)
        lines += ["", "Documents:", ""]
        lines += table(["doc", "tp", "fp", "fn", "precision %", "recall %", "F1 %"],
                       [[str(r[0]), *map(str, r[1:4]), *(pct(None if x == "" else x) for x in r[4:])] for r in docs[1:]])
    if report.multislot is not None:
        lines += ["", "Multi-slot tags (see the manual, Concepts: Measures and averages):", ""]
        lines += table(["label", *SLOT_HEADINGS[:-1], "SER %"],
                       [[lab, *map(str, _slot_cells(m)[:-1]), pct(m["ser"])] for lab, _, _, m in rows if m])
    if confusion:
        names = _names(report)
        lines += ["", "Confusion (rows: reference, columns: prediction; none = missed or spurious):", ""]
        lines += table(["reference \\ prediction", *names],
                       [[a, *map(str, row)] for a, row in zip(names, confusion_grid(report).tolist())])
    if top is not None:
        heading, body = error_counts_markdown(report, top)
        lines += ["", heading + ":", ""] + table(["count", "error", "label", "text"], body, {0})
    for b in breakdowns:
        heading, head, body = breakdown_markdown(b)
        lines += ["", heading + ":", ""] + table(head, body)
    if thresholds is not None:
        text = format_thresholds(thresholds).split("\n")
        lines += ["", text[0][0].upper() + text[0][1:] + ":", "", *("- " + x for x in text[1:])]
    lines += ["", f"Signature: `{report.signature}`"]
    return "\n".join(lines)


def write_output(text: str | Iterable[str], path: str | None) -> None:
    """Print ``text`` (a newline added), or write it to ``path`` (UTF-8, atomically:
    `atomic_write`); ``text`` may come in pieces (`report_pieces`),
    written as they come, about 256 KiB at a time. An unwritable path is an InputError naming it."""
    pieces = (text,) if isinstance(text, str) else text
    if path is None or path == "-":
        write_pieces(pieces, sys.stdout, end="\n")
        return
    from ..atomic import atomic_write
    from ..errors import InputError

    try:  # whole or not at all: an interrupted write leaves the old file (iescore.atomic)
        with atomic_write(path) as fh:
            write_pieces(pieces, fh, end="\n")
    except OSError as exc:
        raise InputError(f"--output {path!r}: cannot write the file ({exc.strerror or exc})") from None


def error_counts_arg(value: str) -> int | str:
    """``--error-counts``'s value: a positive number of rows, or ``all``."""
    import argparse

    from ..errors import ConfigError

    try:
        return check_top(value if value == "all" else int(value)) or "all"
    except (ValueError, ConfigError):
        raise argparse.ArgumentTypeError(f"expected a positive number of rows or all, got {value!r} (a FILE "
                                         "goes before --error-counts, or write --error-counts=N)") from None


def breakdown_arg(value: str) -> tuple[str, str | None]:
    """``--breakdown``'s value: ``length``, ``seen:TRAINFILE`` or ``attr:FILE``."""
    import argparse

    from ..errors import ConfigError

    try:
        return parse_breakdown(value)
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("--breakdown: ")) from None


def _thresholds_arg(value: str) -> int:
    import argparse

    try:
        n = int(value)
    except ValueError:
        n = 0
    if n < 2:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 2, got {value!r}")
    return n


def add_output_options(group: Any) -> None:
    """The command line's output options (``--format``, ``--output``, ``--confusion``,
    ``--error-counts [N]``, ``--semeval``, ``--per-document``, ``--breakdown SPEC``, ``--thresholds``,
    ``--max-thresholds N``)."""
    group.add_argument("--format", choices=FORMATS, default=None,
                       help="output format: table (conlleval's lines, then iescore's), json (the report as one "
                            "JSON object), csv (one row per label and overall), markdown (tables); default table")
    group.add_argument("--output", metavar="FILE", default=None,
                       help="write the output to FILE (UTF-8) instead of standard output")
    group.add_argument("--confusion", action="store_true",
                       help="add the confusion table (reference label x predicted label of the slot alignment, "
                            "none for missed and spurious items) to the table, csv or markdown output")
    group.add_argument("--error-counts", metavar="N", nargs="?", const="all", default=None, type=error_counts_arg,
                       help="add the false positives and false negatives counted by label and string, most "
                            "frequent first (the first N rows; all without N): a block in the table, a section "
                            "in csv and markdown, error_counts in json; needs the tokens (a CoNLL token column)")
    group.add_argument("--breakdown", metavar="SPEC", action="append", default=[], type=breakdown_arg,
                       help="add precision, recall and F1 by group (repeatable): length (tokens: 1, 2, 3, 4, 5+), "
                            "seen:TRAINFILE (is the label and text a mention of the CoNLL training file, its last "
                            "column the gold tags) or attr:FILE (lines of a document id, a tab and its value); a block each in the "
                            "table, a section each in csv and markdown, breakdowns in json")
    group.add_argument("--semeval", action="store_true",
                       help="add the SemEval-2013 scenarios (strict, exact, partial, type) per label: a section in "
                            "csv, a table in markdown (the table shows them overall, json always holds them)")
    group.add_argument("--per-document", action="store_true",
                       help="add precision, recall and F1 of every document: a section in csv, a table in markdown "
                            "(the table and json hold their document-macro average); needs the documents kept")
    group.add_argument("--thresholds", action="store_true",
                       help="add precision, recall and F at every confidence threshold of the predictions (those "
                            "of confidence >= t kept): the best point in the table and markdown, every point in "
                            "csv, thresholds in json; needs a confidence on every prediction (a JSONL span's score)")
    group.add_argument("--max-thresholds", metavar="N", type=_thresholds_arg, default=200,
                       help="with --thresholds under match-best, one-per-string or OBD (each threshold scored "
                            "again): at most N thresholds, taken at quantiles; default 200")


def output_format(parser: Any, args: Any) -> str:
    """The format asked for: ``--format``, or ``json`` for ``--json``; both differing is a usage error."""
    if args.json and args.format not in (None, "json"):
        parser.error(f"--json and --format {args.format} disagree; give one of them")
    return args.format or ("json" if args.json else "table")
