"""Calibration and power of the paired tests of ``iescore.stats.compare`` on simulated data
sets, and the centred paired bootstrap's p-value recomputed by hand from the same draws.

A simulated data set: ``D`` documents, each of 1 to 6 PER entities (one token each, each
followed by an O token). A system finds each entity with probability ``q`` (else tags it O:
a false negative) and tags each O token B-LOC with probability 0.05 (a false positive).
Under the null hypothesis both systems have the same ``q``, drawn independently per
document: the same per-document error distribution.
"""

from __future__ import annotations

import numpy as np
import pytest

import iescore
from iescore import stats
from iescore.stats.table import TEST_NAMES, TESTS

ALPHA = 0.05


def _system(rng: np.random.Generator, n_entities: np.ndarray, q: float) -> list[list[str]]:
    out = []
    for k in n_entities:
        found = rng.random(k) < q
        spurious = rng.random(k) < 0.05
        out.append([t for f, s in zip(found, spurious) for t in ("B-PER" if f else "O", "B-LOC" if s else "O")])
    return out


def _data_set(rng: np.random.Generator, docs: int, q_a: float, q_b: float) -> tuple[iescore.Report, iescore.Report]:
    n = rng.integers(1, 7, size=docs)
    gold = [["B-PER", "O"] * int(k) for k in n]
    a = iescore.score_tags(reference=gold, prediction=_system(rng, n, q_a))
    b = iescore.score_tags(reference=gold, prediction=_system(rng, n, q_b))
    return a, b


def _rejections(sets: int, docs: int, q_b: float, resamples: int, seed: int) -> dict[str, float]:
    """The share of ``sets`` data sets in which each test rejects at ALPHA (F1 of A against B)."""
    rng = np.random.default_rng(seed)
    hits = {t: 0 for t in TESTS}
    for k in range(sets):
        a, b = _data_set(rng, docs, 0.8, q_b)
        for t in TESTS:
            c = stats.compare({"A": a, "B": b}, test=t, resamples=resamples, seed=k, measures=[])
            hits[t] += c.systems[1]["p_value"] < ALPHA
    return {t: h / sets for t, h in hits.items()}


def test_every_test_is_named_by_what_it_computes():
    assert set(TESTS) == {"ar", "bs"} and TESTS[0] == "ar"  # the default comes first
    assert TEST_NAMES == {"ar": "approximate randomization (Riezler & Maxwell 2005)",
                          "bs": "paired bootstrap, centred (Efron & Tibshirani 1993)"}


def test_under_the_null_every_test_rejects_in_about_alpha_of_the_data_sets():
    # 400 null data sets of 60 documents, 300 resamples: a test rejecting in exactly 5% of
    # them gives a share with standard deviation sqrt(0.05 * 0.95 / 400) = 1.1 points, so
    # 0.02-0.08 is about 2.7 standard deviations either side. The statistic that subtracts
    # mean|d*| from |d*| (sacrebleu's) rejects in 13.5% of these data sets.
    rates = _rejections(sets=400, docs=60, q_b=0.8, resamples=300, seed=20240)
    for t, r in rates.items():
        assert 0.02 <= r <= 0.08, (t, r)


def test_a_clearly_worse_system_is_found_worse_by_every_test():
    # 40 documents of 3.5 entities on average: 140 entities. A finds 80% of them, B 50%; both
    # add about 7 false positives. F1(A) ~ 2*112/(224 + 7 + 28) = 0.86, F1(B) ~ 140/(140 + 7 + 70)
    # = 0.65: a difference of 0.21, against a standard deviation of the difference of about
    # sqrt(0.8 * 0.2 / 140 + 0.5 * 0.5 / 140) = 0.054 (the recalls'), some 4 standard deviations:
    # a test at 0.05 misses such a difference in a few data sets in a hundred at most.
    rates = _rejections(sets=100, docs=40, q_b=0.5, resamples=300, seed=7)
    for t, r in rates.items():
        assert r >= 0.9, (t, r)


