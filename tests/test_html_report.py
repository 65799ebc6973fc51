"""The HTML error report (iescore report --html): data is never markup, the page runs only
its own script, and -- in a real headless browser (Debian's chromium, installed by
.ci/run) -- the spans rendered per status and category are the report's counts and the
filters change what is shown.

Expected numbers come from the report's own counts, which tests/test_error_categories.py
and tests/test_front_ends.py check by hand and against the reference implementation; what
is tested here is that the page shows exactly those items.
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
import shutil
import subprocess
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

import pytest
from conftest import chromium, require

from iescore import Scorer, score_tags
from iescore.cli import main
from iescore.io.conll import read_conll

EVIL_TOKEN = "<script>alert(1)</script>"
EVIL_LABEL = '"><img src=x onerror=alert(2)>'


class Dom(HTMLParser):
    """The elements of a page: tag names and attributes, and the text."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.elements: list[tuple[str, dict[str, str | None]]] = []
        self.open: list[dict[str, str | None]] = []
        self.text: list[str] = []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.elements.append((tag, a))
        if tag == "span":  # the labels of the item spans it sits in
            a["inside"] = ",".join(x.get("data-label") or "" for x in self.open if "data-side" in x)
            self.open.append(a)

    def handle_endtag(self, tag):
        if tag == "span":
            self.open.pop()

    def handle_data(self, data):
        self.text.append(data)

    def spans(self, **want: str) -> list[dict[str, str | None]]:
        """The rendered item spans (class ``ent`` with a side) whose data-* attributes are ``want``."""
        out = []
        for tag, a in self.elements:
            if tag == "span" and "data-side" in a and all(a.get(f"data-{k}") == v for k, v in want.items()):
                out.append(a)
        return out


def evil_report():
    tokens = [[EVIL_TOKEN, "met", "Ada"]]
    return score_tags(reference=[[f"B-{EVIL_LABEL}", "O", "B-PER"]], prediction=[["B-PER", "O", "B-PER"]],
                      tokens=tokens), tokens


def test_text_labels_and_ids_are_data_not_markup(tmp_path):
    require("jinja2")
    from iescore.render.html import format_html

    r, tokens = evil_report()
    page = format_html(r, tokens)
    # neither the token nor the label appears as markup anywhere in the file: autoescaped
    # in the tables (&lt;img ...), \u003c-escaped in the JSON data block
    assert "<img" not in page and "<script>alert" not in page
    assert "&lt;img src=x onerror=alert(2)&gt;" in page
    assert "\\u003cscript\\u003ealert(1)\\u003c/script\\u003e" in page
    # the only scripts: the JSON data block (not run) and the page's own script, whose
    # SHA-256 is the one script source the Content-Security-Policy allows
    scripts = re.findall(r"<script([^>]*)>(.*?)</script>", page, flags=re.S)
    assert [attrs for attrs, _ in scripts] == [' type="application/json" id="iescore-data"', ""]
    digest = base64.b64encode(hashlib.sha256(scripts[1][1].encode()).digest()).decode()
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page).group(1)
    assert f"script-src 'sha256-{digest}'" in csp and "default-src 'none'" in csp
    style = re.search(r"<style>(.*?)</style>", page, flags=re.S).group(1)
    assert "style-src 'sha256-" + base64.b64encode(hashlib.sha256(style.encode()).digest()).decode() in csp
    assert "http://" not in page and "https://" not in page  # nothing to fetch


@pytest.mark.parametrize("n_labels, drawn", [(315, True), (316, False)])
def test_confusion_heatmap_is_left_out_beyond_its_cells_and_the_page_says_so(n_labels, drawn):
    # 315 labels + none: 316^2 = 99,856 cells, drawn; 316 labels: 317^2 = 100,489 > 100,000
    require("jinja2")
    from iescore.render.html import format_html

    tags = [[f"B-L{k}"] for k in range(n_labels)]
    page = format_html(score_tags(reference=tags, prediction=tags, scheme="IOB2"))
    assert ('id="confusion"' in page) is drawn
    note = "Left out: 316 labels make 100489 cells, more than the 100000 drawn."
    assert (note in page) is not drawn
    if drawn:  # L0's row: its one correct pair on the diagonal
        row = re.search(r"<tr><th>L0</th>(.*?)</tr>", page).group(1)
        assert re.findall(r">(\d+)</td>", row) == ["1"] + ["0"] * 315


