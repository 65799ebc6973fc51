"""The counting engine: from two sets of units to per-document, per-label counts.

A *unit* is what one status is given to: a span (AO, match-all, match-best), or a
distinct string of a document and label (:func:`collapse`): a filler of a template
(OBD), or the occurrences of one string in AO's one-per-string mode, which are
matched like OBD fillers, by their strings (:func:`obd_pairs`). Both
sides are columnar arrays; the pairs that could match are generated once,
their attributes (same label, rule satisfied, exact, boundary error,
closeness) computed vectorised, and every count of SPEC §3 follows:

* any-match counting (De Sitter Fig. 4) from "is this unit hit by a rule pair";
* one-to-one counting from a maximum-cardinality matching on rule pairs,
  preferring exact pairs, then the smallest boundary error, then position;
* Makhoul's C/S/D/I from a second matching over all aligned-able pairs,
  preferring correct pairs, then more aligned pairs, then same label, then
  closeness (overlapping tokens in AO, shared tokens in OBD);
* match-best: one (highest-confidence) prediction per document and label.

The token & separator counts (SPEC §6) come from the same-label pairs' overlap
lengths, with no per-token arrays.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .assign import match
from .config import Rule
from .errors import InputError

__all__ = [
    "STATUS_NAMES",
    "Units",
    "CellIndex",
    "cell_index",
    "Pairs",
    "EngineResult",
    "ao_pairs",
    "obd_pairs",
    "collapse",
    "count",
    "ts_counts",
    "check_multi_instance",
    "exact_disjoint",
    "ts_weighted",
    "unit_totals",
]

TP, FP, FN, IGNORED, ALTERNATIVE = range(5)
STATUS_NAMES = ("TP", "FP", "FN", "ignored", "alternative")
SPAN_FIELDS = ("tp", "fp", "fn", "C", "S", "D", "I")
TS_FIELDS = ("tok_tp", "tok_fp", "tok_fn", "tok_n", "sep_tp", "sep_fp", "sep_fn", "sep_n")
TS_CELL_FIELDS = tuple(f for f in TS_FIELDS if f not in ("tok_n", "sep_n"))  # t-units are per document

_I64 = np.int64


@dataclass(frozen=True)
class Units:
    """One side's units as columns. ``start``/``end`` are document token offsets
    (half-open) in AO and ``None`` in OBD; ``key`` holds normalised filler token
    tuples where strings matter (OBD, one-per-string); ``score`` is a confidence
    or NaN. ``cell`` is the row of the unit's (document, label) cell in the
    counts (:func:`cell_index`)."""

    doc: np.ndarray
    label: np.ndarray
    start: np.ndarray | None = None
    end: np.ndarray | None = None
    score: np.ndarray | None = None
    key: list[tuple[str, ...]] | None = None
    cell: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.doc)

    def take(self, idx: np.ndarray) -> Units:
        return Units(
            self.doc[idx],
            self.label[idx],
            None if self.start is None else self.start[idx],
            None if self.end is None else self.end[idx],
            None if self.score is None else self.score[idx],
            None if self.key is None else [self.key[i] for i in idx.tolist()],
            None if self.cell is None else self.cell[idx],
        )

    def with_cells(self, cell: np.ndarray) -> Units:
        return Units(self.doc, self.label, self.start, self.end, self.score, self.key, cell)


@dataclass(frozen=True)
class CellIndex:
    """The (document, label) cells that hold a unit of either side, sorted; a unit's
    ``cell`` is its row here. Every count belongs to the cell of some unit, so the
    cells without units are all zeros and are not stored."""

    doc: np.ndarray
    label: np.ndarray

    def __len__(self) -> int:
        return len(self.doc)


def cell_index(R: Units, P: Units, n_docs: int, n_labels: int) -> tuple[CellIndex, Units, Units]:
    """The cells of both sides' units, and the units with their ``cell`` rows.

    A flag per possible cell marks the cells in use, which are then numbered in
    (document, label) order without sorting, when documents x labels is not much
    larger than the units; a sort of the units' keys otherwise.

    >>> R = Units(np.array([0, 2]), np.array([1, 0]))
    >>> P = Units(np.array([0, 0]), np.array([1, 0]))
    >>> ix, R2, P2 = cell_index(R, P, n_docs=3, n_labels=2)
    >>> ix.doc.tolist(), ix.label.tolist(), R2.cell.tolist(), P2.cell.tolist()
    ([0, 0, 2], [0, 1, 0], [1, 2], [1, 0])
    """
    L = max(n_labels, 1)
    size = n_docs * L
    narrow = np.int32 if size < 2**31 else _I64  # keys, cell rows and the index in one width
    kr = np.multiply(R.doc, L, dtype=narrow)
    kr += R.label
    kp = np.multiply(P.doc, L, dtype=narrow)
    kp += P.label
    if size <= 4 * (len(R) + len(P)) + (1 << 22):
        present = np.zeros(size, dtype=bool)
        present[kr] = True
        present[kp] = True
        keys = np.flatnonzero(present)
        del present
        # each present cell's row; only the pages of present cells are ever written
        row = np.empty(size, dtype=narrow)
        row[keys] = np.arange(len(keys), dtype=narrow)
        sr, sp = row.take(kr), row.take(kp)
        del row
        keys = keys.astype(narrow)
    else:
        keys, inv = np.unique(np.concatenate((kr, kp)), return_inverse=True)
        sr, sp = inv[: len(R)].astype(narrow), inv[len(R) :].astype(narrow)
    doc = keys // L
    ix = CellIndex(doc, keys - doc * L)
    return ix, R.with_cells(sr), P.with_cells(sp)


def _per_cell(cell: np.ndarray, n_cells: int, mask: np.ndarray | None = None, weights: np.ndarray | None = None) -> np.ndarray:
    """Count (or sum ``weights``) per cell row, over the units where ``mask`` holds.
    Integer-valued float weights give exact integer-valued float sums (below 2**53)."""
    if mask is not None:
        cell = cell[mask]
        weights = None if weights is None else weights[mask]
    return np.bincount(cell, weights=weights, minlength=n_cells)


@dataclass(frozen=True)
class Pairs:
    """Candidate (reference, prediction) pairs and their attributes."""

    r: np.ndarray
    p: np.ndarray
    same: np.ndarray  # same label
    ok: np.ndarray  # same label and the rule holds
    exact: np.ndarray
    err: np.ndarray  # boundary error el+er+ml+mr (>= 0)
    close: np.ndarray  # overlapping tokens (AO) or shared tokens (OBD)

    @classmethod
    def empty(cls) -> Pairs:
        z = np.zeros(0, dtype=_I64)
        b = np.zeros(0, dtype=bool)
        return cls(z, z, b, b, b, z, z)

    def take(self, m: np.ndarray) -> Pairs:
        return Pairs(self.r[m], self.p[m], self.same[m], self.ok[m], self.exact[m], self.err[m], self.close[m])


def _ranges(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each i, the integers lo[i]..hi[i]-1: returns (owner i, value) flat arrays."""
    cnt = np.maximum(hi - lo, 0)
    total = int(cnt.sum())
    owner = np.repeat(np.arange(len(lo), dtype=_I64), cnt)
    if total == 0:
        return owner, np.zeros(0, dtype=_I64)
    offs = np.cumsum(cnt) - cnt
    val = np.arange(total, dtype=_I64) - np.repeat(offs, cnt) + np.repeat(lo, cnt)
    return owner, val


