"""Adapters from spaCy and Hugging Face objects to iescore documents.

Installed as ``iescore.adapters`` (never as a top-level ``adapters`` package).
Heavy dependencies are imported lazily inside each adapter module.
"""
