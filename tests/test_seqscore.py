"""seqscore (an independent CoNLL scorer) against iescore on the 16 CoNLL-2003 shared-task
outputs: the same phrase counts, overall and per type, under conlleval's repair of IOB1."""

from __future__ import annotations

import re

import pytest
from conftest import require
from seqscore_helpers import phrase_counts, run_seqscore, token_and_tag_files
from test_conlleval_official import TEAMS

from iescore import Scorer
from iescore.io.conll import read_conll

ROW = re.compile(r"^\|\s*(\S+)\s*\|\s*([\d.]+)\s*\|\s*([\d.]+)\s*\|\s*([\d.]+)\s*\|\s*(\d+)\s*\|\s*(\d+)\s*\|\s*(\d+)\s*\|$")


def seqscore_counts(gold, pred) -> dict[str, tuple[int, int, int]]:
    """seqscore's (reference, predicted, correct) per type and for ``ALL``, from its table."""
    out = run_seqscore("score", "--labels", "IOB", "--repair-method", "conlleval", "--reference", str(gold), str(pred))
    rows = [ROW.match(line) for line in out.splitlines()]
    return {m.group(1): (int(m.group(5)), int(m.group(6)), int(m.group(7))) for m in rows if m}


@pytest.mark.parametrize("team", TEAMS)
def test_seqscore_counts_what_iescore_counts(data, team, tmp_path):
    require("seqscore")
    # seqscore reads a token and a label per line on both sides: the gold's token beside each tag
    gold, pred, pred_path = token_and_tag_files(data, team, tmp_path)
    theirs = seqscore_counts(gold, pred)

    s = Scorer(scheme="IOB1", repair="conlleval")
    s.add_batch(read_conll(str(data / "conll2003-eng" / "eng.testb"), str(pred_path)))
    ours = phrase_counts(s.report().to_dict())
    assert theirs == ours
    assert set(theirs) == {"ALL", "LOC", "MISC", "ORG", "PER"}
