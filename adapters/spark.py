"""Beside the pipeline (inputs, spread over a cluster): score an Apache Spark DataFrame of
documents, partition by partition, into the report of one call.

Each row of the DataFrame is one document. The reference and prediction columns hold,
per document, either

* tag sequences: ``array<string>`` (the tag path, as [`iescore.score_tags`][iescore.score_tags]),
* AO spans: ``array<struct<label:string,start:int,end:int,confidence:double>>``
  (half-open token offsets; ``confidence`` may be left out or null), with a ``tokens``
  column (``array<string>``), as [`iescore.score`][iescore.score],
* OBD templates: ``map<string,array<string>>`` (slot -> fillers), as
  [`iescore.score_templates`][iescore.score_templates],
* relations: ``array<struct<label:string,head:struct<label:string,start:int,end:int>,
  tail:struct<label:string,start:int,end:int>,confidence:double>>`` (the arguments' token
  offsets; ``head`` the first argument), with a ``tokens`` column, scored under
  ``task="relations"`` (the default for such columns) as [`iescore.score`][iescore.score]
  scores Documents' ``relations``,
* entity links: ``array<struct<label:string,start:int,end:int,id:string,confidence:double>>``
  (the mention, its entity type and its knowledge-base id), with a ``tokens`` column, scored
  under ``task="links"`` (the default for such columns) as Documents' ``links``.

Every partition fills a [`Scorer`][iescore.Scorer] from its Arrow batches
(``DataFrame.mapInArrow``) and sends its state (`iescore.scoring.state`) to the
driver, which merges the states in partition order: the report is that of one call over
the rows in the DataFrame's order (``df.collect()``), whatever the partitioning, and a
task that Spark retries sends the same state again. ``keep="counts"`` sends only summed
counts (no items cross the network; ``to_dict()`` and the signature are the same).
Documents without ids (``doc_id=None``, tags only) are numbered in the DataFrame's order.

pyspark is imported only when a function here is called.

Example (needs pyspark and Java)::

    df = spark.read.parquet("predictions.parquet")   # columns id, gold, pred
    report = score_dataframe(df, reference="gold", prediction="pred", doc_id="id")
    print(report.format_table())
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from iescore.config import Config
from iescore.errors import ConfigError, IEScoreError, InputError, choices
from iescore.model import Document, Link, Relation, Span, Template
from iescore.report import Report

__all__ = ["score_dataframe", "score_runs", "column_kind", "KINDS"]

# what a reference or prediction column may hold: kind -> the Spark type expected
KINDS = {
    "tags": "array<string>",
    "spans": "array<struct<label:string,start:int,end:int,confidence:double>>",
    "templates": "map<string,array<string>>",
    "relations": "array<struct<label:string,head:struct<label:string,start:int,end:int>,"
                 "tail:struct<label:string,start:int,end:int>,confidence:double>>",
    "links": "array<struct<label:string,start:int,end:int,id:string,confidence:double>>",
}
# the task each kind of column is scored under (tags, spans and templates: entities)
_TASKS = {"relations": "relations", "links": "links"}
_CHUNK = 64 << 20  # bytes of a state per output row (Arrow binary cells stay far below 2 GB)
_OUT = "run string, part long, chunk long, docs long, error_kind string, error string, state binary"
_ERRORS = {"InputError": InputError, "ConfigError": ConfigError}


def score_dataframe(
    df: Any,
    *,
    reference: str,
    prediction: str,
    doc_id: str | None = None,
    tokens: str | None = None,
    keep: str = "items",
    config: Config | None = None,
    **options: Any,
) -> Report:
    """Score a DataFrame of documents (one per row) on Spark; the report equals one call
    over the same documents in the DataFrame's order (``to_dict()``, signature and,
    with ``keep="items"``, every item's status). ``options``: any of [`Options`][iescore.options.Options]
    (tags default to ``scheme="auto"``, templates to ``setting="OBD"``).

    ``keep="counts"`` sends each partition's summed counts only (no items, no
    per-document rows cross the network): the same ``to_dict()``, but the report's
    per-document and per-item views raise [`ConfigError`][iescore.errors.ConfigError].

    A missing column, or one of another type, is an [`InputError`][iescore.errors.InputError]
    naming the column, its type and the types expected (`KINDS`)."""
    run = {"reference": reference, "prediction": prediction, "config": config, **options}
    return score_runs(df, {"": run}, doc_id=doc_id, tokens=tokens, keep=keep)[""]


def score_runs(
    df: Any,
    runs: Mapping[str, Mapping[str, Any]],
    *,
    doc_id: str | None = None,
    tokens: str | None = None,
    keep: str = "items",
) -> dict[str, Report]:
    """Several scorings of one DataFrame in one pass over its rows (one Spark job): ``runs``
    maps a name to ``{"reference": column, "prediction": column, **options}``; the reports
    come back under the same names, each as [`score_dataframe`][iescore.adapters.spark.score_dataframe] would give it.

    Useful to compare several systems' columns against one reference, or one system under
    several rules, reading a large table once."""
    from iescore.scoring.state import KEEP

    if keep not in KEEP:
        raise ConfigError(f"unknown keep {keep!r}; valid: {choices(KEEP)}")
    plans = [_plan(df, name, dict(run), doc_id, tokens) for name, run in runs.items()]
    if not plans:
        raise ConfigError("score_runs needs at least one run")
    columns = sorted({c for p in plans for c in (p.reference, p.prediction)} | {c for c in (doc_id, tokens) if c})
    if not hasattr(df, "mapInArrow"):
        raise ConfigError("iescore.adapters.spark needs DataFrame.mapInArrow (pyspark >= 3.3)")
    if keep == "counts" and doc_id is not None:  # items carry their ids; counts need this check
        _check_unique(df, doc_id)
    plans = _decide_schemes(df, plans)
    job = _Job(tuple(plans), doc_id, tokens, keep)
    table = df.select(*columns).mapInArrow(job, _OUT)
    rows = _rows(table)
    return {p.name: _merge(p, [r for r in rows if r["run"] == p.name], doc_id=doc_id) for p in plans}


def _rows(table: Any) -> list[dict[str, Any]]:
    """A small DataFrame's rows on the driver, as dicts (through Arrow where pyspark has it)."""
    return table.toArrow().to_pylist() if hasattr(table, "toArrow") else [r.asDict() for r in table.collect()]


