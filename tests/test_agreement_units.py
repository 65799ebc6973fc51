"""Agreement's t-units are the same whichever annotation file comes first (SPEC §13, §6):
the documents and tokens of CoNLL files come from all the files together."""

from __future__ import annotations

import itertools
import json
import os

import pytest
from sklearn.metrics import cohen_kappa_score

from iescore.cli import main

# Two annotators whose files mark different document boundaries: A has -DOCSTART- on line 1
# (B holds a plain O there), B has it on line 6 (A holds a token "x O" there).
A = "-DOCSTART- O\n\nAl B-PER\nBo I-PER\n\nx O\n\nCy B-LOC\nDi O\n\nEd B-PER\n"
B = "O\n\nB-PER\nO\n\n-DOCSTART- O\n\nB-LOC\nB-ORG\n\nB-PER\n"
# Both boundaries count: line 6 holds no token; documents {Al Bo} and {Cy Di | Ed}; the
# tokens Al Bo Cy Di Ed, separators Al-Bo, Cy-Di, Di-Ed (8 t-units). Categories (0 none,
# 1 LOC, 2 ORG, 3 PER), tokens then separators:
UNITS_A = [3, 3, 1, 0, 3, 3, 0, 0]
UNITS_B = [3, 0, 1, 2, 3, 0, 0, 0]
# po = 5/8; pe = (3*4 + 1*1 + 4*2)/64 = 21/64; kappa = (40 - 21)/(64 - 21) = 19/43
KAPPA = 19 / 43
# one document per sentence: {Al Bo}, {Cy Di}, {Ed}: the separator Di-Ed is gone (7 t-units)
SENT_A = [3, 3, 1, 0, 3, 3, 0]
SENT_B = [3, 0, 1, 2, 3, 0, 0]


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def _agree(capsys, *argv):
    code = main(["agree", *argv, "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def test_hand_units_by_sklearn():
    assert cohen_kappa_score(UNITS_A, UNITS_B) == pytest.approx(KAPPA, abs=1e-15)


def test_swapping_two_files_gives_the_same_units_and_kappa(tmp_path, capsys):
    a, b = _write(tmp_path, "a.conll", A), _write(tmp_path, "b.conll", B)
    ab = _agree(capsys, a, b, "--names", "A,B")
    ba = _agree(capsys, b, a, "--names", "B,A")
    assert ab["t_units"] == ba["t_units"] == len(UNITS_A)
    assert ab["pairs"][0]["kappa"] == pytest.approx(KAPPA, abs=1e-12)
    assert ba["pairs"][0]["kappa"] == ab["pairs"][0]["kappa"]
    assert ba["fleiss_kappa"] == ab["fleiss_kappa"]
    # F1: A's chunks PER, LOC, PER; B's PER, LOC, ORG, PER; two agree: 2*2/(3+4) both ways
    assert ab["pairs"][0]["f1"] == ba["pairs"][0]["f1"] == pytest.approx(4 / 7)
    assert ab["pairs"][0]["f1_ab"] == ba["pairs"][0]["f1_ba"]
    assert "|docs:docstart|" in ab["signature"] and ab["signature"] == ba["signature"]


def test_sentence_documents_either_order(tmp_path, capsys):
    a, b = _write(tmp_path, "a.conll", A), _write(tmp_path, "b.conll", B)
    ab = _agree(capsys, a, b, "--documents", "sentence")
    ba = _agree(capsys, b, a, "--documents", "sentence")
    assert ab["t_units"] == ba["t_units"] == len(SENT_A)
    want = cohen_kappa_score(SENT_A, SENT_B)
    assert ab["pairs"][0]["kappa"] == pytest.approx(want, abs=1e-12)
    assert ba["pairs"][0]["kappa"] == ab["pairs"][0]["kappa"]
    assert "|docs:sentence|" in ab["signature"] and ab["signature"] == ba["signature"]


def test_three_annotators_every_order(tmp_path, capsys):
    # C marks a -X- boundary on line 4 (between Bo and... a boundary: no token there);
    # the boundary counts for every pair, so all orders give one set of units
    c_text = "O\n\nB-PER\n-X- O\n\nO\n\nB-LOC\nO\n\nB-PER\n"
    paths = {"A": _write(tmp_path, "a.conll", A), "B": _write(tmp_path, "b.conll", B),
             "C": _write(tmp_path, "c.conll", c_text)}
    seen = []
    for order in itertools.permutations("ABC"):
        r = _agree(capsys, *(paths[n] for n in order), "--names", ",".join(order))
        kappas = {frozenset((p["a"], p["b"])): p["kappa"] for p in r["pairs"]}
        seen.append((r["t_units"], r["fleiss_kappa"], kappas))
    assert all(s == seen[0] for s in seen)
    # tokens Al Cy Di Ed (line 4 is a boundary in C), separators Cy-Di, Di-Ed: 6 t-units
    assert seen[0][0] == 6
    # A vs B on these units: A (PER, LOC, O, PER | 0, 0), B (PER, LOC, ORG, PER | 0, 0)
    assert seen[0][2][frozenset("AB")] == pytest.approx(
        cohen_kappa_score([3, 1, 0, 3, 0, 0], [3, 1, 2, 3, 0, 0]), abs=1e-12)


def test_a_docstart_line_over_a_tagged_token_is_an_error_either_order(tmp_path, capsys):
    a = _write(tmp_path, "a.conll", "Al B-PER\nBo O\n")
    b = _write(tmp_path, "b.conll", "-DOCSTART- O\nO\n")
    for argv in ([a, b], [b, a]):
        assert main(["agree", *argv]) == 2
        err = capsys.readouterr().err
        assert err == (f"iescore: error: {a}:1: a -DOCSTART- line must be tagged O, "
                       f"got gold 'O' and prediction 'B-PER'\n")


def test_conll2003_gold_and_system_either_order(data, capsys):
    gold = os.path.join(data, "conll2003-eng", "eng.testb")
    system = os.path.join(data, "conll2003-shared-task-outputs", "results", "florian", "eng.testb")
    with open(gold, encoding="utf-8") as f:
        lines = [ln.split() for ln in f]
    tokens = sum(1 for x in lines if x and x[0] != "-DOCSTART-")
    docs = sum(1 for x in lines if x and x[0] == "-DOCSTART-")
    assert (tokens, docs) == (46435, 231)
    gs = _agree(capsys, gold, system)
    sg = _agree(capsys, system, gold)
    assert gs["t_units"] == sg["t_units"] == 2 * tokens - docs  # N tokens, N - 1 separators per document
    assert sg["pairs"][0]["kappa"] == gs["pairs"][0]["kappa"]
    assert sg["fleiss_kappa"] == gs["fleiss_kappa"]
    assert sg["signature"] == gs["signature"]
