"""The views stage of the pipeline: precision, recall and F1 of groups of items (a
*breakdown*): by the length of a mention in tokens, by whether its string is seen in a
training file, by an attribute of its document. Computed from the report's items
([`Report.items`][iescore.report.Report.items]), as rows, a text block, CSV and Markdown
sections.

Each item counts in its own group: an answer in the group of *its* length, string or
document (for recall), a prediction in the group of its own (for precision), so a
prediction of two tokens matching an answer of one counts for precision in ``2`` and the
answer for recall in ``1``. In a group:

* ``support`` answers, ``found`` of them of status ``TP`` and ``fn`` of status ``FN``;
  ``recall = found / (found + fn)``;
* ``predicted`` predictions, ``tp`` of them of status ``TP`` and ``fp`` of status ``FP``;
  ``precision = tp / (tp + fp)``;
* ``f1 = 2PR / (P + R)`` (0 when P = R = 0, ``None`` when P or R is undefined), computed
  as ``2·tp·found / (tp·(found + fn) + found·(tp + fp))``: where ``found = tp`` (one-to-one
  counting, summed over the groups) that is the report's ``2TP / (2TP + FP + FN)``.

Statuses ``ignored`` and ``alternative`` (match-best) count nowhere (a group holding
nothing else has no row). The groups:

* ``length``: a span's tokens (``end - start``; a template filler's whitespace-separated
  tokens), in the groups ``1``, ``2``, ``3``, ``4`` and ``5+``;
* ``seen``: ``seen`` when the (label, text) pair occurs among the training file's mentions
  (read as CoNLL, its last column the gold tags: [`training_mentions`][iescore.render.breakdown_inputs.training_mentions]),
  else ``unseen``; the label counts (a string seen only as another type is unseen), and
  texts are compared with every run of whitespace made one space;
* ``attribute``: the value a mapping (or a function) gives the item's document id; a
  document without a value is an InputError naming it. On the command line the mapping
  is a file of ``document-id<TAB>value`` lines ([`read_attributes`][iescore.render.breakdown_inputs.read_attributes]).

Example:
    >>> import iescore
    >>> r = iescore.score_tags(reference=[["B-PER", "I-PER", "O", "B-LOC"]],
    ...                        prediction=[["B-PER", "I-PER", "O", "O"]],
    ...                        tokens=[["Ada", "Lovelace", "in", "London"]])
    >>> for row in by_length(r).rows:
    ...     print(row["group"], row["found"], row["fn"], row["recall"])
    1 0 1 0.0
    2 1 0 1.0
    >>> print(format_breakdown(by_seen(r, {("LOC", "London")})))
    breakdown by seen (seen: the label and text occur in the training file)
    group   support  found  fn  predicted  tp  fp  precision   recall       F1
    seen          1      0   1          0   0   0        n/a    0.00%      n/a
    unseen        1      1   0          1   1   0    100.00%  100.00%  100.00%
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..match.units import STATUS_NAMES

if TYPE_CHECKING:
    from ..items import ItemTable
    from ..report import Report

__all__ = ["Breakdown", "by_length", "by_seen", "by_attribute",
           "parse_breakdown", "format_breakdown", "breakdown_heading", "breakdown_csv", "breakdown_markdown",
           "BREAKDOWN_FIELDS", "LENGTHS"]

BREAKDOWN_FIELDS = ("group", "support", "found", "fn", "predicted", "tp", "fp", "precision", "recall", "f1")
LENGTHS = ("1", "2", "3", "4", "5+")
_TP, _FP, _FN = (STATUS_NAMES.index(s) for s in ("TP", "FP", "FN"))
_HEADINGS = {
    "length": "length (tokens of each answer and each prediction)",
    "seen": "seen (seen: the label and text occur in the training file)",
}


@dataclass(frozen=True)
class Breakdown:
    """One breakdown: its ``name`` (``length``, ``seen`` or ``attribute:NAME``) and one row
    per group (`BREAKDOWN_FIELDS`), in group order."""

    name: str
    rows: tuple[dict[str, Any], ...]

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "rows": [dict(r) for r in self.rows]}


def _ratio(a: int, b: int) -> float | None:
    return None if b == 0 else a / b


def _row(group: str, ref: np.ndarray, pred: np.ndarray) -> dict[str, Any]:
    found, fn = int((ref == _TP).sum()), int((ref == _FN).sum())
    tp, fp = int((pred == _TP).sum()), int((pred == _FP).sum())
    p, r = _ratio(tp, tp + fp), _ratio(found, found + fn)
    # 2PR / (P + R) as one division of integers: 2 tp found / (tp (found + fn) + found (tp + fp))
    den = tp * (found + fn) + found * (tp + fp)
    f1 = None if p is None or r is None else (0.0 if den == 0 else 2 * tp * found / den)
    return {"group": group, "support": found + fn, "found": found, "fn": fn, "predicted": tp + fp, "tp": tp,
            "fp": fp, "precision": p, "recall": r, "f1": f1}


def _grouped(name: str, report: Report, key: Callable[[ItemTable, str], list[str]],
             order: Iterable[str] | None = None) -> Breakdown:
    """Rows of the groups ``key`` gives each side's items (the groups of ``order`` first, in
    that order, then the others sorted)."""
    keys = {}
    status = {}
    for side in ("reference", "prediction"):
        report.items(side)  # a report of totals keeps no items: its ConfigError says so
        t = report.reference if side == "reference" else report.prediction
        keys[side] = np.asarray(key(t, side), dtype=object)
        status[side] = np.asarray(t.status)
    present = set(keys["reference"].tolist()) | set(keys["prediction"].tolist())
    groups = [g for g in (order or ()) if g in present]
    groups += sorted(present - set(groups))
    rows = (_row(g, status["reference"][keys["reference"] == g], status["prediction"][keys["prediction"] == g])
            for g in groups)
    return Breakdown(name, tuple(r for r in rows if r["support"] or r["predicted"]))


def _texts(t: ItemTable, side: str, what: str) -> tuple[str, ...]:
    if t.text is None and len(t):
        from ..errors import ConfigError

        raise ConfigError(f"a breakdown by {what} reads the items' text, and this report's {side} items have none "
                          "(tag input without tokens): give the tokens (score_tags(..., tokens=...), a CoNLL "
                          "file with a token column)")
    return t.text or ()


def by_length(report: Report) -> Breakdown:
    """Rows by length in tokens (``1`` to ``4``, ``5+``): each answer and each prediction in
    the group of its own length."""

    def key(t: ItemTable, side: str) -> list[str]:
        n = np.asarray(t.end) - np.asarray(t.start)
        if len(t) and (np.asarray(t.start) < 0).any():  # template fillers: their tokens
            words = np.array([len(x.split()) for x in _texts(t, side, "length")], dtype=np.int64)
            n = np.where(np.asarray(t.start) < 0, words, n)
        return [LENGTHS[min(int(k), 5) - 1] for k in n.tolist()]

    return _grouped("length", report, key, LENGTHS)


def _norm(text: str) -> str:
    return " ".join(text.split())


def by_seen(report: Report, mentions: Iterable[tuple[str, str]]) -> Breakdown:
    """Rows ``seen`` / ``unseen``: an item is seen when its (label, text) is among
    ``mentions`` (texts compared with whitespace runs made one space)."""
    known = {(lab, _norm(text)) for lab, text in mentions}
    labels = report.labels

    def key(t: ItemTable, side: str) -> list[str]:
        texts = _texts(t, side, "seen strings")
        return ["seen" if (labels[lab], _norm(x)) in known else "unseen"
                for lab, x in zip(np.asarray(t.label).tolist(), texts)]

    return _grouped("seen", report, key, ("seen", "unseen"))


def by_attribute(report: Report, values: Mapping[str, Any] | Callable[[str], Any], name: str = "attribute") -> Breakdown:
    """Rows by the value ``values`` gives each item's document id (a mapping or a
    function; ``None`` or a missing id is an InputError naming the document)."""
    ids = report.doc_ids
    get = values.get if isinstance(values, Mapping) else values
    of_doc = []
    missing = []
    for d in range(len(ids)):
        v = get(ids[d])
        if v is None:
            missing.append(ids[d])
        of_doc.append(str(v))
    if missing:
        from ..errors import InputError

        raise InputError(f"breakdown by {name}: document {missing[0]!r} has no value ({len(missing):,} of "
                         f"{len(ids):,} documents have none); give every document id a value")

    def key(t: ItemTable, side: str) -> list[str]:
        return [of_doc[d] for d in np.asarray(t.doc).tolist()]

    return _grouped(f"attribute:{name}", report, key)


def parse_breakdown(text: str) -> tuple[str, str | None]:
    """A command-line breakdown: ``length``, ``seen:TRAINFILE`` or ``attr:FILE`` as (kind, file)."""
    from ..errors import ConfigError

    kind, _, arg = text.partition(":")
    if kind == "length" and not arg:
        return "length", None
    if kind in ("seen", "attr") and arg:
        return kind, arg
    raise ConfigError(f"--breakdown: expected length, seen:TRAINFILE or attr:FILE, got {text!r}")


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.2f}"


def breakdown_heading(b: Breakdown) -> str:
    """The breakdown's heading, e.g. ``breakdown by length (tokens of each answer and each prediction)``."""
    kind, _, name = b.name.partition(":")
    what = _HEADINGS.get(kind) or f"{name} (each item in the group of its document's value)"
    return f"breakdown by {what}"


