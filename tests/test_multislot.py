"""Makhoul's multi-slot tags (iescore.multislot): each tag's type and extent scored as two
slots over the slot errors' alignment. Hand-worked examples (AO spans, OBD templates),
the identities N = C + S + D and M = C + S + I per kind and, under the rule E, type C =
correct + wrong_boundary and extent C = correct + wrong_label on random data, the extent
slot recomputed from the aligned partners by the rules' definitions, streaming, totals
and states, and the views."""

from __future__ import annotations

import csv
import io
import json
import random

import numpy as np
import pytest

import iescore
from iescore import Document, Scorer, Span, Template, score, score_tags, score_templates
from iescore.render.formats import format_report
from iescore.scoring.state import load_state, merge_states

# --- one document worked by hand ------------------------------------------------------------
#
# answers:      PER [0,2)   LOC [5,7)   ORG [10,12)   MISC [15,16)
# predictions:  ORG [0,2)   LOC [5,6)   PER [11,14)                  LOC [20,21)
#
# Each prediction overlaps one answer only, so the alignment pairs PER-ORG, LOC-LOC and
# ORG-PER; MISC is missed, LOC [20,21) spurious.
#   PER-ORG: labels differ (type S), same extent (extent C under any rule)
#   LOC-LOC: same label (type C); one token missing on the right: within O(1,1) (ml+mr = 1,
#            el+er = 0), not E (extent C under O(1,1), S under E)
#   ORG-PER: labels differ (type S); the prediction starts one token late and ends two
#            late: el+er = 2 > 1 (extent S under both)
# C, S, D go to the answer's label, I to the prediction's.

TOKENS = tuple(f"w{k}" for k in range(22))
REF = [Document("d", TOKENS, (Span("PER", 0, 2), Span("LOC", 5, 7), Span("ORG", 10, 12), Span("MISC", 15, 16)))]
PRED = [[Span("ORG", 0, 2), Span("LOC", 5, 6), Span("PER", 11, 14), Span("LOC", 20, 21)]]


def _kinds(entry):
    """(C, S, D, I) of the type and the extent slot of a multi-slot entry."""
    return tuple(tuple(entry[kind][k] for k in "CSDI") for kind in ("type", "extent"))


@pytest.mark.parametrize("counting", ["any", "one-to-one"])
def test_hand_example_under_o11(counting):
    r = score(reference=REF, prediction=PRED, rule="O(1,1)", counting=counting)
    ms = r.to_dict()["multislot"]
    # tags: C 1 (LOC-LOC), S 2, D 1 (MISC), I 1 (LOC [20,21))
    se = r.to_dict()["slot_errors"]
    assert (se["C"], se["S"], se["D"], se["I"]) == (1, 2, 1, 1)
    # type: C 1 (LOC-LOC), S 2; extent: C 2 (PER-ORG, LOC-LOC), S 1 (ORG-PER)
    assert _kinds(ms["overall"]) == ((1, 2, 1, 1), (2, 1, 1, 1))
    t, e = ms["overall"]["type"], ms["overall"]["extent"]
    assert (t["N"], t["M"], e["N"], e["M"]) == (4, 4, 4, 4)
    # SER: type (2 + 1 + 1)/4, extent (1 + 1 + 1)/4, both (2 + 1 + 2 * 2)/8
    assert (t["ser"], e["ser"], ms["overall"]["ser"]) == (1.0, 0.75, 7 / 8)
    per = {lab: _kinds(v) for lab, v in ms["per_label"].items()}
    assert per == {
        "LOC": ((1, 0, 0, 1), (1, 0, 0, 1)),  # LOC-LOC correct in both; the spurious LOC
        "MISC": ((0, 0, 1, 0), (0, 0, 1, 0)),  # missed
        "ORG": ((0, 1, 0, 0), (0, 1, 0, 0)),  # ORG-PER: both wrong
        "PER": ((0, 1, 0, 0), (1, 0, 0, 0)),  # PER-ORG: wrong type, right extent
    }
    # per label: LOC N = 1, M = 1 + 1 (the insertion); SER 1/1; both kinds (0 + 0 + 2)/2
    loc = ms["per_label"]["LOC"]
    assert (loc["type"]["N"], loc["type"]["M"], loc["type"]["ser"], loc["ser"]) == (1, 2, 1.0, 1.0)
    assert ms["per_label"]["PER"]["ser"] == 0.5  # (1 + 0)/2
    assert r.multislot_errors() == ms
    assert r.multislot.tolist() == [[1, 1], [0, 0], [0, 0], [0, 1]]  # LOC, MISC, ORG, PER: equal labels, fit


