"""iescore as a Hugging Face ``evaluate`` metric.

Load it offline from this folder (the script shares the folder's name):

    >>> import evaluate, iescore.metric_card
    >>> metric = evaluate.load(iescore.metric_card.PATH)  # doctest: +SKIP

Its output is a superset of ``evaluate``'s seqeval metric.
"""

from __future__ import annotations

import warnings
from typing import Any

import datasets
import evaluate

import iescore
from iescore import Document, Scorer, Span
from iescore.errors import choices
from iescore.render.flat import seqeval_style

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
    seqeval's arguments, with seqeval's meaning (so code written for `evaluate.load("seqeval")` runs):
    mode: None (default) or "strict". None decodes tags with conlleval.pl's rules (iescore's
        repair="conlleval"), as seqeval's default mode does (seqeval ignores `scheme` there; iescore
        takes from it the tag letters it accepts and what counts as repaired). One difference: seqeval's default
        mode splits "E-X B-X" where conlleval.pl makes one chunk; iescore follows conlleval.pl and warns
        (SeqevalDifferenceWarning). "strict" decodes by the scheme's definition and drops ill-formed
        chunks: iescore's repair="discard" with `scheme` (without one, detected from the reference
        prefixes as seqeval does: IOB2, IOE2, IOBES or BILOU). iescore's own modes are also accepted
        here: "match-all" (what None means), "match-best", "one-per-string".
    scheme: "auto" (default; None means the same), "IO", "IOB1", "IOB2", "IOE1", "IOE2", "IOBES", "BMES", "BILOU".
    suffix: True for tags with the prefix after the label (`PER-B`); they are scored as `B-PER`.
    sample_weight: refused with an error: seqeval accepts it but never uses it (it weights only
        average="samples", which it does not offer), and chunk counts have no per-sentence weight.
    zero_division: "warn" (default: an UndefinedMetricWarning naming the values, then 0), 0 or 1: the value
        that replaces an undefined value (0/0), as seqeval does; 1 is written in the signature
        (`|zero_division:1` at its end).
    iescore's options:
    repair: "conlleval" (default), "strict" or "discard".
    rule: "E" (exact, default), "C(e)", "O(e,m)", "O(inf,inf)", "IoU(t)", "cover(t)" or "sim(t)".
    counting: "any" (default) or "one-to-one".
    setting: "AO" (default) or "OBD" (needs `tokens`).
    tokens: per document, the token strings (OBD and one-per-string compare strings).
    average: the average behind `overall_precision/recall/f1/f_beta`: "micro" (default), "macro", "weighted".
    beta: the beta of `overall_f_beta` (default 1.0); every `*_f1` key stays F1.
    supertags: a dict merging labels before scoring, e.g. {"PER": "NE", "LOC": "NE"}.
    keep_types, remove_types: the labels scored (the others dropped from both sides), or the
        labels dropped, e.g. ["MISC"].
    normaliser: string normaliser for OBD, e.g. "lower+whitespace".
    token_weight, separator_weight: t-unit weights of the token & separator model (default 1.0).
    ser_weights: weights of substitutions, deletions and insertions in the weighted slot error
        rate, e.g. (1.0, 0.5, 0.5).
