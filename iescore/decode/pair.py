"""Stage 1 of the pipeline (decode) fused with stage 2 (exact matching), the fast path.

`decode_pair` decodes a reference and a prediction of one small vocabulary in
one pass over token pairs, with the event tables of `iescore.decode.events` composed
over both sides, and flags the chunks that have an exactly equal chunk on the other
side. The tag fast path of [`iescore.score_tags`][iescore.score_tags] uses it; its reference is the
plain decoder plus exact matching (tests/test_fast_paths.py and the brute-force
scorer of tests/spec_reference.py, through tests/test_front_ends.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from ..schemes import O, Scheme
from .events import (
    _BAD_END,
    _BAD_START,
    _END,
    _INNER,
    _SEG,
    _START,
    Chunks,
    _pair_flags,
    _segment_groups,
)

_PAIR_WINDOW = 1 << 15  # token pairs per decoding window, two sides at once (buffers stay in cache)
_PAIR_PIECE = 1 << 18  # tokens decoded two sides at once, between segment starts
PAIR_TAGS = 16  # vocabularies of at most this many tags can be decoded two sides at once
_SIDE = 6  # the prediction's flags sit this many bits above the reference's in a joint flag
_DIFF = 1 << 12  # the second token's two tags differ
_JOINT: dict[tuple[object, ...], np.ndarray] = {}


def _joint_flags(role_of: np.ndarray, label_of: np.ndarray, scheme: Scheme, conlleval: bool) -> np.ndarray:
    """The decoder's table for two aligned sequences: the flags of `_pair_flags`
    of both sides (the prediction's shifted by ``_SIDE`` bits) and ``_DIFF``, indexed
    by ``(((split * k + ref_a) * k + pred_a) * k + ref_b) * k + pred_b`` for tag ids
    ``a`` (first token) and ``b`` (second) of ``k`` tags."""
    key = (scheme.name, scheme.start_ok.tobytes(), scheme.end_ok.tobytes(), conlleval,
           role_of.tobytes(), label_of.tobytes())
    if key in _JOINT:
        return _JOINT[key]
    joined, split = _pair_flags(scheme, conlleval)
    k = len(role_of)
    pair = (role_of.astype(np.intp)[:, None] * 6 + role_of[None, :]).reshape(-1)
    same = (label_of[:, None] == label_of[None, :]).reshape(-1)
    one = np.concatenate((joined[pair * 2 + same], split[pair])).astype(np.uint16).reshape(2, k, k)
    ref = one[:, :, None, :, None]  # (split, ref_a, -, ref_b, -)
    pred = one[:, None, :, None, :]  # (split, -, pred_a, -, pred_b)
    differ = (np.arange(k)[:, None] != np.arange(k)[None, :]).astype(np.uint16) * _DIFF  # (ref_b, pred_b)
    _JOINT[key] = (ref | ((pred & (_SEG - 1)) << _SIDE) | differ).reshape(-1)
    return _JOINT[key]


@dataclass(frozen=True)
class PairChunks:
    """Both sides of an aligned pair of tag sequences decoded in one pass
    (`decode_pair`), with what exact matching and token accuracy need.

    ``ref_hit`` / ``pred_hit`` flag the chunks that have an exactly equal chunk
    (start, end and label) on the other side; ``differ`` and ``tagged`` count, per
    group, the tokens whose two tags differ and the tokens inside a chunk on one
    side at least (not ``O``).
    """

    reference: Chunks
    prediction: Chunks
    ref_hit: np.ndarray
    pred_hit: np.ndarray
    differ: np.ndarray
    tagged: np.ndarray


def decode_pair(
    ref: np.ndarray,
    pred: np.ndarray,
    role_of: np.ndarray,
    label_of: np.ndarray,
    *,
    scheme: Scheme,
    conlleval: bool,
    segments: np.ndarray,
    groups: np.ndarray,
    labels: list[str] | None = None,
    label_map: np.ndarray | None = None,
    relative: bool = False,
) -> PairChunks:
    """Decode two aligned tag-id sequences of one small vocabulary (uint8 ids, at most
    `PAIR_TAGS` tags) at once, and match their chunks exactly.

    The same tables as `decode`, composed over both sides: one look-up per
    token pair gives both sides' events and whether the tags differ, so one pass
    over the tokens finds every event of either side. Two chunks are equal when
    they start at the same event, have the same label and end at the same event;
    ``label_map`` may rename the label ids (e.g. to supertags): the chunks then carry,
    and are matched on, the mapped ids, while where a chunk ends still follows
    ``label_of`` (``labels`` names the mapped ids). Token accuracy comes
    from the events too (a token differs at a ``_DIFF`` event; the tokens between
    two events are all inside, or all outside, each side's chunks). ``segments``
    (non-empty, starting at 0) and ``groups`` are as in `decode`. With
    ``relative``, chunk offsets count from the start of their group (document)
    rather than from token 0.

    >>> from iescore.decode.vocab import Vocabulary
    >>> from iescore.schemes import get_scheme
    >>> v = Vocabulary()
    >>> r, p = v.encode(["B-PER", "I-PER", "O", "B-LOC"]), v.encode(["B-PER", "I-PER", "B-LOC", "I-LOC"])
    >>> role_of, label_of = v.roles(get_scheme("IOB2"))
    >>> out = decode_pair(r, p, role_of.astype(np.uint8), label_of, scheme=get_scheme("IOB2"),
    ...                   conlleval=True, segments=np.array([0]), groups=np.array([0]))
    >>> out.reference.start.tolist(), out.prediction.end.tolist(), out.ref_hit.tolist(), out.pred_hit.tolist()
    ([0, 3], [2, 4], [True, False], [True, False])
    >>> out.differ.tolist(), out.tagged.tolist()
    ([2], [4])
    """
    n, k = len(ref), len(role_of)
    if not (0 < n == len(pred) and ref.dtype == pred.dtype == np.uint8 and k <= PAIR_TAGS):
        raise ValueError("decode_pair: two non-empty uint8 id sequences of equal length and a small vocabulary")
    args = _PairArgs(role_of, label_of, scheme, conlleval, labels, label_map)
    # pieces of about _PAIR_PIECE tokens, cut at segment starts (no chunk crosses one):
    # each piece's event arrays are small enough to stay in cache and to be recycled
    # by the allocator, where arrays over all the events would be fresh pages each call
    cuts = [0, n]
    if n > _PAIR_PIECE:
        at = np.searchsorted(segments, np.arange(_PAIR_PIECE, n, _PAIR_PIECE))
        # sorted already (segment starts are); no np.unique, whose first call imports numpy.ma
        c = np.concatenate(([0], segments.take(at[at < len(segments)]), [n]))
        cuts = c.compress(np.concatenate(([True], c[1:] != c[:-1]))).tolist()
    pos_type = np.int32 if n < 2**31 else np.int64
    n_groups = len(groups)
    differ = np.zeros(n_groups, dtype=pos_type)  # token counts: in the offsets' width
    tagged = np.zeros(n_groups, dtype=pos_type)
    # per side, each piece's (start token, first group, shift, chunks, hit flags)
    pieces: tuple[list[Any], list[Any]] = ([], [])
    for a, b in zip(cuts[:-1], cuts[1:]):
        s_lo, s_hi = np.searchsorted(segments, (a, b))
        g_lo = int(np.searchsorted(groups, a, "right")) - 1  # the group holding token a
        g_hi = int(np.searchsorted(groups, b))
        local_groups = np.concatenate(([0], groups[g_lo + 1 : g_hi] - a))
        out = _decode_pair_piece(ref[a:b], pred[a:b], segments[s_lo:s_hi] - a, local_groups, args)
        differ[g_lo:g_hi] += out.differ
        tagged[g_lo:g_hi] += out.tagged
        # what turns the piece's offsets into the output's: + a, or + a - its group's start
        shift = a - groups[g_lo:g_hi] if relative else None
        pieces[0].append((a, g_lo, shift, out.reference, out.ref_hit))
        pieces[1].append((a, g_lo, shift, out.prediction, out.pred_hit))
        del out

    def side(entries: list[Any]) -> tuple[Chunks, np.ndarray]:
        m = sum(len(e[3].start) for e in entries)
        # group, label, start and end as rows of one block (the items' columns when relative)
        group, types, start, end = np.empty((4, m), dtype=pos_type)
        ill, hit = np.empty(m, dtype=bool), np.empty(m, dtype=bool)
        lo = 0
        for i, (a, g, shift, c, h) in enumerate(entries):
            entries[i] = None  # the piece's arrays of this side can be reused once copied
            hi = lo + len(c.start)
            off = a if shift is None else shift.take(c.group)
            np.add(c.start, off, out=start[lo:hi], casting="same_kind")
            np.add(c.end, off, out=end[lo:hi], casting="same_kind")
            np.add(c.group, g, out=group[lo:hi], casting="same_kind")
            types[lo:hi] = c.type
            ill[lo:hi] = c.ill
            hit[lo:hi] = h
            lo = hi
        return Chunks(start, end, types, ill, labels or [], group=group), hit

    (rc, ref_hit), (pc, pred_hit) = side(pieces[0]), side(pieces[1])
    return PairChunks(rc, pc, ref_hit, pred_hit, differ, tagged)


class _PairArgs(NamedTuple):
    """What every piece of `decode_pair` shares."""

    role_of: np.ndarray
    label_of: np.ndarray
    scheme: Scheme
    conlleval: bool
    labels: list[str] | None
    label_map: np.ndarray | None


def _decode_pair_piece(
    ref: np.ndarray, pred: np.ndarray, segments: np.ndarray, groups: np.ndarray, args: _PairArgs
) -> PairChunks:
    """`decode_pair` over one piece of tokens (all of them, or one cut at segment starts)."""
    role_of, label_of, scheme, conlleval, labels, label_map = args
    n, k = len(ref), len(role_of)
    table = _joint_flags(role_of, label_of, scheme, conlleval)
    splits = segments[segments > 0] - 1
    seg_group = _segment_groups(segments, groups, n)  # None: a group per segment
    pos_type = np.int32 if n < 2**31 else np.int64
    if seg_group is not None:
        seg_group = seg_group.astype(pos_type)
    n_groups = len(groups)
    kk = k * k
    shift = kk * kk  # codes of split pairs
    code_type = np.uint16 if 2 * shift <= 1 << 16 else np.uint32
    # small windows: take() converts the codes to a temporary of pointer-sized indices
    w = min(_PAIR_WINDOW, max(n - 1, 1))
    joint = np.empty(w + 1, dtype=code_type)
    code = np.empty(w, dtype=code_type)
    flags = np.empty(w, dtype=np.uint16)
    nonzero = np.empty(w, dtype=bool)
    # events: boundary b is between tokens b - 1 and b; 0 and n are boundaries too
    _, split = _pair_flags(scheme, conlleval)
    first = [int(split[O * 6 + int(role_of[x[0]])]) & ~_END for x in (ref, pred)]
    last = [int(split[int(role_of[x[n - 1]]) * 6 + O]) & (_END | _BAD_END) for x in (ref, pred)]
    at: list[np.ndarray] = [np.zeros(1, pos_type)]
    fl: list[np.ndarray] = [np.array([first[0] | (first[1] << _SIDE) | (_DIFF if ref[0] != pred[0] else 0)], np.uint16)]
    for a in range(0, n - 1, w):
        m = min(a + w, n - 1) - a  # pairs (a + i, a + i + 1) for i < m
        j = joint[: m + 1]
        np.multiply(ref[a : a + m + 1], k, out=j, dtype=code_type)
        j += pred[a : a + m + 1]  # a joint tag id per token
        c, f = code[:m], flags[:m]
        np.multiply(j[:m], kk, out=c)
        c += j[1:]
        lo, hi = np.searchsorted(splits, (a, a + m))
        c[splits[lo:hi] - a] += shift
        table.take(c, out=f, mode="clip")
        e = np.flatnonzero(np.not_equal(f, 0, out=nonzero[:m]))
        fl.append(f.take(e))
        at.append(np.add(e, a + 1, dtype=pos_type, casting="same_kind"))
    at.append(np.full(1, n, pos_type))
    fl.append(np.array([last[0] | (last[1] << _SIDE)], np.uint16))
    del joint, code, flags, nonzero
    bound = np.concatenate(at)
    K = np.concatenate(fl)
    del at, fl
    # one scratch mask, rewritten for each flag asked about
    ne = len(K)
    bits = np.empty(ne, dtype=np.uint16)
    mask = np.empty(ne, dtype=bool)

    def has(bit: int) -> np.ndarray:
        np.bitwise_and(K, bit, out=bits)
        return np.not_equal(bits, 0, out=mask)

    # every event array is written in place into a few buffers: large temporaries are
    # fresh pages, and at millions of tokens their first touch (a page fault each 4 KiB)
    # costs as much as the arithmetic
    group = np.cumsum(has(_SEG), dtype=pos_type)
    group -= 1
    if seg_group is not None:
        group = seg_group.take(group)
    differ = np.bincount(group.compress(has(_DIFF)), minlength=n_groups)
    covered = np.zeros(ne, dtype=bool)  # inside a chunk of either side after each event
    n_end = np.empty(ne, dtype=pos_type)  # chunks ended so far (one buffer for both sides)
    sides = []
    for x, sh in ((ref, 0), (pred, _SIDE)):
        n_start = np.cumsum(has(_START << sh), dtype=pos_type)  # chunks started so far
        start = bound.compress(mask)
        chunk_group = group.compress(mask)
        np.cumsum(has(_END << sh), dtype=pos_type, out=n_end)
        end = bound.compress(mask)
        ill = np.zeros(len(start), dtype=bool)
        for bit, count in ((_BAD_START, n_start), (_BAD_END, n_end), (_INNER, n_start)):
            ev = np.flatnonzero(np.bitwise_and(K, bit << sh, out=bits))
            ill[count.take(ev) - 1] = True
        covered |= np.not_equal(n_start, n_end, out=mask)  # between a chunk's start and its end
        types = label_of.take(x.take(start)).astype(np.int32)
        if label_map is not None:
            types = label_map.take(types)
        sides.append((Chunks(start, end, types, ill, labels or [], group=chunk_group), n_start))
    (rc, r_count), (pc, p_count) = sides
    both = _START | _START << _SIDE
    np.bitwise_and(K, both, out=bits)
    at_both = np.flatnonzero(np.equal(bits, both, out=mask))
    ri, pi = r_count.take(at_both), p_count.take(at_both)
    del r_count, p_count, at_both
    ri -= 1
    pi -= 1
    eq = rc.end.take(ri) == pc.end.take(pi)
    eq &= rc.type.take(ri) == pc.type.take(pi)
    ref_hit = np.zeros(len(rc.start), dtype=bool)
    pred_hit = np.zeros(len(pc.start), dtype=bool)
    ref_hit[ri.compress(eq)] = True
    pred_hit[pi.compress(eq)] = True
    # tagged tokens: the runs between an event and the next one that are inside a chunk,
    # summed per group as differences of their running total, read at each group's last
    # event (groups never decrease along the events; a group without events carries the
    # total before it)
    run = np.subtract(bound[1:], bound[:-1], out=n_end[: ne - 1])
    run *= covered[:-1]
    del covered
    np.cumsum(run, out=run)
    g = group[: ne - 1]
    last = np.flatnonzero(np.not_equal(g[1:], g[:-1], out=mask[: ne - 2]))  # type: ignore[assignment]
    last = np.append(last, ne - 2)  # type: ignore[assignment]
    total = np.zeros(n_groups + 1, dtype=np.int64)
    total[g.take(last) + 1] = run.take(last)
    np.maximum.accumulate(total, out=total)
    tagged = np.diff(total)
    return PairChunks(rc, pc, ref_hit, pred_hit, differ, tagged)
