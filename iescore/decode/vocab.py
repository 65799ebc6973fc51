"""Stage 1 of the pipeline (decode), its input: tag strings coded as small integers.

A `Vocabulary` gives each distinct tag string an id and parses it once into a
(role, label id) pair; `TagArrays` is a flat id sequence over many segments
(sentences); `flatten` turns lists of tag sequences into one. What the decoders
then read are these integer arrays, never the strings. Which tags are valid is said in
`iescore.decode` (the package's docstring).
"""

from __future__ import annotations

import itertools
import operator
import unicodedata
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import chain, islice, repeat
from operator import itemgetter

import numpy as np

from ..errors import InputError, choices, shown
from ..schemes import PREFIX_LETTERS, I, Scheme

NOT_OF_SCHEME = "not a tag of scheme"  # the problem another scheme may not have


def detected_note(scheme: str) -> str:
    """What an invalid tag's error adds when its scheme was detected, not given."""
    return f" (scheme {scheme} was detected from the gold tags under scheme='auto'; pass scheme= to name another)"


class _ByteOverflow(Exception):
    """Raised inside a byte-coded encoding when the 257th distinct tag appears."""


class _Ids(defaultdict):  # type: ignore[type-arg]
    """name -> id, in order of first sight. Outside `_assigning` it is a plain dict
    (an unseen name is a KeyError); inside, an unseen name takes the next id."""


@contextmanager
def _assigning(ids: _Ids, limit: int | None = None) -> Iterator[None]:
    """Within the block an unseen name looked up in ``ids`` takes the next id: counted
    in C (``itertools.count``), so a pass over a million tags with a hundred thousand
    distinct ones makes no Python call per new tag; with ``limit``, the name that would
    take id ``limit`` raises `_ByteOverflow` (a Python call per new name: at most
    ``limit + 1`` of them)."""
    if limit is None:
        ids.default_factory = itertools.count(len(ids)).__next__
    else:
        def next_id() -> int:
            if len(ids) >= limit:
                raise _ByteOverflow
            return len(ids)

        ids.default_factory = next_id
    try:
        yield
    finally:
        ids.default_factory = None


def _forget(ids: dict[str, int], known: int) -> None:
    """Remove the names given ids after the first ``known``."""
    for name in list(islice(ids, known, None)):
        del ids[name]


