"""Stage 3 of the pipeline (count), Makhoul's slot alignment of OBD fillers (Concepts: slot errors; ties), without the pairs of a slot that weigh nothing.

In OBD every answer and prediction of one slot (document and label) may align, so a
slot is a complete bipartite graph. Its alignment maximises correct pairs, then aligned
pairs, then shared tokens, ties broken by the earliest pairs (`iescore.match.assign`).
`iescore.match.fillers.obd_pairs` hands over only the pairs that can weigh anything
(but the hub pairs that a certificate shows no best alignment uses: `iescore.match.hubs`),
with their *weights* (shared tokens, counted from the slot's floors), and what each filler
gains when left unaligned (copies of floors it lacks): the alignments rank the same under
those (`iescore.match.fillers`).

An unaligned filler's gain is carried by a *stand-in*: in a slot of more answers than
predictions, a prediction standing for "unaligned", as many as the answers with a gain
(but no more than the excess of answers), each paired with each of them at their gain
(no correct pair, no aligned pair), ranked after every real prediction (and the other way
round). A largest alignment leaves exactly the excess unaligned, and the tie rule decides
an answer's stand-in only after all its real partners: the stand-ins change no real
choice. As every matching extends to ``min(answers, predictions)`` real pairs through the
complete slot, the objective is the same as: a best matching of the *positive* pairs
(correct, or of positive weight, stand-ins included) under (correct, weight), filled up
with weightless pairs.

Every best alignment contains the best matching of each component of the positive pairs
that has only one (the common case: a filler shares its own tokens with its own
counterpart only); the fillers left free can pair in any way, all those pairs weighing
nothing, so in a slot whose components all have one best matching the tie rule pairs
the k-th free answer with the k-th free prediction (position order). Linear after the
components' own matchings; whether a component has another best matching takes one more
solve (`_tied_components`).

A slot with a component of several best matchings (a tie, whose choice interacts with
the free fillers), or in which at least half the pairs weigh something, is solved over
the pairs of its fillers outside the single-optimum components, by the general solver
of `iescore.match.assign`: all their positive pairs, and of the weightless ones only
a band around the diagonal of their places, as wide as the positive pairs they can hold
(`_banded`), which is all pairs when most pairs weigh something: the stated worst
case, reached when many fillers share tokens beyond their floors and several matchings
tie.

A slot with a block of tight hub pairs (``Pairs.blocks``, `iescore.match.hubs`)
has its block's component taken as tied, whole, and is solved over its fillers outside
the single-optimum components with nothing written out (`_block_slots`): their
positive pairs listed, the block, and every pair of the slot's real fillers as a block
of weightless aligned pairs, by `iescore.match.blocks` on classes of twin fillers.
So is a tied slot (not one where most pairs weigh something) whose band would span it
(many ties among many fillers), and a slot whose fillers with a gain and stand-ins would
make ``_STAND_IN_LISTED`` pairs or more: those pairs are blocks, one per gain (the
stand-ins of a slot are twins), and their component is taken as tied, whole.
The plain reference is the all-pairs path in tests/test_slots.py.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .assign import _weights, components, match
from .blocks import block_match
from .rules import Pairs, _ranges
from .units import _I64, Units

__all__ = ["align_slots"]

# a slot in which at least this share of the pairs weighs something is solved over all its
# pairs at once (a matching of the positive pairs and a check for ties would cost more)
_FULL_SHARE = 0.5
# a slot whose fillers with a gain and stand-ins make this many pairs has them as blocks
_STAND_IN_LISTED = 4096

Block = tuple[np.ndarray, np.ndarray, int, bool]  # answers, predictions, weight, aligned pairs (not stand-ins)


def _tied_components(u: np.ndarray, v: np.ndarray, ok: np.ndarray, red: np.ndarray, chosen: np.ndarray,
                     n_u: int, n_v: int, n_r: int, n_p: int) -> np.ndarray:
    """Edge mask: the edges of components (of two edges or more) with more than one best
    matching, stand-ins exchanged among themselves not counted (answers from ``n_r`` on,
    predictions from ``n_p`` on). ``chosen`` is a best matching. Every edge weighs
    something, so another best matching holds an edge outside ``chosen`` (one inside it
    would be lighter), either a real pair or a stand-in of a filler that has none in
    ``chosen``: one more solve, with a last level counting those edges, finds it if it
    exists."""
    tied = np.zeros(len(u), dtype=bool)
    if len(u) == 0:
        return tied
    comp = components(u, v, n_u, n_v)
    multi = np.flatnonzero(np.bincount(comp).take(comp) >= 2)
    if len(multi) == 0:
        return tied
    mu, mv = u.take(multi), v.take(multi)
    other = ~chosen.take(multi)
    # a filler's stand-in edge is "other" only when the filler has no stand-in in ``chosen``
    to_p, to_r = mv >= n_p, mu >= n_r  # edges to stand-in predictions (of answers) and answers
    has = np.zeros(n_u + n_v, dtype=bool)
    c_mu, c_mv = u.compress(chosen), v.compress(chosen)
    has[c_mu.compress(c_mv >= n_p)] = True
    has[n_u + c_mv.compress(c_mu >= n_r)] = True
    other[to_p] = ~has.take(mu.compress(to_p))
    other[to_r] = ~has.take(n_u + mv.compress(to_r))
    again = match(mu, mv, [ok.take(multi), red.take(multi), other], n_u, n_v, tie_rule=False)
    # components whose best matchings include one with such an edge
    bad = np.unique(comp.take(multi.compress(again & other)))
    tied[np.isin(comp, bad)] = True
    return tied


def _first_free(slot: np.ndarray, rank: np.ndarray, free: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The free units (indices) and their place among their slot's free units in rank order."""
    idx = np.flatnonzero(free)
    o = np.lexsort((rank.take(idx), slot.take(idx)))
    idx, s = idx.take(o), slot.take(idx.take(o))
    new = np.ones(len(idx), dtype=bool)
    new[1:] = s[1:] != s[:-1]
    start = np.maximum.accumulate(np.where(new, np.arange(len(idx)), 0)) if len(idx) else idx
    return idx, np.arange(len(idx)) - start


