"""OBD fillers without the pairs that weigh nothing (iescore.match.fillers.obd_pairs' candidates
and iescore.match.slots' alignment of complete slots) against the plain reference: every
same-document, same-slot pair compared token by token and the alignment solved over all of
them by iescore.match.assign.match (itself checked against the brute force in
tests/test_assign.py). Counts, statuses, error categories and aligned partners must agree
exactly, ties included (README, Definitions: ties)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import iescore.scoring.part as part
from iescore import Template, score_templates
from iescore.config import Rule
from iescore.match import slots
from iescore.match.fillers import obd_pairs
from iescore.match.rules import Pairs, sequence_match
from iescore.match.units import _I64, Units


def reference_obd_pairs(R: Units, P: Units, rule: Rule) -> Pairs:
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
                 ex.astype(bool), err.astype(_I64), close.astype(_I64))


def _outcome(ref, pred, **opts):
    r = score_templates(reference=ref, prediction=pred, **opts)
    items = {side: [(i["status"], i["category"], None if i["partner"] is None else i["partner"]["index"])
                    for i in r.items(side)] for side in ("reference", "prediction")}
    return r.to_dict(), items, r.confusion_table()


def _compare(ref, pred, sparse=False, **opts):
    """The outcome against the reference's; with ``sparse``, every slot through the
    positive pairs' matching however dense, and its tied slots both as they go (over a
    band, or by iescore.match.blocks where the band would span the slot) and all over a
    band. Either way, also with every slot's stand-in pairs as blocks."""
    def run(**patch):
        with pytest.MonkeyPatch.context() as mp:
            if sparse:
                mp.setattr(slots, "_FULL_SHARE", float("inf"))
            for name, value in patch.items():
                mp.setattr(slots, name, value)
            return _outcome(ref, pred, **opts)

    got = run()
    if sparse:
        assert run(_wide=lambda *a: np.zeros(0, dtype=_I64)) == got
    assert run(_STAND_IN_LISTED=0) == got
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
       st.sampled_from(["any", "one-to-one"]), st.booleans())
def test_candidates_and_slot_alignment_match_the_reference(case, rule, counting, sparse):
    _compare(*case, rule=rule, counting=counting, sparse=sparse)


@settings(max_examples=100, deadline=None)
@given(templates(), st.sampled_from(["E", "O(1,1)"]))
def test_match_best_matches_the_reference(case, rule):
    ref, pred = case
    r = score_templates(reference=ref, prediction=pred, rule=rule, mode="match-best").to_dict()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(part, "obd_pairs", reference_obd_pairs)
        assert score_templates(reference=ref, prediction=pred, rule=rule, mode="match-best").to_dict() == r


def _spy(monkeypatch):
    """Per tied solve: the pairs written out over a band, or ("blocks", answers,
    predictions) for one by iescore.match.blocks (stand-ins counted)."""
    calls = []
    real, real_blocks = slots._banded, slots._block_slots

    def spy(*a):
        out = real(*a)
        calls.append(len(out[0]))
        return out

    def spy_blocks(sr, sp, in_r, in_p, *a):
        calls.append(("blocks", int(in_r.sum()), int(in_p.sum())))
        return real_blocks(sr, sp, in_r, in_p, *a)

    monkeypatch.setattr(slots, "_banded", spy)
    monkeypatch.setattr(slots, "_block_slots", spy_blocks)
    return calls


def test_free_fillers_pair_in_position_order(monkeypatch):
    """Answers "Dr a", "Dr b", "Dr c", predictions "Dr c", "Dr x", "Dr y": every filler holds
    "Dr" (a floor of 1); "Dr c" pairs with "Dr c" (correct, the only positive pair). The others
    share only "Dr": the free answers "Dr a", "Dr b" take the free predictions in position
    order (filler positions are (document, slot, token sequence)): "Dr x", then "Dr y".
    C = 1, S = 2; nothing is materialised beyond the positive pair."""
    calls = _spy(monkeypatch)
    d, items, _ = _compare([Template("t", {"s": ("Dr b", "Dr c", "Dr a")})],
                           [Template("t", {"s": ("Dr y", "Dr c", "Dr x")})])
    se = d["slot_errors"]
    assert (se["C"], se["S"], se["D"], se["I"]) == (1, 2, 0, 0)
    assert calls == []


