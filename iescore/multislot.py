"""Stage 6 of the pipeline (report), Makhoul's multi-slot tags: a tag's *type* and its
*extent* scored as two slots, each with its own C, S, D and I (Concepts: measures,
multi-slot tags).

Makhoul et al. (2000) count the slots of a tag once the hypothesis is aligned with the
reference; a named entity of MUC has two, its type and its extent. iescore reads them off
the alignment of its slot errors (`iescore.match.count`: one answer with at most one
prediction, any labels):

* an aligned pair's *type* slot is correct (C) when the two labels are equal, else a
  substitution (S);
* its *extent* slot is correct when the matching rule's test holds for the two extents
  with the labels left aside (positions in AO; the normalised strings in OBD and in
  one-per-string), else a substitution;
* an answer left unaligned is a deletion (D) of both its slots, a prediction left
  unaligned an insertion (I) of both.

Per label, C, S and D belong to the answer's label and I to the prediction's, as in the
slot errors. So each kind has the tags' ``N = C + S + D`` and ``M = C + S + I``, and under
the rule E the type slot's C is ``correct + wrong_boundary`` and the extent slot's
``correct + wrong_label`` (`iescore.categories`). A batch keeps, per label, two counts
(`aligned_counts`): its aligned pairs of equal labels and those whose extents fit; the
rest follows from the slot errors' C, S, D and I (`multislot_summary`). Each kind's
``ser`` is its slot error rate ``(S + D + I) / N``; the ``ser`` beside the two kinds is
the rate over all the slots, ``(S_type + S_extent + 2 (D + I)) / 2N``.

>>> import numpy as np
>>> aligned = aligned_counts(np.array([0, 1]), np.array([1, 1]), np.array([True, False]), 2)
>>> aligned.tolist()  # per answer label: [equal labels, extents that fit]
[[0, 1], [1, 0]]
>>> counts = {"C": np.array([0, 0]), "S": np.array([1, 1]), "D": np.array([0, 1]), "I": np.array([1, 0])}
>>> s = multislot_summary(aligned, counts)
>>> s["overall"]["type"]
{'C': 1, 'S': 1, 'D': 1, 'I': 1, 'N': 3, 'M': 3, 'ser': 1.0}
>>> s["overall"]["extent"]["C"], s["overall"]["ser"]
(1, 1.0)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .summary import copies, distinct_rows, records

__all__ = ["KINDS", "SLOT_KEYS", "HEADINGS", "aligned_counts", "multislot_summary", "multislot_lines"]

KINDS = ("type", "extent")
SLOT_KEYS = ("C", "S", "D", "I", "N", "M", "ser")
HEADINGS = ("type-C", "type-S", "type-D", "type-I", "extent-C", "extent-S", "extent-D", "extent-I", "SER")


def aligned_counts(ref_label: np.ndarray, pred_label: np.ndarray, fit: np.ndarray, n_labels: int) -> np.ndarray:
    """``(n_labels, 2)`` int64: per answer label, the aligned pairs whose labels are equal
    (type slot correct) and those whose extents fit the rule (extent slot correct), from
    the labels of the aligned pairs' answers and predictions and the rule's test alone."""
    ref_label = np.asarray(ref_label)
    out = np.zeros((n_labels, 2), dtype=np.int64)
    if len(ref_label):
        out[:, 0] = np.bincount(ref_label.compress(ref_label == pred_label), minlength=n_labels)
        out[:, 1] = np.bincount(ref_label.compress(np.asarray(fit, dtype=bool)), minlength=n_labels)
    return out


def _entry(c: int, s: int, d: int, i: int) -> dict[str, Any]:
    n = c + s + d
    return {"C": c, "S": s, "D": d, "I": i, "N": n, "M": c + s + i, "ser": None if n == 0 else (s + d + i) / n}


def _both(tc: int, ts: int, es: int, d: int, i: int) -> float | None:
    """SER over both kinds: the errors of the two slots over their ``2N`` reference slots."""
    n = tc + ts + d
    return None if n == 0 else (ts + es + 2 * (d + i)) / (2 * n)


def _columns(aligned: np.ndarray, counts: Mapping[str, np.ndarray]) -> list[np.ndarray]:
    """Per label: type C, type S, extent C, extent S, D, I (int64)."""
    pairs = np.asarray(counts["C"], dtype=np.int64) + np.asarray(counts["S"], dtype=np.int64)
    tc, ec = aligned[:, 0], aligned[:, 1]
    return [tc, pairs - tc, ec, pairs - ec, np.asarray(counts["D"], dtype=np.int64),
            np.asarray(counts["I"], dtype=np.int64)]


def multislot_summary(aligned: np.ndarray | None, counts: Mapping[str, np.ndarray],
                      labels: Sequence[str] | None = None) -> dict[str, Any] | None:
    """The report's ``multislot`` (``to_dict()["multislot"]``): ``overall`` and, when
    ``labels`` are given, ``per_label``, each ``{"type": {C, S, D, I, N, M, ser}, "extent":
    {...}, "ser": SER over both}``; None without ``aligned`` (`aligned_counts`, summed over
    the batches). ``counts``: the per-label slot errors ``C``, ``S``, ``D``, ``I``."""
    if aligned is None:
        return None
    cols = _columns(aligned, counts)
    tc, ts, ec, es, d, i = (int(c.sum()) for c in cols)
    overall = {"type": _entry(tc, ts, d, i), "extent": _entry(ec, es, d, i), "ser": _both(tc, ts, es, d, i)}
    if labels is None:
        return {"overall": overall, "per_label": None}
    if not len(labels):
        return {"overall": overall, "per_label": {}}
    # one entry per distinct row of counts, copied for the labels of that row
    distinct, at = distinct_rows(cols)
    rows = list(zip(*(c.tolist() for c in distinct)))
    kinds = []
    for k in range(2):  # each kind's entries as key-sharing dicts (`records`), which copy faster
        entries = [_entry(r[2 * k], r[2 * k + 1], r[4], r[5]) for r in rows]
        kinds.append(copies(records(SLOT_KEYS, [[e[key] for e in entries] for key in SLOT_KEYS]), at))
    ser = [_both(r[0], r[1], r[3], r[4], r[5]) for r in rows]
    per = records(("type", "extent", "ser"), [kinds[0], kinds[1], [ser[k] for k in at]])
    return {"overall": overall, "per_label": dict(zip(labels, per))}


def multislot_lines(labels: Sequence[str], aligned: np.ndarray | None, counts: Mapping[str, np.ndarray],
                    overall: Mapping[str, Any] | None) -> list[str]:
    """The text table's block (no lines without multi-slot counts: match-best,
    ``detail="prf"``, units whose pairs do not say whether extents fit): per label and
    overall the two kinds' C, S, D, I and SER over both (``n/a`` where undefined)::

         multi-slot tags:  type-C  type-S  type-D  type-I  |  extent-C  extent-S  extent-D  extent-I  |      SER
                     LOC:       0       1       0       0  |         1         0         0         0  |   50.00%

    ``overall``: `multislot_summary`'s ``overall``. Formatted once per distinct row."""
    if aligned is None or overall is None:
        return []
    widths = [max(len(h), 4) for h in HEADINGS]
    cells = [f"%{w}s" for w in widths]
    fmt = "  ".join(cells[:4] + ["|"] + cells[4:8] + ["|", "%8s"])

    def pct(x: float | None) -> str:
        return "n/a" if x is None else f"{100 * x:.2f}%"

    def line(tc: int, ts: int, ec: int, es: int, d: int, i: int) -> str:
        return fmt % (tc, ts, d, i, ec, es, d, i, pct(_both(tc, ts, es, d, i)))

    distinct, at = distinct_rows(_columns(aligned, counts))
    shown = [line(*r) for r in zip(*(c.tolist() for c in distinct))]
    t, e = overall["type"], overall["extent"]
    return [f"{'multi-slot tags':>17}: " + fmt % HEADINGS,
            *map("%17s: %s".__mod__, zip(labels, map(shown.__getitem__, at))),
            f"{'overall':>17}: " + line(t["C"], t["S"], e["C"], e["S"], t["D"], t["I"])]
