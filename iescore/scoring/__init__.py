"""The pipeline driven end to end: input batches -> parts -> one report.

`batch` (tag input as one integer-coded batch), `tags` (the tag path:
decode both sides, the fused fast path, token accuracy), `spans` (Documents and
Templates into units), `part` (one batch's units -> match -> count -> cells),
`assemble` (parts -> [`Report`][iescore.report.Report]), `totals` (parts
summed without their documents, for ``totals_only=True`` and ``keep="counts"``),
`stream` (the streaming [`Scorer`][iescore.scoring.stream.Scorer]), `state`
and `wire` (a scorer or its totals as bytes). The one-shot entry points are in
`iescore.scorer`.
"""
