"""The SemEval-2013 scenarios per label (``--semeval``) and the per-document scores
(``--per-document``) in CSV and Markdown, and the HTML page's scenarios table and
document-macro line, for tests/fixtures/errors.conll.

Every count below is read off the fixture by hand (four sentences, each a document):

1. Newmont ORG / ORG; Santa Fe ORG / LOC        (a correct pair, a wrong label)
2. Santa Fe ORG / LOC; New York LOC / New LOC   (a wrong label, a wrong boundary)
3. Czech MISC / LOC; Prague LOC / LOC           (a wrong label, a correct pair)
4. Czech MISC / MISC; Vaclav Havel PER / Havel PER   (a correct pair, a wrong boundary)

Overall, 8 answers and 8 predictions all aligned: strict COR 3 INC 5; exact (extent only)
COR 6 INC 2; partial COR 6 PAR 2; type (overlapping, same label) COR 5 INC 3. Per label
each label is scored on its own items: LOC's answers are New York and Prague, its
predictions the two Santa Fe, New, Czech and Prague (3 of them overlap no LOC answer:
SPU 3); MISC has the two Czech answers and one prediction (MIS 1); ORG three answers and
Newmont predicted (MIS 2); PER one answer, Havel predicted. The measures follow from the
definitions: P = (COR + PAR/2)/ACT, R = (COR + PAR/2)/POS, F1 = 2 (COR + PAR/2)/(POS + ACT).
"""

from __future__ import annotations

import csv
import io
from fractions import Fraction
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from conftest import require

from iescore import Config, Scorer
from iescore.cli import main
from iescore.errors import ConfigError
from iescore.io.conll import read_conll
from iescore.render.formats import format_report

FIXTURE = str(Path(__file__).parent / "fixtures" / "errors.conll")
SCENARIOS = ("strict", "exact", "partial", "type")
# (COR, INC, PAR, MIS, SPU) per scenario, by hand (the module's docstring)
COUNTS = {
    "overall": {"strict": (3, 5, 0, 0, 0), "exact": (6, 2, 0, 0, 0), "partial": (6, 0, 2, 0, 0), "type": (5, 3, 0, 0, 0)},
    "LOC": {"strict": (1, 1, 0, 0, 3), "exact": (1, 1, 0, 0, 3), "partial": (1, 0, 1, 0, 3), "type": (2, 0, 0, 0, 3)},
    "MISC": dict.fromkeys(SCENARIOS, (1, 0, 0, 1, 0)),
    "ORG": dict.fromkeys(SCENARIOS, (1, 0, 0, 2, 0)),
    "PER": {"strict": (0, 1, 0, 0, 0), "exact": (0, 1, 0, 0, 0), "partial": (0, 0, 1, 0, 0), "type": (1, 0, 0, 0, 0)},
}
# (doc, tp, fp, fn) per sentence, by hand
DOCS = [("errors.conll#1", 1, 1, 1), ("errors.conll#2", 0, 2, 2), ("errors.conll#3", 1, 1, 1), ("errors.conll#4", 1, 1, 1)]


def ratio(a: Fraction, b: int) -> Fraction | None:
    return None if b == 0 else a / b


def semeval_expected() -> list[tuple[Any, ...]]:
    rows = []
    for scenario in SCENARIOS:
        for label in ("overall", "LOC", "MISC", "ORG", "PER"):
            cor, inc, par, mis, spu = COUNTS[label][scenario]
            pos, act = cor + inc + par + mis, cor + inc + par + spu
            hit = cor + Fraction(par, 2)
            rows.append((scenario, label, cor, inc, par, mis, spu, pos, act,
                         ratio(hit, act), ratio(hit, pos), ratio(2 * hit, pos + act)))
    return rows


def documents_expected() -> list[tuple[Any, ...]]:
    return [(d, tp, fp, fn, ratio(Fraction(tp), tp + fp), ratio(Fraction(tp), tp + fn),
             ratio(Fraction(2 * tp), 2 * tp + fp + fn)) for d, tp, fp, fn in DOCS]


def run(capsys, *args: str) -> str:
    capsys.readouterr()
    assert main(["score", FIXTURE, *args]) == 0
    return capsys.readouterr().out


def sections(text: str) -> list[list[list[str]]]:
    """The CSV output's sections (blank-line separated), each a list of rows; the signature
    comment left out."""
    body = "\n".join(line for line in text.splitlines() if not line.startswith("# signature"))
    return [list(csv.reader(io.StringIO(part))) for part in body.split("\n\n")]


def cell(x: Fraction | None) -> float | str:
    return "" if x is None else float(x)


