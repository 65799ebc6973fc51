"""The matcher of one-to-one counting and slot alignment (iescore.match.assign) against a
plain brute force: every one-to-one subset of edges and the lexicographic objective over
the levels. Whatever the solver, the matching must weigh the brute force's best and
must not depend on how the nodes are numbered or the edges listed, only on their ranks
(Concepts: counting, ties); where nothing crosses (the interval DP) it is moreover the
optimal matching that keeps the earliest pairs in (answer rank, prediction rank) order.
Random chains, nested and overlapping spans, OBD-like dense slots and crossing graphs
too large for the brute force (against a dense Hungarian), and long chains whose counts
and statuses are derived by hand."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from iescore import Document, Span, score, score_tags
from iescore.match import assign, intervals, paths
from iescore.match.assign import match

# --- the plain reference -----------------------------------------------------------------

def _edge_order(u, v, rank_u, rank_v):
    """Edge indices in (answer rank, prediction rank) order (the tie rule's scan order)."""
    return sorted(range(len(u)), key=lambda k: (rank_u[u[k]], rank_v[v[k]], k))


def _matchings(u, v):
    n = len(u)
    for k in range(n + 1):
        for sel in itertools.combinations(range(n), k):
            if len({u[i] for i in sel}) == k and len({v[i] for i in sel}) == k:
                yield set(sel)


def _totals(sel, levels):
    return tuple(sum(int(lv[i]) for i in sel) for lv in levels)


def brute_lexmax(u, v, levels, rank_u, rank_v) -> set[int]:
    """The optimal matching whose 0/1 vector over the ordered edges is largest."""
    order = _edge_order(u, v, rank_u, rank_v)
    return max(_matchings(u, v), key=lambda sel: (_totals(sel, levels), tuple(int(e in sel) for e in order)))


def brute_greedy(u, v, levels, rank_u, rank_v) -> set[int]:
    """The tie rule as README states it: scan the edges in order and keep an edge when some
    optimal matching contains it together with the edges kept so far."""
    all_m = list(_matchings(u, v))
    best = max(_totals(m, levels) for m in all_m)
    optimal = [m for m in all_m if _totals(m, levels) == best]
    kept: set[int] = set()
    for e in _edge_order(u, v, rank_u, rank_v):
        if any(kept | {e} <= m for m in optimal):
            kept.add(e)
    return kept


def _run(u, v, levels, n_u, n_v, rank_u, rank_v) -> set[int]:
    chosen = match(np.array(u, dtype=np.int64), np.array(v, dtype=np.int64),
                   [np.array(lv, dtype=np.int64) for lv in levels], n_u, n_v,
                   lambda: np.array(rank_u), lambda: np.array(rank_v))
    return set(np.flatnonzero(chosen).tolist())


def _check(u, v, levels, n_u, n_v, rank_u, rank_v, earliest=False) -> set[int]:
    """``match`` weighs the brute force's best, as one-to-one subset; the same graph with
    its edges listed in another order and its nodes numbered otherwise (the same ranks)
    gives the same pairs, and so does a second call; with ``earliest`` (no edges cross),
    the pairs are those of the optimal matching that keeps the earliest edges."""
    got = _run(u, v, levels, n_u, n_v, rank_u, rank_v)
    assert len({u[k] for k in got}) == len({v[k] for k in got}) == len(got)
    assert _totals(got, levels) == max(_totals(m, levels) for m in _matchings(u, v)), (u, v, levels)
    if earliest:
        want = brute_lexmax(u, v, levels, rank_u, rank_v)
        assert brute_greedy(u, v, levels, rank_u, rank_v) == want  # the two statements agree
        assert got == want, (u, v, levels, rank_u, rank_v)
    _same_pairs(u, v, levels, n_u, n_v, rank_u, rank_v, got)
    return got


def _same_pairs(u, v, levels, n_u, n_v, rank_u, rank_v, got):
    """Edges listed in another order, nodes renumbered (ranks kept): the same pairs."""
    assert _run(u, v, levels, n_u, n_v, rank_u, rank_v) == got  # deterministic
    rnd = random.Random(len(u))
    perm = list(range(len(u)))
    rnd.shuffle(perm)
    new_u, new_v = rnd.sample(range(n_u), n_u), rnd.sample(range(n_v), n_v)  # node x is now new_u[x]
    ru, rv = [0] * n_u, [0] * n_v
    for x in range(n_u):
        ru[new_u[x]] = rank_u[x]
    for y in range(n_v):
        rv[new_v[y]] = rank_v[y]
    got2 = _run([new_u[u[i]] for i in perm], [new_v[v[i]] for i in perm], [[lv[i] for i in perm] for lv in levels],
                n_u, n_v, ru, rv)
    assert {(u[perm[i]], v[perm[i]]) for i in got2} == {(u[i], v[i]) for i in got}


def _overlap_edges(a_spans, p_spans):
    return [(i, j) for i, (s, e) in enumerate(a_spans) for j, (t, f) in enumerate(p_spans) if s < f and t < e]


def _ranks(spans, ids):
    """Rank of every node id: its span's place in (start, end) order."""
    order = sorted(range(len(spans)), key=lambda k: (spans[k], k))
    rank = [0] * len(spans)
    for r, k in enumerate(order):
        rank[ids[k]] = r
    return rank


@st.composite
def _levels(draw, n):
    return [[1] * n,
            draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)),
            draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))]


