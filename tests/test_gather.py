"""Scorer.add_tags holds small batches and scores them together (iescore.scoring.stream):
the numbers, items and views equal one batch per call, and every error is raised by the
call given the bad input, which then adds nothing."""

from __future__ import annotations

import json
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from iescore import ConfigError, Document, InputError, Scorer, Span, Template, score_tags
from iescore.scoring import stream
from iescore.scoring.batch import tagged_batch

TAGS = {
    "IOB2": ["O", "O", "B-A", "I-A", "B-B", "I-B"],
    "IOB1": ["O", "I-A", "I-B", "B-A", "B-B"],
    "IOBES": ["O", "B-A", "I-A", "E-A", "S-A", "S-B", "B-B", "E-B"],
}
CONFIGS = [
    {},
    {"detail": "prf"},
    {"rule": "O(1,1)", "counting": "one-to-one"},
    {"mode": "one-per-string"},
    {"setting": "OBD"},
]


@st.composite
def calls(draw, auto=False):
    """A stream of add_tags calls: each a few documents, numbered or named, with tokens or
    without (all with tokens when the options compare strings), and reports read between.
    Under "auto" each call draws its tags from its own alphabet: only "O" (no evidence of a
    scheme), B/I tags (IOB2, or IOB1 when a chunk starts with I-), E/S tags, bare labels,
    all of them and a tag of no scheme."""
    scheme = "auto" if auto else draw(st.sampled_from(sorted(TAGS)))
    options = dict(draw(st.sampled_from(CONFIGS)))
    strings = options.get("mode") == "one-per-string" or options.get("setting") == "OBD"
    alphabets = [["O"], TAGS["IOB2"], TAGS["IOBES"], ["O", "A", "B", "I-A"],  # bare labels: IO
                 sorted({t for ts in TAGS.values() for t in ts} | {"X-A", "A"})]  # X-A: of no scheme
    out = []
    for k in range(draw(st.integers(1, 8))):
        tags = draw(st.sampled_from(alphabets)) if auto else TAGS[scheme]
        docs = []
        for _ in range(draw(st.integers(0, 3))):
            n = draw(st.integers(0, 5))
            docs.append(tuple(draw(st.lists(st.sampled_from(tags), min_size=n, max_size=n)) for _ in "rp"))
        named = draw(st.booleans())
        tokens = strings or draw(st.booleans())
        out.append((docs, named, tokens, draw(st.booleans())))
    return scheme, options, draw(st.sampled_from(["conlleval", "discard"])), out


def _run(scheme, options, repair, stream_calls, gather, totals_only=False):
    """Everything a user can read of the stream's report (and of the reports read between
    calls), and every error a call raised (the stream goes on after it)."""
    seen = []
    with mock.patch.object(stream, "_GATHER_TOKENS", gather):
        s = Scorer(scheme=scheme, repair=repair, totals_only=totals_only, **options)
        for k, (docs, named, tokens, look) in enumerate(stream_calls):
            try:
                s.add_tags(reference=[r for r, _ in docs], prediction=[p for _, p in docs],
                           doc_ids=[f"c{k}d{j}" for j in range(len(docs))] if named else None,
                           tokens=[[f"w{i % 3}" for i in range(len(r))] for r, _ in docs] if tokens else None)
            except (InputError, ConfigError) as exc:
                seen.append(f"{type(exc).__name__}: {exc}")
            if look:
                seen.append(_everything(s.report(), totals_only))
        seen.append(_everything(s.report(), totals_only))
        seen.append((s.config.signature(), s._fixed, s._batches))
    return seen


def _everything(r, totals_only):
    out = {"dict": json.dumps(r.to_dict(), sort_keys=True), "table": r.format_table(),
           "conlleval": r.format_conlleval()}
    if not totals_only:
        out["docs"] = list(r.doc_ids)
        out["items"] = [list(r.items("reference")), list(r.items("prediction"))]
        out["per_document"] = {k: repr(v) for k, v in r.per_document().items()}
    return out


