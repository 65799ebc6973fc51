"""Property tests for the algebra (SPEC §2-§5): counts add, C+S+D = N, rule
monotonicity, identities, order invariance, streaming == one-shot == shards."""

from __future__ import annotations

import itertools
import random

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from iescore import Document, Scorer, Span, score
from iescore.config import Rule
from iescore.match.rules import sequence_match

LABELS = ("A", "B")


@st.composite
def span_lists(draw, n_tokens, max_spans=6):
    out = []
    for _ in range(draw(st.integers(0, max_spans))):
        a = draw(st.integers(0, n_tokens - 1))
        b = draw(st.integers(a + 1, min(n_tokens, a + 5)))
        out.append(Span(draw(st.sampled_from(LABELS)), a, b, draw(st.one_of(st.none(), st.floats(0, 1)))))
    return out


@st.composite
def corpora(draw, max_docs=4):
    docs, preds = [], []
    for k in range(draw(st.integers(1, max_docs))):
        n = draw(st.integers(1, 15))
        toks = tuple(draw(st.lists(st.sampled_from("abc"), min_size=n, max_size=n)))
        docs.append(Document(f"d{k}", toks, tuple(draw(span_lists(n)))))
        preds.append(draw(span_lists(n)))
    return docs, preds


RULES = ["E", "C(0)", "C(1)", "C(2)", "O(0,0)", "O(1,0)", "O(1,1)", "O(2,2)", "O(inf,inf)"]
SETTINGS = dict(max_examples=150, deadline=None)


def counts(docs, preds, **kw):
    return score(reference=docs, prediction=preds, **kw)


@settings(**SETTINGS)
@given(corpora(), st.sampled_from(RULES), st.sampled_from(["any", "one-to-one"]))
def test_slot_identities_and_error_ordering(corpus, rule, counting):
    docs, preds = corpus
    r = counts(docs, preds, rule=rule, counting=counting)
    c = r.overall
    assert c.N == sum(len(d.spans) for d in docs)  # every answer is C, S or D
    assert c.M == sum(len(p) for p in preds)  # every prediction is C, S or I
    d = r.to_dict()["slot_errors"]
    if d["ser"] is not None:
        assert d["ser"] >= d["err"] - 1e-12
        assert d["err"] >= d["e"] - 1e-12
    if counting == "one-to-one":
        assert (c.tp, c.fp, c.fn) == (c.C, c.S + c.I, c.S + c.D)


@settings(**SETTINGS)
@given(corpora(), st.sampled_from(["any", "one-to-one"]), st.sampled_from(["AO", "OBD"]))
def test_rules_are_monotone(corpus, counting, setting):
    docs, preds = corpus
    tp = {r: counts(docs, preds, rule=r, counting=counting, setting=setting).overall.tp for r in ["E", "C(1)", "O(1,1)", "O(2,2)", "O(inf,inf)"]}
    assert tp["E"] <= tp["C(1)"] <= tp["O(1,1)"] <= tp["O(2,2)"] <= tp["O(inf,inf)"]


@settings(**SETTINGS)
@given(corpora(), st.integers(0, 3), st.sampled_from(["any", "one-to-one"]), st.sampled_from(["AO", "OBD"]))
def test_rule_identities(corpus, e, counting, setting):
    docs, preds = corpus
    def key(rule):
        return counts(docs, preds, rule=rule, counting=counting, setting=setting).overall
    assert key("C(0)") == key("E")
    assert key(f"O({e},0)") == key(f"C({e})")


@settings(**SETTINGS)
@given(corpora(), st.sampled_from(RULES), st.sampled_from(["any", "one-to-one"]),
       st.sampled_from(["match-all", "match-best", "one-per-string"]), st.randoms(use_true_random=False))
def test_order_invariance(corpus, rule, counting, mode, rnd):
    docs, preds = corpus
    if mode == "match-best" and not _no_mixed(preds):
        return  # mixed confidences are an error, tested elsewhere
    kw = dict(rule=rule, counting=counting, mode=mode)
    base = counts(docs, preds, **kw)
    perm = list(range(len(docs)))
    rnd.shuffle(perm)
    docs2, preds2 = [], []
    for k in perm:
        d = docs[k]
        sp = list(d.spans)
        rnd.shuffle(sp)
        docs2.append(Document(d.id, d.tokens, tuple(sp)))
        p = list(preds[k])
        rnd.shuffle(p)
        preds2.append(p)
    other = counts(docs2, preds2, **kw)
    assert base.per_label == other.per_label
    assert base.per_document() == other.per_document()
    assert base.confusion_table() == other.confusion_table()


def _no_mixed(preds):
    has = [s.score is not None for p in preds for s in p]
    return all(has) or not any(has)


