"""How iescore and the peers decode ill-formed tag sequences (the README's table).

Run: python bench/decoding_table.py  (needs seqeval and nervaluate: pip install -e ".[bench]")
"""

from __future__ import annotations

import os
import sys
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peers import conlleval_chunks, nervaluate_chunks, seqeval_default_chunks, seqeval_strict_chunks

from iescore import IEScoreError
from iescore.decode import decode_tags

CASES = [
    ("B-PER I-LOC", "IOB2"),
    ("O I-PER I-PER", "IOB2"),
    ("S-PER S-PER", "IOBES"),
    ("B-PER E-PER B-PER E-PER", "IOBES"),
    ("U-PER U-PER", "BILOU"),
    ("PER PER O", "IO"),
]


def fmt(chunks):
    if isinstance(chunks, str):
        return chunks
    return " ".join(f"{lab}[{s},{e})" for lab, s, e in chunks) or "none"


def ours(tags, scheme, repair):
    try:
        ch = decode_tags([tags], scheme=scheme, repair=repair)
    except IEScoreError:
        return "error"
    out = fmt([(ch.labels[t], int(s), int(e)) for t, s, e in zip(ch.type, ch.start, ch.end)])
    if repair == "conlleval" and ch.n_repaired:
        out += f" ({ch.n_repaired} repaired)"
    if repair == "discard" and ch.n_discarded:
        out += f" ({ch.n_discarded} dropped)"
    return out


def peer(f, *args):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fmt(f(*args))
    except Exception as exc:
        return f"error ({type(exc).__name__})"


def table():
    head = ("| tags (scheme) | iescore conlleval | iescore strict | iescore discard | conlleval.pl "
            "| seqeval default | seqeval strict | nervaluate list |")
    rows = [head, "|" + "---|" * 8]
    for text, scheme in CASES:
        tags = text.split()
        rows.append(
            f"| `{text}` ({scheme}) | {ours(tags, scheme, 'conlleval')} | {ours(tags, scheme, 'strict')} | "
            f"{ours(tags, scheme, 'discard')} | {peer(conlleval_chunks, tags)} | {peer(seqeval_default_chunks, tags)} | "
            f"{peer(seqeval_strict_chunks, tags, scheme)} | {peer(nervaluate_chunks, tags)} |"
        )
    return "\n".join(rows)


if __name__ == "__main__":
    print(table())
