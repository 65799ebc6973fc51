"""The report stage of the pipeline across processes: a [`Scorer`][iescore.scoring.stream.Scorer]
as bytes, or the summed counts of a scorer (`Totals`) for
shards that keep no items.

A shard of a distributed run (a Spark partition, [`iescore.adapters.spark`][iescore.adapters.spark]) fills a
[`Scorer`][iescore.scoring.stream.Scorer] and sends [`Scorer.to_state`][iescore.scoring.stream.Scorer.to_state] to the driver,
which loads the states (`load_state`) and merges them in a fixed order
(`merge_states`). Two levels of what a state keeps:

* ``keep="items"``: everything (per-document cells and per-item statuses); merged
  states give exactly the report of one call, items and per-document counts included;
* ``keep="counts"``: per label the summed counts, the confusion table, the summed token
  counts and repairs, the signature's additive reference digest and a 64-bit hash per
  document id (to find duplicates): nothing per item crosses the network, and
  `Totals.report` gives a report whose ``to_dict()`` (signature included) equals
  the one-call report's, without per-document or per-item views.

A state is bytes (`iescore.scoring.wire`); a truncated, altered or foreign state,
another format version or another iescore version is an
[`InputError`][iescore.errors.InputError] saying which.

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

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..cells import CellTable
from ..confusion import Confusion
from ..docmacro import DocSums
from ..errors import ConfigError, InputError, choices
from ..ids import NumberedIds
from ..items import Arguments
from ..report import ItemTable
from .partdata import _Part
from .totals import Totals, _empty_scorer, _head, _Scorer, _value_columns
from .wire import STATE_VERSION, Reader, Writer, pack, unpack

__all__ = ["KEEP", "STATE_VERSION", "Totals", "dump_state", "load_state", "merge_states", "renumber"]

KEEP = ("items", "counts")


# --- the wire form of parts and totals ---------------------------------------------------

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
    if t.args is not None:  # relation items (keys absent in the states of entities)
        a = t.args
        out["args"] = {**{f: w.array(getattr(a, f)) for f in ("head_start", "head_end", "tail_start", "tail_end")},
                       **{f: None if getattr(a, f) is None else w.strings(getattr(a, f))
                          for f in ("head_label", "tail_label", "head_text", "tail_text")}}
    if t.ids is not None:  # link items
        out["ids"] = w.strings(t.ids)
    return out


def _load_items(r: Reader, ref: dict[str, Any]) -> ItemTable:
    cols = {f: r.array(ref[f]) for f in ("doc", "label", "start", "end", "status")}
    score = np.broadcast_to(np.nan, int(ref["score"]["nan"])) if "nan" in ref["score"] else r.array(ref["score"])
    text = None if ref["text"] is None else r.strings(ref["text"])
    args = None
    if ref.get("args") is not None:
        h = ref["args"]
        args = Arguments(**{f: r.array(h[f]) for f in ("head_start", "head_end", "tail_start", "tail_end")},  # type: ignore[arg-type]
                         **{f: None if h[f] is None else r.strings(h[f])  # type: ignore[arg-type]
                            for f in ("head_label", "tail_label", "head_text", "tail_text")})
    ids = None if ref.get("ids") is None else r.strings(ref["ids"])
    return ItemTable(**cols, score=score, text=text,  # type: ignore[arg-type]
                     category=r.array(ref["category"]), partner=r.array(ref["partner"]), args=args, ids=ids)


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
    out: dict[str, Any] = {
        "labels": list(p.labels), "ids": _dump_ids(w, p.doc_ids),
        "table": {"doc": w.array(t.doc), "label": w.array(t.label), "values": w.array(t.values),
                  "fields": list(t.fields), "n_labels": t.n_labels, "doc_tokens": w.array(t.doc_tokens),
                  "n_docs": t.n_docs},
        "confusion": _dump_confusion(w, p.confusion), "ref": _dump_items(w, p.ref), "pred": _dump_items(w, p.pred),
        "categories": w.array(p.categories), "repair_sites": p.repair_sites,
        "token_counts": w.array(p.token_counts), "repairs": p.repairs, "ts_error": p.ts_error,
        "ts_weighted": w.array(p.ts_weighted), "unit_totals": w.array(p.unit_totals), "unit_digest": p.unit_digest,
    }
    if p.multislot is not None:  # (a part loaded without them is written again without them)
        out["multislot"] = w.array(p.multislot)
    return out


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
                 {side: [str(x) for x in where] for side, where in h["repair_sites"].items()},
                 _load_multislot(r, h, len(labels)))


def _load_multislot(r: Reader, h: dict[str, Any], n_labels: int) -> np.ndarray | None:
    """The multi-slot counts of a part or totals (None in a state written without them)."""
    a = r.array(h.get("multislot"))
    if a is not None and a.shape != (n_labels, 2):
        raise InputError(f"corrupt scorer state: multi-slot counts of shape {a.shape} for {n_labels} labels")
    return a


def _dump_totals(w: Writer, t: Totals) -> dict[str, Any]:
    out = _dump_counts(w, t)
    if t.doc_sums is not None:  # (a state loaded without them is written again without them)
        out["doc_sums"] = t.doc_sums.dump()
    if t.multislot is not None:  # (likewise)
        out["multislot"] = w.array(t.multislot)
    return out


def _dump_counts(w: Writer, t: Totals) -> dict[str, Any]:
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
                  r.array(h["categories"]), {side: [str(x) for x in where] for side, where in h["repair_sites"].items()},
                  _load_doc_sums(h.get("doc_sums")), _load_multislot(r, h, len(labels)))


def _load_doc_sums(values: Any) -> DocSums | None:
    """The document-macro sums of a state (None in a state written without them)."""
    if values is None:
        return None
    try:
        return DocSums.load(values)
    except (TypeError, ValueError) as e:
        raise InputError(f"corrupt scorer state: document sums {values!r:.80} ({e})") from None


# --- entry points -----------------------------------------------------------------------

def dump_state(scorer: _Scorer, keep: str = "items", *, id_hashes: bool = True) -> bytes:
    """A scorer as bytes (see the module docstring); ``keep`` is ``"items"`` or ``"counts"``
    (``id_hashes``: see `Totals.of`)."""
    if keep not in KEEP:
        raise ConfigError(f"unknown keep {keep!r}; valid: {choices(KEEP)}")
    if scorer._totals is not None:
        raise ConfigError("a scorer made with totals_only=True cannot be sent as a state: it kept no documents "
                          "(score the shard with a Scorer that keeps them)")
    w = Writer()
    if keep == "counts":
        return pack("counts", {"totals": _dump_totals(w, Totals.of(scorer, id_hashes=id_hashes))}, w)
    header = {**_head(scorer), "parts": [_dump_part(w, p) for p in scorer._parts]}
    return pack("items", header, w)


def load_state(data: bytes | bytearray | memoryview) -> _Scorer | Totals:
    """A scorer (``keep="items"``) or its `Totals` (``keep="counts"``) from
    `dump_state`'s bytes; an InputError when they are not such a state."""
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


def renumber(state: _Scorer | Totals, offset: int) -> _Scorer | Totals:
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


def merge_states(states: Sequence[_Scorer | Totals]) -> _Scorer | Totals:
    """Merge loaded states in the order given, in a balanced tree of n - 1 pairwise merges:
    counts states have a fixed size, so the cost is linear in the shards; items states grow
    up the tree, so each item is copied about log2(n) times (a chain copies it up to n
    times). All must be of one kind."""
    items = list(states)
    if not items:
        raise ConfigError("merge_states needs at least one state")
    kinds = {type(s) is Totals for s in items}
    if len(kinds) > 1:
        raise ConfigError("cannot merge states kept with keep='items' and keep='counts': use one keep for all")
    while len(items) > 1:
        items = [items[k].merge(items[k + 1]) if k + 1 < len(items) else items[k]
                 for k in range(0, len(items), 2)]
    return items[0]
