"""Match modes with per-item statuses (SPEC §3.4), averages (§5), supertags and TS weights (§6)."""

from __future__ import annotations

import math

import pytest

from iescore import Config, Document, Span, Template, aggregate, score, score_tags, score_templates

TOKS = ("at", "5:00", "PM", "or", "at", "5:00", "pm", "x")
REF = Document("sem", TOKS, (Span("stime", 1, 3), Span("stime", 5, 7)))


def statuses(r, side):
    return [(i["start"], i["end"], i["status"]) for i in r.items(side)]


def test_match_best_keeps_the_most_confident_prediction():
    pred = [[Span("stime", 1, 3, 0.4), Span("stime", 5, 6, 0.9)]]
    r = score(reference=[REF], prediction=pred, mode="match-best", rule="E")
    assert (r.overall.tp, r.overall.fp, r.overall.fn) == (0, 1, 1)
    assert statuses(r, "prediction") == [(1, 3, "ignored"), (5, 6, "FP")]
    assert statuses(r, "reference") == [(1, 3, "FN"), (5, 7, "alternative")]
    se = r.to_dict()["slot_errors"]
    assert (se["C"], se["S"], se["D"], se["I"]) == (0, 1, 0, 0)  # the slot was filled with a wrong value

    r = score(reference=[REF], prediction=pred, mode="match-best", rule="O(0,1)")
    assert (r.overall.tp, r.overall.fp, r.overall.fn) == (1, 0, 0)
    assert statuses(r, "prediction") == [(1, 3, "ignored"), (5, 6, "TP")]
    assert statuses(r, "reference") == [(1, 3, "alternative"), (5, 7, "TP")]


def test_match_best_without_confidences_keeps_the_first_in_document_order():
    pred = [[Span("stime", 5, 6), Span("stime", 1, 3)]]
    r = score(reference=[REF], prediction=pred, mode="match-best")
    assert (r.overall.tp, r.overall.fp, r.overall.fn) == (1, 0, 0)
    assert sorted(statuses(r, "prediction")) == [(1, 3, "TP"), (5, 6, "ignored")]


def test_match_best_mixed_confidences_is_an_error():
    pred = [[Span("stime", 5, 6, 0.3), Span("stime", 1, 3)]]
    with pytest.raises(ValueError, match=r"document 'sem', predicted span \('stime', 1, 3\) has no confidence \(None or NaN\)"):
        score(reference=[REF], prediction=pred, mode="match-best")


def test_nan_confidence_is_refused():
    with pytest.raises(ValueError, match="span #0 has a NaN confidence"):
        Document("d", ("a",), (Span("X", 0, 1, math.nan),))


def test_one_per_string_collapses_equal_strings():
    toks = ("Al", "Roth", "and", "Ido", "Erev", ".", "Al", "Roth")
    ref = Document("d", toks, (Span("sp", 0, 2), Span("sp", 3, 5), Span("sp", 6, 8)))
    pred = [[Span("sp", 0, 2), Span("sp", 6, 8), Span("sp", 3, 4)]]
    all_ = score(reference=[ref], prediction=pred)
    assert (all_.overall.tp, all_.overall.fp, all_.overall.fn) == (2, 1, 1)
    one = score(reference=[ref], prediction=pred, mode="one-per-string")
    assert (one.overall.tp, one.overall.fp, one.overall.fn) == (1, 1, 1)
    # every occurrence carries its string's status ("ignored" and "alternative" are
    # match-best's statuses, Siefkes §15.2)
    assert statuses(one, "prediction") == [(0, 2, "TP"), (6, 8, "TP"), (3, 4, "FP")]
    assert statuses(one, "reference") == [(0, 2, "TP"), (3, 5, "FN"), (6, 8, "TP")]


def test_obd_normaliser():
    ref = [Template("d", {"speaker": ("Al Roth",)})]
    pred = [Template("d", {"speaker": ("AL   ROTH",)})]
    assert score_templates(reference=ref, prediction=pred).overall.tp == 0
    r = score_templates(reference=ref, prediction=pred, normaliser="lower")
    assert r.overall.tp == 1
    assert "norm:lower" in r.signature