def overlapping(R: Units, P: Units) -> tuple[np.ndarray, np.ndarray]:
    """All (r, p) index pairs in the same document whose intervals intersect."""
    if len(R) == 0 or len(P) == 0:
        z = np.zeros(0, dtype=_I64)
        return z, z
    assert R.start is not None and R.end is not None and P.start is not None and P.end is not None
    order = np.lexsort((R.start, R.doc))
    span = int(max(R.end.max(), P.end.max())) + 1
    # 64-bit keys: items may be 32-bit, and documents x span can exceed 2**31
    key = R.doc.take(order).astype(_I64) * span + R.start.take(order)
    maxlen = int((R.end - R.start).max())
    p_doc = P.doc.astype(_I64) * span
    lo = np.searchsorted(key, p_doc + np.maximum(P.start - maxlen + 1, 0), "left")
    hi = np.searchsorted(key, p_doc + P.end, "left")
    del key, p_doc
    p, pos = _ranges(lo, hi)
    r = order[pos]
    keep = R.end[r] > P.start[p]
    # 32-bit unit indices (half the memory of every pair array) when they fit
    narrow = np.int32 if max(len(R), len(P)) < 2**31 else _I64
    return r.compress(keep).astype(narrow), p.compress(keep).astype(narrow)


def ao_pairs(R: Units, P: Units, rule: Rule) -> Pairs:
    """Candidate pairs by position (any label, overlapping) with rule attributes (SPEC §2.1)."""
    r, p = overlapping(R, P)
    assert R.start is not None and R.end is not None and P.start is not None and P.end is not None
    rs, re_, ps, pe = R.start[r], R.end[r], P.start[p], P.end[p]
    el = np.maximum(rs - ps, 0)
    er = np.maximum(pe - re_, 0)
    ml = np.maximum(ps - rs, 0)
    mr = np.maximum(re_ - pe, 0)
    exact = (ps == rs) & (pe == re_)
    if rule.kind == "exact":
        rok = exact
    elif rule.kind == "contain":
        rok = (ps <= rs) & (re_ <= pe) & ((el + er) <= rule.e)
    else:
        rok = ((el + er) <= rule.e) & ((ml + mr) <= rule.m)
    same = R.label[r] == P.label[p]
    close = np.minimum(pe, re_) - np.maximum(ps, rs)
    return Pairs(r, p, same, same & rok, exact, el + er + ml + mr, close)


