"""Relations (task="relations"): the numbers of small cases worked out by hand from the
definitions (SPEC §11: a predicted relation matches an answer when the relation labels
are equal and each argument matches under the rule, argument labels compared unless
arg_labels=False; counting §3.1/§3.2, slot errors §3.3, averages §5)."""

from __future__ import annotations

import pytest

import iescore
from iescore import Config, Document, Relation, Span, Template, TextRelation
from iescore.errors import ConfigError, InputError
from iescore.scoring.stream import Scorer

TOKENS = tuple(f"t{i}" for i in range(12))


def doc(*rels: Relation, did: str = "d", tokens: tuple[str, ...] = TOKENS) -> Document:
    return Document(did, tokens, relations=rels)


def rel(label: str, head: tuple[str, int, int], tail: tuple[str, int, int], score: float | None = None) -> Relation:
    return Relation(label, Span(*head), Span(*tail), score)


# Gold: G1 works_for(PER[0,2), ORG[5,6)), G2 located_in(ORG[5,6), LOC[8,10)), G3 part_of(LOC[8,10), LOC[3,4)).
# Pred: P1 = G1 exactly; P2 = G2 with its head labelled GPE; P3 = G3 with its head cut to [8,9).
GOLD = [doc(rel("works_for", ("PER", 0, 2), ("ORG", 5, 6)),
            rel("located_in", ("ORG", 5, 6), ("LOC", 8, 10)),
            rel("part_of", ("LOC", 8, 10), ("LOC", 3, 4)))]
PRED = [doc(rel("works_for", ("PER", 0, 2), ("ORG", 5, 6)),
            rel("located_in", ("GPE", 5, 6), ("LOC", 8, 10)),
            rel("part_of", ("LOC", 8, 9), ("LOC", 3, 4)))]


def counts(r: iescore.Report) -> tuple[int, ...]:
    o = r.overall
    return o.tp, o.fp, o.fn, o.C, o.S, o.D, o.I


def rows(r: iescore.Report) -> dict[str, tuple[int, int, int]]:
    return {k: (v.tp, v.fp, v.fn) for k, v in r.per_label.items()}


def test_named_settings_differ_as_worked_out():
    # strict (E, labels): only P1 matches -> TP 1, FP 2, FN 2. Every prediction overlaps its
    # answer pairwise, so all three align: C 1, S 2, D 0, I 0.
    r = iescore.score(reference=GOLD, prediction=PRED, task="relations", **iescore.RELATION_SETTINGS["strict"])
    assert counts(r) == (1, 2, 2, 1, 2, 0, 0)
    assert rows(r) == {"located_in": (0, 1, 1), "part_of": (0, 1, 1), "works_for": (1, 0, 0)}
    # boundaries (E, no labels): P1 and P2 match (P2's positions are exact) -> TP 2, FP 1, FN 1
    r = iescore.score(reference=GOLD, prediction=PRED, task="relations", **iescore.RELATION_SETTINGS["boundaries"])
    assert counts(r) == (2, 1, 1, 2, 1, 0, 0)
    assert rows(r) == {"located_in": (1, 0, 0), "part_of": (0, 1, 1), "works_for": (1, 0, 0)}
    # relaxed (O(inf,inf), labels): P1 and P3 match (P3's head overlaps), P2's head label differs
    r = iescore.score(reference=GOLD, prediction=PRED, task="relations", **iescore.RELATION_SETTINGS["relaxed"])
    assert counts(r) == (2, 1, 1, 2, 1, 0, 0)
    assert rows(r) == {"located_in": (0, 1, 1), "part_of": (1, 0, 0), "works_for": (1, 0, 0)}


def test_error_categories_and_partners_compare_argument_labels_as_the_setting_does():
    # strict: P2 (same label, head label differs) and P3 (same label, head cut) are wrong_boundary
    r = iescore.score(reference=GOLD, prediction=PRED, task="relations")
    cats = r.to_dict()["categories"]
    assert cats["overall"]["correct"] == 1 and cats["overall"]["wrong_boundary"] == 2
    # boundaries: P2's arguments are the same positions, labels not compared -> correct
    r = iescore.score(reference=GOLD, prediction=PRED, task="relations", arg_labels=False)
    assert r.to_dict()["categories"]["overall"]["correct"] == 2


