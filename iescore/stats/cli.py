"""Statistics, after the report in the pipeline: the command line of the statistics:
`iescore compare` and `iescore agree`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..errors import ConfigError, InputError, choices
from ..io.formats import FORMATS, sniff_format
from ..report import Report
from .agreement import Agreement, agreement_files, agreement_scored
from .paired import Comparison, compare
from .table import METHODS, TESTS, measure_names

__all__ = ['main_compare', 'add_compare_parser', 'config_from_args', 'format_comparison', 'main_agree', 'main_stats', 'add_stats_parsers', 'format_agreement']


# --- command line: iescore compare ----------------------------------------------------

_COPIED_GROUPS = ("evaluation model", "input and output")


def _copy_options(cp: Any, score_parser: Any) -> None:
    """Give ``cp`` the evaluation and input options of ``score_parser`` (the option
    objects are shared, as argparse's ``parents=`` shares them)."""
    for group in score_parser._action_groups:  # argparse has no public accessor for a group's options
        if group.title in _COPIED_GROUPS:
            g = cp.add_argument_group(group.title)
            for action in group._group_actions:
                g._add_action(action)
            if group.title == "evaluation model":  # these options are the Config's fields
                cp.set_defaults(config_fields=tuple(a.dest for a in group._group_actions))


def add_stats_parsers(sub: Any, score_parser: Any) -> None:
    """Add ``iescore compare`` and ``iescore agree`` to the subcommands ``sub``, with the
    evaluation and input options of ``score_parser`` (the ``score`` subcommand's parser);
    [`main_stats`][iescore.stats.cli.main_stats] runs them."""
    add_compare_parser(sub, score_parser)
    ap = sub.add_parser(
        "agree",
        help="inter-annotator agreement: F1 and Cohen's kappa per pair, Fleiss' kappa, Krippendorff's alpha",
        description="Each FILE holds one annotator's annotation: CoNLL files (each annotator's tags in its last "
                    "column, the files aligned line by line) or, with --input-format and --level, brat, JSONL, "
                    "DocBin or LLM files, their documents paired by id. Prints, per pair of annotators, the F1 of "
                    "each as the other's reference and their mean, Cohen's kappa on t-units (tokens and "
                    "separators) and per label, then Fleiss' kappa and Krippendorff's alpha over all annotators "
                    "(LLM extractions, compared as templates under --setting OBD: F1 only).",
    )
    ap.add_argument("annotation_files", nargs="+", metavar="FILE",
                    help="two or more annotation files (brat: folders or .ann files)")
    ap.add_argument("--names", help="comma-separated annotator names (default: the shortest distinct path endings)")
    _copy_options(ap, score_parser)
    _copy_input_formats(ap, score_parser)
    ap.set_defaults(stats_main=main_agree)


def _copy_input_formats(ap: Any, score_parser: Any) -> None:
    """Give ``ap`` an ``--input-format`` of its own (one format for every FILE) and the
    character-offset options of ``score_parser`` (``--level``, ``--tokenizer``...), shared."""
    g = ap.add_argument_group("input formats")
    g.add_argument("--input-format", choices=FORMATS, default=None,
                   help=f"the format of every FILE ({', '.join(FORMATS)}; default conll); brat, jsonl, docbin "
                        "and llm need --level")
    for group in score_parser._action_groups:  # argparse has no public accessor for a group's options
        if group.title == "input formats":
            for action in group._group_actions:
                if action.dest not in ("input_format", "pred_format"):
                    g._add_action(action)


def main_stats(args: Any, score_args: Any = None) -> int:
    """Run ``iescore compare`` or ``iescore agree``; ``score_args`` is
    `iescore.files.score_args`, which ``iescore agree --input-format``
    scores its pairs of files with (the command line passes it: the readers' scorers sit
    above the statistics)."""
    status: int = args.stats_main(args, score_args)
    return status


def add_compare_parser(sub: Any, score_parser: Any) -> Any:
    """Add ``iescore compare`` to the subcommands ``sub``, with the evaluation and input
    options of ``score_parser`` (the ``score`` subcommand's parser)."""
    cp = sub.add_parser(
        "compare",
        help="compare systems on one gold file: intervals and paired significance tests",
        description="Score every SYS against GOLD (CoNLL files aligned line by line, as "
                    "`iescore score GOLD SYS`; or, with --input-format and --input-level, brat, JSONL, DocBin or "
                    "LLM files, their documents paired by id, relations and links too with --task), then give "
                    "each measure's bootstrap interval over "
                    "documents and the p-value of a paired test of the first measure against the "
                    "baseline (Holm-Bonferroni adjusted); systems whose differences are not "
                    "significant share a group.",
    )
    cp.add_argument("gold", help="the gold CoNLL file (or, with --input-format, file or folder)")
    cp.add_argument("systems", nargs="+", metavar="SYS",
                    help="system outputs (each file's last column; or, with --input-format, files or folders)")
    t = cp.add_argument_group("comparison")
    t.add_argument("--baseline", help="the baseline system's name or path (default: the first SYS)")
    t.add_argument("--paired", choices=TESTS, default="ar",
                   help="the paired test: ar, approximate randomization (Riezler & Maxwell 2005; the default: "
                        "each document's counts swapped between the systems with probability 1/2); bs, paired "
                        "bootstrap, centred (Efron & Tibshirani 1993: documents drawn with replacement, the same "
                        "for both systems; |d* - mean(d*)| against the observed |d|)")
    t.add_argument("--resamples", type=int, default=1000,
                   help="random swaps (ar) or resamples (bs), and the resamples of the intervals; default 1000")
    t.add_argument("--seed", type=int, default=12345, help="seed of the random resamples; default 12345")
    t.add_argument("--ci", choices=METHODS, default="percentile",
                   help="interval method: percentile or bca (bias-corrected and accelerated); default percentile")
    t.add_argument("--level", type=float, default=0.95, help="interval level (default 0.95)")
    t.add_argument("--alpha", type=float, default=0.05, help="significance level of the groups (default 0.05)")
    t.add_argument("--measures", default="f1,precision,recall",
                   help="comma-separated measures shown; the first is tested (e.g. macro_f1,f1[PER],ser,ts_f1_macro), "
                        "or 'all'")
    t.add_argument("--names", help="comma-separated system names (default: the shortest distinct path endings)")
    _copy_options(cp, score_parser)
    g = cp.add_argument_group("input formats")
    g.add_argument("--input-format", choices=FORMATS, default=None,
                   help=f"the format of GOLD and of every SYS unless --pred-format ({', '.join(FORMATS)}; "
                        "default conll); brat, jsonl, docbin and llm need --input-level")
    g.add_argument("--pred-format", choices=FORMATS, default=None, help=f"the format of every SYS ({', '.join(FORMATS)}; default --input-format)")
    g.add_argument("--input-level", dest="text_level", choices=("characters", "tokens"), default=None,
                   help="character-offset input: score on characters or on tokens (iescore score's --level; "
                        "--level is the intervals' level here)")
    for group in score_parser._action_groups:  # argparse has no public accessor for a group's options
        if group.title == "input formats":
            for action in group._group_actions:
                if action.dest not in ("input_format", "pred_format", "level"):
                    g._add_action(action)
    cp.set_defaults(stats_main=main_compare)
    return cp


def _short_names(paths: Sequence[str]) -> list[str]:
    """The shortest path endings (in components) that tell the paths apart."""
    parts = [p.replace("\\", "/").split("/") for p in paths]
    for k in range(1, max(len(p) for p in parts) + 1):
        names = ["/".join(p[-k:]) for p in parts]
        if len(set(names)) == len(names):
            return names
    return list(paths)


# the evaluation-model options that are no Config field: named settings of relations and links
NAMED_SETTINGS = ("relation_setting", "link_setting")


def config_from_args(args: Any) -> Any:
    """The Config of the evaluation-model options (named as the Config's fields, the
    ``config_fields`` of ``args``). ``--relation-setting`` and ``--link-setting`` stand for
    the options of `iescore.RELATION_SETTINGS` / `iescore.LINK_SETTINGS` (and imply their
    task); an explicit ``--rule``, ``--no-arg-labels`` or ``--task`` that contradicts them is
    a ConfigError. ``--rule`` and ``--task`` left out (None) are the Config's defaults."""
    from ..config import Config, Rule
    from ..options import LINK_SETTINGS, RELATION_SETTINGS

    kw = {name: getattr(args, name) for name in args.config_fields if name not in NAMED_SETTINGS}
    rel, link = getattr(args, "relation_setting", None), getattr(args, "link_setting", None)
    if rel is not None and link is not None:
        raise ConfigError(f"--relation-setting {rel} and --link-setting {link}: one task at a time; give one of them")
    if rel is not None or link is not None:
        flag, name, task = ("--relation-setting", rel, "relations") if rel is not None else ("--link-setting", link, "links")
        named: dict[str, object] = dict((RELATION_SETTINGS if rel is not None else LINK_SETTINGS)[str(name)])
        if kw.get("task") not in (None, task):
            raise ConfigError(f"{flag} {name} is a setting of --task {task}, not of --task {kw['task']}; drop one of them")
        kw["task"] = task
        rule = Rule.parse(str(named["rule"]))
        if kw.get("rule") is not None and kw["rule"] != rule:
            raise ConfigError(f"--rule {kw['rule']} contradicts {flag} {name} (rule {rule}); drop one of them")
        kw["rule"] = rule
        if "arg_labels" in named:
            if kw.get("arg_labels") is False and named["arg_labels"]:
                raise ConfigError(f"--no-arg-labels contradicts {flag} {name} (argument labels compared); use "
                                  "--relation-setting boundaries, or drop one of them")
            kw["arg_labels"] = named["arg_labels"]
    return Config(**{k: v for k, v in kw.items() if not (k in ("rule", "task") and v is None)})


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.2f}"


