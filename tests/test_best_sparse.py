"""match-best (iescore.match.modes) against the dense implementation it replaced, kept here
as the reference: the same statuses, counts and confusion table on random corpora (several
labels, confidences or none, empty sides), with nothing sized labels x labels built."""

from __future__ import annotations

import importlib

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from iescore import Document, Span, score
from iescore.match.rules import Pairs
from iescore.match.units import (
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

count_module = importlib.import_module("iescore.match.count")  # the package re-exports count()
LABELS = ("A", "B", "C")


def _best_of_dense(P: Units, rank_p: _Ranks, L: int) -> np.ndarray:
    if len(P) == 0:
        return np.zeros(0, dtype=_I64)
    score = P.score
    key = np.zeros(len(P)) if score is None or np.isnan(score).all() else -score
    order = np.lexsort((rank_p(), key, P.label, P.doc))
    g = P.doc[order].astype(_I64) * L + P.label[order]
    first = np.ones(len(order), dtype=bool)
    first[1:] = g[1:] != g[:-1]
    return order[first]


def count_best_dense(R: Units, P: Units, rule_pairs: Pairs, rank_r: _Ranks, rank_p: _Ranks, cells: CellIndex,
                     L: int, cells_out: np.ndarray | None = None) -> EngineResult:
    """The dense match-best of iescore before the sparse table (its confusion (L+1) x (L+1))."""
    assert R.cell is not None and P.cell is not None
    nR, nP = len(R), len(P)
    keep = _best_of_dense(P, rank_p, L)
    pred_status = np.full(nP, IGNORED, dtype=np.int8)
    ref_status = np.full(nR, ALTERNATIVE, dtype=np.int8)
    kept = np.zeros(nP, dtype=bool)
    kept[keep] = True
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
    m = len(cells)
    has_ref = np.bincount(R.cell, minlength=m) > 0
    gp = P.cell[keep]
    has_pred = np.zeros(m, dtype=bool)
    has_pred[gp] = True
    g_hit = np.zeros(m, dtype=bool)
    g_hit[gp[hit[keep]]] = True
    if nR:
        ro = np.lexsort((rank_r(), R.cell))
        gr = R.cell[ro]
        firstr = np.ones(nR, dtype=bool)
        firstr[1:] = gr[1:] != gr[:-1]
        cand = ro[firstr]
        miss = ~g_hit[R.cell[cand]]
        ref_status[cand[miss]] = FN
    out = np.zeros((m, len(SPAN_FIELDS)), dtype=np.int32) if cells_out is None else cells_out
    tp, fp, fn = g_hit, has_pred & ~g_hit, has_ref & ~g_hit
    out[:, 0], out[:, 1], out[:, 2], out[:, 3] = tp, fp, fn, tp
    out[:, 4] = fp & has_ref
    out[:, 5] = has_ref & ~has_pred
    out[:, 6] = has_pred & ~has_ref
    conf = np.zeros((L + 1, L + 1), dtype=_I64)

    def per_label(f: int) -> np.ndarray:
        return np.bincount(cells.label, weights=out[:, f], minlength=L)[:L].astype(_I64)

    diag = np.arange(L)
    conf[diag, diag] = per_label(3) + per_label(4)
    conf[:L, L] = per_label(5)
    conf[L, :L] = per_label(6)
    z = np.zeros(0, dtype=_I64)
    return EngineResult(out, ref_status, pred_status, z, z, np.zeros(0, dtype=bool), conf)


@st.composite
def corpora(draw):
    with_scores = draw(st.booleans())
    docs, preds = [], []
    for k in range(draw(st.integers(1, 4))):
        n = draw(st.integers(1, 12))

        def spans(scored):
            out = []
            for _ in range(draw(st.integers(0, 6))):
                a = draw(st.integers(0, n - 1))
                b = draw(st.integers(a + 1, min(n, a + 4)))
                sc = draw(st.floats(0, 1)) if scored else None
                out.append(Span(draw(st.sampled_from(LABELS)), a, b, sc))
            return out

        docs.append(Document(f"d{k}", ("w",) * n, tuple(spans(False))))
        preds.append(spans(with_scores))
    return docs, preds


def _everything(r):
    return (r.to_dict(), r.confusion_table(), r.per_document(), r.reference.status.tolist(),
            r.prediction.status.tolist())


@settings(max_examples=200, deadline=None)
@given(corpora(), st.sampled_from(["E", "O(1,1)", "O(inf,inf)"]))
def test_match_best_sparse_equals_the_dense_reference(corpus, rule):
    docs, preds = corpus
    got = score(reference=docs, prediction=preds, rule=rule, mode="match-best")
    real = count_module._count_best
    try:
        count_module._count_best = count_best_dense  # type: ignore[assignment]
        want = score(reference=docs, prediction=preds, rule=rule, mode="match-best")
    finally:
        count_module._count_best = real
    assert _everything(got) == _everything(want)


def test_match_best_confusion_by_hand():
    """Two documents, labels A and B. d0: answer A [0,2), predictions A [0,2) (0.9) and
    A [2,3) (0.5): the best A is [0,2), a hit (C: A->A). d1: answer B [0,1), prediction
    A [1,2): cell (d1, B) has an answer and no prediction (D: B->none), cell (d1, A) a
    prediction and no answer (I: none->A). The table: A->A 1, B->none 1, none->A 1."""
    docs = [Document("d0", ("w",) * 3, (Span("A", 0, 2),)), Document("d1", ("w",) * 2, (Span("B", 0, 1),))]
    preds = [[Span("A", 0, 2, 0.9), Span("A", 2, 3, 0.5)], [Span("A", 1, 2, 0.7)]]
    r = score(reference=docs, prediction=preds, mode="match-best")
    assert r.confusion_table() == {"A": {"A": 1}, "B": {"none": 1}, "none": {"A": 1}}
