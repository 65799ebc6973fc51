"""The evaluate metric's SemEval-2013 keys and its keep_types / remove_types options (by hand)."""

from __future__ import annotations

import pytest

pytest.importorskip("evaluate")

import evaluate
import iescore.metric_card

REF = [["B-PER", "I-PER", "O", "B-LOC", "O", "B-MISC"]]
PRED = [["O", "B-ORG", "O", "B-LOC", "O", "B-MISC"]]


@pytest.fixture(scope="module")
def metric():
    return evaluate.load(iescore.metric_card.PATH)


def test_semeval_keys_by_hand(metric):
    # PER [0, 2) against ORG [1, 2): an overlapping pair of two labels; LOC and MISC correct
    out = metric.compute(predictions=PRED, references=REF, zero_division=0)
    # strict: COR 2, INC 1 -> 2/3; partial: COR 2, PAR 1 -> 2.5/3; type: COR 2, INC 1 -> 2/3
    assert out["semeval_strict_precision"] == pytest.approx(2 / 3)
    assert out["semeval_exact_recall"] == pytest.approx(2 / 3)
    assert out["semeval_partial_f1"] == pytest.approx(2.5 / 3)
    assert out["semeval_type_f1"] == pytest.approx(2 / 3)


def test_remove_types_and_keep_types(metric):
    # without MISC: LOC correct, PER/ORG wrong -> seqeval's P = R = 1/2; MISC's key is gone
    out = metric.compute(predictions=PRED, references=REF, zero_division=0, remove_types=["MISC"])
    assert "MISC" not in out and out["overall_precision"] == 0.5 and out["overall_recall"] == 0.5
    kept = metric.compute(predictions=PRED, references=REF, zero_division=0, keep_types=["LOC"])
    assert set(k for k, v in kept.items() if isinstance(v, dict)) == {"LOC"} and kept["overall_f1"] == 1.0
