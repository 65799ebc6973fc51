"""Before the pipeline, its front end for LLM extractions: [`score_llm`][iescore.io.llm.score_llm]
scores the strings of [`iescore.io.extractions`][iescore.io.extractions] (read, turned into
OBD templates or aligned to the document text there; its names are re-exported here)
against character-offset reference documents, through a [`Scorer`][iescore.Scorer].
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..config import Config
from ..errors import ConfigError, warn
from ..scoring.stream import Scorer
from .chars import TextDocument, Tokenizer, check_same_text, pair_documents, text_template
from .extractions import ALIGN, Extraction, _occurrences, align_extractions, llm_templates, read_llm
from .textscore import add_text

__all__ = ["ALIGN", "Extraction", "read_llm", "llm_templates", "align_extractions", "score_llm"]


def _ambiguous(reference: Sequence[TextDocument], prediction: Sequence[Extraction]) -> int:
    return sum(len(_occurrences(r.text, s)) > 1
               for r, ex in zip(reference, pair_documents(reference, prediction)) for _, s in ex.items)


def score_llm(
    reference: Sequence[TextDocument] | Sequence[Extraction],
    prediction: Sequence[Extraction],
    *,
    level: str,
    tokenizer: Tokenizer = "regex",
    misaligned: str = "expand",
    align: str = "first",
    notes: Mapping[str, int] | None = None,
    config: Config | None = None,
    **options: Any,
) -> Any:
    """Score LLM extractions against character-offset reference documents (or against
    other extractions, in OBD); returns an [`iescore.Report`][iescore.Report]. ``options``: any
    of [`Options`][iescore.options.Options].

    ``setting="OBD"`` compares templates ([`llm_templates`][iescore.io.extractions.llm_templates]); ``"AO"`` aligns the
    strings ([`align_extractions`][iescore.io.extractions.align_extractions]) and scores them at ``level`` as
    [`score_text`][iescore.io.textscore.score_text] does, counting ``hallucinated`` and
    ``ambiguous strings`` in the report; its signature names ``align`` (``align:every``).
    With ``task="relations"`` (in OBD only) the extracted ``(label, head, tail)`` strings are
    compared with the reference's relations as records of their arguments' texts.

    >>> from iescore.io.chars import TextDocument
    >>> ref = [TextDocument("d", "Al met Al Roth.", (("PER", 7, 14),))]
    >>> pred = [Extraction("d", (("PER", "Al"),))]
    >>> [(r.overall.fp, r.signature.split("|")[-3]) for r in
    ...  (score_llm(ref, pred, level="characters", align=a) for a in ("first", "every"))]
    [(1, 'align:first'), (2, 'align:every')]"""
    cfg = Config.from_options(config, **options)
    s = Scorer(cfg)
    for k, v in (notes or {}).items():
        if v:
            s.note(k, v)
    if cfg.setting == "OBD":
        if reference and isinstance(reference[0], Extraction):
            refs = llm_templates(reference, level=level, tokenizer=tokenizer)  # type: ignore[arg-type]
        else:
            for r, p in zip(reference, pair_documents(reference, prediction)):
                if p.text is not None:
                    check_same_text(r, TextDocument(p.id, p.text))  # type: ignore[arg-type]
            refs = [text_template(d, level=level, tokenizer=tokenizer) for d in reference]  # type: ignore[arg-type]
        preds = llm_templates(pair_documents(refs, prediction), level=level, tokenizer=tokenizer)
        s.use(level=level, tokenizer=None if level == "characters" else ("custom" if callable(tokenizer) else tokenizer))
        s.add(reference=refs, prediction=preds)
        return s.report()
    if cfg.task != "entities":
        raise ConfigError(f"task={cfg.task!r}: LLM extractions are strings without offsets; their relations are "
                          "scored with setting='OBD' (CLI --setting OBD), and they carry no links")
    if reference and isinstance(reference[0], Extraction):
        raise ConfigError("extractions without offsets have no positions: score them against each other with setting='OBD'")
    docs, unfound = align_extractions(reference, prediction, align=align)  # type: ignore[arg-type]
    s.use(align=align)  # where the strings went changes the numbers: the signature says it
    if unfound:
        shown = "; ".join(f"{d!r}: {lab} {t!r}" for d, lab, t in unfound[:3])
        warn(f"{len(unfound)} extracted strings are found nowhere in their document's text and "
             f"have no position (counted as 'hallucinated'): {shown}{' ...' if len(unfound) > 3 else ''}")
        s.note("hallucinated", len(unfound))
    ambiguous = _ambiguous(reference, prediction)  # type: ignore[arg-type]
    if ambiguous:
        s.note("ambiguous strings", ambiguous)
    add_text(s, reference, docs, level=level, tokenizer=tokenizer, misaligned=misaligned)  # type: ignore[arg-type]
    return s.report()
