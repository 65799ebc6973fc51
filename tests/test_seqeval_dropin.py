"""The `evaluate` metric as a drop-in for `evaluate.load("seqeval")`.

Two independent sources: the examples published with evaluate's seqeval metric (its
docstring and its card, huggingface/evaluate metrics/seqeval/seqeval.py and README.md:
inputs and printed outputs copied here), and the installed ``seqeval`` package, called
the way evaluate's seqeval metric calls it (``classification_report`` + ``accuracy_score``),
on random corpora for every combination of seqeval's arguments.
"""

from __future__ import annotations

import random
import warnings
from typing import Any

import pytest
from conftest import require

evaluate = require("evaluate")
require("seqeval")

import iescore.metric_card as card
import seqeval.scheme
from seqeval.metrics import accuracy_score, classification_report

import iescore

SEQEVAL_KEYS = ("overall_precision", "overall_recall", "overall_f1", "overall_accuracy")


@pytest.fixture(scope="module")
def metric():
    return evaluate.load(card.PATH)


def seqeval_view(out: dict[str, Any]) -> dict[str, Any]:
    """The keys evaluate's seqeval metric returns, in its order (labels first)."""
    return {k: v for k, v in out.items() if isinstance(v, dict) or k in SEQEVAL_KEYS}


# --- the published examples ----------------------------------------------------------------

def test_docstring_example(metric):
    # evaluate/metrics/seqeval/seqeval.py, _KWARGS_DESCRIPTION
    predictions = [["O", "O", "B-MISC", "I-MISC", "I-MISC", "I-MISC", "O"], ["B-PER", "I-PER", "O"]]
    references = [["O", "O", "O", "B-MISC", "I-MISC", "I-MISC", "O"], ["B-PER", "I-PER", "O"]]
    results = metric.compute(predictions=predictions, references=references)
    assert list(seqeval_view(results)) == ["MISC", "PER", "overall_precision", "overall_recall", "overall_f1",
                                           "overall_accuracy"]
    assert results["overall_f1"] == 0.5
    assert results["PER"]["f1"] == 1.0


def test_card_maximal_values(metric):
    predictions = [["O", "O", "B-MISC", "I-MISC", "I-MISC", "I-MISC", "O"], ["B-PER", "I-PER", "O"]]
    references = [["O", "O", "B-MISC", "I-MISC", "I-MISC", "I-MISC", "O"], ["B-PER", "I-PER", "O"]]
    printed = {"MISC": {"precision": 1.0, "recall": 1.0, "f1": 1.0, "number": 1},
               "PER": {"precision": 1.0, "recall": 1.0, "f1": 1.0, "number": 1},
               "overall_precision": 1.0, "overall_recall": 1.0, "overall_f1": 1.0, "overall_accuracy": 1.0}
    assert seqeval_view(metric.compute(predictions=predictions, references=references)) == printed


def test_card_partial_match(metric):
    predictions = [["O", "O", "B-MISC", "I-MISC", "I-MISC", "I-MISC", "O"], ["B-PER", "I-PER", "O"]]
    references = [["O", "O", "O", "B-MISC", "I-MISC", "I-MISC", "O"], ["B-PER", "I-PER", "O"]]
    printed = {"MISC": {"precision": 0.0, "recall": 0.0, "f1": 0.0, "number": 1},
               "PER": {"precision": 1.0, "recall": 1.0, "f1": 1.0, "number": 1},
               "overall_precision": 0.5, "overall_recall": 0.5, "overall_f1": 0.5, "overall_accuracy": 0.8}
    assert seqeval_view(metric.compute(predictions=predictions, references=references)) == printed


def test_card_minimal_values(metric):
    """The card's reference holds the tag '0' (zero), a typo for 'O' that seqeval reads as a chunk
    of type '_'. iescore refuses the tag; with the typo corrected every other printed value holds."""
    predictions = [["O", "B-MISC", "I-MISC"], ["B-PER", "I-PER", "O"]]
    references = [["B-MISC", "O", "O"], ["I-PER", "0", "I-PER"]]
    printed = {"MISC": {"precision": 0.0, "recall": 0.0, "f1": 0.0, "number": 1},
               "PER": {"precision": 0.0, "recall": 0.0, "f1": 0.0, "number": 2},
               "_": {"precision": 0.0, "recall": 0.0, "f1": 0.0, "number": 1},
               "overall_precision": 0.0, "overall_recall": 0.0, "overall_f1": 0.0, "overall_accuracy": 0.0}
    with pytest.raises(iescore.InputError, match="'0'"):
        metric.compute(predictions=predictions, references=references)
    fixed = [["B-MISC", "O", "O"], ["I-PER", "O", "I-PER"]]
    got = seqeval_view(metric.compute(predictions=predictions, references=fixed))
    want = {k: v for k, v in printed.items() if k != "_"}
    assert got == want
    # the corrected reference: PER[0,1) and PER[2,3) (two chunks, number 2), as the card printed
    assert got == seqeval_metric(fixed, predictions)


