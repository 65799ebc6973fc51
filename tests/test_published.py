"""Averages from published per-label numbers (iescore.stats.published): Chinchor's
weighted average, the macro average and the micro average recovered from P, R and the
answer keys, against sklearn, conlleval.pl's published table and arithmetic by hand."""

from __future__ import annotations

import argparse
import json

import pytest

from iescore.errors import IEScoreWarning, InputError
from iescore.stats import published
from iescore.stats.published import Row, read_table, weighted_average


def test_two_labels_by_hand():
    res = weighted_average([Row("PER", 0.9, 0.8, None, 10), Row("LOC", 0.5, 0.25, None, 4)])
    # F1: PER 2*0.9*0.8/1.7 = 1.44/1.7; LOC 2*0.5*0.25/0.75 = 1/3 (computed from P and R)
    f_per, f_loc = 1.44 / 1.7, 0.25 / 0.75
    assert res.f1_recomputed == ["PER", "LOC"]
    # weighted: (10 * x_PER + 4 * x_LOC) / 14
    assert res.weighted["precision"] == pytest.approx((9 + 2) / 14)
    assert res.weighted["recall"] == pytest.approx((8 + 1) / 14)
    assert res.weighted["f1"] == pytest.approx((10 * f_per + 4 * f_loc) / 14)
    # macro: plain means
    assert res.macro["precision"] == pytest.approx(0.7) and res.macro["recall"] == pytest.approx(0.525)
    # micro: TP = 0.8*10 = 8 and 0.25*4 = 1; predicted = 8/0.9 = 8.9 -> 9 and 1/0.5 = 2.
    # Each value has one digit (+-0.05): TP_PER in [7.5, 8.5], predicted_PER in 8/[0.85, 0.95] =
    # [8.42, 9.41]; TP_LOC in [0.8, 1.2], predicted_LOC in 1/[0.45, 0.55] = [1.82, 2.22]: one integer each
    assert res.counts == {"PER": {"tp": 8, "predicted": 9, "keys": 10}, "LOC": {"tp": 1, "predicted": 2, "keys": 4}}
    assert res.micro_exact
    assert res.micro == pytest.approx({"precision": 9 / 11, "recall": 9 / 14, "f1": 18 / 25})
    assert res.keys == 14 and res.zero_weight_labels == [] and res.scale == "fraction"


def test_weights_left_out_and_zero_weight_by_hand():
    rows = [Row("A", 0.5, 0.5, None, 2), Row("B", None, 0.25, None, 4), Row("C", 0.0, None, None, 0)]
    res = weighted_average(rows)
    assert res.zero_weight_labels == ["C"]
    # precision: B not given (left out), C given but of weight 0: 0.5*2/2
    assert res.weighted["precision"] == 0.5 and res.left_out["precision"] == ["B"]
    # recall: (0.5*2 + 0.25*4) / 6; C has no recall but weight 0: not left out
    assert res.weighted["recall"] == pytest.approx(2 / 6) and res.left_out["recall"] == []
    # F1: A's from P and R (0.5); B has no P (and R > 0): no F1, left out
    assert res.weighted["f1"] == 0.5 and res.left_out["f1"] == ["B"] and res.f1_recomputed == ["A"]
    # macro over the labels where given: P (0.5 + 0.0) / 2, R (0.5 + 0.25) / 2
    assert res.macro["precision"] == 0.25 and res.macro_left_out["precision"] == ["B"]
    assert res.macro["recall"] == 0.375 and res.macro_left_out["recall"] == ["C"]
    # micro recall: TP 1 + 1 + 0 over 6 keys; precision: B's predictions unknown (no P), C's
    # too (no true positive, so P = 0 says only that it predicted something)
    assert res.micro["recall"] == pytest.approx(2 / 6)
    assert res.micro["precision"] is None and res.micro["f1"] is None
    assert res.micro_left_out == ["B", "C"] and not res.micro_exact


def test_zero_recall_gives_zero_f1_from_the_counts():
    # R = 0 with 5 keys: TP = 0 and FN = 5, so 2TP / (2TP + FP + FN) = 0 whatever P is
    res = weighted_average([Row("A", None, 0.0, None, 5), Row("B", 1.0, 1.0, 1.0, 5)])
    assert res.f1_recomputed == ["A"] and res.weighted["f1"] == 0.5