# --- OBD sequence rules (SPEC §2.2) -------------------------------------------

def _contains(big: tuple[str, ...], small: tuple[str, ...], extra: float) -> bool:
    n, k = len(big), len(small)
    if not (k <= n <= k + extra) or k == 0:
        return False
    return any(big[i : i + k] == small for i in range(n - k + 1))


def sequence_match(p: tuple[str, ...], a: tuple[str, ...], rule: Rule) -> tuple[bool, int]:
    """Does filler ``p`` match answer ``a`` under ``rule``? Returns (ok, boundary error)."""
    n, k = len(p), len(a)
    if p == a:
        return True, 0
    if rule.kind == "exact":
        return False, 0
    if _contains(p, a, rule.e):
        return True, n - k
    if rule.kind == "contain":
        return False, 0
    if _contains(a, p, rule.m):
        return True, k - n
    best: int | None = None
    for t in range(min(n, k), 0, -1):  # overlap length t, longest first
        # suffix of p equals prefix of a: n-t extra on the left, k-t missing on the right
        if p[n - t :] == a[:t] and n - t <= rule.e and k - t <= rule.m:
            best = n + k - 2 * t
            break
        # prefix of p equals suffix of a: k-t missing on the left, n-t extra on the right
        if p[:t] == a[k - t :] and k - t <= rule.m and n - t <= rule.e:
            best = n + k - 2 * t
            break
    return (best is not None), (best or 0)


def _shared(a: tuple[str, ...], b: tuple[str, ...]) -> int:
    return sum((Counter(a) & Counter(b)).values())


