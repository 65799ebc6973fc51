"""The start of the pipeline for Documents (AO) and Templates (OBD): their spans and
fillers as units, then scored.

`_documents_part` checks that predictions fit their reference documents, builds
both sides' units (with normalised strings where the setting or mode compares
strings, and per-t-unit weights when documents carry them) and hands them to
`_score_units`; `_templates_part` does the same for
OBD templates, whose fillers have no positions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import chain, repeat
from operator import attrgetter
from typing import Any

import numpy as np

from ..config import Config, get_normaliser
from ..errors import ConfigError, InputError
from ..ids import check_unique, string_hash
from ..match.units import Units
from ..model import Document, Span, Template
from .part import _keys, _label_space, _removed, _score_units
from .partdata import _I64, _Part, _scaled_ts

_LABEL, _START, _END, _SCORE = (attrgetter(a) for a in ("label", "start", "end", "score"))


def checked_documents(reference: Sequence[Any], prediction: Sequence[Any]) -> tuple[list[str], list[tuple[Span, ...]]]:
    """The checks of `_documents_part` (documents and their ids, predictions that fit
    them): the ids, and each document's predicted spans (tuples made Spans)."""
    for k, ref in enumerate(reference):
        if not isinstance(ref, Document):
            raise InputError(f"reference #{k} is {type(ref).__name__}, not a Document")
    ids = [d.id for d in reference]
    check_unique(ids)
    pred_spans: list[tuple[Span, ...]] = []
    for k, (ref, pred) in enumerate(zip(reference, prediction)):
        if isinstance(pred, Document):
            if pred.id != ref.id:
                raise InputError(f"prediction #{k} has document id {pred.id!r} but the reference has {ref.id!r}")
            if pred.tokens != ref.tokens:
                raise InputError(
                    f"document {ref.id!r}: the prediction's tokens differ from the reference's "
                    f"({len(pred.tokens)} vs {len(ref.tokens)} tokens); align them first (iescore.adapters)"
                )
            spans = pred.spans
        else:
            spans = tuple(pred)
            if not all(map(isinstance, spans, repeat(Span))):
                spans = tuple(s if isinstance(s, Span) else Span(*s) for s in spans)
            if max(map(_END, spans), default=0) > len(ref.tokens):
                s = next(s for s in spans if s.end > len(ref.tokens))
                raise InputError(
                    f"document {ref.id!r}: predicted span ({s.label!r}, {s.start}, {s.end}) "
                    f"is outside the document's {len(ref.tokens)} tokens"
                )
        pred_spans.append(spans)
    return ids, pred_spans


def multi_instance(spans: Sequence[Span], supertags: Mapping[str, str]) -> bool:
    """Do two spans of one label (after ``supertags`` merge labels) overlap? What makes the
    token & separator model reject a batch (`check_multi_instance`).

    >>> multi_instance([Span("A", 0, 2), Span("B", 1, 3)], {}), multi_instance([Span("A", 0, 2), Span("A", 1, 3)], {})
    (False, True)
    >>> multi_instance([Span("A", 0, 2), Span("B", 1, 3)], {"B": "A"})
    True
    >>> multi_instance([Span("A", 2, 3), Span("A", 0, 2)], {})  # adjacent, not overlapping
    False
    """
    if len(spans) < 2:
        return False
    end: dict[str, int] = {}  # per label, the furthest end of the spans before
    for start, label, stop in sorted((sp.start, supertags.get(sp.label, sp.label), sp.end) for sp in spans):
        if start < end.get(label, -1):
            return True
        end[label] = max(end.get(label, -1), stop)
    return False


