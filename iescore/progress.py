"""Beside the pipeline, for the command line: the progress bar drawn while ``iescore score``
reads a large file.

It is written by hand rather than taken from a library (tqdm would draw it) because the
package depends on numpy and scipy only: a library would be an optional extra, and then
both paths would need keeping and testing. What the command needs is small: stay silent
unless standard error is a terminal and the read has taken a while, redraw a few times
a second, erase the bar at the end (and on Ctrl-C, through [`erase`][iescore.progress.erase]).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

__all__ = ["Progress", "erase"]


class Progress:
    """A progress bar on ``stream`` (standard error) while a file is read: shown only
    when the stream is a terminal and the file has taken more than ``after`` seconds,
    redrawn at most every ``every`` seconds, erased at the end. Called as
    ``progress(bytes_read, total_bytes)``; ``clock`` is injectable for tests.

    >>> import io
    >>> t = iter([0.0, 1.0, 3.0, 3.1])
    >>> out = io.StringIO()
    >>> p = Progress(out, clock=lambda: next(t), terminal=True)
    >>> p(10, 100); p(50, 100); p(60, 100); p(100, 100)
    >>> out.getvalue().split("\\r")[1:3]  # at 1 s nothing, at 3 s 50%, at 3.1 s nothing, then erased
    ['iescore: reading [############------------]  50%', '                                                      ']
    """

    WIDTH = 24

    def __init__(self, stream: Any, *, after: float = 2.0, every: float = 0.25,
                 clock: Callable[[], float] = time.monotonic, terminal: bool | None = None) -> None:
        self.stream, self.after, self.every, self.clock = stream, after, every, clock
        try:
            self.on = stream.isatty() if terminal is None else terminal
        except (AttributeError, ValueError):
            self.on = False
        self.start = clock() if self.on else 0.0
        self.shown = -1.0  # when the bar was last drawn (-1: never)

    def __call__(self, done: int, total: int) -> None:
        if not self.on or total <= 0:
            return
        if done >= total:  # finished: erase the bar if it was drawn
            if self.shown >= 0:
                self.stream.write("\r" + " " * (self.WIDTH + 30) + "\r")
                self.stream.flush()
                self.shown = -1.0
            return
        now = self.clock()
        if now - self.start < self.after or (self.shown >= 0 and now - self.shown < self.every):
            return
        k = self.WIDTH * done // total
        self.stream.write(f"\riescore: reading [{'#' * k}{'-' * (self.WIDTH - k)}] {100 * done // total:3d}%")
        self.stream.flush()
        self.shown = now


def erase(stream: Any) -> None:
    """Blank the line of a bar that may be drawn on ``stream`` (a terminal only)."""
    try:
        if stream.isatty():
            stream.write("\r" + " " * (Progress.WIDTH + 30) + "\r")
    except (AttributeError, ValueError):
        pass
