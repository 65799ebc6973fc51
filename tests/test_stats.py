"""iescore.stats: bootstrap intervals, paired tests and ``iescore compare``.

The numbers are computed by hand in the comments, or come from an independent path:
re-scoring the resampled (or swapped) documents with ``score_tags`` instead of
re-summing the report's per-document counts.
"""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest

import iescore
from iescore import stats
from iescore.cli import main

# four sentences: PER found; ORG labelled LOC; MISC missed; LOC found with a spurious PER
REF = [["B-PER", "I-PER", "O", "B-LOC"], ["B-ORG", "O"], ["O", "B-MISC"], ["B-LOC", "I-LOC", "O"]]
PRED = [["B-PER", "I-PER", "O", "O"], ["B-LOC", "O"], ["O", "O"], ["B-LOC", "I-LOC", "B-PER"]]

CONFIGS = [
    {},
    {"average": "macro"},  # MISC and ORG have no prediction: macro precision leaves them out
    {"average": "weighted", "beta": 2.0},
    {"counting": "one-to-one", "rule": "O(1,1)"},
    {"token_weight": 2.0, "separator_weight": 0.5},
    {"detail": "prf"},
    {"supertags": (("PER", "NE"), ("LOC", "NE"))},
]


def same(a, b):
    return (a is None and b is None) or a == b


@pytest.mark.parametrize("kw", CONFIGS)
def test_every_document_once_is_the_report(kw):
    r = iescore.score_tags(reference=REF, prediction=PRED, **kw)
    got = {k: v[0] for k, v in stats.resample_measures(r, np.ones((1, 4))).items()}
    d = r.to_dict()
    # the report's own numbers, read from to_dict, bit for bit
    want = {"f1": r.f1, "precision": r.precision, "recall": r.recall}
    for avg in ("micro", "macro", "weighted"):
        for m in ("precision", "recall", "f1", "f_beta"):
            want[f"{avg}_{m}"] = d["averages"][avg][m]
    want["macro_f1_of_macro_pr"] = d["averages"]["macro"]["f1_of_macro_pr"]
    for lab, e in d["per_label"].items():
        want[f"f1[{lab}]"] = e["f1"]
        want[f"precision[{lab}]"] = e["precision"]
    if d["slot_errors"]:
        for m in ("ser", "err", "e", "ser_weighted"):
            want[m] = d["slot_errors"][m]
        for lab, e in d["per_label"].items():
            want[f"ser[{lab}]"] = e["ser"]
    if d["ts"]:
        for k in ("f1_macro", "f1_micro", "token_f1_macro", "f_beta_macro", "accuracy_macro", "kappa_macro"):
            want[f"ts_{k}"] = d["ts"][k]
    want["token_accuracy"] = d["token_accuracy"]
    want["token_accuracy_non_o"] = d["token_accuracy_non_o"]
    bad = {k: (v, got.get(k, "missing")) for k, v in want.items() if not same(v, got.get(k, "missing"))}
    assert not bad
    assert set(got) == set(stats.measure_names(r))


def test_macro_leaves_out_undefined_labels_per_resample():
    r = iescore.score_tags(reference=REF, prediction=PRED)
    # resample: sentence 1 twice, sentence 3 twice. PER tp 2 -> P 1; LOC tp 0 fn 2 -> P undefined;
    # MISC fn 2 -> P undefined. macro precision = mean over {PER} = 1.0; macro recall = (1 + 0 + 0)/3
    m = stats.resample_measures(r, np.array([[2, 0, 2, 0]]))
    assert m["macro_precision"] == [1.0]
    assert m["macro_recall"] == [1 / 3]
    assert m["precision[LOC]"] == [None] and m["f1[ORG]"] == [None]  # ORG absent from the resample
    # weighted F1: weights = reference items: PER 2, LOC 2, MISC 2 (ORG 0); F1 1, 0, 0 -> 2/6
    assert m["weighted_f1"] == [2 / 6]


def _rescored(ref, pred, counts, **kw):
    """The report of the resample ``counts`` built as a corpus (documents repeated)."""
    idx = [d for d, c in enumerate(counts) for _ in range(c)]
    return iescore.score_tags(reference=[ref[i] for i in idx], prediction=[pred[i] for i in idx], **kw)


def test_all_resamples_and_their_probabilities():
    c, p = stats.all_resamples(3)
    # 10 compositions of 3 draws; (3,0,0) 1/27, (2,1,0) 3/27, (1,1,1) 6/27
    prob = {tuple(row): q for row, q in zip(c.tolist(), p.tolist())}
    assert len(prob) == 10
    assert prob[(3, 0, 0)] == pytest.approx(1 / 27) and prob[(2, 1, 0)] == pytest.approx(3 / 27)
    assert prob[(1, 1, 1)] == pytest.approx(6 / 27)
    assert sum(prob.values()) == pytest.approx(1)


