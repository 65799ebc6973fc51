"""An entry point over the pipeline: the ``iescore`` command line.

``iescore score FILE [PRED_FILE] [options]`` scores a CoNLL-style file (the last
two columns are the gold and predicted tags, conlleval's input) or a gold file
and a prediction file aligned line by line (each file's last column). It prints
a conlleval-style table, or with ``--json`` one JSON object whose values are
fractions in [0, 1] (null where undefined). ``iescore score --example`` scores
a small built-in example; FILE ``-`` reads standard input (``iescore score - <
output.conll``, as conlleval reads it). Bad input exits with status 2 and a
message naming the file, line and value; likely mistakes (an empty file, the
same column given twice, no label in common) print ``iescore: warning: ...`` on
standard error and the scores all the same. Slips are refused before anything is
read (status 2, saying what to pass): a JSON, brat or spaCy file read as CoNLL, a file
read in another encoding than its byte-order mark says, a gold file without its
prediction column, a misspelt option, choice or subcommand (with the nearest valid
one), and an output file (``--output``, ``--html``) that is one of the inputs. Output
files are written whole or not at all. When standard output
is closed early (``iescore score F | head -1``) the command stops quietly with status
141, as a Unix tool stopped by SIGPIPE reports it; Ctrl-C prints ``iescore:
interrupted`` and exits with status 130.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from collections.abc import Iterator, Sequence
from typing import Any

from .config import (
    AVERAGES,
    COUNTINGS,
    MODES,
    NILS,
    NORMALISERS,
    REPAIRS_CHOICES,
    SETTINGS,
    TASKS,
    Config,
    Rule,
    parse_supertags,
    parse_types,
)
from .errors import ConfigError, IEScoreError, IEScoreWarning, InputError, choices, did_you_mean
from .files import check_task_format, score_args
from .io.conll import (
    DOC_MODES,
    Columns,
    check_encoding,
    example_path,
    missing_prediction,
    read_conll,
)
from .io.conll_stream import score_conll
from .io.formats import add_input_options, not_conll, uses_formats
from .options import LINK_SETTINGS, RELATION_SETTINGS
from .progress import Progress, erase
from .render.formats import add_output_options, output_format, report_pieces, write_output
from .render.report_cli import add_report_parser, write_report_html
from .scoring.stream import Scorer
from .stats.cli import config_from_args
from .stats.published import add_parser as add_weighted_parser
from .stats.published import main as main_weighted
from .toolbox.cli import COMMANDS as TOOLBOX_COMMANDS
from .toolbox.cli import add_toolbox_parsers, main_toolbox
from .version import __version__

__all__ = ["main", "build_parser", "Progress"]

_DEFAULT = Config()


def _supertags(text: str) -> tuple[tuple[str, str], ...]:
    try:
        return parse_supertags(text)
    except IEScoreError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _types(text: str) -> tuple[str, ...]:
    try:
        return parse_types(text)
    except IEScoreError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _three_floats(text: str) -> tuple[float, float, float]:
    try:
        a, b, c = (float(x) for x in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected three numbers S,D,I, got {text!r}") from None
    return a, b, c


def _setting(text: str) -> str:
    """A setting in any case (an acronym, as scheme names are read); other text is left for
    argparse's check of the choices to name."""
    return text.upper() if text.upper() in SETTINGS else text


def _rule(text: str) -> Rule:
    try:
        return Rule.parse(text)
    except IEScoreError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


