"""spaCy registered scorers: entry points, typed config, `spacy train` and `spacy evaluate`."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import require

spacy = require("spacy")
from spacy.tokens import Doc, DocBin
from spacy.tokens import Span as SpacySpan
from spacy.training import Example

TRAIN = [
    ("Ada Lovelace met Charles Babbage in London .", [(0, 2, "PER"), (3, 5, "PER"), (6, 7, "LOC")]),
    ("Grace Hopper joined the navy in New York .", [(0, 2, "PER"), (6, 8, "LOC")]),
    ("Alan Turing worked in Manchester .", [(0, 2, "PER"), (4, 5, "LOC")]),
    ("Emmy Noether taught in Göttingen .", [(0, 2, "PER"), (4, 5, "LOC")]),
    ("Marie Curie lived in Paris .", [(0, 2, "PER"), (4, 5, "LOC")]),
    ("Kurt Gödel moved to Princeton .", [(0, 2, "PER"), (4, 5, "LOC")]),
]


def make_doc(vocab, text, ents):
    doc = Doc(vocab, words=text.split())
    doc.ents = [SpacySpan(doc, s, e, lab) for s, e, lab in ents]
    return doc


def test_scorers_resolve_through_the_entry_point():
    from spacy.util import registry

    make = registry.scorers.get("iescore.spans.v1")
    score = make(rule="O(0,1)")
    nlp = spacy.blank("en")
    ref = make_doc(nlp.vocab, "Ada Lovelace met Babbage", [(0, 2, "PER"), (3, 4, "PER")])
    pred = make_doc(nlp.vocab, "Ada Lovelace met Babbage", [(0, 1, "PER"), (3, 4, "LOC")])
    out = score([Example(pred, ref)])
    assert (out["ents_p"], out["ents_r"], out["ents_f"]) == (0.5, 0.5, 0.5)
    assert out["ents_per_type"]["LOC"] == {"p": 0.0, "r": 0.0, "f": 0.0}
    assert out["ents_ser"] == 0.5  # C=1, S=1 (PER->LOC), N=2
    assert set(out) >= {"ents_err", "ents_e", "ents_ts_f", "ents_macro_f", "ents_weighted_f"}
    # fillers: reference PER {Ada Lovelace, Babbage}; prediction PER {Ada}, LOC {Babbage}
    obd = registry.scorers.get("iescore.templates.v1")(rule="O(0,1)")([Example(pred, ref)])
    assert (obd["ents_obd_p"], obd["ents_obd_r"]) == (0.5, 0.5)


def test_scorers_keep_or_remove_types():
    """The same example as above with LOC removed: the Babbage answer (PER) stays, the
    LOC prediction is gone, so under O(0,1) P = 1/1 (Ada matches Ada Lovelace), R = 1/2."""
    from spacy.util import registry

    nlp = spacy.blank("en")
    ref = make_doc(nlp.vocab, "Ada Lovelace met Babbage", [(0, 2, "PER"), (3, 4, "PER")])
    pred = make_doc(nlp.vocab, "Ada Lovelace met Babbage", [(0, 1, "PER"), (3, 4, "LOC")])
    out = registry.scorers.get("iescore.spans.v1")(rule="O(0,1)", remove_types=["LOC"])([Example(pred, ref)])
    assert (out["ents_p"], out["ents_r"]) == (1.0, 0.5)
    assert set(out["ents_per_type"]) == {"PER"}
    kept = registry.scorers.get("iescore.spans.v1")(rule="O(0,1)", keep_types=["LOC"])([Example(pred, ref)])
    # LOC kept: no answer, one prediction: P = 0/1; R = 0/0, undefined, given as zero_division (0.0)
    assert (kept["ents_p"], kept["ents_r"]) == (0.0, 0.0)


def test_error_rates_and_their_higher_is_better_keys():
    from spacy.util import registry

    score = registry.scorers.get("iescore.spans.v1")(rule="O(0,1)")
    nlp = spacy.blank("en")
    words = "Ada Lovelace met Babbage in Paris and Rome"
    ref = make_doc(nlp.vocab, words, [(0, 2, "PER"), (3, 4, "PER")])
    pred = make_doc(nlp.vocab, words, [(0, 1, "PER"), (3, 4, "LOC"), (5, 6, "LOC"), (7, 8, "LOC")])
    out = score([Example(pred, ref)])
    # O(0,1): PER[0,1) is correct for PER[0,2); LOC[3,4) substitutes PER[3,4); LOC[5,6) and LOC[7,8)
    # are insertions. C=1, S=1, D=0, I=2, N=2 (reference), M=4 (prediction), alpha=1/(1+beta^2)=1/2.
    # SER = (S+D+I)/N = 3/2; ERR = (S+D+I)/(N+I) = 3/4; E = (S+(1-a)D+aI)/((1-a)N+aM) = 2/3
    assert (out["ents_ser"], out["ents_err"]) == (1.5, 0.75)
    assert out["ents_e"] == pytest.approx(2 / 3, abs=1e-15)
    assert (out["ents_1-ser"], out["ents_1-err"]) == (-0.5, 0.25)
    assert out["ents_1-e"] == pytest.approx(1 / 3, abs=1e-15)
    # no entity on either side: every rate is undefined (N = 0), so every key is zero_division
    empty = make_doc(nlp.vocab, words, [])
    out = registry.scorers.get("iescore.spans.v1")(zero_division=0.0)([Example(empty, empty)])
    assert (out["ents_ser"], out["ents_1-ser"], out["ents_1-e"]) == (0.0, 0.0, 0.0)


def test_config_validates_typed_arguments():
    from spacy.util import registry

    cfg = {"scorer": {"@scorers": "iescore.spans.v1", "rule": "C(1)", "counting": "one-to-one"}}
    resolved = registry.resolve(cfg)["scorer"]
    assert resolved.iescore_options["rule"] == "C(1)"
    with pytest.raises(Exception, match="beta"):
        registry.resolve({"scorer": {"@scorers": "iescore.spans.v1", "beta": "high"}})


def test_spacy_train_and_evaluate(tmp_path):
    nlp = spacy.blank("en")
    train, dev = DocBin(), DocBin()
    for text, ents in TRAIN:
        train.add(make_doc(nlp.vocab, text, ents))
    for text, ents in TRAIN[:3]:
        dev.add(make_doc(nlp.vocab, text, ents))
    train.to_disk(tmp_path / "train.spacy")
    dev.to_disk(tmp_path / "dev.spacy")
    subprocess.run(
        [sys.executable, "-m", "spacy", "init", "config", str(tmp_path / "base.cfg"), "--lang", "en",
         "--pipeline", "ner", "--optimize", "efficiency", "--force"],
        check=True, capture_output=True,
    )
    cfg = spacy.util.load_config(tmp_path / "base.cfg")
    cfg["components"]["ner"]["scorer"] = {"@scorers": "iescore.spans.v1", "rule": "O(1,1)", "counting": "one-to-one"}
    cfg["training"]["score_weights"] = {"ents_f": 0.4, "ents_ts_f": 0.3, "ents_1-ser": 0.3,
                                        "ents_p": 0.0, "ents_r": 0.0, "ents_ser": 0.0}
    cfg["training"]["max_epochs"] = 2
    cfg["training"]["eval_frequency"] = 5
    cfg["nlp"]["batch_size"] = 4
    cfg.to_disk(tmp_path / "config.cfg")
    run = subprocess.run(
        [sys.executable, "-m", "spacy", "train", str(tmp_path / "config.cfg"), "--output", str(tmp_path / "out"),
         "--paths.train", str(tmp_path / "train.spacy"), "--paths.dev", str(tmp_path / "dev.spacy")],
        capture_output=True, text=True,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert "ENTS_TS_F" in run.stdout  # the iescore key is a training score column
    meta = json.loads((tmp_path / "out" / "model-last" / "meta.json").read_text())
    assert "ents_ts_f" in meta["performance"]  # spaCy keeps the score_weights keys
    # spaCy's table prints each score x100: the last row shows model-last's SER in percent
    perf = meta["performance"]
    assert perf["ents_1-ser"] == pytest.approx(1 - perf["ents_ser"], abs=1e-12)
    rows = [line.split() for line in run.stdout.splitlines() if line.strip()[:1].isdigit()]
    assert f"{100 * perf['ents_ser']:.2f}" in rows[-1]
    assert "ENTS_1-SER" in run.stdout
    ev = subprocess.run(
        [sys.executable, "-m", "spacy", "evaluate", str(tmp_path / "out" / "model-last"), str(tmp_path / "dev.spacy"),
         "--output", str(tmp_path / "scores.json"), "--per-component"],
        capture_output=True, text=True,
    )
    assert ev.returncode == 0, ev.stderr[-2000:]
    scores = json.loads((tmp_path / "scores.json").read_text())["ner"]
    assert {"ents_ser", "ents_err", "ents_ts_f", "ents_macro_f"} <= set(scores)
    # the printed NER scores are iescore's, recomputed here from the saved model
    model = spacy.load(tmp_path / "out" / "model-last")
    examples = [Example(model(ref.text), ref) for ref in DocBin().from_disk(tmp_path / "dev.spacy").get_docs(model.vocab)]
    from iescore.adapters.spacy import score_examples

    r = score_examples(examples, rule="O(1,1)", counting="one-to-one")
    assert scores["ents_f"] == pytest.approx(r.f or 0.0)
