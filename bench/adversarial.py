"""Adversarial inputs: the shapes where a scorer can fall off a cliff, each at several sizes.

    python bench/adversarial.py               # the default run (about 20 minutes on a 2-core VM)
    python bench/adversarial.py --quick       # tiny sizes, a few seconds (the tests run it)
    python bench/adversarial.py --cases chain,nested --limit 60

Cases (``CASES``):

* ``chain``: one document of adjacent two-token entities, the prediction one token late,
  so every span overlaps its neighbours and all of them form one connected chain;
  sizes in tokens.
* ``nested``: one document (Documents with Spans) of adjacent three-token answers; each
  answer has a predicted span nested inside it (its first two tokens) and one overlapping
  it and the next answer (its last token and the next one's first); one tool adds an
  answer and a prediction over the whole document; sizes in tokens.
* ``crossing``: one document whose answers overlap one another (``[k, k+3)`` for every k,
  as a span categorizer's may), predictions one token late (and, one tool, early; one,
  spans of 12 tokens); sizes in answers.
* ``labels``: a file of fixed size (1M tokens, the synthetic corpus of ``bench/data.py``)
  whose entities take 4, 1k, 10k or 50k types, given as lists (and, one tool, written as a
  CoNLL file for ``iescore score``; one, added a sentence a call; two, bootstrap intervals
  and a paired test over its documents; one, the confusion views up to 1k labels; one, ``ids_floor``, only maps the
  tags to integers: the least any scorer of string tags does); sizes in labels.
* ``calls``: the sentences of the synthetic corpus added to a streaming ``Scorer`` one
  call per sentence (``add_tags`` with ``scheme="IOB2"`` and under the default, which
  reads each call's scheme from its own tags; ``add`` of a Document with Spans; ``add``
  of an OBD Template), beside one call over all of them; sizes in sentences.
* ``cli``: ``iescore score FILE`` on generated CoNLL files of 20 MB, 200 MB and 2 GB
  (written to the temporary folder and deleted after); sizes in bytes.
* ``longline``: ``iescore score FILE`` on a CoNLL file of ONE line: a token of n bytes,
  then its gold and predicted tag (a line far longer than a block read at a time; written
  to the temporary folder, untimed, and deleted after); sizes in bytes.
* ``templates``: one OBD template with two slots of n fillers each, half of the predicted
  fillers equal to an answer, the other half a prefix of one (all share a first token);
  and (one tool) one slot of n fillers with a tie among four of them, (one) one slot
  whose fillers all share a token but one answer, (one) one slot of n answers, 1% of them
  without the shared token, and n - n/1000 predictions; sizes in fillers per slot.

Every (case, tool, size) runs in a FRESH child process: it builds its input (untimed),
warms the tool up on a tiny input, resets the kernel's peak-RSS counter
(``/proc/self/clear_refs``), then times one call and reports the wall time, its RSS
before the call and its peak RSS (``VmHWM``) after it; a call under 2 s is timed twice
more (each time on input built afresh, untimed, unless that takes over 10 s) and the median
of the three is its time. The child's address space is capped
(``RLIMIT_AS``, ``--mem-cap``, default 16 GiB or less when less memory is free), so a case
that needs more ends as "out of memory" rather than taking the machine; a call that takes
longer than ``--limit`` seconds is killed and recorded as "timed out", and the tool's
larger sizes of that case are then not run. Tools that share a model (exact matching, any
counting) are checked to agree on the counts they report (F1, correct, gold and predicted
chunks); the run stops if they disagree.

Peers: seqeval (``f1_score``, ``classification_report``), nervaluate (strict),
``conlleval_standin`` (the transcription of conlleval.pl's chunk rules in ``bench/peers.py``,
run in Python) and, when ``--conlleval PATH`` names a copy of conlleval.pl (it is not part
of the project and never fetched by it), ``conlleval_pl``: perl running it on a file, its
peak RSS from GNU time. Writes ``bench/out/adversarial.json`` and ``bench/out/adversarial.md``;
``--merge`` reruns some cases or tools (``--cases``, ``--tools``) into the existing results.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import io
import json
import math
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from data import corpus
from peers import conlleval_chunks

GIB = 1 << 30
MB = 1_000_000


# --- inputs ----------------------------------------------------------------------------------

def chain_tags(n: int) -> tuple[list[list[str]], list[list[str]]]:
    """One document of ``n`` tokens (n even): gold entities ``[2k, 2k+2)``, predicted ones
    ``[2k+1, 2k+3)`` (the last one cut to ``[n-1, n)``); every span overlaps its neighbours.

    >>> chain_tags(4)
    ([['B-E', 'I-E', 'B-E', 'I-E']], [['O', 'B-E', 'I-E', 'B-E']])
    """
    n -= n % 2
    gold = ["B-E" if i % 2 == 0 else "I-E" for i in range(n)]
    pred = ["O"] + ["B-E" if i % 2 == 1 else "I-E" for i in range(1, n)]
    return [gold], [pred]


def chain_spans(n: int):
    """The chain of :func:`chain_tags` as one ``Document`` and its predicted ``Span`` list."""
    from iescore import Document, Span

    n -= n % 2
    gold = [Span("E", s, s + 2) for s in range(0, n, 2)]
    pred = [Span("E", s, min(s + 2, n)) for s in range(1, n, 2)]
    return [Document("chain", ("w",) * n, tuple(gold))], [pred]


def nested_spans(n: int):
    """One document of ``3K`` tokens (K = n // 3): answers ``[3k, 3k+3)``; predicted
    ``[3k, 3k+2)`` (nested) and ``[3k+2, 3k+4)`` (overlapping answers k and k+1; the
    last one cut to the document's end).

    >>> docs, preds = nested_spans(6)
    >>> [(s.start, s.end) for s in docs[0].spans], [(s.start, s.end) for s in preds[0]]
    ([(0, 3), (3, 6)], [(0, 2), (2, 4), (3, 5), (5, 6)])
    """
    from iescore import Document, Span

    k_max = n // 3
    n = 3 * k_max
    gold = [Span("E", 3 * k, 3 * k + 3) for k in range(k_max)]
    pred = []
    for k in range(k_max):
        pred += [Span("E", 3 * k, 3 * k + 2), Span("E", 3 * k + 2, min(3 * k + 4, n))]
    return [Document("nested", ("w",) * n, tuple(gold))], [pred]


def nested_long(n: int):
    """:func:`nested_spans` plus one answer and one prediction over the whole document (a
    section, say): every answer lies within the long prediction's reach.

    >>> docs, preds = nested_long(6)
    >>> [(s.start, s.end) for s in docs[0].spans][-1], [(s.start, s.end) for s in preds[0]][-1]
    ((0, 6), (0, 6))
    """
    from iescore import Document, Span

    docs, preds = nested_spans(n)
    whole = Span("E", 0, len(docs[0].tokens))
    return [Document("nested", docs[0].tokens, docs[0].spans + (whole,))], [preds[0] + [whole]]


def crossing_spans(n: int, late: bool = True, width: int = 3):
    """One document of ``n + width`` tokens whose answers overlap one another, as a span
    categorizer's do: answers ``[k, k+3)`` for every k < n, predictions ``[k+1, k+4)`` (one
    token late), or with ``late=False`` the mirror image (answers ``[k+1, k+4)``,
    predictions ``[k, k+3)``: one token early); ``width`` tokens per span instead of 3.
    The candidate pairs cross (answers overlap among themselves), so they form one
    component that only the general solver takes.

    >>> docs, preds = crossing_spans(2)
    >>> [(s.start, s.end) for s in docs[0].spans], [(s.start, s.end) for s in preds[0]]
    ([(0, 3), (1, 4)], [(1, 4), (2, 5)])
    >>> docs, preds = crossing_spans(2, late=False)
    >>> [(s.start, s.end) for s in docs[0].spans], [(s.start, s.end) for s in preds[0]]
    ([(1, 4), (2, 5)], [(0, 3), (1, 4)])
    """
    from iescore import Document, Span

    g, p = (0, 1) if late else (1, 0)
    gold = tuple(Span("E", k + g, k + g + width) for k in range(n))
    return [Document("crossing", ("w",) * (n + width), gold)], [[Span("E", k + p, k + p + width) for k in range(n)]]


def crossing_early(n: int):
    """:func:`crossing_spans` one token early."""
    return crossing_spans(n, late=False)


def crossing_wide(n: int):
    """:func:`crossing_spans` with spans of 12 tokens (each answer overlaps 23 predictions).

    >>> docs, preds = crossing_wide(2)
    >>> [(s.start, s.end) for s in docs[0].spans], [(s.start, s.end) for s in preds[0]]
    ([(0, 12), (1, 13)], [(1, 13), (2, 14)])
    """
    return crossing_spans(n, width=12)


def many_labels(n_tokens: int, n_labels: int, seed: int = 0) -> tuple[list[list[str]], list[list[str]]]:
    """``bench/data.py``'s corpus with its entities spread over ``n_labels`` types.

    Gold entity k takes type ``T{k mod n_labels}``; a predicted entity that starts where a
    gold one starts takes the gold type, or the next type when the corpus retyped it; a
    spurious one takes a type of its own. So the errors (dropped, shifted, retyped,
    spurious) are those of the 4-type corpus, and every type occurs once the corpus has
    at least ``n_labels`` entities (1M tokens have about 60k).
    """
    g, p = corpus(n_tokens, seed)
    names = [f"T{k}" for k in range(n_labels)]
    k = -1
    gold_out, pred_out = [], []
    for gs, ps in zip(g, p):
        go, po = [], []
        cur_g = cur_p = ""
        for a, b in zip(gs, ps):
            if a.startswith("B-"):
                k += 1
                cur_g = names[k % n_labels]
            if b.startswith("B-"):
                if a.startswith("B-"):
                    cur_p = cur_g if a[2:] == b[2:] else names[(k + 1) % n_labels]
                else:
                    cur_p = names[(k + 7) % n_labels]
            go.append(a if a == "O" else a[:2] + cur_g)
            po.append(b if b == "O" else b[:2] + cur_p)
        gold_out.append(go)
        pred_out.append(po)
    return gold_out, pred_out


def templates(n: int):
    """One OBD template, slots ``speaker`` and ``location`` of ``n`` fillers each: answer k is
    ``"Dr s{k} x{k}"``; predicted filler k is the same for even k and ``"Dr s{k}"`` (a
    prefix: one token missing) for odd k. Every filler shares the token ``Dr``.
    """
    from iescore import Template

    ref, pred = {}, {}
    for slot in ("speaker", "location"):
        ref[slot] = tuple(f"Dr {slot}{k} x{k}" for k in range(n))
        pred[slot] = tuple(f"Dr {slot}{k} x{k}" if k % 2 == 0 else f"Dr {slot}{k}" for k in range(n))
    return [Template("t", ref)], [Template("t", pred)]


# the sizes of the template shapes whose one slot makes (f n)² candidate pairs: from 10k
# fillers on they pass the pairs one slot may make, and iescore refuses them by design
_LISTED = (10, 100, 1_000)


def tied_templates(n: int):
    """One OBD template, one slot of ``n`` fillers a side, with a tie: answers ``"Dr q r1"``
    and ``"Dr q r2"`` and predictions ``"Dr q s1"`` and ``"Dr q s2"`` share the token ``q``
    equally (two best pairings), and the other fillers (``"Dr z{k}"`` against ``"Dr y{k}"``)
    share only ``Dr``, which every filler holds (a floor: no pair listed for it).
    """
    from iescore import Template

    ref = ("Dr q r1", "Dr q r2") + tuple(f"Dr z{k}" for k in range(n - 2))
    pred = ("Dr q s1", "Dr q s2") + tuple(f"Dr y{k}" for k in range(n - 2))
    return [Template("t", {"speaker": ref})], [Template("t", {"speaker": pred})]


def dense_templates(n: int):
    """One OBD template, one slot of ``n`` fillers a side: as :func:`templates`, but the last
    answer is ``"Prof s{n-1} x{n-1}"``, so ``Dr`` is held by every filler but one answer:
    every two fillers holding it share a token, n² - n pairs, unless ``Dr`` gets a floor
    with one filler short of it (iescore.match.fillers).
    """
    from iescore import Template

    ref = tuple(f"Dr s{k} x{k}" for k in range(n - 1)) + (f"Prof s{n - 1} x{n - 1}",)
    pred = tuple(f"Dr s{k} x{k}" if k % 2 == 0 else f"Dr s{k}" for k in range(n))
    return [Template("t", {"speaker": ref})], [Template("t", {"speaker": pred})]


def share_templates(n: int):
    """One OBD template, one slot of ``n`` fillers a side: answer k is ``"s{k} x{k}"``,
    predicted filler k the same for even k and ``"s{k}"`` for odd k (as :func:`templates`),
    and ``"the "`` comes first on 3 answers in 10 (k % 10 < 3) and on 3 predictions in 10
    ((7 k) % 10 < 3, another 30%): a token on a share of both sides, less than most, so
    (0.3 n)² pairs share it and no floor helps: they are listed, and from 10k fillers on the
    slot passes the pairs one slot may make and is refused by design (iescore.match.fillers).
    """
    from iescore import Template

    ref = tuple(("the " if k % 10 < 3 else "") + f"s{k} x{k}" for k in range(n))
    pred = tuple(("the " if (7 * k) % 10 < 3 else "") + (f"s{k} x{k}" if k % 2 == 0 else f"s{k}") for k in range(n))
    return [Template("t", {"speaker": ref})], [Template("t", {"speaker": pred})]


def share_wrong_templates(n: int):
    """One OBD template, one slot of ``n`` fillers a side, drawn at random (seed 0): answer k
    is ``"s{k} x{k}"``, predicted filler k the same for even k and ``"s{k}"`` for odd k,
    but one prediction in 10 is wrong (``"y{k}"``), and ``"the "`` comes first on 30% of the
    fillers of each side. Fillers holding "the" are then left without a counterpart on both
    sides, and the pairs between them do belong to best alignments, all tied; refused by
    design from 10k fillers on, as :func:`share_templates`.
    """
    import random

    from iescore import Template

    rnd = random.Random(0)
    ref = tuple(("the " if rnd.random() < 0.3 else "") + f"s{k} x{k}" for k in range(n))
    pred = tuple(("the " if rnd.random() < 0.3 else "")
                 + (f"y{k}" if rnd.random() < 0.1 else f"s{k} x{k}" if k % 2 == 0 else f"s{k}") for k in range(n))
    return [Template("t", {"speaker": ref})], [Template("t", {"speaker": pred})]


def two_hubs_templates(n: int):
    """As :func:`share_wrong_templates`, but ``"the "`` and ``"of "`` each first on 30% of the
    fillers of each side, at random (seed 0): two shared tokens, whose holders' pairs are
    all listed; refused by design from 10k fillers on, as :func:`share_templates`."""
    import random

    from iescore import Template

    rnd = random.Random(0)

    def hubs() -> str:
        return ("the " if rnd.random() < 0.3 else "") + ("of " if rnd.random() < 0.3 else "")

    ref = tuple(hubs() + f"s{k} x{k}" for k in range(n))
    pred = tuple(hubs() + (f"y{k}" if rnd.random() < 0.1 else f"s{k} x{k}" if k % 2 == 0 else f"s{k}")
                 for k in range(n))
    return [Template("t", {"speaker": ref})], [Template("t", {"speaker": pred})]


def excess_templates(n: int):
    """One OBD template, one slot of ``n`` answers ``"s{k}"``, ``"Dr "`` first on 3 in 5
    (k % 5 < 3), and n/2 predictions ``"Dr s{2k}"``: "Dr" gets a floor, so the 40% of the
    answers that lack it gain when left unaligned, and with n/2 answers in excess each of
    them is paired with each of 0.4 n stand-ins (iescore.match.slots): 0.16 n² pairs, refused
    by design from 10k fillers on (iescore.match.fillers)."""
    from iescore import Template

    ref = tuple(("Dr " if k % 5 < 3 else "") + f"s{k}" for k in range(n))
    pred = tuple(f"Dr s{2 * k}" for k in range(n // 2))
    return [Template("t", {"speaker": ref})], [Template("t", {"speaker": pred})]


def ties_templates(n: int):
    """One OBD template, one slot of ``n`` fillers a side in groups of four: answers
    ``"g{j} a"``, ``"g{j} b"`` and predictions ``"g{j} c"``, ``"g{j} d"`` (a 2x2 tie on a
    token of their own, j = k // 4), then two answers and two predictions that share
    nothing: n/4 ties among as many free fillers."""
    from iescore import Template

    def side(own: tuple[str, str], free: str) -> tuple[str, ...]:
        return tuple(f"g{k // 4} {own[k % 4]}" if k % 4 < 2 else f"{free}{k}" for k in range(n))

    return [Template("t", {"speaker": side(("a", "b"), "r")})], [Template("t", {"speaker": side(("c", "d"), "p")})]


def short_templates(n: int):
    """One OBD template, one slot of ``n`` answers and ``n - max(1, n // 1000)`` predictions:
    as :func:`templates`, but every hundredth answer is ``"Prof s{k} x{k}"`` (1% without
    ``Dr``): with a floor for ``Dr``, those answers gain when left unaligned (the answers
    left over), which the slot alignment carries by stand-ins.
    """
    from iescore import Template

    ref = tuple(f"Prof s{k} x{k}" if k % 100 == 0 else f"Dr s{k} x{k}" for k in range(n))
    pred = tuple(f"Dr s{k} x{k}" if k % 2 == 0 else f"Dr s{k}" for k in range(n - max(1, n // 1000)))
    return [Template("t", {"speaker": ref})], [Template("t", {"speaker": pred})]


def sentences(n: int) -> tuple[list[list[str]], list[list[str]]]:
    """The first ``n`` sentences of ``bench/data.py``'s corpus (about 14 tokens each)."""
    g, p = corpus(max(1000, 20 * n), 0)
    assert len(g) >= n
    return g[:n], p[:n]


def sentence_documents(n: int):
    """The sentences of :func:`sentences` as Documents (gold chunks as Spans, as conlleval.pl
    delimits them) and their predicted Span lists."""
    from iescore import Document, Span

    g, p = sentences(n)
    docs = [Document(str(k), (f"w{k}",) * len(t), tuple(Span(*c) for c in conlleval_chunks(t)))
            for k, t in enumerate(g)]
    return docs, [[Span(*c) for c in conlleval_chunks(t)] for t in p]


def sentence_templates(n: int):
    """The sentences of :func:`sentences` as OBD Templates: per label, the texts (the tokens
    ``w0 w1 ...`` of the chunk's positions) of its chunks, on each side."""
    from iescore import Template

    def template(k: int, tags: list[str]) -> Template:
        slots: dict[str, list[str]] = {}
        for label, a, b in conlleval_chunks(tags):
            slots.setdefault(label, []).append(" ".join(f"w{i}" for i in range(a, b)))
        return Template(str(k), {lab: tuple(f) for lab, f in slots.items()})

    g, p = sentences(n)
    return [template(k, t) for k, t in enumerate(g)], [template(k, t) for k, t in enumerate(p)]


def _stream_templates(st):
    import iescore

    s = iescore.Scorer(setting="OBD")
    for r, p in zip(*st):
        s.add(reference=[r], prediction=[p])
    return _report_counts(s.report())


def write_conll(path: Path, n_bytes: int, seed: int = 0) -> dict:
    """Write a CoNLL file (``token gold pred`` lines, blank lines between sentences) of about
    ``n_bytes``: a block of about 20 MB (or ``n_bytes`` when smaller) of the synthetic corpus,
    repeated. Returns the file's bytes, tokens and chunk counts of one block."""
    block_bytes = min(n_bytes, 20 * MB)
    g, p = corpus(max(1000, block_bytes // 10), seed)
    lines = []
    for gs, ps in zip(g, p):
        lines += [f"w{i % 1000} {a} {b}\n" for i, (a, b) in enumerate(zip(gs, ps))]
        lines.append("\n")
    block = "".join(lines).encode()
    repeats = max(1, round(n_bytes / len(block)))
    with open(path, "wb") as fh:
        for _ in range(repeats):
            fh.write(block)
    return {"bytes": repeats * len(block), "tokens": repeats * sum(map(len, g)), "repeats": repeats}


def long_line_file(n_bytes: int) -> str:
    """A CoNLL file of one line: a token of ``n_bytes`` x's, then ``B-PER B-PER`` and LF (one
    chunk, predicted exactly), written to ``IESCORE_BENCH_TMP`` (the run's ``--tmp``) or the
    temporary folder; the input's preparation, untimed; removed when the child exits."""
    import atexit

    fd, name = tempfile.mkstemp(suffix=".conll", dir=os.environ.get("IESCORE_BENCH_TMP"))
    atexit.register(os.unlink, name)
    piece = b"x" * min(n_bytes, 10 * MB)
    with os.fdopen(fd, "wb") as fh:
        for _ in range(n_bytes // len(piece)):
            fh.write(piece)
        fh.write(piece[: n_bytes % len(piece)] + b" B-PER B-PER\n")
    return name


# --- tools: prep(size) -> state (untimed); run(state) -> counts ------------------------------

def _report_counts(r) -> dict:
    d = r.to_dict()
    o, s = d["overall"], d["slot_errors"]
    return {"f1": r.f1 or 0.0, "tp": o["tp"], "gold": o["support"], "pred": o["predicted"],
            "slot_errors": {k: s[k] for k in ("C", "S", "D", "I")}}


def _score_tags(**options) -> Callable:
    def run(st):
        import iescore

        return _report_counts(iescore.score_tags(reference=st[0], prediction=st[1], scheme="IOB2", **options))

    return run


def _stream_calls(**options) -> Callable:
    def run(st):
        import iescore

        s = iescore.Scorer(**options)
        for r, p in zip(*st):
            s.add_tags(reference=[r], prediction=[p])
        return _report_counts(s.report())

    return run


def _stream_documents(st):
    import iescore

    s = iescore.Scorer()
    for d, p in zip(*st):
        s.add(reference=[d], prediction=[p])
    return _report_counts(s.report())


def _score_prf(st):
    import iescore

    r = iescore.score_tags(reference=st[0], prediction=st[1], scheme="IOB2", detail="prf")
    return {"f1": r.f1 or 0.0, "tp": r.overall.tp, "gold": r.overall.tp + r.overall.fn, "pred": r.overall.tp + r.overall.fp}


def _ids_floor(st):
    """The least any coder of string tags does: every tag of both sides mapped to an int
    by one dict look-up in C (an unseen tag taking the next id), into an int32 array. Its
    time grows with the labels too: a dict of 90,000 tags misses the CPU cache."""
    from collections import defaultdict
    from itertools import chain, count

    import numpy as np

    ids: defaultdict = defaultdict(count().__next__)
    n = sum(len(np.fromiter(map(ids.__getitem__, chain.from_iterable(side)), dtype=np.int32)) for side in st)
    return {"tags": n, "distinct": len(ids)}


def _stats_prep(labels_prep: Callable) -> Callable:
    """The system's report and a perfect system's (the reference as prediction), scored untimed."""
    def prep(n):
        import iescore

        g, p = labels_prep(n)
        return (iescore.score_tags(reference=g, prediction=p, scheme="IOB2"),
                iescore.score_tags(reference=g, prediction=g, scheme="IOB2"))

    return prep


def _report_prep(labels_prep: Callable) -> Callable:
    """The system's full report, scored untimed."""
    def prep(n):
        import iescore

        g, p = labels_prep(n)
        return iescore.score_tags(reference=g, prediction=p, scheme="IOB2")

    return prep


def _confusion_views(r):
    """The text table with its confusion table, and the HTML page (its heatmap; documents
    listed without tokens)."""
    from iescore.render.formats import format_report
    from iescore.render.html import format_html

    table = format_report(r, "table", confusion=True)
    page = format_html(r)
    return {"f1": r.f1 or 0.0, "table_lines": table.count("\n") + 1, "html_bytes": len(page)}


def _bootstrap(st):
    """Bootstrap intervals (1,000 resamples) of micro and macro F1."""
    from iescore import stats

    b = stats.bootstrap(st[0], resamples=1000, measures=["f1", "macro_f1"])
    return {"f1": b.values["f1"] or 0.0, "interval": list(b.intervals["f1"] or ())}


def _compare(st):
    """The paired bootstrap (1,000 resamples) of the system against a perfect one: F1, P, R."""
    from iescore import stats

    c = stats.compare({"system": st[0], "perfect": st[1]}, test="bs", resamples=1000)
    return {"f1": c.systems[0]["f1"] or 0.0, "p_value": c.systems[1]["p_value"]}


def _score_docs(**options) -> Callable:
    def run(st):
        import iescore

        return _report_counts(iescore.score(reference=st[0], prediction=st[1], **options))

    return run


def _score_templates(**options) -> Callable:
    def run(st):
        import iescore

        return _report_counts(iescore.score_templates(reference=st[0], prediction=st[1], **options))

    return run


def _seqeval_f1(st):
    from seqeval.metrics import f1_score

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {"f1": f1_score(st[0], st[1])}


def _seqeval_report(st):
    from seqeval.metrics import classification_report

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rep = classification_report(st[0], st[1], output_dict=True)
    return {"f1": rep["micro avg"]["f1-score"], "gold": int(rep["micro avg"]["support"])}


def _nervaluate(st):
    from nervaluate import Evaluator

    tags = sorted({t[2:] for seq in st[0] + st[1] for t in seq if t != "O"})
    res = Evaluator(st[0], st[1], tags=tags, loader="list").evaluate()["overall"]["strict"]
    return {"f1": res.f1, "tp": res.correct, "gold": res.possible, "pred": res.actual}


def _nervaluate_spans(st):
    from nervaluate import Evaluator

    def dicts(spans):
        return [{"label": s.label, "start": s.start, "end": s.end - 1} for s in spans]  # inclusive ends

    true = [dicts(d.spans) for d in st[0]]
    pred = [dicts(p) for p in st[1]]
    res = Evaluator(true, pred, tags=["E"], loader="dict").evaluate()["overall"]["strict"]
    return {"f1": res.f1, "tp": res.correct, "gold": res.possible, "pred": res.actual}


def _count_f1(tp: int, gold: int, pred: int) -> float:
    return 2 * tp / (gold + pred) if gold + pred else 0.0


def _conlleval_standin(st):
    tp = gold = pred = 0
    for g, p in zip(*st):
        gc_, pc = conlleval_chunks(g), conlleval_chunks(p)
        tp += len(set(gc_) & set(pc))
        gold += len(gc_)
        pred += len(pc)
    return {"f1": _count_f1(tp, gold, pred), "tp": tp, "gold": gold, "pred": pred}


def _conlleval_standin_file(path):
    """conlleval's chunk rules over a CoNLL file, read line by line (sentences at blank lines)."""
    tp = gold = pred = 0
    g: list[str] = []
    p: list[str] = []

    def flush():
        nonlocal tp, gold, pred
        gc_, pc = conlleval_chunks(g), conlleval_chunks(p)
        tp += len(set(gc_) & set(pc))
        gold += len(gc_)
        pred += len(pc)
        g.clear()
        p.clear()

    with open(path, encoding="utf-8") as fh:
        for line in fh:
            parts = line.split()
            if parts:
                g.append(parts[-2])
                p.append(parts[-1])
            elif g:
                flush()
    if g:
        flush()
    return {"f1": _count_f1(tp, gold, pred), "tp": tp, "gold": gold, "pred": pred}


HEAD = re.compile(r"processed (\d+) tokens with (\d+) phrases; found: (\d+) phrases; correct: (\d+)\.")


def _iescore_cli(path):
    """``iescore score FILE`` (the console script's ``main``), its table captured."""
    from iescore.cli import main

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        rc = main(["score", str(path)])
    if rc != 0:
        raise RuntimeError(f"iescore score exited with {rc}")
    _, gold, pred, tp = (int(x) for x in HEAD.search(buf.getvalue()).groups())
    return {"f1": _count_f1(tp, gold, pred), "tp": tp, "gold": gold, "pred": pred}


class _Head(io.TextIOBase):
    """A text stream that keeps what is written up to ``keep`` characters, counts the rest
    and holds none of it."""

    def __init__(self, keep: int = 1 << 16) -> None:
        self.keep, self.head, self.chars = keep, io.StringIO(), 0

    def write(self, s: str) -> int:
        if self.chars < self.keep:
            self.head.write(s[: self.keep - self.chars])
        self.chars += len(s)
        return len(s)


def _iescore_cli_json(path):
    """``iescore score FILE --format json``, its text written to a stream that keeps only
    its beginning (the overall counts) and its length."""
    from iescore.cli import main

    out = _Head()
    with contextlib.redirect_stdout(out):
        rc = main(["score", str(path), "--format", "json"])
    if rc != 0:
        raise RuntimeError(f"iescore score exited with {rc}")
    head = out.head.getvalue()
    overall = head[head.index('"overall"'):]
    tp, gold, pred = (int(re.search(rf'"{k}": (\d+)', overall).group(1)) for k in ("tp", "support", "predicted"))
    return {"f1": _count_f1(tp, gold, pred), "tp": tp, "gold": gold, "pred": pred, "json_chars": out.chars}


def _conlleval_pl_file(path):
    """conlleval.pl itself (``perl $IESCORE_BENCH_CONLLEVAL < FILE``), its first line parsed;
    its peak RSS as GNU time reports it (``/usr/bin/time -f %M``: perl's own, not the
    forking interpreter's)."""
    with open(path, "rb") as fh:
        proc = subprocess.run(["/usr/bin/time", "-f", "%M", "perl", os.environ["IESCORE_BENCH_CONLLEVAL"]],
                              stdin=fh, capture_output=True, text=True, check=True)
    _, gold, pred, tp = (int(x) for x in HEAD.search(proc.stdout).groups())
    peak = int(proc.stderr.strip().splitlines()[-1]) * 1024
    return {"f1": _count_f1(tp, gold, pred), "tp": tp, "gold": gold, "pred": pred, "_peak_rss": peak}


def _tags_file(st) -> str:
    """Tag lists written as a CoNLL file (``w gold pred``) for conlleval.pl: the input's
    preparation, untimed; the file is removed when the child exits."""
    fd, name = tempfile.mkstemp(suffix=".conll")
    with os.fdopen(fd, "w") as fh:
        for g, p in zip(*st):
            fh.writelines(f"w {a} {b}\n" for a, b in zip(g, p))
            fh.write("\n")
    import atexit

    atexit.register(os.unlink, name)
    return name


def _peers_pl() -> bool:
    """conlleval.pl is a peer in the ``labels`` and ``cli`` cases when
    ``IESCORE_BENCH_CONLLEVAL`` (or ``--conlleval``) names a copy of it: it is not part of
    the project and not fetched."""
    return bool(os.environ.get("IESCORE_BENCH_CONLLEVAL"))


@dataclass(frozen=True)
class Tool:
    """One way of scoring a case's input: ``run(prep(size))``.

    ``compare``: the tool counts exact matches under any-match counting, so its counts must
    equal those of the case's other comparable tools.
    """

    label: str
    prep: Callable
    run: Callable
    compare: bool = True
    sizes: tuple[int, ...] | None = None  # only these of the case's sizes (None: all)
    # the input's candidate pairs grow with the square of its size by construction, and
    # iescore refuses it past a bound (the sizes above ``sizes``): not judged by the b target
    squared: bool = False


@dataclass(frozen=True)
class Case:
    label: str
    unit: str
    sizes: tuple[int, ...]
    quick: tuple[int, ...]
    tools: dict[str, Tool]
    fixed: str = ""  # what stays fixed while the size grows


LABELS_TOKENS = 1_000_000
LABELS_TOKENS_QUICK = 3_000
OVERLAP = {"rule": "O(1,1)", "counting": "one-to-one"}
LOOSE = {"rule": "O(inf,inf)", "counting": "one-to-one"}  # every overlapping pair allowed
MIN_JUDGED_S = 0.1  # the scaling target ignores pairs of sizes whose larger one is faster than this


def _labels_prep(quick: bool) -> Callable:
    return lambda n: many_labels(LABELS_TOKENS_QUICK if quick else LABELS_TOKENS, n)


def _full_and_overlap(what: str, prep: Callable, score: Callable) -> dict[str, Tool]:
    """iescore's two full-report tools on ``prep``'s input: exact, and O(1,1) one-to-one
    (``score(**options)`` builds the call)."""
    return {
        "iescore_full": Tool(f"iescore full report, exact ({what})", prep, score()),
        "iescore_overlap": Tool(f"iescore full report, O(1,1) one-to-one ({what})", prep, score(**OVERLAP),
                                compare=False),
    }


def make_cases(quick: bool = False) -> dict[str, Case]:
    """The cases with their tools (the file size of ``labels`` depends on ``quick``)."""
    labels_prep = _labels_prep(quick)
    return {
        "chain": Case(
            "one document, adjacent two-token entities, prediction one token late (a chain of overlaps)",
            "tokens", (100, 1_000, 10_000, 100_000, 1_000_000), (20, 200),
            {
                "iescore_full": Tool("iescore full report, exact (tags)", chain_tags, _score_tags()),
                "iescore_overlap": Tool("iescore full report, O(1,1) one-to-one, S/D/I, TS (tags)", chain_tags,
                                        _score_tags(**OVERLAP), compare=False),
                "iescore_prf": Tool("iescore exact P/R/F (tags, detail='prf')", chain_tags, _score_prf),
                "iescore_docs": Tool("iescore full report, O(1,1) one-to-one (Document + Spans: the spaCy Doc path)",
                                     chain_spans, _score_docs(**OVERLAP), compare=False),
                "seqeval_f1": Tool("seqeval f1_score", chain_tags, _seqeval_f1),
                "seqeval_report": Tool("seqeval classification_report", chain_tags, _seqeval_report),
                "nervaluate": Tool("nervaluate strict (list loader)", chain_tags, _nervaluate),
                "conlleval_standin": Tool("conlleval.pl's chunk rules in Python (a stand-in, not conlleval.pl)",
                                          chain_tags, _conlleval_standin),
            },
        ),
        "nested": Case(
            "one document of adjacent answers, each with a nested and an overlapping prediction (Spans)",
            "tokens", (100, 1_000, 10_000, 100_000, 1_000_000), (30, 300),
            {
                **_full_and_overlap("Document + Spans", nested_spans, _score_docs),
                "iescore_long": Tool("the same, O(1,1) one-to-one, plus one answer and one prediction over the whole "
                                     "document", nested_long, _score_docs(**OVERLAP), compare=False),
                "nervaluate": Tool("nervaluate strict (dict loader, nested spans)", nested_spans, _nervaluate_spans),
            },
        ),
        "crossing": Case(
            "one document of answers that overlap one another (a span categorizer's), predictions one token late",
            "answers", (100, 1_000, 10_000, 100_000), (10, 100),
            {
                **_full_and_overlap("Document + Spans", crossing_spans, _score_docs),
                "iescore_early": Tool("the same, O(1,1) one-to-one, predictions one token EARLY (the mirror image)",
                                      crossing_early, _score_docs(**OVERLAP), compare=False),
                "iescore_loose": Tool("the same, O(inf,inf) one-to-one: every overlapping pair allowed (five per answer)",
                                      crossing_spans, _score_docs(**LOOSE),
                                      compare=False),
                "iescore_wide": Tool("the same with spans of 12 tokens: 23 overlapping pairs per answer",
                                     crossing_wide, _score_docs(**LOOSE),
                                     compare=False),
            },
        ),
        "labels": Case(
            "a file of fixed size whose entities take many types",
            "labels", (4, 1_000, 10_000, 50_000), (4, 100),
            {
                "iescore_full": Tool("iescore full report, exact (tags)", labels_prep, _score_tags()),
                "iescore_prf": Tool("iescore exact P/R/F (tags, detail='prf')", labels_prep, _score_prf),
                "iescore_calls": Tool("iescore Scorer(scheme='IOB2'), one add_tags call per sentence, then the "
                                      "full report", labels_prep, _stream_calls(scheme="IOB2")),
                "ids_floor": Tool("the floor: every tag to an int by a dict look-up in C (no scoring)", labels_prep,
                                  _ids_floor, compare=False),
                "seqeval_f1": Tool("seqeval f1_score", labels_prep, _seqeval_f1),
                "seqeval_report": Tool("seqeval classification_report", labels_prep, _seqeval_report),
                "nervaluate": Tool("nervaluate strict (list loader)", labels_prep, _nervaluate),
                "iescore_cli": Tool("`iescore score FILE`: the same tokens as a CoNLL file (written untimed), "
                                    "its table printed", lambda n: _tags_file(labels_prep(n)), _iescore_cli),
                "iescore_cli_json": Tool("`iescore score FILE --format json`: the same file, the whole report as "
                                         "indented JSON (its text grows with the labels: 76 MB at 50,000)",
                                         lambda n: _tags_file(labels_prep(n)), _iescore_cli_json),
                "iescore_confusion": Tool("iescore's text table with --confusion and the HTML report (report "
                                          "scored untimed; the text table stops at 3,161 labels)",
                                          _report_prep(labels_prep), _confusion_views, compare=False,
                                          sizes=(4, 1_000)),
                "iescore_bootstrap": Tool("iescore.stats.bootstrap, 1,000 resamples of the documents: micro and "
                                          "macro F1 (reports scored untimed)", _stats_prep(labels_prep), _bootstrap,
                                          compare=False),
                "iescore_compare": Tool("iescore.stats.compare, paired bootstrap (1,000) against a perfect system: "
                                        "F1, precision, recall", _stats_prep(labels_prep), _compare, compare=False),
                "conlleval_standin": Tool("conlleval.pl's chunk rules in Python (a stand-in, not conlleval.pl)",
                                          labels_prep, _conlleval_standin),
                **({"conlleval_pl": Tool("conlleval.pl (perl; the input written to a file, untimed)",
                                         lambda n: _tags_file(labels_prep(n)), _conlleval_pl_file)}
                   if _peers_pl() else {}),
            },
            fixed=f"{(LABELS_TOKENS_QUICK if quick else LABELS_TOKENS):,} tokens",
        ),
        "calls": Case(
            "one call per sentence to a streaming Scorer",
            "sentences", (1_000, 10_000, 100_000), (10, 100),
            {
                "iescore_calls": Tool("iescore Scorer(scheme='IOB2'), one add_tags call per sentence, then the full "
                                      "report", sentences, _stream_calls(scheme="IOB2")),
                "iescore_calls_auto": Tool("the same with the default scheme (each call's scheme read from its "
                                           "own tags)", sentences, _stream_calls()),
                "iescore_calls_docs": Tool("iescore Scorer(), one add call per sentence as a Document with Spans "
                                           "(the spaCy Doc path), then the full report", sentence_documents,
                                           _stream_documents),
                "iescore_calls_templates": Tool("iescore Scorer(setting='OBD'), one add call per sentence as a "
                                                "Template (per label, its chunks' texts), then the full report",
                                                sentence_templates, _stream_templates, compare=False),
                "iescore_templates_one_call": Tool("iescore full OBD report, one call over the same Templates",
                                                   sentence_templates, _score_templates(), compare=False),
                "iescore_one_call": Tool("iescore full report, one call over all the sentences", sentences,
                                         _score_tags()),
                "seqeval_f1": Tool("seqeval f1_score, one call over all the sentences", sentences, _seqeval_f1),
                "conlleval_standin": Tool("conlleval.pl's chunk rules in Python (a stand-in, not conlleval.pl)",
                                          sentences, _conlleval_standin),
            },
        ),
        "cli": Case(
            "`iescore score FILE` on a big CoNLL file (token gold pred)",
            "bytes", (20 * MB, 200 * MB, 2000 * MB), (200_000, 2 * MB),
            {
                "iescore_cli": Tool("`iescore score FILE` (cli.main in a fresh interpreter)", Path, _iescore_cli),
                "conlleval_standin": Tool("conlleval.pl's chunk rules in Python, streaming (a stand-in, not conlleval.pl)",
                                          Path, _conlleval_standin_file, sizes=(200_000, 2 * MB, 20 * MB, 200 * MB)),
                # conlleval.pl streams at a rate that does not depend on the size: up to 20 MB
                **({"conlleval_pl": Tool("conlleval.pl (perl, reading the file)", Path, _conlleval_pl_file,
                                         sizes=(200_000, 2 * MB, 20 * MB))}
                   if _peers_pl() else {}),
            },
        ),
        "longline": Case(
            "`iescore score FILE` on a file of one line: a token of n bytes, then its two tags",
            "bytes", (10 * MB, 100 * MB, 1000 * MB), (200_000, 2 * MB),
            {
                "iescore_cli": Tool("`iescore score FILE` (cli.main in a fresh interpreter)", long_line_file,
                                    _iescore_cli),
                "conlleval_standin": Tool("conlleval.pl's chunk rules in Python, streaming (a stand-in, not "
                                          "conlleval.pl)", long_line_file, _conlleval_standin_file),
                **({"conlleval_pl": Tool("conlleval.pl (perl, reading the file)", long_line_file,
                                         _conlleval_pl_file)} if _peers_pl() else {}),
            },
        ),
        "templates": Case(
            "one OBD template, two slots of n fillers (half exact, half a prefix; all share a token)",
            "fillers per slot", (10, 100, 1_000, 10_000, 100_000), (10, 100),
            {
                **_full_and_overlap("templates", templates, _score_templates),
                "iescore_tie": Tool("iescore full report, exact, ONE slot of n fillers with a 2x2 tie",
                                    tied_templates, _score_templates(), compare=False),
                "iescore_dense": Tool("iescore full report, exact, ONE slot whose fillers all hold one token but "
                                      "one answer (n² pairs share it)", dense_templates, _score_templates(),
                                      compare=False),
                "iescore_short": Tool("iescore full report, exact, ONE slot of n answers (1% without the shared "
                                      "token) and n - n/1000 predictions", short_templates, _score_templates(),
                                      compare=False),
                "iescore_share": Tool("iescore full report, exact, ONE slot whose token \"the\" is on 30% of the "
                                      "fillers of each side ((0.3 n)² pairs share it; refused by design from 10k: "
                                      "more pairs than one slot may make)", share_templates,
                                      _score_templates(), compare=False, sizes=_LISTED, squared=True),
                "iescore_share_wrong": Tool("iescore full report, exact, ONE slot, \"the\" on 30% of each side and "
                                            "10% of the predictions wrong, at random (fillers with \"the\" "
                                            "and without a counterpart on both sides tie; refused from 10k)",
                                            share_wrong_templates, _score_templates(), compare=False, sizes=_LISTED, squared=True),
                "iescore_two_hubs": Tool("iescore full report, exact, ONE slot as share_wrong but \"the\" and "
                                         "\"of\" each on 30% (all their holders' pairs listed; refused from 10k)",
                                         two_hubs_templates, _score_templates(), compare=False, sizes=_LISTED, squared=True),
                "iescore_excess": Tool("iescore full report, exact, ONE slot of n answers, 40% without the "
                                       "shared token, and n/2 predictions (each such answer with each stand-in; "
                                       "refused from 10k)", excess_templates, _score_templates(), compare=False,
                                       sizes=_LISTED, squared=True),
                "iescore_ties": Tool("iescore full report, exact, ONE slot of n/4 2x2 ties (a token of their own) "
                                     "among as many fillers that share nothing", ties_templates, _score_templates(),
                                     compare=False),
            },
        ),
    }


# --- the child process -----------------------------------------------------------------------

def _status(key: str) -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(key):
                return int(line.split()[1]) * 1024
    return 0


# a call shorter than this is timed REPEATS times, on input built afresh, and its median kept:
# the time of one short call moves by 20% from run to run on this VM, which alone moves the
# exponent b between 10x sizes by up to 0.08
REPEAT_UNDER_S = 2.0
REPEATS = 3


def child(case: str, tool: str, size: int, quick: bool, cap: int, path: str | None) -> None:
    """Run one (case, tool, size) and print one JSON line: seconds (the median of the timed
    calls), every call's seconds, RSS before and peak RSS (of the first call)."""
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    t = make_cases(quick)[case].tools[tool]
    t0 = None
    try:
        if case == "cli":
            import iescore.cli
        else:  # import the tool's modules and warm it up on the smallest quick input
            tiny = make_cases(quick=True)[case]
            t.run(tiny.tools[tool].prep(tiny.quick[0]))
        p0 = time.perf_counter()
        state = t.prep(path if path else size)
        prep_s = time.perf_counter() - p0
        gc.collect()
        print("ready", flush=True)
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")  # reset VmHWM to the current RSS
        before = _status("VmRSS:")
        t0 = time.perf_counter()
        result = t.run(state)
        times = [time.perf_counter() - t0]
        peak = _status("VmHWM:")  # of the first call
        if "_peak_rss" in result:  # a peer in its own process (perl): its peak, from nothing
            before, peak = 0, result.pop("_peak_rss")
        # a short call is timed again (unless its input is slow to build: the time limit
        # counts from here)
        while times[0] < REPEAT_UNDER_S and prep_s < 10 and len(times) < REPEATS:
            del state
            gc.collect()
            state = t.prep(path if path else size)
            gc.collect()
            t0 = time.perf_counter()
            again = t.run(state)
            times.append(time.perf_counter() - t0)
            again.pop("_peak_rss", None)
            assert again == result, f"{tool} gave {again} after {result}"
    except MemoryError:  # the time until the allocation failed (None: while building the input)
        after = None if t0 is None else time.perf_counter() - t0
        print(json.dumps({"status": "out of memory", "seconds_to_failure": after}), flush=True)
        return
    print(json.dumps({"status": "ok", "seconds": statistics.median(times), "all_seconds": times, "rss_before": before,
                      "peak_rss": peak, "peak_extra": peak - before, "result": result}), flush=True)


def measure(case: str, tool: str, size: int, *, quick: bool, limit: float, cap: int, path: str | None = None) -> dict:
    """Run :func:`child` in a fresh interpreter; the time limit applies to the timed call."""
    cmd = [sys.executable, __file__, "--child", case, tool, str(size), "--cap-bytes", str(cap)]
    if quick:
        cmd.append("--quick")
    if path:
        cmd += ["--path", path]
    with tempfile.TemporaryFile("w+") as err_file:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err_file, text=True)
        assert proc.stdout is not None
        first = proc.stdout.readline()  # the input is built (untimed)
        try:
            proc.wait(timeout=None if first.strip() != "ready" else limit)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            proc.stdout.close()
            return {"status": "timed out", "limit_s": limit}
        out = first + proc.stdout.read()
        proc.stdout.close()
        err_file.seek(0)
        err = err_file.read()
    return _failed(out, err) if proc.returncode or not out.strip() else json.loads(out.strip().splitlines()[-1])


def _failed(out: str, err: str) -> dict:
    for line in reversed(out.strip().splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    if "MemoryError" in err or "Cannot allocate memory" in err or "std::bad_alloc" in err:
        return {"status": "out of memory"}
    return {"status": "error", "error": err.strip().splitlines()[-1] if err.strip() else "no output"}


# --- the run ---------------------------------------------------------------------------------

def _mem_available() -> int:
    with open("/proc/meminfo") as fh:
        for line in fh:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    return 0


def exponent(n1: float, r1: dict, n2: float, r2: dict) -> dict | None:
    """The scaling exponent b (t ~ n^b) between two sizes: ``log(t2/t1) / log(n2/n1)``; a
    lower bound (``">"``) when the larger size timed out."""
    if r1.get("status") != "ok":
        return None
    if r2.get("status") == "ok":
        return {"b": math.log(r2["seconds"] / r1["seconds"]) / math.log(n2 / n1), "bound": "="}
    if r2.get("status") == "timed out":
        return {"b": math.log(r2["limit_s"] / r1["seconds"]) / math.log(n2 / n1), "bound": ">"}
    return None


def check_agreement(case: str, size: int, results: dict[str, dict], tools: dict[str, Tool]) -> None:
    """Every comparable tool's counts equal the first comparable tool's (F1 to 1e-9)."""
    base_name, base = None, None
    for name, res in results.items():
        if not tools[name].compare or res.get("status") != "ok":
            continue
        if base is None:
            base_name, base = name, res["result"]
            continue
        for key in ("f1", "tp", "gold", "pred"):
            a, b = base.get(key), res["result"].get(key)
            if a is None or b is None:
                continue
            if abs(a - b) > 1e-9:
                raise SystemExit(f"{case} at {size}: {name} gives {key}={b}, {base_name} {key}={a}")


def run_case(name: str, case: Case, args, cap: int) -> dict:
    sizes = case.quick if args.quick else case.sizes
    out: dict = {"label": case.label, "unit": case.unit, "fixed": case.fixed, "sizes": list(sizes),
                 "load_before": os.getloadavg(),
                 "tools": {t: {"label": tl.label, "only_sizes": list(tl.sizes) if tl.sizes else None,
                               "squared": tl.squared, "runs": {}}
                           for t, tl in case.tools.items()}}
    stopped: set[str] = set()
    for size in sizes:
        path = None
        info: dict = {}
        todo = [t for t, tl in case.tools.items() if t not in stopped and (tl.sizes is None or size in tl.sizes)]
        if name == "cli" and todo:
            free = shutil.disk_usage(args.tmp).free
            if free < size * 1.5 + 2 * GIB:
                out.setdefault("notes", []).append(f"{size} bytes: not run, only {free / GIB:.1f} GiB free in {args.tmp}")
                break
            fd, path = tempfile.mkstemp(suffix=".conll", dir=args.tmp)
            os.close(fd)
            t0 = time.perf_counter()
            info = write_conll(Path(path), size)
            info["write_s"] = time.perf_counter() - t0
            out.setdefault("files", {})[str(size)] = info
        results = {}
        try:
            for tool in todo:
                this_cap = min(cap, max(2 * GIB, _mem_available() - 3 * GIB))
                r = measure(name, tool, size, quick=args.quick, limit=args.cli_limit if name == "cli" else args.limit,
                            cap=this_cap, path=path)
                r["mem_cap"] = this_cap
                r["load"] = os.getloadavg()[0]
                results[tool] = r
                out["tools"][tool]["runs"][str(size)] = r
                shown = f"{r['seconds']:.3f} s, peak +{r['peak_extra'] / MB:.1f} MB" if r["status"] == "ok" else r["status"]
                print(f"{name} {tool} {size}: {shown}", file=sys.stderr, flush=True)
                if r["status"] != "ok":
                    stopped.add(tool)
        finally:
            if path:
                os.unlink(path)
        check_agreement(name, size, results, case.tools)
    for tool, rec in out["tools"].items():
        runs = rec["runs"]
        done = [s for s in sizes if str(s) in runs]
        rec["exponents"] = {f"{a}->{b}": exponent(a, runs[str(a)], b, runs[str(b)]) for a, b in zip(done, done[1:])}
    out["load_after"] = os.getloadavg()
    return out


def _size(n: int, unit: str) -> str:
    if unit == "bytes":
        return f"{n / MB:g} MB" if n < 1000 * MB else f"{n / 1000 / MB:g} GB"
    if n >= 1_000_000 and n % 1_000_000 == 0:
        return f"{n // 1_000_000}M"
    if n >= 1000 and n % 1000 == 0:
        return f"{n // 1000}k"
    return str(n)


def _cell(r: dict | None, by_design: bool = False) -> str:
    if r is None:
        return "not run (by design)" if by_design else "not run"
    if r["status"] == "ok":
        return f"{r['seconds']:.3g} s, +{r['peak_extra'] / MB:.0f} MB"
    if r["status"] == "timed out":
        return f"timed out after {r['limit_s']:g} s"
    if r["status"] == "out of memory":
        when = f" after {r['seconds_to_failure']:.3g} s" if r.get("seconds_to_failure") is not None else ""
        return f"out of memory{when} (cap {r['mem_cap'] / GIB:.1f} GiB)"
    return "error: " + r.get("error", "")[:60]


def render(results: dict) -> str:
    lines = [f"Adversarial inputs ({results['when']}; {results['cpus']} CPUs; load average "
             f"{results['load_before'][0]:.2f} at the start, {results['load_after'][0]:.2f} at the end; "
             f"per-size limit {results['limit_s']:g} s, {results['cli_limit_s']:g} s for the CLI; "
             f"address space capped at {results['mem_cap'] / GIB:.1f} GiB; the whole run took "
             f"{results.get('total_s', 0) / 60:.1f} min).", "",
             "Each cell: wall time of one call in a fresh process (of a call under 2 s, the median "
             "of three), and its peak extra memory (peak RSS during the first call minus RSS before it). b: the scaling exponent "
             "log(t2/t1)/log(n2/n1) between consecutive sizes (`>`: a lower bound, the larger size timed out). "
             "not run: a smaller size of the same tool timed out or ran out of memory.", ""]
    for name, case in results["cases"].items():
        sizes = case["sizes"]
        fixed = f"; fixed: {case['fixed']}" if case["fixed"] else ""
        lines += [f"### `{name}`: {case['label']}", "",
                  f"Sizes in {case['unit']}{fixed}; load average {case['load_before'][0]:.2f} before, "
                  f"{case['load_after'][0]:.2f} after.", ""]
        pairs = list(zip(sizes, sizes[1:]))
        head = ["tool"] + [_size(s, case["unit"]) for s in sizes] + [f"b {_size(a, case['unit'])}→{_size(b, case['unit'])}" for a, b in pairs]
        lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for tool, rec in case["tools"].items():
            only = rec.get("only_sizes")
            row = [f"`{tool}` {rec['label']}"] + [_cell(rec["runs"].get(str(s)), only is not None and s not in only)
                                                  for s in sizes]
            for a, b in pairs:
                e = rec["exponents"].get(f"{a}->{b}")
                row.append("-" if e is None else f"{'> ' if e['bound'] == '>' else ''}{e['b']:.2f}")
            lines.append("| " + " | ".join(row) + " |")
        if name == "cli" and case.get("files"):
            lines += ["", "Files: " + "; ".join(f"{_size(int(s), 'bytes')}: {f['bytes']:,} bytes, {f['tokens']:,} tokens"
                                                  for s, f in case["files"].items())]
            thr = []
            for tool, rec in case["tools"].items():
                for s, r in rec["runs"].items():
                    if r["status"] == "ok":
                        thr.append(f"`{tool}` at {_size(int(s), 'bytes')}: {case['files'][s]['bytes'] / MB / r['seconds']:.1f} MB/s, "
                                   f"peak RSS {r['peak_rss'] / MB:.0f} MB")
            lines += ["", "Throughput and absolute peak RSS: " + "; ".join(thr) + "."]
        for note in case.get("notes", []):
            lines += ["", f"Note: {note}"]
        lines.append("")
    lines += ["### Targets", "", "| target | today |", "|---|---|"]
    lines += [f"| {t} | {v} |" for t, v in targets(results)]
    return "\n".join(lines) + "\n"


def targets(results: dict) -> list[tuple[str, str]]:
    """The issue's targets, each with what this run measured (and met / NOT met)."""
    cases = results["cases"]
    out = []
    worst = []
    squared = []
    for name, case in cases.items():
        for tool, rec in case["tools"].items():
            if not tool.startswith("iescore"):
                continue
            if rec.get("squared"):
                squared.append(f"{name}/{tool}")
                continue
            runs = rec["runs"]
            # judged only where the larger size takes >= MIN_JUDGED_S (or timed out): below
            # that, a call's fixed cost and the machine's noise decide b
            bs = [(e, k.split("->")) for k, e in rec["exponents"].items() if e is not None
                  and runs[k.split("->")[1]].get("seconds", math.inf) >= MIN_JUDGED_S]
            if bs:
                e, (n1, n2) = max(bs, key=lambda x: x[0]["b"])
                unit = case["unit"]
                worst.append((e["b"], f"{name}/{tool} {'> ' if e['bound'] == '>' else ''}{e['b']:.2f} "
                                      f"({_cell(runs[n1])} at {_size(int(n1), unit)}, {_cell(runs[n2])} at "
                                      f"{_size(int(n2), unit)})"))
    if worst:
        bad = [w for w in worst if w[0] > 1.15]
        out.append((f"every adversarial case scales with b <= 1.15 between 10x sizes (iescore's tools; pairs whose "
                    f"larger size takes >= {MIN_JUDGED_S:g} s or timed out)",
                    ("met" if not bad else "NOT met: " + ", ".join(s for _, s in sorted(bad, reverse=True)))))
    if squared:
        out.append(("inputs whose candidate pairs grow with the square of their size (one OBD slot of n fillers, "
                    "a share of them holding one token): refused by design past the pairs one slot may make",
                    "not judged by b: " + ", ".join(squared)))
    chain = cases.get("chain")
    if chain:
        big = max(chain["sizes"])
        r = chain["tools"].get("iescore_overlap", {}).get("runs", {}).get(str(big))
        ok = r is not None and r["status"] == "ok" and r["seconds"] < 3
        out.append((f"a one-document {_size(big, 'tokens')}-token chain gets its full report (O(1,1), one-to-one, S/D/I, TS) in < 3 s",
                    ("met: " if ok else "NOT met: ") + _reached(chain, "iescore_overlap")))
    labels = cases.get("labels")
    if labels:
        big, small = max(labels["sizes"]), min(labels["sizes"])
        floor = labels["tools"].get("ids_floor", {}).get("runs", {})
        f, f0 = floor.get(str(big)), floor.get(str(small))
        floor_txt = (f"; the floor (ids_floor) alone takes {f['seconds'] / f0['seconds']:.1f}x"
                     if f and f0 and f["status"] == f0["status"] == "ok" else "")
        for tool in ("iescore_full", "iescore_prf", "iescore_cli", "iescore_cli_json"):
            if tool not in labels["tools"]:
                continue
            runs = labels["tools"].get(tool, {}).get("runs", {})
            r, r0 = runs.get(str(big)), runs.get(str(small))
            # the JSON holds every label's measures: its text, so its time, grows with the labels;
            # only its memory is judged
            json_out = tool == "iescore_cli_json"
            if r and r0 and r["status"] == "ok" and r0["status"] == "ok":
                ratio = r["seconds"] / r0["seconds"]
                ok = r["peak_extra"] < 200 * MB and (json_out or ratio <= 2)
                txt = (f"{'met' if ok else 'NOT met'}: +{r['peak_extra'] / MB:.0f} MB, {ratio:.1f}x the {small}-label time"
                       + (f" (JSON of {r['result']['json_chars'] / MB:.0f} MB against {r0['result']['json_chars'] / 1024:.0f} KB)"
                          if json_out else "" if tool == "iescore_cli" else floor_txt))
            else:
                txt = "NOT met: " + _reached(labels, tool)
            want = ("peak extra memory < 200 MB (its time grows with its text)" if json_out else
                    f"peak extra memory < 200 MB and time <= 2x a {small}-label file of the same size")
            out.append((f"{big:,} labels ({tool}): {want}", txt))
    cli = cases.get("cli")
    if cli:
        big = max(cli["sizes"])
        r = cli["tools"]["iescore_cli"]["runs"].get(str(big))
        def mbps(tool: str) -> list[tuple[int, float]]:
            runs = cli["tools"].get(tool, {}).get("runs", {})
            return sorted((int(s), cli["files"][s]["bytes"] / MB / x["seconds"]) for s, x in runs.items() if x["status"] == "ok")

        mine = dict(mbps("iescore_cli"))
        if r and r["status"] == "ok":
            txt = f"peak RSS {r['peak_rss'] / MB:.0f} MB, {mine[big]:.1f} MB/s"
            ok = r["peak_rss"] < 500 * MB
        else:
            txt, ok = _reached(cli, "iescore_cli"), False
        perl = mbps("conlleval_pl")
        if perl:  # judged at the largest size both ran (conlleval.pl streams: its rate does not depend on size)
            s, rate = perl[-1]
            at = max((k for k in mine if k <= s), default=None) if s not in mine else s
            if at is None:
                at = min(mine) if mine else None
            if at is not None:
                ratio = mine[at] / rate
                ok = ok and ratio >= 5
                txt += (f"; conlleval.pl reads {rate:.1f} MB/s at {_size(s, 'bytes')}, iescore {mine[at]:.1f} MB/s at "
                        f"{_size(at, 'bytes')}: {ratio:.1f}x")
            label = "met" if ok else "NOT met"
        else:
            std = mbps("conlleval_standin")
            if std:
                s, rate = std[-1]
                txt += (f"; the Python stand-in for conlleval.pl reads {rate:.1f} MB/s at {_size(s, 'bytes')} "
                        "(conlleval.pl itself was not given (--conlleval), so the 5x throughput part is not judged)")
            label = "met (memory)" if ok else "NOT met"
        out.append((f"`iescore score` on a {_size(big, 'bytes')} CoNLL file: peak RSS < 500 MB, throughput >= 5x conlleval.pl",
                    f"{label}: {txt}"))
    long = cases.get("longline")
    if long and "iescore_cli" in long["tools"]:
        big = max(long["sizes"])
        r = long["tools"]["iescore_cli"]["runs"].get(str(big))
        ok = r is not None and r["status"] == "ok" and r["peak_extra"] <= 5 * big
        txt = (f"{r['seconds']:.3g} s, +{r['peak_extra'] / MB:.0f} MB ({r['peak_extra'] / big:.1f}x the line)"
               if r is not None and r["status"] == "ok" else _reached(long, "iescore_cli"))
        out.append((f"`iescore score` on a file of one line of {_size(big, 'bytes')}: peak extra memory <= 5x the line "
                    "(time: the b above)", f"{'met' if ok else 'NOT met'}: {txt}"))
    return out


def _reached(case: dict, tool: str) -> str:
    """The largest size the tool finished, and what happened at the next one."""
    runs = case["tools"][tool]["runs"]
    ok = [int(s) for s, r in runs.items() if r["status"] == "ok"]
    parts = []
    if ok:
        s = max(ok)
        unit = "" if case["unit"] == "bytes" else f" {case['unit']}"
        parts.append(f"{_size(s, case['unit'])}{unit} took {runs[str(s)]['seconds']:.3g} s, +{runs[str(s)]['peak_extra'] / MB:.0f} MB")
    bad = [(int(s), r) for s, r in runs.items() if r["status"] != "ok"]
    if bad:
        s, r = min(bad, key=lambda x: x[0])
        parts.append(f"{_size(s, case['unit'])}: {_cell(r)}")
    larger = [s for s in case["sizes"] if str(s) not in runs]
    if larger:
        parts.append("larger sizes not run")
    return "; ".join(parts)


def _superseded(note: str, tools: dict) -> bool:
    """Whether ``note`` is a rerun note of tools that are all among ``tools``.

    >>> _superseded("`a`, `b` rerun on day 2 (...)", {"a": 1, "b": 2, "c": 3}), _superseded("`a`, `d` rerun on x", {"a": 1})
    (True, False)
    """
    m = re.match(r"((?:`[^`]+`(?:, )?)+) (?:re)?run on ", note)
    return m is not None and set(re.findall(r"`([^`]+)`", m.group(1))) <= set(tools)


def _case_when(case: dict, when: str) -> str:
    """When ``case``'s rows were run unless a note says otherwise: ``when`` (the whole run's),
    or the date of the latest note saying the case was run or rerun whole.

    >>> _case_when({"notes": ["rerun on day 3, the other cases are from the run of day 1"]}, "day 1")
    'day 3'
    """
    for note in reversed(case.get("notes", [])):
        m = re.match(r"(?:re)?run on (.+?), (?:the other cases are from|added to) the run of ", note)
        if m:
            return m.group(1)
    return when


def merge(old: dict, new: dict) -> dict:
    """``old`` with the (case, tool) records of ``new`` put in place, and a note in each
    case saying which tools were rerun when and under what load; an earlier such note
    whose tools were all rerun now goes (its rows are gone)."""
    for name, case in new["cases"].items():
        if name not in old["cases"]:
            case.setdefault("notes", []).append(f"run on {new['when']}, added to the run of {old['when']}")
            old["cases"][name] = case
            continue
        prev = old["cases"][name]
        if set(prev["tools"]) <= set(case["tools"]):  # every row rerun: the new run replaces the case
            case.setdefault("notes", []).append(f"rerun on {new['when']}, the other cases are from the run of "
                                                f"{old['when']}")
            old["cases"][name] = case
            continue
        again = "rerun" if set(case["tools"]) & set(prev["tools"]) else "run"
        prev["tools"].update(case["tools"])
        prev["sizes"] = sorted(set(prev["sizes"]) | set(case["sizes"]))
        if case.get("files"):
            prev.setdefault("files", {}).update(case["files"])
        prev["notes"] = [n for n in prev.get("notes", []) if not _superseded(n, case["tools"])]
        prev["notes"].append(
            f"{', '.join(f'`{t}`' for t in case['tools'])} {again} on {new['when']} (load average "
            f"{case['load_before'][0]:.2f} before, {case['load_after'][0]:.2f} after); the other rows are from "
            f"the run of {_case_when(prev, old['when'])}")
        for note in case.get("notes", []):
            prev["notes"].append(note)
    return old


def _tables(lines: list[str]) -> dict[str, tuple[int, int]]:
    """Where the tables are in ``lines`` (adversarial.md, or the "## Adversarial inputs"
    section of docs/performance.md): by the key of their "### " heading (the case's name, or "Targets"),
    the [start, end) line numbers of the first table under it."""
    out: dict[str, tuple[int, int]] = {}
    key, start = None, None
    for i, line in enumerate(lines + [""]):
        if key and key not in out:
            if line.startswith("|") and start is None:
                start = i
            elif not line.startswith("|") and start is not None:
                out[key], start = (start, i), None
        if line.startswith("### "):
            key = line[4:].split("`")[1] if line.startswith("### `") else line[4:].split()[0]
    return out


def sync_page(page: str, md: str) -> str:
    """``page`` (docs/performance.md) with each table of its "## Adversarial inputs" section
    replaced by the table of the same case (or the targets) in ``md`` (adversarial.md): the
    page's tables are the run's, never copied by hand. A case missing from either side is an
    error."""
    lines = page.split("\n")
    first = lines.index("## Adversarial inputs")
    last = next((i for i in range(first + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    section = lines[first:last]
    mine, theirs = _tables(section), _tables(md.split("\n"))
    if set(mine) != set(theirs):
        raise ValueError(f"the page's tables {sorted(mine)} but adversarial.md tables {sorted(theirs)}")
    md_lines = md.split("\n")
    for key, (a, b) in sorted(mine.items(), key=lambda kv: -kv[1][0]):  # from the end: the positions hold
        c, d = theirs[key]
        section[a:b] = md_lines[c:d]
    return "\n".join(lines[:first] + section + lines[last:])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="tiny sizes (a few seconds)")
    ap.add_argument("--cases", default="chain,nested,crossing,labels,calls,cli,longline,templates")
    ap.add_argument("--tools", default="", help="comma-separated tool names to keep (default: all)")
    ap.add_argument("--limit", type=float, default=100.0, help="seconds per timed call before it is killed")
    ap.add_argument("--cli-limit", type=float, default=600.0, help="the same for the cli case")
    ap.add_argument("--mem-cap", type=float, default=16.0, help="GiB of address space per child (RLIMIT_AS)")
    ap.add_argument("--conlleval", metavar="PATH", help="a copy of conlleval.pl: time it as a peer "
                    "(labels and cli cases; also read from IESCORE_BENCH_CONLLEVAL)")
    ap.add_argument("--merge", action="store_true", help="update the cases and tools run in an "
                    "existing adversarial.json (in --out) instead of replacing it")
    ap.add_argument("--tmp", default=tempfile.gettempdir(), help="folder for the generated CoNLL files")
    ap.add_argument("--out", default=str(HERE / "out"))
    ap.add_argument("--render", metavar="JSON", help="only rewrite adversarial.md (in --out) from a results file")
    ap.add_argument("--docs", "--readme", metavar="PATH", dest="docs",
                    help="only copy adversarial.md's tables (in --out) into the page at PATH "
                    "(docs/performance.md), in place (its section \"## Adversarial inputs\")")
    ap.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    ap.add_argument("--path", help=argparse.SUPPRESS)
    ap.add_argument("--cap-bytes", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        child(args.child[0], args.child[1], int(args.child[2]), args.quick, args.cap_bytes, args.path)
        return 0
    out = Path(args.out)
    if args.docs:
        page = Path(args.docs)
        page.write_text(sync_page(page.read_text(), (out / "adversarial.md").read_text()))
        return 0
    if args.render:
        table = render(json.loads(Path(args.render).read_text()))
        (out / "adversarial.md").write_text(table)
        print(table)
        return 0
    if args.conlleval:
        os.environ["IESCORE_BENCH_CONLLEVAL"] = str(Path(args.conlleval).resolve())
    os.environ["IESCORE_BENCH_TMP"] = str(Path(args.tmp).resolve())  # (the children's files: longline)
    cap = int(min(args.mem_cap * GIB, max(2 * GIB, _mem_available() - 3 * GIB)))
    all_cases = make_cases(args.quick)
    keep = {t for t in args.tools.split(",") if t}
    results = {"when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "cpus": os.cpu_count(),
               "python": sys.version.split()[0], "quick": args.quick, "limit_s": args.limit,
               "cli_limit_s": args.cli_limit, "mem_cap": cap, "load_before": os.getloadavg(), "cases": {}}
    t0 = time.perf_counter()
    for name in [c for c in args.cases.split(",") if c]:
        case = all_cases[name]
        if keep:
            case = Case(case.label, case.unit, case.sizes, case.quick,
                        {t: v for t, v in case.tools.items() if t in keep}, case.fixed)
        results["cases"][name] = run_case(name, case, args, cap)
    results["load_after"] = os.getloadavg()
    results["total_s"] = time.perf_counter() - t0
    if args.merge and (out / "adversarial.json").exists():
        results = merge(json.loads((out / "adversarial.json").read_text()), results)
    out.mkdir(parents=True, exist_ok=True)
    (out / "adversarial.json").write_text(json.dumps(results, indent=2))
    table = render(results)
    (out / "adversarial.md").write_text(table)
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
