"""Stage 3 of the pipeline (count), the match-best mode (Siefkes §15.2): one
prediction per document and label, the one of highest confidence.

(match-all is plain counting, `iescore.match.count`; one-per-string collapses
the units into distinct strings first, `iescore.match.units.collapse`.)
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from .rules import Pairs
from .units import (
    _I64,
    ALTERNATIVE,
    FN,
    FP,
    IGNORED,
    SPAN_FIELDS,
    TP,
    CellIndex,
    EngineResult,
    Units,
    _Ranks,
)


def _best_of(P: Units, rank_p: _Ranks, L: int) -> np.ndarray:
    """Index of the kept prediction of every (document, label) group that has one."""
    if len(P) == 0:
        return np.zeros(0, dtype=_I64)
    score = P.score
    if score is None or np.isnan(score).all():
        key = np.zeros(len(P))
    else:
        bad = np.flatnonzero(~np.isfinite(score))
        if len(bad):
            i = int(bad[0])
            raise InputError(
                f"match-best needs a finite confidence on every prediction; document #{int(P.doc[i])} "
                f"prediction {i} (label id {int(P.label[i])}) has {score[i]!r}"
            )
        key = -score
    order = np.lexsort((rank_p(), key, P.label, P.doc))
    d, lab = P.doc[order], P.label[order]
    first = np.ones(len(order), dtype=bool)
    first[1:] = (d[1:] != d[:-1]) | (lab[1:] != lab[:-1])
    return order[first]


def _count_best(
    R: Units, P: Units, rule_pairs: Pairs, rank_r: _Ranks, rank_p: _Ranks, cells: CellIndex, L: int,
    cells_out: np.ndarray | None = None,
) -> EngineResult:
    """match-best (Siefkes §15.2): one prediction per document and label."""
    assert R.cell is not None and P.cell is not None
    nR, nP = len(R), len(P)
    keep = _best_of(P, rank_p, L)
    pred_status = np.full(nP, IGNORED, dtype=np.int8)
    ref_status = np.full(nR, ALTERNATIVE, dtype=np.int8)
    kept = np.zeros(nP, dtype=bool)
    kept[keep] = True
    # pairs of the kept predictions, earliest answer first
    sel = kept[rule_pairs.p]
    kp_r, kp_p = rule_pairs.r[sel], rule_pairs.p[sel]
    o = np.lexsort((rank_r()[kp_r], kp_p))
    kp_r, kp_p = kp_r[o], kp_p[o]
    firstpair = np.ones(len(kp_p), dtype=bool)
    firstpair[1:] = kp_p[1:] != kp_p[:-1]
    hit = np.zeros(nP, dtype=bool)
    hit[kp_p] = True
    ref_status[kp_r[firstpair]] = TP
    pred_status[keep] = np.where(hit[keep], TP, FP)
    # groups: the (document, label) cells
    m = len(cells)
    has_ref = np.bincount(R.cell, minlength=m) > 0
    gp = P.cell[keep]
    has_pred = np.zeros(m, dtype=bool)
    has_pred[gp] = True
    g_hit = np.zeros(m, dtype=bool)
    g_hit[gp[hit[keep]]] = True
    # FN: the earliest answer of a group with answers and no hit
    if nR:
        ro = np.lexsort((rank_r(), R.cell))
        gr = R.cell[ro]
        firstr = np.ones(nR, dtype=bool)
        firstr[1:] = gr[1:] != gr[:-1]
        cand = ro[firstr]
        miss = ~g_hit[R.cell[cand]]
        ref_status[cand[miss]] = FN
    out = np.zeros((m, len(SPAN_FIELDS)), dtype=np.int32) if cells_out is None else cells_out
    tp = g_hit
    fp = has_pred & ~g_hit
    fn = has_ref & ~g_hit
    out[:, 0] = tp
    out[:, 1] = fp
    out[:, 2] = fn
    out[:, 3] = tp  # C
    out[:, 4] = fp & has_ref  # S: the slot filled with a wrong value
    out[:, 5] = has_ref & ~has_pred  # D
    out[:, 6] = has_pred & ~has_ref  # I
    # the confusion table, sparse: a label with itself (C and S: the slot aligned with
    # itself), with none (D) and none with it (I), summed over the label's cells
    from ..confusion import Confusion

    lab = cells.label.astype(_I64)
    none = np.full(m, L, dtype=_I64)
    conf = Confusion.of_pairs(np.concatenate((lab, lab, none)), np.concatenate((lab, none, lab)), L,
                              np.concatenate((out[:, 3].astype(_I64) + out[:, 4], out[:, 5], out[:, 6])))
    z = np.zeros(0, dtype=_I64)
    return EngineResult(out, ref_status, pred_status, z, z, np.zeros(0, dtype=bool), conf)
