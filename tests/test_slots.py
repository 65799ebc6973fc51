"""OBD fillers without the pairs that weigh nothing (iescore.match.fillers.obd_pairs' candidates
and iescore.match.slots' alignment of complete slots) against the plain reference: every
same-document, same-slot pair compared token by token and the alignment solved over all of
them by iescore.match.assign.match (itself checked against the brute force in
tests/test_assign.py). Counts and statuses must agree exactly; the alignments, which may
differ among equally good ones, must weigh the same (correct pairs, aligned pairs, shared
tokens), be the brute force's best on small slots, and not depend on the order of the
fillers (Concepts: counting, ties)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import iescore.scoring.part as part
from iescore import Template, score_templates
from iescore.config import Rule
from iescore.errors import InputError
from iescore.match import fillers
from iescore.match.count import count
from iescore.match.fillers import obd_pairs
from iescore.match.rules import Pairs, sequence_match
from iescore.match.units import _I64, Units, cell_index


def reference_obd_pairs(R: Units, P: Units, rule: Rule, names: object = None) -> Pairs:
    """Every same-document, same-slot pair, all attributes computed plainly; no shift, so
    counting aligns over all of them (the path before candidates)."""
    assert R.key is not None and P.key is not None
    rows = []
    for i in range(len(R)):
        for j in range(len(P)):
            if R.doc[i] == P.doc[j] and R.label[i] == P.label[j]:
                a, b = R.key[i], P.key[j]
                ok, err = sequence_match(b, a, rule)
                rows.append((i, j, ok, a == b, err, sum((Counter(a) & Counter(b)).values())))
    if not rows:
        return Pairs.empty()
    r, p, ok, ex, err, close = (np.array(c) for c in zip(*rows))
    return Pairs(r.astype(_I64), p.astype(_I64), np.ones(len(r), dtype=bool), ok.astype(bool),
                 ex.astype(bool), err.astype(_I64), close.astype(_I64), fit=ok.astype(bool))


def _outcome(ref, pred, **opts):
    """The report's counts, and each side's statuses (not the error categories, which
    follow the alignment chosen among equally good ones)."""
    r = score_templates(reference=ref, prediction=pred, **opts)
    d = r.to_dict()
    d.pop("categories", None)
    d.pop("semeval", None)  # read from the categories
    return d, {side: [i["status"] for i in r.items(side)] for side in ("reference", "prediction")}


def _compare(ref, pred, **opts):
    """The outcome against the reference's (counts and statuses)."""
    got = _outcome(ref, pred, **opts)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(part, "obd_pairs", reference_obd_pairs)
        want = _outcome(ref, pred, **opts)
    assert got == want
    return got


TOKENS = ("Dr", "a", "b", "c", "d")


@st.composite
def templates(draw):
    """One or two documents, slots s and t, up to 6 fillers a side from a small vocabulary
    (many shared tokens, dense slots), often a token on every filler of one side or both
    ("Dr", once or twice: a floor), sometimes on most; repeated fillers included."""
    sides = []
    for _ in range(2):
        common = draw(st.sampled_from(["", "Dr ", "Dr Dr "]))
        filler = st.tuples(st.lists(st.sampled_from(TOKENS), min_size=0 if common else 1, max_size=3),
                           st.integers(0, 4)).map(lambda t: (common if t[1] else "") + " ".join(t[0]))
        docs = []
        for d in range(draw(st.integers(1, 2))):
            slots_ = {s: tuple(f for f in draw(st.lists(filler, max_size=6)) if f) for s in ("s", "t")}
            docs.append(Template(f"d{d}", slots_))
        sides.append(docs)
    n = min(len(sides[0]), len(sides[1]))
    return sides[0][:n], sides[1][:n]


@settings(max_examples=400, deadline=None)
@given(templates(), st.sampled_from(["E", "C(1)", "O(1,1)", "O(0,2)", "O(inf,inf)"]),
       st.sampled_from(["any", "one-to-one"]))
def test_candidates_and_slot_alignment_match_the_reference(case, rule, counting):
    _compare(*case, rule=rule, counting=counting)


