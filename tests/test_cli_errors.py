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


@pytest.mark.filterwarnings("ignore:.*is the same column given twice:iescore.errors.IEScoreWarning")
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


# --- slips refused before anything is read ------------------------------------------------
FORMATS = "'conll', 'brat', 'jsonl', 'docbin' or 'llm'"


def test_json_brat_and_spacy_input_without_input_format_is_refused(tmp_path, capsys):
    """Read as CoNLL, a JSON line is one token whose last fields ('"PER"}]}') are scored as
    tags; each such input exits 2 naming the --input-format to pass, and nothing is scored."""
    g = write(tmp_path, "g.jsonl", '{"id": "a", "text": "Al Roth", "spans": [{"start": 0, "end": 7, "label": "PER"}]}\n')
    code, out, err = run(capsys, "score", g, g)
    assert (code, out) == (2, "")
    assert err == (f"iescore: error: {g}: JSON (its first character is '{{'), not CoNLL columns (the default input "
                   f"format); pass --input-format jsonl and --level characters or --level tokens (input formats: {FORMATS})\n")
    # a JSON list (Label Studio's export), whatever the file's name; LLM extractions as the prediction
    lst = write(tmp_path, "export.txt", '[{"id": "a", "text": "Al Roth", "label": [[0, 7, "PER"]]}]\n')
    llm = write(tmp_path, "llm.out", '\n{"id": "a", "entities": [{"label": "PER", "text": "Al Roth"}]}\n')
    code, _, err = run(capsys, "score", lst, llm)
    assert code == 2 and err == (
        f"iescore: error: {lst}: JSON (its first character is '['), not CoNLL columns (the default input format); "
        f"pass --input-format jsonl --pred-format llm and --level characters or --level tokens (input formats: {FORMATS})\n")
    folder = tmp_path / "brat"
    folder.mkdir()
    (folder / "a.txt").write_text("Al Roth\n", encoding="utf-8")
    ann = write(tmp_path, "brat/a.ann", "T1\tPER 0 7\tAl Roth\n")
    for path, what in ((str(folder), "a folder"), (ann, "a brat annotation file (.ann)")):
        code, _, err = run(capsys, "score", path, path)
        assert code == 2 and err == (
            f"iescore: error: {path}: {what}, not CoNLL columns (the default input format); pass --input-format brat "
            f"and --level characters or --level tokens (input formats: {FORMATS})\n")
    spacy_file = write(tmp_path, "d.spacy", "\x00binary")
    code, _, err = run(capsys, "score", spacy_file, spacy_file)
    assert code == 2 and err == (
        f"iescore: error: {spacy_file}: a spaCy DocBin file (.spacy), not CoNLL columns (the default input format); "
        f"pass --input-format docbin and --level characters or --level tokens (input formats: {FORMATS})\n")
    # a CoNLL gold file against JSON predictions: CoNLL is scored against CoNLL only
    conll = write(tmp_path, "a.conll", "Al B-PER B-PER\n")
    code, _, err = run(capsys, "score", conll, g)
    assert code == 2 and err == (
        f"iescore: error: {g}: JSON (its first character is '{{'), not CoNLL columns, while the gold file {conll} is "
        "read as CoNLL, which is scored against CoNLL predictions only; give the gold file in a format with character "
        "offsets (--input-format 'brat', 'jsonl', 'docbin' or 'llm') and pass --pred-format jsonl and --level "
        "characters or --level tokens\n")
    # the commands that read CoNLL only say so
    code, _, err = run(capsys, "compare", conll, g)
    assert code == 2 and err == (f"iescore: error: {g}: JSON (its first character is '{{'), not a CoNLL file; iescore "
                                 "compare reads CoNLL files unless --input-format is given (pass --input-format jsonl "
                                 "and --input-level characters or --input-level tokens)\n")
    # named formats are read as named: --input-format conll reads the JSON line as CoNLL columns
    code, out, _ = run(capsys, "score", g, "--input-format", "conll", "--json")
    assert code == 0 and sorted(json.loads(out)["per_label"]) == ['"PER"}]}', '"label":']
    code, out, _ = run(capsys, "score", g, g, "--input-format", "jsonl", "--level", "characters", "--json")
    assert code == 0 and json.loads(out)["overall"]["tp"] == 1


def test_a_conll_token_that_is_a_bracket_is_no_json(tmp_path, capsys):
    f = write(tmp_path, "code.conll", "[ O O\nx B-VAR B-VAR\n{ O B-VAR\n")
    code, out, err = run(capsys, "score", f, "--json")
    assert (code, err) == (0, "") and json.loads(out)["overall"]["tp"] == 1


