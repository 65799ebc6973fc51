"""Every front end against a plain implementation of the definitions.

For random tag corpora and a matrix of options (rule, counting, mode, setting,
scheme, repair, average, beta, supertags, t-unit weights, SER weights), every field
that a front end prints or returns -- the Python report's ``to_dict()``, the CLI's
JSON and table, the ``evaluate`` metric, the Trainer hook and the spaCy scorer --
is compared with the number that ``spec_reference`` (brute force from the
definitions, no library code) computes. Where two front ends express the same
measure they therefore agree with each other too.
"""

from __future__ import annotations

import json
import math
import random
from typing import Any

import numpy as np
import pytest
import spec_reference as ref
from conftest import require

import iescore
from iescore.cli import main as cli_main

LABELS = ("PER", "LOC", "ORG")
WORDS = ("a", "b", "A", "c")


def make_corpus(seed: int, n_docs: int = 6) -> list[tuple[list[str], list[str], list[str]]]:
    """Documents of 1-9 tokens from a tiny vocabulary (strings repeat), well-formed IOB2 tags."""
    rng = random.Random(seed)
    docs = []
    for _ in range(n_docs):
        n = rng.randint(1, 9)
        toks = [rng.choice(WORDS) for _ in range(n)]

        def tags() -> list[str]:
            t, k = ["O"] * n, 0
            while k < n:
                if rng.random() < 0.4:
                    lab, length = rng.choice(LABELS), rng.randint(1, 3)
                    for q in range(k, min(n, k + length)):
                        t[q] = ("B-" if q == k else "I-") + lab
                    k += length
                else:
                    k += 1
            return t

        docs.append((toks, tags(), tags()))
    return docs


# one option changed at a time from the default, then a few combinations
CONFIGS: list[dict[str, Any]] = [
    {},
    {"rule": "C(1)"},
    {"rule": "O(1,1)"},
    {"rule": "O(inf,inf)"},
    {"rule": "O(1,1)", "counting": "one-to-one"},
    {"rule": "O(inf,inf)", "counting": "one-to-one"},
    {"mode": "match-best"},
    {"mode": "match-best", "rule": "O(1,1)"},
    {"mode": "one-per-string"},
    {"mode": "one-per-string", "rule": "O(1,1)", "counting": "one-to-one"},
    {"setting": "OBD"},
    {"setting": "OBD", "rule": "O(1,2)"},
    {"setting": "OBD", "rule": "C(1)", "counting": "one-to-one", "normaliser": "lower"},
    {"scheme": "IOB2", "repair": "discard"},
    {"scheme": "IOB2", "repair": "strict"},
    {"average": "macro"},
    {"average": "weighted"},
    {"beta": 2.0},
    {"beta": 0.5, "average": "macro", "rule": "O(1,1)"},
    {"supertags": {"PER": "NE", "LOC": "NE"}},
    {"token_weight": 2.0, "separator_weight": 0.5},
    {"ser_weights": (1.0, 0.5, 0.25)},
    {"average": "weighted", "beta": 2.0, "rule": "O(1,1)", "counting": "one-to-one", "supertags": {"ORG": "NE"}},
]
SEEDS = (0, 1, 2)


def _id(cfg: dict[str, Any]) -> str:
    return ",".join(f"{k}={v}" for k, v in cfg.items()) or "default"


# --- the expected numbers, from the definitions ---------------------------------------------

