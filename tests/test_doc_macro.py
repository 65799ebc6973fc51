"""Document-level P/R/F1 and their document-macro average, computed by hand."""

from __future__ import annotations

import math

import pytest

import iescore
from iescore import Document, Span
from iescore.errors import ConfigError

TOKENS = ["a", "b", "c"]


def _report(**kw):
    ref = [Document(id="d1", tokens=TOKENS, spans=[Span("PER", 0, 1), Span("LOC", 2, 3)]),
           Document(id="d2", tokens=TOKENS, spans=[Span("PER", 0, 1)]),
           Document(id="d3", tokens=TOKENS, spans=[])]
    pred = [Document(id="d1", tokens=TOKENS, spans=[Span("PER", 0, 1), Span("ORG", 2, 3)]),
            Document(id="d2", tokens=TOKENS, spans=[Span("PER", 0, 1)]),
            Document(id="d3", tokens=TOKENS, spans=[Span("ORG", 1, 2)])]
    return iescore.score(reference=ref, prediction=pred, **kw)


def test_per_document_measures_by_hand() -> None:
    # d1: TP 1 (PER), FP 1 (ORG), FN 1 (LOC); d2: TP 1; d3: FP 1, no answer (recall undefined)
    assert _report().per_document_measures() == {
        "d1": {"tp": 1, "fp": 1, "fn": 1, "precision": 0.5, "recall": 0.5, "f1": 0.5},
        "d2": {"tp": 1, "fp": 0, "fn": 0, "precision": 1.0, "recall": 1.0, "f1": 1.0},
        "d3": {"tp": 0, "fp": 1, "fn": 0, "precision": 0.0, "recall": None, "f1": 0.0},
    }


def test_doc_macro_by_hand() -> None:
    m = _report().to_dict()["doc_macro"]
    # precision and F1: 0.5, 1, 0 -> mean 0.5, sample sd sqrt((0 + 0.25 + 0.25) / 2) = 0.5
    for k in ("precision", "f1"):
        assert m[k] == {"mean": 0.5, "sd": pytest.approx(0.5, rel=1e-15), "documents": 3, "left_out": 0}
    # recall: 0.5 and 1 (d3 left out) -> mean 0.75, sd sqrt(0.0625 + 0.0625) = sqrt(0.125)
    assert m["recall"] == {"mean": 0.75, "sd": pytest.approx(math.sqrt(0.125), rel=1e-15), "documents": 2,
                           "left_out": 1}


def test_one_defined_document_has_no_sd_and_an_empty_one_is_left_out() -> None:
    ref = [Document(id="x", tokens=TOKENS, spans=[Span("PER", 0, 2)]), Document(id="y", tokens=TOKENS, spans=[])]
    pred = [Document(id="x", tokens=TOKENS, spans=[Span("PER", 0, 1)]), Document(id="y", tokens=TOKENS, spans=[])]
    m = iescore.score(reference=ref, prediction=pred).to_dict()["doc_macro"]
    # x: TP 0, FP 1, FN 1 -> P = R = F1 = 0; y: nothing, every measure undefined
    assert m["f1"] == {"mean": 0.0, "sd": None, "documents": 1, "left_out": 1}
    assert m["recall"] == {"mean": 0.0, "sd": None, "documents": 1, "left_out": 1}


def test_a_report_of_totals_averages_its_documents_sums_or_has_none() -> None:
    """Kept totals carry the documents' sums (then the numbers of the full report) or
    none (then ``doc_macro`` is None); the per-document values need the documents."""
    ref, pred = [["B-PER", "O"], ["B-LOC"]], [["B-PER", "O"], ["O"]]
    s = iescore.Scorer(totals_only=True)
    s.add_tags(reference=ref, prediction=pred)
    r = s.report()
    # document 0: P = R = F1 = 1; document 1: TP 0, FN 1 -> precision undefined, R = F1 = 0
    full = iescore.score_tags(reference=ref, prediction=pred).to_dict()["doc_macro"]
    assert full["precision"] == {"mean": 1.0, "sd": None, "documents": 1, "left_out": 1}
    assert full["f1"] == {"mean": 0.5, "sd": pytest.approx(math.sqrt(0.5), rel=1e-15), "documents": 2, "left_out": 0}
    kept = getattr(r.totals, "doc_sums", None)
    assert r.to_dict()["doc_macro"] == (None if kept is None else full)
    with pytest.raises(ConfigError, match="per-document measures"):
        r.per_document_measures()


def test_sums_of_shards_give_the_numbers_of_the_whole() -> None:
    """Exact sums: any split of the documents, in any order, gives the same floats; the
    values equal statistics' mean and stdev of the per-document values."""
    import random
    import statistics

    import numpy as np

    from iescore.docmacro import DocSums

    rng = random.Random(7)
    tp, fp, fn = ([rng.randint(0, 4) for _ in range(60)] for _ in range(3))
    whole = DocSums.of(np.array(tp), np.array(fp), np.array(fn))
    a = DocSums.of(np.array(tp[40:]), np.array(fp[40:]), np.array(fn[40:]))
    b = DocSums.of(np.array(tp[:40]), np.array(fp[:40]), np.array(fn[:40]))
    assert a.plus(b) == whole and DocSums.load(whole.dump()) == whole
    prec = [t / (t + f) for t, f in zip(tp, fp) if t + f]
    got = whole.averages()["precision"]
    assert got["documents"] == len(prec) and got["left_out"] == 60 - len(prec)
    assert got["mean"] == pytest.approx(statistics.fmean(prec), rel=1e-15)
    assert got["sd"] == pytest.approx(statistics.stdev(prec), rel=1e-13)


def test_document_rows() -> None:
    from iescore.render.flat import document_rows

    rows = document_rows(_report())
    assert rows[0] == ["doc", "tp", "fp", "fn", "precision", "recall", "f1"]
    assert rows[3] == ["d3", 0, 1, 0, 0.0, "", 0.0]
