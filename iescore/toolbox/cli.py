"""Beside the pipeline (the CoNLL toolbox), its command line: ``iescore validate``,
``iescore repair``, ``iescore convert`` and ``iescore summarize`` (the work is done in
`iescore.toolbox.commands`).

[`add_toolbox_parsers`][iescore.toolbox.cli.add_toolbox_parsers] adds the four
subcommands to ``iescore``'s parser and
[`main_toolbox`][iescore.toolbox.cli.main_toolbox] runs them; `main` runs them
alone (``main(["validate", FILE, "--scheme", "IOB2"])``). Exit status: 0, 1 when
``validate`` finds an invalid transition or a tag of another scheme, 2 on bad input
(a message naming the file, line and value).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from ..errors import IEScoreError
from ..io.conll import DOC_MODES, Columns, check_encoding
from .columns import LABELS
from .commands import convert_file, repair_file, summarize_file, summary_text, validate_file
from .tags import TOOLBOX_REPAIRS, TOOLBOX_SCHEMES, TypeFilter, toolbox_scheme

__all__ = ["COMMANDS", "add_toolbox_parsers", "main_toolbox", "main"]

COMMANDS = ("validate", "repair", "convert", "summarize")

_COLUMNS = ("gold (the next-to-last), pred (the last), last (the last column of a file of one tag column: a gold "
            "file or a prediction file alone)")
_BOTH = "both (the last two, gold and predicted tag, as iescore score reads one file), "


def _scheme(text: str) -> str:
    """A scheme name in any case, aliases (BIO, BIOES, BILUO) read as their scheme; other
    text is left for argparse's check of the choices to name."""
    try:
        return toolbox_scheme(text).name
    except IEScoreError:
        return "auto" if text.lower() == "auto" else text


def _common(p: argparse.ArgumentParser, labels: Sequence[str], default: str, documents: bool = False) -> None:
    p.add_argument("file", help="CoNLL file (- for standard input)")
    what = f"the tag columns read: {_BOTH}{_COLUMNS}" if "both" in labels else f"the tag column read: {_COLUMNS}"
    p.add_argument("--labels", choices=labels, default=default, help=f"{what}; default {default}")
    p.add_argument("--encoding", default="utf-8", help="file encoding (utf-8, latin-1, ...)")
    p.add_argument("--type-map", default="", metavar="A=X,B=Y",
                   help="rename (and merge) the chunks' types, e.g. PER=NE,LOC=NE (before --keep-types and --remove-types)")
    p.add_argument("--keep-types", default="", metavar="A,B",
                   help="only these types (after --type-map): the chunks of any other type are read as O")
    p.add_argument("--remove-types", default="", metavar="A,B",
                   help="the chunks of these types (after --type-map) are read as O; not with --keep-types")
    p.add_argument("--token-column", type=int, metavar="N", help="the token's column, from 1 (negative: from the end)")
    p.add_argument("--gold-column", type=int, metavar="N",
                   help="the gold tag's column, from 1 (negative: from the end; --labels gold, both or last)")
    p.add_argument("--pred-column", type=int, metavar="N",
                   help="the predicted tag's column, from 1 (negative: from the end; --labels pred, both or last)")
    p.add_argument("--comment-lines", action="store_true",
                   help="lines starting with # before a sentence are comments: skipped, counted, written back as they are")
    if documents:
        p.add_argument("--documents", choices=DOC_MODES, default="auto",
                       help="document boundaries: docstart, sentence or auto (docstart when the file has "
                            "-DOCSTART- lines); default auto")


