"""The fast paths give the same numbers as the definitions, whatever their internal route:
decoding windows, byte- vs int32-coded tag ids, the composed tag-pair table vs the
role table, numbered document ids, and conlleval's token counts."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from iescore import Scorer, score_tags
from iescore.decode import SCHEMES, Vocabulary, decode_arrays, flatten, pair
from iescore.decode import decoder as sch
from iescore.errors import InputError
from iescore.ids import IdRegistry, NumberedIds


def _chunks(c):
    return [(int(s), int(e), int(t), bool(i)) for s, e, t, i in zip(c.start, c.end, c.type, c.ill)]


def _naive_chunks(seqs, scheme, conlleval):
    """Chunks decoded one token at a time from the scheme's own tables (no windows, no pair
    table): the reference the vectorised decoder must equal."""
    out, base = [], 0
    bnd = sch._role_boundaries(conlleval)
    vocab = Vocabulary()
    for seq in seqs:
        parsed = []
        for tag in seq:
            if tag == "O":
                parsed.append((sch.O, -1))
            else:
                p, _, lab = tag.partition("-")
                parsed.append((scheme.letters[p], vocab.label_id(lab)))
        cur = None
        for i, (r, lab) in enumerate(parsed):
            prev = parsed[i - 1] if i else (sch.O, -1)
            same = i > 0 and r != sch.O and prev[0] != sch.O and prev[1] == lab
            cont = same and not bnd[prev[0], r]
            if cur is not None and not cont:
                nxt_same = same
                cur[3] |= not scheme.end_ok[prev[0], int(nxt_same)]
                out.append((cur[0] + base, i + base, cur[2], cur[3]))
                cur = None
            if r != sch.O and not cont:
                cur = [i, None, lab, not scheme.start_ok[r, int(same)]]
            elif cont and (r == sch.B or prev[0] in (sch.E, sch.L)):
                cur[3] = True
        if cur is not None:
            cur[3] |= not scheme.end_ok[parsed[-1][0], 0]
            out.append((cur[0] + base, len(seq) + base, cur[2], cur[3]))
        base += len(seq)
    return out, vocab.labels


@st.composite
def tag_corpora(draw):
    scheme = draw(st.sampled_from(sorted(n for n in SCHEMES if n != "IO")))
    letters = sorted(SCHEMES[scheme].letters)
    alphabet = ["O"] + [f"{p}-{t}" for p in letters for t in ("A", "B", "C")]
    seqs = draw(st.lists(st.lists(st.sampled_from(alphabet), max_size=12), min_size=1, max_size=8))
    return scheme, seqs


@settings(max_examples=400, deadline=None)
@given(tag_corpora(), st.booleans(), st.sampled_from([1, 2, 3, 7, 1 << 15]), st.booleans(), st.randoms())
@example(("IOBES", [["B-A", "E-A", "B-A", "E-A"], ["O", "E-A", "B-A"]]), True, 2, False, random.Random(0))
@example(("BMES", [["B-A", "E-A", "B-A", "E-A"]]), True, 1, True, random.Random(1))
def test_vectorised_decoder_equals_token_by_token_decoding(corpus, conlleval, window, wide_ids, rnd):
    scheme_name, seqs = corpus
    scheme = SCHEMES[scheme_name]
    expected, labels = _naive_chunks(seqs, scheme, conlleval)
    vocab = Vocabulary()
    for lab in labels:  # the same label numbering as the naive decoder
        vocab.label_id(lab)
    arrays, _ = flatten(seqs, vocab)
    if wide_ids:  # int32 ids take the role-table route instead of the tag-pair table
        arrays = sch.TagArrays(arrays.ids.astype(np.int32), arrays.first)
    old = sch._WINDOW
    sch._WINDOW = window
    # documents made of whole sequences, some empty: either one per sequence or random runs
    seq_starts = np.cumsum([0] + [len(q) for q in seqs[:-1]])
    if rnd.random() < 0.5:
        groups = seq_starts
    else:
        cut = sorted({0} | {k for k in range(len(seqs)) if rnd.random() < 0.4})
        groups = np.sort(np.concatenate((seq_starts[cut], rnd.sample(list(seq_starts), rnd.randint(0, len(seqs))))))
    try:
        got = decode_arrays(arrays, vocab, scheme=scheme, repair="conlleval" if conlleval else "discard",
                            groups=groups)
    finally:
        sch._WINDOW = old
    if conlleval:
        kept = [(s, e, t, i) for s, e, t, i in expected]
    else:
        kept = [(s, e, t, False) for s, e, t, i in expected if not i]
        assert got.n_discarded == sum(i for *_, i in expected)
    assert _chunks(got) == kept
    # the document of a chunk: the last one starting at or before it
    assert got.group.tolist() == [int(np.searchsorted(groups, s, "right")) - 1 for s, *_ in kept]


def test_more_than_256_distinct_tags_switch_to_wide_ids():
    labels = [f"L{k}" for k in range(300)]
    ref = [[f"B-{lab}", f"I-{lab}", "O"] for lab in labels]
    pred = [[f"B-{lab}", "O", "O"] if k % 2 else [f"B-{lab}", f"I-{lab}", "O"] for k, lab in enumerate(labels)]
    r = score_tags(reference=ref, prediction=pred, scheme="IOB2", detail="prf")
    # 300 answers; the 150 even-numbered predictions are exact, the 150 odd ones one token short
    assert (r.overall.tp, r.overall.fp, r.overall.fn) == (150, 150, 150)
    v = Vocabulary()
    ids = v.encode(lambda: (t for s in ref for t in s))
    assert ids.dtype == np.int32 and len(v.tags) == 601 and v.tags[ids[3]] == "B-L1"


def test_byte_ids_for_small_vocabularies():
    v = Vocabulary()
    ids = v.encode(["O", "B-X", "O", "I-X"])
    assert ids.dtype == np.uint8 and ids.tolist() == [0, 1, 0, 2]


def test_non_string_tag_is_named():
    with pytest.raises(InputError, match="tags must be strings, got 3"):
        score_tags(reference=[["O", 3]], prediction=[["O", "O"]], scheme="IOB2")


def test_token_counts_match_conlleval_definitions():
    ref = [["B-A", "I-A", "O"], [], ["O", "B-B"], ["O"]]
    pred = [["B-A", "O", "O"], [], ["B-A", "B-B"], ["O"]]
    r = score_tags(reference=ref, prediction=pred, scheme="IOB2")
    # per document: tokens, agreeing tags, tokens not O on both sides, agreeing among those
    assert r.token_counts.tolist() == [[3, 2, 2, 1], [0, 0, 0, 0], [2, 1, 2, 1], [1, 1, 0, 0]]
    assert r.token_accuracy == pytest.approx(4 / 6)


# --- numbered document ids ------------------------------------------------------------
def test_numbered_ids_behave_like_the_tuple():
    ids = NumberedIds(5, 9)
    assert tuple(ids) == ("5", "6", "7", "8") and ids == ["5", "6", "7", "8"]
    assert ids[1:3] == ("6", "7") and ids[::2] == ("5", "7") and ids[-1] == "8"
    assert "7" in ids and "07" not in ids and "9" not in ids and 7 not in ids
    with pytest.raises(IndexError):
        ids[4]
    with pytest.raises(ValueError, match="'x' is not a document id"):
        ids.index("x")
    assert hash(ids) == hash(("5", "6", "7", "8"))


def test_report_on_numbered_documents():
    r = score_tags(reference=[["B-A"], ["O"], ["B-A"]], prediction=[["B-A"], ["B-A"], ["O"]], scheme="IOB2")
    assert list(r.doc_ids) == ["0", "1", "2"]
    assert (r.counts(doc="1").fp, r.counts(doc="2").fn, r.counts(doc=0).tp) == (1, 1, 1)
    assert list(r.per_document()) == ["0", "1", "2"]


def test_duplicates_between_numbered_and_explicit_ids():
    s = Scorer(scheme="IOB2")
    s.add_tags(reference=[["O"]], prediction=[["O"]], doc_ids=["1"])
    with pytest.raises(InputError, match="duplicate document id '1'"):
        s.add_tags(reference=[["O"], ["O"]], prediction=[["O"], ["O"]])  # numbered from 1: "1", "2"
    s2 = Scorer(scheme="IOB2")
    s2.add_tags(reference=[["O"]] * 3, prediction=[["O"]] * 3)  # "0", "1", "2"
    with pytest.raises(InputError, match="duplicate document id '2'"):
        s2.add_tags(reference=[["O"]], prediction=[["O"]], doc_ids=["2"])
    s2.add_tags(reference=[["O"]], prediction=[["O"]], doc_ids=["02"])  # not the number 2
    s2.add_tags(reference=[["O"]], prediction=[["O"]])  # numbered from 4
    assert list(s2.report().doc_ids) == ["0", "1", "2", "02", "4"]


def test_registry_merges_consecutive_runs_and_rejects_overlaps():
    reg = IdRegistry()
    reg.add(NumberedIds(0, 10))
    reg.add(NumberedIds(10, 20))
    assert reg._runs == [[0, 20]] and len(reg) == 20
    with pytest.raises(InputError, match="duplicate document id '15'"):
        reg.add(NumberedIds(15, 30))
    with pytest.raises(InputError, match="duplicate document id 'a'"):
        reg.add(("a", "b", "a"))


def test_merged_shards_with_numbered_ids_need_distinct_numbers():
    a, b = Scorer(scheme="IOB2"), Scorer(scheme="IOB2")
    a.add_tags(reference=[["B-A"]], prediction=[["B-A"]])
    b.add_tags(reference=[["B-A"]], prediction=[["O"]])
    with pytest.raises(InputError) as e:
        a.merge(b)
    assert str(e.value) == (
        "cannot merge: duplicate document id '0' is in both scorers; documents without doc_ids are numbered "
        "'0', '1', ... in each scorer, so shards scored apart need distinct ids: pass doc_ids=, or number a "
        "shard's documents from N with tagged_batch(..., id_offset=N)")
    # what the message says to do: numbered from 1, b merges (A: tp 1; the second A missed: fn 1)
    from iescore import tagged_batch

    c = Scorer(scheme="IOB2")
    c.add_batch(tagged_batch([["B-A"]], [["O"]], id_offset=1))
    o = a.merge(c).report().overall
    assert (o.tp, o.fp, o.fn) == (1, 0, 1)


def test_random_streams_equal_one_shot():
    rng = random.Random(7)
    alphabet = ["O", "B-A", "I-A", "B-B", "I-B"]
    ref = [[rng.choice(alphabet) for _ in range(rng.randint(0, 9))] for _ in range(300)]
    pred = [[rng.choice(alphabet) for _ in s] for s in ref]
    one = score_tags(reference=ref, prediction=pred, scheme="IOB2", detail="prf")
    s = Scorer(scheme="IOB2", detail="prf")
    for k in range(0, 300, 37):
        s.add_tags(reference=ref[k : k + 37], prediction=pred[k : k + 37])
    r = s.report()
    assert r.doc_ids == one.doc_ids and isinstance(r.doc_ids, NumberedIds)
    assert np.array_equal(r.cells, one.cells) and np.array_equal(r.token_counts, one.token_counts)


@pytest.mark.parametrize("window", [1, 2, 3, 5, 64])
def test_token_counts_across_windows(monkeypatch, window):
    from iescore.scoring import tags as scorer

    rng = random.Random(window)
    alphabet = ["O", "O", "B-A", "I-A", "B-B"]
    ref = [[rng.choice(alphabet) for _ in range(rng.randint(0, 7))] for _ in range(40)]
    pred = [[rng.choice(alphabet) for _ in s] for s in ref]
    expected = [
        [len(r), sum(a == b for a, b in zip(r, p)), sum(a != "O" or b != "O" for a, b in zip(r, p)),
         sum(a == b != "O" for a, b in zip(r, p))]
        for r, p in zip(ref, pred)
    ]
    monkeypatch.setattr(scorer, "_TOKEN_WINDOW", window)
    assert score_tags(reference=ref, prediction=pred, scheme="IOB2").token_counts.tolist() == expected


def test_trainer_arrays_over_several_blocks_equal_the_tag_lists():
    """Label-id arrays are read a block of rows at a time; 3,000 rows of width 40 take two
    blocks, and the scores equal those of the same tags given as strings."""
    from iescore.adapters.hf import trainer_batch

    names = ["O", "B-A", "I-A", "B-B", "I-B"]
    rng = np.random.default_rng(3)
    labels = np.full((3000, 40), -100, dtype=np.int64)
    preds = rng.integers(0, 5, size=(3000, 40))
    ref_tags, pred_tags = [], []
    for i in range(3000):
        n = int(rng.integers(0, 41))
        cols = np.sort(rng.choice(40, size=n, replace=False))  # words anywhere in the row
        labels[i, cols] = rng.integers(0, 5, size=n)
        ref_tags.append([names[k] for k in labels[i, cols]])
        pred_tags.append([names[k] for k in preds[i, cols]])
    s = Scorer(scheme="IOB2")
    s.add_batch(trainer_batch(preds, labels, id2label=names))
    r = s.report()
    expected = score_tags(reference=ref_tags, prediction=pred_tags, scheme="IOB2")
    assert np.array_equal(r.cells, expected.cells) and np.array_equal(r.token_counts, expected.token_counts)
    assert r.doc_ids == expected.doc_ids
    labels[2999, 39] = 7  # an id outside id2label, in the second block
    with pytest.raises(InputError, match="label_ids holds label id 7, outside 0..4"):
        trainer_batch(preds, labels, id2label=names)
    labels[2999, 39] = -3  # negative, but not the -100 of ignored positions
    with pytest.raises(InputError, match="label_ids holds label id -3, outside 0..4"):
        trainer_batch(preds, labels, id2label=names)


def _iob2_spans(tags):
    """A plain IOB2 decoder (conlleval's: an I- of another type starts a chunk)."""
    spans, cur = [], None
    for i, t in enumerate(tags + ["O"]):
        kind, _, lab = t.partition("-")
        if cur and (kind != "I" or lab != cur[0]):
            spans.append((cur[0], cur[1], i))
            cur = None
        if kind in ("B", "I") and cur is None:
            cur = (lab, i)
    return set(spans)


@pytest.mark.parametrize("seed", [1, 3, 10])
def test_per_document_cells_equal_counts_by_hand(seed):
    """Only the (document, label) cells holding a span are stored; the dense view, the
    per-document and per-label sums and single cells equal exact counts made span by span."""
    rng = random.Random(seed)
    alphabet = ["O", "O", "B-A", "I-A", "B-B", "I-B", "B-C"]
    ref = [[rng.choice(alphabet) for _ in range(rng.randint(0, 9))] for _ in range(60)]
    pred = [[rng.choice(alphabet) for _ in s] for s in ref]
    labels = ["A", "B", "C"]
    want = np.zeros((60, 3, 3), dtype=np.int64)
    for d, (r, p) in enumerate(zip(ref, pred)):
        gold, found = _iob2_spans(r), _iob2_spans(p)
        for lab, *_ in found & gold:
            want[d, labels.index(lab), 0] += 1
        for lab, *_ in found - gold:
            want[d, labels.index(lab), 1] += 1
        for lab, *_ in gold - found:
            want[d, labels.index(lab), 2] += 1
    has_span = _has_span(ref, pred, labels)
    for options in (dict(detail="prf"), dict(), dict(rule="O(1,1)", counting="one-to-one")):
        rep = score_tags(reference=ref, prediction=pred, scheme="IOB2", **options)
        assert rep.labels == tuple(labels)
        if "rule" not in options:  # exact matching: the counts made by hand
            assert rep.cells[:, :, :3].tolist() == want.tolist()
        assert len(rep.table) == int(has_span.sum())
        assert sorted(zip(rep.table.doc.tolist(), rep.table.label.tolist())) == list(zip(*np.nonzero(has_span)))
        dense = rep.cells.astype(np.int64)
        assert rep.table.label_totals().tolist() == dense.sum(axis=0).tolist()
        assert rep.table.doc_totals().tolist() == dense.sum(axis=1).tolist()
        for d in (0, 17, 59):
            c = rep.counts(doc=d)
            assert [getattr(c, f) for f in rep.fields] == dense[d].sum(axis=0).tolist()
            for j, lab in enumerate(labels):
                c = rep.counts(label=lab, doc=str(d))
                assert [getattr(c, f) for f in rep.fields] == dense[d, j].tolist()
    full = score_tags(reference=ref, prediction=pred, scheme="IOB2")
    tokens = [len(r) for r in ref]
    assert full.cells[:, 0, full.fields.index("tok_n")].tolist() == tokens  # t-units: per document, every label
    assert full.counts(label="B").tok_n == sum(tokens)


def _has_span(ref, pred, labels):
    has = np.zeros((len(ref), len(labels)), dtype=bool)
    for d, (r, p) in enumerate(zip(ref, pred)):
        for lab, *_ in _iob2_spans(r) | _iob2_spans(p):
            has[d, labels.index(lab)] = True
    return has


@pytest.mark.parametrize("n_labels", [50, 100, 127])
def test_wide_tag_pair_codes_equal_the_role_table(n_labels):
    """Up to 181 tags the tag-pair codes are 16-bit; 182 to 256 tags need 32-bit codes (and
    above 256 tags the role table is used): every route decodes the same chunks."""
    rng = random.Random(n_labels)
    alphabet = ["O"] + [f"{p}-L{k}" for k in range(n_labels) for p in "BI"]
    seqs = [[rng.choice(alphabet[:5]) if rng.random() < 0.5 else rng.choice(alphabet) for _ in range(rng.randint(0, 12))]
            for _ in range(300)]
    vocab = Vocabulary()
    for t in alphabet:  # every tag known, so the vocabulary has 2 * n_labels + 1 tags
        vocab.encode([t])
    arrays, _ = flatten(seqs, vocab)
    assert arrays.ids.dtype == np.uint8
    by_tag = decode_arrays(arrays, vocab, scheme=SCHEMES["IOB2"], repair="conlleval")
    wide = sch.TagArrays(arrays.ids.astype(np.int32), arrays.first)
    by_role = decode_arrays(wide, vocab, scheme=SCHEMES["IOB2"], repair="conlleval")
    assert _chunks(by_tag) == _chunks(by_role) and len(by_tag.start) > 300


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 3000), st.sampled_from([(1,), (3,), (4, 3), (2, 15), (300,)]), st.booleans(), st.integers(0, 2**31 - 1))
def test_column_sums_equal_the_plain_sum(n, rest, strided, seed):
    from iescore.cells import column_sums

    x = np.random.default_rng(seed).integers(-(2**31), 2**31 - 1, size=(n, *rest), dtype=np.int64).astype(np.int32)
    if strided:
        x = x[::2]
    got = column_sums(x)
    assert got.dtype == np.int64 and got.shape == rest
    assert (got == x.astype(np.int64).sum(axis=0)).all()


