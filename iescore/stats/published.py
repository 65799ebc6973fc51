"""Statistics beside the pipeline, from numbers a paper publishes: Chinchor's weighted
average, the macro average and the micro average recovered from per-label precision,
recall, F1 and the number of answer keys of each label (no counts needed).

The weighted average weighs each label's measure by its number of answer keys in the
reference (Chinchor), as the report's ``averages.weighted`` does: labels with no answer
key get weight 0 and are listed (``zero_weight_labels``); a label of positive weight whose
measure is not given is left out of that measure's average and listed (``left_out``).
The macro average is the plain mean over the labels where the measure is given.

The micro average is recoverable too, up to the rounding of the published digits: a
label's recall is ``TP / keys``, so ``TP = R * keys``, an integer; its precision is
``TP / predicted``, so ``predicted = TP / P``. Each published value stands for an
interval (``88.76`` for 88.755 to 88.765); the integers inside the intervals are the
possible counts. When each interval holds one integer the counts, and the micro
P/R/F1 computed from them, are exact (``micro_exact``); otherwise the micro values are
computed from the counts nearest to ``R * keys`` and ``TP / P``, and ``micro_bounds``
gives an interval that holds every micro value the published digits allow. A label with
no true positive (``R = 0``) tells nothing of its predictions, so there micro precision
and F1 cannot be recovered (``None``, the label in ``micro_left_out``). The weighted
recall equals the micro recall whenever every label's recall is given (both are
``sum(TP) / sum(keys)``).

F1 missing is computed from P and R (``2PR / (P + R)``; 0 when R = 0 and the label has
answer keys, as the count form ``2TP / (2TP + FP + FN)`` gives); such labels are listed
in ``f1_recomputed``. When P, R and F1 are all given and F1 lies outside what P and R
allow within their rounding, a warning names the label.

Example (two labels, fractions with four digits):
    >>> res = weighted_average([Row("PER", 0.9, 0.8, None, 10), Row("LOC", 0.5, 0.25, None, 4)])
    >>> round(res.weighted["recall"], 6)  # (0.8 * 10 + 0.25 * 4) / 14 = 9 / 14
    0.642857
    >>> res.counts["PER"], res.micro_exact
    ({'tp': 8, 'predicted': 9, 'keys': 10}, True)
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from ..errors import InputError, choices, shown, warn

__all__ = ["Row", "PublishedAverages", "weighted_average", "read_table", "format_published",
           "add_parser", "main"]

MEASURES = ("precision", "recall", "f1")
SCALES = ("auto", "fraction", "percent")
FLOOR = 1e-9  # the least tolerance of a value given as a float (computed floats carry no digits)
COLUMNS = {
    "label": ("label", "type", "class", "entity"),
    "precision": ("precision", "p", "prec"),
    "recall": ("recall", "r", "rec"),
    "f1": ("f1", "f", "fb1", "f-score", "f1-score", "f-measure"),
    "keys": ("keys", "support", "answer keys", "answer_keys"),
}

Value = float | str | None


@dataclass(frozen=True)
class Row:
    """One label's published numbers: precision, recall and F1 (a float, a string such as
    ``"88.76"`` or ``"88.76%"`` whose digits give its rounding, or None when not given)
    and its number of answer keys in the reference; ``where`` (``"file:line"``) names it in
    messages."""

    label: str
    precision: Value
    recall: Value
    f1: Value
    keys: int
    where: str | None = None

    def name(self) -> str:
        return f"label {self.label!r}" + (f" ({self.where})" if self.where else "")


@dataclass(frozen=True)
class PublishedAverages:
    """The averages of a published table (every value a fraction; see the module)."""

    labels: tuple[str, ...]
    keys: int
    scale: str
    weighted: dict[str, float | None]
    left_out: dict[str, list[str]]
    zero_weight_labels: list[str]
    macro: dict[str, float | None]
    macro_left_out: dict[str, list[str]]
    micro: dict[str, float | None]
    micro_bounds: dict[str, tuple[float, float] | None]
    micro_exact: bool
    micro_left_out: list[str]
    counts: dict[str, dict[str, int | None]] = field(default_factory=dict)
    f1_recomputed: list[str] = field(default_factory=list)
    f1_disagrees: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "labels": list(self.labels), "keys": self.keys, "scale": self.scale,
            "weighted": {**self.weighted, "left_out": self.left_out,
                         "zero_weight_labels": self.zero_weight_labels},
            "macro": {**self.macro, "left_out": self.macro_left_out},
            "micro": {**self.micro, "exact": self.micro_exact,
                      "bounds": {k: None if v is None else list(v) for k, v in self.micro_bounds.items()},
                      "left_out": self.micro_left_out},
            "counts": self.counts, "f1_recomputed": self.f1_recomputed, "f1_disagrees": self.f1_disagrees,
        }


# --- values and their rounding ---------------------------------------------------------

def _text(v: Value, digits: int | None) -> tuple[str, bool] | None:
    """The value's text (its digits) and whether it was marked with ``%``."""
    if v is None:
        return None
    if isinstance(v, str):
        s = v.strip()
        if s in ("", "-", "--", "n/a", "NA", "nan"):
            return None
        pct = s.endswith("%")
        return s.rstrip("%").strip(), pct
    if isinstance(v, bool) or not isinstance(v, (int, float)) or math.isnan(v):
        return None if isinstance(v, float) else ("?" + repr(v), False)
    return (f"{v:.{digits}f}" if digits is not None else repr(float(v))), False


