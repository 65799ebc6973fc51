"""Statistics, after the report in the pipeline: aggregation of any measure over cross-
validation folds: mean, standard deviation, Student-t interval."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigError, choices
from ..report import Report
from .table import _point

__all__ = ['folds', 'FoldSummary', 't_quantile']


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


@dataclass(frozen=True)
class FoldSummary:
    """Measures across folds: per measure the mean, the sample standard deviation, the
    number of folds where it is defined and the Student-t interval of the mean
    ``mean -+ t(level, n-1) sd / sqrt(n)`` (``None`` with fewer than two folds)."""

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
        ci = None
        if sd is not None and mean is not None:
            h = t_quantile(1 - (1 - level) / 2, n - 1) * sd / math.sqrt(n)
            ci = [mean - h, mean + h]
        out[m] = {"mean": mean, "sd": sd, "n": n, "ci": ci, "values": [p.get(m) for p in points]}
    sig = cfg.signature() + f"|folds:{len(reports)}|ci:t|level:{level:g}"
    return FoldSummary(signature=sig, folds=len(reports), level=level, stats=out)
