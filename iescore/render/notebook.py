"""The views stage of the pipeline, for notebooks and data tools: compact HTML tables (a
notebook's ``_repr_html_``) and pandas DataFrames of a report, a comparison of systems
and an agreement result, each with its signature.

Importing this module fills the report's view table (`iescore.viewhooks.VIEWS`;
``import iescore`` does it), so that [`Report`][iescore.report.Report] reaches its
renderers without importing them. Text reaches the HTML escaped (`html.escape`);
undefined values show as ``n/a`` there, as in the text table, and as NaN in a DataFrame
(pandas is imported only when a DataFrame is asked for: ``pip install pandas``).

Example:
    >>> import iescore
    >>> r = iescore.score_tags(reference=[["B-LOC", "O"]], prediction=[["B-LOC", "O"]])
    >>> "<td>LOC</td>" in r._repr_html_()
    True
"""

from __future__ import annotations

import html
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from ..viewhooks import VIEWS
from .conlleval import format_conlleval
from .html import write_html, write_page
from .jsontext import json_text
from .table import format_table

if TYPE_CHECKING:
    from ..report import Report

__all__ = ["report_html", "report_frame", "report_rows", "comparison_html", "comparison_frame", "agreement_html",
           "agreement_frame", "write_table_html", "MAX_HTML_LABELS", "AVERAGE_ROWS"]

# the label rows a notebook shows; the others are counted under the table (to_pandas has them all)
MAX_HTML_LABELS = 50
AVERAGE_ROWS = ("micro avg", "macro avg", "weighted avg")
_COUNTS = ("tp", "fp", "fn")
_AFTER = ("support", "predicted")


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.2f}"


def _measures(report: Report) -> tuple[str, ...]:
    return ("precision", "recall", "f1") + (() if report.config.beta == 1 else ("f_beta",))


def report_rows(report: Report, averages: bool = True) -> list[dict[str, Any]]:
    """One dict per label, then (``averages``) ``micro avg``, ``macro avg`` and ``weighted avg``:
    ``label``, ``tp``, ``fp``, ``fn`` (``None`` on the macro and weighted rows), the measures
    (``None`` where undefined), ``support`` and ``predicted``."""
    d = report.to_dict()
    keys = (*_COUNTS, *_measures(report), *_AFTER)
    rows = [{"label": lab, **{k: e[k] for k in keys}} for lab, e in d["per_label"].items()]
    if averages:
        total = {k: d["overall"][k] for k in _AFTER}
        for name, av in zip(AVERAGE_ROWS, ("micro", "macro", "weighted")):
            counts = {k: d["overall"][k] if av == "micro" else None for k in _COUNTS}
            rows.append({"label": name, **counts, **{k: d["averages"][av][k] for k in _measures(report)}, **total})
    return rows


def _table(head: Sequence[str], rows: Iterable[Sequence[str]], notes: Sequence[str]) -> str:
    """An HTML table of text cells (escaped here), with lines of notes (escaped) under it."""
    e = html.escape
    out = ['<div class="iescore">', "<table>", "<thead><tr>" + "".join(f"<th>{e(h)}</th>" for h in head) + "</tr></thead>",
           "<tbody>"]
    out += ["<tr>" + "".join(f"<td>{e(c)}</td>" for c in row) + "</tr>" for row in rows]
    out += ["</tbody>", "</table>"] + [f"<p>{e(n)}</p>" for n in notes] + ["</div>"]
    return "\n".join(out)


def report_html(report: Report) -> str:
    """The report as a compact HTML table: a row per label (at most `MAX_HTML_LABELS`)
    with TP, FP, FN and P/R/F in percent (``n/a`` where undefined), then the micro, macro and
    weighted averages; the documents, the headline average and the signature under it."""
    rows = report_rows(report)
    labels, avg = rows[: len(rows) - 3], rows[len(rows) - 3 :]
    measures = _measures(report)
    head = ["label", "TP", "FP", "FN", *(f"{m} %" for m in measures), "support"]

    def cells(r: dict[str, Any]) -> list[str]:
        return [r["label"], *("" if r[k] is None else str(r[k]) for k in _COUNTS), *(_pct(r[m]) for m in measures),
                str(r["support"])]

    shown = labels[:MAX_HTML_LABELS]
    notes = []
    if len(labels) > len(shown):
        notes.append(f"{len(labels) - len(shown):,} more labels (report.to_pandas() has every label)")
    n = report.n_documents
    notes.append(f"{n:,} document{'' if n == 1 else 's'}; headline average: {report.config.average}")
    notes.append(f"signature: {report.signature}")
    return _table(head, [cells(r) for r in shown + avg], notes)


def _pandas() -> Any:
    import importlib

    try:
        return importlib.import_module("pandas")  # optional, and untyped for mypy
    except ImportError:
        raise ImportError("a DataFrame needs pandas, which is not installed: pip install pandas") from None


def _frame(rows: list[dict[str, Any]], ints: Sequence[str], signature: str) -> Any:
    pd = _pandas()
    df = pd.DataFrame(rows)
    for k in ints:  # counts stay integers, empty (<NA>) where a row has none
        df[k] = df[k].astype("Int64")
    for k in df.columns:
        if df[k].dtype == object and all(v is None or isinstance(v, (int, float)) and not isinstance(v, bool)
                                         for v in df[k]):
            df[k] = df[k].astype("float64")  # undefined measures: NaN
    df.attrs["signature"] = signature
    return df


