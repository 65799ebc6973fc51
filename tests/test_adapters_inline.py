"""The inline-tag (CMU Seminar Announcements) reader."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
from iescore.adapters.inline import parse_inline, read_seminar, write_inline

from iescore import InputError, Span, score

FIG1 = Path(__file__).parent / "fixtures" / "desitter_fig1.txt"


def test_de_sitter_figure_1_ao_answers_examples_1_and_2():
    (doc,) = read_seminar(str(FIG1), tokenizer="whitespace")
    d = doc.document
    assert len(d.tokens) == 101  # the figure numbers its words 1..101
    ao = {lab: sorted(s.to_inclusive() for s in d.spans if s.label == lab) for lab in ("location", "speaker", "stime")}
    assert ao["location"] == [(18, 25), (93, 100)]  # Example 2
    assert ao["speaker"] == [(54, 55), (57, 58)]
    assert ao["stime"] == [(14, 15), (88, 89)]
    assert doc.misaligned == 0


def test_de_sitter_figure_1_obd_template_examples_1_and_4():
    (doc,) = read_seminar(str(FIG1), tokenizer="whitespace")
    t = doc.document.template().slots
    assert t["location"] == (("CMU", ",", "Adamson", "Wing", "(", "Baker", "Hall", ")"),)  # Example 4
    assert t["speaker"] == (("Al", "Roth"), ("Ido", "Erev"))
    assert "etime" not in t  # "no end-time is provided"
    # Example 1's template has one start time: the two occurrences differ only in case
    ref = doc.document
    pred = [[Span("stime", 13, 15)]]  # "5:00 PM" found once
    only_stime = type(ref)(ref.id, ref.tokens, tuple(s for s in ref.spans if s.label == "stime"))
    r = score(reference=[only_stime], prediction=pred, setting="OBD", normaliser="lower")
    assert (r.overall.tp, r.overall.fp, r.overall.fn) == (1, 0, 0)
    r = score(reference=[only_stime], prediction=pred, setting="OBD")
    assert (r.overall.tp, r.overall.fp, r.overall.fn) == (1, 0, 1)


def test_markup_crossing_slots_and_angle_brackets_kept():
    doc = parse_inline("x", "<paragraph><sentence>in <location>DH 2315</sentence></location>. <me@cmu.edu></paragraph>",
                       tokenizer="whitespace")
    assert doc.text == "in DH 2315. <me@cmu.edu>"
    assert doc.slots == (("location", 3, 10),)
    assert [d.to_inclusive() for d in doc.document.spans] == [(2, 3)]
    assert doc.misaligned == 1  # "2315." is one whitespace token: the slot was expanded


def test_write_inline_round_trip_small():
    src = "Time: <stime>5:00</stime> in <location>Wean Hall</location>\n"
    doc = parse_inline("x", src, tokenizer="regex")
    assert write_inline(doc.text, doc.slots) == src


@pytest.mark.parametrize(
    "text, message",
    [
        ("a <stime>b", "x: <stime> is never closed"),
        ("a </stime>", "x:1: </stime> without an opening <stime>"),
        ("<stime>a\n<stime>b</stime>", "x:2: <stime> opened again before </stime>"),
    ],
)
def test_bad_markup(text, message):
    with pytest.raises(InputError, match=re.escape(message)):
        parse_inline("x", text, tokenizer="whitespace")


def test_whole_corpus_slot_counts(data):
    """SOURCE.txt: train/test stime 600/382, etime 248/183, speaker 419/337, location 356/286."""
    docs = read_seminar(str(data / "cmu-seminar-announcements"), tokenizer="regex")
    assert len(docs) == 301 + 185
    counts = Counter((d.id.split("/")[0], lab) for d in docs for lab, _, _ in d.slots)
    assert {k: counts[("training", k)] for k in ("stime", "etime", "speaker", "location")} == {
        "stime": 600, "etime": 248, "speaker": 419, "location": 356}
    assert {k: counts[("test", k)] for k in ("stime", "etime", "speaker", "location")} == {
        "stime": 382, "etime": 183, "speaker": 337, "location": 286}
    # every slot lands on tokens
    assert sum(len(d.document.spans) for d in docs) == sum(len(d.slots) for d in docs)


def test_whole_corpus_round_trips(data):
    """Writing the slots back as inline tags reproduces the slot markup of every file."""
    folder = data / "cmu-seminar-announcements"
    docs = read_seminar(str(folder), tokenizer="regex")
    markup = re.compile(r"</?(paragraph|sentence)>")
    inner_ws = re.compile(r"<(stime|etime|speaker|location)>(\s+)|(\s+)</(stime|etime|speaker|location)>")
    for d in docs:
        split, stem = d.id.split("/")
        raw = (folder / split / "pretagged" / f"{stem}.txt").read_text(encoding="latin-1")
        raw = "\n".join(raw.split("\n")[:-1] if raw.endswith("\n") else raw.split("\n")) + "\n"
        expected = markup.sub("", raw)
        # whitespace inside a slot tag is not part of the filler: it moves outside the tag
        expected = inner_ws.sub(lambda m: (m.group(2) + f"<{m.group(1)}>") if m.group(1) else (f"</{m.group(4)}>" + m.group(3)), expected)
        assert write_inline(d.text, d.slots) == expected, d.id