# three documents of one PER each: A finds all three, B only the third
GOLD3 = [["B-PER"], ["B-PER"], ["B-PER"]]
A3 = [["B-PER"], ["B-PER"], ["B-PER"]]
B3 = [["O"], ["O"], ["B-PER"]]


def test_centred_bootstrap_by_hand():
    # F1(A) = 1, F1(B) = 2*1 / (2*1 + 2) = 1/2: observed |d| = 1/2. A resample that draws the
    # third document c times (of 3 draws) has F1(A*) = 1, F1(B*) = 2c / (c + 3), so
    # d* = 1, 1/2, 1/5, 0 for c = 0..3, with probabilities 8, 12, 6, 1 (/27): mean(d*) near
    # 15.2/27 = 0.563. |d* - mean| = 0.44, 0.06, 0.36, 0.56: only c = 3 (every draw the third
    # document) is at least 1/2, so p = (1 + #{c = 3}) / (R + 1), near 1/27 = 0.037.
    # (Subtracting mean|d*| from |d*| instead never reaches 1/2: p would be 1/(R + 1).)
    a = iescore.score_tags(reference=GOLD3, prediction=A3)
    b = iescore.score_tags(reference=GOLD3, prediction=B3)
    R = 2000
    c = stats.compare({"A": a, "B": b}, test="bs", resamples=R, seed=5)
    draws = np.random.default_rng(5).integers(0, 3, size=(R, 3))  # compare's draws: document indices
    every_draw_third = int((draws == 2).all(axis=1).sum())
    assert c.systems[1]["p_value"] == (1 + every_draw_third) / (R + 1)
    assert c.systems[1]["p_value"] == pytest.approx(1 / 27, abs=0.01)
    assert c.test == "bs" and c.test_name == "paired bootstrap, centred (Efron & Tibshirani 1993)"
    assert "|test:bs|n:2000|seed:5|" in c.signature


def test_centred_bootstrap_recomputed_with_numpy():
    # four documents, two labels; F1 (micro) recomputed per resample from the documents'
    # tp, fp, fn counted by hand, with the draws compare makes (one block of R x D indices)
    ref = [["B-PER", "O", "B-LOC"], ["B-PER"], ["B-LOC", "O"], ["B-PER", "B-LOC"]]
    pa = [["B-PER", "O", "B-LOC"], ["O"], ["B-LOC", "B-PER"], ["B-PER", "O"]]
    pb = [["B-PER", "O", "O"], ["B-PER"], ["O", "O"], ["B-LOC", "B-LOC"]]
    # per document (tp, fp, fn): A (2,0,0) (0,0,1) (1,1,0) (1,0,1); B (1,0,1) (1,0,0) (0,0,1) (1,1,1)
    ca = np.array([[2, 0, 0], [0, 0, 1], [1, 1, 0], [1, 0, 1]])
    cb = np.array([[1, 0, 1], [1, 0, 0], [0, 0, 1], [1, 1, 1]])
    ra = iescore.score_tags(reference=ref, prediction=pa)
    rb = iescore.score_tags(reference=ref, prediction=pb)
    assert (ra.overall.tp, ra.overall.fp, ra.overall.fn) == (4, 1, 2)
    assert (rb.overall.tp, rb.overall.fp, rb.overall.fn) == (3, 1, 3)

    def f1(c):
        return 2 * c[..., 0] / (2 * c[..., 0] + c[..., 1] + c[..., 2])

    R, seed = 500, 8
    idx = np.random.default_rng(seed).integers(0, 4, size=(R, 4))
    d = f1(ca[idx].sum(axis=1)) - f1(cb[idx].sum(axis=1))
    observed = abs(8 / 11 - 6 / 10)  # F1(A) = 8/11, F1(B) = 6/10
    want = (1 + int(np.sum(np.abs(d - d.mean()) >= observed))) / (R + 1)
    c = stats.compare({"A": ra, "B": rb}, test="bs", resamples=R, seed=seed)
    assert c.systems[1]["p_value"] == pytest.approx(want, abs=1e-12)
    assert 0.2 < want < 1  # a small difference over four documents: far from significant