def format_comparison(c: Comparison) -> str:
    """The comparison as a text table: one row per system, each measure with its interval,
    the p-value against the baseline (raw and Holm-adjusted) and the group."""
    head = ["system"] + [f"{m} [{100 * c.level:g}% CI]" for m in c.measures] + ["p", "p (Holm)", "group"]
    rows = []
    for s in c.systems:
        cells = [s["name"] + (" (baseline)" if s["name"] == c.baseline else "")]
        for m in c.measures:
            ci = s[f"{m}_ci"]
            cells.append(f"{_pct(s[m])} [{_pct(ci[0]) if ci else 'n/a'}, {_pct(ci[1]) if ci else 'n/a'}]")
        cells += ["-" if s["p_value"] is None else f"{s['p_value']:.4f}",
                  "-" if s["p_value_holm"] is None else f"{s['p_value_holm']:.4f}" + ("*" if s["significant"] else ""),
                  str(s["group"])]
        rows.append(cells)
    widths = [max(len(r[i]) for r in [head] + rows) for i in range(len(head))]
    lines = ["  ".join(x.ljust(w) if i == 0 else x.rjust(w) for i, (x, w) in enumerate(zip(r, widths)))
             for r in [head] + rows]
    lines.append(f"p: {c.test_name} of {c.measure} against {c.baseline}, {c.resamples} resamples; "
                 f"* = significant at {c.alpha:g} after Holm-Bonferroni correction; "
                 f"a group holds systems not significantly different from its first system")
    lines.append(f"signature: {c.signature}")
    return "\n".join(lines)


