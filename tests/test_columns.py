"""CoNLL layouts: the token and tag columns chosen by number, and comment lines (``#``
before a sentence, as in CoNLL-U files); counts by hand, the same file with its columns
moved, and seqscore's ``--allow-comment-lines --token-index --label-index``."""

from __future__ import annotations

import json
import re

import pytest
from conftest import require
from seqscore_helpers import phrase_counts, run_seqscore

from iescore import Scorer
from iescore.cli import main
from iescore.errors import ConfigError, InputError
from iescore.io.conll import Columns, read_conll
from iescore.io.conll_stream import iter_conll

# CoNLL-U-like: id, token, POS, gold, prediction, misc; comments before each sentence
CONLLU = """# newdoc
# sent_id = 1
# text = John Smith lives in Paris
1 John PROPN B-PER B-PER _
2 Smith PROPN I-PER I-PER _
3 lives VERB O O _
4 in ADP O O _
5 Paris PROPN B-LOC B-ORG _

# sent_id = 2
1 # SYM O O _
2 Bob PROPN B-PER B-PER _
3 # SYM O B-MISC _
"""
# gold: PER(John Smith) LOC(Paris) | PER(Bob); predicted: PER, ORG | PER, MISC(#): tp 2, fp 2, fn 1
COLS = Columns(token=2, gold=4, pred=-2, comments=True)


def _counts(report):
    return report.overall.tp, report.overall.fp, report.overall.fn


def test_conllu_by_hand(tmp_path):
    path = tmp_path / "x.conllu"
    path.write_text(CONLLU, encoding="utf-8")
    batch = read_conll(str(path), columns=COLS)
    # the '#' tokens inside sentence 2 are tokens (comments come before a sentence only)
    assert batch.tokens == ["John", "Smith", "lives", "in", "Paris", "#", "Bob", "#"]
    assert batch.notes == {"comment lines": 4}
    s = Scorer()
    s.add_batch(batch)
    r = s.report()
    assert _counts(r) == (2, 2, 1)
    assert r.repairs["adapter"] == {"comment lines": 4}
    assert r.token_counts.sum(0).tolist()[:2] == [8, 6]  # Paris and the last '#' differ
    for batch_tokens in (1, 3, 1000):  # the streamed reader reads the same
        got = list(iter_conll(str(path), columns=COLS, batch_tokens=batch_tokens))
        assert [t for b in got for t in b.tokens] == batch.tokens
        assert sum(b.notes.get("comment lines", 0) for b in got) == 4


def test_cli_score_and_report(tmp_path, capsys, monkeypatch):
    import iescore.io.conll_stream as cs

    path = tmp_path / "x.conllu"
    path.write_text(CONLLU, encoding="utf-8")
    monkeypatch.setattr(cs, "BATCH_TOKENS", 2)
    opts = ["--token-column", "2", "--gold-column", "4", "--pred-column", "-2", "--comment-lines", "--json"]
    assert main(["score", str(path), *opts]) == 0
    d = json.loads(capsys.readouterr().out)
    assert (d["overall"]["tp"], d["overall"]["fp"], d["overall"]["fn"]) == (2, 2, 1)
    assert d["repairs"]["adapter"] == {"comment lines": 4}
    assert main(["report", str(path), "--html", str(tmp_path / "r.html"), *opts]) == 0
    assert json.loads(capsys.readouterr().out)["overall"]["tp"] == 2
    assert "Smith" in (tmp_path / "r.html").read_text(encoding="utf-8")  # the tokens of column 2


