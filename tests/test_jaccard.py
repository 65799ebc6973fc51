"""The Jaccard overlap TP/(TP+FP+FN) wherever it shows: the report's dict (overall, per
label, micro/macro/weighted), the text table, the flat views and the `evaluate` metric,
the statistics' measure names; checked by hand and against scikit-learn's jaccard_score."""

from __future__ import annotations

import random

import numpy as np
import pytest
from conftest import require

import iescore
from iescore import Document, Span, score, score_tags, stats
from iescore.measures import Counts, jaccard, overlap_ratio
from iescore.render.flat import flat_metrics, seqeval_style

# One document (so that every bootstrap resample is that document):
#   PER: answers at 0-2 and 6, predictions at 0-2, 6 and 7 -> TP 2, FP 1, FN 0 -> 2/3
#   LOC: answer at 3, prediction at 4                        -> TP 0, FP 1, FN 1 -> 0
#   ORG: answer at 5, no prediction                          -> TP 0, FP 0, FN 1 -> 0
#   MISC: prediction at 5, no answer (weight 0)              -> TP 0, FP 1, FN 0 -> 0
# micro 2/(2+3+2) = 2/7; macro (2/3 + 0 + 0 + 0)/4 = 1/6;
# weighted by answer keys (PER 2, LOC 1, ORG 1, MISC 0): (2 * 2/3)/4 = 1/3.
REF = [["B-PER", "I-PER", "O", "B-LOC", "O", "B-ORG", "B-PER", "O"]]
PRED = [["B-PER", "I-PER", "O", "O", "B-LOC", "B-MISC", "B-PER", "B-PER"]]


@pytest.fixture(scope="module")
def report() -> iescore.Report:
    return score_tags(reference=REF, prediction=PRED, scheme="IOB2")


def test_scalar_measure_by_hand():
    assert jaccard(Counts(tp=2, fp=3, fn=2)) == 2 / 7
    assert jaccard(Counts(tp=0, fp=0, fn=0)) is None  # 0/0
    assert jaccard(Counts(fp=1)) == 0.0
    assert overlap_ratio is jaccard  # the name SPEC calls "overlap"


def test_to_dict_overall_per_label_and_averages(report):
    d = report.to_dict()
    assert (d["overall"]["tp"], d["overall"]["fp"], d["overall"]["fn"]) == (2, 3, 2)
    assert d["overall"]["jaccard"] == 2 / 7
    per = {lab: e["jaccard"] for lab, e in d["per_label"].items()}
    assert per == {"LOC": 0.0, "MISC": 0.0, "ORG": 0.0, "PER": 2 / 3}
    av = d["averages"]
    assert av["micro"]["jaccard"] == 2 / 7
    assert av["macro"]["jaccard"] == pytest.approx(1 / 6, abs=1e-15)
    assert av["weighted"]["jaccard"] == pytest.approx(1 / 3, abs=1e-15)
    assert av["macro"]["left_out"]["jaccard"] == [] and av["weighted"]["left_out"]["jaccard"] == []
    assert av["weighted"]["zero_weight_labels"] == ["MISC"]


def test_undefined_is_none_and_left_out():
    empty = score_tags(reference=[["O", "O"]], prediction=[["O", "O"]]).to_dict()
    assert empty["overall"]["jaccard"] is None
    assert empty["averages"]["macro"]["jaccard"] is None and empty["averages"]["weighted"]["jaccard"] is None
    assert "n/a" in next(line for line in score_tags(reference=[["O"]], prediction=[["O"]]).format_table().splitlines()
                         if line.startswith("averages Jaccard"))


def test_text_table_line(report):
    lines = report.format_table().splitlines()
    # F1 = 2TP/(2TP+FP+FN): micro 4/9; PER 4/5 -> macro 1/5, weighted (2 * 4/5)/4 = 2/5
    k = lines.index("averages F1: micro  44.44%; macro  20.00%; weighted  40.00%")
    # Jaccard 2/7 = 28.57%, 1/6 = 16.67%, 1/3 = 33.33%
    assert lines[k + 1] == "averages Jaccard: micro  28.57%; macro  16.67%; weighted  33.33%"


def test_flat_views_and_metric_keys(report):
    s = seqeval_style(report)
    assert s["overall_jaccard"] == 2 / 7
    assert (s["PER_jaccard"], s["LOC_jaccard"], s["MISC_jaccard"]) == (2 / 3, 0.0, 0.0)
    assert s["PER"] == {"precision": 2 / 3, "recall": 1.0, "f1": 0.8, "number": 2}  # seqeval's four keys
    m = flat_metrics(report)
    assert m["jaccard"] == 2 / 7 and m["PER_jaccard"] == 2 / 3
    macro = flat_metrics(score_tags(reference=REF, prediction=PRED, scheme="IOB2", average="macro"))
    assert macro["jaccard"] == pytest.approx(1 / 6, abs=1e-15)  # the headline average's
    assert seqeval_style(score_tags(reference=[["O"]], prediction=[["O"]]), zero_division=1.0)["overall_jaccard"] == 1.0


def test_evaluate_metric_keys():
    evaluate = require("evaluate")
    import iescore.metric_card as card

    out = evaluate.load(card.PATH).compute(predictions=PRED, references=REF, zero_division=0)
    assert out["overall_jaccard"] == 2 / 7
    assert (out["PER_jaccard"], out["LOC_jaccard"], out["ORG_jaccard"], out["MISC_jaccard"]) == (2 / 3, 0.0, 0.0, 0.0)
    assert out["PER"] == {"precision": 2 / 3, "recall": 1.0, "f1": 0.8, "number": 2}


