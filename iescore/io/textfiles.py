"""Before the pipeline (readers), text files as every reader opens them: lines ended by
LF, CRLF or CR, a leading byte-order mark skipped, ``-`` for standard input, and the
errors of a file that the encoding given cannot decode (the line, the byte and the
encoding to pass; a byte-order mark that names another encoding); `_Lines` reads a file
a block of whole lines at a time (the streamed CoNLL reader). The CoNLL reader
([`iescore.io.conll`][iescore.io.conll], which re-exports these names) and the
character-offset readers use them."""

from __future__ import annotations

import codecs
import re
import sys
from collections.abc import Callable
from typing import IO

from ..errors import ConfigError, InputError, choices

__all__ = ["read_lines", "read_text", "check_encoding", "encoding_problem", "file_encoding_problem", "decode_error"]

STDIN = "-"
_LINE_END = re.compile(r"\r\n|\r|\n")


def read_lines(path: str, encoding: str = "utf-8") -> list[str]:
    """The lines of a text file (ended by LF, CRLF or CR), without a leading byte-order
    mark; an undecodable byte is an error naming its line and byte and the encoding to
    pass (the one a byte-order mark names, see [`encoding_problem`][iescore.io.textfiles.encoding_problem]). ``-`` reads
    standard input.

    >>> import tempfile, os, pathlib
    >>> path = os.path.join(tempfile.mkdtemp(), "mac.txt")
    >>> _ = pathlib.Path(path).write_bytes(b"\\xef\\xbb\\xbfa O O\\rb O O\\r\\n\\nc O O")
    >>> read_lines(path)
    ['a O O', 'b O O', '', 'c O O']
    """
    text = read_text(path, encoding)
    if text.startswith("\ufeff"):
        text = text[1:]  # a byte-order mark, not data
    lines = _LINE_END.split(text)
    if lines and lines[-1] == "":
        lines.pop()
    return lines



def read_text(path: str, encoding: str = "utf-8") -> str:
    """A text file's whole text as written (line ends and a byte-order mark kept), read
    with the checks of [`read_lines`][iescore.io.textfiles.read_lines]: a byte-order mark
    of another encoding, an undecodable byte (named by line and byte). ``-`` reads
    standard input."""
    check_encoding(encoding)
    try:
        if path == STDIN:
            if sys.stdin is None:
                raise InputError("no standard input to read (FILE '-')")
            data = sys.stdin.buffer.read()
        else:
            with open(path, "rb") as fh:
                data = fh.read()
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from exc
    shown = "<stdin>" if path == STDIN else path
    problem = encoding_problem(data[:_HEAD], encoding)
    if problem is not None:
        raise InputError(f"{shown}:1: {problem}")
    try:
        return data.decode(encoding)
    except UnicodeError as exc:  # UnicodeDecodeError, or a decoder's own (UTF-16 without its mark)
        raise decode_error(shown, data, encoding, exc) from None

_HEAD = 4096  # bytes looked at for a byte-order mark or UTF-16/32 without one
# byte-order marks, longest first (UTF-32 LE begins with UTF-16 LE's): the encoding to pass,
# and the codecs that read such a file
_BOMS = (
    (codecs.BOM_UTF32_LE, "UTF-32 (little-endian)", "utf-32", ("utf-32", "utf-32-le")),
    (codecs.BOM_UTF32_BE, "UTF-32 (big-endian)", "utf-32", ("utf-32", "utf-32-be")),
    (codecs.BOM_UTF8, "UTF-8", "utf-8", None),  # read as today by 8-bit codecs: the mark is skipped by utf-8 only
    (codecs.BOM_UTF16_LE, "UTF-16 (little-endian)", "utf-16", ("utf-16", "utf-16-le")),
    (codecs.BOM_UTF16_BE, "UTF-16 (big-endian)", "utf-16", ("utf-16", "utf-16-be")),
)


def _pass(encoding: str) -> str:
    return f"pass encoding={encoding!r} (CLI --encoding {encoding})"