@settings(max_examples=150, deadline=None)
@given(calls(), st.sampled_from([1, 7, 1 << 16]))
def test_held_batches_score_like_one_batch_per_call(case, gather):
    scheme, options, repair, stream_calls = case
    # gather=0: every call is scored at once, as its own batch (the reference)
    assert _run(scheme, options, repair, stream_calls, gather) == _run(scheme, options, repair, stream_calls, 0)
    assert (_run(scheme, options, repair, stream_calls, gather, True)
            == _run(scheme, options, repair, stream_calls, 0, True))


# the drawn calls mix schemes on purpose: scheme='auto' warns of the mix (tests/test_slips.py checks it)
@pytest.mark.filterwarnings("ignore:scheme='auto':iescore.errors.IEScoreWarning")
@settings(max_examples=300, deadline=None)
@given(calls(auto=True), st.sampled_from([7, 1 << 16]))
def test_held_batches_under_auto_decide_like_one_batch_per_call(case, gather):
    # the scheme each call is decoded with, which fixes it, and the errors of calls that
    # disagree, all as when every call is scored at once
    scheme, options, repair, stream_calls = case
    assert _run(scheme, options, repair, stream_calls, gather) == _run(scheme, options, repair, stream_calls, 0)


def test_a_document_at_a_time_is_scored_like_one_call():
    ref = [["B-PER", "I-PER", "O"], ["O", "B-LOC"], ["I-ORG", "O"], []]
    pred = [["B-PER", "I-PER", "O"], ["B-LOC", "O"], ["B-ORG", "O"], []]
    s = Scorer(scheme="IOB2")
    for r, p in zip(ref, pred):
        s.add_tags(reference=[r], prediction=[p])
    assert s._held  # held, not scored yet
    got = s.report()
    # by hand: reference PER(0,2) LOC(1,2) ORG(0,1, repaired I- start); prediction PER(0,2)
    # LOC(0,1) ORG(0,1): PER and ORG found, LOC misplaced
    assert (got.overall.tp, got.overall.fp, got.overall.fn) == (2, 1, 1)
    assert list(got.doc_ids) == ["0", "1", "2", "3"]
    assert got.repair_sites == {"reference": ("document '2' (reference), token 0",)}
    assert got.to_dict() == score_tags(reference=ref, prediction=pred, scheme="IOB2").to_dict()


def _one_call(scheme, options, repair, docs, named, tokens, held):
    """Everything readable of one call's report, or its error: ``held`` through a Scorer's
    add_tags (held, then scored by report()), else through score_tags."""
    kw = dict(reference=[r for r, _ in docs], prediction=[p for _, p in docs],
              doc_ids=[f"d{j}" for j in range(len(docs))] if named else None,
              tokens=[[f"w{i % 3}" for i in range(len(r))] for r, _ in docs] if tokens else None)
    try:
        if held:
            s = Scorer(scheme=scheme, repair=repair, **options)
            s.add_tags(**kw)
            r = s.report()
        else:
            r = score_tags(scheme=scheme, repair=repair, **options, **kw)
    except (InputError, ConfigError) as exc:
        return f"{type(exc).__name__}: {exc}"
    return _everything(r, False), r.signature


@pytest.mark.filterwarnings("ignore:scheme='auto':iescore.errors.IEScoreWarning")  # mixed schemes, as above
@settings(max_examples=200, deadline=None)
@given(st.one_of(calls(), calls(auto=True)))
def test_score_tags_scores_like_a_held_call(case):
    # score_tags scores its one batch at once; a Scorer holds the same call and scores it
    # at report(): the same report, signature and errors
    scheme, options, repair, stream_calls = case
    docs, named, tokens, _ = stream_calls[0]
    assert (_one_call(scheme, options, repair, docs, named, tokens, False)
            == _one_call(scheme, options, repair, docs, named, tokens, True))


