"""Fuzzing the readers and adapters: any input either reads or raises the library's own error."""

from __future__ import annotations

import string

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from iescore.adapters.hf import pipeline_to_spans
from iescore.adapters.inline import parse_inline

from iescore import IEScoreError, Scorer, score_tags
from iescore.io.conll import read_conll
from iescore.text import document_from_text

# any input may warn (an empty file, a column given twice, mixed schemes): only an error is wrong
pytestmark = pytest.mark.filterwarnings("ignore::iescore.errors.IEScoreWarning")
FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

TAGS = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC", "E-PER", "S-LOC", "U-X", "L-X", "PER", "", "B-", "-X", "I-ORG-X"]
line = st.one_of(
    st.just(""),
    st.just("-DOCSTART- -X- O O"),
    st.builds(lambda w, g, p: f"{w} {g} {p}", st.text(alphabet=string.ascii_letters + "-", min_size=1, max_size=5),
              st.sampled_from(TAGS), st.sampled_from(TAGS)),
    st.text(max_size=12),
)


@FUZZ
@given(st.lists(line, max_size=25), st.sampled_from(["auto", "IOB1", "IOB2", "IOBES", "BILOU", "IO"]),
       st.sampled_from(["conlleval", "strict", "discard"]))
def test_conll_reader_and_scorer(tmp_path_factory, lines, scheme, repair):
    path = tmp_path_factory.mktemp("fz") / "f.conll"
    path.write_text("\n".join(lines), encoding="utf-8")
    try:
        s = Scorer(scheme=scheme, repair=repair)
        s.add_batch(read_conll(str(path)))
        r = s.report()
    except IEScoreError:
        return
    c = r.overall
    assert c.N == c.C + c.S + c.D and c.M == c.C + c.S + c.I


@FUZZ
@given(st.binary(max_size=200))
def test_conll_reader_bytes(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("fz") / "b.conll"
    path.write_bytes(data)
    try:
        read_conll(str(path))
    except IEScoreError:
        pass


@FUZZ
@given(st.lists(st.lists(st.sampled_from(TAGS), max_size=8), max_size=4), st.data())
def test_tag_lists(ref, data):
    pred = [data.draw(st.lists(st.sampled_from(TAGS), min_size=len(s), max_size=len(s))) for s in ref]
    try:
        score_tags(reference=ref, prediction=pred, scheme=data.draw(st.sampled_from(["auto", "IOB2", "IOE1", "BMES"])))
    except IEScoreError:
        pass


piece = st.one_of(
    st.sampled_from(["<stime>", "</stime>", "<speaker>", "</speaker>", "<sentence>", "</sentence>", "<a@b>", " ", "\n"]),
    st.text(alphabet=string.ascii_letters + ":.,< >", max_size=6),
)


@FUZZ
@given(st.lists(piece, max_size=20), st.sampled_from(["regex", "whitespace"]))
def test_inline_reader(pieces, tokenizer):
    text = "".join(pieces)
    try:
        doc = parse_inline("f", text, tokenizer=tokenizer)
    except IEScoreError:
        return
    for _lab, a, b in doc.slots:
        assert 0 <= a < b <= len(doc.text)


entity = st.fixed_dictionaries(
    {"start": st.integers(-3, 40), "end": st.integers(-3, 40), "score": st.floats(0, 1)},
    optional={"entity_group": st.sampled_from(["PER", "LOC", ""]), "entity": st.sampled_from(TAGS)},
)


@FUZZ
@given(st.lists(entity, max_size=5), st.sampled_from(["expand", "contract", "error"]))
def test_pipeline_outputs(outputs, misaligned):
    ref = document_from_text("p", "Ada Lovelace met Charles Babbage in London.", tokenizer="regex")
    try:
        spans, _ = pipeline_to_spans(outputs, ref, misaligned=misaligned)
    except IEScoreError:
        return
    assert all(0 <= s.start < s.end <= len(ref.tokens) for s in spans)
