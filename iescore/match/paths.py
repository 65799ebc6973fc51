"""Stage 3 of the pipeline (count), the solvers `iescore.match.assign._general` uses
for matchings whose edges cross: successive shortest augmenting paths with dual
potentials (`_shortest_paths`), and the tie rule (Concepts: counting, ties) on a
component whose edges are all tight, by alternating-path searches (`_lex_first`)
or by one exact optimisation of weights with a digit per answer (`_tie_ruled`).
Their reference is the brute force and the dense Hungarian of tests/test_assign.py.
"""

from __future__ import annotations

import heapq
import random

__all__: list[str] = []

_SEARCH_BUDGET = 64  # _lex_first gives up when one of its searches visits more nodes than this
_TIE_RULED_BITS = 2**31  # _tie_ruled is used only while its integers hold at most this many bits (256 MB)


def _numbered(keys: list[int]) -> dict[int, int]:
    """Each distinct key -> its number, in order of first sight (rows from answer keys,
    columns from prediction keys).

    >>> _numbered([7, 7, 3, 9, 3])
    {7: 0, 3: 1, 9: 2}
    """
    return {x: i for i, x in enumerate(dict.fromkeys(keys))}


def _tie_ruled_fits(a: list[int]) -> bool:
    """Whether `_tie_ruled`'s integers for edges with answer keys ``a`` stay within
    ``_TIE_RULED_BITS`` (a digit of radix degree + 1 per answer, one integer per edge)."""
    degree: dict[int, int] = {}
    for i in a:
        degree[i] = degree.get(i, 0) + 1
    return len(a) * sum((d + 1).bit_length() for d in degree.values()) <= _TIE_RULED_BITS


class _LongSearch(Exception):
    """Raised in `_lex_first` by a search that visits more nodes than its budget."""


def _optimal_rules(u: list[int], v: list[int]) -> tuple[list[bool], list[bool], list[bool]]:
    """From the potentials of `_shortest_paths` on a component whose edges are all
    tight: the rows every optimal matching matches (their own column is not tight), the
    rows it leaves unmatched (their own column has a negative potential) and the columns
    it covers (negative potential); complementary slackness."""
    n_r, n_c = len(u), len(v) - len(u)
    return ([-u[i] - v[n_c + i] > 0 for i in range(n_r)], [v[n_c + i] < 0 for i in range(n_r)],
            [x < 0 for x in v[:n_c]])