def _documents_part(reference: list[Document], prediction: list[Any], cfg: Config,
                    checked: tuple[list[str], list[tuple[Span, ...]]] | None = None) -> _Part:
    """The part of a batch of Documents; ``checked``: what `checked_documents`
    returned for them, when the caller ran it already."""
    ids, pred_spans = checked if checked is not None else checked_documents(reference, prediction)
    names = set(map(_LABEL, chain.from_iterable(d.spans for d in reference)))
    names.update(map(_LABEL, chain.from_iterable(pred_spans)))
    labels, remap = _label_space(names, cfg)
    ref_spans = [d.spans for d in reference]
    removed: dict[str, dict[str, int]] = {}
    if cfg.filters_types():  # the spans of a type left out, as if never annotated
        ref_spans = _kept_spans(ref_spans, remap, "reference", cfg, removed)
        pred_spans = _kept_spans(pred_spans, remap, "prediction", cfg, removed)

    def units(docs_spans: list[tuple[Span, ...]]) -> tuple[Units, list[Span]]:
        flat = list(chain.from_iterable(docs_spans))
        n = len(flat)
        doc = np.repeat(np.arange(len(docs_spans), dtype=_I64), [len(sp) for sp in docs_spans])
        lab = np.fromiter(map(remap.__getitem__, map(_LABEL, flat)), dtype=_I64, count=n)
        st = np.fromiter(map(_START, flat), dtype=_I64, count=n)
        en = np.fromiter(map(_END, flat), dtype=_I64, count=n)
        sc = np.fromiter(map(_SCORE, flat), dtype=float, count=n)  # None: nan
        return Units(doc, lab, st, en, sc), flat

    R, rflat = units(ref_spans)
    P, pflat = units(pred_spans)
    if cfg.setting == "OBD" or cfg.mode == "one-per-string":
        r_doc, p_doc = R.doc.tolist(), P.doc.tolist()
        R = Units(R.doc, R.label, R.start, R.end, R.score,
                  _keys(lambda i: reference[r_doc[i]].span_tokens(rflat[i]), len(R), cfg))
        P = Units(P.doc, P.label, P.start, P.end, P.score,
                  _keys(lambda i: reference[p_doc[i]].span_tokens(pflat[i]), len(P), cfg))
    doc_tokens = np.fromiter((len(d.tokens) for d in reference), dtype=_I64, count=len(reference))
    unit = None
    weighted = [d.token_weights is not None or d.separator_weights is not None for d in reference]
    if any(weighted):
        tw, sw = [], []  # type: list[float], list[float]
        for d in reference:
            n = len(d.tokens)
            tw.extend(d.token_weights if d.token_weights is not None else (cfg.token_weight,) * n)
            sw.extend(d.separator_weights if d.separator_weights is not None else (cfg.separator_weight,) * max(n - 1, 0))
        unit = (np.asarray(tw, dtype=np.float64), np.asarray(sw, dtype=np.float64))
    part = _score_units(
        R, P, cfg=cfg, labels=labels, doc_ids=ids, doc_tokens=doc_tokens,
        texts_r=lambda: _texts(reference, ref_spans),
        texts_p=lambda: _texts(reference, pred_spans),
        unit_weights=unit,
    )
    for side, gone in removed.items():
        part.repairs.setdefault(side, {}).update(gone)
    if unit is not None:
        # documents without weights count as in a batch without any (scalar weights times
        # the counts), so that how documents are split into batches never changes a number
        plain = np.flatnonzero(~np.array(weighted))
        if len(plain):
            counts, totals = _scaled_ts(part, cfg)
            if part.ts_weighted is not None:
                part.ts_weighted[plain] = counts[plain]
            assert part.unit_totals is not None and totals is not None
            part.unit_totals[plain] = totals[plain]
        part.unit_digest = sum(_weights_hash(d) for d, w in zip(reference, weighted) if w) % 2**64
    return part


