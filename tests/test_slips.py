"""Common slips in the Python API and its integrations get an error or a warning, never a
silent score: label spellings that differ only by case, whitespace or Unicode
normalisation; tag schemes that differ between the two sides; float or NaN label ids from
the Trainer; out-of-range ids in the evaluate metric; fillers that are not strings; an
infinite JSONL confidence; ``pipeline(texts)`` output; a bad spaCy scorer config.

Every expected number is counted by hand in the comments; every message is asserted whole;
every warning test also scores a correct input and asserts that it gives no warning.
"""

from __future__ import annotations

import unicodedata
import warnings

import numpy as np
import pytest
from conftest import require

from iescore import Document, InputError, Scorer, Span, Template, score, score_tags, score_templates
from iescore.cli import main
from iescore.errors import ConfigError, IEScoreWarning


def no_warning(fn):
    """Run ``fn`` with every warning an error: a correct input warns of nothing."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return fn()


def warned(fn):
    """Run ``fn``; return its result and the texts of the IEScoreWarnings it gave."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fn()
    return out, [str(w.message) for w in caught if issubclass(w.category, IEScoreWarning)]


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return str(p)


# --- 1. labels spelt alike but for case, whitespace or Unicode normalisation -------------------

def spelling(p, r, kinds, show=repr):
    return (f"labels {show(p)} (prediction) and {show(r)} (reference) differ only by {kinds}; they are scored "
            f"as two different labels: correct one of them, or merge them with supertags={{{show(p)}: {show(r)}}}")


def test_labels_differing_only_by_case_warn_naming_both():
    ref = [["B-PER", "I-PER", "O"]]
    # one chunk each side, PER against per: no match, F1 0
    r, got = warned(lambda: score_tags(reference=ref, prediction=[["B-per", "I-per", "O"]]))
    assert r.overall.tp == 0 and r.overall.fp == 1 and r.overall.fn == 1
    assert got == [spelling("per", "PER", "case")]
    # the merge the warning suggests scores the one chunk as correct
    assert no_warning(lambda: score_tags(reference=ref, prediction=[["B-per", "I-per", "O"]],
                                         supertags={"per": "PER"})).f == 1.0
    assert no_warning(lambda: score_tags(reference=ref, prediction=ref)).f == 1.0
    # a label on both sides and another spelling of it on one side only: the spelling is still named
    _, got = warned(lambda: score_tags(reference=[["B-PER", "O", "B-PER"]], prediction=[["B-PER", "O", "B-Per"]]))
    assert got == [spelling("Per", "PER", "case")]
    # two wrong labels that are not spellings of each other: ordinary errors, no warning
    no_warning(lambda: score_tags(reference=ref, prediction=[["B-LOC", "I-LOC", "O"]]))


def test_labels_differing_only_by_unicode_normalisation_warn_escaped():
    nfc, nfd = unicodedata.normalize("NFC", "PÉR"), unicodedata.normalize("NFD", "PÉR")
    assert nfc != nfd
    r, got = warned(lambda: score_tags(reference=[[f"B-{nfc}", "O"]], prediction=[[f"B-{nfd}", "O"]]))
    assert r.f == 0.0
    # printed alike, so shown escaped: E followed by the combining acute accent U+0301
    assert got == [spelling(nfd, nfc, "Unicode normalisation (composed or decomposed characters)", ascii)]
    assert got[0].startswith("labels 'PE\\u0301R' (prediction) and 'P\\xc9R' (reference)")
    assert no_warning(lambda: score_tags(reference=[[f"B-{nfc}", "O"]], prediction=[[f"B-{nfc}", "O"]])).f == 1.0
    # case and normalisation together
    _, got = warned(lambda: score_tags(reference=[[f"B-{nfc}", "O"]], prediction=[[f"B-{nfd.lower()}", "O"]]))
    assert got == [spelling(nfd.lower(), nfc, "case and Unicode normalisation (composed or decomposed characters)",
                            ascii)]


