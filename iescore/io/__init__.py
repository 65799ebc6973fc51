"""Readers for corpus and system-output files."""
