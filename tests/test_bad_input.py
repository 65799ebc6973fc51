"""Input is read as conlleval reads it, and bad input gets a clear error or warning.

Every expectation is derived by hand from conlleval.pl's reading of a line (fields
split on the space; a tag split at its first '-', a tag without one being a prefix
with an empty type; startOfChunk/endOfChunk) or from the rule stated in the test.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

from iescore import InputError, Scorer, Span, Template, score_tags
from iescore.cli import main
from iescore.decode import decode_tags
from iescore.errors import IEScoreError, IEScoreWarning
from iescore.io.conll import read_conll, read_lines


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def write(tmp_path, name, data):
    p = tmp_path / name
    p.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    return str(p)


def spans(chunks):
    return [(chunks.labels[t], int(s), int(e)) for t, s, e in zip(chunks.type, chunks.start, chunks.end)]


@pytest.fixture
def no_warnings():
    """Turn every warning into an error inside the test."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


# --- 1. tags without a type are chunk prefixes with the empty type ------------------------
def test_typeless_tags_are_chunks_of_the_empty_type_as_in_conlleval(tmp_path, capsys, no_warnings):
    # conlleval: 'B' and 'I' have no '-', so the whole tag is the prefix and the type is "".
    # gold B I: B starts a chunk, I continues it (same type "") -> one chunk [0, 2)
    # pred B O: one chunk [0, 1); it ends at token 1 where gold's goes on -> not correct.
    # "processed 2 tokens with 1 phrases; found: 1 phrases; correct: 0."; accuracy 1/2.
    f = write(tmp_path, "a", "a B B\nb I O\n")
    code, out, _ = run(capsys, "score", f)
    assert code == 0
    assert out.splitlines()[0] == "processed 2 tokens with 1 phrases; found: 1 phrases; correct: 0."
    code, out, _ = run(capsys, "score", f, "--json")
    d = json.loads(out)
    assert (d["overall"]["tp"], d["overall"]["fp"], d["overall"]["fn"]) == (0, 1, 1)
    assert list(d["per_label"]) == [""]  # the empty label, printed padded by the table
    assert d["token_accuracy"] == 0.5


def test_typeless_tags_in_every_scheme():
    # IOBES without types: B I E is one chunk, S a single-token one
    assert spans(decode_tags([["B", "I", "E", "O", "S"]], scheme="IOBES")) == [("", 0, 3), ("", 4, 5)]
    # IOB2: typed and typeless chunks side by side; a type change ends a chunk (conlleval)
    assert spans(decode_tags([["B", "I", "I-PER", "O", "B"]], scheme="IOB2")) == [
        ("", 0, 2), ("PER", 2, 3), ("", 4, 5)
    ]
    # auto-detection sees the prefixes B and I, not the IO labels 'B' and 'I':
    # reference chunks [0,2) [3,4); prediction [0,1) [3,4) -> tp 1, fp 1, fn 1
    r = score_tags(reference=[["B", "I", "O", "B"]], prediction=[["B", "O", "O", "B"]])
    assert "scheme:IOB2" in r.signature
    assert (r.overall.tp, r.overall.fp, r.overall.fn) == (1, 1, 1)


# --- 2. CR-only line endings -----------------------------------------------------------------
def test_cr_only_file_is_read_line_by_line(tmp_path, no_warnings):
    # three token lines and a blank line, ended by CR alone (an old Mac file)
    f = write(tmp_path, "mac", b"a B-PER B-PER\rb I-PER O\r\rc B-LOC B-LOC\r")
    assert read_lines(f) == ["a B-PER B-PER", "b I-PER O", "", "c B-LOC B-LOC"]
    b = read_conll(f)
    assert list(b.tokens) == ["a", "b", "c"] and len(b.doc_ids) == 2
    # gold PER[0,2) LOC[2,3); prediction PER[0,1) LOC[2,3): tp 1 (LOC), fp 1, fn 1
    s = Scorer()
    s.add_batch(b)
    o = s.report().overall
    assert (o.tp, o.fp, o.fn) == (1, 1, 1)


