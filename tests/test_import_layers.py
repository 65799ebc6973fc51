"""The layers import downward only: the import graph of the package (``iescore``, with
``adapters/`` as ``iescore.adapters`` and ``metric_card/`` as ``iescore.metric_card``),
read from the source with ast, has no circle, and its longest chain stays short.

Every import counts: at module level, inside functions (lazy) and under
``TYPE_CHECKING``. ``import a.b.c`` and ``from a.b import c`` import the packages on the
way (their ``__init__`` runs), except the importing module's own parent packages, which
Python has imported before it; ``from P import name`` reads the submodule ``P.name`` when
there is one, else a name defined in ``P`` itself (an edge to ``P``, its ``__init__`` if a
package). Run this file as a script to print the circles and the longest chain.
"""

from __future__ import annotations

import ast
import sys
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = (("iescore", "iescore"), ("adapters", "iescore.adapters"), ("metric_card", "iescore.metric_card"))
LONGEST = 13  # modules in the longest import chain (the bound this test holds)


def modules() -> dict[str, Path]:
    out = {}
    for folder, package in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = list(path.relative_to(ROOT / folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join([package, *parts])] = path
    return out


def _packages_on_the_way(target: str, importer: str) -> list[str]:
    """``target``'s parent packages that importing it runs: not the importer's own."""
    parts = target.split(".")
    prefixes = [".".join(parts[:k]) for k in range(1, len(parts))]
    return [p for p in prefixes if not (importer == p or importer.startswith(p + "."))]


def graph() -> dict[str, set[str]]:
    mods = modules()
    packages = {name for name, path in mods.items() if path.name == "__init__.py"}
    out: dict[str, set[str]] = {}
    for name, path in mods.items():
        here = name if name in packages else name.rsplit(".", 1)[0]  # the package of relative imports
        deps: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    deps.add(alias.name)
                    deps.update(_packages_on_the_way(alias.name, name))
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = here.split(".")[: len(here.split(".")) - (node.level - 1)]
                    source = ".".join(base + ([node.module] if node.module else []))
                else:
                    source = node.module or ""
                deps.update(_packages_on_the_way(source, name))
                names_only = True  # some imported name is defined in the source module itself
                for alias in node.names:
                    sub = f"{source}.{alias.name}"
                    if sub in mods:
                        deps.add(sub)
                    else:
                        names_only = False
                own_parent = name.startswith(source + ".")
                if not names_only or not own_parent:
                    deps.add(source)
        out[name] = {d for d in deps if d in mods and d != name}
    return out


def circles(g: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(g):
        if root in index:
            continue
        work = [(root, iter(sorted(g[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(g[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
    return found


def longest_chain(g: dict[str, set[str]]) -> list[str]:
    """The longest path of imports (the graph has no circle)."""
    @cache
    def from_(v: str) -> tuple[str, ...]:
        return max(((v, *from_(w)) for w in sorted(g[v])), key=len, default=(v,))

    return list(max((from_(v) for v in sorted(g)), key=len))


def test_the_graph_is_read_as_python_imports():
    g = graph()
    # from . import paths (a submodule of the importer's own package): the submodule only
    assert "iescore.match.paths" in g["iescore.match.assign"] and "iescore.match" not in g["iescore.match.assign"]
    # a lazy import inside a function counts
    assert "iescore.io.formats" in g["iescore.files"]
    # from ..render import notebook: the package render (its __init__ runs) and the submodule
    assert {"iescore.render", "iescore.render.notebook"} <= g["iescore.stats.paired"]
    # the adapters are read as iescore.adapters
    assert "iescore.adapters.spark" in g


def test_circles_and_chains_of_a_small_graph():
    g = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"d"}}
    assert circles(g) == [["a", "b", "c"]]
    g["c"] = {"d"}
    assert circles(g) == [] and longest_chain(g) == ["a", "b", "c", "d"]


def test_no_import_circle():
    assert circles(graph()) == []


def test_the_longest_import_chain_is_bounded():
    chain = longest_chain(graph())
    assert len(chain) <= LONGEST, " -> ".join(chain)


if __name__ == "__main__":
    g = graph()
    print(len(g), "modules;", sum(map(len, g.values())), "imports")
    for c in circles(g):
        print("circle:", c)
    if not circles(g):
        chain = longest_chain(g)
        print("longest chain", len(chain), ":", " -> ".join(chain))
    sys.exit(0)
