"""Scoring on Apache Spark (iescore.adapters.spark) gives the report of one call.

A local SparkSession (``local[2]``) is started once for the module. Without pyspark or
Java the tests are skipped, and fail under ``CI=true`` saying what is missing. The
numbers are anchored to the official conlleval.out of the CoNLL-2003 shared task (an
independent tool) and to one-call scoring of the same documents.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest
from test_conlleval_official import TEAMS, official

from iescore import (
    ConfigError,
    Document,
    InputError,
    Span,
    Template,
    score,
    score_tags,
    score_templates,
)

CONFIGS = {
    "exact": {},
    "overlap": {"rule": "O(1,1)", "counting": "one-to-one"},
    "obd": {"setting": "OBD"},
    "best": {"mode": "match-best"},
}


def _missing(msg: str) -> None:
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(msg)
    pytest.skip(msg)


@pytest.fixture(scope="module")
def spark():
    try:
        import pyarrow
        from pyspark.sql import SparkSession
    except ImportError as exc:
        _missing(f"pyspark/pyarrow are not installed (pip install -e '.[spark]'): {exc}")
    java = shutil.which("java")
    if java is None or subprocess.run([java, "-version"], capture_output=True).returncode != 0:
        _missing("Spark needs Java (OpenJDK 17): `java -version` fails or java is not on PATH")
    os.environ["PYSPARK_PYTHON"] = sys.executable  # the workers run this interpreter
    session = (SparkSession.builder.master("local[2]").appName("iescore-tests")
               .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "2")
               # small Arrow batches: several batches per partition go through one Scorer
               .config("spark.sql.execution.arrow.maxRecordsPerBatch", "200")
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def _sentences(data):
    """eng.testb's sentences (-DOCSTART- lines left out) with every team's tags."""
    gold = (data / "conll2003-eng" / "eng.testb").read_text().splitlines()
    outs = {t: (data / "conll2003-shared-task-outputs" / "results" / t / "eng.testb").read_text().splitlines()
            for t in TEAMS}
    rows, cur = [], None
    for k, line in enumerate(gold):
        if not line.strip() or line.startswith("-DOCSTART-"):
            if cur and cur["tokens"]:
                rows.append(cur)
            cur = None
            continue
        if cur is None:
            cur = {"id": f"s{len(rows)}", "tokens": [], "gold": [], **{t: [] for t in TEAMS}}
        cols = line.split()
        cur["tokens"].append(cols[0])
        cur["gold"].append(cols[-1])
        for t in TEAMS:
            cur[t].append(outs[t][k].strip())
    if cur and cur["tokens"]:
        rows.append(cur)
    return rows


def _frame(spark, rows, partitions):
    """A DataFrame of ``rows`` in ``partitions`` partitions, in the rows' order
    (contiguous slices; with more partitions than rows some are empty)."""
    import pyarrow as pa

    table = pa.Table.from_pylist(rows)
    rdd = spark.sparkContext.parallelize([tuple(r.values()) for r in rows], partitions)
    return spark.createDataFrame(rdd, schema=spark.createDataFrame(table.slice(0, 1)).schema)


def test_conll2003_shared_task_in_7_partitions_equals_one_call(spark, data):
    from iescore.adapters.spark import score_runs

    rows = _sentences(data)
    assert len(rows) == 3453  # eng.testb's sentences (SOURCE.txt)
    df = _frame(spark, rows, 7)
    assert df.rdd.getNumPartitions() == 7
    # every team under the exact rule (checked against the official conlleval.out), and every
    # configuration for four of them: 28 reports, one Spark job
    configured = TEAMS[::4]
    runs = {f"{t}/{c}": {"reference": "gold", "prediction": t, **opts} for t in TEAMS for c, opts in CONFIGS.items()
            if c == "exact" or t in configured}
    assert len(runs) == 16 + 4 * 3
    got = score_runs(df, runs, doc_id="id", tokens="tokens")
    ids = [r["id"] for r in rows]
    toks = [r["tokens"] for r in rows]
    gold = [r["gold"] for r in rows]
    for t in TEAMS:
        # the official conlleval.out: phrases in the reference, found, correct (DOCSTART lines
        # carry O, so leaving them out changes no phrase count)
        (_, phrases, found, correct), _, _ = official(
            data / "conll2003-shared-task-outputs" / "results" / t / "conlleval.out", "eng.testb")
        exact = got[f"{t}/exact"]
        assert (exact.overall.N, exact.overall.M, exact.overall.tp) == (phrases, found, correct), t
        for c, opts in CONFIGS.items():
            if f"{t}/{c}" not in runs:
                continue
            one = score_tags(reference=gold, prediction=[r[t] for r in rows], doc_ids=ids, tokens=toks, **opts)
            r = got[f"{t}/{c}"]
            assert r.to_dict() == one.to_dict(), (t, c)
            assert r.doc_ids == one.doc_ids
            if c in ("exact", "overlap"):  # the per-item statuses, in order
                assert list(r.items()) == list(one.items()) and list(r.items("reference")) == list(one.items("reference"))
    # only the counts crossing the network: the same dictionary, no items
    teams = TEAMS[:3]
    counts = score_runs(df, {t: {"reference": "gold", "prediction": t, "rule": "O(1,1)"} for t in teams},
                        doc_id="id", keep="counts")
    for t in teams:
        one = score_tags(reference=gold, prediction=[r[t] for r in rows], doc_ids=ids, rule="O(1,1)")
        assert counts[t].to_dict() == one.to_dict()
        with pytest.raises(ConfigError, match="keep='counts'"):
            next(counts[t].items())


def test_partitions_empty_or_one_document_each(spark, data):
    from iescore.adapters.spark import score_dataframe

    rows = [{k: r[k] for k in ("id", "tokens", "gold", "florian")} for r in _sentences(data)[:12]]
    gold, pred = [r["gold"] for r in rows], [r["florian"] for r in rows]
    one = score_tags(reference=gold, prediction=pred, rule="O(1,1)")  # numbered documents
    for partitions, keep in ((12, "items"), (20, "counts")):
        df = _frame(spark, rows, partitions)
        sizes = df.rdd.glom().map(len).collect()
        # one document in each of 12 partitions; 12 documents in 20 partitions: 8 empty
        assert sizes == [1] * 12 if partitions == 12 else (sum(sizes) == 12 and sizes.count(0) == 8)
        r = score_dataframe(df, reference="gold", prediction="florian", keep=keep, rule="O(1,1)")
        assert r.to_dict() == one.to_dict(), (partitions, keep)
        if keep == "items":  # numbered across partitions in the DataFrame's order
            assert list(r.doc_ids) == [str(k) for k in range(12)]
            assert list(r.items()) == list(one.items())
    # every partition empty: the report of no documents
    empty = _frame(spark, rows, 3).limit(0)
    r = score_dataframe(empty, reference="gold", prediction="florian")
    assert r.to_dict()["documents"] == 0 and r.overall.tp == 0


def test_spans_and_templates(spark):
    import pyarrow as pa
    from iescore.adapters.spark import score_dataframe

    span = pa.struct([("label", pa.string()), ("start", pa.int32()), ("end", pa.int32()), ("confidence", pa.float64())])
    table = pa.table({
        "id": ["a", "b", "c"],
        "tokens": [["Al", "Roth", "spoke", "at", "Wean"], ["in", "Pittsburgh"], ["x"]],
        "gold": pa.array([[{"label": "PER", "start": 0, "end": 2, "confidence": None},
                           {"label": "LOC", "start": 4, "end": 5, "confidence": None}],
                          [{"label": "LOC", "start": 1, "end": 2, "confidence": None}], []], pa.list_(span)),
        "pred": pa.array([[{"label": "PER", "start": 1, "end": 2, "confidence": 0.9},
                           {"label": "LOC", "start": 4, "end": 5, "confidence": 0.8}],
                          [{"label": "PER", "start": 1, "end": 2, "confidence": 0.7}], []], pa.list_(span)),
    })
    df = spark.createDataFrame(table).repartition(2)
    # by hand, O(1,1): PER [1,2) matches PER [0,2) (one token missing), LOC [4,5) exact: tp 2;
    # document b: LOC [1,2) answered as PER: fn 1, fp 1
    r = score_dataframe(df, reference="gold", prediction="pred", doc_id="id", tokens="tokens", rule="O(1,1)")
    assert (r.overall.tp, r.overall.fp, r.overall.fn) == (2, 1, 1)
    docs = {row["id"]: row for row in table.to_pylist()}
    order = [row["id"] for row in df.select("id").collect()]
    one = score(reference=[Document(i, tuple(docs[i]["tokens"]), tuple(Span(s["label"], s["start"], s["end"])
                                                                        for s in docs[i]["gold"])) for i in order],
                prediction=[[Span(s["label"], s["start"], s["end"], s["confidence"]) for s in docs[i]["pred"]]
                            for i in order], rule="O(1,1)")
    assert r.to_dict() == one.to_dict()
    templates = pa.table({"id": ["t1", "t2"],
                          "gold": pa.array([[("speaker", ["Al Roth"]), ("location", ["Wean Hall"])],
                                            [("speaker", ["Ada"])]], pa.map_(pa.string(), pa.list_(pa.string()))),
                          "pred": pa.array([[("speaker", ["Roth"])], [("speaker", ["Ada"]), ("location", ["Hall"])]],
                                           pa.map_(pa.string(), pa.list_(pa.string())))})
    tf = spark.createDataFrame(templates).repartition(2)
    r = score_dataframe(tf, reference="gold", prediction="pred", doc_id="id", keep="counts")
    # OBD, exact: t1 speaker "Roth" != "Al Roth" (a substitution), location missed; t2 speaker
    # exact, location inserted: tp 1, fp 2, fn 2
    assert (r.overall.tp, r.overall.fp, r.overall.fn) == (1, 2, 2)
    tdocs = {row["id"]: row for row in templates.to_pylist()}
    order = [row["id"] for row in tf.select("id").collect()]
    one = score_templates(reference=[Template(i, dict(tdocs[i]["gold"])) for i in order],
                          prediction=[Template(i, dict(tdocs[i]["pred"])) for i in order])
    assert r.to_dict() == one.to_dict()


def test_missing_and_mistyped_columns(spark):
    import pyarrow as pa
    from iescore.adapters.spark import score_dataframe

    df = spark.createDataFrame(pa.table({"id": ["a"], "gold": [["B-PER"]], "pred": [["O"]], "n": [[1]],
                                         "s": ["B-PER"]}))
    with pytest.raises(InputError, match=r"prediction column 'guess' is not in the DataFrame; its columns: "
                                         r"'id', 'gold', 'pred', 'n' or 's'"):
        score_dataframe(df, reference="gold", prediction="guess")
    with pytest.raises(InputError, match=r"reference column 'n' has type array<bigint>; expected one of: "
                                         r"array<string> \(tags\); array<struct<label:string,start:int,end:int,"
                                         r"confidence:double>> \(spans\); map<string,array<string>> \(templates\)"):
        score_dataframe(df, reference="n", prediction="pred")
    with pytest.raises(InputError, match="prediction column 's' has type string; expected one of"):
        score_dataframe(df, reference="gold", prediction="s")
    with pytest.raises(InputError, match="doc_id column 'n' has type array<bigint>; expected one of: string"):
        score_dataframe(df, reference="gold", prediction="pred", doc_id="n")
    with pytest.raises(InputError, match="tokens column 's' has type string; expected array<string>"):
        score_dataframe(df, reference="gold", prediction="pred", tokens="s")
    with pytest.raises(ConfigError, match="unknown option 'rulez'"):
        score_dataframe(df, reference="gold", prediction="pred", rulez="E")
    twice = spark.createDataFrame(pa.table({"id": ["a", "b", "a"], "gold": [["O"]] * 3, "pred": [["O"]] * 3}))
    with pytest.raises(InputError, match=r"duplicate document id 'a' \(doc_id column 'id': 2 rows\)"):
        score_dataframe(twice, reference="gold", prediction="pred", doc_id="id", keep="counts")
    with pytest.raises(InputError, match="duplicate document id 'a'"):
        score_dataframe(twice.repartition(2), reference="gold", prediction="pred", doc_id="id")
    # 'a' in each of two partitions: keep="items"
    # finds it when the driver merges, and says so in the words of the DataFrame
    rows = spark.sparkContext.parallelize([(x, ["O"], ["O"]) for x in "abca"], 2)  # slices a b | c a
    split = spark.createDataFrame(rows, "id string, gold array<string>, pred array<string>")
    assert split.rdd.getNumPartitions() == 2
    with pytest.raises(InputError) as e:
        score_dataframe(split, reference="gold", prediction="pred", doc_id="id")
    assert str(e.value) == "duplicate document id 'a' (doc_id column 'id': rows in two Spark partitions)"
    nulls = spark.createDataFrame(pa.table({"id": ["a", "b"], "gold": [["B-PER"], None], "pred": [["O"], ["O"]]}))
    with pytest.raises(InputError, match="column 'gold' is null for document 'b'"):
        score_dataframe(nulls, reference="gold", prediction="pred", doc_id="id")


def test_auto_scheme_is_decided_over_all_partitions_as_one_call_would(spark):
    import pyarrow as pa
    from iescore.adapters.spark import score_dataframe

    iob1, iob2 = ["O", "I-PER", "I-PER"], ["O", "B-PER", "O"]
    rows = [{"id": "s1", "gold": iob1, "pred": iob1}, {"id": "s2", "gold": iob2, "pred": iob2}]
    df = spark.createDataFrame(spark.sparkContext.parallelize([tuple(r.values()) for r in rows], 2),
                               schema=spark.createDataFrame(pa.Table.from_pylist(rows)).schema)
    # each partition alone would decode its own scheme (s1: IOB1, s2: IOB2); one call sees an
    # I- start in s1 and decodes both as IOB1, and so does the DataFrame, in either order
    one = score_tags(reference=[iob1, iob2], prediction=[iob1, iob2], doc_ids=["s1", "s2"], repair="discard")
    assert one.config.scheme == "IOB1"
    r = score_dataframe(df, reference="gold", prediction="pred", doc_id="id", repair="discard")
    # under IOB1, B-PER after O is ill-formed and discarded on both sides: tp = 1 (s1's PER)
    assert r.to_dict() == one.to_dict() and r.overall.tp == 1 and r.signature == one.signature
    back = spark.createDataFrame(spark.sparkContext.parallelize([tuple(r.values()) for r in rows[::-1]], 2),
                                 schema=df.schema)
    assert score_dataframe(back, reference="gold", prediction="pred", doc_id="id", repair="discard",
                           keep="counts").to_dict() == one.to_dict()
    # prefixes combine too: B/I in one partition and E in another is IOBES for one call
    e_rows = [{"id": "a", "gold": ["B-X", "I-X"], "pred": ["B-X", "I-X"]},
              {"id": "b", "gold": ["I-Y", "E-Y"], "pred": ["I-Y", "E-Y"]}]
    e_df = spark.createDataFrame(spark.sparkContext.parallelize([tuple(r.values()) for r in e_rows], 2),
                                 schema=df.schema)
    ref, pred = [r["gold"] for r in e_rows], [r["pred"] for r in e_rows]
    e_one = score_tags(reference=ref, prediction=pred, doc_ids=["a", "b"], repair="discard")
    assert e_one.config.scheme == "IOBES"
    assert score_dataframe(e_df, reference="gold", prediction="pred", doc_id="id",
                           repair="discard").to_dict() == e_one.to_dict()
    # an explicit scheme is kept; an ill-formed chunk under repair="strict" is the InputError
    # of one call, naming the document and the partition
    with pytest.raises(InputError, match=r"document 's2'.*\(Spark partition 1\)"):
        score_dataframe(df, reference="gold", prediction="pred", doc_id="id", repair="strict", scheme="IOB1")


def test_readme_worked_example_runs(spark, data, tmp_path, monkeypatch, capsys):
    """The Spark guide's `score_predictions.py` on a Parquet file of 200 eng.testb sentences
    (florian's tags) prints the report of one call (its signature names the same data)."""
    import re
    from pathlib import Path

    import pyarrow as pa
    import pyarrow.parquet as pq

    text = (Path(__file__).resolve().parents[1] / "docs" / "how-to" / "spark.md").read_text()
    block = re.search(r"```py\n(# score_predictions\.py.*?)```", text, flags=re.S)
    assert block, "docs/how-to/spark.md shows score_predictions.py"
    rows = _sentences(data)[:200]
    path = tmp_path / "predictions.parquet"
    pq.write_table(pa.table({"id": [r["id"] for r in rows], "gold": [r["gold"] for r in rows],
                             "pred": [r["florian"] for r in rows]}), path)
    monkeypatch.setattr(sys, "argv", ["score_predictions.py", str(path)])
    exec(compile(block.group(1), "docs/how-to/spark.md", "exec"), {})  # getOrCreate() finds the test session
    out = capsys.readouterr().out
    one = score_tags(reference=[r["gold"] for r in rows], prediction=[r["florian"] for r in rows],
                     doc_ids=[r["id"] for r in rows], rule="O(1,1)", counting="one-to-one")
    assert f"signature: {one.signature}" in out
    assert out.startswith(one.format_conlleval())
