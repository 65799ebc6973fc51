"""Recipe: what iescore tells about the CoNLL-2003 systems that a plain F1 hides.

    python -m recipes.conll2003 [--data DIR] [--out DIR] [--quick]
    python recipes/conll2003.py --quick

Loads the gold test set through ``datasets`` (local CoNLL files; ``--hub NAME`` loads a
hub data set instead when online), scores the 16 shared-task systems, the neural systems
and a small spaCy NER model trained here (with the iescore scorer in its config) under
several evaluation models -- exact segment F1 (= conlleval), contain(1), overlap(1,1),
any overlap, SER and ERR with S/D/I, and the token & separator model (TS-F1^M, T-F1^M) --
ranks the systems under each, reports how the ranks move and the Spearman correlation
between every pair of models (as Esuli & Sebastiani do), counts "close matches"
(right label, boundaries off by one token), and tells which of the published differences
are real: paired approximate randomization tests over the -DOCSTART- documents of eng.testb,
under exact F1 and TS-F1^M, with bootstrap intervals and significance groups
(``iescore.stats.compare``). Writes
``report.md``, ``results.json`` and PNG plots (a forest plot of the intervals among them)
to the output folder.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    __package__ = "recipes"

import iescore
from iescore import Document, Scorer, Span, TaggedBatch, stats
from iescore.decode import TagArrays, Vocabulary
from iescore.io.conll import read_conll

from .common import (
    PHASE_MEASURES,
    RUNTIME_HEADER,
    RankComparison,
    compare_rankings,
    data_dir,
    md_table,
    progress,
    recipe_parser,
    run_phase,
    runtime_rows,
    save_figure,
    spearman,
    train_spacy_ner,
    write_json,
)

TEAMS = (
    "bender carrerasa carrerasb chieu curran demeulder florian hammerton hendrickx "
    "klein mayfield mccallum munro whitelaw wu zhang"
).split()

# evaluation model -> (scoring options, measure, higher is better)
MODELS: dict[str, tuple[dict[str, Any], str, bool]] = {
    "F1 exact (conlleval)": ({"rule": "E"}, "f1", True),
    "F1 contain(1)": ({"rule": "C(1)"}, "f1", True),
    "F1 overlap(1,1)": ({"rule": "O(1,1)"}, "f1", True),
    "F1 any overlap": ({"rule": "O(inf,inf)"}, "f1", True),
    "SER": ({"rule": "E"}, "ser", False),
    "ERR": ({"rule": "E"}, "err", False),
    "TS-F1^M": ({"rule": "E"}, "ts", True),
    "T-F1^M": ({"rule": "E"}, "t", True),
}


BASE = "F1 exact (conlleval)"  # rank shifts are taken against this model

# the paired comparisons: evaluation model -> the iescore.stats measure that is its value
SIGNIFICANCE = {"F1 exact (conlleval)": "f1", "TS-F1^M": "ts_f1_macro"}
SIG_RESAMPLES, SIG_SEED, SIG_ALPHA = 1000, 2003, 0.05
SIG_TEST = "ar"  # approximate randomization: the better calibrated of compare's paired tests


def why_left_out(result: dict[str, Any], models: tuple[str, ...]) -> str:
    """Why a system has no rank: the models under which it has no value, and the reason given."""
    reason = f"no {', '.join(models)} value"
    return f"{reason}: {result['ts_error']}" if result["ts_error"] else reason


def parse_spanner(path: Path) -> tuple[list[Document], list[list[Span]]]:
    """SpanNER's span format: a sentence, then TAB-separated ``text:: s,e:: GOLD:: PRED`` items."""
    refs, preds = [], []
    for k, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
        if not line.strip() or line.split("\t")[0].strip() == "-DOCSTART-":
            continue
        parts = line.split("\t")
        tokens = tuple(parts[0].split())
        gold, pred = [], []
        for item in parts[1:]:
            if not item.strip():
                continue
            fields = [f.strip() for f in item.split("::")]
            if len(fields) < 4:
                raise iescore.InputError(f"{path}:{k + 1}: item {item!r} is not 'text:: s,e:: GOLD:: PRED'")
            s, e = (int(x) for x in fields[-3].split(","))
            if fields[-2] != "O":
                gold.append(Span(fields[-2], s, e))
            if fields[-1] != "O":
                pred.append(Span(fields[-1], s, e))
        refs.append(Document(f"{path.stem}#{k + 1}", tokens, tuple(gold)))
        preds.append(pred)
    return refs, preds


