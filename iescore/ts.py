"""Stage 3 of the pipeline (count), the token & separator model (Concepts: token & separator model).

TS counts per (document, label) cell come from the same-label pairs' overlap lengths
(`iescore.match.rules`), with no per-token arrays; weighted TS uses per-document
prefix sums of the per-t-unit weights. Multi-instance input (two overlapping
same-label spans on one side) is refused (`check_multi_instance`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .match.rules import Pairs
from .match.units import _I64, Units, _per_cell
from .measures import TS_CELL_FIELDS as TS_CELL_FIELDS
from .measures import TS_FIELDS as TS_FIELDS


def check_multi_instance(U: Units, labels: Sequence[str], side: str, doc_ids: Sequence[str]) -> tuple[int, str] | None:
    """``(document index, message)`` for the first document where two same-label spans of
    one side overlap (TS multi-instance), else None."""
    if len(U) < 2:
        return None
    assert U.start is not None and U.end is not None
    o = np.lexsort((U.start, U.label, U.doc))
    d, lab, s, e = U.doc[o], U.label[o], U.start[o], U.end[o]
    grp_start = np.ones(len(o), dtype=bool)
    grp_start[1:] = (d[1:] != d[:-1]) | (lab[1:] != lab[:-1])
    gid = np.cumsum(grp_start) - 1
    # running max of the previous ends within each group; offsetting by group id
    # keeps every group's values above all earlier groups' so one accumulate serves all
    prev_e = np.concatenate(([-1], e[:-1]))
    prev_e[grp_start] = -1
    big = int(e.max()) + 2
    runmax = np.maximum.accumulate(prev_e + gid * big) - gid * big
    bad = np.flatnonzero(s < runmax)
    if len(bad) == 0:
        return None
    k = int(bad[0])
    return int(d[k]), (
        f"the token & separator model rejects multi-instance input: in document "
        f"{doc_ids[int(d[k])]!r} the {side} has two overlapping {labels[int(lab[k])]!r} spans "
        f"(one starts at token {int(s[k])} inside another ending at {int(runmax[k])})"
    )


def _doc_prefix(w: np.ndarray, sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Prefix sums of the flat weights ``w`` that restart at every document (each document's
    run starts with its own 0), and where each document's run starts. A document's sums
    never depend on the documents before it, so shards add up exactly like one call."""
    ends = np.cumsum(sizes)
    runs = [np.concatenate(([0.0], np.cumsum(w[e - n : e]))) for e, n in zip(ends.tolist(), sizes.tolist())]
    starts = ends - sizes + np.arange(len(sizes))  # one leading 0 per document before it
    return (np.concatenate(runs) if runs else np.zeros(1)), starts