def test_exact_disjoint_counts_by_hand_and_rejects_shared_starts():
    from iescore.match.exact import exact_disjoint
    from iescore.match.units import Units, cell_index

    def units(rows):
        cols = np.array(rows, dtype=np.int64).T
        return Units(cols[0], cols[1], cols[2], cols[3])

    def run(R, P, n_docs):
        ix, R, P = cell_index(R, P, n_docs, 2)
        return ix, exact_disjoint(R, P, len(ix), 2, n_fields=3, dtype=np.int32)

    # (doc, label, start, end): doc 0 has one exact hit and one wrong-end prediction,
    # doc 1 a wrong-label prediction, doc 2 an answer with no prediction
    R = units([(0, 0, 0, 2), (0, 1, 4, 5), (1, 0, 1, 3), (2, 1, 0, 1)])
    P = units([(0, 0, 0, 2), (0, 1, 4, 6), (1, 1, 1, 3)])
    ix, res = run(R, P, 3)
    # the cells holding a span, in (document, label) order; cell (2, 0) holds none
    assert list(zip(ix.doc.tolist(), ix.label.tolist())) == [(0, 0), (0, 1), (1, 0), (1, 1), (2, 1)]
    assert res.cells.tolist() == [[1, 0, 0], [0, 1, 1], [0, 0, 1], [0, 1, 0], [0, 0, 1]]
    assert res.pred_status.tolist() == [0, 1, 1] and res.ref_status.tolist() == [0, 2, 2, 2]
    with pytest.raises(ValueError, match="same token"):
        run(units([(0, 0, 0, 2), (0, 1, 0, 1)]), units([(0, 0, 0, 2)]), 1)