@pytest.mark.parametrize("kw", [{}, {"average": "macro"}, {"token_weight": 2.0}])
def test_bootstrap_distribution_is_the_enumeration_of_all_27_resamples(kw):
    ref, pred = REF[:3], PRED[:3]
    r = iescore.score_tags(reference=ref, prediction=pred, **kw)
    names = ("f1", "macro_f1", "ser", "err", "ts_f1_macro", "ts_kappa_macro", "token_accuracy")
    # independent path: every one of the 3**3 draws re-scored as a corpus, probability 1/27 each
    want: dict[str, dict] = {k: {} for k in names}
    for draw in itertools.product(range(3), repeat=3):
        counts = [draw.count(d) for d in range(3)]
        rr = _rescored(ref, pred, counts, **kw)
        got = stats.resample_measures(r, np.array([counts]))
        flat = {"f1": rr.f1, "macro_f1": rr.to_dict()["averages"]["macro"]["f1"], "ser": rr.to_dict()["slot_errors"]["ser"],
                "err": rr.to_dict()["slot_errors"]["err"], "ts_f1_macro": rr.to_dict()["ts"]["f1_macro"],
                "ts_kappa_macro": rr.to_dict()["ts"]["kappa_macro"], "token_accuracy": rr.token_accuracy}
        for k in names:
            # a resampled corpus that lacks a label has no entry for it; the report's label set stays
            if k in ("macro_f1", "ts_f1_macro", "ts_kappa_macro") and set(rr.labels) != set(r.labels):
                continue
            assert same(got[k][0], flat[k]), (k, counts)
            want[k][flat[k]] = want[k].get(flat[k], 0) + 1 / 27
    # the multinomial weights of the 10 distinct resamples give the same distribution
    c, p = stats.all_resamples(3)
    m = stats.resample_measures(r, c)
    for k in ("f1", "ser", "err", "token_accuracy"):
        dist: dict = {}
        for v, q in zip(m[k], p):
            dist[v] = dist.get(v, 0) + q
        assert set(dist) == set(want[k]) and all(dist[v] == pytest.approx(want[k][v]) for v in dist)


def test_bootstrap_counts_are_multinomial_draws():
    rng = np.random.default_rng(7)
    W = stats.bootstrap_counts(3, 27000, rng)
    assert (W.sum(axis=1) == 3).all()
    c, p = stats.all_resamples(3)
    freq = {tuple(r): 0 for r in c.tolist()}
    for row in W.tolist():
        freq[tuple(row)] += 1
    for row, q in zip(c.tolist(), p.tolist()):
        sd = math.sqrt(27000 * q * (1 - q))
        assert abs(freq[tuple(row)] - 27000 * q) < 5 * sd


@pytest.mark.parametrize("method", ["percentile", "bca"])
def test_intervals_of_a_constant_system_are_a_point(method):
    # every sentence: PER found, a spurious LOC -> tp = fp = k, fn = 0 in any resample:
    # P = 1/2, R = 1, F1 = 2k/3k = 2/3 whatever the draw
    ref = [["B-PER", "O"]] * 6
    pred = [["B-PER", "B-LOC"]] * 6
    r = iescore.score_tags(reference=ref, prediction=pred)
    b = stats.bootstrap(r, resamples=300, seed=5, method=method, measures=["f1", "precision", "recall", "f1[PER]"])
    assert b.intervals["f1"] == (2 / 3, 2 / 3)
    assert b.intervals["precision"] == (0.5, 0.5)
    assert b.intervals["f1[PER]"] == (1.0, 1.0)
    assert b.values["f1"] == 2 / 3


def test_bootstrap_percentile_by_hand():
    # two documents, PER found and LOC missed: draws (2,0) F1 1 (p 1/4), (1,1) F1 2/3 (p 1/2),
    # (0,2) F1 0 (p 1/4): the 2.5% and 97.5% quantiles are 0 and 1; the 25%..75% interval holds 2/3
    r = iescore.score_tags(reference=[["B-PER"], ["B-LOC"]], prediction=[["B-PER"], ["O"]])
    b = stats.bootstrap(r, resamples=2000, seed=11, measures=["f1"])
    assert b.intervals["f1"] == (0.0, 1.0)
    b50 = stats.bootstrap(r, resamples=2000, seed=11, measures=["f1"], level=0.4)
    assert b50.intervals["f1"] == (2 / 3, 2 / 3)
    d = b.to_dict()
    assert d["seed"] == 11 and d["method"] == "percentile" and d["intervals"]["f1"] == [0.0, 1.0]
    assert d["signature"].endswith("|ci:percentile|bs:2000|seed:11|level:0.95")
    # the same seed gives the same interval; chunking the resamples changes nothing
    assert stats.bootstrap(r, resamples=2000, seed=11, measures=["f1"]) == b


def test_chunks_give_the_same_result(monkeypatch):
    r = iescore.score_tags(reference=REF * 5, prediction=PRED * 5)
    a = stats.bootstrap(r, resamples=100, seed=2)
    monkeypatch.setattr(stats.resample, "_CHUNK_CELLS", 7 * 20)  # 7 resamples per chunk
    assert stats.bootstrap(r, resamples=100, seed=2) == a