def expected(corpus: list, cfg: dict[str, Any]) -> dict[str, Any]:
    docs = [(toks, ref.iob2_spans(g), ref.iob2_spans(p)) for toks, g, p in corpus]
    norm = str.lower if cfg.get("normaliser") == "lower" else (lambda s: s)
    res = ref.evaluate_docs(
        docs, rule=cfg.get("rule", "E"), counting=cfg.get("counting", "any"), mode=cfg.get("mode", "match-all"),
        setting=cfg.get("setting", "AO"), supertags=cfg.get("supertags"),
        token_weight=cfg.get("token_weight", 1.0), separator_weight=cfg.get("separator_weight", 1.0),
        normalise=norm,
    )
    beta = cfg.get("beta", 1.0)
    av = ref.averages(res, beta)
    out: dict[str, Any] = {"res": res, "averages": av, "headline": av[cfg.get("average", "micro")]}
    out["per_label"] = {
        lab: {"tp": tp, "fp": fp, "fn": fn, "precision": ref.div(tp, tp + fp), "recall": ref.div(tp, tp + fn),
              "f1": ref.f_beta(tp, fp, fn), "f_beta": ref.f_beta(tp, fp, fn, beta)}
        for lab, (tp, fp, fn) in res.per_label.items()
    }
    tp, fp, fn = (sum(v[k] for v in res.per_label.values()) for k in range(3))
    out["overall"] = {"tp": tp, "fp": fp, "fn": fn, **av["micro"]}
    if res.slot is not None:
        C, S, D, I = res.slot
        w = cfg.get("ser_weights", (1.0, 1.0, 1.0))
        out["slot"] = {"C": C, "S": S, "D": D, "I": I, "N": C + S + D, "M": C + S + I,
                       **ref.slot_measures(res.slot, beta),
                       "ser_weighted": ref.div(w[0] * S + w[1] * D + w[2] * I, C + S + D)}
    out["ts"] = ref.ts_summary(res, beta)
    n_tok = sum(len(t) for t, _, _ in corpus)
    out["tokens"] = n_tok
    out["token_accuracy"] = ref.div(sum(a == b for _, g, p in corpus for a, b in zip(g, p)), n_tok)
    return out


def close(got: Any, want: Any, what: str) -> None:
    if want is None or got is None:
        assert got == want, f"{what}: got {got!r}, want {want!r}"
    else:
        assert math.isclose(got, want, rel_tol=1e-12, abs_tol=1e-12), f"{what}: got {got!r}, want {want!r}"


def z(x: float | None) -> float:
    """What the float-only front ends print for an undefined value (zero_division=0.0)."""
    return 0.0 if x is None else x


# --- the front ends -------------------------------------------------------------------------

def python_report(corpus: list, cfg: dict[str, Any]) -> iescore.Report:
    return iescore.score_tags(
        reference=[g for _, g, _ in corpus], prediction=[p for _, _, p in corpus],
        tokens=[t for t, _, _ in corpus], **cfg,
    )


def cli_args(cfg: dict[str, Any]) -> list[str]:
    args = []
    for k, v in cfg.items():
        flag = "--" + k.replace("_", "-")
        if k == "supertags":
            v = ",".join(f"{a}={b}" for a, b in v.items())
        elif k == "ser_weights":
            v = ",".join(str(x) for x in v)
        args += [flag, str(v)]
    return args


def write_conll(corpus: list, path: Any) -> None:
    lines = []
    for toks, g, p in corpus:
        lines += [f"{t} {a} {b}" for t, a, b in zip(toks, g, p)] + [""]
    path.write_text("\n".join(lines), encoding="utf-8")


def run_cli(capsys: Any, *argv: str) -> str:
    code = cli_main(list(argv))
    out = capsys.readouterr()
    assert code == 0, out.err
    return out.out


@pytest.fixture(scope="module")
def metric() -> Any:
    evaluate = require("evaluate")
    import iescore.metric_card

    return evaluate.load(iescore.metric_card.PATH)


# --- the tests ------------------------------------------------------------------------------