def test_csv_sections_are_the_hand_counts(capsys):
    parts = sections(run(capsys, "--semeval", "--per-document", "--format", "csv"))
    assert len(parts) == 3  # the label table, the scenarios, the documents
    sem = parts[1]
    assert sem[0] == ["scenario", "label", "COR", "INC", "PAR", "MIS", "SPU", "POS", "ACT", "precision", "recall", "f1"]
    want = semeval_expected()
    assert [(*r[:2], *map(int, r[2:9])) for r in sem[1:]] == [r[:9] for r in want]
    assert [[float(x) for x in r[9:]] for r in sem[1:]] == [pytest.approx([cell(x) for x in r[9:]]) for r in want]
    # the overall rows as worked out in the docstring: strict P = R = 3/8, partial P = (6 + 2/2)/8
    assert sem[1][2:] == ["3", "5", "0", "0", "0", "8", "8", "0.375", "0.375", "0.375"]
    assert sem[11][:3] == ["partial", "overall", "6"] and float(sem[11][9]) == pytest.approx(7 / 8)
    docs = parts[2]
    assert docs[0] == ["doc", "tp", "fp", "fn", "precision", "recall", "f1"]
    want_docs = documents_expected()
    assert [(r[0], *map(int, r[1:4])) for r in docs[1:]] == [r[:4] for r in want_docs]
    assert [[float(x) for x in r[4:]] for r in docs[1:]] == [pytest.approx([cell(x) for x in r[4:]]) for r in want_docs]


def test_csv_stays_one_table_without_the_options(capsys):
    assert len(sections(run(capsys, "--format", "csv"))) == 1
    assert len(sections(run(capsys, "--semeval", "--format", "csv"))) == 2
    assert sections(run(capsys, "--per-document", "--format", "csv"))[1][0][0] == "doc"


def pct(x: Fraction | None) -> str:
    return "n/a" if x is None else f"{100 * float(x):.2f}"


def md_table(text: str, heading: str) -> list[str]:
    lines = text.splitlines()
    k = lines.index(heading)
    assert lines[k + 1] == ""
    out = []
    for line in lines[k + 2:]:
        if not line.startswith("|"):
            break
        out.append(line)
    return out


def test_markdown_tables_are_the_hand_counts(capsys):
    text = run(capsys, "--semeval", "--per-document", "--format", "markdown")
    sem = md_table(text, "SemEval-2013 scenarios (see the manual, Concepts: Measures and averages):")
    assert sem[0] == ("| scenario | label | COR | INC | PAR | MIS | SPU | POS | ACT | precision % | recall % | F1 % |")
    assert sem[1] == "|---|---|" + "---:|" * 10
    assert sem[2:] == ["| " + " | ".join([*map(str, r[:9]), *map(pct, r[9:])]) + " |" for r in semeval_expected()]
    assert sem[2] == "| strict | overall | 3 | 5 | 0 | 0 | 0 | 8 | 8 | 37.50 | 37.50 | 37.50 |"
    docs = md_table(text, "Documents:")
    assert docs[0] == "| doc | tp | fp | fn | precision % | recall % | F1 % |"
    # the document id's # is escaped as Markdown text
    assert docs[2:] == ["| " + " | ".join([r[0].replace("#", "\\#"), *map(str, r[1:4]), *map(pct, r[4:])]) + " |"
                        for r in documents_expected()]
    assert "SemEval-2013 scenarios" not in run(capsys, "--format", "markdown")
    assert "Documents:" not in run(capsys, "--semeval", "--format", "markdown")


def test_per_document_needs_the_documents():
    scorer = Scorer(Config(), totals_only=True)
    scorer.add_batch(read_conll(FIXTURE))
    report = scorer.report()
    with pytest.raises(ConfigError, match="per-document"):
        format_report(report, "csv", per_document=True)
    assert format_report(report, "csv", semeval=True).count("\n\n") == 1  # totals keep the scenarios


class Cells(HTMLParser):
    """The text of each cell of the table ``id``, row by row, and of the element ``line``."""

    def __init__(self, page: str, table: str, line: str) -> None:
        super().__init__()
        self.table, self.line = table, line
        self.rows: list[list[str]] = []
        self.where: str | None = None
        self.text = ""
        self.feed(page)
        self.rows = [[c.strip() for c in row] for row in self.rows]

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("id") in (self.table, self.line):
            self.where = a["id"]
        elif self.where == self.table and tag == "tr":
            self.rows.append([])
        elif self.where == self.table and tag in ("td", "th"):
            self.rows[-1].append("")

    def handle_endtag(self, tag):
        if (self.where == self.table and tag == "table") or (self.where == self.line and tag == "p"):
            self.where = None

    def handle_data(self, data):
        if self.where == self.table and self.rows and self.rows[-1]:
            self.rows[-1][-1] += data
        elif self.where == self.line:
            self.text += data


def test_html_page_shows_the_overall_scenarios_and_the_document_macro_line():
    require("jinja2")
    from iescore.render.html import format_html

    scorer = Scorer(Config())
    scorer.add_batch(read_conll(FIXTURE))
    page = Cells(format_html(scorer.report()), "semeval", "doc-macro")
    assert page.rows[0] == ["scenario", "COR", "INC", "PAR", "MIS", "SPU", "POS", "ACT", "precision %", "recall %",
                            "F1 %"]
    want = [[*map(str, r[:1] + r[2:9]), *map(pct, r[9:])] for r in semeval_expected() if r[1] == "overall"]
    assert page.rows[1:] == want
    assert page.rows[3] == ["partial", "6", "0", "2", "0", "0", "8", "8", "87.50", "87.50", "87.50"]
    # the documents' F1 are 1/2, 0, 1/2, 1/2 (so are their P and R): mean 3/8, sample sd 1/4
    part = "(sd 25.00; 4 documents, 0 left out)"
    assert page.text == (f"Document macro: precision 37.50% {part}; recall 37.50% {part}; F1 37.50% {part}.")