def test_bca_is_a_shifted_percentile_interval():
    r = iescore.score_tags(reference=REF * 10, prediction=PRED * 10)
    p = stats.bootstrap(r, resamples=500, seed=3, measures=["f1"]).intervals["f1"]
    b = stats.bootstrap(r, resamples=500, seed=3, measures=["f1"], method="bca").intervals["f1"]
    assert p[0] <= r.f1 <= p[1] and b[0] <= r.f1 <= b[1]
    assert b != p


def test_a_system_compared_with_itself_has_p_1():
    r = iescore.score_tags(reference=REF * 3, prediction=PRED * 3)
    for test in ("bs", "ar"):
        c = stats.compare({"a": r, "b": r}, test=test, resamples=200, seed=1,
                          measures=["macro_f1", "ser", "ts_f1_macro"])
        b = c.systems[1]
        assert b["p_value"] == 1.0 and b["p_value_holm"] == 1.0 and b["significant"] is False
        assert c.systems[0]["p_value"] is None and b["group"] == c.systems[0]["group"] == 1
        assert b["f1_ci"] == c.systems[0]["f1_ci"]


# three sentences of one PER each: A finds all, B misses the first two
GOLD3 = [["B-PER"], ["B-PER"], ["B-PER"]]
A3 = [["B-PER"], ["B-PER"], ["B-PER"]]
B3 = [["O"], ["O"], ["B-PER"]]


def test_exact_randomization_by_hand():
    # F1(A) = 1 (tp 3), F1(B) = 2/(2+2) = 1/2 (tp 1, fn 2): observed |d| = 1/2. Swapping sentence 3
    # changes nothing. Swap neither or both of sentences 1, 2: |d| = 1/2; swap one: both systems
    # tp 2, fn 1 -> |d| = 0. Of the 8 swap patterns 4 are as extreme: p = 4/8.
    a = iescore.score_tags(reference=GOLD3, prediction=A3)
    b = iescore.score_tags(reference=GOLD3, prediction=B3)
    c = stats.compare({"A": a, "B": b}, test="ar", resamples="all")
    assert c.systems[1]["p_value"] == 0.5
    # random swaps estimate it: (hits + 1) / (R + 1) near 1/2
    c = stats.compare({"A": a, "B": b}, test="ar", resamples=2000, seed=4)
    assert abs(c.systems[1]["p_value"] - 0.5) < 0.05


def test_exact_randomization_is_the_permutation_test_by_rescoring():
    # independent path: every swap pattern re-scored as two corpora with score_tags
    ref = REF
    pa = PRED
    pb = [["B-PER", "O", "O", "B-LOC"], ["B-ORG", "O"], ["O", "B-PER"], ["B-LOC", "O", "O"]]
    for measure in ("f1", "macro_f1", "ser"):
        def value(rep):
            return stats.resample_measures(rep, np.ones((1, 4)))[measure][0]
        ra = iescore.score_tags(reference=ref, prediction=pa)
        rb = iescore.score_tags(reference=ref, prediction=pb)
        obs = abs(value(ra) - value(rb))
        hits = 0
        for swap in itertools.product((0, 1), repeat=4):
            x = [pb[i] if s else pa[i] for i, s in enumerate(swap)]
            y = [pa[i] if s else pb[i] for i, s in enumerate(swap)]
            sa = iescore.score_tags(reference=ref, prediction=x)
            sb = iescore.score_tags(reference=ref, prediction=y)
            hits += abs(value(sa) - value(sb)) >= obs
        c = stats.compare({"a": ra, "b": rb}, test="ar", resamples="all", measure=measure)
        assert c.systems[1]["p_value"] == hits / 16, measure


def test_holm_by_hand():
    # sorted 0.01, 0.03, 0.04 of m = 3: 3*0.01 = 0.03; 2*0.03 = 0.06; max(0.06, 1*0.04) = 0.06
    assert stats.holm([0.04, 0.01, 0.03]) == pytest.approx([0.06, 0.03, 0.06])
    assert stats.holm([0.5, 0.6]) == [1.0, 1.0]
    assert stats.holm([None, 0.2]) == [None, 0.2]


def test_groups_and_holm_over_several_systems():
    gold = [["B-PER", "O", "B-LOC"]] * 30
    good = gold
    bad = [["O", "O", "O"]] * 30
    reps = {n: iescore.score_tags(reference=gold, prediction=p) for n, p in
            (("bad", bad), ("good", good), ("good2", good))}
    # good vs bad, F1 1 vs 0. Bootstrap: d* = 1 in every resample, mean 1, |d* - mean| = 0 < 1.
    # Randomization (the default): |d*| = 1 only when no document or every one of the 30 is
    # swapped (2 of 2**30 patterns), none of 300 random ones here. Either way p = 1/301, and
    # Holm over two comparisons 2/301
    for test in (None, "bs"):
        c = stats.compare(reps, resamples=300, seed=9, **({} if test is None else {"test": test}))
        assert c.test == (test or "ar")
        rows = {s["name"]: s for s in c.systems}
        assert c.baseline == "bad" and c.to_dict()["correction"] == "holm"
        assert rows["good"]["p_value"] == 1 / 301 and rows["good"]["p_value_holm"] == 2 / 301
        assert rows["good"]["group"] == rows["good2"]["group"] == 1 and rows["bad"]["group"] == 2
        assert c.pairwise["good vs good2"] == 1.0  # tested for the group: identical systems


