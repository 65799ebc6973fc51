"""The last stage of the pipeline: views of a finished :class:`~iescore.report.Report`.

Pipeline: decode -> match -> count -> per-document cells -> measures -> report ->
**views**. A view reads the report's counts and summary and never recomputes one:
:mod:`.conlleval` (conlleval.pl's table, byte for byte), :mod:`.table` (iescore's
default text table), :mod:`.flat` (float-only dicts for evaluate, the Trainer and
spaCy). The JSON view is :meth:`Report.to_dict` / :meth:`Report.to_json`.
"""
