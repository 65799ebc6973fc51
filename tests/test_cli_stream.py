"""`iescore score` streams: the file is read in batches into a Scorer that keeps totals,
and every number, view and signature is the one-shot report's.

The reference is the one-shot path (``read_conll`` read whole, one ``Scorer``), whose
numbers are themselves checked against conlleval.out (tests/test_conlleval_official.py)
and the brute-force scorer (tests/test_front_ends.py); the official conlleval.out numbers
are also checked here on the streaming path directly. Small blocks and batches force
many of both.
"""

from __future__ import annotations

import io
import json
import random
import sys
import warnings

import pytest
from test_conlleval_official import assert_official, official

import iescore.io.conll_stream as cs
from iescore import Config, ConfigError, InputError, Scorer
from iescore.cli import Progress, main
from iescore.io.conll import read_conll
from iescore.io.conll_stream import _fields, iter_conll, score_conll


def one_shot(path, pred=None, documents="auto", **options):
    s = Scorer(Config(scheme="auto").with_(**options))
    s.add_batch(read_conll(str(path), None if pred is None else str(pred), documents=documents))
    return s.report()


def streamed(path, pred=None, documents="auto", batch_tokens=37, **options):
    return score_conll(str(path), None if pred is None else str(pred), config=Config(scheme="auto").with_(**options),
                       documents=documents, batch_tokens=batch_tokens)


def same(a, b):
    assert a.to_dict() == b.to_dict()
    assert a.format_table() == b.format_table()
    assert a.signature == b.signature


@pytest.fixture(autouse=True)
def small_blocks(monkeypatch):
    monkeypatch.setattr(cs, "_CHUNK", 997)  # blocks end mid-line: lines go on across blocks


OPTIONS = [
    {},
    {"scheme": "IOB1"},
    {"scheme": "IOB2"},
    {"detail": "prf"},
    {"rule": "O(1,1)", "counting": "one-to-one"},
    {"mode": "match-best"},
    {"mode": "one-per-string"},
    {"average": "macro", "beta": 2.0, "supertags": (("PER", "NE"), ("ORG", "NE"))},
]


@pytest.mark.parametrize("documents", ["auto", "docstart", "sentence"])
@pytest.mark.parametrize("options", OPTIONS, ids=str)
def test_two_files_stream_as_one_shot(data, options, documents):
    gold = data / "conll2003-eng" / "eng.testa"  # -DOCSTART- lines, IOB1
    pred = data / "conll2003-shared-task-outputs" / "results" / "klein" / "eng.testa"
    same(streamed(gold, pred, documents, batch_tokens=4000, **options), one_shot(gold, pred, documents, **options))


@pytest.mark.parametrize("name", ["conll03_CflairWglove_lstmCrf_1_test_9302.txt",  # -DOCSTART- lines
                                  "conll03_CflairWnon_lstmCrf_1_test_9241.txt"])
@pytest.mark.parametrize("scheme", ["auto", "IOB2", "IOB1"])
def test_one_file_streams_as_one_shot(data, name, scheme):
    path = data / "conll2003-neural-outputs-spanner" / name
    for documents in ("auto", "sentence"):
        same(streamed(path, None, documents, batch_tokens=2500, scheme=scheme),
             one_shot(path, None, documents, scheme=scheme))


@pytest.mark.parametrize("team", ["florian", "klein", "whitelaw"])
def test_the_streaming_path_reproduces_conlleval_out(data, team):
    # the official conlleval.out numbers (an independent tool), on many batches
    out = data / "conll2003-shared-task-outputs" / "results" / team
    (tokens, phrases, found, correct), acc, types = official(out / "conlleval.out", "eng.testb")
    r = streamed(data / "conll2003-eng" / "eng.testb", out / "eng.testb", batch_tokens=3000)
    assert_official(r, (tokens, phrases, found, correct), acc, types)


