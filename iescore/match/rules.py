"""Stage 2 of the pipeline (match): the pairs that could match, under a rule (README, Definitions: matching rules).

The pairs of a reference and a prediction unit that overlap (AO), or share a
document and label and can weigh anything (OBD: found by an inverted index and
hashing, never by comparing all pairs; :func:`_candidates`), are generated once and
their attributes computed: same label, rule satisfied (exact / contain(e) / overlap(e, m)),
exact, boundary error, closeness (overlapping tokens in AO, shared tokens in OBD).
Counting (:mod:`iescore.match.count`) reads only these attributes.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import TypeAlias

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
    # OBD: the pair's shared tokens that no alignment weighs (its slot's floor, obd_pairs);
    # the pairs are then only those that can weigh anything, the slot being complete
    shift: np.ndarray | None = None

    @classmethod
    def empty(cls) -> Pairs:
        z = np.zeros(0, dtype=_I64)
        b = np.zeros(0, dtype=bool)
        return cls(z, z, b, b, b, z, z)

    def take(self, m: np.ndarray) -> Pairs:
        return Pairs(self.r[m], self.p[m], self.same[m], self.ok[m], self.exact[m], self.err[m], self.close[m],
                     None if self.shift is None else self.shift[m])


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
    candidates per unit, :func:`_overlapping_sides` finds the pairs from both sides
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
    :func:`overlapping`, in its order, from two range searches whose sizes are the pairs
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


def _join(left: dict[object, list[int]], right: dict[object, list[int]]) -> tuple[list[int], list[int]]:
    """Every (l, r) of equal keys in two posting dictionaries."""
    out_l: list[int] = []
    out_r: list[int] = []
    for key, rs in right.items():
        ls = left.get(key)
        if ls:
            for j in rs:
                out_l.extend(ls)
                out_r.extend([j] * len(ls))
    return out_l, out_r


Reduced: TypeAlias = "frozenset[str] | Counter[str]"  # a filler's reduced tokens: a set when none repeats


def _candidates(R: Units, P: Units, rule: Rule) -> tuple[np.ndarray, np.ndarray, list[Reduced], list[Reduced]]:
    """The same-document, same-slot pairs that can weigh anything in OBD, and every
    filler's *reduced* tokens (README, Definitions: slot errors; matching rules (OBD)).

    In a slot whose predictions are no more than its answers, every largest alignment
    pairs every prediction; a slot's *floor* is then the token copies every one of its
    answers holds (say "Dr" in every name; with more predictions than answers, the
    predictions' floor and the roles swap). A filler's reduced tokens are its own minus
    the floor's copies; a pair shares its reduced fillers' tokens plus a *shift* (the
    floor's copies both hold), and the shift depends on the prediction alone, so the sum
    of the shifts is the same for every largest alignment of the slot and drops out.
    A pair can then weigh something only when (1) the reduced fillers share a token (an
    inverted index), (2) the fillers are equal (hashing), or (3) the rule accepts it
    through a common part of floor copies only, which needs the prediction to have at
    most ``e`` reduced tokens and the answer at most ``m`` (contain: none): the cross
    product of those few fillers. Returns (answer, prediction) sorted by (prediction,
    answer), and the reduced tokens of every answer and every prediction."""
    assert R.key is not None and P.key is not None
    slot_r: dict[tuple[int, int], list[int]] = {}
    slot_p: dict[tuple[int, int], list[int]] = {}
    for i, s in enumerate(zip(R.doc.tolist(), R.label.tolist())):
        slot_r.setdefault(s, []).append(i)
    for j, s in enumerate(zip(P.doc.tolist(), P.label.tolist())):
        slot_p.setdefault(s, []).append(j)
    red_r: list[Reduced] = [frozenset()] * len(R)
    red_p: list[Reduced] = [frozenset()] * len(P)
    tok_r: dict[object, list[int]] = {}
    tok_p: dict[object, list[int]] = {}
    eq_r: dict[object, list[int]] = {}
    eq_p: dict[object, list[int]] = {}
    few_l: list[int] = []
    few_r: list[int] = []
    e_max = rule.e if rule.kind != "exact" else -1
    m_max = rule.m if rule.kind == "overlap" else 0
    for s, ps in slot_p.items():
        rs = slot_r.get(s)
        if not rs:
            continue
        keys_f, side = (R.key, rs) if len(ps) <= len(rs) else (P.key, ps)
        floor = Counter(keys_f[side[0]])
        for i in side[1:]:
            if not floor:
                break
            k = keys_f[i]
            if len(floor) == 1 and len(k) == len(set(k)):  # a single token: is it there?
                t = next(iter(floor))
                if t not in k:
                    floor = Counter()
                elif floor[t] > 1:
                    floor[t] = 1
            else:
                floor &= Counter(k)
        plain_floor = all(c == 1 for c in floor.values())
        fkeys = frozenset(floor)
        low_r: list[int] = []
        low_p: list[int] = []
        for keys, idx, red, tok, eq, low, lim in ((R.key, rs, red_r, tok_r, eq_r, low_r, m_max),
                                                  (P.key, ps, red_p, tok_p, eq_p, low_p, e_max)):
            for i in idx:
                k = keys[i]
                eq.setdefault((s, k), []).append(i)
                ks = frozenset(k)
                c: Reduced
                if len(ks) == len(k) and plain_floor:
                    c = ks - fkeys if floor else ks
                    size = len(c)
                else:
                    c = Counter(k) - floor
                    size = c.total()
                red[i] = c
                for t in c:
                    tok.setdefault((s, t), []).append(i)
                if floor and size <= lim:
                    low.append(i)
        for j in low_p:
            few_l.extend(low_r)
            few_r.extend([j] * len(low_r))
    l1, r1 = _join(tok_r, tok_p)
    l2, r2 = _join(eq_r, eq_p)
    r = np.array(l1 + l2 + few_l, dtype=_I64)
    p = np.array(r1 + r2 + few_r, dtype=_I64)
    code = np.unique(p * max(len(R), 1) + r)  # sorted by (prediction, answer), each pair once
    return code % max(len(R), 1), code // max(len(R), 1), red_r, red_p


def obd_pairs(R: Units, P: Units, rule: Rule) -> Pairs:
    """The same-document, same-slot filler pairs that can weigh anything (:func:`_candidates`),
    with rule attributes (README, Definitions: matching rules (OBD)) and their shift. Every
    pair of a slot left out satisfies no rule and shares only its shift: the slot
    alignment (:mod:`iescore.match.slots`) treats the slot as complete."""
    assert R.key is not None and P.key is not None
    if len(R) == 0 or len(P) == 0:
        z = np.zeros(0, dtype=_I64)
        return Pairs(z, z, z.astype(bool), z.astype(bool), z.astype(bool), z, z, z)
    r, p, red_r, red_p = _candidates(R, P, rule)
    n = len(r)
    shift = np.zeros(n, dtype=_I64)
    ok = np.zeros(n, dtype=bool)
    exact = np.zeros(n, dtype=bool)
    err = np.zeros(n, dtype=_I64)
    close = np.zeros(n, dtype=_I64)
    for i, (ri, pi) in enumerate(zip(r.tolist(), p.tolist())):
        a, b = R.key[ri], P.key[pi]
        ok[i], err[i] = sequence_match(b, a, rule)
        exact[i] = a == b
        x, y = red_r[ri], red_p[pi]
        if isinstance(x, frozenset) and isinstance(y, frozenset):  # no token repeats
            close[i] = n_shared = len(frozenset(a) & frozenset(b))
            shift[i] = n_shared - len(x & y)
        else:
            close[i] = _shared(a, b)
            shift[i] = close[i] - (Counter(x) & Counter(y)).total()
    same = np.ones(n, dtype=bool)
    return Pairs(r, p, same, ok, exact, err, close, shift)