def test_a_tie_in_a_component_falls_back_to_all_pairs(monkeypatch):
    """Answers "a c", "a b", "d" and predictions "x", "a", exact rule. "a", on 2 of 3 answers
    and 1 of 2 predictions, gets no floor: one would leave 1 x 1 pairs of fillers short of
    it and 1 pair of "d" with the one stand-in (one answer is left unaligned), no fewer than
    the 2 x 1 pairs of its holders. "a" shares one token with "a b" and with "a c", so the
    positive pairs have two best matchings (a tie). Over all 6 pairs the tie rule scans ("a b", "a") first
    (answers in position order "a b" < "a c" < "d", predictions "a" < "x"): kept; then
    ("a c", "x"); "d" is left. S = 2, D = 1. An alignment holds at most one positive pair
    (one prediction has any), so places (answer, prediction) at most 1 apart: a band of 3
    as wide as the slot's 3 answers, so all its pairs, as blocks (iescore.match.blocks:
    3 answers, 2 predictions); with the blocks turned off, all its 6 pairs written out."""
    calls = _spy(monkeypatch)
    d, items, _ = _compare([Template("t", {"s": ("a c", "a b", "d")})], [Template("t", {"s": ("x", "a")})],
                           sparse=True)
    assert [x[2] for x in items["reference"]] == [0, 1, None]  # "a c" with "x", "a b" with "a"
    se = d["slot_errors"]
    assert (se["C"], se["S"], se["D"], se["I"]) == (0, 2, 1, 0)
    assert calls[:2] == [("blocks", 3, 2), 6]  # the second: _compare's run over a band


def test_a_tie_materialises_only_the_fillers_outside_single_optimum_components(monkeypatch):
    """Answers "a b", "a c", "d e" and predictions "a", "d e", "x", exact rule (no floor: one
    for "a" would leave 1 x 2 pairs short of it, no fewer than its holders' 2 x 1).
    "d e" - "d e" is a component of its own (one best matching: correct); "a" shares a token
    with "a b" and "a c" (a tie). "d e" - "d e" is in every best alignment, so only "a b",
    "a c" x "a", "x" are solved over all their pairs (as blocks: 2 answers, 2 predictions;
    over a band, 4 pairs): the tie rule keeps ("a b", "a") (earliest answer, earliest
    prediction), then ("a c", "x"). C = 1, S = 2."""
    calls = _spy(monkeypatch)
    d, items, _ = _compare([Template("t", {"s": ("d e", "a c", "a b")})],
                           [Template("t", {"s": ("x", "d e", "a")})], sparse=True)
    assert [x[2] for x in items["reference"]] == [1, 0, 2]  # "d e"-"d e", "a c"-"x", "a b"-"a"
    se = d["slot_errors"]
    assert (se["C"], se["S"], se["D"], se["I"]) == (1, 2, 0, 0)
    assert calls[:2] == [("blocks", 2, 2), 4]  # the second: _compare's run over a band


def brute_lexmax(u, v, levels, rank_u, rank_v):
    """Every one-to-one subset of the edges; the best level totals (first level first),
    then the largest 0/1 vector over the edges in (answer rank, prediction rank) order
    (README, Definitions: ties), as in tests/test_assign.py."""
    order = sorted(range(len(u)), key=lambda k: (rank_u[u[k]], rank_v[v[k]]))
    best, best_key = set(), None
    for mask in range(1 << len(u)):
        sel = [k for k in range(len(u)) if mask >> k & 1]
        if len({u[k] for k in sel}) < len(sel) or len({v[k] for k in sel}) < len(sel):
            continue
        key = (tuple(sum(lv[k] for k in sel) for lv in levels), tuple(int(k in sel) for k in order))
        if best_key is None or key > best_key:
            best, best_key = set(sel), key
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
@given(units(), st.sampled_from(["E", "C(1)", "O(1,1)", "O(inf,inf)"]), st.sampled_from(["any", "one-to-one"]),
       st.sampled_from([0.5, float("inf")]))