def _random_file(rng, scheme_letters, n_lines, *, docstart, crlf, tokens=True):
    labels = ["PER", "LOC", "ORG"]
    out = []
    for _ in range(n_lines):
        r = rng.random()
        if r < 0.08:
            out.append("" if rng.random() < 0.8 else " \t")
        elif r < 0.1 and docstart:
            out.append("-DOCSTART- O O" if tokens else "O O")
        elif r < 0.11:
            out.append("-X- O O" if tokens else "O O")
        else:
            def tag():
                if rng.random() < 0.5:
                    return "O"
                return f"{rng.choice(scheme_letters)}-{rng.choice(labels)}"
            line = f"{tag()} {tag()}"
            out.append(f"w{rng.randrange(50)}\t{line}" if tokens else line)
    out += [""] * rng.randrange(3)  # trailing blank lines
    end = "\r\n" if crlf else "\n"
    return end.join(out) + (end if rng.random() < 0.5 else "")


@pytest.mark.parametrize("seed", range(12))
def test_generated_files_stream_as_one_shot(tmp_path, seed):
    """Property: random files (IOB1/IOB2/IOBES letters, -DOCSTART- and -X- lines, blank
    lines of spaces, CRLF ends, trailing blanks, two or three columns), every
    documents mode and scheme, tiny blocks and batches: the one-shot report."""
    rng = random.Random(seed)
    letters = [["B", "I"], ["I"], ["B", "I", "E", "S"]][seed % 3]
    text = _random_file(rng, letters, rng.randrange(1, 400), docstart=seed % 2 == 0, crlf=seed % 4 == 1,
                        tokens=seed % 5 != 0)
    path = tmp_path / "x.conll"
    path.write_bytes(text.encode())
    for documents in ("auto", "docstart", "sentence"):
        for scheme in ("auto", "IOBES" if "S" in letters else "IOB1"):
            for bt in (1, 13):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # (a file of O tags only: the same-column warning)
                    a = streamed(path, None, documents, batch_tokens=bt, scheme=scheme)
                    b = one_shot(path, None, documents, scheme=scheme)
                same(a, b)


def test_a_late_i_chunk_start_reads_the_file_again_as_iob1(tmp_path):
    # the first 300 sentences are B-/I- tags whose chunks all start with B- (IOB2 by
    # themselves); the last starts a chunk with I-: the whole file is IOB1, as one call says
    sent = "a B-PER B-PER\nb I-PER I-PER\nc O B-LOC\n\n"
    path = tmp_path / "late.conll"
    path.write_text(sent * 300 + "d I-LOC I-LOC\ne B-LOC O\n\n" + sent * 100)  # (IOB2-like batches after it)
    r = streamed(path, batch_tokens=50)
    assert r.signature.split("|")[5] == "scheme:IOB1"
    same(r, one_shot(path))


@pytest.mark.filterwarnings("ignore:.*the same column")
def test_a_late_s_tag_reads_the_file_again_as_iobes(tmp_path):
    # S- is no IOB2 tag: the first batches, IOB2 by themselves, cannot be kept
    sent = "a B-PER B-PER\nb E-PER E-PER\n\n"
    path = tmp_path / "late.conll"
    path.write_text(sent * 200 + "c S-LOC S-LOC\n")
    r = streamed(path, batch_tokens=30)
    assert r.signature.split("|")[5] == "scheme:IOBES"
    # 201 gold chunks (200 PER of two tokens, one LOC), all predicted exactly
    assert (r.overall.tp, r.overall.fp, r.overall.fn) == (201, 0, 0)
    same(r, one_shot(path))


@pytest.mark.filterwarnings("ignore:.*is the same column given twice:iescore.errors.IEScoreWarning")
def test_a_block_that_starts_with_a_blank_line_starts_a_sentence(tmp_path, monkeypatch):
    # blocks of 10 bytes: the first block is line 1; the second, "\nb O O\n", starts
    # with the blank line, so "b" starts a sentence: two sentences, two documents
    monkeypatch.setattr(cs, "_CHUNK", 10)
    path = tmp_path / "x.conll"
    path.write_text("a B-X B-X\n\nb O O\n")
    batches = list(iter_conll(str(path), documents="sentence"))
    assert [list(b.doc_ids) for b in batches] == [["x.conll#1", "x.conll#2"]]
    assert batches[0].reference.first.tolist() == [True, True]


