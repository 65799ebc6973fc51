"""The input of the tag pipeline: tag sequences as one integer-coded batch.

[`tagged_batch`][iescore.scoring.batch.tagged_batch] checks the shape of per-document tag lists (naming the document
and position of what is wrong) and flattens them into a [`TaggedBatch`][iescore.scoring.batch.TaggedBatch] of
`TagArrays` over one `Vocabulary`;
readers ([`iescore.io.conll`][iescore.io.conll], [`iescore.adapters.hf`][iescore.adapters.hf]) build the batch
directly; `end_to_end` builds one from documents put end to end (the streaming
scorer's held input). Decoding starts from here (`iescore.scoring.tags`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..decode.vocab import TagArrays, Vocabulary
from ..errors import InputError
from ..ids import NumberedIds, check_unique

_I64 = np.int64


@dataclass(frozen=True)
class TaggedBatch:
    """Integer-coded tag input for a batch of documents.

    ``doc_offsets[k]`` is where document ``k`` starts in the flat arrays;
    ``reference.segments`` lists sentence starts (chunks never cross them).
    ``extra`` holds per-document token lines that conlleval counts for token
    accuracy but that carry no chunks (``-DOCSTART-`` lines): ``[lines, agreeing]``.
    ``where(index, side)`` describes a flat position for error messages.
    ``options`` are [`Config`][iescore.config.Config] fields that the reader of the
    batch fixed (``documents``, ``subwords``); [`Scorer.add_batch`][iescore.scoring.stream.Scorer.add_batch] records them.
    ``notes`` count what the reader skipped (``{"comment lines": n}``), which
    ``add_batch`` adds to the report's ``repairs["adapter"]``.
    """

    vocab: Vocabulary
    reference: TagArrays
    prediction: TagArrays
    doc_offsets: np.ndarray
    doc_ids: Sequence[str]
    tokens: Sequence[str] | None = None
    extra: np.ndarray | None = None
    where: Callable[[int, str], str] | None = None
    options: Mapping[str, str] = field(default_factory=dict)
    notes: Mapping[str, int] = field(default_factory=dict)

    @property
    def n_tokens(self) -> int:
        return len(self.reference.ids)


def tagged_batch(
    reference: Sequence[Sequence[str]],
    prediction: Sequence[Sequence[str]],
    *,
    doc_ids: Sequence[str] | None = None,
    tokens: Sequence[Sequence[str]] | None = None,
    vocab: Vocabulary | None = None,
    id_offset: int = 0,
) -> TaggedBatch:
    """Build a [`TaggedBatch`][iescore.scoring.batch.TaggedBatch] from per-document tag lists (one list per document).

    Without ``doc_ids`` the documents are numbered from ``id_offset``. Any iterable
    of documents, and of tags per document, is accepted (a generator is read once
    into a list); so is a 2-D numpy array (a row per document). A single sequence of
    tags, a tag that is not a string (e.g. sequences nested one level too deep) and
    documents of different lengths are errors naming the document and position."""
    return built(*checked(reference, prediction, doc_ids, tokens, id_offset), vocab)


def built(
    reference: Sequence[Sequence[str]],
    prediction: Sequence[Sequence[str]],
    ids: Sequence[str],
    lengths: list[int],
    tokens: Sequence[Sequence[str]] | None,
    vocab: Vocabulary | None = None,
) -> TaggedBatch:
    """[`tagged_batch`][iescore.scoring.batch.tagged_batch] of input that `checked` returned: the tags coded (a tag
    that is not a string is an error naming where it is), the positions laid out."""
    from itertools import chain

    from ..decode.vocab import flatten

    vocab = vocab or Vocabulary()
    try:
        ref, _ = flatten(reference, vocab, lengths)
        pred, _ = flatten(prediction, vocab, lengths)
    except (InputError, TypeError):
        _check_tag_types(reference, prediction, ids)
        raise
    ends = np.cumsum(lengths, dtype=_I64)
    offsets = ends - np.array(lengths, dtype=_I64)
    flat_tokens = list(chain.from_iterable(tokens)) if tokens is not None else None
    return TaggedBatch(vocab, ref, TagArrays(pred.ids, segments=ref.segments), offsets, ids, flat_tokens, None,
                       _where(ids, offsets))


def end_to_end(reference: list[str], prediction: list[str], lengths: list[int], ids: Sequence[str],
               tokens: list[str] | None) -> TaggedBatch:
    """A batch of documents given end to end: each side's tags (strings) in one list, cut
    into documents by ``lengths``; the tokens, if any, in one list too.

    >>> b = end_to_end(["B-A", "O", "O"], ["B-A", "O", "B-A"], [2, 1], ("x", "y"), None)
    >>> b.doc_offsets.tolist(), b.where(2, "prediction")
    ([0, 2], "document 'y' (prediction), token 0")
    """
    vocab = Vocabulary()
    lens = np.array(lengths, dtype=_I64)
    offsets = np.cumsum(lens) - lens
    segments = offsets[lens > 0]
    ref = TagArrays(vocab.encode(reference, count=len(reference)), segments=segments)
    pred = TagArrays(vocab.encode(prediction, count=len(prediction)), segments=segments)
    return TaggedBatch(vocab, ref, pred, offsets, ids, tokens, None, _where(ids, offsets))


def _where(ids: Sequence[str], offsets: np.ndarray) -> Callable[[int, str], str]:
    """A batch's ``where``: the document and the token of a flat position."""

    def where(i: int, side: str) -> str:
        k = int(np.searchsorted(offsets, i, "right")) - 1
        return f"document {ids[k]!r} ({side}), token {i - int(offsets[k])}"

    return where


