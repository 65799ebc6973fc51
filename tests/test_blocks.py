"""The tie-ruled matching of explicit edges plus blocks (iescore.match.blocks) against the
same graph with its blocks written out, solved by iescore.match.assign.match (itself
checked against the brute force in tests/test_assign.py); and OBD slots whose tight hub
pairs stay a block against the plain path that lists them (iescore.match.fillers._BLOCKS)."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from iescore import Template, score_templates
from iescore.match import blocks as blocks_module
from iescore.match import fillers, slots
from iescore.match.assign import match
from iescore.match.blocks import block_match


def written_out(n_u, n_v, rank_u, rank_v, eu, ev, ew, blocks):
    """The plain reference: every pair of every block listed (at the best weight of the
    blocks holding it, an explicit pair at its own), one matching over all of them."""
    w = {}
    explicit = set(zip(eu, ev))
    for bu, bv, x in blocks:
        for i in bu:
            for j in bv:
                if (i, j) not in explicit:
                    w[(i, j)] = max(w.get((i, j), 0), x)
    w.update(zip(zip(eu, ev), ew))
    keys = sorted(w)
    mate = [-1] * n_u
    if not keys:
        return mate
    u, v = np.array([k[0] for k in keys]), np.array([k[1] for k in keys])
    chosen = match(u, v, [np.array([w[k] for k in keys], dtype=np.int64)], n_u, n_v,
                   lambda: np.array(rank_u), lambda: np.array(rank_v))
    for k, c in zip(keys, chosen.tolist()):
        if c:
            mate[k[0]] = k[1]
    return mate


@st.composite
def block_graphs(draw):
    """Up to 5 classes of up to 4 twin nodes a side, classes joined by explicit edges (a
    weight per pair of classes) or not, a few stray edges (nodes that are almost twins),
    up to 3 blocks over whole classes or any nodes, overlapping, and any ranks. An explicit
    pair inside a block weighs at least the block, as in an OBD slot."""
    sizes_u = draw(st.lists(st.integers(1, 4), min_size=1, max_size=5))
    sizes_v = draw(st.lists(st.integers(1, 4), min_size=1, max_size=5))
    cu = [c for c, k in enumerate(sizes_u) for _ in range(k)]
    cv = [c for c, k in enumerate(sizes_v) for _ in range(k)]
    n_u, n_v = len(cu), len(cv)
    blocks = []
    for _ in range(draw(st.integers(0, 3))):
        if draw(st.booleans()):  # whole classes
            xs = set(draw(st.lists(st.sampled_from(range(len(sizes_u))), min_size=1)))
            ys = set(draw(st.lists(st.sampled_from(range(len(sizes_v))), min_size=1)))
            bu, bv = [i for i in range(n_u) if cu[i] in xs], [j for j in range(n_v) if cv[j] in ys]
        else:
            bu = sorted(set(draw(st.lists(st.sampled_from(range(n_u)), min_size=1))))
            bv = sorted(set(draw(st.lists(st.sampled_from(range(n_v)), min_size=1))))
        blocks.append((bu, bv, draw(st.integers(1, 3))))
    in_block: dict[tuple[int, int], int] = {}
    for bu, bv, x in blocks:
        for i in bu:
            for j in bv:
                in_block[(i, j)] = max(in_block.get((i, j), 0), x)
    joined = {(x, y): draw(st.integers(1, 4)) for x in range(len(sizes_u)) for y in range(len(sizes_v))
              if draw(st.integers(0, 2)) == 0}
    edges = {(i, j): joined[(cu[i], cv[j])] for i in range(n_u) for j in range(n_v) if (cu[i], cv[j]) in joined}
    for i, j, x in draw(st.lists(st.tuples(st.integers(0, n_u - 1), st.integers(0, n_v - 1), st.integers(1, 4)),
                                 max_size=2)):
        edges[(i, j)] = x
    eu, ev = [k[0] for k in edges], [k[1] for k in edges]
    ew = [max(x, in_block.get(k, 0)) for k, x in edges.items()]
    rank_u, rank_v = draw(st.permutations(range(n_u))), draw(st.permutations(range(n_v)))
    return n_u, n_v, rank_u, rank_v, eu, ev, ew, blocks


@settings(max_examples=600, deadline=None)
@given(block_graphs())
def test_blocks_give_the_matching_of_the_pairs_written_out(case):
    assert block_match(*case) == written_out(*case)


@settings(max_examples=300, deadline=None)
@given(block_graphs())
def test_the_flow_by_shortest_paths_gives_the_same_matching(case):
    """The flow's rounds from the third on follow shortest paths only (Dinic's phases);
    every round so, the same matching."""
    real = blocks_module._Flow._augment

    def shortest(self, excess, t, shortest=False):
        return real(self, excess, t, True)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(blocks_module._Flow, "_augment", shortest)
        assert block_match(*case) == written_out(*case)


def test_a_prediction_reached_through_two_blocks_keeps_its_first_way_in():
    """Found by a longer run of the property above: prediction classes joined to two
    classes of answers, reached through one block for the first and then through another
    for the second, must not be given the second way in (the entering class was itself
    reached through that prediction: the path back looped forever). Against the pairs
    written out."""
    blocks = [([0], [5, 6, 7], 1), ([1], [1, 2], 1), ([7, 8, 9, 10, 11, 12], [0, 1, 2, 9, 10, 11], 1)]
    eu = [0, 0, 0, 4, 4, 4, 4, 4, 4, 5, 5, 5, 5, 5, 5, 6, 6, 6, 6, 6, 6, 9, 9, 10, 10, 11, 11, 12, 12]
    ev = [0, 1, 2, 0, 1, 2, 5, 6, 7, 0, 1, 2, 5, 6, 7, 0, 1, 2, 5, 6, 7, 3, 4, 3, 4, 3, 4, 3, 4]
    case = (13, 12, [0, 1, 3, 2, 4, 5, 6, 7, 8, 9, 10, 11, 12], list(range(12)), eu, ev, [1] * len(eu), blocks)
    assert block_match(*case) == written_out(*case) == [0, 1, -1, -1, 5, 6, 7, 2, 9, 3, 4, 10, 11]


def test_a_block_and_a_heavier_edge_by_hand():
    """Answers 0, 1, 2 (ranked so), predictions 0, 1, every pair weighing 1 (a block),
    answer 2 with prediction 0 weighing 3. The best matchings weigh 4: 2-0 and one of
    answers 0, 1 with prediction 1. The tie rule: answer 0 cannot take prediction 0 (at
    most 1 + 1 = 2 then), takes prediction 1; answer 1 is left unmatched."""
    assert block_match(3, 2, [0, 1, 2], [0, 1], [2], [0], [3], [([0, 1, 2], [0, 1], 1)]) == [1, -1, 0]


def test_a_class_that_failed_is_not_tried_again_by_hand():
    """Answers 0, 1 (twins: the block only) and 2 (also prediction 0 at weight 3),
    predictions 0, 1, 2 in the block at weight 1, prediction 0 ranked first. Answer 0
    fails on prediction 0 (answer 2 needs it) and takes prediction 1; its twin, answer 1,
    skips prediction 0's class and takes prediction 2."""
    assert block_match(3, 3, [0, 1, 2], [0, 1, 2], [2], [0], [3], [([0, 1, 2], [0, 1, 2], 1)]) == [1, 2, 0]


