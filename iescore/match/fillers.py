"""Stage 2 of the pipeline (match), OBD: the filler pairs of a slot that can weigh anything
in Makhoul's alignment, found through each slot's *floors* instead of by comparing all
pairs (Concepts: matching rules (OBD); slot errors).

In OBD every answer and prediction of one slot (document and label) may align, and an
alignment is ranked by its correct pairs, then its aligned pairs, then its shared tokens
(`iescore.match.slots`). A token on most fillers of a slot ("Dr" in every name)
makes nearly every pair share a token: n² candidates, although which pairs align hardly
changes what that token adds up to. Give such a token a *floor* c > 0 in its slot, and
write n(x) for the copies a filler x holds and (y)+ for max(y, 0). For an answer a and a
prediction b (check the cases of n(a) and n(b) against c):

    min(n(a), n(b)) = min((n(a) - c)+, (n(b) - c)+) + min((c - n(a))+, (c - n(b))+)
                      + c - (c - n(a))+ - (c - n(b))+

The first two terms are the pair's *weight* from the token (copies beyond the floor that
both hold, copies short of it that both lack); then a constant, and a term per filler,
its *deficit*. All largest alignments of a slot have the same number of pairs, so over
one of them the constants add up to the same total, and the deficits to the slot's total
minus the deficits of the fillers left unaligned. The alignments therefore rank exactly
as under the weights plus, for every filler left unaligned, its deficits (``Pairs.alone``).
A slot of as many answers as predictions leaves none unaligned; one of more answers leaves
only answers (and the other way round).

A pair can then weigh something only if (1) both fillers hold a token beyond its floor
(floor 0 for a token without one) or both lack copies of a floor: two inverted indexes,
(2) the fillers are equal (then (1) holds, unless both equal the floors: hashing those),
or (3) the rule accepts it through floor copies only.
In (3), each token the prediction holds beyond its floor is one the answer lacks (else
they would share it), so the prediction has at least that many extra tokens, and the
answer likewise misses its own: it needs the prediction to hold at most ``e`` tokens
beyond the floors and the answer at most ``m`` (contain: none), the cross product of those
few fillers.

Each token's floor is chosen per slot for the fewest such pairs: none, with the pairs of
its holders on both sides, or one of the counts its fillers hold, with the pairs of the
fillers beyond it on both sides, of those short of it on both sides and, on the larger
side, their pairs with the stand-ins of unaligned fillers (`iescore.match.slots`).
"Dr" once in every filler but one answer of a slot of n a side gives no pair at all instead
of n² - n. A floor only helps a token held by more than half of one side, so the choice
is made for those few.

A token on a share of both sides' fillers, less than most (or a floor lacked by such a
share), still makes many pairs: in a large slot its holders on the two sides may make it
a *hub* (`_hubs`). A hub is left out of the index, so a pair that shares only hub
tokens is not a candidate unless (2) or (3) finds it ((3) then counts the tokens beyond
the floors that are not hubs); a certificate (`iescore.match.hubs`) checks that no
best alignment of the slot uses such a pair, and a slot whose certificate fails gets
those pairs back (with one hub token, only those an optimal dual leaves tight), as blocks
left implicit. The plain reference, every pair compared, is in tests/test_slots.py.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from itertools import chain
from typing import TypeAlias

import numpy as np

from ..config import Rule
from ..nogc import no_cycles_collected
from .hubs import Copies, HubSlot, hub_pairs_needed
from .rules import Pairs, sequence_match
from .units import _I64, Units

__all__ = ["obd_pairs"]

_HUB_PAIRS = 4096  # a token's holders must make this many pairs to be a hub (iescore.match.hubs)
# the hub pairs a slot needs stay blocks (Pairs.blocks) instead of being listed; the
# tests set it False for the plain path, every such pair listed
_BLOCKS = True

Tokens: TypeAlias = "frozenset[str] | Counter[str]"  # a multiset of tokens: a set when none repeats


def _shared(a: tuple[str, ...], b: tuple[str, ...]) -> int:
    return sum((Counter(a) & Counter(b)).values())


def _size(x: Tokens) -> int:
    return x.total() if isinstance(x, Counter) else len(x)


def _common(x: Tokens, y: Tokens) -> int:
    """Copies two multisets share."""
    if isinstance(x, frozenset) and isinstance(y, frozenset):
        return len(x & y)
    return (Counter(x) & Counter(y)).total()


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


def _holders(keys: list[tuple[str, ...]], sets: list[frozenset[str]]) -> tuple[Counter[str], dict[str, Counter[int]]]:
    """Over one side of a slot: token -> fillers holding it, and token -> {copies: fillers}
    for the tokens some filler holds more than once."""
    held = Counter(chain.from_iterable(sets))
    more: dict[str, Counter[int]] = {}
    for k, s in zip(keys, sets):
        if len(s) != len(k):
            for t, c in Counter(k).items():
                more.setdefault(t, Counter())[c] += 1
    return held, more


Held: TypeAlias = "tuple[Counter[str], dict[str, Counter[int]]]"  # one side's _holders


def _floors(n_r: int, n_p: int, hold_r: Held, hold_p: Held) -> Counter[str]:
    """Each token's floor in one slot of ``n_r`` answers and ``n_p`` predictions whose
    `_holders` are ``hold_r`` and ``hold_p`` (module docstring), the tokens without
    one left out.

    >>> _floors(3, 3, _holders([("Dr", "a"), ("Dr", "b"), ("c",)], [frozenset(["Dr", "a"]),
    ...         frozenset(["Dr", "b"]), frozenset(["c"])]), _holders([("Dr", "a"), ("Dr", "b"), ("Dr",)],
    ...         [frozenset(["Dr", "a"]), frozenset(["Dr", "b"]), frozenset(["Dr"])]))
    Counter({'Dr': 1})
    """
    extra = abs(n_r - n_p)  # fillers left unaligned on the larger side
    (held_r, more_r), (held_p, more_p) = hold_r, hold_p
    # a floor leaves the fillers short of it on both sides: it helps only a token held by
    # more than half of one side
    wide = {t for t, h in held_r.items() if 2 * h > n_r} | {t for t, h in held_p.items() if 2 * h > n_p}
    floor: Counter[str] = Counter()
    for t in wide:
        if t not in held_r or t not in held_p:
            continue
        h_r, h_p = _copies(t, held_r, more_r), _copies(t, held_p, more_p)
        best, best_c = held_r[t] * held_p[t], 0
        for c in sorted(set(h_r) | set(h_p)):
            above_r = sum(m for x, m in h_r.items() if x > c)
            above_p = sum(m for x, m in h_p.items() if x > c)
            short_r = n_r - above_r - h_r.get(c, 0)
            short_p = n_p - above_p - h_p.get(c, 0)
            cost = above_r * above_p + short_r * short_p
            if n_r != n_p:
                short = short_r if n_r > n_p else short_p
                cost += short * min(short, extra)
            if cost < best:
                best, best_c = cost, c
        if best_c:
            floor[t] = best_c
    return floor


def _copies(t: str, held: Counter[str], more: dict[str, Counter[int]]) -> Counter[int]:
    """{copies: fillers holding that many} of a token on one side."""
    h = Counter(more.get(t, ()))
    h[1] = held[t] - h.total()
    return h


def _split(keys: list[tuple[str, ...]], sets: list[frozenset[str]], floor: Counter[str]) -> list[tuple[Tokens, Tokens]]:
    """Each filler's tokens beyond the floors and its deficits (module docstring)."""
    empty: Tokens = frozenset()
    if not floor:
        return [(ks if len(ks) == len(k) else Counter(k), empty) for k, ks in zip(keys, sets)]
    fkeys = frozenset(floor) if all(c == 1 for c in floor.values()) else None
    out: list[tuple[Tokens, Tokens]] = []
    for k, ks in zip(keys, sets):
        if len(ks) == len(k) and fkeys is not None:
            out.append((ks - fkeys, fkeys - ks))
        else:
            ck = Counter(k)
            out.append((ck - floor, floor - ck))
    return out


