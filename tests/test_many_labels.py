"""Many labels: nothing is sized labels x labels, and the numbers are right.

The confusion table is stored for the label pairs that occur
(:class:`iescore.confusion.Confusion`); these tests check its views against
hand-computed tables, and a 20,000-label report against counts worked out by hand
from how the input is built.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from iescore import score, score_tags
from iescore.confusion import Confusion
from iescore.model import Document, Span


def test_pairs_are_summed_sorted_and_zeros_dropped():
    # labels 0, 1, 2; none = 3. Pairs (1,0) twice, (0,3) once, (3,2) once, (2,2) with count 0
    c = Confusion.of_pairs(np.array([1, 0, 3, 1, 2]), np.array([0, 3, 2, 0, 2]), 3,
                           count=np.array([1, 1, 1, 1, 0]))
    assert list(zip(c.ref.tolist(), c.pred.tolist(), c.count.tolist())) == [(0, 3, 1), (1, 0, 2), (3, 2, 1)]
    # row sums: label 0 -> 1, label 1 -> 2, label 2 -> 0, none -> 1; columns: 0 -> 2, 2 -> 1, none -> 1
    assert c.row_sums().tolist() == [1, 2, 0, 1]
    assert c.col_sums().tolist() == [2, 0, 1, 1]
    assert c.table(["A", "B", "C"]) == {"A": {"none": 1}, "B": {"A": 2}, "C": {}, "none": {"C": 1}}
    dense = np.zeros((4, 4), dtype=np.int64)
    dense[0, 3], dense[1, 0], dense[3, 2] = 1, 2, 1
    assert np.array_equal(c.dense(), dense)
    again = Confusion.of_dense(dense)
    assert (again.ref.tolist(), again.pred.tolist(), again.count.tolist()) == (c.ref.tolist(), c.pred.tolist(), c.count.tolist())


def test_join_renumbers_labels_and_keeps_none():
    # batch 1 has labels [B, C] (none = 2): B->C once, C->none once;
    # batch 2 has labels [A, C] (none = 2): A->C twice, none->C once.
    # Joint labels [A, B, C] (none = 3): B->C 1, C->none 1, A->C 2, none->C 1
    one = Confusion.of_pairs(np.array([0, 1]), np.array([1, 2]), 2)
    two = Confusion.of_pairs(np.array([0, 0, 2]), np.array([1, 1, 1]), 2)
    j = Confusion.join([(one, np.array([1, 2])), (two, np.array([0, 2]))], 3)
    assert j.table(["A", "B", "C"]) == {"A": {"C": 2}, "B": {"C": 1}, "C": {"none": 1}, "none": {"C": 1}}


N_LABELS = 20_000


def many_label_documents():
    """Label k (``L00000`` ...) has one answer, token 3k..3k+2 of one document.
    Predictions: k % 4 == 0 exact; k % 4 == 1 same span, label k + 1 (a substitution);
    k % 4 == 2 missed; k % 4 == 3 exact, plus a spurious span of label k at token 3k + 2."""
    names = [f"L{k:05d}" for k in range(N_LABELS)]
    ref = Document("d", ("w",) * (3 * N_LABELS), tuple(Span(names[k], 3 * k, 3 * k + 2) for k in range(N_LABELS)))
    pred = []
    for k in range(N_LABELS):
        if k % 4 == 0:
            pred.append(Span(names[k], 3 * k, 3 * k + 2))
        elif k % 4 == 1:
            pred.append(Span(names[k + 1], 3 * k, 3 * k + 2))
        elif k % 4 == 3:
            pred += [Span(names[k], 3 * k, 3 * k + 2), Span(names[k], 3 * k + 2, 3 * k + 3)]
    return names, ref, pred


def test_twenty_thousand_labels_are_counted_right():
    names, ref, pred = many_label_documents()
    r = score(reference=[ref], prediction=[pred])  # AO, exact, any-match: full report
    q = N_LABELS // 4  # 5,000 labels of each kind
    # TP: the exact ones (kinds 0 and 3) = 2q; FP: the relabelled span (kind 1) and the
    # spurious one (kind 3) = 2q; FN: kinds 1 and 2 = 2q
    assert (r.overall.tp, r.overall.fp, r.overall.fn) == (2 * q, 2 * q, 2 * q)
    # slots (Makhoul): C = 2q; S = q (kind 1: same span, another label); D = q (kind 2);
    # I = q (the spurious spans: they touch no answer, so they are not aligned)
    assert (r.overall.C, r.overall.S, r.overall.D, r.overall.I) == (2 * q, q, q, q)
    t = r.confusion_table()
    assert len(t) == N_LABELS + 1
    assert t["L00000"] == {"L00000": 1}
    assert t["L00001"] == {"L00002": 1}  # substituted
    assert t["L00002"] == {"none": 1}  # deleted
    assert t["L00003"] == {"L00003": 1}
    assert t["none"] == {names[k]: 1 for k in range(3, N_LABELS, 4)}  # the insertions
    # the pairs stored: (k, k) for kinds 0 and 3 (2q), (k, k + 1) for kind 1 (q),
    # (k, none) for kind 2 (q), (none, k) for kind 3 (q): 5q of the 20,001^2 cells
    assert len(r.confusion_counts) == 5 * q
    # per label: L00001 has one answer and no prediction of its own label; L00002 one
    # answer (missed) and one prediction (the relabelled span of L00001)
    d = r.to_dict()
    assert (d["per_label"]["L00001"]["support"], d["per_label"]["L00001"]["predicted"]) == (1, 0)
    assert (d["per_label"]["L00002"]["support"], d["per_label"]["L00002"]["predicted"]) == (1, 1)
    assert (d["per_label"]["L00003"]["tp"], d["per_label"]["L00003"]["fp"]) == (1, 1)
    assert d == json.loads(r.to_json())


def test_many_labels_in_tags_prf_and_full_agree():
    # tag input: label k's entity is sentence k ("B-Lk I-Lk"); the prediction retypes
    # every third one (k % 3 == 0 -> label k + 1)
    n = 9_000
    ref = [[f"B-L{k}", f"I-L{k}"] for k in range(n)]
    pred = [[f"B-L{k + 1}", f"I-L{k + 1}"] if k % 3 == 0 else [f"B-L{k}", f"I-L{k}"] for k in range(n)]
    # TP = 2n/3 = 6000; FP = FN = n/3 = 3000
    for detail in ("full", "prf"):
        r = score_tags(reference=ref, prediction=pred, scheme="IOB2", detail=detail)
        assert (r.overall.tp, r.overall.fp, r.overall.fn) == (6000, 3000, 3000)
    full = score_tags(reference=ref, prediction=pred, scheme="IOB2")
    # label L0 (answer retyped to L1): row L0 -> {L1: 1}; label L1's own answer is exact
    assert full.confusion_table()["L0"] == {"L1": 1} and full.confusion_table()["L1"] == {"L1": 1}
    assert full.confusion.shape == (n + 1, n + 1)  # n labels (the last retyped one, 8997, gets L8998), then none


@pytest.mark.parametrize("options", [{}, {"detail": "prf"}, {"rule": "O(1,1)", "counting": "one-to-one"},
                                     {"mode": "match-best"}])
def test_to_dict_is_the_json_text_read_back(options):
    r = score_tags(reference=[["B-A", "I-A", "O", "B-B"]], prediction=[["B-A", "O", "B-B", "I-B"]],
                   scheme="IOB2", **options)

    def strict(a, b):  # equal, with the same types all the way down
        assert type(a) is type(b)
        if isinstance(a, dict):
            assert list(a) == list(b)
            for k in a:
                strict(a[k], b[k])
        elif isinstance(a, list):
            assert len(a) == len(b)
            for x, y in zip(a, b):
                strict(x, y)
        else:
            assert a == b or (a != a and b != b)

    strict(r.to_dict(), json.loads(r.to_json()))
