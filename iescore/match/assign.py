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

* **Non-crossing edges** (:func:`_interval_dp`): when the edges sorted by
  (answer rank, prediction rank) have non-decreasing prediction ranks, as they always
  do in AO when neither side's spans overlap among themselves (two overlapping pairs of
  disjoint spans cannot cross), an edge conflicts only with a contiguous block of the
  edges just before it, and the matching is weighted interval scheduling: a linear
  dynamic programme over suffixes, reconstructed from the left (which is the tie rule).
  From ``_VEC_MIN`` edges on it runs vectorised (:func:`_interval_dp_vec`): the levels
  packed into few int64 *limbs* (:func:`_limbs`), the programme as a (max, +) product
  of 2x2 matrices computed by halving, in linear numpy work; the plain loop on exact
  Python integers remains for small inputs and for levels too large for int64.
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


def _interval_dp(ka: np.ndarray, kp: np.ndarray, w: list[int]) -> np.ndarray:
    """Tie-ruled maximum-weight matching of edges in non-crossing order.

    ``ka``/``kp`` are non-decreasing node keys of each edge's two ends (equal key: same
    node; ``ka`` sorted first, ``kp`` non-decreasing too), ``w`` positive weights. Two
    edges conflict exactly when they share a key, so the edges after edge i that can join
    it are those from ``nxt[i]`` on. ``best[i]`` is the optimum over edges i.., and the
    reconstruction from the left keeps each edge that some optimum with the edges kept
    so far contains (README, Definitions: ties).

    >>> # a chain a0-p0, a0-p1, a1-p1, a1-p2 with weights 2, 3, 3, 2: {a0-p0, a1-p1} and
    >>> # {a0-p1, a1-p2} both weigh 5; the first keeps the earlier edge a0-p0
    >>> _interval_dp(np.array([0, 0, 1, 1]), np.array([0, 1, 1, 2]), [2, 3, 3, 2]).tolist()
    [True, False, True, False]
    """
    n = len(w)
    nxt = np.maximum(np.searchsorted(ka, ka, "right"), np.searchsorted(kp, kp, "right"))
    nx = nxt.tolist()
    # best[i]: the optimum over edges i..; starts[i]: edge i begins an optimum of them
    best = [0] * (n + 1)
    starts = [False] * n
    b = 0
    for i, wi, ni in zip(range(n - 1, -1, -1), reversed(w), reversed(nx)):
        t = wi + best[ni]
        if t >= b:
            b = t
            starts[i] = True
        best[i] = b
    # the walk from the left keeps edge i when it begins an optimum of the edges from i
    # on, then jumps past the edges in conflict with it; otherwise it moves on to i + 1
    kept = []
    i = 0
    while i < n:
        if starts[i]:
            kept.append(i)
            i = nx[i]
        else:
            i += 1
    keep = np.zeros(n, dtype=bool)
    keep[kept] = True
    return keep


_NEG = -(2**62)  # an impossible transition of the vectorised DP, in the first limb
_FIT = 2**60  # every limb's total over all edges stays below this
_VEC_MIN = 48  # from this many edges on, the non-crossing DP runs vectorised


def _limbs(levels: Sequence[np.ndarray], idx: np.ndarray) -> list[np.ndarray] | None:
    """The levels of the edges ``idx`` packed into few int64 *limbs* compared first limb
    first: consecutive levels share a limb as mixed-radix digits (as :func:`_weights`, the
    bound on a matching's total taken over all the edges), as long as the limb's total
    over all the edges stays below 2**60; None if a single level does not fit. Levels
    that are zero on every edge are left out.

    >>> [x.tolist() for x in _limbs([np.array([1, 1, 0]), np.array([0, 2, 2])], np.arange(3))]
    [[7, 9, 2]]
    """
    n = len(idx)
    cols = [np.asarray(x).take(idx).astype(np.int64) for x in levels]
    maxes = [int(c.max()) if n else 0 for c in cols]
    out: list[np.ndarray] = []
    limb: np.ndarray | None = None
    top = 0  # the largest value of ``limb`` on one edge
    base = 1
    for c, m in zip(reversed(cols), reversed(maxes)):
        if m == 0:
            continue
        if m < 0 or n * m >= _FIT:
            return None
        if limb is not None:
            base = n * top + 1
            if n * (top + m * base) >= _FIT:  # a new limb
                out.append(limb)
                limb, top, base = None, 0, 1
        if limb is None:
            limb, top = c, m
        else:
            limb += c * base
            top += m * base
    if limb is not None:
        out.append(limb)
    out.reverse()
    return out


