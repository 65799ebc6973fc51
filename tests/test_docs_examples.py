"""Every code block of README.md, ARCHITECTURE.md and docs/**/*.md runs as written.

- ```python blocks run in order, one namespace per file, in a fresh working folder; the
  optional packages they import are required through `conftest.require` (skipped, or a
  failure under CI, when one is missing).
- ```bash blocks hold `iescore ...` command lines (comments and `\\` continuations
  allowed), run through `iescore.cli.main` in a working folder that holds the shared
  corpora's folders and the project's `tests/` folder (as links), so a command reads
  `conll2003-eng/eng.testb` or `tests/fixtures/...` as the page says and writes its files
  in a temporary folder. When an untagged or ```text block follows, it shows the output:
  its lines are the first lines the last command prints.
- ```ini blocks are spaCy config excerpts: their scorer is built from spaCy's registry and
  scores a small example, giving every key the config's `score_weights` name.
- ```console and ```text blocks are not run (they need pip, a GPU, spark-submit, or files
  the reader has); ```py is the Spark script run by tests/test_spark.py.
"""

from __future__ import annotations

import ast
import re
import shlex
import sys
import warnings
from pathlib import Path

import pytest
from conftest import require

ROOT = Path(__file__).resolve().parents[1]
FILES = [ROOT / "README.md", ROOT / "ARCHITECTURE.md", *sorted((ROOT / "docs").rglob("*.md"))]
FENCE = re.compile(r"^```([\w+-]*)[^\n]*\n(.*?)^```[ \t]*$", flags=re.S | re.M)
KNOWN = {"python", "bash", "ini", "console", "text", "", "py"}


def rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


def blocks(path: Path) -> list[tuple[str, str, int, int]]:
    """(language, body, start offset, end offset) of each fenced block of ``path``."""
    text = path.read_text(encoding="utf-8")
    return [(m.group(1), m.group(2), m.start(), m.end()) for m in FENCE.finditer(text)]


def _python_files() -> list[Path]:
    return [p for p in FILES if any(lang == "python" for lang, *_ in blocks(p))]


def _bash_blocks() -> list[tuple[Path, int]]:
    return [(p, k) for p in FILES for k, (lang, *_) in enumerate(blocks(p)) if lang == "bash"]


def _ini_blocks() -> list[tuple[Path, int]]:
    return [(p, k) for p in FILES for k, (lang, *_) in enumerate(blocks(p)) if lang == "ini"]


def test_the_pages_are_found():
    names = {rel(p) for p in FILES}
    assert {"README.md", "ARCHITECTURE.md", "docs/index.md", "docs/getting-started.md",
            "docs/performance.md", "docs/how-to/comparing.md", "docs/concepts/index.md"} <= names


@pytest.mark.parametrize("path", FILES, ids=rel)
def test_every_fence_is_closed(path):
    """A fence left open turns the rest of the page into one block (its comments into
    headings) and hides the block from these tests: every fence line opens or closes one."""
    fences = [k + 1 for k, line in enumerate(path.read_text(encoding="utf-8").splitlines())
              if line.startswith("```")]
    assert len(fences) == 2 * len(blocks(path)), f"{rel(path)}: fence lines {fences}"


@pytest.mark.parametrize("path", FILES, ids=rel)
def test_every_block_is_of_a_known_kind(path):
    """A block of another language would be shown and never run: name it here first."""
    langs = [lang for lang, *_ in blocks(path)]
    assert set(langs) <= KNOWN, f"{rel(path)}: blocks of {sorted(set(langs) - KNOWN)}"


def test_the_readme_keeps_the_two_commands():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "\npip install -e . && iescore score --example\n" in text
    assert '\npip install -e ".[all]" && python -m pytest -q\n' in text


def _third_party(code: str) -> list[str]:
    """The top-level modules a block imports that are neither the standard library nor
    iescore (nor pytest, which runs this)."""
    names = []
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Import):
            names += [a.name.split(".")[0] for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.append(node.module.split(".")[0])
    return [n for n in dict.fromkeys(names)
            if n not in sys.stdlib_module_names and n not in ("iescore", "pytest")]


@pytest.mark.parametrize("path", _python_files(), ids=rel)
def test_python_blocks_run(path, tmp_path, monkeypatch):
    code = [body for lang, body, *_ in blocks(path) if lang == "python"]
    for module in _third_party("\n".join(code)):
        require(module)
    monkeypatch.chdir(tmp_path)  # whatever a block writes stays in the test's folder
    namespace: dict = {"__name__": "__docs__"}
    with warnings.catch_warnings(record=True):  # a page may show a warning on purpose
        warnings.simplefilter("always")
        for k, body in enumerate(code):
            exec(compile(body, f"{rel(path)} (python block {k + 1})", "exec"), namespace)


def _commands(body: str) -> list[str]:
    lines = body.replace("\\\n", " ").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]


def _shown_output(path: Path, k: int) -> str | None:
    """The output block right after block ``k`` (untagged or ```text, a blank line between)."""
    bs = blocks(path)
    if k + 1 >= len(bs):
        return None
    lang, body, start, _ = bs[k + 1]
    between = path.read_text(encoding="utf-8")[bs[k][3]:start]
    return body if lang in ("", "text") and between.strip() == "" else None