def _system_names(names_option: str | None, paths: Sequence[str]) -> list[str]:
    """The names of the files: ``--names`` (comma-separated, one per file, distinct) or short
    names derived from the paths."""
    if not names_option:
        names = _short_names(paths)
        if len(set(names)) != len(names):  # a file given twice: no path ending tells them apart
            twice = sorted({p for p in paths if list(paths).count(p) > 1})
            raise ConfigError(f"the same file is given more than once: {', '.join(map(repr, twice))}; give each "
                              f"file once, or name them with --names (e.g. --names "
                              f"{','.join(chr(65 + i) for i in range(min(len(paths), 26)))})")
        return names
    names = names_option.split(",")
    if len(names) != len(paths) or len(set(names)) != len(names):
        raise ConfigError(f"--names needs {len(paths)} distinct names, one per file; got {names_option!r}")
    return names


def _score_files(args: Any, cfg: Any, gold: str, pred: str) -> Report:
    """The report of one CoNLL file pair (the gold's and the prediction's last columns)."""
    from ..io.conll import read_conll
    from ..scoring.stream import Scorer

    scorer = Scorer(cfg)
    scorer.add_batch(read_conll(gold, pred, encoding=args.encoding, documents=args.documents))
    return scorer.report()


def _reports(args: Any, cfg: Any, names: Sequence[str], paths: Sequence[str], score_args: Any) -> dict[str, Report]:
    """Each system's report against the gold file: CoNLL files read here, other formats
    scored by ``score_args`` (`iescore.files.score_args`, as ``iescore score`` scores them)."""
    from argparse import Namespace

    if args.input_format in (None, "conll") and args.pred_format in (None, "conll"):
        if args.text_level is not None:
            raise ConfigError("--input-level is for character-offset input (--input-format brat, jsonl, docbin or "
                              "llm); CoNLL files are scored on their tokens")
        return {name: _score_files(args, cfg, args.gold, path) for name, path in zip(names, paths)}
    if score_args is None:
        raise ConfigError(f"--input-format {args.input_format}: this command line cannot score files of that format "
                          "(main_stats was not given score_args)")
    fields = {**vars(args), "file": args.gold, "input_format": args.input_format or "conll", "level": args.text_level}
    return {name: score_args(cfg, Namespace(**{**fields, "pred_file": path})) for name, path in zip(names, paths)}


