"""The views stage of the pipeline, its breakdowns' inputs (`iescore.render.breakdowns`):
the mentions of a CoNLL training file (for ``seen`` / ``unseen``), a file of document
attributes, and the breakdowns the command line's ``--breakdown`` options name, with the
files they name read.

Example:
    >>> import iescore
    >>> r = iescore.score_files(iescore.example_path())
    >>> (b,) = breakdowns(r, [("length", None)])
    >>> [row["group"] for row in b.rows]
    ['1', '2', '4']
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from .breakdowns import Breakdown, by_attribute, by_length, by_seen

if TYPE_CHECKING:
    from ..report import Report

__all__ = ["training_mentions", "read_attributes", "breakdowns"]


def training_mentions(path: str, *, encoding: str = "utf-8") -> set[tuple[str, str]]:
    """The (label, text) of every mention of a CoNLL training file: its gold tags in the
    last column (the scheme detected from them), a mention's text its tokens joined by one
    space."""
    import warnings

    from ..config import Config
    from ..errors import IEScoreWarning
    from ..io.conll import read_conll
    from ..scoring.stream import Scorer

    s = Scorer(Config(scheme="auto"))
    with warnings.catch_warnings():  # the gold column read as both sides, on purpose
        warnings.filterwarnings("ignore", ".*is the same column given twice", IEScoreWarning)
        s.add_batch(read_conll(path, path, encoding=encoding))
    return {(it["label"], it["text"]) for it in s.report().items("reference")}


def read_attributes(path: str, *, encoding: str = "utf-8") -> dict[str, str]:
    """A document attribute file: one ``document-id<TAB>value`` line per document (blank
    lines and lines starting with ``#`` skipped); an InputError names the file and line of a
    line without a tab or an id given twice."""
    from ..errors import InputError
    from ..io.textfiles import read_lines

    out: dict[str, str] = {}
    for n, line in enumerate(read_lines(path, encoding), 1):
        line = line.rstrip("\r\n")
        if not line.strip() or line.startswith("#"):
            continue
        if "\t" not in line:
            raise InputError(f"{path}:{n}: expected 'document-id<TAB>value', got {line[:80]!r}")
        doc, value = line.split("\t", 1)
        if doc in out:
            raise InputError(f"{path}:{n}: document {doc!r} is given a value twice")
        out[doc] = value.strip()
    return out


def breakdowns(report: Report, specs: Iterable[tuple[str, str | None]], *, encoding: str = "utf-8") -> list[Breakdown]:
    """The breakdowns of ``specs`` (`parse_breakdown`'s pairs), files read with ``encoding``."""
    out = []
    for kind, arg in specs:
        if kind == "length":
            out.append(by_length(report))
        elif kind == "seen":
            assert arg is not None
            out.append(by_seen(report, training_mentions(arg, encoding=encoding)))
        else:
            assert arg is not None
            import os

            out.append(by_attribute(report, read_attributes(arg, encoding=encoding), os.path.basename(arg)))
    return out
