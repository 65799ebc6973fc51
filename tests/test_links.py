"""Entity links (task="links"): the numbers of small cases worked out by hand from the
definitions (SPEC §12: a predicted link matches an answer when the ids are equal and the
mentions match under the rule, strong = E, weak = O(inf,inf); types not compared unless
asked; NIL an id like any other unless nil="ignore"; rows per entity type)."""

from __future__ import annotations

import pytest

import iescore
from iescore import Config, Document, Link, Span
from iescore.errors import ConfigError, InputError

TOKENS = tuple(f"t{i}" for i in range(12))


def doc(*links: Link, did: str = "d") -> Document:
    return Document(did, TOKENS, links=links)


def link(label: str, start: int, end: int, kb: str, score: float | None = None) -> Link:
    return Link(Span(label, start, end), kb, score)


# gold: Q1 on PER[0,2), Q2 on ORG[4,5), NIL on LOC[7,8)
# pred: Q1 on PER[0,2) (exact), Q2 on ORG[4,6) (one token more), NIL on LOC[7,8), NIL on PER[9,10)
GOLD = [doc(link("PER", 0, 2, "Q1"), link("ORG", 4, 5, "Q2"), link("LOC", 7, 8, "NIL"))]
PRED = [doc(link("PER", 0, 2, "Q1"), link("ORG", 4, 6, "Q2"), link("LOC", 7, 8, "NIL"), link("PER", 9, 10, "NIL"))]


def counts(r: iescore.Report) -> tuple[int, ...]:
    o = r.overall
    return o.tp, o.fp, o.fn, o.C, o.S, o.D, o.I


def rows(r: iescore.Report) -> dict[str, tuple[int, int, int]]:
    return {k: (v.tp, v.fp, v.fn) for k, v in r.per_label.items()}


def test_strong_and_weak():
    # strong (E): Q1 and NIL [7,8) match; Q2's mention is one token longer -> TP 2, FP 2, FN 1;
    # the Q2 pair overlaps and aligns (S), the NIL at [9,10) is inserted: C 2, S 1, D 0, I 1
    r = iescore.score(reference=GOLD, prediction=PRED, task="links", **iescore.LINK_SETTINGS["strong"])
    assert counts(r) == (2, 2, 1, 2, 1, 0, 1)
    assert rows(r) == {"LOC": (1, 0, 0), "ORG": (0, 1, 1), "PER": (1, 1, 0)}
    # weak (any overlap): Q2 matches too -> TP 3, FP 1, FN 0
    r = iescore.score(reference=GOLD, prediction=PRED, task="links", **iescore.LINK_SETTINGS["weak"])
    assert counts(r) == (3, 1, 0, 3, 0, 0, 1)
    assert rows(r) == {"LOC": (1, 0, 0), "ORG": (1, 0, 0), "PER": (1, 1, 0)}


def test_nil_keep_and_ignore():
    # ignore: the gold NIL (1) and both predicted NILs (2) are left out before matching:
    # weak -> TP 2 (Q1, Q2), FP 0, FN 0; the LOC row is gone
    r = iescore.score(reference=GOLD, prediction=PRED, task="links", rule="O(inf,inf)", nil="ignore")
    assert counts(r)[:3] == (2, 0, 0)
    assert rows(r) == {"ORG": (1, 0, 0), "PER": (1, 0, 0)}
    assert r.repairs["reference"] == {"nil": 1} and r.repairs["prediction"] == {"nil": 2}
    assert "nil:ignore" in r.signature
    assert len(list(r.items("prediction"))) == 2
    # keep: NIL is an id like any other (above: the NIL at [7,8) is a TP)
    r = iescore.score(reference=GOLD, prediction=PRED, task="links", rule="O(inf,inf)")
    assert "nil" not in r.repairs.get("reference", {})


def test_a_mistyped_correct_link_counts_in_the_answers_row():
    gold = [doc(link("PER", 0, 2, "Q1"), link("PER", 3, 4, "Q5"))]
    pred = [doc(link("ORG", 0, 2, "Q1"), link("PER", 3, 4, "Q6"))]
    # types not compared: Q1 on [0,2) matches; its TP goes to the answer's type PER (the ORG
    # row keeps nothing); Q6 vs Q5: another id on the same mention -> FP and FN under PER
    r = iescore.score(reference=gold, prediction=pred, task="links")
    assert counts(r) == (1, 1, 1, 1, 1, 0, 0)
    assert rows(r) == {"ORG": (0, 0, 0), "PER": (1, 1, 1)}
    cats = {it["id"]: it["category"] for it in r.items("prediction")}
    assert cats == {"Q1": "correct", "Q6": "wrong_label"}
    # the same under one-to-one counting
    r = iescore.score(reference=gold, prediction=pred, task="links", counting="one-to-one")
    assert rows(r) == {"ORG": (0, 0, 0), "PER": (1, 1, 1)}
    # link_types: the Q1 pair's types differ -> FP under ORG, FN under PER
    r = iescore.score(reference=gold, prediction=pred, task="links", link_types=True)
    assert counts(r)[:3] == (0, 2, 2)
    assert rows(r) == {"ORG": (0, 1, 0), "PER": (0, 1, 2)}
    assert "linktypes:compared" in r.signature