def test_bad_input_gives_the_one_shot_error(data, tmp_path, monkeypatch):
    path = tmp_path / "bad.conll"
    path.write_text("a O O\n" * 500 + "b O\n")
    with pytest.raises(InputError) as streaming:
        streamed(path)
    with pytest.raises(InputError) as whole:
        one_shot(path)
    assert str(streaming.value) == str(whole.value) == f"{path}:501: 2 columns where earlier lines have 3: 'b O'"


def test_stdin_streams_as_the_file(data, monkeypatch, capsys):
    path = data / "conll2003-neural-outputs-spanner" / "conll03_CflairWglove_lstmCrf_1_test_9302.txt"
    assert main(["score", "--json", str(path)]) == 0
    from_file = json.loads(capsys.readouterr().out)
    monkeypatch.setattr(cs, "BATCH_TOKENS", 5000)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(path.read_bytes())))
    assert main(["score", "--json", "-"]) == 0
    from_stdin = json.loads(capsys.readouterr().out)
    # the same counts; the ids (and so the digest) name <stdin>, as one call names them
    assert {k: v for k, v in from_stdin.items() if k != "signature"} == {
        k: v for k, v in from_file.items() if k != "signature"}
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(path.read_bytes())))
    s = Scorer(scheme="auto")
    s.add_batch(read_conll("-"))
    assert from_stdin == s.report().to_dict()


def test_the_cli_table_is_the_one_shot_table(data, monkeypatch, capsys):
    gold = data / "conll2003-eng" / "eng.testb"
    pred = data / "conll2003-shared-task-outputs" / "results" / "chieu" / "eng.testb"
    monkeypatch.setattr(cs, "BATCH_TOKENS", 1000)
    assert main(["score", str(gold), str(pred), "--rule", "O(1,1)", "--counting", "one-to-one"]) == 0
    table = capsys.readouterr().out
    assert table == one_shot(gold, pred, rule="O(1,1)", counting="one-to-one").format_table() + "\n"


def test_a_totals_report_keeps_no_documents(data):
    r = streamed(data / "conll2003-eng" / "eng.testb",
                 data / "conll2003-shared-task-outputs" / "results" / "florian" / "eng.testb")
    assert r.n_documents == 231 and len(r.doc_ids) == 231  # counted, not kept
    for ask in (lambda: r.items(), r.per_document, lambda: r.counts(doc=0), lambda: r.cells, lambda: r.doc_ids[0]):
        with pytest.raises(ConfigError, match="kept totals only"):
            ask()
    s = Scorer(totals_only=True)
    with pytest.raises(ConfigError, match="cannot merge"):
        s.merge(Scorer())


def test_iter_conll_batches_are_whole_documents(data):
    path = data / "conll2003-eng" / "eng.testb"
    pred = data / "conll2003-shared-task-outputs" / "results" / "florian" / "eng.testb"
    batches = list(iter_conll(str(path), str(pred), batch_tokens=2000))
    one = read_conll(str(path), str(pred))
    assert sum(len(b.doc_ids) for b in batches) == len(one.doc_ids) == 231
    assert sum(b.n_tokens for b in batches) == one.n_tokens
    assert all(b.n_tokens >= 2000 for b in batches[:-1])  # cut at the first document start past 2000


