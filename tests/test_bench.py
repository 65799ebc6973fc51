"""The benchmarks stay runnable: a --quick run checks that iescore's string and integer
paths and seqeval agree on exact micro F1 (it exits otherwise) and writes its table; a
--quick run of bench/adversarial.py checks its tools agree and its counts against hand
computations. No timing is asserted here (speed is measured by the benchmarks, not by tests)."""

from __future__ import annotations

import json

import pytest
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


def test_quick_adversarial_benchmark_runs_and_counts_by_hand(tmp_path):
    """bench/adversarial.py --quick: every child process reports, the exact-match tools agree
    (the run exits otherwise) and the counts are those computed by hand below."""
    require("nervaluate")
    import adversarial

    # seqeval is left out here (importing it takes seconds in every child); run.py's test has it
    tools = "iescore_full,iescore_overlap,iescore_early,iescore_loose,iescore_wide,iescore_tie,iescore_ties,iescore_excess,iescore_dense,iescore_short,iescore_long,iescore_prf,nervaluate,conlleval_standin,iescore_cli"
    tools += ",iescore_calls,iescore_calls_auto,iescore_calls_docs,iescore_calls_templates,iescore_templates_one_call,iescore_one_call"
    assert adversarial.main(["--quick", "--out", str(tmp_path), "--cases", "chain,nested,crossing,templates,cli,calls",
                             "--tools", tools, "--tmp", str(tmp_path)]) == 0
    res = json.loads((tmp_path / "adversarial.json").read_text())

    def result(case, tool, size):
        run = res["cases"][case]["tools"][tool]["runs"][str(size)]
        assert run["status"] == "ok" and run["peak_rss"] >= run["rss_before"] > 0
        return run["result"]

    # chain of 200 tokens: gold [2k, 2k+2) for k < 100; prediction [2k+1, 2k+3), the last
    # one cut to [199, 200): 100 predictions, none equal to an answer.
    full = result("chain", "iescore_full", 200)
    assert (full["tp"], full["gold"], full["pred"], full["f1"]) == (0, 100, 100, 0.0)
    # a short call is timed three times (each run gave the same counts), its median kept
    times = res["cases"]["chain"]["tools"]["iescore_full"]["runs"]["200"]["all_seconds"]
    assert len(times) == 3 and res["cases"]["chain"]["tools"]["iescore_full"]["runs"]["200"]["seconds"] == sorted(times)[1]
    # every prediction overlaps answer k by one token: aligned, not correct -> 100 substitutions
    assert full["slot_errors"] == {"C": 0, "S": 100, "D": 0, "I": 0}
    assert result("chain", "nervaluate", 200)["f1"] == 0.0
    assert result("chain", "conlleval_standin", 200)["gold"] == 100
    # O(1,1): against answer k, prediction k has el = 0, er = 1 and ml = 1, mr = 0 (the cut
    # last one: ml = 1): all within (1, 1), so pairing k with k matches all 100 -> F1 = 1
    over = result("chain", "iescore_overlap", 200)
    assert (over["tp"], over["gold"], over["pred"], over["f1"]) == (100, 100, 100, 1.0)
    assert over["slot_errors"] == {"C": 100, "S": 0, "D": 0, "I": 0}

    # nested, 300 tokens: answers [3k, 3k+3), k < 100; predictions [3k, 3k+2) (nested: ml = 0,
    # mr = 1, matches under O(1,1)) and [3k+2, 3k+4) (ml = 2 against answer k, mr = 2 against
    # answer k+1: matches neither). TP = 100, FP = 100, FN = 0: P = 1/2, R = 1, F1 = 2/3.
    over = result("nested", "iescore_overlap", 300)
    assert (over["tp"], over["gold"], over["pred"]) == (100, 100, 200)
    assert abs(over["f1"] - 2 / 3) < 1e-12
    assert over["slot_errors"] == {"C": 100, "S": 0, "D": 0, "I": 100}
    # plus an answer and a prediction over the whole document: they match each other exactly
    # (no short span matches a long one: 298 tokens missing or extra), so TP = 101, C = 101
    long = result("nested", "iescore_long", 300)
    assert (long["tp"], long["gold"], long["pred"]) == (101, 101, 201)
    assert long["slot_errors"] == {"C": 101, "S": 0, "D": 0, "I": 100}
    # exact: no prediction equals an answer; nervaluate's strict counts agree (checked by the run)
    full = result("nested", "iescore_full", 300)
    assert (full["tp"], full["gold"], full["pred"]) == (0, 100, 200)
    assert result("nested", "nervaluate", 300)["pred"] == 200

    # crossing, 10 answers [k, k+3) and predictions [k+1, k+4), k < 10: prediction k equals
    # answer k+1 for k <= 8, so exact gives TP = 9, FP = 1 (prediction [10, 13)), FN = 1
    # (answer [0, 3)), and these two overlap nothing unaligned: C = 9, D = 1, I = 1.
    full = result("crossing", "iescore_full", 10)
    assert (full["tp"], full["gold"], full["pred"]) == (9, 10, 10)
    assert full["slot_errors"] == {"C": 9, "S": 0, "D": 1, "I": 1}
    # every pairing of 10 is found, TP = 10, F1 = 1, C = 10:
    # - O(1,1), one-to-one: prediction k against answer k has er = 1, ml = 1: every pairing
    #   k-k is allowed, and it is the only matching of all 10 (within the rule prediction 9
    #   matches only answer 9, answer 0 only prediction 0, and so on inwards);
    # - early, the mirror image (answers [k+1, k+4), predictions [k, k+3)): answer k against
    #   prediction k has er = ml = 1, answer 9 matches only prediction 9, and so on inwards;
    # - loose, O(inf,inf): any overlap is allowed; the pairing k-k matches all 10;
    # - wide, the same with spans of 12 tokens: again the pairing k-k.
    for tool in ("iescore_overlap", "iescore_early", "iescore_loose", "iescore_wide"):
        got = result("crossing", tool, 10)
        assert (got["tp"], got["gold"], got["pred"], got["f1"]) == (10, 10, 10, 1.0), tool
        assert got["slot_errors"] == {"C": 10, "S": 0, "D": 0, "I": 0}, tool

    # one slot of 10 fillers a side with a 2x2 tie: no prediction equals an answer (TP = 0);
    # every answer aligns with a prediction (the slot is complete): 10 substitutions
    tie = result("templates", "iescore_tie", 10)
    assert (tie["tp"], tie["gold"], tie["pred"], tie["f1"]) == (0, 10, 10, 0.0)
    assert tie["slot_errors"] == {"C": 0, "S": 10, "D": 0, "I": 0}
    # one slot of 10 a side: answers "g0 a", "g0 b", "r2", "r3", "g1 a", "g1 b", "r6", "r7",
    # "g2 a", "g2 b" and predictions likewise with c, d and p: three 2x2 ties, nothing equal
    # (TP = 0); every answer aligns (the slot is complete, 10 a side): 10 substitutions
    ties = result("templates", "iescore_ties", 10)
    assert (ties["tp"], ties["gold"], ties["pred"], ties["f1"]) == (0, 10, 10, 0.0)
    assert ties["slot_errors"] == {"C": 0, "S": 10, "D": 0, "I": 0}
    # one slot of 10 answers "Dr s0", "Dr s1", "Dr s2", "s3", "s4", "Dr s5", .. (Dr when
    # k % 5 < 3) and 5 predictions "Dr s0", "Dr s2", .., "Dr s8": prediction 2k equals answer
    # 2k for 2k in {0, 2, 6} (TP = 3, F1 = 2*3/15 = 0.4, C = 3); "Dr s4" and "Dr s8" share s4,
    # s8 with the answers lacking "Dr" (S = 2); 5 answers left over (D = 5)
    excess = result("templates", "iescore_excess", 10)
    assert (excess["tp"], excess["gold"], excess["pred"]) == (3, 10, 5)
    assert excess["f1"] == pytest.approx(0.4)
    assert excess["slot_errors"] == {"C": 3, "S": 2, "D": 5, "I": 0}
    # one slot of 10 whose fillers all hold "Dr" but answer 9 ("Prof s9 x9"): predictions 0, 2,
    # .., 8 equal their answers (TP = 5, F1 = 0.5, C = 5); the odd ones ("Dr s{k}") align
    # with the other answers, sharing 2 tokens with answer k (k < 9) and 1 with answer 9:
    # S = 5, none left over
    dense = result("templates", "iescore_dense", 10)
    assert (dense["tp"], dense["gold"], dense["pred"], dense["f1"]) == (5, 10, 10, 0.5)
    assert dense["slot_errors"] == {"C": 5, "S": 5, "D": 0, "I": 0}
    # one slot of 10 answers ("Prof s0 x0", then "Dr s{k} x{k}") and 9 predictions (k < 9, as
    # above): answers 2, 4, 6, 8 equal their predictions (TP = 4, F1 = 2*4/(10+9) = 8/19,
    # C = 4); answer 0 aligns with prediction 0 (sharing s0 and x0, 2 tokens; prediction 0
    # with answer 9 would share only "Dr"), the odd ones with their own: S = 5; answer 9 is
    # left over: D = 1
    short = result("templates", "iescore_short", 10)
    assert (short["tp"], short["gold"], short["pred"]) == (4, 10, 9)
    assert short["f1"] == pytest.approx(8 / 19)
    assert short["slot_errors"] == {"C": 4, "S": 5, "D": 1, "I": 0}
    # templates, 10 fillers per slot, 2 slots: the 5 even fillers of a slot are exact, the 5 odd
    # ones a prefix (one token missing). Exact: TP = 10, FP = FN = 10, F1 = 0.5, and the odd
    # pairs share tokens, so they align as 10 substitutions. O(1,1): a prefix with one token
    # missing matches (m = 1), so TP = 20 and F1 = 1.
    full = result("templates", "iescore_full", 10)
    assert (full["tp"], full["gold"], full["pred"], full["f1"]) == (10, 20, 20, 0.5)
    assert full["slot_errors"] == {"C": 10, "S": 10, "D": 0, "I": 0}
    over = result("templates", "iescore_overlap", 10)
    assert (over["tp"], over["f1"]) == (20, 1.0)

    # the CLI and the streaming stand-in of conlleval.pl read the same file (agreement checked
    # by the run); the generated files are deleted
    cli = res["cases"]["cli"]
    assert set(cli["tools"]["iescore_cli"]["runs"]) == {str(s) for s in cli["sizes"]}
    assert not list(tmp_path.glob("*.conll"))

    # 100 sentences added a call each (tags with a scheme and under "auto", Documents) count what one call and
    # conlleval.pl's chunk rules (the stand-in) count
    peer = result("calls", "conlleval_standin", 100)
    for tool in ("iescore_calls", "iescore_calls_auto", "iescore_calls_docs", "iescore_one_call"):
        got = result("calls", tool, 100)
        assert (got["tp"], got["gold"], got["pred"]) == (peer["tp"], peer["gold"], peer["pred"]) and peer["gold"] > 0
    # as Templates (OBD counts, not comparable with the chunks'), a call each equals one call
    assert result("calls", "iescore_calls_templates", 100) == result("calls", "iescore_templates_one_call", 100)

    table = (tmp_path / "adversarial.md").read_text()
    assert "### `chain`" in table and "### Targets" in table and "b 20→200" in table


