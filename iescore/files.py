"""An entry point above the readers (`iescore.io`): files scored as ``iescore score`` scores
them, the pipeline driven by a [`Scorer`][iescore.scoring.stream.Scorer] after the
readers of each input format (imported on the first call, so that ``import iescore`` does
not import every reader)."""

from __future__ import annotations

import os
from argparse import Namespace
from typing import TYPE_CHECKING, Any

from .config import Config
from .errors import ConfigError, InputError
from .report import Report
from .scoring.stream import Scorer

if TYPE_CHECKING:
    from .options import Options, Unpack

__all__ = ["score_files", "score_args", "TASK_FORMATS", "check_task_format"]

# the input formats whose readers give each task's annotations (brat R and N lines, JSONL
# relations and links, LLM relations between strings)
TASK_FORMATS: dict[str, tuple[str, ...]] = {"relations": ("brat", "jsonl", "llm"), "links": ("brat", "jsonl", "docbin")}


def check_task_format(task: str, *formats: str | None) -> None:
    """A ConfigError when a file of one of ``formats`` (``None``: CoNLL) carries nothing
    ``task`` scores, naming the formats that do."""
    carriers = TASK_FORMATS.get(task)
    if carriers is None:
        return
    for fmt in formats:
        if (fmt or "conll") not in carriers:
            what = {"relations": "relations (brat R lines, JSONL \"relations\", LLM \"relations\" under --setting OBD)",
                    "links": "links (brat N lines, JSONL \"links\" or a span's \"kb_id\")"}[task]
            raise ConfigError(f"--task {task}: {fmt or 'conll'} input carries no {task}; the formats that carry "
                              f"{what}: --input-format {' or '.join(carriers)} (with --level characters or tokens)")


def score_files(
    gold: str | os.PathLike[str],
    pred: str | os.PathLike[str] | None = None,
    *,
    input_format: str | None = None,
    pred_format: str | None = None,
    encoding: str = "utf-8",
    config: Config | None = None,
    **options: Unpack[Options],
) -> Report:
    """Score files as ``iescore score`` does, through the same readers and checks: a CoNLL
    file (gold and predicted tags in its last two columns) or a gold and a prediction CoNLL
    file aligned line by line (``input_format`` ``None`` or ``"conll"``; ``documents``:
    ``"auto"``, ``"docstart"`` or ``"sentence"``), or files with character offsets:
    ``input_format`` ``"brat"`` (a folder or a ``.ann`` file), ``"jsonl"``, ``"docbin"``
    (spaCy) or ``"llm"``, ``pred_format`` the prediction's if it differs, ``level``
    ``"characters"`` or ``"tokens"`` (then ``tokenizer`` and ``misaligned``),
    ``discontinuous`` (brat) and ``align`` (LLM strings) as the command line's options of
    those names (preparation options of [`Options`][iescore.options.Options], which the
    readers record in the signature). The other ``options`` (or ``config``) are the scoring
    options ([`iescore.Config`][iescore.Config]); ``task="relations"`` or ``"links"`` scores
    the relations or links the readers give (brat, JSONL; LLM relations in OBD), and is a
    ConfigError for a format that carries none (`TASK_FORMATS`).

    The checks are the command line's: an unknown ``encoding``, a JSON, brat or spaCy file
    read as CoNLL, a gold file given alone without its prediction column (InputError or
    ConfigError, naming the file and what to pass). A CoNLL file is read whole (as
    ``iescore report`` reads it) and its tokens are kept for ``report.to_html(path)``.

    >>> import iescore
    >>> r = iescore.score_files(iescore.example_path())
    >>> r.n_documents, r.labels, round(r.f1, 4)
    (2, ('LOC', 'MISC', 'ORG', 'PER'), 0.5455)
    """
    from .io.conll import check_encoding, missing_prediction, read_conll
    from .io.formats import FORMATS, sniff_format

    check_encoding(encoding)
    gold, pred = os.fspath(gold), None if pred is None else os.fspath(pred)
    # the readers' options, as the command line passes them (the readers put them into the signature)
    level = options.pop("level", None)
    documents = options.pop("documents", None) or "auto"
    tokenizer, misaligned = options.pop("tokenizer", None) or "regex", options.pop("misaligned", None) or "expand"
    align = options.pop("align", None) or "first"
    discontinuous = options.pop("discontinuous", None) or "error"
    if config is None:
        options.setdefault("scheme", "auto")
    cfg = Config.from_options(config, **options)
    if input_format in (None, "conll") and pred_format in (None, "conll"):
        check_task_format(cfg.task, "conll")
        for path in (gold, pred):
            found = sniff_format(path, encoding)
            if found is not None:
                raise InputError(f"{path}: {found[1]}, not CoNLL columns (the default input format); pass "
                                 f"input_format={found[0]!r} and level='characters' or level='tokens' "
                                 f"(input formats: {', '.join(map(repr, FORMATS))})")
        if level is not None:
            raise InputError(f"level={level!r} is for character-offset input (input_format 'brat', 'jsonl', "
                             "'docbin' or 'llm'); CoNLL files are scored on their tokens")
        problem = missing_prediction(gold, encoding) if pred is None else None
        if problem is not None:
            raise InputError(problem)
        batch = read_conll(gold, pred, encoding=encoding, documents=documents)
        s = Scorer(cfg)
        s.add_batch(batch)
        report = s.report()
        if batch.tokens is not None:  # kept for to_html, as iescore report --html shows them
            offs = [int(x) for x in batch.doc_offsets] + [len(batch.tokens)]
            object.__setattr__(report, "_tokens", [batch.tokens[offs[k]: offs[k + 1]] for k in range(len(offs) - 1)])
        return report
    args = Namespace(file=gold, pred_file=pred, input_format=input_format or pred_format, pred_format=pred_format,
                     level=level, tokenizer=tokenizer, misaligned=misaligned, discontinuous=discontinuous,
                     align=align, encoding=encoding, documents=documents, scheme=cfg.scheme)
    return score_args(cfg, args, keep_tokens=True)  # type: ignore[no-any-return]


