"""The views stage of the pipeline: indented JSON text, written in pieces.

``json.dumps(obj, indent=2)`` is the text iescore prints for ``--format json``, but
Python's standard library writes indented JSON with its pure-Python encoder, one small
string per key, value and bracket: a report of 50,000 labels (76 MB of text) took 2.5 s
and a list of about ten million strings (some 700 MB) before the first byte was written.
Its C encoder runs only without indentation.

`json_pieces` gives the same text, character for character, in pieces: the
containers above the innermost ones are walked here, and each innermost container (a
dict or list with no dict or list inside, such as one label's measures) is one call of
the C encoder, whose separators carry the line break and the indentation of its depth.
That works because the C encoder writes the same scalars as the Python one (``repr``
of floats, ``NaN``/``Infinity``, escaped strings, ``true``/``false``/``null``), and a
JSON string never holds a raw line break. `json_text` joins the pieces;
`write_json` writes them to a stream as they come, so the text is never held
whole. The reference is ``json.dumps`` itself (tests/test_jsontext.py compares them on
random trees).

>>> json_text({"a": [1, 2.5], "b": {}, "c": {"d": None}})
'{\\n  "a": [\\n    1,\\n    2.5\\n  ],\\n  "b": {},\\n  "c": {\\n    "d": null\\n  }\\n}'
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from itertools import repeat
from typing import Any, TextIO

__all__ = ["json_pieces", "json_text", "write_json", "write_pieces"]

_CONTAINERS = (dict, list, tuple)  # what json.dumps writes as an object or an array


def json_pieces(obj: Any, indent: int | str = 2) -> Iterator[str]:
    """The text of ``json.dumps(obj, indent=indent)`` (other options at their defaults), in
    order, in pieces of up to `PIECES_PER_CHUNK` innermost containers, keys and
    brackets each. Raises what ``json.dumps`` raises for a value it cannot write
    (TypeError) or a container that holds itself (ValueError), once the text before it is
    given."""
    pad = indent if isinstance(indent, str) else " " * indent
    encoders: dict[int, Callable[[Any], str]] = {}
    markers: set[int] = set()
    # the containers being written: (container, its items, its level, whether a dict, items written)
    stack: list[tuple[Any, Iterator[Any], int, bool, list[int]]] = []

    def whole(o: Any, level: int) -> str | None:
        """The text of ``o`` at ``level`` if it is written in one piece (a scalar, an empty
        or an innermost container), else None, its items then written one by one."""
        if not isinstance(o, _CONTAINERS):
            return _dumps(o)
        if not o:
            return "{}" if isinstance(o, dict) else "[]"
        is_dict = isinstance(o, dict)
        values: Iterable[Any] = o.values() if isinstance(o, dict) else o
        if not any(map(isinstance, values, repeat(_CONTAINERS))):
            enc = encoders.get(level)
            if enc is None:  # items one level deeper, each on a line of its own
                enc = encoders[level] = json.JSONEncoder(separators=(",\n" + pad * (level + 1), ": ")).encode
            text = enc(o)  # "{" items "}" (or "[" items "]") from the C encoder
            return text[0] + "\n" + pad * (level + 1) + text[1:-1] + "\n" + pad * level + text[-1]
        if id(o) in markers:
            raise ValueError("Circular reference detected")
        markers.add(id(o))
        stack.append((o, iter(o.items()) if isinstance(o, dict) else iter(o), level, is_dict, [0]))
        return None

    def key_text(key: Any) -> str:
        if isinstance(key, str):
            return _key(key)
        one = _dumps({key: 0})  # int, float, bool or None keys as json writes them (or its TypeError)
        return one[1:one.rindex(":")]

    buf: list[str] = []
    text = whole(obj, 0)
    buf.append(text if text is not None else "{" if isinstance(obj, dict) else "[")
    while stack:
        o, items, level, is_dict, written = stack[-1]
        item: Any = next(items, _END)
        if item is _END:
            stack.pop()
            markers.discard(id(o))
            buf.append("\n" + pad * level + ("}" if is_dict else "]"))
            continue
        head = ("," if written[0] else "") + "\n" + pad * (level + 1)
        written[0] += 1
        if is_dict:
            key, value = item
            head += key_text(key) + ": "
        else:
            value = item
        text = whole(value, level + 1)
        buf.append(head + (text if text is not None else "{" if isinstance(value, dict) else "["))
        if len(buf) >= PIECES_PER_CHUNK:
            yield "".join(buf)
            buf.clear()
    yield "".join(buf)


PIECES_PER_CHUNK = 4096  # pieces joined before they are given: about a megabyte for one label's measures a piece
_END = object()
_dumps = json.JSONEncoder().encode  # a scalar, or a key's text (C encoder)
_key = json.encoder.encode_basestring_ascii


def json_text(obj: Any, indent: int | str = 2) -> str:
    """``json.dumps(obj, indent=indent)``, the same text, built from `json_pieces`."""
    return "".join(json_pieces(obj, indent))


def write_json(obj: Any, out: TextIO, indent: int | str = 2) -> None:
    """Write ``json.dumps(obj, indent=indent)`` to ``out`` as it is made (the whole text is
    never held); an object it cannot write raises after the text before it is written."""
    write_pieces(json_pieces(obj, indent), out)


def write_pieces(pieces: Iterable[str], out: TextIO, end: str = "") -> None:
    """Write ``pieces``, then ``end``, to ``out``."""
    for piece in pieces:
        out.write(piece)
    out.write(end)
