"""Relations and entity links: the library's counts equal a brute-force reference.

``relations_reference`` computes the counts from the definitions alone (the span
rules on the arguments, any-match and one-to-one counting by a search over every
matching, Makhoul's slot alignment); here it is first checked on small cases worked
out by hand, then compared with ``iescore.score`` / ``iescore.score_templates`` on
seeded random corpora over the option grid: overall TP/FP/FN and C/S/D/I, and every
per-label row that does not depend on how ties are broken.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence
from typing import Any

import pytest
import relations_reference as rr

import iescore
from iescore import Document, Link, Relation, Span, Template, TextRelation

RULES = ("E", "C(1)", "O(1,1)", "O(inf,inf)", "IoU(0.5)", "cover(0.5)")
SEQ_RULES = ("E", "C(1)", "O(1,1)", "O(inf,inf)")
REL_LABELS = ("r", "s")
ARG_LABELS = ("A", "B")
VOCAB = ("x", "y", "z")


# --- the reference on cases worked out by hand ---------------------------------------------

PER, ORG = ("PER", 0, 2), ("ORG", 4, 5)


def one(ref: list, pred: list, **kw: Any) -> rr.Result:
    return rr.evaluate_relations([(ref, pred)], **kw)


def test_reference_relation_rules() -> None:
    gold = [("works_for", PER, ORG)]
    short = [("works_for", ("PER", 0, 1), ORG)]  # head misses one token on the right
    assert one(gold, short, rule="E").overall == (0, 1, 1)
    assert one(gold, short, rule="C(1)").overall == (0, 1, 1)  # the prediction does not contain the answer
    assert one(gold, short, rule="O(1,1)").overall == (1, 0, 0)
    assert one(gold, short, rule="O(1,0)").overall == (0, 1, 1)
    assert one(gold, short, rule="O(inf,inf)").overall == (1, 0, 0)
    assert one(gold, short, rule="cover(0.5)").overall == (1, 0, 0)  # 1 of 2 answer tokens
    assert one(gold, short, rule="IoU(0.5)").overall == (1, 0, 0)  # 1 / 2
    assert one(gold, short, rule="IoU(0.6)").overall == (0, 1, 1)
    long = [("works_for", ("PER", 0, 3), ORG)]  # head one extra token
    assert one(gold, long, rule="C(1)").overall == (1, 0, 0)
    assert one(gold, long, rule="IoU(0.7)").overall == (0, 1, 1)  # 2 / 3
    assert one(gold, long, rule="cover(1)").overall == (1, 0, 0)
    # argument labels
    relabel = [("works_for", ("ORG", 0, 2), ORG)]
    assert one(gold, relabel).overall == (0, 1, 1)
    assert one(gold, relabel, arg_labels=False).overall == (1, 0, 0)
    # another relation label: never a match, a substitution in the slot errors
    other = [("born_in", PER, ORG)]
    res = one(gold, other, rule="O(inf,inf)", arg_labels=False)
    assert res.per_label == {"born_in": (0, 1, 0), "works_for": (0, 0, 1)}
    assert res.slot == (0, 1, 0, 0)


def test_reference_symmetric_and_counting() -> None:
    gold = [("sib", ("PER", 0, 1), ("PER", 3, 4))]
    swapped = [("sib", ("PER", 3, 4), ("PER", 0, 1))]
    assert one(gold, swapped).overall == (0, 1, 1)
    assert one(gold, swapped).slot == (0, 0, 1, 1)  # the arguments do not overlap pairwise
    assert one(gold, swapped, symmetric=("sib",)).overall == (1, 0, 0)
    assert one(gold, swapped, symmetric=("sib",)).slot == (1, 0, 0, 0)
    assert one(gold, swapped, symmetric=("other",)).overall == (0, 1, 1)
    twice = swapped + [("sib", ("PER", 0, 1), ("PER", 3, 4))]
    assert one(gold, twice, symmetric=("sib",)).overall == (2, 0, 0)
    assert one(gold, twice, symmetric=("sib",), counting="one-to-one").overall == (1, 1, 0)
    assert one(gold, twice, symmetric=("sib",), counting="one-to-one").slot == (1, 0, 0, 1)
    # one-to-one: the maximum matching, not the first come
    gold2 = [("r", ("A", 0, 2), ("B", 3, 4)), ("r", ("A", 1, 2), ("B", 3, 4))]
    pred2 = [("r", ("A", 1, 2), ("B", 3, 4)), ("r", ("A", 0, 1), ("B", 3, 4))]
    # O(0,1): pred (1,2) fits both answers, pred (0,1) only the first
    assert one(gold2, pred2, rule="O(0,1)", counting="one-to-one").overall == (2, 0, 0)
    assert one(gold2, pred2, rule="O(0,1)", counting="any").overall == (2, 0, 0)
    assert one(gold2, pred2, rule="E", counting="any").overall == (1, 1, 1)


def test_symmetric_alignment_across_labels() -> None:
    """Slot errors: a pair of relations with different labels aligns in the swapped
    orientation when either label is symmetric (the answer's or the prediction's)."""
    toks = [("a", "b", "c", "d", "e")]
    for ref, pred in ([("r", ("A", 0, 1), ("B", 3, 4))], [("s", ("B", 3, 4), ("A", 0, 1))]), \
                     ([("s", ("A", 0, 1), ("B", 3, 4))], [("r", ("B", 3, 4), ("A", 0, 1))]):
        want = rr.evaluate_relations([(ref, pred)], symmetric=("r",))
        assert want.slot == (0, 1, 0, 0)
        assert rr.evaluate_relations([(ref, pred)], symmetric=("t",)).slot == (0, 0, 1, 1)
        gold, prd = relation_docs(toks, [(ref, pred)])
        o = iescore.score(reference=gold, prediction=prd, task="relations", symmetric=("r",)).overall
        assert (o.C, o.S, o.D, o.I) == want.slot


def test_reference_slot_alignment() -> None:
    # correct pairs first: the answer aligns with the correct prediction, the other is inserted
    gold = [("r", ("A", 0, 2), ("B", 4, 5))]
    pred = [("s", ("A", 0, 2), ("B", 4, 5)), ("r", ("A", 1, 2), ("B", 4, 5))]
    assert one(gold, pred, rule="O(0,1)").slot == (1, 0, 0, 1)
    assert one(gold, pred, rule="E").slot == (0, 1, 0, 1)
    # then as many pairs as possible
    gold = [("r", ("A", 0, 2), ("B", 4, 5)), ("s", ("A", 1, 3), ("B", 4, 6))]
    pred = [("s", ("A", 1, 2), ("B", 4, 5))]
    assert one(gold, pred).slot == (0, 1, 1, 0)
    # per label: the same-label answer takes the substitution, the other is deleted
    assert rr.relation_slot_tallies([(gold, pred)]) == {frozenset({(("s", "S"), 1), (("r", "D"), 1)})}
    assert rr.relation_slot_tallies([(gold, pred)], rule="O(inf,inf)") == {frozenset({(("s", "C"), 1), (("r", "D"), 1)})}
    # two equally good alignments: either answer may take the prediction
    gold = [("r", ("A", 0, 2), ("B", 4, 5)), ("s", ("A", 0, 2), ("B", 4, 5))]
    pred = [("t", ("A", 0, 2), ("B", 4, 5))]
    assert rr.relation_slot_tallies([(gold, pred)]) == {
        frozenset({(("r", "S"), 1), (("s", "D"), 1)}), frozenset({(("s", "S"), 1), (("r", "D"), 1)})}


def test_reference_links() -> None:
    gold = [(("PER", 0, 2), "Q1"), (("ORG", 4, 5), "NIL")]
    pred = [(("ORG", 0, 1), "Q1"), (("ORG", 4, 5), "NIL"), (("PER", 6, 7), "NIL")]
    assert rr.evaluate_links([(gold, pred)], rule="E").overall == (1, 2, 1)
    weak = rr.evaluate_links([(gold, pred)], rule="O(inf,inf)")
    assert weak.overall == (2, 1, 0)
    assert weak.per_label == {"ORG": (0, 0, 0), "PER": (0, 1, 0)}  # fp, fn rows only
    assert weak.slot == (2, 0, 0, 1)
    typed = rr.evaluate_links([(gold, pred)], rule="O(inf,inf)", link_types=True)
    assert typed.overall == (1, 2, 1)
    assert typed.per_label == {"ORG": (1, 1, 0), "PER": (0, 1, 1)}
    assert rr.evaluate_links([(gold, pred)], rule="O(inf,inf)", nil="ignore").overall == (1, 0, 0)
    assert rr.evaluate_links([(gold, pred)], rule="E", nil="ignore").overall == (0, 1, 1)


def test_reference_text_relations() -> None:
    # De Sitter's Ex. 7 fillers as the heads of one relation label
    gold = [("talk", ("Al", "Roth"), ("M",)), ("talk", ("Ido", "Erev"), ("M",))]
    pred = [("talk", ("Al", "Roth"), ("M",)), ("talk", ("Ido",), ("M",)), ("talk", ("Cristina", "Bicchieri"), ("M",)),
            ("talk", ("Al", "Roth"), ("M",))]  # a repeated record counts once
    assert rr.evaluate_text_relations([(gold, pred)], rule="E").overall == (1, 2, 1)
    assert rr.evaluate_text_relations([(gold, pred)], rule="O(1,2)").overall == (2, 1, 0)
    sym = [("talk", ("M",), ("Al", "Roth"))]
    assert rr.evaluate_text_relations([(gold, sym)]).overall == (0, 1, 2)
    assert rr.evaluate_text_relations([(gold, sym)], symmetric=("talk",)).overall == (1, 0, 1)
    # a symmetric label's two orientations are one record
    both = [("talk", ("Al", "Roth"), ("M",)), ("talk", ("M",), ("Al", "Roth"))]
    assert rr.evaluate_text_relations([(gold, both)]).overall == (1, 1, 1)
    assert rr.evaluate_text_relations([(gold, both)], symmetric=("talk",)).overall == (1, 0, 1)
    # records of documents carry their arguments' labels, compared unless arg_labels=False
    toks = ("a", "b", "c", "d")
    g3 = rr.document_records(toks, [("r", ("A", 0, 1), ("B", 2, 3))])
    p3 = rr.document_records(toks, [("r", ("A", 0, 1), ("B", 2, 3)), ("r", ("B", 0, 1), ("B", 2, 3))])
    assert g3 == [("r", ("a",), ("c",), "A", "B")]
    assert rr.evaluate_text_relations([(g3, p3)]).overall == (1, 1, 0)
    assert rr.evaluate_text_relations([(g3, p3)], arg_labels=False).overall == (1, 0, 0)  # one record
    # slot errors: records align when head shares tokens with head and tail with tail
    g4 = [("r", ("a", "b"), ("c",))]
    assert rr.evaluate_text_relations([(g4, [("s", ("b",), ("c",))])]).slot == (0, 1, 0, 0)
    assert rr.evaluate_text_relations([(g4, [("r", ("d",), ("c",))])]).slot == (0, 0, 1, 1)
    assert rr.evaluate_text_relations([(g4, [("r", ("c",), ("a", "b"))])]).slot == (0, 0, 1, 1)
    assert rr.evaluate_text_relations([(g4, [("r", ("c",), ("a", "b"))])], symmetric=("r",)).slot == (1, 0, 0, 0)
    # the overlap rule's suffix/prefix case: "b c" against "a b", one extra and one missing
    g2 = [("r", ("a", "b"), ("t",))]
    p2 = [("r", ("b", "c"), ("t",))]
    assert rr.evaluate_text_relations([(g2, p2)], rule="O(1,1)").overall == (1, 0, 0)
    assert rr.evaluate_text_relations([(g2, p2)], rule="O(0,1)").overall == (0, 1, 1)


# --- random corpora --------------------------------------------------------------------------

def rand_span(rng: random.Random, n: int, labels: Sequence[str] = ARG_LABELS) -> tuple[str, int, int]:
    s = rng.randrange(n)
    e = min(n, s + rng.choice((1, 1, 2, 2, 3)))
    return rng.choice(labels), s, e


def nudge(rng: random.Random, sp: tuple[str, int, int], n: int, labels: Sequence[str] = ARG_LABELS) -> tuple[str, int, int]:
    """A copy of a span, its boundaries moved by one now and then, its label changed rarely."""
    lab, s, e = sp
    if rng.random() < 0.3:
        s = min(max(0, s + rng.choice((-1, 1))), e - 1)
    if rng.random() < 0.3:
        e = max(min(n, e + rng.choice((-1, 1))), s + 1)
    if rng.random() < 0.15:
        lab = rng.choice(labels)
    return lab, s, e


def rand_relations(rng: random.Random, max_docs: int = 3) -> tuple[list[tuple[str, ...]], list]:
    """Documents' tokens and (reference, prediction) relations: predictions mostly
    perturbed answers (arguments moved, swapped, relabelled), some random."""
    toks, corpus = [], []
    for _ in range(rng.randint(1, max_docs)):
        n = rng.randint(3, 8)
        toks.append(tuple(rng.choice(VOCAB) for _ in range(n)))
        ref = [(rng.choice(REL_LABELS), rand_span(rng, n), rand_span(rng, n)) for _ in range(rng.randint(0, 4))]
        pred = []
        for lab, h, t in ref:
            if rng.random() < 0.75:
                h2, t2 = nudge(rng, h, n), nudge(rng, t, n)
                if rng.random() < 0.25:
                    h2, t2 = t2, h2
                if rng.random() < 0.15:
                    lab = rng.choice(REL_LABELS)
                pred.append((lab, h2, t2))
        pred += [(rng.choice(REL_LABELS), rand_span(rng, n), rand_span(rng, n)) for _ in range(rng.randint(0, 2))]
        rng.shuffle(pred)
        corpus.append((ref, pred[:5]))
    return toks, corpus


def relation_docs(toks: list, corpus: list) -> tuple[list[Document], list[Document]]:
    def doc(k: int, rels: list) -> Document:
        return Document(f"d{k}", toks[k], relations=tuple(Relation(lab, Span(*h), Span(*t)) for lab, h, t in rels))

    return [doc(k, ref) for k, (ref, _) in enumerate(corpus)], [doc(k, pred) for k, (_, pred) in enumerate(corpus)]


def rand_links(rng: random.Random, max_docs: int = 3) -> tuple[list[tuple[str, ...]], list]:
    ids = ("Q1", "Q2", "NIL")
    toks, corpus = [], []
    for _ in range(rng.randint(1, max_docs)):
        n = rng.randint(3, 8)
        toks.append(tuple(rng.choice(VOCAB) for _ in range(n)))
        ref = [(rand_span(rng, n), rng.choice(ids)) for _ in range(rng.randint(0, 4))]
        pred = []
        for sp, kb in ref:
            if rng.random() < 0.75:
                pred.append((nudge(rng, sp, n), rng.choice(ids) if rng.random() < 0.2 else kb))
        pred += [(rand_span(rng, n), rng.choice(ids)) for _ in range(rng.randint(0, 2))]
        rng.shuffle(pred)
        corpus.append((ref, pred[:5]))
    return toks, corpus


def link_docs(toks: list, corpus: list) -> tuple[list[Document], list[Document]]:
    def doc(k: int, links: list) -> Document:
        return Document(f"d{k}", toks[k], links=tuple(Link(Span(*sp), kb) for sp, kb in links))

    return [doc(k, ref) for k, (ref, _) in enumerate(corpus)], [doc(k, pred) for k, (_, pred) in enumerate(corpus)]


def rand_text_relations(rng: random.Random, max_docs: int = 3) -> list:
    def seq() -> tuple[str, ...]:
        return tuple(rng.choice(VOCAB) for _ in range(rng.randint(1, 3)))

    def vary(s: tuple[str, ...]) -> tuple[str, ...]:
        r = rng.random()
        if r < 0.2 and len(s) > 1:
            return s[1:]
        if r < 0.4:
            return s + (rng.choice(VOCAB),)
        if r < 0.5:
            return (rng.choice(VOCAB),) + s
        return s

    corpus = []
    for _ in range(rng.randint(1, max_docs)):
        ref = [(rng.choice(REL_LABELS), seq(), seq()) for _ in range(rng.randint(0, 4))]
        pred = []
        for lab, h, t in ref:
            if rng.random() < 0.75:
                h2, t2 = vary(h), vary(t)
                pred.append((lab, t2, h2) if rng.random() < 0.25 else (lab, h2, t2))
        pred += [(rng.choice(REL_LABELS), seq(), seq()) for _ in range(rng.randint(0, 2))]
        for side in (ref, pred):  # now and then a record again, or in the other order
            if side and rng.random() < 0.3:
                lab, h, t = rng.choice(side)
                side.append((lab, t, h) if rng.random() < 0.7 else (lab, h, t))
        corpus.append((ref[:5], pred[:5]))
    return corpus


def templates(corpus: list) -> tuple[list[Template], list[Template]]:
    def tpl(k: int, rels: list) -> Template:
        return Template(f"d{k}", {}, relations=tuple(TextRelation(*r) for r in rels))

    return [tpl(k, ref) for k, (ref, _) in enumerate(corpus)], [tpl(k, pred) for k, (_, pred) in enumerate(corpus)]


# --- the comparison --------------------------------------------------------------------------

def differences(report: iescore.Report, want: rr.Result) -> list[str]:
    """What the report says that the reference does not (empty when they agree)."""
    out = []
    o = report.overall
    rows = list(report.per_label.values())
    for k in ("tp", "fp", "fn", "C", "S", "D", "I"):
        if sum(getattr(r, k) for r in rows) != getattr(o, k):
            out.append(f"the rows' {k} do not sum to the overall {k}")
    if (o.tp, o.fp, o.fn) != want.overall:
        out.append(f"overall tp/fp/fn {(o.tp, o.fp, o.fn)} != {want.overall}")
    if want.slot is not None and (o.C, o.S, o.D, o.I) != want.slot:
        out.append(f"overall C/S/D/I {(o.C, o.S, o.D, o.I)} != {want.slot}")
    for lab, keys in want.defined.items():
        row = report.per_label.get(lab)
        got = tuple(getattr(row, k) if row is not None else 0 for k in keys)
        exp = tuple(want.per_label[lab][("tp", "fp", "fn").index(k)] for k in keys)
        if got != exp:
            out.append(f"label {lab} {'/'.join(keys)} {got} != {exp}")
    for lab, row in report.per_label.items():
        if lab not in want.per_label and (row.tp, row.fp, row.fn) != (0, 0, 0):
            out.append(f"label {lab} in the report only: {(row.tp, row.fp, row.fn)}")
    return out


def any_statuses(report: iescore.Report, corpus: list, cfg: dict[str, Any]) -> list[str]:
    """Any-match, item by item: a prediction is a true positive when it matches an answer
    of its document, an answer is found when a prediction matches it."""
    R = rr.parse_rule(cfg["rule"])
    out = []
    for k, side in enumerate(("reference", "prediction")):
        for it in report.items(side):
            rel = as_rel(it)
            others = corpus[int(it["doc"][1:])][1 - k]
            hit = any(rr.rel_ok(R, cfg["arg_labels"], cfg["symmetric"], *((rel, o) if k == 0 else (o, rel)))
                      for o in others)
            if it["status"] != ("TP" if hit else ("FN" if k == 0 else "FP")):
                out.append(f"{side} {it['doc']} {rel}: {it['status']}")
    return out


def relation_grid() -> list[dict[str, Any]]:
    return [dict(rule=r, counting=c, arg_labels=a, symmetric=s)
            for r, c, a, s in itertools.product(RULES, ("any", "one-to-one"), (True, False), ((), ("r",)))]


N_RELATION = 20  # random corpora per configuration of the grid (48 configurations)
N_OTHER = 30  # random corpora per configuration of the links' and OBD grids


@pytest.mark.parametrize("cfg", relation_grid(), ids=lambda c: "-".join(f"{v}" for v in c.values()))
def test_relations_equal_reference(cfg: dict[str, Any]) -> None:
    rng = random.Random(f"rel-{sorted(cfg.items())}")
    for k in range(N_RELATION):
        toks, corpus = rand_relations(rng)
        gold, pred = relation_docs(toks, corpus)
        report = iescore.score(reference=gold, prediction=pred, task="relations", **cfg)
        diff = differences(report, rr.evaluate_relations(corpus, **cfg))
        tally = frozenset(((lab, k), getattr(row, k)) for lab, row in report.per_label.items()
                          for k in ("C", "S", "D", "I") if getattr(row, k))
        if tally not in rr.relation_slot_tallies(corpus, **{k: v for k, v in cfg.items() if k != "counting"}):
            diff.append(f"per-label C/S/D/I {sorted(tally)} is no optimal alignment's")
        if cfg["counting"] == "any":
            diff += any_statuses(report, corpus, cfg)
        assert not diff, f"corpus #{k} {corpus}: {diff}"


@pytest.mark.parametrize("rule,counting,link_types,nil",
                         list(itertools.product(("E", "O(inf,inf)"), ("any", "one-to-one"), (False, True),
                                                ("keep", "ignore"))))
def test_links_equal_reference(rule: str, counting: str, link_types: bool, nil: str) -> None:
    cfg = dict(rule=rule, counting=counting, link_types=link_types, nil=nil)
    rng = random.Random(f"link-{sorted(cfg.items())}")
    for k in range(N_OTHER):
        toks, corpus = rand_links(rng)
        gold, pred = link_docs(toks, corpus)
        report = iescore.score(reference=gold, prediction=pred, task="links", **cfg)
        diff = differences(report, rr.evaluate_links(corpus, **cfg))
        if counting == "any":  # item by item
            R = rr.parse_rule(rule)
            for side, k, miss in (("reference", 0, "FN"), ("prediction", 1, "FP")):
                for it in report.items(side):
                    x = ((it["label"], it["start"], it["end"]), it["id"])
                    others = [o for o in corpus[int(it["doc"][1:])][1 - k] if nil == "keep" or o[1] != "NIL"]
                    hit = any(rr.link_ok(R, link_types, *((x, o) if k == 0 else (o, x))) for o in others)
                    if it["status"] != ("TP" if hit else miss):
                        diff.append(f"{side} {it['doc']} {x}: {it['status']}")
        if counting == "one-to-one":  # a matched pair counts in its answer's row
            kept = [x for ref, _ in corpus for x in ref if nil == "keep" or x[1] != "NIL"]
            for t, row in report.per_label.items():
                if row.tp + row.fn != sum(x[0][0] == t for x in kept):
                    diff.append(f"type {t}: tp + fn = {row.tp + row.fn}, not its answers")
        assert not diff, f"corpus #{k} {corpus}: {diff}"


@pytest.mark.parametrize("rule,counting,symmetric",
                         list(itertools.product(SEQ_RULES, ("any", "one-to-one"), ((), ("r",)))))
def test_text_relations_equal_reference(rule: str, counting: str, symmetric: tuple[str, ...]) -> None:
    cfg = dict(rule=rule, counting=counting, symmetric=symmetric)
    rng = random.Random(f"obd-{sorted(cfg.items())}")
    for k in range(N_OTHER):
        corpus = rand_text_relations(rng)
        gold, pred = templates(corpus)
        report = iescore.score_templates(reference=gold, prediction=pred, task="relations", **cfg)
        diff = differences(report, rr.evaluate_text_relations(corpus, **cfg))
        assert not diff, f"corpus #{k} {corpus}: {diff}"


def label_twins(records: tuple[list[rr.LRec], ...], symmetric: tuple[str, ...]) -> bool:
    """Has a side two records that differ only in their arguments' labels?"""
    return any(len({rr.record(r, symmetric, False) for r in recs}) < len({rr.record(r, symmetric, True) for r in recs})
               for recs in records)


