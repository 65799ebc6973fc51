"""Statistics, after the report in the pipeline: drawing bootstrap resamples of documents
and the confidence intervals of every measure (percentile, BCa)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

import numpy as np

from ..errors import ConfigError, choices
from ..report import Report
from .table import METHODS, _measures, _point, _Table, _table, measure_names

__all__ = ['bootstrap', 'BootstrapResult', 'bootstrap_counts', 'all_resamples']

_CHUNK_CELLS = 4_000_000  # resamples x documents per chunk of the draw matrix


# --- drawing resamples --------------------------------------------------------------

def bootstrap_counts(n_docs: int, resamples: int, rng: np.random.Generator) -> np.ndarray:
    """``(resamples, n_docs)`` draw counts: each row draws ``n_docs`` documents uniformly
    with replacement (a multinomial row), as integer draws counted per row."""
    idx = rng.integers(0, n_docs, size=(resamples, n_docs))
    flat = idx + (np.arange(resamples) * n_docs)[:, None]
    return np.bincount(flat.ravel(), minlength=resamples * n_docs).reshape(resamples, n_docs)


def all_resamples(n_docs: int) -> tuple[np.ndarray, np.ndarray]:
    """Every distinct bootstrap resample of ``n_docs`` documents and its probability:
    ``(counts (k, n_docs), probabilities (k,))`` with multinomial weights
    ``n! / prod(c_i!) / n**n`` (for a handful of documents only).

    >>> c, p = all_resamples(2)
    >>> c.tolist(), p.tolist()
    ([[0, 2], [1, 1], [2, 0]], [0.25, 0.5, 0.25])
    """
    if n_docs > 8:
        raise ConfigError(f"all_resamples enumerates n**n draws; {n_docs} documents is too many (at most 8)")
    rows, probs = [], []
    for c in itertools.product(range(n_docs + 1), repeat=n_docs):
        if sum(c) == n_docs:
            rows.append(c)
            probs.append(math.factorial(n_docs) / math.prod(math.factorial(x) for x in c) / n_docs**n_docs)
    return np.array(rows, dtype=np.int64).reshape(-1, n_docs), np.array(probs)


def _chunks(resamples: int, width: int) -> list[tuple[int, int]]:
    """Row ranges of at most ``_CHUNK_CELLS`` cells of ``width`` each."""
    step = max(1, _CHUNK_CELLS // max(1, width))
    return [(a, min(resamples, a + step)) for a in range(0, resamples, step)]


def _signs(n_docs: int, resamples: int | str, rng: np.random.Generator, chunk: tuple[int, int]) -> np.ndarray:
    """Swap indicators of approximate randomization: random 0/1, or every one of the
    ``2**n_docs`` patterns (``resamples="all"``)."""
    a, b = chunk
    if resamples == "all":
        rows = np.arange(a, b, dtype=np.int64)[:, None]
        return ((rows >> np.arange(n_docs, dtype=np.int64)) & 1).astype(np.float64)
    return rng.integers(0, 2, size=(b - a, n_docs)).astype(np.float64)


# --- intervals ----------------------------------------------------------------------

def _interval(dist: np.ndarray, point: float | None, level: float, method: str,
              jack: np.ndarray | None) -> tuple[float, float] | None:
    """The ``level`` interval of a bootstrap distribution (NaN resamples left out):
    percentile (numpy's linear interpolation), or BCa (Efron 1987) with the bias from the
    share of resamples below the point (ties count half) and the acceleration from the
    leave-one-document-out jackknife ``jack``. A distribution of one value gives that
    point (all quantiles are equal; BCa's bias and acceleration are then 0)."""
    v = dist[~np.isnan(dist)]
    if len(v) == 0:
        return None
    lo_q, hi_q = (1 - level) / 2, 1 - (1 - level) / 2
    if method == "bca":
        if point is None:
            return None
        nd = NormalDist()
        share = (np.sum(v < point) + 0.5 * np.sum(v == point)) / len(v)
        share = min(max(share, 0.5 / len(v)), 1 - 0.5 / len(v))
        z0 = nd.inv_cdf(share)
        a = 0.0
        assert jack is not None
        j = jack[~np.isnan(jack)]
        if len(j) > 1:
            d = j.mean() - j
            den = 6 * float(np.sum(d * d)) ** 1.5
            a = float(np.sum(d * d * d)) / den if den > 0 else 0.0
        qs = []
        for q in (lo_q, hi_q):
            z = z0 + nd.inv_cdf(q)
            qs.append(nd.cdf(z0 + z / (1 - a * z)))
        lo_q, hi_q = qs
    lo, hi = np.quantile(v, [lo_q, hi_q])
    return float(lo), float(hi)


def _defined_quantiles(M: np.ndarray, qs: Sequence[float]) -> list[np.ndarray]:
    """Per ``q`` of ``qs``, each column's quantile of its defined (non-NaN) values, as
    ``np.quantile`` of those values computes it (linear interpolation: virtual index
    ``(n - 1) q``, the largest value from ``n - 1`` on, numpy's two-sided lerp), done for
    all columns at once; every column has a defined value and no -0.0. `_interval`
    is the plain path, one ``np.quantile`` per column."""
    S = np.sort(M, axis=0)  # NaN sorts last
    n = (~np.isnan(M)).sum(axis=0)
    cols = np.arange(M.shape[1])
    out = []
    for q in qs:
        v = (n - 1) * np.asarray(q, dtype=np.float64)
        top = v >= n - 1
        prev = np.where(top, -1.0, np.floor(v))  # numpy's index -1: the largest value
        i = np.where(top, n - 1, prev).astype(np.intp)
        j = np.where(top, n - 1, prev + 1).astype(np.intp)
        a, b, g = S[i, cols], S[j, cols], v - prev
        diff = b - a
        out.append(np.where(g >= 0.5, b - diff * (1 - g), a + diff * g))
    return out


def _intervals(dist: Mapping[str, np.ndarray], point: Mapping[str, float | None], level: float, method: str,
               jack: Mapping[str, np.ndarray]) -> dict[str, tuple[float, float] | None]:
    """`_interval` of every measure; the percentile intervals of the measures defined in
    every resample are taken in one call (the same numbers)."""
    out: dict[str, tuple[float, float] | None] = {}
    names = list(dist)
    if method == "percentile" and names:
        M = np.stack([dist[k] for k in names], axis=1)
        full = ~np.isnan(M).any(axis=0)
        qs = [(1 - level) / 2, 1 - (1 - level) / 2]
        if full.any():
            q = np.quantile(M[:, full], qs, axis=0)
            for c, k in enumerate(n for n, f in zip(names, full) if f):
                out[k] = (float(q[0, c]), float(q[1, c]))
        # the measures undefined in some resamples (with many labels, most per-label ones), at
        # once; one with a -0.0 among its values is left to _interval (sort and numpy's
        # partition may order -0.0 and 0.0 differently)
        some = np.flatnonzero(~full & ~np.isnan(M).all(axis=0) & ~((M == 0) & np.signbit(M)).any(axis=0))
        step = max(1, _CHUNK_CELLS // max(1, len(M)))
        for a in range(0, len(some), step):  # a block of columns at a time
            cols = some[a:a + step]
            lo, hi = (x.tolist() for x in _defined_quantiles(M[:, cols], qs))
            for c, j in enumerate(cols.tolist()):
                out[names[j]] = (lo[c], hi[c])
    for k in names:
        if k not in out:
            out[k] = _interval(dist[k], point[k], level, method, jack.get(k))
    return out


def _exact_dtype(tabs: Sequence[_Table], integer: bool) -> type:
    """float32 when every product of the tables' X with a draw or swap matrix is exact in
    it (``integer``, non-negative counts whose largest possible sum, documents x largest
    count, is below 2**24), else float64 (exact below 2**53)."""
    bounds = [t.bounds() for t in tabs]
    lo, hi = min(b[0] for b in bounds), max(b[1] for b in bounds)
    if integer and lo >= 0 and hi * tabs[0].n_docs < 2**24:
        return np.float32
    return np.float64


def _jackknife(tab: _Table, names: frozenset[str], mask: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """The measures of the leave-one-document-out samples (for BCa's acceleration)."""
    total = tab.total()
    out: dict[str, list[np.ndarray]] = {}
    for a, b in _chunks(tab.n_docs, tab.width):
        for k, v in _measures(total - tab.rows(a, b), tab, mask, names).items():
            out.setdefault(k, []).append(v)
    return {k: np.concatenate(v) for k, v in out.items()}


def _check_level(level: float, method: str) -> None:
    if not 0 < level < 1:
        raise ConfigError(f"level must be in (0, 1); got {level!r}")
    if method not in METHODS:
        raise ConfigError(f"unknown interval method {method!r}; choices: {choices(METHODS)}")


def _names(report: Report, measures: Sequence[str] | None) -> tuple[str, ...]:
    have = measure_names(report)
    if measures is None:
        return have
    for m in measures:
        if m not in have:
            raise ConfigError(f"unknown measure {m!r} for this report; choices: {choices(have)}")
    return tuple(measures)


@dataclass(frozen=True)
class BootstrapResult:
    """Bootstrap confidence intervals of a report's measures (plain data).

    ``values`` are the report's own numbers, ``intervals`` the ``(low, high)`` bounds
    (``None`` where no resample defines the measure); ``signature`` is the report's
    signature with the method, resamples, seed and level appended.
    """

    signature: str
    method: str
    resamples: int
    seed: int
    level: float
    values: Mapping[str, float | None]
    intervals: Mapping[str, tuple[float, float] | None]

    def to_dict(self) -> dict[str, Any]:
        return {
            "signature": self.signature, "method": self.method, "resamples": self.resamples,
            "seed": self.seed, "level": self.level, "values": dict(self.values),
            "intervals": {k: None if v is None else list(v) for k, v in self.intervals.items()},
        }


def _suffix(method: str, resamples: int | str, seed: int, level: float) -> str:
    return f"|ci:{method}|bs:{resamples}|seed:{seed}|level:{level:g}"


def bootstrap(report: Report, *, resamples: int = 1000, seed: int = 12345, method: str = "percentile",
              level: float = 0.95, measures: Sequence[str] | None = None) -> BootstrapResult:
    """Confidence intervals of ``report``'s measures by resampling its documents.

    ``measures``: names from [`measure_names`][iescore.stats.table.measure_names] (all by default); ``method``:
    ``"percentile"`` or ``"bca"``. The resamples are drawn from
    ``numpy.random.default_rng(seed)``, so the same seed gives the same intervals.
    """
    _check_level(level, method)
    if resamples < 1:
        raise ConfigError(f"resamples must be at least 1; got {resamples!r}")
    names = _names(report, measures)
    wanted = frozenset(names)
    tab = _table(report)
    rng = np.random.default_rng(seed)
    dt = _exact_dtype([tab], report.ts_cells is None)
    dist: dict[str, list[np.ndarray]] = {k: [] for k in names}
    # drawn in chunks of _CHUNK_CELLS draws (the chunks fix what a seed draws), summed a few
    # rows at a time (a row of sums is as wide as the table)
    for a, b in _chunks(resamples, tab.n_docs):
        W: np.ndarray = bootstrap_counts(tab.n_docs, b - a, rng).astype(dt)
        for c, d in _chunks(b - a, tab.width):
            for k, v in _measures(tab.sums(W[c:d]).astype(np.float64), tab, only=wanted).items():
                dist[k].append(v)
    point = _point(report)
    jack = _jackknife(tab, wanted) if method == "bca" else {}
    intervals = _intervals({k: np.concatenate(dist[k]) for k in names}, point, level, method, jack)
    return BootstrapResult(
        signature=report.signature + _suffix(method, resamples, seed, level), method=method,
        resamples=resamples, seed=seed, level=level, values={k: point[k] for k in names}, intervals=intervals,
    )
