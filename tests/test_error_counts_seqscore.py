"""Error counts against seqscore's (`seqscore score --error-counts`, an independent CoNLL
scorer) on the 16 CoNLL-2003 shared-task outputs against the gold eng.testb: the same
count for every (error, label, string), under conlleval's repair of IOB1."""

from __future__ import annotations

import pytest
from conftest import require
from seqscore_helpers import run_seqscore, token_and_tag_files
from test_conlleval_official import TEAMS

from iescore import Scorer
from iescore.io.conll import read_conll
from iescore.render.errorcounts import error_counts


def seqscore_errors(gold, pred) -> dict[tuple[str, str, str], int]:
    """seqscore's error counts, {(FP or FN, type, tokens joined by a space): count}, from
    its tab-separated table."""
    out = run_seqscore("score", "--labels", "IOB", "--repair-method", "conlleval", "--error-counts",
                       "--score-format", "delim", "--quiet", "--reference", str(gold), str(pred))
    lines = out.rstrip("\n").split("\n")
    assert lines[0] == "Count\tError\tType\tTokens"
    out = {}
    for line in lines[1:]:
        count, error, label, text = line.split("\t")
        assert (error, label, text) not in out
        out[error, label, text] = int(count)
    return out


@pytest.mark.parametrize("team", TEAMS)
def test_error_counts_equal_seqscores(data, team, tmp_path):
    require("seqscore")
    gold, pred, pred_path = token_and_tag_files(data, team, tmp_path)
    theirs = seqscore_errors(gold, pred)

    s = Scorer(scheme="IOB1", repair="conlleval")
    s.add_batch(read_conll(str(data / "conll2003-eng" / "eng.testb"), str(pred_path)))
    r = s.report()
    rows = error_counts(r)
    ours = {(row["error"], row["label"], row["text"]): row["count"] for row in rows}
    assert len(ours) == len(rows)  # one row per (error, label, string)
    assert ours == theirs
    # every FP and FN counted once, nothing else
    o = r.to_dict()["overall"]
    assert sum(n for (e, _, _), n in theirs.items() if e == "FP") == o["fp"]
    assert sum(n for (e, _, _), n in theirs.items() if e == "FN") == o["fn"]
    # ranked: count descending, then FP before FN, label, text
    keys = [(-row["count"], ("FP", "FN").index(row["error"]), row["label"], row["text"]) for row in rows]
    assert keys == sorted(keys)
    if team == "florian":  # the first rows seqscore prints (its ties broken by the string, then FP first)
        assert [tuple(row.values()) for row in rows[:3]] == [
            (15, "FP", "LOC", "Santa Fe"), (15, "FN", "ORG", "Santa Fe"), (12, "FP", "MISC", "Czech")]
