"""Stage 3 of the pipeline (count), its matchings: maximum-weight bipartite matching with
lexicographic weights, and the rule that says which of several optimal matchings is
taken.

Used for one-to-one counting (Concepts: counting) and Makhoul's alignment (slot
errors). Edge weights are tuples of non-negative integer *levels*, compared
lexicographically over the whole matching (first level first), encoded exactly as one
integer per edge (`_weights`). Every optimal matching gives every count the same value;
only which units pair with which can differ among them.

Tie rule (Concepts: counting, ties): the answers and the predictions are numbered by
their canonical rank (document, position, label: never by the order they were given
in), the edges sorted by (answer rank, prediction rank), and the matching is the one
the solver below computes on that numbering. It is deterministic, and shuffling the
input spans changes nothing.

The solver, component by component of the edges:

* a **lone edge** (both its ends have no other edge) is chosen outright;
* **non-crossing edges**: when a component's edges, in (answer, prediction) order,
  have non-decreasing prediction ranks (always so in AO when neither side's spans
  overlap among themselves: two overlapping pairs of disjoint spans cannot cross), an
  edge conflicts only with a contiguous run of the edges just before it, and the
  matching is weighted interval scheduling: a linear dynamic programme, which keeps the
  earliest edges among the optimal matchings (`iescore.match.intervals`, vectorised
  from ``_VEC_MIN`` edges on);
* **every other component** (crossing edges, as a span categorizer's overlapping
  answers give, or an OBD slot), all of them in one call of successive shortest
  augmenting paths on exact Python integers (`iescore.match.paths`): whatever the
  size of the levels, no rounding. The components are taken in the order of their first
  answer, each numbered by rank, so the choice is a function of the ranks alone.
  (scipy's sparse LAPJV, ``min_weight_full_bipartite_matching``, was measured on a long
  chain of crossing pairs: its time grows with the square of the chain, as its start
  gives each row its cheapest column and the augmenting paths then run along the chain,
  and the levels of 100,000 answers encoded in one cost need more than float64's 53 bits.)

The plain reference is the brute force of tests/test_assign.py.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from . import paths
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


def _crossing(a: list[int], p: list[int], w: list[int], comp: list[int] | None = None) -> list[bool]:
    """Maximum-weight matching of edges given in (answer, prediction) order by their node
    keys ``a``/``p`` (ranks), with positive exact weights ``w``: rows and columns are
    numbered in the order of the edges, each row's columns kept in that order, and one
    call of `iescore.match.paths._shortest_paths` matches them. An edge repeated
    keeps its heaviest copy (the first of equals). ``comp``: each edge's component (the
    edges of one component consecutive), so that each is solved as if alone."""
    rows, cols = paths._numbered(a), paths._numbered(p)
    groups = None
    if comp is not None:
        groups = [0] * len(rows)
        for x, g in zip(a, comp):
            groups[rows[x]] = g
    gains: list[dict[int, int]] = [{} for _ in rows]
    edge: list[dict[int, int]] = [{} for _ in rows]
    for k, (x, y, wk) in enumerate(zip(a, p, w)):
        i, c = rows[x], cols[y]
        if wk > gains[i].get(c, 0):
            gains[i][c] = wk
            edge[i][c] = k
    keep = [False] * len(w)
    for i, c in enumerate(paths._shortest_paths(gains, len(cols), groups)[0]):
        if c >= 0:
            keep[edge[i][c]] = True
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
) -> np.ndarray:
    """Choose a one-to-one subset of edges maximising the lexicographic sum of ``levels``.

    ``u``/``v`` are the endpoints of each edge (``u`` the answers); ``rank_u``/``rank_v``
    (called only when some edge is not alone) give every node's canonical rank, its
    position; among optimal matchings the solver's own choice on that numbering is taken
    (module docstring). ``levels`` are non-negative integer (or boolean) arrays, one value
    per edge, most important first; every edge must have a positive weight in some level
    (callers pass a level of ones). Returns a boolean mask over the edges.

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
    # each component named by its first answer rank, so that their order is the ranks' too
    comp = components(u.take(rest), v.take(rest), n_u, n_v)
    first = np.full(int(comp.max()) + 1, np.iinfo(np.int64).max)
    np.minimum.at(first, comp, ra)
    comp = first.take(comp)
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
        ka, kp, n_match = _keys(c_o.take(good), a_o.take(good), p_o.take(good))
        edges = rest.take(o.take(good))
        chosen[edges.compress(_noncrossing(ka, kp, levels, edges, n_match))] = True
    hard = np.flatnonzero(bad)
    if len(hard):  # the crossing components, all in one call (each keeps its numbering by rank)
        ka, kp, n_match = _keys(c_o.take(hard), a_o.take(hard), p_o.take(hard))
        edges = rest.take(o.take(hard))
        keep = _crossing(ka.tolist(), kp.tolist(), _weights(levels, edges, n_match), c_o.take(hard).tolist())
        chosen[edges.compress(keep)] = True
    return chosen


def _keys(c: np.ndarray, a: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """Node keys of edges sorted by (component ``c``, answer rank ``a``, prediction rank
    ``p``): counts of the (component, node) changes, non-decreasing for the answers and
    equal exactly for one node of one component; and the most edges a matching of one
    component can hold (the larger, over the components, of its fewer nodes a side)."""
    step = np.ones(len(c), dtype=bool)
    step[1:] = c[1:] != c[:-1]
    ka = np.cumsum(step | np.concatenate(([True], a[1:] != a[:-1])))
    p_new = np.ones(len(c), dtype=bool)  # a prediction's first edge in its component
    po = np.lexsort((p, c))
    ps, cs = p.take(po), c.take(po)
    p_new[1:] = (ps[1:] != ps[:-1]) | (cs[1:] != cs[:-1])
    kp = np.empty(len(c), dtype=np.int64)
    kp[po] = np.cumsum(p_new)
    starts = np.flatnonzero(step)
    n_a = np.add.reduceat(step | np.concatenate(([True], a[1:] != a[:-1])), starts)
    n_p = np.bincount(np.searchsorted(starts, po.compress(p_new), "right") - 1, minlength=len(starts))
    return ka, kp, int(np.minimum(n_a, n_p).max())