def test_compare_refuses_different_references():
    a = iescore.score_tags(reference=REF, prediction=PRED)
    b = iescore.score_tags(reference=REF[:3], prediction=PRED[:3])
    with pytest.raises(iescore.InputError, match="signature"):
        stats.compare({"a": a, "b": b})
    with pytest.raises(iescore.ConfigError, match="baseline"):
        stats.compare({"a": a}, baseline="z")
    with pytest.raises(iescore.ConfigError, match="unknown measure 'f3'"):
        stats.bootstrap(a, measures=["f3"])


def _conll(tmp_path, name, tags_per_sentence):
    p = tmp_path / name
    p.write_text("".join("".join(f"{t}\n" for t in s) + "\n" for s in tags_per_sentence))
    return str(p)


def test_cli_compare_json(tmp_path, capsys):
    gold = _conll(tmp_path, "gold", GOLD3 * 2)
    a = _conll(tmp_path, "a", A3 * 2)
    b = _conll(tmp_path, "b", B3 * 2)
    code = main(["compare", gold, a, b, "--documents", "sentence", "--json", "--resamples", "300",
                 "--seed", "3", "--measures", "f1,recall,ser", "--baseline", "b"])
    out, err = capsys.readouterr()
    assert code == 0, err
    d = json.loads(out)
    assert d["resamples"] == 300 and d["seed"] == 3 and d["baseline"] == "b" and d["correction"] == "holm"
    assert "|test:ar|n:300|seed:3|" in d["signature"] and "docs:sentence" in d["signature"]
    assert (d["test"], d["test_name"]) == ("ar", "approximate randomization (Riezler & Maxwell 2005)")
    rows = {s["name"]: s for s in d["systems"]}
    # A: tp 6 -> F1 1, recall 1, SER 0 (a constant system: interval [1, 1]); B: tp 2, fn 4 -> F1 4/8
    assert rows["a"]["f1"] == 1.0 and rows["a"]["f1_ci"] == [1.0, 1.0] and rows["a"]["ser_ci"] == [0.0, 0.0]
    assert rows["b"]["f1"] == 0.5 and rows["b"]["recall"] == 2 / 6 and rows["b"]["p_value"] is None
    assert set(rows["a"]) >= {"name", "f1", "f1_ci", "recall", "recall_ci", "ser", "ser_ci", "p_value", "group"}


def test_cli_compare_table_and_errors(tmp_path, capsys):
    gold = _conll(tmp_path, "gold", GOLD3)
    a = _conll(tmp_path, "a", A3)
    short = _conll(tmp_path, "short", A3[:2])
    code = main(["compare", gold, a, a, "--names", "x,y", "--paired", "ar", "--resamples", "50"])
    out, _ = capsys.readouterr()
    assert code == 0 and "x (baseline)" in out and "Holm" in out
    assert "p: approximate randomization (Riezler & Maxwell 2005) of f1 against x, 50 resamples;" in out
    code = main(["compare", gold, a, a, "--names", "x,y", "--paired", "bs", "--resamples", "50"])
    out, _ = capsys.readouterr()
    assert code == 0 and "p: paired bootstrap, centred (Efron & Tibshirani 1993) of f1 against x, 50 resamples;" in out
    code = main(["compare", gold, a, short])
    _, err = capsys.readouterr()
    assert code == 2 and "iescore: error:" in err
    code = main(["compare", gold, a, "--baseline", "nope"])
    _, err = capsys.readouterr()
    assert code == 2 and "unknown --baseline 'nope'" in err


def test_weighted_average_weights_by_reference_items_not_tp_plus_fn():
    # overlap rule, any-match: one predicted PER span covers two reference PERs: PER tp 1 (the
    # prediction), fn 0, but 2 reference items; LOC missed (F1 0, 1 item).
    # weighted F1 = (2 * 1 + 1 * 0) / 3 = 2/3 (tp + fn as weights would give 1/2)
    r = iescore.score_tags(reference=[["B-PER", "B-PER", "O", "B-LOC"]], prediction=[["B-PER", "I-PER", "O", "O"]],
                           rule="O(1,1)", average="weighted")
    assert stats.resample_measures(r, np.ones((1, 1)))["f1"] == [2 / 3]
    # drawn twice: the same weights doubled
    assert stats.resample_measures(r, np.array([[2]]))["weighted_f1"] == [2 / 3]


def _identity(report):
    """The measures of the resample that takes every document once, and the report's own."""
    got = {k: v[0] for k, v in stats.resample_measures(report, np.ones((1, len(report.doc_ids)))).items()}
    return got, stats._point(report)


