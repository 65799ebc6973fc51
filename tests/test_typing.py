"""Typed options: one source (iescore.options) that agrees with Config's fields, the
runtime checks and the command line; `mypy --strict` on the package and the Python
examples of the README and docs/ (each page's blocks as one module, as the page runs them); a misspelt option or value is flagged by mypy and, at run time, a
ConfigError that suggests the nearest valid one."""

from __future__ import annotations

import dataclasses
import os
import re
import subprocess
import sys
import typing
from pathlib import Path

import pytest
from conftest import require

import iescore
from iescore import Config, ConfigError, Scorer, score_tags
from iescore.config import PREPARATION, SCHEMES, Rule, canonical_scheme
from iescore.errors import choices
from iescore.options import Options, SchemeName, ScoringOptions

ROOT = Path(__file__).resolve().parents[1]


def _package_tree(dest: Path) -> Path:
    """The package laid out as installed, by the docs build's own function (.ci/docs/hooks.py)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("iescore_docs_hooks", ROOT / ".ci" / "docs" / "hooks.py")
    assert spec is not None and spec.loader is not None
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    return hooks.package_tree(dest)  # type: ignore[no-any-return]
HINTS = typing.get_type_hints(Options, localns={"Rule": Rule})


def _literal_values(tp: object) -> tuple[object, ...] | None:
    """The values of a Literal type (or of ``Literal[...] | None``), else None."""
    if typing.get_origin(tp) is typing.Literal:
        return typing.get_args(tp)
    if typing.get_origin(tp) in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        inner = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(inner) == 1:
            return _literal_values(inner[0])
    return None


def test_options_name_every_config_field_and_nothing_else():
    fields = {f.name for f in dataclasses.fields(Config)}
    assert set(Options.__optional_keys__) == fields and not Options.__required_keys__
    # ScoringOptions: what a user sets; the rest records how the input was prepared
    assert set(ScoringOptions.__optional_keys__) == fields - set(PREPARATION) - {"unit_weights"}


LITERAL_FIELDS = sorted(k for k in HINTS if _literal_values(HINTS[k]) is not None and k != "scheme")


@pytest.mark.parametrize("name", LITERAL_FIELDS)
def test_each_literal_value_is_what_config_accepts(name):
    values = _literal_values(HINTS[name])
    assert values and len(values) >= 2
    task = {"task": "links"} if name == "nil" else {}  # an option of one task is refused with the others
    for value in values:  # every typed value is valid at run time
        assert getattr(Config(**{name: value}, **task), name) == value
    # and a value one letter off is refused, naming the typed value it is nearest to
    wrong = values[-1][:-1] + "#"
    # and the error lists exactly the typed values as valid (no hand-written list drifted)
    with pytest.raises(ConfigError, match=rf"unknown {name} '{re.escape(wrong)}' \(did you mean "
                                           rf"'{re.escape(values[-1])}'\?\); valid: "
                                           rf"{re.escape(choices(values))}( \(or None: not used\))?$"):
        Config(**{name: wrong}, **task)


def test_the_config_fields_carry_the_same_literal_types():
    config_hints = typing.get_type_hints(Config)
    for name in LITERAL_FIELDS:
        assert _literal_values(config_hints[name]) == _literal_values(HINTS[name]), name


def test_every_typed_scheme_name_is_a_scheme_and_every_scheme_is_typed():
    names = typing.get_args(SchemeName)
    assert set(SCHEMES) <= set(names)
    for name in names:
        canonical_scheme(name)  # raises for a name iescore does not know
    assert canonical_scheme("BIO") == "IOB2" and canonical_scheme("BILUO") == "BILOU"


def test_the_command_line_offers_the_same_options_and_choices():
    from iescore.cli import build_parser

    parser = build_parser()
    score = parser._subparsers._group_actions[0].choices["score"]  # type: ignore[union-attr]
    group = next(g for g in score._action_groups if g.title == "evaluation model")
    # the named settings of relations and links are flags that set rule, arg_labels and task
    dests = {a.dest: a for a in group._group_actions if a.dest not in ("relation_setting", "link_setting")}
    # every option a user sets has a flag, but `detail` (a speed switch for training loops)
    assert set(dests) == set(ScoringOptions.__optional_keys__) - {"detail"}
    for name, action in dests.items():
        values = _literal_values(HINTS[name])
        if values is not None and name != "scheme":
            assert tuple(action.choices) == values, name
        else:
            assert action.choices is None, name


def test_the_metric_passes_on_only_config_options():
    require("evaluate")
    from iescore.metric_card.metric_card import _CORE_OPTIONS

    assert set(_CORE_OPTIONS) <= set(ScoringOptions.__optional_keys__)


@pytest.mark.parametrize("call", [
    lambda: score_tags(reference=[["B-A"]], prediction=[["B-A"]], counting="one-two-one"),
    lambda: Scorer(counting="one-two-one"),
    lambda: iescore.score_templates(reference=[], prediction=[], counting="one-two-one"),
])
def test_a_misspelt_value_is_a_config_error_naming_the_nearest_value(call):
    # difflib's ratio of 'one-two-one' and 'one-to-one': 2*10/21 = 0.95 > 0.6; of 'any': 0
    with pytest.raises(ConfigError, match=r"unknown counting 'one-two-one' \(did you mean 'one-to-one'\?\); "
                                          r"valid: 'any' or 'one-to-one'$"):
        call()


# --- mypy --strict ------------------------------------------------------------------------

# Lines mypy must flag (the point of typed options), checked in the same run.
TYPOS = '''\
import iescore
from iescore.adapters.trainer import compute_metrics

iescore.score_tags(reference=[["B-A"]], prediction=[["B-A"]], rulez="E")
iescore.Scorer(counting="one-two-one")
compute_metrics(["O", "B-A"], modes="match-best")
'''


def _example_modules() -> dict[str, str]:
    """Each page's ```python blocks joined into one module (tests/test_docs_examples.py runs
    them in order in one namespace), by a module name made of the page's path."""
    out = {}
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        blocks = re.findall(r"^```python\n(.*?)^```", page.read_text(encoding="utf-8"), flags=re.S | re.M)
        if blocks:
            name = re.sub(r"\W", "_", str(page.relative_to(ROOT)).removesuffix(".md"))
            out[f"example_{name}"] = "\n".join(blocks)
    return out


