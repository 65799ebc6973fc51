"""Scoring on Apache Spark (iescore.adapters.spark) beside one process, on the same Parquet data.

    python bench/spark.py                     # 5M and 50M tokens
    python bench/spark.py --tokens 5e6        # 5M only

The data is bench/data.py's synthetic corpus (IOB2, 4 types, sentences of 5-30 tokens as
documents), 5M tokens generated once; the 50M file repeats it ten times under new
document ids. It is written to Parquet (columns id, gold, pred) in a temporary folder.
Each size is scored with ``keep="counts"``, ``scheme="IOB2"``, exact matching:

* one process: pyarrow reads the Parquet file in batches of 10,000 documents into one
  streaming :class:`~iescore.Scorer` (the code each Spark partition runs, without Spark);
* Spark ``local[1]`` and ``local[2]``: ``score_dataframe`` on ``spark.read.parquet``
  (the session's start is timed apart).

Every report is checked to equal the one-process report (``to_dict()``). The overhead per
partition is measured on a DataFrame of one-token documents in 2 and in 202 partitions
(``local[2]``): (t202 - t2) / 200; the driver's part of it (loading and merging counts
states) is timed apart. Writes bench/out/spark.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from data import corpus

OUT = Path(__file__).resolve().parent / "out" / "spark.md"
OPTIONS = {"scheme": "IOB2"}
BATCH = 10_000


def write_parquet(path: Path, n_tokens: int) -> int:
    """The corpus as Parquet (repeats of a 5M-token corpus beyond 5M); its tokens."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    base = min(n_tokens, 5_000_000)
    gold, pred = corpus(base, seed=0)
    tokens = 0
    with pq.ParquetWriter(path, pa.schema([("id", pa.string()), ("gold", pa.list_(pa.string())),
                                           ("pred", pa.list_(pa.string()))])) as w:
        copy = 0
        while tokens < n_tokens:
            for a in range(0, len(gold), BATCH):  # row groups of 10,000 documents: even splits
                g, p = gold[a : a + BATCH], pred[a : a + BATCH]
                ids = [f"c{copy}-{a + k}" for k in range(len(g))]
                w.write_table(pa.table({"id": ids, "gold": g, "pred": p}))
                tokens += sum(map(len, g))
            copy += 1
    return tokens


def one_process(path: Path) -> tuple[float, object, int, int]:
    """The Parquet file through one streaming Scorer: seconds, the report, and the sizes
    of its counts and items states."""
    import pyarrow.parquet as pq

    from iescore import Scorer
    from iescore.scoring.state import dump_state

    t = time.perf_counter()
    s = Scorer(**OPTIONS)
    for b in pq.ParquetFile(path).iter_batches(batch_size=BATCH):
        s.add_tags(reference=b.column("gold").to_pylist(), prediction=b.column("pred").to_pylist(),
                   doc_ids=b.column("id").to_pylist())
    counts = dump_state(s, "counts", id_hashes=False)  # as a Spark partition sends it
    seconds = time.perf_counter() - t
    return seconds, s.report(), len(counts), len(s.to_state(keep="items"))


