"""Recipe: what iescore tells about the CoNLL-2003 systems that a plain F1 hides.

    python -m recipes.conll2003 [--data DIR] [--out DIR] [--quick]
    python recipes/conll2003.py --quick

Loads the gold test set through ``datasets`` (local CoNLL files; ``--hub NAME`` loads a
hub data set instead when online), scores the 16 shared-task systems, the neural systems
and a small spaCy NER model trained here (with the iescore scorer in its config) under
several evaluation models -- exact segment F1 (= conlleval), contain(1), overlap(1,1),
any overlap, SER and ERR with S/D/I, and the token & separator model (TS-F1^M, T-F1^M) --
ranks the systems under each, reports how the ranks move and the Spearman correlation
between every pair of models (as Esuli & Sebastiani do), and counts "close matches"
(right label, boundaries off by one token). Writes ``report.md``, ``results.json`` and
PNG plots to the output folder.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    __package__ = "recipes"

import iescore
from iescore import Document, Scorer, Span
from iescore.io.conll import read_conll

from .common import (
    Meter,
    data_dir,
    md_table,
    progress,
    rankdata,
    recipe_parser,
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


def spacy_system(data: Path, out: Path, quick: bool) -> tuple[list[Document], list[list[Span]], dict[str, Any]]:
    """Train a small spaCy NER on eng.train (bounded) and predict eng.testb."""
    import spacy
    from spacy.tokens import Doc

    from iescore.schemes import decode_tags

    def sentences(path: Path, limit: int | None) -> list[tuple[tuple[str, ...], list[Span]]]:
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

    vocab = spacy.blank("en").vocab

    def docs(sents: list[tuple[tuple[str, ...], list[Span]]]) -> list[Any]:
        result = []
        for toks, spans in sents:
            d = Doc(vocab, words=list(toks))
            d.ents = [d.char_span(d[s.start].idx, d[s.end - 1].idx + len(d[s.end - 1]), label=s.label) for s in spans]
            result.append(d)
        return result

    train = sentences(data / "conll2003-eng" / "eng.train", 300 if quick else None)
    dev = sentences(data / "conll2003-eng" / "eng.testa", 100 if quick else 500)
    test = sentences(data / "conll2003-eng" / "eng.testb", 200 if quick else None)
    with Meter() as train_m:
        model_path = train_spacy_ner(docs(train), docs(dev), out / "spacy_ner",
                                     max_steps=20 if quick else 1200, max_epochs=1 if quick else 2)
    nlp = spacy.load(model_path)
    refs, preds = [], []
    with Meter() as pred_m:
        inputs = [Doc(nlp.vocab, words=list(t)) for t, _ in test]
        for k, (doc, (toks, spans)) in enumerate(zip(progress(nlp.pipe(inputs), "spaCy predicts eng.testb", len(inputs)), test)):
            refs.append(Document(f"testb#{k + 1}", toks, tuple(spans)))
            preds.append([Span(e.label_, e.start, e.end) for e in doc.ents])
    return refs, preds, {"train": train_m.to_dict(), "predict": pred_m.to_dict(), "train_sentences": len(train)}


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
    for path in sorted((data / "conll2003-neural-outputs-spanner").glob("conll03_spanNER_*.txt"))[: 1 if quick else None]:
        systems[f"neural/{path.stem}"] = parse_spanner(path)
    runtime = None
    if with_spacy:
        refs, preds, runtime = spacy_system(data, out, quick)
        systems["this-recipe/spacy-ner"] = (refs, preds)
    results = {name: score_all(sys_) for name, sys_ in progress(systems.items(), "scoring systems", len(systems))}
    names = list(results)
    models = list(MODELS)
    ranks: dict[str, dict[str, float | None]] = {}
    for m, (_, _, hib) in MODELS.items():
        defined = [n for n in names if results[n]["values"][m] is not None]
        r = dict(zip(defined, rankdata([results[n]["values"][m] for n in defined], hib).tolist()))
        ranks[m] = {n: r.get(n) for n in names}  # None: the measure is undefined for that system

    def pair(a: str, b: str) -> float:
        both = [n for n in names if results[n]["values"][a] is not None and results[n]["values"][b] is not None]
        sign = {m: (1 if MODELS[m][2] else -1) for m in (a, b)}
        return spearman([sign[a] * results[n]["values"][a] for n in both], [sign[b] * results[n]["values"][b] for n in both])

    corr = {a: {b: pair(a, b) for b in models} for a in models}
    summary = {"systems": results, "ranks": ranks, "spearman": corr, "runtime_spacy": runtime,
               "note": "the spaCy system is scored on the first 200 test sentences in --quick mode" if quick else ""}
    write_json(out / "results.json", summary)
    write_report(out, results, ranks, corr, runtime, quick)
    plots(out, results, ranks)
    return summary


def write_report(out: Path, results: dict, ranks: dict, corr: dict, runtime: Any, quick: bool) -> None:
    names = sorted(results, key=lambda n: ranks["F1 exact (conlleval)"][n])

    def rk(m: str, n: str) -> str:
        v, base = ranks[m][n], ranks[models[0]][n]
        if v is None:
            return "n/a"
        return f"{v:g}" if m == models[0] or base is None else f"{v:g} ({v - base:+g})"

    models = list(MODELS)
    short = {m: m.replace("F1 ", "").replace(" (conlleval)", "") for m in models}
    lines = ["# CoNLL-2003 English test (eng.testb): systems under several evaluation models", ""]
    if quick:
        lines += ["*Quick mode: a subset of the systems; the spaCy model is trained briefly and scored on 200 sentences.*", ""]
    lines += ["## Scores", "", md_table(["system"] + [short[m] for m in models] + ["close matches"],
              [[n] + [results[n]["values"][m] for m in models] + [results[n]["close_matches"]] for n in names])]
    lines += ["", "SER and ERR are error rates (lower is better); the others are F-measures.", ""]
    lines += ["## Ranks (1 = best) and shifts against exact F1", "",
              md_table(["system"] + [short[m] for m in models],
                       [[n] + [rk(m, n) for m in models] for n in names])]
    lines += ["", "## Spearman rank correlation between evaluation models (systems where both are defined)", "",
              md_table([""] + [short[m] for m in models], [[short[a]] + [corr[a][b] for b in models] for a in models])]
    no_ts = [n for n in names if results[n]["ts_error"]]
    if no_ts:
        lines += ["", "The token & separator model is undefined for: "
                  + "; ".join(f"{n} ({results[n]['ts_error']})" for n in no_ts)
                  + ". They are left out of the TS rankings and of the correlations with the TS measures.", ""]
    ts_order = sorted((n for n in results if ranks["TS-F1^M"][n] is not None), key=lambda n: ranks["TS-F1^M"][n])
    lines += ["", "## Ranking by TS-F1^M (token & separator model)", "",
              md_table(["rank", "system", "TS-F1^M", "exact F1 rank"],
                       [[f"{ranks['TS-F1^M'][n]:g}", n, results[n]["values"]["TS-F1^M"], f"{ranks[models[0]][n]:g}"] for n in ts_order])]
    lines += ["", "## Slot errors (exact rule)", "",
              md_table(["system", "C", "S", "D", "I", "SER", "ERR", "E"],
                       [[n] + [results[n]["slot_errors"][k] for k in ("C", "S", "D", "I", "ser", "err", "e")] for n in names])]
    if runtime:
        lines += ["", "## Runtime of the spaCy system trained by this recipe", "",
                  md_table(["phase", "CPU s", "wall s", "max RSS MB"],
                           [[k, v["cpu_s"], v["wall_s"], v["max_rss_mb"]] for k, v in runtime.items() if isinstance(v, dict)])]
    lines += ["", "Every number's signature is in `results.json`; plots: `rank_shifts.png`, `per_type_pr.png`.", ""]
    (out / "report.md").write_text("\n".join(lines))


def plots(out: Path, results: dict, ranks: dict) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(matplotlib not installed: no plots)", file=sys.stderr)
        return
    models = list(MODELS)
    names = list(results)
    fig, ax = plt.subplots(figsize=(11, 6))
    for n in names:
        ax.plot(range(len(models)), [ranks[m][n] if ranks[m][n] is not None else float("nan") for m in models],
                marker="o", label=n.split("/")[-1][:28])
    ax.set_xticks(range(len(models)), [m.replace(" (conlleval)", "") for m in models], rotation=20)
    ax.invert_yaxis()
    ax.set_ylabel("rank (1 = best)")
    ax.set_title("How system ranks move between evaluation models (CoNLL-2003 eng.testb)")
    ax.legend(fontsize=6, ncol=2, loc="center left", bbox_to_anchor=(1, 0.5))
    save_figure(fig, out / "rank_shifts.png")
    types = sorted({t for n in names for t in results[n]["per_type"]})
    fig, axes = plt.subplots(1, len(types), figsize=(4 * len(types), 4), sharex=True, sharey=True)
    for ax, t in zip(list(getattr(axes, "flat", [axes])), types):
        for n in names:
            e = results[n]["per_type"].get(t)
            if e and e["precision"] is not None and e["recall"] is not None:
                ax.scatter(e["recall"], e["precision"], s=18)
        ax.set_title(t)
        ax.set_xlabel("recall")
        ax.grid(alpha=0.3)
    list(getattr(axes, "flat", [axes]))[0].set_ylabel("precision")
    save_figure(fig, out / "per_type_pr.png", "Per-type precision and recall of every system (exact match)")


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