def test_decoder_groups_must_be_whole_segments():
    vocab = Vocabulary()
    arrays, _ = flatten([["B-A", "O"], ["B-A"]], vocab)
    with pytest.raises(ValueError, match="segment start"):
        decode_arrays(arrays, vocab, scheme=SCHEMES["IOB2"], repair="conlleval", groups=np.array([0, 1]))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_tag_input_in_32_bits_scores_like_documents_in_64(seed):
    """Tag input keeps its items in 32 bits; the same spans given as Documents (64-bit
    items) get the same counts, slot errors, TS counts and statuses in every mode and
    rule."""
    from iescore import Document, Span, score

    rng = random.Random(seed)
    alphabet = ["O", "B-A", "I-A", "I-A", "B-B", "I-B"]
    ref = [[rng.choice(alphabet) for _ in range(rng.randint(1, 12))] for _ in range(80)]
    pred = [[rng.choice(alphabet) for _ in s] for s in ref]
    toks = [[rng.choice("xy") for _ in s] for s in ref]
    docs = [Document(str(k), tuple(t), tuple(Span(lab, a, b) for lab, a, b in sorted(_iob2_spans(r))))
            for k, (t, r) in enumerate(zip(toks, ref))]
    spans = [[Span(lab, a, b) for lab, a, b in sorted(_iob2_spans(p))] for p in pred]
    keys = ("overall", "per_label", "slot_errors", "ts", "confusion")
    for opts in (dict(mode="one-per-string", rule="O(1,1)", counting="one-to-one"),
                 dict(mode="one-per-string", rule="C(1)"), dict(rule="O(1,1)", counting="one-to-one"),
                 dict(setting="OBD", rule="O(1,1)", counting="one-to-one")):
        by_tags = score_tags(reference=ref, prediction=pred, tokens=toks, scheme="IOB2", **opts)
        by_docs = score(reference=docs, prediction=spans, **opts)
        assert by_tags.reference.start.dtype == np.int32 or opts.get("setting") == "OBD"
        a, b = by_tags.to_dict(), by_docs.to_dict()
        assert {k: a[k] for k in keys} == {k: b[k] for k in keys}, opts
        for side in ("reference", "prediction"):
            sa = sorted((d["doc"], d["label"], d["start"], d["status"]) for d in by_tags.items(side))
            sb = sorted((d["doc"], d["label"], d["start"], d["status"]) for d in by_docs.items(side))
            assert sa == sb, (opts, side)