@pytest.mark.parametrize("codec, data, encoding, problem", [
    ("utf-16", None, "utf-8", "the file starts with a UTF-16 (little-endian) byte-order mark (bytes ff fe) but is "
                              "read as utf-8; pass encoding='utf-16' (CLI --encoding utf-16)"),
    ("utf-16-be", b"\xfe\xff", "latin-1", "the file starts with a UTF-16 (big-endian) byte-order mark (bytes fe ff) "
                                          "but is read as latin-1; pass encoding='utf-16' (CLI --encoding utf-16)"),
    ("utf-32", None, "utf-16", "the file starts with a UTF-32 (little-endian) byte-order mark (bytes ff fe 00 00) "
                               "but is read as utf-16; pass encoding='utf-32' (CLI --encoding utf-32)"),
    ("utf-16-le", b"", "utf-8", "the file looks like UTF-16 (little-endian) without a byte-order mark (zero bytes "
                                "between the characters), not utf-8; pass encoding='utf-16-le' (CLI --encoding utf-16-le)"),
    ("utf-16-le", b"", "utf-16", "the file has no byte-order mark, which utf-16 reads the byte order from; it looks "
                                 "little-endian: pass encoding='utf-16-le' (CLI --encoding utf-16-le)"),
    ("utf-8", b"", "utf-16", "the file has no byte-order mark, which utf-16 reads the byte order from; it reads as "
                             "UTF-8: pass encoding='utf-8' (CLI --encoding utf-8)"),
    ("utf-8", b"\xef\xbb\xbf", "utf-32", "the file starts with a UTF-8 byte-order mark (bytes ef bb bf) but is read "
                                         "as utf-32; pass encoding='utf-8' (CLI --encoding utf-8)"),
])
def test_a_byte_order_mark_or_utf16_without_one_says_which_encoding(tmp_path, capsys, codec, data, encoding, problem):
    """UTF-16 and UTF-32 files (Windows tools write them), with a byte-order mark or not, read
    in another encoding: the message names the file, line 1 and the encoding to pass, from the
    command line (streamed), from read_conll and from the JSON reader; never a traceback."""
    from iescore.io.jsonl import read_jsonl

    text = "Al B-PER B-PER\nRoth I-PER O\n"
    f = str(tmp_path / "a.conll")
    with open(f, "wb") as fh:
        fh.write((data if data is not None else b"") + text.encode(codec))
    code, out, err = run(capsys, "score", f, "--encoding", encoding)
    assert (code, out, err) == (2, "", f"iescore: error: {f}:1: {problem}\n")
    with pytest.raises(InputError) as e:
        read_conll(f, encoding=encoding)
    assert str(e.value) == f"{f}:1: {problem}"
    with pytest.raises(InputError) as e:
        read_jsonl(f, encoding=encoding)
    assert str(e.value) == f"{f}:1: {problem}"
    right = problem.split("CLI --encoding ")[1].rstrip(")")
    code, out, _ = run(capsys, "score", f, "--encoding", right, "--json")
    assert code == 0 and json.loads(out)["overall"]["fn"] == 1  # PER [0,2) against PER [0,1)


def test_an_undecodable_byte_names_line_and_byte_and_a_non_text_codec_is_refused(tmp_path, capsys):
    f = write(tmp_path, "latin", "a O O\nCoru\u00f1a B-LOC B-LOC\n", encoding="latin-1")
    code, _, err = run(capsys, "score", f)
    assert code == 2 and err == (f"iescore: error: {f}:2: byte 0xf1 cannot be decoded as utf-8 (byte 10 of the "
                                 "file); pass the file's encoding (e.g. encoding='latin-1', CLI --encoding latin-1)\n")
    u = write(tmp_path, "utf8", "a O O\nCoru\u00f1a B-LOC B-LOC\n")
    code, _, err = run(capsys, "score", u, "--encoding", "ascii")
    assert code == 2 and err == (f"iescore: error: {u}:2: byte 0xc3 cannot be decoded as ascii (byte 10 of the "
                                 "file); the file reads as UTF-8: pass encoding='utf-8' (CLI --encoding utf-8)\n")
    for name, why in (("rot13", " (not a text encoding)"), ("utf-9", "")):
        code, _, err = run(capsys, "score", u, "--encoding", name)
        assert code == 2 and err == (f"iescore: error: unknown encoding {name!r}{why}; e.g. 'utf-8', 'utf-16', "
                                     "'latin-1' or 'cp1252'\n")


MISSING = ("the prediction column is missing: {read} read as the gold and the predicted tag, but column {k} holds "
           "{what} with no label in common with column {n} ({pred}); give the predicted tags as a last column, or "
           "in a file of their own: iescore score GOLD PRED")