def test_span_labels_with_surrounding_whitespace_warn():
    doc = Document("d", ("Ada", "wrote"), (Span("PER", 0, 1),))
    r, got = warned(lambda: score(reference=[doc], prediction=[[Span("PER ", 0, 1)]]))
    assert (r.overall.tp, r.overall.fp, r.overall.fn) == (0, 1, 1)
    assert got == [spelling("PER ", "PER", "surrounding whitespace")]
    _, got = warned(lambda: score(reference=[doc], prediction=[[Span(" per", 0, 1)]]))
    assert got == [spelling(" per", "PER", "case and surrounding whitespace")]
    assert no_warning(lambda: score(reference=[doc], prediction=[[Span("PER", 0, 1)]])).f == 1.0
    # templates: a slot name spelt otherwise
    ref = [Template("t", {"speaker": ["Ada"]})]
    _, got = warned(lambda: score_templates(reference=ref, prediction=[Template("t", {"Speaker": ["Ada"]})]))
    assert got == [spelling("Speaker", "speaker", "case")]
    assert no_warning(lambda: score_templates(reference=ref, prediction=ref)).f == 1.0


def ws_error(side, tag, problem):
    return (f"document '0' ({side}), token 1: invalid tag {tag!r}: {problem}; "
            "valid forms: 'B-<label>', 'I-<label>' or 'O'")


@pytest.mark.parametrize("tag, problem", [
    ("B-PER ", "it ends with a space"),
    (" B-PER", "it starts with a space"),
    ("B- PER", "a space after the delimiter '-'"),
])
def test_a_tag_with_surrounding_whitespace_from_python_is_an_error(tag, problem):
    ref, pred = [["O", "B-PER"]], [["O", tag]]
    for call in (lambda: score_tags(reference=ref, prediction=pred),
                 lambda: Scorer().add_tags(reference=ref, prediction=pred),  # held, checked per distinct tag
                 lambda: Scorer(scheme="IOB2").add_tags(reference=ref * 40_000, prediction=pred * 40_000)):
        with pytest.raises(InputError) as e:
            call()
        assert str(e.value) == ws_error("prediction", tag, problem)
    with pytest.raises(InputError) as e:
        score_tags(reference=pred, prediction=ref)
    assert str(e.value) == ws_error("reference", tag, problem)


def test_a_tag_with_whitespace_from_the_trainer_and_the_metric_is_an_error():
    from iescore.adapters.hf import trainer_batch

    batch = trainer_batch(np.array([[0, 1]]), np.array([[0, 1]]), id2label=["O", "B-PER "])
    with pytest.raises(InputError) as e:
        Scorer().add_batch(batch)
    assert str(e.value) == ("sequence '0' (reference), word 1: invalid tag 'B-PER ': it ends with a space; "
                            "valid forms: 'B-<label>', 'I-<label>' or 'O'")


# --- 2. the scheme is detected from the reference; the prediction's is compared ----------------

IOB2 = [["B-PER", "I-PER", "O", "B-LOC"]]
IOBES = [["B-PER", "E-PER", "O", "S-LOC"]]
BOTH = ("scheme='auto': the reference's tags are of scheme IOB2 and the prediction's of scheme IOBES, "
        "whose E- and S- tags IOB2 does not have; both sides are decoded as IOBES, where the reference's "
        "chunks that IOBES spells otherwise count as repaired: convert one side, or pass scheme= to choose")
OTHER = ("scheme='auto' detected IOBES from the reference tags, but the prediction's tags are of scheme IOB2 "
         "(no E- or S- tag); the prediction is decoded as IOBES, its ill-formed chunks counted as repaired: "
         "convert it, or pass scheme= to choose")


