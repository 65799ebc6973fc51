"""Benchmark of iescore.stats: paired resamples of the CoNLL-2003 systems on eng.testb.

Systems: the 16 shared-task outputs (one tag per line, aligned with eng.testb) and the 12
neural outputs in "token gold pred" form (10 SpanNER, 2 InterpretEval; their gold equals
eng.testb's, checked here); the 2 span-format SpanNER files are left out. Every system is
scored once with sentences as documents (3,453 documents, scheme IOB1: eng.testb's gold is
IOB1, and IOB2 predictions decode to the same chunks under IOB1).

Timed: ``iescore.stats.compare`` with 1,000 paired resamples and every measure of the
report (intervals for all, the paired test of F1 against the first system, all-pairs tests
for the groups), for approximate randomization (the default) and for the centred paired
bootstrap; beside it,
re-scoring each resampled corpus with ``score_tags`` (a few resamples, extrapolated to 1,000).

Run: ``IESCORE_DATA=/work/shared/data .venv/bin/python bench/stats.py`` (writes bench/out/stats.md).
"""

from __future__ import annotations

import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

import iescore
from iescore import stats
from iescore.stats.table import TESTS

DATA = Path(os.environ.get("IESCORE_DATA", "/work/shared/data"))
OUT = Path(__file__).resolve().parent / "out" / "stats.md"


def sentences(path: Path, column: int = -1) -> list[list[str]]:
    """Sentences of one column (the last by default), -DOCSTART- lines left out."""
    out: list[list[str]] = []
    cur: list[str] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        parts = line.split()
        if not parts:
            if cur:
                out.append(cur)
                cur = []
        elif parts[0] != "-DOCSTART-":
            cur.append(parts[column])
    if cur:
        out.append(cur)
    return out


def aligned_tags(gold_path: Path, tags_path: Path) -> list[list[str]]:
    """A one-column output aligned line by line with the gold file, as sentences."""
    gold_lines = gold_path.read_text(encoding="utf-8").splitlines()
    tags = tags_path.read_text(encoding="utf-8").splitlines()
    out: list[list[str]] = []
    cur: list[str] = []
    for g, t in zip(gold_lines, tags):
        parts = g.split()
        if not parts:
            if cur:
                out.append(cur)
                cur = []
        elif parts[0] != "-DOCSTART-":
            cur.append(t.split()[-1])
    if cur:
        out.append(cur)
    return out


SHARED: set[str] = set()  # the names of the shared-task systems


def systems(gold: list[list[str]]) -> dict[str, list[list[str]]]:
    gold_path = DATA / "conll2003-eng" / "eng.testb"
    out = {}
    for d in sorted((DATA / "conll2003-shared-task-outputs" / "results").iterdir()):
        out[d.name] = aligned_tags(gold_path, d / "eng.testb")
        SHARED.add(d.name)
    for folder in ("conll2003-neural-outputs-spanner", "conll2003-neural-outputs-interpreteval"):
        for f in sorted((DATA / folder).glob("con*.txt")):
            if "spanNER" in f.name:
                continue  # span format
            g = sentences(f, 1)
            if [[t[2:] if t != "O" else t for t in s] for s in g] != [[t[2:] if t != "O" else t for t in s] for s in gold]:
                raise SystemExit(f"{f}: gold types differ from eng.testb")
            out[f.stem] = sentences(f, 2)
    return out


