"""The spaCy adapter, with real blank pipelines and hand-built Docs and Examples."""

from __future__ import annotations

import pytest
from conftest import require

spacy = require("spacy")
from iescore.adapters.spacy import doc_to_document, examples_to_documents, score_examples
from spacy.tokens import Doc
from spacy.tokens import Span as SpacySpan
from spacy.training import Example

from iescore import InputError


@pytest.fixture(scope="module")
def nlp():
    return spacy.blank("en")


def test_doc_to_document_keeps_tokens_whitespace_offsets_and_ents(nlp):
    doc = nlp("Ada Lovelace met Babbage in London.")
    doc.ents = [SpacySpan(doc, 0, 2, "PER"), SpacySpan(doc, 3, 4, "PER"), SpacySpan(doc, 5, 6, "LOC")]
    d = doc_to_document(doc, doc_id="a")
    assert d.tokens == ("Ada", "Lovelace", "met", "Babbage", "in", "London", ".")
    assert d.text == doc.text
    assert d.char_offsets[5] == (28, 34)
    assert [(s.label, s.start, s.end) for s in d.spans] == [("PER", 0, 2), ("PER", 3, 4), ("LOC", 5, 6)]


def test_span_group_scores_become_confidences(nlp):
    doc = nlp("Ada met Charles Babbage")
    doc.spans["sc"] = [SpacySpan(doc, 0, 1, "PER"), SpacySpan(doc, 2, 4, "PER"), SpacySpan(doc, 2, 3, "PER")]
    doc.spans["sc"].attrs["scores"] = [0.9, 0.6, 0.3]
    d = doc_to_document(doc, doc_id="b", spans_key="sc")
    assert [(s.start, s.end, s.score) for s in d.spans] == [(0, 1, 0.9), (2, 4, 0.6), (2, 3, 0.3)]
    with pytest.raises(InputError, match="doc has no span group 'zz'; groups: 'sc'"):
        doc_to_document(doc, spans_key="zz")


def test_same_tokenisation_example(nlp):
    ref = nlp("Ada met Charles Babbage")
    ref.ents = [SpacySpan(ref, 0, 1, "PER"), SpacySpan(ref, 2, 4, "PER")]
    pred = nlp("Ada met Charles Babbage")
    pred.ents = [SpacySpan(pred, 0, 1, "PER"), SpacySpan(pred, 3, 4, "PER")]
    r = score_examples([Example(pred, ref)])
    assert (r.overall.tp, r.overall.fp, r.overall.fn) == (1, 1, 1)
    r = score_examples([Example(pred, ref)], rule="O(0,1)")
    assert (r.overall.tp, r.overall.fp, r.overall.fn) == (2, 0, 0)


def test_different_tokenisations_are_aligned_by_characters(nlp):
    ref = Doc(nlp.vocab, words=["abcd", "ef"], spaces=[True, False])
    ref.ents = [SpacySpan(ref, 0, 1, "ORG")]  # "abcd"
    pred = Doc(nlp.vocab, words=["ab", "cd", "ef"], spaces=[False, True, False])
    pred.ents = [SpacySpan(pred, 0, 1, "ORG"), SpacySpan(pred, 2, 3, "LOC")]  # "ab" (inside a token), "ef"
    eg = Example(pred, ref)
    _, preds, counts = examples_to_documents([eg], misaligned="expand")
    assert [(s.label, s.start, s.end) for s in preds[0]] == [("ORG", 0, 1), ("LOC", 1, 2)]
    assert counts == {"misaligned": 1, "dropped": 0, "unannotated": 0}
    _, preds, counts = examples_to_documents([eg], misaligned="contract")
    assert [(s.label, s.start, s.end) for s in preds[0]] == [("LOC", 1, 2)]
    assert counts["dropped"] == 1
    with pytest.raises(InputError, match=r"characters \[0, 2\) do not fall on token boundaries"):
        examples_to_documents([eg], misaligned="error")
    # the P-28 pitfall: a sub-token prediction is no exact match (spaCy's default scorer says F = 1)
    r = score_examples([Example(pred, ref)], misaligned="expand")
    assert r.repairs["adapter"] == {"misaligned": 1}


def test_unaligned_prediction_is_a_false_positive_not_dropped(nlp):
    """P-27: gold "ab|cd" without entities, prediction ORG on "bc" in "a|bc|d"."""
    ref = Doc(nlp.vocab, words=["ab", "cd"], spaces=[False, False])
    ref.ents = []
    pred = Doc(nlp.vocab, words=["a", "bc", "d"], spaces=[False, False, False])
    pred.ents = [SpacySpan(pred, 1, 2, "ORG")]
    r = score_examples([Example(pred, ref)])
    assert (r.overall.tp, r.overall.fp, r.overall.fn) == (0, 1, 0)
    assert r.precision == 0.0


def test_missing_gold_annotation_is_ignored_like_spacy(nlp):
    """P-29: gold tokens x, y unannotated and z = PER; prediction ORG on x and PER on z."""
    ref = Doc(nlp.vocab, words=["x", "y", "z"])
    ref.set_ents([SpacySpan(ref, 2, 3, "PER")], missing=[SpacySpan(ref, 0, 2, "")])
    assert [t.ent_iob for t in ref] == [0, 0, 3]
    pred = Doc(nlp.vocab, words=["x", "y", "z"])
    pred.ents = [SpacySpan(pred, 0, 1, "ORG"), SpacySpan(pred, 2, 3, "PER")]
    r = score_examples([Example(pred, ref)])
    assert (r.overall.tp, r.overall.fp, r.overall.fn) == (1, 0, 0)
    assert r.labels == ("PER",)  # no fake ORG row
    assert r.repairs["adapter"] == {"unannotated": 1}
    r = score_examples([Example(pred, ref)], missing="outside")
    assert (r.overall.tp, r.overall.fp, r.overall.fn) == (1, 1, 0)


def test_texts_must_match(nlp):
    with pytest.raises(InputError, match="the predicted and reference texts differ"):
        examples_to_documents([Example(nlp("a b"), nlp("a c"))])
