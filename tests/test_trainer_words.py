"""The Trainer hook scoring words: a tiny BERT and a WordPiece tokenizer built locally, a
``datasets`` dataset labelled on every sub-token as the token-classification example does
with ``label_all_tokens`` (a B- word's later sub-tokens get its I- tag), the word ids kept in
a column; the hook's P/R/F equal seqeval's on the words' gold tags from the dataset's own
word-level column and the word tags read from the predicted logits by a plain loop."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import require

require("transformers")
torch = require("torch")
require("accelerate")
datasets = require("datasets")
seqeval = require("seqeval.metrics")

from hf_helpers import fast_tokenizer
from iescore.adapters.trainer import compute_metrics

LABELS = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]
WORDS = ["ada", "love", "##lace", "met", "wash", "##ing", "##ton", "in", "grace", "hop", "##per", "went", "to",
         "lon", "##d", "##on", "."]
SENTS = [
    (["Ada", "Lovelace", "met", "Grace", "Hopper", "in", "Washington", "."],
     ["B-PER", "I-PER", "O", "B-PER", "I-PER", "O", "B-LOC", "O"]),
    (["Hopper", "went", "to", "London", "."], ["B-PER", "O", "O", "B-LOC", "O"]),
    (["Washington", "met", "Lovelace", "in", "London", "."], ["B-PER", "O", "B-PER", "O", "B-LOC", "O"]),
]


def _model():
    from transformers import BertConfig, BertForTokenClassification

    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=5 + len(WORDS), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                     intermediate_size=32, max_position_embeddings=32, num_labels=len(LABELS),
                     id2label=dict(enumerate(LABELS)), label2id={n: i for i, n in enumerate(LABELS)})
    return BertForTokenClassification(cfg)


def _dataset(tok, copies):
    b_to_i = [LABELS.index("I-" + n[2:]) if n.startswith("B-") else k for k, n in enumerate(LABELS)]

    def align(batch):
        enc = tok(batch["tokens"], is_split_into_words=True, truncation=True)
        enc["labels"], enc["word_ids"] = [], []
        for i, tags in enumerate(batch["ner_tags"]):
            wids, row, prev = enc.word_ids(i), [], None
            for w in wids:  # every sub-token labelled (label_all_tokens)
                row.append(-100 if w is None else tags[w] if w != prev else b_to_i[tags[w]])
                prev = w
            enc["labels"].append(row)
            enc["word_ids"].append(wids)
        return enc

    raw = datasets.Dataset.from_dict({
        "tokens": [w for w, _ in SENTS] * copies,
        "ner_tags": [[LABELS.index(t) for t in tags] for _, tags in SENTS] * copies,
    })
    return raw.map(align, batched=True)


def _word_tags(logits, word_ids, policy):
    """Each word's predicted tag, a word at a time (scipy's softmax for ``average``)."""
    from scipy.special import softmax

    out = []
    for row, wids in zip(logits, word_ids):
        tags, w_pos = [], {}
        for p, w in enumerate(wids):
            if w is not None:
                w_pos.setdefault(w, []).append(p)
        for w in sorted(w_pos):
            z = row[w_pos[w]]
            score = {"first": z[0], "max": z.max(axis=0), "average": softmax(z, axis=1).mean(axis=0)}[policy]
            tags.append(LABELS[int(np.argmax(score))])
        out.append(tags)
    return out


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    from transformers import DataCollatorForTokenClassification, Trainer, TrainingArguments

    tok = fast_tokenizer(WORDS)
    assert tok.tokenize("Washington London Lovelace") == ["wash", "##ing", "##ton", "lon", "##d", "##on", "love",
                                                          "##lace"]
    train, evaluation = _dataset(tok, 4), _dataset(tok, 2)
    args = TrainingArguments(
        output_dir=str(tmp_path_factory.mktemp("out")), per_device_train_batch_size=4, per_device_eval_batch_size=4,
        max_steps=3, learning_rate=1e-2, report_to=[], use_cpu=True, save_strategy="no", logging_strategy="no",
        seed=0,
    )
    trainer = Trainer(model=_model(), args=args, train_dataset=train, eval_dataset=evaluation,
                      data_collator=DataCollatorForTokenClassification(tok))
    trainer.train()
    pred = trainer.predict(evaluation)
    return trainer, evaluation, pred


@pytest.mark.parametrize("policy", ["first", "max", "average"])
@pytest.mark.parametrize("batch_eval", [False, True])
def test_the_trainer_hook_scores_words(trained, policy, batch_eval):
    trainer, evaluation, pred = trained
    hook = compute_metrics(LABELS, scheme="IOB2", word_ids=evaluation["word_ids"], subwords=policy)
    calls = []

    def spy(eval_pred, compute_result=None):
        calls.append(compute_result)
        return hook(eval_pred) if compute_result is None else hook(eval_pred, compute_result)

    trainer.compute_metrics = spy
    trainer.args.batch_eval_metrics = batch_eval
    m = trainer.evaluate()
    assert calls == ([False, True] if batch_eval else [None])  # 6 sequences, batches of 4
    gold = [[LABELS[t] for t in tags] for tags in evaluation["ner_tags"]]
    words = _word_tags(pred.predictions, evaluation["word_ids"], policy)
    assert list(map(len, words)) == list(map(len, gold))
    assert m["eval_precision"] == pytest.approx(seqeval.precision_score(gold, words, zero_division=0))
    assert m["eval_recall"] == pytest.approx(seqeval.recall_score(gold, words, zero_division=0))
    assert m["eval_f1"] == pytest.approx(seqeval.f1_score(gold, words, zero_division=0))
    n_words = sum(map(len, gold))
    agree = sum(g == p for gs, ps in zip(gold, words) for g, p in zip(gs, ps))
    assert m["eval_accuracy"] == pytest.approx(agree / n_words)
    assert m["eval_PER_number"] == 2 * 5.0  # 5 PER words in the three sentences, twice
    assert f"|subwords:{policy}|" in hook.signature


def test_without_word_ids_the_trainer_scores_sub_tokens(trained):
    trainer, evaluation, pred = trained
    trainer.compute_metrics = compute_metrics(LABELS, scheme="IOB2")
    trainer.args.batch_eval_metrics = False
    m = trainer.evaluate()
    # every labelled sub-token is a token: 2 x (8 words + 4 later sub-tokens, 5 + 3, 6 + 5)
    labels = np.asarray(pred.label_ids)
    assert (labels != -100).sum() == 2 * (12 + 8 + 11)
    gold = [[LABELS[t] for t in row if t != -100] for row in labels]
    sub = [[LABELS[int(np.argmax(z))] for z, t in zip(zs, row) if t != -100]
           for zs, row in zip(pred.predictions, labels)]
    assert m["eval_f1"] == pytest.approx(seqeval.f1_score(gold, sub, zero_division=0))


@pytest.mark.parametrize("word_ids", [False, True])
def test_batches_not_concatenated_are_all_scored(trained, word_ids):
    """eval_do_concat_batches=False hands the hook a list of each batch's arrays."""
    trainer, evaluation, _ = trained
    kw = {"word_ids": evaluation["word_ids"], "subwords": "average"} if word_ids else {}
    trainer.args.batch_eval_metrics = False
    trainer.compute_metrics = compute_metrics(LABELS, scheme="IOB2", **kw)
    whole = trainer.evaluate()
    seen = []

    def spy(eval_pred):
        seen.append((type(eval_pred.label_ids), len(eval_pred.label_ids)))
        return hook(eval_pred)

    hook = compute_metrics(LABELS, scheme="IOB2", **kw)
    trainer.compute_metrics = spy
    trainer.args.eval_do_concat_batches = False
    try:
        parts = trainer.evaluate()
    finally:
        trainer.args.eval_do_concat_batches = True
    assert seen == [(list, 2)]  # 6 sequences in batches of 4
    for k in ("eval_precision", "eval_recall", "eval_f1", "eval_accuracy", "eval_PER_number", "eval_LOC_number"):
        assert parts[k] == whole[k], k
    assert whole["eval_PER_number"] == 10.0  # the first batch alone holds 7