def test_mixed_line_ends_and_the_line_of_an_undecodable_byte(tmp_path):
    f = write(tmp_path, "mixed", b"a O O\r\nb O O\rc O O\nd \xff O\n")
    with pytest.raises(InputError, match=r":4: byte 0xff cannot be decoded as utf-8"):
        read_conll(f)


# --- 3. invalid tags name the file and line ----------------------------------------------
@pytest.mark.parametrize(
    "tag, why",
    [
        ("b-per", "not a tag of scheme IOB2"),
        ("B-", "no label after the delimiter '-'"),
        ("O-X", "not a tag of scheme IOB2"),
        ("X-PER", "not a tag of scheme IOB2"),
        ("\ufeffB-PER", "it contains a byte-order mark U+FEFF"),
        ("B-PER\x07", "it contains the control character U+0007"),
        ("B-PER\u00a0", "it contains the space character U+00A0"),
    ],
)
def test_invalid_tag_names_file_line_and_valid_forms(tmp_path, capsys, tag, why):
    f = write(tmp_path, "a", f"a B-PER B-PER\nb O {tag}\n")
    code, _, err = run(capsys, "score", f)
    assert code == 2
    # the scheme was detected (IOB2, from the gold B-PER): a tag of no scheme's form says so
    note = (" (scheme IOB2 was detected from the gold tags under scheme='auto'; pass scheme= to name another)"
            if why.startswith("not a tag of scheme") else "")
    assert err == (
        f"iescore: error: {f}:2 (prediction): invalid tag {tag!r}: {why}; "
        f"valid forms: 'B-<label>', 'I-<label>' or 'O'{note}\n"
    )
    code, _, err = run(capsys, "score", f, "--scheme", "IOB2")  # named: nothing to add
    assert code == 2 and err == (
        f"iescore: error: {f}:2 (prediction): invalid tag {tag!r}: {why}; "
        f"valid forms: 'B-<label>', 'I-<label>' or 'O'\n"
    )


HINT = ("has 2 columns, read as the gold and the predicted tag (conlleval's input, whose last two "
        "columns are the tags); if they are a token and one tag, give the gold file and a prediction "
        "file: iescore score GOLD PRED")


def test_a_file_of_tokens_and_one_tag_gets_a_hint(tmp_path, capsys):
    """A gold file given alone (token, tag) is read as conlleval's 2-column input: the token
    column is taken for gold tags. The error names the file, line and value, and a hint says
    what the 2 columns were read as and what to give instead."""
    f = write(tmp_path, "gold", "Ada B-PER\nLovelace I-PER\nwrote O\n")
    code, out, err = run(capsys, "score", f)
    assert (code, out) == (2, "")
    # the token column, read as gold tags, is bare labels: IO is detected, which refuses B-PER
    assert err == (
        f"iescore: error: {f}:1 (prediction): invalid tag 'B-PER': not a tag of scheme IO; valid forms: "
        "'I-<label>', 'O' or '<label>' (scheme IO was detected from the gold tags under scheme='auto'; "
        f"pass scheme= to name another)\niescore: hint: {f} {HINT}\n"
    )
    # with -DOCSTART- lines the first error is the -DOCSTART- line's, and says so at once
    f = write(tmp_path, "docs", "-DOCSTART- O\n\nAda B-PER\n")
    code, _, err = run(capsys, "score", f)
    assert code == 2
    assert err == f"iescore: error: {f}:1: a -DOCSTART- line with 2 columns, '-DOCSTART- O': {f} {HINT}\n"
    # 3 columns or two files: no hint (the columns are not in doubt)
    f = write(tmp_path, "three", "Ada X-PER B-PER\n")
    code, _, err = run(capsys, "score", f, "--scheme", "IOB2")
    assert code == 2 and "hint" not in err
    g, p = write(tmp_path, "g", "Ada X-PER\n"), write(tmp_path, "p", "Ada B-PER\n")
    code, _, err = run(capsys, "score", g, p, "--scheme", "IOB2")
    assert code == 2 and "hint" not in err and err.startswith(f"iescore: error: {g}:1 (reference): invalid tag 'X-PER'")