def test_every_document_once_with_per_t_unit_weights():
    # TS counts weighted per token and separator (the report keeps them as floats per cell)
    D, S = iescore.Document, iescore.Span
    ref = [D("a", ("John", "Smith", "met", "Ann"), (S("PER", 0, 2), S("PER", 3, 4)),
             token_weights=(1, 2, 0.5, 1), separator_weights=(1, 0.25, 3)),
           D("b", ("in", "Paris", "today"), (S("LOC", 1, 2),), token_weights=(0.5, 0.5, 2), separator_weights=(1, 1))]
    pred = [[S("PER", 0, 1), S("PER", 3, 4)], [S("LOC", 1, 3)]]
    r = iescore.score(reference=ref, prediction=pred, average="macro")
    assert r.ts_cells is not None
    got, want = _identity(r)
    assert want["ts_f1_macro"] is not None
    assert {k: v for k, v in want.items() if not same(v, got[k])} == {}


def test_every_document_once_with_templates():
    T = iescore.Template
    ref = [T("1", {"PERP": ("the gang",), "TARGET": ("the bank", "a car")}), T("2", {"PERP": ("rebels",)})]
    pred = [T("1", {"PERP": ("the gang",), "TARGET": ("a car", "a bus")}), T("2", {"TARGET": ("rebels",)})]
    r = iescore.score_templates(reference=ref, prediction=pred, average="weighted")
    got, want = _identity(r)
    assert "ts_f1_macro" not in want and "token_accuracy" not in want  # no t-units, no tags
    assert {k: v for k, v in want.items() if not same(v, got[k])} == {}
    # template 1 twice: PERP tp 2; TARGET tp 2 ("a car"), fp 2 ("a bus"), fn 2 ("the bank"):
    # micro P = 4/6, R = 4/6
    m = stats.resample_measures(r, np.array([[2, 0]]))
    assert m["micro_precision"] == [4 / 6] and m["micro_recall"] == [4 / 6]


def test_student_t_quantiles_from_the_table():
    # two-sided 95% critical values of Student's t (any statistics table): df 1, 2, 4, 9, 30
    for df, t in ((1, 12.706), (2, 4.303), (4, 2.776), (9, 2.262), (30, 2.042)):
        assert round(stats.t_quantile(0.975, df), 3) == t
    assert round(stats.t_quantile(0.95, 3), 3) == 2.353


def test_folds_any_measure():
    # fold 1: PER found, LOC missed -> F1 2/3, macro F1 (1 + 0)/2 = 1/2, f1[LOC] 0
    # fold 2: PER found, spurious LOC -> F1 2/3, macro F1 (1 + 0)/2 = 1/2, f1[LOC] 0
    # fold 3: PER found only -> F1 1, macro F1 1 (one label), f1[LOC] absent
    f1 = iescore.score_tags(reference=[["B-PER", "B-LOC"]], prediction=[["B-PER", "O"]])
    f2 = iescore.score_tags(reference=[["B-PER", "O"]], prediction=[["B-PER", "B-LOC"]])
    f3 = iescore.score_tags(reference=[["B-PER"]], prediction=[["B-PER"]])
    s = stats.folds([f1, f2, f3], measures=["f1", "macro_f1", "f1[LOC]", "f1[PER]", "ts_f1_macro"])
    f = s.stats["f1"]
    # mean (2/3 + 2/3 + 1)/3 = 7/9; sd = sqrt((2 (1/9)^2 + (2/9)^2) / 2) = sqrt(1/27)
    assert f["mean"] == pytest.approx(7 / 9) and f["sd"] == pytest.approx(math.sqrt(1 / 27)) and f["n"] == 3
    h = 4.302653 * math.sqrt(1 / 27) / math.sqrt(3)  # t(0.975, 2) = 4.302653
    # 7/9 + h = 1.2559 lies past F1's range: the interval is cut at 1 and says so
    assert f["ci"] == pytest.approx([7 / 9 - h, 1.0], abs=1e-6) and f["clipped"] is True
    assert s.stats["macro_f1"]["mean"] == pytest.approx(2 / 3)  # (1/2 + 1/2 + 1)/3
    assert s.stats["f1[LOC]"]["n"] == 2 and s.stats["f1[LOC]"]["mean"] == 0.0 and s.stats["f1[LOC]"]["ci"] == [0.0, 0.0]
    assert s.stats["f1[PER]"]["ci"] == [1.0, 1.0]  # constant across folds: a point
    # TS-F1^M: fold 1 PER 1, LOC 0 -> 1/2; fold 2 the same; fold 3: 1 -> mean 2/3
    assert s.stats["ts_f1_macro"]["mean"] == pytest.approx(2 / 3)
    assert s.to_dict()["signature"].endswith("|folds:3|ci:t|level:0.95")
    with pytest.raises(iescore.ConfigError, match="fold #1"):
        stats.folds([f1, iescore.score_tags(reference=[["B-PER"]], prediction=[["B-PER"]], beta=2.0)])


