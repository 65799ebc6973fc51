"""seqscore (an independent CoNLL scorer) against iescore on the 16 CoNLL-2003 shared-task
outputs: the same phrase counts, overall and per type, under conlleval's repair of IOB1."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from conftest import require
from test_conlleval_official import TEAMS

from iescore import Scorer
from iescore.io.conll import read_conll

ROW = re.compile(r"^\|\s*(\S+)\s*\|\s*([\d.]+)\s*\|\s*([\d.]+)\s*\|\s*([\d.]+)\s*\|\s*(\d+)\s*\|\s*(\d+)\s*\|\s*(\d+)\s*\|$")


def seqscore_counts(gold, pred) -> dict[str, tuple[int, int, int]]:
    """seqscore's (reference, predicted, correct) per type and for ``ALL``, from its table."""
    code = "import sys; from seqscore.scripts.seqscore import cli; sys.argv[0] = 'seqscore'; cli()"
    run = subprocess.run([sys.executable, "-c", code, "score", "--labels", "IOB", "--repair-method", "conlleval",
                          "--reference", str(gold), str(pred)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    rows = [ROW.match(line) for line in run.stdout.splitlines()]
    return {m.group(1): (int(m.group(5)), int(m.group(6)), int(m.group(7))) for m in rows if m}


@pytest.mark.parametrize("team", TEAMS)
def test_seqscore_counts_what_iescore_counts(data, team, tmp_path):
    require("seqscore")
    gold_lines = (data / "conll2003-eng" / "eng.testb").read_text(encoding="utf-8").split("\n")
    pred_path = data / "conll2003-shared-task-outputs" / "results" / team / "eng.testb"
    pred_lines = pred_path.read_text(encoding="utf-8").split("\n")
    # seqscore reads a token and a label per line on both sides: the gold's token beside each tag
    gold, pred = [], []
    for g, p in zip(gold_lines, pred_lines):
        fields = g.split()
        gold.append(f"{fields[0]} {fields[-1]}" if fields else "")
        pred.append(f"{fields[0]} {p.split()[-1]}" if fields else "")
    (tmp_path / "gold.txt").write_text("\n".join(gold) + "\n", encoding="utf-8")
    (tmp_path / "pred.txt").write_text("\n".join(pred) + "\n", encoding="utf-8")
    theirs = seqscore_counts(tmp_path / "gold.txt", tmp_path / "pred.txt")

    s = Scorer(scheme="IOB1", repair="conlleval")
    s.add_batch(read_conll(str(data / "conll2003-eng" / "eng.testb"), str(pred_path)))
    d = s.report().to_dict()
    ours = {label: (e["support"], e["predicted"], e["tp"]) for label, e in d["per_label"].items()}
    ours["ALL"] = (d["overall"]["support"], d["overall"]["predicted"], d["overall"]["tp"])
    assert theirs == ours
    assert set(theirs) == {"ALL", "LOC", "MISC", "ORG", "PER"}
