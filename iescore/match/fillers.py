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
few fillers. Under a rule by share the bound comes from the floors' copies ``F`` of the
slot (a pair sharing only floor copies shares at most ``F`` tokens): IoU(t) allows at
most ``F (1 - t) / t`` tokens beyond the floors on either side, cover(t) that many on the
answer's and any number on the prediction's. sim(t) compares texts, which may be similar
without sharing a token ("Smith", "Smyth"): every pair of its slots is compared (in C,
by rapidfuzz), and sim(1), equal texts, by hashing.

Each token's floor is chosen per slot for the fewest such pairs: none, with the pairs of
its holders on both sides, or one of the counts its fillers hold, with the pairs of the
fillers beyond it on both sides, of those short of it on both sides and, on the larger
side, their pairs with the stand-ins of unaligned fillers (`iescore.match.slots`).
"Dr" once in every filler but one answer of a slot of n a side gives no pair at all instead
of n² - n. A floor only helps a token held by more than half of one side, so the choice
is made for those few.

A token on a share of both sides' fillers, less than most (or a floor lacked by such a
share), still makes many pairs: (f n)² for a share f of n fillers a side. They are
listed; a slot whose pairs (stand-ins' included) would pass ``_SLOT_PAIRS`` is refused
with an `iescore.errors.InputError` naming its document, its label and its pairs
(a shape no real template has: tens of thousands of fillers in one slot of one
document, a fair share of them holding one token). The plain reference, every pair
compared, is in tests/test_slots.py.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from itertools import chain
from typing import TypeAlias

import numpy as np

from ..errors import InputError
from ..nogc import no_cycles_collected
from ..options import Rule
from .rules import Pairs, levenshtein, sequence_match
from .units import _I64, Units

__all__ = ["obd_pairs"]

# the most candidate pairs one slot may make (its filler pairs and its stand-ins' pairs);
# beyond it the slot is refused (module docstring)
_SLOT_PAIRS = 4_000_000

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


def _candidates(R: Units, P: Units, rule: Rule, names: Names) -> tuple[np.ndarray, np.ndarray, list[Tokens],
                                                                       list[Tokens], list[Tokens], list[Tokens]]:
    """The same-document, same-slot pairs that can weigh anything (module docstring),
    sorted by (prediction, answer), and every answer's and prediction's tokens beyond the
    floors and deficits: (answers, predictions, beyond_r, beyond_p, short_r, short_p)."""
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
    for s, ps in slot_p.items():
        rs = slot_r.get(s)
        if not rs:
            continue
        keys_r, keys_p = [R.key[i] for i in rs], [P.key[j] for j in ps]
        sets_r, sets_p = [frozenset(k) for k in keys_r], [frozenset(k) for k in keys_p]
        hold_r, hold_p = _holders(keys_r, sets_r), _holders(keys_p, sets_p)
        floor = _floors(len(rs), len(ps), hold_r, hold_p)
        m_max, e_max = _limits(rule, floor)
        if rule.kind == "sim":
            _similar(s, rs, ps, keys_r, keys_p, rule, names, few_l, few_r)
        bd_r, bd_p = _split(keys_r, sets_r, floor), _split(keys_p, sets_p, floor)
        low_r: list[int] = []
        low_p: list[int] = []
        for idx, keys, bd, beyond, short, tok, lack, eq, low, lim in (
                (rs, keys_r, bd_r, beyond_r, short_r, tok_r, lack_r, eq_r, low_r, m_max),
                (ps, keys_p, bd_p, beyond_p, short_p, tok_p, lack_p, eq_p, low_p, e_max)):
            for i, k, (b, d) in zip(idx, keys, bd):
                beyond[i], short[i] = b, d
                if not b and not d:  # no index entry: equal fillers are found by hashing
                    eq.setdefault((s, k), []).append(i)
                for t in b:
                    tok.setdefault((s, t), []).append(i)
                for t in d:
                    lack.setdefault((s, t), []).append(i)
                if floor and _size(b) <= lim:
                    low.append(i)
        big = bd_r if len(rs) > len(ps) else bd_p
        _check_size(s, len(rs), len(ps), keys_p, bd_p, sum(1 for _, d in big if d), len(low_r) * len(low_p),
                    (tok_r, tok_p, lack_r, lack_p, eq_r, eq_p), names)
        for j in low_p:
            few_l.extend(low_r)
            few_r.extend([j] * len(low_r))
    l1, r1 = _join(tok_r, tok_p)
    l2, r2 = _join(lack_r, lack_p)
    l3, r3 = _join(eq_r, eq_p)
    r, p = _sorted_pairs(np.array(l1 + l2 + l3 + few_l, dtype=_I64), np.array(r1 + r2 + r3 + few_r, dtype=_I64),
                         len(R))
    return r, p, beyond_r, beyond_p, short_r, short_p


Names: TypeAlias = "tuple[Sequence[str], Sequence[str]] | None"  # document ids and label names


def _limits(rule: Rule, floor: Counter[str]) -> tuple[float, float]:
    """The most tokens beyond the floors an answer and a prediction may hold for the rule
    to accept them through floor copies only (case (3) of the module docstring; -1: never).
    Such a pair shares at most ``F`` tokens, the floors' copies, so under IoU(t) its
    missing and extra tokens add up to at most ``F (1 - t) / t``, and under cover(t)
    its missing ones (its extra ones are free)."""
    if rule.kind == "exact" or rule.kind == "sim":  # sim's pairs are compared all (`_similar`)
        return -1, -1
    if rule.kind in ("contain", "overlap"):
        return (rule.m if rule.kind == "overlap" else 0), rule.e
    t = rule.share()
    bound = int(sum(floor.values()) * (1 - t) / t)
    return bound, (bound if rule.kind == "iou" else math.inf)


def _similar(s: tuple[int, int], rs: list[int], ps: list[int], keys_r: list[tuple[str, ...]],
             keys_p: list[tuple[str, ...]], rule: Rule, names: Names, out_l: list[int], out_r: list[int]) -> None:
    """Add to ``out_l``, ``out_r`` the pairs of slot ``s`` that sim(t) may accept: the
    pairs of equal texts under sim(1), else every pair whose similarity rapidfuzz finds
    within ``1e-5`` of ``t`` (its float cut-off can drop a pair of similarity exactly ``t``;
    `sequence_match` then decides exactly). Two texts may be
    similar without sharing a token ("Smith", "Smyth"), so every pair of the slot is
    compared (in C); a slot of more than ``_SLOT_PAIRS`` pairs is refused."""
    text_r, text_p = [" ".join(k) for k in keys_r], [" ".join(k) for k in keys_p]
    if rule.t == 1:
        where: dict[str, list[int]] = {}
        for i, x in zip(rs, text_r):
            where.setdefault(x, []).append(i)
        for j, x in zip(ps, text_p):
            got = where.get(x, ())
            out_l.extend(got)
            out_r.extend([j] * len(got))
        return
    if len(rs) * len(ps) > _SLOT_PAIRS:
        raise InputError(
            f"{_slot_name(s, names)}: this OBD slot of {len(rs)} answers and {len(ps)} predictions makes "
            f"{len(rs) * len(ps):,} pairs to compare under {rule}, more than the {_SLOT_PAIRS:,} one slot "
            "may make; split its fillers over several documents or labels"
        )
    from rapidfuzz.process import cdist

    lev = levenshtein()
    sim = cdist(text_r, text_p, scorer=lev.normalized_similarity, score_cutoff=max(float(rule.t or 0) - 1e-5, 1e-12),
                dtype=np.float32)
    a, b = np.nonzero(sim)
    out_l.extend(np.asarray(rs, dtype=_I64)[a].tolist())
    out_r.extend(np.asarray(ps, dtype=_I64)[b].tolist())


def _slot_name(s: tuple[int, int], names: Names) -> str:
    return (f"document {names[0][s[0]]!r}, label {names[1][s[1]]!r}" if names
            else f"document #{s[0]}, label #{s[1]}")


def _check_size(s: tuple[int, int], n_r: int, n_p: int, keys_p: list[tuple[str, ...]],
                bd_p: list[tuple[Tokens, Tokens]], gains: int, few: int, index: tuple[dict[object, list[int]], ...],
                names: Names) -> None:
    """Raise `InputError` when slot ``s`` (document, label) of ``n_r`` answers and ``n_p``
    predictions would make more than ``_SLOT_PAIRS`` candidate pairs: the pairs of its
    index entries (a bound: a pair sharing two tokens counts twice), ``few`` pairs of
    fillers the rule may accept through floor copies, and the pairs of the ``gains``
    fillers with a gain on the larger side with their stand-ins (`iescore.match.slots`)."""
    excess = abs(n_r - n_p)
    if n_r * n_p + max(n_r, n_p) * excess <= _SLOT_PAIRS:
        return
    tok_r, tok_p, lack_r, lack_p, eq_r, eq_p = index
    n = few + gains * min(gains, excess)
    for left, right, keys in ((tok_r, tok_p, {t for b, _ in bd_p for t in b}),
                              (lack_r, lack_p, {t for _, d in bd_p for t in d}),
                              (eq_r, eq_p, {k for k, (b, d) in zip(keys_p, bd_p) if not b and not d})):
        n += sum(len(left.get((s, t), ())) * len(right[(s, t)]) for t in keys)
    if n > _SLOT_PAIRS:
        raise InputError(
            f"{_slot_name(s, names)}: this OBD slot of {n_r} answers and {n_p} predictions makes {n:,} candidate "
            f"pairs (fillers sharing a token, or left unaligned), more than the {_SLOT_PAIRS:,} one slot may "
            "make; split its fillers over several documents or labels, or score them in setting='AO'"
        )


def _sorted_pairs(r: np.ndarray, p: np.ndarray, n_r: int) -> tuple[np.ndarray, np.ndarray]:
    """The distinct pairs, sorted by (prediction, answer)."""
    code = np.unique(p * max(n_r, 1) + r)
    return code % max(n_r, 1), code // max(n_r, 1)


def obd_pairs(R: Units, P: Units, rule: Rule, names: Names = None) -> Pairs:
    """The same-document, same-slot filler pairs that can weigh anything (module docstring),
    with rule attributes (Concepts: matching rules (OBD)), shared tokens and
    weights, and every filler's gain when left unaligned. Every pair of a slot left out
    satisfies no rule and weighs nothing: the slot alignment (`iescore.match.slots`)
    treats the slot as complete. ``names`` (the document ids and the label names) name
    a slot refused for its size (`InputError`)."""
    assert R.key is not None and P.key is not None
    z = np.zeros(0, dtype=_I64)
    if len(R) == 0 or len(P) == 0:
        return Pairs(z, z, z.astype(bool), z.astype(bool), z.astype(bool), z, z, z,
                     (np.zeros(len(R), dtype=_I64), np.zeros(len(P), dtype=_I64)), z.astype(bool))
    # many small sets, lists and dicts, no cycle; they are freed (the helper returns) before
    # the collector runs again, or its first collection would walk them all
    with no_cycles_collected():
        return _obd_pairs(R, P, rule, names)


def _obd_pairs(R: Units, P: Units, rule: Rule, names: Names) -> Pairs:
    """`obd_pairs` of non-empty sides."""
    r, p, beyond_r, beyond_p, short_r, short_p = _candidates(R, P, rule, names)
    alone = (np.array([_size(d) for d in short_r], dtype=_I64), np.array([_size(d) for d in short_p], dtype=_I64))
    return _attributes(R, P, rule, r, p, (beyond_r, beyond_p, short_r, short_p), alone)


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
    # the pairs of one slot share a label, so the rule's test alone (``fit``) is ``ok``
    return Pairs(r, p, np.ones(n, dtype=bool), ok, exact, err, close, weight, alone, ok)
