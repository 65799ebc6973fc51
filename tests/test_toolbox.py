"""The CoNLL toolbox (iescore validate, repair, convert, summarize) on small files whose
invalid transitions, repairs, conversions and counts are worked out by hand."""

from __future__ import annotations

import json

import pytest

from iescore.errors import InputError
from iescore.toolbox.cli import main
from iescore.toolbox.columns import read_columns
from iescore.toolbox.commands import convert_file, repair_file, summarize_file, validate_file
from iescore.toolbox.tags import TOOLBOX_SCHEMES, convert_tags, invalid_transitions, repair_tags

# token, gold, prediction; under IOB2 the prediction has two invalid transitions: line 3
# (O -> I-ORG) and line 6 (B-MISC -> I-LOC). Separators and line ends of several kinds.
FILE = (
    "-DOCSTART- O O\n"
    "\n"
    "EU\tB-ORG\tI-ORG\r\n"
    "rejects  O  O\n"
    "German B-MISC B-MISC\n"
    "call O I-LOC\n"
    "\n"
    "Peter B-PER B-PER\n"
    "Blackburn I-PER I-PER\n"
    ". O O\n"
)


@pytest.fixture
def conll(tmp_path):
    path = tmp_path / "x.conll"
    path.write_bytes(FILE.encode("utf-8"))
    return path


