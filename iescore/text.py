"""Before the pipeline (input preparation): raw text to tokens, and character spans
to token spans.

Adapters meet spans given as character offsets (spaCy's ``start_char``, Hugging
Face pipelines' ``start``/``end``, inline tags). They map them to the tokens of
a reference document with one documented policy (``misaligned``):

* ``"expand"`` -- the smallest token range covering the characters;
* ``"contract"`` -- the largest token range inside the characters (a span
  inside one token maps to nothing and is dropped);
* ``"error"`` -- raise [`InputError`][iescore.errors.InputError].

Either way the adapter counts every span that did not fall on token boundaries.

Example:
    >>> doc = document_from_text("d", "Al Roth, Ido", tokenizer="regex")
    >>> doc.tokens, doc.char_offsets
    (('Al', 'Roth', ',', 'Ido'), ((0, 2), (3, 7), (7, 8), (9, 12)))
    >>> char_to_token_span(doc.char_offsets, 3, 8, misaligned="error")
    (1, 3, True)
    >>> char_to_token_span(doc.char_offsets, 4, 11, misaligned="expand")
    (1, 4, False)
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Callable, Sequence

from .errors import ConfigError, InputError, choices
from .model import Document, Span
from .options import MISALIGNED

__all__ = [
    "MISALIGNED",
    "TOKENIZERS",
    "tokenize",
    "document_from_text",
    "char_to_token_span",
]

_REGEX = re.compile(r"\w+|[^\w\s]")
_WS = re.compile(r"\S+")


@functools.lru_cache(maxsize=1)
def _spacy_tokenizer() -> Callable[[str], list[tuple[int, int]]]:
    try:
        import spacy
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ConfigError(
            "tokenizer='spacy' needs spaCy (pip install 'iescore[spacy]'); or use tokenizer='regex'"
        ) from exc
    nlp = spacy.blank("en")

    def run(text: str) -> list[tuple[int, int]]:
        return [(t.idx, t.idx + len(t)) for t in nlp.tokenizer(text) if not t.is_space]

    return run


TOKENIZERS = ("spacy", "regex", "whitespace")


def tokenize(text: str, tokenizer: str | Callable[[str], Sequence[tuple[int, int]]] = "spacy") -> list[tuple[int, int]]:
    """Character offsets ``(start, end)`` of the tokens of ``text``.

    ``tokenizer`` is ``"spacy"`` (a blank English spaCy tokenizer; whitespace
    tokens are left out), ``"regex"`` (``\\w+`` runs and single punctuation
    marks), ``"whitespace"``, or a callable returning offsets.
    """
    if callable(tokenizer):
        return [(int(a), int(b)) for a, b in tokenizer(text)]
    if tokenizer == "spacy":
        return _spacy_tokenizer()(text)
    if tokenizer == "regex":
        return [m.span() for m in _REGEX.finditer(text)]
    if tokenizer == "whitespace":
        return [m.span() for m in _WS.finditer(text)]
    raise ConfigError(f"unknown tokenizer {tokenizer!r}; valid: {choices(TOKENIZERS)} or a callable")


def document_from_text(
    doc_id: str,
    text: str,
    *,
    tokenizer: str | Callable[[str], Sequence[tuple[int, int]]] = "spacy",
    spans: Sequence[Span] = (),
) -> Document:
    """A [`Document`][iescore.model.Document] with tokens, separators and character offsets from raw text."""
    offs = tokenize(text, tokenizer)
    tokens = tuple(text[a:b] for a, b in offs)
    seps = tuple(text[offs[k][1] : offs[k + 1][0]] for k in range(len(offs) - 1))
    return Document(doc_id, tokens, tuple(spans), seps, tuple(offs))


def char_to_token_span(
    offsets: Sequence[tuple[int, int]], start: int, end: int, *, misaligned: str = "expand"
) -> tuple[int, int, bool] | None:
    """Map characters ``[start, end)`` to tokens ``[s, e)``; returns ``(s, e, on_boundaries)``.

    ``None`` when no token lies (wholly, under ``contract``; partly, under
    ``expand``) inside the characters.
    """
    if misaligned not in MISALIGNED:
        raise ConfigError(f"unknown misaligned policy {misaligned!r}; valid: {choices(MISALIGNED)}")
    if end <= start:
        raise InputError(f"character span [{start}, {end}) is empty or reversed")
    starts = [a for a, _ in offsets]
    ends = [b for _, b in offsets]
    # expand: first token ending after start, last token starting before end
    s_exp = bisect.bisect_right(ends, start)
    e_exp = bisect.bisect_left(starts, end)
    if s_exp >= e_exp:
        if misaligned == "error":
            raise InputError(f"characters [{start}, {end}) cover no token")
        return None
    aligned = starts[s_exp] == start and ends[e_exp - 1] == end
    if aligned:
        return s_exp, e_exp, True
    if misaligned == "error":
        raise InputError(
            f"characters [{start}, {end}) do not fall on token boundaries "
            f"(nearest tokens span [{starts[s_exp]}, {ends[e_exp - 1]})); use misaligned='expand' or 'contract'"
        )
    if misaligned == "expand":
        return s_exp, e_exp, False
    s_con = bisect.bisect_left(starts, start)
    e_con = bisect.bisect_right(ends, end)
    if s_con >= e_con:
        return None
    return s_con, e_con, False
