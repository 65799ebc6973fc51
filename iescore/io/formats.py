"""Before the pipeline (readers), for the command line: ``iescore score --input-format``
reads a gold and a prediction file in any of the formats of `iescore.io`
(`iescore.files` scores them).

``conll`` is the CLI's own path ([`iescore.io.conll`][iescore.io.conll]); ``brat``
([`iescore.io.brat`][iescore.io.brat], a folder or a ``.ann`` file), ``jsonl``
([`iescore.io.jsonl`][iescore.io.jsonl]), ``docbin`` ([`iescore.io.docbin`][iescore.io.docbin]) and ``llm``
([`iescore.io.extractions`][iescore.io.extractions]) are read here and scored by
`iescore.files` (which imports the scorers). ``--pred-format`` reads the prediction in
another format than the gold (``--input-format``) as long as the texts agree.
Character-offset input needs ``--level characters|tokens`` (with ``--tokenizer`` and
``--misaligned`` for ``tokens``); ``--discontinuous`` is brat's policy for
discontinuous spans and ``--align`` the LLM strings' placement under ``--setting AO``.
The readers give the documents' relations and links too (brat ``R`` and ``N`` lines, JSONL
``relations`` and ``links``, LLM ``relations``), which ``--task relations`` and ``--task
links`` score.
"""

from __future__ import annotations

import argparse
import codecs
import json
import os
from typing import Any

from ..config import LEVELS, TOKENIZER_NAMES
from ..errors import ConfigError, choices
from ..text import MISALIGNED
from .brat import DISCONTINUOUS, read_brat
from .extractions import ALIGN, read_llm

__all__ = ["FORMATS", "add_input_options", "uses_formats", "read_input", "sniff_format", "not_conll"]

FORMATS = ("conll", "brat", "jsonl", "docbin", "llm")


def add_input_options(parser: Any) -> None:
    """Add the input-format options to ``iescore score``'s parser, in a group of their own
    (``iescore compare``, ``report`` and ``agree`` have options of their own for it)."""
    group = parser.add_argument_group("input formats")

    def among(values: Any, default: Any) -> str:  # the choices in the help text, plain
        return f" ({', '.join(map(str, values))}; default {default})"

    tokenizers = [t for t in TOKENIZER_NAMES if t != "custom"]
    group.add_argument("--input-format", choices=FORMATS, default=None,
                       help="the format of FILE (and of PRED_FILE unless --pred-format)" + among(FORMATS, "conll")
                            + "; without it, a JSON file, a .ann file, a .spacy file or a folder is refused, "
                              "naming the format to pass")
    group.add_argument("--pred-format", choices=FORMATS, default=None,
                       help="the format of PRED_FILE" + among(FORMATS, "--input-format"))
    group.add_argument("--level", choices=LEVELS, default=None,
                       help="character-offset input: score on characters, or on tokens (needed but for conll)"
                            + among(LEVELS, "none"))
    group.add_argument("--tokenizer", choices=tokenizers, default="regex",
                       help="the tokens of --level tokens (given: the input's own tokens)" + among(tokenizers, "regex"))
    group.add_argument("--misaligned", choices=MISALIGNED, default="expand",
                       help="--level tokens: spans off the token boundaries" + among(MISALIGNED, "expand"))
    group.add_argument("--discontinuous", choices=DISCONTINUOUS, default="error",
                       help="brat: discontinuous spans" + among(DISCONTINUOUS, "error"))
    group.add_argument("--align", choices=ALIGN, default="first",
                       help="llm under --setting AO: where a string found in the text is placed" + among(ALIGN, "first"))


def uses_formats(args: argparse.Namespace) -> bool:
    """Whether the command line reads another format than CoNLL (then `score_files` scores it);
    a character-offset option given with CoNLL input is a ConfigError."""
    other = args.input_format not in (None, "conll") or args.pred_format not in (None, "conll")
    if not other and args.level is not None:
        raise ConfigError("--level is for character-offset input (--input-format brat, jsonl, docbin or llm); "
                          "CoNLL files are scored on their tokens")
    return other


def read_input(path: str, fmt: str, args: argparse.Namespace) -> Any:
    """One side's file in format ``fmt``: a [`TextCorpus`][iescore.io.chars.TextCorpus], or LLM
    [`Extraction`][iescore.io.extractions.Extraction] s."""
    if fmt == "brat":
        return read_brat(path, discontinuous=args.discontinuous, encoding=args.encoding)
    if fmt == "jsonl":
        from .jsonl import read_jsonl

        return read_jsonl(path, encoding=args.encoding)
    if fmt == "docbin":
        from .docbin import read_docbin

        return read_docbin(path)
    if fmt == "llm":
        return read_llm(path, encoding=args.encoding)
    raise ConfigError(f"--input-format {fmt!r} is not read here; valid: {FORMATS[1:]}")


_LLM_LISTS = ("entities", "extractions", "items")  # iescore.io.llm's lists of {label, text}


