"""Every docstring example of the package (``iescore``, ``iescore.adapters``,
``iescore.metric_card``) runs as a doctest.

The examples run on the modules as the package imports them. pytest's
``--doctest-modules`` under ``--import-mode=importlib`` imports each file a second time and
puts the copy in ``sys.modules``: a later test then meets two ``NumberedIds`` classes and an
``isinstance`` check fails (a test of shard merging failed only when run after the doctests
of ``iescore/ids.py``). So the doctests are collected here instead.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

# modules whose import needs something the package does not (run as a Space app, not imported)
NOT_IMPORTED = {"iescore.metric_card.app", "iescore.__main__"}


def _modules() -> list[str]:
    import iescore.adapters
    import iescore.metric_card

    import iescore

    names = {"iescore", "iescore.adapters", "iescore.metric_card"}
    for pkg in (iescore, iescore.adapters, iescore.metric_card):
        names.update(m.name for m in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + "."))
    return sorted(names - NOT_IMPORTED)


MODULES = _modules()


def test_every_module_is_collected():
    # the package's own modules, the adapters and the metric card, found by walking them
    assert {"iescore.ids", "iescore.match.assign", "iescore.io.conll_stream", "iescore.adapters.spark",
            "iescore.adapters.hf", "iescore.metric_card.metric_card"} <= set(MODULES)
    assert len(MODULES) > 60


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for test in finder.find(module, name):
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} docstring examples of {name} failed (above)"
