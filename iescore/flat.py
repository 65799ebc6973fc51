"""Old import path of :mod:`iescore.render.flat` (the flat, float-only views of a report
for integrations), kept so that code written against ``iescore.flat`` still runs.
New code imports from :mod:`iescore.render.flat`."""

from .render.flat import as_float, flat_metrics, seqeval_style

__all__ = ["as_float", "seqeval_style", "flat_metrics"]