def _mypy_cache(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """mypy's cache: in pytest's cache folder (.pytest_cache, so a second run takes about a
    second instead of a minute: mypy rechecks what changed), or in tmp_path without it
    (-p no:cacheprovider, as CI runs)."""
    cache = getattr(request.config, "cache", None)
    return cache.mkdir("mypy") if cache is not None else tmp_path / "cache"


def test_mypy_strict_on_the_package_and_the_docs_examples(tmp_path, request):
    require("mypy")
    # the package as installed (iescore/ with adapters/ and metric_card/ inside)
    site = _package_tree(tmp_path / "site")
    files = []
    modules = _example_modules()
    assert "example_README" in modules and "example_docs_how_to_notebooks" in modules
    for name, code in modules.items():
        files.append(tmp_path / f"{name}.py")
        files[-1].write_text(code, encoding="utf-8")
    typos = tmp_path / "typos.py"
    typos.write_text(TYPOS, encoding="utf-8")
    env = {**os.environ, "MYPYPATH": str(site)}
    cmd = [sys.executable, "-m", "mypy", "--strict", "--config-file", str(ROOT / "pyproject.toml"),
           "--cache-dir", str(_mypy_cache(request, tmp_path)), str(site / "iescore"), *map(str, files), str(typos)]
    run = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, env=env, timeout=600)
    out = run.stdout + run.stderr
    assert "Found 3 errors in 1 file" in out, out
    errors = [line for line in out.splitlines() if ": error:" in line]
    expected = [line for line in errors if line.startswith("typos.py")]
    assert [line for line in errors if not line.startswith("typos.py")] == [], out
    assert len(expected) == 3, out
    assert 'typos.py:4: error: Unexpected keyword argument "rulez" for "score_tags"; did you mean "rule"?' in out
    assert "typos.py:5: error: Argument \"counting\" to \"Scorer\" has incompatible type \"Literal['one-two-one']\"" in out
    assert 'typos.py:6: error: Unexpected keyword argument "modes" for "compute_metrics"' in out


def test_the_typed_tokenizer_names_are_the_named_tokenizers_and_two_more():
    from iescore.config import TOKENIZER_NAMES
    from iescore.text import TOKENIZERS

    assert set(TOKENIZER_NAMES) == {*TOKENIZERS, "given", "custom"}