def obd_pairs(R: Units, P: Units, rule: Rule) -> Pairs:
    """All same-document, same-slot filler pairs with rule attributes (SPEC §2.2)."""
    assert R.key is not None and P.key is not None
    if len(R) == 0 or len(P) == 0:
        return Pairs.empty()
    n_lab = int(max(R.label.max(), P.label.max())) + 1
    gr = R.doc.astype(_I64) * n_lab + R.label
    gp = P.doc.astype(_I64) * n_lab + P.label
    order = np.argsort(gr, kind="stable")
    lo = np.searchsorted(gr[order], gp, "left")
    hi = np.searchsorted(gr[order], gp, "right")
    p, pos = _ranges(lo, hi)
    r = order[pos]
    ok = np.zeros(len(r), dtype=bool)
    exact = np.zeros(len(r), dtype=bool)
    err = np.zeros(len(r), dtype=_I64)
    close = np.zeros(len(r), dtype=_I64)
    # most pairs of a document's strings share no token: no rule holds for them and
    # they share nothing (all zeros), so only the others are compared token by token
    tok_r, tok_p = [frozenset(k) for k in R.key], [frozenset(k) for k in P.key]
    for i, (ri, pi) in enumerate(zip(r.tolist(), p.tolist())):
        a, b = R.key[ri], P.key[pi]
        if a != b and tok_r[ri].isdisjoint(tok_p[pi]):
            continue
        ok[i], err[i] = sequence_match(b, a, rule)
        exact[i] = a == b
        close[i] = _shared(a, b)
    same = np.ones(len(r), dtype=bool)
    return Pairs(r, p, same, ok, exact, err, close)


def collapse(U: Units) -> tuple[Units, np.ndarray]:
    """Group units with equal (document, label, key): the distinct strings of OBD and
    of one-per-string (SPEC §3.4).

    Returns the group units and the group id of every member; groups are numbered
    in member order. A group carries its best member score and, when the units have
    positions, the position of its earliest occurrence (least start, then end), which
    breaks ties between equally good matchings the same way whatever the input order.

    >>> U = Units(np.array([0, 0, 0]), np.array([1, 1, 1]), np.array([5, 0, 2]), np.array([7, 2, 3]),
    ...           key=[("Al", "Roth"), ("Al", "Roth"), ("met",)])
    >>> G, gid = collapse(U)
    >>> gid.tolist(), G.start.tolist(), G.key
    ([0, 0, 1], [0, 2], [('Al', 'Roth'), ('met',)])
    """
    assert U.key is not None
    ids: dict[tuple[int, int, tuple[str, ...]], int] = {}
    gid = np.empty(len(U), dtype=_I64)
    for i, (d, lab, k) in enumerate(zip(U.doc.tolist(), U.label.tolist(), U.key)):
        gid[i] = ids.setdefault((d, lab, k), len(ids))
    if U.start is not None and len(U):
        assert U.end is not None
        order = np.lexsort((U.end, U.start, gid))  # each group's earliest occurrence first
        lead = np.ones(len(U), dtype=bool)
        lead[1:] = gid[order[1:]] != gid[order[:-1]]
        first = order[lead]
    else:
        first = np.full(len(ids), len(U), dtype=_I64)
        np.minimum.at(first, gid, np.arange(len(U), dtype=_I64))
    G = U.take(first)
    if U.score is not None and len(U):
        best = np.full(len(ids), -np.inf)
        np.maximum.at(best, gid, np.where(np.isnan(U.score), -np.inf, U.score))
        G = Units(G.doc, G.label, G.start, G.end, np.where(np.isinf(best), np.nan, best), G.key, G.cell)
    return G, gid


# --- counting --------------------------------------------------------------------

@dataclass(frozen=True)
class EngineResult:
    """Counts and per-unit outcomes of one scoring run."""

    cells: np.ndarray  # (len(CellIndex), len(SPAN_FIELDS)) int32: the counts of each cell row
    ref_status: np.ndarray  # int8 per reference unit
    pred_status: np.ndarray  # int8 per prediction unit
    aligned_r: np.ndarray  # Makhoul alignment: reference unit of each aligned pair
    aligned_p: np.ndarray
    aligned_correct: np.ndarray
    confusion: np.ndarray  # (n_labels + 1, n_labels + 1): last row/column = none


