"""Precision-recall curves over confidence thresholds: every point equals the scorer run on
the input whose predictions below the threshold are dropped (random data, every counting,
rule and mode), and the best point and the counts of small cases computed by hand."""

from __future__ import annotations

import random

import pytest

import iescore
from iescore import Document, Span, Template
from iescore.errors import ConfigError, InputError
from iescore.measures import f_beta, ratio
from iescore.stats.thresholds import curve_of_report, filtered, pr_curve


def _random_docs(rng: random.Random, n_docs: int, levels: int) -> tuple[list[Document], list[list[Span]]]:
    ref, pred = [], []
    for d in range(n_docs):
        n = rng.randint(1, 12)
        tokens = tuple(rng.choice("abc") for _ in range(n))

        def spans(k: int, scored: bool, n: int = n) -> list[Span]:
            out = []
            for _ in range(k):
                s = rng.randrange(n)
                e = min(n, s + rng.randint(1, 3))
                conf = rng.randint(1, levels) / levels if scored else None
                out.append(Span(rng.choice("XY"), s, e, score=conf))
            return out

        ref.append(Document(f"d{d}", tokens, tuple(spans(rng.randint(0, 3), False))))
        pred.append(spans(rng.randint(0, 4), True))
    return ref, pred


def _reference_curve(ref, pred, thresholds, **options):
    out = []
    for t in thresholds:
        c = iescore.score(reference=ref, prediction=filtered(pred, t), **options).overall
        out.append((c.tp, c.fp, c.fn))
    return out


OPTIONS = [
    {},
    {"rule": "O(1,1)"},
    {"rule": "O(inf,inf)"},
    {"rule": "C(1)"},
    {"rule": "IoU(0.5)"},
    {"counting": "one-to-one"},
    {"counting": "one-to-one", "rule": "O(1,1)"},
    {"counting": "one-to-one", "rule": "O(inf,inf)"},
    {"mode": "match-best"},
    {"mode": "one-per-string"},
    {"keep_types": ("X",)},
]


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "default")
@pytest.mark.parametrize("seed", range(6))
def test_curve_equals_rescoring_filtered_input(options, seed):
    rng = random.Random(seed)
    ref, pred = _random_docs(rng, 8, levels=rng.choice((3, 10, 50)))
    if not any(pred):
        pred[0] = [Span("X", 0, 1, score=0.5)]
    c = pr_curve(ref, pred, **options)
    full = iescore.score(reference=ref, prediction=pred, **options)
    distinct = sorted({it["score"] for it in full.items("prediction")})
    assert list(c.thresholds) == distinct
    assert list(zip(c.tp, c.fp, c.fn)) == _reference_curve(ref, pred, distinct, **options)
    match_all = options.get("mode", "match-all") == "match-all"
    one_to_one = options.get("counting") == "one-to-one"
    assert c.method == ("rescored" if not match_all else "matching" if one_to_one else "pairs")
    for k in range(len(c)):
        tp, fp, fn = c.tp[k], c.fp[k], c.fn[k]
        assert c.precision[k] == ratio(tp, tp + fp)
        assert c.recall[k] == ratio(tp, tp + fn)
        assert c.f1[k] == f_beta(tp, fp, fn)


def test_any_match_by_hand():
    # answers X[0,2) and X[4,5); predictions: X[0,2) 0.9 (exact), X[0,3) 0.7 (one extra token),
    # X[4,5) 0.4, X[6,7) 0.8 (matches nothing)
    ref = [Document("d", tuple("abcdefgh"), (Span("X", 0, 2), Span("X", 4, 5)))]
    pred = [[Span("X", 0, 2, score=0.9), Span("X", 0, 3, score=0.7), Span("X", 4, 5, score=0.4),
             Span("X", 6, 7, score=0.8)]]
    c = pr_curve(ref, pred, rule="O(1,0)")
    assert c.thresholds == (0.4, 0.7, 0.8, 0.9)
    # at 0.4: TP = 3 predictions (0.9, 0.7, 0.4), FP = 1, FN = 0
    # at 0.7: TP = 2, FP = 1, FN = 1 (X[4,5) lost); at 0.8: TP 1, FP 1, FN 1; at 0.9: TP 1, FP 0, FN 1
    assert list(zip(c.tp, c.fp, c.fn)) == [(3, 1, 0), (2, 1, 1), (1, 1, 1), (1, 0, 1)]
    # F1 = 2TP / (2TP + FP + FN): 6/7, 4/6, 2/4, 2/3
    assert c.f1 == pytest.approx((6 / 7, 4 / 6, 2 / 4, 2 / 3))
    assert c.best.threshold == 0.4 and c.best.f1 == pytest.approx(6 / 7)
    assert c.best.precision == 0.75 and c.best.recall == 1.0