def check_dict(d: dict[str, Any], exp: dict[str, Any], cfg: dict[str, Any]) -> None:
    """Every number of ``Report.to_dict()`` (and of the CLI's JSON, the same object)."""
    res = exp["res"]
    assert sorted(d["per_label"]) == res.labels
    for lab, e in exp["per_label"].items():
        got = d["per_label"][lab]
        for k in ("tp", "fp", "fn"):
            assert got[k] == e[k], f"{lab}.{k}"
        for k in ("precision", "recall", "f1", "f_beta"):
            close(got[k], e[k], f"per_label.{lab}.{k}")
        assert got["support"] == res.support[lab], f"{lab}.support"
        assert got["predicted"] == res.predicted[lab], f"{lab}.predicted"
    o = d["overall"]
    for k in ("tp", "fp", "fn"):
        assert o[k] == exp["overall"][k], f"overall.{k}"
    for k in ("precision", "recall", "f1", "f_beta"):
        close(o[k], exp["overall"][k], f"overall.{k}")
    for avg in ("micro", "macro", "weighted"):
        for k in ("precision", "recall", "f1", "f_beta"):
            close(d["averages"][avg][k], exp["averages"][avg][k], f"averages.{avg}.{k}")
    if "slot" in exp:
        se = d["slot_errors"]
        for k, v in exp["slot"].items():
            close(se[k], v, f"slot_errors.{k}")
        if cfg.get("counting") == "one-to-one" and cfg.get("setting", "AO") == "AO" \
                and cfg.get("mode", "match-all") == "match-all":
            # SPEC §3.3: under one-to-one counting TP = C, FP = S + I, FN = S + D
            assert (o["tp"], o["fp"], o["fn"]) == (se["C"], se["S"] + se["I"], se["S"] + se["D"])
    cats = d["categories"]
    if res.categories is None:  # match-best: no alignment, no categories
        assert cats is None
    else:
        # the tally is one of those of the optimal alignments (ties may be broken either way)
        got = frozenset(((lab, c), n) for lab, e in cats["per_label"].items() for c, n in e.items()
                        if c in ref.CATEGORIES and n)
        assert got in res.categories, f"categories {sorted(got)} not among {[sorted(x) for x in res.categories]}"
        for e in list(cats["per_label"].values()) + [cats["overall"]]:
            # the MUC/SemEval codes: wrong label and wrong label+boundary are INC, wrong boundary PAR
            assert (e["COR"], e["INC"], e["PAR"], e["MIS"], e["SPU"]) == (
                e["correct"], e["wrong_label"] + e["wrong_label_boundary"], e["wrong_boundary"], e["missed"],
                e["spurious"])
        assert cats["overall"] == {k: sum(e[k] for e in cats["per_label"].values()) for k in cats["overall"]}
    if cfg.get("setting", "AO") == "AO":
        for k, v in exp["ts"].items():
            close(d["ts"][k], v, f"ts.{k}")
        assert d["tokens"] == exp["tokens"]
        close(d["token_accuracy"], exp["token_accuracy"], "token_accuracy")
    assert d["documents"] == 6


@pytest.mark.parametrize("cfg", CONFIGS, ids=_id)
@pytest.mark.parametrize("seed", SEEDS)
def test_python_report_and_cli_json(cfg: dict[str, Any], seed: int, tmp_path: Any, capsys: Any) -> None:
    corpus = make_corpus(seed)
    exp = expected(corpus, cfg)
    report = python_report(corpus, cfg)
    d = report.to_dict()
    check_dict(d, exp, cfg)
    # the headline properties
    head = exp["headline"]
    close(report.precision, head["precision"], "Report.precision")
    close(report.recall, head["recall"], "Report.recall")
    close(report.f1, head["f1"], "Report.f1")
    close(report.f_beta, head["f_beta"], "Report.f_beta")
    # the CLI's JSON is the same object, numbers and all; its signature also records how the
    # file was cut into documents, and its data digest covers the file's document ids
    path = tmp_path / "c.conll"
    write_conll(corpus, path)
    cli = json.loads(run_cli(capsys, "score", str(path), "--json", "--documents", "sentence", *cli_args(cfg)))
    check_dict(cli, exp, cfg)
    cli_sig, py_sig = cli.pop("signature").split("|"), d.pop("signature").split("|")
    assert "docs:sentence" in cli_sig
    drop = ("ref:", "docs:")
    assert [x for x in cli_sig if not x.startswith(drop)] == [x for x in py_sig if not x.startswith(drop)]
    assert cli == d


def pct(x: float | None) -> str:
    """A percentage as the table prints iescore's own lines (n/a where undefined)."""
    return "   n/a" if x is None else f"{100 * x:6.2f}"


def conll_prf(tp: int, fp: int, fn: int) -> str:
    """conlleval's arithmetic: 100*correct/found (0 when nothing was found), FB1 from those."""
    p = 100 * tp / (tp + fp) if tp + fp else 0.0
    r = 100 * tp / (tp + fn) if tp + fn else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return f"precision: {p:6.2f}%; recall: {r:6.2f}%; FB1: {f:6.2f}"