# --- the plan, checked on the driver ----------------------------------------------------------

@dataclass(frozen=True)
class _Plan:
    name: str
    reference: str
    prediction: str
    kind: str
    config: Config


def column_kind(df: Any, column: str, role: str) -> str:
    """The kind of a reference or prediction column (a key of `KINDS`) from the
    DataFrame's schema; an [`InputError`][iescore.errors.InputError] naming the column, the
    type found and the types expected otherwise."""
    from pyspark.sql import types as T

    dtype = _column_type(df, column, role)
    if isinstance(dtype, T.ArrayType) and isinstance(dtype.elementType, T.StringType):
        return "tags"
    if isinstance(dtype, T.ArrayType) and isinstance(dtype.elementType, T.StructType):
        fields = {f.name: f.dataType for f in dtype.elementType.fields}
        integral = (T.IntegerType, T.LongType, T.ShortType, T.ByteType)

        def span_like(f: Mapping[str, Any], extra: set[str]) -> bool:
            return (isinstance(f.get("label"), T.StringType) and isinstance(f.get("start"), integral)
                    and isinstance(f.get("end"), integral) and set(f) <= {"label", "start", "end"} | extra)

        confident = fields.get("confidence") is None or isinstance(fields["confidence"], (T.DoubleType, T.FloatType))
        if span_like(fields, {"confidence"}) and confident:
            return "spans"
        if span_like(fields, {"id", "confidence"}) and isinstance(fields.get("id"), T.StringType) and confident:
            return "links"
        args = [fields.get(k) for k in ("head", "tail")]
        if (isinstance(fields.get("label"), T.StringType) and set(fields) <= {"label", "head", "tail", "confidence"}
                and confident and all(isinstance(a, T.StructType) and span_like({f.name: f.dataType for f in a.fields},
                                                                                 set()) for a in args)):
            return "relations"
    if (isinstance(dtype, T.MapType) and isinstance(dtype.keyType, T.StringType)
            and isinstance(dtype.valueType, T.ArrayType) and isinstance(dtype.valueType.elementType, T.StringType)):
        return "templates"
    expected = "; ".join(f"{t} ({k})" for k, t in KINDS.items())
    raise InputError(f"{role} column {column!r} has type {dtype.simpleString()}; expected one of: {expected}")


