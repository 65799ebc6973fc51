"""Hugging Face outputs to iescore input.

1. ``pipeline("token-classification")`` outputs (lists of dicts with
   ``entity`` or ``entity_group``, ``start``, ``end``, ``score``; any
   ``aggregation_strategy``) become spans on the word tokens of a reference
   [`Document`][iescore.Document], by character offsets ([`pipeline_to_spans`][iescore.adapters.hf.pipeline_to_spans]).
2. Trainer-style arrays -- logits ``(batch, seq, labels)`` or label ids
   ``(batch, seq)``, the ``-100`` mask, and optionally a fast tokenizer's
   ``word_ids()`` -- become word-level tags in an integer-coded
   [`TaggedBatch`][iescore.TaggedBatch] ([`trainer_batch`][iescore.adapters.hf.trainer_batch]): the first sub-word by
   default, or ``max``/``average`` over a word's sub-words.
3. ``datasets`` rows with ``tokens`` and ``ner_tags`` (``ClassLabel`` names as
   tag strings) become tag lists ([`dataset_tags`][iescore.adapters.hf.dataset_tags]), and
   [`load_conll_dataset`][iescore.adapters.hf.load_conll_dataset] loads a local CoNLL file with
   ``datasets.load_dataset``.

Only [`load_conll_dataset`][iescore.adapters.hf.load_conll_dataset] imports ``datasets``; nothing here imports
torch or transformers (tensors are read through ``numpy.asarray``).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from iescore.config import SUBWORDS
from iescore.decode import decode_tags
from iescore.errors import InputError, choices
from iescore.model import Document, Span
from iescore.options import Misaligned, SchemeName
from iescore.scorer import Scorer, TaggedBatch
from iescore.scoring.labelids import IGNORE, label_id_batch, label_name_list  # noqa: F401 (IGNORE: the mask)
from iescore.text import char_to_token_span

__all__ = [
    "STRATEGIES",
    "pipeline_to_spans",
    "id2label_list",
    "trainer_batch",
    "dataset_tags",
    "load_conll_dataset",
]

STRATEGIES = SUBWORDS  # recorded in the signature as subwords:<strategy>


def _label_of(entry: Mapping[str, Any]) -> str:
    if "entity_group" in entry:
        return str(entry["entity_group"])
    if "entity" in entry:
        return str(entry["entity"])
    raise InputError(f"pipeline output {dict(entry)!r} has neither 'entity' nor 'entity_group'")


def pipeline_to_spans(
    outputs: Sequence[Mapping[str, Any]],
    reference: Document,
    *,
    misaligned: Misaligned = "expand",
    scheme: SchemeName = "IOB2",
    labels: Iterable[str] | None = None,
    scorer: Scorer | None = None,
) -> tuple[list[Span], dict[str, int]]:
    """Spans on ``reference``'s tokens from one text's pipeline output.

    ``outputs`` is one text's list of entity dicts. ``pipeline(texts)`` returns one such
    list per text: give each document its own (a list of one list is read as that list;
    of more, an [`InputError`][iescore.errors.InputError] says so).

    Aggregated outputs (``entity_group``) map each entity's characters to tokens
    with the ``misaligned`` policy. Sub-word outputs (``entity`` with tags such
    as ``B-PER``) give every word the tag of its first sub-word, and the word
    tags are decoded under ``scheme`` (conlleval's rules); a span's confidence
    is the mean of its words' scores. ``labels``, when given, is the set of
    valid entity labels. Returns the spans and counts of ``misaligned`` and
    ``dropped`` entities. With ``scorer``, the counts are also noted on it (the
    report's ``repairs["adapter"]``) and the policy used is recorded in its
    signature (``misaligned:<policy>`` for aggregated outputs, ``subwords:first``
    for sub-word outputs); add the spans to it yourself.
    """
    outputs = _one_text(outputs, reference)
    spans, counts = _pipeline_spans(outputs, reference, misaligned=misaligned, scheme=scheme, labels=labels)
    if scorer is not None:
        if outputs and "entity_group" in outputs[0]:
            scorer.use(misaligned=misaligned)  # entities' characters mapped onto tokens
        elif outputs:
            scorer.use(subwords="first")  # each word takes its first sub-word's tag
        for k, v in counts.items():
            if v:
                scorer.note(k, v)
    return spans, counts


def _one_text(outputs: Any, reference: Document) -> Sequence[Mapping[str, Any]]:
    """One text's pipeline output (a list of entity dicts): ``pipeline(texts)`` gives a list
    of such lists, one per text, which is that text's list when it holds one, else an error."""
    if isinstance(outputs, Mapping) or isinstance(outputs, (str, bytes)):
        raise InputError(f"document {reference.id!r}: the pipeline output is a list of entity dicts, "
                         f"got a {type(outputs).__name__}")
    entries: list[Any] = list(outputs)
    if entries and all(isinstance(o, (list, tuple)) for o in entries):
        if len(entries) == 1:  # pipeline([text])
            entries = list(entries[0])
        else:
            raise InputError(
                f"document {reference.id!r}: the pipeline output is a list of {len(entries)} lists, one per "
                "text (what pipeline(texts) returns); pipeline_to_spans maps one text's list onto its document: "
                "call it once per document, e.g. [pipeline_to_spans(out, doc) for out, doc in zip(outputs, "
                "documents)]"
            )
    for k, o in enumerate(entries):
        if not isinstance(o, Mapping):
            raise InputError(f"document {reference.id!r}: pipeline entity #{k} is a {type(o).__name__}, "
                             f"not an entity dict: {o!r}")
    return entries


def _pipeline_spans(
    outputs: Sequence[Mapping[str, Any]],
    reference: Document,
    *,
    misaligned: str,
    scheme: str,
    labels: Iterable[str] | None,
) -> tuple[list[Span], dict[str, int]]:
    """[`pipeline_to_spans`][iescore.adapters.hf.pipeline_to_spans] without a scorer."""
    if reference.char_offsets is None:
        raise InputError(f"document {reference.id!r} has no character offsets; build it with iescore.text.document_from_text")
    offs = reference.char_offsets
    valid = None if labels is None else set(labels)
    counts = {"misaligned": 0, "dropped": 0}
    if not outputs:
        return [], counts
    for k, o in enumerate(outputs):
        for key in ("start", "end"):
            if o.get(key) is None:
                raise InputError(f"document {reference.id!r}: pipeline entity #{k} has no {key!r} offset")
        if not (0 <= int(o["start"]) < int(o["end"]) <= (offs[-1][1] if offs else 0)):
            raise InputError(
                f"document {reference.id!r}: pipeline entity #{k} characters [{o['start']}, {o['end']}) "
                f"are outside the text"
            )
    if "entity_group" in outputs[0]:
        spans = []
        for k, o in enumerate(outputs):
            lab = _label_of(o)
            if valid is not None and lab not in valid:
                raise InputError(
                    f"document {reference.id!r}: pipeline entity #{k} has unknown label {lab!r}; "
                    f"valid: {choices(sorted(valid))}"
                )
            hit = char_to_token_span(offs, int(o["start"]), int(o["end"]), misaligned=misaligned)
            if hit is None:
                counts["dropped"] += 1
                continue
            s, e, ok = hit
            counts["misaligned"] += not ok
            spans.append(Span(lab, s, e, float(o["score"]) if o.get("score") is not None else None))
        return spans, counts
    # sub-word tags: each word takes the tag of its first sub-word
    starts = [a for a, _ in offs]
    ends = [b for _, b in offs]
    tags = ["O"] * len(offs)
    scores = [float("nan")] * len(offs)
    first_at: dict[int, int] = {}
    for k, o in enumerate(sorted(outputs, key=lambda x: int(x["start"]))):
        a = int(o["start"])
        w = bisect.bisect_right(starts, a) - 1
        if w < 0 or a >= ends[w]:
            counts["dropped"] += 1  # a sub-word between words (e.g. on whitespace)
            continue
        if w in first_at:
            continue
        first_at[w] = k
        tag = _label_of(o)
        if valid is not None and tag != "O" and tag.partition("-")[2] not in valid:
            raise InputError(
                f"document {reference.id!r}: token {w} has tag {tag!r} with an unknown label; "
                f"valid labels: {choices(sorted(valid))}"
            )
        tags[w] = tag
        scores[w] = float(o.get("score", float("nan")))
    chunks = decode_tags([tags], scheme=scheme, repair="conlleval")
    spans = []
    for t, s, e in zip(chunks.type.tolist(), chunks.start.tolist(), chunks.end.tolist()):
        sc = [x for x in scores[s:e] if x == x]
        spans.append(Span(chunks.labels[t], s, e, sum(sc) / len(sc) if sc else None))
    return spans, counts


def id2label_list(id2label: Mapping[int, str] | Sequence[str]) -> list[str]:
    """``id2label`` (a model config's dict, or a list) as a list indexed by label id."""
    return label_name_list(id2label)


def trainer_batch(
    predictions: Any,
    label_ids: Any,
    *,
    id2label: Mapping[int, str] | Sequence[str],
    word_ids: Sequence[Sequence[int | None]] | None = None,
    strategy: str = "first",
    doc_ids: Sequence[str] | None = None,
    id_offset: int = 0,
) -> TaggedBatch:
    """Word-level tags from Trainer predictions, as an integer-coded [`TaggedBatch`][iescore.TaggedBatch].

    Args:
        predictions: logits ``(batch, seq, labels)`` or label ids ``(batch, seq)``.
        label_ids: reference label ids ``(batch, seq)``; ``-100`` marks positions
            that are not words (special tokens, padding, non-first sub-words).
        id2label: the model's ``config.id2label``.
        word_ids: per sequence, the fast tokenizer's ``word_ids()`` (None where a
            position is no word; a row shorter than ``label_ids``' is padding). Without
            it, every position whose label is not ``-100`` is a word (the usual
            first-sub-word labelling). With it, words are scored, labelled on their
            first sub-word or on every sub-word (``label_all_tokens``): a word's
            reference tag is the label of its first sub-word, and its predicted tag is
            chosen by ``strategy``: ``first`` sub-word, ``max`` (the label with the
            highest logit over the word's sub-words) or ``average`` (the highest mean
            probability); ``max`` and ``average`` need logits. A word whose sub-words
            carry labels of different types, and a label on a position of no word, are
            errors naming the sequence and the position; a word whose first sub-word is
            labelled ``-100`` while a later one is not is left out, with a warning.
        doc_ids: one id per sequence (default: numbered from ``id_offset``).
        id_offset: the number of the first sequence when ``doc_ids`` is not given.
    """
    return label_id_batch(label_ids, predictions, label_names=id2label, word_ids=word_ids, subwords=strategy,
                          doc_ids=doc_ids, id_offset=id_offset, sides=("label_ids", "predictions"))


def dataset_tags(
    dataset: Any, *, tags: str = "ner_tags", tokens: str = "tokens"
) -> tuple[list[list[str]], list[list[str]]]:
    """``(tokens, tag strings)`` per row of a ``datasets`` dataset; ``ClassLabel`` ids become names."""
    if tags not in dataset.column_names:
        raise InputError(f"dataset has no column {tags!r}; columns: {choices(dataset.column_names)}")
    feat = dataset.features[tags]
    inner = getattr(feat, "feature", None)
    names = getattr(inner, "names", None)
    rows = dataset[tags]
    if names is not None:
        out_tags = [[names[i] for i in row] for row in rows]
    else:
        out_tags = [[str(t) for t in row] for row in rows]
    out_tokens = dataset[tokens] if tokens in dataset.column_names else [[""] * len(r) for r in out_tags]
    return out_tokens, out_tags


def load_conll_dataset(
    path: str, *, column: int = -1, label_names: Sequence[str] | None = None, cache_dir: str | None = None
) -> Any:
    """Load a local CoNLL file with ``datasets.load_dataset`` into ``id``/``tokens``/``ner_tags`` rows.

    ``ner_tags`` is a ``Sequence(ClassLabel)`` whose names are ``label_names``
    (default: the file's tags, sorted with ``O`` first). ``-DOCSTART-`` lines are
    left out; every blank-line-separated sentence is one row.
    """
    import datasets

    lines = datasets.load_dataset("text", data_files=path, split="train", cache_dir=cache_dir)["text"]
    sents: list[tuple[list[str], list[str]]] = []
    cur_t: list[str] = []
    cur_g: list[str] = []
    for k, line in enumerate(lines):
        fields = line.split()
        if not fields or fields[0] == "-DOCSTART-":
            if cur_t:
                sents.append((cur_t, cur_g))
                cur_t, cur_g = [], []
            continue
        if len(fields) < 2:
            raise InputError(f"{path}:{k + 1}: need a token and a tag, got {line!r}")
        cur_t.append(fields[0])
        cur_g.append(fields[column])
    if cur_t:
        sents.append((cur_t, cur_g))
    found = sorted({g for _, gs in sents for g in gs} - {"O"})
    names = list(label_names) if label_names is not None else ["O", *found]
    index = {n: i for i, n in enumerate(names)}
    for _, gs in sents:
        for g in gs:
            if g not in index:
                raise InputError(f"{path}: tag {g!r} is not in label_names {names}")
    features = datasets.Features(
        {
            "id": datasets.Value("string"),
            "tokens": datasets.Sequence(datasets.Value("string")),
            "ner_tags": datasets.Sequence(datasets.ClassLabel(names=names)),
        }
    )
    return datasets.Dataset.from_dict(
        {
            "id": [str(k) for k in range(len(sents))],
            "tokens": [t for t, _ in sents],
            "ner_tags": [[index[g] for g in gs] for _, gs in sents],
        },
        features=features,
    )
