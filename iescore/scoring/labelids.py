"""The input of the tag pipeline from label ids: integer tags and their label names as one
integer-coded batch, per word where the labels are per sub-token.

A token classifier's labels come as label ids: a row per sequence, ``-100`` on the
positions that are not scored (special tokens, padding, and the sub-tokens after a word's
first under the usual labelling), predictions as label ids or as logits ``(seq, labels)``.
[`label_id_batch`][iescore.scoring.labelids.label_id_batch] turns them into a
[`TaggedBatch`][iescore.scoring.batch.TaggedBatch] over the label names, without a tag
string per position. Given each sequence's word ids (a fast tokenizer's ``word_ids()``:
the word of each position, None where there is none), it scores words: a word's gold tag
is its first sub-token's label, its predicted tag is read under the ``subwords`` policy:

- ``first``: the prediction at the word's first sub-token (label ids or logits);
- ``max``: the label of the highest logit over the word's sub-tokens (logits only);
- ``average``: the label of the highest mean probability (softmax) over them (logits only).

A word is the run of positions that carry one word id (as a tokenizer's ``word_ids()``
groups them). Data labelled on every sub-token (``label_all_tokens``) gives a word's
later sub-tokens its label or the ``I-`` tag of it; a word whose sub-tokens carry labels
of different types is an error, and so is a label on a position that belongs to no word;
a word whose first sub-token is ``-100`` while a later one is labelled is left out with a
warning.

>>> b = label_id_batch([[-100, 1, 2, 2, -100]], [[0, 1, 0, 0, 0]], label_names=["O", "B-PER", "I-PER"],
...                    word_ids=[[None, 0, 0, 0, None]])
>>> [b.vocab.tags[i] for i in b.reference.ids], [b.vocab.tags[i] for i in b.prediction.ids]
(['B-PER'], ['B-PER'])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..decode.vocab import TagArrays, Vocabulary
from ..errors import ConfigError, InputError, choices, warn
from ..ids import NumberedIds
from ..options import Subwords
from .batch import TaggedBatch

__all__ = ["IGNORE", "POLICIES", "label_id_batch", "label_name_list"]

IGNORE = -100  # the label id of a position that is not scored
POLICIES: tuple[Subwords, ...] = ("first", "max", "average")
_SIDES = ("reference", "prediction")


def label_name_list(label_names: Mapping[int, str] | Mapping[str, str] | Sequence[str]) -> list[str]:
    """The label names (a model config's ``id2label`` dict, or a list) as a list indexed by label id."""
    if isinstance(label_names, Mapping):
        n = len(label_names)
        try:
            out = [str(label_names[i]) for i in range(n)]  # type: ignore[index]
        except KeyError:
            try:
                out = [str(label_names[str(i)]) for i in range(n)]  # type: ignore[index]
            except KeyError:
                raise InputError(f"id2label must map the ids 0..{n - 1} to tags") from None
    else:
        if isinstance(label_names, (str, bytes)):
            raise InputError(f"label_names is a list of tags (one per label id), not a string: {label_names!r}")
        out = [str(x) for x in label_names]
    if len(set(out)) != len(out):
        raise InputError(f"id2label has duplicate tags: {out}")
    return out


def _vocab(names: list[str]) -> Vocabulary:
    v = Vocabulary()
    ids = v.encode(names)
    assert ids.tolist() == list(range(len(names)))
    return v


def _softmax(x: np.ndarray) -> np.ndarray:
    z = x - x.max(axis=-1, keepdims=True)
    e: np.ndarray = np.exp(z)
    out: np.ndarray = e / e.sum(axis=-1, keepdims=True)
    return out


def check_ids(arr: np.ndarray, side: str, n_lab: int) -> None:
    """Refuse a label id outside ``0..n_lab-1`` in the flat array ``arr``."""
    if not len(arr):
        return
    if arr.dtype.kind == "i":  # one reduction: seen as unsigned, a negative id exceeds any valid one
        ok = arr.view(f"u{arr.dtype.itemsize}").max() < n_lab
    else:
        ok = 0 <= arr.min() and arr.max() < n_lab
    if not ok:
        bad = np.flatnonzero((arr < 0) | (arr >= n_lab))
        raise InputError(f"{side} holds label id {int(arr[bad[0]])}, outside 0..{n_lab - 1} (id2label)")


def nan_logits(side: str, seq: str, position: int, names: list[str]) -> str:
    """The error of NaN logits at ``position`` of sequence ``seq``."""
    return (f"{side}: sequence {seq!r}, position {position} has NaN logits (a model that diverged?); "
            f"their arg-max would read as label id 0 ({names[0]!r})")


def check_integral(ids: np.ndarray, keep: np.ndarray, side: str, seq: Sequence[str], first: int) -> None:
    """Refuse a label id of a float array that is not an integer (1.5, NaN: truncating it
    would give another label) at the positions ``keep`` of ``ids``, whose first row is
    sequence ``seq[first]``."""
    at = keep & (ids != np.trunc(ids))
    if at.any():
        i, j = np.argwhere(at)[0].tolist()
        raise InputError(f"{side}: sequence {seq[first + i]!r}, position {j} holds label id {float(ids[i, j])!r}, "
                         f"not an integer")


def first_subwords(
    labels: np.ndarray, preds: np.ndarray, n_lab: int, dtype: Any, names: list[str], seq: Sequence[str],
    sides: tuple[str, str] = _SIDES,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The label ids at the positions not labelled -100, row after row, as ``dtype``,
    and the number of such positions per row (``preds``: ids, or logits to arg-max;
    ``names``: id2label; ``seq``: the sequences' ids, for errors). Done a block of rows at
    a time, so only the narrow outputs are written in full."""
    ref_side, pred_side = sides
    width = labels.shape[1]
    rows = max(1, (1 << 16) // max(width, 1))
    # words per row: a float32 matrix-vector product counts them exactly (and faster than
    # a sum along short rows) while a row holds fewer than 2**24 positions
    ones = np.ones(width, dtype=np.float32) if width < 1 << 24 else None
    refs, preds_out, lengths = [], [], []
    for a in range(0, labels.shape[0], rows):
        lab = labels[a : a + rows]
        keep = lab != IGNORE
        lengths.append((keep.astype(np.float32) @ ones).astype(np.int64) if ones is not None else keep.sum(axis=1))
        block = preds[a : a + rows]
        if block.ndim == 3:
            best = block.argmax(-1)
            if block.dtype.kind in "fc":  # a row with a NaN has its (first) NaN as arg-max
                at = np.isnan(np.take_along_axis(block, best[..., None], -1)[..., 0]) & keep
                if at.any():
                    i, j = np.argwhere(at)[0].tolist()
                    raise InputError(nan_logits(pred_side, seq[a + i], j, names))
            block = best
        elif block.dtype.kind in "fc":
            check_integral(block, keep, pred_side, seq, a)
        if lab.dtype.kind in "fc":
            check_integral(lab, keep, ref_side, seq, a)
        flat = keep.ravel()
        r, p = lab.ravel()[flat], block.ravel()[flat]
        check_ids(r, ref_side, n_lab)
        check_ids(p, pred_side, n_lab)
        refs.append(r.astype(dtype))
        preds_out.append(p.astype(dtype))
    if not refs:
        z = np.zeros(0, dtype=dtype)
        return z, z, np.zeros(0, dtype=np.int64)
    ref = refs[0] if len(refs) == 1 else np.concatenate(refs)
    pred = preds_out[0] if len(preds_out) == 1 else np.concatenate(preds_out)
    return ref, pred, np.concatenate(lengths)


def _word_id_rows(word_ids: Sequence[Sequence[int | None]], width: int, seq: Sequence[str], ref_side: str) -> tuple[np.ndarray, list[int]]:
    """The word ids as a ``(batch, width)`` int64 array, -1 where a position has no word
    (None or a negative id, and past the end of a shorter row); the rows' own lengths."""
    out = np.full((len(word_ids), width), -1, dtype=np.int64)
    lengths = []
    for b, row in enumerate(word_ids):
        if isinstance(row, (str, bytes)) or not hasattr(row, "__len__"):
            raise InputError(f"word_ids: sequence {seq[b]!r} is {row!r}, not a list of word ids")
        try:
            arr = np.array([-1 if w is None else w for w in row], dtype=np.int64).reshape(-1)
        except (TypeError, ValueError):
            bad = next((w for w in row if w is not None and not isinstance(w, (int, np.integer))), row)
            raise InputError(f"word_ids: sequence {seq[b]!r} holds {bad!r}; a word id is an integer or None") from None
        lengths.append(len(arr))
        arr[arr < 0] = -1
        if len(arr) > width:
            beyond = np.flatnonzero(arr[width:] >= 0)
            if len(beyond):
                p = width + int(beyond[0])
                raise InputError(
                    f"word_ids: sequence {seq[b]!r} has {len(arr)} positions, word {int(arr[p])} at position {p}, "
                    f"but its {ref_side} row has {width} (the word ids of another tokenization?)"
                )
            arr = arr[:width]
        out[b, : len(arr)] = arr
    return out, lengths


def _type_ids(names: list[str]) -> np.ndarray:
    """Per label id, the number of its entity type (-1 for ``O``): a tag is split at its
    first ``-``, a tag without one is a bare type."""
    types: dict[str, int] = {}
    out = []
    for name in names:
        if name == "O":
            out.append(-1)
            continue
        head, sep, tail = name.partition("-")
        out.append(types.setdefault(tail if sep else name, len(types)))
    return np.array(out, dtype=np.int64)


def words(
    labels: np.ndarray, preds: np.ndarray, word_ids: Sequence[Sequence[int | None]], policy: str,
    names: list[str], seq: Sequence[str], sides: tuple[str, str] = _SIDES,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per word, the gold label id and the predicted one under ``policy``, row after row,
    and the number of words per row (see the module docstring)."""
    ref_side, pred_side = sides
    n_seq, width = labels.shape
    n_lab = len(names)
    if len(word_ids) != n_seq:
        raise InputError(f"{len(word_ids)} word_ids lists for a batch of {n_seq} sequences")
    wid, own = _word_id_rows(word_ids, width, seq, ref_side)
    labelled = labels != IGNORE
    for side, arr in ((ref_side, labels), (pred_side, preds)):
        if arr.ndim == 2 and arr.dtype.kind in "fc":
            check_integral(arr, labelled, side, seq, 0)
    stray = labelled & (wid < 0)
    if stray.any():
        b, p = np.argwhere(stray)[0].tolist()
        why = ("its word id is None (a special token?)" if p < own[b]
               else f"word_ids has {own[b]} positions (the word ids of another example or tokenization?)")
        raise InputError(f"{ref_side}: sequence {seq[b]!r}, position {p} holds label id {int(labels[b, p])} "
                         f"but belongs to no word: {why}")
    in_word = wid >= 0
    prev = np.full_like(wid, -1)
    prev[:, 1:] = wid[:, :-1]
    pos = np.flatnonzero(in_word)  # flat positions inside words, words contiguous
    starts = (wid != prev).ravel()[pos]  # a word starts where the word id changes
    word_of = np.cumsum(starts) - 1
    first_pos = pos[starts]
    flat_labels = labels.reshape(-1).astype(np.int64, copy=False)
    lab_in = flat_labels[pos]
    check_ids(lab_in[lab_in != IGNORE], ref_side, n_lab)
    gold = flat_labels[first_pos]
    kept = gold != IGNORE
    # the sub-tokens after a word's first: labelled ones agree with it in type
    later = np.flatnonzero(~starts & (lab_in != IGNORE))
    if len(later):
        first_lab = gold[word_of[later]]
        orphan, later = later[first_lab == IGNORE], later[first_lab != IGNORE]
        kinds = _type_ids(names)
        clash = later[kinds[lab_in[later]] != kinds[gold[word_of[later]]]]
        if len(clash):
            k = int(clash[0])
            b, p = divmod(int(pos[k]), width)
            a = int(first_pos[word_of[k]]) - b * width
            raise InputError(
                f"{ref_side}: sequence {seq[b]!r}, word {int(wid[b, p])}: its sub-tokens carry "
                f"{names[int(lab_in[k])]!r} at position {p} but {names[int(gold[word_of[k]])]!r} at its first, "
                f"position {a}; a word has one gold label (its later sub-tokens may carry it or its I- tag, as "
                "label_all_tokens writes them)"
            )
        if len(orphan):
            k = int(orphan[0])
            b, p = divmod(int(pos[k]), width)
            n = len(np.unique(word_of[orphan]))
            warn(f"{ref_side}: sequence {seq[b]!r}, word {int(wid[b, p])}: its first sub-token is labelled -100 but "
                 f"position {p} holds {names[int(lab_in[k])]!r}; {n} such word{'s' if n > 1 else ''} left out "
                 "(a word's gold tag is its first sub-token's label)")
    ref = gold[kept]
    at = first_pos[kept]
    if preds.ndim == 2:
        pred = preds.reshape(-1)[at]
        check_ids(pred, pred_side, n_lab)
    else:
        flat = preds.reshape(-1, preds.shape[-1])
        if policy == "first":
            rows, cut = flat[at], None
        else:
            mine = kept[word_of]  # the sub-tokens of the words kept
            rows = flat[pos[mine]]
            cut = np.flatnonzero(starts[mine])
        if rows.dtype.kind in "fc":
            nan = np.isnan(rows).any(-1)
            if nan.any():
                k = int(nan.argmax())
                b, p = divmod(int(at[k] if cut is None else pos[mine][k]), width)
                raise InputError(nan_logits(pred_side, seq[b], p, names))
        if cut is None:
            pred = rows.argmax(-1)
        elif policy == "max":
            pred = np.maximum.reduceat(rows, cut, axis=0).argmax(-1) if len(cut) else np.zeros(0, np.int64)
        else:
            pred = np.add.reduceat(_softmax(rows.astype(np.float64)), cut, axis=0).argmax(-1) if len(cut) \
                else np.zeros(0, np.int64)
    lengths = np.bincount(at // width, minlength=n_seq).astype(np.int64) if width else np.zeros(n_seq, np.int64)
    return ref, pred, lengths


def label_id_batch(
    reference: Any,
    prediction: Any,
    *,
    label_names: Mapping[int, str] | Sequence[str],
    word_ids: Sequence[Sequence[int | None]] | None = None,
    subwords: str = "first",
    doc_ids: Sequence[str] | None = None,
    id_offset: int = 0,
    sides: tuple[str, str] = _SIDES,
) -> TaggedBatch:
    """A [`TaggedBatch`][iescore.scoring.batch.TaggedBatch] of label ids (see the module docstring).

    Args:
        reference: gold label ids, ``(batch, seq)`` (a 2-D array, or rows of equal or
            different lengths); ``-100`` marks positions that are not scored.
        prediction: label ids of the reference's shape, or logits ``(batch, seq, labels)``
            (rows of different lengths: one ``(seq, labels)`` array per row).
        label_names: the tag of each label id (a list, or a model config's ``id2label``).
        word_ids: per sequence, the word of each position (None, or a negative id, where
            there is none): words are scored instead of the positions not labelled ``-100``.
        subwords: how a word's predicted tag comes from its sub-tokens, ``first``, ``max``
            or ``average`` (the last two need logits and word ids).
        doc_ids: one id per sequence (default: numbered from ``id_offset``).
        sides: the names of the two inputs in errors.
    """
    if subwords not in POLICIES:
        raise ConfigError(f"unknown strategy {subwords!r}; valid: {choices(POLICIES)}")
    names = label_name_list(label_names)
    ref_side, pred_side = sides
    labels, preds = _arrays(reference, prediction, sides)
    if labels.ndim != 2:
        raise InputError(f"{ref_side} must have shape (batch, seq), got {labels.shape}")
    if preds.shape[:2] != labels.shape or preds.ndim not in (2, 3):
        raise InputError(
            f"{pred_side} of shape {preds.shape} do not match {ref_side} of shape {labels.shape} "
            "(expected (batch, seq) ids or (batch, seq, labels) logits)"
        )
    if preds.ndim == 3 and preds.shape[2] != len(names):
        raise InputError(f"logits have {preds.shape[2]} labels but id2label has {len(names)}")
    if subwords != "first" and (preds.ndim != 3 or word_ids is None):
        raise ConfigError(f"strategy={subwords!r} needs logits and word_ids")
    n_lab = len(names)
    narrow = np.uint8 if n_lab <= 256 else np.int32  # tag ids as narrow as the label set allows
    n_seq = labels.shape[0]
    ids: Sequence[str] = tuple(map(str, doc_ids)) if doc_ids is not None else NumberedIds(id_offset, id_offset + n_seq)
    if len(ids) != n_seq:
        raise InputError(f"{len(ids)} document ids for {n_seq} sequences")
    if word_ids is None:
        ref, pred, lengths = first_subwords(labels, preds, n_lab, narrow, names, ids, sides)
    else:
        ref, pred, lengths = words(labels, preds, word_ids, subwords, names, ids, sides)
        ref, pred = ref.astype(narrow), pred.astype(narrow)
    offsets = np.cumsum(lengths, dtype=np.int64)
    offsets -= lengths
    # sequences are segments too, the empty ones left out (the offsets as they are when none is)
    segments = offsets if lengths.all() else offsets[lengths > 0]

    def where(i: int, side: str) -> str:
        k = int(np.searchsorted(offsets, i, "right")) - 1
        return f"sequence {ids[k]!r} ({side}), word {i - int(offsets[k])}"

    return TaggedBatch(
        _vocab(names), TagArrays(ref, segments=segments), TagArrays(pred, segments=segments), offsets, ids, None, None, where,
        options={"subwords": subwords},
    )


def _arrays(reference: Any, prediction: Any, sides: tuple[str, str]) -> tuple[np.ndarray, np.ndarray]:
    """The two inputs as arrays, rows of different lengths padded (``-100`` in the reference)."""
    labels = reference if isinstance(reference, np.ndarray) else None
    preds = prediction if isinstance(prediction, np.ndarray) else None
    if labels is None:
        try:
            labels = np.asarray(reference)
        except ValueError:
            labels = None
        if labels is not None and labels.dtype.kind == "O":
            labels = None
    if preds is None:
        try:
            preds = np.asarray(prediction)
        except ValueError:
            preds = None
        if preds is not None and preds.dtype.kind == "O":
            preds = None
    if labels is not None and preds is not None:
        return labels, preds
    # ragged rows: padded to the longest, the reference with -100
    ref_rows = [np.asarray(r) for r in reference]
    pred_rows = [np.asarray(p) for p in prediction]
    ref_side, pred_side = sides
    if len(ref_rows) != len(pred_rows):
        raise InputError(f"{ref_side} has {len(ref_rows)} sequences but {pred_side} has {len(pred_rows)}")
    for k, (r, p) in enumerate(zip(ref_rows, pred_rows)):
        if r.ndim != 1 or p.ndim not in (1, 2) or len(r) != len(p):
            raise InputError(f"sequence #{k}: {ref_side} has shape {r.shape} but {pred_side} has shape {p.shape} "
                             "(expected label ids, and label ids or logits of the same length)")
    width = max((len(r) for r in ref_rows), default=0)
    labels = np.full((len(ref_rows), width), IGNORE, dtype=np.result_type(*[r.dtype for r in ref_rows], np.int64))
    tail = pred_rows[0].shape[1:] if pred_rows else ()
    if any(p.shape[1:] != tail for p in pred_rows):
        raise InputError(f"{pred_side}: rows mix label ids and logits, or logits of different widths")
    preds = np.zeros((len(pred_rows), width, *tail), dtype=np.result_type(*[p.dtype for p in pred_rows], np.int64))
    for k, (r, p) in enumerate(zip(ref_rows, pred_rows)):
        labels[k, : len(r)] = r
        preds[k, : len(p)] = p
    return labels, preds
