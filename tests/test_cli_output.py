"""The command line's output options: --format table|json|csv|markdown (--json its alias),
--output FILE, --confusion, standard input, and help text for every option.

The file used: three one-token sentences, gold LOC / MISC / O, predicted PER / O / O.
By hand: LOC answer vs PER prediction on the same token -> aligned, wrong label (LOC row,
PER column of the confusion table); MISC answer unmatched -> missed (MISC row, none column).
Counts: LOC tp 0 fp 0 fn 1; MISC tp 0 fp 0 fn 1; PER tp 0 fp 1 fn 0; overall tp 0 fp 1 fn 2.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import sys
from pathlib import Path

import pytest

from iescore.cli import build_parser, main

TEXT = "Paris B-LOC B-PER\n\nis O O\n\nnice B-MISC O\n"
FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture()
def path(tmp_path):
    p = tmp_path / "in.conll"
    p.write_text(TEXT, encoding="utf-8")
    return p


def run(capsys, *argv, code=0):
    got = main(list(argv))
    out = capsys.readouterr()
    assert got == code, out.err
    return out


def test_csv(capsys, path):
    rows = list(csv.reader(io.StringIO(run(capsys, "score", str(path), "--format", "csv").out)))
    signature = json.loads(run(capsys, "score", str(path), "--json").out)["signature"]
    assert rows.pop(0) == [f"# signature: {signature}"]  # a comment line: pandas.read_csv(comment="#") skips it
    assert rows[0][:10] == ["label", "tp", "fp", "fn", "support", "predicted", "precision", "recall", "f1", "jaccard"]
    body = {r[0]: r[1:] for r in rows[1:]}
    # LOC: no prediction -> precision undefined (empty cell), recall 0/1; wrong label 1;
    # multi-slot: type S, extent C (same token), SER over both slots 1/2
    assert body["LOC"] == ["0", "0", "1", "1", "0", "", "0.0", "0.0", "0.0", "0", "1", "0", "0", "0", "0",
                           "0", "1", "0", "0", "1", "0", "0", "0", "0.5"]
    # MISC: missed: a deletion of both slots, SER 2/2
    assert body["MISC"] == ["0", "0", "1", "1", "0", "", "0.0", "0.0", "0.0", "0", "0", "0", "0", "1", "0",
                            "0", "0", "1", "0", "0", "0", "1", "0", "1.0"]
    # PER: one prediction, no answer -> recall undefined; the prediction is LOC's partner (SER: no answer)
    assert body["PER"] == ["0", "1", "0", "0", "1", "0.0", "", "0.0", "0.0", "0", "0", "0", "0", "0", "0",
                           "0", "0", "0", "0", "0", "0", "0", "0", ""]
    # overall multi-slot SER (1 + 0 + 2 * 1)/(2 * 2)
    assert body["overall"] == ["0", "1", "2", "2", "1", "0.0", "0.0", "0.0", "0.0", "0", "1", "0", "0", "1", "0",
                               "0", "1", "1", "0", "1", "0", "1", "0", "0.75"]


def test_confusion_in_the_table_csv_and_markdown(capsys, path):
    lines = run(capsys, "score", str(path), "--confusion").out.splitlines()
    k = lines.index("confusion (rows: reference, columns: prediction; none = missed or spurious):")
    assert [line.split() for line in lines[k + 1 : k + 6]] == [
        ["LOC", "MISC", "PER", "none"],
        ["LOC", "0", "0", "1", "0"],  # the wrong label
        ["MISC", "0", "0", "0", "1"],  # the missed answer
        ["PER", "0", "0", "0", "0"],
        ["none", "0", "0", "0", "0"],  # nothing spurious
    ]
    assert lines[k + 6].startswith("signature: ") and k + 7 == len(lines)
    assert "confusion (" not in run(capsys, "score", str(path)).out
    out = run(capsys, "score", str(path), "--format", "csv", "--confusion").out
    assert out.split("\n\n")[1].splitlines() == [
        "reference\\prediction,LOC,MISC,PER,none", "LOC,0,0,1,0", "MISC,0,0,0,1", "PER,0,0,0,0", "none,0,0,0,0"]
    md = run(capsys, "score", str(path), "--format", "markdown", "--confusion").out
    assert "| LOC | 0 | 0 | 1 | 0 |" in md and "| MISC | 0 | 0 | 0 | 1 |" in md


def test_confusion_grid_is_built_once_and_refused_beyond_its_limit():
    from iescore import score_tags
    from iescore.errors import ConfigError
    from iescore.render.formats import confusion_grid

    # LOC answer with a PER prediction (wrong label), MISC missed: 3 labels + none = 16 cells
    r = score_tags(reference=[["B-LOC"], ["O"], ["B-MISC"]], prediction=[["B-PER"], ["O"], ["O"]], scheme="IOB2")
    assert confusion_grid(r, limit=16).tolist() == [[0, 0, 1, 0], [0, 0, 0, 1], [0, 0, 0, 0], [0, 0, 0, 0]]
    with pytest.raises(ConfigError, match="the confusion table of 3 labels has 16 cells, more than the 15 printed"):
        confusion_grid(r, limit=15)


def test_confusion_of_too_many_labels_is_an_error_naming_its_size(capsys, tmp_path):
    # 3,162 labels + none: 3,163^2 = 10,004,569 cells, more than the 10,000,000 printed; the
    # error says where the pairs are instead of printing a table of ten million cells
    p = tmp_path / "many.conll"
    p.write_text("".join(f"w B-L{k} B-L{k}\n\n" for k in range(3162)), encoding="utf-8")
    err = run(capsys, "score", str(p), "--confusion", code=2).err
    assert ("iescore: error: the confusion table of 3,162 labels has 10,004,569 cells, more than the 10,000,000 "
            'printed; its non-zero pairs are in the JSON output\'s "confusion"') in err
    # without --confusion the same file is scored and its JSON holds the pairs that occur
    d = json.loads(run(capsys, "score", str(p), "--format", "json").out)
    assert d["confusion"]["L7"] == {"L7": 1} and len(d["confusion"]) == 3163


def test_markdown_tables_and_escaped_labels(capsys, tmp_path):
    # a label with Markdown/HTML characters is text in the table: every special character escaped
    p = tmp_path / "x.conll"
    p.write_text("a B-<b>|x_y B-<b>|x_y\n", encoding="utf-8")
    md = run(capsys, "score", str(p), "--format", "markdown").out
    assert "| \\<b\\>\\|x\\_y | 1 | 0 | 0 | 1 | 1 | 100.00 | 100.00 | 100.00 |" in md
    assert "<b>" not in md
    assert md.rstrip().splitlines()[-1].startswith("Signature: `iescore|")


def test_json_alias_and_conflict(capsys, path):
    a = json.loads(run(capsys, "score", str(path), "--json").out)
    b = json.loads(run(capsys, "score", str(path), "--format", "json").out)
    assert a == b and a["categories"]["overall"]["missed"] == 1
    with pytest.raises(SystemExit) as exc:  # a usage error, as argparse reports one
        main(["score", str(path), "--json", "--format", "csv"])
    assert exc.value.code == 2 and "--json and --format csv disagree" in capsys.readouterr().err


def test_output_file(capsys, path, tmp_path):
    out = tmp_path / "r.csv"
    assert run(capsys, "score", str(path), "--format", "csv", "--output", str(out)).out == ""
    assert out.read_text(encoding="utf-8").splitlines()[-1] == \
        "overall,0,1,2,2,1,0.0,0.0,0.0,0.0,0,1,0,0,1,0,0,1,1,0,1,0,1,0,0.75"
    bad = tmp_path / "no-such-dir" / "r.txt"
    err = run(capsys, "score", str(path), "--output", str(bad), code=2).err
    assert str(bad) in err and "cannot write" in err


def test_standard_input(capsys, path, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(TEXT.encode("utf-8")), encoding="utf-8"))
    got = run(capsys, "score", "-", "--format", "csv").out.split("\n", 1)
    want = run(capsys, "score", str(path), "--format", "csv").out.split("\n", 1)
    # the same rows; the signature lines differ in the reference digest only (document ids name the file)
    assert got[1] == want[1] and got[0].rsplit("|ref:", 1)[0] == want[0].rsplit("|ref:", 1)[0]


def test_every_option_has_plain_help_with_its_choices():
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")  # argparse has no public accessor
    for name, sp in sub.choices.items():
        for action in sp._actions:
            if action.dest in ("help",) or not action.option_strings:
                continue
            h = action.help or ""
            assert h, f"{name} {action.option_strings[0]} has no help"
            assert not re.search(r"``|:func:|:class:|:mod:|:data:", h), f"{name} {action.option_strings[0]}: RST in {h!r}"
            for c in action.choices or ():
                assert str(c) in h, f"{name} {action.option_strings[0]}: choice {c!r} not in its help"
    norm = next(a for a in sub.choices["score"]._actions if a.dest == "normaliser")
    for n in ("identity", "lower", "casefold", "whitespace", "nfkc", "strip-punct"):
        assert n in norm.help


def test_json_text_is_json_dumps_indented_on_stdout_and_in_a_file(capsys, tmp_path):
    # the JSON is written in pieces as it is made (iescore.render.jsontext); its text must be
    # json.dumps(report.to_dict(), indent=2)'s, a newline after, on stdout and with --output;
    # 2,000 labels make it larger than one chunk of pieces (4,096)
    from iescore import Config
    from iescore.io.conll_stream import score_conll

    p = tmp_path / "many.conll"
    p.write_text("".join(f"w B-L{k} B-L{(k * 7) % 2000}\n\n" for k in range(2000)), encoding="utf-8")
    want = json.dumps(score_conll(str(p), config=Config()).to_dict(), indent=2) + "\n"
    assert want.count("\n") > 2 * 4096
    assert run(capsys, "score", str(p), "--format", "json").out == want
    out = tmp_path / "out.json"
    run(capsys, "score", str(p), "--format", "json", "--output", str(out))
    assert out.read_text(encoding="utf-8") == want
    # the table's text, also through the pieces, keeps its one newline
    table = run(capsys, "score", str(p)).out
    assert table.endswith("\n") and not table.endswith("\n\n")


def test_an_output_that_names_an_input_is_refused_before_anything_is_read(capsys, path, tmp_path):
    """--output or --html naming the gold file, the prediction file (by another spelling, a
    symbolic or a hard link) or a path in an input folder: exit 2, every file as it was."""
    gold = tmp_path / "gold.conll"
    gold.write_text("Paris B-LOC\n\nnice B-MISC\n", encoding="utf-8")
    pred = tmp_path / "pred.conll"
    pred.write_text("B-LOC\n\nO\n", encoding="utf-8")
    link = tmp_path / "link.conll"
    link.symlink_to(pred)
    hard = tmp_path / "hard.conll"
    os.link(pred, hard)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    tail = "writing it would destroy the input, so nothing was read or written; name another file for"
    cases = [
        (["score", str(path), "--output", str(path)], f"--output {str(path)!r} is the input file {str(path)!r}: {tail} --output"),
        (["score", str(gold), str(pred), "--format", "csv", "--output", str(tmp_path / "." / "gold.conll")],
         f"--output {str(tmp_path / '.' / 'gold.conll')!r} is the gold file {str(gold)!r}: {tail} --output"),
        (["score", str(gold), str(pred), "--output", str(link)],
         f"--output {str(link)!r} is the prediction file {str(pred)!r}: {tail} --output"),
        (["score", str(gold), str(pred), "--output", str(hard)],
         f"--output {str(hard)!r} is the prediction file {str(pred)!r}: {tail} --output"),
        (["report", str(gold), str(pred), "--html", str(pred)],
         f"--html {str(pred)!r} is the prediction file {str(pred)!r}: {tail} --html"),
        (["report", str(gold), str(pred), "--html", str(tmp_path / "r.html"), "--output", str(tmp_path / "r.html")],
         f"--output and --html name the same file {str(tmp_path / 'r.html')!r}; name two files"),
    ]
    folder = FIXTURES / "readers" / "brat"
    if folder.is_dir():
        out = folder / "gold" / "report.json"
        cases.append((["score", str(folder / "gold"), str(folder / "pred"), "--input-format", "brat", "--level",
                       "tokens", "--output", str(out)],
                      f"--output {str(out)!r} is inside the input folder {str(folder / 'gold')!r}: {tail} --output"))
    for argv, message in cases:
        err = run(capsys, *argv, code=2).err
        assert err == f"iescore: error: {message}\n"
        assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before
    assert not (folder / "gold" / "report.json").exists()
    # an output beside the inputs is written
    out = tmp_path / "out.csv"
    assert run(capsys, "score", str(gold), str(pred), "--format", "csv", "--output", str(out)).out == ""
    assert out.read_text(encoding="utf-8").splitlines()[-1].startswith("overall,1,0,1,2,1,")
