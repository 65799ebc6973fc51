"""Stages 2 and 3 of the pipeline: match units under a rule, and count.

Pipeline: decode (`iescore.decode`) -> **match -> count** -> per-document cells
(`iescore.cells`) -> measures -> report -> views. Modules: `units` (units,
cells, statuses), `rules` (candidate pairs under exact / contain / overlap and
the OBD sequence rules), `fillers` (OBD filler pairs through the slots' floors),
`slots` (Makhoul's alignment of OBD slots), `assign` (maximum-cardinality matching with
preferences; its solvers in `intervals` for non-crossing edges and `paths` for the
others), `count` (any-match and one-to-one counting, Makhoul's alignment),
`modes` (match-best), `exact` (the exact fast path for decoded tags).
The token & separator model is `iescore.ts`.
"""

from .count import count
from .exact import exact_disjoint
from .fillers import obd_pairs
from .rules import Pairs, ao_pairs, overlapping, sequence_match
from .units import SPAN_FIELDS, STATUS_NAMES, CellIndex, EngineResult, Units, cell_index, collapse

__all__ = [
    "STATUS_NAMES",
    "SPAN_FIELDS",
    "Units",
    "CellIndex",
    "cell_index",
    "collapse",
    "EngineResult",
    "Pairs",
    "overlapping",
    "ao_pairs",
    "obd_pairs",
    "sequence_match",
    "count",
    "exact_disjoint",
]