def test_engine_with_empty_and_repeated_fillers_matches_the_reference(sides, rule, counting, share):
    from iescore.match import cell_index
    from iescore.match.count import count
    from iescore.match.units import _Ranks

    rl = Rule.parse(rule)
    ix, R, P = cell_index(sides[0], sides[1], n_docs=2, n_labels=2)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(slots, "_FULL_SHARE", share)
        got = count(R, P, obd_pairs(R, P, rl), cells=ix, n_labels=2, counting=counting)
    allp = reference_obd_pairs(R, P, rl)
    want = count(R, P, allp, cells=ix, n_labels=2, counting=counting)
    assert np.array_equal(got.cells, want.cells)
    assert np.array_equal(got.ref_status, want.ref_status) and np.array_equal(got.pred_status, want.pred_status)

    def aligned(res):
        return sorted(zip(res.aligned_r.tolist(), res.aligned_p.tolist(), res.aligned_correct.tolist()))

    def table(res):
        c = res.confusion
        return sorted(zip(c.ref.tolist(), c.pred.tolist(), c.count.tolist()))

    assert aligned(got) == aligned(want)
    assert table(got) == table(want)
    # small slots: also the brute force over every one-to-one subset of all pairs
    if 0 < len(allp.r) <= 9:
        levels = [allp.ok.astype(int).tolist(), [1] * len(allp.r), allp.close.tolist()]
        best = brute_lexmax(allp.r.tolist(), allp.p.tolist(), levels, _Ranks(R)().tolist(), _Ranks(P)().tolist())
        assert sorted((int(allp.r[k]), int(allp.p[k])) for k in best) == [x[:2] for x in aligned(got)]


@st.composite
def tied_slots(draw):
    """One slot: a few fillers sharing tokens (ties likely) among many that share only the
    token every filler holds, in shuffled positions: the band of weightless pairs is much
    narrower than the slot."""
    def side(n_tied, n_plain, prefix):
        tied = [" ".join(draw(st.lists(st.sampled_from("abc"), min_size=1, max_size=2))) for _ in range(n_tied)]
        plain = [f"{prefix}{k}" for k in range(n_plain)]
        fillers = [f"Dr {f}" for f in tied + plain]
        return tuple(draw(st.permutations(fillers)))

    ref = side(draw(st.integers(1, 3)), draw(st.integers(0, 9)), "z")
    pred = side(draw(st.integers(1, 3)), draw(st.integers(0, 9)), "y")
    return [Template("t", {"s": ref})], [Template("t", {"s": pred})]


@settings(max_examples=300, deadline=None)
@given(tied_slots(), st.sampled_from(["E", "O(1,1)"]), st.sampled_from(["any", "one-to-one"]))
def test_tied_slots_through_the_band_match_the_reference(case, rule, counting):
    """Slots of up to 12 fillers a side with ties among a few: the alignment over the band
    of weightless pairs equals the one over all pairs (the reference)."""
    _compare(*case, rule=rule, counting=counting, sparse=True)


def test_a_tie_among_many_fillers_solves_over_a_band(monkeypatch):
    """Answers "Dr q r1", "Dr q r2" and predictions "Dr q s1", "Dr q s2" (a tie on "q"),
    and 48 answers "Dr z.." against 48 predictions "Dr y.." sharing only "Dr" (on every
    filler): exact, no pair is correct; every answer aligns: S = 50. At most two positive
    pairs, so the weightless pairs of places at most 2 apart: 5 per answer inside, fewer at
    the two ends (50 * 5 - 2 * (2 + 1) = 244), not the 2,500 of the slot."""
    calls = _spy(monkeypatch)
    ref = ("Dr q r1", "Dr q r2") + tuple(f"Dr z{k:02d}" for k in range(48))
    pred = ("Dr q s1", "Dr q s2") + tuple(f"Dr y{k:02d}" for k in range(48))
    d, _, _ = _compare([Template("t", {"s": ref})], [Template("t", {"s": pred})])
    se = d["slot_errors"]
    assert (se["C"], se["S"], se["D"], se["I"]) == (0, 50, 0, 0)
    assert calls == [244, 244]  # and in _compare's run with the stand-ins as blocks (none here)