@settings(**SETTINGS)
@given(corpora(max_docs=5), st.sampled_from(RULES), st.sampled_from(["any", "one-to-one"]), st.integers(0, 5),
       st.lists(st.booleans(), max_size=5))
def test_counts_add_and_shards_merge(corpus, rule, counting, cut, weighted):
    docs, preds = corpus
    # some documents carry per-t-unit weights (integers: sums of them are exact in any order)
    docs = [Document(d.id, d.tokens, d.spans, token_weights=tuple(i % 3 for i in range(len(d.tokens))))
            if k < len(weighted) and weighted[k] else d for k, d in enumerate(docs)]
    cut = min(cut, len(docs))
    whole = counts(docs, preds, rule=rule, counting=counting)
    a = Scorer(rule=rule, counting=counting)
    a.add(reference=docs[:cut], prediction=preds[:cut])
    b = Scorer(rule=rule, counting=counting)
    b.add(reference=docs[cut:], prediction=preds[cut:])
    merged = a.merge(b).report()
    assert merged.to_dict() == whole.to_dict()
    # streaming, one document at a time
    s = Scorer(rule=rule, counting=counting)
    for d, p in zip(docs, preds):
        s.add(reference=[d], prediction=[p])
    assert s.report().to_dict() == whole.to_dict()
    # per-label counts are the sums of the shards' counts
    ra, rb = a.report(), b.report()
    for lab in whole.labels:
        ca = ra.counts(lab) if lab in ra.labels else None
        cb = rb.counts(lab) if lab in rb.labels else None
        parts = [c for c in (ca, cb) if c is not None]
        tot = sum(parts[1:], parts[0])
        assert (tot.tp, tot.fp, tot.fn, tot.C, tot.S, tot.D, tot.I) == (
            whole.counts(lab).tp, whole.counts(lab).fp, whole.counts(lab).fn,
            whole.counts(lab).C, whole.counts(lab).S, whole.counts(lab).D, whole.counts(lab).I,
        )


def _ok(rule, r, p):
    """The AO rule written directly from SPEC §2.1 (1-based inclusive in the spec; half-open here)."""
    i, j, ik, jk = r.start, r.end, p.start, p.end
    if r.label != p.label or not (ik < j and i < jk):
        return False
    el, er, ml, mr = max(0, i - ik), max(0, jk - j), max(0, ik - i), max(0, j - jk)
    if rule.kind == "exact":
        return ik == i and jk == j
    if rule.kind == "contain":
        return ik <= i and j <= jk and (jk - ik) - (j - i) <= rule.e
    return el + er <= rule.e and ml + mr <= rule.m


def _max_matching(rs, ps, ok):
    best = 0
    small, big, flip = (rs, ps, False) if len(rs) <= len(ps) else (ps, rs, True)
    for perm in itertools.permutations(range(len(big)), len(small)):
        n = sum(ok(big[b], small[a]) if flip else ok(small[a], big[b]) for a, b in enumerate(perm))
        best = max(best, n)
    return best


@settings(max_examples=200, deadline=None)
@given(corpora(max_docs=1), st.sampled_from(RULES))
def test_any_and_one_to_one_against_brute_force(corpus, rule_text):
    docs, preds = corpus
    rule = Rule.parse(rule_text)
    d, p = docs[0], preds[0]
    any_tp = sum(any(_ok(rule, r, q) for r in d.spans) for q in p)
    any_fn = sum(not any(_ok(rule, r, q) for q in p) for r in d.spans)
    c = counts(docs, preds, rule=rule_text, counting="any").overall
    assert (c.tp, c.fp, c.fn) == (any_tp, len(p) - any_tp, any_fn)
    m = _max_matching(list(d.spans), list(p), lambda r, q: _ok(rule, r, q))
    c1 = counts(docs, preds, rule=rule_text, counting="one-to-one").overall
    assert (c1.tp, c1.fp, c1.fn) == (m, len(p) - m, len(d.spans) - m)
    # Makhoul: correct pairs first (so C is the one-to-one TP), then as many aligned pairs as remain
    overlap = _max_matching(list(d.spans), list(p), lambda r, q: r.start < q.end and q.start < r.end)
    assert c1.C == m
    assert m <= c1.C + c1.S <= overlap


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from("abc"), min_size=1, max_size=6), st.lists(st.sampled_from("abc"), min_size=1, max_size=6),
       st.integers(0, 3), st.integers(0, 3))