# --- both sides decoded at once (detail="prf") ------------------------------------------

def _groups(seqs, rnd):
    """Documents made of whole sequences, some empty: one per sequence or random runs."""
    seq_starts = np.cumsum([0] + [len(q) for q in seqs[:-1]])
    if rnd.random() < 0.5:
        return seq_starts
    cut = sorted({0} | {k for k in range(len(seqs)) if rnd.random() < 0.4})
    more = np.array(rnd.sample(list(seq_starts), rnd.randint(0, len(seqs))), dtype=np.int64)
    return np.sort(np.concatenate((seq_starts[cut], more)))


@settings(max_examples=300, deadline=None)
@given(tag_corpora(), st.booleans(), st.sampled_from([1, 2, 5, 1 << 15]), st.sampled_from([1, 3, 8, 1 << 18]),
       st.booleans(), st.randoms())
@example(("IOB2", [["B-A", "I-A", "O", "B-B"]]), True, 1, 1 << 18, False, random.Random(3))
@example(("IOBES", [["B-A", "E-A", "B-A", "E-A"]]), True, 2, 1, True, random.Random(0))  # conlleval: one ill chunk
def test_pair_decoder_equals_token_by_token_decoding_and_brute_force_matching(
    corpus, conlleval, window, piece, relative, rnd
):
    # window: tokens per look-up pass; piece: tokens per decoding piece (cut at segment starts);
    # relative: chunk offsets counted from their document's start; a random label map
    # (several labels may become one) half of the time
    scheme_name, ref_seqs = corpus
    scheme = SCHEMES[scheme_name]
    seen = sorted({t for s in ref_seqs for t in s} | {"O"})
    pred_seqs = [[t if rnd.random() < 0.6 else rnd.choice(seen) for t in s] for s in ref_seqs]
    if not any(ref_seqs):
        return
    vocab = Vocabulary()
    ref, _ = flatten(ref_seqs, vocab)
    pred, _ = flatten(pred_seqs, vocab)
    role_of, label_of = vocab.roles(scheme)
    groups = _groups(ref_seqs, rnd)
    n_lab = len(vocab.labels)
    lmap = np.array([rnd.randrange(max(n_lab - 1, 1)) for _ in range(n_lab)], np.int32) if rnd.random() < 0.5 else None

    def label(name):  # a label as the decoder should give it
        return name if lmap is None else int(lmap[vocab.labels.index(name)])

    def got_label(t):
        return vocab.labels[t] if lmap is None else int(t)

    old = pair._PAIR_WINDOW, pair._PAIR_PIECE
    pair._PAIR_WINDOW, pair._PAIR_PIECE = window, piece
    try:
        out = pair.decode_pair(ref.ids, pred.ids, role_of.astype(np.uint8), label_of, scheme=scheme,
                              conlleval=conlleval, segments=ref.segments, groups=groups, relative=relative,
                              label_map=lmap)
    finally:
        pair._PAIR_WINDOW, pair._PAIR_PIECE = old
    if relative:  # back to flat offsets, to compare with the flat decoding
        out = pair.PairChunks(*(
            sch.Chunks(c.start + groups[c.group], c.end + groups[c.group], c.type, c.ill, group=c.group)
            for c in (out.reference, out.prediction)), out.ref_hit, out.pred_hit, out.differ, out.tagged)
    flat_ref = [t for s in ref_seqs for t in s]
    flat_pred = [t for s in pred_seqs for t in s]
    sides = []
    for seqs, got in ((ref_seqs, out.reference), (pred_seqs, out.prediction)):
        expected, names = _naive_chunks(seqs, scheme, conlleval)
        want = [(s, e, label(names[t]), i) for s, e, t, i in expected]
        assert [(s, e, got_label(t), i) for s, e, t, i in _chunks(got)] == want
        assert got.group.tolist() == [int(np.searchsorted(groups, s, "right")) - 1 for s, *_ in want]
        sides.append({(s, e, lab) for s, e, lab, _ in want})
    # hits: an equal chunk (start, end, mapped label) on the other side
    assert out.ref_hit.tolist() == [(s, e, got_label(t)) in sides[1] for s, e, t, _ in _chunks(out.reference)]
    assert out.pred_hit.tolist() == [(s, e, got_label(t)) in sides[0] for s, e, t, _ in _chunks(out.prediction)]
    bounds = list(groups) + [len(flat_ref)]
    differ = [sum(a != b for a, b in zip(flat_ref[x:y], flat_pred[x:y])) for x, y in zip(bounds, bounds[1:])]
    tagged = [sum(a != "O" or b != "O" for a, b in zip(flat_ref[x:y], flat_pred[x:y])) for x, y in zip(bounds, bounds[1:])]
    assert out.differ.tolist() == differ
    assert out.tagged.tolist() == tagged


