"""The start of the pipeline for relations and entity links (``task="relations"``,
``task="links"``): a batch's records as units of the engine, matched, counted and kept
as a `_Part` (Concepts: relations and links).

A relation or a link is one *unit* of `iescore.match.count`, so counting (any /
one-to-one), match-best, Makhoul's alignment (C/S/D/I), the per-document cells, the
confusion table, the error categories and every view work as for spans. What differs is
how the candidate pairs are found (`iescore.match.relations`, `iescore.match.links`),
the rows (relation labels; for links the mention's entity type, with a true positive
counted in its answer's row when types are not compared), and the items: a relation's
start and end are -1 (its arguments are in ``ItemTable.args``) and its text is
``"head text -> tail text"``; a link is its mention, with ``ItemTable.ids``.

* relations by position (Documents, setting AO): a unit per relation;
* relations between strings (Templates' ``relations``, or Documents' relations under
  setting OBD): a unit per distinct record ``(label, head tokens, tail tokens)`` of a
  document and label (argument tokens normalised; for a symmetric label the two
  orientations are one record), as OBD collapses fillers;
* links (Documents, setting AO): a unit per link; under ``nil="ignore"`` the links whose
  id is ``NIL`` are left out of both sides before matching, counted in the report's
  ``repairs`` as ``{"reference": {"nil": n}, "prediction": {"nil": m}}``.

Error categories of an aligned pair: ``correct`` = same relation label (link id, and type
when compared) and the same arguments (mention); ``wrong_label`` = the same arguments,
another label (id);
``wrong_boundary`` = the same label, other arguments; ``wrong_label_boundary`` = both.
Makhoul's multi-slot tags: a relation's type slot is its relation label, its extent slot
its arguments (both within the rule, of equal labels when compared); a link's type slot is
its id (and entity type, when compared), its extent slot its mention. The token &
separator model does not apply (``ts_error`` says so).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain
from operator import attrgetter
from typing import Any

import numpy as np

from ..categories import categorize, category_totals
from ..cells import CellTable
from ..config import Config, get_normaliser
from ..errors import ConfigError, InputError, choices
from ..ids import check_unique
from ..items import Arguments, ItemTable
from ..match.count import count
from ..match.links import link_pairs, move_to_answer_rows
from ..match.relations import ArgColumns, Record, canonical_rank, relation_pairs, sequence_pairs
from ..match.rules import Pairs
from ..match.units import SPAN_FIELDS, Units, cell_index
from ..measures import FIELDS, TS_CELL_FIELDS
from ..model import Document, Link, Relation, Template
from ..multislot import aligned_counts
from .part import _label_space, _removed
from .partdata import _CELL, _I64, _Part

__all__ = ["check_task", "check_tags_task", "checked_records", "records_part", "records_size"]

TS_ERROR = "the token & separator model does not apply to relations/links"
NIL = "NIL"
_LABEL, _START, _END, _SCORE = (attrgetter(a) for a in ("label", "start", "end", "score"))


def check_task(cfg: Config) -> None:
    """The ConfigError of an option that relations and links do not take."""
    if cfg.task == "entities":
        return
    if cfg.detail == "prf":
        raise ConfigError(f"detail='prf' scores entities from tags; task={cfg.task!r} needs detail='full'")
    valid = ("match-all", "match-best") if cfg.task == "relations" else ("match-all",)
    if cfg.mode not in valid:
        raise ConfigError(f"mode={cfg.mode!r} is not available with task={cfg.task!r}; valid there: {choices(valid)}")


def check_tags_task(cfg: Config) -> None:
    """Tags carry entities only: the ConfigError of another task."""
    if cfg.task != "entities":
        raise ConfigError(f"task={cfg.task!r} scores relations or links, and tags carry entities only: they come "
                          "with documents (Documents or Templates in Python; brat or JSONL files)")


def records_size(reference: Sequence[Any]) -> tuple[bool, int]:
    """Are these Templates, and their size: tokens (Documents), or fillers and relations."""
    if reference and isinstance(reference[0], Template):
        return True, sum(len(t.relations) + sum(map(len, t.slots.values())) for t in reference)
    return False, sum(len(d.tokens) for d in reference if isinstance(d, Document))


def checked_records(reference: Sequence[Any], prediction: Sequence[Any], cfg: Config) -> list[str]:
    """The checks of `records_part`: Documents with predicted Documents of the same ids and
    tokens, or Templates (relations between strings); returns the ids."""
    check_task(cfg)
    if reference and isinstance(reference[0], Template):
        if cfg.task != "relations":
            raise ConfigError(f"task={cfg.task!r} scores Documents; templates carry relations only (task='relations')")
        if cfg.setting != "OBD":
            raise ConfigError("templates are position-free: score them with setting='OBD'")
    ids = []
    kind = Template if reference and isinstance(reference[0], Template) else Document
    for k, (ref, pred) in enumerate(zip(reference, prediction)):
        if not isinstance(ref, kind):
            raise InputError(f"reference #{k} is {type(ref).__name__}, not a {kind.__name__}")
        if not isinstance(pred, kind):
            raise InputError(f"prediction #{k} is {type(pred).__name__}, not a {kind.__name__}: task={cfg.task!r} reads "
                             f"the predicted {kind.__name__}s' {cfg.task}")
        if pred.id != ref.id:
            raise InputError(f"prediction #{k} has {'template' if kind is Template else 'document'} id {pred.id!r} "
                             f"but the reference has {ref.id!r}")
        if isinstance(ref, Document) and isinstance(pred, Document) and pred.tokens != ref.tokens:
            raise InputError(f"document {ref.id!r}: the prediction's tokens differ from the reference's "
                             f"({len(pred.tokens)} vs {len(ref.tokens)} tokens); align them first (iescore.adapters)")
        ids.append(ref.id)
    check_unique(ids)
    return ids


def records_part(reference: Sequence[Any], prediction: Sequence[Any], cfg: Config,
                 ids: list[str] | None = None) -> _Part:
    """The part of a batch of Documents' relations or links, or of Templates' relations;
    ``ids``: what `checked_records` returned, when the caller ran it already."""
    if ids is None:
        ids = checked_records(reference, prediction, cfg)
    if reference and isinstance(reference[0], Template):
        return _strings_part(ids, [t.relations for t in reference], [t.relations for t in prediction], None, cfg)
    docs: list[Document] = list(reference)
    if cfg.task == "links":
        return _links_part(ids, docs, [d.links for d in reference], [d.links for d in prediction], cfg)
    ref, pred = [d.relations for d in reference], [d.relations for d in prediction]
    if cfg.setting == "OBD":
        return _strings_part(ids, ref, pred, docs, cfg)
    return _relations_part(ids, docs, ref, pred, cfg)


# --- units -----------------------------------------------------------------------------
def _kept(docs: list[tuple[Any, ...]], name: Any, remap: dict[str, int], side: str, cfg: Config,
          repairs: dict[str, dict[str, int]]) -> list[tuple[Any, ...]]:
    """Each document's records without those whose label a type filter leaves out, counted."""
    if not cfg.filters_types():
        return docs
    names = sorted(remap)
    number = {n: k for k, n in enumerate(names)}
    gone = [number[name(x)] for x in chain.from_iterable(docs) if remap[name(x)] < 0]
    for s, counts in _removed(names, side, np.array(gone, dtype=_I64), cfg).items():
        repairs.setdefault(s, {}).update(counts)
    return [tuple(x for x in d if remap[name(x)] >= 0) for d in docs]


