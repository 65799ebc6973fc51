"""The command line, the CoNLL reader, and error messages that name what is at fault."""

from __future__ import annotations

import json

import pytest

from iescore import Document, InputError, Scorer, Span, Template, score, score_tags
from iescore.cli import main
from iescore.io.conll import read_conll


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def write(tmp_path, name, text, encoding="utf-8"):
    p = tmp_path / name
    p.write_bytes(text.encode(encoding))
    return str(p)


ONE = "-DOCSTART- -X- O O\n\nJohn NNP B-PER B-PER\nSmith NNP I-PER O\nvisited VBD O O\nParis NNP B-LOC B-LOC\n\n"


def test_cli_example_runs(capsys):
    code, out, _ = run(capsys, "score", "--example")
    assert code == 0
    assert out.startswith("processed 42 tokens with 10 phrases; found: 12 phrases; correct: 6.")
    assert "signature: iescore|setting:AO" in out


def test_cli_json_keys_and_values(tmp_path, capsys):
    f = write(tmp_path, "a.conll", ONE)
    code, out, _ = run(capsys, "score", f, "--json")
    assert code == 0
    d = json.loads(out)
    # 5 token lines (DOCSTART counted, as conlleval does), 4 agree
    assert d["tokens"] == 5 and d["token_accuracy"] == 0.8
    o = d["overall"]
    assert (o["tp"], o["fp"], o["fn"], o["support"]) == (1, 1, 1, 2)
    assert (o["precision"], o["recall"], o["f1"]) == (0.5, 0.5, 0.5)
    assert set(d["per_label"]) == {"LOC", "PER"}
    assert d["per_label"]["PER"]["precision"] == 0.0
    se = d["slot_errors"]
    assert (se["C"], se["S"], se["D"], se["I"], se["N"], se["M"]) == (1, 1, 0, 0, 2, 2)
    assert se["ser"] == 0.5
    assert set(d["ts"]) >= {"f1_macro", "f1_micro", "token_f1_macro", "per_label"}
    assert set(d["averages"]) == {"micro", "macro", "weighted"}
    assert d["signature"].startswith("iescore|setting:AO|rule:E|")


def test_cli_options_reach_the_signature(tmp_path, capsys):
    f = write(tmp_path, "a.conll", ONE)
    code, out, _ = run(capsys, "score", f, "--json", "--rule", "O(1,1)", "--counting", "one-to-one",
                       "--scheme", "IOB2", "--supertags", "PER=NE,LOC=NE")
    d = json.loads(out)
    assert d["signature"].startswith(
        "iescore|setting:AO|rule:O(1,1)|counting:one-to-one|mode:match-all|scheme:IOB2|repair:conlleval"
    )
    assert "super:LOC>NE,PER>NE" in d["signature"]
    assert d["overall"]["tp"] == 2  # John Smith vs John: one missing token under O(1,1)


def test_cli_two_files(tmp_path, capsys):
    gold = write(tmp_path, "g", "John NNP B-PER\nSmith NNP I-PER\n\nParis NNP B-LOC\n\n\n")
    pred = write(tmp_path, "p", "B-PER\nI-PER\n\nO\n")
    code, out, _ = run(capsys, "score", gold, pred, "--json")
    d = json.loads(out)
    assert (d["overall"]["tp"], d["overall"]["fn"]) == (1, 1)
    assert d["documents"] == 2  # no -DOCSTART-: each sentence is a document


def test_cli_misaligned_files_name_the_line(tmp_path, capsys):
    gold = write(tmp_path, "g", "John NNP B-PER\nSmith NNP I-PER\n\nParis NNP B-LOC\n")
    pred = write(tmp_path, "p", "B-PER\nI-PER\nO\n\n")
    code, _, err = run(capsys, "score", gold, pred)
    assert code == 2
    assert f"{pred}:3: expected a blank line (as in {gold}), got 'O'" in err


def test_cli_line_count_mismatch(tmp_path, capsys):
    gold = write(tmp_path, "g", "a X B-PER\nb X O\n")
    pred = write(tmp_path, "p", "B-PER\n")
    code, _, err = run(capsys, "score", gold, pred)
    assert code == 2 and f"{pred} ends at line 1 but {gold} goes on" in err


def test_cli_inconsistent_columns(tmp_path, capsys):
    f = write(tmp_path, "a", "a X B-PER B-PER\nb O O\n")
    code, _, err = run(capsys, "score", f)
    assert code == 2 and f"{f}:2: 3 columns where earlier lines have 4: 'b O O'" in err


def test_cli_strict_repair_names_file_and_line(tmp_path, capsys):
    f = write(tmp_path, "a", "a B-PER B-PER\nb O I-LOC\n")
    code, _, err = run(capsys, "score", f, "--scheme", "IOB2", "--repair", "strict")
    assert code == 2
    assert f"ill-formed IOB2 chunk at {f}:2 (prediction): tags ['B-PER', 'I-LOC']" in err


def test_cli_undecodable_bytes(tmp_path, capsys):
    f = write(tmp_path, "latin", "a O O\nCoru\u00f1a B-LOC B-LOC\n", encoding="latin-1")
    code, _, err = run(capsys, "score", f)
    assert code == 2
    assert f"{f}:2: byte 0xf1 cannot be decoded as utf-8" in err and "--encoding latin-1" in err
    code, out, _ = run(capsys, "score", f, "--encoding", "latin-1", "--json")
    assert code == 0 and json.loads(out)["overall"]["tp"] == 1


