"""Peers' chunk decoders, called the way their users call them (for the decoding table and benchmarks).

``conlleval_chunks`` transcribes conlleval.pl's ``startOfChunk``/``endOfChunk`` rules; the
others call seqeval and nervaluate themselves.
"""

from __future__ import annotations


def _split(tag):
    if tag == "O" or "-" not in tag:
        return tag, ""
    p, t = tag.split("-", 1)
    return p, t


def _end(pt, t, ptype, typ):
    end = (pt, t) in {("B", "B"), ("B", "O"), ("I", "B"), ("I", "O"), ("E", "E"), ("E", "I"), ("E", "O")}
    return end or (pt not in ("O", ".") and ptype != typ)


def _start(pt, t, ptype, typ):
    start = (pt, t) in {("B", "B"), ("I", "B"), ("O", "B"), ("O", "I"), ("E", "E"), ("E", "I"), ("O", "E")}
    return start or (t not in ("O", ".") and ptype != typ)


def conlleval_chunks(tags):
    """Chunks ``(label, start, end)`` (half-open) as conlleval.pl delimits them."""
    out, cur = [], None
    prev, ptype = "O", ""
    for i, tag in enumerate([*tags, "O"]):
        p, t = _split(tag)
        if cur is not None and _end(prev, p, ptype, t):
            out.append((cur[0], cur[1], i))
            cur = None
        if _start(prev, p, ptype, t):
            cur = (t, i)
        prev, ptype = p, t
    return out


def seqeval_default_chunks(tags):
    from seqeval.metrics.sequence_labeling import get_entities

    return [(t, s, e + 1) for t, s, e in get_entities(list(tags))]


def seqeval_strict_chunks(tags, scheme):
    import seqeval.scheme as sch
    from seqeval.scheme import Entities

    cls = {"IOB2": sch.IOB2, "IOBES": sch.IOBES, "BILOU": sch.BILOU, "IO": sch.IOB2}[scheme]
    return sorted((e.tag, e.start, e.end) for e in Entities([list(tags)], scheme=cls).entities[0])


def nervaluate_chunks(tags):
    from nervaluate.loaders import ListLoader

    return [(e.label, e.start, e.end + 1) for e in ListLoader().load([list(tags)])[0]]