def test_adversarial_run_stops_when_tools_disagree():
    import adversarial

    tools = adversarial.make_cases(quick=True)["chain"].tools
    ok = {"status": "ok"}
    agree = {"iescore_full": {**ok, "result": {"f1": 0.5, "tp": 3}}, "seqeval_f1": {**ok, "result": {"f1": 0.5}},
             "iescore_overlap": {**ok, "result": {"f1": 1.0, "tp": 6}}}  # another model: not compared
    adversarial.check_agreement("chain", 20, agree, tools)
    with pytest.raises(SystemExit, match="seqeval_f1 gives f1=0.4"):
        adversarial.check_agreement("chain", 20, {**agree, "seqeval_f1": {**ok, "result": {"f1": 0.4}}}, tools)


def test_scaling_exponent_and_its_bound():
    import adversarial

    # t ~ n^2: 1 s at n = 10, 100 s at n = 100 -> b = log(100) / log(10) = 2
    e = adversarial.exponent(10, {"status": "ok", "seconds": 1.0}, 100, {"status": "ok", "seconds": 100.0})
    assert e == {"b": 2.0, "bound": "="}
    # timed out after 10 s: b > log(10 / 1) / log(10) = 1
    e = adversarial.exponent(10, {"status": "ok", "seconds": 1.0}, 100, {"status": "timed out", "limit_s": 10.0})
    assert e["bound"] == ">" and abs(e["b"] - 1.0) < 1e-12


