"""Importing iescore (and its adapters) must not import the heavy integrations."""

from __future__ import annotations

import subprocess
import sys


def test_import_is_light():
    code = (
        "import sys, iescore, iescore.cli, iescore.adapters.hf, iescore.adapters.spacy, iescore.adapters.inline\n"
        "import iescore.adapters.spacy_scorer, iescore.adapters.trainer  # the spacy_scorers entry point's module too\n"
        "import iescore.adapters.spark, iescore.scoring.state\n"
        "heavy = [m for m in ('spacy', 'torch', 'transformers', 'datasets', 'evaluate', 'pyspark', 'pyarrow') "
        "if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_adapters_is_not_a_top_level_package():
    out = subprocess.run(
        [sys.executable, "-c", "import importlib.util as u; print(u.find_spec('adapters') is None)"],
        check=True, capture_output=True, text=True, cwd="/",
    )
    assert out.stdout.strip() == "True"
