"""The rules by share, IoU(t), cover(t) and sim(t): parsing and printing, hand-computed
cases (tokens and characters, every counting and mode), the identities IoU(1) = E,
cover(1) = C(inf) and sim(1) = E after normalisation, and property tests comparing the
pairs a rule accepts with a brute-force reading of its definition (sets of positions,
every placement of two sequences, a textbook edit distance, every assignment)."""

from __future__ import annotations

import itertools
import sys
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import iescore
from iescore import Document, Span, Template
from iescore.config import Config
from iescore.errors import ConfigError, InputError
from iescore.match import fillers, rules
from iescore.match.rules import ao_pairs, sequence_match
from iescore.match.units import Units
from iescore.options import Rule

rapidfuzz = pytest.importorskip("rapidfuzz")
from rapidfuzz.distance import Levenshtein

# --- brute-force definitions ---------------------------------------------------------------

def share_ao(rule: str, p: tuple[int, int], a: tuple[int, int]) -> bool:
    """IoU or cover of two half-open spans as sets of positions."""
    P, A = set(range(*p)), set(range(*a))
    kind, t = rule.split("(")
    t = Fraction(t.rstrip(")"))
    whole = len(P | A) if kind == "IoU" else len(A)
    return bool(P & A) and Fraction(len(P & A), whole) >= t


def overlap_tokens(p: tuple[str, ...], a: tuple[str, ...]) -> int:
    """The most tokens shared by a placement of ``a`` against ``p`` (every offset whose
    overlapping tokens agree)."""
    n, k = len(p), len(a)
    best = 0
    for d in range(-(k - 1), n):  # a starts at position d of p
        lo, hi = max(0, d), min(n, d + k)
        if hi > lo and all(p[i] == a[i - d] for i in range(lo, hi)):
            best = max(best, hi - lo)
    return best


def lev(x: str, y: str) -> int:
    row = list(range(len(y) + 1))
    for i, cx in enumerate(x, 1):
        prev, row[0] = row[0], i
        for j, cy in enumerate(y, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (cx != cy))
    return row[-1]


def share_seq(rule: str, p: tuple[str, ...], a: tuple[str, ...]) -> bool:
    kind, t = rule.split("(")
    t = Fraction(t.rstrip(")"))
    if kind == "sim":
        x, y = " ".join(p), " ".join(a)
        top = max(len(x), len(y))
        return top == 0 or 1 - Fraction(lev(x, y), top) >= t
    s = overlap_tokens(p, a)
    whole = len(p) + len(a) - s if kind == "IoU" else len(a)
    return s > 0 and Fraction(s, whole) >= t


# --- parsing, printing, the signature ------------------------------------------------------

@pytest.mark.parametrize("text, kind, t, printed", [
    ("IoU(0.5)", "iou", 0.5, "IoU(0.5)"), ("iou(.50)", "iou", 0.5, "IoU(0.5)"), ("IOU(1.0)", "iou", 1.0, "IoU(1)"),
    ("cover(0.8)", "cover", 0.8, "cover(0.8)"), ("Cover( 1 )", "cover", 1.0, "cover(1)"),
    ("sim(0.8)", "sim", 0.8, "sim(0.8)"), ("SIM(0.125)", "sim", 0.125, "sim(0.125)"),
])
def test_parse_and_print(text, kind, t, printed):
    r = Rule.parse(text)
    assert (r.kind, r.t, str(r)) == (kind, t, printed)
    assert Rule.parse(str(r)) == r and r.by_share


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(["iou", "cover", "sim"]), st.floats(0, 1, exclude_min=True))
def test_every_threshold_prints_and_reads_back(kind, t):
    r = Rule(kind, t=t)
    assert Rule.parse(str(r)) == r and float(r.share()) == t


@pytest.mark.parametrize("text", ["IoU(0)", "IoU(1.5)", "IoU(-0.5)", "cover()", "sim(x)", "IoU(0.5,1)", "sim(1/2)"])
def test_bad_shares_are_refused(text):
    with pytest.raises(ConfigError, match=r"IoU\(t\)|0 < t <= 1"):
        Rule.parse(text)


def test_share_is_the_exact_decimal():
    assert Rule.parse("IoU(0.1)").share() == Fraction(1, 10)
    assert Rule.parse("cover(0.3)").share() == Fraction(3, 10)
    with pytest.raises(ConfigError):
        Rule.parse("O(1,1)").share()
    with pytest.raises(ConfigError, match="takes no share"):
        Rule("overlap", 1, 1, 0.5)


