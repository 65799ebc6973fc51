"""Repairs say where they happened: the document and token (and the file's line) of the first
few repaired or discarded chunks, in to_dict() and in the table."""

from __future__ import annotations

import json

import pytest

from iescore import Scorer, score_tags
from iescore.cli import main

# IOB2: "I-LOC" after "O" on line 4 starts a chunk without B- (ill-formed): conlleval's rule
# repairs it into a chunk, "discard" drops it. -DOCSTART- is not a token of the document, so
# "met" is token 1 of document in.conll#1.
TEXT = "-DOCSTART- O O\n\nAda B-PER B-PER\nmet O I-LOC\nBob B-PER B-PER\n"


@pytest.mark.parametrize("repair, kind", [("conlleval", "repaired"), ("discard", "discarded")])
def test_a_file_names_document_token_and_line(tmp_path, capsys, repair, kind):
    p = tmp_path / "in.conll"
    p.write_text(TEXT, encoding="utf-8")
    assert main(["score", str(p), "--scheme", "IOB2", "--repair", repair, "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["repairs"]["prediction"] == {kind: 1}
    assert d["repair_sites"] == {"prediction": [f"document 'in.conll#1', token 1 ({p}:4 (prediction))"]}
    assert main(["score", str(p), "--scheme", "IOB2", "--repair", repair]) == 0
    assert f"prediction: {kind} 1 (the first at document 'in.conll#1', token 1 ({p}:4 (prediction)))" \
        in capsys.readouterr().out.splitlines()


@pytest.mark.parametrize("detail", ["full", "prf"])  # prf decodes both sides at once (document-relative offsets)
def test_tags_in_memory(detail):
    # document 0: I-PER at token 0 (ill-formed start); document 1: I-LOC at token 1
    r = score_tags(reference=[["B-PER", "O"], ["O", "O", "B-LOC"]], prediction=[["I-PER", "O"], ["O", "I-LOC", "I-LOC"]],
                   scheme="IOB2", detail=detail)
    assert r.to_dict()["repair_sites"] == {
        "prediction": ["document '0' (prediction), token 0", "document '1' (prediction), token 1"]}


def test_the_first_five_over_batches():
    s = Scorer(scheme="IOB2")
    s.add_tags(reference=[["B-PER", "O"]], prediction=[["I-PER", "O"]])  # document 0
    s.add_tags(reference=[["O", "O", "B-LOC"]] * 6, prediction=[["O", "I-LOC", "I-LOC"]] * 6)  # documents 1..6
    d = s.report().to_dict()
    assert d["repairs"]["prediction"] == {"repaired": 7}
    assert d["repair_sites"]["prediction"] == ["document '0' (prediction), token 0"] + [
        f"document '{k}' (prediction), token 1" for k in range(1, 5)]