def _column_type(df: Any, column: str, role: str) -> Any:
    if not isinstance(column, str) or column not in df.columns:
        raise InputError(f"{role} column {column!r} is not in the DataFrame; its columns: {choices(df.columns)}")
    return df.schema[column].dataType


def _plan(df: Any, name: str, run: dict[str, Any], doc_id: str | None, tokens: str | None) -> _Plan:
    from pyspark.sql import types as T

    try:
        ref_col, pred_col = run.pop("reference"), run.pop("prediction")
    except KeyError as exc:
        raise ConfigError(f"run {name!r} needs 'reference' and 'prediction' columns") from exc
    kind = column_kind(df, ref_col, "reference")
    pred_kind = column_kind(df, pred_col, "prediction")
    if pred_kind != kind:
        raise InputError(f"reference column {ref_col!r} holds {kind} ({KINDS[kind]}) but prediction column "
                         f"{pred_col!r} holds {pred_kind} ({KINDS[pred_kind]}); both must be of one kind")
    if doc_id is not None:
        dtype = _column_type(df, doc_id, "doc_id")
        if not isinstance(dtype, (T.StringType, T.IntegerType, T.LongType, T.ShortType, T.ByteType)):
            raise InputError(f"doc_id column {doc_id!r} has type {dtype.simpleString()}; expected one of: "
                             "string, int, bigint")
    elif kind != "tags":
        raise ConfigError(f"{kind} need document ids: pass doc_id= (a string or integer column)")
    if tokens is not None:
        dtype = _column_type(df, tokens, "tokens")
        if not (isinstance(dtype, T.ArrayType) and isinstance(dtype.elementType, T.StringType)):
            raise InputError(f"tokens column {tokens!r} has type {dtype.simpleString()}; expected array<string>")
    elif kind in ("spans", "relations", "links"):
        raise ConfigError(f"{kind} need the documents' tokens: pass tokens= (an array<string> column)")
    config = run.pop("config", None)
    task = _TASKS.get(kind, "entities")
    given = run.get("task", config.task if config is not None else None)
    if given not in (None, task):
        raise ConfigError(f"reference column {ref_col!r} holds {kind} ({KINDS[kind]}), scored under "
                          f"task={task!r}; got task={given!r}")
    if task != "entities":
        run["task"] = task
    if kind == "tags":
        run.setdefault("scheme", "auto")
    if kind == "templates":
        run.setdefault("setting", "OBD")
    return _Plan(name, ref_col, pred_col, kind, Config.from_options(config, **run))


def _check_unique(df: Any, doc_id: str) -> None:
    """An InputError naming a document id that two rows share (one Spark query: the ids
    are counted where they are, only repeated ones reach the driver)."""
    dup = df.groupBy(doc_id).count().where("count > 1").limit(1).collect()
    if dup:
        raise InputError(f"duplicate document id {str(dup[0][0])!r} (doc_id column {doc_id!r}: "
                         f"{dup[0]['count']} rows)")


def _decide_schemes(df: Any, plans: list[_Plan]) -> list[_Plan]:
    """Tag runs under ``scheme="auto"`` get the scheme one call over the whole DataFrame
    would detect: a first, light Spark job sends each partition's evidence (the tag
    prefixes seen and whether a reference chunk starts with ``I-``), which combines by
    union and ``or`` (`iescore.decode.detect.scheme_evidence`). Without it each
    partition would decide on its own tags, and shards that decided differently could
    not be merged."""
    from iescore.decode.detect import scheme_from_evidence

    auto = [p for p in plans if p.kind == "tags" and p.config.scheme == "auto"]
    if not auto:
        return plans
    columns = sorted({c for p in auto for c in (p.reference, p.prediction)})
    job = _Evidence(tuple((p.name, p.reference, p.prediction) for p in auto))
    table = df.select(*columns).mapInArrow(job, "run string, prefixes string, i_starts boolean")
    rows = _rows(table)
    decided = {}
    for p in auto:
        mine = [r for r in rows if r["run"] == p.name]
        decided[p.name] = scheme_from_evidence(_unpack(mine), any(bool(r["i_starts"]) for r in mine))
    return [_Plan(p.name, p.reference, p.prediction, p.kind, p.config.with_(scheme=decided[p.name]))
            if p.name in decided else p for p in plans]