@pytest.mark.parametrize("cfg", CONFIGS, ids=_id)
def test_cli_table(cfg: dict[str, Any], tmp_path: Any, capsys: Any) -> None:
    """The default table's lines, each built here from the expected numbers."""
    corpus = make_corpus(3)
    exp = expected(corpus, cfg)
    path = tmp_path / "c.conll"
    write_conll(corpus, path)
    lines = run_cli(capsys, "score", str(path), "--documents", "sentence", *cli_args(cfg)).splitlines()
    res, o = exp["res"], exp["overall"]
    acc = sum(a == b for _, g, p in corpus for a, b in zip(g, p))
    want = [
        f"processed {exp['tokens']} tokens with {sum(res.support.values())} phrases; "
        f"found: {sum(res.predicted.values())} phrases; correct: {o['tp']}.",
        f"accuracy: {100 * acc / exp['tokens']:6.2f}%; {conll_prf(o['tp'], o['fp'], o['fn'])}",
    ]
    for lab in res.labels:
        if res.support[lab] or res.predicted[lab]:
            tp, fp, fn = res.per_label[lab]
            want.append(f"{lab:>17}: {conll_prf(tp, fp, fn)}  {res.predicted[lab]}")
    avg, head = cfg.get("average", "micro"), exp["headline"]
    headline = f"headline ({avg} average): precision {pct(head['precision'])}%; recall {pct(head['recall'])}%; " \
               f"F1 {pct(head['f1'])}%"
    want.append(headline)
    if "slot" in exp:
        se = exp["slot"]
        line = f"slot errors: C={se['C']} S={se['S']} D={se['D']} I={se['I']} (N={se['N']}, M={se['M']}); " \
               f"SER: {pct(se['ser'])}%; ERR: {pct(se['err'])}%; "
        if "ser_weights" in cfg:  # the weighted SER closes the line
            w = ",".join(f"{x:g}" for x in cfg["ser_weights"])
            assert any(x.startswith(line) and x.endswith(f"; SER(weights S,D,I={w}): {pct(se['ser_weighted'])}%")
                       for x in lines), lines
        want.append(line)
    av = exp["averages"]
    want.append(f"averages F1: micro {pct(av['micro']['f1'])}%; macro {pct(av['macro']['f1'])}%; "
                f"weighted {pct(av['weighted']['f1'])}%")
    if cfg.get("setting", "AO") == "AO":
        ts = exp["ts"]
        want.append(f"token & separator: TS-F1^M {pct(ts['f1_macro'])}%; TS-F1^mu {pct(ts['f1_micro'])}%; "
                    f"T-F1^M {pct(ts['token_f1_macro'])}%")
    got = iter(lines)
    for w in want:  # in this order, each line beginning as built here (beta adds to some lines)
        assert any(line.startswith(w) for line in got), f"no line {w!r} in order in:\n" + "\n".join(lines)
    assert lines[-1].startswith("signature: iescore|")


@pytest.mark.parametrize("cfg", CONFIGS, ids=_id)
def test_evaluate_metric(cfg: dict[str, Any], metric: Any) -> None:
    corpus = make_corpus(7)
    exp = expected(corpus, cfg)
    out = metric.compute(
        predictions=[p for _, _, p in corpus], references=[g for _, g, _ in corpus],
        tokens=[t for t, _, _ in corpus], **cfg,
    )
    head = exp["headline"]
    for k in ("precision", "recall", "f1", "f_beta"):
        close(out[f"overall_{k}"], z(head[k]), f"overall_{k}")
    close(out["overall_accuracy"], z(exp["token_accuracy"]), "overall_accuracy")
    for lab, e in exp["per_label"].items():
        for k in ("precision", "recall", "f1"):
            close(out[lab][k], z(e[k]), f"{lab}.{k}")
        assert out[lab]["number"] == exp["res"].support[lab]
    for avg in ("micro", "macro", "weighted"):
        close(out[f"overall_{avg}_f1"], z(exp["averages"][avg]["f1"]), f"overall_{avg}_f1")
    if "slot" in exp:
        for k in ("ser", "err", "e"):
            close(out[f"overall_{k}"], z(exp["slot"][k]), f"overall_{k}")
        for k in "CSDI":
            assert out[f"overall_{k}"] == exp["slot"][k]
    if cfg.get("setting", "AO") == "AO":
        close(out["overall_ts_f1_macro"], z(exp["ts"]["f1_macro"]), "ts_f1_macro")
        close(out["overall_ts_f1_micro"], z(exp["ts"]["f1_micro"]), "ts_f1_micro")
        close(out["overall_token_f1_macro"], z(exp["ts"]["token_f1_macro"]), "token_f1_macro")
    assert isinstance(out["signature"], str) and out["signature"].startswith("iescore|")