def test_the_band_stays_within_its_slot():
    """Two slots of one document with ties in both (found by the property test above): the
    band's pairs are looked up by (slot, place + offset), and an offset past the end of slot
    s must not land on a place of slot t. Against the all-pairs reference."""
    ref = [Template("d0", {"s": ("Dr", "Dr Dr", "Dr Dr Dr", "Dr a"), "t": ("Dr", "a")})]
    pred = [Template("d0", {"s": ("Dr", "Dr Dr", "Dr Dr Dr"), "t": ("Dr", "Dr Dr", "a")})]
    d, items, _ = _compare(ref, pred, rule="O(1,1)", counting="any", sparse=True)
    assert d["confusion"]["s"].get("t") is None  # no answer of s aligned with a prediction of t


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
       st.sampled_from(["any", "one-to-one"]), st.booleans())
def test_any_floors_give_the_reference_alignment(case, floors, rule, counting, sparse):
    from iescore.match import fillers

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(fillers, "_floors", floors)
        _compare(*case, rule=rule, counting=counting, sparse=sparse)


def _pairs_spy(monkeypatch, blocks=None):
    """The number of pairs obd_pairs lists, per call; with a list ``blocks``, its blocks'
    (answers, predictions, weight) too."""
    sizes = []
    real = part.obd_pairs

    def spy(*a):
        out = real(*a)
        sizes.append(len(out.r))
        if blocks is not None:
            blocks.append([(a.tolist(), b.tolist(), w) for a, b, w in out.blocks])
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
    "Dr b" (1 token), nothing with "Ann"; the tie rule takes "Dr a" (positions "Ann" <
    "Dr a" < "Dr b"). S = 1 and two of the three unaligned. Without the stand-in, "Ann",
    first in position order, would take "Dr x"."""
    three, one = ("Ann", "Dr a", "Dr b"), ("Dr x",)
    ref, pred = (three, one) if larger == "reference" else (one, three)
    d, items, _ = _compare([Template("t", {"s": ref})], [Template("t", {"s": pred})])
    se = d["slot_errors"]
    assert (se["C"], se["S"], se["D"], se["I"]) == ((0, 1, 2, 0) if larger == "reference" else (0, 1, 0, 2))
    assert [x[2] for x in items[larger]] == [None, 0, None]


@pytest.mark.parametrize("larger", ["reference", "prediction"])
@pytest.mark.parametrize("sparse", [False, True])
def test_fillers_tied_for_one_stand_in(monkeypatch, sparse, larger):
    """Answers "Ann", "Bob", "Dr a", predictions "Dr x", "Dr y" (and the other way round),
    exact rule, "Dr" given the floor 1 (by hand: its cost would be 2, as its holders' 1 x 2,
    so it gets none unless forced). "Ann" and "Bob" lack it: both gain 1 when unaligned, but
    only one is left unaligned, so one stand-in, and "Ann" and "Bob" tie for it. By hand,
    over all pairs: the best alignments pair both fillers of the smaller side, "Dr a" with
    one of them (1 shared token) and "Ann" or "Bob" with the other; the tie rule scans
    ("Ann", "Dr x") first (positions "Ann" < "Bob" < "Dr a", "Dr x" < "Dr y"): kept, then
    ("Dr a", "Dr y"). S = 2, and "Bob" unaligned."""
    from iescore.match import fillers

    monkeypatch.setattr(fillers, "_floors", lambda *a: Counter({"Dr": 1}))
    three, two = ("Ann", "Bob", "Dr a"), ("Dr x", "Dr y")
    ref, pred = (three, two) if larger == "reference" else (two, three)
    d, items, _ = _compare([Template("t", {"s": ref})], [Template("t", {"s": pred})], sparse=sparse)
    se = d["slot_errors"]
    assert (se["C"], se["S"], se["D"], se["I"]) == ((0, 2, 1, 0) if larger == "reference" else (0, 2, 0, 1))
    assert [x[2] for x in items[larger]] == [0, None, 1]


@pytest.mark.parametrize("larger", ["reference", "prediction"])
def test_stand_ins_exchanged_among_themselves_are_no_tie(monkeypatch, larger):
    """Answers "Ann", "Bob", "Dr a", "Dr b", one prediction "Dr a" (and the other way
    round), exact rule, "Dr" given the floor 1: "Ann" and "Bob" lack it (gain 1 each when
    unaligned), three are left unaligned, so two stand-ins, each paired with both. The best
    matching of the positive pairs takes "Dr a" - "Dr a" (correct) and gives "Ann" and "Bob"
    a stand-in each, in two ways that differ only in which stand-in: no tie, so nothing is solved over a band. By
    hand, over all pairs: C = 1, D = 3 (I = 3 the other way round)."""
    from iescore.match import fillers

    monkeypatch.setattr(fillers, "_floors", lambda *a: Counter({"Dr": 1}))
    calls = _spy(monkeypatch)
    four, one = ("Ann", "Bob", "Dr a", "Dr b"), ("Dr a",)
    ref, pred = (four, one) if larger == "reference" else (one, four)
    d, items, _ = _compare([Template("t", {"s": ref})], [Template("t", {"s": pred})], sparse=True)
    se = d["slot_errors"]
    assert (se["C"], se["S"], se["D"], se["I"]) == ((1, 0, 3, 0) if larger == "reference" else (1, 0, 0, 3))
    assert [x[2] for x in items[larger]] == [None, None, 0, None]
    # only _compare's run with the stand-in pairs as blocks solves a tied slot: "Ann", "Bob"
    # and "Dr b" with the two stand-ins ("Dr a" - "Dr a" stays a component of its own)
    assert calls == [("blocks", 3, 2) if larger == "reference" else ("blocks", 2, 3)]


@st.composite
def any_hubs(draw):
    """A function drawing any hub tokens for a slot (iescore.match.hubs): a subset of the
    tokens its fillers hold beyond their floors, and one of the floors they lack. Whatever
    they are, the certificate keeps a slot's hub pairs out only when no best alignment
    uses one, so the alignment must be the reference's."""
    from itertools import chain

    data = draw(st.data())

    def hubs(bd_r, bd_p, *limits_and_holders):
        out = []
        for part in (0, 1):
            tokens = sorted(frozenset(chain.from_iterable(x[part] for x in bd_r + bd_p)))
            out.append(frozenset(data.draw(st.lists(st.sampled_from(tokens), unique=True)) if tokens else ()))
        return out[0], out[1]

    return hubs