def test_validate_lists_each_invalid_transition_with_its_line(conll, capsys):
    assert main(["validate", str(conll), "--scheme", "IOB2"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out == [
        f"{conll}:3: prediction: invalid transition 'O' -> 'I-ORG' (token 'EU')",
        f"{conll}:6: prediction: invalid transition 'B-MISC' -> 'I-LOC' (token 'call')",
        f"{conll}: 2 invalid transitions (gold 0, prediction 2) under IOB2 in 7 tokens, 2 sentences, "
        "1 document (gold and prediction)",
    ]
    assert main(["validate", str(conll), "--scheme", "BIO", "--labels", "gold"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"{conll}: no invalid transitions under IOB2 in 7 tokens, 2 sentences, 1 document (gold)"]


def test_validate_under_iobes_names_the_end_of_a_sentence_and_tags_of_another_scheme(conll, capsys):
    # IOBES: gold B-ORG O (line 4), B-MISC O (line 6), I-PER at the sentence's end (line 10 is O:
    # I-PER -> O at line 10); the prediction I-ORG after O (3), I-ORG -> O (4), B-MISC -> I-LOC (6),
    # I-LOC at the end of its sentence (after line 6), I-PER -> O (10)
    result = validate_file(str(conll), "IOBES")
    assert result.counts == {"gold": 3, "pred": 5}
    assert [line.split(": ", 1)[1] if ": " in line else line for line in result.lines][:4] == [
        "prediction: invalid transition 'O' -> 'I-ORG' (token 'EU')",
        "gold: invalid transition 'B-ORG' -> 'O' (token 'rejects')",
        "prediction: invalid transition 'I-ORG' -> 'O' (token 'rejects')",
        "gold: invalid transition 'B-MISC' -> 'O' (token 'call')",
    ]
    assert result.lines[5].endswith(":6: prediction: invalid transition 'I-LOC' -> 'O' at the end of the sentence "
                                    "(after token 'call')")
    # E- is no IOB2 tag: listed, and the file is not valid
    bad = conll.parent / "bad.conll"
    bad.write_text("a B-X E-X\n")
    result = validate_file(str(bad), "IOB2")
    assert result.lines == [f"{bad}:1: prediction: 'E-X' is not a tag of scheme IOB2 (token 'a')"]
    assert not result.ok and result.not_of_scheme == {"gold": 0, "pred": 1}


@pytest.mark.parametrize("scheme,tags,found", [
    ("IOB1", ["O", "B-X", "I-X", "B-X", "B-Y"], [(1, "O", "B-X"), (4, "B-X", "B-Y")]),
    ("IOB2", ["I-X", "B-X", "I-Y"], [(0, "O", "I-X"), (2, "B-X", "I-Y")]),
    ("IOE1", ["I-X", "E-X", "O", "E-X", "I-X"], [(2, "E-X", "O")]),
    ("IOE2", ["I-X", "E-X", "I-X"], [(3, "I-X", "O")]),
    ("IOBES", ["B-X", "E-X", "B-X", "E-X", "I-X", "S-Y", "B-Y"], [(4, "E-X", "I-X"), (5, "I-X", "S-Y"), (7, "B-Y", "O")]),
    ("BILOU", ["U-X", "L-X", "B-Y", "I-Y", "L-Y"], [(1, "U-X", "L-X")]),
    ("BMES", ["B-X", "M-X", "E-X", "M-X"], [(3, "E-X", "M-X"), (4, "M-X", "O")]),
    ("BMEOW", ["W-X", "B-X", "E-X", "E-X"], [(3, "E-X", "E-X")]),
    ("IO", ["I-X", "I-Y", "O", "X"], []),
])
def test_invalid_transitions_by_hand(scheme, tags, found):
    assert [(t.index, t.before, t.after) for t in invalid_transitions(tags, scheme)] == found


def test_repair_rewrites_the_invalid_sentences_and_keeps_every_other_byte(conll, tmp_path, capsys):
    out = tmp_path / "fixed.conll"
    assert main(["repair", str(conll), "--scheme", "IOB2", "--output", str(out)]) == 0
    assert capsys.readouterr().out == (f"{out}: repaired to IOB2 (conlleval): gold 0 tags changed in 0 sentences "
                                       "with an invalid transition; prediction 2 tags changed in 1 sentence with an "
                                       "invalid transition\n")
    assert out.read_bytes() == FILE.replace("EU\tB-ORG\tI-ORG", "EU\tB-ORG\tB-ORG").replace(
        "call O I-LOC", "call O B-LOC").encode("utf-8")
    repair_file(str(conll), str(out), "IOB2", "discard", labels="pred")
    assert out.read_bytes() == FILE.replace("EU\tB-ORG\tI-ORG", "EU\tB-ORG\tO").replace(
        "call O I-LOC", "call O O").encode("utf-8")
    # IOB1: a B- after O becomes I- (conlleval), or its chunk is dropped (discard)
    iob1 = tmp_path / "iob1.conll"
    iob1.write_text("a B-X\nb I-X\nc B-X\n\nd O\ne B-Y\n")
    repair_file(str(iob1), str(out), "IOB1", labels="last")
    assert out.read_text() == "a I-X\nb I-X\nc B-X\n\nd O\ne I-Y\n"
    repair_file(str(iob1), str(out), "IOB1", "discard", labels="last")
    # a B-X I-X after O is ill-formed and dropped; c's B-X, after I-X, began a chunk of its own (kept,
    # and no longer beside another X chunk, written I-X)
    assert out.read_text() == "a O\nb O\nc I-X\n\nd O\ne O\n"
    assert repair_tags(["B-X", "E-X", "B-X", "E-X"], "IOBES") == ["B-X", "E-X", "B-X", "E-X"]  # valid: unchanged


def test_repair_and_convert_refuse_to_write_over_their_input(conll, capsys, monkeypatch):
    monkeypatch.chdir(conll.parent)
    before = conll.read_bytes()
    assert main(["repair", str(conll), "--scheme", "IOB2", "--output", "./x.conll"]) == 2
    assert "is the input file" in capsys.readouterr().err
    assert main(["convert", "x.conll", "--from", "IOB2", "--to", "IOBES", "--output", str(conll)]) == 2
    assert conll.read_bytes() == before


# one sentence, by hand in every scheme: PER [0,2) and PER [2,3) side by side, LOC [4,5), ORG [5,8)
SPLIT = {
    "IO": "I-PER I-PER I-PER O I-LOC I-ORG I-ORG I-ORG O",
    "IOB1": "I-PER I-PER B-PER O I-LOC I-ORG I-ORG I-ORG O",
    "IOB2": "B-PER I-PER B-PER O B-LOC B-ORG I-ORG I-ORG O",
    "IOE1": "I-PER E-PER I-PER O I-LOC I-ORG I-ORG I-ORG O",
    "IOE2": "I-PER E-PER E-PER O E-LOC I-ORG I-ORG E-ORG O",
    "IOBES": "B-PER E-PER S-PER O S-LOC B-ORG I-ORG E-ORG O",
    "BMES": "B-PER E-PER S-PER O S-LOC B-ORG M-ORG E-ORG O",
    "BILOU": "B-PER L-PER U-PER O U-LOC B-ORG I-ORG L-ORG O",
    "BMEOW": "B-PER E-PER W-PER O W-LOC B-ORG M-ORG E-ORG O",
}
# the same once IO has joined the two PER chunks: PER [0,3)
JOINED = {
    "IO": "I-PER I-PER I-PER O I-LOC I-ORG I-ORG I-ORG O",
    "IOB1": "I-PER I-PER I-PER O I-LOC I-ORG I-ORG I-ORG O",
    "IOB2": "B-PER I-PER I-PER O B-LOC B-ORG I-ORG I-ORG O",
    "IOE1": "I-PER I-PER I-PER O I-LOC I-ORG I-ORG I-ORG O",
    "IOE2": "I-PER I-PER E-PER O E-LOC I-ORG I-ORG E-ORG O",
    "IOBES": "B-PER I-PER E-PER O S-LOC B-ORG I-ORG E-ORG O",
    "BMES": "B-PER M-PER E-PER O S-LOC B-ORG M-ORG E-ORG O",
    "BILOU": "B-PER I-PER L-PER O U-LOC B-ORG I-ORG L-ORG O",
    "BMEOW": "B-PER M-PER E-PER O W-LOC B-ORG M-ORG E-ORG O",
}


@pytest.mark.parametrize("source", TOOLBOX_SCHEMES)
@pytest.mark.parametrize("target", TOOLBOX_SCHEMES)
def test_conversion_between_every_pair_of_schemes(source, target):
    assert set(SPLIT) == set(TOOLBOX_SCHEMES)
    want = JOINED if "IO" in (source, target) else SPLIT
    assert convert_tags(SPLIT[source].split(), source, target) == want[target].split()
    assert not invalid_transitions(SPLIT[source].split(), source)


def test_round_trips_and_what_io_loses(conll, tmp_path, capsys):
    iobes, back = tmp_path / "x.iobes", tmp_path / "x.iob2"
    valid = tmp_path / "valid.conll"
    valid.write_text(FILE.replace("I-ORG", "B-ORG").replace("I-LOC", "B-LOC"))
    convert_file(str(valid), str(iobes), "IOB2", "IOBES")
    convert_file(str(iobes), str(back), "IOBES", "IOB2")
    assert back.read_bytes() == valid.read_bytes()
    assert read_columns(str(iobes)).tags["gold"] == ["S-ORG", "O", "S-MISC", "O", "B-PER", "E-PER", "O"]
    # IO: B-PER B-PER is one chunk once written
    two = tmp_path / "two.conll"
    two.write_text("a B-PER\nb B-PER\n")
    assert main(["convert", str(two), "--from", "IOB2", "--to", "IO", "--labels", "last",
                 "--output", str(iobes)]) == 0
    assert capsys.readouterr().out.endswith("1 pair of adjacent chunks of one label joined (IO cannot separate them)\n")
    assert iobes.read_text() == "a I-PER\nb I-PER\n"


def test_convert_is_strict_unless_told_how_to_repair(conll, tmp_path, capsys):
    out = tmp_path / "out.conll"
    assert main(["convert", str(conll), "--from", "IOB2", "--to", "IOBES", "--output", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"{conll}:3 (prediction)" in err and "ill-formed IOB2 chunk" in err
    assert not out.exists()
    convert_file(str(conll), str(out), "IOB2", "IOBES", "conlleval", labels="pred")
    assert read_columns(str(out), "pred").tags["pred"] == ["S-ORG", "O", "S-MISC", "S-LOC", "B-PER", "E-PER", "O"]
    with pytest.raises(InputError, match=r"x.conll:1: 'E-X'|:1 \(tags\): tag 'E-X' is not a tag of scheme IOB2"):
        bad = tmp_path / "x.conll"
        bad.write_text("a E-X\n")
        convert_file(str(bad), str(out), "IOB2", "IO", labels="last")


def test_summarize_counts_by_hand(conll, capsys):
    s = summarize_file(str(conll))
    assert (s["documents"], s["sentences"], s["tokens"]) == (1, 2, 7)  # -DOCSTART- is no token
    assert s["mentions"] == {"MISC": 1, "ORG": 1, "PER": 1}
    assert main(["summarize", str(conll), "--labels", "pred", "--scheme", "IOB2", "--json", "--strings"]) == 0
    d = json.loads(capsys.readouterr().out)
    # the prediction under IOB2 with conlleval's repair: I-ORG and I-LOC each begin a chunk
    assert d["mentions"] == {"LOC": 1, "MISC": 1, "ORG": 1, "PER": 1}
    assert d["strings"] == {"LOC": {"call": 1}, "MISC": {"German": 1}, "ORG": {"EU": 1}, "PER": {"Peter Blackburn": 1}}
    assert summarize_file(str(conll), "pred", scheme="IOB2", repair="discard")["mentions"] == {"MISC": 1, "PER": 1}
    # without -DOCSTART- lines each sentence is a document (documents="auto"), or the file is one
    plain = conll.parent / "plain.conll"
    plain.write_text("a B-X\n\nb O\n\nc B-Y\n")
    assert summarize_file(str(plain), "last")["documents"] == 3
    assert summarize_file(str(plain), "last", documents="docstart")["documents"] == 1


def test_slips_are_refused_naming_what_to_pass(tmp_path, capsys):
    one = tmp_path / "pred.txt"
    one.write_text("B-PER\nO\n")
    assert main(["validate", str(one), "--scheme", "IOB2"]) == 2
    assert "pass --labels last" in capsys.readouterr().err
    assert main(["validate", str(one), "--scheme", "IOB2", "--labels", "last"]) == 0
    assert capsys.readouterr().out == f"{one}: no invalid transitions under IOB2 in 2 tokens, 1 sentence, 1 document (tags)\n"
    gold = tmp_path / "eng.testb"  # CoNLL-2003's columns: token POS chunk tag, no prediction
    gold.write_text("EU NNP I-NP I-ORG\nrejects VBZ I-VP O\n. . O O\n")
    assert main(["summarize", str(gold)]) == 2
    assert "pass --labels last" in capsys.readouterr().err
    assert main(["summarize", str(gold), "--labels", "last", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["mentions"] == {"ORG": 1}
    ragged = tmp_path / "ragged.conll"
    ragged.write_text("a O O\nb O\n")
    assert main(["validate", str(ragged), "--scheme", "IOB2"]) == 2
    assert f"{ragged}:2: 2 columns where earlier lines have 3" in capsys.readouterr().err


def test_the_encoding_a_byte_order_mark_and_standard_output_are_kept(tmp_path, capsys):
    latin = tmp_path / "latin.conll"
    latin.write_bytes("Z\xfcrich O I-LOC\r\n".encode("latin-1"))
    out = tmp_path / "out.conll"
    repair_file(str(latin), str(out), "IOB2", encoding="latin-1")
    assert out.read_bytes() == "Z\xfcrich O B-LOC\r\n".encode("latin-1")
    bom = tmp_path / "bom.conll"
    bom.write_bytes(b"\xef\xbb\xbfa O I-X\n")
    convert_file(str(bom), str(out), "IOB1", "IOBES")
    assert out.read_bytes() == b"\xef\xbb\xbfa O S-X\n"
    assert main(["convert", str(bom), "--from", "IOB1", "--to", "BILOU", "--output", "-"]) == 0
    captured = capsys.readouterr()
    assert captured.out == "\ufeffa O U-X\n"  # the file on standard output, the summary line on standard error
    assert captured.err == "-: IOB1 -> BILOU, 1 tag changed (gold 0, prediction 1) in 1 token\n"


def test_a_token_column_read_as_gold_tags_gets_a_hint(tmp_path, capsys):
    two = tmp_path / "two.conll"
    two.write_text("John B-PER\nSmith I-PER\n")
    assert main(["validate", str(two), "--scheme", "IOB2"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"{two}:1: gold: 'John' is not a tag of scheme IOB2"
    assert out[-1].endswith("pass --labels last to read its last column alone")
    for argv in (["repair", str(two), "--scheme", "IOB2", "--output", str(tmp_path / "o")],
                 ["summarize", str(two), "--scheme", "IOB2"]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert f"{two}:1 (gold): tag 'John' is not a tag of scheme IOB2; a file of 2 columns" in err, err
    assert main(["validate", str(two), "--scheme", "IOB2", "--labels", "last"]) == 0