def test_an_invalid_tag_under_auto_names_the_detected_scheme():
    """Under scheme="auto" the error says which scheme was detected and that scheme= names
    another, from every front end; with scheme= given it does not."""
    ref, pred = [["B-PER", "I-PER"], ["I-PER", "X-PER"]], [["O", "O"], ["O", "O"]]
    base = ("document '1' (reference), token 1: invalid tag 'X-PER': not a tag of scheme IOB1; "
            "valid forms: 'B-<label>', 'I-<label>' or 'O'")
    note = " (scheme IOB1 was detected from the gold tags under scheme='auto'; pass scheme= to name another)"
    for call in (lambda: score_tags(reference=ref, prediction=pred),
                 lambda: Scorer().add_tags(reference=ref, prediction=pred),
                 lambda: Scorer().add_tags(reference=ref * 40_000, prediction=pred * 40_000)):  # not held
        with pytest.raises(InputError) as e:
            call()
        assert str(e.value) == base + note
    with pytest.raises(InputError) as e:
        Scorer(scheme="IOB1").add_tags(reference=ref, prediction=pred)
    assert str(e.value) == base


def test_invalid_tag_in_the_gold_file_of_two(tmp_path, capsys):
    gold = write(tmp_path, "g", "a B-PER\n\nb i-PER\n")
    pred = write(tmp_path, "p", "B-PER\n\nO\n")
    code, _, err = run(capsys, "score", gold, pred)
    assert code == 2 and err.startswith(f"iescore: error: {gold}:3 (reference): invalid tag 'i-PER'")


def test_leading_byte_order_mark_is_skipped(tmp_path, no_warnings):
    # two columns: without skipping, the first gold tag would be '\ufeffB-PER'
    f = write(tmp_path, "bom", b"\xef\xbb\xbfB-PER B-PER\nO B-LOC\n")
    s = Scorer()
    s.add_batch(read_conll(f))
    o = s.report().overall
    assert (o.tp, o.fp, o.fn) == (1, 1, 0)
    f3 = write(tmp_path, "bom3", b"\xef\xbb\xbfa B-PER B-PER\nb O B-LOC\n")
    assert list(read_conll(f3).tokens) == ["a", "b"]


def test_python_api_names_document_and_token():
    with pytest.raises(InputError, match=r"^document 'd2' \(prediction\), token 1: invalid tag 'i-PER': not a tag"):
        score_tags(reference=[["O"], ["B-PER", "I-PER"]], prediction=[["O"], ["B-PER", "i-PER"]], doc_ids=["d1", "d2"])


# --- 4. only ASCII spaces and tabs separate fields ---------------------------------------
def test_non_breaking_space_is_part_of_a_token(tmp_path, no_warnings):
    # conlleval splits on ' ' only, so 'New\u00a0York' is one field: 3 columns on each line
    f = write(tmp_path, "nbsp", "New\u00a0York B-LOC B-LOC\nis O O\nbig\tO\tB-LOC\n")
    b = read_conll(f)
    assert list(b.tokens) == ["New\u00a0York", "is", "big"]
    s = Scorer()
    s.add_batch(b)
    o = s.report().overall
    assert (o.tp, o.fp, o.fn) == (1, 1, 0)


def test_a_column_count_error_names_the_line_at_fault(tmp_path, capsys):
    # line 2 has an extra field; the non-breaking space of line 1 is no separator
    f = write(tmp_path, "a", "New\u00a0York B-LOC B-LOC\nis VBZ O O\n")
    code, _, err = run(capsys, "score", f)
    assert code == 2 and f"{f}:2: 4 columns where earlier lines have 3" in err


def test_a_line_of_a_non_breaking_space_is_not_blank(tmp_path, capsys):
    f = write(tmp_path, "a", "\u00a0\na O O\n")
    code, _, err = run(capsys, "score", f)
    assert code == 2 and f"{f}:1: need at least 2 columns" in err