def test_agreement_two_and_three_annotators_by_hand():
    A = [["B-PER", "O", "B-LOC"]]
    B = [["B-PER", "O", "O"]]
    C = [["B-PER", "O", "B-LOC"]]
    ag = stats.agreement({"A": A, "B": B, "C": C})
    rows = {(p["a"], p["b"]): p for p in ag.pairs}
    # A vs B: PER agreed, LOC only in A: F1 = 2/(2+1) = 2/3 both ways.
    # t-units (3 tokens, 2 separators) A: PER O LOC | O O; B: PER O O | O O: p_o = 4/5,
    # p_e = 3/5 * 4/5 + 1/5 * 1/5 = 13/25 -> kappa = (20 - 13)/(25 - 13) = 7/12
    assert rows[("A", "B")]["f1"] == 2 / 3 and rows[("A", "B")]["kappa"] == pytest.approx(7 / 12)
    assert rows[("A", "C")]["f1"] == 1.0 and rows[("A", "C")]["kappa"] == 1.0
    # Fleiss over A, B, C: unit agreement P = 1, 1, 1/3 (LOC, O, LOC), 1, 1 -> mean 13/15;
    # pooled: PER 3/15, LOC 2/15, O 10/15 -> P_e = 113/225; kappa = (195 - 113)/(225 - 113) = 82/112
    assert ag.fleiss_kappa == pytest.approx(82 / 112)
    assert ag.t_units == 5
    # two annotators: P = 4/5; pooled PER 2/10, LOC 1/10, O 7/10 -> P_e = 54/100; (80 - 54)/(100 - 54)
    assert stats.agreement({"A": A, "B": B}).fleiss_kappa == pytest.approx(26 / 46)


def test_agreement_is_scored_under_any_rule():
    # A: PER over tokens 0-1; B: PER over token 0 only. exact: F1 0; overlap O(1,1): F1 1
    A = [["B-PER", "I-PER", "O"]]
    B = [["B-PER", "O", "O"]]
    assert stats.agreement({"A": A, "B": B}).pairs[0]["f1"] == 0.0
    assert stats.agreement({"A": A, "B": B}, rule="O(1,1)").pairs[0]["f1"] == 1.0
    # t-units: A PER PER O | PER O ; B PER O O | O O: p_o = 3/5; A: PER 3/5, O 2/5; B: PER 1/5,
    # O 4/5: p_e = 3/5*1/5 + 2/5*4/5 = 11/25; kappa = (15 - 11)/(25 - 11) = 2/7
    assert stats.agreement({"A": A, "B": B}).pairs[0]["kappa"] == pytest.approx(2 / 7)