@pytest.mark.parametrize("rule,counting,arg_labels,symmetric",
                         list(itertools.product(SEQ_RULES, ("any", "one-to-one"), (True, False), ((), ("r",)))))
def test_document_relations_obd_equal_reference(rule: str, counting: str, arg_labels: bool,
                                                symmetric: tuple[str, ...]) -> None:
    """Relations of documents scored position-free (setting OBD): records of their
    arguments' tokens and labels."""
    cfg = dict(rule=rule, counting=counting, arg_labels=arg_labels, symmetric=symmetric)
    rng = random.Random(f"docobd-{sorted(cfg.items())}")
    done = 0
    while done < N_OTHER:
        toks, corpus = rand_relations(rng)
        records = [(rr.document_records(tk, ref), rr.document_records(tk, pred)) for tk, (ref, pred) in zip(toks, corpus)]
        if not arg_labels and any(label_twins(pair, symmetric) for pair in records):
            continue  # test_document_relations_obd_label_twins
        gold, pred = relation_docs(toks, corpus)
        report = iescore.score(reference=gold, prediction=pred, task="relations", setting="OBD", **cfg)
        want = rr.evaluate_text_relations(records, **cfg)
        diff = differences(report, want)
        assert not diff, f"corpus {corpus}: {diff}"
        done += 1


