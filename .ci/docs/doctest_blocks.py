"""A griffe extension for the documentation site: the docstrings' doctest examples
(``>>>`` lines and their output, up to a blank line) are shown as Python console code
blocks, wherever they stand (the docstrings write ``Example:`` sections and examples in
the text, which Markdown would otherwise read as text)."""

from __future__ import annotations

import textwrap
from typing import Any

import griffe


def fence_doctests(text: str) -> str:
    """Wrap every doctest block of a docstring (from a ``>>>`` line to the next blank
    line, as doctest reads it) in a ``pycon`` fence, dedented, with blank lines around."""
    lines = text.splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        if not lines[i].lstrip().startswith(">>>"):
            out.append(lines[i])
            i += 1
            continue
        j = i
        while j < len(lines) and lines[j].strip():
            j += 1
        block = textwrap.dedent("\n".join(lines[i:j]))
        out += ["", "```pycon", *block.splitlines(), "```", ""]
        i = j
    return "\n".join(out)


class DoctestBlocks(griffe.Extension):
    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None and ">>>" in obj.docstring.value:
            obj.docstring.value = fence_doctests(obj.docstring.value)