def _lex_ge(a: list[np.ndarray], b: list[np.ndarray]) -> np.ndarray:
    """Where the limbs ``a`` are lexicographically at least ``b``."""
    ge = a[-1] >= b[-1]
    for x, y in zip(reversed(a[:-1]), reversed(b[:-1])):
        ge = (x > y) | ((x == y) & ge)
    return ge


def _lex_max(a: list[np.ndarray], b: list[np.ndarray]) -> list[np.ndarray]:
    if len(a) == 1:
        return [np.maximum(a[0], b[0])]
    ge = _lex_ge(a, b)
    return [np.where(ge, x, y) for x, y in zip(a, b)]


def _mp(a: list[np.ndarray], b: list[np.ndarray], c: list[np.ndarray], d: list[np.ndarray]) -> list[np.ndarray]:
    """``max(a + b, c + d)`` on limbs. No overflow: every entry of a product of the DP's
    matrices is at least ``_NEG`` (skipping is always possible, so some path through the
    product has at most one impossible step, its last), two of them sum to at least -2**63."""
    if len(a) == 1:
        t = np.add(a[0], b[0])
        u = np.add(c[0], d[0])
        return [np.maximum(t, u, out=t)]
    return _lex_max([x + y for x, y in zip(a, b)], [x + y for x, y in zip(c, d)])


_Mat = tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray], list[np.ndarray]]


def _suffix_values(m: _Mat) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """``B[i] = M[i] (x) B[i+1]`` in the (max, +) algebra, ``B[n] = (0, 0)``, for the 2x2
    matrices ``m`` (entries m00, m01, m10, m11, each a list of limb arrays over i): the
    two entries of every ``B[i]``, i in 0..n. Pairs of matrices are multiplied, the half
    as long product solved the same way, and the odd places filled in: linear work."""
    n = len(m[0][0])
    k = len(m[0])
    if n == 0:
        z = [np.zeros(1, dtype=np.int64) for _ in range(k)]
        return z, [x.copy() for x in z]
    if n == 1:
        z = [np.zeros(1, dtype=np.int64) for _ in range(k)]
        b0 = _lex_max(m[0], m[1])
        b1 = _lex_max(m[2], m[3])
        return [np.concatenate((x, y)) for x, y in zip(b0, z)], [np.concatenate((x, y)) for x, y in zip(b1, z)]
    h = n // 2
    ev = [[x[0 : 2 * h : 2] for x in e] for e in m]  # M[2j]
    od = [[x[1 : 2 * h : 2] for x in e] for e in m]  # M[2j+1]
    a00, a01, a10, a11 = ev
    b00, b01, b10, b11 = od
    prod = [_mp(a00, b00, a01, b10), _mp(a00, b01, a01, b11), _mp(a10, b00, a11, b10), _mp(a10, b01, a11, b11)]
    if n % 2:  # the last matrix stays alone
        prod = [[np.concatenate((x, y[-1:])) for x, y in zip(p, e)] for p, e in zip(prod, m)]
    c0, c1 = _suffix_values((prod[0], prod[1], prod[2], prod[3]))  # B at the even places and B[n]
    n_odd = h  # odd places 1, 3, .., 2h-1: B[2j+1] = M[2j+1] (x) B[2j+2]
    nxt0 = [x[1 : n_odd + 1] for x in c0]
    nxt1 = [x[1 : n_odd + 1] for x in c1]
    o0 = _mp(b00, nxt0, b01, nxt1)
    o1 = _mp(b10, nxt0, b11, nxt1)
    return _interleave(c0, o0, n), _interleave(c1, o1, n)


def _interleave(even: list[np.ndarray], odd: list[np.ndarray], n: int) -> list[np.ndarray]:
    """Places 0..n from the even places and the last one (``even``) and the odd places
    below ``2 * (n // 2)`` (``odd``)."""
    h = n // 2
    out = []
    for e, o in zip(even, odd):
        r = np.empty(n + 1, dtype=e.dtype)
        r[0 : 2 * h + 1 : 2] = e[: h + 1]
        r[1 : 2 * h : 2] = o
        if n % 2:
            r[n] = e[h + 1]
        out.append(r)
    return out