@pytest.mark.parametrize("counting", ["any", "one-to-one"])
def test_document_relations_obd_label_twins(counting: str) -> None:
    toks = ("a", "b", "c", "d")
    gold = [Document("d", toks, relations=(Relation("r", Span("A", 0, 1), Span("B", 2, 3)),))]
    pred = [Document("d", toks, relations=(Relation("r", Span("A", 0, 1), Span("B", 2, 3)),
                                           Relation("r", Span("B", 0, 1), Span("B", 2, 3))))]
    o = iescore.score(reference=gold, prediction=pred, task="relations", setting="OBD", arg_labels=False,
                      counting=counting).overall
    assert (o.tp, o.fp, o.fn) == (1, 0, 0)  # one record "r(a, c)": the labels are not compared


@pytest.mark.parametrize("counting", ["any", "one-to-one"])
def test_rule_identities(counting: str) -> None:
    """On the arguments as on spans: IoU(1) = E, cover(1) = C(inf), C(0) = E, O(e,0) = C(e)."""
    rng = random.Random(f"identities-{counting}")
    for _ in range(20):
        toks, corpus = rand_relations(rng)
        gold, pred = relation_docs(toks, corpus)

        def counts(rule: str, gold: list[Document] = gold, pred: list[Document] = pred) -> tuple[int, ...]:
            o = iescore.score(reference=gold, prediction=pred, task="relations", rule=rule, counting=counting).overall
            return o.tp, o.fp, o.fn, o.C, o.S, o.D, o.I

        assert counts("IoU(1)") == counts("E") == counts("C(0)")
        assert counts("cover(1)") == counts("C(inf)") == counts("O(inf,0)")
        assert counts("O(1,0)") == counts("C(1)")


