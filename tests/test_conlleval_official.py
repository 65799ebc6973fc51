"""The 16 CoNLL-2003 shared-task outputs against their official conlleval.out.

Every number here is read from the official conlleval.out files shipped with the
outputs (an independent reference): token count, phrase counts, token accuracy,
and overall and per-type precision, recall and FB1 to the printed two decimals.
"""

from __future__ import annotations

import re

import pytest

from iescore import Scorer
from iescore.io.conll import read_conll

TEAMS = (
    "bender carrerasa carrerasb chieu curran demeulder florian hammerton hendrickx "
    "klein mayfield mccallum munro whitelaw wu zhang"
).split()

HEAD = re.compile(r"processed (\d+) tokens with (\d+) phrases; found: (\d+) phrases; correct: (\d+)\.")
ACC = re.compile(r"accuracy:\s+([\d.]+)%; precision:\s+([\d.]+)%; recall:\s+([\d.]+)%; FB1:\s+([\d.]+)")
TYPE = re.compile(r"\s*(\S+): precision:\s+([\d.]+)%; recall:\s+([\d.]+)%; FB1:\s+([\d.]+)")


def official(path, part):
    """Parse one section (eng.testa / eng.testb) of a conlleval.out file."""
    lines = path.read_text().splitlines()
    k = lines.index(part)
    head = HEAD.match(lines[k + 1]).groups()
    acc = ACC.search(lines[k + 2]).groups()
    types = {}
    for line in lines[k + 3 : k + 7]:
        m = TYPE.match(line)
        types[m.group(1)] = m.groups()[1:]
    return tuple(int(x) for x in head), acc, types


def pct(x):
    return "0.00" if x is None else f"{100 * x:.2f}"


def assert_official(r, counts, acc, types):
    """The report ``r`` prints conlleval.out's numbers: its counts, its four percentages
    and every type's three (as ``official`` reads them)."""
    d = r.to_dict()
    assert (d["tokens"], r.overall.N, r.overall.M, r.overall.tp) == counts
    got = (pct(d["token_accuracy"]), pct(d["overall"]["precision"]), pct(d["overall"]["recall"]), pct(d["overall"]["f1"]))
    assert got == acc
    for label, (p, rc, f) in types.items():
        e = d["per_label"][label]
        assert (pct(e["precision"]), pct(e["recall"]), pct(e["f1"])) == (p, rc, f), label


@pytest.mark.parametrize("part", ["eng.testa", "eng.testb"])
@pytest.mark.parametrize("team", TEAMS)
def test_team_reproduces_conlleval(data, team, part):
    out = data / "conll2003-shared-task-outputs" / "results" / team
    (tokens, phrases, found, correct), acc, types = official(out / "conlleval.out", part)
    batch = read_conll(str(data / "conll2003-eng" / part), str(out / part))
    scorer = Scorer()  # defaults: AO, exact, any-match, match-all, scheme auto, repair conlleval
    scorer.add_batch(batch)
    r = scorer.report()
    assert_official(r, (tokens, phrases, found, correct), acc, types)
    assert r.signature.startswith("iescore|setting:AO|rule:E|counting:any|mode:match-all|scheme:IOB1|repair:conlleval")


def test_iob2_teams_are_counted_as_repairs(data):
    """whitelaw answered in IOB2 against IOB1 gold: conlleval's rules repair every
    B- after O, and the report counts those repairs instead of hiding them."""
    out = data / "conll2003-shared-task-outputs" / "results" / "whitelaw"
    batch = read_conll(str(data / "conll2003-eng" / "eng.testb"), str(out / "eng.testb"))
    s = Scorer()
    s.add_batch(batch)
    r = s.report()
    assert r.repairs["reference"]["repaired"] == 0
    assert r.repairs["prediction"]["repaired"] > 1000
