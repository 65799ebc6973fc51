"""Stage 3 of the pipeline (count), its matchings: deterministic maximum-weight bipartite
matching with lexicographic weights and one stated tie rule.

Used for one-to-one counting (Concepts: counting) and Makhoul's slot
alignment (slot errors). Edge weights are tuples of non-negative integer *levels*,
compared lexicographically over the whole matching (first level first), encoded
exactly as one Python integer per edge.

Tie rule (Concepts: counting, ties): order the edges by (answer rank, prediction
rank), the canonical positions of their two units; among the optimal matchings take
the one that keeps the earliest edges, i.e. scan the edges in that order and keep an
edge whenever some optimal matching contains it together with the edges kept so far.
Equivalently: the optimal matching whose 0/1 vector over the ordered edges is
lexicographically largest.

Two solvers implement that rule:

* **Non-crossing edges** (`_interval_dp`): when the edges sorted by
  (answer rank, prediction rank) have non-decreasing prediction ranks, as they always
  do in AO when neither side's spans overlap among themselves (two overlapping pairs of
  disjoint spans cannot cross), an edge conflicts only with a contiguous block of the
  edges just before it, and the matching is weighted interval scheduling: a linear
  dynamic programme over suffixes, reconstructed from the left (which is the tie rule).
  From ``_VEC_MIN`` edges on it runs vectorised (`iescore.match.intervals`): the
  levels packed into few int64 *limbs*, the programme as a (max, +) product of 2x2
  matrices computed by halving, in linear numpy work; the plain loop on exact Python
  integers remains for small inputs and for levels too large for int64.
* **Any other component** (`_general`), in two phases. The optimum of the weights
  alone, with dual potentials, by successive shortest augmenting paths on the sparse
  graph (`_shortest_paths`: Dijkstra's algorithm from each new answer, stopping at
  the first free prediction); every optimal matching lies on the edges the potentials
  make tight. The tie rule then runs on the tight edges only: their components are
  solved again by this dispatch (a lone edge, the DP, or this solver). A component whose
  edges are all tight gets the tie rule (answer by answer, the earliest partner that
  some optimal matching with the choices so far still allows) by the first of these
  that fits: a dynamic programme sweeping the answers in order
  (`_sweep`, linear while few predictions are open at a time); from
  the optimum found, alternating-path searches deciding each try
  (`_lex_first`, while no search runs long); the same searches
  over classes of twin nodes (`_lex_first_twins`, when the
  classes are joined by few pairs, as in a dense OBD slot); one exact
  optimisation (`_tie_ruled`: a digit per answer added to the
  weights, while its integers stay small); the searches without a limit.

A lone edge (both ends of degree one) is chosen outright. The plain reference is the
brute force of tests/test_assign.py, and the dense Hungarian
this solver replaced is kept there as the reference for graphs too large for it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from . import paths
from .intervals import _interval_dp, _interval_dp_vec, _limbs
from .paths import (
    _lex_first,
    _numbered,
    _optimal_rules,
    _shortest_paths,
    _tie_ruled,
    _tie_ruled_fits,
)
from .sweep import _sweep
from .twins import _lex_first_twins

__all__ = ["match", "components"]

_VEC_MIN = 2048  # from this many edges on, the non-crossing DP runs vectorised (below: the loop is faster)


def components(u: np.ndarray, v: np.ndarray, n_u: int, n_v: int) -> np.ndarray:
    """Connected-component id of every edge of a bipartite graph (u in [0,n_u), v in [0,n_v))."""
    if len(u) == 0:
        return np.zeros(0, dtype=np.int64)
    dt = np.int32 if n_u + n_v < 2**31 else np.int64  # node ids in 32 bits: half the memory per edge
    a = u.astype(dt, copy=False)
    b = v.astype(dt)
    b += n_u
    n = n_u + n_v
    if 4 * len(a) < n:  # few edges among many nodes: number the nodes that have one
        nodes, inv = np.unique(np.concatenate((a, b)), return_inverse=True)
        a, b, n = inv[: len(a)].astype(dt), inv[len(a) :].astype(dt), len(nodes)
    comp = np.arange(n, dtype=dt)
    while True:
        m = comp.take(a)
        np.minimum(m, comp.take(b), out=m)
        new = comp.copy()
        np.minimum.at(new, a, m)
        np.minimum.at(new, b, m)
        del m
        new = new.take(new)  # pointer jumping
        if np.array_equal(new, comp):
            break
        comp = new
    return comp.take(a)


def _weights(levels: Sequence[np.ndarray], idx: np.ndarray, n_match: int) -> list[int]:
    """One exact integer per edge of ``idx`` that orders matchings (of at most ``n_match``
    edges) like their level totals compared first level first: level k is weighted by
    more than any matching's total of the levels after it.

    >>> _weights([np.array([1, 1, 0]), np.array([0, 2, 2])], np.arange(3), 2)
    [5, 7, 2]
    """
    cols = [np.asarray(x).take(idx).astype(np.int64) for x in levels]
    maxes = [int(c.max()) if len(c) else 0 for c in cols]
    bases = [1] * len(cols)
    for k in range(len(cols) - 2, -1, -1):
        bases[k] = bases[k + 1] * (n_match * maxes[k + 1] + 1)
    # the levels from ``split`` on in int64 (every matching's total of them fits), the
    # ones before it, if any, added as Python integers
    split = 0
    while n_match * sum(m * b for m, b in zip(maxes[split:], bases[split:])) >= 2**62:
        split += 1
    low = np.zeros(len(idx), dtype=np.int64)
    for c, b in zip(cols[split:], bases[split:]):
        low += c * b
    w: list[int] = low.tolist()
    for c, b in zip(cols[:split], bases[:split]):
        w = [x * b + y for x, y in zip(c.tolist(), w)]
    return w


def _general(a: list[int], p: list[int], w: list[int], tie_rule: bool = True) -> list[bool]:
    """Tie-ruled maximum-weight matching of one component of any shape (without
    ``tie_rule``: the first optimum found, one of the optimal matchings).

    ``a``/``p`` are the edges' node keys (their ranks) and ``w`` their positive weights,
    edges given in (answer, prediction) order. First the optimum for ``w`` alone, with
    dual potentials (`_shortest_paths`): every optimal matching uses only the edges
    those potentials make *tight* (LP complementary slackness), and a matching of tight
    edges weighs the optimum exactly when it covers every node of positive potential, so
    the optimum weighs as much over the tight edges as over all. The tie rule is then
    applied to the tight edges alone (`_solve`): often they fall apart into small
    pieces, or no longer cross and go to the interval DP. When every edge is tight, the
    tie rule is applied to the whole component by the sweep
    (`_sweep`), or, when too many states arise, from the optimum
    found by searches (`_lex_first`), the searches over twin
    classes (`_lex_first_twins`), the digit-per-answer
    optimisation or the searches without a limit, the first of them that fits.
    """
    rows, cols = _numbered(a), _numbered(p)
    gains: list[dict[int, int]] = [{} for _ in rows]
    for x, y, wk in zip(a, p, w):
        g = gains[rows[x]]
        c = cols[y]
        if wk > g.get(c, 0):
            g[c] = wk
    col_of, u, v = _shortest_paths(gains, len(cols))
    if not tie_rule:
        taken: dict[int, int] = {}  # row -> its edge to its column, the heaviest (first of equals)
        for k, (x, y, wk) in enumerate(zip(a, p, w)):
            i = rows[x]
            if col_of[i] == cols[y] and (i not in taken or wk > w[taken[i]]):
                taken[i] = k
        chosen = [False] * len(w)
        for k in taken.values():
            chosen[k] = True
        return chosen
    tight = [k for k, (x, y, wk) in enumerate(zip(a, p, w)) if -wk == u[rows[x]] + v[cols[y]]]
    if len(tight) == len(w):
        keep = _sweep(a, p, w, _optimal_rules(u, v))
        if keep is not None:
            return keep
        ra, cp = [rows[x] for x in a], [cols[y] for y in p]  # the searches' row and column numbers
        keep = _lex_first(a, p, ra, cp, col_of, u, v, paths._SEARCH_BUDGET)
        if keep is None:
            keep = _lex_first_twins(a, p, ra, cp, col_of, u, v)
        if keep is None:
            keep = _tie_ruled(a, p, w) if _tie_ruled_fits(a) else _lex_first(a, p, ra, cp, col_of, u, v, None)
        assert keep is not None  # without a limit, the searches always finish
        return keep
    keep = [False] * len(w)
    _put(keep, tight, _solve([a[k] for k in tight], [p[k] for k in tight], [w[k] for k in tight]))
    return keep


def _put(keep: list[bool], at: list[int], sub: list[bool]) -> None:
    """Write a subset's choices (``sub``, for the edges ``at``) into ``keep``."""
    for k, s in zip(at, sub):
        keep[k] = s