def on_testb_documents(batch: TaggedBatch, layout: TaggedBatch, name: str) -> TaggedBatch:
    """``batch`` cut into the -DOCSTART- documents of ``layout`` (eng.testb read with a shared-task
    output), with eng.testb's document ids, so that every system is scored on the same documents.

    An output without -DOCSTART- lines is read as one document per sentence; it is regrouped
    here, after checking that it has eng.testb's tokens and sentences (its gold is checked by
    ``stats.compare``: the reference digest of the signature).
    """
    if batch.n_tokens != layout.n_tokens or list(batch.tokens or []) != list(layout.tokens or []) \
            or not (batch.reference.first == layout.reference.first).all():
        raise iescore.InputError(f"{name}: its tokens or sentences are not those of eng.testb "
                                 f"({batch.n_tokens} tokens, {layout.n_tokens} in eng.testb)")
    return dataclasses.replace(batch, doc_offsets=layout.doc_offsets, doc_ids=layout.doc_ids,
                               extra=layout.extra, options=layout.options)


def spans_on_testb(layout: TaggedBatch, gold_tags: list[str], preds: list[list[Span]]) -> TaggedBatch:
    """Per-sentence predicted spans (the spaCy system's) as IOB2 tags on eng.testb's documents."""
    first = layout.reference.first
    starts = [i for i, f in enumerate(first.tolist()) if f]
    if len(starts) != len(preds):
        raise iescore.InputError(f"{len(preds)} predicted sentences for the {len(starts)} of eng.testb")
    tags = ["O"] * layout.n_tokens
    for a, spans in zip(starts, preds):
        for sp in spans:
            tags[a + sp.start:a + sp.end] = [f"B-{sp.label}"] + [f"I-{sp.label}"] * (sp.end - sp.start - 1)
    v = Vocabulary()
    return dataclasses.replace(layout, vocab=v, reference=TagArrays(v.encode(gold_tags), first),
                               prediction=TagArrays(v.encode(tags), first), where=None)


def significance(batches: dict[str, TaggedBatch], results: dict[str, Any]) -> dict[str, stats.Comparison]:
    """Paired tests over the documents (``SIG_TEST``), per model of ``SIGNIFICANCE``: the systems that
    have the measure, against the best of them; bootstrap intervals, Holm-adjusted p-values and groups."""
    reports = {}
    for name, batch in batches.items():
        s = Scorer(rule="E", scheme="IOB1")  # conlleval's decoding: the same chunks from IOB1 and IOB2 tags
        s.add_batch(batch)
        reports[name] = s.report()
    out = {}
    for model, measure in SIGNIFICANCE.items():
        have = {n: r for n, r in reports.items() if results[n]["values"][model] is not None}
        if not have:
            continue
        best = max(have, key=lambda n: results[n]["values"][model])
        shown = (measure,) if measure != "f1" else ("f1", "precision", "recall")
        c = stats.compare(have, baseline=best, test=SIG_TEST, resamples=SIG_RESAMPLES, seed=SIG_SEED,
                          measure=measure, measures=shown, alpha=SIG_ALPHA)
        for row in c.systems:  # regrouped into documents, a system keeps the value of the tables
            if row[measure] is None or abs(row[measure] - results[row["name"]]["values"][model]) > 1e-12:
                raise iescore.InputError(f"{row['name']}: {model} {row[measure]} on eng.testb's -DOCSTART- "
                                         f"documents, {results[row['name']]['values'][model]} in the tables")
        out[model] = c
    return out


