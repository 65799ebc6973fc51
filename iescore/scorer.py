"""Scoring entry points: one-shot functions and the streaming :class:`Scorer`.

Every entry point resolves its options into one :class:`~iescore.config.Config`
and runs the same engine per batch of documents; a report sums the batches'
counts. Streaming, one-shot scoring and merged shards therefore give the same
report.

Example (De Sitter et al. 2004, Example 6, with the papers' 1-based positions):
    >>> ref = Document(id="D", tokens=("w",) * 101,
    ...                spans=(Span.from_inclusive("loc", 18, 25), Span.from_inclusive("loc", 93, 100)))
    >>> pred = [[Span.from_inclusive("loc", 20, 25), Span.from_inclusive("loc", 93, 101),
    ...          Span.from_inclusive("loc", 50, 52)]]
    >>> r = score(reference=[ref], prediction=pred, rule="O(1,2)")
    >>> r.overall.tp, r.overall.fp, r.overall.fn
    (2, 1, 0)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .cells import CellTable
from .config import PREPARATION, Config, get_normaliser
from .match import (
    SPAN_FIELDS,
    Units,
    ao_pairs,
    cell_index,
    collapse,
    count,
    exact_disjoint,
    obd_pairs,
)
from .ts import TS_CELL_FIELDS, TS_FIELDS, check_multi_instance, ts_counts, ts_weighted, unit_totals
from .errors import ConfigError, InputError, choices, warn
from .ids import IdRegistry, NumberedIds, check_unique, concat_ids, string_hash
from .measures import FIELDS
from .model import Document, Span, Template
from .report import ItemTable, Report
from .decode import (
    PAIR_TAGS,
    PairChunks,
    Scheme,
    TagArrays,
    Vocabulary,
    decode_arrays,
    decode_pair,
    detect_scheme,
    get_scheme,
)

__all__ = ["Scorer", "score", "score_tags", "score_templates", "TaggedBatch", "tagged_batch"]

_I64 = np.int64
_PRF_FIELDS = 3  # tp, fp, fn
_CELL = np.int32  # per-document counts fit in 32 bits; sums are taken in 64 bits


@dataclass(frozen=True)
class TaggedBatch:
    """Integer-coded tag input for a batch of documents.

    ``doc_offsets[k]`` is where document ``k`` starts in the flat arrays;
    ``reference.segments`` lists sentence starts (chunks never cross them).
    ``extra`` holds per-document token lines that conlleval counts for token
    accuracy but that carry no chunks (``-DOCSTART-`` lines): ``[lines, agreeing]``.
    ``where(index, side)`` describes a flat position for error messages.
    ``options`` are :class:`~iescore.config.Config` fields that the reader of the
    batch fixed (``documents``, ``subwords``); :meth:`Scorer.add_batch` records them.
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
    """Build a :class:`TaggedBatch` from per-document tag lists (one list per document).

    Without ``doc_ids`` the documents are numbered from ``id_offset``. Any iterable
    of documents, and of tags per document, is accepted (a generator is read once
    into a list); so is a 2-D numpy array (a row per document). A single sequence of
    tags, a tag that is not a string (e.g. sequences nested one level too deep) and
    documents of different lengths are errors naming the document and position."""
    from itertools import chain

    from .decode import flatten

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
    vocab = vocab or Vocabulary()
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
    try:
        ref, lengths = flatten(reference, vocab, ref_lengths)
        pred, _ = flatten(prediction, vocab, pred_lengths)
    except (InputError, TypeError):
        _check_tag_types(reference, prediction, ids)
        raise
    offsets = np.concatenate(([0], np.cumsum(lengths)[:-1])).astype(_I64) if len(lengths) else np.zeros(0, _I64)
    flat_tokens = None
    if tokens is not None:
        tokens, token_lengths = _lengths(_sequences(tokens, "tokens"))
        if len(tokens) != len(reference) or token_lengths != lengths.tolist():
            raise InputError("tokens must have the same shape as the tag sequences")
        flat_tokens = list(chain.from_iterable(tokens))

    def where(i: int, side: str) -> str:
        k = int(np.searchsorted(offsets, i, "right")) - 1
        return f"document {ids[k]!r} ({side}), token {i - int(offsets[k])}"

    return TaggedBatch(vocab, ref, TagArrays(pred.ids, segments=ref.segments), offsets, ids, flat_tokens, None, where)


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


