"""Stage 3 of the pipeline (count): per-cell counts from the rule pairs (Concepts: counting).

* any-match counting (De Sitter Fig. 4) from "is this unit hit by a rule pair";
* Makhoul's C/S/D/I from a matching over all aligned-able pairs (the alignment,
  `iescore.match.assign`), preferring correct pairs, among them exact pairs, then the
  smallest boundary error; then more aligned pairs, then same label, then closeness;
  among equally good ones, the solver's own choice on the units in position order
  (Concepts: counting, ties); for OBD fillers, whose slots are complete,
  `iescore.match.slots`;
* one-to-one counting from a maximum-cardinality matching on rule pairs, preferring
  exact pairs, then the smallest boundary error: for units with positions (spans,
  relations), the alignment's correct pairs (so TP = C item by item); for OBD fillers,
  matched on their own (`_onetoone`);
  with each aligned pair, whether the rule's test holds for it labels aside (the
  extent slot of Makhoul's multi-slot tags, `iescore.multislot`).

The modes are in `iescore.match.modes` (match-best), the exact fast path for
decoded tags in `iescore.match.exact`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .assign import match
from .modes import _count_best
from .rules import Pairs
from .slots import align_slots
from .units import _I64, FN, FP, SPAN_FIELDS, TP, CellIndex, EngineResult, Units, _per_cell, _Ranks

if TYPE_CHECKING:
    from ..confusion import Confusion


def _onetoone(e: Pairs, nR: int, nP: int, rank_r: _Ranks, rank_p: _Ranks) -> np.ndarray:
    """Mask over the rule pairs ``e`` chosen by one-to-one counting."""
    if len(e.r) == 0:
        return np.zeros(0, dtype=bool)
    maxerr = int(e.err.max())
    levels = [np.broadcast_to(np.int8(1), len(e.r)), e.exact, maxerr - e.err]
    return match(e.r, e.p, levels, nR, nP, rank_r, rank_p)


def count(
    R: Units,
    P: Units,
    pairs: Pairs,
    *,
    cells: CellIndex,
    n_labels: int,
    counting: str,
    best: bool = False,
    cells_out: np.ndarray | None = None,
) -> EngineResult:
    """Fill the confusion matrix and the slot errors (Concepts: counting) for units R, P
    (with their ``cell`` rows in ``cells``).

    ``cells_out`` may be an ``(len(cells), 7)`` view to write the counts into."""
    assert R.cell is not None and P.cell is not None
    nR, nP = len(R), len(P)
    L = n_labels
    rank_r, rank_p = _Ranks(R), _Ranks(P)
    ref_status = np.full(nR, FN, dtype=np.int8)
    pred_status = np.full(nP, FP, dtype=np.int8)

    if best:
        return _count_best(R, P, pairs.take(pairs.ok), rank_r, rank_p, cells, L, cells_out)

    slots = pairs.weight is not None  # OBD fillers: complete slots, only the pairs that weigh anything
    aligned = None if slots else _align(pairs, nR, nP, rank_r, rank_p, R.start is not None)
    if counting == "any":
        pred_hit = np.zeros(nP, dtype=bool)
        pred_hit[pairs.p[pairs.ok]] = True
        ref_hit = np.zeros(nR, dtype=bool)
        ref_hit[pairs.r[pairs.ok]] = True
    elif aligned is not None and R.start is not None:  # by position: the alignment's correct pairs are the matching
        a_r, a_p, a_ok = aligned[:3]
        pred_hit = np.zeros(nP, dtype=bool)
        pred_hit[a_p[a_ok]] = True
        ref_hit = np.zeros(nR, dtype=bool)
        ref_hit[a_r[a_ok]] = True
    else:
        rule_pairs = pairs.take(pairs.ok)
        chosen = _onetoone(rule_pairs, nR, nP, rank_r, rank_p)
        pred_hit = np.zeros(nP, dtype=bool)
        pred_hit[rule_pairs.p[chosen]] = True
        ref_hit = np.zeros(nR, dtype=bool)
        ref_hit[rule_pairs.r[chosen]] = True
    pred_status[pred_hit] = TP
    ref_status[ref_hit] = TP

    # Makhoul alignment over all pairs
    if aligned is None:
        a_r, a_p, a_ok = align_slots(pairs, R, P, rank_r, rank_p)
        # a slot's pairs share a label, so the rule's test alone is ``ok`` (the pairs it
        # fills in weigh nothing: no rule holds for them)
        a_fit = None if pairs.fit is None else a_ok
    else:
        a_r, a_p, a_ok, a_fit = aligned
    m = len(cells)
    out = np.zeros((m, len(SPAN_FIELDS)), dtype=np.int32) if cells_out is None else cells_out
    out[:, 0] = _per_cell(P.cell, m, pred_hit)
    out[:, 1] = _per_cell(P.cell, m, ~pred_hit)
    out[:, 2] = _per_cell(R.cell, m, ~ref_hit)
    _slot_cells(out, R, P, a_r, a_p, a_ok)
    conf = _confusion(R, P, a_r, a_p, L)
    return EngineResult(out, ref_status, pred_status, a_r, a_p, a_ok, conf, aligned_fit=a_fit)


def _align(pairs: Pairs, nR: int, nP: int, rank_r: _Ranks, rank_p: _Ranks,
           by_position: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    """The aligned pairs: (answers, predictions, correct, the rule's test alone or None).

    The alignment maximises, in order: correct pairs; among them, exact pairs, then the
    least total boundary error (so its correct pairs are a one-to-one matching of the rule's
    pairs as one-to-one counting chooses it); aligned pairs; same-label pairs; overlap.
    Units without positions (OBD fillers given every pair, as the tests' reference does)
    keep the slots' own order: correct pairs, aligned pairs, same label, overlap."""
    if len(pairs.r) == 0:
        z = np.zeros(0, dtype=_I64)
        b = np.zeros(0, dtype=bool)
        return z, z, b, None if pairs.fit is None else b
    ok = pairs.ok
    one = np.broadcast_to(np.int8(1), len(pairs.r))
    if by_position:
        err = pairs.err.compress(ok)
        top = int(err.max()) if len(err) else 0
        levels = [ok, ok & pairs.exact, np.where(ok, top - pairs.err, 0), one, pairs.same, pairs.close]
    else:
        levels = [ok, one, pairs.same, pairs.close]
    chosen = match(pairs.r, pairs.p, levels, nR, nP, rank_r, rank_p)
    return pairs.r[chosen], pairs.p[chosen], pairs.ok[chosen], None if pairs.fit is None else pairs.fit[chosen]


def _slot_cells(out: np.ndarray, R: Units, P: Units, a_r: np.ndarray, a_p: np.ndarray, a_ok: np.ndarray) -> None:
    """C and S (under the answer's cell), D and I of Makhoul's alignment."""
    assert R.cell is not None and P.cell is not None
    m = out.shape[0]
    a_cell = R.cell[a_r]
    out[:, 3] = _per_cell(a_cell, m, a_ok)
    out[:, 4] = _per_cell(a_cell, m, ~a_ok)
    aligned_r = np.zeros(len(R), dtype=bool)
    aligned_r[a_r] = True
    aligned_p = np.zeros(len(P), dtype=bool)
    aligned_p[a_p] = True
    out[:, 5] = _per_cell(R.cell, m, ~aligned_r)
    out[:, 6] = _per_cell(P.cell, m, ~aligned_p)


def _confusion(R: Units, P: Units, a_r: np.ndarray, a_p: np.ndarray, L: int) -> Confusion:
    """The aligned pairs' labels, the unaligned answers under none's column and the
    unaligned predictions under none's row, for the label pairs that occur."""
    from ..confusion import Confusion

    aligned_r = np.zeros(len(R), dtype=bool)
    aligned_r[a_r] = True
    aligned_p = np.zeros(len(P), dtype=bool)
    aligned_p[a_p] = True
    deleted, inserted = R.label[~aligned_r], P.label[~aligned_p]
    ref = np.concatenate((R.label[a_r], deleted, np.full(len(inserted), L)))
    pred = np.concatenate((P.label[a_p], np.full(len(deleted), L), inserted))
    return Confusion.of_pairs(ref, pred, L)
