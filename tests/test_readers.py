"""The readers of character-offset input (brat, JSONL shapes, spaCy DocBin): fixtures
written for these tests (tests/fixtures/readers), read values checked by hand, round
trips through the writers, bad input named, and one small corpus scored from CoNLL
tags, brat files, JSONL and a DocBin giving the same report."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from iescore import InputError, Scorer, Span
from iescore.errors import ConfigError
from iescore.io.brat import read_brat, write_brat
from iescore.io.chars import TextDocument
from iescore.io.conll import read_conll
from iescore.io.jsonl import read_jsonl, write_jsonl
from iescore.io.textscore import score_text

FIX = Path(__file__).parent / "fixtures" / "readers"
T1 = "Al Roth met Ido Erev in Haifa ."
T2 = "EU rejects German call ."
# the corpus of corpus.conll, by hand: character offsets of its entities
GOLD = {"doc1": [("PER", 0, 7), ("PER", 12, 20), ("LOC", 24, 29)], "doc2": [("ORG", 0, 2), ("MISC", 11, 17)]}
PRED = {"doc1": [("PER", 0, 7), ("PER", 12, 15), ("ORG", 24, 29)], "doc2": [("ORG", 0, 2), ("MISC", 11, 22)]}


def spans_of(corpus):
    return {d.id: [(s.label, s.start, s.end) for s in d.spans] for d in corpus.documents}


# --- brat ---------------------------------------------------------------------------------
def test_brat_reads_the_text_bound_spans_and_counts_what_it_skips():
    gold = read_brat(str(FIX / "brat" / "gold"))
    assert spans_of(gold) == GOLD
    assert [d.text for d in gold.documents] == [T1, T2]
    # doc1.ann has R1 (read as a relation) and #1, doc2.ann has A1
    assert dict(gold.notes) == {"skipped brat notes": 1, "skipped brat attributes": 1}
    assert [(r.label, r.head.start, r.tail.start) for r in gold.documents[0].relations] == [("Meets", 0, 12)]
    assert spans_of(read_brat(str(FIX / "brat" / "pred"))) == PRED
    one = read_brat(str(FIX / "brat" / "gold" / "doc2.ann"))
    assert spans_of(one) == {"doc2": GOLD["doc2"]}


def _brat(tmp_path, ann, text=T1, name="d"):
    (tmp_path / f"{name}.txt").write_text(text)
    (tmp_path / f"{name}.ann").write_text(ann)
    return str(tmp_path)


def test_brat_discontinuous_spans_follow_the_chosen_policy(tmp_path):
    folder = _brat(tmp_path, "T1\tPER 0 2;12 15\tAl Ido\n")
    with pytest.raises(InputError, match=r"d\.ann:1: discontinuous span PER 0 2;12 15; choose a policy"):
        read_brat(folder)
    split = read_brat(folder, discontinuous="split")
    assert spans_of(split) == {"d": [("PER", 0, 2), ("PER", 12, 15)]}
    assert dict(split.notes) == {"discontinuous split": 1}
    cover = read_brat(folder, discontinuous="cover")
    assert spans_of(cover) == {"d": [("PER", 0, 15)]}  # first start to last end, the gap included
    assert dict(cover.notes) == {"discontinuous covered": 1}
    with pytest.raises(ConfigError, match="'error', 'split' or 'cover'"):
        read_brat(folder, discontinuous="join")


@pytest.mark.parametrize("ann, message", [
    ("T1\tPER 0 99\tAl\n", r"d\.ann:1: span \('PER', 0, 99\) ends outside the text of 31 characters"),
    ("T1\tPER 7 3\tx\n", r"d\.ann:1: span \('PER', 7, 3\) is empty or reversed"),
    ("T1\tPER 3 3\t\n", r"d\.ann:1: span \('PER', 3, 3\) is empty or reversed"),
    ("T1\tPER 0 two\tAl\n", r"d\.ann:1: expected 'START END' character offsets, got '0 two'"),
    ("T1\tPER 0 7\tAl Ruth\n", r"d\.ann:1: the annotation's text 'Al Ruth' is not the text at 0 7 .* \('Al Roth'\)"),
    ("X1\tPER 0 7\tAl Roth\n", r"d\.ann:1: unknown annotation 'X1'"),
])
def test_brat_bad_annotations_are_errors_naming_the_file_and_line(tmp_path, ann, message):
    with pytest.raises(InputError, match=message):
        read_brat(_brat(tmp_path, ann))


def test_an_ann_without_its_txt_is_an_error_naming_both(tmp_path):
    (tmp_path / "lonely.ann").write_text("T1\tPER 0 2\tAl\n")
    with pytest.raises(InputError, match=r"lonely\.ann: its text .*lonely\.txt does not exist"):
        read_brat(str(tmp_path))


def test_brat_round_trip(tmp_path):
    docs = [TextDocument("a", T1, (Span("PER", 0, 7), Span("PER", 12, 20))),
            TextDocument("sub/b", "Line one\nline two\n", (Span("X", 5, 13),))]  # a span across a line end
    write_brat(docs, str(tmp_path))
    back = read_brat(str(tmp_path))
    assert back.documents == tuple(docs) and dict(back.notes) == {}


# --- JSONL shapes ---------------------------------------------------------------------------
def test_jsonl_reads_doccano_prodigy_and_presidio_shapes():
    gold = read_jsonl(str(FIX / "gold.jsonl"))  # doccano: "label" triples, then "entities" with *_offset
    assert spans_of(gold) == GOLD
    pred = read_jsonl(str(FIX / "pred.jsonl"))  # Prodigy "spans" (id in meta), presidio "results"
    assert spans_of(pred) == PRED
    assert [s.score for s in pred.documents[1].spans] == [0.9, 0.5]  # presidio's scores
    assert dict(pred.notes) == {"skipped prodigy reject answers": 1}  # line 3


def test_jsonl_reads_label_studio_exports(tmp_path):
    task = {"id": 12, "data": {"text": T2}, "annotations": [
        {"was_cancelled": True, "result": []},
        {"result": [
            {"type": "labels", "value": {"start": 0, "end": 2, "text": "EU", "labels": ["ORG", "GPE"]}},
            {"type": "choices", "value": {"choices": ["news"]}},
        ]}],
        "predictions": [{"result": [{"type": "labels", "value": {"start": 11, "end": 17, "labels": ["MISC"]}}]}]}
    path = tmp_path / "ls.json"
    path.write_text(json.dumps([task], indent=1))  # Label Studio's JSON export: one list
    got = read_jsonl(str(path))
    # one span per label of the region; the cancelled annotation and the choices result counted
    assert spans_of(got) == {"12": [("ORG", 0, 2), ("GPE", 0, 2)]}
    assert dict(got.notes) == {"skipped cancelled annotations": 1, "skipped label studio choices results": 1}
    assert spans_of(read_jsonl(str(path), source="predictions")) == {"12": [("MISC", 11, 17)]}
    task["annotations"][0]["was_cancelled"] = False
    path.write_text(json.dumps([task]))
    with pytest.raises(InputError, match=r"the task has 2 annotations; choose one with pick=0..1"):
        read_jsonl(str(path))
    assert spans_of(read_jsonl(str(path), pick=0)) == {"12": []}
    # JSON-MIN: flat records with "label": [{start, end, labels}]
    (tmp_path / "min.json").write_text(json.dumps([{"id": 3, "text": T2, "label": [
        {"start": 0, "end": 2, "text": "EU", "labels": ["ORG"]}]}]))
    assert spans_of(read_jsonl(str(tmp_path / "min.json"))) == {"3": [("ORG", 0, 2)]}


@pytest.mark.parametrize("line, message", [
    ('{"id": "a", "text": "Al", "spans": [{"start": 0, "end": 5, "label": "P"}]}',
     r"x\.jsonl:2 \(document 'a'\): span \('P', 0, 5\) ends outside the text of 2 characters"),
    ('{"id": "a", "text": "Al", "spans": [{"start": 2, "end": 1, "label": "P"}]}', r"x\.jsonl:2 .*is empty or reversed"),
    ('{"id": "a", "text": "Al", "spans": [{"start": 1, "end": 1, "label": "P"}]}', r"x\.jsonl:2 .*is empty or reversed"),
    ('{"id": "a", "text": "Al", "spans": [{"start": 0, "end": 1}]}', r"x\.jsonl:2 .*has no 'label', 'entity_type'"),
    ('{"id": "a", "text": "Al", "spans": [{"start": "0", "end": 1, "label": "P"}]}', r"start must be an integer, got '0'"),
    ('{"id": "a", "spans": []}', r"x\.jsonl:2 \(document 'a'\): a document needs 'text'"),
    ('{"id": "a", "text": "Al", ', r"x\.jsonl:2: not valid JSON"),
    ('[1, 2]', r"x\.jsonl:2: a document is a JSON object, got list"),
])
def test_jsonl_bad_input_names_the_file_line_and_value(tmp_path, line, message):
    path = tmp_path / "x.jsonl"
    path.write_text('{"id": "ok", "text": "fine"}\n' + line + "\n")
    with pytest.raises(InputError, match=message):
        read_jsonl(str(path))


def test_jsonl_round_trip_keeps_spans_scores_and_tokens(tmp_path):
    docs = [TextDocument("a", T1, (Span("PER", 0, 7, 0.25), Span("LOC", 24, 29)), ((0, 2), (3, 7))),
            TextDocument("b", "Zoë  ", ())]
    write_jsonl(docs, str(tmp_path / "o.jsonl"))
    assert read_jsonl(str(tmp_path / "o.jsonl")).documents == tuple(docs)


# --- spaCy DocBin ----------------------------------------------------------------------------
def _docbin(path):
    """A DocBin built with spaCy itself: doc1 of the corpus with its gold entities, and a doc
    whose entities were never set (spaCy's missing annotation) and which holds a whitespace token."""
    from spacy.tokens import Doc, DocBin
    from spacy.tokens import Span as SpacySpan
    from spacy.vocab import Vocab

    vocab = Vocab()
    d1 = Doc(vocab, words=T1.split(), spaces=[True] * 7 + [False])
    d1.ents = [SpacySpan(d1, 0, 2, "PER"), SpacySpan(d1, 3, 5, "PER"), SpacySpan(d1, 6, 7, "LOC")]
    d1.user_data["id"] = "doc1"
    d2 = Doc(vocab, words=["EU", " ", "rejects"], spaces=[True, False, False])  # "EU  rejects": a space token
    db = DocBin(store_user_data=True)
    db.add(d1)
    db.add(d2)
    db.to_disk(path)


def test_docbin_reads_text_entities_tokens_and_counts_unannotated_tokens(tmp_path):
    pytest.importorskip("spacy")
    from iescore.io.docbin import read_docbin

    path = str(tmp_path / "c.spacy")
    _docbin(path)
    got = read_docbin(path)
    assert spans_of(got) == {"doc1": GOLD["doc1"], "c.spacy#2": []}
    # token offsets by hand: Al 0-2, Roth 3-7, met 8-11, Ido 12-15, Erev 16-20, in 21-23, Haifa 24-29, . 30-31
    assert got.documents[0].tokens == ((0, 2), (3, 7), (8, 11), (12, 15), (16, 20), (21, 23), (24, 29), (30, 31))
    assert got.documents[0].text == T1 and got.documents[1].text == "EU  rejects"
    assert got.documents[1].tokens == ((0, 2), (4, 11))  # the whitespace token [3, 4) left out
    assert dict(got.notes) == {"unannotated tokens read as outside": 2}  # the second doc's 2 tokens


def test_docbin_round_trip_and_bad_files(tmp_path):
    pytest.importorskip("spacy")
    from iescore.io.docbin import read_docbin, write_docbin

    docs = [TextDocument("a", T1, (Span("PER", 0, 7), Span("LOC", 24, 29))), TextDocument("b", T2, ())]
    write_docbin(docs, str(tmp_path / "o.spacy"))
    back = read_docbin(str(tmp_path / "o.spacy"))
    assert [(d.id, d.text, d.spans) for d in back.documents] == [(d.id, d.text, d.spans) for d in docs]
    with pytest.raises(InputError, match=r"span \('PER', 0, 5\) does not fall on spaCy's tokens"):
        write_docbin([TextDocument("c", T1, (Span("PER", 0, 5),))], str(tmp_path / "x.spacy"))
    (tmp_path / "junk.spacy").write_bytes(b"not a docbin")
    with pytest.raises(InputError, match=r"junk\.spacy: not a spaCy DocBin file"):
        read_docbin(str(tmp_path / "junk.spacy"))


# --- one corpus, four formats, one report -----------------------------------------------------
# The corpus by hand (exact rule, any-match counting): doc1 PER "Al Roth" TP; PER "Ido" against
# "Ido Erev" FP + FN; "Haifa" ORG against LOC FP + FN; doc2 ORG "EU" TP; MISC "German call"
# against "German" FP + FN. TP 2, FP 3, FN 3: P = R = F1 = 2/5. Slot errors: Al Roth and EU
# correct (C 2), the three others aligned but wrong (S 3), D = I = 0, SER = 3/5.
# What legitimately differs from the CoNLL report: the signature (tags were decoded as IOB2
# from sentences, docs:sentence; spans were mapped onto whitespace tokens: scheme:spans,
# misaligned, level, tokenizer; the ref digest covers the document ids, x.conll#k vs docK),
# the token accuracy (conlleval's, defined on tag input only: None for spans), and
# ``repairs`` (tag decoding repairs on tag input; none for spans).
TAG_ONLY = ("signature", "tokens", "token_accuracy", "token_accuracy_non_o", "repairs")


def _strip(d):
    return {k: v for k, v in d.items() if k not in TAG_ONLY}


def test_one_corpus_from_conll_brat_jsonl_and_docbin_gives_one_report(tmp_path):
    s = Scorer(scheme="auto")
    s.add_batch(read_conll(str(FIX / "corpus.conll")))
    conll = s.report().to_dict()
    assert (conll["overall"]["tp"], conll["overall"]["fp"], conll["overall"]["fn"]) == (2, 3, 3)
    assert conll["overall"]["f1"] == pytest.approx(2 / 5)
    sl = conll["slot_errors"]
    assert (sl["C"], sl["S"], sl["D"], sl["I"], sl["ser"]) == (2, 3, 0, 0, pytest.approx(3 / 5))
    opts = {"level": "tokens", "tokenizer": "whitespace"}
    brat = score_text(read_brat(str(FIX / "brat" / "gold")).documents,
                      read_brat(str(FIX / "brat" / "pred")).documents, **opts).to_dict()
    jsonl = score_text(read_jsonl(str(FIX / "gold.jsonl")).documents,
                       read_jsonl(str(FIX / "pred.jsonl")).documents, **opts).to_dict()
    assert _strip(brat) == _strip(conll)
    assert jsonl == brat  # same ids, same options: the signature too
    assert brat["tokens"] is None and brat["repairs"] == {}
    assert brat["signature"].split("|")[9:12] == ["misaligned:expand", "level:tokens", "tokenizer:whitespace"]
    # mixed formats: brat gold against JSONL predictions (texts agree)
    mixed = score_text(read_brat(str(FIX / "brat" / "gold")).documents,
                       read_jsonl(str(FIX / "pred.jsonl")).documents, **opts).to_dict()
    assert mixed == brat


def test_a_docbin_gold_with_its_own_tokens_scores_like_the_brat_gold(tmp_path):
    pytest.importorskip("spacy")
    from iescore.io.docbin import read_docbin

    _docbin(str(tmp_path / "c.spacy"))
    gold = [d for d in read_docbin(str(tmp_path / "c.spacy")).documents if d.id == "doc1"]
    pred = [d for d in read_brat(str(FIX / "brat" / "pred")).documents if d.id == "doc1"]
    given = score_text(gold, pred, level="tokens", tokenizer="given").to_dict()
    brat = score_text([d for d in read_brat(str(FIX / "brat" / "gold")).documents if d.id == "doc1"], pred,
                      level="tokens", tokenizer="whitespace").to_dict()
    assert {k: v for k, v in given.items() if k != "signature"} == {k: v for k, v in brat.items() if k != "signature"}
    assert "tokenizer:given" in given["signature"]
    # doc1 alone: TP 1 (Al Roth), FP 2, FN 2
    assert (given["overall"]["tp"], given["overall"]["fp"], given["overall"]["fn"]) == (1, 2, 2)


def test_texts_that_differ_between_formats_are_an_error_naming_the_character(tmp_path):
    os.makedirs(tmp_path / "g")
    (tmp_path / "g" / "doc1.txt").write_text(T1 + "\n")  # an editor's final newline
    (tmp_path / "g" / "doc1.ann").write_text("T1\tPER 0 7\tAl Roth\n")
    gold = read_brat(str(tmp_path / "g")).documents
    pred = [d for d in read_jsonl(str(FIX / "pred.jsonl")).documents if d.id == "doc1"]
    with pytest.raises(InputError, match=r"document 'doc1': the prediction's text differs from the reference's "
                                         r"at character 31: '\\n' \(reference\) vs the end of the text \(prediction\)"):
        score_text(gold, pred, level="characters")


def test_docbin_without_spacy_says_what_needs_it(monkeypatch, tmp_path):
    """Without spaCy (an import that fails), reading and writing a DocBin each name what
    they were doing and the extra to install."""
    import sys

    from iescore.io.docbin import read_docbin, write_docbin

    monkeypatch.setitem(sys.modules, "spacy", None)  # `import spacy` raises ImportError
    with pytest.raises(ConfigError) as e:
        read_docbin(str(tmp_path / "x.spacy"))
    assert str(e.value) == "reading .spacy files needs spaCy (pip install 'iescore[spacy]')"
    with pytest.raises(ConfigError) as e:
        write_docbin([TextDocument("d", T1, ())], str(tmp_path / "x.spacy"))
    assert str(e.value) == "writing .spacy files needs spaCy (pip install 'iescore[spacy]')"
