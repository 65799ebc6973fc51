"""Stage 1 of the pipeline: decode tags into chunks (Concepts: tag schemes and repairs).

Pipeline: **decode** -> match (`iescore.match`) -> count -> per-document cells
(`iescore.cells`) -> measures -> report -> views. Modules (the schemes
as tables are `iescore.schemes`, below the stage): `vocab` (tag strings as integers), `events` (the chunks and the
event tables both decoders read), `decoder` (the plain
decoder and its inverse), `detect` (scheme detection), `pair` (the fused
two-sided fast path).

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
glued to it), a space at the tag's start or end or after the delimiter (``"B-PER "``,
given from Python: a file's columns are split at spaces), and a prefix the scheme does
not have (``b-per``,
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
  [`InputError`][iescore.errors.InputError] naming the document, position and tags.
* ``"discard"`` -- decode by the scheme's meaning and drop ill-formed chunks,
  counting them.

Example:
    >>> from iescore.decode import decode_tags
    >>> chunks = decode_tags([["B-PER", "I-PER", "O", "I-LOC"]], scheme="IOB2")
    >>> [(chunks.labels[t], int(s), int(e)) for t, s, e in zip(chunks.type, chunks.start, chunks.end)]
    [('PER', 0, 2), ('LOC', 3, 4)]
"""

from ..schemes import REPAIRS, SCHEMES, Scheme, get_scheme
from .decoder import decode, decode_arrays, decode_tags, encode_spans
from .detect import detect_scheme
from .events import Chunks
from .pair import PAIR_TAGS, PairChunks, decode_pair
from .vocab import TagArrays, Vocabulary, flatten

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
    "decode_arrays",
    "encode_spans",
    "detect_scheme",
    "flatten",
    "PAIR_TAGS",
    "PairChunks",
    "decode_pair",
]