@settings(max_examples=100, deadline=None)
@given(templates(), st.sampled_from(["E", "O(1,1)"]))
def test_match_best_matches_the_reference(case, rule):
    ref, pred = case
    r = score_templates(reference=ref, prediction=pred, rule=rule, mode="match-best").to_dict()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(part, "obd_pairs", reference_obd_pairs)
        assert score_templates(reference=ref, prediction=pred, rule=rule, mode="match-best").to_dict() == r


@settings(max_examples=150, deadline=None)
@given(templates(), st.sampled_from(["E", "O(1,1)", "O(inf,inf)"]), st.randoms(use_true_random=False))
def test_shuffled_fillers_keep_every_status_and_partner(case, rule, rnd):
    """The fillers of every slot given in another order: each filler (by its text and its
    place among equal ones) keeps its status, its error category and its partner's text."""
    def run(ref, pred):
        r = score_templates(reference=ref, prediction=pred, rule=rule)
        out = {}
        for side in ("reference", "prediction"):
            seen: Counter = Counter()
            for i in r.items(side):
                key = (i["doc"], i["label"], i["text"])
                seen[key] += 1
                partner = None if i["partner"] is None else i["partner"]["text"]
                out[(side, *key, seen[key])] = (i["status"], i["category"], partner)
        return r.to_dict(), out

    def shuffled(docs):
        return [Template(t.id, {s: tuple(rnd.sample(f, len(f))) for s, f in t.slots.items()}) for t in docs]

    ref, pred = case
    assert run(shuffled(ref), shuffled(pred)) == run(ref, pred)


def brute_best(u, v, levels):
    """Every one-to-one subset of the edges: the best level totals, first level first."""
    best = None
    for mask in range(1 << len(u)):
        sel = [k for k in range(len(u)) if mask >> k & 1]
        if len({u[k] for k in sel}) < len(sel) or len({v[k] for k in sel}) < len(sel):
            continue
        key = tuple(sum(lv[k] for k in sel) for lv in levels)
        best = key if best is None or key > best else best
    return best


@st.composite
def units(draw):
    """Both sides' units for the engine directly: empty fillers and repeated fillers in one
    slot (which templates never hand over), two documents and two slots."""
    sides = []
    for _ in range(2):
        common = draw(st.sampled_from([(), ("Dr",)]))
        filler = st.lists(st.sampled_from(TOKENS), max_size=3).map(lambda t: common + tuple(t))
        rows = draw(st.lists(st.tuples(st.integers(0, 1), st.integers(0, 1), filler), max_size=8))
        sides.append(Units(np.array([r[0] for r in rows], dtype=_I64), np.array([r[1] for r in rows], dtype=_I64),
                           key=[r[2] for r in rows]))
    return sides


@settings(max_examples=300, deadline=None)
@given(units(), st.sampled_from(["E", "C(1)", "O(1,1)", "O(inf,inf)"]), st.sampled_from(["any", "one-to-one"]))
def test_engine_with_empty_and_repeated_fillers_matches_the_reference(sides, rule, counting):
    """Cells and statuses equal the reference's, and the alignment weighs as much as the
    reference's (correct pairs, aligned pairs, shared tokens), which on small slots is the
    brute force's best."""
    rl = Rule.parse(rule)
    ix, R, P = cell_index(sides[0], sides[1], n_docs=2, n_labels=2)
    got = count(R, P, obd_pairs(R, P, rl), cells=ix, n_labels=2, counting=counting)
    allp = reference_obd_pairs(R, P, rl)
    want = count(R, P, allp, cells=ix, n_labels=2, counting=counting)
    assert np.array_equal(got.cells, want.cells)
    assert np.array_equal(got.ref_status, want.ref_status) and np.array_equal(got.pred_status, want.pred_status)
    assert R.key is not None and P.key is not None

    def totals(res):
        r, p = res.aligned_r.tolist(), res.aligned_p.tolist()
        assert len(set(r)) == len(r) and len(set(p)) == len(p)
        assert all(R.doc[i] == P.doc[j] and R.label[i] == P.label[j] for i, j in zip(r, p))
        shared = sum(sum((Counter(R.key[i]) & Counter(P.key[j])).values()) for i, j in zip(r, p))
        return int(res.aligned_correct.sum()), len(r), shared

    assert totals(got) == totals(want)
    if 0 < len(allp.r) <= 9:  # small slots: the brute force over every one-to-one subset of all pairs
        levels = [allp.ok.astype(int).tolist(), [1] * len(allp.r), allp.close.tolist()]
        assert brute_best(allp.r.tolist(), allp.p.tolist(), levels) == totals(got)


