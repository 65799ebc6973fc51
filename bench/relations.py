"""Relations and entity links beside entity spans, at a million of each.

    python bench/relations.py                   # 100,000 documents: 1M spans, 1M relations, 1M links
    python bench/relations.py --docs 2000       # a smoke run
    python bench/relations.py --hub 50000       # one document: 50,000 relations sharing one head, each side

Every document has 40 tokens, 10 entity spans (1 to 3 tokens, none overlapping), 10
relations between them (5 relation labels, 1 of them symmetric) and a link on each span
(ids from a pool of 50,000). Predictions are made from the gold by a seeded perturbation:
each record is kept (80%), dropped (8%), given a shifted argument or mention (7%) or
another label or id (5%), and one spurious record is added per document in two.

What is timed is one call of ``iescore.score`` on ready Documents (building them is a
user's preparation, untimed): the entities (``task="entities"``), the relations under
the strict setting (any-match, then one-to-one), the relaxed setting one-to-one, and the
links (strong). Beside them, a hand-rolled scorer of the strict relation setting as
training loops write it (sets of ``(document, label, head, tail)`` tuples, micro counts
only), which must give the same counts as iescore's strict one-to-one run (the data have
no duplicate records). Times are medians of ``--rounds`` interleaved rounds; the peak
extra memory of one call is measured in a fresh process (VmHWM after the call minus RSS
before it, the kernel's peak counter reset first).

Writes ``bench/out/relations.json`` and ``bench/out/relations.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
LABELS = ("works_for", "located_in", "part_of", "born_in", "sibling_of")
SYMMETRIC = ("sibling_of",)
TYPES = ("PER", "ORG", "LOC", "MISC")
TOKENS = 40
SPANS = 10


def corpus(n_docs: int, seed: int = 0) -> tuple[list[Any], list[Any]]:
    """Gold and predicted Documents (see the module's docstring)."""
    from iescore import Document, Link, Relation, Span

    rnd = random.Random(seed)
    tokens = tuple(f"w{k}" for k in range(TOKENS))
    gold, pred = [], []
    for d in range(n_docs):
        # 10 spans of 1-3 tokens without overlap: one in each 4-token window
        spans = []
        for k in range(SPANS):
            start = 4 * k + rnd.randrange(2)
            spans.append(Span(rnd.choice(TYPES), start, start + 1 + rnd.randrange(2)))
        rels = []
        for _ in range(SPANS):
            h, t = rnd.sample(range(SPANS), 2)
            rels.append(Relation(rnd.choice(LABELS), spans[h], spans[t]))
        rels = list(dict.fromkeys(rels))  # no duplicate records
        links = [Link(s, f"Q{rnd.randrange(50_000)}") for s in spans]

        def shifted(s: Span) -> Span:
            return Span(s.label, s.start + 1, s.end + 1) if s.end < TOKENS else Span(s.label, s.start - 1, s.end - 1)

        p_spans, p_rels, p_links = [], [], []
        for s in spans:
            u = rnd.random()
            if u < 0.8:
                p_spans.append(s)
            elif u < 0.88:
                continue
            elif u < 0.95:
                p_spans.append(shifted(s))
            else:
                p_spans.append(Span(rnd.choice([t for t in TYPES if t != s.label]), s.start, s.end))
        for r in rels:
            u = rnd.random()
            if u < 0.8:
                p_rels.append(r)
            elif u < 0.88:
                continue
            elif u < 0.95:
                p_rels.append(Relation(r.label, shifted(r.head), r.tail))
            else:
                p_rels.append(Relation(rnd.choice([x for x in LABELS if x != r.label]), r.head, r.tail))
        for x in links:
            u = rnd.random()
            if u < 0.8:
                p_links.append(x)
            elif u < 0.88:
                continue
            elif u < 0.95:
                p_links.append(Link(shifted(x.span), x.id))
            else:
                p_links.append(Link(x.span, f"Q{rnd.randrange(50_000)}"))
        if d % 2:
            a, b = rnd.sample(range(SPANS), 2)
            p_rels.append(Relation(rnd.choice(LABELS), spans[a], spans[b]))
        p_rels = list(dict.fromkeys(p_rels))
        did = f"d{d}"
        gold.append(Document(did, tokens, spans=tuple(spans), relations=tuple(rels), links=tuple(links)))
        pred.append(Document(did, tokens, spans=tuple(p_spans), relations=tuple(p_rels), links=tuple(p_links)))
    return gold, pred


def _iescore(**options: Any) -> Callable[[Any], tuple[int, int, int]]:
    def run(st: Any) -> tuple[int, int, int]:
        import iescore

        r = iescore.score(reference=st[0], prediction=st[1], **options)
        o = r.overall
        return o.tp, o.fp, o.fn

    return run


def _handrolled(st: Any) -> tuple[int, int, int]:
    """Strict relation counts as training loops compute them: sets of tuples."""
    def records(docs: Any) -> set[tuple[Any, ...]]:
        return {(d.id, r.label, r.head.label, r.head.start, r.head.end, r.tail.label, r.tail.start, r.tail.end)
                for d in docs for r in d.relations}

    g, p = records(st[0]), records(st[1])
    tp = len(g & p)
    return tp, len(p) - tp, len(g) - tp


TOOLS: dict[str, Callable[[Any], tuple[int, int, int]]] = {
    "entities": _iescore(task="entities"),
    "relations_strict_any": _iescore(task="relations"),
    "relations_strict_1to1": _iescore(task="relations", counting="one-to-one"),
    "relations_relaxed_1to1": _iescore(task="relations", counting="one-to-one", rule="O(inf,inf)"),
    "links_strong": _iescore(task="links"),
    "handrolled_strict_relations": _handrolled,
}
RECORDS = {"entities": "spans", "links_strong": "links"}  # what each tool counts (default relations)


def _memory_child(tool: str, n_docs: int) -> None:
    from iescore.cost import status_mb

    TOOLS[tool](corpus(50, seed=1))  # import and warm up first
    st = corpus(n_docs)
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")  # reset VmHWM
    before = status_mb("VmRSS")
    TOOLS[tool](st)
    peak = status_mb("VmHWM")
    print(json.dumps({"peak_delta_mb": None if peak is None or before is None else peak - before}))


def memory(tool: str, n_docs: int) -> float | None:
    try:
        out = subprocess.run([sys.executable, __file__, "--memory-child", tool, str(n_docs)],
                             capture_output=True, text=True, timeout=1800, env=os.environ)
        return float(json.loads(out.stdout.strip().splitlines()[-1])["peak_delta_mb"])
    except Exception:
        return None


def hub(n: int) -> str:
    """One document whose ``n`` relations share one head span (a hub entity) on both sides:
    every pair of them has overlapping heads, and only the tails tell them apart."""
    import iescore
    from iescore import Document, Relation, Span

    tokens = ("w",) * (2 * n + 2)
    rels = tuple(Relation("in", Span("LOC", 0, 1), Span("PER", 2 + 2 * k, 3 + 2 * k)) for k in range(n))
    docs = [Document("hub", tokens, relations=rels)]
    t = time.perf_counter()
    r = iescore.score(reference=docs, prediction=docs, task="relations", counting="one-to-one")
    took = time.perf_counter() - t
    assert r.overall.tp == n
    return f"hub: one document, {n:,} relations a side sharing one head: {took:.2f} s"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--docs", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--tools", default=",".join(TOOLS))
    ap.add_argument("--no-memory", action="store_true")
    ap.add_argument("--out", default=str(HERE / "out"))
    ap.add_argument("--hub", type=int, help="time one document of this many relations sharing one head, and stop")
    ap.add_argument("--memory-child", nargs=2, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.hub:
        print(hub(a.hub))
        return 0
    if a.memory_child:
        _memory_child(a.memory_child[0], int(a.memory_child[1]))
        return 0
    tools = a.tools.split(",")
    t0 = time.perf_counter()
    st = corpus(a.docs)
    built = time.perf_counter() - t0
    sizes = {"spans": sum(len(d.spans) for d in st[0]), "relations": sum(len(d.relations) for d in st[0]),
             "links": sum(len(d.links) for d in st[0])}
    pred_sizes = {"spans": sum(len(d.spans) for d in st[1]), "relations": sum(len(d.relations) for d in st[1]),
                  "links": sum(len(d.links) for d in st[1])}
    counts = {t: TOOLS[t](st) for t in tools}  # also warms every tool up
    if "handrolled_strict_relations" in counts and "relations_strict_1to1" in counts:
        if counts["handrolled_strict_relations"] != counts["relations_strict_1to1"]:
            print(f"disagree: {counts['handrolled_strict_relations']} vs {counts['relations_strict_1to1']}", file=sys.stderr)
            return 1
    times: dict[str, list[float]] = {t: [] for t in tools}
    for _ in range(a.rounds):
        for t in tools:
            s = time.perf_counter()
            TOOLS[t](st)
            times[t].append(time.perf_counter() - s)
    med = {t: statistics.median(v) for t, v in times.items()}
    mem = {t: None if a.no_memory else memory(t, a.docs) for t in tools}
    base = med.get("entities")
    res = {"docs": a.docs, "gold": sizes, "predicted": pred_sizes, "build_s": built, "counts": counts,
           "median_s": med, "peak_extra_mb": mem, "python": platform.python_version(),
           "date": time.strftime("%Y-%m-%d"), "rounds": a.rounds}
    lines = [f"{a.docs:,} documents; gold: {sizes['spans']:,} spans, {sizes['relations']:,} relations, "
             f"{sizes['links']:,} links; predicted: {pred_sizes['spans']:,}, {pred_sizes['relations']:,}, "
             f"{pred_sizes['links']:,} (medians of {a.rounds} rounds, {res['date']}, Python {res['python']})", "",
             "| tool | records | TP / FP / FN | time (s) | records per s | time / entities | peak extra memory (MB) |",
             "|---|---|---|---|---|---|---|"]
    for t in tools:
        kind = RECORDS.get(t, "relations")
        n = sizes[kind] + pred_sizes[kind]
        ratio = f"{med[t] / base:.2f}" if base else "-"
        m = "-" if mem[t] is None else f"{mem[t]:.0f}"
        tp, fp, fn = counts[t]
        lines.append(f"| `{t}` | {kind} | {tp:,} / {fp:,} / {fn:,} | {med[t]:.2f} | {n / med[t]:,.0f} | {ratio} | {m} |")
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "relations.json").write_text(json.dumps(res, indent=1) + "\n")
    (out / "relations.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
