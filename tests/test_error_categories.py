"""Error categories (README, Definitions: error categories): the papers' worked examples by
hand, the partner links, streaming, and nervaluate's COR/INC/PAR/MIS/SPU where its
definitions coincide with ours."""

from __future__ import annotations

import json
import random

import pytest
from conftest import require
from test_spec_examples import EX6_PRED, EX6_REF, EX7_PRED, EX7_REF

from iescore import Document, Scorer, Span, score, score_tags, score_templates
from iescore.cli import main

ZERO = dict.fromkeys(("correct", "wrong_label", "wrong_boundary", "wrong_label_boundary", "missed", "spurious"), 0)


def cats(report, label=None):
    d = report.to_dict()["categories"]
    got = d["overall"] if label is None else d["per_label"][label]
    return {k: got[k] for k in ZERO}


def want(**kw):
    return {**ZERO, **kw}


# --- De Sitter et al. 2004, Example 6 (AO) ---------------------------------------------
# F = {(18,25), (93,100)}, F^ = {(20,25), (93,101), (50,52)} (1-based inclusive). Overlapping
# pairs: (18,25)~(20,25) and (93,100)~(93,101); (50,52) overlaps no answer. The alignment
# pairs both overlaps (most pairs); each pair has the label loc on both sides and another
# extent -> 2 wrong_boundary (MUC PAR), (50,52) spurious. The category describes the pair,
# so it is the same under every rule, while C changes: exact C = 0, overlap(1,2) C = 2.
@pytest.mark.parametrize("rule, C", [("exact", 0), ("contain(1)", 1), ("overlap(1,2)", 2)])
def test_de_sitter_example_6(rule, C):
    r = score(reference=[EX6_REF], prediction=EX6_PRED, rule=rule)
    assert cats(r) == want(wrong_boundary=2, spurious=1)
    muc = r.to_dict()["categories"]["overall"]
    assert (muc["COR"], muc["INC"], muc["PAR"], muc["MIS"], muc["SPU"]) == (0, 0, 2, 0, 1)
    assert r.to_dict()["slot_errors"]["C"] == C
    ref, pred = list(r.items("reference")), list(r.items("prediction"))
    # the answer (18,25) = [17, 25) is linked to (20,25) = [19, 25), (93,100) to (93,101)
    assert [(i["partner"]["start"], i["partner"]["end"]) for i in ref] == [(19, 25), (92, 101)]
    assert [i["category"] for i in pred] == ["wrong_boundary", "wrong_boundary", "spurious"]  # input order
    assert [(i["start"], i["partner"] and i["partner"]["index"]) for i in pred] == [(19, 0), (92, 1), (49, None)]
    # each partner link goes both ways
    for k, i in enumerate(ref):
        assert pred[i["partner"]["index"]]["partner"]["index"] == k


# --- De Sitter et al. 2004, Example 7 (OBD, speaker) ------------------------------------
# answers {Al Roth, Ido Erev}, predictions {Al Roth, Ido, Cristina Bicchieri}. Al Roth = Al Roth
# is correct; the alignment then pairs Ido Erev with the filler sharing most tokens, Ido (1
# shared token, Cristina Bicchieri 0) -> wrong_boundary; Cristina Bicchieri is spurious.
@pytest.mark.parametrize("rule, C", [("E", 1), ("O(1,2)", 2)])
def test_de_sitter_example_7(rule, C):
    r = score_templates(reference=[EX7_REF], prediction=[EX7_PRED], rule=rule)
    assert cats(r) == want(correct=1, wrong_boundary=1, spurious=1)
    assert r.to_dict()["slot_errors"]["C"] == C
    by_text = {i["text"]: i for i in r.items("reference")}
    assert by_text["Ido Erev"]["partner"]["text"] == "Ido"
    assert by_text["Al Roth"]["partner"]["text"] == "Al Roth" and by_text["Al Roth"]["muc"] == "COR"


