"""Stage 2 of the pipeline (match), for relations: the candidate pairs of relation units
and their attributes (Concepts: relations).

A relation ``(label, head, tail)`` is one unit of the engine (`iescore.match.count`); what
is particular to relations is only how its candidate pairs (`iescore.match.rules.Pairs`)
are found and what their attributes say:

* **positions** (AO, `relation_pairs`): an answer and a prediction of one document are a
  candidate pair when head overlaps head and tail overlaps tail (any relation label): the
  pairs Makhoul's alignment may align. For a relation label declared symmetric (the
  answer's or the prediction's) the swapped orientation (head against tail, tail against
  head) is a candidate too, and a pair found both ways takes its better orientation: the
  one under which both arguments fit the rule, then the exact one, then the smaller
  boundary error.
  ``same`` = the same relation label; ``ok`` = the same relation label, both arguments
  within the span rule (any rule of the AO setting: E, C(e), O(e,m), IoU(t), cover(t))
  and, when argument labels are compared, equal argument labels; ``exact`` = both
  arguments at the same positions (and of the same labels, when compared); ``err`` = the
  sum of both arguments' boundary errors; ``close`` = the tokens both arguments overlap;
  ``fit`` = the arguments within the rule (and of equal labels, when compared), whatever
  the relation labels: the extent slot of Makhoul's multi-slot tags.
  Pairs are found by one interval search on the heads (`iescore.match.rules.overlapping`),
  then kept where the tails overlap: no loop over pairs.
* **token sequences** (OBD, `sequence_pairs`): records ``(label, head tokens, tail
  tokens)`` (distinct per document and label), whose arguments are compared by the OBD
  sequence rules (`iescore.match.rules.sequence_match`); a candidate pair's arguments
  share tokens pairwise (`iescore.match.rules.placement`), found through an index of the
  document's tokens (every pair of a document under sim(t), which may match strings that
  share no token). ``close`` counts the shared tokens of both arguments.

Argument labels are those of the arguments' spans as given (``supertags`` and the type
filters apply to relation labels, which are the rows of the report).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..options import Rule
from .rules import Pairs, overlapping, placement, sequence_match, span_attributes
from .units import _I64, Units

__all__ = ["ArgColumns", "relation_pairs", "sequence_pairs", "canonical_rank"]


@dataclass(frozen=True)
class ArgColumns:
    """The arguments of one side's relation units as columns: each argument's label
    number (in one numbering for both sides) and token offsets ``[start, end)``."""

    head_label: np.ndarray
    head_start: np.ndarray
    head_end: np.ndarray
    tail_label: np.ndarray
    tail_start: np.ndarray
    tail_end: np.ndarray

    def take(self, idx: np.ndarray) -> ArgColumns:
        return ArgColumns(*(getattr(self, f)[idx] for f in self.__dataclass_fields__))

    def swapped(self) -> ArgColumns:
        """Head and tail exchanged."""
        return ArgColumns(self.tail_label, self.tail_start, self.tail_end,
                          self.head_label, self.head_start, self.head_end)


def canonical_rank(doc: np.ndarray, label: np.ndarray, a: ArgColumns) -> np.ndarray:
    """Every unit's rank in the canonical order (document, head position, tail position,
    relation label, argument labels), independent of the input order: the order in which
    the tie rule of the matchings (`iescore.match.assign`) numbers relation units.

    >>> a = ArgColumns(*(np.array(x) for x in ([0, 0], [4, 0], [5, 2], [1, 1], [0, 4], [2, 5])))
    >>> canonical_rank(np.array([0, 0]), np.array([0, 0]), a).tolist()
    [1, 0]
    """
    if not len(doc):
        return np.zeros(0, dtype=_I64)
    w = int(max(a.head_end.max(), a.tail_end.max())) + 1
    if w * w * (int(doc.max()) + 1) < 2**62:  # (document, head) and tail as one key each
        head = (doc * w + a.head_start) * w + a.head_end
        order = np.lexsort((a.tail_label, a.head_label, label, a.tail_start * w + a.tail_end, head))
    else:
        order = np.lexsort((a.tail_label, a.head_label, label, a.tail_end, a.tail_start, a.head_end, a.head_start, doc))
    rank = np.empty(len(doc), dtype=_I64)
    rank[order] = np.arange(len(doc), dtype=_I64)
    return rank


def _shared_spans(rd: np.ndarray, rs: np.ndarray, re_: np.ndarray, pd: np.ndarray, ps: np.ndarray,
                  pe: np.ndarray) -> int:
    """How many (answer, prediction) pairs have the very same span (document, start, end):
    the pairs an argument shared by many relations (a hub entity) makes on its own."""
    d, s, e = np.concatenate((rd, pd)), np.concatenate((rs, ps)), np.concatenate((re_, pe))
    w = int(e.max()) + 1
    if w * w * (int(d.max()) + 1) < 2**62:  # (document, start, end) as one integer
        _, inv = np.unique((d * w + s) * w + e, return_inverse=True)
    else:
        _, inv = np.unique(np.stack((d, s, e), axis=1), axis=0, return_inverse=True)
    inv = inv.reshape(-1)
    n = int(inv.max()) + 1
    return int(np.dot(np.bincount(inv[: len(rd)], minlength=n), np.bincount(inv[len(rd) :], minlength=n)))


def _heads_and_tails(rd: np.ndarray, ra: ArgColumns, pd: np.ndarray, pa: ArgColumns) -> tuple[np.ndarray, np.ndarray]:
    """The (answer, prediction) index pairs of one document whose heads overlap and whose
    tails overlap (``rd``/``pd``: the documents). The pairs are found by overlapping one
    argument and kept where the other overlaps too; the argument joined first is the one
    whose identical spans pair fewer relations, so that a hub entity (one span, the head
    of thousands of relations) does not make every pair of its relations a candidate."""
    z = np.zeros(0, dtype=_I64)
    if len(rd) == 0 or len(pd) == 0:
        return z, z
    first, then = ("head", "tail")
    if _shared_spans(rd, ra.tail_start, ra.tail_end, pd, pa.tail_start, pa.tail_end) < \
            _shared_spans(rd, ra.head_start, ra.head_end, pd, pa.head_start, pa.head_end):
        first, then = then, first
    r, p = overlapping(Units(rd, np.zeros(len(rd), dtype=_I64), getattr(ra, f"{first}_start"), getattr(ra, f"{first}_end")),
                       Units(pd, np.zeros(len(pd), dtype=_I64), getattr(pa, f"{first}_start"), getattr(pa, f"{first}_end")))
    r, p = r.astype(_I64), p.astype(_I64)
    keep = (getattr(ra, f"{then}_start")[r] < getattr(pa, f"{then}_end")[p]) & \
        (getattr(pa, f"{then}_start")[p] < getattr(ra, f"{then}_end")[r])
    r, p = r[keep], p[keep]
    if first == "tail":  # the heads' order: grouped by prediction, answers by position
        o = np.lexsort((r, p))
        r, p = r[o], p[o]
    return r, p


def _oriented(r: np.ndarray, p: np.ndarray, R: Units, ra: ArgColumns, P: Units, pa: ArgColumns, rule: Rule,
              arg_labels: bool) -> Pairs:
    """The attributes of pairs ``(r, p)`` with the prediction's arguments as given in ``pa``."""
    hok, hex_, herr, hclose = span_attributes(ra.head_start[r], ra.head_end[r], pa.head_start[p], pa.head_end[p], rule)
    tok, tex, terr, tclose = span_attributes(ra.tail_start[r], ra.tail_end[r], pa.tail_start[p], pa.tail_end[p], rule)
    same = R.label[r] == P.label[p]
    fit, exact = hok & tok, hex_ & tex
    if arg_labels:
        labels_eq = (ra.head_label[r] == pa.head_label[p]) & (ra.tail_label[r] == pa.tail_label[p])
        fit &= labels_eq
        exact &= labels_eq
    return Pairs(r, p, same, same & fit, exact, herr + terr, hclose + tclose, fit=fit)


