"""Statistics, after the report in the pipeline: paired significance tests between systems
on one reference: approximate randomization and the centred paired bootstrap,
Holm-Bonferroni, significance groups."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import ConfigError, InputError, choices
from ..render import notebook
from ..report import Report
from .resample import (
    _check_level,
    _chunks,
    _exact_dtype,
    _intervals,
    _jackknife,
    _names,
    _signs,
    bootstrap_counts,
)
from .table import TEST_NAMES, TESTS, _measures, _point, _table

__all__ = ['compare', 'Comparison', 'holm']


# --- paired tests -------------------------------------------------------------------

def holm(p: Sequence[float | None]) -> list[float | None]:
    """Holm-Bonferroni adjusted p-values (``None`` stays ``None`` and is not counted):
    the i-th smallest of m is ``max_{j<=i} min(1, (m - j + 1) p_(j))`` (j from 1).

    >>> holm([0.01, 0.04, 0.03, None])
    [0.03, 0.06, 0.06, None]
    """
    idx = sorted((i for i, x in enumerate(p) if x is not None), key=lambda i: p[i])  # type: ignore[arg-type, return-value]
    m = len(idx)
    out: list[float | None] = [None] * len(p)
    run = 0.0
    for j, i in enumerate(idx):
        run = max(run, min(1.0, (m - j) * p[i]))  # type: ignore[operator]
        out[i] = run
    return out


def _p_value(extreme: np.ndarray, total: int, exact: bool) -> float:
    """(#extreme + 1) / (R + 1), or #extreme / R when every resample was enumerated."""
    c = int(np.sum(extreme))
    return c / total if exact else (c + 1) / (total + 1)


@dataclass(frozen=True)
class Comparison:
    """Systems scored on the same reference, compared with a baseline (plain data).

    ``systems``: one row per system (input order) with every measure, its interval
    (``<measure>_ci``), ``p_value`` of the paired test of ``measure`` against the
    baseline (``None`` for the baseline), ``p_value_holm`` (Holm-Bonferroni over the
    systems compared with the baseline), ``significant`` (adjusted p < ``alpha``) and
    ``group`` (1 = the best group; systems of a group are not significantly different
    from the group's first system: unadjusted paired test at ``alpha``). ``pairwise``:
    the raw p-value of every pair tested (``"a vs b"``). ``test``: ``"ar"`` or ``"bs"``;
    ``test_name`` says what it computes.
    """

    signature: str
    test: str
    resamples: int | str
    seed: int
    baseline: str
    measure: str
    method: str
    level: float
    alpha: float
    measures: tuple[str, ...]
    systems: tuple[Mapping[str, Any], ...]
    correction: str = "holm"
    pairwise: Mapping[str, float | None] = field(default_factory=dict)

    @property
    def test_name(self) -> str:
        """What the paired test computes, e.g. "approximate randomization (Riezler & Maxwell 2005)"."""
        return TEST_NAMES[self.test]

    def to_dict(self) -> dict[str, Any]:
        return {
            "signature": self.signature, "resamples": self.resamples, "seed": self.seed,
            "baseline": self.baseline, "test": self.test, "test_name": self.test_name, "measure": self.measure,
            "correction": self.correction, "ci": self.method, "level": self.level, "alpha": self.alpha,
            "systems": [dict(s) for s in self.systems],
        }

    def _repr_html_(self) -> str:
        """The compact HTML table a notebook shows (`iescore.render.notebook.comparison_html`), the signature under it."""
        return notebook.comparison_html(self)

    def to_pandas(self) -> Any:
        """A pandas DataFrame (`iescore.render.notebook.comparison_frame`: one row per system); ``attrs["signature"]``
        is the signature. Needs pandas (``pip install pandas``)."""
        return notebook.comparison_frame(self)

    def to_html(self, path: str | os.PathLike[str], *, title: str = "iescore comparison") -> int:
        """Write the compact table of `_repr_html_` as a whole HTML page (UTF-8, atomically);
        the file's size in bytes."""
        return notebook.write_table_html(notebook.comparison_html(self), path, title)


def _same_reference(reports: Mapping[str, Report]) -> None:
    items = list(reports.items())
    name0, r0 = items[0]
    for name, r in items[1:]:
        if r.signature != r0.signature:
            raise InputError(
                f"system {name!r} was not scored like {name0!r} on the same reference: "
                f"signature {r.signature!r} vs {r0.signature!r}"
            )
        if len(r.doc_ids) != len(r0.doc_ids):  # the signature's reference digest covers the rest
            raise InputError(f"system {name!r} has {len(r.doc_ids)} documents, {name0!r} {len(r0.doc_ids)}; "
                             "paired tests need the same documents")


def compare(reports: Mapping[str, Report], *, baseline: str | None = None, test: str = "ar",
            resamples: int | str = 1000, seed: int = 12345, measures: Sequence[str] | None = None,
            measure: str = "f1", method: str = "percentile", level: float = 0.95,
            alpha: float = 0.05) -> Comparison:
    """Paired comparison of systems scored on the same reference documents.

    ``reports``: name -> report (same configuration and reference, so the same
    signature); ``baseline``: a name (the first by default); ``test``: ``"ar"``,
    approximate randomization (Riezler & Maxwell 2005: each document's counts swapped
    between the two systems with probability 1/2, ``p = (1 + #{|d*| >= |d|}) / (R + 1)``;
    ``resamples="all"`` enumerates every swap, for a few documents), or ``"bs"``, the
    paired bootstrap, centred (Efron & Tibshirani 1993, section 16.4: documents drawn with
    replacement, the same draws for both systems, ``d* = m_a* - m_b*`` signed,
    ``p = (1 + #{|d* - mean(d*)| >= |d|}) / (R + 1)``), where ``d`` is the observed
    difference; under no difference both reject at ``alpha`` in about ``alpha`` of
    data sets, the randomization test a little more closely (the default);
    ``measure``: the one tested; ``measures``: those shown with intervals (``measure``
    first, then precision and recall by default). Intervals always come from the paired
    bootstrap resamples.

    Example (a system compared with itself: p = 1):
        >>> import iescore
        >>> r = iescore.score_tags(reference=[["B-PER"], ["B-LOC"]], prediction=[["B-PER"], ["O"]])
        >>> c = compare({"a": r, "b": r}, resamples=50, seed=3)
        >>> c.systems[1]["p_value"], c.systems[1]["f1_ci"] == c.systems[0]["f1_ci"]
        (1.0, True)
    """
    if test not in TESTS:
        raise ConfigError(f"unknown paired test {test!r}; choices: {choices(TESTS)}")
    _check_level(level, method)
    if not reports:
        raise ConfigError("compare needs at least one system")
    names = list(reports)
    baseline = names[0] if baseline is None else baseline
    if baseline not in reports:
        raise ConfigError(f"unknown baseline {baseline!r}; systems: {choices(names)}")
    exact = resamples == "all"
    if exact and test != "ar":
        raise ConfigError("resamples='all' (every swap) is for test='ar'")
    if not exact and (not isinstance(resamples, int) or resamples < 1):
        raise ConfigError(f"resamples must be a positive integer or 'all'; got {resamples!r}")
    _same_reference(reports)
    shown = tuple(dict.fromkeys([measure] + list(measures if measures is not None else ("precision", "recall"))))
    for r in reports.values():
        _names(r, shown)
    labels = tuple(sorted(set().union(*(r.labels for r in reports.values()))))
    tabs = [_table(reports[n], labels) for n in names]
    if any(dict(t.blocks) != dict(tabs[0].blocks) for t in tabs):
        raise InputError("the systems' reports count different fields; they cannot be compared")
    masks = [np.isin(labels, reports[n].labels) for n in names]
    K, D = tabs[0].n_columns, tabs[0].n_docs
    width = sum(t.width for t in tabs)
    dt = _exact_dtype(tabs, all(r.ts_cells is None for r in reports.values()))
    wanted = frozenset(shown)
    n_bs = 1000 if exact else int(resamples)
    rng = np.random.default_rng(seed)
    dist: list[dict[str, list[np.ndarray]]] = [{k: [] for k in shown} for _ in names]
    for a, b in _chunks(n_bs, D):  # drawn as bootstrap() draws, summed a few rows at a time
        W: np.ndarray = bootstrap_counts(D, b - a, rng).astype(dt)
        for c, d in _chunks(b - a, width):
            for s, t in enumerate(tabs):
                for k, v in _measures(t.sums(W[c:d]).astype(np.float64), t, masks[s], wanted).items():
                    dist[s][k].append(v)
    dists = [{k: np.concatenate(v) for k, v in d.items()} for d in dist]
    points = [_point(reports[n]) for n in names]
    jack = [_jackknife(t, wanted, masks[s]) if method == "bca" else {} for s, t in enumerate(tabs)]

    # paired tests of `measure`, computed for the pairs asked (the baseline's, the groups')
    S = len(names)
    if test == "ar":
        n_ar = 2 ** D if exact else int(resamples)
        if exact and D > 20:
            raise ConfigError(f"resamples='all' enumerates 2**documents swaps; {D} documents is too many (at most 20)")
        T = np.concatenate([t.total() for t in tabs])
        # swapped sums of every system, one block per chunk of shuffles (all pairs share the swaps)
        swapped = []
        for a, b in _chunks(n_ar, D):
            W = _signs(D, resamples, rng, (a, b)).astype(dt)
            swapped += [np.concatenate([t.sums(W[c:d]).astype(np.float64) for t in tabs], axis=1)
                        for c, d in _chunks(b - a, width)]
    one = frozenset([measure])
    p_pair: dict[tuple[int, int], float | None] = {}

    def pv(i: int, j: int) -> float | None:
        """The p-value of the paired test of systems ``i`` and ``j``."""
        if i == j:
            return 1.0
        i, j = min(i, j), max(i, j)
        if (i, j) in p_pair:
            return p_pair[(i, j)]
        pi, pj = points[i][measure], points[j][measure]
        if pi is None or pj is None:
            p_pair[(i, j)] = None
            return None
        obs = abs(pi - pj)
        if test == "bs":
            # centred: the resampled differences spread around their own mean as the observed
            # difference would spread around 0 if the systems were alike
            d = dists[i][measure] - dists[j][measure]
            stat = np.abs(d - np.nanmean(d)) if (~np.isnan(d)).any() else d
            p_pair[(i, j)] = _p_value(np.isnan(stat) | (stat >= obs), n_bs, False)
        else:
            si, sj = slice(i * K, (i + 1) * K), slice(j * K, (j + 1) * K)
            m = masks[i] | masks[j]
            hits = 0
            for SX in swapped:
                swap = SX[:, sj] - SX[:, si]  # system i takes j's counts where swapped
                ma = _measures(T[si] + swap, tabs[i], m, one)[measure]
                mb = _measures(T[sj] - swap, tabs[j], m, one)[measure]
                d = np.abs(ma - mb)
                hits += int(np.sum(np.isnan(d) | (d >= obs)))
            p_pair[(i, j)] = hits / n_ar if exact else (hits + 1) / (n_ar + 1)
        return p_pair[(i, j)]

    b0 = names.index(baseline)
    raw = [None if s == b0 else pv(s, b0) for s in range(S)]
    adj = holm(raw)

    # groups: best first; join the current group unless the (unadjusted) paired test finds the
    # system different from the group's first system
    order = sorted(range(S), key=lambda s: (points[s][measure] is None, -(points[s][measure] or 0.0), s))
    group = [0] * S
    g, leader = 0, None
    for s in order:
        p_lead = None if leader is None else pv(s, leader)
        if leader is None or (p_lead is not None and p_lead < alpha):
            g, leader = g + 1, s
        group[s] = g

    rows = []
    for s, n in enumerate(names):
        row: dict[str, Any] = {"name": n}
        ivs = _intervals(dists[s], points[s], level, method, jack[s])
        for k in shown:
            row[k] = points[s][k]
            iv = ivs[k]
            row[f"{k}_ci"] = None if iv is None else list(iv)
        row["p_value"] = raw[s]
        row["p_value_holm"] = p_holm = adj[s]
        row["significant"] = None if p_holm is None else p_holm < alpha
        row["group"] = group[s]
        rows.append(row)
    sig = reports[baseline].signature + f"|test:{test}|n:{resamples}|seed:{seed}|measure:{measure}" \
        + f"|ci:{method}|level:{level:g}|correction:holm"
    return Comparison(
        signature=sig, test=test, resamples=resamples, seed=seed, baseline=baseline, measure=measure,
        method=method, level=level, alpha=alpha, measures=shown, systems=tuple(rows),
        pairwise={f"{names[i]} vs {names[j]}": p for (i, j), p in sorted(p_pair.items())},
    )
