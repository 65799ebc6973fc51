"""The Hugging Face adapters, with a fast tokenizer built locally from a word list."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import require

require("transformers")

from hf_helpers import LABELS, encode, fast_tokenizer
from iescore.adapters.hf import dataset_tags, load_conll_dataset, pipeline_to_spans, trainer_batch

from iescore import InputError, Scorer, score, score_tags
from iescore.text import document_from_text

SENTS = [
    ["Ada", "Lovelace", "met", "Charles", "Babbage", "in", "London", "."],
    ["Grace", "Hopper", "joined", "the", "navy", "in", "New", "York", "."],
]
TAGS = [
    ["B-PER", "I-PER", "O", "B-PER", "I-PER", "O", "B-LOC", "O"],
    ["B-PER", "I-PER", "O", "O", "B-ORG", "O", "B-LOC", "I-LOC", "O"],
]


def logits_for(word_ids, tags, noise_words=()):
    """Logits that put the gold label on every sub-word of every word (and a wrong one on noise words)."""
    ids = {n: i for i, n in enumerate(LABELS)}
    out = np.zeros((len(word_ids), max(map(len, word_ids)), len(LABELS)), dtype=np.float32)
    for b, wids in enumerate(word_ids):
        for pos, w in enumerate(wids):
            lab = "O" if w is None else tags[b][w]
            if (b, w) in noise_words:
                lab = "B-ORG"
            out[b, pos, ids[lab]] = 5.0
    return out


def test_subwords_really_split():
    tok = fast_tokenizer()
    assert tok.tokenize("Lovelace Babbage Hopper") == ["love", "##lace", "bab", "##bage", "hop", "##per"]


def test_trainer_arrays_give_exactly_the_gold_word_spans():
    tok = fast_tokenizer()
    _, labels, word_ids = encode(tok, SENTS, TAGS)
    assert -100 in labels[0] and labels[0].count(-100) > 2  # specials, padding and sub-words
    logits = logits_for(word_ids, TAGS)
    batch = trainer_batch(logits, labels, id2label=dict(enumerate(LABELS)))
    s = Scorer(scheme="IOB2")
    s.add_batch(batch)
    r = s.report()
    gold = score_tags(reference=TAGS, prediction=TAGS, scheme="IOB2")
    assert (r.overall.tp, r.overall.fp, r.overall.fn) == (gold.overall.tp, 0, 0) == (6, 0, 0)
    assert r.to_dict()["tokens"] == sum(map(len, SENTS))
    # the same through word_ids, with every strategy, and from label ids instead of logits
    for strategy in ("first", "max", "average"):
        b2 = trainer_batch(logits, labels, id2label=LABELS, word_ids=word_ids, strategy=strategy)
        s2 = Scorer(scheme="IOB2")
        s2.add_batch(b2)
        assert s2.report().to_dict()["per_label"] == r.to_dict()["per_label"]
    ids = logits.argmax(-1)
    b3 = trainer_batch(ids, labels, id2label=LABELS)
    s3 = Scorer(scheme="IOB2")
    s3.add_batch(b3)
    assert s3.report().overall == r.overall


def test_subword_strategies_differ_where_they_should():
    tok = fast_tokenizer()
    _, labels, word_ids = encode(tok, SENTS[:1], TAGS[:1])
    logits = logits_for(word_ids, TAGS[:1])
    # word 1 ("Lovelace" = love ##lace): first sub-word says I-PER; make the second sub-word say B-ORG strongly
    pos = [p for p, w in enumerate(word_ids[0]) if w == 1]
    logits[0, pos[1], LABELS.index("B-ORG")] = 9.0
    def tags_with(strategy):
        b = trainer_batch(logits, labels, id2label=LABELS, word_ids=word_ids, strategy=strategy)
        return [b.vocab.tags[i] for i in b.prediction.ids]
    assert tags_with("first")[1] == "I-PER"
    assert tags_with("max")[1] == "B-ORG"
    # average of probabilities: I-PER ~0.5 on one sub-word, B-ORG ~0.98 on the other -> B-ORG
    assert tags_with("average")[1] == "B-ORG"


def test_trainer_batch_errors():
    with pytest.raises(InputError, match=r"predictions of shape \(1, 3\) do not match label_ids of shape \(1, 2\)"):
        trainer_batch(np.zeros((1, 3), int), [[0, 0]], id2label=LABELS)
    with pytest.raises(InputError, match=r"predictions holds label id 9, outside 0..6"):
        trainer_batch(np.array([[9, 0]]), [[0, 0]], id2label=LABELS)
    with pytest.raises(ValueError, match="strategy='max' needs logits and word_ids"):
        trainer_batch(np.zeros((1, 2), int), [[0, 0]], id2label=LABELS, strategy="max")


def test_pipeline_outputs_aggregated_and_subword():
    text = "Ada Lovelace met Charles Babbage in London."
    ref = document_from_text("p", text, tokenizer="regex")
    grouped = [
        {"entity_group": "PER", "score": 0.9, "word": "ada lovelace", "start": 0, "end": 12},
        {"entity_group": "PER", "score": 0.8, "word": "charles bab", "start": 17, "end": 28},  # ends inside a word
        {"entity_group": "LOC", "score": 0.7, "word": "london", "start": 36, "end": 42},
    ]
    spans, counts = pipeline_to_spans(grouped, ref)
    assert [(s.label, s.start, s.end, s.score) for s in spans] == [("PER", 0, 2, 0.9), ("PER", 3, 5, 0.8), ("LOC", 6, 7, 0.7)]
    assert counts == {"misaligned": 1, "dropped": 0}
    sub = [
        {"entity": "B-PER", "score": 0.9, "index": 1, "word": "ada", "start": 0, "end": 3},
        {"entity": "I-PER", "score": 0.7, "index": 2, "word": "love", "start": 4, "end": 8},
        {"entity": "B-ORG", "score": 0.2, "index": 3, "word": "##lace", "start": 8, "end": 12},
        {"entity": "B-LOC", "score": 0.6, "index": 9, "word": "london", "start": 36, "end": 42},
    ]
    spans, _ = pipeline_to_spans(sub, ref)
    assert [(s.label, s.start, s.end) for s in spans] == [("PER", 0, 2), ("LOC", 6, 7)]
    assert spans[0].score == pytest.approx(0.8)
    with pytest.raises(InputError, match="pipeline entity #0 has unknown label 'PER'; valid: 'LOC' or 'ORG'"):
        pipeline_to_spans(grouped, ref, labels=["LOC", "ORG"])
    with pytest.raises(InputError, match=r"pipeline entity #0 characters \[40, 90\) are outside"):
        pipeline_to_spans([{"entity_group": "X", "start": 40, "end": 90, "score": 1.0}], ref)
    r = score(reference=[type(ref)(ref.id, ref.tokens, (), ref.separators, ref.char_offsets)], prediction=[spans])
    assert r.overall.fp == 2


def test_real_pipeline_output_maps_onto_words():
    require("torch")
    from hf_helpers import tiny_bert
    from transformers import pipeline

    pipe = pipeline("token-classification", model=tiny_bert(), tokenizer=fast_tokenizer(), device="cpu")
    text = "Ada Lovelace met Charles Babbage in London ."
    ref = document_from_text("t", text, tokenizer="whitespace")
    for agg in ("none", "simple", "first", "max", "average"):
        out = pipe(text, aggregation_strategy=agg)
        spans, counts = pipeline_to_spans(out, ref)
        assert all(0 <= s.start < s.end <= len(ref.tokens) for s in spans)
        assert counts["dropped"] == 0


def test_datasets_rows_from_local_conll(tmp_path):
    require("datasets")
    path = tmp_path / "mini.conll"
    lines = ["-DOCSTART- O", ""]
    for words, tags in zip(SENTS, TAGS):
        lines += [f"{w} {t}" for w, t in zip(words, tags)] + [""]
    path.write_text("\n".join(lines) + "\n")
    ds = load_conll_dataset(str(path), cache_dir=str(tmp_path / "cache"))
    assert ds.features["ner_tags"].feature.names[0] == "O"
    tokens, tags = dataset_tags(ds)
    assert tokens == SENTS and tags == TAGS
    r = score_tags(reference=tags, prediction=tags, tokens=tokens)
    assert r.overall.tp == 6