def _workdir(tmp_path: Path, commands: list[str], request) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    (work / "tests").symlink_to(ROOT / "tests")
    words = {w.split("/", 1)[0] for c in commands for w in shlex.split(c)}
    if any(not w.startswith("-") and "/" in w and not w.startswith("tests/")
           for c in commands for w in shlex.split(c)):
        data = request.getfixturevalue("data")
        for entry in sorted(data.iterdir()):
            if entry.name in words:
                (work / entry.name).symlink_to(entry)
    return work


@pytest.mark.parametrize("path,k", _bash_blocks(), ids=lambda v: rel(v) if isinstance(v, Path) else f"block{v + 1}")
def test_bash_blocks_run(path, k, tmp_path, monkeypatch, capsys, request):
    from iescore.cli import main

    body = blocks(path)[k][1]
    commands = _commands(body)
    assert commands, f"{rel(path)}: an empty bash block"
    for line in commands:
        assert line.startswith("iescore "), (
            f"{rel(path)}: {line!r} is not an iescore command: fence the block as console or text")
    monkeypatch.chdir(_workdir(tmp_path, commands, request))
    out = ""
    for line in commands:
        capsys.readouterr()
        status = main(shlex.split(line)[1:])
        out = capsys.readouterr().out
        assert status in (0, None), (line, status)
        assert out, line
    shown = _shown_output(path, k)
    if shown is not None:
        want = shown.splitlines()
        assert out.splitlines()[: len(want)] == want, f"{rel(path)}: the output shown is not what {commands[-1]!r} prints"


# the commands whose output a page shows: that output must stay there (and be equal, above)
SHOWN = [
    ("docs/how-to/comparing.md", "iescore compare conll2003-eng/eng.testb"),
    ("docs/how-to/inputs.md",
     "iescore score conll2003-eng/eng.testb conll2003-shared-task-outputs/results/florian/eng.testb"),
    ("README.md", "iescore score conll2003-eng/eng.testb conll2003-shared-task-outputs/results/florian/eng.testb"),
]


@pytest.mark.parametrize("page,command", SHOWN)
def test_the_pages_show_these_outputs(page, command):
    path = ROOT / page
    found = [k for k, (lang, body, *_) in enumerate(blocks(path))
             if lang == "bash" and any(c == command or c.startswith(command + " ") for c in _commands(body))
             and _shown_output(path, k) is not None]
    assert found, f"{page} shows {command!r} and its output"


def test_the_inputs_page_shows_the_whole_table(data, monkeypatch, capsys):
    """The florian table on the inputs page is the whole of what its command prints, to the
    signature and its digest of the reference data."""
    from iescore.cli import main

    path = ROOT / "docs" / "how-to" / "inputs.md"
    cmd = "iescore score conll2003-eng/eng.testb conll2003-shared-task-outputs/results/florian/eng.testb"
    k = next(k for k, (lang, body, *_) in enumerate(blocks(path)) if lang == "bash" and _commands(body) == [cmd])
    shown = _shown_output(path, k)
    monkeypatch.chdir(data)
    assert main(shlex.split(cmd)[1:]) == 0
    assert capsys.readouterr().out.splitlines() == shown.splitlines()


@pytest.mark.parametrize("path,k", _ini_blocks(), ids=lambda v: rel(v) if isinstance(v, Path) else f"block{v + 1}")
def test_spacy_config_blocks_build_their_scorer(path, k):
    spacy = require("spacy")
    from spacy.tokens import Span as SpacySpan
    from spacy.training import Example
    from thinc.api import Config

    text = blocks(path)[k][1]
    # an excerpt names only its own sections: give their parents, as a whole config has them
    heads = re.findall(r"^\[([\w.]+)\]", text, flags=re.M)
    parents = [".".join(h.split(".")[:i]) for h in heads for i in range(1, h.count(".") + 1)]
    missing = [h for h in dict.fromkeys(parents) if h not in heads]
    cfg = Config().from_str("".join(f"[{h}]\n" for h in missing) + text)
    scorer = spacy.registry.resolve({"scorer": cfg["components"]["ner"]["scorer"]})["scorer"]
    nlp = spacy.blank("en")
    ref, pred = nlp("Ada Lovelace met Babbage"), nlp("Ada Lovelace met Babbage")
    ref.ents = [SpacySpan(ref, 0, 2, "PER"), SpacySpan(ref, 3, 4, "PER")]
    pred.ents = [SpacySpan(pred, 0, 1, "PER"), SpacySpan(pred, 3, 4, "PER")]
    scores = scorer([Example(pred, ref)])
    # O(1,1) one-to-one: "Ada" misses one token of "Ada Lovelace" and is accepted; Babbage exact
    assert (scores["ents_p"], scores["ents_r"], scores["ents_f"]) == (1.0, 1.0, 1.0)
    weights = cfg.get("training", {}).get("score_weights", {})
    assert weights and set(weights) <= set(scores), sorted(set(weights) - set(scores))
