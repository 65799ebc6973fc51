"""The views stage of the pipeline: the error-category lines of the text table.

One row per label (the labels of the conlleval block), then the overall row: the counts of
`CATEGORIES` and their MUC/SemEval codes (Concepts: error categories). Reads the report's summary; recomputes nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..categories import CATEGORIES, MUC_CODES
from ..summary import distinct_rows

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
    light = report._summary["categories"]
    if light is None:
        return []
    cols = report._labels_summary.category_columns()  # type: ignore[attr-defined]
    keys = CATEGORIES + MUC_CODES
    widths = [max(len(h), 4) for h in HEADINGS + MUC_CODES]
    # each count right-aligned in its column (never cut), "|" between the categories and the
    # codes; formatted once per distinct row of counts, which the labels of that row share
    cells = [f"%{w}s" for w in widths]
    fmt = "  ".join(cells[:len(CATEGORIES)] + ["|"] + cells[len(CATEGORIES):])
    distinct, at = distinct_rows([cols[k] for k in keys])
    counts = list(map(fmt.__mod__, zip(*(c.tolist() for c in distinct))))
    # the name right-aligned in 17 characters
    return [f"{'error categories':>17}: " + fmt % (*HEADINGS, *MUC_CODES),
            *map("%17s: %s".__mod__, zip(report.labels, map(counts.__getitem__, at))),
            f"{'overall':>17}: " + fmt % tuple(light["overall"][k] for k in keys)]