def _lex_first(a: list[int], p: list[int], ra: list[int], cp: list[int], col_of: list[int], u: list[int],
               v: list[int], budget: int | None) -> list[bool] | None:
    """The tie rule's matching of a component whose edges are all tight, from an optimal
    matching (``col_of``) and the potentials ``u``/``v`` of `_shortest_paths`.

    ``a``/``p`` are the edges' node keys in (answer, prediction) order, ``ra``/``cp`` their
    row and column numbers. With every edge tight, a matching is optimal exactly when it
    covers every column of negative potential, matches every row whose own column is not
    tight and leaves unmatched every row whose own column has a negative potential
    (complementary slackness). Keeping the earliest edges then means, answer by answer in
    order: the earliest partner for which such a matching still exists together with the
    choices made so far, and no partner if none does. From a valid matching, moving answer
    i to column j frees j's answer and i's column; each that must stay covered needs an
    alternating path to a free node or to a node that may go unmatched, avoiding the nodes
    already decided. Both exist exactly when a valid matching with i-j exists (a matching
    covering given rows and one covering given columns give one covering both:
    Mendelsohn and Dulmage), so two breadth-first searches decide each try. A try that
    fails searches all it can reach, which on a long chain of overlaps is most of it,
    try after try: as soon as one search visits more than ``budget`` nodes, None (the
    caller then tries the solvers whose time does not depend on failed tries); no limit
    when ``budget`` is None.
    """
    n_r, n_c = len(u), len(v) - len(u)
    must_r, ban_r, must_c = _optimal_rules(u, v)
    adj_r, adj_c, edge = _adjacency(ra, cp, n_r, n_c)
    mate_r = list(col_of)
    mate_c = [-1] * n_c
    for i, j in enumerate(mate_r):
        if j >= 0:
            mate_c[j] = i
    fix_r, fix_c = [False] * n_r, [False] * n_c
    log: list[tuple[list[int], int, int]] = []  # (array, index, old value) of a try

    def put(arr: list[int], k: int, x: int) -> None:
        log.append((arr, k, arr[k]))
        arr[k] = x

    seen = [0] * (n_r + n_c)
    search = 0

    def repair(s: int, rows_side: bool) -> bool:
        """An alternating path from node s (a row when ``rows_side``, else a column) that
        gives it a partner, ending at a free node or by unmatching a node that may be."""
        nonlocal search
        search += 1
        if rows_side:
            adj, mate_x, mate_y, fix_y, must_x, off = adj_r, mate_r, mate_c, fix_c, must_r, n_r
        else:
            adj, mate_x, mate_y, fix_y, must_x, off = adj_c, mate_c, mate_r, fix_r, must_c, 0
        via: dict[int, int] = {}
        queue = [s]
        for x in queue:
            if budget is not None and len(queue) > budget:
                raise _LongSearch
            for y in adj[x]:
                if fix_y[y] or seen[off + y] == search or (not rows_side and ban_r[y]):
                    continue
                seen[off + y] = search
                via[y] = x
                x2 = mate_y[y]
                if x2 >= 0 and must_x[x2]:
                    queue.append(x2)
                    continue
                if x2 >= 0:
                    put(mate_x, x2, -1)  # x2 may go unmatched
                while True:  # augment back to s
                    x = via[y]
                    old = mate_x[x]
                    put(mate_x, x, y)
                    put(mate_y, y, x)
                    if x == s:
                        return True
                    y = old
        return False

    for i in range(n_r):
        if ban_r[i]:
            fix_r[i] = True
            continue
        for j in adj_r[i]:
            if fix_c[j] or mate_r[i] == j:
                if mate_r[i] == j:
                    break
                continue
            log.clear()
            a2, p2 = mate_c[j], mate_r[i]
            put(mate_r, i, j)
            put(mate_c, j, i)
            if a2 >= 0:
                put(mate_r, a2, -1)
            if p2 >= 0:
                put(mate_c, p2, -1)
            fix_r[i] = fix_c[j] = True  # decided for the searches
            try:
                ok = (a2 < 0 or not must_r[a2] or repair(a2, True)) and \
                     (p2 < 0 or not must_c[p2] or mate_c[p2] >= 0 or repair(p2, False))
            except _LongSearch:
                return None
            fix_c[j] = False
            if ok:
                break
            for arr, k, x in reversed(log):
                arr[k] = x
        fix_r[i] = True
        if mate_r[i] >= 0:
            fix_c[mate_r[i]] = True
    return _kept(edge, mate_r, len(a))


def _adjacency(ra: list[int], cp: list[int], n_r: int,
               n_c: int) -> tuple[list[list[int]], list[list[int]], dict[tuple[int, int], int]]:
    """Each row's columns and each column's rows in the edges' order, and each (row, column)
    pair's first edge (a repeated pair counted once)."""
    adj_r: list[list[int]] = [[] for _ in range(n_r)]
    adj_c: list[list[int]] = [[] for _ in range(n_c)]
    edge: dict[tuple[int, int], int] = {}
    for k, (i, j) in enumerate(zip(ra, cp)):
        if (i, j) not in edge:
            edge[(i, j)] = k
            adj_r[i].append(j)
            adj_c[j].append(i)
    return adj_r, adj_c, edge


def _kept(edge: dict[tuple[int, int], int], mate_r: list[int], n_edges: int) -> list[bool]:
    """Edge mask of a matching given as each row's column (-1: none)."""
    keep = [False] * n_edges
    for i, j in enumerate(mate_r):
        if j >= 0:
            keep[edge[(i, j)]] = True
    return keep


def _tie_ruled(a: list[int], p: list[int], w: list[int]) -> list[bool]:
    """The tie rule's matching of one component by one exact optimisation.

    Two matchings that differ first at edge (x, y) of the (answer, prediction) order agree
    on every answer before x and on x's earlier edges, so keeping the earliest edges
    means: answer by answer, the earliest partner, and a partner before none. Edge j
    (0-based) of the d edges of the i-th answer therefore gets the digit d - j at that
    answer's place of a mixed-radix number (radix d + 1 per answer, the first answer
    most significant; an unmatched answer has digit 0), and every weight is shifted
    above the largest such number: an optimum of these weights is optimal for ``w`` and
    is the tie rule's matching; it is unique. The numbers have as many digits as the
    component has answers: the fallback of `_lex_first` when its searches run long.
    """
    rows, cols = _numbered(a), _numbered(p)
    degree = [0] * len(rows)
    for x in a:
        degree[rows[x]] += 1
    place = [1] * (len(rows) + 1)  # place[i + 1]: the value of one unit of answer i's digit
    for i in range(len(rows) - 1, -1, -1):
        place[i] = place[i + 1] * (degree[i] + 1)
    shift = place[0]
    gains: list[dict[int, int]] = [{} for _ in rows]
    edge: list[dict[int, int]] = [{} for _ in rows]
    seen = [0] * len(rows)  # edges of each answer met so far
    for k, (x, y, wk) in enumerate(zip(a, p, w)):
        i = rows[x]
        gain = wk * shift + (degree[i] - seen[i]) * place[i + 1]
        seen[i] += 1
        c = cols[y]
        if gain > gains[i].get(c, 0):
            gains[i][c] = gain
            edge[i][c] = k
    keep = [False] * len(w)
    for i, c in enumerate(_shortest_paths(gains, len(cols))[0]):
        if c >= 0:
            keep[edge[i][c]] = True
    return keep


