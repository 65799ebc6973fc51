"""Stage 8 of the pipeline, after the report, beside the statistics: precision, recall
and F at every confidence threshold (a precision-recall curve) and the threshold of the
best F.

A prediction is *kept* at threshold ``t`` when its confidence is at least ``t``; the
curve has one point per distinct confidence of the predictions as scored (the items of
[`Report.items`][iescore.report.Report.items]), and each point is exactly what the
scorer reports on the input whose predictions below ``t`` are dropped: the micro
``tp``, ``fp`` and ``fn`` summed over labels and documents, and precision, recall and
F_beta (the configured beta) from them, ``None`` where undefined. The lowest threshold
keeps every prediction.

How each point is found:

* **any-match counting** (``counting="any"``, ``setting="AO"``, ``mode="match-all"``):
  a prediction's status does not depend on the other predictions, and an answer is found
  at ``t`` exactly when some kept prediction matches it, so the whole curve follows from
  one scoring and the candidate pairs of the matching rule: ``TP(t)`` counts the matching
  predictions of confidence at least ``t``, ``FN(t)`` the answers whose best matching
  confidence is below ``t``; one sort, whatever the number of thresholds
  (``method="pairs"``).
* **one-to-one counting** (``setting="AO"``, ``mode="match-all"``): dropping a
  prediction can change which others match, but not the rule the counts follow: TP is the
  size of a largest matching of the kept predictions to the answers (whichever largest
  matching the tie rule picks). The predictions are added in decreasing confidence, each
  by one search for an augmenting path from it, which keeps the matching largest; one
  scoring again, every threshold (``method="matching"``). Should the searches pass a bound
  of work (long chains of crossing pairs), the curve is scored again as below.
* otherwise (match-best, one-per-string, OBD templates) the input is scored again at each
  threshold (``method="rescored"``), at most ``max_thresholds`` times: with more distinct
  confidences than that, the thresholds are ``max_thresholds`` of them taken at evenly
  spaced quantiles (the lowest and the highest among them), each point still exact at its
  threshold, and ``note`` says so.

The best point has the largest F_beta; among equal ones, the highest threshold (the
fewest predictions). Predictions without a confidence are an
[`InputError`][iescore.errors.InputError] naming the document and the prediction.

Example:
    >>> from iescore import Document, Span
    >>> ref = [Document("d", ("a", "b", "c", "d"), (Span("X", 0, 1), Span("X", 2, 3)))]
    >>> pred = [[Span("X", 0, 1, score=0.9), Span("X", 1, 2, score=0.6), Span("X", 2, 3, score=0.3)]]
    >>> c = pr_curve(ref, pred)
    >>> c.thresholds, c.tp, c.fp, c.fn
    ((0.3, 0.6, 0.9), (2, 1, 1), (1, 1, 0), (0, 1, 1))
    >>> c.best.threshold, round(c.best.f1, 4)
    (0.3, 0.8)
"""

from __future__ import annotations

from argparse import Namespace
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from ..config import Config
from ..errors import ConfigError, InputError
from ..match.rules import ao_pairs
from ..match.units import STATUS_NAMES, Units
from ..measures import f_beta, ratio
from ..model import Document, Span, Template
from ..report import Report
from ..scoring.stream import Scorer

if TYPE_CHECKING:
    from ..options import Options, Unpack

__all__ = ["ThresholdCurve", "ThresholdPoint", "pr_curve", "curve_of_report", "files_rescorer", "filtered",
           "MAX_THRESHOLDS"]

MAX_THRESHOLDS = 200  # the most rescorings of one curve (one-to-one counting and the modes)
_TP = STATUS_NAMES.index("TP")
# the bound of a one-to-one curve's searches, in edges looked at: a * (pairs + items) + b
_WORK = (64, 100_000)


@dataclass(frozen=True)
class ThresholdPoint:
    """One point of a curve: predictions of confidence ``>= threshold`` kept."""

    threshold: float
    tp: int
    fp: int
    fn: int
    precision: float | None
    recall: float | None
    f1: float | None
    f_beta: float | None

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in ("threshold", "tp", "fp", "fn", "precision", "recall", "f1", "f_beta")}


