"""Stage 1 of the pipeline for tag input, driven: a
[`TaggedBatch`][iescore.scoring.batch.TaggedBatch] decoded into units, then scored.

`_tags_part` decodes both sides (`iescore.decode`), numbers the labels
as the report will, builds the units and hands them to
`_score_units`, then adds token accuracy. Its fast path
(``detail="prf"``, exact, small vocabulary) decodes and matches both sides in one
pass (`decode_pair`, via `_decode_both`) and takes
the token sums from the same pass; otherwise `_token_sums` counts them in
windows.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from ..config import Config
from ..decode.decoder import decode_arrays
from ..decode.detect import detect_scheme
from ..decode.pair import PAIR_TAGS, PairChunks, decode_pair
from ..errors import ConfigError
from ..match.units import Units
from ..schemes import Scheme, get_scheme
from .batch import TaggedBatch, _locator
from .part import _check_prf, _keys, _label_space, _removed, _score_units
from .partdata import _CELL, _I64, REPAIR_SITES, _Part

_TOKEN_WINDOW = 1 << 17


def _token_sums(ref: np.ndarray, pred: np.ndarray, o_id: int, starts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per run of tokens beginning at ``starts`` (sorted, non-empty runs, the last
    one ending at the end): how many tags differ, and how many tokens are not ``O``
    on one side at least. A window at a time, in reused buffers: running counts
    (cumulative sums) are read at the run boundaries, and the runs' counts are their
    differences."""
    n, w = len(ref), _TOKEN_WINDOW
    bounds = np.append(starts, n)
    before = np.zeros((2, len(bounds)), dtype=_I64)  # differing / tagged tokens before each boundary
    d_buf, t_buf, o_buf = (np.empty(min(w, n), dtype=bool) for _ in range(3))
    run_buf = np.empty(min(w, n), dtype=np.int32)
    carry = [0, 0]
    for a in range(0, n, w):
        m = min(a + w, n) - a
        r, p = ref[a : a + m], pred[a : a + m]
        d = np.not_equal(r, p, out=d_buf[:m])
        t = np.not_equal(r, o_id, out=t_buf[:m])
        t |= np.not_equal(p, o_id, out=o_buf[:m])
        lo, hi = np.searchsorted(bounds, (a, a + m), "right")  # boundaries in (a, a + m]
        local = bounds[lo:hi] - (a + 1)
        for k, x in enumerate((d, t)):
            running = np.cumsum(x, dtype=np.int32, out=run_buf[:m])
            before[k, lo:hi] = running.take(local)
            before[k, lo:hi] += carry[k]
            carry[k] += int(running[m - 1])
    differ, tagged = np.diff(before, axis=1)
    return differ, tagged


def _label_order(names: list[str], cfg: Config, dtype: type) -> tuple[list[str], np.ndarray]:
    """The report's labels for the vocabulary's (distinct) label ``names``, and each name's
    number among them (``_label_space`` as an array; without supertags by one sort of
    the names' positions, no dict of the names)."""
    if cfg.supertag_map() or cfg.filters_types():  # (a name left out: -1)
        labels, remap = _label_space(names, cfg)
        return labels, np.fromiter(map(remap.__getitem__, names), dtype=dtype, count=len(names))
    order = sorted(range(len(names)), key=names.__getitem__)
    lab_map: np.ndarray = np.empty(len(names), dtype=dtype)
    lab_map[order] = np.arange(len(names), dtype=dtype)
    return list(map(names.__getitem__, order)), lab_map


def _decode_both(
    batch: TaggedBatch, scheme: Scheme, cfg: Config, label_map: np.ndarray | None, labels: list[str]
) -> PairChunks | None:
    """Both sides decoded and matched in one pass (`decode_pair`)
    when only exact counts are asked for (``detail="prf"``) and the vocabulary is small;
    else None (each side is then decoded on its own). Under ``repair="strict"`` an
    ill-formed chunk also gives None, so that the one-side decoder reports it. The
    chunks come labelled in the report's numbering (``label_map[vocabulary label]``,
    None when the two agree; ``labels`` are the report's), with document-relative
    offsets: they are the items as they are."""
    ref, pred, vocab = batch.reference, batch.prediction, batch.vocab
    if not (cfg.detail == "prf" and cfg.setting == "AO" and cfg.rule.kind == "exact" and cfg.mode == "match-all"
            and cfg.repair in ("conlleval", "strict") and not cfg.filters_types() and 0 < len(ref.ids) and len(vocab.tags) <= PAIR_TAGS
            and ref.ids.dtype == pred.ids.dtype == np.uint8):
        return None
    if ref.segments is not pred.segments and not np.array_equal(ref.segments, pred.segments):
        return None
    role_of, label_of = vocab.roles(scheme)
    small = len(vocab.labels) < np.iinfo(np.int16).max
    out = decode_pair(
        ref.ids, pred.ids, role_of.astype(np.uint8), label_of.astype(np.int16 if small else np.int32),
        scheme=scheme, conlleval=cfg.repair == "conlleval", segments=ref.segments, groups=batch.doc_offsets,
        labels=labels, label_map=label_map, relative=True,
    )
    if cfg.repair == "strict" and (out.reference.ill.any() or out.prediction.ill.any()):
        return None
    return out


