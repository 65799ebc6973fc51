"""The documentation site (mkdocs.yml, docs/): it builds with ``mkdocs build --strict``
(warnings are errors: a missing page, link, anchor or API reference fails it), offline; no
page shows a Sphinx role; the search index covers every integration; and served over
HTTP, its pages show the navigation in a headless browser and its search box returns
results. The site is built once for the module (about 15 s); the browser is Debian's
chromium, as in tests/test_html_report.py."""

from __future__ import annotations

import html
import http.server
import importlib.util
import json
import os
import re
import subprocess
import sys
import threading
import time
from functools import partial
from html.parser import HTMLParser
from pathlib import Path

import pytest
from conftest import chromium, require

ROOT = Path(__file__).resolve().parents[1]
ROLE = re.compile(r":(?:func|class|meth|mod|attr|data|exc|obj|ref):`")
# the top-level sections of the docs plan, as the tabs name them
SECTIONS = ["Home", "Getting started", "How-to guides", "Concepts", "Reference", "Performance", "Architecture"]


def _module(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    require("mkdocs")
    require("mkdocstrings")
    require("material")
    build = _module("iescore_docs_build", ROOT / ".ci" / "docs" / "build.py")
    out = tmp_path_factory.mktemp("docs") / "site"
    run = build.build(out)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "WARNING" not in run.stderr, run.stderr
    return out


class Page(HTMLParser):
    """A page's visible text (outside script and style) and its elements' classes and links."""

    def __init__(self, text: str):
        super().__init__()
        self.text: list[str] = []
        self.elements: list[tuple[str, dict[str, str]]] = []
        self._skip = 0
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, {k: v or "" for k, v in attrs}))
        if tag in ("script", "style"):
            self._skip += 1

    def handle_endtag(self, tag):
        if tag in ("script", "style") and self._skip:
            self._skip -= 1

    def handle_data(self, data):
        if not self._skip:
            self.text.append(data)

    def having(self, cls: str) -> list[dict[str, str]]:
        return [a for _, a in self.elements if cls in a.get("class", "").split()]


def test_the_site_builds_strictly_with_the_planned_pages(site):
    pages = {p.relative_to(site).as_posix() for p in site.rglob("*.html")}
    assert {"index.html", "getting-started.html", "how-to/evaluate.html", "how-to/trainer.html",
            "how-to/spacy.html", "how-to/pipelines.html", "how-to/inputs.html", "how-to/spark.html",
            "reference/cli.html", "reference/outputs.html", "reference/api/entry-points.html",
            "reference/api/options.html", "architecture.html"} <= pages
    # nothing from the network: no Google Fonts, no external script or stylesheet
    for name in pages:
        text = (site / name).read_text(encoding="utf-8")
        assert not re.search(r'<(?:script|link)[^>]*(?:src|href)="(?:https?:)?//', text), name
    # the API reference is rendered from the docstrings, examples as code; Options lists
    # every option with its type, and the entry points link it
    api = (site / "reference" / "api" / "entry-points.html").read_text(encoding="utf-8")
    assert 'id="iescore.score_tags"' in api and '<span class="gp">&gt;&gt;&gt; </span>' in api
    assert 'href="options.html#iescore.options.Options"' in api
    options = (site / "reference" / "api" / "options.html").read_text(encoding="utf-8")
    for name in ("setting", "rule", "counting", "mode", "scheme", "repair", "average", "beta", "level", "align"):
        assert f'id="iescore.options.Options.{name}"' in options, name


def test_no_page_shows_a_sphinx_role(site):
    found = {}
    for page in site.rglob("*.html"):
        text = html.unescape("".join(Page(page.read_text(encoding="utf-8")).text))
        roles = ROLE.findall(text)
        if roles:
            found[page.relative_to(site).as_posix()] = len(roles)
    assert found == {}


def test_the_command_line_page_has_every_option_of_the_parser(site):
    import argparse

    from iescore.cli import build_parser

    page = " ".join(" ".join(Page((site / "reference" / "cli.html").read_text(encoding="utf-8")).text).split())
    subcommands = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)][0].choices
    assert set(subcommands) == {"score", "metric-path", "compare", "agree", "report", "validate", "repair", "convert",
                                "summarize", "weighted"}
    seen = 0
    for name, sub in subcommands.items():
        assert f"iescore {name}" in page, name
        for action in sub._actions:
            for flag in action.option_strings:
                assert flag in page, (name, flag)
                seen += 1
            if action.help and "%(" not in action.help:  # the help text, reST literals as code
                assert " ".join(action.help.replace("``", "").split()) in page.replace("`", ""), (name, action.help)
    assert seen > 100