@pytest.mark.parametrize("seed", range(30))
def test_fields_split_as_the_reference_reader(seed):
    """Property: the block splitter's fields are read_conll's (runs of characters other
    than ASCII space and tab), whatever other space characters the text holds."""
    from iescore.io.conll import _fields as one_line

    rng = random.Random(seed)
    alphabet = ["a", "B-X", " ", "\t", "\n"]  # ASCII: split in one call (every other seed)
    if seed % 2:
        alphabet += ["\x0b", "\x1c", "\xa0", "\u2003", "é", "\x85", "\u3000"]
    text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(60)))
    flat, n = _fields(text)
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    assert flat == [f for ln in lines for f in one_line(ln)]
    assert n.tolist() == [len(one_line(ln)) for ln in lines]


def test_progress_shows_only_on_a_terminal_after_two_seconds():
    clock = iter([0.0, 1.9, 2.5, 2.6, 3.0])
    out = io.StringIO()
    p = Progress(out, clock=lambda: next(clock), terminal=True)
    p(10, 100)  # 1.9 s: not yet
    assert out.getvalue() == ""
    p(25, 100)  # 2.5 s: a quarter of the bytes read -> 6 of 24 marks
    assert out.getvalue() == "\riescore: reading [######------------------]  25%"
    p(30, 100)  # 2.6 s: redrawn at most every 0.25 s
    p(75, 100)  # 3.0 s
    assert out.getvalue().endswith("\riescore: reading [##################------]  75%")
    p(100, 100)  # done: erased
    assert out.getvalue().endswith("\r" + " " * 54 + "\r")
    quiet = io.StringIO()
    q = Progress(quiet, clock=lambda: 10.0, terminal=False)
    q(50, 100)
    assert quiet.getvalue() == ""
    assert not Progress(io.StringIO()).on  # a StringIO is no terminal


def _read_all(path, **kw):
    """Everything the batches of ``iter_conll`` hold, per token, in file order."""
    out = []
    for b in iter_conll(str(path), tokens=True, **kw):
        tags = b.vocab.tags
        ends = list(b.doc_offsets[1:]) + [b.n_tokens]
        for doc, start, end in zip(b.doc_ids, b.doc_offsets, ends):
            for i in range(int(start), int(end)):
                out.append((doc, b.tokens[i] if b.tokens is not None else None, tags[b.reference.ids[i]],
                            tags[b.prediction.ids[i]], bool(b.reference.first[i]), b.where(i, "reference")))
    return out


@pytest.mark.parametrize("end", ["\n", "\r\n", "\r"])
def test_a_long_line_across_many_blocks_reads_as_in_one_block(tmp_path, monkeypatch, end):
    # a token of 40,000 characters (two-byte ones among them, so blocks cut characters in
    # two) on line 3, one of 25,000 spaces and x's on the last line (no line end): blocks
    # of 7 bytes read it over thousands of blocks; one block of the whole file reads it at once
    long_token = ("é" + "x" * 9) * 4000
    lines = ["a B-PER B-PER", "b I-PER O", long_token + " B-LOC B-LOC", "", "c O O", "-X- O O", "d B-ORG I-ORG",
             "y" * 25_000 + " I-ORG I-ORG"]
    path = tmp_path / "long.conll"
    path.write_bytes(end.join(lines).encode("utf-8"))
    monkeypatch.setattr(cs, "_CHUNK", path.stat().st_size + 1)
    whole = _read_all(path, documents="sentence")
    monkeypatch.setattr(cs, "_CHUNK", 7)
    assert _read_all(path, documents="sentence") == whole
    # and as the plain reference reader reads it: tokens, tags, sentence starts, lines
    ref = read_conll(str(path))
    assert [w[1] for w in whole] == ["a", "b", long_token, "c", "d", "y" * 25_000]
    assert [w[1] for w in whole] == list(ref.tokens)
    assert [w[2] for w in whole] == ["B-PER", "I-PER", "B-LOC", "O", "B-ORG", "I-ORG"]
    assert [w[3] for w in whole] == ["B-PER", "O", "B-LOC", "O", "I-ORG", "I-ORG"]
    assert [w[4] for w in whole] == [True, False, False, True, True, False]  # blank line 4 and -X- line 6
    assert [w[5] for w in whole] == [f"{path}:{n} (reference)" for n in (1, 2, 3, 5, 7, 8)]