def _shortest_paths(gains: list[dict[int, int]], n_cols: int) -> tuple[list[int], list[int], list[int]]:
    """A maximum-gain matching of rows to columns (``gains[i]``: column -> positive gain of
    the edge; a row may stay unmatched) and optimal dual potentials.

    Successive shortest augmenting paths (the Hungarian method on a sparse graph). It
    starts from each row's least cost as its potential and, in rank order, gives each
    row its least-cost column when that one is still free (an optimum for those rows, and
    in order, so memory is read nearby). The other rows join one at a time, each by
    Dijkstra's algorithm over the reduced costs ``-gain - u[i] - v[j]``, which the
    potentials keep non-negative and make zero on the matching; it stops at the first
    free column it reaches. Row i also has a column of its own, gain 0, standing for
    "unmatched". Among columns at the same distance the free ones come first, so a
    plateau of equal weights ends the search at once. Those rows join in a fixed shuffled
    order: in rank order, a chain of spans would make each new row search back through
    all the rows before it.
    Returns each row's column (-1: none), the row potentials and the column potentials
    (``v[n_cols + i]``: row i's own column); an edge (i, j) is tight when
    ``-gain == u[i] + v[j]``.
    Exact on Python integers; when several matchings are optimal, one of them.
    """
    n_rows = len(gains)
    cost = [{c: -g for c, g in gi.items()} for gi in gains]  # min-cost form
    for i in range(n_rows):
        cost[i][n_cols + i] = 0  # row i's own "unmatched" column
    n = n_cols + n_rows
    # a start that is optimal for the rows matched so far: each row's potential is its
    # least cost (every reduced cost >= 0) and, in rank order, a row whose least-cost
    # column is still free takes it (tight); the other rows join below
    u = [min(ci.values()) for ci in cost]
    v = [0] * n
    row_of = [-1] * n  # the row matched to each column
    col_of = [-1] * n_rows
    for i, (ci, ui) in enumerate(zip(cost, u)):
        for j, c in ci.items():
            if c == ui and row_of[j] < 0:
                row_of[j], col_of[i] = i, j
                break
    dist = [0] * n
    via = [0] * n  # the row a column was reached from
    stamp = [-1] * n  # dist/via of column j belong to this round when stamp[j] == round
    done = [-1] * n  # column j's distance is final in this round when done[j] == round
    order = [i for i in range(n_rows) if col_of[i] < 0]
    random.Random(0).shuffle(order)
    for r in order:
        ur = u[r]
        heap: list[tuple[int, bool, int]] = []  # (distance, matched, column): free columns first on ties
        for j, c in cost[r].items():
            stamp[j] = r
            dist[j] = d = c - ur - v[j]
            via[j] = r
            heap.append((d, row_of[j] >= 0, j))
        heapq.heapify(heap)
        final = []  # the matched columns whose distance became final, in order
        while True:
            d, _, j = heapq.heappop(heap)
            if done[j] == r or d > dist[j]:
                continue
            done[j] = r
            i = row_of[j]
            if i < 0:
                sink, d_sink = j, d
                break
            final.append(j)
            ui = u[i]
            for k, c in cost[i].items():
                if done[k] != r:
                    nd = d + c - ui - v[k]
                    if stamp[k] != r or nd < dist[k]:
                        stamp[k] = r
                        dist[k] = nd
                        via[k] = i
                        heapq.heappush(heap, (nd, row_of[k] >= 0, k))
        # new potentials: the path's edges become tight, no reduced cost turns negative
        u[r] += d_sink
        for j in final:
            delta = d_sink - dist[j]
            u[row_of[j]] += delta
            v[j] -= delta
        j = sink
        while True:  # augment along the path back to r
            i = via[j]
            row_of[j] = i
            j, col_of[i] = col_of[i], j
            if i == r:
                break
    return [c if c < n_cols else -1 for c in col_of], u, v