def test_adversarial_inputs_doctests():
    import doctest

    import adversarial

    assert doctest.testmod(adversarial).failed == 0


def test_adversarial_merge_replaces_only_the_rerun_tools():
    import adversarial

    def case(tools, load):
        return {"sizes": [10, 100], "load_before": [load], "load_after": [load],
                "tools": {t: {"runs": {"10": {"seconds": s}}} for t, s in tools.items()}}

    old = {"when": "day 1", "cases": {"chain": case({"mine": 1.0, "peer": 5.0}, 2.0), "cli": case({"x": 3.0}, 2.0)}}
    new = {"when": "day 2", "cases": {"chain": {**case({"mine": 0.5}, 0.1), "sizes": [100, 1000]}}}
    out = adversarial.merge(old, new)
    chain = out["cases"]["chain"]
    assert chain["tools"]["mine"]["runs"]["10"]["seconds"] == 0.5  # rerun: replaced
    assert chain["tools"]["peer"]["runs"]["10"]["seconds"] == 5.0  # not rerun: kept
    assert chain["sizes"] == [10, 100, 1000]
    assert out["cases"]["cli"]["tools"]["x"]["runs"]["10"]["seconds"] == 3.0  # a case not rerun: untouched
    assert chain["notes"] == ["`mine` rerun on day 2 (load average 0.10 before, 0.10 after); "
                              "the other rows are from the run of day 1"]
    assert out["when"] == "day 1"
    # a third run of the same tool: the note of the second goes, its rows being replaced
    out = adversarial.merge(out, {"when": "day 3", "cases": {"chain": case({"mine": 0.4}, 0.2)}})
    assert out["cases"]["chain"]["notes"] == ["`mine` rerun on day 3 (load average 0.20 before, 0.20 after); "
                                              "the other rows are from the run of day 1"]
    # every tool of the case rerun: the new run is the case, its load in its header
    out = adversarial.merge(out, {"when": "day 4", "cases": {"chain": case({"mine": 0.3, "peer": 4.0}, 0.3)}})
    chain = out["cases"]["chain"]
    assert chain["notes"] == ["rerun on day 4, the other cases are from the run of day 1"]
    assert chain["load_before"] == [0.3] and chain["tools"]["peer"]["runs"]["10"]["seconds"] == 4.0
    # a tool rerun after that: its case's other rows are from day 4, not from the whole run's day 1
    out = adversarial.merge(out, {"when": "day 5", "cases": {"chain": case({"mine": 0.2}, 0.4)}})
    assert out["cases"]["chain"]["notes"] == [
        "rerun on day 4, the other cases are from the run of day 1",
        "`mine` rerun on day 5 (load average 0.40 before, 0.40 after); the other rows are from the run of day 4"]
    # a tool the case did not have is run, not rerun, and added as a row
    out = adversarial.merge(out, {"when": "day 6", "cases": {"chain": case({"perl": 9.0}, 0.5)}})
    assert out["cases"]["chain"]["notes"][-1] == (
        "`perl` run on day 6 (load average 0.50 before, 0.50 after); the other rows are from the run of day 4")
    assert list(out["cases"]["chain"]["tools"]) == ["mine", "peer", "perl"]