def format_breakdown(b: Breakdown) -> str:
    """One breakdown as a text block: a heading, then one line per group (precision,
    recall and F1 in percent, ``n/a`` where undefined), each column as wide as its
    widest cell."""
    head = ["group", "support", "found", "fn", "predicted", "tp", "fp", "precision", "recall", "F1"]
    rows = [[r["group"], *(str(r[k]) for k in ("support", "found", "fn", "predicted", "tp", "fp")),
             *(_pct(r[k]) + ("" if r[k] is None else "%") for k in ("precision", "recall", "f1"))] for r in b.rows]
    widths = [max(len(x) for x in col) for col in zip(head, *rows)]

    def line(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) if k == 0 else c.rjust(w) for k, (c, w) in enumerate(zip(cells, widths))).rstrip()

    return "\n".join([breakdown_heading(b), line(head), *(line(r) for r in rows)])


def breakdown_csv(b: Breakdown) -> list[list[Any]]:
    """The CSV section's rows: ``breakdown`` and `BREAKDOWN_FIELDS` as the header, one row a
    group (undefined values empty, measures as fractions)."""
    rows: list[list[Any]] = [["breakdown", *BREAKDOWN_FIELDS]]
    for r in b.rows:
        rows.append([b.name, *("" if r[k] is None else (repr(r[k]) if isinstance(r[k], float) else r[k])
                               for k in BREAKDOWN_FIELDS)])
    return rows


def breakdown_markdown(b: Breakdown) -> tuple[str, list[str], list[list[str]]]:
    """The Markdown section: its heading line, its table's header and body rows."""
    heading = breakdown_heading(b)
    head = ["group", "support", "found", "fn", "predicted", "tp", "fp", "precision %", "recall %", "F1 %"]
    body = [[r["group"], *(str(r[k]) for k in BREAKDOWN_FIELDS[1:7]), *(_pct(r[k]) for k in ("precision", "recall", "f1"))]
            for r in b.rows]
    return heading[0].upper() + heading[1:], head, body