def _weight_prefix(
    tok_w: np.ndarray, sep_w: np.ndarray, n_tokens: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per document: where its token and separator prefix sums start, and its separator
    count; and the per-document prefix sums of the token and separator weights."""
    seps = np.maximum(n_tokens - 1, 0)
    Wt, tok_off = _doc_prefix(tok_w, n_tokens)
    Ws, sep_off = _doc_prefix(sep_w, seps)
    return tok_off, sep_off, seps, Wt, Ws


def unit_totals(tok_w: np.ndarray, sep_w: np.ndarray, n_tokens: np.ndarray) -> np.ndarray:
    """``(n_docs, 2)``: each document's total token weight and total separator weight
    (flat per-t-unit weights as in `ts_weighted`)."""
    tok_off, sep_off, seps, Wt, Ws = _weight_prefix(tok_w, sep_w, n_tokens)
    return np.stack([Wt[tok_off + n_tokens] - Wt[tok_off], Ws[sep_off + seps] - Ws[sep_off]], axis=1)


def ts_weighted(
    R: Units, P: Units, pairs: Pairs, tok_w: np.ndarray, sep_w: np.ndarray, n_tokens: np.ndarray, n_labels: int
) -> np.ndarray:
    """Weighted TS counts per (document, label) (``TS_FIELDS`` order, float64).

    ``tok_w``/``sep_w`` are the flat per-t-unit weights of all documents in order
    (``n_tokens[d]`` tokens and ``n_tokens[d] - 1`` separators each). Prefix sums give
    the weight of any token or separator range, so each span and each same-label
    overlap costs two look-ups.
    """
    n_docs, L = len(n_tokens), n_labels
    assert R.start is not None and R.end is not None and P.start is not None and P.end is not None
    tok_off, sep_off, seps, Wt, Ws = _weight_prefix(tok_w, sep_w, n_tokens)

    def tok(doc: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        out: np.ndarray = Wt[tok_off[doc] + b] - Wt[tok_off[doc] + a]
        return out

    def sep(doc: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        # separators a .. b-2 lie inside tokens [a, b)
        hi = np.maximum(b - 1, a)
        out: np.ndarray = Ws[sep_off[doc] + hi] - Ws[sep_off[doc] + a]
        return out

    same = pairs.same
    r, p = pairs.r[same], pairs.p[same]
    lo = np.maximum(R.start[r], P.start[p])
    hi = np.minimum(R.end[r], P.end[p])
    d = R.doc[r]

    def cell(doc: np.ndarray, lab: np.ndarray, w: np.ndarray) -> np.ndarray:
        return np.bincount(doc.astype(_I64) * L + lab, weights=w, minlength=n_docs * L).reshape(n_docs, L)

    tok_tp = cell(d, R.label[r], tok(d, lo, hi))
    sep_tp = cell(d, R.label[r], sep(d, lo, hi))
    r_tok = cell(R.doc, R.label, tok(R.doc, R.start, R.end))
    p_tok = cell(P.doc, P.label, tok(P.doc, P.start, P.end))
    r_sep = cell(R.doc, R.label, sep(R.doc, R.start, R.end))
    p_sep = cell(P.doc, P.label, sep(P.doc, P.start, P.end))
    doc_tok = Wt[tok_off + n_tokens] - Wt[tok_off]
    doc_sep = Ws[sep_off + seps] - Ws[sep_off]
    return _ts_table((tok_tp, r_tok, p_tok, doc_tok), (sep_tp, r_sep, p_sep, doc_sep), float)


def _ts_table(tok: tuple[np.ndarray, ...], sep: tuple[np.ndarray, ...], dtype: type) -> np.ndarray:
    """TS_FIELDS from (shared positives, reference positives, predicted positives, t-units)
    of tokens and of separators, per (document, label); t-units per document."""
    n_docs, L = tok[0].shape
    out: np.ndarray = np.zeros((n_docs, L, len(TS_FIELDS)), dtype=dtype)
    for k, (tp, ref, pred, units) in ((0, tok), (4, sep)):
        out[:, :, k] = tp
        out[:, :, k + 1] = pred - tp
        out[:, :, k + 2] = ref - tp
        out[:, :, k + 3] = units[:, None]
    return out


def ts_counts(
    R: Units, P: Units, pairs: Pairs, n_cells: int, out: np.ndarray | None = None
) -> np.ndarray:
    """TS counts per cell row: ``TS_CELL_FIELDS`` (Concepts: token & separator model; the t-units ``tok_n``/``sep_n``
    are per document, kept beside the cells).

    Same-label spans never overlap within a side (checked before), so the
    positive tokens shared by the two sides are the sum of the same-label pairs'
    overlaps, and the shared positive separators the sum of ``overlap - 1``.
    ``out`` may be an ``(n_cells, 6)`` view to write the counts into.
    """
    assert R.start is not None and R.end is not None and P.start is not None and P.end is not None
    assert R.cell is not None and P.cell is not None
    m = n_cells
    out = np.zeros((m, len(TS_CELL_FIELDS)), dtype=np.int32) if out is None else out
    same = np.flatnonzero(pairs.same)
    pair_cell = R.cell.take(pairs.r.take(same))  # a same-label pair's cell is its answer's (and its prediction's)
    shared = pairs.close.take(same).astype(float)  # overlapping tokens of the pair
    del same
    r_pos = np.subtract(R.end, R.start, dtype=float)  # positive tokens of each span
    p_pos = np.subtract(P.end, P.start, dtype=float)
    # tp, fp, fn for tokens (0-2), then for separators (3-5): a span of n tokens holds
    # n - 1 separators, an overlap of t tokens t - 1 (spans are never empty)
    for k in (0, 3):
        if k == 3:
            shared -= 1
            np.maximum(shared, 0, out=shared)
            r_pos -= 1
            p_pos -= 1
        tp = _per_cell(pair_cell, m, weights=shared)
        out[:, k] = tp
        for j, cell, pos in ((k + 1, P.cell, p_pos), (k + 2, R.cell, r_pos)):
            x = _per_cell(cell, m, weights=pos)
            x -= tp
            out[:, j] = x  # exact integers: sums of integer-valued floats
            del x
    return out