def _share_wrong(n: int, seed: int, short: int = 0):
    """The bench's share_wrong slot (bench/adversarial.py) at seed ``seed``: answer k
    "s<k> x<k>", prediction k the same for even k and "s<k>" for odd k, one prediction in
    10 wrong ("y<k>"), "the " first on 30% of each side; the last ``short`` predictions
    left out (a slot of more answers: stand-ins)."""
    rnd = random.Random(seed)
    ref = tuple(("the " if rnd.random() < 0.3 else "") + f"s{k} x{k}" for k in range(n))
    pred = tuple(("the " if rnd.random() < 0.3 else "")
                 + (f"y{k}" if rnd.random() < 0.1 else f"s{k} x{k}" if k % 2 == 0 else f"s{k}") for k in range(n))
    return [Template("t", {"s": ref})], [Template("t", {"s": pred[: n - short]})]


def _outcome(ref, pred, **opts):
    r = score_templates(reference=ref, prediction=pred, **opts)
    items = {side: [(i["status"], i["category"], None if i["partner"] is None else i["partner"]["index"])
                    for i in r.items(side)] for side in ("reference", "prediction")}
    return r.to_dict(), items


def _through_blocks(monkeypatch, ref, pred):
    """The outcome, checked to have gone through iescore.match.blocks, and a function giving
    the outcome of the plain path (``_plain(**module_values)``: fillers' and slots' values
    patched), checked to have gone through no block solve."""
    calls = []
    real = slots._block_slots
    monkeypatch.setattr(slots, "_block_slots", lambda *a: calls.append(1) or real(*a))
    got = _outcome(ref, pred)
    assert calls, "the slot went through the blocks"

    def plain(**values):
        for name, value in values.items():
            monkeypatch.setattr(fillers if hasattr(fillers, name) else slots, name, value)
        calls.clear()
        out = _outcome(ref, pred)
        assert not calls
        return out

    return got, plain


def _not_wide(*a):
    """slots._wide counting no tied slot as wide: every tied slot over its band."""
    return np.zeros(0, dtype=np.int64)


@pytest.mark.parametrize("n,seed,short", [(300, 0, 0), (300, 1, 0), (400, 2, 0), (300, 3, 40), (350, 4, 7)])
def test_tight_hub_pairs_as_a_block_give_the_plain_alignment(monkeypatch, n, seed, short):
    """A slot whose certificate fails, "the" a hub held once: its tight hub pairs stay a
    block and the slot is solved by iescore.match.blocks; the plain path lists every one
    of them and solves all the pairs of the tied fillers written out (no slot through the
    blocks). Every count, status, category and partner agree."""
    ref, pred = _share_wrong(n, seed, short)
    got, plain = _through_blocks(monkeypatch, ref, pred)
    assert plain(_BLOCKS=False, _wide=_not_wide) == got


