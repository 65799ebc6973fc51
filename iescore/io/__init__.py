"""Before the pipeline: readers for corpus and system-output files ([`conll`][iescore.io.conll])."""
