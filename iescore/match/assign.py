"""Stage 3 of the pipeline (count), its matchings: deterministic maximum-weight bipartite
matching with lexicographic weights and one stated tie rule.

Used for one-to-one counting (README, Definitions: counting) and Makhoul's slot
alignment (slot errors). Edge weights are tuples of non-negative integer *levels*,
compared lexicographically over the whole matching (first level first), encoded
exactly as one Python integer per edge.

Tie rule (README, Definitions: ties): order the edges by (answer rank, prediction
rank), the canonical positions of their two units; among the optimal matchings take
the one that keeps the earliest edges, i.e. scan the edges in that order and keep an
edge whenever some optimal matching contains it together with the edges kept so far.
Equivalently: the optimal matching whose 0/1 vector over the ordered edges is
lexicographically largest.

Two solvers implement that rule:

* **Non-crossing edges** (:func:`~iescore.match.intervals._interval_dp`): when the edges sorted by
  (answer rank, prediction rank) have non-decreasing prediction ranks, as they always
  do in AO when neither side's spans overlap among themselves (two overlapping pairs of
  disjoint spans cannot cross), an edge conflicts only with a contiguous block of the
  edges just before it, and the matching is weighted interval scheduling: a linear
  dynamic programme over suffixes, reconstructed from the left (which is the tie rule).
  From ``_VEC_MIN`` edges on it runs vectorised (:mod:`iescore.match.intervals`): the
  levels packed into few int64 *limbs*, the programme as a (max, +) product of 2x2
  matrices computed by halving, in linear numpy work; the plain loop on exact Python
  integers remains for small inputs and for levels too large for int64.
* **Any other component** (:func:`_general`): the Hungarian algorithm on exact Python
  integers, every edge's weight shifted up and a digit of its place among its answer's
  edges added, so that the unique optimum is the one of the tie rule. Its time is
  cubic in the component's size.

A lone edge (both ends of degree one) is chosen outright. The plain reference is the
brute force of tests/test_assign.py.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from .intervals import _interval_dp, _interval_dp_vec, _limbs

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


def _hungarian(cost: list[list[int]]) -> list[int]:
    """Min-cost assignment of every row (n <= m) to a distinct column; returns column per row."""
    n, m = len(cost), len(cost[0])
    inf = None
    u = [0] * (n + 1)
    v = [0] * (m + 1)
    p = [0] * (m + 1)
    way = [0] * (m + 1)
    for i in range(1, n + 1):
        p[0] = i
        j0 = 0
        minv: list[int | None] = [inf] * (m + 1)
        used = [False] * (m + 1)
        while True:
            used[j0] = True
            i0 = p[j0]
            delta: int | None = None
            j1 = 0
            row = cost[i0 - 1]
            for j in range(1, m + 1):
                if not used[j]:
                    cur = row[j - 1] - u[i0] - v[j]
                    mv = minv[j]
                    if mv is None or cur < mv:
                        minv[j] = mv = cur
                        way[j] = j0
                    if delta is None or mv < delta:
                        delta = mv
                        j1 = j
            assert delta is not None
            for j in range(m + 1):
                if used[j]:
                    u[p[j]] += delta
                    v[j] -= delta
                else:
                    minv[j] -= delta  # type: ignore[operator]
            j0 = j1
            if p[j0] == 0:
                break
        while True:
            j1 = way[j0]
            p[j0] = p[j1]
            j0 = j1
            if j0 == 0:
                break
    col = [0] * n
    for j in range(1, m + 1):
        if p[j]:
            col[p[j] - 1] = j - 1
    return col


def _general(a: list[int], p: list[int], w: list[int]) -> list[bool]:
    """Tie-ruled maximum-weight matching of one component of any shape.

    ``a``/``p`` are the edges' node keys and ``w`` their positive weights, edges given
    in (answer, prediction) order. Two matchings that differ first at edge (x, y) of that
    order agree on every answer before x and on x's earlier edges, so keeping the earliest
    edges means: answer by answer, the earliest partner, and a partner before none. Edge j
    (0-based) of the d edges of the i-th answer therefore gets the digit d - j at that
    answer's place of a mixed-radix number (radix d + 1 per answer, the first answer
    most significant; an unmatched answer has digit 0), and every weight is shifted
    above the largest such number: an optimum of these weights is optimal for ``w`` and
    is the tie rule's matching; it is unique. Solved by the Hungarian algorithm on a
    dense matrix (zero: no edge).
    """
    n_e = len(w)
    rows = {x: i for i, x in enumerate(dict.fromkeys(a))}
    cols = {x: i for i, x in enumerate(dict.fromkeys(p))}
    degree = [0] * len(rows)
    for x in a:
        degree[rows[x]] += 1
    place = [1] * (len(rows) + 1)  # place[i + 1]: the value of one unit of answer i's digit
    for i in range(len(rows) - 1, -1, -1):
        place[i] = place[i + 1] * (degree[i] + 1)
    shift = place[0]
    transpose = len(rows) > len(cols)
    n_r, n_c = (len(cols), len(rows)) if transpose else (len(rows), len(cols))
    cost = [[0] * n_c for _ in range(n_r)]
    edge_at: dict[tuple[int, int], int] = {}
    seen = [0] * len(rows)  # edges of each answer met so far
    for k in range(n_e):
        i = rows[a[k]]
        digit = degree[i] - seen[i]
        seen[i] += 1
        r, c = i, cols[p[k]]
        if transpose:
            r, c = c, r
        wk = w[k] * shift + digit * place[i + 1]
        if -wk < cost[r][c]:
            cost[r][c] = -wk
            edge_at[(r, c)] = k
    keep = [False] * n_e
    for r, c in enumerate(_hungarian(cost)):
        edge = edge_at.get((r, c))
        if edge is not None:
            keep[edge] = True
    return keep


def _noncrossing(ka: np.ndarray, kp: np.ndarray, levels: Sequence[np.ndarray], edges: np.ndarray,
                 n_match: int) -> np.ndarray:
    """The interval DP's choice over ``edges`` (node keys ``ka``/``kp``): vectorised
    (:func:`_interval_dp_vec`) on int64 limbs from ``_VEC_MIN`` edges on, else (and when
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
) -> np.ndarray:
    """Choose a one-to-one subset of edges maximising the lexicographic sum of ``levels``.

    ``u``/``v`` are the endpoints of each edge (``u`` the answers); ``rank_u``/``rank_v``
    (called only when some edge is not alone) give every node's canonical rank, its
    position; ties between optimal matchings follow the tie rule of the module's
    docstring over (answer rank, prediction rank). ``levels`` are non-negative integer
    (or boolean) arrays, one value per edge, most important first; every edge must have
    a positive weight in some level (callers pass a level of ones). Returns a boolean
    mask over the edges.

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
            keep_k = _general(a_k, p_k, _weights(levels, edges, n_match))
            chosen[edges.compress(keep_k)] = True
    return chosen