def _number(row: Row, measure: str, text: str) -> Decimal:
    try:
        d = Decimal(text)
    except InvalidOperation:
        d = Decimal("NaN")
    if not d.is_finite() or d < 0:
        raise InputError(f"{row.name()}: {measure} {shown(text)} is not a number >= 0")
    return d


def _kind(row: Row, digits: int | None) -> str:
    """``percent`` (a value above 1 or marked %), ``fraction`` (every value in [0, 1], one
    above 0) or ``neutral`` (no value above 0)."""
    kind = "neutral"
    for m in MEASURES:
        t = _text(getattr(row, m), digits)
        if t is None:
            continue
        d = _number(row, m, t[0])
        if t[1] or d > 1:
            return "percent"
        if d > 0:
            kind = "fraction"
    return kind


def _scale(rows: Sequence[Row], scale: str, digits: int | None) -> str:
    if scale not in SCALES:
        raise InputError(f"scale {scale!r} is not one of {choices(SCALES)}")
    kinds = [_kind(r, digits) for r in rows]
    if scale == "auto":
        if "percent" in kinds and "fraction" in kinds:
            p, f = rows[kinds.index("percent")], rows[kinds.index("fraction")]
            raise InputError(
                f"percent or fraction? {p.name()} has a value above 1 (percent) but every value of "
                f"{f.name()} is at most 1 (a fraction, or a percentage below 1%): give the scale "
                f"(--scale percent or fraction)")
        return "percent" if "percent" in kinds else "fraction"
    if scale == "fraction" and "percent" in kinds:
        raise InputError(f"{rows[kinds.index('percent')].name()} has a value above 1 or marked %, "
                         f"which cannot be a fraction; give --scale percent")
    return scale


def _value(row: Row, measure: str, scale: str, digits: int | None) -> tuple[float, float] | None:
    """(value as a fraction, half a unit of its last published digit as a fraction)."""
    t = _text(getattr(row, measure), digits)
    if t is None:
        return None
    d = _number(row, measure, t[0])
    unit = 100 if scale == "percent" else 1
    if d > unit:
        raise InputError(f"{row.name()}: {measure} {shown(t[0])} is above {unit}")
    exponent = d.as_tuple().exponent
    half = 0.5 * 10.0 ** int(exponent) if isinstance(exponent, int) else 0.0
    return float(d) / unit, max(half / unit, FLOOR)


def _f(p: float, r: float) -> float:
    return 0.0 if p + r == 0 else 2 * p * r / (p + r)


# --- the averages -----------------------------------------------------------------------

def _row(r: Row | Mapping[str, Any]) -> Row:
    if isinstance(r, Row):
        return r
    missing = [k for k in ("label", "keys") if k not in r]
    if missing:
        raise InputError(f"row {dict(r)!r} has no {' or '.join(missing)}")
    return Row(str(r["label"]), r.get("precision"), r.get("recall"), r.get("f1"), r["keys"], r.get("where"))