def test_score_tags_does_not_hold_its_batch():
    # holding copies the tags end to end for calls that one-shot scoring never makes
    with mock.patch.object(stream.Held, "add", side_effect=AssertionError("held")):
        r = score_tags(reference=[["B-A", "O"]], prediction=[["B-A", "B-A"]])
        with pytest.raises(AssertionError, match="held"):
            Scorer().add_tags(reference=[["B-A"]], prediction=[["B-A"]])
    assert (r.overall.tp, r.overall.fp, r.overall.fn) == (1, 1, 0)


def test_an_invalid_tag_raises_in_its_call_and_adds_nothing():
    s = Scorer(scheme="IOB2")
    s.add_tags(reference=[["B-A", "O"]], prediction=[["B-A", "O"]])
    with pytest.raises(InputError, match=r"document '1' \(prediction\), token 1: invalid tag 'S-A'"):
        s.add_tags(reference=[["O", "O"]], prediction=[["O", "S-A"]])
    s.add_tags(reference=[["B-B"]], prediction=[["O"]])
    r = s.report()
    # the failed call took no document and no number: the next one is document 1
    assert list(r.doc_ids) == ["0", "1"] and (r.overall.tp, r.overall.fn) == (1, 1)


@pytest.mark.parametrize("call, error, message", [
    (dict(reference=[["O"]], prediction=[["O", "O"]]), InputError, "reference has 1 tags but prediction has 2"),
    (dict(reference=[["O"]], prediction=[[3]]), InputError, r"token 0: tags must be strings, got 3"),
    (dict(reference=[["O"]], prediction=[[["O"]]]), InputError, "nested one level too deep"),
    (dict(reference=[["O"]], prediction=[["O"]], doc_ids=["a"]), InputError, "duplicate document id 'a'"),
    (dict(reference=[["O"]], prediction=[["O"]], tokens=[["x", "y"]]), InputError, "same shape"),
])
def test_bad_input_raises_in_its_call(call, error, message):
    s = Scorer(scheme="IOB2")
    s.add_tags(reference=[["B-A"]], prediction=[["B-A"]], doc_ids=["a"])
    with pytest.raises(error, match=message):
        s.add_tags(**call)
    assert s.report().n_documents == 1


@pytest.mark.parametrize("options, message", [
    ({"detail": "prf", "rule": "O(1,1)"}, "detail='prf' computes exact-match counts"),
    ({"setting": "OBD"}, "needs the tokens"),
])
def test_options_that_cannot_score_raise_in_the_first_call(options, message):
    s = Scorer(scheme="IOB2", **options)
    with pytest.raises(ConfigError, match=message):
        s.add_tags(reference=[["B-A"]], prediction=[["B-A"]])


def test_lists_changed_after_the_call_change_nothing():
    ref, pred, toks = [["B-A", "O"]], [["B-A", "O"]], [["x", "y"]]
    s = Scorer(scheme="IOB2")
    s.add_tags(reference=ref, prediction=pred, tokens=toks)
    ref[0][1] = pred[0][0] = "I-A"
    toks[0][0] = "z"
    r = s.report()
    assert (r.overall.tp, r.overall.fp) == (1, 0)
    assert [i["text"] for i in r.items("prediction")] == ["x"]