def test_statistics_accept_jaccard(report):
    names = stats.measure_names(report)
    assert {"jaccard", "micro_jaccard", "macro_jaccard", "weighted_jaccard", "jaccard[PER]"} <= set(names)
    # one document: every resample is that document, so each interval is the point
    b = stats.bootstrap(report, resamples=50, seed=3, measures=["jaccard", "macro_jaccard", "weighted_jaccard",
                                                                 "jaccard[PER]"])
    assert b.values["jaccard"] == 2 / 7
    assert b.intervals["jaccard"] == (2 / 7, 2 / 7)
    assert b.intervals["jaccard[PER]"] == (2 / 3, 2 / 3)
    lo, hi = b.intervals["macro_jaccard"]
    assert lo == hi == pytest.approx(1 / 6, abs=1e-15)
    bca = stats.bootstrap(report, resamples=20, seed=3, method="bca", measures=["jaccard"])
    assert bca.intervals["jaccard"] == (2 / 7, 2 / 7)
    # the resample that draws the document twice has the same ratio
    assert stats.resample_measures(report, np.array([[1], [2]]))["jaccard"] == [2 / 7, 2 / 7]
    # a paired test of the Jaccard overlap: a system against itself has p = 1
    c = stats.compare({"a": report, "b": report}, measure="jaccard", measures=["jaccard"], resamples="all")
    assert c.measure == "jaccard" and [row["p_value"] for row in c.systems][1] == 1.0


def test_resampled_jaccard_equals_the_report_on_two_documents():
    r = score_tags(reference=REF + [["B-LOC", "O"]], prediction=PRED + [["B-LOC", "B-ORG"]], scheme="IOB2")
    got = stats.resample_measures(r, np.array([[1, 1], [0, 2], [2, 0]]))
    # both documents: TP 2+1, FP 3+1, FN 2+0 -> micro 3/9; LOC TP 1 FP 1 FN 1 -> 1/3; ORG FP 1 FN 1 -> 0
    assert got["jaccard"][0] == 3 / 9 and got["jaccard[LOC]"][0] == 1 / 3 and got["jaccard[ORG]"][0] == 0.0
    # the second document twice: LOC TP 2 -> 1; ORG FP 2 -> 0; micro 2/(2+2) = 1/2
    assert got["jaccard"][1] == 1 / 2 and got["jaccard[LOC]"][1] == 1.0
    assert got["jaccard"][2] == 2 / 7  # the first document twice: the same ratio as once


def _random_corpus(rng: random.Random, n_docs: int) -> tuple[list[Document], list[list[Span]]]:
    labels = ("A", "B", "C")
    refs, preds = [], []
    for k in range(n_docs):
        n = rng.randint(1, 12)

        def spans(n: int) -> list[Span]:
            out = {(rng.choice(labels), s, s + rng.randint(1, 3)) for s in range(n) if rng.random() < 0.3}
            return [Span(lab, s, min(e, n)) for lab, s, e in sorted(out)]

        ref = spans(n)
        pred = [s for s in ref if rng.random() < 0.6] + spans(n)
        pred = list({(s.label, s.start, s.end): s for s in pred}.values())
        refs.append(Document(str(k), ("w",) * n, tuple(ref)))
        preds.append(pred)
    return refs, preds


@pytest.mark.parametrize("seed", range(6))
def test_sklearn_jaccard_score_on_items(seed):
    """Each item (label, document, start, end) of either side is a row of a multilabel
    indicator matrix, its label's column 1 on the side that has it: scikit-learn's
    jaccard_score is then TP/(TP+FP+FN) per label (binary), micro, macro and weighted by the
    answer keys -- an independent computation of the same definitions."""
    sk = require("sklearn.metrics")
    rng = random.Random(seed)
    refs, preds = _random_corpus(rng, 8)
    r = score(reference=refs, prediction=preds)
    d = r.to_dict()
    keys = sorted({(s.label, doc.id, s.start, s.end) for doc in refs for s in doc.spans}
                  | {(s.label, str(k), s.start, s.end) for k, p in enumerate(preds) for s in p})
    labels = sorted({k[0] for k in keys})
    ref_set = {(s.label, doc.id, s.start, s.end) for doc in refs for s in doc.spans}
    pred_set = {(s.label, str(k), s.start, s.end) for k, p in enumerate(preds) for s in p}
    col = {lab: j for j, lab in enumerate(labels)}
    y_true = np.zeros((len(keys), len(labels)), dtype=int)
    y_pred = np.zeros_like(y_true)
    for i, key in enumerate(keys):
        y_true[i, col[key[0]]] = key in ref_set
        y_pred[i, col[key[0]]] = key in pred_set
    assert list(d["per_label"]) == labels
    for lab, j in col.items():
        want = sk.jaccard_score(y_true[:, j], y_pred[:, j])  # every label has an item: defined
        assert d["per_label"][lab]["jaccard"] == pytest.approx(want, abs=1e-15)
    assert d["averages"]["micro"]["jaccard"] == pytest.approx(sk.jaccard_score(y_true, y_pred, average="micro"))
    assert d["averages"]["macro"]["jaccard"] == pytest.approx(sk.jaccard_score(y_true, y_pred, average="macro"))
    if y_true.sum():
        want_w = sk.jaccard_score(y_true, y_pred, average="weighted", zero_division=0.0)
        assert d["averages"]["weighted"]["jaccard"] == pytest.approx(want_w)
