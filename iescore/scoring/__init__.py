"""The pipeline driven end to end: input batches -> parts -> one report.

:mod:`.batch` (tag input as one integer-coded batch), :mod:`.tags` (the tag path:
decode both sides, the fused fast path, token accuracy), :mod:`.spans` (Documents and
Templates into units), :mod:`.part` (one batch's units -> match -> count -> cells),
:mod:`.assemble` (parts -> :class:`~iescore.report.Report`), :mod:`.totals` (parts
summed without their documents, for ``totals_only=True`` and ``keep="counts"``),
:mod:`.stream` (the streaming :class:`~iescore.scoring.stream.Scorer`), :mod:`.state`
and :mod:`.wire` (a scorer or its totals as bytes). The one-shot entry points are in
:mod:`iescore.scorer`.
"""