def test_obd_substitutions_pair_remaining_fillers():
    ref = [Template("d", {"speaker": ("Al Roth", "Ido Erev")})]
    pred = [Template("d", {"speaker": ("Al Roth", "Cristina Bicchieri")})]
    se = score_templates(reference=ref, prediction=pred).to_dict()["slot_errors"]
    assert (se["C"], se["S"], se["D"], se["I"]) == (1, 1, 0, 0)


def test_averages_p14_weighted_hides_spurious_labels():
    r = score_tags(reference=[["B-PER", "O", "O"]], prediction=[["B-PER", "B-LOC", "O"]], scheme="IOB2")
    av = r.to_dict()["averages"]
    assert av["micro"]["f1"] == pytest.approx(2 / 3)
    assert av["macro"]["f1"] == pytest.approx(0.5)  # PER 1, LOC 0
    assert av["weighted"]["f1"] == 1.0
    assert av["weighted"]["zero_weight_labels"] == ["LOC"]
    assert av["macro"]["precision"] == pytest.approx(0.5)
    assert av["macro"]["recall"] == 1.0  # LOC's recall is undefined (no answers) and left out
    assert av["macro"]["f1_of_macro_pr"] == pytest.approx(2 / 3)
    lo = r.to_dict()["per_label"]["LOC"]
    assert (lo["precision"], lo["recall"], lo["f1"]) == (0.0, None, 0.0)


def test_headline_average_is_configurable():
    ref, pred = [["B-PER", "O", "O"]], [["B-PER", "B-LOC", "O"]]
    assert score_tags(reference=ref, prediction=pred, average="macro").f == pytest.approx(0.5)
    assert score_tags(reference=ref, prediction=pred, average="weighted").f == 1.0


def test_beta():
    # P = 1/2, R = 1: F2 = 5PR/(4P+R) = 2.5/3
    r = score_tags(reference=[["B-X", "O"]], prediction=[["B-X", "B-Y"]], beta=2.0)
    assert r.f == pytest.approx(2.5 / 3)
    assert "beta:2" in r.signature
    assert r.to_dict()["overall"]["f1"] == pytest.approx(2 / 3)


def test_supertags_merge_labels_before_scoring():
    ref, pred = [["B-PER", "I-PER", "O", "B-LOC"]], [["B-PER", "I-PER", "O", "B-ORG"]]
    assert score_tags(reference=ref, prediction=pred).overall.tp == 1
    r = score_tags(reference=ref, prediction=pred, supertags={"PER": "NE", "LOC": "NE", "ORG": "NE"})
    assert r.labels == ("NE",)
    assert r.overall.tp == 2
    assert "super:LOC>NE,ORG>NE,PER>NE" in r.signature


def test_ts_weights_tokens_only_on_the_fox():
    toks = ("The", "quick", "brown", "fox", "jumps", "over", "the", "lazy", "dog")
    ref = Document("fox", toks, (Span("X", 1, 3), Span("X", 7, 9)))
    pred = [[Span("X", 1, 4), Span("X", 7, 8), Span("X", 8, 9)]]
    ts = score(reference=[ref], prediction=pred, separator_weight=0.0).to_dict()["ts"]
    # tokens only: TP 4, FP 1 (fox), FN 0 -> F1 = 8/9; TN = 9 - 5 = 4
    assert ts["f1_macro"] == pytest.approx(8 / 9)
    tok = ts["per_label"]["X"]["tokens"]
    assert (tok["tp"], tok["fp"], tok["fn"], tok["tn"]) == (4, 1, 0, 4)
    assert tok["accuracy"] == pytest.approx(8 / 9)
    # kappa: po = 8/9, pe = (5*4 + 4*5)/81 = 40/81
    assert tok["kappa"] == pytest.approx((8 / 9 - 40 / 81) / (1 - 40 / 81))