def test_pair_decoder_by_hand():
    # reference: PER [0,2), LOC [3,4) in document 0; ORG [4,5) (an ill-formed I- start) in document 1
    # prediction: PER [0,2), LOC [2,4) in document 0; ORG [4,6) in document 1
    v = Vocabulary()
    r = v.encode(["B-PER", "I-PER", "O", "B-LOC", "I-ORG", "O"])
    p = v.encode(["B-PER", "I-PER", "B-LOC", "I-LOC", "B-ORG", "I-ORG"])
    role_of, label_of = v.roles(SCHEMES["IOB2"])
    out = pair.decode_pair(r, p, role_of.astype(np.uint8), label_of, scheme=SCHEMES["IOB2"], conlleval=True,
                          segments=np.array([0, 4]), groups=np.array([0, 4]))
    assert (out.reference.start.tolist(), out.reference.end.tolist()) == ([0, 3, 4], [2, 4, 5])
    assert (out.prediction.start.tolist(), out.prediction.end.tolist()) == ([0, 2, 4], [2, 4, 6])
    assert out.reference.ill.tolist() == [False, False, True] and not out.prediction.ill.any()
    assert out.reference.group.tolist() == [0, 0, 1] and out.prediction.group.tolist() == [0, 0, 1]
    assert out.ref_hit.tolist() == [True, False, False] and out.pred_hit.tolist() == [True, False, False]
    # differing tokens: 2 (O/B-LOC), 3 (B-LOC/I-LOC) | 4 (I-ORG/B-ORG), 5 (O/I-ORG)
    assert out.differ.tolist() == [2, 2]
    # tagged on one side at least: all of 0-3 | 4 and 5
    assert out.tagged.tolist() == [4, 2]


