"""The recipes, run as a user runs them (``python -m recipes.<name>``), on the shared corpora."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import require

ROOT = Path(__file__).resolve().parents[1]


def run_recipe(name, out, data, *extra):
    env = dict(os.environ, IESCORE_DATA=str(data))
    proc = subprocess.run([sys.executable, "-m", f"recipes.{name}", "--out", str(out), *extra],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads((out / "results.json").read_text())


def official_fb1(data, team):
    text = (data / "conll2003-shared-task-outputs" / "results" / team / "conlleval.out").read_text()
    part = text[text.index("eng.testb"):]
    return re.search(r"FB1:\s+([\d.]+)", part).group(1)


@pytest.fixture(scope="module")
def conll_quick(data, tmp_path_factory):
    """The CoNLL-2003 recipe's quick run (once for the tests of this module): its folder and results."""
    require("spacy")
    require("datasets")
    out = tmp_path_factory.mktemp("conll")
    return out, run_recipe("conll2003", out, data, "--quick")


def test_conll2003_quick(data, conll_quick):
    out, res = conll_quick
    systems = res["systems"]
    assert "this-recipe/spacy-ner" in systems
    for team in ("bender", "carrerasa", "carrerasb"):
        assert f"{100 * systems[f'shared-task/{team}']['values']['F1 exact (conlleval)']:.2f}" == official_fb1(data, team)
    corr = res["spearman"]
    assert all(abs(corr[m][m] - 1) < 1e-12 for m in corr)
    report = (out / "report.md").read_text()
    assert "## Ranking by TS-F1^M" in report and "## Spearman rank correlation" in report
    assert all(v is None or 1 <= v <= len(systems) for m in res["ranks"].values() for v in m.values())
    # the SpanNER output has no TS value: it is left out of every ranking, and the other six
    # are ranked among themselves under every model (ranks 1..6 sum to 21 whatever the ties)
    assert [n for n in res["left_out_of_rankings"]] == ["neural/conll03_spanNER_generic_test_9157"]
    ranked = res["ranked_systems"]
    assert len(ranked) == len(systems) - 1 == 6
    for m, ranks in res["ranks"].items():
        assert ranks["neural/conll03_spanNER_generic_test_9157"] is None
        assert sum(ranks[n] for n in ranked) == 21
        assert res["rank_shifts"][m] == {n: ranks[n] - res["ranks"]["F1 exact (conlleval)"][n] for n in ranked}
    assert "neural/conll03_spanNER_generic_test_9157 (no TS-F1^M, T-F1^M value: " in report
    assert (out / "rank_shifts.png").stat().st_size > 10_000 and (out / "per_type_pr.png").stat().st_size > 10_000
    assert res["runtime_spacy"]["predict"]["cpu_s"] > 0


