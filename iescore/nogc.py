"""Through the whole pipeline: the cyclic garbage collector paused while a tree of fresh
containers is built (OBD candidate pairs, a report's dicts). It
imports nothing of iescore, so every layer may use it."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

__all__ = ["no_cycles_collected"]


@contextlib.contextmanager
def no_cycles_collected() -> Iterator[None]:
    """Pause the cyclic garbage collector while a tree of fresh dicts and lists is built:
    it holds no cycles, yet its many containers would trigger collections that walk
    every live object again and again (most of the time of a 50,000-label ``to_dict()``)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