def weighted_average(table: Iterable[Row | Mapping[str, Any]], *, scale: str = "auto",
                     digits: int | None = None) -> PublishedAverages:
    """Chinchor's weighted average, the macro average and the recovered micro average of
    per-label published numbers (``table``: [`Row`][iescore.stats.published.Row]s or dicts
    with the same keys).

    ``scale``: ``"fraction"``, ``"percent"`` or ``"auto"`` (percent when some value is
    above 1 or marked ``%``; a table where some label reads as percent and another has
    every value at most 1 is refused, naming both). ``digits``: the decimals the float
    values were published with (strings carry their own; by default a float's shortest
    form, ``0.9`` for 0.90: give ``digits=2`` or strings to keep trailing zeros).
    Values are returned as fractions.
    """
    rows = [_row(r) for r in table]
    if not rows:
        raise InputError("no rows: give each label's precision, recall, F1 and answer keys")
    seen: dict[str, Row] = {}
    for r in rows:
        if not isinstance(r.keys, int) or isinstance(r.keys, bool) or r.keys < 0:
            raise InputError(f"{r.name()}: answer keys {r.keys!r} is not a count (an integer >= 0)")
        if r.label in seen:
            raise InputError(f"{r.name()} is given twice (also {seen[r.label].name()})")
        seen[r.label] = r
    scale = _scale(rows, scale, digits)
    vals = [{m: _value(r, m, scale, digits) for m in MEASURES} for r in rows]
    recomputed, disagrees = [], []
    for r, v in zip(rows, vals):
        p, rec, f = v["precision"], v["recall"], v["f1"]
        if f is None and rec is not None and (p is not None or (rec[0] == 0 and r.keys > 0)):
            v["f1"] = (_f(p[0], rec[0]) if p is not None else 0.0), 0.0
            recomputed.append(r.label)
        elif f is not None and p is not None and rec is not None:
            lo = _f(max(p[0] - p[1], 0.0), max(rec[0] - rec[1], 0.0))
            hi = _f(min(p[0] + p[1], 1.0), min(rec[0] + rec[1], 1.0))
            if f[0] + f[1] < lo - 1e-12 or f[0] - f[1] > hi + 1e-12:
                disagrees.append(r.label)
                warn(f"{r.name()}: F1 {f[0]:.6g} is not the F1 of P {p[0]:.6g} and R {rec[0]:.6g} "
                     f"({_f(p[0], rec[0]):.6g}; {lo:.6g} to {hi:.6g} within the rounding of the digits given)")
    weighted: dict[str, float | None] = {}
    macro: dict[str, float | None] = {}
    left_out: dict[str, list[str]] = {}
    macro_left_out: dict[str, list[str]] = {}
    for m in MEASURES:
        given = [(r, x[0]) for r, v in zip(rows, vals) if (x := v[m]) is not None]
        den = sum(r.keys for r, _ in given)
        weighted[m] = math.fsum(r.keys * x for r, x in given) / den if den else None
        left_out[m] = [r.label for r, v in zip(rows, vals) if v[m] is None and r.keys > 0]
        macro[m] = math.fsum(x for _, x in given) / len(given) if given else None
        macro_left_out[m] = [r.label for r, v in zip(rows, vals) if v[m] is None]
    micro, bounds, exact, micro_left, counts = _micro(rows, vals)
    return PublishedAverages(
        tuple(r.label for r in rows), sum(r.keys for r in rows), scale, weighted, left_out,
        [r.label for r in rows if r.keys == 0], macro, macro_left_out, micro, bounds, exact,
        micro_left, counts, recomputed, disagrees)


Interval = tuple[float, float]


def _integers(lo: float, hi: float) -> tuple[int, float]:
    """The least and greatest integers in [lo, hi] (inf above when unbounded)."""
    return math.ceil(lo - 1e-9), (math.floor(hi + 1e-9) if math.isfinite(hi) else math.inf)


