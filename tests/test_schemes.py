"""Tag decoding (SPEC §7): every scheme, the three repair policies, the pitfall catalogue."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from iescore import InputError, score_tags
from iescore.decode import SCHEMES, decode_tags, encode_spans


def spans(chunks):
    return [(chunks.labels[t], int(s), int(e)) for t, s, e in zip(chunks.type, chunks.start, chunks.end)]


def prf(reference, prediction, **kw):
    r = score_tags(reference=reference, prediction=prediction, **kw)
    c = r.overall
    return c.tp, c.fp, c.fn


# --- the pitfall catalogue (research/peers.md §5.1) ----------------------------------
def test_p01_i_after_o_is_repaired_by_conlleval_counted_and_refused_by_strict():
    ref, pred = [["B-PER", "I-PER", "O"]], [["I-PER", "I-PER", "O"]]
    r = score_tags(reference=ref, prediction=pred, scheme="IOB2")
    assert (r.overall.tp, r.f) == (1, 1.0)
    assert r.repairs["prediction"] == {"repaired": 1}
    with pytest.raises(InputError, match=r"ill-formed IOB2 chunk at document '0' \(prediction\), token 0: tags \['I-PER', 'I-PER', 'O'\]"):
        score_tags(reference=ref, prediction=pred, scheme="IOB2", repair="strict")
    d = score_tags(reference=ref, prediction=pred, scheme="IOB2", repair="discard")
    assert (d.overall.tp, d.overall.fp, d.overall.fn) == (0, 0, 1)
    assert d.repairs["prediction"] == {"discarded": 1}


def test_p02_type_switch_splits():
    assert prf([["B-PER", "I-PER", "O"]], [["B-PER", "I-LOC", "O"]], scheme="IOB2") == (0, 2, 1)


def test_p03_iobes_single_tags_split():
    assert prf([["S-PER", "S-PER"]], [["B-PER", "E-PER"]], scheme="IOBES") == (0, 1, 2)


def test_p04_iobes_end_then_begin():
    ref, pred = [["B-MISC", "E-MISC", "B-MISC", "E-MISC"]], [["B-MISC", "I-MISC", "I-MISC", "E-MISC"]]
    # by the scheme's meaning: 2 gold, 1 predicted, no match
    assert prf(ref, pred, scheme="IOBES", repair="strict") == (0, 1, 2)
    # conlleval's own rules (SPEC §7) merge E-X B-X, and the merge is counted as a repair
    r = score_tags(reference=ref, prediction=pred, scheme="IOBES", repair="conlleval")
    assert (r.overall.tp, r.overall.fp, r.overall.fn) == (1, 0, 0)
    assert r.repairs["reference"] == {"repaired": 1}


def test_p05_bilou():
    ref, pred = [["U-PER", "U-PER"]], [["U-PER", "B-PER"]]
    with pytest.raises(InputError, match="ill-formed BILOU chunk"):
        score_tags(reference=ref, prediction=pred, scheme="BILOU", repair="strict")
    r = score_tags(reference=ref, prediction=pred, scheme="BILOU", repair="discard")
    assert (r.overall.tp, r.overall.fp, r.overall.fn) == (1, 0, 1)
    assert r.f == pytest.approx(2 / 3)


def test_p06_iob1_b_between_same_type_chunks():
    assert prf([["I-PER", "B-PER"]], [["I-PER", "I-PER"]], scheme="IOB1") == (0, 1, 2)


def test_p07_iob1_detected_and_scored_like_conlleval():
    r = score_tags(reference=[["I-NP", "I-NP", "O", "I-NP", "B-NP"]], prediction=[["I-NP", "I-NP", "O", "I-NP", "I-NP"]])
    assert "scheme:IOB1" in r.signature
    assert r.f == pytest.approx(0.4)


def test_p09_unprefixed_labels_need_io():
    with pytest.raises(InputError, match=r"document '0' \(reference\), token 0: invalid tag 'PER': not a tag of scheme IOB2; "
                       r"valid forms: 'B-<label>', 'I-<label>' or 'O'"):
        score_tags(reference=[["PER", "PER", "O"]], prediction=[["PER", "O", "O"]], scheme="IOB2")
    assert spans(decode_tags([["PER", "PER", "O", "LOC"]], scheme="IO")) == [("PER", 0, 2), ("LOC", 3, 4)]


def test_p10_dangling_inside_after_other_label():
    assert spans(decode_tags([["B-LOC", "I-PER"]], scheme="IOB2")) == [("LOC", 0, 1), ("PER", 1, 2)]


def test_p11_hyphenated_types_split_at_first_hyphen():
    assert spans(decode_tags([["B-ORG-X", "I-ORG-X", "B-ORG"]], scheme="IOB2")) == [("ORG-X", 0, 2), ("ORG", 2, 3)]


def test_p12_chunks_never_cross_sequences():
    assert spans(decode_tags([["B-PER", "I-PER"], ["I-PER", "O"]], scheme="IOB1")) == [("PER", 0, 2), ("PER", 2, 3)]


def test_empty_tag_is_an_error():
    with pytest.raises(InputError, match=r"document '0' \(reference\), token 1: invalid tag '': an empty tag"):
        score_tags(reference=[["B-PER", ""]], prediction=[["B-PER", "O"]], scheme="IOB2")


@pytest.mark.parametrize(
    "scheme, tags, expected",
    [
        ("IOE1", ["I-X", "E-X", "I-X", "O"], [("X", 0, 2), ("X", 2, 3)]),
        ("IOE2", ["I-X", "E-X", "E-X", "O"], [("X", 0, 2), ("X", 2, 3)]),
        ("IOBES", ["B-X", "I-X", "E-X", "S-X", "S-Y"], [("X", 0, 3), ("X", 3, 4), ("Y", 4, 5)]),
        ("BMES", ["B-X", "M-X", "E-X", "S-X"], [("X", 0, 3), ("X", 3, 4)]),
        ("BILOU", ["B-X", "L-X", "U-X", "B-X", "I-X", "L-X"], [("X", 0, 2), ("X", 2, 3), ("X", 3, 6)]),
        ("IOB1", ["I-X", "B-X", "I-X", "O", "I-Y"], [("X", 0, 1), ("X", 1, 3), ("Y", 4, 5)]),
    ],
)
def test_well_formed_sequences_decode_alike_under_every_policy(scheme, tags, expected):
    for repair in ("conlleval", "strict", "discard"):
        ch = decode_tags([tags], scheme=scheme, repair=repair)
        assert spans(ch) == expected, repair
        assert ch.n_repaired == 0


def test_unknown_scheme_lists_choices():
    with pytest.raises(ValueError, match="valid schemes: 'IO', 'IOB1'"):
        decode_tags([["O"]], scheme="IOB3")


# --- conlleval oracle: bench/peers.py transcribes conlleval.pl's chunk rules -------------
def conlleval_counts(ref_sents, pred_sents):
    """(gold phrases, found phrases, correct phrases), as conlleval.pl counts them."""
    from peers import conlleval_chunks

    gold = found = correct = 0
    for r, p in zip(ref_sents, pred_sents):
        g, f = conlleval_chunks(r), conlleval_chunks(p)
        gold, found, correct = gold + len(g), found + len(f), correct + len(set(g) & set(f))
    return gold, found, correct


@pytest.mark.parametrize(
    "scheme, prefixes",
    [("IOB2", "BI"), ("IOB1", "BI"), ("IOE2", "IE"), ("IOE1", "IE"), ("IOBES", "BIE")],
)
def test_conlleval_policy_equals_conlleval_on_random_files(scheme, prefixes):
    """2,000 random corpora per alphabet, ill-formed sequences included."""
    rng = random.Random(20041026)
    alphabet = ["O"] + [f"{p}-{t}" for p in prefixes for t in ("A", "B")]
    for _ in range(2000):
        sents = rng.randint(1, 4)
        ref = [[rng.choice(alphabet) for _ in range(rng.randint(0, 8))] for _ in range(sents)]
        pred = [[rng.choice(alphabet) for _ in s] for s in ref]
        gold, found, correct = conlleval_counts(ref, pred)
        r = score_tags(reference=ref, prediction=pred, scheme=scheme, repair="conlleval")
        assert (r.overall.N, r.overall.M, r.overall.tp) == (gold, found, correct), (ref, pred)


# --- encode / decode round trips --------------------------------------------------------
@st.composite
def span_sets(draw):
    n = draw(st.integers(1, 30))
    cuts = sorted(set(draw(st.lists(st.integers(0, n), max_size=12))) | {0, n})
    out = []
    for a, b in zip(cuts, cuts[1:]):
        if draw(st.booleans()):
            out.append((draw(st.sampled_from(["A", "B"])), a, b))
    return n, out


@settings(max_examples=300, deadline=None)
@given(span_sets(), st.sampled_from(sorted(SCHEMES)))
def test_round_trip(data, scheme):
    n, truth = data
    adjacent_same = any(x[2] == y[1] and x[0] == y[0] for x, y in zip(truth, truth[1:]))
    if scheme == "IO" and adjacent_same:
        with pytest.raises(InputError, match="IO cannot encode adjacent"):
            encode_spans(truth, n, scheme=scheme)
        return
    tags = encode_spans(truth, n, scheme=scheme)
    assert spans(decode_tags([tags], scheme=scheme, repair="strict")) == truth
    merged = scheme in ("IOBES", "BMES") and adjacent_same  # conlleval's E-X B-X merge
    if not merged:
        ch = decode_tags([tags], scheme=scheme, repair="conlleval")
        assert spans(ch) == truth and ch.n_repaired == 0


_AUTO_TAGS = ["O", "B-X", "I-X", "I-Y", "E-X", "S-Y", "X", "L-X", "U-Y", "M-X"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.sampled_from(_AUTO_TAGS), min_size=1, max_size=5), min_size=2, max_size=6),
       st.data())
def test_scheme_evidence_of_shards_combines_to_the_scheme_of_one_call(docs, data):
    # scheme="auto" over shards (the Spark adapter): the union of the shards' prefixes and
    # the "or" of their I- starts name the scheme detect_scheme gives the whole input
    from iescore.decode.detect import detect_scheme, scheme_evidence, scheme_from_evidence
    from iescore.scoring.batch import tagged_batch

    cut = data.draw(st.integers(1, len(docs) - 1))
    whole = tagged_batch(docs, docs)
    expected = detect_scheme(whole.reference, whole.vocab)
    prefixes: set[str] = set()
    i_starts = False
    for shard in (docs[:cut], docs[cut:]):
        b = tagged_batch(shard, shard)
        p, i = scheme_evidence(b.reference, b.vocab)
        prefixes |= p
        i_starts = i_starts or i
    assert scheme_from_evidence(prefixes, i_starts) == expected
    if set(_AUTO_TAGS[:4]) >= {t for d in docs for t in d}:  # B/I tags only: IOB1 iff an I- starts a chunk
        starts = any(t.startswith("I-") and (k == 0 or d[k - 1] == "O" or d[k - 1][2:] != t[2:])
                     for d in docs for k, t in enumerate(d))
        assert expected == ("IOB1" if starts else "IOB2") or {t for d in docs for t in d} <= {"O"}
