"""The benchmark stays runnable: a --quick run checks that iescore's string and integer
paths and seqeval agree on exact micro F1 (it exits otherwise) and writes its table.
No timing is asserted here (speed is measured by bench/run.py, not by tests)."""

from __future__ import annotations

import json

from conftest import require


def test_quick_benchmark_agrees_and_writes_its_table(tmp_path):
    require("seqeval")
    import run as bench

    assert bench.main(["--quick", "--out", str(tmp_path), "--tools", "iescore_prf,iescore_ids,iescore_full_overlap,seqeval_f1"]) == 0
    results = json.loads((tmp_path / "results.json").read_text())
    f1 = results["50k"]["f1"]
    assert 0.6 < f1 < 0.9  # 10% dropped, 10% shifted, 5% retyped, 5% spurious entities
    table = (tmp_path / "table.md").read_text()
    assert table.count("\n| `") == 4 and "`seqeval_f1`" in table