@settings(max_examples=400, deadline=None)
@given(templates(), any_hubs(), st.one_of(st.none(), any_floors()),
       st.sampled_from(["E", "C(1)", "O(1,1)", "O(0,2)", "O(inf,inf)"]), st.sampled_from(["any", "one-to-one"]),
       st.booleans())
def test_any_hub_tokens_give_the_reference_alignment(case, hubs, floors, rule, counting, sparse):
    from iescore.match import fillers

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(fillers, "_hubs", hubs)
        if floors is not None:
            mp.setattr(fillers, "_floors", floors)
        _compare(*case, rule=rule, counting=counting, sparse=sparse)


@st.composite
def hub_slots(draw, twice=True):
    """One document, one slot of 1 to 6 fillers a side (8 with ``twice=False``): "the" or
    not, then 1 or 2 of four other tokens (sometimes repeated, sometimes "the" twice unless
    ``twice`` is False), so that pairs sharing "the" and pairs sharing another token tie
    often."""
    filler = st.tuples(st.sampled_from(["", "the ", "the the "] if twice else ["", "the "]),
                       st.lists(st.sampled_from(["p", "q", "r", "s"]), min_size=1, max_size=2)).map(
        lambda t: t[0] + " ".join(t[1]))
    ref, pred = (tuple(draw(st.lists(filler, min_size=1, max_size=6 if twice else 8))) for _ in range(2))
    return [Template("d", {"s": ref})], [Template("d", {"s": pred})]


@settings(max_examples=600, deadline=None)
@given(hub_slots(), st.sampled_from(["E", "C(1)", "O(1,1)"]), st.sampled_from(["any", "one-to-one"]))
def test_the_hub_token_gives_the_reference_alignment(case, rule, counting):
    from iescore.match import fillers

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(fillers, "_hubs", lambda *a: (frozenset(["the"]), frozenset()))
        _compare(*case, rule=rule, counting=counting)


