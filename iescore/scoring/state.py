"""The report stage of the pipeline across processes: a :class:`~iescore.scoring.stream.Scorer`
as bytes, and the summed counts of a scorer (:class:`Totals`) for shards that keep no items.

A shard of a distributed run (a Spark partition, :mod:`iescore.adapters.spark`) fills a
:class:`~iescore.scoring.stream.Scorer` and sends :meth:`Scorer.to_state` to the driver,
which loads the states (:func:`load_state`) and merges them in a fixed order
(:func:`merge_states`). Two levels of what a state keeps:

* ``keep="items"``: everything (per-document cells and per-item statuses); merged
  states give exactly the report of one call, items and per-document counts included;
* ``keep="counts"``: per label the summed counts, the confusion table, the summed token
  counts and repairs, the signature's additive reference digest and a 64-bit hash per
  document id (to find duplicates): nothing per item crosses the network, and
  :meth:`Totals.report` gives a report whose ``to_dict()`` (signature included) equals
  the one-call report's, without per-document or per-item views.

A state is bytes (:mod:`iescore.scoring.wire`); a truncated, altered or foreign state,
another format version or another iescore version is an
:class:`~iescore.errors.InputError` saying which.

Example:
    >>> from iescore import Scorer, score_tags
    >>> a, b = Scorer(scheme="IOB2"), Scorer(scheme="IOB2")
    >>> a.add_tags(reference=[["B-PER", "O"]], prediction=[["B-PER", "O"]], doc_ids=["a"])
    >>> b.add_tags(reference=[["B-LOC"]], prediction=[["O"]], doc_ids=["b"])
    >>> states = [a.to_state(keep="counts"), b.to_state(keep="counts")]
    >>> r = merge_states([load_state(s) for s in states]).report()
    >>> one = score_tags(reference=[["B-PER", "O"], ["B-LOC"]], prediction=[["B-PER", "O"], ["O"]],
    ...                  doc_ids=["a", "b"], scheme="IOB2")
    >>> r.to_dict() == one.to_dict(), r.overall.tp, r.overall.fn
    (True, 1, 1)
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np

from ..cells import UNIT_FIELDS, CellTable
from ..config import Config
from ..confusion import Confusion
from ..errors import ConfigError, InputError, choices
from ..ids import NumberedIds, decimal_values, reference_digest, string_hashes
from ..report import ItemTable, Report
from .part import _Part
from .tags import REPAIR_SITES
from .wire import STATE_VERSION, Reader, Writer, pack, unpack

if TYPE_CHECKING:
    from .stream import Scorer

__all__ = ["KEEP", "STATE_VERSION", "Totals", "SummedReport", "dump_state", "load_state", "merge_states", "renumber"]

KEEP = ("items", "counts")


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


def _config_header(config: Config) -> dict[str, Any]:
    signature, detail = _config_header_of(config)
    return {"config": signature, "detail": detail}


# --- the scorer's own fields -------------------------------------------------------------

def _head(s: Scorer) -> dict[str, Any]:
    """What a scorer records besides its parts (the scheme rule, notes, weight digest)."""
    return {**_config_header(s.config), "auto": s._auto, "fixed": s._fixed, "batches": s._batches,
            "notes": s._notes, "unit": s._unit}


def _empty_scorer(h: dict[str, Any]) -> Scorer:
    """A scorer with no documents holding the recorded fields of ``h`` (see :func:`_head`)."""
    from .stream import Scorer

    s = Scorer(_config(h))
    s._auto, s._batches, s._unit = bool(h["auto"]), int(h["batches"]), h["unit"]
    s._fixed = tuple(h["fixed"]) if h["fixed"] is not None else None
    s._notes = {str(k): int(v) for k, v in h["notes"].items()}
    return s


def _dump_ids(w: Writer, ids: Sequence[str]) -> dict[str, Any]:
    if isinstance(ids, NumberedIds):
        return {"numbered": [ids.start, ids.stop]}
    return {"names": w.strings(list(ids))}


def _load_ids(r: Reader, ref: dict[str, Any]) -> Sequence[str]:
    if "numbered" in ref:
        return NumberedIds(*ref["numbered"])
    return r.strings(ref["names"])


def _dump_items(w: Writer, t: ItemTable) -> dict[str, Any]:
    out: dict[str, Any] = {f: w.array(getattr(t, f)) for f in ("doc", "label", "start", "end", "status")}
    # predictions without confidences share one all-NaN view: sent as a count
    nan = t.score.strides == (0,) or (len(t.score) > 0 and bool(np.isnan(t.score).all()))
    out["score"] = {"nan": len(t.score)} if nan else w.array(t.score)
    out["text"] = None if t.text is None else w.strings(t.text)
    out["category"], out["partner"] = w.array(t.category), w.array(t.partner)
    return out


def _load_items(r: Reader, ref: dict[str, Any]) -> ItemTable:
    cols = {f: r.array(ref[f]) for f in ("doc", "label", "start", "end", "status")}
    score = np.broadcast_to(np.nan, int(ref["score"]["nan"])) if "nan" in ref["score"] else r.array(ref["score"])
    text = None if ref["text"] is None else r.strings(ref["text"])
    return ItemTable(**cols, score=score, text=text,  # type: ignore[arg-type]
                     category=r.array(ref["category"]), partner=r.array(ref["partner"]))


def _dump_confusion(w: Writer, c: Confusion) -> dict[str, Any]:
    return {"ref": w.array(c.ref), "pred": w.array(c.pred), "count": w.array(c.count), "n_labels": c.n_labels}


def _load_confusion(r: Reader, h: dict[str, Any], n_labels: int) -> Confusion:
    ref, pred, count = (r.array(h[k]) for k in ("ref", "pred", "count"))
    assert ref is not None and pred is not None and count is not None
    if int(h["n_labels"]) != n_labels or not len(ref) == len(pred) == len(count) or (
            len(ref) and (max(ref.max(), pred.max()) > n_labels or min(ref.min(), pred.min()) < 0)):
        raise InputError(f"corrupt scorer state: a confusion table of {h['n_labels']} labels for {n_labels} labels")
    return Confusion(ref, pred, count, n_labels)


def _dump_part(w: Writer, p: _Part) -> dict[str, Any]:
    t = p.table
    return {
        "labels": list(p.labels), "ids": _dump_ids(w, p.doc_ids),
        "table": {"doc": w.array(t.doc), "label": w.array(t.label), "values": w.array(t.values),
                  "fields": list(t.fields), "n_labels": t.n_labels, "doc_tokens": w.array(t.doc_tokens),
                  "n_docs": t.n_docs},
        "confusion": _dump_confusion(w, p.confusion), "ref": _dump_items(w, p.ref), "pred": _dump_items(w, p.pred),
        "categories": w.array(p.categories), "repair_sites": p.repair_sites,
        "token_counts": w.array(p.token_counts), "repairs": p.repairs, "ts_error": p.ts_error,
        "ts_weighted": w.array(p.ts_weighted), "unit_totals": w.array(p.unit_totals), "unit_digest": p.unit_digest,
    }


def _load_part(r: Reader, h: dict[str, Any]) -> _Part:
    t = h["table"]
    table = CellTable(doc=r.array(t["doc"]), label=r.array(t["label"]), values=r.array(t["values"]),  # type: ignore[arg-type]
                      fields=tuple(t["fields"]), n_labels=int(t["n_labels"]), doc_tokens=r.array(t["doc_tokens"]),
                      n_docs=int(t["n_docs"]))
    ids = _load_ids(r, h["ids"])
    if len(ids) != table.n_docs:
        raise InputError(f"corrupt scorer state: {len(ids)} document ids for {table.n_docs} documents")
    labels = list(h["labels"])
    return _Part(labels, ids, table, _load_confusion(r, h["confusion"], len(labels)), _load_items(r, h["ref"]),
                 _load_items(r, h["pred"]), r.array(h["token_counts"]),
                 {s: {k: int(v) for k, v in d.items()} for s, d in h["repairs"].items()}, h["ts_error"],
                 r.array(h["ts_weighted"]), r.array(h["unit_totals"]), h["unit_digest"], r.array(h["categories"]),
                 {side: [str(x) for x in where] for side, where in h["repair_sites"].items()})


# --- summed counts -------------------------------------------------------------------------

class UnkeptIds(Sequence[str]):
    """The ids of ``n`` documents whose ids a summed report did not keep: it has a
    length, and reading an id raises :class:`~iescore.errors.ConfigError`."""

    def __init__(self, n: int) -> None:
        self.n = int(n)

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: Any) -> Any:
        raise ConfigError(_UNKEPT.format(what="document ids"))

    def __iter__(self) -> Iterator[str]:
        raise ConfigError(_UNKEPT.format(what="document ids"))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, UnkeptIds) and other.n == self.n

    def __hash__(self) -> int:
        return hash(("UnkeptIds", self.n))

    def __repr__(self) -> str:
        return f"UnkeptIds({self.n})"


_UNKEPT = "the {what} were not kept: this report was summed from counts (keep='counts'); use keep='items'"


@dataclass(frozen=True)
class SummedReport(Report):
    """A :class:`~iescore.report.Report` summed from :class:`Totals`: every number of
    ``to_dict()`` and the signature, no per-document or per-item rows (reading them
    raises :class:`~iescore.errors.ConfigError`)."""

    label_sums: np.ndarray | None = None  # (labels, fields): every label's counts over the documents
    ref_digest: int = 0  # the reference digest of the documents summed (iescore.ids.reference_digest)

    def __post_init__(self) -> None:  # Report's, with the label sums given rather than summed from cells
        assert self.label_sums is not None
        object.__setattr__(self, "_label_index", {lab: i for i, lab in enumerate(self.labels)})
        sums = np.array(self.label_sums, dtype=np.int64)
        sums.setflags(write=False)
        object.__setattr__(self, "_label_totals", sums)
        object.__setattr__(self, "_summary", self._compute())

    def counts(self, label: str | None = None, doc: str | int | None = None) -> Any:
        if doc is not None:
            raise ConfigError(_UNKEPT.format(what="per-document counts"))
        return super().counts(label)

    def per_document(self) -> dict[str, Any]:
        raise ConfigError(_UNKEPT.format(what="per-document counts"))

    def items(self, side: str = "prediction") -> Iterator[dict[str, Any]]:
        raise ConfigError(_UNKEPT.format(what="per-item statuses"))

    @property
    def cells(self) -> np.ndarray:
        raise ConfigError(_UNKEPT.format(what="per-document cells"))


def _value_columns(fields: Sequence[str]) -> list[int]:
    return [i for i, f in enumerate(fields) if f not in UNIT_FIELDS]


@dataclass(frozen=True)
class Totals:
    """A scorer's counts summed over its documents (``keep="counts"``); merge with
    :meth:`merge`, report with :meth:`report`. ``head`` holds what the scorer recorded
    besides its documents (options, the scheme that ``scheme="auto"`` fixed, adapter
    notes, the per-t-unit weight digest): merging applies :meth:`Scorer.merge`'s rules."""

    head: dict[str, Any]
    n_parts: int
    labels: tuple[str, ...]
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

    @classmethod
    def of(cls, scorer: Scorer, *, id_hashes: bool = True) -> Totals:
        """The summed counts of a scorer's documents; without ``id_hashes`` the explicit
        document ids are not hashed, and merging cannot find an id in two shards (the
        caller checks them otherwise, as the Spark adapter does with one Spark query)."""
        report = scorer.report() if scorer._parts else None
        if report is not None and report.ts_cells is not None:
            raise ConfigError("keep='counts' cannot sum per-t-unit TS weights exactly (they are float sums "
                              "per document): use keep='items'")
        runs: list[tuple[int, int]] = []
        names: list[str] = []
        for p in scorer._parts:
            if isinstance(p.doc_ids, NumberedIds):
                runs.append((p.doc_ids.start, p.doc_ids.stop))
            else:
                names.extend(p.doc_ids)
        head = _head(scorer)
        if report is None:
            return cls(head, 0, (), (), np.zeros((0, 0), np.int64), np.zeros(2, np.int64),
                       Confusion.empty(0), None, {}, None, 0, 0, np.zeros((0, 2), np.int64),
                       np.zeros(0, np.uint64))
        sums = report._label_totals  # type: ignore[attr-defined]
        repairs = {k: dict(v) for k, v in report.repairs.items() if k != "adapter"}
        tokens = None if report.token_counts is None else report.token_counts.sum(axis=0, dtype=np.int64)
        return cls(head, len(scorer._parts), report.labels, report.fields,
                   np.array(sums[:, _value_columns(report.fields)], dtype=np.int64),
                   report.table._units().sum(axis=0).astype(np.int64), report.confusion_counts,
                   tokens, repairs, report.ts_error, len(report.doc_ids), reference_digest(report),
                   np.array(runs, dtype=np.int64).reshape(-1, 2), _id_hashes(names if id_hashes else []),
                   None if report.categories is None else np.array(report.categories, dtype=np.int64),
                   {side: list(w) for side, w in report.repair_sites.items()})

    def renumbered(self, offset: int) -> Totals:
        """The same counts with numbered document ids moved up by ``offset``."""
        return _replace(self, runs=self.runs + offset)

    def merge(self, other: Totals) -> Totals:
        """Both shards' counts (``self``'s documents first), under :meth:`Scorer.merge`'s
        rules for options and schemes; a document id in both is an InputError."""
        merged = _empty_scorer(self.head).merge(_empty_scorer(other.head))
        if not self.n_parts or not other.n_parts:  # an empty shard adds nothing
            keep = other if not self.n_parts else self
            return _replace(keep, head=_head(merged), n_parts=self.n_parts + other.n_parts)
        if self.fields != other.fields:
            raise ConfigError(f"cannot merge counts of fields {self.fields} with counts of fields {other.fields}")
        labels = tuple(sorted(set(self.labels) | set(other.labels)))
        index = {lab: i for i, lab in enumerate(labels)}
        L = len(labels)
        values = np.zeros((L, self.values.shape[1]), dtype=np.int64)
        maps = [np.array([index[lab] for lab in t.labels], dtype=np.int64) for t in (self, other)]
        confusion = Confusion.join([(self.confusion, maps[0]), (other.confusion, maps[1])], L)
        categories: np.ndarray | None = None
        if self.categories is not None and other.categories is not None:
            categories = np.zeros((L, self.categories.shape[1]), dtype=np.int64)
        for t, m in zip((self, other), maps):
            np.add.at(values, m, t.values)
            if categories is not None and t.categories is not None:
                np.add.at(categories, m, t.categories)
        sites = {side: list(w) for side, w in self.repair_sites.items()}
        for side, where in other.repair_sites.items():  # the first few over both shards
            sites.setdefault(side, []).extend(where[: max(0, REPAIR_SITES - len(sites.get(side, [])))])
        repairs = {k: dict(v) for k, v in self.repairs.items()}
        for side, rep in other.repairs.items():
            d = repairs.setdefault(side, {})
            for k, v in rep.items():
                d[k] = d.get(k, 0) + v
        tokens = None if self.tokens is None or other.tokens is None else self.tokens + other.tokens
        runs = np.concatenate([self.runs, other.runs])
        hashes = np.concatenate([self.hashes, other.hashes])
        _check_ids(runs, hashes)
        hashes.sort()
        return Totals(_head(merged), self.n_parts + other.n_parts, labels, self.fields, values,
                      self.units + other.units, confusion, tokens, repairs, self.ts_error or other.ts_error,
                      self.n_docs + other.n_docs, (self.digest + other.digest) % 2**64, runs, hashes,
                      categories, sites)

    def report(self) -> Report:
        """The report of the summed counts (:class:`SummedReport`)."""
        scorer = _empty_scorer(self.head)
        if not self.n_parts:
            return scorer.report()
        L = len(self.labels)
        table = CellTable.empty(self.fields, L)
        sums = table._expand(self.values, np.broadcast_to(self.units, (L, 2)))
        repairs = {k: dict(v) for k, v in self.repairs.items()}
        if scorer._notes:
            repairs["adapter"] = dict(sorted(scorer._notes.items()))
        z = np.zeros(0, np.int64)
        empty = ItemTable(z, z, z, z, np.zeros(0, np.int8), np.zeros(0), None)
        from .assemble import _warn_label_sets

        report = SummedReport(config=scorer.config, labels=self.labels, doc_ids=UnkeptIds(self.n_docs), table=table,
                              confusion_counts=self.confusion, reference=empty, prediction=empty,
                              token_counts=None if self.tokens is None else self.tokens[None, :],
                              repairs=repairs, ts_error=self.ts_error, label_sums=sums, ref_digest=self.digest,
                              categories=self.categories, repair_sites={k: tuple(v) for k, v in self.repair_sites.items()})
        _warn_label_sets(report)  # the one-call warning, from the summed counts
        return report