@pytest.mark.parametrize("counting", ["any", "one-to-one"])
def test_named_settings_order(counting: str) -> None:
    """relaxed finds at least strict's true positives, and so does boundaries."""
    rng = random.Random(f"settings-{counting}")
    settings = iescore.RELATION_SETTINGS
    for _ in range(40):
        toks, corpus = rand_relations(rng)
        gold, pred = relation_docs(toks, corpus)
        tp = {name: iescore.score(reference=gold, prediction=pred, task="relations", counting=counting,
                                  **opts).overall.tp
              for name, opts in settings.items()}
        want = {name: rr.evaluate_relations(corpus, counting=counting, **opts).overall[0]
                for name, opts in settings.items()}
        assert tp == want
        assert tp["relaxed"] >= tp["strict"] and tp["boundaries"] >= tp["strict"]


def as_rel(item: dict[str, Any]) -> rr.Rel:
    """A relation item of ``Report.items`` as the reference's tuple."""
    def arg(x: dict[str, Any]) -> rr.Arg:
        return x["label"], x["start"], x["end"]

    return item["label"], arg(item["head"]), arg(item["tail"])


def matching_quality(report: iescore.Report, cfg: dict[str, Any]) -> tuple[int, ...]:
    """(pairs, exact pairs, -boundary error) of the best matching of each cell's
    true-positive answers with its true-positive predictions, summed: the matching behind
    one-to-one counts, whichever the library took among the optimal ones. Every
    true-positive item must be in it."""
    R = rr.parse_rule(cfg["rule"])

    def ok(a: rr.Rel, p: rr.Rel) -> bool:
        return rr.rel_ok(R, cfg["arg_labels"], cfg["symmetric"], a, p)

    def weight(a: rr.Rel, p: rr.Rel) -> tuple[int, int, int]:
        return (1, *rr.rel_quality(R, cfg["arg_labels"], cfg["symmetric"], a, p))

    cells: dict[tuple[str, str], tuple[list[rr.Rel], list[rr.Rel]]] = {}
    for k, side in enumerate(("reference", "prediction")):
        for it in report.items(side):
            if it["status"] == "TP":
                cells.setdefault((it["doc"], it["label"]), ([], []))[k].append(as_rel(it))
    total = (0, 0, 0)
    for key, (a, p) in cells.items():
        w, _ = rr.best_matchings(len(a), len(p), rr.pairs_of(a, p, ok, weight))
        assert w and w[0] == len(a) == len(p), f"{key}: true positives {a} and {p} do not match one to one"
        total = tuple(x + y for x, y in zip(total, w))
    return total


