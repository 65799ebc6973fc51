"""Every front end's signature names every option that changes a number (SPEC §8): runs
whose numbers differ never share a signature, and the options rebuilt from a signature
(:meth:`Config.from_signature`, plus the metric's ``zero_division`` suffix) give the same
numbers and the same signature again.

Each example draws one set of options and three variants of it, each with one option
changed (a front end's own options among them: ``align``, ``level``, ``tokenizer``,
``misaligned``, ``missing``, ``zero_division``, ``documents``, the sub-word
``strategy``...), so that runs often share a signature and must then share every number.
``detail`` is left out by design: it chooses which numbers are computed, never their values.
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import os
import tempfile
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from iescore import (
    Config,
    ConfigError,
    Document,
    InputError,
    Scorer,
    Span,
    Template,
    score,
    score_tags,
    score_templates,
)
from iescore.config import PREPARATION

FAST = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# --- options ----------------------------------------------------------------------------

CORE: dict[str, st.SearchStrategy[Any]] = {
    "rule": st.sampled_from(["E", "C(1)", "O(1,1)", "O(inf,inf)"]),
    "counting": st.sampled_from(["any", "one-to-one"]),
    "mode": st.sampled_from(["match-all", "match-best", "one-per-string"]),
    "average": st.sampled_from(["micro", "macro", "weighted"]),
    "beta": st.sampled_from([1.0, 0.5, 2.0]),
    "supertags": st.sampled_from([(), (("A", "N"), ("B", "N"))]),
    "token_weight": st.sampled_from([1.0, 0.5]),
    "separator_weight": st.sampled_from([1.0, 2.0]),
    "ser_weights": st.sampled_from([(1.0, 1.0, 1.0), (1.0, 0.5, 0.5)]),
    "normaliser": st.sampled_from(["identity", "lower"]),
}
TAGS = {"scheme": st.sampled_from(["auto", "IOB1", "IOB2", "IOBES"]), "repair": st.sampled_from(["conlleval", "discard"])}


def variants(pool: dict[str, st.SearchStrategy[Any]], fixed: dict[str, Any] | None = None,
             always: dict[str, tuple[Any, ...]] | None = None) -> st.SearchStrategy[list[dict[str, Any]]]:
    """A base set of options drawn from ``pool`` and three variants, each with one option
    changed; and one variant per value of each of the front end's own options in ``always``."""

    @st.composite
    def draw(d: Any) -> list[dict[str, Any]]:
        base = dict(fixed or {}, **d(st.fixed_dictionaries({}, optional=pool)))
        out = [base]
        for _ in range(3):
            key = d(st.sampled_from(sorted(pool)))
            out.append({**base, key: d(pool[key])})
        out += [{**base, key: v} for key, values in (always or {}).items() for v in values if base.get(key) != v]
        return out

    return draw()


def core_of(cfg: Config) -> Config:
    """The configuration without the fields that record how the input was prepared."""
    return cfg.with_(**dict.fromkeys(PREPARATION))


def as_options(cfg: Config) -> dict[str, Any]:
    """A configuration as keyword options (for front ends that take no ``config=``)."""
    out = {"setting": cfg.setting, "rule": str(cfg.rule), "counting": cfg.counting, "mode": cfg.mode,
           "average": cfg.average, "beta": cfg.beta, "normaliser": cfg.normaliser,
           "token_weight": cfg.token_weight, "separator_weight": cfg.separator_weight, "ser_weights": cfg.ser_weights}
    if cfg.supertags:
        out["supertags"] = cfg.supertags
    return out


# --- the check --------------------------------------------------------------------------


