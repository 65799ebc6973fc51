"""The entry points: one-shot scoring functions over the pipeline.

Pipeline: decode tags (`iescore.decode`) -> units -> match under a rule and count
(`iescore.match`, `iescore.ts`) -> per-document cells (`iescore.cells`)
-> measures ([`iescore.measures`][iescore.measures]) -> report ([`iescore.report`][iescore.report]) -> views.
`iescore.scoring` drives it: a batch of input (`batch`)
goes through the tag or span path (`tags`,
`spans`, both ending in `part`) and the
parts are assembled into a report (`assemble`) by the streaming
[`Scorer`][iescore.scoring.stream.Scorer] (`stream`).

Every entry point resolves its options into one [`Config`][iescore.config.Config]
and runs the same pipeline per batch of documents; a report sums the batches'
counts. Streaming, one-shot scoring and merged shards therefore give the same
report.

Example (De Sitter et al. 2004, Example 6, with the papers' 1-based positions):
    >>> ref = Document(id="D", tokens=("w",) * 101,
    ...                spans=(Span.from_inclusive("loc", 18, 25), Span.from_inclusive("loc", 93, 100)))
    >>> pred = [[Span.from_inclusive("loc", 20, 25), Span.from_inclusive("loc", 93, 101),
    ...          Span.from_inclusive("loc", 50, 52)]]
    >>> r = score(reference=[ref], prediction=pred, rule="O(1,2)")
    >>> r.overall.tp, r.overall.fp, r.overall.fn
    (2, 1, 0)
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .config import Config
from .model import Document, Span, Template
from .report import Report
from .scoring.batch import TaggedBatch, tagged_batch
from .scoring.stream import Scorer

if TYPE_CHECKING:
    from .options import Options, Unpack

__all__ = ["Scorer", "score", "score_tags", "score_templates", "TaggedBatch", "tagged_batch"]


def score(
    *,
    reference: Sequence[Document] | Sequence[Template],
    prediction: Sequence[Document] | Sequence[Sequence[Span]] | Sequence[Template],
    config: Config | None = None,
    **options: Unpack[Options],
) -> Report:
    """Score documents (or OBD templates) in one call. Options as in [`Config`][iescore.config.Config]
    (their names and values are typed by [`iescore.options.Options`][iescore.options.Options])."""
    s = Scorer(Config.from_options(config, **options))
    s.add(reference=reference, prediction=prediction)
    return s.report()


def score_tags(
    *,
    reference: Sequence[Sequence[str]],
    prediction: Sequence[Sequence[str]],
    doc_ids: Sequence[str] | None = None,
    tokens: Sequence[Sequence[str]] | None = None,
    config: Config | None = None,
    **options: Unpack[Options],
) -> Report:
    """Score tag sequences (one sequence per document) in one call; ``options``: any of [`Options`][iescore.options.Options].

    ``scheme`` defaults to ``"auto"`` (detected from the reference tags and
    recorded in the signature); a ``config``'s scheme is kept (a configuration
    rebuilt from a signature names the scheme detected).

    >>> r = score_tags(reference=[["B-PER", "I-PER", "O"]], prediction=[["I-PER", "I-PER", "O"]])
    >>> r.f, r.signature.split("|")[5]
    (1.0, 'scheme:IOB2')
    """
    if config is None:
        options.setdefault("scheme", "auto")
    cfg = Config.from_options(config, **options)
    s = Scorer(cfg)
    # one batch, scored at once: Scorer.add_tags would hold a small one for later calls
    # (copying its tags end to end and checking them per distinct tag), which one call
    # never makes; the numbers are the same (add_tags scores a large batch this way)
    s.add_batch(tagged_batch(reference, prediction, doc_ids=doc_ids, tokens=tokens))
    return s.report()


def score_templates(
    *,
    reference: Sequence[Template],
    prediction: Sequence[Template],
    config: Config | None = None,
    **options: Unpack[Options],
) -> Report:
    """Score OBD templates (``setting="OBD"`` is implied); ``options``: any of [`Options`][iescore.options.Options]."""
    options.setdefault("setting", "OBD")
    return score(reference=reference, prediction=prediction, config=config, **options)


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
    options ([`iescore.Config`][iescore.Config]).

    The checks are the command line's: an unknown ``encoding``, a JSON, brat or spaCy file
    read as CoNLL, a gold file given alone without its prediction column (InputError or
    ConfigError, naming the file and what to pass). A CoNLL file is read whole (as
    ``iescore report`` reads it) and its tokens are kept for ``report.to_html(path)``.

    >>> import iescore
    >>> r = iescore.score_files(iescore.example_path())
    >>> r.n_documents, r.labels, round(r.f1, 4)
    (2, ('LOC', 'MISC', 'ORG', 'PER'), 0.5455)
    """
    from argparse import Namespace

    from .errors import InputError
    from .io.conll import check_encoding, missing_prediction, read_conll
    from .io.formats import FORMATS, sniff_format
    from .io.formats import score_files as score_formats

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
    return score_formats(cfg, args)  # type: ignore[no-any-return]


def example_path() -> str:
    """The path of the built-in example CoNLL file (``iescore score --example`` scores it)."""
    from importlib import resources

    return str(resources.files("iescore") / "data" / "example.conll")