def optimum(corpus: list, cfg: dict[str, Any]) -> tuple[int, ...]:
    """(pairs, exact pairs, -boundary error) of the best one-to-one matchings, summed over
    the cells."""
    R = rr.parse_rule(cfg["rule"])

    def ok(a: rr.Rel, p: rr.Rel) -> bool:
        return rr.rel_ok(R, cfg["arg_labels"], cfg["symmetric"], a, p)

    def weight(a: rr.Rel, p: rr.Rel) -> tuple[int, int, int]:
        return (1, *rr.rel_quality(R, cfg["arg_labels"], cfg["symmetric"], a, p))

    want = (0, 0, 0)
    for ref, prd in corpus:
        for lab in REL_LABELS:
            a = [x for x in ref if x[0] == lab]
            p = [x for x in prd if x[0] == lab]
            w, _ = rr.best_matchings(len(a), len(p), rr.pairs_of(a, p, ok, weight))
            want = tuple(x + y for x, y in zip(want, w)) if w else want
    return want


@pytest.mark.parametrize("rule", ["C(1)", "O(1,1)", "O(inf,inf)", "IoU(0.5)", "cover(0.5)"])
def test_one_to_one_matching_is_optimal(rule: str) -> None:
    """The matching behind one-to-one counts has the most pairs, then the most exact
    pairs, then the least boundary error (per document and relation label)."""
    rng = random.Random(f"optimal-{rule}")
    for k in range(60):
        cfg = dict(rule=rule, counting="one-to-one", arg_labels=rng.random() < 0.5,
                   symmetric=("r",) if rng.random() < 0.5 else ())
        toks, corpus = rand_relations(rng)
        gold, pred = relation_docs(toks, corpus)
        report = iescore.score(reference=gold, prediction=pred, task="relations", **cfg)
        want = optimum(corpus, cfg)
        assert matching_quality(report, cfg) == want, f"corpus #{k} {cfg} {corpus}"