def column_sums(x: np.ndarray) -> np.ndarray:
    """``x.sum(axis=0)`` of an integer array as int64, fast for many short rows
    (per-document cells): groups of rows are read as one wide row, so the reduction's
    inner loop is long. The same integers as the plain sum.

    >>> column_sums(np.arange(12, dtype=np.int32).reshape(6, 2)).tolist()
    [30, 36]
    """
    n, rest = x.shape[0], x.shape[1:]
    k = int(np.prod(rest, dtype=np.int64))
    if n == 0 or k == 0 or k > 256 or not x.flags.c_contiguous:
        return x.sum(axis=0, dtype=_I64)
    g = max(1, 2048 // k)  # rows per wide row
    m = n // g * g
    flat = x.reshape(n, k)
    out = np.add.reduce(flat[:m].reshape(-1, g * k), axis=0, dtype=_I64).reshape(g, k).sum(axis=0)
    if m < n:
        out += flat[m:].sum(axis=0, dtype=_I64)
    return out.reshape(rest)


def _canon(U: Units) -> np.ndarray:
    """A canonical order of units (document, position, label, key): ties go to earlier ones."""
    if U.start is not None:
        assert U.end is not None
        return np.lexsort((U.label, U.end, U.start, U.doc))
    assert U.key is not None
    keyrank = np.empty(len(U), dtype=_I64)
    keyrank[sorted(range(len(U)), key=U.key.__getitem__)] = np.arange(len(U))
    return np.lexsort((keyrank, U.label, U.doc))


class _Ranks:
    """Canonical ranks of a side's units, computed on first use."""

    def __init__(self, U: Units) -> None:
        self.U = U
        self._r: np.ndarray | None = None

    def __call__(self) -> np.ndarray:
        if self._r is None:
            n = len(self.U)
            dt = np.int32 if n < 2**31 else _I64
            r = np.empty(n, dtype=dt)
            r[_canon(self.U)] = np.arange(n, dtype=dt)
            self._r = r
        return self._r


def _onetoone(e: Pairs, nR: int, nP: int, rank_r: _Ranks, rank_p: _Ranks) -> np.ndarray:
    """Mask over the rule pairs ``e`` chosen by one-to-one counting."""
    if len(e.r) == 0:
        return np.zeros(0, dtype=bool)
    maxerr = int(e.err.max())
    levels = [np.broadcast_to(np.int8(1), len(e.r)), e.exact, maxerr - e.err]
    return match(e.r, e.p, levels, nR, nP, rank_r, rank_p)


def count(
    R: Units,
    P: Units,
    pairs: Pairs,
    *,
    cells: CellIndex,
    n_labels: int,
    counting: str,
    best: bool = False,
    cells_out: np.ndarray | None = None,
) -> EngineResult:
    """Fill the confusion matrix and the slot errors (SPEC §3) for units R, P
    (with their ``cell`` rows in ``cells``).

    ``cells_out`` may be an ``(len(cells), 7)`` view to write the counts into."""
    assert R.cell is not None and P.cell is not None
    nR, nP = len(R), len(P)
    L = n_labels
    rank_r, rank_p = _Ranks(R), _Ranks(P)
    ref_status = np.full(nR, FN, dtype=np.int8)
    pred_status = np.full(nP, FP, dtype=np.int8)

    if best:
        return _count_best(R, P, pairs.take(pairs.ok), rank_r, rank_p, cells, L, cells_out)

    if counting == "any":
        pred_hit = np.zeros(nP, dtype=bool)
        pred_hit[pairs.p[pairs.ok]] = True
        ref_hit = np.zeros(nR, dtype=bool)
        ref_hit[pairs.r[pairs.ok]] = True
    else:
        rule_pairs = pairs.take(pairs.ok)
        chosen = _onetoone(rule_pairs, nR, nP, rank_r, rank_p)
        pred_hit = np.zeros(nP, dtype=bool)
        pred_hit[rule_pairs.p[chosen]] = True
        ref_hit = np.zeros(nR, dtype=bool)
        ref_hit[rule_pairs.r[chosen]] = True
    pred_status[pred_hit] = TP
    ref_status[ref_hit] = TP

    # Makhoul alignment over all pairs
    a_r, a_p, a_ok = _align(pairs, nR, nP, rank_r, rank_p)
    m = len(cells)
    out = np.zeros((m, len(SPAN_FIELDS)), dtype=np.int32) if cells_out is None else cells_out
    out[:, 0] = _per_cell(P.cell, m, pred_hit)
    out[:, 1] = _per_cell(P.cell, m, ~pred_hit)
    out[:, 2] = _per_cell(R.cell, m, ~ref_hit)
    _slot_cells(out, R, P, a_r, a_p, a_ok)
    conf = _confusion(R, P, a_r, a_p, L)
    return EngineResult(out, ref_status, pred_status, a_r, a_p, a_ok, conf)


def _align(pairs: Pairs, nR: int, nP: int, rank_r: _Ranks, rank_p: _Ranks) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if len(pairs.r) == 0:
        z = np.zeros(0, dtype=_I64)
        return z, z, np.zeros(0, dtype=bool)
    levels = [pairs.ok, np.broadcast_to(np.int8(1), len(pairs.r)), pairs.same, pairs.close]
    chosen = match(pairs.r, pairs.p, levels, nR, nP, rank_r, rank_p)
    return pairs.r[chosen], pairs.p[chosen], pairs.ok[chosen]


def _slot_cells(out: np.ndarray, R: Units, P: Units, a_r: np.ndarray, a_p: np.ndarray, a_ok: np.ndarray) -> None:
    """C and S (under the answer's cell), D and I of Makhoul's alignment."""
    assert R.cell is not None and P.cell is not None
    m = out.shape[0]
    a_cell = R.cell[a_r]
    out[:, 3] = _per_cell(a_cell, m, a_ok)
    out[:, 4] = _per_cell(a_cell, m, ~a_ok)
    aligned_r = np.zeros(len(R), dtype=bool)
    aligned_r[a_r] = True
    aligned_p = np.zeros(len(P), dtype=bool)
    aligned_p[a_p] = True
    out[:, 5] = _per_cell(R.cell, m, ~aligned_r)
    out[:, 6] = _per_cell(P.cell, m, ~aligned_p)


def _confusion(R: Units, P: Units, a_r: np.ndarray, a_p: np.ndarray, L: int) -> np.ndarray:
    conf = np.zeros((L + 1, L + 1), dtype=_I64)
    np.add.at(conf, (R.label[a_r], P.label[a_p]), 1)
    aligned_r = np.zeros(len(R), dtype=bool)
    aligned_r[a_r] = True
    aligned_p = np.zeros(len(P), dtype=bool)
    aligned_p[a_p] = True
    conf[:L, L] += np.bincount(R.label[~aligned_r], minlength=L)[:L]
    conf[L, :L] += np.bincount(P.label[~aligned_p], minlength=L)[:L]
    return conf


def _best_of(P: Units, rank_p: _Ranks, L: int) -> np.ndarray:
    """Index of the kept prediction of every (document, label) group that has one."""
    if len(P) == 0:
        return np.zeros(0, dtype=_I64)
    score = P.score
    if score is None or np.isnan(score).all():
        key = np.zeros(len(P))
    else:
        bad = np.flatnonzero(~np.isfinite(score))
        if len(bad):
            i = int(bad[0])
            raise InputError(
                f"match-best needs a finite confidence on every prediction; document #{int(P.doc[i])} "
                f"prediction {i} (label id {int(P.label[i])}) has {score[i]!r}"
            )
        key = -score
    order = np.lexsort((rank_p(), key, P.label, P.doc))
    g = P.doc[order].astype(_I64) * L + P.label[order]
    first = np.ones(len(order), dtype=bool)
    first[1:] = g[1:] != g[:-1]
    return order[first]


def _count_best(
    R: Units, P: Units, rule_pairs: Pairs, rank_r: _Ranks, rank_p: _Ranks, cells: CellIndex, L: int,
    cells_out: np.ndarray | None = None,
) -> EngineResult:
    """match-best (Siefkes §15.2): one prediction per document and label."""
    assert R.cell is not None and P.cell is not None
    nR, nP = len(R), len(P)
    keep = _best_of(P, rank_p, L)
    pred_status = np.full(nP, IGNORED, dtype=np.int8)
    ref_status = np.full(nR, ALTERNATIVE, dtype=np.int8)
    kept = np.zeros(nP, dtype=bool)
    kept[keep] = True
    # pairs of the kept predictions, earliest answer first
    sel = kept[rule_pairs.p]
    kp_r, kp_p = rule_pairs.r[sel], rule_pairs.p[sel]
    o = np.lexsort((rank_r()[kp_r], kp_p))
    kp_r, kp_p = kp_r[o], kp_p[o]
    firstpair = np.ones(len(kp_p), dtype=bool)
    firstpair[1:] = kp_p[1:] != kp_p[:-1]
    hit = np.zeros(nP, dtype=bool)
    hit[kp_p] = True
    ref_status[kp_r[firstpair]] = TP
    pred_status[keep] = np.where(hit[keep], TP, FP)
    # groups: the (document, label) cells
    m = len(cells)
    has_ref = np.bincount(R.cell, minlength=m) > 0
    gp = P.cell[keep]
    has_pred = np.zeros(m, dtype=bool)
    has_pred[gp] = True
    g_hit = np.zeros(m, dtype=bool)
    g_hit[gp[hit[keep]]] = True
    # FN: the earliest answer of a group with answers and no hit
    if nR:
        ro = np.lexsort((rank_r(), R.cell))
        gr = R.cell[ro]
        firstr = np.ones(nR, dtype=bool)
        firstr[1:] = gr[1:] != gr[:-1]
        cand = ro[firstr]
        miss = ~g_hit[R.cell[cand]]
        ref_status[cand[miss]] = FN
    out = np.zeros((m, len(SPAN_FIELDS)), dtype=np.int32) if cells_out is None else cells_out
    tp = g_hit
    fp = has_pred & ~g_hit
    fn = has_ref & ~g_hit
    out[:, 0] = tp
    out[:, 1] = fp
    out[:, 2] = fn
    out[:, 3] = tp  # C
    out[:, 4] = fp & has_ref  # S: the slot filled with a wrong value
    out[:, 5] = has_ref & ~has_pred  # D
    out[:, 6] = has_pred & ~has_ref  # I
    conf = np.zeros((L + 1, L + 1), dtype=_I64)

    def per_label(f: int) -> np.ndarray:
        return np.bincount(cells.label, weights=out[:, f], minlength=L)[:L].astype(_I64)

    diag = np.arange(L)
    conf[diag, diag] = per_label(3) + per_label(4)  # C and S: the slot aligned with itself
    conf[:L, L] = per_label(5)
    conf[L, :L] = per_label(6)
    z = np.zeros(0, dtype=_I64)
    return EngineResult(out, ref_status, pred_status, z, z, np.zeros(0, dtype=bool), conf)


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
    The units carry their ``cell`` rows (:func:`cell_index`, ``n_cells`` rows).
    ``n_fields`` < 7 keeps only the first fields of the cells (``tp, fp, fn``: 3), and
    ``dtype`` is the cells' integer type. ``hits`` may give which answers and which
    predictions have an equal on the other side, when the decoder found them
    (:func:`~iescore.schemes.decode_pair`); only the counting is then left.
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
    z = np.zeros(0, dtype=_I64)
    L = n_labels
    return EngineResult(cells, ref_status, pred_status, z, z, np.zeros(0, dtype=bool), np.zeros((L + 1, L + 1), dtype=_I64))


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
        k += U.start
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


# --- token & separator model -------------------------------------------------------

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
    (flat per-t-unit weights as in :func:`ts_weighted`)."""
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
        return Wt[tok_off[doc] + b] - Wt[tok_off[doc] + a]

    def sep(doc: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        # separators a .. b-2 lie inside tokens [a, b)
        hi = np.maximum(b - 1, a)
        return Ws[sep_off[doc] + hi] - Ws[sep_off[doc] + a]

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
    out = np.zeros((n_docs, L, len(TS_FIELDS)), dtype=dtype)
    for k, (tp, ref, pred, units) in ((0, tok), (4, sep)):
        out[:, :, k] = tp
        out[:, :, k + 1] = pred - tp
        out[:, :, k + 2] = ref - tp
        out[:, :, k + 3] = units[:, None]
    return out


def ts_counts(
    R: Units, P: Units, pairs: Pairs, n_cells: int, out: np.ndarray | None = None
) -> np.ndarray:
    """TS counts per cell row: ``TS_CELL_FIELDS`` (SPEC §6; the t-units ``tok_n``/``sep_n``
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
