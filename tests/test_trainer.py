"""The Trainer compute_metrics hook, on a tiny randomly initialised BERT trained for a few steps."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import require

require("transformers")
torch = require("torch")
require("accelerate")  # transformers' Trainer needs it
from hf_helpers import LABELS, encode, fast_tokenizer, tiny_bert
from iescore.adapters.hf import trainer_batch
from iescore.adapters.trainer import compute_metrics

from iescore import Scorer
from iescore.render.flat import flat_metrics

SENTS = [
    (["Ada", "Lovelace", "met", "Charles", "Babbage", "in", "London", "."],
     ["B-PER", "I-PER", "O", "B-PER", "I-PER", "O", "B-LOC", "O"]),
    (["Grace", "Hopper", "joined", "the", "navy", "in", "New", "York", "."],
     ["B-PER", "I-PER", "O", "O", "B-ORG", "O", "B-LOC", "I-LOC", "O"]),
    (["She", "wrote", "for", "Harvard", "University", "."], ["O", "O", "O", "B-ORG", "I-ORG", "O"]),
]


class _Data(torch.utils.data.Dataset):
    def __init__(self, n):
        tok = fast_tokenizer()
        words = [s for s, _ in SENTS] * n
        tags = [t for _, t in SENTS] * n
        enc, labels, _ = encode(tok, words, tags)
        self.items = [
            {"input_ids": enc["input_ids"][i], "attention_mask": enc["attention_mask"][i], "labels": labels[i]}
            for i in range(len(words))
        ]

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return {k: torch.tensor(v) for k, v in self.items[i].items()}


def _trainer(tmp_path, hook, batch_eval):
    from transformers import Trainer, TrainingArguments

    args = TrainingArguments(
        output_dir=str(tmp_path / "out"), per_device_train_batch_size=4, per_device_eval_batch_size=2,
        max_steps=4, learning_rate=1e-2, report_to=[], use_cpu=True, batch_eval_metrics=batch_eval,
        save_strategy="no", logging_strategy="no", seed=0,
    )
    return Trainer(model=tiny_bert(), args=args, train_dataset=_Data(4), eval_dataset=_Data(2), compute_metrics=hook)


@pytest.mark.parametrize("batch_eval", [False, True])
def test_trainer_hook_equals_the_core(tmp_path, batch_eval):
    hook = compute_metrics(LABELS, scheme="IOB2")
    trainer = _trainer(tmp_path, hook, batch_eval)
    trainer.train()
    metrics = trainer.evaluate()
    pred = trainer.predict(trainer.eval_dataset)
    s = Scorer(scheme="IOB2")
    s.add_batch(trainer_batch(pred.predictions, pred.label_ids, id2label=LABELS))
    core = flat_metrics(s.report())
    for k, v in core.items():
        assert metrics[f"eval_{k}"] == pytest.approx(v), k
        assert type(metrics[f"eval_{k}"]) is float
    assert metrics["eval_PER_number"] == 6.0  # 2 copies x 3 PER entities


def test_batched_counts_are_summed_not_averaged():
    hook = compute_metrics(LABELS, scheme="IOB2")

    class EP:
        def __init__(self, p, l):
            self.predictions, self.label_ids = np.array(p), np.array(l)

    # batch 1: 1 of 1 entity right; batch 2: 0 of 3 -> F1 over both = 2*1/(2*1+3) , not mean(1, 0)
    assert hook(EP([[1, 0]], [[1, 0]]), compute_result=False) == {}
    out = hook(EP([[0, 0, 0]], [[1, 3, 5]]), compute_result=True)
    assert out["f1"] == pytest.approx(2 / 5)
    # the hook starts afresh for the next evaluation
    out = hook(EP([[1]], [[1]]), compute_result=True)
    assert out["f1"] == 1.0
