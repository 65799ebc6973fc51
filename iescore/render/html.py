"""The views stage of the pipeline: a self-contained HTML error report of a finished report.

`format_html` fills a Jinja2 template (package data, autoescaping on) with the
signature, the per-label table, the error categories (Concepts: error
categories), the SemEval-2013 scenarios and the document-macro average (Concepts:
measures and averages), the confusion heatmap, the most frequent errors by label and string
(`iescore.render.errorcounts`) and a JSON data block of every document's tokens and
items; the page's own script (also package data) renders the documents a page at a
time, with filters by label, category, status and document, from a confusion cell
or a category count to its examples, and from an error's row to its occurrences in
context, each a link to its span in its document (``#doc=K&mark=prediction:I``). Relations
(``task="relations"``) are listed per document in a table, each with its arguments (label,
token positions, text), status, category and aligned partner; links (``task="links"``) are
drawn on the tokens with their ids; the per-label tables are headed by what a row is
(relation label, the mentions' entity type). Every text, label and id reaches the page as data
(autoescaped attributes, JSON, ``textContent``), never as markup; a Content-Security-
Policy allows only the page's own script and style (by their SHA-256) and no network.
Jinja2 is the optional extra ``html`` (``pip install 'iescore[html]'``), imported here only.
"""

from __future__ import annotations

import base64
import hashlib
import math
import os
from collections.abc import Sequence
from importlib import resources
from typing import TYPE_CHECKING, Any

import numpy as np

from ..categories import CATEGORIES
from ..errors import ConfigError
from ..match.units import STATUS_NAMES
from .breakdowns import breakdown_heading
from .errorcounts import check_top, ranked_errors

if TYPE_CHECKING:
    from ..report import Report

__all__ = ["format_html", "write_html", "PAGE_SIZES", "ERROR_ROWS"]

PAGE_SIZES = (10, 20, 50, 100)
# the error rows (error, label, string) listed by default, most frequent first
ERROR_ROWS = 50
# the SemEval-2013 scenarios and their counts, as the page's table shows them
SEMEVAL_SCENARIOS = ("strict", "exact", "partial", "type")
SEMEVAL_COUNTS = ("COR", "INC", "PAR", "MIS", "SPU", "POS", "ACT")
# what a row of the per-label tables is, per task
ROW_NAMES = {"entities": "label", "relations": "relation label", "links": "entity type"}
# the largest confusion heatmap drawn, in cells ("none" included): 315 labels
HEATMAP_CELLS = 100_000


def _jinja() -> Any:
    try:
        import jinja2
    except ImportError:  # pragma: no cover - the extra is installed in the tests
        raise ConfigError("the HTML report needs Jinja2: pip install 'iescore[html]'") from None
    return jinja2


def _csp_hash(text: str) -> str:
    """A CSP source expression for an inline script or style: ``sha256-<base64>``."""
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.2f}"


def _heat(n: int, top: int) -> int:
    """A heat level 0..8 on a log scale (0 only for an empty cell)."""
    if n <= 0 or top <= 0:
        return 0
    return max(1, math.ceil(8 * math.log1p(n) / math.log1p(top)))


def _docs(report: Report, tokens: Sequence[Sequence[str]] | None) -> list[dict[str, Any]]:
    """Per document: id, tokens (or None), and each side's items as
    ``[item, start, end, label, status, category, partner]`` (-1 where absent)."""
    n = len(report.doc_ids)
    docs: list[dict[str, Any]] = [
        {"id": report.doc_ids[k], "tokens": None if tokens is None else list(tokens[k]), "ref": [], "pred": []}
        for k in range(n)
    ]
    for key, t in (("ref", report.reference), ("pred", report.prediction)):
        m = len(t)
        cat = t.category if t.category is not None else np.full(m, -1)
        partner = t.partner if t.partner is not None else np.full(m, -1)
        cols = zip(range(m), t.doc.tolist(), t.start.tolist(), t.end.tolist(), t.label.tolist(), t.status.tolist(),
                   np.asarray(cat).tolist(), np.asarray(partner).tolist())
        for item, d, s, e, lab, st, c, p in cols:
            docs[d][key].append([item, s, e, lab, st, c, p])
        side = "reference" if key == "ref" else "prediction"
        if t.text is not None and (tokens is None or t.start.size and int(t.start.min()) < 0):
            for item, d in enumerate(t.doc.tolist()):
                docs[d].setdefault("texts", {"reference": {}, "prediction": {}})[side][item] = t.text[item]
        if t.args is not None:  # relations: [label, start, end, text] of the head, then of the tail
            a = t.args
            args = (a.head_label, a.head_start.tolist(), a.head_end.tolist(), a.head_text or [""] * m,
                    a.tail_label, a.tail_start.tolist(), a.tail_end.tolist(), a.tail_text or [""] * m)
            for item, (d, *row) in enumerate(zip(t.doc.tolist(), *args)):
                docs[d].setdefault("args", {"reference": {}, "prediction": {}})[side][item] = row
        if t.ids is not None:  # links: the knowledge-base id of each mention
            for item, (d, kb) in enumerate(zip(t.doc.tolist(), t.ids)):
                docs[d].setdefault("ids", {"reference": {}, "prediction": {}})[side][item] = kb
    return docs