def test_ts_rejects_multi_instance():
    ref = Document("m", ("a", "b", "c"), (Span("X", 0, 2), Span("X", 1, 3)))
    r = score(reference=[ref], prediction=[[]])
    assert r.to_dict()["ts"] is None
    assert r.ts_error == (
        "the token & separator model rejects multi-instance input: in document 'm' the reference "
        "has two overlapping 'X' spans (one starts at token 1 inside another ending at 2)"
    )
    assert r.overall.fn == 2  # span scores are still defined
    with pytest.raises(ValueError, match="in document 'm' the reference has two overlapping 'X' spans"):
        r.ts


def test_fold_aggregation():
    a = score_tags(reference=[["B-X", "B-X"]], prediction=[["B-X", "O"]])  # F1 = 2/3
    b = score_tags(reference=[["B-X"]], prediction=[["B-X"]])  # F1 = 1
    with pytest.warns(DeprecationWarning, match=r"iescore\.stats\.folds"):  # folds gives every measure
        agg = aggregate([a, b])["f1"]
    assert agg["mean"] == pytest.approx(5 / 6)
    assert agg["std"] == pytest.approx(math.sqrt(2 * (1 / 6) ** 2))


@pytest.mark.filterwarnings("ignore:no predicted label occurs in the reference:iescore.errors.IEScoreWarning")  # every label switched
def test_weighted_ser():
    # C=0, S=1 (PER->ORG), D=1 (LOC), I=1 (MISC): N=2; weights S=0.5, D=1, I=2 -> (0.5 + 1 + 2)/2
    r = score_tags(reference=[["B-PER", "O", "B-LOC"]], prediction=[["B-ORG", "B-MISC", "O"]], scheme="IOB2",
                   ser_weights=(0.5, 1.0, 2.0))
    se = r.to_dict()["slot_errors"]
    assert (se["ser"], se["ser_weighted"]) == (1.5, 1.75)
    assert "serw:0.5,1,2" in r.signature


def test_signature_round_trip():
    cfg = Config(setting="OBD", rule="C(2)", counting="one-to-one", mode="match-best", scheme="BILOU",
                 repair="discard", average="weighted", normaliser="lower+whitespace", beta=0.5,
                 supertags=(("PER", "NE"),), token_weight=1.0, separator_weight=0.5, ser_weights=(1, 0.5, 0.5))
    assert Config.from_signature(cfg.signature()) == cfg


@pytest.mark.filterwarnings("ignore:no predicted label occurs in the reference:iescore.errors.IEScoreWarning")  # every label switched
def test_confusion_table_shows_tag_switches():
    r = score_tags(reference=[["B-PER", "O", "B-LOC"]], prediction=[["B-ORG", "B-MISC", "O"]], scheme="IOB2")
    assert r.confusion_table() == {
        "LOC": {"none": 1}, "MISC": {}, "ORG": {}, "PER": {"ORG": 1}, "none": {"MISC": 1},
    }
    c = r.overall
    assert (c.C, c.S, c.D, c.I) == (0, 1, 1, 1)


def test_token_accuracy_counts_every_token():
    r = score_tags(reference=[["B-X", "O", "O", "O"]], prediction=[["O", "O", "O", "O"]])
    d = r.to_dict()
    assert d["token_accuracy"] == 0.75
    assert d["token_accuracy_non_o"] == 0.0


def test_detail_prf_gives_the_same_counts_as_the_full_report():
    import random

    rng = random.Random(5)
    alphabet = ["O", "O", "B-A", "I-A", "B-B", "I-B"]
    for _ in range(300):
        ref = [[rng.choice(alphabet) for _ in range(rng.randint(0, 9))] for _ in range(rng.randint(1, 4))]
        pred = [[rng.choice(alphabet) for _ in s] for s in ref]
        full = score_tags(reference=ref, prediction=pred, scheme="IOB2")
        fast = score_tags(reference=ref, prediction=pred, scheme="IOB2", detail="prf")
        for lab in full.labels:
            a, b = full.counts(lab), fast.counts(lab)
            assert (a.tp, a.fp, a.fn) == (b.tp, b.fp, b.fn)
        assert fast.to_dict()["averages"] == full.to_dict()["averages"]
        assert [i["status"] for i in fast.items()] == [i["status"] for i in full.items()]
    d = fast.to_dict()
    assert d["slot_errors"] is None and d["ts"] is None
    assert fast.signature == full.signature


