"""Agreement on every input the scorer reads (SPEC §13): brat, JSONL and LLM extractions
through ``iescore agree --input-format``, P/R/F1 both ways by hand, Cohen's kappa (overall and
per label) against sklearn, Krippendorff's alpha (missing values allowed) against the
``krippendorff`` package, on t-units written out by hand or built here from the tags."""

from __future__ import annotations

import json
from pathlib import Path

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

import iescore
from iescore import stats
from iescore.cli import main
from iescore.stats.agreement import agreement_scored
from iescore.stats.coefficients import krippendorff_alpha, label_alphas

FIX = Path(__file__).parent / "fixtures" / "agree"


def _agree(capsys, *argv):
    code = main(["agree", *argv, "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def _alpha(rows):
    """krippendorff's nominal alpha of rows of category names (None: missing)."""
    names = sorted({x for r in rows for x in r if x is not None})
    data = np.array([[np.nan if x is None else names.index(x) for x in r] for r in rows], dtype=float)
    return krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")


def _binary(rows, label):
    return [[None if x is None else x == label for x in r] for r in rows]


# brat, two annotators. doc1 "Ann Lee met Bob in Rome." (7 tokens, 6 separators),
# doc2 "Carl Dunn left Oslo today." (6 tokens, 5 separators); each document's tokens, then
# its separators (a separator is in a span when both its tokens are):
BRAT_A = ["PER", "PER", "O", "PER", "O", "LOC", "O"] + ["PER", "O", "O", "O", "O", "O"] \
    + ["PER", "PER", "O", "LOC", "O", "O"] + ["PER", "O", "O", "O", "O"]
BRAT_B = ["PER", "O", "O", "PER", "O", "ORG", "O"] + ["O"] * 6 \
    + ["PER", "PER", "O", "LOC", "MISC", "O"] + ["PER", "O", "O", "O", "O"]


def test_brat_two_annotators_f1_both_ways_and_kappas(capsys):
    d = _agree(capsys, str(FIX / "brat" / "a"), str(FIX / "brat" / "b"), "--input-format", "brat",
               "--level", "tokens", "--names", "A,B")
    p = d["pairs"][0]
    # A: Ann Lee, Bob, Rome (LOC) | Carl Dunn, Oslo; B: Ann, Bob, Rome (ORG) | Carl Dunn, Oslo, today.
    # exact: Bob, Carl Dunn, Oslo agree (3). A the reference: P 3/6, R 3/5; B the reference: P 3/5, R 3/6
    assert (p["precision_ab"], p["recall_ab"], p["precision_ba"], p["recall_ba"]) == (0.5, 0.6, 0.6, 0.5)
    assert p["f1_ab"] == p["f1_ba"] == p["f1"] == pytest.approx(6 / 11)
    assert d["t_units"] == p["t_units"] == 24 and d["unit"] == "tokens" and d["missing"] == 0
    assert p["kappa"] == pytest.approx(cohen_kappa_score(BRAT_A, BRAT_B), abs=1e-12)
    for label in ("LOC", "MISC", "ORG", "PER"):
        want = cohen_kappa_score([x == label for x in BRAT_A], [x == label for x in BRAT_B])
        assert d["per_label"][label]["kappa"] == pytest.approx(want, abs=1e-12), label
        assert p["per_label"][label]["kappa"] == d["per_label"][label]["kappa"]
        assert d["per_label"][label]["krippendorff_alpha"] == pytest.approx(
            _alpha(_binary([BRAT_A, BRAT_B], label)), abs=1e-12), label
    assert d["krippendorff_alpha"] == pytest.approx(_alpha([BRAT_A, BRAT_B]), abs=1e-12)
    # per-label F1: PER A {Ann Lee, Bob, Carl Dunn}, B {Ann, Bob, Carl Dunn}: 2 * 2 / 6
    assert p["per_label"]["PER"]["f1_ab"] == pytest.approx(2 / 3) and p["per_label"]["ORG"]["f1_ab"] == 0.0


# JSONL, three annotators, "Ann Lee met Bob Roe in Rome": tokens, then separators
JSONL = {
    "a": ["PER", "PER", "O", "PER", "PER", "O", "LOC"] + ["PER", "O", "O", "PER", "O", "O"],
    "b": ["PER", "PER", "O", "PER", "PER", "O", "LOC"] + ["O", "O", "O", "PER", "O", "O"],  # Ann, Lee apart
    "c": ["PER", "PER", "O", "O", "O", "O", "LOC"] + ["PER", "O", "O", "O", "O", "O"],  # no Bob Roe
}


def test_jsonl_three_annotators(capsys):
    files = [str(FIX / f"{n}.jsonl") for n in "abc"]
    d = _agree(capsys, *files, "--input-format", "jsonl", "--level", "tokens", "--names", "a,b,c")
    rows = {(p["a"], p["b"]): p for p in d["pairs"]}
    # a: Ann Lee, Bob Roe, Rome; b: Ann, Lee, Bob Roe, Rome; c: Ann Lee, Rome. exact, one-to-one:
    # a-b agree on 2 (P_ab 2/4, R_ab 2/3, F1 4/7); a-c on 2 (1, 2/3, 4/5); b-c on 1 (1/2, 1/4, 1/3)
    want = {("a", "b"): (2 / 4, 2 / 3, 4 / 7), ("a", "c"): (1.0, 2 / 3, 4 / 5), ("b", "c"): (1 / 2, 1 / 4, 1 / 3)}
    for (x, y), (prec, rec, f1) in want.items():
        p = rows[(x, y)]
        assert (p["precision_ab"], p["recall_ab"]) == pytest.approx((prec, rec))
        assert (p["precision_ba"], p["recall_ba"]) == pytest.approx((rec, prec))
        assert p["f1_ab"] == pytest.approx(f1) and p["f1_ba"] == pytest.approx(f1)
        assert p["kappa"] == pytest.approx(cohen_kappa_score(JSONL[x], JSONL[y]), abs=1e-12)
        for label in ("LOC", "PER"):
            bx, by = ([v == label for v in JSONL[z]] for z in (x, y))
            assert p["per_label"][label]["kappa"] == pytest.approx(cohen_kappa_score(bx, by), abs=1e-12)
    # Fleiss: P_i 1 on 9 units, 1/3 on Bob, Roe, Ann-Lee, Bob-Roe: mean 31/39; PER 14, LOC 3,
    # none 22 of 39: P_e = 689/1521; kappa = (1209 - 689) / (1521 - 689) = 5/8
    assert d["fleiss_kappa"] == pytest.approx(5 / 8)
    assert d["krippendorff_alpha"] == pytest.approx(_alpha(list(JSONL.values())), abs=1e-12)
    assert d["per_label"]["PER"]["kappa"] is None  # three annotators: per pair only
    assert d["per_label"]["PER"]["krippendorff_alpha"] == pytest.approx(
        _alpha(_binary(list(JSONL.values()), "PER")), abs=1e-12)
    # whichever file comes first: the same units and coefficients
    e = _agree(capsys, *files[::-1], "--input-format", "jsonl", "--level", "tokens", "--names", "c,b,a")
    assert (e["t_units"], e["fleiss_kappa"], e["krippendorff_alpha"]) == (
        d["t_units"], d["fleiss_kappa"], d["krippendorff_alpha"])
    assert e["signature"] == d["signature"]
    # the API: the same numbers through agreement_scored and iescore.score_files
    ag = agreement_scored(dict(zip("abc", files)), lambda g, s: iescore.score_files(
        g, s, input_format="jsonl", level="tokens", counting="any"))
    assert ag.to_dict() == d


def test_llm_extractions_are_compared_as_templates_f1_only(capsys):
    d = _agree(capsys, str(FIX / "llm_a.jsonl"), str(FIX / "llm_b.jsonl"), "--input-format", "llm",
               "--level", "tokens", "--setting", "OBD")
    p = d["pairs"][0]
    # a: PER {Ann Lee, Bob Roe}, LOC {Rome}; b: PER {Ann Lee}, LOC {Rome, Paris}: 2 fillers agree of 3 and 3
    assert p["f1_ab"] == pytest.approx(2 / 3) and p["f1_ba"] == pytest.approx(2 / 3)
    assert p["kappa"] is None and d["fleiss_kappa"] is None and d["krippendorff_alpha"] is None
    assert d["unit"] is None and d["note"].startswith("templates (OBD) have no t-units")
    assert d["per_label"]["PER"]["kappa"] is None and d["per_label"]["PER"]["f1_ab"] == pytest.approx(2 / 3)
    main(["agree", str(FIX / "llm_a.jsonl"), str(FIX / "llm_b.jsonl"), "--input-format", "llm",
          "--level", "tokens", "--setting", "OBD"])
    out = capsys.readouterr().out
    assert "note: templates (OBD) have no t-units" in out and "Fleiss" not in out


def test_agree_input_errors(capsys):
    a = str(FIX / "a.jsonl")
    assert main(["agree", a, str(FIX / "b.jsonl")]) == 2
    assert capsys.readouterr().err == (f"iescore: error: {a}: JSON (its first character is '{{'), not CoNLL columns "
                                       "(the default input format); pass --input-format jsonl and --level "
                                       "characters or --level tokens\n")
    assert main(["agree", a, str(FIX / "b.jsonl"), "--input-format", "jsonl"]) == 2
    assert "choose --level characters or --level tokens" in capsys.readouterr().err
    conll = str(Path(iescore.example_path()))
    assert main(["agree", conll, conll, "--names", "A,B", "--level", "tokens"]) == 2
    assert "--level is for character-offset input" in capsys.readouterr().err


def _categories(tags):
    """A tag sequence's t-units (IOB2, no repair needed): tokens, then separators."""
    toks = [t[2:] if t != "O" else "O" for t in tags]
    seps = [toks[k] if tags[k + 1].startswith("I-") else "O" for k in range(len(tags) - 1)]
    return toks + seps


def _random_tags(rng, n):
    out, inside = [], None
    for _ in range(n):
        r = rng.random()
        if inside is not None and r < 0.4:
            out.append("I-" + inside)
        elif r < 0.75:
            inside = str(rng.choice(["PER", "LOC", "ORG"]))
            out.append("B-" + inside)
        else:
            inside = None
            out.append("O")
    return out


@pytest.mark.parametrize("seed", range(6))
def test_alpha_and_kappas_with_missing_documents_by_krippendorff_and_sklearn(seed):
    rng = np.random.default_rng(seed)
    names = ["A", "B", "C", "D"][: 2 + seed % 3]
    sizes = [int(x) for x in rng.integers(1, 7, size=5)]
    docs = {a: [_random_tags(rng, n) for n in sizes] for a in names}
    for a in names:  # a document an annotator left out: its t-units are missing
        for k in range(len(sizes)):
            if rng.random() < 0.25:
                docs[a][k] = None
    for k in range(len(sizes)):  # every document annotated by two annotators at least
        if sum(docs[a][k] is not None for a in names) < 2:
            for a in names[:2]:
                docs[a][k] = docs[a][k] or _random_tags(rng, sizes[k])
    rows = [[x for k, n in enumerate(sizes)
             for x in (_categories(docs[a][k]) if docs[a][k] is not None else [None] * (2 * n - 1))]
            for a in names]
    ag = stats.agreement(docs)
    assert ag.t_units == len(rows[0]) and ag.missing == sum(x is None for r in rows for x in r)
    assert ag.krippendorff_alpha == pytest.approx(_alpha(rows), abs=1e-12)
    for label in ("LOC", "ORG", "PER"):
        assert ag.per_label[label]["krippendorff_alpha"] == pytest.approx(_alpha(_binary(rows, label)), abs=1e-12)
    pairs = {(p["a"], p["b"]): (p, labels) for p, labels in zip(ag.pairs, ag.pair_labels)}
    for i, a in enumerate(names):
        for j in range(i + 1, len(names)):
            b = names[j]
            both = [(x, y) for x, y in zip(rows[i], rows[j]) if x is not None and y is not None]
            p, labels = pairs[(a, b)]
            assert p["t_units"] == len(both)
            if not both:  # no document in common
                assert p["kappa"] is None and p["f1"] is None
                continue
            assert p["kappa"] == pytest.approx(cohen_kappa_score(*zip(*both)), abs=1e-12)
            for label in ("LOC", "ORG", "PER"):
                bx, by = [x == label for x, _ in both], [y == label for _, y in both]
                if len(set(bx) | set(by)) == 1:  # one category throughout: undefined
                    assert labels[label]["kappa"] is None
                else:
                    assert labels[label]["kappa"] == pytest.approx(cohen_kappa_score(bx, by), abs=1e-12)
            if len(names) == 2:
                assert ag.per_label["PER"]["kappa"] == labels["PER"]["kappa"]


def test_alpha_on_random_values_by_krippendorff():
    rng = np.random.default_rng(7)
    for _ in range(100):
        r, u, k = int(rng.integers(2, 6)), int(rng.integers(1, 40)), int(rng.integers(2, 6))
        v = rng.integers(0, k, size=(r, u))
        v[rng.random((r, u)) < 0.3] = -1
        data = np.where(v < 0, np.nan, v).astype(float)
        if len(np.unique(v[(v >= 0) & ((v >= 0).sum(axis=0) >= 2)])) < 2:
            assert krippendorff_alpha(v) is None  # a single value among the pairable ones
            continue
        assert krippendorff_alpha(v) == pytest.approx(
            krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"), abs=1e-12)
        # per label: the units binarised to "this category or not"
        pos = [np.flatnonzero(row == 0) for row in v]  # label 0 of 1, stride u
        binary = np.where(v < 0, np.nan, v == 0).astype(float)
        want = (krippendorff.alpha(reliability_data=binary, level_of_measurement="nominal")
                if len(np.unique(binary[:, (v >= 0).sum(axis=0) >= 2][~np.isnan(binary[:, (v >= 0).sum(axis=0) >= 2])])) > 1
                else None)
        got = label_alphas(v >= 0, pos, 1)[0]
        assert got == (None if want is None else pytest.approx(want, abs=1e-12))


def test_tokens_must_agree_across_annotators(tmp_path):
    with pytest.raises(iescore.ConfigError, match="A: 2, B: 1 documents"):
        stats.agreement({"A": [["O"], ["O"]], "B": [["O"]]})
    # each annotator's own tokens (tokenizer "given"): "Al Roth" as one token in A, two in B
    for name, tokens in (("a", [[0, 7]]), ("b", [[0, 2], [3, 7]])):
        (tmp_path / f"{name}.jsonl").write_text(json.dumps({
            "id": "d1", "text": "Al Roth", "spans": [{"start": 0, "end": 7, "label": "PER"}],
            "tokens": [{"start": s, "end": e} for s, e in tokens]}) + "\n")
    files = {"A": str(tmp_path / "a.jsonl"), "B": str(tmp_path / "b.jsonl")}
    with pytest.raises(iescore.InputError, match=r"^document 'd1' has 1 tokens in A's annotation and 2 in B's: "
                                                 "agreement needs the same tokens in every annotation$"):
        agreement_scored(files, lambda g, s: iescore.score_files(g, s, input_format="jsonl", level="tokens",
                                                                tokenizer="given"))


def test_overlapping_labels_per_label_units_and_the_later_span_for_the_category():
    # Documents through agreement_scored: A marks PER over tokens 0-1 and ORG over 0-2 (two labels
    # on one t-unit); B marks PER over 0-1 only. 4 tokens, 3 separators: tokens then separators.
    toks = ("Bank", "of", "Rome", "said")
    a = [iescore.Document("d", toks, (iescore.Span("PER", 0, 2), iescore.Span("ORG", 0, 3)))]
    b = [iescore.Document("d", toks, (iescore.Span("PER", 0, 2),))]
    ag = agreement_scored({"A": a, "B": b}, lambda r, p: iescore.score(reference=r, prediction=p))
    org = {"A": [1, 1, 1, 0] + [1, 1, 0], "B": [0] * 7}
    assert ag.per_label["PER"]["kappa"] == 1.0  # PER: tokens 0, 1 and their separator in both
    assert ag.per_label["ORG"]["kappa"] == pytest.approx(cohen_kappa_score(org["A"], org["B"]), abs=1e-12)
    assert ag.per_label["ORG"]["krippendorff_alpha"] == pytest.approx(
        _alpha([[bool(x) for x in org["A"]], [bool(x) for x in org["B"]]]), abs=1e-12)
    # overall categories: a t-unit in both A's spans takes the label of the later one in A's
    # document (ORG); the per-label kappas above see both labels
    cats_a = ["ORG", "ORG", "ORG", "O"] + ["ORG", "ORG", "O"]
    cats_b = ["PER", "PER", "O", "O"] + ["PER", "O", "O"]
    assert ag.pairs[0]["kappa"] == pytest.approx(cohen_kappa_score(cats_a, cats_b), abs=1e-12)
    a = [iescore.Document("d", toks, (iescore.Span("ORG", 0, 3), iescore.Span("PER", 0, 2)))]  # PER later
    swapped = agreement_scored({"A": a, "B": b}, lambda r, p: iescore.score(reference=r, prediction=p))
    cats_a = ["PER", "PER", "ORG", "O"] + ["PER", "ORG", "O"]
    assert swapped.pairs[0]["kappa"] == pytest.approx(cohen_kappa_score(cats_a, cats_b), abs=1e-12)
    assert swapped.per_label == ag.per_label


def test_coefficients_do_not_depend_on_the_annotators_order():
    rng = np.random.default_rng(3)
    docs = {a: [_random_tags(rng, n) for n in (3, 5, 2)] for a in "ABC"}
    docs["B"][1] = None
    docs["C"][0] = None
    first = stats.agreement(docs).to_dict()
    again = stats.agreement({a: docs[a] for a in "CAB"}).to_dict()
    for key in ("t_units", "missing", "fleiss_kappa"):
        assert again[key] == first[key], key
    assert again["krippendorff_alpha"] == pytest.approx(first["krippendorff_alpha"], abs=1e-12)
    kappas = {frozenset((p["a"], p["b"])): p["kappa"] for p in first["pairs"]}
    for p in again["pairs"]:
        assert p["kappa"] == pytest.approx(kappas[frozenset((p["a"], p["b"]))], abs=1e-12)