def test_items_carry_head_tail_and_the_partner():
    r = iescore.score(reference=GOLD, prediction=PRED, task="relations")
    ref = {it["label"]: it for it in r.items("reference")}
    g2 = ref["located_in"]
    assert g2["start"] is None and g2["end"] is None
    assert g2["status"] == "FN" and g2["category"] == "wrong_boundary"
    assert g2["head"] == {"label": "ORG", "start": 5, "end": 6, "text": "t5"}
    assert g2["tail"] == {"label": "LOC", "start": 8, "end": 10, "text": "t8 t9"}
    assert g2["text"] == "t5 -> t8 t9"
    assert g2["partner"]["head"] == {"label": "GPE", "start": 5, "end": 6, "text": "t5"}
    assert ref["works_for"]["status"] == "TP" and ref["works_for"]["category"] == "correct"
    pred = [it for it in r.items("prediction") if it["label"] == "part_of"][0]
    assert pred["head"]["end"] == 9 and pred["partner"]["head"]["end"] == 10


def test_to_dict_per_label_and_averages():
    # strict: works_for P = R = F1 = 1; located_in and part_of 0 -> macro F1 1/3; each label
    # has support 1, so the weighted average is 1/3 too; micro P = R = 1/3
    d = iescore.score(reference=GOLD, prediction=PRED, task="relations").to_dict()
    assert d["per_label"]["works_for"]["f1"] == 1.0 and d["per_label"]["part_of"]["f1"] == 0.0
    assert d["per_label"]["located_in"]["support"] == 1
    assert d["averages"]["macro"]["f1"] == pytest.approx(1 / 3)
    assert d["averages"]["weighted"]["f1"] == pytest.approx(1 / 3)
    assert d["averages"]["micro"]["precision"] == pytest.approx(1 / 3)
    # boundaries: located_in and works_for 1, part_of 0 -> macro F1 2/3
    d = iescore.score(reference=GOLD, prediction=PRED, task="relations", arg_labels=False).to_dict()
    assert d["averages"]["macro"]["f1"] == pytest.approx(2 / 3)
    assert d["ts"] is None and "does not apply" in d["ts_error"]


def test_any_match_and_one_to_one_differ():
    # one answer; two predictions overlap it under O(inf,inf): any-match makes both TP (TP 2,
    # FP 0); one-to-one one of them (TP 1, FP 1); the alignment pairs one: C 1, I 1 either way
    gold = [doc(rel("works_for", ("PER", 0, 2), ("ORG", 5, 6)))]
    pred = [doc(rel("works_for", ("PER", 0, 2), ("ORG", 5, 6)), rel("works_for", ("PER", 0, 1), ("ORG", 5, 6)))]
    r = iescore.score(reference=gold, prediction=pred, task="relations", rule="O(inf,inf)")
    assert counts(r) == (2, 0, 0, 1, 0, 0, 1)
    r = iescore.score(reference=gold, prediction=pred, task="relations", rule="O(inf,inf)", counting="one-to-one")
    assert counts(r) == (1, 1, 0, 1, 0, 0, 1)
    # the exact pair is preferred: the prediction with head [0,1) is the FP
    fp = [it for it in r.items("prediction") if it["status"] == "FP"]
    assert [it["head"]["end"] for it in fp] == [1]


def test_symmetric_labels_match_in_either_order():
    gold = [doc(rel("sibling", ("PER", 0, 2), ("PER", 3, 4)))]
    pred = [doc(rel("sibling", ("PER", 3, 4), ("PER", 0, 2)))]
    # not symmetric: heads [0,2) and [3,4) do not overlap: no candidate pair -> D 1, I 1
    r = iescore.score(reference=gold, prediction=pred, task="relations")
    assert counts(r) == (0, 1, 1, 0, 0, 1, 1)
    r = iescore.score(reference=gold, prediction=pred, task="relations", symmetric="sibling")
    assert counts(r) == (1, 0, 0, 1, 0, 0, 0)
    assert r.to_dict()["categories"]["overall"]["correct"] == 1
    # a label not declared symmetric still needs the order
    r = iescore.score(reference=gold, prediction=pred, task="relations", symmetric="spouse")
    assert counts(r)[:3] == (0, 1, 1)