def check_encoding(encoding: str) -> None:
    """A ConfigError unless ``encoding`` names a text encoding Python decodes bytes with.

    >>> check_encoding("rot13")
    Traceback (most recent call last):
    iescore.errors.ConfigError: unknown encoding 'rot13' (not a text encoding); e.g. 'utf-8', 'utf-16', 'latin-1' or 'cp1252'
    """
    try:
        info = codecs.lookup(encoding)
        why = "" if getattr(info, "_is_text_encoding", True) else " (not a text encoding)"  # rot13, base64, zlib
    except LookupError:
        why = ""
        info = None
    if info is None or why:
        raise ConfigError(f"unknown encoding {encoding!r}{why}; e.g. {choices(('utf-8', 'utf-16', 'latin-1', 'cp1252'))}")


def _no_bom_utf16(head: bytes) -> str | None:
    """``utf-16-le``/``utf-16-be``/``utf-32-le``/``utf-32-be`` when the bytes look like that
    encoding without a byte-order mark (most code points below 256: zero bytes in place), else None."""
    n = len(head) - len(head) % 4
    if n < 8 or head.count(0) < n // 4:
        return None
    for enc, step, at in (("utf-32-le", 4, (1, 2, 3)), ("utf-32-be", 4, (0, 1, 2)),
                          ("utf-16-le", 2, (1,)), ("utf-16-be", 2, (0,))):
        zeros = sum(head[k:n:step].count(0) for k in at)
        if zeros >= 0.9 * len(at) * n / step:
            return enc
    return None


def encoding_problem(head: bytes, encoding: str) -> str | None:
    """What is wrong with reading a file that begins with ``head`` as ``encoding``, and
    what to pass instead; None when nothing is seen. A UTF-16 or UTF-32 byte-order mark
    read with another codec, a UTF-8 one read as UTF-16/32, or UTF-16/32 text without a
    mark read with an 8-bit codec or UTF-8 (every other byte zero).

    >>> print(encoding_problem(b"\\xff\\xfea\\x00", "utf-8"))
    the file starts with a UTF-16 (little-endian) byte-order mark (bytes ff fe) but is read as utf-8; pass encoding='utf-16' (CLI --encoding utf-16)
    >>> encoding_problem(b"\\xff\\xfea\\x00", "UTF16"), encoding_problem(b"a O O", "utf-8")
    (None, None)
    """
    try:
        name = codecs.lookup(encoding).name
    except LookupError:
        return None
    for bom, what, to_pass, readers in _BOMS:
        if head.startswith(bom):
            if readers is None:
                if not name.startswith(("utf-16", "utf-32")):
                    return None
            elif name in readers:
                return None
            return (f"the file starts with a {what} byte-order mark (bytes {bom.hex(' ')}) but is read as "
                    f"{encoding}; {_pass(to_pass)}")
    found = _no_bom_utf16(head)
    if name in ("utf-16", "utf-32"):  # the byte order comes from the mark
        if not head:
            return None
        if found is not None and found.startswith(name):
            advice = f"it looks {'little' if found.endswith('le') else 'big'}-endian: {_pass(found)}"
        elif _utf8(head):
            advice = f"it reads as UTF-8: {_pass('utf-8')}"
        else:
            advice = f"name the byte order: {_pass(name + '-le')} or {name}-be"
        return f"the file has no byte-order mark, which {encoding} reads the byte order from; {advice}"
    if name.startswith(("utf-16", "utf-32")):
        return None
    if found is not None:
        order = "little" if found.endswith("le") else "big"
        return (f"the file looks like {found[:6].upper()} ({order}-endian) without a byte-order mark (zero bytes "
                f"between the characters), not {encoding}; {_pass(found)}")
    return None


def _utf8(head: bytes) -> bool:
    """Do the bytes read as UTF-8 (a character cut at the end of the head aside)?"""
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start >= len(head) - 3 and exc.reason == "unexpected end of data"
    return True


