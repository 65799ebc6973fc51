"""The toolbox's how-to page shows what the commands print: its example file is the
fixture the commands read, each bash block's output is what its last command prints, and
each console block (commands whose exit status is 1, which the site's bash blocks cannot
show) is a transcript of the commands and their status."""

from __future__ import annotations

import shlex
from pathlib import Path

from test_docs_examples import _commands, _shown_output, blocks

from iescore.toolbox.cli import main

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "how-to" / "conll-toolbox.md"
FIXTURE = ROOT / "tests" / "fixtures" / "toolbox" / "example.conll"


def _workdir(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    (work / "tests").symlink_to(ROOT / "tests")
    return work


def test_the_page_shows_the_fixture():
    texts = [body for lang, body, *_ in blocks(PAGE) if lang == "text"]
    assert texts[0] == FIXTURE.read_text(encoding="utf-8")


def test_each_bash_block_prints_what_the_page_shows(tmp_path, monkeypatch, capsys):
    found = 0
    for k, (lang, body, *_) in enumerate(blocks(PAGE)):
        if lang != "bash":
            continue
        block = tmp_path / f"block{k}"
        block.mkdir()
        monkeypatch.chdir(_workdir(block))
        out = ""
        for line in _commands(body):
            words = shlex.split(line)
            assert words[0] == "iescore"
            capsys.readouterr()
            assert main(words[1:]) == 0, line
            out = capsys.readouterr().out
            assert out, line
        shown = _shown_output(PAGE, k)
        assert shown is not None, body
        assert out.splitlines() == shown.splitlines(), body
        found += 1
    assert found == 6


def test_each_console_block_is_a_transcript(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(_workdir(tmp_path))
    found = 0
    for lang, body, *_ in blocks(PAGE):
        if lang != "console":
            continue
        printed: list[str] = []
        status = None
        for line in body.splitlines():
            if line.startswith("$ iescore "):
                assert printed == [], body  # everything the last command printed was shown
                capsys.readouterr()
                status = main(shlex.split(line)[2:])
                printed = capsys.readouterr().out.splitlines()
            elif line == "$ echo $?":
                assert printed == []
                printed = [str(status)]
            else:
                assert printed and printed.pop(0) == line, (body, line)
        assert printed == []
        found += 1
    assert found == 2