def _replace(t: Totals, **changes: Any) -> Totals:
    from dataclasses import replace

    return replace(t, **changes)


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


def _dump_totals(w: Writer, t: Totals) -> dict[str, Any]:
    return {"head": t.head, "n_parts": t.n_parts, "labels": list(t.labels), "fields": list(t.fields),
            "values": w.array(t.values), "units": w.array(t.units), "confusion": _dump_confusion(w, t.confusion),
            "categories": w.array(t.categories), "repair_sites": t.repair_sites,
            "tokens": w.array(t.tokens), "repairs": t.repairs, "ts_error": t.ts_error, "n_docs": t.n_docs,
            "digest": t.digest, "runs": w.array(t.runs), "hashes": w.array(t.hashes)}


def _load_totals(r: Reader, h: dict[str, Any]) -> Totals:
    labels, fields = tuple(h["labels"]), tuple(h["fields"])
    values = r.array(h["values"])
    assert values is not None
    if values.shape != (len(labels), len(_value_columns(fields))):
        raise InputError(f"corrupt scorer state: counts of shape {values.shape} for {len(labels)} labels")
    confusion = _load_confusion(r, h["confusion"], len(labels))
    runs, hashes = r.array(h["runs"]), r.array(h["hashes"])
    if runs is None or hashes is None:
        raise InputError("corrupt scorer state: summed counts without their document ids")
    return Totals(h["head"], int(h["n_parts"]), labels, fields, values, r.array(h["units"]), confusion,  # type: ignore[arg-type]
                  r.array(h["tokens"]), {s: {k: int(v) for k, v in d.items()} for s, d in h["repairs"].items()},
                  h["ts_error"], int(h["n_docs"]), int(h["digest"]), runs, hashes,
                  r.array(h["categories"]), {side: [str(x) for x in where] for side, where in h["repair_sites"].items()})


