"""Recipe: the CMU Seminar Announcements, end to end.

    python -m recipes.seminar [--data DIR] [--out DIR] [--quick]

Reads the corpus with the inline-tag adapter, trains a spaCy beam NER on the training split
(the iescore scorer in its config; bounded time; ``--quick`` for tests), predicts the test
split recording the extractor's CPU time and peak memory, and evaluates every slot (stime,
etime, speaker, location) in both settings (AO and OBD), under the exact, contain(1) and
overlap(1,1) rules, in match-all, match-best (the model's beam confidences) and
one-per-string modes, with SER, per-item statuses and micro / macro / weighted averages.
Writes ``report.md``, ``results.json``, ``statuses.json`` and PNG plots.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    __package__ = "recipes"

from iescore.adapters.inline import SEMINAR_SLOTS, read_seminar

from iescore import Document, Scorer, Span
from iescore.text import char_to_token_span

from .common import (
    PHASE_MEASURES,
    RUNTIME_HEADER,
    data_dir,
    md_table,
    progress,
    recipe_parser,
    run_phase,
    runtime_rows,
    save_figure,
    train_spacy_ner,
    write_json,
)

SETTINGS = ("AO", "OBD")
RULES = ("E", "C(1)", "O(1,1)")
MODES = ("match-all", "match-best", "one-per-string")


def to_spacy(nlp: Any, docs: list[Any]) -> list[Any]:
    """Inline documents as spaCy Docs (same blank English tokenizer) with the slots as ents."""
    out = []
    for d in docs:
        sd = nlp.make_doc(d.text)
        ents = []
        for lab, a, b in d.slots:
            sp = sd.char_span(a, b, label=lab, alignment_mode="expand")
            if sp is not None:
                ents.append(sp)
        from spacy.util import filter_spans

        sd.ents = filter_spans(ents)
        out.append(sd)
    return out


def predict(nlp: Any, docs: list[Any]) -> list[list[Span]]:
    """Predicted slots on the reference tokens, with beam confidences when the model has a beam."""
    ner = nlp.get_pipe("ner")
    beam = ner.cfg.get("beam_width", 1) > 1
    preds = []
    for d in progress(docs, "predicting test announcements", len(docs)):
        sd = nlp.make_doc(d.text)
        for name, proc in nlp.pipeline:
            if name == "ner":
                break
            sd = proc(sd)
        scores: dict[tuple[int, int, str], float] = {}
        if beam:
            beams = ner.predict([sd])
            ner.set_annotations([sd], beams)
            for (s, e, lab), sc in ner.scored_ents(beams)[0].items():
                scores[(s, e, lab if isinstance(lab, str) else nlp.vocab.strings[lab])] = float(sc)
        else:
            sd = ner(sd)
        assert d.document.char_offsets is not None
        spans = []
        for ent in sd.ents:
            hit = char_to_token_span(d.document.char_offsets, ent.start_char, ent.end_char, misaligned="expand")
            if hit is None:
                continue
            spans.append(Span(ent.label_, hit[0], hit[1], scores.get((ent.start, ent.end, ent.label_), 1.0) if beam else None))
        preds.append(spans)
    return preds


def train_phase(train: list[Any], dev: list[Any], out: Path, quick: bool) -> Path:
    """The training phase (run in a process of its own): spaCy Docs of the announcements, then a
    beam NER trained on them; returns the model's path."""
    import spacy

    nlp0 = spacy.blank("en")
    return train_spacy_ner(to_spacy(nlp0, train), to_spacy(nlp0, dev), out / "spacy_ner", beam=True,
                           max_steps=15 if quick else 600, max_epochs=1 if quick else 20, rule="O(1,1)")


def predict_phase(model_path: Path, docs: list[Any]) -> list[list[Span]]:
    """The prediction phase (run in a process of its own): load the model and predict the slots."""
    import spacy

    return predict(spacy.load(model_path), docs)


def evaluate(refs: list[Document], preds: list[list[Span]]) -> dict[str, Any]:
    results: dict[str, Any] = {}
    for setting in SETTINGS:
        for rule in RULES:
            for mode in MODES:
                s = Scorer(setting=setting, rule=rule, mode=mode, normaliser="lower" if setting == "OBD" else "identity")
                s.add(reference=refs, prediction=preds)
                r = s.report()
                d = r.to_dict()
                results[f"{setting}|{rule}|{mode}"] = {
                    "signature": r.signature,
                    "per_slot": {lab: {k: e[k] for k in ("precision", "recall", "f1", "tp", "fp", "fn", "support", "ser")}
                                 for lab, e in d["per_label"].items()},
                    "averages": {k: {m: v for m, v in d["averages"][k].items() if m in ("precision", "recall", "f1")}
                                 for k in ("micro", "macro", "weighted")},
                    "slot_errors": d["slot_errors"],
                    "statuses": {side: _status_counts(r, side) for side in ("reference", "prediction")},
                    "_report": r,
                }
    return results


