"""The views stage of the pipeline: the error-category lines of the text table.

One row per label (the labels of the conlleval block), then the overall row: the counts of
:data:`~iescore.categories.CATEGORIES` and their MUC/SemEval codes (README,
Definitions: error categories). Reads the report's summary; recomputes nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..categories import CATEGORIES, MUC_CODES

if TYPE_CHECKING:
    from ..report import Report

__all__ = ["category_lines", "HEADINGS"]

HEADINGS = ("correct", "wrong-label", "wrong-bound", "wrong-both", "missed", "spurious")


def category_lines(report: Report) -> list[str]:
    """The error-category block (no lines where categories are not computed: match-best,
    ``detail="prf"``)::

        error categories: correct  wrong-label  wrong-bound  wrong-both  missed  spurious  |   COR   INC ...
                     LOC:       0            1            0           0       0         1  |     0     1 ...
                 overall:        ...
    """
    cats: dict[str, Any] | None = report._full_summary("categories")
    if cats is None:
        return []
    heads = list(HEADINGS) + ["|"] + list(MUC_CODES)
    keys = list(CATEGORIES) + [None] + list(MUC_CODES)
    widths = [max(len(h), 4) for h in heads]
    widths[len(HEADINGS)] = 1

    def row(name: str, d: dict[str, int] | None) -> str:
        cells = [h if d is None else ("|" if k is None else str(d[k])) for h, k in zip(heads, keys)]
        return f"{name:>17}: " + "  ".join(c.rjust(w) for c, w in zip(cells, widths))

    out = [row("error categories", None)]
    for lab, d in cats["per_label"].items():
        out.append(row(lab, d))
    out.append(row("overall", cats["overall"]))
    return out
