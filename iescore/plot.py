"""Views of the pipeline's results as figures (after report and statistics): rank bump
charts, per-label precision/recall, the confusion heatmap, interval (forest) plots and
the precision-recall curve over confidence thresholds.

matplotlib is the optional extra ``plot`` (``pip install 'iescore[plot]'``), imported
only when a function here draws. Every function takes plain data (what
[`Report.to_dict`][iescore.report.Report.to_dict], `to_dict` and rank tables hold),
draws on ``ax`` when given (else on a new figure sized for the data) and returns the
figure. The figures are meant to stay readable with thirty or more systems: names are
written beside the lines (no legend to match colours against), few colours are used and
only for what matters (the systems that move most, the significance groups).

Example:
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> fig = rank_bump({"F1": {"a": 1, "b": 2, "c": 3}, "SER": {"a": 3, "b": 1, "c": 2}}, movers=1)
    >>> [t.get_text() for t in fig.axes[0].texts][:3]
    ['1 a', 'a 3', '2 b']
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["rank_bump", "per_label_pr", "confusion_heatmap", "forest", "threshold_curve"]

_HIGHLIGHT = ("#d62728", "#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf")
_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")


def _plt() -> Any:
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        from .errors import ConfigError

        raise ConfigError("iescore.plot needs matplotlib: pip install 'iescore[plot]'") from None
    return plt


def _figure(ax: Any, size: tuple[float, float]) -> tuple[Any, Any]:
    if ax is not None:
        return ax.figure, ax
    fig, ax = _plt().subplots(figsize=size)
    return fig, ax


def rank_bump(ranks: Mapping[str, Mapping[str, float]], *, movers: int = 6, ax: Any = None,
              title: str | None = None, short: Any = None) -> Any:
    """A bump chart: one column per evaluation model (in the mapping's order), one line per
    system through its ranks (1 = best, on top), each system's name written at both ends.
    The ``movers`` systems whose rank spans the most places are drawn in colour and bold;
    the others in grey. ``ranks[model][system]``; every model must rank the same systems.
    ``short`` maps a system's name to the label written (default: the name itself)."""
    plt = _plt()
    models = list(ranks)
    systems = list(ranks[models[0]])
    for m in models:
        if set(ranks[m]) != set(systems):
            from .errors import InputError

            raise InputError(f"rank_bump: model {m!r} ranks other systems than {models[0]!r}")
    name = short or (lambda s: s)
    span = {s: max(ranks[m][s] for m in models) - min(ranks[m][s] for m in models) for s in systems}
    moved = [s for s in sorted(systems, key=lambda s: (-span[s], systems.index(s))) if span[s] > 0][:movers]
    colour = {s: _HIGHLIGHT[k % len(_HIGHLIGHT)] for k, s in enumerate(moved)}
    n = len(systems)
    label_in = 0.062 * max(len(str(name(s))) for s in systems) + 0.35  # a name's width, in inches
    width = 1.5 * len(models) + 2 * label_in + 0.5
    fig, ax = _figure(ax, (width, max(4.0, 0.24 * n + 1.8)))
    xs = range(len(models))
    for s in systems:
        ys = [ranks[m][s] for m in models]
        hot = s in colour
        c = colour.get(s, "0.72")
        ax.plot(xs, ys, color=c, lw=2.4 if hot else 1.0, marker="o", ms=4 if hot else 2.5, zorder=3 if hot else 2)
        for x, y, ha, dx in ((0, ys[0], "right", -8), (len(models) - 1, ys[-1], "left", 8)):
            ax.annotate(f"{y:g} {name(s)}" if ha == "right" else f"{name(s)} {y:g}", (x, y), xytext=(dx, 0),
                        textcoords="offset points", ha=ha, va="center", fontsize=7.5,
                        color=c if hot else "0.35", fontweight="bold" if hot else "normal")
    ax.set_xticks(list(xs), models, rotation=20, ha="right")
    ax.set_ylim(n + 0.7, 0.3)
    ax.set_yticks([])
    ax.set_xlim(-0.1, len(models) - 0.9)
    ax.grid(axis="x", alpha=0.3)
    for spine in ("top", "right", "left"):
        ax.spines[spine].set_visible(False)
    if title:
        ax.set_title(title)
    note = f"rank among {n} systems, 1 (best) on top"
    if moved:
        note += f"; in colour: the {len(moved)} systems whose rank moves most"
    fig.text(0.01, 0.01, note, fontsize=8, va="bottom")
    if ax is fig.axes[0] and len(fig.axes) == 1:
        fig.subplots_adjust(left=label_in / width, right=1 - label_in / width, bottom=0.9 / fig.get_figheight() + 0.06,
                            top=1 - 0.5 / fig.get_figheight())
    return fig


def per_label_pr(per_system: Mapping[str, Mapping[str, Mapping[str, float | None]]], *, ax: Any = None,
                 title: str | None = None, iso_f1: Sequence[float] = (0.6, 0.7, 0.8, 0.9)) -> Any:
    """Precision against recall: one point per system and label (``per_system[system][label]``
    holds ``precision`` and ``recall``, as ``Report.to_dict()["per_label"]`` does), a colour
    and marker per label with a legend, and dotted curves of equal F1. Undefined values are
    left out."""
    plt = _plt()
    labels = sorted({lab for v in per_system.values() for lab in v})
    fig, ax = _figure(ax, (7.0, 6.0))
    import numpy as np

    for f in iso_f1:
        r = np.linspace(f / (2 - f) + 1e-6, 1, 200)
        ax.plot(r, f * r / (2 * r - f), ls=":", color="0.6", lw=0.8)
        ax.annotate(f"F1={f:g}", (1.0, f / (2 - f)), fontsize=7, color="0.45", ha="right", va="bottom")
    cmap = plt.get_cmap("tab10")
    lo = 1.0
    for k, lab in enumerate(labels):
        pts: list[tuple[float, float]] = []  # (recall, precision) where both are defined
        for v in per_system.values():
            e = v.get(lab)
            rec, prec = (e.get("recall"), e.get("precision")) if e else (None, None)
            if rec is not None and prec is not None:
                pts.append((rec, prec))
        if pts:
            lo = min(lo, *(min(p) for p in pts))
        ax.scatter([p[0] for p in pts], [p[1] for p in pts], s=22, color=cmap(k % 10), marker=_MARKERS[k % len(_MARKERS)],
                   label=f"{lab} ({len(pts)} systems)", alpha=0.8, edgecolors="none")
    lo = max(0.0, math.floor(lo * 20) / 20 - 0.05)
    ax.set_xlim(lo, 1.0)
    ax.set_ylim(lo, 1.0)
    ax.set_xlabel("recall")
    ax.set_ylabel("precision")
    ax.set_aspect("equal")
    ax.grid(alpha=0.3)
    ax.legend(title="label", loc="lower left", fontsize=8)
    if title:
        ax.set_title(title)
    return fig


def confusion_heatmap(confusion: Any, labels: Sequence[str] | None = None, *, ax: Any = None,
                      title: str | None = None) -> Any:
    """The confusion table as a heatmap: reference labels in rows, predicted labels in
    columns, ``none`` last (missed items in its column, spurious ones in its row); a log
    colour scale, every count written in its cell. ``confusion`` is a [`Report`][iescore.report.Report]
    (its ``confusion`` and ``labels``) or a square array with ``labels`` (without "none")."""
    import numpy as np
    from matplotlib.colors import LogNorm

    if labels is None:
        labels, confusion = confusion.labels, confusion.confusion
    m = np.asarray(confusion, dtype=float)
    names = list(labels) + ["none"]
    if m.shape != (len(names), len(names)):
        from .errors import InputError

        raise InputError(f"confusion_heatmap: a {m.shape} table for {len(names)} rows and columns (labels + none)")
    side = max(4.0, 0.6 * len(names) + 2)
    fig, ax = _figure(ax, (side + 1, side))
    shown = np.where(m > 0, m, np.nan)
    top = max(float(np.nanmax(shown)) if np.isfinite(shown).any() else 1.0, 1.0)
    im = ax.imshow(shown, cmap="RdPu", norm=LogNorm(vmin=1, vmax=max(top, 2)))
    for i in range(len(names)):
        for j in range(len(names)):
            v = int(m[i, j])
            dark = v > 0 and math.log(v) > 0.6 * math.log(max(top, 2))
            ax.text(j, i, str(v), ha="center", va="center", fontsize=8, color="white" if dark else "black")
    ax.set_xticks(range(len(names)), names, rotation=45, ha="right")
    ax.set_yticks(range(len(names)), names)
    ax.set_xlabel("prediction")
    ax.set_ylabel("reference")
    fig.colorbar(im, ax=ax, shrink=0.8, label="aligned items (log scale)")
    if title:
        ax.set_title(title)
    return fig


def forest(comparison: Any, *, ax: Any = None, title: str | None = None, short: Any = None) -> Any:
    """An interval (forest) plot of compared systems: a row per system sorted by the measure
    (best on top), its interval as a line and its value as a dot, coloured by significance
    group and labelled ``G<k>`` at the right, every other group on a grey band; the dashed
    line is the best system's value. ``comparison`` is a [`Comparison`][iescore.stats.Comparison]
    or its ``to_dict()``."""
    plt = _plt()
    c = comparison.to_dict() if hasattr(comparison, "to_dict") else comparison
    m = c["measure"]
    rows = sorted(c["systems"], key=lambda r: -r[m])
    name = short or (lambda s: s)
    fig, ax = _figure(ax, (8.0, 1.2 + 0.3 * len(rows)))
    cmap = plt.get_cmap("tab10")
    for y, r in enumerate(rows):
        if r["group"] % 2 == 0:  # every other group on a grey band: the groups' bounds
            ax.axhspan(y - 0.5, y + 0.5, color="0.92", zorder=0, lw=0)
        lo, hi = r[m + "_ci"]
        col = cmap((r["group"] - 1) % 10)
        ax.hlines(y, lo, hi, color=col, lw=2)
        ax.plot(r[m], y, "o", color=col, ms=5)
        ax.annotate(f"G{r['group']}", (hi, y), xytext=(4, 0), textcoords="offset points", va="center",
                    fontsize=7, color=col)
    ax.axvline(rows[0][m], color="grey", ls="--", lw=0.8)
    ax.set_yticks(range(len(rows)), [name(r["name"]) for r in rows], fontsize=7)
    ax.set_ylim(len(rows) - 0.5, -0.5)
    lo = min(r[m + "_ci"][0] for r in rows)
    hi = max(r[m + "_ci"][1] for r in rows)
    ax.set_xlim(lo - 0.01, hi + 0.03)  # room for the group labels
    ax.set_xlabel(f"{m}: value and {100 * c['level']:g}% interval ({c['resamples']} paired resamples)")
    ax.grid(axis="x", alpha=0.3)
    ax.set_title(title or "groups G1, G2 ... (G1: not significantly different from the best)", fontsize=9)
    return fig


def threshold_curve(curve: Any, *, ax: Any = None, title: str | None = None) -> Any:
    """A precision-recall curve over confidence thresholds: precision against recall, one
    point per threshold joined in threshold order, the best point (largest F) marked and
    labelled with its threshold. ``curve`` is a
    [`ThresholdCurve`][iescore.stats.thresholds.ThresholdCurve] or its ``to_dict()``;
    points whose precision or recall is undefined are left out."""
    d = curve.to_dict() if hasattr(curve, "to_dict") else curve
    fig, ax = _figure(ax, (6.0, 5.0))
    pts = [(p["recall"], p["precision"]) for p in d["points"] if p["recall"] is not None and p["precision"] is not None]
    ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", ms=3, lw=1.2, color=_HIGHLIGHT[1])
    best = d.get("best")
    if best is not None and best["recall"] is not None and best["precision"] is not None:
        f = "F1" if d.get("beta", 1) == 1 else f"F{d['beta']:g}"
        ax.scatter([best["recall"]], [best["precision"]], s=60, color=_HIGHLIGHT[0], zorder=3)
        ax.annotate(f"best {f} {best['f_beta']:.3f} at t = {best['threshold']:g}", (best["recall"], best["precision"]),
                    xytext=(6, 6), textcoords="offset points", fontsize=8, color=_HIGHLIGHT[0])
    ax.set_xlim(0.0, 1.02)
    ax.set_ylim(0.0, 1.02)
    ax.set_xlabel("recall")
    ax.set_ylabel("precision")
    ax.grid(alpha=0.3)
    if title:
        ax.set_title(title)
    return fig
