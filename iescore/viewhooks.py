"""The report stage of the pipeline, its hooks to the views: the table through which the
report reaches its renderers without importing them.

Layers import downward only, and the views (`iescore.render`) sit above the report:
so the report defines `VIEWS`, a table of view functions by name, and
`iescore.render.notebook` fills it when ``import iescore`` imports it. The report's
methods that show it (``format_table``, ``_repr_html_``, ``to_pandas``, ``to_html``...)
look their renderer up here (`ReportViews`, a base class of
[`Report`][iescore.report.Report]); ``repr(report)`` reads the report's own numbers.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["VIEWS", "ReportViews", "short"]

# name -> view function, filled by iescore.render.notebook (imported by iescore/__init__.py)
VIEWS: dict[str, Callable[..., Any]] = {}


def short(signature: str, width: int = 72) -> str:
    """``signature`` cut to ``width`` characters, ``...`` marking the cut.

    >>> short("iescore|setting:AO|rule:E", 16)
    'iescore|setti...'
    """
    return signature if len(signature) <= width else signature[: width - 3] + "..."


def _num(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.4f}"


class ReportViews:
    """The views of [`Report`][iescore.report.Report] that live in `iescore.render`,
    reached through `VIEWS` (render sits above the report, which never imports it)."""

    def __repr__(self) -> str:
        """One line: documents, labels, the headline P/R/F and the signature, shortened
        (``report.signature`` is whole)."""
        r: Any = self
        return (f"Report(documents={r.n_documents}, labels={len(r.labels)}, average={r.config.average!r}, "
                f"precision={_num(r.precision)}, recall={_num(r.recall)}, f1={_num(r.f1)}, "
                f"signature={short(r.signature)!r})")

    def format_conlleval(self) -> str:
        """The conlleval.pl view (`iescore.render.conlleval.format_conlleval`): byte
        for byte what conlleval (version 2004-01-26) prints for the same chunks."""
        return VIEWS["conlleval"](self)  # type: ignore[no-any-return]

    def format_table(self) -> str:
        """The default table (`iescore.render.table.format_table`): the conlleval view,
        then iescore's lines (headline average, slot errors, averages, TS model, repairs,
        signature)."""
        return VIEWS["table"](self)  # type: ignore[no-any-return]

    def __str__(self) -> str:
        return self.format_table()

    def _repr_html_(self) -> str:
        """The compact HTML table a notebook shows (`iescore.render.notebook.report_html`):
        overall and per-label P/R/F with TP/FP/FN (``n/a`` where undefined), the signature under it."""
        return VIEWS["report_html"](self)  # type: ignore[no-any-return]

    def to_pandas(self, *, averages: bool = True) -> Any:
        """A pandas DataFrame (`iescore.render.notebook.report_frame`): one row per label
        (columns ``label, tp, fp, fn, precision, recall, f1, support, predicted``, ``f_beta``
        too when beta is not 1; NaN where undefined), then with ``averages`` the rows
        ``micro avg``, ``macro avg`` and ``weighted avg`` (their ``tp, fp, fn`` empty but
        micro's); ``frame.attrs["signature"]`` is the signature. Needs pandas
        (``pip install pandas``); ``import iescore`` never imports it."""
        return VIEWS["report_frame"](self, averages=averages)

    def to_html(self, path: str | os.PathLike[str], tokens: Sequence[Sequence[str]] | None = None, *,
                title: str = "iescore error report", page_size: int = 20) -> int:
        """Write the HTML error report (`iescore.render.html.write_html`, the page of
        ``iescore report --html``) to ``path``, atomically; the file's size in bytes.
        ``tokens[k]`` are document ``k``'s tokens (by default those kept by
        `iescore.score_files` for a CoNLL file; without tokens each item is shown
        with its text). Needs Jinja2 (``pip install 'iescore[html]'``)."""
        if tokens is None:
            tokens = self.__dict__.get("_tokens")
        return VIEWS["write_html"](self, os.fspath(path), tokens, option="to_html", title=title,  # type: ignore[no-any-return]
                                   page_size=page_size)