@st.composite
def disjoint_spans(draw, max_n=6):
    out, pos = [], 0
    for _ in range(draw(st.integers(1, max_n))):
        pos += draw(st.integers(0, 2))
        n = draw(st.integers(1, 3))
        out.append((pos, pos + n))
        pos += n
    return out


@st.composite
def any_spans(draw, max_n=5):
    out = []
    for _ in range(draw(st.integers(1, max_n))):
        s = draw(st.integers(0, 8))
        out.append((s, s + draw(st.integers(1, 4))))
    return out


def _spans_case(draw, a_spans, p_spans):
    edges = _overlap_edges(a_spans, p_spans)[:12]
    ida = draw(st.permutations(range(len(a_spans))))  # node ids in a shuffled order
    idp = draw(st.permutations(range(len(p_spans))))
    u = [ida[i] for i, _ in edges]
    v = [idp[j] for _, j in edges]
    levels = draw(_levels(len(edges)))
    return u, v, levels, len(a_spans), len(p_spans), _ranks(a_spans, ida), _ranks(p_spans, idp)


@st.composite
def chain_cases(draw):
    return _spans_case(draw, draw(disjoint_spans()), draw(disjoint_spans()))


@st.composite
def nested_cases(draw):
    return _spans_case(draw, draw(any_spans()), draw(any_spans()))


@st.composite
def slot_cases(draw):
    """OBD-like: any bipartite graph (fillers of one slot), dense, ranks in any order."""
    n_u, n_v = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    pairs = [(a, b) for a in range(n_u) for b in range(n_v)]
    edges = [p for p in pairs if draw(st.integers(0, 3))][:12]
    u, v = [a for a, _ in edges], [b for _, b in edges]
    levels = draw(_levels(len(edges)))
    return u, v, levels, n_u, n_v, draw(st.permutations(range(n_u))), draw(st.permutations(range(n_v)))


def _count_crossing(monkeypatch) -> list[int]:
    calls: list[int] = []
    real = assign._crossing

    def spy(a, p, w, comp=None):
        calls.append(len(w))
        return real(a, p, w, comp)

    monkeypatch.setattr(assign, "_crossing", spy)
    return calls


@settings(max_examples=300, deadline=None)
@given(chain_cases())
def test_chains_match_the_brute_force_through_the_dp(case):
    """Disjoint spans on each side: the edges never cross, so the DP alone solves them."""
    with pytest.MonkeyPatch.context() as mp:
        calls = _count_crossing(mp)
        _check(*case, earliest=True)
    assert calls == []


@settings(max_examples=300, deadline=None)
@given(nested_cases())
def test_nested_and_overlapping_spans_match_the_brute_force(case):
    _check(*case)


@settings(max_examples=300, deadline=None)
@given(slot_cases())
def test_dense_slots_match_the_brute_force(case):
    _check(*case)