def _errors(report: Report, top: int | None) -> dict[str, Any] | None:
    """The first ``top`` rows of the error counts, each ``[error, label number, text,
    [[document, item], ...]]``, with the rows and errors in all; None when the items have
    no text (tags without tokens) to group them by."""
    try:
        ranked = ranked_errors(report)
    except ConfigError:
        if report.totals is not None:  # no items at all: said as everywhere else
            raise
        return None
    number = {lab: k for k, lab in enumerate(report.labels)}
    rows = [[e, number[lab], text, [list(o) for o in occ]] for (e, lab, text), occ in ranked[:top]]
    return {"rows": rows, "n_rows": len(ranked), "n_errors": sum(len(occ) for _, occ in ranked)}


def format_html(report: Report, tokens: Sequence[Sequence[str]] | None = None, *, title: str = "iescore error report",
                page_size: int = 20, error_rows: int | str = ERROR_ROWS, breakdowns: Sequence[Any] = ()) -> str:
    """The HTML page of ``report``; ``tokens[k]`` are document ``k``'s tokens (without them
    the items are listed per document with their text, as for templates); ``error_rows``
    error counts are listed (a number, or ``"all"``); each of ``breakdowns``
    ([`Breakdown`][iescore.render.breakdowns.Breakdown] s) is a table."""
    if tokens is not None and len(tokens) != len(report.doc_ids):
        from ..errors import InputError

        raise InputError(f"format_html: tokens for {len(tokens)} documents, the report has {len(report.doc_ids)}")
    jinja2 = _jinja()
    env = jinja2.Environment(loader=jinja2.PackageLoader("iescore", "render/templates"), autoescape=True,
                             undefined=jinja2.StrictUndefined)
    env.filters["pct"] = _pct
    folder = resources.files("iescore") / "render" / "templates"
    script = (folder / "report.js").read_text(encoding="utf-8")
    css = (folder / "report.css").read_text(encoding="utf-8")
    summary = report.to_dict()
    names = list(report.labels) + ["none"]
    # the heatmap: one cell per label pair, left out (the page says so) beyond HEATMAP_CELLS
    grid = report.confusion if len(names) ** 2 <= HEATMAP_CELLS else None
    top = 0 if grid is None else int(grid.max())
    cats = summary["categories"]
    category_rows = [] if cats is None else [*cats["per_label"].items(), ("overall", cats["overall"])]
    errors = _errors(report, check_top(error_rows))
    task = report.config.task
    data = {
        "task": task,
        "labels": list(report.labels), "statuses": list(STATUS_NAMES), "categories": list(CATEGORIES),
        "page_size": page_size, "docs": _docs(report, tokens), "errors": None if errors is None else errors["rows"],
    }
    from ..version import __version__

    page: str = env.get_template("report.html.j2").render(
        title=title, summary=summary, version=__version__, task=task, row_name=ROW_NAMES[task],
        n_ref=len(report.reference), n_pred=len(report.prediction),
        rows=[*summary["per_label"].items(), ("overall", summary["overall"])],
        categories=cats is not None, category_names=CATEGORIES, category_rows=category_rows,
        semeval_rows=[] if summary["semeval"] is None else [(k, summary["semeval"][k]) for k in SEMEVAL_SCENARIOS],
        semeval_counts=SEMEVAL_COUNTS, doc_macro=summary["doc_macro"],
        confusion_names=names, heatmap_cells=HEATMAP_CELLS,
        confusion_rows=None if grid is None else [(a, [(b, n, _heat(n, top)) for b, n in zip(names, row)])
                                                  for a, row in zip(names, grid.tolist())],
        page_sizes=PAGE_SIZES, page_size=page_size, data=data, errors=errors,
        breakdowns=[{"heading": breakdown_heading(b).capitalize(), "rows": b.rows} for b in breakdowns],
        script=jinja2.utils.markupsafe.Markup(script), script_hash=_csp_hash(script),
        css=jinja2.utils.markupsafe.Markup(css), style_hash=_csp_hash(css),
    )
    return page


def write_html(report: Report, path: str, tokens: Sequence[Sequence[str]] | None = None, *, option: str = "--html",
               **kw: Any) -> int:
    """Write `format_html` to ``path`` (UTF-8, atomically: `atomic_write`);
    the file's size in bytes. An unwritable path is an InputError naming ``option`` and the path."""
    return write_page(format_html(report, tokens, **kw).encode("utf-8"), path, option)


def write_page(page: bytes, path: str | os.PathLike[str], option: str) -> int:
    """Write a page's bytes to ``path`` atomically (`atomic_write`); its size in bytes. An
    unwritable path is an InputError naming ``option`` (``--html``, ``to_html``) and the path."""
    from ..atomic import atomic_write

    try:
        with atomic_write(path, "wb") as fh:
            fh.write(page)
    except OSError as exc:
        from ..errors import InputError

        raise InputError(f"{option} {os.fspath(path)!r}: cannot write the file ({exc.strerror or exc})") from None
    return len(page)
