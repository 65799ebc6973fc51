"""Stage 3 of the pipeline (count), its matchings: deterministic maximum-weight bipartite
matching with lexicographic weights.

Used for one-to-one counting (README, Definitions: counting) and Makhoul's slot alignment (slot errors).
The edge list is split into connected components (vectorised label
propagation); a component with one edge is matched outright, larger ones by
the Hungarian algorithm on exact Python integers. Edge weights are tuples of
non-negative integer *levels*, compared lexicographically over the whole
matching (first level first), which the component's integer weights encode
exactly.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

__all__ = ["match", "components"]


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

    ``u``/``v`` are the endpoints of each edge; ``rank_u``/``rank_v`` (called only
    when some component has more than one edge) give every node's canonical rank,
    and ties go to the lowest ranks, i.e. to earlier positions; ``levels`` are
    non-negative integer (or boolean) arrays, one value per edge, most important
    first, read only for edges of components with more than one edge; every
    edge must have a positive weight in some level (callers pass a level of ones).
    Returns a boolean mask over the edges.
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
    comp = components(u.take(rest), v.take(rest), n_u, n_v)
    o = np.argsort(comp, kind="stable")
    order = rest.take(o)
    bounds = np.flatnonzero(np.diff(comp.take(o))) + 1
    starts = np.concatenate(([0], bounds))
    ends = np.concatenate((bounds, [len(rest)]))
    lv = list(levels)
    ru = rank_u() if rank_u is not None else np.arange(n_u)
    rv = rank_v() if rank_v is not None else np.arange(n_v)
    for s, e in zip(starts.tolist(), ends.tolist()):
        idx = order[s:e]
        _match_component(idx, u, v, lv, chosen, ru, rv)
    return chosen


def _match_component(
    idx: np.ndarray, u: np.ndarray, v: np.ndarray, lv: list[np.ndarray], chosen: np.ndarray,
    ru: np.ndarray, rv: np.ndarray,
) -> None:
    us = np.unique(u[idx])
    us = us[np.argsort(ru[us], kind="stable")]
    vs = np.unique(v[idx])
    vs = vs[np.argsort(rv[vs], kind="stable")]
    n = min(len(us), len(vs))
    # lexicographic integer weights: base_k exceeds any matching's total of lower levels
    maxes = [int(x[idx].max()) for x in lv]
    bases = [1] * len(lv)
    for k in range(len(lv) - 2, -1, -1):
        bases[k] = bases[k + 1] * (n * maxes[k + 1] + 1)
    ui = {int(x): i for i, x in enumerate(us)}
    vi = {int(x): i for i, x in enumerate(vs)}
    transpose = len(us) > len(vs)
    rows, cols = (len(vs), len(us)) if transpose else (len(us), len(vs))
    cost = [[0] * cols for _ in range(rows)]
    best_edge: dict[tuple[int, int], tuple[int, int]] = {}
    # the component's columns as Python integers, read once
    values = [[int(w) for w in x.take(idx).tolist()] for x in lv]
    for k, uk, vk, *ws in zip(idx.tolist(), u.take(idx).tolist(), v.take(idx).tolist(), *values):
        w = sum(x * b for x, b in zip(ws, bases))
        r, c = ui[uk], vi[vk]
        if transpose:
            r, c = c, r
        prev = best_edge.get((r, c))
        if prev is None or w > prev[0]:
            best_edge[(r, c)] = (w, k)
            cost[r][c] = -w
    cols_of = _hungarian(cost)
    for r, c in enumerate(cols_of):
        hit = best_edge.get((r, c))
        if hit is not None:
            chosen[hit[1]] = True