Returns:
    overall_precision, overall_recall, overall_f1, overall_accuracy (seqeval's keys, same meaning),
    one dict per label with precision, recall, f1 and number (reference support), and iescore's
    overall_f_beta (F_beta of `beta`), overall_jaccard (the Jaccard overlap TP/(TP+FP+FN) of the
    `average`) and per label `<LABEL>_jaccard`, overall_ser, overall_err, overall_e, overall_ts_f1_macro, overall_ts_f1_micro,
    overall_token_f1_macro, overall_macro_f1, overall_weighted_f1, overall_C/S/D/I counts,
    semeval_<scenario>_precision/recall/f1 for the SemEval-2013 scenarios strict, exact, partial
    and type, and signature (a string). Every number is a plain Python float or int.
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
    "token_weight", "separator_weight", "ser_weights", "keep_types", "remove_types",
)
# the options of relations and links, refused: the metric's inputs are entities only
_TASK_OPTIONS = ("task", "arg_labels", "symmetric", "nil", "link_types")
# seqeval's arguments (evaluate's seqeval metric passes them to seqeval.metrics.classification_report)
_SEQEVAL_ARGS = ("suffix", "sample_weight", "zero_division")
_SEQEVAL_MODES = (None, "strict")
_IESCORE_MODES = ("match-all", "match-best", "one-per-string")
_ZERO_DIVISION = ("warn", 0, 1)


class UndefinedMetricWarning(UserWarning):
    """A returned value is undefined (0/0) and was replaced by 0 (``zero_division="warn"``),
    as seqeval and scikit-learn warn with their own ``UndefinedMetricWarning``."""


class SeqevalDifferenceWarning(UserWarning):
    """The input holds a tag pair that seqeval's default mode decodes differently from
    conlleval.pl (and from iescore's default, which follows conlleval.pl)."""


class IEScore(evaluate.Metric):  # type: ignore[misc]  # evaluate has no type information
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
        zero_division: str | int | float = "warn",
        scheme: str | None = "auto",
        mode: str | None = None,
        suffix: bool = False,
        sample_weight: Any = None,
        **options: Any,
    ) -> dict[str, Any]:
        if options.get("task") == "entities":  # what the metric scores anyway
            del options["task"]
        tasks = sorted(set(options) & set(_TASK_OPTIONS))
        if tasks:
            raise iescore.ConfigError(
                f"{', '.join(tasks)}: this metric scores entities (tags or spans, one list per sequence), whose "
                "inputs carry no relations and no links; score those with iescore.score(reference=Documents, "
                "prediction=Documents, task='relations' or 'links') or the command line's iescore score --task"
            )
        unknown = set(options) - set(_CORE_OPTIONS)
        if unknown:
            valid = _CORE_OPTIONS + ("label_names", "tokens", "supertags") + _SEQEVAL_ARGS
            raise iescore.ConfigError(f"unknown option(s) {sorted(unknown)}; valid: {choices(sorted(valid))}")
        _check_zero_division(zero_division)
        _refuse_sample_weight(sample_weight)
        cfg = dict(options)
        if supertags:
            cfg["supertags"] = tuple(supertags.items())
        first = references[0] if references else None
        spans_input = isinstance(first, dict) or (first is not None and bool(first) and isinstance(first[0], dict))
        if spans_input:
            if mode == "strict" or suffix:
                raise iescore.ConfigError(
                    "mode='strict' and suffix=True are about decoding tags; span input has no tags"
                )
            if mode is not None:
                cfg["mode"] = _iescore_mode(mode)
            report = _score_spans(predictions, references, tokens, Scorer(**cfg))
        else:
            refs, preds = _as_tags(references, predictions, label_names)
            if suffix:
                refs, preds = _prefix_form(refs), _prefix_form(preds)
            if mode == "strict":
                # seqeval's strict mode decodes by the scheme's definition and drops ill-formed chunks
                if cfg.get("repair", "discard") != "discard":
                    raise iescore.ConfigError(
                        f"mode='strict' is seqeval's strict decoding, iescore's repair='discard'; "
                        f"it cannot be combined with repair={cfg['repair']!r}"
                    )
                cfg["repair"] = "discard"
                cfg["scheme"] = _seqeval_scheme(refs) if scheme in (None, "auto") else scheme
            else:
                if mode is not None:
                    cfg["mode"] = _iescore_mode(mode)
                cfg["scheme"] = "auto" if scheme is None else scheme
                if cfg.get("repair", "conlleval") == "conlleval":
                    _warn_end_begin(refs, preds)
            scorer = Scorer(**cfg)
            # one batch scored at once (add_tags would hold a small one for more calls)
            scorer.add_batch(iescore.tagged_batch(refs, preds, tokens=tokens))
            report = scorer.report()
        if zero_division != "warn":
            out = _seqeval_view(report, float(zero_division))
            if zero_division == 1:  # undefined values as 1, not 0 (as "warn" and 0 give): other numbers
                out["signature"] += "|zero_division:1"
            return out
        out = _seqeval_view(report, 0.0)
        _warn_undefined(out, _seqeval_view(report, 1.0))
        return out


