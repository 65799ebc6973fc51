"""Stage 2 of the pipeline (match): the pairs that could match, under a rule (Concepts: matching rules).

The pairs of a reference and a prediction unit that overlap (AO), or share a
document and label and can weigh anything (OBD: found by an inverted index and
hashing, never by comparing all pairs: `iescore.match.fillers`), are generated once and
their attributes computed: same label, rule satisfied (exact / contain(e) / overlap(e, m),
or a rule by share: IoU(t), cover(t), sim(t)), exact, boundary error, closeness
(overlapping tokens in AO, shared tokens in OBD). Counting (`iescore.match.count`) reads
only these attributes.

A rule by share holds when a share of the pair is at least ``t``, compared exactly (the
threshold as the fraction of the decimal it prints as, the share as a fraction of
integers): IoU(t) ``|p ∩ a| / |p ∪ a|``, cover(t) ``|p ∩ a| / |a|``, in the units of
the positions (tokens, or characters at ``level="characters"``); a share is positive only
for pairs that overlap, which are the candidates anyway. On token sequences (OBD, and
one-per-string) ``|p ∩ a|`` is the longest overlap of the placements the overlap rule
reads (one sequence inside the other, or a suffix of one equal to a prefix of the other)
and ``|p ∪ a| = n + k - |p ∩ a|``. sim(t) compares the fillers' texts (their tokens
joined by one space) by normalised Levenshtein similarity, ``1 - lev(p, a) / max(|p|, |a|)``
in characters, computed by rapidfuzz (the ``fuzzy`` extra, imported when a sim rule is
used); its boundary error is the edit distance.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from types import ModuleType
from typing import Any

import numpy as np

from ..errors import ConfigError
from ..options import Rule
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
    # OBD (iescore.match.fillers): what the pair weighs in its slot's alignment beyond the
    # slot's floors; the pairs are then only those that can weigh anything, the slot being
    # complete, and ``alone`` is what every answer and every prediction gains when left unaligned
    weight: np.ndarray | None = None
    alone: tuple[np.ndarray, np.ndarray] | None = None
    # the rule's test alone, labels not compared (positions in AO, strings in OBD and
    # one-per-string): the extent slot of Makhoul's multi-slot tags (`iescore.multislot`);
    # None where the pairs' builder does not say it (no multi-slot counts then)
    fit: np.ndarray | None = None

    @classmethod
    def empty(cls) -> Pairs:
        z = np.zeros(0, dtype=_I64)
        b = np.zeros(0, dtype=bool)
        return cls(z, z, b, b, b, z, z, fit=b)

    def take(self, m: np.ndarray) -> Pairs:
        """The pairs of mask or indices ``m``."""
        return Pairs(self.r[m], self.p[m], self.same[m], self.ok[m], self.exact[m], self.err[m], self.close[m],
                     None if self.weight is None else self.weight[m], self.alone,
                     None if self.fit is None else self.fit[m])


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


_WINDOW_EXCESS = 4  # the window search may look at this many candidates per unit before the two-sided one runs


def overlapping(R: Units, P: Units) -> tuple[np.ndarray, np.ndarray]:
    """All (r, p) index pairs in the same document whose intervals intersect, grouped by
    prediction, each group's answers in (document, start) order.

    Answers sorted by (document, start); a prediction's candidates are the answers
    starting from ``maxlen - 1`` tokens before it (the longest answer) to its end, kept
    when they end after its start. One long answer makes that window hold the whole
    document for every prediction: when the windows hold more than ``_WINDOW_EXCESS``
    candidates per unit, `_overlapping_sides` finds the pairs from both sides
    instead, in time that grows with the pairs found.
    """
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
    if int(np.maximum(hi - lo, 0).sum()) > _WINDOW_EXCESS * (len(R) + len(P)):
        p, pos = _overlapping_sides(R, P, order, key, p_doc, span)
    else:
        p, pos = _ranges(lo, hi)
    del key, p_doc
    r = order[pos]
    keep = R.end[r] > P.start[p]
    # 32-bit unit indices (half the memory of every pair array) when they fit
    narrow = np.int32 if max(len(R), len(P)) < 2**31 else _I64
    return r.compress(keep).astype(narrow), p.compress(keep).astype(narrow)


def _overlapping_sides(R: Units, P: Units, order: np.ndarray, key: np.ndarray, p_doc: np.ndarray,
                       span: int) -> tuple[np.ndarray, np.ndarray]:
    """The overlapping (prediction, answer position in ``order``) pairs of
    `overlapping`, in its order, from two range searches whose sizes are the pairs
    themselves (``key``: the answers' (document, start) keys in ``order``; ``p_doc``:
    each prediction's document offset in those keys): an answer and a prediction of one
    document overlap exactly when the answer starts inside the prediction, or the
    prediction starts inside the answer after the answer's start (spans are never
    empty)."""
    assert R.start is not None and R.end is not None and P.start is not None and P.end is not None
    p1, pos1 = _ranges(np.searchsorted(key, p_doc + P.start, "left"), np.searchsorted(key, p_doc + P.end, "left"))
    p_order = np.lexsort((P.start, P.doc))
    p_key = P.doc.take(p_order).astype(_I64) * span + P.start.take(p_order)
    pos2, at = _ranges(np.searchsorted(p_key, key + 1, "left"),
                       np.searchsorted(p_key, key + (R.end - R.start).take(order), "left"))
    p, pos = np.concatenate((p1, p_order.take(at))), np.concatenate((pos1, pos2))
    o = np.lexsort((pos, p))
    return p.take(o), pos.take(o)


def span_attributes(rs: np.ndarray, re_: np.ndarray, ps: np.ndarray, pe: np.ndarray,
                    rule: Rule) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """For overlapping answer ``[rs, re_)`` and prediction ``[ps, pe)`` spans: does the
    rule hold, are they equal, the boundary error ``el+er+ml+mr`` and the tokens they
    share (the definitions of the rules on positions, without labels).

    >>> ok, ex, err, close = span_attributes(np.array([0]), np.array([2]), np.array([1]), np.array([3]), Rule.parse("O(1,1)"))
    >>> ok.tolist(), ex.tolist(), err.tolist(), close.tolist()
    ([True], [False], [2], [1])
    """
    el = np.maximum(rs - ps, 0)
    er = np.maximum(pe - re_, 0)
    ml = np.maximum(ps - rs, 0)
    mr = np.maximum(re_ - pe, 0)
    exact = (ps == rs) & (pe == re_)
    close = np.minimum(pe, re_) - np.maximum(ps, rs)
    if rule.kind == "exact":
        ok = exact
    elif rule.kind == "contain":
        ok = (ps <= rs) & (re_ <= pe) & ((el + er) <= rule.e)
    elif rule.kind == "overlap":
        ok = ((el + er) <= rule.e) & ((ml + mr) <= rule.m)
    elif rule.kind == "iou":
        ok = at_least(close, np.maximum(pe, re_) - np.minimum(ps, rs), rule.share())
    elif rule.kind == "cover":
        ok = at_least(close, re_ - rs, rule.share())
    else:  # sim(t) compares strings: Rule.check_use keeps it from positions; such pairs serve the TS model
        ok = np.zeros(len(rs), dtype=bool)
    return ok, exact, el + er + ml + mr, close


def ao_pairs(R: Units, P: Units, rule: Rule) -> Pairs:
    """Candidate pairs by position (any label, overlapping) with rule attributes (Concepts: matching rules)."""
    r, p = overlapping(R, P)
    assert R.start is not None and R.end is not None and P.start is not None and P.end is not None
    rok, exact, err, close = span_attributes(R.start[r], R.end[r], P.start[p], P.end[p], rule)
    same = R.label[r] == P.label[p]
    return Pairs(r, p, same, same & rok, exact, err, close, fit=rok)


def at_least(part: np.ndarray, whole: np.ndarray, t: Fraction) -> np.ndarray:
    """``part / whole >= t``, exactly, over integer arrays (``whole > 0``):
    ``part * den >= num * whole`` in 64-bit integers while they cannot overflow, else in
    Python integers.

    >>> at_least(np.array([1, 2, 3]), np.array([2, 4, 7]), Fraction(1, 2)).tolist()
    [True, True, False]
    """
    num, den = t.numerator, t.denominator
    top = int(max(int(part.max()), int(whole.max()))) if len(part) else 0
    if top * max(num, den) < 2**62:
        return part.astype(_I64) * den >= num * whole.astype(_I64)
    return np.array([x * den >= num * y for x, y in zip(part.tolist(), whole.tolist())], dtype=bool)


def _contains(big: tuple[str, ...], small: tuple[str, ...], extra: float) -> bool:
    n, k = len(big), len(small)
    if not (k <= n <= k + extra) or k == 0:
        return False
    return any(big[i : i + k] == small for i in range(n - k + 1))


_LEV: list[ModuleType] = []  # rapidfuzz's Levenshtein, once imported


def levenshtein() -> Any:
    """rapidfuzz's ``Levenshtein`` (``distance``, ``normalized_similarity``), the
    definition of sim(t); a [`ConfigError`][iescore.errors.ConfigError] naming the
    ``fuzzy`` extra when rapidfuzz is not installed."""
    if not _LEV:
        try:
            from rapidfuzz.distance import Levenshtein
        except ImportError:
            raise ConfigError(
                "the rule sim(t) needs rapidfuzz, which is not installed: pip install 'iescore[fuzzy]' "
                "(or pip install rapidfuzz)"
            ) from None
        _LEV.append(Levenshtein)
    return _LEV[0]


def placement(p: tuple[str, ...], a: tuple[str, ...]) -> int:
    """The tokens two sequences share in their best placement: one inside the other
    (contiguous), or a suffix of one equal to a prefix of the other; 0 if none.

    >>> placement(("Al", "Roth"), ("Roth", "said")), placement(("a", "b", "c"), ("b",)), placement(("a",), ("b",))
    (1, 1, 0)
    """
    n, k = len(p), len(a)
    if k <= n and _contains(p, a, n):
        return k
    if n < k and _contains(a, p, k):
        return n
    for t in range(min(n, k) - 1, 0, -1):
        if p[n - t :] == a[:t] or p[:t] == a[k - t :]:
            return t
    return 0


def _share_match(p: tuple[str, ...], a: tuple[str, ...], rule: Rule) -> tuple[bool, int]:
    """`sequence_match` under a rule by share."""
    if rule.kind == "sim":
        tp, ta = " ".join(p), " ".join(a)
        if rule.t == 1:
            return tp == ta, 0
        d = int(levenshtein().distance(tp, ta))
        top = max(len(tp), len(ta))
        th = rule.share()
        return (top - d) * th.denominator >= th.numerator * top, d
    n, k = len(p), len(a)
    t = placement(p, a)
    if t == 0:
        return False, 0
    th = rule.share()
    whole = n + k - t if rule.kind == "iou" else k
    return t * th.denominator >= th.numerator * whole, n + k - 2 * t


def sequence_match(p: tuple[str, ...], a: tuple[str, ...], rule: Rule) -> tuple[bool, int]:
    """Does filler ``p`` match answer ``a`` under ``rule``? Returns (ok, boundary error)."""
    n, k = len(p), len(a)
    if p == a:
        return True, 0
    if rule.by_share:
        return _share_match(p, a, rule)
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
