"""Scorer states (iescore.scoring.state): bytes that merge into the report of one call,
and that refuse to load when they are not such bytes."""

from __future__ import annotations

import hashlib
import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from iescore import ConfigError, Document, InputError, Scorer, Span, Template, score, score_tags, score_templates
from iescore.scoring.state import load_state, merge_states, renumber
from test_streaming import tag_corpora

REF = [["B-PER", "I-PER", "O", "B-LOC"], ["O", "B-ORG"], ["B-PER", "O"], ["O", "O"]]
PRED = [["B-PER", "I-PER", "O", "O"], ["B-ORG", "I-ORG"], ["B-LOC", "O"], ["B-MISC", "O"]]
TOKS = [["Al", "Roth", "in", "Rome"], ["at", "IBM"], ["Ada", "x"], ["y", "z"]]
IDS = ["d0", "d1", "d2", "d3"]
CUTS = [(0, 1), (1, 1), (1, 3), (3, 4)]  # one shard empty


def _shards(keep, cuts=CUTS, ids=True, **options):
    out = []
    for a, b in cuts:
        s = Scorer(scheme="auto", **options)
        if a < b:
            s.add_tags(reference=REF[a:b], prediction=PRED[a:b], tokens=TOKS[a:b], doc_ids=IDS[a:b] if ids else None)
        out.append(load_state(s.to_state(keep=keep)))
    return out


@pytest.mark.parametrize("keep", ["items", "counts"])
@pytest.mark.parametrize("options", [{}, {"rule": "O(1,1)", "counting": "one-to-one"}, {"setting": "OBD"},
                                     {"mode": "match-best"}, {"mode": "one-per-string"}, {"detail": "prf"},
                                     {"beta": 0.5, "supertags": "PER=NE,LOC=NE", "token_weight": 0.25}])
def test_merged_states_equal_one_call(keep, options):
    one = score_tags(reference=REF, prediction=PRED, doc_ids=IDS, tokens=TOKS, **options)
    r = merge_states(_shards(keep, **options)).report()
    assert r.to_dict() == one.to_dict()
    if keep == "items":
        assert list(r.items()) == list(one.items()) and list(r.items("reference")) == list(one.items("reference"))
        assert r.per_document() == one.per_document()
    else:
        for view in (r.per_document, r.items, lambda: r.counts(doc="d1"), lambda: r.cells, lambda: list(r.doc_ids)):
            with pytest.raises(ConfigError, match="were not kept: this report was summed from counts"):
                view()
    # exact, by hand: PER [0,2) and ORG [1,2) found; LOC d0 missed; d1 predicts ORG [0,2);
    # d2 PER answered as LOC; d3 MISC inserted
    if not options:
        assert (r.overall.tp, r.overall.fp, r.overall.fn) == (1, 3, 3)


@pytest.mark.parametrize("keep", ["items", "counts"])
def test_numbered_documents_renumbered_by_the_driver(keep):
    one = score_tags(reference=REF, prediction=PRED)
    states, offset = [], 0
    for a, b in ((0, 2), (2, 2), (2, 4)):  # each shard numbers its documents from 0
        s = Scorer(scheme="auto")
        if a < b:
            s.add_tags(reference=REF[a:b], prediction=PRED[a:b])
        states.append(renumber(load_state(s.to_state(keep=keep)), offset))
        offset += b - a
    r = merge_states(states).report()
    assert r.to_dict() == one.to_dict()
    if keep == "items":
        assert r.doc_ids == one.doc_ids
    with pytest.raises(InputError, match="duplicate document id '0'"):  # not renumbered: 0, 1 twice
        merge_states([load_state(s.to_state(keep=keep)) for s in (_scorer(0, 2), _scorer(2, 4))])


def _scorer(a, b, **options):
    s = Scorer(scheme="auto", **options)
    s.add_tags(reference=REF[a:b], prediction=PRED[a:b])
    return s


def test_documents_templates_and_weights():
    a = Document("a", ("x", "y", "z"), (Span("X", 0, 2),), token_weights=(3, 1, 1), separator_weights=(2, 1))
    b = Document("b", ("u", "v"), (Span("Y", 1, 2),))
    pa_, pb = [Span("X", 1, 3, 0.5)], [Span("Y", 0, 2, 0.25)]
    one = score(reference=[a, b], prediction=[pa_, pb], mode="match-best")
    sa, sb = Scorer(mode="match-best"), Scorer(mode="match-best")
    sa.add(reference=[a], prediction=[pa_])
    sb.add(reference=[b], prediction=[pb])
    merged = Scorer.from_state(sa.to_state()).merge(Scorer.from_state(sb.to_state())).report()
    assert merged.to_dict() == one.to_dict() and list(merged.items()) == list(one.items())
    # per-t-unit weights are float sums per document: counts alone cannot reproduce them
    with pytest.raises(ConfigError, match="per-t-unit TS weights"):
        sa.to_state(keep="counts")
    ta = Template("t1", {"speaker": ["Al Roth"], "location": ["Wean Hall"]})
    tb = Template("t2", {"speaker": ["Ada"]})
    pa2, pb2 = Template("t1", {"speaker": ["Roth"]}), Template("t2", {"speaker": ["Ada"], "location": ["Hall"]})
    one = score_templates(reference=[ta, tb], prediction=[pa2, pb2], rule="O(0,1)")
    for keep in ("items", "counts"):
        parts = []
        for r, p in ((ta, pa2), (tb, pb2)):
            s = Scorer(setting="OBD", rule="O(0,1)")
            s.add(reference=[r], prediction=[p])
            parts.append(load_state(s.to_state(keep=keep)))
        got = merge_states(parts).report()
        assert got.to_dict() == one.to_dict()
        # O(0,1) by hand: "Roth" covers "Al Roth" but for one missing token: tp; "Ada" tp;
        # location of t1 missed (fn), location "Hall" of t2 inserted (fp)
        assert (got.overall.tp, got.overall.fp, got.overall.fn) == (2, 1, 1)


