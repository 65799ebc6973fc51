"""Stage 3 of the pipeline (count), Makhoul's slot alignment of OBD fillers (Concepts: slot errors; ties), without the pairs of a slot that weigh nothing.

In OBD every answer and prediction of one slot (document and label) may align, so a
slot is a complete bipartite graph. Its alignment maximises correct pairs, then aligned
pairs, then shared tokens. `iescore.match.fillers.obd_pairs` hands over only the pairs
that can weigh anything, with their *weights* (shared tokens, counted from the slot's
floors), and what each filler gains when left unaligned (copies of floors it lacks):
the alignments rank the same under those (`iescore.match.fillers`).

An unaligned filler's gain is carried by a *stand-in*: in a slot of more answers than
predictions, a prediction standing for "unaligned", as many as the answers with a gain
(but no more than the excess of answers), each paired with each of them at their gain
(no correct pair, no aligned pair), ranked after every real prediction (and the other way
round). A largest alignment leaves exactly the excess unaligned, and at most the excess
takes a stand-in, so the other answers can still align every prediction.

As every matching extends to ``min(answers, predictions)`` real pairs through the
complete slot, the objective is the same as: a best matching of the *positive* pairs
(correct, or of positive weight, stand-ins included) under (correct, weight), by
`iescore.match.assign.match`, filled up with weightless pairs: in each slot, its k-th
free answer with its k-th free prediction in rank order (a filler taken by a stand-in
is not free). No fill pair is a positive pair, or the best matching would have taken
it. So a slot costs one matching of its positive pairs and a sort.
The plain reference is the all-pairs path in tests/test_slots.py.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .assign import match
from .rules import Pairs, _ranges
from .units import _I64, Units

__all__ = ["align_slots"]


def _stand_ins(s_big: np.ndarray, s_small: np.ndarray,
               gain: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Stand-ins for one side's unaligned fillers (module docstring): in each slot with
    more units on this side (slots ``s_big``) than on the other (``s_small``), one per unit
    there with a positive ``gain``, but no more than the excess. Returns the slot of every
    stand-in, and the edges, every such unit with every stand-in of its slot: (unit,
    stand-in number)."""
    z = np.zeros(0, dtype=_I64)
    cand = np.flatnonzero(gain > 0)
    if len(cand) == 0:
        return z, z, z
    cs = s_big.take(cand)
    sb, ss = np.sort(s_big), np.sort(s_small)
    excess = (np.searchsorted(sb, cs, "right") - np.searchsorted(sb, cs, "left")
              - np.searchsorted(ss, cs, "right") + np.searchsorted(ss, cs, "left"))
    sel = np.flatnonzero(excess > 0)
    cand, cs, excess = cand.take(sel), cs.take(sel), excess.take(sel)
    slots, first, inv, count = np.unique(cs, return_index=True, return_inverse=True, return_counts=True)
    k = np.minimum(count, excess.take(first))  # stand-ins per slot
    start = np.cumsum(k) - k
    owner, number = _ranges(start.take(inv), start.take(inv) + k.take(inv))
    return np.repeat(slots, k), cand.take(owner), number


def align_slots(pairs: Pairs, R: Units, P: Units, rank_r: Callable[[], np.ndarray],
                rank_p: Callable[[], np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Makhoul's alignment of OBD fillers from ``obd_pairs``' pairs: (answers, predictions,
    correct) of the aligned pairs, in (prediction, answer) order."""
    assert pairs.weight is not None and pairs.alone is not None
    n_r, n_p = len(R), len(P)
    if n_r == 0 or n_p == 0:
        z = np.zeros(0, dtype=_I64)
        return z, z, np.zeros(0, dtype=bool)
    n_lab = int(max(R.label.max(), P.label.max())) + 1
    sr = R.doc.astype(_I64) * n_lab + R.label
    sp = P.doc.astype(_I64) * n_lab + P.label
    gain_r, gain_p = pairs.alone
    # stand-ins: answers from n_r on stand for unaligned predictions, predictions from n_p on for answers
    slot_xr, ep, xr = _stand_ins(sp, sr, gain_p)
    slot_xp, er, xp = _stand_ins(sr, sp, gain_r)
    N_r, N_p = n_r + len(slot_xr), n_p + len(slot_xp)
    pos = np.flatnonzero(pairs.ok | (pairs.weight > 0))
    u = np.concatenate((pairs.r.take(pos).astype(_I64), er, n_r + xr))
    v = np.concatenate((pairs.p.take(pos).astype(_I64), n_p + xp, ep))
    ok = np.concatenate((pairs.ok.take(pos), np.zeros(len(er) + len(ep), dtype=bool)))
    red = np.concatenate((pairs.weight.take(pos), gain_r.take(er), gain_p.take(ep)))
    chosen = match(u, v, [ok, red], N_r, N_p, _ranked_after(rank_r, N_r - n_r), _ranked_after(rank_p, N_p - n_p))
    a_r, a_p, a_ok = u.compress(chosen), v.compress(chosen), ok.compress(chosen)
    free_r, free_p = np.ones(N_r, dtype=bool), np.ones(N_p, dtype=bool)
    free_r[a_r] = False
    free_p[a_p] = False
    # the free fillers: in each slot, the k-th free answer with the k-th free prediction
    fr, kr = _first_free(sr, rank_r(), free_r[:n_r])
    fp, kp = _first_free(sp, rank_p(), free_p[:n_p])
    width = max(n_r, n_p) + 1
    _, ir, ip = np.intersect1d(sr.take(fr) * width + kr, sp.take(fp) * width + kp, return_indices=True)
    a_r, a_p = np.concatenate((a_r, fr.take(ir))), np.concatenate((a_p, fp.take(ip)))
    a_ok = np.concatenate((a_ok, np.zeros(len(ir), dtype=bool)))
    m = np.flatnonzero((a_r < n_r) & (a_p < n_p))  # a filler paired with a stand-in is unaligned
    a_r, a_p, a_ok = a_r.take(m), a_p.take(m), a_ok.take(m)
    o = np.lexsort((a_r, a_p))
    return a_r.take(o), a_p.take(o), a_ok.take(o)


def _first_free(slot: np.ndarray, rank: np.ndarray, free: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The free units (indices) and their place among their slot's free units in rank order."""
    idx = np.flatnonzero(free)
    o = np.lexsort((rank.take(idx), slot.take(idx)))
    idx, s = idx.take(o), slot.take(idx.take(o))
    new = np.ones(len(idx), dtype=bool)
    new[1:] = s[1:] != s[:-1]
    start = np.maximum.accumulate(np.where(new, np.arange(len(idx)), 0)) if len(idx) else idx
    return idx, np.arange(len(idx)) - start

def _ranked_after(rank: Callable[[], np.ndarray], extra: int) -> Callable[[], np.ndarray]:
    """The ranks with ``extra`` stand-ins after every real unit, computed on first use."""
    if extra == 0:
        return rank
    cache: list[np.ndarray] = []

    def ranks() -> np.ndarray:
        if not cache:
            r = rank()
            cache.append(np.concatenate((r.astype(_I64), len(r) + np.arange(extra, dtype=_I64))))
        return cache[0]

    return ranks