@settings(max_examples=500, deadline=None)
@given(hub_slots(twice=False), st.sampled_from(["E", "C(1)", "O(1,1)"]), st.sampled_from(["any", "one-to-one"]))
def test_the_tight_hub_pairs_give_the_reference_alignment(case, rule, counting):
    """"the" once on its holders: a slot whose certificate fails keeps only the hub pairs
    an optimal dual leaves tight (iescore.match.hubs.tight_holders)."""
    from iescore.match import fillers

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(fillers, "_hubs", lambda *a: (frozenset(["the"]), frozenset()))
        _compare(*case, rule=rule, counting=counting)


def test_a_hub_pair_in_a_tie_is_found(monkeypatch):
    """Answers "the p", "q r", predictions "the r", "p q", "the" a hub, exact rule. By hand,
    over all pairs: "the p" - "p q" with "q r" - "the r" share 1 + 1 tokens, and so do
    "q r" - "p q" with "the p" - "the r" (a hub pair): a tie. Fillers rank by their tokens
    (README, Definitions: ties), "q r" before "the p" and "p q" before "the r", so the tie
    rule keeps "q r" - "p q" first, then the hub pair. Without the hub pairs the kept pairs'
    only best matching is the first one. The certificate fails: "q r" - "p q" ties with
    "the p" - "p q", so U("q r") >= U("the p"), above what each split leaves "q r"."""
    from iescore.match import fillers

    monkeypatch.setattr(fillers, "_hubs", lambda *a: (frozenset(["the"]), frozenset()))
    d, items, _ = _compare([Template("t", {"s": ("the p", "q r")})], [Template("t", {"s": ("the r", "p q")})])
    assert [x[2] for x in items["reference"]] == [0, 1]


def test_a_hub_pair_in_a_tie_through_an_unmatched_prediction_is_found(monkeypatch):
    """Answers "a p", "q", predictions "a q", "p", "q r", "a" a hub, exact rule. By hand,
    over all pairs: "a p" - "p" with "q" - "a q" (or "q r") share 1 + 1 tokens, and so do
    "a p" - "a q" (a hub pair) with "q" - "q r". In token order "a p" comes first and "a q"
    is its earliest prediction: the tie rule keeps the hub pair, then "q" - "q r". Without
    the hub pair: "a p" - "p", then "q" - "a q". The certificate fails because "q" could
    take the unmatched "q r" (U("q") >= 2, doubled), which leaves "a q" no room for its
    bound."""
    from iescore.match import fillers

    monkeypatch.setattr(fillers, "_hubs", lambda *a: (frozenset(["a"]), frozenset()))
    d, items, _ = _compare([Template("t", {"s": ("a p", "q")})], [Template("t", {"s": ("a q", "p", "q r")})])
    assert [x[2] for x in items["reference"]] == [0, 2]


def test_a_hub_pair_in_a_tie_with_a_stand_in_is_found(monkeypatch):
    """Answers "Dr the p", "Dr z", "q", predictions "Dr the q", "Dr x p", "Dr" given the
    floor 1 and "the" a hub, exact rule. "q" lacks the floor: it gains 1 when left
    unaligned (one answer is), through a stand-in. By hand, over all pairs: "Dr the p" -
    "Dr x p" and "q" - "Dr the q" share 1 token each ("Dr z" unaligned, no gain): 2; so do
    "Dr the p" - "Dr the q" (beyond the floor only "the": a hub pair) with "Dr z" -
    "Dr x p" (0) and "q" unaligned (1). In token order "Dr the p" comes first and "Dr the
    q" is its earliest prediction: the tie rule keeps the hub pair. Without it, "Dr the p"
    - "Dr x p", then "Dr z" - "Dr the q". The certificate fails only through the stand-in:
    "q" could take it (U("q") >= 2, doubled), which leaves "Dr the q" no room."""
    from iescore.match import fillers

    monkeypatch.setattr(fillers, "_floors", lambda *a: Counter({"Dr": 1}))
    monkeypatch.setattr(fillers, "_hubs", lambda *a: (frozenset(["the"]), frozenset()))
    d, items, _ = _compare([Template("t", {"s": ("Dr the p", "Dr z", "q")})],
                           [Template("t", {"s": ("Dr the q", "Dr x p")})])
    assert [x[2] for x in items["reference"]] == [0, 1, None]


