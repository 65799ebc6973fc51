"""Beside the pipeline (inputs and report), document ids: numbered ranges that never
become strings, duplicate checks, and the order-independent digest of a report's reference data.

Tag input without explicit ids numbers its documents ``"0"``, ``"1"``, ... (one
per sentence for CoNLL-style lists, so hundreds of thousands of them). A
`NumberedIds` is such a run of ids as a read-only sequence of strings
that stores only its bounds; `IdRegistry` checks a stream of batches for
duplicate ids without materialising them. A report summed from counts
(`iescore.scoring.totals`) holds `UnkeptIds`: their number, not the ids.

>>> ids = NumberedIds(3, 6)
>>> list(ids), ids[-1], "4" in ids, "04" in ids, ids.index("5")
(['3', '4', '5'], '5', True, False, 2)
>>> ids == ("3", "4", "5")
True
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import chain
from typing import Any, overload

import numpy as np

from .errors import ConfigError, InputError

__all__ = ["NumberedIds", "UnkeptIds", "IdRegistry", "check_unique", "concat_ids", "reference_digest", "string_hash", "string_hashes", "decimal_values", "mix64"]


def _as_number(x: object) -> int | None:
    """The integer whose ``str()`` is ``x`` (canonical decimal), else None."""
    if isinstance(x, str) and x.isascii() and x.isdigit() and (x == "0" or x[0] != "0"):
        return int(x)
    return None


class NumberedIds(Sequence[str]):
    """The ids ``str(start)`` ... ``str(stop - 1)``, stored as two integers."""

    __slots__ = ("start", "stop")

    def __init__(self, start: int, stop: int) -> None:
        if not 0 <= start <= stop:
            raise ValueError(f"NumberedIds needs 0 <= start <= stop, got {start}, {stop}")
        self.start = int(start)
        self.stop = int(stop)

    def __len__(self) -> int:
        return self.stop - self.start

    @overload
    def __getitem__(self, i: int) -> str: ...

    @overload
    def __getitem__(self, i: slice) -> Sequence[str]: ...

    def __getitem__(self, i: int | slice) -> Any:
        if isinstance(i, slice):
            r = range(self.start, self.stop)[i]
            if r.step == 1:
                return NumberedIds(r.start, max(r.start, r.stop))
            return tuple(map(str, r))
        n = len(self)
        k = i + n if i < 0 else i
        if not 0 <= k < n:
            raise IndexError(f"document index {i} out of range for {n} documents")
        return str(self.start + k)

    def __iter__(self) -> Iterator[str]:
        return map(str, range(self.start, self.stop))

    def __contains__(self, x: object) -> bool:
        k = _as_number(x)
        return k is not None and self.start <= k < self.stop

    def index(self, x: Any, start: int = 0, stop: int | None = None) -> int:
        k = _as_number(x)
        if k is not None and self.start <= k < self.stop:
            i = k - self.start
            if start <= i and (stop is None or i < stop):
                return i
        raise ValueError(f"{x!r} is not a document id here (ids {self.start}..{self.stop - 1})")

    def count(self, x: Any) -> int:
        return 1 if x in self else 0

    def __eq__(self, other: object) -> bool:
        if isinstance(other, NumberedIds):
            return (self.start, self.stop) == (other.start, other.stop) or (len(self) == 0 and len(other) == 0)
        if isinstance(other, (tuple, list)):
            return len(other) == len(self) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self))  # equal to the equal tuple's hash

    def __repr__(self) -> str:
        return f"NumberedIds({self.start}, {self.stop})"


UNKEPT = ("the {what} were not kept: this report was summed from counts and kept totals only "
          "(Scorer(totals_only=True), as `iescore score` scores a file, or a state kept with keep='counts'); "
          "keep the documents to read them (a Scorer without totals_only, keep='items')")


class UnkeptIds(Sequence[str]):
    """The ids of ``n`` documents whose ids a report summed from counts did not keep: it
    has a length, and reading an id raises [`ConfigError`][iescore.errors.ConfigError]."""

    def __init__(self, n: int) -> None:
        self.n = int(n)

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: Any) -> Any:
        raise ConfigError(UNKEPT.format(what="document ids"))

    def __iter__(self) -> Iterator[str]:
        raise ConfigError(UNKEPT.format(what="document ids"))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, UnkeptIds) and other.n == self.n

    def __hash__(self) -> int:
        return hash(("UnkeptIds", self.n))

    def __repr__(self) -> str:
        return f"UnkeptIds({self.n})"


def check_unique(ids: Sequence[str]) -> None:
    """Raise [`InputError`][iescore.errors.InputError] naming the first repeated id."""
    if len(set(ids)) != len(ids):
        seen: set[str] = set()
        for d in ids:
            if d in seen:
                raise InputError(f"duplicate document id {d!r}")
            seen.add(d)


def concat_ids(parts: Sequence[Sequence[str]]) -> Sequence[str]:
    """The ids of several batches in order: one `NumberedIds` when they are
    consecutive numbered runs, else a tuple."""
    if parts and all(isinstance(p, NumberedIds) for p in parts):
        runs: list[NumberedIds] = [p for p in parts if len(p)]  # type: ignore[misc]
        if not runs:
            return NumberedIds(0, 0)
        if all(a.stop == b.start for a, b in zip(runs, runs[1:])):
            return NumberedIds(runs[0].start, runs[-1].stop)
    if len(parts) == 1 and isinstance(parts[0], tuple):
        return parts[0]
    return tuple(chain.from_iterable(parts))


class IdRegistry:
    """The document ids of a stream of batches; `add` rejects a repeated id.

    Numbered runs are kept as ``(start, stop)`` bounds (consecutive runs merge), so
    a stream of auto-numbered batches costs nothing per document.

    >>> reg = IdRegistry()
    >>> reg.add(NumberedIds(0, 3)); reg.add(("a", "b")); len(reg)
    5
    >>> reg.add(("2",))
    Traceback (most recent call last):
    ...
    iescore.errors.InputError: duplicate document id '2' (already added to this scorer)
    """

    def __init__(self) -> None:
        self._explicit: set[str] = set()
        self._runs: list[list[int]] = []
        self._n = 0

    def __len__(self) -> int:
        return self._n

    def _in_runs(self, k: int | None) -> bool:
        return k is not None and any(a <= k < b for a, b in self._runs)

    def check(self, ids: Sequence[str]) -> None:
        """Raise [`InputError`][iescore.errors.InputError] naming the first id of ``ids``
        already present (or repeated within ``ids``)."""
        if isinstance(ids, NumberedIds):
            lo, hi = ids.start, ids.stop
            for a, b in self._runs:
                if a < hi and lo < b:
                    self._duplicate(str(max(a, lo)))
            if self._explicit:
                if len(self._explicit) <= len(ids):
                    hits = sorted(k for k in map(_as_number, self._explicit) if k is not None and lo <= k < hi)
                    if hits:
                        self._duplicate(str(hits[0]))
                else:
                    for x in ids:
                        if x in self._explicit:
                            self._duplicate(x)
            return
        check_unique(ids)
        dup = self._explicit.intersection(ids)
        if dup:
            self._duplicate(sorted(dup)[0])
        if self._runs:
            for x in ids:
                if self._in_runs(_as_number(x)):
                    self._duplicate(x)

    @staticmethod
    def _duplicate(x: str) -> None:
        exc = InputError(f"duplicate document id {x!r} (already added to this scorer)")
        exc.doc_id = x
        raise exc

    def add(self, ids: Sequence[str]) -> None:
        """Check ``ids`` (see `check`) and record them."""
        self.check(ids)
        if isinstance(ids, NumberedIds):
            if len(ids):
                if self._runs and self._runs[-1][1] == ids.start:
                    self._runs[-1][1] = ids.stop
                else:
                    self._runs.append([ids.start, ids.stop])
        else:
            self._explicit.update(ids)
        self._n += len(ids)


# --- digests ---------------------------------------------------------------------------

_U64 = np.uint64


def mix64(x: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser applied to each element (uint64, wrapping): a fixed,
    unsalted 64-bit mixing of integers, vectorised.

    >>> int(mix64(np.array([0], dtype=np.uint64))[0])
    16294208416658607535
    """
    z: np.ndarray = x.astype(_U64) + _U64(0x9E3779B97F4A7C15)
    z ^= z >> _U64(30)
    z *= _U64(0xBF58476D1CE4E5B9)
    z ^= z >> _U64(27)
    z *= _U64(0x94D049BB133111EB)
    z ^= z >> _U64(31)
    return z


