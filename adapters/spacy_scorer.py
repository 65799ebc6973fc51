"""spaCy registered scorers (entry point group ``spacy_scorers``).

* ``iescore.spans.v1`` -- AO scoring of ``doc.ents`` (or a span group);
* ``iescore.templates.v1`` -- OBD scoring of the same spans as templates.

``task = "links"`` scores the spans' knowledge-base ids (``Span.kb_id_``) as entity
links (``nil`` and ``link_types`` as in [`iescore.Config`][iescore.Config]; AO only), under
the keys ``ents_links_*`` (``spans_{key}_links_*``); ``task = "relations"`` is refused
when the pipeline is built (spaCy has no standard place for relations).

Use them from a training config; no import is needed, the entry point
registers them::

    [components.ner.scorer]
    @scorers = "iescore.spans.v1"
    rule = "O(1,1)"
    counting = "one-to-one"

    [training.score_weights]
    ents_f = 0.5
    ents_ts_f = 0.5

The scorer returns spaCy's key contract -- ``{prefix}_p``, ``{prefix}_r``,
``{prefix}_f`` and ``{prefix}_per_type`` (``{label: {"p", "r", "f"}}``), with
``prefix`` ``ents`` for ``doc.ents`` and ``spans_{key}`` for a span group, as
spaCy names them -- plus iescore's keys: ``{prefix}_f_beta`` (F_beta of the
scorer's ``beta``), ``{prefix}_ts_f`` (TS-F1^M), ``{prefix}_macro_f``,
``{prefix}_weighted_f``, and three error rates, ``{prefix}_ser``, ``{prefix}_err``
and ``{prefix}_e``. Every ``_f`` key is F1 (spaCy's meaning), whatever ``beta``;
``{prefix}_f_beta`` equals ``{prefix}_f`` when beta = 1.

Scale and direction, as spaCy uses scores. Every key is a fraction, like spaCy's
own ``ents_f``. ``spacy train`` prints every score of ``score_weights`` x100 in
its table (all but ``speed``), so an SER of 1.1094 shows as 110.94: the error rate
in percent, as Makhoul et al. report it (SER may exceed 100). spaCy keeps the
model with the highest weighted sum of scores, so a weight on an error rate
(lower is better) would reward errors; the error rates are for display
(``ents_ser = 0.0`` shows the column without weighting it). For weighting, use
``{prefix}_1-ser``, ``{prefix}_1-err`` and ``{prefix}_1-e`` (1 - rate: higher is
better; 1 - SER is negative when SER > 1; the names fit the 13 characters of
spaCy's table header)::

    [training.score_weights]
    ents_f = 0.5
    ents_1-ser = 0.5
    ents_ser = 0.0

The rule travels with the numbers: ``{prefix}_signature`` is the report's signature,
a string, as spaCy's own textcat scorer returns the string ``cats_score_desc`` beside its
numbers. spaCy's training loop weighs only the keys of ``score_weights`` (leave the
signature out of them: a weighted key must be a number), ``spacy train`` prints and
keeps in ``meta.json`` only those, and ``spacy evaluate --output F --per-component``
writes every key, so the signature reaches that JSON file of scores.

Undefined values (e.g. SER with no reference entity) become ``zero_division``
(0.0) in every key, the ``1-`` keys included, because spaCy's training loop
multiplies scores by weights. This module imports only the core and the spaCy
adapter (which imports nothing heavy itself).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from iescore.adapters.spacy import score_examples

from iescore.errors import ConfigError
from iescore.options import (
    Average,
    Counting,
    Misaligned,
    Missing,
    Mode,
    Nil,
    ScoringOptions,
    Setting,
    Task,
)
from iescore.render.flat import as_float
from iescore.scorer import Scorer

__all__ = ["make_spans_scorer", "make_templates_scorer", "spacy_scores"]


def spacy_scores(report: Any, prefix: str, zero_division: float = 0.0) -> dict[str, Any]:
    """A report under spaCy's flat key contract plus iescore's extra keys (``{prefix}_signature``
    the signature, the one key that is not a number)."""
    d = report.to_dict()
    av = d["averages"]
    z = zero_division
    se = d["slot_errors"]
    ts = d["ts"] or {}
    main = av[report.config.average]
    return {
        f"{prefix}_p": as_float(main["precision"], z),
        f"{prefix}_r": as_float(main["recall"], z),
        f"{prefix}_f": as_float(main["f1"], z),
        f"{prefix}_f_beta": as_float(main["f_beta"], z),
        f"{prefix}_per_type": {
            lab: {"p": as_float(e["precision"], z), "r": as_float(e["recall"], z), "f": as_float(e["f1"], z)}
            for lab, e in d["per_label"].items()
        },
        f"{prefix}_ser": as_float(se["ser"], z),
        f"{prefix}_err": as_float(se["err"], z),
        f"{prefix}_e": as_float(se["e"], z),
        f"{prefix}_1-ser": as_float(_one_minus(se["ser"]), z),
        f"{prefix}_1-err": as_float(_one_minus(se["err"]), z),
        f"{prefix}_1-e": as_float(_one_minus(se["e"]), z),
        f"{prefix}_ts_f": as_float(ts.get("f1_macro"), z),
        f"{prefix}_macro_f": as_float(av["macro"]["f1"], z),
        f"{prefix}_weighted_f": as_float(av["weighted"]["f1"], z),
        f"{prefix}_signature": report.signature,
    }


def _one_minus(rate: float | None) -> float | None:
    """1 - an error rate (higher is better); undefined stays undefined."""
    return None if rate is None else 1.0 - rate


def _make(setting: Setting, default_suffix: str) -> Callable[..., Callable[..., dict[str, Any]]]:
    def factory(
        spans_key: str | None = None,
        rule: str = "E",
        counting: Counting = "any",
        mode: Mode = "match-all",
        average: Average = "micro",
        beta: float = 1.0,
        normaliser: str = "identity",
        misaligned: Misaligned = "expand",
        missing: Missing = "ignore",
        prefix: str | None = None,
        zero_division: float = 0.0,
        keep_types: list[str] | None = None,
        remove_types: list[str] | None = None,
        task: Task = "entities",
        nil: Nil = "keep",
        link_types: bool = False,
    ) -> Callable[..., dict[str, Any]]:
        if task == "relations":
            raise ConfigError("iescore's spaCy scorer scores entities or their links (task='entities' or 'links'): "
                              "spaCy has no standard place for relations; score iescore.Relation objects with "
                              "iescore.score(task='relations')")
        suffix = "_links" if task == "links" else ""
        key_prefix = prefix or ((f"spans_{spans_key}" if spans_key else "ents") + default_suffix + suffix)
        options = ScoringOptions(
            setting=setting, rule=rule, counting=counting, mode=mode, average=average, beta=beta,
            normaliser=normaliser, keep_types=tuple(keep_types or ()), remove_types=tuple(remove_types or ()),
            task=task, nil=nil, link_types=link_types,
        )
        # the options checked now, when spaCy builds the pipeline, not at its first evaluation
        Scorer(**options).use(misaligned=misaligned, missing=missing if spans_key is None else None)

        def score(examples: Iterable[Any], **_: Any) -> dict[str, Any]:
            report = score_examples(
                examples, spans_key=spans_key, misaligned=misaligned, missing=missing, **options
            )
            return spacy_scores(report, key_prefix, zero_division)

        score.iescore_options = options  # type: ignore[attr-defined]
        return score

    return factory


make_spans_scorer = _make("AO", "")
"""The factory registered as ``iescore.spans.v1``: AO scoring of ``doc.ents`` or a span group."""
make_spans_scorer.__doc__ = "Factory of ``iescore.spans.v1``: AO scoring of ``doc.ents`` or a span group."
make_templates_scorer = _make("OBD", "_obd")
"""The factory registered as ``iescore.templates.v1``: OBD (template) scoring; keys ``ents_obd_*``."""
make_templates_scorer.__doc__ = "Factory of ``iescore.templates.v1``: OBD (template) scoring; keys ``ents_obd_*``."