@dataclass(frozen=True)
class ThresholdCurve:
    """Precision, recall and F at each threshold (ascending); ``best`` is the point of the
    largest F_beta (ties: the highest threshold), ``None`` when no F is defined."""

    thresholds: tuple[float, ...]
    tp: tuple[int, ...]
    fp: tuple[int, ...]
    fn: tuple[int, ...]
    precision: tuple[float | None, ...]
    recall: tuple[float | None, ...]
    f1: tuple[float | None, ...]
    f_beta: tuple[float | None, ...]
    beta: float
    best: ThresholdPoint | None
    method: str  # "pairs", "matching" or "rescored"
    distinct: int  # distinct confidences of the predictions
    note: str | None = None

    def __len__(self) -> int:
        return len(self.thresholds)

    def point(self, k: int) -> ThresholdPoint:
        """The ``k``-th point (in ascending threshold order)."""
        return ThresholdPoint(self.thresholds[k], self.tp[k], self.fp[k], self.fn[k], self.precision[k],
                              self.recall[k], self.f1[k], self.f_beta[k])

    def to_dict(self) -> dict[str, Any]:
        """``{"best", "beta", "method", "distinct", "note", "points"}``: ``points`` one dict per
        threshold, ascending (``threshold``, ``tp``, ``fp``, ``fn``, ``precision``, ``recall``,
        ``f1``, ``f_beta``)."""
        return {"best": None if self.best is None else self.best.to_dict(), "beta": self.beta,
                "method": self.method, "distinct": self.distinct, "note": self.note,
                "points": [self.point(k).to_dict() for k in range(len(self))]}


_Counts = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]  # thresholds, tp, fp, fn


def _curve(thresholds: np.ndarray, tp: np.ndarray, fp: np.ndarray, fn: np.ndarray, beta: float, method: str,
           distinct: int, note: str | None) -> ThresholdCurve:
    tps, fps, fns = (tuple(int(x) for x in a.tolist()) for a in (tp, fp, fn))
    prec = tuple(ratio(a, a + b) for a, b in zip(tps, fps))
    rec = tuple(ratio(a, a + c) for a, c in zip(tps, fns))
    f1 = tuple(f_beta(a, b, c) for a, b, c in zip(tps, fps, fns))
    fb = tuple(f_beta(a, b, c, beta) for a, b, c in zip(tps, fps, fns))
    ts = tuple(float(t) for t in thresholds.tolist())
    best_k = None
    for k, v in enumerate(fb):  # ascending thresholds: >= keeps the highest among equals
        if v is not None and (best_k is None or v >= fb[best_k]):  # type: ignore[operator]
            best_k = k
    c = ThresholdCurve(ts, tps, fps, fns, prec, rec, f1, fb, beta, None, method, distinct, note)
    return c if best_k is None else ThresholdCurve(**{**c.__dict__, "best": c.point(best_k)})


def _missing(report: Report) -> None:
    """An InputError naming the first prediction without a confidence."""
    s = np.asarray(report.prediction.score, dtype=float)
    bad = np.flatnonzero(np.isnan(s))
    if not len(bad):
        return
    k = int(bad[0])
    t = report.prediction
    what = (f"relation {report.labels[int(t.label[k])]!r}" if t.args is not None
             else f"span ({report.labels[int(t.label[k])]!r}, {int(t.start[k])}, {int(t.end[k])})" if t.start[k] >= 0
             else f"filler of slot {report.labels[int(t.label[k])]!r}")
    if t.ids is not None:
        what = f"link of {what} to {t.ids[k]!r}"
    if t.text is not None:
        what += f" {t.text[k]!r}"
    raise InputError(f"a precision-recall curve needs a confidence on every prediction: document "
                     f"{report.doc_ids[int(t.doc[k])]!r}, predicted {what} has none ({len(bad):,} of "
                     f"{len(s):,} predictions lack one); give each prediction a score (Span.score, "
                     "Template.scores, Relation.score, Link.score, a JSONL span's, relation's or link's \"score\")")


def _rule_pairs(report: Report) -> tuple[np.ndarray, np.ndarray] | None:
    """The (answer, prediction) pairs of the report's items that match under its rule (AO,
    match-all, items at positions), or None where the curve is not read from them."""
    cfg = report.config
    R, P = report.reference, report.prediction
    if (cfg.setting != "AO" or cfg.mode != "match-all" or cfg.detail != "full" or cfg.task != "entities"
            or (len(R) and R.start.min() < 0) or (len(P) and P.start.min() < 0)):
        return None
    UR = Units(np.asarray(R.doc), np.asarray(R.label), np.asarray(R.start), np.asarray(R.end))
    UP = Units(np.asarray(P.doc), np.asarray(P.label), np.asarray(P.start), np.asarray(P.end))
    pairs = ao_pairs(UR, UP, cfg.rule)
    return pairs.r[pairs.ok].astype(np.int64), pairs.p[pairs.ok].astype(np.int64)


def _at_least(values: np.ndarray, thresholds: np.ndarray) -> np.ndarray:
    """How many of ``values`` are >= each threshold."""
    return len(values) - np.searchsorted(np.sort(values), thresholds, "left")