def test_report_command_writes_the_page_and_prints_the_table(tmp_path, capsys):
    require("jinja2")
    p = tmp_path / "in.conll"
    p.write_text("Paris B-LOC B-PER\n", encoding="utf-8")
    out = tmp_path / "r.html"
    assert main(["report", str(p), "--html", str(out), "--rule", "O(1,1)"]) == 0
    cap = capsys.readouterr()
    assert "signature: iescore|setting:AO|rule:O(1,1)" in cap.out  # score's options apply
    assert f"wrote {out}" in cap.err and "MB" in cap.err
    page = out.read_text(encoding="utf-8")
    assert "rule:O(1,1)" in page and "<title>iescore error report</title>" in page
    with pytest.raises(SystemExit):  # --html is required
        main(["report", str(p)])


# --- in a browser ------------------------------------------------------------------------

def browser(page: Path, fragment: str = "", screenshot: Path | None = None) -> Dom:
    """The DOM of ``page`` after its script ran, from headless chromium (--dump-dom)."""
    url = page.resolve().as_uri() + (f"#{fragment}" if fragment else "")
    args = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
            "--virtual-time-budget=15000", "--window-size=1400,1800"]
    if screenshot is not None:
        subprocess.run([*args, f"--screenshot={screenshot}", url], check=True, capture_output=True, timeout=180)
    res = subprocess.run([*args, "--dump-dom", url], check=True, capture_output=True, timeout=180, text=True)
    dom = Dom(res.stdout)
    assert any(t == "body" and a.get("data-rendered") == "yes" for t, a in dom.elements), "the script did not run"
    return dom


def test_in_a_browser_the_attack_strings_are_text(tmp_path):
    require("jinja2")
    from iescore.render.html import write_html

    r, tokens = evil_report()
    page = tmp_path / "evil.html"
    write_html(r, str(page), tokens)
    dom = browser(page)
    tags = Counter(t for t, _ in dom.elements)
    assert tags["img"] == 0 and tags["script"] == 2  # nothing injected
    text = "".join(dom.text)
    assert EVIL_TOKEN in text  # the token is shown, as text
    # the label is a data attribute's value and the text of the span's tag
    assert [a["data-label"] for a in dom.spans(side="reference")] == [EVIL_LABEL, "PER"]
    assert EVIL_LABEL in text


def test_in_a_browser_nested_and_crossing_spans_are_all_shown(tmp_path):
    require("jinja2")
    from iescore import Document, Span, score
    from iescore.render.html import write_html

    toks = ("Bank", "of", "New", "York", "in", "Paris")
    # gold: ORG [0, 4) with LOC [2, 4) nested in it, LOC [5, 6); predicted: ORG [0, 4) with
    # PER [1, 3) nested, and LOC [3, 6), which crosses ORG [0, 4): a second line
    ref = Document("d", toks, (Span("ORG", 0, 4), Span("LOC", 2, 4), Span("LOC", 5, 6)))
    pred = [[Span("ORG", 0, 4), Span("PER", 1, 3), Span("LOC", 3, 6)]]
    r = score(reference=[ref], prediction=pred)
    page = tmp_path / "nested.html"
    write_html(r, str(page), [toks])
    dom = browser(page)
    assert len(dom.spans(side="reference")) == 3 and len(dom.spans(side="prediction")) == 3
    assert [a["inside"] for a in dom.spans(side="reference")] == ["", "ORG", ""]
    assert [(a["data-label"], a["inside"]) for a in dom.spans(side="prediction")] == [
        ("ORG", ""), ("PER", "ORG"), ("LOC", "")]
    assert "predicted (2)" in "".join(dom.text)  # the crossing span's own line


def test_in_a_browser_template_fillers_are_listed_with_their_categories(tmp_path):
    # De Sitter's Example 7 (OBD): Al Roth correct on both sides, Ido Erev ~ Ido wrong boundary,
    # Cristina Bicchieri spurious (tests/test_error_categories.py works them out)
    require("jinja2")
    from iescore import Template, score_templates
    from iescore.render.html import write_html

    r = score_templates(reference=[Template("D", {"speaker": ("Al Roth", "Ido Erev")})],
                        prediction=[Template("D", {"speaker": ("Al Roth", "Ido", "Cristina Bicchieri")})])
    page = tmp_path / "obd.html"
    write_html(r, str(page))
    dom = browser(page)
    assert [a["data-category"] for a in dom.spans(side="reference")] == ["correct", "wrong_boundary"]
    assert [a["data-category"] for a in dom.spans(side="prediction")] == ["correct", "wrong_boundary", "spurious"]
    assert "Cristina Bicchieri" in "".join(dom.text)