@pytest.mark.parametrize(("rule", "tp"), [
    ("IoU(0.5)", 1),   # head [0,2) vs [0,4): |p∩a| / |p∪a| = 2/4 = 0.5 >= 0.5
    ("IoU(0.6)", 0),   # 0.5 < 0.6
    ("cover(0.5)", 1),  # |p∩a| / |a| = 2/4
    ("cover(0.6)", 0),
    ("O(0,2)", 1),     # 2 tokens missing on the right, none extra
    ("O(0,1)", 0),
    ("C(2)", 0),       # the prediction does not contain the answer
    ("E", 0),
])
def test_lenient_rules_on_the_arguments(rule, tp):
    gold = [doc(rel("works_for", ("PER", 0, 4), ("ORG", 5, 6)))]
    pred = [doc(rel("works_for", ("PER", 0, 2), ("ORG", 5, 6)))]
    r = iescore.score(reference=gold, prediction=pred, task="relations", rule=rule)
    assert counts(r)[:3] == (tp, 1 - tp, 1 - tp)


def test_contain_rule_on_the_tail():
    gold = [doc(rel("works_for", ("PER", 0, 2), ("ORG", 5, 6)))]
    pred = [doc(rel("works_for", ("PER", 0, 2), ("ORG", 5, 7)))]  # tail adds one token
    assert iescore.score(reference=gold, prediction=pred, task="relations", rule="C(1)").overall.tp == 1
    assert iescore.score(reference=gold, prediction=pred, task="relations", rule="C(0)").overall.tp == 0


def test_match_best_keeps_the_most_confident_prediction():
    gold = [doc(rel("works_for", ("PER", 0, 2), ("ORG", 5, 6)))]
    pred = [doc(rel("works_for", ("PER", 0, 2), ("ORG", 5, 6), 0.4), rel("works_for", ("PER", 0, 2), ("ORG", 7, 8), 0.9))]
    # the 0.9 prediction is kept and matches nothing: FP 1, FN 1; the other is ignored
    r = iescore.score(reference=gold, prediction=pred, task="relations", mode="match-best")
    assert counts(r)[:3] == (0, 1, 1)
    assert sorted(it["status"] for it in r.items("prediction")) == ["FP", "ignored"]
    # without confidences the first in document order (head, then tail position) is kept: TP
    pred = [doc(rel("works_for", ("PER", 0, 2), ("ORG", 7, 8)), rel("works_for", ("PER", 0, 2), ("ORG", 5, 6)))]
    r = iescore.score(reference=gold, prediction=pred, task="relations", mode="match-best")
    assert counts(r)[:3] == (1, 0, 0)


def test_slot_errors_and_the_confusion_table():
    # works_for aligned correct (C); gold located_in vs predicted part_of on the same
    # arguments (S, wrong_label); gold part_of elsewhere unaligned (D); predicted kills
    # elsewhere (I): C 1, S 1, D 1, I 1; N = 3 = C+S+D, M = 3 = C+S+I
    gold = [doc(rel("works_for", ("PER", 0, 2), ("ORG", 5, 6)), rel("located_in", ("ORG", 5, 6), ("LOC", 8, 10)),
                rel("part_of", ("LOC", 3, 4), ("LOC", 11, 12)))]
    pred = [doc(rel("works_for", ("PER", 0, 2), ("ORG", 5, 6)), rel("part_of", ("ORG", 5, 6), ("LOC", 8, 10)),
                rel("kills", ("PER", 2, 3), ("PER", 4, 5)))]
    r = iescore.score(reference=gold, prediction=pred, task="relations")
    assert counts(r) == (1, 2, 2, 1, 1, 1, 1)
    d = r.to_dict()
    assert d["confusion"]["located_in"] == {"part_of": 1}
    assert d["categories"]["overall"]["wrong_label"] == 1
    assert d["categories"]["overall"]["missed"] == 1 and d["categories"]["overall"]["spurious"] == 1


def test_relation_labels_take_the_type_options():
    # remove_types drops a relation label from both sides (counted in repairs); supertags merge labels
    r = iescore.score(reference=GOLD, prediction=PRED, task="relations", remove_types="part_of")
    assert rows(r) == {"located_in": (0, 1, 1), "works_for": (1, 0, 0)}
    assert r.repairs["reference"] == {"removed:part_of": 1} and r.repairs["prediction"] == {"removed:part_of": 1}
    r = iescore.score(reference=GOLD, prediction=PRED, task="relations", arg_labels=False,
                      supertags={"part_of": "other", "located_in": "other"})
    assert rows(r) == {"other": (1, 1, 1), "works_for": (1, 0, 0)}


