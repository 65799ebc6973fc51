"""Stages 2-3 of the pipeline (match, count), for entity links (Concepts: links): the
candidate pairs of link units and the row each true positive is counted in.

A link (a mention span with a knowledge-base id) is one unit of the engine
(`iescore.match.count`), its label the mention's entity type: the report's rows are
entity types, never ids. The candidate pairs are the overlapping mentions of one document
(`iescore.match.rules.ao_pairs`), whatever their types, with

* ``same`` = the same id (and the same type, when types are compared): what
  Makhoul's alignment prefers after correct pairs, and what the error categories call
  the label (``wrong_label`` = another id on the same mention);
* ``ok`` = the same id, the mention spans within the rule (strong = E, weak = O(inf,inf),
  or any other AO rule) and, with ``link_types``, the same type;
* ``exact`` = the same mention positions; ``err``, ``close`` as for spans; ``fit`` = the
  mentions within the rule, ids and types aside (the extent slot of Makhoul's multi-slot
  tags, whose type slot is the id).

**The row of a true positive.** When types are not compared, a prediction may match an
answer of another type (the same mention and id, typed differently). It is counted in
the row of the *answer's* type (`move_to_answer_rows`): the mention's entity type is the
reference's, so per-type precision and recall read the reference's type for matched
pairs, and a prediction that merely mistypes a correctly linked mention does not make one
type gain a true positive and another lose one. Its own row keeps its false positives
(unmatched predictions are counted under their own type), and Makhoul's C and S are
under the answer's type anyway. Which answer a true positive counts with: under
one-to-one counting its partner in the matching; under any-match the best answer it
matches (of its own type first, then exact, then the smallest boundary error, then the
first in position order).
"""

from __future__ import annotations

import numpy as np

from ..options import Rule
from .count import _onetoone
from .rules import Pairs, ao_pairs
from .units import _I64, TP, Units, _Ranks

__all__ = ["link_pairs", "move_to_answer_rows"]


def link_pairs(R: Units, r_ids: np.ndarray, P: Units, p_ids: np.ndarray, rule: Rule, *, link_types: bool) -> Pairs:
    """Candidate pairs of link units (overlapping mentions of a document) and their
    attributes (module docstring); ``r_ids``/``p_ids``: each link's id as a number (one
    numbering for both sides).

    >>> R = Units(np.array([0]), np.array([0]), np.array([0]), np.array([2]))
    >>> P = Units(np.array([0, 0]), np.array([1, 0]), np.array([0, 1]), np.array([2, 2]))
    >>> e = link_pairs(R, np.array([7]), P, np.array([7, 8]), Rule.parse("O(inf,inf)"), link_types=False)
    >>> e.p.tolist(), e.same.tolist(), e.ok.tolist(), e.exact.tolist()
    ([0, 1], [True, False], [True, False], [True, False])
    """
    assert R.start is not None and R.end is not None and P.start is not None and P.end is not None
    one = Units(R.doc, np.zeros(len(R), dtype=_I64), R.start, R.end)  # every type alike: the rule alone
    base = ao_pairs(one, Units(P.doc, np.zeros(len(P), dtype=_I64), P.start, P.end), rule)
    r, p = base.r.astype(_I64), base.p.astype(_I64)
    same = r_ids[r] == p_ids[p]
    if link_types:
        same &= R.label[r] == P.label[p]
    return Pairs(r, p, same, same & base.ok, base.exact, base.err, base.close, fit=base.ok)


def move_to_answer_rows(cells: np.ndarray, R: Units, P: Units, pairs: Pairs, pred_status: np.ndarray,
                        counting: str, matched: tuple[np.ndarray, np.ndarray] | None = None) -> int:
    """Move the true positives of predictions matched to an answer of another type from
    the prediction's cell to the answer's (the ``tp`` column of ``cells``, in place;
    module docstring); returns how many moved.

    >>> R = Units(np.array([0]), np.array([0]), np.array([0]), np.array([2]), cell=np.array([0]))
    >>> P = Units(np.array([0]), np.array([1]), np.array([0]), np.array([2]), cell=np.array([1]))
    >>> e = link_pairs(R, np.array([7]), P, np.array([7]), Rule.parse("E"), link_types=False)
    >>> cells = np.array([[0, 0, 0], [1, 0, 0]])
    >>> move_to_answer_rows(cells, R, P, e, np.array([0], dtype=np.int8), "any"), cells[:, 0].tolist()
    (1, [1, 0])
    """
    assert R.cell is not None and P.cell is not None
    ok = pairs.take(pairs.ok)
    if len(ok.r) == 0:
        return 0
    rank_r = _Ranks(R)
    if counting == "one-to-one" and matched is not None:  # the matching that gave the statuses
        r, p = matched
    elif counting == "one-to-one":
        chosen = ok.take(_onetoone(ok, len(R), len(P), rank_r, _Ranks(P)))
        r, p = chosen.r, chosen.p
    else:  # any-match: each true positive's best answer
        tp = pred_status[ok.p] == TP
        e = ok.take(tp)
        own = R.label[e.r] == P.label[e.p]
        order = np.lexsort((rank_r()[e.r], e.err, ~e.exact, ~own, e.p))
        p_sorted = e.p[order]
        first = np.ones(len(order), dtype=bool)
        first[1:] = p_sorted[1:] != p_sorted[:-1]
        r, p = e.r[order[first]], p_sorted[first]
    moved = R.label[r] != P.label[p]
    if not moved.any():
        return 0
    m = cells.shape[0]
    cells[:, 0] -= np.bincount(P.cell[p[moved]], minlength=m).astype(cells.dtype)
    cells[:, 0] += np.bincount(R.cell[r[moved]], minlength=m).astype(cells.dtype)
    return int(moved.sum())