@pytest.mark.parametrize("scheme", ["IOB1", "IOB2", "IOE2", "IOBES", "BILOU"])
def test_detail_prf_equals_the_full_report_under_every_scheme(scheme):
    rng = random.Random(11)
    letters = sorted(SCHEMES[scheme].letters)
    alphabet = ["O", "O", "O"] + [f"{p}-{t}" for p in letters for t in ("A", "B")]
    for trial in range(60):
        ref = [[rng.choice(alphabet) for _ in range(rng.randint(0, 9))] for _ in range(rng.randint(1, 5))]
        pred = [[t if rng.random() < 0.7 else rng.choice(alphabet) for t in s] for s in ref]
        extra = dict(supertags=[("A", "X"), ("B", "X")]) if trial % 3 == 0 else {}
        full = score_tags(reference=ref, prediction=pred, scheme=scheme, **extra)
        fast = score_tags(reference=ref, prediction=pred, scheme=scheme, detail="prf", **extra)
        assert fast.labels == full.labels
        for lab in full.labels:
            a, b = full.counts(lab), fast.counts(lab)
            assert (a.tp, a.fp, a.fn) == (b.tp, b.fp, b.fn)
        assert [i["status"] for i in fast.items()] == [i["status"] for i in full.items()]
        d_full, d_fast = full.to_dict(), fast.to_dict()
        for key in ("tokens", "token_accuracy", "token_accuracy_non_o", "repairs"):
            assert d_fast[key] == d_full[key], (key, ref, pred)