# --- the oracle: seqeval itself --------------------------------------------------------------

def seqeval_metric(references, predictions, *, suffix=False, scheme=None, mode=None, zero_division="warn"):
    """What evaluate's seqeval metric computes (its _compute, with the installed seqeval)."""
    sch = getattr(seqeval.scheme, scheme) if scheme is not None else None
    report = classification_report(y_true=references, y_pred=predictions, suffix=suffix, output_dict=True,
                                   scheme=sch, mode=mode, zero_division=zero_division)
    report.pop("macro avg")
    report.pop("weighted avg")
    overall = report.pop("micro avg")
    out: dict[str, Any] = {
        label: {"precision": float(s["precision"]), "recall": float(s["recall"]), "f1": float(s["f1-score"]),
                "number": int(s["support"])}
        for label, s in report.items()
    }
    out["overall_precision"] = float(overall["precision"])
    out["overall_recall"] = float(overall["recall"])
    out["overall_f1"] = float(overall["f1-score"])
    out["overall_accuracy"] = float(accuracy_score(y_true=references, y_pred=predictions))
    return out


LABELS = ("PER", "LOC", "ORG")


def random_tags(rng: random.Random, letters: str, n_docs: int = 8) -> tuple[list[list[str]], list[list[str]]]:
    """Random tags over ``letters`` (ill-formed sequences included). ORG appears in the prediction
    only and LOC is rare, so some precisions and recalls are undefined."""
    def tag(side: str) -> str:
        if rng.random() < 0.35:
            return "O"
        label = rng.choice(LABELS if side == "pred" else ("PER", "PER", "PER", "LOC"))
        return f"{rng.choice(letters)}-{label}"

    refs, preds = [], []
    for _ in range(n_docs):
        n = rng.randint(0, 7)
        ref = [tag("ref") for _ in range(n)]
        refs.append(ref)
        preds.append([t if rng.random() < 0.5 else tag("pred") for t in ref])
    return refs, preds


def well_formed(rng: random.Random, scheme: str, n_docs: int = 8) -> list[list[str]]:
    """Tags that are well formed under IOB1 or IOE1: random chunks, written by the scheme's
    definition (IOB1: I- inside, B- on the first token of a chunk that follows a chunk of the same
    label; IOE1: I- inside, E- on the last token of a chunk followed by a chunk of the same label)."""
    docs = []
    for _ in range(n_docs):
        chunks, i, n = [], 0, rng.randint(0, 9)
        while i < n:
            if rng.random() < 0.4:
                i += 1
                continue
            j = min(n, i + rng.randint(1, 3))
            chunks.append((rng.choice(("PER", "LOC")), i, j))
            i = j
        tags = ["O"] * n
        for k, (label, s, e) in enumerate(chunks):
            for t in range(s, e):
                tags[t] = f"I-{label}"
            after_same = k > 0 and chunks[k - 1][2] == s and chunks[k - 1][0] == label
            before_same = k + 1 < len(chunks) and chunks[k + 1][1] == e and chunks[k + 1][0] == label
            if scheme == "IOB1" and after_same:
                tags[s] = f"B-{label}"
            if scheme == "IOE1" and before_same:
                tags[e - 1] = f"E-{label}"
        docs.append(tags)
    return docs


def suffixed(docs: list[list[str]]) -> list[list[str]]:
    return [[t if t == "O" else f"{t[2:]}-{t[0]}" for t in doc] for doc in docs]


def has_end_begin(docs: list[list[str]]) -> bool:
    return any(a[:2] == "E-" and b[:2] == "B-" and a[2:] == b[2:] for d in docs for a, b in zip(d, d[1:]))


# (mode, scheme, tag letters); None letters = well-formed IOB1/IOE1 corpora
CASES = [
    (None, None, "BI"), (None, "IOB1", "BI"), (None, "IOB2", "BI"),
    (None, None, "IE"), (None, "IOE1", "IE"), (None, "IOE2", "IE"),
    (None, None, "BIES"), (None, "IOBES", "BIES"),  # corpora without E-X B-X (see the test below)
    ("strict", "IOB2", "BI"), ("strict", "IOE2", "IE"), ("strict", "IOBES", "BIES"), ("strict", "BILOU", "BILU"),
    ("strict", None, "BI"), ("strict", None, "IE"), ("strict", None, "BIES"), ("strict", None, "BILU"),
    ("strict", "IOB1", None),  # seqeval's strict IOE1 misreads well-formed input (see below)
]