def test_signature_round_trip():
    r = iescore.score(reference=GOLD, prediction=PRED, task="relations", arg_labels=False, symmetric="sibling")
    assert "task:relations" in r.signature and "args:unlabelled" in r.signature and "sym:sibling" in r.signature
    cfg = Config.from_signature(r.signature)
    assert (cfg.task, cfg.arg_labels, cfg.symmetric) == ("relations", False, ("sibling",))
    again = iescore.score(reference=GOLD, prediction=PRED, config=cfg)
    assert counts(again) == counts(r) and again.signature == r.signature


def test_held_batches_give_the_numbers_of_one_call():
    gold = [doc(*GOLD[0].relations, did=str(k)) for k in range(5)]
    pred = [doc(*PRED[0].relations[: k % 3 + 1], did=str(k)) for k in range(5)]
    one = iescore.score(reference=gold, prediction=pred, task="relations", rule="O(1,1)")
    s = Scorer(task="relations", rule="O(1,1)")
    for g, p in zip(gold, pred):
        s.add(reference=[g], prediction=[p])
    many = s.report()
    assert many.to_dict() == one.to_dict()
    assert [it["head"] for it in many.items("prediction")] == [it["head"] for it in one.items("prediction")]


# --- relations between strings (OBD) --------------------------------------------------
def test_templates_relations_collapse_and_match_by_sequence_rules():
    # gold: works_for(Al Roth, IBM) twice (one record), sibling(A, B); pred: works_for(Roth, IBM),
    # sibling(B, A). E: nothing matches -> TP 0, FP 2, FN 2; works_for pairs share tokens (S),
    # the siblings share none in this orientation (D, I)
    ref = [Template("t", {}, relations=(TextRelation("works_for", "Al Roth", "IBM"),
                                       TextRelation("works_for", "Al Roth", "IBM"), TextRelation("sibling", "A", "B")))]
    pred = [Template("t", {}, relations=(TextRelation("works_for", "Roth", "IBM"), TextRelation("sibling", "B", "A")))]
    r = iescore.score_templates(reference=ref, prediction=pred, task="relations")
    assert counts(r) == (0, 2, 2, 0, 1, 1, 1)
    # O(0,1): "Roth" inside "Al Roth", one token missing -> works_for matches
    r = iescore.score_templates(reference=ref, prediction=pred, task="relations", rule="O(0,1)")
    assert counts(r)[:3] == (1, 1, 1)
    r = iescore.score_templates(reference=ref, prediction=pred, task="relations", rule="O(0,1)", symmetric="sibling")
    assert counts(r)[:3] == (2, 0, 0)
    items = list(r.items("reference"))
    assert len(items) == 2 and {it["text"] for it in items} == {"Al Roth -> IBM", "A -> B"}


def test_template_normaliser_applies_to_argument_tokens():
    ref = [Template("t", {}, relations=(TextRelation("works_for", "Al Roth", "IBM"),))]
    pred = [Template("t", {}, relations=(TextRelation("works_for", "al roth", "ibm"),))]
    assert iescore.score_templates(reference=ref, prediction=pred, task="relations").overall.tp == 0
    assert iescore.score_templates(reference=ref, prediction=pred, task="relations", normaliser="lower").overall.tp == 1


def test_documents_under_obd_compare_strings_not_positions():
    tokens = ("Al", "Roth", "joined", "IBM", ";", "Al", "Roth", "left", "IBM")
    gold = [Document("d", tokens, relations=(rel("works_for", ("PER", 0, 2), ("ORG", 3, 4)),
                                             rel("works_for", ("PER", 5, 7), ("ORG", 8, 9))))]
    pred = [Document("d", tokens, relations=(rel("works_for", ("PER", 5, 7), ("ORG", 3, 4)),))]
    # AO: the prediction's head is the second "Al Roth", its tail the first "IBM": no answer has both
    assert counts(iescore.score(reference=gold, prediction=pred, task="relations"))[:3] == (0, 1, 2)
    # OBD: both answers are one record (Al Roth, IBM); the prediction is that record: TP 1
    r = iescore.score(reference=gold, prediction=pred, task="relations", setting="OBD")
    assert counts(r)[:3] == (1, 0, 0)
    # argument labels are compared under OBD too
    pred = [Document("d", tokens, relations=(rel("works_for", ("ORG", 0, 2), ("ORG", 3, 4)),))]
    assert iescore.score(reference=gold, prediction=pred, task="relations", setting="OBD").overall.tp == 0
    assert iescore.score(reference=gold, prediction=pred, task="relations", setting="OBD",
                         arg_labels=False).overall.tp == 1


