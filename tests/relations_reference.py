"""A plain, slow reference implementation of relation and link scoring, for the tests only.

Written from the definitions (relations: a labelled pair of argument spans; links: a
mention span with a knowledge-base id; the span rules E, C(e), O(e,m), IoU(t) and
cover(t) on the arguments, the OBD sequence rules on position-free records; any-match
and one-to-one counting; Makhoul's slot alignment) with no code shared with the
library: loops over Python tuples, exact fractions for the rules by share, and a
search over every one-to-one matching. It is meant for a few records per document.

AO records are tuples: an argument or a mention is ``(label, start, end)`` (half-open
token offsets), a relation ``(label, head, tail)``, a link ``(mention, id)``. A
corpus is a list of ``(reference records, predicted records)`` per document. OBD
relation records are ``(label, head tokens, tail tokens)``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

Arg = tuple[str, int, int]
Rel = tuple[str, Arg, Arg]
Lnk = tuple[Arg, str]
TRel = tuple[str, tuple[str, ...], tuple[str, ...]]

INF = math.inf
NIL = "NIL"


# --- the span rule -------------------------------------------------------------------------

@dataclass(frozen=True)
class Rule:
    kind: str  # exact | contain | overlap | iou | cover
    e: float = 0
    m: float = 0
    t: Fraction | None = None


def parse_rule(text: str) -> Rule:
    """``E``, ``C(e)``, ``O(e,m)`` (``inf`` allowed), ``IoU(t)``, ``cover(t)``."""
    s = text.replace(" ", "")
    if s == "E":
        return Rule("exact")
    name, inner = s[:-1].split("(")
    if name in ("IoU", "cover"):
        return Rule(name.lower(), t=Fraction(inner))
    nums = [INF if x == "inf" else int(x) for x in inner.split(",")]
    if name == "C":
        return Rule("contain", nums[0])
    return Rule("overlap", nums[0], nums[1])


def common(a: tuple[int, int], p: tuple[int, int]) -> int:
    """Tokens the two half-open intervals share."""
    return max(0, min(a[1], p[1]) - max(a[0], p[0]))


def span_ok(rule: Rule, ans: tuple[int, int], pred: tuple[int, int]) -> bool:
    """Does the predicted interval match the answer's under ``rule``? (De Sitter Def. 6-8 in
    1-based inclusive positions ``i..j``, ``ik..jk``; the arithmetic is the same on
    half-open offsets; the rules by share compare token counts as fractions.)"""
    i, j = ans[0] + 1, ans[1]  # 1-based inclusive
    ik, jk = pred[0] + 1, pred[1]
    el, er = max(0, i - ik), max(0, jk - j)
    ml, mr = max(0, ik - i), max(0, j - jk)
    inter = common(ans, pred)
    if rule.kind == "exact":
        return ik == i and jk == j
    if rule.kind == "contain":
        return ik <= i and j <= jk and (jk - ik) - (j - i) <= rule.e
    if rule.kind == "overlap":
        return inter > 0 and el + er <= rule.e and ml + mr <= rule.m
    assert rule.t is not None
    if inter == 0:
        return False
    if rule.kind == "iou":
        union = len(set(range(ans[0], ans[1])) | set(range(pred[0], pred[1])))
        return Fraction(inter, union) >= rule.t
    return Fraction(inter, ans[1] - ans[0]) >= rule.t  # cover: the share of the answer covered


def span_err(ans: tuple[int, int], pred: tuple[int, int]) -> int:
    """Boundary error ``el + er + ml + mr``."""
    return abs(ans[0] - pred[0]) + abs(ans[1] - pred[1])


def arg_ok(rule: Rule, arg_labels: bool, a: Arg, p: Arg) -> bool:
    return (not arg_labels or a[0] == p[0]) and span_ok(rule, a[1:], p[1:])


def arg_exact(arg_labels: bool, a: Arg, p: Arg) -> bool:
    return (not arg_labels or a[0] == p[0]) and a[1:] == p[1:]


# --- relations (AO) -------------------------------------------------------------------------

def orientations(a: Rel, p: Rel, symmetric: Iterable[str], swap_when: str = "either") -> list[tuple[Arg, Arg]]:
    """The prediction's (head, tail) read against the answer's (head, tail): as given, and
    swapped when the relation labels allow it (``swap_when``: ``either`` label symmetric,
    ``both``, or the ``reference``'s; for a pair with equal labels these agree)."""
    sym = set(symmetric)
    swap = {"either": a[0] in sym or p[0] in sym, "both": a[0] in sym and p[0] in sym,
            "reference": a[0] in sym}[swap_when]
    out = [(p[1], p[2])]
    if swap:
        out.append((p[2], p[1]))
    return out


def rel_ok(rule: Rule, arg_labels: bool, symmetric: Iterable[str], a: Rel, p: Rel) -> bool:
    """Equal relation labels and both arguments within the rule (in either order for a
    symmetric label)."""
    if a[0] != p[0]:
        return False
    return any(arg_ok(rule, arg_labels, a[1], h) and arg_ok(rule, arg_labels, a[2], t)
               for h, t in orientations(a, p, symmetric))


def rel_quality(rule: Rule, arg_labels: bool, symmetric: Iterable[str], a: Rel, p: Rel) -> tuple[int, int]:
    """(exact, -error) of the best orientation in which the pair is within the rule (a pair
    within the rule only): exact when both arguments equal."""
    best: tuple[int, int] | None = None
    for h, t in orientations(a, p, symmetric):
        if arg_ok(rule, arg_labels, a[1], h) and arg_ok(rule, arg_labels, a[2], t):
            q = (int(arg_exact(arg_labels, a[1], h) and arg_exact(arg_labels, a[2], t)),
                 -(span_err(a[1][1:], h[1:]) + span_err(a[2][1:], t[1:])))
            best = q if best is None or q > best else best
    assert best is not None
    return best


def rel_aligned(symmetric: Iterable[str], a: Rel, p: Rel, swap_when: str = "either") -> bool:
    """Slot alignment: the arguments overlap pairwise (any relation label)."""
    return any(common(a[1][1:], h[1:]) > 0 and common(a[2][1:], t[1:]) > 0
               for h, t in orientations(a, p, symmetric, swap_when))


# --- matchings ------------------------------------------------------------------------------

Pairs = dict[tuple[int, int], tuple[int, ...]]  # (answer, prediction) -> weight


def pairs_of(a: Sequence[Any], p: Sequence[Any], can: Callable[[Any, Any], bool],
             weight: Callable[[Any, Any], tuple[int, ...]] = lambda x, y: ()) -> Pairs:
    """The index pairs of ``a`` x ``p`` where ``can``, with their weights."""
    return {(i, j): weight(x, y) for i, x in enumerate(a) for j, y in enumerate(p) if can(x, y)}


def best_matchings(n_a: int, n_p: int, pairs: Pairs) -> tuple[tuple[int, ...], list[frozenset[tuple[int, int]]]]:
    """Every one-to-one matching of the ``pairs``, searched in full: the greatest summed
    weight (compared as tuples; ``()`` when there are no pairs) and every matching that
    reaches it."""
    zero = tuple(0 for _ in next(iter(pairs.values()), ()))
    best: list[Any] = [None, []]

    def go(i: int, used: frozenset[int], w: tuple[int, ...], chosen: tuple[tuple[int, int], ...]) -> None:
        if i == n_a:
            if best[0] is None or w > best[0]:
                best[0], best[1] = w, [frozenset(chosen)]
            elif w == best[0]:
                best[1].append(frozenset(chosen))
            return
        go(i + 1, used, w, chosen)
        for j in range(n_p):
            if j not in used and (i, j) in pairs:
                go(i + 1, used | {j}, tuple(x + y for x, y in zip(w, pairs[(i, j)])), chosen + ((i, j),))

    go(0, frozenset(), zero, ())
    return best[0], best[1]


def count_cell(n_a: int, n_p: int, pairs: Pairs, counting: str) -> tuple[int, int, int]:
    """(tp, fp, fn) of one cell from its pairs within the rule: any-match (De Sitter
    Fig. 4), or one-to-one (the most pairs, then the greatest summed weight: exact pairs,
    minus the boundary error)."""
    if counting == "any":
        tp = len({j for _, j in pairs})
        return tp, n_p - tp, n_a - len({i for i, _ in pairs})
    w, _ = best_matchings(n_a, n_p, {k: (1, *v) for k, v in pairs.items()})
    k = w[0] if w else 0
    return k, n_p - k, n_a - k


def slot_errors(n_a: int, n_p: int, aligned: Pairs, correct: Pairs) -> tuple[int, int, int, int]:
    """Makhoul's C, S, D, I: the one-to-one alignment with the most correct pairs, among
    them the most exact pairs and the least boundary error (the weights ``(exact, -error)``
    of ``correct``, the pairs within the rule), then the most pairs (``aligned``: the pairs
    that may align)."""
    both: Pairs = {k: (1, *correct[k], 1) if k in correct else (0, 0, 0, 1) for k in {*aligned, *correct}}
    w, _ = best_matchings(n_a, n_p, both)
    c, n = (w[0], w[3]) if w else (0, 0)
    return c, n - c, n_a - n, n_p - n


@dataclass
class Result:
    per_label: dict[str, tuple[int, ...]]  # tp, fp, fn
    overall: tuple[int, ...]  # tp, fp, fn
    slot: tuple[int, ...] | None  # C, S, D, I
    # label -> the rows that do not depend on ties: names among tp, fp, fn
    defined: dict[str, tuple[str, ...]] = field(default_factory=dict)


def _total(per: dict[str, list[int]]) -> tuple[int, ...]:
    return tuple(sum(v[k] for v in per.values()) for k in range(3))


def evaluate_relations(corpus: Sequence[tuple[Sequence[Rel], Sequence[Rel]]], *, rule: str = "E",
                       counting: str = "any", arg_labels: bool = True, symmetric: Sequence[str] = (),
                       swap_when: str = "either") -> Result:
    """Counts of AO relations per relation label, and the slot errors."""
    R = parse_rule(rule)

    def ok(a: Rel, p: Rel) -> bool:
        return rel_ok(R, arg_labels, symmetric, a, p)

    def quality(a: Rel, p: Rel) -> tuple[int, int]:
        return rel_quality(R, arg_labels, symmetric, a, p)

    def aligned(a: Rel, p: Rel) -> bool:
        return rel_aligned(symmetric, a, p, swap_when)

    labels = sorted({r[0] for ref, pred in corpus for r in [*ref, *pred]})
    per = {lab: [0, 0, 0] for lab in labels}
    slot = [0, 0, 0, 0]
    for ref, pred in corpus:
        for lab in labels:
            a = [r for r in ref if r[0] == lab]
            p = [r for r in pred if r[0] == lab]
            cell = count_cell(len(a), len(p), pairs_of(a, p, ok, quality), counting)
            for k in range(3):
                per[lab][k] += cell[k]
        se = slot_errors(len(ref), len(pred), pairs_of(ref, pred, aligned), pairs_of(ref, pred, ok, quality))
        for k in range(4):
            slot[k] += se[k]
    return Result({k: tuple(v) for k, v in per.items()}, _total(per), tuple(slot),
                  {lab: ("tp", "fp", "fn") for lab in labels})


# --- links ----------------------------------------------------------------------------------

def link_ok(rule: Rule, link_types: bool, a: Lnk, p: Lnk) -> bool:
    return a[1] == p[1] and (not link_types or a[0][0] == p[0][0]) and span_ok(rule, a[0][1:], p[0][1:])


def evaluate_links(corpus: Sequence[tuple[Sequence[Lnk], Sequence[Lnk]]], *, rule: str = "E",
                   counting: str = "any", link_types: bool = False, nil: str = "keep") -> Result:
    """Counts of entity links; rows per mention entity type. Without ``link_types`` a
    prediction may match an answer of another type, so only the rows that cannot depend
    on the choice are defined (any-match: a type's fp and fn)."""
    R = parse_rule(rule)
    keep = (lambda x: x[1] != NIL) if nil == "ignore" else (lambda x: True)
    docs = [([x for x in ref if keep(x)], [x for x in pred if keep(x)]) for ref, pred in corpus]
    types = sorted({x[0][0] for ref, pred in docs for x in [*ref, *pred]})
    per = {t: [0, 0, 0] for t in types}
    overall = [0, 0, 0]
    slot = [0, 0, 0, 0]
    def ok(a: Lnk, p: Lnk) -> bool:
        return link_ok(R, link_types, a, p)

    def quality(a: Lnk, p: Lnk) -> tuple[int, int]:
        return int(a[0][1:] == p[0][1:]), -span_err(a[0][1:], p[0][1:])

    def aligned(a: Lnk, p: Lnk) -> bool:
        return common(a[0][1:], p[0][1:]) > 0

    for ref, pred in docs:
        within = pairs_of(ref, pred, ok, quality)
        cell = count_cell(len(ref), len(pred), within, counting)
        for k in range(3):
            overall[k] += cell[k]
        for t in types:
            a = [x for x in ref if x[0][0] == t]
            p = [x for x in pred if x[0][0] == t]
            if link_types:
                c = count_cell(len(a), len(p), pairs_of(a, p, ok, quality), counting)
            else:  # any-match: an answer matched by no prediction, a prediction matching no answer
                fn = sum(not any(ok(x, y) for y in pred) for x in a)
                fp = sum(not any(ok(x, y) for x in ref) for y in p)
                c = (0, fp, fn)
            for k in range(3):
                per[t][k] += c[k]
        se = slot_errors(len(ref), len(pred), pairs_of(ref, pred, aligned), within)
        for k in range(4):
            slot[k] += se[k]
    defined: dict[str, tuple[str, ...]]
    if link_types:
        defined = {t: ("tp", "fp", "fn") for t in types}
    else:
        defined = {t: ("fp", "fn") for t in types} if counting == "any" else {}
    return Result({k: tuple(v) for k, v in per.items()}, tuple(overall), tuple(slot), defined)


# --- relations (OBD) ------------------------------------------------------------------------

def _inside(big: tuple[str, ...], small: tuple[str, ...], extra: float) -> bool:
    """``small`` is a contiguous part of ``big``, which has at most ``extra`` more tokens."""
    n, k = len(big), len(small)
    return 0 < k <= n <= k + extra and any(big[s : s + k] == small for s in range(n - k + 1))


def seq_ok(rule: Rule, ans: tuple[str, ...], pred: tuple[str, ...]) -> bool:
    """The sequence rules (De Sitter Def. 9): E, C(e), O(e, m)."""
    n, k = len(pred), len(ans)
    if rule.kind == "exact":
        return pred == ans
    if rule.kind == "contain":
        return _inside(pred, ans, rule.e)
    if rule.kind != "overlap":
        raise ValueError(f"no sequence rule {rule.kind}")
    if _inside(pred, ans, rule.e) or _inside(ans, pred, rule.m):
        return True
    # a suffix of pred (after i extra tokens on the left) equals a prefix of ans
    for i in range(max(0, n - k), n):
        if pred[i:] == ans[: n - i] and i <= rule.e and k - (n - i) <= rule.m:
            return True
    # a prefix of pred equals a suffix of ans (i missing on the left, the rest of pred extra)
    for i in range(max(0, k - n), k):
        if ans[i:] == pred[: k - i] and i <= rule.m and n - (k - i) <= rule.e:
            return True
    return False


Seq = tuple[str, ...]
# a record with argument labels ("" where the arguments have none): label, head, tail,
# head label, tail label
LRec = tuple[str, Seq, Seq, str, str]


def record(r: TRel | LRec, symmetric: Iterable[str], arg_labels: bool) -> LRec:
    """A record as it is compared: argument labels kept only when compared, and a
    symmetric label's two orientations one record (the smaller of the two), since they
    match the same answers."""
    lab, h, t, hl, tl = (*r, "", "")[:5]
    if not arg_labels:
        hl = tl = ""
    if lab in set(symmetric):
        return min((lab, h, t, hl, tl), (lab, t, h, tl, hl))
    return lab, h, t, hl, tl


def trel_ok(rule: Rule, symmetric: Iterable[str], a: LRec, p: LRec) -> bool:
    """Equal relation labels, argument labels (as kept by `record`) and both arguments
    within the sequence rule, in either order for a symmetric label."""
    if a[0] != p[0]:
        return False
    pairs = [(p[1], p[2], p[3], p[4])] + ([(p[2], p[1], p[4], p[3])] if a[0] in set(symmetric) else [])
    return any(a[3] == hl and a[4] == tl and seq_ok(rule, a[1], h) and seq_ok(rule, a[2], t)
               for h, t, hl, tl in pairs)


def seq_err(rule: Rule, ans: Seq, pred: Seq) -> int:
    """The least boundary error of a placement of ``pred`` against ``ans`` that the rule
    accepts: extra plus missing tokens (0 when equal)."""
    n, k = len(pred), len(ans)
    if pred == ans:
        return 0
    errs = []
    if _inside(pred, ans, rule.e):
        errs.append(n - k)
    if rule.kind == "overlap":
        if _inside(ans, pred, rule.m):
            errs.append(k - n)
        for t in range(1, min(n, k) + 1):
            if pred[n - t:] == ans[:t] and n - t <= rule.e and k - t <= rule.m:
                errs.append(n + k - 2 * t)
            if pred[:t] == ans[k - t:] and k - t <= rule.m and n - t <= rule.e:
                errs.append(n + k - 2 * t)
    return min(errs)


def trel_quality(rule: Rule, symmetric: Iterable[str], a: LRec, p: LRec) -> tuple[int, int]:
    """(exact, -error) of the best orientation in which the records are within the rule."""
    pairs = [(p[1], p[2], p[3], p[4])] + ([(p[2], p[1], p[4], p[3])] if a[0] in set(symmetric) else [])
    return max((int(a[1] == h and a[2] == t), -(seq_err(rule, a[1], h) + seq_err(rule, a[2], t)))
               for h, t, hl, tl in pairs
               if a[3] == hl and a[4] == tl and seq_ok(rule, a[1], h) and seq_ok(rule, a[2], t))


def trel_aligned(symmetric: Iterable[str], a: LRec, p: LRec) -> bool:
    """Slot alignment of records (any relation label): head shares tokens with head and
    tail with tail, as the overlap rule places them (O(inf,inf) holds), in either order
    when either label is symmetric."""
    anywhere = Rule("overlap", INF, INF)
    sym = set(symmetric)
    pairs = [(p[1], p[2])] + ([(p[2], p[1])] if a[0] in sym or p[0] in sym else [])
    return any(seq_ok(anywhere, a[1], h) and seq_ok(anywhere, a[2], t) for h, t in pairs)


def document_records(tokens: Sequence[str], rels: Iterable[Rel]) -> list[LRec]:
    """AO relations of a document as position-free records: their arguments' tokens."""
    return [(lab, tuple(tokens[h[1]:h[2]]), tuple(tokens[t[1]:t[2]]), h[0], t[0]) for lab, h, t in rels]


def evaluate_text_relations(corpus: Sequence[tuple[Iterable[TRel | LRec], Iterable[TRel | LRec]]], *,
                            rule: str = "E", counting: str = "any", symmetric: Sequence[str] = (),
                            arg_labels: bool = True) -> Result:
    """Counts of OBD relations: a document's distinct records (`record`) per relation
    label."""
    R = parse_rule(rule)

    def ok(a: LRec, p: LRec) -> bool:
        return trel_ok(R, symmetric, a, p)

    docs = [(sorted({record(r, symmetric, arg_labels) for r in ref}),
             sorted({record(r, symmetric, arg_labels) for r in pred})) for ref, pred in corpus]
    def aligned(a: LRec, p: LRec) -> bool:
        return trel_aligned(symmetric, a, p)

    labels = sorted({r[0] for ref, pred in docs for r in [*ref, *pred]})
    per = {lab: [0, 0, 0] for lab in labels}
    slot = [0, 0, 0, 0]
    for ref, pred in docs:
        for lab in labels:
            a = [r for r in ref if r[0] == lab]
            p = [r for r in pred if r[0] == lab]
            cell = count_cell(len(a), len(p), pairs_of(a, p, ok), counting)
            for k in range(3):
                per[lab][k] += cell[k]
        se = slot_errors(len(ref), len(pred), pairs_of(ref, pred, aligned),
                         pairs_of(ref, pred, ok, lambda x, y: trel_quality(R, symmetric, x, y)))
        for k in range(4):
            slot[k] += se[k]
    return Result({k: tuple(v) for k, v in per.items()}, _total(per), tuple(slot),
                  {lab: ("tp", "fp", "fn") for lab in labels})


# --- per-label slot errors ------------------------------------------------------------------

Tally = frozenset[tuple[tuple[str, str], int]]  # ((label, "C"|"S"|"D"|"I"), n > 0)


def relation_slot_tallies(corpus: Sequence[tuple[Sequence[Rel], Sequence[Rel]]], *, rule: str = "E",
                          arg_labels: bool = True, symmetric: Sequence[str] = (),
                          swap_when: str = "either") -> set[Tally]:
    """Every per-label tally of C, S, D, I that an alignment with the most correct pairs
    (among them the most exact, then the least boundary error), then the most pairs, then
    the most same-label pairs can give (C, S and D count under
    the answer's label, I under the prediction's)."""
    R = parse_rule(rule)
    options: set[Tally] = {frozenset()}
    for ref, pred in corpus:
        pairs: Pairs = {}
        for i, a in enumerate(ref):
            for j, p in enumerate(pred):
                correct = rel_ok(R, arg_labels, symmetric, a, p)
                if correct or rel_aligned(symmetric, a, p, swap_when):
                    q = rel_quality(R, arg_labels, symmetric, a, p) if correct else (0, 0)
                    pairs[(i, j)] = (int(correct), *q, 1, int(a[0] == p[0]))
        _, matchings = best_matchings(len(ref), len(pred), pairs)
        doc: set[Tally] = set()
        for chosen in matchings:
            c: dict[tuple[str, str], int] = {}
            keys = [(ref[i][0], "C" if pairs[(i, j)][0] else "S") for i, j in chosen]
            keys += [(ref[i][0], "D") for i in range(len(ref)) if i not in {x for x, _ in chosen}]
            keys += [(pred[j][0], "I") for j in range(len(pred)) if j not in {y for _, y in chosen}]
            for k in keys:
                c[k] = c.get(k, 0) + 1
            doc.add(frozenset(c.items()))
        merged: set[Tally] = set()
        for x in options:
            for y in doc:
                s = dict(x)
                for k, n in y:
                    s[k] = s.get(k, 0) + n
                merged.add(frozenset(s.items()))
        options = merged
    return options