def gold_through_datasets(testb: Path, hub: str | None) -> tuple[list[list[str]], list[list[str]]]:
    from iescore.adapters.hf import dataset_tags, load_conll_dataset

    if hub:
        import datasets

        ds = datasets.load_dataset(hub, split="test")
    else:
        ds = load_conll_dataset(str(testb))
    return dataset_tags(ds)


def score_all(system: Any, quick_docs: int | None = None) -> dict[str, Any]:
    """All evaluation models for one system (a TaggedBatch or (documents, spans))."""
    out: dict[str, Any] = {}
    reports = {}
    for rule in ("E", "C(1)", "O(1,1)", "O(inf,inf)", "O(0,1)"):
        s = Scorer(rule=rule, scheme="auto")
        if isinstance(system, tuple):
            s.add(reference=system[0], prediction=system[1])
        else:
            s.add_batch(system)
        reports[rule] = s.report()
    ex = reports["E"].to_dict()
    ts = ex["ts"] or {}
    values = {
        "F1 exact (conlleval)": ex["overall"]["f1"],
        "F1 contain(1)": reports["C(1)"].to_dict()["overall"]["f1"],
        "F1 overlap(1,1)": reports["O(1,1)"].to_dict()["overall"]["f1"],
        "F1 any overlap": reports["O(inf,inf)"].to_dict()["overall"]["f1"],
        "SER": ex["slot_errors"]["ser"],
        "ERR": ex["slot_errors"]["err"],
        "TS-F1^M": ts.get("f1_macro"),
        "T-F1^M": ts.get("token_f1_macro"),
    }
    tp = {r: reports[r].overall.tp for r in reports}
    out["values"] = values
    out["close_matches"] = tp["C(1)"] + tp["O(0,1)"] - 2 * tp["E"]
    out["slot_errors"] = ex["slot_errors"]
    out["per_type"] = {lab: {k: e[k] for k in ("precision", "recall", "f1", "support")} for lab, e in ex["per_label"].items()}
    out["token_accuracy"] = ex["token_accuracy"]
    out["signatures"] = {r: reports[r].signature for r in reports}
    out["ts_error"] = ex["ts_error"]
    return out


Sentence = tuple[tuple[str, ...], list[Span]]  # tokens and gold spans


def spacy_docs(vocab: Any, sents: list[Sentence]) -> list[Any]:
    """spaCy Docs of the sentences' tokens with the gold spans as ents."""
    from spacy.tokens import Doc

    result = []
    for toks, spans in sents:
        d = Doc(vocab, words=list(toks))
        d.ents = [d.char_span(d[s.start].idx, d[s.end - 1].idx + len(d[s.end - 1]), label=s.label) for s in spans]
        result.append(d)
    return result


def train_phase(train: list[Sentence], dev: list[Sentence], out: Path, quick: bool) -> Path:
    """The training phase (run in a process of its own): build the Docs and train; returns the model."""
    import spacy

    vocab = spacy.blank("en").vocab
    return train_spacy_ner(spacy_docs(vocab, train), spacy_docs(vocab, dev), out / "spacy_ner",
                           max_steps=20 if quick else 1200, max_epochs=1 if quick else 2)


def predict_phase(model_path: Path, sentences: list[tuple[str, ...]]) -> list[list[Span]]:
    """The prediction phase (run in a process of its own): load the model and tag the sentences."""
    import spacy
    from spacy.tokens import Doc

    nlp = spacy.load(model_path)
    inputs = [Doc(nlp.vocab, words=list(t)) for t in sentences]
    return [[Span(e.label_, e.start, e.end) for e in doc.ents]
            for doc in progress(nlp.pipe(inputs), "spaCy predicts eng.testb", len(inputs))]


