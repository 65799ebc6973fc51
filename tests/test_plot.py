"""iescore.plot: what each figure draws, read back from the matplotlib objects."""

from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import require

matplotlib = require("matplotlib")
matplotlib.use("Agg")

from matplotlib.colors import to_hex

from iescore import plot, score_tags


def test_importing_iescore_plot_does_not_import_matplotlib():
    code = "import sys, iescore.plot; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_rank_bump_names_both_ends_and_colours_the_movers():
    # a: 1 -> 2, b: 2 -> 3 (1 place each), c: 3 -> 1 (2 places); movers=1 -> only c in colour
    ranks = {"F1": {"a": 1, "b": 2, "c": 3}, "SER": {"a": 2, "b": 3, "c": 1}}
    fig = plot.rank_bump(ranks, movers=1)
    ax = fig.axes[0]
    texts = [t.get_text() for t in ax.texts]
    assert texts == ["1 a", "a 2", "2 b", "b 3", "3 c", "c 1"]  # rank and name at both ends
    colours = {t.get_text(): to_hex(t.get_color()) for t in ax.texts}
    assert colours["3 c"] == colours["c 1"] == "#d62728" and colours["1 a"] == colours["2 b"] == to_hex("0.35")
    lines = ax.get_lines()
    assert [list(line.get_ydata()) for line in lines] == [[1, 2], [2, 3], [3, 1]]
    assert lines[2].get_linewidth() > lines[0].get_linewidth() == lines[1].get_linewidth()
    assert [t.get_text() for t in ax.get_xticklabels()] == ["F1", "SER"]
    assert "the 1 systems whose rank moves most" in fig.texts[0].get_text()
    with pytest.raises(Exception, match="ranks other systems"):
        plot.rank_bump({"F1": {"a": 1}, "SER": {"b": 1}})


def test_per_label_pr_points_and_legend():
    data = {
        "s1": {"LOC": {"precision": 0.9, "recall": 0.8}, "PER": {"precision": 0.7, "recall": 0.6}},
        "s2": {"LOC": {"precision": 0.85, "recall": 0.95}, "PER": {"precision": None, "recall": 0.0}},
    }
    fig = plot.per_label_pr(data)
    ax = fig.axes[0]
    offsets = [c.get_offsets().tolist() for c in ax.collections]
    # (recall, precision) per label; s2's PER is left out (precision undefined)
    assert offsets == [[[0.8, 0.9], [0.95, 0.85]], [[0.6, 0.7]]]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["LOC (2 systems)", "PER (1 systems)"]
    assert ax.get_xlabel() == "recall" and ax.get_ylabel() == "precision"


def test_confusion_heatmap_writes_every_count():
    # gold LOC, predicted PER on the same token: 1 in (LOC, PER); gold MISC unmatched: 1 in (MISC, none)
    r = score_tags(reference=[["B-LOC", "O", "B-MISC"]], prediction=[["B-PER", "O", "O"]])
    ax = plot.confusion_heatmap(r).axes[0]
    names = ["LOC", "MISC", "PER", "none"]
    assert [t.get_text() for t in ax.get_xticklabels()] == names
    assert [t.get_text() for t in ax.get_yticklabels()] == names
    cells = {(int(round(t.get_position()[1])), int(round(t.get_position()[0]))): t.get_text() for t in ax.texts}
    assert cells[(0, 2)] == "1" and cells[(1, 3)] == "1"
    assert sum(int(v) for v in cells.values()) == 2


def test_forest_rows_sorted_best_first_with_groups():
    c = {"measure": "f1", "level": 0.95, "resamples": 100, "systems": [
        {"name": "b", "f1": 0.80, "f1_ci": [0.75, 0.85], "group": 2},
        {"name": "a", "f1": 0.90, "f1_ci": [0.86, 0.93], "group": 1},
    ]}
    ax = plot.forest(c).axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["a", "b"]
    assert [t.get_text() for t in ax.texts] == ["G1", "G2"]
    assert [list(seg[:, 0]) for seg in ax.collections[0].get_segments()] == [[0.86, 0.93]]
    assert "95% interval (100 paired resamples)" in ax.get_xlabel()
