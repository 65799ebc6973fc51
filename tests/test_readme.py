"""The README's Python examples run as written."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_python_blocks_run():
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert blocks
    for block in blocks:
        exec(compile(block, str(README), "exec"), {})


def test_readme_compare_example_is_the_output_of_its_command(data, capsys, monkeypatch):
    """The `iescore compare` example prints what its command prints (seeded: the same draws)."""
    from iescore.cli import main

    text = README.read_text()
    m = re.search(r"```bash\n# from the folder of the shared corpora\n(iescore compare .*?)\n```\n\n```\n(.*?)```",
                  text, flags=re.S)
    assert m, "the README shows an `iescore compare` command and its output"
    argv = m.group(1).replace("\\\n", " ").split()[1:]
    monkeypatch.chdir(data)
    assert main(argv) == 0
    got = capsys.readouterr().out.splitlines()
    assert m.group(2).splitlines() == got[: len(m.group(2).splitlines())]