def checked(
    reference: Sequence[Sequence[str]],
    prediction: Sequence[Sequence[str]],
    doc_ids: Sequence[str] | None = None,
    tokens: Sequence[Sequence[str]] | None = None,
    id_offset: int = 0,
) -> tuple[Sequence[Sequence[str]], Sequence[Sequence[str]], Sequence[str], list[int], Sequence[Sequence[str]] | None]:
    """The shape checks of [`tagged_batch`][iescore.scoring.batch.tagged_batch] (all but the tags' types): the sequences
    (generators read into lists), the document ids, the lengths and the tokens."""
    reference, prediction = _sequences(reference, "reference"), _sequences(prediction, "prediction")
    if len(reference) != len(prediction):
        raise InputError(
            f"reference has {len(reference)} sequences but prediction has {len(prediction)}"
        )
    ids: Sequence[str] = tuple(map(str, doc_ids)) if doc_ids is not None else NumberedIds(id_offset, id_offset + len(reference))
    if len(ids) != len(reference):
        raise InputError(f"{len(ids)} document ids for {len(reference)} sequences")
    if doc_ids is not None:
        check_unique(ids)
    for side, seqs in (("reference", reference), ("prediction", prediction)):
        if any(issubclass(t, (str, bytes)) for t in set(map(type, seqs))):  # one C-level pass
            k = next(k for k, x in enumerate(seqs) if isinstance(x, (str, bytes)))
            raise InputError(f"document {ids[k]!r} ({side}): a tag sequence must be a list of tags, not a string")
    (reference, ref_lengths), (prediction, pred_lengths) = _lengths(reference), _lengths(prediction)
    if ref_lengths != pred_lengths:
        k = next(i for i, (a, b) in enumerate(zip(ref_lengths, pred_lengths)) if a != b)
        raise InputError(
            f"document {ids[k]!r}: reference has {ref_lengths[k]} tags but prediction has {pred_lengths[k]}"
        )
    if tokens is not None:
        tokens, token_lengths = _lengths(_sequences(tokens, "tokens"))
        if len(tokens) != len(reference) or token_lengths != ref_lengths:
            raise InputError("tokens must have the same shape as the tag sequences")
    return reference, prediction, ids, ref_lengths, tokens


def _sequences(x: Any, side: str) -> Any:
    """Per-document sequences as a sized sequence: a generator or other iterable is
    read once into a list, a 2-D numpy array into a list of rows."""
    if isinstance(x, (str, bytes)):
        raise InputError(f"{side} must be a list of tag sequences (one per document), not a string")
    if isinstance(x, np.ndarray):
        if x.ndim == 2:
            return x.tolist()
        if x.ndim == 1 and x.dtype.kind == "O":  # a ragged list of sequences
            return list(x)
        if x.ndim == 1:
            raise InputError(
                f"{side} is a 1-D array: one sequence of tags, where a list of sequences "
                f"(one per document) is expected; wrap it in a list"
            )
        raise InputError(f"{side}: expected one sequence of tags per document, got a {x.ndim}-D array")
    if not isinstance(x, Sequence):
        try:
            return list(x)
        except TypeError:
            raise InputError(
                f"{side} must be a list of tag sequences (one per document), got {type(x).__name__}"
            ) from None
    return x


def _lengths(seqs: Any) -> tuple[Any, list[int]]:
    """The sequences and the length of each; when some has no length (a generator),
    a new list in which each such sequence is read into a list."""
    try:
        return seqs, list(map(len, seqs))
    except TypeError:
        pass
    out = []
    for k, s in enumerate(seqs):
        if not hasattr(s, "__len__"):
            try:
                s = list(s)
            except TypeError:
                raise InputError(f"document #{k}: expected a sequence of tags, got {s!r}") from None
        out.append(s)
    return out, list(map(len, out))


def _check_tag_types(reference: Any, prediction: Any, ids: Sequence[str]) -> None:
    """Raise an InputError naming the first tag that is not a string (document and token)."""
    for side, seqs in (("reference", reference), ("prediction", prediction)):
        for k, seq in enumerate(seqs):
            for j, tag in enumerate(seq):
                if not isinstance(tag, str):
                    hint = (
                        "; the sequences are nested one level too deep (give one list of tags per document)"
                        if isinstance(tag, (list, tuple, np.ndarray)) else ""
                    )
                    raise InputError(
                        f"document {ids[k]!r} ({side}), token {j}: tags must be strings, "
                        f"got {tag!r} ({type(tag).__name__}){hint}"
                    )


def _locator(batch: TaggedBatch) -> Callable[[int], str]:
    """``tag id -> where it first occurs`` (file and line, or document and token), for errors."""

    def locate(tag_id: int) -> str:
        found = []  # (position, side rank, side): the reference first at equal positions
        for rank, (side, arrays) in enumerate((("reference", batch.reference), ("prediction", batch.prediction))):
            at = np.flatnonzero(arrays.ids == tag_id)
            if len(at):
                found.append((int(at[0]), rank, side))
        i, _, side = min(found)
        return batch.where(i, side) if batch.where is not None else f"{side} token {i}"

    return locate