def test_cli_agree(tmp_path, capsys):
    a = _conll(tmp_path, "a", [["B-PER", "O", "B-LOC"]])
    b = _conll(tmp_path, "b", [["B-PER", "O", "O"]])
    code = main(["agree", a, b, "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    d = json.loads(out)
    assert d["annotators"] == ["a", "b"] and d["pairs"][0]["kappa"] == pytest.approx(7 / 12)
    code = main(["agree", a])
    _, err = capsys.readouterr()
    assert code == 2 and "two or more" in err
    # one file given twice: no path ending tells them apart; the error says so and how to name them
    code = main(["agree", a, a])
    _, err = capsys.readouterr()
    assert code == 2 and err == (f"iescore: error: the same file is given more than once: {a!r}; give each "
                                 "file once, or name them with --names (e.g. --names A,B)\n")
    code = main(["agree", a, a, "--names", "A,A"])
    _, err = capsys.readouterr()
    assert code == 2 and err.endswith("iescore: error: --names needs 2 distinct names, one per file; got 'A,A'\n")
    code = main(["agree", a, a, "--names", "A,B", "--json"])
    out, err = capsys.readouterr()
    assert code == 0 and json.loads(out)["pairs"][0]["kappa"] == 1.0  # the same tags: full agreement


def test_agreement_f1_is_the_mean_of_both_directions():
    # overlap rule, any-match. A: PER(0), PER(1), LOC(3); B: PER(0-2).
    # A the reference: B's PER hits (tp 1, fp 0), A's LOC missed (fn 1): F1 = 2/(2+1) = 2/3.
    # B the reference: A's two PERs hit (tp 2), A's LOC spurious (fp 1), fn 0: F1 = 4/5.
    ag = stats.agreement({"A": [["B-PER", "B-PER", "O", "B-LOC"]], "B": [["B-PER", "I-PER", "O", "O"]]},
                         rule="O(1,1)")
    p = ag.pairs[0]
    assert p["f1_ab"] == 2 / 3 and p["f1_ba"] == 4 / 5 and p["f1"] == pytest.approx(11 / 15)


def test_cli_compare_on_conll2003_systems(data, capsys):
    # the shared task's published F1 on eng.testb (Tjong Kim Sang & De Meulder 2003, Table 5):
    # Florian et al. 88.76, Chieu & Ng 88.31
    gold = str(data / "conll2003-eng" / "eng.testb")
    res = data / "conll2003-shared-task-outputs" / "results"
    code = main(["compare", gold, str(res / "florian" / "eng.testb"), str(res / "chieu" / "eng.testb"),
                 "--resamples", "200", "--json", "--measures", "f1,macro_f1,ser"])
    out, err = capsys.readouterr()
    assert code == 0, err
    d = json.loads(out)
    rows = {s["name"]: s for s in d["systems"]}
    assert round(100 * rows["florian/eng.testb"]["f1"], 2) == 88.76
    assert round(100 * rows["chieu/eng.testb"]["f1"], 2) == 88.31
    lo, hi = rows["chieu/eng.testb"]["f1_ci"]
    assert lo < rows["chieu/eng.testb"]["f1"] < hi
    assert 0 < rows["chieu/eng.testb"]["p_value"] <= 1 and d["baseline"] == "florian/eng.testb"


def test_a_report_of_totals_only_cannot_be_resampled():
    """A report that kept only totals has no per-document counts to draw: the paired tests
    and the bootstrap say so rather than give no interval."""
    from iescore.errors import InputError
    from iescore.scoring.stream import Scorer
    from iescore.stats.paired import compare
    from iescore.stats.resample import bootstrap

    s = Scorer(totals_only=True, scheme="IOB2")
    s.add_tags(reference=[["B-PER", "O"], ["B-LOC"]], prediction=[["B-PER", "O"], ["O"]])
    r = s.report()
    assert r.f1 == 2 / 3  # the totals themselves are there: P = 1, R = 1/2
    with pytest.raises(InputError, match="keeps only totals"):
        compare({"a": r, "b": r}, resamples=10)
    with pytest.raises(InputError, match="keeps only totals"):
        bootstrap(r, resamples=10)


# --- the count table's sparse sums against the dense matrix built plainly -------------------

from hypothesis import given, settings
from hypothesis import strategies as st

from iescore.stats import table as table_module
from iescore.stats.table import _mean_defined, _table, _weighted


def _sparse_or_dense(report, labels, dense_cells):
    """The report's table, summed from its cells (``dense_cells=0``) or as a matrix."""
    keep = table_module._DENSE_CELLS
    table_module._DENSE_CELLS = dense_cells
    try:
        tab = _table(report, labels)
        assert (tab._X is None) == (dense_cells == 0 and tab.n_docs * tab.n_columns > 0)
        return tab
    finally:
        table_module._DENSE_CELLS = keep

_TAGS = st.sampled_from(["O", "O", "B-A", "I-A", "B-B", "I-B", "B-C"])


def _dense_x(tab):
    """X as a plain (documents, columns) array, cell by cell from the report's count table
    (and its per-t-unit TS counts)."""
    r, L = tab.report, len(tab.labels)
    X = np.zeros((tab.n_docs, tab.n_columns))
    t, vf = r.table, r.table.value_fields
    from iescore.ts import TS_FIELDS

    weighted = r.ts_cells is not None  # the TS fields come from the per-t-unit counts
    if weighted:
        for k, name in enumerate(TS_FIELDS):
            for lab in range(len(r.labels)):
                X[:, tab.blocks[name].start + tab.labels.index(r.labels[lab])] = r.ts_cells[:, lab, k]
    for name, sl in tab.blocks.items():
        if name in vf and not (weighted and name in TS_FIELDS):
            for d, lab, row in zip(t.doc.tolist(), t.label.tolist(), t.values.tolist()):
                X[d, sl.start + tab.labels.index(r.labels[lab])] = row[vf.index(name)]
    for d in range(tab.n_docs):
        if "tok_n" in tab.blocks and not weighted:  # one column: the document's t-units
            n = int(t.doc_tokens[d]) if t.doc_tokens is not None else 0
            X[d, tab.blocks["tok_n"].start], X[d, tab.blocks["sep_n"].start] = n, max(n - 1, 0)
        if "tokens" in tab.blocks:
            X[d, tab.blocks["tokens"]] = np.asarray(r.token_counts).reshape(tab.n_docs, -1)[d]
    return X


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.tuples(_TAGS, _TAGS), max_size=8), min_size=1, max_size=8),
       st.sampled_from([{}, {"rule": "O(1,1)", "counting": "one-to-one"}, {"detail": "prf"}]),
       st.integers(0, 2**32 - 1))
def test_table_sums_equal_the_dense_product(docs, kw, seed):
    r = iescore.score_tags(reference=[[a for a, _ in d] for d in docs], prediction=[[b for _, b in d] for d in docs],
                           scheme="IOB2", **kw)
    extra = ("Z",) + tuple(r.labels)  # a label the report lacks: zero columns, and a shifted order
    for labels, dense_cells in itertools.product((None, extra), (0, table_module._DENSE_CELLS)):
        tab = _sparse_or_dense(r, labels, dense_cells)
        X = _dense_x(tab)
        W = np.random.default_rng(seed).integers(0, 4, size=(5, tab.n_docs)).astype(np.float64)
        assert np.array_equal(tab.sums(W), W @ X)
        assert np.array_equal(tab.total(), X.sum(axis=0))
        a = len(docs) // 3
        assert np.array_equal(tab.rows(a, len(docs)), X[a:])
        assert tab.bounds() == ((X.min(), X.max()) if X.size else (0.0, 0.0))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(st.sampled_from([float("nan"), 0.0, 0.1, 1 / 3, 0.7, 2.0, 1e-9, 12345.678]),
                         min_size=24, max_size=24), min_size=1, max_size=6),
       st.lists(st.booleans(), min_size=24, max_size=24))
