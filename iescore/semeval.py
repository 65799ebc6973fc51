"""The report stage of the pipeline, its graded-credit part: the SemEval-2013 scenarios
(strict, exact, partial, type; Concepts: measures) read from the error categories of
Makhoul's alignment (`iescore.categories`), overall and per label.

Each aligned pair of the alignment is one of correct, wrong label, wrong boundary, wrong
label and boundary; an unaligned answer is missed, an unaligned prediction spurious. A
scenario names what a pair must share to be COR, and what it is otherwise:

========  =========================  ==================  ==============================
scenario  COR                        INC                 PAR
========  =========================  ==================  ==============================
strict    correct                    the other pairs     --
exact     correct, wrong label       the other pairs     --
partial   correct, wrong label       --                  wrong boundary, wrong both
type      correct, wrong boundary    the other pairs     --
========  =========================  ==================  ==============================

MIS and SPU are the missed and spurious units, ``POS = COR + INC + PAR + MIS`` and
``ACT = COR + INC + PAR + SPU``. strict and exact: ``P = COR / ACT``, ``R = COR / POS``;
partial and type: ``P = (COR + PAR / 2) / ACT``, ``R = (COR + PAR / 2) / POS``; F1 in
count form, ``2 (COR + PAR / 2) / (POS + ACT)`` (None only when both are 0).

Per label, a label's scenarios are those of its answers and predictions alone (as if the
other labels were not there): a pair of two labels leaves its answer missed under its
label and its prediction spurious under its own. So the per-label counts do not sum to the
overall ones.

Example (one answer ``PER [0, 2)``, a prediction ``ORG [1, 3)`` aligned with it; another
prediction, spurious): strict and exact see one INC, partial one PAR, type one INC.
    >>> rows = np.array([[0, 0, 0, 1, 0, 0], [0, 0, 0, 0, 0, 1], [0, 0, 0, 0, 0, 0]])
    >>> s = semeval_overall(rows)
    >>> s["strict"]["INC"], s["partial"]["PAR"], s["partial"]["precision"], s["type"]["f1"]
    (1, 1, 0.25, 0.0)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .categories import CORRECT, MISSED, SPURIOUS, WRONG_BOTH, WRONG_BOUNDARY, WRONG_LABEL
from .summary import copies, distinct_rows, records

__all__ = ["SCENARIOS", "SEMEVAL_KEYS", "scenario_entry", "semeval_overall", "semeval_per_label"]

SCENARIOS = ("strict", "exact", "partial", "type")
SEMEVAL_KEYS = ("COR", "INC", "PAR", "MIS", "SPU", "POS", "ACT", "precision", "recall", "f1")
CODES = ("COR", "INC", "PAR", "MIS", "SPU")
# per scenario, the categories summed into COR, INC and PAR
_OVERALL = {
    "strict": ((CORRECT,), (WRONG_LABEL, WRONG_BOUNDARY, WRONG_BOTH), ()),
    "exact": ((CORRECT, WRONG_LABEL), (WRONG_BOUNDARY, WRONG_BOTH), ()),
    "partial": ((CORRECT, WRONG_LABEL), (), (WRONG_BOUNDARY, WRONG_BOTH)),
    "type": ((CORRECT, WRONG_BOUNDARY), (WRONG_LABEL, WRONG_BOTH), ()),
}


def scenario_entry(cor: int, inc: int, par: int, mis: int, spu: int) -> dict[str, Any]:
    """One scenario's counts and measures in `SEMEVAL_KEYS` order (``par`` is 0 outside partial).

    >>> scenario_entry(3, 1, 2, 1, 1)["recall"]
    0.5714285714285714
    """
    pos = cor + inc + par + mis
    act = cor + inc + par + spu
    credit = cor + 0.5 * par if par else cor
    return {
        "COR": cor, "INC": inc, "PAR": par, "MIS": mis, "SPU": spu, "POS": pos, "ACT": act,
        "precision": None if act == 0 else credit / act,
        "recall": None if pos == 0 else credit / pos,
        "f1": None if pos + act == 0 else 2 * credit / (pos + act),
    }


def semeval_overall(category_rows: np.ndarray) -> dict[str, dict[str, Any]]:
    """``{scenario: entry}`` from the ``(labels, 6)`` error-category totals (all labels summed)."""
    tot = np.asarray(category_rows, dtype=np.int64).sum(axis=0).tolist()
    out = {}
    for name, groups in _OVERALL.items():
        cor, inc, par = (sum(tot[j] for j in g) for g in groups)
        out[name] = scenario_entry(cor, inc, par, tot[MISSED], tot[SPURIOUS])
    return out


def _label_codes(category_rows: np.ndarray, support: np.ndarray, predicted: np.ndarray) -> dict[str, list[np.ndarray]]:
    """Per scenario, the COR, INC, PAR, MIS, SPU arrays of every label on its own: its
    same-label pairs (correct, wrong boundary) are the only pairs; its other answers
    are missed and its other predictions spurious."""
    rows = np.asarray(category_rows, dtype=np.int64)
    same, bound = rows[:, CORRECT], rows[:, WRONG_BOUNDARY]
    zero = np.zeros_like(same)
    mis = np.asarray(support, dtype=np.int64) - same - bound
    spu = np.asarray(predicted, dtype=np.int64) - same - bound
    return {
        "strict": [same, bound, zero, mis, spu],
        "exact": [same, bound, zero, mis, spu],
        "partial": [same, zero, bound, mis, spu],
        "type": [same + bound, zero, zero, mis, spu],
    }


def semeval_per_label(labels: tuple[str, ...], category_rows: np.ndarray, support: np.ndarray,
                      predicted: np.ndarray) -> dict[str, dict[str, dict[str, Any]]]:
    """``{label: {scenario: entry}}``, each label scored on its own answers and predictions
    (``support``/``predicted``: the answers and predictions of each label). Each entry is
    computed once per distinct row of counts and copied for the labels of that row."""
    if not labels:
        return {}
    codes = _label_codes(category_rows, support, predicted)
    base = [codes["strict"][k] for k in (0, 1, 3, 4)]  # same label and extent, same label, MIS, SPU
    distinct, at = distinct_rows(base)
    same, bound, mis, spu = (c.tolist() for c in distinct)
    per = {
        "strict": [scenario_entry(c, b, 0, m, s) for c, b, m, s in zip(same, bound, mis, spu)],
        "exact": [scenario_entry(c, b, 0, m, s) for c, b, m, s in zip(same, bound, mis, spu)],
        "partial": [scenario_entry(c, 0, b, m, s) for c, b, m, s in zip(same, bound, mis, spu)],
        "type": [scenario_entry(c + b, 0, 0, m, s) for c, b, m, s in zip(same, bound, mis, spu)],
    }
    cols = [copies(per[name], at) for name in SCENARIOS]
    return dict(zip(labels, records(SCENARIOS, cols)))
