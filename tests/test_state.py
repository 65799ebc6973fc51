"""Scorer states (iescore.scoring.state): bytes that merge into the report of one call,
and that refuse to load when they are not such bytes."""

from __future__ import annotations

import hashlib
import json
import re
import struct
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_streaming import tag_corpora

import iescore
from iescore import (
    ConfigError,
    Document,
    InputError,
    Scorer,
    Span,
    Template,
    score,
    score_tags,
    score_templates,
)
from iescore.scoring.state import load_state, merge_states, renumber

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


# the drawn corpora mix schemes: scheme='auto' warns of the mix (tests/test_slips.py checks it)
@pytest.mark.filterwarnings("ignore:scheme='auto':iescore.errors.IEScoreWarning")
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
    this = iescore.__version__
    other = header.replace(f'"iescore":"{this}"'.encode(), b'"iescore":"9.9.9"')
    assert other != header
    with pytest.raises(InputError, match=f"written by iescore '9.9.9'; this is iescore '{re.escape(this)}'"):
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


# --- the wire format, pinned ---------------------------------------------------------------

FIXTURES = Path(__file__).parent / "fixtures"


def _fixture_scorer():
    """The scorer whose states tests/fixtures/state_v1_{counts,items}.bin hold; they were
    written by iescore 0.1.0 at commit 841a64a, before the summed counts of
    ``totals_only=True`` and of ``keep="counts"`` became one type, and written again with
    Makhoul's multi-slot counts (the states before them: state_v1_*_without_multislot.bin)."""
    s = Scorer(scheme="IOB2")
    s.add_tags(reference=REF[:2], prediction=PRED[:2], tokens=TOKS[:2], doc_ids=IDS[:2])
    s.add_tags(reference=REF[2:], prediction=PRED[2:], tokens=TOKS[2:])  # numbered "2", "3"
    s.note("dropped", 2)
    return s


def _split(data: bytes):
    """An independent reading of the layout that iescore.scoring.wire documents: magic,
    format version, header length, JSON header, the arrays' bytes, a BLAKE2b checksum."""
    magic, version, n = struct.unpack("<8sIQ", data[:20])
    header = json.loads(data[20 : 20 + n])
    payload = data[20 + n : -32]
    assert hashlib.blake2b(data[:-32], digest_size=32).digest() == data[-32:]

    def array(ref):
        a = np.frombuffer(payload[ref["at"] : ref["at"] + ref["n"]], dtype=np.dtype(ref["dtype"]))
        return a.reshape(ref["shape"])

    return magic, version, header, array


def _as_this_version(data: bytes) -> bytes:
    """A fixture state as this iescore version would name itself in it (a state records
    the version that wrote it, and loads only in that version)."""
    n = struct.unpack("<Q", data[12:20])[0]
    v = iescore.__version__
    header = data[20 : 20 + n].replace(b'"iescore":"0.1.0"', f'"iescore":"{v}"'.encode())
    header = header.replace(b'|v:0.1.0"', f'|v:{v}"'.encode())  # the signature names it too
    return _reseal(data[:12] + struct.pack("<Q", len(header)) + header + data[20 + n :])


@pytest.mark.parametrize("keep", ["counts", "items"])
def test_states_written_before_load_and_are_written_again_byte_for_byte(keep):
    old = _as_this_version((FIXTURES / f"state_v1_{keep}.bin").read_bytes())
    s = _fixture_scorer()
    assert s.to_state(keep=keep) == old  # the layout, every byte
    loaded = load_state(old)
    assert isinstance(loaded, Scorer) == (keep == "items")
    r = loaded.report()
    assert r.to_dict() == s.report().to_dict()
    # by hand (exact match): d0 PER found, LOC missed; d1 ORG [1,2) predicted [0,2);
    # d2 PER answered LOC; d3 MISC inserted. 10 tokens, 5 tags agree (3 + 0 + 1 + 1)
    d = r.to_dict()
    per = {lab: (e["tp"], e["fp"], e["fn"], e["support"], e["predicted"]) for lab, e in d["per_label"].items()}
    assert per == {"LOC": (0, 1, 1, 1, 1), "MISC": (0, 1, 0, 0, 1), "ORG": (0, 1, 1, 1, 1), "PER": (1, 0, 1, 2, 1)}
    assert (d["documents"], d["tokens"], d["token_accuracy"]) == (4, 10, 0.5)
    assert d["repairs"]["adapter"] == {"dropped": 2}