def test_a_gold_file_alone_says_the_prediction_column_is_missing(tmp_path, capsys):
    """CoNLL-2003's gold file (token, POS, chunk, entity tag) given alone is read as conlleval's
    input: chunk tags scored against entity tags, no label in common. Refused, saying so."""
    f = write(tmp_path, "eng.testa", "-DOCSTART- -X- -X- O\n\nEU NNP I-NP I-ORG\nrejects VBZ I-VP O\n"
                                     "German JJ I-NP I-MISC\ncall NN I-NP O\n. . O O\n")
    code, out, err = run(capsys, "score", f)
    assert (code, out) == (2, "")
    assert err == "iescore: error: " + f + ": " + MISSING.format(
        read="of its 4 columns the last two are", k=3, what="chunk tags ('I-NP', 'I-VP')", n=4,
        pred="'I-ORG', 'I-MISC'") + "\n"
    # token, POS, entity tag: the POS column read as gold tags
    f3 = write(tmp_path, "three", "EU NNP B-ORG\nrejects VBZ O\nGerman JJ B-MISC\n. . O\n")
    code, _, err = run(capsys, "report", f3, "--html", str(tmp_path / "r.html"))
    assert code == 2 and err == "iescore: error: " + f3 + ": " + MISSING.format(
        read="of its 3 columns the last two are", k=2, what="POS tags ('NNP', 'VBZ')", n=3,
        pred="'B-ORG', 'B-MISC'") + "\n"
    assert not (tmp_path / "r.html").exists()
    # token and tag (CoNLL-2002's files): the tokens read as gold tags
    f2 = write(tmp_path, "esp.testa", "Sao B-LOC\nPaulo I-LOC\n( O\nBrasil B-LOC\n) O\n")
    code, _, err = run(capsys, "score", f2)
    assert code == 2 and err == "iescore: error: " + f2 + ": " + MISSING.format(
        read="its 2 columns are", k=1, what="tokens ('Sao', 'Paulo')", n=2, pred="'B-LOC', 'I-LOC'") + "\n"
    # with the predictions, as a last column or as a file, the same file is scored
    g = write(tmp_path, "gold4", "EU NNP I-NP I-ORG\nrejects VBZ I-VP O\n")
    p = write(tmp_path, "pred", "I-ORG\nI-MISC\n")  # ORG [0,1) as in the gold, MISC [1,2) spurious
    code, out, err = run(capsys, "score", g, p, "--json")
    assert (code, err) == (0, "") and (json.loads(out)["overall"]["tp"], json.loads(out)["overall"]["fp"]) == (1, 1)


def _usage(command):
    from iescore.cli import build_parser

    parser = build_parser()
    if command is None:
        return parser.format_usage()
    sub = next(a for a in parser._actions if a.dest == "command")  # argparse has no public accessor
    return sub.choices[command].format_usage()


@pytest.mark.parametrize("argv, command, message", [
    (["score", "FILE", "--rulez", "E"], "score",
     "unrecognized arguments: --rulez (did you mean '--rule'?) E"),
    (["score", "--example", "--conting=any"], "score",
     "unrecognized arguments: --conting=any (did you mean '--counting'?)"),
    (["score", "--example", "--counting", "one-two-one"], "score",
     "argument --counting: invalid choice: 'one-two-one' (did you mean 'one-to-one'?); choose from 'any' or 'one-to-one'"),
    (["score", "--example", "--format", "jsn"], "score",
     "argument --format: invalid choice: 'jsn' (did you mean 'json'?); choose from 'table', 'json', 'csv' or 'markdown'"),
    (["score", "--example", "--zzz"], "score", "unrecognized arguments: --zzz"),
    (["scor", "--example"], None,
     "argument command: invalid choice: 'scor' (did you mean 'score'?); choose from 'score', 'metric-path', "
     "'compare', 'agree', 'report', 'validate', 'repair', 'convert', 'summarize' or 'weighted'"),
    (["report", "FILE", "--html", "r.html", "--page-sise", "10"], "report",
     "unrecognized arguments: --page-sise (did you mean '--page-size'?) 10"),
])
def test_a_misspelt_option_choice_or_subcommand_names_the_nearest(capsys, tmp_path, argv, command, message):
    f = write(tmp_path, "a.conll", ONE)
    with pytest.raises(SystemExit) as exc:
        main([f if a == "FILE" else a for a in argv])
    prog = "iescore" if command is None else f"iescore {command}"
    assert exc.value.code == 2
    assert capsys.readouterr().err == _usage(command) + f"{prog}: error: {message}\n"


def test_a_brat_text_in_another_encoding_names_the_file_and_what_to_pass(tmp_path, capsys):
    """brat's .txt is read whole as text: a UTF-16 one (with a byte-order mark) read as UTF-8,
    or a latin-1 byte, names the .txt, the line and byte, and the encoding to pass."""
    folder = tmp_path / "b"
    folder.mkdir()
    (folder / "a.ann").write_text("T1\tPER 0 7\tAl Roth\n", encoding="utf-8")
    txt = folder / "a.txt"
    txt.write_bytes("Al Roth\n".encode("utf-16"))
    argv = ("score", str(folder), str(folder), "--input-format", "brat", "--level", "tokens")
    code, _, err = run(capsys, *argv)
    assert code == 2 and err == (f"iescore: error: {txt}:1: the file starts with a UTF-16 (little-endian) byte-order "
                                 "mark (bytes ff fe) but is read as utf-8; pass encoding='utf-16' (CLI --encoding utf-16)\n")
    txt.write_bytes(b"Al R\xf6th\n")
    code, _, err = run(capsys, *argv)
    assert code == 2 and err == (f"iescore: error: {txt}:1: byte 0xf6 cannot be decoded as utf-8 (byte 4 of the file); "
                                 "pass the file's encoding (e.g. encoding='latin-1', CLI --encoding latin-1)\n")