def test_against_sklearn_weighted_and_micro():
    from sklearn.metrics import precision_recall_fscore_support as prfs

    y_true = ["PER", "PER", "LOC", "O", "ORG", "LOC", "PER", "ORG", "ORG", "O", "LOC", "PER", "O", "ORG"]
    y_pred = ["PER", "LOC", "LOC", "PER", "ORG", "O", "PER", "ORG", "LOC", "ORG", "LOC", "PER", "O", "PER"]
    labels = ["LOC", "ORG", "PER"]  # "O" is not a label: micro differs from accuracy
    p, r, f, support = prfs(y_true, y_pred, labels=labels, average=None)
    rows = [Row(lab, float(p[i]), float(r[i]), float(f[i]), int(support[i])) for i, lab in enumerate(labels)]
    res = weighted_average(rows)
    for average, ours in (("weighted", res.weighted), ("macro", res.macro), ("micro", res.micro)):
        expected = prfs(y_true, y_pred, labels=labels, average=average)[:3]
        assert [ours["precision"], ours["recall"], ours["f1"]] == pytest.approx(list(expected), abs=1e-12), average
    assert res.micro_exact and res.f1_disagrees == [] and res.f1_recomputed == []


# conlleval.pl's table for the florian output on eng.testb (README): per label P, R, F1 and
# "found" (predicted phrases); the answer keys are eng.testb's (LOC 1668, MISC 702, ORG 1661,
# PER 1617: 5648 phrases); conlleval: found 5620, correct 5001, P 88.99, R 88.54, F1 88.76
FLORIAN = [("LOC", "90.59", "91.73", "91.15", 1668, 1689), ("MISC", "83.46", "77.64", "80.44", 702, 653),
           ("ORG", "85.93", "83.44", "84.67", 1661, 1613), ("PER", "92.49", "95.24", "93.85", 1617, 1665)]


def test_conlleval_counts_are_recovered_from_its_published_percentages():
    res = weighted_average([Row(lab, p, r, f, k) for lab, p, r, f, k, _ in FLORIAN])
    assert res.scale == "percent" and res.micro_exact
    assert {lab: c["predicted"] for lab, c in res.counts.items()} == {lab: found for lab, *_, found in FLORIAN}
    assert sum(c["predicted"] for c in res.counts.values()) == 5620
    assert sum(c["tp"] for c in res.counts.values()) == 5001
    assert [round(100 * res.micro[m], 2) for m in ("precision", "recall", "f1")] == [88.99, 88.54, 88.76]
    # weighted recall = sum(R * keys) / sum(keys): the micro recall up to the published digits
    assert res.weighted["recall"] == pytest.approx(5001 / 5648, abs=0.00005)


def test_rounding_gives_bounds_when_the_counts_are_not_unique():
    # R 0.3 of 100 keys: TP in [25, 35]; P 0.6: predicted in [ceil(25/0.65), floor(35/0.55)] = [39, 63]
    res = weighted_average([Row("A", "0.6", "0.3", None, 100)])
    assert not res.micro_exact
    assert res.counts["A"] == {"tp": 30, "predicted": 50, "keys": 100}
    assert res.micro_bounds["recall"] == pytest.approx((0.25, 0.35))
    assert res.micro_bounds["precision"] == pytest.approx((25 / 63, 35 / 39))
    assert res.micro_bounds["f1"] == pytest.approx((50 / 163, 70 / 139))  # 2TP / (predicted + keys)


def test_digits_keep_trailing_zeros_of_floats():
    # 0.30 with digits=2: TP in [29.5, 30.5] of 100 keys, one integer
    res = weighted_average([Row("A", 0.6, 0.3, None, 100)], digits=2)
    assert res.counts["A"]["tp"] == 30 and res.micro_bounds["recall"] == pytest.approx((0.3, 0.3))


def test_f1_that_p_and_r_cannot_give_is_warned_naming_the_label():
    # F(0.80, 0.60) = 0.96/1.4 = 0.6857; within +-0.005: F(0.795, 0.595) = 0.6806 to F(0.805, 0.605) = 0.6908
    with pytest.warns(IEScoreWarning, match=r"label 'A'.*F1 0\.7 is not the F1 of P 0\.8 and R 0\.6"):
        res = weighted_average([Row("A", "0.80", "0.60", "0.70", 20)])  # TP 12, predicted 15
    assert res.f1_disagrees == ["A"] and res.weighted["f1"] == 0.7  # the published F1 is kept
    res = weighted_average([Row("A", "0.80", "0.60", "0.69", 20)])  # 0.685 to 0.695 meets the interval
    assert res.f1_disagrees == []


def test_a_recall_that_is_no_count_of_the_keys_is_warned():
    # 0.3333 of 10 keys: 3.3325 to 3.3335 holds no integer
    with pytest.warns(IEScoreWarning, match=r"label 'A'.*recall 0\.3333 is no count out of 10 answer keys"):
        res = weighted_average([Row("A", "0.5", "0.3333", None, 10)])
    assert res.micro["recall"] is None and res.micro_left_out == ["A"]