def _shared_the(n):
    """n answers "s<k> x<k>" and n predictions "s<k> x<k>" (even k) or "s<k>" (odd k), "the "
    before every third answer (k % 3 == 0) and every fourth prediction (k % 4 == 0)."""
    ref = tuple(("the " if k % 3 == 0 else "") + f"s{k} x{k}" for k in range(n))
    pred = tuple(("the " if k % 4 == 0 else "") + (f"s{k} x{k}" if k % 2 == 0 else f"s{k}") for k in range(n))
    return [Template("t", {"s": ref})], [Template("t", {"s": pred})]


def test_a_token_on_a_share_of_the_fillers_is_a_hub(monkeypatch):
    """_shared_the(240), exact rule: "the" on 80 answers and 60 predictions, 4,800 pairs,
    past _HUB_PAIRS (4,096) and four per filler (1,920): a hub. The pairs kept are answer k
    with prediction k (s<k>): 240. By hand, answer k equals prediction k when k is even and
    "the" is on both (k % 12 == 0: 20) or on neither (k = 2 mod 4 and k % 3 != 0: 40), so
    C = 60, S = 180. The certificate (doubled weights, first split: an answer with "the"
    bound 2, a prediction with it bound 1): every incorrect pair k shares 1 token or more,
    2 or more when its prediction holds "the" (k % 4 == 0, even: s<k> x<k>), so each bound
    fits under its pair's weight, and every hub pair gets U + V >= 3 > 2, its doubled
    weight."""
    sizes = _pairs_spy(monkeypatch)
    ref, pred = _shared_the(240)
    se = score_templates(reference=ref, prediction=pred).to_dict()["slot_errors"]
    assert (se["C"], se["S"], se["D"], se["I"]) == (60, 180, 0, 0)
    assert sizes == [240]
    monkeypatch.undo()
    _compare(ref, pred)


def test_a_hub_pair_that_an_alignment_needs_is_kept(monkeypatch):
    """_shared_the(240) plus answers "a1" and "the y" and a prediction "the z", exact rule.
    By hand: "the z" shares "the" with "the y" (1 token) and nothing with "a1"; taking it
    from another answer holding "the" gains 1 and loses that answer's own pair (1 token or
    more) while "the y" gains nothing: the only best alignment pairs "the z" with "the y",
    "a1" left unaligned: C = 60, S = 181, D = 1. Without the hub pairs, the free fillers
    would pair in position order, "a1" with "the z". The certificate fails ("the z" keeps
    no pair, its V is 0, and "the y" none, its U is 0); "the" is the slot's one hub token,
    so the dual of the hub's potential (iescore.match.hubs.tight_holders) keeps the hub
    pairs it leaves tight: the two holders without a pair of their own, one pair, held as a
    block (iescore.match.blocks); the plain path lists it."""
    blocks: list = []
    sizes = _pairs_spy(monkeypatch, blocks)
    ref, pred = _shared_the(240)
    ref = [Template("t", {"s": ref[0].slots["s"] + ("a1", "the y")})]
    pred = [Template("t", {"s": pred[0].slots["s"] + ("the z",)})]
    d, items, _ = _compare(ref, pred)
    se = d["slot_errors"]
    assert (se["C"], se["S"], se["D"], se["I"]) == (60, 181, 1, 0)
    assert items["prediction"][240][2] == 241 and items["reference"][240][2] is None
    assert sizes[0] == 240 and blocks[0] == [([241], [240], 1)]
    from iescore.match import fillers

    monkeypatch.setattr(fillers, "_BLOCKS", False)
    sizes.clear()
    assert _outcome(ref, pred)[:2] == (d, items)
    assert sizes[0] == 240 + 1