def test_crossing_components_go_to_the_shortest_paths(monkeypatch):
    """Answers [0,4) and [1,2), predictions [0,2) and [1,3) (ranks by position): the edges
    (a0,p0) (a0,p1) (a1,p0) (a1,p1) form a square, which crosses. With a0-p1 and a1-p0
    heavier, {a0-p1, a1-p0} is the only optimum; all equal, both diagonals are, and the
    solver takes one of them, the same whichever way the nodes are numbered."""
    calls = _count_crossing(monkeypatch)
    got = _run([0, 0, 1, 1], [0, 1, 0, 1], [[1, 1, 1, 1], [0, 1, 1, 0]], 2, 2, [0, 1], [0, 1])
    assert got == {1, 2}
    got = _check([0, 0, 1, 1], [0, 1, 0, 1], [[1, 1, 1, 1]], 2, 2, [0, 1], [0, 1])
    assert got in ({0, 3}, {1, 2})
    assert calls and all(c == 4 for c in calls)


# --- long chains, derived by hand -------------------------------------------------------------

K = 100_000


def _tied_chain():
    """A document of 2K+2 tokens: answers A_k = [2k+1, 2k+3) for k < K, predictions
    P_k = [2k, 2k+2) for k <= K (K+1 of them), all of label E: P_k overlaps A_{k-1} and
    A_k, a path P_0 - A_0 - P_1 - A_1 - ... - A_{K-1} - P_K."""
    gold = tuple(Span("E", 2 * k + 1, 2 * k + 3) for k in range(K))
    pred = [Span("E", 2 * k, 2 * k + 2) for k in range(K + 1)]
    return [Document("chain", ("w",) * (2 * K + 2), gold)], [pred]


def test_long_tied_chain_keeps_the_earliest_pairs():
    """O(1,1): P_k vs A_k has one extra token on the left and misses one on the right
    (e = m = 1, boundary error 2); P_{k+1} vs A_k one extra on the right, one missing on the
    left (error 2). Every edge is a rule pair of error 2, none exact. A largest matching has
    K pairs (K answers) and leaves out one prediction P_j (A_i-P_i for i < j, A_i-P_{i+1} for
    i >= j): K+1 matchings, all of total error 2K, a tie. The tie rule scans (A_0,P_0),
    (A_0,P_1), (A_1,P_1), ...: (A_0,P_0) is in an optimum (any j > 0), kept; then (A_1,P_1)
    with it, and so on: A_i-P_i for all i, P_K left (no edges cross: the interval DP keeps
    the earliest pairs). So TP = K, FP = 1 (P_K), FN = 0.
    The alignment (same edges; all correct, same label, one shared token each) ties the
    same way: C = K, S = D = 0, I = 1 (P_K)."""
    docs, preds = _tied_chain()
    r = score(reference=docs, prediction=preds, rule="O(1,1)", counting="one-to-one")
    assert (r.overall.tp, r.overall.fp, r.overall.fn) == (K, 1, 0)
    assert r.prediction.status.tolist() == [0] * K + [1]  # TP ... TP, FP: only P_K
    se = r.to_dict()["slot_errors"]
    assert (se["C"], se["S"], se["D"], se["I"]) == (K, 0, 0, 1)


def test_long_tied_chain_under_exact_matching():
    """Exact rule: no pair is exact, so TP = 0, FP = K+1, FN = K. The alignment still pairs
    every answer (aligned pairs come second): K pairs, none correct, the same tie as above,
    A_i-P_i: S = K, I = 1 (P_K), C = D = 0; the confusion table holds E -> E K times and
    none -> E once."""
    docs, preds = _tied_chain()
    r = score(reference=docs, prediction=preds)
    assert (r.overall.tp, r.overall.fp, r.overall.fn) == (0, K + 1, K)
    se = r.to_dict()["slot_errors"]
    assert (se["C"], se["S"], se["D"], se["I"]) == (0, K, 0, 1)
    assert r.confusion_table() == {"E": {"E": K}, "none": {"E": 1}}


