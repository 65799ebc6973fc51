"""Stage 5 of the pipeline (measures): sufficient statistics and the measures computed
from them (Concepts: measures, token & separator model).

[`Counts`][iescore.measures.Counts] is the core object: per document and label, the counts that
every measure needs. Counts add (``a + b``), so micro averages, streaming,
merging shards and bootstrap resampling all just sum them. Every measure is a
pure function of counts; an undefined value (0/0) is ``None``.

Example (Makhoul et al. 2000, Table 1, system B: D = N, I = 0.2 N):
    >>> c = Counts(D=10, I=2)
    >>> slot_error_rate(c), muc_err(c)
    (1.2, 1.0)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any

import numpy as np

__all__ = [
    "Counts",
    "FIELDS",
    "ratio",
    "precision",
    "recall",
    "f_beta",
    "f_alpha",
    "makhoul_e",
    "muc_err",
    "slot_error_rate",
    "jaccard",
    "overlap_ratio",
    "ts_measures",
    "measures",
    "ratio_array",
    "f_beta_array",
    "span_arrays",
    "slot_arrays",
    "binary_arrays",
    "ts_arrays",
]


@dataclass(frozen=True)
class Counts:
    """Additive counts for one (document, label) cell, or any sum of cells.

    * ``tp, fp, fn`` -- the confusion matrix under the configured counting and mode;
    * ``C, S, D, I`` -- Makhoul's slot errors (one-to-one alignment); ``N = C+S+D``
      reference slots, ``M = C+S+I`` hypothesis slots;
    * ``tok_*``/``sep_*`` -- token and separator t-unit counts of the TS model,
      with ``tok_n``/``sep_n`` the number of t-units (so TN is defined).
    """

    tp: int = 0
    fp: int = 0
    fn: int = 0
    C: int = 0
    S: int = 0
    D: int = 0
    I: int = 0
    tok_tp: int = 0
    tok_fp: int = 0
    tok_fn: int = 0
    tok_n: int = 0
    sep_tp: int = 0
    sep_fp: int = 0
    sep_fn: int = 0
    sep_n: int = 0

    @property
    def N(self) -> int:
        """Reference slots: C + S + D."""
        return self.C + self.S + self.D

    @property
    def M(self) -> int:
        """Hypothesis slots: C + S + I."""
        return self.C + self.S + self.I

    def __add__(self, other: Counts) -> Counts:
        if not isinstance(other, Counts):
            return NotImplemented
        return Counts(*(getattr(self, f) + getattr(other, f) for f in FIELDS))

    def __radd__(self, other: object) -> Counts:
        if other == 0:  # sum() starts at 0
            return self
        return NotImplemented

    @classmethod
    def total(cls, items: Iterable[Counts]) -> Counts:
        out = cls()
        for c in items:
            out = out + c
        return out

    def to_dict(self) -> dict[str, int]:
        d = {k: int(v) for k, v in asdict(self).items()}
        d["N"], d["M"] = self.N, self.M
        return d


FIELDS = tuple(f.name for f in fields(Counts))
# the token & separator model's counts (iescore.ts): t-units, tokens and separators
TS_FIELDS = ("tok_tp", "tok_fp", "tok_fn", "tok_n", "sep_tp", "sep_fp", "sep_fn", "sep_n")
TS_CELL_FIELDS = tuple(f for f in TS_FIELDS if f not in ("tok_n", "sep_n"))  # t-units are per document


def ratio(num: float, den: float) -> float | None:
    """``num / den``, or ``None`` when ``den`` is 0."""
    return None if den == 0 else num / den


def precision(c: Counts) -> float | None:
    """TP / (TP + FP)."""
    return ratio(c.tp, c.tp + c.fp)


def recall(c: Counts) -> float | None:
    """TP / (TP + FN)."""
    return ratio(c.tp, c.tp + c.fn)


def f_beta(tp: float, fp: float, fn: float, beta: float = 1.0) -> float | None:
    """F_beta = (1+b^2)PR / (b^2 P + R), in count form (1+b^2)TP / ((1+b^2)TP + b^2 FN + FP).

    The count form equals the P/R form wherever both are defined, and is also
    defined (as 0) when TP = 0 but FP + FN > 0 -- as conlleval prints it.
    ``None`` only when TP = FP = FN = 0.
    """
    b2 = beta * beta
    return ratio((1 + b2) * tp, (1 + b2) * tp + b2 * fn + fp)


def f_alpha(p: float | None, r: float | None, alpha: float) -> float | None:
    """F_alpha = PR / ((1-a)P + aR) (van Rijsbergen / Makhoul eq. 6)."""
    if p is None or r is None:
        return None
    den = (1 - alpha) * p + alpha * r
    return None if den == 0 else p * r / den


def makhoul_e(c: Counts, alpha: float = 0.5) -> float | None:
    """E = (S + (1-a)D + aI) / ((1-a)N + aM) (Makhoul eq. 7) = 1 - F_alpha."""
    return ratio(c.S + (1 - alpha) * c.D + alpha * c.I, (1 - alpha) * c.N + alpha * c.M)


def muc_err(c: Counts) -> float | None:
    """MUC ERR = (S + D + I) / (C + S + D + I)."""
    return ratio(c.S + c.D + c.I, c.N + c.I)


def slot_error_rate(c: Counts, weights: Mapping[str, float] | None = None) -> float | None:
    """SER = (S + D + I) / N (may exceed 1); ``weights`` for S, D, I give the weighted SER."""
    w = weights or {}
    err = w.get("S", 1.0) * c.S + w.get("D", 1.0) * c.D + w.get("I", 1.0) * c.I
    return ratio(err, c.N)


def jaccard(c: Counts) -> float | None:
    """The Jaccard overlap TP / (TP + FP + FN): the matched items over the items of
    either side (the predictions and the answers, a matched pair counted once); ``None``
    when there is none (0/0). Equal to F1 / (2 - F1) wherever F1 is defined.

    >>> jaccard(Counts(tp=3, fp=1, fn=2)), jaccard(Counts())
    (0.5, None)
    """
    return ratio(c.tp, c.tp + c.fp + c.fn)


overlap_ratio = jaccard  # the same function: the definitions call this measure "overlap"


def _binary(tp: float, fp: float, fn: float, n: float, beta: float) -> dict[str, float | None]:
    tn = n - tp - fp - fn
    acc = ratio(tp + tn, n)
    # Cohen's kappa from the 2x2 table
    pe = ratio((tp + fp) * (tp + fn) + (fn + tn) * (fp + tn), n * n)
    kappa = None if acc is None or pe is None or pe == 1 else (acc - pe) / (1 - pe)
    return {
        "tp": tp,
        "fp": fp,
        "fn": fn,
        "tn": tn,
        "precision": ratio(tp, tp + fp),
        "recall": ratio(tp, tp + fn),
        "f1": f_beta(tp, fp, fn, 1.0),
        "f_beta": f_beta(tp, fp, fn, beta),
        "accuracy": acc,
        "fallout": ratio(fp, fp + tn),
        "kappa": kappa,
    }


def ts_measures(
    c: Counts, *, beta: float = 1.0, token_weight: float = 1.0, separator_weight: float = 1.0
) -> dict[str, dict[str, float | None]]:
    """Token & separator model measures (Esuli & Sebastiani 2010) of one label or a sum.

    Returns ``{"ts": ..., "tokens": ..., "separators": ...}``, each with tp/fp/fn/tn,
    precision, recall, f1 (always beta = 1), f_beta (the given ``beta``), accuracy,
    fallout and Cohen's kappa; the ``ts`` counts are the weighted sums of token and
    separator counts.

    Example (Esuli's fox, Concepts: token & separator model: TP 5, FP 2, FN 1; F1 = 10/13, F2 = 5TP/(5TP+4FN+FP) = 25/31):
        >>> m = ts_measures(Counts(tok_tp=4, tok_fp=1, tok_n=9, sep_tp=1, sep_fp=1, sep_fn=1, sep_n=8), beta=2)
        >>> round(m["ts"]["f1"], 4), round(m["ts"]["f_beta"], 4)
        (0.7692, 0.8065)
    """
    wt, ws = token_weight, separator_weight
    return {
        "ts": _binary(
            wt * c.tok_tp + ws * c.sep_tp,
            wt * c.tok_fp + ws * c.sep_fp,
            wt * c.tok_fn + ws * c.sep_fn,
            wt * c.tok_n + ws * c.sep_n,
            beta,
        ),
        "tokens": _binary(c.tok_tp, c.tok_fp, c.tok_fn, c.tok_n, beta),
        "separators": _binary(c.sep_tp, c.sep_fp, c.sep_fn, c.sep_n, beta),
    }


def measures(c: Counts, *, beta: float = 1.0) -> dict[str, float | None]:
    """The span measures of one count cell (or a sum of cells): ``f1`` is F1, ``f_beta``
    F_beta of the given ``beta`` (``e`` uses alpha = 1/(1+beta^2))."""
    alpha = 1.0 / (1.0 + beta * beta)
    return {
        "precision": precision(c),
        "recall": recall(c),
        "f1": f_beta(c.tp, c.fp, c.fn, 1.0),
        "f_beta": f_beta(c.tp, c.fp, c.fn, beta),
        "jaccard": jaccard(c),
        "ser": slot_error_rate(c),
        "err": muc_err(c),
        "e": makhoul_e(c, alpha),
    }


# --- the same measures over arrays of counts (one element per label) ------------------
# Each is the scalar formula above applied element-wise in the same order of operations,
# so every value is the same float; NaN marks an undefined value (the scalar's None).
# Counts are int64 or float64 arrays; int64 counts must stay below 2**53 (exact as floats).

_EXACT = 2**53


def _f(x: Any) -> np.ndarray:
    return np.asarray(x, dtype=np.float64)


def ratio_array(num: Any, den: Any) -> np.ndarray:
    """``num / den`` element-wise, NaN where ``den`` is 0 ([`ratio`][iescore.measures.ratio])."""
    num, den = np.broadcast_arrays(_f(num), _f(den))
    out = np.full(num.shape, np.nan)
    np.divide(num, den, out=out, where=den != 0)
    return out


def f_beta_array(tp: Any, fp: Any, fn: Any, beta: float = 1.0) -> np.ndarray:
    """[`f_beta`][iescore.measures.f_beta] element-wise."""
    b2 = beta * beta
    tp, fp, fn = _f(tp), _f(fp), _f(fn)
    return ratio_array((1 + b2) * tp, (1 + b2) * tp + b2 * fn + fp)


def span_arrays(tp: np.ndarray, fp: np.ndarray, fn: np.ndarray, beta: float) -> dict[str, np.ndarray]:
    """Precision, recall, F1, F_beta and the Jaccard overlap element-wise ([`precision`][iescore.measures.precision],
    [`recall`][iescore.measures.recall], [`f_beta`][iescore.measures.f_beta], [`jaccard`][iescore.measures.jaccard])."""
    return {
        "precision": ratio_array(tp, tp + fp),
        "recall": ratio_array(tp, tp + fn),
        "f1": f_beta_array(tp, fp, fn, 1.0),
        "f_beta": f_beta_array(tp, fp, fn, beta),
        "jaccard": ratio_array(tp, tp + fp + fn),
    }


def slot_arrays(C: np.ndarray, S: np.ndarray, D: np.ndarray, I: np.ndarray, alpha: float) -> dict[str, np.ndarray]:
    """SER, MUC ERR and Makhoul's E element-wise ([`slot_error_rate`][iescore.measures.slot_error_rate], [`muc_err`][iescore.measures.muc_err], [`makhoul_e`][iescore.measures.makhoul_e])."""
    N, M = C + S + D, C + S + I
    Sf, Df, If = _f(S), _f(D), _f(I)
    return {
        "ser": ratio_array(1.0 * Sf + 1.0 * Df + 1.0 * If, N),
        "err": ratio_array(S + D + I, N + I),
        "e": ratio_array(Sf + (1 - alpha) * Df + alpha * If, (1 - alpha) * _f(N) + alpha * _f(M)),
    }


BINARY_KEYS = ("tp", "fp", "fn", "tn", "precision", "recall", "f1", "f_beta", "accuracy", "fallout", "kappa")


def binary_arrays(tp: np.ndarray, fp: np.ndarray, fn: np.ndarray, n: np.ndarray, beta: float) -> dict[str, np.ndarray]:
    """The 2x2-table measures of [`ts_measures`][iescore.measures.ts_measures] element-wise, keys `BINARY_KEYS`
    (the counts keep their dtype: int64 counts stay integers, as the scalar's do)."""
    tn = n - tp - fp - fn
    with np.errstate(invalid="ignore", divide="ignore"):
        acc = ratio_array(tp + tn, n)
        pe = ratio_array(_f(tp + fp) * _f(tp + fn) + _f(fn + tn) * _f(fp + tn), _f(n) * _f(n))
        kappa = np.where(np.isnan(acc) | np.isnan(pe) | (pe == 1), np.nan, (acc - pe) / (1 - pe))
    out = {
        "tp": tp, "fp": fp, "fn": fn, "tn": tn,
        "precision": ratio_array(tp, tp + fp),
        "recall": ratio_array(tp, tp + fn),
        "f1": f_beta_array(tp, fp, fn, 1.0),
        "f_beta": f_beta_array(tp, fp, fn, beta),
        "accuracy": acc,
        "fallout": ratio_array(fp, fp + tn),
        "kappa": kappa,
    }
    if n.dtype.kind in "iu" and len(n):
        # Python's integer products are exact: where n * n (or a negative count) could
        # leave float64's exact integers, compute those rows with the scalar formulas
        odd = np.flatnonzero((n >= 94_906_265) | (np.minimum(np.minimum(tp, fp), np.minimum(fn, tn)) < 0))
        for k in odd.tolist():
            row = _binary(int(tp[k]), int(fp[k]), int(fn[k]), int(n[k]), beta)
            for key in BINARY_KEYS[4:]:
                v = row[key]
                out[key][k] = np.nan if v is None else v
    return out


def ts_arrays(cols: Mapping[str, np.ndarray], *, beta: float = 1.0, token_weight: float = 1.0,
              separator_weight: float = 1.0) -> dict[str, dict[str, np.ndarray]]:
    """[`ts_measures`][iescore.measures.ts_measures] element-wise, from the `TS_FIELDS` count columns."""
    wt, ws = token_weight, separator_weight

    def w(part: str) -> np.ndarray:
        return wt * _f(cols["tok_" + part]) + ws * _f(cols["sep_" + part])

    return {
        "ts": binary_arrays(w("tp"), w("fp"), w("fn"), w("n"), beta),
        "tokens": binary_arrays(cols["tok_tp"], cols["tok_fp"], cols["tok_fn"], cols["tok_n"], beta),
        "separators": binary_arrays(cols["sep_tp"], cols["sep_fp"], cols["sep_fn"], cols["sep_n"], beta),
    }