def test_obd_overlap_rule_against_definition(p, a, e, m):
    """SPEC §2.2 O(e,m) written as: some alignment of p against a with a non-empty overlap,
    at most e extra and at most m missing tokens."""
    p, a = tuple(p), tuple(a)
    n, k = len(p), len(a)
    expected = False
    # place p at offset d relative to a; overlap must be a matching contiguous run covering the intersection
    for d in range(-n + 1, k):
        lo, hi = max(0, d), min(k, d + n)
        if hi <= lo:
            continue
        if any(p[x - d] != a[x] for x in range(lo, hi)):
            continue
        extra = n - (hi - lo)
        missing = k - (hi - lo)
        if extra <= e and missing <= m:
            expected = True
    assert sequence_match(p, a, Rule("overlap", e, m))[0] == expected


def test_documents_without_entities_are_defined():
    d = Document("empty", ("a", "b"))
    r = score(reference=[d], prediction=[[]])
    assert r.labels == ()
    assert (r.precision, r.recall, r.f) == (None, None, None)
    assert r.to_dict()["slot_errors"]["ser"] is None


def test_random_documents_seeded_smoke():
    rng = random.Random(7)
    docs, preds = [], []
    for k in range(50):
        n = rng.randint(5, 40)
        sp = []
        for _ in range(rng.randint(0, 5)):
            a = rng.randrange(n)
            sp.append(Span(rng.choice(LABELS), a, min(n, a + rng.randint(1, 4))))
        docs.append(Document(str(k), tuple("x" * n), tuple(sp)))
        preds.append([Span(s.label, s.start, s.end) for s in sp if rng.random() < 0.8])
    r = score(reference=docs, prediction=preds, rule="E", counting="one-to-one")
    assert r.overall.fp == 0
    assert r.overall.tp == sum(len(p) for p in preds)


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 6), st.integers(1, 6), st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5),
                                                             st.integers(0, 2), st.integers(0, 3)), max_size=12),
       st.integers(0, 40))
def test_matching_is_maximal_in_lexicographic_weight(n_u, n_v, raw, extra_nodes):
    """``assign.match`` against brute force on small graphs: a one-to-one subset of edges
    whose level totals, compared first level first, are the best of all one-to-one subsets;
    ``components`` against a union-find (isolated nodes around, so both numberings run)."""

    from iescore.match.assign import components, match

    edges = sorted({(a % n_u, b % n_v): (x, y) for a, b, x, y in raw}.items())
    u = np.array([e[0][0] for e in edges], dtype=np.int64)
    v = np.array([e[0][1] for e in edges], dtype=np.int64)
    levels = [np.ones(len(edges), dtype=np.int64), np.array([e[1][0] for e in edges]), np.array([e[1][1] for e in edges])]
    n_u2, n_v2 = n_u + extra_nodes, n_v  # nodes without edges
    chosen = match(u, v, levels, n_u2, n_v2)
    picked = np.flatnonzero(chosen)
    assert len(set(u[picked].tolist())) == len(picked) and len(set(v[picked].tolist())) == len(picked)

    def total(sel):
        return tuple(int(lv[list(sel)].sum()) for lv in levels)

    best = max(
        (total(sel) for k in range(len(edges) + 1) for sel in itertools.combinations(range(len(edges)), k)
         if len({u[i] for i in sel}) == k and len({v[i] for i in sel}) == k),
        default=(0, 0, 0),
    )
    assert total(picked) == best
    # components: edges share an id exactly when a union-find joins them
    parent = list(range(n_u2 + n_v2))

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in zip(u.tolist(), v.tolist()):
        parent[find(a)] = find(b + n_u2)
    comp = components(u, v, n_u2, n_v2)
    roots = [find(a) for a in u.tolist()]
    for i in range(len(edges)):
        for j in range(len(edges)):
            assert (comp[i] == comp[j]) == (roots[i] == roots[j])


def test_a_documents_alignment_does_not_depend_on_its_batch():
    """Two documents whose alignments both cross (identical answers, overlapping
    predictions): the error categories and partners are the same whether the documents
    are scored in one batch or one at a time (the solver's shuffled order of the rows it
    adds was once drawn over the whole batch, so a tie went another way in each)."""
    a = lambda s, e: Span("A", s, e)  # noqa: E731
    docs = [Document("d0", ("a", "a"), (a(0, 2),) * 5 + (a(1, 2),)), Document("d1", ("a",), (a(0, 1), a(0, 1)))]
    preds = [[a(0, 2), Span("B", 1, 2), a(0, 1)], [a(0, 1), Span("B", 0, 1)]]
    whole = score(reference=docs, prediction=preds)
    s = Scorer()
    for d, p in zip(docs, preds):
        s.add(reference=[d], prediction=[p])
    alone = s.report()
    assert alone.to_dict() == whole.to_dict()
    assert list(alone.items("prediction")) == list(whole.items("prediction"))
    assert list(alone.items("reference")) == list(whole.items("reference"))
