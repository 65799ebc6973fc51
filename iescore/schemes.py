"""Tag schemes and the one tag decoder (SPEC §7).

A tag such as ``B-PER`` is split at the first delimiter into a *prefix* (``B``)
and a *label* (``PER``); ``O`` is outside. As in conlleval.pl, a prefix letter
alone (``B``, ``I``, ``E``, ``S``, and ``M``, ``L``, ``U`` of the other schemes)
is a chunk tag whose label is the empty string ``""`` (conlleval's empty type;
its table prints it padded), so ``B I O`` holds one chunk of label ``""``.
Any other tag without the delimiter is a bare label (``PER``), valid in IO only.
Invalid tags are refused naming the tag and, where the caller can say, its
file and line or document and token: an empty tag, a label missing after the
delimiter (``B-``), a control or format character or a space other than the
ASCII space anywhere in the tag (e.g. a byte-order mark or a non-breaking space
glued to it), and a prefix the scheme does not have (``b-per``,
``O-X``, ``X-PER``). (conlleval reads ``B-`` as ``B``; iescore refuses it, as a
label lost on the way is likelier than a deliberate empty one.) Each scheme is
a declarative table:
which prefix letters it uses, the *role* of each letter, and which roles may
legally begin or end a chunk. One vectorised decoder works for all schemes on
integer-coded tags.

Roles: ``O`` outside, ``B`` begin, ``I`` inside, ``E`` end, ``S`` single
(IOBES ``S``, BILOU ``U``), ``L`` last (BILOU).

Decoding policies (``repair``):

* ``"conlleval"`` -- conlleval.pl's chunk rules for B/I/E/O: an ``I-`` after
  ``O`` or after another label starts a chunk, a label change ends one, and
  (as in conlleval) ``E-X B-X`` does *not* split. ``S``/``U`` are single-token
  chunks and ``L`` closes a chunk, by their meaning (conlleval has no such
  tags). Chunks that are ill-formed under the scheme are kept and counted as
  *repaired*.
* ``"strict"`` -- decode by the scheme's meaning; any ill-formed chunk raises
  :class:`~iescore.errors.InputError` naming the document, position and tags.
* ``"discard"`` -- decode by the scheme's meaning and drop ill-formed chunks,
  counting them.

Example:
    >>> from iescore.schemes import decode_tags
    >>> chunks = decode_tags([["B-PER", "I-PER", "O", "I-LOC"]], scheme="IOB2")
    >>> [(chunks.labels[t], int(s), int(e)) for t, s, e in zip(chunks.type, chunks.start, chunks.end)]
    [('PER', 0, 2), ('LOC', 3, 4)]
    >>> int(chunks.n_repaired)
    1
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from itertools import chain
from typing import Any, NamedTuple

import unicodedata

import numpy as np

from .errors import ConfigError, InputError, choices

__all__ = [
    "SCHEMES",
    "REPAIRS",
    "Scheme",
    "get_scheme",
    "Vocabulary",
    "TagArrays",
    "Chunks",
    "decode",
    "decode_tags",
    "encode_spans",
    "detect_scheme",
    "flatten",
]

# role codes
O, B, I, E, S, L = 0, 1, 2, 3, 4, 5
ROLE_NAMES = ("O", "B", "I", "E", "S", "L")
REPAIRS = ("conlleval", "strict", "discard")


@dataclass(frozen=True)
class Scheme:
    """A tag scheme as a table.

    ``letters`` maps each prefix letter to its role; ``start_ok[role, cont]`` says
    whether a chunk may begin with that role when the previous token continues
    the same label (``cont`` = 1) or not (0); ``end_ok[role, cont]`` the same for
    ending a chunk given whether the next token has the same label.
    ``bare`` accepts unprefixed labels as inside tags (IO only).
    """

    name: str
    letters: dict[str, int]
    start_ok: np.ndarray
    end_ok: np.ndarray
    bare: bool = False

    def tag(self, role: int, label: str, delimiter: str = "-") -> str:
        """Spell a tag of this scheme for ``role`` and ``label``."""
        if role == O:
            return "O"
        for letter, r in self.letters.items():
            if r == role:
                return f"{letter}{delimiter}{label}"
        raise ConfigError(f"scheme {self.name} has no {ROLE_NAMES[role]} role")


def _table(entries: dict[int, tuple[bool, bool]]) -> np.ndarray:
    t = np.zeros((6, 2), dtype=bool)
    for role, (no_cont, cont) in entries.items():
        t[role] = (no_cont, cont)
    return t


_ALL = (True, True)
_NONE = (False, False)
SCHEMES: dict[str, Scheme] = {
    "IO": Scheme("IO", {"I": I}, _table({I: _ALL}), _table({I: _ALL}), bare=True),
    "IOB1": Scheme(
        "IOB1", {"B": B, "I": I}, _table({I: _ALL, B: (False, True)}), _table({I: _ALL, B: _ALL})
    ),
    "IOB2": Scheme("IOB2", {"B": B, "I": I}, _table({B: _ALL, I: _NONE}), _table({I: _ALL, B: _ALL})),
    "IOE1": Scheme(
        "IOE1", {"I": I, "E": E}, _table({I: _ALL, E: _ALL}), _table({I: (True, False), E: (False, True)})
    ),
    "IOE2": Scheme("IOE2", {"I": I, "E": E}, _table({I: _ALL, E: _ALL}), _table({E: _ALL, I: _NONE})),
    "IOBES": Scheme(
        "IOBES",
        {"B": B, "I": I, "E": E, "S": S},
        _table({B: _ALL, S: _ALL, I: _NONE, E: _NONE}),
        _table({E: _ALL, S: _ALL, B: _NONE, I: _NONE}),
    ),
    "BMES": Scheme(
        "BMES",
        {"B": B, "M": I, "E": E, "S": S},
        _table({B: _ALL, S: _ALL, I: _NONE, E: _NONE}),
        _table({E: _ALL, S: _ALL, B: _NONE, I: _NONE}),
    ),
    "BILOU": Scheme(
        "BILOU",
        {"B": B, "I": I, "L": L, "U": S},
        _table({B: _ALL, S: _ALL, I: _NONE, L: _NONE}),
        _table({L: _ALL, S: _ALL, B: _NONE, I: _NONE}),
    ),
}
# prefix letters of any scheme: alone, such a letter is a chunk tag with an empty label
PREFIX_LETTERS = frozenset(letter for sch in SCHEMES.values() for letter in sch.letters)
_ALIASES = {"BIO": "IOB2", "BIOES": "IOBES", "BILUO": "BILOU", "IOBES": "IOBES"}


def get_scheme(name: str | Scheme) -> Scheme:
    """Look a scheme up by name (case-insensitive; BIO, BIOES and BILUO are aliases)."""
    if isinstance(name, Scheme):
        return name
    key = str(name).upper()
    key = _ALIASES.get(key, key)
    if key not in SCHEMES:
        raise ConfigError(
            f"unknown tag scheme {name!r}; valid schemes: {choices(list(SCHEMES) + ['auto'])}"
        )
    return SCHEMES[key]


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
                    out = np.frombuffer(bytes(map(ids.__getitem__, fresh() if fresh else tags)), dtype=np.uint8)
                    if count >= 0 and len(out) != count:
                        raise InputError(f"expected {count} tags, got {len(out)}")
                    return out
                except _ByteOverflow:
                    pass
                finally:
                    ids.limit = None
            return np.fromiter(map(ids.__getitem__, fresh() if fresh else tags), dtype=np.int32, count=count)
        finally:
            ids.new = None
            for tag in new:
                self.tags.append(tag)
                self._parsed.append(self._split(tag))

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
        for ch in tag:
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
        role = np.zeros(n, dtype=np.int8)
        lab = np.full(n, -1, dtype=np.int32)
        for i, parsed in enumerate(self._parsed):
            if parsed is None:
                continue
            problem = self._problem(i, scheme)
            if problem is not None:
                if not check:
                    continue
                where = f"{locate(i)}: " if locate is not None else ""
                raise InputError(
                    f"{where}invalid tag {self.tags[i]!r}: {problem}; valid forms: {self.valid_forms(scheme)}"
                )
            prefix, label = parsed
            role[i], lab[i] = (I if prefix == "" else scheme.letters[prefix]), self.label_id(label)
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
            object.__setattr__(self, "_segments", np.flatnonzero(self._first))
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


@dataclass(frozen=True)
class Chunks:
    """Decoded chunks: flat token offsets ``[start, end)``, label ids, and flags.

    ``ill`` marks chunks that are ill-formed under the scheme (kept and counted
    under ``repair="conlleval"``; absent under ``"discard"``, which counts them in
    ``n_discarded``).
    """

    start: np.ndarray
    end: np.ndarray
    type: np.ndarray
    ill: np.ndarray
    labels: list[str] = field(default_factory=list)
    n_discarded: int = 0
    group: np.ndarray | None = None  # the document each chunk starts in, when asked for

    @property
    def n_repaired(self) -> int:
        """Number of kept chunks that were ill-formed (repaired by conlleval's rules)."""
        return int(self.ill.sum())


def _role_boundaries(conlleval: bool) -> np.ndarray:
    """``(6, 6)`` bool: does the pair (previous role, current role) split two tokens
    even when both are inside with the same label? (SPEC §7; the decoding policies above)."""
    p = np.arange(6)[:, None]
    c = np.arange(6)[None, :]
    bnd = (p == S) | (c == S) | (p == L)
    if conlleval:
        bnd = bnd | ((c == B) & (p != E)) | ((p == E) & (c != B))
    else:
        bnd = bnd | (c == B) | (p == E)
    return bnd


# event flags of two adjacent tokens
_START, _END, _INNER, _BAD_START, _BAD_END, _SEG = 1, 2, 4, 8, 16, 32
_TABLES: dict[tuple[str, bytes, bytes, bool], tuple[np.ndarray, np.ndarray]] = {}


def _pair_flags(scheme: Scheme, conlleval: bool) -> tuple[np.ndarray, np.ndarray]:
    """The decoder's two tables of event flags for adjacent tokens.

    ``joined[(prev_role * 6 + role) * 2 + same_label]`` for tokens of one segment,
    ``split[prev_role * 6 + role]`` across a segment start. Flags: ``_START`` (the
    second token starts a chunk), ``_END`` (the first ends one), ``_BAD_START`` /
    ``_BAD_END`` (that start or end is illegal under the scheme's ``start_ok`` /
    ``end_ok`` tables), ``_INNER`` (the tokens continue one chunk but a ``B``
    inside it, or an ``E``/``L`` before its end, makes it ill-formed) and ``_SEG``
    (every split pair: a segment starts at the second token, so segments are counted
    among the events).
    """
    key = (scheme.name, scheme.start_ok.tobytes(), scheme.end_ok.tobytes(), conlleval)
    if key in _TABLES:
        return _TABLES[key]
    bnd = _role_boundaries(conlleval)
    joined = np.zeros((6, 6, 2), dtype=np.uint8)
    split = np.zeros((6, 6), dtype=np.uint8)
    for p in range(6):
        for c in range(6):
            for same in (0, 1):
                # same label: both inside with one label (O's label never equals a label)
                both = p != O and c != O and bool(same)
                cont = both and not bnd[p, c]
                f = 0
                if c != O and not cont:
                    f |= _START | (0 if scheme.start_ok[c, int(both)] else _BAD_START)
                if p != O and not cont:
                    f |= _END | (0 if scheme.end_ok[p, int(both)] else _BAD_END)
                if cont and (c == B or p in (E, L)):
                    f |= _INNER
                joined[p, c, same] = f
            f = 0
            if c != O:
                f |= _START | (0 if scheme.start_ok[c, 0] else _BAD_START)
            if p != O:
                f |= _END | (0 if scheme.end_ok[p, 0] else _BAD_END)
            split[p, c] = f | _SEG
    _TABLES[key] = (joined.reshape(-1), split.reshape(-1))
    return _TABLES[key]


_WINDOW = 1 << 17  # token pairs per decoding window (its buffers stay in cache)
_PAIR_WINDOW = 1 << 15  # the same for two sides at once
_PAIR_PIECE = 1 << 18  # tokens decoded two sides at once, between segment starts


def _segment_groups(segments: np.ndarray, groups: np.ndarray, n: int) -> np.ndarray | None:
    """The group (document) of each segment -- the one at token 0, then one per later
    segment start -- or None when every group is exactly one segment (the segment index
    is then the group)."""
    if len(segments) and segments[0] == 0:
        seg_starts = segments
    else:
        seg_starts = np.concatenate((np.zeros(1, np.int64), segments[segments > 0]))
    if len(groups) == len(seg_starts) and np.array_equal(groups, seg_starts):
        return None
    nonempty = groups[np.diff(groups, append=n) > 0]
    at = np.searchsorted(seg_starts, nonempty)
    if len(nonempty) and (at[-1] >= len(seg_starts) or not np.array_equal(seg_starts[at], nonempty)):
        raise ValueError("decode: every non-empty group must start at a segment start")
    return np.searchsorted(groups, seg_starts, "right") - 1


def decode(
    ids: np.ndarray,
    first: np.ndarray | None,
    role_of: np.ndarray,
    label_of: np.ndarray,
    *,
    scheme: Scheme,
    conlleval: bool,
    segments: np.ndarray | None = None,
    groups: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    """Decode tag ids into chunks. Returns ``(start, end, label, ill, group)``.

    ``role_of`` (uint8) / ``label_of`` give each tag id's role and label id (-1 for
    ``O``); ``first`` marks segment starts (chunks never cross them) and ``segments``
    may list them (``flatnonzero(first)``) to save a pass. ``groups`` may give the
    sorted start offsets of larger units made of whole segments (documents, possibly
    empty); ``group`` is then the index of the unit each chunk is in (else None).

    Vectorised and table-driven: whether a chunk starts or ends between tokens
    ``i-1`` and ``i``, and whether that start or end is legal under the scheme,
    depends only on their roles, on whether their labels are equal and on whether
    a segment starts between them, so one look-up per token pair in a small table
    (:func:`_pair_flags`) gives every event; the chunks are its few non-zero
    entries. The pairs are taken a window at a time in reused buffers, so the
    temporaries stay in cache.
    """
    n = len(ids)
    if n == 0:
        z = np.zeros(0, dtype=np.int64)
        return z, z, z.astype(np.int32), np.zeros(0, dtype=bool), (z if groups is not None else None)
    if segments is None:
        if first is None:
            raise ValueError("decode needs first= or segments=")
        segments = np.flatnonzero(first)
    splits = segments[segments > 0] - 1  # token pairs split by a segment start
    seg_group = _segment_groups(segments, groups, n) if groups is not None else None
    joined, split = _pair_flags(scheme, conlleval)
    k_tags = len(role_of)
    by_tag = ids.dtype.itemsize == 1 and k_tags <= 256
    if by_tag:  # the tables composed over tag-id pairs: one look-up per pair
        pair = (role_of.astype(np.intp)[:, None] * 6 + role_of[None, :]).reshape(-1)
        same = (label_of[:, None] == label_of[None, :]).reshape(-1)
        table = np.concatenate((joined[pair * 2 + same], split[pair]))
        shift = k_tags * k_tags  # codes of split pairs
        code_type = np.uint16 if 2 * shift <= 1 << 16 else np.uint32
    else:
        table = np.concatenate((joined, split.repeat(2)))
        shift, code_type = len(joined), np.uint8
    w = min(_WINDOW, max(n - 1, 1))
    code = np.empty(w, dtype=code_type)
    flags = np.empty(w, dtype=np.uint8)
    nonzero = np.empty(w, dtype=bool)
    if not by_tag:
        role = np.empty(w + 1, dtype=np.uint8)
        lab = np.empty(w + 1, dtype=label_of.dtype)
        equal = np.empty(w, dtype=bool)
    starts, ends, types, bad_s, bad_e, inner, docs = [], [], [], [], [], [], []
    r0 = int(role_of[ids[0]])
    if r0 != O:
        starts.append(np.zeros(1, np.int64))
        types.append(label_of[ids[:1]].astype(np.int32))
        bad_s.append(np.array([not scheme.start_ok[r0, 0]]))
        if groups is not None:
            docs.append(np.zeros(1, np.int64) if seg_group is None else seg_group[:1])
    for a in range(0, n - 1, w):
        m = min(a + w, n - 1) - a  # pairs (a + i, a + i + 1) for i < m
        window = ids[a : a + m + 1]
        c, f = code[:m], flags[:m]
        if by_tag:
            np.multiply(window[:m], k_tags, out=c, dtype=code_type)
            c += window[1:]
        else:
            role_of.take(window, out=role[: m + 1], mode="clip")
            label_of.take(window, out=lab[: m + 1], mode="clip")
            np.multiply(role[:m], 6, out=c)
            c += role[1 : m + 1]
            c <<= 1
            np.equal(lab[:m], lab[1 : m + 1], out=equal[:m])
            np.add(c, equal[:m], out=c, casting="unsafe")
        lo, hi = np.searchsorted(splits, (a, a + m))
        c[splits[lo:hi] - a] += shift  # a segment start splits whatever the tags say
        table.take(c, out=f, mode="clip")
        e = np.flatnonzero(np.not_equal(f, 0, out=nonzero[:m]))
        k = f[e]
        sel = (k & _START) != 0
        at = e.compress(sel) + 1
        starts.append(at + a)
        types.append(label_of.take(window[at]).astype(np.int32))
        bad_s.append((k.compress(sel) & _BAD_START) != 0)
        if groups is not None and len(at):  # the segment each start is in: the splits counted so far
            seg = np.cumsum((k & _SEG) != 0, dtype=np.int64).compress(sel)
            seg += lo
            docs.append(seg if seg_group is None else seg_group.take(seg))
        sel = (k & _END) != 0
        ends.append(e.compress(sel) + (a + 1))
        bad_e.append((k.compress(sel) & _BAD_END) != 0)
        sel = (k & _INNER) != 0
        if sel.any():
            inner.append(e.compress(sel) + a)
    rn = int(role_of[ids[n - 1]])
    if rn != O:
        ends.append(np.full(1, n, np.int64))
        bad_e.append(np.array([not scheme.end_ok[rn, 0]]))
    start = np.concatenate(starts) if starts else np.zeros(0, np.int64)
    end = np.concatenate(ends) if ends else np.zeros(0, np.int64)
    ill = np.concatenate(bad_s) if bad_s else np.zeros(0, bool)
    if bad_e:
        ill |= np.concatenate(bad_e)
    if inner:  # a B inside a chunk, or an E/L before its end (E-X B-X under conlleval)
        ill[np.searchsorted(start, np.concatenate(inner), "right") - 1] = True
    group = None
    if groups is not None:
        group = np.concatenate(docs) if docs else np.zeros(0, np.int64)
    return start, end, (np.concatenate(types) if types else np.zeros(0, np.int32)), ill, group



# --- both sides at once ----------------------------------------------------------------

PAIR_TAGS = 16  # vocabularies of at most this many tags can be decoded two sides at once
_SIDE = 6  # the prediction's flags sit this many bits above the reference's in a joint flag
_DIFF = 1 << 12  # the second token's two tags differ
_JOINT: dict[tuple[object, ...], np.ndarray] = {}


def _joint_flags(role_of: np.ndarray, label_of: np.ndarray, scheme: Scheme, conlleval: bool) -> np.ndarray:
    """The decoder's table for two aligned sequences: the flags of :func:`_pair_flags`
    of both sides (the prediction's shifted by ``_SIDE`` bits) and ``_DIFF``, indexed
    by ``(((split * k + ref_a) * k + pred_a) * k + ref_b) * k + pred_b`` for tag ids
    ``a`` (first token) and ``b`` (second) of ``k`` tags."""
    key = (scheme.name, scheme.start_ok.tobytes(), scheme.end_ok.tobytes(), conlleval,
           role_of.tobytes(), label_of.tobytes())
    if key in _JOINT:
        return _JOINT[key]
    joined, split = _pair_flags(scheme, conlleval)
    k = len(role_of)
    pair = (role_of.astype(np.intp)[:, None] * 6 + role_of[None, :]).reshape(-1)
    same = (label_of[:, None] == label_of[None, :]).reshape(-1)
    one = np.concatenate((joined[pair * 2 + same], split[pair])).astype(np.uint16).reshape(2, k, k)
    ref = one[:, :, None, :, None]  # (split, ref_a, -, ref_b, -)
    pred = one[:, None, :, None, :]  # (split, -, pred_a, -, pred_b)
    differ = (np.arange(k)[:, None] != np.arange(k)[None, :]).astype(np.uint16) * _DIFF  # (ref_b, pred_b)
    _JOINT[key] = (ref | ((pred & (_SEG - 1)) << _SIDE) | differ).reshape(-1)
    return _JOINT[key]


@dataclass(frozen=True)
class PairChunks:
    """Both sides of an aligned pair of tag sequences decoded in one pass
    (:func:`decode_pair`), with what exact matching and token accuracy need.

    ``ref_hit`` / ``pred_hit`` flag the chunks that have an exactly equal chunk
    (start, end and label) on the other side; ``differ`` and ``tagged`` count, per
    group, the tokens whose two tags differ and the tokens inside a chunk on one
    side at least (not ``O``).
    """

    reference: Chunks
    prediction: Chunks
    ref_hit: np.ndarray
    pred_hit: np.ndarray
    differ: np.ndarray
    tagged: np.ndarray


def decode_pair(
    ref: np.ndarray,
    pred: np.ndarray,
    role_of: np.ndarray,
    label_of: np.ndarray,
    *,
    scheme: Scheme,
    conlleval: bool,
    segments: np.ndarray,
    groups: np.ndarray,
    labels: list[str] | None = None,
    label_map: np.ndarray | None = None,
    relative: bool = False,
) -> PairChunks:
    """Decode two aligned tag-id sequences of one small vocabulary (uint8 ids, at most
    :data:`PAIR_TAGS` tags) at once, and match their chunks exactly.

    The same tables as :func:`decode`, composed over both sides: one look-up per
    token pair gives both sides' events and whether the tags differ, so one pass
    over the tokens finds every event of either side. Two chunks are equal when
    they start at the same event, have the same label and end at the same event;
    ``label_map`` may rename the label ids (e.g. to supertags): the chunks then carry,
    and are matched on, the mapped ids, while where a chunk ends still follows
    ``label_of`` (``labels`` names the mapped ids). Token accuracy comes
    from the events too (a token differs at a ``_DIFF`` event; the tokens between
    two events are all inside, or all outside, each side's chunks). ``segments``
    (non-empty, starting at 0) and ``groups`` are as in :func:`decode`. With
    ``relative``, chunk offsets count from the start of their group (document)
    rather than from token 0.

    >>> v = Vocabulary()
    >>> r, p = v.encode(["B-PER", "I-PER", "O", "B-LOC"]), v.encode(["B-PER", "I-PER", "B-LOC", "I-LOC"])
    >>> role_of, label_of = v.roles(get_scheme("IOB2"))
    >>> out = decode_pair(r, p, role_of.astype(np.uint8), label_of, scheme=get_scheme("IOB2"),
    ...                   conlleval=True, segments=np.array([0]), groups=np.array([0]))
    >>> out.reference.start.tolist(), out.prediction.end.tolist(), out.ref_hit.tolist(), out.pred_hit.tolist()
    ([0, 3], [2, 4], [True, False], [True, False])
    >>> out.differ.tolist(), out.tagged.tolist()
    ([2], [4])
    """
    n, k = len(ref), len(role_of)
    if not (0 < n == len(pred) and ref.dtype == pred.dtype == np.uint8 and k <= PAIR_TAGS):
        raise ValueError("decode_pair: two non-empty uint8 id sequences of equal length and a small vocabulary")
    args = _PairArgs(role_of, label_of, scheme, conlleval, labels, label_map)
    # pieces of about _PAIR_PIECE tokens, cut at segment starts (no chunk crosses one):
    # each piece's event arrays are small enough to stay in cache and to be recycled
    # by the allocator, where arrays over all the events would be fresh pages each call
    cuts = [0, n]
    if n > _PAIR_PIECE:
        at = np.searchsorted(segments, np.arange(_PAIR_PIECE, n, _PAIR_PIECE))
        cuts = np.unique(np.concatenate(([0], segments.take(at[at < len(segments)]), [n]))).tolist()
    pos_type = np.int32 if n < 2**31 else np.int64
    n_groups = len(groups)
    differ = np.zeros(n_groups, dtype=pos_type)  # token counts: in the offsets' width
    tagged = np.zeros(n_groups, dtype=pos_type)
    # per side, each piece's (start token, first group, shift, chunks, hit flags)
    pieces: tuple[list[Any], list[Any]] = ([], [])
    for a, b in zip(cuts[:-1], cuts[1:]):
        s_lo, s_hi = np.searchsorted(segments, (a, b))
        g_lo = int(np.searchsorted(groups, a, "right")) - 1  # the group holding token a
        g_hi = int(np.searchsorted(groups, b))
        local_groups = np.concatenate(([0], groups[g_lo + 1 : g_hi] - a))
        out = _decode_pair_piece(ref[a:b], pred[a:b], segments[s_lo:s_hi] - a, local_groups, args)
        differ[g_lo:g_hi] += out.differ
        tagged[g_lo:g_hi] += out.tagged
        # what turns the piece's offsets into the output's: + a, or + a - its group's start
        shift = a - groups[g_lo:g_hi] if relative else None
        pieces[0].append((a, g_lo, shift, out.reference, out.ref_hit))
        pieces[1].append((a, g_lo, shift, out.prediction, out.pred_hit))
        del out

    def side(entries: list[Any]) -> tuple[Chunks, np.ndarray]:
        m = sum(len(e[3].start) for e in entries)
        # group, label, start and end as rows of one block (the items' columns when relative)
        group, types, start, end = np.empty((4, m), dtype=pos_type)
        ill, hit = np.empty(m, dtype=bool), np.empty(m, dtype=bool)
        lo = 0
        for i, (a, g, shift, c, h) in enumerate(entries):
            entries[i] = None  # the piece's arrays of this side can be reused once copied
            hi = lo + len(c.start)
            off = a if shift is None else shift.take(c.group)
            np.add(c.start, off, out=start[lo:hi], casting="same_kind")
            np.add(c.end, off, out=end[lo:hi], casting="same_kind")
            np.add(c.group, g, out=group[lo:hi], casting="same_kind")
            types[lo:hi] = c.type
            ill[lo:hi] = c.ill
            hit[lo:hi] = h
            lo = hi
        return Chunks(start, end, types, ill, labels or [], group=group), hit

    (rc, ref_hit), (pc, pred_hit) = side(pieces[0]), side(pieces[1])
    return PairChunks(rc, pc, ref_hit, pred_hit, differ, tagged)


class _PairArgs(NamedTuple):
    """What every piece of :func:`decode_pair` shares."""

    role_of: np.ndarray
    label_of: np.ndarray
    scheme: Scheme
    conlleval: bool
    labels: list[str] | None
    label_map: np.ndarray | None


def _decode_pair_piece(
    ref: np.ndarray, pred: np.ndarray, segments: np.ndarray, groups: np.ndarray, args: _PairArgs
) -> PairChunks:
    """:func:`decode_pair` over one piece of tokens (all of them, or one cut at segment starts)."""
    role_of, label_of, scheme, conlleval, labels, label_map = args
    n, k = len(ref), len(role_of)
    table = _joint_flags(role_of, label_of, scheme, conlleval)
    splits = segments[segments > 0] - 1
    seg_group = _segment_groups(segments, groups, n)  # None: a group per segment
    pos_type = np.int32 if n < 2**31 else np.int64
    if seg_group is not None:
        seg_group = seg_group.astype(pos_type)
    n_groups = len(groups)
    kk = k * k
    shift = kk * kk  # codes of split pairs
    code_type = np.uint16 if 2 * shift <= 1 << 16 else np.uint32
    # small windows: take() converts the codes to a temporary of pointer-sized indices
    w = min(_PAIR_WINDOW, max(n - 1, 1))
    joint = np.empty(w + 1, dtype=code_type)
    code = np.empty(w, dtype=code_type)
    flags = np.empty(w, dtype=np.uint16)
    nonzero = np.empty(w, dtype=bool)
    # events: boundary b is between tokens b - 1 and b; 0 and n are boundaries too
    _, split = _pair_flags(scheme, conlleval)
    first = [int(split[O * 6 + int(role_of[x[0]])]) & ~_END for x in (ref, pred)]
    last = [int(split[int(role_of[x[n - 1]]) * 6 + O]) & (_END | _BAD_END) for x in (ref, pred)]
    at: list[np.ndarray] = [np.zeros(1, pos_type)]
    fl: list[np.ndarray] = [np.array([first[0] | (first[1] << _SIDE) | (_DIFF if ref[0] != pred[0] else 0)], np.uint16)]
    for a in range(0, n - 1, w):
        m = min(a + w, n - 1) - a  # pairs (a + i, a + i + 1) for i < m
        j = joint[: m + 1]
        np.multiply(ref[a : a + m + 1], k, out=j, dtype=code_type)
        j += pred[a : a + m + 1]  # a joint tag id per token
        c, f = code[:m], flags[:m]
        np.multiply(j[:m], kk, out=c)
        c += j[1:]
        lo, hi = np.searchsorted(splits, (a, a + m))
        c[splits[lo:hi] - a] += shift
        table.take(c, out=f, mode="clip")
        e = np.flatnonzero(np.not_equal(f, 0, out=nonzero[:m]))
        fl.append(f.take(e))
        at.append(np.add(e, a + 1, dtype=pos_type, casting="same_kind"))
    at.append(np.full(1, n, pos_type))
    fl.append(np.array([last[0] | (last[1] << _SIDE)], np.uint16))
    del joint, code, flags, nonzero
    bound = np.concatenate(at)
    K = np.concatenate(fl)
    del at, fl
    # one scratch mask, rewritten for each flag asked about
    ne = len(K)
    bits = np.empty(ne, dtype=np.uint16)
    mask = np.empty(ne, dtype=bool)

    def has(bit: int) -> np.ndarray:
        np.bitwise_and(K, bit, out=bits)
        return np.not_equal(bits, 0, out=mask)

    # every event array is written in place into a few buffers: large temporaries are
    # fresh pages, and at millions of tokens their first touch (a page fault each 4 KiB)
    # costs as much as the arithmetic
    group = np.cumsum(has(_SEG), dtype=pos_type)
    group -= 1
    if seg_group is not None:
        group = seg_group.take(group)
    differ = np.bincount(group.compress(has(_DIFF)), minlength=n_groups)
    covered = np.zeros(ne, dtype=bool)  # inside a chunk of either side after each event
    n_end = np.empty(ne, dtype=pos_type)  # chunks ended so far (one buffer for both sides)
    sides = []
    for x, sh in ((ref, 0), (pred, _SIDE)):
        n_start = np.cumsum(has(_START << sh), dtype=pos_type)  # chunks started so far
        start = bound.compress(mask)
        chunk_group = group.compress(mask)
        np.cumsum(has(_END << sh), dtype=pos_type, out=n_end)
        end = bound.compress(mask)
        ill = np.zeros(len(start), dtype=bool)
        for bit, count in ((_BAD_START, n_start), (_BAD_END, n_end), (_INNER, n_start)):
            ev = np.flatnonzero(np.bitwise_and(K, bit << sh, out=bits))
            ill[count.take(ev) - 1] = True
        covered |= np.not_equal(n_start, n_end, out=mask)  # between a chunk's start and its end
        types = label_of.take(x.take(start)).astype(np.int32)
        if label_map is not None:
            types = label_map.take(types)
        sides.append((Chunks(start, end, types, ill, labels or [], group=chunk_group), n_start))
    (rc, r_count), (pc, p_count) = sides
    both = _START | _START << _SIDE
    np.bitwise_and(K, both, out=bits)
    at_both = np.flatnonzero(np.equal(bits, both, out=mask))
    ri, pi = r_count.take(at_both), p_count.take(at_both)
    del r_count, p_count, at_both
    ri -= 1
    pi -= 1
    eq = rc.end.take(ri) == pc.end.take(pi)
    eq &= rc.type.take(ri) == pc.type.take(pi)
    ref_hit = np.zeros(len(rc.start), dtype=bool)
    pred_hit = np.zeros(len(pc.start), dtype=bool)
    ref_hit[ri.compress(eq)] = True
    pred_hit[pi.compress(eq)] = True
    # tagged tokens: the runs between an event and the next one that are inside a chunk,
    # summed per group as differences of their running total, read at each group's last
    # event (groups never decrease along the events; a group without events carries the
    # total before it)
    run = np.subtract(bound[1:], bound[:-1], out=n_end[: ne - 1])
    run *= covered[:-1]
    del covered
    np.cumsum(run, out=run)
    g = group[: ne - 1]
    last = np.flatnonzero(np.not_equal(g[1:], g[:-1], out=mask[: ne - 2]))
    last = np.append(last, ne - 2)
    total = np.zeros(n_groups + 1, dtype=np.int64)
    total[g.take(last) + 1] = run.take(last)
    np.maximum.accumulate(total, out=total)
    tagged = np.diff(total)
    return PairChunks(rc, pc, ref_hit, pred_hit, differ, tagged)


def decode_tags(
    sequences: Sequence[Sequence[str]],
    *,
    scheme: str | Scheme = "IOB2",
    repair: str = "conlleval",
    vocab: Vocabulary | None = None,
) -> Chunks:
    """Decode tag sequences into chunks with flat offsets (sequence after sequence).

    Convenience wrapper over :func:`decode`; the scorer uses the array form.
    """
    vocab = vocab or Vocabulary()
    arrays, _ = flatten(sequences, vocab)
    sch = get_scheme(scheme)
    return decode_arrays(arrays, vocab, scheme=sch, repair=repair)


def decode_arrays(
    arrays: TagArrays,
    vocab: Vocabulary,
    *,
    scheme: Scheme,
    repair: str,
    where: object = None,
    groups: np.ndarray | None = None,
) -> Chunks:
    """Decode :class:`TagArrays` under a repair policy.

    ``where`` is an optional callable ``flat_index -> str`` describing a token
    position (document and offset) for error messages; ``groups`` the sorted start
    offsets of documents, to find the document of each chunk (``Chunks.group``).
    """
    if repair not in REPAIRS:
        raise ConfigError(f"unknown repair policy {repair!r}; valid: {choices(REPAIRS)}")
    role_of, label_of = vocab.roles(scheme)
    small = len(vocab.labels) < np.iinfo(np.int16).max
    start, end, types, ill, group = decode(
        arrays.ids, None, role_of.astype(np.uint8), label_of.astype(np.int16 if small else np.int32),
        scheme=scheme, conlleval=(repair == "conlleval"), segments=arrays.segments, groups=groups,
    )
    if repair == "strict" and ill.any():
        k = int(np.flatnonzero(ill)[0])
        s, e = int(start[k]), int(end[k])
        lo = max(s - 1, 0) if not arrays.first[s] else s
        hi = min(e + 1, len(arrays.ids)) if e < len(arrays.ids) and not arrays.first[e] else e
        tags = [vocab.tags[t] for t in arrays.ids[lo:hi]]
        loc = where(s) if callable(where) else f"token {s}"
        raise InputError(
            f"ill-formed {scheme.name} chunk at {loc}: tags {tags} "
            f"(repair='strict'; use repair='conlleval' or 'discard' to accept it)"
        )
    if repair == "discard" and ill.any():
        keep = ~ill
        return Chunks(
            start[keep], end[keep], types[keep], ill[keep], vocab.labels,
            n_discarded=int(ill.sum()), group=None if group is None else group[keep],
        )
    return Chunks(start, end, types, ill, vocab.labels, group=group)


def encode_spans(
    spans: Iterable[tuple[str, int, int]], length: int, *, scheme: str | Scheme = "IOB2",
    delimiter: str = "-",
) -> list[str]:
    """Write non-overlapping spans ``(label, start, end)`` (half-open) as tags.

    The inverse of decoding: ``decode(encode(spans)) == spans`` for every scheme
    (IO cannot separate two adjacent chunks of one label and raises for them).
    """
    sch = get_scheme(scheme)
    tags = ["O"] * length
    ordered = sorted(spans, key=lambda x: (x[1], x[2]))
    prev_end, prev_label = -1, None
    for k, (lab, s, e) in enumerate(ordered):
        if not (0 <= s < e <= length):
            raise InputError(f"span ({lab!r}, {s}, {e}) is outside [0, {length})")
        if s < prev_end:
            raise InputError(f"span ({lab!r}, {s}, {e}) overlaps the previous span; tags cannot encode it")
        adjacent = s == prev_end and lab == prev_label
        nxt = ordered[k + 1] if k + 1 < len(ordered) else None
        adjacent_next = nxt is not None and nxt[1] == e and nxt[0] == lab
        roles = [I] * (e - s)
        name = sch.name
        if name == "IO":
            if adjacent:
                raise InputError(f"IO cannot encode adjacent {lab!r} spans ending and starting at {s}")
        elif name == "IOB1":
            if adjacent:
                roles[0] = B
        elif name == "IOB2":
            roles[0] = B
        elif name == "IOE1":
            if adjacent_next:
                roles[-1] = E
        elif name == "IOE2":
            roles[-1] = E
        elif name in ("IOBES", "BMES", "BILOU"):
            end_role = L if name == "BILOU" else E
            if e - s == 1:
                roles = [S]
            else:
                roles[0], roles[-1] = B, end_role
        for t, r in enumerate(roles):
            tags[s + t] = sch.tag(r, lab, delimiter)
        prev_end, prev_label = e, lab
    return tags


def detect_scheme(arrays: TagArrays, vocab: Vocabulary) -> str:
    """Guess the scheme of (reference) tags from the prefixes they use.

    S/U/L/E/M prefixes pick IOBES/BILOU/IOE2/BMES; B and I pick IOB1 when some
    chunk starts with ``I-`` after ``O``, another label or a sentence start, else
    IOB2; only ``I-`` picks IOB1; unprefixed labels pick IO.
    """
    # the prefixes of well-formed tags (an invalid one is reported once the scheme is known)
    prefixes = {
        p[0] for p in vocab._parsed
        if p is not None and (p[0] in PREFIX_LETTERS or (p[0] == "" and p[1] != ""))
    }
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
        # IOB1 if some chunk starts with I- (after O, another label or a segment start)
        role_of, label_of = vocab.roles(SCHEMES["IOB1"], check=False)
        role, label = role_of[arrays.ids], label_of[arrays.ids]
        prev_differs = np.ones(len(role), dtype=bool)
        prev_differs[1:] = (label[:-1] != label[1:]) | (role[:-1] == O)
        return "IOB1" if bool(((role == I) & (arrays.first | prev_differs)).any()) else "IOB2"
    return "IOB2"