def _any_curve(report: Report, r: np.ndarray, p: np.ndarray) -> _Counts | None:
    """(thresholds, tp, fp, fn) under any-match counting, or None when the pairs disagree
    with the report's statuses."""
    R, P = report.reference, report.prediction
    hit_p = np.zeros(len(P), dtype=bool)
    hit_p[p] = True
    hit_r = np.zeros(len(R), dtype=bool)
    hit_r[r] = True
    if not (np.array_equal(hit_p, P.status == _TP) and np.array_equal(hit_r, R.status == _TP)):
        return None  # not the scorer's pairs: score again instead
    s = np.asarray(P.score, dtype=float)
    thresholds = np.unique(s)
    best = np.full(len(R), -np.inf)  # each answer's best matching confidence
    np.maximum.at(best, r, s[p])
    return (thresholds, _at_least(s[hit_p], thresholds), _at_least(s[~hit_p], thresholds),
            len(R) - _at_least(best, thresholds))


def _matching_curve(report: Report, r: np.ndarray, p: np.ndarray) -> _Counts | None:
    """(thresholds, tp, fp, fn) under one-to-one counting: TP is the size of a largest
    matching of the kept predictions (the counts do not depend on which largest matching is
    taken), grown one prediction at a time in decreasing confidence by one search for an
    augmenting path from it (a largest matching of a graph plus a vertex is the old one, or
    the old one with a path from the new vertex). None when the searches pass a bound of
    work (long crossing chains: score again instead) or the sizes disagree with the report."""
    R, P = report.reference, report.prediction
    nR, nP = len(R), len(P)
    s = np.asarray(P.score, dtype=float)
    o = np.argsort(p, kind="stable")
    adj = r[o].tolist()  # each prediction's answers, prediction by prediction
    starts = np.searchsorted(p[o], np.arange(nP + 1)).tolist()
    match_r = [-1] * nR
    stamp = [-1] * nR
    budget = _WORK[0] * (len(adj) + nP + nR) + _WORK[1]
    size = 0
    order = np.argsort(-s, kind="stable").tolist()
    thresholds = np.unique(s)
    sizes = np.zeros(len(thresholds), dtype=np.int64)  # the matching's size at each threshold
    level = len(thresholds) - 1
    for n, q0 in enumerate(order):
        # iterative depth-first search for an augmenting path from q0; ``via`` holds the
        # answers through which each prediction on the stack was reached
        stack, at, via = [q0], [starts[q0]], []  # type: list[int], list[int], list[int]
        while stack:
            q, k = stack[-1], at[-1]
            if k == starts[q + 1]:
                stack.pop()
                at.pop()
                if via:
                    via.pop()
                continue
            at[-1] = k + 1
            budget -= 1
            a = adj[k]
            if stamp[a] == n:
                continue
            stamp[a] = n
            w = match_r[a]
            if w < 0:
                for qq, aa in zip(stack, [*via, a]):
                    match_r[aa] = qq
                size += 1
                break
            via.append(a)
            stack.append(w)
            at.append(starts[w])
        if budget < 0:
            return None
        if n + 1 == nP or s[order[n + 1]] != s[q0]:  # every prediction of this confidence is in
            sizes[level] = size
            level -= 1
    if nP and not (size == int((P.status == _TP).sum()) == int((R.status == _TP).sum())):
        return None
    kept = _at_least(s, thresholds)
    return thresholds, sizes, kept - sizes, nR - sizes


def _chosen(distinct: np.ndarray, most: int) -> np.ndarray:
    """``most`` of the sorted ``distinct`` values at evenly spaced quantiles (the first and the last kept)."""
    at = np.unique(np.round(np.linspace(0, len(distinct) - 1, most)).astype(np.int64))
    return distinct[at]


def curve_of_report(report: Report, rescore: Callable[[float], Report] | None = None, *,
                    max_thresholds: int = MAX_THRESHOLDS) -> ThresholdCurve:
    """The curve of ``report`` (every prediction kept, items kept): from its candidate pairs
    under any-match and one-to-one counting, else ``rescore(t)`` (the report of the input
    without the predictions below ``t``) at each threshold; a ConfigError when the curve
    needs ``rescore`` and none is given."""
    if isinstance(max_thresholds, bool) or not isinstance(max_thresholds, int) or max_thresholds < 2:
        raise ConfigError(f"max_thresholds must be a whole number of at least 2, got {max_thresholds!r}")
    report.items("prediction")  # a report of totals keeps no items: its ConfigError says so
    _missing(report)
    beta = report.config.beta
    distinct = np.unique(np.asarray(report.prediction.score, dtype=float))
    pairs = _rule_pairs(report)
    if pairs is not None:
        any_match = report.config.counting == "any"
        found = (_any_curve if any_match else _matching_curve)(report, *pairs)
        if found is not None:
            return _curve(*found, beta, "pairs" if any_match else "matching", len(distinct), None)
    if rescore is None:
        raise ConfigError("this curve scores the input again at each threshold (match-best, one-per-string or "
                          "OBD): use iescore.stats.thresholds.pr_curve(reference, prediction, ...)")
    note = None
    thresholds = distinct
    if len(distinct) > max_thresholds:
        thresholds = _chosen(distinct, max_thresholds)
        note = (f"{len(thresholds)} of the {len(distinct):,} distinct confidences, taken at evenly spaced quantiles "
                f"(max_thresholds={max_thresholds}); each point is exact at its threshold")
    counts = np.zeros((3, len(thresholds)), dtype=np.int64)
    for k, t in enumerate(thresholds.tolist()):
        c = report.overall if k == 0 and t == distinct[0] else rescore(t).overall
        counts[:, k] = (c.tp, c.fp, c.fn)
    return _curve(thresholds, counts[0], counts[1], counts[2], beta, "rescored", len(distinct), note)


