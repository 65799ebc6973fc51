"""Speed and memory of iescore beside seqeval, nervaluate and spaCy, on the same data.

    python bench/run.py                 # 50k, 500k and 5M synthetic tokens + CoNLL-2003 testb
    python bench/run.py --quick         # 50k only, one round (a smoke test)

Writes ``bench/out/results.json``, ``bench/out/table.md`` and ``bench/out/speed.png``.
Every tool is first checked to agree on exact micro F1; then the tools run interleaved,
``--rounds`` times (a fast call is repeated within a round, about 0.3 s of calls, and
its mean taken), and the table reports medians over rounds, throughput, the ratio of each peer's
time to iescore's, the scaling exponent b (t ~ n^b) and the peak extra memory of one
call (measured in a fresh process: VmHWM after the call minus RSS before it, with the
kernel's peak counter reset first). Preparation that a user would do once (building spaCy
Examples, integer arrays) is not timed.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import statistics
import subprocess
import sys
import time
import warnings
from collections.abc import Callable
from functools import partial
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from data import TYPES, corpus

NAMES = ["O"] + [f"{b}-{t}" for t in TYPES for b in "BI"]


# --- tools: prepare(gold, pred) -> state (untimed); run(state) -> exact micro F1 --------------

def _iescore_strings(detail):
    def prep(g, p):
        return g, p

    def run(st):
        import iescore

        r = iescore.score_tags(reference=st[0], prediction=st[1], scheme="IOB2", detail=detail)
        return r.f or 0.0

    return prep, run


def _iescore_full_overlap():
    def prep(g, p):
        return g, p

    def run(st):
        import iescore

        # the full report under another model (overlap rule, one-to-one) -- its F differs,
        # so agreement is checked on the exact micro F1 of the same call's counts
        r = iescore.score_tags(reference=st[0], prediction=st[1], scheme="IOB2", rule="O(1,1)", counting="one-to-one")
        assert r.to_dict()["ts"] is not None and r.to_dict()["slot_errors"] is not None
        return None

    return prep, run


def _iescore_full_rule(rule):
    def prep(g, p):
        return g, p

    def run(st):
        import iescore

        # the full report under a rule by share, one-to-one (timed beside O(1,1) above)
        r = iescore.score_tags(reference=st[0], prediction=st[1], scheme="IOB2", rule=rule, counting="one-to-one")
        assert r.to_dict()["ts"] is not None and r.to_dict()["slot_errors"] is not None
        return None

    return prep, run


def _iescore_ids():
    def prep(g, p):
        idx = {n: i for i, n in enumerate(NAMES)}
        width = max(map(len, g))
        G = np.full((len(g), width), -100, np.int64)
        P = np.zeros((len(g), width), np.int64)
        for k, (a, b) in enumerate(zip(g, p)):
            G[k, : len(a)] = [idx[t] for t in a]
            P[k, : len(b)] = [idx[t] for t in b]
        return G, P

    def run(st):
        from iescore.adapters.hf import trainer_batch

        import iescore

        s = iescore.Scorer(scheme="IOB2", detail="prf")
        s.add_batch(trainer_batch(st[1], st[0], id2label=NAMES))
        return s.report().f or 0.0

    return prep, run


def _seqeval(kind):
    def prep(g, p):
        return g, p

    def run(st):
        from seqeval.metrics import classification_report, f1_score
        from seqeval.scheme import IOB2

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if kind == "f1":
                return f1_score(st[0], st[1])
            if kind == "strict":
                return f1_score(st[0], st[1], mode="strict", scheme=IOB2)
            rep = classification_report(st[0], st[1], output_dict=True)
            return rep["micro avg"]["f1-score"]

    return prep, run


def _nervaluate():
    def prep(g, p):
        return g, p

    def run(st):
        from nervaluate import Evaluator

        return Evaluator(st[0], st[1], tags=list(TYPES), loader="list").evaluate()["overall"]["strict"].f1

    return prep, run


def _spacy():
    def prep(g, p):
        import spacy
        from spacy.tokens import Doc
        from spacy.training import Example

        vocab = spacy.blank("en").vocab
        out = []
        for a, b in zip(g, p):
            words = ["w"] * len(a)
            out.append(Example(Doc(vocab, words=words, ents=b), Doc(vocab, words=words, ents=a)))
        return out

    def run(st):
        from spacy.scorer import Scorer

        return Scorer.score_spans(st, "ents")["ents_f"] or 0.0

    return prep, run


TOOLS = {
    "iescore_prf": ("iescore exact P/R/F per type (strings, detail='prf')", _iescore_strings("prf")),
    "iescore_full": ("iescore full report, exact (strings)", _iescore_strings("full")),
    "iescore_full_overlap": ("iescore full report: O(1,1), one-to-one, S/D/I, TS, per-doc (strings)", _iescore_full_overlap()),
    "iescore_full_iou": ("iescore full report: IoU(0.5), one-to-one, S/D/I, TS, per-doc (strings)",
                         _iescore_full_rule("IoU(0.5)")),
    "iescore_full_cover": ("iescore full report: cover(0.5), one-to-one, S/D/I, TS, per-doc (strings)",
                           _iescore_full_rule("cover(0.5)")),
    "iescore_ids": ("iescore exact P/R/F from integer id arrays (Trainer path)", _iescore_ids()),
    "seqeval_f1": ("seqeval f1_score (default)", _seqeval("f1")),
    "seqeval_strict": ("seqeval f1_score strict IOB2", _seqeval("strict")),
    "seqeval_report": ("seqeval classification_report (what evaluate's seqeval calls)", _seqeval("report")),
    "nervaluate": ("nervaluate Evaluator(loader='list') strict", _nervaluate()),
    "spacy": ("spaCy Scorer.score_spans('ents') (Examples built untimed)", _spacy()),
}
BASE = "iescore_prf"


def conll_testb(data: Path):
    sys.path.insert(0, str(HERE.parent / "tests"))
    from dist_worker import sentences

    g, p = sentences(str(data / "conll2003-eng" / "eng.testb"),
                     str(data / "conll2003-shared-task-outputs" / "results" / "florian" / "eng.testb"))
    # IOB1 -> IOB2 so that every tool reads the same chunks
    from iescore.decode import decode_tags, encode_spans

    def iob2(seqs):
        out = []
        for s in seqs:
            ch = decode_tags([s], scheme="IOB1")
            out.append(encode_spans([(ch.labels[t], int(a), int(b)) for t, a, b in zip(ch.type, ch.start, ch.end)], len(s), scheme="IOB2"))
        return out

    return iob2(g), iob2(p)


def _memory_child(tool: str, size: int) -> None:
    g, p = corpus(size) if size > 0 else conll_testb(Path(os.environ["IESCORE_DATA"]))
    prep, run = TOOLS[tool][1]
    run(prep(*corpus(2000, seed=1)))  # import the tool's modules and warm it up first
    st = prep(g, p)
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")  # reset VmHWM

    def status(key):
        for line in open("/proc/self/status"):
            if line.startswith(key):
                return int(line.split()[1]) * 1024
        return 0

    before = status("VmRSS:")
    run(st)
    print(json.dumps({"peak_delta": status("VmHWM:") - before}))


def memory(tool: str, size: int) -> int | None:
    try:
        out = subprocess.run([sys.executable, __file__, "--memory-child", tool, str(size)],
                             capture_output=True, text=True, timeout=900, env=os.environ)
        return json.loads(out.stdout.strip().splitlines()[-1])["peak_delta"]
    except Exception:
        return None


def seminar_sim(data: Path, copies: int = 20, rounds: int = 5) -> str:
    """sim(0.8) beside E on the CMU Seminar Announcements templates (every slot's
    distinct fillers of each announcement as an OBD template), against predictions made
    from them by a seeded perturbation: a filler kept, given one typo, cut by its last
    token, or dropped, and a filler of another announcement added now and then. The
    corpus is scored as read, then ``copies`` times over (ids made distinct), medians of
    ``rounds`` interleaved rounds."""
    import random

    from iescore.adapters.inline import read_seminar

    import iescore
    from iescore import Template

    docs = read_seminar(str(data / "cmu-seminar-announcements"), tokenizer="regex")
    rng = random.Random(0)
    ref, pred = [], []
    every = [d.document.tokens[s.start:s.end] for d in docs for s in d.document.spans]
    for d in docs:
        slots: dict[str, list[tuple[str, ...]]] = {}
        for s in d.document.spans:
            slots.setdefault(s.label, []).append(tuple(d.document.tokens[s.start:s.end]))
        ref.append({k: list(dict.fromkeys(v)) for k, v in slots.items()})
        out: dict[str, list[tuple[str, ...]]] = {}
        for k, fills in ref[-1].items():
            for f in fills:
                x = rng.random()
                if x < 0.55:
                    out.setdefault(k, []).append(f)
                elif x < 0.75:  # one typo in a token of 3+ characters
                    i = max(range(len(f)), key=lambda j: len(f[j]))
                    w = f[i]
                    if len(w) >= 3:
                        c = rng.randrange(len(w))
                        w = w[:c] + ("x" if w[c] != "x" else "y") + w[c + 1:]
                    out.setdefault(k, []).append(f[:i] + (w,) + f[i + 1:])
                elif x < 0.9 and len(f) > 1:
                    out.setdefault(k, []).append(f[:-1])
            if rng.random() < 0.1:
                out.setdefault(k, []).append(tuple(rng.choice(every)))
        pred.append({k: list(dict.fromkeys(v)) for k, v in out.items()})
    lines = ["| templates | fillers (ref / pred) | rule | counting | median s | × E | TP / FP / FN |", "|---|---|---|---|---|---|---|"]
    for n in (1, copies):
        R = [Template(id=f"{c}/{d.id}", slots=t) for c in range(n) for d, t in zip(docs, ref)]
        P = [Template(id=f"{c}/{d.id}", slots=t) for c in range(n) for d, t in zip(docs, pred)]
        nf = (sum(len(v) for t in R for v in t.slots.values()), sum(len(v) for t in P for v in t.slots.values()))
        for counting in ("any", "one-to-one"):
            runs = {"E": [], "sim(0.8)": []}
            counts = {}
            for r in range(rounds):
                for rule in (runs if r % 2 == 0 else list(runs)[::-1]):
                    t0 = time.perf_counter()
                    rep = iescore.score_templates(reference=R, prediction=P, rule=rule, counting=counting)
                    runs[rule].append(time.perf_counter() - t0)
                    counts[rule] = (rep.overall.tp, rep.overall.fp, rep.overall.fn)
            e = statistics.median(runs["E"])
            for rule, v in runs.items():
                m = statistics.median(v)
                lines.append(f"| {len(R)} | {nf[0]} / {nf[1]} | {rule} | {counting} | {m:.3f} | {m / e:.2f} | "
                             f"{' / '.join(map(str, counts[rule]))} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="50000,500000,5000000")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="50k tokens, one round, no memory runs")
    ap.add_argument("--tools", default=",".join(TOOLS))
    ap.add_argument("--data", default=os.environ.get("IESCORE_DATA", str(HERE.parents[1] / "shared" / "data")))
    ap.add_argument("--out", default=str(HERE / "out"))
    ap.add_argument("--no-memory", action="store_true")
    ap.add_argument("--memory-child", nargs=2, help=argparse.SUPPRESS)
    ap.add_argument("--seminar-sim", action="store_true",
                    help="only time sim(0.8) beside E on the Seminar Announcements templates (prints a table)")
    args = ap.parse_args(argv)
    if args.seminar_sim:
        print(seminar_sim(Path(args.data)))
        return 0
    if args.memory_child:
        _memory_child(args.memory_child[0], int(args.memory_child[1]))
        return 0
    sizes = [50_000] if args.quick else [int(x) for x in args.sizes.split(",")]
    rounds = 1 if args.quick else args.rounds
    tools = [t for t in args.tools.split(",") if t]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    # each data set is built just before its runs and dropped after them, so that every
    # size is timed with only its own data (and the tools' states for it) in memory
    datasets: dict[str, Callable[[], tuple]] = {}
    for n in sizes:
        datasets[f"{n // 1000}k" if n < 1_000_000 else f"{n // 1_000_000}M"] = partial(corpus, n)
    data = Path(args.data)
    if (data / "conll2003-eng" / "eng.testb").is_file() and not args.quick:
        datasets["conll03-testb"] = partial(conll_testb, data)
    results: dict[str, dict] = {}
    for name, make in datasets.items():
        g, p = make()
        n_tok = sum(map(len, g))
        states, f1s, reps = {}, {}, {}
        for t in tools:
            prep, run = TOOLS[t][1]
            states[t] = prep(g, p)
            t0 = time.perf_counter()
            f1s[t] = run(states[t])  # warm-up and agreement check
            # a fast call is repeated within each round (about 0.3 s of calls, at most 30)
            reps[t] = max(1, min(30, round(0.3 / max(time.perf_counter() - t0, 1e-6))))
        ref = f1s[BASE]
        bad = {t: f for t, f in f1s.items() if f is not None and abs(f - ref) > 1e-9}
        if bad:
            raise SystemExit(f"{name}: tools disagree on exact micro F1 ({ref} for iescore): {bad}")
        times: dict[str, list[float]] = {t: [] for t in tools}
        for r in range(rounds):
            order = tools if r % 2 == 0 else tools[::-1]  # interleaved
            for t in order:
                run = TOOLS[t][1][1]
                t0 = time.perf_counter()
                for _ in range(reps[t]):
                    run(states[t])
                times[t].append((time.perf_counter() - t0) / reps[t])
            print(f"{name}: round {r + 1}/{rounds} done", file=sys.stderr, flush=True)
        results[name] = {
            "tokens": n_tok,
            "f1": ref,
            "median_s": {t: statistics.median(v) for t, v in times.items()},
            "calls_per_round": reps,
            "all_s": times,
        }
        del states, g, p
        gc.collect()
    if not args.quick and not args.no_memory:
        for name, n in [(k, v) for k, v in zip(list(datasets)[: len(sizes)], sizes)]:
            results[name]["peak_bytes"] = {t: memory(t, n) for t in tools if t.startswith("iescore") or n <= 500_000}
    (out / "results.json").write_text(json.dumps(results, indent=2))
    table = render(results, tools)
    (out / "table.md").write_text(table)
    print(table)
    try:
        plot(results, tools, out / "speed.png")
    except ImportError:
        print("(matplotlib not installed: no plot)", file=sys.stderr)
    return 0


def render(results: dict, tools: list[str]) -> str:
    names = list(results)
    lines = ["| tool | " + " | ".join(f"{n} s | {n} Mtok/s | {n} × iescore_prf" for n in names) + " |",
             "|---|" + "---|---|---|" * len(names)]
    for t in tools:
        row = [f"`{t}` {TOOLS[t][0]}"]
        for n in names:
            med = results[n]["median_s"][t]
            base = results[n]["median_s"][BASE]
            row += [f"{med:.3f}", f"{results[n]['tokens'] / med / 1e6:.2f}", f"{med / base:.1f}"]
        lines.append("| " + " | ".join(row) + " |")
    synth = [n for n in names if n != "conll03-testb"]
    if len(synth) >= 2:
        a, b = synth[0], synth[-1]
        lines += ["", f"Scaling (t ~ n^b, {a} -> {b}; and t({b}) / t({synth[-2]})):", ""]
        lines += ["| tool | b | ratio |", "|---|---|---|"]
        for t in tools:
            ta, tb = results[a]["median_s"][t], results[b]["median_s"][t]
            b_exp = math.log(tb / ta) / math.log(results[b]["tokens"] / results[a]["tokens"])
            last = tb / results[synth[-2]]["median_s"][t]
            lines.append(f"| `{t}` | {b_exp:.2f} | {last:.1f} |")
    mem = [n for n in names if "peak_bytes" in results[n]]
    if mem:
        lines += ["", "Peak extra memory of one call (bytes per token):", ""]
        lines += ["| tool | " + " | ".join(mem) + " |", "|---|" + "---|" * len(mem)]
        for t in tools:
            cells = []
            for n in mem:
                v = results[n]["peak_bytes"].get(t)
                cells.append("-" if v is None else f"{v / results[n]['tokens']:.1f}")
            lines.append(f"| `{t}` | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def plot(results: dict, tools: list[str], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    synth = [n for n in results if n != "conll03-testb"]
    fig, ax = plt.subplots(figsize=(8, 5))
    for t in tools:
        xs = [results[n]["tokens"] for n in synth]
        ys = [results[n]["tokens"] / results[n]["median_s"][t] / 1e6 for n in synth]
        ax.plot(xs, ys, marker="o", label=t, linewidth=2.5 if t.startswith("iescore") else 1.2)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("tokens (gold + predicted tag pairs)")
    ax.set_ylabel("million tokens per second (median)")
    ax.set_title("Exact-match NER scoring throughput (higher is better)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


if __name__ == "__main__":
    sys.exit(main())