@st.composite
def any_floors(draw):
    """A function drawing any floors for a slot: a subset of its tokens, each with a count
    of 1 to 3 (the weights, gains and stand-ins must give the same alignment whatever the
    floors: README, Definitions: slot errors; iescore.match.fillers)."""
    data = draw(st.data())

    def floors(n_r, n_p, hold_r, hold_p):
        tokens = sorted(frozenset(hold_r[0]) | frozenset(hold_p[0]))
        chosen = data.draw(st.lists(st.sampled_from(tokens), unique=True)) if tokens else []
        return Counter({t: data.draw(st.integers(1, 3)) for t in chosen})

    return floors


@settings(max_examples=300, deadline=None)
@given(templates(), any_floors(), st.sampled_from(["E", "C(1)", "O(1,1)", "O(inf,inf)"]),
       st.sampled_from(["any", "one-to-one"]))
def test_any_floors_give_the_reference_counts(case, floors, rule, counting):
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(fillers, "_floors", floors)
        _compare(*case, rule=rule, counting=counting)


def _pairs_spy(monkeypatch):
    """The number of pairs obd_pairs lists, per call."""
    sizes = []
    real = part.obd_pairs

    def spy(*a, **kw):
        out = real(*a, **kw)
        sizes.append(len(out.r))
        return out

    monkeypatch.setattr(part, "obd_pairs", spy)
    return sizes


def test_a_token_on_every_filler_but_one_answer_is_a_floor(monkeypatch):
    """50 answers "Dr s<k> x<k>" but the last, "Prof s49 x49", and 50 predictions: "Dr s<k>
    x<k>" for even k, "Dr s<k>" for odd k. "Dr" (on 49 of 50 answers, all predictions) gets
    the floor 1: only "Prof s49 x49" lacks it, and no prediction, so no pair of fillers short
    of it; its holders would give 49 x 50 pairs. What is left: answer k and prediction k
    share "s<k>", nothing else is shared beyond the floor: 50 candidate pairs, not 2,450.
    Every answer aligns with its own prediction: the 25 even ones are correct (exact rule),
    C = 25, S = 25."""
    sizes = _pairs_spy(monkeypatch)
    ref = tuple(f"Dr s{k:02d} x{k:02d}" for k in range(49)) + ("Prof s49 x49",)
    pred = tuple(f"Dr s{k:02d} x{k:02d}" if k % 2 == 0 else f"Dr s{k:02d}" for k in range(50))
    r = score_templates(reference=[Template("t", {"s": ref})], prediction=[Template("t", {"s": pred})])
    se = r.to_dict()["slot_errors"]
    assert (se["C"], se["S"], se["D"], se["I"]) == (25, 25, 0, 0)
    assert sizes == [50]
    assert [i["partner"]["index"] for i in r.items("reference")] == list(range(50))
    monkeypatch.undo()
    _compare([Template("t", {"s": ref})], [Template("t", {"s": pred})])


@pytest.mark.parametrize("larger", ["reference", "prediction"])
def test_a_filler_short_of_the_floor_is_left_unaligned_by_its_stand_in(larger):
    """Three fillers "Ann", "Dr a", "Dr b" on one side, one "Dr x" on the other, exact rule.
    "Dr" (on 2 of 3, and on the 1) gets the floor 1 (cost: no pair short of it on both
    sides, and 1 pair of "Ann" with the one stand-in, against 2 x 1 pairs of its holders).
    No pair weighs anything beyond the floor; "Ann" lacks it, so it gains 1 when left
    unaligned (its stand-in). By hand, over all pairs: "Dr x" shares "Dr" with "Dr a" and
    "Dr b" (1 token), nothing with "Ann": S = 1, "Ann" and one of the others unaligned.
    Without the stand-in, "Ann" could take "Dr x"."""
    three, one = ("Ann", "Dr a", "Dr b"), ("Dr x",)
    ref, pred = (three, one) if larger == "reference" else (one, three)
    r = score_templates(reference=[Template("t", {"s": ref})], prediction=[Template("t", {"s": pred})])
    se = r.to_dict()["slot_errors"]
    assert (se["C"], se["S"], se["D"], se["I"]) == ((0, 1, 2, 0) if larger == "reference" else (0, 1, 0, 2))
    partners = [None if i["partner"] is None else i["partner"]["index"] for i in r.items(larger)]
    assert partners[0] is None and sorted(partners[1:], key=str) == [0, None]


