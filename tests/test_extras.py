"""pyproject's extras: only `trainer` brings torch (through accelerate); `all` does not.

The transitive closure was checked by hand with a dry-run resolution in a fresh venv
(`pip install --dry-run --ignore-installed --report r.json -e ".[all]"`: 94 packages,
no torch, no nvidia-*); this test guards the direct requirements, where the known chain
(accelerate -> torch) starts, without touching the network.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

if sys.version_info < (3, 11):
    pytest.skip("tomllib is Python 3.11+", allow_module_level=True)
import tomllib

EXTRAS = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())["project"][
    "optional-dependencies"]
TORCH_CHAIN = {"torch", "accelerate"}


def names(extra: str) -> set[str]:
    """The distribution names an extra requires, its own extras (iescore[...]) expanded."""
    out: set[str] = set()
    for req in EXTRAS[extra]:
        m = re.fullmatch(r"iescore\[([\w,]+)\]", req)
        if m:
            for sub in m.group(1).split(","):
                out |= names(sub)
        else:
            out.add(re.split(r"[<>=!~\[; ]", req, maxsplit=1)[0].lower())
    return out


@pytest.mark.parametrize("extra", sorted(set(EXTRAS) - {"trainer"}))
def test_no_extra_but_trainer_pulls_torch(extra):
    assert not names(extra) & TORCH_CHAIN, extra


def test_all_is_every_extra_but_trainer():
    assert names("all") == set().union(*(names(e) for e in EXTRAS if e not in ("all", "trainer")))
    assert "accelerate" in names("trainer") and "transformers" in names("trainer")


def test_light_extras_hold_what_their_integration_imports():
    assert {"evaluate", "datasets"} <= names("evaluate")  # the metric script imports both
    assert names("spacy") == {"spacy"}
    assert {"seqeval", "nervaluate", "pytest", "hypothesis"} <= names("test")  # the tests' oracles


@pytest.mark.parametrize("page", ["README.md", "docs/getting-started.md"])
def test_extras_table_names_every_extra(page):
    """The table of extras (README and the getting-started page) has a row for each extra
    pyproject defines, and no other."""
    text = (Path(__file__).resolve().parents[1] / page).read_text()
    table = text.split("| extra | for | brings |", 1)[1].split("\n\n", 1)[0]
    listed = {name for row in table.splitlines()[2:]
              for name in re.findall(r"`([\w-]+)`", row.split("|")[1])}
    assert listed == set(EXTRAS)