@pytest.mark.parametrize("rule", ["IoU(0.5)", "cover(0.75)", "sim(0.8)"])
def test_signature_prints_the_rule_and_reads_it_back(rule):
    setting = "OBD" if rule.startswith("sim") else "AO"
    sig = Config(rule=rule, setting=setting).signature()
    assert f"|rule:{rule}|" in sig
    assert Config.from_signature(sig).rule == Rule.parse(rule)


def test_sim_needs_strings():
    with pytest.raises(ConfigError, match="compares strings"):
        Rule.parse("sim(0.8)").check_use("AO", "match-all")
    with pytest.raises(ConfigError, match="compares strings"):
        Rule.parse("sim(0.8)").check_use("AO", "match-best")
    Rule.parse("sim(0.8)").check_use("AO", "one-per-string")
    Rule.parse("sim(0.8)").check_use("OBD", "match-all")
    Rule.parse("IoU(0.5)").check_use("AO", "match-all")


def test_a_missing_rapidfuzz_names_the_extra(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "rapidfuzz" else real(name, *a))
    with pytest.raises(ConfigError, match=r"iescore\[fuzzy\]"):
        Rule.parse("sim(0.8)").check_use("OBD", "match-all")
    monkeypatch.setattr(rules, "_LEV", [])
    monkeypatch.setitem(sys.modules, "rapidfuzz", None)
    monkeypatch.setitem(sys.modules, "rapidfuzz.distance", None)
    with pytest.raises(ConfigError, match=r"iescore\[fuzzy\]"):
        rules.levenshtein()


# --- hand-computed cases --------------------------------------------------------------------

# tokens 0..7; PER answer [0,4) and prediction [1,4): 3 shared of 4, IoU 3/4, cover 3/4;
# LOC answer [5,8) and prediction [4,8): 3 shared, union 4, IoU 3/4, cover 3/3
DOC = Document(id="d1", tokens=tuple("abcdefgh"), spans=(Span("PER", 0, 4), Span("LOC", 5, 8)))
PRED = [[Span("PER", 1, 4), Span("LOC", 4, 8)]]


@pytest.mark.parametrize("rule, tp", [
    ("IoU(0.5)", 2), ("IoU(0.75)", 2), ("IoU(0.76)", 0), ("IoU(1)", 0),
    ("cover(0.75)", 2), ("cover(0.76)", 1), ("cover(1)", 1),
])
@pytest.mark.parametrize("counting", ["any", "one-to-one"])
def test_ao_hand_cases(rule, tp, counting):
    o = iescore.score(reference=[DOC], prediction=PRED, rule=rule, counting=counting).overall
    assert (o.tp, o.fp, o.fn) == (tp, 2 - tp, 2 - tp)


def test_cover_is_the_share_of_the_answer():
    # the prediction [2,3) covers 1 of the answer's 4 tokens (IoU 1/4 too); the prediction
    # [0,8) covers all 4 (IoU 4/8): cover reads the answer's side only
    ref = Document(id="d", tokens=tuple("abcdefgh"), spans=(Span("X", 0, 4),))
    for pred, cover, iou in (((2, 3), Fraction(1, 4), Fraction(1, 4)), ((0, 8), Fraction(1), Fraction(1, 2))):
        for rule, share in (("cover", cover), ("IoU", iou)):
            for t in ("0.25", "0.5", "1"):
                r = iescore.score(reference=[ref], prediction=[[Span("X", *pred)]], rule=f"{rule}({t})")
                assert r.overall.tp == int(share >= Fraction(t)), (pred, rule, t)


def test_one_to_one_prefers_exact_then_the_smallest_boundary_error():
    # one answer [0,4), three predictions of IoU >= 1/2: the exact one is the TP, then
    # (without it) the one of boundary error 1 rather than 2
    ref = Document(id="d", tokens=tuple("abcdefgh"), spans=(Span("X", 0, 4),))
    for preds, tp_at in (([(0, 2), (0, 5), (0, 4)], 2), ([(0, 2), (0, 5), (1, 4)], 1)):
        r = iescore.score(reference=[ref], prediction=[[Span("X", *p) for p in preds]], rule="IoU(0.5)",
                          counting="one-to-one")
        status = [it["status"] for it in r.items("prediction")]
        want = ["FP"] * 3
        want[tp_at] = "TP"
        assert sorted(zip([(it["start"], it["end"]) for it in r.items("prediction")], status)) == sorted(
            zip(preds, want))


