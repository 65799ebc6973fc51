"""The readers of relations and entity links: brat R and N lines, the JSONL shape with
span ids, character-offset documents mapped onto tokens, spaCy's kb_id_, LLM relation
strings in OBD, and brat files scored end to end. Every number is worked out by hand
from the fixtures (tests/fixtures/relations) and the definitions (relations: labels
equal and both arguments under the rule; links: ids equal and mentions under the rule)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import iescore
from iescore import InputError, Link, Relation, Span
from iescore.cli import main
from iescore.errors import ConfigError, IEScoreWarning
from iescore.io.brat import read_brat, write_brat
from iescore.io.chars import TextDocument, text_template, to_document
from iescore.io.extractions import Extraction, llm_templates, read_llm
from iescore.io.jsonl import read_jsonl, write_jsonl
from iescore.io.llm import score_llm
from iescore.io.textscore import score_text

FIX = Path(__file__).parent / "fixtures" / "relations"
GOLD, PRED = FIX / "brat" / "gold", FIX / "brat" / "pred"
TEXT = "Al Roth works for IBM in Paris . Ido Erev lives in Haifa ."
# the entities of the fixture, by hand: character offsets into TEXT
AL, IBM, PARIS, IDO_EREV, IDO, HAIFA = (("PER", 0, 7), ("ORG", 18, 21), ("LOC", 25, 30), ("PER", 33, 41),
                                        ("PER", 33, 36), ("LOC", 51, 56))
MISSING_WARNING = r"2 brat relations or normalizations name an id that is no entity.*doc1\.ann:9 \('T9'\).*doc1\.ann:13 \('E1'\)"


def rels_of(doc):
    return [(r.label, (r.head.label, r.head.start, r.head.end), (r.tail.label, r.tail.start, r.tail.end))
            for r in doc.relations]


def links_of(doc):
    return [((x.span.label, x.span.start, x.span.end), x.id) for x in doc.links]


def read_gold():
    with pytest.warns(IEScoreWarning, match=MISSING_WARNING):
        return read_brat(str(GOLD))


# --- brat -----------------------------------------------------------------------------------
def test_brat_reads_relations_and_links_and_counts_every_skipped_line():
    gold = read_gold()
    (doc,) = gold.documents
    assert doc.text == TEXT
    assert [(s.label, s.start, s.end) for s in doc.spans] == [AL, IBM, PARIS, IDO_EREV, HAIFA]
    # R1..R3; R4 names T9, which does not exist
    assert rels_of(doc) == [("works_for", AL, IBM), ("located_in", IBM, PARIS), ("lives_in", IDO_EREV, HAIFA)]
    # N1, N2, N3, N5 (N4 names the event E1); the id as written, RID:EID
    assert links_of(doc) == [(AL, "Wikidata:Q1"), (IBM, "Wikidata:Q37156"), (HAIFA, "Wikidata:Q41621"),
                             (IDO_EREV, "Wikidata:Q2")]
    # one line of each skipped kind: *, E1, A1, #1; R4 and N4
    assert dict(gold.notes) == {
        "skipped brat equivalences": 1, "skipped brat events": 1, "skipped brat attributes": 1,
        "skipped brat notes": 1, "skipped brat relations to missing entities": 1,
        "skipped brat normalizations of missing entities": 1,
    }
    pred = read_brat(str(PRED))
    (p,) = pred.documents
    assert rels_of(p) == [("works_for", AL, IBM), ("located_in", PARIS, IBM), ("lives_in", IDO, HAIFA)]
    assert links_of(p) == [(AL, "Wikidata:Q1"), (IBM, "Wikidata:Q95"), (HAIFA, "Wikidata:Q41621"), (IDO, "Wikidata:Q2")]
    assert dict(pred.notes) == {}


def _brat(tmp_path, ann, text=TEXT, name="d"):
    (tmp_path / f"{name}.txt").write_text(text)
    (tmp_path / f"{name}.ann").write_text(ann)
    return str(tmp_path)


def test_brat_relations_of_a_discontinuous_entity_follow_the_policy(tmp_path):
    folder = _brat(tmp_path, "T1\tPER 0 2;3 7\tAl Roth\nT2\tORG 18 21\tIBM\nR1\tworks_for Arg1:T1 Arg2:T2\n"
                             "N1\tReference T1 Wikidata:Q1\tAl Roth\nN2\tReference T2 Wikidata:Q37156\tIBM\n")
    cover = read_brat(folder, discontinuous="cover")
    assert rels_of(cover.documents[0]) == [("works_for", ("PER", 0, 7), IBM)]
    assert links_of(cover.documents[0]) == [(("PER", 0, 7), "Wikidata:Q1"), (IBM, "Wikidata:Q37156")]
    split = read_brat(folder, discontinuous="split")  # T1 is two spans: no one argument
    assert rels_of(split.documents[0]) == [] and links_of(split.documents[0]) == [(IBM, "Wikidata:Q37156")]
    assert dict(split.notes) == {"discontinuous split": 1, "skipped brat relations of split entities": 1,
                                 "skipped brat normalizations of split entities": 1}
    with pytest.raises(InputError, match=r"d\.ann:1: discontinuous span PER 0 2;3 7"):
        read_brat(folder)


def test_brat_arg1_is_the_head_whatever_the_order(tmp_path):
    folder = _brat(tmp_path, "T1\tPER 0 7\tAl Roth\nT2\tORG 18 21\tIBM\nR1\tworks_for Arg2:T2 Arg1:T1\n")
    assert rels_of(read_brat(folder).documents[0]) == [("works_for", AL, IBM)]


@pytest.mark.parametrize("ann, message", [
    ("T1\tPER 0 7\tAl Roth\nR1\tworks_for Arg1:T1\n", r"d\.ann:2: a relation is 'R<id><TAB>LABEL Arg1:<id> Arg2:<id>'"),
    ("T1\tPER 0 7\tAl Roth\nN1\tReference T1\tAl\n", r"d\.ann:2: a normalization is 'N<id><TAB>Reference <id> RID:EID"),
    ("T1\tPER 0 7\tAl Roth\nT1\tORG 18 21\tIBM\n", r"d\.ann:2: the id 'T1' is given twice \(lines 1 and 2\)"),
    ("T1\tPER 0 70\tAl Roth\n", r"d\.ann:1: span \('PER', 0, 70\) ends outside the text of 58 characters"),
])
def test_brat_bad_lines_name_the_file_and_line(tmp_path, ann, message):
    with pytest.raises(InputError, match=message):
        read_brat(_brat(tmp_path, ann))


def test_brat_round_trip_with_relations_and_links(tmp_path):
    doc = TextDocument("sub/d", TEXT, (Span(*AL), Span(*IBM)),
                       relations=(("works_for", 0, 1), ("lives_in", IDO_EREV, HAIFA)),
                       links=((0, "Wikidata:Q1"), (HAIFA, "Wikidata:Q41621")))
    write_brat([doc], str(tmp_path))
    ann = (tmp_path / "sub" / "d.ann").read_text().splitlines()
    # the arguments and mentions that are no span get T lines after the spans
    assert ann == ["T1\tPER 0 7\tAl Roth", "T2\tORG 18 21\tIBM", "T3\tPER 33 41\tIdo Erev", "T4\tLOC 51 56\tHaifa",
                   "R1\tworks_for Arg1:T1 Arg2:T2", "R2\tlives_in Arg1:T3 Arg2:T4",
                   "N1\tReference T1 Wikidata:Q1\tAl Roth", "N2\tReference T4 Wikidata:Q41621\tHaifa"]
    (back,) = read_brat(str(tmp_path)).documents
    assert back.id == "sub/d" and back.relations == doc.relations and back.links == doc.links
    assert [(s.label, s.start, s.end) for s in back.spans] == [AL, IBM, IDO_EREV, HAIFA]
    with pytest.raises(InputError, match=r"document 'x': the link id 'Douglas Adams' holds whitespace"):
        write_brat([TextDocument("x", TEXT, links=((AL, "Douglas Adams"),))], str(tmp_path))


# --- character offsets to tokens --------------------------------------------------------------
def test_text_documents_check_their_relations_and_links():
    with pytest.raises(InputError, match=r"document 'd': relation #0 'r': the tail: span index 5 names no span "
                                         r"of the document \(it has 2 spans, 0\.\.1\)"):
        TextDocument("d", TEXT, (AL, IBM), relations=(("r", 0, 5),))
    with pytest.raises(InputError, match=r"document 'd': link #0: the mention: span \('PER', 0, 90\) ends outside"):
        TextDocument("d", TEXT, links=((("PER", 0, 90), "Q1"),))


def test_relations_and_links_are_mapped_onto_tokens_and_counted():
    # "Al Roth" 0-7 on the tokens; "l Roth" (1-7) and "Ha" (51-53) are off the token boundaries;
    # "r" (5..6 inside "Roth") covers no whole token (contract drops it)
    doc = TextDocument("d", TEXT, relations=(("works_for", ("PER", 1, 7), IBM), ("lives_in", IDO_EREV, ("LOC", 51, 53)),
                                             ("r", ("X", 5, 6), IBM)),
                       links=((("PER", 1, 7), "Q1"), (IBM, "Q37156"), (("X", 5, 6), "Q0")))
    d, c = to_document(doc, level="tokens", tokenizer="whitespace", misaligned="expand")
    # tokens: Al(0) Roth(1) works(2) for(3) IBM(4) in(5) Paris(6) .(7) Ido(8) Erev(9) lives(10) in(11) Haifa(12) .(13)
    assert [(r.label, r.head.start, r.head.end, r.tail.start, r.tail.end) for r in d.relations] == [
        ("works_for", 0, 2, 4, 5), ("lives_in", 8, 10, 12, 13), ("r", 1, 2, 4, 5)]
    assert [(x.span.start, x.span.end, x.id) for x in d.links] == [(0, 2, "Q1"), (4, 5, "Q37156"), (1, 2, "Q0")]
    assert c == {"misaligned": 0, "dropped": 0, "relation arguments misaligned": 3, "relations dropped": 0,
                 "link mentions misaligned": 2, "links dropped": 0}
    d, c = to_document(doc, level="tokens", tokenizer="whitespace", misaligned="contract")
    # contract: "l Roth" -> Roth (1, 2); "Ha" and "r" hold no whole token: their relations and link dropped
    assert [(r.label, r.head.start, r.head.end) for r in d.relations] == [("works_for", 1, 2)]
    assert [(x.span.start, x.span.end, x.id) for x in d.links] == [(1, 2, "Q1"), (4, 5, "Q37156")]
    assert c == {"misaligned": 0, "dropped": 0, "relation arguments misaligned": 1, "relations dropped": 2,
                 "link mentions misaligned": 1, "links dropped": 1}
    with pytest.raises(InputError, match=r"document 'd': span \('PER', 1, 7\) 'l Roth': characters \[1, 7\) do not fall"):
        to_document(doc, level="tokens", tokenizer="whitespace", misaligned="error")
    d, c = to_document(doc, level="characters")
    assert (d.relations[0].head.start, d.relations[0].head.end) == (1, 7) and c["relations dropped"] == 0


def test_the_notes_of_what_was_not_mapped_reach_the_report():
    ref = [TextDocument("d", TEXT, (AL, IBM), relations=(("works_for", 0, 1),), links=((0, "Q1"),))]
    pred = [TextDocument("d", TEXT, relations=(("works_for", ("PER", 1, 7), IBM),), links=((("PER", 3, 5), "Q1"),))]
    r = score_text(ref, pred, level="tokens", tokenizer="whitespace", misaligned="contract", task="relations")
    # "l Roth" contracts to Roth [1, 2): the head misses "Al" under E -> FP and FN
    assert (r.overall.tp, r.overall.fp, r.overall.fn) == (0, 1, 1)
    assert r.repairs["adapter"] == {"relation arguments misaligned": 1}
    r = score_text(ref, pred, level="tokens", tokenizer="whitespace", misaligned="contract", task="links")
    # "ot" (3-5) holds no whole token: the predicted link is dropped and counted; the answer is missed
    assert (r.overall.tp, r.overall.fp, r.overall.fn) == (0, 0, 1)
    assert r.repairs["adapter"] == {"links dropped": 1}
    r = score_text(ref, pred, level="tokens", tokenizer="whitespace", misaligned="expand", task="links",
                   rule="O(inf,inf)")
    assert (r.overall.tp, r.overall.fp, r.overall.fn) == (1, 0, 0)  # Roth overlaps "Al Roth"
    assert r.repairs["adapter"] == {"link mentions misaligned": 1}


def test_text_templates_carry_the_relations_as_strings():
    t = text_template(read_gold().documents[0], level="tokens")
    assert [(r.label, r.head, r.tail) for r in t.relations] == [
        ("works_for", ("Al", "Roth"), ("IBM",)), ("located_in", ("IBM",), ("Paris",)),
        ("lives_in", ("Ido", "Erev"), ("Haifa",))]


# --- JSONL ----------------------------------------------------------------------------------
DOC = {"id": "d1", "text": TEXT,
       "entities": [{"id": "T1", "label": "PER", "start": 0, "end": 7}, {"id": "T2", "label": "ORG", "start": 18, "end": 21},
                    {"id": "T3", "label": "PER", "start": 33, "end": 41, "kb_id": "Q2"}],
       "relations": [{"label": "works_for", "head": "T1", "tail": "T2", "score": 0.5}],
       "links": [{"entity": "T2", "id": "Q37156"}]}


def _jsonl(tmp_path, *records):
    path = tmp_path / "d.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return str(path)


def test_jsonl_reads_relations_and_links_by_span_id(tmp_path):
    (doc,) = read_jsonl(_jsonl(tmp_path, DOC)).documents
    assert rels_of(doc) == [("works_for", AL, IBM)] and doc.relations[0].score == 0.5
    assert links_of(doc) == [(IDO_EREV, "Q2"), (IBM, "Q37156")]  # the kb_id first, then the links list
    doccano = {"id": 7, "text": TEXT,
               "entities": [{"id": 1, "label": "PER", "start_offset": 0, "end_offset": 7},
                            {"id": 2, "label": "ORG", "start_offset": 18, "end_offset": 21}],
               "relations": [{"id": 0, "from_id": 1, "to_id": 2, "type": "works_for"}]}
    (doc,) = read_jsonl(_jsonl(tmp_path, doccano)).documents
    assert doc.id == "7" and rels_of(doc) == [("works_for", AL, IBM)] and doc.links == ()


def test_label_studio_and_prodigy_relations(tmp_path):
    def res(rid, start, end, label):
        return {"id": rid, "type": "labels", "value": {"start": start, "end": end, "labels": [label]}}

    task = {"id": 3, "data": {"text": TEXT}, "annotations": [{"result": [
        res("a", 0, 7, "PER"), res("b", 18, 21, "ORG"), res("c", 25, 30, "LOC"),
        {"type": "relation", "from_id": "a", "to_id": "b", "direction": "right", "labels": ["works_for"]},
        {"type": "relation", "from_id": "c", "to_id": "b", "direction": "left", "labels": ["located_in"]},
        {"type": "relation", "from_id": "a", "to_id": "c", "direction": "bi", "labels": ["near", "seen_in"]},
        {"type": "relation", "from_id": "b", "to_id": "c", "direction": "right", "labels": []},
    ]}]}
    corpus = read_jsonl(_jsonl(tmp_path, task))
    assert rels_of(corpus.documents[0]) == [("works_for", AL, IBM), ("located_in", IBM, PARIS),
                                            ("near", AL, PARIS), ("seen_in", AL, PARIS)]
    assert dict(corpus.notes) == {"label studio bidirectional relations read from from_id to to_id": 2,
                                  "skipped label studio relations without a label": 1}
    prodigy = {"text": TEXT, "answer": "accept", "spans": [{"start": 0, "end": 7, "label": "PER"}],
               "relations": [{"head": 1, "child": 4, "label": "works_for",  # token indices, not span ids
                              "head_span": {"start": 0, "end": 7, "label": "PER"},
                              "child_span": {"start": 18, "end": 21, "label": "ORG"}}]}
    (doc,) = read_jsonl(_jsonl(tmp_path, prodigy)).documents
    assert rels_of(doc) == [("works_for", AL, IBM)]
    bad = {**task, "annotations": [{"result": [res("a", 0, 7, "PER"),
                                               {"type": "relation", "from_id": "a", "to_id": "z", "labels": ["r"]}]}]}
    with pytest.raises(InputError, match=r"d\.jsonl:1 \(document '3'\): relation #0 'r': the tail 'z' is no span id"):
        read_jsonl(_jsonl(tmp_path, bad))


def test_jsonl_round_trip_with_relations_and_links(tmp_path):
    doc = TextDocument("d1", TEXT, (Span(*AL), Span(*IBM)),
                       relations=(Relation("works_for", Span(*AL), Span(*IBM), 0.25), ("lives_in", IDO_EREV, HAIFA)),
                       links=((1, "Q37156"),))
    path = str(tmp_path / "out.jsonl")
    write_jsonl([doc], path)
    rec = json.loads(Path(path).read_text())
    assert rec["relations"] == [{"label": "works_for", "head": 0, "tail": 1, "score": 0.25},
                                {"label": "lives_in", "head": 2, "tail": 3}]
    assert rec["links"] == [{"entity": 1, "id": "Q37156"}]
    (back,) = read_jsonl(path).documents
    assert back.relations == doc.relations and back.relations[0].score == 0.25 and back.links == doc.links
    assert [(s.label, s.start, s.end) for s in back.spans] == [AL, IBM, IDO_EREV, HAIFA]
    # without relations and links the line is as before: no span ids
    write_jsonl([TextDocument("d2", TEXT, (Span(*AL),))], path)
    assert json.loads(Path(path).read_text()) == {"id": "d2", "text": TEXT, "spans": [{"start": 0, "end": 7, "label": "PER"}]}


@pytest.mark.parametrize("change, message", [
    ({"relations": [{"label": "works_for", "head": "T1", "tail": "T9"}]},
     r"d\.jsonl:2 \(document 'd1'\): relation #0 'works_for': the tail 'T9' is no span id of the document "
     r"\(span ids: 'T1', 'T2', 'T3'\)"),
    ({"links": [{"entity": "T7", "id": "Q1"}]}, r"d\.jsonl:2 \(document 'd1'\): link #0: the entity 'T7' is no span id"),
    ({"links": [{"entity": "T1", "id": ""}]}, r"d\.jsonl:2 \(document 'd1'\): a knowledge-base id is a non-empty string, got ''"),
    ({"relations": [{"label": "works_for", "head": "T1"}]}, r"d\.jsonl:2 \(document 'd1'\): relation #0 must be"),
    ({"entities": [{"id": "T1", "label": "PER", "start": 0, "end": 70}]},
     r"d\.jsonl:2 \(document 'd1'\): span \('PER', 0, 70\) ends outside the text of 58 characters"),
    ({"entities": [{"id": "T1", "label": "PER", "start": 0, "end": 7}, {"id": "T1", "label": "ORG", "start": 18, "end": 21}]},
     r"d\.jsonl:2 \(document 'd1'\): the span id 'T1' is given twice"),
])
def test_jsonl_errors_name_the_file_line_and_value(tmp_path, change, message):
    with pytest.raises(InputError, match=message):
        read_jsonl(_jsonl(tmp_path, {"id": "d0", "text": "x"}, {**DOC, **change}))


# --- spaCy ----------------------------------------------------------------------------------
def test_spacy_kb_ids_become_links_and_are_scored():
    spacy = pytest.importorskip("spacy")
    from iescore.adapters.spacy import doc_to_document, examples_to_links, score_examples
    from spacy.tokens import Span as SpacySpan
    from spacy.training import Example

    nlp = spacy.blank("en")
    gold = nlp(TEXT)
    # tokens: Al Roth works for IBM in Paris . Ido Erev lives in Haifa .
    gold.ents = [SpacySpan(gold, 0, 2, "PER", kb_id="Q1"), SpacySpan(gold, 4, 5, "ORG", kb_id="Q37156"),
                 SpacySpan(gold, 6, 7, "LOC"), SpacySpan(gold, 8, 10, "PER", kb_id="Q2")]
    d = doc_to_document(gold, doc_id="g")
    assert [((x.span.label, x.span.start, x.span.end), x.id) for x in d.links] == [
        (("PER", 0, 2), "Q1"), (("ORG", 4, 5), "Q37156"), (("PER", 8, 10), "Q2")]  # Paris has no kb_id
    pred = nlp(TEXT)
    pred.ents = [SpacySpan(pred, 0, 2, "PER", kb_id="Q1"), SpacySpan(pred, 4, 5, "ORG", kb_id="Q95"),
                 SpacySpan(pred, 8, 9, "PER", kb_id="Q2")]
    eg = Example(pred, gold)
    _, docs, _ = examples_to_links([eg])
    assert [x.id for x in docs[0].links] == ["Q1", "Q95", "Q2"]
    # strong: Q1 right; Q95 wrong id (FP, and Q37156 FN); Q2 on "Ido" against "Ido Erev" (FP and FN)
    r = score_examples([eg], task="links")
    assert (r.overall.tp, r.overall.fp, r.overall.fn) == (1, 2, 2)
    # weak: the Q2 mentions overlap
    r = score_examples([eg], task="links", rule="O(inf,inf)")
    assert (r.overall.tp, r.overall.fp, r.overall.fn) == (2, 1, 1)
    assert (r.per_label["PER"].tp, r.per_label["ORG"].fp, r.per_label["ORG"].fn) == (2, 1, 1)
    with pytest.raises(ConfigError, match="spaCy has no standard place for relations"):
        score_examples([eg], task="relations")


# --- LLM relation strings (OBD) --------------------------------------------------------------------
def test_llm_relations_are_read_and_scored_as_obd_records():
    # llm.jsonl: works_for(Al Roth, IBM) twice (once with two spaces), located_in(Paris, IBM), lives_in(Ido, Haifa)
    path = FIX / "llm.jsonl"
    (ex,) = read_llm(str(path))
    assert ex.relations[0] == ("works_for", "Al Roth", "IBM") and len(ex.relations) == 4
    (t,) = llm_templates([ex], level="tokens")
    assert [(r.label, r.head, r.tail) for r in t.relations] == [
        ("works_for", ("Al", "Roth"), ("IBM",)), ("located_in", ("Paris",), ("IBM",)), ("lives_in", ("Ido",), ("Haifa",))]
    ref = read_gold().documents
    # gold records: works_for(Al Roth, IBM), located_in(IBM, Paris), lives_in(Ido Erev, Haifa)
    # E: works_for right; located_in swapped and lives_in's head short: 1 TP, 2 FP, 2 FN
    r = score_llm(ref, [ex], level="tokens", setting="OBD", task="relations")
    assert (r.overall.tp, r.overall.fp, r.overall.fn) == (1, 2, 2)
    assert r.precision == pytest.approx(1 / 3) and r.recall == pytest.approx(1 / 3) and r.f1 == pytest.approx(1 / 3)
    # O(0,1): "Ido" misses one token of "Ido Erev" -> lives_in right: P = R = F1 = 2/3
    r = score_llm(ref, [ex], level="tokens", setting="OBD", task="relations", rule="O(0,1)")
    assert (r.overall.tp, r.overall.fp, r.overall.fn) == (2, 1, 1) and r.f1 == pytest.approx(2 / 3)
    # located_in declared symmetric: the swapped record matches too
    r = score_llm(ref, [ex], level="tokens", setting="OBD", task="relations", symmetric="located_in")
    assert (r.overall.tp, r.overall.fp, r.overall.fn) == (2, 1, 1)
    with pytest.raises(ConfigError, match=r"task='relations': LLM extractions are strings without offsets"):
        score_llm(ref, [ex], level="tokens", task="relations")
    # the files' path (iescore score GOLD PRED --input-format brat --pred-format llm --setting OBD --task relations)
    with pytest.warns(IEScoreWarning, match=MISSING_WARNING):
        r = iescore.score_files(GOLD, path, input_format="brat", pred_format="llm", level="tokens",
                                setting="OBD", task="relations")
    assert (r.overall.tp, r.overall.fp, r.overall.fn) == (1, 2, 2)


def test_llm_relation_errors_name_the_file_and_line(tmp_path):
    path = tmp_path / "llm.jsonl"
    path.write_text('{"id": "a"}\n{"id": "b", "relations": [{"label": "r", "head": "x"}]}\n')
    with pytest.raises(InputError, match=r"llm\.jsonl:2: 'relations' is a list of \{'label', 'head', 'tail'\} objects"):
        read_llm(str(path))
    with pytest.raises(InputError, match=r"document 'c': relation #0 must be a \(label, head, tail\) triple"):
        Extraction("c", (), relations=(("r", "x", " "),))


# --- brat end to end --------------------------------------------------------------------------
@pytest.mark.parametrize("options, counts, per_label", [
    # strict: works_for right; located_in swapped (FP + FN); lives_in's head "Ido" not "Ido Erev" (FP + FN)
    ({"task": "relations"}, (1, 2, 2), {"works_for": (1, 0, 0), "located_in": (0, 1, 1), "lives_in": (0, 1, 1)}),
    ({"task": "relations", "symmetric": "located_in"}, (2, 1, 1), {"located_in": (1, 0, 0), "lives_in": (0, 1, 1)}),
    ({"task": "relations", **iescore.RELATION_SETTINGS["relaxed"]}, (2, 1, 1), {"lives_in": (1, 0, 0)}),
    ({"task": "relations", **iescore.RELATION_SETTINGS["boundaries"]}, (1, 2, 2), {"works_for": (1, 0, 0)}),
    # strong: Q1, Q41621 right; Q95 vs Q37156 (FP + FN); "Ido" vs "Ido Erev" for Q2 (FP + FN); rows by entity type
    ({"task": "links"}, (2, 2, 2), {"PER": (1, 1, 1), "ORG": (0, 1, 1), "LOC": (1, 0, 0)}),
    ({"task": "links", **iescore.LINK_SETTINGS["weak"]}, (3, 1, 1), {"PER": (2, 0, 0), "ORG": (0, 1, 1)}),
])
def test_brat_relations_and_links_scored_end_to_end(options, counts, per_label):
    for level in ("tokens", "characters"):
        with pytest.warns(IEScoreWarning, match=MISSING_WARNING):
            r = iescore.score_files(GOLD, PRED, input_format="brat", level=level, **options)
        assert (r.overall.tp, r.overall.fp, r.overall.fn) == counts
        assert {k: (r.per_label[k].tp, r.per_label[k].fp, r.per_label[k].fn) for k in per_label} == per_label
        assert r.repairs["adapter"]["reference skipped brat relations to missing entities"] == 1


def test_the_command_line_path_scores_brat_relations():
    from argparse import Namespace

    from iescore.config import Config
    from iescore.files import score_args

    args = Namespace(file=str(GOLD), pred_file=str(PRED), input_format="brat", pred_format=None, level="tokens",
                     tokenizer="regex", misaligned="expand", discontinuous="error", align="first", encoding="utf-8",
                     documents="auto", scheme="auto")
    with pytest.warns(IEScoreWarning, match=MISSING_WARNING):
        r = score_args(Config(task="relations", counting="one-to-one"), args)
    assert (r.overall.tp, r.overall.fp, r.overall.fn) == (1, 2, 2) and "task:relations" in r.signature


def test_cli_scores_brat_relations(capsys):
    status = main(["score", str(GOLD), str(PRED), "--input-format", "brat", "--level", "tokens",
                   "--task", "relations", "--json"])
    out = capsys.readouterr()
    d = json.loads(out.out)
    assert "iescore: warning: 2 brat relations or normalizations name an id that is no entity" in out.err
    assert status == 0 and (d["overall"]["tp"], d["overall"]["fp"], d["overall"]["fn"]) == (1, 2, 2)
    assert "task:relations" in d["signature"]


def test_links_of_documents_built_by_hand_match_the_reader():
    (g,) = read_gold().documents
    d, _ = to_document(g, level="tokens")
    assert d.links[0] == Link(Span("PER", 0, 2), "Wikidata:Q1")