def score_args(cfg: Config, args: Namespace, *, keep_tokens: bool = False) -> Any:
    """The report of ``iescore score FILE PRED_FILE --input-format F [--pred-format G]``
    (the readers and the scorers of character offsets are imported on the call);
    ``keep_tokens``: at ``--level tokens``, the gold documents' tokens are kept for
    ``report.to_html(path)`` (as ``iescore report`` shows them)."""
    from .io.chars import TextCorpus
    from .io.formats import read_input
    from .io.llm import score_llm
    from .io.textscore import score_text

    def _notes(corpus: Any, side: str) -> dict[str, int]:
        if not isinstance(corpus, TextCorpus):
            return {}
        return {(k if side == "prediction" else f"reference {k}"): v for k, v in corpus.notes.items()}

    pred_format = args.pred_format or args.input_format
    check_task_format(cfg.task, args.input_format, pred_format)
    if "conll" in (args.input_format, pred_format):
        raise ConfigError("a CoNLL file is scored against a CoNLL file: --input-format and --pred-format "
                          f"must both be conll, got {args.input_format!r} and {pred_format!r}")
    if not args.pred_file:
        raise ConfigError(f"--input-format {args.input_format}: give the gold FILE and a PRED_FILE")
    if args.level is None:
        raise ConfigError(f"--input-format {args.input_format}: choose --level characters or --level tokens")
    if args.documents != "auto":
        raise ConfigError(f"--documents is for CoNLL files; --input-format {args.input_format} has its own documents")
    if args.scheme != "auto":
        raise ConfigError(f"--scheme {args.scheme!r} is for tag input; --input-format {args.input_format} gives spans")
    cfg = cfg.with_(scheme="spans")
    gold = read_input(args.file, args.input_format, args)
    pred = read_input(args.pred_file, pred_format, args)
    notes = {**_notes(gold, "reference"), **_notes(pred, "prediction")}
    if any("discontinuous" in k and n for k, n in notes.items()):  # the policy changed spans: sign it
        cfg = cfg.with_(discontinuous=args.discontinuous)
    opts = {"level": args.level, "tokenizer": args.tokenizer, "misaligned": args.misaligned, "notes": notes}
    if pred_format == "llm":
        ref = gold.documents if isinstance(gold, TextCorpus) else gold
        report = score_llm(ref, pred, align=args.align, config=cfg, **opts)
    elif args.input_format == "llm":
        raise ConfigError("LLM extractions as the gold side are scored against LLM extractions (--pred-format llm)")
    else:
        report = score_text(gold.documents, pred.documents, config=cfg, **opts)
    if keep_tokens and args.level == "tokens" and isinstance(gold, TextCorpus):
        _keep_tokens(report, gold.documents, args.tokenizer)
    return report


def _keep_tokens(report: Report, documents: Any, tokenizer: Any) -> None:
    """Keep each scored document's tokens (as the scorer of character offsets made them) on
    ``report``, for its HTML page; nothing when a document of the report is not among ``documents``."""
    from .io.chars import _offsets

    by_id = {d.id: d for d in documents}
    if not all(i in by_id for i in report.doc_ids):
        return
    tokens = [[by_id[i].text[a:b] for a, b in _offsets(by_id[i], tokenizer)] for i in report.doc_ids]
    object.__setattr__(report, "_tokens", tokens)
