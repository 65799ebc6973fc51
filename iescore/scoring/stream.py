"""Drives the pipeline batch by batch: the streaming [`Scorer`][iescore.scoring.stream.Scorer] (add batches, merge
shards, then report).

It holds one [`Config`][iescore.config.Config] and the parts of the batches added (`iescore.scoring.tags`,
`iescore.scoring.spans`; relations and links: `iescore.scoring.records`), records how the input
was prepared, fixes the scheme under ``scheme="auto"``, and assembles the report
(`iescore.scoring.assemble`) on demand.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import chain
from typing import TYPE_CHECKING, Any

from ..config import PREPARATION, Config
from ..decode.detect import detect_schemes
from ..errors import ConfigError, InputError, choices, warn
from ..ids import IdRegistry, NumberedIds
from ..model import Document, Span, Template
from ..report import Report
from ..schemes import get_scheme
from .assemble import _assemble, _warn_label_sets, _warn_type_filter
from .batch import TaggedBatch, _locator, built, checked, end_to_end, tagged_batch
from .held import Held, HeldDocuments, TagFacts
from .partdata import _Part
from .records import check_tags_task, check_task, checked_records, records_part, records_size
from .spans import (
    _documents_part,
    _templates_part,
    checked_documents,
    checked_templates,
    multi_instance,
)
from .tags import _check_config, _tags_part
from .totals import _SCORER, Totals

# small batches of tags are held and scored together once they hold this many tokens (the
# pipeline costs about a millisecond a call, however few the tokens): see Scorer.add_tags
_GATHER_TOKENS = 1 << 16

if TYPE_CHECKING:
    from ..options import Options, Unpack

class Scorer:
    """A streaming scorer: ``add`` batches, ``merge`` shards, then ``report()``.

    A call per sentence or document is cheap: small batches are checked in their call and
    scored together later ([`add_tags`][iescore.scoring.stream.Scorer.add_tags], [`add`][iescore.scoring.stream.Scorer.add]), with the numbers of one batch
    per call.

    Args:
        config: a [`Config`][iescore.config.Config]; or give its fields as keyword arguments
            (``rule="O(1,1)"``, ``counting="one-to-one"``, ``scheme="IOB1"``...).
        totals_only: sum each batch's counts over its documents as it is added and
            keep only those totals (memory grows with the labels, not with the data):
            the report has every number and view of the full one but no per-document
            counts and no items (`Totals`). Document ids are
            then checked for repeats within a batch only. ``iescore score`` scores so.
        **options: any of [`Options`][iescore.options.Options].

    Example:
        >>> s = Scorer(scheme="IOB2")
        >>> s.add_tags(reference=[["B-PER", "I-PER", "O"]], prediction=[["B-PER", "I-PER", "O"]])
        >>> s.add_tags(reference=[["B-LOC"]], prediction=[["O"]], doc_ids=["1b"])
        >>> r = s.report()
        >>> r.overall.tp, r.overall.fn, r.f
        (1, 1, 0.6666666666666666)
    """

    def __init__(self, config: Config | None = None, *, totals_only: bool = False, **options: Unpack[Options]) -> None:
        config = Config.from_options(config, **options)
        if config.unit_weights is not None:  # a digest of the data this scorer is given
            config = config.with_(unit_weights=None)
        check_task(config)
        self.config = config
        self._scored: list[_Part] = []  # the parts of the batches scored (read through _parts)
        self._sums = Totals.empty() if totals_only else None  # (read through _totals)
        self._held: Held | HeldDocuments | None = None  # input checked and counted in, not yet scored
        self._facts = TagFacts()  # what the held calls' tags are
        self._n_docs = 0
        self._ids = IdRegistry()
        self._notes: dict[str, int] = {}
        self._unit: int | None = None  # digest of the per-t-unit weights seen (Config.unit_weights)
        # tag input under scheme="auto": the scheme the first batch with chunks fixed, and
        # which batch that was (an explicit scheme is fixed from the start)
        self._auto = config.scheme in ("auto", "spans")
        self._fixed: tuple[str, str] | None = None if self._auto else (config.scheme, "the scheme= option")
        self._batches = 0
        # under scheme="auto": whether the two sides' tags were warned of as of two schemes (once)
        self._scheme_warned = False

    @property
    def _parts(self) -> list[_Part]:
        """The parts of all batches added (held ones scored first)."""
        self._flush()
        return self._scored

    @property
    def _totals(self) -> Totals | None:
        """Under ``totals_only``, the totals of all batches added (held ones scored first)."""
        self._flush()
        return self._sums

    def note(self, kind: str, n: int = 1) -> None:
        """Count an adapter event (a span dropped or moved while mapping input);
        the report lists the totals under ``repairs["adapter"]``."""
        self._notes[kind] = self._notes.get(kind, 0) + int(n)

    def use(self, **options: str | None) -> None:
        """Record how the input was prepared (``documents``, ``subwords``, ``misaligned``,
        ``missing``: see [`Config`][iescore.config.Config]), so that the signature says it.
        None means not used. A value other than one already recorded raises
        [`ConfigError`][iescore.errors.ConfigError]: one signature cannot describe both.

        >>> s = Scorer(); s.use(misaligned="contract"); s.config.misaligned
        'contract'
        """
        self._flush()
        self.config = _prepared(self.config, options, "this scorer")

    # --- adding data -----------------------------------------------------------------
    def add(
        self,
        *,
        reference: Sequence[Document] | Sequence[Template],
        prediction: Sequence[Document] | Sequence[Sequence[Span]] | Sequence[Template],
    ) -> None:
        """Add documents: reference Documents with predicted Documents (same ids and tokens) or
        per-document span lists; or, in OBD, Templates on both sides. Under ``task="relations"``
        or ``"links"`` the predictions are Documents (or Templates), whose relations or links are scored.

        As in [`add_tags`][iescore.scoring.stream.Scorer.add_tags], Documents of fewer than 65,536 tokens in all (Templates:
        fillers) are checked and counted in at once and scored together later, unless the scoring
        depends on the batch: under ``mode="match-best"`` (every prediction of a batch has a
        confidence, or none has), for Documents with per-token weights, and for a call with two
        overlapping spans of one label on a side (the TS model then rejects its batch)."""
        refs: list[Any] = list(reference)
        preds: list[Any] = list(prediction)
        if len(refs) != len(preds):
            raise InputError(f"{len(refs)} reference documents but {len(preds)} predictions")
        if self.config.task != "entities":  # relations or links: small batches held whole, but under match-best
            ids = checked_records(refs, preds, self.config)
            templates, size = records_size(refs)
            if size < _GATHER_TOKENS and self.config.mode != "match-best":
                self._hold(templates, ids, refs, preds, size, records=True)
                return
            self._flush()
            self._add_part(records_part(refs, preds, self.config, ids))
            return
        if refs and isinstance(refs[0], Template):
            n_fillers = sum(len(f) for t in refs if isinstance(t, Template) for f in t.slots.values())
            if n_fillers < _GATHER_TOKENS and self.config.mode != "match-best" and self.config.detail != "prf":
                ids = checked_templates(refs, preds, self.config)
                self._hold(True, ids, refs, preds, n_fillers)
                return
            self._flush()
            self._add_part(_templates_part(refs, preds, self.config))
            return
        n_tokens = sum(len(d.tokens) for d in refs if isinstance(d, Document))
        if (n_tokens < _GATHER_TOKENS and self.config.mode != "match-best" and self.config.detail != "prf"
                and not any(isinstance(d, Document) and (d.token_weights is not None or d.separator_weights is not None)
                            for d in refs)):
            ids, spans = checked_documents(refs, preds)
            sup = self.config.supertag_map()
            if any(multi_instance(d.spans, sup) or multi_instance(p, sup) for d, p in zip(refs, spans)):
                # the TS model rejects the whole batch such documents are in: scored on their own
                self._flush()
                self._add_part(_documents_part(refs, preds, self.config, (ids, spans)))
                return
            self._hold(False, ids, refs, spans, n_tokens)
            return
        self._flush()
        part = _documents_part(refs, preds, self.config)
        self._add_part(part)
        if part.unit_digest is not None:
            self._unit = _add_digests(self._unit, part.unit_digest)
            self.config = self.config.with_(unit_weights=f"{self._unit:016x}")

    def _hold(self, templates: bool, ids: list[str], reference: list[Any], prediction: list[Any], size: int,
              records: bool = False) -> None:
        """Count in checked Documents (their predicted spans; ``records``: Documents) or Templates and hold them."""
        held = self._held
        if not (isinstance(held, HeldDocuments) and held.templates == templates and held.records == records):
            self._flush()
            held = HeldDocuments(templates, records)
        self._register(ids)
        held.add(ids, reference, prediction, size)
        self._held = held
        if held.size >= _GATHER_TOKENS:
            self._flush()

    def add_tags(
        self,
        *,
        reference: Sequence[Sequence[str]],
        prediction: Sequence[Sequence[str]],
        doc_ids: Sequence[str] | None = None,
        tokens: Sequence[Sequence[str]] | None = None,
    ) -> None:
        """Add tag sequences, one sequence per document.

        Batches of fewer than 65,536 tokens are held and scored together once they
        reach that many, or when anything reads or changes the scorer (``report``,
        ``merge``, ``to_state``, ``add``, ``add_batch``, ``use``): adding a sentence at a
        time then costs 10 to 20 microseconds a call, not the millisecond a batch takes
        through the pipeline. Every document is scored on its own, so the numbers are
        those of one batch per call. What can fail is decided at once, in the call given
        the input, which then adds nothing: the shape of the input, each tag against the
        scheme, the document ids, the options and, under ``scheme="auto"``, the scheme
        read from the call's own tags (see [`add_batch`][iescore.scoring.stream.Scorer.add_batch]). Under ``repair="strict"``,
        where an ill-formed chunk is an error found while decoding, every call is scored
        at once.

        >>> s = Scorer(scheme="IOB2")
        >>> for tags in (["B-PER", "I-PER"], ["O", "B-LOC"]):
        ...     s.add_tags(reference=[tags], prediction=[tags])
        >>> s.report().overall.tp
        2
        """
        check_tags_task(self.config)
        if self.config.repair == "strict":  # an ill-formed chunk is an error found while decoding
            self.add_batch(tagged_batch(reference, prediction, doc_ids=doc_ids, tokens=tokens, id_offset=self._n_docs))
            return
        ref, pred, ids, lengths, toks = checked(reference, prediction, doc_ids, tokens, self._n_docs)
        n_tokens = sum(lengths)
        if n_tokens >= _GATHER_TOKENS:  # a large batch: scored at once, after the held ones
            self._flush()
            self._add_tagged(built(ref, pred, ids, lengths, toks))
            return
        try:
            tags = set(chain.from_iterable(ref))
            if self._auto:  # each side's tags: the scheme is read from the reference's
                ref_tags, pred_tags = tags, set(chain.from_iterable(pred))
                tags = ref_tags | pred_tags
            else:
                tags.update(chain.from_iterable(pred))
            if not all(isinstance(t, str) for t in tags):
                raise TypeError
        except TypeError:  # a tag that is not a string: built() names it
            built(ref, pred, ids, lengths, toks)
            raise AssertionError("built() accepted a tag that is not a string") from None
        n = self._batches + 1
        config, fixes, scheme = self.config, self._fixed, self.config.scheme
        if self._auto:  # as _add_tagged decides, from facts learnt once per tag
            self._facts.learn(tags)
            found, message = self._facts.detect(ref_tags, pred_tags, ref)
            scheme = self._decoding(found)
        self._facts.check(tags, scheme, lambda: _raise_located(built(ref, pred, ids, lengths, toks), scheme, self._auto))
        if self._auto:
            self._warn_schemes(message)
        _check_config(self.config, toks is not None)
        if self._auto:
            # a tag other than the outside one makes a chunk, or a repaired or discarded one
            evidence = bool(tags - {"O"})
            config, fixes = self._settle(config, found, scheme, evidence, ids, n)
        held = self._held
        if held is not None and not (isinstance(held, Held) and held.takes(scheme, isinstance(ids, NumberedIds),
                                                                           toks is not None)):
            self._flush()
        self._register(ids)
        if self._held is None:
            self._held = Held(scheme, self._n_docs - len(ids), None if isinstance(ids, NumberedIds) else [],
                              None if toks is None else [])
        assert isinstance(self._held, Held)
        self._held.add(ref, pred, ids, lengths, toks)
        self.config, self._fixed, self._batches = config, fixes, n
        if len(self._held.ref) >= _GATHER_TOKENS:
            self._flush()

    def _flush(self) -> None:
        """Score the held input as one batch."""
        held = self._held
        if held is not None:
            self._add_part(_held_part(held, self.config), registered=True)
            self._held = None

    def add_batch(self, batch: TaggedBatch) -> None:
        """Add an integer-coded [`TaggedBatch`][iescore.scoring.batch.TaggedBatch] (the fast path).

        Under ``scheme="auto"`` every batch's scheme is detected from its own tags;
        the first batch that holds a chunk fixes the scheme for all later ones. A
        later batch whose tags suggest another scheme raises
        [`ConfigError`][iescore.errors.ConfigError] (scoring all batches in one call would
        decode them differently) -- except a batch that looks like IOB2 after an IOB1
        one, which one call would also decode as IOB1."""
        check_tags_task(self.config)
        self._flush()
        self._add_tagged(batch)
        for kind, n in batch.notes.items():
            self.note(kind, n)

    def _add_tagged(self, batch: TaggedBatch, registered: bool = False) -> None:
        """Score ``batch`` and add its part (``registered``: its document ids are counted in already)."""
        n = self._batches + 1
        config = _prepared(self.config, batch.options, f"batch {n}")
        fixes = self._fixed
        if not self._auto:
            part, _ = _tags_part(batch, config)
        else:
            found, message = detect_schemes(batch.reference, batch.prediction, batch.vocab)
            scheme = self._decoding(found)
            part, _ = _tags_part(batch, config.with_(scheme=scheme), detected=True)
            self._warn_schemes(message)
            evidence = len(part.ref) > 0 or len(part.pred) > 0 or any(
                v for rep in part.repairs.values() for v in rep.values()
            )
            config, fixes = self._settle(config, found, scheme, evidence, batch.doc_ids, n)
        self._add_part(part, registered)
        self.config, self._fixed, self._batches = config, fixes, n

    def _warn_schemes(self, message: str | None) -> None:
        """Under ``scheme="auto"``, give the warning of a batch whose two sides' tags are of two
        schemes (`choose_scheme`), once per scorer."""
        if message is not None and not self._scheme_warned:
            self._scheme_warned = True
            warn(message)

    def _decoding(self, found: str) -> str:
        """Under ``scheme="auto"``, the scheme that decodes a batch whose tags look like
        ``found``: the fixed one when the two agree, else ``found``. detect_scheme calls B/I
        tags IOB2 unless a chunk starts with I-; once a batch had such a chunk, one call
        over all batches would say IOB1 for them all."""
        fixed = self._fixed[0] if self._fixed is not None else None
        return fixed if fixed is not None and (found == fixed or (fixed, found) == ("IOB1", "IOB2")) else found

    def _settle(self, config: Config, found: str, scheme: str, evidence: bool, doc_ids: Sequence[str],
                n: int) -> tuple[Config, tuple[str, str] | None]:
        """Under ``scheme="auto"``, after batch ``n`` decoded under ``scheme`` (its tags
        look like ``found``; ``evidence``: it has chunks or repairs): the config and the
        fixed scheme that follow, or the ConfigError of a batch that disagrees with it."""
        fixes = self._fixed
        if evidence and fixes is not None and scheme != fixes[0]:
            raise ConfigError(
                f"scheme='auto': batch {n} ({_describe(doc_ids)}) has tags of scheme {found}, but "
                f"{fixes[1]} fixed scheme {fixes[0]}; scoring them in one call would decode them "
                f"differently: pass scheme= explicitly (e.g. scheme={found!r} or scheme={fixes[0]!r})"
            )
        if evidence and fixes is None:
            fixes = (found, f"batch {n} ({_describe(doc_ids)})")
        # the scheme one call would record: the fixed one, else the first batch's
        scheme = fixes[0] if fixes is not None else (config.scheme if config.scheme not in ("auto", "spans") else found)
        return (config if scheme == config.scheme else config.with_(scheme=scheme)), fixes

    def _add_part(self, part: _Part, registered: bool = False) -> None:
        if not registered:
            self._register(part.doc_ids)
        if self._sums is not None:
            self._sums = self._sums.plus(Totals.of_part(part))
        else:
            self._scored.append(part)

    def _register(self, ids: Sequence[str]) -> None:
        """Check and count in a batch's document ids."""
        if self._sums is None or isinstance(ids, NumberedIds):  # under totals_only named ids are
            self._ids.add(ids)  # not kept: checked within a batch only
        self._n_docs += len(ids)

    def merge(self, other: Scorer) -> Scorer:
        """A new scorer holding both scorers' documents (e.g. shards of a distributed run).

        The options must agree; a scorer that keeps totals only cannot merge. Under ``scheme="auto"`` the schemes the two fixed must
        be the same (else [`ConfigError`][iescore.errors.ConfigError]: pass ``scheme=``); per-t-unit
        weight digests and the recorded input preparation combine."""
        if self._totals is not None or other._totals is not None:
            raise ConfigError("a scorer made with totals_only=True cannot merge: it kept no documents")
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
        for p in self._parts:
            out._add_part(p)
        for p in other._parts:
            try:
                out._add_part(p)
            except InputError as exc:  # an id of both: say why shards collide and what to pass
                if exc.doc_id is None:
                    raise
                err = InputError(
                    f"cannot merge: duplicate document id {exc.doc_id!r} is in both scorers; "
                    f"documents without doc_ids are numbered '0', '1', ... in each scorer, so shards scored "
                    f"apart need distinct ids: pass doc_ids=, or number a shard's documents from N with "
                    f"tagged_batch(..., id_offset=N)"
                )
                err.doc_id = exc.doc_id
                raise err from None
        for notes in (self._notes, other._notes):
            for k, v in notes.items():
                out.note(k, v)
        out._unit = _add_digests(self._unit, other._unit)
        if out._unit is not None:
            out.config = out.config.with_(unit_weights=f"{out._unit:016x}")
        return out

    def to_state(self, keep: str = "items") -> bytes:
        """This scorer as bytes, to merge elsewhere (`iescore.scoring.state`): ``keep="items"``
        keeps everything, ``keep="counts"`` only the summed counts (no items)."""
        from .state import dump_state

        return dump_state(self, keep)

    @classmethod
    def from_state(cls, data: bytes) -> Scorer:
        """The scorer that [`to_state`][iescore.scoring.stream.Scorer.to_state] (``keep="items"``) wrote; a counts state loads
        with `iescore.scoring.state.load_state`."""
        from .state import load_state

        out = load_state(data)
        if not isinstance(out, Scorer):
            raise ConfigError("a state kept with keep='counts' holds summed counts, not a scorer: "
                              "load it with iescore.scoring.state.load_state")
        return out

    # --- the report --------------------------------------------------------------------
    def report(self) -> Report:
        """Assemble the report from all batches' counts (warning when reference and
        prediction have no label in common, and for a type of ``keep_types`` or
        ``remove_types`` not in the input)."""
        if self._totals is not None:
            report = self._totals._report(self.config, self._notes)
        else:
            report = _assemble(self._parts, self.config, self._notes)
        _warn_label_sets(report)
        _warn_type_filter(report)
        return report