def test_best_tie_takes_the_highest_threshold():
    # one answer; predictions exact at 0.9 and spurious at 0.5 and 0.2
    ref = [Document("d", tuple("abcd"), (Span("X", 0, 1),))]
    pred = [[Span("X", 0, 1, score=0.9), Span("X", 2, 3, score=0.5), Span("X", 3, 4, score=0.2)]]
    c = pr_curve(ref, pred)
    assert list(zip(c.tp, c.fp, c.fn)) == [(1, 2, 0), (1, 1, 0), (1, 0, 0)]
    assert c.best.threshold == 0.9 and c.best.f1 == 1.0
    # a tie: two exact predictions of one answer at 0.9 and 0.8 under one-to-one give
    # (1,1,0) at 0.8 (F1 2/3) and (1,0,0) at 0.9 (F1 1)
    pred2 = [[Span("X", 0, 1, score=0.9), Span("X", 0, 1, score=0.8)]]
    c2 = pr_curve(ref, pred2, counting="one-to-one")
    assert list(zip(c2.tp, c2.fp, c2.fn)) == [(1, 1, 0), (1, 0, 0)]
    assert c2.best.threshold == 0.9
    # equal F at two thresholds: 0.3 gives (2,2,0) (F1 2/3: 4/6), 0.6 gives (1,0,1) (F1 2/3)
    ref3 = [Document("d", tuple("abcd"), (Span("X", 0, 1), Span("X", 1, 2)))]
    pred3 = [[Span("X", 0, 1, score=0.6), Span("X", 1, 2, score=0.3), Span("X", 2, 3, score=0.3),
              Span("X", 3, 4, score=0.3)]]
    c3 = pr_curve(ref3, pred3)
    assert list(zip(c3.tp, c3.fp, c3.fn)) == [(2, 2, 0), (1, 0, 1)]
    assert c3.f1[0] == c3.f1[1] == pytest.approx(2 / 3)
    assert c3.best.threshold == 0.6


def test_beta_and_to_dict():
    ref = [Document("d", tuple("abcd"), (Span("X", 0, 1), Span("X", 1, 2)))]
    pred = [[Span("X", 0, 1, score=0.6), Span("X", 2, 3, score=0.3)]]
    c = pr_curve(ref, pred, beta=2.0)
    # at 0.3: (1,1,1): F2 = 5/(5+4+1) = 0.5; at 0.6: (1,0,1): F2 = 5/(5+4) = 5/9
    assert c.f_beta == pytest.approx((0.5, 5 / 9))
    assert c.best.threshold == 0.6
    d = c.to_dict()
    assert d["method"] == "pairs" and d["beta"] == 2.0 and d["distinct"] == 2 and d["note"] is None
    assert d["points"][0] == {"threshold": 0.3, "tp": 1, "fp": 1, "fn": 1, "precision": 0.5, "recall": 0.5,
                              "f1": 0.5, "f_beta": pytest.approx(0.5)}
    assert d["best"]["threshold"] == 0.6


def test_quantile_thresholds_when_too_many():
    rng = random.Random(3)
    ref, pred = _random_docs(rng, 10, levels=1000)
    pred[0] = [*pred[0], Span("X", 0, 1, score=0.0001)]
    c = pr_curve(ref, pred, mode="match-best", max_thresholds=5)
    full = iescore.score(reference=ref, prediction=pred)
    distinct = sorted({it["score"] for it in full.items("prediction")})
    assert len(distinct) > 5 and len(c) == 5
    assert c.thresholds[0] == distinct[0] and c.thresholds[-1] == distinct[-1]
    assert set(c.thresholds) <= set(distinct)
    assert "5 of the" in c.note and "quantiles" in c.note
    assert list(zip(c.tp, c.fp, c.fn)) == _reference_curve(ref, pred, c.thresholds, mode="match-best")


def test_templates_rescored():
    ref = [Template("t", {"name": ["Al Roth", "Bo Li"]})]
    pred = [Template("t", {"name": ["Al Roth", "Cy", "Bo Li"]}, scores={"name": (0.9, 0.8, 0.1)})]
    c = pr_curve(ref, pred, setting="OBD")
    assert c.method == "rescored" and c.thresholds == (0.1, 0.8, 0.9)
    assert list(zip(c.tp, c.fp, c.fn)) == [(2, 1, 0), (1, 1, 1), (1, 0, 1)]


def test_missing_confidence_is_named():
    ref = [Document("doc-7", tuple("abc"), (Span("X", 0, 1),))]
    pred = [[Span("X", 0, 1, score=0.5), Span("Y", 1, 3)]]
    with pytest.raises(InputError, match=r"document 'doc-7', predicted span \('Y', 1, 3\) 'b c' has none \(1 of 2"):
        pr_curve(ref, pred)