# --- entry points -----------------------------------------------------------------------

def dump_state(scorer: Scorer, keep: str = "items", *, id_hashes: bool = True) -> bytes:
    """A scorer as bytes (see the module docstring); ``keep`` is ``"items"`` or ``"counts"``
    (``id_hashes``: see :meth:`Totals.of`)."""
    if keep not in KEEP:
        raise ConfigError(f"unknown keep {keep!r}; valid: {choices(KEEP)}")
    w = Writer()
    if keep == "counts":
        return pack("counts", {"totals": _dump_totals(w, Totals.of(scorer, id_hashes=id_hashes))}, w)
    header = {**_head(scorer), "parts": [_dump_part(w, p) for p in scorer._parts]}
    return pack("items", header, w)


def load_state(data: bytes | bytearray | memoryview) -> Scorer | Totals:
    """A scorer (``keep="items"``) or its :class:`Totals` (``keep="counts"``) from
    :func:`dump_state`'s bytes; an InputError when they are not such a state."""
    header, r = unpack(data)
    try:
        if header["kind"] == "counts":
            return _load_totals(r, header["totals"])
        if header["kind"] != "items":
            raise InputError(f"unknown kind of scorer state {header['kind']!r}; valid: {choices(KEEP)}")
        s = _empty_scorer(header)
        for h in header["parts"]:
            s._add_part(_load_part(r, h))
        return s
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        if isinstance(exc, InputError | ConfigError):
            raise
        raise InputError(f"corrupt scorer state: {type(exc).__name__}: {exc}") from exc


