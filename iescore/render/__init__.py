"""The last stage of the pipeline: views of a finished [`Report`][iescore.report.Report].

Pipeline: decode -> match -> count -> per-document cells -> measures -> report ->
**views**. A view reads the report's counts and summary and never recomputes one:
`conlleval` (conlleval.pl's table, byte for byte), `table` (iescore's
default text table), `flat` (float-only dicts for evaluate, the Trainer and
spaCy). The JSON view is [`Report.to_dict`][iescore.report.Report.to_dict] / [`Report.to_json`][iescore.report.Report.to_json].
"""