def add_toolbox_parsers(sub: Any) -> None:
    """Add ``validate``, ``repair``, ``convert`` and ``summarize`` to the subcommands ``sub``
    (``argparse``'s ``add_subparsers()``)."""
    schemes = ", ".join(TOOLBOX_SCHEMES)
    v = sub.add_parser("validate", help="list the invalid tag transitions of a CoNLL file under a scheme",
                       description="One FILE:LINE line per invalid transition (the two tags and the token) and per "
                                   "tag of another scheme, then a summary line; exit status 1 when any is found.")
    _common(v, LABELS, "both", documents=True)
    v.add_argument("--scheme", type=_scheme, choices=TOOLBOX_SCHEMES, required=True, help=f"tag scheme: {schemes}")
    r = sub.add_parser("repair", help="write a CoNLL file with its tags repaired to valid tags of a scheme",
                       description="The sentences with an invalid transition are decoded and written again in "
                                   "valid tags; every other byte of the file is kept.")
    _common(r, LABELS, "both")
    r.add_argument("--scheme", type=_scheme, choices=TOOLBOX_SCHEMES, required=True, help=f"tag scheme: {schemes}")
    r.add_argument("--repair", choices=TOOLBOX_REPAIRS[:2], default="conlleval",
                   help="conlleval (keep each chunk as conlleval reads it) or discard (drop the chunks the "
                        "scheme forbids); default conlleval")
    r.add_argument("--output", required=True, help="the file written (- for standard output); never the input")
    c = sub.add_parser("convert", help="write a CoNLL file with its tags in another scheme",
                       description="Each tag column read is decoded under --from and written under --to; every "
                                   "other byte of the file is kept. IO joins adjacent chunks of one label.")
    _common(c, LABELS, "both")
    c.add_argument("--from", dest="source", type=_scheme, choices=TOOLBOX_SCHEMES, required=True,
                   help=f"the file's scheme: {schemes}")
    c.add_argument("--to", dest="target", type=_scheme, choices=TOOLBOX_SCHEMES, required=True,
                   help=f"the scheme written: {schemes}")
    c.add_argument("--repair", choices=TOOLBOX_REPAIRS, default="strict",
                   help="a chunk --from forbids: strict (an error), conlleval (kept as conlleval reads it) or "
                        "discard (dropped); default strict")
    c.add_argument("--output", required=True, help="the file written (- for standard output); never the input")
    s = sub.add_parser("summarize", help="count the documents, sentences, tokens and mentions per type of a CoNLL file",
                       description="Documents, sentences, tokens (-DOCSTART- lines are none) and the mentions per "
                                   "type of one tag column.")
    _common(s, ("gold", "pred", "last"), "gold", documents=True)
    s.add_argument("--scheme", type=_scheme, choices=("auto", *TOOLBOX_SCHEMES), default="auto",
                   help=f"tag scheme: {schemes} or auto (read from the tags); default auto")
    s.add_argument("--repair", choices=TOOLBOX_REPAIRS, default="conlleval",
                   help="chunks the scheme forbids: conlleval (kept), discard (dropped) or strict (an error); "
                        "default conlleval")
    s.add_argument("--json", action="store_true", help="print one JSON object")
    s.add_argument("--strings", action="store_true", help="add the mentions per type and surface string")


def main_toolbox(args: argparse.Namespace) -> int:
    """Run the toolbox command ``args.command`` (parsed by a parser that
    `add_toolbox_parsers` built); returns the exit status."""
    try:
        check_encoding(args.encoding)
        types = TypeFilter(args.type_map, args.keep_types, args.remove_types)
        cols = Columns(args.token_column, args.gold_column, args.pred_column, args.comment_lines)
        if args.command == "validate":
            result = validate_file(args.file, args.scheme, args.labels, encoding=args.encoding,
                                   documents=args.documents, types=types, columns=cols)
            for line in result.lines:
                print(line)
            print(result.summary)
            return 0 if result.ok else 1
        if args.command == "repair":
            line = repair_file(args.file, args.output, args.scheme, args.repair, args.labels, encoding=args.encoding,
                               types=types, columns=cols)
        elif args.command == "convert":
            line = convert_file(args.file, args.output, args.source, args.target, args.repair, args.labels,
                                encoding=args.encoding, types=types, columns=cols)
        else:
            summary = summarize_file(args.file, args.labels, scheme=args.scheme, repair=args.repair,
                                     strings=args.strings, encoding=args.encoding, documents=args.documents,
                                     types=types, columns=cols)
            print(summary_text(args.file, summary, args.json))
            return 0
    except IEScoreError as exc:
        print(f"iescore: error: {exc}", file=sys.stderr)
        return 2
    print(line, file=sys.stderr if args.output == "-" else sys.stdout)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """The four commands alone: ``main(["summarize", FILE, "--json"])``."""
    parser = argparse.ArgumentParser(prog="iescore")
    add_toolbox_parsers(parser.add_subparsers(dest="command", required=True))
    return main_toolbox(parser.parse_args(argv))
