"""Carried through the whole pipeline: the version of iescore, which the signature, the
scorer states and the HTML report record (`iescore.__version__` re-exports it). It
imports nothing, so every layer may read it."""

__version__ = "0.2.0"