class Vocabulary:
    """Tag strings <-> integer ids, and entity labels <-> label ids.

    Tag ids are assigned on first sight; each distinct tag string is split once at
    its first delimiter, and read as a (role, label id) pair per scheme, so decoding
    works on small integer arrays. The label ids are shared by the reference and the
    prediction.
    """

    def __init__(self, *, delimiter: str = "-", outside: str = "O") -> None:
        self.delimiter = delimiter
        self.outside = outside
        self.tag_ids: dict[str, int] = _Ids()
        self.tags: list[str] = []
        self.label_ids: dict[str, int] = _Ids()
        self.labels: list[str] = []
        # each tag split at its first delimiter (str.partition): the part before it and
        # the part after it (the whole tag and "" for a tag without the delimiter)
        self._heads: list[str] = []
        self._tails: list[str] = []
        # roles() of the tags so far, per (scheme, check): one pass per new tag, not per call
        self._roles: dict[tuple[str, tuple[tuple[str, int], ...], bool, bool],
                          tuple[int, np.ndarray, np.ndarray]] = {}

    def label_id(self, label: str) -> int:
        """The id of ``label``, assigning a new one if unseen."""
        lid = self.label_ids.get(label)
        if lid is None:
            lid = self.label_ids[label] = len(self.labels)
            self.labels.append(label)
        return lid

    def encode(self, tags: Iterable[str] | Callable[[], Iterable[str]], count: int = -1) -> np.ndarray:
        """Map tag strings to ids (new tags get new ids): uint8 while the vocabulary
        has at most 256 tags, else int32.

        ``tags`` may be a callable returning a fresh iterator, which lets the byte
        coding restart in int32 if the 257th tag appears midway. Each tag costs one
        C-level dict look-up (``map(dict.__getitem__)``, an unseen tag taking the next
        id, see `_assigning`), collected by ``bytes()`` without a Python int
        object per element surviving. A tag that is not a string is an InputError;
        an encoding that fails adds no tag to the vocabulary.

        >>> v = Vocabulary()
        >>> v.encode(["O", "B-PER", "I-PER", "O"]).tolist(), v.tags
        ([0, 1, 2, 0], ['O', 'B-PER', 'I-PER'])
        """
        ids = self.tag_ids
        if not isinstance(ids, _Ids):
            ids = self.tag_ids = _Ids(None, ids)
        known = len(ids)
        try:
            out = self._lookup(ids, tags, count)
            new = list(islice(ids, known, None)) if len(ids) > known else []
            if not all(issubclass(t, str) for t in set(map(type, new))):  # one C-level pass
                bad = next(t for t in new if not isinstance(t, str))
                raise InputError(f"tags must be strings, got {bad!r} ({type(bad).__name__})")
        except BaseException:
            _forget(ids, known)
            raise
        self.tags += new
        # each new tag split at its first delimiter, the heads and the tails in a pass each:
        # keeping a tuple per tag (a hundred thousand of them) would wake the cyclic garbage
        # collector, which then walks every live object, the caller's tag lists too
        self._heads += map(itemgetter(0), map(str.partition, new, repeat(self.delimiter)))
        self._tails += map(itemgetter(2), map(str.partition, new, repeat(self.delimiter)))
        return out

    @staticmethod
    def _lookup(ids: _Ids, tags: Iterable[str] | Callable[[], Iterable[str]], count: int) -> np.ndarray:
        """The ids of ``tags`` (see `encode`), new tags taking the next ids."""
        fresh = tags if callable(tags) else None
        if len(ids) < 256 and (fresh is not None or isinstance(tags, Sequence)):
            try:
                with _assigning(ids, limit=256):
                    out = np.frombuffer(bytes(map(ids.__getitem__, fresh() if fresh else tags)), dtype=np.uint8)  # type: ignore[arg-type]
                if count >= 0 and len(out) != count:
                    raise InputError(f"expected {count} tags, got {len(out)}")
                return out
            except _ByteOverflow:
                pass
        with _assigning(ids):
            return np.fromiter(map(ids.__getitem__, fresh() if fresh else tags), dtype=np.int32, count=count)  # type: ignore[arg-type]

    def _split(self, tag: str) -> tuple[str, str] | None:
        """``(prefix, label)`` of a tag, None for the outside tag: split at the first
        delimiter; a prefix letter alone has the label ``""`` (conlleval's empty type);
        any other tag without the delimiter is a bare label (prefix ``""``)."""
        if tag == self.outside:
            return None
        prefix, sep, label = tag.partition(self.delimiter)
        if sep or tag in PREFIX_LETTERS:
            return (prefix, label)
        return ("", tag)

    def _problem(self, i: int, scheme: Scheme) -> str | None:
        """Why tag ``i`` is not a valid tag of ``scheme`` (None if it is)."""
        tag = self.tags[i]
        parsed = self._split(tag)
        if parsed is None:
            return None
        if tag == "":
            return "an empty tag"
        # a printable string holds no control, format or space character other than " "
        for ch in ("" if tag.isprintable() and "\ufeff" not in tag else tag):
            if ch == "\ufeff":
                name = "a byte-order mark"
            elif unicodedata.category(ch) in ("Cc", "Cf"):
                name = "the control character"
            elif ch.isspace() and ch != " ":
                name = "the space character"
            else:
                continue
            return f"it contains {name} U+{ord(ch):04X}"
        prefix, label = parsed
        if tag != tag.strip(" "):  # (given from Python: a file's columns are split at spaces)
            return f"it {'starts' if tag.startswith(' ') else 'ends'} with a space"
        if label.startswith(" ") and self.delimiter in tag:
            return f"a space after the delimiter {self.delimiter!r}"
        if self.delimiter in tag and not label:
            return f"no label after the delimiter {self.delimiter!r}"
        if self.delimiter in tag or tag in PREFIX_LETTERS:
            ok = prefix in scheme.letters
        else:  # a bare label
            ok = scheme.bare
        return None if ok else f"{NOT_OF_SCHEME} {scheme.name}"

    def valid_forms(self, scheme: Scheme) -> str:
        """The valid tag forms of ``scheme``, for error messages."""
        valid = [f"{p}{self.delimiter}<label>" for p in scheme.letters] + [self.outside]
        if scheme.bare:
            valid.append("<label>")
        return choices(valid)

    def roles(
        self, scheme: Scheme, *, check: bool = True, locate: Callable[[int], str] | None = None,
        detected: bool = False,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Per tag id: its role code (int8) and label id (int32) under ``scheme``.

        Raises InputError for an invalid tag (see the module's description), naming
        the tag and, when ``locate(tag_id)`` is given, where it occurs; with ``detected``
        (the scheme was detected under ``scheme="auto"``) a tag of another form says so
        (`detected_note`). With ``check=False`` an invalid tag is read as outside
        instead (for guessing the scheme).

        >>> v = Vocabulary()
        >>> _ = v.encode(["B", "I", "O"])
        >>> from iescore.schemes import get_scheme
        >>> role, lab = v.roles(get_scheme("IOB2"))
        >>> role.tolist(), [v.labels[k] for k in lab[:2]]
        ([1, 2, 0], ['', ''])
        """
        n = len(self.tags)
        key = (scheme.name, tuple(scheme.letters.items()), scheme.bare, check)
        done, role, lab = self._roles.get(key, (0, np.zeros(0, np.int8), np.zeros(0, np.int32)))
        if done == n:
            return role, lab
        # the tags added since the last call, appended to its arrays (read-only: shared)
        role = np.concatenate((role, np.zeros(n - done, dtype=np.int8)))
        lab = np.concatenate((lab, np.full(n - done, -1, dtype=np.int32)))
        if not self._read_common(done, n, scheme, role, lab):
            for i in range(done, n):
                pi = self._split(self.tags[i])
                if pi is None:
                    continue
                problem = self._problem(i, scheme)
                if problem is not None:
                    if not check:
                        continue
                    where = f"{locate(i)}: " if locate is not None else ""
                    note = detected_note(scheme.name) if detected and problem.startswith(NOT_OF_SCHEME) else ""
                    raise InputError(
                        f"{where}invalid tag {shown(self.tags[i])}: {problem}; valid forms: {self.valid_forms(scheme)}{note}"
                    )
                prefix, label = pi
                role[i], lab[i] = (I if prefix == "" else scheme.letters[prefix]), self.label_id(label)
        role.setflags(write=False)
        lab.setflags(write=False)
        self._roles[key] = (n, role, lab)
        return role, lab

    def prefixes(self, ids: np.ndarray | None = None) -> frozenset[str]:
        """The prefixes of the well-formed tags, ``""`` standing for a bare label (an
        invalid tag is reported once the scheme is known): what guessing the scheme reads.
        With ``ids`` (tag ids, e.g. one side's), of the tags that occur in it only.

        >>> v = Vocabulary()
        >>> _ = v.encode(["O", "B-PER", "I-PER", "E-", "X-", "LOC"])
        >>> sorted(v.prefixes()), sorted(v.prefixes(np.array([0, 1, 2, 0])))
        (['', 'B', 'E', 'I'], ['B', 'I'])
        """
        heads, tails, tags = self._heads, self._tails, self.tags
        o = self.tag_ids.get(self.outside)
        if ids is not None:
            if not len(ids):
                return frozenset()
            seen = np.bincount(ids, minlength=len(tags))  # one counting pass (C-level)
            if not seen.all():  # the tags that occur, the outside tag's index among them
                keep = np.flatnonzero(seen)
                o = int(np.searchsorted(keep, o)) if o is not None and seen[o] else None
                heads, tails, tags = ([x[k] for k in keep.tolist()] for x in (heads, tails, tags))
        if o is not None:  # the outside tag left out (by slices: the tags are distinct)
            heads, tails, tags = (x[:o] + x[o + 1:] for x in (heads, tails, tags))
        letters = set(heads)
        if letters <= PREFIX_LETTERS:  # the usual case: every tag's prefix is a letter
            return frozenset(letters)
        # one entry per distinct form (head, has a label, has the delimiter): a few, or one
        # per bare label
        forms = set(zip(heads, map(bool, tails), map(operator.contains, tags, repeat(self.delimiter))))
        out = set()
        for head, labelled, delimited in forms:
            if head in PREFIX_LETTERS:  # "B-PER", "B-" and "B" alike
                out.add(head)
            elif (labelled if head == "" else not delimited):  # "-PER" or a bare label "PER"
                out.add("")
        return frozenset(out)

    def _read_common(self, done: int, n: int, scheme: Scheme, role: np.ndarray, lab: np.ndarray) -> bool:
        """Fill ``role`` and ``lab`` for the tags ``done`` to ``n`` in whole-list passes (C-level
        maps, no Python call per tag) if each of them is the outside tag or the common valid
        tag: a letter of ``scheme``, the delimiter, a label without a space around it,
        printable (so no byte-order mark, which is a format character). Else change nothing
        and return False: the tags are then read one by one (`_problem` says what is
        wrong)."""
        tags, heads, tails = self.tags[done:n], self._heads[done:n], self._tails[done:n]
        labelled = np.ones(n - done, dtype=bool)
        o = self.tag_ids.get(self.outside, -1) - done  # the outside tag, if new (tags are distinct)
        if 0 <= o < n - done:
            labelled[o] = False
            del tags[o], heads[o], tails[o]
        letters = {p: r for p, r in scheme.letters.items() if p != ""}  # "" would be a bare label
        # each head's role, -1 for a head that is not a letter
        codes = np.fromiter(map(letters.get, heads, repeat(-1)), dtype=np.int8, count=len(heads))
        # a letter, a label (so the delimiter too) without a space around it, printable
        if not ((codes >= 0).all() and all(tails) and all(map(str.isprintable, tags))
                and all(map(operator.eq, tails, map(str.strip, tails)))):
            return False
        role[done:][labelled] = codes
        labels = self.label_ids
        if not isinstance(labels, _Ids):
            labels = self.label_ids = _Ids(None, labels)
        known = len(labels)
        with _assigning(labels):  # new labels take the next ids, in order of first sight
            ids = np.fromiter(map(labels.__getitem__, tails), dtype=np.int32, count=len(tails))
        lab[done:][labelled] = ids
        self.labels += islice(labels, known, None)
        return True


@dataclass(frozen=True, init=False)
class TagArrays:
    """A flat, integer-coded tag sequence over many segments (sentences).

    ``ids`` are tag ids of a `Vocabulary` (any integer dtype; uint8 when
    the vocabulary is small). Segments (chunks never cross their starts) are given
    by ``first`` (a flag per token) or ``segments`` (the sorted start positions);
    each is derived from the other on use, so giving only ``segments`` saves a
    byte per token.

    >>> t = TagArrays(np.array([0, 1, 2, 1], np.uint8), segments=np.array([0, 3]))
    >>> t.first.tolist()
    [True, False, False, True]
    """

    ids: np.ndarray
    _first: np.ndarray | None = field(default=None, repr=False)
    _segments: np.ndarray | None = field(default=None, repr=False, compare=False)

    def __init__(self, ids: np.ndarray, first: np.ndarray | None = None, segments: np.ndarray | None = None) -> None:
        if first is None and segments is None:
            raise ValueError("TagArrays needs first= (a flag per token) or segments= (segment starts)")
        object.__setattr__(self, "ids", ids)
        object.__setattr__(self, "_first", first)
        object.__setattr__(self, "_segments", segments)

    @property
    def first(self) -> np.ndarray:
        """A flag per token: does a segment start here? (built from ``segments`` when not given)"""
        if self._first is not None:
            return self._first
        out = np.zeros(len(self.ids), dtype=bool)
        out[self.segments] = True
        return out

    @property
    def segments(self) -> np.ndarray:
        """Positions of the segment starts (sorted)."""
        if self._segments is None:
            object.__setattr__(self, "_segments", np.flatnonzero(self._first))  # type: ignore[arg-type]
        assert self._segments is not None
        return self._segments


def flatten(
    sequences: Sequence[Sequence[str]], vocab: Vocabulary, lengths: list[int] | None = None
) -> tuple[TagArrays, np.ndarray]:
    """Flatten a list of tag sequences into `TagArrays` and the sequence lengths
    (``lengths`` may give ``list(map(len, sequences))`` when the caller has it)."""
    if lengths is None:
        lengths = list(map(len, sequences))
    lens = np.array(lengths, dtype=np.int64)
    ends = np.cumsum(lens)
    total = int(ends[-1]) if len(ends) else 0
    ids = vocab.encode(lambda: chain.from_iterable(sequences), count=total)
    return TagArrays(ids, segments=(ends - lens)[lens > 0]), lens