def test_performance_page_tables_are_the_runs_tables():
    # the performance page's adversarial tables are bench/out/adversarial.md's, row for row
    # (copied by `bench/adversarial.py --docs docs/performance.md`): a table copied by hand
    # once mixed rows of other cases into the labels table
    from pathlib import Path

    import adversarial

    root = Path(__file__).resolve().parent.parent
    readme = (root / "docs" / "performance.md").read_text(encoding="utf-8")
    md = (root / "bench" / "out" / "adversarial.md").read_text()
    assert adversarial.sync_page(readme, md) == readme
    # and the cli case's lines under its table, the files' sizes and the throughputs
    lines = [x for x in md.split("\n") if x.startswith(("Files: ", "Throughput and absolute peak RSS"))]
    assert len(lines) == 2 and all(x in readme.split("\n") for x in lines)


def test_performance_page_table_is_the_runs_results():
    # the performance page's main table, typed from bench/out/table.md, holds the numbers
    # of bench/out/results.json: throughput at 500k and 5M, and each tool's time over
    # iescore's P/R/F path at 500k, 5M and on CoNLL-03 testb
    import json
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    readme = (root / "docs" / "performance.md").read_text(encoding="utf-8")
    results = json.loads((root / "bench" / "out" / "results.json").read_text())
    head = "| tool | 500k Mtok/s | 500k × iescore | 5M Mtok/s | 5M × iescore | CoNLL-03 testb × iescore |"
    rows = readme[readme.index(head):].split("\n")[2:11]
    tools = ["iescore_prf", "iescore_full", "iescore_full_overlap", "iescore_ids", "seqeval_f1",
             "seqeval_strict", "seqeval_report", "nervaluate", "spacy"]
    for tool, row in zip(tools, rows, strict=True):
        cells = [c.strip() for c in row.strip("|").split("|")][1:]
        want = []
        for size in ("500k", "5M", "conll03-testb"):
            r = results[size]
            med, base = r["median_s"][tool], r["median_s"]["iescore_prf"]
            if size != "conll03-testb":
                want.append(f"{r['tokens'] / med / 1e6:.2f}")
            want.append(f"{med / base:.1f}")
        assert cells == want, (tool, row)


