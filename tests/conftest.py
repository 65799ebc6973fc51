"""Shared fixtures: the location of the shared corpora (IESCORE_DATA)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

# pytest-xdist runs one worker per CPU: OpenBLAS threads in each worker (numpy's matrix
# products) would oversubscribe the CPUs, and its threads wait on each other for many times
# the work (iescore.stats' resampling W @ X); one BLAS thread per worker
if os.environ.get("PYTEST_XDIST_WORKER"):
    for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_var, "1")

# tests never touch the network
for _var in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE"):
    os.environ.setdefault(_var, "1")

_DEFAULT = Path(__file__).resolve().parents[2] / "shared" / "data"


def data_path() -> Path:
    """The shared data folder: ``$IESCORE_DATA``, else ``../shared/data`` beside the checkout.

    Missing data fails the test under CI (``CI=true``) and skips it elsewhere.
    """
    path = Path(os.environ.get("IESCORE_DATA") or _DEFAULT)
    if not (path / "conll2003-eng" / "eng.testb").is_file():
        msg = f"shared corpora not found at {path} (set IESCORE_DATA)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(msg)
        pytest.skip(msg)
    return path


@pytest.fixture(scope="session")
def data() -> Path:
    return data_path()


_TORCH = ("install torch first (the CPU build: pip install torch --index-url "
          "https://download.pytorch.org/whl/cpu), then pip install -e '.[trainer]'")
# how to get each optional dependency the tests use: the pyproject extra that brings it
INSTALL = {
    "torch": _TORCH, "accelerate": _TORCH,
    "transformers": "pip install -e '.[hf]'", "datasets": "pip install -e '.[hf]'",
    "evaluate": "pip install -e '.[evaluate]'", "spacy": "pip install -e '.[spacy]'",
    "seqeval": "pip install -e '.[test]'", "nervaluate": "pip install -e '.[test]'", "seqscore": "pip install -e '.[test]'",
    "mypy": "pip install -e '.[test]'", "mkdocs": "pip install -e '.[docs]'",
    "mkdocstrings": "pip install -e '.[docs]'", "griffe": "pip install -e '.[docs]'",
}


def require(module: str):
    """Import an optional dependency; a missing one fails under CI and skips elsewhere,
    saying how to install it."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        hint = INSTALL.get(module, "see pyproject.toml's extras")
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"optional dependency {module!r} is not installed ({hint}): {exc}")
        pytest.skip(f"{module} not installed ({hint})", allow_module_level=True)


def chromium() -> str:
    """Debian's chromium; missing, it fails under CI (.ci/run installs it) and skips elsewhere."""
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        msg = "chromium is not installed (apt-get install chromium; .ci/run installs it)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(msg)
        pytest.skip(msg)
    return exe