def test_gold_iob2_against_predicted_iobes_warns_naming_both_schemes():
    # PER[0,2) and LOC[3,4) on both sides: F1 1; under IOBES the gold's B-PER I-PER (no E) and
    # lone B-LOC (no S) are the two ill-formed chunks, repaired
    r, got = warned(lambda: score_tags(reference=IOB2, prediction=IOBES))
    assert r.f == 1.0 and r.repairs["reference"] == {"repaired": 2}
    assert r.signature.split("|")[5] == "scheme:IOBES"
    assert got == [BOTH]
    s = Scorer()  # held input: its tags are read per distinct tag
    _, got = warned(lambda: s.add_tags(reference=IOB2, prediction=IOBES))
    assert got == [BOTH] and s.report().f == 1.0


def test_gold_iobes_against_predicted_iob2_warns():
    r, got = warned(lambda: score_tags(reference=IOBES, prediction=IOB2))
    assert r.f == 1.0 and r.repairs["prediction"] == {"repaired": 2}
    assert r.signature.split("|")[5] == "scheme:IOBES"  # from the reference
    assert got == [OTHER]
    s = Scorer()
    _, got = warned(lambda: [s.add_tags(reference=IOBES, prediction=IOB2) for _ in range(3)])
    assert got == [OTHER]  # once per scorer


def test_schemes_that_agree_give_no_warning():
    for ref, pred in ((IOB2, IOB2), (IOBES, IOBES), (IOBES, [["O", "O", "O", "S-LOC"]]),
                      (IOB2, [["I-PER", "I-PER", "O", "B-LOC"]]),  # an IOB1-like prediction: read alike
                      ([["O", "O", "O", "O"]], IOBES)):  # no chunk in the reference: every tag decides
        no_warning(lambda: score_tags(reference=ref, prediction=pred))
        no_warning(lambda: Scorer().add_tags(reference=ref, prediction=pred))
    assert score_tags(reference=[["O", "O", "O", "O"]], prediction=IOBES).signature.split("|")[5] == "scheme:IOBES"


def test_the_streamed_command_line_warns_as_well(tmp_path, capsys):
    f = write(tmp_path, "m.conll", "Ada B-PER B-PER\nLovelace I-PER E-PER\nin O O\nParis B-LOC S-LOC\n")
    code = main(["score", f])
    out, err = capsys.readouterr()
    assert code == 0 and "FB1: 100.00" in out
    assert err == f"iescore: warning: {BOTH}\n"
    f = write(tmp_path, "ok.conll", "Ada B-PER B-PER\nLovelace I-PER I-PER\nin O O\nParis B-LOC O\n")
    assert main(["score", f]) == 0
    assert capsys.readouterr().err == ""


# --- 3. Trainer ids and logits; the evaluate metric's ids ---------------------------------------

NAMES = ["O", "B-PER", "I-PER"]


def hook_call(preds, labels):
    from iescore.adapters.trainer import compute_metrics

    class EvalPrediction:
        predictions = preds
        label_ids = labels

    return compute_metrics(NAMES)(EvalPrediction())


def test_trainer_refuses_float_label_ids_and_nan_logits():
    with pytest.raises(InputError) as e:
        hook_call(np.array([[0, 1, 2, 0]]), np.array([[-100, 1.5, 2, -100]]))
    assert str(e.value) == "label_ids: sequence '0', position 1 holds label id 1.5, not an integer"
    with pytest.raises(InputError) as e:
        hook_call(np.array([[0, 1, 2.5, 0]]), np.array([[-100, 1, 2, -100]]))
    assert str(e.value) == "predictions: sequence '0', position 2 holds label id 2.5, not an integer"
    with pytest.raises(InputError) as e:
        hook_call(np.array([[0, 1, np.nan, 0]]), np.array([[-100, 1, 2, -100]]))
    assert str(e.value) == "predictions: sequence '0', position 2 holds label id nan, not an integer"
    logits = np.zeros((2, 4, 3))
    logits[1, 2] = np.nan  # all-NaN logits: their arg-max is 0, 'O'
    with pytest.raises(InputError) as e:
        hook_call(logits, np.array([[-100, 1, 2, -100], [0, 1, 2, 0]]))
    assert str(e.value) == ("predictions: sequence '1', position 2 has NaN logits (a model that diverged?); "
                            "their arg-max would read as label id 0 ('O')")
    logits[1, 2] = [0.0, np.nan, 1.0]  # one NaN among them
    with pytest.raises(InputError):
        hook_call(logits, np.array([[-100, 1, 2, -100], [0, 1, 2, 0]]))
    # NaN logits at a position labelled -100 (padding) are not read: no error
    logits[1, 2] = np.nan
    hook_call(logits, np.array([[-100, 1, 2, -100], [0, 1, -100, 0]]))
    # float arrays of whole ids are ids: B-PER I-PER against B-PER I-PER, F1 1
    assert hook_call(np.array([[0.0, 1.0, 2.0, 0.0]]), np.array([[-100.0, 1.0, 2.0, -100.0]]))["f1"] == 1.0


