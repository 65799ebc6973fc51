"""Statistics, after the report in the pipeline: aggregation of any measure over cross-
validation folds: mean, standard deviation, Student-t interval (clipped to the measure's
range)."""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigError, choices
from ..report import Report
from .table import _AVG_MEASURES, _point

__all__ = ['folds', 'FoldSummary', 't_quantile', 'measure_range', 'aggregate']

# the range of each measure (its name without the average's prefix and the label's suffix)
_UNIT = (0.0, 1.0)
_RANGES: dict[str, tuple[float, float | None]] = {
    **{m: _UNIT for m in _AVG_MEASURES + ("f1_of_macro_pr", "err", "e", "token_accuracy", "token_accuracy_non_o")},
    "ser": (0.0, None), "ser_weighted": (0.0, None),  # S + D + I may exceed N
    "ts_kappa_macro": (-1.0, 1.0),  # Cohen's kappa of a 2x2 table
}
_BASE = re.compile(r"^(?:micro_|macro_|weighted_)?(.*?)(?:\[.*\])?$", re.S)


# --- cross-validation folds -----------------------------------------------------------

def t_quantile(q: float, df: int) -> float:
    """The ``q`` quantile of Student's t with ``df`` (a positive integer) degrees of freedom
    (scipy's ``stdtrit``, what ``scipy.stats.t.ppf`` computes; imported on the first call,
    as ``scipy.special`` would add a fifth of a second to ``import iescore``).

    >>> round(t_quantile(0.975, 1), 4), round(t_quantile(0.975, 4), 4), round(t_quantile(0.025, 9), 4)
    (12.7062, 2.7764, -2.2622)
    """
    if df < 1 or int(df) != df:
        raise ConfigError(f"degrees of freedom must be a positive integer; got {df!r}")
    if not 0 < q < 1:
        raise ConfigError(f"quantile must be in (0, 1); got {q!r}")
    from scipy.special import stdtrit

    return float(stdtrit(int(df), q))


def measure_range(name: str) -> tuple[float, float | None] | None:
    """The values a measure of [`measure_names`][iescore.stats.table.measure_names] can take,
    ``(low, high)`` (``high`` None: no bound above), or None where it is not known.

    >>> measure_range("macro_jaccard"), measure_range("f1[PER]"), measure_range("ser"), measure_range("ts_kappa_macro")
    ((0.0, 1.0), (0.0, 1.0), (0.0, None), (-1.0, 1.0))
    """
    m = _BASE.match(name)
    base = m.group(1) if m else name
    if base in _RANGES:
        return _RANGES[base]
    if base.startswith("ts_"):  # the token & separator model's F1, F_beta, accuracy
        return _UNIT
    return None


@dataclass(frozen=True)
class FoldSummary:
    """Measures across folds: per measure the mean, the sample standard deviation (``n - 1``
    in the denominator), the number ``n`` of folds where it is defined, the Student-t
    interval of the mean ``ci = mean -+ t(level, n-1) sd / sqrt(n)`` (``None`` with fewer
    than two folds), each fold's value (``values``, None where undefined) and ``clipped``:
    whether ``ci`` was cut to the measure's range (``measure_range``:
    P, R, F, the Jaccard overlap, ERR and E lie in [0, 1], SER is at least 0), as a
    t-interval of a bounded measure can reach past its bounds; ``None`` without an interval."""

    signature: str
    folds: int
    level: float
    stats: Mapping[str, Mapping[str, Any]]

    def to_dict(self) -> dict[str, Any]:
        return {"signature": self.signature, "folds": self.folds, "level": self.level,
                "measures": {k: dict(v) for k, v in self.stats.items()}}