@pytest.mark.parametrize("zero_division", ["warn", 0, 1])
@pytest.mark.parametrize("suffix", [False, True])
@pytest.mark.parametrize("mode,scheme,letters", CASES, ids=lambda x: str(x))
def test_equals_seqeval(metric, mode, scheme, letters, suffix, zero_division):
    rng = random.Random(f"{mode}{scheme}{letters}{suffix}{zero_division}")
    kwargs = dict(mode=mode, scheme=scheme, zero_division=zero_division, suffix=suffix)
    done = 0
    while done < 4:
        if letters is None:
            refs, preds = well_formed(rng, scheme), well_formed(rng, scheme)
            preds = [p[: len(r)] + ["O"] * (len(r) - len(p)) for r, p in zip(refs, preds)]
        else:
            refs, preds = random_tags(rng, letters)
        if mode is None and has_end_begin(refs + preds):
            continue
        if not any(t != "O" for d in refs for t in d):
            continue  # seqeval's strict mode cannot detect a scheme from no chunks
        done += 1
        if suffix:
            refs, preds = suffixed(refs), suffixed(preds)
        with warnings.catch_warnings(record=True) as theirs:
            warnings.simplefilter("always")
            try:
                want = seqeval_metric(refs, preds, **kwargs)
            except ValueError as exc:  # seqeval detects no scheme from some prefix sets, e.g. {O, S}
                assert mode == "strict" and scheme is None and "not supported" in str(exc)
                continue
        with warnings.catch_warnings(record=True) as ours:
            warnings.simplefilter("always")
            got = metric.compute(predictions=preds, references=refs, **kwargs)
        assert flat(seqeval_view(got)) == pytest.approx(flat(want), rel=1e-12, abs=1e-12), (refs, preds)
        assert list(seqeval_view(got)) == list(want)  # the same labels, in the same order
        if zero_division == "warn" and named(theirs, "UndefinedMetricWarning"):
            assert named(ours, "UndefinedMetricWarning")
        if zero_division != "warn":
            assert not named(ours, "UndefinedMetricWarning")


def flat(d: dict[str, Any]) -> dict[str, float]:
    out = {}
    for k, v in d.items():
        out.update({f"{k}.{m}": x for m, x in v.items()} if isinstance(v, dict) else {k: v})
    return out


def named(record: list, name: str) -> bool:
    """Whether a warning of class ``name`` was recorded (the metric script's classes live in the
    module evaluate builds from it, so they are compared by name)."""
    return any(type(w.message).__name__ == name and issubclass(w.category, UserWarning) for w in record)


# --- where iescore departs from seqeval, by hand ----------------------------------------------

def test_end_begin_in_default_mode_warns_and_follows_conlleval(metric):
    tags = [["B-PER", "E-PER", "B-PER", "E-PER"]]
    with pytest.warns(UserWarning, match="document 0, position 2") as record:
        out = metric.compute(predictions=tags, references=tags)
    assert named(record, "SeqevalDifferenceWarning")
    # conlleval.pl: E-PER then B-PER neither ends nor starts a chunk, so one chunk PER[0,4)
    assert out["PER"]["number"] == 1
    # seqeval's default mode ends a chunk after every E-: two chunks
    assert seqeval_metric(tags, tags)["PER"]["number"] == 2
    # seqeval's strict mode gives IOBES's meaning, and so does iescore's
    strict = metric.compute(predictions=tags, references=tags, mode="strict", scheme="IOBES")
    assert strict["PER"]["number"] == 2 == seqeval_metric(tags, tags, mode="strict", scheme="IOBES")["PER"]["number"]


def test_strict_iob1_follows_the_scheme_where_seqeval_does_not(metric):
    # IOB1: B- only begins a chunk that follows a chunk of the same label, so "B-PER I-PER" at
    # a sentence start is ill-formed and strict decoding drops it: no reference chunk.
    # seqeval's IOB1 start patterns let the I- after that B- start a chunk PER[1,2).
    refs, preds = [["B-PER", "I-PER"]], [["O", "I-PER"]]
    out = metric.compute(predictions=preds, references=refs, mode="strict", scheme="IOB1", zero_division=0)
    assert out["PER"] == {"precision": 0.0, "recall": 0.0, "f1": 0.0, "number": 0}  # TP 0, FP 1, FN 0
    assert seqeval_metric(refs, preds, mode="strict", scheme="IOB1", zero_division=0)["PER"]["number"] == 1


