"""The benchmark's rules-by-share parts stay runnable: a --quick run of the IoU and cover
tools beside O(1,1), and the Seminar Announcements timing of sim(0.8) beside E, whose
counts must scale exactly with the copies of the corpus (the same templates under other
ids) and whose sim counts must find at least E's true positives. No timing is asserted."""

from __future__ import annotations

import json
import re

from conftest import require


def test_quick_rule_tools_run(tmp_path):
    import run as bench

    tools = "iescore_prf,iescore_full_overlap,iescore_full_iou,iescore_full_cover"
    assert bench.main(["--quick", "--out", str(tmp_path), "--tools", tools]) == 0
    table = (tmp_path / "table.md").read_text()
    assert table.count("\n| `") == 4 and "`iescore_full_iou`" in table and "`iescore_full_cover`" in table
    assert set(json.loads((tmp_path / "results.json").read_text())["50k"]["median_s"]) == set(tools.split(","))


def test_seminar_sim_counts(data):
    require("rapidfuzz")
    import run as bench

    rows = [line.split(" | ") for line in bench.seminar_sim(data, copies=2, rounds=1).splitlines()[2:]]
    got = {(int(r[0].strip("| ")), r[2], r[3]): tuple(map(int, re.findall(r"\d+", r[6]))) for r in rows}
    assert len(got) == 8
    one = {k[1:]: v for k, v in got.items() if k[0] == 486}
    two = {k[1:]: v for k, v in got.items() if k[0] == 972}
    assert {k: tuple(2 * x for x in v) for k, v in one.items()} == two
    for counting in ("any", "one-to-one"):
        assert one[("sim(0.8)", counting)][0] > one[("E", counting)][0]
        # every filler is a TP, FP or FN: the sides' fillers are the same under both rules
        assert sum(one[("E", counting)][:2]) == sum(one[("sim(0.8)", counting)][:2])