def test_conll2003_quick_significance(conll_quick):
    out, res = conll_quick
    sig, values = res["significance"], {n: r["values"] for n, r in res["systems"].items()}
    # quick mode: 3 shared-task outputs and 2 neural ones (read one document per sentence, regrouped
    # into eng.testb's 231 -DOCSTART- documents); the SpanNER output and the spaCy model scored on
    # 200 sentences do not share those documents and are left out, saying why
    assert set(res["significance_left_out"]) == {"neural/conll03_spanNER_generic_test_9157", "this-recipe/spacy-ner"}
    assert "200 test sentences" in res["significance_left_out"]["this-recipe/spacy-ner"]
    assert res["significance_unit"] == "the 231 -DOCSTART- documents of eng.testb"
    compared = set(values) - set(res["significance_left_out"])
    assert len(compared) == 5
    for model, measure in (("F1 exact (conlleval)", "f1"), ("TS-F1^M", "ts_f1_macro")):
        c = sig[model]
        assert (c["measure"], c["test"], c["resamples"], c["correction"]) == (measure, "ar", 1000, "holm")
        assert isinstance(c["seed"], int) and f"seed:{c['seed']}" in c["signature"]
        rows = {r["name"]: r for r in c["systems"]}
        assert set(rows) == compared
        # the baseline is the best system by the table's own value, and every value is the table's
        assert c["baseline"] == max(compared, key=lambda n: values[n][model])
        for n, r in rows.items():
            assert r[measure] == values[n][model]
            lo, hi = r[f"{measure}_ci"]
            assert lo <= r[measure] <= hi and lo < hi
        # the groups rebuilt by hand from the p-values (the definition in iescore.stats): best first,
        # a system joins the group of the group's first system unless their unadjusted p < alpha
        def p(a, b):
            return 1.0 if a == b else c["pairwise"].get(f"{a} vs {b}", c["pairwise"].get(f"{b} vs {a}"))

        group, leader = 0, None
        for n in sorted(rows, key=lambda n: -rows[n][measure]):
            if leader is None or p(n, leader) < c["alpha"]:
                group, leader = group + 1, n
            assert rows[n]["group"] == group, (model, n)
        # group 1 is the baseline's: exactly the systems its paired test does not separate from it
        base = c["baseline"]
        assert rows[base]["group"] == 1 and rows[base]["p_value"] is None
        assert {n for n in rows if rows[n]["group"] == 1} == {base} | {
            n for n in rows if n != base and rows[n]["p_value"] >= c["alpha"]}
        # Holm by hand over the 4 systems compared with the baseline: the i-th smallest p (i from 0)
        # times 4 - i, running maximum, at most 1
        others = sorted((n for n in rows if n != base), key=lambda n: rows[n]["p_value"])
        run = 0.0
        for i, n in enumerate(others):
            run = max(run, min(1.0, (4 - i) * rows[n]["p_value"]))
            assert abs(rows[n]["p_value_holm"] - run) < 1e-12
            assert rows[n]["significant"] == (run < c["alpha"])
    report = (out / "report.md").read_text()
    assert "## Which differences are real" in report and "231 -DOCSTART- documents" in report
    for model in sig:
        assert f"### {model} (5 systems)" in report
    assert (out / "significance.png").stat().st_size > 10_000


def test_conll2003_all_systems_exact_column_is_conlleval(data, tmp_path):
    require("datasets")
    res = run_recipe("conll2003", tmp_path / "full", data, "--no-spacy")
    systems = res["systems"]
    teams = [n.split("/")[1] for n in systems if n.startswith("shared-task/")]
    assert len(teams) == 16
    for team in teams:
        assert f"{100 * systems[f'shared-task/{team}']['values']['F1 exact (conlleval)']:.2f}" == official_fb1(data, team)
    # the neural outputs' conlleval F1 is in their file names (SOURCE.txt)
    for name, r in systems.items():
        m = re.search(r"_(\d{4})$", name)
        if name.startswith("neural/conll03_C") and m:
            assert f"{100 * r['values']['F1 exact (conlleval)']:.2f}" == f"{m.group(1)[:2]}.{m.group(1)[2:]}"
    assert len([n for n in systems if n.startswith("neural/")]) == 14
    # every output but the two SpanNER span files is compared on eng.testb's documents: 16 + 12
    for c in res["significance"].values():
        assert len(c["systems"]) == 28 and {r["group"] for r in c["systems"]} >= {1, 2}


def test_seminar_quick(data, tmp_path):
    require("spacy")
    out = tmp_path / "sem"
    res = run_recipe("seminar", out, data, "--quick")
    results = res["results"]
    assert len(results) == 2 * 3 * 3
    for key, r in results.items():
        se = r["slot_errors"]
        assert se["N"] == se["C"] + se["S"] + se["D"]
        st = r["statuses"]
        assert set(st["prediction"]) <= {"TP", "FP", "ignored"}
        if key.endswith("match-all") and key.startswith("AO"):
            assert set(st["reference"]) <= {"TP", "FN"}
    # every gold slot of the 20 quick-mode test announcements is counted
    from iescore.adapters.inline import read_seminar

    test = read_seminar(str(data / "cmu-seminar-announcements" / "test" / "pretagged"), tokenizer="spacy")[:20]
    gold = sum(v["support"] for v in results["AO|E|match-all"]["per_slot"].values())
    assert gold == sum(len(d.document.spans) for d in test) > 0
    for phase in ("train", "predict"):  # each measured in its own process
        m = res["runtime"][phase]
        assert m["cpu_s"] > 0 and m["rss_samples"] > 0
        assert 0 < m["start_rss_mb"] < m["peak_rss_mb"] and 0 < m["mean_rss_mb"] <= m["peak_rss_mb"]
    assert (out / "slots_f1.png").is_file() and (out / "statuses.json").is_file()


# --- the pieces the recipes are built from (fast; no corpora) -------------------------------

