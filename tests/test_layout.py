"""The layout: one configuration object with one translation of options, the entry
module's re-exports, and every module saying its place in the pipeline."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import iescore
from iescore import Config, ConfigError, Scorer, score_tags

PACKAGE = Path(iescore.__file__).resolve().parent


@pytest.mark.parametrize("call", [
    lambda: score_tags(reference=[["B-A"]], prediction=[["B-A"]], countng="one-to-one"),
    lambda: Scorer(countng="one-to-one"),
    lambda: Scorer(Config(), countng="one-to-one"),
    lambda: Config().with_(countng="one-to-one"),
])
def test_a_misspelt_option_is_a_config_error_naming_the_nearest_option(call):
    # 'countng' is one letter from 'counting' (difflib's ratio 2*7/15 = 0.93 > 0.6)
    with pytest.raises(ConfigError, match=r"unknown option 'countng' \(did you mean 'counting'\?\); valid: .*'detail'"):
        call()


@pytest.mark.parametrize("short, name", [("norm", "normaliser"), ("super", "supertags"), ("avg", "average")])
def test_a_signature_key_used_as_an_option_suggests_the_option(short, name):
    # the signature writes norm:, super:, avg:; 'norm' and 'super' begin one option name each
    # (difflib alone misses them: 'norm' ~ 'normaliser' is 2*4/14 = 0.57 < 0.6)
    with pytest.raises(ConfigError, match=rf"^unknown option '{short}' \(did you mean '{name}'\?\); valid: "):
        Scorer(**{short: "x"})


def test_an_option_far_from_every_name_gets_no_suggestion():
    with pytest.raises(ConfigError, match=r"^unknown option 'zzz'; valid: 'setting'"):
        Scorer(zzz=1)


def test_the_entry_module_gives_the_pipeline_objects():
    from iescore.scorer import Scorer as S
    from iescore.scorer import TaggedBatch
    from iescore.scoring.batch import TaggedBatch as T

    assert S is Scorer and TaggedBatch is T


def test_every_module_has_a_docstring_saying_its_place_and_stays_readable():
    for path in sorted(PACKAGE.rglob("*.py")):
        if "data" in path.parts:
            continue
        text = path.read_text(encoding="utf-8")
        doc = ast.get_docstring(ast.parse(text))
        assert doc, f"{path} has no docstring"
        first = doc.split("\n\n")[0].lower()
        assert "pipeline" in first or "old import path" in first or path.name == "__main__.py" or (
            path.parent == PACKAGE and path.name == "__init__.py"), f"{path}: the docstring's first paragraph does not place it"
        assert text.count("\n") <= 500, f"{path} has {text.count(chr(10))} lines"


def test_the_architecture_layout_names_every_module():
    """Each module of the package, the adapters and the metric is named in ARCHITECTURE.md's
    Layout table (as `name` or `name.py`, with or without its folder)."""
    root = PACKAGE.parent
    text = (root / "ARCHITECTURE.md").read_text(encoding="utf-8").split("\n## Layout\n", 1)[1]
    named = set()
    for cell in text.split("`"):
        named.add(cell.removesuffix(".py").rsplit("/", 1)[-1])
    missing = [str(p.relative_to(root)) for folder in ("iescore", "adapters", "metric_card")
               for p in sorted((root / folder).rglob("*.py"))
               if p.stem not in ("__init__", "__main__", "app") and p.stem not in named]
    assert not missing