def test_one_to_one_needs_the_input():
    ref = [Document("d", tuple("ab"), (Span("X", 0, 1),))]
    r = iescore.score(reference=ref, prediction=[[Span("X", 0, 1, score=0.5)]], mode="one-per-string")
    with pytest.raises(ConfigError, match="scores the input again"):
        curve_of_report(r)
    with pytest.raises(ConfigError, match="max_thresholds"):
        pr_curve(ref, [[Span("X", 0, 1, score=0.5)]], max_thresholds=1)


def test_plot_of_the_curve():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    from iescore.plot import threshold_curve

    ref = [Document("d", tuple("abcd"), (Span("X", 0, 1), Span("X", 2, 3)))]
    pred = [[Span("X", 0, 1, score=0.9), Span("X", 1, 2, score=0.6), Span("X", 2, 3, score=0.3)]]
    c = pr_curve(ref, pred)
    fig = threshold_curve(c.to_dict(), title="t")
    (line,) = fig.axes[0].lines
    # (recall, precision): 0.3 -> (2/2, 2/3), 0.6 -> (1/2, 1/2), 0.9 -> (1/2, 1/1)
    assert list(line.get_xdata()) == [1.0, 0.5, 0.5]
    assert list(line.get_ydata()) == pytest.approx([2 / 3, 0.5, 1.0])
    assert [t.get_text() for t in fig.axes[0].texts] == ["best F1 0.800 at t = 0.3"]
    import matplotlib.pyplot as plt

    plt.close(fig)


def _crossing(rng: random.Random, n_answers: int, n_predictions: int) -> tuple[list[Document], list[list[Span]]]:
    """One document of overlapping answers and predictions (long chains of crossing pairs)."""
    n = 3 * n_answers
    answers = []
    for _ in range(n_answers):
        s = rng.randrange(n - 4)
        answers.append(Span("X", s, s + rng.randint(1, 4)))
    preds = []
    for _ in range(n_predictions):
        s = rng.randrange(n - 4)
        preds.append(Span("X", s, s + rng.randint(1, 4), score=rng.randint(1, 20) / 20))
    return [Document("d", ("w",) * n, tuple(answers))], [preds]


@pytest.mark.parametrize("rule", ["O(inf,inf)", "O(2,2)", "IoU(0.3)"])
@pytest.mark.parametrize("seed", range(4))
def test_one_to_one_matching_curve_on_crossing_chains(rule, seed):
    ref, pred = _crossing(random.Random(seed), 40, 60)
    c = pr_curve(ref, pred, counting="one-to-one", rule=rule)
    assert c.method == "matching"
    assert list(zip(c.tp, c.fp, c.fn)) == _reference_curve(ref, pred, c.thresholds, counting="one-to-one", rule=rule)


def test_one_to_one_past_the_bound_is_scored_again(monkeypatch):
    import iescore.stats.thresholds as th

    ref, pred = _crossing(random.Random(7), 30, 40)
    monkeypatch.setattr(th, "_WORK", (0, 0))
    c = pr_curve(ref, pred, counting="one-to-one", rule="O(inf,inf)")
    assert c.method == "rescored"
    assert list(zip(c.tp, c.fp, c.fn)) == _reference_curve(ref, pred, c.thresholds, counting="one-to-one",
                                                           rule="O(inf,inf)")


def test_one_to_one_by_hand():
    # answers A[0,2) and B[2,4) of one label; predictions P[1,3) 0.9 (overlaps both), Q[0,2)
    # 0.5 (exact on A), O(inf,inf) one-to-one: at 0.9 P takes one answer (TP 1, FN 1); at
    # 0.5 P and Q both match (Q to A, P to B): TP 2, FP 0, FN 0
    ref = [Document("d", tuple("abcd"), (Span("X", 0, 2), Span("X", 2, 4)))]
    pred = [[Span("X", 1, 3, score=0.9), Span("X", 0, 2, score=0.5)]]
    c = pr_curve(ref, pred, counting="one-to-one", rule="O(inf,inf)")
    assert c.method == "matching"
    assert list(zip(c.thresholds, c.tp, c.fp, c.fn)) == [(0.5, 2, 0, 0), (0.9, 1, 0, 1)]
    # the same under any-match: at 0.5 both predictions are TPs and both answers found
    c = pr_curve(ref, pred, rule="O(inf,inf)")
    assert list(zip(c.thresholds, c.tp, c.fp, c.fn)) == [(0.5, 2, 0, 0), (0.9, 1, 0, 0)]
