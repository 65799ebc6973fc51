"""Stage 3 of the pipeline (count), the matchings' solver for non-crossing edges
(`iescore.match.assign` dispatches to it): maximum-weight matching of edges
whose prediction ranks never decrease in (answer, prediction) order, as AO's overlaps of
spans that do not overlap within a side (Concepts: counting, ties).

* `_interval_dp`: the plain linear dynamic programme on exact Python integers;
* `_interval_dp_vec`: the same choice in linear numpy work, the levels packed into
  int64 limbs (`_limbs`), the programme a (max, +) product of 2x2 matrices and the
  reconstruction a run of maps of one bit, both computed by halving.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__: list[str] = []


def _interval_dp(ka: np.ndarray, kp: np.ndarray, w: list[int]) -> np.ndarray:
    """Maximum-weight matching of edges in non-crossing order, the earliest edges kept.

    ``ka``/``kp`` are non-decreasing node keys of each edge's two ends (equal key: same
    node; ``ka`` sorted first, ``kp`` non-decreasing too), ``w`` positive weights. Two
    edges conflict exactly when they share a key, so the edges after edge i that can join
    it are those from ``nxt[i]`` on. ``best[i]`` is the optimum over edges i.., and the
    reconstruction from the left keeps each edge that some optimum with the edges kept
    so far contains (Concepts: counting, ties).

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


def _limbs(levels: Sequence[np.ndarray], idx: np.ndarray) -> list[np.ndarray] | None:
    """The levels of the edges ``idx`` packed into few int64 *limbs* compared first limb
    first: consecutive levels share a limb as mixed-radix digits (as `_weights`, the
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
    """`_interval_dp` vectorised, on weights given as limbs (`_limbs`); None
    when two edges have the same two keys.

    In (answer, prediction) order the edges of one component form a staircase: the next
    edge shares the answer (a step right) or the prediction (a step down), a step of both
    starts a new component. An edge conflicts with the earlier ones only through the
    node it shares with the edge before it, the *link*, so one bit (is the link taken?)
    carries all that the earlier edges leave to the later ones: the optimum over edges
    i.. is a (max, +) product of 2x2 matrices, solved in linear numpy work, and the walk
    from the left that keeps an edge whenever an optimum with the edges kept so far
    contains it (Concepts: counting, ties) a run of maps of that bit.
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
    # (weights are non-negative, so taking beats skipping when both leave in 0)
    # s = 0: skip -> 0 (0), take -> 1 (w) unless out_x (then 0, w)
    m00 = [np.where(out_x, t, 0) for t in w]
    m01 = [np.where(out_x, _NEG if j == 0 else 0, t) for j, t in enumerate(w)]
    # s = 1 (not in_x): only skip; it leaves in 1 if same else 0. in_x: as s = 0
    m10 = [np.where(in_x, a, np.where(same, _NEG if j == 0 else 0, 0)) for j, a in enumerate(m00)]
    m11 = [np.where(in_x, a, np.where(same, 0, _NEG if j == 0 else 0)) for j, a in enumerate(m01)]
    b0, b1 = _suffix_values((m00, m01, m10, m11))
    # c(0): take edge i when the link is free: w + B[i+1][1] >= B[i+1][0]
    c0 = _lex_ge([t + x[1:] for t, x in zip(w, b1)], [x[1:] for x in b0])
    g0 = c0 & ~out_x
    g1 = np.where(in_x, c0, same) & ~out_x
    s = _run_states(g0, g1)[:n]
    return c0 & (~s | in_x)