def test_a_counts_state_written_before_document_sums_loads_without_them():
    """A counts state from before the document-macro sums were kept: its counts load
    unchanged, its document-macro average is unknown (None), and merged with a state
    that has them the sums stay unknown rather than counting some documents only."""
    old = load_state(_as_this_version((FIXTURES / "state_v1_counts_without_doc_sums.bin").read_bytes()))
    new = load_state(_fixture_scorer().to_state(keep="counts"))
    a, b = old.report().to_dict(), new.report().to_dict()
    assert a["doc_macro"] is None and b["doc_macro"] is not None
    assert a["multislot"] is None and b["multislot"] is not None  # (nor the multi-slot counts)
    assert {k: v for k, v in a.items() if k not in ("doc_macro", "multislot")} == \
        {k: v for k, v in b.items() if k not in ("doc_macro", "multislot")}
    other = Scorer(scheme="IOB2")
    other.add_tags(reference=[["B-PER"]], prediction=[["B-PER"]], doc_ids=["x"])
    other_counts = load_state(other.to_state(keep="counts"))
    assert iescore.scoring.state.merge_states([other_counts, new]).report().to_dict()["doc_macro"] is not None
    assert iescore.scoring.state.merge_states([other_counts, old]).report().to_dict()["doc_macro"] is None

@pytest.mark.parametrize("keep", ["counts", "items"])
def test_a_state_written_before_the_multislot_counts_loads_without_them(keep):
    """A state from before Makhoul's multi-slot counts were kept: everything else loads
    unchanged, the multi-slot counts are unknown (None), also merged with a state that has
    them, and the state is written again as it was."""
    data = _as_this_version((FIXTURES / f"state_v1_{keep}_without_multislot.bin").read_bytes())
    old = load_state(data)
    new = load_state(_fixture_scorer().to_state(keep=keep))
    a, b = old.report().to_dict(), new.report().to_dict()
    assert a["multislot"] is None and b["multislot"] is not None
    assert {k: v for k, v in a.items() if k != "multislot"} == {k: v for k, v in b.items() if k != "multislot"}
    other = Scorer(scheme="IOB2")
    other.add_tags(reference=[["B-PER"]], prediction=[["B-PER"]], doc_ids=["x"])
    other_state = load_state(other.to_state(keep=keep))
    assert iescore.scoring.state.merge_states([other_state, new]).report().to_dict()["multislot"] is not None
    assert iescore.scoring.state.merge_states([other_state, old]).report().to_dict()["multislot"] is None
    if keep == "items":
        assert old.to_state(keep="items") == data