def best_orientation(parts: Sequence[Pairs]) -> Pairs:
    """The pairs of ``parts`` (one per orientation, each with ``fit``), each (answer,
    prediction) pair once, in its better orientation: the rule holding first, then exact,
    then the smaller boundary error."""
    parts = [x for x in parts if len(x.r)]
    if not parts:
        return Pairs.empty()
    if len(parts) == 1:
        return parts[0]
    r, p, same, ok, exact, err, close, fit = (np.concatenate([getattr(x, f) for x in parts])
                                              for f in ("r", "p", "same", "ok", "exact", "err", "close", "fit"))
    cat = Pairs(r, p, same, ok, exact, err, close, fit=fit)
    order = np.lexsort((err, ~exact, ~fit, p, r))
    r, p = cat.r[order], cat.p[order]
    first = np.ones(len(order), dtype=bool)
    first[1:] = (r[1:] != r[:-1]) | (p[1:] != p[:-1])
    return cat.take(order[first])


def relation_pairs(R: Units, ra: ArgColumns, P: Units, pa: ArgColumns, rule: Rule, *, arg_labels: bool,
                   symmetric: np.ndarray) -> Pairs:
    """Candidate pairs of relation units by position, with their attributes (module
    docstring). ``symmetric``: per relation label number, is it symmetric?

    >>> R = Units(np.array([0]), np.array([0]))
    >>> ra = ArgColumns(*(np.array([x]) for x in (0, 0, 2, 1, 4, 5)))
    >>> pa = ArgColumns(*(np.array([x]) for x in (0, 0, 2, 1, 4, 6)))
    >>> e = relation_pairs(R, ra, R, pa, Rule.parse("O(1,0)"), arg_labels=True, symmetric=np.zeros(1, bool))
    >>> e.ok.tolist(), e.exact.tolist(), e.err.tolist(), e.close.tolist()
    ([True], [False], [1], [3])
    """
    r, p = _heads_and_tails(R.doc, ra, P.doc, pa)
    parts = [_oriented(r, p, R, ra, P, pa, rule, arg_labels)]
    if symmetric.any():
        sym_r, sym_p = symmetric[R.label], symmetric[P.label]
        swapped = pa.swapped()
        for rm, pm in ((sym_r, np.ones(len(P), dtype=bool)), (~sym_r, sym_p)):
            ri, pi = np.flatnonzero(rm), np.flatnonzero(pm)
            r2, p2 = _heads_and_tails(R.doc[ri], ra.take(ri), P.doc[pi], swapped.take(pi))
            parts.append(_oriented(ri[r2], pi[p2], R, ra, P, swapped, rule, arg_labels))
    return best_orientation(parts)


