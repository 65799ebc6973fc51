"""Error counts (false positives and false negatives by label and string): a small file
worked out by hand, what is and is not counted, every output format whole, the command
line, and the HTML report's list of errors in a real browser (chromium).

tests/fixtures/errors.conll (token, gold tag, predicted tag; IOB2, a document per sentence):

1. Newmont bid for [Santa Fe]ORG .           predicted [Santa Fe]LOC
2. [Santa Fe]ORG shares rose in [New York]LOC .   predicted [Santa Fe]LOC, [New]LOC
3. [Czech]MISC crowns fell in [Prague]LOC .   predicted [Czech]LOC, [Prague]LOC
4. [Czech]MISC president [Vaclav Havel]PER spoke .   predicted [Czech]MISC, [Havel]PER

FP (predicted, no equal answer): LOC "Santa Fe" twice (1, 2), LOC "New" (2), LOC "Czech"
(3), PER "Havel" (4); FN (answers, no equal prediction): ORG "Santa Fe" twice, LOC "New
York", MISC "Czech", PER "Vaclav Havel". Newmont, Prague and the second Czech are TPs.
8 rows, 10 errors; ranked by count, then FP before FN, label, text.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import require

import iescore
from iescore import Document, Scorer, Span
from iescore.cli import main
from iescore.errors import ConfigError
from iescore.io.conll import read_conll
from iescore.render.errorcounts import error_counts, format_error_counts
from iescore.render.formats import format_report, report_pieces

FIXTURE = Path(__file__).parent / "fixtures" / "errors.conll"

# worked out by hand from the docstring's sentences
ROWS = [
    (2, "FP", "LOC", "Santa Fe"),
    (2, "FN", "ORG", "Santa Fe"),
    (1, "FP", "LOC", "Czech"),
    (1, "FP", "LOC", "New"),
    (1, "FP", "PER", "Havel"),
    (1, "FN", "LOC", "New York"),
    (1, "FN", "MISC", "Czech"),
    (1, "FN", "PER", "Vaclav Havel"),
]
BLOCK5 = """\
error counts (FP: predicted, not matched; FN: in the reference, not matched): 5 of 8 rows, 10 errors
count  error  label  text
    2  FP     LOC    Santa Fe
    2  FN     ORG    Santa Fe
    1  FP     LOC    Czech
    1  FP     LOC    New
    1  FP     PER    Havel"""


def dicts(rows):
    return [dict(zip(("count", "error", "label", "text"), r)) for r in rows]


@pytest.fixture(scope="module")
def report():
    s = Scorer()
    s.add_batch(read_conll(str(FIXTURE)))
    return s.report()


def test_the_rows_are_those_worked_out_by_hand(report):
    assert error_counts(report) == dicts(ROWS)
    assert error_counts(report, "all") == dicts(ROWS)
    assert error_counts(report, 3) == dicts(ROWS[:3])
    assert error_counts(report, 100) == dicts(ROWS)
    o = report.overall
    assert (o.fp, o.fn) == (5, 5)  # every FP and FN once, the TPs not at all


@pytest.mark.parametrize("top", [0, -1, 2.0, True, "5", "some"])
def test_a_top_that_is_not_a_positive_number_is_refused(report, top):
    with pytest.raises(ConfigError, match="positive number of rows or 'all'"):
        error_counts(report, top)


def test_ignored_and_alternative_items_are_not_counted():
    # match-best keeps the first prediction per document and label ("met", no answer: FP)
    # and one FN among the answers (the first, "Al Roth"); "Cy" is ignored, "Bo" alternative
    ref = Document("d1", ("Al", "Roth", "met", "Bo", "and", "Cy"), (Span("PER", 0, 2), Span("PER", 3, 4)))
    r = iescore.score(reference=[ref], prediction=[[Span("PER", 2, 3), Span("PER", 5, 6)]], mode="match-best")
    assert sorted(it["status"] for side in ("reference", "prediction") for it in r.items(side)) == [
        "FN", "FP", "alternative", "ignored"]
    assert error_counts(r) == dicts([(1, "FP", "PER", "met"), (1, "FN", "PER", "Al Roth")])


def test_character_input_counts_the_documents_characters():
    from iescore.io.chars import TextDocument
    from iescore.io.textscore import score_text

    text = "Al  Roth met Santa Fe.\nSanta Fe won."
    ref = TextDocument("d1", text, (Span("PER", 0, 8), Span("LOC", 13, 21), Span("ORG", 23, 31)))
    pred = TextDocument("d1", text, (Span("PER", 4, 8), Span("ORG", 13, 21), Span("ORG", 23, 31)))
    r = score_text([ref], [pred], level="characters")
    # the text as the document spells it: two spaces kept
    assert error_counts(r) == dicts([(1, "FP", "ORG", "Santa Fe"), (1, "FP", "PER", "Roth"),
                                     (1, "FN", "LOC", "Santa Fe"), (1, "FN", "PER", "Al  Roth")])


def test_a_line_break_in_a_text_is_written_visibly_in_the_block():
    from iescore.io.chars import TextDocument
    from iescore.io.textscore import score_text

    text = "Santa\nFe"
    r = score_text([TextDocument("d", text, (Span("LOC", 0, 8),))], [TextDocument("d", text, ())], level="characters")
    assert error_counts(r) == dicts([(1, "FN", "LOC", "Santa\nFe")])
    assert format_error_counts(r).split("\n")[2] == "    1  FN     LOC    Santa\\nFe"


def test_reports_without_items_or_texts_are_refused():
    r = iescore.score_tags(reference=[["B-PER", "O"]], prediction=[["O", "B-PER"]])  # no tokens: no text
    with pytest.raises(ConfigError, match="no.*text|none.*tokens"):
        error_counts(r)
    assert error_counts(iescore.score_tags(reference=[["B-PER"]], prediction=[["B-PER"]])) == []  # no error
    s = Scorer(totals_only=True)
    s.add_batch(read_conll(str(FIXTURE)))
    with pytest.raises(ConfigError, match="not kept"):
        error_counts(s.report())


def test_the_table_block_whole(report):
    assert format_error_counts(report, 5) == BLOCK5
    lines = format_report(report, "table", error_counts=5).split("\n")
    # before the signature line, after the rest (and after the confusion table)
    assert lines[-8:-1] == BLOCK5.split("\n") and lines[-1].startswith("signature: ")
    both = format_report(report, "table", confusion=True, error_counts=5).split("\n")
    assert both[-8:-1] == BLOCK5.split("\n") and both[-9].startswith("        none")
    assert format_report(report, "table") == "\n".join(lines[:-8] + lines[-1:])
    one = format_error_counts(report, 1).split("\n")
    assert one[0].endswith(": 1 of 8 rows, 10 errors") and len(one) == 3
    assert format_error_counts(report).split("\n")[0].endswith(": 8 rows, 10 errors")


def test_the_json_key_whole(report):
    d = json.loads(format_report(report, "json", error_counts=3))
    assert list(d)[-1] == "error_counts"
    assert d["error_counts"] == dicts(ROWS[:3])
    assert json.loads("".join(report_pieces(report, "json", error_counts="all")))["error_counts"] == dicts(ROWS)
    assert "error_counts" not in json.loads(format_report(report, "json"))
    assert {k: v for k, v in d.items() if k != "error_counts"} == report.to_dict()


def test_the_csv_and_markdown_sections_whole(report):
    csv_text = format_report(report, "csv", error_counts=3)
    plain = format_report(report, "csv")
    assert csv_text == plain + "\n\ncount,error,label,text\n2,FP,LOC,Santa Fe\n2,FN,ORG,Santa Fe\n1,FP,LOC,Czech"
    md = format_report(report, "markdown", error_counts=2).split("\n")
    assert md[-9:] == [
        "",
        "Error counts (FP: predicted, not matched; FN: in the reference, not matched): 2 of 8 rows, 10 errors:",
        "",
        "| count | error | label | text |",
        "|---:|---|---|---|",
        "| 2 | FP | LOC | Santa Fe |",
        "| 2 | FN | ORG | Santa Fe |",
        "",
        f"Signature: `{report.signature}`",
    ]


# --- the command line ----------------------------------------------------------------------

def test_score_prints_the_block(capsys):
    assert main(["score", str(FIXTURE), "--error-counts", "5"]) == 0
    out = capsys.readouterr().out.rstrip("\n").split("\n")
    assert out[-8:-1] == BLOCK5.split("\n") and out[-1].startswith("signature: ")
    assert main(["score", str(FIXTURE), "--error-counts"]) == 0  # all rows
    out = capsys.readouterr().out.rstrip("\n").split("\n")
    assert out[-11].endswith(": 8 rows, 10 errors") and out[-2] == "    1  FN     PER    Vaclav Havel"
    assert main(["score", str(FIXTURE)]) == 0
    assert "error counts" not in capsys.readouterr().out


def test_score_json_and_csv(capsys):
    assert main(["score", str(FIXTURE), "--format", "json", "--error-counts=2"]) == 0
    assert json.loads(capsys.readouterr().out)["error_counts"] == dicts(ROWS[:2])
    assert main(["score", str(FIXTURE), "--format", "csv", "--error-counts", "1"]) == 0
    assert capsys.readouterr().out.endswith("\n\ncount,error,label,text\n2,FP,LOC,Santa Fe\n")


def test_a_file_read_as_the_number_of_rows_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["score", "--error-counts", str(FIXTURE)])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "--error-counts: expected a positive number of rows or all" in err and "before --error-counts" in err


def test_report_prints_the_block_and_the_page_lists_the_rows(tmp_path, capsys):
    require("jinja2")
    out = tmp_path / "r.html"
    assert main(["report", str(FIXTURE), "--html", str(out), "--error-counts", "2"]) == 0
    assert "\n".join(capsys.readouterr().out.split("\n")[-5:-2]) == "\n".join(BLOCK5.split("\n")[1:4])
    page = out.read_text(encoding="utf-8")
    assert page.count('class="click err-row"') == 2 and "the first 2 of 8 rows, 10 errors" in page


# --- the HTML report ---------------------------------------------------------------------------

def test_the_page_says_when_the_items_have_no_text():
    require("jinja2")
    from iescore.render.html import format_html

    page = format_html(iescore.score_tags(reference=[["B-PER", "O"]], prediction=[["O", "B-PER"]]))
    assert "Not listed: the items have no text" in page and 'id="error-counts"' not in page
    page = format_html(iescore.score_tags(reference=[["B-PER"]], prediction=[["B-PER"]], tokens=[["Ada"]]))
    assert "No false positives and no false negatives." in page


def test_in_a_browser_each_error_is_a_line_in_context_linked_to_its_document(tmp_path):
    require("jinja2")
    from test_html_report import browser

    from iescore.render.html import write_html

    batch = read_conll(str(FIXTURE))
    s = Scorer()
    s.add_batch(batch)
    r = s.report()
    page = tmp_path / "errors.html"
    from iescore.render.report_cli import batch_tokens

    write_html(r, str(page), batch_tokens(batch))
    closed = browser(page)
    assert not [a for t, a in closed.elements if t == "a" and "data-error" in a]  # rows closed at first
    rows = [a for t, a in closed.elements if t == "tr" and a.get("class") == "click err-row"]
    assert len(rows) == 8
    dom = browser(page, "errors=all")
    lines = [a for t, a in dom.elements if t == "a" and "data-error" in a]
    # one line per error, under its row, in item order; the link: the document, the item
    assert [(a["data-error"], a["data-error-label"], a["data-docid"], a["href"]) for a in lines] == [
        ("FP", "LOC", "errors.conll#1", "#doc=0&mark=prediction:1"),
        ("FP", "LOC", "errors.conll#2", "#doc=1&mark=prediction:2"),
        ("FN", "ORG", "errors.conll#1", "#doc=0&mark=reference:1"),
        ("FN", "ORG", "errors.conll#2", "#doc=1&mark=reference:2"),
        ("FP", "LOC", "errors.conll#3", "#doc=2&mark=prediction:4"),
        ("FP", "LOC", "errors.conll#2", "#doc=1&mark=prediction:3"),
        ("FP", "PER", "errors.conll#4", "#doc=3&mark=prediction:7"),
        ("FN", "LOC", "errors.conll#2", "#doc=1&mark=reference:3"),
        ("FN", "MISC", "errors.conll#3", "#doc=2&mark=reference:4"),
        ("FN", "PER", "errors.conll#4", "#doc=3&mark=reference:7"),
    ]
    text = "".join(dom.text)
    # three tokens of context on either side, an ellipsis where the document goes on
    assert "FPLOCNewmont bid for Santa Fe .errors.conll#1" in text
    assert "FPLOCSanta Fe shares rose in \u2026errors.conll#2" in text
    assert "FPLOC\u2026 shares rose in New York .errors.conll#2" in text
    assert "FNPERCzech president Vaclav Havel spoke .errors.conll#4" in text
    # the link shows its document alone and marks the item and its aligned partner
    dom = browser(page, "doc=1&mark=prediction:3")
    assert [a["data-doc"] for t, a in dom.elements if t == "div" and "data-doc" in a] == ["errors.conll#2"]
    marked = [(a["data-side"], a["data-item"]) for a in dom.spans() if "hl" in (a.get("class") or "").split()]
    assert marked == [("reference", "3"), ("prediction", "3")]  # New York ~ New, aligned


def test_in_a_browser_the_florian_pages_lines_are_the_reports_errors(data, tmp_path):
    # CoNLL-2003 eng.testb against the florian output: the first 50 rows (their counts are
    # seqscore's, tests/test_error_counts_seqscore.py), every occurrence a line, each line
    # the FP prediction or FN answer of its row, found here from Report.items
    require("jinja2")
    from test_html_report import browser

    gold = data / "conll2003-eng" / "eng.testb"
    pred = data / "conll2003-shared-task-outputs" / "results" / "florian" / "eng.testb"
    page = tmp_path / "florian.html"
    assert main(["report", str(gold), str(pred), "--html", str(page), "--scheme", "IOB1"]) == 0
    s = Scorer(scheme="IOB1")
    s.add_batch(read_conll(str(gold), str(pred)))
    r = s.report()
    number = {d: k for k, d in enumerate(r.doc_ids)}
    want: dict[tuple[str, str, str], list[tuple[str, str, str, str]]] = {}
    for side, error in (("prediction", "FP"), ("reference", "FN")):
        for k, it in enumerate(r.items(side)):
            if it["status"] == error:
                want.setdefault((error, it["label"], it["text"]), []).append(
                    (error, it["label"], it["doc"], f"#doc={number[it['doc']]}&mark={side}:{k}"))
    rows = error_counts(r, 50)
    assert rows[0] == {"count": 15, "error": "FP", "label": "LOC", "text": "Santa Fe"}
    dom = browser(page, "errors=all")
    assert len([a for t, a in dom.elements if t == "tr" and a.get("class") == "click err-row"]) == 50
    lines = [(a["data-error"], a["data-error-label"], a["data-docid"], a["href"])
             for t, a in dom.elements if t == "a" and "data-error" in a]
    assert lines == [line for row in rows for line in want[row["error"], row["label"], row["text"]]]
    assert len(lines) == sum(row["count"] for row in rows)


def test_in_a_browser_an_errors_string_and_label_are_text(tmp_path):
    require("jinja2")
    from collections import Counter

    from test_html_report import EVIL_LABEL, EVIL_TOKEN, browser, evil_report

    from iescore.render.html import write_html

    r, tokens = evil_report()  # FP PER and FN <the label> on the token "<script>alert(1)</script>"
    assert error_counts(r) == dicts([(1, "FP", "PER", EVIL_TOKEN), (1, "FN", EVIL_LABEL, EVIL_TOKEN)])
    page = tmp_path / "evil.html"
    write_html(r, str(page), tokens)
    dom = browser(page, "errors=all")
    tags = Counter(t for t, _ in dom.elements)
    assert tags["img"] == 0 and tags["script"] == 2 and tags["mark"] == 2
    lines = [a for t, a in dom.elements if t == "a" and "data-error" in a]
    assert [a["data-error-label"] for a in lines] == ["PER", EVIL_LABEL]
    assert "".join(dom.text).count(EVIL_TOKEN + " met Ada") == 2  # each line's string and its context, as text