def test_the_search_index_covers_every_integration(site):
    index = json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))
    docs = index["docs"]
    # term -> the how-to page whose entries must hold it
    where = {"evaluate": "how-to/evaluate.html", "Trainer": "how-to/trainer.html", "spaCy": "how-to/spacy.html",
             "pipeline": "how-to/pipelines.html", "Spark": "how-to/spark.html", "JSONL": "how-to/inputs.html",
             "brat": "how-to/inputs.html", "LLM": "how-to/inputs.html"}
    for term, page in where.items():
        hits = [d for d in docs if d["location"].split("#")[0] == page
                and re.search(rf"\b{term}", d["title"] + " " + d["text"], re.I)]
        assert hits, (term, page)


# --- in a browser, over HTTP -----------------------------------------------------------

@pytest.fixture(scope="module")
def served(site):
    """The site served over HTTP on 127.0.0.1 (an ephemeral port), as its base URL."""
    handler = partial(_QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def browse(url: str) -> Page:
    """The DOM of ``url`` after its scripts ran, from headless chromium (--dump-dom)."""
    args = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
            "--virtual-time-budget=15000", "--window-size=1400,1800", "--dump-dom", url]
    res = subprocess.run(args, check=True, capture_output=True, timeout=180, text=True)
    return Page(res.stdout)


@pytest.mark.parametrize("path", ["index.html", "how-to/spacy.html", "reference/api/entry-points.html"])
def test_in_a_browser_pages_show_the_navigation(served, path):
    page = browse(served + path)
    tabs = [a.get("href") for a in page.having("md-tabs__link")]
    assert len(tabs) == len(SECTIONS), tabs
    text = " ".join(" ".join(page.text).split())
    for section in SECTIONS:
        assert section in text, section
    assert not ROLE.search(html.unescape(text))
    assert page.having("md-search__input"), "no search box"