def test_detail_prf_strict_repair_names_the_ill_formed_chunk():
    with pytest.raises(InputError, match=r"ill-formed IOB2 chunk at .*\['O', 'I-A'\]"):
        score_tags(reference=[["O", "I-A"]], prediction=[["O", "O"]], scheme="IOB2", repair="strict", detail="prf")


@st.composite
def _span_units(draw):
    """Units of a few documents: short spans and, now and then, a long one."""
    from iescore.match.units import Units

    def side():
        n = draw(st.integers(0, 25))
        doc = draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))
        start = draw(st.lists(st.integers(0, 40), min_size=n, max_size=n))
        length = draw(st.lists(st.one_of(st.integers(1, 4), st.integers(1, 45)), min_size=n, max_size=n))
        a = lambda x: np.array(x, dtype=np.int64)
        return Units(a(doc), a([0] * n), a(start), a([s + k for s, k in zip(start, length)]))

    return side(), side()


@settings(max_examples=300, deadline=None)
@given(_span_units())
def test_overlapping_pairs_by_windows_and_from_both_sides_equal_the_brute_force(units):
    """AO's candidate pairs (iescore.match.rules.overlapping): the window search beside each
    prediction and the two range searches it switches to when one long answer makes the
    windows hold the whole document give the same pairs in the same order; as a set, the
    pairs of the same document whose spans intersect, every one of them."""
    from iescore.match import rules

    R, P = units
    want = {(i, j) for i in range(len(R)) for j in range(len(P))
            if R.doc[i] == P.doc[j] and R.start[i] < P.end[j] and P.start[j] < R.end[i]}
    got = {}
    for excess in (10**9, 0):  # never / always the two-sided search
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(rules, "_WINDOW_EXCESS", excess)
            r, p = rules.overlapping(R, P)
        got[excess] = (r.tolist(), p.tolist())
        assert set(zip(*got[excess])) == want and len(r) == len(want)
    assert got[0] == got[10**9]