def outcome(fn: Callable[[], dict[str, Any]]) -> tuple[str | None, str]:
    """(signature, everything else as canonical JSON), or (None, the error) for refused input."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            out = dict(fn())
        except (ConfigError, InputError) as exc:
            return None, f"{type(exc).__name__}: {exc}"
    sig = out.pop("signature")
    return sig, json.dumps(out, sort_keys=True, default=repr)


def check(run: Callable[[dict[str, Any]], dict[str, Any]], options: list[dict[str, Any]],
          rebuild: Callable[[str], dict[str, Any]]) -> None:
    """Runs with one signature have the same numbers; the options rebuilt from a signature
    give the same numbers and signature."""
    seen: dict[str, tuple[dict[str, Any], str]] = {}
    for opts in options:
        sig, numbers = outcome(lambda: run(opts))
        if sig is None:
            continue
        if sig in seen:
            assert numbers == seen[sig][1], f"{seen[sig][0]} and {opts} share {sig} but their numbers differ"
            continue
        seen[sig] = (opts, numbers)
        back = rebuild(sig)
        assert outcome(lambda: run(back)) == (sig, numbers), f"{opts} rebuilt from {sig} as {back}"


def rebuilt_config(sig: str) -> dict[str, Any]:
    return {"config": Config.from_signature(sig)}


# --- data -------------------------------------------------------------------------------

LABELS = ("A", "B")


@st.composite
def span_corpora(draw: Any) -> tuple[list[Document], list[list[Span]]]:
    docs, preds = [], []
    for k in range(draw(st.integers(1, 3))):
        n = draw(st.integers(1, 6))
        toks = tuple(draw(st.lists(st.sampled_from(["al", "Al", "bo"]), min_size=n, max_size=n)))

        def spans() -> tuple[Span, ...]:
            out = []
            for _ in range(draw(st.integers(0, 3))):
                a = draw(st.integers(0, n - 1))
                out.append(Span(draw(st.sampled_from(LABELS)), a, draw(st.integers(a + 1, n)), score=draw(st.sampled_from([0.2, 0.9]))))
            return tuple(out)

        docs.append(Document(f"d{k}", toks, spans()))
        preds.append(list(spans()))
    return docs, preds


TAG = st.sampled_from(["O", "O", "B-A", "I-A", "E-A", "S-A", "B-B", "I-B"])


@st.composite
def tag_corpora(draw: Any) -> tuple[list[list[str]], list[list[str]]]:
    ref = draw(st.lists(st.lists(TAG, min_size=1, max_size=6), min_size=1, max_size=3))
    pred = [draw(st.lists(TAG, min_size=len(r), max_size=len(r))) for r in ref]
    return ref, pred


FILLERS = st.sampled_from(["Al", "al", "Al Roth", "Bo", "bo"])


@st.composite
def template_corpora(draw: Any) -> tuple[list[Template], list[Template]]:
    def template(k: int) -> Template:
        slots = {lab: tuple(draw(st.lists(FILLERS, max_size=3, unique=True))) for lab in LABELS}
        return Template(f"t{k}", {lab: f for lab, f in slots.items() if f})

    n = draw(st.integers(1, 3))
    return [template(k) for k in range(n)], [template(k) for k in range(n)]


# --- the front ends ---------------------------------------------------------------------


@FAST
@given(span_corpora(), variants({**CORE, "setting": st.sampled_from(["AO", "OBD"])}))
def test_score(corpus, options):
    docs, preds = corpus
    check(lambda o: score(reference=docs, prediction=preds, **o).to_dict(), options, rebuilt_config)


@FAST
@given(tag_corpora(), variants({**CORE, **TAGS}))
def test_score_tags(corpus, options):
    ref, pred = corpus
    check(lambda o: score_tags(reference=ref, prediction=pred, **o).to_dict(), options, rebuilt_config)


@FAST
@given(template_corpora(), variants({k: CORE[k] for k in ("rule", "counting", "average", "beta", "normaliser",
                                                             "supertags", "ser_weights")}, {"setting": "OBD"}))
def test_score_templates(corpus, options):
    ref, pred = corpus
    check(lambda o: score_templates(reference=ref, prediction=pred, **o).to_dict(), options, rebuilt_config)


@FAST
@given(tag_corpora(), template_corpora(), st.integers(0, 3), variants({**CORE, **TAGS}))
def test_scorer_batches_and_shards(tags, templates, cut, options):
    """add_tags, add_batch, add and merge (an empty shard among the shards) give the one
    call's signature and numbers."""
    from iescore import tagged_batch

    ref, pred = tags
    ids = [f"d{k}" for k in range(len(ref))]

    def shards(o: dict[str, Any]) -> dict[str, Any]:
        one = outcome(lambda: score_tags(reference=ref, prediction=pred, doc_ids=ids, **o).to_dict())
        a, b, empty = Scorer(**o), Scorer(**o), Scorer(**o)
        a.add_tags(reference=ref[:cut], prediction=pred[:cut], doc_ids=ids[:cut])
        b.add_batch(tagged_batch(ref[cut:], pred[cut:], doc_ids=ids[cut:]))
        empty.add_tags(reference=[], prediction=[])
        out = empty.merge(a).merge(b).report().to_dict()
        assert outcome(lambda: out) == one
        return out

    check(shards, options, rebuilt_config)
    tref, tpred = templates
    one = outcome(lambda: score_templates(reference=tref, prediction=tpred, setting="OBD").to_dict())
    a, empty = Scorer(setting="OBD"), Scorer(setting="OBD")
    a.add(reference=tref[:cut], prediction=tpred[:cut])
    b = Scorer(setting="OBD")
    b.add(reference=tref[cut:], prediction=tpred[cut:])
    empty.add(reference=[], prediction=[])
    assert outcome(lambda: a.merge(empty).merge(b).report().to_dict()) == one