def test_averages_add_left_to_right_as_a_loop_does(rows, mask):
    v = np.array(rows)
    w = np.where(np.isnan(v), 1.0, np.round(v * 3))
    m = np.array(mask)
    acc, n, num, den = np.zeros(len(v)), np.zeros(len(v)), np.zeros(len(v)), np.zeros(len(v))
    for j in np.flatnonzero(m):  # the plain loop: one label at a time
        ok = ~np.isnan(v[:, j])
        acc, n = acc + np.where(ok, v[:, j], 0.0), n + ok
        okw = ok & (w[:, j] != 0)
        num = num + np.where(okw, w[:, j] * np.where(okw, v[:, j], 0.0), 0.0)
        den = den + np.where(okw, w[:, j], 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(n > 0, acc / np.where(n > 0, n, 1), np.nan)
        weighted = np.where(den != 0, num / np.where(den != 0, den, 1), np.nan)
    assert np.array_equal(_mean_defined(v, m), mean, equal_nan=True)
    assert np.array_equal(_weighted(v, w, m), weighted, equal_nan=True)


def test_table_sums_with_per_t_unit_weights_equal_the_dense_product():
    # two documents whose t-units carry weights (the TS counts are then per document and label)
    from iescore import Document, Span

    ref = [Document("a", ("w",) * 5, (Span("A", 0, 2), Span("B", 3, 5)), token_weights=(1, 2, 0.5, 1, 1),
                    separator_weights=(1, 3, 1, 0.5)),
           Document("b", ("w",) * 3, (Span("B", 0, 3),), token_weights=(1, 1, 2), separator_weights=(1, 1))]
    pred = [Document("a", ("w",) * 5, (Span("A", 1, 2),), token_weights=(1, 2, 0.5, 1, 1),
                     separator_weights=(1, 3, 1, 0.5)),
            Document("b", ("w",) * 3, (Span("C", 0, 1),), token_weights=(1, 1, 2), separator_weights=(1, 1))]
    r = iescore.score(reference=ref, prediction=pred)
    assert r.ts_cells is not None
    for dense_cells in (0, table_module._DENSE_CELLS):
        tab = _sparse_or_dense(r, None, dense_cells)
        X = _dense_x(tab)
        assert X[:, tab.blocks["tok_tp"]].sum() > 0  # the weighted TS columns are there
        W = np.array([[1.0, 0.0], [2.0, 1.0], [0.0, 3.0]])
        assert np.array_equal(tab.sums(W), W @ X) and np.array_equal(tab.rows(1, 2), X[1:])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.sampled_from([float("nan"), 0.0, -0.0, 0.25, 1 / 3, 0.5, 2 / 3, 1.0, 7.0, -0.5]),
                         min_size=4, max_size=4), min_size=1, max_size=40),
       st.sampled_from([0.5, 0.8, 0.9, 0.95, 0.99]))
def test_defined_quantiles_equal_numpys_quantile_of_each_column(rows, level):
    from iescore.stats.resample import _defined_quantiles

    M = np.array(rows)
    keep = ~np.isnan(M).all(axis=0) & ~((M == 0) & np.signbit(M)).any(axis=0)  # as _intervals picks
    qs = [(1 - level) / 2, 1 - (1 - level) / 2]
    got = _defined_quantiles(M[:, keep], qs)
    for c, col in enumerate(M[:, keep].T):  # the plain path: one np.quantile per column
        want = np.quantile(col[~np.isnan(col)], qs)
        assert [float(g[c]) for g in got] == want.tolist()
        assert [math.copysign(1, g[c]) for g in got] == [math.copysign(1, w) for w in want]


def test_bootstrap_intervals_of_measures_undefined_in_some_resamples():
    # MISC is missed and ORG mislabelled: their precision is undefined in every resample, PER's
    # and LOC's only in the resamples that draw none of their predictions; each interval is
    # numpy's quantile of the resamples that define it (the per-measure path, checked here)
    r = iescore.score_tags(reference=REF, prediction=PRED, scheme="IOB2")
    b = stats.bootstrap(r, resamples=300, seed=5, measures=["precision[PER]", "precision[LOC]", "precision[MISC]"])
    from iescore.stats.resample import _interval, bootstrap_counts
    from iescore.stats.table import _measures

    rng = np.random.default_rng(5)
    W = bootstrap_counts(4, 300, rng).astype(np.float64)
    tab = _table(r)
    dist = _measures(tab.sums(W), tab)
    for k in ("precision[PER]", "precision[LOC]"):
        assert np.isnan(dist[k]).any() and not np.isnan(dist[k]).all()
        assert b.intervals[k] == _interval(dist[k], b.values[k], 0.95, "percentile", None)
    assert b.intervals["precision[MISC]"] is None