def test_one_per_string_gives_every_occurrence_its_strings_category():
    # "Al Roth" occurs twice on each side, "and" (org) once: two strings per side, aligned with
    # the equal strings -> every occurrence correct, each linked to the partner string's earliest
    # occurrence in the document: "Al Roth" -> prediction item 1 (at token 0, given second),
    # "and" -> prediction item 2; the other way, reference items 0 and 2
    toks = ("Al", "Roth", "and", "Al", "Roth")
    ref = Document("d", toks, (Span("per", 0, 2), Span("per", 3, 5), Span("org", 2, 3)))
    pred = [[Span("per", 3, 5), Span("per", 0, 2), Span("org", 2, 3)]]
    r = score(reference=[ref], prediction=pred, mode="one-per-string")
    items = list(r.items("reference"))
    assert [i["category"] for i in items] == ["correct", "correct", "correct"]
    assert [i["partner"]["index"] for i in items] == [1, 1, 2]
    assert [i["partner"]["index"] for i in r.items("prediction")] == [0, 0, 2]
    assert cats(r) == want(correct=2)  # strings, not occurrences, are counted


# --- Makhoul et al. 2000 ------------------------------------------------------------------
def test_makhoul_table_1():
    # N = 5 answers, system A finds nothing: 5 missed; system B adds one insertion (I = 0.2 N)
    # where no answer is: 5 missed, 1 spurious
    toks = tuple("abcdefghijklmnopqrst")
    ref = Document("d", toks, tuple(Span("X", 2 * k, 2 * k + 1) for k in range(5)))
    assert cats(score(reference=[ref], prediction=[[]])) == want(missed=5)
    b = score(reference=[ref], prediction=[[Span("X", 15, 16)]])
    assert cats(b) == want(missed=5, spurious=1)
    assert b.to_dict()["categories"]["overall"]["MIS"] == 5


def test_makhoul_c3_s1_d1_i2():
    # Makhoul's E example's counts built from spans: 3 correct, one substitution (B at [6, 7)
    # predicted C, same extent -> wrong label), one deletion ([8, 9) unanswered), two insertions
    toks = tuple("abcdefghijklmn")
    ref = Document("d", toks, (Span("A", 0, 1), Span("A", 2, 3), Span("B", 4, 5), Span("B", 6, 7), Span("A", 8, 9)))
    pred = [[Span("A", 0, 1), Span("A", 2, 3), Span("B", 4, 5), Span("C", 6, 7), Span("C", 10, 11), Span("A", 12, 13)]]
    r = score(reference=[ref], prediction=pred)
    se = r.to_dict()["slot_errors"]
    assert (se["C"], se["S"], se["D"], se["I"]) == (3, 1, 1, 2)
    assert cats(r) == want(correct=3, wrong_label=1, missed=1, spurious=2)
    # per label: the substitution is B's (the reference label); C's spurious one is C's
    assert cats(r, "B") == want(correct=1, wrong_label=1)
    assert cats(r, "C") == want(spurious=1)
    assert cats(r, "A") == want(correct=2, missed=1, spurious=1)


def test_wrong_label_and_boundary():
    # answer PER [0, 2), prediction ORG [1, 3): they overlap on token 1, labels and extents
    # differ -> wrong_label_boundary, MUC INC (an answer of the wrong type is incorrect)
    r = score(reference=[Document("d", ("a", "b", "c"), (Span("PER", 0, 2),))], prediction=[[Span("ORG", 1, 3)]])
    assert cats(r) == want(wrong_label_boundary=1)
    assert r.to_dict()["categories"]["overall"]["INC"] == 1
    assert next(r.items("prediction"))["partner"]["label"] == "PER"


def test_partners_across_batches_index_the_whole_report():
    # two batches: the second batch's partner indices count the first batch's items
    s = Scorer()
    s.add_tags(reference=[["B-PER", "O"]], prediction=[["O", "B-LOC"]])  # 1 missed, 1 spurious
    s.add_tags(reference=[["B-PER", "I-PER"]], prediction=[["B-ORG", "I-ORG"]])  # wrong label
    r = s.report()
    ref, pred = list(r.items("reference")), list(r.items("prediction"))
    assert [i["category"] for i in ref] == ["missed", "wrong_label"]
    assert [i["category"] for i in pred] == ["spurious", "wrong_label"]
    assert ref[1]["partner"]["index"] == 1 and pred[1]["partner"]["index"] == 1
    assert ref[1]["doc"] == pred[1]["doc"] == "1"


