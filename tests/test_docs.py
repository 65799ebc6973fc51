"""The documentation site (.ci/docs): built from the README's sections, the metric card and
the docstrings with `mkdocs build --strict` (warnings are errors), offline."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

from conftest import require

ROOT = Path(__file__).resolve().parents[1]


def docs_build():
    """The build script .ci/docs/build.py as a module."""
    spec = importlib.util.spec_from_file_location("iescore_docs_build", ROOT / ".ci" / "docs" / "build.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_site_builds_strictly_with_a_page_per_section_and_integration(tmp_path):
    require("mkdocs")
    require("mkdocstrings")
    build = docs_build()
    run = build.build(tmp_path / "site", tmp_path / "work")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "WARNING" not in run.stderr, run.stderr
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    _, sections = build.split_sections(readme, 2)
    pages = {p.name for p in (tmp_path / "site").glob("*.html")}
    for title, body in sections:
        if title == "Integrations":
            for sub, _ in build.split_sections(body, 3)[1]:
                assert f"integration-{build.slug(sub)}.html" in pages, sub
        else:
            assert f"{build.slug(title)}.html" in pages, title
    assert {"integration-evaluate.html", "integration-spacy.html", "integration-trainer.html",
            "integration-hugging-face-pipeline.html", "porting-from-seqeval-nervaluate-spacy-and-conlleval.html",
            "definitions.html", "api-options.html"} <= pages
    # the API reference is rendered from the docstrings, examples as code
    api = (tmp_path / "site" / "api-entry-points.html").read_text(encoding="utf-8")
    assert "score_tags" in api and "language-pycon" in api
    card = (tmp_path / "site" / "integration-evaluate.html").read_text(encoding="utf-8")
    assert "Metric Card for iescore" in card and "sdk_version" not in card  # front matter left out


def test_a_broken_reference_fails_the_build(tmp_path, monkeypatch):
    require("mkdocs")
    require("mkdocstrings")
    build = docs_build()
    monkeypatch.setattr(build, "API", [*build.API, ("Missing", ["iescore.no_such_module"])])
    run = build.build(tmp_path / "site", tmp_path / "work")
    assert run.returncode != 0


def test_headings_are_split_outside_code_only():
    build = docs_build()
    text = "intro\n## A\n```bash\n## not a heading\n```\n### A1\nx\n## B\ny\n"
    head, parts = build.split_sections(text, 2)
    assert head == "intro" and [t for t, _ in parts] == ["A", "B"]
    assert "## not a heading" in parts[0][1]
    assert build.raise_headings(parts[0][1], 1).splitlines()[3] == "## A1"


def test_doctest_blocks_become_code_blocks():
    spec = importlib.util.spec_from_file_location("doctest_blocks", ROOT / ".ci" / "docs" / "doctest_blocks.py")
    assert spec is not None and spec.loader is not None
    require("griffe")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    text = "Example:\n    >>> 1 + 1\n    2\n\nAfter.\n    >>> x = [1]\n"
    assert module.fence_doctests(text) == (
        "Example:\n\n```pycon\n>>> 1 + 1\n2\n```\n\n\nAfter.\n\n```pycon\n>>> x = [1]\n```\n"
    )
    assert re.search(r"```pycon\n>>> 1 \+ 1\n2\n```", module.fence_doctests(text))