def test_held_input_is_scored_before_a_state_merge_or_batch():
    a, b = Scorer(scheme="IOB2"), Scorer(scheme="IOB2")
    a.add_tags(reference=[["B-A"]], prediction=[["B-A"]], doc_ids=["x"])
    b.add_tags(reference=[["B-A"]], prediction=[["O"]], doc_ids=["y"])
    m = a.merge(b).report()
    assert list(m.doc_ids) == ["x", "y"] and (m.overall.tp, m.overall.fn) == (1, 1)
    c = Scorer.from_state(a.to_state())
    assert c.report().overall.tp == 1
    # a batch added after held tags comes after them; use() scores what it does not describe
    a.add_tags(reference=[["O"]], prediction=[["B-A"]], doc_ids=["z"])
    a.add_batch(tagged_batch([["B-B"]], [["B-B"]], doc_ids=["w"]))
    a.add_tags(reference=[["B-A"]], prediction=[["B-A"]], doc_ids=["v"])
    a.use(documents="sentence")
    assert not a._held
    r = a.report()
    assert list(r.doc_ids) == ["x", "z", "w", "v"] and (r.overall.tp, r.overall.fp) == (3, 1)


# --- Documents (Scorer.add) ---------------------------------------------------------------

@st.composite
def document_calls(draw):
    """A stream of add calls of Documents (spans that may nest or overlap; predictions as
    span lists or Documents), a tag call now and then, an id used twice now and then."""
    options = dict(draw(st.sampled_from(CONFIGS[2:] + [{}, {"rule": "C(1)"}, {"mode": "match-best"}, {"supertags": "B=A"}])))
    out = []
    used = 0
    for k in range(draw(st.integers(1, 6))):
        if draw(st.integers(0, 5)) == 0:
            out.append(("tags", [(["B-A", "O"], ["B-A", "B-B"])]))
            continue
        docs = []
        for _ in range(draw(st.integers(0, 3))):
            n = draw(st.integers(1, 6))
            spans = [tuple(draw(st.lists(st.tuples(st.sampled_from("AB"), st.integers(0, n - 1), st.integers(1, 3)),
                                         max_size=3))) for _ in "rp"]
            r, p = ([Span(lab, s, min(s + w, n)) for lab, s, w in side] for side in spans)
            doc_id = f"d{used - 1}" if used and draw(st.integers(0, 9)) == 0 else f"d{used}"
            used += 1
            docs.append((doc_id, tuple(f"w{i % 3}" for i in range(n)), r, p, draw(st.booleans())))
        out.append(("docs", docs))
    return options, out


def _run_adds(scorer, stream_calls, add, gather):
    """The report's views and signature after ``add(s, call)`` for every call on a new
    ``scorer()``, and every error a call raised."""
    seen = []
    with mock.patch.object(stream, "_GATHER_TOKENS", gather):
        s = scorer()
        for call in stream_calls:
            try:
                add(s, call)
            except (InputError, ConfigError) as exc:
                seen.append(f"{type(exc).__name__}: {exc}")
        seen.append(_everything(s.report(), False))
        seen.append(s.config.signature())
    return seen


def _add_documents(s, call):
    kind, docs = call
    if kind == "tags":
        s.add_tags(reference=[r for r, _ in docs], prediction=[p for _, p in docs])
        return
    refs = [Document(i, toks, tuple(r)) for i, toks, r, _, _ in docs]
    s.add(reference=refs, prediction=[Document(i, toks, tuple(p)) if as_doc else p for i, toks, _, p, as_doc in docs])


def _run_documents(options, stream_calls, gather):
    return _run_adds(lambda: Scorer(scheme="IOB2", **options), stream_calls, _add_documents, gather)


@settings(max_examples=200, deadline=None)
@given(document_calls(), st.sampled_from([5, 1 << 16]))
def test_held_documents_score_like_one_batch_per_call(case, gather):
    options, stream_calls = case
    assert _run_documents(options, stream_calls, gather) == _run_documents(options, stream_calls, 0)