def test_hand_example_under_e():
    r = score(reference=REF, prediction=PRED, rule="E")
    ms = r.to_dict()["multislot"]
    # the type slot does not depend on the rule; LOC-LOC's extent is now a substitution
    assert _kinds(ms["overall"]) == ((1, 2, 1, 1), (1, 2, 1, 1))
    assert _kinds(ms["per_label"]["LOC"]) == ((1, 0, 0, 1), (0, 1, 0, 1))
    # the error categories: PER-ORG wrong label, LOC-LOC wrong boundary, ORG-PER both
    cats = r.to_dict()["categories"]["overall"]
    assert (cats["correct"], cats["wrong_label"], cats["wrong_boundary"], cats["wrong_label_boundary"]) == (0, 1, 1, 1)
    assert ms["overall"]["type"]["C"] == cats["correct"] + cats["wrong_boundary"]
    assert ms["overall"]["extent"]["C"] == cats["correct"] + cats["wrong_label"]


def test_templates_type_is_the_slot_extent_the_sequence_rule():
    # slot PER: "Al Roth" aligns with "Al Roth Jr" (one extra token: within O(1,1), not E);
    # "Bo Li" and "Cy" share nothing and fill the slot as a substitution. In OBD a pair is
    # always of one slot: type C for both pairs.
    ref = [Template("t", {"PER": ("Al Roth", "Bo Li")})]
    pred = [Template("t", {"PER": ("Al Roth Jr", "Cy")})]
    o11 = score_templates(reference=ref, prediction=pred, rule="O(1,1)").to_dict()["multislot"]
    assert _kinds(o11["overall"]) == ((2, 0, 0, 0), (1, 1, 0, 0))
    e = score_templates(reference=ref, prediction=pred, rule="E").to_dict()
    assert _kinds(e["multislot"]["overall"]) == ((2, 0, 0, 0), (0, 2, 0, 0))
    assert e["categories"]["overall"]["wrong_boundary"] == 2
    # an answer of another slot with no prediction there: a deletion of both of its slots
    more = score_templates(reference=[Template("t", {"PER": ("Al Roth",), "ORG": ("IBM",)})],
                           prediction=[Template("t", {"PER": ("Al Roth",), "LOC": ("Paris",)})])
    per = {lab: _kinds(v) for lab, v in more.to_dict()["multislot"]["per_label"].items()}
    assert per == {"LOC": ((0, 0, 0, 1),) * 2, "ORG": ((0, 0, 1, 0),) * 2, "PER": ((1, 0, 0, 0),) * 2}


def test_one_per_string_compares_strings():
    # PER "Roth" twice (one string) against PER "Al Roth": one-per-string pairs the strings
    # of one label (as OBD's slots: type C); the prediction holds one extra token: O(1,1)
    # fits, E does not. ORG "met" has no ORG answer: an insertion of both slots.
    doc = Document("d", ("Roth", "met", "Al", "Roth"), (Span("PER", 0, 1), Span("PER", 3, 4)))
    pred = [[Span("PER", 2, 4), Span("ORG", 1, 2)]]
    for rule, ext in (("O(1,1)", (1, 0, 0, 1)), ("E", (0, 1, 0, 1))):
        ms = score(reference=[doc], prediction=pred, rule=rule, mode="one-per-string").to_dict()["multislot"]
        assert _kinds(ms["overall"]) == ((1, 0, 0, 1), ext)
        assert _kinds(ms["per_label"]["ORG"]) == ((0, 0, 0, 1), (0, 0, 0, 1))


