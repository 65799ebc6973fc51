"""One-per-string in the AO setting (SPEC §3.4; Siefkes ch. 15.2, "one answer per
different string"): occurrences with equal (normalised) text collapse to one per
document and label, and "different positions in the document are ignored" — the
collapsed predictions are compared with the collapsed answers by their strings, under
the OBD sequence rules (SPEC §2.2), never by position. Every occurrence carries its
string's status. Every number below is computed by hand in the comments."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from iescore import Document, Span, score, score_tags

OPS = dict(mode="one-per-string")


def prf(r):
    return (r.overall.tp, r.overall.fp, r.overall.fn)


def slots(r):
    se = r.to_dict()["slot_errors"]
    return (se["C"], se["S"], se["D"], se["I"])


def statuses(r, side):
    return sorted((i["start"], i["end"], i["status"]) for i in r.items(side))


# tokens:    0    1      2     3    4      5      6
ROTH = ("Al", "Roth", "met", "Al", "Roth", "and", "Ido")


def test_repeated_answer_string_found_once():
    """Answers "Al Roth" (0,2), "Al Roth" (3,5), "Ido" (6,7); prediction "Al Roth" (3,5).
    Answer strings {Al Roth, Ido}, predicted strings {Al Roth}: Al Roth = Al Roth is the
    one TP, no FP, Ido is the one FN. Slot errors (OBD alignment of the strings):
    C = 1 (Al Roth), D = 1 (Ido), S = I = 0. Both "Al Roth" answers carry the TP."""
    ref = Document("d", ROTH, (Span("speaker", 0, 2), Span("speaker", 3, 5), Span("speaker", 6, 7)))
    r = score(reference=[ref], prediction=[[Span("speaker", 3, 5)]], **OPS)
    assert prf(r) == (1, 0, 1)
    assert slots(r) == (1, 0, 1, 0)
    assert statuses(r, "reference") == [(0, 2, "TP"), (3, 5, "TP"), (6, 7, "FN")]
    assert statuses(r, "prediction") == [(3, 5, "TP")]


# The answer key marks only the first "Al Roth"; the system finds the second one.
UNMARKED = Document("d", ROTH, (Span("speaker", 0, 2), Span("speaker", 6, 7)))
AT_OTHER_PLACE = [[Span("speaker", 3, 5)]]


def test_a_string_found_at_another_position_is_a_true_positive():
    """Answers "Al Roth" (0,2) and "Ido" (6,7); prediction "Al Roth" at (3,5), where no
    answer lies. Positions are ignored: predicted {Al Roth} vs answers {Al Roth, Ido}
    -> TP 1 (Al Roth), FP 0, FN 1 (Ido); C 1, D 1 (N = 2, M = 1).
    (Matching by position, as match-all does, gives TP 0, FP 1, FN 2.)"""
    r = score(reference=[UNMARKED], prediction=AT_OTHER_PLACE, **OPS)
    assert prf(r) == (1, 0, 1)
    assert slots(r) == (1, 0, 1, 0)
    assert statuses(r, "reference") == [(0, 2, "TP"), (6, 7, "FN")]
    assert statuses(r, "prediction") == [(3, 5, "TP")]
    positional = score(reference=[UNMARKED], prediction=AT_OTHER_PLACE)
    assert prf(positional) == (0, 1, 2)


def test_tag_input_gives_the_same_numbers():
    """The case above as IOB2 tags with tokens=: the same counts and statuses."""
    ref = ["B-speaker", "I-speaker", "O", "O", "O", "O", "B-speaker"]
    pred = ["O", "O", "O", "B-speaker", "I-speaker", "O", "O"]
    r = score_tags(reference=[ref], prediction=[pred], tokens=[list(ROTH)], scheme="IOB2", **OPS)
    assert prf(r) == (1, 0, 1)  # as computed by hand above
    assert slots(r) == (1, 0, 1, 0)
    assert statuses(r, "reference") == [(0, 2, "TP"), (6, 7, "FN")]
    assert statuses(r, "prediction") == [(3, 5, "TP")]
    docs = score(reference=[UNMARKED], prediction=AT_OTHER_PLACE, **OPS)
    keys = ("overall", "per_label", "slot_errors", "confusion")
    assert {k: r.to_dict()[k] for k in keys} == {k: docs.to_dict()[k] for k in keys}


def test_tag_input_needs_the_tokens():
    with pytest.raises(ValueError, match="needs the tokens; pass tokens="):
        score_tags(reference=[["B-A"]], prediction=[["B-A"]], scheme="IOB2", **OPS)


# tokens:   0       1     2       3        4     5     6       7
PROF = ("Prof", "Al", "Roth", "spoke", ";", "Al", "Roth", "left")
PROF_REF = Document("d", PROF, (Span("speaker", 5, 7),))  # "Al Roth"


@pytest.mark.parametrize(
    "rule, counts, slot_errors",
    [
        # "Prof Al Roth" != "Al Roth": FP 1, FN 1; the slot holds a wrong value: S 1
        ("E", (0, 1, 1), (0, 1, 0, 0)),
        # C(1): "Prof Al Roth" contains "Al Roth" with 1 extra token (2 <= 3 <= 2 + 1): TP
        ("C(1)", (1, 0, 0), (1, 0, 0, 0)),
        # O(1,1): case 1 of SPEC §2.2 (answer inside the prediction, 1 extra): TP
        ("O(1,1)", (1, 0, 0), (1, 0, 0, 0)),
        # C(0) = E
        ("C(0)", (0, 1, 1), (0, 1, 0, 0)),
    ],
)
def test_contain_compares_strings_not_positions(rule, counts, slot_errors):
    """Prediction "Prof Al Roth" at (0,3); the answer "Al Roth" is at (5,7) (the "Al Roth"
    inside the prediction is not marked). By position they do not even overlap."""
    r = score(reference=[PROF_REF], prediction=[[Span("speaker", 0, 3)]], rule=rule, **OPS)
    assert prf(r) == counts
    assert slots(r) == slot_errors


@pytest.mark.parametrize(
    "rule, counts",
    [
        # p = (Roth, spoke), a = (Al, Roth): a prefix of p equals a suffix of a (t = 1 token):
        # k - t = 1 missing on the left, n - t = 1 extra on the right (SPEC §2.2 case 4)
        ("O(1,1)", (1, 0, 0)),
        ("O(0,1)", (0, 1, 1)),  # 1 extra > e = 0
        ("O(1,0)", (0, 1, 1)),  # 1 missing > m = 0
        ("C(1)", (0, 1, 1)),  # p does not contain a
    ],
)
def test_overlap_compares_strings_not_positions(rule, counts):
    """Prediction "Roth spoke" at (2,4); the answer "Al Roth" at (5,7)."""
    r = score(reference=[PROF_REF], prediction=[[Span("speaker", 2, 4)]], rule=rule, **OPS)
    assert prf(r) == counts


def test_normaliser_lower_collapses_and_matches():
    """Answer "Al Roth" (3,5); predictions "AL ROTH" (0,2) only.
    identity: "AL ROTH" != "Al Roth": FP 1, FN 1. lower: "al roth" = "al roth": TP 1."""
    toks = ("AL", "ROTH", "met", "Al", "Roth")
    ref = Document("d", toks, (Span("speaker", 3, 5),))
    pred = [[Span("speaker", 0, 2)]]
    assert prf(score(reference=[ref], prediction=pred, **OPS)) == (0, 1, 1)
    r = score(reference=[ref], prediction=pred, normaliser="lower", **OPS)
    assert prf(r) == (1, 0, 0)
    assert statuses(r, "prediction") == [(0, 2, "TP")]
    # both occurrences predicted: they collapse to one string under lower, which is one TP
    # (identity: two strings, "Al Roth" TP and "AL ROTH" FP)
    both = [[Span("speaker", 0, 2), Span("speaker", 3, 5)]]
    r = score(reference=[ref], prediction=both, normaliser="lower", **OPS)
    assert prf(r) == (1, 0, 0)
    assert statuses(r, "prediction") == [(0, 2, "TP"), (3, 5, "TP")]
    assert prf(score(reference=[ref], prediction=both, **OPS)) == (1, 1, 0)


# tokens:  0     1      2     3      4     5
JR = ("Al", "Roth", "Jr", "met", "Al", "Roth")
JR_REF = Document("d", JR, (Span("speaker", 0, 3), Span("speaker", 4, 6)))  # "Al Roth Jr", "Al Roth"
JR_PRED = [[Span("speaker", 0, 2)]]  # "Al Roth" at the place of "Al Roth Jr"


def test_any_match_and_one_to_one_counting():
    """O(1,1). Predicted {Al Roth}; answers {Al Roth Jr, Al Roth}. "Al Roth" matches
    "Al Roth" (exact) and "Al Roth Jr" (inside it, 1 missing <= m = 1).
    any-match: the prediction is TP, both answers are hit: TP 1, FP 0, FN 0.
    one-to-one: one pair, the exact one preferred: TP 1, FN 1 ("Al Roth Jr").
    By position (match-all, one-to-one) the FN would be "Al Roth" at (4,6) instead."""
    any_ = score(reference=[JR_REF], prediction=JR_PRED, rule="O(1,1)", **OPS)
    assert prf(any_) == (1, 0, 0)
    assert statuses(any_, "reference") == [(0, 3, "TP"), (4, 6, "TP")]
    one = score(reference=[JR_REF], prediction=JR_PRED, rule="O(1,1)", counting="one-to-one", **OPS)
    assert prf(one) == (1, 0, 1)
    assert statuses(one, "reference") == [(0, 3, "FN"), (4, 6, "TP")]
    assert statuses(one, "prediction") == [(0, 2, "TP")]
    # slot errors: "Al Roth" aligned with "Al Roth" (correct): C 1; "Al Roth Jr": D 1
    assert slots(one) == (1, 0, 1, 0)
    positional = score(reference=[JR_REF], prediction=JR_PRED, rule="O(1,1)", counting="one-to-one")
    assert statuses(positional, "reference") == [(0, 3, "TP"), (4, 6, "FN")]


def test_strings_of_other_documents_and_labels_never_match():
    """Doc a: answer speaker "Al Roth"; doc b: prediction speaker "Al Roth" -> FP 1, FN 1.
    Doc c: answer location "Wean Hall", prediction speaker "Wean Hall" at the same place:
    different slots -> FP 1, FN 1; OBD's alignment pairs fillers of one slot only, so
    D 1 and I 1 (no substitution across labels). Totals: TP 0, FP 2, FN 2; C 0, S 0, D 2, I 2."""
    docs = [
        Document("a", ("Al", "Roth"), (Span("speaker", 0, 2),)),
        Document("b", ("Al", "Roth"), ()),
        Document("c", ("Wean", "Hall"), (Span("location", 0, 2),)),
    ]
    pred = [[], [Span("speaker", 0, 2)], [Span("speaker", 0, 2)]]
    r = score(reference=docs, prediction=pred, rule="O(inf,inf)", **OPS)
    assert prf(r) == (0, 2, 2)
    assert slots(r) == (0, 0, 2, 2)
    assert r.confusion_table() == {"location": {"none": 1}, "speaker": {"none": 1}, "none": {"speaker": 2}}


def test_substitution_within_a_slot():
    """Answers {Al Roth, Ido}, predictions {Al Roth, Cristina} (Cristina at a place where
    no answer lies). E: TP 1, FP 1, FN 1; slot errors as OBD: Al Roth correct (C 1), the
    remaining Ido and Cristina pair as a substitution (S 1), D = I = 0; N = 2, M = 2."""
    toks = ("Al", "Roth", "and", "Ido", "met", "Cristina")
    ref = Document("d", toks, (Span("speaker", 0, 2), Span("speaker", 3, 4)))
    pred = [[Span("speaker", 0, 2), Span("speaker", 5, 6)]]
    r = score(reference=[ref], prediction=pred, **OPS)
    assert prf(r) == (1, 1, 1)
    assert slots(r) == (1, 1, 0, 0)
    assert r.confusion_table() == {"speaker": {"speaker": 2}, "none": {}}


def test_de_sitter_example_7_from_positioned_spans():
    """De Sitter Ex. 7 (SPEC §9): answers {Al Roth, Ido Erev}, predictions {Al Roth, Ido,
    Cristina Bicchieri}: E -> TP 1, FP 2, FN 1; O(1,2) -> TP 2, FP 1, FN 0. Here "Al Roth"
    occurs twice in the answers and is predicted only at its second place."""
    toks = ("Al", "Roth", "and", "Ido", "Erev", "meet", "Cristina", "Bicchieri", "Al", "Roth")
    ref = Document("D", toks, (Span("speaker", 0, 2), Span("speaker", 3, 5), Span("speaker", 8, 10)))
    pred = [[Span("speaker", 8, 10), Span("speaker", 3, 4), Span("speaker", 6, 8)]]
    assert prf(score(reference=[ref], prediction=pred, rule="E", **OPS)) == (1, 2, 1)
    assert prf(score(reference=[ref], prediction=pred, rule="O(1,2)", **OPS)) == (2, 1, 0)


def test_ts_model_stays_positional():
    """The TS model counts t-units (SPEC §6) whatever the mode: the case where the string
    matches at another place has no shared positive token. Tokens: answer tokens 0, 1, 6;
    predicted 3, 4: tok TP 0, FP 2, FN 3; separators: answer s0 (inside 0-2), predicted
    s3 (inside 3-5): sep TP 0, FP 1, FN 1."""
    r = score(reference=[UNMARKED], prediction=AT_OTHER_PLACE, **OPS)
    all_ = score(reference=[UNMARKED], prediction=AT_OTHER_PLACE)
    assert r.to_dict()["ts"] == all_.to_dict()["ts"]
    c = r.counts("speaker")
    assert (c.tok_tp, c.tok_fp, c.tok_fn, c.sep_tp, c.sep_fp, c.sep_fn) == (0, 2, 3, 0, 1, 1)


# --- AO one-per-string counts what OBD counts on the same spans -------------------------

@st.composite
def _corpora(draw):
    docs, preds = [], []
    for k in range(draw(st.integers(1, 3))):
        n = draw(st.integers(1, 10))
        toks = tuple(draw(st.lists(st.sampled_from("ab"), min_size=n, max_size=n)))

        def spans():
            out = []
            for _ in range(draw(st.integers(0, 5))):
                a = draw(st.integers(0, n - 1))
                out.append(Span(draw(st.sampled_from("XY")), a, draw(st.integers(a + 1, min(n, a + 3)))))
            return out

        docs.append(Document(f"d{k}", toks, tuple(spans())))
        preds.append(spans())
    return docs, preds


@settings(max_examples=150, deadline=None)
@given(_corpora(), st.sampled_from(["E", "C(1)", "O(1,1)", "O(inf,inf)"]), st.sampled_from(["any", "one-to-one"]))
def test_counts_equal_obd_of_the_same_spans(corpus, rule, counting):
    """Positions play no part: the counts, slot errors and confusion table are those of
    OBD scoring of the same documents (its fillers are the spans' distinct strings), and
    every occurrence's status is its string's OBD status."""
    docs, preds = corpus
    ao = score(reference=docs, prediction=preds, rule=rule, counting=counting, **OPS)
    obd = score(reference=docs, prediction=preds, rule=rule, counting=counting, setting="OBD")
    keys = ("overall", "per_label", "slot_errors", "confusion")
    assert {k: ao.to_dict()[k] for k in keys} == {k: obd.to_dict()[k] for k in keys}
    for side in ("reference", "prediction"):
        of_string = {(i["doc"], i["label"], i["text"]): i["status"] for i in obd.items(side)}
        for i in ao.items(side):
            assert i["status"] == of_string[(i["doc"], i["label"], i["text"])]


@settings(max_examples=150, deadline=None)
@given(_corpora(), st.sampled_from(["C(1)", "O(1,1)", "O(inf,inf)"]), st.sampled_from(["one-per-string", "OBD"]),
       st.randoms(use_true_random=False))
def test_statuses_do_not_depend_on_the_input_order(corpus, rule, mode, rnd):
    """Ties between equally good one-to-one matchings go to the string that occurs first
    in the document (SPEC §3.2: "then position"), not to the one given first: shuffled
    spans get the same statuses."""
    docs, preds = corpus
    kw = dict(rule=rule, counting="one-to-one")
    kw.update(setting="OBD") if mode == "OBD" else kw.update(OPS)
    shuffled_docs, shuffled_preds = [], []
    for d, p in zip(docs, preds):
        sp, pp = list(d.spans), list(p)
        rnd.shuffle(sp)
        rnd.shuffle(pp)
        shuffled_docs.append(Document(d.id, d.tokens, tuple(sp)))
        shuffled_preds.append(pp)
    a = score(reference=docs, prediction=preds, **kw)
    b = score(reference=shuffled_docs, prediction=shuffled_preds, **kw)
    def outcome(i: dict) -> tuple:  # a partner's index counts the items in input order: left out
        p = i["partner"] and {k: v for k, v in i["partner"].items() if k != "index"}
        return tuple(sorted({**i, "partner": p}.items(), key=str))

    for side in ("reference", "prediction"):
        items = [sorted((outcome(i) for i in r.items(side)), key=str) for r in (a, b)]  # partners are dicts
        assert items[0] == items[1]


@pytest.mark.parametrize("mode", [dict(mode="one-per-string"), dict(setting="OBD")])
def test_a_tie_goes_to_the_string_that_occurs_first(mode):
    """Tokens a b x a; answers "a" (0,1), "b" (1,2), "a" (3,4); prediction "a b" (0,2).
    C(1), one-to-one: "a b" contains "a" and "b", each with 1 extra token (no exact pair,
    equal boundary errors): one TP, and the tie goes to the string that occurs first in
    the document, "a" (at token 0), whichever order the spans are given in. TP 1, FP 0,
    FN 1 ("b")."""
    toks = ("a", "b", "x", "a")
    for spans in ((Span("X", 0, 1), Span("X", 1, 2), Span("X", 3, 4)),
                  (Span("X", 3, 4), Span("X", 1, 2), Span("X", 0, 1))):
        ref = Document("d", toks, spans)
        r = score(reference=[ref], prediction=[[Span("X", 0, 2)]], rule="C(1)", counting="one-to-one", **mode)
        assert prf(r) == (1, 0, 1)
        assert sorted((i["text"], i["status"]) for i in r.items("reference")) == (
            [("a", "TP"), ("a", "TP"), ("b", "FN")] if "mode" in mode else [("a", "TP"), ("b", "FN")]
        )