@pytest.mark.parametrize("seed", range(20))
def test_lines_read_in_tiny_blocks_are_the_files_lines(tmp_path, seed):
    """Property: long lines, LF, CRLF and CR ends (a CR at a block's end may be half a CRLF),
    a byte-order mark, two-byte characters: the lines given block by block, blocks of 1 to
    12 bytes, are read_lines's."""
    from iescore.io.conll import read_lines

    rng = random.Random(seed)
    pieces = ["a", "é", " ", "\n", "\r", "\r\n", "x" * rng.randrange(1, 300)]
    text = ("\ufeff" if seed % 3 == 0 else "") + "".join(rng.choice(pieces) for _ in range(rng.randrange(1, 80)))
    path = tmp_path / "x.txt"
    path.write_bytes(text.encode("utf-8"))
    for chunk in (1, 2, 3, 5, 12, len(text) * 2 + 1):
        cs._CHUNK = chunk  # (the fixture puts it back)
        with open(path, "rb") as fh:
            src = cs._Lines(fh, "utf-8")
            got = []
            while (block := src.block()) is not None:
                got += block
        assert got == read_lines(str(path)), chunk


@pytest.mark.parametrize("space", ["\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x1f"])
def test_ascii_spaces_other_than_space_and_tab_stay_in_their_field(space):
    # str.split() would split at these; the reference reader splits at spaces and tabs only
    flat, n = _fields(f"a{space}b B-X O\n\nc O O\n")
    assert flat == [f"a{space}b", "B-X", "O", "c", "O", "O"] and n.tolist() == [3, 0, 3]


def test_columns_are_runs_of_characters_other_than_space_and_tab(tmp_path):
    # tabs separate columns, so do runs of spaces and tabs; blanks at either end of a line
    # are ignored, a line of blanks is blank, and a non-breaking space is part of its token.
    # (conlleval.pl splits at each single space: it reads line 1 as one column and stops.)
    path = tmp_path / "blanks.conll"
    path.write_bytes("a\tB-PER\tB-PER\n  b  I-PER \t I-PER  \n \t \nNew\u00a0York B-LOC O\n".encode())
    want = [("blanks.conll#1", "a", "B-PER", "B-PER", True, f"{path}:1 (reference)"),
            ("blanks.conll#1", "b", "I-PER", "I-PER", False, f"{path}:2 (reference)"),
            ("blanks.conll#2", "New\u00a0York", "B-LOC", "O", True, f"{path}:4 (reference)")]
    assert _read_all(path, documents="sentence") == want
    ref = read_conll(str(path), documents="sentence")
    assert list(ref.tokens) == ["a", "b", "New\u00a0York"]


def test_the_type_0_is_a_label(tmp_path, capsys):
    # gold B-0 I O, prediction B-0 I B-X. iescore: "0" is a type, "" (the bare I) another, so
    # I after B-0 starts a chunk: gold 0[0,1) and [1,2), prediction the same and X[2,3):
    # 2 phrases, 3 found, 2 correct; accuracy 2/3, P = 2/3, R = 1, F1 = 0.8. conlleval.pl
    # reads the type "0" as "" (Perl's "0" is false): one chunk [0,2) on each side,
    # "processed 3 tokens with 1 phrases; found: 2 phrases; correct: 1." (run by hand).
    path = tmp_path / "zero.conll"
    path.write_text("a B-0 B-0\nb I I\nc O B-X\n")
    assert main(["score", str(path)]) == 0
    lines = capsys.readouterr().out.split("\n")
    assert lines[:2] == ["processed 3 tokens with 2 phrases; found: 3 phrases; correct: 2.",
                         "accuracy:  66.67%; precision:  66.67%; recall: 100.00%; FB1:  80.00"]
    assert "                0: precision: 100.00%; recall: 100.00%; FB1: 100.00  1" in lines