def _unpack(rows: Sequence[dict[str, Any]]) -> set[str]:
    """The union of the prefix sets the partitions sent (each a JSON list)."""
    import json

    return {x for r in rows for x in json.loads(r["prefixes"])}


@dataclass(frozen=True)
class _Evidence:
    """Each partition's scheme evidence per auto run: one row per run (see _decide_schemes)."""

    runs: tuple[tuple[str, str, str], ...]  # (name, reference column, prediction column)

    def __call__(self, batches: Iterator[Any]) -> Iterator[Any]:
        import json

        import pyarrow as pa

        from iescore.decode.detect import scheme_evidence
        from iescore.scoring.batch import tagged_batch

        seen = {name: (set[str](), False) for name, _, _ in self.runs}
        for batch in batches:
            if not batch.num_rows:
                continue
            for name, ref, pred in self.runs:
                try:
                    tb = tagged_batch(batch.column(ref).to_pylist(), batch.column(pred).to_pylist())
                except IEScoreError:  # the scoring job reports it, naming the document
                    continue
                prefixes, i_starts = scheme_evidence(tb.reference, tb.vocab)
                old = seen[name]
                seen[name] = (old[0] | prefixes, old[1] or i_starts)
        yield pa.RecordBatch.from_pydict(
            {"run": list(seen), "prefixes": [json.dumps(sorted(v[0])) for v in seen.values()],
             "i_starts": [v[1] for v in seen.values()]},
            schema=pa.schema([("run", pa.string()), ("prefixes", pa.string()), ("i_starts", pa.bool_())]))


# --- in each partition ----------------------------------------------------------------------------