def _complete(sr: np.ndarray, sp: np.ndarray, in_r: np.ndarray, in_p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every (answer, prediction) of one slot, among the units of the masks."""
    ri, pi = np.flatnonzero(in_r), np.flatnonzero(in_p)
    order = ri[np.argsort(sr.take(ri), kind="stable")]
    keys = sr.take(order)
    lo = np.searchsorted(keys, sp.take(pi), "left")
    hi = np.searchsorted(keys, sp.take(pi), "right")
    own, pos = _ranges(lo, hi)
    return order.take(pos), pi.take(own)


def _banded(sr: np.ndarray, sp: np.ndarray, in_r: np.ndarray, in_p: np.ndarray, u: np.ndarray, v: np.ndarray,
            rank_r: np.ndarray, rank_p: np.ndarray, n_r: int, n_p: int) -> tuple[np.ndarray, np.ndarray]:
    """The pairs of one slot, among the units of the masks, that its tie-ruled alignment can
    use: every positive pair (``u``/``v``, stand-ins included: units from ``n_r``/``n_p``
    on), and the weightless pairs of the answer at place i (in rank order among the slot's
    real units of the mask) with the predictions at places i - k .. i + k, k the most
    positive pairs an alignment of the slot can hold (the fewer of its answers and of its
    predictions that have one).

    Why that band holds the alignment: in it, weightless pairs keep rank order and take
    the earliest predictions (else exchanging two, or moving one to an earlier free
    prediction, or to an earlier answer matched with nothing, not even a stand-in, would
    weigh as much and keep an earlier pair); so the predictions before the partner of the answer at place i are
    all aligned, each with an answer before it or by one of at most k positive pairs, and
    the answers before it all likewise: the two places differ by k at most. Where the band
    is as wide as the slots, all their pairs (`_complete`).
    """
    fr, kr = _first_free(sr[:n_r], rank_r[:n_r], in_r[:n_r])
    fp, kp = _first_free(sp[:n_p], rank_p[:n_p], in_p[:n_p])
    keep = in_r.take(u) & in_p.take(v)
    pu, pv = u.compress(keep), v.compress(keep)
    # k per slot: distinct answers and predictions with a positive pair
    slots = np.union1d(sr.take(fr), sp.take(fp))
    n_a = np.bincount(np.searchsorted(slots, sr.take(np.unique(pu))), minlength=len(slots))
    n_b = np.bincount(np.searchsorted(slots, sp.take(np.unique(pv))), minlength=len(slots))
    k = np.minimum(n_a, n_b)
    band = int(k.max(initial=0))
    out_r, out_p = [pu], [pv]
    if 2 * band + 1 >= max(int(kr.max(initial=0)), int(kp.max(initial=0))) + 1:
        cr, cp = _complete(sr[:n_r], sp[:n_p], in_r[:n_r], in_p[:n_p])  # as wide as the slots: all their pairs
        out_r.append(cr)
        out_p.append(cp)
    else:
        width = int(max(len(fr), len(fp))) + band + 1  # place + offset stays below it: no key of another slot
        key_p = sp.take(fp) * width + kp
        o = np.argsort(key_p)
        key_p, fp_o = key_p.take(o), fp.take(o)
        k_r = k.take(np.searchsorted(slots, sr.take(fr)))
        for d in range(-band, band + 1):
            sel = np.flatnonzero((np.abs(d) <= k_r) & (kr + d >= 0))
            want = sr.take(fr.take(sel)) * width + kr.take(sel) + d
            at = np.minimum(np.searchsorted(key_p, want), max(len(key_p) - 1, 0))
            hit = key_p.take(at) == want if len(key_p) else np.zeros(len(want), dtype=bool)
            out_r.append(fr.take(sel.compress(hit)))
            out_p.append(fp_o.take(at.compress(hit)))
    dr, dp = np.concatenate(out_r), np.concatenate(out_p)
    n = len(sp)
    code = np.unique(dr * n + dp)
    return code // n, code % n


def _stand_ins(s_big: np.ndarray, s_small: np.ndarray, gain: np.ndarray,
               listed: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Stand-ins for one side's unaligned fillers (module docstring): in each slot with
    more units on this side (slots ``s_big``) than on the other (``s_small``), one per unit
    there with a positive ``gain``, but no more than the excess. Returns the slot of every
    stand-in, and the edges, every such unit with every stand-in of its slot: (unit,
    stand-in number). With ``listed``, only the edges of the slots where they number fewer
    than ``listed`` (`_stand_in_parts` gives the others as blocks)."""
    return _stand_in_parts(s_big, s_small, gain, listed)[:3]


def _stand_in_parts(s_big: np.ndarray, s_small: np.ndarray, gain: np.ndarray, listed: int | None) -> tuple[
        np.ndarray, np.ndarray, np.ndarray, list[tuple[np.ndarray, np.ndarray, int]]]:
    """`_stand_ins`, and the edges it leaves out under ``listed`` as blocks: per slot
    and gain, (the units with that gain, the slot's stand-in numbers, the gain)."""
    z = np.zeros(0, dtype=_I64)
    blocks: list[tuple[np.ndarray, np.ndarray, int]] = []
    cand = np.flatnonzero(gain > 0)
    if len(cand) == 0:
        return z, z, z, blocks
    cs = s_big.take(cand)
    sb, ss = np.sort(s_big), np.sort(s_small)
    excess = (np.searchsorted(sb, cs, "right") - np.searchsorted(sb, cs, "left")
              - np.searchsorted(ss, cs, "right") + np.searchsorted(ss, cs, "left"))
    sel = np.flatnonzero(excess > 0)
    cand, cs, excess = cand.take(sel), cs.take(sel), excess.take(sel)
    slots, first, inv, count = np.unique(cs, return_index=True, return_inverse=True, return_counts=True)
    k = np.minimum(count, excess.take(first))  # stand-ins per slot
    start = np.cumsum(k) - k
    big = count * k >= listed if listed is not None else np.zeros(len(slots), dtype=bool)
    by_slot = cand.take(np.argsort(inv, kind="stable"))
    at = np.concatenate(([0], np.cumsum(count)))
    for s in np.flatnonzero(big).tolist():  # per gain, its units with every stand-in of the slot
        units = by_slot[at[s] : at[s + 1]]
        numbers = np.arange(start[s], start[s] + k[s], dtype=_I64)
        g = gain.take(units)
        for value in np.unique(g).tolist():
            blocks.append((units.compress(g == value), numbers, int(value)))
    on = np.flatnonzero(~big.take(inv))
    owner, number = _ranges(start.take(inv.take(on)), start.take(inv.take(on)) + k.take(inv.take(on)))
    return np.repeat(slots, k), cand.take(on.take(owner)), number, blocks


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
    # stand-ins: answers from n_r on stand for unaligned predictions, predictions from n_p on for answers;
    # in a slot where they would make _STAND_IN_LISTED pairs or more, those pairs are blocks
    slot_xr, ep, xr, blocks_xr = _stand_in_parts(sp, sr, gain_p, _STAND_IN_LISTED)
    slot_xp, er, xp, blocks_xp = _stand_in_parts(sr, sp, gain_r, _STAND_IN_LISTED)
    # every block: (answers, predictions, weight, whether its pairs are aligned pairs)
    blocks = ([(a, b, w, True) for a, b, w in pairs.blocks] + [(a, n_p + x, g, False) for a, x, g in blocks_xp]
              + [(n_r + x, b, g, False) for b, x, g in blocks_xr])
    N_r, N_p = n_r + len(slot_xr), n_p + len(slot_xp)
    if N_r > n_r or N_p > n_p:
        sr, sp = np.concatenate((sr, slot_xr)), np.concatenate((sp, slot_xp))
        rank_r = _ranked_after(rank_r, N_r - n_r)
        rank_p = _ranked_after(rank_p, N_p - n_p)
    pos = np.flatnonzero(pairs.ok | (pairs.weight > 0))
    u = np.concatenate((pairs.r.take(pos).astype(_I64), er, n_r + xr))
    v = np.concatenate((pairs.p.take(pos).astype(_I64), n_p + xp, ep))
    ok = np.concatenate((pairs.ok.take(pos), np.zeros(len(er) + len(ep), dtype=bool)))
    red = np.concatenate((pairs.weight.take(pos), gain_r.take(er), gain_p.take(ep)))
    # slots where most pairs weigh something (_FULL_SHARE) go straight to all their pairs
    slot_ids, su = np.unique(sr.take(u), return_inverse=True)
    s_r, s_p = np.sort(sr[:n_r]), np.sort(sp[:n_p])
    n_rs = np.searchsorted(s_r, slot_ids, "right") - np.searchsorted(s_r, slot_ids, "left")
    n_ps = np.searchsorted(s_p, slot_ids, "right") - np.searchsorted(s_p, slot_ids, "left")
    full = slot_ids.compress(np.bincount(su, minlength=len(slot_ids)) >= _FULL_SHARE * (n_rs * n_ps))
    sparse = np.flatnonzero(~np.isin(sr.take(u), full))
    su_, sv, sok, sred = u.take(sparse), v.take(sparse), ok.take(sparse), red.take(sparse)
    # a component holding a block (hub pairs, stand-ins) is taken as tied, whole
    by_block = _in_block_components(su_, sv, blocks, N_r, N_p)
    free = np.flatnonzero(~by_block)
    fu, fv, fok, fred = su_.take(free), sv.take(free), sok.take(free), sred.take(free)
    # any best matching: a component with one has it, and _tied_components finds the others
    chosen = (match(fu, fv, [fok, fred], N_r, N_p, rank_r, rank_p, tie_rule=False) if len(fu)
              else np.zeros(0, dtype=bool))
    tied = _tied_components(fu, fv, fok, fred, chosen, N_r, N_p, n_r, n_p)
    block_slots = np.unique(np.array([sr[b[0][0]] for b in blocks], dtype=_I64))
    dense = np.union1d(np.union1d(full, sr.take(fu.compress(tied))), block_slots)  # solved over all their pairs
    in_r, in_p = ~np.isin(sr, dense), ~np.isin(sp, dense)
    # a component with one best matching has it in every best alignment, whatever the slot
    keep = chosen & ~tied
    out_r, out_p, out_ok = [fu.compress(keep)], [fv.compress(keep)], [fok.compress(keep)]
    left_r, left_p = np.ones(N_r, dtype=bool), np.ones(N_p, dtype=bool)
    left_r[out_r[0]] = False
    left_p[out_p[0]] = False
    # the free fillers of the other slots: k-th free answer with the k-th free prediction
    fr, kr = _first_free(sr[:n_r], rank_r()[:n_r], (left_r & in_r)[:n_r])
    fp, kp = _first_free(sp[:n_p], rank_p()[:n_p], (left_p & in_p)[:n_p])
    width = max(n_r, n_p) + 1
    _, ir, ip = np.intersect1d(sr.take(fr) * width + kr, sp.take(fp) * width + kp, return_indices=True)
    out_r.append(fr.take(ir))
    out_p.append(fp.take(ip))
    out_ok.append(np.zeros(len(ir), dtype=bool))
    # the slots with a block of hub pairs, and the tied ones (not full) whose band would be
    # as wide as they are: every pair of their fillers outside the single-optimum
    # components, as blocks left implicit (iescore.match.blocks)
    tied_slots = np.setdiff1d(dense, np.union1d(full, block_slots))
    wide = _wide(sr, sp, left_r & np.isin(sr, tied_slots), left_p & np.isin(sp, tied_slots), u, v, n_r, n_p)
    by_blocks = np.union1d(block_slots, wide)
    if len(by_blocks):
        b_r, b_p = left_r & np.isin(sr, by_blocks), left_p & np.isin(sp, by_blocks)
        got = _block_slots(sr, sp, b_r, b_p, u, v, ok, red, blocks, rank_r(), rank_p(), n_r, n_p)
        for acc, x in zip((out_r, out_p, out_ok), got):
            acc.append(x)
    rest = np.setdiff1d(dense, by_blocks)
    if len(rest):
        # the slots with a tie: the pairs of the fillers no single-optimum component holds
        # that a tie-ruled alignment can use (all the positive ones, weightless ones in a band)
        d_r, d_p = left_r & ~in_r & np.isin(sr, rest), left_p & ~in_p & np.isin(sp, rest)
        dr, dp = _banded(sr, sp, d_r, d_p, u, v, rank_r(), rank_p(), n_r, n_p)
        d_ok, d_red = _looked_up(dr, dp, u, v, ok, red, N_r)
        real = ((dr < n_r) & (dp < n_p)).view(np.int8)  # a pair with a stand-in aligns nothing
        ch = match(dr, dp, [d_ok, real, d_red], N_r, N_p, rank_r, rank_p)
        out_r.append(dr.compress(ch))
        out_p.append(dp.compress(ch))
        out_ok.append(d_ok.compress(ch))
    a_r, a_p, a_ok = np.concatenate(out_r), np.concatenate(out_p), np.concatenate(out_ok)
    m = np.flatnonzero((a_r < n_r) & (a_p < n_p))  # a filler paired with a stand-in is unaligned
    a_r, a_p, a_ok = a_r.take(m), a_p.take(m), a_ok.take(m)
    o = np.lexsort((a_r, a_p))
    return a_r.take(o), a_p.take(o), a_ok.take(o)


def _looked_up(dr: np.ndarray, dp: np.ndarray, u: np.ndarray, v: np.ndarray, ok: np.ndarray, red: np.ndarray,
               N_r: int) -> tuple[np.ndarray, np.ndarray]:
    """The correctness and weight of pairs (``dr``, ``dp``) from the positive pairs
    (``u``, ``v``, ``ok``, ``red``); any other pair weighs nothing."""
    code = v * N_r + u
    o = np.argsort(code)
    code = code.take(o)
    dc = dp * N_r + dr
    if len(code) == 0:
        return np.zeros(len(dc), dtype=bool), np.zeros(len(dc), dtype=_I64)
    at = np.minimum(np.searchsorted(code, dc), len(code) - 1)
    hit = code.take(at) == dc
    return hit & ok.take(o).take(at), np.where(hit, red.take(o).take(at), 0)


def _in_block_components(u: np.ndarray, v: np.ndarray, blocks: list[Block], N_r: int, N_p: int) -> np.ndarray:
    """Edge mask: the edges in a component (of the edges and the blocks' pairs) that holds
    a block."""
    if not blocks:
        return np.zeros(len(u), dtype=bool)
    # each block's members joined by a star: its answers to its first prediction, its
    # predictions to its first answer
    star_u = np.concatenate([np.concatenate((a, np.full(len(b), a[0]))) for a, b, _, _ in blocks])
    star_v = np.concatenate([np.concatenate((np.full(len(a), b[0]), b)) for a, b, _, _ in blocks])
    comp = components(np.concatenate((u, star_u)), np.concatenate((v, star_v)), N_r, N_p)
    return np.isin(comp[: len(u)], comp[len(u) :])


def _wide(sr: np.ndarray, sp: np.ndarray, in_r: np.ndarray, in_p: np.ndarray, u: np.ndarray, v: np.ndarray,
          n_r: int, n_p: int) -> np.ndarray:
    """The slots of the units of the masks whose band (`_banded`: k a side of each
    real unit's place, k the most positive pairs an alignment of the slot can hold) would
    span the slot: 2 k + 1 places at least as many as its real units on the larger side."""
    slots = np.union1d(sr.compress(in_r), sp.compress(in_p))
    if len(slots) == 0:
        return slots
    keep = in_r.take(u) & in_p.take(v)
    n_a = np.bincount(np.searchsorted(slots, sr.take(np.unique(u.compress(keep)))), minlength=len(slots))
    n_b = np.bincount(np.searchsorted(slots, sp.take(np.unique(v.compress(keep)))), minlength=len(slots))
    real_r, real_p = sr[:n_r].compress(in_r[:n_r]), sp[:n_p].compress(in_p[:n_p])
    size = np.maximum(np.bincount(np.searchsorted(slots, real_r), minlength=len(slots)),
                      np.bincount(np.searchsorted(slots, real_p), minlength=len(slots)))
    return slots.compress(2 * np.minimum(n_a, n_b) + 1 >= size)


def _block_slots(sr: np.ndarray, sp: np.ndarray, in_r: np.ndarray, in_p: np.ndarray, u: np.ndarray, v: np.ndarray,
                 ok: np.ndarray, red: np.ndarray, blocks: list[Block],
                 rank_r: np.ndarray, rank_p: np.ndarray, n_r: int, n_p: int) -> tuple[np.ndarray, ...]:
    """The tie-ruled alignment (answers, predictions, correct) of the units of the masks
    (slots whole but for their single-optimum components): their positive pairs listed,
    and as blocks (`iescore.match.blocks.block_match`) the hub pairs ``blocks`` (the
    hub tokens they share, an aligned pair) and every pair of a slot's real fillers (an
    aligned pair)."""
    ur, up = np.flatnonzero(in_r), np.flatnonzero(in_p)
    num_r = np.full(len(sr), -1, dtype=_I64)
    num_p = np.full(len(sp), -1, dtype=_I64)
    num_r[ur] = np.arange(len(ur))
    num_p[up] = np.arange(len(up))
    e = np.flatnonzero(in_r.take(u) & in_p.take(v))
    eu, ev = num_r.take(u.take(e)), num_p.take(v.take(e))
    e_ok, e_red = ok.take(e), red.take(e)
    e_real = (u.take(e) < n_r) & (v.take(e) < n_p)
    groups = []
    for a, b, weight, real in blocks:
        assert in_r.take(a).all() and in_p.take(b).all(), "a block's members are all in its tied component"
        groups.append((num_r.take(a), num_p.take(b), weight, real))
    # each slot's real units, by slot
    real_r, real_p = ur.compress(ur < n_r), up.compress(up < n_p)
    real_r, real_p = real_r.take(np.argsort(sr.take(real_r), kind="stable")), real_p.take(
        np.argsort(sp.take(real_p), kind="stable"))
    key_r, key_p = sr.take(real_r), sp.take(real_p)
    both = np.intersect1d(key_r, key_p)
    lo_r, hi_r = np.searchsorted(key_r, both, "left").tolist(), np.searchsorted(key_r, both, "right").tolist()
    lo_p, hi_p = np.searchsorted(key_p, both, "left").tolist(), np.searchsorted(key_p, both, "right").tolist()
    for a0, a1, b0, b1 in zip(lo_r, hi_r, lo_p, hi_p):
        groups.append((num_r.take(real_r[a0:a1]), num_p.take(real_p[b0:b1]), 0, True))
    # the levels (correct, aligned, shared tokens) as exact integers, the blocks' after the edges
    n_e = len(e)
    levels = [np.concatenate((e_ok, np.zeros(len(groups), dtype=bool))),
              np.concatenate((e_real, np.array([g[3] for g in groups], dtype=bool))),
              np.concatenate((e_red, np.array([g[2] for g in groups], dtype=_I64)))]
    w = _weights(levels, np.arange(n_e + len(groups)), min(len(ur), len(up)))
    mate = block_match(len(ur), len(up), rank_r.take(ur).tolist(), rank_p.take(up).tolist(), eu.tolist(),
                       ev.tolist(), w[:n_e], [(a.tolist(), b.tolist(), wk) for (a, b, _, _), wk in zip(groups, w[n_e:])])
    m = np.array(mate, dtype=_I64)
    has = np.flatnonzero(m >= 0)
    a_r, a_p = ur.take(has), up.take(m.take(has))
    a_ok, _ = _looked_up(a_r, a_p, u, v, ok, red, len(sr))
    return a_r, a_p, a_ok


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
