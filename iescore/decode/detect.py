"""Stage 1 of the pipeline (decode), before decoding: which scheme ``scheme="auto"`` reads
tags with (Concepts: tag schemes and repairs).

The scheme is read from the prefixes of the reference's tags (`detect_scheme`);
`choose_scheme` also compares the prediction's and says when they are of another
scheme (`other_scheme`). The command line's streamed reader, the streaming scorer
and the Spark adapter combine the same evidence over batches (`scheme_evidence`,
`scheme_from_evidence`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np

from ..schemes import SCHEMES, I, O
from .vocab import TagArrays, Vocabulary


def detect_scheme(arrays: TagArrays, vocab: Vocabulary, prediction: TagArrays | None = None) -> str:
    """Guess the scheme of (reference) tags from the prefixes they use.

    S/U/L/E/M prefixes pick IOBES/BILOU/IOE2/BMES; B and I pick IOB1 when some
    chunk starts with ``I-`` after ``O``, another label or a sentence start, else
    IOB2; only ``I-`` picks IOB1; unprefixed labels pick IO. The prefixes are those of
    the tags in ``arrays`` (the reference's); when these are all outside, those of every
    tag of ``vocab`` (the prediction's too). With ``prediction``, see `choose_scheme`.
    """
    if prediction is not None:
        return detect_schemes(arrays, prediction, vocab)[0]
    return choose_scheme(vocab.prefixes(arrays.ids), frozenset(), lambda: _i_starts(arrays, vocab),
                         vocab.prefixes())[0]


def detect_schemes(reference: TagArrays, prediction: TagArrays, vocab: Vocabulary) -> tuple[str, str | None]:
    """`choose_scheme` of the two sides' tags: the scheme, and a warning or None."""
    return choose_scheme(vocab.prefixes(reference.ids), vocab.prefixes(prediction.ids),
                         lambda: _i_starts(reference, vocab))


def scheme_evidence(arrays: TagArrays, vocab: Vocabulary) -> tuple[frozenset[str], bool]:
    """What `detect_scheme` of tags of both sides decides from: the prefixes of the
    vocabulary's well-formed tags, and whether some chunk of ``arrays`` starts with ``I-``
    (after ``O``, another label or a segment start). Both combine over shards by union and
    ``or``, so `scheme_from_evidence` of the combined evidence is the scheme of one
    call over all the shards (the Spark adapter decides ``scheme="auto"`` this way)."""
    return vocab.prefixes(), _i_starts(arrays, vocab)


# per scheme, the prefixes of its tags ("" for a bare label)
_LETTERS = {name: frozenset(sch.letters) | ({""} if sch.bare else frozenset()) for name, sch in SCHEMES.items()}


def _fits(scheme: str, prefixes: frozenset[str] | set[str]) -> bool:
    """Are tags with these prefixes tags of ``scheme``?"""
    return prefixes <= _LETTERS[scheme]


def choose_scheme(
    reference: frozenset[str], prediction: frozenset[str], i_starts: Callable[[], bool],
    every: frozenset[str] | None = None,
) -> tuple[str, str | None]:
    """The scheme ``scheme="auto"`` decodes both sides with, from the prefixes of the
    reference's and the prediction's tags (``every``: of all the tags, when not their
    union), and the warning to give or None. ``i_starts()`` says whether a reference chunk
    starts with ``I-`` (asked only where it decides).

    The scheme is the reference's. When the reference has no chunk tag, it is that of every
    tag. When the prediction has tags the reference's scheme does not (IOBES tags against
    IOB2 ones), both sides are decoded with the scheme of all their tags, with a warning
    naming the two; when its tags fit the reference's scheme but are of another
    (`other_scheme`), with a warning too.

    >>> choose_scheme(frozenset("BI"), frozenset("BIES"), lambda: False)[0]
    'IOBES'
    >>> choose_scheme(frozenset("BIES"), frozenset("BI"), lambda: False)[0]
    'IOBES'
    """
    without, with_ = _choose(reference, prediction, every)
    return without if without == with_ or not i_starts() else with_


@functools.lru_cache(maxsize=1024)  # a few distinct prefix sets per corpus; called once per batch
def _choose(reference: frozenset[str], prediction: frozenset[str],
            every: frozenset[str] | None) -> tuple[tuple[str, str | None], tuple[str, str | None]]:
    """`choose_scheme` when no reference chunk starts with ``I-``, and when one does."""
    every = reference | prediction if every is None else every
    return _choose_one(reference, prediction, every, False), _choose_one(reference, prediction, every, True)


def _choose_one(reference: frozenset[str], prediction: frozenset[str], every: frozenset[str],
                i_starts: bool) -> tuple[str, str | None]:
    """`choose_scheme` with ``i_starts`` known."""
    def decide(prefixes: frozenset[str]) -> str:
        return scheme_from_evidence(prefixes, i_starts)

    if not reference:
        return decide(every), None
    scheme = decide(reference)
    if _fits(scheme, prediction):
        return scheme, other_scheme(scheme, prediction)
    both = decide(every)
    if not (_fits(both, prediction) and _fits(both, reference)):  # no one scheme: the invalid tag's error says so
        return scheme, None
    extra = " and ".join(f"{p}-" for p in sorted(prediction - SCHEMES[scheme].letters.keys()) if p)
    return both, (
        f"scheme='auto': the reference's tags are of scheme {scheme} and the prediction's of scheme "
        f"{_scheme_of(prediction)}, whose {extra or 'unprefixed'} tags {scheme} does not have; both sides are "
        f"decoded as {both}, where the reference's chunks that {both} spells otherwise count as repaired: "
        f"convert one side, or pass scheme= to choose"
    )


def _scheme_of(prediction: frozenset[str] | set[str]) -> str:
    """The scheme `detect_scheme` gives tags with these prefixes (I- without B-: a chunk starts with I-)."""
    return scheme_from_evidence(prediction, "B" not in prediction)


# per scheme, the prefixes of which a tag sequence of it that has a chunk holds one at least
_MARKS = {"IO": ("", "I"), "IOB1": ("I",), "IOB2": ("B",), "IOE1": ("I",), "IOE2": ("E",),
          "IOBES": ("E", "S"), "BMES": ("E", "S"), "BILOU": ("L", "U")}


def other_scheme(scheme: str, prediction: frozenset[str] | set[str]) -> str | None:
    """The warning for predicted tags with the prefixes ``prediction`` when ``scheme`` was
    detected from the reference's (None if they fit it): valid tags of ``scheme``, but
    with none of the prefixes every chunk of it has (B/I tags under IOBES, say), so they
    are of another scheme. IOB1 and IOB2 tags are read alike (conlleval's rules).

    >>> other_scheme("IOBES", {"B", "I"})
    "scheme='auto' detected IOBES from the reference tags, but the prediction's tags are of scheme IOB2 (no E- or S- tag); the prediction is decoded as IOBES, its ill-formed chunks counted as repaired: convert it, or pass scheme= to choose"
    >>> other_scheme("IOBES", {"S"}), other_scheme("IOB2", {"I"}), other_scheme("IOB2", set())
    (None, None, None)
    """
    if not prediction or not _fits(scheme, prediction) or not prediction.isdisjoint(_MARKS[scheme]):
        return None
    if scheme in ("IOB1", "IOB2") and prediction <= {"B", "I"}:
        return None
    marks = " or ".join(f"{m}-" for m in _MARKS[scheme] if m)
    return (f"scheme='auto' detected {scheme} from the reference tags, but the prediction's tags are of "
            f"scheme {_scheme_of(prediction)} (no {marks} tag); the prediction is decoded as {scheme}, its "
            f"ill-formed chunks counted as repaired: convert it, or pass scheme= to choose")


def _i_starts(arrays: TagArrays, vocab: Vocabulary) -> bool:
    """Does some chunk start with ``I-`` (after ``O``, another label or a segment start)?"""
    role_of, label_of = vocab.roles(SCHEMES["IOB1"], check=False)
    role, label = role_of[arrays.ids], label_of[arrays.ids]
    prev_differs = np.ones(len(role), dtype=bool)
    prev_differs[1:] = (label[:-1] != label[1:]) | (role[:-1] == O)
    return bool(((role == I) & (arrays.first | prev_differs)).any())


def scheme_from_evidence(prefixes: frozenset[str] | set[str], i_starts: bool) -> str:
    """The scheme `detect_scheme` names for tags with these ``prefixes``, where
    ``i_starts`` says whether some chunk starts with ``I-``.

    >>> scheme_from_evidence({"B", "I"}, False), scheme_from_evidence({"B", "I"}, True)
    ('IOB2', 'IOB1')
    >>> scheme_from_evidence({"B", "I", "E"}, True), scheme_from_evidence({""}, False)
    ('IOBES', 'IO')
    """
    if "U" in prefixes or "L" in prefixes:
        return "BILOU"
    if "M" in prefixes:
        return "BMES"
    if "S" in prefixes or ("E" in prefixes and "B" in prefixes):
        return "IOBES"
    if "E" in prefixes:
        return "IOE2"
    if prefixes == {""}:
        return "IO"
    if "B" in prefixes or "I" in prefixes:
        return "IOB1" if i_starts else "IOB2"
    return "IOB2"


class SchemeWatch:
    """The scheme ``scheme="auto"`` detects on all the batches seen so far, from the prefixes
    of their reference's and prediction's tags (`choose_scheme`), and the warning it
    gives (``message``); a chunk that starts with ``I-`` in any batch makes B/I tags IOB1,
    as it would in one call over batches that start at sentence starts (the command line's
    streamed reader)."""

    def __init__(self) -> None:
        self.iob1 = False
        self.reference: frozenset[str] = frozenset()
        self.prediction: frozenset[str] = frozenset()
        self.message: str | None = None

    def update(self, reference: TagArrays, prediction: TagArrays, vocab: Vocabulary) -> str:
        """The scheme of the batches so far and this one (its two sides' tags in ``vocab``)."""
        self.reference |= vocab.prefixes(reference.ids)
        self.prediction |= vocab.prefixes(prediction.ids)

        def i_starts() -> bool:
            self.iob1 = self.iob1 or _i_starts(reference, vocab)
            return self.iob1

        found, self.message = choose_scheme(self.reference, self.prediction, i_starts)
        return found
