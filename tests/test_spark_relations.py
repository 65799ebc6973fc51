"""Relations and entity links scored on Apache Spark (iescore.adapters.spark): columns of
relation structs ``{label, head: {label, start, end}, tail: {...}, confidence}`` and of
link structs ``{label, start, end, id, confidence}``, per-partition states merged into the
report of one ``iescore.score`` call over the same Documents (built here independently),
and a small case counted by hand.

A local SparkSession (``local[2]``) is started once for the module, as in test_spark.py;
without pyspark or Java the tests are skipped (and fail under ``CI=true``).
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys

import pytest

from iescore import ConfigError, Document, Link, Relation, Span, score


def _missing(msg: str) -> None:
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(msg)
    pytest.skip(msg)


@pytest.fixture(scope="module")
def spark():
    try:
        import pyarrow  # noqa: F401
        from pyspark.sql import SparkSession
    except ImportError as exc:
        _missing(f"pyspark/pyarrow are not installed (pip install -e '.[spark]'): {exc}")
    java = shutil.which("java")
    if java is None or subprocess.run([java, "-version"], capture_output=True).returncode != 0:
        _missing("Spark needs Java (OpenJDK 17): `java -version` fails or java is not on PATH")
    os.environ["PYSPARK_PYTHON"] = sys.executable
    session = (SparkSession.builder.master("local[2]").appName("iescore-tests-relations")
               .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "2")
               .config("spark.sql.execution.arrow.maxRecordsPerBatch", "7")  # several batches per partition
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def _types():
    import pyarrow as pa

    arg = pa.struct([("label", pa.string()), ("start", pa.int32()), ("end", pa.int32())])
    rel = pa.struct([("label", pa.string()), ("head", arg), ("tail", arg), ("confidence", pa.float64())])
    link = pa.struct([("label", pa.string()), ("start", pa.int32()), ("end", pa.int32()), ("id", pa.string()),
                      ("confidence", pa.float64())])
    return pa.list_(rel), pa.list_(link)


def _arg(rng, n):
    a = rng.randrange(n)
    return {"label": rng.choice("PO"), "start": a, "end": min(n, a + rng.randint(1, 2))}


def _noisy(rng, gold, n, kind):
    """A prediction: each answer kept, moved, relabelled or dropped; some spurious ones."""
    out = []
    for x in gold:
        roll = rng.random()
        if roll < 0.15:
            continue
        y = {**x, "confidence": None}
        if roll < 0.3:
            y["label"] = rng.choice(["r1", "r2"] if kind == "relations" else "PO")
        elif roll < 0.45 and kind == "relations":
            y["head"], y["tail"] = x["tail"], x["head"]
        elif roll < 0.6:
            if kind == "relations":
                y["tail"] = _arg(rng, n)
            else:
                y["end"] = min(n, x["end"] + 1)
        elif roll < 0.7 and kind == "links":
            y["id"] = rng.choice(["Q1", "Q2", "NIL"])
        out.append(y)
    for _ in range(rng.randint(0, 1)):
        out.append(_item(rng, n, kind))
    return out


def _item(rng, n, kind):
    if kind == "relations":
        return {"label": rng.choice(["r1", "r2"]), "head": _arg(rng, n), "tail": _arg(rng, n), "confidence": None}
    a = _arg(rng, n)
    return {**a, "id": rng.choice(["Q1", "Q2", "Q3", "NIL"]), "confidence": None}


def _table(seed=7, n_docs=60):
    import pyarrow as pa

    rng = random.Random(seed)
    rows = {"id": [], "tokens": [], "gold_rel": [], "pred_rel": [], "gold_link": [], "pred_link": []}
    for k in range(n_docs):
        n = rng.randint(3, 9)
        rows["id"].append(f"d{k}")
        rows["tokens"].append([f"w{j}" for j in range(n)])
        for kind, key in (("relations", "rel"), ("links", "link")):
            gold = [_item(rng, n, kind) for _ in range(rng.randint(0, 3))]
            rows[f"gold_{key}"].append(gold)
            rows[f"pred_{key}"].append(_noisy(rng, gold, n, kind))
    rel, link = _types()
    return pa.table({"id": rows["id"], "tokens": rows["tokens"],
                     "gold_rel": pa.array(rows["gold_rel"], rel), "pred_rel": pa.array(rows["pred_rel"], rel),
                     "gold_link": pa.array(rows["gold_link"], link), "pred_link": pa.array(rows["pred_link"], link)})


def _documents(rows, column, kind):
    """The rows' Documents, built here from the Python values (not by the adapter)."""
    out = []
    for row in rows:
        def sp(x):
            return Span(x["label"], x["start"], x["end"])
        if kind == "relations":
            rels = tuple(Relation(x["label"], sp(x["head"]), sp(x["tail"]), x["confidence"]) for x in row[column])
            out.append(Document(row["id"], tuple(row["tokens"]), relations=rels))
        else:
            links = tuple(Link(sp(x), x["id"], x["confidence"]) for x in row[column])
            out.append(Document(row["id"], tuple(row["tokens"]), links=links))
    return out