def test_none_without_an_alignment():
    ref, pred = [["B-PER", "O"]], [["B-PER", "O"]]
    for opts in ({"mode": "match-best"}, {"detail": "prf"}):
        r = score_tags(reference=ref, prediction=pred, scheme="IOB2", **opts)
        assert r.to_dict()["multislot"] is None and r.multislot_errors() is None and r.multislot is None
        assert "multi-slot tags" not in r.format_table()
        assert "type_C" not in format_report(r, "csv") and "Multi-slot" not in format_report(r, "markdown")


# --- the identities on random data -------------------------------------------------------------

LABELS = ("A", "B", "C")


def _spans(rng: random.Random, n: int, k: int, overlap: bool) -> tuple[Span, ...]:
    """Up to ``k`` random spans of 1 to 4 tokens over ``n`` tokens; without ``overlap``, no
    two of one label overlapping."""
    out = set()
    for _ in range(k):
        s = rng.randrange(n)
        out.add(Span(rng.choice(LABELS), s, min(n, s + rng.randint(1, 4))))
    return tuple(sorted(out if overlap else _spans_kept(out)))


def _random_docs(rng: random.Random, n_docs: int, overlap: bool):
    ref, pred = [], []
    for d in range(n_docs):
        n = rng.randint(1, 30)
        tokens = tuple(rng.choice(("x", "y", "z")) for _ in range(n))
        answers = _spans(rng, n, rng.randint(0, 5), overlap)
        # predictions: each answer kept, relabelled, moved by a token at either end, or
        # dropped; and some of their own
        got = set(_spans(rng, n, rng.randint(0, 2), overlap))
        for a in answers:
            lab = rng.choice(LABELS) if rng.random() < 0.3 else a.label
            s, e = a.start + rng.choice((0, 0, -1, 1)), a.end + rng.choice((0, 0, -1, 1))
            s, e = max(0, min(s, n - 1)), min(n, e)
            if e > s and rng.random() < 0.85:
                got.add(Span(lab, s, e))
        if not overlap:
            got = set(_spans_kept(got))
        ref.append(Document(f"d{d}", tokens, answers))
        pred.append(sorted(got))
    return ref, pred


def _spans_kept(spans) -> list[Span]:
    kept: list[Span] = []
    for sp in sorted(spans):
        if all(o.label != sp.label or o.end <= sp.start or sp.end <= o.start for o in kept):
            kept.append(sp)
    return kept


def _fits(rule: str, a: tuple[int, int], p: tuple[int, int]) -> bool:
    """The rules' tests on positions (answer a, prediction p), by their definitions."""
    (rs, re_), (ps, pe) = a, p
    el, er, ml, mr = max(rs - ps, 0), max(pe - re_, 0), max(ps - rs, 0), max(re_ - pe, 0)
    if rule == "E":
        return a == p
    if rule == "C(1)":
        return ps <= rs and re_ <= pe and el + er <= 1
    if rule == "O(1,1)":
        return el + er <= 1 and ml + mr <= 1
    assert rule == "O(inf,inf)"
    return min(pe, re_) > max(ps, rs)


def _check_identities(r, rule: str | None) -> None:
    d = r.to_dict()
    ms = d["multislot"]
    per_counts = r.per_label
    for lab, e in [*ms["per_label"].items(), ("overall", ms["overall"])]:
        c = r.overall if lab == "overall" else per_counts[lab]
        for kind in ("type", "extent"):
            k = e[kind]
            assert (k["D"], k["I"]) == (c.D, c.I)
            assert k["C"] + k["S"] + k["D"] == k["N"] == c.C + c.S + c.D
            assert k["C"] + k["S"] + k["I"] == k["M"] == c.C + c.S + c.I
        if rule == "E":  # the error categories, by the same alignment
            cats = d["categories"]["overall" if lab == "overall" else "per_label"]
            cats = cats if lab == "overall" else cats[lab]
            assert e["type"]["C"] == cats["correct"] + cats["wrong_boundary"]
            assert e["extent"]["C"] == cats["correct"] + cats["wrong_label"]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("rule", ["E", "C(1)", "O(1,1)", "O(inf,inf)"])
