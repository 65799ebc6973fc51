"""Beside the pipeline (the CoNLL toolbox)."""