def test_match_best_keeps_the_most_confident():
    ref = Document(id="d", tokens=tuple("abcdefgh"), spans=(Span("X", 0, 4),))
    pred = [[Span("X", 0, 1, score=0.9), Span("X", 0, 3, score=0.1)]]  # IoU 1/4 (kept) and 3/4
    o = iescore.score(reference=[ref], prediction=pred, rule="IoU(0.5)", mode="match-best").overall
    assert (o.tp, o.fp, o.fn) == (0, 1, 1)
    o = iescore.score(reference=[ref], prediction=pred, rule="IoU(0.25)", mode="match-best").overall
    assert (o.tp, o.fp, o.fn) == (1, 0, 0)


def test_characters():
    from iescore.io.chars import TextDocument
    from iescore.io.textscore import score_text

    # "Barack Obama" is characters [0,12); "Barack" [0,6): 6 of 12 characters
    ref = [TextDocument("d", "Barack Obama spoke", (Span("PER", 0, 12),))]
    pred = [TextDocument("d", "Barack Obama spoke", (Span("PER", 0, 6),))]
    for rule, tp in (("IoU(0.5)", 1), ("IoU(0.51)", 0), ("cover(0.5)", 1), ("cover(0.6)", 0)):
        r = score_text(ref, pred, level="characters", rule=rule)
        assert r.overall.tp == tp, rule
        assert f"rule:{rule}" in r.signature
    # on tokens it is 1 of 2 tokens: IoU 1/2 again, but IoU(0.51) fails and cover(0.5) holds
    r = score_text(ref, pred, level="tokens", tokenizer="whitespace", rule="IoU(0.5)")
    assert r.overall.tp == 1


def test_obd_sim_matches_fillers_sharing_no_token():
    # against "John Smith": "John Smyth" one edit in 10 characters, sim 0.9 (a shared
    # "John" but no placement: IoU 0); "Smyth" 6 edits in 10, sim 0.4, no token shared.
    # "Ido" against "Ido Erev": 5 edits in 8, sim 3/8, IoU 1/2, cover 1/2
    ref = [Template(id="d1", slots={"speaker": [("John", "Smith"), ("Ido", "Erev")]})]
    pred = [Template(id="d1", slots={"speaker": [("Smyth",), ("John", "Smyth"), ("Ido",)]})]
    for rule, any_, one in (("E", (0, 3, 2), (0, 3, 2)), ("sim(0.9)", (1, 2, 1), (1, 2, 1)),
                            ("sim(0.91)", (0, 3, 2), (0, 3, 2)), ("sim(0.4)", (2, 1, 1), (1, 2, 1)),
                            ("sim(0.375)", (3, 0, 0), (2, 1, 0)), ("IoU(0.5)", (1, 2, 1), (1, 2, 1)),
                            ("IoU(0.6)", (0, 3, 2), (0, 3, 2)), ("cover(0.5)", (1, 2, 1), (1, 2, 1))):
        for counting, want in (("any", any_), ("one-to-one", one)):
            o = iescore.score_templates(reference=ref, prediction=pred, rule=rule, counting=counting).overall
            assert (o.tp, o.fp, o.fn) == want, (rule, counting)


def test_one_per_string():
    # "John Smith" twice and "Ann Lee" in the reference, "John Smyth" and "Ann" predicted:
    # strings compared, never positions
    toks = ("John", "Smith", "met", "John", "Smith", "and", "Ann", "Lee", "John", "Smyth", "Ann")
    ref = Document(id="d", tokens=toks, spans=(Span("P", 0, 2), Span("P", 3, 5), Span("P", 6, 8)))
    pred = [[Span("P", 8, 10), Span("P", 10, 11)]]
    for rule, tp in (("sim(0.9)", 1), ("IoU(0.5)", 1), ("cover(0.5)", 1), ("cover(0.6)", 0), ("E", 0)):
        r = iescore.score(reference=[ref], prediction=pred, rule=rule, mode="one-per-string")
        assert r.overall.tp == tp, rule
    r = iescore.score(reference=[ref], prediction=pred, rule="sim(0.9)", mode="one-per-string")
    assert [it["status"] for it in r.items("reference")] == ["TP", "TP", "FN"]