def _raise_located(batch: TaggedBatch, scheme: str, detected: bool) -> None:
    """Raise the InputError of the first tag of ``batch`` not valid under ``scheme``, saying
    where it is (``detected``: the scheme was detected under ``scheme="auto"``)."""
    batch.vocab.roles(get_scheme(scheme), locate=_locator(batch), detected=detected)


def _held_part(held: Held | HeldDocuments, config: Config) -> _Part:
    """The input a scorer holds, scored as one batch (documents were checked when added)."""
    if isinstance(held, Held):
        return _tags_part(end_to_end(*held.documents()), config.with_(scheme=held.scheme))[0]
    if held.records:
        return records_part(held.reference, held.prediction, config, held.ids)
    if held.templates:
        return _templates_part(held.reference, held.prediction, config, held.ids)  # type: ignore[arg-type]
    return _documents_part(held.reference, held.prediction, config,  # type: ignore[arg-type]
                           (held.ids, held.prediction))  # type: ignore[arg-type]


def _prepared(config: Config, options: Mapping[str, str | None], what: str) -> Config:
    """``config`` with the input-preparation ``options`` recorded (see [`Scorer.use`][iescore.scoring.stream.Scorer.use])."""
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


_SCORER[:] = [Scorer]  # (totals and states, below this module, rebuild empty scorers)

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
