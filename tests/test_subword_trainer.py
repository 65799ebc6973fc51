"""Words scored from sub-token labels (every sub-token labelled, as label_all_tokens does):
the Trainer hook with word ids, against numbers worked out by hand and against seqeval on
the word tags; a tiny BERT in a real Trainer, its word ids read from the dataset's column."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import require

from iescore import InputError, Scorer
from iescore.errors import ConfigError, IEScoreWarning
from iescore.scoring.labelids import label_id_batch

NAMES = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]
O, BP, IP, BL, IL = range(5)
X = -100

# Sequence A: [CLS] wash ##ing ##ton met ada love ##lace [SEP]
#   words   Washington(B-LOC) met(O) Ada(B-PER) Lovelace(I-PER)
# Sequence B: [CLS] grace hop ##per [SEP]
#   words   Grace(B-PER) Hopper(I-PER)
WORD_IDS = [[None, 0, 0, 0, 1, 2, 3, 3, None], [None, 0, 1, 1, None]]
# every sub-token labelled, the later ones of a B- word with its I- tag (label_all_tokens)
LABELS = np.array([[X, BL, IL, IL, O, BP, IP, IP, X], [X, BP, IP, IP, X, X, X, X, X]])


def _logits() -> np.ndarray:
    z = np.zeros((2, 9, 5))
    # Washington: B-LOC 2 on "wash", O 5 on "##ing" and "##ton"
    z[0, 1, BL] = 2.0
    z[0, 2, O] = z[0, 3, O] = 5.0
    z[0, 4, O] = 5.0  # met
    z[0, 5, BP] = 5.0  # ada
    # Lovelace: I-PER 5 on "love", B-LOC 9 on "##lace"
    z[0, 6, IP] = 5.0
    z[0, 7, BL] = 9.0
    z[0, [0, 8], O] = 5.0
    z[1, 1, BP] = 3.0  # grace
    # Hopper: I-PER 4 on "hop"; O 4.5 and I-PER 3.5 on "##per"
    z[1, 2, IP] = 4.0
    z[1, 3, O], z[1, 3, IP] = 4.5, 3.5
    z[1, 4:, O] = 5.0
    return z


# The word tags each policy reads, worked out by hand (softmax over 5 labels):
# - first: the first sub-token's arg-max.
# - max: per label, the highest logit over the word's sub-tokens: Washington O (5 > 2),
#   Lovelace B-LOC (9 > 5), Hopper O (4.5 > 4).
# - average: the mean probability. Washington: B-LOC (e^2/(e^2+4) + 2/(e^5+4))/3 = 0.221,
#   O (1/(e^2+4) + 2 e^5/(e^5+4))/3 = 0.678 -> O. Lovelace: I-PER (e^5/(e^5+4) + 1/(e^9+4))/2
#   = 0.487, B-LOC (1/(e^5+4) + e^9/(e^9+4))/2 = 0.503 -> B-LOC. Hopper: I-PER
#   (e^4/(e^4+4) + e^3.5/(e^4.5+e^3.5+3))/2 = (0.932 + 0.263)/2 = 0.597, O (0.017 + 0.714)/2 = 0.365 -> I-PER.
GOLD_WORDS = [["B-LOC", "O", "B-PER", "I-PER"], ["B-PER", "I-PER"]]
WORDS = {
    "first": [["B-LOC", "O", "B-PER", "I-PER"], ["B-PER", "I-PER"]],
    "max": [["O", "O", "B-PER", "B-LOC"], ["B-PER", "O"]],
    "average": [["O", "O", "B-PER", "B-LOC"], ["B-PER", "I-PER"]],
}
# Chunks (IOB2) against gold LOC[0,1) PER[2,4) | PER[0,2):
#   first:   all found                                    TP 3 FP 0 FN 0  P = R = F = 1
#   max:     PER[2,3) LOC[3,4) | PER[0,1)                 TP 0 FP 3 FN 3  P = R = F = 0
#   average: PER[2,3) LOC[3,4) | PER[0,2)                 TP 1 FP 2 FN 2  P = R = F = 1/3
#            PER: TP 1 FP 1 FN 1 (F 1/2); LOC: TP 0 FP 1 FN 1 (F 0)
# Per sub-token (no word ids), arg-max per position:
#   A: LOC[1,2) PER[5,7) LOC[7,8) against LOC[1,4) PER[5,8); B: PER[1,3) against PER[1,4)
#   TP 0 FP 4 FN 3; accuracy 6/10 (##ing, ##ton, ##lace, ##per wrong) where the words' is 6/6
HAND = {"first": (1.0, 1.0, 1.0), "max": (0.0, 0.0, 0.0), "average": (1 / 3, 1 / 3, 1 / 3)}


def _hook(**kw):
    from iescore.adapters.trainer import compute_metrics

    return compute_metrics(NAMES, scheme="IOB2", **kw)


@pytest.mark.parametrize("policy", ["first", "max", "average"])
def test_words_scored_under_each_policy_equal_the_hand_count(policy):
    m = _hook(word_ids=WORD_IDS, subwords=policy)((_logits(), LABELS))
    assert (m["precision"], m["recall"], m["f1"]) == pytest.approx(HAND[policy])
    if policy == "average":
        assert (m["PER_precision"], m["PER_recall"], m["PER_f1"]) == pytest.approx((0.5, 0.5, 0.5))
        assert (m["LOC_precision"], m["LOC_f1"]) == (0.0, 0.0)
    if policy == "first":
        assert m["accuracy"] == 1.0


@pytest.mark.parametrize("policy", ["first", "max", "average"])
def test_words_equal_seqeval_on_the_word_tags(policy):
    seqeval = require("seqeval.metrics")
    m = _hook(word_ids=WORD_IDS, subwords=policy)((_logits(), LABELS))
    pred = WORDS[policy]
    assert m["precision"] == pytest.approx(seqeval.precision_score(GOLD_WORDS, pred, zero_division=0))
    assert m["recall"] == pytest.approx(seqeval.recall_score(GOLD_WORDS, pred, zero_division=0))
    assert m["f1"] == pytest.approx(seqeval.f1_score(GOLD_WORDS, pred, zero_division=0))
    # and the batch holds exactly those word tags
    b = label_id_batch(LABELS, _logits(), label_names=NAMES, word_ids=WORD_IDS, subwords=policy)
    tags = [b.vocab.tags[i] for i in b.prediction.ids]
    assert tags == [t for row in pred for t in row]
    assert [b.vocab.tags[i] for i in b.reference.ids] == [t for row in GOLD_WORDS for t in row]


def test_without_word_ids_the_sub_tokens_are_scored():
    m = _hook()((_logits(), LABELS))
    assert (m["precision"], m["recall"], m["f1"]) == (0.0, 0.0, 0.0)
    assert m["accuracy"] == pytest.approx(0.6)
    s = Scorer(scheme="IOB2")
    s.add_batch(label_id_batch(LABELS, _logits(), label_names=NAMES))
    o = s.report().overall
    assert (o.tp, o.fp, o.fn) == (0, 4, 3)


def test_first_sub_token_labels_give_the_same_words():
    """The usual labelling (-100 after a word's first sub-token) scores the same words."""
    first_only = LABELS.copy()
    first_only[0, [2, 3, 7]] = X
    first_only[1, 3] = X
    for policy in ("first", "max", "average"):
        a = _hook(word_ids=WORD_IDS, subwords=policy)((_logits(), LABELS))
        b = _hook(word_ids=WORD_IDS, subwords=policy)((_logits(), first_only))
        assert a == b
    # the old copy of the B- tag on every sub-token (B-LOC B-LOC B-LOC) is one word too
    copied = LABELS.copy()
    copied[0, [2, 3]] = BL
    assert _hook(word_ids=WORD_IDS)((_logits(), copied))["f1"] == 1.0


def test_label_ids_as_predictions_and_ragged_rows():
    ids = _logits().argmax(-1)
    assert _hook(word_ids=WORD_IDS)((ids, LABELS))["f1"] == 1.0
    with pytest.raises(ConfigError, match="subwords='max' reads a word's sub-tokens: it needs word_ids"):
        _hook(subwords="max")
    with pytest.raises(ValueError, match="strategy='max' needs logits and word_ids"):
        _hook(word_ids=WORD_IDS, subwords="max")((ids, LABELS))
    # rows of their own lengths (as a dataset holds them), label ids on both sides
    ref = [LABELS[0].tolist(), LABELS[1, :5].tolist()]
    pred = [ids[0].tolist(), ids[1, :5].tolist()]
    b = label_id_batch(ref, pred, label_names=NAMES, word_ids=WORD_IDS)
    s = Scorer(scheme="IOB2")
    s.add_batch(b)
    assert s.report().overall.tp == 3 and b.doc_offsets.tolist() == [0, 4]


def test_word_ids_shorter_than_the_padded_labels_row():
    """The Trainer pads labels with -100 past the word ids of a dataset row: that is padding."""
    labels = np.concatenate([LABELS, np.full((2, 3), X)], axis=1)
    logits = np.concatenate([_logits(), np.full((2, 3, 5), -100.0)], axis=1)
    assert _hook(word_ids=WORD_IDS, subwords="average")((logits, labels))["f1"] == pytest.approx(1 / 3)


def test_mismatches_name_the_sequence_and_position():
    hook = _hook(word_ids=WORD_IDS)
    bad = LABELS.copy()
    bad[0, 3] = IP  # Washington's third sub-token says PER where its first says LOC
    with pytest.raises(InputError) as e:
        hook((_logits(), bad))
    assert str(e.value) == (
        "label_ids: sequence '0', word 0: its sub-tokens carry 'I-PER' at position 3 but 'B-LOC' at its first, "
        "position 1; a word has one gold label (its later sub-tokens may carry it or its I- tag, as "
        "label_all_tokens writes them)")
    bad = LABELS.copy()
    bad[1, 2] = O  # Hopper: O then I-PER
    with pytest.raises(InputError, match=r"sequence '1', word 1: its sub-tokens carry 'I-PER' at position 3 but 'O'"):
        hook((_logits(), bad))
    # a label on a special token: the word ids are not this example's
    bad = LABELS.copy()
    bad[0, 0] = O
    with pytest.raises(InputError) as e:
        hook((_logits(), bad))
    assert str(e.value) == ("label_ids: sequence '0', position 0 holds label id 0 but belongs to no word: "
                            "its word id is None (a special token?)")
    # word ids shorter than the labelled positions
    short = [WORD_IDS[0][:6], WORD_IDS[1]]
    with pytest.raises(InputError) as e:
        _hook(word_ids=short)((_logits(), LABELS))
    assert str(e.value) == ("label_ids: sequence '0', position 6 holds label id 2 but belongs to no word: "
                            "word_ids has 6 positions (the word ids of another example or tokenization?)")
    # word ids longer than the labels row
    long = [[*WORD_IDS[0], 4], WORD_IDS[1]]
    with pytest.raises(InputError) as e:
        _hook(word_ids=long)((_logits(), LABELS))
    assert str(e.value) == ("word_ids: sequence '0' has 10 positions, word 4 at position 9, but its label_ids row "
                            "has 9 (the word ids of another tokenization?)")
    # another number of sequences than the word ids
    with pytest.raises(InputError, match=r"compute_metrics was given 2 sequences so far but word_ids holds 1 "):
        _hook(word_ids=WORD_IDS[:1])((_logits(), LABELS))
    with pytest.raises(InputError, match=r"the evaluation had 2 sequences but word_ids holds 3 "):
        _hook(word_ids=[*WORD_IDS, [None]])((_logits(), LABELS))
    with pytest.raises(InputError, match="got a flat list"):
        _hook(word_ids=WORD_IDS[0])
    with pytest.raises(InputError, match=r"word_ids: sequence '1' holds 'x'; a word id is an integer or None"):
        _hook(word_ids=[WORD_IDS[0], [None, "x"]])((_logits(), LABELS))


def test_a_word_labelled_only_after_its_first_sub_token_warns():
    late = LABELS.copy()
    late[0, 6] = X  # Lovelace: love -100, ##lace I-PER
    with pytest.warns(IEScoreWarning) as w:
        m = _hook(word_ids=WORD_IDS)((_logits(), late))
    assert str(w[0].message) == (
        "label_ids: sequence '0', word 3: its first sub-token is labelled -100 but position 7 holds 'I-PER'; "
        "1 such word left out (a word's gold tag is its first sub-token's label)")
    # left out: gold LOC[0,1) PER[2,3) | PER[0,2) against B-LOC O B-PER | B-PER I-PER: all 3 found
    assert m["f1"] == 1.0


def test_batches_take_their_word_ids_in_order():
    hook = _hook(word_ids=WORD_IDS, subwords="average")
    z = _logits()
    assert hook((z[:1], LABELS[:1]), compute_result=False) == {}
    out = hook((z[1:, :5], LABELS[1:, :5]), compute_result=True)  # the second batch, narrower
    assert out == _hook(word_ids=WORD_IDS, subwords="average")((z, LABELS))
    assert out["f1"] == pytest.approx(1 / 3)
    hook((z[:1], LABELS[:1]), compute_result=False)
    with pytest.raises(InputError, match="the evaluation had 1 sequences but word_ids holds 2"):
        hook((z[:0], LABELS[:0]), compute_result=True)


def test_signature_records_the_policy():
    from iescore.adapters.trainer import compute_metrics

    for policy in ("first", "max", "average"):
        hook = compute_metrics(NAMES, word_ids=WORD_IDS, subwords=policy)
        hook((_logits(), LABELS))
        assert f"|subwords:{policy}|" in hook.signature


def test_label_id_batch_reads_ragged_logits_and_refuses_bad_shapes():
    z = _logits()
    ref = [LABELS[0].tolist(), LABELS[1, :5].tolist()]
    rows = [z[0], z[1, :5]]  # one (seq, labels) array per sequence
    for policy, (p, r, f) in HAND.items():
        s = Scorer(scheme="IOB2")
        s.add_batch(label_id_batch(ref, rows, label_names=dict(enumerate(NAMES)), word_ids=WORD_IDS, subwords=policy))
        o = s.report().overall
        assert (o.tp / max(o.tp + o.fp, 1), o.tp / max(o.tp + o.fn, 1)) == pytest.approx((p, r)), policy
    with pytest.raises(InputError, match=r"sequence #1: reference has shape \(5,\) but prediction has shape \(4, 5\)"):
        label_id_batch(ref, [z[0], z[1, :4]], label_names=NAMES)
    with pytest.raises(InputError, match="reference has 2 sequences but prediction has 1"):
        label_id_batch(ref, [z[0]], label_names=NAMES)
    with pytest.raises(InputError, match="3 document ids for 2 sequences"):
        label_id_batch(LABELS, z, label_names=NAMES, doc_ids=["a", "b", "c"])
    with pytest.raises(InputError, match=r"2 word_ids lists for a batch of 1 sequences"):
        label_id_batch(LABELS[:1], z[:1], label_names=NAMES, word_ids=WORD_IDS)
    bad = LABELS.copy()
    bad[0, 3] = 7  # a later sub-token's id outside the names
    with pytest.raises(InputError, match=r"reference holds label id 7, outside 0..4 \(id2label\)"):
        label_id_batch(bad, z, label_names=NAMES, word_ids=WORD_IDS)
    with pytest.raises(ValueError, match="unknown strategy 'mean'; valid: 'first', 'max' or 'average'"):
        label_id_batch(LABELS, z, label_names=NAMES, word_ids=WORD_IDS, subwords="mean")
    # the named sequences and words in errors
    b = label_id_batch(LABELS, z, label_names=NAMES, word_ids=WORD_IDS, doc_ids=["a", "b"])
    assert b.where(5, "prediction") == "sequence 'b' (prediction), word 1"