def test_detail_prf_refuses_what_it_does_not_compute():
    with pytest.raises(ValueError, match="detail='prf' computes exact-match counts of tag input only"):
        score_tags(reference=[["B-A"]], prediction=[["B-A"]], rule="O(1,1)", detail="prf")


def test_ts_per_unit_weights_on_the_fox():
    toks = ("The", "quick", "brown", "fox", "jumps", "over", "the", "lazy", "dog")
    # "fox" weighs 2, every other token and separator 1
    ref = Document("fox", toks, (Span("X", 1, 3), Span("X", 7, 9)), token_weights=(1, 1, 1, 2, 1, 1, 1, 1, 1))
    pred = [[Span("X", 1, 4), Span("X", 7, 8), Span("X", 8, 9)]]
    r = score(reference=[ref], prediction=pred)
    ts = r.to_dict()["ts"]["per_label"]["X"]["ts"]
    # TP: quick, brown, lazy, dog + separator quick-brown = 5; FP: fox (2) + brown-fox = 3; FN: lazy-dog = 1
    assert (ts["tp"], ts["fp"], ts["fn"]) == (5, 3, 1)
    assert ts["tn"] == (10 + 8) - 9  # t-unit weights 10 + 8, minus TP+FP+FN
    assert ts["f1"] == pytest.approx(10 / 14)
    assert "tsw:1,1,unit" in r.signature
    # unit weights equal to the scalars give the unweighted numbers
    plain = Document("fox", toks, ref.spans, token_weights=(1,) * 9, separator_weights=(1,) * 8)
    assert score(reference=[plain], prediction=pred).to_dict()["ts"]["f1_macro"] == pytest.approx(10 / 13)


def test_ts_unit_weight_errors():
    with pytest.raises(ValueError, match=r"document 'w': 2 token_weights for 3 t-units"):
        Document("w", ("a", "b", "c"), token_weights=(1, 1))
    with pytest.raises(ValueError, match=r"separator_weights\[1\] = -1.0 is not a non-negative number"):
        Document("w", ("a", "b", "c"), separator_weights=(1, -1))


def test_ts_unit_weights_stream_like_one_shot():
    from iescore import Scorer

    a = Document("a", ("x", "y", "z"), (Span("X", 0, 2),), token_weights=(3, 1, 1), separator_weights=(2, 1))
    b = Document("b", ("u", "v"), (Span("Y", 1, 2),))
    pa, pb = [Span("X", 1, 3)], [Span("Y", 0, 2)]
    one = score(reference=[a, b], prediction=[pa, pb]).to_dict()
    s = Scorer()
    s.add(reference=[a], prediction=[pa])
    s.add(reference=[b], prediction=[pb])
    assert s.report().to_dict() == one
    x = one["ts"]["per_label"]["X"]["ts"]
    # X: tokens TP y (1), FP z (1), FN x (3); separators TP none, FP y-z (1), FN x-y (2); t-units 5+3 in a, 2+1 in b
    assert (x["tp"], x["fp"], x["fn"], x["tn"]) == (1, 2, 5, 11 - 8)


def test_match_best_names_a_missing_or_infinite_confidence():
    """match-best ranks by confidence: every prediction has a finite one, or none has. The
    error says which prediction lacks one (None) or has one that is not finite (inf)."""
    from iescore import Document, InputError, Span, score

    d = Document(id="d", tokens=tuple("abcdefg"), spans=(Span("X", 0, 1),))
    for given, has in ((None, "no confidence (None or NaN)"), (float("nan"), "no confidence (None or NaN)"),
                       (float("inf"), "the confidence inf, not a finite number")):
        with pytest.raises(InputError) as e:
            score(reference=[d], prediction=[[Span("X", 0, 1, score=0.2), Span("X", 5, 6, score=given)]],
                  mode="match-best")
        assert str(e.value) == ("match-best needs a finite confidence on every prediction or on none: "
                                f"document 'd', predicted span ('X', 5, 6) has {has}")