def test_the_counts_header_holds_the_documented_fields():
    data = _fixture_scorer().to_state(keep="counts")
    magic, version, header, array = _split(data)
    assert (magic, version, header["kind"], header["iescore"]) == (b"IESCORE\x00", 1, "counts", iescore.__version__)
    t = header["totals"]
    assert list(t) == ["head", "n_parts", "labels", "fields", "values", "units", "confusion", "categories",
                       "repair_sites", "tokens", "repairs", "ts_error", "n_docs", "digest", "runs", "hashes",
                       "doc_sums", "multislot"]
    assert list(t["head"]) == ["config", "detail", "auto", "fixed", "batches", "notes", "unit"]
    assert t["head"]["notes"] == {"dropped": 2} and t["head"]["batches"] == 2
    assert (t["n_parts"], t["labels"], t["n_docs"]) == (2, ["LOC", "MISC", "ORG", "PER"], 4)
    assert t["fields"] == list(iescore.measures.FIELDS)
    values = array(t["values"])  # every field but the t-units (tok_n, sep_n), per label
    assert values.dtype == np.dtype("<i8") and values.shape == (4, len(t["fields"]) - 2)
    assert values[:, :3].tolist() == [[0, 1, 1], [0, 1, 0], [0, 1, 1], [1, 0, 1]]  # tp, fp, fn (see above)
    assert array(t["units"]).tolist() == [10, 3 + 1 + 1 + 1]  # tokens; separators, tokens - 1 per document
    assert array(t["tokens"])[:2].tolist() == [10, 5]
    assert array(t["runs"]).tolist() == [[2, 4]]  # the numbered documents "2", "3"
    hashes = array(t["hashes"])  # "d0", "d1": hashed, the top bit set (not decimal ids)
    assert hashes.dtype == np.dtype("<u8") and len(hashes) == 2 and (hashes >= 2**63).all()
    assert list(hashes) == sorted(hashes)
    c = t["confusion"]  # pairs of (reference, predicted) label, 4 = none
    ref, pred, count = array(c["ref"]), array(c["pred"]), array(c["count"])
    assert c["n_labels"] == 4 and np.bincount(ref, count, 5)[:4].tolist() == [1, 0, 1, 2]  # support
    assert np.bincount(pred, count, 5)[:4].tolist() == [1, 1, 1, 1]  # predicted
    assert array(t["categories"]).shape == (4, 6)


@pytest.mark.parametrize("batches", [[], [([], [])]], ids=["no batch", "an empty batch"])
def test_totals_of_no_documents_are_one_calls(batches):
    t, one = Scorer(scheme="IOB2", totals_only=True), Scorer(scheme="IOB2")
    for s in (t, one):
        for r, p in batches:
            s.add_tags(reference=r, prediction=p)
    d = t.report().to_dict()
    assert d == one.report().to_dict()
    # by hand: no documents; tokens undefined without a tag batch, 0 with one; the error
    # categories counted (all 0) once a batch was aligned
    assert (d["documents"], d["tokens"]) == (0, 0 if batches else None)
    assert (d["categories"] is None) == (not batches)
    with pytest.raises(ConfigError, match="totals_only=True cannot be sent as a state"):
        t.to_state(keep="counts")


def test_reports_of_counts_have_the_measures_of_one_call():
    from iescore.stats import measure_names

    one = score_tags(reference=REF, prediction=PRED, doc_ids=IDS, scheme="IOB2")
    t = Scorer(scheme="IOB2", totals_only=True)
    t.add_tags(reference=REF, prediction=PRED, doc_ids=IDS)
    names = measure_names(one)
    assert "token_accuracy" in names
    assert measure_names(t.report()) == measure_names(merge_states(_shards("counts")).report()) == names


@pytest.mark.parametrize("keep", ["items", "counts"])
def test_tags_and_templates_in_one_scorer_send_the_one_call_digest(keep):
    # a part of tags (tokens counted) beside a part of templates (no tokens, filler texts):
    # one call concatenates them, and so must the reference digest of the summed counts
    s = Scorer(setting="OBD")
    s.add_tags(reference=[["B-speaker", "O"]], prediction=[["B-speaker", "O"]], tokens=[["Al", "x"]], doc_ids=["d"])
    s.add(reference=[Template("t", {"speaker": ["Al"], "place": ["Wean"]})],
          prediction=[Template("t", {"speaker": ["Al"]})])
    one = s.report()
    r = load_state(s.to_state(keep=keep)).report()
    assert r.signature == one.signature and r.to_dict() == one.to_dict()
    assert (r.overall.tp, r.overall.fn) == (2, 1)  # by hand: "Al" twice found, "Wean" missed