# score_llm: strings without offsets placed in one text
TEXT = "Al met Al Roth, and al-Roth met Bo."
REF_SPANS = [("A", 0, 2), ("A", 7, 14), ("B", 20, 27), ("A", 32, 34)]
STRINGS = ["Al", "Al Roth", "l Roth", "Roth,", "al-Roth", "Bo", "Zed"]


@FAST
@given(st.lists(st.sampled_from(REF_SPANS), unique=True), st.lists(st.tuples(st.sampled_from(LABELS), st.sampled_from(STRINGS)), max_size=4),
       variants({"setting": st.sampled_from(["AO", "OBD"]), "level": st.sampled_from(["characters", "tokens"]),
                 "tokenizer": st.sampled_from(["regex", "whitespace"]), "misaligned": st.sampled_from(["expand", "contract"]),
                 "align": st.sampled_from(["first", "every", "unique"]), "rule": CORE["rule"],
                 "counting": CORE["counting"], "normaliser": CORE["normaliser"]}, {"level": "characters"},
                {"align": ("first", "every")}))
def test_score_llm(ref_spans, items, options):
    from iescore.io.chars import TextDocument
    from iescore.io.llm import Extraction, score_llm

    ref = [TextDocument("d", TEXT, tuple(Span(*s) for s in ref_spans))]
    pred = [Extraction("d", tuple(items))]

    def rebuild(sig: str) -> dict[str, Any]:
        cfg = Config.from_signature(sig)
        return {"level": cfg.level, "tokenizer": cfg.tokenizer or "regex", "misaligned": cfg.misaligned or "expand",
                "align": cfg.align or "first", "config": core_of(cfg)}

    check(lambda o: score_llm(ref, pred, **o).to_dict(), options, rebuild)


@functools.lru_cache(maxsize=1)
def _metric() -> Any:
    evaluate = pytest.importorskip("evaluate")
    import iescore.metric_card as card

    return evaluate.load(card.PATH)  # a local path: no network


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tag_corpora(), variants({"zero_division": st.sampled_from([0, 1, "warn"]), "mode": st.sampled_from([None, "strict"]),
                                 "scheme": st.sampled_from(["auto", "IOB1", "IOB2"]), "rule": CORE["rule"],
                                 "counting": CORE["counting"], "average": CORE["average"], "beta": CORE["beta"],
                                 "supertags": st.sampled_from([None, {"A": "N", "B": "N"}])},
                                always={"zero_division": (0, 1)}))
def test_evaluate_metric(corpus, options):
    metric = _metric()
    ref, pred = corpus

    def rebuild(sig: str) -> dict[str, Any]:
        cfg = Config.from_signature(sig)
        out = as_options(cfg)
        out.update(scheme=cfg.scheme, repair=cfg.repair, supertags=dict(cfg.supertags) or None,
                   zero_division=1 if sig.endswith("|zero_division:1") else 0)
        return out

    check(lambda o: metric.compute(predictions=pred, references=ref, **o), options, rebuild)


@FAST
@given(st.sampled_from([[(0, 2, "A")], [(0, 1, "A"), (3, 4, "B")], []]),
       st.sampled_from([[(0, 1, "A")], [(0, 2, "A"), (4, 6, "B")], [(3, 4, "A")], [(1, 3, "B")]]),
       variants({"misaligned": st.sampled_from(["expand", "contract"]), "missing": st.sampled_from(["ignore", "outside"]),
                 **{k: CORE[k] for k in ("rule", "counting", "average", "beta")}},
                always={"misaligned": ("contract",), "missing": ("outside",)}))
def test_spacy_scorer(ref_ents, pred_ents, options):
    spacy = pytest.importorskip("spacy")
    from iescore.adapters.spacy import score_examples
    from iescore.adapters.spacy_scorer import make_spans_scorer, spacy_scores
    from spacy.tokens import Doc
    from spacy.tokens import Span as SpacySpan
    from spacy.training import Example

    nlp = spacy.blank("en")
    # the reference: 4 tokens, the last one unannotated; the prediction splits "Lovelace"
    ref = Doc(nlp.vocab, words=["Ada", "Lovelace", "met", "Babbage"], spaces=[True, True, True, False])
    covered = {i for a, b, _ in ref_ents for i in range(a, b)}
    ref.set_ents([SpacySpan(ref, a, b, lab) for a, b, lab in ref_ents],
                 outside=[SpacySpan(ref, i, i + 1) for i in range(3) if i not in covered], default="unmodified")
    pred = Doc(nlp.vocab, words=["Ada", "Love", "lace", "met", "Bab", "bage"], spaces=[True, False, True, True, False, False])
    pred.ents = [SpacySpan(pred, a, b, lab) for a, b, lab in pred_ents]
    examples = [Example(pred, ref)]

    def run(o: dict[str, Any]) -> dict[str, Any]:
        report = score_examples(examples, **o)
        assert make_spans_scorer(**o)(examples) == spacy_scores(report, "ents")  # the scorer reads this report
        return report.to_dict()

    def rebuild(sig: str) -> dict[str, Any]:
        cfg = Config.from_signature(sig)
        return {"misaligned": cfg.misaligned, "missing": cfg.missing,
                **{k: v for k, v in as_options(cfg).items() if k in ("rule", "counting", "average", "beta")}}

    check(run, options, rebuild)


