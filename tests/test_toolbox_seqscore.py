"""seqscore (an independent CoNLL toolbox) against iescore's toolbox: the same invalid
transitions, repairs, conversions and mention counts, on every three tags in a row and on
CoNLL-2003 (the gold files and the 16 shared-task outputs on the test set)."""

from __future__ import annotations

import itertools
from collections import Counter

import pytest
from conftest import require
from test_conlleval_official import TEAMS

from iescore.toolbox.columns import read_columns
from iescore.toolbox.commands import convert_file, repair_file, summarize_file, validate_file
from iescore.toolbox.tags import invalid_transitions

require("seqscore")
from seqscore.conll import (
    LineSpec,
    ingest_conll_file,
    validate_conll_file,
    write_docs_using_encoding,
)
from seqscore.encoding import get_encoding
from seqscore.validation import validate_labels

# iescore's scheme -> seqscore's encoding of it
THEIRS = {"IO": "IO", "IOB1": "IOB", "IOB2": "BIO", "IOBES": "BIOES", "BILOU": "BILOU", "BMES": "BMES", "BMEOW": "BMEOW"}
SPEC = LineSpec(0, -1)


@pytest.mark.parametrize("scheme", THEIRS)
def test_every_pair_of_tags_is_invalid_where_seqscore_says_so(scheme):
    """Two tags of two labels, or O, in every order: seqscore's errors (its transitions,
    the sentence's start and end included) are iescore's invalid transitions."""
    enc = get_encoding(THEIRS[scheme])
    d = enc.dialect
    letters = [x for x in dict.fromkeys((d.begin, d.inside, d.end, d.single)) if x and enc.is_valid_state(x)]
    tags = ["O"] + [f"{x}-{label}" for x in letters for label in ("X", "Y")]
    for a, b, c in itertools.product(tags, repeat=3):
        theirs = validate_labels([a, b, c], enc).errors
        ours = invalid_transitions([a, b, c], scheme)
        assert len(ours) == len(theirs), (scheme, a, b, c)
        assert [t.after for t in ours] == [e.label if "end of sequence" not in e.msg else "O" for e in theirs]


def two_columns(data, part, team, tmp_path):
    """The gold file's token beside a tag (the gold's, or a team's): the file seqscore reads."""
    gold = (data / "conll2003-eng" / f"eng.{part}").read_text(encoding="utf-8").split("\n")
    pred = None
    if team:
        pred = (data / "conll2003-shared-task-outputs" / "results" / team / f"eng.{part}").read_text(
            encoding="utf-8").split("\n")
    rows = []
    for k, line in enumerate(gold):
        fields = line.split()
        rows.append(f"{fields[0]} {(pred[k].split() if pred else fields)[-1]}" if fields else "")
    path = tmp_path / f"{team or 'gold'}.{part}.txt"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def ours_path(data, part, team):
    if team is None:
        return data / "conll2003-eng" / f"eng.{part}"
    return data / "conll2003-shared-task-outputs" / "results" / team / f"eng.{part}"


def seqscore_docs(path, scheme, repair=None):
    return ingest_conll_file(str(path), THEIRS[scheme], "utf-8", SPEC, repair=repair,
                             ignore_document_boundaries=False, allow_comment_lines=False, quiet=True)


def seqscore_labels(path):
    """The last field of each token line of a file seqscore wrote (-DOCSTART- lines aside)."""
    return [line.split("\t")[-1] for line in path.read_text(encoding="utf-8").split("\n")
            if line and not line.startswith("-DOCSTART-")]


@pytest.mark.parametrize("team,part", [(None, "testa"), *((t, "testb") for t in [None, *TEAMS])])
def test_validate_and_summarize_count_what_seqscore_counts(data, part, team, tmp_path):
    theirs_path = two_columns(data, part, team, tmp_path)
    ours = ours_path(data, part, team)
    for scheme in ("IOB1", "IOB2"):
        theirs = validate_conll_file(str(theirs_path), THEIRS[scheme], "utf-8", SPEC,
                                     ignore_document_boundaries=False, allow_comment_lines=False)
        result = validate_file(str(ours), scheme, "last")
        assert result.counts == {"last": len(theirs.errors)}, scheme
        # the same lines, in the same order
        assert [int(line.split(":")[1]) for line in result.lines] == [e.line_num for e in theirs.errors]
    docs = seqscore_docs(theirs_path, "IOB1", "conlleval")
    summary = summarize_file(str(ours), "last", scheme="IOB1")
    assert summary["mentions"] == dict(sorted(Counter(m.type for d in docs for s in d for m in s.mentions).items()))
    if team is None:  # the gold file has the -DOCSTART- lines and tokens seqscore reads
        assert summary["documents"] == len(docs)
        assert summary["sentences"] == sum(map(len, docs))
        assert summary["tokens"] == sum(len(s) for d in docs for s in d)
        strings = summarize_file(str(ours), "last", scheme="IOB1", strings=True)["strings"]
        theirs_strings = Counter((m.type, " ".join(s.mention_tokens(m))) for d in docs for s in d for m in s.mentions)
        assert {(t, s): n for t, per in strings.items() for s, n in per.items()} == dict(theirs_strings)


@pytest.mark.parametrize("part", ["testb"])
@pytest.mark.parametrize("target", ["IO", "IOB2", "IOBES", "BILOU", "BMES", "BMEOW"])
def test_convert_writes_what_seqscore_writes(data, part, target, tmp_path):
    theirs_path = two_columns(data, part, None, tmp_path)
    write_docs_using_encoding(seqscore_docs(theirs_path, "IOB1"), THEIRS[target], "utf-8", "\t", SPEC,
                              tmp_path / "theirs.txt")
    out = tmp_path / "ours.txt"
    convert_file(str(ours_path(data, part, None)), str(out), "IOB1", target, labels="last")
    assert read_columns(str(out), "last").tags["last"] == seqscore_labels(tmp_path / "theirs.txt")
    # and back: every scheme but IO keeps every chunk boundary
    if target != "IO":
        back = tmp_path / "back.txt"
        convert_file(str(out), str(back), target, "IOB1", labels="last")
        assert back.read_bytes() == ours_path(data, part, None).read_bytes()


@pytest.mark.parametrize("team,part,scheme,repair", [
    ("whitelaw", "testa", "IOB2", "conlleval"), ("whitelaw", "testb", "IOB2", "discard"),
    ("hendrickx", "testb", "IOB1", "conlleval"), ("demeulder", "testb", "IOB1", "conlleval"),
    ("whitelaw", "testb", "IOB1", "conlleval"),
])
def test_repair_writes_what_seqscore_writes(data, team, part, scheme, repair, tmp_path):
    theirs_path = two_columns(data, part, team, tmp_path)
    docs = seqscore_docs(theirs_path, scheme, repair)
    write_docs_using_encoding(docs, THEIRS[scheme], "utf-8", "\t", SPEC, tmp_path / "theirs.txt")
    out = tmp_path / "ours.txt"
    repair_file(str(ours_path(data, part, team)), str(out), scheme, repair, labels="last")
    theirs = seqscore_labels(tmp_path / "theirs.txt")
    written = read_columns(str(out), "last")
    # the prediction files hold the -DOCSTART- lines' tags ("O") as tokens; seqscore's has none
    keep = {k + 1 for k, line in enumerate(theirs_path.read_text(encoding="utf-8").split("\n"))
            if line and not line.startswith("-DOCSTART-")}
    ours = [t for t, line in zip(written.tags["last"], written.lines) if line in keep]
    assert ours == theirs
    assert validate_file(str(out), scheme, "last").ok