def report_frame(report: Report, averages: bool = True) -> Any:
    """The rows of `report_rows` as a DataFrame (counts ``Int64``, ``<NA>`` on the macro
    and weighted rows; measures ``float64``, NaN where undefined); ``attrs["signature"]``."""
    rows = report_rows(report, averages)
    if not rows:  # no label, no averages
        df = _pandas().DataFrame(columns=["label", *_COUNTS, *_measures(report), *_AFTER])
        df.attrs["signature"] = report.signature
        return df
    return _frame(rows, (*_COUNTS, *_AFTER), report.signature)


# --- comparisons and agreement ---------------------------------------------------------
# (what these views read of `iescore.stats.paired.Comparison` and `iescore.stats.agreement.Agreement`:
# the statistics sit above the views and call them, so the views name no statistics module)

class _Comparison(Protocol):
    @property
    def signature(self) -> str: ...
    @property
    def baseline(self) -> str: ...
    @property
    def measure(self) -> str: ...
    @property
    def measures(self) -> tuple[str, ...]: ...
    @property
    def systems(self) -> tuple[Mapping[str, Any], ...]: ...
    @property
    def level(self) -> float: ...
    @property
    def alpha(self) -> float: ...
    @property
    def resamples(self) -> int | str: ...
    @property
    def test_name(self) -> str: ...


class _Agreement(Protocol):
    @property
    def signature(self) -> str: ...
    @property
    def pairs(self) -> tuple[Mapping[str, Any], ...]: ...
    @property
    def annotators(self) -> tuple[str, ...]: ...
    @property
    def fleiss_kappa(self) -> float | None: ...
    @property
    def t_units(self) -> int: ...


def _comparison_rows(c: _Comparison) -> list[dict[str, Any]]:
    out = []
    for s in c.systems:
        row: dict[str, Any] = {"system": s["name"], "baseline": s["name"] == c.baseline}
        for m in c.measures:
            ci = s[f"{m}_ci"]
            row.update({m: s[m], f"{m}_ci_low": ci[0] if ci else None, f"{m}_ci_high": ci[1] if ci else None})
        row.update({k: s[k] for k in ("p_value", "p_value_holm", "significant", "group")})
        out.append(row)
    return out


def comparison_frame(c: _Comparison) -> Any:
    """One row per system: ``system``, ``baseline`` (a bool), each measure with its interval
    (``<measure>_ci_low``, ``<measure>_ci_high``), ``p_value``, ``p_value_holm``,
    ``significant`` (``None`` for the baseline) and ``group``; ``attrs["signature"]``."""
    return _frame(_comparison_rows(c), ("group",), c.signature)


def comparison_html(c: _Comparison) -> str:
    """The comparison as a compact HTML table (the rows of ``iescore compare``'s table)."""
    head = ["system", *(f"{m} % [{100 * c.level:g}% CI]" for m in c.measures), "p", "p (Holm)", "group"]
    rows = []
    for s in _comparison_rows(c):
        cells = [s["system"] + (" (baseline)" if s["baseline"] else "")]
        cells += [f"{_pct(s[m])} [{_pct(s[m + '_ci_low'])}, {_pct(s[m + '_ci_high'])}]" for m in c.measures]
        cells += ["-" if s["p_value"] is None else f"{s['p_value']:.4f}",
                  "-" if s["p_value_holm"] is None else f"{s['p_value_holm']:.4f}" + ("*" if s["significant"] else ""),
                  str(s["group"])]
        rows.append(cells)
    notes = [f"p: {c.test_name} of {c.measure} against {c.baseline}, {c.resamples} resamples; * = significant at "
             f"{c.alpha:g} after Holm-Bonferroni correction", f"signature: {c.signature}"]
    return _table(head, rows, notes)


def agreement_frame(a: _Agreement) -> Any:
    """One row per pair of annotators: ``a``, ``b``, ``f1``, ``f1_ab`` (``a`` the reference),
    ``f1_ba``, ``kappa`` (Cohen's); ``attrs``: ``signature``, ``fleiss_kappa``, ``t_units``."""
    df = _frame([dict(p) for p in a.pairs], (), a.signature)
    df.attrs.update({"fleiss_kappa": a.fleiss_kappa, "t_units": a.t_units})
    return df


def agreement_html(a: _Agreement) -> str:
    """The agreement as a compact HTML table: a row per pair, Fleiss' kappa and the signature under it."""
    k = "n/a" if a.fleiss_kappa is None else f"{a.fleiss_kappa:.4f}"
    rows = [[p["a"], p["b"], _pct(p["f1"]), _pct(p["f1_ab"]), _pct(p["f1_ba"]),
             "n/a" if p["kappa"] is None else f"{p['kappa']:.4f}"] for p in a.pairs]
    notes = [f"Fleiss' kappa ({len(a.annotators)} annotators, {a.t_units} t-units: tokens and separators): {k}",
             f"signature: {a.signature}"]
    return _table(["a", "b", "F1 %", "F1 % (a ref)", "F1 % (b ref)", "kappa"], rows, notes)


def write_table_html(table: str, path: str | os.PathLike[str], title: str) -> int:
    """Write a compact table (`comparison_html`, `agreement_html`) as a whole HTML
    page (UTF-8, atomically: `atomic_write`); the file's size in bytes."""
    page = (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>{html.escape(title)}</title>\n'
            f"</head>\n<body>\n{table}\n</body>\n</html>\n").encode()
    return write_page(page, path, "to_html")


VIEWS.update({
    "conlleval": format_conlleval, "table": format_table, "json_text": json_text,
    "report_html": report_html, "report_frame": report_frame, "write_html": write_html,
})
