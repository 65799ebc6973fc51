"""Stage 3 of the pipeline (count), a solver `iescore.match.assign._general` uses
for a component whose edges cross but stay local: the tie-ruled maximum-weight matching
(Concepts: counting, ties) by a dynamic programme that sweeps the answers in order and
remembers which predictions still *open* (met by an earlier answer and by a later one)
are taken. Spans on a line meet only nearby spans, so few predictions are open at a
time; when too many states arise, it gives up (None) and the caller uses the exact
solvers of `iescore.match.paths`, whose time does not depend on them. Its
reference is the brute force and the dense Hungarian of tests/test_assign.py.
"""

from __future__ import annotations

import heapq

from .paths import _numbered

__all__: list[str] = []

_MAX_STATES = 64  # the sweep gives up when more sets of taken open predictions than this arise at one answer
_MAX_OPEN = 64  # ... or when more predictions than this are open at once (its masks would grow with them)


def _sweep(a: list[int], p: list[int], w: list[int],
           rules: tuple[list[bool], list[bool], list[bool]] | None = None) -> list[bool] | None:
    """Tie-ruled maximum-weight matching of edges given in (answer, prediction) order
    (``a``/``p`` node keys, ``w`` positive weights), or None when more than
    ``_MAX_STATES`` states arise at one answer or more than ``_MAX_OPEN`` predictions are
    open at once.

    Answers are taken in order. Before answer i, the *open* predictions are those met by
    an answer before i and by one from i on; the state is the set of open predictions
    already taken (a bit mask: each open prediction holds a bit while it is open).
    ``values[i][S]`` is the largest weight the answers from i on can add in state S: their
    own partners, or none, avoiding S. The states that can arise are listed from the
    left, their values computed from the right, and the matching read from the left:
    each answer takes its earliest partner (in the edges' order) that keeps the total
    at the optimum, and none when no partner does. That is the tie rule: answer by
    answer, the earliest partner some optimal matching with the choices so far allows.

    ``rules`` (rows and columns numbered by first sight, as `_numbered`) restricts
    the matchings to those that match every row of ``rules[0]``, leave every row of
    ``rules[1]`` unmatched and cover every column of ``rules[2]``: on a component whose
    edges are all tight these are exactly the optimal matchings (see
    `_lex_first`), and a state that breaks them (an answer
    left without the partner it needs, a prediction closing untaken) is dropped, which
    keeps the states few where spans are long.

    >>> # a square a0-p0, a0-p1, a1-p0, a1-p1, all weighing 1: {a0-p0, a1-p1} keeps the earliest edge
    >>> _sweep([0, 0, 1, 1], [0, 1, 0, 1], [1, 1, 1, 1])
    [True, False, False, True]
    >>> # a0-p1 weighs 3: {a0-p1, a1-p0} weighs 4, the optimum
    >>> _sweep([0, 0, 1, 1], [0, 1, 0, 1], [1, 3, 1, 1])
    [False, True, True, False]
    """
    rows, cols = _numbered(a), _numbered(p)
    n_r = len(rows)
    # each answer's partners in the edges' order: (column, weight, edge), the heaviest
    # edge of a repeated pair (the first of equals)
    adj: list[list[tuple[int, int, int]]] = [[] for _ in range(n_r)]
    at: list[dict[int, int]] = [{} for _ in range(n_r)]
    for k, (x, y, wk) in enumerate(zip(a, p, w)):
        i, c = rows[x], cols[y]
        s = at[i].get(c)
        if s is None:
            at[i][c] = len(adj[i])
            adj[i].append((c, wk, k))
        elif wk > adj[i][s][1]:
            adj[i][s] = (c, wk, k)
    last = [0] * len(cols)  # the last answer meeting each prediction
    for i, nb in enumerate(adj):
        for c, _, _ in nb:
            last[c] = i
    # each open prediction holds a bit of the state, the lowest bit free when it opens,
    # given back after its last answer: the masks stay as wide as the most predictions
    # open at once, however long one of them stays open
    slot = [-1] * len(cols)
    free: list[int] = []
    width = 0
    shut = [0] * n_r  # the bits of the predictions whose last answer is i
    need = [0] * n_r  # those of them every matching ``rules`` allows covers
    must_r, ban_r, must_c = rules if rules is not None else ([False] * n_r, [False] * n_r, [False] * len(cols))
    for i, nb in enumerate(adj):
        for c, _, _ in nb:
            if slot[c] < 0:
                if free:
                    slot[c] = heapq.heappop(free)
                elif width == _MAX_OPEN:
                    return None
                else:
                    slot[c], width = width, width + 1
        for c, _, _ in nb:
            if last[c] == i:
                shut[i] |= 1 << slot[c]
                if must_c[c]:
                    need[i] |= 1 << slot[c]
                heapq.heappush(free, slot[c])
    # each answer's partners as (bit, weight, edge); taking one sets its bit, then the bits
    # of the predictions closing at i clear
    bits = [[(1 << slot[c], wk, k) for c, wk, k in nb] for nb in adj]

    def moves(i: int, s: int) -> list[tuple[int, int, int]]:
        """(edge or -1 for none, weight, next state) for answer i in state s, the moves
        ``rules`` allow; none first."""
        keep, nd = ~shut[i], need[i]
        out = [] if must_r[i] or s & nd != nd else [(-1, 0, s & keep)]
        if ban_r[i]:
            return out
        for bit, wk, k in bits[i]:
            if not s & bit and (s | bit) & nd == nd:
                out.append((k, wk, (s | bit) & keep))
        return out

    states: list[list[int]] = [[0]]
    for i in range(n_r):
        nxt: dict[int, None] = {}
        for s in states[i]:
            for _, _, t in moves(i, s):
                nxt[t] = None
        if len(nxt) > _MAX_STATES:
            return None
        states.append(list(nxt))
    # values[i][s]: the best the answers from i on add in state s; a state from which
    # no matching that keeps ``rules`` can be completed has none
    values: list[dict[int, int]] = [{}] * n_r + [{0: 0}]
    for i in range(n_r - 1, -1, -1):
        later = values[i + 1]
        here: dict[int, int] = {}
        for s in states[i]:
            done = [wk + later[t] for _, wk, t in moves(i, s) if t in later]
            if done:
                here[s] = max(done)
        values[i] = here
    keep = [False] * len(w)
    s = 0
    for i in range(n_r):
        goal, later = values[i][s], values[i + 1]
        options = moves(i, s)
        if options and options[0][0] < 0:
            options = options[1:] + options[:1]  # the partners in order, then none
        for k, wk, t in options:
            if t in later and wk + later[t] == goal:
                if k >= 0:
                    keep[k] = True
                s = t
                break
    return keep
