"""A plain, slow reference implementation of the definitions, for the tests only.

Written from the definitions (matching rules, any-match and one-to-one counting,
Makhoul's slot alignment, match-best, one-per-string, OBD fillers, the token &
separator model, the averages) with no code shared with the library: loops over
Python tuples, brute-force search over all one-to-one matchings. It is meant for
corpora of a few spans per document; the tests compare every front end of the
library against it.

Spans are ``(label, start, end)`` with half-open token offsets; a document is
``(tokens, reference_spans, predicted_spans)``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

Spn = tuple[str, int, int]
Doc = tuple[Sequence[str], Sequence[Spn], Sequence[Spn]]

INF = math.inf


@dataclass(frozen=True)
class RuleSpec:
    kind: str  # "exact" | "contain" | "overlap"
    e: float = 0
    m: float = 0


def parse_rule(text: str) -> RuleSpec:
    t = text.replace(" ", "")
    if t == "E":
        return RuleSpec("exact")
    inner = t[2:-1].split(",")
    num = [INF if x == "inf" else int(x) for x in inner]
    return RuleSpec("contain", num[0]) if t[0] == "C" else RuleSpec("overlap", num[0], num[1])


# --- matching rules ---------------------------------------------------------------

def ao_match(rule: RuleSpec, ans: tuple[int, int], pred: tuple[int, int]) -> bool:
    """De Sitter Def. 6-8 on half-open offsets (the same arithmetic as 1-based inclusive)."""
    i, j = ans
    ik, jk = pred
    if rule.kind == "exact":
        return (i, j) == (ik, jk)
    if rule.kind == "contain":
        return ik <= i and j <= jk and (jk - ik) - (j - i) <= rule.e
    extra = max(0, i - ik) + max(0, jk - j)
    missing = max(0, ik - i) + max(0, j - jk)
    return max(i, ik) < min(j, jk) and extra <= rule.e and missing <= rule.m


def _inside(big: tuple[str, ...], small: tuple[str, ...], extra: float) -> bool:
    """``small`` is a contiguous part of ``big`` and ``big`` has at most ``extra`` more tokens."""
    if not small or len(big) - len(small) > extra or len(small) > len(big):
        return False
    return any(big[k : k + len(small)] == small for k in range(len(big) - len(small) + 1))


def seq_match(rule: RuleSpec, ans: tuple[str, ...], pred: tuple[str, ...]) -> bool:
    """The OBD rules on token sequences (SPEC §2.2)."""
    if not ans or not pred:
        return False
    if rule.kind == "exact":
        return ans == pred
    if rule.kind == "contain":
        return _inside(pred, ans, rule.e)
    if _inside(pred, ans, rule.e) or _inside(ans, pred, rule.m):
        return True
    n, k = len(pred), len(ans)
    for i in range(1, n):  # a suffix of pred (after i extra tokens) is a prefix of ans
        common = n - i
        if common <= k and pred[i:] == ans[:common] and i <= rule.e and k - common <= rule.m:
            return True
    for i in range(1, k):  # a prefix of pred is a suffix of ans (i missing on the left)
        common = k - i
        if common <= n and pred[:common] == ans[i:] and i <= rule.m and n - common <= rule.e:
            return True
    return False


# --- counting ------------------------------------------------------------------------

def max_matching(n_a: int, n_p: int, ok: Callable[[int, int], bool]) -> int:
    """The size of a maximum matching, by trying every assignment (small inputs only)."""
    best = 0

    def go(a: int, used: frozenset[int], size: int) -> None:
        nonlocal best
        if size + (n_a - a) <= best:
            return
        if a == n_a:
            best = max(best, size)
            return
        for p in range(n_p):
            if p not in used and ok(a, p):
                go(a + 1, used | {p}, size + 1)
        go(a + 1, used, size)

    go(0, frozenset(), 0)
    return best


def count_cell(answers: list, preds: list, ok: Callable, counting: str) -> tuple[int, int, int]:
    """(tp, fp, fn) of one document and label (De Sitter Fig. 4, or one-to-one)."""
    if counting == "any":
        hit_p = [any(ok(a, p) for a in answers) for p in preds]
        hit_a = [any(ok(a, p) for p in preds) for a in answers]
        tp = sum(hit_p)
        return tp, len(preds) - tp, len(answers) - sum(hit_a)
    k = max_matching(len(answers), len(preds), lambda i, j: ok(answers[i], preds[j]))
    return k, len(preds) - k, len(answers) - k


def slot_alignment(answers: Sequence[Spn], preds: Sequence[Spn], rule: RuleSpec) -> tuple[int, int, int, int]:
    """Makhoul's C, S, D, I of one document (AO): the one-to-one alignment of overlapping
    spans (any label) that has the most correct pairs, among them the most exact pairs and
    the least boundary error, then the most pairs (S and C totals do not depend on the
    later tie-breaks)."""
    best: tuple[int, ...] = (-1, -1, -1, -1)
    n_a, n_p = len(answers), len(preds)

    def can(a: Spn, p: Spn) -> bool:
        return max(a[1], p[1]) < min(a[2], p[2])

    def correct(a: Spn, p: Spn) -> bool:
        return a[0] == p[0] and ao_match(rule, (a[1], a[2]), (p[1], p[2]))

    def go(i: int, used: frozenset[int], w: tuple[int, int, int, int]) -> None:
        nonlocal best
        if i == n_a:
            best = max(best, w)
            return
        go(i + 1, used, w)
        for j in range(n_p):
            a, p = answers[i], preds[j]
            if j not in used and can(a, p):
                ok = correct(a, p)
                exact = ok and a[1:] == p[1:]
                err = abs(a[1] - p[1]) + abs(a[2] - p[2]) if ok else 0
                go(i + 1, used | {j}, (w[0] + ok, w[1] + exact, w[2] - err, w[3] + 1))

    go(0, frozenset(), (0, 0, 0, 0))
    c, pairs = best[0], best[3]
    return c, pairs - c, n_a - pairs, n_p - pairs


# --- the whole evaluation ------------------------------------------------------------------

@dataclass
class RefResult:
    labels: list[str]
    per_label: dict[str, tuple[int, int, int]]  # tp, fp, fn
    support: dict[str, int]
    predicted: dict[str, int]
    slot: tuple[int, int, int, int] | None  # C, S, D, I (not defined here for match-best)
    ts: dict[str, tuple[float, float, float, float]]  # label -> (tp, fp, fn, n) over t-units
    tok: dict[str, tuple[float, float, float, float]]  # tokens only
    # every possible tally of error categories (frozensets of ((label, category), n > 0)),
    # one per optimal alignment; None for match-best (no alignment)
    categories: set[frozenset[tuple[tuple[str, str], int]]] | None = None


def evaluate_docs(
    docs: Sequence[Doc],
    *,
    rule: str = "E",
    counting: str = "any",
    mode: str = "match-all",
    setting: str = "AO",
    supertags: dict[str, str] | None = None,
    token_weight: float = 1.0,
    separator_weight: float = 1.0,
    normalise: Callable[[str], str] = lambda s: s,
) -> RefResult:
    """Counts of a corpus under one configuration, from the definitions."""
    R = parse_rule(rule)
    sup = supertags or {}
    mapped = [
        (toks, [(sup.get(lab, lab), s, e) for lab, s, e in ref], [(sup.get(lab, lab), s, e) for lab, s, e in pred])
        for toks, ref, pred in docs
    ]
    labels = sorted({lab for _, ref, pred in mapped for lab, _, _ in list(ref) + list(pred)})
    per = {lab: [0, 0, 0] for lab in labels}
    support = dict.fromkeys(labels, 0)
    predicted = dict.fromkeys(labels, 0)
    ts = {lab: [0.0, 0.0, 0.0, 0.0] for lab in labels}
    tok = {lab: [0.0, 0.0, 0.0, 0.0] for lab in labels}
    slot = [0, 0, 0, 0]

    def text(toks: Sequence[str], s: int, e: int) -> tuple[str, ...]:
        return tuple(x for x in (normalise(t) for t in toks[s:e]) if x)

    cat_options: set[frozenset] = {frozenset()}
    for toks, ref, pred in mapped:
        if setting == "AO" and mode == "match-all":
            cat_options = _add_options(cat_options, ao_category_options(ref, pred, R))
        for lab in labels:
            a = [x for x in ref if x[0] == lab]
            p = [x for x in pred if x[0] == lab]
            if setting == "OBD" or mode == "one-per-string":
                fa = sorted({text(toks, s, e) for _, s, e in a} - {()})
                fp_ = sorted({text(toks, s, e) for _, s, e in p} - {()})
                tp, fp, fn = count_cell(fa, fp_, lambda x, y: seq_match(R, x, y), counting)
                support[lab] += len(fa)
                predicted[lab] += len(fp_)
                # slot errors of fillers: correct pairs first, the rest pair up as substitutions
                cat_options = _add_options(cat_options, obd_category_options(lab, fa, fp_, R))
                c = max_matching(len(fa), len(fp_), lambda i, j: seq_match(R, fa[i], fp_[j]))
                paired = min(len(fa), len(fp_))
                for k, v in enumerate((c, paired - c, len(fa) - paired, len(fp_) - paired)):
                    slot[k] += v
            elif mode == "match-best":
                a_pos = [(s, e) for _, s, e in a]
                best = sorted((s, e) for _, s, e in p)[:1]  # no confidences: the first in document order
                hit = bool(best) and any(ao_match(R, x, best[0]) for x in a_pos)
                tp, fp, fn = int(hit), int(bool(best) and not hit), int(not hit and bool(a))
                support[lab] += int(bool(a))  # one answer per attribute: a document's answers count once
                predicted[lab] += len(best)
            else:
                tp, fp, fn = count_cell(
                    [(s, e) for _, s, e in a], [(s, e) for _, s, e in p], lambda x, y: ao_match(R, x, y), counting
                )
                support[lab] += len(a)
                predicted[lab] += len(p)
            for k, v in enumerate((tp, fp, fn)):
                per[lab][k] += v
            # token & separator model
            n = len(toks)
            seg_a = [-1] * n
            seg_p = [-1] * n
            for k, (_, s, e) in enumerate(a):
                for t in range(s, e):
                    seg_a[t] = k
            for k, (_, s, e) in enumerate(p):
                for t in range(s, e):
                    seg_p[t] = k
            t_tp = sum(1 for t in range(n) if seg_a[t] >= 0 and seg_p[t] >= 0)
            t_fp = sum(1 for t in range(n) if seg_a[t] < 0 <= seg_p[t])
            t_fn = sum(1 for t in range(n) if seg_p[t] < 0 <= seg_a[t])
            sa = [seg_a[t] >= 0 and seg_a[t] == seg_a[t + 1] for t in range(n - 1)]
            sp = [seg_p[t] >= 0 and seg_p[t] == seg_p[t + 1] for t in range(n - 1)]
            s_tp = sum(1 for x, y in zip(sa, sp) if x and y)
            s_fp = sum(1 for x, y in zip(sa, sp) if y and not x)
            s_fn = sum(1 for x, y in zip(sa, sp) if x and not y)
            wt, ws = token_weight, separator_weight
            for k, v in enumerate((wt * t_tp + ws * s_tp, wt * t_fp + ws * s_fp, wt * t_fn + ws * s_fn,
                                   wt * n + ws * max(n - 1, 0))):
                ts[lab][k] += v
            for k, v in enumerate((t_tp, t_fp, t_fn, n)):
                tok[lab][k] += v
        if setting == "AO" and mode == "match-all":
            for k, v in enumerate(slot_alignment(ref, pred, R)):
                slot[k] += v
    return RefResult(
        labels=labels,
        per_label={k: tuple(v) for k, v in per.items()},  # type: ignore[misc]
        support=support,
        predicted=predicted,
        slot=tuple(slot) if mode != "match-best" else None,  # type: ignore[arg-type]
        ts={k: tuple(v) for k, v in ts.items()},  # type: ignore[misc]
        tok={k: tuple(v) for k, v in tok.items()},  # type: ignore[misc]
        categories=None if mode == "match-best" else cat_options,
    )


# --- error categories ---------------------------------------------------------------------

CATEGORIES = ("correct", "wrong_label", "wrong_boundary", "wrong_label_boundary", "missed", "spurious")
Tally = frozenset  # of ((label, category), n) with n > 0


def _add_options(a: set[Tally], b: set[Tally]) -> set[Tally]:
    """Every sum of a tally of ``a`` and a tally of ``b``."""
    out = set()
    for x in a:
        for y in b:
            c: dict[tuple[str, str], int] = dict(x)
            for k, n in y:
                c[k] = c.get(k, 0) + n
            out.add(frozenset(c.items()))
    return out


def _category_options(n_a: int, n_p: int, can: Callable, weight: Callable, category: Callable,
                      lab_a: Sequence[str], lab_p: Sequence[str]) -> set[Tally]:
    """The tallies of the one-to-one alignments (pairs where ``can``) whose summed
    ``weight`` tuple (correct, exact correct, minus the correct pairs' boundary error,
    pairs, same label, closeness) is the greatest: an aligned
    pair counts ``category(i, j)`` under the answer's label, an unaligned answer
    ``missed`` under its label, an unaligned prediction ``spurious`` under its own."""
    best: list = [None, set()]

    def go(i: int, used: frozenset[int], w: tuple, pairs: tuple) -> None:
        if i == n_a:
            c: dict[tuple[str, str], int] = {}
            for k in [(lab_a[a], category(a, p)) for a, p in pairs] + \
                     [(lab_a[a], "missed") for a in range(n_a) if a not in {x for x, _ in pairs}] + \
                     [(lab_p[p], "spurious") for p in range(n_p) if p not in used]:
                c[k] = c.get(k, 0) + 1
            tally = frozenset(c.items())
            if best[0] is None or w > best[0]:
                best[0], best[1] = w, {tally}
            elif w == best[0]:
                best[1].add(tally)
            return
        go(i + 1, used, w, pairs)
        for j in range(n_p):
            if j not in used and can(i, j):
                go(i + 1, used | {j}, tuple(x + y for x, y in zip(w, weight(i, j))), pairs + ((i, j),))

    go(0, frozenset(), (0, 0, 0, 0, 0, 0), ())
    return best[1]


def ao_category_options(answers: Sequence[Spn], preds: Sequence[Spn], rule: RuleSpec) -> set[Tally]:
    """Error-category tallies of one AO document: overlapping spans of any label align."""
    A, P = list(answers), list(preds)

    def overlap(i: int, j: int) -> int:
        return max(0, min(A[i][2], P[j][2]) - max(A[i][1], P[j][1]))

    def weight(i: int, j: int) -> tuple[int, ...]:
        same = A[i][0] == P[j][0]
        ok = same and ao_match(rule, A[i][1:], P[j][1:])
        err = abs(A[i][1] - P[j][1]) + abs(A[i][2] - P[j][2])
        return int(ok), int(ok and err == 0), -err if ok else 0, 1, int(same), overlap(i, j)

    def category(i: int, j: int) -> str:
        same_label, same_extent = A[i][0] == P[j][0], A[i][1:] == P[j][1:]
        return ("correct" if same_label else "wrong_label") if same_extent else (
            "wrong_boundary" if same_label else "wrong_label_boundary")

    return _category_options(len(A), len(P), lambda i, j: overlap(i, j) > 0, weight, category,
                             [a[0] for a in A], [p[0] for p in P])


def obd_category_options(label: str, fa: Sequence[tuple[str, ...]], fp: Sequence[tuple[str, ...]],
                         rule: RuleSpec) -> set[Tally]:
    """Error-category tallies of one document's slot (distinct fillers): any two fillers
    align; another string of the slot is a wrong boundary."""
    def shared(a: tuple[str, ...], b: tuple[str, ...]) -> int:
        rest, n = list(b), 0
        for t in a:
            if t in rest:
                rest.remove(t)
                n += 1
        return n

    return _category_options(
        len(fa), len(fp), lambda i, j: True,
        # OBD slots are aligned on their own (correct, pairs, closeness): no exactness level
        lambda i, j: (int(seq_match(rule, fa[i], fp[j])), 0, 0, 1, 1, shared(fa[i], fp[j])),
        lambda i, j: "correct" if fa[i] == fp[j] else "wrong_boundary",
        [label] * len(fa), [label] * len(fp))


# --- measures --------------------------------------------------------------------------

def div(a: float, b: float) -> float | None:
    return None if b == 0 else a / b


def f_beta(tp: float, fp: float, fn: float, beta: float = 1.0) -> float | None:
    """(1+b^2)PR/(b^2 P + R), written with counts: 0 when TP = 0 < FP + FN."""
    b2 = beta * beta
    return div((1 + b2) * tp, (1 + b2) * tp + b2 * fn + fp)


def mean(xs: Sequence[float | None]) -> float | None:
    v = [x for x in xs if x is not None]
    return sum(v) / len(v) if v else None


def averages(res: RefResult, beta: float = 1.0) -> dict[str, dict[str, float | None]]:
    """micro / macro / weighted precision, recall, F1 and F_beta."""
    per = res.per_label
    tp, fp, fn = (sum(v[k] for v in per.values()) for k in range(3))
    out: dict[str, dict[str, float | None]] = {
        "micro": {"precision": div(tp, tp + fp), "recall": div(tp, tp + fn),
                  "f1": f_beta(tp, fp, fn), "f_beta": f_beta(tp, fp, fn, beta)},
    }
    ms = {
        lab: {"precision": div(a, a + b), "recall": div(a, a + c), "f1": f_beta(a, b, c),
              "f_beta": f_beta(a, b, c, beta)}
        for lab, (a, b, c) in per.items()
    }
    out["macro"] = {k: mean([m[k] for m in ms.values()]) for k in ("precision", "recall", "f1", "f_beta")}
    w = res.support
    out["weighted"] = {}
    for k in ("precision", "recall", "f1", "f_beta"):
        pairs = [(w[lab], ms[lab][k]) for lab in res.labels if w[lab] and ms[lab][k] is not None]
        den = sum(x for x, _ in pairs)
        out["weighted"][k] = None if den == 0 else sum(x * y for x, y in pairs) / den  # type: ignore[operator]
    return out


def ts_summary(res: RefResult, beta: float = 1.0) -> dict[str, float | None]:
    """TS-F1^M, TS-F1^mu, T-F1^M and their F_beta versions."""
    def tot(d: dict) -> tuple[float, ...]:
        return tuple(sum(v[k] for v in d.values()) for k in range(4))

    ts_t, tok_t = tot(res.ts), tot(res.tok)
    return {
        "f1_macro": mean([f_beta(*v[:3]) for v in res.ts.values()]),
        "f1_micro": f_beta(*ts_t[:3]),
        "token_f1_macro": mean([f_beta(*v[:3]) for v in res.tok.values()]),
        "token_f1_micro": f_beta(*tok_t[:3]),
        "f_beta_macro": mean([f_beta(*v[:3], beta) for v in res.ts.values()]),
        "f_beta_micro": f_beta(*ts_t[:3], beta),
    }


def slot_measures(slot: tuple[int, int, int, int], beta: float = 1.0) -> dict[str, float | None]:
    """SER, MUC ERR and Makhoul's E from C, S, D, I."""
    C, S, D, I = slot
    N, M = C + S + D, C + S + I
    a = 1 / (1 + beta * beta)
    return {
        "ser": div(S + D + I, N),
        "err": div(S + D + I, N + I),
        "e": div(S + (1 - a) * D + a * I, (1 - a) * N + a * M),
    }


# --- tags -----------------------------------------------------------------------------------

def iob2_spans(tags: Sequence[str]) -> list[Spn]:
    """Spans of well-formed IOB2 tags (B- starts, I- of the same type continues)."""
    out: list[Spn] = []
    start, lab = None, None
    for k, t in enumerate(list(tags) + ["O"]):
        if start is not None and not (t.startswith("I-") and t[2:] == lab):
            out.append((lab, start, k))  # type: ignore[arg-type]
            start, lab = None, None
        if t.startswith("B-"):
            start, lab = k, t[2:]
    return out


