"""SemEval-2013 scenarios against nervaluate 1.2.1 on random spans where no item overlaps
two or more items of the other side, and a hand-computed case where one does."""

from __future__ import annotations

import random

import pytest

import iescore
from iescore import Document, Span

nervaluate = pytest.importorskip("nervaluate")

LABELS = ("PER", "LOC", "ORG")
SCEN = {"strict": "strict", "exact": "exact", "partial": "partial", "type": "ent_type"}


def _side(rng: random.Random, n: int) -> list[tuple[str, int, int]]:
    out: set[tuple[str, int, int]] = set()
    for _ in range(rng.randint(0, 5)):
        start = rng.randrange(n)
        out.add((rng.choice(LABELS), start, min(n, start + rng.randint(1, 4))))
    return sorted(out, key=lambda t: (t[1], t[2], t[0]))


def _overlaps(a: tuple[str, int, int], b: tuple[str, int, int]) -> bool:
    return a[1] < b[2] and b[1] < a[2]


def _one_partner_at_most(ref: list, pred: list) -> bool:
    return all(sum(_overlaps(x, y) for y in other) <= 1 for side, other in ((ref, pred), (pred, ref)) for x in side)


def _documents(seed: int, n_docs: int) -> tuple[list, list]:
    rng = random.Random(seed)
    refs, preds = [], []
    while len(refs) < n_docs:
        n = rng.randint(1, 25)
        ref, pred = _side(rng, n), _side(rng, n)
        if _one_partner_at_most(ref, pred):
            refs.append((n, ref))
            preds.append((n, pred))
    return refs, preds


def _iescore(refs: list, preds: list) -> dict:
    def docs(side: list) -> list[Document]:
        return [Document(id=f"d{k}", tokens=[f"t{i}" for i in range(n)], spans=[Span(*s) for s in spans])
                for k, (n, spans) in enumerate(side)]

    return iescore.score(reference=docs(refs), prediction=docs(preds)).to_dict()["semeval"]


def _nervaluate(refs: list, preds: list) -> dict:
    def dicts(side: list) -> list[list[dict]]:
        return [[{"label": lab, "start": s, "end": e - 1} for lab, s, e in spans] for _, spans in side]

    return nervaluate.Evaluator(dicts(refs), dicts(preds), tags=list(LABELS), loader="dict").evaluate()


def _same(ours: dict, theirs) -> None:
    for code, attr in (("COR", "correct"), ("INC", "incorrect"), ("PAR", "partial"), ("MIS", "missed"),
                       ("SPU", "spurious"), ("POS", "possible"), ("ACT", "actual")):
        assert ours[code] == getattr(theirs, attr), code
    for k in ("precision", "recall", "f1"):
        assert (ours[k] or 0.0) == pytest.approx(getattr(theirs, k), rel=1e-12, abs=1e-15), k


@pytest.mark.parametrize("seed", range(40))
def test_equal_to_nervaluate_where_no_item_overlaps_two(seed: int) -> None:
    refs, preds = _documents(seed, 30)
    ours, theirs = _iescore(refs, preds), _nervaluate(refs, preds)
    for scen, name in SCEN.items():
        _same(ours[scen], theirs["overall"][name])
    for label, per in theirs["entities"].items():
        for scen, name in SCEN.items():
            _same(ours["per_label"][label][scen], per[name])


def _flat_side(rng: random.Random, n: int) -> list[tuple[str, int, int]]:
    """Items of one side that never overlap one another (as tags give them)."""
    out, i = [], 0
    while i < n:
        if rng.random() < 0.4:
            end = min(n, i + rng.randint(1, 4))
            out.append((rng.choice(LABELS), i, end))
            i = end + (rng.random() < 0.5)
        else:
            i += 1
    return out


@pytest.mark.parametrize("seed", range(40))
def test_flat_sides_strict_exact_partial_equal_everywhere(seed: int) -> None:
    """Where neither side has overlapping items, the overall strict, exact and partial
    counts equal nervaluate's even where an item overlaps two of the other side (both
    pair as many overlapping items as can be paired); type and the per-label counts may
    differ there (Concepts: measures)."""
    rng = random.Random(seed)
    docs = [(n, _flat_side(rng, n), _flat_side(rng, n)) for n in (rng.randint(1, 25) for _ in range(30))]
    refs, preds = [(n, r) for n, r, _ in docs], [(n, p) for n, _, p in docs]
    ours, theirs = _iescore(refs, preds), _nervaluate(refs, preds)
    for scen in ("strict", "exact", "partial"):
        _same(ours[scen], theirs["overall"][scen])


def test_random_cases_hold_every_kind_of_pair() -> None:
    """The random documents do reach wrong labels, wrong boundaries and both."""
    refs, preds = _documents(0, 200)
    s = _iescore(refs, preds)
    assert s["strict"]["INC"] > s["exact"]["INC"] > 0
    assert s["partial"]["PAR"] > 0 and s["type"]["INC"] > 0 and s["strict"]["COR"] > 0