def test_a_floor_lacked_by_a_share_of_the_fillers_is_a_hub(monkeypatch):
    """240 answers "s<k>" with "Dr " first unless k % 5 < 2, 240 predictions "s<k>" with
    "Dr " first unless (3 k) % 5 < 2 (k % 5 in {0, 2}), exact rule. "Dr" is on 144 of
    each side: its floor 1 costs 96 x 96 pairs short of it, against 144 x 144 holding it,
    so it gets one; the 96 x 96 = 9,216 pairs that lack it (>= 4,096 and four per filler)
    make the lacked floor a hub. By hand: answer k equals prediction k when both hold "Dr"
    or both lack it, k % 5 in {0, 3, 4}: C = 144, S = 96. The certificate (first split:
    an answer lacking "Dr" bound 2, a prediction lacking it 1, doubled weights): k % 5 == 1
    (the answer lacks it) shares s<k>, weight 2 >= 2; k % 5 == 2 (the prediction lacks it)
    leaves 2 - 1 >= 0 for the answer; every hub pair then gets U + V >= 3 > 2. Kept: the
    240 pairs of answer k with prediction k."""
    sizes = _pairs_spy(monkeypatch)
    ref = tuple(("" if k % 5 < 2 else "Dr ") + f"s{k}" for k in range(240))
    pred = tuple(("" if (3 * k) % 5 < 2 else "Dr ") + f"s{k}" for k in range(240))
    ref_t, pred_t = [Template("t", {"s": ref})], [Template("t", {"s": pred})]
    se = score_templates(reference=ref_t, prediction=pred_t).to_dict()["slot_errors"]
    assert (se["C"], se["S"], se["D"], se["I"]) == (144, 96, 0, 0)
    assert sizes == [240]
    monkeypatch.undo()
    _compare(ref_t, pred_t)


def test_hubs_are_chosen_by_their_pairs_and_not_where_the_rule_accepts_them_anyway():
    """_shared_the(240)'s fillers, no floor: "the" on 80 answers and 60 predictions makes
    4,800 pairs (>= 4,096 and >= 4 x 480): a hub under the exact rule. Under O(inf,inf)
    every filler may be accepted through "the" alone (at most inf other tokens), so the
    rule's pairs would be 240 x 240, more than half the 4,800 saved: no hub. With only the
    40 answers k % 6 == 0 holding it, 40 x 60 = 2,400 pairs: four per filler (1,920) but
    fewer than 4,096: no hub."""
    from collections import Counter as C

    from iescore.match import fillers

    def hubs(ref, pred, m_max, e_max):
        keys_r, keys_p = [tuple(f) for f in ref], [tuple(f) for f in pred]  # token tuples
        sets_r, sets_p = [frozenset(k) for k in keys_r], [frozenset(k) for k in keys_p]
        bd_r, bd_p = fillers._split(keys_r, sets_r, C()), fillers._split(keys_p, sets_p, C())
        held_r, held_p = fillers._holders(keys_r, sets_r)[0], fillers._holders(keys_p, sets_p)[0]
        return fillers._hubs(bd_r, bd_p, m_max, e_max, held_r, held_p, C())

    ref, pred = (t[0].slots["s"] for t in _shared_the(240))
    assert hubs(ref, pred, 0, -1) == (frozenset(["the"]), frozenset())
    assert hubs(ref, pred, float("inf"), float("inf")) == (frozenset(), frozenset())
    fewer = tuple(f if k % 6 == 0 or f[0] != "the" else f[1:] for k, f in enumerate(ref))
    assert sum(f[0] == "the" for f in fewer) == 40
    assert hubs(fewer, pred, 0, -1) == (frozenset(), frozenset())
    # 600 fillers a side, "the" on 70 answers and 65 predictions: 4,550 pairs, past 4,096
    # but fewer than four per filler (4,800): no hub; on 75 answers, 4,875 pairs: a hub
    big_p = tuple(("the", f"p{k}") if k < 65 else (f"p{k}",) for k in range(600))
    for n_the, hub in ((70, frozenset()), (75, frozenset(["the"]))):
        big_r = tuple(("the", f"r{k}") if k < n_the else (f"r{k}",) for k in range(600))
        assert hubs(big_r, big_p, 0, -1) == (hub, frozenset())
