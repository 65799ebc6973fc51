"""The report stage of the pipeline across processes: the byte format of a scorer state
(`iescore.scoring.state`).

A state is ``IESCORE\\0``, a format version, a JSON header, the raw bytes of its arrays
(little-endian, dtypes named in the header) and a BLAKE2b checksum of all of it. Only
numeric arrays and strings are stored (never pickled objects); reading checks the magic,
the version, the checksum and every array reference, and fails with an
[`InputError`][iescore.errors.InputError] saying which.
"""

from __future__ import annotations

import hashlib
import json
import struct
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import ConfigError, InputError
from ..version import __version__

STATE_VERSION = 1
_MAGIC = b"IESCORE\x00"
_HEAD = struct.Struct("<8sIQ")  # magic, format version, header length
_CHECK = 32  # bytes of the BLAKE2b checksum at the end
_KINDS = "biuf"  # array dtypes a state may hold (booleans, integers, floats)


# --- the byte format -------------------------------------------------------------------

class Writer:
    """Arrays appended to one payload; each is described by a small JSON reference."""

    def __init__(self) -> None:
        self.blobs: list[bytes] = []
        self.size = 0

    def array(self, a: np.ndarray | None) -> dict[str, Any] | None:
        if a is None:
            return None
        a = np.asarray(a)
        if a.dtype.kind not in _KINDS:
            raise ConfigError(f"a scorer state holds numeric arrays only, got dtype {a.dtype}")
        a = np.ascontiguousarray(a, dtype=a.dtype.newbyteorder("<"))
        ref = {"dtype": a.dtype.str, "shape": list(a.shape), "at": self.size, "n": a.nbytes}
        self.blobs.append(a.tobytes())
        self.size += a.nbytes
        return ref

    def strings(self, xs: Sequence[str]) -> dict[str, Any]:
        data = [x.encode("utf-8", "surrogatepass") for x in xs]
        return {"lengths": self.array(np.fromiter(map(len, data), dtype=np.int64, count=len(data))),
                "utf8": self.array(np.frombuffer(b"".join(data), dtype=np.uint8))}


class Reader:
    """The arrays of a payload, checked against their references."""

    def __init__(self, payload: memoryview) -> None:
        self.payload = payload

    def array(self, ref: dict[str, Any] | None) -> np.ndarray | None:
        if ref is None:
            return None
        try:
            dtype = np.dtype(ref["dtype"])
            shape = tuple(int(x) for x in ref["shape"])
            at, n = int(ref["at"]), int(ref["n"])
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"corrupt scorer state: bad array reference {ref!r}") from exc
        if dtype.kind not in _KINDS or at < 0 or at + n > len(self.payload) or \
                n != dtype.itemsize * int(np.prod(shape, dtype=np.int64)):
            raise InputError(f"corrupt scorer state: array reference {ref!r} does not fit the payload")
        a = np.frombuffer(self.payload[at : at + n], dtype=dtype).reshape(shape)
        return a.astype(dtype.newbyteorder("="))  # a writable copy in native byte order

    def strings(self, ref: dict[str, Any]) -> tuple[str, ...]:
        lengths, raw = self.array(ref["lengths"]), self.array(ref["utf8"])
        assert lengths is not None and raw is not None
        if int(lengths.sum()) != len(raw) or (lengths < 0).any():
            raise InputError("corrupt scorer state: string lengths do not fit their text")
        data = raw.tobytes()
        ends = np.cumsum(lengths).tolist()
        return tuple(data[a:b].decode("utf-8", "surrogatepass") for a, b in zip([0, *ends[:-1]], ends))


def pack(kind: str, header: dict[str, Any], w: Writer) -> bytes:
    head = json.dumps({"kind": kind, "iescore": __version__, **header}, separators=(",", ":")).encode()
    body = b"".join([_HEAD.pack(_MAGIC, STATE_VERSION, len(head)), head, *w.blobs])
    return body + hashlib.blake2b(body, digest_size=_CHECK).digest()


def unpack(data: bytes | bytearray | memoryview) -> tuple[dict[str, Any], Reader]:
    view = memoryview(data).cast("B")
    if len(view) < _HEAD.size + _CHECK or bytes(view[:8]) != _MAGIC:
        raise InputError(f"not an iescore scorer state ({len(view)} bytes not starting with {_MAGIC!r})")
    magic, version, n_head = _HEAD.unpack(view[: _HEAD.size])
    if version != STATE_VERSION:
        raise InputError(f"scorer state of format version {version}; this iescore reads version {STATE_VERSION}")
    if hashlib.blake2b(view[:-_CHECK], digest_size=_CHECK).digest() != bytes(view[-_CHECK:]):
        raise InputError(f"corrupt scorer state: the checksum of its {len(view)} bytes does not match "
                         "(truncated or altered in transit)")
    try:
        header = json.loads(bytes(view[_HEAD.size : _HEAD.size + n_head]))
    except ValueError as exc:
        raise InputError("corrupt scorer state: unreadable header") from exc
    if header.get("iescore") != __version__:
        raise InputError(f"scorer state written by iescore {header.get('iescore')!r}; this is iescore "
                         f"{__version__!r}: merge states of one version")
    return header, Reader(view[_HEAD.size + n_head : -_CHECK])