def _warn_label_sets(report: Report) -> None:
    """Warn (:class:`~iescore.errors.IEScoreWarning`) when the reference and the
    prediction each have items of at least two labels but no label in common: the
    columns are likely from different tasks (a chunk column scored against an NE
    column). One label against another (a single wrong entity) is ordinary."""
    n = len(report.labels)
    if not n:
        return
    ref = np.flatnonzero(np.bincount(report.reference.label, minlength=n))
    pred = np.flatnonzero(np.bincount(report.prediction.label, minlength=n))
    if len(ref) >= 2 and len(pred) >= 2 and not np.intersect1d(ref, pred).size:

        def names(ix: np.ndarray) -> str:
            shown = [report.labels[i] for i in ix[:5].tolist()]
            return choices(shown) + (f" and {len(ix) - 5} more" if len(ix) > 5 else "")

        warn(
            f"no predicted label occurs in the reference and no reference label in the prediction "
            f"(reference: {names(ref)}; prediction: {names(pred)}); are the columns from different tasks?"
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


@dataclass
class _Part:
    """The counts and items of one batch, with its own label list."""

    labels: list[str]
    doc_ids: Sequence[str]
    table: CellTable
    confusion: np.ndarray
    ref: ItemTable
    pred: ItemTable
    token_counts: np.ndarray | None
    repairs: dict[str, dict[str, int]] = field(default_factory=dict)
    ts_error: str | None = None
    ts_weighted: np.ndarray | None = None  # float TS counts when documents carry per-t-unit weights
    unit_totals: np.ndarray | None = None  # per document: total token weight, total separator weight
    unit_digest: int | None = None  # sum of a hash of each document's id and per-t-unit weights


def _empty_items() -> ItemTable:
    z = np.zeros(0, dtype=_I64)
    return ItemTable(z, z, z, z, np.zeros(0, np.int8), np.zeros(0), ())


class Scorer:
    """A streaming scorer: ``add`` batches, ``merge`` shards, then ``report()``.

    Args:
        config: a :class:`Config`; or give its fields as keyword arguments
            (``rule="O(1,1)"``, ``counting="one-to-one"``, ``scheme="IOB1"``...).

    Example:
        >>> s = Scorer(scheme="IOB2")
        >>> s.add_tags(reference=[["B-PER", "I-PER", "O"]], prediction=[["B-PER", "I-PER", "O"]])
        >>> s.add_tags(reference=[["B-LOC"]], prediction=[["O"]], doc_ids=["1b"])
        >>> r = s.report()
        >>> r.overall.tp, r.overall.fn, r.f
        (1, 1, 0.6666666666666666)
    """

    def __init__(self, config: Config | None = None, **options: Any) -> None:
        if config is not None and options:
            config = config.with_(**options)
        config = config if config is not None else Config(**options)
        if config.unit_weights is not None:  # a digest of the data this scorer is given
            config = config.with_(unit_weights=None)
        self.config = config
        self._parts: list[_Part] = []
        self._ids = IdRegistry()
        self._notes: dict[str, int] = {}
        self._unit: int | None = None  # digest of the per-t-unit weights seen (Config.unit_weights)
        # tag input under scheme="auto": the scheme the first batch with chunks fixed, and
        # which batch that was (an explicit scheme is fixed from the start)
        self._auto = config.scheme in ("auto", "spans")
        self._fixed: tuple[str, str] | None = None if self._auto else (config.scheme, "the scheme= option")
        self._batches = 0

    def note(self, kind: str, n: int = 1) -> None:
        """Count an adapter event (a span dropped or moved while mapping input);
        the report lists the totals under ``repairs["adapter"]``."""
        self._notes[kind] = self._notes.get(kind, 0) + int(n)

    def use(self, **options: str | None) -> None:
        """Record how the input was prepared (``documents``, ``subwords``, ``misaligned``,
        ``missing``: see :class:`~iescore.config.Config`), so that the signature says it.
        None means not used. A value other than one already recorded raises
        :class:`~iescore.errors.ConfigError`: one signature cannot describe both.

        >>> s = Scorer(); s.use(misaligned="contract"); s.config.misaligned
        'contract'
        """
        self.config = _prepared(self.config, options, "this scorer")

    # --- adding data -----------------------------------------------------------------
    def add(
        self,
        *,
        reference: Sequence[Document] | Sequence[Template],
        prediction: Sequence[Document] | Sequence[Sequence[Span]] | Sequence[Template],
    ) -> None:
        """Add documents: reference Documents with predicted Documents (same ids and
        tokens) or per-document span lists; or, in OBD, Templates on both sides."""
        reference = list(reference)
        prediction = list(prediction)
        if len(reference) != len(prediction):
            raise InputError(f"{len(reference)} reference documents but {len(prediction)} predictions")
        if reference and isinstance(reference[0], Template):
            self._add_part(_templates_part(reference, prediction, self.config))  # type: ignore[arg-type]
            return
        part = _documents_part(reference, prediction, self.config)  # type: ignore[arg-type]
        self._add_part(part)
        if part.unit_digest is not None:
            self._unit = _add_digests(self._unit, part.unit_digest)
            self.config = self.config.with_(unit_weights=f"{self._unit:016x}")

    def add_tags(
        self,
        *,
        reference: Sequence[Sequence[str]],
        prediction: Sequence[Sequence[str]],
        doc_ids: Sequence[str] | None = None,
        tokens: Sequence[Sequence[str]] | None = None,
    ) -> None:
        """Add tag sequences, one sequence per document."""
        self.add_batch(tagged_batch(reference, prediction, doc_ids=doc_ids, tokens=tokens, id_offset=len(self._ids)))

    def add_batch(self, batch: TaggedBatch) -> None:
        """Add an integer-coded :class:`TaggedBatch` (the fast path).

        Under ``scheme="auto"`` every batch's scheme is detected from its own tags;
        the first batch that holds a chunk fixes the scheme for all later ones. A
        later batch whose tags suggest another scheme raises
        :class:`~iescore.errors.ConfigError` (scoring all batches in one call would
        decode them differently) -- except a batch that looks like IOB2 after an IOB1
        one, which one call would also decode as IOB1."""
        n = self._batches + 1
        config = _prepared(self.config, batch.options, f"batch {n}")
        fixes = self._fixed
        if not self._auto:
            part, _ = _tags_part(batch, config)
        else:
            found = detect_scheme(batch.reference, batch.vocab)
            fixed = self._fixed[0] if self._fixed is not None else None
            # detect_scheme calls B/I tags IOB2 unless a chunk starts with I-; once a batch had
            # such a chunk, one call over all batches would say IOB1 for them all
            same = fixed is not None and (found == fixed or (fixed, found) == ("IOB1", "IOB2"))
            part, _ = _tags_part(batch, config.with_(scheme=fixed if same else found))
            evidence = len(part.ref) > 0 or len(part.pred) > 0 or any(
                v for rep in part.repairs.values() for v in rep.values()
            )
            if evidence and fixed is not None and not same:
                assert self._fixed is not None
                raise ConfigError(
                    f"scheme='auto': batch {n} ({_describe(batch.doc_ids)}) has tags of scheme {found}, but "
                    f"{self._fixed[1]} fixed scheme {fixed}; scoring them in one call would decode them "
                    f"differently: pass scheme= explicitly (e.g. scheme={found!r} or scheme={fixed!r})"
                )
            if evidence and fixed is None:
                fixes = (found, f"batch {n} ({_describe(batch.doc_ids)})")
            # the scheme one call would record: the fixed one, else the first batch's
            scheme = fixes[0] if fixes is not None else (
                config.scheme if config.scheme not in ("auto", "spans") else found)
            config = config.with_(scheme=scheme)
        self._add_part(part)
        self.config, self._fixed, self._batches = config, fixes, n

    def _add_part(self, part: _Part) -> None:
        self._ids.add(part.doc_ids)
        self._parts.append(part)

    def merge(self, other: Scorer) -> Scorer:
        """A new scorer holding both scorers' documents (e.g. shards of a distributed run).

        The options must agree. Under ``scheme="auto"`` the schemes the two fixed must
        be the same (else :class:`~iescore.errors.ConfigError`: pass ``scheme=``); per-t-unit
        weight digests and the recorded input preparation combine."""
        if _comparable(other.config) != _comparable(self.config):
            raise ConfigError(
                f"cannot merge scorers with different options: {self.config.signature()} vs {other.config.signature()}"
            )
        config = _prepared(self.config, {k: getattr(other.config, k) for k in PREPARATION}, "the merged scorer")
        mine, theirs = self._fixed, other._fixed
        if mine is not None and theirs is not None and mine[0] != theirs[0]:
            raise ConfigError(
                f"cannot merge a scorer whose tags were decoded as {mine[0]} ({mine[1]}) with one whose "
                f"tags were decoded as {theirs[0]} ({theirs[1]}); pass scheme= explicitly to both"
            )
        fixed = mine or theirs
        if fixed is not None:
            scheme = fixed[0]
        else:  # no chunks anywhere: the first scheme recorded
            named = [c.scheme for c in (self.config, other.config) if c.scheme not in ("auto", "spans")]
            scheme = named[0] if named else self.config.scheme
        out = Scorer(config.with_(scheme=scheme))
        out._auto = self._auto and other._auto
        out._fixed = fixed
        out._batches = self._batches + other._batches
        for p in self._parts + other._parts:
            out._add_part(p)
        for notes in (self._notes, other._notes):
            for k, v in notes.items():
                out.note(k, v)
        out._unit = _add_digests(self._unit, other._unit)
        if out._unit is not None:
            out.config = out.config.with_(unit_weights=f"{out._unit:016x}")
        return out

    # --- the report --------------------------------------------------------------------
    def report(self) -> Report:
        """Assemble the report from all batches' counts (warning when reference and
        prediction have no label in common)."""
        report = _assemble(self._parts, self.config, self._notes)
        _warn_label_sets(report)
        return report


def _prepared(config: Config, options: Mapping[str, str | None], what: str) -> Config:
    """``config`` with the input-preparation ``options`` recorded (see :meth:`Scorer.use`)."""
    changes = {}
    for name, value in options.items():
        if name not in PREPARATION:
            raise ConfigError(f"unknown input-preparation option {name!r}; valid: {choices(PREPARATION)}")
        if value is None:
            continue
        have = getattr(config, name)
        if have is not None and have != value:
            raise ConfigError(
                f"{what} was prepared with {name}={value!r} but the scorer has {name}={have!r}; "
                "one signature cannot describe both: score them with separate scorers"
            )
        changes[name] = value
    return config.with_(**changes) if changes else config


def _comparable(config: Config) -> Config:
    """The options two scorers must share to merge (the scheme, the weight digest and
    the input preparation are checked and combined on their own)."""
    return config.with_(scheme="auto", unit_weights=None, **dict.fromkeys(PREPARATION))


def _add_digests(a: int | None, b: int | None) -> int | None:
    """Two additive digests combined (None: no data of that kind)."""
    if a is None or b is None:
        return a if b is None else b
    return (a + b) % 2**64


def _describe(ids: Sequence[str]) -> str:
    """A batch's documents for an error message."""
    if not len(ids):
        return "no documents"
    return f"document {ids[0]!r}" if len(ids) == 1 else f"documents {ids[0]!r}..{ids[-1]!r}"


# --- building parts -------------------------------------------------------------------

def _label_space(names: Iterable[str], cfg: Config) -> tuple[list[str], dict[str, int]]:
    sup = cfg.supertag_map()
    final = sorted({sup.get(n, n) for n in names})
    index = {n: i for i, n in enumerate(final)}
    return final, {n: index[sup.get(n, n)] for n in names}


def _keys(tokens_of: Callable[[int], Sequence[str]], n: int, cfg: Config) -> list[tuple[str, ...]]:
    norm = get_normaliser(cfg.normaliser)
    out = []
    for i in range(n):
        out.append(tuple(t for t in (norm(x) for x in tokens_of(i)) if t))
    return out


def _score_units(
    R: Units,
    P: Units,
    *,
    cfg: Config,
    labels: list[str],
    doc_ids: Sequence[str],
    doc_tokens: np.ndarray | None,
    texts_r: Callable[[int], str] | None,
    texts_p: Callable[[int], str] | None,
    disjoint: bool = False,
    unit_weights: tuple[np.ndarray, np.ndarray] | None = None,
    hits: tuple[np.ndarray, np.ndarray] | None = None,
) -> _Part:
    """Run the engine on item-level units (AO positions and/or filler keys).

    AO match-all and match-best match spans by position (SPEC §2.1). OBD and AO's
    one-per-string match the distinct (normalised) strings of each document and label
    by the sequence rules (§2.2), with OBD's slot alignment (§3.3): one-per-string
    ignores positions (Siefkes §15.2), so its counts equal OBD's on the same spans, and
    each occurrence gets its string's status. The TS model counts positions in every mode.

    ``disjoint`` says that same-label spans of a side cannot overlap (decoded tags),
    so the TS model's multi-instance check is skipped; ``hits`` may give the exact
    matches found while decoding (``detail="prf"``)."""
    n_docs, L = len(doc_ids), len(labels)
    ix, R, P = cell_index(R, P, n_docs, L)  # the (document, label) cells holding a unit
    n_cells = len(ix)
    if doc_tokens is not None and n_docs and doc_tokens.max() < 2**31:
        doc_tokens = doc_tokens.astype(_CELL, copy=False)

    def cell_table(values: np.ndarray, fields: tuple[str, ...]) -> CellTable:
        return CellTable(doc=ix.doc, label=ix.label, values=values, fields=fields, n_labels=L,
                         doc_tokens=doc_tokens, n_docs=n_docs)

    positions = R.start is not None
    pairs = ao_pairs(R, P, cfg.rule) if positions and cfg.detail == "full" else None
    ts_error = None
    if not positions:
        ts_error = "the token & separator model needs token positions (templates have none)"
    elif not disjoint:
        found = [x for x in (check_multi_instance(R, labels, "reference", doc_ids),
                             check_multi_instance(P, labels, "prediction", doc_ids)) if x]
        ts_error = min(found, key=lambda x: x[0])[1] if found else None
    if cfg.detail == "prf":
        if not (disjoint and cfg.setting == "AO" and cfg.rule.kind == "exact" and cfg.mode == "match-all"):
            raise ConfigError(
                "detail='prf' computes exact-match counts of tag input only "
                "(setting='AO', rule='E', mode='match-all'); use detail='full' for the rest"
            )
        res = exact_disjoint(R, P, n_cells, L, n_fields=_PRF_FIELDS, dtype=_CELL, hits=hits)
        # tp, fp, fn: the only counts computed
        table = cell_table(res.cells, FIELDS[:_PRF_FIELDS])
        # no confidences: a read-only all-NaN view, no memory per item
        ref_items = ItemTable(R.doc, R.label, R.start, R.end, res.ref_status, np.broadcast_to(np.nan, len(R)), None)
        pred_items = ItemTable(P.doc, P.label, P.start, P.end, res.pred_status, np.broadcast_to(np.nan, len(P)), None)
        return _Part(labels, doc_ids, table, res.confusion, ref_items, pred_items, None, {},
                     "not computed (detail='prf')")
    best = cfg.mode == "match-best"
    if best and P.score is not None and len(P):
        finite = np.isfinite(P.score)
        if finite.any() and not finite.all():
            i = int(np.flatnonzero(~finite)[0])
            what = f"filler {' '.join(P.key[i])!r}" if P.key is not None and P.start is None else (
                f"span ({labels[int(P.label[i])]!r}, {int(P.start[i])}, {int(P.end[i])})" if P.start is not None else f"item {i}"
            )
            raise InputError(
                f"match-best needs a confidence on every prediction or on none: document "
                f"{doc_ids[int(P.doc[i])]!r}, predicted {what} has {float(P.score[i])!r}"
            )

    def table(U: Units, status: np.ndarray, text: Callable[[int], str] | None, filler: bool) -> ItemTable:
        n = len(U)
        start = U.start if (U.start is not None and not filler) else np.full(n, -1, dtype=_I64)
        end = U.end if (U.end is not None and not filler) else np.full(n, -1, dtype=_I64)
        score = U.score if U.score is not None else np.broadcast_to(np.nan, n)
        if filler and U.key is not None:
            txt: tuple[str, ...] | None = tuple(" ".join(k) for k in U.key)
        else:
            txt = tuple(text(i) for i in range(n)) if text is not None else None
        return ItemTable(U.doc, U.label, start, end, status, score, txt)

    cells = np.zeros((n_cells, len(SPAN_FIELDS) + len(TS_CELL_FIELDS)), dtype=_CELL)
    span_cells = cells[:, : len(SPAN_FIELDS)]  # the engine writes its counts here
    if cfg.setting == "AO" and not positions:
        raise ConfigError("setting='AO' needs token positions; templates are OBD-only (use setting='OBD')")
    if cfg.setting == "AO" and cfg.mode != "one-per-string":
        assert pairs is not None
        res = count(R, P, pairs, cells=ix, n_labels=L, counting=cfg.counting, best=best, cells_out=span_cells)
        ref_items = table(R, res.ref_status, texts_r, False)
        pred_items = table(P, res.pred_status, texts_p, False)
    else:
        # OBD, and one-per-string in AO (Siefkes §15.2: occurrences of one string
        # collapse to one, "different positions in the document are ignored"): the
        # distinct strings of a document and label are matched by the sequence rules
        # (SPEC §2.2) and aligned as OBD fillers (§3.3), never by position
        GR, gr = collapse(R)
        GP, gp = collapse(P)
        res = count(GR, GP, obd_pairs(GR, GP, cfg.rule), cells=ix, n_labels=L, counting=cfg.counting, best=best,
                    cells_out=span_cells)
        if cfg.setting == "AO":  # every occurrence carries its string's status
            ref_items = table(R, res.ref_status[gr], texts_r, False)
            pred_items = table(P, res.pred_status[gp], texts_p, False)
        else:
            ref_items = table(GR, res.ref_status, None, True)
            pred_items = table(GP, res.pred_status, None, True)
    if not np.shares_memory(res.cells, cells):
        span_cells[...] = res.cells
    weighted = None
    if ts_error is None and doc_tokens is not None:
        assert pairs is not None
        ts_counts(R, P, pairs, n_cells, out=cells[:, len(SPAN_FIELDS) :])
        if unit_weights is not None:
            weighted = ts_weighted(R, P, pairs, unit_weights[0], unit_weights[1], doc_tokens, L)
    totals = None
    if unit_weights is not None and doc_tokens is not None:
        totals = unit_totals(unit_weights[0], unit_weights[1], doc_tokens)
    return _Part(labels, doc_ids, cell_table(cells, FIELDS), res.confusion, ref_items, pred_items, None, {},
                 ts_error, weighted, totals)


_TOKEN_WINDOW = 1 << 17


def _token_sums(ref: np.ndarray, pred: np.ndarray, o_id: int, starts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per run of tokens beginning at ``starts`` (sorted, non-empty runs, the last
    one ending at the end): how many tags differ, and how many tokens are not ``O``
    on one side at least. A window at a time, in reused buffers: running counts
    (cumulative sums) are read at the run boundaries, and the runs' counts are their
    differences."""
    n, w = len(ref), _TOKEN_WINDOW
    bounds = np.append(starts, n)
    before = np.zeros((2, len(bounds)), dtype=_I64)  # differing / tagged tokens before each boundary
    d_buf, t_buf, o_buf = (np.empty(min(w, n), dtype=bool) for _ in range(3))
    run_buf = np.empty(min(w, n), dtype=np.int32)
    carry = [0, 0]
    for a in range(0, n, w):
        m = min(a + w, n) - a
        r, p = ref[a : a + m], pred[a : a + m]
        d = np.not_equal(r, p, out=d_buf[:m])
        t = np.not_equal(r, o_id, out=t_buf[:m])
        t |= np.not_equal(p, o_id, out=o_buf[:m])
        lo, hi = np.searchsorted(bounds, (a, a + m), "right")  # boundaries in (a, a + m]
        local = bounds[lo:hi] - (a + 1)
        for k, x in enumerate((d, t)):
            running = np.cumsum(x, dtype=np.int32, out=run_buf[:m])
            before[k, lo:hi] = running.take(local)
            before[k, lo:hi] += carry[k]
            carry[k] += int(running[m - 1])
    differ, tagged = np.diff(before, axis=1)
    return differ, tagged


def _decode_both(
    batch: TaggedBatch, scheme: Scheme, cfg: Config, label_map: np.ndarray | None, labels: list[str]
) -> PairChunks | None:
    """Both sides decoded and matched in one pass (:func:`~iescore.decode.pair.decode_pair`)
    when only exact counts are asked for (``detail="prf"``) and the vocabulary is small;
    else None (each side is then decoded on its own). Under ``repair="strict"`` an
    ill-formed chunk also gives None, so that the one-side decoder reports it. The
    chunks come labelled in the report's numbering (``label_map[vocabulary label]``,
    None when the two agree; ``labels`` are the report's), with document-relative
    offsets: they are the items as they are."""
    ref, pred, vocab = batch.reference, batch.prediction, batch.vocab
    if not (cfg.detail == "prf" and cfg.setting == "AO" and cfg.rule.kind == "exact" and cfg.mode == "match-all"
            and cfg.repair in ("conlleval", "strict") and 0 < len(ref.ids) and len(vocab.tags) <= PAIR_TAGS
            and ref.ids.dtype == pred.ids.dtype == np.uint8):
        return None
    if ref.segments is not pred.segments and not np.array_equal(ref.segments, pred.segments):
        return None
    role_of, label_of = vocab.roles(scheme)
    small = len(vocab.labels) < np.iinfo(np.int16).max
    out = decode_pair(
        ref.ids, pred.ids, role_of.astype(np.uint8), label_of.astype(np.int16 if small else np.int32),
        scheme=scheme, conlleval=cfg.repair == "conlleval", segments=ref.segments, groups=batch.doc_offsets,
        labels=labels, label_map=label_map, relative=True,
    )
    if cfg.repair == "strict" and (out.reference.ill.any() or out.prediction.ill.any()):
        return None
    return out


def _tags_part(batch: TaggedBatch, cfg: Config) -> tuple[_Part, str]:
    vocab = batch.vocab
    scheme_name = cfg.scheme
    if scheme_name in ("auto", "spans"):
        scheme_name = detect_scheme(batch.reference, vocab)
    scheme = get_scheme(scheme_name)
    cfg = cfg.with_(scheme=scheme.name)
    offsets = batch.doc_offsets
    n_docs = len(batch.doc_ids)

    def where(side: str) -> Callable[[int], str]:
        def f(i: int) -> str:
            if batch.where is not None:
                return batch.where(i, side)
            return f"{side} token {i}"

        return f

    vocab.roles(scheme, locate=_locator(batch))  # checks every tag against the scheme and registers its label
    labels, remap = _label_space(vocab.labels, cfg)
    # items in 32 bits (half the memory per item) below 2**31 tokens
    narrow = np.int32 if batch.n_tokens < 2**31 else _I64
    # vocabulary label -> the report's label
    lab_map = np.array([remap[n] for n in vocab.labels], dtype=narrow) if vocab.labels else np.zeros(0, narrow)
    same_labels = np.array_equal(lab_map, np.arange(len(lab_map)))  # no renumbering
    # the joint decoder gives the chunks their labels in the report's numbering
    pair = _decode_both(batch, scheme, cfg, None if same_labels else lab_map, labels)
    if pair is not None:
        rc, pc = pair.reference, pair.prediction
    else:
        rc = decode_arrays(batch.reference, vocab, scheme=scheme, repair=cfg.repair, where=where("reference"), groups=offsets)
        pc = decode_arrays(batch.prediction, vocab, scheme=scheme, repair=cfg.repair, where=where("prediction"), groups=offsets)

    def units(ch: Any) -> Units:
        # the items' four columns in one block (at scale, large enough for numpy's
        # huge-page hint, so fewer page faults when it is first written)
        doc, lab, start, end = np.empty((4, len(ch.start)), dtype=narrow)
        doc[...] = ch.group
        if same_labels:
            lab[...] = ch.type
        else:
            lab_map.take(ch.type, out=lab, mode="clip")  # lab_map is in the items' width
        # document-relative offsets
        base = offsets.take(ch.group)
        np.subtract(ch.start, base, out=start, casting="same_kind")
        np.subtract(ch.end, base, out=end, casting="same_kind")
        return Units(doc, lab, start, end, None, None)

    def pair_units(ch: Any) -> Units:
        # the pair decoder's offsets are document-relative already, its columns one block
        return Units(ch.group, ch.type, ch.start, ch.end, None, None)

    kind = "discarded" if cfg.repair == "discard" else "repaired"
    repairs = {side: {kind: int(ch.n_discarded if kind == "discarded" else ch.n_repaired)}
               for side, ch in (("reference", rc), ("prediction", pc))}
    make = pair_units if pair is not None else units
    R, P = make(rc), make(pc)
    # of the joint decoding only the matches and the token sums are still needed
    hits, token_sums = ((pair.ref_hit, pair.pred_hit), (pair.differ, pair.tagged)) if pair is not None else (None, None)
    del rc, pc, pair
    toks = batch.tokens

    def span_tokens(U: Units) -> Callable[[int], Sequence[str]]:
        assert toks is not None and U.start is not None and U.end is not None
        at, start, end = offsets.take(U.doc), U.start, U.end
        return lambda i: toks[int(at[i] + start[i]) : int(at[i] + end[i])]

    need_keys = cfg.setting == "OBD" or cfg.mode == "one-per-string"
    if need_keys and toks is None:
        raise ConfigError(
            f"setting={cfg.setting!r}, mode={cfg.mode!r} compares strings and needs the tokens; pass tokens="
        )
    texts_r = texts_p = None
    if toks is not None:
        tok_r, tok_p = span_tokens(R), span_tokens(P)
        texts_r, texts_p = (lambda i: " ".join(tok_r(i))), (lambda i: " ".join(tok_p(i)))
        if need_keys:
            R = Units(R.doc, R.label, R.start, R.end, None, _keys(tok_r, len(R), cfg))
            P = Units(P.doc, P.label, P.start, P.end, None, _keys(tok_p, len(P), cfg))
    # tokens per document, in 32 bits when they fit (they are the token counts' first column)
    doc_tokens = np.diff(offsets, append=batch.n_tokens) if n_docs else np.zeros(0, _I64)
    if batch.n_tokens < 2**31:
        doc_tokens = doc_tokens.astype(_CELL)
    part = _score_units(
        R, P, cfg=cfg, labels=labels, doc_ids=batch.doc_ids, doc_tokens=doc_tokens,
        texts_r=texts_r, texts_p=texts_p, disjoint=True, hits=hits,
    )
    del hits
    # token accuracy (conlleval: every token line, -DOCSTART- included)
    tc = np.zeros((n_docs, 4), dtype=_CELL)
    tc[:, 0] = doc_tokens
    if token_sums is not None:
        full = slice(None)
        differ, tagged = token_sums
    else:
        full = np.flatnonzero(doc_tokens > 0)
        differ, tagged = _token_sums(
            batch.reference.ids, batch.prediction.ids, vocab.tag_ids.get(vocab.outside, -1), offsets[full]
        )
    tc[full, 1] = doc_tokens[full] - differ
    tc[full, 2] = tagged
    tc[full, 3] = tagged - differ  # two differing tags are never both O
    if batch.extra is not None:
        tc[:, :2] += batch.extra
    part.token_counts = tc
    part.repairs.update(repairs)
    return part, scheme.name


def _documents_part(reference: list[Document], prediction: list[Any], cfg: Config) -> _Part:
    ids = [d.id for d in reference]
    check_unique(ids)
    pred_spans: list[tuple[Span, ...]] = []
    for k, (ref, pred) in enumerate(zip(reference, prediction)):
        if not isinstance(ref, Document):
            raise InputError(f"reference #{k} is {type(ref).__name__}, not a Document")
        if isinstance(pred, Document):
            if pred.id != ref.id:
                raise InputError(f"prediction #{k} has document id {pred.id!r} but the reference has {ref.id!r}")
            if pred.tokens != ref.tokens:
                raise InputError(
                    f"document {ref.id!r}: the prediction's tokens differ from the reference's "
                    f"({len(pred.tokens)} vs {len(ref.tokens)} tokens); align them first (iescore.adapters)"
                )
            spans = pred.spans
        else:
            spans = tuple(s if isinstance(s, Span) else Span(*s) for s in pred)
            for s in spans:
                if s.end > len(ref.tokens):
                    raise InputError(
                        f"document {ref.id!r}: predicted span ({s.label!r}, {s.start}, {s.end}) "
                        f"is outside the document's {len(ref.tokens)} tokens"
                    )
        pred_spans.append(spans)
    names = {s.label for d in reference for s in d.spans} | {s.label for sp in pred_spans for s in sp}
    labels, remap = _label_space(names, cfg)

    def units(docs_spans: list[tuple[Span, ...]]) -> tuple[Units, list[tuple[int, Span]]]:
        flat = [(k, s) for k, spans in enumerate(docs_spans) for s in spans]
        n = len(flat)
        doc = np.fromiter((k for k, _ in flat), dtype=_I64, count=n)
        lab = np.fromiter((remap[s.label] for _, s in flat), dtype=_I64, count=n)
        st = np.fromiter((s.start for _, s in flat), dtype=_I64, count=n)
        en = np.fromiter((s.end for _, s in flat), dtype=_I64, count=n)
        sc = np.fromiter((np.nan if s.score is None else s.score for _, s in flat), dtype=float, count=n)
        return Units(doc, lab, st, en, sc), flat

    R, rflat = units([d.spans for d in reference])
    P, pflat = units(pred_spans)
    if cfg.setting == "OBD" or cfg.mode == "one-per-string":
        R = Units(R.doc, R.label, R.start, R.end, R.score,
                  _keys(lambda i: reference[rflat[i][0]].span_tokens(rflat[i][1]), len(R), cfg))
        P = Units(P.doc, P.label, P.start, P.end, P.score,
                  _keys(lambda i: reference[pflat[i][0]].span_tokens(pflat[i][1]), len(P), cfg))
    doc_tokens = np.fromiter((len(d.tokens) for d in reference), dtype=_I64, count=len(reference))
    unit = None
    weighted = [d.token_weights is not None or d.separator_weights is not None for d in reference]
    if any(weighted):
        tw, sw = [], []
        for d in reference:
            n = len(d.tokens)
            tw.extend(d.token_weights if d.token_weights is not None else (cfg.token_weight,) * n)
            sw.extend(d.separator_weights if d.separator_weights is not None else (cfg.separator_weight,) * max(n - 1, 0))
        unit = (np.asarray(tw, dtype=float), np.asarray(sw, dtype=float))
    part = _score_units(
        R, P, cfg=cfg, labels=labels, doc_ids=ids, doc_tokens=doc_tokens,
        texts_r=lambda i: reference[rflat[i][0]].span_text(rflat[i][1]),
        texts_p=lambda i: reference[pflat[i][0]].span_text(pflat[i][1]),
        unit_weights=unit,
    )
    if unit is not None:
        # documents without weights count as in a batch without any (scalar weights times
        # the counts), so that how documents are split into batches never changes a number
        plain = np.flatnonzero(~np.array(weighted))
        if len(plain):
            counts, totals = _scaled_ts(part, cfg)
            if part.ts_weighted is not None:
                part.ts_weighted[plain] = counts[plain]
            assert part.unit_totals is not None and totals is not None
            part.unit_totals[plain] = totals[plain]
        part.unit_digest = sum(_weights_hash(d) for d, w in zip(reference, weighted) if w) % 2**64
    return part


def _weights_hash(doc: Document) -> int:
    """A 64-bit hash of a document's id and its per-t-unit weights."""
    def raw(w: Sequence[float] | None) -> bytes:
        return b"-" if w is None else np.asarray(w, dtype="<f8").tobytes()

    return string_hash(doc.id, b"weights:" + raw(doc.token_weights) + b":" + raw(doc.separator_weights) + b":")


def _scaled_ts(part: _Part, cfg: Config) -> tuple[np.ndarray, np.ndarray | None]:
    """A part's TS counts weighted by the scalar t-unit weights: per document and label
    of the part (``TS_FIELDS`` order, float), and per document its total token and
    separator weight (None without token counts)."""
    scale = np.array([cfg.token_weight] * 4 + [cfg.separator_weight] * 4)
    counts = part.table.dense()[:, :, len(SPAN_FIELDS) :].astype(float) * scale
    if part.table.doc_tokens is None:
        return counts, None
    tok = part.table.doc_tokens.astype(float)
    return counts, np.stack([tok * cfg.token_weight, np.maximum(tok - 1, 0) * cfg.separator_weight], axis=1)


def _templates_part(reference: list[Template], prediction: list[Template], cfg: Config) -> _Part:
    if cfg.setting != "OBD":
        raise ConfigError("templates are position-free: score them with setting='OBD'")
    ids = [t.id for t in reference]
    check_unique(ids)
    for k, (a, b) in enumerate(zip(reference, prediction)):
        if not isinstance(b, Template):
            raise InputError(f"prediction #{k} is {type(b).__name__}, not a Template")
        if a.id != b.id:
            raise InputError(f"prediction #{k} has template id {b.id!r} but the reference has {a.id!r}")
    names = {lab for t in list(reference) + list(prediction) for lab in t.slots}
    labels, remap = _label_space(names, cfg)
    norm = get_normaliser(cfg.normaliser)

    def units(ts: list[Template]) -> Units:
        rows = [(k, lab, f, s) for k, t in enumerate(ts) for lab, f, s in t.fillers()]
        n = len(rows)
        return Units(
            np.fromiter((r[0] for r in rows), dtype=_I64, count=n),
            np.fromiter((remap[r[1]] for r in rows), dtype=_I64, count=n),
            None,
            None,
            np.fromiter((np.nan if r[3] is None else r[3] for r in rows), dtype=float, count=n),
            [tuple(x for x in (norm(t) for t in r[2]) if x) for r in rows],
        )

    return _score_units(
        units(reference), units(prediction), cfg=cfg, labels=labels, doc_ids=ids,
        doc_tokens=None, texts_r=None, texts_p=None,
    )


# --- assembling -------------------------------------------------------------------------

def _assemble(parts: list[_Part], cfg: Config, notes: Mapping[str, int] | None = None) -> Report:
    labels = sorted({lab for p in parts for lab in p.labels})
    index = {lab: i for i, lab in enumerate(labels)}
    L = len(labels)
    id_parts: list[Sequence[str]] = []
    n_seen = 0
    tables = []
    conf = np.zeros((L + 1, L + 1), dtype=_I64)
    refs, preds, toks = [], [], []
    repairs: dict[str, dict[str, int]] = {}
    ts_error = None
    has_tokens = bool(parts) and all(p.token_counts is not None for p in parts)
    fields = FIELDS[:_PRF_FIELDS] if cfg.detail == "prf" else FIELDS
    for p in parts:
        m = np.array([index[lab] for lab in p.labels], dtype=_I64)
        tables.append((p.table, m))
        mm = np.concatenate((m, [L]))
        conf[np.ix_(mm, mm)] += p.confusion
        off = n_seen
        n_seen += len(p.doc_ids)
        id_parts.append(p.doc_ids)
        for tab, dest in ((p.ref, refs), (p.pred, preds)):
            if off == 0 and np.array_equal(m, np.arange(len(m))):
                dest.append(tab)  # already in the report's numbering
            else:
                dest.append(ItemTable(tab.doc + off, m[tab.label] if len(tab.label) else tab.label,
                                      tab.start, tab.end, tab.status, tab.score, tab.text))
        if has_tokens:
            assert p.token_counts is not None
            toks.append(p.token_counts)
        for side, rep in p.repairs.items():
            d = repairs.setdefault(side, {})
            for k, v in rep.items():
                d[k] = d.get(k, 0) + v
        ts_error = ts_error or p.ts_error
    if notes:
        repairs["adapter"] = dict(sorted(notes.items()))
    ts_cells = None
    if any(p.unit_totals is not None for p in parts):
        blocks = []
        for p in parts:
            m = [index[lab] for lab in p.labels]
            w = np.zeros((len(p.doc_ids), L, len(TS_FIELDS)))
            if p.unit_totals is not None:
                if p.ts_weighted is not None:  # None when the TS model is unavailable (ts_error)
                    w[:, m, :] = p.ts_weighted
                w[:, :, 3] = p.unit_totals[:, :1]
                w[:, :, 7] = p.unit_totals[:, 1:]
            else:  # the unweighted counts, scaled; t-units for every label, also those absent here
                w[:, m, :], totals = _scaled_ts(p, cfg)
                if totals is not None:
                    w[:, :, 3] = totals[:, :1]
                    w[:, :, 7] = totals[:, 1:]
            blocks.append(w)
        ts_cells = np.concatenate(blocks)
    table = CellTable.concat(tables, L) if tables else CellTable.empty(fields, L)

    def cat(tabs: list[ItemTable]) -> ItemTable:
        if not tabs:
            return _empty_items()
        if len(tabs) == 1:
            return tabs[0]
        texts = None if any(t.text is None for t in tabs) else tuple(x for t in tabs for x in (t.text or ()))
        return ItemTable(
            *(np.concatenate([getattr(t, f) for t in tabs]) for f in ("doc", "label", "start", "end", "status", "score")),
            text=texts,
        )

    return Report(
        config=cfg,
        labels=tuple(labels),
        doc_ids=concat_ids(id_parts),
        table=table,
        confusion=conf,
        reference=cat(refs),
        prediction=cat(preds),
        token_counts=(toks[0] if len(toks) == 1 else np.concatenate(toks)) if has_tokens else None,
        repairs=repairs,
        ts_error=ts_error,
        ts_cells=ts_cells,
    )


# --- one-shot functions --------------------------------------------------------------------

def _config(config: Config | None, options: Mapping[str, Any]) -> Config:
    if config is not None:
        return config.with_(**options) if options else config
    return Config(**options)


def score(
    *,
    reference: Sequence[Document] | Sequence[Template],
    prediction: Sequence[Document] | Sequence[Sequence[Span]] | Sequence[Template],
    config: Config | None = None,
    **options: Any,
) -> Report:
    """Score documents (or OBD templates) in one call. Options as in :class:`Config`."""
    s = Scorer(_config(config, options))
    s.add(reference=reference, prediction=prediction)
    return s.report()


def score_tags(
    *,
    reference: Sequence[Sequence[str]],
    prediction: Sequence[Sequence[str]],
    doc_ids: Sequence[str] | None = None,
    tokens: Sequence[Sequence[str]] | None = None,
    config: Config | None = None,
    **options: Any,
) -> Report:
    """Score tag sequences (one sequence per document) in one call.

    ``scheme`` defaults to ``"auto"`` (detected from the reference tags and
    recorded in the signature).

    >>> r = score_tags(reference=[["B-PER", "I-PER", "O"]], prediction=[["I-PER", "I-PER", "O"]])
    >>> r.f, r.signature.split("|")[5]
    (1.0, 'scheme:IOB2')
    """
    options = dict(options)
    options.setdefault("scheme", "auto")
    cfg = _config(config, options)
    s = Scorer(cfg)
    s.add_tags(reference=reference, prediction=prediction, doc_ids=doc_ids, tokens=tokens)
    return s.report()


def score_templates(
    *, reference: Sequence[Template], prediction: Sequence[Template], config: Config | None = None, **options: Any
) -> Report:
    """Score OBD templates (``setting="OBD"`` is implied)."""
    options = dict(options)
    options.setdefault("setting", "OBD")
    return score(reference=reference, prediction=prediction, config=config, **options)