# --- errors ------------------------------------------------------------------------------
def test_errors():
    with pytest.raises(InputError, match="document id 'other'"):
        iescore.score(reference=GOLD, prediction=[doc(did="other")], task="relations")
    with pytest.raises(InputError, match="not a Document"):
        iescore.score(reference=GOLD, prediction=[[Span("PER", 0, 2)]], task="relations")
    with pytest.raises(ConfigError, match="symmetric"):
        iescore.score(reference=GOLD, prediction=PRED, symmetric="sibling")
    with pytest.raises(ConfigError, match="nil"):
        iescore.score(reference=GOLD, prediction=PRED, task="relations", nil="ignore")
    with pytest.raises(ConfigError, match="detail='prf'"):
        iescore.score(reference=GOLD, prediction=PRED, task="relations", detail="prf")
    with pytest.raises(ConfigError, match="valid there: 'match-all' or 'match-best'"):
        iescore.score(reference=GOLD, prediction=PRED, task="relations", mode="one-per-string")
    with pytest.raises(ConfigError, match="tags carry entities only"):
        iescore.score_tags(reference=[["B-PER"]], prediction=[["B-PER"]], task="relations")
    with pytest.raises(InputError, match="finite confidence"):
        iescore.score(reference=GOLD, prediction=[doc(rel("a", ("X", 0, 1), ("Y", 2, 3), 0.5),
                                                      rel("a", ("X", 4, 5), ("Y", 2, 3)))],
                      task="relations", mode="match-best")


def test_multislot_type_and_extent():
    # strict: three aligned pairs of equal relation labels -> type C 3; arguments within E with
    # equal labels: P1 only -> extent C 1, S 2 (P2's head label, P3's head boundary)
    m = iescore.score(reference=GOLD, prediction=PRED, task="relations").to_dict()["multislot"]["overall"]
    assert (m["type"]["C"], m["type"]["S"], m["extent"]["C"], m["extent"]["S"]) == (3, 0, 1, 2)
    # boundaries: P2's arguments fit (labels not compared) -> extent C 2, S 1
    m = iescore.score(reference=GOLD, prediction=PRED, task="relations", arg_labels=False).to_dict()["multislot"]["overall"]
    assert (m["extent"]["C"], m["extent"]["S"]) == (2, 1)
    # the symmetric pair fits in its swapped orientation
    gold = [doc(rel("sibling", ("PER", 0, 2), ("PER", 3, 4)))]
    pred = [doc(rel("spouse", ("PER", 3, 4), ("PER", 0, 2)))]
    m = iescore.score(reference=gold, prediction=pred, task="relations", symmetric="sibling").to_dict()["multislot"]["overall"]
    assert (m["type"]["S"], m["extent"]["C"]) == (1, 1)


def test_documents_under_obd_without_argument_labels_collapse_records_differing_in_them():
    # arg_labels=False: r(A:a, B:c) and r(B:a, B:c) are one record r(a, c) -> one TP, no FP
    toks = ("a", "b", "c", "d")
    gold = [Document("d", toks, relations=(rel("r", ("A", 0, 1), ("B", 2, 3)),))]
    pred = [Document("d", toks, relations=(rel("r", ("A", 0, 1), ("B", 2, 3)), rel("r", ("B", 0, 1), ("B", 2, 3))))]
    r = iescore.score(reference=gold, prediction=pred, task="relations", setting="OBD", arg_labels=False)
    assert counts(r)[:3] == (1, 0, 0)
    # compared, they are two records: the second is an FP
    r = iescore.score(reference=gold, prediction=pred, task="relations", setting="OBD")
    assert counts(r)[:3] == (1, 1, 0)


def test_held_templates_give_the_numbers_of_one_call():
    ref = [Template(str(k), {}, relations=(TextRelation("works_for", "Al Roth", "IBM"), TextRelation("sib", "A", "B")))
           for k in range(4)]
    pred = [Template(str(k), {}, relations=(TextRelation("works_for", "Roth", "IBM"),) * (k % 2)) for k in range(4)]
    one = iescore.score_templates(reference=ref, prediction=pred, task="relations", rule="O(0,1)")
    s = Scorer(task="relations", setting="OBD", rule="O(0,1)")
    for r, p in zip(ref, pred):
        s.add(reference=[r], prediction=[p])
    assert s.report().to_dict() == one.to_dict()
    # works_for matches in the two templates that predict it: TP 2, FN 2 + 4 (sib everywhere)
    assert counts(one)[:3] == (2, 0, 6)