def test_sync_page_replaces_each_table_by_its_cases():
    import adversarial

    md = "\n".join(["# run", "### `a`: one", "text", "| t | 1 |", "|---|---|", "| x | 2 |", "",
                    "### `b`: two", "| t |", "| y |", "### Targets", "| target |", "| met |", ""])
    readme = "\n".join(["# README", "| keep | me |", "## Adversarial inputs", "### `b`: two", "prose", "| t |",
                        "| OLD |", "| OLD2 |", "more prose", "### `a`: one", "| t | 1 |", "| OLD |", "",
                        "### Targets", "| target |", "| NOT |", "## Next", "| keep | too |"])
    assert adversarial.sync_page(readme, md).split("\n") == [
        "# README", "| keep | me |", "## Adversarial inputs", "### `b`: two", "prose", "| t |", "| y |",
        "more prose", "### `a`: one", "| t | 1 |", "|---|---|", "| x | 2 |", "", "### Targets",
        "| target |", "| met |", "## Next", "| keep | too |"]
    with pytest.raises(ValueError) as err:
        adversarial.sync_page(readme, md.replace("### `b`: two", "### `c`: two"))
    assert str(err.value) == "the page's tables ['Targets', 'a', 'b'] but adversarial.md tables ['Targets', 'a', 'c']"