def _hubs(bd_r: list[tuple[Tokens, Tokens]], bd_p: list[tuple[Tokens, Tokens]], m_max: float, e_max: float,
          held_r: Counter[str], held_p: Counter[str], floor: Counter[str]) -> tuple[frozenset[str], frozenset[str]]:
    """A slot's hub tokens (`iescore.match.hubs`): those beyond their floors, and the
    floors lacked, whose holders on the two sides make at least ``_HUB_PAIRS`` pairs, four
    per filler or more (``held_r``/``held_p``: the fillers holding each token at all, a
    bound on those holding it beyond its floor). None where the pairs the rule could
    accept through hub tokens alone (fillers with at most ``m_max`` / ``e_max`` other
    tokens beyond the floors, all their pairs) would be half as many as the pairs saved."""
    none: tuple[frozenset[str], frozenset[str]] = (frozenset(), frozenset())
    n_r, n_p = len(bd_r), len(bd_p)
    if n_r * n_p < _HUB_PAIRS:
        return none
    least = max(_HUB_PAIRS, 4 * (n_r + n_p))
    # a hub's answers number at least least / n_p; only a floor is lacked
    maybe = ([t for t in _frequent(held_r, -(-least // n_p)) if held_r[t] * held_p.get(t, 0) >= least], list(floor))
    saved = 0
    hubs = []
    for part, tokens in enumerate(maybe):
        want = frozenset(tokens)  # their holders beyond the floors (part 0), or short of them (1)
        h_r = Counter(chain.from_iterable(want.intersection(x[part]) for x in bd_r)) if want else Counter()
        h_p = Counter(chain.from_iterable(want.intersection(x[part]) for x in bd_p)) if want else Counter()
        hub = frozenset(t for t, h in h_r.items() if h * h_p[t] >= least)
        saved += sum(h_r[t] * h_p[t] for t in hub)
        hubs.append(hub)
    if not saved:
        return none
    low_r = sum(1 for b, _ in bd_r if _size(_outside(b, hubs[0])) <= m_max)
    low_p = sum(1 for b, _ in bd_p if _size(_outside(b, hubs[0])) <= e_max)
    if 2 * low_r * low_p > saved:
        return none
    return hubs[0], hubs[1]


def _frequent(held: Counter[str], at_least: int) -> list[str]:
    """The tokens ``held`` counts at least ``at_least`` times (one pass in numpy)."""
    counts = np.fromiter(held.values(), dtype=np.int64, count=len(held))
    keys = list(held)
    return [keys[i] for i in np.flatnonzero(counts >= at_least).tolist()]


def _outside(x: Tokens, hub: frozenset[str]) -> Tokens:
    """The copies of ``x`` outside the tokens ``hub``."""
    if isinstance(x, frozenset):
        return x - hub
    return Counter({t: c for t, c in x.items() if t not in hub})


def _candidates(R: Units, P: Units, rule: Rule) -> tuple[np.ndarray, np.ndarray, list[Tokens], list[Tokens],
                                                         list[Tokens], list[Tokens], list[HubSlot]]:
    """The same-document, same-slot pairs that can weigh anything (module docstring), but
    the hub pairs (`iescore.match.hubs`), sorted by (prediction, answer), every
    answer's and prediction's tokens beyond the floors and deficits, and the slots with hub
    tokens: (answers, predictions, beyond_r, beyond_p, short_r, short_p, hub slots)."""
    assert R.key is not None and P.key is not None
    slot_r: dict[tuple[int, int], list[int]] = {}
    slot_p: dict[tuple[int, int], list[int]] = {}
    for i, s in enumerate(zip(R.doc.tolist(), R.label.tolist())):
        slot_r.setdefault(s, []).append(i)
    for j, s in enumerate(zip(P.doc.tolist(), P.label.tolist())):
        slot_p.setdefault(s, []).append(j)
    empty: Tokens = frozenset()
    beyond_r, short_r = [empty] * len(R), [empty] * len(R)
    beyond_p, short_p = [empty] * len(P), [empty] * len(P)
    tok_r: dict[object, list[int]] = {}
    tok_p: dict[object, list[int]] = {}
    lack_r: dict[object, list[int]] = {}
    lack_p: dict[object, list[int]] = {}
    eq_r: dict[object, list[int]] = {}
    eq_p: dict[object, list[int]] = {}
    few_l: list[int] = []
    few_r: list[int] = []
    hub_slots: list[HubSlot] = []
    e_max = rule.e if rule.kind != "exact" else -1
    m_max = rule.m if rule.kind == "overlap" else 0
    for s, ps in slot_p.items():
        rs = slot_r.get(s)
        if not rs:
            continue
        keys_r, keys_p = [R.key[i] for i in rs], [P.key[j] for j in ps]
        sets_r, sets_p = [frozenset(k) for k in keys_r], [frozenset(k) for k in keys_p]
        hold_r, hold_p = _holders(keys_r, sets_r), _holders(keys_p, sets_p)
        floor = _floors(len(rs), len(ps), hold_r, hold_p)
        bd_r, bd_p = _split(keys_r, sets_r, floor), _split(keys_p, sets_p, floor)
        hub_b, hub_d = _hubs(bd_r, bd_p, m_max, e_max, hold_r[0], hold_p[0], floor)
        hubs = hub_b or hub_d
        held: dict[tuple[bool, str], tuple[list[int], list[int]]] = {}
        sizes: tuple[list[int], list[int]] = ([], [])
        copies: tuple[list[Copies], list[Copies]] = ([], [])  # each filler's hub tokens and copies
        low_r: list[int] = []
        low_p: list[int] = []
        for side, idx, keys, bd, beyond, short, tok, lack, eq, low, lim in (
                (0, rs, keys_r, bd_r, beyond_r, short_r, tok_r, lack_r, eq_r, low_r, m_max),
                (1, ps, keys_p, bd_p, beyond_p, short_p, tok_p, lack_p, eq_p, low_p, e_max)):
            for i, k, (b, d) in zip(idx, keys, bd):
                beyond[i], short[i] = b, d
                if hubs:  # the hub tokens are indexed apart (their holders), the others as usual
                    b_own, d_own = _outside(b, hub_b), _outside(d, hub_d)
                    mine = []
                    for part, x, hub in ((False, b, hub_b), (True, d, hub_d)):
                        for t in hub.intersection(x):
                            held.setdefault((part, t), ([], []))[side].append(i)
                            mine.append(((part, t), x[t] if isinstance(x, Counter) else 1))
                    sizes[side].append(_size(b) - _size(b_own) + _size(d) - _size(d_own))
                    copies[side].append(tuple(sorted(mine)))
                else:
                    b_own, d_own = b, d
                if not b_own and not d_own:  # no index entry: equal fillers are found by hashing
                    eq.setdefault((s, k), []).append(i)
                for t in b_own:
                    tok.setdefault((s, t), []).append(i)
                for t in d_own:
                    lack.setdefault((s, t), []).append(i)
                if (floor or hubs) and _size(b_own) <= lim:
                    low.append(i)
        for j in low_p:
            few_l.extend(low_r)
            few_r.extend([j] * len(low_r))
        if held:
            hub_slots.append(HubSlot(rs, ps, sizes[0], sizes[1], list(held.values()), copies[0], copies[1]))
    l1, r1 = _join(tok_r, tok_p)
    l2, r2 = _join(lack_r, lack_p)
    l3, r3 = _join(eq_r, eq_p)
    r, p = _sorted_pairs(np.array(l1 + l2 + l3 + few_l, dtype=_I64), np.array(r1 + r2 + r3 + few_r, dtype=_I64),
                         len(R))
    return r, p, beyond_r, beyond_p, short_r, short_p, hub_slots


def _sorted_pairs(r: np.ndarray, p: np.ndarray, n_r: int) -> tuple[np.ndarray, np.ndarray]:
    """The distinct pairs, sorted by (prediction, answer)."""
    code = np.unique(p * max(n_r, 1) + r)
    return code % max(n_r, 1), code // max(n_r, 1)


def obd_pairs(R: Units, P: Units, rule: Rule) -> Pairs:
    """The same-document, same-slot filler pairs that can weigh anything (module docstring),
    with rule attributes (Concepts: matching rules (OBD)), shared tokens and
    weights, and every filler's gain when left unaligned. Every pair of a slot left out
    satisfies no rule and weighs nothing, or shares only hub tokens in a slot where no
    best alignment uses such a pair (`iescore.match.hubs`): the slot alignment
    (`iescore.match.slots`) treats the slot as complete."""
    assert R.key is not None and P.key is not None
    z = np.zeros(0, dtype=_I64)
    if len(R) == 0 or len(P) == 0:
        return Pairs(z, z, z.astype(bool), z.astype(bool), z.astype(bool), z, z, z,
                     (np.zeros(len(R), dtype=_I64), np.zeros(len(P), dtype=_I64)))
    # many small sets, lists and dicts, no cycle; they are freed (the helper returns) before
    # the collector runs again, or its first collection would walk them all (a sixth of a
    # second at 100,000 fillers of the bench's two_hubs shape)
    with no_cycles_collected():
        return _obd_pairs(R, P, rule)


def _obd_pairs(R: Units, P: Units, rule: Rule) -> Pairs:
    """`obd_pairs` of non-empty sides."""
    r, p, beyond_r, beyond_p, short_r, short_p, hubs = _candidates(R, P, rule)
    sides = (beyond_r, beyond_p, short_r, short_p)
    alone = (np.array([_size(d) for d in short_r], dtype=_I64), np.array([_size(d) for d in short_p], dtype=_I64))
    pairs = _attributes(R, P, rule, r, p, sides, alone)
    needed, blocks = hub_pairs_needed(pairs, hubs, len(R))
    if not _BLOCKS:
        needed, blocks = needed + [(a, b) for a, b, _ in blocks], []
    if needed:
        pairs = _with_hub_pairs(R, P, rule, pairs, needed, sides)
    if blocks:
        pairs = replace(pairs, blocks=tuple((np.array(a, dtype=_I64), np.array(b, dtype=_I64), w)
                                            for a, b, w in blocks))
    return pairs


def _with_hub_pairs(R: Units, P: Units, rule: Rule, pairs: Pairs, groups: list[tuple[list[int], list[int]]],
                    sides: tuple[list[Tokens], ...]) -> Pairs:
    """``pairs`` and every pair of each group's answers and predictions, sorted by
    (prediction, answer)."""
    assert pairs.weight is not None
    left: list[int] = []
    right: list[int] = []
    for hr, hp in groups:
        for j in hp:
            left.extend(hr)
            right.extend([j] * len(hr))
    r, p = _sorted_pairs(np.array(left, dtype=_I64), np.array(right, dtype=_I64), len(R))
    n = max(len(R), 1)
    fresh = ~np.isin(p * n + r, pairs.p * n + pairs.r)
    extra = _attributes(R, P, rule, r.compress(fresh), p.compress(fresh), sides, pairs.alone)
    assert extra.weight is not None
    cols = [np.concatenate((x, y)) for x, y in zip(
        (pairs.r, pairs.p, pairs.same, pairs.ok, pairs.exact, pairs.err, pairs.close, pairs.weight),
        (extra.r, extra.p, extra.same, extra.ok, extra.exact, extra.err, extra.close, extra.weight))]
    o = np.argsort(cols[1] * n + cols[0])
    r, p, same, ok, exact, err, close, weight = (x.take(o) for x in cols)
    return Pairs(r, p, same, ok, exact, err, close, weight, pairs.alone)


def _attributes(R: Units, P: Units, rule: Rule, r: np.ndarray, p: np.ndarray, sides: tuple[list[Tokens], ...],
                alone: tuple[np.ndarray, np.ndarray] | None) -> Pairs:
    """The pairs' rule attributes, shared tokens and weights (``sides``: every answer's
    and prediction's tokens beyond the floors, then their deficits), with ``alone``."""
    assert R.key is not None and P.key is not None
    beyond_r, beyond_p, short_r, short_p = sides
    n = len(r)
    ok = np.zeros(n, dtype=bool)
    exact = np.zeros(n, dtype=bool)
    err = np.zeros(n, dtype=_I64)
    close = np.zeros(n, dtype=_I64)
    weight = np.zeros(n, dtype=_I64)
    for i, (ri, pi) in enumerate(zip(r.tolist(), p.tolist())):
        a, b = R.key[ri], P.key[pi]
        ok[i], err[i] = sequence_match(b, a, rule)
        exact[i] = a == b
        x, y = beyond_r[ri], beyond_p[pi]
        if isinstance(x, frozenset) and isinstance(y, frozenset):  # no token repeats
            close[i] = len(frozenset(a) & frozenset(b))
        else:
            close[i] = _shared(a, b)
        weight[i] = _common(x, y) + _common(short_r[ri], short_p[pi])
    return Pairs(r, p, np.ones(n, dtype=bool), ok, exact, err, close, weight, alone)