def test_an_item_overlapping_two_the_alignment_decides() -> None:
    """Answer PER [0, 3) against predictions ORG [0, 3) and PER [0, 2), both overlapping it.
    nervaluate takes the predictions in list order and gives the answer to the first one
    that fits its scenario: ORG [0, 3) (strict INC, exact COR, partial COR, type INC),
    PER [0, 2) then spurious. The alignment pairs the answer with the prediction of its own
    label, PER [0, 2) (it ranks same-label pairs before overlapping tokens), in every
    scenario: a wrong boundary (strict INC, exact INC, partial PAR, type COR), and
    ORG [0, 3) is spurious."""
    tokens = ["a", "b", "c"]
    ref = [Document(id="d", tokens=tokens, spans=[Span("PER", 0, 3)])]
    pred = [Document(id="d", tokens=tokens, spans=[Span("ORG", 0, 3), Span("PER", 0, 2)])]
    ours = iescore.score(reference=ref, prediction=pred).to_dict()["semeval"]
    theirs = nervaluate.Evaluator([[{"label": "PER", "start": 0, "end": 2}]],
                                  [[{"label": "ORG", "start": 0, "end": 2}, {"label": "PER", "start": 0, "end": 1}]],
                                  tags=["PER", "ORG"], loader="dict").evaluate()["overall"]
    codes = ("COR", "INC", "PAR", "MIS", "SPU")
    expected_ours = {"strict": (0, 1, 0, 0, 1), "exact": (0, 1, 0, 0, 1), "partial": (0, 0, 1, 0, 1),
                     "type": (1, 0, 0, 0, 1)}
    expected_theirs = {"strict": (0, 1, 0, 0, 1), "exact": (1, 0, 0, 0, 1), "partial": (1, 0, 0, 0, 1),
                       "type": (0, 1, 0, 0, 1)}
    for scen, name in SCEN.items():
        assert tuple(ours[scen][c] for c in codes) == expected_ours[scen]
        t = theirs[name]
        assert (t.correct, t.incorrect, t.partial, t.missed, t.spurious) == expected_theirs[scen]


def test_partial_precision_by_hand() -> None:
    """Answers PER [0, 2), LOC [3, 4); predictions ORG [1, 2) (overlapping PER) and
    LOC [3, 4): partial COR 1 (LOC), PAR 1, so P = R = (1 + 0.5) / 2 = 0.75; per label PER:
    its answer alone, missed (ORG is another label)."""
    tokens = list("abcd")
    ref = [Document(id="d", tokens=tokens, spans=[Span("PER", 0, 2), Span("LOC", 3, 4)])]
    pred = [Document(id="d", tokens=tokens, spans=[Span("ORG", 1, 2), Span("LOC", 3, 4)])]
    s = iescore.score(reference=ref, prediction=pred).to_dict()["semeval"]
    assert (s["partial"]["COR"], s["partial"]["PAR"], s["partial"]["precision"], s["partial"]["f1"]) == (1, 1, 0.75, 0.75)
    assert (s["strict"]["precision"], s["type"]["recall"]) == (0.5, 0.5)
    assert (s["per_label"]["PER"]["partial"]["MIS"], s["per_label"]["PER"]["partial"]["recall"]) == (1, 0.0)
    assert s["per_label"]["ORG"]["strict"] == {"COR": 0, "INC": 0, "PAR": 0, "MIS": 0, "SPU": 1, "POS": 0,
                                              "ACT": 1, "precision": 0.0, "recall": None, "f1": 0.0}


def test_no_alignment_no_scenarios() -> None:
    r = iescore.score_tags(reference=[["B-PER", "O"]], prediction=[["B-PER", "O"]], detail="prf")
    assert r.to_dict()["semeval"] is None


def test_semeval_rows_by_hand() -> None:
    """The tabular view: the partial case above, overall then per label."""
    from iescore.render.flat import semeval_rows

    tokens = list("abcd")
    ref = [Document(id="d", tokens=tokens, spans=[Span("PER", 0, 2), Span("LOC", 3, 4)])]
    pred = [Document(id="d", tokens=tokens, spans=[Span("ORG", 1, 2), Span("LOC", 3, 4)])]
    rows = semeval_rows(iescore.score(reference=ref, prediction=pred))
    assert rows[0][:3] == ["scenario", "label", "COR"] and len(rows) == 1 + 4 * 4  # overall + 3 labels
    assert rows[1 + 2 * 4] == ["partial", "overall", 1, 0, 1, 0, 0, 2, 2, 0.75, 0.75, 0.75]
    assert rows[1 + 2 * 4 + 2] == ["partial", "ORG", 0, 0, 0, 0, 1, 0, 1, 0.0, "", 0.0]
