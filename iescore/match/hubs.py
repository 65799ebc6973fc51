"""Stage 2 of the pipeline (match), OBD: a slot's *common* tokens, held by many fillers of
both sides, and the proof that no best alignment needs the pairs sharing nothing else
(README, Definitions: slot errors; :mod:`iescore.match.fillers`).

A token on a share f of a slot's fillers on both sides, less than most of them (so no
floor helps), makes (f n)² pairs share it. :mod:`iescore.match.fillers` indexes such a
*hub* token apart: a pair that shares a hub token and nothing else (no other token, not
equal, not accepted by the rule) is a *hub pair*, left out, and it weighs at most its two
fillers' hub copies: h(a, b) <= min(s(a), s(b)), s(x) the copies x holds of hub tokens.
Leaving them out is exact when a *certificate* shows that no best alignment uses one.

The alignment (correct pairs, then shared tokens; every pair can be added at no cost, the
slot being complete) is a maximum-weight matching of the pairs that weigh something and
of the stand-ins for unaligned fillers' gains (:mod:`iescore.match.slots`), one integer
weight per pair (``c``: correct pairs weighted above any total of shared tokens and gains).
Its linear programme has a dual: potentials U(a), V(b) >= 0 with U(a) + V(b) >= c(a, b)
on every pair, of least total the optimum. Take an optimal dual of the pairs kept. If it
also gives every hub pair U(a) + V(b) > c(a, b) (strictly), it is a dual of all the pairs
too, so both optima are equal, and, by complementary slackness, no optimal matching of all
the pairs holds a hub pair: the best alignments with and without them are the same ones,
and so is the tie rule's choice among them.

The certificate asks for bounds by the hub copies: U(a) >= X(s(a)) and V(b) >= Y(s(b)),
with X(s) + Y(t) > 2 min(s, t) whenever s, t > 0 (weights are doubled to stay integers);
it tries four splits (:data:`_SPLITS`). Optimal duals are those tight on one optimal
matching M and zero on the fillers M leaves unmatched; writing V(b) = c(M(b), b) - U(M(b)),
every other condition is a difference between two answers' U or a bound on one, and the
least U meeting the lower ones (a longest-path relaxation: M optimal, no cycle gains)
must meet the upper ones. When no split passes, the slot keeps every pair sharing a
token. The plain reference, every pair compared, is in tests/test_slots.py.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np

from .paths import _shortest_paths
from .rules import Pairs
from .units import _I64

__all__ = ["HubSlot", "certificates", "certified"]

_BUDGET = 8  # the relaxation gives up after this many times (answers + pairs) steps

# the bounds (X(s), Y(t)) on an answer with s hub copies and a prediction with t (doubled
# weights; a filler without any keeps the bound 0): half each, plus one on one side; or
# everything on one side
_SPLITS: tuple[tuple[Callable[[int], int], Callable[[int], int]], ...] = (
    (lambda s: s + 1, lambda t: t),
    (lambda s: s, lambda t: t + 1),
    (lambda s: 0, lambda t: 2 * t + 1),
    (lambda s: 2 * s + 1, lambda t: 0),
)


class HubSlot(NamedTuple):
    """A slot with hub tokens: its answers and predictions, their hub copies, and each hub
    token's holders on the two sides (the pairs left out)."""

    rs: list[int]
    ps: list[int]
    size_r: list[int]
    size_p: list[int]
    holders: list[tuple[list[int], list[int]]]


