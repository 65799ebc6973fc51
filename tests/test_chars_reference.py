"""Character-offset input against the plain reference implementation of the definitions
(``spec_reference``, no library code): random texts and character spans, scored by
:func:`iescore.io.textscore.score_text` on characters and on tokens, compared with the
reference run on the characters as tokens, and on whitespace tokens with the spans
mapped by a brute-force reading of ``expand`` and ``contract``."""

from __future__ import annotations

import random

import pytest
import spec_reference as ref

from iescore import Span
from iescore.io.chars import TextDocument
from iescore.io.textscore import score_text

LABELS = ("PER", "LOC")


def make_doc(rng: random.Random, k: int) -> tuple[str, list[tuple[str, int, int]], list[tuple[str, int, int]]]:
    words = [rng.choice(("a", "bc", "def", "A")) for _ in range(rng.randint(1, 6))]
    text = " ".join(words)

    def spans() -> list[tuple[str, int, int]]:
        out, at = [], 0
        while at < len(text):  # spans of one side never overlap (the TS model's condition)
            if rng.random() < 0.3:
                end = min(len(text), at + rng.randint(1, 6))
                out.append((rng.choice(LABELS), at, end))
                at = end
            else:
                at += rng.randint(1, 3)
        return out

    return text, spans(), spans()


def mapped(offs: list[tuple[int, int]], spans, policy: str) -> list[tuple[str, int, int]]:
    """Brute force: the tokens a character span touches (expand) or holds whole (contract)."""
    out = []
    for lab, s, e in spans:
        if policy == "expand":
            ks = [k for k, (a, b) in enumerate(offs) if a < e and b > s]
        else:
            ks = [k for k, (a, b) in enumerate(offs) if s <= a and b <= e]
        if ks:
            out.append((lab, min(ks), max(ks) + 1))
    return out


def whitespace_offsets(text: str) -> list[tuple[int, int]]:
    out, at = [], 0
    for w in text.split(" "):
        out.append((at, at + len(w)))
        at += len(w) + 1
    return out


def compare(report, expected: ref.RefResult) -> None:
    """Per-label TP/FP/FN, Makhoul's C/S/D/I, and the TS counts unless the TS model refused
    the input (two spans of one label overlapping after the mapping to tokens)."""
    for lab in expected.labels:
        c = report.per_label[lab] if lab in report.labels else None
        got = (c.tp, c.fp, c.fn) if c is not None else (0, 0, 0)
        assert got == expected.per_label[lab], lab
        if report.ts_error is not None:
            continue
        ts = report.to_dict()["ts"]["per_label"][lab]["ts"]
        assert (ts["tp"], ts["fp"], ts["fn"]) == pytest.approx(expected.ts[lab][:3]), lab
    s = report.to_dict()["slot_errors"]
    assert (s["C"], s["S"], s["D"], s["I"]) == expected.slot


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("rule, counting", [("E", "any"), ("O(1,2)", "one-to-one"), ("C(2)", "any")])
def test_character_level_equals_the_reference_on_characters(seed, rule, counting):
    rng = random.Random(seed)
    docs = [make_doc(rng, k) for k in range(4)]
    refs = [TextDocument(str(k), t, tuple(Span(*s) for s in g)) for k, (t, g, _) in enumerate(docs)]
    preds = [TextDocument(str(k), t, tuple(Span(*s) for s in p)) for k, (t, _, p) in enumerate(docs)]
    r = score_text(refs, preds, level="characters", rule=rule, counting=counting)
    compare(r, ref.evaluate_docs([(list(t), g, p) for t, g, p in docs], rule=rule, counting=counting))


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("policy", ["expand", "contract"])
def test_token_level_equals_the_reference_on_mapped_spans(seed, policy):
    rng = random.Random(100 + seed)
    docs = [make_doc(rng, k) for k in range(4)]
    refs = [TextDocument(str(k), t, tuple(Span(*s) for s in g)) for k, (t, g, _) in enumerate(docs)]
    preds = [TextDocument(str(k), t, tuple(Span(*s) for s in p)) for k, (t, _, p) in enumerate(docs)]
    expected_docs = []
    for t, g, p in docs:
        offs = whitespace_offsets(t)
        expected_docs.append((t.split(" "), mapped(offs, g, policy), mapped(offs, p, policy)))
    r = score_text(refs, preds, level="tokens", tokenizer="whitespace", misaligned=policy, rule="O(1,1)")
    compare(r, ref.evaluate_docs(expected_docs, rule="O(1,1)"))
