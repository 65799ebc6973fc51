"""Tag schemes and the one tag decoder (SPEC §7).

A tag such as ``B-PER`` is split at the first delimiter into a *prefix* (``B``)
and a *label* (``PER``); ``O`` is outside. Each scheme is a declarative table:
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

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import chain

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


class _Ids(dict):  # type: ignore[type-arg]
    """tag -> id; an unseen tag gets the next id (and is recorded in ``new``)."""

    new: list[str] | None = None

    def __missing__(self, tag: str) -> int:
        if not isinstance(tag, str):
            raise InputError(f"tags must be strings, got {tag!r} ({type(tag).__name__})")
        i = self[tag] = len(self)
        if self.new is not None:
            self.new.append(tag)
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

    def encode(self, tags: Iterable[str], count: int = -1) -> np.ndarray:
        """Map tag strings to int32 ids (new tags get new ids).

        The lookup is ``map(dict.__getitem__)`` over a dict whose ``__missing__``
        assigns new ids, so known tags cost one C-level dict lookup each.
        """
        new: list[str] = []
        ids = self.tag_ids
        if not isinstance(ids, _Ids):
            ids = self.tag_ids = _Ids(ids)
        ids.new = new
        try:
            out = np.fromiter(map(ids.__getitem__, tags), dtype=np.int32, count=count)
        finally:
            ids.new = None
        for tag in new:
            self.tags.append(tag)
            self._parsed.append(self._split(tag))
        return out

    def _split(self, tag: str) -> tuple[str, str] | None:
        if tag == self.outside:
            return None
        if tag == "":
            return ("", "")
        prefix, sep, label = tag.partition(self.delimiter)
        if not sep:
            return ("", tag)
        return (prefix, label)

    def roles(self, scheme: Scheme) -> tuple[np.ndarray, np.ndarray]:
        """Per tag id: its role code (int8) and label id (int32) under ``scheme``.

        Raises InputError for a tag whose prefix the scheme does not use.
        """
        n = len(self.tags)
        role = np.zeros(n, dtype=np.int8)
        lab = np.full(n, -1, dtype=np.int32)
        for i, parsed in enumerate(self._parsed):
            if parsed is None:
                continue
            prefix, label = parsed
            if prefix == "" and scheme.bare and label:
                role[i], lab[i] = I, self.label_id(label)
                continue
            r = scheme.letters.get(prefix)
            if r is None or not label:
                valid = [f"{p}{self.delimiter}<label>" for p in scheme.letters] + [self.outside]
                if scheme.bare:
                    valid.append("<label>")
                raise InputError(
                    f"tag {self.tags[i]!r} is not a tag of scheme {scheme.name}; "
                    f"valid forms: {choices(valid)}"
                )
            role[i], lab[i] = r, self.label_id(label)
        return role, lab


@dataclass(frozen=True)
class TagArrays:
    """A flat, integer-coded tag sequence over many segments (sentences).

    ``ids`` are tag ids of a :class:`Vocabulary`; ``first`` marks the first token
    of each segment (chunks never cross a segment start).
    """

    ids: np.ndarray
    first: np.ndarray


def flatten(sequences: Sequence[Sequence[str]], vocab: Vocabulary) -> tuple[TagArrays, np.ndarray]:
    """Flatten a list of tag sequences into :class:`TagArrays` and the sequence lengths."""
    lengths = np.fromiter(map(len, sequences), dtype=np.int64, count=len(sequences))
    total = int(lengths.sum())
    ids = vocab.encode(chain.from_iterable(sequences), count=total)
    first = np.zeros(total, dtype=bool)
    offsets = np.concatenate(([0], np.cumsum(lengths)[:-1])) if len(lengths) else lengths
    first[offsets[lengths > 0]] = True
    return TagArrays(ids, first), lengths


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

    @property
    def n_repaired(self) -> int:
        """Number of kept chunks that were ill-formed (repaired by conlleval's rules)."""
        return int(self.ill.sum())


def decode(
    role: np.ndarray,
    label: np.ndarray,
    first: np.ndarray,
    *,
    scheme: Scheme,
    conlleval: bool,
    roles: Iterable[int] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Decode role/label arrays into chunks. Returns ``(start, end, label, ill)``.

    ``roles`` may list the roles that can occur (e.g. from the tag vocabulary), which
    saves a pass over the data.

    Vectorised: a chunk boundary before token ``i`` depends only on tokens
    ``i-1`` and ``i``, so boundaries, starts and ends are elementwise array
    operations. ``first`` forces a boundary (sentence/document starts).
    """
    n = len(role)
    if n == 0:
        z = np.zeros(0, dtype=np.int64)
        return z, z, z.astype(np.int32), np.zeros(0, dtype=bool)
    # roles that occur: terms of the boundary rule for absent roles are skipped
    present = set(np.unique(role).tolist()) if roles is None else set(roles)
    inside = role != O
    prev_role = role[:-1]
    cur_role = role[1:]
    same = (label[:-1] == label[1:]) & inside[:-1] & inside[1:]
    # a boundary between i-1 and i (index i-1 of this array)
    bnd = ~same
    if S in present:
        bnd |= (prev_role == S) | (cur_role == S)
    if L in present:
        bnd |= prev_role == L
    if E in present:
        if conlleval:
            bnd |= ((cur_role == B) & (prev_role != E)) | ((prev_role == E) & (cur_role != B))
        else:
            bnd |= (cur_role == B) | (prev_role == E)
    elif B in present:
        bnd |= cur_role == B
    bnd |= first[1:]
    begin = np.empty(n, dtype=bool)
    begin[0] = True
    begin[1:] = bnd
    finish = np.empty(n, dtype=bool)
    finish[-1] = True
    finish[:-1] = bnd
    starts = np.flatnonzero(inside & begin)
    ends = np.flatnonzero(inside & finish) + 1
    types = label[starts]
    # legality under the scheme, looked up at chunk starts and ends only
    prev = np.maximum(starts - 1, 0)
    cont_prev = (starts > 0) & same[np.minimum(prev, n - 2)] & ~first[starts] if n > 1 else np.zeros(len(starts), bool)
    last = ends - 1
    nxt = np.minimum(last, n - 2)
    cont_next = (ends < n) & same[nxt] & ~first[np.minimum(ends, n - 1)] if n > 1 else np.zeros(len(ends), bool)
    ill = ~scheme.start_ok[role[starts], cont_prev.astype(np.intp)]
    ill |= ~scheme.end_ok[role[last], cont_next.astype(np.intp)]
    # inner tokens: B only at a start, E/L only at an end (E-X B-X under conlleval)
    if E in present or L in present:
        bad_inner = inside & ((~begin & (role == B)) | (~finish & ((role == E) | (role == L))))
        if bad_inner.any():
            chunk_of = np.cumsum(inside & begin) - 1
            ill[np.unique(chunk_of[bad_inner])] = True
    return starts, ends, types, ill


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
) -> Chunks:
    """Decode :class:`TagArrays` under a repair policy.

    ``where`` is an optional callable ``flat_index -> str`` describing a token
    position (document and offset) for error messages.
    """
    if repair not in REPAIRS:
        raise ConfigError(f"unknown repair policy {repair!r}; valid: {choices(REPAIRS)}")
    role_of, label_of = vocab.roles(scheme)
    role = role_of[arrays.ids] if len(role_of) else np.zeros(0, dtype=np.int8)
    label = label_of[arrays.ids] if len(label_of) else np.zeros(0, dtype=np.int32)
    start, end, types, ill = decode(
        role, label, arrays.first, scheme=scheme, conlleval=(repair == "conlleval"),
        roles=role_of.tolist() + [O],
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
            n_discarded=int(ill.sum()),
        )
    return Chunks(start, end, types, ill, vocab.labels)


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
    prefixes = {p[0] for p in vocab._parsed if p is not None}
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
        role_of, label_of = vocab.roles(SCHEMES["IOB1"])
        role, label = role_of[arrays.ids], label_of[arrays.ids]
        prev_differs = np.ones(len(role), dtype=bool)
        prev_differs[1:] = (label[:-1] != label[1:]) | (role[:-1] == O)
        return "IOB1" if bool(((role == I) & (arrays.first | prev_differs)).any()) else "IOB2"
    return "IOB2"