def test_counting_and_alignment_pick_the_same_prediction_for_one_answer():
    """Concepts: error categories. Answer X[1,3); predictions X[0,2), X[2,3); O(1,1),
    one-to-one. Both pairs are within the rule, neither exact; boundary errors
    |1-0|+|3-2| = 2 and |1-2|+|3-3| = 1, so the matching takes [2,3) (the TP) and leaves
    [0,2) (the FP). The alignment prefers, among correct pairs, the least boundary error
    too, so [2,3) is the answer's partner (wrong boundary) and [0,2) is spurious: an
    item's status and its category never disagree. C = TP = 1, I = 1 (N = 1, M = 2)."""
    r = score_tags(reference=[["O", "B-X", "I-X", "O"]], prediction=[["B-X", "I-X", "B-X", "O"]],
                   rule="O(1,1)", counting="one-to-one")
    (ref,) = r.items("reference")
    early, late = r.items("prediction")
    assert (ref["status"], ref["category"], ref["partner"]["start"], ref["partner"]["end"]) == ("TP", "wrong_boundary", 2, 3)
    assert (early["start"], early["status"], early["category"], early["muc"], early["partner"]) == (0, "FP", "spurious", "SPU", None)
    assert (late["start"], late["status"], late["category"], late["muc"]) == (2, "TP", "wrong_boundary", "PAR")
    se = r.to_dict()["slot_errors"]
    assert (se["C"], se["S"], se["D"], se["I"], r.overall.tp, r.overall.fp, r.overall.fn) == (1, 0, 0, 1, 1, 1, 0)


def test_no_alignment_no_categories():
    # match-best keeps one prediction per attribute and has no alignment; detail="prf" no pairs
    for opts in ({"mode": "match-best"}, {"detail": "prf"}):
        r = score_tags(reference=[["B-PER"]], prediction=[["B-PER"]], **opts)
        assert r.to_dict()["categories"] is None
        assert next(r.items())["category"] is None and next(r.items())["partner"] is None
        assert "error categories" not in r.format_table()