def _counts(r: Row, p: Interval | None, rec: Interval | None) -> tuple[dict[str, Any], str | None]:
    """The label's recoverable counts: point values and ranges, or why they are not."""
    k = r.keys
    if k == 0:
        tp_lo, tp_hi = 0, 0
    elif rec is None:
        return {}, "recall not given"
    else:
        tp_lo, hi = _integers((rec[0] - rec[1]) * k, (rec[0] + rec[1]) * k)
        tp_lo, tp_hi = max(tp_lo, 0), int(min(hi, k))
        if tp_lo > tp_hi:
            warn(f"{r.name()}: recall {rec[0]:.6g} is no count out of {k} answer keys "
                 f"(R * keys = {rec[0] * k:.4f}): are the keys the label's?")
            return {}, "recall is no count of its answer keys"
    tp = min(max(round(rec[0] * k) if rec is not None and k else 0, tp_lo), tp_hi)
    out: dict[str, Any] = {"tp": tp, "tp_range": (tp_lo, tp_hi)}
    if tp_hi == 0:
        return out, "no true positive: its predictions are unknown"
    if p is None or p[0] == 0:
        return out, "precision not given" if p is None else "precision 0 with true positives"
    pl, ph = p[0] - p[1], min(p[0] + p[1], 1.0)
    near = sorted(range(tp_lo, tp_hi + 1), key=lambda t: abs(t - tp)) if tp_hi - tp_lo < 1000 else [tp]
    for t in (t for t in near if t > 0):
        lo, hi = _integers(t / ph, t / pl if pl > 0 else math.inf)
        if max(lo, t) <= hi:  # a count of predictions that gives this precision
            first = max(tp_lo, 1)
            lo_all = max(_integers(first / ph, 0)[0], first)
            hi_all = _integers(0, tp_hi / pl if pl > 0 and tp_lo > 0 else math.inf)[1]
            out.update(tp=t, predicted=int(min(max(round(t / p[0]), lo, t), hi)), predicted_range=(lo_all, hi_all))
            return out, None
    warn(f"{r.name()}: precision {p[0]:.6g} is no ratio of {tp} true positives to a count of predictions")
    return out, "precision is no ratio of counts"


def _micro(rows: Sequence[Row], vals: Sequence[dict[str, Interval | None]]) -> tuple[
        dict[str, float | None], dict[str, Interval | None], bool, list[str], dict[str, dict[str, int | None]]]:
    keys = sum(r.keys for r in rows)
    got = [_counts(r, v["precision"], v["recall"]) for r, v in zip(rows, vals)]
    counts = {r.label: {"tp": c.get("tp"), "predicted": c.get("predicted"), "keys": r.keys}
              for r, (c, _) in zip(rows, got)}
    no_recall = [r.label for r, (c, _) in zip(rows, got) if "tp" not in c]
    no_pred = [r.label for r, (c, why) in zip(rows, got) if why is not None]
    micro: dict[str, float | None] = dict.fromkeys(MEASURES)
    bounds: dict[str, Interval | None] = dict.fromkeys(MEASURES)
    exact = not no_pred
    if not no_recall and keys:
        tp = sum(c["tp"] for c, _ in got)
        lo, hi = sum(c["tp_range"][0] for c, _ in got), sum(c["tp_range"][1] for c, _ in got)
        micro["recall"], bounds["recall"] = tp / keys, (lo / keys, hi / keys)
        exact = exact and lo == hi
        if not no_pred:
            pred = sum(c["predicted"] for c, _ in got)
            plo = sum(c["predicted_range"][0] for c, _ in got)
            phi = sum(c["predicted_range"][1] for c, _ in got)
            exact = exact and plo == phi
            micro["precision"], micro["f1"] = tp / pred, 2 * tp / (pred + keys)
            bounds["precision"] = (lo / phi, min(hi / plo, 1.0))
            bounds["f1"] = (2 * lo / (phi + keys), 2 * hi / (plo + keys))
    return micro, bounds, exact, no_pred, counts


# --- a table file -----------------------------------------------------------------------