def main_compare(args: Any, score_args: Any = None) -> int:
    """Run ``iescore compare`` on parsed ``args`` (exit status 0, or 2 on bad input); files
    of another format than CoNLL are scored by ``score_args`` (`main_stats`)."""
    import json
    import sys

    paths = list(args.systems)
    try:
        names = _system_names(args.names, paths)
        baseline = None
        if args.baseline is not None:
            by_path = dict(zip(paths, names))
            baseline = by_path.get(args.baseline, args.baseline)
            if baseline not in names:
                raise ConfigError(f"unknown --baseline {args.baseline!r}; systems: {choices(names)}")
        cfg = config_from_args(args)
        reports = _reports(args, cfg, names, paths, score_args)
        first = next(iter(reports.values()))
        wanted = [m for m in args.measures.split(",") if m]
        if wanted == ["all"]:
            wanted = list(measure_names(first))
        c = compare(reports, baseline=baseline, test=args.paired, resamples=args.resamples, seed=args.seed,
                    measure=wanted[0], measures=wanted[1:], method=args.ci, level=args.level, alpha=args.alpha)
    except (ConfigError, InputError) as exc:
        print(f"iescore: error: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(c.to_dict(), indent=2) if args.json else format_comparison(c))
    sys.stdout.flush()
    return 0


def _num(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.4f}"


def format_agreement(ag: Agreement) -> str:
    """The agreement as text: one line per pair, the per-label kappas of two annotators, then
    Fleiss' kappa and Krippendorff's alpha."""
    lines = [f"{'a':<20} {'b':<20} {'F1':>7} {'F1(a ref)':>9} {'F1(b ref)':>9} {'kappa':>7}"]
    for p in ag.pairs:
        lines.append(f"{p['a']:<20} {p['b']:<20} {_pct(p['f1']):>7} {_pct(p['f1_ab']):>9} "
                     f"{_pct(p['f1_ba']):>9} {_num(p['kappa']):>7}")
    if len(ag.annotators) == 2 and ag.unit is not None:
        lines.append(f"{'label':<20} {'kappa':>7} {'alpha':>7}")
        lines += [f"{lab:<20} {_num(v['kappa']):>7} {_num(v['krippendorff_alpha']):>7}" for lab, v in ag.per_label.items()]
    if ag.unit is None:
        lines.append(f"note: {ag.note}")
    else:
        units = f"{ag.t_units} t-units: {ag.unit} and separators"
        lines.append(f"Fleiss' kappa ({len(ag.annotators)} annotators, {units}): {_num(ag.fleiss_kappa)}")
        lines.append(f"Krippendorff's alpha (nominal, {ag.missing} values missing): {_num(ag.krippendorff_alpha)}")
    lines.append(f"signature: {ag.signature}")
    return "\n".join(lines)


def main_agree(args: Any, score_args: Any = None) -> int:
    """Run ``iescore agree`` on parsed ``args`` (exit status 0, or 2 on bad input); files of
    another format than CoNLL are scored by ``score_args`` (`main_stats`)."""
    import json
    import sys
    from argparse import Namespace

    paths = list(args.annotation_files)
    try:
        names = _system_names(args.names, paths)
        cfg = config_from_args(args)
        if args.input_format in (None, "conll"):
            if args.level is not None:
                raise ConfigError("--level is for character-offset input (--input-format brat, jsonl, docbin or llm); "
                                  "CoNLL files are scored on their tokens")
            for path in paths:
                found = sniff_format(path, args.encoding)
                if found is not None:
                    raise InputError(f"{path}: {found[1]}, not CoNLL columns (the default input format); pass "
                                     f"--input-format {found[0]} and --level characters or --level tokens")
            ag = agreement_files(dict(zip(names, paths)), encoding=args.encoding, documents=args.documents,
                                 config=cfg)
        else:
            if score_args is None:
                raise ConfigError(f"--input-format {args.input_format}: this command line cannot score files of "
                                  "that format (main_stats was not given score_args)")

            def pair(gold: str, pred: str) -> Report:
                return score_args(cfg, Namespace(**{**vars(args), "file": gold, "pred_file": pred,  # type: ignore[no-any-return]
                                                    "pred_format": None}))

            ag = agreement_scored(dict(zip(names, paths)), pair)
    except (ConfigError, InputError) as exc:
        print(f"iescore: error: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(ag.to_dict(), indent=2) if args.json else format_agreement(ag))
    sys.stdout.flush()
    return 0
