"""Stage 3 of the pipeline (count), a solver `iescore.match.assign._general` uses
for a component whose edges are all tight and whose nodes fall into few classes of
*twins*: the tie rule (Concepts: counting, ties) by the searches of
`_lex_first`, run on the classes instead of the nodes.

Two answers are twins when they have the same partners and the same rule (must be
matched, must stay unmatched, free); two predictions likewise. A class of answers is
then joined to a class of predictions by every pair or by none, so a matching is
described by how many pairs join each two classes, and an alternating path by the
classes it passes through: a search visits classes, not nodes. A dense OBD slot (the
tied hub pairs of `iescore.match.hubs` and the slot's free fillers, every pair
between them) has few: 6,000 fillers of the bench's ``share_wrong`` shape give 1,138
answers in 527 classes, joined by 1,580 pairs of classes for 1.3 million pairs. Such a
slot is now solved on its classes from the start (`iescore.match.blocks`); this
solver serves the components given pair by pair. Both run the tie rule on classes by
`iescore.match.classes._tie_rule_on_classes`.

Twins also shorten the tie rule itself: an answer that can take one prediction of a
class can take any (exchange them in the completing matching), so it takes the class's
earliest prediction still undecided. And a class of predictions that fails an answer
fails every later answer of the same class: a valid completion pairing the later twin
with it, the two twins exchanged, would pair the earlier one with it. So each class of
answers tries each class of predictions once at most. A try fails mostly because the
prediction's other partner cannot be given another one: the classes that search met then
match only among themselves in every valid completion (``split`` there), so they become
a *part* of their own and no answer outside it tries them again; searches stay inside a
part. At 3,000 fillers of the bench's ``two_hubs`` shape
this took the tie rule from 9,131 failed tries (3.2 s) to 171 (0.07 s). The reference is
the brute force and the dense Hungarian of tests/test_assign.py, and the written-out
blocks of tests/test_blocks.py.
"""

from __future__ import annotations

from .classes import _tie_rule_on_classes
from .paths import _adjacency, _kept, _optimal_rules

__all__: list[str] = []

_TWIN_SHARE = 0.25  # used when the classes are joined by at most this share of the component's edges


def _classes(adj: list[list[int]], rule: list[tuple[bool, ...]]) -> list[int]:
    """Each node's class: nodes with the same partners and the same rule share one,
    numbered by first sight."""
    ids: dict[tuple[tuple[int, ...], tuple[bool, ...]], int] = {}
    return [ids.setdefault((tuple(sorted(nb)), r), len(ids)) for nb, r in zip(adj, rule)]


def _lex_first_twins(a: list[int], p: list[int], ra: list[int], cp: list[int], col_of: list[int], u: list[int],
                     v: list[int]) -> list[bool] | None:
    """The tie rule's matching of a component whose edges are all tight (arguments as
    `_lex_first`; ``p`` holds the predictions' ranks), or None
    when its twin classes are joined by more than ``_TWIN_SHARE`` of its edges.

    State: per pair of classes the number of pairs joining them (``f``/``g``), and per
    class how many of its nodes are still undecided. Answer by answer in rank order, the
    classes of its partners are tried in the order of their earliest undecided
    prediction; a try decides that pair, takes one undecided node out of each of the two
    classes (a class whose nodes are all matched gives up one of its pairs) and repairs,
    by a breadth-first search over the classes, the class left short of a partner that
    must have one; a failed try is undone. With no partner possible, the answer stays
    unmatched.
    """
    n_r, n_c = len(u), len(v) - len(u)
    must_r, ban_r, must_c = _optimal_rules(u, v)
    adj_r, adj_c, edge = _adjacency(ra, cp, n_r, n_c)
    rank_c = [0] * n_c
    for (_, j), k in edge.items():
        rank_c[j] = p[k]
    cls_r = _classes(adj_r, list(zip(must_r, ban_r)))
    cls_c = _classes(adj_c, [(m,) for m in must_c])
    n_x, n_y = max(cls_r) + 1, max(cls_c) + 1
    # per class, one member's partners and rule stand for all of them
    must_x, must_y = [False] * n_x, [False] * n_y
    nb_x: list[list[int]] = [[] for _ in range(n_x)]
    for i, x in enumerate(cls_r):
        must_x[x] = must_r[i]
        nb_x[x] = adj_r[i]
    for j, y in enumerate(cls_c):
        must_y[y] = must_c[j]
    nb_x = [sorted({cls_c[j] for j in nb}) for nb in nb_x]
    if sum(map(len, nb_x)) > _TWIN_SHARE * len(edge):
        return None
    # each prediction class's nodes in rank order
    members: list[list[int]] = [[] for _ in range(n_y)]
    for j in sorted(range(n_c), key=rank_c.__getitem__):
        members[cls_c[j]].append(j)
    start = [(cls_r[i], cls_c[j], 1) for i, j in enumerate(col_of) if 0 <= j < n_c]
    return _kept(edge, _tie_rule_on_classes(cls_r, ban_r, must_x, must_y, nb_x, members, rank_c, start), len(a))
