"""Stage 4 of the pipeline (cells): per-(document, label) counts, stored for the cells
that hold an item.

A report's counts are per document and per label (Concepts: counting). Most documents hold
one or two of the labels -- a CoNLL sentence averages about 1.1 of its 4 types --
so a dense ``(documents, labels, fields)`` array is mostly zeros (about 14 bytes
per token with sentences as documents). `CellTable` keeps one row per
(document, label) that has an answer or a prediction, and the t-unit counts
``tok_n``/``sep_n`` (equal for every label of a document) once per document.
Every sum of cells (per label, per document, of one cell) is the same integer as
the dense array's; `CellTable.dense` builds that array when wanted.

Example (two documents, two labels; only three cells hold items):
    >>> t = CellTable(doc=np.array([0, 0, 1]), label=np.array([0, 1, 1]),
    ...               values=np.array([[1, 0, 0], [0, 1, 1], [2, 0, 1]]),
    ...               fields=("tp", "fp", "fn"), n_labels=2, doc_tokens=np.array([5, 7]))
    >>> t.label_totals().tolist()
    [[1, 0, 0], [2, 1, 2]]
    >>> t.doc_totals().tolist()
    [[1, 1, 1], [2, 0, 1]]
    >>> t.dense()[1].tolist()
    [[0, 0, 0], [2, 0, 1]]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["CellTable", "UNIT_FIELDS", "column_sums"]

UNIT_FIELDS = ("tok_n", "sep_n")  # t-units: per document, the same for every label

_I64 = np.int64


def column_sums(x: np.ndarray) -> np.ndarray:
    """``x.sum(axis=0)`` of an integer array as int64, fast for many short rows
    (per-document cells): groups of rows are read as one wide row, so the reduction's
    inner loop is long. The same integers as the plain sum.

    >>> column_sums(np.arange(12, dtype=np.int32).reshape(6, 2)).tolist()
    [30, 36]
    """
    n, rest = x.shape[0], x.shape[1:]
    k = int(np.prod(rest, dtype=np.int64))
    if n == 0 or k == 0 or k > 256 or not x.flags.c_contiguous:
        total: np.ndarray = x.sum(axis=0, dtype=_I64)
        return total
    g = max(1, 2048 // k)  # rows per wide row
    m = n // g * g
    flat = x.reshape(n, k)
    out: np.ndarray = np.add.reduce(flat[:m].reshape(-1, g * k), axis=0, dtype=_I64).reshape(g, k).sum(axis=0)
    if m < n:
        out += flat[m:].sum(axis=0, dtype=_I64)
    result: np.ndarray = out.reshape(rest)
    return result


def _frozen(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    a.setflags(write=False)
    return a


@dataclass(frozen=True)
class CellTable:
    """Counts of the (document, label) cells that hold an item (read-only arrays).

    Attributes:
        doc: the document of each stored cell, non-decreasing.
        label: its label (an index into the report's labels).
        values: ``(cells, len(value_fields))`` counts.
        fields: the [`Counts`][iescore.measures.Counts] fields represented, in order.
        n_labels: the number of labels.
        doc_tokens: tokens per document (``tok_n``; ``sep_n`` is ``tokens - 1``),
            or ``None`` where documents have no tokens (templates: 0 t-units).
        n_docs: the number of documents (``len(doc_tokens)`` when given).
    """

    doc: np.ndarray
    label: np.ndarray
    values: np.ndarray
    fields: tuple[str, ...]
    n_labels: int
    doc_tokens: np.ndarray | None = None
    n_docs: int = -1

    def __post_init__(self) -> None:
        n_docs = self.n_docs
        if self.doc_tokens is not None:
            if n_docs not in (-1, len(self.doc_tokens)):
                raise ValueError(f"CellTable: n_docs={n_docs} but {len(self.doc_tokens)} document token counts")
            n_docs = len(self.doc_tokens)
            object.__setattr__(self, "doc_tokens", _frozen(self.doc_tokens))
        elif n_docs < 0:
            raise ValueError("CellTable: give n_docs or doc_tokens")
        object.__setattr__(self, "n_docs", n_docs)
        nv = len(self.value_fields)
        if self.values.shape != (len(self.doc), nv) or len(self.label) != len(self.doc):
            raise ValueError(
                f"CellTable: {len(self.doc)} cells need labels and a ({len(self.doc)}, {nv}) value array; "
                f"got {len(self.label)} labels and {self.values.shape}"
            )
        for name in ("doc", "label", "values"):
            object.__setattr__(self, name, _frozen(getattr(self, name)))

    def __len__(self) -> int:
        return len(self.doc)

    @classmethod
    def empty(cls, fields: tuple[str, ...], n_labels: int) -> CellTable:
        """A table of no documents."""
        nv = len([f for f in fields if f not in UNIT_FIELDS])
        z = np.zeros(0, dtype=np.int32)
        return cls(doc=z, label=z, values=np.zeros((0, nv), dtype=np.int32), fields=fields, n_labels=n_labels, n_docs=0)

    @property
    def value_fields(self) -> tuple[str, ...]:
        """The fields stored per cell (all but the per-document t-unit counts)."""
        return tuple(f for f in self.fields if f not in UNIT_FIELDS)

    def _layout(self) -> tuple[list[int], list[tuple[int, int]]]:
        """Where the stored fields go among ``fields``, and each t-unit field's
        ``(position, column of the (k, 2) t-units)``."""
        values = [i for i, f in enumerate(self.fields) if f not in UNIT_FIELDS]
        units = [(i, UNIT_FIELDS.index(f)) for i, f in enumerate(self.fields) if f in UNIT_FIELDS]
        return values, units

    # --- sums -----------------------------------------------------------------------
    def _units(self, docs: slice | None = None) -> np.ndarray:
        """``(k, 2)`` t-units (tokens, separators) of the documents selected (all by default);
        a ``(1, 2)`` row of zeros when they are not counted (no tokens, or no TS fields)."""
        if self.doc_tokens is None or not any(f in UNIT_FIELDS for f in self.fields):
            return np.zeros((1, 2), dtype=_I64)
        tok = self.doc_tokens.astype(_I64) if docs is None else self.doc_tokens[docs].astype(_I64)
        return np.stack([tok, np.maximum(tok - 1, 0)], axis=1)

    def _expand(self, sums: np.ndarray, units: np.ndarray) -> np.ndarray:
        """Value-field sums ``(k, nv)`` and t-units ``(k, 2)`` -> ``(k, len(fields))``."""
        if sums.shape[1] == len(self.fields):
            return sums  # no t-unit fields
        values, unit_pos = self._layout()
        out = np.zeros((sums.shape[0], len(self.fields)), dtype=_I64)
        out[:, values] = sums
        for i, c in unit_pos:
            out[:, i] = units[:, c]
        return out

    def _grouped(self, key: np.ndarray, n: int) -> np.ndarray:
        """Value sums per group ``key`` (``(n, nv)`` int64; exact: float sums of integers
        below 2**53 for a few groups or an unsorted key, 64-bit integer adds otherwise)."""
        out = np.zeros((n, self.values.shape[1]), dtype=_I64)
        if len(key) == 0:
            return out
        ordered = bool((key[1:] >= key[:-1]).all())
        if n <= 64 or not ordered:  # one bincount per field (sorting the rows would cost more)
            k = key.astype(np.intp, copy=False)
            for j in range(out.shape[1]):
                out[:, j] = np.bincount(k, weights=self.values[:, j], minlength=n)
            return out
        k, v = key, self.values
        starts = np.flatnonzero(np.r_[True, k[1:] != k[:-1]])
        out[k[starts]] = np.add.reduceat(v, starts, axis=0, dtype=_I64)
        return out

    def label_totals(self) -> np.ndarray:
        """``(n_labels, len(fields))``: every label's counts summed over documents."""
        units = self._units().sum(axis=0)
        return self._expand(self._grouped(self.label, self.n_labels), np.broadcast_to(units, (self.n_labels, 2)))

    def doc_totals(self) -> np.ndarray:
        """``(n_docs, len(fields))``: every document's counts summed over labels
        (``tok_n``/``sep_n`` once per label, as in the sum of the label cells)."""
        return self._expand(self._grouped(self.doc, self.n_docs),
                            np.broadcast_to(self._units() * self.n_labels, (self.n_docs, 2)))

    def total(self, *, doc: int | None = None, label: int | None = None) -> np.ndarray:
        """``(len(fields),)``: the counts of one document and/or label (all when None)."""
        if doc is None:
            rows: slice | np.ndarray = slice(None)
            units = self._units().sum(axis=0)
        else:
            lo, hi = np.searchsorted(self.doc, (doc, doc + 1))
            rows = slice(int(lo), int(hi))
            units = self._units(slice(doc, doc + 1))[0]
        vals, labs = self.values[rows], self.label[rows]
        if label is not None:
            vals = vals[labs == label]
        else:
            units = units * self.n_labels
        cell: np.ndarray = self._expand(vals.sum(axis=0, dtype=_I64)[None], units[None])[0]
        return cell

    def dense(self, dtype: type = np.int32) -> np.ndarray:
        """The ``(n_docs, n_labels, len(fields))`` array of every cell (zeros included)."""
        out: np.ndarray = np.zeros((self.n_docs, self.n_labels, len(self.fields)), dtype=dtype)
        values, unit_pos = self._layout()
        units = self._units()
        for i, c in unit_pos:
            out[:, :, i] = units[:, c, None]
        for j, i in enumerate(values):
            out[self.doc, self.label, i] = self.values[:, j]
        return out

    # --- building --------------------------------------------------------------------
    @staticmethod
    def concat(tables: Sequence[tuple[CellTable, np.ndarray]], n_labels: int) -> CellTable:
        """Tables of consecutive batches of documents, each with its label map into the
        joint label list (``label_map[own label] = joint label``)."""
        if not tables:
            raise ValueError("CellTable.concat needs at least one table")
        first = tables[0][0]
        if len(tables) == 1 and first.n_labels == n_labels and np.array_equal(tables[0][1], np.arange(n_labels)):
            return first
        docs, labs, vals, toks = [], [], [], []
        off = 0
        for t, m in tables:
            if t.fields != first.fields:
                raise ValueError(f"CellTable.concat: fields {t.fields} and {first.fields} differ")
            docs.append(t.doc.astype(_I64) + off)
            labs.append(np.asarray(m, dtype=_I64).take(t.label) if len(t) else t.label.astype(_I64))
            vals.append(t.values)
            toks.append(t.doc_tokens if t.doc_tokens is not None else np.zeros(t.n_docs, dtype=_I64))
            off += t.n_docs
        narrow = np.int32 if off < 2**31 and n_labels < 2**31 else _I64
        no_tokens = all(t.doc_tokens is None for t, _ in tables)
        return CellTable(
            doc=np.concatenate(docs).astype(narrow), label=np.concatenate(labs).astype(narrow),
            values=np.concatenate(vals), fields=first.fields, n_labels=n_labels,
            doc_tokens=None if no_tokens else np.concatenate(toks), n_docs=off,
        )
