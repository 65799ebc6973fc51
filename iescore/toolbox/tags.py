"""Beside the pipeline (the CoNLL toolbox), on tag sequences: which transitions a scheme
forbids, and tags repaired or converted through the chunks the decoder reads
(stage 1 of the pipeline, `iescore.decode`).

A *transition* is a pair of adjacent tags of a sentence, the sentence being read as if
``O`` stood before its first tag and after its last. It is invalid when the decoder,
reading the tags by the scheme's meaning (a ``B``, ``S`` or ``U`` always begins a chunk,
an ``E``, ``S``, ``U`` or ``L`` always ends one), finds there a chunk that begins or
ends with a tag that the scheme's tables (`iescore.decode.tables`) do not allow to
begin or end one: ``O I-PER`` in IOB2, ``O B-PER`` in IOB1, ``B-PER O`` in IOBES.

Repairs and conversions decode the tags into chunks, then write the chunks in the tags
of a scheme:

* ``conlleval``: every chunk is kept as conlleval.pl reads it (an ``I-`` after ``O``
  or after another label begins a chunk, a label change ends one); ``E-X B-X``, valid
  in IOBES, stays two chunks (conlleval.pl would join them).
* ``discard``: a chunk that begins or ends with a tag the scheme does not allow there
  is dropped (its tokens become ``O``).
* ``strict`` (conversions only): such a chunk is an error.

With a type filter (`TypeFilter`: a type map, then the types kept or left out, as
the scorer's ``supertags``, ``keep_types`` and ``remove_types``), the chunks are
decoded first, then renamed, and those of a type left out dropped (their tokens become
``O``): a continuation tag is never left without its chunk's start.

Written in IO, two adjacent chunks of one label become one: IO has no tag to separate
them. Besides the eight schemes of `iescore.decode.tables`, BMEOW (BMES with ``W`` for
a single-token chunk) is known here.

Example:
    >>> [(t.index, t.before, t.after) for t in invalid_transitions(["O", "I-PER", "B-LOC"], "IOB2")]
    [(1, 'O', 'I-PER')]
    >>> repair_tags(["O", "I-PER", "I-PER", "O"], "IOB2")
    ['O', 'B-PER', 'I-PER', 'O']
    >>> convert_tags(["B-PER", "I-PER", "B-LOC", "O"], "IOB2", "IOBES")
    ['B-PER', 'E-PER', 'S-LOC', 'O']
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..config import Config, warn_unknown_types
from ..decode.decoder import decode, decode_arrays, encode_spans
from ..decode.vocab import NOT_OF_SCHEME, TagArrays, Vocabulary
from ..errors import ConfigError, InputError, choices, shown
from ..schemes import SCHEMES, B, E, I, L, O, S, Scheme, get_scheme

__all__ = ["TOOLBOX_SCHEMES", "TOOLBOX_REPAIRS", "Transition", "toolbox_scheme", "invalid_transitions",
           "tags_not_of_scheme", "roles_of", "transitions_of", "decode_column", "encode_chunks", "repair_tags", "convert_tags", "TypeFilter"]

_BMES = SCHEMES["BMES"]
BMEOW = Scheme("BMEOW", {"B": B, "M": I, "E": E, "W": S}, _BMES.start_ok, _BMES.end_ok)
# the schemes the toolbox reads and writes
TOOLBOX_SCHEMES = (*SCHEMES, "BMEOW")
# how chunks a scheme forbids are repaired (strict: an error)
TOOLBOX_REPAIRS = ("conlleval", "discard", "strict")


def toolbox_scheme(name: str | Scheme) -> Scheme:
    """The scheme of that name (any case; BIO, BIOES and BILUO are aliases), BMEOW included.

    >>> toolbox_scheme("bio").name, toolbox_scheme("BMEOW").letters["W"] == S
    ('IOB2', True)
    """
    if isinstance(name, Scheme):
        return name
    if str(name).upper() == "BMEOW":
        return BMEOW
    try:
        return get_scheme(name)
    except ConfigError:
        raise ConfigError(f"unknown tag scheme {name!r}; valid schemes: {choices(TOOLBOX_SCHEMES)}") from None


@dataclass(frozen=True)
class Transition:
    """An invalid transition: the tags ``before`` and ``after`` (``"O"`` standing for the
    sentence's start or end), ``index`` the position of ``after`` in the sentence (its
    length at the sentence's end) and ``at_end`` whether ``after`` is the end."""

    index: int
    before: str
    after: str
    at_end: bool = False


def roles_of(tags: Sequence[str], scheme: Scheme) -> dict[str, tuple[int, str] | None]:
    """Each distinct tag's (role, label) under ``scheme``; None for a tag of another
    scheme. A tag that is no tag at all (empty, a control character, ``B-``) is an
    InputError saying why."""
    out: dict[str, tuple[int, str] | None] = {}
    for tag in dict.fromkeys(tags):
        vocab = Vocabulary()
        vocab.encode([tag])
        try:
            role, lab = vocab.roles(scheme)
        except InputError as exc:
            if NOT_OF_SCHEME not in str(exc):
                raise
            out[tag] = None
            continue
        out[tag] = (int(role[0]), vocab.labels[lab[0]] if role[0] != O else "")
    return out


def tags_not_of_scheme(tags: Sequence[str], scheme: str | Scheme) -> list[int]:
    """The positions of the tags that are not tags of ``scheme``.

    >>> tags_not_of_scheme(["O", "E-PER", "B-LOC"], "IOB2")
    [1]
    """
    parsed = roles_of(tags, toolbox_scheme(scheme))
    return [k for k, t in enumerate(tags) if parsed[t] is None]


def _invalid(sch: Scheme, p: int, p_label: str, c: int, c_label: str) -> bool:
    """Does a chunk begin or end between roles ``p`` and ``c`` with a tag ``sch`` does
    not allow there? (The decoder's events, read by the scheme's meaning.)"""
    both = p != O and c != O and p_label == c_label
    split = p in (S, L, E) or c in (S, B)
    if both and not split:
        return False  # one chunk goes on
    return bool((c != O and not sch.start_ok[c, int(both)]) or (p != O and not sch.end_ok[p, int(both)]))


def invalid_transitions(tags: Sequence[str], scheme: str | Scheme) -> list[Transition]:
    """The invalid transitions of one sentence's tags under ``scheme``, in order. A tag
    of another scheme is read as ``O`` here (`tags_not_of_scheme` lists them).

    >>> [(t.index, t.before, t.after, t.at_end) for t in invalid_transitions(["B-PER", "I-PER"], "IOBES")]
    [(2, 'I-PER', 'O', True)]
    """
    sch = toolbox_scheme(scheme)
    return transitions_of(tags, roles_of(tags, sch), sch)


class TypeFilter:
    """Chunk types renamed by a type map (``"A=X,B=X"``), then kept (``keep``) or left out
    (``remove``): the scorer's ``supertags``, ``keep_types`` and ``remove_types``. It
    notes the types it sees, for `warn`.

    >>> f = TypeFilter("PER=NE,LOC=NE", keep="NE")
    >>> f.chunks([("PER", 0, 1), ("MISC", 1, 2), ("LOC", 3, 4)])
    [('NE', 0, 1), ('NE', 3, 4)]
    """

    def __init__(self, type_map: object = (), keep: object = (), remove: object = ()) -> None:
        self.config = Config(supertags=type_map, keep_types=keep, remove_types=remove)  # type: ignore[arg-type]
        self.map = self.config.supertag_map()
        self.present: set[str] = set()
        self.removed: set[str] = set()

    def __bool__(self) -> bool:
        return bool(self.map) or self.config.filters_types()

    def type_of(self, label: str) -> str | None:
        """A chunk label's type after the map, None when it is left out."""
        t = self.map.get(label, label)
        if self.config.kept(t):
            self.present.add(t)
            return t
        self.removed.add(t)
        return None

    def chunks(self, chunks: Sequence[tuple[str, int, int]]) -> list[tuple[str, int, int]]:
        """``(label, start, end)`` chunks renamed, without those left out."""
        return [(t, s, e) for label, s, e in chunks if (t := self.type_of(label)) is not None]

    def warn(self) -> None:
        """Warn for a kept or removed type not seen (`warn_unknown_types`)."""
        if self.config.filters_types():
            warn_unknown_types(self.config, self.present, self.removed)


def transitions_of(tags: Sequence[str], parsed: dict[str, tuple[int, str] | None], sch: Scheme) -> list[Transition]:
    """`invalid_transitions` with each tag's (role, label) given (`roles_of`)."""
    out = []
    p, p_label, before = O, "", "O"
    for k, tag in enumerate(tags):
        c, c_label = parsed[tag] or (O, "")
        if _invalid(sch, p, p_label, c, c_label):
            out.append(Transition(k, before, tag))
        p, p_label, before = c, c_label, tag
    if _invalid(sch, p, p_label, O, ""):
        out.append(Transition(len(tags), before, "O", at_end=True))
    return out


def decode_column(tags: Sequence[str], starts: Sequence[int], scheme: str | Scheme, repair: str,
                  where: Callable[[int], str] | None = None) -> list[tuple[str, int, int]]:
    """The chunks ``(label, start, end)`` (flat token offsets, end excluded) of the
    sentences that begin at ``starts`` in the flat list ``tags``, under ``repair``
    (`TOOLBOX_REPAIRS`). ``where(k)`` names token ``k`` in errors (a file and line). A
    tag of another scheme is an InputError.

    >>> decode_column(["B-PER", "O", "I-LOC"], [0, 2], "IOB2", "discard")
    [('PER', 0, 1)]
    """
    sch = toolbox_scheme(scheme)
    if repair not in TOOLBOX_REPAIRS:
        raise ConfigError(f"unknown repair {repair!r}; valid: {choices(TOOLBOX_REPAIRS)}")
    parsed = roles_of(tags, sch)
    for k, tag in enumerate(tags):
        if parsed[tag] is None:
            at = f"{where(k)}: " if where is not None else f"token {k}: "
            raise InputError(f"{at}tag {shown(tag)} is not a tag of scheme {sch.name}")
    vocab = Vocabulary()
    ids = vocab.encode(list(tags))
    arrays = TagArrays(ids, segments=np.unique(np.asarray(starts, dtype=np.int64)))
    if repair == "conlleval":  # every chunk, read by the scheme's meaning (E-X B-X not joined)
        role_of, label_of = vocab.roles(sch)
        start, end, types, _, _ = decode(ids, None, role_of.astype(np.uint8), label_of, scheme=sch,
                                         conlleval=False, segments=arrays.segments)
        labels = vocab.labels
    else:
        chunks = decode_arrays(arrays, vocab, scheme=sch, repair=repair, where=where)
        start, end, types, labels = chunks.start, chunks.end, chunks.type, chunks.labels
    return [(labels[t], s, e) for t, s, e in zip(types.tolist(), start.tolist(), end.tolist())]


def encode_chunks(chunks: Sequence[tuple[str, int, int]], length: int, scheme: str | Scheme) -> list[str]:
    """``length`` tags of ``scheme`` holding the chunks ``(label, start, end)`` (sorted,
    not overlapping); in IO, adjacent chunks of one label become one.

    >>> encode_chunks([("PER", 0, 1), ("PER", 1, 3)], 4, "IO")
    ['I-PER', 'I-PER', 'I-PER', 'O']
    >>> encode_chunks([("PER", 0, 1), ("PER", 1, 3)], 4, "BMEOW")
    ['W-PER', 'B-PER', 'E-PER', 'O']
    """
    sch = toolbox_scheme(scheme)
    if sch.name == "IO":
        tags = ["O"] * length
        for label, s, e in chunks:
            tags[s:e] = [f"I-{label}"] * (e - s)
        return tags
    if sch is BMEOW:
        return [f"W-{t[2:]}" if t.startswith("S-") else t for t in encode_spans(chunks, length, scheme="BMES")]
    return encode_spans(chunks, length, scheme=sch)


def _by_sentence(chunks: list[tuple[str, int, int]], starts: list[int], n: int,
                 ) -> list[tuple[int, int, list[tuple[str, int, int]]]]:
    """(start, end, chunks with sentence-relative offsets) of each sentence."""
    bounds = [*starts, n]
    out, k = [], 0
    for s, e in zip(bounds, bounds[1:]):
        mine = []
        while k < len(chunks) and chunks[k][1] < e:
            label, a, b = chunks[k]
            mine.append((label, a - s, b - s))
            k += 1
        out.append((s, e, mine))
    return out


def recode(tags: Sequence[str], starts: Sequence[int], source: str | Scheme, target: str | Scheme, repair: str,
           where: Callable[[int], str] | None = None, only: Sequence[bool] | None = None,
           types: TypeFilter | None = None) -> list[str]:
    """The flat ``tags`` (sentences beginning at ``starts``) decoded under ``source`` and
    ``repair`` and written in ``target``; with ``only`` (a flag per sentence), the other
    sentences are kept as they are; with ``types``, the chunks renamed and filtered."""
    starts = sorted(set(starts) | ({0} if tags else set()))
    chunks = decode_column(tags, starts, source, repair, where)
    if types:
        chunks = types.chunks(chunks)
    out = list(tags)
    for k, (s, e, mine) in enumerate(_by_sentence(chunks, starts, len(tags))):
        if only is None or only[k]:
            out[s:e] = encode_chunks(mine, e - s, target)
    return out


def repair_tags(tags: Sequence[str], scheme: str | Scheme, repair: str = "conlleval") -> list[str]:
    """One sentence's tags rewritten in valid tags of ``scheme`` (``repair``
    ``conlleval`` or ``discard``); tags without an invalid transition are returned as
    they are.

    >>> repair_tags(["B-PER", "I-LOC", "O"], "IOB2", "discard")
    ['B-PER', 'O', 'O']
    >>> repair_tags(["O", "B-PER", "I-PER"], "IOB1")
    ['O', 'I-PER', 'I-PER']
    """
    if repair not in TOOLBOX_REPAIRS[:2]:
        raise ConfigError(f"unknown repair {repair!r}; valid: {choices(TOOLBOX_REPAIRS[:2])}")
    if not invalid_transitions(tags, scheme):
        return list(tags)
    return recode(tags, [0], scheme, scheme, repair)


def convert_tags(tags: Sequence[str], source: str | Scheme, target: str | Scheme, repair: str = "strict") -> list[str]:
    """One sentence's tags of scheme ``source`` written in ``target``; a chunk that
    ``source`` does not allow is an error under ``repair="strict"``, else repaired
    (``conlleval``) or dropped (``discard``).

    >>> convert_tags(["S-PER", "B-LOC", "E-LOC"], "IOBES", "BILOU")
    ['U-PER', 'B-LOC', 'L-LOC']
    >>> convert_tags(["B-PER", "B-PER"], "IOB2", "IO")  # one chunk: IO cannot separate them
    ['I-PER', 'I-PER']
    """
    return recode(tags, [0], source, target, repair)