Record = tuple[tuple[str, ...], tuple[str, ...], str, str]  # head tokens, tail tokens, head label, tail label


def _sequence_attrs(rk: Record, pk: Record, rule: Rule, arg_labels: bool, close: int) -> tuple[bool, bool, int, int]:
    """(fit, exact, err, close) of answer record ``rk`` and prediction record ``pk``
    (oriented; ``close``: their arguments' shared tokens): ``fit``, both arguments within
    the rule (and of equal labels, when compared)."""
    labels_eq = not arg_labels or (rk[2] == pk[2] and rk[3] == pk[3])
    exact = labels_eq and rk[0] == pk[0] and rk[1] == pk[1]
    if exact:
        return True, True, 0, close
    if not labels_eq:
        return False, False, 0, close
    hok, herr = sequence_match(pk[0], rk[0], rule)
    if not hok:
        return False, False, 0, close
    tok, terr = sequence_match(pk[1], rk[1], rule)
    return tok, False, herr + terr if tok else 0, close


def _shared(p: tuple[str, ...], a: tuple[str, ...]) -> int:
    """`placement`, with equal sequences at once."""
    return len(a) if p == a else placement(p, a)


def _attrs(rk: Record, pk: Record, rule: Rule, arg_labels: bool, every: bool) -> tuple[bool, bool, int, int] | None:
    """The attributes of a candidate pair (oriented), or None when its arguments do not
    share tokens pairwise (every pair is a candidate under sim(t): ``every``)."""
    h = _shared(pk[0], rk[0])
    if not (h or every):
        return None
    t = _shared(pk[1], rk[1])
    if not (t or every):
        return None
    return _sequence_attrs(rk, pk, rule, arg_labels, h + t)