def test_one_long_span_leaves_the_document_linear():
    """3,000 answers [k, k+3) and predictions [k+1, k+4) plus one answer and one prediction
    over the whole document [0, 3003) (a section a span categorizer marks): exact, the
    two long spans match each other and prediction k matches answer k+1 (k < 2,999), so
    TP = 3,000 of 3,001 a side. The long answer puts every answer in every prediction's
    window (9M candidates), so the search from both sides runs, and it finds exactly the
    overlaps: up to 5 per short answer, the long prediction with every answer and the
    long answer with every prediction."""
    from iescore import Document, Span, score
    from iescore.match import rules

    n = 3000
    gold = tuple(Span("E", k, k + 3) for k in range(n)) + (Span("E", 0, n + 3),)
    pred = [Span("E", k + 1, k + 4) for k in range(n)] + [Span("E", 0, n + 3)]
    docs = [Document("d", ("w",) * (n + 3), gold)]
    seen = []
    real = rules._overlapping_sides
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(rules, "_overlapping_sides", lambda *a: seen.append(len(real(*a)[0])) or real(*a))
        d = score(reference=docs, prediction=[pred]).to_dict()
    # answer k (k < n) overlaps predictions k-3 .. k+1 that exist, and the long prediction;
    # the long answer overlaps all n + 1 predictions
    short = sum(len([j for j in range(k - 3, k + 2) if 0 <= j < n]) for k in range(n))
    assert seen == [short + n + (n + 1)]
    assert (d["overall"]["tp"], d["overall"]["support"], d["overall"]["predicted"]) == (n, n + 1, n + 1)