def test_cli_unknown_tag(tmp_path, capsys):
    f = write(tmp_path, "a", "a PER B-PER\n")
    code, _, err = run(capsys, "score", f, "--scheme", "IOB2")
    assert code == 2 and f"{f}:1 (reference): invalid tag 'PER': not a tag of scheme IOB2" in err


def test_cli_bad_rule(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["score", "--example", "--rule", "overlap(1)"])
    assert exc.value.code == 2
    assert "cannot parse matching rule 'overlap(1)'" in capsys.readouterr().err


def test_cli_missing_file(capsys, tmp_path):
    code, _, err = run(capsys, "score", str(tmp_path / "nope"))
    assert code == 2 and "cannot read" in err


def test_docstart_with_a_tag_is_refused(tmp_path):
    f = write(tmp_path, "a", "-DOCSTART- -X- O B-PER\n")
    with pytest.raises(InputError, match="a -DOCSTART- line must be tagged O"):
        read_conll(f)


def test_crlf_and_latin1_files_read(tmp_path):
    f = write(tmp_path, "a", "Coru\u00f1a B-LOC B-LOC\r\n\r\n", encoding="latin-1")
    b = read_conll(f, encoding="latin-1")
    assert list(b.tokens) == ["Coru\u00f1a"]


# --- library errors ----------------------------------------------------------------------
def test_tag_sequences_of_different_lengths():
    with pytest.raises(InputError, match="document '0': reference has 2 tags but prediction has 1"):
        score_tags(reference=[["O", "O"]], prediction=[["O"]])


def test_different_numbers_of_documents():
    with pytest.raises(InputError, match="reference has 2 sequences but prediction has 1"):
        score_tags(reference=[["O"], ["O"]], prediction=[["O"]])


def test_span_errors():
    with pytest.raises(InputError, match=r"span \('X', 3, 2\) is empty or reversed"):
        Span("X", 3, 2)
    with pytest.raises(InputError, match=r"document 'd': span #0 \('X', 1, 5\) is outside the document's 3 tokens"):
        Document("d", ("a", "b", "c"), (Span("X", 1, 5),))
    ref = Document("d", ("a", "b", "c"))
    with pytest.raises(InputError, match=r"document 'd': predicted span \('X', 2, 4\) is outside the document's 3 tokens"):
        score(reference=[ref], prediction=[[Span("X", 2, 4)]])


def test_document_id_errors():
    a = Document("a", ("x",))
    with pytest.raises(InputError, match="duplicate document id 'a'"):
        score(reference=[a, a], prediction=[[], []])
    with pytest.raises(InputError, match="prediction #0 has document id 'b' but the reference has 'a'"):
        score(reference=[a], prediction=[Document("b", ("x",))])
    s = Scorer()
    s.add(reference=[a], prediction=[[]])
    with pytest.raises(InputError, match="duplicate document id 'a' \\(already added to this scorer\\)"):
        s.add(reference=[a], prediction=[[]])


def test_option_errors_list_choices():
    with pytest.raises(ValueError, match="unknown counting 'greedy'; valid: 'any' or 'one-to-one'"):
        score(reference=[], prediction=[], counting="greedy")
    with pytest.raises(ValueError, match="unknown normaliser 'upper'"):
        score(reference=[], prediction=[], normaliser="upper")


def test_a_setting_is_read_in_any_case_like_a_scheme():
    """Settings are acronyms: 'ao' and 'obd' are AO and OBD (in Config, so in every front
    end, and on the command line), as 'iob2' is IOB2; anything else lists the choices."""
    from iescore import Config

    assert Config(setting="obd").setting == "OBD" and Config(setting="Ao").setting == "AO"
    assert Config(setting="obd") == Config(setting="OBD")
    with pytest.raises(ValueError, match="unknown setting 'o b d'; valid: 'AO' or 'OBD'"):
        Config(setting="o b d")


def test_cli_setting_in_any_case(tmp_path, capsys):
    f = write(tmp_path, "three", "Al B-PER B-PER\nRoth I-PER O\n\nIdo B-PER B-PER\n")
    code, upper, _ = run(capsys, "score", f, "--setting", "OBD", "--json")
    code2, lower, _ = run(capsys, "score", f, "--setting", "obd", "--json")
    assert code == code2 == 0 and lower == upper and "setting:OBD" in json.loads(lower)["signature"]
    with pytest.raises(SystemExit) as e:
        main(["score", f, "--setting", "xx"])
    assert e.value.code == 2
    err = capsys.readouterr().err  # argparse's words (they vary with the Python version)
    assert "argument --setting: invalid choice: 'xx'" in err and "AO" in err and "OBD" in err


def test_templates_need_obd():
    with pytest.raises(ValueError, match="score them with setting='OBD'"):
        score(reference=[Template("d", {})], prediction=[Template("d", {})])


def test_empty_corpus_is_defined():
    r = score_tags(reference=[], prediction=[])
    d = r.to_dict()
    assert d["overall"]["f1"] is None and d["token_accuracy"] is None and d["documents"] == 0


def test_obd_needs_a_token_column(tmp_path, capsys):
    f = write(tmp_path, "two", "B-PER B-PER\nI-PER O\n")
    code, _, err = run(capsys, "score", f, "--setting", "OBD")
    assert code == 2 and "compares strings and needs the tokens" in err
    f3 = write(tmp_path, "three", "Al B-PER B-PER\nRoth I-PER O\n")
    code, out, _ = run(capsys, "score", f3, "--setting", "OBD", "--rule", "O(0,1)", "--json")
    assert code == 0 and json.loads(out)["overall"]["tp"] == 1
