"""The report stage of the pipeline without the documents: a scorer's counts summed over
its documents (`Totals`), and the report of them.

Two paths keep counts only, and both sum parts into one `Totals`:

* a [`Scorer`][iescore.scoring.stream.Scorer] made with ``totals_only=True`` (as ``iescore
  score`` makes it) adds each batch's part to its totals as the batch comes;
* a state kept with ``keep="counts"`` (`iescore.scoring.state`) carries
  `Totals.of` a scorer's parts, and the driver merges the states
  (`Totals.merge`: the scorer's merge rules, and the document ids checked).

A `Totals` holds per label the summed counts, the confusion table, the summed
t-units and token counts, repairs, error categories and multi-slot counts, the signature's additive
reference digest (`reference_digest`) and, in a state, what the
scorer recorded besides its documents and the document ids (numbered runs, a 64-bit
hash per other id). `Totals.report` gives the report that
`_assemble` gives for the same parts (``to_dict()`` and
signature equal), with the totals in ``Report.totals``: it has no per-document counts
and no items, and reading them raises [`ConfigError`][iescore.errors.ConfigError].
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache, reduce
from itertools import chain
from typing import Any

import numpy as np

from ..categories import CATEGORIES
from ..cells import UNIT_FIELDS, CellTable, column_sums
from ..config import Config
from ..confusion import Confusion
from ..docmacro import DocSums
from ..errors import ConfigError, InputError
from ..ids import NumberedIds, UnkeptIds, decimal_values, reference_digest, string_hashes
from ..report import Report
from .assemble import _add_repairs, _assemble, _warn_label_sets
from .partdata import _I64, _empty_items, _Part

__all__ = ["Totals"]

# A scorer (`iescore.scoring.stream.Scorer`). The scorer module sits above this one and
# `iescore.scoring.state` (it sums its batches into `Totals` and writes its states through
# them), so they name it by this alias, and it puts its class in `_SCORER` when it is defined:
# totals and states rebuild an empty scorer from a head to apply its options and merge rules.
_Scorer = Any
_SCORER: list[Any] = []


# --- what a scorer records besides its documents (a state's header) -----------------------

def _config(header: dict[str, Any]) -> Config:
    return _rebuilt(header["config"], header["detail"])


@lru_cache(maxsize=64)  # a driver merges thousands of states of one configuration
def _rebuilt(signature: str, detail: str) -> Config:
    return Config.from_signature(signature).with_(detail=detail)


@lru_cache(maxsize=64)
def _config_header_of(config: Config) -> tuple[str, str]:
    if _rebuilt(config.signature(), config.detail) != config:
        raise ConfigError(f"options that the signature does not rebuild cannot be sent as a state: {config!r}")
    return config.signature(), config.detail


def _head(s: _Scorer) -> dict[str, Any]:
    """What a scorer records besides its parts (the scheme rule, notes, weight digest)."""
    signature, detail = _config_header_of(s.config)
    return {"config": signature, "detail": detail, "auto": s._auto, "fixed": s._fixed, "batches": s._batches,
            "notes": s._notes, "unit": s._unit}


def _empty_scorer(h: dict[str, Any]) -> _Scorer:
    """A scorer with no documents holding the recorded fields of ``h`` (see `_head`)."""
    s = _SCORER[0](_config(h))
    s._auto, s._batches, s._unit = bool(h["auto"]), int(h["batches"]), h["unit"]
    s._fixed = tuple(h["fixed"]) if h["fixed"] is not None else None
    s._notes = {str(k): int(v) for k, v in h["notes"].items()}
    return s


# --- the summed counts ------------------------------------------------------------------------

def _value_columns(fields: Sequence[str]) -> list[int]:
    return [i for i, f in enumerate(fields) if f not in UNIT_FIELDS]


@dataclass(frozen=True)
class Totals:
    """A scorer's counts summed over its documents: built from parts (`of`, and
    batch by batch in a ``Scorer(totals_only=True)``), merged with `merge`,
    reported with `report`. ``head`` holds what the scorer recorded besides its
    documents (options, the scheme that ``scheme="auto"`` fixed, adapter notes, the
    per-t-unit weight digest; empty in a scorer's running totals, which report under the
    scorer's own): merging applies [`Scorer.merge`][iescore.scoring.stream.Scorer.merge]'s rules."""

    head: dict[str, Any]
    n_parts: int
    labels: tuple[str, ...]  # sorted
    fields: tuple[str, ...]
    values: np.ndarray  # (labels, value fields) int64
    units: np.ndarray  # (2,) int64: t-units (tokens, separators) summed over documents
    confusion: Confusion
    tokens: np.ndarray | None  # (4,) token-accuracy counts summed, None without tags
    repairs: dict[str, dict[str, int]]
    ts_error: str | None
    n_docs: int
    digest: int  # reference digest (additive over documents, mod 2**64)
    runs: np.ndarray  # (k, 2) int64: numbered document ids [start, stop)
    hashes: np.ndarray = field(repr=False)  # uint64: a hash of every other document id, sorted
    categories: np.ndarray | None = None  # (labels, 6) error-category totals, None without alignment
    repair_sites: dict[str, list[str]] = field(default_factory=dict)  # side -> the first repairs
    doc_sums: DocSums | None = field(default_factory=DocSums)  # the document-macro average's sums (None: unknown)
    multislot: np.ndarray | None = None  # (labels, 2) multi-slot counts (iescore.multislot), None where not counted

    @classmethod
    def empty(cls, head: dict[str, Any] | None = None) -> Totals:
        """The totals of no parts."""
        return cls({} if head is None else head, 0, (), (), np.zeros((0, 0), _I64), np.zeros(2, _I64),
                   Confusion.empty(0), None, {}, None, 0, 0, np.zeros((0, 2), _I64), np.zeros(0, np.uint64))

    @classmethod
    def of_part(cls, p: _Part, *, zero_tokens: bool = False) -> Totals:
        """One batch's counts (no head, no document ids); ``zero_tokens``: the batch is
        one of a scorer's parts, some of which count tokens (see `_PartData`)."""
        if p.unit_totals is not None or p.ts_weighted is not None:
            raise ConfigError("counts alone cannot sum per-t-unit TS weights exactly (they are float sums per "
                              "document): keep the documents (keep='items', or a Scorer without totals_only=True)")
        fields = p.table.fields
        t = cls({}, 1, tuple(p.labels), fields, p.table.label_totals()[:, _value_columns(fields)],
                p.table._units().sum(axis=0).astype(_I64), p.confusion,
                None if p.token_counts is None else column_sums(p.token_counts),
                {}, p.ts_error, len(p.doc_ids), reference_digest(_PartData(p, zero_tokens)),
                np.zeros((0, 2), _I64), np.zeros(0, np.uint64),
                None if p.categories is None else np.asarray(p.categories, dtype=_I64), {},
                DocSums.of(*(p.table.doc_totals()[:, fields.index(k)] for k in ("tp", "fp", "fn"))),
                None if p.multislot is None else np.asarray(p.multislot, dtype=_I64))
        _add_repairs(t.repairs, t.repair_sites, p.repairs, p.repair_sites)
        return t if list(t.labels) == sorted(t.labels) else _sum([t], t.head)

    @classmethod
    def of(cls, scorer: _Scorer, *, id_hashes: bool = True) -> Totals:
        """The summed counts of a scorer's documents; without ``id_hashes`` the explicit
        document ids are not hashed, and merging cannot find an id in two shards (the
        caller checks them otherwise, as the Spark adapter does with one Spark query)."""
        head = _head(scorer)
        parts = scorer._parts
        if not parts:
            return cls.empty(head)
        # the digest one call gives: a part without tokens among parts with tokens counts 0 per document
        zero_tokens = any(p.table.doc_tokens is not None for p in parts)
        runs: list[tuple[int, int]] = []
        names: list[str] = []
        for p in parts:
            if isinstance(p.doc_ids, NumberedIds):
                runs.append((p.doc_ids.start, p.doc_ids.stop))
            else:
                names.extend(p.doc_ids)
        out = _sum([cls.of_part(p, zero_tokens=zero_tokens) for p in parts], head)
        return replace(out, runs=np.array(runs, dtype=_I64).reshape(-1, 2),
                       hashes=_id_hashes(names if id_hashes else []))

    def plus(self, other: Totals, *, head: dict[str, Any] | None = None) -> Totals:
        """Both totals' counts (``self``'s documents first), with ``head`` (``self``'s by default)."""
        head = self.head if head is None else head
        if not self.n_parts or not other.n_parts:  # no parts add nothing
            keep = other if not self.n_parts else self
            return replace(keep, head=head, n_parts=self.n_parts + other.n_parts)
        return _sum([self, other], head)

    def renumbered(self, offset: int) -> Totals:
        """The same counts with numbered document ids moved up by ``offset``."""
        return replace(self, runs=self.runs + offset)

    def merge(self, other: Totals) -> Totals:
        """Both shards' counts (``self``'s documents first), under [`Scorer.merge`][iescore.scoring.stream.Scorer.merge]'s
        rules for options and schemes; a document id in both is an InputError."""
        merged = _empty_scorer(self.head).merge(_empty_scorer(other.head))
        out = self.plus(other, head=_head(merged))
        if self.n_parts and other.n_parts:
            _check_ids(out.runs, out.hashes)
        return out

    @cached_property
    def _index(self) -> dict[str, int]:
        """Each label's number."""
        return dict(zip(self.labels, range(len(self.labels))))

    @property
    def label_totals(self) -> np.ndarray:
        """``(labels, len(fields))`` int64, read-only: every label's counts, the t-units
        (``tok_n``, ``sep_n``) the same for every label."""
        L = len(self.labels)
        sums = np.array(CellTable.empty(self.fields, L)._expand(self.values, np.broadcast_to(self.units, (L, 2))),
                        dtype=_I64)
        sums.setflags(write=False)
        return sums

    def report(self) -> Report:
        """The report of the summed counts under the options in ``head`` (warning, as one
        call would, when reference and prediction have no label in common)."""
        cfg = _config(self.head)  # as a scorer rebuilt from the head has them (it records no weight digest)
        report = self._report(cfg.with_(unit_weights=None) if cfg.unit_weights is not None else cfg,
                              {str(k): int(v) for k, v in self.head["notes"].items()})
        _warn_label_sets(report)
        return report

    def _report(self, cfg: Config, notes: Mapping[str, int] | None = None) -> Report:
        if not self.n_parts:
            return _assemble([], cfg, notes)
        L = len(self.labels)
        repairs = {k: dict(v) for k, v in self.repairs.items()}
        if notes:
            repairs["adapter"] = dict(sorted(notes.items()))
        return Report(config=cfg, labels=self.labels, doc_ids=UnkeptIds(self.n_docs),
                      table=CellTable.empty(self.fields, L), confusion_counts=self.confusion,
                      reference=_empty_items(), prediction=_empty_items(), repairs=repairs, ts_error=self.ts_error,
                      totals=self, categories=self.categories, multislot=self.multislot,
                      repair_sites={k: tuple(v) for k, v in self.repair_sites.items()})


def _sum(ts: Sequence[Totals], head: dict[str, Any]) -> Totals:
    """The counts of ``ts`` (of parts) summed over the union of their labels, sorted."""
    first = ts[0]
    for t in ts[1:]:
        if t.fields != first.fields:
            raise ConfigError(f"cannot merge counts of fields {first.fields} with counts of fields {t.fields}")
    index = first._index
    # (whole-list passes over the labels: a stream of 50,000 labels makes no Python call per label)
    if len(ts) > 1 and all(map(index.__contains__, chain.from_iterable(t.labels for t in ts[1:]))):
        labels = first.labels  # no new label (most batches of a stream): kept, with their numbers
    else:
        labels = tuple(sorted(set().union(*(t.labels for t in ts))))
        index = dict(zip(labels, range(len(labels))))
    L = len(labels)
    maps = [np.arange(L, dtype=_I64) if t.labels == labels
            else np.fromiter(map(index.__getitem__, t.labels), dtype=_I64, count=len(t.labels)) for t in ts]
    values = np.zeros((L, first.values.shape[1]), dtype=_I64)
    categories = None if any(t.categories is None for t in ts) else np.zeros((L, len(CATEGORIES)), dtype=_I64)
    slots = None if any(t.multislot is None for t in ts) else np.zeros((L, 2), dtype=_I64)
    repairs: dict[str, dict[str, int]] = {}
    sites: dict[str, list[str]] = {}
    for t, m in zip(ts, maps):  # m: distinct labels
        values[m] += t.values
        if categories is not None and t.categories is not None:
            categories[m] += t.categories
        if slots is not None and t.multislot is not None:
            slots[m] += t.multislot
        _add_repairs(repairs, sites, t.repairs, t.repair_sites)
    tokens = [t.tokens for t in ts if t.tokens is not None]
    out = Totals(head, sum(t.n_parts for t in ts), labels, first.fields, values, _rows([t.units for t in ts]),
                  Confusion.join([(t.confusion, m) for t, m in zip(ts, maps)], L),
                  _rows(tokens) if len(tokens) == len(ts) else None, repairs,
                  next((t.ts_error for t in ts if t.ts_error), None), sum(t.n_docs for t in ts),
                  sum(t.digest for t in ts) % 2**64, np.concatenate([t.runs for t in ts]),
                  np.sort(np.concatenate([t.hashes for t in ts])), categories, sites,
                  _doc_sums([t.doc_sums for t in ts]), slots)
    out.__dict__["_index"] = index  # (cached_property's own store: the label numbers, for the next batch)
    return out


def _rows(rows: Sequence[np.ndarray]) -> np.ndarray:
    """Arrays of one shape summed (int64)."""
    out: np.ndarray = np.asarray(rows[0], dtype=_I64)
    for r in rows[1:]:
        out = out + r
    return out


class _PartData:
    """A part seen as the report `reference_digest` reads. With
    ``zero_tokens`` as one of a scorer's parts assembled in one call, where a part without
    tokens (templates) beside parts with tokens counts 0 tokens per document."""

    def __init__(self, p: _Part, zero_tokens: bool = False) -> None:
        self.doc_ids, self.token_counts, self.labels, self.reference = p.doc_ids, p.token_counts, p.labels, p.ref
        self.table = p.table
        if zero_tokens and p.table.doc_tokens is None:
            self.table = replace(p.table, doc_tokens=np.zeros(p.table.n_docs, dtype=_I64))


def _id_hashes(names: Sequence[str]) -> np.ndarray:
    """A 64-bit hash per explicit document id (canonical decimal ids hash as their number
    would in a numbered run, so that "7" and the 8th numbered document collide)."""
    num = decimal_values(names)
    out: np.ndarray = string_hashes(names, b"id:") | np.uint64(1 << 63)
    out[num >= 0] = num[num >= 0].astype(np.uint64)
    out.sort()
    return out


def _check_ids(runs: np.ndarray, hashes: np.ndarray) -> None:
    """Raise an InputError for a document id in two merged shards."""
    order = np.argsort(runs[:, 0], kind="stable")
    r = runs[order]
    r = r[r[:, 1] > r[:, 0]]
    clash = np.flatnonzero(r[1:, 0] < r[:-1, 1])
    if len(clash):
        raise InputError(f"duplicate document id {str(int(r[clash[0] + 1, 0]))!r} (in two merged states)")
    h = np.sort(hashes)
    same = np.flatnonzero(h[1:] == h[:-1])
    if len(same):
        x = int(h[same[0]])
        what = repr(str(x)) if x < 2**62 else f"with 64-bit hash {x:#018x}"
        raise InputError(f"duplicate document id {what} (in two merged states; states kept with keep='counts' "
                         "hold hashes of the ids: keep='items' names it)")
    decimal = h[h < 2**62].astype(np.int64)
    if len(decimal) and len(r):
        at = np.searchsorted(r[:, 0], decimal, "right") - 1
        inside = (at >= 0) & (decimal < r[np.maximum(at, 0), 1])
        if inside.any():
            raise InputError(f"duplicate document id {str(int(decimal[inside][0]))!r} (in two merged states)")


def _doc_sums(parts: list[DocSums | None]) -> DocSums | None:
    """The document-macro sums of merged totals: unknown (None) when one part's are."""
    known = [d for d in parts if d is not None]
    return reduce(DocSums.plus, known) if known and len(known) == len(parts) else None