def main() -> None:
    load_before = os.getloadavg()[0]
    gold = sentences(DATA / "conll2003-eng" / "eng.testb")
    preds = systems(gold)
    kw = {"scheme": "IOB1"}
    t0 = time.perf_counter()
    reports = {n: iescore.score_tags(reference=gold, prediction=p, **kw) for n, p in preds.items()}
    t_score = time.perf_counter() - t0
    first = next(iter(reports.values()))
    names = list(stats.measure_names(first))
    R = 1000
    rows = []
    for test in TESTS:
        best = float("inf")
        for _ in range(3):
            t0 = time.perf_counter()
            c = stats.compare(reports, test=test, resamples=R, seed=12345, measure="f1", measures=names[1:])
            best = min(best, time.perf_counter() - t0)
        rows.append((test, best, c))
    # re-scoring per resample: build the resampled corpus of every system and score it
    rng = np.random.default_rng(12345)
    k = 2
    t0 = time.perf_counter()
    for _ in range(k):
        idx = rng.integers(0, len(gold), size=len(gold))
        g = [gold[i] for i in idx]
        for p in preds.values():
            iescore.score_tags(reference=g, prediction=[p[i] for i in idx], **kw)
    per_resample = (time.perf_counter() - t0) / k
    by_test = {test: c for test, _, c in rows}
    top = sorted(rows[0][2].systems, key=lambda s: -s["f1"])[:5]
    lines = [
        "# iescore.stats benchmark: paired resamples of the CoNLL-2003 systems on eng.testb",
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
        f"numpy {np.__version__}; load average {load_before:.2f} before, {os.getloadavg()[0]:.2f} after "
        "(other processes slow the timings). Generated by `bench/stats.py`.",
        "",
        f"{len(reports)} systems (16 shared-task outputs, 12 neural outputs), {len(gold)} sentences as documents, "
        f"{sum(map(len, gold))} tokens; {len(names)} measures per system (every measure of the report: "
        "micro/macro/weighted P/R/F1/F_beta, per-label P/R/F1/F_beta/SER/ERR/E, SER/ERR/E, TS, token accuracy).",
        f"Scoring the {len(reports)} systems once (not in the timings below): {t_score:.2f} s.",
        "",
        "| what | 1,000 paired resamples, all systems, all measures | per resample |",
        "|---|---:|---:|",
    ]
    for test, t, c in rows:
        lines.append(f"| iescore.stats.compare, {c.test_name}: bootstrap intervals, tests, groups "
                     f"| {t:.2f} s | {1000 * t / R:.2f} ms |")
    lines.append(f"| re-scoring every resampled corpus with score_tags ({k} resamples, extrapolated) | "
                 f"{per_resample * R:.0f} s | {1000 * per_resample:.0f} ms |")
    lines += [
        "",
        f"Speed-up of {rows[0][2].test_name} over re-scoring: {per_resample * R / rows[0][1]:.0f}x.",
        "",
        "Best five systems by F1 (95% percentile bootstrap intervals; p against "
        f"{rows[0][2].baseline}, Holm-adjusted, and group under each test):",
        "",
        "| system | F1 | 95% interval | " + " | ".join(f"p (Holm), {t} | group, {t}" for t in by_test) + " |",
        "|---|---:|---:|" + "---:|---:|" * len(by_test),
    ]
    for s in top:
        cells = []
        for c in by_test.values():
            row = next(r for r in c.systems if r["name"] == s["name"])
            cells += ["-" if row["p_value_holm"] is None else f"{row['p_value_holm']:.4f}", str(row["group"])]
        lines.append(f"| {s['name']} | {100 * s['f1']:.2f} | {100 * s['f1_ci'][0]:.2f}-{100 * s['f1_ci'][1]:.2f} "
                     f"| {' | '.join(cells)} |")
    lines += [""]
    for test, c in by_test.items():
        shared = {n: reports[n] for n in reports if n in SHARED}
        c16 = stats.compare(shared, test=test, resamples=R, seed=12345, measures=[])
        fc = stats.compare({n: reports[n] for n in ("florian", "chieu")}, test=test, resamples=R, seed=12345,
                           measures=[]).systems[1]["p_value"]
        lines.append(f"{test} ({c.test_name}): the {len(reports)} systems fall into "
                     f"{len({r['group'] for r in c.systems})} groups; compared among themselves, the {len(shared)} "
                     f"shared-task systems fall into {len({r['group'] for r in c16.systems})}; "
                     f"florian vs chieu p = {fc:.4f}.")
    lines += [""] + [f"Signature ({test}): `{c.signature}`" for test, c in by_test.items()] + [""]
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text("\n".join(lines))
    sys.stdout.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