@pytest.mark.parametrize("option", ["--docs", "--readme"])
def test_docs_option_copies_the_tables_into_the_page(tmp_path, option):
    import adversarial

    (tmp_path / "adversarial.md").write_text("\n".join(["### `a`: one", "| t |", "| new |", ""]))
    page = tmp_path / "performance.md"
    page.write_text("\n".join(["# Performance", "## Adversarial inputs", "### `a`: one", "| t |", "| old |", ""]))
    assert adversarial.main(["--out", str(tmp_path), option, str(page)]) == 0
    assert page.read_text().split("\n") == [
        "# Performance", "## Adversarial inputs", "### `a`: one", "| t |", "| new |", ""]


def test_quick_longline_case_reads_one_line_and_removes_its_files(tmp_path, monkeypatch):
    # a file of one line, a token of n x's and "B-PER B-PER": one token, one chunk, predicted
    # exactly (tp = gold = pred = 1) by iescore and the stand-in (their agreement is checked by
    # the run); the files, written to --tmp, are gone after
    import adversarial

    monkeypatch.setenv("IESCORE_BENCH_TMP", str(tmp_path))  # (main sets it for its children: put back after)
    assert adversarial.main(["--quick", "--out", str(tmp_path), "--cases", "longline",
                             "--tools", "iescore_cli,conlleval_standin", "--tmp", str(tmp_path)]) == 0
    case = json.loads((tmp_path / "adversarial.json").read_text())["cases"]["longline"]
    assert case["sizes"] == [200_000, 2_000_000]
    for tool in ("iescore_cli", "conlleval_standin"):
        for size in case["sizes"]:
            run = case["tools"][tool]["runs"][str(size)]
            got = run["result"]
            assert run["status"] == "ok" and (got["tp"], got["gold"], got["pred"]) == (1, 1, 1)
    assert not list(tmp_path.glob("*.conll"))
    with open(adversarial.long_line_file(1000)) as fh:
        assert fh.read() == "x" * 1000 + " B-PER B-PER\n"


def test_relations_benchmark_agrees_with_sets_of_tuples(tmp_path):
    """bench/relations.py on 300 documents: iescore's strict one-to-one relation counts equal
    a hand-rolled scorer's sets of (document, label, head, tail) tuples (the run exits 1
    otherwise), and the table has a row per tool."""
    import relations

    assert relations.main(["--docs", "300", "--rounds", "1", "--no-memory", "--out", str(tmp_path)]) == 0
    res = json.loads((tmp_path / "relations.json").read_text())
    assert res["gold"]["spans"] == res["gold"]["links"] == 3000
    tp, fp, fn = res["counts"]["handrolled_strict_relations"]
    assert tp + fn == res["gold"]["relations"] and tp + fp == res["predicted"]["relations"]
    assert res["counts"]["relations_strict_any"] == res["counts"]["relations_strict_1to1"]  # no duplicates
    assert (tmp_path / "relations.md").read_text().count("\n| `") == len(relations.TOOLS)
    # a hub entity: the head of every relation on both sides, each a true positive
    assert relations.hub(300).startswith("hub: one document, 300 relations a side sharing one head: ")


def test_performance_page_relations_table_is_the_runs_table():
    # the performance page's relations table is bench/out/relations.md's, line for line
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    page = (root / "docs" / "performance.md").read_text(encoding="utf-8").split("\n")
    table = [x for x in (root / "bench" / "out" / "relations.md").read_text().split("\n") if x.startswith("|")]
    assert len(table) == 8
    start = page.index(table[0])
    assert page[start : start + len(table)] == table