def test_a_sim_slot_of_too_many_pairs_is_refused(monkeypatch):
    monkeypatch.setattr(fillers, "_SLOT_PAIRS", 5)
    ref = [Template(id="doc-9", slots={"who": [("a",), ("b",), ("c",)]})]
    pred = [Template(id="doc-9", slots={"who": [("x",), ("y",)]})]
    with pytest.raises(InputError, match=r"document 'doc-9', label 'who': .*3 answers and 2 predictions .*6 pairs"):
        iescore.score_templates(reference=ref, prediction=pred, rule="sim(0.5)")


# --- identities ------------------------------------------------------------------------------

@st.composite
def ao_cases(draw, n=12):
    def spans():
        out = []
        for _ in range(draw(st.integers(0, 5))):
            s = draw(st.integers(0, n - 1))
            out.append(Span(draw(st.sampled_from("AB")), s, draw(st.integers(s + 1, n))))
        return tuple(out)

    return Document(id="d", tokens=tuple("t" * n), spans=spans()), [list(spans())]


def counts(r):
    d = r.to_dict()
    return (r.overall.tp, r.overall.fp, r.overall.fn, d["slot_errors"],
            [it["status"] for it in r.items("prediction")], [it["status"] for it in r.items("reference")])


@settings(max_examples=60, deadline=None)
@given(ao_cases(), st.sampled_from(["any", "one-to-one"]), st.sampled_from(["match-all", "match-best"]))
def test_iou_1_is_exact_and_cover_1_is_contain_inf(case, counting, mode):
    ref, pred = case
    kw = dict(reference=[ref], prediction=pred, counting=counting, mode=mode)
    assert counts(iescore.score(rule="IoU(1)", **kw)) == counts(iescore.score(rule="E", **kw))
    assert counts(iescore.score(rule="cover(1)", **kw)) == counts(iescore.score(rule="C(inf)", **kw))


TOKENS = st.sampled_from(["Dr", "dr", "a", "b", "ab", "Al"])
FILLERS = st.lists(st.lists(TOKENS, min_size=1, max_size=3).map(tuple), max_size=4, unique=True)


@settings(max_examples=60, deadline=None)
@given(FILLERS, FILLERS, st.sampled_from(["any", "one-to-one"]))
def test_sim_1_is_exact_after_normalisation(a, p, counting):
    kw = dict(reference=[Template(id="d", slots={"s": a})], prediction=[Template(id="d", slots={"s": p})],
              counting=counting, normaliser="lower")
    assert counts(iescore.score_templates(rule="sim(1)", **kw)) == counts(iescore.score_templates(rule="E", **kw))


# --- the accepted pairs against brute force ----------------------------------------------------

SHARES = st.sampled_from(["0.1", "0.25", "0.3", "0.5", "0.6", "2/3", "0.75", "0.8", "1"]).map(
    lambda x: "0.6667" if x == "2/3" else x)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 9), st.integers(1, 6), st.sampled_from([0, 1])), max_size=6),
       st.lists(st.tuples(st.integers(0, 9), st.integers(1, 6), st.sampled_from([0, 1])), max_size=6),
       st.sampled_from(["IoU", "cover"]), SHARES)
def test_ao_pairs_equal_the_definition(ref, pred, kind, t):
    def units(xs):
        return Units(doc=np.zeros(len(xs), dtype=np.int64), label=np.array([x[2] for x in xs], dtype=np.int64),
                     start=np.array([x[0] for x in xs], dtype=np.int64),
                     end=np.array([x[0] + x[1] for x in xs], dtype=np.int64))

    rule = f"{kind}({t})"
    pairs = ao_pairs(units(ref), units(pred), Rule.parse(rule))
    got = {(int(r), int(p)) for r, p, ok in zip(pairs.r, pairs.p, pairs.ok) if ok}
    want = {(i, j) for i, a in enumerate(ref) for j, b in enumerate(pred)
            if a[2] == b[2] and share_ao(rule, (b[0], b[0] + b[1]), (a[0], a[0] + a[1]))}
    assert got == want


SEQ = st.lists(st.sampled_from(["a", "b", "ab", "c"]), min_size=1, max_size=5).map(tuple)


