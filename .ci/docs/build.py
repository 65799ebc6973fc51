"""Build the documentation site with warnings as errors: ``python .ci/docs/build.py [SITE_DIR]``.

The text has one home, README.md: each of its ``##`` sections becomes a page (the
"Integrations" section one page per ``###`` integration, with the integration's API and,
for ``evaluate``, the metric card), and the API reference comes from the docstrings
(mkdocstrings). The pages are generated into a temporary folder, next to the package laid
out as it is installed (``iescore/`` with ``adapters/`` and ``metric_card/`` inside, as
links), and ``mkdocs build --strict`` builds them into SITE_DIR (default: ``site/`` in a
temporary folder, removed afterwards). Nothing is fetched from the network. Needs the
``docs`` extra (``pip install -e ".[docs]"``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]

# API reference pages: (title, modules documented on the page)
API = [
    ("Entry points", ["iescore.scorer", "iescore.scoring.stream"]),
    ("Options", ["iescore.options", "iescore.config"]),
    ("Documents, spans, templates", ["iescore.model", "iescore.text"]),
    ("Reading CoNLL files", ["iescore.io.conll"]),
    ("Reports and measures", ["iescore.report", "iescore.measures"]),
    ("Comparing systems", ["iescore.stats"]),
    ("Errors and warnings", ["iescore.errors"]),
]
# what each integration page adds to its README section: API modules, and the card
INTEGRATION_API = {
    "evaluate": [],
    "spaCy": ["iescore.adapters.spacy_scorer", "iescore.adapters.spacy"],
    "Trainer": ["iescore.adapters.trainer"],
    "Hugging Face pipeline": ["iescore.adapters.hf"],
}
IMAGES = ["recipes/img", "bench/out"]  # folders whose images README pages show


def package_tree(dest: Path) -> Path:
    """Lay the package out as installed, with links: ``dest/iescore`` holding the
    sources of ``iescore/`` plus ``adapters`` and ``metric_card`` (what ``pip install -e .
    --config-settings editable_mode=strict`` builds). Returns ``dest``."""
    pkg = dest / "iescore"
    pkg.mkdir(parents=True)
    for item in (ROOT / "iescore").iterdir():
        if item.name != "__pycache__":
            (pkg / item.name).symlink_to(item)
    (pkg / "adapters").symlink_to(ROOT / "adapters")
    (pkg / "metric_card").symlink_to(ROOT / "metric_card")
    return dest


def _lines_outside_code(text: str):
    """(line, inside a fenced code block) for every line of a Markdown text."""
    fence = False
    for line in text.splitlines():
        if line.startswith("```"):
            yield line, True
            fence = not fence
        else:
            yield line, fence


def split_sections(text: str, level: int) -> tuple[str, list[tuple[str, str]]]:
    """Split Markdown at the headings of ``level`` (outside code): (text before the
    first one, [(heading, body), ...])."""
    mark = "#" * level + " "
    head, parts = [], []  # type: list[str], list[tuple[str, list[str]]]
    for line, code in _lines_outside_code(text):
        if not code and line.startswith(mark):
            parts.append((line[len(mark):].strip(), []))
        elif parts:
            parts[-1][1].append(line)
        else:
            head.append(line)
    return "\n".join(head), [(title, "\n".join(body).strip() + "\n") for title, body in parts]


def raise_headings(text: str, by: int) -> str:
    """Headings (outside code) ``by`` levels higher: ``###`` -> ``##`` for ``by=1``."""
    out = []
    for line, code in _lines_outside_code(text):
        if not code and re.match(r"#{2,6} ", line):
            line = line[by:]
        out.append(line)
    return "\n".join(out)


def lower_headings(text: str, by: int) -> str:
    """Headings (outside code) ``by`` levels lower."""
    out = []
    for line, code in _lines_outside_code(text):
        if not code and re.match(r"#{1,5} ", line):
            line = "#" * by + line
        out.append(line)
    return "\n".join(out)


def slug(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")


def _api(modules: list[str]) -> str:
    return "\n\n".join(f"::: {m}" for m in modules) + "\n"


def _card() -> str:
    """The metric card without its Hugging Face front matter, headings one level lower."""
    text = (ROOT / "metric_card" / "README.md").read_text(encoding="utf-8")
    text = re.sub(r"\A---\n.*?\n---\n", "", text, flags=re.S)
    return lower_headings(text.strip(), 1)


def write_pages(docs: Path) -> list[object]:
    """Write the pages into ``docs``; return mkdocs' nav."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    intro, sections = split_sections(readme, 2)
    (docs / "index.md").write_text(intro.strip() + "\n", encoding="utf-8")
    nav: list[object] = [{"Home": "index.md"}]
    for title, body in sections:
        if title == "Integrations":
            lead, subs = split_sections(body, 3)
            group: list[object] = []
            for sub, text in subs:
                if sub not in INTEGRATION_API:
                    raise SystemExit(f"README: integration {sub!r} has no entry in INTEGRATION_API ({HERE / 'build.py'})")
                page = f"integration-{slug(sub)}.md"
                extra = ""
                if sub == "evaluate":
                    extra = "\n## The metric card\n\n" + _card() + "\n"
                if INTEGRATION_API[sub]:
                    extra += "\n## API\n\n" + _api(INTEGRATION_API[sub])
                (docs / page).write_text(f"# {sub}\n\n{lead.strip()}\n\n{text}{extra}", encoding="utf-8")
                group.append({sub: page})
            nav.append({"Integrations": group})
            continue
        page = f"{slug(title)}.md"
        (docs / page).write_text(f"# {title}\n\n" + raise_headings(body, 1) + "\n", encoding="utf-8")
        nav.append({title: page})
    api: list[object] = []
    for title, modules in API:
        page = f"api-{slug(title)}.md"
        (docs / page).write_text(f"# {title}\n\n" + _api(modules), encoding="utf-8")
        api.append({title: page})
    nav.append({"API reference": api})
    for folder in IMAGES:
        src = ROOT / folder
        for img in sorted(src.glob("*.png")) if src.is_dir() else []:
            (docs / folder).mkdir(parents=True, exist_ok=True)
            shutil.copy(img, docs / folder / img.name)
    return nav


def build(site: Path, work: Path) -> subprocess.CompletedProcess[str]:
    """Generate the pages under ``work`` and run ``mkdocs build --strict`` into ``site``."""
    docs = work / "docs"
    docs.mkdir(parents=True)
    nav = write_pages(docs)
    src = package_tree(work / "src")
    config = work / "mkdocs.yml"
    config.write_text(
        f"INHERIT: {json.dumps(str(HERE / 'mkdocs.yml'))}\n"
        f"docs_dir: {json.dumps(str(docs))}\n"
        f"nav: {json.dumps(nav)}\n",
        encoding="utf-8",
    )
    env = {**os.environ, "IESCORE_DOCS_SRC": str(src)}
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(config), "--site-dir", str(site)],
        capture_output=True, text=True, env=env, cwd=HERE,  # extensions are found from here
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("site", nargs="?", help="where to write the site (default: a temporary folder)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        site = Path(args.site).resolve() if args.site else Path(tmp) / "site"
        run = build(site, Path(tmp) / "work")
        sys.stderr.write(run.stdout + run.stderr)
        if run.returncode == 0:
            print(f"site built in {site}" if args.site else "site built (no SITE_DIR: not kept)")
        return run.returncode


if __name__ == "__main__":
    sys.exit(main())