def test_errors_name_the_file_line_and_columns(tmp_path, capsys):
    path = tmp_path / "x.conllu"
    path.write_text(CONLLU, encoding="utf-8")
    # without --comment-lines a comment is a line like any other: here of another column count
    with pytest.raises(InputError, match=r"x.conllu:1: 2 columns, no gold column 4 .*'# newdoc'; .*pass --comment-lines"):
        read_conll(str(path), columns=Columns(token=2, gold=4, pred=5))
    with pytest.raises(InputError, match=r"x.conllu:2: 4 columns where earlier lines have 2: .*pass --comment-lines"):
        read_conll(str(path))
    with pytest.raises(InputError, match=r"x.conllu:4: 6 columns, no gold column 9 \(--gold-column 9\)"):
        read_conll(str(path), columns=Columns(gold=9, comments=True))
    assert main(["score", str(path), "--pred-column", "-7", "--comment-lines"]) == 2
    assert "x.conllu:4: 6 columns, no pred column -7" in capsys.readouterr().err
    with pytest.raises(ConfigError, match="column number from 1"):
        Columns(gold=0)
    # two files: a gold comment line against a tag of the prediction file
    gold, pred = tmp_path / "g", tmp_path / "p"
    gold.write_text("# c\na B-X\n", encoding="utf-8")
    pred.write_text("B-X\nB-X\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"p:1: expected a blank line"):
        read_conll(str(gold), str(pred), columns=Columns(comments=True))
    with pytest.raises(InputError, match=r"p:1: expected a blank line"):
        list(iter_conll(str(gold), str(pred), columns=Columns(comments=True)))


def test_default_reading_is_unchanged(tmp_path):
    path = tmp_path / "x.conll"
    path.write_text("# O O\na B-X O\n", encoding="utf-8")  # '#' is a token by default
    assert read_conll(str(path)).tokens == ["#", "a"]
    assert read_conll(str(path), columns=Columns(comments=True)).tokens == ["a"]


def test_moved_columns_give_the_same_report(data, tmp_path):
    gold = data / "conll2003-eng" / "eng.testb"
    pred = data / "conll2003-shared-task-outputs" / "results" / "florian" / "eng.testb"
    moved = []
    for g, p in zip(gold.read_text(encoding="utf-8").split("\n"), pred.read_text(encoding="utf-8").split("\n")):
        f = g.split()
        # prediction, gold, token, POS: another order, and a comment before each sentence
        moved.append(f"{p.split()[-1]} {f[-1]} {f[0]} {f[1]}" if f else "\n# a comment")
    path = tmp_path / "moved.conll"
    path.write_text("\n".join(moved) + "\n", encoding="utf-8")
    cols = Columns(token=3, gold=2, pred=1, comments=True)
    a, b = Scorer(), Scorer()
    a.add_batch(read_conll(str(gold), str(pred)))
    b.add_batch(read_conll(str(path), columns=cols))
    ra, rb = a.report(), b.report()
    assert ra.to_dict()["per_label"] == rb.to_dict()["per_label"]
    assert ra.token_counts.sum(0).tolist() == rb.token_counts.sum(0).tolist()
    assert rb.repairs["adapter"]["comment lines"] == sum(1 for x in moved if x.endswith("# a comment"))


ROW = re.compile(r"^\|\s*(\S+)\s*\|.*\|\s*(\d+)\s*\|\s*(\d+)\s*\|\s*(\d+)\s*\|$")


def test_equal_to_seqscore_with_comments_and_indices(data, tmp_path):
    require("seqscore")
    gold_path = data / "conll2003-eng" / "eng.testb"
    pred_path = data / "conll2003-shared-task-outputs" / "results" / "florian" / "eng.testb"
    gold, pred = [], []
    for g, p in zip(gold_path.read_text(encoding="utf-8").split("\n"), pred_path.read_text(encoding="utf-8").split("\n")):
        f = g.split()
        if f and f[0] == "-DOCSTART-":  # (no chunk there; seqscore would read it in the tag's column)
            continue
        # the tag first, then the token; a comment line before each sentence
        gold.append(f"{f[-1]} {f[0]}" if f else "\n# sent")
        pred.append(f"{p.split()[-1]} {f[0]}" if f else "\n# sent")
    (tmp_path / "g.txt").write_text("\n".join(gold) + "\n", encoding="utf-8")
    (tmp_path / "p.txt").write_text("\n".join(pred) + "\n", encoding="utf-8")
    out = run_seqscore("score", "--labels", "IOB", "--repair-method", "conlleval", "--allow-comment-lines",
                       "--token-index", "1", "--label-index", "0", "--reference", str(tmp_path / "g.txt"),
                       str(tmp_path / "p.txt"))
    theirs = {m.group(1): tuple(map(int, m.groups()[1:])) for m in map(ROW.match, out.splitlines()) if m}
    s = Scorer(scheme="IOB1")
    s.add_batch(read_conll(str(tmp_path / "g.txt"), str(tmp_path / "p.txt"),
                           columns=Columns(token=2, gold=1, pred=1, comments=True)))
    ours = phrase_counts(s.report().to_dict())
    assert ours == theirs


def test_toolbox_columns_and_comments(tmp_path, capsys):
    path = tmp_path / "x.conllu"
    path.write_text(CONLLU, encoding="utf-8")
    opts = ["--token-column", "2", "--gold-column", "4", "--pred-column", "-2", "--comment-lines"]
    assert main(["validate", str(path), "--scheme", "IOB2", *opts]) == 0
    assert "8 tokens, 2 sentences, 2 documents, 4 comment lines skipped" in capsys.readouterr().out
    assert main(["summarize", str(path), "--labels", "pred", "--json", "--strings", *opts]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["mentions"] == {"MISC": 1, "ORG": 1, "PER": 2} and d["comment_lines"] == 4
    assert d["strings"]["MISC"] == {"#": 1}  # a '#' token inside a sentence
    out = tmp_path / "o.conllu"
    assert main(["convert", str(path), "--from", "IOB2", "--to", "IOBES", "--output", str(out), *opts]) == 0
    # every byte but the tags kept: the comments and the other columns
    want = (CONLLU.replace("I-PER I-PER", "E-PER E-PER").replace("B-LOC B-ORG", "S-LOC S-ORG")
            .replace("O B-MISC", "O S-MISC").replace("Bob PROPN B-PER B-PER", "Bob PROPN S-PER S-PER"))
    assert out.read_text(encoding="utf-8") == want
    assert main(["validate", str(path), "--scheme", "IOB2"]) == 2
    assert "x.conllu:2: 4 columns where earlier lines have 2" in capsys.readouterr().err