def _solve(a: list[int], p: list[int], w: list[int]) -> list[bool]:
    """Tie-ruled maximum-weight matching of edges in (answer, prediction) order, component
    by component: a lone edge is kept, non-crossing edges go to the interval DP, the rest
    to `_general`."""
    keep = [False] * len(w)
    if not w:
        return keep
    rows, cols = _numbered(a), _numbered(p)
    comp = components(np.array([rows[x] for x in a]), np.array([cols[y] for y in p]), len(rows), len(cols))
    parts: dict[int, list[int]] = {}
    for k, c in enumerate(comp.tolist()):
        parts.setdefault(c, []).append(k)
    for ks in parts.values():
        if len(ks) == 1:
            keep[ks[0]] = True
            continue
        ka, kp, kw = [a[k] for k in ks], [p[k] for k in ks], [w[k] for k in ks]
        if all(x <= y for x, y in zip(kp, kp[1:])):
            _put(keep, ks, _interval_dp(np.array(ka), np.array(kp), kw).tolist())
        else:
            _put(keep, ks, _general(ka, kp, kw))
    return keep


def _noncrossing(ka: np.ndarray, kp: np.ndarray, levels: Sequence[np.ndarray], edges: np.ndarray,
                 n_match: int) -> np.ndarray:
    """The interval DP's choice over ``edges`` (node keys ``ka``/``kp``): vectorised
    (`_interval_dp_vec`) on int64 limbs from ``_VEC_MIN`` edges on, else (and when
    the levels do not fit in limbs) the plain loop on exact integers."""
    if len(edges) >= _VEC_MIN:
        limbs = _limbs(levels, edges)
        if limbs:
            keep = _interval_dp_vec(ka, kp, limbs)
            if keep is not None:
                return keep
    return _interval_dp(ka, kp, _weights(levels, edges, n_match))


