"""Stage 2 of the pipeline (match), OBD: a slot's *common* tokens, held by many fillers of
both sides, and the proof that no best alignment needs the pairs sharing nothing else
(Concepts: slot errors; `iescore.match.fillers`).

A token on a share f of a slot's fillers on both sides, less than most of them (so no
floor helps), makes (f n)² pairs share it. `iescore.match.fillers` indexes such a
*hub* token apart: a pair that shares a hub token and nothing else (no other token, not
equal, not accepted by the rule) is a *hub pair*, left out, and it weighs at most its two
fillers' hub copies: h(a, b) <= min(s(a), s(b)), s(x) the copies x holds of hub tokens.
Leaving them out is exact when a *certificate* shows that no best alignment uses one.

The alignment (correct pairs, then shared tokens; every pair can be added at no cost, the
slot being complete) is a maximum-weight matching of the pairs that weigh something and
of the stand-ins for unaligned fillers' gains (`iescore.match.slots`), one integer
weight per pair (``c``: correct pairs weighted above any total of shared tokens and gains).
Its linear programme has a dual: potentials U(a), V(b) >= 0 with U(a) + V(b) >= c(a, b)
on every pair, of least total the optimum. Take an optimal dual of the pairs kept. If it
also gives every hub pair U(a) + V(b) > c(a, b) (strictly), it is a dual of all the pairs
too, so both optima are equal, and, by complementary slackness, no optimal matching of all
the pairs holds a hub pair: the best alignments with and without them are the same ones,
and so is the tie rule's choice among them.

The certificate asks for bounds by the hub copies: U(a) >= X(s(a)) and V(b) >= Y(s(b)),
with X(s) + Y(t) > 2 min(s, t) whenever s, t > 0 (weights are doubled to stay integers);
it tries four splits (`_SPLITS`). Optimal duals are those tight on one optimal
matching M and zero on the fillers M leaves unmatched; writing V(b) = c(M(b), b) - U(M(b)),
every other condition is a difference between two answers' U or a bound on one, and the
least U meeting the lower ones (a longest-path relaxation: M optimal, no cycle gains)
must meet the upper ones.

When no split passes, some hub pairs may be in best alignments (hub fillers left without
a pair on both sides pair through the hub). With one hub token that every holder holds
once (`tight_holders`), the hub is a node every hub pair passes through: a dual of
all the pairs is then a potential x for the hub and bounds U(a) >= x on its answers,
V(b) >= 2 - x on its predictions (doubled weights; an integral optimum has x in 0, 1, 2),
and D(x), the bounds' total plus the best matching of the weights less the bounds, is an
upper bound of every alignment. A matching of those reduced weights reaches it, with the
free holders paired through the hub, when it leaves no holder whose bound is positive
unpaired (counts of free holders on the two sides); then that dual is optimal, and, by
complementary slackness again, a best alignment can only use the hub pairs it leaves
tight: between the holders whose reduced potentials are 0, taken in the midpoint of the
least and the greatest dual on the matching. The slot keeps those pairs, as a block
(``Pairs.blocks``: each pair not found otherwise shares the hub token alone, so weighs
one token, and the rule does not accept it) that `iescore.match.slots` never writes
out; when no x gets there, or with several hub tokens or copies, every pair sharing a hub
token, as one block per level of copies shared (`holder_blocks`; listed beyond
``_MAX_BLOCKS`` levels). The plain reference,
every pair compared, is in tests/test_slots.py.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np

from .paths import _shortest_paths
from .rules import Pairs
from .slots import _stand_ins
from .units import _I64

__all__ = ["HubSlot", "certified", "hub_pairs_needed", "tight_holders"]

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


Copies = tuple[tuple[tuple[bool, str], int], ...]  # a filler's hub tokens (lacked or not) and copies


class HubSlot(NamedTuple):
    """A slot with hub tokens: its answers and predictions, their hub copies, each hub
    token's holders on the two sides (the pairs left out), and each filler's hub tokens
    with their copies."""

    rs: list[int]
    ps: list[int]
    size_r: list[int]
    size_p: list[int]
    holders: list[tuple[list[int], list[int]]]
    copies_r: list[Copies]
    copies_p: list[Copies]


_MAX_BLOCKS = 64  # a slot whose hub pairs need more blocks than this has them listed


def hub_pairs_needed(pairs: Pairs, hubs: list[HubSlot],
                     n_r: int) -> tuple[list[tuple[list[int], list[int]]], list[tuple[list[int], list[int], int]]]:
    """The hub pairs some best alignment may use: none in a slot `certified` (on the
    slot's pairs that weigh something and the stand-ins of `iescore.match.slots`); in
    a slot with one hub token held once by each holder, those of the `tight_holders`;
    else those of all its holders. As blocks (the second list: answers, predictions and a
    weight, `holder_blocks`), or as groups of (answers, predictions) whose pairs are
    all listed (the first list) where a slot would need more than ``_MAX_BLOCKS`` blocks."""
    out: list[tuple[list[int], list[int]]] = []
    blocks: list[tuple[list[int], list[int], int]] = []
    if not hubs:
        return out, blocks
    which = np.full(n_r, -1, dtype=_I64)
    for k, h in enumerate(hubs):
        which[h.rs] = k
    of = which.take(pairs.r)
    o = np.argsort(of, kind="stable")
    bounds = np.searchsorted(of.take(o), np.arange(len(hubs) + 1)).tolist()
    for k, h in enumerate(hubs):
        graph = _weighted(pairs, o[bounds[k] : bounds[k + 1]], h)
        if certified(*graph):
            continue
        tight = None
        if len(h.holders) == 1 and max(graph[3]) <= 1 and max(graph[4]) <= 1:
            tight = tight_holders(*graph)
        if tight is not None:  # one token, held once: each pair not listed shares it alone
            if tight[0] and tight[1]:
                blocks.append(([h.rs[i] for i in tight[0]], [h.ps[j] for j in tight[1]], 1))
            continue
        mine = holder_blocks(h)
        if mine is None:
            out.extend(h.holders)
        else:
            blocks.extend(mine)
    return out, blocks


def holder_blocks(h: HubSlot) -> list[tuple[list[int], list[int], int]] | None:
    """Blocks holding every pair of a slot's hub holders at the hub copies its two fillers
    share, the best block holding a pair giving its weight: for each level L (copies per
    hub token) that the shared copies of some answer and prediction make, the fillers
    holding at least L, at the weight of L. None when more than ``_MAX_BLOCKS`` levels.

    >>> # "the" on answers 0 and 1 (twice on 1), "of" on 1; "the" on predictions 5 and 6, "of" on 6
    >>> t, o = (False, "the"), (False, "of")
    >>> h = HubSlot([0, 1], [5, 6], [1, 3], [1, 2], [], [((t, 1),), ((o, 1), (t, 2))], [((t, 1),), ((o, 1), (t, 1))])
    >>> sorted(holder_blocks(h), key=lambda b: b[2])
    [([0, 1], [5, 6], 1), ([1], [6], 2)]
    """
    by_r: dict[Copies, list[int]] = {}
    by_p: dict[Copies, list[int]] = {}
    for i, v in zip(h.rs, h.copies_r):
        by_r.setdefault(v, []).append(i)
    for j, v in zip(h.ps, h.copies_p):
        by_p.setdefault(v, []).append(j)
    have_r = {v: dict(v) for v in by_r if v}
    have_p = {v: dict(v) for v in by_p if v}
    levels: set[Copies] = set()
    for va in have_r:
        for vb in have_p.values():
            level = tuple((t, min(c, vb[t])) for t, c in va if t in vb)
            if level:
                levels.add(level)
                if len(levels) > _MAX_BLOCKS:
                    return None
    out = []
    for level in levels:
        rs = [i for v, d in have_r.items() if all(d.get(t, 0) >= c for t, c in level) for i in by_r[v]]
        ps = [j for v, d in have_p.items() if all(d.get(t, 0) >= c for t, c in level) for j in by_p[v]]
        out.append((sorted(rs), sorted(ps), sum(c for _, c in level)))
    return out


def _weighted(pairs: Pairs, at: np.ndarray, h: HubSlot) -> tuple[list[int], list[int], list[int], list[int],
                                                                 list[int]]:
    """One slot's pairs ``at`` that weigh something and the edges of its stand-ins
    (`iescore.match.slots`), numbered within the slot, stand-ins after the fillers,
    with their doubled weights, and every node's hub copies (none on a stand-in):
    (answers, predictions, weights, size_r, size_p)."""
    assert pairs.weight is not None and pairs.alone is not None
    ok, w = pairs.ok.take(at), pairs.weight.take(at)
    at, ok, w = (x.compress(ok | (w > 0)) for x in (at, ok, w))
    a = np.searchsorted(np.array(h.rs), pairs.r.take(at)).tolist()
    b = np.searchsorted(np.array(h.ps), pairs.p.take(at)).tolist()
    gain_r, gain_p = pairs.alone[0].take(h.rs).tolist(), pairs.alone[1].take(h.ps).tolist()
    # correct pairs weigh more than any alignment's shared tokens and gains, hub pairs included
    most = max(int(w.max(initial=0)), max(h.size_r), max(h.size_p), max(gain_r), max(gain_p))
    top = 1 + max(len(h.rs), len(h.ps)) * most
    c = [2 * (top * x + y) for x, y in zip(ok.tolist(), w.tolist())]
    size_r, size_p = list(h.size_r), list(h.size_p)
    n_r, n_p = len(size_r), len(size_p)
    if n_r != n_p:  # the larger side's fillers with a gain, each with each stand-in
        gain = np.array(gain_r if n_r > n_p else gain_p, dtype=_I64)
        slot_x, unit, number = _stand_ins(np.zeros(max(n_r, n_p), dtype=_I64), np.zeros(min(n_r, n_p), dtype=_I64),
                                          gain)
        bigger, extra = (a, b) if n_r > n_p else (b, a)
        bigger.extend(unit.tolist())
        extra.extend((min(n_r, n_p) + number).tolist())
        (size_p if n_r > n_p else size_r).extend([0] * len(slot_x))
        c.extend((2 * gain.take(unit)).tolist())
    return a, b, c, size_r, size_p


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
    m = _Matched(a, b, c, len(size_r), len(size_p))
    for low_x, low_y in _SPLITS:
        if any(m.row_of[j] < 0 and s and low_y(s) > 0 for j, s in enumerate(size_p)):
            continue  # an unmatched prediction's V is 0
        lo = [max(f, low_x(s) if s else 0) for f, s in zip(m.floor, size_r)]
        hi = [m.gains[i][j] - (low_y(size_p[j]) if size_p[j] else 0) if j >= 0 else 0 for i, j in enumerate(m.col_of)]
        if _least(lo, hi, m.after) is not None:
            return True
    return False


def tight_holders(a: Sequence[int], b: Sequence[int], c: Sequence[int], size_r: Sequence[int],
                  size_p: Sequence[int]) -> tuple[list[int], list[int]] | None:
    """For a slot with one hub token that each holder holds once (arguments as
    `certified`): the holders, answers and predictions, between which an optimal dual
    of all the pairs leaves the hub pairs tight, the only hub pairs a best alignment can
    use; None when no such dual was found (module docstring).

    >>> # answers "the a", "the x", predictions "the a", "the y": "the x" - "the y" is tight
    >>> tight_holders([0], [0], [4], [1, 1], [1, 1])
    ([1], [1])
    """
    hub_r = [i for i, s in enumerate(size_r) if s]
    hub_p = [j for j, s in enumerate(size_p) if s]
    best: tuple[list[int], list[int]] | None = None
    for x in (0, 1, 2):  # the hub's potential: bounds U >= x on its answers, V >= 2 - x on its predictions
        bound_r = [x * s for s in size_r]
        bound_p = [(2 - x) * s for s in size_p]
        cut = [(i, j, w - bound_r[i] - bound_p[j]) for i, j, w in zip(a, b, c)]
        # the pairs left a positive weight, and those left none that cover a bound
        cut = [e for e in cut if e[2] > 0 or (e[2] == 0 and (bound_r[e[0]] or bound_p[e[1]]))]
        top = 2 * (len(size_r) + len(size_p)) + 1
        for rank in (None, [top * w + (bound_r[i] > 0) + (bound_p[j] > 0) for i, j, w in cut]):
            # an optimal matching of those (the second time, one that covers the most bounds)
            m = _Matched([e[0] for e in cut], [e[1] for e in cut], [e[2] for e in cut], len(size_r), len(size_p),
                         rank)
            z = _tight(m, hub_r, hub_p, x)
            if z is not None and (best is None or len(z[0]) * len(z[1]) < len(best[0]) * len(best[1])):
                best = z
    return best


def _tight(m: _Matched, hub_r: list[int], hub_p: list[int], x: int) -> tuple[list[int], list[int]] | None:
    """The holders whose potentials are 0 in an optimal dual for the hub's potential ``x``
    and the reduced weights' optimal matching ``m``, if m, with the free holders paired by
    the hub, is a matching of all the pairs of total D(x): covers every holder whose bound
    is positive (`tight_holders`)."""
    free_r = sum(1 for i in hub_r if m.col_of[i] < 0)
    free_p = sum(1 for j in hub_p if m.row_of[j] < 0)
    if not (free_r <= free_p if x == 2 else free_p <= free_r if x == 0 else free_r == free_p):
        return None
    hi = [m.gains[i][j] if j >= 0 else 0 for i, j in enumerate(m.col_of)]
    least, most = _least(list(m.floor), hi, m.after), _greatest(m.floor, hi, m.after)
    if least is None or most is None:
        return None
    # their midpoint is an optimal dual too: a potential is 0 there only if it is 0 in both
    # (an answer's U in the greatest, a prediction's V in the least)
    z_r = [i for i in hub_r if most[i] == 0]
    z_p = [j for j in hub_p if m.row_of[j] < 0 or m.gains[m.row_of[j]][j] == least[m.row_of[j]]]
    return z_r, z_p


class _Matched:
    """One optimal matching of a slot's weighted pairs (``col_of``/``row_of``, -1: none),
    the weights by answer (``gains``), and the conditions on the answers' potentials U of
    the duals tight on it: U(k) >= U(i) + d for every (k, d) in ``after[i]`` (a pair (k, j)
    beside the matched (i, j)), and U(k) >= ``floor[k]`` (pairs with unmatched predictions).
    With ``rank`` (positive, ordering matchings as the weights ``c`` do, then further), the
    matching is one that maximises ``rank``."""

    def __init__(self, a: Sequence[int], b: Sequence[int], c: Sequence[int], n_r: int, n_p: int,
                 rank: Sequence[int] | None = None) -> None:
        self.gains: list[dict[int, int]] = [{} for _ in range(n_r)]
        for i, j, w in zip(a, b, c):
            self.gains[i][j] = w
        by = self.gains
        if rank is not None:
            by = [{} for _ in range(n_r)]
            for i, j, w in zip(a, b, rank):
                by[i][j] = w
        self.col_of = _shortest_paths(by, n_p)[0]
        self.row_of = [-1] * n_p
        for i, j in enumerate(self.col_of):
            if j >= 0:
                self.row_of[j] = i
        self.after: list[list[tuple[int, int]]] = [[] for _ in range(n_r)]
        self.floor = [0] * n_r
        for i, j, w in zip(a, b, c):
            m = self.row_of[j]
            if m < 0:
                self.floor[i] = max(self.floor[i], w)
            elif m != i:
                self.after[m].append((i, w - self.gains[m][j]))


def _greatest(lo: list[int], hi: list[int], after: list[list[tuple[int, int]]]) -> list[int] | None:
    """The greatest U within ``lo`` and ``hi`` meeting ``after`` (`_least` on -U)."""
    before: list[list[tuple[int, int]]] = [[] for _ in after]
    for i, out in enumerate(after):
        for k, d in out:
            before[k].append((i, d))
    x = _least([-h for h in hi], [-v for v in lo], before)
    return None if x is None else [-v for v in x]


def _least(lo: list[int], hi: list[int], after: list[list[tuple[int, int]]]) -> list[int] | None:
    """The least U with U >= ``lo`` and U(k) >= U(i) + d for every (k, d) in ``after[i]``,
    if it stays within ``hi`` (U is raised in place of ``lo``), else None. Bellman-Ford's
    first-in first-out relaxation; past ``_BUDGET`` passes' worth of work the answer is
    None too (the slot then keeps its hub pairs)."""
    x = lo
    if any(v > h for v, h in zip(x, hi)):
        return None
    todo = deque(i for i, out in enumerate(after) if out)
    waiting = [bool(out) for out in after]
    budget = _BUDGET * (len(x) + sum(map(len, after)))
    while todo:
        i = todo.popleft()
        waiting[i] = False
        budget -= len(after[i]) + 1
        if budget < 0:
            return None
        xi = x[i]
        for k, d in after[i]:
            if xi + d > x[k]:
                x[k] = xi + d
                if x[k] > hi[k]:
                    return None
                if not waiting[k] and after[k]:
                    waiting[k] = True
                    todo.append(k)
    return x
