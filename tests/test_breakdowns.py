"""Breakdowns of precision, recall and F1 by mention length, seen / unseen strings and a
document attribute: the rows of small cases counted by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

import iescore
from iescore import Document, Span, Template
from iescore.errors import ConfigError, InputError
from iescore.render.breakdown_inputs import breakdowns, read_attributes, training_mentions
from iescore.render.breakdowns import (
    breakdown_csv,
    by_attribute,
    by_length,
    by_seen,
    format_breakdown,
    parse_breakdown,
)

FIX = Path(__file__).parent / "fixtures" / "breakdowns"


def _row(group, support, found, fn, predicted, tp, fp, p, r, f1):
    return {"group": group, "support": support, "found": found, "fn": fn, "predicted": predicted, "tp": tp,
            "fp": fp, "precision": p, "recall": r, "f1": f1}


def _report(**options):
    # d1: answers PER[0,1) (1 token), PER[2,4) (2), LOC[5,8) (3); predictions PER[0,2) (2 tokens,
    # one extra: matches PER[0,1) under O(1,1)), PER[2,4) (exact), LOC[6,7) (2 missing: no
    # match), ORG[4,5) (no answer). d2: answer X[0,6) (6 tokens) and the same prediction.
    ref = [Document("d1", tuple("abcdefgh"), (Span("PER", 0, 1), Span("PER", 2, 4), Span("LOC", 5, 8))),
           Document("d2", tuple("uvwxyz"), (Span("X", 0, 6),))]
    pred = [[Span("PER", 0, 2), Span("PER", 2, 4), Span("LOC", 6, 7), Span("ORG", 4, 5)], [Span("X", 0, 6)]]
    return iescore.score(reference=ref, prediction=pred, rule="O(1,1)", **options)


def test_by_length_each_item_in_its_own_group():
    b = by_length(_report())
    assert b.name == "length"
    assert list(b.rows) == [
        # answers of 1 token: PER[0,1) found; predictions of 1 token: LOC[6,7), ORG[4,5), both FP
        _row("1", 1, 1, 0, 2, 0, 2, 0.0, 1.0, 0.0),
        # answers of 2: PER[2,4) found; predictions of 2: PER[0,2) and PER[2,4), both TP
        _row("2", 1, 1, 0, 2, 2, 0, 1.0, 1.0, 1.0),
        # the 3-token answer LOC[5,8) missed; no prediction of 3 tokens
        _row("3", 1, 0, 1, 0, 0, 0, None, 0.0, None),
        _row("5+", 1, 1, 0, 1, 1, 0, 1.0, 1.0, 1.0),
    ]


def test_by_length_one_to_one_and_f1_from_p_and_r():
    # one-to-one O(1,1): the same pairs (no answer has two partners), the same rows
    assert list(by_length(_report(counting="one-to-one")).rows) == list(by_length(_report()).rows)
    # a group with P = 1/2 and R = 1/3: F1 = 2 * (1/2)(1/3) / (1/2 + 1/3) = 0.4
    ref = [Document("d", tuple("abcdefgh"), (Span("X", 0, 1), Span("X", 2, 3), Span("X", 4, 5)))]
    pred = [[Span("X", 0, 1), Span("X", 6, 7)]]
    (row,) = by_length(iescore.score(reference=ref, prediction=pred)).rows
    assert row == _row("1", 3, 1, 2, 2, 1, 1, 0.5, 1 / 3, pytest.approx(0.4))


def test_by_length_of_template_fillers_counts_words():
    ref = [Template("t", {"name": ["Al Roth", "Bo"]})]
    pred = [Template("t", {"name": ["Al Roth", "Cy Di Ed Fo Gu"]})]
    b = by_length(iescore.score_templates(reference=ref, prediction=pred))
    assert list(b.rows) == [_row("1", 1, 0, 1, 0, 0, 0, None, 0.0, None), _row("2", 1, 1, 0, 1, 1, 0, 1.0, 1.0, 1.0),
                            _row("5+", 0, 0, 0, 1, 0, 1, 0.0, None, None)]


def test_match_best_leaves_ignored_and_alternative_out():
    # match-best: the most confident prediction (0.9, exact) is TP; the other (0.1) is ignored;
    # of the two answers the matched one is TP and the other "alternative"
    ref = [Document("d", tuple("abcd"), (Span("X", 0, 1), Span("X", 2, 4)))]
    pred = [[Span("X", 0, 1, score=0.9), Span("X", 3, 4, score=0.1)]]
    b = by_length(iescore.score(reference=ref, prediction=pred, mode="match-best"))
    assert list(b.rows) == [_row("1", 1, 1, 0, 1, 1, 0, 1.0, 1.0, 1.0)]


def test_training_mentions_and_seen():
    assert training_mentions(str(FIX / "train.conll")) == {("PER", "Ada Lovelace"), ("LOC", "London"),
                                                             ("PER", "Paris Hilton")}
    ref = [Document("d", ("Ada", "Lovelace", "left", "Paris", "for", "London"),
                    (Span("PER", 0, 2), Span("LOC", 3, 4), Span("LOC", 5, 6)))]
    pred = [[Span("PER", 0, 2), Span("LOC", 3, 4), Span("PER", 5, 6)]]
    r = iescore.score(reference=ref, prediction=pred)
    b = by_seen(r, training_mentions(str(FIX / "train.conll")))
    # seen: answers PER "Ada Lovelace" (found) and LOC "London" (missed: predicted as PER);
    # predictions PER "Ada Lovelace" (TP). unseen: answer LOC "Paris" (found: "Paris" is not a
    # training mention, "Paris Hilton" is); predictions LOC "Paris" (TP) and PER "London"
    # (FP: the training file has London as LOC only)
    assert list(b.rows) == [_row("seen", 2, 1, 1, 1, 1, 0, 1.0, 0.5, pytest.approx(2 / 3)),
                            _row("unseen", 1, 1, 0, 2, 1, 1, 0.5, 1.0, pytest.approx(2 / 3))]
    # whitespace runs count as one space
    assert by_seen(r, {("PER", " Ada   Lovelace")}).rows[0]["support"] == 1


def test_seen_needs_texts():
    r = iescore.score_tags(reference=[["B-X", "O"]], prediction=[["B-X", "O"]])
    with pytest.raises(ConfigError, match="needs|reads the items' text"):
        by_seen(r, set())


def test_by_attribute_and_its_file():
    r = _report()
    b = by_attribute(r, {"d1": "news", "d2": "web"}, "source")
    assert b.name == "attribute:source"
    # news (d1): answers 3, found 2, missed 1; predictions 4, TP 2, FP 2
    assert list(b.rows) == [_row("news", 3, 2, 1, 4, 2, 2, 0.5, 2 / 3, pytest.approx(4 / 7)),
                            _row("web", 1, 1, 0, 1, 1, 0, 1.0, 1.0, 1.0)]
    assert list(by_attribute(r, lambda d: d[-1]).rows)[1]["group"] == "2"
    with pytest.raises(InputError, match=r"document 'd2' has no value \(1 of 2 documents"):
        by_attribute(r, {"d1": "news"}, "source")
    assert read_attributes(str(FIX / "sources.tsv")) == {"news#1": "news", "web#1": "web"}


def test_attribute_file_errors(tmp_path):
    p = tmp_path / "a.tsv"
    p.write_text("d1\tx\nd1 y\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"a.tsv:2: expected 'document-id<TAB>value'"):
        read_attributes(str(p))
    p.write_text("d1\tx\nd1\ty\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"a.tsv:2: document 'd1' is given a value twice"):
        read_attributes(str(p))


def test_parse_and_views():
    assert parse_breakdown("length") == ("length", None)
    assert parse_breakdown("seen:t.conll") == ("seen", "t.conll")
    assert parse_breakdown("attr:a.tsv") == ("attr", "a.tsv")
    for bad in ("lenght", "seen", "attr:", "length:x"):
        with pytest.raises(ConfigError, match="length, seen:TRAINFILE or attr:FILE"):
            parse_breakdown(bad)
    (b,) = breakdowns(_report(), [("length", None)])
    text = format_breakdown(b).splitlines()
    assert text[0] == "breakdown by length (tokens of each answer and each prediction)"
    assert text[2].split() == ["1", "1", "1", "0", "2", "0", "2", "0.00%", "100.00%", "0.00%"]
    assert text[4].split() == ["3", "1", "0", "1", "0", "0", "0", "n/a", "0.00%", "n/a"]
    rows = breakdown_csv(b)
    assert rows[0] == ["breakdown", "group", "support", "found", "fn", "predicted", "tp", "fp", "precision", "recall", "f1"]
    assert rows[3] == ["length", "3", 1, 0, 1, 0, 0, 0, "", "0.0", ""]


def test_html_report_shows_the_breakdowns(tmp_path, capsys):
    pytest.importorskip("jinja2")
    from iescore.cli import main
    from iescore.render.html import format_html

    page = format_html(_report(), breakdowns=[by_length(_report())])
    assert "<h2>Breakdown by length (tokens of each answer and each prediction)</h2>" in page
    # the group "3": precision n/a, recall 0.00, F1 n/a, support 1, found 0, FN 1, nothing predicted
    assert ("<tr><td>3</td><td>n/a</td><td>0.00</td><td>n/a</td><td>1</td><td>0</td><td>1</td><td>0</td><td>0</td>"
            "<td>0</td></tr>") in page
    out = tmp_path / "r.html"
    assert main(["report", "--example", "--html", str(out), "--breakdown", "length"]) == 0
    assert "<h2>Breakdown by length" in out.read_text(encoding="utf-8")
    assert "breakdown by length" in capsys.readouterr().out
