"""iescore as a Hugging Face ``evaluate`` metric.

Load it offline from this folder (the script shares the folder's name):

    >>> import evaluate, iescore.metric_card
    >>> metric = evaluate.load(iescore.metric_card.PATH)  # doctest: +SKIP

Its output is a superset of ``evaluate``'s seqeval metric.
"""

from __future__ import annotations

from typing import Any

import datasets
import evaluate

import iescore
from iescore import Document, Scorer, Span
from iescore.flat import seqeval_style

_CITATION = """\
@inproceedings{desitter2004formal,
  title={A formal framework for evaluation of information extraction},
  author={De Sitter, An and Calders, Toon and Daelemans, Walter},
  year={2004}
}
@inproceedings{makhoul2000performance,
  title={Performance measures for information extraction},
  author={Makhoul, John and Kubala, Francis and Schwartz, Richard and Weischedel, Ralph},
  booktitle={Proceedings of the DARPA Broadcast News Workshop},
  year={2000}
}
@article{esuli2010evaluating,
  title={Evaluating information extraction},
  author={Esuli, Andrea and Sebastiani, Fabrizio},
  year={2010}
}
"""

_DESCRIPTION = """\
Information Extraction evaluation as the literature defines it: the All Occurrences and One Best per
Document settings, the matching rules exact / contain(e) / overlap(e,m), any-match and one-to-one
counting, Makhoul's slot error rate (substitutions, deletions, insertions), MUC ERR, the token &
separator model (TS-F1^M), micro / macro / weighted averages, and conlleval-exact tag decoding.
Every result carries a reproducibility signature.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions: per document, a list of tags (strings, or integer ids with `label_names`), or a list
        of spans `{"label": str, "start": int, "end": int}` (token offsets, end exclusive).
    references: the same shape as `predictions`. Integer ids equal to -100 (ignored sub-words) are
        not tokens: they are removed from both sides.
    label_names: the tag of each integer id (`ClassLabel.names`, or a model's `id2label`).
    scheme: tag scheme: "auto" (default), "IO", "IOB1", "IOB2", "IOE1", "IOE2", "IOBES", "BMES", "BILOU".
    repair: "conlleval" (default), "strict" or "discard".
    rule: "E" (exact, default), "C(e)", "O(e,m)" or "O(inf,inf)".
    counting: "any" (default) or "one-to-one".
    mode: "match-all" (default), "match-best" or "one-per-string".
    setting: "AO" (default) or "OBD" (needs `tokens`).
    tokens: per document, the token strings (OBD and one-per-string compare strings).
    average: the average behind `overall_precision/recall/f1/f_beta`: "micro" (default), "macro", "weighted".
    beta: the beta of `overall_f_beta` (default 1.0); every `*_f1` key stays F1.
    supertags: a dict merging labels before scoring, e.g. {"PER": "NE", "LOC": "NE"}.
    normaliser: string normaliser for OBD, e.g. "lower+whitespace".
    token_weight, separator_weight: t-unit weights of the token & separator model (default 1.0).
    ser_weights: weights of substitutions, deletions and insertions in the weighted slot error
        rate, e.g. (1.0, 0.5, 0.5).
    zero_division: the float that replaces an undefined value (0/0); default 0.0, as seqeval.
Returns:
    overall_precision, overall_recall, overall_f1, overall_accuracy (seqeval's keys, same meaning),
    one dict per label with precision, recall, f1 and number (reference support), and iescore's
    overall_f_beta (F_beta of `beta`), overall_ser, overall_err, overall_e, overall_ts_f1_macro, overall_ts_f1_micro,
    overall_token_f1_macro, overall_macro_f1, overall_weighted_f1, overall_C/S/D/I counts, and
    signature (a string). Every number is a plain Python float or int.
Examples:
    >>> import evaluate, iescore.metric_card
    >>> metric = evaluate.load(iescore.metric_card.PATH)
    >>> out = metric.compute(predictions=[["B-PER", "I-PER", "O", "O"]],
    ...                      references=[["B-PER", "I-PER", "O", "B-LOC"]])
    >>> round(out["overall_f1"], 4), out["PER"]["number"], out["overall_ser"]
    (0.6667, 1, 0.5)
"""