def test_trainer_word_ids_path_refuses_nan_logits_and_float_ids():
    from iescore.adapters.hf import trainer_batch

    logits = np.zeros((1, 3, 3))
    logits[0, 1] = np.nan
    with pytest.raises(InputError) as e:
        trainer_batch(logits, np.array([[1, 2, -100]]), id2label=NAMES, word_ids=[[0, 1, 1]], strategy="max")
    assert str(e.value) == ("predictions: sequence '0', position 1 has NaN logits (a model that diverged?); "
                            "their arg-max would read as label id 0 ('O')")
    with pytest.raises(InputError) as e:
        trainer_batch(np.zeros((1, 3)), np.array([[1.5, 2, -100]]), id2label=NAMES, word_ids=[[0, 1, 1]])
    assert str(e.value) == "label_ids: sequence '0', position 0 holds label id 1.5, not an integer"


@pytest.fixture(scope="module")
def metric():
    evaluate = require("evaluate")
    import iescore.metric_card as card

    return evaluate.load(card.PATH)


def test_metric_refuses_negative_ids_and_a_predicted_minus_100(metric):
    names = ["O", "B-PER", "I-PER"]
    with pytest.raises(InputError) as e:  # label_names[-2] would read 'B-PER'
        metric.compute(predictions=[[0, -2]], references=[[0, 1]], label_names=names)
    assert str(e.value) == "document 0, position 1: predictions hold label id -2, outside 0..2 (label_names)"
    with pytest.raises(InputError) as e:
        metric.compute(predictions=[[0, 1]], references=[[0, -3]], label_names=names)
    assert str(e.value) == "document 0, position 1: references hold label id -3, outside 0..2 (label_names)"
    with pytest.raises(InputError) as e:
        metric.compute(predictions=[[0, -100, 2]], references=[[0, 1, 2]], label_names=names)
    assert str(e.value) == (
        "document 0, position 1: the prediction holds -100 where the reference holds 1; integer ids -100 are "
        "not tokens and are removed from both sides where the references hold them: a prediction needs a "
        "label id wherever its reference has one")
    # -100 on both sides, or in the references alone: removed; B-PER I-PER found, F1 1
    out = metric.compute(predictions=[[-100, 1, 2, 0]], references=[[-100, 1, 2, -100]], label_names=names)
    assert out["overall_f1"] == 1.0


# --- 4. template fillers ---------------------------------------------------------------------

@pytest.mark.parametrize("slots, message", [
    ({"speaker": [42]}, "template 'd': slot 'speaker' has the filler 42, not a string (int); "
                        "a filler is a string or a sequence of token strings"),
    ({"speaker": 42}, "template 'd': slot 'speaker' holds 42 (int); "
                      "a slot holds a list of fillers, each a string or a sequence of token strings"),
    ({"speaker": [["Ada", 3]]}, "template 'd': slot 'speaker' has the filler ['Ada', 3], whose token 3 is not "
                                "a string (int); a filler is a string or a sequence of token strings"),
])
def test_a_filler_that_is_not_a_string_names_document_and_slot(slots, message):
    with pytest.raises(InputError) as e:
        score_templates(reference=[Template("d", {"speaker": ["Ada"]})], prediction=[Template("d", slots)])
    assert str(e.value) == message