def renumber(state: Scorer | Totals, offset: int) -> Scorer | Totals:
    """Numbered document ids ("0", "1", ...) moved up by ``offset``: shards that numbered
    their documents from 0 become consecutive runs (the driver knows each shard's offset)."""
    if isinstance(state, Totals):
        return state.renumbered(offset)
    out = _empty_scorer(_head(state))
    for p in state._parts:
        if isinstance(p.doc_ids, NumberedIds):
            p = _Part(**{**p.__dict__, "doc_ids": NumberedIds(p.doc_ids.start + offset, p.doc_ids.stop + offset)})
        out._add_part(p)
    return out


def merge_states(states: Sequence[Scorer | Totals]) -> Scorer | Totals:
    """Merge loaded states in the order given (a balanced tree of pairwise merges, so the
    cost grows as n log n with the number of shards, not n^2); all must be of one kind."""
    items = list(states)
    if not items:
        raise ConfigError("merge_states needs at least one state")
    kinds = {type(s) is Totals for s in items}
    if len(kinds) > 1:
        raise ConfigError("cannot merge states kept with keep='items' and keep='counts': use one keep for all")
    while len(items) > 1:
        items = [items[k].merge(items[k + 1]) if k + 1 < len(items) else items[k]  # type: ignore[arg-type]
                 for k in range(0, len(items), 2)]
    return items[0]