@dataclass(frozen=True)
class _Job:
    """The function each partition runs (pickled to the executors): Arrow batches in, one
    state (in chunks) or one error per run out."""

    plans: tuple[_Plan, ...]
    doc_id: str | None
    tokens: str | None
    keep: str

    def __call__(self, batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa
        from pyspark import TaskContext

        from iescore.scoring.state import dump_state
        from iescore.scoring.stream import Scorer

        ctx = TaskContext.get()
        part = ctx.partitionId() if ctx is not None else 0
        scorers = {p.name: Scorer(p.config) for p in self.plans}
        errors: dict[str, IEScoreError] = {}
        n_docs = 0
        for batch in batches:
            if not batch.num_rows:
                continue
            try:
                ids = self._ids(batch)
                toks = self._column(batch, self.tokens, ids) if self.tokens else None
            except IEScoreError as exc:  # the batch's ids or tokens: every run fails here
                errors.update({p.name: errors.get(p.name, exc) for p in self.plans})
                continue
            values: dict[str, list[Any]] = {}  # each column read once per batch, whatever the runs

            def column(name: str) -> list[Any]:
                if name not in values:
                    values[name] = self._column(batch, name, ids)
                return values[name]

            for p in self.plans:
                if p.name in errors:
                    continue
                try:
                    _add(scorers[p.name], p, column(p.reference), column(p.prediction), ids, toks)
                except IEScoreError as exc:
                    errors[p.name] = exc
            n_docs += batch.num_rows

        def row(name: str, chunk: int, error: IEScoreError | None, state: bytes | None) -> Any:
            return pa.RecordBatch.from_pydict(
                {"run": [name], "part": [part], "chunk": [chunk], "docs": [n_docs],
                 "error_kind": [type(error).__name__ if error else None], "error": [str(error) if error else None],
                 "state": [state]},
                schema=pa.schema([("run", pa.string()), ("part", pa.int64()), ("chunk", pa.int64()),
                                  ("docs", pa.int64()), ("error_kind", pa.string()), ("error", pa.string()),
                                  ("state", pa.binary())]))

        for p in self.plans:
            state = None
            if p.name not in errors:
                try:  # the driver checks explicit ids for duplicates with one Spark query
                    state = dump_state(scorers[p.name], self.keep, id_hashes=False)
                except IEScoreError as exc:
                    errors[p.name] = exc
            if p.name in errors:
                yield row(p.name, 0, errors[p.name], None)
                continue
            assert state is not None
            for k, at in enumerate(range(0, max(len(state), 1), _CHUNK)):
                yield row(p.name, k, None, state[at : at + _CHUNK])

    def _ids(self, batch: Any) -> list[str] | None:
        if self.doc_id is None:
            return None
        col = batch.column(self.doc_id)
        if col.null_count:
            k = next(k for k, x in enumerate(col.to_pylist()) if x is None)
            raise InputError(f"doc_id column {self.doc_id!r} is null in row {k} of a Spark batch; every "
                             "document needs an id")
        return [str(x) for x in col.to_pylist()]

    def _column(self, batch: Any, name: str, ids: list[str] | None) -> list[Any]:
        values: list[Any] = batch.column(name).to_pylist()
        if batch.column(name).null_count:
            k = next(k for k, x in enumerate(values) if x is None)
            where = f"document {ids[k]!r}" if ids is not None else f"row {k} of a Spark batch"
            raise InputError(f"column {name!r} is null for {where}; give an empty list for a document without items")
        return values


def _add(scorer: Any, plan: _Plan, ref: list[Any], pred: list[Any], ids: list[str] | None,
         toks: list[list[str]] | None) -> None:
    """One Arrow batch's documents into a run's scorer."""
    if plan.kind == "tags":
        scorer.add_tags(reference=ref, prediction=pred, doc_ids=ids, tokens=toks)
        return
    assert ids is not None
    if plan.kind == "templates":
        scorer.add(reference=[Template(i, dict(r)) for i, r in zip(ids, ref)],
                   prediction=[Template(i, dict(p)) for i, p in zip(ids, pred)])
        return
    assert toks is not None

    def spans(rows: list[dict[str, Any]]) -> list[Span]:
        return [Span(s["label"], s["start"], s["end"], s.get("confidence")) for s in rows]

    if plan.kind in ("relations", "links"):
        def doc(i: str, t: list[str], rows: list[dict[str, Any]]) -> Document:
            if plan.kind == "links":
                return Document(i, tuple(t), links=tuple(Link(Span(x["label"], x["start"], x["end"]), x["id"],
                                                              x.get("confidence")) for x in rows))
            return Document(i, tuple(t), relations=tuple(
                Relation(x["label"], Span(x["head"]["label"], x["head"]["start"], x["head"]["end"]),
                         Span(x["tail"]["label"], x["tail"]["start"], x["tail"]["end"]), x.get("confidence"))
                for x in rows))

        scorer.add(reference=[doc(i, t, r) for i, t, r in zip(ids, toks, ref)],
                   prediction=[doc(i, t, p) for i, t, p in zip(ids, toks, pred)])
        return

    scorer.add(reference=[Document(i, tuple(t), tuple(spans(r))) for i, t, r in zip(ids, toks, ref)],
               prediction=[spans(p) for p in pred])


# --- on the driver ------------------------------------------------------------------------------

def _merge(plan: _Plan, rows: Sequence[dict[str, Any]], *, doc_id: str | None) -> Report:
    """The run's states merged in partition order (numbered documents renumbered from the
    counts of the partitions before; ``doc_id``: the id column, None when numbered); the first
    partition's error raised."""
    from iescore.scoring.state import load_state, merge_states, renumber

    numbered = doc_id is None

    by_part: dict[int, list[dict[str, Any]]] = {}
    for r in rows:
        by_part.setdefault(int(r["part"]), []).append(r)
    states = []
    offset = 0
    for part in sorted(by_part):
        chunks = sorted(by_part[part], key=lambda r: int(r["chunk"]))
        if chunks[0]["error_kind"] is not None:
            cls = _ERRORS.get(chunks[0]["error_kind"], InputError)
            raise cls(f"{chunks[0]['error']} (Spark partition {part}"
                      + (", documents numbered from 0 in each partition)" if numbered else ")"))
        state = load_state(b"".join(bytes(c["state"]) for c in chunks))
        states.append(renumber(state, offset) if numbered else state)
        offset += int(chunks[0]["docs"])
    if not states:  # a DataFrame with no partitions: the report of no documents
        from iescore.scoring.stream import Scorer

        return Scorer(plan.config).report()
    try:
        merged = merge_states(states)
    except InputError as exc:  # keep="items": an id in two partitions (the counts states were checked)
        if exc.doc_id is None or not doc_id:
            raise
        raise InputError(f"duplicate document id {exc.doc_id!r} (doc_id column {doc_id!r}: rows in two "
                         f"Spark partitions)") from None
    return merged.report()