RUNS = [
    ("rel", "relations", {}),
    ("rel", "relations", {"counting": "one-to-one"}),
    ("rel", "relations", {"rule": "O(inf,inf)", "symmetric": ("r1",)}),
    ("rel", "relations", {"arg_labels": False, "counting": "one-to-one"}),
    ("link", "links", {}),
    ("link", "links", {"rule": "O(inf,inf)", "counting": "one-to-one", "nil": "ignore"}),
    ("link", "links", {"link_types": True}),
]


@pytest.mark.parametrize("keep", ["items", "counts"])
def test_partitions_equal_one_call(spark, keep):
    from iescore.adapters.spark import score_runs

    table = _table()
    df = spark.createDataFrame(table).repartition(3).localCheckpoint()  # one row order for every job
    assert df.rdd.getNumPartitions() == 3
    runs = {f"{col}{k}": {"reference": f"gold_{col}", "prediction": f"pred_{col}", **opts}
            for k, (col, _, opts) in enumerate(RUNS)}
    got = score_runs(df, runs, doc_id="id", tokens="tokens", keep=keep)
    order = [r["id"] for r in df.select("id").collect()]
    by_id = {r["id"]: r for r in table.to_pylist()}
    rows = [by_id[i] for i in order]
    for k, (col, task, opts) in enumerate(RUNS):
        one = score(reference=_documents(rows, f"gold_{col}", task), prediction=_documents(rows, f"pred_{col}", task),
                    task=task, **opts)
        r = got[f"{col}{k}"]
        assert r.to_dict() == one.to_dict(), (col, opts)
        assert r.overall.tp > 0 and r.overall.fp > 0 and r.overall.fn > 0  # the case is not trivial
        if keep == "items":
            assert list(r.items("reference")) == list(one.items("reference"))
            assert list(r.items("prediction")) == list(one.items("prediction"))


def test_by_hand(spark):
    import pyarrow as pa
    from iescore.adapters.spark import score_dataframe

    rel, link = _types()

    def a(label, s, e):
        return {"label": label, "start": s, "end": e}

    toks = ["Al", "Roth", "works", "for", "IBM", "."]
    table = pa.table({
        "id": ["a", "b"], "tokens": [toks, toks],
        # a: works_for right; b: works_for with the tail "IBM ." (one token too many)
        "gold": pa.array([[{"label": "works_for", "head": a("PER", 0, 2), "tail": a("ORG", 4, 5), "confidence": None}],
                          [{"label": "works_for", "head": a("PER", 0, 2), "tail": a("ORG", 4, 5), "confidence": None}]],
                         rel),
        "pred": pa.array([[{"label": "works_for", "head": a("PER", 0, 2), "tail": a("ORG", 4, 5), "confidence": 0.9}],
                          [{"label": "works_for", "head": a("PER", 0, 2), "tail": a("ORG", 4, 6), "confidence": 0.4}]],
                         rel),
        # a: Q1 right, IBM Q95 for Q37156; b: "Roth" for "Al Roth" (Q1)
        "gold_l": pa.array([[{**a("PER", 0, 2), "id": "Q1", "confidence": None},
                             {**a("ORG", 4, 5), "id": "Q37156", "confidence": None}],
                            [{**a("PER", 0, 2), "id": "Q1", "confidence": None}]], link),
        "pred_l": pa.array([[{**a("PER", 0, 2), "id": "Q1", "confidence": None},
                             {**a("ORG", 4, 5), "id": "Q95", "confidence": None}],
                            [{**a("PER", 1, 2), "id": "Q1", "confidence": None}]], link),
    })
    df = spark.createDataFrame(table).repartition(2)
    r = score_dataframe(df, reference="gold", prediction="pred", doc_id="id", tokens="tokens")
    assert (r.overall.tp, r.overall.fp, r.overall.fn) == (1, 1, 1) and r.labels == ("works_for",)
    assert "task:relations" in r.signature
    r = score_dataframe(df, reference="gold", prediction="pred", doc_id="id", tokens="tokens", rule="O(1,1)")
    assert (r.overall.tp, r.overall.fp, r.overall.fn) == (2, 0, 0)
    r = score_dataframe(df, reference="gold_l", prediction="pred_l", doc_id="id", tokens="tokens")
    assert (r.overall.tp, r.overall.fp, r.overall.fn) == (1, 2, 2)
    assert {k: (v.tp, v.fp, v.fn) for k, v in r.per_label.items()} == {"ORG": (0, 1, 1), "PER": (1, 1, 1)}
    r = score_dataframe(df, reference="gold_l", prediction="pred_l", doc_id="id", tokens="tokens", rule="O(inf,inf)")
    assert (r.overall.tp, r.overall.fp, r.overall.fn) == (2, 1, 1)
    with pytest.raises(ConfigError, match=r"reference column 'gold' holds relations .* scored under "
                                          r"task='relations'; got task='links'"):
        score_dataframe(df, reference="gold", prediction="pred", doc_id="id", tokens="tokens", task="links")
    with pytest.raises(ConfigError, match="relations need the documents' tokens: pass tokens="):
        score_dataframe(df, reference="gold", prediction="pred", doc_id="id")
    from iescore import InputError

    with pytest.raises(InputError, match="reference column 'gold' holds relations .* but prediction column 'pred_l' "
                                         "holds links"):
        score_dataframe(df, reference="gold", prediction="pred_l", doc_id="id", tokens="tokens")
