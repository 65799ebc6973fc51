"""seqscore (an independent CoNLL scorer, a test oracle) run through its command line, the
two-column files it reads made from CoNLL-2003 files, and iescore's counts in its terms."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

_CLI = "import sys; from seqscore.scripts.seqscore import cli; sys.argv[0] = 'seqscore'; cli()"


def run_seqscore(*args: str) -> str:
    """seqscore's standard output for ``seqscore ARGS`` (a failure fails the test)."""
    run = subprocess.run([sys.executable, "-c", _CLI, *args], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    return run.stdout


def token_and_tag_files(data: Path, team: str, folder: Path) -> tuple[Path, Path, Path]:
    """The gold eng.testb and a team's output as seqscore reads them: a token and a tag per
    line on both sides (the gold's token beside each predicted tag); and the team's file."""
    gold_lines = (data / "conll2003-eng" / "eng.testb").read_text(encoding="utf-8").split("\n")
    pred_path = data / "conll2003-shared-task-outputs" / "results" / team / "eng.testb"
    pred_lines = pred_path.read_text(encoding="utf-8").split("\n")
    gold, pred = [], []
    for g, p in zip(gold_lines, pred_lines):
        fields = g.split()
        gold.append(f"{fields[0]} {fields[-1]}" if fields else "")
        pred.append(f"{fields[0]} {p.split()[-1]}" if fields else "")
    (folder / "gold.txt").write_text("\n".join(gold) + "\n", encoding="utf-8")
    (folder / "pred.txt").write_text("\n".join(pred) + "\n", encoding="utf-8")
    return folder / "gold.txt", folder / "pred.txt", pred_path


def phrase_counts(d: dict[str, Any]) -> dict[str, tuple[int, int, int]]:
    """A report dict's (reference, predicted, correct) per label and as ``ALL``, seqscore's columns."""
    ours = {label: (e["support"], e["predicted"], e["tp"]) for label, e in d["per_label"].items()}
    ours["ALL"] = (d["overall"]["support"], d["overall"]["predicted"], d["overall"]["tp"])
    return ours