def _kept_spans(spans: Sequence[Any], t: float) -> tuple[Span, ...]:
    out = (s if isinstance(s, Span) else Span(*s) for s in spans)
    return tuple(s for s in out if s.score is not None and s.score >= t)


def _kept_doc(doc: Any, t: float) -> Any:
    """A Document (or a character-offset document) without its spans, relations and links
    of confidence below ``t`` or without one."""
    def keep(x: Any) -> bool:
        return x.score is not None and bool(x.score >= t)

    return replace(doc, spans=_kept_spans(doc.spans, t), relations=tuple(filter(keep, doc.relations)),
                   links=tuple(filter(keep, doc.links)))


def _kept(pred: Any, t: float) -> Any:
    """One document's prediction without what is below ``t`` (same type as given)."""
    if isinstance(pred, Document):
        return _kept_doc(pred, t)
    if isinstance(pred, Template):
        slots: dict[str, list[tuple[str, ...]]] = {}
        scores: dict[str, list[float]] = {}
        for label, filler, conf in pred.fillers():
            if conf is not None and conf >= t:
                slots.setdefault(label, []).append(filler)
                scores.setdefault(label, []).append(conf)
        return Template(pred.id, slots, {k: tuple(v) for k, v in scores.items()})
    return _kept_spans(pred, t)


def filtered(prediction: Sequence[Any], t: float) -> list[Any]:
    """The prediction (Documents, span lists or Templates) without the spans, relations,
    links and fillers of confidence below ``t``; those without a confidence are dropped too."""
    return [_kept(p, t) for p in prediction]


def pr_curve(
    reference: Sequence[Document] | Sequence[Template],
    prediction: Sequence[Document] | Sequence[Sequence[Span]] | Sequence[Template],
    *,
    max_thresholds: int = MAX_THRESHOLDS,
    config: Config | None = None,
    **options: Unpack[Options],
) -> ThresholdCurve:
    """Precision, recall and F at every confidence threshold of ``prediction`` (see the
    module's docstring): each point equals ``iescore.score(reference=reference,
    prediction=filtered(prediction, t), ...).overall``'s measures. Options as
    [`iescore.score`][iescore.score] takes them."""
    cfg = Config.from_options(config, **options)

    def run(pred: Sequence[Any]) -> Report:
        s = Scorer(cfg)
        s.add(reference=reference, prediction=pred)
        return s.report()

    return curve_of_report(run(prediction), lambda t: run(filtered(prediction, t)), max_thresholds=max_thresholds)


def files_rescorer(report: Report, args: Namespace) -> Callable[[float], Report]:
    """``rescore(t)`` for [`curve_of_report`][iescore.stats.thresholds.curve_of_report] on the
    report of ``iescore score GOLD PRED --input-format F ...`` (``args``, as
    `iescore.files.score_args` reads them): the files read once,
    on the first call, and the prediction's documents scored again without their spans below
    ``t``."""
    from ..io.chars import TextCorpus
    from ..io.formats import read_input
    from ..io.textscore import score_text

    read: list[Any] = []
    cfg = report.config

    def rescore(t: float) -> Report:
        if not read:
            gold = read_input(args.file, args.input_format, args)
            pred = read_input(args.pred_file, args.pred_format or args.input_format, args)
            if not isinstance(gold, TextCorpus) or not isinstance(pred, TextCorpus):
                raise ConfigError("a precision-recall curve needs predictions with confidences: LLM extractions "
                                  "carry none")
            read.extend((gold.documents, pred.documents))
        kept = [_kept_doc(d, t) for d in read[1]]
        r: Report = score_text(read[0], kept, level=args.level, tokenizer=args.tokenizer, misaligned=args.misaligned,
                               config=cfg.with_(level=None, tokenizer=None, misaligned=None))
        return r

    return rescore