def folds(reports: Sequence[Report], *, measures: Sequence[str] | None = None, level: float = 0.95) -> FoldSummary:
    """Aggregate any measure over cross-validation folds (or splits) scored alike.

    ``measures``: names from [`measure_names`][iescore.stats.table.measure_names] (every name of any fold by default:
    per label, micro/macro/weighted, slot errors, TS, token accuracy). A fold where a
    measure is undefined (or absent: a label the fold lacks) is left out of its mean.
    The interval is clipped to the measure's range and says so (``clipped``).

    Example (F1 2/3 and 1 in two folds: mean 5/6, sd sqrt(2 (1/6)**2 / 1) = sqrt(1/18)):
        >>> import iescore
        >>> a = iescore.score_tags(reference=[["B-PER", "B-LOC"]], prediction=[["B-PER", "O"]])
        >>> b = iescore.score_tags(reference=[["B-PER"]], prediction=[["B-PER"]])
        >>> s = folds([a, b], measures=["f1", "f1[LOC]"]).stats
        >>> s["f1"]["mean"], round(s["f1"]["sd"], 6), s["f1[LOC]"]["n"]
        (0.8333333333333333, 0.235702, 1)
    """
    if not reports:
        raise ConfigError("folds needs at least one report")
    if not 0 < level < 1:
        raise ConfigError(f"level must be in (0, 1); got {level!r}")
    cfg = reports[0].config
    for k, r in enumerate(reports):
        if r.config != cfg:
            raise ConfigError(f"fold #{k} was scored with {r.config.signature()!r}, fold #0 with {cfg.signature()!r}")
    points = [_point(r) for r in reports]
    names = list(measures) if measures is not None else list(dict.fromkeys(k for p in points for k in p))
    known = set().union(*points)
    for m in names:
        if m not in known:
            raise ConfigError(f"unknown measure {m!r}; choices: {choices(sorted(known))}")
    out: dict[str, dict[str, Any]] = {}
    for m in names:
        vals = [v for p in points if (v := p.get(m)) is not None]
        n = len(vals)
        mean = sum(vals) / n if n else None
        sd = math.sqrt(sum((v - mean) ** 2 for v in vals) / (n - 1)) if n > 1 and mean is not None else None
        ci, clipped = None, None
        if sd is not None and mean is not None:
            h = t_quantile(1 - (1 - level) / 2, n - 1) * sd / math.sqrt(n)
            ci, clipped = _clip(m, mean - h, mean + h)
        out[m] = {"mean": mean, "sd": sd, "n": n, "ci": ci, "clipped": clipped, "values": [p.get(m) for p in points]}
    sig = cfg.signature() + f"|folds:{len(reports)}|ci:t|level:{level:g}"
    return FoldSummary(signature=sig, folds=len(reports), level=level, stats=out)


def _clip(name: str, lo: float, hi: float) -> tuple[list[float], bool]:
    """``[lo, hi]`` cut to the range of measure ``name``, and whether it was cut."""
    r = measure_range(name)
    if r is None:
        return [lo, hi], False
    a, b = max(lo, r[0]), hi if r[1] is None else min(hi, r[1])
    return [a, b], (a, b) != (lo, hi)


def aggregate(reports: Sequence[Report], keys: Sequence[str] = ("precision", "recall", "f1", "ser")
              ) -> dict[str, dict[str, float | None]]:
    """Deprecated: [`folds`][iescore.stats.folds.folds] gives these and every other measure.

    The mean, sample standard deviation and number of folds of the overall (micro)
    measures ``keys`` (``precision``, ``recall``, ``f1``, ``f_beta``, ``jaccard``: their
    micro average; ``ser``, ``err``, ``e``: the slot errors, None where not counted), as
    ``{key: {"mean", "std", "n"}}``: ``folds(reports)`` under the names ``micro_f1``, ...
    """
    warnings.warn("iescore.aggregate is deprecated: iescore.stats.folds(reports) gives the mean, the "
                  "standard deviation ('sd') and a Student-t interval of every measure (micro averages "
                  "as 'micro_f1', ...)", DeprecationWarning, stacklevel=2)
    names = {k: f"micro_{k}" if k in _AVG_MEASURES else k for k in keys}
    known = set(_point(reports[0])) if reports else set()
    asked = [n for k, n in names.items() if n in known or k not in ("ser", "err", "e")]
    got = folds(reports, measures=asked).stats if reports else {}
    out: dict[str, dict[str, float | None]] = {}
    for k, n in names.items():
        s = got.get(n)
        out[k] = {"mean": None, "std": None, "n": 0} if s is None else {"mean": s["mean"], "std": s["sd"], "n": s["n"]}
    return out