def _json_guess(first: str) -> str:
    """``llm`` when the first JSON record holds extractions without offsets (or relations
    and no text), else ``jsonl``.

    >>> _json_guess('{"id": "d", "relations": [{"label": "r", "head": "Al", "tail": "IBM"}]}')
    'llm'
    """
    try:
        rec = json.loads(first)
    except ValueError:
        return "jsonl"
    rec = rec[0] if isinstance(rec, list) and rec else rec
    if isinstance(rec, dict):
        for key in _LLM_LISTS:
            items = rec.get(key)
            if isinstance(items, list) and items and isinstance(items[0], dict):
                return "jsonl" if {"start", "start_offset"} & set(items[0]) else "llm"
        rels = rec.get("relations")
        if "text" not in rec and isinstance(rels, list) and rels and isinstance(rels[0], dict):
            return "llm"  # relations between strings, no text for offsets to point into
    return "jsonl"


def sniff_format(path: str | None, encoding: str = "utf-8") -> tuple[str, str] | None:
    """``(format, what the file looks like)`` for a path that is no CoNLL file: a folder
    (brat), a ``.ann`` file (brat), a ``.spacy`` file (docbin), JSON (jsonl or llm: its first
    non-blank character ``{`` or ``[`` starting a JSON line, or any such character in a
    ``.json``/``.jsonl`` file); None for anything else, standard input or a missing file.

    >>> import tempfile, os, pathlib
    >>> path = os.path.join(tempfile.mkdtemp(), "g.txt")
    >>> _ = pathlib.Path(path).write_text('{"text": "Al", "spans": []}\\n')
    >>> sniff_format(path), sniff_format(os.path.dirname(path))
    (('jsonl', "JSON (its first character is '{')"), ('brat', 'a folder'))
    """
    if path is None or path == "-":
        return None
    if os.path.isdir(path):
        return "brat", "a folder"
    ext = os.path.splitext(path)[1].lower()
    if ext == ".ann":
        return "brat", "a brat annotation file (.ann)"
    if ext == ".spacy":
        return "docbin", "a spaCy DocBin file (.spacy)"
    try:
        with open(path, "rb") as fh:
            head = fh.read(1 << 16)
    except OSError:
        return None
    for bom, enc in ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"), (codecs.BOM_UTF8, "utf-8-sig"),
                     (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16")):
        if head.startswith(bom):
            encoding = enc
            break
    try:
        text = head.decode(encoding, errors="replace").lstrip("\ufeff \t\r\n")
    except (LookupError, UnicodeError):
        return None
    if not text[:1] or text[0] not in "{[":
        return None
    first = text.splitlines()[0].strip()
    if ext in (".json", ".jsonl") or first in ("{", "[") or first.startswith(('{"', "[{", '["', "[[", "[]", "{}")):
        return _json_guess(first), f"JSON (its first character is {text[0]!r})"
    try:
        json.loads(first)
    except ValueError:
        return None  # a CoNLL line whose token is a bracket
    return _json_guess(first), f"JSON (its first character is {text[0]!r})"


def not_conll(args: argparse.Namespace, command: str) -> str | None:
    """The message refusing a FILE or PRED_FILE read as CoNLL that `sniff_format`
    recognises: for ``score`` without ``--input-format``, the options to pass; for
    ``command`` ``report``, ``compare`` or ``agree``, that it reads CoNLL files unless the format is named."""
    if command == "score" and (args.input_format is not None or args.pred_format is not None):
        return None  # the formats are named
    paths = {"score": ("file", "pred_file"), "report": ("file", "pred_file"),
             "compare": ("gold", "systems"), "agree": ("annotators",)}[command]
    given: list[str | None] = []
    for name in paths:
        value = getattr(args, name, None)
        given += value if isinstance(value, list) else [value]
    found = [(p, sniff_format(p, args.encoding)) for p in given if p is not None]
    seen = [(p, f) for p, f in found if f is not None]
    if not seen:
        return None
    path, (fmt, what) = seen[0]
    if command != "score":  # compare, report and agree read other formats when they are named
        level = "--input-level" if command == "compare" else "--level"
        return (f"{path}: {what}, not a CoNLL file; iescore {command} reads CoNLL files unless --input-format is "
                f"given (pass --input-format {fmt} and {level} characters or {level} tokens)")
    g = found[0][1][0] if found[0][1] else None
    p = found[1][1][0] if len(found) > 1 and found[1][1] else None
    if g is None:  # a CoNLL gold file: its predictions are CoNLL too
        return (f"{path}: {what}, not CoNLL columns, while the gold file {found[0][0]} is read as CoNLL, which is "
                f"scored against CoNLL predictions only; give the gold file in a format with character offsets "
                f"(--input-format {choices(FORMATS[1:])}) and pass --pred-format {p} and --level characters or "
                "--level tokens")
    flags = f"--input-format {g}" + (f" --pred-format {p}" if p not in (None, g) else "")
    return (f"{path}: {what}, not CoNLL columns (the default input format); pass {flags} and --level characters "
            f"or --level tokens (input formats: {choices(FORMATS)})")