def session(master: str):
    from pyspark.sql import SparkSession

    os.environ["PYSPARK_PYTHON"] = sys.executable
    t = time.perf_counter()
    spark = (SparkSession.builder.master(master).appName("iescore-bench")
             .config("spark.ui.enabled", "false").config("spark.driver.memory", "4g").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    start = time.perf_counter() - t
    # the first Python job starts the workers and warms the JVM: timed apart
    from iescore.adapters.spark import score_dataframe

    t = time.perf_counter()
    warm = spark.createDataFrame([("a", ["B-PER"], ["O"])], "id string, gold array<string>, pred array<string>")
    score_dataframe(warm, reference="gold", prediction="pred", doc_id="id", keep="counts", **OPTIONS)
    return spark, (start, time.perf_counter() - t)


def on_spark(spark, path: Path) -> tuple[float, object, int]:
    from iescore.adapters.spark import score_dataframe

    df = spark.read.parquet(str(path))
    t = time.perf_counter()
    r = score_dataframe(df, reference="gold", prediction="pred", doc_id="id", keep="counts", **OPTIONS)
    return time.perf_counter() - t, r, df.rdd.getNumPartitions()


def per_partition(spark) -> tuple[float, float, float]:
    """Seconds per partition: one-token documents in 2 and in 202 partitions."""
    from iescore.adapters.spark import score_dataframe

    rows = [(f"d{k}", ["B-PER"], ["B-PER"]) for k in range(202)]
    times = []
    for n in (2, 202):
        df = spark.createDataFrame(spark.sparkContext.parallelize(rows, n), "id string, gold array<string>, pred array<string>")
        score_dataframe(df, reference="gold", prediction="pred", doc_id="id", keep="counts", **OPTIONS)  # warm
        t = time.perf_counter()
        score_dataframe(df, reference="gold", prediction="pred", doc_id="id", keep="counts", **OPTIONS)
        times.append(time.perf_counter() - t)
    return times[0], times[1], (times[1] - times[0]) / 200


def driver_merge(n: int = 2000) -> tuple[float, int]:
    """The driver's share per partition: load and merge ``n`` counts states (one document
    each, 4 labels) into one report; seconds per state, and bytes of one state."""
    from iescore import Scorer
    from iescore.scoring.state import dump_state, load_state, merge_states

    states = []
    for k in range(n):
        s = Scorer(**OPTIONS)
        s.add_tags(reference=[["B-PER", "I-PER", "B-LOC", "B-ORG", "B-MISC"]],
                   prediction=[["B-PER", "O", "B-LOC", "B-ORG", "B-PER"]], doc_ids=[f"d{k}"])
        states.append(dump_state(s, "counts", id_hashes=False))
    t = time.perf_counter()
    merge_states([load_state(b) for b in states]).report()
    return (time.perf_counter() - t) / n, len(states[0])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tokens", type=float, nargs="+", default=[5e6, 50e6])
    args = ap.parse_args()
    import pyspark

    lines = [
        "# Scoring on Spark beside one process",
        "",
        f"Machine: {os.cpu_count()} cores ({platform.machine()}), shared with other jobs while measured; "
        f"Python {platform.python_version()}, pyspark {pyspark.__version__}. Exact matching, "
        "`keep=\"counts\"`, `scheme=\"IOB2\"`; seconds from the start of the scoring to the report "
        "(Spark: the session's start not included). Every report equals the one-process report.",
        "",
        "| tokens | documents | Parquet MB | one process s | local[1] s (partitions) | local[2] s | "
        "counts state bytes | items state MB |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    starts = {}
    with tempfile.TemporaryDirectory(prefix="iescore-bench-spark-") as tmp:
        for n in args.tokens:
            path = Path(tmp) / f"{int(n)}.parquet"
            tokens = write_parquet(path, int(n))
            secs, one, counts_bytes, items_bytes = one_process(path)
            print(f"{tokens} tokens: one process {secs:.1f} s", flush=True)
            row = {"one": secs}
            for master in ("local[1]", "local[2]"):
                spark, start = session(master)
                starts[master] = start
                secs, r, parts = on_spark(spark, path)
                assert r.to_dict() == one.to_dict(), master
                row[master] = (secs, parts)
                print(f"  {master}: {secs:.1f} s in {parts} partitions", flush=True)
                if master == "local[2]" and "overhead" not in starts:
                    starts["overhead"] = per_partition(spark)
                spark.stop()
            lines.append(
                f"| {tokens:,} | {one.to_dict()['documents']:,} | {path.stat().st_size / 1e6:.0f} | {row['one']:.1f} | "
                f"{row['local[1]'][0]:.1f} ({row['local[1]'][1]}) | {row['local[2]'][0]:.1f} ({row['local[2]'][1]}) | "
                f"{counts_bytes:,} | {items_bytes / 1e6:.0f} |")
    t2, t202, each = starts["overhead"]
    merge_each, state_bytes = driver_merge()
    lines += [
        "",
        "Session start, then a first one-document job (Python workers started, JVM warmed): "
        + ", ".join(f"{m} {starts[m][0]:.1f} s + {starts[m][1]:.1f} s" for m in ("local[1]", "local[2]")) + ".",
        "",
        f"Overhead per partition (local[2], one-token documents): 2 partitions {t2:.2f} s, 202 partitions "
        f"{t202:.2f} s: **{1000 * each:.0f} ms per partition** (a Python worker's task, an empty Scorer's "
        "counts state, its row to the driver, one merge).",
        "",
        f"The driver's share of it: loading and merging 2,000 counts states (4 labels, {state_bytes:,} bytes "
        f"each) takes {1000 * merge_each:.2f} ms per state.",
    ]
    OUT.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
