"""Stage 1 of the pipeline (decode): tags -> chunks, one side at a time (Concepts: tag schemes and repairs).

The plain vectorised decoder: `decode` turns integer-coded tags into chunks
under a scheme's tables and a repair policy (``conlleval``, ``strict``, ``discard``:
see `iescore.decode`); `decode_arrays` and `decode_tags` wrap it for
`TagArrays` and for lists of strings; `encode_spans`
is its inverse (`detect_scheme`, which guesses a scheme from the prefixes used, is
in `iescore.decode.detect`). The
fused two-sided path that also matches exactly is `iescore.decode.pair`; the
token-by-token reference decoder it is tested against is in tests/test_fast_paths.py.

Example:
    >>> from iescore.decode import decode_tags
    >>> chunks = decode_tags([["B-PER", "I-PER", "O", "I-LOC"]], scheme="IOB2")
    >>> [(chunks.labels[t], int(s), int(e)) for t, s, e in zip(chunks.type, chunks.start, chunks.end)]
    [('PER', 0, 2), ('LOC', 3, 4)]
    >>> int(chunks.n_repaired)
    1
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from ..errors import ConfigError, InputError, choices
from ..schemes import REPAIRS, B, E, I, L, O, S, Scheme, get_scheme
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
from .events import (
    _role_boundaries as _role_boundaries,  # (read by the reference decoder of the tests)
)
from .vocab import TagArrays, Vocabulary, flatten

_WINDOW = 1 << 17  # token pairs per decoding window (its buffers stay in cache)


def decode(
    ids: np.ndarray,
    first: np.ndarray | None,
    role_of: np.ndarray,
    label_of: np.ndarray,
    *,
    scheme: Scheme,
    conlleval: bool,
    segments: np.ndarray | None = None,
    groups: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    """Decode tag ids into chunks. Returns ``(start, end, label, ill, group)``.

    ``role_of`` (uint8) / ``label_of`` give each tag id's role and label id (-1 for
    ``O``); ``first`` marks segment starts (chunks never cross them) and ``segments``
    may list them (``flatnonzero(first)``) to save a pass. ``groups`` may give the
    sorted start offsets of larger units made of whole segments (documents, possibly
    empty); ``group`` is then the index of the unit each chunk is in (else None).

    Vectorised and table-driven: whether a chunk starts or ends between tokens
    ``i-1`` and ``i``, and whether that start or end is legal under the scheme,
    depends only on their roles, on whether their labels are equal and on whether
    a segment starts between them, so one look-up per token pair in a small table
    (`_pair_flags`) gives every event; the chunks are its few non-zero
    entries. The pairs are taken a window at a time in reused buffers, so the
    temporaries stay in cache.
    """
    n = len(ids)
    if n == 0:
        z = np.zeros(0, dtype=np.int64)
        return z, z, z.astype(np.int32), np.zeros(0, dtype=bool), (z if groups is not None else None)
    if segments is None:
        if first is None:
            raise ValueError("decode needs first= or segments=")
        segments = np.flatnonzero(first)
    splits = segments[segments > 0] - 1  # token pairs split by a segment start
    seg_group = _segment_groups(segments, groups, n) if groups is not None else None
    joined, split = _pair_flags(scheme, conlleval)
    k_tags = len(role_of)
    by_tag = ids.dtype.itemsize == 1 and k_tags <= 256
    if by_tag:  # the tables composed over tag-id pairs: one look-up per pair
        pair = (role_of.astype(np.intp)[:, None] * 6 + role_of[None, :]).reshape(-1)
        same = (label_of[:, None] == label_of[None, :]).reshape(-1)
        table = np.concatenate((joined[pair * 2 + same], split[pair]))
        shift = k_tags * k_tags  # codes of split pairs
        code_type = np.uint16 if 2 * shift <= 1 << 16 else np.uint32
    else:
        table = np.concatenate((joined, split.repeat(2)))
        shift, code_type = len(joined), np.uint8
    w = min(_WINDOW, max(n - 1, 1))
    code = np.empty(w, dtype=code_type)
    flags = np.empty(w, dtype=np.uint8)
    nonzero = np.empty(w, dtype=bool)
    if not by_tag:
        role = np.empty(w + 1, dtype=np.uint8)
        lab = np.empty(w + 1, dtype=label_of.dtype)
        equal = np.empty(w, dtype=bool)
    starts, ends, types, bad_s, bad_e, inner, docs = [], [], [], [], [], [], []
    r0 = int(role_of[ids[0]])
    if r0 != O:
        starts.append(np.zeros(1, np.int64))
        types.append(label_of[ids[:1]].astype(np.int32))
        bad_s.append(np.array([not scheme.start_ok[r0, 0]]))
        if groups is not None:
            docs.append(np.zeros(1, np.int64) if seg_group is None else seg_group[:1])
    for a in range(0, n - 1, w):
        m = min(a + w, n - 1) - a  # pairs (a + i, a + i + 1) for i < m
        window = ids[a : a + m + 1]
        c, f = code[:m], flags[:m]
        if by_tag:
            np.multiply(window[:m], k_tags, out=c, dtype=code_type)
            c += window[1:]
        else:
            role_of.take(window, out=role[: m + 1], mode="clip")
            label_of.take(window, out=lab[: m + 1], mode="clip")
            np.multiply(role[:m], 6, out=c)
            c += role[1 : m + 1]
            c <<= 1
            np.equal(lab[:m], lab[1 : m + 1], out=equal[:m])
            np.add(c, equal[:m], out=c, casting="unsafe")
        lo, hi = np.searchsorted(splits, (a, a + m))
        c[splits[lo:hi] - a] += shift  # a segment start splits whatever the tags say
        table.take(c, out=f, mode="clip")
        e = np.flatnonzero(np.not_equal(f, 0, out=nonzero[:m]))
        k = f[e]
        sel = (k & _START) != 0
        at = e.compress(sel) + 1
        starts.append(at + a)
        types.append(label_of.take(window[at]).astype(np.int32))
        bad_s.append((k.compress(sel) & _BAD_START) != 0)
        if groups is not None and len(at):  # the segment each start is in: the splits counted so far
            seg = np.cumsum((k & _SEG) != 0, dtype=np.int64).compress(sel)
            seg += lo
            docs.append(seg if seg_group is None else seg_group.take(seg))
        sel = (k & _END) != 0
        ends.append(e.compress(sel) + (a + 1))
        bad_e.append((k.compress(sel) & _BAD_END) != 0)
        sel = (k & _INNER) != 0
        if sel.any():
            inner.append(e.compress(sel) + a)
    rn = int(role_of[ids[n - 1]])
    if rn != O:
        ends.append(np.full(1, n, np.int64))
        bad_e.append(np.array([not scheme.end_ok[rn, 0]]))
    start = np.concatenate(starts) if starts else np.zeros(0, np.int64)
    end = np.concatenate(ends) if ends else np.zeros(0, np.int64)
    ill = np.concatenate(bad_s) if bad_s else np.zeros(0, bool)
    if bad_e:
        ill |= np.concatenate(bad_e)
    if inner:  # a B inside a chunk, or an E/L before its end (E-X B-X under conlleval)
        ill[np.searchsorted(start, np.concatenate(inner), "right") - 1] = True
    group = None
    if groups is not None:
        group = np.concatenate(docs) if docs else np.zeros(0, np.int64)
    return start, end, (np.concatenate(types) if types else np.zeros(0, np.int32)), ill, group


def decode_tags(
    sequences: Sequence[Sequence[str]],
    *,
    scheme: str | Scheme = "IOB2",
    repair: str = "conlleval",
    vocab: Vocabulary | None = None,
) -> Chunks:
    """Decode tag sequences into chunks with flat offsets (sequence after sequence).

    Convenience wrapper over `decode`; the scorer uses the array form.
    """
    vocab = vocab or Vocabulary()
    arrays, _ = flatten(sequences, vocab)
    sch = get_scheme(scheme)
    return decode_arrays(arrays, vocab, scheme=sch, repair=repair)


def decode_arrays(
    arrays: TagArrays,
    vocab: Vocabulary,
    *,
    scheme: Scheme,
    repair: str,
    where: object = None,
    groups: np.ndarray | None = None,
) -> Chunks:
    """Decode `TagArrays` under a repair policy.

    ``where`` is an optional callable ``flat_index -> str`` describing a token
    position (document and offset) for error messages; ``groups`` the sorted start
    offsets of documents, to find the document of each chunk (``Chunks.group``).
    """
    if repair not in REPAIRS:
        raise ConfigError(f"unknown repair policy {repair!r}; valid: {choices(REPAIRS)}")
    role_of, label_of = vocab.roles(scheme)
    small = len(vocab.labels) < np.iinfo(np.int16).max
    start, end, types, ill, group = decode(
        arrays.ids, None, role_of.astype(np.uint8), label_of.astype(np.int16 if small else np.int32),
        scheme=scheme, conlleval=(repair == "conlleval"), segments=arrays.segments, groups=groups,
    )
    if repair == "strict" and ill.any():
        k = int(np.flatnonzero(ill)[0])
        s, e = int(start[k]), int(end[k])
        lo = max(s - 1, 0) if not arrays.first[s] else s
        hi = min(e + 1, len(arrays.ids)) if e < len(arrays.ids) and not arrays.first[e] else e
        tags = [vocab.tags[t] for t in arrays.ids[lo:hi]]
        loc = where(s) if callable(where) else f"token {s}"
        raise InputError(
            f"ill-formed {scheme.name} chunk at {loc}: tags {tags} "
            f"(repair='strict'; use repair='conlleval' or 'discard' to accept it)"
        )
    if repair == "discard" and ill.any():
        keep = ~ill
        return Chunks(
            start[keep], end[keep], types[keep], ill[keep], vocab.labels,
            n_discarded=int(ill.sum()), group=None if group is None else group[keep], discarded=start[ill],
        )
    return Chunks(start, end, types, ill, vocab.labels, group=group)


def encode_spans(
    spans: Iterable[tuple[str, int, int]], length: int, *, scheme: str | Scheme = "IOB2",
    delimiter: str = "-",
) -> list[str]:
    """Write non-overlapping spans ``(label, start, end)`` (half-open) as tags.

    The inverse of decoding: ``decode(encode(spans)) == spans`` for every scheme
    (IO cannot separate two adjacent chunks of one label and raises for them).
    """
    sch = get_scheme(scheme)
    tags = ["O"] * length
    ordered = sorted(spans, key=lambda x: (x[1], x[2]))
    prev_end, prev_label = -1, None
    for k, (lab, s, e) in enumerate(ordered):
        if not (0 <= s < e <= length):
            raise InputError(f"span ({lab!r}, {s}, {e}) is outside [0, {length})")
        if s < prev_end:
            raise InputError(f"span ({lab!r}, {s}, {e}) overlaps the previous span; tags cannot encode it")
        adjacent = s == prev_end and lab == prev_label
        nxt = ordered[k + 1] if k + 1 < len(ordered) else None
        adjacent_next = nxt is not None and nxt[1] == e and nxt[0] == lab
        roles = [I] * (e - s)
        name = sch.name
        if name == "IO":
            if adjacent:
                raise InputError(f"IO cannot encode adjacent {lab!r} spans ending and starting at {s}")
        elif name == "IOB1":
            if adjacent:
                roles[0] = B
        elif name == "IOB2":
            roles[0] = B
        elif name == "IOE1":
            if adjacent_next:
                roles[-1] = E
        elif name == "IOE2":
            roles[-1] = E
        elif name in ("IOBES", "BMES", "BILOU"):
            end_role = L if name == "BILOU" else E
            if e - s == 1:
                roles = [S]
            else:
                roles[0], roles[-1] = B, end_role
        for t, r in enumerate(roles):
            tags[s + t] = sch.tag(r, lab, delimiter)
        prev_end, prev_label = e, lab
    return tags

