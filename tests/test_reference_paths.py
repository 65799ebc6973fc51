"""Fast paths without a reference elsewhere, against a plain computation of the same thing."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from iescore.match.units import Units, cell_index

# units as (document, label) pairs of each side, documents < 40, labels < 3
_SIDE = st.lists(st.tuples(st.integers(0, 39), st.integers(0, 2)), max_size=30)


@settings(max_examples=100, deadline=None)
@given(_SIDE, _SIDE, st.sampled_from([40, 5_000_000]))
def test_cell_index_equals_sorting_the_distinct_cells(ref, pred, n_docs):
    # with 5,000,000 documents x 3 labels (> 4 x units + 2**22) cell_index sorts the keys
    # (np.unique); with 40 it flags the cells in use: either way, as plainly computed here,
    # the cells are the distinct (document, label) pairs of both sides in sorted order and a
    # unit's cell row is the position of its pair among them
    def units(side):
        return Units(np.array([d for d, _ in side], dtype=np.int64), np.array([lab for _, lab in side], dtype=np.int64))

    cells = sorted(set(ref) | set(pred))
    row = {c: k for k, c in enumerate(cells)}
    ix, R, P = cell_index(units(ref), units(pred), n_docs=n_docs, n_labels=3)
    assert list(zip(ix.doc.tolist(), ix.label.tolist())) == cells
    assert R.cell.tolist() == [row[c] for c in ref]
    assert P.cell.tolist() == [row[c] for c in pred]