def _seqeval_view(report: Any, zero_division: float) -> dict[str, Any]:
    """The report under seqeval's keys: one dict per label that has a chunk on either side
    (seqeval lists the labels of the chunks it decodes; a label whose chunks were all dropped
    by strict decoding has no counts), then the overall and iescore's keys."""
    out = seqeval_style(report, zero_division=zero_division)
    d = report.to_dict()
    for label, e in d["per_label"].items():
        if e["support"] == 0 and e["predicted"] == 0:
            del out[label], out[f"{label}_jaccard"]
    if d["semeval"] is not None:  # not under detail="prf" or match-best (no alignment)
        for scenario in ("strict", "exact", "partial", "type"):
            for k in ("precision", "recall", "f1"):
                v = d["semeval"][scenario][k]
                out[f"semeval_{scenario}_{k}"] = zero_division if v is None else float(v)
    return out


def _check_zero_division(zero_division: Any) -> None:
    ok = zero_division == "warn" or (
        isinstance(zero_division, (int, float)) and not isinstance(zero_division, bool) and zero_division in (0, 1)
    )
    if not ok:
        raise iescore.ConfigError(f"zero_division={zero_division!r}; valid: {choices(_ZERO_DIVISION)}")


def _refuse_sample_weight(sample_weight: Any) -> None:
    if sample_weight is not None:
        raise iescore.ConfigError(
            "sample_weight has no meaning here: precision, recall and F1 count chunks over the whole "
            "corpus, and seqeval accepts sample_weight but never uses it (it would only weight "
            "average='samples', which seqeval does not offer), so every seqeval result is the same "
            "without it; remove sample_weight (valid: None)"
        )


def _iescore_mode(mode: Any) -> str:
    if mode not in _IESCORE_MODES:
        raise iescore.ConfigError(f"unknown mode {mode!r}; valid: {choices(_SEQEVAL_MODES + _IESCORE_MODES)}")
    return str(mode)


def _prefix_form(docs: list[list[str]]) -> list[list[str]]:
    """Tags in suffix form (``PER-B``, seqeval's ``suffix=True``) in prefix form (``B-PER``).

    >>> _prefix_form([["PER-B", "PER-I", "O", "LOC-S"]])
    [['B-PER', 'I-PER', 'O', 'S-LOC']]
    """
    seen: dict[str, str] = {"O": "O"}
    out = []
    for k, doc in enumerate(docs):
        row = []
        for i, tag in enumerate(doc):
            new = seen.get(tag)
            if new is None:
                label, sep, prefix = tag.rpartition("-")
                if not sep or not label or len(prefix) != 1:
                    raise iescore.InputError(
                        f"document {k}, position {i}: tag {tag!r} is not in suffix form (suffix=True); "
                        f"valid forms: {choices(('<label>-B', '<label>-I', '<label>-E', '<label>-S', 'O'))}"
                    )
                new = seen[tag] = f"{prefix}-{label}"
            row.append(new)
        out.append(row)
    return out