def _run_states(g0: np.ndarray, g1: np.ndarray) -> np.ndarray:
    """The states ``s[0] = 0``, ``s[i+1] = g_i(s[i])`` of maps of {0, 1} into itself given
    by their values ``g0`` at 0 and ``g1`` at 1: pairs of maps composed, the half as long
    run solved the same way, the odd places filled in."""
    n = len(g0)
    s = np.zeros(n + 1, dtype=bool)
    if n <= 1:
        s[1:] = g0
        return s
    h = n // 2
    e0, e1 = g0[0 : 2 * h : 2], g1[0 : 2 * h : 2]
    o0, o1 = g0[1 : 2 * h : 2], g1[1 : 2 * h : 2]
    c0 = np.where(e0, o1, o0)  # (g_{2j+1} o g_{2j})(0)
    c1 = np.where(e1, o1, o0)
    if n % 2:
        c0 = np.append(c0, g0[-1])
        c1 = np.append(c1, g1[-1])
    t = _run_states(c0, c1)  # s at the even places and s[n]
    return _interleave([t], [np.where(t[:h], e1, e0)], n)[0]


def _interval_dp_vec(ka: np.ndarray, kp: np.ndarray, w: list[np.ndarray]) -> np.ndarray | None:
    """:func:`_interval_dp` vectorised, on weights given as limbs (:func:`_limbs`); None
    when two edges have the same two keys.

    In (answer, prediction) order the edges of one component form a staircase: the next
    edge shares the answer (a step right) or the prediction (a step down), a step of both
    starts a new component. An edge conflicts with the earlier ones only through the
    node it shares with the edge before it, the *link*, so one bit (is the link taken?)
    carries all that the earlier edges leave to the later ones: the optimum over edges
    i.. is a (max, +) product of 2x2 matrices, solved in linear numpy work, and the walk
    from the left that keeps an edge whenever an optimum with the edges kept so far
    contains it (README, Definitions: ties) a run of maps of that bit.
    """
    n = len(ka)
    da = ka[1:] != ka[:-1]
    dp = kp[1:] != kp[:-1]
    if not (da | dp).all():
        return None
    in_x = np.ones(n, dtype=bool)  # edge i shares no node with edge i - 1
    in_x[1:] = da & dp
    out_x = np.ones(n, dtype=bool)  # nor with edge i + 1
    out_x[:-1] = in_x[1:]
    in_down = np.zeros(n, dtype=bool)  # the step to i keeps the prediction
    in_down[1:] = da
    out_down = np.zeros(n, dtype=bool)
    out_down[:-1] = da
    same = ~in_x & ~out_x & (in_down == out_down)  # the link to i + 1 is the link from i - 1
    # M[s][s']: the best weight of edge i when the link from i - 1 is in state s and the
    # link to i + 1 leaves in state s' (out_x: it leaves in 0)
    take = w
    # s = 0: skip -> 0 (0), take -> 1 (w) unless out_x (then 0, w)
    m00 = [np.where(out_x, t, 0) for t in take]
    m01 = [np.where(out_x, _NEG if j == 0 else 0, t) for j, t in enumerate(take)]
    # s = 1 (not in_x): only skip; it leaves in 1 if same else 0. in_x: as s = 0
    m10 = [np.where(in_x, a, np.where(same, _NEG if j == 0 else 0, 0)) for j, a in enumerate(m00)]
    m11 = [np.where(in_x, a, np.where(same, 0, _NEG if j == 0 else 0)) for j, a in enumerate(m01)]
    b0, b1 = _suffix_values((m00, m01, m10, m11))
    # c(0): take edge i when the link is free: w + B[i+1][1] >= B[i+1][0]
    c0 = _lex_ge([t + x[1:] for t, x in zip(take, b1)], [x[1:] for x in b0])
    g0 = c0 & ~out_x
    g1 = np.where(in_x, c0, same) & ~out_x
    s = _run_states(g0, g1)[:n]
    return c0 & (~s | in_x)


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
