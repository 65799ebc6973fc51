"""Stage 1 of the pipeline (decode), shared by both decoders: the chunks they give
(`Chunks`), the event flags of a tag after its predecessor under a scheme (chunk start,
end, inside, ill-formed start or end, segment start), as tables over role pairs, and the
documents of the segments (the plain decoder `iescore.decode.decoder` and the fused
two-sided path `iescore.decode.pair` read them)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..schemes import B, E, L, O, S, Scheme


@dataclass(frozen=True)
class Chunks:
    """Decoded chunks: flat token offsets ``[start, end)``, label ids, and flags.

    ``ill`` marks chunks that are ill-formed under the scheme (kept and counted
    under ``repair="conlleval"``; absent under ``"discard"``, which counts them in
    ``n_discarded``).
    """

    start: np.ndarray
    end: np.ndarray
    type: np.ndarray
    ill: np.ndarray
    labels: list[str] = field(default_factory=list)
    n_discarded: int = 0
    group: np.ndarray | None = None  # the document each chunk starts in, when asked for
    discarded: np.ndarray | None = None  # flat start offsets of the discarded chunks (repair="discard")

    @property
    def n_repaired(self) -> int:
        """Number of kept chunks that were ill-formed (repaired by conlleval's rules)."""
        return int(self.ill.sum())


def _role_boundaries(conlleval: bool) -> np.ndarray:
    """``(6, 6)`` bool: does the pair (previous role, current role) split two tokens
    even when both are inside with the same label? (Concepts: tag schemes and repairs; the decoding policies above)."""
    p = np.arange(6)[:, None]
    c = np.arange(6)[None, :]
    bnd: np.ndarray = (p == S) | (c == S) | (p == L)
    if conlleval:
        bnd = bnd | ((c == B) & (p != E)) | ((p == E) & (c != B))
    else:
        bnd = bnd | (c == B) | (p == E)
    return bnd


# event flags of two adjacent tokens
_START, _END, _INNER, _BAD_START, _BAD_END, _SEG = 1, 2, 4, 8, 16, 32
_TABLES: dict[tuple[str, bytes, bytes, bool], tuple[np.ndarray, np.ndarray]] = {}


def _pair_flags(scheme: Scheme, conlleval: bool) -> tuple[np.ndarray, np.ndarray]:
    """The decoder's two tables of event flags for adjacent tokens.

    ``joined[(prev_role * 6 + role) * 2 + same_label]`` for tokens of one segment,
    ``split[prev_role * 6 + role]`` across a segment start. Flags: ``_START`` (the
    second token starts a chunk), ``_END`` (the first ends one), ``_BAD_START`` /
    ``_BAD_END`` (that start or end is illegal under the scheme's ``start_ok`` /
    ``end_ok`` tables), ``_INNER`` (the tokens continue one chunk but a ``B``
    inside it, or an ``E``/``L`` before its end, makes it ill-formed) and ``_SEG``
    (every split pair: a segment starts at the second token, so segments are counted
    among the events).
    """
    key = (scheme.name, scheme.start_ok.tobytes(), scheme.end_ok.tobytes(), conlleval)
    if key in _TABLES:
        return _TABLES[key]
    bnd = _role_boundaries(conlleval)
    joined = np.zeros((6, 6, 2), dtype=np.uint8)
    split = np.zeros((6, 6), dtype=np.uint8)
    for p in range(6):
        for c in range(6):
            for same in (0, 1):
                # same label: both inside with one label (O's label never equals a label)
                both = p != O and c != O and bool(same)
                cont = both and not bnd[p, c]
                f = 0
                if c != O and not cont:
                    f |= _START | (0 if scheme.start_ok[c, int(both)] else _BAD_START)
                if p != O and not cont:
                    f |= _END | (0 if scheme.end_ok[p, int(both)] else _BAD_END)
                if cont and (c == B or p in (E, L)):
                    f |= _INNER
                joined[p, c, same] = f
            f = 0
            if c != O:
                f |= _START | (0 if scheme.start_ok[c, 0] else _BAD_START)
            if p != O:
                f |= _END | (0 if scheme.end_ok[p, 0] else _BAD_END)
            split[p, c] = f | _SEG
    _TABLES[key] = (joined.reshape(-1), split.reshape(-1))
    return _TABLES[key]


def _segment_groups(segments: np.ndarray, groups: np.ndarray, n: int) -> np.ndarray | None:
    """The group (document) of each segment -- the one at token 0, then one per later
    segment start -- or None when every group is exactly one segment (the segment index
    is then the group)."""
    if len(segments) and segments[0] == 0:
        seg_starts = segments
    else:
        seg_starts = np.concatenate((np.zeros(1, np.int64), segments[segments > 0]))
    if len(groups) == len(seg_starts) and np.array_equal(groups, seg_starts):
        return None
    nonempty = groups[np.diff(groups, append=n) > 0]
    at = np.searchsorted(seg_starts, nonempty)
    if len(nonempty) and (at[-1] >= len(seg_starts) or not np.array_equal(seg_starts[at], nonempty)):
        raise ValueError("decode: every non-empty group must start at a segment start")
    return np.searchsorted(groups, seg_starts, "right") - 1
