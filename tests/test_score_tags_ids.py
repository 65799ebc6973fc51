"""score_tags on label ids (label_names) and per word (word_ids): hand-computed cases."""

from __future__ import annotations

import pytest

import iescore
from iescore.errors import ConfigError

NAMES = ["O", "B-PER", "I-PER"]


def test_label_ids_are_the_tags_they_name():
    # ids 1 2 0 | 1 0 0 are B-PER I-PER O | B-PER O O: one answer PER[0,2), one prediction PER[0,1)
    r = iescore.score_tags(reference=[[1, 2, 0]], prediction=[[1, 0, 0]], label_names=NAMES)
    s = iescore.score_tags(reference=[["B-PER", "I-PER", "O"]], prediction=[["B-PER", "O", "O"]])
    assert (r.overall.tp, r.overall.fp, r.overall.fn) == (0, 1, 1) == (s.overall.tp, s.overall.fp, s.overall.fn)


def test_words_score_the_first_sub_token():
    # word 0 = positions 1-3 (B-PER I-PER I-PER labelled on every sub-token), word 1 = position 4 (O);
    # predicted B-PER O O on the word's sub-tokens: per sub-token an answer PER[1,4) against PER[1,2),
    # no TP; per word (first sub-token) the word is B-PER: TP 1, FP 0, FN 0
    ref, pred = [[-100, 1, 2, 2, 0, -100]], [[0, 1, 0, 0, 0, 0]]
    words = [[None, 0, 0, 0, 1, None]]
    per_word = iescore.score_tags(reference=ref, prediction=pred, label_names=NAMES, word_ids=words)
    assert (per_word.overall.tp, per_word.overall.fp, per_word.overall.fn) == (1, 0, 0)
    per_token = iescore.score_tags(reference=ref, prediction=pred, label_names=NAMES)
    assert (per_token.overall.tp, per_token.overall.fp, per_token.overall.fn) == (0, 1, 1)


def test_word_ids_without_label_names_and_tokens_with_them_are_refused():
    with pytest.raises(ConfigError, match="word_ids= reads label ids: pass label_names= too"):
        iescore.score_tags(reference=[["O"]], prediction=[["O"]], word_ids=[[0]])
    with pytest.raises(ConfigError, match="tokens= is not taken with label_names="):
        iescore.score_tags(reference=[[0]], prediction=[[0]], label_names=NAMES, tokens=[["a"]])