def spacy_system(data: Path, out: Path, quick: bool) -> tuple[list[Document], list[list[Span]], dict[str, Any]]:
    """Train a small spaCy NER on eng.train (bounded) and predict eng.testb, each phase measured
    in a fresh process (``run_phase``)."""
    from iescore.decode import decode_tags

    def sentences(path: Path, limit: int | None) -> list[Sentence]:
        batch = read_conll(str(path), str(path))  # the gold column twice: we only need gold
        starts = [i for i, f in enumerate(batch.reference.first.tolist()) if f] + [batch.n_tokens]
        out = []
        tags = batch.vocab.tags
        toks = batch.tokens or []
        for a, b in list(zip(starts, starts[1:]))[:limit]:
            seq = [tags[i] for i in batch.reference.ids[a:b]]
            ch = decode_tags([seq], scheme="IOB1")
            spans = [Span(ch.labels[t], int(s), int(e)) for t, s, e in zip(ch.type, ch.start, ch.end)]
            out.append((tuple(toks[a:b]), spans))
        return out

    train = sentences(data / "conll2003-eng" / "eng.train", 300 if quick else None)
    dev = sentences(data / "conll2003-eng" / "eng.testa", 100 if quick else 500)
    test = sentences(data / "conll2003-eng" / "eng.testb", 200 if quick else None)
    model_path, train_m = run_phase(train_phase, train, dev, out, quick)
    preds, pred_m = run_phase(predict_phase, model_path, [t for t, _ in test])
    refs = [Document(f"testb#{k + 1}", toks, tuple(spans)) for k, (toks, spans) in enumerate(test)]
    return refs, preds, {"train": train_m, "predict": pred_m, "train_sentences": len(train),
                         "measures": PHASE_MEASURES
                         + "; train: build the Docs and train, predict: load the model and tag the test sentences"}


def run(data: Path, out: Path, *, quick: bool = False, hub: str | None = None, with_spacy: bool = True) -> dict[str, Any]:
    out.mkdir(parents=True, exist_ok=True)
    testb = data / "conll2003-eng" / "eng.testb"
    g_tokens, g_tags = gold_through_datasets(testb, hub)
    systems: dict[str, Any] = {}
    shared = data / "conll2003-shared-task-outputs" / "results"
    teams = TEAMS[:3] if quick else TEAMS
    for team in teams:
        systems[f"shared-task/{team}"] = read_conll(str(testb), str(shared / team / "eng.testb"))
    # the gold read through datasets is the gold every system is scored against
    first = systems[f"shared-task/{teams[0]}"]
    tags = first.vocab.tags
    flat_gold = [tags[i] for i in first.reference.ids]
    assert flat_gold == [t for s in g_tags for t in s], "datasets and the CoNLL reader disagree on the gold"
    neural = sorted((data / "conll2003-neural-outputs-interpreteval").glob("conn*.txt")) + sorted(
        p for p in (data / "conll2003-neural-outputs-spanner").glob("conll03_C*.txt"))
    for path in neural[:2] if quick else neural:
        systems[f"neural/{path.stem}"] = read_conll(str(path))
    # the paired tests need every system on the same documents: eng.testb's -DOCSTART- documents
    on_docs = {n: b if n.startswith("shared-task/") else on_testb_documents(b, first, n) for n, b in systems.items()}
    sig_left_out = {}
    for path in sorted((data / "conll2003-neural-outputs-spanner").glob("conll03_spanNER_*.txt"))[: 1 if quick else None]:
        systems[f"neural/{path.stem}"] = parse_spanner(path)
        sig_left_out[f"neural/{path.stem}"] = (
            "scored from its span file, one document per sentence, with overlapping predicted spans that "
            "a tag sequence on eng.testb's documents cannot hold; no TS-F1^M")
    runtime = None
    if with_spacy:
        refs, preds, runtime = spacy_system(data, out, quick)
        systems["this-recipe/spacy-ner"] = (refs, preds)
        if len(refs) == int(first.reference.first.sum()):
            on_docs["this-recipe/spacy-ner"] = spans_on_testb(first, flat_gold, preds)
        else:
            sig_left_out["this-recipe/spacy-ner"] = f"scored on {len(refs)} test sentences only (--quick)"
    results = {name: score_all(sys_) for name, sys_ in progress(systems.items(), "scoring systems", len(systems))}
    sig = significance(on_docs, results)
    comparison = compare_rankings({n: r["values"] for n, r in results.items()},
                                  {m: hib for m, (_, _, hib) in MODELS.items()}, BASE)
    left_out = {n: why_left_out(results[n], ms) for n, ms in comparison.left_out.items()}
    ranked = comparison.systems

    def pair(a: str, b: str) -> float:
        sign = {m: (1 if MODELS[m][2] else -1) for m in (a, b)}
        return spearman([sign[a] * results[n]["values"][a] for n in ranked],
                        [sign[b] * results[n]["values"][b] for n in ranked])

    models = list(MODELS)
    corr = {a: {b: pair(a, b) for b in models} for a in models}
    ranks = {m: {n: comparison.ranks[m].get(n) for n in results} for m in models}  # None: left out
    summary = {"systems": results, "ranks": ranks, "rank_shifts": comparison.shifts, "ranked_systems": list(ranked),
               "left_out_of_rankings": left_out, "spearman": corr, "runtime_spacy": runtime,
               "note": "the spaCy system is scored on the first 200 test sentences in --quick mode" if quick else "",
               "significance": {m: {**c.to_dict(), "pairwise": dict(c.pairwise)} for m, c in sig.items()},
               "significance_left_out": sig_left_out,
               "significance_unit": f"the {len(first.doc_ids)} -DOCSTART- documents of eng.testb"}
    write_json(out / "results.json", summary)
    write_report(out, results, comparison, left_out, corr, runtime, quick, sig, sig_left_out, len(first.doc_ids))
    plots(out, results, comparison, summary["significance"])
    return summary


