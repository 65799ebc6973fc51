"""Under every stage of the pipeline that writes a file: `atomic_write`, the one way
iescore writes one, so that an interrupted write never leaves a truncated file.

The text goes to a temporary file in the target's folder (``.<name>.<random>.tmp``),
which replaces the target (`os.replace`, atomic on POSIX and Windows) only once
it is whole and flushed to disk. An exception or Ctrl-C (``KeyboardInterrupt``) while
writing deletes the temporary file and leaves the old file as it was, or no file; a
process killed outright (SIGKILL, a power cut) leaves at most the temporary file
beside the untouched target. The target keeps its permissions; a new file gets the
usual ones (0666 less the umask), not the temporary file's 0600. A symbolic link is
written through: the file it points at is replaced, the link stays. What is no regular
file (``/dev/null``, ``/dev/stdout``, a named pipe) is written as it is.

Example:
    >>> import os, pathlib, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "out.txt")
    >>> with atomic_write(path) as fh:
    ...     _ = fh.write("whole")
    >>> pathlib.Path(path).read_text(), sorted(os.listdir(os.path.dirname(path)))
    ('whole', ['out.txt'])
    >>> try:
    ...     with atomic_write(path) as fh:
    ...         _ = fh.write("half")
    ...         raise KeyboardInterrupt
    ... except KeyboardInterrupt:
    ...     pass
    >>> pathlib.Path(path).read_text(), sorted(os.listdir(os.path.dirname(path)))
    ('whole', ['out.txt'])
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import IO, Any, BinaryIO, Literal, TextIO, overload

__all__ = ["atomic_write", "TEMP_SUFFIX"]

TEMP_SUFFIX = ".tmp"


def _mode_for(path: str) -> int:
    """The permissions the written file gets: the old file's, else 0666 less the umask."""
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        mask = os.umask(0)
        os.umask(mask)
        return 0o666 & ~mask


@overload
def atomic_write(path: str | os.PathLike[str], mode: Literal["w"] = "w", *, encoding: str | None = "utf-8",
                 newline: str | None = None) -> AbstractContextManager[TextIO]: ...
@overload
def atomic_write(path: str | os.PathLike[str], mode: Literal["wb"], *, encoding: str | None = "utf-8",
                 newline: str | None = None) -> AbstractContextManager[BinaryIO]: ...


def atomic_write(path: str | os.PathLike[str], mode: str = "w", *, encoding: str | None = "utf-8",
                 newline: str | None = None) -> AbstractContextManager[IO[Any]]:
    """A file object open on a temporary file beside ``path`` (``mode`` ``"w"``, text with
    ``encoding`` and ``newline``, or ``"wb"``) that replaces ``path`` when the block ends
    without an exception; on any exception, ``KeyboardInterrupt`` included, the temporary
    file is deleted and ``path`` is left as it was. ``OSError`` s are raised as
    `open` raises them."""
    return _atomic_write(path, mode, encoding, newline)


@contextmanager
def _atomic_write(path: str | os.PathLike[str], mode: str, encoding: str | None,
                  newline: str | None) -> Iterator[IO[Any]]:
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_write writes files whole: mode 'w' or 'wb', got {mode!r}")
    kw: dict[str, Any] = {} if mode == "wb" else {"encoding": encoding, "newline": newline}
    if os.path.exists(path) and not os.path.isfile(path) and not os.path.isdir(path):
        with open(path, mode, **kw) as fh:  # /dev/null, /dev/stdout, a pipe: written as it is
            yield fh
        return
    target = os.path.realpath(os.fspath(path))  # through a symbolic link, to the file it names
    folder, name = os.path.split(target)
    perms = _mode_for(target)
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=TEMP_SUFFIX, dir=folder)
    try:
        try:
            fh = os.fdopen(fd, mode, **kw)
        except BaseException:  # (an unknown encoding) the descriptor is not the file object's yet
            os.close(fd)
            raise
        with fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, perms)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