def _status_counts(report: Any, side: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for item in report.items(side):
        out[item["status"]] = out.get(item["status"], 0) + 1
    return out


def run(data: Path, out: Path, *, quick: bool = False) -> dict[str, Any]:
    out.mkdir(parents=True, exist_ok=True)
    corpus = read_seminar(str(data / "cmu-seminar-announcements"), tokenizer="spacy")
    train = [d for d in corpus if d.id.startswith("training/")]
    test = [d for d in corpus if d.id.startswith("test/")]
    if quick:
        train, test = train[:40], test[:20]
    dev_n = max(5, len(train) // 10)
    model, train_m = run_phase(train_phase, train[dev_n:], train[:dev_n], out, quick)
    preds, pred_m = run_phase(predict_phase, model, test)
    refs = [d.document for d in test]
    results = evaluate(refs, preds)
    runtime = {"train": train_m, "predict": pred_m,
               "train_docs": len(train) - dev_n, "test_docs": len(test),
               "test_tokens": sum(len(d.tokens) for d in refs),
               "measures": PHASE_MEASURES + "; train: build the Docs and train, predict: load the model and "
               "predict the test announcements"}
    statuses = {key: list(results[key]["_report"].items("prediction")) + list(results[key]["_report"].items("reference"))
                for key in ("AO|E|match-all", "AO|E|match-best", "OBD|O(1,1)|match-best")}
    write_json(out / "statuses.json", statuses)
    clean = {k: {kk: vv for kk, vv in v.items() if kk != "_report"} for k, v in results.items()}
    write_json(out / "results.json", {"results": clean, "runtime": runtime, "quick": quick})
    write_report(out, clean, runtime, quick)
    plots(out, clean)
    return {"results": clean, "runtime": runtime}


def write_report(out: Path, results: dict, runtime: dict, quick: bool) -> None:
    lines = ["# CMU Seminar Announcements: a spaCy beam NER evaluated per slot", ""]
    if quick:
        lines += ["*Quick mode: 40 training and 20 test announcements, a few training steps.*", ""]
    lines += ["## Runtime of the extractor", "",
              md_table(RUNTIME_HEADER, runtime_rows(runtime)),
              "", "Measured so: " + runtime["measures"] + ".",
              "", f"{runtime['train_docs']} training and {runtime['test_docs']} test announcements "
              f"({runtime['test_tokens']} test tokens).", ""]
    for setting in SETTINGS:
        lines += [f"## {setting}: F1 per slot", ""]
        rows = []
        for rule in RULES:
            for mode in MODES:
                r = results[f"{setting}|{rule}|{mode}"]
                rows.append([rule, mode] + [r["per_slot"].get(s, {}).get("f1") for s in SEMINAR_SLOTS]
                            + [r["averages"][a]["f1"] for a in ("micro", "macro", "weighted")]
                            + [r["slot_errors"]["ser"]])
        lines += [md_table(["rule", "mode", *SEMINAR_SLOTS, "micro F1", "macro F1", "weighted F1", "SER"], rows), ""]
    mb = results["AO|E|match-best"]["statuses"]
    lines += ["## Per-item statuses (AO, exact, match-best)", "",
              md_table(["side", "TP", "FP", "FN", "ignored", "alternative"],
                       [[side] + [mb[side].get(k, 0) for k in ("TP", "FP", "FN", "ignored", "alternative")] for side in mb]),
              "", "Every item with its status is in `statuses.json`; every number's signature in `results.json`.", ""]
    (out / "report.md").write_text("\n".join(lines))


def plots(out: Path, results: dict) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    width = 0.25
    for ax, setting in zip(axes, SETTINGS):
        for k, rule in enumerate(RULES):
            r = results[f"{setting}|{rule}|match-all"]["per_slot"]
            ax.bar([i + k * width for i in range(len(SEMINAR_SLOTS))],
                   [r.get(s, {}).get("f1") or 0.0 for s in SEMINAR_SLOTS], width, label=rule)
        ax.set_xticks([i + width for i in range(len(SEMINAR_SLOTS))], SEMINAR_SLOTS)
        ax.set_ylim(0, 1)  # F1 is in [0, 1]: no negative axis when every bar is 0 (a --quick model)
        if not any(results[f"{setting}|{rule}|match-all"]["per_slot"].get(s, {}).get("f1") for rule in RULES
                   for s in SEMINAR_SLOTS):
            ax.text(0.5, 0.5, "F1 = 0 for every slot and rule", transform=ax.transAxes, ha="center", color="0.4")
        ax.set_title(f"{setting}, match-all")
        ax.grid(axis="y", alpha=0.3)
    axes[0].set_ylabel("F1")
    axes[0].legend()
    save_figure(fig, out / "slots_f1.png", "Seminar Announcements: F1 per slot by matching rule")


def main(argv: list[str] | None = None) -> int:
    ap = recipe_parser(__doc__, out="out/seminar", quick="a small subset and a few training steps (for tests)")
    args = ap.parse_args(argv)
    run(data_dir(args.data), Path(args.out), quick=args.quick)
    print(f"wrote {args.out}/report.md, results.json, statuses.json and slots_f1.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