def by_group(c: stats.Comparison) -> list[list[dict[str, Any]]]:
    """The rows of a comparison group by group (1 first), best first within a group."""
    rows = sorted(c.systems, key=lambda r: (r["group"], -r[c.measure]))
    return [[r for r in rows if r["group"] == g] for g in sorted({r["group"] for r in rows})]


def significance_lines(model: str, c: stats.Comparison) -> list[str]:
    """The report's statement and table for one model's comparison."""
    groups = by_group(c)
    n, top = len(c.systems), groups[0]
    worse = [r for r in c.systems if r["significant"]]
    pct = f"{100 * c.level:g}%"
    say = [f"Against the best system, **{c.baseline}** ({top[0][c.measure]:.4f}): "
           + (f"the next {'system is' if len(top) == 2 else f'{len(top) - 1} are'} not significantly different "
              "from it (group 1: " + ", ".join(r["name"] for r in top[1:]) + ")" if len(top) > 1 else
              "every other system is significantly different from it")
           + f"; {len(worse)} of the other {n - 1} are significantly worse after Holm's correction."]
    say += [f"The {n} systems fall into {len(groups)} groups: "
            + "; ".join(f"{g[0]['group']}: " + ", ".join(r["name"].split("/")[-1] for r in g) for g in groups) + "."]
    table = md_table(["rank", "system", model, f"{pct} interval", "p vs best", "p (Holm)", "group"],
                     [[k + 1, r["name"], r[c.measure], f"[{r[c.measure + '_ci'][0]:.4f}, {r[c.measure + '_ci'][1]:.4f}]",
                       "-" if r["p_value"] is None else f"{r['p_value']:.3f}",
                       "-" if r["p_value_holm"] is None else f"{r['p_value_holm']:.3f}", r["group"]]
                      for k, r in enumerate(sorted(c.systems, key=lambda r: -r[c.measure]))])
    return [f"### {model} ({n} systems)", "", *say, "", table, ""]


