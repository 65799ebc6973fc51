"""Seeded synthetic NER corpora (IOB2, 4 types) for the benchmarks.

Gold: sentences of 5-30 tokens, entities of 1-4 tokens covering about 17% of the tokens.
Prediction: gold with 10% of entities dropped, 10% boundary-shifted, 5% retyped and 5% spurious
entities added (as in research/peer-speed.md).
"""

from __future__ import annotations

import numpy as np

TYPES = ("PER", "LOC", "ORG", "MISC")


def corpus(n_tokens: int, seed: int = 0) -> tuple[list[list[str]], list[list[str]]]:
    rng = np.random.default_rng(seed)
    gold, pred = [], []
    total = 0
    while total < n_tokens:
        n = int(rng.integers(5, 31))
        g = ["O"] * n
        p = ["O"] * n
        i = 0
        while i < n:
            if rng.random() < 0.08:
                length = int(min(rng.integers(1, 5), n - i))
                t = TYPES[int(rng.integers(4))]
                g[i] = f"B-{t}"
                for k in range(i + 1, i + length):
                    g[k] = f"I-{t}"
                r = rng.random()
                if r < 0.10:
                    pass  # dropped
                else:
                    s, e, pt = i, i + length, t
                    if r < 0.20:
                        e = min(n, e + 1) if rng.random() < 0.5 else max(s + 1, e - 1)
                    elif r < 0.25:
                        pt = TYPES[(TYPES.index(t) + 1) % 4]
                    p[s] = f"B-{pt}"
                    for k in range(s + 1, e):
                        p[k] = f"I-{pt}"
                i += length + 1
            else:
                if rng.random() < 0.005 and p[i] == "O":
                    p[i] = f"B-{TYPES[int(rng.integers(4))]}"
                i += 1
        gold.append(g)
        pred.append(p)
        total += n
    return gold, pred