# --- 5. Python API bad input -----------------------------------------------------------------
def test_two_d_arrays_and_generators_are_read_once(no_warnings):
    ref = [["B-PER", "I-PER", "O"], ["O", "B-LOC", "O"]]
    pred = [["B-PER", "O", "O"], ["O", "B-LOC", "O"]]
    # PER [0,2) vs [0,1): fp 1, fn 1; LOC exact: tp 1
    want = (1, 1, 1)
    for r, p in [
        (np.array(ref), np.array(pred)),
        ((x for x in ref), (x for x in pred)),
        ([iter(x) for x in ref], [iter(x) for x in pred]),
    ]:
        o = score_tags(reference=r, prediction=p).overall
        assert (o.tp, o.fp, o.fn) == want


def test_a_single_sequence_is_refused():
    with pytest.raises(InputError, match="reference is a 1-D array: one sequence of tags"):
        score_tags(reference=np.array(["B-PER", "O"]), prediction=np.array(["B-PER", "O"]))
    with pytest.raises(InputError, match=r"document '1' \(prediction\): a tag sequence must be a list of tags, not a string"):
        score_tags(reference=[["O"], ["O"]], prediction=[["O"], "O"])


def test_sequences_nested_too_deep():
    with pytest.raises(InputError, match=r"document '0' \(reference\), token 0: tags must be strings, "
                                         r"got \['B-PER', 'O'\] \(list\); the sequences are nested one level too deep"):
        score_tags(reference=[[["B-PER", "O"]]], prediction=[[["B-PER", "O"]]])


def test_a_tag_that_is_not_a_string():
    with pytest.raises(InputError, match=r"document 'b' \(prediction\), token 2: tags must be strings, got 3 \(int\)"):
        score_tags(reference=[["O"], ["O", "O", "O"]], prediction=[["O"], ["O", "O", 3]], doc_ids=["a", "b"])


def test_length_mismatch_names_the_document_and_both_lengths():
    with pytest.raises(InputError, match="document 'b': reference has 3 tags but prediction has 2"):
        score_tags(reference=[["O"], ["O", "O", "O"]], prediction=[["O"], ["O", "O"]], doc_ids=["a", "b"])


def test_a_non_numeric_confidence():
    with pytest.raises(InputError, match=r"span \('X', 0, 1\): the confidence must be a number, got 'high' \(str\)"):
        Span("X", 0, 1, "high")
    with pytest.raises(InputError, match=r"template 't': slot 'X': the confidence must be a number, got None"):
        Template("t", {"X": ("a",)}, scores={"X": (None,)})
    assert Span("X", 0, 1, np.float32(0.5)).score == 0.5
    assert issubclass(InputError, IEScoreError)


# --- 6. a closed output pipe -------------------------------------------------------------------
@pytest.mark.parametrize("output", [[], ["--json"]])  # a table smaller than the buffer, and a larger JSON
def test_closed_output_pipe_stops_quietly(output):
    """`iescore score F | head -1`: the reader has gone; no traceback, and the status
    a shell reports for a Unix tool stopped by SIGPIPE (128 + 13 = 141)."""
    r, w = os.pipe()
    os.close(r)  # the reader is gone before iescore writes
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "iescore", "score", "--example", *output],
            stdout=w, stderr=subprocess.PIPE, timeout=120,
            env={k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"},  # buffered, as usual
        )
    finally:
        os.close(w)
    assert proc.stderr == b""
    assert proc.returncode == 141


# --- 7. likely mistakes give a warning ------------------------------------------------------------
def test_empty_file_warns(tmp_path, capsys):
    f = write(tmp_path, "empty", "\n  \n")
    with pytest.warns(IEScoreWarning, match="no tokens"):
        read_conll(f)
    code, out, err = run(capsys, "score", f)
    assert code == 0 and out.startswith("processed 0 tokens")
    assert err == f"iescore: warning: {f}: no tokens (the file is empty, blank or only -DOCSTART- lines)\n"