def _kept_spans(docs_spans: Sequence[Sequence[Span]], remap: Mapping[str, int], side: str, cfg: Config,
                removed: dict[str, dict[str, int]]) -> list[tuple[Span, ...]]:
    """Each document's spans without those of a type left out (``remap`` gives them -1),
    counted per type into ``removed`` (`_removed`)."""
    names = sorted(remap)
    number = {n: k for k, n in enumerate(names)}
    gone: list[int] = []
    out = []
    for spans in docs_spans:
        kept = tuple(sp for sp in spans if remap[sp.label] >= 0)
        if len(kept) != len(spans):
            gone += [number[sp.label] for sp in spans if remap[sp.label] < 0]
        out.append(kept)
    removed.update(_removed(names, side, np.array(gone, dtype=_I64), cfg))
    return out


def _texts(reference: list[Document], docs_spans: list[tuple[Span, ...]]) -> list[str]:
    """The text of every span ([`Document.span_text`][iescore.model.Document.span_text]), document by document."""
    out: list[str] = []
    join = " ".join
    for d, spans in zip(reference, docs_spans):
        if d.separators is None:
            toks = d.tokens
            out += [join(toks[s.start : s.end]) for s in spans]
        else:
            out += [d.span_text(s) for s in spans]
    return out


def _weights_hash(doc: Document) -> int:
    """A 64-bit hash of a document's id and its per-t-unit weights."""
    def raw(w: Sequence[float] | None) -> bytes:
        return b"-" if w is None else np.asarray(w, dtype="<f8").tobytes()

    return string_hash(doc.id, b"weights:" + raw(doc.token_weights) + b":" + raw(doc.separator_weights) + b":")


def checked_templates(reference: Sequence[Template], prediction: Sequence[Any], cfg: Config) -> list[str]:
    """The checks of `_templates_part` (the setting, the ids, predictions that are the
    reference's templates): the ids."""
    if cfg.setting != "OBD":
        raise ConfigError("templates are position-free: score them with setting='OBD'")
    ids = [t.id for t in reference]
    check_unique(ids)
    for k, (a, b) in enumerate(zip(reference, prediction)):
        if not isinstance(b, Template):
            raise InputError(f"prediction #{k} is {type(b).__name__}, not a Template")
        if a.id != b.id:
            raise InputError(f"prediction #{k} has template id {b.id!r} but the reference has {a.id!r}")
    return ids


def _templates_part(reference: list[Template], prediction: list[Template], cfg: Config,
                    ids: list[str] | None = None) -> _Part:
    """The part of a batch of Templates; ``ids``: what `checked_templates` returned
    for them, when the caller ran it already."""
    if ids is None:
        ids = checked_templates(reference, prediction, cfg)
    names = {lab for t in list(reference) + list(prediction) for lab in t.slots}
    labels, remap = _label_space(names, cfg)
    norm = get_normaliser(cfg.normaliser)
    removed: dict[str, dict[str, int]] = {}

    def units(ts: list[Template], side: str) -> Units:
        rows = [(k, lab, f, s) for k, t in enumerate(ts) for lab, f, s in t.fillers()]
        if cfg.filters_types():  # the slots of a type left out, as if never filled
            order = sorted(remap)
            removed.update(_removed(order, side, np.array([order.index(r[1]) for r in rows if remap[r[1]] < 0],
                                                          dtype=_I64), cfg))
            rows = [r for r in rows if remap[r[1]] >= 0]
        n = len(rows)
        return Units(
            np.fromiter((r[0] for r in rows), dtype=_I64, count=n),
            np.fromiter((remap[r[1]] for r in rows), dtype=_I64, count=n),
            None,
            None,
            np.fromiter((np.nan if r[3] is None else r[3] for r in rows), dtype=float, count=n),
            [tuple(x for x in (norm(t) for t in r[2]) if x) for r in rows],
        )

    part = _score_units(
        units(reference, "reference"), units(prediction, "prediction"), cfg=cfg, labels=labels, doc_ids=ids,
        doc_tokens=None, texts_r=None, texts_p=None,
    )
    for side, counts in removed.items():
        part.repairs.setdefault(side, {}).update(counts)
    return part