def _kept_chunks(ch: Any, lab_map: np.ndarray, side: str, names: Sequence[str], cfg: Config,
                 removed: dict[str, dict[str, int]]) -> Any:
    """A side's decoded chunks without those of a type left out (``keep_types``,
    ``remove_types``: ``lab_map`` gives them -1), counted into ``removed``. Chunks are
    decoded first and left out after, so a left-out chunk never leaves its neighbours'
    tags orphaned (``B-X I-Y`` is decoded as under the scheme, whatever X's fate)."""
    keep = lab_map.take(ch.type) >= 0
    if keep.all():
        return ch
    removed.update(_removed(names, side, ch.type[~keep], cfg))
    return replace(ch, start=ch.start[keep], end=ch.end[keep], type=ch.type[keep], ill=ch.ill[keep],
                   group=None if ch.group is None else ch.group[keep])


def _outside_removed(batch: TaggedBatch, scheme: Scheme, lab_map: np.ndarray, o_id: int) -> tuple[np.ndarray, np.ndarray, int]:
    """Both sides' tag ids with every tag of a type left out made outside (for token
    accuracy: its tokens are outside), and the outside id (a new one when the vocabulary
    has no outside tag)."""
    ref, pred = batch.reference.ids, batch.prediction.ids
    _, label_of = batch.vocab.roles(scheme)
    gone = (label_of >= 0) & (lab_map.take(np.maximum(label_of, 0), mode="clip") < 0)
    if not gone.any():
        return ref, pred, o_id
    if o_id < 0:
        o_id = len(label_of)
    table = np.arange(len(label_of), dtype=np.int64)
    table[gone] = o_id
    return table.take(ref), table.take(pred), o_id


def _repair_sites(batch: TaggedBatch, side: str, ch: Any, *, relative: bool) -> list[str]:
    """Where the first `REPAIR_SITES` repaired (or discarded) chunks of a side start:
    the input's own description of the position (a file's ``path:line (side)``), after
    ``document 'id', token k`` when that description does not name the document."""
    if ch.discarded is not None:
        flat = ch.discarded[:REPAIR_SITES].astype(_I64)
    else:
        k = np.flatnonzero(ch.ill)[:REPAIR_SITES]
        flat = ch.start[k].astype(_I64)
        if relative:  # the pair decoder's offsets are document-relative
            flat = flat + batch.doc_offsets[ch.group[k]]
    docs = np.searchsorted(batch.doc_offsets, flat, side="right") - 1
    out = []
    for i, d in zip(flat.tolist(), docs.tolist()):
        at = f"document {batch.doc_ids[d]!r}, token {i - int(batch.doc_offsets[d])}"
        own = batch.where(i, side) if batch.where is not None else ""
        out.append(own if own.startswith("document ") else f"{at} ({own})" if own else at)
    return out


def _check_config(cfg: Config, has_tokens: bool) -> bool:
    """Raise the ConfigError `_tags_part` would raise for ``cfg`` whatever the tags,
    before any batch is scored ([`add_tags`][iescore.scoring.stream.Scorer.add_tags] scores small
    batches later, together). Returns whether the units need their strings (keys)."""
    need_keys = cfg.setting == "OBD" or cfg.mode == "one-per-string"
    if need_keys and not has_tokens:
        raise ConfigError(
            f"setting={cfg.setting!r}, mode={cfg.mode!r} compares strings and needs the tokens; pass tokens="
        )
    if cfg.detail == "prf":
        _check_prf(cfg, True)  # tags decode to disjoint units
    return need_keys