def test_identities_and_the_extent_slot_by_definition(seed, rule):
    rng = random.Random(seed * 31 + len(rule))
    ref, pred = _random_docs(rng, 20, overlap=seed % 2 == 1)
    counting = "any" if seed % 3 == 0 else "one-to-one"
    r = score(reference=ref, prediction=pred, rule=rule, counting=counting)
    _check_identities(r, rule)
    # the two slots of every aligned answer, from its partner, by the definitions
    want = {lab: [0, 0] for lab in r.labels}
    for it in r.items("reference"):
        p = it["partner"]
        if p is not None:
            want[it["label"]][0] += p["label"] == it["label"]
            want[it["label"]][1] += _fits(rule, (it["start"], it["end"]), (p["start"], p["end"]))
    ms = r.to_dict()["multislot"]["per_label"]
    assert {lab: [v["type"]["C"], v["extent"]["C"]] for lab, v in ms.items()} == want


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("setting", ["OBD", "one-per-string"])
def test_identities_on_strings(seed, setting):
    rng = random.Random(100 + seed)
    ref, pred = _random_docs(rng, 15, overlap=True)
    for rule in ("E", "O(1,1)"):
        if setting == "OBD":
            def tpl(doc, spans):
                slots: dict[str, list[str]] = {}
                for sp in spans:
                    slots.setdefault(sp.label, []).append(" ".join(doc.tokens[sp.start:sp.end]))
                return Template(doc.id, {k: tuple(v) for k, v in slots.items()})

            r = score_templates(reference=[tpl(d, d.spans) for d in ref],
                                prediction=[tpl(d, p) for d, p in zip(ref, pred)], rule=rule)
        else:
            r = score(reference=ref, prediction=pred, rule=rule, mode="one-per-string")
        _check_identities(r, rule)


# --- streaming, totals, states -------------------------------------------------------------------

def _tags(seed: int, n: int = 60):
    rng = random.Random(seed)
    ref, pred = [], []
    for _ in range(n):
        r = [rng.choice(("O", "O", "B-A", "I-A", "B-B", "I-B")) for _ in range(rng.randint(1, 12))]
        p = [t if rng.random() < 0.7 else rng.choice(("O", "B-A", "I-A", "B-B")) for t in r]
        ref.append(r)
        pred.append(p)
    return ref, pred


def test_batches_totals_and_states_give_the_one_call_numbers():
    ref, pred = _tags(5)
    one = score_tags(reference=ref, prediction=pred, scheme="IOB2", rule="O(1,1)")
    want = one.to_dict()["multislot"]
    assert want["overall"]["type"]["N"] > 0
    shards = []
    for k in range(3):
        s = Scorer(scheme="IOB2", rule="O(1,1)")
        for i in range(k * 20, k * 20 + 20, 5):  # calls of 5 documents
            s.add_tags(reference=ref[i:i + 5], prediction=pred[i:i + 5], doc_ids=[str(j) for j in range(i, i + 5)])
        shards.append(s)
    totals = Scorer(scheme="IOB2", rule="O(1,1)", totals_only=True)
    for i in range(0, 60, 7):
        totals.add_tags(reference=ref[i:i + 7], prediction=pred[i:i + 7],
                        doc_ids=[str(j) for j in range(i, min(i + 7, 60))])
    assert totals.report().to_dict()["multislot"] == want
    for keep in ("items", "counts"):
        merged = merge_states([load_state(s.to_state(keep=keep)) for s in shards])
        assert merged.report().to_dict()["multislot"] == want
        assert np.array_equal(merged.report().multislot, one.multislot)