def _distinct(sorted_keys: np.ndarray) -> int:
    """How many distinct values a non-decreasing array holds."""
    return int(np.count_nonzero(sorted_keys[1:] != sorted_keys[:-1])) + 1 if len(sorted_keys) else 0


def match(
    u: np.ndarray,
    v: np.ndarray,
    levels: Sequence[np.ndarray],
    n_u: int,
    n_v: int,
    rank_u: Callable[[], np.ndarray] | None = None,
    rank_v: Callable[[], np.ndarray] | None = None,
    *,
    tie_rule: bool = True,
) -> np.ndarray:
    """Choose a one-to-one subset of edges maximising the lexicographic sum of ``levels``.

    ``u``/``v`` are the endpoints of each edge (``u`` the answers); ``rank_u``/``rank_v``
    (called only when some edge is not alone) give every node's canonical rank, its
    position; ties between optimal matchings follow the tie rule of the module's
    docstring over (answer rank, prediction rank). ``levels`` are non-negative integer
    (or boolean) arrays, one value per edge, most important first; every edge must have
    a positive weight in some level (callers pass a level of ones). Returns a boolean
    mask over the edges. Without ``tie_rule``, a component whose edges cross gets one of
    its optimal matchings, not necessarily the tie rule's: enough to learn what an optimum
    holds (every optimum gives each component the same level sums).

    >>> # answer 0 overlaps predictions 0 and 1, answer 1 prediction 1: all weigh the same,
    >>> # so the matching of two edges {a0-p0, a1-p1} is the only largest one
    >>> match(np.array([0, 0, 1]), np.array([0, 1, 1]), [np.ones(3, dtype=np.int8)], 2, 2).tolist()
    [True, False, True]
    """
    n_e = len(u)
    chosen = np.zeros(n_e, dtype=bool)
    if n_e == 0:
        return chosen
    # an edge whose two ends have no other edge is a component of its own: chosen
    lone = np.bincount(u, minlength=n_u).take(u) == 1
    lone &= np.bincount(v, minlength=n_v).take(v) == 1
    chosen[lone] = True
    rest = np.flatnonzero(~lone)  # edges of components with two edges or more
    del lone
    if len(rest) == 0:
        return chosen
    ru = rank_u() if rank_u is not None else np.arange(n_u)
    rv = rank_v() if rank_v is not None else np.arange(n_v)
    ra = ru.take(u.take(rest)).astype(np.int64)
    rp = rv.take(v.take(rest)).astype(np.int64)
    o = np.lexsort((rp, ra))
    a_o, p_o = ra.take(o), rp.take(o)
    if not (p_o[1:] < p_o[:-1]).any():  # the common case: nothing crosses, no components needed
        n_match = min(_distinct(a_o), _distinct(p_o))
        edges = rest.take(o)
        chosen[edges.compress(_noncrossing(a_o, p_o, levels, edges, n_match))] = True
        return chosen
    comp = components(u.take(rest), v.take(rest), n_u, n_v)
    o = np.lexsort((rp, ra, comp))
    c_o, a_o, p_o = comp.take(o), ra.take(o), rp.take(o)
    new_comp = np.ones(len(o), dtype=bool)
    new_comp[1:] = c_o[1:] != c_o[:-1]
    crossing = np.zeros(len(o), dtype=bool)
    crossing[1:] = ~new_comp[1:] & (p_o[1:] < p_o[:-1])
    bad = np.isin(c_o, c_o.compress(crossing))
    # non-crossing components, all in one pass: keys count the (component, node) changes,
    # so they are non-decreasing and equal exactly for one node of one component
    good = np.flatnonzero(~bad)
    if len(good):
        gc, ga, gp = c_o.take(good), a_o.take(good), p_o.take(good)
        step = np.ones(len(good), dtype=bool)
        step[1:] = gc[1:] != gc[:-1]
        ka = np.cumsum(step | np.concatenate(([True], ga[1:] != ga[:-1])))
        kp = np.cumsum(step | np.concatenate(([True], gp[1:] != gp[:-1])))
        n_match = min(int(ka[-1]), int(kp[-1]))
        edges = rest.take(o.take(good))
        chosen[edges.compress(_noncrossing(ka, kp, levels, edges, n_match))] = True
    hard = np.flatnonzero(bad)
    if len(hard):
        starts = np.flatnonzero(new_comp.take(hard))
        bounds = np.append(starts, len(hard)).tolist()
        for s, e in zip(bounds[:-1], bounds[1:]):
            edges = rest.take(o.take(hard[s:e]))
            a_k, p_k = a_o.take(hard[s:e]).tolist(), p_o.take(hard[s:e]).tolist()
            n_match = min(len(set(a_k)), len(set(p_k)))
            keep_k = _general(a_k, p_k, _weights(levels, edges, n_match), tie_rule)
            chosen[edges.compress(keep_k)] = True
    return chosen