def sequence_pairs(R: Units, r_rec: Sequence[Record], P: Units, p_rec: Sequence[Record], rule: Rule, *,
                   arg_labels: bool, symmetric: np.ndarray) -> Pairs:
    """Candidate pairs of relation records (OBD: arguments as token sequences) and their
    attributes (module docstring): within a document, pairs whose arguments share tokens
    pairwise (in either orientation for a symmetric label), all pairs under sim(t). The
    candidates of an answer are the predictions whose head holds a token of its head and
    whose tail a token of its tail (an index of the document's tokens).

    >>> R = Units(np.array([0]), np.array([0]))
    >>> e = sequence_pairs(R, [(("Al", "Roth"), ("IBM",), "", "")], R, [(("Roth",), ("IBM",), "", "")],
    ...                    Rule.parse("O(0,1)"), arg_labels=True, symmetric=np.zeros(1, bool))
    >>> e.ok.tolist(), e.exact.tolist(), e.err.tolist(), e.close.tolist()
    ([True], [False], [1], [2])
    """
    by_doc: dict[int, list[int]] = {}
    for j, d in enumerate(P.doc.tolist()):
        by_doc.setdefault(d, []).append(j)
    index: dict[int, tuple[dict[str, set[int]], dict[str, set[int]]]] = {}  # per document: heads', tails' tokens
    every = rule.kind == "sim"
    rows: list[tuple[int, int, bool, bool, bool, int, int]] = []
    r_lab, p_lab, sym = R.label.tolist(), P.label.tolist(), symmetric.tolist()
    any_sym = bool(symmetric.any())

    held: dict[tuple[int, tuple[str, ...]], set[int]] = {}  # of the current document (arguments recur)
    empty: set[int] = set()

    def holding(index_: dict[str, set[int]], side: int, seq: tuple[str, ...]) -> set[int]:
        """The current document's predictions whose head (``side`` 0) or tail (1), indexed
        by token in ``index_``, holds a token of ``seq``."""
        got = held.get((side, seq))
        if got is None:
            got = held[(side, seq)] = index_.get(seq[0], empty) if len(seq) == 1 else set().union(
                *(index_.get(t, ()) for t in seq))
        return got

    last = -1
    for i, d in enumerate(R.doc.tolist()):
        preds = by_doc.get(d)
        if not preds:
            continue
        if d != last:
            held.clear()
            last = d
        rk = r_rec[i]
        if every:
            direct: Sequence[int] = preds
            swap: Sequence[int] = preds if any_sym else ()
        else:
            toks = index.get(d)
            if toks is None:
                toks = index[d] = ({}, {})
                for j in preds:
                    for side, seq in zip(toks, p_rec[j][:2]):
                        for t in seq:
                            side.setdefault(t, set()).add(j)
            # a candidate's head shares a token with the answer's head, its tail with the tail
            direct = sorted(holding(toks[0], 0, rk[0]) & holding(toks[1], 1, rk[1]))
            swap = sorted(holding(toks[1], 1, rk[0]) & holding(toks[0], 0, rk[1])) if any_sym else ()
        found: dict[int, tuple[bool, bool, int, int]] = {}
        for j in direct:
            got = _attrs(rk, p_rec[j], rule, arg_labels, every)
            if got is not None:
                found[j] = got
        for j in swap:
            if not (sym[r_lab[i]] or sym[p_lab[j]]):
                continue
            pk = p_rec[j]
            other = _attrs(rk, (pk[1], pk[0], pk[3], pk[2]), rule, arg_labels, every)
            best = found.get(j)
            if other is not None and (best is None or (other[0], other[1], -other[2]) > (best[0], best[1], -best[2])):
                found[j] = other
        for j in sorted(found):
            rows.append((i, j, r_lab[i] == p_lab[j], *found[j]))
    if not rows:
        return Pairs.empty()
    cols = list(zip(*rows))
    same_, fit = np.array(cols[2], dtype=bool), np.array(cols[3], dtype=bool)
    return Pairs(np.array(cols[0], dtype=_I64), np.array(cols[1], dtype=_I64), same_, same_ & fit,
                 np.array(cols[4], dtype=bool), np.array(cols[5], dtype=_I64), np.array(cols[6], dtype=_I64), fit=fit)