def test_a_state_without_multislot_counts_loads_with_none():
    ref, pred = _tags(6, 10)
    s = Scorer(scheme="IOB2")
    s.add_tags(reference=ref, prediction=pred)
    s.report()  # held batches scored
    for p in s._parts:  # as a state written before the counts were kept
        p.multislot = None
    for keep in ("items", "counts"):
        data = s.to_state(keep=keep)
        assert b"multislot" not in data
        old = load_state(data)
        assert old.report().to_dict()["multislot"] is None
        if keep == "items":  # written again as it was
            assert old.to_state(keep="items") == data
        new = Scorer(scheme="IOB2")
        new.add_tags(reference=[["B-A"]], prediction=[["B-A"]], doc_ids=["x"])
        fresh = load_state(new.to_state(keep=keep))
        assert fresh.report().to_dict()["multislot"] is not None
        assert merge_states([fresh, old]).report().to_dict()["multislot"] is None  # unknown for some documents


# --- the views -------------------------------------------------------------------------------------

def test_the_table_csv_markdown_and_json():
    r = score(reference=REF, prediction=PRED, rule="O(1,1)")
    lines = r.format_table().split("\n")
    k = next(i for i, x in enumerate(lines) if x.startswith("  multi-slot tags:"))
    # the counts of test_hand_example_under_o11; SER over both kinds: LOC (0 + 0 + 2)/2,
    # MISC (0 + 0 + 2)/2, ORG (1 + 1)/2, PER (1 + 0)/2, overall 7/8
    assert lines[k:k + 6] == [
        "  multi-slot tags: type-C  type-S  type-D  type-I  |  extent-C  extent-S  extent-D  extent-I  |       SER",
        "              LOC:      1       0       0       1  |         1         0         0         1  |   100.00%",
        "             MISC:      0       0       1       0  |         0         0         1         0  |   100.00%",
        "              ORG:      0       1       0       0  |         0         1         0         0  |   100.00%",
        "              PER:      0       1       0       0  |         1         0         0         0  |    50.00%",
        "          overall:      1       2       1       1  |         2         1         1         1  |    87.50%",
    ]
    assert lines[k + 6].startswith("signature: ")
    rows = list(csv.reader(io.StringIO(format_report(r, "csv"))))[1:]
    head = rows[0]
    body = {row[0]: dict(zip(head, row)) for row in rows[1:]}
    assert head[-9:] == ["type_C", "type_S", "type_D", "type_I", "extent_C", "extent_S", "extent_D", "extent_I",
                         "multislot_ser"]
    assert [body["PER"][h] for h in head[-9:]] == ["0", "1", "0", "0", "1", "0", "0", "0", "0.5"]
    assert [body["overall"][h] for h in head[-9:]] == ["1", "2", "1", "1", "2", "1", "1", "1", "0.875"]
    md = format_report(r, "markdown")
    assert "| PER | 0 | 1 | 0 | 0 | 1 | 0 | 0 | 0 | 50.00 |" in md
    assert "| overall | 1 | 2 | 1 | 1 | 2 | 1 | 1 | 1 | 87.50 |" in md
    assert json.loads(format_report(r, "json"))["multislot"] == r.to_dict()["multislot"]
    assert set(r.to_dict()["multislot"]) == {"overall", "per_label"}
    assert set(r.to_dict()["multislot"]["overall"]) == {"type", "extent", "ser"}
    assert set(r.to_dict()["multislot"]["overall"]["type"]) == {"C", "S", "D", "I", "N", "M", "ser"}


def test_to_dict_is_fresh_and_a_report_of_no_labels():
    r = score(reference=REF, prediction=PRED, rule="O(1,1)")
    a = r.to_dict()["multislot"]
    a["per_label"]["PER"]["type"]["C"] = 99
    assert r.to_dict()["multislot"]["per_label"]["PER"]["type"]["C"] == 0
    # labels of equal counts get equal entries, each its own dict
    same = r.to_dict()["multislot"]["per_label"]
    assert same["ORG"] is not same["MISC"] and same["ORG"]["type"] is not same["MISC"]["type"]
    empty = score_tags(reference=[["O"]], prediction=[["O"]], scheme="IOB2").to_dict()["multislot"]
    assert empty["per_label"] == {} and empty["overall"]["type"] == {
        "C": 0, "S": 0, "D": 0, "I": 0, "N": 0, "M": 0, "ser": None}
    assert empty["overall"]["ser"] is None
    assert iescore.multislot.KINDS == ("type", "extent")