sys.path.insert(0, str(ROOT))  # the recipes are run from the checkout, not installed

from recipes.common import compare_rankings, run_phase, spearman


def test_rank_shifts_are_taken_among_the_systems_ranked_under_both_models():
    # Four systems; "b" has no TS value, so it is ranked under neither model.
    values = {
        "a": {"F": 0.90, "TS": 0.70},
        "b": {"F": 0.80, "TS": None},
        "c": {"F": 0.70, "TS": 0.90},
        "d": {"F": 0.60, "TS": 0.80},
    }
    c = compare_rankings(values, {"F": True, "TS": True}, "F")
    assert c.systems == ("a", "c", "d")
    assert c.left_out == {"b": ("TS",)}
    # By hand, among a, c, d: F ranks a=1 c=2 d=3 (b's F rank 2 is not counted);
    # TS ranks c=1 (0.9) d=2 (0.8) a=3 (0.7). Shifts TS - F: a +2, c -1, d -1.
    # (Against F ranks among all four, a=1 b=2 c=3 d=4, c and d would wrongly climb 2.)
    assert c.ranks["F"] == {"a": 1, "c": 2, "d": 3}
    assert c.ranks["TS"] == {"a": 3, "c": 1, "d": 2}
    assert c.shifts["TS"] == {"a": 2, "c": -1, "d": -1}
    assert c.shifts["F"] == {"a": 0, "c": 0, "d": 0}


def test_rank_comparison_with_an_error_rate_and_ties():
    # SER: lower is better. Values a=0.2, b=0.1, c=0.2 -> b=1, a and c share ranks 2 and 3: 2.5.
    # F: a=0.5, b=0.7, c=0.6 -> b=1, c=2, a=3. Shifts SER - F: a -0.5, b 0, c +0.5.
    values = {"a": {"F": 0.5, "SER": 0.2}, "b": {"F": 0.7, "SER": 0.1}, "c": {"F": 0.6, "SER": 0.2}}
    c = compare_rankings(values, {"F": True, "SER": False}, "F")
    assert c.left_out == {}
    assert c.ranks["SER"] == {"a": 2.5, "b": 1, "c": 2.5}
    assert c.shifts["SER"] == {"a": -0.5, "b": 0, "c": 0.5}


def test_spearman_by_hand():
    # ranks (1,2,3) and (3,1,2): d = -2, 1, 1; sum d^2 = 6; rho = 1 - 6*6 / (3*(9-1)) = -0.5
    assert abs(spearman([0.9, 0.7, 0.6], [0.7, 0.9, 0.8]) - (-0.5)) < 1e-12


def _idle_phase():
    time.sleep(0.5)  # long enough for a few RSS samples
    return "idle"


def _allocating_phase(mb):
    block = bytearray(mb * 2**20)
    for i in range(0, len(block), 4096):  # touch every page: untouched pages are not resident
        block[i] = 1
    time.sleep(0.5)
    return len(block)


def test_each_phase_reports_its_own_peak_and_mean_memory():
    big = bytearray(200 * 2**20)  # the parent's own memory must not show up in its children
    big[::4096] = b"\1" * len(big[::4096])
    idle, m_idle = run_phase(_idle_phase)
    n, m_alloc = run_phase(_allocating_phase, 50)
    assert (idle, n) == ("idle", 50 * 2**20)
    for m in (m_idle, m_alloc):
        assert set(m) == {"cpu_s", "wall_s", "start_rss_mb", "peak_rss_mb", "mean_rss_mb", "rss_samples"}
        assert m["rss_samples"] >= 1 and m["mean_rss_mb"] is not None
        assert 0 < m["start_rss_mb"] <= m["peak_rss_mb"] and 0 < m["mean_rss_mb"] <= m["peak_rss_mb"]
    # a fresh interpreter with numpy imported is well under the parent's 200 MB block
    assert m_idle["peak_rss_mb"] < 150
    # the 50 MB the phase holds are in its peak and (held for most of the call) in its mean
    assert m_alloc["peak_rss_mb"] >= m_idle["peak_rss_mb"] + 45
    assert m_alloc["mean_rss_mb"] >= m_idle["mean_rss_mb"] + 20
    del big


def test_a_failing_phase_raises_with_the_childs_traceback():
    import pytest

    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        run_phase(divmod, 1, 0)
