"""The extractor's cost attached to a report: Report.with_cost, its key in to_dict and
to_json, its lines in the text table; a report without one, and a merged one, has none."""

from __future__ import annotations

import json

import pytest

from iescore import ConfigError, Scorer, score_tags
from iescore.cost import Cost, Phase

COST = Cost((Phase("load", 1.25, 1.5, 300.0, 20.0), Phase("extract", 4.0, 4.25, 512.5, 300.0)), how="in-process")
REF = [["B-PER", "I-PER", "O", "B-LOC"]]
PRED = [["B-PER", "I-PER", "O", "O"]]


def test_cost_in_to_dict_and_json():
    r = score_tags(reference=REF, prediction=PRED)
    c = r.with_cost(COST)
    d = c.to_dict()
    assert d["cost"] == {
        "how": "in-process",
        "phases": [
            {"name": "load", "cpu_s": 1.25, "wall_s": 1.5, "peak_rss_mb": 300.0, "start_rss_mb": 20.0,
             "peak_scope": "phase"},
            {"name": "extract", "cpu_s": 4.0, "wall_s": 4.25, "peak_rss_mb": 512.5, "start_rss_mb": 300.0,
             "peak_scope": "phase"},
        ],
        "cpu_s": 5.25, "wall_s": 5.75, "peak_rss_mb": 512.5,
    }
    assert json.loads(c.to_json()) == d == json.loads(c.to_json(indent=2))
    # a cost changes no number and not the signature; the report it was taken from is unchanged
    assert {k: v for k, v in d.items() if k != "cost"} == r.to_dict()
    assert c.signature == r.signature and c.f1 == r.f1 == 2 / 3
    assert "cost" not in r.to_dict() and r.cost is None and c.cost is COST
    assert "cost" not in c.with_cost(None).to_dict()


def test_cost_in_the_text_table():
    r = score_tags(reference=REF, prediction=PRED)
    lines = r.with_cost(COST).format_table().splitlines()
    k = lines.index("extractor's cost:")
    assert lines[k + 1:] == [
        "phase         CPU s    wall s  start MB   peak MB",
        "load           1.25      1.50      20.0     300.0",
        "extract        4.00      4.25     300.0     512.5",
        "total          5.25      5.75         -     512.5",
        f"signature: {r.signature}",
    ]
    assert r.format_table().splitlines() == lines[:k] + lines[-1:]
    assert not any("cost" in line for line in r.format_table().splitlines())


def test_merged_shards_carry_no_cost():
    a, b = Scorer(), Scorer()
    a.add_tags(reference=REF, prediction=PRED)
    b.add_tags(reference=PRED, prediction=PRED, doc_ids=["b0"])
    merged = Scorer.from_state(a.to_state()).merge(Scorer.from_state(b.to_state()))
    assert merged.report().cost is None and "cost" not in merged.report().to_dict()
    from iescore.scoring.state import load_state

    totals = load_state(a.to_state(keep="counts")).merge(load_state(b.to_state(keep="counts")))
    assert totals.report().cost is None


def test_with_cost_refuses_another_type():
    r = score_tags(reference=REF, prediction=PRED)
    with pytest.raises(ConfigError, match=r"with_cost takes an iescore\.cost\.Cost or None; got dict"):
        r.with_cost(COST.to_dict())  # type: ignore[arg-type]
