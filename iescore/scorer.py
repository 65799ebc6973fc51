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

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from .config import Config
from .errors import ConfigError
from .model import Document, Span, Template
from .report import Report
from .scoring.batch import TaggedBatch, tagged_batch
from .scoring.labelids import label_id_batch
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
    reference: Sequence[Sequence[str]] | Sequence[Sequence[int]] | Any,
    prediction: Sequence[Sequence[str]] | Sequence[Sequence[int]] | Any,
    doc_ids: Sequence[str] | None = None,
    tokens: Sequence[Sequence[str]] | None = None,
    label_names: Mapping[int, str] | Sequence[str] | None = None,
    word_ids: Sequence[Sequence[int | None]] | None = None,
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

    With ``label_names`` the tags are label ids (``-100`` on positions not scored; the
    prediction as ids or logits); with ``word_ids`` words are scored, the prediction read
    under the ``subwords`` option ([`label_id_batch`][iescore.scoring.labelids.label_id_batch]):

    >>> score_tags(reference=[[-100, 1, 2, 2, -100]], prediction=[[0, 1, 0, 0, 0]],
    ...            label_names=["O", "B-PER", "I-PER"], word_ids=[[None, 0, 0, 0, None]]).f
    1.0
    """
    if config is None:
        options.setdefault("scheme", "auto")
    cfg = Config.from_options(config, **options)
    s = Scorer(cfg)
    # one batch, scored at once: Scorer.add_tags would hold a small one for later calls
    # (copying its tags end to end and checking them per distinct tag), which one call
    # never makes; the numbers are the same (add_tags scores a large batch this way)
    if label_names is not None:
        if tokens is not None:
            raise ConfigError("tokens= is not taken with label_names= (label ids carry no tokens)")
        batch = label_id_batch(reference, prediction, label_names=label_names, word_ids=word_ids,
                               subwords=cfg.subwords or "first", doc_ids=doc_ids)
    elif word_ids is not None:
        raise ConfigError("word_ids= reads label ids: pass label_names= too")
    else:
        batch = tagged_batch(cast("Sequence[Sequence[str]]", reference), cast("Sequence[Sequence[str]]", prediction),
                             doc_ids=doc_ids, tokens=tokens)
    s.add_batch(batch)
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