# --- 5. a JSONL confidence that is not finite ------------------------------------------------

@pytest.mark.parametrize("written", ["Infinity", "-Infinity", "NaN"])
def test_jsonl_infinite_confidence_names_file_line_document_and_span(tmp_path, written):
    from iescore.io.jsonl import read_jsonl

    path = write(tmp_path, "p.jsonl",
                 '{"id": "a", "text": "Al Roth", "spans": [{"start": 0, "end": 2, "label": "PER"}]}\n'
                 '{"id": "b", "text": "Al Roth", "spans": [{"start": 0, "end": 2, "label": "PER", '
                 f'"score": {written}}}]}}\n')
    with pytest.raises(InputError) as e:
        read_jsonl(path)
    assert str(e.value) == (f"{path}:2 (document 'b'): span ('PER', 0, 2) has the confidence {written}, not a "
                            "finite number; leave 'score' out (or null) for a span without one")
    ok = write(tmp_path, "ok.jsonl", '{"id": "b", "text": "Al Roth", "spans": [{"start": 0, "end": 2, '
                                     '"label": "PER", "score": 0.5}]}\n')
    assert read_jsonl(ok).documents[0].spans == (Span("PER", 0, 2, 0.5),)


# --- 6. pipeline(texts) output ---------------------------------------------------------------

def test_pipeline_output_of_several_texts_is_refused_one_text_read():
    from iescore.adapters.hf import pipeline_to_spans

    from iescore.text import document_from_text

    ref = document_from_text("p", "Ada met Babbage", tokenizer="whitespace")
    one = [{"entity_group": "PER", "score": 0.9, "start": 0, "end": 3},
           {"entity_group": "PER", "score": 0.8, "start": 8, "end": 15}]
    spans, _ = pipeline_to_spans(one, ref)
    assert spans == [Span("PER", 0, 1, 0.9), Span("PER", 2, 3, 0.8)]
    assert pipeline_to_spans([one], ref)[0] == spans  # pipeline([text]): that text's list
    with pytest.raises(InputError) as e:
        pipeline_to_spans([one, []], ref)
    assert str(e.value) == (
        "document 'p': the pipeline output is a list of 2 lists, one per text (what pipeline(texts) returns); "
        "pipeline_to_spans maps one text's list onto its document: call it once per document, e.g. "
        "[pipeline_to_spans(out, doc) for out, doc in zip(outputs, documents)]")
    with pytest.raises(InputError) as e:
        pipeline_to_spans(["PER"], ref)
    assert str(e.value) == "document 'p': pipeline entity #0 is a str, not an entity dict: 'PER'"


# --- 7. a spaCy scorer config is checked when the pipeline is built ---------------------------

def test_spacy_scorer_config_fails_when_the_pipeline_is_built():
    spacy = require("spacy")
    from spacy.util import registry

    message = ("cannot parse matching rule 'X'; valid forms: 'exact', 'E', 'contain(e)', 'C(e)', "
               "'overlap(e,m)', 'O(e,m)', 'O(inf,inf)', 'IoU(t)', 'cover(t)' or 'sim(t)' "
               "(e, m: integers or inf; t: a decimal number, 0 < t <= 1)")
    with pytest.raises(ConfigError) as e:
        registry.scorers.get("iescore.spans.v1")(rule="X")
    assert str(e.value) == message
    with pytest.raises(ConfigError) as e:
        registry.scorers.get("iescore.templates.v1")(misaligned="grow")
    assert str(e.value) == "unknown misaligned 'grow'; valid: 'expand', 'contract' or 'error' (or None: not used)"
    nlp = spacy.blank("en")
    with pytest.raises(ConfigError) as e:
        nlp.add_pipe("ner", config={"scorer": {"@scorers": "iescore.spans.v1", "rule": "X"}})
    assert str(e.value) == message
    nlp.add_pipe("ner", config={"scorer": {"@scorers": "iescore.spans.v1", "rule": "O(1,1)"}})
    assert "ner" in nlp.pipe_names
