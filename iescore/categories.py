"""Stage 3 of the pipeline (count), its error analysis: an error category for every item
from Makhoul's alignment (Concepts: error categories).

The alignment (`iescore.match.count`) pairs reference and prediction units one
to one. Each aligned pair is

* ``correct`` -- the same label and the same extent (AO: the same start and end; OBD
  and one-per-string: the same normalised string),
* ``wrong_label`` -- the same extent, another label,
* ``wrong_boundary`` -- the same label, another extent,
* ``wrong_label_boundary`` -- both differ,

and an unaligned reference unit is ``missed``, an unaligned prediction ``spurious``.
In the MUC/SemEval vocabulary: correct = COR, wrong label = INC, wrong boundary = PAR,
wrong label and boundary = INC, missed = MIS, spurious = SPU.

A category describes the pair, not the matching rule: under a lenient rule a
``wrong_boundary`` pair may still be counted correct (C, TP). Totals are per label: an
aligned pair and a missed unit count under the reference label (as Makhoul's S), a
spurious one under the predicted label.

Example (one reference ``PER [0, 2)``, a prediction ``ORG [0, 2)``; another prediction
``LOC [5, 6)``, unaligned):
    >>> import numpy as np
    >>> cr, cp, pr, pp = categorize(np.array([0]), np.array([0]), np.array([2]), None,
    ...                             np.array([1, 2]), np.array([0, 5]), np.array([2, 6]),
    ...                             a_r=np.array([0]), a_p=np.array([0]))
    >>> [CATEGORIES[c] for c in cr], [CATEGORIES[c] for c in cp], pr.tolist(), pp.tolist()
    (['wrong_label'], ['wrong_label', 'spurious'], [0], [0, -1])
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["CATEGORIES", "MUC_CODES", "MUC_OF", "MUC_GROUPS", "categorize", "category_totals", "category_dict"]

CATEGORIES = ("correct", "wrong_label", "wrong_boundary", "wrong_label_boundary", "missed", "spurious")
CORRECT, WRONG_LABEL, WRONG_BOUNDARY, WRONG_BOTH, MISSED, SPURIOUS = range(6)
MUC_CODES = ("COR", "INC", "PAR", "MIS", "SPU")
MUC_OF = ("COR", "INC", "PAR", "INC", "MIS", "SPU")  # the MUC/SemEval code of each category
# per MUC/SemEval code, the categories (indexes into CATEGORIES) it sums
MUC_GROUPS = tuple(tuple(j for j, c in enumerate(MUC_OF) if c == code) for code in MUC_CODES)


def categorize(
    r_label: np.ndarray,
    r_start: np.ndarray | None,
    r_end: np.ndarray | None,
    r_key: Sequence[tuple[str, ...]] | None,
    p_label: np.ndarray,
    p_start: np.ndarray | None,
    p_end: np.ndarray | None,
    p_key: Sequence[tuple[str, ...]] | None = None,
    *,
    a_r: np.ndarray,
    a_p: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The category (an index into `CATEGORIES`) of every reference and prediction
    unit, and its aligned partner's index on the other side (-1 when unaligned).

    The extent is compared by position when both sides have positions and no keys are
    given, else by the keys (normalised filler strings)."""
    nR, nP = len(r_label), len(p_label)
    cat_r = np.full(nR, MISSED, dtype=np.int8)
    cat_p = np.full(nP, SPURIOUS, dtype=np.int8)
    part_r = np.full(nR, -1, dtype=np.int64)
    part_p = np.full(nP, -1, dtype=np.int64)
    if len(a_r) == 0:
        return cat_r, cat_p, part_r, part_p
    a_r = np.asarray(a_r, dtype=np.int64)
    a_p = np.asarray(a_p, dtype=np.int64)
    same_label = r_label[a_r] == p_label[a_p]
    if r_key is not None and p_key is not None:
        same_extent = np.array([r_key[i] == p_key[j] for i, j in zip(a_r.tolist(), a_p.tolist())], dtype=bool)
    else:
        assert r_start is not None and r_end is not None and p_start is not None and p_end is not None
        same_extent = (r_start[a_r] == p_start[a_p]) & (r_end[a_r] == p_end[a_p])
    cat = np.where(same_extent, np.where(same_label, CORRECT, WRONG_LABEL),
                   np.where(same_label, WRONG_BOUNDARY, WRONG_BOTH)).astype(np.int8)
    cat_r[a_r] = cat
    cat_p[a_p] = cat
    part_r[a_r] = a_p
    part_p[a_p] = a_r
    return cat_r, cat_p, part_r, part_p


def category_totals(cat_r: np.ndarray, r_label: np.ndarray, cat_p: np.ndarray, p_label: np.ndarray,
                    n_labels: int) -> np.ndarray:
    """``(n_labels, 6)`` counts in `CATEGORIES` order: aligned pairs and missed units
    under the reference label, spurious units under the predicted label."""
    out = np.zeros((n_labels, len(CATEGORIES)), dtype=np.int64)
    np.add.at(out, (np.asarray(r_label, dtype=np.int64), cat_r.astype(np.int64)), 1)
    spur = cat_p == SPURIOUS
    np.add.at(out[:, SPURIOUS], np.asarray(p_label, dtype=np.int64)[spur], 1)
    return out


def category_dict(row: Sequence[int]) -> dict[str, int]:
    """One row of totals as ``{category: n, ..., COR/INC/PAR/MIS/SPU: n}``.

    >>> category_dict([5, 1, 2, 1, 3, 4])["INC"]
    2
    """
    d = {name: int(n) for name, n in zip(CATEGORIES, row)}
    for code, group in zip(MUC_CODES, MUC_GROUPS):
        d[code] = sum(int(row[j]) for j in group)
    return d
