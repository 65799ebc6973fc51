"""Before the pipeline: readers for corpus and system-output files (:mod:`.conll`)."""