def _seqeval_scheme(refs: list[list[str]]) -> str:
    """The scheme seqeval's strict mode detects when none is given: from the prefixes of the
    reference tags, IOB2 (B, I), IOE2 (I, E), IOBES (B, I, E, S) or BILOU (B, I, L, U).

    >>> _seqeval_scheme([["B-PER", "E-PER", "O"]])
    'IOBES'
    """
    prefixes = {tag[0] for doc in refs for tag in doc if tag != "O"}
    for name, letters, needs in (("IOB2", "BI", "B"), ("IOE2", "IE", "E"), ("IOBES", "BIES", "BES"),
                                 ("BILOU", "BILU", "LU")):
        if prefixes <= set(letters) and prefixes & set(needs):
            return name
    raise iescore.ConfigError(
        f"mode='strict' without a scheme: the reference tags use the prefixes {sorted(prefixes)}, "
        f"from which seqeval detects no scheme; pass scheme= one of "
        f"{choices(('IOB1', 'IOB2', 'IOE1', 'IOE2', 'IOBES', 'BILOU'))}"
    )


def _warn_end_begin(refs: list[list[str]], preds: list[list[str]]) -> None:
    """Warn where seqeval's default mode splits ``E-X B-X`` and conlleval.pl does not."""
    found = []
    for side, docs in (("reference", refs), ("prediction", preds)):
        for k, doc in enumerate(docs):
            for i in range(1, len(doc)):
                a, b = doc[i - 1], doc[i]
                if a[:2] == "E-" and b[:2] == "B-" and a[2:] == b[2:]:
                    found.append((side, k, i, a, b))
    if found:
        side, k, i, a, b = found[0]
        warnings.warn(
            f"{side} document {k}, position {i}: {a!r} {b!r} is one chunk under conlleval.pl's rules "
            f"(iescore's repair='conlleval', the default) and two in seqeval's default mode "
            f"({len(found)} such pair(s)); for IOBES tags pass mode='strict', scheme='IOBES' "
            f"(seqeval's strict mode) or repair='discard'",
            SeqevalDifferenceWarning,
            stacklevel=4,
        )


def _warn_undefined(out: dict[str, Any], at_one: dict[str, Any]) -> None:
    """Warn naming the values that are undefined: those that change with zero_division."""
    names = []
    for key, value in out.items():
        if isinstance(value, dict):
            names += [f"{key}.{k}" for k, v in value.items() if v != at_one[key][k]]
        elif value != at_one[key]:
            names.append(key)
    if names:
        warnings.warn(
            f"{', '.join(names)} undefined (0/0), set to 0 (zero_division='warn'; "
            f"pass zero_division=0 or 1 to choose the value without a warning)",
            UndefinedMetricWarning,
            stacklevel=4,
        )


def _as_tags(references: list[Any], predictions: list[Any], label_names: list[str] | None) -> tuple[list[list[str]], list[list[str]]]:
    refs, preds = [], []
    for k, (r, p) in enumerate(zip(references, predictions)):
        if len(r) != len(p):
            raise iescore.InputError(f"document {k}: reference has {len(r)} tags but prediction has {len(p)}")
        if r and not isinstance(r[0], str):
            if label_names is None:
                raise iescore.ConfigError("integer tags need label_names (ClassLabel names or id2label)")
            keep = [i for i, x in enumerate(r) if x != -100]
            n = len(label_names)
            for side, ids in (("references", r), ("predictions", p)):
                bad = next((i for i in keep if not 0 <= ids[i] < n), None)  # label_names[-2] would wrap
                if bad is None:
                    continue
                if side == "predictions" and p[bad] == -100:
                    raise iescore.InputError(
                        f"document {k}, position {bad}: the prediction holds -100 where the reference holds "
                        f"{r[bad]}; integer ids -100 are not tokens and are removed from both sides where the "
                        f"references hold them: a prediction needs a label id wherever its reference has one"
                    )
                raise iescore.InputError(
                    f"document {k}, position {bad}: {side} hold label id {ids[bad]}, outside 0..{n - 1} (label_names)"
                )
            refs.append([label_names[r[i]] for i in keep])
            preds.append([label_names[p[i]] for i in keep])
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