def test_long_shifted_tag_chain():
    """bench/adversarial.py's chain from tags: 2K tokens, gold B-E I-E repeated (A_k =
    [2k, 2k+2)), prediction O then B-E I-E ... B-E (P_k = [2k+1, 2k+3), the last cut to
    [2K-1, 2K)). A_0 overlaps only P_0, so the largest matching is forced: A_k-P_k for all k
    (K pairs), unique. O(1,1): P_k vs A_k has one extra token and one missing (error 2),
    the last one is inside A_{K-1} (one missing): all rule pairs, TP = K, FP = FN = 0, C = K.
    Exact: no exact pair, TP = 0, FP = FN = K; the alignment is the same K pairs: S = K."""
    gold = [["B-E", "I-E"] * K]
    pred = [["O"] + ["B-E", "I-E"] * (K - 1) + ["B-E"]]
    r = score_tags(reference=gold, prediction=pred, rule="O(1,1)", counting="one-to-one")
    assert (r.overall.tp, r.overall.fp, r.overall.fn) == (K, 0, 0)
    assert r.to_dict()["slot_errors"]["C"] == K
    r = score_tags(reference=gold, prediction=pred)
    assert (r.overall.tp, r.overall.fp, r.overall.fn) == (0, K, K)
    se = r.to_dict()["slot_errors"]
    assert (se["C"], se["S"], se["D"], se["I"]) == (0, K, 0, 0)


def test_readme_tie_example():
    """Concepts: counting, ties. Answers [1,3), [3,5); predictions [0,2), [2,4), [4,6), one
    label, O(1,1). Each prediction overlaps its neighbouring answers with one extra and one
    missing token (boundary error 2, a rule pair): the path P0-A0-P1-A1-P2. The largest
    matchings {A0P0, A1P1}, {A0P0, A1P2}, {A0P1, A1P2} all have error 4; nothing crosses,
    and the interval DP keeps (A0,P0), then (A1,P1): [4,6) is the FP, whatever the order
    of the input."""
    gold = (Span("E", 3, 5), Span("E", 1, 3))  # listed out of order on purpose
    for pred in ([Span("E", 0, 2), Span("E", 2, 4), Span("E", 4, 6)], [Span("E", 4, 6), Span("E", 2, 4), Span("E", 0, 2)]):
        r = score(reference=[Document("d", ("w",) * 6, gold)], prediction=[pred], rule="O(1,1)", counting="one-to-one")
        fp = [(i["start"], i["end"]) for i in r.items("prediction") if i["status"] == "FP"]
        assert fp == [(4, 6)]


@settings(max_examples=150, deadline=None)
@given(slot_cases(), st.lists(st.integers(0, 2**58), min_size=12, max_size=12))
def test_levels_beyond_64_bits_match_the_brute_force(case, big):
    """A last level of values up to 2**58: the totals of the levels above it no longer fit
    in 64 bits, so the weights are built partly as Python integers."""
    u, v, levels, n_u, n_v, ru, rv = case
    _check(u, v, [levels[0], levels[1], big[: len(u)]], n_u, n_v, ru, rv)


@settings(max_examples=300, deadline=None)
@given(chain_cases())
def test_chains_with_levels_beyond_64_bits_keep_the_earliest_pairs(case):
    u, v, levels, n_u, n_v, ru, rv = case
    _check(u, v, [levels[0], levels[1], [x * 2**60 for x in levels[2]]], n_u, n_v, ru, rv, earliest=True)


# --- the vectorised interval DP against the plain one --------------------------------------------

def plain_interval_dp(ka, kp, w) -> list[bool]:
    """The plain interval DP (the loop iescore ran before the vectorised one): ``best[i]``
    the optimum over edges i.. (an edge conflicts with the later ones sharing its key),
    then the walk from the left keeping each edge that begins an optimum of the rest."""
    n = len(w)
    nxt = [next((j for j in range(i + 1, n) if ka[j] != ka[i] and kp[j] != kp[i]), n) for i in range(n)]
    best = [0] * (n + 1)
    starts = [False] * n
    for i in range(n - 1, -1, -1):
        t = w[i] + best[nxt[i]]
        starts[i] = t >= best[i + 1]
        best[i] = max(t, best[i + 1])
    keep = [False] * n
    i = 0
    while i < n:
        if starts[i]:
            keep[i] = True
            i = nxt[i]
        else:
            i += 1
    return keep


def _lex_int(levels, n_edges):
    """One exact integer per edge ordering matchings by their level totals (first level first)."""
    w = [0] * n_edges
    for lv in levels:
        base = n_edges * max(max(lv), 0) + 1
        w = [x * base + int(y) for x, y in zip(w, lv)]
    return w