def test_a_document_per_call_is_held_and_its_errors_raised_in_the_call():
    s = Scorer()
    s.add(reference=[Document("a", ("x", "y"), (Span("P", 0, 1),))], prediction=[[Span("P", 0, 1)]])
    assert isinstance(s._held, stream.HeldDocuments)
    with pytest.raises(InputError, match="duplicate document id 'a'"):
        s.add(reference=[Document("a", ("x",), ())], prediction=[[]])
    with pytest.raises(InputError, match=r"document 'b': predicted span \('P', 1, 3\) is outside"):
        s.add(reference=[Document("b", ("x", "y"), ())], prediction=[[Span("P", 1, 3)]])
    s.add(reference=[Document("c", ("x", "y"), (Span("Q", 1, 2),))], prediction=[[]])
    r = s.report()
    # by hand: P found in "a", Q missed in "c"; the failed calls added nothing
    assert list(r.doc_ids) == ["a", "c"] and (r.overall.tp, r.overall.fp, r.overall.fn) == (1, 0, 1)


def test_a_call_the_ts_model_rejects_is_scored_on_its_own():
    # "b" has two overlapping spans once B is merged into A: the token & separator model
    # rejects its batch, so it must not share one with "a", whose TS counts stand
    s = Scorer(supertags="B=A")
    s.add(reference=[Document("a", ("x", "y"), ())], prediction=[[Span("A", 0, 1)]])
    s.add(reference=[Document("b", ("x", "y", "z"), (Span("A", 0, 2), Span("B", 1, 3)))], prediction=[[]])
    r = s.report()
    # by hand: "a" predicts token 0 where the reference has nothing: one token false positive
    a = r.per_document()["a"]
    assert (a.tok_tp, a.tok_fp, a.tok_fn, a.tok_n) == (0, 1, 0, 2)
    assert "multi-instance" in (r.ts_error or "")


@st.composite
def template_calls(draw):
    """A stream of add calls of Templates (fillers of two slots from a few words), an id
    used twice now and then."""
    options = dict(draw(st.sampled_from([{}, {"rule": "O(1,2)"}, {"counting": "one-to-one"}, {"rule": "C(1)"},
                                         {"mode": "match-best"}])))
    words = st.lists(st.sampled_from(["Dr", "Al", "Roth", "room", "5"]), min_size=1, max_size=3).map(" ".join)
    slots = st.dictionaries(st.sampled_from(["speaker", "location"]), st.lists(words, max_size=3).map(tuple))
    out, used = [], 0
    for _ in range(draw(st.integers(1, 6))):
        calls = []
        for _ in range(draw(st.integers(0, 3))):
            doc_id = f"t{used - 1}" if used and draw(st.integers(0, 9)) == 0 else f"t{used}"
            used += 1
            calls.append((doc_id, draw(slots), draw(slots)))
        out.append(calls)
    return options, out


def _run_templates(options, stream_calls, gather):
    def add(s, call):
        s.add(reference=[Template(i, r) for i, r, _ in call], prediction=[Template(i, p) for i, _, p in call])

    return _run_adds(lambda: Scorer(setting="OBD", **options), stream_calls, add, gather)


@settings(max_examples=150, deadline=None)
@given(template_calls(), st.sampled_from([3, 1 << 16]))
def test_held_templates_score_like_one_batch_per_call(case, gather):
    options, stream_calls = case
    assert _run_templates(options, stream_calls, gather) == _run_templates(options, stream_calls, 0)


def test_a_template_per_call_is_held():
    s = Scorer(setting="OBD")
    for k in range(3):
        s.add(reference=[Template(f"d{k}", {"speaker": ("Al Roth",)})],
              prediction=[Template(f"d{k}", {"speaker": ("Al Roth",) if k else ("Ido",)})])
    assert isinstance(s._held, stream.HeldDocuments) and s._held.templates
    with pytest.raises(InputError, match="duplicate document id 'd1'"):
        s.add(reference=[Template("d1", {})], prediction=[Template("d1", {})])
    r = s.report()
    # by hand: "Al Roth" found in d1 and d2, replaced by "Ido" in d0
    assert list(r.doc_ids) == ["d0", "d1", "d2"] and (r.overall.tp, r.overall.fp, r.overall.fn) == (2, 1, 1)
