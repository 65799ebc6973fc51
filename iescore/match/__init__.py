"""Stages 2 and 3 of the pipeline: match units under a rule, and count.

Pipeline: decode (`iescore.decode`) -> **match -> count** -> per-document cells
(`iescore.cells`) -> measures -> report -> views. Modules: `units` (units,
cells, statuses), `rules` (candidate pairs under exact / contain / overlap and
the rules by share IoU / cover / sim, and the OBD sequence rules), `fillers` (OBD
filler pairs through the slots' floors, and every pair of a slot under sim),
`slots` (Makhoul's alignment of OBD slots), `assign` (maximum-cardinality matching with
preferences; its solvers in `intervals` for non-crossing edges and `paths` for the
others), `count` (any-match and one-to-one counting, Makhoul's alignment),
`modes` (match-best), `exact` (the exact fast path for decoded tags).
The token & separator model is `iescore.ts`. The package imports none of its modules:
import the one that defines what you use.
"""

__all__: list[str] = []
