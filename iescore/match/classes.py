"""Stage 3 of the pipeline (count), the tie rule (Concepts: counting, ties) on classes of
*twins*: its state and its searches, for `iescore.match.twins` (a component given
pair by pair) and `iescore.match.blocks` (a tied OBD slot, its blocks of pairs never
written out). Why working on classes is exact, why a class that failed an answer fails
its later twins, and why a failed search splits off a part of its own are in
`iescore.match.twins`; how a search passes through a block is in
`_tie_rule_on_classes`.
"""

from __future__ import annotations

import heapq

__all__: list[str] = []


def _tie_rule_on_classes(cls_r: list[int], ban_r: list[bool], must_x: list[bool], must_y: list[bool],
                         nb_x: list[list[int]], members: list[list[int]], rank_c: list[int],
                         start: list[tuple[int, int, int]], blocks_x: list[list[int]] | None = None,
                         block_ys: list[list[int]] | None = None) -> list[int]:
    """The tie rule on twin classes (`_lex_first_twins`): each answer's prediction
    (-1: none), answers taken in the order of ``cls_r`` (each answer's class), which is
    their rank order. ``ban_r``: answers no optimal matching matches; ``must_x``/``must_y``:
    the classes whose nodes every optimal matching matches; ``nb_x``: each class of answers'
    classes of predictions; ``members``: each class's predictions in rank order, ``rank_c``
    their ranks; ``start``: an optimal matching, as (x, y, pairs joining them).

    A class of answers may also reach, through each of its ``blocks_x``, every class of
    predictions of ``block_ys[k]`` (`iescore.match.blocks`): those pairs are never
    written out. A search passes through a block once, and each block keeps, per part, a
    heap of its classes of predictions by earliest undecided rank (an entry per change of
    that rank; stale ones are skipped), which every answer reaching it shares. A class that
    failed an answer's class is skipped for it by walking the heap's tree in order.

    Through a block, a search ends at one of the block's *ends* (a class with a free node
    or a pair it may give up) if it has one; otherwise every class of the block is matched,
    to classes that must be, and the search goes on from those partners, the block's
    *mates*, each reached through one member joined to it. Blocks are few and mates many
    (thousands at 100,000 fillers of the bench's ``two_hubs`` shape, where the path found
    has two or three steps): so each block also keeps its mates by the blocks they reach
    (``onward``), a search enters those blocks first, and queues a block's mates one by
    one only when nothing else is left. Ends, mates and onward blocks are kept per part
    as the matching changes.
    """
    n_r, n_x, n_y = len(cls_r), len(must_x), len(must_y)
    nb_y: list[list[int]] = [[] for _ in range(n_y)]
    for x, ys in enumerate(nb_x):
        for y in ys:
            nb_y[y].append(x)
    if blocks_x is None or block_ys is None:
        blocks_x, block_ys = [[] for _ in range(n_x)], []
    blocks_y: list[list[int]] = [[] for _ in range(n_y)]
    for k, ys in enumerate(block_ys):
        for y in ys:
            blocks_y[y].append(k)
    # per block and part, the classes of its members' partners, each with those members:
    # mates_y[k][part][x], block k's classes of predictions joined to class x of answers (in
    # that part); mates_x[k][part][y], its classes of answers joined to class y
    mates_y: list[dict[int, dict[int, set[int]]]] = [{} for _ in block_ys]
    mates_x: list[dict[int, dict[int, set[int]]]] = [{} for _ in block_ys]
    # and by their own blocks: onward_y[k][part][k2], block k's mates (classes of answers)
    # that reach block k2; onward_x likewise for classes of predictions
    onward_y: list[dict[int, dict[int, set[int]]]] = [{} for _ in block_ys]
    onward_x: list[dict[int, dict[int, set[int]]]] = [{} for _ in block_ys]
    kept = [False, False]  # whether mates_y and onward_y (mates_x, onward_x) are kept: from a
    # first search from a class of answers (of predictions) on; most tie rules search one side
    head = [0] * n_y
    left_x, left_y = [0] * n_x, [len(m) for m in members]  # undecided nodes per class
    for i in range(n_r):
        if not ban_r[i]:
            left_x[cls_r[i]] += 1
    f: list[dict[int, int]] = [{} for _ in range(n_x)]  # f[x][y] == g[y][x]: pairs joining x and y
    g: list[dict[int, int]] = [{} for _ in range(n_y)]
    on_x, on_y = [0] * n_x, [0] * n_y  # matched nodes per class
    loose_x, loose_y = [0] * n_x, [0] * n_y  # pairs with classes that need not be matched
    log: list[tuple[int, int, int]] = []  # (x, y, change) of a try; (-1, x or ~y, change) for left counts
    # per block and part, its classes that end a search reaching them (see repair)
    ends_x: list[dict[int, set[int]]] = [{} for _ in block_ys]
    ends_y: list[dict[int, set[int]]] = [{} for _ in block_ys]
    end_x, end_y = [False] * n_x, [False] * n_y  # whether a class is among its blocks' ends

    def mark(x: int | None, y: int | None) -> None:
        """Class x's (or y's) place among its blocks' ends, after a change."""
        if x is not None and end_x[x] != (on_x[x] < left_x[x] or loose_x[x] > 0):
            end_x[x] = not end_x[x]
            for k in blocks_x[x]:
                (ends_x[k].setdefault(part_x[x], set()).add if end_x[x] else ends_x[k][part_x[x]].discard)(x)
        if y is not None and end_y[y] != (on_y[y] < left_y[y] or loose_y[y] > 0):
            end_y[y] = not end_y[y]
            for k in blocks_y[y]:
                (ends_y[k].setdefault(part_y[y], set()).add if end_y[y] else ends_y[k][part_y[y]].discard)(y)

    def link(x: int, y: int, joined: bool) -> None:
        """Classes x and y now joined (or no longer) in their blocks' mates, where kept."""
        for side in (0, 1):
            if kept[side]:
                link_side(side, x, y, joined)

    def keep(side: int) -> None:
        """Keep mates (and onward blocks) for searches from ``side`` (0: answers) from now on."""
        kept[side] = True
        for x, ys in enumerate(f):
            for y in ys:
                link_side(side, x, y, True)

    def link_side(side: int, x: int, y: int, joined: bool) -> None:
        """Classes x and y now joined (or no longer) in the mates of ``side``'s searches: for
        searches from answers (0), x is a mate of y's blocks; from predictions, y of x's."""
        if side == 0:
            mates, onward, ks, a, b, p, a_ks = mates_y, onward_y, blocks_y[y], x, y, part_x[x], blocks_x[x]
        else:
            mates, onward, ks, a, b, p, a_ks = mates_x, onward_x, blocks_x[x], y, x, part_y[y], blocks_y[y]
        for k in ks:
            of = mates[k].setdefault(p, {})
            if joined:
                if a not in of:
                    of[a] = set()
                    for k2 in a_ks:
                        onward[k].setdefault(p, {}).setdefault(k2, set()).add(a)
                of[a].add(b)
            else:
                of[a].discard(b)
                if not of[a]:
                    del of[a]
                    for k2 in a_ks:
                        onward[k][p][k2].discard(a)

    def move(x: int, y: int, d: int) -> None:
        n = f[x].get(y, 0) + d
        if n:
            if n == d:
                link(x, y, True)
            f[x][y] = g[y][x] = n
        else:
            del f[x][y], g[y][x]
            link(x, y, False)
        on_x[x] += d
        on_y[y] += d
        loose_x[x] += d * (not must_y[y])
        loose_y[y] += d * (not must_x[x])
        mark(x, y)

    def join(x: int, y: int, d: int) -> None:
        move(x, y, d)
        log.append((x, y, d))

    def leave(x: int | None, y: int | None) -> None:
        """One undecided node less in class x or y."""
        if x is not None:
            left_x[x] -= 1
            log.append((-1, x, 1))
        if y is not None:
            left_y[y] -= 1
            log.append((-1, ~y, 1))
        mark(x, y)

    def undo() -> None:
        for x, y, d in reversed(log):
            if x >= 0:
                move(x, y, -d)
            elif y >= 0:
                left_x[y] += d
                mark(y, None)
            else:
                left_y[~y] += d
                mark(None, ~y)
        log.clear()

    def drop_x(x: int) -> int:
        """Unjoin one pair of class x; the prediction class that loses it."""
        y = next(iter(f[x]))
        join(x, y, -1)
        return y

    def drop_y(y: int) -> int:
        """Unjoin one pair of class y; the answer class that loses it."""
        x = next(iter(g[y]))
        join(x, y, -1)
        return x

    back: dict[int, int] = {}  # a queued class -> the class of the other side it was reached through
    seen: set[int] = set()  # the classes of the searching side a search queued
    via: dict[int, int] = {}  # a class of the other side a search reached -> the class it came from
    # the part each class is in: pairs across parts are in no valid completion (see split)
    part_x, part_y = [0] * n_x, [0] * n_y
    n_parts = 1

    def repair(s: int, rows_side: bool) -> bool:
        """An alternating path of classes giving class s (answers when ``rows_side``) one
        more pair: it ends at a class of the other side with an undecided node unmatched,
        or by unjoining a pair of a class that need not keep it."""
        back.clear()
        via.clear()
        seen.clear()
        seen.add(s)
        if rows_side:
            nb, blk, mates, onward, ends, on_o, left_o, pairs_o, must_s, part_o = (
                nb_x, blocks_x, mates_y, onward_y, ends_y, on_y, left_y, g, must_x, part_y)
            part = part_x[s]
        else:
            nb, blk, mates, onward, ends, on_o, left_o, pairs_o, must_s, part_o = (
                nb_y, blocks_y, mates_x, onward_x, ends_x, on_x, left_x, f, must_y, part_x)
            part = part_y[s]
        side = 0 if rows_side else 1
        if not kept[side]:
            keep(side)
        entry: dict[int, int] = {}  # a block passed through -> the class it was entered from
        queue = [s]  # classes whose explicit arcs and blocks are still to follow
        onward_to = []  # blocks whose mates' blocks are still to enter
        unqueued = []  # blocks whose mates are still to queue

        def visit(o: int, z: int) -> int | None:
            """Class o of the other side, reached from z: -1 when o has a free node, a class
            that may give up its pair with o, or None (o's partners are queued)."""
            via[o] = z
            if on_o[o] < left_o[o]:
                return -1
            for z2 in pairs_o[o]:
                if z2 not in seen:
                    if not must_s[z2]:
                        return z2
                    seen.add(z2)
                    back[z2] = o
                    queue.append(z2)
            return None

        def reach(z2: int, k: int) -> None:
            """Class z2, one of block k's mates, reached through one of its members (a member
            reached before keeps its way in: every way leads back to a class queued earlier,
            so no path loops)."""
            if z2 not in seen:
                o = next(iter(mates[k][part][z2]))
                via.setdefault(o, entry[k])
                seen.add(z2)
                back[z2] = o
                queue.append(z2)

        def enter(k: int, z: int) -> tuple[int, int] | None:
            """Block k, entered from class z: one of its ends and how it ends (see visit), or
            None (its mates are to follow)."""
            entry[k] = z
            if ends[k].get(part):
                o = next(iter(ends[k][part]))
                if o not in via and (end := visit(o, z)) is not None:
                    return o, end
            onward_to.append(k)
            unqueued.append(k)
            return None

        def augment(o: int, end: int) -> bool:
            """The path found, ending at o (``end``: see visit), applied back to s."""
            if end >= 0:  # end gives up its pair with o
                join(*((end, o) if rows_side else (o, end)), -1)
            for _ in range(len(seen)):  # the path passes each queued class once at most
                z = via[o]
                join(*((z, o) if rows_side else (o, z)), 1)
                if z == s:
                    return True
                o = back[z]
                join(*((z, o) if rows_side else (o, z)), -1)
            raise AssertionError("a search's path back loops")

        # Through a block: one of its ends ends the search; with none, each of its classes is
        # matched, to classes that must be (its mates), so the search goes on from those, one
        # member joined to each standing for the block. Blocks are few and mates many: the
        # blocks the mates reach are entered first, then the classes queued are followed, and
        # a block's mates are queued one by one only when nothing else is left.
        at = 0
        while True:
            if onward_to:
                k = onward_to.pop()
                for k2, zs in onward[k].get(part, {}).items():
                    if k2 not in entry and zs:
                        z2 = next(iter(zs))
                        reach(z2, k)
                        if (found := enter(k2, z2)) is not None:
                            return augment(*found)
            elif at < len(queue):
                z = queue[at]
                at += 1
                for o in nb[z]:
                    if o not in via and part_o[o] == part and (end := visit(o, z)) is not None:
                        return augment(o, end)
                for k in blk[z]:
                    if k not in entry and (found := enter(k, z)) is not None:
                        return augment(*found)
            elif unqueued:
                k = unqueued.pop()
                for z2 in mates[k].get(part, {}):
                    reach(z2, k)
            else:
                return False

    def rehome(mates: dict[int, dict[int, set[int]]], onward: dict[int, dict[int, set[int]]], a: int,
               a_ks: list[int], old: int, new: int) -> None:
        """Class a, a block's mate, moved from part ``old`` to ``new`` in the block's
        ``mates`` and ``onward`` (``a_ks``: a's blocks)."""
        if (bs := mates.get(old, {}).pop(a, None)) is not None:
            mates.setdefault(new, {})[a] = bs
            for k2 in a_ks:
                onward[old][k2].discard(a)
                onward.setdefault(new, {}).setdefault(k2, set()).add(a)

    def move_end(ends: list[dict[int, set[int]]], ks: list[int], c: int, old: int, new: int) -> None:
        """Class c, an end of blocks ``ks``, moved from part ``old`` to ``new``."""
        for k in ks:
            ends[k][old].discard(c)
            ends[k].setdefault(new, set()).add(c)

    def split(y: int, answers: set[int]) -> None:
        """After a search from a class of answers that lost its pair with prediction class
        ``y`` (which an answer of another class took) failed: the classes of ``answers`` it
        queued (R) and the classes of predictions joined to them, and y (O), become a part of
        their own, which no answer outside it can take a prediction from again.

        Why (M: the state before the try, a valid completion): the classes of R must be
        matched, and their possible partners with an undecided node are in O (each such
        class the search reached was no end: its nodes all matched, to R; the others are y or
        have no undecided node left); in M, O's classes are matched to R only (y to R's first
        class; the trying answer's own former partner was not reached, or it would have been
        an end). So M matches R's undecided nodes exactly onto O's, every valid completion
        matches all of R's nodes into O and so all of O's to R, and deciding more answers
        only removes completions."""
        nonlocal n_parts
        new = n_parts
        n_parts += 1
        o_side = {o for z in answers for o in f[z]}
        o_side.add(y)
        for z in answers:
            old, part_x[z] = part_x[z], new
            if end_x[z]:
                move_end(ends_x, blocks_x[z], z, old, new)
            for o in f[z]:
                for k in blocks_y[o]:
                    rehome(mates_y[k], onward_y[k], z, blocks_x[z], old, new)
        for o in o_side:
            old, part_y[o] = part_y[o], new
            if end_y[o]:
                move_end(ends_y, blocks_y[o], o, old, new)
            for z in g[o]:
                for k in blocks_x[z]:
                    rehome(mates_x[k], onward_x[k], o, blocks_y[o], old, new)
            renew(o)

    for x in range(n_x):
        mark(x, None)
    for y in range(n_y):
        mark(None, y)
    for x, y, k in start:
        join(x, y, k)
    log.clear()
    mate = [-1] * n_r
    # per class of answers, its explicit classes of predictions not yet failed, keyed by the
    # rank of their earliest undecided prediction (a key gone stale as a head moved is
    # renewed when met); the classes that failed it
    queue: dict[int, list[tuple[int, int]]] = {}
    failed: dict[int, set[int]] = {}

    key = [rank_c[m[0]] if m else -1 for m in members]  # each class's earliest undecided rank (-1: none)

    # per block and part, its classes of predictions by key; an entry whose key or part
    # changed since is stale
    by_key: list[dict[int, list[tuple[int, int]]]] = []
    for ys in block_ys:
        heap = [(key[y], y) for y in ys if key[y] >= 0]
        heapq.heapify(heap)
        by_key.append({0: heap})

    def renew(y: int) -> None:
        """A fresh entry for class y in its blocks' heaps (its key or part changed)."""
        if key[y] >= 0:
            for k in blocks_y[y]:
                heapq.heappush(by_key[k].setdefault(part_y[y], []), (key[y], y))

    def first(k: int, part: int, bad: set[int]) -> tuple[int, int]:
        """Block k's earliest class of predictions in ``part`` outside ``bad``, and its key
        ((-1, -1): none)."""
        heap = by_key[k].get(part)
        if not heap:
            return -1, -1
        while heap and (heap[0][0] != key[heap[0][1]] or part_y[heap[0][1]] != part):
            heapq.heappop(heap)
        if not heap:
            return -1, -1
        if heap[0][1] not in bad:
            return heap[0]
        walk = [(heap[0], 0)]  # the heap's tree in key order, past stale entries and bad classes
        while walk:
            (rank, y), at = heapq.heappop(walk)
            if rank == key[y] and part_y[y] == part and y not in bad:
                return rank, y
            for child in (2 * at + 1, 2 * at + 2):
                if child < len(heap):
                    heapq.heappush(walk, (heap[child], child))
        return -1, -1

    def earliest(x: int) -> int:
        """The class of predictions to try next for an answer of class x (-1: none left)."""
        bad = failed.get(x, set())
        heap = queue.get(x)
        if heap is None:
            heap = queue[x] = [(key[y], y) for y in nb_x[x] if key[y] >= 0]
            heapq.heapify(heap)
        best, best_key = -1, -1
        while heap:
            rank, y = heap[0]
            if key[y] < 0 or part_y[y] != part_x[x] or y in bad:
                heapq.heappop(heap)
            elif rank != key[y]:
                heapq.heapreplace(heap, (key[y], y))
            else:
                best, best_key = y, rank
                break
        for k in blocks_x[x]:
            rank, y = first(k, part_x[x], bad)
            if y >= 0 and (best < 0 or rank < best_key):
                best, best_key = y, rank
        return best

    def pinned(x: int, y: int) -> int:
        """The class y's partner pinned to it (-1: none), which makes an answer of class x
        taking class y certain to fail: y's nodes are all matched, to one class x1 that must be matched and
        has no free node, and once it gave up y, x1 could reach no other class: none it
        reaches explicitly is in its part, and its blocks there hold no end and no joined
        class (x's own partner, which the try frees, is joined to x). The search from x1
        would queue x1 alone and fail, so the try is skipped and its part (x1 and its
        partners) split off, as after that search (all 5,481 failed tries of the bench's
        ``two_hubs`` shape at 100,000 fillers are such)."""
        if not kept[0] or on_y[y] != left_y[y] or len(g[y]) != 1:
            return -1
        x1, n = next(iter(g[y].items()))
        part = part_x[x1]
        if n != 1 or not must_x[x1] or on_x[x1] != left_x[x1]:
            return -1
        if any(o != y and part_y[o] == part for o in nb_x[x1]):
            return -1
        return -1 if any(ends_y[k].get(part) or mates_y[k].get(part) for k in blocks_x[x1]) else x1

    for i in range(n_r):
        if ban_r[i]:
            continue
        x = cls_r[i]
        while (y := earliest(x)) >= 0:
            if f[x].get(y, 0) > 0:  # the pairs already join x and y: decide one of them
                join(x, y, -1)
                leave(x, y)
                ok = True
            elif (holder := pinned(x, y)) >= 0:  # certain to fail: no need to try
                split(y, {holder})
                failed.setdefault(x, set()).add(y)
                continue
            else:
                y0 = drop_x(x) if on_x[x] == left_x[x] else None  # the answer gives up its partner
                x1 = drop_y(y) if on_y[y] == left_y[y] else None  # the prediction gives up its partner
                leave(x, y)
                ok = x1 is None or not must_x[x1] or on_x[x1] == left_x[x1] or repair(x1, True)
                if not ok:
                    split(y, seen)
                ok = ok and (y0 is None or not must_y[y0] or on_y[y0] == left_y[y0] or repair(y0, False))
            if ok:
                log.clear()
                mate[i] = members[y][head[y]]
                head[y] += 1
                key[y] = rank_c[members[y][head[y]]] if head[y] < len(members[y]) else -1
                renew(y)
                break
            undo()
            failed.setdefault(x, set()).add(y)  # never tried again for this class
        else:  # no partner: the answer stays unmatched
            y0 = drop_x(x) if on_x[x] == left_x[x] else None
            leave(x, None)
            ok = y0 is None or not must_y[y0] or on_y[y0] == left_y[y0] or repair(y0, False)
            assert ok, "the tie rule's state always has a valid completion"
            log.clear()
    return mate
