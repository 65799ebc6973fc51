"""Before the pipeline, its front end for character offsets: documents of
[`iescore.io.chars`][iescore.io.chars] (raw text with labelled character spans, what the
readers return) scored at a ``level`` through a [`Scorer`][iescore.Scorer].

Example:
    >>> from iescore.model import Span
    >>> ref = TextDocument("d1", "Al Roth spoke.", (Span("PER", 0, 7),))
    >>> pred = TextDocument("d1", "Al Roth spoke.", (Span("PER", 3, 7),))
    >>> r = score_text([ref], [pred], level="characters", rule="O(0,3)")
    >>> r.overall.tp, r.signature.split("|")[9]
    (1, 'level:characters')
    >>> r = score_text([ref], [pred], level="tokens", tokenizer="regex")
    >>> r.overall.tp, r.overall.fp, r.overall.fn
    (0, 1, 1)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..config import LEVELS, Config
from ..errors import ConfigError, choices
from ..scoring.stream import Scorer
from .chars import (
    TextDocument,
    Tokenizer,
    _offsets,
    _tokenizer_name,
    check_same_text,
    pair_documents,
    to_document,
)

__all__ = ["add_text", "score_text"]


def add_text(
    scorer: Scorer,
    reference: Sequence[TextDocument],
    prediction: Sequence[TextDocument],
    *,
    level: str,
    tokenizer: Tokenizer = "regex",
    misaligned: str = "expand",
) -> None:
    """Add character-offset documents to ``scorer`` (paired by id, texts checked), at
    ``level``; the level, tokenizer and policy go into its signature and the counts of
    moved and dropped spans into its report. The prediction's own tokens play no part:
    both sides are mapped onto the reference's tokens. Under ``task="relations"`` (or
    ``"links"``) the documents' relations (links) are mapped too, and what could not be
    mapped exactly is counted (``relation arguments misaligned``, ``relations dropped``;
    ``link mentions misaligned``, ``links dropped``; ``reference ...`` for the reference)."""
    if level not in LEVELS:
        raise ConfigError(f"unknown level {level!r}; valid: {choices(LEVELS)}")
    prediction = pair_documents(reference, prediction)
    task = scorer.config.task
    kinds = ["misaligned", "dropped"] + {"relations": ["relation arguments misaligned", "relations dropped"],
                                         "links": ["link mentions misaligned", "links dropped"]}.get(task, [])
    refs: list[Any] = []
    preds: list[Any] = []
    totals = {k: 0 for k in kinds} | {"reference " + k: 0 for k in kinds}
    for r, p in zip(reference, prediction):
        check_same_text(r, p)
        offs = _offsets(r, tokenizer) if level == "tokens" else None
        rd, rc = to_document(r, level=level, tokenizer=tokenizer, misaligned=misaligned, offsets=offs)
        pd, pc = to_document(r, p.spans, level=level, tokenizer=tokenizer, misaligned=misaligned, offsets=offs,
                             relations=p.relations, links=p.links)
        refs.append(rd)
        preds.append(pd if task != "entities" else list(pd.spans))
        for k in kinds:
            totals[k] += pc.get(k, 0)
            totals["reference " + k] += rc.get(k, 0)
    if level == "tokens":
        scorer.use(level=level, tokenizer=_tokenizer_name(tokenizer), misaligned=misaligned)
    else:
        scorer.use(level=level)
    scorer.add(reference=refs, prediction=preds)
    for k, v in totals.items():
        if v:
            scorer.note(k, v)


def score_text(
    reference: Sequence[TextDocument],
    prediction: Sequence[TextDocument],
    *,
    level: str,
    tokenizer: Tokenizer = "regex",
    misaligned: str = "expand",
    notes: Mapping[str, int] | None = None,
    config: Config | None = None,
    **options: Any,
) -> Any:
    """Score character-offset documents in one call (see [`add_text`][iescore.io.textscore.add_text]); ``notes``
    are counts from the readers, added to the report. ``options``: any of [`Options`][iescore.options.Options];
    returns an [`iescore.Report`][iescore.Report]."""
    s = Scorer(Config.from_options(config, **options))
    add_text(s, reference, prediction, level=level, tokenizer=tokenizer, misaligned=misaligned)
    for k, v in (notes or {}).items():
        if v:
            s.note(k, v)
    return s.report()
