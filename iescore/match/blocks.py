"""Stage 3 of the pipeline (count), the tie-ruled matching (Concepts: counting, ties) of a
graph given as a few explicit edges plus *blocks*: sets of answers and predictions of
which every answer-prediction pair is an edge of the block's weight. A tied OBD slot
(`iescore.match.slots`) is such a graph: every pair of its real fillers is an
aligned pair sharing nothing at least (a block), the hub pairs it needs share hub tokens
(a block per level of copies shared, `iescore.match.hubs`), and the other pairs
that weigh something are few. Writing the blocks out costs their size squared: 6,000
fillers of the bench's ``share_wrong`` shape made 1.3 million pairs.

Answers with the same explicit edges (same partners, same weights) and the same blocks
are *twins*, and so are such predictions: the nodes fall into classes, and a class of
answers is joined to a class of predictions by every pair or by none. The solver works
on classes only:

* the optimum and an optimal dual, by a minimum-cost flow: each class of answers sends
  its nodes to classes of predictions (at most their size) along explicit edges or
  through a node per block, or leaves them unmatched; from a greedy start (each block
  fills its classes in the fewest blocks first), the primal-dual method: augmenting paths
  over the tight arcs, and a Dijkstra search on reduced costs whenever none is left
  (`_Flow.ship`);
* the rules an optimal matching obeys (complementary slackness: a class of answers whose
  "unmatched" arc is not tight is always matched, and so is a class of predictions whose
  arc to the sink has a negative reduced cost), and the class pairs it may join: an
  explicit arc, or an arc into a block and one out of it, that some optimal flow uses
  (`_Flow.allowed`: strongly connected components of the tight arcs' residual graph);
* the tie rule on those classes (`iescore.match.classes._tie_rule_on_classes`).

Classes, arcs and searches are counted in classes, explicit arcs and blocks, not in
pairs of nodes, nor in the pairs of classes a block joins: the tie rule is given each
class's blocks and each block's classes, a search passes through a block once (and on
from the classes joined to its members, not from each of its classes), and an answer's
candidates from a block come from a heap the block keeps. (Handing the tie rule the
class pairs instead made 6.7 million of them at 30,000 fillers of the bench's
``two_hubs`` shape.) The reference is the same graph with its blocks written out, solved
by `iescore.match.assign.match` (tests/test_blocks.py). Building this many small
lists, dicts and sets, the solver pauses the cyclic garbage collector.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence

from ..nogc import no_cycles_collected
from .classes import _tie_rule_on_classes

__all__ = ["block_match"]

_INF = 1 << 62  # the capacity of an arc without one (more than any number of nodes)


class _Flow:
    """A minimum-cost flow network on Python integers: arcs in pairs (``e`` and its
    reverse ``e ^ 1``), residual capacities, costs and node potentials (reduced cost of an
    arc a -> b: cost + pot[a] - pot[b], never negative on an arc with capacity left)."""

    def __init__(self, n: int) -> None:
        self.out: list[list[int]] = [[] for _ in range(n)]
        self.head: list[int] = []
        self.cap: list[int] = []
        self.cost: list[int] = []
        self.pot = [0] * n

    def arc(self, a: int, b: int, cap: int, cost: int) -> int:
        e = len(self.head)
        self.out[a].append(e)
        self.out[b].append(e + 1)
        self.head += [b, a]
        self.cap += [cap, 0]
        self.cost += [cost, -cost]
        return e

    def reduced(self, e: int) -> int:
        return self.cost[e] + self.pot[self.head[e ^ 1]] - self.pot[self.head[e]]

    def push(self, e: int, amount: int) -> None:
        self.cap[e] -= amount
        self.cap[e ^ 1] += amount

    def allowed(self) -> Callable[[int], bool]:
        """For an optimal flow and its potentials: whether arc ``e`` carries flow in some
        optimal flow. Those flows use tight arcs only, so the residual graph of the tight
        arcs is that of every optimal flow: an arc used now is allowed, and an unused tight
        one when its head reaches its tail there (a cycle through it), that is, when both
        ends are in one strongly connected component."""
        n = len(self.out)
        succ: list[list[int]] = [[] for _ in range(n)]
        for e in range(0, len(self.head), 2):
            if self.reduced(e) == 0:
                a, b = self.head[e + 1], self.head[e]
                if self.cap[e] > 0:
                    succ[a].append(b)
                if self.cap[e + 1] > 0:
                    succ[b].append(a)
        comp = _components(succ)
        head, cap = self.head, self.cap

        def allowed(e: int) -> bool:
            return self.reduced(e) == 0 and (cap[e ^ 1] > 0 or comp[head[e]] == comp[head[e ^ 1]])

        return allowed

    def ship(self, excess: dict[int, int], t: int) -> None:
        """Send every node's ``excess`` to t at least cost (the primal-dual method):
        augmenting paths over the tight arcs (`_augment`) send what they can; when
        none is left, a Dijkstra search from the nodes with excess on reduced costs
        (`_settle`) makes the next shortest paths tight. Empties ``excess``.

        Rounds of depth-first paths usually leave nothing after one or two (every bench
        shape); from the third in a row on, the paths are shortest ones (Dinic's phases),
        so that the rounds stay bounded by the paths' lengths, not by the units sent."""
        settled = False
        while True:
            rounds = 0
            while self._augment(excess, t, shortest=rounds >= 2):
                rounds += 1
            if not any(excess.values()):
                return
            assert rounds or not settled, "a Dijkstra search made no path to t tight"
            assert self._settle([a for a, n in excess.items() if n], t), "t is always reachable"
            settled = True

    def _settle(self, sources: list[int], t: int) -> bool:
        """Dijkstra's search from all ``sources`` (distance 0) on reduced costs until t is
        settled (t first among nodes at the same distance); the potentials of the nodes
        settled before it are raised so that reduced costs stay non-negative and every
        shortest path to t becomes tight. Returns whether t was reached. Its queue is a
        list of nodes per distance (most arcs are tight: few distances) and a heap of the
        distances."""
        head, cap, cost, pot, out = self.head, self.cap, self.cost, self.pot, self.out
        dist = [-1] * len(out)
        done = [False] * len(out)
        for a in sources:
            dist[a] = 0
        buckets = {0: list(sources)}
        keys = [0]
        settled: list[int] = []
        while keys:
            d = heapq.heappop(keys)
            bucket = buckets.pop(d)
            for a in bucket:  # grows while read: nodes at the same distance
                if dist[t] == d:  # t is settled first among them
                    break
                if done[a] or dist[a] != d:
                    continue
                done[a] = True
                settled.append(a)
                pa = pot[a]
                for e in out[a]:
                    if cap[e] > 0:
                        b = head[e]
                        if done[b]:
                            continue
                        nd = d + cost[e] + pa - pot[b]
                        if dist[b] < 0 or nd < dist[b]:
                            dist[b] = nd
                            if nd == d:
                                bucket.append(b)
                            elif nd in buckets:
                                buckets[nd].append(b)
                            else:
                                buckets[nd] = [b]
                                heapq.heappush(keys, nd)
            if dist[t] == d:
                for b in settled:
                    pot[b] -= d - dist[b]
                return True
        return False

    def _augment(self, excess: dict[int, int], t: int, shortest: bool = False) -> int:
        """Augmenting paths to t over the tight arcs with capacity left, by depth-first
        searches from the nodes with excess that share each node's next arc to try (a node
        whose arcs are all tried leads nowhere this round). Returns the units sent; 0 proves
        that t is not reachable over tight arcs (the searches together explored all that the
        sources reach). With ``shortest``, only along the shortest such paths: each arc
        one level down from the sources, levelled by a breadth-first search up to t (a
        blocking flow, as in Dinic's algorithm)."""
        head, cap, cost, pot, out = self.head, self.cap, self.cost, self.pot, self.out
        sources = [a for a, n in excess.items() if n]
        level = [0] * len(out)  # without ``shortest``: one level, every arc allowed (0 == 0 + 0)
        step = 0
        if shortest:
            step = 1
            level = [-1] * len(out)
            for a in sources:
                level[a] = 0
            queue = list(sources)
            for a in queue:
                if level[a] == level[t]:  # t's level is complete: the paths end there
                    break
                for e in out[a]:
                    b = head[e]
                    if level[b] < 0 and cap[e] > 0 and cost[e] + pot[a] == pot[b]:
                        level[b] = level[a] + 1
                        queue.append(b)
            if level[t] < 0:
                return 0
        at = [0] * len(out)  # each node's next arc to try
        on_path = [False] * len(out)
        sent = 0
        for s in sources:
            path: list[int] = []  # arcs from s
            a = s
            on_path[s] = True
            while excess[s]:
                if a == t:
                    amount = min(excess[s], *(cap[e] for e in path))
                    for e in path:
                        self.push(e, amount)
                        on_path[head[e]] = False
                    excess[s] -= amount
                    sent += amount
                    path.clear()
                    a = s
                    continue
                arcs = out[a]
                if at[a] == len(arcs):  # a leads nowhere: back up, past the arc into it
                    if not path:
                        break
                    e = path.pop()
                    on_path[a] = False
                    a = head[e ^ 1]
                    at[a] += 1
                    continue
                e = arcs[at[a]]
                b = head[e]
                if not on_path[b] and cap[e] > 0 and cost[e] + pot[a] == pot[b] and level[b] == level[a] + step:
                    path.append(e)
                    on_path[b] = True
                    a = b
                else:
                    at[a] += 1
            for e in path:
                on_path[head[e]] = False
            on_path[s] = False
        return sent


def _components(succ: list[list[int]]) -> list[int]:
    """Each node's strongly connected component (Tarjan's algorithm, without recursion)."""
    n = len(succ)
    index = [-1] * n
    low = [0] * n
    comp = [-1] * n
    stack: list[int] = []
    on = [False] * n
    count = c = 0
    for root in range(n):
        if index[root] >= 0:
            continue
        work = [(root, 0)]
        index[root] = low[root] = count
        count += 1
        stack.append(root)
        on[root] = True
        while work:
            a, k = work[-1]
            if k < len(succ[a]):
                work[-1] = (a, k + 1)
                b = succ[a][k]
                if index[b] < 0:
                    index[b] = low[b] = count
                    count += 1
                    stack.append(b)
                    on[b] = True
                    work.append((b, 0))
                elif on[b]:
                    low[a] = min(low[a], index[b])
                continue
            work.pop()
            if work:
                p = work[-1][0]
                low[p] = min(low[p], low[a])
            if low[a] == index[a]:
                while True:
                    b = stack.pop()
                    on[b] = False
                    comp[b] = c
                    if b == a:
                        break
                c += 1
    return comp


def _classes(n: int, partners: list[list[tuple[int, int]]], in_blocks: list[list[int]]) -> tuple[list[int], int]:
    """Each node's class (same explicit partners and weights, same blocks), numbered by
    first sight, and the number of classes."""
    ids: dict[tuple[tuple[tuple[int, int], ...], tuple[int, ...]], int] = {}
    cls = [ids.setdefault((tuple(sorted(partners[i])), tuple(in_blocks[i])), len(ids)) for i in range(n)]
    return cls, len(ids)


def block_match(n_u: int, n_v: int, rank_u: Sequence[int], rank_v: Sequence[int], eu: Sequence[int],
                ev: Sequence[int], ew: Sequence[int],
                blocks: Sequence[tuple[Sequence[int], Sequence[int], int]]) -> list[int]:
    """The tie rule's maximum-weight matching (Concepts: counting, ties) of ``n_u`` answers
    and ``n_v`` predictions (ranks ``rank_u``/``rank_v``, each distinct) whose edges are the
    explicit ``(eu[k], ev[k])`` of positive weight ``ew[k]`` (each pair once) and, for each
    block ``(answers, predictions, weight)``, every pair of its answers and predictions
    that is not explicit, at the block's positive weight (an explicit pair inside a block
    weighs at least as much). Returns each answer's prediction (-1: none).

    >>> # answers 0, 1 and predictions 0, 1 all pair at weight 1 (a block); answer 1 and
    >>> # prediction 0 also at 3: the best matching is {1-0, 0-1}
    >>> block_match(2, 2, [0, 1], [0, 1], [1], [0], [3], [([0, 1], [0, 1], 1)])
    [1, 0]
    """
    # hundreds of thousands of small lists, dicts and sets, which would trigger collections
    # that walk every live object again and again (a sixth of the time of the bench's
    # two_hubs shape at 100,000 fillers); the tie rule's few closures, the only cycles,
    # are collected after
    with no_cycles_collected():
        return _block_match(n_u, n_v, rank_u, rank_v, eu, ev, ew, blocks)


def _block_match(n_u: int, n_v: int, rank_u: Sequence[int], rank_v: Sequence[int], eu: Sequence[int],
                 ev: Sequence[int], ew: Sequence[int],
                 blocks: Sequence[tuple[Sequence[int], Sequence[int], int]]) -> list[int]:
    """`block_match`, with the cyclic garbage collector paused."""
    partners_u: list[list[tuple[int, int]]] = [[] for _ in range(n_u)]
    partners_v: list[list[tuple[int, int]]] = [[] for _ in range(n_v)]
    for i, j, w in zip(eu, ev, ew):
        partners_u[i].append((j, w))
        partners_v[j].append((i, w))
    blocks_u: list[list[int]] = [[] for _ in range(n_u)]
    blocks_v: list[list[int]] = [[] for _ in range(n_v)]
    for k, (bu, bv, _) in enumerate(blocks):
        for i in bu:
            blocks_u[i].append(k)
        for j in bv:
            blocks_v[j].append(k)
    cls_u, n_x = _classes(n_u, partners_u, blocks_u)
    cls_v, n_y = _classes(n_v, partners_v, blocks_v)
    size_x, size_y = [0] * n_x, [0] * n_y
    for x in cls_u:
        size_x[x] += 1
    for y in cls_v:
        size_y[y] += 1
    # one member stands for its class
    rep_u, rep_v = [-1] * n_x, [-1] * n_y
    for i in range(n_u - 1, -1, -1):
        rep_u[cls_u[i]] = i
    for j in range(n_v - 1, -1, -1):
        rep_v[cls_v[j]] = j
    # the network: classes of answers, classes of predictions, blocks, the sink
    n_k = len(blocks)
    Y0, K0, T = n_x, n_x + n_y, n_x + n_y + n_k
    net = _Flow(T + 1)
    explicit: list[tuple[int, int, int]] = []  # (x, y, arc)
    gain = [0] * n_x  # each class's best edge (0: unmatched)
    for x in range(n_x):
        # one arc per class of partners: twins of a partner are partners at the same weight
        for y, w in {cls_v[j]: w for j, w in partners_u[rep_u[x]]}.items():
            explicit.append((x, y, net.arc(x, Y0 + y, _INF, -w)))
            gain[x] = max(gain[x], w)
        for k in blocks_u[rep_u[x]]:
            gain[x] = max(gain[x], blocks[k][2])
    into_block: list[list[tuple[int, int]]] = [[] for _ in range(n_k)]  # (x, arc)
    out_block: list[list[tuple[int, int]]] = [[] for _ in range(n_k)]  # (y, arc)
    to_block: list[dict[int, int]] = [{} for _ in range(n_x)]  # x -> {block: arc}
    for x in range(n_x):
        for k in blocks_u[rep_u[x]]:
            to_block[x][k] = net.arc(x, K0 + k, _INF, -blocks[k][2])
            into_block[k].append((x, to_block[x][k]))
    for y in range(n_y):
        for k in blocks_v[rep_v[y]]:
            out_block[k].append((y, net.arc(K0 + k, Y0 + y, _INF, 0)))
    alone = [net.arc(x, T, _INF, 0) for x in range(n_x)]
    sink = [net.arc(Y0 + y, T, size_y[y], 0) for y in range(n_y)]
    for x in range(n_x):
        net.pot[x] = gain[x]  # every reduced cost >= 0, each class's best arcs tight
    excess = list(size_x)
    # greedy start on tight arcs, classes in rank order: explicit edges, then blocks, then none
    order = sorted(range(n_x), key=lambda x: rank_u[rep_u[x]])
    for x in order:
        for e_x in net.out[x]:
            if excess[x] == 0:
                break
            b = net.head[e_x]
            if e_x & 1 or not Y0 <= b < K0 or net.reduced(e_x) != 0:
                continue
            n = min(excess[x], net.cap[sink[b - Y0]])
            if n:
                net.push(e_x, n)
                net.push(sink[b - Y0], n)
                excess[x] -= n
    # each block's classes of predictions, those in fewer blocks (wanted by fewer) first,
    # and its first one that may still have room
    fill = [sorted(out_block[k], key=lambda ye: len(blocks_v[rep_v[ye[0]]])) for k in range(n_k)]
    at = [0] * n_k
    for x in order:
        for k in blocks_u[rep_u[x]]:
            if excess[x] == 0:
                break
            e_x = to_block[x][k]
            if net.reduced(e_x) != 0:
                continue
            while excess[x] and at[k] < len(fill[k]):
                y, e_y = fill[k][at[k]]
                n = min(excess[x], net.cap[sink[y]])
                if n:
                    for e in (e_x, e_y, sink[y]):
                        net.push(e, n)
                    excess[x] -= n
                else:
                    at[k] += 1
        if excess[x] and gain[x] == 0:
            net.push(alone[x], excess[x])
            excess[x] = 0
    net.ship({x: n for x, n in enumerate(excess) if n}, T)
    # the rules and the tight class pairs of every optimal matching (complementary slackness)
    must_x = [net.reduced(alone[x]) > 0 for x in range(n_x)]
    # a class of predictions has a potential of at most the sink's (0, lowered from 0 only
    # when settled), so it is never barred, and always matched when below it
    must_y = [net.reduced(e) < 0 for e in sink]
    # the class pairs some optimal matching joins: through arcs some optimal flow uses
    allowed = net.allowed()
    nb_x: list[list[int]] = [[] for _ in range(n_x)]
    blocks_x: list[list[int]] = [[] for _ in range(n_x)]
    start: dict[tuple[int, int], int] = {}
    for x, y, e in explicit:
        if allowed(e):
            nb_x[x].append(y)
        if net.cap[e ^ 1]:
            start[(x, y)] = start.get((x, y), 0) + net.cap[e ^ 1]
    block_ys = [[y for y, e in out_block[k] if allowed(e)] for k in range(n_k)]
    for k in range(n_k):
        for x, e in into_block[k]:
            if allowed(e) and block_ys[k]:
                blocks_x[x].append(k)
        # the block's flow split into class pairs, in order
        ins = [[x, net.cap[e ^ 1]] for x, e in into_block[k] if net.cap[e ^ 1]]
        outs = [[y, net.cap[e ^ 1]] for y, e in out_block[k] if net.cap[e ^ 1]]
        a = b = 0
        while a < len(ins):
            n = min(ins[a][1], outs[b][1])
            key = (ins[a][0], outs[b][0])
            start[key] = start.get(key, 0) + n
            ins[a][1] -= n
            outs[b][1] -= n
            a += ins[a][1] == 0
            b += outs[b][1] == 0
    # answers in rank order; each class of predictions' members in rank order
    by_rank = sorted(range(n_u), key=rank_u.__getitem__)
    cls_r = [cls_u[i] for i in by_rank]
    ban_r = [not nb_x[x] and not blocks_x[x] for x in cls_r]
    members: list[list[int]] = [[] for _ in range(n_y)]
    for j in sorted(range(n_v), key=rank_v.__getitem__):
        members[cls_v[j]].append(j)
    mate_ranked = _tie_rule_on_classes(cls_r, ban_r, must_x, must_y, nb_x, members, list(rank_v),
                                       [(x, y, n) for (x, y), n in start.items()], blocks_x, block_ys)
    mate = [-1] * n_u
    for i, j in zip(by_rank, mate_ranked):
        mate[i] = j
    return mate