class Browser:
    """Headless chromium driven over the DevTools protocol on a pipe (``--remote-debugging-pipe``:
    JSON messages ended by NUL, commands on the browser's fd 3, replies on its fd 4), for
    pages whose scripts need real time (the search runs in a web worker, which
    ``--virtual-time-budget`` does not wait for)."""

    def __init__(self):
        exe = chromium()
        cmd_read, self._cmd = os.pipe()
        self._replies, reply_write = os.pipe()

        def onto_3_and_4():  # in the child, before the fds other than pass_fds are closed
            os.dup2(cmd_read, 3)
            os.dup2(reply_write, 4)

        self.proc = subprocess.Popen(
            [exe, "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
             "--window-size=1400,1800", "about:blank"],
            pass_fds=(3, 4), preexec_fn=onto_3_and_4, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(cmd_read)
        os.close(reply_write)
        self._buffer, self._id, self._session = b"", 0, None
        page = next(t for t in self.send("Target.getTargets")["targetInfos"] if t["type"] == "page")
        self._session = self.send("Target.attachToTarget", targetId=page["targetId"], flatten=True)["sessionId"]

    def send(self, method: str, **params):
        self._id += 1
        message = {"id": self._id, "method": method, "params": params}
        if self._session is not None:
            message["sessionId"] = self._session
        os.write(self._cmd, json.dumps(message).encode() + b"\0")
        while True:
            while b"\0" not in self._buffer:
                chunk = os.read(self._replies, 1 << 16)
                assert chunk, "chromium closed the DevTools pipe"
                self._buffer += chunk
            raw, self._buffer = self._buffer.split(b"\0", 1)
            reply = json.loads(raw)
            if reply.get("id") == self._id:
                assert "error" not in reply, (method, reply["error"])
                return reply.get("result", {})

    def eval(self, expression: str):
        return self.send("Runtime.evaluate", expression=expression, returnByValue=True)["result"].get("value")

    def wait(self, expression: str, seconds: float = 30.0):
        """The value of ``expression`` once it is truthy (None after ``seconds``)."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            value = self.eval(expression)
            if value:
                return value
            time.sleep(0.2)
        return None

    def open(self, url: str) -> None:
        self.send("Page.navigate", url=url)
        assert self.wait(f"location.href === {json.dumps(url)} && document.readyState === 'complete'")

    def close(self) -> None:
        self._session = None
        self.send("Browser.close")
        self.proc.wait(timeout=30)
        os.close(self._cmd)
        os.close(self._replies)


RESULTS = "[...document.querySelectorAll('.md-search-result__link')].map(a => a.getAttribute('href'))"


def test_in_a_browser_the_search_returns_results_and_signatures_wrap(served):
    browser = Browser()
    try:
        # typed into the search box
        browser.open(served + "index.html")
        browser.eval("document.querySelector('.md-search__input').focus()")
        browser.send("Input.insertText", text="brat")
        browser.send("Input.dispatchKeyEvent", type="keyUp", key="t", code="KeyT", windowsVirtualKeyCode=84)
        links = browser.wait(RESULTS)
        assert links and any("how-to/inputs.html" in link for link in links), links
        assert re.fullmatch(r"\d+ matching documents?", browser.eval(
            "document.querySelector('.md-search-result__meta').textContent"))
        # from the address: Material reads the query from ?q=
        browser.open(served + "index.html?q=spacy")
        links = browser.wait(RESULTS)
        assert links and any("how-to/spacy.html" in link for link in links), links
        # the API's signatures wrap and the command line's usage lines fit: none is wider
        # than its box (1400 px window)
        for path, boxes in [*((f"reference/api/{api}.html", ".doc-signature, .doc-signature code")
                              for api in ("entry-points", "options", "readers", "adapters")),
                            ("reference/cli.html", "pre > code")]:
            browser.open(served + path)
            widths = browser.eval(f"[...document.querySelectorAll('{boxes}')].map(e => [e.scrollWidth, e.clientWidth])")
            assert len(widths) > 4 and all(wide <= box + 1 for wide, box in widths), (path, widths)
    finally:
        browser.close()


@pytest.mark.parametrize(("reference", "valid"), [
    ("::: iescore.no_such_module", "::: iescore.errors.ConfigError"),
    ("[`score`][iescore.no_such_function]", "[`IEScoreError`][iescore.errors.IEScoreError]"),
])
def test_a_broken_reference_fails_the_build(tmp_path, reference, valid):
    require("mkdocs")
    require("mkdocstrings")
    require("material")
    docs = tmp_path / "docs"
    docs.mkdir()
    page = "# A page\n\n::: iescore.errors.IEScoreError\n\n{}\n"
    (docs / "index.md").write_text(page.format(reference), encoding="utf-8")
    # the repository's configuration (its hooks and extensions found from it), with
    # this one page instead of docs/
    script = (
        "import logging, sys\n"
        "from mkdocs.config import load_config\n"
        "from mkdocs.commands.build import build\n"
        "cfg = load_config(sys.argv[1], docs_dir=sys.argv[2], site_dir=sys.argv[3], strict=True,\n"
        "                  nav=[{'A page': 'index.md'}, {'Command line': 'reference/cli.md'}])\n"
        "logging.basicConfig(format='%(levelname)s %(message)s')\n"
        "build(cfg)\n"
    )
    run = subprocess.run([sys.executable, "-c", script, str(ROOT / "mkdocs.yml"), str(docs), str(tmp_path / "site")],
                         capture_output=True, text=True, cwd=ROOT, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    target = reference.split("iescore.")[1].rstrip("]")
    assert run.returncode != 0 and target in run.stderr, run.stderr
    # the same page with a valid reference builds
    (docs / "index.md").write_text(page.format(valid), encoding="utf-8")
    run = subprocess.run([sys.executable, "-c", script, str(ROOT / "mkdocs.yml"), str(docs), str(tmp_path / "site")],
                         capture_output=True, text=True, cwd=ROOT, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert run.returncode == 0, run.stderr


def test_doctest_blocks_become_code_blocks():
    require("griffe")
    module = _module("doctest_blocks", ROOT / ".ci" / "docs" / "doctest_blocks.py")
    text = "Example:\n    >>> 1 + 1\n    2\n\nAfter.\n    >>> x = [1]\n"
    assert module.fence_doctests(text) == (
        "Example:\n\n```pycon\n>>> 1 + 1\n2\n```\n\n\nAfter.\n\n```pycon\n>>> x = [1]\n```\n"
    )