def test_bad_rows_are_refused():
    with pytest.raises(InputError, match=r"label 'A' is given twice"):
        weighted_average([Row("A", 0.5, 0.5, 0.5, 1), Row("A", 0.5, 0.5, 0.5, 1)])
    with pytest.raises(InputError, match=r"label 'A': answer keys -1 is not a count"):
        weighted_average([Row("A", 0.5, 0.5, 0.5, -1)])
    with pytest.raises(InputError, match=r"label 'A': precision '120' is above 100"):
        weighted_average([Row("A", "120", "50", None, 3)])
    with pytest.raises(InputError, match=r"'A'.*cannot be a fraction; give --scale percent"):
        weighted_average([Row("A", "50", "50", None, 3)], scale="fraction")
    with pytest.raises(InputError, match=r"scale 'percents' is not one of 'auto', 'fraction' or 'percent'"):
        weighted_average([Row("A", "50", "50", None, 3)], scale="percents")
    with pytest.raises(InputError, match=r"label 'A': recall 'x' is not a number"):
        weighted_average([{"label": "A", "precision": 0.5, "recall": "x", "keys": 3}])


def test_table_percent_marks_and_ambiguity(tmp_path):
    path = tmp_path / "t.tsv"
    path.write_text("# from the paper's table 3\nlabel\tP\tR\tF1\tsupport\nLOC\t90.59%\t91.73%\t\t1668\n"
                    "MISC\t0.80%\t-\t-\t7\n")
    rows = read_table(path)
    assert rows[0] == Row("LOC", "90.59%", "91.73%", "", 1668, f"{path}:3")
    res = weighted_average(rows)  # % marks percent: MISC's 0.80% is 0.008
    assert res.scale == "percent" and res.macro["precision"] == pytest.approx((0.9059 + 0.008) / 2)
    path.write_text("label,precision,recall,f1,keys\nLOC,90.59,91.73,91.15,1668\nMISC,0.8346,0.7764,0.8044,702\n")
    with pytest.raises(InputError, match=rf"'LOC' \({path}:2\) has a value above 1.*'MISC' \({path}:3\) is at most 1"):
        weighted_average(read_table(path))
    # read as percent, MISC's recall 0.7764% of 702 keys would be 5.45 answers: warned
    with pytest.warns(IEScoreWarning, match=r"'MISC'.*recall 0\.007764 is no count out of 702 answer keys"):
        res = weighted_average(read_table(path), scale="percent")
    assert res.macro["precision"] == pytest.approx((0.9059 + 0.008346) / 2)


def test_table_errors_name_the_line(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("label,precision,found,keys\nA,1,2,3\n")
    with pytest.raises(InputError, match=rf"{path}:1: column 'found' is not one of 'label'"):
        read_table(path)
    path.write_text("label,precision,keys\nA,0.5,3\nB,0.5,3.5\n")
    with pytest.raises(InputError, match=rf"{path}:3: keys '3.5' is not a count"):
        read_table(path)
    path.write_text("label,precision,keys\nA,0.5,3\n,0.5,3\n")
    with pytest.raises(InputError, match=rf"{path}:3: no label"):
        read_table(path)
    path.write_text("label,precision\nA,0.5\n")
    with pytest.raises(InputError, match=r"no 'keys' column"):
        read_table(path)


def _cli(argv):
    ap = argparse.ArgumentParser()
    published.add_parser(ap.add_subparsers(dest="command"))
    return published.main(ap.parse_args(["weighted", *argv]))


def test_command_line(tmp_path, capsys):
    path = tmp_path / "florian.csv"
    path.write_text("label,precision,recall,f1,keys\n" + "".join(f"{lab},{p},{r},{f},{k}\n" for lab, p, r, f, k, _ in FLORIAN))
    assert _cli([str(path)]) == 0
    out = capsys.readouterr().out
    assert "micro          88.99     88.54     88.76" in out and "every count recovered exactly" in out
    assert _cli([str(path), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["counts"]["LOC"] == {"tp": 1530, "predicted": 1689, "keys": 1668} and d["micro"]["exact"] is True
    path.write_text("label,precision,recall,f1,keys\nA,50,50,50,2\nB,0.5,0.5,0.5,2\n")
    assert _cli([str(path)]) == 2
    assert "iescore: error: percent or fraction?" in capsys.readouterr().err
    assert _cli([str(tmp_path / "none.csv")]) == 2
    assert f"iescore: error: cannot read {str(tmp_path / 'none.csv')!r}: No such file or directory" in capsys.readouterr().err