def _doc_column(docs: list[tuple[Any, ...]]) -> np.ndarray:
    return np.repeat(np.arange(len(docs), dtype=_I64), [len(d) for d in docs])


def _scores(flat: list[Any]) -> np.ndarray:
    return np.fromiter(map(_SCORE, flat), dtype=float, count=len(flat))  # None: nan


def _texts(docs: Sequence[Document], doc: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """The texts of spans ``(doc, start, end)`` as an object array, each distinct span's
    made once (relations share their arguments' spans)."""
    if len(doc) == 0:
        return np.zeros(0, dtype=object)
    w = int(end.max()) + 1
    if w * w * (int(doc.max()) + 1) < 2**62:  # one key per span
        key = (doc * w + start) * w + end
        order = np.argsort(key)
        k = key[order]
        new = np.ones(len(order), dtype=bool)
        new[1:] = k[1:] != k[:-1]
        d, s, e = doc[order], start[order], end[order]
    else:
        order = np.lexsort((end, start, doc))
        d, s, e = doc[order], start[order], end[order]
        new = np.ones(len(order), dtype=bool)
        new[1:] = (d[1:] != d[:-1]) | (s[1:] != s[:-1]) | (e[1:] != e[:-1])
    group = np.empty(len(order), dtype=_I64)
    group[order] = np.cumsum(new) - 1
    distinct = np.empty(int(new.sum()), dtype=object)
    distinct[:] = [docs[a].text_of(b, c) for a, b, c in zip(d[new].tolist(), s[new].tolist(), e[new].tolist())]
    out: np.ndarray = distinct[group]
    return out


def _relations_part(ids: list[str], docs: list[Document], ref: list[tuple[Relation, ...]],
                    pred: list[tuple[Relation, ...]], cfg: Config) -> _Part:
    """Relations between spans, by position."""
    labels, remap = _label_space(set(map(_LABEL, chain.from_iterable(ref + pred))), cfg)
    repairs: dict[str, dict[str, int]] = {}
    ref = _kept(ref, _LABEL, remap, "reference", cfg, repairs)
    pred = _kept(pred, _LABEL, remap, "prediction", cfg, repairs)
    rflat, pflat = list(chain.from_iterable(ref)), list(chain.from_iterable(pred))
    arg_of = attrgetter("head.label", "tail.label")
    arg_names = sorted(set(chain.from_iterable(map(arg_of, chain(rflat, pflat)))))
    arg_number = {n: k for k, n in enumerate(arg_names)}
    where = attrgetter("head.start", "head.end", "tail.start", "tail.end")

    def side(docs_rel: list[tuple[Relation, ...]], flat: list[Relation]) -> tuple[Units, ArgColumns]:
        n = len(flat)
        pos = np.fromiter(chain.from_iterable(map(where, flat)), dtype=_I64, count=4 * n).reshape(n, 4)
        arg = np.fromiter(map(arg_number.__getitem__, chain.from_iterable(map(arg_of, flat))), dtype=_I64,
                          count=2 * n).reshape(n, 2)
        a = ArgColumns(arg[:, 0].copy(), pos[:, 0].copy(), pos[:, 1].copy(), arg[:, 1].copy(), pos[:, 2].copy(),
                       pos[:, 3].copy())
        doc = _doc_column(docs_rel)
        lab = np.fromiter(map(remap.__getitem__, map(_LABEL, flat)), dtype=_I64, count=n)
        rank = canonical_rank(doc, lab, a)
        return Units(doc, lab, rank, rank + 1, _scores(flat)), a

    R, ra = side(ref, rflat)
    P, pa = side(pred, pflat)
    symmetric = np.array([lab in cfg.symmetric for lab in labels], dtype=bool)
    pairs = relation_pairs(R, ra, P, pa, cfg.rule, arg_labels=cfg.arg_labels, symmetric=symmetric)
    nr, np_ = len(R), len(P)
    texts = _texts(docs, np.concatenate((R.doc, R.doc, P.doc, P.doc)),
                   np.concatenate((ra.head_start, ra.tail_start, pa.head_start, pa.tail_start)),
                   np.concatenate((ra.head_end, ra.tail_end, pa.head_end, pa.tail_end)))
    names = np.array(arg_names + [""], dtype=object)

    def args(a: ArgColumns, ht: np.ndarray, tt: np.ndarray) -> tuple[Arguments, tuple[str, ...]]:
        arg = Arguments(tuple(names[a.head_label].tolist()), a.head_start, a.head_end,
                        tuple(names[a.tail_label].tolist()), a.tail_start, a.tail_end,
                        tuple(ht.tolist()), tuple(tt.tolist()))
        return arg, tuple((ht + " -> " + tt).tolist())

    doc_tokens = np.fromiter((len(d.tokens) for d in docs), dtype=_I64, count=len(docs))
    return _engine(R, P, pairs, cfg, labels, ids, doc_tokens, repairs,
                   items=(lambda: args(ra, texts[:nr], texts[nr : 2 * nr]),
                          lambda: args(pa, texts[2 * nr : 2 * nr + np_], texts[2 * nr + np_ :])))


def _records(docs_rel: list[tuple[Any, ...]], texts: list[Document] | None, cfg: Config,
             symmetric: set[str]) -> tuple[list[int], list[str], list[Record], list[float]]:
    """Each document's distinct records ``(label, head tokens, tail tokens, head label,
    tail label)``, normalised (a symmetric label's orientations one record; argument labels
    ``""`` when they are not compared), with the best confidence of each: document numbers,
    labels, records, confidences."""
    norm = get_normaliser(cfg.normaliser)
    made: dict[tuple[str, ...], tuple[str, ...]] = {}  # each distinct argument normalised once

    def tokens(seq: tuple[str, ...]) -> tuple[str, ...]:
        out = made.get(seq)
        if out is None:
            out = made[seq] = tuple(x for x in (norm(t) for t in seq) if x)
        return out

    seen: dict[tuple[int, str, Record], int] = {}
    docs_out: list[int] = []
    labels: list[str] = []
    recs: list[Record] = []
    scores: list[float] = []
    for k, rels in enumerate(docs_rel):
        d = texts[k] if texts is not None else None
        for rel in rels:
            if d is not None:  # argument labels are part of the record when they are compared
                rec: Record = (tokens(d.span_tokens(rel.head)), tokens(d.span_tokens(rel.tail)),
                               rel.head.label if cfg.arg_labels else "", rel.tail.label if cfg.arg_labels else "")
            else:
                rec = (tokens(rel.head), tokens(rel.tail), "", "")
            if rel.label in symmetric:
                rec = min(rec, (rec[1], rec[0], rec[3], rec[2]))
            score = np.nan if rel.score is None else float(rel.score)
            key = (k, rel.label, rec)
            at = seen.get(key)
            if at is None:
                seen[key] = len(recs)
                docs_out.append(k)
                labels.append(rel.label)
                recs.append(rec)
                scores.append(score)
            elif not np.isnan(score) and (np.isnan(scores[at]) or score > scores[at]):
                scores[at] = score
    return docs_out, labels, recs, scores


def _strings_part(ids: list[str], ref: list[tuple[Any, ...]], pred: list[tuple[Any, ...]],
                  docs: list[Document] | None, cfg: Config) -> _Part:
    """Relations between strings (OBD): distinct records per document and label."""
    labels, remap = _label_space(set(map(_LABEL, chain.from_iterable(ref + pred))), cfg)
    repairs: dict[str, dict[str, int]] = {}
    ref = _kept(ref, _LABEL, remap, "reference", cfg, repairs)
    pred = _kept(pred, _LABEL, remap, "prediction", cfg, repairs)
    sym = {lab for lab in remap if lab in cfg.symmetric or (remap[lab] >= 0 and labels[remap[lab]] in cfg.symmetric)}

    def side(docs_rel: list[tuple[Any, ...]]) -> tuple[Units, list[Record]]:
        d, lab, recs, sc = _records(docs_rel, docs, cfg, sym)
        n = len(recs)
        doc, label = np.array(d, dtype=_I64), np.fromiter(map(remap.__getitem__, lab), dtype=_I64, count=n)
        return Units(doc, label, None, None, np.array(sc, dtype=float)), recs

    R, r_rec = side(ref)
    P, p_rec = side(pred)
    arg_names = sorted({x for rec in chain(r_rec, p_rec) for x in rec[2:]})
    number = {n: k for k, n in enumerate(arg_names)}

    def argcols(recs: list[Record]) -> ArgColumns:
        hl = np.array([number[r[2]] for r in recs], dtype=_I64)
        tl = np.array([number[r[3]] for r in recs], dtype=_I64)
        neg = np.full(len(recs), -1, dtype=_I64)
        return ArgColumns(hl, neg, neg, tl, neg, neg)

    # the canonical order (document, label, record) numbers the units for the tie rule
    def ranked(U: Units, recs: list[Record]) -> Units:
        keys = list(zip(U.doc.tolist(), U.label.tolist(), recs))
        order = sorted(range(len(recs)), key=keys.__getitem__)
        rank = np.empty(len(recs), dtype=_I64)
        rank[order] = np.arange(len(recs), dtype=_I64)
        return Units(U.doc, U.label, rank, rank + 1, U.score)

    symmetric = np.array([lab in cfg.symmetric for lab in labels], dtype=bool)
    pairs = sequence_pairs(R, r_rec, P, p_rec, cfg.rule, arg_labels=cfg.arg_labels, symmetric=symmetric)
    R, P = ranked(R, r_rec), ranked(P, p_rec)

    def args(recs: list[Record]) -> tuple[Arguments, tuple[str, ...]]:
        a = argcols(recs)
        ht, tt = tuple(" ".join(r[0]) for r in recs), tuple(" ".join(r[1]) for r in recs)
        return (Arguments(tuple(r[2] for r in recs), a.head_start, a.head_end, tuple(r[3] for r in recs),
                          a.tail_start, a.tail_end, ht, tt), tuple(f"{h} -> {t}" for h, t in zip(ht, tt)))

    doc_tokens = None if docs is None else np.fromiter((len(d.tokens) for d in docs), dtype=_I64, count=len(docs))
    return _engine(R, P, pairs, cfg, labels, ids, doc_tokens, repairs,
                   items=(lambda: args(r_rec), lambda: args(p_rec)))


def _links_part(ids: list[str], docs: list[Document], ref: list[tuple[Link, ...]], pred: list[tuple[Link, ...]],
                cfg: Config) -> _Part:
    """Entity links: mentions with ids, counted per entity type."""
    repairs: dict[str, dict[str, int]] = {}
    if cfg.nil == "ignore":
        for which, docs_l in (("reference", ref), ("prediction", pred)):
            n = sum(1 for x in chain.from_iterable(docs_l) if x.id == NIL)
            if n:
                repairs.setdefault(which, {})["nil"] = n
        ref = [tuple(x for x in d if x.id != NIL) for d in ref]
        pred = [tuple(x for x in d if x.id != NIL) for d in pred]
    type_of = attrgetter("span.label")
    labels, remap = _label_space(set(map(type_of, chain.from_iterable(ref + pred))), cfg)
    ref = _kept(ref, type_of, remap, "reference", cfg, repairs)
    pred = _kept(pred, type_of, remap, "prediction", cfg, repairs)
    rflat, pflat = list(chain.from_iterable(ref)), list(chain.from_iterable(pred))
    id_number: dict[str, int] = {}
    for x in chain(rflat, pflat):
        id_number.setdefault(x.id, len(id_number))

    def side(docs_l: list[tuple[Link, ...]], flat: list[Link]) -> tuple[Units, np.ndarray]:
        n = len(flat)
        spans = [x.span for x in flat]
        U = Units(_doc_column(docs_l), np.fromiter(map(remap.__getitem__, map(_LABEL, spans)), dtype=_I64, count=n),
                  np.fromiter(map(_START, spans), dtype=_I64, count=n), np.fromiter(map(_END, spans), dtype=_I64, count=n),
                  _scores(flat))
        return U, np.fromiter((id_number[x.id] for x in flat), dtype=_I64, count=n)

    R, r_ids = side(ref, rflat)
    P, p_ids = side(pred, pflat)
    pairs = link_pairs(R, r_ids, P, p_ids, cfg.rule, link_types=cfg.link_types)

    def texts(docs_l: list[tuple[Link, ...]], flat: list[Link]) -> tuple[None, tuple[str, ...]]:
        return None, tuple(d.span_text(x.span) for d, links in zip(docs, docs_l) for x in links)

    doc_tokens = np.fromiter((len(d.tokens) for d in docs), dtype=_I64, count=len(docs))
    return _engine(R, P, pairs, cfg, labels, ids, doc_tokens, repairs,
                   items=(lambda: texts(ref, rflat), lambda: texts(pred, pflat)),
                   link_ids=(r_ids, p_ids, tuple(x.id for x in rflat), tuple(x.id for x in pflat)))


# --- the engine ------------------------------------------------------------------------
def _aligned_exact(pairs: Pairs, a_r: np.ndarray, a_p: np.ndarray, n_p: int) -> np.ndarray:
    """The ``exact`` attribute of the aligned pairs ``(a_r, a_p)`` (each one of ``pairs``)."""
    if len(a_r) == 0:
        return np.zeros(0, dtype=bool)
    key = pairs.r.astype(_I64) * max(n_p, 1) + pairs.p
    order = np.argsort(key, kind="stable")
    at = np.searchsorted(key[order], a_r.astype(_I64) * max(n_p, 1) + a_p)
    out: np.ndarray = pairs.exact[order[at]]
    return out


def _check_best(P: Units, ids: list[str], labels: list[str]) -> None:
    if P.score is not None and len(P):
        finite = np.isfinite(P.score)
        if finite.any() and not finite.all():
            i = int(np.flatnonzero(~finite)[0])
            raise InputError(
                f"match-best needs a finite confidence on every prediction or on none: document "
                f"{ids[int(P.doc[i])]!r}, predicted relation {labels[int(P.label[i])]!r} (#{i} of the batch) "
                "has no confidence (None or NaN)")


def _engine(R: Units, P: Units, pairs: Pairs, cfg: Config, labels: list[str], ids: list[str],
            doc_tokens: np.ndarray | None, repairs: dict[str, dict[str, int]], *,
            items: tuple[Any, Any],
            link_ids: tuple[np.ndarray, np.ndarray, tuple[str, ...], tuple[str, ...]] | None = None) -> _Part:
    """Count units ``R``, ``P`` over their candidate ``pairs`` into a `_Part`; ``items``
    makes each side's (arguments, texts)."""
    n_docs, L = len(ids), len(labels)
    ix, R, P = cell_index(R, P, n_docs, L)
    assert R.cell is not None and P.cell is not None
    best = cfg.mode == "match-best"
    if best:
        _check_best(P, ids, labels)
    cells = np.zeros((len(ix), len(SPAN_FIELDS) + len(TS_CELL_FIELDS)), dtype=_CELL)
    span_cells = cells[:, : len(SPAN_FIELDS)]
    res = count(R, P, pairs, cells=ix, n_labels=L, counting=cfg.counting, best=best, cells_out=span_cells)
    if not np.shares_memory(res.cells, cells):
        span_cells[...] = res.cells
    if link_ids is not None and not cfg.link_types:
        move_to_answer_rows(span_cells, R, P, pairs, res.pred_status, cfg.counting,
                            (res.aligned_r[res.aligned_correct], res.aligned_p[res.aligned_correct]))
    cats = slots = None
    cat_r = cat_p = part_r = part_p = None
    r_key, p_key = R.label, P.label  # what a pair's "label" is: the relation label, a link's id (and type)
    if link_ids is not None:
        r_key, p_key = link_ids[0], link_ids[1]
        if cfg.link_types:
            r_key, p_key = r_key * max(L, 1) + R.label, p_key * max(L, 1) + P.label
    if not best and res.aligned_fit is not None:  # Makhoul's multi-slot tags, per answer label
        rl = R.label[res.aligned_r]
        slots = aligned_counts(rl, np.where(r_key[res.aligned_r] == p_key[res.aligned_p], rl, -1), res.aligned_fit, L)
    if not best:
        if link_ids is None:  # extents compared through the aligned pair's exact attribute
            exact = _aligned_exact(pairs, res.aligned_r, res.aligned_p, len(P))
            p_pos = np.full(len(P), -1, dtype=_I64)
            p_pos[res.aligned_p[exact]] = res.aligned_r[exact]
            zr, zp = np.zeros(len(R), dtype=_I64), np.zeros(len(P), dtype=_I64)
            cat_r, cat_p, part_r, part_p = categorize(R.label, np.arange(len(R), dtype=_I64), zr, None,
                                                      P.label, p_pos, zp, a_r=res.aligned_r, a_p=res.aligned_p)
        else:  # the label of a link's category is its id (and type, when compared)
            cat_r, cat_p, part_r, part_p = categorize(r_key, R.start, R.end, None, p_key, P.start, P.end,
                                                      a_r=res.aligned_r, a_p=res.aligned_p)
        cats = category_totals(cat_r, R.label, cat_p, P.label, L)

    def table(U: Units, status: np.ndarray, made: tuple[Arguments | None, tuple[str, ...]],
              cat: np.ndarray | None, partner: np.ndarray | None, kb: tuple[str, ...] | None) -> ItemTable:
        n = len(U)
        if link_ids is not None:
            assert U.start is not None and U.end is not None
            start, end = U.start, U.end
        else:
            start = end = np.full(n, -1, dtype=_I64)
        score = U.score if U.score is not None else np.broadcast_to(np.nan, n)
        return ItemTable(U.doc, U.label, start, end, status, score, made[1], category=cat, partner=partner,
                         args=made[0], ids=kb)

    ref_items = table(R, res.ref_status, items[0](), cat_r, part_r, None if link_ids is None else link_ids[2])
    pred_items = table(P, res.pred_status, items[1](), cat_p, part_p, None if link_ids is None else link_ids[3])
    from ..confusion import Confusion

    conf = res.confusion if isinstance(res.confusion, Confusion) else Confusion.of_dense(res.confusion)
    table_ = CellTable(doc=ix.doc, label=ix.label, values=cells, fields=FIELDS, n_labels=L,
                       doc_tokens=doc_tokens, n_docs=n_docs)
    return _Part(labels, ids, table_, conf, ref_items, pred_items, None, repairs, TS_ERROR, categories=cats,
                 multislot=slots)