def file_encoding_problem(path: str, encoding: str) -> str | None:
    """[`encoding_problem`][iescore.io.textfiles.encoding_problem] of the file ``path`` (its first bytes)."""
    with open(path, "rb") as fh:
        return encoding_problem(fh.read(_HEAD), encoding)


def decode_error(path: str, data: bytes, encoding: str, exc: UnicodeError) -> InputError:
    """The InputError of ``data`` (the file ``path``) that ``encoding`` cannot decode: the
    line and byte at fault, and the encoding to pass."""
    start = getattr(exc, "start", None)
    if start is None:  # the decoder's own error (UTF-16 or UTF-32 with no byte-order mark)
        found = _no_bom_utf16(data[:_HEAD])
        if found is None:
            try:
                data.decode("utf-8")
                found = "utf-8"
            except UnicodeError:
                pass
        advice = _pass(found) if found else "name the byte order: encoding='utf-16-le' or 'utf-16-be' (CLI --encoding utf-16-le)"
        return InputError(f"{path}:1: cannot be decoded as {encoding} ({exc}); {advice}")
    line = len(_LINE_END.split(data[:start].decode("latin-1")))
    bad = data[start : start + 1]
    advice = "pass the file's encoding (e.g. encoding='latin-1', CLI --encoding latin-1)"
    if not codecs.lookup(encoding).name.startswith("utf-8"):
        try:
            data.decode("utf-8")
            advice = f"the file reads as UTF-8: {_pass('utf-8')}"
        except UnicodeError:
            pass
    return InputError(f"{path}:{line}: byte 0x{bad.hex()} cannot be decoded as {encoding} (byte {start} of the file); "
                      f"{advice}")


_CHUNK = 1 << 20  # bytes read at a time by `_Lines`


class _Bad(Exception):
    """The input is bad: the reference reader reads it again for its exact error."""


class _Lines:
    """A text file's lines, a block at a time (ends LF, CRLF or CR; no byte-order mark).
    An undecodable byte raises `_Bad`."""

    def __init__(self, fh: IO[bytes], encoding: str, seen: Callable[[int], None] | None = None) -> None:
        try:
            self.decoder = codecs.getincrementaldecoder(encoding)()
        except LookupError:
            raise ConfigError(f"unknown encoding {encoding!r}") from None
        self.fh, self.seen = fh, seen
        # the start of a line that goes on in the next block, in pieces (joined once, at its
        # end: a line of many blocks is read in time and memory linear in its length)
        self.carry: list[str] = []
        self.start, self.done = True, False

    def text(self) -> str | None:
        """The next block of whole lines as text (None after the end of the file)."""
        if self.done:
            return None
        data = self.fh.read(_CHUNK)
        if self.seen is not None:
            self.seen(len(data))
        try:
            text = self.decoder.decode(data, final=not data)
        except UnicodeError:  # (also a decoder's own: UTF-16 without a byte-order mark)
            raise _Bad from None
        if self.start and text:
            self.start = False
            if text.startswith("\ufeff"):
                text = text[1:]  # a byte-order mark, not data
        if not data:
            self.done = True
            text, self.carry = "".join([*self.carry, text]), []
            return text
        # up to the last line end of this block (a final CR may be the first half of a CRLF)
        cut = max(text.rfind("\n"), text.rfind("\r", 0, len(text) - 1))
        if cut < 0:  # (a CR held back at the end of the carry is read with the line after it)
            if text:
                self.carry.append(text)
            return ""
        self.carry.append(text[: cut + 1])
        head, self.carry = "".join(self.carry), [text[cut + 1 :]] if cut + 1 < len(text) else []
        return head

    def block(self) -> list[str] | None:
        """The next block of lines (None after the end of the file)."""
        text = self.text()
        return None if text is None else _lines_of(text)


def _lines_of(text: str) -> list[str]:
    """The lines of a block of text (LF, CRLF or CR ends)."""
    lines = text.split("\n") if "\r" not in text else _LINE_END.split(text)
    if lines and lines[-1] == "":
        lines.pop()
    return lines
