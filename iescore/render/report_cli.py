"""The views stage of the pipeline, on the command line: ``iescore report GOLD [PRED] --html OUT.html``.

``report`` takes every option of ``score`` (it prints the same output) and also writes
the HTML error report (`iescore.render.html`) of the same evaluation, with the
documents' tokens from the CoNLL file(s) (or, with ``--input-format`` and ``--level
tokens``, from the gold documents' text; relations and links under ``--task``); it says
on standard error where it wrote the page and how big it is. ``--error-counts N`` sets how many error rows the page lists
too (50 by default), besides adding them to the printed output.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from ..errors import ConfigError, choices

__all__ = ["add_report_parser", "write_report_html", "batch_tokens"]


def add_report_parser(sub: Any, score_parser: Any) -> None:
    """Add ``iescore report`` to the subcommands ``sub``: ``score``'s arguments and options
    (the option objects shared with ``score_parser``), with ``--html``, ``--title`` and ``--page-size``."""
    from ..stats.cli import (
        _copy_options,  # copies the evaluation and input groups, as compare and agree do
    )
    from .formats import add_output_options
    from .html import PAGE_SIZES

    rp = sub.add_parser(
        "report",
        help="score as iescore score does and write an HTML error report (--html OUT.html)",
        description="Score FILE (or gold FILE against PRED_FILE) as iescore score does, print the same "
                    "output, and write one self-contained HTML page (no network) with the signature, the "
                    "per-label table, the error categories, the confusion heatmap, the most frequent "
                    "errors by label and string (each occurrence in context, linked to its document) and "
                    "every document's text with its gold and predicted spans, filterable by label, "
                    "category, status and document.",
    )
    rp.add_argument("file", nargs="?", help="CoNLL file (- for standard input); with PRED_FILE, the gold file "
                                            "(with --input-format: a file or folder of that format)")
    rp.add_argument("pred_file", nargs="?", help="prediction file, aligned line by line with FILE (with "
                                                 "--input-format: its documents paired by id)")
    rp.add_argument("--example", action="store_true", help="report on the built-in example file")
    h = rp.add_argument_group("html")
    h.add_argument("--html", metavar="OUT.html", required=True, help="the HTML file to write")
    h.add_argument("--title", default="iescore error report", help="the page's title")
    h.add_argument("--page-size", type=int, default=20,
                   help=f"documents per page at first ({', '.join(map(str, PAGE_SIZES))} or any number; "
                        "the page also offers all); default 20")
    _copy_options(rp, score_parser)
    for group in score_parser._action_groups:  # brat, JSONL, DocBin, LLM files: score's input formats, shared
        if group.title == "input formats":
            g = rp.add_argument_group(group.title)
            for action in group._group_actions:
                g._add_action(action)
    add_output_options(rp.add_argument_group("output"))


def batch_tokens(batch: Any) -> list[Sequence[str]] | None:
    """Each document's tokens of a tagged batch (None when the file had no token column)."""
    if batch.tokens is None:
        return None
    offs = [int(x) for x in batch.doc_offsets] + [len(batch.tokens)]
    return [batch.tokens[offs[k] : offs[k + 1]] for k in range(len(batch.doc_ids))]


def write_report_html(args: Any, report: Any, batch: Any = None, *, tokens: Sequence[Sequence[str]] | None = None) -> None:
    """Write ``args.html`` and say where and how big on standard error; the documents'
    tokens are the CoNLL ``batch``'s, or ``tokens`` (character-offset input scored on tokens)."""
    from .html import ERROR_ROWS, write_html

    if args.page_size < 1:
        raise ConfigError(f"--page-size must be at least 1, got {args.page_size}; e.g. {choices((10, 20, 50))}")
    rows = ERROR_ROWS if args.error_counts is None else args.error_counts
    from .breakdown_inputs import breakdowns

    size = write_html(report, args.html, batch_tokens(batch) if batch is not None else tokens, title=args.title, page_size=args.page_size,
                      error_rows=rows, breakdowns=breakdowns(report, args.breakdown, encoding=args.encoding))
    n = len(report.doc_ids)
    print(f"iescore: wrote {args.html} ({size / 1e6:.2f} MB; {n} document{'' if n == 1 else 's'}, "
          f"{args.page_size} per page)", file=sys.stderr)
