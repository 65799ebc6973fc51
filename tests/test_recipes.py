"""The recipes, run as a user runs them (``python -m recipes.<name>``), on the shared corpora."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

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


def test_conll2003_quick(data, tmp_path):
    require("spacy")
    require("datasets")
    out = tmp_path / "conll"
    res = run_recipe("conll2003", out, data, "--quick")
    systems = res["systems"]
    assert "this-recipe/spacy-ner" in systems
    for team in ("bender", "carrerasa", "carrerasb"):
        assert f"{100 * systems[f'shared-task/{team}']['values']['F1 exact (conlleval)']:.2f}" == official_fb1(data, team)
    corr = res["spearman"]
    assert all(abs(corr[m][m] - 1) < 1e-12 for m in corr)
    report = (out / "report.md").read_text()
    assert "## Ranking by TS-F1^M" in report and "## Spearman rank correlation" in report
    assert all(v is None or 1 <= v <= len(systems) for m in res["ranks"].values() for v in m.values())
    assert (out / "rank_shifts.png").stat().st_size > 10_000 and (out / "per_type_pr.png").stat().st_size > 10_000
    assert res["runtime_spacy"]["predict"]["cpu_s"] > 0


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
    assert res["runtime"]["predict"]["cpu_s"] > 0 and res["runtime"]["predict"]["max_rss_mb"] > 0
    assert (out / "slots_f1.png").is_file() and (out / "statuses.json").is_file()
