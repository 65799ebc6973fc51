"""Streaming and merged shards never differ silently from one call."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from iescore import ConfigError, Document, InputError, Scorer, Span, score, score_tags
from iescore.scoring.state import load_state, merge_states


def test_shards_with_different_detected_schemes_do_not_merge():
    iob1 = [["O", "I-PER", "I-PER"]]  # a chunk starting with I-: IOB1
    iob2 = [["O", "B-PER", "O"]]  # B- after O: IOB2
    # one call detects IOB1 for both; under IOB1 a B- after O is ill-formed and discarded:
    # reference chunks PER[1,3) and (discarded) PER[1,2); the prediction is the reference: tp = 1
    one = score_tags(reference=iob1 + iob2, prediction=iob1 + iob2, repair="discard")
    assert one.overall.tp == 1 and "|scheme:IOB1|" in one.signature
    a, b = Scorer(scheme="auto", repair="discard"), Scorer(scheme="auto", repair="discard")
    a.add_tags(reference=iob1, prediction=iob1, doc_ids=["s1"])
    b.add_tags(reference=iob2, prediction=iob2, doc_ids=["s2"])
    # each shard decoded with its own scheme would give tp = 1 + 1 = 2
    with pytest.raises(ConfigError, match=r"decoded as IOB1 \(batch 1 \(document 's1'\)\) with one whose tags "
                                          r"were decoded as IOB2 \(batch 1 \(document 's2'\)\); pass scheme="):
        a.merge(b)
    with pytest.raises(ConfigError, match="decoded as IOB2"):
        b.merge(a)


def test_a_stream_is_fixed_by_its_first_batch_with_chunks():
    iob1 = [["O", "I-PER", "I-PER"]]
    iob2 = [["O", "B-PER", "O"]]
    one = score_tags(reference=iob1 + iob2, prediction=iob1 + iob2, repair="discard")
    # IOB1 first: the IOB2-looking batch is decoded as IOB1, as one call does
    s = Scorer(scheme="auto", repair="discard")
    s.add_tags(reference=iob1, prediction=iob1)
    s.add_tags(reference=iob2, prediction=iob2)
    assert s.report().to_dict() == one.to_dict()
    # IOB2 first: the IOB1 batch cannot be decoded as IOB2 without differing from one call
    s = Scorer(scheme="auto", repair="discard")
    s.add_tags(reference=iob2, prediction=iob2)
    with pytest.raises(ConfigError, match=r"batch 2 \(document '1'\) has tags of scheme IOB1, but batch 1 "
                                          r"\(document '0'\) fixed scheme IOB2; .*pass scheme= explicitly"):
        s.add_tags(reference=iob1, prediction=iob1)
    assert len(s.report().doc_ids) == 1  # the refused batch left nothing behind
    # a batch without chunks fixes nothing
    s = Scorer(scheme="auto", repair="discard")
    s.add_tags(reference=[["O", "O"]], prediction=[["O", "O"]])
    s.add_tags(reference=iob1, prediction=iob1)
    s.add_tags(reference=iob2, prediction=iob2)
    assert "|scheme:IOB1|" in s.report().signature
    # an explicit scheme is never questioned
    s = Scorer(scheme="IOB2", repair="discard")
    s.add_tags(reference=iob2, prediction=iob2)
    s.add_tags(reference=iob1, prediction=iob1)
    # under IOB2 the chunk I-PER I-PER starts with I- after O: ill-formed, discarded on both
    # sides; what is left is iob2's PER[1,2): tp = 1
    r = s.report()
    assert r.overall.tp == 1 and r.repairs["reference"] == {"discarded": 1}


TAGS = ["O", "O", "B-A", "I-A", "B-B", "I-B", "E-A", "S-B", "U-A", "L-B", "M-A"]


@st.composite
def tag_corpora(draw):
    alphabet = draw(st.sampled_from([TAGS[:6], TAGS[:8], TAGS]))  # B/I only, with E/S, with U/L/M
    docs = []
    for _ in range(draw(st.integers(1, 6))):
        n = draw(st.integers(1, 6))
        docs.append((draw(st.lists(st.sampled_from(alphabet), min_size=n, max_size=n)),
                     draw(st.lists(st.sampled_from(alphabet), min_size=n, max_size=n))))
    return docs


def _outcome(fn):
    try:
        return fn().to_dict()
    except InputError:  # repair="strict": the first ill-formed chunk found may differ
        return "InputError"


# the drawn corpora mix schemes: scheme='auto' warns of the mix (tests/test_slips.py checks it)
@pytest.mark.filterwarnings("ignore:scheme='auto':iescore.errors.IEScoreWarning")
@settings(max_examples=300, deadline=None)
@given(tag_corpora(), st.lists(st.integers(0, 6), max_size=3), st.sampled_from(["conlleval", "strict", "discard"]),
       st.sampled_from(["auto", "IOB2"]))
def test_shards_and_streams_equal_one_call_or_refuse(docs, cuts, repair, scheme):
    ref = [r for r, _ in docs]
    pred = [p for _, p in docs]
    ids = [f"d{k}" for k in range(len(docs))]
    one = _outcome(lambda: score_tags(reference=ref, prediction=pred, doc_ids=ids, repair=repair, scheme=scheme))
    bounds = sorted({0, len(docs), *(min(c, len(docs)) for c in cuts)})
    pieces = list(zip(bounds, bounds[1:]))

    def streamed():
        s = Scorer(scheme=scheme, repair=repair)
        for a, b in pieces:
            s.add_tags(reference=ref[a:b], prediction=pred[a:b], doc_ids=ids[a:b])
        return s.report()

    def merged():
        out = None
        for a, b in pieces:
            s = Scorer(scheme=scheme, repair=repair)
            s.add_tags(reference=ref[a:b], prediction=pred[a:b], doc_ids=ids[a:b])
            out = s if out is None else out.merge(s)
        return out.report()

    def totals():  # summed batch by batch, no documents kept (the CLI's path); an empty batch adds nothing
        s = Scorer(scheme=scheme, repair=repair, totals_only=True)
        for a, b in [(0, 0), *pieces]:
            s.add_tags(reference=ref[a:b], prediction=pred[a:b], doc_ids=ids[a:b])
        return s.report()

    def counts():  # shards' summed counts as states, merged
        states = []
        for a, b in pieces:
            s = Scorer(scheme=scheme, repair=repair)
            s.add_tags(reference=ref[a:b], prediction=pred[a:b], doc_ids=ids[a:b])
            states.append(load_state(s.to_state(keep="counts")))
        return merge_states(states).report()

    for run in (streamed, merged, totals, counts):
        try:
            got = _outcome(run)
        except ConfigError as exc:
            assert "pass scheme=" in str(exc) and scheme == "auto"
            continue
        assert got == one


def test_weighted_and_unweighted_shards_merge_like_one_call():
    a = Document("a", ("x", "y", "z"), (Span("X", 0, 2),), token_weights=(3, 1, 1), separator_weights=(2, 1))
    b = Document("b", ("u", "v"), (Span("Y", 1, 2),))
    pa, pb = [Span("X", 1, 3)], [Span("Y", 0, 2)]
    one = score(reference=[a, b], prediction=[pa, pb], token_weight=0.1)
    sa, sb = Scorer(token_weight=0.1), Scorer(token_weight=0.1)
    sa.add(reference=[a], prediction=[pa])
    sb.add(reference=[b], prediction=[pb])
    assert sa.merge(sb).report().to_dict() == one.to_dict()  # exactly, to the last bit
    assert sb.merge(sa).report().signature == one.signature  # the digest of weights is order-free
    y = one.to_dict()["ts"]["per_label"]["Y"]["ts"]
    # Y in b (token weight 0.1, separator 1): tokens TP v (0.1), FP u (0.1); separators FP u-v (1);
    # t-units: a 5 + 3, b 2 * 0.1 + 1; TN = 9.2 - (0.1 + 1.1)
    assert (y["tp"], y["fp"], y["fn"], y["tn"]) == pytest.approx((0.1, 1.1, 0, 8))


def test_fractional_per_unit_weights_merge_to_the_same_bits():
    """Per-t-unit weights such as 0.1 and 0.7 are not exact in binary: a document's weighted
    sums must not depend on the documents before it, or shards differ from one call in the
    last bits (prefix sums restart at every document)."""
    rng = np.random.default_rng(5)
    docs, preds = [], []
    for k in range(6):
        n = 7
        tw = tuple(float(x) for x in rng.choice([0.1, 0.7, 0.3, 1.1], n))
        sw = tuple(float(x) for x in rng.choice([0.2, 0.9, 0.35], n - 1))
        docs.append(Document(f"d{k}", tuple("abcdefg"), (Span("X", 1, 4), Span("Y", 5, 7)),
                             token_weights=tw, separator_weights=sw))
        preds.append([Span("X", 2, 5), Span("Y", 5, 6)])
    one = score(reference=docs, prediction=preds)
    parts = []
    for lo, hi in ((0, 1), (1, 4), (4, 6)):
        s = Scorer()
        s.add(reference=docs[lo:hi], prediction=preds[lo:hi])
        parts.append(s)
    merged = parts[0].merge(parts[1]).merge(parts[2]).report()
    assert merged.to_dict() == one.to_dict()
