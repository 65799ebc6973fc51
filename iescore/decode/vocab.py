"""Stage 1 of the pipeline (decode), its input: tag strings coded as small integers.

A :class:`Vocabulary` gives each distinct tag string an id and parses it once into a
(role, label id) pair; :class:`TagArrays` is a flat id sequence over many segments
(sentences); :func:`flatten` turns lists of tag sequences into one. What the decoders
then read are these integer arrays, never the strings. Which tags are valid is said in
:mod:`iescore.decode` (the package's docstring).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from itertools import chain

import unicodedata

import numpy as np

from ..errors import InputError, choices
from .tables import I, PREFIX_LETTERS, Scheme, get_scheme


class _ByteOverflow(Exception):
    """Raised inside a byte-coded encoding when the 257th distinct tag appears."""


class _Ids(dict):  # type: ignore[type-arg]
    """tag -> id; an unseen tag gets the next id (and is recorded in ``new``)."""

    new: list[str] | None = None
    limit: int | None = None  # ids must stay below this (byte coding)

    def __missing__(self, tag: str) -> int:
        if not isinstance(tag, str):
            raise InputError(f"tags must be strings, got {tag!r} ({type(tag).__name__})")
        i = self[tag] = len(self)
        if self.new is not None:
            self.new.append(tag)
        if self.limit is not None and i >= self.limit:
            raise _ByteOverflow
        return i


class Vocabulary:
    """Tag strings <-> integer ids, and entity labels <-> label ids.

    Tag ids are assigned on first sight; each distinct tag string is parsed once
    into a (role, label id) pair, so decoding works on small integer arrays.
    The label ids are shared by the reference and the prediction.
    """

    def __init__(self, *, delimiter: str = "-", outside: str = "O") -> None:
        self.delimiter = delimiter
        self.outside = outside
        self.tag_ids: dict[str, int] = _Ids()
        self.tags: list[str] = []
        self.label_ids: dict[str, int] = {}
        self.labels: list[str] = []
        self._parsed: list[tuple[str, str] | None] = []  # (prefix letter, label) or None for O
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
        C-level dict look-up (``map(dict.__getitem__)``, with ``__missing__``
        assigning new ids), collected by ``bytes()`` without a Python int object
        per element surviving.

        >>> v = Vocabulary()
        >>> v.encode(["O", "B-PER", "I-PER", "O"]).tolist(), v.tags
        ([0, 1, 2, 0], ['O', 'B-PER', 'I-PER'])
        """
        new: list[str] = []
        ids = self.tag_ids
        if not isinstance(ids, _Ids):
            ids = self.tag_ids = _Ids(ids)
        fresh = tags if callable(tags) else None
        ids.new = new
        try:
            if len(ids) < 256 and (fresh is not None or isinstance(tags, Sequence)):
                ids.limit = 256
                try:
                    out = np.frombuffer(bytes(map(ids.__getitem__, fresh() if fresh else tags)), dtype=np.uint8)  # type: ignore[arg-type]
                    if count >= 0 and len(out) != count:
                        raise InputError(f"expected {count} tags, got {len(out)}")
                    return out
                except _ByteOverflow:
                    pass
                finally:
                    ids.limit = None
            return np.fromiter(map(ids.__getitem__, fresh() if fresh else tags), dtype=np.int32, count=count)  # type: ignore[arg-type]
        finally:
            ids.new = None
            self.tags += new
            self._parsed += self._split_all(new)

    def _split_all(self, tags: Sequence[str]) -> list[tuple[str, str] | None]:
        """:meth:`_split` of every tag (inlined: a vocabulary may have many thousand tags)."""
        out: list[tuple[str, str] | None] = []
        add = out.append
        outside, delim = self.outside, self.delimiter
        for tag in tags:
            if tag == outside:
                add(None)
                continue
            prefix, sep, label = tag.partition(delim)
            add((prefix, label) if sep or tag in PREFIX_LETTERS else ("", tag))
        return out

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
        tag, parsed = self.tags[i], self._parsed[i]
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
        if self.delimiter in tag and not label:
            return f"no label after the delimiter {self.delimiter!r}"
        if self.delimiter in tag or tag in PREFIX_LETTERS:
            ok = prefix in scheme.letters
        else:  # a bare label
            ok = scheme.bare
        return None if ok else f"not a tag of scheme {scheme.name}"

    def valid_forms(self, scheme: Scheme) -> str:
        """The valid tag forms of ``scheme``, for error messages."""
        valid = [f"{p}{self.delimiter}<label>" for p in scheme.letters] + [self.outside]
        if scheme.bare:
            valid.append("<label>")
        return choices(valid)

    def roles(
        self, scheme: Scheme, *, check: bool = True, locate: Callable[[int], str] | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Per tag id: its role code (int8) and label id (int32) under ``scheme``.

        Raises InputError for an invalid tag (see the module's description), naming
        the tag and, when ``locate(tag_id)`` is given, where it occurs. With
        ``check=False`` an invalid tag is read as outside instead (for guessing the scheme).

        >>> v = Vocabulary()
        >>> _ = v.encode(["B", "I", "O"])
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
        letters, delim = scheme.letters, self.delimiter
        parsed, tags = self._parsed[done:n], self.tags[done:n]
        # the common valid tag (prefix, delimiter, label; printable) needs no _problem call;
        # when every new tag is one (or O), they are read in whole-list passes
        if all([p is None or (p[1] != "" and p[0] in letters and delim in t and t.isprintable() and "\ufeff" not in t)
                for p, t in zip(parsed, tags)]):
            keep = [k for k, p in enumerate(parsed) if p is not None]
            names = [parsed[k][1] for k in keep]  # type: ignore[index]
            fresh = [name for name in dict.fromkeys(names) if name not in self.label_ids]  # in order of first sight
            self.label_ids.update(zip(fresh, range(len(self.labels), len(self.labels) + len(fresh))))
            self.labels += fresh
            if keep:
                idx = np.array(keep, dtype=np.int64) + done
                role[idx] = [I if parsed[k][0] == "" else letters[parsed[k][0]] for k in keep]  # type: ignore[index]
                lab[idx] = list(map(self.label_ids.__getitem__, names))
        else:
            for i in range(done, n):
                pi = self._parsed[i]
                if pi is None:
                    continue
                problem = self._problem(i, scheme)
                if problem is not None:
                    if not check:
                        continue
                    where = f"{locate(i)}: " if locate is not None else ""
                    raise InputError(
                        f"{where}invalid tag {self.tags[i]!r}: {problem}; valid forms: {self.valid_forms(scheme)}"
                    )
                prefix, label = pi
                role[i], lab[i] = (I if prefix == "" else letters[prefix]), self.label_id(label)
        role.setflags(write=False)
        lab.setflags(write=False)
        self._roles[key] = (n, role, lab)
        return role, lab


@dataclass(frozen=True, init=False)
class TagArrays:
    """A flat, integer-coded tag sequence over many segments (sentences).

    ``ids`` are tag ids of a :class:`Vocabulary` (any integer dtype; uint8 when
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
    """Flatten a list of tag sequences into :class:`TagArrays` and the sequence lengths
    (``lengths`` may give ``list(map(len, sequences))`` when the caller has it)."""
    if lengths is None:
        lengths = list(map(len, sequences))
    lens = np.array(lengths, dtype=np.int64)
    ends = np.cumsum(lens)
    total = int(ends[-1]) if len(ends) else 0
    ids = vocab.encode(lambda: chain.from_iterable(sequences), count=total)
    return TagArrays(ids, segments=(ends - lens)[lens > 0]), lens