class _Parser(argparse.ArgumentParser):
    """argparse's parser, whose errors for a misspelt option, choice or subcommand name
    the nearest valid one ([`did_you_mean`][iescore.errors.did_you_mean], as the Python API does)."""

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        if action.choices is not None and value not in action.choices:
            names = [str(c) for c in action.choices]
            raise argparse.ArgumentError(
                action, f"invalid choice: {value!r}{did_you_mean(value, names)}; choose from {choices(names)}")

    def parse_args(self, args: Sequence[str] | None = None, namespace: Any = None) -> Any:  # type: ignore[override]
        ns, extra = self.parse_known_args(args, namespace)
        if extra:
            sub = self._subcommand(ns)
            where = sub or self
            known = [o for a in where._actions for o in a.option_strings if o.startswith("--")]
            shown = []
            for word in extra:
                name = word.split("=", 1)[0]
                hint = did_you_mean(name[2:], [o[2:] for o in known]) if name.startswith("--") else ""
                shown.append(word + hint.replace(" (did you mean '", " (did you mean '--"))
            where.error(f"unrecognized arguments: {' '.join(shown)}")
        return ns

    def _subcommand(self, ns: Any) -> argparse.ArgumentParser | None:
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction) and getattr(ns, action.dest, None):
                return action.choices[getattr(ns, action.dest)]  # type: ignore[no-any-return]
        return None


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="iescore",
        description="Information Extraction evaluation as the literature defines it.",
    )
    parser.add_argument("--version", action="version", version=f"iescore {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    sc = sub.add_parser(
        "score",
        help="score a CoNLL file (gold + prediction columns) or a gold file and a prediction file",
        description=(__doc__ or "").split("\n\n", 1)[-1],  # the module's place in the code is not for users
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sc.add_argument("file", nargs="?", help="CoNLL file (- for standard input); with PRED_FILE, the gold file")
    sc.add_argument("pred_file", nargs="?", help="prediction file, aligned line by line with FILE")
    sc.add_argument("--example", action="store_true", help="score the built-in example file")
    g = sc.add_argument_group("evaluation model")
    g.add_argument("--setting", type=_setting, choices=SETTINGS, default=_DEFAULT.setting,
                   help="AO (all occurrences: spans at positions) or OBD (one best per document: "
                   "templates of distinct fillers), in any case; default AO")
    g.add_argument("--rule", type=_rule, default=None, help="matching rule: exact (E), contain(e) (C(e)), overlap(e,m) (O(e,m)), or by share: "
                   "IoU(t), cover(t) (0 < t <= 1: at least t of the union / of the answer) or sim(t) (edit "
                   "similarity of strings; OBD or one-per-string; the fuzzy extra), e.g. 'O(1,1)', 'O(inf,inf)' "
                   "or 'IoU(0.5)'; default exact")
    g.add_argument("--counting", choices=COUNTINGS, default=_DEFAULT.counting,
                   help="any (De Sitter: every prediction matching some answer is a TP) or one-to-one "
                        "(a largest matching); default any")
    g.add_argument("--mode", choices=MODES, default=_DEFAULT.mode,
                   help="match-all (every occurrence), match-best (the most confident prediction per document "
                        "and label) or one-per-string (distinct strings); default match-all")
    g.add_argument("--scheme", default="auto", help="tag scheme: IO, IOB1, IOB2, IOE1, IOE2, IOBES, BMES, BILOU or auto "
                   "(detected from the gold tags); default auto")
    g.add_argument("--repair", choices=REPAIRS_CHOICES, default=_DEFAULT.repair,
                   help="ill-formed tag sequences: conlleval (repair as conlleval does), strict (an error) "
                        "or discard (drop the chunk); default conlleval")
    g.add_argument("--average", choices=AVERAGES, default=_DEFAULT.average, help="the headline average: micro, macro or weighted; default micro")
    g.add_argument("--beta", type=float, default=_DEFAULT.beta,
                   help="beta of F_beta (and alpha = 1/(1+beta^2) of Makhoul's E); default 1")
    g.add_argument("--normaliser", default=_DEFAULT.normaliser, help=f"filler string normaliser (OBD, one-per-string): {', '.join(NORMALISERS)}; "
                   "combine with +, e.g. lower+whitespace; default identity")
    g.add_argument("--supertags", "--type-map", type=_supertags, default=(),
                   help="type renames and merges before counting, e.g. PER=NE,LOC=NE (applied before "
                        "--keep-types and --remove-types)")
    g.add_argument("--keep-types", type=_types, default=(), metavar="A,B",
                   help="score only these types (after --type-map): the others are dropped from the gold "
                        "and the prediction before matching, as if never annotated")
    g.add_argument("--remove-types", type=_types, default=(), metavar="A,B",
                   help="drop these types (after --type-map) from the gold and the prediction before "
                        "matching, as if never annotated; not with --keep-types")
    g.add_argument("--token-weight", type=float, default=_DEFAULT.token_weight,
                   help="weight of a token in the token & separator model; default 1")
    g.add_argument("--separator-weight", type=float, default=_DEFAULT.separator_weight,
                   help="weight of a separator in the token & separator model; default 1")
    g.add_argument("--ser-weights", type=_three_floats, default=_DEFAULT.ser_weights,
                   help="weights of S,D,I in the weighted SER, e.g. 1,0.5,0.5")
    g.add_argument("--task", choices=TASKS, default=None,
                   help="what is scored: entities (spans), relations (between spans) or links (spans with "
                        "knowledge-base ids; both read from brat or JSONL files, relations from LLM output "
                        "too: --input-format); default entities")
    g.add_argument("--relation-setting", choices=tuple(RELATION_SETTINGS), default=None,
                   help="relations, a named setting: strict (--rule E, argument labels compared), boundaries "
                        "(--rule E, --no-arg-labels) or relaxed (--rule 'O(inf,inf)', argument labels compared); "
                        "implies --task relations")
    g.add_argument("--link-setting", choices=tuple(LINK_SETTINGS), default=None,
                   help="links, a named setting: strong (--rule E) or weak (--rule 'O(inf,inf)': the mentions "
                        "overlap); implies --task links")
    g.add_argument("--no-arg-labels", dest="arg_labels", action="store_false",
                   help="relations: do not compare the arguments' entity labels (with --rule E: the boundaries setting)")
    g.add_argument("--symmetric", type=_types, default=(), metavar="A,B",
                   help="relations: the relation labels that match in either argument order")
    g.add_argument("--nil", choices=NILS, default=_DEFAULT.nil,
                   help="links: keep (NIL is an id like any other) or ignore (NIL answers and predictions left out); default keep")
    g.add_argument("--link-types", action="store_true",
                   help="links: compare the mentions' entity types too")
    sc.set_defaults(config_fields=tuple(a.dest for a in g._group_actions))  # what config_from_args reads
    f = sc.add_argument_group("input and output")
    f.add_argument("--encoding", default="utf-8", help="file encoding (utf-8, latin-1, ...)")
    f.add_argument("--documents", choices=DOC_MODES, default="auto",
                   help="document boundaries: docstart (-DOCSTART- lines), sentence (every sentence a "
                        "document) or auto (docstart when the file has -DOCSTART- lines, else sentence); default auto")
    f.add_argument("--json", action="store_true", help="print one JSON object (the same as --format json)")
    add_input_options(sc)  # --input-format brat|jsonl|docbin|llm ... (iescore/io/formats.py)
    o = sc.add_argument_group("output")  # score's own (compare and agree copy the groups above)
    add_output_options(o)
    sub.add_parser("metric-path", help="print the folder to pass to evaluate.load (the iescore metric)")
    from .stats.cli import add_stats_parsers  # iescore compare, iescore agree

    add_stats_parsers(sub, sc)
    add_report_parser(sub, sc)  # iescore report: score's options and an HTML error report
    for p in (sc, sub.choices["report"]):  # the CoNLL layout: score and report read CoNLL files themselves
        _add_column_options(p)
    add_toolbox_parsers(sub)  # iescore validate, repair, convert, summarize
    add_weighted_parser(sub)  # iescore weighted: averages from a paper's per-label table
    return parser


def _column(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n == 0:
        raise argparse.ArgumentTypeError(f"expected a column number from 1 (negative: from the end, -1 the last), "
                                         f"got {text!r}")
    return n


def _add_column_options(p: argparse.ArgumentParser) -> None:
    c = p.add_argument_group("CoNLL columns")
    c.add_argument("--token-column", type=_column, metavar="N",
                   help="the token's column, from 1 (negative: from the end); default 1")
    c.add_argument("--gold-column", type=_column, metavar="N",
                   help="the gold tag's column, from 1 (negative: from the end); default the next-to-last "
                        "(one file), the gold file's last (two files)")
    c.add_argument("--pred-column", type=_column, metavar="N",
                   help="the predicted tag's column, from 1 (negative: from the end); default the last "
                        "(of the prediction file, with two files)")
    c.add_argument("--comment-lines", action="store_true",
                   help="lines starting with # before a sentence are comments (CoNLL-U): skipped and counted")


def _columns(args: argparse.Namespace) -> Columns | None:
    """The CoNLL layout the options name, None for the default one (an InputError when
    they are given for another input format)."""
    cols = Columns(args.token_column, args.gold_column, args.pred_column, args.comment_lines)
    if cols.default:
        return None
    if args.command in ("score", "report") and uses_formats(args):
        raise InputError("--token-column, --gold-column, --pred-column and --comment-lines read CoNLL files only; "
                         "drop them, or --input-format")
    return cols


def _example_path() -> str:
    return example_path()


SIGPIPE_STATUS = 141  # 128 + SIGPIPE: what a shell reports for a tool stopped by a closed pipe
SIGINT_STATUS = 130  # 128 + SIGINT: what a shell reports for a tool stopped by Ctrl-C


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; the exit status (0, 2 on bad input, 141 on a closed output pipe,
    130 on Ctrl-C)."""
    with warnings.catch_warnings():
        warnings.simplefilter("always", IEScoreWarning)
        show = warnings.showwarning

        def show_clean(message, category, filename, lineno, file=None, line=None):  # type: ignore[no-untyped-def]
            if issubclass(category, IEScoreWarning):
                print(f"iescore: warning: {message}", file=sys.stderr)
            else:
                show(message, category, filename, lineno, file, line)

        warnings.showwarning = show_clean
        try:
            return _main(argv)
        except BrokenPipeError:
            # the reader stopped reading: say nothing more, and let nothing flush into the
            # closed pipe at exit (Python's documented recipe for SIGPIPE)
            try:
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, sys.stdout.fileno())
            except (OSError, ValueError):
                pass
            return SIGPIPE_STATUS
        except KeyboardInterrupt:  # Ctrl-C: one line, no traceback (an output file is left as it was)
            erase(sys.stderr)  # over a progress bar, if one is drawn
            print("iescore: interrupted", file=sys.stderr)
            return SIGINT_STATUS


def _two_column_hint(args: argparse.Namespace, exc: IEScoreError) -> str:
    """A hint for a reference-tag error in a one-file CoNLL input of 2 columns: likely a
    token and a tag, not conlleval's gold and predicted tags (so is a predicted tag refused
    under IO, the scheme a token column read as gold tags is detected as)."""
    from .io.conll import TWO_COLUMNS, two_columns

    conll = getattr(args, "input_format", "conll") == "conll" and getattr(args, "pred_format", None) in (None, "conll")
    tags = "(reference)" in str(exc) or "not a tag of scheme IO;" in str(exc)
    if args.pred_file is None and conll and tags and two_columns(args.file, args.encoding):
        return "\niescore: hint: " + TWO_COLUMNS.format(name=args.file)
    return ""


# the options that name a file written, and the arguments that name files read
OUTPUTS = (("output", "--output"), ("html", "--html"))
INPUTS = (("file", "the input file"), ("pred_file", "the prediction file"), ("gold", "the gold file"),
          ("systems", "a system file"), ("annotators", "an annotation file"))


def _same_file(out: str, inp: str) -> bool:
    """Is ``out`` the file ``inp`` (links and other spellings of a path resolved), or in the folder ``inp``?"""
    real_out, real_in = os.path.realpath(out), os.path.realpath(inp)
    if os.path.isdir(real_in):
        return os.path.commonpath([real_out, real_in]) == real_in
    if real_out == real_in:
        return True
    try:
        return os.path.samefile(out, inp)  # a hard link
    except OSError:
        return False


def _outputs_are_not_inputs(args: argparse.Namespace) -> None:
    """An InputError when an output option names an input file (or a path in an input
    folder), or two output options name one file: nothing is read or written then."""
    outs = [(opt, getattr(args, dest)) for dest, opt in OUTPUTS if getattr(args, dest, None) not in (None, "-")]
    ins = []
    for dest, role in INPUTS:
        value = getattr(args, dest, None)
        ins += [(role, p) for p in (value if isinstance(value, list) else [value]) if p not in (None, "-")]
    if args.command in ("score", "report") and args.pred_file is not None:
        ins = [("the gold file" if role == "the input file" else role, p) for role, p in ins]
    for opt, out in outs:
        for role, inp in ins:
            if _same_file(out, inp):
                where = f"inside the input folder {inp!r}" if os.path.isdir(inp) else f"{role} {inp!r}"
                raise InputError(f"{opt} {out!r} is {where}: writing it would destroy the input, so nothing was "
                                 f"read or written; name another file for {opt}")
    if len(outs) == 2 and _same_file(outs[0][1], outs[1][1]):
        raise InputError(f"{outs[0][0]} and {outs[1][0]} name the same file {outs[1][1]!r}; name two files")


def _before_reading(args: argparse.Namespace) -> None:
    """The checks made before any file is read or written (an IEScoreError for a slip):
    the encoding, outputs that are inputs, files of another format read as CoNLL, and a
    gold file given alone (no prediction column)."""
    if hasattr(args, "encoding"):
        check_encoding(args.encoding)
    _outputs_are_not_inputs(args)
    named = getattr(args, "input_format", None) not in (None, "conll") or \
        getattr(args, "pred_format", None) not in (None, "conll")
    problem = None if named and args.command in ("compare", "report") else not_conll(args, args.command)
    if problem is not None:
        raise InputError(problem)
    if args.command in ("compare", "agree"):  # the task's annotations come from some input formats only
        fmt = args.input_format
        check_task_format(config_from_args(args).task, fmt, getattr(args, "pred_format", None) or fmt)
    if args.command == "score":
        args.input_format = args.input_format or "conll"
    if args.command in ("score", "report") and args.pred_file is None and _columns(args) is None and \
            not uses_formats(args):
        problem = missing_prediction(args.file, args.encoding)
        if problem is not None:
            raise InputError(problem)


def _extra_blocks(args: argparse.Namespace, report: Any) -> dict[str, Any]:
    """The breakdowns (``--breakdown``) and the precision-recall curve (``--thresholds``) of
    ``report``, as `report_pieces`' keywords."""
    from .render.breakdown_inputs import breakdowns

    out: dict[str, Any] = {"breakdowns": breakdowns(report, args.breakdown, encoding=args.encoding)}
    if args.thresholds:
        from .stats.thresholds import curve_of_report, files_rescorer

        out["thresholds"] = curve_of_report(report, files_rescorer(report, args), max_thresholds=args.max_thresholds)
    return out


# what a row (and conlleval's "phrase") is when the task is not entities
TASK_NOTES = {
    "relations": "task relations: each row is a relation label; a phrase is a relation (its label, head and tail)",
    "links": "task links: each row is the entity type of the mentions (not an id); a phrase is a link "
             "(a mention and its knowledge-base id)",
}


def _with_task_note(pieces: Iterator[str], task: str, fmt: str) -> Iterator[str]:
    """``pieces`` after a line saying what the rows are (`TASK_NOTES`): the table's first
    line, a Markdown paragraph, a CSV comment; JSON says it in its signature."""
    note = TASK_NOTES.get(task)
    if note is not None and fmt != "json":
        yield {"table": note + "\n", "markdown": note + ".\n\n", "csv": "# " + note + "\n"}[fmt]
    yield from pieces


def _main(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "metric-path":
        from .metric_card import PATH

        print(PATH)
        return 0
    if args.command in TOOLBOX_COMMANDS:  # their own checks and messages
        return main_toolbox(args)
    if args.command == "weighted":  # a published table: no CoNLL input, no output file
        return main_weighted(args)
    if args.command in ("score", "report"):
        if args.example:
            if args.file:
                parser.error("--example takes no FILE")
            args.file = _example_path()
        elif not args.file:
            parser.error("give a FILE (- for standard input), or --example")
    try:
        _before_reading(args)
    except IEScoreError as exc:
        print(f"iescore: error: {exc}", file=sys.stderr)
        return 2
    if args.command in ("compare", "agree"):
        from .stats.cli import main_stats

        return main_stats(args, score_args)
    if args.command in ("score", "report"):
        try:
            cfg = config_from_args(args)  # the evaluation-model group (relation and link settings resolved)
            if not uses_formats(args):
                check_task_format(cfg.task, "conll")
            if cfg.task == "relations" and any(kind in ("length", "seen") for kind, _ in args.breakdown):
                raise ConfigError("--breakdown length and seen:TRAINFILE group mentions by their tokens; a relation "
                                  "has two arguments, no length or string of its own: group relations by a document "
                                  "attribute (--breakdown attr:FILE)")
            if args.thresholds and (args.command == "report" or not uses_formats(args)):
                raise InputError("--thresholds needs a confidence on every prediction, and CoNLL tags carry none: "
                                 "score files whose spans have one (--input-format jsonl, a \"score\" per span)")
            if args.command == "report" and uses_formats(args):  # the documents' tokens kept for the page
                report = score_args(cfg, args, keep_tokens=True)
                write_report_html(args, report, tokens=report.__dict__.get("_tokens"))
            elif args.command == "report":  # the HTML report shows the documents: read whole
                batch = read_conll(args.file, args.pred_file, encoding=args.encoding, documents=args.documents,
                                   columns=_columns(args))
                scorer = Scorer(cfg)
                scorer.add_batch(batch)
                report = scorer.report()
                write_report_html(args, report, batch)
            elif uses_formats(args):  # character offsets, annotation tools, LLM output
                report = score_args(cfg, args)
            elif args.error_counts is not None or args.breakdown or args.per_document:  # every item needed: read whole
                scorer = Scorer(cfg)
                scorer.add_batch(read_conll(args.file, args.pred_file, encoding=args.encoding, documents=args.documents,
                                            columns=_columns(args)))
                report = scorer.report()
            else:  # read and scored in batches: memory does not grow with the file
                report = score_conll(args.file, args.pred_file, config=cfg, encoding=args.encoding,
                                     documents=args.documents, progress=Progress(sys.stderr), columns=_columns(args))
        except IEScoreError as exc:
            print(f"iescore: error: {exc}{_two_column_hint(args, exc)}", file=sys.stderr)
            return 2
        try:
            extra = _extra_blocks(args, report)
            # JSON written as it is made: a large report's text is never held whole
            fmt = output_format(parser, args)
            pieces = report_pieces(report, fmt, confusion=args.confusion, error_counts=args.error_counts,
                                   semeval=args.semeval, per_document=args.per_document, **extra)
            write_output(_with_task_note(pieces, report.config.task, fmt), args.output)
        except IEScoreError as exc:
            print(f"iescore: error: {exc}", file=sys.stderr)
            return 2
        sys.stdout.flush()  # a closed pipe shows here, inside main, not at exit
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