@FAST
@given(st.integers(0, 2**31 - 1), variants({"strategy": st.sampled_from(["first", "max", "average"]), **TAGS,
                                              **{k: CORE[k] for k in ("rule", "counting", "average", "mode")}},
                                            always={"strategy": ("max", "average")}))
def test_trainer_batch_and_hook(seed, options):
    from iescore.adapters.hf import trainer_batch
    from iescore.adapters.trainer import compute_metrics

    from iescore.render.flat import flat_metrics

    names = ["O", "B-A", "I-A", "B-B", "I-B"]
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(2, 7, len(names)))
    word_ids = [[None, 0, 0, 1, 2, 2, None], [None, 0, 1, 1, 1, 2, None]]
    labels = np.full((2, 7), -100)
    for b, wids in enumerate(word_ids):
        for pos, w in enumerate(wids):
            if w is not None and (pos == 0 or wids[pos - 1] != w):
                labels[b, pos] = rng.integers(len(names))

    def run(o: dict[str, Any]) -> dict[str, Any]:
        o = dict(o)
        strategy = o.pop("strategy", "first")
        s = Scorer(**o)
        s.add_batch(trainer_batch(logits, labels, id2label=names, word_ids=word_ids, strategy=strategy))
        report = s.report()
        if strategy == "first":  # the hook: first sub-words, as trainer_batch reads them without word_ids
            hook = compute_metrics(names, **o)((logits, labels))
            s = Scorer(**{"scheme": "auto", **o})
            s.add_batch(trainer_batch(logits, labels, id2label=names))
            assert hook == flat_metrics(s.report())
        return report.to_dict()

    def rebuild(sig: str) -> dict[str, Any]:
        cfg = Config.from_signature(sig)
        return {"strategy": cfg.subwords, "config": core_of(cfg)}

    check(run, options, rebuild)


def _flags(o: dict[str, Any]) -> list[str]:
    out = []
    for k, v in o.items():
        if k == "supertags":
            v = ",".join(f"{a}={b}" for a, b in v)
            if not v:
                continue
        elif k == "ser_weights":
            v = ",".join(repr(x) for x in v)
        out += [f"--{k.replace('_', '-')}", str(v)]
    return out


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tag_corpora(), st.booleans(),
       variants({**CORE, **TAGS, "documents": st.sampled_from(["auto", "docstart", "sentence"])},
                always={"documents": ("sentence",)}))
def test_cli_json(corpus, docstart, options):
    from iescore.cli import main

    ref, pred = corpus
    with tempfile.TemporaryDirectory() as tmp:
        gold, sys_ = os.path.join(tmp, "gold.conll"), os.path.join(tmp, "sys.conll")
        head = "-DOCSTART- O\n\n" if docstart else ""
        with open(gold, "w") as g, open(sys_, "w") as p:
            # every two sentences a -DOCSTART- section (when the file has them)
            g.write(head + "".join(("\n-DOCSTART- O\n" if docstart and k and k % 2 == 0 else "")
                                   + "".join(f"w {t}\n" for t in r) + "\n" for k, r in enumerate(ref)))
            p.write(head + "".join(("\n-DOCSTART- O\n" if docstart and k and k % 2 == 0 else "")
                                   + "".join(f"{t}\n" for t in s) + "\n" for k, s in enumerate(pred)))

        def run(o: dict[str, Any]) -> dict[str, Any]:
            out, err = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = main(["score", gold, sys_, "--format", "json", *_flags(o)])
            if code != 0:
                raise InputError(err.getvalue())
            result: dict[str, Any] = json.loads(out.getvalue())
            return result

        def rebuild(sig: str) -> dict[str, Any]:
            cfg = Config.from_signature(sig)
            return {**as_options(cfg), "scheme": cfg.scheme, "repair": cfg.repair, "documents": cfg.documents}

        check(run, options, rebuild)
