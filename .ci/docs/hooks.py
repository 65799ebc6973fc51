"""MkDocs hooks of the documentation site (mkdocs.yml ``hooks:``).

* The package laid out as installed, for mkdocstrings: ``iescore`` with ``iescore.adapters``
  and ``iescore.metric_card`` inside it (pyproject's ``package-dir`` maps them from
  ``adapters/`` and ``metric_card/``), copied into a temporary folder, whatever the way
  the package was installed (editable or not, or not at all).
* ``reference/cli.md``, generated from ``iescore.cli.build_parser()``: every subcommand's
  usage, description, options and help text, so the page never drifts from the parser.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[2]
CLI_PAGE = "reference/cli.md"
_TREES: list[str] = []


def package_tree(dest: Path) -> Path:
    """Lay the package's sources out as installed: ``dest/iescore`` holding ``iescore/``
    with ``adapters/`` and ``metric_card/`` inside (a copy of the ``.py`` files: griffe
    follows links to their real folder, where ``adapters`` is not inside ``iescore``).
    Returns ``dest``."""
    sources = shutil.ignore_patterns("__pycache__", "*.pyc", "*.conll", "templates")
    shutil.copytree(ROOT / "iescore", dest / "iescore", ignore=sources)
    shutil.copytree(ROOT / "adapters", dest / "iescore" / "adapters", ignore=sources)
    shutil.copytree(ROOT / "metric_card", dest / "iescore" / "metric_card", ignore=sources)
    return dest


@event_priority(100)  # before mkdocstrings creates its handler from these paths
def on_config(config: MkDocsConfig) -> MkDocsConfig:
    tree = tempfile.mkdtemp(prefix="iescore-docs-")
    _TREES.append(tree)
    package_tree(Path(tree) / "src")
    tree = str(Path(tree) / "src")
    handlers = config.plugins["mkdocstrings"].config.handlers
    handlers.setdefault("python", {})["paths"] = [tree]
    return config


def on_shutdown() -> None:
    while _TREES:
        shutil.rmtree(_TREES.pop(), ignore_errors=True)


def on_files(files: Files, config: MkDocsConfig) -> Files:
    if files.get_file_from_path(CLI_PAGE) is None:
        files.append(File.generated(config, CLI_PAGE, content=cli_page()))
    return files


# --- the command-line reference -------------------------------------------------------

def _text(help_text: str) -> str:
    """Help or description text as Markdown: reST literals (``x``) and roles
    (:mod:`x`) as code."""
    text = re.sub(r":[a-z]+:`~?([^`]+)`", r"`\1`", help_text)
    return re.sub(r"``(.+?)``", lambda m: "`" + " ".join(m.group(1).split()) + "`", text, flags=re.S)


def _cell(text: str) -> str:
    return _text(" ".join(text.split())).replace("|", "\\|")


def _option(action: argparse.Action, parser: argparse.ArgumentParser) -> str:
    """An action as the command line writes it: ``--rule RULE``, ``-o, --output FILE``."""
    if not action.option_strings:
        return f"`{action.metavar or action.dest.upper()}`"
    formatter = parser._get_formatter()
    return "`" + formatter._format_action_invocation(action) + "`"


def _details(action: argparse.Action) -> str:
    help_text = action.help if action.help and action.help != argparse.SUPPRESS else ""
    if "%(" in help_text:
        help_text = help_text % {**vars(action), "prog": ""}
    extra = []
    if action.choices is not None and action.metavar is not None and not isinstance(action.choices, dict):
        extra.append("choices: " + ", ".join(f"`{c}`" for c in action.choices))
    return _cell(help_text) + (f" ({'; '.join(extra)})" if extra else "")


def _subcommands(parser: argparse.ArgumentParser) -> list[tuple[str, str, argparse.ArgumentParser]]:
    """(name, help, parser) of every subcommand, in the parser's order."""
    out = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help or "" for a in action._choices_actions}
            for name, sub in action.choices.items():
                out.append((name, helps.get(name, ""), sub))
    return out


def _parser_section(name: str, summary: str, parser: argparse.ArgumentParser) -> list[str]:
    lines = [f"## `iescore {name}`", ""]
    if summary:
        lines += [_text(summary[0].upper() + summary[1:]) + ".", ""]
    lines += ["```text", parser.format_usage().strip(), "```", ""]
    if parser.description and parser.description.strip() != summary:
        lines += [_text(parser.description.strip()), ""]
    for group in parser._action_groups:
        actions = [a for a in group._group_actions if a.help != argparse.SUPPRESS]
        if not actions:
            continue
        lines += [f"### {group.title or 'options'}", ""]
        if group.description:
            lines += [_text(group.description), ""]
        lines += ["| Option | Description |", "| --- | --- |"]
        lines += [f"| {_option(a, parser)} | {_details(a)} |" for a in actions]
        lines.append("")
    return lines


def cli_page() -> str:
    """The command-line reference as Markdown, from ``iescore.cli.build_parser()``."""
    from iescore.cli import build_parser

    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "80"  # argparse wraps the usage lines at the terminal's width
    try:
        parser = build_parser()
        lines = [
            "# Command line",
            "",
            "The `iescore` command (also `python -m iescore`). This page is generated from the "
            "command's own parser; `iescore SUBCOMMAND --help` prints the same text.",
            "",
            "```text",
            parser.format_usage().strip(),
            "```",
            "",
        ]
        for name, summary, sub in _subcommands(parser):
            lines += _parser_section(name, summary, sub)
    finally:
        if old is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = old
    return "\n".join(lines).rstrip() + "\n"


if __name__ == "__main__":  # print the page: python .ci/docs/hooks.py
    sys.stdout.write(cli_page())