def test_strict_ioe1_follows_the_scheme_where_seqeval_does_not(metric):
    # IOE1: E- ends a chunk only when the next chunk has the same label, so "E-PER I-PER" is
    # well formed: PER[0,1) then PER[1,2). seqeval's strict IOE1 finds only PER[1,2).
    tags = [["E-PER", "I-PER"]]
    out = metric.compute(predictions=tags, references=tags, mode="strict", scheme="IOE1")
    assert out["PER"] == {"precision": 1.0, "recall": 1.0, "f1": 1.0, "number": 2}
    assert seqeval_metric(tags, tags, mode="strict", scheme="IOE1")["PER"]["number"] == 1


def test_labels_without_chunks_are_not_listed(metric):
    # strict IOB2 drops the ill-formed I-ORG: ORG has no chunk on either side, so (as in seqeval)
    # no ORG entry; PER: TP 1, FP 0, FN 0
    out = metric.compute(predictions=[["B-PER", "I-ORG"]], references=[["B-PER", "O"]], mode="strict",
                         scheme="IOB2")
    assert [k for k in out if isinstance(out[k], dict)] == ["PER"]


def test_suffix_tags_are_read_in_prefix_form(metric):
    out = metric.compute(predictions=[["PER-B", "PER-I", "O", "LOC-B"]], references=[["PER-B", "PER-I", "O", "O"]],
                         suffix=True, zero_division=0)
    # PER[0,2) found; LOC[3,4) spurious: P = 1/2, R = 1/1
    assert (out["overall_precision"], out["overall_recall"], out["PER"]["number"]) == (0.5, 1.0, 1)
    with pytest.raises(iescore.InputError, match=r"document 0, position 1: tag 'B-PER'"):
        metric.compute(predictions=[["O", "B-PER"]], references=[["O", "B-PER"]], suffix=True)


def test_zero_division_warns_names_the_values_and_gives_zero(metric):
    with pytest.warns(UserWarning, match=r"LOC\.recall") as record:
        out = metric.compute(predictions=[["B-PER", "B-LOC"]], references=[["B-PER", "O"]])
    assert named(record, "UndefinedMetricWarning")
    assert out["LOC"]["recall"] == 0.0  # 0/0 (no LOC in the reference)
    assert metric.compute(predictions=[["B-PER", "B-LOC"]], references=[["B-PER", "O"]], zero_division=1)["LOC"][
        "recall"] == 1.0


@pytest.mark.parametrize("kwargs,message", [
    (dict(sample_weight=[1.0]), "seqeval accepts sample_weight but never uses it"),
    (dict(zero_division=0.5), r"valid: 'warn', 0 or 1"),
    (dict(mode="lenient"), r"valid: None, 'strict', 'match-all', 'match-best' or 'one-per-string'"),
    (dict(mode="strict", repair="conlleval"), "cannot be combined with repair='conlleval'"),
])
def test_refused_arguments_say_why(metric, kwargs, message):
    with pytest.raises(iescore.ConfigError, match=message):
        metric.compute(predictions=[["B-PER"]], references=[["B-PER"]], **kwargs)


def test_sample_weight_really_is_ignored_by_seqeval():
    refs, preds = [["B-PER", "I-PER", "O", "B-LOC"], ["B-LOC"]], [["B-PER", "O", "O", "B-LOC"], ["O"]]
    for mode, scheme in ((None, None), ("strict", seqeval.scheme.IOB2)):
        plain = classification_report(refs, preds, output_dict=True, mode=mode, scheme=scheme)
        weighted = classification_report(refs, preds, output_dict=True, mode=mode, scheme=scheme,
                                          sample_weight=[5.0, 0.1])
        assert plain == weighted


def test_iescore_modes_keep_their_names(metric):
    # iescore's one-per-string mode compares strings: the two "Ann" references are one answer
    out = metric.compute(predictions=[["B-PER", "O", "B-PER"]], references=[["B-PER", "O", "B-PER"]],
                         tokens=[["Ann", "and", "Ann"]], mode="one-per-string")
    assert out["PER"]["number"] == 1
    assert "mode:one-per-string" in out["signature"]


def test_strict_without_a_scheme_detects_it_as_seqeval_does(metric):
    # reference prefixes {B, E}: IOBES, as seqeval's auto_detect says; "B-PER E-PER" is one chunk
    tags = [["B-PER", "E-PER", "O"]]
    out = metric.compute(predictions=tags, references=tags, mode="strict")
    assert "scheme:IOBES" in out["signature"] and out["PER"]["number"] == 1
    # no prefix at all (only O): seqeval raises "This scheme is not supported"; so does iescore, saying why
    with pytest.raises(iescore.ConfigError, match="from which seqeval detects no scheme; pass scheme="):
        metric.compute(predictions=[["O"]], references=[["O"]], mode="strict")
    with pytest.raises(ValueError, match="not supported"):
        seqeval_metric([["O"]], [["O"]], mode="strict")