def write_report(out: Path, results: dict, comparison: RankComparison, left_out: dict[str, str], corr: dict,
                 runtime: Any, quick: bool, sig: dict[str, stats.Comparison], sig_left_out: dict[str, str],
                 n_docs: int) -> None:
    models = list(MODELS)
    short = {m: m.replace("F1 ", "").replace(" (conlleval)", "") for m in models}
    ranked = sorted(comparison.systems, key=lambda n: comparison.ranks[BASE][n])
    names = ranked + sorted(left_out, key=lambda n: -results[n]["values"][BASE])

    def rk(m: str, n: str) -> str:
        v = comparison.ranks[m][n]
        return f"{v:g}" if m == BASE else f"{v:g} ({comparison.shifts[m][n]:+g})"

    lines = ["# CoNLL-2003 English test (eng.testb): systems under several evaluation models", ""]
    if quick:
        lines += ["*Quick mode: a subset of the systems; the spaCy model is trained briefly and scored on 200 sentences.*", ""]
    lines += ["## Scores", "", md_table(["system"] + [short[m] for m in models] + ["close matches"],
              [[n] + [results[n]["values"][m] for m in models] + [results[n]["close_matches"]] for n in names])]
    lines += ["", "SER and ERR are error rates (lower is better); the others are F-measures.", ""]
    lines += [f"## Ranks (1 = best) and shifts against exact F1, among the {len(ranked)} systems ranked under every model",
              "", md_table(["system"] + [short[m] for m in models], [[n] + [rk(m, n) for m in models] for n in ranked])]
    if left_out:
        lines += ["", f"Left out of the rankings, the shifts, the correlations and the rank plot ({len(left_out)} of "
                  f"{len(results)} systems), so that every ranking is of the same systems: "
                  + "; ".join(f"{n} ({why})" for n, why in left_out.items()) + "."]
    lines += ["", f"## Spearman rank correlation between evaluation models (the same {len(ranked)} systems)", "",
              md_table([""] + [short[m] for m in models], [[short[a]] + [corr[a][b] for b in models] for a in models])]
    ts_order = sorted(ranked, key=lambda n: comparison.ranks["TS-F1^M"][n])
    lines += ["", f"## Ranking by TS-F1^M (token & separator model), the same {len(ranked)} systems", "",
              md_table(["rank", "system", "TS-F1^M", "exact F1 rank", "shift"],
                       [[f"{comparison.ranks['TS-F1^M'][n]:g}", n, results[n]["values"]["TS-F1^M"],
                         f"{comparison.ranks[BASE][n]:g}", f"{comparison.shifts['TS-F1^M'][n]:+g}"] for n in ts_order])]
    lines += ["", "## Slot errors (exact rule)", "",
              md_table(["system", "C", "S", "D", "I", "SER", "ERR", "E"],
                       [[n] + [results[n]["slot_errors"][k] for k in ("C", "S", "D", "I", "ser", "err", "e")] for n in names])]
    c0 = next(iter(sig.values()))
    lines += ["", "## Which differences are real: paired tests over the documents", "",
              f"Resampling unit: the {n_docs} -DOCSTART- documents of eng.testb (the outputs without -DOCSTART- "
              "lines, read one document per sentence, are regrouped into them; the spaCy system's sentences too). "
              f"p: {c0.test_name} against the best system, {c0.resamples:,} resamples, seed {c0.seed} "
              "(unadjusted; Holm-adjusted over the systems compared); intervals: paired bootstrap of the documents, "
              f"{c0.resamples:,} resamples, {c0.method} {100 * c0.level:g}%. "
              "Groups: sorted by the measure, a system joins the group of the group's first system unless their "
              f"paired test (unadjusted, alpha = {c0.alpha:g}) finds them different.", ""]
    if sig_left_out:
        lines += ["Left out of the comparisons: " + "; ".join(f"{n} ({why})" for n, why in sig_left_out.items())
                  + ". The systems without a TS-F1^M value are left out of its comparison.", ""]
    for model, c in sig.items():
        lines += significance_lines(model, c)
    lines += ["The intervals and groups are drawn in `significance.png`.", ""]
    if runtime:
        lines += ["", "## Runtime of the spaCy system trained by this recipe", "",
                  md_table(RUNTIME_HEADER, runtime_rows(runtime)), "",
                  "Measured so: " + runtime["measures"] + "."]
    lines += ["", "Every number's signature is in `results.json`; plots: `rank_shifts.png`, `per_type_pr.png`, `significance.png`.", ""]
    (out / "report.md").write_text("\n".join(lines))