@pytest.fixture(scope="module")
def florian(data, tmp_path_factory):
    """CoNLL-2003 eng.testb against the florian shared-task output (tags pasted line by line),
    its report and the HTML page of `iescore report`."""
    require("jinja2")
    gold = data / "conll2003-eng" / "eng.testb"
    pred = data / "conll2003-shared-task-outputs" / "results" / "florian" / "eng.testb"
    page = tmp_path_factory.mktemp("html") / "florian.html"
    assert main(["report", str(gold), str(pred), "--html", str(page)]) == 0
    s = Scorer()
    s.add_batch(read_conll(str(gold), str(pred)))
    return s.report(), page


def test_browser_spans_equal_the_reports_counts(florian):
    r, page = florian
    d = r.to_dict()
    dom = browser(page, "size=all")
    o, cats = d["overall"], d["categories"]
    assert len(dom.spans(side="reference")) == len(r.reference) == o["support"] == 5648
    assert len(dom.spans(side="prediction")) == len(r.prediction) == o["predicted"] == 5620
    # statuses: a TP prediction per TP, an FP per FP, an FN answer per FN
    assert len(dom.spans(side="prediction", status="TP")) == o["tp"]
    assert len(dom.spans(side="prediction", status="FP")) == o["fp"]
    assert len(dom.spans(side="reference", status="FN")) == o["fn"]
    # categories: every aligned pair shows on both sides, missed answers and spurious predictions once
    for c in ("correct", "wrong_label", "wrong_boundary", "wrong_label_boundary"):
        assert len(dom.spans(side="reference", category=c)) == cats["overall"][c], c
        assert len(dom.spans(side="prediction", category=c)) == cats["overall"][c], c
    assert len(dom.spans(side="reference", category="missed")) == cats["overall"]["missed"]
    assert len(dom.spans(side="prediction", category="spurious")) == cats["overall"]["spurious"]
    # per label, under the reference label as the table counts them
    for lab, e in cats["per_label"].items():
        for c in ("correct", "wrong_label", "wrong_boundary", "wrong_label_boundary", "missed"):
            assert len(dom.spans(side="reference", label=lab, category=c)) == e[c], (lab, c)
        assert len(dom.spans(side="prediction", label=lab, category="spurious")) == e["spurious"], lab
    docs = [a for t, a in dom.elements if t == "div" and "data-doc" in a]
    assert len(docs) == len(r.doc_ids) == 231


def test_browser_filters_change_what_is_shown(florian, tmp_path):
    r, page = florian
    d = r.to_dict()
    first = browser(page)  # the first page: 20 documents
    assert len([a for t, a in first.elements if t == "div" and "data-doc" in a]) == 20
    shot = tmp_path / "florian-wrong-label.png"
    dom = browser(page, "size=all&category=wrong_label", screenshot=shot)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000
    if os.environ.get("IESCORE_SCREENSHOTS"):  # keep the picture to look at
        shutil.copy(shot, Path(os.environ["IESCORE_SCREENSHOTS"]) / shot.name)
    # only documents with a wrong-label pair are shown; in them exactly those pairs match
    want_docs = {it["doc"] for it in r.items("reference") if it["category"] == "wrong_label"}
    shown = {a["data-doc"] for t, a in dom.elements if t == "div" and "data-doc" in a}
    assert shown == want_docs and len(shown) < len(r.doc_ids)
    n = d["categories"]["overall"]["wrong_label"]
    assert len(dom.spans(match="yes", side="reference")) == n == len(dom.spans(match="yes", side="prediction"))
    assert {a["data-category"] for a in dom.spans(match="yes")} == {"wrong_label"}
    # a label and a status together: LOC answers that are FN
    dom = browser(page, "size=all&label=LOC&status=FN")
    assert len(dom.spans(match="yes")) == d["per_label"]["LOC"]["fn"]
    # one document
    dom = browser(page, "size=all&doc=3")
    assert [a["data-doc"] for t, a in dom.elements if t == "div" and "data-doc" in a] == [r.doc_ids[3]]