@pytest.mark.parametrize("seed,short", [(0, 0), (1, 9), (2, 0)])
def test_many_ties_through_the_blocks_give_the_band_alignment(monkeypatch, seed, short):
    """A slot of 240 fillers a side in groups of four, shuffled: answers "g<j> a", "g<j> b",
    "g<j> e", predictions "g<j> c", "g<j> d", "g<j> f" (a 3x3 tie on a token of their own),
    and an answer and a prediction sharing nothing; the last ``short`` predictions left
    out. The band of weightless pairs would span the slot, so it goes through
    iescore.match.blocks; over a band (the blocks turned off) every count, status,
    category and partner agree. By hand: nothing is equal (C = 0), and the slot being
    complete, every prediction aligns (S = 240 - short) and the answers left over are
    deletions (D = short)."""
    rnd = random.Random(seed)
    ref = [f for j in range(60) for f in (f"g{j} a", f"g{j} b", f"g{j} e", f"r{j}")]
    pred = [f for j in range(60) for f in (f"g{j} c", f"g{j} d", f"g{j} f", f"p{j}")]
    rnd.shuffle(ref)
    rnd.shuffle(pred)
    ref_t, pred_t = [Template("t", {"s": tuple(ref)})], [Template("t", {"s": tuple(pred[: 240 - short])})]
    got, plain = _through_blocks(monkeypatch, ref_t, pred_t)
    se = got[0]["slot_errors"]
    assert (se["C"], se["S"], se["D"], se["I"]) == (0, 240 - short, short, 0)
    assert plain(_wide=_not_wide) == got


def _two_hubs(n: int, twice: bool):
    """As :func:`_share_wrong` (seed 0), but "the " and "of " each first on 30% of the fillers
    of each side (two hub tokens), or "the " on 30% and twice on a third of those (copies)."""
    rnd = random.Random(0)

    def pre():
        if twice:
            x = rnd.random()
            return "the the " if x < 0.1 else "the " if x < 0.3 else ""
        return ("the " if rnd.random() < 0.3 else "") + ("of " if rnd.random() < 0.3 else "")

    ref = tuple(pre() + f"s{k} x{k}" for k in range(n))
    pred = tuple(pre() + (f"y{k}" if rnd.random() < 0.1 else f"s{k} x{k}" if k % 2 == 0 else f"s{k}")
                 for k in range(n))
    return [Template("t", {"s": ref})], [Template("t", {"s": pred})]


@pytest.mark.parametrize("twice", [False, True])
def test_all_hub_holders_as_blocks_give_the_plain_alignment(monkeypatch, twice):
    """Two hub tokens, or one held twice by some: the slot keeps the pairs of all the hub
    holders, as one block per level of shared copies (iescore.match.hubs.holder_blocks:
    "the", "of" and both at weight 2; or "the" once and twice), and they give the plain
    path's alignment, every such pair listed."""
    from iescore.match import hubs

    ref, pred = _two_hubs(320, twice)
    levels = []
    real = hubs.holder_blocks
    monkeypatch.setattr(hubs, "holder_blocks", lambda h: levels.append(sorted(b[2] for b in real(h))) or real(h))
    got = _outcome(ref, pred)
    assert levels == [[1, 1, 2]] if not twice else levels == [[1, 2]]
    monkeypatch.setattr(fillers, "_BLOCKS", False)
    monkeypatch.setattr(slots, "_wide", _not_wide)
    assert _outcome(ref, pred) == got


def test_stand_in_pairs_as_blocks_give_the_listed_alignment(monkeypatch):
    """The bench's excess slot at 300: answers "s<k>", "Dr " first when k % 5 < 3, and 150
    predictions "Dr s<2k>". "Dr" gets the floor 1, so the 120 answers without it gain 1
    when left unaligned; 150 answers are left over, so 120 stand-ins, each paired with each
    of the 120: 14,400 pairs, past slots._STAND_IN_LISTED, so they are blocks. By hand:
    prediction 2k equals answer 2k when 2k % 5 < 3 (C = 90); the other 60 share s<2k> with
    an answer lacking "Dr" (S = 60); D = 150. With the pairs listed, the same alignment."""
    ref = tuple(("Dr " if k % 5 < 3 else "") + f"s{k}" for k in range(300))
    pred = tuple(f"Dr s{2 * k}" for k in range(150))
    ref_t, pred_t = [Template("t", {"s": ref})], [Template("t", {"s": pred})]
    got, plain = _through_blocks(monkeypatch, ref_t, pred_t)
    se = got[0]["slot_errors"]
    assert (se["C"], se["S"], se["D"], se["I"]) == (90, 60, 150, 0)
    assert plain(_STAND_IN_LISTED=10**9, _wide=_not_wide) == got
