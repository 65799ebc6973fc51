"""Stages 2-3 of the pipeline (match and count) fused for exact matching of spans
that never overlap within a side (decoded tags): the fast path.

A prediction can then equal at most one answer, so any-match and one-to-one counting
agree and matching is one merge of (document, start) keys. Its reference is the
general path (`iescore.match.rules.ao_pairs` + `iescore.match.count.count`),
compared in tests/test_fast_paths.py, and the brute-force scorer of
tests/spec_reference.py (tests/test_front_ends.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .units import _I64, FN, FP, SPAN_FIELDS, EngineResult, Units


def exact_disjoint(
    R: Units,
    P: Units,
    n_cells: int,
    n_labels: int,
    *,
    n_fields: int = len(SPAN_FIELDS),
    dtype: Any = np.int32,
    hits: tuple[np.ndarray, np.ndarray] | None = None,
) -> EngineResult:
    """Exact-match counts for spans that never overlap within a side (decoded tags).

    A prediction can then equal at most one answer, so any-match and one-to-one
    counting agree, and matching is one merge of the two sides' (document, start) keys
    instead of pair generation.
    The units carry their ``cell`` rows (`cell_index`, ``n_cells`` rows).
    ``n_fields`` < 7 keeps only the first fields of the cells (``tp, fp, fn``: 3), and
    ``dtype`` is the cells' integer type. ``hits`` may give which answers and which
    predictions have an equal on the other side, when the decoder found them
    (`decode_pair`); only the counting is then left.
    """
    assert R.cell is not None and P.cell is not None
    ref_hit, hit = hits if hits is not None else _exact_hits(R, P)
    miss = ~ref_hit
    fp = ~hit
    # tp, fp and fn of every cell, one field at a time (each count in 64 bits only
    # while it is written into its column)
    cells = np.zeros((n_cells, n_fields), dtype=dtype) if n_fields > 3 else np.empty((n_cells, n_fields), dtype=dtype)
    for col, (cell, where) in enumerate(((P.cell, hit), (P.cell, fp), (R.cell, miss))):
        cells[:, col] = np.bincount(cell.compress(where), minlength=n_cells)
    # statuses by arithmetic on the hit flags (TP = 0, FP = 1, FN = 2)
    ref_status = np.multiply(miss, FN, dtype=np.int8)
    pred_status = np.multiply(fp, FP, dtype=np.int8)
    from ..confusion import Confusion

    z = np.zeros(0, dtype=_I64)
    return EngineResult(cells, ref_status, pred_status, z, z, np.zeros(0, dtype=bool), Confusion.empty(n_labels))


def _exact_hits(R: Units, P: Units) -> tuple[np.ndarray, np.ndarray]:
    """Which answers and which predictions have an exactly equal span on the other
    side (spans of one side never start at the same token of a document)."""
    assert R.start is not None and R.end is not None and P.start is not None and P.end is not None
    span = int(max(R.end.max(initial=0), P.end.max(initial=0))) + 1
    n_r = len(R)
    # (document, start) keys of both sides, written in place (no large temporaries)
    keys = np.empty(n_r + len(P), dtype=_I64)
    for U, k in ((R, keys[:n_r]), (P, keys[n_r:])):
        np.multiply(U.doc, span, out=k)
        k += U.start  # type: ignore[arg-type]  # spans: start is set
    # a key is unique within a side (disjoint spans), so equal neighbours in the merged
    # order are one answer and one prediction; a stable sort of two sorted runs is a merge
    order = np.argsort(keys, kind="stable")
    keys = keys.take(order)
    same = np.flatnonzero(keys[1:] == keys[:-1])
    r_at, p_at = order.take(same), order.take(same + 1)
    if len(same) and (r_at.max() >= n_r or p_at.min() < n_r):
        raise ValueError("exact_disjoint: two spans of one side start at the same token")
    del keys, order, same
    p_at -= n_r
    hit_at = (R.end.take(r_at) == P.end.take(p_at)) & (R.label.take(r_at) == P.label.take(p_at))
    hit = np.zeros(len(P), dtype=bool)
    ref_hit = np.zeros(n_r, dtype=bool)
    hit[p_at.compress(hit_at)] = True
    ref_hit[r_at.compress(hit_at)] = True
    return ref_hit, hit