def forest_plot(path: Path, sig: dict[str, dict[str, Any]]) -> None:
    """From the comparisons as in ``results.json`` (``Comparison.to_dict()`` by model), one
    :func:`iescore.plot.forest` panel per model: a row per system sorted by the measure (best on
    top), its interval, its value coloured by significance group (``G<k>`` at the right), every
    other group on a grey band; the dashed line is the best system's value."""
    import matplotlib.pyplot as plt

    from iescore import plot

    n = max(len(c["systems"]) for c in sig.values())
    fig, axes = plt.subplots(1, len(sig), figsize=(8 * len(sig), 1.2 + 0.3 * n), squeeze=False)
    for ax, (model, c) in zip(axes[0], sig.items()):
        plot.forest(c, ax=ax, title=f"{model}: groups G1, G2 ... (G1: not significantly different from the best)")
        ax.set_xlabel(f"{model}: value and {100 * c['level']:g}% bootstrap interval ({c['resamples']} paired resamples "
                      "of documents)")
    c0 = next(iter(sig.values()))
    save_figure(fig, path, f"Which differences are real (CoNLL-2003 eng.testb; groups: {c0['test_name']})")


def plots(out: Path, results: dict, comparison: RankComparison, sig: dict[str, dict[str, Any]]) -> None:
    """rank_shifts.png (:func:`iescore.plot.rank_bump`), per_type_pr.png
    (:func:`iescore.plot.per_label_pr`) and significance.png (:func:`forest_plot`)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
    except ImportError:
        print("(matplotlib not installed: no plots)", file=sys.stderr)
        return
    from iescore import plot

    ranks = {m.replace(" (conlleval)", ""): comparison.ranks[m] for m in MODELS}
    fig = plot.rank_bump(ranks, short=lambda n: n.split("/")[-1],
                         title="How system ranks move between evaluation models (CoNLL-2003 eng.testb)")
    if comparison.left_out:
        fig.text(0.01, 0.035, "left out (no value under " + ", ".join(sorted({m for ms in comparison.left_out.values()
                                                                              for m in ms}))
                 + "): " + ", ".join(n.split("/")[-1] for n in comparison.left_out), fontsize=7)
    fig.savefig(out / "rank_shifts.png", dpi=110)
    matplotlib.pyplot.close(fig)
    fig = plot.per_label_pr({n: r["per_type"] for n, r in results.items()},
                            title=f"Per-type precision and recall of {len(results)} systems (exact match)")
    save_figure(fig, out / "per_type_pr.png")
    forest_plot(out / "significance.png", sig)


def main(argv: list[str] | None = None) -> int:
    ap = recipe_parser(__doc__, out="out/conll2003", quick="a few systems and a briefly trained spaCy model (for tests)")
    ap.add_argument("--hub", help="load the gold test split from this hub data set instead of the local file")
    ap.add_argument("--no-spacy", action="store_true", help="skip training the spaCy model")
    args = ap.parse_args(argv)
    summary = run(data_dir(args.data), Path(args.out), quick=args.quick, hub=args.hub, with_spacy=not args.no_spacy)
    print(f"wrote {args.out}/report.md, results.json and plots ({len(summary['systems'])} systems)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
