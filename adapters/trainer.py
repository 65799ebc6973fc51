"""A ``compute_metrics`` hook for the Hugging Face ``Trainer``.

``compute_metrics(label_names, **options)`` builds a callable that takes the
Trainer's ``EvalPrediction`` (logits or label ids, with ``-100`` on positions
that are not words) and returns flat Python floats (``precision``, ``recall``,
``f1``, ``f_beta``, ``accuracy``, ``ser``, ``ts_f1_macro``..., and ``<LABEL>_f1``
etc.; ``f1`` keys hold F1 whatever ``beta``, ``f_beta`` the configured F_beta); the
Trainer prefixes them with ``eval_``, so ``metric_for_best_model="f1"`` works.

With ``TrainingArguments(batch_eval_metrics=True)`` the Trainer calls the hook
once per batch with ``compute_result``: the hook adds each batch's counts to a
streaming scorer and returns the metrics of all batches on the last one --
never an average of per-batch F1. With ``eval_do_concat_batches=False`` it is given a
list of each batch's arrays, and scores them all.

The rule travels with the numbers as the hook's ``signature`` attribute (the last
evaluation's) and, with ``log_signature=True``, as one ``logging`` record (INFO, logger
``iescore.adapters.trainer``) per distinct signature. It is not a metric: the Trainer
passes metrics to integrations that take numbers only (TensorBoard drops a string, and
``hyperparameter_search``'s default objective sums every metric), so every value
returned is a float.

Scoring words: with ``word_ids`` (one list per sequence of the evaluation set, in its
order: the word of each position, None where there is none, as a fast tokenizer's
``BatchEncoding.word_ids(i)`` gives it, or a dataset column holding them), the hook
scores words rather than the positions not labelled ``-100``, whether the labels sit on
each word's first sub-token or on every sub-token (``label_all_tokens``): a word's gold
tag is its first sub-token's label, its predicted tag is read under the ``subwords``
option, ``"first"`` (default), ``"max"`` or ``"average"`` over its sub-tokens' logits
(the last two need logits: not with ``preprocess_logits_for_metrics`` reducing them to
ids). The Trainer evaluates its dataset in order, so the hook pairs the sequences it is
given with ``word_ids`` by their rank, across the batches of ``batch_eval_metrics`` too;
an evaluation of another number of sequences is an error (a hook per dataset).

Example:
    >>> import numpy as np
    >>> from iescore.adapters.trainer import compute_metrics
    >>> hook = compute_metrics(["O", "B-PER", "I-PER"])
    >>> class EvalPrediction:  # what the Trainer passes
    ...     predictions = np.array([[0, 1, 2, 0]])
    ...     label_ids = np.array([[-100, 1, 2, -100]])
    >>> m = hook(EvalPrediction())
    >>> m["f1"], m["PER_f1"], type(m["f1"])
    (1.0, 1.0, <class 'float'>)

    Every sub-token labelled, one word of three sub-tokens found on its first:
    >>> words = compute_metrics(["O", "B-PER", "I-PER"], word_ids=[[None, 0, 0, 0, 1, None]])
    >>> words((np.array([[0, 1, 0, 0, 0, 0]]), np.array([[-100, 1, 2, 2, 0, -100]])))["f1"]
    1.0
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from iescore.adapters.hf import id2label_list, trainer_batch

from iescore.errors import ConfigError, InputError
from iescore.options import Options
from iescore.render.flat import flat_metrics
from iescore.scorer import Scorer

if TYPE_CHECKING:
    from iescore.options import Unpack

__all__ = ["ComputeMetrics", "compute_metrics"]

logger = logging.getLogger(__name__)


def _numpy(x: Any) -> Any:
    if isinstance(x, (tuple, list)) and x and not isinstance(x[0], (int, float)) and hasattr(x[0], "shape"):
        x = x[0]  # (logits, hidden states, ...) -> logits
    if hasattr(x, "detach"):
        x = x.detach().cpu().numpy()
    return x


def _per_batch(labels: Any) -> bool:
    """Whether ``label_ids`` is a list of per-batch 2-D arrays (``eval_do_concat_batches=False``)."""
    return isinstance(labels, list) and bool(labels) and all(getattr(x, "ndim", 0) == 2 for x in labels)


def _parts(eval_pred: Any) -> tuple[Any, Any]:
    """The predictions and the label ids of an ``EvalPrediction``, or of a tuple
    ``(predictions, label_ids)`` as ``predictions, labels = eval_pred`` reads one."""
    if hasattr(eval_pred, "predictions") and hasattr(eval_pred, "label_ids"):
        return eval_pred.predictions, eval_pred.label_ids
    if isinstance(eval_pred, (tuple, list)) and len(eval_pred) in (2, 3):  # (+ the inputs)
        return eval_pred[0], eval_pred[1]
    shown = f"a {type(eval_pred).__name__}" + (f" of {len(eval_pred)}" if isinstance(eval_pred, (tuple, list)) else "")
    raise TypeError(
        f"compute_metrics takes the Trainer's EvalPrediction (with .predictions and .label_ids) or a "
        f"tuple (predictions, label_ids); got {shown}"
    )


class ComputeMetrics:
    """The hook (see the module docstring); ``options``: any of [`Options`][iescore.options.Options]."""

    def __init__(
        self,
        label_names: Mapping[int, str] | Sequence[str],
        *,
        zero_division: float = 0.0,
        per_label: bool = True,
        log_signature: bool = False,
        word_ids: Sequence[Sequence[int | None]] | None = None,
        **options: Unpack[Options],
    ) -> None:
        self.label_names = id2label_list(label_names)
        self.word_ids = _word_id_lists(word_ids)
        policy = options.get("subwords")
        if policy not in (None, "first") and self.word_ids is None:
            raise ConfigError(f"subwords={policy!r} reads a word's sub-tokens: it needs word_ids (and logits)")
        self.subwords = policy or "first"
        self.zero_division = zero_division
        self.per_label = per_label
        self.log_signature = log_signature
        self.signature: str | None = None  # the last evaluation's
        self.options: Options = {"scheme": "auto", **options}
        Scorer(**self.options)  # validate the options now, not at the first evaluation
        self._scorer: Scorer | None = None
        self._seen = 0

    def _add(self, scorer: Scorer, eval_pred: Any) -> None:
        preds, labels = _parts(eval_pred)
        if _per_batch(labels):  # eval_do_concat_batches=False: a list of each batch's arrays
            if not isinstance(preds, (list, tuple)) or len(preds) != len(labels):
                raise InputError(f"label_ids is a list of {len(labels)} batches' arrays but predictions is not a "
                                 "list of as many")
            for p, lab in zip(preds, labels):
                scorer.add_batch(self._batch(p, lab))
        else:
            scorer.add_batch(self._batch(preds, labels))

    def _batch(self, preds: Any, labels: Any) -> Any:
        preds, labels = _numpy(preds), _numpy(labels)
        n = len(labels)
        offset, self._seen = self._seen, self._seen + n
        words = None
        if self.word_ids is not None:
            if self._seen > len(self.word_ids):
                raise InputError(
                    f"compute_metrics was given {self._seen} sequences so far but word_ids holds {len(self.word_ids)} "
                    "(one list per sequence of the evaluation set, in its order): an evaluation of another "
                    "dataset needs a hook built with that dataset's word ids"
                )
            words = self.word_ids[offset : self._seen]
        return trainer_batch(preds, labels, id2label=self.label_names, id_offset=offset, word_ids=words,
                             strategy=self.subwords)

    def _check_all_seen(self) -> None:
        if self.word_ids is not None and self._seen != len(self.word_ids):
            raise InputError(
                f"the evaluation had {self._seen} sequences but word_ids holds {len(self.word_ids)} (one list per "
                "sequence of the evaluation set, in its order): an evaluation of another dataset needs a hook built "
                "with that dataset's word ids"
            )

    def __call__(self, eval_pred: Any, compute_result: bool | None = None) -> dict[str, float]:
        if compute_result is None:  # one call with the whole evaluation set
            self._seen = 0
            scorer = Scorer(**self.options)
            self._add(scorer, eval_pred)
            self._check_all_seen()
            return self._metrics(scorer.report())
        if self._scorer is None:
            self._scorer = Scorer(**self.options)
            self._seen = 0
        self._add(self._scorer, eval_pred)
        if not compute_result:
            return {}
        scorer, self._scorer = self._scorer, None
        self._check_all_seen()
        report = scorer.report()
        return self._metrics(report)

    def _metrics(self, report: Any) -> dict[str, float]:
        if self.log_signature and report.signature != self.signature:
            logger.info("iescore signature: %s", report.signature)
        self.signature = report.signature
        return flat_metrics(report, zero_division=self.zero_division, per_label=self.per_label)


def compute_metrics(
    label_names: Mapping[int, str] | Sequence[str],
    *,
    zero_division: float = 0.0,
    per_label: bool = True,
    log_signature: bool = False,
    word_ids: Sequence[Sequence[int | None]] | None = None,
    **options: Unpack[Options],
) -> ComputeMetrics:
    """Build a Trainer ``compute_metrics`` hook from the label names and scoring options
    ([`iescore.options.Options`][iescore.options.Options]): undefined values become ``zero_division``; with
    ``per_label``, each label's measures are returned too (``<LABEL>_f1``...); with
    ``log_signature``, the signature is logged once per distinct signature (INFO). With
    ``word_ids`` (one list per sequence of the evaluation set, in order), words are scored,
    their predicted tags read under ``subwords`` (``"first"``, ``"max"``, ``"average"``):
    see the module docstring."""
    return ComputeMetrics(label_names, zero_division=zero_division, per_label=per_label,
                          log_signature=log_signature, word_ids=word_ids, **options)


def _word_id_lists(word_ids: Any) -> list[Any] | None:
    """The word ids as a list of rows (a ``datasets`` column read once), or None."""
    if word_ids is None:
        return None
    if isinstance(word_ids, (str, bytes, Mapping)) or not hasattr(word_ids, "__iter__"):
        raise InputError(f"word_ids is one list of word ids per sequence, got a {type(word_ids).__name__}")
    rows = list(word_ids)
    if rows and not isinstance(rows[0], (str, bytes)) and not hasattr(rows[0], "__iter__"):
        raise InputError("word_ids is one list of word ids per sequence (a list of lists), got a flat list: "
                         "wrap one sequence's word ids in a list")
    return rows
