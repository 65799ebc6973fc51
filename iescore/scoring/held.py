"""The start of the pipeline, held: the small batches that the streaming
[`Scorer`][iescore.scoring.stream.Scorer] keeps to score together.

A batch costs about a millisecond through the pipeline however few its tokens, so
``Scorer.add_tags`` holds small ones (`Held`: the tags end to end, no object per
document) and scores them as one batch later; ``Scorer.add`` holds small batches of
Documents or Templates (`HeldDocuments`). What a call must decide at once, it decides from
facts about each distinct tag, learnt once (`TagFacts`): whether the tag is valid
under a scheme, and what `detect_scheme` reads of it. The
reference for all of it is the per-call path, one batch per call (tests/test_gather.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from itertools import chain

from ..decode.detect import choose_scheme
from ..decode.vocab import Vocabulary
from ..errors import InputError
from ..ids import NumberedIds
from ..model import Document, Span, Template
from ..schemes import PREFIX_LETTERS, SCHEMES, I, O, get_scheme

_IOB1 = SCHEMES["IOB1"]


class Held:
    """The input of ``add_tags`` calls that a scorer checked and counted in but has not
    scored, all to be decoded under ``scheme``: the tags of their documents end to end
    (one list a side, and each document's length), the documents' ids (numbered from
    ``start``, or ``names``) and tokens. One list per side, not one per document: a
    million held documents are not a million objects for the garbage collector to walk.

    >>> h = Held("IOB2", 0, None, None)
    >>> h.add([["B-A", "O"]], [["O", "O"]], ("0",), [2], None)
    >>> ref, pred, lengths, ids, tokens = h.documents(); ref, lengths, list(ids)
    (['B-A', 'O'], [2], ['0'])
    """

    def __init__(self, scheme: str, start: int, names: list[str] | None, tokens: list[str] | None) -> None:
        self.scheme, self.start, self.names, self.tokens = scheme, start, names, tokens
        self.ref: list[str] = []
        self.pred: list[str] = []
        self.lengths: list[int] = []

    def takes(self, scheme: str, numbered: bool, tokens: bool) -> bool:
        """Can a call decoded under ``scheme`` join (numbered or named ids, with tokens or not)?"""
        return scheme == self.scheme and numbered == (self.names is None) and tokens == (self.tokens is not None)

    def add(self, ref: Sequence[Sequence[str]], pred: Sequence[Sequence[str]], ids: Sequence[str],
            lengths: list[int], tokens: Sequence[Sequence[str]] | None) -> None:
        self.ref += chain.from_iterable(ref)
        self.pred += chain.from_iterable(pred)
        self.lengths += lengths
        if self.names is not None:
            self.names += ids
        if self.tokens is not None and tokens is not None:
            self.tokens += chain.from_iterable(tokens)

    def documents(self) -> tuple[list[str], list[str], list[int], Sequence[str], list[str] | None]:
        """The held documents end to end, as `iescore.scoring.batch.end_to_end` takes them:
        each side's tags, the documents' lengths, their ids and tokens."""
        n = len(self.lengths)
        ids = NumberedIds(self.start, self.start + n) if self.names is None else self.names
        return self.ref, self.pred, self.lengths, ids, self.tokens


class HeldDocuments:
    """The Documents (each with its predicted spans) or the Templates of ``add`` calls that
    a scorer checked and counted in but has not scored, and their size in all (tokens, or
    fillers). With ``records`` (``task="relations"`` or ``"links"``) the predicted
    Documents or Templates are held whole: their relations and links are scored."""

    def __init__(self, templates: bool, records: bool = False) -> None:
        self.templates = templates
        self.records = records
        self.ids: list[str] = []
        self.reference: list[Document | Template] = []
        self.prediction: list[tuple[Span, ...] | Document | Template] = []
        self.size = 0

    def add(self, ids: Sequence[str], reference: Sequence[Document | Template],
            prediction: Sequence[tuple[Span, ...] | Document | Template], size: int) -> None:
        self.ids += ids
        self.reference += reference
        self.prediction += prediction
        self.size += size


class TagFacts:
    """What a scorer has learnt of each distinct tag, for the calls it holds: the prefixes
    `prefixes` reads of it, its role and label under IOB1
    read without checks (what `detect_scheme` looks at for chunks
    that start with ``I-``), and the schemes it is valid under. They are learnt from a
    vocabulary of a call's new tags: a tag's role, label and validity do not depend on the
    other tags, and a vocabulary's prefixes are the union of its tags'."""

    def __init__(self) -> None:
        self._prefixes: dict[str, frozenset[str]] = {}
        self._iob1: dict[str, tuple[bool, str | None]] = {}  # tag -> (an I- tag, its label; None: outside)
        self._valid: dict[str, set[str]] = {}  # scheme -> the tags checked valid under it

    def learn(self, tags: Iterable[str]) -> None:
        """Learn the facts of the tags not seen before (strings): their roles in one
        vocabulary of them all; a tag's prefixes are its head when that is a prefix letter
        (the outside tag has none), else read from a vocabulary of that tag alone."""
        new = [t for t in tags if t not in self._prefixes]
        if not new:
            return
        v = Vocabulary()
        v.encode(new)  # distinct: tag k has id k
        role, label = v.roles(_IOB1, check=False)
        for tag, r, lab in zip(new, role.tolist(), label.tolist()):
            self._iob1[tag] = (r == I, v.labels[lab] if r != O else None)
            head = tag.partition(v.delimiter)[0]
            if tag == v.outside:
                self._prefixes[tag] = frozenset()
            elif head in PREFIX_LETTERS:
                self._prefixes[tag] = frozenset((head,))
            else:
                one = Vocabulary()
                one.encode([tag])
                self._prefixes[tag] = one.prefixes()

    def prefixes(self, tags: set[str]) -> frozenset[str]:
        """The prefixes of these tags (all learnt), as `prefixes` reads them."""
        return frozenset().union(*map(self._prefixes.__getitem__, tags))

    def detect(self, reference_tags: set[str], prediction_tags: set[str],
               reference: Sequence[Sequence[str]]) -> tuple[str, str | None]:
        """`detect_schemes` of a batch of these documents, whose
        reference's and prediction's tags are these, all learnt: the scheme and a warning or None."""
        return choose_scheme(self.prefixes(reference_tags), self.prefixes(prediction_tags),
                             lambda: self._i_starts(reference))

    def _i_starts(self, reference: Sequence[Sequence[str]]) -> bool:
        """Does some chunk start with ``I-`` (at a document's start, after ``O`` or after
        another label)?"""
        facts = self._iob1
        for doc in reference:
            prev: str | None = None  # the label of the token before (None: outside, or none)
            for tag in doc:
                is_i, label = facts[tag]
                if is_i and label != prev:
                    return True
                prev = label
        return False

    def check(self, tags: set[str], scheme: str, located: Callable[[], None]) -> None:
        """Raise the InputError of the first tag not valid under ``scheme`` (``located()``
        raises it saying where the call's documents have the tag); else remember them as
        valid."""
        valid = self._valid.setdefault(scheme, set())
        new = tags - valid
        if new:
            v = Vocabulary()
            v.encode(list(new))
            try:
                v.roles(get_scheme(scheme))  # each tag on its own
            except InputError:
                located()  # raises the same error, saying where the tag is
                raise
            valid |= new
