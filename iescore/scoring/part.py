"""One batch through the middle of the pipeline: units -> match -> count -> cells.

`_score_units` takes both sides' units (`Units`) of a
batch of documents and runs matching under the rule, counting (any / one-to-one,
the modes, Makhoul's alignment) and the token & separator model, into a
`_Part`: the batch's per-(document, label) cells, confusion table,
per-item statuses and multi-slot counts, in the batch's own label numbering. Parts are
summed into a report by `iescore.scoring.assemble`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace

import numpy as np

from ..categories import categorize, category_totals
from ..cells import CellTable
from ..config import Config, get_normaliser
from ..confusion import Confusion
from ..errors import ConfigError, InputError
from ..items import ItemTable
from ..match.count import count
from ..match.exact import exact_disjoint
from ..match.fillers import obd_pairs
from ..match.rules import ao_pairs
from ..match.units import SPAN_FIELDS, EngineResult, Units, cell_index, collapse
from ..measures import FIELDS, TS_CELL_FIELDS
from ..multislot import aligned_counts
from ..ts import check_multi_instance, ts_counts, ts_weighted, unit_totals
from .partdata import _CELL, _I64, _PRF_FIELDS, _Part


def _label_space(names: Iterable[str], cfg: Config) -> tuple[list[str], dict[str, int]]:
    """The report's labels for the input's label ``names`` (``supertags`` merge them, then
    ``keep_types``/``remove_types`` leave some out), and each name's number among them
    (-1 for a name left out)."""
    sup = cfg.supertag_map()
    if not sup and not cfg.filters_types():  # every name is its own label (C-level passes: there may be many thousand)
        final = sorted(set(names))
        return final, dict(zip(final, range(len(final))))
    mapped = {n: sup.get(n, n) for n in names}
    final = sorted({m for m in mapped.values() if cfg.kept(m)})
    index = {n: i for i, n in enumerate(final)}
    return final, {n: index.get(m, -1) for n, m in mapped.items()}


def _removed(names: Sequence[str], side: str, labels: np.ndarray, cfg: Config) -> dict[str, dict[str, int]]:
    """The units of a side left out by ``keep_types``/``remove_types``, counted per type
    (after ``supertags``) as ``{side: {"removed:TYPE": n}}`` (``labels``: the input label
    number of each unit left out, ``names`` its names)."""
    if not len(labels):
        return {}
    sup = cfg.supertag_map()
    counts: dict[str, int] = {}
    for k, n in enumerate(np.bincount(labels, minlength=len(names)).tolist()):
        if n:
            key = "removed:" + sup.get(names[k], names[k])
            counts[key] = counts.get(key, 0) + n
    return {side: dict(sorted(counts.items()))}


def _keys(tokens_of: Callable[[int], Sequence[str]], n: int, cfg: Config) -> list[tuple[str, ...]]:
    norm = get_normaliser(cfg.normaliser)
    out = []
    for i in range(n):
        out.append(tuple(t for t in (norm(x) for x in tokens_of(i)) if t))
    return out


def _check_prf(cfg: Config, disjoint: bool) -> None:
    """Raise the ConfigError of ``detail="prf"`` outside its one case: exact counts of
    disjoint (tag) units under AO, rule E, match-all."""
    if not (disjoint and cfg.setting == "AO" and cfg.rule.kind == "exact" and cfg.mode == "match-all"):
        raise ConfigError(
            "detail='prf' computes exact-match counts of tag input only "
            "(setting='AO', rule='E', mode='match-all'); use detail='full' for the rest"
        )


def _score_units(
    R: Units,
    P: Units,
    *,
    cfg: Config,
    labels: list[str],
    doc_ids: Sequence[str],
    doc_tokens: np.ndarray | None,
    texts_r: Callable[[], Sequence[str]] | None,
    texts_p: Callable[[], Sequence[str]] | None,
    disjoint: bool = False,
    unit_weights: tuple[np.ndarray, np.ndarray] | None = None,
    hits: tuple[np.ndarray, np.ndarray] | None = None,
) -> _Part:
    """Run the engine on item-level units (AO positions and/or filler keys).

    AO match-all and match-best match spans by position (Concepts: matching rules). OBD and AO's
    one-per-string match the distinct (normalised) strings of each document and label
    by the sequence rules (OBD matching rules), with OBD's slot alignment: one-per-string
    ignores positions (Siefkes §15.2), so its counts equal OBD's on the same spans, and
    each occurrence gets its string's status. The TS model counts positions in every mode.

    ``disjoint`` says that same-label spans of a side cannot overlap (decoded tags),
    so the TS model's multi-instance check is skipped; ``hits`` may give the exact
    matches found while decoding (``detail="prf"``)."""
    n_docs, L = len(doc_ids), len(labels)
    ix, R, P = cell_index(R, P, n_docs, L)  # the (document, label) cells holding a unit
    n_cells = len(ix)
    if doc_tokens is not None and n_docs and doc_tokens.max() < 2**31:
        doc_tokens = doc_tokens.astype(_CELL, copy=False)

    def cell_table(values: np.ndarray, fields: tuple[str, ...]) -> CellTable:
        return CellTable(doc=ix.doc, label=ix.label, values=values, fields=fields, n_labels=L,
                         doc_tokens=doc_tokens, n_docs=n_docs)

    positions = R.start is not None
    pairs = ao_pairs(R, P, cfg.rule) if positions and cfg.detail == "full" else None
    ts_error = None
    if not positions:
        ts_error = "the token & separator model needs token positions (templates have none)"
    elif not disjoint:
        found = [x for x in (check_multi_instance(R, labels, "reference", doc_ids),
                             check_multi_instance(P, labels, "prediction", doc_ids)) if x]
        ts_error = min(found, key=lambda x: x[0])[1] if found else None
    if cfg.detail == "prf":
        _check_prf(cfg, disjoint)
        # no alignment, so no confusion table (exact_disjoint's is empty)
        res = exact_disjoint(R, P, n_cells, 0, n_fields=_PRF_FIELDS, dtype=_CELL, hits=hits)
        # tp, fp, fn: the only counts computed
        prf_table = cell_table(res.cells, FIELDS[:_PRF_FIELDS])
        # no confidences: a read-only all-NaN view, no memory per item
        ref_items = ItemTable(R.doc, R.label, R.start, R.end, res.ref_status, np.broadcast_to(np.nan, len(R)), None)  # type: ignore[arg-type]
        pred_items = ItemTable(P.doc, P.label, P.start, P.end, res.pred_status, np.broadcast_to(np.nan, len(P)), None)  # type: ignore[arg-type]
        return _Part(labels, doc_ids, prf_table, Confusion.empty(L), ref_items, pred_items, None, {},
                     "not computed (detail='prf')")
    best = cfg.mode == "match-best"
    if best and P.score is not None and len(P):
        finite = np.isfinite(P.score)
        if finite.any() and not finite.all():
            i = int(np.flatnonzero(~finite)[0])
            what = f"filler {' '.join(P.key[i])!r}" if P.key is not None and P.start is None else (
                f"span ({labels[int(P.label[i])]!r}, {int(P.start[i])}, {int(P.end[i])})" if P.start is not None else f"item {i}"  # type: ignore[index]
            )
            value = float(P.score[i])
            has = "no confidence (None or NaN)" if np.isnan(value) else f"the confidence {value!r}, not a finite number"
            raise InputError(
                f"match-best needs a finite confidence on every prediction or on none: document "
                f"{doc_ids[int(P.doc[i])]!r}, predicted {what} has {has}"
            )

    def table(U: Units, status: np.ndarray, text: Callable[[], Sequence[str]] | None, filler: bool) -> ItemTable:
        n = len(U)
        start = U.start if (U.start is not None and not filler) else np.full(n, -1, dtype=_I64)
        end = U.end if (U.end is not None and not filler) else np.full(n, -1, dtype=_I64)
        score = U.score if U.score is not None else np.broadcast_to(np.nan, n)
        if filler and U.key is not None:
            txt: tuple[str, ...] | None = tuple(" ".join(k) for k in U.key)
        else:
            txt = tuple(text()) if text is not None else None
        return ItemTable(U.doc, U.label, start, end, status, score, txt)

    cells = np.zeros((n_cells, len(SPAN_FIELDS) + len(TS_CELL_FIELDS)), dtype=_CELL)
    span_cells = cells[:, : len(SPAN_FIELDS)]  # the engine writes its counts here
    if cfg.setting == "AO" and not positions:
        raise ConfigError("setting='AO' needs token positions; templates are OBD-only (use setting='OBD')")
    if cfg.setting == "AO" and cfg.mode != "one-per-string":
        assert pairs is not None
        res = count(R, P, pairs, cells=ix, n_labels=L, counting=cfg.counting, best=best, cells_out=span_cells)
        ref_items = table(R, res.ref_status, texts_r, False)
        pred_items = table(P, res.pred_status, texts_p, False)
        if not best:
            cats = _categories(R, P, res, L, by_key=False)
            ref_items, pred_items = _with_categories(ref_items, pred_items, *cats[1:])
        slots = _multislot(R, P, res, L)
    else:
        # OBD, and one-per-string in AO (Siefkes §15.2: occurrences of one string
        # collapse to one, "different positions in the document are ignored"): the
        # distinct strings of a document and label are matched by the sequence rules
        # (Concepts: matching rules) and aligned as OBD fillers (slot errors), never by position
        GR, gr = collapse(R)
        GP, gp = collapse(P)
        res = count(GR, GP, obd_pairs(GR, GP, cfg.rule, names=(doc_ids, labels)), cells=ix, n_labels=L, counting=cfg.counting, best=best,
                    cells_out=span_cells)
        slots = _multislot(GR, GP, res, L)
        if cfg.setting == "AO":  # every occurrence carries its string's status
            ref_items = table(R, res.ref_status[gr], texts_r, False)
            pred_items = table(P, res.pred_status[gp], texts_p, False)
        else:
            ref_items = table(GR, res.ref_status, None, True)
            pred_items = table(GP, res.pred_status, None, True)
        if not best:
            cats = _categories(GR, GP, res, L, by_key=True)
            if cfg.setting == "AO":  # an occurrence: its string's category, the partner string's earliest occurrence
                cats = (cats[0], cats[1][gr], cats[2][gp], _earliest(P, gp, len(GP))[cats[3]][gr],
                        _earliest(R, gr, len(GR))[cats[4]][gp])
            ref_items, pred_items = _with_categories(ref_items, pred_items, *cats[1:])
    if not np.shares_memory(res.cells, cells):
        span_cells[...] = res.cells
    weighted = None
    if ts_error is None and doc_tokens is not None:
        assert pairs is not None
        ts_counts(R, P, pairs, n_cells, out=cells[:, len(SPAN_FIELDS) :])
        if unit_weights is not None:
            weighted = ts_weighted(R, P, pairs, unit_weights[0], unit_weights[1], doc_tokens, L)
    totals = None
    if unit_weights is not None and doc_tokens is not None:
        totals = unit_totals(unit_weights[0], unit_weights[1], doc_tokens)
    # match-best builds its (small) table dense; matching gives the pairs that occur
    conf = res.confusion if isinstance(res.confusion, Confusion) else Confusion.of_dense(res.confusion)
    return _Part(labels, doc_ids, cell_table(cells, FIELDS), conf, ref_items, pred_items, None, {},
                 ts_error, weighted, totals, categories=None if best else cats[0], multislot=slots)


def _multislot(R: Units, P: Units, res: EngineResult, L: int) -> np.ndarray | None:
    """Per label, the aligned pairs of equal labels and those whose extents fit the rule
    (`iescore.multislot`); None where the pairs do not say whether extents fit."""
    if res.aligned_fit is None:
        return None
    return aligned_counts(R.label[res.aligned_r], P.label[res.aligned_p], res.aligned_fit, L)


def _categories(R: Units, P: Units, res: EngineResult, L: int, *, by_key: bool) -> tuple[np.ndarray, ...]:
    """Error-category totals ``(L, 6)``, each unit's category and partner (Concepts:
    error categories), from the alignment; extents compared by string (``by_key``) or by position."""
    cat_r, cat_p, part_r, part_p = categorize(
        R.label, R.start, R.end, R.key if by_key else None, P.label, P.start, P.end, P.key if by_key else None,
        a_r=res.aligned_r, a_p=res.aligned_p)
    return category_totals(cat_r, R.label, cat_p, P.label, L), cat_r, cat_p, part_r, part_p


def _earliest(U: Units, group: np.ndarray, n_groups: int) -> np.ndarray:
    """The earliest occurrence (least start, then end, then input order) of every group of
    ``U``'s units, whatever the input order; -1 at index -1 (for "no partner")."""
    first = np.full(n_groups + 1, -1, dtype=_I64)
    if len(group):
        assert U.start is not None and U.end is not None
        order = np.lexsort((np.arange(len(group)), U.end, U.start, group))
        lead = np.ones(len(order), dtype=bool)
        lead[1:] = group[order[1:]] != group[order[:-1]]
        first[group[order[lead]]] = order[lead]
    return first


def _with_categories(ref: ItemTable, pred: ItemTable, cat_r: np.ndarray, cat_p: np.ndarray,
                     part_r: np.ndarray, part_p: np.ndarray) -> tuple[ItemTable, ItemTable]:
    return replace(ref, category=cat_r, partner=part_r), replace(pred, category=cat_p, partner=part_p)
