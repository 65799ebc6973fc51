"""Folds: mean, sample standard deviation and Student-t interval of any measure across
reports, checked against numpy and scipy; the interval clipped to the measure's range; the
deprecated iescore.aggregate as a view of it."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import require

from iescore import ConfigError, Document, Span, score, score_tags
from iescore.stats import folds
from iescore.stats.folds import aggregate, measure_range


def _fold(tp: int, fp: int, fn: int, label: str = "X") -> object:
    """A report of one document with ``tp`` matched, ``fp`` spurious and ``fn`` missed spans."""
    n = tp + fp + fn
    ref = [Span(label, k, k + 1) for k in range(tp)] + [Span(label, k, k + 1) for k in range(tp + fp, n)]
    pred = [Span(label, k, k + 1) for k in range(tp + fp)]
    return score(reference=[Document("d", ("w",) * n, tuple(ref))], prediction=[pred])


# Jaccard TP/(TP+FP+FN): 1/2, 3/5, 2/4 -- near one another: the interval stays inside [0, 1]
FOLDS = [(1, 1, 0), (3, 0, 2), (2, 1, 1)]


def test_mean_sd_and_interval_against_numpy_and_scipy():
    st = require("scipy.stats")
    reports = [_fold(*c) for c in FOLDS]
    s = folds(reports, measures=["jaccard", "f1", "jaccard[X]", "macro_jaccard", "weighted_f1"], level=0.9)
    vals = np.array([1 / 2, 3 / 5, 2 / 4])
    j = s.stats["jaccard"]
    assert j["values"] == [1 / 2, 3 / 5, 2 / 4] and j["n"] == 3
    assert j["mean"] == pytest.approx(vals.mean(), abs=1e-15)
    assert j["sd"] == pytest.approx(np.std(vals, ddof=1), rel=1e-12)
    lo, hi = st.t.interval(0.9, 2, loc=vals.mean(), scale=np.std(vals, ddof=1) / math.sqrt(3))
    assert j["ci"] == pytest.approx([lo, hi], rel=1e-12) and j["clipped"] is False
    # one label: per label, macro and micro are the same numbers
    assert s.stats["jaccard[X]"]["values"] == s.stats["macro_jaccard"]["values"] == j["values"]
    # F1 = 2TP/(2TP+FP+FN): 2/3, 6/8, 4/6
    f = np.array([2 / 3, 6 / 8, 4 / 6])
    assert s.stats["f1"]["sd"] == pytest.approx(np.std(f, ddof=1), rel=1e-12)
    lo, hi = st.t.interval(0.9, 2, loc=f.mean(), scale=np.std(f, ddof=1) / math.sqrt(3))
    assert s.stats["f1"]["ci"] == pytest.approx([lo, hi], rel=1e-12)
    assert s.stats["weighted_f1"]["values"] == pytest.approx(list(f))
    assert s.to_dict()["measures"]["jaccard"]["clipped"] is False
    assert s.signature.endswith("|folds:3|ci:t|level:0.9")


def test_every_measure_by_default():
    s = folds([_fold(*c) for c in FOLDS]).stats
    assert {"precision", "recall", "f1", "f_beta", "jaccard", "micro_jaccard", "macro_f1", "weighted_jaccard",
            "macro_f1_of_macro_pr", "f1[X]", "jaccard[X]", "ser", "err", "e", "ser_weighted"} <= set(s)


def test_interval_clipped_to_the_range_by_hand():
    # F1 2/3 and 1: mean 5/6, sd = sqrt(2 (1/6)^2 / 1) = sqrt(1/18); t(0.975, 1) = 12.7062...
    # half-width 12.7062 * sqrt(1/18) / sqrt(2) = 2.1177 -> [-1.28, 2.95], cut to [0, 1]
    a = score_tags(reference=[["B-X", "B-X"]], prediction=[["B-X", "O"]])
    b = score_tags(reference=[["B-X"]], prediction=[["B-X"]])
    s = folds([a, b]).stats
    assert s["f1"]["mean"] == pytest.approx(5 / 6) and s["f1"]["sd"] == pytest.approx(math.sqrt(1 / 18))
    assert s["f1"]["ci"] == [0.0, 1.0] and s["f1"]["clipped"] is True
    # Jaccard 1/2 and 1: the same shape, cut to [0, 1]
    assert s["jaccard"]["ci"] == [0.0, 1.0] and s["jaccard"]["clipped"] is True
    # SER (S+D+I)/N: 1/2 and 0: mean 1/4, sd sqrt(2 (1/4)^2) = sqrt(1/8); half-width
    # 12.7062 * sqrt(1/8) / sqrt(2) = 12.7062 / 4 = 3.17655: [-2.93, 3.43] -> [0, 3.43] (no bound above)
    t = 12.706204736174698  # scipy.stats.t.ppf(0.975, 1)
    assert s["ser"]["ci"] == pytest.approx([0.0, 0.25 + t / 4], rel=1e-12) and s["ser"]["clipped"] is True
    # precision 1 in both folds: sd 0, an interval of one point, not clipped
    assert s["precision"]["ci"] == [1.0, 1.0] and s["precision"]["clipped"] is False


def test_too_few_folds_give_no_interval():
    s = folds([_fold(1, 1, 0)]).stats["jaccard"]
    assert (s["mean"], s["sd"], s["ci"], s["clipped"], s["n"]) == (0.5, None, None, None, 1)
    # a measure undefined in a fold is left out of its mean: Y only in the second fold
    two = folds([_fold(1, 0, 0), _fold(1, 0, 1, label="Y")], measures=["jaccard[Y]"]).stats["jaccard[Y]"]
    assert (two["values"], two["n"], two["ci"]) == ([None, 0.5], 1, None)


def test_ranges():
    assert [measure_range(m) for m in ("jaccard", "weighted_jaccard", "e[PER]", "macro_f1_of_macro_pr",
                                       "ser_weighted", "ser[PER]", "ts_kappa_macro", "ts_token_f1_micro",
                                       "token_accuracy", "unknown")] == [
        (0.0, 1.0), (0.0, 1.0), (0.0, 1.0), (0.0, 1.0), (0.0, None), (0.0, None), (-1.0, 1.0), (0.0, 1.0),
        (0.0, 1.0), None]


def test_errors_name_the_choices():
    with pytest.raises(ConfigError, match="unknown measure 'jacard'; choices: .*'jaccard'"):
        folds([_fold(1, 1, 0)], measures=["jacard"])
    with pytest.raises(ConfigError, match="at least one report"):
        folds([])


def test_aggregate_is_deprecated_and_reads_folds():
    a = score_tags(reference=[["B-X", "B-X"]], prediction=[["B-X", "O"]])  # F1 = 2/3
    b = score_tags(reference=[["B-X"]], prediction=[["B-X"]])  # F1 = 1
    with pytest.warns(DeprecationWarning, match=r"iescore\.stats\.folds"):
        agg = aggregate([a, b], keys=("f1", "jaccard", "ser"))
    assert agg["f1"] == {"mean": pytest.approx(5 / 6), "std": pytest.approx(math.sqrt(1 / 18)), "n": 2}
    assert agg["jaccard"]["mean"] == pytest.approx(3 / 4)  # 1/2 and 1
    assert agg["ser"]["mean"] == pytest.approx(1 / 4)
    # not counted under detail="prf": undefined, as before
    prf = [score_tags(reference=[["B-X"]], prediction=[["B-X"]], detail="prf")] * 2
    with pytest.warns(DeprecationWarning):
        assert aggregate(prf)["ser"] == {"mean": None, "std": None, "n": 0}
