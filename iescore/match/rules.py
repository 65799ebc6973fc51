"""Stage 2 of the pipeline (match): the pairs that could match, under a rule (README, Definitions: matching rules).

The pairs of a reference and a prediction unit that overlap (AO) or share a
document and label (OBD) are generated once and their attributes computed
vectorised: same label, rule satisfied (exact / contain(e) / overlap(e, m)),
exact, boundary error, closeness (overlapping tokens in AO, shared tokens in OBD).
Counting (:mod:`iescore.match.count`) reads only these attributes.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from ..config import Rule
from .units import _I64, Units

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
    """Candidate pairs by position (any label, overlapping) with rule attributes (README, Definitions: matching rules)."""
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
    """All same-document, same-slot filler pairs with rule attributes (README, Definitions: matching rules (OBD))."""
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
    # a string without repeated tokens shares with another as many tokens as their sets
    plain_r = [len(t) == len(k) for t, k in zip(tok_r, R.key)]
    plain_p = [len(t) == len(k) for t, k in zip(tok_p, P.key)]
    for i, (ri, pi) in enumerate(zip(r.tolist(), p.tolist())):
        a, b = R.key[ri], P.key[pi]
        if a != b and tok_r[ri].isdisjoint(tok_p[pi]):
            continue
        ok[i], err[i] = sequence_match(b, a, rule)
        exact[i] = a == b
        close[i] = len(tok_r[ri] & tok_p[pi]) if plain_r[ri] and plain_p[pi] else _shared(a, b)
    same = np.ones(len(r), dtype=bool)
    return Pairs(r, p, same, ok, exact, err, close)