@settings(max_examples=300, deadline=None)
@given(SEQ, SEQ, st.sampled_from(["IoU", "cover", "sim"]), SHARES)
def test_sequence_rules_equal_the_definition(p, a, kind, t):
    rule = f"{kind}({t})"
    assert sequence_match(p, a, Rule.parse(rule))[0] == share_seq(rule, p, a)
    if kind == "sim" and t not in ("0.3", "0.6", "0.6667"):  # no float tie at these thresholds
        x, y = " ".join(p), " ".join(a)
        assert sequence_match(p, a, Rule.parse(rule))[0] == (Levenshtein.normalized_similarity(x, y) >= float(t))


def brute_counts(ref, pred, rule, counting):
    """TP, FP, FN of one OBD slot by the definition: any-match, or the largest matching
    over every assignment."""
    ok = [[share_seq(rule, p, a) for a in ref] for p in pred]
    if counting == "any":
        tp = sum(any(row) for row in ok)
        hit = sum(any(ok[j][i] for j in range(len(pred))) for i in range(len(ref)))
        return tp, len(pred) - tp, len(ref) - hit
    best = 0
    for k in range(min(len(ref), len(pred)), 0, -1):
        if any(all(ok[j][i] for j, i in zip(js, perm))
               for js in itertools.combinations(range(len(pred)), k)
               for perm in itertools.permutations(range(len(ref)), k)):
            best = k
            break
    return best, len(pred) - best, len(ref) - best


# "Dr" on most fillers gets a floor in its slot: pairs sharing only "Dr" must still be found
FLOOR_FILLERS = st.lists(
    st.tuples(st.booleans(), st.lists(st.sampled_from(["a", "b", "ab", "Dr"]), max_size=3)).map(
        lambda x: (("Dr",) if x[0] else ()) + tuple(x[1])).filter(bool),
    max_size=5, unique=True)


@settings(max_examples=200, deadline=None)
@given(FLOOR_FILLERS, FLOOR_FILLERS, st.sampled_from(["IoU", "cover", "sim"]), SHARES,
       st.sampled_from(["any", "one-to-one"]))
def test_obd_counts_equal_the_definition(ref, pred, kind, t, counting):
    rule = f"{kind}({t})"
    o = iescore.score_templates(reference=[Template(id="d", slots={"s": ref})],
                                prediction=[Template(id="d", slots={"s": pred})], rule=rule, counting=counting).overall
    assert (o.tp, o.fp, o.fn) == brute_counts(ref, pred, rule, counting)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 9), st.integers(1, 6)), min_size=1, max_size=4),
       st.lists(st.tuples(st.integers(0, 9), st.integers(1, 6)), min_size=1, max_size=4),
       st.sampled_from([25, 50, 75, 100]))
def test_cover_is_nervaluates_minimum_overlap(ref, pred, percent):
    """cover(t) accepts the pairs nervaluate's minimum overlap percentage accepts (its
    entities are inclusive; at these thresholds its float shares have no ties to round)."""
    strategies = pytest.importorskip("nervaluate.strategies")
    from nervaluate.entities import Entity

    def units(xs):
        return Units(doc=np.zeros(len(xs), dtype=np.int64), label=np.zeros(len(xs), dtype=np.int64),
                     start=np.array([s for s, _ in xs], dtype=np.int64), end=np.array([s + n for s, n in xs], dtype=np.int64))

    pairs = ao_pairs(units(ref), units(pred), Rule.parse(f"cover({percent / 100})"))
    got = {(int(r), int(p)) for r, p, ok in zip(pairs.r, pairs.p, pairs.ok) if ok}
    share = strategies.EvaluationStrategy._calculate_overlap_percentage
    want = {(i, j) for i, (a, k) in enumerate(ref) for j, (b, n) in enumerate(pred)
            if share(Entity("X", b, b + n - 1), Entity("X", a, a + k - 1)) >= percent}
    assert got == want


def test_config_refuses_sim_on_positions():
    """sim(t) compares strings: spans matched by position (AO, match-all) have none to compare."""
    with pytest.raises(ConfigError, match="compares strings"):
        Config(rule="sim(0.8)")
    Config(rule="sim(0.8)", mode="one-per-string")
    Config(rule="sim(0.8)", setting="OBD")