def _tags_part(batch: TaggedBatch, cfg: Config, *, detected: bool = False) -> tuple[_Part, str]:
    """The part of a tagged batch (``detected``: ``cfg.scheme`` was detected from the
    gold tags under ``scheme="auto"``, which an invalid tag's error then says)."""
    vocab = batch.vocab
    scheme_name = cfg.scheme
    if scheme_name in ("auto", "spans"):
        scheme_name, detected = detect_scheme(batch.reference, vocab), True
    scheme = get_scheme(scheme_name)
    cfg = cfg.with_(scheme=scheme.name)
    offsets = batch.doc_offsets
    n_docs = len(batch.doc_ids)

    def where(side: str) -> Callable[[int], str]:
        def f(i: int) -> str:
            if batch.where is not None:
                return batch.where(i, side)
            return f"{side} token {i}"

        return f

    # checks every tag against the scheme and registers its label
    vocab.roles(scheme, locate=_locator(batch), detected=detected)
    # items in 32 bits (half the memory per item) below 2**31 tokens
    narrow = np.int32 if batch.n_tokens < 2**31 else _I64
    labels, lab_map = _label_order(vocab.labels, cfg, narrow)  # lab_map: vocabulary label -> the report's
    same_labels = np.array_equal(lab_map, np.arange(len(lab_map)))  # no renumbering
    # the joint decoder gives the chunks their labels in the report's numbering
    pair = _decode_both(batch, scheme, cfg, None if same_labels else lab_map, labels)
    if pair is not None:
        rc, pc = pair.reference, pair.prediction
    else:
        rc = decode_arrays(batch.reference, vocab, scheme=scheme, repair=cfg.repair, where=where("reference"), groups=offsets)
        pc = decode_arrays(batch.prediction, vocab, scheme=scheme, repair=cfg.repair, where=where("prediction"), groups=offsets)

    def units(ch: Any) -> Units:
        # the items' four columns in one block (at scale, large enough for numpy's
        # huge-page hint, so fewer page faults when it is first written)
        doc, lab, start, end = np.empty((4, len(ch.start)), dtype=narrow)
        doc[...] = ch.group
        if same_labels:
            lab[...] = ch.type
        else:
            lab_map.take(ch.type, out=lab, mode="clip")  # lab_map is in the items' width
        # document-relative offsets
        base = offsets.take(ch.group)
        np.subtract(ch.start, base, out=start, casting="same_kind")
        np.subtract(ch.end, base, out=end, casting="same_kind")
        return Units(doc, lab, start, end, None, None)

    def pair_units(ch: Any) -> Units:
        # the pair decoder's offsets are document-relative already, its columns one block
        return Units(ch.group, ch.type, ch.start, ch.end, None, None)

    removed: dict[str, dict[str, int]] = {}
    if cfg.filters_types():
        rc = _kept_chunks(rc, lab_map, "reference", vocab.labels, cfg, removed)
        pc = _kept_chunks(pc, lab_map, "prediction", vocab.labels, cfg, removed)
    kind = "discarded" if cfg.repair == "discard" else "repaired"
    repairs = {side: {kind: int(ch.n_discarded if kind == "discarded" else ch.n_repaired), **removed.get(side, {})}
               for side, ch in (("reference", rc), ("prediction", pc))}
    sites = {side: _repair_sites(batch, side, ch, relative=pair is not None)
             for side, ch in (("reference", rc), ("prediction", pc))}
    make = pair_units if pair is not None else units
    R, P = make(rc), make(pc)
    # of the joint decoding only the matches and the token sums are still needed
    hits, token_sums = ((pair.ref_hit, pair.pred_hit), (pair.differ, pair.tagged)) if pair is not None else (None, None)
    del rc, pc, pair
    toks = batch.tokens

    def span_tokens(U: Units) -> Callable[[int], Sequence[str]]:
        assert toks is not None and U.start is not None and U.end is not None
        at, start, end = offsets.take(U.doc), U.start, U.end
        return lambda i: toks[int(at[i] + start[i]) : int(at[i] + end[i])]

    def span_texts(U: Units) -> Callable[[], list[str]]:
        """All the units' texts at once (their tokens joined by spaces)."""
        def texts() -> list[str]:
            assert toks is not None and U.start is not None and U.end is not None
            at = offsets.take(U.doc)
            join = " ".join
            return [join(toks[a:b]) for a, b in zip((at + U.start).tolist(), (at + U.end).tolist())]

        return texts

    need_keys = _check_config(cfg, toks is not None)
    texts_r = texts_p = None
    if toks is not None:
        tok_r, tok_p = span_tokens(R), span_tokens(P)
        texts_r, texts_p = span_texts(R), span_texts(P)
        if need_keys:
            R = Units(R.doc, R.label, R.start, R.end, None, _keys(tok_r, len(R), cfg))
            P = Units(P.doc, P.label, P.start, P.end, None, _keys(tok_p, len(P), cfg))
    # tokens per document, in 32 bits when they fit (they are the token counts' first column)
    doc_tokens = np.diff(offsets, append=batch.n_tokens) if n_docs else np.zeros(0, _I64)
    if batch.n_tokens < 2**31:
        doc_tokens = doc_tokens.astype(_CELL)
    part = _score_units(
        R, P, cfg=cfg, labels=labels, doc_ids=batch.doc_ids, doc_tokens=doc_tokens,
        texts_r=texts_r, texts_p=texts_p, disjoint=True, hits=hits,
    )
    del hits
    # token accuracy (conlleval: every token line, -DOCSTART- included)
    tc = np.zeros((n_docs, 4), dtype=_CELL)
    tc[:, 0] = doc_tokens
    if token_sums is not None:
        full: slice | np.ndarray = slice(None)
        differ, tagged = token_sums
    else:
        full = np.flatnonzero(doc_tokens > 0)
        ref_ids, pred_ids, o_id = batch.reference.ids, batch.prediction.ids, vocab.tag_ids.get(vocab.outside, -1)
        if cfg.filters_types():
            ref_ids, pred_ids, o_id = _outside_removed(batch, scheme, lab_map, o_id)
        differ, tagged = _token_sums(ref_ids, pred_ids, o_id, offsets[full])
    tc[full, 1] = doc_tokens[full] - differ
    tc[full, 2] = tagged
    tc[full, 3] = tagged - differ  # two differing tags are never both O
    if batch.extra is not None:
        tc[:, :2] += batch.extra
    part.token_counts = tc
    part.repairs.update(repairs)
    part.repair_sites.update({side: where for side, where in sites.items() if where})
    return part, scheme.name
