"""Stage 3 of the pipeline (count), the exact solver for matchings whose edges cross
(`iescore.match.assign` gives it every component the interval DP cannot take):
successive shortest augmenting paths with dual potentials, on Python integers.
Its reference is the brute force of tests/test_assign.py.
"""

from __future__ import annotations

import heapq
import itertools
import random

__all__: list[str] = []


def _numbered(keys: list[int]) -> dict[int, int]:
    """Each distinct key -> its number, in order of first sight (rows from answer keys,
    columns from prediction keys).

    >>> _numbered([7, 7, 3, 9, 3])
    {7: 0, 3: 1, 9: 2}
    """
    return {x: i for i, x in enumerate(dict.fromkeys(keys))}


def _shortest_paths(gains: list[dict[int, int]], n_cols: int,
                    groups: list[int] | None = None) -> tuple[list[int], list[int], list[int]]:
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
    all the rows before it. With ``groups`` (each row's component, the rows of one
    component consecutive), each component's rows are shuffled on their own, one
    component after the other, so a component's matching does not depend on the others
    solved in the same call (a document scored alone or in a batch gets the same one).
    Returns each row's column (-1: none), the row potentials and the column potentials
    (``v[n_cols + i]``: row i's own column); an edge (i, j) is tight when
    ``-gain == u[i] + v[j]``.
    Exact on Python integers. When several matchings are optimal it returns the one
    this order of work reaches: a function of the rows' and columns' numbering, of the
    order of each row's columns in ``gains`` and of ``groups``, nothing else.
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
    pending = [i for i in range(n_rows) if col_of[i] < 0]
    if groups is None:
        order = pending
        random.Random(0).shuffle(order)
    else:
        order = []
        for _, rows in itertools.groupby(pending, key=groups.__getitem__):
            part = list(rows)
            random.Random(0).shuffle(part)
            order.extend(part)
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