def test_cli_json_has_the_categories(tmp_path, capsys):
    p = tmp_path / "x.conll"
    p.write_text("Paris B-LOC B-PER\n", encoding="utf-8")
    assert main(["score", str(p), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    # one token, gold LOC, predicted PER: the same extent, another label
    assert d["categories"]["overall"]["wrong_label"] == 1 and d["categories"]["per_label"]["LOC"]["INC"] == 1


# --- nervaluate ---------------------------------------------------------------------------
# nervaluate (Batista's implementation of SemEval-2013 task 9.1) walks the predictions and
# pairs each with the first overlapping answer; an answer may be counted by several
# predictions. Where every answer overlaps at most one prediction and every prediction at
# most one answer, its pairs are our alignment's, and its four schemas are sums of our
# categories:
#   strict:   COR = correct; INC = wrong_label + wrong_boundary + wrong_label_boundary
#   exact:    COR = correct + wrong_label; INC = wrong_boundary + wrong_label_boundary
#   partial:  COR = correct + wrong_label; PAR = wrong_boundary + wrong_label_boundary
#   ent_type: COR = correct + wrong_boundary; INC = wrong_label + wrong_label_boundary
# with MIS = missed and SPU = spurious in all four. (Its per-type results keep only one
# type's items on both sides, so a wrong label is a miss plus a spurious item there: only the
# overall numbers are compared.)
def from_ours(c):
    wl, wb, both = c["wrong_label"], c["wrong_boundary"], c["wrong_label_boundary"]
    base = {"missed": c["missed"], "spurious": c["spurious"]}
    return {
        "strict": {"correct": c["correct"], "incorrect": wl + wb + both, "partial": 0, **base},
        "exact": {"correct": c["correct"] + wl, "incorrect": wb + both, "partial": 0, **base},
        "partial": {"correct": c["correct"] + wl, "incorrect": 0, "partial": wb + both, **base},
        "ent_type": {"correct": c["correct"] + wb, "incorrect": wl + both, "partial": 0, **base},
    }


def one_to_one_overlaps(ref, pred):
    """Every span overlaps at most one span of the other side."""
    def n_over(s, others):
        return sum(max(s.start, o.start) < min(s.end, o.end) for o in others)
    return all(n_over(s, pred) <= 1 for s in ref) and all(n_over(s, ref) <= 1 for s in pred)


def random_spans(rng, n, labels):
    out, pos = [], 0
    while True:
        pos += rng.randint(0, 3)
        length = rng.randint(1, 3)
        if pos + length > n:
            return tuple(out)
        out.append(Span(rng.choice(labels), pos, pos + length))
        pos += length


def nervaluate_overall(refs, preds, labels):
    Evaluator = require("nervaluate").Evaluator
    true = [[{"label": s.label, "start": s.start, "end": s.end - 1} for s in d] for d in refs]
    pred = [[{"label": s.label, "start": s.start, "end": s.end - 1} for s in d] for d in preds]
    res = Evaluator(true, pred, tags=list(labels)).evaluate()["overall"]
    return {schema: {k: getattr(res[schema], k) for k in ("correct", "incorrect", "partial", "missed", "spurious")}
            for schema in ("strict", "exact", "partial", "ent_type")}


def test_agrees_with_nervaluate_on_one_to_one_overlaps():
    rng = random.Random(23)
    labels = ("PER", "LOC", "ORG")
    refs, preds, docs = [], [], []
    while len(docs) < 300:
        n = rng.randint(3, 14)
        ref, pred = random_spans(rng, n, labels), random_spans(rng, n, labels)
        if one_to_one_overlaps(ref, pred):
            docs.append(Document(f"d{len(docs)}", tuple(f"w{i}" for i in range(n)), ref))
            refs.append(ref)
            preds.append(pred)
    r = score(reference=docs, prediction=preds)
    ours = cats(r)
    assert min(ours.values()) > 10  # every category occurs often
    assert nervaluate_overall(refs, preds, labels) == from_ours(ours)


def test_where_nervaluate_differs_greedy_pairs():
    # one answer PER [0, 4); predictions LOC [0, 4), then PER [0, 4) (two systems' outputs
    # merged, say). nervaluate pairs the answer with the first overlapping prediction in input
    # order (strict: 1 incorrect, the exact PER prediction spurious); the alignment prefers the
    # correct pair: 1 correct, the LOC prediction spurious
    ref = (Span("PER", 0, 4),)
    pred = (Span("LOC", 0, 4), Span("PER", 0, 4))
    r = score(reference=[Document("d", ("a", "b", "c", "d"), ref)], prediction=[pred])
    assert cats(r) == want(correct=1, spurious=1)
    nv = nervaluate_overall([ref], [pred], ("PER", "LOC"))
    assert nv["strict"] == {"correct": 0, "incorrect": 1, "partial": 0, "missed": 0, "spurious": 1}


@pytest.mark.data
def test_agrees_with_nervaluate_on_conll2003(data):
    """CoNLL-2003 eng.testb against one shared-task output (florian): nervaluate's strict,
    exact and partial schemas equal our sums on the whole file; on the documents where every
    entity overlaps at most one of the other side all four do. (On the whole file ent_type
    differs where an answer overlaps two predictions: nervaluate pairs in input order.)"""
    from iescore.io.conll import read_conll

    s = Scorer()
    s.add_batch(read_conll(str(data / "conll2003-eng" / "eng.testb"),
                           str(data / "conll2003-shared-task-outputs" / "results" / "florian" / "eng.testb")))
    r = s.report()
    sides: dict[str, dict[str, list[Span]]] = {"reference": {}, "prediction": {}}
    for side, docs in sides.items():
        for it in r.items(side):
            docs.setdefault(it["doc"], []).append(Span(it["label"], it["start"], it["end"]))
    ids = list(r.doc_ids)
    refs = [tuple(sides["reference"].get(d, ())) for d in ids]
    preds = [tuple(sides["prediction"].get(d, ())) for d in ids]
    nv, ours = nervaluate_overall(refs, preds, r.labels), from_ours(cats(r))
    for schema in ("strict", "exact", "partial"):
        assert nv[schema] == ours[schema], schema
    keep = [k for k in range(len(ids)) if one_to_one_overlaps(refs[k], preds[k])]
    assert len(keep) > 100
    sub = score(reference=[Document(ids[k], ("w",) * 2000, refs[k]) for k in keep], prediction=[preds[k] for k in keep])
    assert nervaluate_overall([refs[k] for k in keep], [preds[k] for k in keep], r.labels) == from_ours(cats(sub))