# options the Trainer hook and the spaCy scorer take (no strings: no OBD / one-per-string)
POSITIONAL = [c for c in CONFIGS if c.get("setting") != "OBD" and c.get("mode") != "one-per-string"]


@pytest.mark.parametrize("cfg", POSITIONAL, ids=_id)
def test_trainer_hook(cfg: dict[str, Any]) -> None:
    from iescore.adapters.trainer import compute_metrics

    corpus = make_corpus(11)
    exp = expected(corpus, cfg)
    names = ["O"] + [f"{p}-{lab}" for lab in LABELS for p in ("B", "I")]
    idx = {t: k for k, t in enumerate(names)}
    width = max(len(t) for t, _, _ in corpus) + 2  # padding the Trainer adds
    labels = np.full((len(corpus), width), -100)
    preds = np.zeros((len(corpus), width), dtype=np.int64)
    for k, (_, g, p) in enumerate(corpus):
        labels[k, 1 : 1 + len(g)] = [idx[t] for t in g]  # position 0 is a special token
        preds[k, 1 : 1 + len(p)] = [idx[t] for t in p]

    class EvalPrediction:
        predictions = preds
        label_ids = labels

    m = compute_metrics(names, **cfg)(EvalPrediction())
    head = exp["headline"]
    for k in ("precision", "recall", "f1", "f_beta"):
        close(m[k], z(head[k]), k)
    close(m["accuracy"], z(exp["token_accuracy"]), "accuracy")
    for avg in ("micro", "macro", "weighted"):
        close(m[f"{avg}_f1"], z(exp["averages"][avg]["f1"]), f"{avg}_f1")
    for lab, e in exp["per_label"].items():
        for k in ("precision", "recall", "f1", "f_beta"):
            close(m[f"{lab}_{k}"], z(e[k]), f"{lab}_{k}")
    if "slot" in exp:
        for k in ("ser", "err", "e"):
            close(m[k], z(exp["slot"][k]), k)
    close(m["ts_f1_macro"], z(exp["ts"]["f1_macro"]), "ts_f1_macro")
    close(m["ts_f1_micro"], z(exp["ts"]["f1_micro"]), "ts_f1_micro")
    close(m["token_f1_macro"], z(exp["ts"]["token_f1_macro"]), "token_f1_macro")
    assert all(isinstance(v, float) for v in m.values())
    # a tuple (predictions, label_ids), as `predictions, labels = eval_pred` reads one, is the same
    assert compute_metrics(names, **cfg)((preds, labels)) == m


def test_trainer_hook_refuses_what_is_not_an_eval_prediction() -> None:
    from iescore.adapters.trainer import compute_metrics

    hook = compute_metrics(["O", "B-PER", "I-PER"])
    # (predictions, label_ids, inputs): the inputs are not read. PER[0,2) found: F1 1
    assert hook((np.array([[1, 2, 0]]), np.array([[1, 2, -100]]), None))["f1"] == 1.0
    for bad, shown in (((np.zeros(3),), "a tuple of 1"), ({"predictions": 1}, "a dict"), (np.zeros(3), "a ndarray")):
        with pytest.raises(TypeError) as e:
            hook(bad)
        assert str(e.value) == ("compute_metrics takes the Trainer's EvalPrediction (with .predictions and "
                                f".label_ids) or a tuple (predictions, label_ids); got {shown}")


SPACY = [c for c in CONFIGS if not set(c) - {"rule", "counting", "mode", "average", "beta", "normaliser", "setting"}]