_TAGS = datasets.Features(
    {
        "predictions": datasets.Sequence(datasets.Value("string")),
        "references": datasets.Sequence(datasets.Value("string")),
    }
)
_IDS = datasets.Features(
    {
        "predictions": datasets.Sequence(datasets.Value("int64")),
        "references": datasets.Sequence(datasets.Value("int64")),
    }
)
_SPAN = {"label": datasets.Value("string"), "start": datasets.Value("int64"), "end": datasets.Value("int64")}
_SPANS = datasets.Features(
    {"predictions": [_SPAN], "references": [_SPAN]}
)

_CORE_OPTIONS = (
    "scheme", "repair", "rule", "counting", "mode", "setting", "average", "beta", "normaliser",
    "token_weight", "separator_weight", "ser_weights",
)


class IEScore(evaluate.Metric):
    """The iescore metric (see the card)."""

    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=[_TAGS, _IDS, _SPANS],
            homepage="https://pypi.org/project/iescore/",
            codebase_urls=[],
            reference_urls=[],
        )

    def _compute(
        self,
        predictions: list[Any],
        references: list[Any],
        label_names: list[str] | None = None,
        tokens: list[list[str]] | None = None,
        supertags: dict[str, str] | None = None,
        zero_division: float = 0.0,
        scheme: str = "auto",
        **options: Any,
    ) -> dict[str, Any]:
        unknown = set(options) - set(_CORE_OPTIONS)
        if unknown:
            raise iescore.ConfigError(
                f"unknown option(s) {sorted(unknown)}; valid: {sorted(_CORE_OPTIONS + ('label_names', 'tokens', 'supertags', 'zero_division'))}"
            )
        cfg = dict(options)
        if supertags:
            cfg["supertags"] = tuple(supertags.items())
        first = references[0] if references else None
        spans_input = isinstance(first, dict) or (bool(first) and isinstance(first[0], dict))
        if spans_input:
            report = _score_spans(predictions, references, tokens, Scorer(**cfg))
        else:
            cfg["scheme"] = scheme
            refs, preds = _as_tags(references, predictions, label_names)
            scorer = Scorer(**cfg)
            scorer.add_tags(reference=refs, prediction=preds, tokens=tokens)
            report = scorer.report()
        return seqeval_style(report, zero_division=zero_division)


def _as_tags(references: list[Any], predictions: list[Any], label_names: list[str] | None) -> tuple[list[list[str]], list[list[str]]]:
    refs, preds = [], []
    for k, (r, p) in enumerate(zip(references, predictions)):
        if len(r) != len(p):
            raise iescore.InputError(f"document {k}: reference has {len(r)} tags but prediction has {len(p)}")
        if r and not isinstance(r[0], str):
            if label_names is None:
                raise iescore.ConfigError("integer tags need label_names (ClassLabel names or id2label)")
            keep = [i for i, x in enumerate(r) if x != -100]
            try:
                refs.append([label_names[r[i]] for i in keep])
                preds.append([label_names[p[i]] for i in keep])
            except IndexError:
                raise iescore.InputError(f"document {k}: a tag id is outside label_names (0..{len(label_names) - 1})") from None
        else:
            refs.append(list(r))
            preds.append(list(p))
    return refs, preds


def _score_spans(predictions: list[Any], references: list[Any], tokens: list[list[str]] | None, scorer: Scorer) -> Any:
    def spans(doc: Any) -> list[Span]:
        if isinstance(doc, dict):  # a columnar Sequence(dict) comes back as a dict of lists
            doc = [dict(zip(doc, vals)) for vals in zip(*doc.values())]
        return [Span(s["label"], int(s["start"]), int(s["end"])) for s in doc]

    if tokens is None and (scorer.config.setting == "OBD" or scorer.config.mode == "one-per-string"):
        raise iescore.ConfigError("setting='OBD' and mode='one-per-string' compare strings: pass tokens=")
    refs, preds = [], []
    for k, (r, p) in enumerate(zip(references, predictions)):
        rs, ps = spans(r), spans(p)
        if tokens is not None:
            toks = tuple(tokens[k])
        else:
            n = max([s.end for s in rs + ps], default=0)
            toks = ("",) * n
        refs.append(Document(str(k), toks, tuple(rs)))
        preds.append(ps)
    scorer.add(reference=refs, prediction=preds)
    return scorer.report()