def _encode(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The UTF-8 bytes of every text, concatenated: (bytes, starts, lengths). ASCII texts
    (ids, labels: the common case) are encoded in one piece, their lengths in characters."""
    joined = "".join(texts)
    if joined.isascii():
        lens = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
        buf = np.frombuffer(joined.encode("ascii"), dtype=np.uint8)
    else:
        enc = [t.encode("utf-8", "surrogatepass") for t in texts]
        lens = np.fromiter(map(len, enc), dtype=np.int64, count=len(enc))
        buf = np.frombuffer(b"".join(enc), dtype=np.uint8)
    return buf, np.cumsum(lens) - lens, lens


def string_hashes(texts: Sequence[str], salt: bytes = b"") -> np.ndarray:
    """A 64-bit hash of every string, vectorised (the same in every process, unlike ``hash``).

    Each byte of ``salt + text`` is mixed (`mix64`) with its position; a string's
    hash mixes the sum of its bytes' values with its length. One numpy pass over all the
    bytes, however many strings (a file's hundreds of thousands of document ids).

    >>> h = string_hashes(["ab", "ba", "", "ab"])
    >>> len(set(h[:3].tolist())), bool(h[0] == h[3]), int(h[0]) == string_hash("ab")
    (3, True, True)
    """
    buf, starts, lens = _encode(texts)
    # the salt's bytes, the same at the start of every string: one sum, added to each
    salt_bytes = np.frombuffer(salt, dtype=np.uint8).astype(_U64)
    head = mix64((np.arange(len(salt), dtype=_U64) << _U64(8)) | salt_bytes)
    after = _U64(len(salt))
    v = mix64(((_positions(starts, lens).astype(_U64) + after) << _U64(8)) | buf.astype(_U64))
    sums = _segment_sums(v, starts, lens) + head.sum(dtype=_U64)  # wrapping: the sums modulo 2**64
    return mix64(sums ^ mix64(lens.astype(_U64) + after + _U64(0x5BD1E995)))


def string_hash(text: str, salt: bytes = b"") -> int:
    """The 64-bit hash of one string (`string_hashes`)."""
    return int(string_hashes([text], salt)[0])


def decimal_values(texts: Sequence[str]) -> np.ndarray:
    """For every string, the integer whose ``str()`` it is (canonical decimal: no sign, no
    leading zero), or -1 (also for values of 2**62 or more); vectorised.

    >>> decimal_values(["0", "17", "017", "", "x1", "4611686018427387903", "4611686018427387904"]).tolist()
    [0, 17, -1, -1, -1, 4611686018427387903, -1]
    """
    buf, starts, lens = _encode(texts)
    out = np.full(len(lens), -1, dtype=np.int64)
    short = (lens > 0) & (lens <= 18)  # below 10**18 < 2**62: exact in 64 bits
    if short.any():
        nondigit = _segment_sums(((buf < 48) | (buf > 57)).astype(np.int64), starts, lens)
        lead0 = np.zeros(len(lens), dtype=bool)
        lead0[short] = (buf[starts[short]] == 48) & (lens[short] > 1)
        ok = np.flatnonzero(short & (nondigit == 0) & ~lead0)
        place = np.minimum(np.repeat(lens, lens) - 1 - _positions(starts, lens), 18)
        # segment sums by differences of a wrapping cumulative sum: exact below 2**63
        val = _segment_sums((buf.astype(np.int64) - 48) * 10 ** place, starts, lens)
        out[ok] = val[ok]
    for k in np.flatnonzero(lens > 18).tolist():  # rare: long digit strings, exactly
        n = _as_number(texts[k])
        if n is not None and n < 2**62:
            out[k] = n
    return out


def _positions(starts: np.ndarray, lens: np.ndarray) -> np.ndarray:
    """Each byte's position within its string (the strings' bytes concatenated)."""
    out: np.ndarray = np.arange(int(lens.sum()), dtype=np.int64) - np.repeat(starts, lens)
    return out


def _segment_sums(v: np.ndarray, starts: np.ndarray, lens: np.ndarray) -> np.ndarray:
    """The sum of ``v`` over each segment ``[start, start + len)`` (0 for an empty one), by
    differences of a running sum: exact modulo 2**64 for 64-bit integers, which wrap."""
    c: np.ndarray = np.zeros(len(v) + 1, dtype=v.dtype)
    np.cumsum(v, out=c[1:])
    out: np.ndarray = c[starts + lens] - c[starts]
    return out


def _id_hashes(ids: Sequence[str]) -> np.ndarray:
    """A 64-bit hash per document id; 0 for canonical decimal ids ("0", "1", ...: the
    numbers given to documents without ids, positions rather than names)."""
    if isinstance(ids, NumberedIds):
        return np.zeros(len(ids), dtype=_U64)
    h = string_hashes(ids, b"id:")
    h[decimal_values(ids) >= 0] = 0
    return h


def reference_digest(report: Any) -> int:
    """An order-independent 64-bit digest of a report's reference data (De Sitter et
    al. ask that a score name the data it was computed on).

    Each document hashes to one value from its id, its number of tokens and its
    reference items (label name and token offsets; for OBD fillers, the filler
    text); the digest is the sum of these values modulo 2**64. So the same
    documents scored in one call, streamed in batches or merged from shards, in
    any order, give the same digest. Numbered ids ("0", "1", ...) are left out:
    they say where a document came in the input, not what it is. Token strings
    are not part of it (the report does not keep them); labels are the scored
    ones (after supertags).

    >>> from iescore import score, Document, Span
    >>> a = Document("a", ("x", "y"), (Span("P", 0, 1),)); b = Document("b", ("z",))
    >>> d1 = reference_digest(score(reference=[a, b], prediction=[[], []]))
    >>> d1 == reference_digest(score(reference=[b, a], prediction=[[], []]))
    True
    >>> d1 == reference_digest(score(reference=[a], prediction=[[]]))
    False
    """
    totals = getattr(report, "totals", None)
    if totals is not None:  # a report summed from counts carries its documents' digest (scoring.totals)
        return int(totals.digest)
    docs = _id_hashes(report.doc_ids)
    n_tokens = report.table.doc_tokens
    if n_tokens is None and report.token_counts is not None:
        n_tokens = report.token_counts[:, 0]
    if n_tokens is None:  # templates: no tokens
        docs ^= _U64(0xFFFFFFFFFFFFFFFF)
    else:
        docs ^= mix64(np.asarray(n_tokens).astype(_U64))
    items = report.reference
    if len(items):
        labels = string_hashes(report.labels, b"label:")
        start = np.asarray(items.start).astype(np.int64)
        end = np.asarray(items.end).astype(np.int64)
        h = mix64(start.astype(_U64) * _U64(0x100000001B3) + end.astype(_U64))
        if items.text is not None and (start < 0).any():  # OBD fillers: the text is the item
            fill = np.flatnonzero(start < 0)
            h[fill] ^= string_hashes([items.text[k] for k in fill.tolist()], b"text:")
        h = mix64(labels[np.asarray(items.label).astype(np.int64)] + h)
        np.add.at(docs, np.asarray(items.doc).astype(np.int64), h)  # a document's items, summed
    return int(mix64(docs).sum(dtype=_U64)) if len(docs) else 0