def read_table(path: str | Path) -> list[Row]:
    """A CSV or TSV file (tab-separated when its header line holds a tab) with a header
    naming the columns ``label``, ``precision``, ``recall``, ``f1`` and ``keys`` (also
    ``support``; any of P, R, F1 may be absent, an empty cell or ``-`` is a value not
    given). Blank lines and lines starting with ``#`` are skipped."""
    path = Path(path)
    text = path.read_text(encoding="utf-8-sig")
    lines = [(n, line) for n, line in enumerate(text.splitlines(), 1)
             if line.strip() and not line.lstrip().startswith("#")]
    if not lines:
        raise InputError(f"{path}: no header line (label, precision, recall, f1, keys)")
    delim = "\t" if "\t" in lines[0][1] else ","
    table = list(csv.reader([line for _, line in lines], delimiter=delim))
    names = {alias: col for col, aliases in COLUMNS.items() for alias in aliases}
    header = [h.strip().lower() for h in table[0]]
    unknown = [h for h in header if h not in names]
    if unknown:
        raise InputError(f"{path}:{lines[0][0]}: column {unknown[0]!r} is not one of "
                         f"{choices(c for a in COLUMNS.values() for c in a)}")
    cols = [names[h] for h in header]
    for need in ("label", "keys"):
        if need not in cols:
            raise InputError(f"{path}:{lines[0][0]}: no {need!r} column (header {table[0]!r})")
    rows = []
    for (n, _), cells in zip(lines[1:], table[1:]):
        where = f"{path}:{n}"
        if len(cells) != len(cols):
            raise InputError(f"{where}: {len(cells)} cells where the header has {len(cols)}")
        rec = dict(zip(cols, (c.strip() for c in cells)))
        if not rec["label"]:
            raise InputError(f"{where}: no label")
        try:
            keys = int(rec["keys"])
        except ValueError:
            raise InputError(f"{where}: keys {shown(rec['keys'])} is not a count") from None
        rows.append(Row(rec["label"], rec.get("precision"), rec.get("recall"), rec.get("f1"), keys, where))
    return rows


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.2f}"


def format_published(res: PublishedAverages) -> str:
    """The averages as a small text table, in percent."""
    out = [f"{len(res.labels)} labels, {res.keys} answer keys (weighted: by answer keys, Chinchor)",
           f"{'':10}{'precision':>10}{'recall':>10}{'F1':>10}"]
    for name, vals in (("weighted", res.weighted), ("macro", res.macro), ("micro", res.micro)):
        out.append(f"{name:10}" + "".join(f"{_pct(vals[m]):>10}" for m in MEASURES))
    if any(res.micro_bounds.values()) and not res.micro_exact:
        out.append("micro within the rounding: " + "; ".join(
            f"{m} {_pct(b[0])} to {_pct(b[1])}" for m, b in res.micro_bounds.items() if b))
    elif res.micro_exact:
        out.append("micro: every count recovered exactly")
    notes = [("zero-weight labels", res.zero_weight_labels), ("F1 computed from P and R", res.f1_recomputed),
             ("F1 not that of P and R", res.f1_disagrees), ("micro counts not recovered", res.micro_left_out)]
    notes += [(f"left out of weighted {m}", v) for m, v in res.left_out.items()]
    out += [f"{what}: {', '.join(v)}" for what, v in notes if v]
    return "\n".join(out)


# --- command line: iescore weighted -----------------------------------------------------

def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Add ``iescore weighted`` to the subcommands ``sub``; [`main`][iescore.stats.published.main] runs it."""
    ap: argparse.ArgumentParser = sub.add_parser(
        "weighted", help="weighted, macro and micro averages from a paper's per-label P/R/F1 and answer keys",
        description="FILE is a CSV or TSV table with a header naming label, precision, recall, f1 and keys "
                    "(the label's answer keys in the reference). Prints Chinchor's weighted average, the "
                    "macro average and the micro average recovered from the counts the numbers imply.")
    ap.add_argument("table", metavar="FILE", help="CSV or TSV table of per-label numbers")
    ap.add_argument("--scale", choices=SCALES, default="auto", help="percent or fraction (default: auto)")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    return ap


def main(args: argparse.Namespace) -> int:
    """Run ``iescore weighted``; the exit status (2 on bad input)."""
    try:
        res = weighted_average(read_table(args.table), scale=args.scale)
    except InputError as exc:
        print(f"iescore: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"iescore: error: cannot read {args.table!r}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    print(json.dumps(res.to_dict(), indent=2) if args.json else format_published(res))
    return 0