def test_any_match_counts_a_true_positive_with_an_answer_of_its_own_type_first():
    # two answers on one mention with the same id, typed PER and ORG; the ORG prediction
    # matches both (any-match): its TP stays in its own type's row
    gold = [doc(link("PER", 0, 2, "Q1"), link("ORG", 0, 2, "Q1"))]
    pred = [doc(link("ORG", 0, 2, "Q1"))]
    r = iescore.score(reference=gold, prediction=pred, task="links")
    assert rows(r) == {"ORG": (1, 0, 0), "PER": (0, 0, 0)}
    assert counts(r)[:3] == (1, 0, 0)


def test_items_carry_the_id_and_the_mention():
    r = iescore.score(reference=GOLD, prediction=PRED, task="links")
    items = list(r.items("reference"))
    q2 = [it for it in items if it["id"] == "Q2"][0]
    assert (q2["label"], q2["start"], q2["end"], q2["text"], q2["status"]) == ("ORG", 4, 5, "t4", "FN")
    assert q2["category"] == "wrong_boundary"
    assert q2["partner"]["id"] == "Q2" and q2["partner"]["end"] == 6


def test_link_types_rows_and_type_options():
    # per-type rows (never per id); keep_types leaves the other types out of both sides
    r = iescore.score(reference=GOLD, prediction=PRED, task="links", keep_types="PER")
    assert rows(r) == {"PER": (1, 1, 0)}
    assert r.repairs["reference"] == {"removed:LOC": 1, "removed:ORG": 1}


def test_signature_round_trip():
    r = iescore.score(reference=GOLD, prediction=PRED, task="links", rule="O(inf,inf)", nil="ignore", link_types=True)
    cfg = Config.from_signature(r.signature)
    assert (cfg.task, cfg.nil, cfg.link_types) == ("links", "ignore", True)
    assert counts(iescore.score(reference=GOLD, prediction=PRED, config=cfg)) == counts(r)


def test_errors():
    with pytest.raises(InputError, match="document id 'x'"):
        iescore.score(reference=GOLD, prediction=[doc(did="x")], task="links")
    with pytest.raises(ConfigError, match="link_types"):
        iescore.score(reference=GOLD, prediction=PRED, task="relations", link_types=True)
    with pytest.raises(ConfigError, match="setting='AO'"):
        iescore.score(reference=GOLD, prediction=PRED, task="links", setting="OBD")
    with pytest.raises(ConfigError, match="match-best"):
        iescore.score(reference=GOLD, prediction=PRED, task="links", mode="match-best")


def test_multislot_type_is_the_id_and_extent_the_mention():
    # strong: aligned pairs Q1-Q1 (exact), Q2-Q2 ([4,5) vs [4,6)), NIL-NIL (exact); the NIL at
    # [9,10) is inserted. Type (id) slot: C 3; extent (mention within E): C 2, S 1; I 1
    m = iescore.score(reference=GOLD, prediction=PRED, task="links").to_dict()["multislot"]["overall"]
    assert (m["type"]["C"], m["type"]["S"], m["extent"]["C"], m["extent"]["S"], m["type"]["I"]) == (3, 0, 2, 1, 1)
    # a mistyped link of the right id: type slot C (types not compared), a wrong id: type S
    gold = [doc(link("PER", 0, 2, "Q1"), link("PER", 3, 4, "Q5"))]
    pred = [doc(link("ORG", 0, 2, "Q1"), link("PER", 3, 4, "Q6"))]
    m = iescore.score(reference=gold, prediction=pred, task="links").to_dict()["multislot"]["overall"]
    assert (m["type"]["C"], m["type"]["S"], m["extent"]["C"]) == (1, 1, 2)
    m = iescore.score(reference=gold, prediction=pred, task="links", link_types=True).to_dict()["multislot"]["overall"]
    assert (m["type"]["C"], m["type"]["S"]) == (0, 2)


def test_held_batches_give_the_numbers_of_one_call():
    from iescore.scoring.stream import Scorer

    gold = [Document(str(k), TOKENS, links=GOLD[0].links[: k % 3 + 1]) for k in range(6)]
    pred = [Document(str(k), TOKENS, links=PRED[0].links[k % 2 :]) for k in range(6)]
    one = iescore.score(reference=gold, prediction=pred, task="links", nil="ignore")
    s = Scorer(task="links", nil="ignore")
    for g, p in zip(gold, pred):
        s.add(reference=[g], prediction=[p])
    many = s.report()
    assert many.to_dict() == one.to_dict() and many.repairs == one.repairs
    assert [it["id"] for it in many.items("prediction")] == [it["id"] for it in one.items("prediction")]