@st.composite
def staircases(draw, max_n=400):
    """Non-crossing edges in (answer, prediction) order: each step keeps the answer (R),
    the prediction (D) or changes both (X, a new component); long runs of one step too."""
    n = draw(st.integers(1, max_n))
    steps = draw(st.lists(st.sampled_from("RDRDRDX" + draw(st.sampled_from(["", "RRRR", "DDDD", "XX"]))),
                          min_size=n - 1, max_size=n - 1))
    ka, kp = [0], [0]
    for t in steps:
        ka.append(ka[-1] + (t != "R"))
        kp.append(kp[-1] + (t != "D"))
    top = draw(st.sampled_from([1, 3, 2**20]))
    levels = [[1] * n, draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)),
              draw(st.lists(st.integers(0, top), min_size=n, max_size=n))]
    return ka, kp, levels


@settings(max_examples=300, deadline=None)
@given(staircases(), st.sampled_from([2**60, 2**12]))
def test_vectorised_dp_matches_the_plain_dp(case, fit):
    """Random staircases up to 400 edges, levels packed into one limb or (with a small
    limb bound) several: the vectorised DP keeps exactly the plain DP's edges."""
    ka, kp, levels = case
    n = len(ka)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(intervals, "_FIT", fit)
        limbs = intervals._limbs([np.array(lv) for lv in levels], np.arange(n))
        if limbs is None:
            return
        got = intervals._interval_dp_vec(np.array(ka), np.array(kp), limbs)
    assert got is not None
    assert got.tolist() == plain_interval_dp(ka, kp, _lex_int(levels, n))