@pytest.mark.parametrize("counting", ["any", "one-to-one"])
def test_link_settings_order(counting: str) -> None:
    """weak finds at least strong's true positives; typed links at most untyped ones'."""
    rng = random.Random(f"link-settings-{counting}")
    for _ in range(40):
        toks, corpus = rand_links(rng)
        gold, pred = link_docs(toks, corpus)
        tp = {(name, typed): iescore.score(reference=gold, prediction=pred, task="links", counting=counting,
                                           link_types=typed, **opts).overall.tp
              for name, opts in iescore.LINK_SETTINGS.items() for typed in (False, True)}
        want = {(name, typed): rr.evaluate_links(corpus, counting=counting, link_types=typed, **opts).overall[0]
                for name, opts in iescore.LINK_SETTINGS.items() for typed in (False, True)}
        assert tp == want
        for typed in (False, True):
            assert tp[("weak", typed)] >= tp[("strong", typed)]
        for name in iescore.LINK_SETTINGS:
            assert tp[(name, False)] >= tp[(name, True)]


def consistent_items(report: iescore.Report, cfg: dict[str, Any]) -> list[str]:
    """Under one-to-one counting TP = C item by item: an answer is a true positive exactly
    when it is aligned with a prediction within the rule, which is a true positive too.
    The answers for which that fails."""
    R = rr.parse_rule(cfg.get("rule", "E"))
    preds = list(report.items("prediction"))
    out = []
    for it in report.items("reference"):
        partner = None if it["partner"] is None else preds[it["partner"]["index"]]
        good = partner is not None and rr.rel_ok(R, cfg.get("arg_labels", True), cfg.get("symmetric", ()),
                                                 as_rel(it), as_rel(partner))
        if (it["status"] == "TP") != good or (good and partner is not None and partner["status"] != "TP"):
            out.append(f"{it['text']}: {it['status']}, {it['category']}, aligned with "
                       f"{partner and (partner['text'], partner['status'])}")
    return out


# an answer and its exact copy vs a prediction a token longer, equal overlap (C(1));
# two answers at equal boundary error from the prediction, one overlapping it more (O(inf,inf))
TIES = [
    ("C(1)", [("r", ("A", 2, 3), ("B", 3, 4))], [("r", ("A", 1, 3), ("B", 3, 4)), ("r", ("A", 2, 3), ("B", 3, 4))]),
    ("O(inf,inf)", [("r", ("A", 0, 1), ("A", 1, 2)), ("r", ("A", 1, 3), ("A", 1, 3))], [("r", ("A", 0, 2), ("A", 1, 3))]),
]


@pytest.mark.parametrize("rule,ref,pred", TIES)
def test_true_positives_are_the_aligned_correct_pairs(rule: str, ref: list, pred: list) -> None:
    gold, prd = relation_docs([("a", "b", "c", "d", "e")], [(ref, pred)])
    report = iescore.score(reference=gold, prediction=prd, task="relations", rule=rule, counting="one-to-one")
    assert consistent_items(report, {"rule": rule}) == []