@pytest.mark.parametrize("cfg", SPACY, ids=_id)
def test_spacy_scorer(cfg: dict[str, Any]) -> None:
    spacy = require("spacy")
    from iescore.adapters.spacy_scorer import make_spans_scorer, make_templates_scorer
    from spacy.tokens import Doc
    from spacy.tokens import Span as SpacySpan
    from spacy.training import Example

    corpus = make_corpus(13)
    exp = expected(corpus, cfg)
    nlp = spacy.blank("en")
    examples = []
    for toks, g, p in corpus:
        docs = []
        for tags in (g, p):
            doc = Doc(nlp.vocab, words=toks)
            doc.ents = [SpacySpan(doc, s, e, lab) for lab, s, e in ref.iob2_spans(tags)]
            docs.append(doc)
        examples.append(Example(docs[1], docs[0]))
    opts = {k: v for k, v in cfg.items() if k != "setting"}
    if cfg.get("setting") == "OBD":
        scores, pre = make_templates_scorer(**opts)(examples), "ents_obd"
    else:
        scores, pre = make_spans_scorer(**opts)(examples), "ents"
    head = exp["headline"]
    close(scores[f"{pre}_p"], z(head["precision"]), "p")
    close(scores[f"{pre}_r"], z(head["recall"]), "r")
    close(scores[f"{pre}_f"], z(head["f1"]), "f")
    close(scores[f"{pre}_f_beta"], z(head["f_beta"]), "f_beta")
    for lab, e in exp["per_label"].items():
        got = scores[f"{pre}_per_type"][lab]
        close(got["p"], z(e["precision"]), f"{lab}.p")
        close(got["r"], z(e["recall"]), f"{lab}.r")
        close(got["f"], z(e["f1"]), f"{lab}.f")
    close(scores[f"{pre}_macro_f"], z(exp["averages"]["macro"]["f1"]), "macro_f")
    close(scores[f"{pre}_weighted_f"], z(exp["averages"]["weighted"]["f1"]), "weighted_f")
    if "slot" in exp:
        for k in ("ser", "err", "e"):
            close(scores[f"{pre}_{k}"], z(exp["slot"][k]), k)
    if cfg.get("setting", "AO") == "AO":
        close(scores[f"{pre}_ts_f"], z(exp["ts"]["f1_macro"]), "ts_f")


def test_reference_itself_on_the_papers_examples() -> None:
    """The plain implementation reproduces the papers' worked examples (SPEC §9), so the
    matrix above compares the library with something that is itself checked."""
    # De Sitter Ex. 6 (1-based inclusive -> half-open): answers (18,25),(93,100);
    # predictions (20,25),(93,101),(50,52)
    toks = ["t"] * 110
    answers = [("x", 17, 25), ("x", 92, 100)]
    preds = [("x", 19, 25), ("x", 92, 101), ("x", 49, 52)]
    for rule, want in (("E", (0, 3, 2)), ("C(1)", (1, 2, 1)), ("O(1,2)", (2, 1, 0))):
        assert ref.evaluate_docs([(toks, answers, preds)], rule=rule).per_label["x"] == want
    # De Sitter Ex. 7 (OBD): answers {Al Roth, Ido Erev}; predictions {Al Roth, Ido, Cristina Bicchieri}
    t = "Al Roth Ido Erev Al Roth Ido Cristina Bicchieri".split()
    doc = (t, [("sp", 0, 2), ("sp", 2, 4)], [("sp", 4, 6), ("sp", 6, 7), ("sp", 7, 9)])
    assert ref.evaluate_docs([doc], rule="E", setting="OBD").per_label["sp"] == (1, 2, 1)
    assert ref.evaluate_docs([doc], rule="O(1,2)", setting="OBD").per_label["sp"] == (2, 1, 0)
    # Esuli's fox: TS TP=5, FP=2, FN=1
    t = "The quick brown fox jumps over the lazy dog".split()
    doc = (t, [("c", 1, 3), ("c", 7, 9)], [("c", 1, 4), ("c", 7, 8), ("c", 8, 9)])
    assert ref.evaluate_docs([doc]).ts["c"][:3] == (5, 2, 1)
    # Makhoul Table 1, system B: D = N, I = 0.2 N -> ERR 1.0, SER 1.2
    assert ref.slot_measures((0, 0, 10, 2)) == {"ser": 1.2, "err": 1.0, "e": pytest.approx(1.0)}