def test_vectorised_dp_on_a_long_tied_path():
    """A path of 200,001 edges, all of weight 1 (ka 0,0,1,1,2,..., kp 0,1,1,2,2,...): the
    plain DP (run here) keeps the even edges, as the vectorised one must; with one edge
    made heavier in the middle the optimum changes around it."""
    n = 200_001
    ka = [(i + 1) // 2 for i in range(n)]
    kp = [i // 2 for i in range(n)]
    w = [1] * n
    limbs = [np.ones(n, dtype=np.int64)]
    got = intervals._interval_dp_vec(np.array(ka), np.array(kp), limbs)
    assert got is not None
    assert got.tolist() == [i % 2 == 0 for i in range(n)] == plain_interval_dp(ka, kp, w)
    w[100_001] = 3
    limbs = [np.array(w, dtype=np.int64)]
    got = intervals._interval_dp_vec(np.array(ka), np.array(kp), limbs)
    assert got is not None and got.tolist() == plain_interval_dp(ka, kp, w)


@settings(max_examples=200, deadline=None)
@given(st.one_of(chain_cases(), nested_cases()))
def test_match_through_the_vectorised_dp_matches_the_brute_force(case):
    """The vectorised DP from the first edge on (``_VEC_MIN`` = 1) against the brute force."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(assign, "_VEC_MIN", 1)
        _check(*case)


def test_limbs_pack_levels_first_level_first():
    """Levels (1,1,0), (0,2,2), (5,0,1) over 3 edges, packed from the last: (5,0,1), then
    (0,2,2) with base 3*5+1 = 16 (5, 32, 33; at most 5+2*16 = 37 on an edge), then (1,1,0)
    with base 3*37+1 = 112 (117, 144, 33), one limb while 3 times its largest value stays
    below the bound; a bound of 2**8 puts the first level in a limb of its own (3*149 >= 256)."""
    lv = [np.array([1, 1, 0]), np.array([0, 2, 2]), np.array([5, 0, 1])]
    assert [x.tolist() for x in intervals._limbs(lv, np.arange(3))] == [[117, 144, 33]]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(intervals, "_FIT", 2**8)
        assert [x.tolist() for x in intervals._limbs(lv, np.arange(3))] == [[1, 1, 0], [5, 32, 33]]
        assert intervals._limbs([np.array([0, 100, 0])], np.arange(3)) is None  # 3*100 >= 2**8


@st.composite
def _corpora(draw):
    docs, preds = [], []
    for k in range(draw(st.integers(1, 3))):
        n = draw(st.integers(1, 20))

        def spans():
            out = []
            for _ in range(draw(st.integers(0, 7))):
                a = draw(st.integers(0, n - 1))
                out.append(Span(draw(st.sampled_from("AB")), a, draw(st.integers(a + 1, min(n, a + 4)))))
            return out

        docs.append(Document(f"d{k}", ("w",) * n, tuple(spans())))
        preds.append(spans())
    return docs, preds


@settings(max_examples=150, deadline=None)
@given(_corpora(), st.sampled_from(["E", "O(1,1)", "O(inf,inf)"]), st.sampled_from(["any", "one-to-one"]))
def test_reports_through_the_vectorised_dp_equal_the_plain_loop(corpus, rule, counting):
    """Whole reports (counts, slot errors, confusion table, statuses, partners) with every
    non-crossing matching solved by the vectorised DP equal those of the plain loop."""
    docs, preds = corpus

    def run(vec_min):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(assign, "_VEC_MIN", vec_min)
            r = score(reference=docs, prediction=preds, rule=rule, counting=counting)
        return (r.to_dict(), r.confusion_table(), list(r.items("reference")), list(r.items("prediction")))

    assert run(1) == run(10**9)


# --- the sparse general solver against the dense Hungarian it replaced -------------------------

def dense_hungarian(cost):
    """Min-cost assignment of every row (n <= m) to a distinct column on a dense matrix of
    exact integers; returns the column of each row. The O(n^3) solver iescore ran on every
    crossing component before the sparse one: kept here as the reference for graphs too
    large for the brute force."""
    n, m = len(cost), len(cost[0])
    u, v, p, way = [0] * (n + 1), [0] * (m + 1), [0] * (m + 1), [0] * (m + 1)
    for i in range(1, n + 1):
        p[0], j0 = i, 0
        minv = [None] * (m + 1)
        used = [False] * (m + 1)
        while True:
            used[j0] = True
            i0, delta, j1 = p[j0], None, 0
            for j in range(1, m + 1):
                if not used[j]:
                    cur = cost[i0 - 1][j - 1] - u[i0] - v[j]
                    if minv[j] is None or cur < minv[j]:
                        minv[j], way[j] = cur, j0
                    if delta is None or minv[j] < delta:
                        delta, j1 = minv[j], j
            for j in range(m + 1):
                if used[j]:
                    u[p[j]] += delta
                    v[j] -= delta
                else:
                    minv[j] -= delta
            j0 = j1
            if p[j0] == 0:
                break
        while j0:
            j1 = way[j0]
            p[j0] = p[j1]
            j0 = j1
    col = [0] * n
    for j in range(1, m + 1):
        if p[j]:
            col[p[j] - 1] = j - 1
    return col


def reference_optimum(u, v, levels) -> tuple[int, ...]:
    """The best level totals by one dense optimisation: the levels as one integer (each
    level weighted above every matching's total of the levels after it), solved by the
    dense Hungarian with a zero column per answer ("unmatched"), the totals read back."""
    n_e = len(u)
    base = 1 + n_e * max(max(lv) for lv in levels)
    w = [sum(int(lv[k]) * base ** (len(levels) - 1 - i) for i, lv in enumerate(levels)) for k in range(n_e)]
    answers, preds = sorted(set(u)), sorted(set(v))
    row = {x: i for i, x in enumerate(answers)}
    col = {y: j for j, y in enumerate(preds)}
    cost = [[0] * (len(answers) + len(preds)) for _ in answers]
    at = {}
    for k in range(n_e):
        r, c = row[u[k]], col[v[k]]
        if -w[k] < cost[r][c]:
            cost[r][c], at[(r, c)] = -w[k], k
    return _totals({at[(r, c)] for r, c in enumerate(dense_hungarian(cost)) if (r, c) in at}, levels)


@st.composite
def crossing_graphs(draw):
    """Spans of both sides that overlap among themselves (a span categorizer's), 8-30 a
    side, every overlapping pair an edge, levels with many ties."""
    def spans(n):
        out = []
        for _ in range(n):
            s = draw(st.integers(0, 25))
            out.append((s, s + draw(st.integers(1, 6))))
        return out

    a_spans, p_spans = spans(draw(st.integers(8, 30))), spans(draw(st.integers(8, 30)))
    edges = _overlap_edges(a_spans, p_spans)
    ida = draw(st.permutations(range(len(a_spans))))
    idp = draw(st.permutations(range(len(p_spans))))
    n = len(edges)
    levels = [[1] * n,
              draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)),
              draw(st.lists(st.integers(0, draw(st.sampled_from([0, 2, 50]))), min_size=n, max_size=n))]
    return ([ida[i] for i, _ in edges], [idp[j] for _, j in edges], levels, len(a_spans), len(p_spans),
            _ranks(a_spans, ida), _ranks(p_spans, idp))


@st.composite
def twin_graphs(draw):
    """Classes of twin answers and twin predictions (up to 6 classes of up to 5 nodes a
    side), each two classes joined by every pair or by none, a few pairs added or taken
    away (nodes that are almost twins), nodes ranked in any order, levels equal within a
    pair of classes or not: many equally good matchings."""
    sizes_a = draw(st.lists(st.integers(1, 5), min_size=1, max_size=6))
    sizes_p = draw(st.lists(st.integers(1, 5), min_size=1, max_size=6))
    cls_a = [c for c, k in enumerate(sizes_a) for _ in range(k)]
    cls_p = [c for c, k in enumerate(sizes_p) for _ in range(k)]
    joined = {(x, y) for x in range(len(sizes_a)) for y in range(len(sizes_p)) if draw(st.integers(0, 2))}
    flip = set(draw(st.lists(st.tuples(st.integers(0, len(cls_a) - 1), st.integers(0, len(cls_p) - 1)),
                             max_size=3)))
    edges = [(i, j) for i in range(len(cls_a)) for j in range(len(cls_p))
             if ((cls_a[i], cls_p[j]) in joined) != ((i, j) in flip)]
    by_class = draw(st.booleans())
    weight = {(x, y): draw(st.integers(0, 2)) for x in range(len(sizes_a)) for y in range(len(sizes_p))}
    n = len(edges)
    red = ([weight[(cls_a[i], cls_p[j])] for i, j in edges] if by_class
           else draw(st.lists(st.integers(0, 2), min_size=n, max_size=n)))
    levels = [[1] * n, red]
    return ([i for i, _ in edges], [j for _, j in edges], levels, len(cls_a), len(cls_p),
            draw(st.permutations(range(len(cls_a)))), draw(st.permutations(range(len(cls_p)))))


@settings(max_examples=200, deadline=None)
@given(case=st.one_of(crossing_graphs(), twin_graphs()))
def test_crossing_graphs_match_the_dense_reference(case):
    """Up to 30 answers and 30 predictions (too many for the brute force): the matching
    weighs the dense Hungarian's optimum, and does not depend on the numbering."""
    u, v, levels, n_u, n_v, ru, rv = case
    if not u:
        return
    got = _run(u, v, levels, n_u, n_v, ru, rv)
    assert len({u[k] for k in got}) == len({v[k] for k in got}) == len(got)
    assert _totals(got, levels) == reference_optimum(u, v, levels)
    _same_pairs(u, v, levels, n_u, n_v, ru, rv, got)


def _brute_gain(gains):
    best = 0
    edges = [(i, c, g) for i, gi in enumerate(gains) for c, g in gi.items()]
    for k in range(len(edges) + 1):
        for sel in itertools.combinations(edges, k):
            if len({i for i, _, _ in sel}) == k and len({c for _, c, _ in sel}) == k:
                best = max(best, sum(g for _, _, g in sel))
    return best


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 4), st.integers(1, 4), st.data())
def test_shortest_paths_optimum_and_potentials(n_rows, n_cols, data):
    """The sparse solver's matching weighs the brute-force optimum; its potentials are dual
    feasible (no negative reduced cost), tight on its matching, and tight on every edge of
    EVERY optimal matching: the fact the two-phase solver rests on (the tight edges hold
    all optimal matchings)."""
    gains = [{c: data.draw(st.integers(1, 4)) for c in range(n_cols) if data.draw(st.booleans())}
             for _ in range(n_rows)]
    gains = [gi for gi in gains if gi][:4] or [{0: 1}]
    col_of, u, v = paths._shortest_paths(gains, n_cols)
    got = sum(gains[i][c] for i, c in enumerate(col_of) if c >= 0)
    best = _brute_gain(gains)
    assert got == best
    for i, gi in enumerate(gains):
        for c, g in gi.items():
            assert -g - u[i] - v[c] >= 0
    assert all(-gains[i][c] == u[i] + v[c] for i, c in enumerate(col_of) if c >= 0)
    edges = [(i, c, g) for i, gi in enumerate(gains) for c, g in gi.items()]
    for k in range(len(edges) + 1):
        for sel in itertools.combinations(edges, k):
            if (len({i for i, _, _ in sel}) == k and len({c for _, c, _ in sel}) == k
                    and sum(g for _, _, g in sel) == best):
                assert all(-g == u[i] + v[c] for i, c, g in sel)


@pytest.mark.parametrize("late", [True, False])
def test_long_crossing_document(late):
    """5,000 answers of 3 tokens at every position, the predictions one token late
    (answers [k, k+3), predictions [k+1, k+4)) or one token early (the mirror image): one
    component of crossing pairs, cubic for the dense solver. Exact: every prediction but
    one equals an answer, TP = 4,999, and the two left over overlap only aligned spans:
    C = 4,999, D = 1, I = 1. O(1,1) one-to-one: the rule allows a prediction against an
    answer whose two boundaries differ by one at most, and the one matching of all 5,000
    pairs answer k with prediction k (the end answers have one partner, and so on inwards)."""
    n = 5000
    shift = (0, 1) if late else (1, 0)
    gold = tuple(Span("E", k + shift[0], k + 3 + shift[0]) for k in range(n))
    pred = [Span("E", k + shift[1], k + 3 + shift[1]) for k in range(n)]
    docs = [Document("d", ("w",) * (n + 4), gold)]
    r = score(reference=docs, prediction=[pred])
    d = r.to_dict()
    assert (d["overall"]["tp"], d["overall"]["support"], d["overall"]["predicted"]) == (n - 1, n, n)
    assert {k: d["slot_errors"][k] for k in "CSDI"} == {"C": n - 1, "S": 0, "D": 1, "I": 1}
    r = score(reference=docs, prediction=[pred], rule="O(1,1)", counting="one-to-one")
    d = r.to_dict()
    assert (d["overall"]["tp"], r.f1) == (n, 1.0)
    assert {k: d["slot_errors"][k] for k in "CSDI"} == {"C": n, "S": 0, "D": 0, "I": 0}
    pairs = {(i["start"], i["end"]) for i in r.items("prediction") if i["status"] == "TP"}
    assert len(pairs) == n


@pytest.mark.parametrize("n,width", [(5000, 3), (2000, 12)])
def test_long_crossing_document_every_overlap_allowed(n, width):
    """n answers [k, k+L) and predictions [k+1, k+1+L) (L = width) under O(inf,inf): every
    overlapping pair is allowed, so each answer meets 2L - 1 predictions (k-L .. k+L-2)
    and one component holds them all, its edges crossing.

    One-to-one: answer k with prediction k matches everyone, so TP = n and P = R = 1.
    The alignment (all pairs allowed, same label) first aligns all n, then maximises the
    overlapping tokens: prediction k + d against answer k overlaps L - |d + 1| tokens,
    and the d of a perfect matching sum to 0, so the total is at most nL - |sum(d + 1)| =
    n(L - 1), reached exactly when every d is -1 or more: every answer's partner starts
    at its own start or later, and every pair is correct (C = n)."""
    gold = tuple(Span("E", k, k + width) for k in range(n))
    pred = [Span("E", k + 1, k + 1 + width) for k in range(n)]
    docs = [Document("d", ("w",) * (n + width + 1), gold)]
    r = score(reference=docs, prediction=[pred], rule="O(inf,inf)", counting="one-to-one")
    d = r.to_dict()
    assert (d["overall"]["tp"], d["overall"]["support"], d["overall"]["predicted"]) == (n, n, n)
    assert (r.precision, r.recall, r.f1) == (1.0, 1.0, 1.0)
    assert {k: d["slot_errors"][k] for k in "CSDI"} == {"C": n, "S": 0, "D": 0, "I": 0}
    partners = [(i["start"], i["partner"]["start"]) for i in r.items("reference")]
    assert len({p for _, p in partners}) == n and all(p >= s for s, p in partners)