@settings(max_examples=60, deadline=None)
@given(tag_corpora(), st.lists(st.integers(0, 6), max_size=3), st.sampled_from(["items", "counts"]))
def test_any_split_merges_like_one_call_or_refuses_like_merge(docs, cuts, keep):
    ref, pred = [r for r, _ in docs], [p for _, p in docs]
    ids = [f"d{k}" for k in range(len(docs))]
    bounds = sorted({0, len(docs), *(min(c, len(docs)) for c in cuts)})
    scorers = []
    try:
        one = score_tags(reference=ref, prediction=pred, doc_ids=ids, scheme="auto")
        for a, b in zip(bounds, bounds[1:]):
            s = Scorer(scheme="auto")
            s.add_tags(reference=ref[a:b], prediction=pred[a:b], doc_ids=ids[a:b])
            scorers.append(s)
    except InputError:  # tags that no scheme reads (e.g. E- among BILOU tags): no report to compare
        return
    try:
        direct = scorers[0]
        for s in scorers[1:]:
            direct = direct.merge(s)
    except ConfigError:  # the merge rules refuse: so must the states
        with pytest.raises(ConfigError, match="pass scheme= explicitly"):
            merge_states([load_state(s.to_state(keep=keep)) for s in scorers])
        return
    r = merge_states([load_state(s.to_state(keep=keep)) for s in scorers]).report()
    assert r.to_dict() == direct.report().to_dict() == one.to_dict()


def _reseal(data: bytes) -> bytes:
    """``data`` with a fresh checksum (a state altered on purpose, not in transit)."""
    body = data[:-32]
    return body + hashlib.blake2b(body, digest_size=32).digest()


def test_corrupt_or_foreign_states_are_input_errors():
    good = _scorer(0, 2).to_state()
    with pytest.raises(InputError, match="checksum .* does not match"):
        load_state(good[:100] + bytes([good[100] ^ 1]) + good[101:])
    with pytest.raises(InputError, match="checksum"):
        load_state(good[:-1])
    with pytest.raises(InputError, match="not an iescore scorer state"):
        load_state(b"PK\x03\x04" + good[4:])
    with pytest.raises(InputError, match="not an iescore scorer state"):
        load_state(b"")
    version = struct.pack("<I", 99)
    with pytest.raises(InputError, match="format version 99; this iescore reads version 1"):
        load_state(_reseal(good[:8] + version + good[12:]))
    head_len = struct.unpack("<Q", good[12:20])[0]
    header = good[20 : 20 + head_len]
    other = header.replace(b'"iescore":"0.1.0"', b'"iescore":"9.9.9"')
    with pytest.raises(InputError, match="written by iescore '9.9.9'; this is iescore '0.1.0'"):
        load_state(_reseal(good[:20] + other + good[20 + head_len :]))
    shape = header.replace(b'"n_docs":2', b'"n_docs":3', 1)
    assert shape != header
    with pytest.raises((InputError, ValueError)):
        load_state(_reseal(good[:20] + shape + good[20 + head_len :]))
    with pytest.raises(ConfigError, match="keep='counts' holds summed counts"):
        Scorer.from_state(_scorer(0, 2).to_state(keep="counts"))
    with pytest.raises(ConfigError, match="unknown keep 'all'; valid: 'counts' or 'items'|unknown keep 'all'"):
        _scorer(0, 2).to_state(keep="all")
    with pytest.raises(ConfigError, match="keep='items' and keep='counts'"):
        merge_states([load_state(_scorer(0, 2).to_state()), load_state(_scorer(2, 4).to_state(keep="counts"))])


def test_counts_refuse_what_the_scorers_refuse():
    # different options
    a, b = _scorer(0, 2), _scorer(2, 4, rule="O(1,1)")
    with pytest.raises(ConfigError, match="cannot merge scorers with different options"):
        merge_states([load_state(x.to_state(keep="counts")) for x in (a, b)])
    # a document id in two shards, named (hashes of ids are compared)
    s1, s2 = Scorer(), Scorer()
    s1.add_tags(reference=REF[:1], prediction=PRED[:1], doc_ids=["same"])
    s2.add_tags(reference=REF[1:2], prediction=PRED[1:2], doc_ids=["same"])
    with pytest.raises(InputError, match="duplicate document id"):
        merge_states([load_state(x.to_state(keep="counts")) for x in (s1, s2)])
    with pytest.raises(InputError, match="duplicate document id 'same'"):
        merge_states([load_state(x.to_state()) for x in (s1, s2)])


def test_a_counts_state_is_small():
    rng = np.random.default_rng(0)
    tags = ["O", "B-PER", "I-PER", "B-LOC"]
    ref = [list(rng.choice(tags, 20)) for _ in range(2000)]
    pred = [list(rng.choice(tags, 20)) for _ in range(2000)]
    s = Scorer(scheme="IOB2")
    s.add_tags(reference=ref, prediction=pred)
    # numbered documents: the counts are a few hundred bytes whatever the number of items
    assert len(s.to_state(keep="counts")) < 4000 < len(s.to_state(keep="items")) // 10
