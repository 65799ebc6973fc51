"""One process of a distributed `evaluate` run (used by test_evaluate_metric.py).

Usage: python dist_worker.py RANK WORLD CACHE_DIR OUT_JSON GOLD PRED
"""

import json
import sys

import evaluate
import iescore.metric_card as card

from iescore.io.conll import read_conll


def sentences(gold, pred):
    batch = read_conll(gold, pred)
    tags, first = batch.vocab.tags, batch.reference.first
    starts = [i for i, f in enumerate(first.tolist()) if f] + [batch.n_tokens]
    refs = [[tags[i] for i in batch.reference.ids[a:b]] for a, b in zip(starts, starts[1:])]
    preds = [[tags[i] for i in batch.prediction.ids[a:b]] for a, b in zip(starts, starts[1:])]
    return refs, preds


if __name__ == "__main__":
    rank, world, cache, out, gold, pred = sys.argv[1:7]
    rank, world = int(rank), int(world)
    refs, preds = sentences(gold, pred)
    m = evaluate.load(card.PATH, num_process=world, process_id=rank, experiment_id="iescore-dist", cache_dir=cache)
    m.add_batch(predictions=preds[rank::world], references=refs[rank::world])
    with open(out, "w") as fh:
        json.dump(m.compute(), fh)