def test_same_column_twice_warns(tmp_path, capsys):
    f = write(tmp_path, "same", "a B-PER B-PER\nb O O\n")
    code, _, err = run(capsys, "score", f)
    assert code == 0
    assert err == (f"iescore: warning: {f}: the predicted column equals the gold column on every token (2); "
                   f"is the same column given twice?\n")
    g = write(tmp_path, "g", "a B-PER\nb O\n")
    code, _, err = run(capsys, "score", g, g)
    assert err.startswith(f"iescore: warning: {g}: its last column equals that of {g} on every token (2)")


def test_disjoint_label_sets_warn(tmp_path, capsys):
    # a chunk column scored against an NE column: NP, VP vs PER, LOC, no label in common
    with pytest.warns(IEScoreWarning, match=r"no predicted label occurs in the reference .*"
                                            r"\(reference: 'NP' or 'VP'; prediction: 'LOC' or 'PER'\)"):
        score_tags(reference=[["B-NP", "I-NP", "B-VP"]], prediction=[["B-PER", "O", "B-LOC"]])
    f = write(tmp_path, "a", "a B-NP B-PER\nb I-NP O\nc B-VP B-LOC\n")
    code, _, err = run(capsys, "score", f)
    assert code == 0 and err.startswith("iescore: warning: no predicted label occurs in the reference")


def test_no_warning_for_ordinary_input(tmp_path, capsys, no_warnings):
    # one label in common (PER), one not (LOC only predicted): not suspicious
    score_tags(reference=[["B-PER", "O"]], prediction=[["B-PER", "B-LOC"]])
    # one label against another (a single wrong entity) is ordinary
    score_tags(reference=[["B-LOC"]], prediction=[["B-PER"]])
    # a prediction without any chunk is not "disjoint" either
    score_tags(reference=[["B-PER", "O"]], prediction=[["O", "O"]])
    # two labels a side, PER on both (once in the reference, twice predicted)
    score_tags(reference=[["B-PER", "B-LOC", "O"]], prediction=[["B-PER", "B-PER", "B-ORG"]])
    f = write(tmp_path, "a", "a B-PER B-PER\nb O B-LOC\n")
    code, _, err = run(capsys, "score", f)
    assert code == 0 and err == ""


# --- standard input ---------------------------------------------------------------------------------
def test_dash_reads_standard_input(monkeypatch, capsys):
    data = b"a B-PER B-PER\nb I-PER O\n"
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    code, out, _ = run(capsys, "score", "-", "--json")
    # PER [0,2) vs [0,1): tp 0, fp 1, fn 1
    d = json.loads(out)
    assert code == 0 and (d["overall"]["tp"], d["overall"]["fp"], d["overall"]["fn"]) == (0, 1, 1)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"a O b-per\n")))
    code, _, err = run(capsys, "score", "-")
    assert code == 2 and err.startswith("iescore: error: <stdin>:1 (prediction): invalid tag 'b-per'")
    monkeypatch.setattr(sys, "stdin", None)
    code, _, err = run(capsys, "score", "-")
    assert code == 2 and "no standard input to read" in err


def test_supertags_given_as_a_string_or_in_error():
    """``supertags="PER=NE"`` means what the CLI's --supertags means; malformed merges say why."""
    from iescore import Config, ConfigError

    assert Config(supertags="PER=NE, LOC=NE").supertags == (("LOC", "NE"), ("PER", "NE"))
    assert Config(supertags="PER=NE").supertags == Config(supertags={"PER": "NE"}).supertags
    # PER and LOC merged: one NE span predicted where a PER was expected is a hit
    r = score_tags(reference=[["B-PER"]], prediction=[["B-LOC"]], supertags="PER=NE,LOC=NE")
    assert (r.overall.tp, r.overall.fp, r.overall.fn) == (1, 0, 0)
    for bad, words in (("PER", "LABEL=SUPERTAG"), ([("PER", "NE"), ("PER", "X")], "two supertags"),
                       (5, "mapping"), ([("PER",)], "pair")):
        with pytest.raises(ConfigError, match=words):
            Config(supertags=bad)