@pytest.mark.parametrize("larger", ["reference", "prediction"])
def test_fillers_tied_for_one_stand_in(monkeypatch, larger):
    """Answers "Ann", "Bob", "Dr a", predictions "Dr x", "Dr y" (and the other way round),
    exact rule, "Dr" given the floor 1. "Ann" and "Bob" lack it: both gain 1 when
    unaligned, but only one is left unaligned, so one stand-in, and "Ann" and "Bob" tie for
    it. By hand, over all pairs: the best alignments pair both fillers of the smaller side,
    "Dr a" with one of them (1 shared token) and "Ann" or "Bob" with the other: S = 2, and
    "Ann" or "Bob" unaligned."""
    monkeypatch.setattr(fillers, "_floors", lambda *a: Counter({"Dr": 1}))
    three, two = ("Ann", "Bob", "Dr a"), ("Dr x", "Dr y")
    ref, pred = (three, two) if larger == "reference" else (two, three)
    r = score_templates(reference=[Template("t", {"s": ref})], prediction=[Template("t", {"s": pred})])
    se = r.to_dict()["slot_errors"]
    assert (se["C"], se["S"], se["D"], se["I"]) == ((0, 2, 1, 0) if larger == "reference" else (0, 2, 0, 1))
    partners = [None if i["partner"] is None else i["partner"]["index"] for i in r.items(larger)]
    assert partners[2] is not None and partners[:2].count(None) == 1


def test_a_slot_of_too_many_pairs_is_refused(monkeypatch):
    """"the" on 30 of 60 answers and 30 of 60 predictions of one slot (half a side: no
    floor) makes 900 candidate pairs; with the limit at 800 the slot is refused, naming the
    document, the label and the pairs; at 900 it is scored."""
    ref = tuple(f"the r{k}" for k in range(30)) + tuple(f"r{k}" for k in range(30, 60))
    pred = tuple(f"the p{k}" for k in range(30)) + tuple(f"p{k}" for k in range(30, 60))
    case = ([Template("doc-7", {"names": ref})], [Template("doc-7", {"names": pred})])
    monkeypatch.setattr(fillers, "_SLOT_PAIRS", 800)
    with pytest.raises(InputError, match=r"document 'doc-7', label 'names': .* 60 answers and 60 predictions makes 900 "
                                         r"candidate pairs .* more than the 800"):
        score_templates(reference=case[0], prediction=case[1])
    R = Units(np.zeros(60, dtype=_I64), np.zeros(60, dtype=_I64), key=[tuple(f.split()) for f in ref])
    P = Units(np.zeros(60, dtype=_I64), np.zeros(60, dtype=_I64), key=[tuple(f.split()) for f in pred])
    with pytest.raises(InputError, match=r"document 'doc-7', label 'names': .* makes 900 candidate pairs"):
        obd_pairs(R, P, Rule.parse("E"), names=(["doc-7"], ["names"]))
    monkeypatch.setattr(fillers, "_SLOT_PAIRS", 900)
    se = score_templates(reference=case[0], prediction=case[1]).to_dict()["slot_errors"]
    assert (se["C"], se["S"], se["D"], se["I"]) == (0, 60, 0, 0)


def test_stand_in_pairs_count_toward_the_limit(monkeypatch):
    """40 answers without the floor token among 100 holding it, and 50 predictions all
    holding it: the floor 1, so 40 answers with a gain, 50 of excess, and 40 x 40 stand-in
    pairs; with the limit at 1,000 the slot is refused."""
    ref = tuple(f"r{k}" for k in range(40)) + tuple(f"Dr r{k}" for k in range(40, 140))
    pred = tuple(f"Dr p{k}" for k in range(50))
    monkeypatch.setattr(fillers, "_SLOT_PAIRS", 1000)
    with pytest.raises(InputError, match=r"makes 1,600 candidate pairs"):
        score_templates(reference=[Template("t", {"s": ref})], prediction=[Template("t", {"s": pred})])