def certificates(pairs: Pairs, hubs: list[HubSlot], n_r: int) -> list[bool]:
    """For each slot with hub tokens, whether no best alignment uses a hub pair
    (:func:`certified`, on the slot's pairs that weigh something and
    the stand-ins of :mod:`iescore.match.slots`)."""
    if not hubs:
        return []
    assert pairs.weight is not None and pairs.alone is not None
    which = np.full(n_r, -1, dtype=_I64)
    for k, h in enumerate(hubs):
        which[h.rs] = k
    of = which.take(pairs.r)
    o = np.argsort(of, kind="stable")
    bounds = np.searchsorted(of.take(o), np.arange(len(hubs) + 1)).tolist()
    out = []
    for k, h in enumerate(hubs):
        at = o[bounds[k] : bounds[k + 1]]
        ok, w = pairs.ok.take(at), pairs.weight.take(at)
        at, ok, w = (x.compress(ok | (w > 0)) for x in (at, ok, w))
        a = np.searchsorted(np.array(h.rs), pairs.r.take(at)).tolist()  # numbers within the slot
        b = np.searchsorted(np.array(h.ps), pairs.p.take(at)).tolist()
        gain_r, gain_p = (pairs.alone[0].take(h.rs).tolist(), pairs.alone[1].take(h.ps).tolist())
        # correct pairs weigh more than any alignment's shared tokens and gains, hub pairs included
        most = max(int(w.max(initial=0)), max(h.size_r), max(h.size_p), max(gain_r), max(gain_p))
        top = 1 + max(len(h.rs), len(h.ps)) * most
        c = [2 * (top * x + y) for x, y in zip(ok.tolist(), w.tolist())]
        size_r, size_p = list(h.size_r), list(h.size_p)
        # the stand-ins of the larger side's unaligned fillers (iescore.match.slots), no hub copies
        n_r_, n_p_ = len(size_r), len(size_p)
        if n_r_ != n_p_:
            gain = gain_r if n_r_ > n_p_ else gain_p
            who = [i for i, g in enumerate(gain) if g > 0]
            for t in range(min(len(who), abs(n_r_ - n_p_))):
                if n_r_ > n_p_:
                    a.extend(who)
                    b.extend([n_p_ + t] * len(who))
                    size_p.append(0)
                else:
                    a.extend([n_r_ + t] * len(who))
                    b.extend(who)
                    size_r.append(0)
                c.extend(2 * gain[i] for i in who)
        out.append(certified(a, b, c, size_r, size_p))
    return out


def certified(a: Sequence[int], b: Sequence[int], c: Sequence[int], size_r: Sequence[int],
              size_p: Sequence[int]) -> bool:
    """Whether no best alignment of one slot uses a hub pair (module docstring).

    ``a``/``b`` are the kept pairs (answer and prediction numbers within the slot, each pair
    once), ``c`` their positive integer weights, already doubled; ``size_r``/``size_p``
    every answer's and prediction's hub copies.

    >>> # answers "the a", "the b", predictions "the a", "b" ("the" a hub token): the kept
    >>> # pairs share 2 and 1 tokens (doubled: 4, 2); "the b" - "the a" would share 1
    >>> certified([0, 1], [0, 1], [4, 2], [1, 1], [1, 0])
    True
    >>> # answer "the a", predictions "the b", "a": the hub pair shares as much as the kept one
    >>> certified([0], [1], [2], [1], [1, 0])
    False
    """
    n_r, n_p = len(size_r), len(size_p)
    gains: list[dict[int, int]] = [{} for _ in range(n_r)]
    for i, j, w in zip(a, b, c):
        gains[i][j] = w
    col_of = _shortest_paths(gains, n_p)[0]  # one optimal matching
    row_of = [-1] * n_p
    for i, j in enumerate(col_of):
        if j >= 0:
            row_of[j] = i
    # U(k) >= U(i) + d for a pair (k, j) beside the matched (i, j); U(k) >= c for a pair
    # with an unmatched prediction
    after: list[list[tuple[int, int]]] = [[] for _ in range(n_r)]
    floor = [0] * n_r
    for i, j, w in zip(a, b, c):
        m = row_of[j]
        if m < 0:
            floor[i] = max(floor[i], w)
        elif m != i:
            after[m].append((i, w - gains[m][j]))
    for low_x, low_y in _SPLITS:
        if any(row_of[j] < 0 and s and low_y(s) > 0 for j, s in enumerate(size_p)):
            continue  # an unmatched prediction's V is 0
        lo = [max(f, low_x(s) if s else 0) for f, s in zip(floor, size_r)]
        hi = [gains[i][j] - (low_y(size_p[j]) if size_p[j] else 0) if j >= 0 else 0 for i, j in enumerate(col_of)]
        if _least_fits(lo, hi, after):
            return True
    return False


def _least_fits(lo: list[int], hi: list[int], after: list[list[tuple[int, int]]]) -> bool:
    """Whether the least U with U >= ``lo`` and U(k) >= U(i) + d for every (k, d) in
    ``after[i]`` stays within ``hi`` (U is raised in place of ``lo``). Bellman-Ford's
    first-in first-out relaxation; past ``_BUDGET`` passes' worth of work the answer is
    no (the slot then keeps its hub pairs)."""
    x = lo
    if any(v > h for v, h in zip(x, hi)):
        return False
    todo = deque(i for i, out in enumerate(after) if out)
    waiting = [bool(out) for out in after]
    budget = _BUDGET * (len(x) + sum(map(len, after)))
    while todo:
        i = todo.popleft()
        waiting[i] = False
        budget -= len(after[i]) + 1
        if budget < 0:
            return False
        xi = x[i]
        for k, d in after[i]:
            if xi + d > x[k]:
                x[k] = xi + d
                if x[k] > hi[k]:
                    return False
                if not waiting[k] and after[k]:
                    waiting[k] = True
                    todo.append(k)
    return True
